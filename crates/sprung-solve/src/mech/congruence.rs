//! Congruence form of the linearisation: J = D_r G D_c with block-diagonal D_r and D_c.
//!
//! For a multibody model (source document 000, eqs. 1-3) the accelerations are q = D_r f with
//! f = (F, τ) the global wrench of each body and D_r = diag(I₃/m, I⁻¹ Rᵀ) per body (Newton–Euler),
//! and the velocity coordinates v = (ẋ, ω_body) map to global perturbations through
//! D_c = diag(I₃, R). The partials G = ∂f/∂(global perturbations) are what the force elements
//! deliver; J_v = D_r G_v D_c and J_r K = D_r G_rK D_c cost two 3 × 3 products per block piece to
//! form. The stepper does not need them: with M = D_r⁻¹ D_c⁻¹ = diag(m I₃, R I Rᵀ), the global mass
//! matrix,
//!
//! A = I − hγ J_v − (hγ)² J_r K = D_r (M − hγ G_v − (hγ)² G_rK) D_c       (document 000, eq. 11)
//!
//! so A Δv = b is solved as (M − hγ G_v − (hγ)² G_rK) y = D_r⁻¹ b, Δv = D_c⁻¹ y, and a product
//! J x as D_r (G (D_c x)). All three factors are block diagonal; applying them to a vector costs
//! one 3 × 3 product per body, against two per stored block for forming J.
//!
//! Per 6 × 6 block k: D_r⁻¹ = diag(m_k I₃, P_k) and D_c = diag(I₃, R_k) with R_k orthogonal
//! (D_c⁻¹ = diag(I₃, R_kᵀ)); D_r = diag(I₃/m_k, P_k⁻¹) is stored as well, for [`Congruence::expand`],
//! and so is the rotational block P_k R_kᵀ of M (for a body its inertia tensor in global axes,
//! which the system has at hand), so that forming the iteration matrix costs no 3 × 3 products.

use crate::block::{BlockMatrix, BlockPattern};

/// Row-major 3 × 3 matrix.
pub type Mat3 = [f64; 9];

/// The block-diagonal factors D_r and D_c of a congruence-form linearisation (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Congruence {
    /// m_k: the translational part of D_r⁻¹ is m_k I₃ (the body mass).
    pub mass: Vec<f64>,
    /// P_k: the rotational part of D_r⁻¹ (for a body, R I with I the body-frame inertia).
    pub rot_rows_inv: Vec<Mat3>,
    /// P_k⁻¹: the rotational part of D_r (I⁻¹ Rᵀ).
    pub rot_rows: Vec<Mat3>,
    /// R_k, orthogonal: the rotational part of D_c (the body's rotation matrix).
    pub rot_cols: Vec<Mat3>,
    /// P_k R_kᵀ: the rotational block of M = D_r⁻¹ D_c⁻¹ (R I Rᵀ, the global inertia tensor);
    /// the system must keep it consistent with `rot_rows_inv` and `rot_cols`.
    pub mass_rot: Vec<Mat3>,
    /// Slot of each diagonal block in the pattern.
    diagonal_slots: Vec<usize>,
}

impl Congruence {
    /// Identity factors for the blocks of `pattern` (used only with 6 × 6 blocks).
    pub fn new(pattern: &BlockPattern) -> Self {
        const I3: Mat3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let n_blocks = pattern.n_blocks();
        Self {
            mass: vec![1.0; n_blocks],
            rot_rows_inv: vec![I3; n_blocks],
            rot_rows: vec![I3; n_blocks],
            rot_cols: vec![I3; n_blocks],
            mass_rot: vec![I3; n_blocks],
            diagonal_slots: (0..n_blocks)
                .map(|k| pattern.slot(k, k).expect("every diagonal block is stored"))
                .collect(),
        }
    }

    /// Number of 6 × 6 blocks.
    pub fn n_blocks(&self) -> usize {
        self.mass.len()
    }

    /// x ← D_r⁻¹ x.
    #[inline(always)]
    pub fn apply_rows_inverse(&self, x: &mut [f64]) {
        let blocks = x
            .chunks_exact_mut(6)
            .zip(&self.mass)
            .zip(&self.rot_rows_inv);
        for ((xk, m), p) in blocks {
            for t in &mut xk[..3] {
                *t *= m;
            }
            mat_vec_in_place(p, false, &mut xk[3..]);
        }
    }

    /// x ← D_c x.
    #[inline(always)]
    pub fn apply_cols(&self, x: &mut [f64]) {
        for (xk, r) in x.chunks_exact_mut(6).zip(&self.rot_cols) {
            mat_vec_in_place(r, false, &mut xk[3..]);
        }
    }

