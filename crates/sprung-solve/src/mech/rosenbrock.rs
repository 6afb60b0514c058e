//! Fixed-step Rosenbrock (linear-implicit) integration of a mechanical system on the reduced
//! velocity-level system — document 000, eqs. 6-11, generalised to any classical tableau.
//!
//! Stage i (h = step, γ = γ_ii, P = J_r K, L = left inverse of K, all at the linearisation point):
//! ```text
//! r̃_i = r + h Σ α_ij Δr_j,   ṽ_i = v + h Σ α_ij Δv_j,   t_i = t_k + c_i h          (eq. 9)
//! y_i = L K(r̃_i) ṽ_i,   s_v = Σ γ_ij Δv_j,   s_z = Σ γ_ij z_j                     (j < i)
//! (I − hγ J_v − (hγ)² P) Δv_i = q(t_i, r̃_i, ṽ_i) + hγ_i J_u u̇
//!                              + P (hγ y_i + h s_z + h²γ s_v) + h J_v s_v         (eq. 7)
//! Δr_i = K(r̃_i) ṽ_i + h K_lin (γ Δv_i + s_v),   z_i = L Δr_i                      (eq. 8)
//! r_{k+1} = r_k + h Σ b_i Δr_i,  v_{k+1} = v_k + h Σ b_i Δv_i                      (eq. 6)
//! ```
//! With a constant K (no rotational coordinates, or Euler angles frozen at the linearisation point)
//! this is literally eqs. 7-8 (y_i = ṽ_i). Evaluating K at the stage state instead of K_lin is the
//! Rosenbrock stage function proper; it keeps the order for bodies that rotate fast (a spinning
//! wheel), where eq. 8's K_lin ṽ would reduce the quaternion update to first order.
//!
//! The matrix of eq. 11 is the same in all stages (γ_ii = γ) and only changes with the
//! linearisation: one LU per linearisation, re-linearising every N steps (the Jacobians are frozen
//! in between — LSRT2 is a W-method and keeps order 2). Stage times are t0 + k h + c_i h computed
//! from the integer step index, never accumulated, so that discontinuous inputs switch exactly.

use crate::block::BlockMatrix;
use crate::dense::{LinearSolver, SingularMatrix};
use crate::mech::{Linearisation, MechanicalSystem, Tableau};

/// Why a step failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    /// The iteration matrix could not be factored.
    #[error("iteration matrix singular at t = {t} s: {source}")]
    Singular {
        /// Time of the failing step start.
        t: f64,
        /// Details from the linear solver.
        source: SingularMatrix,
    },
    /// The state became non-finite.
    #[error(
        "state is not finite after the step ending at t = {t} s (coordinate {index}): the simulation diverged; try a smaller step or check the model"
    )]
    NonFinite {
        /// Time at the end of the failing step.
        t: f64,
        /// First non-finite coordinate (positions first, then velocities).
        index: usize,
    },
    /// Step size fell below the resolvable limit (adaptive methods).
    #[error(
        "step size {h:e} s too small at t = {t} s: the problem may be too stiff for the tolerances or the solution blows up"
    )]
    StepTooSmall {
        /// Time.
        t: f64,
        /// Step size.
        h: f64,
    },
}

/// Work counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Accepted steps.
    pub steps: u64,
    /// Rejected steps (adaptive methods).
    pub rejected: u64,
    /// Evaluations of q.
    pub q_evals: u64,
    /// Linearisations (q with J_v, J_r K, J_u).
    pub linearisations: u64,
    /// LU factorisations.
    pub factorisations: u64,
    /// Linear solves (forward/back substitutions).
    pub solves: u64,
}

/// Workspace of one Rosenbrock stage sequence (allocated once).
#[derive(Debug)]
pub(crate) struct StageWork {
    pub dr: Vec<Vec<f64>>,
    pub dv: Vec<Vec<f64>>,
    pub z: Vec<Vec<f64>>,
    pub r_st: Vec<f64>,
    pub v_st: Vec<f64>,
    pub q_st: Vec<f64>,
    pub fr: Vec<f64>,
    pub y: Vec<f64>,
    pub sv: Vec<f64>,
    pub sz: Vec<f64>,
    pub tmp: Vec<f64>,
    pub rhs: Vec<f64>,
}

impl StageWork {
    pub fn new(s: usize, n_r: usize, n_v: usize) -> Self {
        Self {
            dr: vec![vec![0.0; n_r]; s],
            dv: vec![vec![0.0; n_v]; s],
            z: vec![vec![0.0; n_v]; s],
            r_st: vec![0.0; n_r],
            v_st: vec![0.0; n_v],
            q_st: vec![0.0; n_v],
            fr: vec![0.0; n_r],
            y: vec![0.0; n_v],
            sv: vec![0.0; n_v],
            sz: vec![0.0; n_v],
            tmp: vec![0.0; n_v],
            rhs: vec![0.0; n_v],
        }
    }
}

