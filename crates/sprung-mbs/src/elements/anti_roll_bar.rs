//! Anti-roll bar on three markers: a torsion bar mounted on the chassis (marker 0: its frame's
//! y axis is the bar axis, x points along the arms) with two arms whose ends are markers 1 and 2
//! (e.g. on the left and right lower control arms or drop links). An element on more than two
//! markers through the open interface of [`crate::element_law`].
//!
//! Arm angle of end k about the bar axis, measured in the chassis frame (n_x, n_z = marker 0's x
//! and z axes, d_k = x_k − x₀):
//!
//! θ_k = atan2(d_k·n_z, d_k·n_x),   ∂θ_k/∂d_k = g_k = (x_k n_z − z_k n_x)/ρ_k²,
//! ∂θ_k/∂φ₀ = h_k = g_k × d_k      (x_k = d_k·n_x, z_k = d_k·n_z, ρ_k² = x_k² + z_k²).
//!
//! Twist τ = θ₁ − θ₂ − τ₀ (τ₀: the design twist; θ₁ − θ₂ taken as the angle from arm 2 to arm 1,
//! atan2(z₁x₂ − x₁z₂, x₁x₂ + z₁z₂), one `atan2` per evaluation instead of one per arm) and its rate
//! τ̇ = g₁·(v₁ − v₀) − g₂·(v₂ − v₀) + (h₁ − h₂)·ω₀ give the torsion moment
//! M = k_t τ + c_t τ̇, and from the potential ½ k_t τ² (and the dissipation ½ c_t τ̇²) the
//! generalised forces: F₁ = −M g₁ at end 1, F₂ = +M g₂ at end 2, F₀ = −(F₁ + F₂) and the torque
//! T₀ = −M (h₁ − h₂) on the chassis — force and moment balance hold exactly (the law depends only
//! on the relative positions, so it is invariant under a rigid motion of all three markers).
//!
//! Partials are analytic: the velocity columns through τ̇ alone; the position columns with the
//! Hessian of θ, H_k = ∂g_k/∂d_k = (n_z n_xᵀ − n_x n_zᵀ)/ρ_k² − 2 g_k (x_k n_x + z_k n_z)ᵀ/ρ_k², and
//! its frame derivative ∂g_k/∂φ₀ = −[g_k]× + H_k [d_k]× (g is equivariant: g(Qd, QR) = Q g(d, R)).

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};

use super::registry::{ElementParams, KindInfo, ParamInfo};
use crate::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: "anti_roll_bar",
    description: "torsion bar on the chassis (marker 0: y = bar axis, x along the arms) with arm ends at markers 1 and 2",
    markers: &["bar_frame", "arm_end_1", "arm_end_2"],
    parameters: &[
        ParamInfo {
            name: "torsional_stiffness",
            unit: "N m/rad",
            description: "torsion rate k_t of the bar (twist of one arm against the other)",
            default: None,
        },
        ParamInfo {
            name: "torsional_damping",
            unit: "N m s/rad",
            description: "torsion damping c_t",
            default: Some(0.0),
        },
    ],
    states: &[],
    outputs: OUTPUTS,
    inputs: &[],
};

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "twist",
        unit: "rad",
        description: "twist tau = theta_1 - theta_2 - tau_0",
    },
    OutputInfo {
        name: "moment",
        unit: "N m",
        description: "torsion moment M = k_t tau + c_t tau_dot",
    },
];

/// An anti-roll bar (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct AntiRollBar {
    /// k_t, N m/rad.
    pub torsional_stiffness: f64,
    /// c_t, N m s/rad.
    pub torsional_damping: f64,
    /// τ₀, rad: the twist in the design position.
    pub design_twist: f64,
}

/// The end at `d` in the bar frame `m0`: its coordinates (x, z) = (d·n_x, d·n_z) about the bar
/// axis (its arm angle is θ = atan2(z, x)), the gradient g = ∂θ/∂d and h = g × d.
fn arm(m0: &MarkerState, d: &Vector3<f64>) -> ([f64; 2], Vector3<f64>, Vector3<f64>) {
    let (nx, nz) = (m0.rot.column(0).into_owned(), m0.rot.column(2).into_owned());
    let (x, z) = (d.dot(&nx), d.dot(&nz));
    let rho2 = (x * x + z * z).max(1e-18);
    let g = (x * nz - z * nx) / rho2;
    ([x, z], g, g.cross(d))
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    let mut twist = 0.0;
    for (k, sign) in [(1usize, 1.0), (2, -1.0)] {
        let d = design[k].x - design[0].x;
        let (nx, nz) = (design[0].rot.column(0), design[0].rot.column(2));
        let rho = (d.dot(&nx).powi(2) + d.dot(&nz).powi(2)).sqrt();
        if rho < 1e-6 {
            return Err(format!(
                "arm end {k} lies on the bar axis (distance {rho:e} m from the y axis of the bar frame); the arm needs a length"
            ));
        }
        let [x, z] = arm(&design[0], &d).0;
        twist += sign * z.atan2(x);
    }
    Ok(Arc::new(AntiRollBar {
        torsional_stiffness: p.positive("torsional_stiffness")?,
        torsional_damping: p.non_negative("torsional_damping")?,
        design_twist: twist,
    }))
}

