//! Block-sparse LU factorisation along the body-coupling graph.
//!
//! Source document 000, section 3: every stage of the LSRT2 step solves eq. (10), `A x = b`, with
//! `A = E - h γ J_v - (h γ)² J_r K` (eq. 11). The pattern of `A` is the body-coupling graph
//! (Bild 3): one dense 6 × 6 block per body on the diagonal, and an off-diagonal block wherever two
//! bodies are coupled by a force element. Eqs. (12)-(17) exploit this by eliminating the bodies in
//! a hand-chosen order that follows the topology of the axle (wheel carrier → spring/damper →
//! stabiliser, from both halves inwards): the Schur complements `Ã_ii` of eq. (14) and the reduced
//! right-hand sides of eq. (15) are formed, then the separator is solved (13) and the eliminated
//! bodies are recovered by back substitution (16), (17). The document notes that this partition
//! "is not necessarily the most efficient one" and that it is topology specific (section 4).
//!
//! [`BlockSparseLu`] is the general form of that procedure for any topology:
//!
//! * **Ordering.** A fill-reducing elimination order of the blocks is chosen once. Candidates
//!   are analysed symbolically — greedy minimum degree and greedy minimum fill (minimum
//!   deficiency), each with several deterministic tie-breaking rankings, and the natural order —
//!   and the one with the smallest exact flop count is kept.
//!   Any other order, e.g. document 000's hand partition, can be supplied through
//!   [`BlockSparseLu::with_order`]. Disconnected graphs and single blocks need no special case.
//! * **Symbolic factorisation.** The elimination is simulated on the block graph, giving the
//!   filled block pattern of `L` and `U` (the blocks `A_ij` that become non-zero through eq. 14),
//!   the list of Schur-complement updates of every step, and all numeric storage. Each step `k`
//!   owns one contiguous region `[A_kk | U_kj … | L_ikᵀ …]` (the `L` blocks are stored transposed so
//!   that every kernel works on contiguous rows), so the updates of step `k` write only
//!   to regions of later steps and borrow checking needs no copies or `unsafe`.
//! * **Numeric factorisation** ([`BlockSparseLu::factor`], allocation-free). Block Gaussian
//!   elimination in the chosen order without pivoting between blocks: for step `k`
//!   `P_k A_kk = L_k U_k` (partial pivoting inside the pivot block, transpositions stored per
//!   block), `U_kj = L_k⁻¹ P_k A_kj`, `L_ik = A_ik U_k⁻¹` and `A_ij ← A_ij - L_ik U_kj` for all
//!   later neighbours `i, j` — this is eq. (14) with `Ã_kk⁻¹ = U_k⁻¹ L_k⁻¹ P_k`. Block pivoting is
//!   not needed for the coefficient matrices of eq. (11), which are the identity plus the
//!   mass-scaled damping and stiffness terms `hγ M⁻¹C + (hγ)² M⁻¹K` of a mechanical system; a
//!   pivot block that is singular or not finite is reported with its body index (see
//!   [`SingularMatrix`] for the tolerance).
//! * **Solve** ([`BlockSparseLu::solve_in_place`], allocation-free, repeatable): forward
//!   substitution (eq. 15) followed by back substitution (eqs. 16, 17), working directly on the
//!   caller's vector in the original body numbering.
//!
//! # Layout of the module
//!
//! * [`symbolic`]: ordering and symbolic analysis, [`BlockSymbolic`]. It depends only on the
//!   pattern, so it is computed once and shared (`Arc`) by any number of numeric factorisations
//!   ([`BlockSparseLu::from_symbolic`]), e.g. every Newton iteration of a static equilibrium.
//! * `numeric`: the numeric driver — scatter, block elimination, substitutions.
//! * `kernels`: the per-block kernels, generic over the block size (compile-time `b = 6, 3, 1`
//!   or run-time), and `avx6`, their hand-vectorised 6 × 6 AVX2 + FMA versions.
//!
//! # Performance
//!
//! For `b = 6` (rigid bodies; also `b = 3` and `b = 1`) the kernels are compiled with the block
//! size as a constant, so the compiler unrolls and vectorises the small loops; on x86-64 CPUs with
//! AVX2 and FMA (detected at run time) the 6 × 6 path uses hand-vectorised kernels instead
//! (module `avx6`: a block row is one 4-wide and one 2-wide register; pivot-block LU, panel
//! solves, Schur updates and substitutions with fused multiply-adds). Other block sizes use the
//! same code with run-time loop bounds.
//! [`BlockSparseLu::flops`] and [`BlockSparseLu::solve_flops`] give the exact operation counts
//! (the floor for the run time). For the 24-body double-wishbone pattern of the `lu` benchmark the
//! factorisation needs 52.6 kflop against 1.98 Mflop for dense LU of the 144 × 144 matrix, and a
//! solve 7.5 kflop against 41 kflop. Measured on the shared two-core development VM (x86-64 with
//! AVX2/FMA, moderate load), one LSRT2 step's linear algebra — a factorisation and two solves —
//! takes about 4.8 µs block-sparse (factorisation about 3.2 µs, solve about 0.8 µs; 6.6, 4.0 and
//! 1.2 µs with the compiler-vectorised FMA kernels used before the `avx6` ones) against about
//! 115 µs dense; see `benches/lu.rs`.

