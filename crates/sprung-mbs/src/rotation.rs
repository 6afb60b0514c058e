//! Rotation helpers: unit quaternions for body orientation, the SO(3) logarithm used as bushing
//! rotational deflection, its inverse left Jacobian, and the swing-twist split for free-spin axes.
//!
//! Conventions (see `reference-suspensions.md`, section 1): a rotation matrix R maps body (or marker)
//! coordinates to global coordinates. A *global* perturbation δφ changes R to (I + \[δφ\]×) R; a *body*
//! perturbation δθ changes R to R (I + \[δθ\]×), so δφ = R δθ. Quaternions q = (w, x, y, z) follow the
//! Hamilton convention; the orientation is q / |q| so that the normalisation direction has no effect
//! (this keeps the analytic J_r consistent with finite differences in raw quaternion components).

use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};

/// Skew-symmetric cross-product matrix: `skew(a) * b == a × b`.
#[inline(always)]
pub fn skew(a: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// Rotation matrix of the (not necessarily unit) quaternion `[w, x, y, z]`: the rotation of
/// q/|q|, from the homogeneous form R = I + s (w \[v\]× + \[v\]×²) with s = 2/|q|² (one division, no
/// square root; the stage states of an integrator are unit quaternions only to first order).
#[inline(always)]
pub fn quat_to_matrix(q: &[f64]) -> Matrix3<f64> {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    let s = 2.0 / (w * w + x * x + y * y + z * z);
    let (xx, yy, zz) = (s * x * x, s * y * y, s * z * z);
    let (xy, xz, yz) = (s * x * y, s * x * z, s * y * z);
    let (wx, wy, wz) = (s * w * x, s * w * y, s * w * z);
    Matrix3::new(
        1.0 - (yy + zz),
        xy - wz,
        xz + wy,
        xy + wz,
        1.0 - (xx + zz),
        yz - wx,
        xz - wy,
        yz + wx,
        1.0 - (xx + yy),
    )
}

/// Quaternion `[w, x, y, z]` of a proper rotation matrix.
pub fn matrix_to_quat(r: &Matrix3<f64>) -> [f64; 4] {
    let rot = nalgebra::Rotation3::from_matrix_unchecked(*r);
    let q = UnitQuaternion::from_rotation_matrix(&rot);
    [q.w, q.i, q.j, q.k]
}

/// Quaternion kinematics `q̇ = ½ q ⊗ (0, ω_body)`: writes q̇ for body angular velocity `w`.
#[inline]
pub fn quat_rate(q: &[f64], w: &Vector3<f64>, out: &mut [f64]) {
    let (q0, q1, q2, q3) = (q[0], q[1], q[2], q[3]);
    out[0] = 0.5 * (-q1 * w.x - q2 * w.y - q3 * w.z);
    out[1] = 0.5 * (q0 * w.x + q2 * w.z - q3 * w.y);
    out[2] = 0.5 * (q0 * w.y + q3 * w.x - q1 * w.z);
    out[3] = 0.5 * (q0 * w.z + q1 * w.y - q2 * w.x);
}

/// Body-frame rotation increment δθ = 2 Ξ(q)ᵀ δq of a quaternion increment (unit `q`): the left
/// inverse of the quaternion kinematics, so that J_r = (J_r K) · L with L = blockdiag(I, 2Ξᵀ).
#[inline]
pub fn quat_increment_to_body_rotation(q: &[f64], dq: &[f64]) -> Vector3<f64> {
    let n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    let (q0, q1, q2, q3) = (q[0], q[1], q[2], q[3]);
    let s = 2.0 / n2;
    Vector3::new(
        s * (-q1 * dq[0] + q0 * dq[1] + q3 * dq[2] - q2 * dq[3]),
        s * (-q2 * dq[0] - q3 * dq[1] + q0 * dq[2] + q1 * dq[3]),
        s * (-q3 * dq[0] + q2 * dq[1] - q1 * dq[2] + q0 * dq[3]),
    )
}

/// Applies a body-frame rotation increment: q ← q ⊗ exp(δθ / 2), then normalises.
pub fn quat_apply_body_increment(q: &mut [f64], dtheta: &Vector3<f64>) {
    let uq = UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]));
    let r = uq * UnitQuaternion::from_scaled_axis(*dtheta);
    q[0] = r.w;
    q[1] = r.i;
    q[2] = r.j;
    q[3] = r.k;
}

