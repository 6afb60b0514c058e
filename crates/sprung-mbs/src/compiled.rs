//! The compiled, flat, index-based model: source document 000, Bild 4 (bodies, markers, force
//! elements referenced by index). Built once from a model description (see [`crate::compile()`]) or by
//! hand through the public constructors; immutable afterwards and shared by any number of states.

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_model::{Curve, Signal};
use sprung_solve::block::BlockPattern;

use crate::element_law::ElementLaw;

/// A rigid body with 6 degrees of freedom. Body frame origin at the centre of mass.
#[derive(Debug, Clone)]
pub struct Body {
    /// Unique name.
    pub name: String,
    /// Mass in kg.
    pub mass: f64,
    /// Inertia tensor about the centre of mass in body axes, kg m².
    pub inertia: Matrix3<f64>,
    /// Inverse of `inertia`.
    pub inertia_inv: Matrix3<f64>,
    /// Design (initial) position of the centre of mass, global, m.
    pub position: Vector3<f64>,
    /// Design (initial) orientation as unit quaternion `[w, x, y, z]` (body → global).
    pub orientation: [f64; 4],
    /// Initial velocity of the centre of mass, global, m/s.
    pub velocity: Vector3<f64>,
    /// Initial angular velocity in body axes, rad/s.
    pub angular_velocity: Vector3<f64>,
}

impl Body {
    /// 1/m, or 1 for a massless body (a massless follower of a tabulated joint,
    /// `docs/joints.md`: its acceleration slots then carry its wrench).
    #[inline]
    pub fn inv_mass(&self) -> f64 {
        if self.mass == 0.0 {
            1.0
        } else {
            1.0 / self.mass
        }
    }
}

/// A marker: a frame fixed on a body (or on the ground when `body` is `None`).
#[derive(Debug, Clone)]
pub struct Marker {
    /// Unique name.
    pub name: String,
    /// Index of the carrying body, `None` for the ground.
    pub body: Option<usize>,
    /// Position in body coordinates (global coordinates on the ground), m.
    pub position: Vector3<f64>,
    /// Orientation relative to the body frame (global on the ground): columns = marker axes.
    pub axes: Matrix3<f64>,
}

/// A scalar characteristic y(x) with derivative: zero, linear (y = k x) or a tabulated curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Characteristic {
    /// y = 0.
    Zero,
    /// y = k x.
    Linear(f64),
    /// y = curve(x), index into [`CompiledModel::curves`].
    Curve(usize),
}

impl Characteristic {
    /// Value and derivative at `x`.
    #[inline(always)]
    pub fn eval(&self, curves: &[Curve], x: f64) -> (f64, f64) {
        match *self {
            Characteristic::Zero => (0.0, 0.0),
            Characteristic::Linear(k) => (k * x, k),
            Characteristic::Curve(i) => eval_curve(curves, i, x),
        }
    }
}

