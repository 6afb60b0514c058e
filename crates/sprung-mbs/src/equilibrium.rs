//! Static equilibrium by Newton's method with the analytic Jacobian (issue: initial state
//! "equilibrium"): find r with q(t0, r, v = 0) = 0.
//!
//! At v = 0 the derivative of q with respect to the body perturbations (δx global, δθ body frame)
//! is exactly J_r K from the pipeline, so every Newton step solves (J_r K) δ = −q and applies δ to
//! positions and quaternions (q ← q ⊗ exp(δθ/2)). A backtracking line search on the residual keeps
//! the iteration robust for progressive (stiffening) characteristics. Directions without any
//! stiffness but also without load (a wheel free to spin in its bearing) make J_r K singular while
//! the equilibrium is still well defined up to that free motion; a tiny diagonal shift
//! (1e-12 of the largest diagonal entry, i.e. a negligible artificial stiffness) keeps the step
//! finite there and zero along the free motion. A genuinely unrestrained *loaded* direction shows
//! up as a huge step and is reported as singular, naming the body and direction. Convergence is measured on
//! the residual wrench (M q: N and N·m) relative to the applied load scale (gravity plus inputs), so
//! "q = 0 to 1e-9 relative to the applied loads" is the stopping rule.

use nalgebra::Vector3;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::rotation::quat_apply_body_increment;
use crate::system::MbsSystem;

/// Settings of the equilibrium search.
#[derive(Debug, Clone, Copy)]
pub struct EquilibriumOptions {
    /// Required residual wrench relative to the load scale.
    pub tolerance: f64,
    /// Maximum Newton iterations.
    pub max_iterations: usize,
}

impl Default for EquilibriumOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-10,
            max_iterations: 50,
        }
    }
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
}

/// Why the search failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EquilibriumError {
    /// The stiffness matrix is singular: something is not restrained.
    #[error(
        "static equilibrium is singular: the stiffness matrix J_r K has no full rank near coordinate {row} \
         (body '{body}', {dof}); the body is not restrained in that direction by any force element \
         (a mechanism or a free body). Add stiffness in that direction or start from the design state \
         (initial_state.kind = \"design\")"
    )]
    Singular {
        /// Scalar row of the failing pivot.
        row: usize,
        /// Name of the body.
        body: String,
        /// Degree of freedom of that body.
        dof: &'static str,
    },
    /// Newton did not converge.
    #[error(
        "static equilibrium did not converge in {iterations} iterations (relative residual {residual:e}); \
         the loads may exceed what the force elements can carry or the model is nearly singular"
    )]
    NoConvergence {
        /// Iterations done.
        iterations: usize,
        /// Final relative residual.
        residual: f64,
    },
}

/// Largest sensible Newton step component (m or rad).
const MAX_STEP: f64 = 10.0;

const DOF_NAMES: [&str; 6] = [
    "x",
    "y",
    "z",
    "rotation about body x",
    "rotation about body y",
    "rotation about body z",
];

/// Residual wrench norm (max over bodies of |m a| and |I α|).
fn residual(sys: &MbsSystem, q: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for (i, b) in sys.model().bodies.iter().enumerate() {
        let f = b.mass * Vector3::new(q[6 * i], q[6 * i + 1], q[6 * i + 2]);
        let t = b.inertia * Vector3::new(q[6 * i + 3], q[6 * i + 4], q[6 * i + 5]);
        m = m.max(f.norm()).max(t.norm());
    }
    m
}

/// Solves q(t0, r, 0) = 0 starting from `r0`.
pub fn solve(
    sys: &mut MbsSystem,
    t0: f64,
    r0: &[f64],
    opts: EquilibriumOptions,
) -> Result<Equilibrium, EquilibriumError> {
    let model = sys.model().clone();
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let v = vec![0.0; nv];
    let mut r = r0.to_vec();
    let mut lin = Linearisation::new(nr, sys.pattern());
    let mut lu = DenseLu::new(nv);
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
    let mut res = residual(sys, &q) / load_scale;
    let mut trial = r.clone();
    let mut q_trial = vec![0.0; nv];
    for it in 0..opts.max_iterations {
        if res <= opts.tolerance {
            return Ok(Equilibrium {
                r,
                iterations: it,
                relative_residual: res,
                load_scale,
            });
        }
        sys.linearise(t0, &r, &v, &mut lin);
        let scale = (0..nv)
            .map(|k| lin.j_rk.get(k, k).abs())
            .fold(0.0, f64::max);
        lin.j_rk.add_identity(-1e-12 * scale);
        let singular = |row: usize| EquilibriumError::Singular {
            row,
            body: model.bodies[(row / 6).min(model.bodies.len() - 1)]
                .name
                .clone(),
            dof: DOF_NAMES[row % 6],
        };
        lu.factor(&lin.j_rk).map_err(|e| singular(e.row()))?;
        let mut delta: Vec<f64> = lin.q.iter().map(|x| -x).collect();
        lu.solve_in_place(&mut delta);
        // A step of more than 10 m or 10 rad means an unrestrained loaded direction.
        if let Some((row, _)) = delta
            .iter()
            .enumerate()
            .find(|(_, d)| !d.is_finite() || d.abs() > MAX_STEP)
        {
            return Err(singular(row));
        }
        // Backtracking line search on the residual.
        let mut alpha = 1.0;
        loop {
            trial.copy_from_slice(&r);
            for i in 0..model.bodies.len() {
                for k in 0..3 {
                    trial[7 * i + k] += alpha * delta[6 * i + k];
                }
                let th = alpha * Vector3::new(delta[6 * i + 3], delta[6 * i + 4], delta[6 * i + 5]);
                quat_apply_body_increment(&mut trial[7 * i + 3..7 * i + 7], &th);
            }
            sys.accelerations(t0, &trial, &v, &mut q_trial);
            let res_trial = residual(sys, &q_trial) / load_scale;
            if res_trial.is_finite() && (res_trial < res || alpha < 1e-3) {
                r.copy_from_slice(&trial);
                res = res_trial;
                break;
            }
            alpha *= 0.5;
        }
    }
    if res <= opts.tolerance {
        return Ok(Equilibrium {
            r,
            iterations: opts.max_iterations,
            relative_residual: res,
            load_scale,
        });
    }
    Err(EquilibriumError::NoConvergence {
        iterations: opts.max_iterations,
        residual: res,
    })
}
