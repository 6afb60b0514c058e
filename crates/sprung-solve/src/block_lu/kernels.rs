//! Block kernels of the numeric factorisation and solve ([`super::numeric`]): LU of one pivot
//! block with partial pivoting, the panel solves `U_kj = L_k⁻¹ P_k A_kj` and `L_ik = A_ik U_k⁻¹`,
//! the Schur-complement update `A_ij ← A_ij - L_ik U_kj` of document 000, section 3, eq. (14),
//! and the block matrix-vector products of the substitutions, eqs. (15)-(17).
//!
//! The kernels are generic over [`Dim`]: a compile-time block size ([`Fixed`], used for
//! `b = 6, 3, 1`, so the compiler unrolls and vectorises the small loops), a run-time block size
//! ([`Dynamic`]), and on x86-64 with AVX2 + FMA the hand-vectorised 6 × 6 kernels of
//! [`super::avx6`] ([`Avx6`]).

use crate::dense::pivot_ok;

/// Block edge length (compile-time constant or run-time value) and the multiply-add flavour the
/// kernels are compiled with.
pub(super) trait Dim: Copy {
    fn get(self) -> usize;
    /// `c + a b`.
    fn madd(self, a: f64, b: f64, c: f64) -> f64;
    /// `c - a b`.
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64;

    // The block kernels, generic by default; a block size with hand-vectorised kernels
    // overrides them.

    /// See [`lu_block`].
    #[inline(always)]
    fn lu_block(
        self,
        a: &mut [f64],
        ipiv: &mut [usize],
        inv: &mut [f64],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        lu_block(self, a, ipiv, inv, tol)
    }
    /// See [`unit_lower_solve`].
    #[inline(always)]
    fn unit_lower_solve(self, lu: &[f64], u: &mut [f64]) {
        unit_lower_solve(self, lu, u)
    }
    /// See [`upper_transposed_solve`].
    #[inline(always)]
    fn upper_transposed_solve(self, lu: &[f64], inv: &[f64], y: &mut [f64]) {
        upper_transposed_solve(self, lu, inv, y)
    }
    /// See [`gemm_tn_sub`].
    #[inline(always)]
    fn gemm_tn_sub(self, c: &mut [f64], p: &[f64], q: &[f64]) {
        gemm_tn_sub(self, c, p, q)
    }
    /// See [`gemv_t_sub`].
    #[inline(always)]
    fn gemv_t_sub(self, y: &mut [f64], a: &[f64], x: &[f64]) {
        gemv_t_sub(self, y, a, x)
    }
    /// `y ← y - Σ_k a_k x_{cols[k]}` for the row-major blocks `a_k` stored one after the other
    /// in `blocks` (one [`gemv_sub`] per block).
    #[inline(always)]
    fn gemv_rows_sub(self, y: &mut [f64], blocks: &[f64], cols: &[usize], x: &[f64]) {
        let b = self.get();
        for (a, &j) in blocks.chunks_exact(b * b).zip(cols) {
            gemv_sub(self, y, a, &x[j * b..(j + 1) * b]);
        }
    }
}

/// Constant block size, separate multiply and add (portable code path).
#[derive(Clone, Copy)]
pub(super) struct Fixed<const B: usize>;

impl<const B: usize> Dim for Fixed<B> {
    #[inline(always)]
    fn get(self) -> usize {
        B
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        c + a * b
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        c - a * b
    }
}

/// Block size 6 with the hand-vectorised AVX2 + FMA kernels of [`super::avx6`]. Only constructed
/// inside functions compiled for (and called after run-time detection of) AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Avx6;

#[cfg(target_arch = "x86_64")]
impl Avx6 {
    #[inline(always)]
    fn b36(a: &[f64]) -> &[f64; 36] {
        a[..36].try_into().expect("6 x 6 block")
    }
    #[inline(always)]
    fn b36_mut(a: &mut [f64]) -> &mut [f64; 36] {
        (&mut a[..36]).try_into().expect("6 x 6 block")
    }
    #[inline(always)]
    fn v6(a: &[f64]) -> &[f64; 6] {
        a[..6].try_into().expect("6-vector")
    }
    #[inline(always)]
    fn v6_mut(a: &mut [f64]) -> &mut [f64; 6] {
        (&mut a[..6]).try_into().expect("6-vector")
    }
}

