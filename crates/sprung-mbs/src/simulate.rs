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
//! * `pie` — the partly implicit Euler of document 002 (eqs. 4-9): element states first
//!   (eq. 7), then the body velocities about an explicit Euler position predictor (eq. 9), then
//!   the positions (eq. 4); fixed step, re-linearised every N steps like `lsrt2`
//!   ([`sprung_solve::mech::pie`]); `pie_lagged` the same with step (a)'s state rates taken
//!   from the last predictor evaluation and carried to the step start to first order with the
//!   linearisation (one evaluation of q per step instead of q and the state rates; not eq. 7
//!   bit for bit, `docs/solvers.md`, *The lagged state rates of `pie_lagged`*);
//! * every other method of the first-order suite (`ode45`, `ode23`, `ode113`, `ode15s`, `ode23s`,
//!   `ode23t`, `ode23tb`, `radau5`, `ode1`…`ode8`, `ode14x`) on y = (r, v) through
//!   [`crate::first_order::FirstOrder`] with the analytic Jacobian.
//!
//! Divergence by plausibility (issue 17, item 5): besides non-finite values, a run stops with
//! [`RunError::Implausible`] when a body's centre of mass is farther from its design position
//! than a displacement bound, or moves faster than a velocity bound ([`Bounds`], resolved per
//! run into [`Limits`]). Fixed-step runs check after every step (timed with the step: a real-time
//! loop runs the check too), adaptive and first-order runs at every output time (one pass over the
//! bodies, no allocation); the rows before the failing state are kept. With ideal joints a
//! fixed-step run checks the full body states of the step's last evaluation
//! ([`MbsSystem::check_last_evaluated`]) instead of expanding the reduced state once more. Defaults
//! derived from the model ([`Bounds::resolve`]):
//! * displacement bound = [`DISPLACEMENT_EXTENT_FACTOR`] (10) × the model extent
//!   ([`model_extent`]: diagonal of the bounding box of the design positions of the bodies, of
//!   the ground markers and of the body markers), at least [`MIN_DISPLACEMENT_BOUND`] (1 m).
//!   Bodies coupled by force elements stay within the size of their model; ten times that leaves
//!   room for large legitimate motion (long travel) while an exponentially growing, diverging
//!   solution passes it within a few steps. The default applies to the bodies held to the ground
//!   through force elements ([`held_bodies`]); free bodies and free groups (no element path to
//!   the ground) may fly or fall any distance, so only their velocity is bounded by default. A
//!   bound that is set applies to every body.
//! * velocity bound = displacement bound / [`VELOCITY_CROSSING_TIME`] (10 ms): a body that would
//!   cross the whole displacement bound in 10 ms is no suspension motion; this catches velocity
//!   blow-ups (e.g. an explicit method above its stability limit) before the positions follow.
//! * force bound (on the resultant force on a body: every element, input and gravity acting on
//!   it, i.e. mass × acceleration of its centre of mass) = the largest body mass × velocity
//!   bound / [`VELOCITY_CROSSING_TIME`]: the force that takes the heaviest body from rest to the
//!   velocity bound within 10 ms. A diverging solution's forces grow with its deflections, so
//!   this bound often trips a step before the motion bounds. The check reads the resultant
//!   forces the pipeline has already summed per body for Newton–Euler ([`Evaluator::body_wrench`];
//!   one pass over the bodies, no element loop) of the step's last evaluation (LSRT2: its second
//!   stage at the step's midpoint; after a split the second half's). Fixed-step runs only:
//!   adaptive and first-order runs report interpolated (dense-output) states, at which stiff
//!   elements give meaningless forces (measured: 4e6 N in the double wishbone's wheel bearing
//!   of a RODAS4 rtol 1e-8 run that is accurate to 1e-8) — they keep the motion bounds. Only
//!   when it trips, the elements are evaluated once more at the state reached, and the message
//!   names the built-in element with the largest force on the body.
//!
//! Rotations are not bounded (a wheel may spin for any number of revolutions; the quaternions are
//! normalised).

