//! [`Model`]: a loaded, validated and compiled model with its output channels and solver
//! settings — immutable, shared through an `Arc` by any number of [`crate::Simulation`]s (the
//! model half of the model/data split of `../shared/design/architecture.md`).

use std::path::Path;
use std::sync::Arc;

use sprung_mbs::CompiledModel;
use sprung_mbs::elements::ElementRegistry;
use sprung_mbs::outputs::OutputSet;
use sprung_mbs::simulate::{Bounds, LinearSolverKind, RunSettings};

use crate::Error;

/// A compiled model plus what a simulation of it needs besides the state: the model description
/// it came from, the resolved output channels and the default run settings.
#[derive(Debug, Clone)]
pub struct Model {
    pub(crate) description: sprung_model::Model,
    compiled: Arc<CompiledModel>,
    outputs: OutputSet,
    /// The element kinds it was compiled with ([`Model::with_parameters`] recompiles with them).
    pub(crate) registry: Arc<ElementRegistry>,
    /// The declared parameters (`crate::parameters`).
    pub(crate) parameters: Vec<crate::ParameterInfo>,
}

impl Model {
    /// Loads a model file (`.toml` or `.json`): parse, expand mirrors, validate, compile. Errors
    /// name the file, line, element and a fix.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Arc<Self>, Error> {
        let path = path.as_ref();
        let m = sprung_model::load(path).map_err(|e| Error::Model(e.to_string()))?;
        Self::from_description(m)
    }

    /// Compiles a model description (e.g. built in code or parsed with
    /// [`sprung_model::from_toml_str`]) with the element kinds of [`crate::element_registry`]
    /// (built-in and vehicle kinds: tires).
    pub fn from_description(m: sprung_model::Model) -> Result<Arc<Self>, Error> {
        Self::from_description_with(m, &crate::element_registry())
    }

    /// Like [`Model::from_description`] with the element kinds of `registry` (kinds a library
    /// user adds through [`sprung_mbs::element_law::ElementLaw`]).
    pub fn from_description_with(
        m: sprung_model::Model,
        registry: &ElementRegistry,
    ) -> Result<Arc<Self>, Error> {
        Self::compile(m, Arc::new(registry.clone())).map(Arc::new)
    }

    /// Compiles `m` with `registry` (shared by the models derived with
    /// [`Model::with_parameters`]).
    pub(crate) fn compile(
        m: sprung_model::Model,
        registry: Arc<ElementRegistry>,
    ) -> Result<Self, Error> {
        // `[[elements]]` of built-in kinds in a description built in code become the force
        // elements they stand for, so the description, the channels and the compiled model agree.
        let m = m.with_builtin_elements_normalised().map_err(|problems| {
            Error::Model(
                problems
                    .iter()
                    .map(|p| format!("element '{}': {}; fix: {}", p.name, p.message, p.hint))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?;
        let compiled =
            sprung_mbs::compile_with(&m, &registry).map_err(|e| Error::Model(e.to_string()))?;
        let outputs = OutputSet::new(&m, &compiled).map_err(Error::Model)?;
        let parameters = m.parameters.iter().map(crate::ParameterInfo::of).collect();
        Ok(Self {
            description: m,
            compiled: Arc::new(compiled),
            outputs,
            registry,
            parameters,
        })
    }

    /// A new compiled model in which the named inputs are set by the caller instead of their
    /// time signals (`signal = { type = "runtime", default = ... }` with the signal's value at
    /// t = 0 as the default), e.g. to drive the load case's wheel force from a controller, a
    /// table (`sprung run --inputs`) or an FMI master without editing the model file. Inputs
    /// that are runtime inputs already stay as they are. Unknown names are an error that lists
    /// the model's inputs. Declared parameters keep working on the result.
    pub fn with_runtime_inputs(&self, names: &[&str]) -> Result<Model, Error> {
        fn convert(m: &mut sprung_model::Model, names: &[&str]) -> Result<(), Error> {
            for name in names {
                let Some(u) = m.inputs.iter_mut().find(|u| u.name == *name) else {
                    let known: Vec<&str> = m.inputs.iter().map(|u| u.name.as_str()).collect();
                    return Err(Error::Input(format!(
                        "no input '{name}' in the model; its inputs are: {}",
                        known.join(", ")
                    )));
                };
                if !matches!(u.signal, sprung_model::Signal::Runtime { .. }) {
                    u.signal = sprung_model::Signal::Runtime {
                        default: u.signal.value(0.0),
                    };
                }
            }
            Ok(())
        }
        let mut d = self.description.clone();
        convert(&mut d, names)?;
        if let Some(base) = &d.parameter_base {
            let mut b = (**base).clone();
            convert(&mut b.model, names)?;
            d.parameter_base = Some(Arc::new(b));
        }
        Self::compile(d, self.registry.clone())
    }

    /// The model description.
    pub fn description(&self) -> &sprung_model::Model {
        &self.description
    }

    /// The compiled model.
    pub fn compiled(&self) -> &Arc<CompiledModel> {
        &self.compiled
    }

    /// The output channels.
    pub fn outputs(&self) -> &OutputSet {
        &self.outputs
    }

    /// Names of the inputs in index order.
    pub fn input_names(&self) -> Vec<&str> {
        self.compiled
            .inputs
            .iter()
            .map(|u| u.name.as_str())
            .collect()
    }

    /// Names and units of the output channels in order.
    pub fn channel_names(&self) -> Vec<(&str, &str)> {
        self.outputs
            .channels
            .iter()
            .map(|c| (c.name.as_str(), c.unit))
            .collect()
    }

    /// The run settings of the model's `[solver]` table (t0 = 0).
    pub fn default_settings(&self) -> RunSettings {
        let s = &self.description.solver;
        RunSettings {
            method: s.method.to_lowercase(),
            step: s.step,
            t0: 0.0,
            t_end: s.t_end,
            output_interval: s.output_interval(),
            relinearise_every: (s.relinearise_every as u64).max(1),
            relinearise_stale: s.relinearise_stale,
            breakpoints: Default::default(),
            rtol: s.rtol,
            atol: s.atol,
            linear_solver: match s.linear_solver {
                sprung_model::LinearSolver::Dense => LinearSolverKind::Dense,
                sprung_model::LinearSolver::BlockSparse => LinearSolverKind::BlockSparse,
            },
            adaptive: None,
            bounds: Bounds {
                max_displacement: s.max_displacement,
                max_velocity: s.max_velocity,
                max_force: s.max_force,
            },
        }
    }
}
