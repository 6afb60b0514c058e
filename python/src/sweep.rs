//! The per-variant function of `sprung.sweep` (python/sprung/_sweep.py schedules the variants
//! on threads or Dask workers): one call of the facade's `sprung::sweep::run_variant` with the
//! GIL released — the model recompiled with the variant's parameters, one simulation through
//! the run loop, the metrics of the recorded channels — so a row is the same bit for bit
//! wherever it runs, and the same as a row of `sprung sweep`.

use std::sync::atomic::AtomicBool;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sprung::sweep::{self, Metric, SweepSpec};

use crate::errors::IntoPyResult;
use crate::model::PyModel;

/// The sweep spec of metric strings `KIND:CHANNEL[:BAND]`.
fn spec(metrics: &[String], t_end: Option<f64>, step_time: Option<f64>) -> PyResult<SweepSpec> {
    let metrics = metrics
        .iter()
        .map(|m| Metric::parse(m))
        .collect::<Result<Vec<_>, _>>()
        .py()?;
    Ok(SweepSpec {
        metrics,
        t_end,
        step_time,
        keep_records: false,
    })
}

/// Checks a sweep before it runs: every parameter name is declared or a path of the model,
/// every metric parses and names an output channel, the end time is positive. Raises
/// :class:`sprung.ModelError` / :class:`sprung.SettingsError` listing what exists.
#[pyfunction]
#[pyo3(signature = (model, names, metrics, t_end = None))]
pub fn check_sweep(
    model: &PyModel,
    names: Vec<String>,
    metrics: Vec<String>,
    t_end: Option<f64>,
) -> PyResult<()> {
    let spec = spec(&metrics, t_end, None)?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    sweep::check(&model.inner, &names, &spec).py()
}

/// Runs one variant of ``model`` (GIL released) and returns its row: ``index``, the parameter
/// values, one entry per metric (labelled ``KIND:CHANNEL[:BAND]``), ``status`` (``ok`` or
/// ``failed``), ``message`` and ``t_reached`` (s). A rejected parameter value or a failed run
/// is the row's status, not an exception.
#[pyfunction]
#[pyo3(signature = (model, index, parameters, metrics, t_end = None, step_time = None))]
pub fn run_variant<'py>(
    py: Python<'py>,
    model: &PyModel,
    index: usize,
    parameters: Vec<(String, f64)>,
    metrics: Vec<String>,
    t_end: Option<f64>,
    step_time: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = spec(&metrics, t_end, step_time)?;
    let base = model.inner.clone();
    let never = AtomicBool::new(false);
    let row = py.detach(|| sweep::run_variant(&base, index, &parameters, &spec, &never));
    let d = PyDict::new(py);
    d.set_item("index", row.index)?;
    for (name, value) in &row.parameters {
        d.set_item(name, value)?;
    }
    for (m, value) in spec.metrics.iter().zip(&row.metrics) {
        d.set_item(m.label(), value)?;
    }
    d.set_item("status", row.status.label())?;
    d.set_item("message", row.status.message())?;
    d.set_item("t_reached", row.t_reached)?;
    Ok(d)
}