use std::time::Instant;

use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::compact::{ActiveSet, CompactInverse};
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::adaptive::{AdaptiveOptions, AdaptiveRosenbrock, Control, Observer};
use sprung_solve::mech::explicit::Rk4Stepper;
use sprung_solve::mech::pie::StateRates;
use sprung_solve::mech::rosenbrock::Stats;
use sprung_solve::mech::{
    Breakpoints, MechanicalSystem, PartlyImplicitEuler, RosenbrockStepper, StepError, Tableau,
};
use sprung_solve::ode;

use crate::CompiledModel;
use crate::first_order::FirstOrder;
use crate::pipeline::Evaluator;

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
    /// The partly implicit Euler of document 002 (eqs. 4-9), fixed step, with the element
    /// states' rates of step (a) from where [`StateRates`] says: `pie` evaluates them at the
    /// step start (eq. 7 as written), `pie_lagged` takes the last predictor evaluation's,
    /// carried to the step start to first order ([`StateRates::LaggedCorrected`]).
    Pie(StateRates),
    /// A method of the first-order suite on y = (r, v); `true` = run with a fixed step.
    FirstOrder(ode::Method, bool),
}

impl Route {
    /// Fixed or adaptive stepping (what the grid rules of the settings validation need).
    pub fn step_mode(&self) -> sprung_model::StepMode {
        match self {
            Route::RosenbrockFixed(_) | Route::Rk4 | Route::Pie(_) | Route::FirstOrder(_, true) => {
                sprung_model::StepMode::Fixed
            }
            Route::RosenbrockAdaptive(_) | Route::FirstOrder(_, false) => {
                sprung_model::StepMode::Adaptive
            }
        }
    }

    /// Whether the route takes [`RunSettings::relinearise_stale`] (the Rosenbrock methods and
    /// the adaptive first-order ones; [`check_relinearise_stale`] rejects a level elsewhere).
    pub fn takes_relinearise_stale(&self) -> bool {
        match self {
            Route::Rk4 | Route::Pie(_) | Route::FirstOrder(_, true) => false,
            Route::RosenbrockFixed(_)
            | Route::RosenbrockAdaptive(_)
            | Route::FirstOrder(_, false) => true,
        }
    }
}

/// Checks [`RunSettings::relinearise_stale`] for the run's route: a positive level (not NaN;
/// `inf` = the fixed schedule alone), and only for the fixed-step Rosenbrock methods, whose
/// local error indicator it reads — `pie`, RK4 and the fixed-step first-order methods have none
/// (an error, not silence). Adaptive routes ignore it, as they ignore `relinearise_every`.
pub fn check_relinearise_stale(s: &RunSettings, route: &Route) -> Result<(), RunError> {
    let Some(level) = s.relinearise_stale else {
        return Ok(());
    };
    if level.is_nan() || level <= 0.0 {
        return Err(RunError::Settings(format!(
            "relinearise_stale = {level} must be a positive error-indicator level in m (e.g. 5e-8; inf = the fixed schedule alone)"
        )));
    }
    if route.takes_relinearise_stale() {
        Ok(())
    } else {
        Err(RunError::Settings(format!(
            "relinearise_stale applies to the fixed-step Rosenbrock methods (lsrt2, lie, ros2, ...), whose local error indicator it reads; {} has none: leave relinearise_stale out (use relinearise_every alone)",
            s.method
        )))
    }
}

