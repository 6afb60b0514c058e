//! Linear algebra on the active coordinates of a system whose other velocity coordinates are
//! inert ([`crate::mech::MechanicalSystem::inert_velocity_slots`]).
//!
//! A system in relative coordinates keeps one 6-block per body (document 004, sec. 2.2: the
//! relative-coordinate formulation; the layout "block i = body i"): a massless follower's block
//! carries nothing, a jointed body's block carries its one coordinate in the first slot, and
//! element-state blocks are padded to six. Such an inert coordinate j has zero rows and columns
//! in J_v and J_r K, a zero rate, and stays 0, so the iteration matrix of eq. 11 is the identity
//! in its row and column. The kinematic reduced car has 204 velocity slots of which 42 are
//! active (chassis and subframe 6 each, rack and four carriers 1 each, 25 element states); its
//! stages spent most of their linear algebra on blocks that hold zeros and identities, as the
//! block LU and the block products visit every 6 × 6 block of the pattern.
//!
//! [`ActiveSet`] gathers the entries of a block matrix on the active coordinates into a dense
//! column-major matrix (a precomputed map from the stored entries; columns padded to a multiple
//! of 4 with zeros). [`CompactInverse`] inverts that matrix at each factorisation (Gauss–Jordan
//! with partial pivoting) and solves by one product with the inverse on the gathered
//! right-hand side, leaving the inert entries as they are (the identity's solution);
//! [`CompactProduct`] forms the stage products A x + β B z of the Rosenbrock stepper on the
//! active coordinates. Both products run column by column in whole 4-wide lanes (a broadcast
//! x_j times a column, accumulated in registers), AVX2 + FMA where the CPU has them. On the
//! kinematic car a solve takes ≈ 2.4 k instructions instead of the block LU's ≈ 11.6 k, the two
//! stages' products ≈ 6.9 k per step instead of ≈ 16 k (callgrind, `docs/performance.md`;
//! on the 15-body car of session 17, with the zero columns dropped and row chunks of 32,
//! ≈ 1.7 k per solve and ≈ 3.9 k per step; of session 19, in one pass of up to 12 registers
//! and with the stage product taken into the solve's gather
//! ([`CompactInverse::solve_in_place_adding`]), ≈ 1.0 k per solve and ≈ 1.8 k per step,
//! `docs/solvers.md`). The choice is made once by
//! operation count ([`ActiveSet::dense_solve_flops`] against the block LU's,
//! [`ActiveSet::dense_product_cheaper`]).
//!
//! The results equal the block-sparse ones up to round-off (other elimination and summation
//! order), not bit for bit: on the kinematic car over 3 s every output channel within 2e-10 of
//! its largest value, as close as the dense LU's results to the block LU's.

use std::sync::Arc;

use crate::block::{BlockMatrix, BlockPattern};
use crate::dense::{LinearSolver, SingularMatrix, max_abs_if_finite, pivot_ok, pivot_tolerance};

/// The active coordinates of a block pattern and the map that gathers a block matrix's entries
/// on them into a dense column-major matrix.
#[derive(Debug, Clone)]
pub struct ActiveSet {
    pattern: Arc<BlockPattern>,
    /// Active scalar indices, ascending (shared by the clones: [`Self::same_as`]).
    idx: Arc<[usize]>,
    /// Column length of the dense matrices: n_a rounded up to a multiple of 4 (the padding
    /// rows hold zeros, so that every product runs in whole 4-wide lanes).
    stride: usize,
    /// Per stored entry with an active row and an active column: (index into the block
    /// matrix's values, index into the dense column-major matrix).
    map: Vec<(u32, u32)>,
    /// The entries of `map` on the diagonal (active row = active column).
    diag: Vec<(u32, u32)>,
    /// Bounds of the map's entries: every source index is below `src_end` (the pattern's
    /// number of stored values), every destination below `dst_end` (n_a · stride).
    src_end: usize,
    dst_end: usize,
}

impl ActiveSet {
    /// The active set of `pattern` for the mask `inert` (one entry per scalar coordinate).
    ///
    /// # Panics
    /// If `inert.len()` differs from the pattern's dimension.
    pub fn new(pattern: Arc<BlockPattern>, inert: &[bool]) -> Self {
        let n = pattern.dim();
        assert_eq!(
            inert.len(),
            n,
            "inert mask of length {} for dimension {n}",
            inert.len()
        );
        let idx: Vec<usize> = (0..n).filter(|&i| !inert[i]).collect();
        let mut pos = vec![usize::MAX; n];
        for (k, &i) in idx.iter().enumerate() {
            pos[i] = k;
        }
        let (b, stride) = (pattern.block_size(), idx.len().div_ceil(4) * 4);
        let (mut map, mut diag) = (Vec::new(), Vec::new());
        for bi in 0..pattern.n_blocks() {
            for s in pattern.row_ptr()[bi]..pattern.row_ptr()[bi + 1] {
                let bj = pattern.col_idx()[s];
                for r in 0..b {
                    for c in 0..b {
                        let (pi, pj) = (pos[bi * b + r], pos[bj * b + c]);
                        if pi != usize::MAX && pj != usize::MAX {
                            let src = s * b * b + r * b + c;
                            map.push((to_u32(src), to_u32(pj * stride + pi)));
                            if pi == pj {
                                diag.push((to_u32(src), to_u32(pj * stride + pi)));
                            }
                        }
                    }
                }
            }
        }
        let (src_end, dst_end) = (pattern.n_stored() * b * b, idx.len() * stride);
        debug_assert!(
            map.iter()
                .all(|&(s, d)| (s as usize) < src_end && (d as usize) < dst_end)
        );
        Self {
            pattern,
            idx: idx.into(),
            stride,
            map,
            diag,
            src_end,
            dst_end,
        }
    }

