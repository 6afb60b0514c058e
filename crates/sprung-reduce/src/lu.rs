//! Dense LU factorisation with partial pivoting on caller-owned storage (no allocation), with
//! solves for A x = b and Aᵀ x = b — the link block K_ll of the macro joint
//! ([`crate::macro_joint`]) is factorised once per Newton iteration and used for both the
//! velocity map S = −K_ll⁻¹ K_lb and the transposed solve of the force transfer Sᵀ f_l.

#![allow(clippy::needless_range_loop)] // index loops read like the textbook algorithm

/// Factorises the row-major n × n matrix `a` in place (L unit lower, U upper) with row
/// permutation `piv`. Returns `false` if a pivot is zero or not finite (singular link block).
pub fn factor(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    for k in 0..n {
        let mut p = k;
        let mut best = a[k * n + k].abs();
        for i in k + 1..n {
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
        let inv = 1.0 / a[k * n + k];
        for i in k + 1..n {
            let l = a[i * n + k] * inv;
            a[i * n + k] = l;
            if l != 0.0 {
                for j in k + 1..n {
                    a[i * n + j] -= l * a[k * n + j];
                }
            }
        }
    }
    true
}

/// Solves A x = b in place with the factors of [`factor`].
pub fn solve(lu: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for i in 0..n {
        let mut s = b[i];
        for j in 0..i {
            s -= lu[i * n + j] * b[j];
        }
        b[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= lu[i * n + j] * b[j];
        }
        b[i] = s / lu[i * n + i];
    }
}

/// Solves Aᵀ x = b in place with the factors of [`factor`] (P A = L U, so Aᵀ = Uᵀ Lᵀ P).
pub fn solve_transpose(lu: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for j in 0..i {
            s -= lu[j * n + i] * b[j];
        }
        b[i] = s / lu[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= lu[j * n + i] * b[j];
        }
        b[i] = s;
    }
    for k in (0..n).rev() {
        b.swap(k, piv[k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_transposed_solves_match_nalgebra() {
        let n = 7;
        let a = nalgebra::DMatrix::from_fn(n, n, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 5.0 + if i == j { 0.5 } else { 0.0 }
        });
        let b = nalgebra::DVector::from_fn(n, |i, _| i as f64 - 2.0);
        let mut lu: Vec<f64> = (0..n * n).map(|k| a[(k / n, k % n)]).collect();
        let mut piv = vec![0; n];
        assert!(factor(&mut lu, n, &mut piv));
        let mut x = b.as_slice().to_vec();
        solve(&lu, n, &piv, &mut x);
        let r = &a * nalgebra::DVector::from_vec(x) - &b;
        assert!(r.norm() < 1e-12, "{r}");
        let mut y = b.as_slice().to_vec();
        solve_transpose(&lu, n, &piv, &mut y);
        let r = a.transpose() * nalgebra::DVector::from_vec(y) - &b;
        assert!(r.norm() < 1e-12, "{r}");
    }
}
