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
use crate::compact::{ActiveSet, CompactProduct};
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
    /// Evaluations of the element-state rates alone
    /// ([`crate::mech::MechanicalSystem::state_rates`]; the partly implicit Euler's state step).
    pub state_rate_evals: u64,
    /// Linearisations (q with J_v, J_r K, J_u).
    pub linearisations: u64,
    /// LU factorisations.
    pub factorisations: u64,
    /// Linear solves (forward/back substitutions).
    pub solves: u64,
    /// Fixed steps redone or split because a piecewise characteristic changed segment
    /// ([`Breakpoints`]), including re-linearisations at the step start for that reason.
    pub breakpoint_steps: u64,
    /// Fixed steps split because their local error estimate exceeded the split tolerance
    /// ([`RosenbrockStepper::split_tolerance`]).
    pub error_splits: u64,
    /// Re-linearisations off the fixed schedule that the adaptive schedule asked for
    /// ([`RosenbrockStepper::stale_indicator`]): made at the start of a step because the step
    /// before it, taken with a lagged Jacobian, had a local error indicator above that level
    /// (included in `linearisations`).
    pub stale_relinearisations: u64,
}

impl std::ops::AddAssign for Stats {
    /// Sums the counters of two runs (e.g. the segments of a run fed from an input table).
    fn add_assign(&mut self, o: Self) {
        self.steps += o.steps;
        self.rejected += o.rejected;
        self.q_evals += o.q_evals;
        self.state_rate_evals += o.state_rate_evals;
        self.linearisations += o.linearisations;
        self.factorisations += o.factorisations;
        self.solves += o.solves;
        self.breakpoint_steps += o.breakpoint_steps;
        self.error_splits += o.error_splits;
        self.stale_relinearisations += o.stale_relinearisations;
    }
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
    /// D_c s_v (congruence-form linearisations only).
    pub csv: Vec<f64>,
    pub tmp: Vec<f64>,
    /// Exact-kinematics stages only: u_i and s_r (position space), T s_v (velocity space).
    pub u: Vec<f64>,
    pub sr: Vec<f64>,
    pub tsv: Vec<f64>,
    /// AVX2 + FMA are available (x86-64, detected at run time): selects the SIMD block product.
    pub simd: Option<crate::cpu::Avx2Fma>,
    /// The stage products on the active coordinates of a system with inert ones
    /// ([`MechanicalSystem::inert_velocity_slots`], [`crate::compact`]), where cheaper than the
    /// block products: J_r K and J_v gathered at each linearisation ([`Self::load_compact`]).
    pub compact: Option<CompactProduct>,
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
            csv: vec![0.0; n_v],
            tmp: vec![0.0; n_v],
            u: vec![0.0; n_r],
            sr: vec![0.0; n_r],
            tsv: vec![0.0; n_v],
            simd: crate::cpu::Avx2Fma::detect(),
            compact: None,
        }
    }

    /// Uses the compact stage products for `sys` if it has inert coordinates and the dense
    /// product on its active ones is cheaper than the block product over its pattern; on the
    /// active set of `lu` where that is a [`crate::compact::CompactInverse`] on the same
    /// coordinates (the stages then see at once that they may take the product into its
    /// solve, [`ActiveSet::same_as`]).
    pub fn with_compact<S: MechanicalSystem + ?Sized>(
        mut self,
        sys: &S,
        lu: &mut dyn LinearSolver,
    ) -> Self {
        if let Some(inert) = sys.inert_velocity_slots() {
            let mut set = ActiveSet::new(sys.pattern(), &inert);
            if let Some(inv) = lu.compact_inverse()
                && inv.active().same_as(&set)
            {
                set = inv.active().clone();
            }
            if set.dense_product_cheaper() {
                self.compact = Some(CompactProduct::new(set));
            }
        }
        self
    }

    /// Gathers the linearisation's J_r K and J_v for the compact products (if in use; a
    /// congruence-form linearisation keeps the block products).
    pub fn load_compact(&mut self, lin: &Linearisation) {
        if let (Some(c), false) = (self.compact.as_mut(), lin.congruent) {
            c.load(&lin.j_rk, &lin.j_v);
        }
    }
}

/// Forms the iteration matrix A = I − hγ J_v − (hγ)² J_r K of eq. 11 in place, or for a
/// congruence-form `lin` its congruent M − hγ G_v − (hγ)² G_rK ([`super::congruence`]).
pub(crate) fn iteration_matrix(lin: &Linearisation, hg: f64, a: &mut BlockMatrix) {
    if lin.congruent {
        lin.congruence
            .iteration_matrix(&lin.j_v, -hg, &lin.j_rk, -hg * hg, a);
    } else {
        lin.j_v
            .combination_plus_identity_into(-hg, &lin.j_rk, -hg * hg, 1.0, a);
    }
}

/// Factors the iteration matrix of [`iteration_matrix`] into `lu`: the plain form through
/// [`LinearSolver::factor_combination`] (a compact inverse gathers its active entries of the
/// sum directly, without forming it in `a` over all stored blocks), the congruent form formed
/// in `a`.
pub(crate) fn factor_iteration_matrix(
    lin: &Linearisation,
    hg: f64,
    a: &mut BlockMatrix,
    lu: &mut dyn LinearSolver,
) -> Result<(), SingularMatrix> {
    if lin.congruent {
        iteration_matrix(lin, hg, a);
        lu.factor(a)
    } else {
        lu.factor_combination(&lin.j_v, -hg, &lin.j_rk, -hg * hg, 1.0, a)
    }
}

/// Where one step of [`stages`] starts: time t, step h, state (r, v), q(t, r, v) if the caller
/// has it (`fresh_q`), and whether the stages include the kinematic Jacobian.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepStart<'a> {
    pub t: f64,
    pub h: f64,
    pub r: &'a [f64],
    pub v: &'a [f64],
    pub fresh_q: Option<&'a [f64]>,
    pub exact_kinematics: bool,
}

/// Runs all stages of one step from (t, r, v) with step h. `fresh_q` is q(t, r, v) if the caller
/// has it (e.g. from a linearisation at this very state). Stage increments end up in `w.dr`, `w.dv`.
/// With `exact_kinematics` the stages include the kinematic Jacobian ∂(K(r) v)/∂r at the
/// linearisation point, which must then be (r, v) itself (see [`super::adaptive`]; the caller
/// factors I − hγJ_v − (hγ)² J_rK T); without it they are eqs. 7-8 generalised (W-methods such as
/// LSRT2 do not need it, and a lagged Jacobian could not provide it).
///
/// On CPUs with AVX2 (`w.simd`) the stage vector arithmetic runs in a copy compiled with AVX2
/// enabled: the same operations (no fused multiply-adds), four lanes instead of two.
pub(crate) fn stages<S: MechanicalSystem + ?Sized>(
    sys: &mut S,
    tab: &Tableau,
    lin: &Linearisation,
    lu: &mut dyn LinearSolver,
    start: StepStart,
    w: &mut StageWork,
    stats: &mut Stats,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(token) = w.simd {
        // SAFETY: the token exists only where AVX2 and FMA were detected.
        unsafe { stages_avx2(token, sys, tab, lin, lu, start, w, stats) };
        return;
    }
    stages_impl(sys, tab, lin, lu, start, w, stats);
}

/// [`stages_impl`] compiled with AVX2 enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)] // the token plus the arguments of `stages_impl`
fn stages_avx2<S: MechanicalSystem + ?Sized>(
    _token: crate::cpu::Avx2Fma,
    sys: &mut S,
    tab: &Tableau,
    lin: &Linearisation,
    lu: &mut dyn LinearSolver,
    start: StepStart,
    w: &mut StageWork,
    stats: &mut Stats,
) {
    stages_impl(sys, tab, lin, lu, start, w, stats);
}

