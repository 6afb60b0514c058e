//! `sprung run MODEL`: simulate and write results.
//!
//! Settings come from the model's `[solver]` table, overridden by command-line flags. The run
//! writes `<out>/results.<csv|parquet>` through a background writer (the stepping loop only fills
//! preallocated buffers), prints progress on long runs, stops cleanly on Ctrl-C or divergence
//! (non-finite values, or a body beyond the plausibility bounds `--max-displacement` /
//! `--max-velocity`, defaults derived from the model; keeping every row written so far and
//! recording why it stopped), and prints the real-time
//! factor (compute time / simulated time) and step-time statistics.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;
use sprung_io::{BackgroundOptions, BackgroundWriter, Channel, Format};
use sprung_mbs::simulate::{self, LinearSolverKind, RunSettings};
use sprung_model::InitialStateKind;
use sprung_solve::mech::adaptive::Control;

use super::load_model_with;
use crate::{FormatArg, LinearSolverArg};

/// Arguments of `sprung run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Model file (.toml or .json).
    pub model: PathBuf,
    /// Solver (see `sprung solvers`); default from the model's [solver] table.
    #[arg(long)]
    pub solver: Option<String>,
    /// Fixed step size in s.
    #[arg(long)]
    pub step: Option<f64>,
    /// Relative tolerance (adaptive solvers).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance (adaptive solvers).
    #[arg(long)]
    pub atol: Option<f64>,
    /// End time in s.
    #[arg(long)]
    pub t_end: Option<f64>,
    /// Output interval in s.
    #[arg(long)]
    pub output_interval: Option<f64>,
    /// Re-linearise every N steps (linear-implicit fixed-step solvers).
    #[arg(long)]
    pub relinearise_every: Option<u64>,
    /// Adaptive re-linearisation (fixed-step Rosenbrock methods): a step taken with a lagged
    /// Jacobian whose local error indicator exceeds this level (m, e.g. 1e-7) makes the next
    /// step re-linearise; --relinearise-every then bounds the Jacobian's age. Default: [solver]
    /// relinearise_stale, else the fixed schedule alone.
    #[arg(long, value_name = "M")]
    pub relinearise_stale: Option<f64>,
    /// Fixed-step Rosenbrock methods: split (default) redoes a step as two half steps when a
    /// characteristic changes segment within it or its local error estimate exceeds 0.1 µm (fast
    /// transients); ignore never splits.
    #[arg(long, default_value = "split", value_parser = super::parse_breakpoints)]
    pub breakpoints: sprung_solve::mech::Breakpoints,
    /// Linear solver inside linear-implicit methods.
    #[arg(long, value_enum)]
    pub linear_solver: Option<LinearSolverArg>,
    /// Plausibility bound on the distance of a body's centre of mass from its design position,
    /// m (`inf` = none); a run that passes it stops as diverged. Default: [solver]
    /// max_displacement, else 10 x the model extent (at least 1 m).
    #[arg(long, value_name = "M")]
    pub max_displacement: Option<f64>,
    /// Plausibility bound on the speed of a body's centre of mass, m/s (`inf` = none). Default:
    /// [solver] max_velocity, else the displacement bound per 10 ms.
    #[arg(long, value_name = "M_PER_S")]
    pub max_velocity: Option<f64>,
    /// Plausibility bound on the resultant force on a body (elements, inputs and gravity), N
    /// (`inf` = none); the message names the body and the element with the largest force on
    /// it. Default: [solver] max_force, else the heaviest body's mass x the velocity bound per
    /// 10 ms.
    #[arg(long, value_name = "N")]
    pub max_force: Option<f64>,
    /// Output directory (default: out/<model name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Result file format.
    #[arg(long, value_enum, default_value_t = FormatArg::Csv)]
    pub format: FormatArg,
    /// Result file name without extension.
    #[arg(long, default_value = "results")]
    pub name: String,
    /// Also write a PNG plot of the first four channels next to the results.
    #[arg(long)]
    pub plot: bool,
    /// Also write an x-y plot of two channels (`X,Y`, e.g. `x,y` for a vehicle's path) next to
    /// the results (`<name>.xy.png`, linear axes of equal scale).
    #[arg(long, value_name = "X,Y", value_delimiter = ',', num_args = 1)]
    pub xy: Vec<String>,
    /// Write the PNG plot of these channels (comma separated, one panel each) instead of the
    /// first four; implies --plot.
    #[arg(long, value_delimiter = ',', value_name = "CHANNELS")]
    pub plot_channels: Vec<String>,
    /// Start from the design position even if the model asks for static equilibrium.
    #[arg(long)]
    pub from_design: bool,
    /// Print no progress lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Feed the model's `runtime` inputs from a CSV table: a time column `t` (s) and one column
    /// per runtime input named like the input; values are held (zero-order hold) from each row
    /// until the next, i.e. the input is piecewise constant, and each row's time must lie on the
    /// output grid.
    #[arg(long, value_name = "FILE.csv")]
    pub inputs: Option<PathBuf>,
    /// Change a model value without editing the file: NAME=VALUE with NAME a declared
    /// parameter or a path such as force_elements.damper_L.damping (repeatable;
    /// docs/parameters.md).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
    /// Run the joint trees' evaluation path through code generated and compiled for this model
    /// (`sprung accelerate`, docs/accelerate.md; needs rustc, the plugin is cached): the same
    /// results to round-off, less work per step.
    #[arg(long)]
    pub accelerate: bool,
}

