//! The accelerator (`Simulation::accelerate`, docs/accelerate.md; document 004's symbolic
//! accelerator) on the kinematic reduced car of issue 15: the generated evaluation path gives
//! the generic code's accelerations to round-off and the same run, allocates nothing per step,
//! and a model it cannot accelerate is refused with a message that says why.

use std::path::PathBuf;
use std::sync::Arc;

use sprung::kin_reduce::kinematic_reduction;
use sprung::kin_tables::KinOptions;
use sprung::{AccelOptions, Model, Simulation};
use sprung_test_support::{CountingAllocator, allocations, model_path};

#[allow(dead_code)] // the shared helpers this file does not use
mod common;
use common::run;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The tests' plugin cache (inside the build's target directory).
fn options() -> AccelOptions {
    AccelOptions {
        cache_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("accel")),
        ..AccelOptions::default()
    }
}

/// The kinematic reduced car on the turn entry compressed into 1 s (steering ramp 0.1 → 0.4 s).
fn kinematic_car() -> Arc<Model> {
    let d = sprung_model::load(&model_path("car_dw_ml.toml")).unwrap_or_else(|e| panic!("{e}"));
    let d = d
        .with_parameters(&[
            ("inputs.steering_wheel_angle.signal.start_time", 0.1),
            ("inputs.steering_wheel_angle.signal.end_time", 0.4),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    let full = Model::from_description(d).unwrap_or_else(|e| panic!("{e}"));
    let red = kinematic_reduction(
        &full,
        &KinOptions::default(),
        "tables",
        &mut |_, _, _, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Model::from_description(red.model).unwrap_or_else(|e| panic!("{e}"))
}

/// q at states along a run, with and without the plugin: the same to round-off (the generated
/// tree kinematics and projection perform the generic operations in the generic order, bit for
/// bit; the generated point-to-point elements add one wrench per marker pair where the packs add
/// one per element and fuse multiply-adds in AVX2 lanes: measured ≤ 9e-14 of the largest |q|
/// (≈ 1e-16 of the spring and stop forces, which largely cancel on the chassis), asserted
/// ≤ 1e-12; the message gives the size).
#[test]
fn the_kinematic_car_accelerated_has_the_generic_accelerations() {
    let m = kinematic_car();
    let mut s = m.default_settings();
    s.relinearise_every = 50;
    let mut plain = Simulation::with_settings(m.clone(), s.clone()).unwrap();
    let mut fast = Simulation::with_settings(m.clone(), s).unwrap();
    let built = fast
        .accelerate(&options())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(fast.is_accelerated() && !plain.is_accelerated());
    assert!(built.library.is_file());
    for k in 0..6 {
        plain.advance_to(0.1 * k as f64).unwrap();
        fast.set_state(&plain.state()).unwrap();
        let (qa, qb) = (plain.accelerations(), fast.accelerations());
        let scale = qa.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let d = qa
            .iter()
            .zip(&qb)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        eprintln!(
            "t = {:.1} s: |q| {scale:.3e}, largest difference {:.2e} of it",
            plain.time(),
            d / scale
        );
        assert!(
            d <= 1e-12 * scale,
            "t = {} s: {:e}",
            plain.time(),
            d / scale
        );
    }
}

/// The whole compressed turn entry (1 s, LSRT2 1 ms re-linearised every 50 steps) with and
/// without the plugin: every channel the same to round-off (as q above; measured 4e-12 of the
/// channel's range, the steering torque; asserted ≤ 1e-9).
#[test]
fn the_kinematic_car_accelerated_runs_the_generic_run() {
    let m = kinematic_car();
    let mut s = m.default_settings();
    s.relinearise_every = 50;
    s.output_interval = 0.01;
    let mut plain = Simulation::with_settings(m.clone(), s.clone()).unwrap();
    let mut fast = Simulation::with_settings(m.clone(), s.clone()).unwrap();
    fast.accelerate(&options())
        .unwrap_or_else(|e| panic!("{e}"));
    let (a, b) = (run(&mut plain, &s, 1.0), run(&mut fast, &s, 1.0));
    let mut worst = (0.0f64, String::new());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        let (lo, hi) = x
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        let range = (hi - lo).max(1e-300);
        let d = x
            .iter()
            .zip(y)
            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()))
            / range;
        if d > worst.0 {
            worst = (d, name.clone());
        }
    }
    eprintln!(
        "largest difference {:.2e} of the channel's range ({})",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1e-9, "{}: {:e}", worst.1, worst.0);
}

/// LSRT2 steps of the accelerated kinematic car allocate nothing (re-linearising every step and
/// every 5 steps; 20 warm-up steps, then 100 counted).
#[test]
fn accelerated_steps_do_not_allocate() {
    let m = kinematic_car();
    for every in [1, 5] {
        let mut s = m.default_settings();
        s.relinearise_every = every;
        let mut sim = Simulation::with_settings(m.clone(), s).unwrap();
        sim.accelerate(&options()).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..20 {
            sim.step().unwrap();
        }
        let before = allocations();
        for _ in 0..100 {
            sim.step().unwrap();
        }
        assert_eq!(allocations() - before, 0, "every {every}");
    }
}

/// A model without joints is refused with the reason, and the simulation stays generic.
#[test]
fn a_model_without_joints_is_refused_with_the_reason() {
    let m = Model::from_file(model_path("double_wishbone.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(m).unwrap();
    let err = sim.accelerate(&options()).expect_err("no joints");
    assert!(err.to_string().contains("has no joints"), "{err}");
    assert!(!sim.is_accelerated());
}
