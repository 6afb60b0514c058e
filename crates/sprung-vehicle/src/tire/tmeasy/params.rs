//! TMeasy parameters: names, units, defaults, reading from an `[[elements]]` entry and/or a
//! Chrono TMeasy JSON file ([`super::chrono_json`]), and the checks that keep the
//! characteristic well defined over the whole load range 0 … pn_max.

use sprung_mbs::elements::{ElementParams, ParamInfo};

use super::chrono_json::ChronoFile;

/// A value given at Fz = pn and at Fz = 2 pn (step 4 of the data sheet).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Curve {
    /// Value at pn.
    pub pn: f64,
    /// Value at 2 pn.
    pub p2n: f64,
}

/// How the vertical stiffness was given.
#[derive(Debug, Clone, PartialEq)]
pub enum VerticalInput {
    /// `cz`: F = cz ρ.
    Linear(f64),
    /// `d1`, `d2`: F = d1 ρ + d2 ρ².
    Quadratic(f64, f64),
    /// `curve_rho`, `curve_fz`: fitted to d1 ρ + d2 ρ² by least squares (as Chrono does).
    Curve(Vec<f64>, Vec<f64>),
}

/// All TMeasy parameters (SI units; names as in the model file, `docs/tire-tmeasy.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct TmeasyParams {
    /// Unloaded radius R0, m.
    pub r0: f64,
    /// Tire width B, m.
    pub width: f64,
    /// Rim radius, m.
    pub rim_radius: f64,
    /// Nominal load pn, N.
    pub pn: f64,
    /// Largest load of the load dependence, N (q is clamped to pn_max / pn).
    pub pn_max: f64,
    /// The vertical stiffness as given.
    pub vertical_input: VerticalInput,
    /// Linear vertical stiffness coefficient d1, N/m.
    pub d1: f64,
    /// Quadratic vertical stiffness coefficient d2, N/m².
    pub d2: f64,
    /// Vertical damping dz, N s/m.
    pub dz: f64,
    /// Bottoming (rim) stiffness, N/m.
    pub bottoming_stiffness: f64,
    /// Friction coefficient μ0 the force data were measured at.
    pub mu0: f64,
    /// Rolling resistance coefficient f_r.
    pub fr: f64,
    /// Regularising velocity v_N of the transport velocity, m/s.
    pub v_n: f64,
    /// Width s_B of the regularised combined-slip direction at zero normalised slip
    /// (`docs/tire-tmeasy.md`, "Combined slip near zero slip"); 0 = Rill's unregularised law.
    pub direction_blend_width: f64,
    /// Initial longitudinal slope dF_x/ds_x, N.
    pub dfx0: Curve,
    /// Maximum longitudinal force, N.
    pub fxm: Curve,
    /// Sliding longitudinal force, N.
    pub fxs: Curve,
    /// Longitudinal slip at the maximum.
    pub sxm: Curve,
    /// Longitudinal slip where sliding begins.
    pub sxs: Curve,
    /// Initial lateral slope dF_y/ds_y, N.
    pub dfy0: Curve,
    /// Maximum lateral force, N.
    pub fym: Curve,
    /// Sliding lateral force, N.
    pub fys: Curve,
    /// Lateral slip at the maximum.
    pub sym: Curve,
    /// Lateral slip where sliding begins.
    pub sys: Curve,
    /// Normalised pneumatic trail at zero lateral slip (n/L).
    pub nl0: Curve,
    /// Lateral slip where the trail changes sign.
    pub sq0: Curve,
    /// Lateral slip where the trail tends to zero.
    pub sqe: Curve,
    /// Longitudinal contact stiffness c_x, N/m.
    pub cx: f64,
    /// Longitudinal contact damping d_x, N s/m.
    pub dx: f64,
    /// Lateral contact stiffness c_y, N/m (also the bore deflection's, at the bore radius).
    pub cy: f64,
    /// Lateral contact damping d_y, N s/m.
    pub dy: f64,
}