    /// Number of active coordinates.
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    /// Whether no coordinate is active.
    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    /// The active scalar indices, ascending.
    pub fn indices(&self) -> &[usize] {
        &self.idx
    }

    /// Whether `other` has the same active indices: at once for a clone of this set (or
    /// of a set it was cloned from), else by comparing them.
    pub fn same_as(&self, other: &ActiveSet) -> bool {
        Arc::ptr_eq(&self.idx, &other.idx) || self.idx == other.idx
    }

    /// The block pattern.
    pub fn pattern(&self) -> &Arc<BlockPattern> {
        &self.pattern
    }

    /// Column length of the dense matrices ([`Self::gather_matrix`]): n_a rounded up to a
    /// multiple of 4.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Floating-point operations of one solve on the active coordinates, a product with the
    /// n_a × n_a inverse: 2 n_a² (to compare with
    /// [`crate::block_lu::BlockSparseLu::solve_flops`]).
    pub fn dense_solve_flops(&self) -> u64 {
        let n = self.idx.len() as u64;
        2 * n * n
    }

    /// Whether a dense product on the active coordinates (n_a² multiply-adds) takes fewer
    /// operations than the block product over the stored blocks (b² each).
    pub fn dense_product_cheaper(&self) -> bool {
        let b = self.pattern.block_size();
        self.idx.len().pow(2) < self.pattern.n_stored() * b * b
    }

    /// Writes the entries of `a` on the active coordinates into `dense`: n_a columns of
    /// [`Self::stride`] entries (column-major; entries outside the pattern and the padding 0).
    pub fn gather_matrix(&self, a: &BlockMatrix, dense: &mut [f64]) {
        debug_assert!(**a.pattern() == *self.pattern, "pattern differs");
        let v = a.values();
        assert!(
            v.len() >= self.src_end && dense.len() >= self.dst_end,
            "gather_matrix: matrix or dense storage too small"
        );
        dense.fill(0.0);
        for &(src, dst) in &self.map {
            // SAFETY: src < src_end ≤ v.len() and dst < dst_end ≤ dense.len() (the map's
            // bounds, fixed at construction; checked above).
            unsafe { *dense.get_unchecked_mut(dst as usize) = *v.get_unchecked(src as usize) };
        }
    }

    /// Writes the entries of δ I + α A + β B on the active coordinates into `dense`, as
    /// [`Self::gather_matrix`] of the sum [`BlockMatrix::combination_plus_identity_into`] forms
    /// (the same expressions: α a + β b, on the diagonal (α a + δ) + β b), without forming it
    /// over all stored blocks.
    ///
    /// # Panics
    /// If A, B or `dense` is too small for the set.
    pub fn gather_combination(
        &self,
        a: &BlockMatrix,
        alpha: f64,
        b: &BlockMatrix,
        beta: f64,
        delta: f64,
        dense: &mut [f64],
    ) {
        debug_assert!(**a.pattern() == *self.pattern && **b.pattern() == *self.pattern);
        let (av, bv) = (a.values(), b.values());
        assert!(
            av.len() >= self.src_end && bv.len() >= self.src_end && dense.len() >= self.dst_end,
            "gather_combination: matrix or dense storage too small"
        );
        dense.fill(0.0);
        // SAFETY (both loops): src < src_end ≤ av.len(), bv.len() and dst < dst_end ≤
        // dense.len() (the map's bounds, fixed at construction; checked above).
        for &(src, dst) in &self.map {
            let (s, d) = (src as usize, dst as usize);
            unsafe {
                *dense.get_unchecked_mut(d) =
                    alpha * av.get_unchecked(s) + beta * bv.get_unchecked(s)
            };
        }
        for &(src, dst) in &self.diag {
            let (s, d) = (src as usize, dst as usize);
            unsafe {
                *dense.get_unchecked_mut(d) =
                    (alpha * av.get_unchecked(s) + delta) + beta * bv.get_unchecked(s)
            };
        }
    }

    /// `out[k] = x[idx[k]]`.
    ///
    /// # Panics
    /// If `x` is shorter than the pattern's dimension.
    #[inline]
    pub fn gather(&self, x: &[f64], out: &mut [f64]) {
        assert!(x.len() >= self.pattern.dim(), "gather: vector too short");
        for (o, &i) in out.iter_mut().zip(self.idx.iter()) {
            // SAFETY: active indices are below the dimension, asserted ≤ x.len().
            *o = unsafe { at(x, i) };
        }
    }
}

/// `x[i]` without the bounds check, for the indices an [`ActiveSet`] hands out (the active
/// indices and their subsets, all below the pattern's dimension): the gathers and scatters of
/// the stage products and solves run once per entry, and their callers check the vector's
/// length once.
///
/// # Safety
/// `i < x.len()`.
#[inline(always)]
unsafe fn at(x: &[f64], i: usize) -> f64 {
    debug_assert!(i < x.len());
    // SAFETY: the caller's contract.
    unsafe { *x.get_unchecked(i) }
}

/// `&mut x[i]` without the bounds check ([`at`]).
///
/// # Safety
/// `i < x.len()`.
#[inline(always)]
unsafe fn at_mut(x: &mut [f64], i: usize) -> &mut f64 {
    debug_assert!(i < x.len());
    // SAFETY: the caller's contract.
    unsafe { x.get_unchecked_mut(i) }
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).expect("compact map index fits in u32")
}

