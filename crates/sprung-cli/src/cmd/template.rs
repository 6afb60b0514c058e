//! `sprung template KIND PARAMS.toml`: model-file fragments generated from a few parameters.
//! `leaf-spring`: the SAE three-link leaf spring of `sprung_vehicle::leaf_spring`
//! (docs/leaf-spring.md) — bodies, markers and bushings with `mirror = true`, written to stdout
//! or `--out FILE`, to be pasted into (or included by) a vehicle model.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use sprung_vehicle::leaf_spring::LeafSpringParams;

/// Template kinds.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateKind {
    /// Leaf spring (SAE three-link model): links, shackle, eye, clamp and shackle bushings.
    LeafSpring,
}

/// Arguments of `sprung template`.
#[derive(Args, Debug)]
#[command(after_help = "\
Example: sprung template leaf-spring models/leaf_springs/front.params.toml \
--out models/leaf_springs/front.toml")]
pub struct TemplateArgs {
    /// What to generate.
    #[arg(value_enum)]
    pub kind: TemplateKind,
    /// Parameter file (TOML; docs/leaf-spring.md lists the keys).
    pub params: PathBuf,
    /// Write the fragment to this file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The generated text for a parameter file; the header names the file by its file name only,
/// so the output does not depend on the working directory.
pub fn generate(kind: TemplateKind, params: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(params)
        .with_context(|| format!("cannot read parameter file {}", params.display()))?;
    let label = params.display().to_string();
    match kind {
        TemplateKind::LeafSpring => {
            let p = LeafSpringParams::from_toml_str(&text, &label)?;
            let leaf = p.build()?;
            let name = params
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or(label);
            Ok(leaf.to_toml(&p, &name))
        }
    }
}

/// Runs `sprung template`.
pub fn run(a: &TemplateArgs) -> anyhow::Result<()> {
    let text = generate(a.kind, &a.params)?;
    match &a.out {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
