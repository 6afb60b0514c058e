//! Element packs: four force elements of one kind side by side in the lanes of the q-only path.
//!
//! Document 000 (section 3, Table 2) evaluates q twice per LSRT2 step and the linearisation only
//! every k steps, so with Jacobian reuse the force path of the elements dominates the step. One
//! element's force path is mostly scalar 3-vector arithmetic (lever arms, velocities,
//! deflections, the angle, torque arms) and a few 3 × 3 products, which [`crate::m3`]'s row lanes
//! compute with a quarter of every register idle (the padding lane). Here four elements share
//! each register instead: lane k holds element k of a *pack*, every quantity
//! (a coordinate of a lever arm, one entry of a rotation matrix) is one four-lane value, and every
//! product is plain lane-wise multiply-adds. The body kinematics are gathered once per marker and
//! lane; the wrenches are scattered to the bodies lane by lane.
//!
//! [`ElementPacks`] groups a model's elements once: bushings ([`crate::bushing::BushingPack`]) in
//! packs of four, point-to-point elements ([`crate::p2p::P2pPack`]) in packs of four marker pairs
//! (the elements acting at one pair, a damper with its gas spring and stops, share its kinematics
//! and take turns in its lane). Bushings with a free spin axis (wheel bearings, the eyes and
//! shackles of a leaf spring) share a pack only with bushings free about the same local axis, so
//! that a pack computes either rotation vectors or swing vectors in its lanes. The linearisation,
//! which needs the partials, always takes the one-element path. Both paths agree to round-off
//! (fused multiply-adds, other summation order; `tests/element_packs.rs`).

use nalgebra::Vector3;
use sprung_model::Curve;

use crate::bushing::BushingPack;
use crate::compiled::{CompiledModel, ElementKind, Marker};
use crate::element::ElementForce;
use crate::kinematics::BodyKin;
use crate::m3::{L4, Lanes};
use crate::p2p::{P2pPack, p2p_packs};

/// Lanes per pack.
pub(crate) const W: usize = 4;

/// Three four-lane values: one 3-vector per lane.
pub(crate) type V3<V> = [V; 3];
/// Nine four-lane values: one 3 × 3 matrix per lane, `m[row][col]`.
pub(crate) type V33<V> = [[V; 3]; 3];

/// A four-lane value from the lane expressions `|k| expr` for k = 0…3 (a macro rather than a
/// closure: see [`crate::m3`] on closures in the AVX2 copies).
macro_rules! gather {
    ($l:expr, |$k:ident| $e:expr) => {
        $l.load(&[
            {
                let $k = 0;
                $e
            },
            {
                let $k = 1;
                $e
            },
            {
                let $k = 2;
                $e
            },
            {
                let $k = 3;
                $e
            },
        ])
    };
}

/// Constant data of one marker per lane: carrying body, position (body frame) and axes (relative
/// to the body); on the ground, global position and axes.
#[derive(Debug, Clone)]
pub(crate) struct PackedMarkers {
    pub body: [Option<usize>; W],
    /// Position per coordinate, lanes = elements.
    pub s: [L4; 3],
    /// Axes entry (row, col) per lane.
    pub axes: [[L4; 3]; 3],
    /// Every lane's marker has its body's axes ([`crate::kinematics::has_body_axes`]): the
    /// marker frames are the bodies' rotations, no product.
    pub body_axes: bool,
}

impl PackedMarkers {
    /// The markers `m(k)` of the lanes k = 0…3.
    pub fn new<'a>(m: impl Fn(usize) -> &'a Marker) -> Self {
        Self {
            body: std::array::from_fn(|k| m(k).body),
            s: std::array::from_fn(|a| std::array::from_fn(|k| m(k).position[a])),
            axes: std::array::from_fn(|r| {
                std::array::from_fn(|c| std::array::from_fn(|k| m(k).axes[(r, c)]))
            }),
            body_axes: (0..W).all(|k| crate::kinematics::has_body_axes(m(k))),
        }
    }
}

/// Lane k of the element indices of a chunk of at most four: unused lanes repeat the first
/// element (computed, never written back).
pub(crate) fn lane_elements(chunk: &[usize]) -> [usize; W] {
    std::array::from_fn(|k| chunk[if k < chunk.len() { k } else { 0 }])
}

