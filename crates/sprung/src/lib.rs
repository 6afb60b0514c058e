//! `sprung` — real-time multibody simulation of vehicles, as a library: the facade every face
//! (the `sprung` command, FMUs, Python) sits on (`../shared/design/architecture.md`).
//!
//! A [`Model`] is loaded, validated and compiled once and shared (`Arc`); a [`Simulation`] holds
//! one run's data — time, positions, velocities, element states, runtime input values and the
//! workspaces — and steps it with the model's solver (LSRT2 at 1 ms by default, document 000).
//!
//! ```
//! use sprung::Simulation;
//!
//! # fn main() -> Result<(), sprung::Error> {
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/mass_spring_damper.toml");
//! let mut sim = Simulation::from_file(path)?;          // LSRT2, 1 ms, from the model file
//! sim.advance_to(0.5)?;                                // 500 fixed steps
//! let x = sim.channel("x")?;                           // output channel, m
//! let snapshot = sim.state();                          // serialisable (serde)
//! sim.advance_to(1.0)?;
//! sim.set_state(&snapshot)?;                           // back to t = 0.5 s, bit for bit
//! assert_eq!(sim.time(), 0.5);
//! let lin = sim.linearise()?;                          // A, B, C, D about the current state
//! assert_eq!(lin.a.nrows(), lin.state_names.len());
//! assert!(x < 0.0);                                    // the step force pushes the mass to -x
//! # Ok(()) }
//! ```
//!
//! * [`Simulation::step`], [`Simulation::advance_to`]: fixed steps of the model's method;
//!   [`Simulation::run`]: the one run loop (any method, fixed or adaptive) that `sprung run`
//!   uses too, with an observer that sees the output channels and may stop the run;
//! * [`Simulation::set_input`]: inputs declared `signal = { type = "runtime" }` are set by the
//!   caller (a controller, a driver model, an FMU master);
//! * [`Simulation::state`] / [`Simulation::set_state`]: snapshots;
//! * [`Simulation::channels`]: output channels with units;
//! * [`Simulation::equilibrium`], [`Simulation::modes`], [`Simulation::linearise`].
//!
//! Element kinds beyond the built-in bushing, spring, damper and stop go through the open
//! interface [`sprung_mbs::element_law::ElementLaw`] (docs/elements.md).

mod error;
pub mod kc;
pub mod kin_reduce;
pub mod kin_tables;
pub mod linearise;
mod model;
pub mod parameters;
mod simulation;
pub mod sweep;
pub mod workprecision;

pub use error::Error;
pub use sprung_accel::{AccelOptions, Built as AcceleratorBuild};

/// The Rust examples of `docs/parameters.md` run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/parameters.md")]
mod parameters_doc {}

/// The Rust example of `docs/kc.md` compiles as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/kc.md")]
mod kc_doc {}

/// The Rust examples of `docs/sweeps.md` run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/sweeps.md")]
mod sweeps_doc {}

/// The element kinds every face knows: the built-in kinds of `sprung-mbs` (Maxwell element,
/// anti-roll bar), the vehicle kinds of `sprung-vehicle` (tires on roads,
/// `docs/roads-and-contact.md`) and the macro joint of `sprung-reduce`. [`Model::from_file`] and [`Model::from_description`] compile
/// with it; add kinds of your own with `register` and [`Model::from_description_with`].
pub fn element_registry() -> sprung_mbs::elements::ElementRegistry {
    let mut r = sprung_vehicle::registry();
    // The macro joint of document 004 (`docs/macro-joint.md`), written by `sprung reduce`.
    sprung_reduce::register(&mut r);
    r
}
pub use linearise::{SparseStateSpace, StateSpace};
pub use model::Model;
pub use parameters::{ParameterInfo, ParameterMode};
pub use simulation::{
    ChannelValue, EquilibriumReport, InputRef, LinearisationPoint, RunReport, Simulation, Snapshot,
    StopReason,
};
pub use sprung_mbs::simulate::{Bounds, Limits, LinearSolverKind, RunSettings, RunSummary};
pub use sprung_solve::mech::adaptive::Control;
