//! Ideal joints in relative coordinates (document 004, sec. 2.2: the relative-coordinate
//! formulation in which a macro joint is one more joint type; `docs/joints.md`).
//!
//! A body with a `joint` has no free coordinates: its pose relative to its parent (another body
//! or the ground) is a pose map Φ(z) of its joint coordinate z, and its velocity is linear in ż:
//!
//! ```text
//! revolute:  s(z) = c + Q(z) (s₀ − c),  R_rel(z) = Q(z) R_rel,0,  Q(z) = exp(z [a]×)
//! prismatic: s(z) = s₀ + z a,            R_rel(z) = R_rel,0
//! X_b = X_p + R_p s(z),  R_b = R_p R_rel(z)
//! ```
//!
//! with a, c the axis and point in the parent's body frame, s₀, R_rel,0 the body's design pose
//! in the parent's frame (z = 0 at the design pose). Bodies form trees: a free body (or the
//! ground) at the root and its jointed descendants. A tree's velocity coordinates ż_T are the
//! root's six (v global, ω body) and one rate per joint; every tree body's velocity is
//! v_b = J_b ż_T and its acceleration J_b z̈_T + J̇_b ż_T ([`TreeKin`], computed recursively from
//! the root outwards).
//!
//! The equations of motion are the free bodies' Newton–Euler equations projected onto the tree
//! coordinates (Jourdain / Kane; document 004 eq. 1 with the reaction forces eliminated):
//!
//! ```text
//! M_z z̈_T = Σ_b J_bᵀ M_b (q_b − J̇_b ż_T),   M_z = Σ_b J_bᵀ M_b J_b,   M_b = diag(m I, I_b)
//! ```
//!
//! where q_b is the free-body acceleration the evaluator computes from the expanded poses and
//! velocities of all bodies (so M_b q_b is the wrench minus the gyroscopic term, with the
//! angular part in body axes). The element states are passed through unchanged.
//!
//! State layout ("block i = body i"): a jointed body's seven position slots hold its joint
//! coordinate in the first slot and zeros, its six velocity slots ż in the first and zeros; free
//! bodies and element states keep their layout. [`Joints::expand`] turns such a state into the
//! full poses and velocities every consumer of body poses reads.

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_model as sm;
use sprung_solve::block::{BlockMatrix, BlockPattern};
use sprung_solve::mech::Linearisation;

use crate::kinematics::BodyKin;
use crate::rotation::{matrix_to_quat, quat_to_matrix};
use crate::tree_kernel::{FlatLayout, TreeKernel};

/// One joint, in the parent's design body frame (the ground's frame is the global one).
#[derive(Debug, Clone)]
pub struct JointDef {
    /// The jointed body.
    pub body: usize,
    /// Parent body (`None` = ground).
    pub parent: Option<usize>,
    /// Revolute or prismatic.
    pub kind: sm::JointKind,
    /// Unit axis, parent frame.
    pub axis: Vector3<f64>,
    /// Point on the axis, parent frame, m (revolute; zero for prismatic).
    pub point: Vector3<f64>,
    /// The body's centre of mass at z = 0, parent frame, m.
    pub s0: Vector3<f64>,
    /// The body's orientation relative to the parent at z = 0.
    pub rel0: Matrix3<f64>,
    /// Whether `rel0` is the identity (a body in its parent's axes): the tabulated motion
    /// then skips the product with it ([`JointDef::motion_from_rel`]).
    pub rel0_identity: bool,
    /// Initial coordinate, rad or m.
    pub z0: f64,
    /// Initial rate, rad/s or m/s.
    pub zd0: f64,
    /// Tabulated: the spline of the table entry (pose relative to the parent's design frame),
    /// shared with the other bodies on the same grid and coordinates ([`SplineGroup`]).
    pub spline: Option<Arc<sm::TableSpline>>,
    /// Tabulated: the first of the body's six channels in `spline`.
    pub channel: usize,
    /// Per coordinate the pose map depends on (in table-axis order; one for revolute and
    /// prismatic): the body whose first position slot holds it — the body itself for its own
    /// coordinate, another jointed body for an input coordinate.
    pub sources: Vec<usize>,
    /// Whether the body has a coordinate of its own (false: a follower).
    pub own: bool,
    /// Whether the body is massless (a follower with mass 0: its element wrench enters the
    /// projection through Jᵀ W, `docs/joints.md`).
    pub massless: bool,
}

/// A tree: a free root body (or the ground) and its jointed descendants.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Free root body, `None` for the ground.
    pub root: Option<usize>,
    /// The tree's bodies: the root first (if free), then the jointed bodies, parents before
    /// children.
    pub bodies: Vec<usize>,
    /// Per entry of `bodies`: the local index of its parent in `bodies` (`None`: the root itself
    /// or a joint to the ground).
    pub parent_local: Vec<Option<usize>>,
    /// Index in v of each tree velocity coordinate: the root's six, then one per joint in the
    /// order of `bodies`.
    pub coords: Vec<usize>,
    /// Per entry of `bodies`: the tree coordinate of its joint (`None` for the root and for
    /// followers).
    pub joint_coord: Vec<Option<usize>>,
    /// Per entry of `bodies`: the tree coordinates its pose map depends on (own and input, in
    /// the joint's order; empty for the root).
    pub deps: Vec<Vec<usize>>,
    /// Per entry of `bodies`: massless (projection through Jᵀ W).
    pub massless: Vec<bool>,
    /// The blocks that hold the tree's velocity coordinates (the free root's and those of the
    /// bodies with a coordinate of their own), ascending.
    pub coord_blocks: Vec<usize>,
    /// Per entry of `bodies`: the tree coordinates its pose depends on (the root's six, the
    /// ancestors' and its own joint's), ascending — the columns of J_b that can be non-zero;
    /// the others stay exactly 0.
    pub jac_cols: Vec<Vec<usize>>,
    /// Per entry of `bodies`, per coordinate of its `deps`: whether its parent's J_p has that
    /// column too (a follower on its carrier; the joint's column then adds to the parent's).
    pub shared: Vec<[bool; 2]>,
    /// Per entry of `bodies`: whether its J̇_b ż is used (a body with mass or inertia, or
    /// with children); a massless leaf's is not (its projection is Jᵀ W alone, and the
    /// evaluation path forms no J_b for it: [`JointWork::project_q`] moves its wrench onto the
    /// parent).
    pub need_acc: Vec<bool>,
    /// The tabulated bodies' shared splines ([`SplineGroup`]).
    pub groups: Vec<SplineGroup>,
    /// Per entry of `bodies`: its spline group and the first of its channels there.
    pub group_of: Vec<Option<(usize, usize)>>,
}

/// Tabulated bodies of one tree on the same grid and coordinates (a carrier and its
/// followers): one spline of six channels per body ([`sm::KinematicTable::spline_of`]),
/// evaluated once per tree kinematics with one basis and one pass over the cell's nodes; the
/// members whose velocity-product terms are used ([`Tree::need_acc`]) come first, their
/// channels get the second derivatives.
#[derive(Debug, Clone)]
pub struct SplineGroup {
    /// The shared spline.
    pub spline: Arc<sm::TableSpline>,
    /// The bodies whose first position slot holds each coordinate ([`JointDef::sources`]).
    pub sources: Vec<usize>,
    /// The tree coordinates of `sources`.
    pub deps: Vec<usize>,
    /// Number of leading channels with second derivatives (six per member that needs them).
    pub second: usize,
}

impl SplineGroup {
    /// The coordinates of the group's spline at the reduced positions `r` (per source, the
    /// first slot of its block; a 1D group's second is 0).
    #[inline]
    pub fn coordinates(&self, r: &[f64]) -> [f64; 2] {
        let mut c = [0.0; 2];
        for (k, &src) in self.sources.iter().enumerate() {
            c[k] = r[7 * src];
        }
        c
    }

    /// The group's evaluation at coordinates `c` into `buf` (slot-major with the stride of its
    /// channels, [`sm::TableSpline::eval_slots`]): value and first derivatives of every
    /// channel, second derivatives of the leading [`SplineGroup::second`] ones; `bs` is the
    /// basis scratch (filled in place).
    #[inline]
    pub fn eval_into(&self, c: [f64; 2], bs: &mut sm::SplineBasis, buf: &mut [f64]) {
        let sp = &self.spline;
        let nc = sp.channels();
        let second = self.second > 0;
        sp.basis_into(&c[..self.sources.len()], second, bs);
        sp.eval_slots(bs, 0..self.second, second, buf, nc);
        sp.eval_slots(bs, self.second..nc, false, &mut buf[self.second..], nc);
    }
}

impl Tree {
    /// Number of velocity coordinates.
    pub fn n_coords(&self) -> usize {
        self.coords.len()
    }

    /// The blocks that hold the tree's velocity coordinates ([`Tree::coord_blocks`]).
    pub fn coordinate_blocks(&self) -> &[usize] {
        &self.coord_blocks
    }

    /// Number of leading tree coordinates that are a free root's translation (3, or 0 for a
    /// tree on the ground). Every tree body's J_b column there is the unit vector e_c in the
    /// translation rows (v_b = v_root + …, ω_b independent of v_root): constant, written once
    /// by [`TreeKin::new`], and the first entries of every [`Tree::jac_cols`].
    pub fn translation_cols(&self) -> usize {
        if self.root.is_some() { 3 } else { 0 }
    }
}

/// The joints of a compiled model and the trees they form (empty for a model without joints).
#[derive(Debug, Clone, Default)]
pub struct Joints {
    /// Per body: its joint, if any.
    pub defs: Vec<Option<JointDef>>,
    /// The jointed bodies, every parent before its children.
    pub order: Vec<usize>,
    /// The trees that contain at least one joint.
    pub trees: Vec<Tree>,
    /// Per body: the tree (index into `trees`) it belongs to, if that tree has a joint, and
    /// its index in that tree's `bodies`.
    pub tree_of: Vec<Option<(usize, usize)>>,
}

/// Rotation by `angle` (rad) about the unit axis `a` (Rodrigues).
pub fn axis_rotation(a: &Vector3<f64>, angle: f64) -> Matrix3<f64> {
    let k = crate::rotation::skew(a);
    let (s, c) = angle.sin_cos();
    Matrix3::identity() + s * k + (1.0 - c) * k * k
}

/// Pose and velocity of a body, global: centre of mass, orientation (body → global), velocity,
/// angular velocity (global axes).
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Centre of mass, m.
    pub x: Vector3<f64>,
    /// Orientation.
    pub rot: Matrix3<f64>,
    /// Velocity, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity, global axes, rad/s.
    pub w: Vector3<f64>,
}

impl Frame {
    /// The ground.
    pub const GROUND: Frame = Frame {
        x: Vector3::new(0.0, 0.0, 0.0),
        rot: Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
        v: Vector3::new(0.0, 0.0, 0.0),
        w: Vector3::new(0.0, 0.0, 0.0),
    };

    /// A free body's frame from its position block (x, quaternion) and velocity block (v
    /// global, ω body).
    pub fn of_free(r: &[f64], v: &[f64]) -> Frame {
        let rot = quat_to_matrix(&r[3..7]);
        Frame {
            x: Vector3::new(r[0], r[1], r[2]),
            rot,
            v: Vector3::new(v[0], v[1], v[2]),
            w: rot * Vector3::new(v[3], v[4], v[5]),
        }
    }
}

/// What a joint adds to its body's motion at coordinates c (rates ċ) relative to the parent
/// frame `p` (every vector global).
#[derive(Debug, Clone, Copy)]
pub struct JointMotion {
    /// The body's frame.
    pub frame: Frame,
    /// The body's orientation relative to the parent's, R_rel = R_pᵀ R_b (`frame.rot` is the
    /// rounded product R_p R_rel).
    pub rel: Matrix3<f64>,
    /// Centre of mass minus the parent's, global.
    pub d: Vector3<f64>,
    /// Relative velocity of the centre of mass in the parent frame's motion, global
    /// (R_p ṡ): u × e ż, u ż, or R_p Σ_k ∂s/∂c_k ċ_k.
    pub s_dot: Vector3<f64>,
    /// Per coordinate of [`JointDef::sources`]: the Jacobian column (translation of the centre
    /// of mass, rotation), global.
    pub cols: [(Vector3<f64>, Vector3<f64>); 2],
    /// The joint's velocity-product acceleration beyond the parent's motion (added to
    /// a_p + α_p × d + ω_p × (ω_p × d) + 2 ω_p × ṡ): revolute u × (u × e) ż², tabulated
    /// R_p Σ_kl ∂²s/∂c_k∂c_l ċ_k ċ_l.
    pub bias_a: Vector3<f64>,
    /// The same for the angular acceleration (added to α_p): revolute ω_p × u ż, tabulated
    /// ω_p × ω_rel + R_p α_rel (`tabulated_rotation`).
    pub bias_al: Vector3<f64>,
}

/// A tabulated joint's motion relative to its parent, parent design axes
/// ([`JointDef::tabulated_rel`]).
#[derive(Debug, Clone, Copy)]
pub struct RelMotion {
    /// Centre of mass, m.
    pub s: Vector3<f64>,
    /// ∂s/∂c_k per coordinate.
    pub ds: [Vector3<f64>; 2],
    /// exp([φ]×).
    pub rot: Matrix3<f64>,
    /// Angular velocity columns J_l(φ) ∂φ/∂c_k.
    pub wcols: [Vector3<f64>; 2],
    /// Σ_k wcols_k ċ_k, rad/s.
    pub w_rel: Vector3<f64>,
    /// ṡ, m/s.
    pub sd: Vector3<f64>,
    /// Σ_kl ∂²s/∂c_k∂c_l ċ_k ċ_l (0 without bias), m/s².
    pub dds: Vector3<f64>,
    /// The velocity-product angular acceleration ([`tabulated_rotation`]; 0 without bias).
    pub al_rel: Vector3<f64>,
}

/// One body's pose map derivatives in a slot-major buffer ([`sm::TableSpline::eval_slots`]):
/// `buf[slot * stride + off + m]`, slots value, ∂/∂c1, ∂/∂c2, ∂²/∂c1², ∂²/∂c1∂c2, ∂²/∂c2².
#[derive(Debug, Clone, Copy)]
pub struct PoseView<'a> {
    buf: &'a [f64],
    stride: usize,
    off: usize,
}

impl<'a> PoseView<'a> {
    /// The view of the channels from `off` in `buf` with slot stride `stride`.
    pub fn new(buf: &'a [f64], stride: usize, off: usize) -> Self {
        Self { buf, stride, off }
    }

    /// The six components of slot `slot`.
    #[inline(always)]
    fn slot(&self, slot: usize) -> &[f64; 6] {
        let b = slot * self.stride + self.off;
        self.buf[b..b + 6].try_into().expect("six components")
    }
}

/// A tabulated body's spline evaluated alone ([`JointDef::pose_eval`]): the six slots of its
/// six channels, slot-major ([`PoseView`] with stride 6).
pub type PoseEval = [f64; sm::SPLINE_SLOTS * 6];

/// The coefficients of exp([φ]×) = I + S [φ]× + A [φ]×² and of the left Jacobian of SO(3),
/// J_l(φ) = I + A [φ]× + B [φ]×², with the rates of A and B: (S, A, B, A'/θ, B'/θ),
/// S = sin θ/θ, A = (1 − cos θ)/θ², B = (θ − sin θ)/θ³, θ = |φ| (`theta2` = θ²). Below θ = 1
/// their Taylor series (ten terms each, Horner; truncation < 1e-19), closed forms above (one
/// `sin_cos`). Without `rates` the rates are left 0 (the others are the same to the bit).
fn rotation_coeffs(theta2: f64, rates: bool) -> (f64, f64, f64, f64, f64) {
    if theta2 < 1.0 {
        let horner = |c: &[f64; ROT_TERMS]| c.iter().rev().fold(0.0, |acc, &ck| ck + theta2 * acc);
        let (s, a, b) = (
            horner(&ROT_SERIES[0]),
            horner(&ROT_SERIES[1]),
            horner(&ROT_SERIES[2]),
        );
        if !rates {
            return (s, a, b, 0.0, 0.0);
        }
        (s, a, b, horner(&ROT_SERIES[3]), horner(&ROT_SERIES[4]))
    } else {
        let th = theta2.sqrt();
        let (sn, c) = th.sin_cos();
        let s = sn / th;
        let a = (1.0 - c) / theta2;
        let b = (th - sn) / (theta2 * th);
        if !rates {
            return (s, a, b, 0.0, 0.0);
        }
        let da = sn / (theta2 * th) - 2.0 * (1.0 - c) / (theta2 * theta2);
        let db = (1.0 - c) / (theta2 * theta2) - 3.0 * (th - sn) / (theta2 * theta2 * th);
        (s, a, b, da, db)
    }
}

/// Number of terms of the series of [`rotation_coeffs`].
const ROT_TERMS: usize = 10;