#[inline(always)]
fn stages_impl<S: MechanicalSystem + ?Sized>(
    sys: &mut S,
    tab: &Tableau,
    lin: &Linearisation,
    lu: &mut dyn LinearSolver,
    start: StepStart,
    w: &mut StageWork,
    stats: &mut Stats,
) {
    let StepStart {
        t,
        h,
        r,
        v,
        fresh_q,
        exact_kinematics,
    } = start;
    let s = tab.stages;
    let g = tab.gamma;
    let n_v = v.len();
    for i in 0..s {
        // Stage state (eq. 9): the step start itself unless some α_ij (j < i) is set; each
        // entry is r + Σ_j (h α_ij) Δr_j accumulated in j order (as copy + axpy would; the
        // first term is added in the pass that copies).
        let shifted = (0..i).any(|j| tab.alpha[i * s + j] != 0.0);
        if shifted {
            let mut started = false;
            for j in 0..i {
                let a = h * tab.alpha[i * s + j];
                if a != 0.0 {
                    let (r0, v0) = if started {
                        (Base::Own, Base::Own)
                    } else {
                        (Base::Of(r), Base::Of(v))
                    };
                    add_scaled(r0, a, &w.dr[j], &mut w.r_st);
                    add_scaled(v0, a, &w.dv[j], &mut w.v_st);
                    started = true;
                }
            }
            if !started {
                w.r_st.copy_from_slice(r);
                w.v_st.copy_from_slice(v);
            }
        }
        let (r_i, v_i): (&[f64], &[f64]) = if shifted { (&w.r_st, &w.v_st) } else { (r, v) };
        let ti = t + tab.c[i] * h;
        let hgs = h * tab.gamma_sum[i];
        // rhs = q + hγ_i q_t, built in Δv_i; without a q_t term a stage's own evaluation of q
        // writes Δv_i directly (no copy).
        {
            let (_, dv_rest) = w.dv.split_at_mut(i);
            let rhs = &mut dv_rest[0][..n_v];
            let q_i: Option<&[f64]> = match fresh_q {
                Some(q) if i == 0 && !shifted => Some(q),
                _ if hgs == 0.0 => {
                    sys.accelerations(ti, r_i, v_i, rhs);
                    stats.q_evals += 1;
                    None
                }
                _ => {
                    sys.accelerations(ti, r_i, v_i, &mut w.q_st);
                    stats.q_evals += 1;
                    Some(&w.q_st[..])
                }
            };
            if let Some(q_i) = q_i {
                let (q_i, q_t) = (&q_i[..n_v], &lin.q_t[..n_v]);
                if hgs != 0.0 {
                    for k in 0..n_v {
                        rhs[k] = q_i[k] + hgs * q_t[k];
                    }
                } else {
                    rhs.copy_from_slice(q_i);
                }
            }
        }
        sys.kinematics(r_i, v_i, &mut w.fr);
        // s_v = Σ γ_ij Δv_j, s_z = Σ γ_ij z_j; exactly zero (and skipped, together with the
        // J_v product) when no γ_ij (j < i) is set, as in the first stage.
        let coupled = (0..i).any(|j| tab.gamma_ij[i * s + j] != 0.0);
        if coupled {
            // Each sum starts at 0 in the pass that adds its first term (as fill + axpy would).
            let mut base = Base::Zero;
            for j in 0..i {
                let gij = tab.gamma_ij[i * s + j];
                if gij != 0.0 {
                    add_scaled(base, gij, &w.dv[j], &mut w.sv);
                    add_scaled(base, gij, &w.z[j], &mut w.sz);
                    if exact_kinematics {
                        add_scaled(base, gij, &w.dr[j], &mut w.sr);
                    }
                    base = Base::Own;
                }
            }
        }
        if exact_kinematics {
            // u = M (K(r̃)ṽ + h G s_r) with M = (I − hγG)⁻¹, y = L u, and T s_v in place of s_v
            // in the P argument ([`super::adaptive`]).
            if coupled {
                sys.kinematic_jacobian(&lin.r, v, &w.sr, &mut w.u);
                for (uk, fk) in w.u.iter_mut().zip(&w.fr) {
                    *uk = fk + h * *uk;
                }
                w.tsv.copy_from_slice(&w.sv);
                sys.kinematic_tangent_solve(&lin.r, v, h * g, &mut w.tsv);
            } else {
                w.u.copy_from_slice(&w.fr);
            }
            sys.kinematic_solve(&lin.r, v, h * g, &mut w.u);
            sys.tangent(&lin.r, &w.u, &mut w.y);
        } else {
            sys.tangent(&lin.r, &w.fr, &mut w.y);
        }
        // rhs += P (hγ y + h s_z + h²γ s_v) + h J_v s_v, in Δv_i.
        let (hg, hh, hhg) = (h * g, h, h * h * g);
        let (_, dv_rest) = w.dv.split_at_mut(i);
        let rhs = &mut dv_rest[0][..n_v];
        let (tmp, y) = (&mut w.tmp[..n_v], &w.y[..n_v]);
        if coupled {
            let sv_arg = if exact_kinematics { &w.tsv } else { &w.sv };
            let (sz, sv) = (&w.sz[..n_v], &sv_arg[..n_v]);
            for k in 0..n_v {
                tmp[k] = hg * y[k] + hh * sz[k] + hhg * sv[k];
            }
        } else {
            for k in 0..n_v {
                tmp[k] = hg * y[k];
            }
        }
        // Congruence form: D_r⁻¹ rhs = D_r⁻¹ (q + hγ_i q_t) + G_rK D_c tmp + h G_v D_c s_v, and
        // the solution of the congruent system is D_c Δv_i.
        let cg = lin.congruent.then_some(&lin.congruence);
        if let Some(cg) = cg {
            cg.apply_rows_inverse(rhs);
            cg.apply_cols(&mut w.tmp);
        }
        let jv_term = match (coupled, cg) {
            (false, _) => None,
            (true, None) => Some((&lin.j_v, h, &w.sv[..])),
            (true, Some(cg)) => {
                w.csv.copy_from_slice(&w.sv);
                cg.apply_cols(&mut w.csv);
                Some((&lin.j_v, h, &w.csv[..]))
            }
        };
        // The compact products need J's zero rows and columns at the inert coordinates, which
        // the plain form has (a congruence transform may mix them within a block). With a
        // compact inverse on the same active coordinates the product enters the solve's gather
        // (the sums rhs_i + (P x)_i as adding it into rhs would form them).
        let bz = jv_term.map(|(_, beta, z)| (beta, z));
        let fused = match (w.compact.as_mut(), lu.compact_inverse()) {
            (Some(c), Some(inv)) if !lin.congruent && c.active().same_as(inv.active()) => {
                inv.solve_in_place_adding(c.product(&w.tmp, bz), rhs);
                true
            }
            _ => false,
        };
        if !fused {
            match w.compact.as_mut() {
                Some(c) if !lin.congruent => c.gemv_add(&w.tmp, bz, rhs),
                _ => gemv_add(w.simd, &lin.j_rk, &w.tmp, jv_term, rhs),
            }
            lu.solve_in_place(rhs);
        }
        if let Some(cg) = cg {
            cg.apply_cols_inverse(rhs);
        }
        stats.solves += 1;
        let dv_i = &dv_rest[0][..n_v];
        // Δr_i = K(r̃)ṽ + h K_lin (γ Δv_i + s_v); z_i = y + h (γ Δv_i + s_v), kept only if a
        // later stage uses it.
        let tmp = &mut w.tmp[..n_v];
        if coupled {
            let sv = &w.sv[..n_v];
            for k in 0..n_v {
                tmp[k] = h * (g * dv_i[k] + sv[k]);
            }
        } else {
            for k in 0..n_v {
                tmp[k] = h * (g * dv_i[k]);
            }
        }
        let dr_i = &mut w.dr[i];
        sys.kinematics(&lin.r, &w.tmp, dr_i);
        if exact_kinematics {
            // Δr_i = u + M K_lin h (γ Δv_i + s_v); z_i = L u + T h (γ Δv_i + s_v).
            sys.kinematic_solve(&lin.r, v, h * g, dr_i);
            axpy(1.0, &w.u, dr_i);
        } else {
            axpy(1.0, &w.fr, dr_i);
        }
        if (i + 1..s).any(|l| tab.gamma_ij[l * s + i] != 0.0) {
            if exact_kinematics {
                sys.kinematic_tangent_solve(&lin.r, v, h * g, &mut w.tmp);
            }
            for ((z, y), t) in w.z[i].iter_mut().zip(&w.y).zip(&w.tmp) {
                *z = y + t;
            }
        }
    }
}

