//! The rig's sweeps (module docs of [`crate::rig`]): kinematics from slips, steady sweeps, the
//! transient slip-angle step, and the CSV table they produce.

use std::io::Write;
use std::path::Path;

use super::{AnyTire, deflection_at};
use crate::tire::{MAX_STATES, N_FORCES, SlipKinematics, TireForces, TirePartials};

/// A sweep of the rig.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Longitudinal slip κ ∈ [−1, 1] at α = 0, for 0.5, 1 and 1.5 times the load.
    Kappa,
    /// Slip angle α ∈ [−15°, 15°] at κ = 0, for 0.5, 1 and 1.5 times the load.
    Alpha,
    /// Load Fz ∈ [0.1, 2] × the load at κ = 0, for α = 2°, 4° and 8°.
    Load,
    /// Camber γ ∈ [−10°, 10°] at κ = 0, for α = 0°, 2° and 4°.
    Camber,
    /// Combined slip: κ ∈ [−1, 1] for α = 0°, 3° and 6° at the load.
    Combined,
    /// Transient: a slip-angle step from 0 to `step_alpha` at t = 0, states integrated (RK4).
    Step,
}

impl Sweep {
    /// Every sweep, in the order the CLI runs them.
    pub const ALL: [Sweep; 6] = [
        Sweep::Kappa,
        Sweep::Alpha,
        Sweep::Load,
        Sweep::Camber,
        Sweep::Combined,
        Sweep::Step,
    ];

    /// Name (CLI and file names).
    pub fn name(self) -> &'static str {
        match self {
            Sweep::Kappa => "kappa",
            Sweep::Alpha => "alpha",
            Sweep::Load => "load",
            Sweep::Camber => "camber",
            Sweep::Combined => "combined",
            Sweep::Step => "step",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Result<Sweep, String> {
        Sweep::ALL
            .into_iter()
            .find(|w| w.name() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Sweep::ALL.iter().map(|w| w.name()).collect();
                format!("unknown sweep '{s}'; the sweeps are: {}", names.join(", "))
            })
    }

    /// The swept column and its axis label.
    pub fn x_column(self) -> (&'static str, &'static str) {
        match self {
            Sweep::Kappa | Sweep::Combined => ("kappa", "longitudinal slip κ [-]"),
            Sweep::Alpha => ("alpha_deg", "slip angle α [deg]"),
            Sweep::Load => ("fz_N", "vertical load Fz [N]"),
            Sweep::Camber => ("gamma_deg", "camber γ [deg]"),
            Sweep::Step => ("distance_m", "distance travelled [m]"),
        }
    }

    /// What distinguishes the curves of one plot, as a legend prefix and unit.
    pub fn series_label(self) -> (&'static str, &'static str) {
        match self {
            Sweep::Kappa | Sweep::Alpha => ("Fz", "N"),
            Sweep::Load | Sweep::Camber | Sweep::Combined | Sweep::Step => ("α", "deg"),
        }
    }
}

/// Operating point of the rig.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigSetup {
    /// Reference load, N.
    pub load: f64,
    /// Travel speed V (wheel-centre longitudinal velocity), m/s.
    pub speed: f64,
    /// Road friction coefficient passed to the law.
    pub mu_road: f64,
    /// Points per steady curve.
    pub points: usize,
    /// Slip angle of the step, rad.
    pub step_alpha: f64,
    /// Distance travelled in the step, m.
    pub step_distance: f64,
}

impl RigSetup {
    /// Defaults at a load: 20 m/s, μ = 1, 101 points, a 3° step over 5 m.
    pub fn at_load(load: f64) -> Self {
        Self {
            load,
            speed: 20.0,
            mu_road: 1.0,
            points: 101,
            step_alpha: 3f64.to_radians(),
            step_distance: 5.0,
        }
    }

    /// Checks the setup (positive load, speed and distance, μ ≥ 0, at least 2 points).
    pub fn check(&self) -> Result<(), String> {
        if !(self.load > 0.0 && self.load.is_finite()) {
            return Err(format!("load {} N must be positive", self.load));
        }
        if !(self.speed > 0.0 && self.speed.is_finite()) {
            return Err(format!("speed {} m/s must be positive", self.speed));
        }
        if !(self.mu_road >= 0.0 && self.mu_road.is_finite()) {
            return Err(format!(
                "road friction {} must not be negative",
                self.mu_road
            ));
        }
        if self.points < 2 {
            return Err("a sweep needs at least 2 points".into());
        }
        if self.step_distance.is_nan() || self.step_distance <= 0.0 {
            return Err(format!(
                "step distance {} m must be positive",
                self.step_distance
            ));
        }
        Ok(())
    }
}

