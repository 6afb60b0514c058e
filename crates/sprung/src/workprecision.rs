//! `sprung bench solvers`: work-precision benchmark of the stiff solvers — error against a
//! reference versus CPU time over a tolerance ladder — on the stiff reference problems of the
//! Test Set for IVP Solvers (HIRES, Van der Pol ε = 1e-6, ROBER; reference values in
//! `integrators.md`, see [`sprung_solve::ode::problems`]) and on document 000's load case of the
//! double-wishbone axle (longitudinal force step at t = 5 s, section 5.2 / Bild 7).
//!
//! # Error measures
//!
//! * Stiff test problems: significant correct digits at `t_end`,
//!   `scd = -log10(max_i |y_i - y_ref_i| / |y_ref_i|)` (the score of the Test Set); the diagram
//!   shows the maximum relative error `10^-scd`.
//! * Double wishbone: NMSE of `wc_dx_L` over 4.9–6.0 s (document 000, Table 3: mean squared
//!   error normalised with the squared mean of the reference) against a tight RODAS4 reference
//!   (rtol 1e-9, atol 1e-11), computed once and cached next to the plot. (At rtol 1e-10 the
//!   RODAS4 run on this 144-DOF model did not finish within ten minutes, while 1e-9 takes about
//!   a second; the ladder stops at rtol 1e-7, two decades looser than the reference.) To keep the ladder affordable the
//!   run covers only 4.8–6.0 s: the static equilibrium is computed at t = 0 and used as the state
//!   at 4.8 s with zero velocities. This is exact because the load is constant before the step at
//!   5 s, so the model rests in that equilibrium until then.
//!
//! # Work measures
//!
//! CPU time is the wall-clock time of the integration alone (`std::time::Instant`, the median of
//! `--repeats` runs; runs longer than [`REPEAT_LIMIT_S`] are not repeated), plus the counters of
//! the solver: accepted steps, right-hand-side evaluations (force evaluations `q` for the
//! mechanical routes), Jacobians (linearisations), LU factorisations and, on the mechanical routes,
//! linear solves. The fixed-step mechanical methods (LSRT2, `pie`, …) can be measured at several
//! re-linearisation intervals ([`AxleBench::measure_with`], `--axle-relinearise-every`): the
//! lever of the equal-cost comparison of the partly implicit Euler with LSRT2 (docs/solvers.md).
//!
//! Tolerances: `atol_i = rtol · atol_scale_i` with the per-problem scales of
//! [`sprung_solve::ode::problems::Reference::atol`] (those of the solver suite's own tests);
//! for the axle `atol = 1e-2 · rtol` (as `sprung loadcase`).
//!
//! The command-line front end is `sprung bench solvers` (crates/sprung-cli/src/cmd/bench_solvers.rs);
//! this module is the library part: the ladders, the axle case, the table and the plot.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::Error;

type Result<T> = std::result::Result<T, Error>;

/// `Error::Bench` from a format string.
macro_rules! bench_error {
    ($($t:tt)*) => {
        Error::Bench(format!($($t)*))
    };
}

/// Adds what was being done to an error, as `anyhow::Context` does in a binary.
trait Context<T> {
    fn context(self, what: &str) -> Result<T>;
    fn with_context<F: FnOnce() -> String>(self, what: F) -> Result<T>;
}

impl<T, E: std::fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: &str) -> Result<T> {
        self.map_err(|e| Error::Bench(format!("{what}: {e}")))
    }
    fn with_context<F: FnOnce() -> String>(self, what: F) -> Result<T> {
        self.map_err(|e| Error::Bench(format!("{}: {e}", what())))
    }
}
use serde_json::{Value, json};
use sprung_io::metrics::{Window, channel_error};
use sprung_io::xy_plot::{XyOptions, XyPanel, XySeries, default_style, plot_loglog};
use sprung_mbs::MbsSystem;
use sprung_mbs::equilibrium::{self, EquilibriumOptions};
use sprung_mbs::outputs::OutputSet;
use sprung_mbs::simulate::{self, LinearSolverKind, RunSettings};
use sprung_solve::mech::adaptive::Control;
use sprung_solve::ode::problems::{Hires, Reference, Rober, VanDerPol, scd};
use sprung_solve::ode::{self, Method, OdeSystem, Options, Tolerance};

