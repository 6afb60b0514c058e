//! `sprung-reduce` — the macro joint of document 004 (`../shared/seeds/004_bf53df81c0e560f5.txt`):
//! component-oriented model reduction of wheel suspensions. From the same model description, the
//! light link bodies of each corner are removed and replaced by one force element of the open
//! kind `macro_joint` ([`macro_joint`]) whose algebraic variables are the link poses, solved
//! locally by Newton on the links' loop closure (their static equilibrium) in every evaluation.
//!
//! * [`reduce()`]: model description → reduced model description ([`ReduceOptions`],
//!   [`Variant`]: elastokinematic keeps the link bushings as compliances, kinematic stiffens
//!   them by a stated factor as the force-element stand-in for ideal joints);
//! * [`stats::Statistics`]: the numbers of document 004, Table 1, for any model;
//! * [`register`]: adds the kind to an element registry (`sprung::element_registry()` does).
//!
//! Method and measured accuracy: `docs/macro-joint.md`.

pub mod lu;
pub mod macro_joint;
pub mod reduce;
pub mod stats;

pub use reduce::{
    LightBodies, ReduceError, ReduceOptions, Reduction, Variant, light_bodies, reduce,
    stiffen_link_bushings,
};
pub use stats::Statistics;

/// Adds the kind `macro_joint` to `registry`.
pub fn register(registry: &mut sprung_mbs::elements::ElementRegistry) {
    registry.register(macro_joint::INFO, macro_joint::build);
}
