//! `sprung bench` runs what `sprung run` runs: the reference it caches is `sprung run`'s result
//! with the same method and step, and the NMSE it reports for a row is that of `sprung run`'s
//! result with the row's settings against that reference (`sprung_io::compare`); so is its error
//! against the reference's mean square (`nmse_mean_square`).
//!
//! The model is the standard linear solid of `models/maxwell_solid.toml` started from static
//! equilibrium under 100 N (the Maxwell element's damper elongation, an element state, is then
//! 0.1 m, its spring force 0) with a step to 150 N at 0.3 s. A bench that sets up its runs on its
//! own can miss what the facade's static equilibrium leaves (the element states: the bench once
//! zeroed them, so its runs started with 1000 N in the Maxwell spring).

use std::path::Path;

mod common;

use common::{sprung_ok as sprung, sprung_output, text};
use sprung_io::{Window, compare, read_results};

/// `models/maxwell_solid.toml` from static equilibrium under 100 N, force step to 150 N at 0.3 s.
fn maxwell_at_equilibrium(dir: &Path) -> String {
    let src = std::fs::read_to_string(common::root().join("models/maxwell_solid.toml")).unwrap();
    let step = r#"signal = { type = "step", time = 0.0, before = 0.0, after = 100.0 }"#;
    let interval = "output_interval = 1e-3\n";
    assert!(src.contains(step) && src.contains(interval));
    let model = src
        .replacen(
            interval,
            "output_interval = 1e-3\n\n[initial_state]\nkind = \"equilibrium\"\n",
            1,
        )
        .replace(
            step,
            r#"signal = { type = "step", time = 0.3, before = 100.0, after = 150.0 }"#,
        );
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("maxwell_eq.toml");
    std::fs::write(&path, model).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn bench_runs_and_nmse_are_those_of_sprung_run_for_a_model_with_element_states() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_runs");
    let _ = std::fs::remove_dir_all(&dir);
    let model = maxwell_at_equilibrium(&dir);
    let (bench_out, run_out) = (dir.join("bench"), dir.join("run"));
    let o = sprung_output(&[
        "bench",
        "--models",
        &model,
        "--displacement",
        "x",
        "--force",
        "maxwell_force",
        "--t-end",
        "1",
        "--window",
        "0.2:1.0",
        "--reference",
        "lsrt2:1e-4",
        "--repeat",
        "1",
        "--linear-solvers",
        "block-sparse",
        "--solver",
        "pie",
        "--relinearise",
        "5",
        "--out",
        bench_out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &doc["models"][0]["rows"][0];
    assert_eq!(row["relinearise_every"], 5, "{doc}");

    let run_dir = run_out.to_str().unwrap();
    for (name, extra) in [
        ("pie", &["--solver", "pie", "--relinearise-every", "5"][..]),
        ("reference", &["--solver", "lsrt2", "--step", "1e-4"][..]),
    ] {
        let mut args = vec![
            "run",
            &model,
            "--t-end",
            "1",
            "--linear-solver",
            "block-sparse",
            "--out",
            run_dir,
            "--name",
            name,
            "-q",
        ];
        args.extend_from_slice(extra);
        sprung(&args);
    }

    // The cached reference is `sprung run`'s LSRT2 at 0.1 ms, value for value.
    let bench_ref = read_results(bench_out.join("maxwell_eq").join("reference.csv")).unwrap();
    let run_ref = read_results(run_out.join("reference.csv")).unwrap();
    assert_eq!(bench_ref.time, run_ref.time);
    for ch in ["x", "maxwell_force", "damper_elongation"] {
        let (b, r) = (bench_ref.column(ch).unwrap(), run_ref.column(ch).unwrap());
        if let Some(i) = (0..b.len()).find(|&i| b[i].to_bits() != r[i].to_bits()) {
            panic!(
                "reference channel {ch} at t = {} s: bench {:e}, sprung run {:e}",
                bench_ref.time[i], b[i], r[i]
            );
        }
    }
    // At equilibrium the Maxwell spring carries nothing.
    assert!(bench_ref.column("maxwell_force").unwrap()[0].abs() < 1e-6);

    // The row's NMSE is that of `sprung run`'s pie result against the reference.
    let pie = read_results(run_out.join("pie.csv")).unwrap();
    let errs = compare(
        &pie,
        &bench_ref,
        &["x", "maxwell_force"],
        Window::new(0.2, 1.0),
    )
    .unwrap();
    for (e, ch) in errs.iter().zip(["x", "maxwell_force"]) {
        let bench = row["nmse"][ch].as_f64().unwrap();
        assert!(
            (bench - e.nmse).abs() <= 1e-12 * e.nmse.abs(),
            "{ch}: bench NMSE {bench:e}, sprung run's {:e}",
            e.nmse
        );
        // And the error against the reference's mean square, summed here on the common times.
        let (x, xr) = (pie.column(ch).unwrap(), bench_ref.column(ch).unwrap());
        let (mut se, mut sr) = (0.0, 0.0);
        for (i, t) in pie.time.iter().enumerate() {
            if (0.2..=1.0).contains(t) {
                let j = bench_ref
                    .time
                    .iter()
                    .position(|s| (s - t).abs() < 1e-9)
                    .unwrap();
                se += (x[i] - xr[j]).powi(2);
                sr += xr[j].powi(2);
            }
        }
        let ms = row["nmse_mean_square"][ch].as_f64().unwrap();
        assert!(
            (ms - se / sr).abs() <= 1e-9 * ms,
            "{ch}: bench {ms:e}, by hand {:e}",
            se / sr
        );
    }
}