/// y += A x + β B z (B, if given, has A's pattern): both block products in one pass over the
/// pattern. For 6 × 6 body blocks the row products of all blocks of a block row are accumulated
/// element-wise and reduced once per block row (no horizontal sum per block); on x86-64 CPUs
/// with AVX2 and FMA (`simd`) the kernel uses 4 + 2 wide fused multiply-adds. Same sums as two
/// `BlockMatrix::gemv` calls up to the order of additions.
fn gemv_add(
    simd: Option<crate::cpu::Avx2Fma>,
    a: &BlockMatrix,
    x: &[f64],
    b: Option<(&BlockMatrix, f64, &[f64])>,
    y: &mut [f64],
) {
    let p = a.pattern();
    if p.block_size() != 6 {
        a.gemv(1.0, x, 1.0, y);
        if let Some((b, beta, z)) = b {
            b.gemv(beta, z, 1.0, y);
        }
        return;
    }
    let n = p.dim();
    assert!(
        x.len() == n && y.len() == n,
        "gemv_add: vector length differs from the matrix"
    );
    if let Some((b, _, z)) = b {
        assert!(
            z.len() == n && b.values().len() == a.values().len(),
            "gemv_add: B or z does not match A"
        );
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(_token) = simd {
        // SAFETY: the token exists only after run-time detection of AVX2 and FMA; the lengths
        // were checked above and the pattern's column indices are below `n_blocks`.
        unsafe { gemv6_add_avx2_fma(a, x, b, y) };
        return;
    }
    let _ = simd;
    gemv6_add_portable(a, x, b, y);
}

/// Portable 6 × 6 path of [`gemv_add`].
fn gemv6_add_portable(
    a: &BlockMatrix,
    x: &[f64],
    b: Option<(&BlockMatrix, f64, &[f64])>,
    y: &mut [f64],
) {
    let p = a.pattern();
    let (row_ptr, col_idx) = (p.row_ptr(), p.col_idx());
    /// Σ over the blocks of row `i` of the element-wise products M[r][c] x[c], reduced per row.
    #[inline(always)]
    fn row_sums(
        vals: &[f64],
        x: &[f64],
        slots: std::ops::Range<usize>,
        cols: &[usize],
    ) -> [f64; 6] {
        let mut acc = [[0.0f64; 6]; 6];
        for (s, &j) in slots.zip(cols) {
            let m: &[f64; 36] = vals[36 * s..36 * s + 36].try_into().expect("6 x 6 block");
            let xj: &[f64; 6] = x[6 * j..6 * j + 6].try_into().expect("6-vector");
            for r in 0..6 {
                for c in 0..6 {
                    acc[r][c] += m[6 * r + c] * xj[c];
                }
            }
        }
        acc.map(|row| (row[0] + row[1]) + (row[2] + row[3]) + (row[4] + row[5]))
    }
    for i in 0..p.n_blocks() {
        let slots = row_ptr[i]..row_ptr[i + 1];
        let cols = &col_idx[slots.clone()];
        let sa = row_sums(a.values(), x, slots.clone(), cols);
        let yi = &mut y[6 * i..6 * i + 6];
        match b {
            Some((b, beta, z)) => {
                let sb = row_sums(b.values(), z, slots, cols);
                for r in 0..6 {
                    yi[r] += sa[r] + beta * sb[r];
                }
            }
            None => {
                for r in 0..6 {
                    yi[r] += sa[r];
                }
            }
        }
    }
}

/// AVX2 + FMA path of [`gemv_add`].
///
/// # Safety
/// The CPU must support AVX2 and FMA; `x`, `y` (and `z`) must have length `dim` of A's pattern
/// and B must have A's pattern.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gemv6_add_avx2_fma(
    a: &BlockMatrix,
    x: &[f64],
    b: Option<(&BlockMatrix, f64, &[f64])>,
    y: &mut [f64],
) {
    use std::arch::x86_64::*;
    let p = a.pattern();
    let (row_ptr, col_idx) = (p.row_ptr(), p.col_idx());
    /// Row sums of Σ_s M_s x_{j(s)} over the slots of one block row: rows 0-3 and rows 4-5.
    ///
    /// # Safety
    /// AVX2 + FMA; every slot `first + k` is a stored block of `vals` and every column block
    /// `cols[k]` lies in `x`.
    #[inline(always)]
    unsafe fn row_sums(
        vals: *const f64,
        x: *const f64,
        cols: &[usize],
        first: usize,
    ) -> (__m256d, __m128d) {
        unsafe {
            let mut lo = [_mm256_setzero_pd(); 6];
            let mut hi = [_mm_setzero_pd(); 6];
            for (k, &j) in cols.iter().enumerate() {
                let m = vals.add(36 * (first + k));
                let xl = _mm256_loadu_pd(x.add(6 * j));
                let xh = _mm_loadu_pd(x.add(6 * j + 4));
                for r in 0..6 {
                    lo[r] = _mm256_fmadd_pd(_mm256_loadu_pd(m.add(6 * r)), xl, lo[r]);
                    hi[r] = _mm_fmadd_pd(_mm_loadu_pd(m.add(6 * r + 4)), xh, hi[r]);
                }
            }
            crate::cpu::row_sums6(&lo, &hi)
        }
    }
    let (xp, av) = (x.as_ptr(), a.values().as_ptr());
    for i in 0..p.n_blocks() {
        let first = row_ptr[i];
        let cols = &col_idx[first..row_ptr[i + 1]];
        // SAFETY: see the function contract; y has length 6 n_blocks.
        unsafe {
            let (mut lo, mut hi) = row_sums(av, xp, cols, first);
            if let Some((b, beta, z)) = b {
                let (bl, bh) = row_sums(b.values().as_ptr(), z.as_ptr(), cols, first);
                lo = _mm256_fmadd_pd(_mm256_set1_pd(beta), bl, lo);
                hi = _mm_fmadd_pd(_mm_set1_pd(beta), bh, hi);
            }
            let yp = y.as_mut_ptr().add(6 * i);
            _mm256_storeu_pd(yp, _mm256_add_pd(_mm256_loadu_pd(yp), lo));
            _mm_storeu_pd(yp.add(4), _mm_add_pd(_mm_loadu_pd(yp.add(4)), hi));
        }
    }
}

