//! `sprung-solve` — numerics with no mechanics inside.
//!
//! * [`block`]: block-sparse matrices whose pattern follows a coupling graph (document 000, Bild 3).
//! * [`block_lu`]: block-sparse LU with a fill-reducing order and reusable symbolic analysis.
//! * [`compact`]: dense LU and products on the active coordinates of a system with inert ones
//!   (relative coordinates: followers, joint-coordinate padding).
//! * [`cpu`]: run-time detection of the optional AVX2 + FMA kernels.
//! * [`dense`]: dense LU (faer), the oracle and fallback for the block-sparse solver.
//! * [`mech`]: the mechanical second-order system r' = K(r) v, v' = q(r, v, u) and the
//!   linear-implicit integrators that solve the reduced velocity-level system (document 000, eqs. 6-11).
//! * [`ode`]: the general first-order ODE suite (document 001).

pub mod block;
pub mod block_lu;
pub mod compact;
pub mod cpu;
pub mod dense;
pub mod mech;
pub mod ode;
