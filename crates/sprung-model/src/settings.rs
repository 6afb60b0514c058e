//! Validation of solver settings: the one function used for the `[solver]` table of a model file
//! (by the loader) and for command-line overrides (by the CLI), so both are checked alike.
//!
//! Rules ([`SolverSettings::validate`]):
//! * `step` and `t_end` finite and > 0; `relinearise_every` >= 1; `relinearise_stale` (when
//!   given) > 0; `method` not empty;
//! * `rtol` finite with 0 < rtol < 1; `atol` finite and > 0;
//! * `max_displacement`, `max_velocity`, `max_force` (when given) > 0 (`inf` = no bound), not NaN;
//! * `output_interval` (when given) finite, > 0 and, for fixed-step runs, a whole multiple of
//!   `step` (relative tolerance [`GRID_TOLERANCE`]);
//! * for fixed-step runs `step` divides `t_end` (same tolerance), so the last step lands on
//!   `t_end` exactly instead of being rounded silently.
//!
//! Violations of the grid rules name the nearest valid values. [`StepMode::Adaptive`] skips the
//! grid rules (the step is then only the initial step size); [`StepMode::Unknown`] (the loader,
//! which does not know the solver catalogue) applies them.

use std::fmt;

use crate::types::SolverSettings;

/// Relative tolerance of "whole multiple" checks: |a/b - round(a/b)| <= GRID_TOLERANCE * round(a/b).
pub const GRID_TOLERANCE: f64 = 1e-9;

/// How the run advances in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepMode {
    /// Fixed steps of `step`: grid rules apply.
    Fixed,
    /// Adaptive step control: `step` is the initial step; no grid rules.
    Adaptive,
    /// Not known (model file without solver catalogue): grid rules apply.
    Unknown,
}

/// One invalid setting.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingProblem {
    /// Field name as in the `[solver]` table (`step`, `rtol`, `output_interval`, ...). The CLI
    /// maps it to its flag (`--step`, ...).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it (with the nearest valid values where there are any).
    pub hint: String,
}

impl fmt::Display for SettingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; fix: {}", self.message, self.hint)
    }
}

/// All invalid settings found by [`SolverSettings::validate`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.problems.iter().map(|p| format!("solver setting `{}`: {p}", p.field)).collect::<Vec<_>>().join("\n"))]
pub struct SettingsError {
    /// Every problem, in field order.
    pub problems: Vec<SettingProblem>,
}

/// Shortest decimal of `x` rounded to 10 significant digits (for suggested values).
fn nice(x: f64) -> String {
    let r: f64 = format!("{x:.9e}").parse().unwrap_or(x);
    format!("{r}")
}

/// `Some(k)` if `a` is (within [`GRID_TOLERANCE`]) k times `b`, k >= 1.
fn whole_multiple(a: f64, b: f64) -> Option<f64> {
    let r = a / b;
    let k = r.round();
    (k >= 1.0 && (r - k).abs() <= GRID_TOLERANCE * k).then_some(k)
}

