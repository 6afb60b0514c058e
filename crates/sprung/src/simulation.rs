//! [`Simulation`]: one run of a shared [`Model`] — the data half of the model/data split
//! (`../shared/design/architecture.md`): time, positions r, velocities v with the element states
//! after the body velocities, runtime input values, and the workspaces of the evaluator and the
//! integrator. Any number of simulations may run on one `Arc<Model>`, each in its own thread.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sprung_mbs::MbsSystem;
use sprung_mbs::equilibrium::{self, EquilibriumOptions};
use sprung_mbs::modes::{Modes, try_modal_analysis};
use sprung_mbs::simulate::{self, FixedStepper, Limits, RunSettings, RunSummary};
use sprung_model::InitialStateKind;
use sprung_solve::mech::adaptive::Control;
use sprung_solve::mech::rosenbrock::Stats;

use crate::{Error, Model};

/// Models up to this many velocity-level coordinates find their static equilibrium with the
/// dense LU (microseconds for an axle, and the reference path); larger ones with the block-sparse
/// LU (memory linear in the size).
pub const DENSE_EQUILIBRIUM_MAX_DOF: usize = 600;

/// An input addressed by name or by index (see [`Simulation::set_input`]).
pub trait InputRef {
    /// The input's index in `model`, or an error listing the inputs.
    fn resolve(&self, model: &Model) -> Result<usize, Error>;
}

impl InputRef for usize {
    fn resolve(&self, model: &Model) -> Result<usize, Error> {
        let n = model.compiled().inputs.len();
        if *self < n {
            Ok(*self)
        } else {
            Err(Error::Input(format!(
                "input index {self} is out of range: the model has {n} inputs ({})",
                model.input_names().join(", ")
            )))
        }
    }
}

impl InputRef for &str {
    fn resolve(&self, model: &Model) -> Result<usize, Error> {
        model.compiled().input_index(self).ok_or_else(|| {
            Error::Input(format!(
                "unknown input '{self}'; the model's inputs are: {}",
                model.input_names().join(", ")
            ))
        })
    }
}

/// A serialisable snapshot of a simulation's state ([`Simulation::state`]): restoring it with
/// [`Simulation::set_state`] and stepping on gives bit for bit the results of not stopping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Name of the model it belongs to.
    pub model: String,
    /// Start time of the run, s.
    pub t0: f64,
    /// Fixed steps taken since t0 (time = t0 + steps · h).
    pub steps: u64,
    /// Positions (7 per body: x, y, z, quaternion w, x, y, z).
    pub r: Vec<f64>,
    /// Velocities (6 per body), then the element states in 6-wide blocks.
    pub v: Vec<f64>,
    /// Values of the runtime inputs (all inputs in index order; entries of time-signal inputs
    /// are ignored).
    pub runtime_inputs: Vec<f64>,
    /// Algebraic variables of each open element (warm starts).
    pub algebraic: Vec<Vec<f64>>,
    /// Where the integrator last re-linearised (for methods that keep a linearisation over
    /// several steps); `None` if it re-linearises at the next step anyway.
    pub linearisation: Option<LinearisationPoint>,
}

/// The state at which the integrator's current linearisation was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearisationPoint {
    /// Time, s.
    pub t: f64,
    /// Positions.
    pub r: Vec<f64>,
    /// Velocities and element states.
    pub v: Vec<f64>,
    /// Runtime input values.
    pub runtime_inputs: Vec<f64>,
    /// Algebraic variables of each open element.
    pub algebraic: Vec<Vec<f64>>,
}

/// A named output channel value with its unit.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelValue {
    /// Channel name.
    pub name: String,
    /// SI unit.
    pub unit: &'static str,
    /// Value.
    pub value: f64,
}

/// Result of [`Simulation::equilibrium`].
#[derive(Debug, Clone, PartialEq)]
pub struct EquilibriumReport {
    /// Newton iterations.
    pub iterations: usize,
    /// Final residual relative to the load scale.
    pub relative_residual: f64,
    /// Load scale, N.
    pub load_scale: f64,
}

