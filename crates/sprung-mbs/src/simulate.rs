//! Time simulation of a compiled model: initial state (design or static equilibrium), the choice of
//! integrator, and a loop that hands every output state to an observer (which writes results,
//! prints progress or stops the run). Integrators come from `sprung-solve`; this module only wires
//! them to the model.
//!
//! Methods on the mechanical system (all names lower case):
//! * `lsrt2` — LSRT2, document 000 eqs. 6-11, fixed step (default 1 ms), re-linearised every N steps;
//! * `lie` — linear-implicit Euler, fixed step; `ros2` — ROS2 (Verwer), fixed step;
//! * `rk4` (alias `ode4`) — classical Runge–Kutta, fixed step, explicit;
//! * `rodas4` — RODAS4, adaptive with rtol/atol, exact stops at input discontinuities, dense output
//!   (the stiff reference solver).

use std::time::Instant;

use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::adaptive::{AdaptiveOptions, AdaptiveRosenbrock, Control};
use sprung_solve::mech::explicit::Rk4Stepper;
use sprung_solve::mech::rosenbrock::Stats;
use sprung_solve::mech::{MechanicalSystem, RosenbrockStepper, StepError, Tableau};

use crate::system::MbsSystem;

/// Names of the methods available on mechanical models, with a one-line description.
pub const METHODS: &[(&str, &str)] = &[
    ("lsrt2", "LSRT2 linear-implicit Rosenbrock, order 2, L-stable, fixed step (document 000)"),
    ("lie", "linear-implicit Euler, order 1, fixed step"),
    ("ros2", "ROS2 (Verwer) linear-implicit, order 2, L-stable, fixed step"),
    ("rk4", "classical Runge-Kutta (ode4), order 4, explicit, fixed step"),
    ("rodas4", "RODAS4 Rosenbrock 4(3), adaptive rtol/atol, stiff reference solver"),
];

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
    /// Method name (see [`METHODS`]).
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
    /// Adaptive tolerances.
    pub rtol: f64,
    /// Adaptive absolute tolerance.
    pub atol: f64,
    /// Linear solver.
    pub linear_solver: LinearSolverKind,
}

/// Why a run stopped early.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// Unknown method name.
    #[error("unknown solver '{0}'; available on mechanical models: {1}")]
    UnknownMethod(String, String),
    /// Inconsistent settings.
    #[error("invalid solver settings: {0}")]
    Settings(String),
    /// An integration step failed.
    #[error(transparent)]
    Step(#[from] StepError),
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
    observer: &mut dyn FnMut(f64, &[f64], &[f64]) -> Control,
) -> Result<RunSummary, RunError> {
    let s = settings;
    if !(s.t_end > s.t0) {
        return Err(RunError::Settings(format!("t_end = {} must be greater than t0 = {}", s.t_end, s.t0)));
    }
    let mut summary = RunSummary { t_reached: s.t0, ..Default::default() };
    if s.method == "rodas4" {
        let tstops: Vec<f64> = sys.model().input_discontinuities().into_iter().filter(|&t| t > s.t0 && t < s.t_end).collect();
        let opts = AdaptiveOptions { rtol: s.rtol, atol: s.atol, tstops, ..Default::default() };
        let mut integ = AdaptiveRosenbrock::new(sys, Tableau::rodas4(), opts, linear_solver(sys, s.linear_solver));
        let n_out = ((s.t_end - s.t0) / s.output_interval + 1e-9).floor() as u64;
        let times: Vec<f64> = (0..=n_out).map(|k| s.t0 + k as f64 * s.output_interval).collect();
        let mut obs_time = 0.0;
        let start = Instant::now();
        let mut stopped = false;
        let res = integ.integrate(sys, s.t0, s.t_end, r, v, &times, &mut |t, r, v| {
            let o = Instant::now();
            let c = observer(t, r, v);
            obs_time += o.elapsed().as_secs_f64();
            stopped |= c == Control::Stop;
            c
        });
        summary.compute_time = start.elapsed().as_secs_f64() - obs_time;
        summary.stats = integ.stats;
        summary.stopped_by_observer = stopped;
        summary.t_reached = res?;
        return Ok(summary);
    }
    if !(s.step > 0.0) {
        return Err(RunError::Settings(format!("step = {} must be positive", s.step)));
    }
    let n_steps = ((s.t_end - s.t0) / s.step).round() as u64;
    let out_every = ((s.output_interval / s.step).round() as u64).max(1);
    enum Stepper {
        Ros(Box<RosenbrockStepper>),
        Rk4(Box<Rk4Stepper>),
    }
    let mut stepper = match s.method.as_str() {
        "rk4" | "ode4" => Stepper::Rk4(Box::new(Rk4Stepper::new(sys, s.step, s.t0))),
        name => match Tableau::by_name(name) {
            Some(tab) if name != "rodas4" => Stepper::Ros(Box::new(RosenbrockStepper::new(
                sys,
                tab,
                s.step,
                s.t0,
                s.relinearise_every,
                linear_solver(sys, s.linear_solver),
            ))),
            _ => {
                let names: Vec<&str> = METHODS.iter().map(|m| m.0).collect();
                return Err(RunError::UnknownMethod(name.to_string(), names.join(", ")));
            }
        },
    };
    summary.step_times.reserve(n_steps as usize);
    if observer(s.t0, r, v) == Control::Stop {
        summary.stopped_by_observer = true;
        return Ok(summary);
    }
    for k in 0..n_steps {
        let start = Instant::now();
        let res = match &mut stepper {
            Stepper::Ros(st) => st.step(sys, k, r, v),
            Stepper::Rk4(st) => st.step(sys, k, r, v),
        };
        let dt = start.elapsed().as_secs_f64();
        summary.compute_time += dt;
        summary.worst_step_time = summary.worst_step_time.max(dt);
        summary.step_times.push(dt);
        summary.stats = match &stepper {
            Stepper::Ros(st) => st.stats,
            Stepper::Rk4(st) => st.stats,
        };
        res?;
        let t = s.t0 + (k + 1) as f64 * s.step;
        summary.t_reached = t;
        if (k + 1) % out_every == 0 && observer(t, r, v) == Control::Stop {
            summary.stopped_by_observer = true;
            break;
        }
    }
    Ok(summary)
}
