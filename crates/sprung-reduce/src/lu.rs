//! Dense LU factorisation with partial pivoting on caller-owned storage (no allocation), with
//! solves for A x = b and Aᵀ x = b — the link block K_ll of the macro joint
//! ([`crate::macro_joint`]) is factorised once per Newton iteration and used for the Newton step,
//! the velocity map S = −K_ll⁻¹ K_lb and the transposed solve of the force transfer Sᵀ f_l.
//!
//! K_ll is block-sparse (6 × 6 blocks, one per pair of links joined by an element) and the macro
//! joint numbers its links along the chain (reverse Cuthill–McKee), so the matrix is banded. The
//! factorisation skips zero multipliers, ends every row update at the pivot row's last
//! non-zero, and stops its column and row scans at the structural bounds of the link graph
//! ([`Bounds`]); it records the profile of the factors (first non-zero of every row of L, last
//! non-zero of every row of U, exact zeros), and the solves run over that profile only. On a
//! dense matrix this is the textbook algorithm with a few comparisons more.

#![allow(clippy::needless_range_loop)] // index loops read like the textbook algorithm

/// Profile of the factors of [`factor`]: `first[i]` = column of the first non-zero of row i of
/// L (i if none), `last[i]` = column of the last non-zero of row i of U (≥ i).
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub first: Vec<usize>,
    pub last: Vec<usize>,
}

impl Profile {
    /// Grows the profile to n rows (never shrinks; use the first n entries).
    pub fn fit(&mut self, n: usize) {
        if self.first.len() < n {
            self.first.resize(n, 0);
            self.last.resize(n, 0);
        }
    }
}

/// Structural bounds of a matrix for [`factor`]: `last_row[k]` = the last row that can hold a
/// non-zero in column k, `last_col[k]` = the last column that can hold a non-zero in the rows up to
/// `last_row[k]`, both non-decreasing in k. The pivot search, the elimination and the scan for
/// the pivot row's last non-zero stop there instead of at n − 1; the factors are the same (the
/// entries skipped are exact zeros, see [`Bounds::of_blocks`]).
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    pub last_row: Vec<usize>,
    pub last_col: Vec<usize>,
}

impl Bounds {
    /// No structure: every row and column may hold non-zeros.
    pub fn dense(n: usize) -> Self {
        Self {
            last_row: vec![n - 1; n],
            last_col: vec![n - 1; n],
        }
    }

    /// The bounds of a block matrix with `first[i]` ≤ i the first block column and `last[i]` ≥ i
    /// the last block column that can be non-zero in block row i (blocks of `size`). Why they
    /// hold through the elimination with partial pivoting: a row below `last_row[k]` has its
    /// first non-zero right of column k; the elimination of step j only changes rows with a
    /// non-zero in column j (≤ `last_row[j]`) and only right of column j, and a swap at step j
    /// exchanges rows j and p ≤ `last_row[j]`; so the rows below `last_row[k]` are untouched at
    /// step k, and the fill of the rows above stays left of the pivot rows' bounds.
    pub fn of_blocks(first: &[usize], last: &[usize], size: usize) -> Self {
        let nblk = first.len();
        let n = nblk * size;
        let mut last_row = vec![0; n];
        let mut last_col = vec![0; n];
        let (mut lr, mut lc) = (0, 0);
        for kb in 0..nblk {
            // Block rows whose first block column is at most kb.
            for (i, &f) in first.iter().enumerate() {
                if f <= kb {
                    lr = lr.max(i);
                }
            }
            lr = lr.max(kb);
            for &l in &last[..=lr] {
                lc = lc.max(l);
            }
            for k in kb * size..(kb + 1) * size {
                last_row[k] = (lr + 1) * size - 1;
                last_col[k] = (lc + 1) * size - 1;
            }
        }
        Self { last_row, last_col }
    }
}

