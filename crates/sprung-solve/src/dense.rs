//! Dense LU with partial pivoting (faer), the reference and fallback for [`crate::block_lu`].
//!
//! Source document 000, section 3, solves the linear system of every LSRT2 stage, eq. (10)
//! `A x = b` with the coefficient matrix of eq. (11), `A = E - h γ J_v - (h γ)² J_r K`, "by LU
//! decomposition and subsequent forward/back substitution". Because `γ11 = γ22`, both stages of a
//! step share the matrix, so one factorisation serves two solves. [`DenseLu`] is the variant
//! "without exploiting the sparsity structure" of document 000, Tabelle 2: it ignores the block
//! pattern and factors the full `n × n` matrix with faer's allocation-free low-level routines
//! (`faer::linalg::lu::partial_pivoting`), using a matrix, permutation and scratch buffer that are
//! all allocated once in [`DenseLu::new`].
//!
//! The module also defines what both solvers share: the [`LinearSolver`] trait, through which the
//! integrators switch between dense and block-sparse factorisation, and the [`SingularMatrix`]
//! error.
//!
//! # Singularity test
//!
//! Both solvers apply the same criterion so that they agree on which matrices they reject: a
//! factorisation fails if an input entry is not finite, or if a pivot `u_kk` of the triangular
//! factor `U` is not finite or satisfies `|u_kk| <= n ε ‖A‖_max`, where `n` is the scalar
//! dimension, `ε` the machine epsilon and `‖A‖_max` the largest absolute entry of the input.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::perm::PermRef;
use faer::{Mat, MatMut, Par};

use crate::block::BlockMatrix;

/// A factorisation failed: the matrix is singular to working precision or not finite.
///
/// Scalar indices (`row`, `col`) refer to the matrix as passed in, i.e. for a block matrix with
/// block size `b` the scalar index `i` lies in block `i / b`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum SingularMatrix {
    /// An input entry is NaN or infinite.
    #[error(
        "coefficient matrix entry ({row}, {col}) is {value}; every entry must be finite \
         (check the Jacobians, the kinematic matrix and the step size for NaN or overflow)"
    )]
    NonFiniteEntry {
        /// Scalar row of the offending entry.
        row: usize,
        /// Scalar column of the offending entry.
        col: usize,
        /// The offending value.
        value: f64,
    },
    /// Elimination met a pivot that is zero relative to the matrix scale (or not finite).
    #[error(
        "coefficient matrix is singular to working precision: the pivot for row/column {row}{} \
         is {pivot:e}, not above the tolerance {tolerance:e} (= n·ε·max|a_ij|); check that every \
         body has positive mass and inertia and that no body is left without coupling or \
         diagonal term",
        match block { Some(b) => format!(" (block {b})"), None => String::new() }
    )]
    ZeroPivot {
        /// Scalar row/column index (elimination step) at which elimination broke down.
        row: usize,
        /// Block index (body) containing `row`, reported by the block-sparse solver.
        block: Option<usize>,
        /// The pivot that was found (may be NaN or infinite after an overflow).
        pivot: f64,
        /// The tolerance the pivot was compared against.
        tolerance: f64,
    },
}

impl SingularMatrix {
    /// The scalar row at which the problem was detected.
    pub fn row(&self) -> usize {
        match *self {
            SingularMatrix::NonFiniteEntry { row, .. } | SingularMatrix::ZeroPivot { row, .. } => {
                row
            }
        }
    }

    /// The block (body) index, if the solver reported one.
    pub fn block(&self) -> Option<usize> {
        match *self {
            SingularMatrix::NonFiniteEntry { .. } => None,
            SingularMatrix::ZeroPivot { block, .. } => block,
        }
    }
}

/// A direct solver for `A x = b` that factors once and then solves many right-hand sides.
///
/// Implemented by [`DenseLu`] and [`crate::block_lu::BlockSparseLu`], so an integrator can be
/// written once and run with either (document 000, Tabelle 2: "with/without exploiting the
/// sparsity structure of (11)"). Implementations must not allocate in either method.
pub trait LinearSolver {
    /// Factors `a`, replacing any previous factorisation. On error the solver holds no valid
    /// factorisation until the next successful call.
    fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix>;

