//! Pacejka 2002 (Magic Formula 5.2) tire from a `.tir` file (issue 13, item 4;
//! `../shared/data/vehicle-reference.md`, "Pacejka 2002" and "Variants to state").
//!
//! * [`tir`]: the `.tir` syntax; [`coefficients`]: the PAC2002 keys, units, required and unknown
//!   keys with located errors;
//! * [`mf`]: the steady-state Magic Formula (Pacejka, *Tire and Vehicle Dynamics*, 2nd ed.,
//!   §4.3.2; MF-Tyre 5.2), written once over a scalar type;
//! * [`dual`]: forward-mode differentiation of those lines (the analytic partials);
//! * this module: the slips from the contact kinematics, the two relaxation states, the low-speed
//!   treatment, the vertical law and the effective rolling radius, and [`TireModel`].
//!
//! States (`docs/tire-pac2002.md`, "Relaxation"): the relaxed slips κ' and α' (first-order
//! transient slip model, Pacejka 2nd ed. §7.2, the MF 5.2 relaxation lengths):
//! ```text
//! σκ dκ'/dt = −Vsx − |Vx| κ',   Vsx = Vx − ω Re     (steady state κ' = κ)
//! σα dα'/dt =  Vsy − |Vx| α',   Vsy = vy            (steady state α' = tan α sgn Vx)
//! ```
//! The formulas see κ_F = κ' − w τ Vsx / σκ and α_F = α' + w τ Vsy / σα, with
//! w = ½ (1 + cos(π |Vx| / VXLOW)) below VXLOW and 0 above: at standstill κ' and α' are the
//! carcass deflections over σ, and the added term is a damper in parallel with that spring
//! (time constant τ), so a parked or starting wheel has neither a slip singularity nor an
//! undamped oscillation.

pub mod coefficients;

pub mod mf;
pub mod tir;

use std::path::Path;

use sprung_mbs::elements::{ElementParams, ParamInfo};

use self::coefficients::{Coefficients, CombinedMethod, Pac2002File};
use self::mf::{MfInput, MfSettings};
use super::{
    N_FORCES, SlipKinematics, TireForces, TireModel, TirePartials, VerticalLaw, VerticalStiffness,
    kin,
};
use crate::dual::{Dual, Real, Split};

/// Seeds of the front part: F_z and γ first (the coefficient lanes, [`Split`]), then vx, vy, ω
/// and the two states; the kinematic input of each of the first five.
const FRONT_KIN: [usize; 5] = [kin::FZ, kin::GAMMA, kin::VX, kin::VY, kin::OMEGA];
/// Number of seeds of the front part (5 kinematic inputs + 2 states).
const NF: usize = 7;
/// Number of seeds of the outputs (Fz, γ, κ_F, α_F, vx, ω).
const NM: usize = 6;
/// Number of seeds of the Magic Formula proper (Fz, γ, κ_F, α_F).
const NM4: usize = 4;

/// The Pacejka 2002 tire law (module docs).
#[derive(Debug, Clone)]
pub struct Pac2002 {
    file: Pac2002File,
    /// Road μ the file's friction corresponds to.
    mu_reference: f64,
    /// Extra friction scale.
    mu_scale: f64,
    /// Constant relaxation lengths overriding the file, m (0 = from the file).
    sigma_x_const: f64,
    sigma_y_const: f64,
    /// Lower bound of the relaxation lengths, m.
    sigma_min: f64,
    /// Low-speed damping time constant τ, s.
    damping_time: f64,
}

/// Parameters of an `[[elements]]` entry of kind "pac2002".
pub const PARAMETERS: &[ParamInfo] = &[
    ParamInfo {
        name: "tir_file",
        unit: "path",
        description: "the PAC2002 .tir property file (relative to the model file)",
        default: None,
    },
    ParamInfo {
        name: "mu_reference",
        unit: "-",
        description: "road friction coefficient the .tir file was measured on (forces scale with mu_road / mu_reference)",
        default: Some(1.0),
    },
    ParamInfo {
        name: "mu_scale",
        unit: "-",
        description: "extra scale of the peak friction (multiplies LMUX and LMUY)",
        default: Some(1.0),
    },
    ParamInfo {
        name: "relaxation_length_x",
        unit: "m",
        description: "constant longitudinal relaxation length; 0 = from the file (PTX1-3), or R0 when the file has none",
        default: Some(0.0),
    },
    ParamInfo {
        name: "relaxation_length_y",
        unit: "m",
        description: "constant lateral relaxation length; 0 = from the file (PTY1-2), or R0 when the file has none",
        default: Some(0.0),
    },
    ParamInfo {
        name: "min_relaxation_length",
        unit: "m",
        description: "lower bound of the load-dependent relaxation lengths (low load, lift-off)",
        default: Some(0.02),
    },
    ParamInfo {
        name: "low_speed_damping_time",
        unit: "s",
        description: "time constant of the slip damping below VXLOW (damper parallel to the standstill carcass spring)",
        default: Some(0.05),
    },
];

