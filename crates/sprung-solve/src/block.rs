//! Block-sparse square matrices with dense `b × b` blocks (6 × 6 body blocks for multibody models).
//!
//! The sparsity pattern follows the body-coupling graph of a compiled model (source document 000,
//! section 3, Bild 3): block (i, j) exists when bodies i and j are coupled by a force element, and
//! every diagonal block exists. The pattern is symmetric and stored as block CSR with sorted column
//! indices; values are stored per block in row-major order. The pattern is computed once; the
//! values are overwritten in place on every linearisation, so assembly never allocates.

use std::sync::Arc;

/// Symmetric block sparsity pattern in block-CSR form (diagonal blocks always present).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPattern {
    n_blocks: usize,
    block_size: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
}

impl BlockPattern {
    /// Builds the pattern of an `n_blocks × n_blocks` block matrix with `block_size × block_size`
    /// blocks from a list of coupled block pairs. Pairs may repeat and appear in either order;
    /// the pattern is symmetrised and always contains the diagonal. Pairs out of range panic
    /// (they are a programming error in the caller, never user input).
    pub fn from_couplings(n_blocks: usize, block_size: usize, pairs: &[(usize, usize)]) -> Self {
        let mut rows: Vec<Vec<usize>> = (0..n_blocks).map(|i| vec![i]).collect();
        for &(i, j) in pairs {
            assert!(
                i < n_blocks && j < n_blocks,
                "block pair ({i}, {j}) out of range"
            );
            rows[i].push(j);
            rows[j].push(i);
        }
        let mut row_ptr = Vec::with_capacity(n_blocks + 1);
        let mut col_idx = Vec::new();
        row_ptr.push(0);
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        Self {
            n_blocks,
            block_size,
            row_ptr,
            col_idx,
        }
    }

    /// Number of block rows (= block columns).
    #[inline]
    pub fn n_blocks(&self) -> usize {
        self.n_blocks
    }

    /// Edge length of one block.
    #[inline]
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Scalar dimension `n_blocks * block_size`.
    #[inline]
    pub fn dim(&self) -> usize {
        self.n_blocks * self.block_size
    }

    /// Number of stored blocks.
    #[inline]
    pub fn n_stored(&self) -> usize {
        self.col_idx.len()
    }

    /// Block-CSR row pointers (length `n_blocks + 1`).
    #[inline]
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// Block-CSR column indices, sorted within each row.
    #[inline]
    pub fn col_idx(&self) -> &[usize] {
        &self.col_idx
    }

    /// Column indices of the stored blocks of block row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[usize] {
        &self.col_idx[self.row_ptr[i]..self.row_ptr[i + 1]]
    }

    /// Storage slot of block (i, j), or `None` if the block is structurally zero.
    #[inline]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let row = self.row(i);
        row.binary_search(&j).ok().map(|k| self.row_ptr[i] + k)
    }
}

/// A block-sparse matrix: a shared pattern plus one dense row-major block per stored slot.
#[derive(Debug, Clone)]
pub struct BlockMatrix {
    pattern: Arc<BlockPattern>,
    values: Vec<f64>,
}

impl BlockMatrix {
    /// A zero matrix with the given pattern.
    pub fn zeros(pattern: Arc<BlockPattern>) -> Self {
        let len = pattern.n_stored() * pattern.block_size * pattern.block_size;
        Self {
            pattern,
            values: vec![0.0; len],
        }
    }

    /// The sparsity pattern.
    #[inline]
    pub fn pattern(&self) -> &Arc<BlockPattern> {
        &self.pattern
    }

    /// All block values, slot after slot, each block row-major.
    #[inline]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Mutable access to all block values.
    #[inline]
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Sets every stored entry to zero (keeps the pattern).
    pub fn fill_zero(&mut self) {
        self.values.fill(0.0);
    }

    /// The row-major block stored in `slot`.
    #[inline]
    pub fn block(&self, slot: usize) -> &[f64] {
        let bb = self.pattern.block_size * self.pattern.block_size;
        &self.values[slot * bb..(slot + 1) * bb]
    }

    /// Mutable row-major block stored in `slot`.
    #[inline]
    pub fn block_mut(&mut self, slot: usize) -> &mut [f64] {
        let bb = self.pattern.block_size * self.pattern.block_size;
        &mut self.values[slot * bb..(slot + 1) * bb]
    }