    /// Overwrites `b` with the solution `x` of `A x = b` for the last factored `A`.
    ///
    /// # Panics
    /// If there is no valid factorisation or `b` has the wrong length (programming errors).
    fn solve_in_place(&mut self, b: &mut [f64]);

    /// Like [`Self::solve_in_place`], for a right-hand side that is zero outside the blocks
    /// `blocks` (block indices of the pattern) of a matrix whose blocks coupling `blocks` with
    /// the others are zero (stored zeros where the pattern has them): the solution is then zero
    /// outside `blocks`, and a solver may leave out the others' work — it only adds products
    /// with exact zeros, so the result is the full solve's, bit for bit (up to the sign of a
    /// zero). The partly implicit Euler solves its state and its speed equations so
    /// ([`crate::mech::pie`]). Default: the full solve.
    fn solve_blocks_in_place(&mut self, b: &mut [f64], blocks: std::ops::Range<usize>) {
        let _ = blocks;
        self.solve_in_place(b);
    }

    /// A second, independent solver for matrices of the same size and pattern (it holds no
    /// factorisation), for a caller that keeps two factorisations at once (the fixed-step
    /// Rosenbrock stepper's h/2 matrix of its split steps). Allocates; call it at set-up. The
    /// default `None` means the caller must re-factor instead.
    fn spare(&self) -> Option<Box<dyn LinearSolver + Send>> {
        None
    }

    /// Factors δ I + α A + β B (A, B and `scratch` of one pattern): the iteration matrix
    /// I − hγ J_v − (hγ)² J_r K of the linear-implicit steppers. Default: the sum formed in
    /// `scratch` ([`BlockMatrix::combination_plus_identity_into`]) and factored. A solver that
    /// gathers the entries it needs may form them itself; they must be those of `scratch`, bit
    /// for bit.
    fn factor_combination(
        &mut self,
        a: &BlockMatrix,
        alpha: f64,
        b: &BlockMatrix,
        beta: f64,
        delta: f64,
        scratch: &mut BlockMatrix,
    ) -> Result<(), SingularMatrix> {
        a.combination_plus_identity_into(alpha, b, beta, delta, scratch);
        self.factor(scratch)
    }

    /// The solver as a [`crate::compact::CompactInverse`], if it is one: the Rosenbrock stages
    /// then take their stage product on the same active coordinates into its gather
    /// ([`crate::compact::CompactInverse::solve_in_place_adding`]). Default `None`.
    fn compact_inverse(&mut self) -> Option<&mut crate::compact::CompactInverse> {
        None
    }
}

/// Tolerance of the singularity test shared by both solvers: `n ε max|a_ij|`.
pub(crate) fn pivot_tolerance(n: usize, max_abs: f64) -> f64 {
    n as f64 * f64::EPSILON * max_abs
}

/// Largest absolute value of `v`, or `None` if an entry is NaN or infinite. Uses independent
/// lanes so that the scan vectorises (a single running maximum is a serial dependency chain).
#[inline(always)]
pub(crate) fn max_abs_if_finite(v: &[f64]) -> Option<f64> {
    const LANES: usize = 8;
    let mut max = [0.0f64; LANES];
    // x·0 is ±0 for finite x and NaN otherwise; the NaN sticks in the sum.
    let mut probe = [0.0f64; LANES];
    let chunks = v.chunks_exact(LANES);
    let rem = chunks.remainder();
    for c in chunks {
        for l in 0..LANES {
            let a = c[l].abs();
            max[l] = if a > max[l] { a } else { max[l] };
            probe[l] += c[l] * 0.0;
        }
    }
    for (l, &x) in rem.iter().enumerate() {
        let a = x.abs();
        max[l] = if a > max[l] { a } else { max[l] };
        probe[l] += x * 0.0;
    }
    let finite = probe.iter().sum::<f64>() == 0.0;
    finite.then(|| max.iter().fold(0.0, |m: f64, &x| m.max(x)))
}

/// Singularity test of one pivot: finite and above the tolerance (NaN fails).
#[inline(always)]
pub(crate) fn pivot_ok(pivot: f64, tolerance: f64) -> bool {
    pivot.is_finite() && pivot.abs() > tolerance
}

