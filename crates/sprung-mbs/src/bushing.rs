//! Six-direction bushing (document 000, section 2; conventions of `reference-suspensions.md` §1.3).
//!
//! Between marker I (body_i) and marker J (body_j), in the axes of marker J:
//! d = R_Jᵀ (x_I − x_J), θ = log(R_Jᵀ R_I) (or the swing vector when a spin axis is free),
//! ḋ = R_Jᵀ (v_I − v_J), θ̇ = R_Jᵀ (ω_I − ω_J);
//! f = preload − (k(d) + c(ḋ)), t = rot_preload − (k_r(θ) + c_r(θ̇)) per local axis;
//! R_J f and R_J t act on body_i at x_I, the opposites on body_j, also at x_I.
//! The rotational deflection is computed by [`rotational_deflection`] only — force, partials and
//! output channel all use it.

use nalgebra::{Matrix3, Vector3};
use sprung_model::Curve;

use crate::compiled::Bushing;
use crate::element::{ElementForce, Ends};
use crate::kinematics::M3x12;
use crate::rotation::{inv_left_jacobian, log_so3, skew, swing_vector};

/// Rotational deflection of `r_rel = R_Jᵀ R_I` and its derivative with respect to a left
/// perturbation of `r_rel`: the rotation vector, or the swing vector about a free spin axis.
pub fn rotational_deflection(r_rel: &Matrix3<f64>, spin_axis: Option<usize>) -> (Vector3<f64>, Matrix3<f64>) {
    match spin_axis {
        Some(k) => {
            let mut e = Vector3::zeros();
            e[k] = 1.0;
            swing_vector(r_rel, &e)
        }
        None => {
            let th = log_so3(r_rel);
            (th, inv_left_jacobian(&th))
        }
    }
}

/// Evaluates a bushing; partials only when `partials` is set.
pub fn evaluate(b: &Bushing, curves: &[Curve], ends: &Ends, partials: bool, out: &mut ElementForce) {
    let [mi, mj] = ends;
    let rj = mj.rot;
    let rjt = rj.transpose();
    let dx = mi.x - mj.x;
    let dv = mi.v - mj.v;
    let dw = mi.w - mj.w;
    let d = rjt * dx;
    let d_dot = rjt * dv;
    let (theta, dtheta_deps) = rotational_deflection(&(rjt * mi.rot), b.spin_axis);
    let theta_dot = rjt * dw;

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
    let force = rj * f;
    let torque = rj * t;
    out.force = force;
    out.torque = torque;
    out.point = [mi.x, mi.x];
    out.out.force = f;
    out.out.torque = t;
    out.out.deflection = d;
    out.out.rot_deflection = theta;
    if !partials {
        return;
    }
    // Building blocks (I on columns 0..6, J on 6..12).
    let xi = mi.d_position(0);
    let xj = mj.d_position(6);
    let phi_i = mi.d_rotation(0);
    let phi_j = mj.d_rotation(6);
    let d_dx: M3x12 = xi - xj;
    // ∂d = R_Jᵀ ∂Δx + R_Jᵀ [Δx]× ∂φ_J
    let dd_r = rjt * d_dx + rjt * skew(&dx) * phi_j;
    // ∂θ = D ∂ε, ε = R_Jᵀ (φ_I − φ_J)
    let dth_r = dtheta_deps * rjt * (phi_i - phi_j);
    // ∂ḋ (positions) = R_Jᵀ (∂v_I − ∂v_J) + R_Jᵀ [Δv]× ∂φ_J; (velocities) = R_Jᵀ (∂v_I − ∂v_J)
    let ddd_r = rjt * (mi.d_velocity_pos(0) - mj.d_velocity_pos(6)) + rjt * skew(&dv) * phi_j;
    let ddd_v = rjt * (mi.d_velocity_vel(0) - mj.d_velocity_vel(6));
    // ∂θ̇ (positions) = R_Jᵀ [Δω]× ∂φ_J; (velocities) = R_Jᵀ (∂ω_I − ∂ω_J), ∂ω = ∂φ layout
    let dthd_r = rjt * skew(&dw) * phi_j;
    let dthd_v = rjt * (phi_i - phi_j);
    let kf = Matrix3::from_diagonal(&kf);
    let cf = Matrix3::from_diagonal(&cf);
    let kt = Matrix3::from_diagonal(&kt);
    let ct = Matrix3::from_diagonal(&ct);
    let df_r = -(kf * dd_r + cf * ddd_r);
    let df_v = -(cf * ddd_v);
    let dt_r = -(kt * dth_r + ct * dthd_r);
    let dt_v = -(ct * dthd_v);
    // ∂(R_J f) = R_J ∂f − [R_J f]× ∂φ_J
    out.d_force_r = rj * df_r - skew(&force) * phi_j;
    out.d_force_v = rj * df_v;
    out.d_torque_r = rj * dt_r - skew(&torque) * phi_j;
    out.d_torque_v = rj * dt_v;
    out.d_point = [xi, xi];
}