/// Default regularising velocity v_N, m/s: a braked wheel creeps at v_N times the slip that holds
/// its load (`docs/tire-tmeasy.md`); 0.003 m/s keeps the car tire's creep on a 10 % slope at
/// 0.5 mm per minute, half the 1 mm, leaving room for heavier loads per tire.
pub const DEFAULT_V_N: f64 = 0.003;

/// The parameters of a `type = "tmeasy"` entry. Those described "default …" without a default
/// value have defaults computed from other parameters.
pub const PARAMETERS: &[ParamInfo] = &[
    ParamInfo::required(
        "file",
        "path",
        "Chrono TMeasy JSON file; values given here override the file's (optional)",
    ),
    ParamInfo::required("r0", "m", "unloaded radius R0"),
    ParamInfo::required("width", "m", "tire width"),
    ParamInfo::required(
        "rim_radius",
        "m",
        "rim radius (bottoming below rim radius + 0.01 m)",
    ),
    ParamInfo::required("pn", "N", "nominal vertical force pn"),
    ParamInfo::required(
        "pn_max",
        "N",
        "largest vertical force of the load dependence (default 3.5 pn)",
    ),
    ParamInfo::required(
        "cz",
        "N/m",
        "linear vertical stiffness (or d1/d2, or curve_rho/curve_fz)",
    ),
    ParamInfo::required(
        "d1",
        "N/m",
        "vertical stiffness F = d1 rho + d2 rho^2, linear coefficient",
    ),
    ParamInfo::required(
        "d2",
        "N/m^2",
        "vertical stiffness, quadratic coefficient (default 0 with d1)",
    ),
    ParamInfo::required(
        "curve_rho",
        "m",
        "vertical spring curve: deflections (list; with curve_fz)",
    ),
    ParamInfo::required(
        "curve_fz",
        "N",
        "vertical spring curve: forces (list), fitted to d1 rho + d2 rho^2",
    ),
    ParamInfo::required("dz", "N s/m", "vertical damping"),
    ParamInfo::required(
        "bottoming_stiffness",
        "N/m",
        "rim bottoming stiffness (default 5 d1)",
    ),
    ParamInfo::required(
        "mu0",
        "-",
        "friction coefficient of the force data (road mu scales by mu/mu0)",
    ),
    ParamInfo {
        name: "fr",
        unit: "-",
        description: "rolling resistance coefficient",
        default: Some(0.015),
    },
    ParamInfo {
        name: "v_n",
        unit: "m/s",
        description: "regularising velocity of the transport velocity (a braked wheel creeps at v_n times its holding slip)",
        default: Some(DEFAULT_V_N),
    },
    ParamInfo {
        name: "direction_blend_width",
        unit: "-",
        description: "width of normalised slip over which the combined-slip direction is regularised at zero slip (0: Rill's law; docs/tire-tmeasy.md, combined slip near zero slip)",
        default: Some(0.0),
    },
    ParamInfo::required("dfx0_pn", "N", "initial slope dFx/dsx at pn"),
    ParamInfo::required("dfx0_2pn", "N", "initial slope dFx/dsx at 2 pn"),
    ParamInfo::required("fxm_pn", "N", "maximum Fx at pn"),
    ParamInfo::required("fxm_2pn", "N", "maximum Fx at 2 pn"),
    ParamInfo::required("fxs_pn", "N", "sliding Fx at pn"),
    ParamInfo::required("fxs_2pn", "N", "sliding Fx at 2 pn"),
    ParamInfo::required("sxm_pn", "-", "slip sx at maximum Fx, pn"),
    ParamInfo::required("sxm_2pn", "-", "slip sx at maximum Fx, 2 pn"),
    ParamInfo::required("sxs_pn", "-", "slip sx where sliding begins, pn"),
    ParamInfo::required("sxs_2pn", "-", "slip sx where sliding begins, 2 pn"),
    ParamInfo::required("dfy0_pn", "N", "initial slope dFy/dsy at pn"),
    ParamInfo::required("dfy0_2pn", "N", "initial slope dFy/dsy at 2 pn"),
    ParamInfo::required("fym_pn", "N", "maximum Fy at pn"),
    ParamInfo::required("fym_2pn", "N", "maximum Fy at 2 pn"),
    ParamInfo::required("fys_pn", "N", "sliding Fy at pn"),
    ParamInfo::required("fys_2pn", "N", "sliding Fy at 2 pn"),
    ParamInfo::required("sym_pn", "-", "slip sy at maximum Fy, pn"),
    ParamInfo::required("sym_2pn", "-", "slip sy at maximum Fy, 2 pn"),
    ParamInfo::required("sys_pn", "-", "slip sy where sliding begins, pn"),
    ParamInfo::required("sys_2pn", "-", "slip sy where sliding begins, 2 pn"),
    ParamInfo::required(
        "nl0_pn",
        "-",
        "normalised pneumatic trail n/L at zero slip, pn",
    ),
    ParamInfo::required(
        "nl0_2pn",
        "-",
        "normalised pneumatic trail n/L at zero slip, 2 pn",
    ),
    ParamInfo::required("sq0_pn", "-", "slip sy where the trail changes sign, pn"),
    ParamInfo::required("sq0_2pn", "-", "slip sy where the trail changes sign, 2 pn"),
    ParamInfo::required("sqe_pn", "-", "slip sy where the trail tends to zero, pn"),
    ParamInfo::required(
        "sqe_2pn",
        "-",
        "slip sy where the trail tends to zero, 2 pn",
    ),
    ParamInfo::required(
        "cx",
        "N/m",
        "longitudinal contact stiffness c_x (tire dynamics)",
    ),
    ParamInfo::required(
        "dx",
        "N s/m",
        "longitudinal contact damping d_x (tire dynamics)",
    ),
    ParamInfo::required(
        "cy",
        "N/m",
        "lateral contact stiffness c_y (tire dynamics, bore deflection)",
    ),
    ParamInfo::required(
        "dy",
        "N s/m",
        "lateral contact damping d_y (tire dynamics, bore deflection)",
    ),
];

