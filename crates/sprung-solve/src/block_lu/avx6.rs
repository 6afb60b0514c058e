//! Hand-vectorised 6 × 6 kernels for x86-64 CPUs with AVX2 and FMA. A block row is held as one
//! 4-wide and one 2-wide register; every kernel performs exactly the fused operations of the
//! generic kernels in the same order (so both give identical results), except
//! [`gemv_rows_sub`], which sums the products of a block row in a different order.

use std::arch::x86_64::*;

/// One row of a 6 × 6 block: columns 0-3 and 4-5.
#[derive(Clone, Copy)]
struct Row(__m256d, __m128d);

/// Loads the row at `p[0..6]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn load(p: &[f64; 6]) -> Row {
    // SAFETY: `p` holds six values.
    unsafe { Row(_mm256_loadu_pd(p.as_ptr()), _mm_loadu_pd(p.as_ptr().add(4))) }
}

/// Stores `r` to `p[0..6]`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn store(p: &mut [f64; 6], r: Row) {
    // SAFETY: `p` holds six values.
    unsafe {
        _mm256_storeu_pd(p.as_mut_ptr(), r.0);
        _mm_storeu_pd(p.as_mut_ptr().add(4), r.1);
    }
}

/// `r - s q` with one rounding per entry.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nmadd(s: f64, q: Row, r: Row) -> Row {
    Row(
        _mm256_fnmadd_pd(_mm256_set1_pd(s), q.0, r.0),
        _mm_fnmadd_pd(_mm_set1_pd(s), q.1, r.1),
    )
}

/// `r s`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn scale(s: f64, r: Row) -> Row {
    Row(
        _mm256_mul_pd(_mm256_set1_pd(s), r.0),
        _mm_mul_pd(_mm_set1_pd(s), r.1),
    )
}

/// Row `r` of a row-major block.
#[inline(always)]
fn row(a: &[f64; 36], r: usize) -> &[f64; 6] {
    a[6 * r..6 * r + 6]
        .try_into()
        .expect("row of a 6 x 6 block")
}

/// Mutable row `r` of a row-major block.
#[inline(always)]
fn row_mut(a: &mut [f64; 36], r: usize) -> &mut [f64; 6] {
    (&mut a[6 * r..6 * r + 6])
        .try_into()
        .expect("row of a 6 x 6 block")
}

/// All six rows of a block.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn load_all(a: &[f64; 36]) -> [Row; 6] {
    let z = Row(_mm256_setzero_pd(), _mm_setzero_pd());
    let mut rows = [z; 6];
    for (r, x) in rows.iter_mut().enumerate() {
        *x = load(row(a, r));
    }
    rows
}

/// `c ← c - pᵀ q` (see `gemm_tn_sub`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn gemm_tn_sub(c: &mut [f64; 36], p: &[f64; 36], q: &[f64; 36]) {
    let q = load_all(q);
    for r in 0..6 {
        let mut acc = load(row(c, r));
        for m in 0..6 {
            acc = nmadd(p[6 * m + r], q[m], acc);
        }
        store(row_mut(c, r), acc);
    }
}

/// `u ← L⁻¹ u` (see `unit_lower_solve`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn unit_lower_solve(lu: &[f64; 36], u: &mut [f64; 36]) {
    let mut x = load_all(u);
    for r in 1..6 {
        for m in 0..r {
            x[r] = nmadd(lu[6 * r + m], x[m], x[r]);
        }
        store(row_mut(u, r), x[r]);
    }
}

/// `y ← U⁻ᵀ y` (see `upper_transposed_solve`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn upper_transposed_solve(lu: &[f64; 36], inv: &[f64; 6], y: &mut [f64; 36]) {
    let mut x = load_all(y);
    for c in 0..6 {
        for m in 0..c {
            x[c] = nmadd(lu[6 * m + c], x[m], x[c]);
        }
        x[c] = scale(inv[c], x[c]);
        store(row_mut(y, c), x[c]);
    }
}

/// Entry `c` (constant after inlining) of a row.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lane(x: Row, c: usize) -> f64 {
    let lo = _mm256_castpd256_pd128(x.0);
    let mid = _mm256_extractf128_pd::<1>(x.0);
    match c {
        0 => _mm_cvtsd_f64(lo),
        1 => _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo)),
        2 => _mm_cvtsd_f64(mid),
        3 => _mm_cvtsd_f64(_mm_unpackhi_pd(mid, mid)),
        4 => _mm_cvtsd_f64(x.1),
        _ => _mm_cvtsd_f64(_mm_unpackhi_pd(x.1, x.1)),
    }
}