    /// x_k ← D_c,k x_k for the six entries `xk` of block `k` alone ([`Self::apply_cols`]'s
    /// arithmetic on that block).
    #[inline(always)]
    pub fn apply_cols_to_block(&self, k: usize, xk: &mut [f64]) {
        mat_vec_in_place(&self.rot_cols[k], false, &mut xk[3..6]);
    }

    /// x ← D_c⁻¹ x (R_kᵀ on the rotational part).
    #[inline(always)]
    pub fn apply_cols_inverse(&self, x: &mut [f64]) {
        for (xk, r) in x.chunks_exact_mut(6).zip(&self.rot_cols) {
            mat_vec_in_place(r, true, &mut xk[3..]);
        }
    }

    /// `out = alpha g_v + beta g_rk + M` with M = D_r⁻¹ D_c⁻¹ = diag(m_k I₃, P_k R_kᵀ) on the
    /// diagonal blocks: the congruent iteration matrix M − hγ G_v − (hγ)² G_rK (module docs;
    /// M from `mass` and `mass_rot`).
    pub fn iteration_matrix(
        &self,
        g_v: &BlockMatrix,
        alpha: f64,
        g_rk: &BlockMatrix,
        beta: f64,
        out: &mut BlockMatrix,
    ) {
        self.check(out);
        g_v.combination_plus_identity_into(alpha, g_rk, beta, 0.0, out);
        let diagonal = self
            .diagonal_slots
            .iter()
            .zip(&self.mass)
            .zip(&self.mass_rot);
        for ((&s, &m), m_rot) in diagonal {
            let blk: &mut [f64; 36] = out.block_mut(s).try_into().expect("6 x 6 block");
            for i in 0..3 {
                blk[7 * i] += m;
                for j in 0..3 {
                    blk[(3 + i) * 6 + 3 + j] += m_rot[3 * i + j];
                }
            }
        }
    }

    /// g ← D_r g D_c: the plain Jacobian from its congruence form, block by block.
    pub fn expand(&self, g: &mut BlockMatrix) {
        self.check(g);
        let p = g.pattern().clone();
        for c in 0..p.n_blocks() {
            for s in p.row_ptr()[c]..p.row_ptr()[c + 1] {
                let e = p.col_idx()[s];
                let blk = g.block_mut(s);
                let mut out = [0.0; 36];
                for i in 0..6 {
                    for j in 0..6 {
                        // (D_r)_{i,·} G (D_c)_{·,j}: both factors are diag(·, 3 × 3).
                        let row = |l: usize| match (i < 3, l < 3) {
                            (true, true) => f64::from(u8::from(i == l)) / self.mass[c],
                            (false, false) => self.rot_rows[c][3 * (i - 3) + l - 3],
                            _ => 0.0,
                        };
                        let col = |l: usize| match (l < 3, j < 3) {
                            (true, true) => f64::from(u8::from(l == j)),
                            (false, false) => self.rot_cols[e][3 * (l - 3) + j - 3],
                            _ => 0.0,
                        };
                        out[6 * i + j] = (0..6)
                            .flat_map(|a| (0..6).map(move |b| (a, b)))
                            .map(|(a, b)| row(a) * blk[6 * a + b] * col(b))
                            .sum();
                    }
                }
                blk.copy_from_slice(&out);
            }
        }
    }

    /// The matrix must have the pattern the factors were created for (6 × 6 blocks; the full
    /// comparison of the diagonal slots only in debug builds, it is not free).
    fn check(&self, m: &BlockMatrix) {
        let p = m.pattern();
        debug_assert!((0..p.n_blocks()).all(|k| p.slot(k, k) == Some(self.diagonal_slots[k])));
        assert!(
            p.block_size() == 6
                && p.n_blocks() == self.n_blocks()
                && self.diagonal_slots.last() < Some(&p.n_stored()),
            "congruence form: the matrix ({} blocks of size {}) does not have the pattern of the \
             factors ({} blocks of size 6)",
            p.n_blocks(),
            p.block_size(),
            self.n_blocks()
        );
    }
}

