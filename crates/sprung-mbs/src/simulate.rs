//! Time simulation of a compiled model: initial state (design or static equilibrium), the choice of
//! integrator, and a loop that hands every output state to an observer (which writes results,
//! prints progress or stops the run). Integrators come from `sprung-solve`; this module only wires
//! them to the model.
//!
//! Methods (all names lower case, `sprung solvers` lists them):
//! * linear-implicit Rosenbrock methods on the reduced velocity-level system (document 000,
//!   eqs. 6-11 generalised per stage): `lsrt2` (default, fixed 1 ms step, re-linearised every N
//!   steps), `lie` (linear-implicit Euler), `ros2`, `ros3p`, `ros34pw2`, `rodas3`, `rodas4`,
//!   `rodas5p`. Methods with an embedded estimate run adaptively (rtol/atol, exact stops at input
//!   discontinuities, dense output) unless a fixed step is requested; `lsrt2`, `lie` always fixed;
//! * `rk4` — classical Runge–Kutta on the mechanical system, fixed step;
//! * every other method of the first-order suite (`ode45`, `ode23`, `ode113`, `ode15s`, `ode23s`,
//!   `ode23t`, `ode23tb`, `radau5`, `ode1`…`ode8`, `ode14x`) on y = (r, v) through
//!   [`crate::first_order::FirstOrder`] with the analytic Jacobian.

use std::time::Instant;

use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::adaptive::{AdaptiveOptions, AdaptiveRosenbrock, Control, Observer};
use sprung_solve::mech::explicit::Rk4Stepper;
use sprung_solve::mech::rosenbrock::Stats;
use sprung_solve::mech::{Breakpoints, MechanicalSystem, RosenbrockStepper, StepError, Tableau};
use sprung_solve::ode;

use crate::first_order::FirstOrder;

use crate::system::MbsSystem;

/// How a method runs on a mechanical model.
#[derive(Debug, Clone)]
pub enum Route {
    /// Rosenbrock on the reduced velocity-level system, fixed step.
    RosenbrockFixed(Tableau),
    /// Rosenbrock on the reduced velocity-level system, adaptive.
    RosenbrockAdaptive(Tableau),
    /// Classical RK4 on the mechanical system.
    Rk4,
    /// A method of the first-order suite on y = (r, v); `true` = run with a fixed step.
    FirstOrder(ode::Method, bool),
}

/// Chooses how `name` runs: `adaptive` = Some(true/false) forces the mode where the method allows
/// it (None: the method's natural mode — adaptive if it has an error estimate).
pub fn route(name: &str, adaptive: Option<bool>) -> Result<Route, RunError> {
    if name == "rk4" {
        return Ok(Route::Rk4);
    }
    if let Some(tab) = Tableau::by_name(name) {
        let can = tab.b_hat.is_some();
        return Ok(match adaptive {
            Some(true) if !can => {
                return Err(RunError::Settings(format!(
                    "{name} has no embedded error estimate and runs with a fixed step only; drop --rtol/--atol or choose e.g. rodas4"
                )));
            }
            Some(false) => Route::RosenbrockFixed(tab),
            _ if can => Route::RosenbrockAdaptive(tab),
            _ => Route::RosenbrockFixed(tab),
        });
    }
    let method = ode::Method::from_name(name)
        .map_err(|e| RunError::UnknownMethod(name.to_string(), e.to_string()))?;
    let info = ode::catalogue().iter().find(|m| m.name == name);
    let natural_fixed = info.is_none_or(|m| m.step_control == ode::StepControl::Fixed);
    let fixed = match adaptive {
        Some(true) if natural_fixed => {
            return Err(RunError::Settings(format!(
                "{name} is a fixed-step method; use --step, or an adaptive solver for --rtol/--atol"
            )));
        }
        Some(a) => !a,
        None => natural_fixed,
    };
    Ok(Route::FirstOrder(method, fixed))
}

/// Linear solver inside the linear-implicit methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearSolverKind {
    /// Dense LU (faer).
    Dense,
    /// Block-sparse LU following the body-coupling graph.
    BlockSparse,
}

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Method name (see [`route`] for the accepted names).
    pub method: String,
    /// Fixed step, s.
    pub step: f64,
    /// Start time, s.
    pub t0: f64,
    /// End time, s.
    pub t_end: f64,
    /// Output interval, s (a multiple of the step for fixed-step methods).
    pub output_interval: f64,
    /// Re-linearise every N steps (linear-implicit fixed-step methods).
    pub relinearise_every: u64,
    /// Fixed-step Rosenbrock methods: reaction to a piecewise characteristic changing segment
    /// within a step ([`Breakpoints`]; default: split the step).
    pub breakpoints: Breakpoints,
    /// Adaptive tolerances.
    pub rtol: f64,
    /// Adaptive absolute tolerance.
    pub atol: f64,
    /// Linear solver.
    pub linear_solver: LinearSolverKind,
    /// Force adaptive (true) or fixed-step (false) mode; None = the method's natural mode.
    pub adaptive: Option<bool>,
}