/// Runs that take longer than this (s) are measured once instead of `--repeats` times.
pub const REPEAT_LIMIT_S: f64 = 0.5;

/// Short runs are repeated beyond `--repeats` until their total time reaches this (s), at most
/// [`MAX_RUNS`] times, so that sub-millisecond timings are not dominated by noise.
pub const MIN_TOTAL_S: f64 = 0.05;

/// Upper limit of timed runs per configuration.
pub const MAX_RUNS: usize = 50;

/// Whether another timed run is wanted after `times` (seconds) with `repeats` requested.
fn want_more(times: &[f64], repeats: usize) -> bool {
    let n = times.len();
    let total: f64 = times.iter().sum();
    match times.first() {
        None => true,
        Some(&first) if first > REPEAT_LIMIT_S => false,
        Some(_) => n < repeats.max(1) || (total < MIN_TOTAL_S && n < MAX_RUNS),
    }
}

/// Default stiff methods of the ladder.
pub const DEFAULT_METHODS: &str =
    "ode15s,ode23s,ode23t,ode23tb,rodas3,rodas4,rodas5p,ros34pw2,radau5";

/// Default methods on the double-wishbone load case (`lsrt2` runs the fixed-step ladder).
pub const DEFAULT_AXLE_METHODS: &str = "lsrt2,rodas4,rodas5p,ode15s,ode23tb,ode23s";

/// A stiff reference problem of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StiffProblem {
    /// HIRES (8 species).
    Hires,
    /// Van der Pol, ε = 1e-6.
    VanDerPol,
    /// Robertson's kinetics up to t = 1e11.
    Rober,
}

impl StiffProblem {
    /// Parses `hires`, `vdp` (or `vanderpol`), `rober`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "hires" => Some(StiffProblem::Hires),
            "vdp" | "vanderpol" | "van-der-pol" => Some(StiffProblem::VanDerPol),
            "rober" | "robertson" => Some(StiffProblem::Rober),
            _ => None,
        }
    }

    /// Short name used in tables and JSON.
    pub fn key(self) -> &'static str {
        match self {
            StiffProblem::Hires => "hires",
            StiffProblem::VanDerPol => "vdp",
            StiffProblem::Rober => "rober",
        }
    }

    /// Initial value, interval and reference solution.
    pub fn reference(self) -> Reference {
        match self {
            StiffProblem::Hires => Hires::reference(),
            StiffProblem::VanDerPol => VanDerPol::reference(),
            StiffProblem::Rober => Rober::reference(),
        }
    }

    fn system(self) -> Box<dyn OdeSystem> {
        match self {
            StiffProblem::Hires => Box::new(Hires),
            StiffProblem::VanDerPol => Box::new(VanDerPol::default()),
            StiffProblem::Rober => Box::new(Rober),
        }
    }
}

/// One measured point of a work-precision diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchPoint {
    /// Problem key (`hires`, `vdp`, `rober`, `axle`).
    pub problem: String,
    /// Method name.
    pub method: String,
    /// Relative tolerance (adaptive runs).
    pub rtol: Option<f64>,
    /// Fixed step in s (fixed-step runs).
    pub step: Option<f64>,
    /// Significant correct digits at `t_end` (test problems).
    pub scd: Option<f64>,
    /// Plotted error: `10^-scd` (test problems) or the NMSE of the displacement channel (axle).
    pub error: f64,
    /// NMSE of the force channel (axle).
    pub nmse_force: Option<f64>,
    /// Median CPU time of the integration, ms.
    pub cpu_ms: f64,
    /// Number of timed runs.
    pub runs: usize,
    /// Accepted steps.
    pub steps: u64,
    /// Rejected steps.
    pub rejected: u64,
    /// Right-hand-side (force) evaluations.
    pub f_evals: u64,
    /// Jacobian evaluations (linearisations).
    pub jac_evals: u64,
    /// LU factorisations.
    pub lu: u64,
    /// Linear solves (forward/back substitutions; mechanical routes).
    pub solves: u64,
    /// Re-linearisation interval in steps of a fixed-step mechanical run (`None`: adaptive or
    /// first-order route).
    pub relinearise_every: Option<u64>,
    /// Model file stem of an axle point (`double_wishbone`, `multilink`).
    pub model: Option<String>,
    /// Why the run failed (then error and counters are not meaningful).
    pub failure: Option<String>,
}