/// Why a run ended ([`RunReport::stop`]).
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// t_end reached.
    Completed,
    /// The observer asked to stop (e.g. Ctrl-C or a full disk in the caller).
    Observer,
    /// The integration failed (divergence, singular matrix, step too small).
    Failed(String),
}

/// What [`Simulation::run`] reports: the summary survives a failure (t_reached, steps and work
/// counters up to it).
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Steps, times and counters.
    pub summary: RunSummary,
    /// Why the run ended.
    pub stop: StopReason,
}

impl RunReport {
    /// Real-time factor: compute time / simulated time (NaN before any time is simulated).
    pub fn real_time_factor(&self, t0: f64) -> f64 {
        let simulated = self.summary.t_reached - t0;
        if simulated > 0.0 {
            self.summary.compute_time / simulated
        } else {
            f64::NAN
        }
    }
}

/// Pre-step copy of the state, kept only when the coming step re-linearises (allocation-free).
#[derive(Debug, Clone)]
struct LinCopy {
    valid: bool,
    t: f64,
    r: Vec<f64>,
    v: Vec<f64>,
    runtime_inputs: Vec<f64>,
    algebraic: Vec<Vec<f64>>,
}

/// One simulation of a shared [`Model`] (module docs).
pub struct Simulation {
    model: Arc<Model>,
    settings: RunSettings,
    sys: MbsSystem,
    /// The fixed-step integrator (None for an adaptive method: [`Simulation::run`] only).
    stepper: Option<FixedStepper>,
    steps: u64,
    r: Vec<f64>,
    v: Vec<f64>,
    channel_values: Vec<f64>,
    /// Where the current linearisation was taken, and the scratch for the next one.
    lin: LinCopy,
    pending: LinCopy,
    /// Plausibility bounds checked after every [`Simulation::step`] (the settings' bounds with
    /// the model's defaults).
    limits: Limits,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("model", &self.model.compiled().name)
            .field("time", &self.time())
            .field("method", &self.settings.method)
            .finish_non_exhaustive()
    }
}