#[cfg(target_arch = "x86_64")]
mod avx6;
mod kernels;
mod numeric;
pub mod symbolic;

use std::sync::Arc;

use crate::block::{BlockMatrix, BlockPattern};
pub use crate::dense::{LinearSolver, SingularMatrix};
use kernels::{Dynamic, Fixed};
pub use symbolic::{BlockSymbolic, OrderError, OrderKind};

/// Sparse LU of a square block matrix with dense `b × b` blocks; see the module documentation.
///
/// The numeric factors and workspaces of one factorisation; the ordering and the filled pattern
/// live in the shared [`BlockSymbolic`].
#[derive(Debug, Clone)]
pub struct BlockSparseLu {
    sym: Arc<BlockSymbolic>,
    values: Vec<f64>,
    /// Row transpositions of the pivot blocks (`b` per step, LAPACK `ipiv` convention).
    ipiv: Vec<usize>,
    /// Reciprocals of the diagonals of the `U_k` (`b` per step).
    inv_diag: Vec<f64>,
    /// Whether the pivot block of step `k` exchanged any rows (else its `ipiv` is the identity).
    pivoted: Vec<bool>,
    tmp: Vec<f64>,
    factored: bool,
    /// The CPU supports AVX2 and FMA (x86-64 only; selects the fused 6 × 6 kernels).
    /// The SIMD token ([`crate::cpu::Avx2Fma`]) when the AVX2 + FMA kernels are in use.
    avx2_fma: Option<crate::cpu::Avx2Fma>,
}

impl BlockSparseLu {
    /// Symbolic analysis of `pattern` ([`BlockSymbolic::new`]: chooses the elimination order,
    /// cheapest of minimum degree, minimum fill and natural order by exact flop count, computes
    /// the filled block pattern) and preallocates all numeric storage and scratch.
    pub fn new(pattern: &BlockPattern) -> Self {
        Self::from_symbolic(Arc::new(BlockSymbolic::new(pattern)))
    }

    /// Like [`BlockSparseLu::new`], but eliminates the blocks in the given order
    /// (`order[k]` = block eliminated at step `k`), e.g. the hand partition of document 000,
    /// eqs. (12)-(17).
    pub fn with_order(pattern: &BlockPattern, order: &[usize]) -> Result<Self, OrderError> {
        Ok(Self::from_symbolic(Arc::new(BlockSymbolic::with_order(
            pattern, order,
        )?)))
    }

