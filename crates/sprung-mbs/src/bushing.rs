//! Six-direction bushing (document 000, section 2; conventions of `reference-suspensions.md` §1.3).
//!
//! Between marker I (body_i) and marker J (body_j), in the axes of marker J:
//! d = R_Jᵀ (x_I − x_J), θ = log(R_Jᵀ R_I) (or the swing vector when a spin axis is free),
//! ḋ = R_Jᵀ (v_I − v_J), θ̇ = R_Jᵀ (ω_I − ω_J);
//! f = preload − (k(d) + c(ḋ)), t = rot_preload − (k_r(θ) + c_r(θ̇)) per local axis;
//! R_J f and R_J t act on body_i at x_I, the opposites on body_j, also at x_I.
//! Partials are in relative marker form ([`crate::element::Partials`]); the translational ones are
//! the closed forms ∓R_J K R_Jᵀ, ∓R_J C R_Jᵀ per end, so no 3 × 12 products are formed.
//! The rotational deflection is computed by [`rotational_deflection`] only — force, partials and
//! output channel all use it.

use nalgebra::{Matrix3, Vector3};
use sprung_model::Curve;

use crate::compiled::Bushing;
use crate::element::{ElementForce, Ends};
use crate::m3::{Lanes, M3};
use crate::rotation::{
    angle_and_ratio, inv_left_jacobian, log_so3, skew, small_angle_ratio, swing_vector,
};

/// Rotational deflection of `r_rel = R_Jᵀ R_I` and its derivative with respect to a left
/// perturbation of `r_rel`: the rotation vector, or the swing vector about a free spin axis.
#[inline(always)]
pub fn rotational_deflection(
    r_rel: &Matrix3<f64>,
    spin_axis: Option<usize>,
) -> (Vector3<f64>, Matrix3<f64>) {
    match spin_axis {
        Some(k) => {
            let mut e = Vector3::zeros();
            e[k] = 1.0;
            swing_vector(r_rel, &e)
        }
        None => log_with_inv_jacobian(r_rel, true),
    }
}

/// Rotation vector θ = log(R) and, with `jacobian`, J_l⁻¹(θ), directly from the matrix: with
/// cos a = (tr R − 1)/2 and sin a · n = vee(R − Rᵀ)/2, a = atan2(sin a, cos a) and θ = a n
/// ([`angle_and_ratio`]: no library call for small angles); then
/// J_l⁻¹ = I − ½\[θ\]× + (1/a² − (1 + cos a)/(2 a sin a)) (θθᵀ − a² I) needs no further trigonometry.
/// Same values as [`log_so3`] and [`inv_left_jacobian`] up to round-off; for a > 2π/3, where
/// vee(R − Rᵀ) loses precision, those quaternion-based functions are used.
#[inline(always)]
pub fn log_with_inv_jacobian(r: &Matrix3<f64>, jacobian: bool) -> (Vector3<f64>, Matrix3<f64>) {
    let c = 0.5 * (r.trace() - 1.0);
    if c < -0.5 {
        let th = log_so3(r);
        return (
            th,
            if jacobian {
                inv_left_jacobian(&th)
            } else {
                Matrix3::zeros()
            },
        );
    }
    let vee = 0.5
        * Vector3::new(
            r[(2, 1)] - r[(1, 2)],
            r[(0, 2)] - r[(2, 0)],
            r[(1, 0)] - r[(0, 1)],
        );
    // θ needs only a / sin a, which needs no square root for small angles.
    let sn2 = vee.norm_squared();
    let ratio = small_angle_ratio(sn2, c).unwrap_or_else(|| angle_and_ratio(sn2.sqrt(), c).1);
    let th = vee * ratio;
    if !jacobian {
        return (th, Matrix3::zeros());
    }
    let sn = sn2.sqrt();
    let a = ratio * sn;
    let coef = if a < 1e-4 {
        // Series of 1/a² − (1 + cos a) / (2 a sin a) = 1/12 + a²/720 + ...
        1.0 / 12.0 + a * a / 720.0
    } else {
        1.0 / (a * a) - (1.0 + c) / (2.0 * a * sn)
    };
    let th2 = th.dot(&th);
    let d = Matrix3::identity() - 0.5 * skew(&th)
        + coef * (th * th.transpose() - Matrix3::from_diagonal_element(th2));
    (th, d)
}

