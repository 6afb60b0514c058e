//! TMeasy, the handling tire model of G. Rill ("TMeasy – The Handling Tire Model for all Driving
//! Situations", DINAME 2013, cited by source document 002), in the form the data sheet
//! `../shared/data/vehicle-reference.md` ("TMeasy tire (Rill) as implemented in Chrono", steps
//! 1–10, and "Variants to state") describes, with Rill's normalised combined slip and Rill's
//! first-order tire dynamics. Equations, variants and parameters: `docs/tire-tmeasy.md`.
//!
//! * vertical law (step 2): F = d1 ρ + d2 ρ² (from `cz`, `d1`/`d2` or a spring curve fitted by
//!   least squares as Chrono does), damping dz, bottoming on the rim ([`TireModel::vertical`]);
//! * load dependence between pn and 2 pn (step 4), road friction scaling μ_road/μ0;
//! * combined slip in Rill's normalised form (step 5, note), the generalised characteristic
//!   (step 6) with the s_M-moving slope rule, aligning torque by the pneumatic trail (step 8),
//!   rolling resistance and overturning moment (step 9), bore torque;
//! * states x_e, y_e (longitudinal and lateral deflection of the contact patch, m) and b_e (bore
//!   deflection at the bore radius, m), integrated with the system (document 002, eqs. 3, 6, 7):
//!   ẋ_e = (−v_t c_x x_e − f_sx v_sx)/(v_t d_x + f_sx), F_x = c_x x_e + d_x ẋ_e, likewise y and
//!   bore. The transport velocity v_t = R_eff |ω| + v_N never vanishes, so standstill and start-up
//!   have no slip singularity: at standstill the contact patch is a spring–damper.
//!
//! Partials are exact: the law is written once over [`dual::Real`] and differentiated in forward
//! mode ([`dual::Dual`]), no finite differences.

pub mod chrono_json;

pub mod law;
pub mod params;

use sprung_mbs::elements::{ElementParams, ParamInfo};

use self::law::{LawIn, LawOut};
pub use self::params::{Curve, DEFAULT_V_N, TmeasyParams, VerticalInput};
use super::{
    N_FORCES, N_KIN, SlipKinematics, TireForces, TireModel, TirePartials, VerticalLaw,
    VerticalStiffness,
};
use crate::dual::{Dual, Real};

/// Number of TMeasy states (x_e, y_e, b_e).
pub const N_STATES: usize = 3;

/// The TMeasy tire force law (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Tmeasy {
    /// The parameters.
    pub params: TmeasyParams,
}

impl Tmeasy {
    /// A law from checked parameters.
    pub fn new(params: TmeasyParams) -> Result<Self, String> {
        params.check()?;
        Ok(Self { params })
    }

    fn mu_scale(&self, k: &SlipKinematics) -> f64 {
        // A road without friction gives (practically) no horizontal force; the floor keeps the
        // characteristic's slips positive.
        (k.mu_road / self.params.mu0).max(1e-9)
    }

    /// Inlined into the tire element's evaluation (its AVX copy compiles the law for AVX).
    #[inline(always)]
    fn run(&self, k: &SlipKinematics, states: &[f64], dynamic: bool) -> LawOut<f64> {
        let mut s = [0.0; N_STATES];
        for (d, x) in s.iter_mut().zip(states) {
            *d = *x;
        }
        self.params.law(
            &LawIn {
                kin: k.as_array(),
                states: s,
                mu_scale: self.mu_scale(k),
            },
            dynamic,
        )
    }
}