impl BenchPoint {
    fn empty(problem: &str, method: &str, rtol: Option<f64>, step: Option<f64>) -> Self {
        BenchPoint {
            problem: problem.into(),
            method: method.into(),
            rtol,
            step,
            scd: None,
            error: f64::NAN,
            nmse_force: None,
            cpu_ms: f64::NAN,
            runs: 0,
            steps: 0,
            rejected: 0,
            f_evals: 0,
            jac_evals: 0,
            lu: 0,
            solves: 0,
            relinearise_every: None,
            model: None,
            failure: None,
        }
    }

    /// JSON object of the point (failed runs carry `"failure"`; non-finite numbers become null).
    pub fn to_json(&self) -> Value {
        let num = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
        json!({
            "problem": self.problem, "method": self.method, "rtol": self.rtol, "step": self.step,
            "scd": self.scd.map(num), "error": num(self.error),
            "nmse_force": self.nmse_force.map(num), "cpu_ms": num(self.cpu_ms), "runs": self.runs,
            "steps": self.steps, "rejected": self.rejected, "f_evals": self.f_evals,
            "jac_evals": self.jac_evals, "lu": self.lu, "solves": self.solves,
            "relinearise_every": self.relinearise_every, "model": self.model,
            "failure": self.failure,
        })
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Step budget of one test-problem run; a method that needs more is reported as failed.
pub const MAX_STEPS: usize = 500_000;

/// Runs `method` on `problem` at every `rtol` and returns one point per tolerance. A run that
/// fails is reported with its error (every rung is run: a method may fail at a loose tolerance
/// and succeed at a tight one, e.g. ode23tb on ROBER).
pub fn stiff_ladder(
    problem: StiffProblem,
    method: Method,
    rtols: &[f64],
    repeats: usize,
    progress: &mut dyn FnMut(&BenchPoint),
) -> Vec<BenchPoint> {
    let r = problem.reference();
    let name = method.to_string();
    let mut out = Vec::with_capacity(rtols.len());
    for &rtol in rtols {
        let mut p = BenchPoint::empty(problem.key(), &name, Some(rtol), None);
        let mut times = Vec::with_capacity(MAX_RUNS);
        let mut k = 0;
        while want_more(&times, repeats) {
            k += 1;
            let mut sys = problem.system();
            let opts = Options {
                rtol,
                atol: Tolerance::PerComponent(r.atol(rtol)),
                max_step: Some(r.t_end - r.t0),
                max_steps: MAX_STEPS,
                record: false,
                ..Default::default()
            };
            let start = Instant::now();
            let res = ode::solve(method, sys.as_mut(), r.t0, &r.y0, r.t_end, opts);
            let dt = start.elapsed().as_secs_f64();
            match res {
                Ok(sol) => {
                    times.push(dt);
                    if k == 1 {
                        let s = scd(&sol.y_final, &r.y_ref);
                        p.scd = Some(s);
                        p.error = 10f64.powf(-s);
                        p.steps = sol.stats.steps as u64;
                        p.rejected = sol.stats.rejected as u64;
                        p.f_evals = sol.stats.f_evals as u64;
                        p.jac_evals = sol.stats.jac_evals as u64;
                        p.lu = sol.stats.lu_factorisations as u64;
                    }
                }
                Err(e) => {
                    p.failure = Some(e.to_string());
                    p.cpu_ms = dt * 1e3;
                    break;
                }
            }
        }
        if p.failure.is_none() {
            p.runs = times.len();
            p.cpu_ms = median(&mut times) * 1e3;
        }
        progress(&p);
        out.push(p);
    }
    out
}

/// Settings of the double-wishbone (axle) load case.
#[derive(Debug, Clone)]
pub struct AxleCase {
    /// Model file.
    pub model: PathBuf,
    /// Start of the simulated interval, s (the model rests in its static equilibrium until the
    /// load step, so any start before the step is exact).
    pub t_start: f64,
    /// End of the simulated interval, s.
    pub t_end: f64,
    /// Comparison window.
    pub window: Window,
    /// Displacement channel (error measure).
    pub channel: String,
    /// Force channel (reported).
    pub force_channel: String,
    /// Relative tolerance of the RODAS4 reference.
    pub reference_rtol: f64,
    /// Directory of the reference cache.
    pub cache_dir: PathBuf,
    /// Use the portable (non-AVX2) pipeline copies.
    pub portable: bool,
    /// Step splitting of the fixed-step Rosenbrock steppers at breakpoints and fast transients
    /// (`Split` is what `sprung run` does; `Ignore` measures the bare method, e.g. its order).
    pub breakpoints: sprung_solve::mech::Breakpoints,
}

/// A loaded axle model at its static equilibrium with the reference solution.
pub struct AxleBench {
    case: AxleCase,
    model: sprung_model::Model,
    compiled: Arc<sprung_mbs::CompiledModel>,
    r_eq: Vec<f64>,
    channels: [usize; 2],
    linear_solver: LinearSolverKind,
    output_interval: f64,
    reference: Traces,
}

/// Output traces `(t, displacement, force)` of one run.
#[derive(Debug, Clone, Default)]
struct Traces {
    t: Vec<f64>,
    x: Vec<f64>,
    f: Vec<f64>,
}

/// Summary of one axle run.
struct AxleRun {
    traces: Traces,
    cpu_s: f64,
    stats: sprung_solve::mech::rosenbrock::Stats,
}

impl AxleBench {
    /// Loads the model, solves the static equilibrium at t = 0 and loads the reference solution
    /// from the cache or computes it (RODAS4 at `case.reference_rtol`) and caches it.
    pub fn new(case: AxleCase, log: &mut dyn FnMut(&str)) -> Result<Self> {
        let valid = case.t_end > case.t_start
            && case.window.t0 >= case.t_start
            && case.window.t1 <= case.t_end;
        if !valid {
            return Err(bench_error!(
                "invalid axle interval: need t_start < t_end and the window [{}, {}] inside [{}, {}]",
                case.window.t0,
                case.window.t1,
                case.t_start,
                case.t_end
            ));
        }
        let model = sprung_model::load(&case.model).map_err(|e| Error::Model(e.to_string()))?;
        let compiled = Arc::new(
            sprung_mbs::compile_with(&model, &crate::element_registry())
                .with_context(|| format!("compiling {}", case.model.display()))?,
        );
        let outputs = OutputSet::new(&model, &compiled).map_err(Error::Bench)?;
        let find = |name: &str| {
            outputs
                .channels
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        outputs.channels.iter().map(|c| c.name.as_str()).collect();
                    bench_error!(
                        "model {} has no output channel '{name}'; available: {}",
                        case.model.display(),
                        names.join(", ")
                    )
                })
        };
        let channels = [find(&case.channel)?, find(&case.force_channel)?];
        let mut sys = MbsSystem::new(compiled.clone());
        sys.eval.force_portable(case.portable);
        let (r0, _) = compiled.design_state();
        let eq = equilibrium::solve(&mut sys, 0.0, &r0, EquilibriumOptions::default())
            .with_context(|| format!("static equilibrium of {}", case.model.display()))?;
        let linear_solver = match model.solver.linear_solver {
            sprung_model::LinearSolver::Dense => LinearSolverKind::Dense,
            sprung_model::LinearSolver::BlockSparse => LinearSolverKind::BlockSparse,
        };
        let output_interval = model.solver.output_interval();
        let mut bench = AxleBench {
            case,
            model,
            compiled,
            r_eq: eq.r,
            channels,
            linear_solver,
            output_interval,
            reference: Traces::default(),
        };
        bench.reference = bench.load_or_compute_reference(log)?;
        Ok(bench)
    }

