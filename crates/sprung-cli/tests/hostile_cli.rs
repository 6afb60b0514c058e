//! Hostile command lines (issue 17 items 2, 3, 4, 6, 9, 10): every rejected run leaves existing
//! results untouched and creates nothing; errors name the flag or the file and line; no panic;
//! curves with `extrapolation = "error"` stop the run at the right time; `metrics` and the
//! `compare` adjustments reproduce independent expectations.

mod common;

use std::path::{Path, PathBuf};

use common::{root, sprung_output, text};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn rejected_runs_touch_nothing_and_name_the_flag() {
    let out = tmp("rejected");
    let sentinel = out.join("results.csv");
    std::fs::write(&sentinel, "time,x\n0,1\n").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--step=-1e-3"], "--step"),
        (&["--step", "-1e-3"], "--step"),
        (&["--step", "inf"], "--step"),
        (&["--step", "nan"], "--step"),
        (&["--step", "7e-4"], "does not divide t_end"),
        (&["--solver", "rodas4", "--rtol", "-1"], "--rtol"),
        (&["--solver", "rodas4", "--rtol", "1e10"], "--rtol"),
        (&["--solver", "rodas4", "--atol", "0"], "--atol"),
        // A tolerance a fixed-step method would ignore is an error, not silence.
        (&["--solver", "rk4", "--rtol", "1e-3"], "drop --rtol/--atol"),
        (&["--solver", "rk4", "--atol", "1e-6"], "drop --rtol/--atol"),
        (
            &["--solver", "lsrt2", "--rtol", "1e-3"],
            "drop --rtol/--atol",
        ),
        (&["--solver", "pie", "--atol", "1e-6"], "drop --rtol/--atol"),
        (&["--output-interval", "1e-4"], "--output-interval"),
        (
            &["--output-interval", "1.5e-3"],
            "nearest valid output intervals are 0.001 and 0.002",
        ),
        (&["--t-end", "0"], "--t-end"),
        (&["--relinearise-every", "0"], "--relinearise-every"),
        (&["--relinearise-stale", "0"], "--relinearise-stale"),
        (&["--relinearise-stale", "nan"], "--relinearise-stale"),
        (
            &["--solver", "pie", "--relinearise-stale", "5e-8"],
            "leave relinearise_stale out",
        ),
        (&["--name", ""], "result name is empty"),
        (&["--name", "a/b"], "path separator"),
        (&["--solver", "nosuch"], "nosuch"),
    ];
    for (extra, expect) in cases {
        let mut args = vec!["run", "models/mass_spring_damper.toml", "--quiet"];
        let o_s = s(&out);
        args.extend_from_slice(&["--out", &o_s]);
        args.extend_from_slice(extra);
        let o = sprung_output(&args);
        let t = text(&o);
        assert!(!o.status.success(), "{extra:?} was accepted: {t}");
        assert!(!t.contains("panicked"), "{extra:?}: {t}");
        assert!(t.contains(expect), "{extra:?}: expected '{expect}' in: {t}");
        assert_eq!(
            std::fs::read_to_string(&sentinel).unwrap(),
            "time,x\n0,1\n",
            "{extra:?} touched the existing results"
        );
        let files: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
        assert_eq!(files.len(), 1, "{extra:?} created files");
    }
}

#[test]
fn model_file_mistakes_fail_check_with_file_and_line() {
    let d = tmp("check");
    let base = std::fs::read_to_string(root().join("models/mass_spring_damper.toml")).unwrap();
    // Unknown solver name: located at the [solver] table.
    let solver_line = base
        .lines()
        .position(|l| l.trim_start().starts_with("[solver]"))
        .unwrap()
        + 1;
    let m = d.join("solver.toml");
    std::fs::write(&m, base.replace("method = \"lsrt2\"", "method = \"lsrt9\"")).unwrap();
    let o = sprung_output(&["check", &s(&m)]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains(&format!("{}:{solver_line}: solver", s(&m))),
        "{t}"
    );
    assert!(t.contains("lsrt9"), "{t}");
    // A step that does not divide t_end fails `check` (same function as `run`).
    let m = d.join("grid.toml");
    std::fs::write(&m, base.replace("step = 1e-3", "step = 7e-4")).unwrap();
    let t = text(&sprung_output(&["check", &s(&m)]));
    assert!(t.contains("does not divide t_end"), "{t}");
    // The n-th force element is named, the offending key's line given.
    let m = d.join("fe.toml");
    std::fs::write(&m, base.replace("damping = 2.0", "damping = \"2\"")).unwrap();
    let t = text(&sprung_output(&["check", &s(&m)]));
    let key_line = base
        .lines()
        .position(|l| l.starts_with("damping = 2.0"))
        .unwrap()
        + 1;
    assert!(t.contains(&format!("{}:{key_line}:", s(&m))), "{t}");
    assert!(t.contains("[[force_elements]] #2 'damper'"), "{t}");
    // JSON/TOML mix-ups and NaN in JSON.
    let m = d.join("json.toml");
    std::fs::write(&m, "{\"model\": {\"name\": \"x\"}}").unwrap();
    assert!(text(&sprung_output(&["check", &s(&m)])).contains("contains JSON"));
    let m = d.join("nan.json");
    std::fs::write(
        &m,
        "{\"model\": {\"name\": \"x\", \"gravity\": [0, 0, NaN]}}",
    )
    .unwrap();
    let t = text(&sprung_output(&["check", &s(&m)]));
    assert!(
        t.contains("nan.json:1:") && t.contains("JSON has no NaN"),
        "{t}"
    );
}

