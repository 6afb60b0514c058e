//! Padded 3 × 3 matrices and the four-lane arithmetic of the linearisation (document 000,
//! Bild 6: element partials, chain rule and block assembly are almost entirely 3 × 3 products).
//!
//! An [`M3`] stores its three rows as four-lane arrays (lane 3 is zero padding), 32-byte aligned,
//! so one row is one 256-bit register. The operations are written once, generic over a [`Lanes`]
//! implementation: [`Portable`] (plain arrays, any CPU) and, on x86-64, [`Avx2`] (256-bit
//! intrinsics; a token that exists only on CPUs with AVX2). Products are formed row by row from
//! broadcast entries of the left factor — `row_i(A B) = Σ_k A_ik row_k(B)` — in the same order on
//! both paths; the AVX2 path fuses the multiply-adds of the products (one rounding instead of
//! two), so the two paths agree to round-off (tests here and in `tests/jacobian_fd.rs`) and both
//! are checked against nalgebra.
//!
//! Why not nalgebra's `Matrix3` on this path: its nine packed entries split into 128-bit pairs
//! and a single, and the compiler's shuffles to form pairs and broadcasts were a quarter of the
//! linearisation's arithmetic instructions (callgrind, docs/performance.md).

use nalgebra::{Matrix3, Vector3};

/// Four lanes: x, y, z, padding.
pub type L4 = [f64; 4];

/// Four-lane arithmetic. Implementations are zero-sized tokens; `Avx2` can only be obtained on a
/// CPU that supports it, which makes its methods sound to call.
pub trait Lanes: Copy {
    /// A four-lane value (a register where the implementation has one).
    type V: Copy;
    /// Loads four lanes.
    fn load(self, p: &L4) -> Self::V;
    /// Stores four lanes.
    fn store(self, v: Self::V, p: &mut L4);
    /// Loads `p[0..3]` into lanes 0-2; lane 3 is zero.
    fn load_row3(self, p: &[f64; 3]) -> Self::V;
    /// Stores lanes 0-2 into `p[0..3]` (lane 3 is dropped).
    fn store_row3(self, v: Self::V, p: &mut [f64; 3]);
    /// All four lanes set to `x`.
    fn splat(self, x: f64) -> Self::V;
    /// Lane-wise a + b.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a − b.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a · b.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a · b + c: fused (one rounding) where the hardware has it, else two roundings.
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// Lane-wise a · b − c, fused like [`Lanes::mul_add`].
    fn mul_sub(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
}

/// Plain four-element arrays: runs everywhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct Portable;

#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> L4 {
    [f(0), f(1), f(2), f(3)]
}

impl Lanes for Portable {
    type V = L4;
    #[inline(always)]
    fn load(self, p: &L4) -> L4 {
        *p
    }
    #[inline(always)]
    fn store(self, v: L4, p: &mut L4) {
        *p = v;
    }
    #[inline(always)]
    fn load_row3(self, p: &[f64; 3]) -> L4 {
        [p[0], p[1], p[2], 0.0]
    }
    #[inline(always)]
    fn store_row3(self, v: L4, p: &mut [f64; 3]) {
        p.copy_from_slice(&v[..3]);
    }
    #[inline(always)]
    fn splat(self, x: f64) -> L4 {
        [x; 4]
    }
    #[inline(always)]
    fn add(self, a: L4, b: L4) -> L4 {
        lanes(|i| a[i] + b[i])
    }
    #[inline(always)]
    fn sub(self, a: L4, b: L4) -> L4 {
        lanes(|i| a[i] - b[i])
    }
    #[inline(always)]
    fn mul(self, a: L4, b: L4) -> L4 {
        lanes(|i| a[i] * b[i])
    }
    #[inline(always)]
    fn mul_add(self, a: L4, b: L4, c: L4) -> L4 {
        lanes(|i| a[i] * b[i] + c[i])
    }
    #[inline(always)]
    fn mul_sub(self, a: L4, b: L4, c: L4) -> L4 {
        lanes(|i| a[i] * b[i] - c[i])
    }
}

/// 256-bit AVX registers: the workspace's one SIMD token ([`sprung_solve::cpu::Avx2Fma`]), only
/// created by its `detect`.
#[cfg(target_arch = "x86_64")]
pub use sprung_solve::cpu::Avx2Fma as Avx2;

