//! One FMU instance: a [`sprung::Simulation`] driven through the co-simulation calling
//! sequence (FMI 2.0 sec. 4.2.4, FMI 3.0 sec. 4.2.1) — instantiated → initialisation mode →
//! step mode → terminated — shared by the FMI 2 and FMI 3 entry points ([`crate::fmi2`],
//! [`crate::fmi3`]). Everything goes through the facade; stepping is
//! [`sprung::Simulation::step`], the FMU state is a [`sprung::Snapshot`].
//!
//! Stepping rule: a communication step must be a whole number of the model's internal fixed
//! steps, to [`STEP_MULTIPLE_TOL`] of a step; the communication point must be the instance's
//! time to [`TIME_MATCH_TOL`] of a step. Inputs are held over the communication step (the value
//! set before `doStep` acts on every internal step of it).

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sprung::{Model, Simulation, Snapshot};
use sprung_model::InitialStateKind;

use crate::FmiError;
use crate::variables::{Binding, VariableTable};

/// A communication step `H` is accepted when `H / h` is within this many internal steps of a
/// whole number: the importer's `H` is usually a difference of accumulated times (FMPy:
/// `t0 + (n+1)·H − t`), which is off by a few ulps of `t`; 1e-6 of a step covers that for any
/// run up to 10⁹ steps and rejects any real mismatch (a half step is 5·10⁵ times larger).
pub const STEP_MULTIPLE_TOL: f64 = 1e-6;

/// The communication point passed to `doStep` must equal the instance's time (t0 + n·h) to
/// this many internal steps (same reasoning as [`STEP_MULTIPLE_TOL`]).
pub const TIME_MATCH_TOL: f64 = 1e-6;

/// Name of the manifest in the FMU's `resources/` folder.
pub const MANIFEST: &str = "sprung-fmu.json";

/// `resources/sprung-fmu.json`: where the model is and which token it was packed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Model file, relative to `resources/`.
    pub model: String,
    /// GUID / instantiation token written into `modelDescription.xml`.
    pub token: String,
}

/// Severity of a log message (the FMI status values, same in both versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(i32)]
pub enum Status {
    /// Ok.
    Ok = 0,
    /// Warning.
    Warning = 1,
    /// The step could not be completed.
    Discard = 2,
    /// Error: the instance must be reset or freed.
    Error = 3,
    /// Fatal: all instances are unusable.
    Fatal = 4,
}

/// Where log messages go: the importer's callback, wrapped by the version's entry points.
pub type LogFn = Box<dyn Fn(Status, &str, &str)>;

/// Phase of the calling sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// After instantiation (parameters and start values may be set).
    Instantiated,
    /// Initialisation mode.
    Initialisation,
    /// Step mode.
    Stepping,
    /// After terminate.
    Terminated,
    /// A call failed with an error (or a panic): only reset, free and get calls are allowed.
    Failed,
}