/// x ← a x (or aᵀ x with `transpose`) for a row-major 3 × 3 `a` and a 3-vector x.
#[inline(always)]
fn mat_vec_in_place(a: &Mat3, transpose: bool, x: &mut [f64]) {
    let x: &mut [f64; 3] = x.try_into().expect("three entries");
    let (x0, x1, x2) = (x[0], x[1], x[2]);
    for (i, out) in x.iter_mut().enumerate() {
        let (a0, a1, a2) = if transpose {
            (a[i], a[3 + i], a[6 + i])
        } else {
            (a[3 * i], a[3 * i + 1], a[3 * i + 2])
        };
        *out = a0 * x0 + a1 * x1 + a2 * x2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockPattern;
    use crate::dense::DenseLu;
    use std::sync::Arc;

    /// A rotation matrix from a (non-unit) quaternion.
    fn rotation(q: [f64; 4]) -> Mat3 {
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        let [w, x, y, z] = q.map(|v| v / n);
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ]
    }

    fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
        let mut c = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                c[3 * i + j] = (0..3).map(|l| a[3 * i + l] * b[3 * l + j]).sum();
            }
        }
        c
    }

    fn transpose(a: &Mat3) -> Mat3 {
        let mut t = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                t[3 * i + j] = a[3 * j + i];
            }
        }
        t
    }

    /// Three bodies with rotations, masses and (diagonal) inertias; G_v, G_rK with smooth
    /// pseudo-random entries.
    fn example() -> (Congruence, BlockMatrix, BlockMatrix) {
        let p = Arc::new(BlockPattern::from_couplings(3, 6, &[(0, 1), (1, 2)]));
        let mut c = Congruence::new(&p);
        for k in 0..3 {
            let r = rotation([1.0, 0.3 * k as f64, -0.2, 0.1 + 0.4 * k as f64]);
            let inertia = [
                2.0 + k as f64,
                0.0,
                0.0,
                0.0,
                3.0,
                0.0,
                0.0,
                0.0,
                0.5 + k as f64,
            ];
            let inv = inertia.map(|v| if v == 0.0 { 0.0 } else { 1.0 / v });
            c.mass[k] = 10.0 + 5.0 * k as f64;
            c.rot_rows_inv[k] = mat_mul(&r, &inertia);
            c.mass_rot[k] = mat_mul(&c.rot_rows_inv[k], &transpose(&r));
            c.rot_rows[k] = mat_mul(&inv, &transpose(&r));
            c.rot_cols[k] = r;
        }
        let mut g_v = BlockMatrix::zeros(p.clone());
        let mut g_r = BlockMatrix::zeros(p);
        for (k, v) in g_v.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.37).sin() * 50.0;
        }
        for (k, v) in g_r.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 1.13).cos() * 4e3;
        }
        (c, g_v, g_r)
    }

    /// The congruent solve (D_r⁻¹ on the right-hand side, congruent matrix, D_c⁻¹ on the result)
    /// against a dense solve with the expanded I − hγ J_v − (hγ)² J_rK.
    #[test]
    fn congruent_solve_matches_plain_solve() {
        let (c, g_v, g_r) = example();
        let (hg, n) = (2.9e-4, 18);
        let mut a_cong = BlockMatrix::zeros(g_v.pattern().clone());
        c.iteration_matrix(&g_v, -hg, &g_r, -hg * hg, &mut a_cong);
        let (mut j_v, mut j_r) = (g_v.clone(), g_r.clone());
        c.expand(&mut j_v);
        c.expand(&mut j_r);
        let mut a_plain = BlockMatrix::zeros(g_v.pattern().clone());
        j_v.combination_plus_identity_into(-hg, &j_r, -hg * hg, 1.0, &mut a_plain);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
        let mut x_plain = b.clone();
        let mut lu = DenseLu::new(n);
        lu.factor_dense(&a_plain.to_dense_row_major()).unwrap();
        lu.solve_in_place(&mut x_plain);
        let mut x = b.clone();
        c.apply_rows_inverse(&mut x);
        lu.factor_dense(&a_cong.to_dense_row_major()).unwrap();
        lu.solve_in_place(&mut x);
        c.apply_cols_inverse(&mut x);
        for (a, e) in x.iter().zip(&x_plain) {
            // Both are solves of a matrix with condition ~1e2: agreement to rounding.
            assert!((a - e).abs() < 1e-12 * (1.0 + e.abs()), "{a} vs {e}");
        }
    }

    /// J x = D_r (G (D_c x)) with the expanded J.
    #[test]
    fn expanded_product_matches_factored_product() {
        let (c, g_v, _) = example();
        let mut j = g_v.clone();
        c.expand(&mut j);
        let x: Vec<f64> = (0..18).map(|i| (i as f64 * 0.3).sin()).collect();
        let mut plain = vec![0.0; 18];
        j.gemv(1.0, &x, 0.0, &mut plain);
        let mut cx = x.clone();
        c.apply_cols(&mut cx);
        let mut gx = vec![0.0; 18];
        g_v.gemv(1.0, &cx, 0.0, &mut gx);
        // D_r = (D_r⁻¹)⁻¹: undo D_r⁻¹ applied to the plain product instead.
        c.apply_rows_inverse(&mut plain);
        for (a, e) in plain.iter().zip(&gx) {
            assert!((a - e).abs() < 1e-11 * (1.0 + e.abs()), "{a} vs {e}");
        }
        let mut back = cx.clone();
        c.apply_cols_inverse(&mut back);
        for (a, e) in back.iter().zip(&x) {
            assert!((a - e).abs() < 1e-15 * 8.0, "{a} vs {e}");
        }
    }
}