    /// Numeric storage for an existing symbolic analysis (no ordering work; the analysis may be
    /// shared by any number of factorisations).
    pub fn from_symbolic(sym: Arc<BlockSymbolic>) -> Self {
        let (n, b) = (sym.n, sym.b);
        let n_slots = sym.region[n];
        Self {
            values: vec![0.0; n_slots * b * b],
            ipiv: vec![0; n * b],
            inv_diag: vec![0.0; n * b],
            pivoted: vec![false; n],
            tmp: vec![0.0; b],
            factored: false,
            avx2_fma: crate::cpu::Avx2Fma::detect(),
            sym,
        }
    }

    /// The shared symbolic analysis (ordering, filled pattern) of this solver.
    pub fn symbolic(&self) -> &Arc<BlockSymbolic> {
        &self.sym
    }

    /// Selects the portable kernels even where AVX2 + FMA kernels are available (`true`), or
    /// returns to automatic selection (`false`). Both give the same results up to rounding; this
    /// exists so that tests and benchmarks can exercise and compare both code paths.
    pub fn force_portable_kernels(&mut self, portable: bool) {
        self.avx2_fma = if portable {
            None
        } else {
            crate::cpu::Avx2Fma::detect()
        };
    }

    /// Whether the AVX2 + FMA kernels are in use (block size 6 on a capable x86-64 CPU).
    pub fn uses_simd_kernels(&self) -> bool {
        self.avx2_fma.is_some() && self.sym.b == 6
    }

    /// Scalar dimension of the systems this solver factors.
    pub fn dim(&self) -> usize {
        self.sym.dim()
    }

    /// The block pattern the solver was analysed for.
    pub fn pattern(&self) -> &BlockPattern {
        &self.sym.pattern
    }

    /// Elimination order: `order()[k]` is the block eliminated at step `k`.
    pub fn order(&self) -> &[usize] {
        &self.sym.order
    }

    /// The heuristic that produced [`BlockSparseLu::order`].
    pub fn order_kind(&self) -> OrderKind {
        self.sym.kind
    }

    /// Number of off-diagonal blocks created by fill-in (counting `(i, j)` and `(j, i)`).
    pub fn fill_blocks(&self) -> usize {
        self.sym.fill.len()
    }

    /// Number of stored blocks of the factors `L` and `U` (diagonal blocks included).
    pub fn factor_blocks(&self) -> usize {
        self.sym.factor_blocks()
    }

    /// Exact floating-point operation count of one numeric factorisation (multiplications,
    /// additions and divisions; pivot search, copies and comparisons are not counted). Per
    /// step `k` with `m_k` later neighbours it is `lu(b) + m_k (b²(b-1) + b³) + m_k² 2b³` with
    /// `lu(b) = b + Σ_{m<b} (m + 2m²)` (131 for `b = 6`).
    pub fn flops(&self) -> u64 {
        self.sym.flops
    }

    /// Exact floating-point operation count of one [`BlockSparseLu::solve_in_place`]:
    /// `Σ_k (b(b-1) + b² + 4 m_k b²)`.
    pub fn solve_flops(&self) -> u64 {
        self.sym.solve_flops
    }