/// Why a run stopped early.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// Unknown method name.
    #[error("unknown solver '{0}': {1} (see `sprung solvers`)")]
    UnknownMethod(String, String),
    /// Inconsistent settings.
    #[error("invalid solver settings: {0}")]
    Settings(String),
    /// An integration step failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// A first-order suite solver failed.
    #[error(transparent)]
    Ode(#[from] ode::OdeError),
    /// A characteristic curve with `extrapolation = "error"` was evaluated outside its table
    /// (the run loop checks after every fixed step and at every output; the facade names the
    /// element, curve, value and range with [`sprung_model::check_curve_ranges`]).
    #[error(
        "a characteristic curve with extrapolation = \"error\" was evaluated outside its table at t = {t} s"
    )]
    CurveOutOfRange {
        /// Time of the state that left the table, s.
        t: f64,
    },
}

/// Summary of a run.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// Last time reached, s.
    pub t_reached: f64,
    /// Whether the observer stopped the run.
    pub stopped_by_observer: bool,
    /// Work counters.
    pub stats: Stats,
    /// Wall time spent in integration steps (excluding the observer), s.
    pub compute_time: f64,
    /// Longest single step, s (fixed-step methods).
    pub worst_step_time: f64,
    /// All step times, s (fixed-step methods; for percentiles).
    pub step_times: Vec<f64>,
}

/// Number of steps whose individual times are kept for percentiles.
const MAX_TIMED_STEPS: u64 = 10_000_000;

/// A fixed-step integrator of the mechanical system: what [`run`] steps with, and what the
/// `sprung` facade steps one step at a time.
pub enum FixedStepper {
    /// A Rosenbrock method (LSRT2, …) on the reduced velocity-level system.
    Ros(Box<RosenbrockStepper>),
    /// Classical RK4.
    Rk4(Box<Rk4Stepper>),
}

impl FixedStepper {
    /// The fixed-step integrator for `settings` (errors: unknown method, an adaptive-only route,
    /// a step that is not positive).
    pub fn new(sys: &MbsSystem, s: &RunSettings) -> Result<Self, RunError> {
        if s.step.is_nan() || s.step <= 0.0 || !s.step.is_finite() {
            return Err(RunError::Settings(format!(
                "step = {} must be positive and finite",
                s.step
            )));
        }
        match route(&s.method, Some(false))? {
            Route::Rk4 => Ok(Self::Rk4(Box::new(Rk4Stepper::new(sys, s.step, s.t0)))),
            Route::RosenbrockFixed(tab) => {
                let mut st = RosenbrockStepper::new(
                    sys,
                    tab,
                    s.step,
                    s.t0,
                    s.relinearise_every,
                    linear_solver(sys, s.linear_solver),
                );
                st.breakpoints = s.breakpoints;
                Ok(Self::Ros(Box::new(st)))
            }
            _ => Err(RunError::Settings(format!(
                "{} does not run step by step with a fixed step here; use lsrt2, lie, ros2, ros3p, ros34pw2, rodas3, rodas4, rodas5p or rk4",
                s.method
            ))),
        }
    }

    /// Advances (r, v) from step `k` to step k + 1.
    pub fn step(
        &mut self,
        sys: &mut MbsSystem,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        match self {
            Self::Ros(st) => st.step(sys, k, r, v),
            Self::Rk4(st) => st.step(sys, k, r, v),
        }
    }

    /// Work counters.
    pub fn stats(&self) -> Stats {
        match self {
            Self::Ros(st) => st.stats,
            Self::Rk4(st) => st.stats,
        }
    }

    /// The step size, s.
    pub fn h(&self) -> f64 {
        match self {
            Self::Ros(st) => st.h,
            Self::Rk4(st) => st.h,
        }
    }