/// Evaluates a bushing; partials only when `partials` is set (computed with the lanes `l`).
#[inline(always)]
pub fn evaluate<L: Lanes>(
    l: L,
    b: &Bushing,
    curves: &[Curve],
    ends: &Ends,
    partials: bool,
    out: &mut ElementForce,
) {
    let [mi, mj] = ends;
    let rj = &mj.rot;
    let dx = mi.x - mj.x;
    let dv = mi.v - mj.v;
    let dw = mi.w - mj.w;
    let d = rj.tmul_vec(l, &dx);
    let d_dot = rj.tmul_vec(l, &dv);
    let r_rel = rj.tmul(l, &mi.rot).to_matrix();
    // The rotation vector's Jacobian D is only needed for partials; the swing vector yields both.
    let (theta, dtheta_deps) = match (b.spin_axis, partials) {
        (None, false) => log_with_inv_jacobian(&r_rel, false),
        _ => rotational_deflection(&r_rel, b.spin_axis),
    };
    let theta_dot = rj.tmul_vec(l, &dw);

    let mut f = b.preload;
    let mut t = b.rot_preload;
    let mut kf = Vector3::zeros();
    let mut cf = Vector3::zeros();
    let mut kt = Vector3::zeros();
    let mut ct = Vector3::zeros();
    for a in 0..3 {
        let (fk, dk) = b.stiffness[a].eval(curves, d[a]);
        let (fc, dc) = b.damping[a].eval(curves, d_dot[a]);
        f[a] -= fk + fc;
        kf[a] = dk;
        cf[a] = dc;
        let (tk, dtk) = b.rot_stiffness[a].eval(curves, theta[a]);
        let (tc, dtc) = b.rot_damping[a].eval(curves, theta_dot[a]);
        t[a] -= tk + tc;
        kt[a] = dtk;
        ct[a] = dtc;
    }
    let force = rj.mul_vec(&f);
    let torque = rj.mul_vec(&t);
    out.force = force;
    out.torque = torque;
    out.point = [mi.x, mi.x];
    out.point_end = [0, 0];
    out.out.force = f;
    out.out.torque = t;
    out.out.deflection = d;
    out.out.rot_deflection = theta;
    if !partials {
        return;
    }
    // Marker-form partials (see `crate::element`), with A = R_J K R_Jᵀ etc.:
    // ∂d = R_Jᵀ (δp_I − δp_J) + R_Jᵀ [Δx]× δφ_J,   ∂ḋ = R_Jᵀ (δv_I − δv_J) + R_Jᵀ [Δv]× δφ_J,
    // ∂θ = D R_Jᵀ (δφ_I − δφ_J),                   ∂θ̇ = R_Jᵀ (δω_I − δω_J) + R_Jᵀ [Δω]× δφ_J,
    // ∂(R_J f) = R_J ∂f − [R_J f]× δφ_J (and the same for the torque).
    let rjt = rj.transpose();
    let a_k = M3::rotate_diag(l, rj, &rjt, &kf);
    let a_c = M3::rotate_diag(l, rj, &rjt, &cf);
    let b_c = M3::rotate_diag(l, rj, &rjt, &ct);
    let b_k = rj
        .scale_columns(l, &kt)
        .mul(l, &M3::from_matrix(&dtheta_deps))
        .mul(l, &rjt);
    let f_phi_j = a_k
        .mul_skew(l, &dx)
        .add(l, &a_c.mul_skew(l, &dv))
        .add(l, &M3::skew(&force));
    let p = &mut out.partials;
    p.f_p = a_k.neg(l);
    p.f_v = a_c.neg(l);
    p.f_phi = [M3::ZERO, f_phi_j.neg(l)];
    p.t_phi = [
        b_k.neg(l),
        b_k.sub(l, &b_c.mul_skew(l, &dw)).sub(l, &M3::skew(&torque)),
    ];
    p.t_w = b_c.neg(l);
    p.has_f_v = true;
    p.has_torque = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_log_and_jacobian_match_the_quaternion_route() {
        for th in [
            [0.0, 0.0, 0.0],
            [1e-9, -2e-9, 3e-9],
            [2e-5, 1e-5, -3e-5],
            [0.01, -0.02, 0.005],
            [0.3, -1.2, 0.7],
            [1.2, 1.3, -0.4],
            [2.9, 0.1, 0.0],
        ] {
            let th = Vector3::from(th);
            let r = nalgebra::Rotation3::from_scaled_axis(th).into_inner();
            let (t_fast, d_fast) = log_with_inv_jacobian(&r, true);
            let t_ref = log_so3(&r);
            let d_ref = inv_left_jacobian(&t_ref);
            assert!(
                (t_fast - t_ref).norm() <= 1e-14 * (1.0 + th.norm()),
                "{th:?}: {t_fast:?} vs {t_ref:?}"
            );
            assert!((d_fast - d_ref).norm() <= 1e-12, "{th:?}");
        }
    }
}
