//! The linear tire (`type = "tire_linear"`): linear longitudinal and cornering stiffness with
//! first-order relaxation through carcass deflection states; no friction limit.
//!
//! The transient-slip model of Pacejka (*Tire and Vehicle Dynamics*, 3rd ed., §7.2, the
//! "stretched string" first-order approximation) written in the contact-point deflections u_x,
//! u_y (m) as states, so that it stays regular at standstill (the same idea as Rill's first-order
//! tire dynamics, `../shared/data/vehicle-reference.md`, end of the TMeasy section):
//!
//! ```text
//! V_sx = v_x − ω r_e,   r_e = R₀ − ρ/3                     (slip velocities, TMeasy step 3)
//! u̇_x = −V_sx − |v_x| u_x / σ_x,   u̇_y = −v_y − |v_x| u_y / σ_y
//! F_x = c_x u_x + d_x u̇_x,   F_y = c_y u_y + d_y u̇_y,   c_x = C_κ F_z/F_z0 / σ_x, c_y = C_α F_z/F_z0 / σ_y
//! M_y = −f_r F_z R₀ tanh(ω / 1 rad/s),   M_z = −t_p F_y,   M_x = 0
//! ```
//!
//! In steady state (u̇ = 0) F_x = C_κ κ F_z/F_z0 with κ = −V_sx/|v_x| and F_y = C_α α F_z/F_z0
//! with α = −v_y/|v_x|: the linear characteristic with stiffnesses proportional to the load. After
//! a step in slip at constant speed v the deflection relaxes as u(t) = u_ss (1 − e^{−v t/σ}) and
//! the force F(t) = F_ss (1 − e^{−v t/σ}) + d (v/σ) u_ss e^{−v t/σ} (d = 0: the classical
//! first-order response with relaxation length σ). At standstill the deflections integrate the
//! slip velocities: the tire is a spring c (C/σ) with damper d in each direction, so a parked
//! wheel holds on a slope.
//!
//! **No saturation**: forces grow linearly with slip; the law is meant for small slips (linear
//! handling, tests of the contact and element against closed-form results), TMeasy and PAC2002
//! for anything near the friction limit. The road's μ is not used.

use sprung_mbs::elements::{ElementParams, ParamInfo};

use super::{
    SlipKinematics, TireForces, TireModel, TirePartials, VerticalLaw, VerticalStiffness, kin,
};

/// Speed scale of the rolling-resistance sign function, rad/s.
const OMEGA_REF: f64 = 1.0;
/// Smallest |v_x| used by [`TireModel::steady_state`] (the characteristic is singular at 0), m/s.
const V_MIN_STEADY: f64 = 1e-6;

/// The linear tire law (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LinearTire {
    /// Unloaded radius R₀, m.
    pub unloaded_radius: f64,
    /// Vertical contact law.
    pub vertical: VerticalLaw,
    /// Nominal load F_z0 at which the stiffnesses are given, N.
    pub nominal_load: f64,
    /// Longitudinal slip stiffness C_κ at F_z0, N (per unit slip).
    pub longitudinal_stiffness: f64,
    /// Cornering stiffness C_α at F_z0, N/rad.
    pub cornering_stiffness: f64,
    /// Longitudinal relaxation length σ_x, m.
    pub relaxation_x: f64,
    /// Lateral relaxation length σ_y, m.
    pub relaxation_y: f64,
    /// Longitudinal carcass damping d_x, N s/m.
    pub damping_x: f64,
    /// Lateral carcass damping d_y, N s/m.
    pub damping_y: f64,
    /// Rolling-resistance coefficient f_r.
    pub rolling_resistance: f64,
    /// Pneumatic trail t_p, m.
    pub pneumatic_trail: f64,
}