// SAFETY (all `unsafe` blocks of this impl): `Avx6` values exist only inside
// `factor6_avx2_fma` and `solve6_avx2_fma`, which run only after AVX2 and FMA were detected.
#[cfg(target_arch = "x86_64")]
impl Dim for Avx6 {
    #[inline(always)]
    fn get(self) -> usize {
        6
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        (-a).mul_add(b, c)
    }
    #[inline(always)]
    fn lu_block(
        self,
        a: &mut [f64],
        ipiv: &mut [usize],
        inv: &mut [f64],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        let ipiv: &mut [usize; 6] = (&mut ipiv[..6]).try_into().expect("6 pivots");
        unsafe { super::avx6::lu_block(Self::b36_mut(a), ipiv, Self::v6_mut(inv), tol) }
    }
    #[inline(always)]
    fn unit_lower_solve(self, lu: &[f64], u: &mut [f64]) {
        unsafe { super::avx6::unit_lower_solve(Self::b36(lu), Self::b36_mut(u)) }
    }
    #[inline(always)]
    fn upper_transposed_solve(self, lu: &[f64], inv: &[f64], y: &mut [f64]) {
        unsafe {
            super::avx6::upper_transposed_solve(Self::b36(lu), Self::v6(inv), Self::b36_mut(y))
        }
    }
    #[inline(always)]
    fn gemm_tn_sub(self, c: &mut [f64], p: &[f64], q: &[f64]) {
        unsafe { super::avx6::gemm_tn_sub(Self::b36_mut(c), Self::b36(p), Self::b36(q)) }
    }
    #[inline(always)]
    fn gemv_t_sub(self, y: &mut [f64], a: &[f64], x: &[f64]) {
        unsafe { super::avx6::gemv_t_sub(Self::v6_mut(y), Self::b36(a), Self::v6(x)) }
    }
    #[inline(always)]
    fn gemv_rows_sub(self, y: &mut [f64], blocks: &[f64], cols: &[usize], x: &[f64]) {
        unsafe { super::avx6::gemv_rows_sub(Self::v6_mut(y), blocks, cols, x) }
    }
}

/// Run-time block size (any `b`).
#[derive(Clone, Copy)]
pub(super) struct Dynamic(pub(super) usize);

impl Dim for Dynamic {
    #[inline(always)]
    fn get(self) -> usize {
        self.0
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        c + a * b
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        c - a * b
    }
}

/// In-place `P a = L U` of one row-major `b × b` block with partial pivoting. Stores the
/// transpositions in `ipiv` and the reciprocal pivots in `inv`. Fails with `(column, pivot)` when
/// a pivot is not finite or not above `tol`.
#[inline(always)]
pub(super) fn lu_block<D: Dim>(
    d: D,
    a: &mut [f64],
    ipiv: &mut [usize],
    inv: &mut [f64],
    tol: f64,
) -> Result<(), (usize, f64)> {
    let b = d.get();
    let a = &mut a[..b * b];
    let ipiv = &mut ipiv[..b];
    let inv = &mut inv[..b];
    for c in 0..b {
        let mut p = c;
        let mut best = a[c * b + c].abs();
        for r in c + 1..b {
            let v = a[r * b + c].abs();
            if v > best {
                best = v;
                p = r;
            }
        }
        ipiv[c] = p;
        if p != c {
            for t in 0..b {
                a.swap(c * b + t, p * b + t);
            }
        }
        let pivot = a[c * b + c];
        if !pivot_ok(pivot, tol) {
            return Err((c, pivot));
        }
        let ip = 1.0 / pivot;
        inv[c] = ip;
        for r in c + 1..b {
            let l = a[r * b + c] * ip;
            a[r * b + c] = l;
            for t in c + 1..b {
                a[r * b + t] = d.nmadd(l, a[c * b + t], a[r * b + t]);
            }
        }
    }
    Ok(())
}

/// Applies the row transpositions `ipiv` to the rows of block `u`.
#[inline(always)]
pub(super) fn swap_rows<D: Dim>(d: D, u: &mut [f64], ipiv: &[usize]) {
    let b = d.get();
    let u = &mut u[..b * b];
    for (c, &p) in ipiv[..b].iter().enumerate() {
        if p != c {
            for t in 0..b {
                u.swap(c * b + t, p * b + t);
            }
        }
    }
}