/// Factorises the row-major n × n matrix `a` in place (L unit lower, U upper) with row
/// permutation `piv` and records the factors' profile in `prof` (sized ≥ n); `bounds` (n
/// entries) limit the work to the rows and columns that can be non-zero. Returns `false` if
/// a pivot is zero or not finite (singular link block).
pub fn factor(
    a: &mut [f64],
    n: usize,
    piv: &mut [usize],
    prof: &mut Profile,
    bounds: &Bounds,
) -> bool {
    for k in 0..n {
        let (last_row, last_col) = (bounds.last_row[k], bounds.last_col[k]);
        let mut p = k;
        let mut best = a[k * n + k].abs();
        for i in k + 1..last_row + 1 {
            let v = a[i * n + k].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv[k] = p;
        if best == 0.0 || !best.is_finite() {
            return false;
        }
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
        }
        // The pivot row's last non-zero bounds every update of this step.
        let mut end = last_col;
        while end > k && a[k * n + end] == 0.0 {
            end -= 1;
        }
        prof.last[k] = end;
        let inv = 1.0 / a[k * n + k];
        for i in k + 1..last_row + 1 {
            let l = a[i * n + k] * inv;
            a[i * n + k] = l;
            if l != 0.0 {
                let (top, bottom) = a.split_at_mut(i * n);
                let src = &top[k * n + k + 1..k * n + end + 1];
                for (d, s) in bottom[k + 1..end + 1].iter_mut().zip(src) {
                    *d -= l * s;
                }
            }
        }
    }
    // Rows of L after all swaps (a swap at step k moves the multipliers of earlier columns).
    for i in 0..n {
        let row = &a[i * n..i * n + i];
        prof.first[i] = row.iter().position(|&v| v != 0.0).unwrap_or(i);
    }
    true
}

/// Solves A x = b in place with the factors of [`factor`].
pub fn solve(lu: &[f64], n: usize, piv: &[usize], prof: &Profile, b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for i in 0..n {
        let f = prof.first[i];
        let s: f64 = lu[i * n + f..i * n + i]
            .iter()
            .zip(&b[f..i])
            .map(|(l, x)| l * x)
            .sum();
        b[i] -= s;
    }
    for i in (0..n).rev() {
        let e = prof.last[i];
        let s: f64 = lu[i * n + i + 1..i * n + e + 1]
            .iter()
            .zip(&b[i + 1..e + 1])
            .map(|(u, x)| u * x)
            .sum();
        b[i] = (b[i] - s) / lu[i * n + i];
    }
}

/// Solves A X = B in place for the m columns of the row-major n × m matrix `b` (one pass over
/// the factors, row operations of length m: the velocity map S = −K_ll⁻¹ K_lb of all boundary
/// coordinates at once).
pub fn solve_many(lu: &[f64], n: usize, piv: &[usize], prof: &Profile, b: &mut [f64], m: usize) {
    for k in 0..n {
        let p = piv[k];
        if p != k {
            for j in 0..m {
                b.swap(k * m + j, p * m + j);
            }
        }
    }
    for i in 0..n {
        let (done, rest) = b.split_at_mut(i * m);
        let bi = &mut rest[..m];
        for j in prof.first[i]..i {
            let l = lu[i * n + j];
            if l != 0.0 {
                for (x, y) in bi.iter_mut().zip(&done[j * m..(j + 1) * m]) {
                    *x -= l * y;
                }
            }
        }
    }
    for i in (0..n).rev() {
        let (head, tail) = b.split_at_mut((i + 1) * m);
        let bi = &mut head[i * m..];
        for j in i + 1..prof.last[i] + 1 {
            let u = lu[i * n + j];
            if u != 0.0 {
                for (x, y) in bi.iter_mut().zip(&tail[(j - i - 1) * m..(j - i) * m]) {
                    *x -= u * y;
                }
            }
        }
        let inv = 1.0 / lu[i * n + i];
        bi.iter_mut().for_each(|x| *x *= inv);
    }
}