/// Chooses how `name` runs: `adaptive` = Some(true/false) forces the mode where the method allows
/// it (None: the method's natural mode — adaptive if it has an error estimate).
pub fn route(name: &str, adaptive: Option<bool>) -> Result<Route, RunError> {
    if name == "rk4" {
        if adaptive == Some(true) {
            return Err(RunError::Settings(
                "rk4 (classical Runge-Kutta on the mechanical system) has no error estimate and runs with a fixed step only; drop --rtol/--atol or choose e.g. ode45 or rodas4".into(),
            ));
        }
        return Ok(Route::Rk4);
    }
    let pie = match name {
        "pie" => Some(StateRates::AtStart),
        "pie_lagged" => Some(StateRates::LaggedCorrected),
        _ => None,
    };
    if let Some(rates) = pie {
        if adaptive == Some(true) {
            return Err(RunError::Settings(format!(
                "{name} (partly implicit Euler) has no error estimate and runs with a fixed step only; drop --rtol/--atol or choose e.g. rodas4"
            )));
        }
        return Ok(Route::Pie(rates));
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
    /// Adaptive re-linearisation of the fixed-step Rosenbrock methods (`lsrt2`, …): a step
    /// taken with a lagged Jacobian whose local error indicator exceeds this level (m) makes
    /// the next step re-linearise; `relinearise_every` then bounds the Jacobian's age
    /// ([`RosenbrockStepper::stale_indicator`]). `None`: the fixed schedule alone. Not for
    /// `pie` (no error indicator) or RK4.
    pub relinearise_stale: Option<f64>,
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
    /// Plausibility bounds (module docs); the default derives them from the model.
    pub bounds: Bounds,
}

impl RunSettings {
    /// A run of `method` at the fixed step `step` (s) from 0 to `t_end` (s), output every step,
    /// otherwise the defaults of a model's `[solver]` table: re-linearise every step, no
    /// adaptive level, split steps at breakpoints, rtol 1e-6, atol 1e-9, block-sparse LU, the
    /// method's natural mode, bounds derived from the model. Change fields with the struct
    /// update syntax (`RunSettings { adaptive: Some(true), ..RunSettings::fixed_step(..) }`).
    pub fn fixed_step(method: &str, step: f64, t_end: f64) -> Self {
        Self {
            method: method.into(),
            step,
            t0: 0.0,
            t_end,
            output_interval: step,
            relinearise_every: 1,
            relinearise_stale: None,
            breakpoints: Breakpoints::default(),
            rtol: 1e-6,
            atol: 1e-9,
            linear_solver: LinearSolverKind::BlockSparse,
            adaptive: None,
            bounds: Bounds::default(),
        }
    }
}

/// Factor on the model extent of the default displacement bound (module docs).
pub const DISPLACEMENT_EXTENT_FACTOR: f64 = 10.0;
/// Smallest default displacement bound, m (models of point size, e.g. one mass on a spring).
pub const MIN_DISPLACEMENT_BOUND: f64 = 1.0;
/// Time in which a body at the default velocity bound crosses the displacement bound, s.
pub const VELOCITY_CROSSING_TIME: f64 = 0.01;

/// Plausibility bounds of a run (module docs): `None` = the default derived from the model,
/// `f64::INFINITY` = no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    /// Largest distance of a body's centre of mass from its design position, m.
    pub max_displacement: Option<f64>,
    /// Largest speed of a body's centre of mass, m/s.
    pub max_velocity: Option<f64>,
    /// Largest resultant force on a body (elements, inputs and gravity), N.
    pub max_force: Option<f64>,
}