/// The arithmetic of the dense kernels: portable, or AVX2 + FMA (x86-64, detected at run time;
/// the kernels then run in copies compiled with those features).
trait Kernel: Copy {
    /// y = A x (+ B z): A (and B) column-major with columns of y.len() entries (a multiple of
    /// 4), x (and z) one entry per column.
    fn matvec(self, a: &[f64], x: &[f64], bz: Option<(&[f64], &[f64])>, y: &mut [f64]);
    /// y_k −= l u_k (equal lengths, a multiple of 4).
    fn sub_scaled(self, l: f64, u: &[f64], y: &mut [f64]);
}

#[derive(Clone, Copy)]
struct Portable;

impl Kernel for Portable {
    #[inline(always)]
    fn matvec(self, a: &[f64], x: &[f64], bz: Option<(&[f64], &[f64])>, y: &mut [f64]) {
        let w = y.len();
        y.fill(0.0);
        for (col, &xj) in a.chunks_exact(w).zip(x) {
            for (yi, c) in y.iter_mut().zip(col) {
                *yi += c * xj;
            }
        }
        if let Some((b, z)) = bz {
            for (col, &zj) in b.chunks_exact(w).zip(z) {
                for (yi, c) in y.iter_mut().zip(col) {
                    *yi += c * zj;
                }
            }
        }
    }
    #[inline(always)]
    fn sub_scaled(self, l: f64, u: &[f64], y: &mut [f64]) {
        for (x, u) in y.iter_mut().zip(u) {
            *x -= l * u;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx(#[allow(dead_code)] crate::cpu::Avx2Fma);

#[cfg(target_arch = "x86_64")]
impl Kernel for Avx {
    #[inline(always)]
    fn matvec(self, a: &[f64], x: &[f64], bz: Option<(&[f64], &[f64])>, y: &mut [f64]) {
        // SAFETY: the token proves AVX2 + FMA; the lengths are checked inside.
        unsafe { matvec_avx2(a, x, bz, y) }
    }
    #[inline(always)]
    fn sub_scaled(self, l: f64, u: &[f64], y: &mut [f64]) {
        // SAFETY: the token proves AVX2 + FMA.
        unsafe { sub_scaled_avx2(l, u, y) }
    }
}

/// Most 4-row registers [`matvec_avx2`] accumulates in one pass over the columns: of the 16,
/// one more holds the broadcast x_j (the column loads are operands of the multiply-adds).
#[cfg(target_arch = "x86_64")]
const MATVEC_REGISTERS: usize = 12;

/// [`Kernel::matvec`]: y in the fewest passes over the columns that the registers allow
/// ([`MATVEC_REGISTERS`] groups of 4 rows each, the groups spread evenly over the passes;
/// [`matvec_rows`]), each accumulated as broadcast x_j times the column's rows: one broadcast
/// per column and pass. The kinematic car's 36 active rows take one pass of 9 registers (two,
/// of 8 and 1, with chunks of 32 rows: the second paid a broadcast and the loop per column for
/// one multiply-add). Every row's sum is the same sequence of fused multiply-adds whatever the
/// chunking.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn matvec_avx2(a: &[f64], x: &[f64], bz: Option<(&[f64], &[f64])>, y: &mut [f64]) {
    let w = y.len();
    assert!(
        w.is_multiple_of(4) && a.len() >= x.len() * w,
        "matvec: shapes"
    );
    if let Some((b, z)) = bz {
        assert!(b.len() >= z.len() * w, "matvec: shapes");
    }
    let mats = [Some((a, x)), bz];
    let groups = w / 4;
    let passes = groups.div_ceil(MATVEC_REGISTERS);
    let (mut c, mut left) = (0, groups);
    for p in 0..passes {
        let r = left.div_ceil(passes - p);
        // SAFETY (all calls): rows c..c + 4r lie below w, a multiple of 4 (the passes' r sum
        // to w / 4).
        unsafe {
            match r {
                1 => matvec_rows::<1>(&mats, w, c, y),
                2 => matvec_rows::<2>(&mats, w, c, y),
                3 => matvec_rows::<3>(&mats, w, c, y),
                4 => matvec_rows::<4>(&mats, w, c, y),
                5 => matvec_rows::<5>(&mats, w, c, y),
                6 => matvec_rows::<6>(&mats, w, c, y),
                7 => matvec_rows::<7>(&mats, w, c, y),
                8 => matvec_rows::<8>(&mats, w, c, y),
                9 => matvec_rows::<9>(&mats, w, c, y),
                10 => matvec_rows::<10>(&mats, w, c, y),
                11 => matvec_rows::<11>(&mats, w, c, y),
                _ => matvec_rows::<12>(&mats, w, c, y),
            }
        }
        c += 4 * r;
        left -= r;
    }
}

/// Rows c..c + 4R of [`matvec_avx2`]'s product, in R registers.
///
/// # Safety
/// The CPU must support AVX2 and FMA; c + 4R ≤ w = y.len(), and every matrix of `mats` has at
/// least w entries per entry of its vector (checked by the caller).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn matvec_rows<const R: usize>(
    mats: &[Option<(&[f64], &[f64])>; 2],
    w: usize,
    c: usize,
    y: &mut [f64],
) {
    use std::arch::x86_64::*;
    debug_assert!(c + 4 * R <= w && y.len() == w);
    let mut acc = [_mm256_setzero_pd(); R];
    // SAFETY: every load reads rows c..c + 4R (below w) of a column j below the vector's
    // length, inside the matrix by the caller's checks; the stores are below w = y.len().
    unsafe {
        for (m, v) in mats.iter().flatten() {
            let p = m.as_ptr().add(c);
            for (j, &vj) in v.iter().enumerate() {
                let s = _mm256_set1_pd(vj);
                let col = p.add(j * w);
                for (r, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_pd(_mm256_loadu_pd(col.add(4 * r)), s, *a);
                }
            }
        }
        for (r, a) in acc.iter().enumerate() {
            _mm256_storeu_pd(y.as_mut_ptr().add(c + 4 * r), *a);
        }
    }
}

/// [`Kernel::sub_scaled`] in 4-wide fused multiply-adds.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn sub_scaled_avx2(l: f64, u: &[f64], y: &mut [f64]) {
    use std::arch::x86_64::*;
    let n = u.len().min(y.len());
    let (pu, py) = (u.as_ptr(), y.as_mut_ptr());
    let mut k = 0;
    // SAFETY: every access is below n in both slices.
    unsafe {
        let nl = _mm256_set1_pd(-l);
        while k + 4 <= n {
            let v = _mm256_fmadd_pd(nl, _mm256_loadu_pd(pu.add(k)), _mm256_loadu_pd(py.add(k)));
            _mm256_storeu_pd(py.add(k), v);
            k += 4;
        }
        while k < n {
            *py.add(k) = (-l).mul_add(*pu.add(k), *py.add(k));
            k += 1;
        }
    }
}

/// The stage products y += A x + β B z of the Rosenbrock stepper on the active coordinates:
/// A and B gathered once per linearisation ([`Self::load`]), x and β z gathered per product.
#[derive(Debug, Clone)]
pub struct CompactProduct {
    set: ActiveSet,
    /// A and B gathered, then without their all-zero columns: the kept columns contiguous in
    /// their order ([`drop_zero_columns`]).
    a: Vec<f64>,
    b: Vec<f64>,
    /// Full-vector indices of the kept columns of A and B, and of the dropped ones.
    a_cols: Vec<usize>,
    a_zero: Vec<usize>,
    b_cols: Vec<usize>,
    b_zero: Vec<usize>,
    xg: Vec<f64>,
    zg: Vec<f64>,
    y: Vec<f64>,
    simd: Option<crate::cpu::Avx2Fma>,
}

impl CompactProduct {
    /// Storage for the active set `set`.
    pub fn new(set: ActiveSet) -> Self {
        let (n, w) = (set.len(), set.stride);
        Self {
            a: vec![0.0; n * w],
            b: vec![0.0; n * w],
            a_cols: Vec::with_capacity(n),
            a_zero: Vec::with_capacity(n),
            b_cols: Vec::with_capacity(n),
            b_zero: Vec::with_capacity(n),
            xg: vec![0.0; n],
            zg: vec![0.0; n],
            y: vec![0.0; w],
            simd: crate::cpu::Avx2Fma::detect(),
            set,
        }
    }