/// Reads numbers: inline value, else the file's, else the kind's default, else an error.
struct Source<'a, 'b> {
    p: &'a ElementParams<'b>,
    file: Option<&'a ChronoFile>,
}

impl Source<'_, '_> {
    fn given(&self, name: &str) -> bool {
        self.p.has(name) || self.file.is_some_and(|f| f.numbers.contains_key(name))
    }

    fn number(&self, name: &str) -> Result<f64, String> {
        let x = if self.p.has(name) {
            self.p.number(name)?
        } else if let Some(x) = self.file.and_then(|f| f.numbers.get(name)) {
            *x
        } else {
            return self.p.number(name).map_err(|e| match self.file {
                Some(f) => format!("{e} (the file {} does not give it{})", f.path, f.note),
                None => e,
            });
        };
        if x.is_finite() {
            Ok(x)
        } else {
            Err(format!("parameter `{name}` = {x} is not a finite number"))
        }
    }

    fn positive(&self, name: &str) -> Result<f64, String> {
        let x = self.number(name)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(format!("parameter `{name}` = {x} must be positive"))
        }
    }

    fn non_negative(&self, name: &str) -> Result<f64, String> {
        let x = self.number(name)?;
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(format!("parameter `{name}` = {x} must not be negative"))
        }
    }

    fn curve(&self, base: &str) -> Result<Curve, String> {
        Ok(Curve {
            pn: self.positive(&format!("{base}_pn"))?,
            p2n: self.positive(&format!("{base}_2pn"))?,
        })
    }

    fn vertical(&self) -> Result<VerticalInput, String> {
        let p = self.p;
        let inline = [
            p.has("cz"),
            p.has("d1") || p.has("d2"),
            p.has("curve_rho") || p.has("curve_fz"),
        ];
        let n_inline = inline.iter().filter(|b| **b).count();
        if n_inline > 1 {
            return Err(
                "give the vertical stiffness once: cz, or d1 (and d2), or curve_rho with curve_fz"
                    .into(),
            );
        }
        let from_file = n_inline == 0;
        if inline[0] || (from_file && self.file.is_some_and(|f| f.numbers.contains_key("cz"))) {
            return Ok(VerticalInput::Linear(self.positive("cz")?));
        }
        if inline[1] {
            let d1 = self.positive("d1")?;
            let d2 = if p.has("d2") { p.number("d2")? } else { 0.0 };
            return Ok(VerticalInput::Quadratic(d1, d2));
        }
        let (rho, fz) = if inline[2] {
            let rho = p
                .list("curve_rho")?
                .ok_or("curve_fz needs curve_rho = [deflections, m]")?;
            let fz = p
                .list("curve_fz")?
                .ok_or("curve_rho needs curve_fz = [forces, N]")?;
            (rho.to_vec(), fz.to_vec())
        } else if let Some((rho, fz)) = self.file.and_then(|f| f.curve.clone()) {
            (rho, fz)
        } else {
            return Err(format!(
                "the vertical stiffness is missing; add cz = ... (N/m), or d1 = ... and d2 = ..., or \
                 curve_rho = [...] and curve_fz = [...]{}",
                self.file.map_or(String::new(), |f| format!(
                    " (the file {} gives none)",
                    f.path
                ))
            ));
        };
        Ok(VerticalInput::Curve(rho, fz))
    }
}