thread_local! {
    /// Order-independent signature of the curve segments seen by the evaluations on this thread
    /// since the last [`take_segment_signature`] (see [`eval_curve`]).
    static SEGMENTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Whether [`eval_curve`] adds to [`SEGMENTS`] on this thread (off only inside
    /// [`without_segment_watch`]).
    static WATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// SplitMix64 finaliser: spreads (curve, segment) pairs over 64 bits.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Slope ratio at which a knot of a piecewise-linear characteristic counts as a breakpoint for
/// the real-time stepper ([`Curve::segment`]): the multilink damper's knot at −0.01 m/s
/// (6000 → 2667 N s/m, ratio 2.25) and the bump stops' last segment are breakpoints; the
/// progressive bushing tables (ratios 1.1-1.7 per knot), whose Jacobian error a W-method absorbs
/// like a lagged Jacobian, are not. Counting every slope change made 63 % of the multilink's
/// steps split (RTF 2.5×); see `docs/performance.md`.
pub const BREAKPOINT_SLOPE_RATIO: f64 = 2.0;

/// Evaluates curve `i` at `x` and adds its (curve, [`Curve::segment`]) pair to this thread's
/// segment signature: a wrapping sum of hashed pairs, so it does not depend on the order in
/// which the q-only path (SIMD packs) and the linearising path (element by element) evaluate
/// the same characteristics. Two evaluations of the model see the same segments iff their
/// signatures agree (up to a 2⁻⁶⁴ hash collision, and up to two elements sharing one curve
/// swapping segments in the same step). Every curve evaluation of the built-in elements goes
/// through here; one thread-local add, no allocation. Inside [`without_segment_watch`] (a
/// stepper that ignores breakpoints) only the curve is evaluated.
#[inline(always)]
pub(crate) fn eval_curve(curves: &[Curve], i: usize, x: f64) -> (f64, f64) {
    let c = &curves[i];
    if WATCHING.get() {
        note_segment(c, i, x);
    }
    c.eval(x)
}

/// Adds curve `i`'s (curve, segment) pair at `x` to this thread's signature. Not inlined: the
/// test and a call keep the characteristics' loops of the one-element bushing small enough to
/// be unrolled (inlined, the locating and hashing made the compiler keep the loop and spill its
/// values: +3.6 k instructions per linearisation of the multilink, callgrind).
#[inline(never)]
fn note_segment(c: &Curve, i: usize, x: f64) {
    add_segment_signature(segment_pair_hash(i, c.segment(x, BREAKPOINT_SLOPE_RATIO)));
}

/// Runs `f` with the segment signature off on this thread: [`eval_curve`] neither locates the
/// segment nor adds to the signature (for a stepper that ignores breakpoints, which never reads
/// it: [`crate::MbsSystem::set_watch_segments`]). Restores the previous setting.
#[inline(always)]
pub(crate) fn without_segment_watch<R>(f: impl FnOnce() -> R) -> R {
    let before = WATCHING.replace(false);
    let r = f();
    WATCHING.set(before);
    r
}

/// Runs `f` without adding its curve evaluations to this thread's segment signature: for an
/// element that evaluates curves at trial points (the Newton iterates of the macro joint of
/// `sprung-reduce`), so that only its final evaluation counts and the linearisation and the
/// stages of a step see the same signature.
pub fn without_segment_signature<R>(f: impl FnOnce() -> R) -> R {
    let saved = SEGMENTS.with(|s| s.get());
    let r = f();
    SEGMENTS.with(|s| s.set(saved));
    r
}

/// Whether [`eval_curve`] adds to this thread's segment signature (off inside
/// [`without_segment_watch`]): what a model-specific force kernel
/// ([`crate::tree_kernel::TreeKernel::forces`]) is told, so that it computes its share of the
/// signature only when it is read.
#[inline(always)]
pub(crate) fn watching_segments() -> bool {
    WATCHING.get()
}

/// Adds `sum` — a wrapping sum of [`segment_pair_hash`]es of (curve, segment) pairs, e.g. what
/// a force kernel returns for its curve evaluations — to this thread's segment signature, as
/// if each pair had been noted by [`eval_curve`].
#[inline(always)]
pub(crate) fn add_segment_signature(sum: u64) {
    SEGMENTS.with(|s| s.set(s.get().wrapping_add(sum)));
}

/// The hash one evaluation of curve `i` in its segment `seg` ([`Curve::segment`] at
/// [`BREAKPOINT_SLOPE_RATIO`]) adds to the segment signature (see [`eval_curve`]); generated
/// force kernels (`sprung accelerate`) compute the same value.
#[inline]
pub fn segment_pair_hash(i: usize, seg: u32) -> u64 {
    mix64(((i as u64) << 32) | u64::from(seg))
}

/// Returns this thread's segment signature accumulated since the last call and resets it.
pub(crate) fn take_segment_signature() -> u64 {
    SEGMENTS.with(|s| s.replace(0))
}

/// Six-direction bushing in the frame of marker J (document 000, section 2).
#[derive(Debug, Clone)]
pub struct Bushing {
    /// Translational stiffness characteristics (force of deflection), local x, y, z.
    pub stiffness: [Characteristic; 3],
    /// Rotational stiffness characteristics (torque of angle).
    pub rot_stiffness: [Characteristic; 3],
    /// Translational damping characteristics (force of deflection rate).
    pub damping: [Characteristic; 3],
    /// Rotational damping characteristics.
    pub rot_damping: [Characteristic; 3],
    /// Force on body_i at zero deflection, marker-J axes, N.
    pub preload: Vector3<f64>,
    /// Torque on body_i at zero deflection, marker-J axes, Nm.
    pub rot_preload: Vector3<f64>,
    /// Local axis (0, 1, 2) about which rotation is free (swing-twist split), e.g. a wheel bearing.
    pub spin_axis: Option<usize>,
}

/// Scalar law of a point-to-point element; the force is tension-positive.
#[derive(Debug, Clone)]
pub enum P2pLaw {
    /// f = k(L - L_free) + preload + c L̇.
    Spring {
        /// Force of elongation L - L_free.
        stiffness: Characteristic,
        /// Free length, m.
        free_length: f64,
        /// Additional tension, N.
        preload: f64,
        /// Linear damping, Ns/m.
        damping: f64,
    },
    /// f = law(L̇).
    Damper(DamperLaw),
    /// Bump (engages for L < L_c, pushes apart) or rebound (engages for L > L_c, pulls together) stop.
    Stop {
        /// `true` for a bump stop, `false` for a rebound stop.
        bump: bool,
        /// Engagement length L_c, m.
        engage_length: f64,
        /// Force magnitude of penetration.
        law: Characteristic,
        /// Damping while engaged, Ns/m.
        damping: f64,
    },
}

/// Force-velocity law of a damper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DamperLaw {
    /// Force of L̇: linear or curve.
    Characteristic(Characteristic),
    /// Different linear coefficients in rebound (L̇ ≥ 0) and compression (L̇ < 0).
    Bilinear {
        /// Ns/m for L̇ ≥ 0.
        rebound: f64,
        /// Ns/m for L̇ < 0.
        compression: f64,
    },
}

/// Kind and parameters of a force element.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // stored once per element; boxing would add a pointer chase per evaluation
pub enum ElementKind {
    /// 6-DOF bushing.
    Bushing(Bushing),
    /// Point-to-point spring, damper or stop.
    P2p(P2pLaw),
}

/// A force element between marker I (action, body_i) and marker J (reference, body_j).
#[derive(Debug, Clone)]
pub struct ForceElement {
    /// Unique name.
    pub name: String,
    /// Marker I index.
    pub marker_i: usize,
    /// Marker J index.
    pub marker_j: usize,
    /// Distance of the two marker origins in the design position, m (reference for P2P deflection).
    pub design_length: f64,
    /// Law and parameters.
    pub kind: ElementKind,
}

/// A force element of an open kind ([`crate::element_law`]) with its place in the state.
#[derive(Debug, Clone)]
pub struct OpenElement {
    /// Unique name.
    pub name: String,
    /// Marker indices in the order the kind expects.
    pub markers: Vec<usize>,
    /// Per input slot of the kind ([`crate::element_law::ElementLaw::inputs`]): the model
    /// input it reads, `None` (value 0) when the model file leaves it unmapped.
    pub inputs: Vec<Option<usize>>,
    /// The input slots fed by another element's output ([`crate::element_link`]; their entry
    /// in `inputs` is `None`).
    pub links: Vec<crate::element_link::ElementLink>,
    /// The law (parameters inside).
    pub law: Arc<dyn ElementLaw>,
    /// Offset of the element's first state in the state part of v (after the body velocities).
    pub state_offset: usize,
    /// Its first state block (block index counted after the bodies' blocks).
    pub first_block: usize,
    /// Number of 6-wide state blocks it occupies (0 without states).
    pub n_blocks: usize,
}

/// Whether an input is a force or a torque.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Force applied at the marker origin.
    Force,
    /// Pure torque on the marker's body.
    Torque,
    /// A scalar read by open elements through their input slots; acts on no marker.
    Signal,
}