/// Normalises a quaternion in place (no-op for a zero quaternion, which cannot arise from valid input).
#[inline]
pub fn quat_normalise(q: &mut [f64]) {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n > 0.0 {
        let inv = 1.0 / n;
        for c in q.iter_mut().take(4) {
            *c *= inv;
        }
    }
}

/// Rotation vector θ = log(R) (angle in [0, π]) of a proper rotation matrix.
#[inline(always)]
pub fn log_so3(r: &Matrix3<f64>) -> Vector3<f64> {
    let rot = nalgebra::Rotation3::from_matrix_unchecked(*r);
    UnitQuaternion::from_rotation_matrix(&rot).scaled_axis()
}

/// Inverse of the left Jacobian of SO(3): for θ = log(R) and a left perturbation
/// R ← (I + \[ε\]×) R, δθ = J_l⁻¹(θ) ε.
#[inline(always)]
pub fn inv_left_jacobian(theta: &Vector3<f64>) -> Matrix3<f64> {
    let a = theta.norm();
    let s = skew(theta);
    let coef = if a < 1e-4 {
        // Series of 1/a² - (1 + cos a) / (2 a sin a) = 1/12 + a²/720 + ...
        1.0 / 12.0 + a * a / 720.0
    } else {
        1.0 / (a * a) - (1.0 + a.cos()) / (2.0 * a * a.sin())
    };
    Matrix3::identity() - 0.5 * s + coef * s * s
}

/// Swing part of the swing-twist split of the relative rotation `r_rel` about the unit axis `e`
/// (twist about `e` is free): with a = R e, θ_sw = atan2(|e × a|, e · a) (e × a)/|e × a|.
/// Returns θ_sw and its derivative with respect to a left perturbation ε of `r_rel`.
#[inline(always)]
pub fn swing_vector(r_rel: &Matrix3<f64>, e: &Vector3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
    swing_of_image(&(r_rel * e), e)
}

/// [`swing_vector`] from the image a = R e of the spin axis (what the four-bushing lanes of
/// [`crate::bushing::BushingPack`] compute; they use this lane by lane beyond their series).
#[inline(always)]
pub fn swing_of_image(a: &Vector3<f64>, e: &Vector3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
    let a = *a;
    let s = e.cross(&a);
    let sn = s.norm();
    let c = e.dot(&a);
    let phi = sn.atan2(c);
    // g = φ / sn and its partials with respect to sn and c (treated as independent).
    let rr = sn * sn + c * c;
    let (g, dg_dsn) = if sn < 1e-6 {
        // φ ≈ sn / c for small swing: g ≈ 1/c, dg/dsn ≈ -2 sn / (3 c³) (→ 0).
        (if c > 0.0 { 1.0 / c } else { 0.0 }, -2.0 * sn / 3.0)
    } else {
        (phi / sn, (c * sn / rr - phi) / (sn * sn))
    };
    let dg_dc = -1.0 / rr;
    let theta = g * s;
    // ds/da = [e]×, dsn/da = (s/sn)ᵀ [e]×, dc/da = eᵀ
    let es = skew(e);
    let dsn_da = if sn > 0.0 {
        (s / sn).transpose() * es
    } else {
        nalgebra::RowVector3::zeros()
    };
    let dg_da = dg_dsn * dsn_da + dg_dc * e.transpose();
    let dtheta_da = g * es + s * dg_da;
    // da/dε = -[a]×
    (theta, dtheta_da * (-skew(&a)))
}

