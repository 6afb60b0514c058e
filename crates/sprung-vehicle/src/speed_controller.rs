//! Speed controller: a PI law that drives (and brakes) a wheel so that a vehicle follows a target
//! speed — the drive of the 10-wheeler of document 002 (issue 14 item 4: "a drive torque at the
//! rear wheels from a speed controller (target speed as an input)"; the seed's truck is
//! "slowly accelerated" from 5 to 25 km/h in the bump crossing, Fig. 5).
//!
//! Markers: 0 `vehicle` (on the frame; the speed is v = v₀ · x₀, the frame's forward velocity),
//! 1 `wheel` (on the wheel body, y = spin axis, the tire's convention), 2 `carrier` (on the body
//! the wheel turns on: axle or knuckle; it takes the reaction). With the target v*(t)
//! (piecewise linear in `target_time`/`target_speed`, constant outside), the error e = v* − v and
//! the state s (the error integral, m):
//!
//! u = k_p e + k_i s,   T = T_lim tanh(u / T_lim),   ṡ = e + (T − u)/k_p,
//!
//! T_lim = `torque_max` for u ≥ 0 (drive) and `brake_torque_max` for u < 0 (brake). The smooth
//! saturation keeps the law differentiable for the implicit integrators; the last term of ṡ is
//! back-calculation anti-windup with the time constant k_p/k_i of the PI law. The torque T acts
//! on the wheel about its spin axis a (T a) and −T a on the carrier, so the pair does no work on
//! the vehicle except through the wheel's rotation (a drive line and brakes; no engine model).
//!
//! Partials are analytic (checked against the interface's central differences in the tests):
//! with D = dT/du = 1 − tanh²(u/T_lim) (the same on both sides of u = 0, so the law is C¹),
//! ∂v/∂v₀ = x₀ᵀ, ∂v/∂δφ₀ = (x₀ × v₀)ᵀ (δx₀ = δφ₀ × x₀), ∂T = D (−k_p ∂v + k_i ∂s),
//! ∂ṡ = −D ∂v + k_i (D − 1)/k_p ∂s, and the wheel's axis turns with its marker, δa = δφ₁ × a;
//! the target's time dependence is not a partial of the interface.

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, KindInfo, ParamInfo};

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: "speed_controller",
    description: "PI speed controller: drive/brake torque between a wheel (marker 1, y = spin axis) and its carrier (marker 2) so that the forward speed of marker 0 follows a target table",
    markers: &["vehicle", "wheel", "carrier"],
    parameters: &[
        ParamInfo {
            name: "target_time",
            unit: "s",
            description: "times of the target-speed table (list, increasing); without it the input slot target_speed",
            default: None,
        },
        ParamInfo {
            name: "target_speed",
            unit: "m/s",
            description: "target speeds at target_time (list)",
            default: None,
        },
        ParamInfo {
            name: "kp",
            unit: "N m s/m",
            description: "proportional gain (torque per speed error)",
            default: None,
        },
        ParamInfo {
            name: "ki",
            unit: "N m/m",
            description: "integral gain (torque per integrated speed error)",
            default: None,
        },
        ParamInfo {
            name: "torque_max",
            unit: "N m",
            description: "drive torque limit (smooth, tanh)",
            default: None,
        },
        ParamInfo {
            name: "brake_torque_max",
            unit: "N m",
            description: "brake torque limit (default: torque_max)",
            default: Some(f64::NAN),
        },
        ParamInfo {
            name: "torque",
            unit: "-",
            description: "\"applied\" (default): the torque acts on the wheel (marker 1) and its reaction on the carrier (marker 2); \"output\": the element only computes it (output `torque`) for another element's input slot, e.g. a tire with spin = \"state\" (inputs = { drive_torque = \"<controller>.torque\" })",
            default: Some(f64::NAN),
        },
        ParamInfo {
            name: "initial_integral",
            unit: "m",
            description: "initial error integral (k_i times it is the initial torque)",
            default: Some(0.0),
        },
    ],
    states: &["error_integral"],
    outputs: OUTPUTS,
    inputs: INPUTS,
};