/// Size of the model, m: the diagonal of the bounding box of the design positions of the bodies'
/// centres of mass, of the ground markers and of the body markers (each body marker as a box of
/// its distance from the body's centre of mass around the design position, which holds it in any
/// orientation).
pub fn model_extent(cm: &CompiledModel) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    let mut add = |p: [f64; 3], radius: f64| {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] - radius);
            hi[k] = hi[k].max(p[k] + radius);
        }
    };
    for b in &cm.bodies {
        add([b.position.x, b.position.y, b.position.z], 0.0);
    }
    for m in &cm.markers {
        match m.body {
            None => add([m.position.x, m.position.y, m.position.z], 0.0),
            Some(i) => {
                let b = &cm.bodies[i].position;
                add([b.x, b.y, b.z], m.position.norm());
            }
        }
    }
    // A revolute joint's point (design pose), `crate::joints`.
    for d in cm.joints.defs.iter().flatten() {
        if d.kind == sprung_model::JointKind::Revolute {
            let p = match d.parent {
                None => d.point,
                Some(p) => {
                    let b = &cm.bodies[p];
                    b.position + crate::rotation::quat_to_matrix(&b.orientation) * d.point
                }
            };
            add([p.x, p.y, p.z], 0.0);
        }
    }
    if lo[0] > hi[0] {
        return 0.0;
    }
    let d: f64 = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum();
    if d.is_finite() { d.sqrt() } else { 0.0 }
}

/// For each body: whether a chain of force elements (built-in or open) connects it to the
/// ground (union-find over the element graph).
pub fn held_bodies(cm: &CompiledModel) -> Vec<bool> {
    let n = cm.bodies.len();
    // Node n is the ground.
    let mut parent: Vec<usize> = (0..=n).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let node = |m: usize| cm.markers[m].body.unwrap_or(n);
    let mut join = |a: usize, b: usize| {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        parent[ra] = rb;
    };
    for e in &cm.elements {
        join(node(e.marker_i), node(e.marker_j));
    }
    for e in &cm.open_elements {
        for w in e.markers.windows(2) {
            join(node(w[0]), node(w[1]));
        }
    }
    // An ideal joint holds its body to its parent (`crate::joints`).
    for d in cm.joints.defs.iter().flatten() {
        join(d.body, d.parent.unwrap_or(n));
    }
    let ground = find(&mut parent, n);
    (0..n).map(|i| find(&mut parent, i) == ground).collect()
}

impl Bounds {
    /// The bounds of a run of `cm`: the given values, the model's defaults for the others.
    pub fn resolve(&self, cm: &CompiledModel) -> Limits {
        let extent = model_extent(cm);
        let default_disp = (DISPLACEMENT_EXTENT_FACTOR * extent).max(MIN_DISPLACEMENT_BOUND);
        let max_displacement = self.max_displacement.unwrap_or(default_disp);
        let max_velocity = self
            .max_velocity
            .unwrap_or(max_displacement / VELOCITY_CROSSING_TIME);
        let heaviest = cm.bodies.iter().map(|b| b.mass).fold(0.0, f64::max);
        let max_force = self
            .max_force
            .unwrap_or(heaviest * max_velocity / VELOCITY_CROSSING_TIME);
        Limits {
            design: cm
                .bodies
                .iter()
                .map(|b| [b.position.x, b.position.y, b.position.z])
                .collect(),
            max_displacement,
            max_velocity,
            bounded: if self.max_displacement.is_some() {
                vec![true; cm.bodies.len()]
            } else {
                held_bodies(cm)
            },
            displacement_default: self.max_displacement.is_none(),
            velocity_default: self.max_velocity.is_none(),
            max_force,
            force_default: self.max_force.is_none(),
            heaviest,
            extent,
        }
    }
}

/// Resolved plausibility bounds of one run ([`Bounds::resolve`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Design position of each body's centre of mass, m.
    pub design: Vec<[f64; 3]>,
    /// Displacement bound, m.
    pub max_displacement: f64,
    /// Whether the displacement bound applies to each body (default bound: the bodies held to
    /// the ground; a set bound: all).
    pub bounded: Vec<bool>,
    /// Velocity bound, m/s.
    pub max_velocity: f64,
    /// Whether the displacement bound is the model's default.
    pub displacement_default: bool,
    /// Whether the velocity bound is the model's default.
    pub velocity_default: bool,
    /// Bound on the resultant force on a body, N.
    pub max_force: f64,
    /// Whether the force bound is the model's default.
    pub force_default: bool,
    /// Mass of the heaviest body, kg (the default force bound comes from it).
    pub heaviest: f64,
    /// The model extent the defaults come from, m.
    pub extent: f64,
}