/// Forms the iteration matrix A = I − hγ J_v − (hγ)² J_r K of eq. 11 in place.
pub(crate) fn iteration_matrix(lin: &Linearisation, hg: f64, a: &mut BlockMatrix) {
    lin.j_v.scaled_plus_identity_into(-hg, 1.0, a);
    a.axpy(-hg * hg, &lin.j_rk);
}

/// Runs all stages of one step from (t, r, v) with step h. `fresh_q` is q(t, r, v) if the caller
/// has it (e.g. from a linearisation at this very state). Stage increments end up in `w.dr`, `w.dv`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stages<S: MechanicalSystem + ?Sized>(
    sys: &mut S,
    tab: &Tableau,
    lin: &Linearisation,
    lu: &mut dyn LinearSolver,
    t: f64,
    h: f64,
    r: &[f64],
    v: &[f64],
    fresh_q: Option<&[f64]>,
    w: &mut StageWork,
    stats: &mut Stats,
) {
    let s = tab.stages;
    let g = tab.gamma;
    for i in 0..s {
        // Stage state (eq. 9).
        w.r_st.copy_from_slice(r);
        w.v_st.copy_from_slice(v);
        for j in 0..i {
            let a = h * tab.alpha[i * s + j];
            if a != 0.0 {
                axpy(a, &w.dr[j], &mut w.r_st);
                axpy(a, &w.dv[j], &mut w.v_st);
            }
        }
        let ti = t + tab.c[i] * h;
        match fresh_q {
            Some(q) if i == 0 => w.q_st.copy_from_slice(q),
            _ => {
                sys.accelerations(ti, &w.r_st, &w.v_st, &mut w.q_st);
                stats.q_evals += 1;
            }
        }
        sys.kinematics(&w.r_st, &w.v_st, &mut w.fr);
        sys.tangent(&lin.r, &w.fr, &mut w.y);
        w.sv.fill(0.0);
        w.sz.fill(0.0);
        for j in 0..i {
            let gij = tab.gamma_ij[i * s + j];
            if gij != 0.0 {
                axpy(gij, &w.dv[j], &mut w.sv);
                axpy(gij, &w.z[j], &mut w.sz);
            }
        }
        // rhs = q + hγ_i q_t + P (hγ y + h s_z + h²γ s_v) + h J_v s_v
        for k in 0..w.tmp.len() {
            w.tmp[k] = h * g * w.y[k] + h * w.sz[k] + h * h * g * w.sv[k];
        }
        w.rhs.copy_from_slice(&w.q_st);
        axpy(h * tab.gamma_sum[i], &lin.q_t, &mut w.rhs);
        // s_v is exactly zero when no γ_ij (j < i) is set (always in stage 1): skip J_v then.
        let coupled = (0..i).any(|j| tab.gamma_ij[i * s + j] != 0.0);
        let jv_term = if coupled {
            Some((&lin.j_v, h, &w.sv[..]))
        } else {
            None
        };
        gemv_add(&lin.j_rk, &w.tmp, jv_term, &mut w.rhs);
        lu.solve_in_place(&mut w.rhs);
        stats.solves += 1;
        w.dv[i].copy_from_slice(&w.rhs);
        // Δr_i = K(r̃)ṽ + h K_lin (γ Δv_i + s_v); z_i = y + h (γ Δv_i + s_v)
        for k in 0..w.tmp.len() {
            w.tmp[k] = h * (g * w.dv[i][k] + w.sv[k]);
        }
        let (dr_i, _) = w.dr.split_at_mut(i + 1);
        sys.kinematics(&lin.r, &w.tmp, &mut dr_i[i]);
        axpy(1.0, &w.fr, &mut dr_i[i]);
        for k in 0..w.tmp.len() {
            w.z[i][k] = w.y[k] + w.tmp[k];
        }
    }
}

/// y += A x + β B z (B, if given, has A's pattern): both block products in one pass over the
/// pattern, with an unrolled kernel for 6 × 6 body blocks. Same sums as two `BlockMatrix::gemv`
/// calls up to the order of additions.
fn gemv_add(a: &BlockMatrix, x: &[f64], b: Option<(&BlockMatrix, f64, &[f64])>, y: &mut [f64]) {
    let p = a.pattern();
    if p.block_size() != 6 {
        a.gemv(1.0, x, 1.0, y);
        if let Some((b, beta, z)) = b {
            b.gemv(beta, z, 1.0, y);
        }
        return;
    }
    let (row_ptr, col_idx) = (p.row_ptr(), p.col_idx());
    for i in 0..p.n_blocks() {
        let mut acc = [0.0; 6];
        for (s, &j) in col_idx
            .iter()
            .enumerate()
            .take(row_ptr[i + 1])
            .skip(row_ptr[i])
        {
            block6_mul_add(
                &a.values()[36 * s..36 * s + 36],
                &x[6 * j..6 * j + 6],
                1.0,
                &mut acc,
            );
            if let Some((b, beta, z)) = b {
                block6_mul_add(
                    &b.values()[36 * s..36 * s + 36],
                    &z[6 * j..6 * j + 6],
                    beta,
                    &mut acc,
                );
            }
        }
        for (yr, ar) in y[6 * i..6 * i + 6].iter_mut().zip(acc) {
            *yr += ar;
        }
    }
}