const INPUTS: &[OutputInfo] = &[OutputInfo {
    name: "target_speed",
    unit: "m/s",
    description: "target speed (used when the element has no target_time/target_speed table)",
}];

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "torque",
        unit: "N m",
        description: "torque on the wheel about its spin axis (drive > 0, brake < 0)",
    },
    OutputInfo {
        name: "speed",
        unit: "m/s",
        description: "forward speed of the vehicle marker",
    },
    OutputInfo {
        name: "target",
        unit: "m/s",
        description: "target speed",
    },
    OutputInfo {
        name: "error_integral",
        unit: "m",
        description: "the state s",
    },
];

/// The PI speed controller (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedController {
    /// Target-speed table (empty: the input slot `target_speed`).
    time: Vec<f64>,
    speed: Vec<f64>,
    kp: f64,
    ki: f64,
    torque_max: f64,
    brake_max: f64,
    s0: f64,
    /// Whether the torque acts on the wheel and carrier markers (`torque = "applied"`) or is
    /// only the output `torque` (`"output"`).
    applied: bool,
}

/// Factory for the registry.
pub fn build(p: &ElementParams, _design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    let time = p
        .list("target_time")?
        .map(<[f64]>::to_vec)
        .unwrap_or_default();
    let speed = p
        .list("target_speed")?
        .map(<[f64]>::to_vec)
        .unwrap_or_default();
    if time.len() != speed.len() {
        return Err(format!(
            "target_time has {} and target_speed {} entries; give the same number, or neither (then the input slot target_speed sets the target: inputs = {{ target_speed = \"...\" }})",
            time.len(),
            speed.len()
        ));
    }
    if time.windows(2).any(|w| w[1] <= w[0]) || time.iter().chain(&speed).any(|x| !x.is_finite()) {
        return Err("target_time must be strictly increasing and all values finite".into());
    }
    let torque_max = p.positive("torque_max")?;
    let brake = p.number("brake_torque_max")?;
    let brake_max = if brake.is_nan() {
        torque_max
    } else if brake > 0.0 && brake.is_finite() {
        brake
    } else {
        return Err(format!(
            "brake_torque_max = {brake} is not positive; give the brake torque limit in N m"
        ));
    };
    Ok(Arc::new(SpeedController {
        time,
        speed,
        kp: p.positive("kp")?,
        ki: p.non_negative("ki")?,
        torque_max,
        brake_max,
        s0: p.number("initial_integral")?,
        applied: match p.text("torque")? {
            None | Some("applied") => true,
            Some("output") => false,
            Some(other) => {
                return Err(format!(
                    "torque = \"{other}\": use \"applied\" (the torque acts between the wheel and carrier markers) or \"output\" (only the output `torque`, for another element's input slot)"
                ));
            }
        },
    }))
}

impl SpeedController {
    /// Target speed at time t (piecewise linear, constant outside the table), m/s; without a
    /// table the input slot's value `slot`.
    pub fn target(&self, t: f64, slot: f64) -> f64 {
        let n = self.time.len();
        if n == 0 {
            return slot;
        }
        if t <= self.time[0] {
            return self.speed[0];
        }
        if t >= self.time[n - 1] {
            return self.speed[n - 1];
        }
        let i = self.time.partition_point(|&x| x <= t) - 1;
        let w = (t - self.time[i]) / (self.time[i + 1] - self.time[i]);
        self.speed[i] + w * (self.speed[i + 1] - self.speed[i])
    }

    /// The PI law at `x`: (speed v, target, error e, u, torque T, dT/du).
    fn law(&self, x: &ElementInput) -> (f64, f64, f64, f64, f64, f64) {
        let m = x.markers;
        let v = m[0].v.dot(&m[0].rot.column(0));
        let target = self.target(x.t, x.inputs.first().copied().unwrap_or(0.0));
        let e = target - v;
        let u = self.kp * e + self.ki * x.states[0];
        let lim = if u >= 0.0 {
            self.torque_max
        } else {
            self.brake_max
        };
        let th = (u / lim).tanh();
        (v, target, e, u, lim * th, 1.0 - th * th)
    }
}

