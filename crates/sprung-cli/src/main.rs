//! `sprung` — command-line interface of the sprung multibody engine.
//!
//! Thin by design: parses arguments, calls the libraries, prints summaries. See `sprung --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

mod cmd;

/// Real-time multibody simulation of vehicle suspensions (bodies coupled by force elements).
#[derive(Parser, Debug)]
#[command(name = "sprung", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Result file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Comma-separated values plus a `.meta.json` sidecar with units.
    Csv,
    /// Apache Parquet with units in the field metadata.
    Parquet,
}

/// Linear solver inside linear-implicit methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LinearSolverArg {
    /// Dense LU (faer).
    Dense,
    /// Block-sparse LU following the body-coupling graph.
    BlockSparse,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate a model file and print what it contains (bodies, markers, force elements, DOF,
    /// inputs, outputs).
    Check {
        /// Model file (.toml or .json).
        model: PathBuf,
        /// Solver to assess the model against (default: the model's [solver] method).
        #[arg(long)]
        solver: Option<String>,
        /// Step in s to assess the model against (default: the model's [solver] step).
        #[arg(long)]
        step: Option<f64>,
        /// Check with a model value changed: NAME=VALUE, a declared parameter or a path
        /// (repeatable; docs/parameters.md).
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = cmd::parse_set)]
        set: Vec<(String, f64)>,
        /// Also list every numeric value of the model with the path that addresses it (for
        /// `--set`, `sprung sweep` and `[[parameters]]` targets).
        #[arg(long)]
        paths: bool,
        /// Also print the statistics of document 004, Table 1, for the model and its
        /// reductions of these variants, one column each (`elastokinematic`, `kinematic`,
        /// `stiffened`; comma-separated, e.g. `--reduce elastokinematic,kinematic`).
        #[arg(long, value_name = "VARIANT[,VARIANT…]", value_delimiter = ',')]
        reduce: Vec<cmd::reduce::ReduceVariant>,
        #[command(flatten)]
        select: cmd::reduce::SelectArgs,
    },
    /// Simulate a model and write the output channels to a result file.
    Run(cmd::run::RunArgs),
    /// Print the JSON Schema of the model format.
    Schema,
    /// List the available solvers.
    Solvers,
    /// List the element kinds, built-in and open (markers, parameters, states, outputs); all are written as `[[elements]]`.
    Elements,
    /// Compare result channels against a reference (normalised errors as in document 000, Table 3).
    Compare(cmd::compare::CompareArgs),
    /// Plot result channels (optionally against references) to PNG or SVG.
    Plot(cmd::plot::PlotArgs),
    /// Step-response metrics of result channels: initial and final value, peak, peak time,
    /// overshoot, period (mean interval between upward crossings of the final value) and
    /// settling time.
    Metrics(cmd::metrics::MetricsArgs),
    /// Document 000's validation study: load case with LSRT2 and the RODAS4 reference on the
    /// reference axles, accuracy (Table 3), real-time factors (Table 2) and a Bild 7-like plot.
    Loadcase(cmd::loadcase::LoadcaseArgs),
    /// Real-time benchmark (document 000, Table 2): dense vs block-sparse LU, re-linearising every
    /// step or every 5 steps; real-time factor, step-time statistics and NMSE vs a RODAS4 reference.
    /// `sprung bench solvers`: work-precision benchmark of the solver suite.
    Bench(Box<cmd::bench::BenchArgs>),
    /// Linearise at static equilibrium and print eigenvalues, frequencies, damping ratios and the
    /// stiffness ratio.
    Modes {
        /// Model file.
        model: PathBuf,
        /// Number of undamped natural frequencies to print.
        #[arg(long, default_value_t = 12)]
        count: usize,
    },
    /// Export a co-simulation FMU (FMI 2.0 or 3.0) with the engine and the model inside.
    Fmu(cmd::fmu::FmuArgs),
    /// Static equilibrium: print the output channels and the body displacements (with or
    /// without gravity, at a time or at given input values).
    Static(cmd::statics::StaticArgs),
    /// Tire test rig: steady sweeps of longitudinal slip, slip angle, load and camber and a
    /// transient slip-angle step of a model's tire element -> CSV + PNG of Fx, Fy, Mz.
    Tire(cmd::tire::TireArgs),
    /// Kinematics-and-compliance rig: wheel travel, steering and wheel-force sweeps of an axle
    /// through the static equilibrium -> CSV + PNG of toe, camber, track, compliance.
    Kc(cmd::kc::KcArgs),
    /// Macro-joint reduction (document 004): replace each corner's links by one `macro_joint`
    /// element and write the reduced model file (docs/macro-joint.md).
    Reduce(cmd::reduce::ReduceArgs),
    /// Generate, compile (with the toolchain's rustc) and cache the accelerated evaluation path
    /// of a model with joints (document 004's symbolic accelerator; docs/accelerate.md);
    /// `sprung run --accelerate` uses it.
    Accelerate(cmd::accelerate::AccelerateArgs),
    /// Kinematic tables (document 004's kinematic corner: ideal joints in place of the link
    /// bushings) on a grid of wheel and rack travel -> TOML tables, CSV, PNG (docs/macro-joint.md).
    Kinematics(cmd::kinematics::KinematicsArgs),
    /// Parameter sweep: run variants of a model (a grid or a table of parameter values) on all
    /// cores and tabulate metrics per run (peak, settling time, final value, ...).
    Sweep(cmd::sweep::SweepArgs),
    /// Generate a model-file fragment from a few parameters (leaf-spring: the SAE three-link
    /// leaf spring, docs/leaf-spring.md).
    Template(cmd::template::TemplateArgs),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = parse_args();
    let res = match cli.command {
        Command::Check {
            model,
            solver,
            step,
            set,
            paths,
            reduce,
            select,
        } => cmd::check::run(&model, solver.as_deref(), step, &set, paths).and_then(|()| {
            if reduce.is_empty() {
                return Ok(());
            }
            let (m, c) = cmd::load_model_with(&model, &set)?;
            cmd::reduce::print_statistics(&m, &c, &reduce, &select)
        }),
        Command::Run(args) => cmd::run::run(&args),
        Command::Schema => {
            println!("{}", sprung_model::json_schema());
            Ok(())
        }
        Command::Solvers => cmd::solvers::run(),
        Command::Elements => cmd::elements::run(),
        Command::Compare(args) => cmd::compare::run(&args),
        Command::Plot(args) => cmd::plot::run(&args),
        Command::Metrics(args) => cmd::metrics::run(&args),
        Command::Loadcase(args) => cmd::loadcase::run(&args),
        Command::Bench(args) => cmd::bench::run(&args),
        Command::Modes { model, count } => cmd::modes::run(&model, count),
        Command::Static(args) => cmd::statics::run(&args),
        Command::Tire(args) => cmd::tire::run(&args),
        Command::Kc(args) => cmd::kc::run(&args),
        Command::Fmu(args) => cmd::fmu::run(&args),
        Command::Sweep(args) => cmd::sweep::run(&args),
        Command::Reduce(args) => cmd::reduce::run(&args),
        Command::Accelerate(args) => cmd::accelerate::run(&args),
        Command::Kinematics(args) => cmd::kinematics::run(&args),
        Command::Template(args) => cmd::template::run(&args),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Parses the command line. Numeric options accept negative numbers (`--step -1e-3`, which
/// clap's own negative-number detection misses for exponents), so they reach the settings
/// validation, which says what is wrong, instead of clap's hint to put `--` in front (which would
/// make the number a positional argument).
fn parse_args() -> Cli {
    fn negatives(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            let id = a.get_value_parser().type_id();
            let numeric = id == std::any::TypeId::of::<f64>()
                || id == std::any::TypeId::of::<i64>()
                || id == std::any::TypeId::of::<u64>()
                || id == std::any::TypeId::of::<usize>()
                || id == std::any::TypeId::of::<u32>();
            // Text options that hold numbers: `--window -0.5:1`, `--ref-offset -2.5`.
            let numbers_in_text = matches!(
                a.get_id().as_str(),
                "window" | "ref_scale" | "ref_offset" | "set" | "grid"
            );
            if (numeric || numbers_in_text) && !a.is_positional() {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    let matches = negatives(Cli::command()).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Piping the output into `head` must end the program quietly, not panic: restore the default
/// SIGPIPE action that the Rust runtime replaces.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists; resetting a signal
    // disposition to its default has no memory-safety implications.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // A file-size limit (`ulimit -f`) then makes writes fail with EFBIG, which the result
        // writer reports and records like a full disk, instead of killing the process.
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