/// What left the plausible range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Distance of the centre of mass from its design position.
    Displacement,
    /// Speed of the centre of mass.
    Velocity,
    /// Magnitude of the resultant force on the body.
    Force,
}

/// The first body (in model order) whose state is outside the [`Limits`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Violation {
    /// Body index.
    pub body: usize,
    /// Displacement or velocity.
    pub quantity: Quantity,
    /// The value, m or m/s.
    pub value: f64,
    /// The bound, m, m/s or N.
    pub bound: f64,
    /// For a force violation: the built-in element with the largest force on the body at the
    /// state reached, and the magnitude of that force, N ([`Limits::check_state`]).
    pub element: Option<(usize, f64)>,
}

impl Limits {
    /// One pass over the bodies (no allocation): the first body outside the bounds, if any.
    /// Non-finite values are left to the integrators' own checks.
    #[inline]
    pub fn check(&self, r: &[f64], v: &[f64]) -> Option<Violation> {
        self.check_motion(|i| {
            let (p, w) = (&r[7 * i..7 * i + 3], &v[6 * i..6 * i + 3]);
            ([p[0], p[1], p[2]], [w[0], w[1], w[2]])
        })
    }

    /// [`Limits::check`] on each body's centre of mass and its velocity as `body(i)` gives them
    /// (global; a state's blocks, or the evaluator's body table,
    /// [`MbsSystem::check_last_evaluated`]).
    #[inline]
    pub fn check_motion(&self, body: impl Fn(usize) -> ([f64; 3], [f64; 3])) -> Option<Violation> {
        let d2max = self.max_displacement * self.max_displacement;
        let v2max = self.max_velocity * self.max_velocity;
        for (i, p0) in self.design.iter().enumerate() {
            let (p, w) = body(i);
            let d2 = (p[0] - p0[0]).powi(2) + (p[1] - p0[1]).powi(2) + (p[2] - p0[2]).powi(2);
            if d2 > d2max && self.bounded[i] {
                return Some(Violation {
                    body: i,
                    quantity: Quantity::Displacement,
                    value: d2.sqrt(),
                    bound: self.max_displacement,
                    element: None,
                });
            }
            let s2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
            if s2 > v2max {
                return Some(Violation {
                    body: i,
                    quantity: Quantity::Velocity,
                    value: s2.sqrt(),
                    bound: self.max_velocity,
                    element: None,
                });
            }
        }
        None
    }

    /// One pass over the bodies' resultant forces of the last evaluation of `eval` (no
    /// allocation): the first body whose force exceeds the force bound, if any.
    #[inline]
    pub fn check_force(&self, eval: &Evaluator) -> Option<Violation> {
        let f2max = self.max_force * self.max_force;
        (0..self.design.len()).find_map(|i| {
            let f = eval.body_wrench(i).0;
            let f2 = f.norm_squared();
            (f2 > f2max).then(|| Violation {
                body: i,
                quantity: Quantity::Force,
                value: f2.sqrt(),
                bound: self.max_force,
                element: None,
            })
        })
    }