/// Angle a = atan2(sn, c) ∈ [0, π] of a rotation from sn = sin a ≥ 0 and c = cos a (a unit pair up
/// to round-off, e.g. from an orthonormal rotation matrix), and the ratio a / sn (1 in the limit).
///
/// Small angles — all that elastic bushings see — avoid the library `atan2`: with the half-angle
/// tangent t = sn / (1 + c) = tan(a/2), a = 2 t S(t²) and a / sin a = (1 + t²) S(t²), where
/// S(x) = atan(√x)/√x = Σ (−x)^k / (2k + 1). For t ≤ 1/8 (a ≤ 0.2487 rad) the ten terms k = 0…9
/// leave a truncation error below 8⁻²⁰/21 < 2⁻⁶⁴ relative, i.e. the result is correct to round-off
/// (unit test against `atan2`); the sum is evaluated by Estrin's scheme (short dependency chain).
/// Larger angles use `atan2`.
#[inline(always)]
pub fn angle_and_ratio(sn: f64, c: f64) -> (f64, f64) {
    if c > 0.0 && sn <= 0.125 * (1.0 + c) {
        let t = sn / (1.0 + c);
        let x = t * t;
        let s = atan_series(x);
        (2.0 * t * s, (1.0 + x) * s)
    } else {
        let a = sn.atan2(c);
        (a, if sn > 0.0 { a / sn } else { 0.0 })
    }
}

/// Coefficients of arcsin(s)/s = Σ_k (2k)! / (4^k (k!)² (2k + 1)) u^k, u = s², k = 0…6 (used by
/// [`small_angle_ratio`] and by the four-bushing lanes of [`crate::bushing::BushingPack`]).
pub const ASIN_RATIO_SERIES: [f64; 7] = [
    1.0,
    1.0 / 6.0,
    3.0 / 40.0,
    5.0 / 112.0,
    35.0 / 1152.0,
    63.0 / 2816.0,
    231.0 / 13312.0,
];

/// Largest u = sin²a for the seven-term [`ASIN_RATIO_SERIES`] (a ≤ 0.0626 rad).
pub const SERIES_U_MAX: f64 = 1.0 / 256.0;

/// Largest u = sin²a for its first three terms (a ≲ 0.001 rad).
pub const SHORT_SERIES_U_MAX: f64 = 1.0 / 1_048_576.0;

/// The ratio a / sin a of [`angle_and_ratio`] from u = sin²a and cos a, without a square root:
/// the rotation vector needs only this ratio (θ = ratio · vee(R − Rᵀ)/2), so the force evaluation
/// saves the latency of the square root and, for the smallest angles, of a division.
/// * u ≤ 1/256 (a ≤ 0.0626 rad, cos a > 0): arcsin(s)/s = Σ_k (2k)! / (4^k (k!)² (2k + 1)) u^k,
///   seven terms k = 0…6 (truncation below 0.014 · 256⁻⁷ < 10⁻¹⁹), three for u ≤ 2⁻²⁰
///   (a ≲ 0.001 rad; truncation below 0.045 · 2⁻⁶⁰ < 10⁻¹⁹);
/// * t = tan(a/2) ≤ 1/8 (as in [`angle_and_ratio`]): t² = u / (1 + cos a)², ratio (1 + t²) S(t²);
/// * `None` for larger angles.
#[inline(always)]
pub fn small_angle_ratio(sn2: f64, c: f64) -> Option<f64> {
    if c > 0.0 && sn2 <= SERIES_U_MAX {
        let s = &ASIN_RATIO_SERIES;
        let u = sn2;
        let u2 = u * u;
        let p01 = s[0] + u * s[1];
        if u <= SHORT_SERIES_U_MAX {
            // a ≲ 0.001 rad, typical of a loaded bushing: three terms (next 5/112 u³ < 10⁻¹⁹).
            return Some(p01 + u2 * s[2]);
        }
        let u4 = u2 * u2;
        let p23 = s[2] + u * s[3];
        let p45 = s[4] + u * s[5];
        return Some((p01 + u2 * p23) + u4 * (p45 + u2 * s[6]));
    }
    let one_c = 1.0 + c;
    let one_c2 = one_c * one_c;
    if c > 0.0 && sn2 <= (1.0 / 64.0) * one_c2 {
        let x = sn2 / one_c2;
        Some((1.0 + x) * atan_series(x))
    } else {
        None
    }
}