fn settings(m: &sprung_model::Model, a: &RunArgs) -> anyhow::Result<RunSettings> {
    let s = &m.solver;
    let step = a.step.unwrap_or(s.step);
    let tolerances = a.rtol.is_some() || a.atol.is_some();
    if tolerances && a.step.is_some() {
        bail!("give either --step (fixed step) or --rtol/--atol (adaptive), not both");
    }
    let adaptive = if tolerances {
        Some(true)
    } else if a.step.is_some() {
        Some(false)
    } else {
        None
    };
    Ok(RunSettings {
        adaptive,
        method: a
            .solver
            .clone()
            .unwrap_or_else(|| s.method.clone())
            .to_lowercase(),
        step,
        t0: 0.0,
        t_end: a.t_end.unwrap_or(s.t_end),
        output_interval: a.output_interval.unwrap_or_else(|| s.output_interval()),
        // No silent `.max(1)`: 0 is rejected by the settings validation.
        relinearise_every: a.relinearise_every.unwrap_or(s.relinearise_every as u64),
        relinearise_stale: a.relinearise_stale.or(s.relinearise_stale),
        breakpoints: a.breakpoints,
        rtol: a.rtol.unwrap_or(s.rtol),
        atol: a.atol.unwrap_or(s.atol),
        bounds: simulate::Bounds {
            max_displacement: a.max_displacement.or(s.max_displacement),
            max_velocity: a.max_velocity.or(s.max_velocity),
            max_force: a.max_force.or(s.max_force),
        },
        linear_solver: match a.linear_solver {
            Some(LinearSolverArg::Dense) => LinearSolverKind::Dense,
            Some(LinearSolverArg::BlockSparse) => LinearSolverKind::BlockSparse,
            None => match s.linear_solver {
                sprung_model::LinearSolver::Dense => LinearSolverKind::Dense,
                sprung_model::LinearSolver::BlockSparse => LinearSolverKind::BlockSparse,
            },
        },
    })
}

/// The observer of `sprung run`: writes a row, stops on Ctrl-C or a write error, prints progress.
#[allow(clippy::too_many_arguments)]
fn observe(
    t: f64,
    row: &[f64],
    writer: &mut BackgroundWriter,
    write_error: &mut Option<sprung_io::IoError>,
    interrupted: &AtomicBool,
    quiet: bool,
    last_progress: &mut Instant,
    wall: &Instant,
    t_end: f64,
) -> Control {
    if let Err(e) = writer.push_row(t, row) {
        *write_error = Some(e);
        return Control::Stop;
    }
    if interrupted.load(Ordering::Relaxed) {
        return Control::Stop;
    }
    if !quiet && last_progress.elapsed().as_secs_f64() > 2.0 {
        *last_progress = Instant::now();
        eprintln!(
            "  t = {t:.3} s of {t_end} s ({:.0} %), {:.1} s elapsed",
            100.0 * t / t_end,
            wall.elapsed().as_secs_f64()
        );
    }
    Control::Continue
}