    /// Re-linearises (and factors) at (t, r, v) without stepping, as the step that re-linearised
    /// last did (restoring a snapshot between re-linearisations); no-op for RK4.
    pub fn linearise_at(
        &mut self,
        sys: &mut MbsSystem,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Result<(), StepError> {
        match self {
            Self::Ros(st) => st.linearise_at(sys, t, r, v),
            Self::Rk4(_) => Ok(()),
        }
    }

    /// Whether step `k` starts with a re-linearisation (never for RK4).
    pub fn relinearises_at(&self, k: u64) -> bool {
        match self {
            Self::Ros(st) => st.relinearises_at(k),
            Self::Rk4(_) => false,
        }
    }

    /// Forces a re-linearisation at the next step.
    pub fn invalidate(&mut self) {
        if let Self::Ros(st) = self {
            st.invalidate();
        }
    }
}

/// Runs a method of the first-order suite on y = (r, v).
#[allow(clippy::too_many_arguments)]
fn run_first_order(
    sys: &mut MbsSystem,
    s: &RunSettings,
    method: ode::Method,
    fixed: bool,
    tstops: Vec<f64>,
    output_times: Vec<f64>,
    r: &mut [f64],
    v: &mut [f64],
    observer: &mut Observer<'_>,
    summary: &mut RunSummary,
) -> Result<(), RunError> {
    let nr = r.len();
    let mut y0 = r.to_vec();
    y0.extend_from_slice(v);
    let mut fo = FirstOrder::new(sys.clone());
    let mut obs_time = 0.0;
    let mut last_t = s.t0;
    let curves = sys.model().clone();
    let mut curve_t = None;
    let mut last = y0.clone();
    let start = Instant::now();
    let res = {
        let opts = ode::Options {
            step: if fixed { Some(s.step) } else { None },
            rtol: s.rtol,
            atol: ode::Tolerance::Scalar(s.atol),
            max_steps: usize::MAX,
            output_times: Some(output_times),
            tstops,
            record: false,
            observer: Some(Box::new(|t: f64, y: &[f64]| {
                if sprung_model::any_out_of_range(&curves.curves) {
                    curve_t = Some(t);
                    return ode::Control::Stop;
                }
                let o = Instant::now();
                let c = observer(t, &y[..nr], &y[nr..]);
                obs_time += o.elapsed().as_secs_f64();
                last.copy_from_slice(y);
                last_t = t;
                match c {
                    Control::Continue => ode::Control::Continue,
                    Control::Stop => ode::Control::Stop,
                }
            })),
            ..Default::default()
        };
        ode::solve(method, &mut fo, s.t0, &y0, s.t_end, opts)
    };
    let compute = start.elapsed().as_secs_f64() - obs_time;
    r.copy_from_slice(&last[..nr]);
    v.copy_from_slice(&last[nr..]);
    summary.t_reached = last_t;
    summary.compute_time = compute;
    let sol = res?;
    if let Some(t) = curve_t {
        return Err(RunError::CurveOutOfRange { t });
    }
    *summary = RunSummary {
        t_reached: sol.t_final,
        stopped_by_observer: sol.stopped,
        stats: Stats {
            steps: sol.stats.steps as u64,
            rejected: sol.stats.rejected as u64,
            q_evals: sol.stats.f_evals as u64,
            linearisations: sol.stats.jac_evals as u64,
            factorisations: sol.stats.lu_factorisations as u64,
            solves: sol.stats.lu_solves as u64,
            breakpoint_steps: 0,
        },
        compute_time: compute,
        ..Default::default()
    };
    Ok(())
}

fn linear_solver(sys: &MbsSystem, kind: LinearSolverKind) -> Box<dyn LinearSolver + Send> {
    match kind {
        LinearSolverKind::Dense => Box::new(DenseLu::new(sys.n_v())),
        LinearSolverKind::BlockSparse => Box::new(BlockSparseLu::new(&sys.pattern())),
    }
}

/// Runs the simulation from (r, v) at `settings.t0`; `observer(t, r, v)` is called at t0 and at
/// every output time. On return (also on error) (r, v) hold the last state reached.
pub fn run(
    sys: &mut MbsSystem,
    settings: &RunSettings,
    r: &mut [f64],
    v: &mut [f64],
    observer: &mut Observer<'_>,
) -> Result<RunSummary, RunError> {
    let (summary, res) = run_with_summary(sys, settings, r, v, observer);
    res.map(|()| summary)
}

/// [`run`] that keeps the summary when the run fails: t_reached (the last state reached and
/// observed), the steps and the work counters up to the failure, and the error.
pub fn run_with_summary(
    sys: &mut MbsSystem,
    settings: &RunSettings,
    r: &mut [f64],
    v: &mut [f64],
    observer: &mut Observer<'_>,
) -> (RunSummary, Result<(), RunError>) {
    let mut summary = RunSummary {
        t_reached: settings.t0,
        ..Default::default()
    };
    let res = run_inner(sys, settings, r, v, observer, &mut summary);
    (summary, res)
}

fn run_inner(
    sys: &mut MbsSystem,
    settings: &RunSettings,
    r: &mut [f64],
    v: &mut [f64],
    observer: &mut Observer<'_>,
    summary: &mut RunSummary,
) -> Result<(), RunError> {
    let s = settings;
    if s.t_end.is_nan() || s.t0.is_nan() || s.t_end <= s.t0 {
        return Err(RunError::Settings(format!(
            "t_end = {} must be greater than t0 = {}",
            s.t_end, s.t0
        )));
    }
    if !s.t_end.is_finite() {
        return Err(RunError::Settings(format!(
            "t_end = {} must be finite",
            s.t_end
        )));
    }
    let n_outputs = (s.t_end - s.t0) / s.output_interval;
    if s.output_interval.is_nan() || s.output_interval <= 0.0 || n_outputs > 1e8 {
        return Err(RunError::Settings(format!(
            "output_interval = {} s gives {n_outputs:.3e} output rows over [{}, {}] s; choose a positive interval giving at most 1e8 rows",
            s.output_interval, s.t0, s.t_end
        )));
    }
    let n_out = ((s.t_end - s.t0) / s.output_interval + 1e-9).floor() as u64;
    let output_times = || -> Vec<f64> {
        (0..=n_out)
            .map(|k| s.t0 + k as f64 * s.output_interval)
            .collect()
    };
    let tstops: Vec<f64> = sys
        .model()
        .input_discontinuities()
        .into_iter()
        .filter(|&t| t > s.t0 && t < s.t_end)
        .collect();
    let mut stepper = match route(&s.method, s.adaptive)? {
        Route::RosenbrockAdaptive(tab) => {
            let opts = AdaptiveOptions {
                rtol: s.rtol,
                atol: s.atol,
                tstops,
                ..Default::default()
            };
            let mut integ =
                AdaptiveRosenbrock::new(sys, tab, opts, linear_solver(sys, s.linear_solver));
            let times = output_times();
            let mut obs_time = 0.0;
            let start = Instant::now();
            let mut stopped = false;
            let mut last_t = s.t0;
            let curves = sys.model().clone();
            let mut curve_t = None;
            let res = integ.integrate(sys, s.t0, s.t_end, r, v, &times, &mut |t, r, v| {
                if sprung_model::any_out_of_range(&curves.curves) {
                    curve_t = Some(t);
                    return Control::Stop;
                }
                let o = Instant::now();
                let c = observer(t, r, v);
                obs_time += o.elapsed().as_secs_f64();
                stopped |= c == Control::Stop;
                last_t = t;
                c
            });
            summary.compute_time = start.elapsed().as_secs_f64() - obs_time;
            summary.stats = integ.stats;
            summary.stopped_by_observer = stopped;
            summary.t_reached = *res.as_ref().unwrap_or(&last_t);
            res?;
            if let Some(t) = curve_t {
                summary.stopped_by_observer = false;
                return Err(RunError::CurveOutOfRange { t });
            }
            return Ok(());
        }
        Route::FirstOrder(method, fixed) => {
            return run_first_order(
                sys,
                s,
                method,
                fixed,
                tstops,
                output_times(),
                r,
                v,
                observer,
                summary,
            );
        }
        Route::Rk4 | Route::RosenbrockFixed(_) => FixedStepper::new(sys, s)?,
    };
    let n_steps = ((s.t_end - s.t0) / s.step).round() as u64;
    let out_every = ((s.output_interval / s.step).round() as u64).max(1);
    if n_steps > 1_000_000_000 {
        return Err(RunError::Settings(format!(
            "step = {} s gives {n_steps} steps; choose a step giving at most 1e9 steps",
            s.step
        )));
    }
    // Step times are kept for the first MAX_TIMED_STEPS steps (percentiles), bounded memory.
    summary
        .step_times
        .reserve(n_steps.min(MAX_TIMED_STEPS) as usize);
    if observer(s.t0, r, v) == Control::Stop {
        summary.stopped_by_observer = true;
        return Ok(());
    }
    for k in 0..n_steps {
        let start = Instant::now();
        let res = stepper.step(sys, k, r, v);
        let dt = start.elapsed().as_secs_f64();
        summary.compute_time += dt;
        summary.worst_step_time = summary.worst_step_time.max(dt);
        if (summary.step_times.len() as u64) < MAX_TIMED_STEPS {
            summary.step_times.push(dt);
        }
        summary.stats = stepper.stats();
        res?;
        let t = s.t0 + (k + 1) as f64 * s.step;
        if sprung_model::any_out_of_range(&sys.model().curves) {
            return Err(RunError::CurveOutOfRange { t });
        }
        summary.t_reached = t;
        if (k + 1) % out_every == 0 && observer(t, r, v) == Control::Stop {
            summary.stopped_by_observer = true;
            break;
        }
    }
    Ok(())
}