    /// Entry (r, c) in scalar indices (zero if structurally absent).
    pub fn get(&self, r: usize, c: usize) -> f64 {
        let b = self.pattern.block_size;
        match self.pattern.slot(r / b, c / b) {
            Some(s) => self.block(s)[(r % b) * b + c % b],
            None => 0.0,
        }
    }

    /// `y = alpha * A x + beta * y`.
    pub fn gemv(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
        let b = self.pattern.block_size;
        debug_assert_eq!(x.len(), self.pattern.dim());
        debug_assert_eq!(y.len(), self.pattern.dim());
        for i in 0..self.pattern.n_blocks {
            for r in 0..b {
                y[i * b + r] *= beta;
            }
            for s in self.pattern.row_ptr[i]..self.pattern.row_ptr[i + 1] {
                let j = self.pattern.col_idx[s];
                let blk = self.block(s);
                for r in 0..b {
                    let mut acc = 0.0;
                    for c in 0..b {
                        acc += blk[r * b + c] * x[j * b + c];
                    }
                    y[i * b + r] += alpha * acc;
                }
            }
        }
    }

    /// Writes `alpha * self` (plus `beta` on the scalar diagonal) into `out`, which must share the
    /// pattern: `out = alpha * self + beta * I`. Used to form `I - hγ J_v - (hγ)² J_r K` in place.
    pub fn scaled_plus_identity_into(&self, alpha: f64, beta: f64, out: &mut BlockMatrix) {
        debug_assert!(Arc::ptr_eq(&self.pattern, &out.pattern) || *self.pattern == *out.pattern);
        for (o, v) in out.values.iter_mut().zip(&self.values) {
            *o = alpha * v;
        }
        out.add_identity(beta);
    }

    /// Writes `alpha * self + delta * I + beta * other` into `out` (all three share the pattern)
    /// in one pass over the stored blocks: the iteration matrix `I - hγ J_v - (hγ)² J_r K` of
    /// document 000, eq. 11, with `self = J_v`, `other = J_r K`. Every entry is rounded exactly as
    /// by [`BlockMatrix::scaled_plus_identity_into`] followed by [`BlockMatrix::axpy`]
    /// (`(alpha v + delta δ_rc) + beta w`), without writing `out` twice.
    ///
    /// # Panics
    /// If the value arrays of the three matrices differ in length (different patterns).
    pub fn combination_plus_identity_into(
        &self,
        alpha: f64,
        other: &BlockMatrix,
        beta: f64,
        delta: f64,
        out: &mut BlockMatrix,
    ) {
        debug_assert!(Arc::ptr_eq(&self.pattern, &out.pattern) || *self.pattern == *out.pattern);
        debug_assert!(
            Arc::ptr_eq(&self.pattern, &other.pattern) || *self.pattern == *other.pattern
        );
        assert!(
            self.values.len() == out.values.len() && self.values.len() == other.values.len(),
            "combination_plus_identity_into: the matrices have different patterns"
        );
        // One flat (vectorisable) pass for all entries, then the scalar diagonals again with
        // the identity term in its place.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected at run time.
            unsafe { scaled_sum_avx2(alpha, &self.values, beta, &other.values, &mut out.values) };
        } else {
            scaled_sum(alpha, &self.values, beta, &other.values, &mut out.values);
        }
        #[cfg(not(target_arch = "x86_64"))]
        scaled_sum(alpha, &self.values, beta, &other.values, &mut out.values);
        let p = &*self.pattern;
        let b = p.block_size;
        for i in 0..p.n_blocks {
            let row = p.row_ptr[i]..p.row_ptr[i + 1];
            let Some(s) = row.clone().find(|&s| p.col_idx[s] == i) else {
                continue;
            };
            for r in 0..b {
                let k = s * b * b + r * b + r;
                out.values[k] = (alpha * self.values[k] + delta) + beta * other.values[k];
            }
        }
    }

    /// `self += alpha * other` (same pattern).
    pub fn axpy(&mut self, alpha: f64, other: &BlockMatrix) {
        debug_assert_eq!(self.values.len(), other.values.len());
        for (o, v) in self.values.iter_mut().zip(&other.values) {
            *o += alpha * v;
        }
    }

    /// Adds `beta` to every scalar diagonal entry.
    pub fn add_identity(&mut self, beta: f64) {
        let b = self.pattern.block_size;
        for i in 0..self.pattern.n_blocks {
            let s = self
                .pattern
                .slot(i, i)
                .expect("diagonal block always present");
            let blk = self.block_mut(s);
            for r in 0..b {
                blk[r * b + r] += beta;
            }
        }
    }

    /// Dense copy, row-major `dim × dim` (for tests, the dense LU path and eigen-analysis).
    pub fn to_dense_row_major(&self) -> Vec<f64> {
        let n = self.pattern.dim();
        let b = self.pattern.block_size;
        let mut d = vec![0.0; n * n];
        for i in 0..self.pattern.n_blocks {
            for s in self.pattern.row_ptr[i]..self.pattern.row_ptr[i + 1] {
                let j = self.pattern.col_idx[s];
                let blk = self.block(s);
                for r in 0..b {
                    for c in 0..b {
                        d[(i * b + r) * n + j * b + c] = blk[r * b + c];
                    }
                }
            }
        }
        d
    }
}