/// A JSON number, or null for an infinite bound (JSON has no infinity).
fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

/// Percentile (0..1) of a list of values.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let idx = ((p * (v.len() - 1) as f64).round() as usize).min(v.len() - 1);
    v[idx]
}

/// Runs the command.
pub fn run(a: &RunArgs) -> anyhow::Result<()> {
    // Result name and settings are checked before anything is loaded or written; the
    // command line and the model file go through one validation.
    sprung_io::validate_result_name(&a.name)?;
    let (m, _) = load_model_with(&a.model, &a.set)?;
    let mut s = settings(&m, a)?;
    let route = simulate::route(&s.method, s.adaptive)?;
    // A stale level of the model file belongs to the file's method: a method chosen with
    // --solver that reads no error indicator (ode1, pie, rk4) runs without it. (A reduced
    // model's `[solver]` carries one, `sprung reduce`.)
    if a.solver.is_some() && a.relinearise_stale.is_none() && !route.takes_relinearise_stale() {
        s.relinearise_stale = None;
    }
    super::settings_check::validate(a, &m, &s, &route)?;
    simulate::check_relinearise_stale(&s, &route).map_err(|e| {
        let source = if a.relinearise_stale.is_some() {
            "--relinearise-stale".to_string()
        } else {
            format!("[solver] relinearise_stale in {}", a.model.display())
        };
        anyhow::anyhow!("invalid run settings (nothing was written):\n  - {source}: {e}")
    })?;
    let adaptive = route.step_mode() == sprung_model::StepMode::Adaptive;
    // What this run actually uses: an adaptive run has tolerances and an initial step, a
    // fixed-step run a step (and tolerances it ignores are not recorded).
    let solver_meta = if adaptive {
        json!({ "method": s.method, "adaptive": true, "rtol": s.rtol, "atol": s.atol,
                "initial_step": s.step, "linear_solver": format!("{:?}", s.linear_solver) })
    } else {
        json!({ "method": s.method, "adaptive": false, "step": s.step,
                "relinearise_every": s.relinearise_every, "relinearise_stale": s.relinearise_stale,
                "linear_solver": format!("{:?}", s.linear_solver) })
    };
    let solver_line = if adaptive {
        format!(
            "{} (adaptive, rtol {:e}, atol {:e}, initial step {} s, linear solver {:?})",
            s.method, s.rtol, s.atol, s.step, s.linear_solver
        )
    } else {
        let stale = s
            .relinearise_stale
            .map(|x| format!(" or when the error indicator of a lagged Jacobian exceeds {x:e} m"))
            .unwrap_or_default();
        format!(
            "{} (fixed step {} s, linear solver {:?}, re-linearise every {}{stale})",
            s.method, s.step, s.linear_solver, s.relinearise_every
        )
    };
    let mut model = sprung::Model::from_description(m.clone())?;
    if let Some(file) = &a.inputs {
        // A column may also name an input driven by a time signal: the table replaces it.
        // (Unknown names are left to the table's own check, which lists the inputs.)
        let names = super::inputs_table::InputTable::column_names(file)?;
        let names: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| model.compiled().input_index(n).is_some())
            .collect();
        model = std::sync::Arc::new(
            model
                .with_runtime_inputs(&names)
                .map_err(|e| anyhow::anyhow!("{}:1: {e}", file.display()))?,
        );
    }
    let mut sim = sprung::Simulation::with_settings(model.clone(), s.clone())?;
    sim.force_portable(super::portable_requested());
    let accelerated = if a.accelerate {
        let built = super::accelerate::install(&mut sim, &a.model, a.quiet)?;
        Some(built.library.display().to_string())
    } else {
        None
    };
    let table = match &a.inputs {
        Some(file) => Some(super::inputs_table::InputTable::load(file, &model)?),
        None => None,
    };
    if m.initial_state.kind == InitialStateKind::Equilibrium && !a.from_design {
        let t = Instant::now();
        let eq = sim
            .equilibrium()
            .with_context(|| format!("initial static equilibrium of '{}'", m.model.name))?;
        if !a.quiet {
            eprintln!(
                "static equilibrium: {} Newton iterations, residual {:.1e} of the load scale {:.0} N ({:.1} ms)",
                eq.iterations,
                eq.relative_residual,
                eq.load_scale,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    let out_dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&m.model.name));
    let format = match a.format {
        FormatArg::Csv => Format::Csv,
        FormatArg::Parquet => Format::Parquet,
    };
    // The folder is created and locked (lock file with the PID) only now, after validation.
    let folder = sprung_io::ResultFolder::acquire(&out_dir, &a.name, format)?;
    let path = folder.result_path().to_path_buf();
    let channels: Vec<Channel> = model
        .outputs()
        .channels
        .iter()
        .map(|c| Channel::new(c.name.clone(), c.unit, c.description.clone()))
        .collect();
    let meta = json!({
        "model": m.model.name,
        "model_file": a.model.display().to_string(),
        "solver": solver_meta,
        "t_end": s.t_end,
        "output_interval": s.output_interval,
        // Plausibility bounds of this run (null = no bound); the run stops as diverged beyond them.
        "bounds": { "max_displacement_m": finite_or_null(sim.limits().max_displacement),
                    "max_velocity_m_per_s": finite_or_null(sim.limits().max_velocity),
                    "max_force_n": finite_or_null(sim.limits().max_force),
                    "model_extent_m": sim.limits().extent },
        "inputs_file": a.inputs.as_ref().map(|p| p.display().to_string()),
        // The accelerator plugin the run used (docs/accelerate.md), null for the generic code.
        "accelerated": accelerated,
        "parameters": model.parameters().iter().map(|p| (p.name.clone(), json!(p.value)))
            .chain(a.set.iter().map(|(n, v)| (n.clone(), json!(v))))
            .collect::<serde_json::Map<_, _>>(),
    });
    let mut writer =
        BackgroundWriter::create(&path, format, &channels, meta, BackgroundOptions::default())
            .with_context(|| format!("creating result file {}", path.display()))?;

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second handler registration (e.g. in tests calling run twice) is not an error worth failing for.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let wall = Instant::now();
    let mut last_progress = Instant::now();
    let mut write_error: Option<sprung_io::IoError> = None;
    let quiet = a.quiet;
    let t_end = s.t_end;
    if !quiet {
        eprintln!(
            "running '{}' with {solver_line}, t_end {} s, {} DOF -> {}",
            m.model.name,
            s.t_end,
            model.compiled().n_v(),
            path.display()
        );
    }
    let mut obs = |t: f64, row: &[f64]| {
        observe(
            t,
            row,
            &mut writer,
            &mut write_error,
            &interrupted,
            quiet,
            &mut last_progress,
            &wall,
            t_end,
        )
    };
    let report = match &table {
        Some(table) => table.run(&mut sim, &s, t_end, &mut obs)?,
        None => sim.run_with(&s, t_end, &mut obs),
    };
    let summary = report.summary.clone();
    // Tabulated joints whose coordinates left their table's grid (docs/joints.md).
    for w in model.compiled().joints.table_excursions(model.compiled()) {
        eprintln!("warning: {w}");
    }
    let (stop_reason, failure) = match &report.stop {
        sprung::StopReason::Failed(e) => {
            let why = format!("stopped: {e}");
            (why.clone(), Some(why))
        }
        _ if interrupted.load(Ordering::Relaxed) => {
            let why = format!(
                "interrupted by a signal (Ctrl-C/SIGINT, SIGTERM or SIGHUP) at t = {} s",
                summary.t_reached
            );
            (why.clone(), Some(why))
        }
        _ if write_error.is_some() => {
            let why = format!(
                "writing results failed at t = {} s: {}",
                summary.t_reached,
                write_error
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_default()
            );
            (why.clone(), Some(why))
        }
        _ => ("completed".to_string(), None),
    };
    let simulated = summary.t_reached - s.t0;
    let rtf = if simulated > 0.0 {
        summary.compute_time / simulated
    } else {
        f64::NAN
    };
    let p999 = percentile(&summary.step_times, 0.999);
    let stats = summary.stats;
    let extra = json!({
        "t_reached": summary.t_reached,
        "steps": stats.steps, "rejected": stats.rejected, "q_evaluations": stats.q_evals,
        "state_rate_evaluations": stats.state_rate_evals,
        "linearisations": stats.linearisations, "factorisations": stats.factorisations,
        "breakpoint_steps": stats.breakpoint_steps, "error_split_steps": stats.error_splits,
        "stale_relinearisations": stats.stale_relinearisations,
        "compute_time_s": summary.compute_time, "real_time_factor": rtf,
        "worst_step_time_s": summary.worst_step_time, "p999_step_time_s": p999,
        "wall_time_s": wall.elapsed().as_secs_f64(),
    });
    let written = writer
        .finish(&stop_reason, extra)
        .with_context(|| format!("finishing {}", path.display()))?;
    println!("model:             {}", m.model.name);
    println!("solver:            {solver_line}");
    println!(
        "simulated:         {:.6} s of {} s ({})",
        summary.t_reached, s.t_end, stop_reason
    );
    println!(
        "steps:             {} accepted, {} rejected, {} linearisations ({} for a stale Jacobian), {} LU, {} q evaluations (+{} of the element-state rates alone), {} at breakpoints, {} split for accuracy",
        stats.steps,
        stats.rejected,
        stats.linearisations,
        stats.stale_relinearisations,
        stats.factorisations,
        stats.q_evals,
        stats.state_rate_evals,
        stats.breakpoint_steps,
        stats.error_splits
    );
    println!(
        "wall time:         {:.3} s (integration {:.3} s)",
        wall.elapsed().as_secs_f64(),
        summary.compute_time
    );
    println!("real-time factor:  {rtf:.4} (compute time / simulated time)");
    if !summary.step_times.is_empty() {
        let mean = summary.compute_time / summary.step_times.len() as f64;
        println!(
            "step time:         mean {:.1} us, p99.9 {:.1} us, worst {:.1} us",
            mean * 1e6,
            p999 * 1e6,
            summary.worst_step_time * 1e6
        );
    }
    println!(
        "results:           {} ({} rows, {} channels; units in {})",
        path.display(),
        written.rows,
        channels.len(),
        match format {
            Format::Csv => sprung_io::sidecar_path(&path).display().to_string(),
            Format::Parquet => "the Parquet field metadata".into(),
        }
    );
    if (a.plot || !a.plot_channels.is_empty()) && !channels.is_empty() {
        let png = folder.sibling("png");
        let names: Vec<String> = if a.plot_channels.is_empty() {
            channels.iter().take(4).map(|c| c.name.clone()).collect()
        } else {
            a.plot_channels.clone()
        };
        super::plot::plot_files(
            std::slice::from_ref(&path),
            &names,
            &png,
            None,
            &m.model.name,
        )?;
        println!("plot:              {}", png.display());
    }
    if !a.xy.is_empty() {
        let png = folder.sibling("xy.png");
        plot_xy(&path, &a.xy, &png, &m.model.name)?;
        println!("x-y plot:          {}", png.display());
    }
    if let Some(f) = failure {
        bail!(
            "{f} (results up to t = {} s are in {})",
            summary.t_reached,
            path.display()
        );
    }
    Ok(())
}

