//! Static equilibrium by Newton's method with the analytic Jacobian (issue: initial state
//! "equilibrium"): find r with q(t0, r, v = 0) = 0.
//!
//! At v = 0 the derivative of q with respect to the body perturbations (δx global, δθ body frame)
//! is exactly J_r K from the pipeline, so every Newton step solves (J_r K) δ = −q and applies δ to
//! positions and quaternions (q ← q ⊗ exp(δθ/2)), damped as described below.
//!
//! # Damping
//! Steps are damped by the *natural monotonicity test* of the affine-covariant Newton method
//! (Deuflhard, Newton Methods for Nonlinear Problems, Springer 2004, sec. 3.3, NLEQ-ERR): a damped
//! step r ⊕ λΔ is accepted when the simplified Newton correction there, Δ̄ = −J⁻¹ q(r ⊕ λΔ) with
//! the same factors (one more back substitution), is smaller than the step: ‖Δ̄‖ ≤ (1 − λ/4) ‖Δ‖,
//! in the scaled norm of the step criterion (translations and element states per length scale,
//! rotations in rad, RMS over the coordinates). Otherwise λ is reduced to Deuflhard's prediction
//! ½ ‖Δ‖ λ² / ‖Δ̄ − (1 − λ) Δ‖ (at least halved, at most down to 1e-4). After a damped step the
//! next one starts at twice its factor. The test measures progress in the coordinates, not in the
//! residual forces: with stiff elements beside soft directions (rubber bushings a hundred times
//! stiffer than usual, links free to spin about their axis), a full step along a soft rotation
//! leaves second-order position errors that stiff elements turn into huge forces, and a line
//! search on the residual force then shortens every step to nothing (measured: the double
//! wishbone with all bushing stiffnesses × 100 stalled at a relative residual of 0.5 after 50
//! iterations; it converges with this test, see the tests). Where full steps are accepted (the
//! reference axles) the iterates are those of the undamped Newton method.
//!
//! # Linear algebra
//! J_r K has the block pattern of the body-coupling graph (document 000, section 3, Bild 3), so
//! the Newton steps are solved with the block-sparse LU of `sprung_solve::block_lu` (eqs. 12-17
//! there): the ordering and symbolic analysis ([`BlockSymbolic`]) is done once per search and
//! reused by every iteration; time and memory are linear in the number of bodies for chain- and
//! tree-like models (a 2000-body chain: milliseconds per iteration, a few MB; see
//! `docs/performance.md`, "Statics at scale"). [`EquilibriumSolver::Dense`] keeps the dense LU
//! (faer) as the reference path (quadratic memory, cubic time).
//!
//! Directions without any stiffness but also without load (a wheel free to spin in its bearing)
//! make J_r K singular while the equilibrium is still well defined up to that free motion; a tiny
//! diagonal shift (the larger of 1e-12 and 10 n ε of the largest diagonal entry, i.e. a negligible
//! artificial stiffness, above the pivot tolerance n ε max|a| of both LU solvers) keeps the step
//! finite there and zero along the free motion. The shift changes only the Newton matrix, never
//! the residual, so it does not move the converged equilibrium. A genuinely unrestrained *loaded*
//! direction shows up as a huge step and is reported as singular, naming the body and direction.
//!
//! # Convergence criterion
//! * **Residual** (the meaning of [`EquilibriumOptions::tolerance`]): the largest residual wrench
//!   over the bodies, max_i max(|m_i q_f,i|, |I_i q_τ,i|) (N and N·m, i.e. the out-of-balance force
//!   and moment of each body), divided by the load scale (total weight plus the magnitudes of the
//!   applied input forces/torques at t0, at least 1). Converged when it is ≤ `tolerance`.
//! * **Stall at round-off** (the answer to a search that "fails" at 1.01 × the tolerance): the
//!   residual cannot fall below the rounding error of evaluating q, which grows with the internal
//!   forces and the coordinates' magnitude (a long chain, stiff preloaded bushings) and with the
//!   conditioning of J_r K. When the last full Newton correction (before the line search) is below
//!   [`EquilibriumOptions::step_tolerance`] (translations divided by the model's length scale, the
//!   largest body distance from the centroid but at least 0.1 m; rotations in rad), the residual
//!   no longer drops by at least a factor 2 per iteration, and it is within
//!   [`EquilibriumOptions::stall_factor`] × `tolerance`, the positions are as accurate as the
//!   residual can tell and the search ends with [`Convergence::Stalled`] (the reason is recorded
//!   in [`Equilibrium::convergence`]).
//! * Otherwise the search fails after `max_iterations` with [`EquilibriumError::NoConvergence`],
//!   which gives the residual history, the last step, the body with the largest residual and
//!   what the history suggests (still converging, stalled above the tolerance, or not
//!   converging).
//!
//! # Models with ideal joints
//! A model with ideal or tabulated joints (`docs/joints.md`, [`crate::joints`]) has as unknowns
//! the free bodies' poses and the joint coordinates (the layout of [`MbsSystem`]: a jointed
//! body's first position slot). The residual is the projected q of [`MbsSystem`] at v = 0,
//! z̈_T = M_z⁻¹ Σ_b J_bᵀ M_b q_b per tree (the velocity-product term J̇ ż vanishes at rest), and
//! the Newton matrix its linearisation (`JointWork::linearise`: P J_rK J + G, the geometric
//! stiffness of the pose maps; V_z = 0 at ż = 0), i.e. the exact derivative of the residual. A
//! joint coordinate is moved by z ← z + λ δz; the padding slots of a jointed body's block (and
//! every slot of a follower) get an identity row and stay 0. The convergence test measures the
//! *generalised* forces f_T = M_z z̈_T (Jourdain: the out-of-balance loads on the tree's
//! coordinates, the reaction forces of the joints dropped out): per tree the root's force (N,
//! global) and moment (N m, root axes) — the out-of-balance wrench of the whole tree — and per
//! joint coordinate its generalised force (N for a displacement such as a prismatic or a
//! travel coordinate, N m for an angle); bodies outside the trees keep their wrench. Step
//! weights: a joint coordinate scaled by how far it moves the body's points
//! ([`crate::joints::JointDef::error_scale`]) over the length scale. The length scale is taken
//! from the expanded body positions.
//!
//! Long searches report every iteration to an observer ([`solve_observed`]); the library never
//! prints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nalgebra::Vector3;
use sprung_solve::block_lu::{BlockSparseLu, BlockSymbolic};
use sprung_solve::dense::{DenseLu, LinearSolver, SingularMatrix};
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::compiled::CompiledModel;
use crate::joints::{Perturb, TreeKin};
use crate::rotation::quat_apply_body_increment;
use crate::system::MbsSystem;