/// One FMU instance (module docs).
pub struct Instance {
    /// Instance name given by the importer.
    pub name: String,
    /// The model as packed (parameters at their declared values).
    base: Arc<Model>,
    /// The model the simulation runs: `base`, or `base` rebuilt with the parameter values set
    /// before initialisation ([`sprung::Model::with_parameters`]).
    model: Arc<Model>,
    /// Current values of the declared parameters, and those `model` was built with.
    params: Vec<f64>,
    model_params: Vec<f64>,
    table: VariableTable,
    /// Current value of every model input (runtime ones are the FMU inputs).
    inputs: Vec<f64>,
    start_inputs: Vec<f64>,
    start_time: f64,
    sim: Option<Simulation>,
    /// Output channel values at the current time (valid when `outputs_fresh`).
    outputs: Vec<f64>,
    outputs_fresh: bool,
    phase: Phase,
    log: LogFn,
    /// Debug logging (info messages); errors are always logged.
    pub logging_on: bool,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("name", &self.name)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// Loads the model from `resources` (the FMU's `resources/` folder) and checks `token`
    /// against the manifest.
    pub fn new(
        name: &str,
        resources: &Path,
        token: &str,
        log: LogFn,
        logging_on: bool,
    ) -> Result<Self, FmiError> {
        let manifest_path = resources.join(MANIFEST);
        let text = std::fs::read_to_string(&manifest_path).map_err(|e| {
            FmiError::Instantiate(format!(
                "cannot read {}: {e}; the resource location must be the FMU's resources/ folder",
                manifest_path.display()
            ))
        })?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| FmiError::Instantiate(format!("{}: {e}", manifest_path.display())))?;
        if manifest.token != token {
            return Err(FmiError::Instantiate(format!(
                "instantiation token '{token}' does not match the FMU's '{}': the modelDescription.xml and the resources come from different exports",
                manifest.token
            )));
        }
        let model = Model::from_file(resources.join(&manifest.model))?;
        Self::with_model(name, model, log, logging_on)
    }

    /// An instance of an already loaded model (the Rust tests and [`Instance::new`]).
    pub fn with_model(
        name: &str,
        model: Arc<Model>,
        log: LogFn,
        logging_on: bool,
    ) -> Result<Self, FmiError> {
        let table = VariableTable::of(&model)?;
        let inputs: Vec<f64> = model
            .compiled()
            .inputs
            .iter()
            .map(|u| u.signal.value(0.0))
            .collect();
        let params: Vec<f64> = model.parameters().iter().map(|p| p.value).collect();
        Ok(Self {
            name: name.to_string(),
            model_params: params.clone(),
            params,
            base: model.clone(),
            outputs: vec![0.0; model.outputs().len()],
            outputs_fresh: false,
            start_inputs: inputs.clone(),
            inputs,
            start_time: 0.0,
            sim: None,
            phase: Phase::Instantiated,
            table,
            model,
            log,
            logging_on,
        })
    }

    /// The variable table.
    pub fn table(&self) -> &VariableTable {
        &self.table
    }

    /// The phase of the calling sequence.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Marks the instance failed (after an error or a caught panic).
    pub fn fail(&mut self) {
        self.phase = Phase::Failed;
    }

    /// Logs `message` through the importer's callback (errors always, the rest only with
    /// debug logging on).
    pub fn log(&self, status: Status, message: &str) {
        if status >= Status::Warning || self.logging_on {
            let category = if status >= Status::Error {
                "logStatusError"
            } else {
                "logAll"
            };
            (self.log)(status, category, message);
        }
    }

    fn require(&self, allowed: &[Phase], call: &str) -> Result<(), FmiError> {
        if allowed.contains(&self.phase) {
            Ok(())
        } else if self.phase == Phase::Failed {
            Err(FmiError::Sequence(format!(
                "{call}: an earlier call failed; reset or free the instance"
            )))
        } else {
            Err(FmiError::Sequence(format!(
                "{call} is not allowed in phase {:?} (allowed: {allowed:?})",
                self.phase
            )))
        }
    }

    /// Experiment setup (FMI 2 `fmi2SetupExperiment`, part of FMI 3
    /// `fmi3EnterInitializationMode`).
    pub fn setup_experiment(&mut self, start_time: f64) -> Result<(), FmiError> {
        self.require(&[Phase::Instantiated], "setup experiment")?;
        if !start_time.is_finite() {
            return Err(FmiError::Argument(format!(
                "start time {start_time} is not finite"
            )));
        }
        self.start_time = start_time;
        Ok(())
    }

    /// Enters initialisation mode: creates the simulation at t0 = the start time with the
    /// model's solver settings and the parameters and inputs set so far.
    pub fn enter_initialisation(&mut self) -> Result<(), FmiError> {
        self.require(&[Phase::Instantiated], "enter initialization mode")?;
        self.build_simulation()?;
        self.phase = Phase::Initialisation;
        Ok(())
    }

    /// (Re)builds the simulation at the start time: the model rebuilt with the current
    /// parameter values if they differ from the packed ones, the inputs applied.
    fn build_simulation(&mut self) -> Result<(), FmiError> {
        if self.params != self.model_params {
            let names: Vec<String> = self
                .base
                .parameters()
                .iter()
                .map(|p| p.name.clone())
                .collect();
            let values: Vec<(&str, f64)> = names
                .iter()
                .map(String::as_str)
                .zip(self.params.iter().copied())
                .collect();
            self.model = Arc::new(self.base.with_parameters(&values)?);
            self.model_params.clone_from(&self.params);
        }
        let mut settings = self.model.default_settings();
        settings.t0 = self.start_time;
        let mut sim = Simulation::with_settings(self.model.clone(), settings)?;
        for (k, u) in self.model.compiled().inputs.iter().enumerate() {
            if u.runtime {
                sim.set_input(k, self.inputs[k])?;
            }
        }
        self.sim = Some(sim);
        self.outputs_fresh = false;
        Ok(())
    }

    /// Leaves initialisation mode: the model's initial state (static equilibrium at the start
    /// time and the current inputs, if `[initial_state] kind = "equilibrium"`).
    pub fn exit_initialisation(&mut self) -> Result<(), FmiError> {
        self.require(&[Phase::Initialisation], "exit initialization mode")?;
        if self.params != self.model_params {
            // Parameters set in initialisation mode: the model is rebuilt with them now; they
            // are fixed from here on.
            self.build_simulation()?;
        }
        let equilibrium =
            self.model.description().initial_state.kind == InitialStateKind::Equilibrium;
        let sim = self.sim.as_mut().expect("created in initialisation mode");
        if equilibrium {
            let eq = sim.equilibrium()?;
            let msg = format!(
                "static equilibrium: {} Newton iterations, residual {:.1e} of the load scale {:.0} N",
                eq.iterations, eq.relative_residual, eq.load_scale
            );
            self.log(Status::Ok, &msg);
        }
        self.outputs_fresh = false;
        self.phase = Phase::Stepping;
        Ok(())
    }

    /// Terminate.
    pub fn terminate(&mut self) -> Result<(), FmiError> {
        self.require(&[Phase::Stepping, Phase::Initialisation], "terminate")?;
        self.phase = Phase::Terminated;
        Ok(())
    }

    /// Reset to the state after instantiation (start values, no simulation).
    pub fn reset(&mut self) {
        self.sim = None;
        self.model = self.base.clone();
        self.params = self.base.parameters().iter().map(|p| p.value).collect();
        self.model_params.clone_from(&self.params);
        self.inputs.clone_from(&self.start_inputs);
        self.start_time = 0.0;
        self.outputs_fresh = false;
        self.phase = Phase::Instantiated;
    }

    /// Sets Float64 variables (inputs; time and outputs cannot be set).
    pub fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        self.require(
            &[Phase::Instantiated, Phase::Initialisation, Phase::Stepping],
            "set",
        )?;
        if vrs.len() != values.len() {
            return Err(FmiError::Argument(format!(
                "{} value references but {} values",
                vrs.len(),
                values.len()
            )));
        }
        for (&vr, &x) in vrs.iter().zip(values) {
            let v = self.table.get(vr).ok_or_else(|| self.unknown_vr(vr))?;
            if let Binding::Parameter(k) = v.binding {
                if !matches!(self.phase, Phase::Instantiated | Phase::Initialisation) {
                    return Err(FmiError::Argument(format!(
                        "parameter '{}' is fixed after initialisation; set it before fmi2ExitInitializationMode / fmi3ExitInitializationMode (or reset the instance)",
                        v.name
                    )));
                }
                if !x.is_finite() {
                    return Err(FmiError::Argument(format!(
                        "parameter '{}': value {x} is not finite",
                        v.name
                    )));
                }
                self.params[k] = x;
                continue;
            }
            let Binding::Input(k) = v.binding else {
                return Err(FmiError::Argument(format!(
                    "variable '{}' (value reference {vr}) has causality {} and cannot be set",
                    v.name,
                    v.causality.as_str()
                )));
            };
            if !x.is_finite() {
                return Err(FmiError::Argument(format!(
                    "input '{}': value {x} is not finite",
                    v.name
                )));
            }
            if let Some(sim) = self.sim.as_mut() {
                sim.set_input(k, x)?;
            }
            self.inputs[k] = x;
        }
        Ok(())
    }

    fn unknown_vr(&self, vr: u32) -> FmiError {
        FmiError::Argument(format!(
            "unknown value reference {vr}; the FMU has value references 0..{}",
            self.table.variables.len().saturating_sub(1)
        ))
    }

    /// Gets Float64 variables.
    pub fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), FmiError> {
        if vrs.len() != values.len() {
            return Err(FmiError::Argument(format!(
                "{} value references but room for {} values",
                vrs.len(),
                values.len()
            )));
        }
        for (&vr, out) in vrs.iter().zip(values.iter_mut()) {
            let binding = self
                .table
                .get(vr)
                .ok_or_else(|| self.unknown_vr(vr))?
                .binding;
            *out = match binding {
                Binding::Time => self.sim.as_ref().map_or(self.start_time, Simulation::time),
                Binding::Input(k) => self.inputs[k],
                Binding::Parameter(k) => self.params[k],
                Binding::Output(k) => {
                    let Some(sim) = self.sim.as_mut() else {
                        return Err(FmiError::Sequence(format!(
                            "output '{}' is calculated from initialisation mode on; enter initialization mode first",
                            self.table.variables[vr as usize].name
                        )));
                    };
                    if !self.outputs_fresh {
                        self.outputs.copy_from_slice(sim.channel_values());
                        self.outputs_fresh = true;
                    }
                    self.outputs[k]
                }
            };
        }
        Ok(())
    }

    /// The number of internal steps in a communication step `h_comm` (module docs), or an
    /// error naming the nearest valid steps.
    pub fn steps_in(h_comm: f64, h: f64) -> Result<u64, FmiError> {
        let n = h_comm / h;
        let whole = n.round();
        if !h_comm.is_finite() || h_comm < 0.0 || (n - whole).abs() > STEP_MULTIPLE_TOL {
            let lo = (n.floor() * h).max(h);
            let hi = n.ceil().max(1.0) * h;
            return Err(FmiError::Step(format!(
                "communication step {h_comm} s is not a whole multiple of the internal fixed step {h} s ({n:.6} steps, tolerance {STEP_MULTIPLE_TOL} step); use a multiple of {h} s such as {lo} s or {hi} s"
            )));
        }
        Ok(whole as u64)
    }

    /// One communication step from `t_comm` over `h_comm` (module docs). Diverging runs
    /// (plausibility bounds, singular matrices, curves beyond their tables) fail with the
    /// located message of the facade.
    pub fn do_step(&mut self, t_comm: f64, h_comm: f64) -> Result<(), FmiError> {
        self.require(&[Phase::Stepping], "doStep")?;
        let sim = self.sim.as_mut().expect("step mode has a simulation");
        let h = sim.step_size();
        let n = Self::steps_in(h_comm, h)?;
        let t = sim.time();
        if !t_comm.is_finite() || (t_comm - t).abs() > TIME_MATCH_TOL * h {
            return Err(FmiError::Step(format!(
                "doStep at the communication point {t_comm} s, but the FMU is at t = {t} s; steps must follow each other (restore an FMU state to go back)"
            )));
        }
        self.outputs_fresh = false;
        for _ in 0..n {
            sim.step()?;
        }
        Ok(())
    }

    /// The FMU state: a snapshot of the simulation.
    pub fn get_state(&self) -> Result<Snapshot, FmiError> {
        match &self.sim {
            Some(sim) => Ok(sim.state()),
            None => Err(FmiError::Sequence(
                "the FMU state exists from initialisation mode on; enter initialization mode first"
                    .into(),
            )),
        }
    }

    /// Restores an FMU state taken with [`Instance::get_state`] (of an instance of the same
    /// model). The instance continues bit for bit as the one the state was taken from; after a
    /// failed step, restoring a state returns the instance to step mode.
    pub fn set_state(&mut self, s: &Snapshot) -> Result<(), FmiError> {
        self.require(
            &[Phase::Initialisation, Phase::Stepping, Phase::Failed],
            "set FMU state",
        )?;
        let Some(sim) = self.sim.as_mut() else {
            return Err(FmiError::Sequence(
                "an FMU state can be restored from initialisation mode on".into(),
            ));
        };
        sim.set_state(s)?;
        if self.phase == Phase::Failed {
            // A failed step is undone by going back to a state taken before it.
            self.phase = Phase::Stepping;
        }
        for (k, u) in self.model.compiled().inputs.iter().enumerate() {
            if u.runtime {
                self.inputs[k] = s.runtime_inputs[k];
            }
        }
        self.outputs_fresh = false;
        Ok(())
    }

    /// Serialises an FMU state (JSON of the snapshot; floats round-trip exactly).
    pub fn serialise(s: &Snapshot) -> Result<Vec<u8>, FmiError> {
        serde_json::to_vec(s)
            .map_err(|e| FmiError::State(format!("serialising the FMU state: {e}")))
    }

    /// Deserialises an FMU state written by [`Instance::serialise`].
    pub fn deserialise(bytes: &[u8]) -> Result<Snapshot, FmiError> {
        serde_json::from_slice(bytes).map_err(|e| {
            FmiError::State(format!(
                "the serialised FMU state is not one of this FMU ({e})"
            ))
        })
    }
}