impl ElementLaw for SpeedController {
    fn kind(&self) -> &str {
        INFO.name
    }
    /// The own time table (if any) is read at `x.t`.
    fn reads_time(&self) -> bool {
        !self.time.is_empty()
    }
    fn n_markers(&self) -> usize {
        3
    }
    fn n_states(&self) -> usize {
        1
    }
    fn initial_states(&self, states: &mut [f64]) {
        states[0] = self.s0;
    }
    fn state_names(&self) -> Vec<String> {
        INFO.states.iter().map(|s| s.to_string()).collect()
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }
    fn inputs(&self) -> &[OutputInfo] {
        INPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let m = x.markers;
        let (v, target, e, u, torque, _) = self.law(x);
        let a: Vector3<f64> = if self.applied {
            m[1].rot.column(1).into()
        } else {
            Vector3::zeros()
        };
        out.force[0] = Vector3::zeros();
        out.force[1] = Vector3::zeros();
        out.force[2] = Vector3::zeros();
        out.torque[0] = Vector3::zeros();
        out.torque[1] = torque * a;
        out.torque[2] = -torque * a;
        out.state_rates[0] = e + (torque - u) / self.kp;
        out.outputs
            .copy_from_slice(&[torque, v, target, x.states[0]]);
    }

    /// Analytic (module docs). Rows: wheel torque 9..12, carrier torque 15..18, ṡ 18; columns:
    /// δφ₀ 3..6 and δφ₁ 9..12 (positions), δv₀ 0..3 and s 18 (velocities).
    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let m = x.markers;
        let (_, _, _, _, torque, d) = self.law(x);
        let a: Vector3<f64> = if self.applied {
            m[1].rot.column(1).into()
        } else {
            Vector3::zeros()
        };
        let x0: Vector3<f64> = m[0].rot.column(0).into();
        let dv_dphi = x0.cross(&m[0].v);
        let (kp, ki) = (self.kp, self.ki);
        // dT/dδφ₀ = −D k_p (x₀ × v₀)ᵀ, dT/dδv₀ = −D k_p x₀ᵀ, dT/ds = D k_i.
        let da = -torque * a.cross_matrix();
        for (row, sign) in [(9, 1.0), (15, -1.0)] {
            let t_phi = a * dv_dphi.transpose() * (-d * kp * sign);
            let t_v = a * x0.transpose() * (-d * kp * sign);
            jac.position
                .fixed_view_mut::<3, 3>(row, 3)
                .copy_from(&t_phi);
            jac.position
                .fixed_view_mut::<3, 3>(row, 9)
                .copy_from(&(da * sign));
            jac.velocity.fixed_view_mut::<3, 3>(row, 0).copy_from(&t_v);
            for k in 0..3 {
                jac.velocity[(row + k, 18)] = a[k] * d * ki * sign;
            }
        }
        for k in 0..3 {
            jac.position[(18, 3 + k)] = -d * dv_dphi[k];
            jac.velocity[(18, k)] = -d * x0[k];
        }
        jac.velocity[(18, 18)] = ki * (d - 1.0) / kp;
        Provided::ALL
    }

    /// Analytic: ∂v = x₀ᵀ δv₀ + (x₀ × v₀)ᵀ δφ₀ (the speed), ∂T = D (−k_p ∂v + k_i ∂s) (the
    /// torque), ∂s (the integral); the target has no marker or state partials.
    fn output_partials(
        &self,
        x: &ElementInput,
        output: usize,
        d_position: &mut [f64],
        d_velocity: &mut [f64],
    ) -> bool {
        let m = x.markers;
        let (_, _, _, _, _, d) = self.law(x);
        let x0: Vector3<f64> = m[0].rot.column(0).into();
        let dv_dphi = x0.cross(&m[0].v);
        let (dv, ds) = match output {
            0 => (-d * self.kp, d * self.ki),
            1 => (1.0, 0.0),
            2 => (0.0, 0.0),
            _ => (0.0, 1.0),
        };
        for k in 0..3 {
            d_position[3 + k] = dv * dv_dphi[k];
            d_velocity[k] = dv * x0[k];
        }
        d_velocity[18] = ds;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Rotation3;
    use sprung_mbs::element_law::{
        ElementScratch, difference_output_partials, difference_partials,
    };

    fn controller() -> SpeedController {
        SpeedController {
            time: vec![0.0, 6.0],
            speed: vec![1.4, 6.9],
            kp: 5000.0,
            ki: 2500.0,
            torque_max: 15000.0,
            brake_max: 9000.0,
            s0: 0.0,
            applied: true,
        }
    }

    fn marker(euler: (f64, f64, f64), v: [f64; 3], w: [f64; 3]) -> MarkerState {
        MarkerState {
            x: Vector3::new(0.3, -0.2, 0.5),
            rot: Rotation3::from_euler_angles(euler.0, euler.1, euler.2).into_inner(),
            v: Vector3::from(v),
            w: Vector3::from(w),
        }
    }

    /// Analytic partials equal the interface's central differences (step 6e-6) when driving,
    /// braking (at the brake limit) and deep in the saturation; bound: 1e-6 of the largest entry,
    /// the differences' truncation and round-off level.
    #[test]
    fn analytic_partials_match_differences() {
        let l = controller();
        for (speed, s) in [(2.0, 0.8), (3.5, -2.0), (0.5, 4.0)] {
            let m = [
                marker((0.02, -0.03, 0.4), [speed, 0.3, 0.05], [0.01, 0.02, 0.1]),
                marker((0.1, 0.5, 0.45), [speed, 0.2, 0.0], [0.2, 4.0, 0.1]),
                marker((0.1, 0.05, 0.45), [speed, 0.2, 0.0], [0.2, 0.0, 0.1]),
            ];
            let states = [s];
            let x = ElementInput {
                t: 1.3,
                markers: &m,
                states: &states,
                inputs: &[],
            };
            let mut an = ElementScratch::new(&l);
            an.evaluate_with_partials(&l, &x);
            let mut fd = ElementScratch::new(&l);
            fd.evaluate(&l, &x);
            difference_partials(&l, &x, &mut fd, true, true);
            let scale = an.d_velocity.amax().max(an.d_position.amax());
            let ep = (&an.d_position - &fd.d_position).amax();
            let ev = (&an.d_velocity - &fd.d_velocity).amax();
            assert!(
                ep < 1e-6 * scale && ev < 1e-6 * scale,
                "speed {speed}, s {s}: position {ep:e}, velocity {ev:e}, scale {scale:e}"
            );
            assert!(scale > 1.0, "the test exercises nonzero partials");
            // Every output's partials against the interface's differences, same bound.
            for o in 0..OUTPUTS.len() {
                let (mut ap, mut av) = ([0.0; 18], [0.0; 19]);
                let (mut fp, mut fv) = ([0.0; 18], [0.0; 19]);
                assert!(l.output_partials(&x, o, &mut ap, &mut av));
                difference_output_partials(&l, &x, &mut fd, o, &mut fp, &mut fv);
                let scale = ap.iter().chain(&av).fold(1.0_f64, |a, b| a.max(b.abs()));
                for (a, f) in ap.iter().chain(&av).zip(fp.iter().chain(&fv)) {
                    assert!((a - f).abs() < 1e-6 * scale, "output {o}: {a} vs {f}");
                }
            }
        }
    }

    /// With torque = "output" the element applies nothing and reports the same torque.
    #[test]
    fn output_only_controller_applies_no_torque() {
        let m = [
            marker((0.02, -0.03, 0.4), [2.0, 0.3, 0.05], [0.01, 0.02, 0.1]),
            marker((0.1, 0.5, 0.45), [2.0, 0.2, 0.0], [0.2, 4.0, 0.1]),
            marker((0.1, 0.05, 0.45), [2.0, 0.2, 0.0], [0.2, 0.0, 0.1]),
        ];
        let x = ElementInput {
            t: 1.3,
            markers: &m,
            states: &[0.8],
            inputs: &[],
        };
        let applied = controller();
        let output = SpeedController {
            applied: false,
            ..controller()
        };
        let (mut a, mut o) = (ElementScratch::new(&applied), ElementScratch::new(&output));
        a.evaluate_with_partials(&applied, &x);
        o.evaluate_with_partials(&output, &x);
        assert!(a.torque[1].norm() > 100.0);
        assert_eq!(o.torque[1].norm() + o.torque[2].norm(), 0.0);
        assert_eq!(a.outputs, o.outputs);
        assert_eq!(a.state_rates, o.state_rates);
        assert_eq!(o.d_position.rows(9, 9).amax(), 0.0);
        assert_eq!(o.d_velocity.rows(9, 9).amax(), 0.0);
    }
}
