//! `sprung accelerate MODEL`: generate the accelerated evaluation path of a model with joints
//! (Rust source written for the model, document 004's symbolic accelerator), compile it with the
//! toolchain's `rustc` into a plugin and cache it (docs/accelerate.md); `sprung run
//! --accelerate` loads it (and builds it first if the cache does not hold it).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use sprung::AccelOptions;

/// Arguments of `sprung accelerate`.
#[derive(Args, Debug)]
pub struct AccelerateArgs {
    /// Model file (.toml or .json) with joints (e.g. a reduced model of `sprung reduce`).
    pub model: PathBuf,
    /// Cache directory of the plugins (default: SPRUNG_ACCEL_DIR, else
    /// $XDG_CACHE_HOME/sprung/accel or ~/.cache/sprung/accel).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile even if the cache holds the plugin.
    #[arg(long)]
    pub rebuild: bool,
    /// Code for the baseline CPU of the target instead of this machine's (`-C
    /// target-cpu=native`, the default: AVX2 and FMA where the CPU has them). Use it for a plugin
    /// that other machines load.
    #[arg(long)]
    pub baseline_cpu: bool,
    /// Change a model value without editing the file (as `sprung run --set`).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
}

/// Builds (or finds) the plugin of `a.model` and prints what was done.
pub fn run(a: &AccelerateArgs) -> anyhow::Result<()> {
    let (m, _) = super::load_model_with(&a.model, &a.set)?;
    let model = sprung::Model::from_description(m)?;
    let opts = AccelOptions {
        cache_dir: a.cache_dir.clone(),
        native: !a.baseline_cpu,
        rebuild: a.rebuild,
    };
    let start = Instant::now();
    let src = sprung_accel::codegen::source(model.compiled())
        .with_context(|| format!("accelerating {}", a.model.display()))?;
    let c = model.compiled();
    eprintln!(
        "generated {} lines of Rust for model '{}' ({} joint tree{}, {} tree coordinates) in {:.1} ms",
        src.text.lines().count(),
        c.name,
        c.joints.trees.len(),
        if c.joints.trees.len() == 1 { "" } else { "s" },
        c.joints.trees.iter().map(|t| t.n_coords()).sum::<usize>(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let built = sprung_accel::build::build(&src, &opts)?;
    // Loaded once: the check that it is this model's and that it runs.
    sprung_accel::Plugin::load(&built.library, &src)?;
    report(&built);
    println!("{}", built.library.display());
    Ok(())
}

fn report(built: &sprung::AcceleratorBuild) {
    if built.compiled {
        eprintln!(
            "compiled with rustc in {:.1} s: {} (source {})",
            built.seconds,
            built.library.display(),
            built.source.display()
        );
    } else {
        eprintln!("found in the cache: {}", built.library.display());
    }
}

/// `--accelerate` of `sprung run`: installs the model's plugin on `sim` (building it if the
/// cache does not hold it), with a line of progress unless `quiet`.
pub fn install(
    sim: &mut sprung::Simulation,
    file: &Path,
    quiet: bool,
) -> anyhow::Result<sprung::AcceleratorBuild> {
    if !quiet {
        eprintln!(
            "accelerate: loading the plugin of {} (compiling it first if it is not in the cache)",
            file.display()
        );
    }
    let built = sim
        .accelerate(&run_options())
        .with_context(|| format!("--accelerate {}", file.display()))?;
    if !quiet {
        report(&built);
    }
    Ok(built)
}

/// The options of `--accelerate` (`sprung run`, `sprung bench`): the defaults, but code for the
/// target's baseline CPU where SPRUNG_PORTABLE asks for the portable code paths (profiling tools
/// that do not decode every instruction of this machine's CPU).
pub fn run_options() -> AccelOptions {
    AccelOptions {
        native: !super::portable_requested(),
        ..AccelOptions::default()
    }
}
