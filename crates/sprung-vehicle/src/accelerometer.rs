//! Accelerometer: the acceleration of a marker in its own axes, for vehicle channels such as the
//! lateral acceleration a_y of document 004's turn entry (Bild 6, right). An element on one
//! marker with three states z, a low-pass copy of the marker's global velocity v:
//!
//! ż = (v − z)/τ,   a = Rᵀ (v − z)/τ   (R: the marker's axes),
//!
//! i.e. each global component is v filtered by s/(τ s + 1): the acceleration through a
//! first-order filter with the time constant τ (a sensor bandwidth 1/(2π τ)). After a change
//! of the acceleration the reading settles like 1 − exp(−t/τ); for a constant acceleration it
//! is exact after the transient (tested against F/m). The element applies no force; its states
//! are integrated implicitly with the bodies (`docs/elements.md`), so τ may be far below the
//! step (at 1 ms steps τ = 10 ms gives 16 Hz bandwidth). Gravity is not included (a = dv/dt,
//! not the specific force a real sensor measures).
//!
//! Partials are analytic: the only non-zero blocks are the state rows, ∂ż/∂v = I/τ and
//! ∂ż/∂z = −I/τ (the outputs do not enter the Jacobian).

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo, ParamInfo};

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: "accelerometer",
    description: "acceleration of a marker in its own axes through a first-order filter of time constant tau (no force)",
    markers: &["sensor"],
    parameters: &[ParamInfo {
        name: "time_constant",
        unit: "s",
        description: "filter time constant tau (bandwidth 1/(2 pi tau))",
        default: Some(0.01),
    }],
    states: &["vx_filtered", "vy_filtered", "vz_filtered"],
    outputs: OUTPUTS,
    inputs: &[],
};

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "ax",
        unit: "m/s^2",
        description: "acceleration along the marker's x axis",
    },
    OutputInfo {
        name: "ay",
        unit: "m/s^2",
        description: "acceleration along the marker's y axis",
    },
    OutputInfo {
        name: "az",
        unit: "m/s^2",
        description: "acceleration along the marker's z axis",
    },
];

/// Registers the kind on `reg`.
pub fn register(reg: &mut ElementRegistry) {
    reg.register(INFO, build);
}

/// An accelerometer (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Accelerometer {
    /// τ, s.
    pub time_constant: f64,
    /// The marker's design velocity: the filter starts settled (no start transient).
    pub initial_velocity: Vector3<f64>,
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    Ok(Arc::new(Accelerometer {
        time_constant: p.positive("time_constant")?,
        initial_velocity: design[0].v,
    }))
}

impl ElementLaw for Accelerometer {
    fn kind(&self) -> &str {
        INFO.name
    }
    fn n_markers(&self) -> usize {
        1
    }
    fn n_states(&self) -> usize {
        3
    }
    fn state_names(&self) -> Vec<String> {
        INFO.states.iter().map(|s| s.to_string()).collect()
    }
    fn initial_states(&self, states: &mut [f64]) {
        states.copy_from_slice(self.initial_velocity.as_slice());
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let m = &x.markers[0];
        let z = Vector3::new(x.states[0], x.states[1], x.states[2]);
        let rate = (m.v - z) / self.time_constant;
        out.force[0] = Vector3::zeros();
        out.torque[0] = Vector3::zeros();
        out.state_rates.copy_from_slice(rate.as_slice());
        let a = m.rot.transpose() * rate;
        out.outputs.copy_from_slice(a.as_slice());
    }

    fn partials(&self, _x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let k = 1.0 / self.time_constant;
        for r in 0..3 {
            jac.velocity[(6 + r, r)] = k;
            jac.velocity[(6 + r, 6 + r)] = -k;
        }
        Provided::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Rotation3;
    use sprung_mbs::element_law::{ElementScratch, difference_partials};

    /// Analytic partials equal the interface's central differences (the law is linear in v and
    /// z, so differences are exact up to round-off: 1e-8 of the entries 1/τ = 100).
    #[test]
    fn analytic_partials_match_differences() {
        let l = Accelerometer {
            time_constant: 0.01,
            initial_velocity: Vector3::zeros(),
        };
        let m = [MarkerState {
            x: Vector3::new(1.0, 2.0, 0.5),
            rot: Rotation3::from_euler_angles(0.1, 0.2, 0.3).into_inner(),
            v: Vector3::new(20.0, 1.0, -0.2),
            w: Vector3::new(0.0, 0.1, 0.4),
        }];
        let states = [19.5, 0.8, 0.1];
        let x = ElementInput {
            t: 0.0,
            markers: &m,
            states: &states,
            inputs: &[],
        };
        let mut a = ElementScratch::new(&l);
        a.evaluate_with_partials(&l, &x);
        let mut fd = ElementScratch::new(&l);
        fd.evaluate(&l, &x);
        difference_partials(&l, &x, &mut fd, true, true);
        assert!((&a.d_position - &fd.d_position).amax() < 1e-8 * 100.0);
        assert!((&a.d_velocity - &fd.d_velocity).amax() < 1e-8 * 100.0);
        // The reading is R^T (v - z)/tau.
        let want = m[0].rot.transpose() * (m[0].v - Vector3::from_row_slice(&states)) / 0.01;
        assert!((Vector3::from_row_slice(&a.outputs) - want).norm() < 1e-12 * want.norm());
    }
}
