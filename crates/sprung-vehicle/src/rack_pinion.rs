//! Rack-and-pinion steering with a compliant column (issue 15; document 004's full car, the
//! steering of document 002 sec. 2 reduced to a car's rack): an element on two markers, the
//! rack (marker 0, on the rack body) and the steering-gear housing (marker 1, on the chassis;
//! its local y axis is the rack axis). The steering-wheel angle δ (rad) is prescribed; the
//! column between the steering wheel and the pinion is a torsion spring k_c with damping c_c;
//! the pinion moves the rack by its ratio i (m of rack travel per rad of pinion angle).
//!
//! With d = x₀ − x₁, n = the housing's y axis and s = d·n − s₀ the rack travel from the design
//! position, the pinion angle is s/i and the column twist θ = δ − s/i. The column torque
//! T = k_c θ − c_c ṡ/i (the driver's hand torque at steady state) pushes the rack with
//! F = T/i along n. Forces are the generalised forces of the potential ½ k_c θ² (and the
//! dissipation ½ c_c θ̇²):
//!
//! F₀ = F n,  F₁ = −F n,  T₁ = F (n × d)   (∂s/∂x₀ = n, ∂s/∂x₁ = −n, ∂s/∂φ₁ = n × d),
//!
//! so force and moment balance exactly; ṡ = (v₀ − v₁)·n + ω₁·(n × d). The rack's guidance in
//! the housing (the "rack stiffness to the chassis" across the rack axis) is an ordinary
//! sliding bushing between the rack body and the chassis (free along the rack axis), not part
//! of this law.
//!
//! The steering-wheel angle δ is the element's input slot `steering_wheel_angle`, mapped to a
//! model input of kind `signal` (a time signal or a runtime value set by the caller, e.g. a
//! driver model or an FMU). The element interface delivers input values, not their rates, so
//! the column damping acts on the pinion side only: θ̇ is taken as −ṡ/i (the steering wheel
//! is prescribed; its own rate would add a damping torque c_c δ̇ that the driver supplies).
//!
//! Partials are analytic (the law is smooth; tested against differences of `evaluate`):
//! with a = F, ∂a/∂s = −k_c/i², ∂a/∂ṡ = −c_c/i², u = ∂ṡ/∂n = (v₀ − v₁) + d × ω₁,
//! ∂n/∂φ₁ = −[n]×, ∂ṡ/∂d = (ω₁ × n)ᵀ, ∂ṡ/∂φ₁ = (n × u)ᵀ, ∂(n × d)/∂d = [n]×,
//! ∂(n × d)/∂φ₁ = [d]×[n]×.

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo, ParamInfo};

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: "rack_pinion",
    description: "rack-and-pinion steering: rack (marker 0) in the housing (marker 1, y = rack axis), steering-wheel angle through a torsionally compliant column and the pinion ratio",
    markers: &["rack", "housing"],
    parameters: &[
        ParamInfo {
            name: "pinion_ratio",
            unit: "m/rad",
            description: "rack travel per pinion angle i (> 0: a positive steering-wheel angle moves the rack along +y of the housing)",
            default: None,
        },
        ParamInfo {
            name: "column_stiffness",
            unit: "N m/rad",
            description: "torsion rate k_c of the steering column between steering wheel and pinion",
            default: None,
        },
        ParamInfo {
            name: "column_damping",
            unit: "N m s/rad",
            description: "torsion damping c_c of the column",
            default: Some(0.0),
        },
    ],
    states: &[],
    outputs: OUTPUTS,
    inputs: INPUTS,
};

const INPUTS: &[OutputInfo] = &[OutputInfo {
    name: "steering_wheel_angle",
    unit: "rad",
    description: "steering-wheel angle delta (+ = to the left)",
}];

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "steering_wheel_angle",
        unit: "rad",
        description: "steering-wheel angle delta (the input slot's value)",
    },
    OutputInfo {
        name: "rack_travel",
        unit: "m",
        description: "rack travel s from the design position along the housing's y axis",
    },
    OutputInfo {
        name: "column_twist",
        unit: "rad",
        description: "column twist theta = delta - s/i",
    },
    OutputInfo {
        name: "column_torque",
        unit: "N m",
        description: "column torque T = k_c theta - c_c s_dot/i (steering-wheel torque)",
    },
    OutputInfo {
        name: "rack_force",
        unit: "N",
        description: "axial force on the rack F = T/i",
    },
];