    /// Numeric factorisation of `a` (same pattern as at construction); no allocation.
    ///
    /// # Errors
    /// [`SingularMatrix::NonFiniteEntry`] if an entry of `a` is NaN or infinite,
    /// [`SingularMatrix::ZeroPivot`] (with the body index) if a pivot block is singular to
    /// working precision.
    ///
    /// # Panics
    /// If `a` does not have the pattern the solver was built for (a programming error).
    pub fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        assert!(
            **a.pattern() == self.sym.pattern,
            "BlockSparseLu::factor: the matrix pattern differs from the analysed one; build the solver from the matrix's own pattern"
        );
        self.factored = false;
        match self.sym.b {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the token exists only after run-time detection of AVX2 and FMA.
            6 if self.avx2_fma.is_some() => unsafe { self.factor6_avx2_fma(a.values())? },
            6 => self.factor_impl(Fixed::<6>, a.values())?,
            3 => self.factor_impl(Fixed::<3>, a.values())?,
            1 => self.factor_impl(Fixed::<1>, a.values())?,
            b => self.factor_impl(Dynamic(b), a.values())?,
        }
        self.factored = true;
        Ok(())
    }

    /// Overwrites `x` with `A⁻¹ x` for the last factored `A`; no allocation. May be called any
    /// number of times per factorisation.
    ///
    /// # Panics
    /// If no factorisation succeeded since construction or the last failure, or
    /// `x.len() != self.dim()`.
    pub fn solve_in_place(&mut self, x: &mut [f64]) {
        self.solve_blocks_in_place(x, 0..usize::MAX);
    }

    /// Overwrites `x` with `A⁻¹ x` for a right-hand side that is zero outside the blocks
    /// `blocks` of a matrix without couplings between them and the others
    /// ([`LinearSolver::solve_blocks_in_place`]): the forward and back substitutions visit
    /// only the elimination steps of those blocks. The steps left out would add products with
    /// exact zeros, so the result is [`Self::solve_in_place`]'s bit for bit (up to the sign of a
    /// zero); entries outside `blocks` stay zero. The substitutions run over the elimination
    /// steps from the first to the last of `blocks`' and test each step only if other blocks'
    /// steps lie in between. No allocation. (Leaving out the neighbour
    /// blocks outside `blocks` within a visited step as well saved 0.35 k instructions per
    /// step of the truck's `pie` and cost the full solves of LSRT2 2.5 k per step: not done.)
    ///
    /// # Panics
    /// As [`Self::solve_in_place`].
    pub fn solve_blocks_in_place(&mut self, x: &mut [f64], blocks: std::ops::Range<usize>) {
        assert!(
            self.factored,
            "BlockSparseLu::solve_in_place called without a successful factorisation"
        );
        assert_eq!(
            x.len(),
            self.dim(),
            "right-hand side has length {}, expected {}",
            x.len(),
            self.dim()
        );
        // The elimination steps of `blocks`; when they are consecutive (always for every
        // block, and for a part of a pattern whose order lists the parts one after the other,
        // e.g. `PartlyImplicitEuler::block_sparse_lu`), the copy without the test per step.
        let (steps, consecutive) = self.sym.steps_of(blocks.clone());
        match self.sym.b {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the token exists only after run-time detection of AVX2 and FMA.
            6 if self.avx2_fma.is_some() => unsafe {
                if consecutive {
                    self.solve6_avx2_fma::<false>(x, steps, blocks)
                } else {
                    self.solve6_avx2_fma::<true>(x, steps, blocks)
                }
            },
            6 if consecutive => self.solve_impl::<_, false>(Fixed::<6>, x, steps, blocks),
            6 => self.solve_impl::<_, true>(Fixed::<6>, x, steps, blocks),
            3 if consecutive => self.solve_impl::<_, false>(Fixed::<3>, x, steps, blocks),
            3 => self.solve_impl::<_, true>(Fixed::<3>, x, steps, blocks),
            1 if consecutive => self.solve_impl::<_, false>(Fixed::<1>, x, steps, blocks),
            1 => self.solve_impl::<_, true>(Fixed::<1>, x, steps, blocks),
            b if consecutive => self.solve_impl::<_, false>(Dynamic(b), x, steps, blocks),
            b => self.solve_impl::<_, true>(Dynamic(b), x, steps, blocks),
        }
    }
}

impl LinearSolver for BlockSparseLu {
    fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        BlockSparseLu::factor(self, a)
    }

    fn solve_in_place(&mut self, b: &mut [f64]) {
        BlockSparseLu::solve_in_place(self, b)
    }

    fn solve_blocks_in_place(&mut self, b: &mut [f64], blocks: std::ops::Range<usize>) {
        BlockSparseLu::solve_blocks_in_place(self, b, blocks)
    }

    fn spare(&self) -> Option<Box<dyn LinearSolver + Send>> {
        let mut lu = self.clone();
        lu.factored = false;
        Some(Box::new(lu))
    }
}

