//! The exception hierarchy of the Python package: every `sprung::Error` variant becomes a
//! subclass of `sprung.Error` carrying the facade's located message (file, line, element and a
//! fix for model errors; the time of the failing step for simulation errors).

use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::PyException;

create_exception!(
    sprung,
    Error,
    PyException,
    "Base class of every error raised by sprung."
);
create_exception!(
    sprung,
    ModelError,
    Error,
    "Loading, validating or compiling a model failed; the message names the file, line, element and a fix."
);
create_exception!(
    sprung,
    SettingsError,
    Error,
    "Invalid run settings (step, method, tolerances, output interval, bounds)."
);
create_exception!(
    sprung,
    InputError,
    Error,
    "An unknown or read-only input, an unknown channel or a non-finite value."
);
create_exception!(
    sprung,
    SimulationError,
    Error,
    "A step or a run failed (divergence, singular iteration matrix, implausible state)."
);
create_exception!(
    sprung,
    SnapshotError,
    Error,
    "A snapshot does not fit the simulation or cannot be parsed."
);
create_exception!(
    sprung,
    EquilibriumError,
    Error,
    "Static equilibrium was not found."
);
create_exception!(sprung, ModesError, Error, "Modal analysis failed.");

/// The Python exception for a facade error.
pub fn to_py(e: sprung::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        sprung::Error::Model(_) => ModelError::new_err(msg),
        sprung::Error::Settings(_) => SettingsError::new_err(msg),
        sprung::Error::Input(_) => InputError::new_err(msg),
        sprung::Error::Step { .. } => SimulationError::new_err(msg),
        sprung::Error::Snapshot(_) => SnapshotError::new_err(msg),
        sprung::Error::Equilibrium(_) => EquilibriumError::new_err(msg),
        sprung::Error::Modes(_) => ModesError::new_err(msg),
        sprung::Error::Bench(_) => Error::new_err(msg),
        sprung::Error::Accelerate(_) => Error::new_err(msg),
    }
}

/// `Result<T, sprung::Error>` → `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Maps the error with [`to_py`].
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, sprung::Error> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