/// Linear solver for the Newton steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EquilibriumSolver {
    /// Block-sparse LU along the body-coupling graph, symbolic analysis reused (default).
    #[default]
    BlockSparse,
    /// Dense LU (faer): the reference path; quadratic memory, cubic time in the body count.
    Dense,
}

/// Settings of the equilibrium search.
#[derive(Debug, Clone, Copy)]
pub struct EquilibriumOptions {
    /// Required residual wrench relative to the load scale (see the module documentation).
    pub tolerance: f64,
    /// Maximum Newton iterations.
    pub max_iterations: usize,
    /// Scaled Newton step (translation / length scale, rotation in rad) below which a residual
    /// that no longer decreases counts as stalled at round-off level.
    pub step_tolerance: f64,
    /// A stalled search is accepted only with a residual ≤ `stall_factor` × `tolerance`.
    pub stall_factor: f64,
    /// Linear solver for the Newton steps.
    pub solver: EquilibriumSolver,
}

impl Default for EquilibriumOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-10,
            max_iterations: 50,
            step_tolerance: 1e-10,
            stall_factor: 100.0,
            solver: EquilibriumSolver::BlockSparse,
        }
    }
}

/// How the search ended successfully.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Convergence {
    /// The relative residual reached the tolerance.
    Residual,
    /// The residual stalled at round-off level above the tolerance (but within
    /// `stall_factor` × tolerance) while the Newton steps had become negligible.
    Stalled {
        /// The last scaled Newton correction (before the line search).
        step: f64,
    },
}

/// Result of a successful search.
#[derive(Debug, Clone)]
pub struct Equilibrium {
    /// Positions at equilibrium (velocities are zero).
    pub r: Vec<f64>,
    /// Newton iterations used.
    pub iterations: usize,
    /// Final residual wrench relative to the load scale.
    pub relative_residual: f64,
    /// Load scale used (N): total weight plus the magnitudes of all input forces/torques at t0.
    pub load_scale: f64,
    /// Why the search stopped.
    pub convergence: Convergence,
    /// Relative residual before the first and after every iteration.
    pub history: Vec<f64>,
    /// The state part of v at equilibrium: element states in their 6-wide blocks (zero rates;
    /// empty for a model without element states).
    pub states: Vec<f64>,
}