impl AntiRollBar {
    /// (τ, τ̇, g₁, g₂, h₁ − h₂).
    fn kinematics(&self, x: &ElementInput) -> (f64, f64, Vector3<f64>, Vector3<f64>, Vector3<f64>) {
        let m = x.markers;
        let ([x1, z1], g1, h1) = arm(&m[0], &(m[1].x - m[0].x));
        let ([x2, z2], g2, h2) = arm(&m[0], &(m[2].x - m[0].x));
        // θ₁ − θ₂ modulo 2π (module docs); wrap the twist into (−π, π] around the design twist.
        let between = (z1 * x2 - x1 * z2).atan2(x1 * x2 + z1 * z2);
        let mut tau = between - self.design_twist;
        tau = (tau + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        let dh = h1 - h2;
        let tau_dot = g1.dot(&(m[1].v - m[0].v)) - g2.dot(&(m[2].v - m[0].v)) + dh.dot(&m[0].w);
        (tau, tau_dot, g1, g2, dh)
    }
}

impl ElementLaw for AntiRollBar {
    fn kind(&self) -> &str {
        INFO.name
    }
    fn n_markers(&self) -> usize {
        3
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let (tau, tau_dot, g1, g2, dh) = self.kinematics(x);
        let moment = self.torsional_stiffness * tau + self.torsional_damping * tau_dot;
        out.force[1] = -moment * g1;
        out.force[2] = moment * g2;
        out.force[0] = moment * (g1 - g2);
        out.torque[0] = -moment * dh;
        out.torque[1] = Vector3::zeros();
        out.torque[2] = Vector3::zeros();
        out.outputs.copy_from_slice(&[tau, moment]);
    }

    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let m = x.markers;
        let (tau, tau_dot, g1, g2, dh) = self.kinematics(x);
        let (k, c) = (self.torsional_stiffness, self.torsional_damping);
        let moment = k * tau + c * tau_dot;
        // Velocity columns: ∂M = c ∂τ̇ with v₀ → −(g₁ − g₂), ω₀ → h₁ − h₂, v₁ → g₁, v₂ → −g₂;
        // each force row block is its direction times that row vector.
        let dm: [(usize, Vector3<f64>); 4] = [(0, -(g1 - g2)), (3, dh), (6, g1), (12, -g2)];
        let rows: [(usize, Vector3<f64>); 4] = [(0, g1 - g2), (3, -dh), (6, -g1), (12, g2)];
        for (r0, dir) in rows {
            for (c0, grad) in dm {
                let blk = c * dir * grad.transpose();
                jac.velocity.fixed_view_mut::<3, 3>(r0, c0).copy_from(&blk);
            }
        }
        // Position columns (module docs): per arm end k the Hessian pieces H_k = ∂g_k/∂d_k and
        // G_k = ∂g_k/∂φ₀ = −[g_k]× + H_k [d_k]×, ∂h_k/∂d_k = −[d_k]× H_k + [g_k]×,
        // ∂h_k/∂φ₀ = −[d_k]× G_k.
        let (nx, nz) = (
            m[0].rot.column(0).into_owned(),
            m[0].rot.column(2).into_owned(),
        );
        let arm_end = |kk: usize| {
            let d = m[kk].x - m[0].x;
            let (xx, zz) = (d.dot(&nx), d.dot(&nz));
            let rho2 = (xx * xx + zz * zz).max(1e-18);
            let g = (xx * nz - zz * nx) / rho2;
            let hess = (nz * nx.transpose() - nx * nz.transpose()) / rho2
                - 2.0 * g * (xx * nx + zz * nz).transpose() / rho2;
            let gphi = -skew(&g) + hess * skew(&d);
            let dh_dd = -skew(&d) * hess + skew(&g);
            let dh_dphi = -skew(&d) * gphi;
            let u = m[kk].v - m[0].v;
            // ∇(g·u + h·ω₀) with respect to d_k and to φ₀.
            let grad_d = hess.transpose() * u + dh_dd.transpose() * m[0].w;
            let grad_phi = gphi.transpose() * u + dh_dphi.transpose() * m[0].w;
            (g, d, hess, gphi, dh_dd, dh_dphi, grad_d, grad_phi)
        };
        let (g1_, _, h1, gp1, hd1, hp1, gd1, gph1) = arm_end(1);
        let (g2_, _, h2, gp2, hd2, hp2, gd2, gph2) = arm_end(2);
        debug_assert!((g1_ - g1).norm() <= 1e-12 * g1.norm().max(1.0));
        debug_assert!((g2_ - g2).norm() <= 1e-12 * g2.norm().max(1.0));
        // Per column group J: ∇M_J, ∂g₁_J, ∂g₂_J, ∂h₁_J, ∂h₂_J.
        let z = Matrix3::zeros();
        let groups: [(usize, Vector3<f64>, [Matrix3<f64>; 4]); 4] = [
            // δp₀: d_k moves by −δp₀.
            (
                0,
                k * (-(g1 - g2)) + c * (-gd1 + gd2),
                [-h1, -h2, -hd1, -hd2],
            ),
            (3, k * dh + c * (gph1 - gph2), [gp1, gp2, hp1, hp2]),
            (6, k * g1 + c * gd1, [h1, z, hd1, z]),
            (12, k * (-g2) + c * (-gd2), [z, h2, z, hd2]),
        ];
        for (c0, grad_m, [dg1, dg2, dh1, dh2]) in groups {
            let df1 = -g1 * grad_m.transpose() - moment * dg1;
            let df2 = g2 * grad_m.transpose() + moment * dg2;
            let df0 = -(df1 + df2);
            let dt0 = -dh * grad_m.transpose() - moment * (dh1 - dh2);
            jac.position.fixed_view_mut::<3, 3>(0, c0).copy_from(&df0);
            jac.position.fixed_view_mut::<3, 3>(3, c0).copy_from(&dt0);
            jac.position.fixed_view_mut::<3, 3>(6, c0).copy_from(&df1);
            jac.position.fixed_view_mut::<3, 3>(12, c0).copy_from(&df2);
        }
        Provided::ALL
    }
}

/// [x]×, the cross-product matrix.
fn skew(x: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -x.z, x.y, x.z, 0.0, -x.x, -x.y, x.x, 0.0)
}
