//! `sprung-mbs` — the multibody system of source document 000: rigid bodies coupled only by force
//! elements (bushings, point-to-point springs, dampers and stops).
//!
//! * [`compile()`]: model description → flat, index-based [`compiled::CompiledModel`] (Bild 4);
//! * [`pipeline`]: the evaluation pipeline of Bild 6 — body and marker kinematics
//!   ([`kinematics`]), force elements with analytic partials ([`bushing`], [`p2p`]), Newton–Euler
//!   per body, assembly of q, J_r K, J_v and J_u in 6 × 6 body blocks;
//! * [`pack`]: q with four elements of a kind side by side in SIMD lanes (the packs of
//!   [`bushing`] and [`p2p`], whose laws are written once for one element and for four lanes,
//!   [`arith`]), the same results to round-off;
//! * [`system`]: the model as a mechanical system r' = K(r) v, v' = q for `sprung-solve`;
//! * [`equilibrium`]: static equilibrium by Newton with the analytic Jacobian and the block-sparse
//!   LU (symbolic analysis once per search);
//! * [`modes`]: eigenvalues of the linearisation, dense or the lowest k by shift-invert;
//! * [`joints`]: ideal joints in relative coordinates (document 004 sec. 2.2): pose maps, the
//!   trees of jointed bodies, the expansion to full body poses and the projection of q;
//! * [`outputs`]: named output channels with units;
//! * [`rotation`]: quaternions, SO(3) logarithm, swing-twist.

pub mod arith;
pub mod bushing;
pub mod compile;
pub mod compiled;
pub mod element;
pub mod element_law;
pub mod element_link;
pub mod elements;
pub mod equilibrium;
pub mod first_order;
pub mod joints;
pub mod kinematics;
pub mod m3;
pub mod modes;
mod open_chain;
pub mod outputs;
pub mod p2p;
pub mod pack;
pub mod pipeline;
pub mod rotation;
pub mod simulate;
pub mod system;
pub mod tree_kernel;

pub use compile::{CompileError, compile, compile_with};
pub use compiled::CompiledModel;
pub use pipeline::Evaluator;
pub use system::MbsSystem;
