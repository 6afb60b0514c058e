//! `sprung bench`: the real-time benchmark of document 000, section 3 and Table 2, on this machine.
//!
//! For every model (default: both reference axles) and every combination of linear solver
//! {dense, block-sparse} × re-linearisation {every step, every 5 steps} (`--linear-solvers`,
//! `--relinearise` choose others), LSRT2 (or the fixed-step method of `--solver`, e.g. `pie`) at
//! the model's fixed step runs the model's load case `--repeat` times from static equilibrium
//! (or the model's design state, e.g. the full car). Reported per row: the real-time factor
//! (compute time / simulated time; median over the repeats), the CPU real-time factor (the
//! run thread's CPU time / simulated time: what a core of its own would take, less inflated by
//! other processes on a loaded machine than the wall clock), the mean, p99.9
//! and maximum step time (pooled over the repeats), and the accuracy as NMSE (document 000,
//! Table 3; `sprung_io::metrics`) of a displacement and a force channel against a RODAS4
//! reference (rtol 1e-8, atol 1e-10) over the window of Bild 7 (4.9–6.0 s). The channels are
//! `--displacement`/`--force` or, by default, each model's first output of quantity
//! "displacement" and of quantity "force" (the reference axles: the wheel displacement
//! `wc_dx_L` and the trailing-link bushing force `tl_bushing_fx_L`); a model without one must
//! name it.
//!
//! The reference is computed in the same command and cached as `<out>/<model>/reference.csv`;
//! it is reused while its metadata (model file hash, end time, tolerances or step) still
//! matches. `--reference lsrt2:STEP` replaces RODAS4 by LSRT2 at a smaller fixed step, for
//! models whose stiff joints drive RODAS4's error control to tiny steps (the 10-wheeler of
//! document 002: ~30 µs, minutes per second simulated; `docs/truck.md`).
//! Every run, the reference's too, is `sprung run`'s: a `sprung::Simulation` at the model's
//! initial state (with the element states and warm starts its static equilibrium leaves) run by
//! `Simulation::run_with`, the run loop every face shares.
//!
//! The NMSE divides by the square of the reference's mean over the window (the paper's
//! normalisation). For a channel that oscillates about zero there (e.g. a body's vertical
//! displacement from the design position) that mean is small and the NMSE large however close
//! the run is; the JSON therefore also gives `nmse_mean_square` = mean(e²) / mean(x_ref²) and the
//! reference's mean and RMS, and the table a note for each channel whose reference mean is below
//! a tenth of its RMS.
//!
//! Timing excludes the evaluation of the output channels (done in the observer between steps).
//! Besides the wall-clock step times the table reports the CPU real-time factor: the run's
//! thread CPU time (`CLOCK_THREAD_CPUTIME_ID`, output channels included) per simulated second,
//! the number that counts on a machine shared with other processes, where a wall-clock step
//! also contains the time spent waiting for a core.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};
use sprung_io::metrics::channel_error;
use sprung_io::{Channel, Format, ResultWriter, Window, read_results};
use sprung_mbs::simulate::{self, LinearSolverKind, RunSettings};
use sprung_model::InitialStateKind;
use sprung_solve::mech::adaptive::Control;

use super::run::percentile;

