//! Subcommands of the `sprung` binary, one file each.

pub mod accelerate;
pub mod bench;
pub mod bench_solvers;
pub mod check;
pub mod compare;
pub mod elements;
pub mod fmu;
pub mod inputs_table;
pub mod kc;
pub mod kinematics;
pub mod loadcase;
pub mod metrics;
pub mod modes;
pub mod plausibility;
pub mod plot;
pub mod reduce;
pub mod run;
pub mod settings_check;
pub mod solvers;
pub mod statics;
pub mod sweep;
pub mod template;
pub mod tire;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use sprung_mbs::CompiledModel;

/// Loads, validates and compiles a model file.
pub fn load_model(path: &Path) -> anyhow::Result<(sprung_model::Model, Arc<CompiledModel>)> {
    load_model_with(path, &[])
}

/// Loads a model file, applies `--set` parameter values (declared parameters or paths,
/// `docs/parameters.md`; the same mechanism as `sprung::Model::with_parameters`), validates
/// and compiles it.
pub fn load_model_with(
    path: &Path,
    sets: &[(String, f64)],
) -> anyhow::Result<(sprung_model::Model, Arc<CompiledModel>)> {
    let m = load_description(path, sets)?;
    let c = sprung_mbs::compile_with(&m, &sprung::element_registry())
        .with_context(|| format!("compiling {}", path.display()))?;
    Ok((m, Arc::new(c)))
}

/// Loads and validates a model file with `--set` parameter values applied.
pub fn load_description(
    path: &Path,
    sets: &[(String, f64)],
) -> anyhow::Result<sprung_model::Model> {
    let m = sprung_model::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if sets.is_empty() {
        return Ok(m);
    }
    let values: Vec<(&str, f64)> = sets.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    m.with_parameters(&values)
        .map_err(|e| anyhow::anyhow!("--set: {e}"))
}

/// Parses `--set NAME=VALUE` (a declared parameter or a path, and a number).
pub fn parse_set(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected NAME=VALUE, e.g. damper_scale=1.5"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("'{s}': no parameter name before '='"));
    }
    let v: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': '{}' is not a number", value.trim()))?;
    if !v.is_finite() {
        return Err(format!("'{s}': the value must be finite"));
    }
    Ok((name.to_string(), v))
}

/// Parses `--breakpoints` (split, ignore).
pub fn parse_breakpoints(s: &str) -> Result<sprung_solve::mech::Breakpoints, String> {
    use sprung_solve::mech::Breakpoints;
    match s {
        "split" => Ok(Breakpoints::Split),
        "ignore" | "off" => Ok(Breakpoints::Ignore),
        _ => Err(format!("'{s}': expected split or ignore")),
    }
}

/// Whether the environment asks for the portable (non-AVX2) pipeline: `SPRUNG_PORTABLE` set,
/// e.g. for profiling under valgrind. The libraries read no environment; the command maps it.
pub fn portable_requested() -> bool {
    std::env::var_os("SPRUNG_PORTABLE").is_some()
}