/// An external input u_k(t): direction × signal, applied at a marker.
#[derive(Debug, Clone)]
pub struct Input {
    /// Unique name.
    pub name: String,
    /// Force or torque.
    pub kind: InputKind,
    /// Marker index (its body must not be the ground); `None` for a [`InputKind::Signal`].
    pub marker: Option<usize>,
    /// `true`: direction is given in the body frame of the marker's body; `false`: global.
    pub body_frame: bool,
    /// Direction (not necessarily unit; the input value is direction × signal).
    pub direction: Vector3<f64>,
    /// Time signal (for a `runtime` signal: its default, the caller sets the value).
    pub signal: Signal,
    /// Whether the caller sets the value at run time (`signal = { type = "runtime" }`).
    pub runtime: bool,
}

/// The compiled model.
#[derive(Debug, Clone)]
pub struct CompiledModel {
    /// Model name.
    pub name: String,
    /// Name of the ground body.
    pub ground_name: String,
    /// Bodies (6 DOF each).
    pub bodies: Vec<Body>,
    /// Markers.
    pub markers: Vec<Marker>,
    /// Force elements.
    pub elements: Vec<ForceElement>,
    /// Force elements of open kinds (`[[elements]]`).
    pub open_elements: Vec<OpenElement>,
    /// Number of 6-wide blocks of element states after the bodies' blocks in v (see
    /// [`CompiledModel::n_v`]).
    pub n_state_blocks: usize,
    /// Inputs u(t).
    pub inputs: Vec<Input>,
    /// Curves referenced by index from characteristics.
    pub curves: Vec<Curve>,
    /// Gravity acceleration, global, m/s².
    pub gravity: Vector3<f64>,
    /// 6×6 block pattern of the body-coupling graph (shared by J_r K, J_v and the iteration matrix).
    pub pattern: Arc<BlockPattern>,
    /// Ideal joints of jointed bodies and the trees they form ([`crate::joints`]; empty when
    /// every body is free).
    pub joints: crate::joints::Joints,
}