/// Dense LU factorisation `P A = L U` with partial pivoting, all storage preallocated.
pub struct DenseLu {
    n: usize,
    /// `L` (unit lower, strictly below the diagonal) and `U` (upper), column-major.
    lu: Mat<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
    factored: bool,
}

impl std::fmt::Debug for DenseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseLu")
            .field("n", &self.n)
            .field("factored", &self.factored)
            .finish_non_exhaustive()
    }
}

impl DenseLu {
    /// Allocates a solver for `n × n` systems; no further allocation happens afterwards on the
    /// constructing thread.
    ///
    /// faer's matrix-product kernels keep a per-thread scratch buffer that they allocate on the
    /// first large product in each thread. The constructor therefore runs one warm-up
    /// factorisation and solve of the identity, so that `factor`/`solve_in_place` never allocate
    /// on the thread that built the solver. (A solver moved to another thread may trigger that
    /// one-time per-thread allocation there.)
    pub fn new(n: usize) -> Self {
        let par = Par::Seq;
        let req = StackReq::any_of(&[
            factor::lu_in_place_scratch::<usize, f64>(n, n, par, Default::default()),
            solve::solve_in_place_scratch::<usize, f64>(n, 1, par),
        ]);
        let mut lu = Self {
            n,
            lu: Mat::identity(n, n),
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
            factored: false,
        };
        // Warm-up (see above); the identity always factors.
        if lu.factor_loaded(1.0).is_ok() {
            let mut x = vec![1.0; n];
            lu.solve_in_place(&mut x);
        }
        lu.factored = false;
        lu
    }

    /// The dimension `n` the solver was built for.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Floating-point operations of one factorisation, `2n³/3 - n²/2 - n/6` (multiplications,
    /// additions and divisions of the unpivoted elimination; pivot search not counted).
    pub fn flops(&self) -> u64 {
        let n = self.n as u64;
        // Σ_{m=1}^{n-1} (m + 2 m²): m divisions (scalings) and m² multiply-adds per step.
        (1..n).map(|m| m + 2 * m * m).sum()
    }

    /// Floating-point operations of one solve (`2n²` minus the unit diagonal of `L`).
    pub fn solve_flops(&self) -> u64 {
        let n = self.n as u64;
        2 * n * n - n
    }

