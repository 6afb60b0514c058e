//! General first-order ODE solver suite `y' = f(t, y)` and `M(t, y) y' = f(t, y)` (source
//! document 001, the MATLAB/Simulink solver course text, Tabelle 1,
//! `../shared/seeds/001_e61a2f17b5c7d9dc.txt`, plus the Rosenbrock family of `integrators.md`).
//!
//! # Overview
//!
//! * [`OdeSystem`] is the problem interface (right-hand side, optional analytic Jacobian and
//!   time derivative, projection after accepted steps); [`FnSystem`] adapts a closure,
//!   [`FnJacSystem`] a closure with its Jacobian. The matrix types are `faer`'s, re-exported
//!   here ([`Mat`], [`MatMut`], [`MatRef`], [`faer`]).
//! * [`solve`] integrates with any [`Method`] from `t0` to `t_end` under [`Options`] and returns
//!   a [`Solution`] (output times, states, [`Stats`]) or an [`OdeError`]; [`solve_detailed`]
//!   returns a [`Failure`] with the statistics and the solution so far instead.
//! * Mass matrices and index-1 DAEs: [`Options::mass`] with MATLAB's option semantics
//!   ([`Mass`], [`MStateDependence`], [`MassSingular`]); which methods accept which kind is
//!   listed at [`Mass`], the formulas in `docs/dae.md`.
//! * Step-size control: standard or predictive (Gustafsson) controller, [`StepController`].
//! * [`catalogue()`] lists every method with order, kind, step control and stiffness suitability;
//!   [`Method::from_name`] parses the names printed there (MATLAB names where one exists).
//! * [`problems`] holds smooth problems with analytic solutions and the stiff reference problems
//!   HIRES, Van der Pol and ROBER with the published reference values (Test Set for IVP Solvers).
//! * [`tableau`] holds the coefficient tables and their order-condition checks.
//!
//! # Error control (document 001, eq. 14)
//!
//! All adaptive methods measure a local error estimate `e` component-wise against
//! `err_i = max(rtol·|y_i|, atol_i)` (eq. 14, with `|y_i|` the larger of the magnitudes at the
//! start and end of the step) and accept a step when `max_i |e_i| / err_i <= 1`; a single
//! component exceeding its allowance rejects the step, as described in the document. `atol` is a
//! scalar or one value per component ([`Tolerance`]). Which estimate each method uses, and that
//! only `radau5` transforms the tolerances (RADAU5's `0.1·rtol^(2/3)`, switchable with
//! [`RadauTolerances`]), is documented on each [`Method`] variant; `docs/solvers.md` lists the
//! achieved global error per requested tolerance for every method.
//!
//! # Breakpoints (`tstops`)
//!
//! The interval is split at every `tstops` entry. Each piece is integrated separately: the solver
//! lands exactly on the breakpoint, discards any multistep history and re-evaluates `f` there.
//! Within a piece `[a, b]` the right-hand side is never evaluated at `t >= b`: a stage placed at
//! `b` itself is evaluated at the largest float below `b` (the left limit), so an input that
//! switches at `b` does not leak into the piece before it.
//!
//! # Fixed step vs. variable step
//!
//! Setting [`Options::step`] runs any one-step method with a constant step (the last step before a
//! breakpoint or `t_end` is shortened to land exactly; after a breakpoint the grid restarts there). Adaptive one-step methods then ignore
//! their error estimate; this is how the convergence tests verify their orders. The multistep
//! methods `ode15s` and `ode113` are variable-step only.

// Index-heavy numerical kernels over several parallel arrays read best with explicit indices;
// published coefficients are reproduced with the digits printed in the sources.
#![allow(
    clippy::needless_range_loop,
    clippy::excessive_precision,
    clippy::too_many_arguments
)]

mod adams;
mod catalogue;
mod core;
mod explicit;
mod extrap;
mod ndf;
mod onestep;
pub mod problems;
mod radau;
mod rosenbrock;
pub mod tableau;
mod trbdf2;

use thiserror::Error;

/// The linear-algebra crate of the public API (Jacobians and mass matrices are `faer` matrices),
/// re-exported so that users need not add `faer` themselves.
pub use faer;
pub use faer::{Mat, MatMut, MatRef};