/// max_i |(b_i − a_i) l_i| (0 for empty slices; NaN entries are skipped, as by `f64::max`):
/// the largest scaled difference of two stage increments ([`MechanicalSystem::error_scales`]).
/// Four independent lanes, so that the pass is not one serial dependency chain.
#[inline(always)]
fn max_abs_scaled_difference(a: &[f64], b: &[f64], l: &[f64]) -> f64 {
    let mut m = [0.0f64; 4];
    let (a4, a_rest) = a.as_chunks::<4>();
    let (b4, b_rest) = b.as_chunks::<4>();
    let (l4, l_rest) = l.as_chunks::<4>();
    for ((x, y), s) in a4.iter().zip(b4).zip(l4) {
        for k in 0..4 {
            let d = ((y[k] - x[k]) * s[k]).abs();
            m[k] = if d > m[k] { d } else { m[k] };
        }
    }
    for (k, ((x, y), s)) in a_rest.iter().zip(b_rest).zip(l_rest).enumerate() {
        let d = ((y - x) * s).abs();
        m[k] = if d > m[k] { d } else { m[k] };
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// [`max_abs_scaled_difference`] over the entries `idx` alone (the active speeds of a system
/// with inert ones, [`RosenbrockStepper::step`]'s screen): max_i∈idx |(b_i − a_i) l_i|.
#[inline(always)]
fn max_abs_scaled_difference_at(idx: &[usize], a: &[f64], b: &[f64], l: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for &i in idx {
        let d = ((b[i] - a[i]) * l[i]).abs();
        m = if d > m { d } else { m };
    }
    m
}

/// The speeds (velocity slots below [`MechanicalSystem::n_speeds`]) of `sys` that are not
/// inert, if some are inert.
fn active_speeds<S: MechanicalSystem + ?Sized>(sys: &S) -> Option<Vec<usize>> {
    let inert = sys.inert_velocity_slots()?;
    Some((0..sys.n_speeds()).filter(|&i| !inert[i]).collect())
}

/// The system's [`MechanicalSystem::error_scales`], checked (length n_v, finite, > 0), or all 1.
///
/// # Panics
/// If the system breaks the contract of `error_scales` (a bug of the system, not of input data).
fn error_scales<S: MechanicalSystem + ?Sized>(sys: &S) -> Vec<f64> {
    match sys.error_scales() {
        Some(l) => {
            assert!(
                l.len() == sys.n_v() && l.iter().all(|x| x.is_finite() && *x > 0.0),
                "MechanicalSystem::error_scales: {} entries for n_v = {}, all must be finite and > 0",
                l.len(),
                sys.n_v()
            );
            l
        }
        None => vec![1.0; sys.n_v()],
    }
}

/// What [`add_scaled`] adds to: y itself, 0, or another vector x.
#[derive(Clone, Copy)]
enum Base<'a> {
    Own,
    Zero,
    Of(&'a [f64]),
}

/// y = base + a z in one pass: y += a z ([`axpy`]), y = 0 + a z (the sum of a fill with 0 and
/// an axpy, −0 products included), or y = x + a z (a copy of x and an axpy).
#[inline(always)]
fn add_scaled(base: Base, a: f64, z: &[f64], y: &mut [f64]) {
    match base {
        Base::Own => axpy(a, z, y),
        Base::Zero => {
            for (yi, zi) in y.iter_mut().zip(z) {
                *yi = 0.0 + a * zi;
            }
        }
        Base::Of(x) => {
            assert_eq!(x.len(), y.len(), "add_scaled: lengths differ");
            for ((yi, xi), zi) in y.iter_mut().zip(x).zip(z) {
                *yi = xi + a * zi;
            }
        }
    }
}

#[inline(always)]
pub(crate) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Index of the first non-finite entry of `r` followed by `v`. The common all-finite case is
/// one vectorisable pass (`x·0` is ±0 for finite `x` and NaN otherwise, and a NaN sticks in
/// the sums); the position is only searched for when that probe fails.
#[inline(always)]
pub(crate) fn first_non_finite(r: &[f64], v: &[f64]) -> Option<usize> {
    #[inline(always)]
    fn probe(x: &[f64]) -> bool {
        let mut acc = [0.0f64; 4];
        let (x4, rest) = x.as_chunks::<4>();
        for c in x4 {
            for l in 0..4 {
                acc[l] += c[l] * 0.0;
            }
        }
        for (l, &e) in rest.iter().enumerate() {
            acc[l] += e * 0.0;
        }
        acc.iter().sum::<f64>() == 0.0
    }
    if probe(r) && probe(v) {
        return None;
    }
    r.iter().chain(v.iter()).position(|x| !x.is_finite())
}

/// Default [`RosenbrockStepper::split_tolerance`]: 0.1 µm of local error indicator per step, a
/// displacement for every kind of coordinate (a rotation through the body's characteristic
/// length, [`MechanicalSystem::error_scales`]). Chosen on the multilink load case at 1 ms
/// (LSRT2, `docs/performance.md`, with quaternion components then weighted 1): 92 of 6000 steps
/// split, largest wheel-displacement error after the Fx step 0.059 % of the step response
/// (without: 0.23 %; 3e-7: 0.075 %; 1e-6: 0.15 %); with the displacement norm 56 splits and
/// 0.064 % (`docs/solvers.md`, *Split norm per coordinate kind*).
pub const SPLIT_TOLERANCE: f64 = 1e-7;

/// What the fixed-step stepper does when a piecewise characteristic of the system changes
/// segment ([`MechanicalSystem::segment_changes`]), e.g. a damper table crossing a breakpoint:
/// the Jacobian of the linearisation then holds the slope of the old segment.
///
/// Detection uses only the evaluations the step makes anyway: the q evaluation at the start of
/// a step without scheduled re-linearisation, and the stage evaluations (for LSRT2 the second
/// stage, at the midpoint state r + h/2 Δr₁). Every reaction is bounded (at most one redo per
/// step) and depends only on the state, so the step stays deterministic; after a reaction that
/// re-linearised off the schedule the next step re-linearises on schedule-independent grounds
/// (`invalidate`), which keeps snapshots restorable bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Breakpoints {
    /// Ignore segment changes (the stepper before breakpoint handling).
    Ignore,
    /// Re-linearise at the step start when its q evaluation sees other segments than the
    /// (lagged) linearisation; when a stage sees other segments, redo the step as two half
    /// steps, the first with the step's Jacobian (re-factored for h/2), the second linearised
    /// at the midpoint (it must see the new segment's slopes). When the step's local error
    /// estimate exceeds [`RosenbrockStepper::split_tolerance`] (a fast transient, e.g. right
    /// after a force step), redo it as two half steps with the step's own Jacobian factored
    /// for h/2 (no midpoint linearisation: as accurate on the multilink, measured in
    /// `docs/performance.md`, and the re-linearisation schedule is untouched). The h/2
    /// factorisation is a second one, kept beside the one for h until the next linearisation
    /// (`LinearSolver::spare`): the steps after a split keep theirs for h, and split steps
    /// sharing a lagged Jacobian share the h/2 one. One split level at most; worst case per
    /// step (LSRT2, re-linearising every step, a breakpoint split): two linearisations, three
    /// LU factorisations, three q evaluations, six triangular solves.
    /// Redoing the whole step with a Jacobian from the end state of the first attempt was
    /// measured too and does not help on the multilink (NMSE unchanged at 1.8e-3): the full
    /// step still integrates the old-segment part with the new slope.
    #[default]
    Split,
}

/// Fixed-step Rosenbrock integrator with a preallocated workspace: [`RosenbrockStepper::step`]
/// does not allocate.
pub struct RosenbrockStepper {
    tab: Tableau,
    lin: Linearisation,
    a: BlockMatrix,
    lu: Box<dyn LinearSolver + Send>,
    /// Second factorisation, of the same linearisation's matrix for h/2, used by split steps
    /// (`LinearSolver::spare`; `None`: the split re-factors `lu` for h/2 and back for h).
    lu_half: Option<Box<dyn LinearSolver + Send>>,
    /// Step size `lu_half` is factored for (NaN: not factored for the current linearisation).
    half_h: f64,
    work: StageWork,
    /// Step size h, s.
    pub h: f64,
    /// Start time t0, s.
    pub t0: f64,
    /// Re-linearise every this many steps (≥ 1).
    pub relinearise_every: u64,
    /// Whether to ask the system for the congruence form of the linearisation
    /// ([`super::congruence`]; default true).
    pub congruent: bool,
    /// Reaction to characteristics changing segment within a step (default [`Breakpoints::Split`]).
    pub breakpoints: Breakpoints,
    /// With [`Breakpoints::Split`]: a step whose local error indicator (largest entry of
    /// γ h² K(r) (ℓ ∘ Σ e_i Δv_i) over the position coordinates r, in m: positions directly,
    /// quaternion components times twice the body's characteristic length through the scales ℓ
    /// of [`MechanicalSystem::error_scales`]; [`Self::error_indicator`]) exceeds this is redone
    /// as two half steps with the step's Jacobian (default [`SPLIT_TOLERANCE`];
    /// `f64::INFINITY` = never).
    pub split_tolerance: f64,
    /// Adaptive re-linearisation: a step taken with a lagged Jacobian (formed at an earlier
    /// step) whose local error indicator ([`Self::error_indicator`], m) exceeds this makes the
    /// next step re-linearise, besides the fixed schedule of [`Self::relinearise_every`], which
    /// then bounds the Jacobian's age (default `f64::INFINITY`: the fixed schedule alone).
    /// A lagged Jacobian raises the indicator (on the truck over 6 s, LSRT2 splits 27 steps
    /// re-linearising every step, 117 every 5 and 940 every 50 steps: `docs/truck.md`,
    /// *Linearisation schedule*), so the indicator tells when the Jacobian no longer fits.
    /// The decision uses only the step's own stages and the grid of the schedule stays the
    /// same, so runs stay deterministic and snapshots restorable as with the fixed schedule
    /// (the re-linearisation happens at a step start, as after [`Self::invalidate`]).
    pub stale_indicator: f64,
    /// Weights e_i = b_i − b̂_i of the local error indicator (the tableau's embedded weights,
    /// else the first stage alone as the embedded first-order solution: e = (−1, 1) for LSRT2).
    err_weights: Vec<f64>,
    /// The system's [`MechanicalSystem::kinematics_gain`] and number of speeds (split screen).
    kinematics_gain: Option<f64>,
    n_speeds: usize,
    /// Scales ℓ of the velocity coordinates in the indicator ([`MechanicalSystem::error_scales`];
    /// all 1 if the system has none): the indicator is γ h² max |K(r) (ℓ ∘ Σ e_i Δv_i)|.
    error_scales: Vec<f64>,
    /// Work counters.
    pub stats: Stats,
    q0: Vec<f64>,
    /// The speeds that are not inert ([`MechanicalSystem::inert_velocity_slots`]), if some
    /// are: the split screen takes only these (an inert Δv_i is 0 and adds nothing).
    active_speeds: Option<Vec<usize>>,
    /// Buffers of the local error indicator (velocity and position space).
    est_v: Vec<f64>,
    est_r: Vec<f64>,
    have_lin: bool,
    /// The adaptive schedule asked the next step to re-linearise ([`Self::stale_indicator`]).
    stale_pending: bool,
    /// Step size the current factorisation is for (an error-triggered split leaves h/2).
    factored_h: f64,
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
        let mut lu = lu;
        Self {
            lin: Linearisation::new(sys.n_r(), pattern.clone()),
            a: BlockMatrix::zeros(pattern),
            work: StageWork::new(s, sys.n_r(), sys.n_v()).with_compact(sys, lu.as_mut()),
            active_speeds: active_speeds(sys),
            q0: vec![0.0; sys.n_v()],
            est_v: vec![0.0; sys.n_v()],
            est_r: vec![0.0; sys.n_r()],
            breakpoints: Breakpoints::default(),
            split_tolerance: SPLIT_TOLERANCE,
            stale_indicator: f64::INFINITY,
            err_weights: {
                let b_hat = tab.b_hat.clone().unwrap_or_else(|| {
                    let mut e = vec![0.0; s];
                    e[0] = 1.0;
                    e
                });
                tab.b.iter().zip(&b_hat).map(|(b, bh)| b - bh).collect()
            },
            kinematics_gain: sys.kinematics_gain(),
            error_scales: error_scales(sys),
            n_speeds: sys.n_speeds(),
            tab,
            lu_half: lu.spare(),
            half_h: f64::NAN,
            lu,
            h,
            t0,
            relinearise_every: relinearise_every.max(1),
            congruent: true,
            stats: Stats::default(),
            have_lin: false,
            stale_pending: false,
            factored_h: f64::NAN,
        }
    }

    /// The tableau.
    pub fn tableau(&self) -> &Tableau {
        &self.tab
    }

    /// Whether step `k` starts with a re-linearisation.
    pub fn relinearises_at(&self, k: u64) -> bool {
        !self.have_lin || k.is_multiple_of(self.relinearise_every)
    }

    /// Time at the start of step `k`: t0 + k h (never accumulated).
    pub fn time(&self, k: u64) -> f64 {
        self.t0 + k as f64 * self.h
    }

    /// Advances (r, v) from step `k` (t = t0 + k h) to step k + 1 in place.
    ///
    /// On CPUs with AVX2 (as the stages, [`stages`]) the step's own vector passes (the update,
    /// the split screen, the finiteness probe) run in a copy compiled with AVX2 enabled: the
    /// same operations, four lanes instead of two.
    pub fn step<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = self.work.simd {
            // SAFETY: the token exists only where AVX2 and FMA were detected.
            return unsafe { self.step_avx2(token, sys, k, r, v) };
        }
        self.step_impl(sys, k, r, v)
    }

    /// [`Self::step_impl`] compiled with AVX2 enabled.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn step_avx2<S: MechanicalSystem + ?Sized>(
        &mut self,
        _token: crate::cpu::Avx2Fma,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        self.step_impl(sys, k, r, v)
    }

    #[inline(always)]
    fn step_impl<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        let t = self.time(k);
        let h = self.h;
        let watch = self.breakpoints != Breakpoints::Ignore;
        let mut relin = self.relinearises_at(k);
        let mut off_schedule = false;
        if !relin {
            let c0 = sys.segment_changes();
            sys.accelerations(t, r, v, &mut self.q0);
            self.stats.q_evals += 1;
            if watch && sys.segment_changes() != c0 {
                // The lagged Jacobian holds slopes of other segments than the start state.
                relin = true;
                off_schedule = true;
                self.stats.breakpoint_steps += 1;
            }
        }
        if relin {
            if self.stale_pending {
                self.stats.stale_relinearisations += 1;
            }
            self.relinearise(sys, t, r, v, h)?;
            self.q0.copy_from_slice(&self.lin.q);
        } else if self.factored_h != h {
            // An error-triggered split without a spare solver left the (scheduled)
            // linearisation factored for h/2.
            self.factor(t, h)?;
        }
        // The stages leave (r, v) at the step start: the split decision comes before the
        // update, so a split step needs no saved copy of the start state.
        let c1 = sys.segment_changes();
        self.run_stages(sys, t, h, r, v, false);
        let crossed = watch && sys.segment_changes() != c1;
        // The indicator is computed exactly only where a decision needs it: above the split
        // tolerance (splitting on), or above the stale level for a lagged Jacobian.
        let lagged = !relin;
        let split_level = if watch {
            self.split_tolerance
        } else {
            f64::INFINITY
        };
        let floor = if lagged {
            split_level.min(self.stale_indicator)
        } else {
            split_level
        };
        let indicator = if crossed {
            0.0
        } else {
            self.indicator_above(sys, r, h, floor)
        };
        let rough = indicator > split_level;
        let stale = lagged && indicator > self.stale_indicator;
        if !(crossed || rough) {
            self.update(sys, h, r, v);
        } else {
            // A stage saw other segments than the linearisation (a breakpoint lies within the
            // step), or the step's error estimate is above the tolerance (a fast transient).
            // Redo it once as two half steps.
            if crossed {
                self.stats.breakpoint_steps += 1;
            } else {
                self.stats.error_splits += 1;
            }
            let h2 = 0.5 * h;
            let half = self.factor_half(t, h2)?;
            self.advance(sys, t, h2, r, v, half);
            let tm = self.t0 + (k as f64 + 0.5) * h;
            if crossed {
                // The second half must see the new segment's slopes: linearise at the
                // midpoint (off the schedule).
                self.relinearise(sys, tm, r, v, h2)?;
                self.q0.copy_from_slice(&self.lin.q);
                off_schedule = true;
                self.advance(sys, tm, h2, r, v, false);
            } else {
                // A fast transient: the step's own (possibly lagged) Jacobian, already
                // factored for h/2, serves the second half too (a W-method keeps its order
                // with any Jacobian); the schedule is untouched.
                sys.accelerations(tm, r, v, &mut self.q0);
                self.stats.q_evals += 1;
                self.advance(sys, tm, h2, r, v, half);
            }
        }
        if off_schedule {
            // The factorisation no longer belongs to the schedule: the next step re-linearises
            // (so a snapshot taken now never refers to an off-schedule linearisation).
            self.have_lin = false;
        } else if stale && !(k + 1).is_multiple_of(self.relinearise_every) {
            // The lagged Jacobian no longer fits (adaptive schedule): re-linearise next step.
            self.have_lin = false;
            self.stale_pending = true;
        }
        self.stats.steps += 1;
        match first_non_finite(r, v) {
            Some(index) => Err(StepError::NonFinite {
                t: self.time(k + 1),
                index,
            }),
            None => Ok(()),
        }
    }

    /// The local error indicator of the last stages with step h, with K at the step's start
    /// position r, if it exceeds `floor`, else a value of at most `floor` (0): the largest entry of
    /// γ h² K(r) (ℓ ∘ Σ e_i Δv_i) (position coordinates, each a displacement in m through the
    /// system's scales ℓ, [`MechanicalSystem::error_scales`]), the change of the stage
    /// accelerations within the step integrated twice. It vanishes for a constant acceleration (which the method
    /// integrates exactly; the plain embedded difference h Σ e_i Δr_i would report h² a / 2
    /// there and split every step of a body falling or braking) and scales with the rate of
    /// change of the accelerations. The system's cheap upper bound of the largest entry
    /// ([`MechanicalSystem::kinematics_max_abs_bound`]) settles most steps; the exact value is
    /// computed only when the bound is above `floor`, so every decision against a level of
    /// at least `floor` is the same as from the exact value (γ h² x is monotone in x also in
    /// floating point).
    #[inline(always)]
    fn indicator_above<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        r: &[f64],
        h: f64,
        floor: f64,
    ) -> f64 {
        if !floor.is_finite() {
            return 0.0;
        }
        let scale = self.tab.gamma * h * h;
        let lsrt2_weights = matches!(self.err_weights[..], [a, b] if a == -1.0 && b == 1.0);
        if let (true, Some(gain)) = (lsrt2_weights, self.kinematics_gain) {
            // Screen: γ h² κ max |Δv₂ − Δv₁| over the speeds bounds the system's bound below,
            // so a step it passes is not split by the full test either (one pass, no stores).
            let n = self.n_speeds;
            let (d0, d1, l) = (&self.work.dv[0], &self.work.dv[1], &self.error_scales);
            let m = match &self.active_speeds {
                Some(idx) => max_abs_scaled_difference_at(idx, d0, d1, l),
                None => max_abs_scaled_difference(&d0[..n], &d1[..n], &l[..n]),
            };
            if scale * gain * m <= floor {
                return 0.0;
            }
        }
        // est_v = Σ e_i Δv_i in one pass for the two-stage weights (−1, 1) of LSRT2.
        match self.err_weights[..] {
            [_, _] if lsrt2_weights => {
                let (d0, d1) = (&self.work.dv[0], &self.work.dv[1]);
                let l = &self.error_scales;
                for (((e, x0), x1), s) in self.est_v.iter_mut().zip(d0).zip(d1).zip(l) {
                    *e = (x1 - x0) * s;
                }
            }
            _ => {
                self.est_v.fill(0.0);
                for (i, &w) in self.err_weights.iter().enumerate() {
                    if w != 0.0 {
                        axpy(w, &self.work.dv[i], &mut self.est_v);
                    }
                }
                for (e, s) in self.est_v.iter_mut().zip(&self.error_scales) {
                    *e *= s;
                }
            }
        }
        let bound = sys.kinematics_max_abs_bound(r, &self.est_v, &mut self.est_r);
        if scale * bound <= floor {
            return 0.0;
        }
        scale * self.largest_position_entry(sys, r)
    }

    /// max_i |(K(r) est_v)_i| (`est_v` already scaled).
    fn largest_position_entry<S: MechanicalSystem + ?Sized>(&mut self, sys: &S, r: &[f64]) -> f64 {
        sys.kinematics(r, &self.est_v, &mut self.est_r);
        self.est_r.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }

    /// The local error indicator the split decision compares with [`Self::split_tolerance`],
    /// for a given velocity-space stage difference x = Σ e_i Δv_i (length n_v) at position r:
    /// γ h² max_i |(K(r) (ℓ ∘ x))_i| in m, with the system's scales ℓ
    /// ([`MechanicalSystem::error_scales`]). For tests and diagnostics; the step computes the
    /// same value from its own stages (after a screen and a bound that only skip it when it
    /// is below the tolerance). Does not allocate.
    pub fn error_indicator<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        r: &[f64],
        x: &[f64],
    ) -> f64 {
        for ((e, xi), s) in self.est_v.iter_mut().zip(x).zip(&self.error_scales) {
            *e = xi * s;
        }
        self.tab.gamma * self.h * self.h * self.largest_position_entry(sys, r)
    }

    /// Linearises at (t, r, v) and factors the iteration matrix for step h.
    fn relinearise<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        r: &[f64],
        v: &[f64],
        h: f64,
    ) -> Result<(), StepError> {
        // Systems without a congruence form leave the flag cleared.
        self.lin.congruent = false;
        if self.congruent {
            sys.linearise_congruent(t, r, v, &mut self.lin);
        } else {
            sys.linearise(t, r, v, &mut self.lin);
        }
        self.work.load_compact(&self.lin);
        self.stats.linearisations += 1;
        self.stale_pending = false;
        self.half_h = f64::NAN;
        self.factor(t, h)?;
        self.have_lin = true;
        Ok(())
    }

    /// Factors the iteration matrix of the current linearisation for step h.
    fn factor(&mut self, t: f64, h: f64) -> Result<(), StepError> {
        self.factored_h = f64::NAN;
        factor_iteration_matrix(&self.lin, h * self.tab.gamma, &mut self.a, self.lu.as_mut())
            .map_err(|source| StepError::Singular { t, source })?;
        self.factored_h = h;
        self.stats.factorisations += 1;
        Ok(())
    }

    /// Makes a factorisation of the current linearisation for the half step h2 available and
    /// returns whether it is in `lu_half` (else `lu` was re-factored for h2). `lu_half` is
    /// factored at most once per linearisation: consecutive split steps that share a (lagged)
    /// Jacobian share it, and the steps after them keep `lu` factored for h.
    fn factor_half(&mut self, t: f64, h2: f64) -> Result<bool, StepError> {
        let Some(lu_half) = self.lu_half.as_mut() else {
            self.factor(t, h2)?;
            return Ok(false);
        };
        if self.half_h != h2 {
            self.half_h = f64::NAN;
            factor_iteration_matrix(
                &self.lin,
                h2 * self.tab.gamma,
                &mut self.a,
                lu_half.as_mut(),
            )
            .map_err(|source| StepError::Singular { t, source })?;
            self.half_h = h2;
            self.stats.factorisations += 1;
        }
        Ok(true)
    }

    /// One step of size h from (t, r, v) with the current factorisation (`lu_half` if `half`,
    /// else `lu`), q(t, r, v) in `q0`; updates (r, v) and projects r.
    fn advance<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        h: f64,
        r: &mut [f64],
        v: &mut [f64],
        half: bool,
    ) {
        self.run_stages(sys, t, h, r, v, half);
        self.update(sys, h, r, v);
    }

    /// The stages of one step of size h from (t, r, v), as [`Self::advance`], without the
    /// update: the increments stay in `work`, (r, v) unchanged.
    fn run_stages<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        h: f64,
        r: &[f64],
        v: &[f64],
        half: bool,
    ) {
        let lu: &mut dyn LinearSolver = match (half, self.lu_half.as_mut()) {
            (true, Some(lu_half)) => lu_half.as_mut(),
            _ => self.lu.as_mut(),
        };
        let start = StepStart {
            t,
            h,
            r,
            v,
            fresh_q: Some(&self.q0),
            exact_kinematics: false,
        };
        stages(
            sys,
            &self.tab,
            &self.lin,
            lu,
            start,
            &mut self.work,
            &mut self.stats,
        );
    }

    /// (r, v) += h Σ b_i (Δr_i, Δv_i) from the stages in `work`; projects r.
    #[inline(always)]
    fn update<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        h: f64,
        r: &mut [f64],
        v: &mut [f64],
    ) {
        for i in 0..self.tab.stages {
            let b = h * self.tab.b[i];
            if b != 0.0 {
                axpy(b, &self.work.dr[i], r);
                axpy(b, &self.work.dv[i], v);
            }
        }
        sys.project(r);
    }

    /// Linearises and factors at (t, r, v) as a re-linearising step would, without stepping;
    /// the following steps reuse it until the next scheduled re-linearisation. Restoring a
    /// snapshot between re-linearisations this way continues bit for bit.
    pub fn linearise_at<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Result<(), StepError> {
        let h = self.h;
        self.relinearise(sys, t, r, v, h)
    }

    /// Forces a re-linearisation at the next step (e.g. after a discontinuity).
    pub fn invalidate(&mut self) {
        self.have_lin = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockPattern;
    use std::sync::Arc;

    use crate::dense::DenseLu;

    /// Two masses in a chain (ground –k₁,c₁– m₁ –k₂,c₂– m₂), a force on m₂; K = I, 1 × 1
    /// blocks. `jac_scale` scales the stiffness and damping in the linearisation only: 1 gives
    /// the exact Jacobian, anything else a wrong one (as a lagged Jacobian is).
    struct Chain {
        k: [f64; 2],
        c: [f64; 2],
        f: f64,
        jac_scale: f64,
    }

    impl Chain {
        fn new(jac_scale: f64) -> Self {
            Self {
                k: [4.0e4, 9.0e4],
                c: [30.0, 120.0],
                f: 50.0,
                jac_scale,
            }
        }
    }

    impl MechanicalSystem for Chain {
        fn n_r(&self) -> usize {
            2
        }
        fn n_v(&self) -> usize {
            2
        }
        fn pattern(&self) -> Arc<BlockPattern> {
            Arc::new(BlockPattern::from_couplings(2, 1, &[(0, 1)]))
        }
        fn accelerations(&mut self, _t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
            let (k, c) = (self.k, self.c);
            let f2 = k[1] * (r[1] - r[0]) + c[1] * (v[1] - v[0]);
            q[0] = -k[0] * r[0] - c[0] * v[0] + f2;
            q[1] = self.f - f2;
        }
        fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
            self.accelerations(t, r, v, &mut lin.q);
            let (k, c, s) = (self.k, self.c, self.jac_scale);
            let p = lin.j_v.pattern().clone();
            for (m, g) in [(&mut lin.j_rk, k), (&mut lin.j_v, c)] {
                m.block_mut(p.slot(0, 0).unwrap())[0] = -s * (g[0] + g[1]);
                m.block_mut(p.slot(0, 1).unwrap())[0] = s * g[1];
                m.block_mut(p.slot(1, 0).unwrap())[0] = s * g[1];
                m.block_mut(p.slot(1, 1).unwrap())[0] = -s * g[1];
            }
            lin.q_t.fill(0.0);
            lin.r.copy_from_slice(r);
        }
        fn kinematics(&self, _r: &[f64], v: &[f64], r_dot: &mut [f64]) {
            r_dot.copy_from_slice(v);
        }
        fn tangent(&self, _r: &[f64], dr: &[f64], w: &mut [f64]) {
            w.copy_from_slice(dr);
        }
    }

    /// A LinearSolver without a spare (`LinearSolver::spare` = None): the stepper falls back to
    /// re-factoring its one factorisation for h/2 and back.
    struct NoSpare(DenseLu);

    impl LinearSolver for NoSpare {
        fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
            self.0.factor_block(a)
        }
        fn solve_in_place(&mut self, b: &mut [f64]) {
            self.0.solve_in_place(b)
        }
    }

    /// The h/2 factorisation kept beside the one for h changes no result (the same matrices are
    /// factored) and saves factorisations: with re-linearisation every 5 steps and every step
    /// split for accuracy (tolerance 0), one h/2 factorisation per linearisation instead of two
    /// per split step (h/2, then h again at the next step that keeps the Jacobian).
    #[test]
    fn spare_factorisation_changes_nothing_but_the_lu_count() {
        let run = |lu: Box<dyn LinearSolver + Send>| {
            let mut sys = Chain::new(1.0);
            let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, 5, lu);
            st.split_tolerance = 0.0;
            let (mut r, mut v) = (vec![0.0; 2], vec![0.0; 2]);
            for k in 0..20 {
                st.step(&mut sys, k, &mut r, &mut v).unwrap();
            }
            (r, v, st.stats)
        };
        let (r1, v1, s1) = run(Box::new(DenseLu::new(2)));
        let (r0, v0, s0) = run(Box::new(NoSpare(DenseLu::new(2))));
        assert_eq!((r1, v1), (r0, v0));
        assert_eq!((s1.error_splits, s0.error_splits), (20, 20));
        assert_eq!(s1.linearisations, 4);
        // Spare: 4 for h + 4 for h/2. Without: 4 + 20 for h/2 + 16 back to h.
        assert_eq!((s1.factorisations, s0.factorisations), (8, 40));
    }

    /// A mass on a hardening spring, k(x) = k₀ (1 + x²/a²), with a damper; 1 × 1 blocks. The
    /// stiffness changes fourfold over the motion from x₀ = 2a, so a lagged Jacobian differs
    /// from the current one (ω₀ h = 1 at h = 1 ms).
    struct Hardening;

    impl Hardening {
        const K0: f64 = 1.0e6;
        const A: f64 = 0.01;
        const C: f64 = 50.0;
    }

    impl MechanicalSystem for Hardening {
        fn n_r(&self) -> usize {
            1
        }
        fn n_v(&self) -> usize {
            1
        }
        fn pattern(&self) -> Arc<BlockPattern> {
            Arc::new(BlockPattern::from_couplings(1, 1, &[]))
        }
        fn accelerations(&mut self, _t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
            let x = r[0] / Self::A;
            q[0] = -Self::K0 * r[0] * (1.0 + x * x) - Self::C * v[0];
        }
        fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
            self.accelerations(t, r, v, &mut lin.q);
            let x = r[0] / Self::A;
            let slot = lin.j_v.pattern().slot(0, 0).unwrap();
            lin.j_rk.block_mut(slot)[0] = -Self::K0 * (1.0 + 3.0 * x * x);
            lin.j_v.block_mut(slot)[0] = -Self::C;
            lin.q_t.fill(0.0);
            lin.r.copy_from_slice(r);
        }
        fn kinematics(&self, _r: &[f64], v: &[f64], r_dot: &mut [f64]) {
            r_dot.copy_from_slice(v);
        }
        fn tangent(&self, _r: &[f64], dr: &[f64], w: &mut [f64]) {
            w.copy_from_slice(dr);
        }
    }

    /// `n` LSRT2 steps of [`Hardening`] from x = 2a at rest with the given schedule.
    fn hardening_run(every: u64, stale: f64, n: u64) -> (f64, f64, Stats) {
        let mut sys = Hardening;
        let lu = Box::new(DenseLu::new(1));
        let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, every, lu);
        st.stale_indicator = stale;
        let (mut r, mut v) = (vec![2.0 * Hardening::A], vec![0.0]);
        for k in 0..n {
            st.step(&mut sys, k, &mut r, &mut v).unwrap();
        }
        (r[0], v[0], st.stats)
    }

    /// The adaptive schedule's decision and count: with a level below every indicator each
    /// step taken with a lagged Jacobian makes the next one re-linearise, which with a grid of
    /// 1000 steps is the fixed schedule "every 2 steps" — bit for bit, with every
    /// re-linearisation after the first counted as stale. A level above every indicator leaves
    /// the fixed schedule (bit for bit, none counted). With a grid of 3, the count is exactly
    /// the re-linearisations off the grid (a trigger before a grid step adds none).
    #[test]
    fn adaptive_schedule_relinearises_after_lagged_steps_above_the_level() {
        let n = 40;
        let (r2, v2, s2) = hardening_run(2, f64::INFINITY, n);
        let (ra, va, sa) = hardening_run(1000, f64::MIN_POSITIVE, n);
        assert_eq!((ra, va), (r2, v2));
        assert_eq!((s2.linearisations, s2.stale_relinearisations), (20, 0));
        assert_eq!((sa.linearisations, sa.stale_relinearisations), (20, 19));
        assert_eq!(sa.q_evals, s2.q_evals);
        let (r5, v5, s5) = hardening_run(5, f64::INFINITY, n);
        let (rh, vh, sh) = hardening_run(5, 1e30, n);
        assert_eq!((rh, vh), (r5, v5));
        assert_eq!((sh.linearisations, sh.stale_relinearisations), (8, 0));
        assert_eq!(s5.linearisations, 8);
        // Grid 3 over 30 steps: on the grid at 0, 3, …, 27 (10); the lagged steps 1, 4, …, 28
        // each ask for one at 2, 5, …, 29 (10); the fresh steps 2, 5, … ask for none.
        let (_, _, s3) = hardening_run(3, f64::MIN_POSITIVE, 30);
        assert_eq!((s3.linearisations, s3.stale_relinearisations), (20, 10));
    }

    /// The four-lane pass against a plain fold, for every remainder length, a NaN skipped.
    #[test]
    fn max_abs_scaled_difference_is_the_largest_scaled_difference() {
        for n in 0..11 {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 1.3).cos()).collect();
            let l: Vec<f64> = (0..n).map(|i| 0.1 + (i % 3) as f64).collect();
            let expect = (0..n).fold(0.0f64, |m, i| m.max(((b[i] - a[i]) * l[i]).abs()));
            assert_eq!(max_abs_scaled_difference(&a, &b, &l), expect, "n = {n}");
        }
        let (a, b) = ([0.0, f64::NAN, 1.0], [0.5, 0.0, -1.0]);
        assert_eq!(max_abs_scaled_difference(&a, &b, &[1.0, 1.0, 0.5]), 1.0);
    }

    #[test]
    fn first_non_finite_finds_the_first_bad_entry() {
        let r: Vec<f64> = (0..13).map(|i| i as f64 - 6.5).collect();
        let v: Vec<f64> = (0..9).map(|i| (i as f64).exp()).collect();
        assert_eq!(first_non_finite(&r, &v), None);
        for (k, bad) in [
            (0, f64::NAN),
            (12, f64::INFINITY),
            (13, f64::NEG_INFINITY),
            (21, f64::NAN),
        ] {
            let (mut r2, mut v2) = (r.clone(), v.clone());
            if k < 13 {
                r2[k] = bad;
            } else {
                v2[k - 13] = bad;
            }
            // A second, later bad entry must not be reported instead.
            v2[8] = if k == 21 { bad } else { f64::NAN };
            assert_eq!(first_non_finite(&r2, &v2), Some(k));
        }
    }

    #[test]
    fn gemv_add_matches_gemv_on_both_paths() {
        let p = Arc::new(BlockPattern::from_couplings(
            5,
            6,
            &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)],
        ));
        let mut a = BlockMatrix::zeros(p.clone());
        let mut b = BlockMatrix::zeros(p.clone());
        for (k, v) in a.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.37).sin();
        }
        for (k, v) in b.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.11).cos() - 0.2;
        }
        let n = p.dim();
        let x: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64).sqrt()).collect();
        let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.5).sin()).collect();
        let y0: Vec<f64> = (0..n).map(|i| i as f64 - 7.0).collect();
        let mut expect = y0.clone();
        a.gemv(1.0, &x, 1.0, &mut expect);
        b.gemv(0.25, &z, 1.0, &mut expect);
        let mut expect_a = y0.clone();
        a.gemv(1.0, &x, 1.0, &mut expect_a);
        for simd in [None, crate::cpu::Avx2Fma::detect()] {
            let mut y = y0.clone();
            gemv_add(simd, &a, &x, Some((&b, 0.25, &z)), &mut y);
            for (u, v) in y.iter().zip(&expect) {
                assert!(
                    (u - v).abs() < 1e-13 * (1.0 + v.abs()),
                    "simd {simd:?}: {u} vs {v}"
                );
            }
            let mut y = y0.clone();
            gemv_add(simd, &a, &x, None, &mut y);
            for (u, v) in y.iter().zip(&expect_a) {
                assert!(
                    (u - v).abs() < 1e-13 * (1.0 + v.abs()),
                    "simd {simd:?}: {u} vs {v}"
                );
            }
        }
    }
}