/// One Newton iteration, reported to the observer of [`solve_observed`].
#[derive(Debug, Clone, Copy)]
pub struct EquilibriumProgress {
    /// Iterations done (1 after the first).
    pub iteration: usize,
    /// Relative residual after this iteration.
    pub relative_residual: f64,
    /// Scaled size of the step taken (see [`EquilibriumOptions::step_tolerance`]).
    pub step: f64,
    /// Line-search factor of the step (1 = full Newton step).
    pub alpha: f64,
    /// Wall time since the search started.
    pub elapsed: Duration,
}

/// Why the search failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EquilibriumError {
    /// The stiffness matrix is singular: something is not restrained.
    #[error(
        "static equilibrium is singular: the stiffness matrix J_r K has no full rank near coordinate {row} \
         ({coordinate}); {hint}"
    )]
    Singular {
        /// Scalar row of the failing pivot.
        row: usize,
        /// The coordinate: `body 'NAME', DOF` or `state K of element 'NAME' (KIND)`.
        coordinate: String,
        /// What makes such a coordinate singular and how to fix it.
        hint: &'static str,
    },
    /// Newton did not converge (the details are boxed to keep the error small).
    #[error(transparent)]
    NoConvergence(Box<NoConvergence>),
}

/// What happened in a search that did not converge (see [`EquilibriumError::NoConvergence`]).
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "static equilibrium did not converge in {iterations} iterations: relative residual {residual:.3e} \
     against a tolerance of {tolerance:.1e} (residual history {}); last step {step:.2e} (scaled), \
     line-search factor {alpha}; largest residual at body '{body}' ({what} of {worst:.3e} {unit}); {diagnosis}",
    history_text(.history)
)]
pub struct NoConvergence {
    /// Iterations done.
    pub iterations: usize,
    /// Final relative residual.
    pub residual: f64,
    /// The tolerance that was asked for.
    pub tolerance: f64,
    /// Relative residual before the first and after every iteration.
    pub history: Vec<f64>,
    /// Last scaled Newton step.
    pub step: f64,
    /// Line-search factor of the last step.
    pub alpha: f64,
    /// Body with the largest residual wrench.
    pub body: String,
    /// "force" or "moment".
    pub what: &'static str,
    /// "N" or "N m".
    pub unit: &'static str,
    /// Its residual force or moment (N or N·m).
    pub worst: f64,
    /// What the history suggests.
    pub diagnosis: String,
}

fn history_text(h: &[f64]) -> String {
    let fmt = |x: &f64| format!("{x:.2e}");
    if h.len() <= 12 {
        h.iter().map(fmt).collect::<Vec<_>>().join(", ")
    } else {
        let head: Vec<_> = h[..6].iter().map(fmt).collect();
        let tail: Vec<_> = h[h.len() - 5..].iter().map(fmt).collect();
        format!("{}, ..., {}", head.join(", "), tail.join(", "))
    }
}

/// Largest sensible Newton step component (m or rad).
const MAX_STEP: f64 = 10.0;

/// Smallest damping factor of a Newton step; a step damped this far is taken anyway (the
/// iteration then either recovers or ends with the diagnosis of a failed search).
const MIN_DAMPING: f64 = 1e-4;

const DOF_NAMES: [&str; 6] = [
    "x",
    "y",
    "z",
    "rotation about body x",
    "rotation about body y",
    "rotation about body z",
];

/// What the largest residual load is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    /// A body's (or a tree's) out-of-balance force, N.
    Force,
    /// A body's (or a tree's) out-of-balance moment, N m.
    Moment,
    /// The generalised force on a joint coordinate (N or N m per unit of the coordinate).
    Generalised,
}

impl Load {
    fn what(self) -> &'static str {
        match self {
            Load::Force => "force",
            Load::Moment => "moment",
            Load::Generalised => "generalised force on its joint coordinate",
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Load::Force => "N",
            Load::Moment => "N m",
            Load::Generalised => "N or N m",
        }
    }
}

/// The largest residual load: its magnitude, the body and its kind.
#[derive(Debug, Clone, Copy)]
struct Worst {
    value: f64,
    body: usize,
    load: Load,
}