/// Solves Aᵀ x = b in place with the factors of [`factor`] (P A = L U, so Aᵀ = Uᵀ Lᵀ P).
pub fn solve_transpose(lu: &[f64], n: usize, piv: &[usize], prof: &Profile, b: &mut [f64]) {
    // Uᵀ y = b, column-oriented over the rows of U.
    for i in 0..n {
        let yi = b[i] / lu[i * n + i];
        b[i] = yi;
        if yi != 0.0 {
            let e = prof.last[i];
            for (bj, u) in b[i + 1..e + 1]
                .iter_mut()
                .zip(&lu[i * n + i + 1..i * n + e + 1])
            {
                *bj -= u * yi;
            }
        }
    }
    // Lᵀ z = y, over the rows of L from the bottom.
    for i in (0..n).rev() {
        let zi = b[i];
        if zi != 0.0 {
            let f = prof.first[i];
            for (bj, l) in b[f..i].iter_mut().zip(&lu[i * n + f..i * n + i]) {
                *bj -= l * zi;
            }
        }
    }
    for k in (0..n).rev() {
        b.swap(k, piv[k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &nalgebra::DMatrix<f64>, bounds: &Bounds) {
        let n = a.nrows();
        let b = nalgebra::DVector::from_fn(n, |i, _| i as f64 - 2.0);
        let mut lu: Vec<f64> = (0..n * n).map(|k| a[(k / n, k % n)]).collect();
        let mut piv = vec![0; n];
        let mut prof = Profile::default();
        prof.fit(n);
        assert!(factor(&mut lu, n, &mut piv, &mut prof, bounds));
        let mut x = b.as_slice().to_vec();
        solve(&lu, n, &piv, &prof, &mut x);
        let r = a * nalgebra::DVector::from_vec(x) - &b;
        assert!(r.norm() < 1e-12, "{r}");
        // Three right-hand sides at once against one at a time.
        let m = 3;
        let mut many: Vec<f64> = (0..n * m)
            .map(|k| (k % 5) as f64 - 2.0 + k as f64 * 0.1)
            .collect();
        let cols: Vec<Vec<f64>> = (0..m)
            .map(|j| (0..n).map(|i| many[i * m + j]).collect())
            .collect();
        solve_many(&lu, n, &piv, &prof, &mut many, m);
        for (j, col) in cols.iter().enumerate() {
            let mut x = col.clone();
            solve(&lu, n, &piv, &prof, &mut x);
            for i in 0..n {
                assert!((x[i] - many[i * m + j]).abs() < 1e-12 * (1.0 + x[i].abs()));
            }
        }
        let mut y = b.as_slice().to_vec();
        solve_transpose(&lu, n, &piv, &prof, &mut y);
        let r = a.transpose() * nalgebra::DVector::from_vec(y) - &b;
        assert!(r.norm() < 1e-12, "{r}");
    }

    #[test]
    fn solves_and_transposed_solves_match_nalgebra() {
        let n = 7;
        let a = nalgebra::DMatrix::from_fn(n, n, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 5.0 + if i == j { 0.5 } else { 0.0 }
        });
        check(&a, &Bounds::dense(n));
    }

    /// A banded matrix whose pivoting swaps rows inside the band (the profile then grows):
    /// the profile-limited solves must still be exact.
    #[test]
    fn banded_matrix_with_pivoting() {
        let n = 12;
        let a = nalgebra::DMatrix::from_fn(n, n, |i, j| {
            let d = i.abs_diff(j);
            if d > 3 {
                0.0
            } else if i == j {
                0.1 + (i % 3) as f64
            } else {
                ((i * 5 + j * 3) % 7) as f64 - 3.0
            }
        });
        check(&a, &Bounds::dense(n));
        // The band as structural bounds: the same factors to the bit, and the solves exact.
        let first: Vec<usize> = (0..n).map(|i| i.saturating_sub(3)).collect();
        let last: Vec<usize> = (0..n).map(|i| (i + 3).min(n - 1)).collect();
        let banded = Bounds::of_blocks(&first, &last, 1);
        check(&a, &banded);
        let factors = |bounds: &Bounds| {
            let mut lu: Vec<f64> = (0..n * n).map(|k| a[(k / n, k % n)]).collect();
            let (mut piv, mut prof) = (vec![0; n], Profile::default());
            prof.fit(n);
            assert!(factor(&mut lu, n, &mut piv, &mut prof, bounds));
            (lu, piv, prof.first, prof.last)
        };
        assert_eq!(factors(&Bounds::dense(n)), factors(&banded));
    }
}