/// Registers the kind on `reg`.
pub fn register(reg: &mut ElementRegistry) {
    reg.register(INFO, build);
}

/// A rack-and-pinion steering (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct RackPinion {
    /// i, m/rad.
    pub pinion_ratio: f64,
    /// k_c, N m/rad.
    pub column_stiffness: f64,
    /// c_c, N m s/rad.
    pub column_damping: f64,
    /// s₀ = d·n in the design position, m.
    pub design_offset: f64,
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    let d = design[0].x - design[1].x;
    let n = design[1].rot.column(1).into_owned();
    Ok(Arc::new(RackPinion {
        pinion_ratio: p.positive("pinion_ratio")?,
        column_stiffness: p.positive("column_stiffness")?,
        column_damping: p.non_negative("column_damping")?,
        design_offset: d.dot(&n),
    }))
}

/// [x]×, the cross-product matrix.
fn skew(x: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -x.z, x.y, x.z, 0.0, -x.x, -x.y, x.x, 0.0)
}

/// Rack kinematics: d, n, s, ṡ.
struct Kin {
    d: Vector3<f64>,
    n: Vector3<f64>,
    s: f64,
    s_dot: f64,
}

impl RackPinion {
    fn kin(&self, m: &[MarkerState]) -> Kin {
        let d = m[0].x - m[1].x;
        let n = m[1].rot.column(1).into_owned();
        let s = d.dot(&n) - self.design_offset;
        let s_dot = (m[0].v - m[1].v).dot(&n) + m[1].w.dot(&n.cross(&d));
        Kin { d, n, s, s_dot }
    }

    /// (θ, T, F) at rack travel s and rate ṡ for the steering-wheel angle δ.
    fn column(&self, k: &Kin, delta: f64) -> (f64, f64, f64) {
        let i = self.pinion_ratio;
        let theta = delta - k.s / i;
        let theta_dot = -k.s_dot / i;
        let torque = self.column_stiffness * theta + self.column_damping * theta_dot;
        (theta, torque, torque / i)
    }
}

