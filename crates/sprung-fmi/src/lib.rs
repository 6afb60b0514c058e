//! `sprung-fmi` — sprung models as FMI 2.0 and FMI 3.0 co-simulation FMUs (docs/fmi.md).
//!
//! The crate is both the engine inside the FMU (built as a `cdylib` that exports the FMI 2 and
//! FMI 3 C functions, [`fmi2`] and [`fmi3`]) and the exporter (`rlib`: [`pack::pack`], used by
//! `sprung fmu`). One [`variables::VariableTable`] per model gives the value references,
//! names, causalities, units and start values of both `modelDescription.xml` versions
//! ([`xml`]) and of the running instance ([`instance::Instance`]), which drives a
//! [`sprung::Simulation`] — the FMU never re-implements the run loop.
//!
//! Every exported function runs inside [`guard::call`]: a panic is caught
//! (`std::panic::catch_unwind`), logged through the importer's logger and returned as an
//! error status; no unwinding crosses the C boundary.

pub mod ffi;
pub mod fmi2;
pub mod fmi3;
pub mod guard;
pub mod instance;
pub mod pack;
pub mod variables;
pub mod xml;

pub use instance::{Instance, Status};
pub use pack::{PackOptions, PackReport, pack};
pub use variables::{Binding, Causality, Variability, Variable, VariableTable};
pub use xml::{DescriptionInfo, FmiVersion, model_description};

/// What can go wrong in an FMU or while packing one; each message says what and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FmiError {
    /// The model cannot be exported or loaded.
    #[error("{0}")]
    Model(String),
    /// Instantiation failed (resources, token).
    #[error("{0}")]
    Instantiate(String),
    /// A call out of the FMI calling sequence.
    #[error("{0}")]
    Sequence(String),
    /// A bad argument (value reference, value, size).
    #[error("{0}")]
    Argument(String),
    /// A communication step was rejected.
    #[error("{0}")]
    Step(String),
    /// An FMU state could not be stored or restored.
    #[error("{0}")]
    State(String),
    /// The facade failed (a step diverged, an input was rejected, ...).
    #[error("{0}")]
    Sprung(#[from] sprung::Error),
    /// Writing the FMU failed.
    #[error("{0}")]
    Pack(String),
}