/// Arguments of `sprung bench`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// Other benchmarks (without a subcommand: the real-time benchmark of the axles).
    #[command(subcommand)]
    pub what: Option<BenchWhat>,
    /// Models, comma separated (default: models/double_wishbone.toml,models/multilink.toml).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<PathBuf>,
    /// Runs per configuration (the real-time factor is the median over them).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Print one JSON document on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Simulated end time in s (must cover the comparison window).
    #[arg(long, default_value_t = 6.0)]
    pub t_end: f64,
    /// Comparison window `t0:t1` in s (document 000, Bild 7).
    #[arg(long, default_value = "4.9:6.0")]
    pub window: String,
    /// Displacement channel compared with the reference (default: the model's first output of
    /// quantity "displacement"; the reference axles: wc_dx_L).
    #[arg(long)]
    pub displacement: Option<String>,
    /// Force channel compared with the reference (default: the model's first output of quantity
    /// "force"; the reference axles: tl_bushing_fx_L).
    #[arg(long)]
    pub force: Option<String>,
    /// Directory of the cached RODAS4 references.
    #[arg(long, default_value = "out/bench")]
    pub out: PathBuf,
    /// Fixed-step method benchmarked (lsrt2, pie, pie_lagged, lie, rk4, or a Rosenbrock method at a fixed
    /// step; `sprung solvers`).
    #[arg(long, default_value = "lsrt2")]
    pub solver: String,
    /// LSRT2 step splitting: split (default) at segment changes of characteristics and when the
    /// local error estimate exceeds 0.1 µm, or ignore (`sprung_solve::mech::Breakpoints`).
    #[arg(long, default_value = "split", value_parser = super::parse_breakpoints)]
    pub breakpoints: sprung_solve::mech::Breakpoints,
    /// Linear solvers benchmarked, comma separated: dense, block-sparse (default both; the dense
    /// rows of a large model such as the full car take minutes).
    #[arg(long, value_delimiter = ',', default_values_t = [BenchSolver::Dense, BenchSolver::BlockSparse])]
    pub linear_solvers: Vec<BenchSolver>,
    /// Re-linearisation intervals benchmarked (steps), comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1u64, 5])]
    pub relinearise: Vec<u64>,
    /// Adaptive re-linearisation (fixed-step Rosenbrock methods) in every row: a step taken with
    /// a lagged Jacobian whose local error indicator exceeds this level (m, e.g. 1e-7) makes the
    /// next step re-linearise; the row's --relinearise value bounds the Jacobian's age.
    /// Default: the model's [solver] relinearise_stale, else the fixed schedule alone.
    #[arg(long, value_name = "M")]
    pub relinearise_stale: Option<f64>,
    /// Reference solution: `rodas4` (rtol 1e-8, atol 1e-10) or `lsrt2:STEP` (LSRT2 at the fixed
    /// step STEP in s, e.g. lsrt2:1e-4, for models on which RODAS4 takes tiny steps).
    #[arg(long, default_value = "rodas4", value_parser = parse_reference)]
    pub reference: Reference,
    /// Benchmark the runs with the accelerator plugin of each model (`sprung accelerate`,
    /// docs/accelerate.md; built and cached on first use); the reference runs the generic code.
    #[arg(long)]
    pub accelerate: bool,
}

/// A linear solver of the benchmark table.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchSolver {
    /// Dense LU (faer).
    Dense,
    /// Block-sparse LU on the 6 × 6 body blocks.
    BlockSparse,
}

impl std::fmt::Display for BenchSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BenchSolver::Dense => "dense",
            BenchSolver::BlockSparse => "block-sparse",
        })
    }
}

/// The reference solution of the accuracy columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reference {
    /// RODAS4 with rtol 1e-8, atol 1e-10.
    Rodas4,
    /// LSRT2 at this fixed step, s.
    Lsrt2(f64),
}

impl Reference {
    fn describe(self) -> String {
        match self {
            Reference::Rodas4 => format!("RODAS4 (rtol {REF_RTOL:e})"),
            Reference::Lsrt2(h) => format!("LSRT2 at {h:e} s"),
        }
    }
}

/// Parses `rodas4` or `lsrt2:STEP`.
fn parse_reference(s: &str) -> Result<Reference, String> {
    let t = s.trim().to_ascii_lowercase();
    if t == "rodas4" {
        return Ok(Reference::Rodas4);
    }
    if let Some(h) = t.strip_prefix("lsrt2:") {
        return match h.trim().parse::<f64>() {
            Ok(h) if h > 0.0 && h.is_finite() => Ok(Reference::Lsrt2(h)),
            _ => Err(format!(
                "'{s}': the step after lsrt2: must be a positive number of seconds, e.g. lsrt2:1e-4"
            )),
        };
    }
    Err(format!(
        "'{s}': use rodas4 or lsrt2:STEP (LSRT2 at a fixed step STEP in s, e.g. lsrt2:1e-4)"
    ))
}

/// CPU time of the calling thread, s (NaN where the platform has no thread CPU clock).
#[cfg(not(unix))]
fn thread_cpu_time() -> f64 {
    f64::NAN
}

/// CPU time of the calling thread, s (NaN where the platform has no thread CPU clock).
#[cfg(unix)]
fn thread_cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant of the platform.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64
}