pub use catalogue::{MethodInfo, MethodKind, StepControl, catalogue};

/// A first-order system `y' = f(t, y)` of fixed dimension.
pub trait OdeSystem {
    /// Number of states.
    fn dim(&self) -> usize;
    /// Evaluates the right-hand side `dy = f(t, y)`.
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]);
    /// Writes the analytic Jacobian `∂f/∂y` (dim × dim) into `jac` and returns `true`; the default
    /// returns `false`, in which case a forward-difference Jacobian is used (increment
    /// `sqrt(eps · max(|y_j|, 1e-5))` per component).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: MatMut<'_, f64>) -> bool {
        let _ = (t, y, jac);
        false
    }
    /// Writes `∂f/∂t` into `dfdt` and returns `true`; the default returns `false`, in which case a
    /// one-sided difference is used (Rosenbrock methods need it for non-autonomous problems).
    /// Autonomous systems can write zeros and return `true` to save one evaluation per Jacobian.
    fn time_derivative(&mut self, t: f64, y: &[f64], dfdt: &mut [f64]) -> bool {
        let _ = (t, y, dfdt);
        false
    }
    /// Projection applied to the state after every accepted step (e.g. re-normalising
    /// quaternions). Default: no-op.
    fn project(&mut self, y: &mut [f64]) {
        let _ = y;
    }
}

/// Closure adapter: `FnSystem::new(dim, |t, y, dy| ...)` is an [`OdeSystem`] without Jacobian.
pub struct FnSystem<F> {
    dim: usize,
    f: F,
}

impl<F: FnMut(f64, &[f64], &mut [f64])> FnSystem<F> {
    /// Wraps the right-hand side `f(t, y, dy)` of a system with `dim` states.
    pub fn new(dim: usize, f: F) -> Self {
        Self { dim, f }
    }
}

impl<F: FnMut(f64, &[f64], &mut [f64])> OdeSystem for FnSystem<F> {
    fn dim(&self) -> usize {
        self.dim
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        (self.f)(t, y, dy)
    }
}

/// Closure adapter with an analytic Jacobian:
/// `FnJacSystem::new(dim, |t, y, dy| ..., |t, y, jac| ...)`, where the second closure writes
/// `∂f/∂y` (dim × dim) into `jac`.
///
/// ```
/// use sprung_solve::ode::{self, FnJacSystem, Method, Options};
/// // y' = -1000 (y - cos t), stiff; the Jacobian is -1000
/// let mut sys = FnJacSystem::new(
///     1,
///     |t: f64, y: &[f64], dy: &mut [f64]| dy[0] = -1000.0 * (y[0] - t.cos()),
///     |_t: f64, _y: &[f64], mut j: ode::MatMut<'_, f64>| j[(0, 0)] = -1000.0,
/// );
/// let sol = ode::solve(Method::Rodas4, &mut sys, 0.0, &[1.0], 1.0, Options::default()).unwrap();
/// assert!((sol.y_final[0] - 1f64.cos()).abs() < 1e-2);
/// ```
pub struct FnJacSystem<F, J> {
    dim: usize,
    f: F,
    jac: J,
}

impl<F, J> FnJacSystem<F, J>
where
    F: FnMut(f64, &[f64], &mut [f64]),
    J: FnMut(f64, &[f64], MatMut<'_, f64>),
{
    /// Wraps the right-hand side `f(t, y, dy)` and its Jacobian `jac(t, y, J)`.
    pub fn new(dim: usize, f: F, jac: J) -> Self {
        Self { dim, f, jac }
    }
}

impl<F, J> OdeSystem for FnJacSystem<F, J>
where
    F: FnMut(f64, &[f64], &mut [f64]),
    J: FnMut(f64, &[f64], MatMut<'_, f64>),
{
    fn dim(&self) -> usize {
        self.dim
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        (self.f)(t, y, dy)
    }
    fn jacobian(&mut self, t: f64, y: &[f64], jac: MatMut<'_, f64>) -> bool {
        (self.jac)(t, y, jac);
        true
    }
}

/// Answer of the observer callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep integrating.
    Continue,
    /// Stop now; [`solve`] returns the solution so far with [`Solution::stopped`] set.
    Stop,
}

/// Absolute tolerance: one value for all components or one per component.
#[derive(Clone, Debug, PartialEq)]
pub enum Tolerance {
    /// Same absolute tolerance for every component.
    Scalar(f64),
    /// One absolute tolerance per component (length must equal the dimension).
    PerComponent(Vec<f64>),
}

/// Observer callback: called with `(t, y)` at every output time.
pub type Observer<'a> = Box<dyn FnMut(f64, &[f64]) -> Control + 'a>;

/// Mass-matrix function `M(t, y)`: writes the `dim × dim` matrix into the third argument.
pub type MassFn<'a> = Box<dyn FnMut(f64, &[f64], MatMut<'_, f64>) + 'a>;

