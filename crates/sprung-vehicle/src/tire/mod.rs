//! The tire force-law interface: what every tire model (TMeasy, Pacejka 2002) implements.
//!
//! A tire model sees the wheel in the **contact frame** (ISO 8855, `../shared/data/vehicle-reference.md`,
//! "Conventions" and TMeasy step 1): origin at the contact point, x along the wheel's heading in
//! the road plane (x = spin axis × road normal, forward), z the road normal (up), y = z × x
//! (left). Forces and moments it returns act **on the wheel**, from the road, in that frame and
//! about the contact point. The wheel–road contact computes the kinematics below from the wheel
//! marker and the road, the vertical force from [`VerticalLaw`], and moves the wrench to the
//! wheel centre.
//!
//! Sign conventions all models follow: a wheel sliding to the left (vy > 0) gets a lateral force
//! to the right (Fy < 0); a driven wheel (ω r_e > vx) gets Fx > 0; ω > 0 is forward rolling.

use std::fmt::Debug;

use sprung_mbs::elements::{ElementParams, ParamInfo};

/// Number of kinematic inputs of a tire force law (the columns of [`TirePartials::kin`]).
pub const N_KIN: usize = 7;
/// Index of each kinematic input in [`SlipKinematics::as_array`] and [`TirePartials::kin`].
pub mod kin {
    /// Vertical force Fz, N.
    pub const FZ: usize = 0;
    /// Tire deflection (penetration) ρ, m.
    pub const RHO: usize = 1;
    /// Longitudinal velocity of the wheel centre in the contact frame, m/s.
    pub const VX: usize = 2;
    /// Lateral velocity of the contact point in the contact frame, m/s.
    pub const VY: usize = 3;
    /// Spin rate about the wheel axis, rad/s.
    pub const OMEGA: usize = 4;
    /// Camber (inclination) angle γ, rad.
    pub const GAMMA: usize = 5;
    /// Turn slip rate: the yaw rate of the contact frame about the road normal, rad/s (bore torque).
    pub const PSI_DOT: usize = 6;
}

/// Number of force outputs (Fx, Fy, Mx, My, Mz) of a tire force law.
pub const N_FORCES: usize = 5;
/// The most internal states a tire force law may have.
pub const MAX_STATES: usize = 4;

/// What a tire force law is evaluated at (contact-frame kinematics, module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SlipKinematics {
    /// Vertical force from the contact law, N (≥ 0; 0 = lifted off).
    pub fz: f64,
    /// Tire deflection (penetration of the undeformed tire into the road) ρ, m (≥ 0).
    pub rho: f64,
    /// Longitudinal velocity of the wheel centre along the contact x axis, m/s.
    pub vx: f64,
    /// Lateral velocity of the contact point along the contact y axis, m/s.
    pub vy: f64,
    /// Spin rate of the wheel about its axis relative to the road, rad/s (ω > 0 rolls forward).
    pub omega: f64,
    /// Camber angle γ between the wheel plane and the road normal, rad (positive: top of the
    /// wheel leans to the left, i.e. about +x).
    pub gamma: f64,
    /// Yaw rate of the contact frame about the road normal, rad/s (turn slip, bore torque).
    pub psi_dot: f64,
    /// Road friction coefficient at the contact point (the road's μ; laws scale their own
    /// measured friction by μ / μ_reference as their documentation states).
    pub mu_road: f64,
}

impl SlipKinematics {
    /// The kinematic inputs in the order of [`kin`].
    pub fn as_array(&self) -> [f64; N_KIN] {
        [
            self.fz,
            self.rho,
            self.vx,
            self.vy,
            self.omega,
            self.gamma,
            self.psi_dot,
        ]
    }

    /// Sets the kinematic inputs from an array in the order of [`kin`] (`mu_road` unchanged).
    pub fn set_array(&mut self, a: &[f64; N_KIN]) {
        self.fz = a[kin::FZ];
        self.rho = a[kin::RHO];
        self.vx = a[kin::VX];
        self.vy = a[kin::VY];
        self.omega = a[kin::OMEGA];
        self.gamma = a[kin::GAMMA];
        self.psi_dot = a[kin::PSI_DOT];
    }
}

/// Forces and moments on the wheel in the contact frame, about the contact point.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TireForces {
    /// Longitudinal force, N.
    pub fx: f64,
    /// Lateral force, N.
    pub fy: f64,
    /// Overturning moment, N m.
    pub mx: f64,
    /// Rolling-resistance moment, N m.
    pub my: f64,
    /// Aligning (and bore) moment, N m.
    pub mz: f64,
}

impl TireForces {
    /// (Fx, Fy, Mx, My, Mz).
    pub fn as_array(&self) -> [f64; N_FORCES] {
        [self.fx, self.fy, self.mx, self.my, self.mz]
    }
}

/// Analytic partials of a tire force law: rows (Fx, Fy, Mx, My, Mz, ṡ₀, …, ṡ_{n−1}), columns
/// the kinematic inputs ([`kin`]) and the states. Rows and columns beyond the law's own number
/// of states are unused (left zero).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TirePartials {
    /// ∂(forces, rates)/∂(kinematic inputs).
    pub kin: [[f64; N_KIN]; N_FORCES + MAX_STATES],
    /// ∂(forces, rates)/∂(states).
    pub states: [[f64; MAX_STATES]; N_FORCES + MAX_STATES],
}