impl ElementLaw for RackPinion {
    fn kind(&self) -> &str {
        INFO.name
    }
    fn n_markers(&self) -> usize {
        2
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }
    fn inputs(&self) -> &[OutputInfo] {
        INPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let k = self.kin(x.markers);
        let delta = x.inputs.first().copied().unwrap_or(0.0);
        let (theta, torque, f) = self.column(&k, delta);
        out.force[0] = f * k.n;
        out.force[1] = -f * k.n;
        out.torque[0] = Vector3::zeros();
        out.torque[1] = f * k.n.cross(&k.d);
        out.outputs.copy_from_slice(&[delta, k.s, theta, torque, f]);
    }

    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let m = x.markers;
        let k = self.kin(m);
        let delta = x.inputs.first().copied().unwrap_or(0.0);
        let (_, _, f) = self.column(&k, delta);
        let i2 = self.pinion_ratio * self.pinion_ratio;
        let (da_ds, da_dsd) = (-self.column_stiffness / i2, -self.column_damping / i2);
        let (n, d) = (k.n, k.d);
        let nxd = n.cross(&d);
        let u = (m[0].v - m[1].v) + d.cross(&m[1].w);
        let w_x_n = m[1].w.cross(&n);
        // Gradients of a = F over the position columns (p₀, φ₀, p₁, φ₁) and the velocity
        // columns (v₀, ω₀, v₁, ω₁).
        let z = Vector3::zeros();
        let ga_pos = [
            da_ds * n + da_dsd * w_x_n,
            z,
            -(da_ds * n + da_dsd * w_x_n),
            da_ds * nxd + da_dsd * n.cross(&u),
        ];
        let ga_vel = [da_dsd * n, z, -da_dsd * n, da_dsd * nxd];
        // ∂n and ∂(n × d) per position column group.
        let sn = skew(&n);
        let zm = Matrix3::zeros();
        let dn = [zm, zm, zm, -sn];
        let dnxd = [sn, zm, -sn, skew(&d) * sn];
        for c in 0..4 {
            let c0 = 3 * c;
            let df0 = n * ga_pos[c].transpose() + f * dn[c];
            let dt1 = nxd * ga_pos[c].transpose() + f * dnxd[c];
            jac.position.fixed_view_mut::<3, 3>(0, c0).copy_from(&df0);
            jac.position
                .fixed_view_mut::<3, 3>(6, c0)
                .copy_from(&(-df0));
            jac.position.fixed_view_mut::<3, 3>(9, c0).copy_from(&dt1);
            let vf0 = n * ga_vel[c].transpose();
            let vt1 = nxd * ga_vel[c].transpose();
            jac.velocity.fixed_view_mut::<3, 3>(0, c0).copy_from(&vf0);
            jac.velocity
                .fixed_view_mut::<3, 3>(6, c0)
                .copy_from(&(-vf0));
            jac.velocity.fixed_view_mut::<3, 3>(9, c0).copy_from(&vt1);
        }
        Provided::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, Rotation3};
    use sprung_mbs::element_law::{ElementScratch, difference_partials};

    fn law() -> RackPinion {
        RackPinion {
            pinion_ratio: 0.0076,
            column_stiffness: 1500.0,
            column_damping: 5.0,
            design_offset: 0.01,
        }
    }

    fn markers() -> [MarkerState; 2] {
        let r1 = Rotation3::from_euler_angles(0.05, -0.03, 0.2).into_inner();
        [
            MarkerState {
                x: Vector3::new(0.012, 0.031, -0.004),
                rot: Rotation3::from_euler_angles(0.1, 0.0, 0.0).into_inner(),
                v: Vector3::new(0.3, -0.2, 0.1),
                w: Vector3::new(0.2, 0.1, -0.3),
            },
            MarkerState {
                x: Vector3::new(-0.01, 0.002, 0.003),
                rot: r1,
                v: Vector3::new(-0.1, 0.25, 0.05),
                w: Vector3::new(-0.4, 0.7, 0.5),
            },
        ]
    }

    #[test]
    fn forces_and_moments_balance() {
        let l = law();
        let m = markers();
        let mut s = ElementScratch::new(&l);
        s.evaluate(
            &l,
            &ElementInput {
                t: 0.4,
                markers: &m,
                states: &[],
                inputs: &[0.2],
            },
        );
        let f: Vector3<f64> = s.force.iter().sum();
        let moment = m[0].x.cross(&s.force[0]) + m[1].x.cross(&s.force[1]) + s.torque[1];
        assert!(f.norm() < 1e-12 * s.force[0].norm());
        assert!(moment.norm() < 1e-12 * s.force[0].norm());
        // Column torque over the pinion ratio is the rack force.
        assert!((s.outputs[3] / 0.0076 - s.outputs[4]).abs() < 1e-9 * s.outputs[4].abs());
        assert_eq!(s.outputs[0], 0.2);
    }

    /// The analytic partials against central differences of `evaluate` (the interface's own
    /// differencing, step 6e-6 relative): agreement to 1e-6 of the largest entry, the
    /// truncation and round-off level of that step.
    #[test]
    fn analytic_partials_match_differences() {
        let l = law();
        let m = markers();
        let x = ElementInput {
            t: 0.4,
            markers: &m,
            states: &[],
            inputs: &[0.2],
        };
        let mut a = ElementScratch::new(&l);
        a.evaluate_with_partials(&l, &x);
        let (pa, va): (DMatrix<f64>, DMatrix<f64>) = (a.d_position.clone(), a.d_velocity.clone());
        let mut fd = ElementScratch::new(&l);
        fd.evaluate(&l, &x);
        difference_partials(&l, &x, &mut fd, true, true);
        for (an, num, what) in [
            (&pa, &fd.d_position, "position"),
            (&va, &fd.d_velocity, "velocity"),
        ] {
            let scale = num.amax().max(1.0);
            let err = (an - num).amax();
            assert!(
                err < 1e-6 * scale,
                "{what}: error {err:e} of {scale:e}\n{an}\n{num}"
            );
        }
    }
}