/// S(x) = atan(√x)/√x = Σ_{k=0..9} (−x)^k / (2k + 1) for 0 ≤ x ≤ 1/64 (truncation below 2⁻⁶⁴
/// relative), by Estrin's scheme.
#[inline(always)]
fn atan_series(x: f64) -> f64 {
    let (x2, x4) = (x * x, x * x * x * x);
    let x8 = x4 * x4;
    let p01 = 1.0 - x * (1.0 / 3.0);
    let p23 = 1.0 / 5.0 - x * (1.0 / 7.0);
    let p45 = 1.0 / 9.0 - x * (1.0 / 11.0);
    let p67 = 1.0 / 13.0 - x * (1.0 / 15.0);
    let p89 = 1.0 / 17.0 - x * (1.0 / 19.0);
    (p01 + x2 * p23) + x4 * (p45 + x2 * p67) + x8 * p89
}

/// Rotation matrix from Euler angles z-y'-x'' (radians): R = Rz(a) Ry(b) Rx(c).
pub fn euler_zyx(a: f64, b: f64, c: f64) -> Matrix3<f64> {
    let rz = nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), a);
    let ry = nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), b);
    let rx = nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), c);
    (rz * ry * rx).into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn angle_and_ratio_match_atan2() {
        // Both branches and the switch at t = 1/8; reference atan2 and a / sin a. Tolerance: a few
        // ulp (sqrt, one division and the Horner sum each round once).
        for a in [
            0.0, 1e-12, 1e-6, 1e-3, 0.01, 0.1, 0.2, 0.2486, 0.2488, 0.3, 1.0, 2.0, 3.0,
        ] {
            // Unit pairs perturbed by round-off as from a rotation matrix.
            for scale in [1.0, 1.0 + 4e-16, 1.0 - 4e-16] {
                let (sn, c) = (scale * f64::sin(a), scale * f64::cos(a));
                let (got, ratio) = angle_and_ratio(sn, c);
                let want = sn.atan2(c);
                assert!(
                    (got - want).abs() <= 1e-15 * want.max(1e-300),
                    "a = {a}: {got} vs {want}"
                );
                if sn > 0.0 {
                    let want_ratio = want / sn;
                    assert!(
                        (ratio - want_ratio).abs() <= 1e-15 * want_ratio,
                        "a = {a}, scale {scale}: {ratio} vs {want_ratio}"
                    );
                    // The square-root-free ratio: same branch switch, same accuracy.
                    match small_angle_ratio(sn * sn, c) {
                        Some(r) => assert!(
                            (r - want_ratio).abs() <= 1e-15 * want_ratio,
                            "a = {a}, scale {scale}: {r} vs {want_ratio}"
                        ),
                        None => assert!(a > 0.2487, "a = {a}: small-angle branch expected"),
                    }
                }
            }
        }
        // Both small-angle branches around their switch at sin²a = 1/256 and far inside.
        for a in [
            1e-8, 1e-4, 0.01, 0.05, 0.0625, 0.06255, 0.0626, 0.06265, 0.0627, 0.1,
        ] {
            for scale in [1.0, 1.0 + 4e-16, 1.0 - 4e-16] {
                let (sn, c) = (scale * f64::sin(a), scale * f64::cos(a));
                let want = sn.atan2(c) / sn;
                let got = small_angle_ratio(sn * sn, c).expect("small angle");
                assert!(
                    (got - want).abs() <= 1e-15 * want,
                    "a = {a}, scale {scale}: {got} vs {want}"
                );
            }
        }
    }

    fn rot(v: [f64; 3]) -> Matrix3<f64> {
        nalgebra::Rotation3::from_scaled_axis(Vector3::from(v)).into_inner()
    }

    #[test]
    fn log_inverts_exp() {
        let th = Vector3::new(0.3, -1.2, 0.7);
        assert_relative_eq!(log_so3(&rot([0.3, -1.2, 0.7])), th, epsilon = 1e-12);
    }

    #[test]
    fn inverse_left_jacobian_matches_finite_differences() {
        for th in [[0.3, -1.2, 0.7], [1e-6, 2e-6, -1e-6], [2.9, 0.1, 0.0]] {
            let r = rot(th);
            let jinv = inv_left_jacobian(&log_so3(&r));
            let h = 1e-6;
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = h;
                let rp = rot(e.into()) * r;
                let rm = rot((-e).into()) * r;
                let fd = (log_so3(&rp) - log_so3(&rm)) / (2.0 * h);
                assert_relative_eq!(fd, jinv.column(k).into_owned(), epsilon = 1e-7);
            }
        }
    }

    #[test]
    fn swing_ignores_twist_and_has_correct_derivative() {
        let e = Vector3::y();
        // a large twist (many revolutions) with a small swing
        let r = rot([0.02, 0.0, -0.01]) * rot([0.0, 123.4, 0.0]);
        let (th, d) = swing_vector(&r, &e);
        assert!(th.y.abs() < 1e-15);
        assert_relative_eq!(th.x, 0.02, epsilon = 1e-4);
        let h = 1e-7;
        for k in 0..3 {
            let mut ev = Vector3::zeros();
            ev[k] = h;
            let (tp, _) = swing_vector(&(rot(ev.into()) * r), &e);
            let (tm, _) = swing_vector(&(rot((-ev).into()) * r), &e);
            assert_relative_eq!(
                (tp - tm) / (2.0 * h),
                d.column(k).into_owned(),
                epsilon = 1e-6
            );
        }
        // at zero swing the derivative is the projection onto the swing plane
        let (_, d0) = swing_vector(&rot([0.0, 2.0, 0.0]), &e);
        assert!(d0.column(1).norm() < 1e-12);
    }

    #[test]
    fn quaternion_increment_roundtrip() {
        let mut q = [0.9, 0.1, -0.3, 0.2];
        quat_normalise(&mut q);
        let w = Vector3::new(0.4, -0.2, 1.5);
        let mut dq = [0.0; 4];
        quat_rate(&q, &w, &mut dq);
        assert_relative_eq!(quat_increment_to_body_rotation(&q, &dq), w, epsilon = 1e-12);
        let r = quat_to_matrix(&q);
        let q2 = matrix_to_quat(&r);
        assert_relative_eq!(quat_to_matrix(&q2), r, epsilon = 1e-12);
    }

    #[test]
    fn rotation_of_a_non_unit_quaternion_is_that_of_the_normalised_one() {
        // Reference: nalgebra normalises first. Tolerance: a few roundings of order-one entries.
        for q in [
            [0.9, 0.1, -0.3, 0.2],
            [1.0 + 1e-7, 2e-3, -1e-3, 5e-4],
            [-0.2, 0.7, 0.7, -0.1],
        ] {
            for scale in [1.0, 1.0 + 3e-8, 2.5] {
                let qs: Vec<f64> = q.iter().map(|c| c * scale).collect();
                let want =
                    UnitQuaternion::from_quaternion(Quaternion::new(qs[0], qs[1], qs[2], qs[3]))
                        .to_rotation_matrix()
                        .into_inner();
                let got = quat_to_matrix(&qs);
                let err = (got - want).abs().max();
                assert!(err <= 1e-15, "{qs:?}: {err:e}");
                assert!((got.transpose() * got - Matrix3::identity()).abs().max() <= 1e-15);
            }
        }
    }
}