/// The packs of a model (every force element is in one).
#[derive(Debug, Clone)]
pub struct ElementPacks {
    bushings: Vec<BushingPack>,
    p2p: Vec<P2pPack>,
    /// Kinematics of the ground (identity, at rest): ground markers read it like a body.
    ground: BodyKin,
}

impl ElementPacks {
    /// Groups the elements of `model`: bushings by free spin axis (none, x, y, z), within each
    /// group linear ones first, then those with curves (so that few packs evaluate a curve),
    /// each in element order, four to a pack; point-to-point elements by marker pair, four
    /// pairs to a pack ([`p2p_packs`]: the elements acting at one pair share its kinematics).
    pub fn new(model: &CompiledModel) -> Self {
        Self::of(model, &(0..model.elements.len()).collect::<Vec<_>>())
    }

    /// [`ElementPacks::new`] for the elements `elements` (ascending) only: the others are
    /// evaluated elsewhere (a model-specific force kernel, [`crate::tree_kernel::TreeKernel::forces`]).
    pub fn of(model: &CompiledModel, elements: &[usize]) -> Self {
        // [spin axis: none, x, y, z][linear, with curves]
        let mut bushings: [[Vec<usize>; 2]; 4] = Default::default();
        let mut p2p = vec![];
        for &k in elements {
            let el = &model.elements[k];
            match &el.kind {
                ElementKind::Bushing(b) => {
                    let spin = b.spin_axis.map_or(0, |a| a + 1);
                    bushings[spin][usize::from(crate::bushing::has_curves(b))].push(k);
                }
                ElementKind::P2p(_) => p2p.push(k),
            }
        }
        let mut bushing_packs = vec![];
        for group in &bushings {
            let group = group.concat();
            bushing_packs.extend(group.chunks(W).map(|c| BushingPack::new(model, c)));
        }
        Self {
            bushings: bushing_packs,
            p2p: p2p_packs(model, &p2p),
            ground: BodyKin::default(),
        }
    }

    /// Number of packed (bushing, point-to-point) elements.
    pub fn n_packed(&self) -> (usize, usize) {
        (
            self.bushings.iter().map(|p| p.used).sum(),
            self.p2p.iter().map(P2pPack::n_elements).sum(),
        )
    }

    /// Evaluates every pack: adds the elements' wrenches (force; torque about the centre of
    /// mass) to `force` and `torque` per body and writes each element's result (without
    /// partials) to `elements`.
    #[inline(always)]
    pub fn forces<L: Lanes>(
        &self,
        l: L,
        curves: &[Curve],
        bodies: &[BodyKin],
        force: &mut [Vector3<f64>],
        torque: &mut [Vector3<f64>],
        elements: &mut [ElementForce],
    ) {
        let mut wrenches = Wrenches {
            force,
            torque,
            elements,
        };
        self.run(l, &self.bushings, curves, bodies, &mut wrenches);
        self.run(l, &self.p2p, curves, bodies, &mut wrenches);
    }

    /// Evaluates every pack of `packs` (each gathers its ends' kinematics into lanes itself).
    #[inline(always)]
    fn run<L: Lanes, P: LanePack>(
        &self,
        l: L,
        packs: &[P],
        curves: &[Curve],
        bodies: &[BodyKin],
        out: &mut Wrenches,
    ) {
        let ends = PackBodies {
            bodies,
            ground: &self.ground,
        };
        for p in packs {
            p.evaluate(l, curves, &ends, out);
        }
    }
}

/// The body kinematics a pack gathers its markers' lanes from (the ground for ground markers).
pub(crate) struct PackBodies<'a> {
    pub bodies: &'a [BodyKin],
    pub ground: &'a BodyKin,
}

impl PackBodies<'_> {
    /// Both ends' kinematics of the markers `i`, `j` and their differences.
    #[inline(always)]
    pub fn ends<L: Lanes>(&self, l: L, i: &PackedMarkers, j: &PackedMarkers) -> EndLanes<L::V> {
        let mi = marker_lanes(l, &self.of(i), i);
        let mj = marker_lanes(l, &self.of(j), j);
        EndLanes {
            dx: sub3(l, &mi.x, &mj.x),
            dv: sub3(l, &mi.v, &mj.v),
            i: mi,
            j: mj,
        }
    }

    /// The kinematics each lane's marker of `m` reads.
    #[inline(always)]
    pub fn of(&self, m: &PackedMarkers) -> [&BodyKin; W] {
        lane_bodies(m, self.bodies, self.ground)
    }
}