impl CompiledModel {
    /// Number of position coordinates: 7 per body (position + quaternion).
    pub fn n_r(&self) -> usize {
        7 * self.bodies.len()
    }

    /// Number of velocity-level coordinates: 6 per body (the degrees of freedom), then the
    /// element states in 6-wide blocks. The integrators see element states as velocity-level
    /// coordinates without positions (s' = f, no entry in K(r)); a block holding fewer than six
    /// states is padded with coordinates whose rate and partials are zero (they stay 0). The
    /// block LU keeps its fixed 6 × 6 kernels this way.
    pub fn n_v(&self) -> usize {
        6 * (self.bodies.len() + self.n_state_blocks)
    }

    /// Number of body velocity coordinates (6 per body).
    pub fn n_body_v(&self) -> usize {
        6 * self.bodies.len()
    }

    /// Number of element states (without padding).
    pub fn n_states(&self) -> usize {
        self.open_elements.iter().map(|e| e.law.n_states()).sum()
    }

    /// Index in v of state `j` of open element `e`.
    pub fn state_index(&self, e: usize, j: usize) -> usize {
        self.n_body_v() + self.open_elements[e].state_offset + j
    }

    /// Number of inputs.
    pub fn n_u(&self) -> usize {
        self.inputs.len()
    }

    /// Body index of a marker (None = ground).
    pub fn marker_body(&self, m: usize) -> Option<usize> {
        self.markers[m].body
    }

