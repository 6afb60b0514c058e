//! Run settings of a Python simulation: the model's `[solver]` table overridden by keyword
//! arguments, checked by the same validation the model loader and `sprung run` use
//! (`sprung_model::SolverSettings::validate` with the step mode of the solver route); each
//! problem names the keyword when the value came from Python, else the model's `[solver]` table.

use pyo3::PyResult;
use sprung::{LinearSolverKind, RunSettings};
use sprung_mbs::simulate;
use sprung_model::SolverSettings;

use crate::errors::SettingsError;

/// Keyword overrides of the model's `[solver]` settings.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub method: Option<String>,
    pub step: Option<f64>,
    pub output_interval: Option<f64>,
    pub relinearise_every: Option<u64>,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    pub linear_solver: Option<String>,
    pub max_displacement: Option<f64>,
    pub max_velocity: Option<f64>,
    /// Start at the design position even if the model asks for static equilibrium.
    pub from_design: bool,
}

impl Overrides {
    fn given(&self, field: &str) -> bool {
        match field {
            "method" => self.method.is_some(),
            "step" => self.step.is_some(),
            "output_interval" => self.output_interval.is_some(),
            "relinearise_every" => self.relinearise_every.is_some(),
            "rtol" => self.rtol.is_some(),
            "atol" => self.atol.is_some(),
            "max_displacement" => self.max_displacement.is_some(),
            "max_velocity" => self.max_velocity.is_some(),
            _ => false,
        }
    }

    /// The model's settings with these overrides, validated.
    pub fn apply(&self, model: &sprung::Model) -> PyResult<RunSettings> {
        let mut s = model.default_settings();
        let tolerances = self.rtol.is_some() || self.atol.is_some();
        if tolerances && self.step.is_some() {
            return Err(SettingsError::new_err(
                "give either step= (fixed step) or rtol=/atol= (adaptive), not both",
            ));
        }
        s.adaptive = if tolerances {
            Some(true)
        } else if self.step.is_some() {
            Some(false)
        } else {
            None
        };
        if let Some(m) = &self.method {
            s.method = m.to_lowercase();
        }
        if let Some(x) = self.step {
            s.step = x;
        }
        if let Some(x) = self.output_interval {
            s.output_interval = x;
        }
        if let Some(x) = self.relinearise_every {
            s.relinearise_every = x;
        }
        if let Some(x) = self.rtol {
            s.rtol = x;
        }
        if let Some(x) = self.atol {
            s.atol = x;
        }
        if let Some(x) = self.max_displacement {
            s.bounds.max_displacement = Some(x);
        }
        if let Some(x) = self.max_velocity {
            s.bounds.max_velocity = Some(x);
        }
        if let Some(ls) = &self.linear_solver {
            s.linear_solver = match ls.to_lowercase().replace('-', "_").as_str() {
                "dense" => LinearSolverKind::Dense,
                "block_sparse" => LinearSolverKind::BlockSparse,
                other => {
                    return Err(SettingsError::new_err(format!(
                        "linear_solver='{other}': use 'dense' or 'block_sparse'"
                    )));
                }
            };
        }
        validate(model, &s, &|f| self.given(f))?;
        Ok(s)
    }
}

/// Validates `s` for `model`; `from_python(field)` says whether a field came from a keyword.
fn validate(
    model: &sprung::Model,
    s: &RunSettings,
    from_python: &dyn Fn(&str) -> bool,
) -> PyResult<()> {
    let route = simulate::route(&s.method, s.adaptive)
        .map_err(|e| SettingsError::new_err(format!("method='{}': {e}", s.method)))?;
    let merged = SolverSettings {
        method: s.method.clone(),
        step: s.step,
        t_end: s.t_end,
        output_interval: Some(s.output_interval),
        rtol: s.rtol,
        atol: s.atol,
        relinearise_every: u32::try_from(s.relinearise_every).unwrap_or(u32::MAX),
        relinearise_stale: s.relinearise_stale,
        linear_solver: model.description().solver.linear_solver,
        max_displacement: s.bounds.max_displacement,
        max_velocity: s.bounds.max_velocity,
        max_force: s.bounds.max_force,
    };
    let Err(e) = merged.validate(route.step_mode()) else {
        return Ok(());
    };
    let lines: Vec<String> = e
        .problems
        .iter()
        .map(|p| {
            let source = if from_python(p.field) {
                format!("keyword {}=", p.field)
            } else {
                format!("[solver] {} of model '{}'", p.field, model.compiled().name)
            };
            format!("  - {source}: {p}")
        })
        .collect();
    Err(SettingsError::new_err(format!(
        "invalid run settings:\n{}",
        lines.join("\n")
    )))
}

/// Checks the settings of one run with another output interval (`Simulation.run(...,
/// output_interval=...)`).
pub fn check_output_interval(sim: &sprung::Simulation, s: &RunSettings) -> PyResult<()> {
    validate(sim.model(), s, &|f| f == "output_interval")
}
