//! Plausibility warnings of `sprung check` (issue 17, item 7): things that load and validate but
//! are likely wrong or will make the run fail. Warnings, never errors.
//!
//! * **Masses**: the ratio of the largest to the smallest body mass above [`MASS_RATIO_WARN`].
//! * **Positions**: a body centre of mass or marker (design position, global) farther than
//!   [`FAR_FACTOR`] × the typical distance from the model's centre (per-coordinate median of all
//!   points; typical distance = median distance to it, at least [`MIN_TYPICAL_DISTANCE`]) — a
//!   millimetre value in a metre field, a sign slip.
//! * **Modes against step and solver**: the eigenvalues λ of the model linearised at its initial
//!   state (design or static equilibrium; the dense modal analysis of `sprung_mbs::modes`, models
//!   up to [`MODES_MAX_DOF`] degrees of freedom). The stiffest mode is |λ|max / 2π.
//!   - explicit fixed-step methods of s = p stages and order p ≤ 4 (`rk4`, `ode1`…`ode4`): the
//!     step h is stable iff |R(hλ)| ≤ 1 for every λ, R(z) = 1 + z + … + z^p/p! the stability
//!     polynomial. The headline frequency limit is that of undamped modes, the imaginary-axis
//!     bound |hλ| ≤ y_p (rk4: 2√2, ode3: √3, ode1/ode2: 0), f = y_p / (2π h); the suggested
//!     step is the largest h' ≤ h with |R(h'λ)| ≤ 1 for all λ (bisection);
//!   - adaptive explicit methods (`ode45`, `ode23`, `ode113`): their step is held near
//!     [`EXPLICIT_ADAPTIVE_LIMIT`] / |λ|max by stability; a warning when that means more than
//!     [`MAX_EXPLICIT_STEPS`] steps to t_end;
//!   - linear-implicit and implicit methods are A-stable: no limit from stability (noted);
//!   - any fixed step longer than 1/(2π f_low), f_low the slowest oscillatory mode: fewer than
//!     2π steps per period of the slowest mode, the motion is not resolved (and a nonlinear model
//!     may diverge even with an A-stable method — `--step 1.0` on the double wishbone).
//! * **Spread of the spectrum**: a stiffness ratio max|λ| / min|λ| above [`STIFFNESS_RATIO_WARN`]
//!   (the reference axles have 1.4e5): usually a unit slip in a mass, inertia or stiffness.

use nalgebra::{Complex, Vector3};
use sprung_mbs::modes::Modes;
use sprung_mbs::simulate::{Route, route};
use sprung_solve::ode::{self, MethodKind};

/// Largest body mass ratio without a warning.
pub const MASS_RATIO_WARN: f64 = 1e4;
/// Largest stiffness ratio (max|λ|/min|λ|) without a warning.
pub const STIFFNESS_RATIO_WARN: f64 = 1e8;
/// A point farther than this many typical distances from the model's centre is "far".
pub const FAR_FACTOR: f64 = 20.0;
/// Floor of the typical distance, m.
pub const MIN_TYPICAL_DISTANCE: f64 = 0.05;
/// Largest model (velocity-level coordinates) for which `check` computes the modes.
pub const MODES_MAX_DOF: usize = 600;
/// |hλ| at which adaptive explicit methods (Dormand–Prince and kin) are held by stability.
pub const EXPLICIT_ADAPTIVE_LIMIT: f64 = 3.3;
/// Step count above which an adaptive explicit run is flagged as stability-bound.
pub const MAX_EXPLICIT_STEPS: f64 = 1e6;

/// What [`assess`] found: notes (facts) and warnings.
#[derive(Debug, Default)]
pub struct Findings {
    /// Facts: the stiffest mode, the method's stability, the extent.
    pub notes: Vec<String>,
    /// Likely problems.
    pub warnings: Vec<String>,
}

