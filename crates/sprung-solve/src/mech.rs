//! Mechanical second-order systems and their linear-implicit integrators.
//!
//! Source document 000, eqs. 1-11: r' = K(r) v, v' = q(r, v, u(t)). The linear-implicit
//! (Rosenbrock) methods never form the doubled first-order system: every stage solves the reduced
//! velocity-level system (I − hγ J_v − (hγ)² J_r K) Δv = …, eq. 7, and recovers Δr = K_lin(…), eq. 8.
//! Only the products J_r K (an n_v × n_v matrix) and J_v are needed, both stored block-sparse —
//! or, for the fixed-step stepper, their congruence form J = D_r G D_c ([`congruence`]), which
//! a multibody system delivers without forming the per-block transforms.

pub mod adaptive;
pub mod congruence;
pub mod explicit;
pub mod pie;
pub mod rosenbrock;
pub mod tableau;

use std::sync::Arc;

use crate::block::{BlockMatrix, BlockPattern};

pub use congruence::Congruence;
pub use pie::PartlyImplicitEuler;
pub use rosenbrock::{Breakpoints, RosenbrockStepper, SPLIT_TOLERANCE, StepError};
pub use tableau::Tableau;

/// Linearisation of v' = q at one state (document 000, eqs. 4-5).
#[derive(Debug, Clone)]
pub struct Linearisation {
    /// q at the linearisation point.
    pub q: Vec<f64>,
    /// J_v = ∂q/∂v, or G_v when `congruent`.
    pub j_v: BlockMatrix,
    /// J_r K = (∂q/∂r) K(r), or G_rK when `congruent`.
    pub j_rk: BlockMatrix,
    /// Whether `j_v` and `j_rk` hold the congruence form G with J = D_r G D_c
    /// ([`congruence`]); only [`MechanicalSystem::linearise_congruent`] sets it.
    pub congruent: bool,
    /// D_r and D_c of the congruence form (meaningful when `congruent`).
    pub congruence: Congruence,
    /// J_u u̇: the explicit time derivative of q through the inputs.
    pub q_t: Vec<f64>,
    /// Position vector at the linearisation point (K_lin = K(r_lin)).
    pub r: Vec<f64>,
}

impl Linearisation {
    /// Zero linearisation for a system of the given shape.
    pub fn new(n_r: usize, pattern: Arc<BlockPattern>) -> Self {
        let n_v = pattern.dim();
        Self {
            q: vec![0.0; n_v],
            j_v: BlockMatrix::zeros(pattern.clone()),
            congruent: false,
            congruence: Congruence::new(&pattern),
            j_rk: BlockMatrix::zeros(pattern),
            q_t: vec![0.0; n_v],
            r: vec![0.0; n_r],
        }
    }

    /// Turns a congruence-form linearisation into the plain J_v, J_r K (no-op if plain).
    pub fn expand(&mut self) {
        if self.congruent {
            self.congruence.expand(&mut self.j_v);
            self.congruence.expand(&mut self.j_rk);
            self.congruent = false;
        }
    }
}

