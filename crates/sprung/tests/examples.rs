//! The examples of `examples/` run in the test suite, with their results checked.

#[allow(dead_code)]
#[path = "../examples/open_loop_csv.rs"]
mod open_loop_csv;

#[allow(dead_code)]
#[path = "../examples/closed_loop_pd.rs"]
mod closed_loop_pd;

#[allow(dead_code)]
#[path = "../examples/snapshot_restore.rs"]
mod snapshot_restore;

#[allow(dead_code)]
#[path = "../examples/accelerate.rs"]
mod accelerate;

use sprung::{Model, Simulation};
use sprung_model::Signal;

#[test]
fn open_loop_example_writes_every_output_row() {
    let dir = std::env::temp_dir().join(format!("sprung_open_loop_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("open_loop.csv");
    let rows = open_loop_csv::run(&out, 0.5).unwrap();
    assert_eq!(rows, 501, "t = 0 .. 0.5 s every 1 ms");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 502);
    assert!(text.starts_with("time [s],wc_dx_L [m]"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn snapshot_example_continues_bit_for_bit() {
    for every in [1, 5, 3] {
        let (a, b, bytes) = snapshot_restore::run(every).unwrap();
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "relinearise every {every}: {a:e} vs {b:e}"
        );
        assert!(bytes > 100);
    }
}

/// The PD loop holds the wheel centre where linear feedback theory puts it: at steady state the
/// suspension's extra force k_w Δz_reached equals the controller's K_p (Δz − Δz_reached), so the
/// remaining error is Δz k_w / (k_w + K_p). The wheel rate k_w is measured independently with
/// two static equilibria of the facade (Fz = 5000 and 5400 N, about the force the loop ends at).
/// Tolerance 3 % of the predicted error: the suspension is not exactly linear over the 8 mm
/// (the secant rate over 5000-5400 N stands for it); measured 0.4 %.
#[test]
fn closed_loop_example_holds_the_target_as_predicted() {
    let o = closed_loop_pd::run(2.0).unwrap();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/double_wishbone.toml"
    );
    let mut d = sprung_model::load(std::path::Path::new(path)).unwrap();
    for u in d.inputs.iter_mut().filter(|u| u.name == "Fz_L") {
        u.signal = Signal::Runtime { default: 5000.0 };
    }
    let mut sim = Simulation::new(Model::from_description(d).unwrap()).unwrap();
    let z0 = sim.channel("wc_dz_L").unwrap();
    sim.set_input("Fz_L", 5400.0).unwrap();
    sim.equilibrium().unwrap();
    let z1 = sim.channel("wc_dz_L").unwrap();
    let k_w = 400.0 / (z1 - z0);
    let predicted = closed_loop_pd::LIFT * k_w / (k_w + closed_loop_pd::KP);
    let error = o.z_target - o.z_final;
    assert!((o.z_static - z0).abs() < 1e-12, "same static start");
    assert!(
        (error - predicted).abs() < 0.03 * predicted,
        "error {error:e} m, predicted {predicted:e} m (k_w {k_w:.0} N/m)"
    );
    assert!(
        o.late_variation < 1e-6,
        "settled: {:e} m over the last 0.2 s",
        o.late_variation
    );
}

/// The accelerator example: the plugin is built into the given cache, and the accelerated run's
/// channels are the generic run's to round-off (the generated tree kinematics are bit-identical,
/// the point-to-point elements agree to round-off, docs/accelerate.md).
#[test]
fn accelerate_example_runs_the_generic_numbers() {
    let cache = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("accel-example");
    let (largest, built) = accelerate::run(1.0, Some(cache.clone())).unwrap();
    eprintln!("largest difference {largest:e}");
    assert!(largest <= 1e-12, "{largest:e}");
    assert!(built.library.starts_with(&cache) && built.library.is_file());
}