/// Mass matrix of `M(t, y) y' = f(t, y)` (MATLAB's `odeset('Mass', ...)`).
///
/// Which methods accept which kind (the same restrictions as MATLAB's suite and Hairer's codes):
///
/// | method | constant `M` | `M(t)`, `M(t, y)` | singular `M` (index-1 DAE) |
/// |---|---|---|---|
/// | `ode15s`, `ode23t`, `radau5` | yes | yes | yes |
/// | `ode23tb` | yes | yes | no (as MATLAB) |
/// | `rodas4`, `rodas5p`, `rodas3`, `ros3p`, `ros34pw2`, `ros2`, `lsrt2`, `lie` | yes | no | yes |
/// | `ode23s` | yes | no | no (MATLAB: "ode23s cannot solve DAEs") |
/// | every other method | no | no | no |
///
/// An unsupported combination returns [`OdeError::InvalidInput`] naming the methods that accept
/// it. See `docs/dae.md` for the formulas.
pub enum Mass<'a> {
    /// Constant matrix (`dim × dim`).
    Constant(Mat<f64>),
    /// Matrix function `M(t, y)`; how it depends on `y` is given by
    /// [`Options::m_state_dependence`].
    Function(MassFn<'a>),
}

/// MATLAB's `MStateDependence`: how a [`Mass::Function`] depends on `y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MStateDependence {
    /// `M(t)` only (MATLAB `'none'`): evaluated once per step attempt.
    None,
    /// `M(t, y)` with weak dependence (MATLAB `'weak'`, the default): `M` is re-evaluated at
    /// every Newton iterate, the iteration matrix uses `M` frozen at the Jacobian's point.
    #[default]
    Weak,
    /// `M(t, y)` with strong dependence (MATLAB `'strong'`). Accepted and treated as
    /// [`MStateDependence::Weak`]: the iteration matrix omits `∂(M(t,y) v)/∂y`; the simplified
    /// Newton iteration converges more slowly (more Jacobian refreshes), not to another solution.
    Strong,
}

/// MATLAB's `MassSingular`: whether `M` is singular (a DAE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MassSingular {
    /// `M` is singular: the initial state is made consistent (see [`Options::mass`]).
    Yes,
    /// `M` is nonsingular; no consistency check.
    No,
    /// Decide from the singular values of `M(t0, y0)` (MATLAB's default `'maybe'`): singular when
    /// the smallest is below `n · 1e3 · eps` times the largest.
    #[default]
    Maybe,
}

/// Step-size controller of the adaptive one-step methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StepController {
    /// Predictive for `radau5` and the Rosenbrock family (`rodas*`, `ros*`), standard for all
    /// others (the choice of Hairer's RADAU5/RODAS and MATLAB's suite).
    #[default]
    Auto,
    /// Standard (asymptotic) controller: `h_new = h · min(f_max, max(f_min, s · err^(-1/(q+1))))`.
    Standard,
    /// Predictive controller of Gustafsson (Hairer & Wanner II, IV.8, eq. (8.21)), as in
    /// RADAU5 and RODAS: after an accepted step the factor is the smaller of the standard one and
    /// `s · (h_n/h_{n-1}) · (err_{n-1}/err_n²)^(1/(q+1))` (with `err_{n-1} ≥ 0.01`).
    /// Ignored by methods without a one-step error estimate (`ode15s`, `ode113`, fixed step).
    Predictive,
}