impl Pac2002 {
    /// Reads a `.tir` file with default options.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        Self::from_parts(Pac2002File::read(path).map_err(|e| e.to_string())?)
    }

    /// A law from a checked file with default options.
    pub fn from_parts(file: Pac2002File) -> Result<Self, String> {
        Ok(Self {
            file,
            mu_reference: 1.0,
            mu_scale: 1.0,
            sigma_x_const: 0.0,
            sigma_y_const: 0.0,
            sigma_min: 0.02,
            damping_time: 0.05,
        })
    }

    /// The file's coefficients.
    pub fn coefficients(&self) -> &Coefficients {
        &self.file.c
    }

    /// The checked file (notes, tables, combined method).
    pub fn file(&self) -> &Pac2002File {
        &self.file
    }

    /// How combined slip is formed for this file.
    pub fn combined_method(&self) -> CombinedMethod {
        self.file.combined
    }

    /// Sets the friction scale (`mu_scale`).
    pub fn with_mu_scale(mut self, mu_scale: f64) -> Self {
        self.mu_scale = mu_scale;
        self
    }

    /// Sets the low-speed damping time constant τ, s.
    pub fn with_low_speed_damping_time(mut self, tau: f64) -> Self {
        self.damping_time = tau;
        self
    }

    /// The friction factor applied to LMUX, LMUY for a road μ.
    fn mu_factor(&self, mu_road: f64) -> f64 {
        (mu_road / self.mu_reference * self.mu_scale).max(0.0)
    }

    /// Effective rolling radius Re(Fz) (MF 5.2): R0 − ρ0 (DREFF atan(BREFF ρd) + FREFF ρd),
    /// ρ0 = Fz0/Cz, ρd = Fz/Fz0; without BREFF/DREFF/FREFF the loaded radius R0 − Fz/Cz.
    #[inline(always)]
    fn re<T: Real>(&self, fz: T) -> T {
        let c = &self.file.c;
        let rho0 = c.fnomin / c.vertical_stiffness;
        if c.breff.is_nan() && c.dreff.is_nan() && c.freff.is_nan() {
            return -(fz / c.vertical_stiffness) + c.unloaded_radius;
        }
        let (b, d, f) = (nz(c.breff), nz(c.dreff), nz(c.freff));
        let rd = fz / c.fnomin;
        -(((rd * b).atan() * d + rd * f) * rho0) + c.unloaded_radius
    }

    /// Relaxation lengths (σκ, σα), m, at load `fz` ≥ 0 and camber.
    #[inline(always)]
    fn sigmas<T: Real>(&self, fz: T, gamma: T) -> (T, T) {
        let c = &self.file.c;
        let r0 = c.unloaded_radius;
        let fz0p = c.fnomin * c.lfzo;
        let dfz = (fz - fz0p) / fz0p;
        let sx = if self.sigma_x_const > 0.0 {
            T::cst(self.sigma_x_const)
        } else if c.ptx1 == 0.0 && c.ptx2 == 0.0 {
            T::cst(r0)
        } else {
            // MF 5.2: σκ = Fz (PTX1 + PTX2 dfz) exp(−PTX3 dfz) R0/Fz0' LSGKP.
            fz * (dfz * c.ptx2 + c.ptx1) * (dfz * (-c.ptx3)).exp() * (r0 / fz0p * c.lsgkp)
        };
        let sy = if self.sigma_y_const > 0.0 {
            T::cst(self.sigma_y_const)
        } else if c.pty1 == 0.0 || c.pty2 == 0.0 {
            T::cst(r0)
        } else {
            // MF 5.2: σα = PTY1 sin(2 atan(Fz/(PTY2 Fz0'))) (1 − PKY3 |γ|) R0 LFZO LSGAL.
            mf::sin_2atan(fz / (c.pty2 * fz0p))
                * (-(gamma.abs() * c.pky3) + 1.0)
                * (c.pty1 * r0 * c.lfzo * c.lsgal)
        };
        (sx.max_c(self.sigma_min), sy.max_c(self.sigma_min))
    }

    /// The front part: (κ_F, α_F, dκ'/dt, dα'/dt) and the effective rolling radius's value
    /// from the kinematics and states; F_z and γ
    /// of the coefficient type (the relaxation lengths and the effective rolling radius depend
    /// on them only; [`Split`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn front<T: Split>(
        &self,
        fz: T::Coef,
        vx: T,
        vy: T,
        omega: T,
        gamma: T::Coef,
        s0: T,
        s1: T,
    ) -> ([T; 4], f64) {
        let c = &self.file.c;
        let (sx, sy) = self.sigmas(fz, gamma);
        let (sx, sy) = (T::widen(sx), T::widen(sy));
        let re = self.re(fz);
        let vsx = vx - omega * T::widen(re);
        let avx = vx.abs();
        let r0 = (-vsx - avx * s0) / sx;
        let r1 = (vy - avx * s1) / sy;
        let (kf, af) = if avx.val() < c.vxlow && self.damping_time > 0.0 {
            let w = ((avx * (std::f64::consts::PI / c.vxlow)).cos() + 1.0) * 0.5;
            let wt = w * self.damping_time;
            (s0 - wt * vsx / sx, s1 + wt * vy / sy)
        } else {
            (s0, s1)
        };
        ([kf, af, r0, r1], re.val())
    }

    #[inline(always)]
    fn settings(&self, mu_road: f64) -> MfSettings {
        MfSettings {
            mu_factor: self.mu_factor(mu_road),
            use_mode: self.file.use_mode,
            combined: self.file.combined,
        }
    }

    /// The steady-state forces at slips given directly: κ, tan α (sgn Vx), γ, Fz and the rolling
    /// speed (for the rolling resistance), on a road of friction `mu_road` — the Magic Formula
    /// itself, without the low-speed treatment.
    pub fn forces_at_slip(
        &self,
        fz: f64,
        kappa: f64,
        tan_alpha: f64,
        gamma: f64,
        vx: f64,
        mu_road: f64,
    ) -> TireForces {
        let set = self.settings(mu_road);
        if fz <= 0.0 || set.mu_factor <= 0.0 {
            return TireForces::default();
        }
        let omega = vx * (1.0 + kappa) / self.re(fz);
        let f = mf::forces(
            &self.file.c,
            &set,
            &MfInput {
                fz,
                kappa,
                alpha: tan_alpha,
                gamma,
            },
        );
        TireForces {
            fx: f[0],
            fy: f[1],
            mx: f[2],
            my: mf::rolling_resistance(&self.file.c, &set, fz, f[0], vx, omega),
            mz: f[4],
        }
    }
}