/// Benchmarks other than the real-time table.
#[derive(clap::Subcommand, Debug)]
pub enum BenchWhat {
    /// Work-precision benchmark of the solver suite: error vs CPU time over a tolerance ladder for
    /// HIRES, Van der Pol, ROBER and the double-wishbone load case.
    Solvers(super::bench_solvers::BenchSolversArgs),
}

/// A compared channel whose reference mean over the window is below this fraction of its RMS
/// gets a note under the table: its NMSE is then over 100 times its error against the mean
/// square.
const SMALL_MEAN: f64 = 0.1;

/// Relative and absolute tolerance of the RODAS4 reference.
const REF_RTOL: f64 = 1e-8;
const REF_ATOL: f64 = 1e-10;

/// One model, loaded and ready to simulate.
struct Case {
    stem: String,
    file: PathBuf,
    hash: String,
    /// The model description (solver settings, initial state, name).
    model: sprung_model::Model,
    /// The compiled model every run simulates (`sprung::Simulation`, as `sprung run`).
    sim_model: std::sync::Arc<sprung::Model>,
    channels: [usize; 2],
    breakpoints: sprung_solve::mech::Breakpoints,
    /// Adaptive re-linearisation level (`RunSettings::relinearise_stale`).
    relinearise_stale: Option<f64>,
    /// Names of the two compared channels.
    names: [String; 2],
    /// The accelerator plugin the benchmarked runs (not the reference) install (`--accelerate`,
    /// docs/accelerate.md): generated, built or found in the cache and loaded once per model,
    /// so no run's time includes it.
    kernel: Option<std::sync::Arc<dyn sprung_mbs::tree_kernel::TreeKernel>>,
}

/// Sampled channels of one run.
#[derive(Default)]
struct Trace {
    t: Vec<f64>,
    x: [Vec<f64>; 2],
}

/// One row of the table.
struct Row {
    linear_solver: &'static str,
    relinearise_every: u64,
    rtf: Vec<f64>,
    /// CPU time of the run's thread / simulated time, per repeat (sorted).
    cpu_rtf: Vec<f64>,
    mean: f64,
    p999: f64,
    max: f64,
    nmse: [f64; 2],
    /// The errors normalised by the reference's mean square instead: mean(e²) / mean(x_ref²).
    nmse_mean_square: [f64; 2],
    /// Mean and RMS of the reference over the window (on the run's output times).
    reference_mean_rms: [(f64, f64); 2],
    steps: u64,
    linearisations: u64,
}

fn progress(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("{msg}");
        let _ = std::io::stderr().flush();
    }
}

fn file_hash(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    Ok(format!("{:016x}", h.finish()))
}

impl Case {
    fn load(file: &Path, wanted: [Option<&str>; 2]) -> anyhow::Result<Self> {
        let model = super::load_description(file, &[])?;
        let names = super::loadcase::compared_channels(&model, file, wanted[0], wanted[1])?;
        let sim_model = sprung::Model::from_description(model.clone())
            .with_context(|| format!("compiling {}", file.display()))?;
        let outputs = sim_model.outputs();
        let mut channels = [0; 2];
        for (k, name) in names.iter().enumerate() {
            channels[k] = outputs
                .channels
                .iter()
                .position(|c| c.name == *name)
                .with_context(|| {
                    let avail: Vec<&str> =
                        outputs.channels.iter().map(|c| c.name.as_str()).collect();
                    format!(
                        "{}: no output channel '{name}'; available: {}",
                        file.display(),
                        avail.join(", ")
                    )
                })?;
        }
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Ok(Self {
            stem,
            file: file.to_path_buf(),
            hash: file_hash(file)?,
            model,
            sim_model,
            channels,
            breakpoints: Default::default(),
            relinearise_stale: None,
            names,
            kernel: None,
        })
    }

    fn settings(&self, method: &str, t_end: f64, every: u64, lu: LinearSolverKind) -> RunSettings {
        let s = &self.model.solver;
        RunSettings {
            method: method.into(),
            step: s.step,
            t0: 0.0,
            t_end,
            output_interval: s.output_interval(),
            relinearise_every: every,
            relinearise_stale: self.relinearise_stale,
            breakpoints: self.breakpoints,
            rtol: REF_RTOL,
            atol: REF_ATOL,
            linear_solver: lu,
            adaptive: None,
            bounds: sprung_mbs::simulate::Bounds {
                max_displacement: s.max_displacement,
                max_velocity: s.max_velocity,
                max_force: s.max_force,
            },
        }
    }