/// A mechanical system in the form of document 000, eq. 1.
pub trait MechanicalSystem {
    /// Number of position coordinates r.
    fn n_r(&self) -> usize;
    /// Number of velocity coordinates v (degrees of freedom).
    fn n_v(&self) -> usize;
    /// Number of generalised speeds z: the leading coordinates of v. The others, v[n_speeds..],
    /// are first-order states s of force elements (document 002, eq. 3: s' = f in the same rows
    /// of q, no position coordinates, K(r) has zero columns there); the partly implicit Euler
    /// ([`pie`]) treats them separately. A whole number of pattern blocks. Default: all of v.
    fn n_speeds(&self) -> usize {
        self.n_v()
    }
    /// Block pattern of J_v and J_r K.
    fn pattern(&self) -> Arc<BlockPattern>;
    /// Velocity coordinates that carry nothing (length n_v, `true` = inert), if the system
    /// has any: at every state, an inert v_j has zero rows and columns in J_v and J_r K of
    /// every linearisation in the plain form (zero entries where the pattern stores them), so
    /// the iteration matrix is the identity in its row and column (a system that delivers the
    /// congruence form keeps the block products). A system in relative coordinates that
    /// keeps one block per body has them (a massless follower's block, a joint coordinate's
    /// padding, whose rates are 0 too and which stay 0; [`crate::compact`]); the fixed-step
    /// Rosenbrock stepper then forms its stage products on the active coordinates alone when
    /// that is cheaper, and a [`crate::compact::CompactInverse`] solves on them. Asked once
    /// when a stepper is created. Default `None`.
    fn inert_velocity_slots(&self) -> Option<Vec<bool>> {
        None
    }
    /// Generalised accelerations q(r, v, u(t)).
    fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]);
    /// The element-state rates alone, s' = f(r, v, u(t)) (document 002, eq. 3): writes
    /// q[n_speeds..] exactly as [`Self::accelerations`] would (bit for bit) and may leave
    /// q[..n_speeds] as it was. For methods that need f without the accelerations (the partly
    /// implicit Euler's state step, [`pie`]); a system can skip the work f does not depend on
    /// (the bodies' Newton–Euler, the elements without states). It need not take part in
    /// [`Self::segment_changes`] (it may evaluate only some of the characteristics).
    /// Default: [`Self::accelerations`].
    fn state_rates(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        self.accelerations(t, r, v, q);
    }
    /// q, J_v, J_r K and J_u u̇ at (t, r, v); also stores r into `lin.r`.
    fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation);
    /// Like [`MechanicalSystem::linearise`], but the system may deliver the congruence form
    /// (`lin.congruent`, [`congruence`]): cheaper to form, and all the fixed-step Rosenbrock
    /// stepper needs. The default delivers the plain form.
    fn linearise_congruent(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        self.linearise(t, r, v, lin);
    }

    /// ṙ = K(r) v.
    fn kinematics(&self, r: &[f64], v: &[f64], r_dot: &mut [f64]);
    /// An upper bound of the largest |entry| of K(r) v, for tests against a tolerance that
    /// need the exact value only near it (the split decision of the fixed-step stepper). The
    /// default computes K(r) v into `scratch` (length n_r) and returns the exact value.
    fn kinematics_max_abs_bound(&self, r: &[f64], v: &[f64], scratch: &mut [f64]) -> f64 {
        self.kinematics(r, v, scratch);
        scratch.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }
    /// A constant κ with max |K(r) x| ≤ κ max |x[..n_speeds]| for every r on the manifold and
    /// every x (K has zero columns at element states), if the system knows one. The split
    /// decision of the fixed-step stepper then screens a step with one pass over the stage
    /// increments before it forms the indicator and asks [`Self::kinematics_max_abs_bound`];
    /// the decision stays the same when κ max |x| bounds that bound too. Default `None`.
    fn kinematics_gain(&self) -> Option<f64> {
        None
    }
    /// Per velocity coordinate v_j, a scale ℓ_j that makes the fixed-step stepper's local error
    /// indicator a displacement in metres for every kind of coordinate: the stepper measures
    /// max_i |(K(r) (ℓ ∘ x))_i| for a velocity-space error x instead of max_i |(K(r) x)_i|
    /// (`docs/solvers.md`, *Split norm per coordinate kind*). For a system whose K maps each
    /// speed only into position coordinates of its own kind (translations into positions, a
    /// body's angular velocity into its quaternion) this weights position coordinate i by the
    /// ℓ of the speeds that drive it: 1 for a translation (m), twice a characteristic length
    /// of the body for a quaternion component (a quaternion error δq turns a point at distance
    /// L by ≈ 2 L |δq|). Entries of element states (no position coordinates, zero columns of K)
    /// do not enter the indicator. Length n_v; asked once when the stepper is created; must be
    /// finite and > 0. Default `None`: every ℓ_j = 1 (positions and quaternion components
    /// measured alike). A scaled [`Self::kinematics_gain`] and
    /// [`Self::kinematics_max_abs_bound`] stay valid: they bound K(r) x for any x, here ℓ ∘ x.
    fn error_scales(&self) -> Option<Vec<f64>> {
        None
    }
    /// Left inverse of the kinematics matrix, w = L(r) Δr with L(r) K(r) = I: maps a position
    /// increment to the velocity-space (tangent) increment, so that J_r Δr = (J_r K) L Δr.
    fn tangent(&self, r: &[f64], dr: &[f64], w: &mut [f64]);
    /// Projects r back onto its manifold after a step (e.g. normalises quaternions).
    fn project(&self, _r: &mut [f64]) {}

    /// Whether K depends on r, i.e. whether G = ∂(K(r) v)/∂r, the kinematic block of the full
    /// Jacobian, is non-zero. Methods that need the exact Jacobian (not W-methods) then include
    /// it in their stages through the three methods below; the defaults describe a constant K.
    fn has_kinematic_jacobian(&self) -> bool {
        false
    }

    /// `out = G x` with G = ∂(K(r) v)/∂r at (r, v); x and out are position-space vectors.
    fn kinematic_jacobian(&self, _r: &[f64], _v: &[f64], _x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }

    /// `x ← (I − c G)⁻¹ x` (position space) with G at (r, v).
    fn kinematic_solve(&self, _r: &[f64], _v: &[f64], _c: f64, _x: &mut [f64]) {}

    /// `y ← L (I − c G)⁻¹ K y` (velocity space) with L, G and K at (r, v): the same operator
    /// seen in the tangent coordinates of the reduced system. Must act within each block of the
    /// [`MechanicalSystem::pattern`] (one body's coordinates).
    fn kinematic_tangent_solve(&self, _r: &[f64], _v: &[f64], _c: f64, _y: &mut [f64]) {}

    /// Breakpoint hook of the fixed-step steppers: a counter, never decreasing, of the
    /// evaluations of q ([`MechanicalSystem::accelerations`]) whose piecewise characteristics
    /// (e.g. a damper table) were on a different segment than at the last linearisation — the
    /// Jacobian of that linearisation then holds slopes that no longer apply. The stepper
    /// compares the counter before and after evaluations; it knows nothing of curves. The
    /// default (0, never changes) describes a smooth system.
    fn segment_changes(&self) -> u64 {
        0
    }
}