/// Residual loads of the search (module docs, "Convergence criterion" and "Models with ideal
/// joints"): per free body outside the joint trees its wrench (|m q_f|, |I q_τ|); per tree the
/// generalised forces f = M_z z̈ (the root's force and moment, each joint coordinate's load).
struct ResidualLoads {
    /// Per joint tree: its kinematics (for J_b and M_b J_b at the current positions).
    kin: Vec<TreeKin>,
    /// Per joint tree: scratch for z̈.
    zdd: Vec<Vec<f64>>,
    /// Per joint tree: scratch for f = M_z z̈.
    f: Vec<Vec<f64>>,
}

impl ResidualLoads {
    fn new(model: &CompiledModel) -> Self {
        Self {
            kin: model.joints.trees.iter().map(TreeKin::new).collect(),
            zdd: model
                .joints
                .trees
                .iter()
                .map(|t| vec![0.0; t.n_coords()])
                .collect(),
            f: model
                .joints
                .trees
                .iter()
                .map(|t| vec![0.0; t.n_coords()])
                .collect(),
        }
    }

    /// The largest residual load at positions `r` (velocities `v` = 0 in the body slots) with
    /// (projected) accelerations `q`. NaN propagates (a non-finite residual must not look
    /// converged).
    fn worst(&mut self, model: &CompiledModel, r: &[f64], v: &[f64], q: &[f64]) -> Worst {
        let mut worst = Worst {
            value: 0.0,
            body: 0,
            load: Load::Force,
        };
        let consider = |x: f64, body: usize, load: Load, worst: &mut Worst| {
            if x.is_nan() {
                *worst = Worst {
                    value: f64::NAN,
                    body,
                    load,
                };
                return false;
            }
            if x > worst.value {
                *worst = Worst {
                    value: x,
                    body,
                    load,
                };
            }
            true
        };
        let joints = &model.joints;
        for (i, b) in model.bodies.iter().enumerate() {
            if joints.tree_of.get(i).is_some_and(Option::is_some) {
                continue;
            }
            let f = (b.mass * Vector3::new(q[6 * i], q[6 * i + 1], q[6 * i + 2])).norm();
            let t = (b.inertia * Vector3::new(q[6 * i + 3], q[6 * i + 4], q[6 * i + 5])).norm();
            if !consider(f, i, Load::Force, &mut worst) || !consider(t, i, Load::Moment, &mut worst)
            {
                return worst;
            }
        }
        for (t, tree) in joints.trees.iter().enumerate() {
            let kin = &mut self.kin[t];
            let first = tree.bodies[0];
            if joints
                .tree_kinematics(model, t, r, v, Perturb::None, kin)
                .is_err()
            {
                // A singular M_z at a trial point: not a valid residual.
                consider(f64::NAN, first, Load::Generalised, &mut worst);
                return worst;
            }
            let n = tree.n_coords();
            let zdd = &mut self.zdd[t];
            for (z, &vi) in zdd.iter_mut().zip(&tree.coords) {
                *z = q[vi];
            }
            // f = M_z z̈ = Σ_b (M_b J_b)ᵀ (J_b z̈) over the bodies with mass.
            let f = &mut self.f[t];
            f.fill(0.0);
            for (lb, massless) in tree.massless.iter().enumerate() {
                if *massless {
                    continue;
                }
                for row in 0..6 {
                    let jrow = &kin.jac[(6 * lb + row) * n..(6 * lb + row + 1) * n];
                    let a: f64 = jrow.iter().zip(zdd.iter()).map(|(j, z)| j * z).sum();
                    if a == 0.0 {
                        continue;
                    }
                    for (fc, m) in f.iter_mut().zip(kin.projection_row(lb, row, false)) {
                        *fc += m * a;
                    }
                }
            }
            let mut c0 = 0;
            if let Some(root) = tree.root {
                let fr = Vector3::new(f[0], f[1], f[2]).norm();
                let mr = Vector3::new(f[3], f[4], f[5]).norm();
                if !consider(fr, root, Load::Force, &mut worst)
                    || !consider(mr, root, Load::Moment, &mut worst)
                {
                    return worst;
                }
                c0 = 6;
            }
            for (fc, vi) in f.iter().zip(&tree.coords).skip(c0) {
                if !consider(fc.abs(), vi / 6, Load::Generalised, &mut worst) {
                    return worst;
                }
            }
        }
        worst
    }
}