    /// Gathers A and B (matrices of the set's pattern) and drops their all-zero columns; no
    /// allocation.
    pub fn load(&mut self, a: &BlockMatrix, b: &BlockMatrix) {
        let (w, idx) = (self.set.stride, &self.set.idx);
        self.set.gather_matrix(a, &mut self.a);
        drop_zero_columns(&mut self.a, w, idx, &mut self.a_cols, &mut self.a_zero);
        self.set.gather_matrix(b, &mut self.b);
        drop_zero_columns(&mut self.b, w, idx, &mut self.b_cols, &mut self.b_zero);
    }

    /// Selects the portable kernels even where AVX2 + FMA are available (`true`), or returns
    /// to automatic selection; for tests that compare both paths.
    pub fn force_portable_kernels(&mut self, portable: bool) {
        self.simd = if portable {
            None
        } else {
            crate::cpu::Avx2Fma::detect()
        };
    }

    /// The active set.
    pub fn active(&self) -> &ActiveSet {
        &self.set
    }

    /// y += A x (+ β B z with `bz = Some((β, z))`) on the active rows; the inert rows of y are
    /// left as they are (A and B are zero there). No allocation.
    ///
    /// # Panics
    /// If x, z or y is shorter than the pattern's dimension.
    pub fn gemv_add(&mut self, x: &[f64], bz: Option<(f64, &[f64])>, y: &mut [f64]) {
        self.product(x, bz);
        assert!(y.len() >= self.set.pattern.dim(), "gemv_add: y too short");
        for (&i, yi) in self.set.idx.iter().zip(&self.y) {
            // SAFETY: active indices are below the dimension, asserted ≤ y.len().
            unsafe { *at_mut(y, i) += yi };
        }
    }

