//! `sprung reduce MODEL --variant elastokinematic|kinematic|stiffened -o REDUCED.toml`: the
//! reductions of document 004 (`docs/macro-joint.md`). `elastokinematic`: the light link bodies
//! of each corner are replaced by one `macro_joint` element (link bushings kept); `stiffened`:
//! the same with the link bushings × `--kinematic-factor` (the force-element stand-in for ideal
//! joints); `kinematic`: document 004's kinematic variant in relative coordinates — tabulated
//! joints from the kinematic tables (`sprung::kin_reduce`, tables written to
//! `<REDUCED stem>_tables/`). The reduced model file is written, loaded back and compiled (so it
//! runs), and the statistics of document 004, Table 1, are printed for both. The kinematic
//! variant's `[solver]` re-uses LSRT2's Jacobian (`sprung::kin_reduce::lagged_jacobian`); the
//! macro-joint variants keep the source's (a comment in the file says why).

use std::path::{Path, PathBuf};

use anyhow::Context;
use sprung::kin_tables::{self, KinOptions};
use sprung_reduce::{ReduceOptions, Statistics, Variant};

/// The variants of `sprung reduce` and `sprung check --reduce`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceVariant {
    /// Macro joints with the link bushings kept.
    Elastokinematic,
    /// Tabulated joints in relative coordinates (ideal joints, massless links).
    Kinematic,
    /// Macro joints with the link bushings stiffened by `--kinematic-factor`.
    Stiffened,
}

impl std::str::FromStr for ReduceVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "elastokinematic" | "ek" => Ok(Self::Elastokinematic),
            "kinematic" | "k" => Ok(Self::Kinematic),
            "stiffened" => Ok(Self::Stiffened),
            _ => Err(format!(
                "unknown reduction variant '{s}'; use 'elastokinematic', 'kinematic' or 'stiffened'"
            )),
        }
    }
}

impl std::fmt::Display for ReduceVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Elastokinematic => "elastokinematic",
            Self::Kinematic => "kinematic",
            Self::Stiffened => "stiffened",
        })
    }
}

impl ReduceVariant {
    /// The macro-joint variant, or `None` for the tabulated kinematic one.
    pub fn macro_joint(self) -> Option<Variant> {
        match self {
            Self::Elastokinematic => Some(Variant::Elastokinematic),
            Self::Stiffened => Some(Variant::Stiffened),
            Self::Kinematic => None,
        }
    }
}

/// Grid options of the kinematic variant (as `sprung kinematics`).
#[derive(clap::Args, Debug, Clone)]
pub struct KinGridArgs {
    /// Kinematic variant: travel grid MIN:MAX:STEP, m (must contain 0).
    #[arg(long, default_value = "-0.1:0.1:0.01", value_parser = super::kinematics::parse_range)]
    pub travel: (f64, f64, f64),
    /// Kinematic variant: rack grid MIN:MAX:STEP at steered corners, m (must contain 0).
    #[arg(long, default_value = "-0.08:0.08:0.01", value_parser = super::kinematics::parse_range)]
    pub rack: (f64, f64, f64),
    /// Kinematic variant: factor on the bushings' rotational stiffnesses in the table solve.
    #[arg(long, default_value_t = kin_tables::DEFAULT_ROTATIONAL_FACTOR)]
    pub rotational_factor: f64,
    /// Kinematic variant: a spring, damper or stop end on a link that stays within this
    /// distance (m) of a fixed point of the chassis, the carrier or another link over the whole
    /// table moves onto that body (fewer massless followers; docs/macro-joint.md, "Element ends
    /// re-hosted"); 0 keeps every end on its link.
    #[arg(long, default_value_t = sprung::kin_reduce::DEFAULT_REHOST_TOLERANCE)]
    pub rehost_tolerance: f64,
}

impl KinGridArgs {
    /// The table options.
    pub fn options(&self, max_link_mass: f64) -> anyhow::Result<KinOptions> {
        Ok(KinOptions {
            travel: kin_tables::grid(self.travel.0, self.travel.1, self.travel.2)
                .context("--travel")?,
            rack: Some(kin_tables::grid(self.rack.0, self.rack.1, self.rack.2).context("--rack")?),
            rotational_factor: self.rotational_factor,
            max_link_mass,
            rehost_tolerance: self.rehost_tolerance,
        })
    }
}

/// Arguments of `sprung reduce`.
#[derive(clap::Args, Debug)]
pub struct ReduceArgs {
    /// Full model file (.toml or .json).
    pub model: PathBuf,
    /// Variant: `elastokinematic` (macro joints, link bushings kept), `kinematic` (tabulated
    /// joints: ideal joints, massless links, coordinates travel and rack travel; its file
    /// re-linearises LSRT2 every 50 steps or when the Jacobian is stale — a non-stiff ODE —
    /// `sprung run FILE --relinearise-every 1` for every step) or `stiffened` (macro joints with
    /// the link bushings × --kinematic-factor).
    #[arg(long, default_value = "elastokinematic")]
    pub variant: ReduceVariant,
    /// Reduced model file to write (.toml).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub grid: KinGridArgs,
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
    /// Stiffened variant: factor on the stiffness and damping of the bushings inside the
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
    Ok(format!(
        "{head}\n{}",
        sprung::kin_reduce::with_solver_comment(&body, MACRO_JOINT_SOLVER_COMMENT)
    ))
}

