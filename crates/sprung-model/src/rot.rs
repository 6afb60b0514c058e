//! Tiny self-contained 3x3 rotation helpers on plain arrays (row-major `m[row][col]`).
//!
//! Euler convention z-y'-x'' (paper convention alpha_z, alpha_y', alpha_x'', see
//! `reference-suspensions.md` section 1): `R = Rz(a) Ry(b) Rx(c)`; the columns of `R` are the
//! rotated frame's axes in the parent frame.

/// A 3x3 matrix, row-major.
pub type Mat3 = [[f64; 3]; 3];
/// A 3-vector.
pub type Vec3 = [f64; 3];

/// Identity matrix.
pub const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// The mirror matrix S = diag(1, -1, 1) (reflection in the global x-z plane).
pub const MIRROR_S: Mat3 = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]];

/// Matrix product a * b.
pub fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    c
}

/// Transpose.
pub fn transpose(a: &Mat3) -> Mat3 {
    let mut t = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            t[i][j] = a[j][i];
        }
    }
    t
}

/// Matrix-vector product a * v.
pub fn mul_vec(a: &Mat3, v: &Vec3) -> Vec3 {
    [
        a[0][0] * v[0] + a[0][1] * v[1] + a[0][2] * v[2],
        a[1][0] * v[0] + a[1][1] * v[1] + a[1][2] * v[2],
        a[2][0] * v[0] + a[2][1] * v[1] + a[2][2] * v[2],
    ]
}

/// Transposed matrix-vector product a^T * v.
pub fn mul_t_vec(a: &Mat3, v: &Vec3) -> Vec3 {
    [
        a[0][0] * v[0] + a[1][0] * v[1] + a[2][0] * v[2],
        a[0][1] * v[0] + a[1][1] * v[1] + a[2][1] * v[2],
        a[0][2] * v[0] + a[1][2] * v[1] + a[2][2] * v[2],
    ]
}

/// Determinant.
pub fn det(a: &Mat3) -> f64 {
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
        - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
}

/// Cross product.
pub fn cross(a: &Vec3, b: &Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Dot product.
pub fn dot(a: &Vec3, b: &Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Euclidean norm.
pub fn norm(a: &Vec3) -> f64 {
    dot(a, a).sqrt()
}

/// Elementary rotation about x by `c` rad.
pub fn rot_x(c: f64) -> Mat3 {
    let (s, co) = c.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, co, -s], [0.0, s, co]]
}

/// Elementary rotation about y by `b` rad.
pub fn rot_y(b: f64) -> Mat3 {
    let (s, co) = b.sin_cos();
    [[co, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, co]]
}

/// Elementary rotation about z by `a` rad.
pub fn rot_z(a: f64) -> Mat3 {
    let (s, co) = a.sin_cos();
    [[co, -s, 0.0], [s, co, 0.0], [0.0, 0.0, 1.0]]
}

/// R = Rz(a) Ry(b) Rx(c) from angles in radians.
pub fn euler_zyx(angles: &Vec3) -> Mat3 {
    mul(
        &rot_z(angles[0]),
        &mul(&rot_y(angles[1]), &rot_x(angles[2])),
    )
}

/// R = Rz(a) Ry(b) Rx(c) from angles in degrees.
pub fn euler_zyx_deg(angles_deg: &Vec3) -> Mat3 {
    euler_zyx(&angles_deg.map(f64::to_radians))
}

/// Inverse of [`euler_zyx`]: angles (a, b, c) in radians with b in [-pi/2, pi/2].
/// At gimbal lock (|b| = pi/2) c is set to 0.
pub fn matrix_to_euler_zyx(r: &Mat3) -> Vec3 {
    let sb = (-r[2][0]).clamp(-1.0, 1.0);
    let b = sb.asin();
    if (r[2][1].abs() + r[2][2].abs()) < 1e-12 {
        // Gimbal lock: R = Rz(a) Ry(+-pi/2) Rx(c) depends on a -+ c only; take c = 0.
        let a = (-r[0][1]).atan2(r[1][1]);
        [a, b, 0.0]
    } else {
        [r[1][0].atan2(r[0][0]), b, r[2][1].atan2(r[2][2])]
    }
}

/// Mirror a rotation: S R S (stays a proper rotation).
pub fn mirror_matrix(r: &Mat3) -> Mat3 {
    mul(&MIRROR_S, &mul(r, &MIRROR_S))
}

/// Mirror Euler angles exactly: S Rz(a) Ry(b) Rx(c) S = Rz(-a) Ry(b) Rx(-c).
pub fn mirror_euler(e: &Vec3) -> Vec3 {
    [-e[0], e[1], -e[2]]
}

/// Mirror a point / velocity: (x, y, z) -> (x, -y, z).
pub fn mirror_vec(v: &Vec3) -> Vec3 {
    [v[0], -v[1], v[2]]
}