/// Writes the x-y plot of channels `xy` = [X, Y] of the result file `path` to `png`.
fn plot_xy(
    path: &std::path::Path,
    xy: &[String],
    png: &std::path::Path,
    title: &str,
) -> anyhow::Result<()> {
    let [x, y] = xy else {
        bail!(
            "--xy takes two channel names, e.g. --xy x,y (got {})",
            xy.join(",")
        );
    };
    let set = sprung_io::read_results(path)?;
    let col = |c: &str| {
        set.column(c).ok_or_else(|| {
            anyhow::anyhow!(
                "--xy: no channel '{c}' in the results; channels: {}",
                set.channel_names().collect::<Vec<_>>().join(", ")
            )
        })
    };
    let (xs, ys) = (col(x)?, col(y)?);
    let unit = |c: &str| set.unit(c).map(|u| format!(" [{u}]")).unwrap_or_default();
    let panel = sprung_io::xy_plot::XyPanel::new(
        format!("{y} over {x}"),
        format!("{x}{}", unit(x)),
        format!("{y}{}", unit(y)),
    )
    .with_series(sprung_io::xy_plot::XySeries::new(
        title,
        xs.iter().copied().zip(ys.iter().copied()).collect(),
    ));
    sprung_io::path_plot::plot_path(png, title, &panel, None)?;
    Ok(())
}
