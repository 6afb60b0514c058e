//! The Python package `sprung` (PyO3, abi3 wheel built by maturin; `docs/python.md`): the
//! native module `sprung._sprung` exposes the facade's `Model` and `Simulation` and the
//! per-variant run of parameter sweeps; `python/sprung/__init__.py` adds the pandas/numpy
//! conveniences and `sprung.sweep` (threads or a Dask cluster). Nothing here re-implements the
//! run loop: every step and run goes through `sprung::Simulation`.

use pyo3::prelude::*;

mod errors;
mod model;
mod settings;
mod simulation;
mod sweep;

/// Native part of the ``sprung`` package (use ``import sprung``).
#[pymodule]
fn _sprung(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<model::PyModel>()?;
    m.add_class::<simulation::PySimulation>()?;
    m.add_function(wrap_pyfunction!(sweep::run_variant, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::check_sweep, m)?)?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("ModelError", py.get_type::<errors::ModelError>())?;
    m.add("SettingsError", py.get_type::<errors::SettingsError>())?;
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("SimulationError", py.get_type::<errors::SimulationError>())?;
    m.add("SnapshotError", py.get_type::<errors::SnapshotError>())?;
    m.add(
        "EquilibriumError",
        py.get_type::<errors::EquilibriumError>(),
    )?;
    m.add("ModesError", py.get_type::<errors::ModesError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