const PARAMETERS: &[ParamInfo] = &[
    ParamInfo::new("unloaded_radius", "m", "unloaded radius R0", None),
    ParamInfo::new("width", "m", "tire width", Some(0.2)),
    ParamInfo::new(
        "vertical_stiffness",
        "N/m",
        "linear vertical stiffness",
        None,
    ),
    ParamInfo::new(
        "vertical_damping",
        "N s/m",
        "vertical damping on the deflection rate",
        Some(0.0),
    ),
    ParamInfo::new(
        "rim_radius",
        "m",
        "rim radius (default 0.7 R0); bottoming below rim radius + 0.01 m",
        Some(f64::NAN),
    ),
    ParamInfo::new(
        "bottoming_stiffness",
        "N/m",
        "rim (bottoming) stiffness (default 5 x vertical_stiffness)",
        Some(f64::NAN),
    ),
    ParamInfo::new(
        "nominal_load",
        "N",
        "load F_z0 at which the slip stiffnesses are given (they scale with F_z/F_z0)",
        None,
    ),
    ParamInfo::new(
        "longitudinal_stiffness",
        "N",
        "longitudinal slip stiffness C_kappa = dFx/dkappa at F_z0",
        None,
    ),
    ParamInfo::new(
        "cornering_stiffness",
        "N/rad",
        "cornering stiffness C_alpha = dFy/dalpha at F_z0",
        None,
    ),
    ParamInfo::new(
        "relaxation_length_x",
        "m",
        "longitudinal relaxation length sigma_x",
        Some(0.1),
    ),
    ParamInfo::new(
        "relaxation_length_y",
        "m",
        "lateral relaxation length sigma_y",
        Some(0.3),
    ),
    ParamInfo::new(
        "damping_x",
        "N s/m",
        "longitudinal carcass damping d_x (default 0)",
        Some(0.0),
    ),
    ParamInfo::new(
        "damping_y",
        "N s/m",
        "lateral carcass damping d_y (default 0)",
        Some(0.0),
    ),
    ParamInfo::new(
        "rolling_resistance",
        "-",
        "rolling-resistance coefficient f_r",
        Some(0.0),
    ),
    ParamInfo::new(
        "pneumatic_trail",
        "m",
        "pneumatic trail t_p (M_z = -t_p F_y)",
        Some(0.0),
    ),
];

impl LinearTire {
    /// Slip velocity V_sx and r_e at `k`.
    fn slip(&self, k: &SlipKinematics) -> (f64, f64) {
        let re = self.effective_radius(k.fz, k.rho);
        (k.vx - k.omega * re, re)
    }

    /// Carcass stiffnesses (c_x, c_y) at the load, N/m.
    fn stiffness(&self, fz: f64) -> (f64, f64) {
        let q = fz / self.nominal_load;
        (
            self.longitudinal_stiffness * q / self.relaxation_x,
            self.cornering_stiffness * q / self.relaxation_y,
        )
    }
}