// SAFETY (all methods): an `Avx2` token exists only after `detect` confirmed AVX2 support; `L4`
// is 32 bytes and `M3` rows are 32-byte aligned, but the loads and stores are unaligned anyway.
#[cfg(target_arch = "x86_64")]
impl Lanes for Avx2 {
    type V = std::arch::x86_64::__m256d;
    #[inline(always)]
    fn load(self, p: &L4) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_loadu_pd(p.as_ptr()) }
    }
    #[inline(always)]
    fn store(self, v: Self::V, p: &mut L4) {
        unsafe { std::arch::x86_64::_mm256_storeu_pd(p.as_mut_ptr(), v) }
    }
    // Three elements as a 128-bit pair and a 64-bit single (never the fourth address, so `p`
    // may end a slice). Not masked moves: a masked load does not take its data from an earlier
    // store to the same address (store forwarding), which the accumulation into blocks relies on
    // — measured 7 % slower linearisation with them.
    #[inline(always)]
    fn load_row3(self, p: &[f64; 3]) -> Self::V {
        use std::arch::x86_64::{
            _mm_load_sd, _mm_loadu_pd, _mm256_castpd128_pd256, _mm256_insertf128_pd,
        };
        unsafe {
            let lo = _mm256_castpd128_pd256(_mm_loadu_pd(p.as_ptr()));
            _mm256_insertf128_pd(lo, _mm_load_sd(p.as_ptr().add(2)), 1)
        }
    }
    #[inline(always)]
    fn store_row3(self, v: Self::V, p: &mut [f64; 3]) {
        use std::arch::x86_64::{
            _mm_store_sd, _mm_storeu_pd, _mm256_castpd256_pd128, _mm256_extractf128_pd,
        };
        unsafe {
            _mm_storeu_pd(p.as_mut_ptr(), _mm256_castpd256_pd128(v));
            _mm_store_sd(p.as_mut_ptr().add(2), _mm256_extractf128_pd(v, 1));
        }
    }
    #[inline(always)]
    fn splat(self, x: f64) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_set1_pd(x) }
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_add_pd(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: Self::V, b: Self::V) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_sub_pd(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: Self::V, b: Self::V) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_mul_pd(a, b) }
    }
    #[inline(always)]
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_fmadd_pd(a, b, c) }
    }
    #[inline(always)]
    fn mul_sub(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        unsafe { std::arch::x86_64::_mm256_fmsub_pd(a, b, c) }
    }
}

/// Builds an [`M3`] row by row, `rows!(l, |i| row_i)`: the row expression is expanded in place
/// (a macro, not a closure — closures do not inherit the AVX2 target features of the function
/// they are written in, and one the compiler chose not to inline would call every intrinsic out
/// of line).
macro_rules! rows {
    ($l:expr, |$i:ident| $row:expr) => {{
        let mut out = M3::ZERO;
        for $i in 0..3 {
            $l.store($row, &mut out.r[$i]);
        }
        out
    }};
}

/// Offset of row `i` of piece (`half_row`, `half_col`) in a row-major 6 × 6 block.
#[inline(always)]
fn piece_at(half_row: usize, half_col: usize, i: usize) -> usize {
    (3 * half_row + i) * 6 + 3 * half_col
}

/// Row `i` of piece (`half_row`, `half_col`) of a row-major 6 × 6 block.
#[inline(always)]
fn piece_row(block: &[f64; 36], half_row: usize, half_col: usize, i: usize) -> &[f64; 3] {
    let at = piece_at(half_row, half_col, i);
    block[at..at + 3].try_into().expect("three entries")
}

/// Mutable [`piece_row`].
#[inline(always)]
fn piece_row_mut(
    block: &mut [f64; 36],
    half_row: usize,
    half_col: usize,
    i: usize,
) -> &mut [f64; 3] {
    let at = piece_at(half_row, half_col, i);
    (&mut block[at..at + 3]).try_into().expect("three entries")
}

/// Pads a vector.
#[inline(always)]
pub fn pad(v: &Vector3<f64>) -> L4 {
    [v.x, v.y, v.z, 0.0]
}

/// A 3 × 3 matrix stored as three padded rows (row-major, like the 6 × 6 blocks it ends in).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(32))]
pub struct M3 {
    /// Rows 0, 1, 2; lane 3 of each is zero.
    pub r: [L4; 3],
}