    /// A x (+ β B z) on the active rows, one entry per active coordinate (the product
    /// [`Self::gemv_add`] adds to y; [`CompactInverse::solve_in_place_adding`] takes it into its
    /// gather of the right-hand side). No allocation.
    pub fn product(&mut self, x: &[f64], bz: Option<(f64, &[f64])>) -> &[f64] {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = self.simd {
            // SAFETY: the token exists only where AVX2 and FMA were detected.
            unsafe { self.product_avx2(t, x, bz) };
            return &self.y[..self.set.len()];
        }
        self.product_with(Portable, x, bz);
        &self.y[..self.set.len()]
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn product_avx2(&mut self, t: crate::cpu::Avx2Fma, x: &[f64], bz: Option<(f64, &[f64])>) {
        self.product_with(Avx(t), x, bz);
    }

    /// `self.y` = A x (+ β B z) on the active rows (NaN in every row if a dropped column meets a
    /// non-finite entry).
    #[inline(always)]
    fn product_with<K: Kernel>(&mut self, k: K, x: &[f64], bz: Option<(f64, &[f64])>) {
        let (w, dim) = (self.set.stride, self.set.pattern.dim());
        let (ka, kb) = (self.a_cols.len(), self.b_cols.len());
        assert!(x.len() >= dim, "product: x too short");
        // SAFETY (all `at` below): the kept and dropped columns are active indices, below the
        // dimension, asserted ≤ x.len() (and ≤ z.len()).
        for (o, &i) in self.xg.iter_mut().zip(&self.a_cols) {
            *o = unsafe { at(x, i) };
        }
        // A dropped column j would add c·x_j = ±0 to every row: no change, as a sum started at
        // +0 never becomes −0 under rounding to nearest, unless x_j is not finite, when it
        // makes every row NaN. `dropped` is 0 or NaN accordingly.
        let mut dropped = 0.0;
        for &i in &self.a_zero {
            dropped += unsafe { at(x, i) } * 0.0;
        }
        // (A loop, not `Option::map`: a closure would not inherit the AVX2 target features.)
        let bz = match bz {
            None => None,
            Some((beta, z)) => {
                assert!(z.len() >= dim, "product: z too short");
                for (o, &i) in self.zg.iter_mut().zip(&self.b_cols) {
                    *o = beta * unsafe { at(z, i) };
                }
                for &i in &self.b_zero {
                    dropped += (beta * unsafe { at(z, i) }) * 0.0;
                }
                Some((&self.b[..kb * w], &self.zg[..kb]))
            }
        };
        k.matvec(&self.a[..ka * w], &self.xg[..ka], bz, &mut self.y);
        if dropped.is_nan() {
            self.y.fill(f64::NAN);
        }
    }
}

/// Moves the columns of the column-major `m` (columns of `w` entries, one per active index
/// `idx`) that hold a nonzero entry to the front, in their order, and lists their indices
/// `idx[j]` in `kept`, those of the all-zero columns in `zero`. No allocation (both have
/// capacity `idx.len()`).
fn drop_zero_columns(
    m: &mut [f64],
    w: usize,
    idx: &[usize],
    kept: &mut Vec<usize>,
    zero: &mut Vec<usize>,
) {
    kept.clear();
    zero.clear();
    for (j, &i) in idx.iter().enumerate() {
        if m[j * w..(j + 1) * w].iter().all(|&c| c == 0.0) {
            zero.push(i);
        } else {
            let k = kept.len();
            if k != j {
                m.copy_within(j * w..(j + 1) * w, k * w);
            }
            kept.push(i);
        }
    }
}

/// Solver for a matrix that is the identity on the inert coordinates of an [`ActiveSet`]
/// (zero couplings to them): the explicit inverse of the active part, formed at each
/// factorisation by Gauss–Jordan elimination with partial pivoting (on the gathered
/// column-major matrix, i.e. on Aᵀ, whose inverse is A⁻¹ column-major); a solve is one
/// product with it on the gathered right-hand side, scattered back, the inert entries stay as
/// they are. The singularity test is the other solvers' ([`crate::dense`]) on the pivots of
/// the active part. The inversion (n_a³ multiply-adds) costs about twice the block LU's
/// factorisation on the kinematic car (≈ 140 k against ≈ 105 k instructions), the solves a fifth
/// of the block LU's; a dense LU with substitutions was tried first and solved in ≈ 8 k (the
/// per-row overhead of 84 short dot products). No allocation after construction.
#[derive(Debug, Clone)]
pub struct CompactInverse {
    set: ActiveSet,
    /// The gathered matrix, then its inverse (column-major, columns of `stride` entries).
    inv: Vec<f64>,
    /// Row of Aᵀ exchanged with row k at step k.
    ipiv: Vec<usize>,
    /// The gathered right-hand side and the solution (`stride` entries).
    x: Vec<f64>,
    y: Vec<f64>,
    factored: bool,
    simd: Option<crate::cpu::Avx2Fma>,
}

impl CompactInverse {
    /// A solver for matrices of `set`'s pattern that are the identity on its inert coordinates.
    pub fn new(set: ActiveSet) -> Self {
        let (n, w) = (set.len(), set.stride);
        Self {
            inv: vec![0.0; n * w],
            ipiv: vec![0; n],
            x: vec![0.0; n],
            y: vec![0.0; w],
            factored: false,
            simd: crate::cpu::Avx2Fma::detect(),
            set,
        }
    }

    /// The active set.
    pub fn active(&self) -> &ActiveSet {
        &self.set
    }

