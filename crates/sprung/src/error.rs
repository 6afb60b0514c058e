//! Errors of the facade: each says what is wrong and how to fix it.

/// What can go wrong when building or driving a simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Loading, validating or compiling the model failed (file, line, element and a fix in the
    /// message).
    #[error("{0}")]
    Model(String),
    /// Invalid run settings.
    #[error("invalid settings: {0}")]
    Settings(String),
    /// An unknown or read-only input, an unknown channel, a non-finite value.
    #[error("{0}")]
    Input(String),
    /// A step failed (divergence, singular iteration matrix).
    #[error("step from t = {t} s failed: {message}")]
    Step {
        /// Time at the start of the failing step, s.
        t: f64,
        /// What happened.
        message: String,
    },
    /// A snapshot does not fit the simulation.
    #[error("{0}")]
    Snapshot(String),
    /// Static equilibrium not found.
    #[error("static equilibrium: {0}")]
    Equilibrium(String),
    /// Modal analysis failed.
    #[error("{0}")]
    Modes(String),
    /// A benchmark could not run (files, settings).
    #[error("{0}")]
    Bench(String),
    /// The model could not be accelerated ([`crate::Simulation::accelerate`]).
    #[error("{0}")]
    Accelerate(String),
}