#[test]
fn plot_into_a_missing_folder_is_a_sentence() {
    let d = tmp("plot");
    common::sprung_ok(&[
        "run",
        "models/mass_spring_damper.toml",
        "--quiet",
        "--t-end",
        "0.1",
        "--out",
        &s(&d),
    ]);
    let o = sprung_output(&[
        "plot",
        &s(&d.join("results.csv")),
        "-o",
        &s(&d.join("no/such/folder/p.png")),
    ]);
    let t = text(&o);
    assert!(!o.status.success());
    assert!(t.contains("does not exist"), "{t}");
    assert!(
        !t.contains("Os {") && !t.contains("kind:"),
        "Debug dump: {t}"
    );
}

#[test]
fn a_missing_result_file_is_named_once_with_the_os_reason_once() {
    let d = tmp("plot-missing");
    let missing = d.join("no_such_results.csv");
    let o = sprung_output(&["plot", &s(&missing)]);
    let t = text(&o);
    assert!(!o.status.success());
    assert!(t.contains("no_such_results.csv"), "{t}");
    // The OS reason appears exactly once (it used to be printed twice: in the message and
    // again as the error's source in the CLI's chain).
    assert_eq!(t.matches("No such file or directory").count(), 1, "{t}");
}

#[test]
fn an_error_curve_stops_the_run_when_the_table_is_left() {
    let d = tmp("curve");
    let base = std::fs::read_to_string(root().join("models/mass_spring_damper.toml")).unwrap();
    // The linear damper (2 Ns/m) as a curve over |v| <= 0.5 m/s: same dynamics inside.
    let src = base.replace("damping = 2.0", "curve = \"C_D\"")
        + "\n[[curves]]\nname = \"C_D\"\nx = [-0.5, 0.5]\ny = [-1.0, 1.0]\nextrapolation = \"error\"\n";
    let m = d.join("m.toml");
    std::fs::write(&m, src).unwrap();
    let out = d.join("out");
    let o = sprung_output(&["run", &s(&m), "--quiet", "--out", &s(&out)]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("force element 'damper'"), "{t}");
    assert!(
        t.contains("curve 'C_D'") && t.contains("[-0.5, 0.5]"),
        "{t}"
    );
    // v(t) = -1.005 exp(-t) sin(9.95 t) (model comment) reaches |v| = 0.5 at t = 0.0557 s.
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    let t_last = *set.time.last().unwrap();
    assert!((0.054..=0.060).contains(&t_last), "stopped at {t_last}");
    let reason = set.metadata()["stop_reason"].as_str().unwrap();
    assert!(reason.contains("C_D"), "{reason}");
}

#[test]
fn metrics_and_adjusted_compare_match_the_analytic_oscillator() {
    let d = tmp("metrics");
    common::sprung_ok(&[
        "run",
        "models/mass_spring_damper.toml",
        "--quiet",
        "--t-end",
        "10",
        "--out",
        &s(&d),
    ]);
    let r = d.join("results.csv");
    let o = sprung_output(&["metrics", &s(&r), "--channels", "x"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let row: Vec<&str> = t
        .lines()
        .find(|l| l.starts_with("x "))
        .unwrap()
        .split_whitespace()
        .collect();
    let num = |i: usize| row[i].parse::<f64>().unwrap();
    // x_s = -0.1 m, first peak -0.172925 m at pi/wd = 0.31574 s, period 2 pi/wd = 0.631476 s
    // (models/mass_spring_damper.toml); LSRT2 at 1 ms is accurate to well below these margins.
    assert!((num(3) + 0.1).abs() < 1e-4, "final {t}");
    assert!((num(4) + 0.172925).abs() < 2e-3, "peak {t}");
    assert!((num(5) - 0.31574).abs() < 3e-3, "peak time {t}");
    assert!((num(7) - 0.631476).abs() < 3e-3, "period {t}");
    // An external reference in mm, 0.25 s late: scale and shift make it identical.
    let set = sprung_io::read_results(&r).unwrap();
    let x = set.column("x").unwrap();
    let mut csv = String::from("time,x\n");
    for (t, v) in set.time.iter().zip(x) {
        csv.push_str(&format!("{},{}\n", t + 0.25, v * 1000.0));
    }
    let ext = d.join("ext.csv");
    std::fs::write(&ext, csv).unwrap();
    let args = [
        "compare",
        &s(&r),
        &s(&ext),
        "--channels",
        "x",
        "--window",
        "1:9",
    ];
    let plain = text(&sprung_output(&args));
    let mut adj = args.to_vec();
    adj.extend_from_slice(&["--ref-scale", "x=1e-3", "--ref-time-shift=-0.25"]);
    let o = sprung_output(&adj);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let nmse = |t: &str| -> f64 {
        let row: Vec<&str> = t
            .lines()
            .find(|l| l.starts_with("x "))
            .unwrap_or_else(|| panic!("{t}"))
            .split_whitespace()
            .collect();
        row[5].parse().unwrap()
    };
    assert!(nmse(&t) < 1e-20, "{t}");
    assert!(nmse(&plain) > 1.0, "{plain}");
    // Negative numbers in text options reach the option (no clap hint to use `--`).
    let mut neg = args.to_vec();
    neg.extend_from_slice(&[
        "--ref-scale",
        "-1e-3",
        "--ref-offset",
        "-0.0",
        "--ref-time-shift",
        "-0.25",
    ]);
    let t = text(&sprung_output(&neg));
    assert!(!t.contains("tip:") && t.contains("x "), "{t}");
    // Datum: both relative to t = 1 s; still identical.
    adj.extend_from_slice(&["--datum", "1"]);
    let t = text(&sprung_output(&adj));
    assert!(t.contains("relative to their values at t = 1 s"), "{t}");
}