    /// Factors the block matrix `a` (copied into the preallocated dense matrix, no allocation).
    ///
    /// # Panics
    /// If `a.pattern().dim() != self.dim()`.
    pub fn factor_block(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        let p = a.pattern();
        let n = self.n;
        assert_eq!(
            p.dim(),
            n,
            "DenseLu built for dimension {n}, got a block matrix of dimension {}",
            p.dim()
        );
        self.factored = false;
        let b = p.block_size();
        let Some(max_abs) = max_abs_if_finite(a.values()) else {
            return Err(Self::find_non_finite_block(a));
        };
        self.lu.fill(0.0);
        for i in 0..p.n_blocks() {
            for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
                let j = p.col_idx()[s];
                let blk = a.block(s);
                for c in 0..b {
                    let col = self.lu.col_as_slice_mut(j * b + c);
                    for r in 0..b {
                        col[i * b + r] = blk[r * b + c];
                    }
                }
            }
        }
        self.factor_loaded(max_abs)
    }

    /// Factors a dense `n × n` matrix given row-major (no allocation).
    ///
    /// # Panics
    /// If `row_major.len() != n * n`.
    pub fn factor_dense(&mut self, row_major: &[f64]) -> Result<(), SingularMatrix> {
        let n = self.n;
        assert_eq!(
            row_major.len(),
            n * n,
            "DenseLu::factor_dense expects {n}×{n} = {} entries",
            n * n
        );
        self.factored = false;
        let Some(max_abs) = max_abs_if_finite(row_major) else {
            let i = row_major.iter().position(|v| !v.is_finite()).unwrap_or(0);
            return Err(SingularMatrix::NonFiniteEntry {
                row: i / n,
                col: i % n,
                value: row_major[i],
            });
        };
        for c in 0..n {
            let col = self.lu.col_as_slice_mut(c);
            for (r, x) in col.iter_mut().enumerate() {
                *x = row_major[r * n + c];
            }
        }
        self.factor_loaded(max_abs)
    }

    /// Locates the first non-finite entry of a block matrix (error path only).
    fn find_non_finite_block(a: &BlockMatrix) -> SingularMatrix {
        let p = a.pattern();
        let b = p.block_size();
        for i in 0..p.n_blocks() {
            for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
                let j = p.col_idx()[s];
                for (t, &value) in a.block(s).iter().enumerate() {
                    if !value.is_finite() {
                        return SingularMatrix::NonFiniteEntry {
                            row: i * b + t / b,
                            col: j * b + t % b,
                            value,
                        };
                    }
                }
            }
        }
        unreachable!("find_non_finite_block called on a finite matrix")
    }

    fn factor_loaded(&mut self, max_abs: f64) -> Result<(), SingularMatrix> {
        let n = self.n;
        let stack = MemStack::new(&mut self.mem);
        factor::lu_in_place(
            self.lu.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        let tolerance = pivot_tolerance(n, max_abs);
        for k in 0..n {
            let pivot = self.lu[(k, k)];
            if !pivot_ok(pivot, tolerance) {
                return Err(SingularMatrix::ZeroPivot {
                    row: k,
                    block: None,
                    pivot,
                    tolerance,
                });
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Overwrites `b` with `A⁻¹ b` for the last factored `A` (no allocation).
    ///
    /// # Panics
    /// If no factorisation succeeded since construction or the last failure, or
    /// `b.len() != self.dim()`.
    pub fn solve_in_place(&mut self, b: &mut [f64]) {
        assert!(
            self.factored,
            "DenseLu::solve_in_place called without a successful factorisation"
        );
        let n = self.n;
        assert_eq!(
            b.len(),
            n,
            "right-hand side has length {}, expected {n}",
            b.len()
        );
        // perm/perm_inv were produced together by lu_in_place; new_checked re-verifies them
        // without allocating.
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
        let stack = MemStack::new(&mut self.mem);
        solve::solve_in_place(
            self.lu.as_ref(),
            self.lu.as_ref(),
            perm,
            rhs,
            Par::Seq,
            stack,
        );
    }
}

impl LinearSolver for DenseLu {
    fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        self.factor_block(a)
    }

    fn solve_in_place(&mut self, b: &mut [f64]) {
        DenseLu::solve_in_place(self, b)
    }

    fn spare(&self) -> Option<Box<dyn LinearSolver + Send>> {
        Some(Box::new(DenseLu::new(self.n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_small_system_exactly() {
        // A = [[0, 2], [3, 1]] needs a row swap; x = [1, 2] gives b = [4, 5].
        let mut lu = DenseLu::new(2);
        lu.factor_dense(&[0.0, 2.0, 3.0, 1.0]).unwrap();
        let mut b = [4.0, 5.0];
        lu.solve_in_place(&mut b);
        assert!(
            (b[0] - 1.0).abs() < 1e-15 && (b[1] - 2.0).abs() < 1e-15,
            "{b:?}"
        );
        // Second solve with the same factorisation.
        let mut b = [2.0, 3.0];
        lu.solve_in_place(&mut b);
        assert!(
            (b[0] - 2.0 / 3.0).abs() < 1e-15 && (b[1] - 1.0).abs() < 1e-15,
            "{b:?}"
        );
    }

    #[test]
    fn reports_singular_row() {
        let mut lu = DenseLu::new(3);
        // Third row = first + second.
        let err = lu
            .factor_dense(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 5.0, 7.0, 9.0])
            .unwrap_err();
        assert!(
            matches!(
                err,
                SingularMatrix::ZeroPivot {
                    row: 2,
                    block: None,
                    ..
                }
            ),
            "{err}"
        );
        let err = lu
            .factor_dense(&[1.0, 0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0, 0.0, 1.0])
            .unwrap_err();
        assert!(
            matches!(err, SingularMatrix::NonFiniteEntry { row: 1, col: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("(1, 1)"));
    }
}