/// How `radau5` uses `rtol`/`atol` (see [`Method::Radau5`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RadauTolerances {
    /// RADAU5's transformation (Hairer & Wanner's code, the default): the error test and the
    /// Newton stopping criterion use `rtol' = 0.1·rtol^(2/3)` and `atol' = atol·rtol'/rtol`, so
    /// that the achieved global error is roughly proportional to `rtol` (the estimate is only of
    /// order 3 for a method of order 5). Tighter than given for `rtol > 1e-3`, looser for
    /// `rtol < 1e-3` (1e-4 -> 2.2e-4, 1e-7 -> 2.2e-6, 1e-10 -> 4.6e-8).
    #[default]
    Hairer,
    /// The user's `rtol`/`atol` as every other method uses them (document 001, eq. 14).
    AsGiven,
}

/// Solver options. `Options::default()` gives MATLAB's defaults (`rtol = 1e-3`, `atol = 1e-6`).
pub struct Options<'a> {
    /// Fixed step size. Required for fixed-step-only methods; for adaptive one-step methods it
    /// switches error control off (then `rtol`/`atol` only set the accuracy of the Newton
    /// iterations of implicit methods). Not supported by `ode15s` / `ode113`.
    pub step: Option<f64>,
    /// Relative tolerance (document 001, eq. 14); must lie in (0, 1), values below 100·eps are
    /// raised to 100·eps.
    pub rtol: f64,
    /// Absolute tolerance (document 001, eq. 14).
    pub atol: Tolerance,
    /// Maximum number of step attempts (accepted + rejected) before [`OdeError::MaxSteps`].
    pub max_steps: usize,
    /// Initial step for adaptive methods; `None` selects it automatically.
    pub initial_step: Option<f64>,
    /// Maximum step for adaptive methods; `None` means a tenth of the interval (MATLAB default).
    pub max_step: Option<f64>,
    /// Output times (dense output). `None`: every accepted step is an output point.
    /// Must lie in `[t0, t_end]`; they are sorted internally.
    pub output_times: Option<Vec<f64>>,
    /// Breakpoints where the input is discontinuous: the solver lands exactly on each and
    /// restarts there. Entries outside `(t0, t_end)` are ignored.
    pub tstops: Vec<f64>,
    /// Called at every output time with `(t, y)`; returning [`Control::Stop`] ends the run.
    pub observer: Option<Observer<'a>>,
    /// Store output points in the [`Solution`] (default true). Switch off for long runs that only
    /// use the observer.
    pub record: bool,
    /// Mass matrix: solve `M(t, y) y' = f(t, y)` (MATLAB option `Mass`); `None` means `M = I`.
    ///
    /// With a singular `M` (an index-1 DAE, see [`Options::mass_singular`]) the initial state is
    /// made consistent before the first step, as MATLAB's ode15s does: the components in the range
    /// of `M`'s right singular vectors with nonzero singular value ("differential" part) are kept,
    /// the others are corrected by Newton's method until the algebraic equations
    /// `U₂ᵀ f(t0, y) = 0` (`U₂` = left null space of `M(t0, y0)`) hold to `1e-3·rtol` in the
    /// error norm; the initial slope then solves `U₁ᵀ M y' = U₁ᵀ f`, `U₂ᵀ (J y' + f_t) = 0`.
    /// The corrected state is the first output point. Error control applies to all components
    /// (as in MATLAB and RADAU5, index-1 variables need no scaling).
    pub mass: Option<Mass<'a>>,
    /// MATLAB option `MStateDependence` for [`Mass::Function`] (default `Weak`).
    pub m_state_dependence: MStateDependence,
    /// MATLAB option `MassSingular` (default `Maybe`).
    pub mass_singular: MassSingular,
    /// Step-size controller (default [`StepController::Auto`]).
    pub controller: StepController,
    /// Tolerance semantics of `radau5` (default [`RadauTolerances::Hairer`]); ignored by the
    /// other methods.
    pub radau_tolerances: RadauTolerances,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Self {
            step: None,
            rtol: 1e-3,
            atol: Tolerance::Scalar(1e-6),
            max_steps: 1_000_000,
            initial_step: None,
            max_step: None,
            output_times: None,
            tstops: Vec::new(),
            observer: None,
            record: true,
            mass: None,
            m_state_dependence: MStateDependence::Weak,
            mass_singular: MassSingular::Maybe,
            controller: StepController::Auto,
            radau_tolerances: RadauTolerances::Hairer,
        }
    }
}