/// Coefficients of θ^2k of the series of [`rotation_coeffs`]: S = Σ (−1)^k θ^2k/(2k+1)!,
/// A = Σ (−1)^k θ^2k/(2k+2)!, B = Σ (−1)^k θ^2k/(2k+3)!, A'/θ = Σ (−1)^(k+1) 2(k+1) θ^2k/(2k+4)!,
/// B'/θ = Σ (−1)^(k+1) 2(k+1) θ^2k/(2k+5)!.
const ROT_SERIES: [[f64; ROT_TERMS]; 5] = {
    let mut c = [[0.0; ROT_TERMS]; 5];
    let mut k = 0;
    while k < ROT_TERMS {
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        // 1/(2k+m)! for m = 1..5.
        let mut f = [1.0; 6];
        let mut m = 1;
        while m <= 5 {
            let mut x = 1.0;
            let mut i = 2;
            while i <= 2 * k + m {
                x *= i as f64;
                i += 1;
            }
            f[m] = 1.0 / x;
            m += 1;
        }
        let kk = 2.0 * (k + 1) as f64;
        c[0][k] = sign * f[1];
        c[1][k] = sign * f[2];
        c[2][k] = sign * f[3];
        c[3][k] = -sign * kk * f[4];
        c[4][k] = -sign * kk * f[5];
        k += 1;
    }
    c
};

/// exp([φ]×) (Rodrigues with [`rotation_coeffs`]).
pub fn rotation_vector_matrix(phi: &Vector3<f64>) -> Matrix3<f64> {
    let (s, a, ..) = rotation_coeffs(phi.norm_squared(), false);
    rotation_from_coeffs(phi, s, a)
}

/// I + s [φ]× + a [φ]×², entry by entry: the sums of (I + s [φ]×) + (a [φ]×) [φ]× without
/// their exact-zero terms (the same value, up to the sign of an entry that is exactly 0).
#[inline(always)]
fn rotation_from_coeffs(phi: &Vector3<f64>, s: f64, a: f64) -> Matrix3<f64> {
    let (x, y, z) = (phi.x, phi.y, phi.z);
    let (ax, ay, az) = (a * x, a * y, a * z);
    let (sx, sy, sz) = (s * x, s * y, s * z);
    Matrix3::new(
        1.0 + (-az * z - ay * y),
        -sz + ay * x,
        sy + az * x,
        sz + ax * y,
        1.0 + (-az * z - ax * x),
        -sx + az * y,
        -sy + ax * z,
        sx + ay * z,
        1.0 + (-ay * y - ax * x),
    )
}

/// The relative rotation of a tabulated pose: for the rotation vector φ(c) with first and
/// second derivatives, the angular velocity columns ω_k = J_l(φ) ∂φ/∂c_k (parent axes) and the
/// velocity-product angular acceleration
/// α = J_l(φ) Σ_kl ∂²φ/∂c_k∂c_l ċ_k ċ_l + (A'/θ)(φ·φ̇)(φ × φ̇) + (B'/θ)(φ·φ̇) φ × (φ × φ̇)
///     + B φ̇ × (φ × φ̇),   φ̇ = Σ_k ∂φ/∂c_k ċ_k
/// (the time derivative of J_l(φ) φ̇ at fixed c̈ = 0).
/// Without `bias` α is left 0. Columns of the first `n` coordinates (the others are 0).
/// (A, B, A'/θ, B'/θ) are [`rotation_coeffs`]'.
#[inline(always)]
fn tabulated_rotation(
    phi: &Vector3<f64>,
    dphi: &[Vector3<f64>; 2],
    ddphi_cc: &Vector3<f64>,
    phid: &Vector3<f64>,
    (a, b, da, db): (f64, f64, f64, f64),
    n: usize,
    bias: bool,
) -> ([Vector3<f64>; 2], Vector3<f64>) {
    let jl = |x: &Vector3<f64>| {
        let px = phi.cross(x);
        x + a * px + b * phi.cross(&px)
    };
    let cols = std::array::from_fn(|k| {
        if k < n {
            jl(&dphi[k])
        } else {
            Vector3::zeros()
        }
    });
    if !bias {
        return (cols, Vector3::zeros());
    }
    let pp = phi.cross(phid);
    let rate = phi.dot(phid);
    let al = jl(ddphi_cc) + da * rate * pp + db * rate * phi.cross(&pp) + b * phid.cross(&pp);
    (cols, al)
}

impl JointDef {
    /// The joint's coordinates and rates read from the reduced state (r, v) (the first slots
    /// of [`JointDef::sources`]' blocks).
    pub fn coordinates(&self, r: &[f64], v: &[f64]) -> ([f64; 2], [f64; 2]) {
        let mut c = [0.0; 2];
        let mut cd = [0.0; 2];
        for (k, &src) in self.sources.iter().enumerate() {
            c[k] = r[7 * src];
            cd[k] = v[6 * src];
        }
        (c, cd)
    }

    /// The body's motion for coordinates `c` and rates `cd` (per [`JointDef::sources`]; a
    /// revolute or prismatic joint reads the first) on parent frame `p`.
    pub fn motion(&self, p: &Frame, c: [f64; 2], cd: [f64; 2]) -> JointMotion {
        let ev = self.pose_eval(c, true);
        self.motion_with(p, c, cd, ev.as_ref().map(|e| PoseView::new(e, 6, 0)), true)
    }

    /// A tabulated joint's spline (value, first and, with `second`, second derivatives) at
    /// the coordinates `c`, its own channels alone; `None` for revolute and prismatic joints.
    pub fn pose_eval(&self, c: [f64; 2], second: bool) -> Option<PoseEval> {
        self.spline.as_ref().map(|sp| {
            let mut out = [0.0; sm::SPLINE_SLOTS * 6];
            let b = sp.basis_at(&c[..self.sources.len()]);
            sp.eval_slots(&b, self.channel..self.channel + 6, second, &mut out, 6);
            out
        })
    }

    /// [`JointDef::motion`] with the pose map's spline evaluation `ev` given (it must be
    /// [`JointDef::pose_eval`] at `c`, with second derivatives if `bias`: the tree kinematics
    /// reuse it over perturbations that leave the joint's coordinates alone). Without `bias`
    /// the velocity-product terms `bias_a`, `bias_al` are left 0 (for a body whose J̇ ż is
    /// not used, [`Tree::need_acc`]); everything else is the same to the bit.
    pub fn motion_with(
        &self,
        p: &Frame,
        c: [f64; 2],
        cd: [f64; 2],
        ev: Option<PoseView>,
        bias: bool,
    ) -> JointMotion {
        let (z, zd) = (c[0], cd[0]);
        let zero = Vector3::zeros();
        let u = p.rot * self.axis;
        match self.kind {
            sm::JointKind::Revolute | sm::JointKind::Prismatic | sm::JointKind::Fixed => {
                let (s, rel, e, s_dot) = match self.kind {
                    sm::JointKind::Revolute => {
                        let q = axis_rotation(&self.axis, z);
                        let s = self.point + q * (self.s0 - self.point);
                        let e = p.rot * (s - self.point);
                        (s, q * self.rel0, e, u.cross(&e) * zd)
                    }
                    _ => (self.s0 + z * self.axis, self.rel0, zero, u * zd),
                };
                let d = p.rot * s;
                let revolute = self.kind == sm::JointKind::Revolute;
                let w = if revolute { p.w + u * zd } else { p.w };
                let (col, bias_a, bias_al) = if revolute {
                    (
                        (u.cross(&e), u),
                        u.cross(&u.cross(&e)) * zd * zd,
                        p.w.cross(&u) * zd,
                    )
                } else {
                    ((u, zero), zero, zero)
                };
                JointMotion {
                    frame: Frame {
                        x: p.x + d,
                        rot: p.rot * rel,
                        v: p.v + p.w.cross(&d) + s_dot,
                        w,
                    },
                    rel,
                    d,
                    s_dot,
                    cols: [col, (zero, zero)],
                    bias_a,
                    bias_al,
                }
            }
            sm::JointKind::Tabulated => {
                let ev = ev.expect("a tabulated joint has its spline evaluation");
                self.motion_from_rel(p, &self.tabulated_rel(&ev, cd, bias), bias)
            }
        }
    }

    /// The part of a tabulated joint's motion relative to its parent (parent design axes):
    /// what [`JointDef::motion_from_rel`] turns into the body's motion on any parent frame.
    /// It depends on the joint's coordinates and rates alone, so the tree kinematics of a
    /// perturbation that leaves them alone reuse it ([`Joints::tree_kinematics_with`]).
    #[inline(always)]
    pub fn tabulated_rel(&self, ev: &PoseView, cd: [f64; 2], bias: bool) -> RelMotion {
        match self.sources.len() {
            1 => self.tabulated_rel_n::<1>(ev, cd, bias),
            _ => self.tabulated_rel_n::<2>(ev, cd, bias),
        }
    }

    /// [`JointDef::tabulated_rel`] of a joint with `N` coordinates (the loops over them
    /// unrolled; a second coordinate's terms of a 1D table are 0 and not formed).
    #[inline(always)]
    fn tabulated_rel_n<const N: usize>(
        &self,
        ev: &PoseView,
        cd: [f64; 2],
        bias: bool,
    ) -> RelMotion {
        let zero = Vector3::zeros();
        let n = N;
        let v3 = |x: &[f64; 6], o: usize| Vector3::new(x[o], x[o + 1], x[o + 2]);
        let x0 = ev.slot(0);
        let s = v3(x0, 0);
        let phi = v3(x0, 3);
        let (mut ds, mut dphi) = ([zero; 2], [zero; 2]);
        for k in 0..n {
            let x = ev.slot(1 + k);
            (ds[k], dphi[k]) = (v3(x, 0), v3(x, 3));
        }
        // Slot of ∂²/∂c_k∂c_l.
        let d2 = |k: usize, l: usize| 3 + k + l;
        // Σ_kl ∂²/∂c_k∂c_l ċ_k ċ_l of position and rotation vector.
        let (mut dds, mut ddphi) = (zero, zero);
        let mut sd = zero;
        let mut phid = zero;
        for k in 0..n {
            sd += ds[k] * cd[k];
            phid += dphi[k] * cd[k];
            if bias {
                for l in 0..n {
                    let x = ev.slot(d2(k, l));
                    dds += v3(x, 0) * (cd[k] * cd[l]);
                    ddphi += v3(x, 3) * (cd[k] * cd[l]);
                }
            }
        }
        let (sa, a, b, da, db) = rotation_coeffs(phi.norm_squared(), bias);
        let (wcols, al_rel) =
            tabulated_rotation(&phi, &dphi, &ddphi, &phid, (a, b, da, db), n, bias);
        let mut w_rel = zero;
        for k in 0..n {
            w_rel += wcols[k] * cd[k];
        }
        RelMotion {
            s,
            ds,
            rot: rotation_from_coeffs(&phi, sa, a),
            wcols,
            w_rel,
            sd,
            dds,
            al_rel,
        }
    }

    /// A tabulated joint's motion on parent frame `p` from its relative part `rel`
    /// ([`JointDef::tabulated_rel`] with the same `bias`); the columns of a coordinate the
    /// joint does not have are 0.
    #[inline(always)]
    pub fn motion_from_rel(&self, p: &Frame, rel: &RelMotion, bias: bool) -> JointMotion {
        let zero = Vector3::zeros();
        let n = self.sources.len();
        let d = p.rot * rel.s;
        let s_dot = p.rot * rel.sd;
        let w_rel = p.rot * rel.w_rel;
        let rot = p.rot * rel.rot;
        // (R_rel,0 = I for a body in its parent's axes, flagged once by `Joints::new`: the
        // products would only copy the matrix, up to the sign of a zero entry.)
        let (rot, rel_rot) = if self.rel0_identity {
            (rot, rel.rot)
        } else {
            (rot * self.rel0, rel.rot * self.rel0)
        };
        JointMotion {
            frame: Frame {
                x: p.x + d,
                rot,
                v: p.v + p.w.cross(&d) + s_dot,
                w: p.w + w_rel,
            },
            rel: rel_rot,
            d,
            s_dot,
            cols: [
                (p.rot * rel.ds[0], p.rot * rel.wcols[0]),
                if n > 1 {
                    (p.rot * rel.ds[1], p.rot * rel.wcols[1])
                } else {
                    (zero, zero)
                },
            ],
            bias_a: if bias { p.rot * rel.dds } else { zero },
            bias_al: if bias {
                p.w.cross(&w_rel) + p.rot * rel.al_rel
            } else {
                zero
            },
        }
    }

    /// Length scale of the joint's own coordinate for the error norm (m per unit of the
    /// coordinate): how far it moves the body's points, with `l` the body's characteristic
    /// length — revolute: distance of the centre of mass from the axis + l; prismatic: 1;
    /// tabulated: |∂s/∂c| + l |∂φ/∂c| at the design pose (1 if that is 0).
    pub fn error_scale(&self, l: f64) -> f64 {
        match self.kind {
            sm::JointKind::Revolute => {
                let e = self.s0 - self.point;
                (e - self.axis * self.axis.dot(&e)).norm() + l
            }
            sm::JointKind::Prismatic | sm::JointKind::Fixed => 1.0,
            sm::JointKind::Tabulated => {
                let Some(k) = self.sources.iter().position(|&s| s == self.body) else {
                    return 1.0;
                };
                let sp = self.spline.as_ref().expect("spline");
                let ev = sp.eval_body(&[0.0, 0.0][..self.sources.len()], self.channel, true);
                let d = &ev.d1[k];
                let ds = Vector3::new(d[0], d[1], d[2]).norm();
                let dp = Vector3::new(d[3], d[4], d[5]).norm();
                let x = ds + l * dp;
                if x > 0.0 { x } else { 1.0 }
            }
        }
    }
}

/// A joint's Jacobian columns per coordinate: (translation of the centre of mass, rotation),
/// global ([`JointMotion::cols`]).
pub type JointCols = [(Vector3<f64>, Vector3<f64>); 2];

/// Kinematics of one tree at one state: every body's frame, its velocity Jacobian J_b (6 × n
/// rows v global, ω body) and its velocity-product acceleration J̇_b ż (same rows), the tree's
/// mass matrix M_z and its Cholesky factor. Storage allocated once ([`TreeKin::new`]).
#[derive(Debug, Clone)]
pub struct TreeKin {
    n: usize,
    /// Per tree body: its frame.
    pub frames: Vec<Frame>,
    /// Per tree body: J̇ ż, linear part global, angular part global (α) — converted to body axes
    /// by [`TreeKin::bias_body`].
    pub(crate) acc: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// J, row-major per body: `jac[(6 b + k) n + c]`.
    pub jac: Vec<f64>,
    /// M_z (lower triangle), then its Cholesky factor L (below the diagonal, row-major n × n)
    /// with Lᵀ in the upper triangle and 1 / L_jj on the diagonal ([`cholesky`]).
    pub(crate) chol: Vec<f64>,
    /// M_b J_b per body (scratch for M_z and the projections), same layout as `jac`.
    pub(crate) mj: Vec<f64>,
    /// Per tree body with mass: M_z's partial sum before that body's terms (`n²` entries at
    /// `lb n²`), kept by the kinematics that can be a base ([`Joints::tree_kinematics_with`]):
    /// a position perturbation restarts M_z's sum at the first body it moves.
    mz_before: Vec<f64>,
    /// Whether `mz_before` holds the partial sums of this kinematics.
    mz_kept: bool,
    /// Per spline group of the tree ([`Tree::groups`]): its evaluation, slot-major with the
    /// stride of its channels ([`sm::TableSpline::eval_slots`]).
    pub(crate) gev: Vec<Vec<f64>>,
    /// Per massless leaf ([`Tree::need_acc`] false; the others' entries are not written): centre
    /// of mass minus the parent's and its joint's columns (global; the angular part 0 for a
    /// prismatic joint), for the projection of its wrench.
    pub(crate) dcols: Vec<(Vector3<f64>, JointCols)>,
    /// Scratch: per column of a body, its J_b and M_b J_b entries (M_z's products).
    gather: Vec<([f64; 6], [f64; 6])>,
    /// Per tree body: its tabulated joint's relative motion ([`JointDef::tabulated_rel`]).
    rel: Vec<Option<RelMotion>>,
}

impl TreeKin {
    /// Storage for `tree`, with J's constant entries: a free root's J_root = I on its six
    /// coordinates and every body's columns of the root's translation ([`Tree::translation_cols`];
    /// [`Joints::tree_kinematics`] does not write them).
    pub fn new(tree: &Tree) -> Self {
        let (nb, n) = (tree.bodies.len(), tree.n_coords());
        let nt = tree.translation_cols();
        debug_assert!(
            tree.jac_cols
                .iter()
                .all(|c| c.iter().take(nt).copied().eq(0..nt))
        );
        let mut jac = vec![0.0; 6 * nb * n];
        for lb in 0..nb {
            let unit = if lb == 0 && tree.root.is_some() {
                6
            } else {
                nt
            };
            for c in 0..unit {
                jac[(6 * lb + c) * n + c] = 1.0;
            }
        }
        Self {
            n,
            frames: vec![Frame::GROUND; nb],
            acc: vec![(Vector3::zeros(), Vector3::zeros()); nb],
            jac,
            chol: vec![0.0; n * n],
            mj: vec![0.0; 6 * nb * n],
            mz_before: vec![0.0; nb * n * n],
            mz_kept: false,
            gev: tree
                .groups
                .iter()
                .map(|g| vec![0.0; sm::SPLINE_SLOTS * g.spline.channels()])
                .collect(),
            gather: vec![([0.0; 6], [0.0; 6]); n],
            dcols: vec![(Vector3::zeros(), [(Vector3::zeros(), Vector3::zeros()); 2]); nb],
            rel: vec![None; nb],
        }
    }