/// `out = alpha v + beta w` entry by entry (separate multiplies and add, no fused rounding).
#[inline(always)]
fn scaled_sum(alpha: f64, v: &[f64], beta: f64, w: &[f64], out: &mut [f64]) {
    for ((o, v), w) in out.iter_mut().zip(v).zip(w) {
        *o = alpha * v + beta * w;
    }
}

/// [`scaled_sum`] compiled for 4-wide AVX2 vectors (same rounding: Rust never contracts to FMA).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scaled_sum_avx2(alpha: f64, v: &[f64], beta: f64, w: &[f64], out: &mut [f64]) {
    scaled_sum(alpha, v, beta, w, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_symmetric_sorted_with_diagonal() {
        let p = BlockPattern::from_couplings(4, 2, &[(0, 2), (2, 0), (3, 1)]);
        assert_eq!(p.row(0), &[0, 2]);
        assert_eq!(p.row(1), &[1, 3]);
        assert_eq!(p.row(2), &[0, 2]);
        assert_eq!(p.row(3), &[1, 3]);
        assert_eq!(p.slot(0, 1), None);
        assert!(p.slot(2, 0).is_some());
    }

    #[test]
    fn combination_matches_two_pass_form_bit_for_bit() {
        let p = Arc::new(BlockPattern::from_couplings(
            4,
            3,
            &[(0, 1), (1, 3), (2, 0)],
        ));
        let mut jv = BlockMatrix::zeros(p.clone());
        let mut jr = BlockMatrix::zeros(p.clone());
        for (k, v) in jv.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 0.7).sin() * 1e3;
        }
        for (k, v) in jr.values_mut().iter_mut().enumerate() {
            *v = (k as f64 * 1.3).cos() * 1e6;
        }
        let (alpha, beta) = (-2.9e-4, -8.4e-8);
        let mut two = BlockMatrix::zeros(p.clone());
        jv.scaled_plus_identity_into(alpha, 1.0, &mut two);
        two.axpy(beta, &jr);
        let mut one = BlockMatrix::zeros(p);
        one.values_mut().fill(f64::NAN);
        jv.combination_plus_identity_into(alpha, &jr, beta, 1.0, &mut one);
        for (a, b) in one.values().iter().zip(two.values()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn gemv_matches_dense_product() {
        let p = Arc::new(BlockPattern::from_couplings(3, 2, &[(0, 1), (1, 2)]));
        let mut a = BlockMatrix::zeros(p.clone());
        for (k, v) in a.values_mut().iter_mut().enumerate() {
            *v = (k as f64).sin();
        }
        let x: Vec<f64> = (0..6).map(|i| 1.0 + i as f64).collect();
        let mut y = vec![1.0; 6];
        a.gemv(2.0, &x, 0.5, &mut y);
        let d = a.to_dense_row_major();
        for r in 0..6 {
            let expect: f64 = 0.5 + 2.0 * (0..6).map(|c| d[r * 6 + c] * x[c]).sum::<f64>();
            assert!((y[r] - expect).abs() < 1e-12);
        }
        assert_eq!(a.get(0, 5), 0.0);
    }
}