impl Default for M3 {
    fn default() -> Self {
        Self::ZERO
    }
}

impl M3 {
    /// The zero matrix.
    pub const ZERO: Self = Self { r: [[0.0; 4]; 3] };

    /// The identity.
    pub const IDENTITY: Self = Self {
        r: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    /// From a nalgebra matrix.
    #[inline(always)]
    pub fn from_matrix(m: &Matrix3<f64>) -> Self {
        let row = |i: usize| [m[(i, 0)], m[(i, 1)], m[(i, 2)], 0.0];
        Self {
            r: [row(0), row(1), row(2)],
        }
    }

    /// The nine entries, row-major.
    #[inline(always)]
    pub fn to_row_major(&self) -> [f64; 9] {
        let r = &self.r;
        [
            r[0][0], r[0][1], r[0][2], r[1][0], r[1][1], r[1][2], r[2][0], r[2][1], r[2][2],
        ]
    }

    /// To a nalgebra matrix.
    pub fn to_matrix(&self) -> Matrix3<f64> {
        Matrix3::from_fn(|r, c| self.r[r][c])
    }

    /// \[a\]×, the cross-product matrix: \[a\]× x = a × x.
    #[inline(always)]
    pub fn skew(a: &Vector3<f64>) -> Self {
        Self {
            r: [
                [0.0, -a.z, a.y, 0.0],
                [a.z, 0.0, -a.x, 0.0],
                [-a.y, a.x, 0.0, 0.0],
            ],
        }
    }

    /// Piece (`half_row`, `half_col`) of a row-major 6 × 6 block: rows 3 `half_row` .. + 3,
    /// columns 3 `half_col` .. + 3.
    #[inline(always)]
    pub fn load_piece<L: Lanes>(l: L, block: &[f64; 36], half_row: usize, half_col: usize) -> Self {
        rows!(l, |i| l.load_row3(piece_row(block, half_row, half_col, i)))
    }

    /// Writes k · self into piece (`half_row`, `half_col`) of a row-major 6 × 6 block
    /// (`overwrite`), or adds it (fused multiply-add where the lanes have one).
    #[inline(always)]
    pub fn put_piece<L: Lanes>(
        &self,
        l: L,
        block: &mut [f64; 36],
        half_row: usize,
        half_col: usize,
        k: f64,
        overwrite: bool,
    ) {
        let k = l.splat(k);
        for i in 0..3 {
            let dst = piece_row_mut(block, half_row, half_col, i);
            let x = l.load(&self.r[i]);
            let v = if overwrite {
                l.mul(k, x)
            } else {
                l.mul_add(x, k, l.load_row3(dst))
            };
            l.store_row3(v, dst);
        }
    }

    /// Transpose.
    #[inline(always)]
    pub fn transpose(&self) -> Self {
        let col = |c: usize| [self.r[0][c], self.r[1][c], self.r[2][c], 0.0];
        Self {
            r: [col(0), col(1), col(2)],
        }
    }

    /// selfᵀ · b: row i is Σ_k self_ki row_k(b) (no transpose formed).
    #[inline(always)]
    pub fn tmul<L: Lanes>(&self, l: L, b: &Self) -> Self {
        let (b0, b1, b2) = (l.load(&b.r[0]), l.load(&b.r[1]), l.load(&b.r[2]));
        rows!(l, |i| {
            let a = &self.r;
            let p = l.mul_add(l.splat(a[1][i]), b1, l.mul(l.splat(a[0][i]), b0));
            l.mul_add(l.splat(a[2][i]), b2, p)
        })
    }

    /// selfᵀ · v = Σ_k v_k row_k(self).
    #[inline(always)]
    pub fn tmul_vec<L: Lanes>(&self, l: L, v: &Vector3<f64>) -> Vector3<f64> {
        let (r0, r1, r2) = (l.load(&self.r[0]), l.load(&self.r[1]), l.load(&self.r[2]));
        let p = l.mul_add(l.splat(v.y), r1, l.mul(l.splat(v.x), r0));
        let sum = l.mul_add(l.splat(v.z), r2, p);
        let mut out = [0.0; 4];
        l.store(sum, &mut out);
        Vector3::new(out[0], out[1], out[2])
    }

    /// self · v (three dot products; scalar).
    #[inline(always)]
    pub fn mul_vec(&self, v: &Vector3<f64>) -> Vector3<f64> {
        let dot = |i: usize| self.r[i][0] * v.x + self.r[i][1] * v.y + self.r[i][2] * v.z;
        Vector3::new(dot(0), dot(1), dot(2))
    }

    /// self + o.
    #[inline(always)]
    pub fn add<L: Lanes>(&self, l: L, o: &Self) -> Self {
        rows!(l, |i| l.add(l.load(&self.r[i]), l.load(&o.r[i])))
    }

    /// self − o.
    #[inline(always)]
    pub fn sub<L: Lanes>(&self, l: L, o: &Self) -> Self {
        rows!(l, |i| l.sub(l.load(&self.r[i]), l.load(&o.r[i])))
    }

    /// self += o.
    #[inline(always)]
    pub fn add_assign<L: Lanes>(&mut self, l: L, o: &Self) {
        *self = self.add(l, o);
    }

    /// self + x · s (fused on the AVX2 path).
    #[inline(always)]
    pub fn add_scaled<L: Lanes>(&self, l: L, x: &Self, s: f64) -> Self {
        let s = l.splat(s);
        rows!(l, |i| l.mul_add(l.load(&x.r[i]), s, l.load(&self.r[i])))
    }

    /// self · s.
    #[inline(always)]
    pub fn scale<L: Lanes>(&self, l: L, s: f64) -> Self {
        let s = l.splat(s);
        rows!(l, |i| l.mul(l.load(&self.r[i]), s))
    }

    /// −self (as 0 − self, so that −0 stays out of the padding).
    #[inline(always)]
    pub fn neg<L: Lanes>(&self, l: L) -> Self {
        let z = l.splat(0.0);
        rows!(l, |i| l.sub(z, l.load(&self.r[i])))
    }

    /// self · b: row i is Σ_k self_ik row_k(b).
    #[inline(always)]
    pub fn mul<L: Lanes>(&self, l: L, b: &Self) -> Self {
        let (b0, b1, b2) = (l.load(&b.r[0]), l.load(&b.r[1]), l.load(&b.r[2]));
        rows!(l, |i| {
            let a = &self.r[i];
            let p = l.mul_add(l.splat(a[1]), b1, l.mul(l.splat(a[0]), b0));
            l.mul_add(l.splat(a[2]), b2, p)
        })
    }

    /// self · \[a\]×: rows m_i × a, i.e. (m_y a_z − m_z a_y, m_z a_x − m_x a_z, m_x a_y − m_y a_x).
    #[inline(always)]
    pub fn mul_skew<L: Lanes>(&self, l: L, a: &Vector3<f64>) -> Self {
        self.mul(l, &Self::skew(a))
    }

    /// \[a\]× · self: rows a_y m₂ − a_z m₁, a_z m₀ − a_x m₂, a_x m₁ − a_y m₀ for the rows m_k.
    #[inline(always)]
    pub fn skew_mul<L: Lanes>(l: L, a: &Vector3<f64>, m: &Self) -> Self {
        let (m0, m1, m2) = (l.load(&m.r[0]), l.load(&m.r[1]), l.load(&m.r[2]));
        let (ax, ay, az) = (l.splat(a.x), l.splat(a.y), l.splat(a.z));
        let rows = [
            l.mul_sub(ay, m2, l.mul(az, m1)),
            l.mul_sub(az, m0, l.mul(ax, m2)),
            l.mul_sub(ax, m1, l.mul(ay, m0)),
        ];
        rows!(l, |i| rows[i])
    }

    /// u vᵀ.
    #[inline(always)]
    pub fn outer<L: Lanes>(l: L, u: &Vector3<f64>, v: &Vector3<f64>) -> Self {
        let v = l.load(&pad(v));
        rows!(l, |i| l.mul(l.splat(u[i]), v))
    }

    /// self diag(k): column j scaled by k_j.
    #[inline(always)]
    pub fn scale_columns<L: Lanes>(&self, l: L, k: &Vector3<f64>) -> Self {
        let k = l.load(&pad(k));
        rows!(l, |i| l.mul(l.load(&self.r[i]), k))
    }

    /// R diag(k) Rᵀ for a rotation R given with its transpose: a diagonal local characteristic
    /// in global axes.
    #[inline(always)]
    pub fn rotate_diag<L: Lanes>(l: L, r: &Self, rt: &Self, k: &Vector3<f64>) -> Self {
        r.scale_columns(l, k).mul(l, rt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seed: f64) -> Matrix3<f64> {
        Matrix3::from_fn(|r, c| ((r * 3 + c) as f64 * 0.7 + seed).sin())
    }

    fn check<L: Lanes>(l: L) -> Vec<M3> {
        let (a, b) = (sample(0.3), sample(1.9));
        let (ma, mb) = (M3::from_matrix(&a), M3::from_matrix(&b));
        let v = Vector3::new(0.4, -1.3, 2.2);
        let w = Vector3::new(-0.8, 0.5, 0.1);
        let cases = [
            (ma.mul(l, &mb), a * b),
            (ma.add(l, &mb), a + b),
            (ma.sub(l, &mb), a - b),
            (ma.scale(l, -2.5), a * -2.5),
            (ma.add_scaled(l, &mb, -2.5), a + b * -2.5),
            (ma.neg(l), -a),
            (ma.transpose(), a.transpose()),
            (ma.tmul(l, &mb), a.transpose() * b),
            (ma.mul_skew(l, &v), a * v.cross_matrix()),
            (M3::skew_mul(l, &v, &ma), v.cross_matrix() * a),
            (M3::outer(l, &v, &w), v * w.transpose()),
            (ma.scale_columns(l, &v), a * Matrix3::from_diagonal(&v)),
            (
                M3::rotate_diag(l, &ma, &ma.transpose(), &v),
                a * Matrix3::from_diagonal(&v) * a.transpose(),
            ),
        ];
        for (k, (m, n)) in cases.iter().enumerate() {
            // Round-off of at most a few operations on entries of order one.
            assert!(
                (m.to_matrix() - n).abs().max() <= 1e-15 * (1.0 + n.abs().max()),
                "case {k}"
            );
            assert!(m.r.iter().all(|r| r[3] == 0.0), "case {k}: padding lane");
        }
        assert!((ma.mul_vec(&v) - a * v).norm() <= 1e-14);
        assert!((ma.tmul_vec(l, &v) - a.transpose() * v).norm() <= 1e-14);
        cases.iter().map(|c| c.0).collect()
    }

    #[test]
    fn operations_match_nalgebra_on_every_path() {
        let portable = check(Portable);
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = Avx2::detect() {
            // Same operations in the same order, except that the products fuse multiply and
            // add: equal to within a rounding or two of order-one entries.
            for (a, p) in check(avx).iter().zip(&portable) {
                assert!((a.to_matrix() - p.to_matrix()).abs().max() <= 1e-15);
            }
        }
    }

    /// Pieces of a 6 × 6 block: loaded, overwritten and accumulated against plain indexing;
    /// no entry outside the piece changes.
    fn pieces<L: Lanes>(l: L) {
        let x = M3::from_matrix(&sample(0.9));
        for (hr, hc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let start: [f64; 36] = std::array::from_fn(|k| k as f64 * 0.25 - 3.0);
            let inside = |k: usize| (k / 6) / 3 == hr && (k % 6) / 3 == hc;
            let at = |i: usize, j: usize| (3 * hr + i) * 6 + 3 * hc + j;
            let loaded = M3::load_piece(l, &start, hr, hc);
            assert!(loaded.r.iter().all(|r| r[3] == 0.0));
            for (overwrite, k) in [(true, -2.0), (false, 0.5)] {
                let mut blk = start;
                x.put_piece(l, &mut blk, hr, hc, k, overwrite);
                for i in 0..3 {
                    for j in 0..3 {
                        let base = if overwrite { 0.0 } else { start[at(i, j)] };
                        assert_eq!(loaded.r[i][j], start[at(i, j)]);
                        // k x + base: one or two roundings of order-ten values.
                        assert!((blk[at(i, j)] - (k * x.r[i][j] + base)).abs() <= 1e-14);
                    }
                }
                for k in (0..36).filter(|&k| !inside(k)) {
                    assert_eq!(blk[k], start[k], "entry {k} outside piece ({hr}, {hc})");
                }
            }
        }
    }

    #[test]
    fn block_pieces_on_every_path() {
        pieces(Portable);
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = Avx2::detect() {
            pieces(avx);
        }
    }
}