/// Work statistics of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected step attempts (error test or Newton failure).
    pub rejected: usize,
    /// Right-hand-side evaluations (including those for difference Jacobians).
    pub f_evals: usize,
    /// Jacobian evaluations (analytic or by differences).
    pub jac_evals: usize,
    /// LU factorisations.
    pub lu_factorisations: usize,
    /// Linear solves with an LU factorisation.
    pub lu_solves: usize,
    /// ode23t only: accepted steps in which ringing of stiff components (the trapezoidal rule's
    /// `R(∞) = -1`) larger than the tolerance was detected and removed (see `docs/solvers.md`);
    /// 0 for every other method.
    pub ringing_damped: usize,
}

/// Result of [`solve`].
#[derive(Clone, Debug)]
pub struct Solution {
    /// Output times.
    pub t: Vec<f64>,
    /// States at the output times, row after row (`dim` values per time).
    pub y: Vec<f64>,
    /// Dimension of the system.
    pub dim: usize,
    /// Final time reached (equals `t_end` unless stopped by the observer).
    pub t_final: f64,
    /// Final state.
    pub y_final: Vec<f64>,
    /// True when the observer returned [`Control::Stop`].
    pub stopped: bool,
    /// Work statistics.
    pub stats: Stats,
}

impl Solution {
    /// Number of stored output points.
    pub fn len(&self) -> usize {
        self.t.len()
    }
    /// True when no output point was stored.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
    /// State at output point `i` (panics when `i >= len()`).
    pub fn state(&self, i: usize) -> &[f64] {
        &self.y[i * self.dim..(i + 1) * self.dim]
    }
}

/// Errors of the ODE suite; each names what went wrong and how to fix it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum OdeError {
    /// Unknown method name.
    #[error("unknown ODE method '{name}'; valid names: {valid}")]
    UnknownMethod {
        /// The name given.
        name: String,
        /// Comma-separated list of valid names.
        valid: String,
    },
    /// Invalid input or options.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The state or right-hand side became NaN/Inf.
    #[error(
        "non-finite state or derivative at t = {t}: the solution blew up (unstable method for this step size, singular model, or a bug in f); try a smaller step, tighter tolerances, or a stiff solver"
    )]
    NonFinite {
        /// Time at which it happened.
        t: f64,
    },
    /// The step size fell below the resolution of `t`.
    #[error(
        "step size underflow at t = {t} (h = {h:e}): the problem may be singular or discontinuous there; add a tstop at the discontinuity or use a stiff solver"
    )]
    StepSizeUnderflow {
        /// Time at which it happened.
        t: f64,
        /// Step size that was too small.
        h: f64,
    },
    /// Too many steps.
    #[error(
        "maximum number of steps ({max}) reached at t = {t}; raise max_steps or loosen tolerances"
    )]
    MaxSteps {
        /// Time reached.
        t: f64,
        /// The limit.
        max: usize,
    },
    /// An iteration matrix was singular.
    #[error(
        "singular iteration matrix at t = {t} (h = {h:e}); the Jacobian may be wrong or the step too large"
    )]
    Singular {
        /// Time at which it happened.
        t: f64,
        /// Step size.
        h: f64,
    },
    /// Newton iteration failed in fixed-step mode.
    #[error(
        "Newton iteration did not converge at t = {t} with fixed step h = {h:e}; use a smaller step or an adaptive method"
    )]
    NewtonFailure {
        /// Time at which it happened.
        t: f64,
        /// Step size.
        h: f64,
    },
    /// No consistent initial state of a DAE (singular mass matrix) was found.
    #[error(
        "inconsistent initial state of the DAE at t = {t}: Newton on the algebraic equations did not converge (residual {residual:e}); give a better y0 or check that the DAE has index 1 (U2' J V2 nonsingular)"
    )]
    InconsistentInitialState {
        /// Initial time.
        t: f64,
        /// Remaining scaled residual of the algebraic equations.
        residual: f64,
    },
}

