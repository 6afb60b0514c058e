//! `sprung accelerate` and `sprung run --accelerate` (docs/accelerate.md): the plugin of a model
//! with joints is compiled once and then found in the cache, a run with it writes the generic
//! run's results to round-off and records the plugin in its metadata, and a model without joints
//! is refused with the reason.

mod common;

use std::path::Path;
use std::process::Command;

use common::{read_csv, root, text};

fn sprung(args: &[&str], cache: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(args)
        .current_dir(root())
        .env("SPRUNG_ACCEL_DIR", cache)
        .output()
        .expect("sprung runs")
}

#[test]
fn accelerate_caches_and_run_accelerate_matches_the_generic_run() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accelerate_cli");
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("cache");
    let o = sprung(&["accelerate", "models/joint_tabulated.toml"], &cache);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("generated") && t.contains("compiled with rustc"),
        "{t}"
    );
    let o = sprung(&["accelerate", "models/joint_tabulated.toml"], &cache);
    let t = text(&o);
    assert!(
        o.status.success() && t.contains("found in the cache"),
        "{t}"
    );
    let library = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(Path::new(&library).is_file(), "{library}");

    let mut results = Vec::new();
    for (name, extra) in [("generic", None), ("accelerated", Some("--accelerate"))] {
        let out = dir.join(name);
        let out_s = out.to_string_lossy().into_owned();
        let mut args = vec![
            "run",
            "models/joint_tabulated.toml",
            "--t-end",
            "1",
            "-q",
            "--out",
            &out_s,
        ];
        args.extend(extra);
        let o = sprung(&args, &cache);
        assert!(o.status.success(), "{}", text(&o));
        let meta = std::fs::read_to_string(out.join("results.csv.meta.json")).expect("meta");
        assert_eq!(meta.contains(&library), extra.is_some(), "{meta}");
        results.push(read_csv(&out.join("results.csv")).1);
    }
    let (a, b) = (&results[0], &results[1]);
    assert_eq!(a.len(), b.len());
    // Per channel: the same values to round-off (the generated tree kinematics perform the
    // generic operations in the generic order, the generated point-to-point elements agree with
    // the packs to round-off; docs/accelerate.md); the message gives the difference relative to
    // the channel's range.
    for c in 1..a[0].len() {
        let (lo, hi) = a
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), r| {
                (l.min(r[c]), h.max(r[c]))
            });
        let d = a
            .iter()
            .zip(b)
            .fold(0.0f64, |m, (x, y)| m.max((x[c] - y[c]).abs()));
        assert!(
            d <= 1e-10 * (hi - lo),
            "channel {c}: {:e} of its range",
            d / (hi - lo).max(1e-300)
        );
    }
}

#[test]
fn a_model_without_joints_is_refused_with_the_reason() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accelerate_cli_refused");
    let o = sprung(
        &["accelerate", "models/double_wishbone.toml"],
        &dir.join("cache"),
    );
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("has no joints") && t.contains("generic"), "{t}");
}

/// `sprung bench --accelerate`: the rows run with the plugin (marked in the JSON) and measure
/// the generic rows' errors to the bit (the same runs); the reference stays generic.
#[test]
fn bench_accelerate_marks_its_rows_and_measures_the_same_errors() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accelerate_cli_bench");
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("cache");
    let out = dir.join("bench");
    let out_s = out.to_string_lossy().into_owned();
    let mut docs = Vec::new();
    for extra in [None, Some("--accelerate")] {
        let mut args = vec![
            "bench",
            "--models",
            "models/joint_tabulated.toml",
            "--displacement",
            "slider_x",
            "--force",
            "arm_x",
            "--t-end",
            "1",
            "--window",
            "0.2:1.0",
            "--reference",
            "lsrt2:1e-4",
            "--repeat",
            "1",
            "--linear-solvers",
            "dense",
            "--relinearise",
            "1,5",
            "--out",
            &out_s,
            "--json",
        ];
        args.extend(extra);
        let o = sprung(&args, &cache);
        assert!(o.status.success(), "{}", text(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(doc["models"][0]["accelerated"], extra.is_some(), "{doc}");
        docs.push(doc);
    }
    let rows = |d: &serde_json::Value| d["models"][0]["rows"].as_array().expect("rows").clone();
    let (ra, rb) = (rows(&docs[0]), rows(&docs[1]));
    assert_eq!(ra.len(), 2);
    for (k, (a, b)) in ra.iter().zip(&rb).enumerate() {
        // (The runs agree to round-off: the errors against the reference to far more digits
        // than they have.)
        assert!(close(&a["nmse"], &b["nmse"]), "row {k}: {a} vs {b}");
        assert_eq!(a["linearisations"], b["linearisations"], "row {k}");
    }
}

/// Whether two JSON values are equal but for numbers, which agree to 1e-6 of their magnitude.
fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-6 * x.abs().max(y.abs())
        }
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| close(p, q)))
        }
        _ => a == b,
    }
}