impl SolverSettings {
    /// Checks every setting (see the module documentation); `Ok` or every problem found.
    pub fn validate(&self, mode: StepMode) -> Result<(), SettingsError> {
        let mut out = Vec::new();
        let mut push = |field: &'static str, message: String, hint: String| {
            out.push(SettingProblem {
                field,
                message,
                hint,
            });
        };
        let step_ok = self.step.is_finite() && self.step > 0.0;
        if !step_ok {
            push(
                "step",
                format!("step = {} is not a positive finite number", self.step),
                "set step > 0 in s, e.g. 1e-3".into(),
            );
        }
        let t_end_ok = self.t_end.is_finite() && self.t_end > 0.0;
        if !t_end_ok {
            push(
                "t_end",
                format!("t_end = {} is not a positive finite number", self.t_end),
                "set t_end > 0 in s, e.g. 1.0".into(),
            );
        }
        if !(self.rtol.is_finite() && self.rtol > 0.0 && self.rtol < 1.0) {
            push(
                "rtol",
                format!(
                    "rtol = {} is outside 0 < rtol < 1 (a relative tolerance)",
                    self.rtol
                ),
                "set rtol between 1e-10 and 1e-2, e.g. 1e-6".into(),
            );
        }
        if !(self.atol.is_finite() && self.atol > 0.0) {
            push(
                "atol",
                format!("atol = {} is not a positive finite number", self.atol),
                "set atol > 0, e.g. 1e-9".into(),
            );
        }
        if self.relinearise_every == 0 {
            push(
                "relinearise_every",
                "relinearise_every = 0".into(),
                "set relinearise_every >= 1 (1 = every step)".into(),
            );
        }
        if let Some(x) = self.relinearise_stale
            && (x.is_nan() || x <= 0.0)
        {
            push(
                "relinearise_stale",
                format!("relinearise_stale = {x} is not a positive level"),
                "set relinearise_stale > 0 in m (an error-indicator level, e.g. 1e-7 = the split tolerance) or leave it out for the fixed schedule".into(),
            );
        }
        if self.method.trim().is_empty() {
            push(
                "method",
                "method is empty".into(),
                "give a solver name, e.g. \"lsrt2\" (see `sprung solvers`)".into(),
            );
        }
        for (field, value, unit) in [
            ("max_displacement", self.max_displacement, "m"),
            ("max_velocity", self.max_velocity, "m/s"),
            ("max_force", self.max_force, "N"),
        ] {
            if let Some(x) = value
                && (x.is_nan() || x <= 0.0)
            {
                push(
                    field,
                    format!("{field} = {x} is not a positive number"),
                    format!(
                        "set {field} > 0 in {unit}, `inf` for no bound, or omit it (default derived from the model's extent and masses)"
                    ),
                );
            }
        }
        let grid = mode != StepMode::Adaptive;
        if let Some(oi) = self.output_interval {
            if !(oi.is_finite() && oi > 0.0) {
                push(
                    "output_interval",
                    format!("output_interval = {oi} is not a positive finite number"),
                    "set output_interval > 0 in s, or omit it (default: the step)".into(),
                );
            } else if grid && step_ok && whole_multiple(oi, self.step).is_none() {
                let k = (oi / self.step).floor().max(1.0);
                let lo = k * self.step;
                let hi = (k + 1.0) * self.step;
                let below = if oi < self.step {
                    "smaller than".to_string()
                } else {
                    "not a whole multiple of".to_string()
                };
                push(
                    "output_interval",
                    format!("output_interval = {oi} is {below} the step {}", self.step),
                    if oi < self.step {
                        format!(
                            "use output_interval = {} (= step) or a multiple of it, or a smaller step such as {}",
                            nice(self.step),
                            nice(oi)
                        )
                    } else {
                        format!(
                            "nearest valid output intervals are {} and {} ({} and {} steps)",
                            nice(lo),
                            nice(hi),
                            k,
                            k + 1.0
                        )
                    },
                );
            }
        }
        if grid && step_ok && t_end_ok && whole_multiple(self.t_end, self.step).is_none() {
            let n = self.t_end / self.step;
            let (nf, nc) = (n.floor(), n.ceil());
            let mut steps = vec![nice(self.t_end / nc)];
            if nf >= 1.0 {
                steps.push(nice(self.t_end / nf));
            }
            let mut ends = Vec::new();
            if nf >= 1.0 {
                ends.push(nice(nf * self.step));
            }
            ends.push(nice(nc * self.step));
            push(
                "step",
                format!(
                    "step = {} does not divide t_end = {} ({} steps); the last step would not land on t_end",
                    self.step,
                    self.t_end,
                    nice(n)
                ),
                format!(
                    "nearest valid steps are {}, or keep the step and set t_end to {}",
                    steps.join(" or "),
                    ends.join(" or ")
                ),
            );
        }
        if out.is_empty() {
            Ok(())
        } else {
            Err(SettingsError { problems: out })
        }
    }
}