    fn cache_key(&self) -> Result<String> {
        let text = std::fs::read(&self.case.model)
            .with_context(|| format!("reading {}", self.case.model.display()))?;
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        for v in [
            self.case.t_start,
            self.case.t_end,
            self.case.reference_rtol,
            self.output_interval,
        ] {
            v.to_bits().hash(&mut h);
        }
        self.case.channel.hash(&mut h);
        self.case.force_channel.hash(&mut h);
        Ok(format!("{:016x}", h.finish()))
    }

    fn load_or_compute_reference(&self, log: &mut dyn FnMut(&str)) -> Result<Traces> {
        let key = self.cache_key()?;
        let stem = self
            .case
            .model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = self.case.cache_dir.join(format!("{stem}_reference.json"));
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
            && v["key"] == json!(key)
        {
            let arr = |name: &str| -> Option<Vec<f64>> {
                v[name]
                    .as_array()?
                    .iter()
                    .map(|x| x.as_f64())
                    .collect::<Option<Vec<f64>>>()
            };
            if let (Some(t), Some(x), Some(f)) = (arr("t"), arr("x"), arr("f"))
                && t.len() == x.len()
                && t.len() == f.len()
            {
                log(&format!("axle reference: cached {}", path.display()));
                return Ok(Traces { t, x, f });
            }
        }
        log(&format!(
            "axle reference: rodas4 rtol {:.0e}, {}-{} s (computed once, cached in {})",
            self.case.reference_rtol,
            self.case.t_start,
            self.case.t_end,
            path.display()
        ));
        let run = self
            .simulate("rodas4", Some(self.case.reference_rtol), None, None)
            .context("computing the axle reference solution")?;
        std::fs::create_dir_all(&self.case.cache_dir)
            .with_context(|| format!("creating {}", self.case.cache_dir.display()))?;
        let doc = json!({
            "key": key, "model": self.case.model.display().to_string(), "method": "rodas4",
            "rtol": self.case.reference_rtol, "atol": self.case.reference_rtol * 1e-2,
            "channels": [self.case.channel, self.case.force_channel], "cpu_s": run.cpu_s,
            "t": run.traces.t, "x": run.traces.x, "f": run.traces.f,
        });
        std::fs::write(&path, doc.to_string())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(run.traces)
    }