/// NaN (absent optional key) → 0.
fn nz(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x }
}

impl TireModel for Pac2002 {
    const KIND: &'static str = "pac2002";
    const DESCRIPTION: &'static str = "Pacejka 2002 / MF-Tyre 5.2 from a .tir file (Pacejka, Tire and Vehicle Dynamics, ch. 4), relaxed slips as states";
    const PARAMETERS: &'static [ParamInfo] = PARAMETERS;
    const STATES: &'static [&'static str] = &["kappa_relaxed", "alpha_relaxed"];
    /// ρ and ψ̇ do not enter the law ([`FRONT_KIN`] are its inputs).
    const KIN_USED: [bool; super::N_KIN] = {
        let mut used = [false; super::N_KIN];
        let mut i = 0;
        while i < FRONT_KIN.len() {
            used[FRONT_KIN[i]] = true;
            i += 1;
        }
        used
    };

    fn from_params(p: &ElementParams) -> Result<Self, String> {
        let Some(path) = p.text("tir_file")? else {
            return Err("parameter `tir_file` is missing; add tir_file = \"tire.tir\" (a PAC2002 .tir file)".into());
        };
        let mut law = Self::from_file(Path::new(path))?;
        law.mu_reference = p.positive("mu_reference")?;
        law.mu_scale = p.non_negative("mu_scale")?;
        law.sigma_x_const = p.non_negative("relaxation_length_x")?;
        law.sigma_y_const = p.non_negative("relaxation_length_y")?;
        law.sigma_min = p.positive("min_relaxation_length")?;
        law.damping_time = p.non_negative("low_speed_damping_time")?;
        Ok(law)
    }

    fn vertical(&self) -> VerticalLaw {
        let c = &self.file.c;
        let r0 = c.unloaded_radius;
        let stiffness = match &self.file.deflection_curve {
            Some((rho, force)) => VerticalStiffness::Table {
                rho: rho.clone(),
                force: force.clone(),
            },
            None => VerticalStiffness::Linear {
                k: c.vertical_stiffness,
            },
        };
        // Bottoming: from [BOTTOMING_CURVE] (its last zero-force deflection and final slope), else
        // at the rim radius with 5 Cz (the TMeasy default of the reference data).
        let (rim_radius, bottoming_stiffness) = match &self.file.bottoming_curve {
            Some((x, y)) => {
                let knee = x
                    .iter()
                    .zip(y)
                    .filter(|(_, f)| **f == 0.0)
                    .map(|(x, _)| *x)
                    .fold(0.0, f64::max);
                let n = x.len();
                let slope = (y[n - 1] - y[n - 2]) / (x[n - 1] - x[n - 2]);
                (r0 - knee - 0.01, slope)
            }
            None => {
                let rim = if c.rim_radius.is_nan() {
                    0.5 * r0
                } else {
                    c.rim_radius
                };
                (rim, 5.0 * c.vertical_stiffness)
            }
        };
        VerticalLaw {
            unloaded_radius: r0,
            width: c.width,
            stiffness,
            damping: c.vertical_damping,
            rim_radius,
            bottoming_stiffness,
        }
    }

    fn nominal_load(&self) -> Option<f64> {
        Some(self.file.c.fnomin)
    }

    fn effective_radius(&self, fz: f64, _rho: f64) -> f64 {
        self.re(fz.max(0.0))
    }

    fn evaluate(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
    ) {
        let fz = k.fz.max(0.0);
        let ([kf, af, r0, r1], _) =
            self.front(fz, k.vx, k.vy, k.omega, k.gamma, states[0], states[1]);
        rates[0] = r0;
        rates[1] = r1;
        let set = self.settings(k.mu_road);
        if fz <= 0.0 || set.mu_factor <= 0.0 {
            *out = TireForces::default();
            return;
        }
        let f = mf::forces(
            &self.file.c,
            &set,
            &MfInput {
                fz,
                kappa: kf,
                alpha: af,
                gamma: k.gamma,
            },
        );
        *out = TireForces {
            fx: f[0],
            fy: f[1],
            mx: f[2],
            my: mf::rolling_resistance(&self.file.c, &set, fz, f[0], k.vx, k.omega),
            mz: f[4],
        };
    }

    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces) {
        // Stationary states: κ' = −Vsx/|Vx|, α' = Vsy/|Vx|; at |Vx| → 0 the slip velocity is
        // referred to 1 mm/s (a sliding wheel at standstill: saturated force).
        let avx = k.vx.abs().max(1e-3);
        let vsx = k.vx - k.omega * self.re(k.fz.max(0.0));
        let s = [-vsx / avx, k.vy / avx];
        let mut rates = [0.0; 2];
        self.evaluate(k, &s, out, &mut rates);
    }

    fn partials(&self, k: &SlipKinematics, states: &[f64], jac: &mut TirePartials) {
        self.dual_pass(k, states, jac);
    }

    /// One dual-number pass gives the forces and rates (its values) and the partials.
    fn evaluate_with_partials(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
        jac: &mut TirePartials,
    ) {
        let (f, r, _) = self.dual_pass(k, states, jac);
        *out = f;
        rates[..2].copy_from_slice(&r);
    }

    /// The effective rolling radius from the same pass (its front part computes Re(F_z) from
    /// F_z ≥ 0, as [`TireModel::effective_radius`] does: the same value bit for bit).
    #[inline(always)]
    fn evaluate_with_partials_and_radius(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
        jac: &mut TirePartials,
    ) -> f64 {
        let (f, r, re) = self.dual_pass(k, states, jac);
        *out = f;
        rates[..2].copy_from_slice(&r);
        re
    }
}

