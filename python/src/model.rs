//! `sprung.Model`: a loaded, validated and compiled model shared (by `Arc`) by any number of
//! simulations, also across threads; pickled as its model description (JSON), so that Dask
//! workers in other processes rebuild the identical model.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{IntoPyResult, ModelError};

/// A compiled model (immutable; share it between simulations and threads).
///
/// ``Model(path)`` loads a ``.toml`` or ``.json`` model file: parse, expand mirrors, validate,
/// compile. A bad file raises :class:`sprung.ModelError` naming the file, line, element and a fix.
#[pyclass(module = "sprung._sprung", name = "Model", frozen)]
pub struct PyModel {
    pub inner: Arc<sprung::Model>,
}

impl PyModel {
    pub fn new(inner: Arc<sprung::Model>) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyModel {
    #[new]
    fn py_new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| sprung::Model::from_file(&path)).py()?;
        Ok(Self { inner })
    }

    /// A model from TOML source text; ``label`` names it in error messages (and CSV curve files
    /// are resolved relative to its folder).
    #[staticmethod]
    #[pyo3(signature = (text, label = "<string>"))]
    fn from_toml(text: &str, label: &str) -> PyResult<Self> {
        let m = sprung_model::from_toml_str(text, label)
            .map_err(|e| ModelError::new_err(e.to_string()))?;
        Ok(Self::new(sprung::Model::from_description(m).py()?))
    }

    /// A model from the JSON of its description (what :meth:`to_json` returns).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let m: sprung_model::Model = serde_json::from_str(text)
            .map_err(|e| ModelError::new_err(format!("model description JSON: {e}")))?;
        Ok(Self::new(sprung::Model::from_description(m).py()?))
    }

    /// The model description as JSON (mirrors expanded; loads back with :meth:`from_json`).
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(self.inner.description())
            .map_err(|e| ModelError::new_err(format!("serialising the model description: {e}")))
    }

    /// Pickling: the description as JSON, rebuilt with :meth:`from_json`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<Self>().getattr("from_json")?;
        let json = slf.get().to_json()?;
        PyTuple::new(py, [ctor, PyTuple::new(py, [json])?.into_any()])
    }

    /// The model's name (``[model] name``).
    #[getter]
    fn name(&self) -> String {
        self.inner.compiled().name.clone()
    }

    /// Names of the inputs in index order (``set_input`` takes a name or an index).
    #[getter]
    fn input_names(&self) -> Vec<String> {
        self.inner
            .input_names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Names of the inputs that can be set at run time (``signal = { type = "runtime" }``).
    #[getter]
    fn runtime_inputs(&self) -> Vec<String> {
        self.inner
            .compiled()
            .inputs
            .iter()
            .filter(|u| u.runtime)
            .map(|u| u.name.clone())
            .collect()
    }

    /// Names of the output channels in order.
    #[getter]
    fn channel_names(&self) -> Vec<String> {
        self.inner
            .channel_names()
            .into_iter()
            .map(|(n, _)| n.to_owned())
            .collect()
    }

    /// SI units of the output channels, ``{name: unit}``.
    #[getter]
    fn channel_units<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, u) in self.inner.channel_names() {
            d.set_item(n, u)?;
        }
        Ok(d)
    }

    /// The declared parameters (``[[parameters]]``) with their current values, in declaration
    /// order: a list of dicts ``name``, ``value`` (a factor for ``mode = "scale"``), ``unit``,
    /// ``description``, ``targets`` (model paths), ``mode`` (``"set"`` or ``"scale"``).
    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .parameters()
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("name", &p.name)?;
                d.set_item("value", p.value)?;
                d.set_item("unit", &p.unit)?;
                d.set_item("description", &p.description)?;
                d.set_item("targets", &p.targets)?;
                d.set_item(
                    "mode",
                    match p.mode {
                        sprung::ParameterMode::Set => "set",
                        sprung::ParameterMode::Scale => "scale",
                    },
                )?;
                Ok(d)
            })
            .collect()
    }

    /// A new model with parameter values changed: ``with_parameters({"damper_scale": 1.2})``
    /// or ``with_parameters(damper_scale=1.2)``. A name is a declared parameter or a model path
    /// such as ``"force_elements.damper_L.damping"`` (docs/parameters.md). Unknown names (the
    /// error lists the declared ones), non-finite values and values the model validation
    /// rejects raise :class:`sprung.ModelError`.
    #[pyo3(signature = (values = None, **kwargs))]
    fn with_parameters(
        &self,
        py: Python<'_>,
        values: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut all: Vec<(String, f64)> = Vec::new();
        if let Some(v) = values {
            match v.cast::<PyDict>() {
                Ok(d) => {
                    for (k, x) in d.iter() {
                        all.push((k.extract()?, x.extract()?));
                    }
                }
                Err(_) => all = v.extract()?,
            }
        }
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                all.push((k.extract()?, v.extract()?));
            }
        }
        let pairs: Vec<(&str, f64)> = all.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let base = self.inner.clone();
        let m = py.detach(|| base.with_parameters(&pairs)).py()?;
        Ok(Self::new(Arc::new(m)))
    }

    /// The current value of a declared parameter or of the single number a model path
    /// addresses.
    fn parameter_value(&self, name: &str) -> PyResult<f64> {
        self.inner.parameter_value(name).py()
    }

    /// Number of velocity-level coordinates (6 per body, then the element states).
    #[getter]
    fn n_dof(&self) -> usize {
        self.inner.compiled().n_v()
    }

    /// The ``[solver]`` settings of the model file (method, step, t_end, output_interval, ...).
    fn default_settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.default_settings();
        let d = PyDict::new(py);
        d.set_item("method", &s.method)?;
        d.set_item("step", s.step)?;
        d.set_item("t_end", s.t_end)?;
        d.set_item("output_interval", s.output_interval)?;
        d.set_item("relinearise_every", s.relinearise_every)?;
        d.set_item("rtol", s.rtol)?;
        d.set_item("atol", s.atol)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let c = self.inner.compiled();
        format!(
            "sprung.Model('{}', {} DOF, {} inputs, {} channels)",
            c.name,
            c.n_v(),
            c.inputs.len(),
            self.inner.outputs().len()
        )
    }
}