    /// One run from the equilibrium at `t_start`: adaptive with `rtol` or fixed with `step`,
    /// re-linearising every `relinearise_every` steps (`None`: the model's `[solver]` value).
    fn simulate(
        &self,
        method: &str,
        rtol: Option<f64>,
        step: Option<f64>,
        relinearise_every: Option<u64>,
    ) -> Result<AxleRun> {
        let settings = RunSettings {
            method: method.to_string(),
            step: step.unwrap_or(1e-3),
            t0: self.case.t_start,
            t_end: self.case.t_end,
            output_interval: self.output_interval,
            relinearise_every: self.relinearise_every(relinearise_every),
            relinearise_stale: self.model.solver.relinearise_stale,
            breakpoints: self.case.breakpoints,
            rtol: rtol.unwrap_or(1e-6),
            atol: rtol.unwrap_or(1e-6) * 1e-2,
            linear_solver: self.linear_solver,
            adaptive: Some(rtol.is_some()),
            bounds: Default::default(),
        };
        let mut sys = MbsSystem::new(self.compiled.clone());
        sys.eval.force_portable(self.case.portable);
        let outputs = OutputSet::new(&self.model, &self.compiled).map_err(Error::Bench)?;
        let mut eval = sys.eval.clone();
        let mut row = vec![0.0; outputs.len()];
        let mut r = self.r_eq.clone();
        let mut v = vec![0.0; self.compiled.n_v()];
        let n_out = ((self.case.t_end - self.case.t_start) / self.output_interval) as usize + 2;
        let mut tr = Traces {
            t: Vec::with_capacity(n_out),
            x: Vec::with_capacity(n_out),
            f: Vec::with_capacity(n_out),
        };
        let [ix, iforce] = self.channels;
        let summary = simulate::run(&mut sys, &settings, &mut r, &mut v, &mut |t, r, v| {
            outputs.evaluate(&mut eval, t, r, v, &mut row);
            tr.t.push(t);
            tr.x.push(row[ix]);
            tr.f.push(row[iforce]);
            Control::Continue
        })
        .context("run")?;
        Ok(AxleRun {
            traces: tr,
            cpu_s: summary.compute_time,
            stats: summary.stats,
        })
    }

