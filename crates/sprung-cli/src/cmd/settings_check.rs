//! One validation path for run settings: the model's `[solver]` table merged with the
//! command-line overrides goes through [`sprung_model::SolverSettings::validate`], the same
//! function the model loader uses, with the step mode of the chosen solver route. Problems
//! name the flag when the value came from the command line, else the model file.

use sprung_mbs::simulate::{Route, RunSettings};
use sprung_model::{Model, SolverSettings};

use super::run::RunArgs;

/// The merged settings as a [`SolverSettings`] (what [`SolverSettings::validate`] checks).
pub fn merged(m: &Model, s: &RunSettings) -> SolverSettings {
    SolverSettings {
        method: s.method.clone(),
        step: s.step,
        t_end: s.t_end,
        output_interval: Some(s.output_interval),
        rtol: s.rtol,
        atol: s.atol,
        relinearise_every: u32::try_from(s.relinearise_every).unwrap_or(u32::MAX),
        relinearise_stale: s.relinearise_stale,
        linear_solver: m.solver.linear_solver,
        max_displacement: s.bounds.max_displacement,
        max_velocity: s.bounds.max_velocity,
        max_force: s.bounds.max_force,
    }
}

/// Validates the merged settings of `sprung run`; the error lists every problem with its
/// source (`--flag` or the model file's `[solver]` table).
pub fn validate(a: &RunArgs, m: &Model, s: &RunSettings, route: &Route) -> anyhow::Result<()> {
    let Err(e) = merged(m, s).validate(route.step_mode()) else {
        return Ok(());
    };
    let from_cli = |field: &str| match field {
        "step" => a.step.is_some(),
        "t_end" => a.t_end.is_some(),
        "output_interval" => a.output_interval.is_some(),
        "rtol" => a.rtol.is_some(),
        "atol" => a.atol.is_some(),
        "relinearise_every" => a.relinearise_every.is_some(),
        "relinearise_stale" => a.relinearise_stale.is_some(),
        "method" => a.solver.is_some(),
        "max_displacement" => a.max_displacement.is_some(),
        "max_velocity" => a.max_velocity.is_some(),
        "max_force" => a.max_force.is_some(),
        _ => false,
    };
    let lines: Vec<String> = e
        .problems
        .iter()
        .map(|p| {
            let source = if from_cli(p.field) {
                format!("--{}", p.field.replace('_', "-"))
            } else {
                format!("[solver] {} in {}", p.field, a.model.display())
            };
            format!("  - {source}: {p}")
        })
        .collect();
    anyhow::bail!(
        "invalid run settings (nothing was written):\n{}",
        lines.join("\n")
    )
}