/// A pack of four elements of one kind ([`BushingPack`], [`P2pPack`]).
pub(crate) trait LanePack {
    /// Evaluates the pack: gathers its markers' kinematics from `bodies` (in the order its
    /// arithmetic needs them, [`PackBodies::ends`] or piecewise), adds the wrenches to the
    /// bodies and writes each element's result (without partials).
    fn evaluate<L: Lanes>(&self, l: L, curves: &[Curve], bodies: &PackBodies, out: &mut Wrenches);
}

/// Both ends of a pack's elements per lane: marker kinematics and the differences I − J.
pub(crate) struct EndLanes<V> {
    pub i: MarkerLanes<V>,
    pub j: MarkerLanes<V>,
    /// x_I − x_J (global).
    pub dx: V3<V>,
    /// v_I − v_J (global).
    pub dv: V3<V>,
}

/// Where a pack's results go: body wrenches and element results.
pub(crate) struct Wrenches<'a> {
    pub force: &'a mut [Vector3<f64>],
    pub torque: &'a mut [Vector3<f64>],
    pub elements: &'a mut [ElementForce],
}

impl Wrenches<'_> {
    /// Adds force `f` with torque `t` (about the centre of mass) to body `b` (none: the ground).
    #[inline(always)]
    pub fn add(&mut self, b: Option<usize>, f: Vector3<f64>, t: Vector3<f64>) {
        if let Some(b) = b {
            self.force[b] += f;
            self.torque[b] += t;
        }
    }
}

/// Lane `k` of a per-lane 3-vector stored by [`to_lanes`].
#[inline(always)]
pub(crate) fn lane(v: &[L4; 3], k: usize) -> Vector3<f64> {
    Vector3::new(v[0][k], v[1][k], v[2][k])
}

/// Position, lever arm and velocity of one marker per lane (see
/// [`crate::kinematics::MarkerKin`]; what a point-to-point pack reads).
pub(crate) struct MarkerLanes<V> {
    pub x: V3<V>,
    pub arm: V3<V>,
    pub v: V3<V>,
}

#[inline(always)]
pub(crate) fn marker_lanes<L: Lanes>(
    l: L,
    b: &[&BodyKin; W],
    m: &PackedMarkers,
) -> MarkerLanes<L::V> {
    // The marker axes are not needed here (the compiler drops their product).
    let (arm, _) = marker_frame(l, b, m);
    let MarkerMotion { x, v, .. } = marker_motion(l, b, &arm);
    MarkerLanes { x, arm, v }
}

/// Position, velocity and angular velocity of one marker per lane ([`marker_motion`]).
pub(crate) struct MarkerMotion<V> {
    pub x: V3<V>,
    pub v: V3<V>,
    pub w: V3<V>,
}

/// The orientation part of [`marker_lanes`]: the lever arm R_b s (global) and the marker axes
/// R_b A per lane (R_b itself where every lane's A is the identity, [`PackedMarkers::body_axes`]:
/// the same bits up to the sign of a zero entry).
#[inline(always)]
pub(crate) fn marker_frame<L: Lanes>(
    l: L,
    b: &[&BodyKin; W],
    m: &PackedMarkers,
) -> (V3<L::V>, V33<L::V>) {
    let z = l.splat(0.0);
    let mut rot_b = [[z; 3]; 3];
    for (r, row) in rot_b.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = gather!(l, |k| b[k].rot_rows.r[r][c]);
        }
    }
    let s = load3(l, &m.s);
    let arm = mat_vec(l, &rot_b, &s);
    if m.body_axes {
        return (arm, rot_b);
    }
    let mut axes = [[z; 3]; 3];
    for (r, row) in axes.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = l.load(&m.axes[r][c]);
        }
    }
    (arm, mat_mat(l, &rot_b, &axes))
}

