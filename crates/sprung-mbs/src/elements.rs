//! Element kinds implemented through the open interface of [`crate::element_law`], and the
//! registry that turns `[[elements]]` entries of a model file into laws.
//!
//! Adding a kind: a file here with a type implementing [`crate::element_law::ElementLaw`], a
//! [`registry::KindInfo`] describing its markers, parameters, states and outputs, a factory, and
//! one line in [`registry::ElementRegistry::builtin`]. Library users register their own kinds on
//! a registry and compile with [`crate::compile::compile_with`].
//!
//! The built-in kinds (bushing, spring, damper, stop) are kinds of the same `[[elements]]`
//! syntax ([`builtin`]); their elements are stored per kind in SIMD arrays.

pub mod anti_roll_bar;
pub mod builtin;
pub mod maxwell;
pub mod registry;

pub use registry::{ElementParams, ElementRegistry, KindInfo, ParamInfo};