impl TireModel for Tmeasy {
    const KIND: &'static str = "tmeasy";
    const DESCRIPTION: &'static str = "TMeasy tire (Rill 2013; ../shared/data/vehicle-reference.md): \
        normalised combined slip, generalised characteristic, trail, bore torque, first-order dynamics";
    const PARAMETERS: &'static [ParamInfo] = params::PARAMETERS;
    const STATES: &'static [&'static str] = &["x_e", "y_e", "b_e"];

    fn nominal_load(&self) -> Option<f64> {
        Some(self.params.pn)
    }

    fn from_params(p: &ElementParams) -> Result<Self, String> {
        Ok(Self {
            params: TmeasyParams::from_element(p)?,
        })
    }

    fn vertical(&self) -> VerticalLaw {
        let p = &self.params;
        VerticalLaw {
            unloaded_radius: p.r0,
            width: p.width,
            stiffness: if p.d2 == 0.0 {
                VerticalStiffness::Linear { k: p.d1 }
            } else {
                VerticalStiffness::Quadratic { d1: p.d1, d2: p.d2 }
            },
            damping: p.dz,
            rim_radius: p.rim_radius,
            bottoming_stiffness: p.bottoming_stiffness,
        }
    }

    /// R_eff = (2 R0 + r_s)/3 with the static radius r_s = R0 − ρ (step 3).
    fn effective_radius(&self, _fz: f64, rho: f64) -> f64 {
        self.params.r0 - rho / 3.0
    }

    #[inline(always)]
    fn evaluate(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
    ) {
        let r = self.run(k, states, true);
        let [fx, fy, mx, my, mz] = r.forces;
        *out = TireForces { fx, fy, mx, my, mz };
        for (d, x) in rates.iter_mut().zip(r.rates) {
            *d = x;
        }
    }

    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces) {
        let r = self.run(k, &[0.0; N_STATES], false);
        let [fx, fy, mx, my, mz] = r.forces;
        *out = TireForces { fx, fy, mx, my, mz };
    }

    /// Kinematic columns by forward-mode differentiation of the law; state columns from the
    /// law's affine dependence on the states (ẋ_e = g_x x_e + …, g_x = −v_t c_x/(v_t d_x + f_sx);
    /// F_x = c_x x_e + d_x ẋ_e; likewise y and bore; M_z = −F_y L n + M_B).
    fn partials(&self, k: &SlipKinematics, states: &[f64], jac: &mut TirePartials) {
        self.dual_pass(k, states, jac);
    }

    /// One dual-number pass gives the forces and rates (its values) and the partials.
    #[inline(always)]
    fn evaluate_with_partials(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
        jac: &mut TirePartials,
    ) {
        let r = self.dual_pass(k, states, jac);
        let [fx, fy, mx, my, mz] = r.forces.map(|x| x.v);
        *out = TireForces { fx, fy, mx, my, mz };
        for (d, x) in rates.iter_mut().zip(r.rates) {
            *d = x.v;
        }
    }
}

impl Tmeasy {
    /// The law over dual numbers seeded with the kinematic inputs: fills `jac` and returns the
    /// dual outputs (values and kinematic derivatives).
    #[inline(always)]
    fn dual_pass(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        jac: &mut TirePartials,
    ) -> LawOut<Dual<N_KIN>> {
        let kv = k.as_array();
        let kin: [Dual<N_KIN>; N_KIN] = std::array::from_fn(|i| Dual::seed(kv[i], i));
        let st: [Dual<N_KIN>; N_STATES] =
            std::array::from_fn(|i| Dual::cst(states.get(i).copied().unwrap_or(0.0)));
        let r = self.params.law(
            &LawIn {
                kin,
                states: st,
                mu_scale: self.mu_scale(k),
            },
            true,
        );
        *jac = TirePartials::default();
        for (row, y) in r.forces.iter().chain(r.rates.iter()).enumerate() {
            jac.kin[row] = y.d;
        }
        let p = &self.params;
        let a = r.aux;
        let g = [
            -a.vt * p.cx / (a.vt * p.dx + a.fs[0]),
            -a.vt * p.cy / (a.vt * p.dy + a.fs[1]),
            -a.vt * p.cy / (a.vt * p.dy + a.fs[2]),
        ];
        for (i, gi) in g.iter().enumerate() {
            jac.states[N_FORCES + i][i] = *gi;
        }
        if !a.lifted {
            let dfx = p.cx + p.dx * g[0];
            let dfy = p.cy + p.dy * g[1];
            let dmb = a.rb * (p.cy + p.dy * g[2]);
            jac.states[0][0] = dfx;
            jac.states[1][1] = dfy;
            jac.states[4][1] = -a.trail * dfy;
            jac.states[4][2] = dmb;
        }
        r
    }
}