/// What a velocity-level coordinate of the search is (step weights, update, errors).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    /// A free body's translation, m.
    Translation,
    /// A free body's rotation (body axes), rad.
    Rotation,
    /// A joint coordinate; the value: how far it moves the body's points, m per unit
    /// ([`crate::joints::JointDef::error_scale`]).
    Joint(f64),
    /// An element state.
    State,
    /// Neither (padding of a jointed body's or a state's block, a follower's block): an
    /// identity row, stays 0.
    Padding,
}

/// Length scale of the model for the step criterion: the largest distance of a body from the
/// centroid of all bodies, at least 0.1 m.
fn length_scale(r: &[f64], n_bodies: usize) -> f64 {
    if n_bodies == 0 {
        return 0.1;
    }
    let mut c = Vector3::zeros();
    for i in 0..n_bodies {
        c += Vector3::new(r[7 * i], r[7 * i + 1], r[7 * i + 2]);
    }
    c /= n_bodies as f64;
    (0..n_bodies)
        .map(|i| (Vector3::new(r[7 * i], r[7 * i + 1], r[7 * i + 2]) - c).norm())
        .fold(0.1, f64::max)
}

enum Factor {
    Sparse(BlockSparseLu),
    Dense(DenseLu),
}

impl Factor {
    fn factor(&mut self, a: &sprung_solve::block::BlockMatrix) -> Result<(), SingularMatrix> {
        match self {
            Self::Sparse(lu) => lu.factor(a),
            Self::Dense(lu) => LinearSolver::factor(lu, a),
        }
    }
    fn solve_in_place(&mut self, x: &mut [f64]) {
        match self {
            Self::Sparse(lu) => lu.solve_in_place(x),
            Self::Dense(lu) => lu.solve_in_place(x),
        }
    }
}

/// Solves q(t0, r, 0) = 0 starting from `r0`.
pub fn solve(
    sys: &mut MbsSystem,
    t0: f64,
    r0: &[f64],
    opts: EquilibriumOptions,
) -> Result<Equilibrium, EquilibriumError> {
    solve_observed(sys, t0, r0, &opts, &mut |_| {})
}

/// Like [`solve`], and calls `observer` after every Newton iteration (for progress output of
/// long searches; the library itself never prints). Element states start from their initial
/// values ([`crate::element_law::ElementLaw::initial_states`]).
pub fn solve_observed(
    sys: &mut MbsSystem,
    t0: f64,
    r0: &[f64],
    opts: &EquilibriumOptions,
    observer: &mut dyn FnMut(&EquilibriumProgress),
) -> Result<Equilibrium, EquilibriumError> {
    let (_, v0) = sys.model().design_state();
    solve_from(sys, t0, r0, &v0, opts, observer)
}