impl Simulation {
    /// Loads `path` and creates a simulation at the model's initial state (design position or
    /// static equilibrium, as its `[initial_state]` says) with its `[solver]` settings.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        Self::new(Model::from_file(path)?)
    }

    /// A simulation of `model` at its initial state with its `[solver]` settings.
    pub fn new(model: Arc<Model>) -> Result<Self, Error> {
        let settings = model.default_settings();
        let mut sim = Self::with_settings(model, settings)?;
        if sim.model.description().initial_state.kind == InitialStateKind::Equilibrium {
            sim.equilibrium()?;
        }
        Ok(sim)
    }

    /// A simulation of `model` at the design position with the given settings (a fixed-step
    /// method for [`Simulation::step`]; [`Simulation::run`] runs any method).
    pub fn with_settings(model: Arc<Model>, settings: RunSettings) -> Result<Self, Error> {
        let sys = MbsSystem::new(model.compiled().clone());
        simulate::route(&settings.method, settings.adaptive)
            .map_err(|e| Error::Settings(e.to_string()))?;
        let stepper = FixedStepper::new(&sys, &settings).ok();
        let (r, v) = model.compiled().design_state();
        let n_open = model.compiled().open_elements.len();
        let copy = LinCopy {
            valid: false,
            t: 0.0,
            r: r.clone(),
            v: v.clone(),
            runtime_inputs: sys.eval.runtime_inputs().to_vec(),
            algebraic: (0..n_open)
                .map(|e| sys.eval.open_element_algebraic(e).to_vec())
                .collect(),
        };
        let limits = settings.bounds.resolve(model.compiled());
        Ok(Self {
            limits,
            channel_values: vec![0.0; model.outputs().len()],
            settings,
            sys,
            stepper,
            steps: 0,
            r,
            v,
            lin: copy.clone(),
            pending: copy,
            model,
        })
    }

    /// Uses the portable (non-AVX2) copies of the evaluation pipeline even where the CPU has
    /// AVX2 (same results to round-off; for profiling tools that do not decode AVX).
    pub fn force_portable(&mut self, portable: bool) {
        self.sys.eval.force_portable(portable);
    }

    /// Runs the joint trees' evaluation path (their kinematics and the projection of q) through
    /// Rust code generated for this model and compiled by the toolchain's `rustc` into a plugin
    /// (document 004's symbolic accelerator; `docs/accelerate.md`), found in the cache if it was
    /// built before: the same results to round-off, less work per step. The linearisation keeps
    /// the generic code. Fails with a clear message where rustc is missing or the model has no
    /// joints; the simulation is then unchanged.
    pub fn accelerate(
        &mut self,
        opts: &sprung_accel::AccelOptions,
    ) -> Result<sprung_accel::Built, Error> {
        let (kernel, built) = sprung_accel::accelerate(self.model.compiled(), opts)
            .map_err(|e| Error::Accelerate(e.to_string()))?;
        self.sys.set_tree_kernel(Some(kernel));
        Ok(built)
    }

    /// Installs (or with `None` removes) a model-specific evaluation path of the joint trees
    /// ([`sprung_mbs::tree_kernel::TreeKernel`]; [`Simulation::accelerate`] installs the
    /// generated one).
    pub fn set_tree_kernel(
        &mut self,
        kernel: Option<Arc<dyn sprung_mbs::tree_kernel::TreeKernel>>,
    ) {
        self.sys.set_tree_kernel(kernel);
    }

    /// Whether a model-specific evaluation path is installed.
    pub fn is_accelerated(&self) -> bool {
        self.sys.has_tree_kernel()
    }

    /// The shared model.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The run settings.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// The plausibility bounds [`Simulation::step`] checks (resolved from the settings' bounds
    /// and the model's defaults).
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Current time, s: t0 + steps · h (never accumulated).
    pub fn time(&self) -> f64 {
        self.settings.t0 + self.steps as f64 * self.step_size()
    }

    /// The fixed step, s (the settings' step for an adaptive method).
    pub fn step_size(&self) -> f64 {
        self.stepper
            .as_ref()
            .map_or(self.settings.step, FixedStepper::h)
    }

    fn stepper_mut(&mut self) -> Result<&mut FixedStepper, Error> {
        match self.stepper.as_mut() {
            Some(st) => Ok(st),
            None => Err(Error::Settings(format!(
                "{} runs adaptively; step() and advance_to() need a fixed-step method (lsrt2, lie, pie, ros2, ros3p, ros34pw2, rodas3, rodas4, rodas5p, rk4); run() takes any",
                self.settings.method
            ))),
        }
    }

    /// Positions r (7 per body; a body on an ideal joint holds its joint coordinate in the
    /// first of its seven slots, `docs/joints.md`).
    pub fn positions(&self) -> &[f64] {
        &self.r
    }

    /// The poses (7 per body: position, unit quaternion) and velocities (6 per body: v global,
    /// ω body axes, then the element states) of all bodies at the current state: for a model
    /// with ideal joints the jointed bodies' poses from their joint coordinates
    /// (`sprung_mbs::joints::Joints::expand`), else [`Simulation::positions`] and
    /// [`Simulation::velocities`] themselves.
    pub fn body_poses(&mut self) -> (Vec<f64>, Vec<f64>) {
        let (_, r, v) = self.sys.expanded(&self.r, &self.v);
        (r.to_vec(), v.to_vec())
    }

    /// Velocities (6 per body), then element states (6-wide blocks).
    pub fn velocities(&self) -> &[f64] {
        &self.v
    }

    /// The state derivatives at the current state: accelerations of the bodies (6 per body: ẍ
    /// global, ω̇ body axes), then the rates of the element states (without padding) — the
    /// velocity rows of the state-space model of [`Simulation::linearise`].
    pub fn accelerations(&mut self) -> Vec<f64> {
        let t = self.time();
        let cm = self.model.compiled().clone();
        let mut q = vec![0.0; cm.n_v()];
        sprung_solve::mech::MechanicalSystem::accelerations(
            &mut self.sys,
            t,
            &self.r,
            &self.v,
            &mut q,
        );
        let mut out = q[..cm.n_body_v()].to_vec();
        for (e, el) in cm.open_elements.iter().enumerate() {
            for j in 0..el.law.n_states() {
                out.push(q[cm.state_index(e, j)]);
            }
        }
        out
    }

    /// The states of open element `name`.
    pub fn element_states(&self, name: &str) -> Result<&[f64], Error> {
        let cm = self.model.compiled();
        let e = cm
            .open_elements
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| Error::Input(format!("no [[elements]] element called '{name}'")))?;
        let el = &cm.open_elements[e];
        let i0 = cm.state_index(e, 0);
        Ok(&self.v[i0..i0 + el.law.n_states()])
    }

    /// The mechanical system (evaluator workspace) of this simulation.
    pub(crate) fn system_mut(&mut self) -> &mut MbsSystem {
        &mut self.sys
    }

    /// Work counters of the fixed-step integrator (zero for adaptive methods).
    pub fn stats(&self) -> Stats {
        self.stepper
            .as_ref()
            .map(FixedStepper::stats)
            .unwrap_or_default()
    }

    /// Sets a runtime input (by name or index) to `value` from now on. Inputs driven by a time
    /// signal cannot be set: declare them `signal = { type = "runtime", default = ... }`.
    pub fn set_input(&mut self, input: impl InputRef, value: f64) -> Result<(), Error> {
        let k = input.resolve(&self.model)?;
        let name = &self.model.compiled().inputs[k].name;
        if !value.is_finite() {
            return Err(Error::Input(format!(
                "input '{name}': value {value} is not finite"
            )));
        }
        if !self.sys.eval.set_runtime_input(k, value) {
            return Err(Error::Input(format!(
                "input '{name}' is driven by a time signal; declare it signal = {{ type = \"runtime\", default = 0.0 }} to set it at run time"
            )));
        }
        Ok(())
    }

    /// Current value of input `input` (runtime value, or the time signal at the current time).
    pub fn input(&self, input: impl InputRef) -> Result<f64, Error> {
        let k = input.resolve(&self.model)?;
        let u = &self.model.compiled().inputs[k];
        Ok(if u.runtime {
            self.sys.eval.runtime_inputs()[k]
        } else {
            u.signal.value(self.time())
        })
    }

    /// One fixed step. A step that leaves the plausible range (the settings' [`Bounds`]:
    /// displacement from the design position, speed or resultant force of a body;
    /// `sprung_mbs::simulate` module docs) fails with a message naming the body (and for the
    /// force, the element with the largest force on it); the state is then the implausible one.
    ///
    /// [`Bounds`]: sprung_mbs::simulate::Bounds
    pub fn step(&mut self) -> Result<(), Error> {
        let k = self.steps;
        let relin = self.stepper_mut()?.relinearises_at(k);
        if relin {
            self.copy_state_into_pending();
        }
        let t = self.time();
        let stepper = self.stepper.as_mut().expect("checked above");
        // Curve-range records are per thread (`sprung_model::OutOfRangeFlag`): this step's only.
        sprung_model::reset_out_of_range();
        let res = stepper.step(&mut self.sys, k, &mut self.r, &mut self.v);
        if relin {
            std::mem::swap(&mut self.lin, &mut self.pending);
            self.lin.valid = true;
        }
        match res {
            Ok(()) => {
                self.steps += 1;
                let cm = self.model.compiled();
                if sprung_model::any_out_of_range(&cm.curves) {
                    return Err(Error::Step {
                        t,
                        message: self.curve_range_message(),
                    });
                }
                // The forces checked are those of the step's last evaluation, with joints the
                // body states too (`sprung_mbs::simulate` module docs).
                let t1 = self.time();
                if let Some(x) = self
                    .sys
                    .check_last_evaluated(&self.limits, t1, &self.r, &self.v)
                {
                    return Err(Error::Step {
                        t,
                        message: self.limits.message(cm, self.time(), &x),
                    });
                }
                Ok(())
            }
            Err(e) => Err(Error::Step {
                t,
                message: e.to_string(),
            }),
        }
    }

    fn copy_state_into_pending(&mut self) {
        let t = self.time();
        let p = &mut self.pending;
        p.t = t;
        p.r.copy_from_slice(&self.r);
        p.v.copy_from_slice(&self.v);
        p.runtime_inputs
            .copy_from_slice(self.sys.eval.runtime_inputs());
        for (e, a) in p.algebraic.iter_mut().enumerate() {
            a.copy_from_slice(self.sys.eval.open_element_algebraic(e));
        }
    }

    /// The message of a curve evaluated outside its table (`extrapolation = "error"`): element,
    /// curve, value and table range.
    fn curve_range_message(&self) -> String {
        match sprung_model::check_curve_ranges(
            self.model.description(),
            &self.model.compiled().curves,
        ) {
            Err(e) => e.to_string(),
            Ok(()) => "a curve was evaluated outside its table".into(),
        }
    }

    /// Steps until `t` (which must be a whole number of steps from now, to 1e-9 of a step).
    pub fn advance_to(&mut self, t: f64) -> Result<(), Error> {
        let h = self.stepper_mut()?.h();
        let n = (t - self.settings.t0) / h;
        let target = n.round();
        if !t.is_finite() || (n - target).abs() > 1e-9 * n.abs().max(1.0) {
            return Err(Error::Settings(format!(
                "advance_to({t}): not a whole number of steps of {h} s from t0 = {} s; the nearest are {} s and {} s",
                self.settings.t0,
                self.settings.t0 + n.floor() * h,
                self.settings.t0 + n.ceil() * h
            )));
        }
        if target < self.steps as f64 {
            return Err(Error::Settings(format!(
                "advance_to({t}): the simulation is already at t = {} s",
                self.time()
            )));
        }
        while (self.steps as f64) < target {
            self.step()?;
        }
        Ok(())
    }

    /// The output channels at the current state: values in model order (no allocation).
    pub fn channel_values(&mut self) -> &[f64] {
        let t = self.time();
        // Bodies on ideal joints: the channels read the expanded poses.
        let (eval, rf, vf) = self.sys.expanded(&self.r, &self.v);
        self.model
            .outputs()
            .evaluate(eval, t, rf, vf, &mut self.channel_values);
        &self.channel_values
    }

    /// The output channels at the current state with names and units.
    pub fn channels(&mut self) -> Vec<ChannelValue> {
        self.channel_values();
        self.model
            .outputs()
            .channels
            .iter()
            .zip(&self.channel_values)
            .map(|(c, &value)| ChannelValue {
                name: c.name.clone(),
                unit: c.unit,
                value,
            })
            .collect()
    }

    /// The value of channel `name` at the current state.
    pub fn channel(&mut self, name: &str) -> Result<f64, Error> {
        let k = self
            .model
            .outputs()
            .channels
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.model.channel_names().iter().map(|c| c.0).collect();
                Error::Input(format!(
                    "unknown output channel '{name}'; the channels are: {}",
                    names.join(", ")
                ))
            })?;
        Ok(self.channel_values()[k])
    }

    /// A serialisable snapshot of the state (module docs of [`Snapshot`]).
    pub fn state(&self) -> Snapshot {
        let n_open = self.model.compiled().open_elements.len();
        let relin_next = self
            .stepper
            .as_ref()
            .is_none_or(|st| st.relinearises_at(self.steps));
        let linearisation = (self.lin.valid && !relin_next).then(|| LinearisationPoint {
            t: self.lin.t,
            r: self.lin.r.clone(),
            v: self.lin.v.clone(),
            runtime_inputs: self.lin.runtime_inputs.clone(),
            algebraic: self.lin.algebraic.clone(),
        });
        Snapshot {
            model: self.model.compiled().name.clone(),
            t0: self.settings.t0,
            steps: self.steps,
            r: self.r.clone(),
            v: self.v.clone(),
            runtime_inputs: self.sys.eval.runtime_inputs().to_vec(),
            algebraic: (0..n_open)
                .map(|e| self.sys.eval.open_element_algebraic(e).to_vec())
                .collect(),
            linearisation,
        }
    }

    /// Restores a snapshot taken with [`Simulation::state`] (of this model, with the same step).
    pub fn set_state(&mut self, s: &Snapshot) -> Result<(), Error> {
        let cm = self.model.compiled().clone();
        let wrong = |what: &str| {
            Error::Snapshot(format!(
                "snapshot of '{}' does not fit model '{}': {what}",
                s.model, cm.name
            ))
        };
        if s.model != cm.name {
            return Err(wrong("different model name"));
        }
        if s.r.len() != self.r.len() || s.v.len() != self.v.len() {
            return Err(wrong(&format!(
                "{} positions / {} velocities, the model has {} / {}",
                s.r.len(),
                s.v.len(),
                self.r.len(),
                self.v.len()
            )));
        }
        if s.runtime_inputs.len() != cm.inputs.len() || s.algebraic.len() != cm.open_elements.len()
        {
            return Err(wrong("inputs or elements differ"));
        }
        if s.r.iter().chain(&s.v).any(|x| !x.is_finite()) {
            return Err(Error::Snapshot("snapshot holds non-finite values".into()));
        }
        let restore = |sim: &mut Self, runtime: &[f64], alg: &[Vec<f64>]| {
            sim.sys.eval.set_runtime_inputs(runtime);
            for (e, a) in alg.iter().enumerate() {
                sim.sys.eval.set_open_element_algebraic(e, a);
            }
        };
        self.settings.t0 = s.t0;
        self.steps = s.steps;
        if let Some(st) = self.stepper.as_mut() {
            st.invalidate();
        }
        self.lin.valid = false;
        if let Some(p) = &s.linearisation
            && self.stepper.is_some()
        {
            restore(self, &p.runtime_inputs, &p.algebraic);
            let st = self.stepper.as_mut().expect("checked above");
            st.linearise_at(&mut self.sys, p.t, &p.r, &p.v)
                .map_err(|e| Error::Snapshot(e.to_string()))?;
            self.lin = LinCopy {
                valid: true,
                t: p.t,
                r: p.r.clone(),
                v: p.v.clone(),
                runtime_inputs: p.runtime_inputs.clone(),
                algebraic: p.algebraic.clone(),
            };
        }
        restore(self, &s.runtime_inputs, &s.algebraic);
        self.r.copy_from_slice(&s.r);
        self.v.copy_from_slice(&s.v);
        Ok(())
    }

    /// Static equilibrium at the current time and inputs: moves r and the element states there
    /// (all rates zero), sets the body velocities to zero and re-linearises at the next step.
    pub fn equilibrium(&mut self) -> Result<EquilibriumReport, Error> {
        self.equilibrium_with_tolerance(EquilibriumOptions::default().tolerance)
    }

    /// [`Simulation::equilibrium`] with another tolerance on the residual wrench relative to the
    /// load scale (`sprung_mbs::equilibrium`, "Convergence criterion"; default 1e-10): for
    /// models without load, whose load scale is 1 N, the residual's round-off floor is set by
    /// the internal stiffness (the kinematic tables, `crate::kin_tables`).
    pub fn equilibrium_with_tolerance(
        &mut self,
        tolerance: f64,
    ) -> Result<EquilibriumReport, Error> {
        let t = self.time();
        // Small models (the axles) keep the dense LU of the first wave's equilibrium: the same
        // initial state bit for bit; large ones use the block-sparse factorisation.
        let solver = if self.model.compiled().n_v() <= DENSE_EQUILIBRIUM_MAX_DOF {
            equilibrium::EquilibriumSolver::Dense
        } else {
            equilibrium::EquilibriumSolver::BlockSparse
        };
        let opts = EquilibriumOptions {
            solver,
            tolerance,
            ..Default::default()
        };
        let eq = equilibrium::solve_from(&mut self.sys, t, &self.r, &self.v, &opts, &mut |_| {})
            .map_err(|e| Error::Equilibrium(e.to_string()))?;
        self.r.copy_from_slice(&eq.r);
        let nbv = self.model.compiled().n_body_v();
        self.v[nbv..].copy_from_slice(&eq.states);
        // Newton iterates may probe beyond curve tables; only the run counts.
        sprung_model::clear_out_of_range(&self.model.compiled().curves);
        self.v[..nbv].fill(0.0);
        if let Some(st) = self.stepper.as_mut() {
            st.invalidate();
        }
        Ok(EquilibriumReport {
            iterations: eq.iterations,
            relative_residual: eq.relative_residual,
            load_scale: eq.load_scale,
        })
    }

    /// Eigenvalues, natural frequencies and damping of the model linearised at the current
    /// state.
    pub fn modes(&mut self) -> Result<Modes, Error> {
        let t = self.time();
        try_modal_analysis(&mut self.sys, t, &self.r, &self.v)
            .map_err(|e| Error::Modes(e.to_string()))
    }

    /// Runs from the current state to `t_end` with the simulation's method (any method of
    /// `sprung solvers`, fixed or adaptive: the run loop every face shares). `observer(t,
    /// channels)` sees the output channels at the start and every output interval and may stop
    /// the run. The report keeps t_reached, steps and counters also when the run fails.
    pub fn run(
        &mut self,
        t_end: f64,
        observer: &mut dyn FnMut(f64, &[f64]) -> Control,
    ) -> RunReport {
        let settings = self.settings.clone();
        self.run_with(&settings, t_end, observer)
    }

    /// [`Simulation::run`] with other settings (method, step, tolerances, output interval) for
    /// this run; t0 is the current time.
    pub fn run_with(
        &mut self,
        settings: &RunSettings,
        t_end: f64,
        observer: &mut dyn FnMut(f64, &[f64]) -> Control,
    ) -> RunReport {
        let mut settings = settings.clone();
        let t_start = self.time();
        // A fresh run: out-of-range records of earlier evaluations do not count.
        sprung_model::clear_out_of_range(&self.model.compiled().curves);
        settings.t0 = t_start;
        settings.t_end = t_end;
        let model = self.model.clone();
        let outputs = model.outputs();
        // Channels are read with a second evaluator so that observing never touches the state
        // of the stepping one.
        let mut out_eval = self.sys.eval.clone();
        let mut row = vec![0.0; outputs.len()];
        let mut expansion = sprung_mbs::joints::Expansion::new(model.compiled());
        let joints = &model.compiled().joints;
        let (summary, res) = simulate::run_with_summary(
            &mut self.sys,
            &settings,
            &mut self.r,
            &mut self.v,
            &mut |t, r, v| {
                let (r, v) = expansion.apply(joints, r, v);
                outputs.evaluate(&mut out_eval, t, r, v, &mut row);
                observer(t, &row)
            },
        );
        // The state is at t_reached: count it in steps of the simulation's own step.
        let h = self.step_size();
        let n = ((summary.t_reached - self.settings.t0) / h).round();
        if n >= 0.0 {
            self.steps = n as u64;
        }
        if let Some(st) = self.stepper.as_mut() {
            st.invalidate();
        }
        self.lin.valid = false;
        let stop = match res {
            Err(simulate::RunError::CurveOutOfRange { t }) => {
                StopReason::Failed(format!("at t = {t} s: {}", self.curve_range_message()))
            }
            Err(e) => StopReason::Failed(e.to_string()),
            Ok(()) if summary.stopped_by_observer => StopReason::Observer,
            Ok(()) => StopReason::Completed,
        };
        RunReport { summary, stop }
    }
}