/// A sweep's result: named columns, one row per point (the CSV file).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    /// Which sweep.
    pub sweep: Sweep,
    /// Column names with units.
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<f64>>,
}

impl SweepTable {
    /// A column by name.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let j = self.columns.iter().position(|c| c == name)?;
        Some(self.rows.iter().map(|r| r[j]).collect())
    }

    /// The curves of one output `y` over the swept column, one per series value:
    /// (series value, x, y).
    pub fn curves(&self, y: &str) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
        let (xname, _) = self.sweep.x_column();
        let (Some(xs), Some(ys), Some(ss)) =
            (self.column(xname), self.column(y), self.column("series"))
        else {
            return Vec::new();
        };
        let mut out: Vec<(f64, Vec<f64>, Vec<f64>)> = Vec::new();
        for ((x, y), s) in xs.into_iter().zip(ys).zip(ss) {
            match out.iter_mut().find(|c| c.0 == s) {
                Some(c) => {
                    c.1.push(x);
                    c.2.push(y);
                }
                None => out.push((s, vec![x], vec![y])),
            }
        }
        out
    }

    /// Writes the table as CSV (header line, numbers in shortest round-trip form).
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(w, "{}", self.columns.join(","))?;
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|x| format!("{x}")).collect();
            writeln!(w, "{}", cells.join(","))?;
        }
        w.flush()
    }
}

/// Contact-frame kinematics of the rig at load, slips and camber (module docs of
/// [`crate::rig`]): vx = V, vy = V tan α, ω = V (1 + κ)/r_e, ρ from the vertical law.
pub fn kinematics(
    law: &dyn AnyTire,
    fz: f64,
    kappa: f64,
    alpha: f64,
    gamma: f64,
    speed: f64,
    mu_road: f64,
) -> SlipKinematics {
    let rho = deflection_at(&law.vertical(), fz);
    let re = law.effective_radius(fz, rho);
    SlipKinematics {
        fz,
        rho,
        vx: speed,
        vy: speed * alpha.tan(),
        omega: speed * (1.0 + kappa) / re,
        gamma,
        psi_dot: 0.0,
        mu_road,
    }
}

const STEADY_COLUMNS: [&str; 17] = [
    "series",
    "kappa",
    "alpha_rad",
    "alpha_deg",
    "fz_N",
    "gamma_rad",
    "gamma_deg",
    "vx_mps",
    "vy_mps",
    "omega_radps",
    "rho_m",
    "fx_N",
    "fy_N",
    "mx_Nm",
    "my_Nm",
    "mz_Nm",
    "mu_road",
];

fn linspace(a: f64, b: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| a + (b - a) * i as f64 / (n - 1) as f64)
}

