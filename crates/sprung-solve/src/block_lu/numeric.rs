//! Numeric driver of the block-sparse LU: the block Gaussian elimination of document 000,
//! section 3, eq. (14) (Schur complements `Ã_ii`) in the order of the [`super::BlockSymbolic`]
//! analysis, and the forward (eq. 15) and back substitutions (eqs. 16, 17). The per-block work is
//! done by the kernels of [`super::kernels`] (and [`super::avx6`] on AVX2 + FMA CPUs). The
//! substitutions run over a range of elimination steps (all, or those of a decoupled part whose
//! steps are consecutive), and have a second compiled copy (`RESTRICTED`) that visits only the
//! steps of a range of blocks among them, for a right-hand side confined to a decoupled part
//! whose steps are interleaved with others ([`super::BlockSparseLu::solve_blocks_in_place`]).

#[cfg(target_arch = "x86_64")]
use super::avx6;
#[cfg(target_arch = "x86_64")]
use super::kernels::Avx6;
use super::kernels::{Dim, copy_block, copy_transposed, swap_rows};
use super::{BlockSparseLu, SingularMatrix};
use crate::dense::pivot_tolerance;

impl BlockSparseLu {
    /// The 6 × 6 factorisation compiled for AVX2 + FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn factor6_avx2_fma(&mut self, input: &[f64]) -> Result<(), SingularMatrix> {
        self.factor_impl(Avx6, input)
    }

    /// The 6 × 6 solve compiled for AVX2 + FMA over the elimination steps `steps`; with
    /// `RESTRICTED`, only those of `blocks` among them (a separate copy, so that a solve over
    /// consecutive steps pays no test per step).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn solve6_avx2_fma<const RESTRICTED: bool>(
        &mut self,
        x: &mut [f64],
        steps: std::ops::Range<usize>,
        blocks: std::ops::Range<usize>,
    ) {
        let sym = &*self.sym;
        let nbr_all = &sym.nbr[..];
        // Per step of `steps`: its block, the first slot of its storage region, the range of its
        // later neighbours in `nbr_all`, whether it pivoted, its transpositions and reciprocal
        // pivots (one walk over the step range instead of an index check per array and step).
        let (k0, k1) = (steps.start, steps.end);
        let per_step = sym.order[steps.clone()]
            .iter()
            .zip(&sym.region[steps.clone()])
            .zip(sym.nbr_ptr[k0..=k1].windows(2))
            .zip(&self.pivoted[steps])
            .zip(self.ipiv[6 * k0..6 * k1].as_chunks::<6>().0)
            .zip(self.inv_diag[6 * k0..6 * k1].as_chunks::<6>().0)
            .map(|(((((&ok, &r0), w), &piv), ipiv), inv)| (ok, r0, w[0]..w[1], piv, ipiv, inv));
        // The operations of `solve_impl` for b = 6 in the same order, on fixed-size arrays held
        // in registers (no scratch vector, no row exchanges for blocks that did not pivot).
        let values = &self.values[..];
        let block = |s: usize| -> &[f64; 36] {
            values[36 * s..36 * s + 36].try_into().expect("6 x 6 block")
        };
        // Forward substitution, eq. (15).
        for (ok, r0, nbr, piv, ipiv, _) in per_step.clone() {
            if RESTRICTED && !blocks.contains(&ok) {
                continue;
            }
            let nbr = &nbr_all[nbr];
            let m = nbr.len();
            let diag = block(r0);
            let xk: &mut [f64; 6] = (&mut x[6 * ok..6 * ok + 6]).try_into().expect("6-vector");
            if piv {
                for (c, &p) in ipiv.iter().enumerate() {
                    xk.swap(c, p);
                }
            }
            let mut y = *xk;
            for r in 1..6 {
                let mut acc = y[r];
                for c in 0..r {
                    acc = (-diag[6 * r + c]).mul_add(y[c], acc);
                }
                y[r] = acc;
            }
            *xk = y;
            for (a, &i) in nbr.iter().enumerate() {
                let lt = block(r0 + 1 + m + a);
                let xi: &mut [f64; 6] = (&mut x[6 * i..6 * i + 6]).try_into().expect("6-vector");
                avx6::gemv_t_sub(xi, lt, &y);
            }
        }
        // Back substitution, eqs. (16), (17).
        for (ok, r0, nbr, _, _, inv) in per_step.rev() {
            if RESTRICTED && !blocks.contains(&ok) {
                continue;
            }
            let nbr = &nbr_all[nbr];
            let m = nbr.len();
            let mut y: [f64; 6] = x[6 * ok..6 * ok + 6].try_into().expect("6-vector");
            if m > 0 {
                // (Without neighbours it would subtract +0 from every entry: no change.)
                avx6::gemv_rows_sub(&mut y, &values[36 * (r0 + 1)..36 * (r0 + 1 + m)], nbr, x);
            }
            let diag = block(r0);
            for r in (0..6).rev() {
                let mut acc = y[r];
                for c in r + 1..6 {
                    acc = (-diag[6 * r + c]).mul_add(y[c], acc);
                }
                y[r] = acc * inv[r];
            }
            x[6 * ok..6 * ok + 6].copy_from_slice(&y);
        }
    }

    #[inline(always)]
    pub(super) fn factor_impl<D: Dim>(
        &mut self,
        d: D,
        input: &[f64],
    ) -> Result<(), SingularMatrix> {
        let sym = &*self.sym;
        // Slices held in locals (the analysis sits behind an `Arc`).
        let (n_steps, order, region) = (sym.n, &sym.order[..], &sym.region[..]);
        let (nbr_ptr, fill, scatter) = (&sym.nbr_ptr[..], &sym.fill[..], &sym.scatter[..]);
        let (upd_ptr, upd_all) = (&sym.upd_ptr[..], &sym.upd[..]);
        let b = d.get();
        let bb = b * b;
        if bb == 0 {
            return Ok(());
        }
        let values = &mut self.values[..];
        for &s in fill {
            values[s * bb..(s + 1) * bb].fill(0.0);
        }
        // Scatter into the factor storage and, in the same pass, the largest magnitude and a
        // finiteness probe (x·0 is ±0 for finite x and NaN otherwise) over independent lanes.
        let mut max = [0.0f64; 4];
        let mut probe = [0.0f64; 4];
        for (src, &st) in input.chunks_exact(bb).zip(scatter) {
            let (src4, src_rest) = src.as_chunks::<4>();
            for c in src4 {
                for l in 0..4 {
                    let a = c[l].abs();
                    max[l] = if a > max[l] { a } else { max[l] };
                    probe[l] += c[l] * 0.0;
                }
            }
            for (l, &x) in src_rest.iter().enumerate() {
                let a = x.abs();
                max[l] = if a > max[l] { a } else { max[l] };
                probe[l] += x * 0.0;
            }
            let s = st >> 1;
            let dst = &mut values[s * bb..(s + 1) * bb];
            if st & 1 == 0 {
                copy_block(d, dst, src);
            } else {
                copy_transposed(d, dst, src);
            }
        }
        if probe.iter().sum::<f64>() != 0.0 {
            return Err(self.find_non_finite(input));
        }
        let max_abs = max.iter().fold(0.0, |m: f64, &x| m.max(x));
        let tol = pivot_tolerance(n_steps * b, max_abs);
        for k in 0..n_steps {
            let m = nbr_ptr[k + 1] - nbr_ptr[k];
            let (head, rest) = values.split_at_mut(region[k + 1] * bb);
            let reg = &mut head[region[k] * bb..];
            let (diag, panel) = reg.split_at_mut(bb);
            let ipiv = &mut self.ipiv[k * b..(k + 1) * b];
            let inv = &mut self.inv_diag[k * b..(k + 1) * b];
            if let Err((c, pivot)) = d.lu_block(diag, ipiv, inv, tol) {
                let block = order[k];
                return Err(SingularMatrix::ZeroPivot {
                    row: block * b + c,
                    block: Some(block),
                    pivot,
                    tolerance: tol,
                });
            }
            self.pivoted[k] = ipiv.iter().enumerate().any(|(c, &p)| p != c);
            if m == 0 {
                continue;
            }
            let diag = &*diag;
            let ipiv = &*ipiv;
            let inv = &*inv;
            let (upanel, lpanel) = panel.split_at_mut(m * bb);
            for u in upanel.chunks_exact_mut(bb) {
                swap_rows(d, u, ipiv);
                d.unit_lower_solve(diag, u);
            }
            for l in lpanel.chunks_exact_mut(bb) {
                d.upper_transposed_solve(diag, inv, l);
            }
            let upanel = &*upanel;
            let lpanel = &*lpanel;
            let upd = &upd_all[upd_ptr[k]..upd_ptr[k + 1]];
            let off = region[k + 1];
            for (l, targets) in lpanel.chunks_exact(bb).zip(upd.chunks_exact(m)) {
                for (u, &tt) in upanel.chunks_exact(bb).zip(targets) {
                    let t = (tt >> 1) - off;
                    let c = &mut rest[t * bb..(t + 1) * bb];
                    if tt & 1 == 0 {
                        // C ← C - L U with L stored as Lᵀ.
                        d.gemm_tn_sub(c, l, u);
                    } else {
                        // Cᵀ ← Cᵀ - Uᵀ Lᵀ.
                        d.gemm_tn_sub(c, u, l);
                    }
                }
            }
        }
        Ok(())
    }

    /// Locates the first non-finite input entry (error path only).
    fn find_non_finite(&self, input: &[f64]) -> SingularMatrix {
        let sym = &*self.sym;
        let b = sym.b;
        let p = &sym.pattern;
        for bi in 0..sym.n {
            for s in p.row_ptr()[bi]..p.row_ptr()[bi + 1] {
                let bj = p.col_idx()[s];
                for r in 0..b {
                    for c in 0..b {
                        let value = input[s * b * b + r * b + c];
                        if !value.is_finite() {
                            return SingularMatrix::NonFiniteEntry {
                                row: bi * b + r,
                                col: bj * b + c,
                                value,
                            };
                        }
                    }
                }
            }
        }
        unreachable!("find_non_finite called on a finite matrix")
    }

    #[inline(always)]
    pub(super) fn solve_impl<D: Dim, const RESTRICTED: bool>(
        &mut self,
        d: D,
        x: &mut [f64],
        steps: std::ops::Range<usize>,
        blocks: std::ops::Range<usize>,
    ) {
        let sym = &*self.sym;
        // Slices held in locals (the analysis sits behind an `Arc`).
        let (order, region) = (&sym.order[..], &sym.region[..]);
        let (nbr_ptr, nbr_all) = (&sym.nbr_ptr[..], &sym.nbr[..]);
        let (pivoted, ipiv_all, inv_all) = (&self.pivoted[..], &self.ipiv[..], &self.inv_diag[..]);
        let b = d.get();
        let bb = b * b;
        if bb == 0 {
            return;
        }
        let tmp = &mut self.tmp[..b];
        // Forward substitution: y_k = L_k⁻¹ P_k (x_k - Σ L_ki y_i), eq. (15).
        for k in steps.clone() {
            let ok = order[k];
            if RESTRICTED && !blocks.contains(&ok) {
                continue;
            }
            let m = nbr_ptr[k + 1] - nbr_ptr[k];
            let r0 = region[k];
            let diag = &self.values[r0 * bb..(r0 + 1) * bb];
            let xk = &mut x[ok * b..(ok + 1) * b];
            let ipiv = &ipiv_all[k * b..(k + 1) * b];
            if pivoted[k] {
                for (c, &p) in ipiv[..b].iter().enumerate() {
                    xk.swap(c, p);
                }
            }
            for r in 1..b {
                let mut acc = xk[r];
                for c in 0..r {
                    acc = d.nmadd(diag[r * b + c], xk[c], acc);
                }
                xk[r] = acc;
            }
            tmp.copy_from_slice(xk);
            let lpanel = &self.values[(r0 + 1 + m) * bb..(r0 + 1 + 2 * m) * bb];
            let nbr = &nbr_all[nbr_ptr[k]..nbr_ptr[k + 1]];
            for (lt, &i) in lpanel.chunks_exact(bb).zip(nbr) {
                d.gemv_t_sub(&mut x[i * b..(i + 1) * b], lt, tmp);
            }
        }
        // Back substitution: x_k = U_k⁻¹ (y_k - Σ U_kj x_j), eqs. (16), (17).
        for k in steps.rev() {
            let ok = order[k];
            if RESTRICTED && !blocks.contains(&ok) {
                continue;
            }
            let m = nbr_ptr[k + 1] - nbr_ptr[k];
            let r0 = region[k];
            tmp.copy_from_slice(&x[ok * b..(ok + 1) * b]);
            let upanel = &self.values[(r0 + 1) * bb..(r0 + 1 + m) * bb];
            let nbr = &nbr_all[nbr_ptr[k]..nbr_ptr[k + 1]];
            d.gemv_rows_sub(tmp, upanel, nbr, x);
            let diag = &self.values[r0 * bb..(r0 + 1) * bb];
            let inv = &inv_all[k * b..(k + 1) * b];
            for r in (0..b).rev() {
                let mut acc = tmp[r];
                for c in r + 1..b {
                    acc = d.nmadd(diag[r * b + c], tmp[c], acc);
                }
                tmp[r] = acc * inv[r];
            }
            x[ok * b..(ok + 1) * b].copy_from_slice(tmp);
        }
    }
}