/// Like [`solve_observed`], with the element states starting from the state part of `v0` (the
/// body velocities in it are ignored: statics has v = 0).
///
/// Element states s (force-element states, document 002 eqs. 3, 6, 7) are unknowns of the
/// search together with the positions: the residual is (q(r, 0, s), ṡ(r, 0, s)), the Newton
/// matrix is J_r K in the body columns and J_v in the state columns (the same block pattern),
/// with an identity on the padding coordinates of the 6-wide state blocks. The state residual is
/// max |ṡ| relative to the model's length scale per second (element states are deflections in
/// this engine), and must meet the same tolerance.
pub fn solve_from(
    sys: &mut MbsSystem,
    t0: f64,
    r0: &[f64],
    v0: &[f64],
    opts: &EquilibriumOptions,
    observer: &mut dyn FnMut(&EquilibriumProgress),
) -> Result<Equilibrium, EquilibriumError> {
    let start = Instant::now();
    let model = sys.model().clone();
    let nb = model.bodies.len();
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let nbv = 6 * nb;
    let mut v = vec![0.0; nv];
    v[nbv..].copy_from_slice(&v0[nbv..]);
    // Padding coordinates of the state blocks (neither state nor body): identity rows.
    let mut padding = vec![true; nv - nbv];
    for e in &model.open_elements {
        padding[e.state_offset..e.state_offset + e.law.n_states()].fill(false);
    }
    // What each coordinate is: free bodies' translations and rotations, joint coordinates,
    // element states, padding (module docs, "Models with ideal joints").
    let joint_of = |b: usize| model.joints.defs.get(b).and_then(Option::as_ref);
    let mut slots = vec![Slot::State; nv];
    for b in 0..nb {
        match joint_of(b) {
            None => {
                slots[6 * b..6 * b + 3].fill(Slot::Translation);
                slots[6 * b + 3..6 * b + 6].fill(Slot::Rotation);
            }
            Some(d) => {
                slots[6 * b..6 * b + 6].fill(Slot::Padding);
                if d.own {
                    slots[6 * b] = Slot::Joint(d.error_scale(sys.characteristic_lengths()[b]));
                }
            }
        }
    }
    for (k, pad) in padding.iter().enumerate() {
        if *pad {
            slots[nbv + k] = Slot::Padding;
        }
    }
    let mut loads = ResidualLoads::new(&model);
    let mut r = r0.to_vec();
    let pattern = sys.pattern();
    let mut lin = Linearisation::new(nr, pattern.clone());
    let mut lu = match opts.solver {
        EquilibriumSolver::BlockSparse => Factor::Sparse(BlockSparseLu::from_symbolic(Arc::new(
            BlockSymbolic::new(&pattern),
        ))),
        EquilibriumSolver::Dense => Factor::Dense(DenseLu::new(nv)),
    };
    let mut q = vec![0.0; nv];
    // Load scale: weight plus applied inputs at t0.
    sys.accelerations(t0, &r, &v, &mut q);
    let weight: f64 = model
        .bodies
        .iter()
        .map(|b| b.mass * model.gravity.norm())
        .sum();
    let inputs: f64 = model
        .inputs
        .iter()
        .zip(&sys.eval.u)
        .map(|(u, val)| (u.direction * *val).norm())
        .sum();
    let load_scale = (weight + inputs).max(1.0);
    // From the body positions (expanded: a jointed body's slots hold its coordinate).
    let length = length_scale(sys.expanded(&r, &v).1, nb);
    let state_residual = |q: &[f64]| {
        q[nbv..].iter().fold(
            0.0f64,
            |m, x| if x.is_nan() { f64::NAN } else { m.max(x.abs()) },
        ) / length
    };
    let mut worst = loads.worst(&model, &r, &v, &q);
    let mut res = (worst.value / load_scale).max(state_residual(&q));
    let mut history = vec![res];
    let mut trial = r.clone();
    let mut q_trial = vec![0.0; nv];
    let mut delta = vec![0.0; nv];
    let (mut last_step, mut last_alpha, mut last_newton) = (f64::INFINITY, 1.0, f64::INFINITY);
    let mut delta_bar = vec![0.0; nv];
    let mut next_alpha = 1.0;
    // Weights of the scaled norm: translations and element states per length scale, rotations
    // in rad, padding not counted.
    let weight: Vec<f64> = slots
        .iter()
        .map(|s| match s {
            Slot::Translation | Slot::State => 1.0 / length,
            Slot::Rotation => 1.0,
            Slot::Joint(l) => l / length,
            Slot::Padding => 0.0,
        })
        .collect();
    let scaled_norm = |x: &[f64]| {
        let s2: f64 = x.iter().zip(&weight).map(|(x, w)| (w * x).powi(2)).sum();
        (s2 / nv as f64).sqrt()
    };
    let singular = |row: usize| {
        let state = row.checked_sub(nbv).and_then(|k| {
            model.open_elements.iter().find_map(|e| {
                (k >= e.state_offset && k < e.state_offset + e.law.n_states())
                    .then(|| (e, k - e.state_offset))
            })
        });
        match state {
            Some((e, k)) => EquilibriumError::Singular {
                row,
                coordinate: format!("state {k} of element '{}' ({})", e.name, e.law.kind()),
                hint: "the element state has no equilibrium of its own at rest (a free \
                       integrator, e.g. a controller's integral or a tire's wheel spin); remove \
                       the element for a static solve or start from the design state \
                       (initial_state.kind = \"design\")",
            },
            None if joint_of(row / 6).is_some() => EquilibriumError::Singular {
                row,
                coordinate: format!(
                    "body '{}', its joint coordinate",
                    model.bodies[row / 6].name
                ),
                hint: "nothing restrains the joint coordinate (no force element resists its \
                       motion: a mechanism); add a spring or stop on it, or start from the \
                       design state (initial_state.kind = \"design\")",
            },
            None => EquilibriumError::Singular {
                row,
                coordinate: format!(
                    "body '{}', {}",
                    model.bodies[(row / 6).min(nb.saturating_sub(1))].name,
                    DOF_NAMES[row % 6]
                ),
                hint: "the body is not restrained in that direction by any force element (a \
                       mechanism or a free body). Add stiffness in that direction or start from \
                       the design state (initial_state.kind = \"design\")",
            },
        }
    };
    let done = |r: Vec<f64>, v: &[f64], it: usize, res: f64, convergence, history| Equilibrium {
        r,
        iterations: it,
        relative_residual: res,
        load_scale,
        convergence,
        history,
        states: v[nbv..].to_vec(),
    };
    if nv == 0 {
        return Ok(done(r, &v, 0, 0.0, Convergence::Residual, history));
    }
    for it in 0..opts.max_iterations {
        if res <= opts.tolerance {
            return Ok(done(r, &v, it, res, Convergence::Residual, history));
        }
        sys.linearise(t0, &r, &v, &mut lin);
        if nv > nbv {
            // Element-state columns from J_v (states are unknowns, not positions); identity on
            // the padding.
            for bi in 0..pattern.n_blocks() {
                for sl in pattern.row_ptr()[bi]..pattern.row_ptr()[bi + 1] {
                    if pattern.col_idx()[sl] >= nb {
                        let jv: [f64; 36] = lin.j_v.block(sl).try_into().expect("6 x 6 block");
                        lin.j_rk.block_mut(sl).copy_from_slice(&jv);
                    }
                }
            }
            for (k, pad) in padding.iter().enumerate() {
                if *pad {
                    let i = nbv + k;
                    let sl = pattern.slot(i / 6, i / 6).expect("diagonal block");
                    lin.j_rk.block_mut(sl)[7 * (i % 6)] = 1.0;
                }
            }
        }
        let scale = (0..nv)
            .map(|k| lin.j_rk.get(k, k).abs())
            .fold(0.0, f64::max);
        let shift = (1e-12f64).max(10.0 * nv as f64 * f64::EPSILON);
        lin.j_rk.add_identity(-shift * scale);
        if !model.joints.is_empty() {
            // The padding of jointed bodies' blocks (and followers' blocks): identity rows
            // (after the shift: they take no part in its scale).
            for (i, s) in slots[..nbv].iter().enumerate() {
                if *s == Slot::Padding {
                    let sl = pattern.slot(i / 6, i / 6).expect("diagonal block");
                    lin.j_rk.block_mut(sl)[7 * (i % 6)] = 1.0;
                }
            }
        }
        lu.factor(&lin.j_rk).map_err(|e| singular(e.row()))?;
        for (d, x) in delta.iter_mut().zip(&lin.q) {
            *d = -x;
        }
        lu.solve_in_place(&mut delta);
        // A step of more than 10 m or 10 rad of a body means an unrestrained loaded direction.
        // Element states are in their own units (a filtered velocity may settle from 20 m/s to
        // 0 in one step), so for them only a non-finite step is an error.
        if let Some((row, _)) = delta
            .iter()
            .enumerate()
            .find(|&(k, d)| !d.is_finite() || (k < nbv && d.abs() > MAX_STEP))
        {
            return Err(singular(row));
        }
        let full_step = (0..nb)
            .map(|i| match slots[6 * i] {
                Slot::Translation => {
                    let t = Vector3::new(delta[6 * i], delta[6 * i + 1], delta[6 * i + 2]).norm();
                    let a =
                        Vector3::new(delta[6 * i + 3], delta[6 * i + 4], delta[6 * i + 5]).norm();
                    (t / length).max(a)
                }
                Slot::Joint(l) => delta[6 * i].abs() * l / length,
                _ => 0.0,
            })
            .fold(0.0, f64::max);
        // Damping by the natural monotonicity test (module docs, "Damping").
        let norm_full = scaled_norm(&delta);
        let mut alpha = next_alpha;
        let res_old = res;
        let v_old = v.clone();
        loop {
            for (k, x) in v[nbv..].iter_mut().enumerate() {
                *x = v_old[nbv + k] + alpha * delta[nbv + k];
            }
            trial.copy_from_slice(&r);
            for i in 0..nb {
                match slots[6 * i] {
                    Slot::Translation => {
                        for k in 0..3 {
                            trial[7 * i + k] += alpha * delta[6 * i + k];
                        }
                        let th = alpha
                            * Vector3::new(delta[6 * i + 3], delta[6 * i + 4], delta[6 * i + 5]);
                        quat_apply_body_increment(&mut trial[7 * i + 3..7 * i + 7], &th);
                    }
                    Slot::Joint(_) => trial[7 * i] += alpha * delta[6 * i],
                    _ => {}
                }
            }
            sys.accelerations(t0, &trial, &v, &mut q_trial);
            let w_trial = loads.worst(&model, &trial, &v, &q_trial);
            let res_trial = (w_trial.value / load_scale).max(state_residual(&q_trial));
            // Simplified Newton correction at the trial point with the same factors.
            for (d, x) in delta_bar.iter_mut().zip(&q_trial) {
                *d = -x;
            }
            lu.solve_in_place(&mut delta_bar);
            let norm_bar = scaled_norm(&delta_bar);
            let monotone = norm_bar <= (1.0 - alpha / 4.0) * norm_full;
            if res_trial.is_finite()
                && (monotone || res_trial <= opts.tolerance || alpha <= MIN_DAMPING)
            {
                r.copy_from_slice(&trial);
                res = res_trial;
                worst = w_trial;
                // Next iteration: a full step after a full step, else twice this factor.
                next_alpha = if alpha >= 1.0 {
                    1.0
                } else {
                    (2.0 * alpha).min(1.0)
                };
                break;
            }
            // Deuflhard's prediction μ = ½ ‖Δ‖ λ² / ‖Δ̄ − (1 − λ) Δ‖, at least halving.
            let gap = {
                let mut s2 = 0.0;
                for (k, (b, d)) in delta_bar.iter().zip(&delta).enumerate() {
                    let w = weight[k];
                    s2 += (w * (b - (1.0 - alpha) * d)).powi(2);
                }
                (s2 / nv as f64).sqrt()
            };
            let mu = if res_trial.is_finite() && gap > 0.0 {
                0.5 * norm_full * alpha * alpha / gap
            } else {
                0.0
            };
            alpha = (0.5 * alpha).min(mu).max(MIN_DAMPING);
        }
        last_step = alpha * full_step;
        last_newton = full_step;
        last_alpha = alpha;
        history.push(res);
        observer(&EquilibriumProgress {
            iteration: it + 1,
            relative_residual: res,
            step: last_step,
            alpha,
            elapsed: start.elapsed(),
        });
        if res > opts.tolerance
            && full_step <= opts.step_tolerance
            && res > 0.5 * res_old
            && res <= opts.stall_factor * opts.tolerance
        {
            return Ok(done(
                r,
                &v,
                it + 1,
                res,
                Convergence::Stalled { step: full_step },
                history,
            ));
        }
    }
    if res <= opts.tolerance {
        return Ok(done(
            r,
            &v,
            opts.max_iterations,
            res,
            Convergence::Residual,
            history,
        ));
    }
    // Diagnosis from the history of the last few iterations.
    let n = history.len();
    let recent = &history[n.saturating_sub(4)..];
    let rate = if recent.len() >= 2 && recent[0] > 0.0 {
        (recent[recent.len() - 1] / recent[0]).powf(1.0 / (recent.len() - 1) as f64)
    } else {
        1.0
    };
    let diagnosis = if rate < 0.5 {
        format!(
            "the residual was still falling (by a factor {rate:.2} per iteration): \
             allow more iterations (max_iterations)"
        )
    } else if last_newton <= opts.step_tolerance {
        format!(
            "the residual stalled while the steps became negligible: it sits at the round-off \
             level of this model, above {:.0} x the tolerance; ask for a tolerance near {:.0e}",
            opts.stall_factor,
            res * 10.0
        )
    } else if last_alpha < 1.0 {
        "the line search had to shorten the Newton steps and the residual stopped falling: the \
         loads may exceed what the force elements can carry (a characteristic that saturates or \
         softens), or the model is nearly singular"
            .to_string()
    } else {
        "the Newton iteration is not converging: the model may be nearly singular (a soft or \
         free direction) or its characteristics not smooth near the equilibrium"
            .to_string()
    };
    let b = &model.bodies[worst.body.min(nb - 1)];
    Err(EquilibriumError::NoConvergence(Box::new(NoConvergence {
        iterations: opts.max_iterations,
        residual: res,
        tolerance: opts.tolerance,
        history,
        step: last_step,
        alpha: last_alpha,
        body: b.name.clone(),
        what: worst.load.what(),
        unit: worst.load.unit(),
        worst: worst.value,
        diagnosis,
    })))
}