/// acc += β M x for one row-major 6 × 6 block.
#[inline(always)]
fn block6_mul_add(m: &[f64], x: &[f64], beta: f64, acc: &mut [f64; 6]) {
    let m: &[f64; 36] = m.try_into().expect("6 x 6 block");
    let x: &[f64; 6] = x.try_into().expect("6-vector");
    for r in 0..6 {
        let row = &m[6 * r..6 * r + 6];
        let mut d = 0.0;
        for c in 0..6 {
            d += row[c] * x[c];
        }
        acc[r] += beta * d;
    }
}

#[inline]
pub(crate) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

pub(crate) fn first_non_finite(r: &[f64], v: &[f64]) -> Option<usize> {
    r.iter().chain(v.iter()).position(|x| !x.is_finite())
}

/// Fixed-step Rosenbrock integrator with a preallocated workspace: [`RosenbrockStepper::step`]
/// does not allocate.
pub struct RosenbrockStepper {
    tab: Tableau,
    lin: Linearisation,
    a: BlockMatrix,
    lu: Box<dyn LinearSolver + Send>,
    work: StageWork,
    /// Step size h, s.
    pub h: f64,
    /// Start time t0, s.
    pub t0: f64,
    /// Re-linearise every this many steps (≥ 1).
    pub relinearise_every: u64,
    /// Work counters.
    pub stats: Stats,
    q0: Vec<f64>,
    have_lin: bool,
}

impl RosenbrockStepper {
    /// Creates a stepper for `sys` with the given linear solver.
    pub fn new<S: MechanicalSystem + ?Sized>(
        sys: &S,
        tab: Tableau,
        h: f64,
        t0: f64,
        relinearise_every: u64,
        lu: Box<dyn LinearSolver + Send>,
    ) -> Self {
        let pattern = sys.pattern();
        let s = tab.stages;
        Self {
            lin: Linearisation::new(sys.n_r(), pattern.clone()),
            a: BlockMatrix::zeros(pattern),
            work: StageWork::new(s, sys.n_r(), sys.n_v()),
            q0: vec![0.0; sys.n_v()],
            tab,
            lu,
            h,
            t0,
            relinearise_every: relinearise_every.max(1),
            stats: Stats::default(),
            have_lin: false,
        }
    }

    /// The tableau.
    pub fn tableau(&self) -> &Tableau {
        &self.tab
    }

    /// Time at the start of step `k`: t0 + k h (never accumulated).
    pub fn time(&self, k: u64) -> f64 {
        self.t0 + k as f64 * self.h
    }

    /// Advances (r, v) from step `k` (t = t0 + k h) to step k + 1 in place.
    pub fn step<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        let t = self.time(k);
        let relin = !self.have_lin || k.is_multiple_of(self.relinearise_every);
        if relin {
            sys.linearise(t, r, v, &mut self.lin);
            self.stats.linearisations += 1;
            iteration_matrix(&self.lin, self.h * self.tab.gamma, &mut self.a);
            self.lu
                .factor(&self.a)
                .map_err(|source| StepError::Singular { t, source })?;
            self.stats.factorisations += 1;
            self.have_lin = true;
            self.q0.copy_from_slice(&self.lin.q);
        } else {
            sys.accelerations(t, r, v, &mut self.q0);
            self.stats.q_evals += 1;
        }
        stages(
            sys,
            &self.tab,
            &self.lin,
            self.lu.as_mut(),
            t,
            self.h,
            r,
            v,
            Some(&self.q0),
            &mut self.work,
            &mut self.stats,
        );
        for i in 0..self.tab.stages {
            let b = self.h * self.tab.b[i];
            if b != 0.0 {
                axpy(b, &self.work.dr[i], r);
                axpy(b, &self.work.dv[i], v);
            }
        }
        sys.project(r);
        self.stats.steps += 1;
        match first_non_finite(r, v) {
            Some(index) => Err(StepError::NonFinite {
                t: self.time(k + 1),
                index,
            }),
            None => Ok(()),
        }
    }

    /// Forces a re-linearisation at the next step (e.g. after a discontinuity).
    pub fn invalidate(&mut self) {
        self.have_lin = false;
    }
}
