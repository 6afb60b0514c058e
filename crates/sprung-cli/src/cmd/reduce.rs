//! `sprung reduce MODEL --variant elastokinematic|kinematic -o REDUCED.toml`: the macro-joint
//! reduction of document 004 (`docs/macro-joint.md`): the light link bodies of each corner are
//! replaced by one `macro_joint` element; the reduced model file is written, loaded back and
//! compiled (so it runs), and the statistics of document 004, Table 1, are printed for both.

use std::path::{Path, PathBuf};

use anyhow::Context;
use sprung_reduce::{ReduceOptions, Statistics, Variant};

/// Arguments of `sprung reduce`.
#[derive(clap::Args, Debug)]
pub struct ReduceArgs {
    /// Full model file (.toml or .json).
    pub model: PathBuf,
    /// Variant: `elastokinematic` (link bushings kept) or `kinematic` (link bushings stiffened
    /// by --kinematic-factor, the stand-in for ideal joints).
    #[arg(long, default_value = "elastokinematic")]
    pub variant: Variant,
    /// Reduced model file to write (.toml).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Change a model value before reducing: NAME=VALUE (repeatable; docs/parameters.md).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
}

/// Which bodies are links (shared by `reduce` and `check --reduce`).
#[derive(clap::Args, Debug, Clone)]
pub struct SelectArgs {
    /// The link bodies, comma-separated (default: automatic, bodies up to --max-link-mass).
    #[arg(long, value_delimiter = ',')]
    pub links: Option<Vec<String>>,
    /// Bodies that stay bodies in the automatic selection, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub keep: Vec<String>,
    /// Automatic selection: bodies up to this mass are links, kg.
    #[arg(long, default_value_t = 3.0)]
    pub max_link_mass: f64,
    /// Kinematic variant: factor on the stiffness and damping of the bushings inside the
    /// macro joints.
    #[arg(long, default_value_t = 1000.0)]
    pub kinematic_factor: f64,
}

impl SelectArgs {
    /// The library options for `variant`.
    pub fn options(&self, variant: Variant) -> ReduceOptions {
        ReduceOptions {
            variant,
            links: self.links.clone(),
            keep: self.keep.clone(),
            max_link_mass: self.max_link_mass,
            kinematic_factor: self.kinematic_factor,
        }
    }
}

/// The reduced model as the text of a model file (TOML), with a header saying where it came from.
pub fn to_toml(r: &sprung_reduce::Reduction, source: &Path) -> anyhow::Result<String> {
    let body = toml::to_string(&r.model).context("writing the reduced model as TOML")?;
    let mut head = format!(
        "# {}: reduced by `sprung reduce` (macro joint of document 004, docs/macro-joint.md)\n# from {}; edit the full model and reduce again rather than this file.\n",
        r.model.model.name,
        source.display()
    );
    for c in &r.corners {
        head.push_str(&format!(
            "# {}: links {} ({:.2} kg left out), boundary bodies {}\n",
            c.name,
            c.links.join(", "),
            c.link_mass,
            c.boundary.join(", ")
        ));
    }
    if !r.dropped_outputs.is_empty() {
        head.push_str(&format!(
            "# output channels of removed items dropped: {}\n",
            r.dropped_outputs.join(", ")
        ));
    }
    if !r.dropped_parameters.is_empty() {
        head.push_str(&format!(
            "# parameters dropped (applied at their values before reducing): {}\n",
            r.dropped_parameters.join(", ")
        ));
    }
    Ok(format!("{head}\n{body}"))
}

/// Runs the command.
pub fn run(args: &ReduceArgs) -> anyhow::Result<()> {
    let full = super::load_description(&args.model, &args.set)?;
    let red = sprung_reduce::reduce(&full, &args.select.options(args.variant))
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.model.display()))?;
    let text = to_toml(&red, &args.model)?;
    std::fs::write(&args.output, &text)
        .with_context(|| format!("writing {}", args.output.display()))?;
    // The file must run: load and compile it back.
    let back = sprung::Model::from_file(&args.output).map_err(|e| {
        anyhow::anyhow!(
            "the written file {} does not load: {e}",
            args.output.display()
        )
    })?;
    let full_c = sprung_mbs::compile_with(&full, &sprung::element_registry())
        .with_context(|| format!("compiling {}", args.model.display()))?;
    println!(
        "{} ({}) -> {} ({} macro joint(s))",
        args.model.display(),
        args.variant,
        args.output.display(),
        red.corners.len()
    );
    for c in &red.corners {
        println!(
            "  {}: {} links ({:.2} kg), {} elements inside, boundary {}",
            c.name,
            c.links.len(),
            c.link_mass,
            c.elements.len(),
            c.boundary.join(", ")
        );
    }
    if !red.dropped_outputs.is_empty() {
        println!(
            "  dropped output channels: {}",
            red.dropped_outputs.join(", ")
        );
    }
    print!(
        "{}",
        Statistics::table(
            &Statistics::of(&full, &full_c),
            &Statistics::of(back.description(), back.compiled()),
            &args.variant.to_string()
        )
    );
    Ok(())
}

/// `sprung check --reduce VARIANT`: the statistics of the full model and its reduction.
pub fn print_statistics(
    full: &sprung_model::Model,
    full_c: &sprung_mbs::CompiledModel,
    variant: Variant,
    select: &SelectArgs,
) -> anyhow::Result<()> {
    let red = sprung_reduce::reduce(full, &select.options(variant))?;
    let c = sprung_mbs::compile_with(&red.model, &sprung::element_registry())
        .context("compiling the reduced model")?;
    println!("statistics (document 004, Table 1):");
    print!(
        "{}",
        Statistics::table(
            &Statistics::of(full, full_c),
            &Statistics::of(&red.model, &c),
            &variant.to_string()
        )
    );
    for k in &red.corners {
        println!(
            "  {}: links {} ({:.2} kg left out)",
            k.name,
            k.links.join(", "),
            k.link_mass
        );
    }
    Ok(())
}
