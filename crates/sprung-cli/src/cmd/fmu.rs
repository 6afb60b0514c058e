//! `sprung fmu MODEL -o FILE.fmu --fmi 2|3`: export a co-simulation FMU (docs/fmi.md).
//!
//! The engine inside the FMU is the `sprung-fmi` shared library: by default
//! `libsprung_fmi.so` next to the `sprung` executable (cargo puts both into the same target
//! folder: `cargo build --release -p sprung-cli -p sprung-fmi`), or `--library PATH`.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};
use sprung_fmi::{FmiVersion, PackOptions};

/// FMI version of the exported FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FmiArg {
    /// FMI 2.0 co-simulation.
    #[value(name = "2")]
    V2,
    /// FMI 3.0 co-simulation.
    #[value(name = "3")]
    V3,
}

/// Arguments of `sprung fmu`.
#[derive(Args, Debug)]
pub struct FmuArgs {
    /// Model file (.toml or .json); files it references (CSV signals) are packed too.
    pub model: PathBuf,
    /// Output file (.fmu).
    #[arg(short, long, value_name = "FILE.fmu")]
    pub output: PathBuf,
    /// FMI version.
    #[arg(long, value_enum, default_value = "3")]
    pub fmi: FmiArg,
    /// The engine library (default: libsprung_fmi.so next to the sprung executable).
    #[arg(long, value_name = "PATH")]
    pub library: Option<PathBuf>,
}

/// The default engine library: `libsprung_fmi.so` beside the running executable (or one
/// folder up, for an executable in `deps/`).
fn default_library() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    for d in [Some(dir), dir.parent()].into_iter().flatten() {
        let p = d.join("libsprung_fmi.so");
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "the FMU engine library libsprung_fmi.so is not next to {}; build it with `cargo build --release -p sprung-cli -p sprung-fmi` (same target folder) or give --library PATH",
        exe.display()
    )
}

/// Runs the command.
pub fn run(a: &FmuArgs) -> anyhow::Result<()> {
    if a.output.extension().is_none_or(|e| e != "fmu") {
        bail!(
            "output file {}: an FMU file must end in .fmu",
            a.output.display()
        );
    }
    let library = match &a.library {
        Some(p) if !p.is_file() => bail!(
            "--library {}: no such file; build it with `cargo build --release -p sprung-fmi` (target/release/libsprung_fmi.so)",
            p.display()
        ),
        Some(p) => p.clone(),
        None => default_library()?,
    };
    let version = match a.fmi {
        FmiArg::V2 => FmiVersion::V2,
        FmiArg::V3 => FmiVersion::V3,
    };
    let report = sprung_fmi::pack(&PackOptions {
        model: a.model.clone(),
        library,
        version,
        output: a.output.clone(),
    })?;
    println!(
        "wrote {} (FMI {}.0 co-simulation, model identifier {}, {} inputs, {} outputs)",
        a.output.display(),
        version.number(),
        report.model_identifier,
        report.n_inputs,
        report.n_outputs
    );
    for e in &report.entries {
        println!("  {e}");
    }
    Ok(())
}