/// The motion part of [`marker_lanes`] from the lever arm: position x_b + a, velocity
/// v_b + ω × a and ω per lane.
#[inline(always)]
pub(crate) fn marker_motion<L: Lanes>(
    l: L,
    b: &[&BodyKin; W],
    arm: &V3<L::V>,
) -> MarkerMotion<L::V> {
    let z = l.splat(0.0);
    let mut x_b = [z; 3];
    let mut v_b = [z; 3];
    let mut w = [z; 3];
    for a in 0..3 {
        x_b[a] = gather!(l, |k| b[k].x[a]);
        v_b[a] = gather!(l, |k| b[k].v[a]);
        w[a] = gather!(l, |k| b[k].w[a]);
    }
    MarkerMotion {
        x: add3(l, &x_b, arm),
        v: add3(l, &v_b, &cross(l, &w, arm)),
        w,
    }
}

#[inline(always)]
pub(crate) fn add3<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [l.add(a[0], b[0]), l.add(a[1], b[1]), l.add(a[2], b[2])]
}

#[inline(always)]
pub(crate) fn sub3<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [l.sub(a[0], b[0]), l.sub(a[1], b[1]), l.sub(a[2], b[2])]
}

#[inline(always)]
pub(crate) fn dot<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> L::V {
    l.mul_add(a[2], b[2], l.mul_add(a[1], b[1], l.mul(a[0], b[0])))
}

/// a × b per lane.
#[inline(always)]
pub(crate) fn cross<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [
        l.mul_sub(a[1], b[2], l.mul(a[2], b[1])),
        l.mul_sub(a[2], b[0], l.mul(a[0], b[2])),
        l.mul_sub(a[0], b[1], l.mul(a[1], b[0])),
    ]
}

/// M x per lane.
#[inline(always)]
pub(crate) fn mat_vec<L: Lanes>(l: L, m: &V33<L::V>, x: &V3<L::V>) -> V3<L::V> {
    [dot(l, &m[0], x), dot(l, &m[1], x), dot(l, &m[2], x)]
}

/// Column `c` of M per lane.
#[inline(always)]
pub(crate) fn column<V: Copy>(m: &[[V; 3]; 3], c: usize) -> V3<V> {
    [m[0][c], m[1][c], m[2][c]]
}

/// Mᵀ x per lane.
#[inline(always)]
pub(crate) fn mat_t_vec<L: Lanes>(l: L, m: &V33<L::V>, x: &V3<L::V>) -> V3<L::V> {
    [
        dot(l, &column(m, 0), x),
        dot(l, &column(m, 1), x),
        dot(l, &column(m, 2), x),
    ]
}

/// A B per lane, as (Aᵀ)ᵀ B (the transpose only renames registers).
#[inline(always)]
pub(crate) fn mat_mat<L: Lanes>(l: L, a: &V33<L::V>, b: &V33<L::V>) -> V33<L::V> {
    let a_t = [column(a, 0), column(a, 1), column(a, 2)];
    mat_t_mat(l, &a_t, b)
}

/// Aᵀ B per lane.
#[inline(always)]
pub(crate) fn mat_t_mat<L: Lanes>(l: L, a: &V33<L::V>, b: &V33<L::V>) -> V33<L::V> {
    let mut out = [[l.splat(0.0); 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = dot(l, &column(a, r), &column(b, c));
        }
    }
    out
}

/// A per-lane 3-vector from arrays `v[coordinate][lane]` (the inverse of [`to_lanes`]).
#[inline(always)]
pub(crate) fn load3<L: Lanes>(l: L, v: &[L4; 3]) -> V3<L::V> {
    [l.load(&v[0]), l.load(&v[1]), l.load(&v[2])]
}

/// The lanes of a per-lane 3-vector as arrays: `out[coordinate][lane]`.
#[inline(always)]
pub(crate) fn to_lanes<L: Lanes>(l: L, v: &V3<L::V>) -> [L4; 3] {
    let mut out = [[0.0; 4]; 3];
    for (o, x) in out.iter_mut().zip(v) {
        l.store(*x, o);
    }
    out
}

/// The kinematics each lane's marker reads: its body's, or the ground's.
#[inline(always)]
pub(crate) fn lane_bodies<'a>(
    m: &PackedMarkers,
    bodies: &'a [BodyKin],
    ground: &'a BodyKin,
) -> [&'a BodyKin; W] {
    let pick = |b: Option<usize>| b.map_or(ground, |b| &bodies[b]);
    [
        pick(m.body[0]),
        pick(m.body[1]),
        pick(m.body[2]),
        pick(m.body[3]),
    ]
}