    /// Builds the body-coupling block pattern from the force elements: bodies coupled by an
    /// element, and for an open element all its markers' bodies with each other and with its
    /// state blocks (which follow the bodies' blocks).
    pub fn coupling_pattern(
        n_bodies: usize,
        markers: &[Marker],
        elements: &[ForceElement],
        open: &[OpenElement],
        n_state_blocks: usize,
    ) -> BlockPattern {
        let mut pairs: Vec<(usize, usize)> = elements
            .iter()
            .filter_map(
                |e| match (markers[e.marker_i].body, markers[e.marker_j].body) {
                    (Some(a), Some(b)) => Some((a, b)),
                    _ => None,
                },
            )
            .collect();
        for e in open {
            let blocks: Vec<usize> = e
                .markers
                .iter()
                .filter_map(|&m| markers[m].body)
                .chain((0..e.n_blocks).map(|k| n_bodies + e.first_block + k))
                .collect();
            for &a in &blocks {
                for &b in &blocks {
                    pairs.push((a, b));
                }
            }
        }
        // A fed element's rows depend on its sources' markers and states (element_link).
        let blocks_of = |e: &OpenElement| -> Vec<usize> {
            e.markers
                .iter()
                .filter_map(|&m| markers[m].body)
                .chain((0..e.n_blocks).map(|k| n_bodies + e.first_block + k))
                .collect()
        };
        for e in open {
            for l in &e.links {
                for a in blocks_of(e) {
                    for b in blocks_of(&open[l.source]) {
                        pairs.push((a, b));
                    }
                }
            }
        }
        BlockPattern::from_couplings(n_bodies + n_state_blocks, 6, &pairs)
    }

    /// Initial state vectors (r, v) in the design configuration with the bodies' initial
    /// velocities; a jointed body's slots hold its joint's initial coordinate and rate
    /// ([`crate::joints`]).
    pub fn design_state(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut r, mut v) = self.design_poses();
        self.joints.initial_state(&mut r, &mut v);
        (r, v)
    }

    /// The design poses and initial velocities of all bodies as free bodies (7 + 6 slots each,
    /// also for jointed bodies: their design pose, z = 0) and the initial element states: the
    /// evaluator's layout ([`crate::joints::Joints::expand`]).
    pub fn design_poses(&self) -> (Vec<f64>, Vec<f64>) {
        let mut r = vec![0.0; self.n_r()];
        let mut v = vec![0.0; self.n_v()];
        for (i, b) in self.bodies.iter().enumerate() {
            r[7 * i..7 * i + 3].copy_from_slice(b.position.as_slice());
            r[7 * i + 3..7 * i + 7].copy_from_slice(&b.orientation);
            v[6 * i..6 * i + 3].copy_from_slice(b.velocity.as_slice());
            v[6 * i + 3..6 * i + 6].copy_from_slice(b.angular_velocity.as_slice());
        }
        let nbv = self.n_body_v();
        for e in &self.open_elements {
            let ns = e.law.n_states();
            e.law
                .initial_states(&mut v[nbv + e.state_offset..nbv + e.state_offset + ns]);
        }
        (r, v)
    }

    /// An error naming the first jointed body for a feature that does not support joints
    /// yet (`docs/joints.md`), `Ok` for a model without joints.
    pub fn require_no_joints(&self, feature: &str) -> Result<(), String> {
        match self.joints.first_jointed() {
            None => Ok(()),
            Some(b) => Err(format!(
                "{feature} does not support ideal joints yet, and body '{}' of model '{}' has a `joint` (docs/joints.md); run the model in time (`sprung run`) or replace the joint by bushings",
                self.bodies[b].name, self.name
            )),
        }
    }

    /// Index of the input called `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|u| u.name == name)
    }

    /// All discontinuity times of the input signals (sorted, unique), for integrators to stop at.
    pub fn input_discontinuities(&self) -> Vec<f64> {
        let mut t: Vec<f64> = self
            .inputs
            .iter()
            .flat_map(|u| u.signal.discontinuities())
            .collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }
}