    /// One run; returns the summary, the two sampled channels and all channels. The run is
    /// `sprung run`'s: a [`sprung::Simulation`] at the model's initial state (design position,
    /// or static equilibrium with the element states and warm starts it leaves) stepped by
    /// [`sprung::Simulation::run_with`], the run loop every face shares.
    fn simulate(
        &self,
        settings: &RunSettings,
        accelerate: bool,
    ) -> anyhow::Result<(simulate::RunSummary, Trace, Vec<Vec<f64>>)> {
        let context = || format!("{} with {}", self.file.display(), settings.method);
        let mut sim = sprung::Simulation::with_settings(self.sim_model.clone(), settings.clone())
            .with_context(context)?;
        sim.force_portable(super::portable_requested());
        if accelerate && let Some(k) = &self.kernel {
            sim.set_tree_kernel(Some(k.clone()));
        }
        if self.model.initial_state.kind == InitialStateKind::Equilibrium {
            sim.equilibrium().with_context(|| {
                format!("initial static equilibrium of {}", self.file.display())
            })?;
        }
        let n_channels = self.sim_model.outputs().len();
        let n = ((settings.t_end - settings.t0) / settings.output_interval).round() as usize + 2;
        let mut trace = Trace {
            t: Vec::with_capacity(n),
            x: [Vec::with_capacity(n), Vec::with_capacity(n)],
        };
        let mut all = vec![Vec::with_capacity(n); n_channels];
        let [c0, c1] = self.channels;
        let report = sim.run_with(settings, settings.t_end, &mut |t, row| {
            trace.t.push(t);
            trace.x[0].push(row[c0]);
            trace.x[1].push(row[c1]);
            for (col, x) in all.iter_mut().zip(row) {
                col.push(*x);
            }
            Control::Continue
        });
        match report.stop {
            sprung::StopReason::Completed => Ok((report.summary, trace, all)),
            sprung::StopReason::Failed(e) => Err(anyhow::anyhow!("{e}")).with_context(context),
            sprung::StopReason::Observer => {
                Err(anyhow::anyhow!("the run was stopped")).with_context(context)
            }
        }
    }