/// Lane masks of a row: entries with index in `sel` (all ones) or not (zero).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mask(sel: impl Fn(i64) -> bool) -> (__m256d, __m128d) {
    let m = |c: i64| if sel(c) { -1 } else { 0 };
    (
        _mm256_castsi256_pd(_mm256_set_epi64x(m(3), m(2), m(1), m(0))),
        _mm_castsi128_pd(_mm_set_epi64x(m(5), m(4))),
    )
}

/// `m ? y : x` lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn select(m: (__m256d, __m128d), y: Row, x: Row) -> Row {
    Row(
        _mm256_blendv_pd(x.0, y.0, m.0),
        _mm_blendv_pd(x.1, y.1, m.1),
    )
}

/// Elimination of column `C` of a block held in registers (see `lu_block`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn eliminate<const C: usize>(
    x: &mut [Row; 6],
    ipiv: &mut [usize; 6],
    inv: &mut [f64; 6],
    tol: f64,
) -> Result<(), (usize, f64)> {
    let mut p = C;
    let mut best = lane(x[C], C).abs();
    for (r, &xr) in x.iter().enumerate().skip(C + 1) {
        let v = lane(xr, C).abs();
        if v > best {
            best = v;
            p = r;
        }
    }
    ipiv[C] = p;
    if p != C {
        for r in C + 1..6 {
            if r == p {
                x.swap(C, r);
            }
        }
    }
    let pivot = lane(x[C], C);
    if !crate::dense::pivot_ok(pivot, tol) {
        return Err((C, pivot));
    }
    let ip = 1.0 / pivot;
    inv[C] = ip;
    let right = mask(|c| c > C as i64);
    let at = mask(|c| c == C as i64);
    let pr = x[C];
    for row in x.iter_mut().skip(C + 1) {
        let l = lane(*row, C) * ip;
        let updated = nmadd(l, pr, *row);
        let lv = Row(_mm256_set1_pd(l), _mm_set1_pd(l));
        *row = select(at, lv, select(right, updated, *row));
    }
    Ok(())
}

/// In-place `P a = L U` with partial pivoting (see `lu_block`), the whole block in
/// registers and every column step unrolled.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn lu_block(
    a: &mut [f64; 36],
    ipiv: &mut [usize; 6],
    inv: &mut [f64; 6],
    tol: f64,
) -> Result<(), (usize, f64)> {
    let mut x = load_all(a);
    let result = eliminate::<0>(&mut x, ipiv, inv, tol)
        .and_then(|()| eliminate::<1>(&mut x, ipiv, inv, tol))
        .and_then(|()| eliminate::<2>(&mut x, ipiv, inv, tol))
        .and_then(|()| eliminate::<3>(&mut x, ipiv, inv, tol))
        .and_then(|()| eliminate::<4>(&mut x, ipiv, inv, tol))
        .and_then(|()| eliminate::<5>(&mut x, ipiv, inv, tol));
    for (r, xr) in x.iter().enumerate() {
        store(row_mut(a, r), *xr);
    }
    result
}

/// `y ← y - aᵀ x` (see `gemv_t_sub`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn gemv_t_sub(y: &mut [f64; 6], a: &[f64; 36], x: &[f64; 6]) {
    let mut acc = load(y);
    for (t, &xt) in x.iter().enumerate() {
        acc = nmadd(xt, load(row(a, t)), acc);
    }
    store(y, acc);
}

/// `y ← y - Σ_k a_k x_{j_k}` over the blocks `a_k` of one block row (row-major, contiguous
/// in `blocks`) and the matching 6-vectors of `x` at the block indices `cols`. The
/// products are accumulated per entry and summed once per row.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn gemv_rows_sub(y: &mut [f64; 6], blocks: &[f64], cols: &[usize], x: &[f64]) {
    let mut lo = [_mm256_setzero_pd(); 6];
    let mut hi = [_mm_setzero_pd(); 6];
    for (a, &j) in blocks.chunks_exact(36).zip(cols) {
        let a: &[f64; 36] = a.try_into().expect("6 x 6 block");
        let xj = load(x[6 * j..6 * j + 6].try_into().expect("6-vector"));
        for r in 0..6 {
            let ar = load(row(a, r));
            lo[r] = _mm256_fmadd_pd(ar.0, xj.0, lo[r]);
            hi[r] = _mm_fmadd_pd(ar.1, xj.1, hi[r]);
        }
    }
    let (s03, s45) = crate::cpu::row_sums6(&lo, &hi);
    let s = Row(s03, s45);
    let v = load(y);
    store(y, Row(_mm256_sub_pd(v.0, s.0), _mm_sub_pd(v.1, s.1)));
}