    /// The motion bounds at (r, v) ([`Limits::check`]), then the force bound on the last
    /// evaluation of `eval` ([`Limits::check_force`]); the caller makes sure that evaluation
    /// belongs to the state (module docs). On a force violation (only then) the built-in
    /// elements are evaluated at (t, r, v) and the one with the largest force on the body is
    /// recorded in the violation.
    pub fn check_state(
        &self,
        eval: &mut Evaluator,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Option<Violation> {
        if let Some(x) = self.check(r, v) {
            return Some(x);
        }
        let mut x = self.check_force(eval)?;
        let cm = eval.model().clone();
        let all: Vec<usize> = (0..cm.elements.len()).collect();
        eval.evaluate_elements(t, r, v, &all);
        x.element = cm
            .elements
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                [e.marker_i, e.marker_j]
                    .iter()
                    .any(|&m| cm.markers[m].body == Some(x.body))
            })
            .map(|(k, _)| (k, eval.elements[k].force.norm()))
            .filter(|(_, f)| !f.is_nan())
            .max_by(|a, b| a.1.total_cmp(&b.1));
        Some(x)
    }

    /// The message of a violation at time `t` of a run of `cm`: body, quantity, value, bound
    /// and where the bound comes from and is set.
    pub fn message(&self, cm: &CompiledModel, t: f64, v: &Violation) -> String {
        let body = cm.bodies.get(v.body).map_or("?", |b| b.name.as_str());
        match v.quantity {
            Quantity::Displacement => format!(
                "diverged: body '{body}' left the plausible range at t = {t} s: its centre of mass is {:.4e} m from its design position, above the displacement bound {:.4e} m ({}); reduce the step or choose a stiffer (implicit) solver, or set [solver] max_displacement / --max-displacement if this motion is intended",
                v.value,
                v.bound,
                if self.displacement_default {
                    format!(
                        "default: {DISPLACEMENT_EXTENT_FACTOR} x the model extent {:.3} m, at least {MIN_DISPLACEMENT_BOUND} m",
                        self.extent
                    )
                } else {
                    "as set".to_string()
                }
            ),
            Quantity::Velocity => format!(
                "diverged: body '{body}' left the plausible range at t = {t} s: its centre of mass moves at {:.4e} m/s, above the velocity bound {:.4e} m/s ({}); reduce the step or choose a stiffer (implicit) solver, or set [solver] max_velocity / --max-velocity if this motion is intended",
                v.value,
                v.bound,
                if self.velocity_default {
                    format!(
                        "default: the displacement bound {:.3e} m per {VELOCITY_CROSSING_TIME} s",
                        self.max_displacement
                    )
                } else {
                    "as set".to_string()
                }
            ),
            Quantity::Force => format!(
                "diverged: body '{body}' left the plausible range at t = {t} s: the resultant force on it is {:.4e} N, above the force bound {:.4e} N ({}){}; reduce the step or choose a stiffer (implicit) solver, or set [solver] max_force / --max-force if these forces are intended",
                v.value,
                v.bound,
                if self.force_default {
                    format!(
                        "default: the heaviest body's mass {:.4e} kg x the velocity bound {:.3e} m/s per {VELOCITY_CROSSING_TIME} s",
                        self.heaviest, self.max_velocity
                    )
                } else {
                    "as set".to_string()
                },
                match v.element {
                    Some((e, f)) => format!(
                        "; the largest element force on it is {f:.4e} N from element '{}'",
                        cm.elements.get(e).map_or("?", |e| e.name.as_str())
                    ),
                    None => String::new(),
                }
            ),
        }
    }
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
    /// A body left the plausible range ([`Limits`]); the message names the body, the value, the
    /// bound and the time.
    #[error("{0}")]
    Implausible(String),
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
    /// Wall time spent in integration steps and their checks (curve ranges, plausibility;
    /// excluding the observer), s.
    pub compute_time: f64,
    /// Longest single step, s (fixed-step methods).
    pub worst_step_time: f64,
    /// All step times (with their checks), s (fixed-step methods; for percentiles).
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
    /// The partly implicit Euler of document 002.
    Pie(Box<PartlyImplicitEuler>),
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
        let which = route(&s.method, Some(false))?;
        check_relinearise_stale(s, &which)?;
        match which {
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
                st.stale_indicator = s.relinearise_stale.unwrap_or(f64::INFINITY);
                Ok(Self::Ros(Box::new(st)))
            }
            Route::Pie(rates) => {
                // Its matrix leaves out the speed–state couplings (`iteration_pattern`).
                let lu: Box<dyn LinearSolver + Send> = match s.linear_solver {
                    LinearSolverKind::Dense => Box::new(DenseLu::new(sys.n_v())),
                    LinearSolverKind::BlockSparse => {
                        Box::new(PartlyImplicitEuler::block_sparse_lu(sys))
                    }
                };
                let mut st = PartlyImplicitEuler::new(sys, s.step, s.t0, s.relinearise_every, lu);
                st.breakpoints = s.breakpoints;
                st.state_rates = rates;
                Ok(Self::Pie(Box::new(st)))
            }
            _ => Err(RunError::Settings(format!(
                "{} does not run step by step with a fixed step here; use lsrt2, lie, pie, pie_lagged, ros2, ros3p, ros34pw2, rodas3, rodas4, rodas5p or rk4",
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
        // The segment signature only for a stepper that reacts to breakpoints (RK4 never does).
        match self {
            Self::Ros(st) => {
                sys.set_watch_segments(st.breakpoints != Breakpoints::Ignore);
                st.step(sys, k, r, v)
            }
            Self::Rk4(st) => {
                sys.set_watch_segments(false);
                st.step(sys, k, r, v)
            }
            Self::Pie(st) => {
                sys.set_watch_segments(st.breakpoints != Breakpoints::Ignore);
                st.step(sys, k, r, v)
            }
        }
    }

    /// Work counters.
    pub fn stats(&self) -> Stats {
        match self {
            Self::Ros(st) => st.stats,
            Self::Rk4(st) => st.stats,
            Self::Pie(st) => st.stats,
        }
    }

    /// The step size, s.
    pub fn h(&self) -> f64 {
        match self {
            Self::Ros(st) => st.h,
            Self::Rk4(st) => st.h,
            Self::Pie(st) => st.h,
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
            Self::Pie(st) => st.linearise_at(sys, t, r, v),
            Self::Rk4(_) => Ok(()),
        }
    }

    /// Whether step `k` starts with a re-linearisation (never for RK4).
    pub fn relinearises_at(&self, k: u64) -> bool {
        match self {
            Self::Ros(st) => st.relinearises_at(k),
            Self::Pie(st) => st.relinearises_at(k),
            Self::Rk4(_) => false,
        }
    }

    /// Forces a re-linearisation at the next step.
    pub fn invalidate(&mut self) {
        match self {
            Self::Ros(st) => st.invalidate(),
            Self::Pie(st) => st.invalidate(),
            Self::Rk4(_) => {}
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
    limits: &Limits,
) -> Result<(), RunError> {
    let nr = r.len();
    let mut y0 = r.to_vec();
    y0.extend_from_slice(v);
    let mut fo = FirstOrder::new(sys.clone());
    let mut obs_time = 0.0;
    let mut last_t = s.t0;
    let curves = sys.model().clone();
    let mut curve_t = None;
    let mut implausible = None;
    let mut last = y0.clone();
    // Bodies on ideal joints: the bounds read the expanded poses (`crate::joints`).
    let mut expansion = crate::joints::Expansion::new(sys.model());
    let start = Instant::now();
    sprung_model::reset_out_of_range();
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
                let (rf, vf) = expansion.apply(&curves.joints, &y[..nr], &y[nr..]);
                if let Some(x) = limits.check(rf, vf) {
                    implausible = Some(limits.message(&curves, t, &x));
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
    if let Some(m) = implausible {
        summary.stats = Stats {
            steps: sol.stats.steps as u64,
            ..Default::default()
        };
        return Err(RunError::Implausible(m));
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
            error_splits: 0,
            stale_relinearisations: 0,
            state_rate_evals: 0,
        },
        compute_time: compute,
        ..Default::default()
    };
    Ok(())
}

/// The linear solver of the fixed-step Rosenbrock stepper. Block-sparse: for a system with
/// inert coordinates ([`MechanicalSystem::inert_velocity_slots`], a model with joints) the
/// explicit inverse of the active part ([`CompactInverse`]) where its solve takes fewer
/// operations than the block LU's (the kinematic reduced car: 42 active of 204 coordinates).
fn linear_solver(sys: &MbsSystem, kind: LinearSolverKind) -> Box<dyn LinearSolver + Send> {
    match kind {
        LinearSolverKind::Dense => Box::new(DenseLu::new(sys.n_v())),
        LinearSolverKind::BlockSparse => {
            let pattern = sys.pattern();
            let lu = BlockSparseLu::new(&pattern);
            if let Some(inert) = sys.inert_velocity_slots() {
                let set = ActiveSet::new(pattern, &inert);
                if set.dense_solve_flops() < lu.solve_flops() {
                    return Box::new(CompactInverse::new(set));
                }
            }
            Box::new(lu)
        }
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
    let limits = s.bounds.resolve(sys.model());
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
            let mut implausible = None;
            let mut expansion = crate::joints::Expansion::new(&curves);
            sprung_model::reset_out_of_range();
            let res = integ.integrate(sys, s.t0, s.t_end, r, v, &times, &mut |t, r, v| {
                if sprung_model::any_out_of_range(&curves.curves) {
                    curve_t = Some(t);
                    return Control::Stop;
                }
                let (rf, vf) = expansion.apply(&curves.joints, r, v);
                if let Some(x) = limits.check(rf, vf) {
                    implausible = Some(limits.message(&curves, t, &x));
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
            if let Some(m) = implausible {
                summary.stopped_by_observer = false;
                return Err(RunError::Implausible(m));
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
                &limits,
            );
        }
        Route::Rk4 | Route::Pie(_) | Route::RosenbrockFixed(_) => FixedStepper::new(sys, s)?,
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
        // Curve-range records are per thread (`sprung_model::OutOfRangeFlag`): this step's only.
        sprung_model::reset_out_of_range();
        let t = s.t0 + (k + 1) as f64 * s.step;
        // The step and its checks, timed together (a real-time loop runs the checks too).
        let res = stepper
            .step(sys, k, r, v)
            .map_err(RunError::from)
            .and_then(|()| {
                if sprung_model::any_out_of_range(&sys.model().curves) {
                    return Err(RunError::CurveOutOfRange { t });
                }
                // The state and forces checked are those of the step's last evaluation with
                // joints (module docs, [`MbsSystem::check_last_evaluated`]).
                match sys.check_last_evaluated(&limits, t, r, v) {
                    Some(x) => Err(RunError::Implausible(limits.message(sys.model(), t, &x))),
                    None => Ok(()),
                }
            });
        let dt = start.elapsed().as_secs_f64();
        summary.compute_time += dt;
        summary.worst_step_time = summary.worst_step_time.max(dt);
        if (summary.step_times.len() as u64) < MAX_TIMED_STEPS {
            summary.step_times.push(dt);
        }
        summary.stats = stepper.stats();
        res?;
        summary.t_reached = t;
        if (k + 1) % out_every == 0 && observer(t, r, v) == Control::Stop {
            summary.stopped_by_observer = true;
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod route_tests {
    use super::*;

    /// `pie` and `pie_lagged` are the same fixed-step method with the two sources of the state
    /// rates; neither runs adaptively (no error estimate), and the error names the method.
    #[test]
    fn pie_names_choose_the_state_rates() {
        assert!(matches!(
            route("pie", None),
            Ok(Route::Pie(StateRates::AtStart))
        ));
        assert!(matches!(
            route("pie_lagged", Some(false)),
            Ok(Route::Pie(StateRates::LaggedCorrected))
        ));
        match route("pie_lagged", Some(true)) {
            Err(RunError::Settings(m)) => assert!(m.starts_with("pie_lagged"), "{m}"),
            other => panic!("adaptive pie_lagged accepted: {other:?}"),
        }
    }
}