#[cfg(test)]
mod tests {
    use super::symbolic::splitmix;
    use super::*;
    use std::sync::Arc;

    fn chain(n: usize, b: usize) -> BlockPattern {
        let pairs: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
        BlockPattern::from_couplings(n, b, &pairs)
    }

    #[test]
    fn chain_has_no_fill_and_tree_order_counts() {
        // Document 000, eq. (12): five blocks in a chain — eliminating from the ends inwards
        // (eqs. 13-17) creates no fill, and neither does minimum degree.
        let p = chain(5, 6);
        let lu = BlockSparseLu::new(&p);
        assert_eq!(lu.fill_blocks(), 0);
        let hand = BlockSparseLu::with_order(&p, &[0, 4, 1, 3, 2]).unwrap();
        assert_eq!(hand.fill_blocks(), 0);
        assert_eq!(hand.flops(), lu.flops());
        // 4 steps with one later neighbour, one with none: 5·131 + 4·(180 + 216 + 432).
        assert_eq!(lu.flops(), 5 * 131 + 4 * (180 + 216 + 432));
    }

    #[test]
    fn star_eliminates_leaves_first() {
        let p = BlockPattern::from_couplings(5, 2, &[(0, 1), (0, 2), (0, 3), (0, 4)]);
        let lu = BlockSparseLu::new(&p);
        // The hub goes last or next to last (then the last leaf is its only neighbour).
        assert!(lu.order()[..3].iter().all(|&v| v != 0), "{:?}", lu.order());
        assert_eq!(lu.fill_blocks(), 0);
        // Natural order eliminates the hub first and fills the whole matrix.
        let nat = BlockSparseLu::with_order(&p, &[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(nat.fill_blocks(), 12);
        assert!(nat.flops() > lu.flops());
    }

    #[test]
    fn analysis_is_deterministic_and_no_worse_than_natural() {
        let mut state = 7u64;
        for n in [1, 2, 7, 30] {
            let mut pairs = Vec::new();
            for i in 1..n {
                state = splitmix(state);
                pairs.push(((state % i as u64) as usize, i));
                state = splitmix(state);
                pairs.push(((state % n as u64) as usize, i));
            }
            let p = BlockPattern::from_couplings(n, 6, &pairs);
            let a = BlockSparseLu::new(&p);
            let b = BlockSparseLu::new(&p);
            assert_eq!(a.order(), b.order());
            let natural = BlockSparseLu::with_order(&p, &(0..n).collect::<Vec<_>>()).unwrap();
            assert!(a.flops() <= natural.flops());
            assert!(a.factor_blocks() >= p.n_stored());
        }
    }

    #[test]
    fn rejects_bad_orders() {
        let p = chain(3, 1);
        assert_eq!(
            BlockSparseLu::with_order(&p, &[0, 1]).unwrap_err(),
            OrderError::WrongLength {
                expected: 3,
                got: 2
            }
        );
        assert!(matches!(
            BlockSparseLu::with_order(&p, &[0, 1, 1]).unwrap_err(),
            OrderError::NotAPermutation {
                position: 2,
                block: 1,
                ..
            }
        ));
    }

    #[test]
    fn solves_scalar_tridiagonal() {
        // b = 1: tridiagonal [-1 2 -1] with x = 1..n.
        let n = 7;
        let p = Arc::new(chain(n, 1));
        let mut a = BlockMatrix::zeros(p.clone());
        for i in 0..n {
            a.block_mut(p.slot(i, i).unwrap())[0] = 2.0;
            if i > 0 {
                a.block_mut(p.slot(i, i - 1).unwrap())[0] = -1.0;
                a.block_mut(p.slot(i - 1, i).unwrap())[0] = -1.0;
            }
        }
        let x: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let mut rhs = vec![0.0; n];
        a.gemv(1.0, &x, 0.0, &mut rhs);
        let mut lu = BlockSparseLu::new(&p);
        lu.factor(&a).unwrap();
        lu.solve_in_place(&mut rhs);
        for (u, v) in rhs.iter().zip(&x) {
            assert!((u - v).abs() < 1e-13, "{rhs:?}");
        }
    }

    /// A matrix block diagonal over a split of its blocks (the partly implicit Euler's speeds
    /// and states), with coupling blocks in the pattern that hold zeros: a solve restricted to
    /// one part gives the full solve's numbers exactly, for right-hand sides zero in the other
    /// part, with the 6 × 6 (AVX2 where available) and the portable kernels and with a block
    /// size without a fixed-size kernel. The rows of the other part stay untouched.
    #[test]
    fn solve_within_a_decoupled_part_is_the_full_solve() {
        let n = 9;
        let split = 5;
        let pairs = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (0, 4),
            (1, 5),
            (2, 6),
            (5, 6),
            (6, 7),
            (7, 8),
            (4, 8),
            (3, 7),
        ];
        for (b, portable) in [(6, false), (6, true), (3, false), (2, false)] {
            let p = Arc::new(BlockPattern::from_couplings(n, b, &pairs));
            let mut a = BlockMatrix::zeros(p.clone());
            let mut seed = 7u64;
            let mut rand = || {
                seed = splitmix(seed);
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            for i in 0..n {
                for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
                    let j = p.col_idx()[s];
                    if (i < split) != (j < split) {
                        continue;
                    }
                    for (k, v) in a.block_mut(s).iter_mut().enumerate() {
                        *v = rand() + if i == j && k % (b + 1) == 0 { 4.0 } else { 0.0 };
                    }
                }
            }
            let mut lu = BlockSparseLu::new(&p);
            lu.force_portable_kernels(portable);
            lu.factor(&a).unwrap();
            for part in [0..split, split..n] {
                let mut full = vec![0.0; n * b];
                for (k, x) in full.iter_mut().enumerate() {
                    if part.contains(&(k / b)) {
                        *x = rand();
                    }
                }
                let rhs = full.clone();
                let mut within = full.clone();
                lu.solve_in_place(&mut full);
                lu.solve_blocks_in_place(&mut within, part.clone());
                assert_eq!(
                    within, full,
                    "b = {b}, portable {portable}, blocks {part:?}"
                );
                assert!(
                    within
                        .iter()
                        .enumerate()
                        .all(|(k, x)| part.contains(&(k / b)) || *x == 0.0),
                    "the other part stays zero"
                );
                // A real solve: the residual is round-off (entries of A below 4.5, diagonally
                // dominant blocks, |x| below 1).
                let mut back = vec![0.0; n * b];
                a.gemv(1.0, &within, 0.0, &mut back);
                for (got, want) in back.iter().zip(&rhs) {
                    assert!((got - want).abs() < 1e-13, "residual {}", got - want);
                }
            }
        }
    }

    /// The elimination steps of a range of blocks, and whether they are consecutive (the
    /// restricted solves run over them without a test per step then).
    #[test]
    fn steps_of_a_block_range() {
        let sym = BlockSymbolic::with_order(&chain(5, 1), &[3, 4, 0, 1, 2]).unwrap();
        assert_eq!(sym.steps_of(0..usize::MAX), (0..5, true));
        assert_eq!(sym.steps_of(0..3), (2..5, true));
        assert_eq!(sym.steps_of(3..5), (0..2, true));
        assert_eq!(sym.steps_of(1..4), (0..5, false));
        assert_eq!(sym.steps_of(2..4), (0..5, false));
        assert_eq!(sym.steps_of(7..9), (0..0, true));
    }

    #[test]
    fn empty_matrix_is_fine() {
        let p = Arc::new(BlockPattern::from_couplings(0, 6, &[]));
        let mut lu = BlockSparseLu::new(&p);
        lu.factor(&BlockMatrix::zeros(p)).unwrap();
        lu.solve_in_place(&mut []);
        assert_eq!(lu.flops(), 0);
    }
}