/// A coordinate leaving its kinematic table with `--accelerate`: the generated spline groups leave
/// the excursion to the engine's generic code, so the run reports it exactly as without the plugin
/// (the arm of models/joint_tabulated.toml started at 20 rad/s swings beyond the table's ±1 rad),
/// and the results are the generic run's (to round-off: the point-to-point elements).
#[test]
fn a_coordinate_leaving_its_table_is_reported_with_the_plugin_too() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accelerate_cli_excursion");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let table = root().join("models/tables/joint_tabulated_arm.toml");
    let src = std::fs::read_to_string(root().join("models/joint_tabulated.toml"))
        .unwrap()
        .replace(
            "tables/joint_tabulated_arm.toml",
            table.canonicalize().unwrap().to_str().unwrap(),
        )
        .replace("z0 = 0.4 }", "z0 = 0.4, zd0 = 20.0 }");
    let model = dir.join("fast_swing.toml");
    std::fs::write(&model, src).unwrap();
    let mut results = Vec::new();
    for (name, extra) in [("generic", None), ("accelerated", Some("--accelerate"))] {
        let out = dir.join(name);
        let (m, o) = (model.to_string_lossy(), out.to_string_lossy());
        let mut args = vec!["run", &m, "--t-end", "0.5", "--out", &o, "-q"];
        args.extend(extra);
        let r = sprung(&args, &dir.join("cache"));
        let t = text(&r);
        assert!(r.status.success(), "{name}: {t}");
        assert!(
            t.contains(
                "warning: body 'arm': its own coordinate (table axis 2) left the table's range [-1, 1]"
            ),
            "{name}: {t}"
        );
        results.push(read_csv(&out.join("results.csv")).1);
    }
    let (a, b) = (&results[0], &results[1]);
    assert_eq!(a.len(), b.len());
    let scale = a.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let d = a
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-10 * scale, "{:e} of the largest value", d / scale);
}

/// Without a usable compiler `sprung accelerate` and `sprung run --accelerate` fail with the
/// reason and the fix (SPRUNG_RUSTC), the OS error said once, and the run writes nothing.
#[test]
fn a_missing_compiler_is_reported_with_the_fix() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accelerate_cli_no_rustc");
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    for args in [
        vec!["accelerate", "models/joint_slider.toml"],
        vec![
            "run",
            "models/joint_slider.toml",
            "--accelerate",
            "-q",
            "--out",
            &out_s,
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_sprung"))
            .args(&args)
            .current_dir(root())
            .env("SPRUNG_ACCEL_DIR", dir.join("cache"))
            .env("SPRUNG_RUSTC", dir.join("no-such-rustc"))
            .output()
            .expect("sprung runs");
        let t = text(&o);
        assert!(!o.status.success(), "{t}");
        assert!(
            t.contains("needs the Rust compiler") && t.contains("SPRUNG_RUSTC"),
            "{t}"
        );
        assert_eq!(t.matches("os error").count(), 1, "{t}");
    }
    assert!(!out.join("results.csv").exists());
}