/// Runs one sweep on a law.
pub fn run_sweep(law: &dyn AnyTire, setup: &RigSetup, sweep: Sweep) -> Result<SweepTable, String> {
    setup.check()?;
    if sweep == Sweep::Step {
        return step(law, setup);
    }
    let n = setup.points;
    let l = setup.load;
    let deg = f64::to_radians;
    // (series value, Fz, κ, α, γ) per point.
    let mut pts: Vec<(f64, f64, f64, f64, f64)> = Vec::new();
    match sweep {
        Sweep::Kappa => {
            for f in [0.5 * l, l, 1.5 * l] {
                pts.extend(linspace(-1.0, 1.0, n).map(|k| (f, f, k, 0.0, 0.0)));
            }
        }
        Sweep::Alpha => {
            for f in [0.5 * l, l, 1.5 * l] {
                pts.extend(linspace(-15.0, 15.0, n).map(|a| (f, f, 0.0, deg(a), 0.0)));
            }
        }
        Sweep::Load => {
            for a in [2.0, 4.0, 8.0] {
                pts.extend(linspace(0.1 * l, 2.0 * l, n).map(|f| (a, f, 0.0, deg(a), 0.0)));
            }
        }
        Sweep::Camber => {
            for a in [0.0, 2.0, 4.0] {
                pts.extend(linspace(-10.0, 10.0, n).map(|g| (a, l, 0.0, deg(a), deg(g))));
            }
        }
        Sweep::Combined => {
            for a in [0.0, 3.0, 6.0] {
                pts.extend(linspace(-1.0, 1.0, n).map(|k| (a, l, k, deg(a), 0.0)));
            }
        }
        Sweep::Step => unreachable!("handled above"),
    }
    let mut rows = Vec::with_capacity(pts.len());
    let mut f = TireForces::default();
    for (series, fz, kappa, alpha, gamma) in pts {
        let k = kinematics(law, fz, kappa, alpha, gamma, setup.speed, setup.mu_road);
        law.steady_state(&k, &mut f);
        let row = vec![
            series,
            kappa,
            alpha,
            alpha.to_degrees(),
            fz,
            gamma,
            gamma.to_degrees(),
            k.vx,
            k.vy,
            k.omega,
            k.rho,
            f.fx,
            f.fy,
            f.mx,
            f.my,
            f.mz,
            setup.mu_road,
        ];
        if row.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "{} sweep: the {} law gives a non-finite result at Fz = {fz} N, κ = {kappa}, α = {alpha} rad, γ = {gamma} rad",
                sweep.name(),
                law.kind()
            ));
        }
        rows.push(row);
    }
    Ok(SweepTable {
        sweep,
        columns: STEADY_COLUMNS.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

/// The slip-angle step: from zero states (a free-rolling, undeflected tire) the slip angle jumps
/// to `step_alpha` at t = 0 and the states are integrated with classical RK4 at fixed kinematics.
/// Step size: T/2000 (T = distance / speed), reduced to 1/λ where λ bounds the state Jacobian's
/// eigenvalues (largest absolute row sum of ∂ṡ/∂s), well inside RK4's stability interval.
fn step(law: &dyn AnyTire, setup: &RigSetup) -> Result<SweepTable, String> {
    let names = law.state_names();
    let ns = names.len().min(MAX_STATES);
    let k = kinematics(
        law,
        setup.load,
        0.0,
        setup.step_alpha,
        0.0,
        setup.speed,
        setup.mu_road,
    );
    let t_end = setup.step_distance / setup.speed;
    let mut jac = TirePartials::default();
    law.partials(&k, &[0.0; MAX_STATES][..ns], &mut jac);
    let lambda = (0..ns)
        .map(|r| {
            (0..ns)
                .map(|c| jac.states[N_FORCES + r][c].abs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let mut h = t_end / 2000.0;
    if lambda > 0.0 {
        h = h.min(1.0 / lambda);
    }
    let n_steps = (t_end / h).ceil() as usize;
    let h = t_end / n_steps as f64;
    let every = n_steps.div_ceil(1000).max(1);
    let mut steady = TireForces::default();
    law.steady_state(&k, &mut steady);
    let mut columns = vec![
        "series".to_string(),
        "t_s".to_string(),
        "distance_m".to_string(),
    ];
    columns.extend(names.iter().take(ns).map(|n| format!("state_{n}")));
    for c in [
        "fx_N",
        "fy_N",
        "mx_Nm",
        "my_Nm",
        "mz_Nm",
        "fy_steady_N",
        "mz_steady_Nm",
    ] {
        columns.push(c.into());
    }
    let rate = |s: &[f64]| {
        let mut f = TireForces::default();
        let mut r = [0.0; MAX_STATES];
        law.evaluate(&k, s, &mut f, &mut r[..ns]);
        r
    };
    let mut s = [0.0; MAX_STATES];
    let mut rows = Vec::new();
    let alpha_deg = setup.step_alpha.to_degrees();
    for i in 0..=n_steps {
        if i % every == 0 || i == n_steps {
            let t = i as f64 * h;
            let mut f = TireForces::default();
            let mut r = [0.0; MAX_STATES];
            law.evaluate(&k, &s[..ns], &mut f, &mut r[..ns]);
            let mut row = vec![alpha_deg, t, t * setup.speed];
            row.extend_from_slice(&s[..ns]);
            row.extend_from_slice(&[f.fx, f.fy, f.mx, f.my, f.mz, steady.fy, steady.mz]);
            if row.iter().any(|x| !x.is_finite()) {
                return Err(format!(
                    "step: the {} law gives a non-finite result at t = {t} s",
                    law.kind()
                ));
            }
            rows.push(row);
        }
        if i == n_steps {
            break;
        }
        let k1 = rate(&s[..ns]);
        let mut tmp = [0.0; MAX_STATES];
        for j in 0..ns {
            tmp[j] = s[j] + 0.5 * h * k1[j];
        }
        let k2 = rate(&tmp[..ns]);
        for j in 0..ns {
            tmp[j] = s[j] + 0.5 * h * k2[j];
        }
        let k3 = rate(&tmp[..ns]);
        for j in 0..ns {
            tmp[j] = s[j] + h * k3[j];
        }
        let k4 = rate(&tmp[..ns]);
        for j in 0..ns {
            s[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
    }
    Ok(SweepTable {
        sweep: Sweep::Step,
        columns,
        rows,
    })
}