    /// NMSE of the displacement and force channels of `tr` against the reference.
    fn errors(&self, tr: &Traces) -> Result<(f64, f64)> {
        let w = self.case.window;
        let rf = &self.reference;
        let ex = channel_error(&self.case.channel, &tr.t, &tr.x, &rf.t, &rf.x, w)
            .context("error measure")?;
        let ef = channel_error(&self.case.force_channel, &tr.t, &tr.f, &rf.t, &rf.f, w)
            .context("error measure")?;
        Ok((ex.nmse, ef.nmse))
    }

    /// The re-linearisation interval of a run: `requested`, else the model's `[solver]` value.
    fn relinearise_every(&self, requested: Option<u64>) -> u64 {
        requested
            .unwrap_or(self.model.solver.relinearise_every as u64)
            .max(1)
    }

    /// The model file's stem (`double_wishbone`, `multilink`).
    pub fn model_name(&self) -> String {
        self.case
            .model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Runs `method` at one setting (`rtol` for adaptive, `step` in s for fixed-step) `repeats`
    /// times (once if a run takes longer than [`REPEAT_LIMIT_S`]); failures are reported in the
    /// point. Fixed-step runs re-linearise as the model's `[solver]` table says.
    pub fn measure(
        &self,
        method: &str,
        rtol: Option<f64>,
        step: Option<f64>,
        repeats: usize,
    ) -> BenchPoint {
        self.measure_with(method, rtol, step, None, repeats)
    }

    /// [`AxleBench::measure`] with the re-linearisation interval of a fixed-step mechanical run
    /// (`None`: the model's value): the lever of the cost comparison between `pie` and `lsrt2`
    /// (docs/solvers.md), whose steps cost alike when both re-linearise every step.
    pub fn measure_with(
        &self,
        method: &str,
        rtol: Option<f64>,
        step: Option<f64>,
        relinearise_every: Option<u64>,
        repeats: usize,
    ) -> BenchPoint {
        let mut p = BenchPoint::empty("axle", method, rtol, step);
        p.model = Some(self.model_name());
        let mechanical_fixed = step.is_some()
            && matches!(
                simulate::route(method, Some(false)),
                Ok(simulate::Route::RosenbrockFixed(_) | simulate::Route::Pie(_))
            );
        if mechanical_fixed {
            p.relinearise_every = Some(self.relinearise_every(relinearise_every));
        }
        let mut times = Vec::with_capacity(MAX_RUNS);
        while want_more(&times, repeats) {
            let first = times.is_empty();
            match self
                .simulate(method, rtol, step, relinearise_every)
                .and_then(|run| Ok((self.errors(&run.traces)?, run)))
            {
                Ok(((nx, nf), run)) => {
                    times.push(run.cpu_s);
                    if first {
                        p.error = nx;
                        p.nmse_force = Some(nf);
                        p.steps = run.stats.steps;
                        p.rejected = run.stats.rejected;
                        p.f_evals = run.stats.q_evals;
                        p.jac_evals = run.stats.linearisations;
                        p.lu = run.stats.factorisations;
                        p.solves = run.stats.solves;
                    }
                }
                Err(e) => {
                    p.failure = Some(format!("{e:#}"));
                    return p;
                }
            }
        }
        p.runs = times.len();
        p.cpu_ms = median(&mut times) * 1e3;
        p
    }
}

/// The axle ladder: fixed-step methods (catalogue kind `Fixed`, e.g. lsrt2) over `steps_ms`,
/// adaptive ones over `rtols`; the fixed-step mechanical methods (lsrt2, pie, …) once per entry
/// of `relinearise_every` (empty: the model's value).
pub fn axle_ladder(
    bench: &AxleBench,
    methods: &[String],
    rtols: &[f64],
    steps_ms: &[f64],
    relinearise_every: &[u64],
    repeats: usize,
    progress: &mut dyn FnMut(&BenchPoint),
) -> Result<Vec<BenchPoint>> {
    let mut out = Vec::new();
    for m in methods {
        let m = m.trim().to_ascii_lowercase();
        let (fixed, relinearising) = match simulate::route(&m, None).context("solver")? {
            simulate::Route::RosenbrockFixed(_) | simulate::Route::Pie(_) => (true, true),
            simulate::Route::Rk4 => (true, false),
            simulate::Route::FirstOrder(_, fixed) => (fixed, false),
            simulate::Route::RosenbrockAdaptive(_) => (false, false),
        };
        let relins: Vec<Option<u64>> = if relinearising && !relinearise_every.is_empty() {
            relinearise_every.iter().map(|&n| Some(n)).collect()
        } else {
            vec![None]
        };
        let mut settings: Vec<(Option<f64>, Option<f64>, Option<u64>)> = Vec::new();
        for relin in relins {
            if fixed {
                settings.extend(steps_ms.iter().map(|h| (None, Some(h * 1e-3), relin)));
            } else {
                settings.extend(rtols.iter().map(|r| (Some(*r), None, relin)));
            }
        }
        for (rtol, step, relin) in settings {
            let mut p = bench.measure_with(&m, rtol, step, relin, repeats);
            p.method = m.clone();
            progress(&p);
            out.push(p);
        }
    }
    Ok(out)
}

/// Title of a problem's table and panel; the axle's names the model of its points.
fn problem_title(key: &str, points: &[BenchPoint]) -> String {
    match key {
        "hires" => "HIRES (t_end = 321.8122)".into(),
        "vdp" => "Van der Pol, eps = 1e-6 (t_end = 2)".into(),
        "rober" => "ROBER (t_end = 1e11)".into(),
        "axle" => {
            let model = points
                .iter()
                .find_map(|p| p.model.as_deref().filter(|_| p.problem == "axle"))
                .unwrap_or("axle");
            format!("{model}, Fx step (4.8-6 s)")
        }
        _ => "problem".into(),
    }
}

/// The method of a point as text, with its re-linearisation interval when that is not every
/// step: `pie`, `pie/5` (the table's method column and the diagram's series).
pub fn label(p: &BenchPoint) -> String {
    match p.relinearise_every {
        Some(n) if n > 1 => format!("{}/{n}", p.method),
        _ => p.method.clone(),
    }
}

/// The setting of a point as text: `rtol 1e-6` or `h 1 ms`.
pub fn setting(p: &BenchPoint) -> String {
    match (p.rtol, p.step) {
        (Some(r), _) => format!("{r:.0e}"),
        (None, Some(h)) => format!("h={}ms", h * 1e3),
        _ => "-".into(),
    }
}

/// Plain-text table of the points of one problem.
pub fn format_table(problem: &str, points: &[BenchPoint]) -> String {
    use std::fmt::Write as _;
    let axle = problem == "axle";
    let mut s = String::new();
    let _ = writeln!(s, "{}", problem_title(problem, points));
    let err_head = if axle { "NMSE x" } else { "scd" };
    let _ = write!(s, "{:<10} {:>9} {:>9}", "method", "rtol/h", err_head);
    if axle {
        let _ = write!(s, " {:>9}", "NMSE F");
    }
    let _ = write!(
        s,
        " {:>10} {:>8} {:>6} {:>9} {:>7} {:>7}",
        "CPU ms", "steps", "rej", "f evals", "Jac", "LU"
    );
    let _ = writeln!(s, "{}", if axle { "  solves" } else { "" });
    for p in points.iter().filter(|p| p.problem == problem) {
        let _ = write!(s, "{:<10} {:>9}", label(p), setting(p));
        if let Some(f) = &p.failure {
            let short: String = f.chars().take(90).collect();
            let _ = writeln!(s, "  FAILED: {short}");
            continue;
        }
        if axle {
            let _ = write!(
                s,
                " {:>9.2e} {:>9.2e}",
                p.error,
                p.nmse_force.unwrap_or(f64::NAN)
            );
        } else {
            let _ = write!(s, " {:>9.2}", p.scd.unwrap_or(f64::NAN));
        }
        let _ = write!(
            s,
            " {:>10.3} {:>8} {:>6} {:>9} {:>7} {:>7}",
            p.cpu_ms, p.steps, p.rejected, p.f_evals, p.jac_evals, p.lu
        );
        if axle {
            let _ = write!(s, " {:>7}", p.solves);
        }
        let _ = writeln!(s);
    }
    s
}

/// Draws the work-precision diagram: one panel per problem present in `points` (2×2 for four),
/// error against CPU time on log axes, one line per method (failed points are left out).
/// `size` is the image size in pixels (`None`: 640×480 per panel).
pub fn plot(
    points: &[BenchPoint],
    path: &Path,
    title: &str,
    size: Option<(u32, u32)>,
) -> Result<()> {
    let mut problems: Vec<&str> = Vec::new();
    for p in points {
        if !problems.contains(&p.problem.as_str()) {
            problems.push(&p.problem);
        }
    }
    // one look per method across all panels
    let mut all_methods: Vec<String> = Vec::new();
    for p in points {
        let l = label(p);
        if !all_methods.contains(&l) {
            all_methods.push(l);
        }
    }
    let mut panels = Vec::new();
    for prob in &problems {
        let y_label = if *prob == "axle" {
            "NMSE of wc_dx_L (4.9-6 s)"
        } else {
            "max. relative error at t_end"
        };
        let mut panel = XyPanel::new(problem_title(prob, points), "CPU time [ms]", y_label);
        for (k, m) in all_methods.iter().enumerate() {
            let mine: Vec<&BenchPoint> = points
                .iter()
                .filter(|p| p.problem == *prob && label(p) == *m)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let pts: Vec<(f64, f64)> = mine
                .iter()
                .filter(|p| p.failure.is_none())
                .map(|p| (p.cpu_ms, p.error))
                .collect();
            let failed = mine.iter().filter(|p| p.failure.is_some()).count();
            let name = match failed {
                0 => m.to_string(),
                n if n == mine.len() => format!("{m} (failed)"),
                n => format!("{m} ({n} failed)"),
            };
            let (color, marker) = default_style(k);
            panel = panel.with_series(
                XySeries::new(name, pts)
                    .with_color(color)
                    .with_marker(marker),
            );
        }
        if panel.series.iter().any(|s| !s.points.is_empty()) {
            panels.push(panel);
        }
    }
    if panels.is_empty() {
        return Err(bench_error!("no successful run to plot"));
    }
    let (rows, cols) = match panels.len() {
        1 => (1, 1),
        2 => (1, 2),
        _ => (panels.len().div_ceil(2), 2),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    plot_loglog(path, title, &panels, &XyOptions { rows, cols, size }).context("plot")?;
    Ok(())
}

/// CPU model and core count of this machine (from /proc/cpuinfo on Linux).
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!(
        "{cpu}, {cores} logical cores, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
