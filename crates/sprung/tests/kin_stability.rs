//! The kinematic reduced car (`sprung reduce --variant kinematic`, docs/macro-joint.md "The
//! kinematic reduced car") with a lagged Jacobian and with explicit Euler at 1 ms (issue 15,
//! document 004's real-time settings): its wheels start free rolling as the full car's (the
//! element laws are built at the jointed bodies' design velocity, which is their parent's
//! motion), so LSRT2 re-linearising every 20 or 50 steps, or adaptively, follows the run
//! re-linearised every step; explicit Euler at 1 ms is limited by the tires' Dahl brake state
//! alone (stable for h |Ω_r| / φ_s < 2).

use std::sync::Arc;

use sprung::kin_reduce::kinematic_reduction;
use sprung::kin_tables::KinOptions;
use sprung::{Model, RunSettings, Simulation, StopReason};
use sprung_test_support::model_path;

mod common;
use common::{col, run};

/// The turn entry with the steering ramp moved to `start` → `end` s (the full car).
fn full_car(start: f64, end: f64) -> Arc<Model> {
    let d = sprung_model::load(&model_path("car_dw_ml.toml")).unwrap_or_else(|e| panic!("{e}"));
    let d = d
        .with_parameters(&[
            ("inputs.steering_wheel_angle.signal.start_time", start),
            ("inputs.steering_wheel_angle.signal.end_time", end),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    Model::from_description(d).unwrap_or_else(|e| panic!("{e}"))
}

/// The kinematic reduction's description.
fn reduce(full: &Model) -> sprung_model::Model {
    kinematic_reduction(full, &KinOptions::default(), "tables", &mut |_, _, _, _| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .model
}

/// The kinematic car with every tire's brake stick angle φ_s set (`None`: the default 2e-3 rad).
fn kinematic_car(full: &Model, stick_angle: Option<f64>) -> Arc<Model> {
    let mut d = reduce(full);
    if let Some(phi) = stick_angle {
        for e in d.elements.iter_mut().filter(|e| e.name.ends_with(".tire")) {
            e.parameters.insert(
                "brake_stick_angle".into(),
                sprung_model::ParamValue::Number(phi),
            );
        }
    }
    Model::from_description(d).unwrap_or_else(|e| panic!("{e}"))
}

fn nmse(a: &[f64], reference: &[f64]) -> f64 {
    let e: f64 = a.iter().zip(reference).map(|(x, y)| (x - y).powi(2)).sum();
    let v: f64 = reference.iter().map(|y| y * y).sum();
    e / v
}

/// Largest distance between two x-y paths, m.
fn path_deviation(a: &[(String, Vec<f64>)], b: &[(String, Vec<f64>)]) -> f64 {
    col(a, "x")
        .iter()
        .zip(col(a, "y"))
        .zip(col(b, "x").iter().zip(col(b, "y")))
        .map(|((xa, ya), (xb, yb))| (xa - xb).hypot(ya - yb))
        .fold(0.0f64, f64::max)
}

/// A run of `m` from its initial state with `s` to `t_end`: the report and the channels.
fn run_report(
    m: &Arc<Model>,
    s: &RunSettings,
    t_end: f64,
) -> (sprung::RunReport, Vec<(String, Vec<f64>)>) {
    let mut sim = Simulation::new(m.clone()).unwrap();
    let names: Vec<String> = m
        .channel_names()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let report = sim.run_with(s, t_end, &mut |_, row| {
        for (c, v) in cols.iter_mut().zip(row) {
            c.push(*v);
        }
        sprung::Control::Continue
    });
    (report, names.into_iter().zip(cols).collect())
}

const TIRES: [&str; 4] = [
    "tire_fl.tire",
    "tire_fr.tire",
    "tire_rl.tire",
    "tire_rr.tire",
];

/// The tires' initial spin Ω (free rolling at the design velocity, the element's default) on
/// the kinematic car equals the full car's, where the carriers are free bodies with the
/// declared initial velocity: the kinematic car's carriers are jointed (no velocity of their
/// own) and the laws are built at their design motion with the chassis. Before, they were
/// built at rest, so the wheels started at Ω = 0 and the car braked with F_x ≈ −3.4 kN per
/// tire in its first milliseconds while the wheels spun up — the brake state's rate
/// −|Ω_r|/φ_s grew from 0 to ≈ −1.4e4 1/s within 20 steps, which a Jacobian from t = 0 could
/// not integrate (LSRT2 every 20 steps stopped at t = 0.02 s). Bound: round-off (the same
/// contact evaluated at velocities that agree to round-off; measured 0).
#[test]
fn the_kinematic_cars_wheels_start_free_rolling_as_the_full_cars() {
    let full = full_car(2.0, 3.0);
    let kin = kinematic_car(&full, None);
    let design = |m: &Arc<Model>| Simulation::with_settings(m.clone(), m.default_settings());
    let (sf, sk) = (design(&full).unwrap(), design(&kin).unwrap());
    for t in TIRES {
        let wf = sf.element_states(t).unwrap()[3];
        let wk = sk.element_states(t).unwrap()[3];
        eprintln!("{t}: initial spin {wk} rad/s (full car {wf})");
        // 20 m/s on a rolling radius of about 0.31 m.
        assert!(wf > 60.0 && wf < 70.0, "{t}: {wf}");
        assert!((wk - wf).abs() <= 1e-12 * wf, "{t}: {wk} vs {wf}");
    }
}

/// LSRT2 at 1 ms re-linearising every 20 steps, every 50 steps, and every 50 or when a lagged
/// step's error indicator exceeds 1e-7 or 1e-8 m (`--relinearise-stale`), against LSRT2
/// re-linearising every step: 1.2 s of the turn entry with the steering ramp at 0.2 → 0.7 s
/// (the ramp's transient inside the span). All complete; measured NMSE of a_y 7.3e-14 /
/// 9.1e-13 / 5.6e-13 (12 stale re-linearisations) / 1.7e-15 (121), paths 0.20 / 0.83 / 0.53 /
/// 0.020 µm apart; bounds ≈ 2.5× the measured (a lagged Jacobian changes the W-method's error
/// constant, not its order; the adaptive level trades linearisations for accuracy).
#[test]
fn lsrt2_with_a_lagged_jacobian_follows_the_run_re_linearised_every_step() {
    let full = full_car(0.2, 0.7);
    let kin = kinematic_car(&full, None);
    let t_end = 1.2;
    let lsrt2 = |every: u64, stale: Option<f64>| {
        let mut s = kin.default_settings();
        s.output_interval = 0.01;
        s.relinearise_every = every;
        s.relinearise_stale = stale;
        let (report, out) = run_report(&kin, &s, t_end);
        assert_eq!(
            report.stop,
            StopReason::Completed,
            "every {every}: {report:?}"
        );
        (out, report.summary.stats)
    };
    let (reference, _) = lsrt2(1, None);
    for (every, stale, ay_bound, path_bound) in [
        (20, None, 2e-13, 5e-7),
        (50, None, 2.5e-12, 2e-6),
        (50, Some(1e-7), 1.5e-12, 1.5e-6),
        (50, Some(1e-8), 5e-15, 5e-8),
    ] {
        let (out, stats) = lsrt2(every, stale);
        let ay = nmse(col(&out, "ay"), col(&reference, "ay"));
        let dev = path_deviation(&out, &reference);
        eprintln!(
            "every {every}, stale {stale:?}: NMSE ay {ay:e}, path {dev:e} m, {} linearisations ({} stale)",
            stats.linearisations, stats.stale_relinearisations
        );
        assert!(ay < ay_bound, "every {every}: NMSE ay {ay:e}");
        assert!(dev < path_bound, "every {every}: path {dev:e} m");
        if stale.is_some() {
            assert!(stats.stale_relinearisations > 0, "{stats:?}");
        }
    }
}

/// Explicit Euler at 1 ms on the kinematic car: what limits it is the tires' Dahl brake state
/// alone, ż = Ω_r − |Ω_r| z/φ_s, whose rate |Ω_r|/φ_s (≈ 66 rad/s / φ_s at 20 m/s) Euler
/// integrates stably for h |Ω_r| / φ_s < 2, i.e. φ_s > 0.033 rad — even without any brake
/// torque (the state is decoupled then, and its explicit update grows by |1 − h|Ω_r|/φ_s|
/// per step until it overflows). φ_s = 0.01 rad (factor 5.6 per step) stops within 1 s;
/// φ_s = 0.04 rad runs and agrees with LSRT2 (every step, default φ_s; without brake torque the
/// stick angle changes nothing else) over 1.5 s of the turn entry: measured NMSE of a_y 3.1e-7,
/// path 4.1 mm (bounds 1e-6, 6 mm: Euler's first-order error). Everything else of the
/// kinematic car — the rack and column, the suspension on its tables — runs at 1 ms as it is.
#[test]
fn explicit_euler_at_1_ms_is_limited_by_the_brake_state_alone() {
    let full = full_car(0.2, 0.7);
    let euler = |m: &Arc<Model>, t_end: f64| {
        let mut s = m.default_settings();
        s.method = "ode1".into();
        s.step = 1e-3;
        s.output_interval = 0.01;
        run_report(m, &s, t_end)
    };
    let (report, _) = euler(&kinematic_car(&full, Some(0.01)), 1.0);
    eprintln!(
        "phi_s = 0.01: {:?} at {}",
        report.stop, report.summary.t_reached
    );
    assert_ne!(report.stop, StopReason::Completed);
    let (report, ode1) = euler(&kinematic_car(&full, Some(0.04)), 1.5);
    assert_eq!(report.stop, StopReason::Completed, "{report:?}");
    let kin = kinematic_car(&full, None);
    let mut s = kin.default_settings();
    s.output_interval = 0.01;
    let lsrt2 = run(&mut Simulation::new(kin.clone()).unwrap(), &s, 1.5);
    let ay = nmse(col(&ode1, "ay"), col(&lsrt2, "ay"));
    let dev = path_deviation(&ode1, &lsrt2);
    eprintln!("phi_s = 0.04: ode1 vs lsrt2, 1.5 s: NMSE ay {ay:e}, path {dev:e} m");
    assert!(ay < 1e-6, "{ay:e}");
    assert!(dev < 6e-3, "{dev:e}");
}