impl Pac2002 {
    /// The law over dual numbers: fills `jac` and returns the forces and state rates (the
    /// values of the same pass). Inlined into its callers, as the front part is (the tire
    /// element's AVX copy compiles them for AVX).
    #[inline(always)]
    fn dual_pass(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        jac: &mut TirePartials,
    ) -> (TireForces, [f64; 2], f64) {
        // Front part in 7 seeds: F_z, γ (the coefficient lanes), vx, vy, ω, then the 2 states.
        let seed = |v: f64, i: usize| Dual::<NF>::seed(v, i);
        let lifted = k.fz <= 0.0;
        let fz2 = if lifted {
            Dual::cst(0.0)
        } else {
            Dual::seed(k.fz, 0)
        };
        let gamma2 = Dual::seed(k.gamma, 1);
        let ([kf, af, r0, r1], re) = self.front(
            fz2,
            seed(k.vx, 2),
            seed(k.vy, 3),
            seed(k.omega, 4),
            gamma2,
            seed(states[0], 5),
            seed(states[1], 6),
        );
        // `jac` is zeroed on entry (`TireModel::partials`): only the nonzero columns are
        // written (ρ and ψ̇ do not enter the law).
        for (row, r) in [r0, r1].iter().enumerate() {
            let row = N_FORCES + row;
            for (i, &col) in FRONT_KIN.iter().enumerate() {
                jac.kin[row][col] = r.d[i];
            }
            jac.states[row][0] = r.d[5];
            jac.states[row][1] = r.d[6];
        }
        let rates = [r0.v, r1.v];
        let set = self.settings(k.mu_road);
        if lifted || set.mu_factor <= 0.0 {
            return (TireForces::default(), rates, re);
        }
        // Magic Formula in 4 seeds (Fz, γ: the coefficients' 2 lanes; κ_F, α_F); the rolling
        // resistance in 6 (+ vx, ω); then the chain rule to the 7.
        let s4 = |v: f64, i: usize| Dual::<NM4>::seed(v, i);
        let f4 = mf::forces(
            &self.file.c,
            &set,
            &MfInput {
                fz: fz2,
                kappa: s4(kf.v, 2),
                alpha: s4(af.v, 3),
                gamma: gamma2,
            },
        );
        let widen = |x: Dual<NM4>| {
            let mut d = [0.0; NM];
            d[..NM4].copy_from_slice(&x.d);
            Dual::<NM>::new(x.v, d)
        };
        let my = mf::rolling_resistance(
            &self.file.c,
            &set,
            Dual::<NM>::seed(k.fz, 0),
            widen(f4[0]),
            Dual::<NM>::seed(k.vx, 4),
            Dual::<NM>::seed(k.omega, 5),
        );
        let f = [widen(f4[0]), widen(f4[1]), widen(f4[2]), my, widen(f4[4])];
        // ∂u/∂(front seeds) for u = (Fz, γ, κ_F, α_F, vx, ω): unit vectors except κ_F and α_F.
        let mx_on = mf::overturning(&self.file.c);
        for (row, fr) in f.iter().enumerate() {
            if row == 2 && !mx_on {
                continue; // Mx ≡ 0: its row stays as zeroed
            }
            let mut unit = [0.0; NF];
            unit[0] = fr.d[0];
            unit[1] = fr.d[1];
            unit[2] = fr.d[4];
            unit[4] = fr.d[5];
            let mut acc = [0.0; NF];
            for (((a, u), k), s) in acc.iter_mut().zip(unit).zip(kf.d).zip(af.d) {
                *a = u + (fr.d[2] * k + fr.d[3] * s);
            }
            for (i, &col) in FRONT_KIN.iter().enumerate() {
                jac.kin[row][col] = acc[i];
            }
            jac.states[row][0] = acc[5];
            jac.states[row][1] = acc[6];
        }
        let forces = TireForces {
            fx: f[0].v,
            fy: f[1].v,
            mx: f[2].v,
            my: f[3].v,
            mz: f[4].v,
        };
        (forces, rates, re)
    }
}