impl Default for TirePartials {
    fn default() -> Self {
        Self {
            kin: [[0.0; N_KIN]; N_FORCES + MAX_STATES],
            states: [[0.0; MAX_STATES]; N_FORCES + MAX_STATES],
        }
    }
}

/// How the vertical stiffness of a tire depends on its deflection ρ.
#[derive(Debug, Clone, PartialEq)]
pub enum VerticalStiffness {
    /// F = k ρ.
    Linear {
        /// Stiffness, N/m.
        k: f64,
    },
    /// F = d1 ρ + d2 ρ² (TMeasy; `../shared/data/vehicle-reference.md`, TMeasy step 2).
    Quadratic {
        /// Linear coefficient, N/m.
        d1: f64,
        /// Quadratic coefficient, N/m².
        d2: f64,
    },
    /// A table F(ρ), interpolated by the model crate's curves (monotone, through (0, 0)).
    Table {
        /// Deflections, m (increasing, starting at 0).
        rho: Vec<f64>,
        /// Forces, N.
        force: Vec<f64>,
    },
}

/// The vertical (normal) contact law of a tire: stiffness, damping, no tension, bottoming on the
/// rim. Given by the tire model from its parameters; evaluated by the wheel–road contact.
#[derive(Debug, Clone, PartialEq)]
pub struct VerticalLaw {
    /// Unloaded radius R0, m.
    pub unloaded_radius: f64,
    /// Tire width, m (for the contact patch and the overturning moment).
    pub width: f64,
    /// Stiffness over deflection.
    pub stiffness: VerticalStiffness,
    /// Vertical damping d_z, N s/m (acts on the deflection rate; the total force never pulls).
    pub damping: f64,
    /// Rim radius, m: below R0 − ρ = rim radius + 0.01 m the bottoming stiffness adds
    /// (TMeasy step 2).
    pub rim_radius: f64,
    /// Bottoming (rim) stiffness, N/m (TMeasy default 5 d1).
    pub bottoming_stiffness: f64,
}

/// A tire force law (module docs). Implementations hold their parameters and are immutable;
/// states live in the simulation's data.
pub trait TireModel: Send + Sync + Debug + Sized + 'static {
    /// Element kind name in model files (`type = "tmeasy"`).
    const KIND: &'static str;
    /// One line with the source of the law (printed by `sprung elements`).
    const DESCRIPTION: &'static str;
    /// The parameters of an `[[elements]]` entry of this kind (besides the contact's own, which
    /// the element adds: none today).
    const PARAMETERS: &'static [ParamInfo];
    /// Names of the internal states (at most [`MAX_STATES`]), e.g. `["x_e", "y_e"]`.
    const STATES: &'static [&'static str];
    /// Which kinematic inputs (in the order of [`kin`]) the law's forces and rates depend on:
    /// the tire element skips the others in its chain rule (their columns of
    /// [`TirePartials::kin`] must be zero; an input skipped wrongly shows in the element's
    /// finite-difference partials test). Default: all.
    const KIN_USED: [bool; N_KIN] = [true; N_KIN];

    /// Builds the law from an `[[elements]]` entry. File parameters (names `file` or ending in
    /// `_file`) arrive as paths already resolved against the model file's folder. Errors say
    /// what to fix (the caller adds the element's name and location).
    fn from_params(p: &ElementParams) -> Result<Self, String>;

    /// The vertical contact law.
    fn vertical(&self) -> VerticalLaw;

    /// Effective rolling radius r_e at a load: the radius for which a free-rolling wheel has
    /// vx = ω r_e (used by the contact's outputs and by the tire test rig to set slips), m.
    fn effective_radius(&self, fz: f64, rho: f64) -> f64;

    /// Forces, moments and state rates at `k` and `states`. Must not allocate.
    fn evaluate(&self, k: &SlipKinematics, states: &[f64], out: &mut TireForces, rates: &mut [f64]);

    /// The forces with every internal state at its steady state for `k` (the characteristic
    /// itself; the tire test rig's steady sweeps). Must not allocate.
    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces);

    /// Analytic partials of [`TireModel::evaluate`]. `jac` arrives zeroed (callers pass
    /// `TirePartials::default()`): a law writes its nonzero entries. Must not allocate.
    fn partials(&self, k: &SlipKinematics, states: &[f64], jac: &mut TirePartials);

    /// [`TireModel::evaluate`] and [`TireModel::partials`] in one call (what the tire element
    /// needs for its Jacobian). Laws that differentiate by dual numbers override it to take the
    /// forces and rates from the same pass. Must not allocate.
    #[inline(always)]
    fn evaluate_with_partials(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
        jac: &mut TirePartials,
    ) {
        self.evaluate(k, states, out, rates);
        self.partials(k, states, jac);
    }

    /// [`TireModel::evaluate_with_partials`] that also returns the effective rolling radius at
    /// `k` (bit for bit [`TireModel::effective_radius`]`(k.fz, k.rho)`): laws whose pass
    /// computes it anyway return that value instead of computing it again. Must not allocate.
    #[inline(always)]
    fn evaluate_with_partials_and_radius(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
        jac: &mut TirePartials,
    ) -> f64 {
        self.evaluate_with_partials(k, states, out, rates, jac);
        self.effective_radius(k.fz, k.rho)
    }

    /// The load the parameters are referred to (PAC2002 FNOMIN, TMeasy pn), N, if the law has
    /// one: the tire test rig's default load.
    fn nominal_load(&self) -> Option<f64> {
        None
    }
}

pub mod linear;
pub mod pac2002;
pub mod tmeasy;