/// Why the macro-joint variants keep the source's `[solver]` (the kinematic variant re-uses
/// LSRT2's Jacobian, `sprung::kin_reduce::lagged_jacobian`).
const MACRO_JOINT_SOLVER_COMMENT: &str = "\
# [solver] as in the source model: the link bushings stay (stiff modes), so a lagged Jacobian is not
# accurate enough to be the default here. Measured on the elastokinematic reference car (10 s turn
# entry, against LSRT2 at 0.25 ms): re-linearised every step 0.5 um of path apart, every 50 steps or
# when stale (--relinearise-every 50 --relinearise-stale 5e-8) 47 um, 1.6x faster
# (docs/macro-joint.md, \"The reduced models' solver settings\").
";

/// The kinematic variant: tables and the reduced model written, loaded back, statistics printed.
fn run_kinematic(args: &ReduceArgs, full: sprung_model::Model) -> anyhow::Result<()> {
    let model = sprung::Model::from_description(full.clone())
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.model.display()))?;
    let opts = args.grid.options(args.select.max_link_mass)?;
    let folder = sprung::kin_reduce::tables_folder(&args.output);
    let folder_name = folder
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let red =
        sprung::kin_reduce::kinematic_reduction(&model, &opts, &folder_name, &mut |_, _, _, _| {})
            .map_err(|e| anyhow::anyhow!("{}: {e}", args.model.display()))?;
    red.write(&args.output, &args.model.display().to_string())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let back = sprung::Model::from_file(&args.output).map_err(|e| {
        anyhow::anyhow!(
            "the written file {} does not load: {e}",
            args.output.display()
        )
    })?;
    println!(
        "{} (kinematic) -> {} ({} tabulated corner(s), tables in {})",
        args.model.display(),
        args.output.display(),
        red.corners.len(),
        folder.display()
    );
    for c in &red.corners {
        println!(
            "  {}: carrier {} on {}{}; massless followers: {}; removed links: {} ({:.2} kg of links left out); {} bushings now ideal joints",
            c.name,
            c.carrier,
            c.parent,
            c.rack
                .as_ref()
                .map(|r| format!(", rack {r}"))
                .unwrap_or_default(),
            c.followers.join(", "),
            c.removed_links.join(", "),
            c.link_mass,
            c.removed_bushings.len()
        );
        if !c.rehosted.is_empty() {
            println!(
                "    element ends re-hosted: {}",
                sprung::kin_reduce::rehosted_summary(&c.rehosted)
            );
        }
    }
    print_list(
        "anti-roll bar couplings kept (rotational stiffness only)",
        &red.couplings,
    );
    for f in &red.fixed {
        println!(
            "  {} made rigid: fixed joint on {}, mounts removed: {}",
            f.body,
            f.parent,
            f.mounts.join(", ")
        );
    }
    print_list("dropped output channels", &red.dropped_outputs);
    print_list("dropped parameters", &red.dropped_parameters);
    print!(
        "{}",
        Statistics::table(
            &Statistics::of(model.description(), model.compiled()),
            &Statistics::of(back.description(), back.compiled()),
            "kinematic"
        )
    );
    Ok(())
}

/// Runs the command.
pub fn run(args: &ReduceArgs) -> anyhow::Result<()> {
    let full = super::load_description(&args.model, &args.set)?;
    let Some(variant) = args.variant.macro_joint() else {
        return run_kinematic(args, full);
    };
    let red = sprung_reduce::reduce(&full, &args.select.options(variant))
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
    print_list("dropped output channels", &red.dropped_outputs);
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

/// `sprung check --reduce VARIANT[,VARIANT…]`: the statistics of the full model and its
/// reductions, one column each (document 004, Table 1).
pub fn print_statistics(
    full: &sprung_model::Model,
    full_c: &sprung_mbs::CompiledModel,
    variants: &[ReduceVariant],
    select: &SelectArgs,
) -> anyhow::Result<()> {
    let mut columns = vec![("full".to_string(), Statistics::of(full, full_c))];
    let mut corners = Vec::new();
    for &variant in variants {
        let stats = match variant.macro_joint() {
            None => {
                let model = sprung::Model::from_description(full.clone())?;
                let opts = KinOptions {
                    max_link_mass: select.max_link_mass,
                    ..KinOptions::default()
                };
                let red = sprung::kin_reduce::kinematic_reduction(
                    &model,
                    &opts,
                    "tables",
                    &mut |_, _, _, _| {},
                )?;
                let c = sprung_mbs::compile_with(&red.model, &sprung::element_registry())
                    .context("compiling the kinematic reduced model")?;
                Statistics::of(&red.model, &c)
            }
            Some(mj) => {
                let red = sprung_reduce::reduce(full, &select.options(mj))?;
                let c = sprung_mbs::compile_with(&red.model, &sprung::element_registry())
                    .with_context(|| format!("compiling the {variant} reduced model"))?;
                for k in &red.corners {
                    corners.push(format!(
                        "  {variant} {}: links {} ({:.2} kg left out)",
                        k.name,
                        k.links.join(", "),
                        k.link_mass
                    ));
                }
                Statistics::of(&red.model, &c)
            }
        };
        columns.push((variant.to_string(), stats));
    }
    let cols: Vec<(&str, &Statistics)> = columns.iter().map(|(l, s)| (l.as_str(), s)).collect();
    println!("statistics (document 004, Table 1):");
    print!("{}", Statistics::table_of(&cols));
    for line in &corners {
        println!("{line}");
    }
    Ok(())
}

/// `  label: a, b, c` when `items` is not empty (what a reduction dropped or kept).
fn print_list(label: &str, items: &[String]) {
    if !items.is_empty() {
        println!("  {label}: {}", items.join(", "));
    }
}