/// Stability polynomial of the p-stage explicit Runge–Kutta methods of order p ≤ 4.
fn r_poly(p: usize, z: Complex<f64>) -> Complex<f64> {
    let mut sum = Complex::new(1.0, 0.0);
    let mut term = Complex::new(1.0, 0.0);
    for k in 1..=p {
        term = term * z / k as f64;
        sum += term;
    }
    sum
}

/// Imaginary-axis stability bound y_p of those methods (|R(iy)| ≤ 1 for |y| ≤ y_p).
fn imag_limit(p: usize) -> f64 {
    match p {
        3 => 3f64.sqrt(),
        4 => 8f64.sqrt(),
        _ => 0.0,
    }
}

/// Stages = order of the explicit fixed-step methods with a known stability polynomial.
fn explicit_order(method: &str) -> Option<usize> {
    match method {
        "rk4" | "ode4" => Some(4),
        "ode3" => Some(3),
        "ode2" => Some(2),
        "ode1" => Some(1),
        _ => None,
    }
}

const STABLE_TOL: f64 = 1e-9;

fn stable(p: usize, h: f64, lambdas: &[Complex<f64>]) -> bool {
    lambdas
        .iter()
        .all(|&l| r_poly(p, l * h).norm() <= 1.0 + STABLE_TOL)
}