    /// Selects the portable kernels even where AVX2 + FMA are available (`true`), or returns
    /// to automatic selection; for tests that compare both paths.
    pub fn force_portable_kernels(&mut self, portable: bool) {
        self.simd = if portable {
            None
        } else {
            crate::cpu::Avx2Fma::detect()
        };
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn invert_avx2(&mut self, t: crate::cpu::Avx2Fma, tol: f64) -> Result<(), SingularMatrix> {
        self.invert(Avx(t), tol)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn apply_avx2(&mut self, t: crate::cpu::Avx2Fma, b: &mut [f64], add: Option<&[f64]>) {
        self.apply(Avx(t), b, add);
    }

    /// Gauss–Jordan inversion in place of the gathered matrix, seen row-major as Aᵀ (rows of
    /// `stride` entries, the padding columns 0): for each k the pivot row is exchanged into
    /// row k and scaled, its column cleared from every other row (its entries replaced by the
    /// inverse's), and at the end the columns are exchanged back in reverse order.
    #[inline(always)]
    fn invert<K: Kernel>(&mut self, kern: K, tol: f64) -> Result<(), SingularMatrix> {
        let (n, w) = (self.set.len(), self.set.stride);
        let a = &mut self.inv[..];
        for k in 0..n {
            let mut p = k;
            let mut best = a[k * w + k].abs();
            for i in k + 1..n {
                let m = a[i * w + k].abs();
                if m > best {
                    best = m;
                    p = i;
                }
            }
            if p != k {
                let (top, rest) = a.split_at_mut(p * w);
                top[k * w..k * w + w].swap_with_slice(&mut rest[..w]);
            }
            self.ipiv[k] = p;
            let pivot = a[k * w + k];
            if !pivot_ok(pivot, tol) {
                return Err(SingularMatrix::ZeroPivot {
                    row: self.set.idx[k],
                    block: Some(self.set.idx[k] / self.set.pattern.block_size().max(1)),
                    pivot,
                    tolerance: tol,
                });
            }
            let inv = 1.0 / pivot;
            let (before, rest) = a.split_at_mut(k * w);
            let (row_k, after) = rest.split_at_mut(w);
            row_k[k] = 1.0;
            for x in row_k.iter_mut() {
                *x *= inv;
            }
            let row_k = &*row_k;
            for row in before.chunks_exact_mut(w).chain(after.chunks_exact_mut(w)) {
                let f = row[k];
                if f != 0.0 {
                    row[k] = 0.0;
                    kern.sub_scaled(f, row_k, row);
                }
            }
        }
        for k in (0..n).rev() {
            let p = self.ipiv[k];
            if p != k {
                for row in a.chunks_exact_mut(w) {
                    row.swap(k, p);
                }
            }
        }
        Ok(())
    }

    /// Gather (plus `add`, one entry per active coordinate, if given), product with the
    /// inverse, scatter.
    #[inline(always)]
    fn apply<K: Kernel>(&mut self, kern: K, b: &mut [f64], add: Option<&[f64]>) {
        match add {
            None => self.set.gather(b, &mut self.x),
            Some(add) => {
                assert!(b.len() >= self.set.pattern.dim(), "solve: b too short");
                for ((o, &i), a) in self.x.iter_mut().zip(self.set.idx.iter()).zip(add) {
                    // SAFETY: active indices are below the dimension, asserted ≤ b.len().
                    *o = unsafe { at(b, i) } + a;
                }
            }
        }
        kern.matvec(&self.inv, &self.x, None, &mut self.y);
        assert!(b.len() >= self.set.pattern.dim(), "solve: b too short");
        for (&i, &yi) in self.set.idx.iter().zip(&self.y) {
            // SAFETY: as above.
            unsafe { *at_mut(b, i) = yi };
        }
    }

    /// [`LinearSolver::solve_in_place`] for the right-hand side b + P (P on the active
    /// coordinates, `add`, e.g. [`CompactProduct::product`] of the same active set): the sum
    /// is formed in the gather, entry by entry the value b_i + P_i that adding P into b first
    /// would give, without the scatter and the second gather.
    ///
    /// # Panics
    /// As `solve_in_place`, or if `add` does not have one entry per active coordinate.
    pub fn solve_in_place_adding(&mut self, add: &[f64], b: &mut [f64]) {
        assert_eq!(add.len(), self.set.len(), "addend length");
        self.solve(b, Some(add));
    }

    fn solve(&mut self, b: &mut [f64], add: Option<&[f64]>) {
        assert!(
            self.factored,
            "CompactInverse::solve_in_place called without a successful factorisation"
        );
        assert_eq!(b.len(), self.set.pattern.dim(), "right-hand side length");
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = self.simd {
            // SAFETY: the token exists only where AVX2 and FMA were detected.
            unsafe { self.apply_avx2(t, b, add) };
            return;
        }
        self.apply(Portable, b, add);
    }

    /// Checks and inverts the gathered matrix in `inv` (the factorisation proper).
    fn factor_gathered(&mut self) -> Result<(), SingularMatrix> {
        let (n, w) = (self.set.len(), self.set.stride);
        let Some(max_abs) = max_abs_if_finite(&self.inv) else {
            let k = self.inv.iter().position(|x| !x.is_finite()).unwrap_or(0);
            let idx = &self.set.idx;
            return Err(SingularMatrix::NonFiniteEntry {
                row: idx[k % w],
                col: idx[k / w],
                value: self.inv[k],
            });
        };
        let tol = pivot_tolerance(n, max_abs);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = self.simd {
            // SAFETY: the token exists only where AVX2 and FMA were detected.
            unsafe { self.invert_avx2(t, tol)? };
            self.factored = true;
            return Ok(());
        }
        self.invert(Portable, tol)?;
        self.factored = true;
        Ok(())
    }
}

impl LinearSolver for CompactInverse {
    fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        self.factored = false;
        self.set.gather_matrix(a, &mut self.inv);
        self.factor_gathered()
    }

    /// The active entries of the sum gathered directly ([`ActiveSet::gather_combination`]):
    /// `scratch` is left as it is.
    fn factor_combination(
        &mut self,
        a: &BlockMatrix,
        alpha: f64,
        b: &BlockMatrix,
        beta: f64,
        delta: f64,
        _scratch: &mut BlockMatrix,
    ) -> Result<(), SingularMatrix> {
        self.factored = false;
        self.set
            .gather_combination(a, alpha, b, beta, delta, &mut self.inv);
        self.factor_gathered()
    }

    fn solve_in_place(&mut self, b: &mut [f64]) {
        self.solve(b, None);
    }

    fn compact_inverse(&mut self) -> Option<&mut CompactInverse> {
        Some(self)
    }

    fn spare(&self) -> Option<Box<dyn LinearSolver + Send>> {
        let mut s = self.clone();
        s.factored = false;
        Some(Box::new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block_lu::BlockSparseLu;

    /// A 5-block chain of 3 × 3 blocks, identity on the inert coordinates (blocks 1 and 3 whole,
    /// the last slot of block 0, one of block 4), random elsewhere: the compact LU and product agree with
    /// the block-sparse ones to round-off, and inert entries of the right-hand side pass through.
    #[test]
    fn compact_solve_and_product_match_the_block_sparse_ones() {
        let (n, b) = (5, 3);
        let p = Arc::new(BlockPattern::from_couplings(
            n,
            b,
            &[(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (2, 4)],
        ));
        let dim = n * b;
        let mut inert = vec![false; dim];
        for blk in [1, 3] {
            inert[blk * b..blk * b + b].fill(true);
        }
        inert[2] = true;
        inert[13] = true;
        let mut seed = 0.3f64;
        let mut rand = || {
            seed = (seed * 997.0 + 0.137).fract();
            seed - 0.5
        };
        let mut a = BlockMatrix::zeros(p.clone());
        let mut j = BlockMatrix::zeros(p.clone());
        for bi in 0..n {
            for s in p.row_ptr()[bi]..p.row_ptr()[bi + 1] {
                let bj = p.col_idx()[s];
                for r in 0..b {
                    for c in 0..b {
                        let (gi, gj) = (bi * b + r, bj * b + c);
                        let k = s * b * b + r * b + c;
                        if inert[gi] || inert[gj] {
                            a.values_mut()[k] = if gi == gj { 1.0 } else { 0.0 };
                            continue;
                        }
                        // A weak diagonal in block 2 makes the elimination pivot.
                        let d = match (gi == gj, bi) {
                            (false, _) => 0.0,
                            (true, 2) => 0.01,
                            (true, _) => 3.0,
                        };
                        a.values_mut()[k] = d + rand();
                        j.values_mut()[k] = rand();
                    }
                }
            }
        }
        let set = ActiveSet::new(p.clone(), &inert);
        assert_eq!(set.len(), dim - 8, "7 active: a padded stride of 8");
        let mut block = BlockSparseLu::new(&p);
        block.factor(&a).unwrap();
        let rhs: Vec<f64> = (0..dim).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut x2 = rhs.clone();
        block.solve_in_place(&mut x2);
        for portable in [false, true] {
            let mut lu = CompactInverse::new(set.clone());
            lu.force_portable_kernels(portable);
            lu.factor(&a).unwrap();
            let mut x1 = rhs.clone();
            lu.solve_in_place(&mut x1);
            for (k, (u, v)) in x1.iter().zip(&x2).enumerate() {
                assert!(
                    (u - v).abs() < 1e-11 * (1.0 + v.abs()),
                    "portable {portable}, entry {k}: {u} vs {v}"
                );
                if inert[k] {
                    assert_eq!(*u, rhs[k], "inert entry {k} passes through");
                }
            }
        }
        let mut prod = CompactProduct::new(set);
        prod.load(&j, &a);
        for portable in [false, true] {
            prod.force_portable_kernels(portable);
            let z: Vec<f64> = (0..dim).map(|i| (i as f64 * 0.3).cos()).collect();
            let mut y1: Vec<f64> = (0..dim).map(|i| i as f64).collect();
            let mut y2 = y1.clone();
            // Only the active entries of x and z enter (the inert columns of J are zero; those of
            // A are the identity's, zero off the diagonal but 1 on it, so z is masked for B = A).
            let zm: Vec<f64> = z
                .iter()
                .zip(&inert)
                .map(|(v, &i)| if i { 0.0 } else { *v })
                .collect();
            prod.gemv_add(&rhs, Some((0.5, &z)), &mut y1);
            j.gemv(1.0, &rhs, 1.0, &mut y2);
            a.gemv(0.5, &zm, 1.0, &mut y2);
            for k in 0..dim {
                if !inert[k] {
                    assert!((y1[k] - y2[k]).abs() < 1e-13, "product entry {k}");
                } else {
                    assert_eq!(y1[k], k as f64, "inert row {k} untouched");
                }
            }
        }
    }

    /// The AVX2 product's chunking (one pass of up to 12 registers, more passes above 48 rows)
    /// leaves every row the same fused multiply-adds in column order: bit for bit the scalar
    /// `mul_add` sequence, for every height up to 100 rows, with and without the second matrix.
    #[test]
    fn matvec_rows_are_the_column_order_fma_sequence_for_every_height() {
        let Some(t) = crate::cpu::Avx2Fma::detect() else {
            return;
        };
        for w in (4..=100).step_by(4) {
            let (na, nb) = (w / 4 + 3, w / 8 + 1);
            let a: Vec<f64> = (0..na * w).map(|k| (k as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..nb * w).map(|k| (k as f64 * 0.11).cos()).collect();
            let x: Vec<f64> = (0..na).map(|j| 1.0 + (j as f64).sqrt()).collect();
            let z: Vec<f64> = (0..nb).map(|j| (j as f64 * 0.5).sin()).collect();
            for bz in [None, Some((&b[..], &z[..]))] {
                let mut y = vec![0.0; w];
                Avx(t).matvec(&a, &x, bz, &mut y);
                for (i, yi) in y.iter().enumerate() {
                    let mut acc = 0.0f64;
                    for (j, xj) in x.iter().enumerate() {
                        acc = a[j * w + i].mul_add(*xj, acc);
                    }
                    if let Some((b, z)) = bz {
                        for (j, zj) in z.iter().enumerate() {
                            acc = b[j * w + i].mul_add(*zj, acc);
                        }
                    }
                    assert_eq!(yi.to_bits(), acc.to_bits(), "height {w}, row {i}");
                }
            }
        }
    }

    /// The product taken into the solve's gather gives the solution of adding it into the
    /// right-hand side first, bit for bit, on both kernels.
    #[test]
    fn solve_in_place_adding_equals_gemv_add_then_solve() {
        let p = Arc::new(BlockPattern::from_couplings(3, 2, &[(0, 1), (1, 2)]));
        let inert = [false, true, false, false, true, false];
        let mut a = BlockMatrix::zeros(p.clone());
        let mut j = BlockMatrix::zeros(p.clone());
        for (k, v) in a.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.7).sin();
        }
        for (k, v) in j.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.3).cos();
        }
        // The identity on the inert coordinates, a strong diagonal on the active ones.
        for i in 0..6 {
            let s = p.slot(i / 2, i / 2).unwrap();
            for c in 0..6 {
                if (inert[i] || inert[c]) && c != i && p.slot(i / 2, c / 2).is_some() {
                    let sc = p.slot(i / 2, c / 2).unwrap();
                    a.block_mut(sc)[(i % 2) * 2 + c % 2] = 0.0;
                    j.block_mut(sc)[(i % 2) * 2 + c % 2] = 0.0;
                }
            }
            a.block_mut(s)[(i % 2) * 3] = if inert[i] { 1.0 } else { 4.0 };
            if inert[i] {
                j.block_mut(s)[(i % 2) * 3] = 0.0;
            }
        }
        let set = ActiveSet::new(p, &inert);
        for portable in [false, true] {
            let mut lu = CompactInverse::new(set.clone());
            lu.force_portable_kernels(portable);
            lu.factor(&a).unwrap();
            let mut prod = CompactProduct::new(set.clone());
            prod.force_portable_kernels(portable);
            prod.load(&j, &a);
            let x: Vec<f64> = (0..6).map(|i| 1.0 + i as f64).collect();
            let z: Vec<f64> = (0..6).map(|i| (i as f64).cos()).collect();
            let b0: Vec<f64> = (0..6).map(|i| 0.5 - i as f64).collect();
            let mut b1 = b0.clone();
            prod.gemv_add(&x, Some((0.25, &z)), &mut b1);
            lu.solve_in_place(&mut b1);
            let mut b2 = b0.clone();
            lu.solve_in_place_adding(prod.product(&x, Some((0.25, &z))), &mut b2);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&b1), bits(&b2), "portable {portable}");
            assert!(
                set.same_as(lu.active())
                    && set.same_as(&ActiveSet::new(set.pattern().clone(), &inert))
            );
        }
    }