    /// J̇_b ż of tree body `b` in the evaluator's rows: linear global, angular body axes.
    pub fn bias_body(&self, b: usize) -> [f64; 6] {
        let (a, al) = self.acc[b];
        let alb = self.frames[b].rot.transpose() * al;
        [a.x, a.y, a.z, alb.x, alb.y, alb.z]
    }

    /// Row `row` of tree body `lb`'s projection weights: (M_b J_b)ᵀ's row, or J_b's for a
    /// massless body (whose evaluator row holds the wrench).
    #[inline]
    pub fn projection_row(&self, lb: usize, row: usize, massless: bool) -> &[f64] {
        let n = self.n;
        let src = if massless { &self.jac } else { &self.mj };
        &src[(6 * lb + row) * n..(6 * lb + row + 1) * n]
    }

    /// Body `b`'s velocity (v global, ω body) in the evaluator's layout.
    pub fn velocity_body(&self, b: usize) -> [f64; 6] {
        let f = &self.frames[b];
        let wb = f.rot.transpose() * f.w;
        [f.v.x, f.v.y, f.v.z, wb.x, wb.y, wb.z]
    }
}

/// A perturbation of one tree coordinate for the differenced terms of the linearisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Perturb {
    /// None.
    None,
    /// Position coordinate `c` by δ (a root's translation, global; a root's rotation, body axes;
    /// a joint coordinate).
    Position(usize, f64),
    /// Velocity coordinate `c` by δ.
    Velocity(usize, f64),
}