impl TireModel for LinearTire {
    const KIND: &'static str = "tire_linear";
    const DESCRIPTION: &'static str = "linear tire: slip and cornering stiffness proportional to load, first-order relaxation by carcass deflection states, no friction limit (Pacejka, Tire and Vehicle Dynamics, sec. 7.2)";
    const PARAMETERS: &'static [ParamInfo] = PARAMETERS;
    const STATES: &'static [&'static str] = &["u_x", "u_y"];
    /// Camber and ψ̇ do not enter the law.
    const KIN_USED: [bool; super::N_KIN] = [true, true, true, true, true, false, false];

    fn from_params(p: &ElementParams) -> Result<Self, String> {
        let r0 = p.positive("unloaded_radius")?;
        let k = p.positive("vertical_stiffness")?;
        let rim = p.number("rim_radius")?;
        let rim = if rim.is_nan() { 0.7 * r0 } else { rim };
        if !(rim > 0.0 && rim + super::super::contact::RIM_CLEARANCE < r0) {
            return Err(format!(
                "rim_radius = {rim} must be positive and below unloaded_radius − 0.01 m = {}",
                r0 - 0.01
            ));
        }
        let kb = p.number("bottoming_stiffness")?;
        let kb = if kb.is_nan() { 5.0 * k } else { kb };
        if kb < 0.0 {
            return Err(format!("bottoming_stiffness = {kb} must not be negative"));
        }
        Ok(Self {
            unloaded_radius: r0,
            vertical: VerticalLaw {
                unloaded_radius: r0,
                width: p.positive("width")?,
                stiffness: VerticalStiffness::Linear { k },
                damping: p.non_negative("vertical_damping")?,
                rim_radius: rim,
                bottoming_stiffness: kb,
            },
            nominal_load: p.positive("nominal_load")?,
            longitudinal_stiffness: p.positive("longitudinal_stiffness")?,
            cornering_stiffness: p.positive("cornering_stiffness")?,
            relaxation_x: p.positive("relaxation_length_x")?,
            relaxation_y: p.positive("relaxation_length_y")?,
            damping_x: p.non_negative("damping_x")?,
            damping_y: p.non_negative("damping_y")?,
            rolling_resistance: p.non_negative("rolling_resistance")?,
            pneumatic_trail: p.number("pneumatic_trail")?,
        })
    }

    fn vertical(&self) -> VerticalLaw {
        self.vertical.clone()
    }

    fn effective_radius(&self, _fz: f64, rho: f64) -> f64 {
        self.unloaded_radius - rho / 3.0
    }

    #[inline(always)]
    fn evaluate(&self, k: &SlipKinematics, s: &[f64], out: &mut TireForces, rates: &mut [f64]) {
        let (vsx, _) = self.slip(k);
        let (cx, cy) = self.stiffness(k.fz);
        let av = k.vx.abs();
        let dux = -vsx - av * s[0] / self.relaxation_x;
        let duy = -k.vy - av * s[1] / self.relaxation_y;
        rates[0] = dux;
        rates[1] = duy;
        out.fx = cx * s[0] + self.damping_x * dux;
        out.fy = cy * s[1] + self.damping_y * duy;
        out.mx = 0.0;
        out.my =
            -self.rolling_resistance * k.fz * self.unloaded_radius * (k.omega / OMEGA_REF).tanh();
        out.mz = -self.pneumatic_trail * out.fy;
    }

    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces) {
        let (vsx, _) = self.slip(k);
        let q = k.fz / self.nominal_load;
        let av = k.vx.abs().max(V_MIN_STEADY);
        out.fx = -self.longitudinal_stiffness * q * vsx / av;
        out.fy = -self.cornering_stiffness * q * k.vy / av;
        out.mx = 0.0;
        out.my =
            -self.rolling_resistance * k.fz * self.unloaded_radius * (k.omega / OMEGA_REF).tanh();
        out.mz = -self.pneumatic_trail * out.fy;
    }

    #[inline(always)]
    fn partials(&self, k: &SlipKinematics, s: &[f64], jac: &mut TirePartials) {
        let re = self.effective_radius(k.fz, k.rho);
        let (cx, cy) = self.stiffness(k.fz);
        let (sx, sy) = (self.relaxation_x, self.relaxation_y);
        let av = k.vx.abs();
        let sgn = if k.vx > 0.0 {
            1.0
        } else if k.vx < 0.0 {
            -1.0
        } else {
            0.0
        };
        // Rates u̇_x (row 5), u̇_y (row 6) over the kinematic inputs.
        let mut dux = [0.0; 7];
        dux[kin::RHO] = -k.omega / 3.0;
        dux[kin::VX] = -1.0 - sgn * s[0] / sx;
        dux[kin::OMEGA] = re;
        let mut duy = [0.0; 7];
        duy[kin::VX] = -sgn * s[1] / sy;
        duy[kin::VY] = -1.0;
        jac.kin[5] = dux;
        jac.kin[6] = duy;
        jac.states[5][0] = -av / sx;
        jac.states[6][1] = -av / sy;
        // F_x (row 0), F_y (row 1).
        for c in 0..7 {
            jac.kin[0][c] = self.damping_x * dux[c];
            jac.kin[1][c] = self.damping_y * duy[c];
        }
        // c ∝ F_z: ∂(c u)/∂F_z = C/(F_z0 σ) u.
        jac.kin[0][kin::FZ] += self.longitudinal_stiffness / (self.nominal_load * sx) * s[0];
        jac.kin[1][kin::FZ] += self.cornering_stiffness / (self.nominal_load * sy) * s[1];
        jac.states[0][0] = cx - self.damping_x * av / sx;
        jac.states[1][1] = cy - self.damping_y * av / sy;
        // M_y (row 3).
        let th = (k.omega / OMEGA_REF).tanh();
        let frr = self.rolling_resistance * self.unloaded_radius;
        jac.kin[3][kin::FZ] = -frr * th;
        jac.kin[3][kin::OMEGA] = -frr * k.fz * (1.0 - th * th) / OMEGA_REF;
        // M_z = −t_p F_y (row 4).
        for c in 0..7 {
            jac.kin[4][c] = -self.pneumatic_trail * jac.kin[1][c];
        }
        for c in 0..2 {
            jac.states[4][c] = -self.pneumatic_trail * jac.states[1][c];
        }
    }
}