/// Least-squares fit of F = d1 ρ + d2 ρ² to a spring curve (normal equations; Chrono fits the
/// same form). Errors if the curve is not usable.
pub fn fit_quadratic(rho: &[f64], fz: &[f64]) -> Result<(f64, f64), String> {
    if rho.len() != fz.len() {
        return Err(format!(
            "curve_rho has {} values but curve_fz has {}; give one force per deflection",
            rho.len(),
            fz.len()
        ));
    }
    if rho.iter().chain(fz).any(|x| !x.is_finite()) {
        return Err("the vertical spring curve has a value that is not a finite number".into());
    }
    if rho.windows(2).any(|w| w[1] <= w[0]) || rho.first().is_some_and(|r| *r < 0.0) {
        return Err("curve_rho must increase from a deflection ≥ 0".into());
    }
    if rho.iter().filter(|r| **r > 0.0).count() < 2 {
        return Err(
            "the vertical spring curve needs at least two points with deflection > 0".into(),
        );
    }
    let (mut s2, mut s3, mut s4, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&r, &f) in rho.iter().zip(fz) {
        s2 += r * r;
        s3 += r * r * r;
        s4 += r * r * r * r;
        b1 += f * r;
        b2 += f * r * r;
    }
    let det = s2 * s4 - s3 * s3;
    let d1 = (b1 * s4 - b2 * s3) / det;
    let d2 = (s2 * b2 - s3 * b1) / det;
    let rmax = rho[rho.len() - 1];
    if !(d1 > 0.0 && d1 + 2.0 * d2 * rmax > 0.0) {
        return Err(format!(
            "the vertical spring curve fits to d1 = {d1:.6e} N/m, d2 = {d2:.6e} N/m², whose \
             stiffness is not positive over 0 … {rmax} m; check curve_rho/curve_fz"
        ));
    }
    Ok((d1, d2))
}