impl Joints {
    /// Builds the joints of `m` (validated) for the compiled bodies' design poses `poses`
    /// (position, orientation per body).
    pub fn new(m: &sm::Model, poses: &[(Vector3<f64>, Matrix3<f64>)]) -> Result<Self, String> {
        let nb = m.bodies.len();
        if m.bodies.iter().all(|b| b.joint.is_none()) {
            return Ok(Self::default());
        }
        let mut defs: Vec<Option<JointDef>> = vec![None; nb];
        // Per tabulated body: its table and entry.
        let mut tab: Vec<Option<(Arc<sm::KinematicTable>, String)>> = vec![None; nb];
        for (i, b) in m.bodies.iter().enumerate() {
            let Some(j) = &b.joint else { continue };
            let parent = if m.is_ground(&j.parent) {
                None
            } else {
                Some(m.body_index(&j.parent).ok_or_else(|| {
                    format!("body '{}': unknown joint parent '{}'", b.name, j.parent)
                })?)
            };
            let (xp, rp) = match parent {
                None => (Vector3::zeros(), Matrix3::identity()),
                Some(p) => poses[p],
            };
            let (xb, rb) = poses[i];
            let (axis, point, spline, sources) = if j.kind == sm::JointKind::Tabulated {
                let table = j.kin_table.as_ref().ok_or_else(|| {
                    format!("body '{}': tabulated joint without a loaded table", b.name)
                })?;
                let entry = j.entry.as_deref().unwrap_or(&b.name);
                let spline = table
                    .spline(entry)
                    .ok_or_else(|| format!("body '{}': the table has no body '{entry}'", b.name))?;
                let sources = j
                    .coordinates
                    .iter()
                    .map(|c| {
                        if c == sm::SELF_COORDINATE {
                            Ok(i)
                        } else {
                            m.body_index(c).ok_or_else(|| {
                                format!("body '{}': unknown joint coordinate '{c}'", b.name)
                            })
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if sources.len() != spline.dims() {
                    return Err(format!(
                        "body '{}': {} coordinates for a table with {} axes",
                        b.name,
                        sources.len(),
                        spline.dims()
                    ));
                }
                tab[i] = Some((table.clone(), entry.to_string()));
                (
                    Vector3::zeros(),
                    Vector3::zeros(),
                    Some(Arc::new(spline)),
                    sources,
                )
            } else if j.kind == sm::JointKind::Fixed {
                // No coordinate: the pose map of a prismatic joint at z = 0, without an axis.
                (Vector3::zeros(), Vector3::zeros(), None, Vec::new())
            } else {
                let a = Vector3::from(j.axis.unwrap_or([0.0; 3]));
                if a.norm().is_nan() || a.norm() <= 0.0 {
                    return Err(format!("body '{}': joint axis is zero", b.name));
                }
                (
                    rp.transpose() * a.normalize(),
                    rp.transpose() * (Vector3::from(j.point.unwrap_or([0.0; 3])) - xp),
                    None,
                    vec![i],
                )
            };
            let own = j.has_own_coordinate();
            let rel0 = rp.transpose() * rb;
            defs[i] = Some(JointDef {
                body: i,
                parent,
                kind: j.kind,
                axis,
                point,
                s0: rp.transpose() * (xb - xp),
                rel0,
                rel0_identity: rel0 == Matrix3::identity(),
                z0: if own { j.z0 } else { 0.0 },
                zd0: if own { j.zd0 } else { 0.0 },
                spline,
                channel: 0,
                sources,
                own,
                massless: b.mass == 0.0,
            });
        }
        // Spline groups: the tabulated bodies on the same grid and coordinates share one
        // spline ([`SplineGroup`]), the members with velocity-product terms first.
        let has_children: Vec<bool> = (0..nb)
            .map(|i| defs.iter().flatten().any(|d| d.parent == Some(i)))
            .collect();
        let mut grouped: Vec<Vec<usize>> = Vec::new();
        for i in 0..nb {
            let Some((ti, _)) = &tab[i] else { continue };
            let src = &defs[i].as_ref().expect("tabulated").sources;
            let same = |g: &&mut Vec<usize>| {
                let j = g[0];
                defs[j].as_ref().is_some_and(|d| &d.sources == src)
                    && tab[j].as_ref().is_some_and(|(tj, _)| tj.same_grid(ti))
            };
            match grouped.iter_mut().find(same) {
                Some(g) => g.push(i),
                None => grouped.push(vec![i]),
            }
        }
        let mut group_splines = Vec::with_capacity(grouped.len());
        for mut g in grouped {
            g.sort_by_key(|&i| defs[i].as_ref().is_some_and(|d| d.massless) && !has_children[i]);
            let pairs: Vec<(&sm::KinematicTable, &str)> = g
                .iter()
                .map(|&i| {
                    let (t, e) = tab[i].as_ref().expect("tabulated");
                    (&**t, e.as_str())
                })
                .collect();
            let sp = Arc::new(pairs[0].0.spline_of(&pairs).ok_or_else(|| {
                format!(
                    "body '{}': the table's bodies do not share a grid",
                    m.bodies[g[0]].name
                )
            })?);
            for (k, &i) in g.iter().enumerate() {
                let d = defs[i].as_mut().expect("tabulated");
                d.spline = Some(sp.clone());
                d.channel = 6 * k;
            }
            group_splines.push((g, sp));
        }
        // Topological order of the jointed bodies and the root of each.
        let root_of = |mut i: usize| -> Result<Option<usize>, String> {
            for _ in 0..=nb {
                match &defs[i] {
                    None => return Ok(Some(i)),
                    Some(d) => match d.parent {
                        None => return Ok(None),
                        Some(p) => i = p,
                    },
                }
            }
            Err(format!(
                "body '{}': the joint parents form a cycle",
                m.bodies[i].name
            ))
        };
        let depth = |mut i: usize| {
            let mut k = 0;
            while let Some(Some(p)) = defs[i].as_ref().map(|d| d.parent) {
                if defs[p].is_none() {
                    break;
                }
                i = p;
                k += 1;
            }
            k
        };
        let mut order: Vec<usize> = (0..nb).filter(|&i| defs[i].is_some()).collect();
        for &i in &order {
            root_of(i)?;
        }
        order.sort_by_key(|&i| (depth(i), i));
        // Trees keyed by root (None = ground), in order of first appearance.
        let mut keys: Vec<Option<usize>> = Vec::new();
        for &i in &order {
            let r = root_of(i)?;
            if !keys.contains(&r) {
                keys.push(r);
            }
        }
        let mut tree_of = vec![None; nb];
        let mut trees = Vec::with_capacity(keys.len());
        for (t, &root) in keys.iter().enumerate() {
            let mut bodies: Vec<usize> = root.into_iter().collect();
            let mut coords: Vec<usize> = root.map_or(Vec::new(), |r| (6 * r..6 * r + 6).collect());
            let mut joint_coord = vec![None; bodies.len()];
            for &i in &order {
                if root_of(i)? == root {
                    bodies.push(i);
                    if defs[i].as_ref().is_some_and(|d| d.own) {
                        joint_coord.push(Some(coords.len()));
                        coords.push(6 * i);
                    } else {
                        joint_coord.push(None);
                    }
                }
            }
            let mut deps = Vec::with_capacity(bodies.len());
            for &b in &bodies {
                let mut dep = Vec::new();
                if let Some(d) = &defs[b] {
                    for &src in &d.sources {
                        let c = bodies
                            .iter()
                            .position(|&x| x == src)
                            .and_then(|l| joint_coord[l])
                            .ok_or_else(|| {
                                format!(
                                    "body '{}': joint coordinate of '{}' is not a coordinate of the same joint tree",
                                    m.bodies[b].name, m.bodies[src].name
                                )
                            })?;
                        dep.push(c);
                    }
                }
                deps.push(dep);
            }
            let massless: Vec<bool> = bodies
                .iter()
                .map(|&b| defs[b].as_ref().is_some_and(|d| d.massless))
                .collect();
            let parent_local: Vec<Option<usize>> = bodies
                .iter()
                .map(|&b| {
                    defs[b]
                        .as_ref()
                        .and_then(|d| d.parent)
                        .and_then(|p| bodies.iter().position(|&x| x == p))
                })
                .collect();
            for (local, &b) in bodies.iter().enumerate() {
                tree_of[b] = Some((t, local));
            }
            let mut jac_cols: Vec<Vec<usize>> = Vec::with_capacity(bodies.len());
            for (lb, &b) in bodies.iter().enumerate() {
                let mut cols: Vec<usize> = match (&defs[b], parent_local[lb]) {
                    (None, _) => (0..6).collect(),
                    (Some(_), Some(pl)) => jac_cols[pl].clone(),
                    (Some(_), None) => Vec::new(),
                };
                cols.extend(&deps[lb]);
                cols.sort_unstable();
                cols.dedup();
                jac_cols.push(cols);
            }
            let shared: Vec<[bool; 2]> = (0..bodies.len())
                .map(|lb| {
                    std::array::from_fn(|k| match (deps[lb].get(k), parent_local[lb]) {
                        (Some(ci), Some(pl)) => jac_cols[pl].binary_search(ci).is_ok(),
                        _ => false,
                    })
                })
                .collect();
            let need_acc: Vec<bool> = (0..bodies.len())
                .map(|lb| !massless[lb] || parent_local.contains(&Some(lb)))
                .collect();
            let local = |i: usize| bodies.iter().position(|&x| x == i);
            let mut groups = Vec::new();
            let mut group_of = vec![None; bodies.len()];
            for (members, sp) in &group_splines {
                let Some(l0) = local(members[0]) else {
                    continue;
                };
                let mut second = 0;
                for (k, &i) in members.iter().enumerate() {
                    let lb = local(i).expect("a group lies in one tree");
                    group_of[lb] = Some((groups.len(), 6 * k));
                    if need_acc[lb] {
                        second = 6 * (k + 1);
                    }
                }
                groups.push(SplineGroup {
                    spline: sp.clone(),
                    sources: defs[members[0]]
                        .as_ref()
                        .expect("tabulated")
                        .sources
                        .clone(),
                    deps: deps[l0].clone(),
                    second,
                });
            }
            let mut coord_blocks: Vec<usize> = coords.iter().map(|&vi| vi / 6).collect();
            coord_blocks.sort_unstable();
            coord_blocks.dedup();
            trees.push(Tree {
                root,
                bodies,
                parent_local,
                coords,
                joint_coord,
                deps,
                massless,
                coord_blocks,
                jac_cols,
                shared,
                need_acc,
                groups,
                group_of,
            });
        }
        Ok(Self {
            defs,
            order,
            trees,
            tree_of,
        })
    }

    /// Checks that every tree's mass matrix M_z is positive definite at the state (r, v) (a
    /// tree of massless followers on a coordinate, or a joint moving no mass, is not): the
    /// error names the tree and the coordinate.
    pub fn check_mass(
        &self,
        model: &crate::CompiledModel,
        r: &[f64],
        v: &[f64],
    ) -> Result<(), String> {
        for (t, tree) in self.trees.iter().enumerate() {
            let mut k = TreeKin::new(tree);
            self.tree_kinematics(model, t, r, v, Perturb::None, &mut k)?;
        }
        Ok(())
    }

    /// One message per tabulated joint coordinate evaluated outside its table's grid since the
    /// model was compiled (or the splines' excursions were reset): the spline continued
    /// linearly there ([`sm::TableSpline::excursion`]); the run reports them as warnings.
    pub fn table_excursions(&self, model: &crate::CompiledModel) -> Vec<String> {
        let mut out = Vec::new();
        for d in self.defs.iter().flatten() {
            let Some(sp) = &d.spline else { continue };
            for (k, &src) in d.sources.iter().enumerate() {
                let Some((lo, hi)) = sp.excursion(k) else {
                    continue;
                };
                let (a, b) = sp.range(k);
                let what = if src == d.body {
                    "its own coordinate".to_string()
                } else {
                    format!("the coordinate of '{}'", model.bodies[src].name)
                };
                let reached = match (lo.is_finite(), hi.is_finite()) {
                    (true, true) => format!("{lo} and {hi}"),
                    (true, false) => format!("{lo}"),
                    _ => format!("{hi}"),
                };
                out.push(format!(
                    "body '{}': {what} (table axis {}) left the table's range [{a}, {b}] (reached {reached}); the pose was extended linearly beyond it — extend the table's grid",
                    model.bodies[d.body].name,
                    k + 1
                ));
            }
        }
        out
    }

    /// Whether the model has no joints (every body free).
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// The first jointed body, for the errors of features that do not support joints.
    pub fn first_jointed(&self) -> Option<usize> {
        self.order.first().copied()
    }

    /// Writes the initial joint coordinates and rates into the (reduced) state.
    pub fn initial_state(&self, r: &mut [f64], v: &mut [f64]) {
        for d in self.defs.iter().flatten() {
            let b = d.body;
            r[7 * b..7 * b + 7].fill(0.0);
            r[7 * b] = d.z0;
            v[6 * b..6 * b + 6].fill(0.0);
            v[6 * b] = d.zd0;
        }
        // (A follower's z0, zd0 are 0: its slots are padding.)
    }

    /// The full poses and velocities of all bodies (the evaluator's layout) from a state in
    /// joint coordinates; free bodies and element states are copied. `r_full`, `v_full` have
    /// the lengths of `r`, `v`. No allocation.
    pub fn expand(&self, r: &[f64], v: &[f64], r_full: &mut [f64], v_full: &mut [f64]) {
        r_full.copy_from_slice(r);
        v_full.copy_from_slice(v);
        for &b in &self.order {
            let d = self.defs[b].as_ref().expect("jointed");
            let p = match d.parent {
                None => Frame::GROUND,
                Some(p) => Frame::of_free(&r_full[7 * p..7 * p + 7], &v_full[6 * p..6 * p + 6]),
            };
            let (c, cd) = d.coordinates(r, v);
            // The frame alone: no second derivatives, no velocity-product terms.
            let ev = d.pose_eval(c, false);
            let f = d
                .motion_with(
                    &p,
                    c,
                    cd,
                    ev.as_ref().map(|e| PoseView::new(e, 6, 0)),
                    false,
                )
                .frame;
            write_frame(
                &f,
                &mut r_full[7 * b..7 * b + 7],
                &mut v_full[6 * b..6 * b + 6],
            );
        }
    }

    /// Kinematics of tree `t` at the reduced state (r, v) with one coordinate perturbed:
    /// frames, J, J̇ ż and (if `mass`) M_z factored, into `out`. No allocation.
    pub fn tree_kinematics(
        &self,
        model: &crate::CompiledModel,
        t: usize,
        r: &[f64],
        v: &[f64],
        pert: Perturb,
        out: &mut TreeKin,
    ) -> Result<(), String> {
        self.tree_kinematics_with(model, t, r, v, pert, None, out)
    }

    /// [`Joints::tree_kinematics`] reusing the kinematics `base` of the unperturbed state (r, v):
    /// its spline evaluations wherever the perturbation leaves a joint's coordinates alone and,
    /// for a velocity perturbation (which changes neither J nor M_z), its M_b J_b and factor of
    /// M_z (then not formed in `out`: [`Joints::project_leaves_cols`] takes them from `base`),
    /// and the frames and J̇_b ż of the bodies the perturbation leaves alone are written only
    /// where a child reads them (they are base's). For a position perturbation, M_z's sum
    /// restarts from base's partial sum before the first body with mass the perturbation moves
    /// (the same bits as formed from scratch; base's factor if it moves none).
    #[allow(clippy::too_many_arguments)] // the arguments of `tree_kinematics` plus the base
    pub fn tree_kinematics_with(
        &self,
        model: &crate::CompiledModel,
        t: usize,
        r: &[f64],
        v: &[f64],
        pert: Perturb,
        base: Option<&TreeKin>,
        out: &mut TreeKin,
    ) -> Result<(), String> {
        self.tree_kinematics_rows(model, t, r, v, pert, base, true, out)
            .map_err(|k| self.singular_message(model, t, k))
    }

    /// The message of a singular M_z of tree `t` at tree coordinate `k`.
    pub fn singular_message(&self, model: &crate::CompiledModel, t: usize, k: usize) -> String {
        let tree = &self.trees[t];
        let root = tree.root.map_or(model.ground_name.as_str(), |r| {
            model.bodies[r].name.as_str()
        });
        format!(
            "joint tree of '{root}': the mass matrix M_z is singular at the coordinate of body '{}' (a coordinate that moves no mass: massless followers alone carry no inertia; give a body on that coordinate a mass)",
            model.bodies[tree.coords[k] / 6].name
        )
    }

    /// [`Joints::tree_kinematics_with`]; without `all_rows` the J_b rows of the massless
    /// leaves ([`Tree::need_acc`] false) are not formed (the evaluation path's projection,
    /// [`JointWork::project_q`], moves their wrenches onto the parents instead) and keep what
    /// they held, and the relative motions are not kept (`out` then cannot be the base of
    /// perturbed kinematics).
    /// `Err(k)`: M_z is singular at tree coordinate k ([`Joints::singular_message`]).
    #[allow(clippy::too_many_arguments)] // the arguments of `tree_kinematics_with` plus one
    pub(crate) fn tree_kinematics_rows(
        &self,
        model: &crate::CompiledModel,
        t: usize,
        r: &[f64],
        v: &[f64],
        pert: Perturb,
        base: Option<&TreeKin>,
        all_rows: bool,
        out: &mut TreeKin,
    ) -> Result<(), usize> {
        let tree = &self.trees[t];
        let n = tree.n_coords();
        let (dp, dv) = match pert {
            Perturb::Position(c, d) => ((c, d), (usize::MAX, 0.0)),
            Perturb::Velocity(c, d) => ((usize::MAX, 0.0), (c, d)),
            Perturb::None => ((usize::MAX, 0.0), (usize::MAX, 0.0)),
        };
        // With `base`: a velocity perturbation leaves J as it is (not formed), and a body
        // whose pose does not depend on the perturbed coordinate keeps base's kinematics.
        let velocity_only = base.is_some() && matches!(pert, Perturb::Velocity(..));
        let perturbed = match (base, pert) {
            (Some(_), Perturb::Position(c, _) | Perturb::Velocity(c, _)) => c,
            _ => usize::MAX,
        };
        // The spline groups: evaluated where the coordinates moved (or without a base);
        // base's evaluation where a member recomputes its relative motion at the same
        // coordinates (a velocity perturbation of a coordinate of the group); else not read.
        // One basis scratch for the tree's groups (filled in place, cleared once if used).
        let mut scratch: Option<sm::SplineBasis> = None;
        for (g, grp) in tree.groups.iter().enumerate() {
            let moved = grp.deps.contains(&dp.0);
            match base {
                Some(bk) if !moved => {
                    if grp.deps.contains(&perturbed) {
                        out.gev[g].copy_from_slice(&bk.gev[g]);
                    }
                }
                _ => {
                    let mut c = grp.coordinates(r);
                    for (ck, &ci) in c.iter_mut().zip(&grp.deps) {
                        if ci == dp.0 {
                            *ck += dp.1;
                        }
                    }
                    let bs = scratch.get_or_insert_with(Default::default);
                    grp.eval_into(c, bs, &mut out.gev[g]);
                }
            }
        }
        let zero = Vector3::zeros();
        for (lb, &b) in tree.bodies.iter().enumerate() {
            let need_acc = tree.need_acc[lb];
            if velocity_only && !need_acc {
                // Only J̇ ż is read from a velocity perturbation.
                continue;
            }
            let rows = !velocity_only && (all_rows || need_acc);
            // The rows of the bodies before this one (its parent's among them) and its own.
            let (jac_done, jac_rest) = out.jac.split_at_mut(6 * lb * n);
            let jb = &mut jac_rest[..6 * n];
            if let Some(bk) = base
                && perturbed != usize::MAX
                && self.defs[b].is_some()
                && tree.jac_cols[lb].binary_search(&perturbed).is_err()
            {
                // A velocity perturbation's J̇_b ż are read where they moved alone (the others'
                // differences are 0): base's frame and J̇_b ż are copied only where a child's
                // motion reads them (children come after their parent).
                if velocity_only && !tree.parent_local[lb + 1..].contains(&Some(lb)) {
                    continue;
                }
                out.frames[lb] = bk.frames[lb];
                out.acc[lb] = bk.acc[lb];
                out.dcols[lb] = bk.dcols[lb];
                if rows {
                    jb.copy_from_slice(&bk.jac[6 * lb * n..6 * (lb + 1) * n]);
                }
                continue;
            }
            let Some(d) = self.defs[b].as_ref() else {
                // The free root: J = I on its six coordinates, J̇ = 0.
                let mut rb = [0.0; 7];
                rb.copy_from_slice(&r[7 * b..7 * b + 7]);
                let mut vb = [0.0; 6];
                vb.copy_from_slice(&v[6 * b..6 * b + 6]);
                if dv.0 < 6 {
                    vb[dv.0] += dv.1;
                }
                let f = &mut out.frames[lb];
                *f = Frame::of_free(&rb, &vb);
                if dp.0 < 3 {
                    f.x[dp.0] += dp.1;
                } else if dp.0 < 6 {
                    let mut e = Vector3::zeros();
                    e[dp.0 - 3] = 1.0;
                    f.rot *= axis_rotation(&e, dp.1);
                    f.w = f.rot * Vector3::new(vb[3], vb[4], vb[5]);
                }
                out.acc[lb] = (zero, zero);
                // (Its J rows are constant: TreeKin::new.)
                continue;
            };
            let (frames_done, frames_rest) = out.frames.split_at_mut(lb);
            let p = tree.parent_local[lb].map_or(&Frame::GROUND, |pl| &frames_done[pl]);
            let deps = &tree.deps[lb];
            let (mut c, mut cd) = d.coordinates(r, v);
            if pert != Perturb::None {
                for (k, &ci) in deps.iter().enumerate() {
                    if dp.0 == ci {
                        c[k] += dp.1;
                    }
                    if dv.0 == ci {
                        cd[k] += dv.1;
                    }
                }
            }
            let jm = match tree.group_of[lb] {
                Some((g, off)) => {
                    // The relative motion depends on the joint's coordinates and rates
                    // alone: base's where the perturbation leaves both alone.
                    let rel = match base.and_then(|bk| bk.rel[lb].as_ref()) {
                        Some(r) if !deps.contains(&perturbed) => *r,
                        _ => {
                            let buf = &out.gev[g];
                            let ev = PoseView::new(buf, buf.len() / sm::SPLINE_SLOTS, off);
                            d.tabulated_rel(&ev, cd, need_acc)
                        }
                    };
                    if all_rows {
                        // (Read only as the base of perturbed kinematics.)
                        out.rel[lb] = Some(rel);
                    }
                    d.motion_from_rel(p, &rel, need_acc)
                }
                None => d.motion_with(p, c, cd, None, need_acc),
            };
            // J̇ ż, recursively (module docs): α_b = α_p + (the joint's term: ω_p × u ż
            // for a revolute joint), a_b = a_p + α_p × d + ω_p × (ω_p × d) + 2 ω_p × ṡ
            // + (u × (u × e) ż², or the pose map's second derivatives).
            // (Left 0 where nothing reads it, [`Tree::need_acc`].)
            out.acc[lb] = if need_acc {
                let (ap, alp) = tree.parent_local[lb].map_or((zero, zero), |pl| out.acc[pl]);
                let mut al = alp;
                let mut a = ap
                    + alp.cross(&jm.d)
                    + p.w.cross(&p.w.cross(&jm.d))
                    + 2.0 * p.w.cross(&jm.s_dot);
                if d.kind != sm::JointKind::Prismatic {
                    al += jm.bias_al;
                    a += jm.bias_a;
                }
                (a, al)
            } else {
                (zero, zero)
            };
            // (A prismatic joint's rotation column is 0: `JointDef::motion_with`.)
            let cols = &jm.cols;
            if !need_acc {
                out.dcols[lb] = (jm.d, *cols);
            }
            let f = &mut frames_rest[0];
            // (Field by field: the whole frame, 144 bytes, would be copied by a call of memcpy.)
            f.x = jm.frame.x;
            f.rot = jm.frame.rot;
            f.v = jm.frame.v;
            f.w = jm.frame.w;
            if !rows {
                continue;
            }
            let rbt = f.rot.transpose();
            let mut jr = rows6(jb, n);
            // Columns of the parent's coordinates: v_b = v_p + ω_p × d, ω_b = R_bᵀ ω_p (but the
            // root's translation columns: constant, TreeKin::new).
            if let Some(pl) = tree.parent_local[lb] {
                let jp = &jac_done[6 * pl * n..6 * (pl + 1) * n];
                let mut put = |col: usize, (vb, wb): (Vector3<f64>, Vector3<f64>)| {
                    for (row, x) in jr.iter_mut().zip([vb.x, vb.y, vb.z, wb.x, wb.y, wb.z]) {
                        row[col] = x;
                    }
                };
                if self.defs[tree.bodies[pl]].is_none() {
                    // A free root's J is the identity on its six coordinates: for its rotation
                    // column 3 + k, ω_p = R_p e_k is R_p's column k, and ω_b = R_bᵀ R_p e_k
                    // = R_relᵀ e_k is R_rel's row k (in exact arithmetic: R_b is the rounded
                    // R_p R_rel; no product per column).
                    for k in 0..3 {
                        let wp: Vector3<f64> = p.rot.column(k).into_owned();
                        put(3 + k, (zero + wp.cross(&jm.d), jm.rel.row(k).transpose()));
                    }
                } else {
                    for &col in &tree.jac_cols[pl][tree.translation_cols()..] {
                        let g: [f64; 6] = std::array::from_fn(|k| jp[k * n + col]);
                        let wp = p.rot * Vector3::new(g[3], g[4], g[5]);
                        if wp == zero && g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0 {
                            put(col, (zero, zero));
                        } else {
                            let vb = Vector3::new(g[0], g[1], g[2]) + wp.cross(&jm.d);
                            put(col, (vb, rbt * wp));
                        }
                    }
                }
            }
            // The joint's columns (own and input coordinates), added to the parent's where
            // the parent moves with the coordinate too (a follower on its carrier), else to 0.
            for ((&ci, (vc, wg)), &shared) in deps.iter().zip(cols).zip(&tree.shared[lb]) {
                let wc = rbt * wg;
                for (row, x) in jr.iter_mut().zip([vc.x, vc.y, vc.z, wc.x, wc.y, wc.z]) {
                    let x0 = if shared { row[ci] } else { 0.0 };
                    row[ci] = x0 + x;
                }
            }
        }
        // (`out` holds M_z's partial sums only as the unperturbed kinematics below.)
        out.mz_kept = false;
        if velocity_only {
            return Ok(());
        }
        // M_b J_b and M_z = Σ J_bᵀ M_b J_b (summed body by body, each entry in the order of
        // the rows), then its Cholesky factor. A body without mass and inertia has M_b J_b = 0
        // (its weights are J_b, [`TreeKin::projection_row`]) and adds nothing: skipped.
        // Only J_b's structurally non-zero columns (the other entries of M_b J_b stay 0, and
        // the pairs left out would add exact zeros); of those, the root's translation columns
        // 0..nt (J_b's e_c: M_b J_b's m e_c) by their one non-zero product. (Every sum starts
        // from +0 and so never is −0: adding the exact zeros left out changes nothing.)
        // With `base` (a position perturbation), the bodies before the first body with mass
        // whose J_b the perturbation moves ([`Tree::jac_cols`]) add base's terms: the sum
        // restarts from base's partial sum before that body ([`TreeKin::mz_before`]) with their
        // M_b J_b copied — the same operations on the same numbers as a formation from scratch,
        // so the same bits; without such a body M_z and its factor are base's.
        let nt = tree.translation_cols();
        let nn = n * n;
        let keep = all_rows && pert == Perturb::None;
        let mut from = 0;
        match base {
            Some(bk) if bk.mz_kept && perturbed != usize::MAX => {
                let moved = (0..tree.bodies.len()).find(|&lb| {
                    !tree.massless[lb] && tree.jac_cols[lb].binary_search(&perturbed).is_ok()
                });
                for lb in 0..moved.unwrap_or(tree.bodies.len()) {
                    if !tree.massless[lb] {
                        let blk = 6 * lb * n..6 * (lb + 1) * n;
                        out.mj[blk.clone()].copy_from_slice(&bk.mj[blk]);
                    }
                }
                let Some(lb) = moved else {
                    out.chol.copy_from_slice(&bk.chol);
                    return Ok(());
                };
                out.chol
                    .copy_from_slice(&bk.mz_before[lb * nn..(lb + 1) * nn]);
                from = lb;
            }
            _ => out.chol.fill(0.0),
        }
        for (lb, &b) in tree.bodies.iter().enumerate().skip(from) {
            // (A massless body has no inertia either: validation.)
            if tree.massless[lb] {
                continue;
            }
            if keep {
                out.mz_before[lb * nn..(lb + 1) * nn].copy_from_slice(&out.chol);
            }
            let body = &model.bodies[b];
            let cols = &tree.jac_cols[lb][nt..];
            let mut jrows = out.jac[6 * lb * n..6 * (lb + 1) * n].chunks_exact(n);
            let jb: [&[f64]; 6] = std::array::from_fn(|_| jrows.next().expect("six rows"));
            let mut mjb = rows6(&mut out.mj[6 * lb * n..6 * (lb + 1) * n], n);
            // The translation columns: M_b J_b's m e_c (its zeros never written), M_z's m I.
            for (c, row) in mjb[..nt].iter_mut().enumerate() {
                row[c] = body.mass;
                out.chol[c * n + c] += body.mass;
            }
            // The other columns gathered (J_b and M_b J_b, six rows each) for the products.
            for (&col, gi) in cols.iter().zip(&mut out.gather) {
                let g: [f64; 6] = std::array::from_fn(|k| jb[k][col]);
                let w = body.inertia * Vector3::new(g[3], g[4], g[5]);
                let m = [
                    body.mass * g[0],
                    body.mass * g[1],
                    body.mass * g[2],
                    w[0],
                    w[1],
                    w[2],
                ];
                for (row, mk) in mjb.iter_mut().zip(m) {
                    row[col] = mk;
                }
                *gi = (g, m);
            }
            let gather = &out.gather[..cols.len()];
            for (ii, &i) in cols.iter().enumerate() {
                let ji = &gather[ii].0;
                let row = &mut out.chol[i * n..(i + 1) * n];
                // The translation columns: J_b's e_c there picks J_b's entry (c, i).
                for (r, j) in row[..nt].iter_mut().zip(&ji[..nt]) {
                    *r += j * body.mass;
                }
                // Two entries at a time (two lanes), each sum in the order of the rows k.
                let mut pairs = cols[..=ii].chunks_exact(2).zip(gather.chunks_exact(2));
                for (jp, gp) in &mut pairs {
                    let (m0, m1) = (&gp[0].1, &gp[1].1);
                    let mut s = [row[jp[0]], row[jp[1]]];
                    for k in 0..6 {
                        s[0] += ji[k] * m0[k];
                        s[1] += ji[k] * m1[k];
                    }
                    row[jp[0]] = s[0];
                    row[jp[1]] = s[1];
                }
                if ii % 2 == 0 {
                    let mjj = &gather[ii].1;
                    let mut s = row[i];
                    for k in 0..6 {
                        s += ji[k] * mjj[k];
                    }
                    row[i] = s;
                }
            }
        }
        cholesky(&mut out.chol, n)?;
        out.mz_kept = keep;
        Ok(())
    }

    /// Σ_b J_bᵀ M_b (x_b − bias·J̇_b ż) for body-row vectors x read through `x_of(b)` (the
    /// evaluator's rows of body b), into `rhs` (length n); `bias` = 0 or 1 — without the J_b rows
    /// of the massless leaves ([`Tree::need_acc`] false; [`Joints::tree_kinematics_rows`] does
    /// not form them on the evaluation path): a leaf's wrench W_b (its
    /// evaluator row) enters its own joint's columns, (∂v_b/∂c_k)·F + (∂ω_b/∂c_k)·M, and is moved
    /// onto its parent (F, M + d × F, the parent's rows taking it through J_p) — the same
    /// J_bᵀ W_b, summed in another order. `acc` holds one wrench per tree body (scratch).
    pub fn project_rhs_leaves(
        tree: &Tree,
        k: &TreeKin,
        bias: f64,
        x_of: impl Fn(usize) -> [f64; 6],
        rhs: &mut [f64],
        acc: &mut [(Vector3<f64>, Vector3<f64>)],
    ) {
        let bias = (bias != 0.0).then_some(k);
        Self::project_leaves_cols::<1>(tree, k, bias, |b| Some([x_of(b)]), rhs, acc);
    }

    /// [`Joints::project_rhs_leaves`] for `M` body-row vectors at once (the columns of a 6 × M
    /// block, `x_of(b)[col]`, `None` where body b has none) with the weights J_bᵀ M_b and the
    /// leaves' frames of `k` and the bias J̇_b ż of `bias` (if given; kinematics of the same
    /// positions): `rhs[M c + col]` (n × M, row-major), `acc` at least M per tree body. For
    /// M = 1 the same operations in the same order as the single-vector projection.
    pub fn project_leaves_cols<const M: usize>(
        tree: &Tree,
        k: &TreeKin,
        bias: Option<&TreeKin>,
        x_of: impl Fn(usize) -> Option<[[f64; 6]; M]>,
        rhs: &mut [f64],
        acc: &mut [(Vector3<f64>, Vector3<f64>)],
    ) {
        let n = k.n;
        let rhs = &mut rhs.as_chunks_mut::<M>().0[..n];
        rhs.fill([0.0; M]);
        let acc = &mut acc[..tree.bodies.len() * M];
        acc.fill((Vector3::zeros(), Vector3::zeros()));
        for (lb, &b) in tree.bodies.iter().enumerate() {
            if tree.need_acc[lb] {
                continue;
            }
            let Some(xs) = x_of(b) else { continue };
            let (d, cols) = &k.dcols[lb];
            for (col, x) in xs.iter().enumerate() {
                let fg = Vector3::new(x[0], x[1], x[2]);
                let mg = k.frames[lb].rot * Vector3::new(x[3], x[4], x[5]);
                for (&ci, (vc, wg)) in tree.deps[lb].iter().zip(cols) {
                    rhs[ci][col] += vc.dot(&fg) + wg.dot(&mg);
                }
                if let Some(pl) = tree.parent_local[lb] {
                    let (f, m) = &mut acc[M * pl + col];
                    *f += fg;
                    *m += mg + d.cross(&fg);
                }
            }
        }
        let nt = tree.translation_cols();
        for (lb, &b) in tree.bodies.iter().enumerate() {
            if !tree.need_acc[lb] {
                continue;
            }
            let massless = tree.massless[lb];
            // The structural columns past the root's translation ([`Joints::add_row`]).
            let cols = &tree.jac_cols[lb][nt..];
            let jac = &k.jac[6 * lb * n..6 * (lb + 1) * n];
            if let Some(xs) = x_of(b) {
                let bb = match bias {
                    Some(kb) if !massless => kb.bias_body(lb),
                    _ => [0.0; 6],
                };
                // The weights: (M_b J_b)'s rows, or J_b's for a massless body
                // ([`TreeKin::projection_row`]).
                let weights = if massless {
                    jac
                } else {
                    &k.mj[6 * lb * n..6 * (lb + 1) * n]
                };
                for (row, mj) in weights.chunks_exact(n).enumerate() {
                    let y: [f64; M] = std::array::from_fn(|col| xs[col][row] - bb[row]);
                    if y.iter().all(|&y| y == 0.0) {
                        continue;
                    }
                    Self::add_row(row < nt, row, cols, mj, &y, rhs);
                }
            }
            // The leaves' wrenches on this body: through J_b (global force, body-axes moment).
            let mut w = [[0.0; M]; 6];
            let mut any = false;
            for col in 0..M {
                let (f, m) = acc[M * lb + col];
                if f == Vector3::zeros() && m == Vector3::zeros() {
                    continue;
                }
                any = true;
                let mb = k.frames[lb].rot.transpose() * m;
                for (r, x) in [f.x, f.y, f.z, mb.x, mb.y, mb.z].into_iter().enumerate() {
                    w[r][col] = x;
                }
            }
            if !any {
                continue;
            }
            for (row, (y, jr)) in w.iter().zip(jac.chunks_exact(n)).enumerate() {
                Self::add_row(row < nt, row, cols, jr, y, rhs);
            }
        }
    }

    /// `rhs[c][col] += weights[c] y[col]` over a tree body's structural columns c, `weights`
    /// its row `row` of J_b or M_b J_b (length n) and `cols` its structural columns past the
    /// root's translation ([`Tree::jac_cols`]). In the root's translation columns that row is
    /// δ_(row,c) (J_b) or m δ_(row,c) (M_b J_b, [`Joints::tree_kinematics`]): with
    /// `translation` (row < 3 of a free root's tree) the one non-zero product alone, else none
    /// (`rhs` starts from +0, the exact zeros left out change nothing).
    #[inline(always)]
    fn add_row<const M: usize>(
        translation: bool,
        row: usize,
        cols: &[usize],
        weights: &[f64],
        y: &[f64; M],
        rhs: &mut [[f64; M]],
    ) {
        let weights = &weights[..rhs.len()];
        let mut add = |c: usize| {
            let w = weights[c];
            for (r, y) in rhs[c].iter_mut().zip(y) {
                *r += w * y;
            }
        };
        if translation {
            add(row);
        }
        for &c in cols {
            add(c);
        }
    }

    /// Solves M_z x = rhs in place with the factor of the last [`Joints::tree_kinematics`].
    pub fn solve(k: &TreeKin, x: &mut [f64]) {
        cholesky_solve(&k.chol, k.n, x);
    }

    /// Projects the free-body accelerations `q` (evaluator layout; with `bias` 1 minus J̇_b ż,
    /// with 0 an explicit time derivative) onto tree `tree`'s coordinates in place
    /// ([`Joints::project_rhs_leaves`], [`Joints::solve`]): its jointed bodies' blocks get 0
    /// but the coordinates' slots, which get z̈. `rhs` (≥ n) and `acc` are scratch.
    pub fn project_tree(
        tree: &Tree,
        kin: &TreeKin,
        bias: f64,
        q: &mut [f64],
        rhs: &mut [f64],
        acc: &mut [(Vector3<f64>, Vector3<f64>)],
    ) {
        let n = tree.n_coords();
        Joints::project_rhs_leaves(tree, kin, bias, |b| block6(q, b), rhs, acc);
        Joints::solve(kin, &mut rhs[..n]);
        for &b in &tree.bodies[usize::from(tree.root.is_some())..] {
            q[6 * b..6 * b + 6].fill(0.0);
        }
        for (c, &vi) in tree.coords.iter().enumerate() {
            q[vi] = rhs[c];
        }
    }
}

/// The six rows of a body's block of J or M_b J_b (`6 n` entries, row-major).
#[inline(always)]
fn rows6(block: &mut [f64], n: usize) -> [&mut [f64]; 6] {
    let mut rows = block.chunks_exact_mut(n);
    std::array::from_fn(|_| rows.next().expect("six rows"))
}

/// Writes a frame into a position block (x, quaternion) and velocity block (v, ω body).
fn write_frame(f: &Frame, r: &mut [f64], v: &mut [f64]) {
    r[..3].copy_from_slice(f.x.as_slice());
    r[3..7].copy_from_slice(&matrix_to_quat(&f.rot));
    let wb = f.rot.transpose() * f.w;
    v[..3].copy_from_slice(f.v.as_slice());
    v[3..6].copy_from_slice(wb.as_slice());
}

/// In-place Cholesky factor of the symmetric positive definite n × n matrix `a` (lower
/// triangle read, row-major): L's off-diagonal entries in the lower triangle and Lᵀ's in the
/// upper one (the rows the backward substitution reads, [`cholesky_solve_cols`]), and on the
/// diagonal the reciprocals 1 / L_jj (the one division per column, its entries scaled by a
/// product; the solves multiply too: no division on their dependency chains); the index of
/// the first non-positive pivot on failure.
fn cholesky(a: &mut [f64], n: usize) -> Result<(), usize> {
    for j in 0..n {
        let (row_j, below) = a[j * n..n * n].split_at_mut(n);
        let (lj, upper) = row_j.split_at_mut(j);
        let mut d = upper[0];
        for &x in &*lj {
            d -= x * x;
        }
        if d.is_nan() || d <= 0.0 {
            return Err(j);
        }
        let r = 1.0 / d.sqrt();
        upper[0] = r;
        // Two rows at a time (two lanes), each entry's sum in the order of k; L_ij mirrored
        // into row j. (Split off pair by pair: creating a chunk iterator divides by its
        // length, once per column.)
        let (mut rows, mut mirror) = (below, &mut upper[1..]);
        while rows.len() >= 2 * n {
            let (pair, rest) = std::mem::take(&mut rows).split_at_mut(2 * n);
            let (m, mrest) = std::mem::take(&mut mirror).split_at_mut(2);
            (rows, mirror) = (rest, mrest);
            let (r0, r1) = pair.split_at_mut(n);
            let mut s = [r0[j], r1[j]];
            for ((x0, x1), y) in r0[..j].iter().zip(&r1[..j]).zip(&*lj) {
                s[0] -= x0 * y;
                s[1] -= x1 * y;
            }
            r0[j] = s[0] * r;
            r1[j] = s[1] * r;
            m.copy_from_slice(&[r0[j], r1[j]]);
        }
        if let (Some(r0), [m]) = (rows.get_mut(..n), mirror) {
            let mut s = r0[j];
            for (x, y) in r0[..j].iter().zip(&*lj) {
                s -= x * y;
            }
            r0[j] = s * r;
            *m = r0[j];
        }
    }
    Ok(())
}

/// Solves L Lᵀ x = b in place.
fn cholesky_solve(l: &[f64], n: usize, x: &mut [f64]) {
    cholesky_solve_cols::<1>(l, n, x);
}

/// [`cholesky_solve`] for `M` right-hand sides at once, `x[M i + col]` (n × M row-major): each
/// column takes the same operations in the same order as alone.
fn cholesky_solve_cols<const M: usize>(l: &[f64], n: usize, x: &mut [f64]) {
    let x = &mut x.as_chunks_mut::<M>().0[..n];
    // Row i of the factor, by index (a reversed iterator over chunks would divide).
    let l = &l[..n * n];
    let row = |i: usize| &l[i * n..i * n + n];
    // L y = b, row by row: y_i = (b_i − Σ_(k<i) L_ik y_k) · (1 / L_ii), the reciprocal on
    // the diagonal ([`cholesky`]).
    for i in 0..n {
        let li = row(i);
        let (done, rest) = x.split_at_mut(i);
        let mut s = rest[0];
        for (lik, xk) in li[..i].iter().zip(&*done) {
            for (s, xk) in s.iter_mut().zip(xk) {
                *s -= lik * xk;
            }
        }
        rest[0] = s.map(|s| s * li[i]);
    }
    // Lᵀ x = y from the last row, Lᵀ's rows in the upper triangle ([`cholesky`]):
    // x_i = (y_i − Σ_(k>i) L_ki x_k) · (1 / L_ii).
    for i in (0..n).rev() {
        let li = row(i);
        let (head, done) = x.split_at_mut(i + 1);
        let mut s = head[i];
        for (lki, xk) in li[i + 1..].iter().zip(&*done) {
            for (s, xk) in s.iter_mut().zip(xk) {
                *s -= lki * xk;
            }
        }
        head[i] = s.map(|s| s * li[i]);
    }
}

/// Number of columns of C ([`JointWork::differenced_terms`]) projected at once.
const C_COLUMNS: usize = 4;

/// Relative step of the differenced kinematic terms of the linearisation: central differences
/// of the pose map only (no force evaluation), truncation O(δ²) ≈ 1e-12 and rounding
/// ≈ ε / δ ≈ 1e-10 relative.
pub const KINEMATIC_FD_STEP: f64 = 1e-6;

/// Relative step of the difference over the velocities (of a quadratic form: exact for any
/// step, see [`JointWork::linearise`]).
pub const KINEMATIC_VELOCITY_STEP: f64 = 1e-2;

/// The block pattern of a model with joints: block i = body i as before, but every tree's
/// coordinate blocks ([`Tree::coordinate_blocks`]: the free root and the bodies with a
/// coordinate of their own) couple densely with each other and with everything any body of
/// the tree couples with in the free-body pattern `full` (the projection mixes a tree's rows
/// and columns onto its coordinates). A follower's block holds no coordinate: its rows and
/// columns of the linearisation are zero and it keeps the diagonal block alone (the identity
/// of the iteration matrix).
pub fn joint_pattern(full: &BlockPattern, joints: &Joints, n_bodies: usize) -> BlockPattern {
    grouped_pattern(full, joints, n_bodies, true)
}

/// `full` with the columns of every tree body replaced by the tree's coordinate blocks and,
/// with `rows`, the rows too ([`joint_pattern`]); without `rows` it holds the intermediate
/// product (free-body rows) × J of [`JointWork::linearise`] (symmetrised, as every pattern).
fn grouped_pattern(
    full: &BlockPattern,
    joints: &Joints,
    n_bodies: usize,
    rows: bool,
) -> BlockPattern {
    let group = |i: usize| -> Vec<usize> {
        match (i < n_bodies).then(|| joints.tree_of[i]).flatten() {
            Some((t, _)) => joints.trees[t].coord_blocks.clone(),
            None => vec![i],
        }
    };
    let mut pairs = Vec::new();
    for i in 0..full.n_blocks() {
        let gi = if rows { group(i) } else { vec![i] };
        for &j in full.row(i) {
            let gj = group(j);
            for &a in &gi {
                for &b in &gj {
                    pairs.push((a, b));
                }
            }
        }
    }
    BlockPattern::from_couplings(full.n_blocks(), 6, &pairs)
}

/// Workspace of [`crate::MbsSystem`] for a model with joints (allocated once): the expanded
/// state, the trees' kinematics, the evaluator's free-body linearisation and the projection.
#[derive(Debug, Clone)]
pub struct JointWork {
    /// Expanded positions (the evaluator's layout).
    pub r_full: Vec<f64>,
    /// Expanded velocities and the element states.
    pub v_full: Vec<f64>,
    /// The pattern of the reduced system ([`joint_pattern`]).
    pub pattern: Arc<BlockPattern>,
    kin: Vec<TreeKin>,
    pert: Vec<TreeKin>,
    rhs: Vec<f64>,
    rhs2: Vec<f64>,
    /// Per tree: ∂v_b/∂x_c at fixed ż (rows as J), the differenced geometric term
    /// ∂/∂x [M_z⁻¹ Jᵀ M (q − J̇ż)] at fixed q and the velocity term −∂/∂ż [M_z⁻¹ Jᵀ M J̇ż].
    vz: Vec<Vec<f64>>,
    geo: Vec<Vec<f64>>,
    cor: Vec<Vec<f64>>,
    /// Per tree: the projected accelerations z̈ at the linearisation's state.
    zdd: Vec<Vec<f64>>,
    /// Per tree body: the difference of J̇_b ż over a velocity perturbation, per column of C
    /// projected together (scratch for C, [`C_COLUMNS`]).
    dbias: Vec<[[f64; 6]; C_COLUMNS]>,
    /// The evaluator's linearisation of the free bodies.
    full_lin: Linearisation,
    /// The slots of B's and the reduced linearisation's blocks for [`JointWork::project_rows`]
    /// (fixed by the patterns).
    projection_slots: ProjectionSlots,
    /// The slots of B's blocks for [`JointWork::product_aj`] (fixed by the patterns).
    product_slots: ProductSlots,
    /// Per tree: the columns of its bodies' J_b and V_z ([`JointWork::product_aj`]).
    jv: Vec<JvColumns>,
    /// A · J of the projection (free-body rows, tree columns grouped; [`grouped_pattern`]).
    b_rk: BlockMatrix,
    b_v: BlockMatrix,
    y: Vec<f64>,
    /// Per tree body: the massless leaves' wrenches moved onto it, up to twelve columns
    /// ([`Joints::project_leaves_cols`]).
    leaf_acc: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// Whether some tree's M_z was singular at the last [`JointWork::kinematics`].
    singular: bool,
    /// Whether the jointed bodies' blocks of [`JointWork::r_full`], [`JointWork::v_full`] still
    /// wait for the frames of the last [`JointWork::kinematics`] ([`JointWork::write_poses`]).
    poses_pending: bool,
    /// A model-specific implementation of the evaluation path ([`crate::tree_kernel`]), if set.
    kernel: Option<Arc<dyn TreeKernel>>,
    /// Per tree: the kernel's flat buffer ([`FlatLayout`]; empty without a kernel).
    flat: Vec<Vec<f64>>,
    /// Per tree: the layout of its flat buffer.
    layouts: Vec<FlatLayout>,
    /// The spline basis scratch of the kernel path.
    basis: sm::SplineBasis,
    /// Whether the last [`JointWork::kinematics`] ran the kernel (its flat buffers are current
    /// and [`JointWork::project_q`] projects through it).
    kernel_kin: bool,
}

impl JointWork {
    /// Workspace for `model` (with joints).
    pub fn new(model: &crate::CompiledModel) -> Self {
        let j = &model.joints;
        let pattern = Arc::new(joint_pattern(&model.pattern, j, model.bodies.len()));
        let bpat = Arc::new(grouped_pattern(
            &model.pattern,
            j,
            model.bodies.len(),
            false,
        ));
        let nmax = j.trees.iter().map(Tree::n_coords).max().unwrap_or(0);
        Self {
            r_full: vec![0.0; model.n_r()],
            v_full: vec![0.0; model.n_v()],
            kin: j.trees.iter().map(TreeKin::new).collect(),
            pert: j.trees.iter().map(TreeKin::new).collect(),
            rhs: vec![0.0; nmax],
            rhs2: vec![0.0; nmax],
            vz: j
                .trees
                .iter()
                .map(|t| vec![0.0; 6 * t.bodies.len() * t.n_coords()])
                .collect(),
            geo: j
                .trees
                .iter()
                .map(|t| vec![0.0; t.n_coords().pow(2)])
                .collect(),
            cor: j
                .trees
                .iter()
                .map(|t| vec![0.0; t.n_coords().pow(2)])
                .collect(),
            zdd: j.trees.iter().map(|t| vec![0.0; t.n_coords()]).collect(),
            dbias: vec![
                [[0.0; 6]; C_COLUMNS];
                j.trees.iter().map(|t| t.bodies.len()).max().unwrap_or(0)
            ],
            full_lin: Linearisation::new(model.n_r(), model.pattern.clone()),
            projection_slots: ProjectionSlots::new(&pattern, &bpat, j, model.bodies.len()),
            product_slots: ProductSlots::new(&model.pattern, &bpat, j, model.bodies.len()),
            jv: j.trees.iter().map(JvColumns::new).collect(),
            b_rk: BlockMatrix::zeros(bpat.clone()),
            b_v: BlockMatrix::zeros(bpat),
            y: vec![0.0; 12 * nmax],
            leaf_acc: vec![
                (Vector3::zeros(), Vector3::zeros());
                12 * j.trees.iter().map(|t| t.bodies.len()).max().unwrap_or(0)
            ],
            pattern,
            singular: false,
            poses_pending: false,
            kernel: None,
            flat: Vec::new(),
            layouts: j.trees.iter().map(FlatLayout::of).collect(),
            basis: sm::SplineBasis::default(),
            kernel_kin: false,
        }
    }

    /// Sets (or with `None` removes) the model-specific implementation of the evaluation path
    /// ([`crate::tree_kernel`]): [`JointWork::kinematics`] and [`JointWork::project_q`] (without
    /// `q_t`) then run it; the linearisation keeps the generic code.
    pub fn set_kernel(&mut self, joints: &Joints, kernel: Option<Arc<dyn TreeKernel>>) {
        self.flat = match &kernel {
            Some(_) => joints
                .trees
                .iter()
                .zip(&self.layouts)
                .map(|(tree, l)| l.initial(tree))
                .collect(),
            None => Vec::new(),
        };
        self.kernel = kernel;
        self.kernel_kin = false;
    }

    /// Whether a model-specific implementation of the evaluation path is set.
    pub fn has_kernel(&self) -> bool {
        self.kernel.is_some()
    }

    /// The trees' flat buffers ([`FlatLayout`]) if the last [`JointWork::kinematics`] ran the
    /// kernel (its frames are current there), else `None`.
    pub fn kernel_flats(&self) -> Option<&[Vec<f64>]> {
        self.kernel_kin.then_some(&self.flat[..])
    }

    /// Expands (r, v) into [`JointWork::r_full`], [`JointWork::v_full`].
    pub fn expand(&mut self, joints: &Joints, r: &[f64], v: &[f64]) {
        joints.expand(r, v, &mut self.r_full, &mut self.v_full);
        self.poses_pending = false;
    }

    /// The trees' kinematics at the reduced state (r, v) ([`Joints::tree_kinematics`]) and
    /// the expanded state for the evaluator of q: the jointed bodies' kinematics from their
    /// frames as they are into `bodies` (the evaluator's table, [`BodyKin::from_frame`]: R and
    /// global ω without the round trip through a quaternion), the blocks of the bodies `free`
    /// (those without a joint) and the element states copied into [`JointWork::r_full`],
    /// [`JointWork::v_full`]. The jointed bodies' blocks there are written from the same
    /// frames only when read ([`JointWork::write_poses`]). A singular M_z is remembered for
    /// [`JointWork::project_q`].
    pub fn kinematics(
        &mut self,
        model: &crate::CompiledModel,
        r: &[f64],
        v: &[f64],
        free: &[usize],
        bodies: &mut [BodyKin],
    ) {
        for &b in free {
            self.r_full[7 * b..7 * b + 7].copy_from_slice(&r[7 * b..7 * b + 7]);
            self.v_full[6 * b..6 * b + 6].copy_from_slice(&v[6 * b..6 * b + 6]);
        }
        let nbv = model.n_body_v();
        self.v_full[nbv..].copy_from_slice(&v[nbv..]);
        self.poses_pending = true;
        self.tree_frames(model, r, v, false);
        for (t, tree) in model.joints.trees.iter().enumerate() {
            let jointed = usize::from(tree.root.is_some());
            for (lb, &b) in tree.bodies.iter().enumerate().skip(jointed) {
                let f = self.frame(t, lb);
                bodies[b] = BodyKin::from_frame(f.x, f.rot, f.v, f.w);
            }
        }
    }

    /// Tree `t`'s body `lb`'s frame of the last kinematics: from the kernel's flat buffer if
    /// the kernel ran it (its frames are not copied into [`TreeKin`]), else the generic one.
    #[inline]
    fn frame(&self, t: usize, lb: usize) -> Frame {
        if self.kernel_kin {
            self.layouts[t].frame(&self.flat[t], lb)
        } else {
            self.kin[t].frames[lb]
        }
    }

    /// Whether the jointed bodies' blocks of [`JointWork::r_full`], [`JointWork::v_full`] wait
    /// for the frames of the last [`JointWork::kinematics`] ([`JointWork::write_poses`]): the
    /// last evaluation of the workspace was one of q.
    pub fn poses_pending(&self) -> bool {
        self.poses_pending
    }

    /// Writes the jointed bodies' poses and velocities of the last [`JointWork::kinematics`]
    /// into [`JointWork::r_full`], [`JointWork::v_full`] if they are not there yet (quaternion
    /// and body-axis ω from each frame): afterwards both hold the full state of that
    /// evaluation, as [`JointWork::expand`] would give it.
    pub fn write_poses(&mut self, joints: &Joints) {
        if !self.poses_pending {
            return;
        }
        for (t, tree) in joints.trees.iter().enumerate() {
            let jointed = usize::from(tree.root.is_some());
            for (lb, &b) in tree.bodies.iter().enumerate().skip(jointed) {
                let f = self.frame(t, lb);
                write_frame(
                    &f,
                    &mut self.r_full[7 * b..7 * b + 7],
                    &mut self.v_full[6 * b..6 * b + 6],
                );
            }
        }
        self.poses_pending = false;
    }

    /// The trees' kinematics at the reduced state (r, v) and the expanded state from their
    /// frames into [`JointWork::r_full`], [`JointWork::v_full`] (what [`JointWork::expand`]
    /// gives, with each frame computed once for the expansion and the projection; what the
    /// linearisation evaluates at); with `all_rows` the J_b rows of every body (the
    /// linearisation's projection reads them), else not those of the massless leaves.
    fn kinematics_rows(
        &mut self,
        model: &crate::CompiledModel,
        r: &[f64],
        v: &[f64],
        all_rows: bool,
    ) {
        self.r_full.copy_from_slice(r);
        self.v_full.copy_from_slice(v);
        self.poses_pending = true;
        self.tree_frames(model, r, v, all_rows);
        self.write_poses(&model.joints);
    }

    /// The trees' kinematics at (r, v) into `self.kin` ([`JointWork::kinematics_rows`]).
    fn tree_frames(&mut self, model: &crate::CompiledModel, r: &[f64], v: &[f64], all_rows: bool) {
        let joints = &model.joints;
        self.singular = false;
        self.kernel_kin = false;
        if let Some(kernel) = self.kernel.as_ref().filter(|_| !all_rows) {
            for (t, ((tree, flat), layout)) in joints
                .trees
                .iter()
                .zip(&mut self.flat)
                .zip(&self.layouts)
                .enumerate()
            {
                // The groups the kernel left to the host (bit g; from 64 on, all).
                let host = kernel.spline_groups(t, r, flat);
                for (g, grp) in tree.groups.iter().enumerate() {
                    if host.checked_shr(g as u32).is_some_and(|m| m & 1 == 0) {
                        continue;
                    }
                    let o = layout.gev[g];
                    let len = sm::SPLINE_SLOTS * grp.spline.channels();
                    grp.eval_into(grp.coordinates(r), &mut self.basis, &mut flat[o..o + len]);
                }
                if let Err(e) = kernel.kinematics(t, r, v, flat) {
                    debug_assert!(false, "{}", joints.singular_message(model, t, e));
                    self.singular = true;
                }
                // (The frames stay in `flat`: JointWork::frame reads them there.)
            }
            self.kernel_kin = true;
            return;
        }
        for (t, kin) in self.kin.iter_mut().enumerate() {
            if let Err(e) =
                joints.tree_kinematics_rows(model, t, r, v, Perturb::None, None, all_rows, kin)
            {
                // A singular joint mass matrix: NaN accelerations make the integrator stop
                // with its own non-finite-state error naming the time.
                debug_assert!(false, "{}", joints.singular_message(model, t, e));
                self.singular = true;
            }
        }
    }

    /// Projects the evaluator's free-body accelerations `q` (at the expanded state of the last
    /// [`JointWork::kinematics`]) onto the tree coordinates in place (module docs); padding
    /// slots get 0. With `q_t`, projects the explicit time derivative the same way (without
    /// the J̇ ż term).
    pub fn project_q(
        &mut self,
        model: &crate::CompiledModel,
        q: &mut [f64],
        mut q_t: Option<&mut [f64]>,
    ) {
        if self.singular {
            q.fill(f64::NAN);
            return;
        }
        let joints = &model.joints;
        if let (Some(kernel), None) = (&self.kernel, &q_t)
            && self.kernel_kin
        {
            for (t, flat) in self.flat.iter().enumerate() {
                kernel.project(t, flat, q);
            }
            return;
        }
        for (t, tree) in joints.trees.iter().enumerate() {
            let kin = &self.kin[t];
            let acc = &mut self.leaf_acc;
            if let Some(qt) = q_t.as_deref_mut() {
                Joints::project_tree(tree, kin, 0.0, qt, &mut self.rhs2, acc);
            }
            Joints::project_tree(tree, kin, 1.0, q, &mut self.rhs, acc);
        }
    }

    /// The evaluator's linearisation at the expanded state (`eval_lin` fills the free-body
    /// linearisation), projected onto the tree coordinates into `lin` (`docs/joints.md`):
    ///
    /// ```text
    /// J_rK,z = P (J_rK J + J_v V_z) + G,   J_v,z = P J_v J + C,   P = M_z⁻¹ Jᵀ M
    /// ```
    ///
    /// with V_z = ∂v/∂x at fixed ż, G the derivative of the projection at fixed free-body
    /// accelerations (the geometric stiffness: the pose map's second derivatives) and C the
    /// velocity derivative of −P J̇ ż; a free root's rotation columns of V_z and G analytic
    /// ([`JointWork::root_rotation_terms`]), the other columns of V_z, G and C by central
    /// differences of the pose map ([`KINEMATIC_FD_STEP`]). Element-state rows and columns pass
    /// through P and J only; P takes a massless leaf's rows through its own joint's columns and
    /// its parent's ([`Joints::project_leaves_cols`]).
    pub fn linearise(
        &mut self,
        model: &crate::CompiledModel,
        r: &[f64],
        v: &[f64],
        lin: &mut Linearisation,
        eval_lin: impl FnOnce(&[f64], &[f64], &mut Linearisation),
    ) {
        self.kinematics_rows(model, r, v, true);
        eval_lin(&self.r_full, &self.v_full, &mut self.full_lin);
        self.full_lin.expand();
        lin.congruent = false;
        lin.r.copy_from_slice(r);
        lin.q.copy_from_slice(&self.full_lin.q);
        lin.q_t.copy_from_slice(&self.full_lin.q_t);
        self.project_q(model, &mut lin.q, Some(&mut lin.q_t));
        for (t, tree) in model.joints.trees.iter().enumerate() {
            for (z, &vi) in self.zdd[t].iter_mut().zip(&tree.coords) {
                *z = lin.q[vi];
            }
            self.differenced_terms(model, t, r, v, false);
        }
        self.product_aj(model);
        self.project_rows(model, lin);
    }

    /// V_z, G and C of tree `t` ([`JointWork::linearise`]) at (r, v) (the unperturbed
    /// kinematics in `self.kin`, the free-body accelerations in `self.full_lin.q`, the projected
    /// ones in `self.zdd[t]`): a root's rotation columns of V_z and G analytically
    /// ([`JointWork::root_rotation_terms`]; with `differenced_only`, the test oracle, by
    /// differences as well), the others by central differences of the tree kinematics.
    #[inline(never)]
    fn differenced_terms(
        &mut self,
        model: &crate::CompiledModel,
        t: usize,
        r: &[f64],
        v: &[f64],
        differenced_only: bool,
    ) {
        let joints = &model.joints;
        let tree = &joints.trees[t];
        let n = tree.n_coords();
        let nbt = tree.bodies.len();
        if tree.root.is_some() && !differenced_only {
            for k in 0..3 {
                self.root_rotation_terms(model, t, k);
            }
        }
        // The columns of C not yet projected: (coordinate, velocity step).
        let mut chunk = [(0, 0.0); C_COLUMNS];
        let mut m = 0;
        for c in 0..n {
            if tree.root.is_some() && c < 3 {
                // A root's translation and its linear velocity change neither J, M_z nor
                // J̇ ż nor the relative velocities (all depend on differences of positions
                // and on angular velocities only): these columns of V_z, G and C are 0.
                for lb in 0..nbt {
                    for k in 0..6 {
                        self.vz[t][(6 * lb + k) * n + c] = 0.0;
                    }
                }
                for i in 0..n {
                    self.geo[t][i * n + c] = 0.0;
                    self.cor[t][i * n + c] = 0.0;
                }
                continue;
            }
            let vi = tree.coords[c];
            let (blk, off) = (vi / 6, vi % 6);
            let x0 = if tree.joint_coord.contains(&Some(c)) {
                r[7 * blk]
            } else if off < 3 {
                r[7 * blk + off]
            } else {
                0.0
            };
            let hp = KINEMATIC_FD_STEP * x0.abs().max(1.0);
            // J̇ ż is quadratic in the velocities: its central difference is exact for any
            // step, so the velocity step is large (round-off ε |q| / h ≈ 1e-13).
            let hv = KINEMATIC_VELOCITY_STEP * v[vi].abs().max(1.0);
            let fq = &self.full_lin.q;
            let base = &self.kin[t];
            let pk = &mut self.pert[t];
            if !(tree.root.is_some() && c < 6 && !differenced_only) {
                // V_z and G: the projection at the perturbed positions (the massless leaves'
                // J rows are not formed: the projection moves their wrenches onto the parents).
                for (s, sign) in [(0usize, 1.0f64), (1, -1.0)] {
                    let p = Perturb::Position(c, sign * hp);
                    if joints
                        .tree_kinematics_rows(model, t, r, v, p, Some(base), false, pk)
                        .is_err()
                    {
                        continue;
                    }
                    let rhs = if s == 0 {
                        &mut self.rhs
                    } else {
                        &mut self.rhs2
                    };
                    let x_of = |b| Some([block6(fq, b)]);
                    Joints::project_leaves_cols::<1>(
                        tree,
                        pk,
                        Some(pk),
                        x_of,
                        rhs,
                        &mut self.leaf_acc,
                    );
                    Joints::solve(pk, &mut rhs[..n]);
                    let vz = &mut self.vz[t];
                    for lb in 0..nbt {
                        if tree.jac_cols[lb].binary_search(&c).is_err() {
                            // Base's frame at both positions: a zero difference.
                            if s == 0 {
                                for k in 0..6 {
                                    vz[(6 * lb + k) * n + c] = 0.0;
                                }
                            }
                            continue;
                        }
                        let vb = pk.velocity_body(lb);
                        for (k, x) in vb.iter().enumerate() {
                            let e = &mut vz[(6 * lb + k) * n + c];
                            if s == 0 {
                                *e = *x;
                            } else {
                                *e = (*e - x) / (2.0 * hp);
                            }
                        }
                    }
                }
                for i in 0..n {
                    self.geo[t][i * n + c] = (self.rhs[i] - self.rhs2[i]) / (2.0 * hp);
                }
            }
            // C: a velocity perturbation changes J̇ ż alone (J, M_z and its factor are `base`'s),
            // so C's column is −M_z⁻¹ Σ_b J_bᵀ M_b (J̇_b ż⁺ − J̇_b ż⁻) / 2h over the bodies with
            // mass; projected [`C_COLUMNS`] columns at once (each alone takes the same
            // operations).
            let j = m;
            for (s, sign) in [(0usize, 1.0f64), (1, -1.0)] {
                let p = Perturb::Velocity(c, sign * hv);
                if joints
                    .tree_kinematics_rows(model, t, r, v, p, Some(base), false, pk)
                    .is_err()
                {
                    continue;
                }
                for (lb, db) in self.dbias[..nbt].iter_mut().enumerate() {
                    if tree.massless[lb] || !tree.need_acc[lb] {
                        continue;
                    }
                    if tree.jac_cols[lb].binary_search(&c).is_err() {
                        // Base's J̇_b ż at both velocities: a zero difference.
                        db[j] = [0.0; 6];
                        continue;
                    }
                    let bb = pk.bias_body(lb);
                    for (d, x) in db[j].iter_mut().zip(bb) {
                        *d = if s == 0 { x } else { *d - x };
                    }
                }
            }
            chunk[m] = (c, hv);
            m += 1;
            if m == C_COLUMNS {
                self.project_cor(model, t, &chunk);
                m = 0;
            }
        }
        if m > 0 {
            self.project_cor(model, t, &chunk[..m]);
        }
    }

    /// The columns `cols` (coordinate, velocity step) of C of tree `t` from the differences of
    /// J̇_b ż in `self.dbias` (column j of the chunk in `dbias[lb][j]`; [`JointWork::differenced_terms`]).
    fn project_cor(&mut self, model: &crate::CompiledModel, t: usize, cols: &[(usize, f64)]) {
        let joints = &model.joints;
        let tree = &joints.trees[t];
        let (n, m) = (tree.n_coords(), cols.len());
        let base = &self.kin[t];
        let dbias = &self.dbias;
        let x_of = |b: usize| {
            let lb = joints.tree_of[b].expect("tree body").1;
            (!tree.massless[lb] && tree.need_acc[lb]).then(|| {
                let mut xs = dbias[lb];
                xs[m..].fill([0.0; 6]);
                xs
            })
        };
        let y = &mut self.y[..C_COLUMNS * n];
        Joints::project_leaves_cols::<C_COLUMNS>(tree, base, None, x_of, y, &mut self.leaf_acc);
        cholesky_solve_cols::<C_COLUMNS>(&base.chol, n, y);
        for (j, &(c, hv)) in cols.iter().enumerate() {
            for i in 0..n {
                self.cor[t][i * n + c] = -y[C_COLUMNS * i + j] / (2.0 * hv);
            }
        }
    }

    /// The columns of V_z and G of tree `t` for its root's rotation about body axis `k`
    /// (coordinate 3 + k), exactly: such a rotation δ turns the whole tree rigidly about the
    /// global axis u = R_root e_k (every relative pose, J's angular rows in body axes and the
    /// angular bias in body axes stay; the global vectors turn by exp(δ [u]×)), while the root's
    /// velocity and the free-body accelerations q stay. So, per tree body,
    ///
    /// ```text
    /// ∂v_b = u × (v_b − v_root),   ∂ω_b = 0,   ∂(J̇_b ż) = (u × a_b, 0),
    /// ∂J_b = [u]× on J_b's translation rows in every column but the root's translation (I)
    /// ```
    ///
    /// and with f = M_z⁻¹ Σ J_bᵀ M_b (q_b − J̇_b ż) (the projected z̈) the derivative of the
    /// projection ∂f = M_z⁻¹ [Σ ∂J_bᵀ M_b (q_b − J̇_b ż − J_b f) − Σ J_bᵀ M_b (∂(J̇_b ż) + ∂J_b f)]:
    ///
    /// ```text
    /// ∂f = M_z⁻¹ [ (Σ J_bᵀ M_b (y_b × u, 0))|without the root's translation − Σ J_bᵀ M_b (u × g_b, 0) ]
    /// y_b = q_b − a_b − (J_b f)_v,   g_b = a_b + (J_b f)_v − f_t
    /// ```
    ///
    /// (f_t the root's translation part of f, (·)_v the translation rows; a massless body: y_b
    /// its wrench's force, no g_b). Both sums in one two-column projection
    /// ([`Joints::project_leaves_cols`]).
    fn root_rotation_terms(&mut self, model: &crate::CompiledModel, t: usize, k: usize) {
        let tree = &model.joints.trees[t];
        let (n, c) = (tree.n_coords(), 3 + k);
        let kin = &self.kin[t];
        let f = &self.zdd[t];
        let root = &kin.frames[0];
        let u: Vector3<f64> = root.rot.column(k).into();
        for lb in 0..tree.bodies.len() {
            let dv = u.cross(&(kin.frames[lb].v - root.v));
            for row in 0..6 {
                self.vz[t][(6 * lb + row) * n + c] = if row < 3 { dv[row] } else { 0.0 };
            }
        }
        let ft = Vector3::new(f[0], f[1], f[2]);
        let fq = &self.full_lin.q;
        let x_of = |b: usize| {
            let lb = model.joints.tree_of[b].expect("tree body").1;
            let qv = Vector3::new(fq[6 * b], fq[6 * b + 1], fq[6 * b + 2]);
            let (y, g) = if tree.massless[lb] {
                (qv, Vector3::zeros())
            } else {
                let a = kin.acc[lb].0;
                let jf = Vector3::from_fn(|row, _| {
                    let jr = &kin.jac[(6 * lb + row) * n..(6 * lb + row + 1) * n];
                    tree.jac_cols[lb].iter().map(|&j| jr[j] * f[j]).sum()
                });
                (qv - a - jf, a + jf - ft)
            };
            let (x1, x2) = (y.cross(&u), u.cross(&g));
            Some([
                [x1.x, x1.y, x1.z, 0.0, 0.0, 0.0],
                [x2.x, x2.y, x2.z, 0.0, 0.0, 0.0],
            ])
        };
        Joints::project_leaves_cols::<2>(tree, kin, None, x_of, &mut self.y, &mut self.leaf_acc);
        for i in 0..n {
            let t1 = if i < 3 { 0.0 } else { self.y[2 * i] };
            self.rhs[i] = t1 - self.y[2 * i + 1];
        }
        Joints::solve(kin, &mut self.rhs[..n]);
        for i in 0..n {
            self.geo[t][i * n + c] = self.rhs[i];
        }
    }

    /// Step A of the projection: B = A J (+ J_v V_z for J_rK) over the columns, into
    /// `self.b_rk`, `self.b_v`; the rows stay the free bodies'.
    #[inline(never)]
    fn product_aj(&mut self, model: &crate::CompiledModel) {
        let joints = &model.joints;
        let nb = model.bodies.len();
        // J_b's and V_z's columns (the others are exactly 0).
        for (t, tree) in joints.trees.iter().enumerate() {
            self.jv[t].gather(tree, &self.kin[t], &self.vz[t]);
        }
        let fp = self.full_lin.j_rk.pattern().clone();
        let ps = &self.product_slots;
        let nt = joints.trees.len();
        for i in 0..fp.n_blocks() {
            // Zeroed: the blocks of row i this step adds to, each once (the product's other
            // blocks are never written and stay 0).
            for &ts in &ps.zero[i] {
                self.b_rk.block_mut(ts).fill(0.0);
                self.b_v.block_mut(ts).fill(0.0);
            }
            for (s, &j) in fp.row(i).iter().enumerate() {
                let slot = fp.row_ptr()[i] + s;
                let a_rk = self.full_lin.j_rk.block(slot);
                let a_v = self.full_lin.j_v.block(slot);
                match (j < nb).then(|| joints.tree_of[j]).flatten() {
                    None => {
                        let ts = ps.free[slot];
                        add6(self.b_rk.block_mut(ts), a_rk);
                        add6(self.b_v.block_mut(ts), a_v);
                    }
                    Some((t, lb)) => {
                        let jv = &self.jv[t];
                        let slots = &ps.coords[i * nt + t];
                        let (pairs, units) = jv.ranges[lb].clone();
                        // The leading unit columns e_c of coordinates 0..m in one block at
                        // columns 0..m (a free root's): that block's columns 0..m take
                        // 0 + A's (see below), row by row.
                        let m = jv.lead[lb];
                        if m > 0 {
                            let ts = slots[0].0;
                            let b = [self.b_rk.block_mut(ts), self.b_v.block_mut(ts)];
                            // (A free root's six, a jointed body's three translation columns:
                            // inlined with a fixed length.)
                            match m {
                                3 => add_lead(b, [a_rk, a_v], 3),
                                6 => add_lead(b, [a_rk, a_v], 6),
                                _ => add_lead(b, [a_rk, a_v], m),
                            }
                        }
                        for &(c, u) in &jv.units[units] {
                            // J_b's column is e_u (a root's translation, the root's own
                            // rotation): the dense sum is 0 + A's column u, exactly (the other
                            // products are exact zeros).
                            let (ts, off) = slots[c];
                            let brk = self.b_rk.block_mut(ts);
                            for row in 0..6 {
                                brk[6 * row + off] += 0.0 + a_rk[6 * row + u];
                            }
                            let bv = self.b_v.block_mut(ts);
                            for row in 0..6 {
                                bv[6 * row + off] += 0.0 + a_v[6 * row + u];
                            }
                        }
                        for p in &jv.pairs[pairs] {
                            // Two columns in two lanes, each entry's sum from 0 in the order
                            // of k as alone.
                            let mut srk = [[0.0; 2]; 6];
                            let mut sv = [[0.0; 2]; 6];
                            for (row, (sr, sw)) in srk.iter_mut().zip(&mut sv).enumerate() {
                                let ark = &a_rk[6 * row..6 * row + 6];
                                let av = &a_v[6 * row..6 * row + 6];
                                if p.with_vz {
                                    let jv = p.j.iter().zip(&p.v);
                                    for ((a, b), (j, v)) in ark.iter().zip(av).zip(jv) {
                                        sr[0] += a * j[0] + b * v[0];
                                        sr[1] += a * j[1] + b * v[1];
                                    }
                                } else {
                                    for (a, j) in ark.iter().zip(&p.j) {
                                        sr[0] += a * j[0];
                                        sr[1] += a * j[1];
                                    }
                                }
                                for (b, j) in av.iter().zip(&p.j) {
                                    sw[0] += b * j[0];
                                    sw[1] += b * j[1];
                                }
                            }
                            for (lane, &c) in p.cols[..p.lanes].iter().enumerate() {
                                let (ts, off) = slots[c];
                                let brk = self.b_rk.block_mut(ts);
                                for (row, sr) in srk.iter().enumerate() {
                                    brk[6 * row + off] += sr[lane];
                                }
                                let bv = self.b_v.block_mut(ts);
                                for (row, sw) in sv.iter().enumerate() {
                                    bv[6 * row + off] += sw[lane];
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Step B of the projection: the rows of `lin` — free bodies and element states: B's as
    /// they are; a tree's rows: P B = M_z⁻¹ Jᵀ M B, plus G and C on the tree's own blocks.
    #[inline(never)]
    fn project_rows(&mut self, model: &crate::CompiledModel, lin: &mut Linearisation) {
        let joints = &model.joints;
        let pat = self.pattern.clone();
        let ps = &self.projection_slots;
        for &(s, bs) in &ps.rows {
            match bs {
                Some(bs) => {
                    lin.j_rk.block_mut(s).copy_from_slice(self.b_rk.block(bs));
                    lin.j_v.block_mut(s).copy_from_slice(self.b_v.block(bs));
                }
                None => {
                    lin.j_rk.block_mut(s).fill(0.0);
                    lin.j_v.block_mut(s).fill(0.0);
                }
            }
        }
        for (t, tree) in joints.trees.iter().enumerate() {
            let kin = &self.kin[t];
            for &b in &tree.bodies {
                for s in pat.row_ptr()[b]..pat.row_ptr()[b + 1] {
                    lin.j_rk.block_mut(s).fill(0.0);
                    lin.j_v.block_mut(s).fill(0.0);
                }
            }
            if tree.coordinate_blocks().is_empty() {
                continue;
            }
            for col in &ps.cols[t] {
                let k = col.k;
                // Y = Σ_b (M_b J_b)ᵀ B(b, k), n × 6 per matrix (a massless leaf's rows moved onto
                // its parent; a body that couples with nothing of block k has B(b, k) = 0), then
                // M_z⁻¹ Y, for the columns of B_rK(·, k) and B_v(·, k) with a non-zero entry
                // together (each column alone takes the same operations; the others give zero
                // columns of P B, left as zeroed above).
                let slots = &col.bodies[..];
                // The columns: a block of the tree's coordinates has its coordinates' columns
                // alone (those [`JointWork::product_aj`] writes), another block those with a
                // non-zero entry (sign bits aside).
                let mut sel = [(0, 0); 12];
                let mut m = 0;
                if tree.coordinate_blocks().binary_search(&k).is_ok() {
                    for mat in 0..2 {
                        for &vi in tree.coords.iter().filter(|&&vi| vi / 6 == k) {
                            sel[m] = (mat, vi % 6);
                            m += 1;
                        }
                    }
                } else {
                    for (mat, src) in [&self.b_rk, &self.b_v].into_iter().enumerate() {
                        let mut bits = [0u64; 6];
                        for &bs in slots.iter().flatten() {
                            for row in src.block(bs).chunks_exact(6) {
                                for (b, x) in bits.iter_mut().zip(row) {
                                    *b |= x.to_bits() << 1;
                                }
                            }
                        }
                        for (col, _) in bits.iter().enumerate().filter(|(_, b)| **b != 0) {
                            sel[m] = (mat, col);
                            m += 1;
                        }
                    }
                }
                let cols = BlockColumns {
                    tree,
                    tree_of: &joints.tree_of,
                    kin,
                    src: [&self.b_rk, &self.b_v],
                    slots,
                    sel: &sel[..m],
                    dst: &col.dst,
                };
                let dst = [&mut lin.j_rk, &mut lin.j_v];
                let (y, acc) = (&mut self.y, &mut self.leaf_acc);
                match m {
                    0 => {}
                    1 => cols.project::<1>(dst, y, acc),
                    2 => cols.project::<2>(dst, y, acc),
                    3 => cols.project::<3>(dst, y, acc),
                    4 => cols.project::<4>(dst, y, acc),
                    5..=6 => cols.project::<6>(dst, y, acc),
                    _ => cols.project::<12>(dst, y, acc),
                }
            }
            // The differenced terms on the tree's own blocks.
            for (i, &(s, e)) in ps.own[t].iter().enumerate() {
                lin.j_rk.block_mut(s)[e] += self.geo[t][i];
                lin.j_v.block_mut(s)[e] += self.cor[t][i];
            }
        }
    }
}

/// Columns of block column `k` of B_rK and B_v (`src`) over one tree's bodies, for the
/// projection P B of [`JointWork::project_rows`].
struct BlockColumns<'a> {
    tree: &'a Tree,
    tree_of: &'a [Option<(usize, usize)>],
    kin: &'a TreeKin,
    src: [&'a BlockMatrix; 2],
    /// Per tree body: the slot of its block (b, k) in `src` (`None`: B(b, k) = 0).
    slots: &'a [Option<usize>],
    /// The columns: (matrix, column of the block), at most 12.
    sel: &'a [(usize, usize)],
    /// Per tree coordinate: the slot of its block in block column k of `dst`.
    dst: &'a [usize],
}

impl BlockColumns<'_> {
    /// P B for the columns `sel` (padded with zero columns to `M`) into the tree's rows of
    /// block column k of `dst` (J_rK, J_v; the same matrix and column as the source): the
    /// projection ([`Joints::project_leaves_cols`]) and M_z⁻¹, M right-hand sides at once.
    fn project<const M: usize>(
        &self,
        dst: [&mut BlockMatrix; 2],
        y: &mut [f64],
        acc: &mut [(Vector3<f64>, Vector3<f64>)],
    ) {
        // (Inlined: the block's columns are gathered where they are read.)
        Joints::project_leaves_cols::<M>(
            self.tree,
            self.kin,
            None,
            #[inline(always)]
            |b| {
                let lb = self.tree_of[b].expect("tree body").1;
                let bs = self.slots[lb]?;
                let mut xs = [[0.0; 6]; M];
                for (x, &(mat, col)) in xs.iter_mut().zip(self.sel) {
                    let blk = self.src[mat].block(bs);
                    for (row, e) in x.iter_mut().enumerate() {
                        *e = blk[6 * row + col];
                    }
                }
                Some(xs)
            },
            y,
            acc,
        );
        let n = self.tree.n_coords();
        cholesky_solve_cols::<M>(&self.kin.chol, n, &mut y[..M * n]);
        for (c, (&vi, &s)) in self.tree.coords.iter().zip(self.dst).enumerate() {
            let e = 6 * (vi % 6);
            for (&(mat, col), x) in self.sel.iter().zip(&y[M * c..M * c + M]) {
                dst[mat].block_mut(s)[e + col] = *x;
            }
        }
    }
}

/// The slots of the projection P B of [`JointWork::project_rows`] in B's pattern `bp` and the
/// reduced pattern `pat` ([`joint_pattern`]; fixed by the patterns, found once).
#[derive(Debug, Clone)]
struct ProjectionSlots {
    /// Per stored block of `pat` in a row without a tree: its slot and that of the same block
    /// in B, if any.
    rows: Vec<(usize, Option<usize>)>,
    /// Per tree: the block columns its coordinate rows couple with.
    cols: Vec<Vec<ColumnSlots>>,
    /// Per tree and pair of its coordinates (`c n + c2`): the slot of their block in `pat` and
    /// the entry there.
    own: Vec<Vec<(usize, usize)>>,
}

/// Block column `k` of a tree's projection ([`ProjectionSlots`]).
#[derive(Debug, Clone)]
struct ColumnSlots {
    k: usize,
    /// Per tree body: the slot of its block (b, k) in B (`None`: B(b, k) = 0).
    bodies: Vec<Option<usize>>,
    /// Per tree coordinate: the slot of its block in block column k of `pat`.
    dst: Vec<usize>,
}

impl ProjectionSlots {
    fn new(pat: &BlockPattern, bp: &BlockPattern, joints: &Joints, n_bodies: usize) -> Self {
        let mut rows = Vec::new();
        for i in 0..pat.n_blocks() {
            if (i < n_bodies)
                .then(|| joints.tree_of[i])
                .flatten()
                .is_some()
            {
                continue;
            }
            for (s, &j) in (pat.row_ptr()[i]..).zip(pat.row(i)) {
                rows.push((s, bp.slot(i, j)));
            }
        }
        let mut cols = Vec::new();
        let mut own = Vec::new();
        for tree in &joints.trees {
            let slot = |i: usize, j: usize| pat.slot(i, j).expect("tree block");
            let tc = match tree.coordinate_blocks().first() {
                Some(&first) => pat
                    .row(first)
                    .iter()
                    .map(|&k| ColumnSlots {
                        k,
                        bodies: tree.bodies.iter().map(|&b| bp.slot(b, k)).collect(),
                        dst: tree.coords.iter().map(|&vi| slot(vi / 6, k)).collect(),
                    })
                    .collect(),
                None => Vec::new(),
            };
            cols.push(tc);
            let mut to = Vec::new();
            for &vi in &tree.coords {
                for &vj in &tree.coords {
                    to.push((slot(vi / 6, vj / 6), 6 * (vi % 6) + vj % 6));
                }
            }
            own.push(to);
        }
        Self { rows, cols, own }
    }
}

/// The slots of the product B = A J of [`JointWork::product_aj`] (B's pattern `bp`,
/// [`grouped_pattern`]; fixed by the patterns, found once).
#[derive(Debug, Clone)]
struct ProductSlots {
    /// Per row i of the free-body pattern: the blocks of B the product adds to in row i.
    zero: Vec<Vec<usize>>,
    /// Per stored block (i, j) of the free-body pattern (its slot) with j a body without a
    /// tree, or a block of element states: the slot of block (i, j) in B.
    free: Vec<usize>,
    /// Per row i and tree t (`i n_trees + t`), if row i couples with the tree: per tree
    /// coordinate the slot of its block in row i of B and its column there.
    coords: Vec<Vec<(usize, usize)>>,
}

impl ProductSlots {
    fn new(fp: &BlockPattern, bp: &BlockPattern, joints: &Joints, n_bodies: usize) -> Self {
        let nt = joints.trees.len();
        let mut zero = Vec::with_capacity(fp.n_blocks());
        let mut free = vec![usize::MAX; fp.n_stored()];
        let mut coords = vec![Vec::new(); fp.n_blocks() * nt];
        for i in 0..fp.n_blocks() {
            let mut z = Vec::new();
            for (s, &j) in fp.row(i).iter().enumerate() {
                match (j < n_bodies).then(|| joints.tree_of[j]).flatten() {
                    None => {
                        let ts = bp
                            .slot(i, j)
                            .expect("the product's pattern holds the free one");
                        free[fp.row_ptr()[i] + s] = ts;
                        z.push(ts);
                    }
                    Some((t, _)) if coords[i * nt + t].is_empty() => {
                        let tree = &joints.trees[t];
                        for &cb in tree.coordinate_blocks() {
                            z.push(bp.slot(i, cb).expect("product block"));
                        }
                        coords[i * nt + t] = tree
                            .coords
                            .iter()
                            .map(|&vi| (bp.slot(i, vi / 6).expect("tree coupling"), vi % 6))
                            .collect();
                    }
                    Some(_) => {}
                }
            }
            zero.push(z);
        }
        Self { zero, free, coords }
    }
}

/// A tree's columns of J_b and V_z per body, for the products A J and J_v V_z of
/// [`JointWork::product_aj`]: the unit columns apart, the others two by two (lanes).
#[derive(Debug, Clone)]
struct JvColumns {
    /// Per tree body: its pairs and its other unit columns (ranges of `pairs`, `units`).
    ranges: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Per tree body: the number m of its leading columns c = 0..m that are unit columns e_c
    /// of coordinates in one block at its columns 0..m (a free root's; not in `units`).
    lead: Vec<usize>,
    pairs: Vec<JvPair>,
    /// (coordinate, u): J_b's column is the unit vector e_u (entries exactly 1 and 0) and V_z's
    /// is 0.
    units: Vec<(usize, usize)>,
}

/// Two columns of a tree body's J_b and V_z side by side (lane 1 zero and unused if `lanes` is
/// 1), both with or both without a non-zero entry in V_z (a zero column of V_z adds exact
/// zeros: left out).
#[derive(Debug, Clone, Copy, Default)]
struct JvPair {
    cols: [usize; 2],
    lanes: usize,
    j: [[f64; 2]; 6],
    v: [[f64; 2]; 6],
    with_vz: bool,
}

impl JvColumns {
    fn new(tree: &Tree) -> Self {
        let m = tree.bodies.len() * tree.n_coords();
        Self {
            ranges: vec![(0..0, 0..0); tree.bodies.len()],
            lead: vec![0; tree.bodies.len()],
            pairs: vec![JvPair::default(); m],
            units: vec![(0, 0); m],
        }
    }

    /// The columns of J (`kin`) and V_z (`vz`, rows as J) over [`Tree::jac_cols`] (the others
    /// are exactly 0), in the order of the columns within each kind.
    fn gather(&mut self, tree: &Tree, kin: &TreeKin, vz: &[f64]) {
        let n = tree.n_coords();
        let (mut np, mut nu) = (0, 0);
        let block0 = tree.coords.first().map(|&vi| vi / 6);
        for (lb, cols) in tree.jac_cols.iter().enumerate() {
            let (p0, u0) = (np, nu);
            let mut lead = 0;
            // Per kind (without, with V_z): the pair waiting for its second column.
            let mut open: [Option<usize>; 2] = [None, None];
            for &c in cols {
                let j: [f64; 6] = std::array::from_fn(|k| kin.jac[(6 * lb + k) * n + c]);
                let v: [f64; 6] = std::array::from_fn(|k| vz[(6 * lb + k) * n + c]);
                let with_vz = v != [0.0; 6];
                let unit = j
                    .iter()
                    .position(|&e| e != 0.0)
                    .filter(|&u| !with_vz && j[u] == 1.0 && j[u + 1..].iter().all(|&e| e == 0.0));
                if let Some(u) = unit {
                    let vi = tree.coords[c];
                    if c == lead && u == c && vi % 6 == c && Some(vi / 6) == block0 {
                        lead += 1;
                    } else {
                        self.units[nu] = (c, u);
                        nu += 1;
                    }
                    continue;
                }
                let kind = usize::from(with_vz);
                match open[kind].take() {
                    Some(at) => {
                        let p = &mut self.pairs[at];
                        p.cols[1] = c;
                        p.lanes = 2;
                        for k in 0..6 {
                            p.j[k][1] = j[k];
                            p.v[k][1] = v[k];
                        }
                    }
                    None => {
                        self.pairs[np] = JvPair {
                            cols: [c, c],
                            lanes: 1,
                            j: std::array::from_fn(|k| [j[k], 0.0]),
                            v: std::array::from_fn(|k| [v[k], 0.0]),
                            with_vz,
                        };
                        open[kind] = Some(np);
                        np += 1;
                    }
                }
            }
            self.ranges[lb] = (p0..np, u0..nu);
            self.lead[lb] = lead;
        }
    }
}

/// The six entries of block `b` of a velocity-level vector.
#[inline]
fn block6(x: &[f64], b: usize) -> [f64; 6] {
    let mut o = [0.0; 6];
    o.copy_from_slice(&x[6 * b..6 * b + 6]);
    o
}

/// `dst[r][k] += 0 + src[r][k]` for the first `m` columns k of 6 × 6 blocks, two pairs (the
/// leading unit columns of [`JointWork::product_aj`]).
#[inline(always)]
fn add_lead(dst: [&mut [f64]; 2], src: [&[f64]; 2], m: usize) {
    for (dst, src) in dst.into_iter().zip(src) {
        for (d, s) in dst.chunks_exact_mut(6).zip(src.chunks_exact(6)) {
            for (d, s) in d[..m].iter_mut().zip(&s[..m]) {
                *d += 0.0 + s;
            }
        }
    }
}

/// `dst += src` for 6 × 6 blocks.
#[inline]
fn add6(dst: &mut [f64], src: &[f64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

/// Buffers for the expanded state of a model with joints, for consumers that read body poses
/// outside [`crate::MbsSystem`] (the run loop's plausibility bounds, output channels): allocated
/// once, empty for a model without joints.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    r: Vec<f64>,
    v: Vec<f64>,
}

impl Expansion {
    /// Buffers for `model` (none without joints).
    pub fn new(model: &crate::CompiledModel) -> Self {
        if model.joints.is_empty() {
            return Self::default();
        }
        Self {
            r: vec![0.0; model.n_r()],
            v: vec![0.0; model.n_v()],
        }
    }

    /// The full poses and velocities at (r, v): (r, v) themselves without joints, else the
    /// expansion ([`Joints::expand`]). No allocation.
    pub fn apply<'a>(
        &'a mut self,
        joints: &Joints,
        r: &'a [f64],
        v: &'a [f64],
    ) -> (&'a [f64], &'a [f64]) {
        if joints.is_empty() {
            return (r, v);
        }
        joints.expand(r, v, &mut self.r, &mut self.v);
        (&self.r, &self.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `models/joint_tabulated.toml` (slider → tabulated arm in the slider's travel and its own
    /// angle → massless follower link) on a free base body at the origin, so the tree has a
    /// free root whose rotation turns it.
    fn tabulated_on_a_free_base() -> crate::CompiledModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../models/joint_tabulated.toml");
        let src = std::fs::read_to_string(&path).expect("example model");
        let base = "[[bodies]]\nname = \"base\"\nmass = 4.0\nposition = [0.0, 0.0, 0.0]\ninertia = { principal = [0.2, 0.3, 0.25] }\n\n";
        let src = src
            .replace("parent = \"ground\"", "parent = \"base\"")
            .replacen("[[bodies]]", &format!("{base}[[bodies]]"), 1);
        let m =
            sm::from_toml_str(&src, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        crate::compile(&m).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The analytic columns of a root's rotation in V_z and G ([`JointWork::root_rotation_terms`])
    /// against the central differences of the tree kinematics they replace (the test oracle,
    /// `differenced_only`), at random states and random free-body accelerations q. The
    /// differences' own error: truncation (step 1e-6)² × the third derivative and round-off
    /// ε |q| / 1e-6 ≈ 1e-10 relative; measured worst 1.25e-9 relative to the column's largest
    /// entry (at least 1); bound 1e-8.
    #[test]
    fn the_root_rotation_terms_match_the_differenced_ones() {
        let model = tabulated_on_a_free_base();
        let joints = &model.joints;
        assert_eq!(joints.trees.len(), 1);
        let tree = &joints.trees[0];
        assert!(tree.root.is_some() && tree.massless.iter().any(|&m| m));
        let n = tree.n_coords();
        let mut w = JointWork::new(&model);
        let mut rng = sprung_test_support::Rng(5);
        let mut worst = 0.0f64;
        for case in 0..4 {
            let (mut r, mut v) = model.design_state();
            let root = tree.root.unwrap();
            for x in r[7 * root..7 * root + 7]
                .iter_mut()
                .chain(&mut v[6 * root..6 * root + 6])
            {
                *x += rng.sym(0.5);
            }
            let qn = r[7 * root + 3..7 * root + 7]
                .iter()
                .map(|x| x * x)
                .sum::<f64>()
                .sqrt();
            r[7 * root + 3..7 * root + 7]
                .iter_mut()
                .for_each(|x| *x /= qn);
            for &b in &tree.bodies[1..] {
                if joints.defs[b].as_ref().is_some_and(|d| d.own) {
                    r[7 * b] += rng.sym(0.2);
                    v[6 * b] += rng.sym(1.0);
                }
            }
            w.kinematics_rows(&model, &r, &v, true);
            let mut q: Vec<f64> = (0..v.len()).map(|_| rng.sym(10.0)).collect();
            w.full_lin.q.copy_from_slice(&q);
            w.project_q(&model, &mut q, None);
            for (z, &vi) in w.zdd[0].iter_mut().zip(&tree.coords) {
                *z = q[vi];
            }
            w.differenced_terms(&model, 0, &r, &v, true);
            let (vz_fd, geo_fd) = (w.vz[0].clone(), w.geo[0].clone());
            w.differenced_terms(&model, 0, &r, &v, false);
            for c in 3..6 {
                let col =
                    |m: &[f64], rows: usize| (0..rows).map(|i| m[i * n + c]).collect::<Vec<_>>();
                for (an, fd) in [
                    (
                        col(&w.vz[0], 6 * tree.bodies.len()),
                        col(&vz_fd, 6 * tree.bodies.len()),
                    ),
                    (col(&w.geo[0], n), col(&geo_fd, n)),
                ] {
                    let scale = fd.iter().fold(1.0f64, |m, x| m.max(x.abs()));
                    let err = an
                        .iter()
                        .zip(&fd)
                        .fold(0.0f64, |m, (a, f)| m.max((a - f).abs()));
                    worst = worst.max(err / scale);
                    assert!(
                        err <= 1e-8 * scale,
                        "case {case}, column {c}: {an:?} vs {fd:?}"
                    );
                }
            }
            // The other columns are the differenced ones in both paths, to the bit.
            for (i, (an, fd)) in w.geo[0].iter().zip(&geo_fd).enumerate() {
                assert!((3..6).contains(&(i % n)) || an == fd, "G entry {i}");
            }
        }
        println!("worst relative error of the analytic root rotation columns: {worst:.2e}");
    }

    #[test]
    fn the_rotation_series_match_the_closed_forms() {
        // S, A, B and the rates of A, B against their closed forms (where these have no
        // cancellation) and, near 0, against the leading terms; exp([φ]×) is orthogonal.
        for &th in &[1e-8, 1e-3, 0.05, 0.3, 0.7, 0.99, 1.01, 2.0] {
            let t2: f64 = th * th;
            let (s, a, b, da, db) = rotation_coeffs(t2, true);
            let (sn, c) = th.sin_cos();
            let want = if th > 0.2 {
                [
                    sn / th,
                    (1.0 - c) / t2,
                    (th - sn) / (t2 * th),
                    sn / (t2 * th) - 2.0 * (1.0 - c) / (t2 * t2),
                    (1.0 - c) / (t2 * t2) - 3.0 * (th - sn) / (t2 * t2 * th),
                ]
            } else {
                [
                    1.0 - t2 / 6.0 + t2 * t2 / 120.0,
                    0.5 - t2 / 24.0 + t2 * t2 / 720.0,
                    1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0,
                    -1.0 / 12.0 + t2 / 180.0,
                    -1.0 / 60.0 + t2 / 1260.0,
                ]
            };
            // Closed forms lose ≈ ε/θ² (rates ε/θ⁴) to cancellation; the truncated series ≈ θ⁶.
            let tol = if th > 0.2 {
                1e-13 / (t2 * t2)
            } else {
                1e-13 + t2 * t2 * t2
            };
            for (got, want) in [s, a, b, da, db].iter().zip(want) {
                assert!((got - want).abs() <= tol, "θ {th}: {got} vs {want}");
            }
            let phi = Vector3::new(0.6, -0.48, 0.64) * th;
            let r = rotation_vector_matrix(&phi);
            assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-15);
            assert!((r * phi - phi).norm() < 1e-15);
        }
    }
}