/// `u ← L⁻¹ u` with the unit lower triangle `L` of the factored block `lu`.
#[inline(always)]
pub(super) fn unit_lower_solve<D: Dim>(d: D, lu: &[f64], u: &mut [f64]) {
    let b = d.get();
    let lu = &lu[..b * b];
    let u = &mut u[..b * b];
    for r in 1..b {
        for m in 0..r {
            let l = lu[r * b + m];
            for t in 0..b {
                u[r * b + t] = d.nmadd(l, u[m * b + t], u[r * b + t]);
            }
        }
    }
}

/// `y ← U⁻ᵀ y` with the upper triangle `U` of the factored block `lu` (reciprocal diagonal
/// `inv`): this is `L_ik = A_ik U_k⁻¹` computed on the transposed block `y = A_ikᵀ`, which turns
/// the column recurrence into contiguous row operations.
#[inline(always)]
pub(super) fn upper_transposed_solve<D: Dim>(d: D, lu: &[f64], inv: &[f64], y: &mut [f64]) {
    let b = d.get();
    let lu = &lu[..b * b];
    let inv = &inv[..b];
    let y = &mut y[..b * b];
    for c in 0..b {
        for m in 0..c {
            let u = lu[m * b + c];
            for t in 0..b {
                y[c * b + t] = d.nmadd(u, y[m * b + t], y[c * b + t]);
            }
        }
        let ic = inv[c];
        for t in 0..b {
            y[c * b + t] *= ic;
        }
    }
}

/// `c ← c - pᵀ q` for row-major `b × b` blocks.
#[inline(always)]
pub(super) fn gemm_tn_sub<D: Dim>(d: D, c: &mut [f64], p: &[f64], q: &[f64]) {
    let b = d.get();
    let c = &mut c[..b * b];
    let p = &p[..b * b];
    let q = &q[..b * b];
    for r in 0..b {
        for m in 0..b {
            let pv = p[m * b + r];
            for t in 0..b {
                c[r * b + t] = d.nmadd(pv, q[m * b + t], c[r * b + t]);
            }
        }
    }
}

/// `dst ← src` for `b × b` blocks, as an inlined loop (a `memcpy` call per small block costs
/// more than the copy itself).
#[inline(always)]
pub(super) fn copy_block<D: Dim>(d: D, dst: &mut [f64], src: &[f64]) {
    let b = d.get();
    let (dst4, dst_rest) = dst[..b * b].as_chunks_mut::<4>();
    let (src4, src_rest) = src[..b * b].as_chunks::<4>();
    for (o, i) in dst4.iter_mut().zip(src4) {
        *o = *i;
    }
    dst_rest.copy_from_slice(src_rest);
}

/// `dst ← srcᵀ` for row-major `b × b` blocks.
#[inline(always)]
pub(super) fn copy_transposed<D: Dim>(d: D, dst: &mut [f64], src: &[f64]) {
    let b = d.get();
    let dst = &mut dst[..b * b];
    let src = &src[..b * b];
    for r in 0..b {
        for c in 0..b {
            dst[c * b + r] = src[r * b + c];
        }
    }
}

/// `y ← y - aᵀ x` for a row-major `b × b` block `a` (i.e. `a` holds the transposed block).
#[inline(always)]
pub(super) fn gemv_t_sub<D: Dim>(d: D, y: &mut [f64], a: &[f64], x: &[f64]) {
    let b = d.get();
    let y = &mut y[..b];
    let a = &a[..b * b];
    let x = &x[..b];
    for t in 0..b {
        let xv = x[t];
        for r in 0..b {
            y[r] = d.nmadd(xv, a[t * b + r], y[r]);
        }
    }
}

/// `y ← y - a x` for a row-major `b × b` block `a`.
#[inline(always)]
pub(super) fn gemv_sub<D: Dim>(d: D, y: &mut [f64], a: &[f64], x: &[f64]) {
    let b = d.get();
    let y = &mut y[..b];
    let a = &a[..b * b];
    let x = &x[..b];
    for r in 0..b {
        let mut acc = 0.0;
        for t in 0..b {
            acc = d.madd(a[r * b + t], x[t], acc);
        }
        y[r] -= acc;
    }
}
