//! Model parameters through the facade: the declared `[[parameters]]` of a model and
//! [`Model::with_parameters`], which every face uses (`sprung run --set`, sweeps, FMU
//! parameters, Python). The mechanism (paths, set/scale, validation naming the parameter) is
//! [`sprung_model::parameters`]; `docs/parameters.md` describes it.

use std::sync::Arc;

pub use sprung_model::ParameterMode;

use crate::{Error, Model};

/// A declared parameter of a model (`[[parameters]]`) with its current value.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterInfo {
    /// Name.
    pub name: String,
    /// Current value (a factor for `mode = "scale"`).
    pub value: f64,
    /// Unit of the value as declared (`""` if none).
    pub unit: String,
    /// Description as declared (`""` if none).
    pub description: String,
    /// Paths of the model values it acts on.
    pub targets: Vec<String>,
    /// Set or scale.
    pub mode: ParameterMode,
}

impl ParameterInfo {
    pub(crate) fn of(p: &sprung_model::Parameter) -> Self {
        Self {
            name: p.name.clone(),
            value: p.value,
            unit: p.unit.clone().unwrap_or_default(),
            description: p.description.clone().unwrap_or_default(),
            targets: p.targets.clone(),
            mode: p.mode,
        }
    }
}

impl Model {
    /// The declared parameters with their current values, in declaration order.
    pub fn parameters(&self) -> &[ParameterInfo] {
        &self.parameters
    }

    /// A new compiled model with parameter values changed (same element registry as this
    /// model). A name is a declared parameter or a path such as
    /// `force_elements.damper_L.damping` (which sets the file value there). Unknown names,
    /// non-finite values and values the model validation rejects are errors naming the
    /// parameter; an unknown name lists the declared ones.
    pub fn with_parameters(&self, values: &[(&str, f64)]) -> Result<Model, Error> {
        let d = self
            .description
            .with_parameters(values)
            .map_err(|e| Error::Model(e.to_string()))?;
        Self::compile(d, self.registry.clone())
    }

    /// The current value of a declared parameter or of the single number a path addresses.
    pub fn parameter_value(&self, name: &str) -> Result<f64, Error> {
        self.description
            .parameter_value(name)
            .map_err(|e| Error::Model(e.to_string()))
    }

    /// The element registry the model was compiled with (shared).
    pub fn registry(&self) -> &Arc<sprung_mbs::elements::ElementRegistry> {
        &self.registry
    }
}