/// Mirror a pseudovector (angular velocity, torque): -S w = (-wx, wy, -wz).
pub fn mirror_pseudo(v: &Vec3) -> Vec3 {
    [-v[0], v[1], -v[2]]
}

/// Largest entry of |A^T A - I|: deviation from orthonormality.
pub fn orthonormality_error(a: &Mat3) -> f64 {
    let ata = mul(&transpose(a), a);
    let mut e: f64 = 0.0;
    for (i, row) in ata.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            let d = if i == j { v - 1.0 } else { *v };
            e = e.max(d.abs());
        }
    }
    e
}

/// Nearest rotation matrix (orthogonal polar factor) of a nearly orthonormal matrix by the
/// Newton–Schulz iteration `A <- A (3 I - A^T A) / 2`, which converges quadratically when
/// `|A^T A - I| < 1`. Matrices already orthonormal to 1e-14 are returned unchanged (so the
/// operation is idempotent bit-for-bit on its own output).
pub fn orthonormalise(a: &Mat3) -> Mat3 {
    let mut m = *a;
    for _ in 0..30 {
        if orthonormality_error(&m) <= 1e-14 {
            break;
        }
        let ata = mul(&transpose(&m), &m);
        let mut k = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                k[i][j] = 0.5 * (if i == j { 3.0 } else { 0.0 } - ata[i][j]);
            }
        }
        m = mul(&m, &k);
    }
    m
}

/// Eigenvalues of a symmetric 3x3 matrix in ascending order (closed-form trigonometric method;
/// only the symmetric part of `a` is used).
pub fn symmetric_eigenvalues(a: &Mat3) -> Vec3 {
    let s = |i: usize, j: usize| 0.5 * (a[i][j] + a[j][i]);
    let p1 = s(0, 1).powi(2) + s(0, 2).powi(2) + s(1, 2).powi(2);
    let q = (s(0, 0) + s(1, 1) + s(2, 2)) / 3.0;
    let p2 = (s(0, 0) - q).powi(2) + (s(1, 1) - q).powi(2) + (s(2, 2) - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    if p == 0.0 || !p.is_finite() {
        return [q, q, q];
    }
    let mut b = [[0.0; 3]; 3];
    for (i, row) in b.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (s(i, j) - if i == j { q } else { 0.0 }) / p;
        }
    }
    let r = (det(&b) / 2.0).clamp(-1.0, 1.0);
    let phi = r.acos() / 3.0;
    let e1 = q + 2.0 * p * phi.cos();
    let e3 = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    let e2 = 3.0 * q - e1 - e3;
    let mut e = [e1, e2, e3];
    e.sort_by(|x, y| x.total_cmp(y));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &Mat3, b: &Mat3, tol: f64) -> bool {
        (0..3).all(|i| (0..3).all(|j| (a[i][j] - b[i][j]).abs() <= tol))
    }

    #[test]
    fn euler_roundtrip_and_order() {
        let e = [0.3, -0.4, 1.1];
        let r = euler_zyx(&e);
        let back = matrix_to_euler_zyx(&r);
        for k in 0..3 {
            assert!((back[k] - e[k]).abs() < 1e-12);
        }
        // Rz(90 deg) maps x to y: first column = (0, 1, 0).
        let rz = euler_zyx_deg(&[90.0, 0.0, 0.0]);
        assert!((rz[1][0] - 1.0).abs() < 1e-15);
        assert!((det(&r) - 1.0).abs() < 1e-14);
    }

    #[test]
    fn mirror_euler_matches_matrix() {
        let e = [0.7, 0.2, -0.9];
        let a = mirror_matrix(&euler_zyx(&e));
        let b = euler_zyx(&mirror_euler(&e));
        assert!(close(&a, &b, 1e-14));
        assert!((det(&a) - 1.0).abs() < 1e-14);
    }

    #[test]
    fn orthonormalise_converges() {
        let mut r = euler_zyx(&[0.1, 0.2, 0.3]);
        r[0][1] += 5e-5;
        r[2][2] -= 8e-5;
        let q = orthonormalise(&r);
        assert!(orthonormality_error(&q) < 1e-15);
        assert!(close(&q, &r, 2e-4));
        assert_eq!(orthonormalise(&q), q);
    }

    #[test]
    fn eigenvalues_of_rotated_diagonal() {
        let r = euler_zyx(&[0.4, -0.3, 0.8]);
        let d = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.5]];
        let i = mul(&r, &mul(&d, &transpose(&r)));
        let e = symmetric_eigenvalues(&i);
        assert!(
            (e[0] - 1.0).abs() < 1e-12 && (e[1] - 2.0).abs() < 1e-12 && (e[2] - 2.5).abs() < 1e-12
        );
        let e = symmetric_eigenvalues(&[[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]]);
        assert_eq!(e, [3.0, 3.0, 3.0]);
    }
}