/// The largest step ≤ h for which the p-stage method is stable on all `lambdas` (bisection to
/// 1e-3 relative; 0 when no positive step is).
pub fn largest_stable_step(p: usize, h: f64, lambdas: &[Complex<f64>]) -> f64 {
    if stable(p, h, lambdas) {
        return h;
    }
    let (mut lo, mut hi) = (0.0, h);
    // Below the smallest 1e-12 h nothing changes in practice.
    while hi - lo > 1e-3 * hi && hi > 1e-12 * h {
        let mid = 0.5 * (lo + hi);
        if stable(p, mid, lambdas) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn hz(f: f64) -> String {
    if f >= 1e3 {
        format!("{:.3} kHz", f / 1e3)
    } else {
        format!("{f:.3} Hz")
    }
}

fn secs(h: f64) -> String {
    if h < 1.0 {
        format!("{} ms", h * 1e3)
    } else {
        format!("{h} s")
    }
}

/// Mass ratio and far positions (no simulation needed).
fn static_checks(cm: &sprung_mbs::CompiledModel, out: &mut Findings) {
    if let (Some(heavy), Some(light)) = (
        cm.bodies.iter().max_by(|a, b| a.mass.total_cmp(&b.mass)),
        cm.bodies.iter().min_by(|a, b| a.mass.total_cmp(&b.mass)),
    ) && light.mass > 0.0
        && heavy.mass / light.mass > MASS_RATIO_WARN
    {
        out.warnings.push(format!(
            "mass ratio {:.1e}: body '{}' has {} kg, body '{}' {} kg (more than {MASS_RATIO_WARN:.0e}); check the units (kg), and expect a stiff system",
            heavy.mass / light.mass,
            heavy.name,
            heavy.mass,
            light.name,
            light.mass
        ));
    }
    let mut points: Vec<(String, Vector3<f64>)> = cm
        .bodies
        .iter()
        .map(|b| (format!("body '{}'", b.name), b.position))
        .collect();
    for m in &cm.markers {
        let p = match m.body {
            None => m.position,
            Some(i) => {
                let b = &cm.bodies[i];
                b.position + sprung_mbs::rotation::quat_to_matrix(&b.orientation) * m.position
            }
        };
        points.push((format!("marker '{}'", m.name), p));
    }
    if points.len() < 3 {
        return;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let c = Vector3::new(
        median(points.iter().map(|p| p.1.x).collect()),
        median(points.iter().map(|p| p.1.y).collect()),
        median(points.iter().map(|p| p.1.z).collect()),
    );
    let typical =
        median(points.iter().map(|p| (p.1 - c).norm()).collect()).max(MIN_TYPICAL_DISTANCE);
    let far: Vec<String> = points
        .iter()
        .filter(|p| (p.1 - c).norm() > FAR_FACTOR * typical)
        .map(|p| format!("{} at {:.4} m", p.0, (p.1 - c).norm()))
        .collect();
    if !far.is_empty() {
        out.warnings.push(format!(
            "far from the rest of the model (typical distance from its centre {typical:.3} m; more than {FAR_FACTOR} x that): {}; check for a unit slip (mm in a field in m) or a sign",
            far.join(", ")
        ));
    }
}

/// Warnings of the modes against the step and the solver (module docs).
fn modal_checks(modes: &Modes, method: &str, h: f64, t_end: f64, rt: &Route, out: &mut Findings) {
    let lambdas = &modes.full_eigenvalues;
    let lmax = lambdas.iter().map(|l| l.norm()).fold(0.0, f64::max);
    if lmax == 0.0 || !lmax.is_finite() {
        return;
    }
    let f_stiff = lmax / (2.0 * std::f64::consts::PI);
    out.notes.push(format!(
        "stiffest mode: {} (|λ|max / 2π from the dense modal analysis at the initial state); stiffness ratio {:.3e}",
        hz(f_stiff),
        modes.stiffness_ratio
    ));
    if modes.stiffness_ratio > STIFFNESS_RATIO_WARN {
        out.warnings.push(format!(
            "stiffness ratio max|λ|/min|λ| = {:.3e} (the reference axles: 1.4e5; more than {STIFFNESS_RATIO_WARN:.0e}): check the units of masses, inertias and stiffnesses",
            modes.stiffness_ratio
        ));
    }
    let fixed = matches!(
        rt,
        Route::Rk4 | Route::Pie(_) | Route::RosenbrockFixed(_) | Route::FirstOrder(_, true)
    );
    let info = ode::catalogue().iter().find(|m| m.name == method);
    let explicit = matches!(rt, Route::Rk4) || info.is_some_and(|m| m.kind == MethodKind::Explicit);
    if explicit && fixed {
        if let Some(p) = explicit_order(method) {
            let y = imag_limit(p);
            let limit = if y > 0.0 {
                format!(
                    "explicit {method} at {} is unstable above {} for undamped modes (|hλ| ≤ {y:.3})",
                    secs(h),
                    hz(y / (2.0 * std::f64::consts::PI * h))
                )
            } else {
                format!(
                    "explicit {method} is unstable for undamped modes at any step (its stability region does not contain the imaginary axis)"
                )
            };
            if stable(p, h, lambdas) {
                out.notes.push(format!(
                    "{limit}; all modes are inside its stability region"
                ));
            } else {
                let n_out = lambdas
                    .iter()
                    .filter(|&&l| r_poly(p, l * h).norm() > 1.0 + STABLE_TOL)
                    .count();
                let h2 = largest_stable_step(p, h, lambdas);
                let fix = if h2 > 0.0 {
                    format!("a step of at most {h2:.3e} s, or ")
                } else {
                    String::new()
                };
                out.warnings.push(format!(
                    "{limit}; the stiffest mode is {} ({n_out} of {} eigenvalues outside the stability region): the run will diverge; use {fix}an implicit method (lsrt2, rodas4)",
                    hz(f_stiff),
                    lambdas.len()
                ));
            }
        } else {
            out.notes.push(format!(
                "explicit {method}: stability limit not estimated for this method; the stiffest mode is {}",
                hz(f_stiff)
            ));
        }
    } else if explicit {
        let h_stab = EXPLICIT_ADAPTIVE_LIMIT / lmax;
        let n = t_end / h_stab;
        if n > MAX_EXPLICIT_STEPS {
            out.warnings.push(format!(
                "explicit {method} is held by stability to steps of about {EXPLICIT_ADAPTIVE_LIMIT}/|λ|max = {h_stab:.2e} s by the stiffest mode ({}): about {n:.1e} steps to t_end = {t_end} s whatever the tolerance; use a stiff method (rodas4, ode15s, lsrt2)",
                hz(f_stiff)
            ));
        }
    } else {
        out.notes.push(format!(
            "{method} is (linear-)implicit and A-stable: no stability limit on the step; modes much faster than 1/(2π h) are damped out, not resolved"
        ));
    }
    if fixed
        && let Some(low) = modes.oscillatory.first()
        && 2.0 * std::f64::consts::PI * low.frequency_hz * h > 1.0
    {
        let period = 1.0 / low.frequency_hz;
        out.warnings.push(format!(
            "the step {h} s does not resolve the slowest mode ({}, period {period:.4} s: fewer than 2π steps per period); the results are not meaningful and the nonlinear model may diverge even with an A-stable method; use a step of at most {:.3e} s",
            hz(low.frequency_hz),
            period / 20.0
        ));
    }
}

/// Plausibility findings of `model` run with `method` (fixed step `h` where `adaptive` is
/// `Some(false)` or the method's natural mode is fixed) to `t_end` (module docs).
pub fn assess(
    model: &std::sync::Arc<sprung::Model>,
    method: &str,
    adaptive: Option<bool>,
    h: f64,
    t_end: f64,
) -> Findings {
    let mut out = Findings::default();
    let cm = model.compiled();
    static_checks(cm, &mut out);
    let limits = model.default_settings().bounds.resolve(cm);
    out.notes.push(format!(
        "model extent {:.3} m; a run stops as diverged beyond {:.3e} m from the design position, {:.3e} m/s or a resultant force of {:.3e} N on a body ([solver] max_displacement / max_velocity / max_force)",
        limits.extent, limits.max_displacement, limits.max_velocity, limits.max_force
    ));
    let Ok(rt) = route(method, adaptive) else {
        return out;
    };
    if cm.n_v() > MODES_MAX_DOF {
        out.notes.push(format!(
            "modes not estimated above {MODES_MAX_DOF} DOF (the model has {}); see `sprung modes`",
            cm.n_v()
        ));
        return out;
    }
    if cm.bodies.is_empty() {
        return out;
    }
    let mut settings = model.default_settings();
    settings.method = method.into();
    settings.step = h;
    let sim = sprung::Simulation::new(model.clone())
        .or_else(|_| sprung::Simulation::with_settings(model.clone(), settings));
    let modes = match sim.and_then(|mut s| s.modes()) {
        Ok(m) => m,
        Err(e) => {
            out.notes.push(format!("modes not estimated: {e}"));
            return out;
        }
    };
    modal_checks(&modes, method, h, t_end, &rt, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stability polynomials against their textbook boundaries (Hairer & Wanner, *Solving
    /// ODEs II*, section IV.2): rk4 is stable on the imaginary axis up to 2√2 and on the real
    /// axis to -2.7853; explicit Euler to -2 on the real axis.
    #[test]
    fn stability_boundaries_match_the_textbook_values() {
        let i = |y: f64| Complex::new(0.0, y);
        let re = |x: f64| Complex::new(x, 0.0);
        assert!(r_poly(4, i(2.828)).norm() <= 1.0);
        assert!(r_poly(4, i(2.829)).norm() > 1.0);
        assert!(r_poly(4, re(-2.785)).norm() <= 1.0);
        assert!(r_poly(4, re(-2.786)).norm() > 1.0);
        assert!(r_poly(1, re(-1.999)).norm() <= 1.0);
        assert!(r_poly(1, re(-2.001)).norm() > 1.0);
        assert!(r_poly(3, i(1.732)).norm() <= 1.0);
        assert!(r_poly(3, i(1.733)).norm() > 1.0);
        // Largest stable step of rk4 for an undamped 1 kHz mode: 2√2 / (2π 1000) = 4.502e-4 s.
        let w = 2.0 * std::f64::consts::PI * 1e3;
        let h = largest_stable_step(4, 1e-3, &[i(w), i(-w)]);
        assert!((h - 8f64.sqrt() / w).abs() < 2e-3 * h, "{h}");
    }
}
