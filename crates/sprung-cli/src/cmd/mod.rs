//! Subcommands of the `sprung` binary, one file each.

pub mod bench;
pub mod bench_solvers;
pub mod check;
pub mod compare;
pub mod elements;
pub mod inputs_table;
pub mod loadcase;
pub mod metrics;
pub mod modes;
pub mod plausibility;
pub mod plot;
pub mod run;
pub mod settings_check;
pub mod solvers;
pub mod statics;
pub mod tire;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use sprung_mbs::CompiledModel;

/// Loads, validates and compiles a model file.
pub fn load_model(path: &Path) -> anyhow::Result<(sprung_model::Model, Arc<CompiledModel>)> {
    let m = sprung_model::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let c = sprung_mbs::compile_with(&m, &sprung::element_registry())
        .with_context(|| format!("compiling {}", path.display()))?;
    Ok((m, Arc::new(c)))
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