/// A failed run of [`solve_detailed`]: the error together with the statistics and the solution up
/// to the last accepted step (`solution.t_final`, `solution.y_final`; the output points produced
/// before the failure are stored when [`Options::record`] is set).
#[derive(Clone, Debug)]
pub struct Failure {
    /// What went wrong.
    pub error: OdeError,
    /// Everything computed before the failure.
    pub solution: Solution,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (after {} steps, {} rejected, reached t = {})",
            self.error,
            self.solution.stats.steps,
            self.solution.stats.rejected,
            self.solution.t_final
        )
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Solver method. Parameterised variants carry their settings; [`Method::from_name`] gives the
/// defaults.
///
/// # How `rtol` and `atol` are used
///
/// Every adaptive method accepts a step when its local error estimate `e` satisfies
/// `max_i |e_i| / max(rtol·max(|y0_i|, |y1_i|), atol_i) <= 1` (document 001, eq. 14;
/// `../shared/seeds/001_e61a2f17b5c7d9dc.txt`). The variants below say which estimate `e` is and
/// whether the tolerances are transformed. The tolerances bound the *local* error per step; the
/// global error that results is measured per method in `docs/solvers.md` ("achieved error /
/// requested tolerance"). Fixed-step methods ignore `rtol`/`atol` except where stated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Explicit Euler, order 1, fixed step. `rtol`/`atol` unused.
    Ode1,
    /// Heun, order 2, fixed step. `rtol`/`atol` unused.
    Ode2,
    /// Bogacki–Shampine, order 3, fixed step. `rtol`/`atol` unused.
    Ode3,
    /// Classical Runge–Kutta, order 4, fixed step. `rtol`/`atol` unused.
    Ode4,
    /// Dormand–Prince, order 5, fixed step. `rtol`/`atol` unused.
    Ode5,
    /// Dormand–Prince RK8(7)13M, order 8, fixed step. `rtol`/`atol` unused.
    Ode8,
    /// Implicit Euler with `newton_iters` Newton iterations and extrapolation of order
    /// `extrapolation_order` (1..=4) over the harmonic sub-step sequence 1, 2, 3, 4; fixed step.
    /// `rtol`/`atol` unused (a fixed number of Newton iterations).
    Ode14x {
        /// Newton iterations per implicit Euler sub-step (1 = linear-implicit Euler).
        newton_iters: usize,
        /// Extrapolation order 1..=4 (number of sub-step sequences combined).
        extrapolation_order: usize,
    },
    /// Dormand–Prince 5(4), adaptive. `e` = difference of the 5th- and 4th-order solutions
    /// (the 5th-order one is propagated), tolerances as given.
    Ode45,
    /// Bogacki–Shampine 3(2), adaptive. `e` = difference of the 3rd- and 2nd-order solutions,
    /// tolerances as given.
    Ode23,
    /// Variable-order (1..=12) Adams–Bashforth–Moulton PECE, adaptive. `e` = the last term of the
    /// corrector's Newton form (the order-k difference term), tolerances as given.
    Ode113,
    /// Variable-order NDF (or BDF) orders 1..=`max_order` (≤ 5), adaptive. `e` =
    /// `(κγ_k + 1/(k+1))·(y_{n+1} - y⁽⁰⁾)` (corrector minus predictor, Shampine & Reichelt),
    /// tolerances as given; the Newton iteration stops at an estimated error of 0.5 in the same
    /// norm (rate-based, at most 4 iterations).
    Ode15s {
        /// Highest order used (1..=5).
        max_order: usize,
        /// Use plain BDF (κ = 0) instead of NDF.
        bdf: bool,
    },
    /// Modified Rosenbrock 2(3) (Shampine–Reichelt), adaptive. `e = (h/6)(k1 - 2k2 + k3)`,
    /// tolerances as given.
    Ode23s,
    /// Trapezoidal rule, adaptive. `e = -(h³/12) y‴` from the last four states, filtered twice
    /// by `(M - (h/2)J)⁻¹` (which removes the error of stiff components), tolerances as given;
    /// ringing of stiff components above the tolerance is removed and counted in
    /// [`Stats::ringing_damped`]. Newton stops at 0.5 of the tolerance.
    Ode23t,
    /// TR-BDF2, adaptive. `e = h Σ (b_i - b̂_i) f_i` (unfiltered; filtered once on the step after
    /// a projection), tolerances as given; Newton stops at 0.05 of the tolerance.
    Ode23tb,
    /// LSRT2 linear-implicit Runge–Kutta (Bursi et al.), order 2, fixed step. `rtol`/`atol`
    /// unused.
    Lsrt2,
    /// Linear-implicit Euler, order 1, fixed step. `rtol`/`atol` unused.
    Lie,
    /// ROS2 (Verwer), order 2(1). Rosenbrock family: `e = Σ (m_i - m̂_i) u_i` (propagated minus
    /// embedded solution), tolerances as given; no Newton iteration.
    Ros2,
    /// ROS3P (Lang & Verwer), order 3(2). Tolerances as for [`Method::Ros2`].
    Ros3p,
    /// ROS34PW2 (Rang & Angermann), order 3(2), W-method. Tolerances as for [`Method::Ros2`].
    Ros34pw2,
    /// RODAS3 (Sandu et al.), order 3(2). Tolerances as for [`Method::Ros2`].
    Rodas3,
    /// RODAS4 (Hairer & Wanner), order 4(3). Tolerances as for [`Method::Ros2`].
    Rodas4,
    /// Rodas5P (Steinebach), order 5(4). Tolerances as for [`Method::Ros2`].
    Rodas5p,
    /// Radau IIA, 3 stages, order 5, simplified Newton. `e` = RADAU5's estimate
    /// `(γ₀/h M - J)⁻¹ (f0 + M Σ e_i z_i / h)` (order 3). By default the tolerances are
    /// transformed as in RADAU5, `rtol' = 0.1·rtol^(2/3)`, `atol' = atol·rtol'/rtol`, for the
    /// error test and the Newton stopping criterion ([`RadauTolerances::Hairer`]); with
    /// [`Options::radau_tolerances`] = [`RadauTolerances::AsGiven`] they are used as given, like
    /// every other method.
    Radau5,
}