impl TmeasyParams {
    /// Reads and checks the parameters of an entry (file values, then inline overrides).
    pub fn from_element(p: &ElementParams) -> Result<Self, String> {
        let file = match p.text("file")? {
            Some(path) => Some(ChronoFile::read(path)?),
            None => None,
        };
        let s = Source {
            p,
            file: file.as_ref(),
        };
        let r0 = s.positive("r0")?;
        let pn = s.positive("pn")?;
        let vertical_input = s.vertical()?;
        let (d1, d2) = match &vertical_input {
            VerticalInput::Linear(k) => (*k, 0.0),
            VerticalInput::Quadratic(d1, d2) => (*d1, *d2),
            VerticalInput::Curve(rho, fz) => fit_quadratic(rho, fz)?,
        };
        let params = Self {
            r0,
            width: s.positive("width")?,
            rim_radius: s.positive("rim_radius")?,
            pn,
            pn_max: if s.given("pn_max") {
                s.positive("pn_max")?
            } else {
                3.5 * pn
            },
            vertical_input,
            d1,
            d2,
            dz: s.non_negative("dz")?,
            bottoming_stiffness: if s.given("bottoming_stiffness") {
                s.non_negative("bottoming_stiffness")?
            } else {
                5.0 * d1
            },
            mu0: s.positive("mu0")?,
            fr: s.non_negative("fr")?,
            v_n: s.positive("v_n")?,
            direction_blend_width: s.non_negative("direction_blend_width")?,
            dfx0: s.curve("dfx0")?,
            fxm: s.curve("fxm")?,
            fxs: s.curve("fxs")?,
            sxm: s.curve("sxm")?,
            sxs: s.curve("sxs")?,
            dfy0: s.curve("dfy0")?,
            fym: s.curve("fym")?,
            fys: s.curve("fys")?,
            sym: s.curve("sym")?,
            sys: s.curve("sys")?,
            nl0: Curve {
                pn: s.non_negative("nl0_pn")?,
                p2n: s.non_negative("nl0_2pn")?,
            },
            sq0: s.curve("sq0")?,
            sqe: s.curve("sqe")?,
            cx: s.positive("cx")?,
            dx: s.positive("dx")?,
            cy: s.positive("cy")?,
            dy: s.positive("dy")?,
        };
        params.check()?;
        Ok(params)
    }

    /// Checks that the characteristic is well defined for every load 0 … pn_max: positive
    /// forces and slips, F_S ≤ F_M, s_M < s_S, rim inside the tire.
    pub fn check(&self) -> Result<(), String> {
        if self.rim_radius >= self.r0 {
            return Err(format!(
                "rim_radius = {} m must be smaller than r0 = {} m",
                self.rim_radius, self.r0
            ));
        }
        if self.pn_max < self.pn {
            return Err(format!(
                "pn_max = {} N must be at least pn = {} N",
                self.pn_max, self.pn
            ));
        }
        let q_max = self.pn_max / self.pn;
        // The force laws are q·(linear in q) and the slip laws linear in q: checking both ends
        // of 0 … q_max covers the whole range.
        for (q, at) in [(0.0, "small loads"), (q_max, "Fz = pn_max")] {
            let bracket = |c: &Curve| 2.0 * c.pn - 0.5 * c.p2n - (c.pn - 0.5 * c.p2n) * q;
            let lin = |c: &Curve| c.pn + (c.p2n - c.pn) * (q - 1.0);
            for (d, df0, fm, fs, sm, ss) in [
                ("x", &self.dfx0, &self.fxm, &self.fxs, &self.sxm, &self.sxs),
                ("y", &self.dfy0, &self.fym, &self.fys, &self.sym, &self.sys),
            ] {
                for (name, c) in [
                    (format!("df{d}0"), df0),
                    (format!("f{d}m"), fm),
                    (format!("f{d}s"), fs),
                ] {
                    if bracket(c) <= 0.0 {
                        return Err(format!(
                            "at {at} the load dependence of {name} (values {} and {} at pn and 2 pn) \
                             gives a force ≤ 0; the value at 2 pn must be below 4× the value at pn \
                             (or lower pn_max)",
                            c.pn, c.p2n
                        ));
                    }
                }
                if bracket(fs) > bracket(fm) * (1.0 + 1e-12) {
                    return Err(format!(
                        "at {at} the sliding force f{d}s exceeds the maximum f{d}m; check f{d}s_pn/f{d}s_2pn"
                    ));
                }
                if lin(sm) <= 0.0 || lin(ss) <= lin(sm) {
                    return Err(format!(
                        "at {at} the slips need 0 < s{d}m < s{d}s (got {} and {}); check s{d}m_pn/_2pn, \
                         s{d}s_pn/_2pn",
                        lin(sm),
                        lin(ss)
                    ));
                }
            }
            if lin(&self.sq0) <= 0.0 || lin(&self.sqe) <= 0.0 || lin(&self.nl0) < 0.0 {
                return Err(format!(
                    "at {at} the aligning-torque parameters need sq0 > 0, sqe > 0, nl0 ≥ 0; check \
                     sq0/sqe/nl0 at pn and 2 pn"
                ));
            }
        }
        Ok(())
    }
}