    /// The iteration matrix gathered directly equals the gather of the block sum, bit for bit
    /// (zeros and their signs included), and factors to the same inverse.
    #[test]
    fn gather_combination_equals_gathering_the_block_sum() {
        let p = Arc::new(BlockPattern::from_couplings(
            4,
            3,
            &[(0, 1), (1, 3), (0, 2)],
        ));
        let mut inert = vec![false; 12];
        inert[4] = true;
        inert[9..].fill(true);
        let mut jv = BlockMatrix::zeros(p.clone());
        let mut jr = BlockMatrix::zeros(p.clone());
        for (k, v) in jv.values_mut().iter_mut().enumerate() {
            *v = if k % 7 == 0 {
                0.0
            } else {
                (k as f64 * 0.37).sin()
            };
        }
        for (k, v) in jr.values_mut().iter_mut().enumerate() {
            *v = if k % 5 == 0 {
                -0.0
            } else {
                (k as f64 * 0.11).cos() * 3.0
            };
        }
        let set = ActiveSet::new(p.clone(), &inert);
        let (hg, n) = (0.3, set.len() * set.stride());
        let mut sum = BlockMatrix::zeros(p);
        jv.combination_plus_identity_into(-hg, &jr, -hg * hg, 1.0, &mut sum);
        let (mut d1, mut d2) = (vec![1.0; n], vec![2.0; n]);
        set.gather_matrix(&sum, &mut d1);
        set.gather_combination(&jv, -hg, &jr, -hg * hg, 1.0, &mut d2);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&d1), bits(&d2));
        let mut lu1 = CompactInverse::new(set.clone());
        let mut lu2 = CompactInverse::new(set);
        lu1.factor(&sum).unwrap();
        let mut scratch = sum.clone();
        lu2.factor_combination(&jv, -hg, &jr, -hg * hg, 1.0, &mut scratch)
            .unwrap();
        assert_eq!(bits(&lu1.inv), bits(&lu2.inv));
    }

    #[test]
    fn compact_lu_reports_a_singular_active_part() {
        let p = Arc::new(BlockPattern::from_couplings(2, 2, &[(0, 1)]));
        let inert = [false, true, false, true];
        let mut a = BlockMatrix::zeros(p.clone());
        // Active 2 × 2 part [[1, 2], [2, 4]] is singular; the inert ones are the identity.
        for (r, c, v) in [
            (0, 0, 1.0),
            (1, 1, 1.0),
            (2, 2, 4.0),
            (3, 3, 1.0),
            (0, 2, 2.0),
            (2, 0, 2.0),
        ] {
            let s = p.slot(r / 2, c / 2).unwrap();
            a.block_mut(s)[(r % 2) * 2 + c % 2] = v;
        }
        let mut lu = CompactInverse::new(ActiveSet::new(p, &inert));
        assert!(matches!(
            lu.factor(&a),
            Err(SingularMatrix::ZeroPivot { .. })
        ));
    }
}