/// Integrates `y' = f(t, y)` from `t0` (state `y0`) to `t_end` with `method`.
///
/// Output points are given to the observer as they are produced; when an error occurs, every
/// output point before it has already been given to the observer.
pub fn solve(
    method: Method,
    system: &mut dyn OdeSystem,
    t0: f64,
    y0: &[f64],
    t_end: f64,
    options: Options<'_>,
) -> Result<Solution, OdeError> {
    core::run(method, system, t0, y0, t_end, options).map_err(|f| f.error)
}

/// Like [`solve`], but a failed run returns a (boxed) [`Failure`] that keeps the statistics and
/// the solution so far together with the error (for diagnosis or to restart from `t_final`).
///
/// ```
/// use sprung_solve::ode::{self, FnSystem, Method, Options};
/// // y' = y², y(0) = 1 blows up at t = 1
/// let mut sys = FnSystem::new(1, |_t: f64, y: &[f64], dy: &mut [f64]| dy[0] = y[0] * y[0]);
/// let fail = ode::solve_detailed(Method::Ode45, &mut sys, 0.0, &[1.0], 2.0, Options::default())
///     .unwrap_err();
/// assert!(fail.solution.t_final > 0.99 && fail.solution.t_final < 1.0);
/// assert!(fail.solution.stats.steps > 10);
/// ```
pub fn solve_detailed(
    method: Method,
    system: &mut dyn OdeSystem,
    t0: f64,
    y0: &[f64],
    t_end: f64,
    options: Options<'_>,
) -> Result<Solution, Box<Failure>> {
    core::run(method, system, t0, y0, t_end, options)
}