    /// The reference: cached file if its metadata matches, else computed and written.
    fn reference(
        &self,
        dir: &Path,
        t_end: f64,
        which: Reference,
        quiet: bool,
    ) -> anyhow::Result<Trace> {
        let path = dir.join(&self.stem).join("reference.csv");
        let key = match which {
            Reference::Rodas4 => {
                json!({ "model_hash": self.hash, "t_end": t_end, "rtol": REF_RTOL, "atol": REF_ATOL })
            }
            Reference::Lsrt2(h) => {
                json!({ "model_hash": self.hash, "t_end": t_end, "method": "lsrt2", "step": h })
            }
        };
        let cached = read_results(&path)
            .ok()
            .filter(|set| set.metadata().get("bench_key") == Some(&key));
        if let Some(set) = cached {
            let col = |k: usize| {
                set.column(&self.sim_model.outputs().channels[self.channels[k]].name)
                    .map(<[f64]>::to_vec)
            };
            if let (Some(a), Some(b)) = (col(0), col(1)) {
                progress(
                    quiet,
                    &format!(
                        "[{}] {} reference: cached {}",
                        self.stem,
                        which.describe(),
                        path.display()
                    ),
                );
                return Ok(Trace {
                    t: set.time.clone(),
                    x: [a, b],
                });
            }
        }
        progress(
            quiet,
            &format!(
                "[{}] {} reference to t = {t_end} s ...",
                self.stem,
                which.describe()
            ),
        );
        let start = Instant::now();
        let settings = match which {
            Reference::Rodas4 => self.settings("rodas4", t_end, 1, LinearSolverKind::BlockSparse),
            Reference::Lsrt2(h) => {
                let mut s = self.settings("lsrt2", t_end, 1, LinearSolverKind::BlockSparse);
                s.step = h;
                s
            }
        };
        let (summary, trace, all) = self.simulate(&settings, false)?;
        if summary.t_reached < t_end - 1e-9 {
            bail!(
                "{}: {} reference stopped at t = {} s",
                self.file.display(),
                which.describe(),
                summary.t_reached
            );
        }
        progress(
            quiet,
            &format!(
                "[{}] reference done in {:.1} s; writing {}",
                self.stem,
                start.elapsed().as_secs_f64(),
                path.display()
            ),
        );
        std::fs::create_dir_all(path.parent().unwrap_or(dir))
            .with_context(|| format!("creating {}", dir.display()))?;
        let channels: Vec<Channel> = self
            .sim_model
            .outputs()
            .channels
            .iter()
            .map(|c| Channel::new(c.name.clone(), c.unit, c.description.clone()))
            .collect();
        let meta = json!({ "model": self.model.model.name, "model_file": self.file.display().to_string(),
                           "solver": key, "bench_key": key });
        let mut w = ResultWriter::create(&path, Format::Csv, &channels, meta)
            .with_context(|| format!("creating {}", path.display()))?;
        let mut row = vec![0.0; channels.len()];
        for (i, t) in trace.t.iter().enumerate() {
            for (x, col) in row.iter_mut().zip(&all) {
                *x = col[i];
            }
            w.write_row(*t, &row)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        w.finish("completed", json!({ "t_reached": summary.t_reached }))
            .with_context(|| format!("finishing {}", path.display()))?;
        Ok(trace)
    }
}

/// The accuracy of channel `k` of `run` against `reference` over `window`: the NMSE of
/// document 000 (mean(e²) / mean(x_ref)², `sprung_io::metrics`), the error normalised by the
/// reference's mean square (mean(e²) / mean(x_ref²)), and the reference's mean and RMS on the
/// run's times in the window. The two normalisations differ by the factor (RMS / mean)²: for a
/// channel oscillating about zero (a body's vertical displacement from the design position over
/// a window in which it comes back) the NMSE is dominated by its small mean.
fn accuracy(
    name: &str,
    run: &Trace,
    k: usize,
    reference: &Trace,
    window: Window,
) -> anyhow::Result<([f64; 2], (f64, f64))> {
    let err = channel_error(
        name,
        &run.t,
        &run.x[k],
        &reference.t,
        &reference.x[k],
        window,
    )?;
    // The RMS of the reference itself: its error against zero on the same points.
    let zeros = vec![0.0; run.t.len()];
    let rms_ref =
        channel_error(name, &run.t, &zeros, &reference.t, &reference.x[k], window)?.rms_error;
    let mean_square = (err.rms_error / rms_ref).powi(2);
    Ok(([err.nmse, mean_square], (err.mean_reference, rms_ref)))
}

/// Runs the command.
pub fn run(a: &BenchArgs) -> anyhow::Result<()> {
    if let Some(BenchWhat::Solvers(args)) = &a.what {
        return super::bench_solvers::run(args);
    }
    let models = if a.models.is_empty() {
        vec![
            PathBuf::from("models/double_wishbone.toml"),
            PathBuf::from("models/multilink.toml"),
        ]
    } else {
        a.models.clone()
    };
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if a.relinearise.contains(&0) || a.relinearise.is_empty() || a.linear_solvers.is_empty() {
        bail!(
            "--relinearise takes step counts >= 1 and --linear-solvers at least one of dense, block-sparse (e.g. --linear-solvers block-sparse --relinearise 1,5)"
        );
    }
    let window = super::compare::parse_window(&a.window)?;
    if a.t_end < window.t1 || a.t_end.is_nan() {
        bail!(
            "--t-end {} s ends before the comparison window {}; use --t-end {} or later",
            a.t_end,
            a.window,
            window.t1
        );
    }
    let quiet = false;
    let method = a.solver.trim().to_ascii_lowercase();
    let route = simulate::route(&method, Some(false)).context("--solver")?;
    if !matches!(
        route,
        simulate::Route::RosenbrockFixed(_) | simulate::Route::Rk4 | simulate::Route::Pie(_)
    ) {
        bail!(
            "--solver {method}: the real-time benchmark needs a fixed-step method on the mechanical system (lsrt2, lie, pie, rk4 or a Rosenbrock method; `sprung solvers`)"
        );
    }
    let names = [a.displacement.as_deref(), a.force.as_deref()];
    let mut report = Vec::new();
    for file in &models {
        let mut case = Case::load(file, names)?;
        case.breakpoints = a.breakpoints;
        if a.accelerate {
            let (kernel, built) = sprung_accel::accelerate(
                case.sim_model.compiled(),
                &super::accelerate::run_options(),
            )
            .with_context(|| format!("--accelerate {}", file.display()))?;
            progress(
                quiet,
                &format!(
                    "accelerator plugin {} (compiled now: {})",
                    built.library.display(),
                    built.compiled
                ),
            );
            case.kernel = Some(kernel);
        }
        // The model file's level applies where the benchmarked method reads it (not pie, rk4).
        case.relinearise_stale = a.relinearise_stale.or(case
            .model
            .solver
            .relinearise_stale
            .filter(|_| route.takes_relinearise_stale()));
        let reference = case.reference(&a.out, a.t_end, a.reference, quiet)?;
        let mut rows = Vec::new();
        for (lu, lu_name) in [
            (LinearSolverKind::Dense, "dense"),
            (LinearSolverKind::BlockSparse, "block-sparse"),
        ]
        .into_iter()
        .filter(|(k, _)| {
            a.linear_solvers.contains(&match k {
                LinearSolverKind::Dense => BenchSolver::Dense,
                _ => BenchSolver::BlockSparse,
            })
        }) {
            for &every in &a.relinearise {
                let settings = case.settings(&method, a.t_end, every, lu);
                let mut rtf = Vec::with_capacity(a.repeat);
                let mut cpu_rtf = Vec::with_capacity(a.repeat);
                let mut times = Vec::new();
                let mut errs = [f64::NAN; 2];
                let mut errs_ms = [f64::NAN; 2];
                let mut mean_rms = [(f64::NAN, f64::NAN); 2];
                let mut counts = (0, 0);
                for rep in 0..a.repeat {
                    let cpu0 = thread_cpu_time();
                    let (summary, trace, _) = case.simulate(&settings, true)?;
                    let cpu = thread_cpu_time() - cpu0;
                    let simulated = summary.t_reached - settings.t0;
                    rtf.push(summary.compute_time / simulated);
                    cpu_rtf.push(cpu / simulated);
                    times.extend_from_slice(&summary.step_times);
                    if rep == 0 {
                        for k in 0..2 {
                            let ([e, e_ms], m) =
                                accuracy(&case.names[k], &trace, k, &reference, window)?;
                            (errs[k], errs_ms[k], mean_rms[k]) = (e, e_ms, m);
                        }
                        counts = (summary.stats.steps, summary.stats.linearisations);
                    }
                    progress(
                        quiet,
                        &format!(
                            "[{}] {lu_name}, re-linearise every {every}: run {}/{} RTF {:.4} (CPU {:.4})",
                            case.stem,
                            rep + 1,
                            a.repeat,
                            rtf[rep],
                            cpu_rtf[rep]
                        ),
                    );
                }
                rtf.sort_by(f64::total_cmp);
                cpu_rtf.sort_by(f64::total_cmp);
                let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
                let max = times.iter().copied().fold(0.0, f64::max);
                rows.push(Row {
                    linear_solver: lu_name,
                    relinearise_every: every,
                    mean,
                    p999: percentile(&times, 0.999),
                    max,
                    rtf,
                    cpu_rtf,
                    nmse: errs,
                    nmse_mean_square: errs_ms,
                    reference_mean_rms: mean_rms,
                    steps: counts.0,
                    linearisations: counts.1,
                });
            }
        }
        report.push((case, rows));
    }
    if a.json {
        let doc = json!({
            "machine": cpu_model(),
            "t_end": a.t_end,
            "window": [window.t0, window.t1],
            "repeat": a.repeat,
            "solver": method,
            "relinearise_stale": a.relinearise_stale,
            "reference": match a.reference {
                Reference::Rodas4 => json!({ "method": "rodas4", "rtol": REF_RTOL, "atol": REF_ATOL }),
                Reference::Lsrt2(h) => json!({ "method": "lsrt2", "step": h }),
            },
            "models": report.iter().map(|(case, rows)| json!({
                "model": case.stem,
                "accelerated": case.kernel.is_some(),
                "model_file": case.file.display().to_string(),
                "dof": case.sim_model.compiled().n_v(),
                "step": case.model.solver.step,
                "rows": rows.iter().map(|r| json!({
                    "linear_solver": r.linear_solver,
                    "relinearise_every": r.relinearise_every,
                    "real_time_factor": median(&r.rtf),
                    "real_time_factor_runs": r.rtf,
                    "cpu_real_time_factor": median(&r.cpu_rtf),
                    "cpu_real_time_factor_runs": r.cpu_rtf,
                    "mean_step_s": r.mean,
                    "p999_step_s": r.p999,
                    "max_step_s": r.max,
                    "steps": r.steps,
                    "linearisations": r.linearisations,
                    "nmse": { &case.names[0]: r.nmse[0], &case.names[1]: r.nmse[1] },
                    "nmse_mean_square": { &case.names[0]: r.nmse_mean_square[0],
                                          &case.names[1]: r.nmse_mean_square[1] },
                    "reference_mean_rms": { &case.names[0]: r.reference_mean_rms[0],
                                            &case.names[1]: r.reference_mean_rms[1] },
                })).collect::<Vec<Value>>(),
            })).collect::<Vec<Value>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    println!("machine: {}", cpu_model());
    println!(
        "{method}, model step, t = 0..{} s, median of {} runs; NMSE vs {} over {}..{} s",
        a.t_end,
        a.repeat,
        a.reference.describe(),
        window.t0,
        window.t1
    );
    if let Some(x) = a.relinearise_stale {
        println!(
            "adaptive re-linearisation: also after a step with a lagged Jacobian whose error indicator exceeds {x:e} m (relin = largest age)"
        );
    }
    println!();
    println!(
        "{:<16} {:<13} {:>6} {:>8} {:>8} {:>10} {:>11} {:>10} {:>11} {:>11}",
        "model",
        "linear solver",
        "relin",
        "RTF",
        "CPU RTF",
        "mean [us]",
        "p99.9 [us]",
        "max [us]",
        "NMSE disp",
        "NMSE force"
    );
    for (case, rows) in &report {
        for r in rows {
            println!(
                "{:<16} {:<13} {:>6} {:>8.4} {:>8.4} {:>10.1} {:>11.1} {:>10.1} {:>11.3e} {:>11.3e}",
                case.stem,
                r.linear_solver,
                r.relinearise_every,
                median(&r.rtf),
                median(&r.cpu_rtf),
                r.mean * 1e6,
                r.p999 * 1e6,
                r.max * 1e6,
                r.nmse[0],
                r.nmse[1]
            );
        }
    }
    println!();
    println!(
        "RTF: wall-clock compute time of the steps / simulated time; CPU RTF: the run's thread CPU time (steps, outputs every output interval) / simulated time, what a core of its own would take on a loaded machine"
    );
    for (case, rows) in &report {
        println!(
            "NMSE columns of {}: {} and {}",
            case.stem, case.names[0], case.names[1]
        );
        if case.kernel.is_some() {
            println!(
                "rows of {} run with the accelerator plugin (--accelerate, docs/accelerate.md); its reference with the generic code",
                case.stem
            );
        }
        // A reference with a small mean over the window: its NMSE measures the mean, not the
        // error; the note gives the error against the mean square as well.
        for k in 0..2 {
            let Some(r) = rows.first() else { continue };
            let (mean, rms) = r.reference_mean_rms[k];
            if mean.abs() < SMALL_MEAN * rms {
                let ms: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{:.3e}", r.nmse_mean_square[k]))
                    .collect();
                println!(
                    "  note: the reference's mean of {} over the window, {mean:.3e}, is small against its RMS {rms:.3e}: the NMSE (mean(e^2) / mean^2) is {:.1e} times the error against the mean square, mean(e^2) / mean(x_ref^2) = {} (rows in order)",
                    case.names[k],
                    (rms / mean).powi(2),
                    ms.join(", ")
                );
            }
        }
    }
    Ok(())
}

/// Median of a sorted list.
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
    }
}

/// CPU model name from /proc/cpuinfo (Linux), or "unknown".
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .map(|m| {
            format!(
                "{m}, {} logical CPUs",
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            )
        })
        .unwrap_or_else(|| "unknown".into())
}
