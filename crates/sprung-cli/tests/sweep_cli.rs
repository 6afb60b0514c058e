//! `sprung sweep` and `--set` end to end: a small sweep of the double wishbone (8 variants,
//! Fx step moved to 0.05 s, 0.25 s simulated) gives the same table with 1 and 2 threads, and
//! every row equals an individual `sprung run --set` of the same variant, bit for bit (the
//! per-run files and the metrics). Bad grids, tables, metrics and parameters fail clearly.

mod common;

use std::path::{Path, PathBuf};

use common::{sprung_output as sprung, text};
use sprung::sweep::Metric;

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

const MODEL: &str = "models/double_wishbone.toml";
const STEP_SETS: [&str; 2] = [
    "inputs.Fx_L.signal.time=0.05",
    "inputs.Fx_R.signal.time=0.05",
];
const METRICS: [&str; 4] = [
    "peak:wc_dx_L",
    "settling:wc_dx_L:0.02",
    "delta:toe_L",
    "max:damper_force_L",
];

fn sweep_args<'a>(out: &'a str, threads: &'a str) -> Vec<&'a str> {
    let mut a = vec![
        "sweep",
        MODEL,
        "--grid",
        "damper_scale=0.5,1.5",
        "--grid",
        "bushing_scale=0.5:1.25:4",
        "--t-end",
        "0.25",
        "--step-time",
        "0.05",
        "--threads",
        threads,
        "--out",
        out,
        "--save-runs",
        "-q",
    ];
    for s in STEP_SETS {
        a.extend(["--set", s]);
    }
    for m in METRICS {
        a.extend(["--metric", m]);
    }
    a
}

#[test]
fn a_sweep_equals_single_runs_bitwise_and_does_not_depend_on_the_threads() {
    let (d1, d2) = (tmp("sweep_t1"), tmp("sweep_t2"));
    for (d, threads) in [(&d1, "1"), (&d2, "2")] {
        let o = sprung(&sweep_args(d.to_str().unwrap(), threads));
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains("variants:  8 (8 ok, 0 failed, 0 cancelled)"),
            "{}",
            text(&o)
        );
    }
    let table = std::fs::read_to_string(d1.join("sweep.csv")).unwrap();
    assert_eq!(
        table,
        std::fs::read_to_string(d2.join("sweep.csv")).unwrap(),
        "--threads 1 and --threads 2 differ"
    );
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "variant",
            "damper_scale",
            "bushing_scale",
            METRICS[0],
            METRICS[1],
            METRICS[2],
            METRICS[3],
            "status",
            "t_reached",
            "message"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8);
    let metrics: Vec<Metric> = METRICS.iter().map(|m| Metric::parse(m).unwrap()).collect();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], i.to_string());
        assert_eq!(row[7], "ok");
        // The same variant through `sprung run --set`.
        let out = tmp(&format!("sweep_single_{i}"));
        let (ds, bs) = (
            format!("damper_scale={}", row[1]),
            format!("bushing_scale={}", row[2]),
        );
        let mut args = vec![
            "run",
            MODEL,
            "--t-end",
            "0.25",
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--set",
            &ds,
            "--set",
            &bs,
        ];
        for s in STEP_SETS {
            args.extend(["--set", s]);
        }
        let o = sprung(&args);
        assert!(o.status.success(), "{}", text(&o));
        let single = sprung_io::read_results(out.join("results.csv")).unwrap();
        let saved =
            sprung_io::read_results(d1.join("runs").join(format!("run_{i:04}.csv"))).unwrap();
        // Every channel of the per-run file equals the single run's, bit for bit.
        assert_eq!(saved.time, single.time);
        assert_eq!(saved.columns.len(), single.columns.len());
        for (a, b) in saved.columns.iter().zip(&single.columns) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.values, b.values, "variant {i}, channel {}", a.name);
        }
        // The table's metrics are those of the single run's channels.
        for (k, m) in metrics.iter().enumerate() {
            let col = single.columns.iter().find(|c| c.name == m.channel).unwrap();
            let want = m.evaluate(&single.time, &col.values, Some(0.05)).unwrap();
            let got: f64 = row[3 + k].parse().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "variant {i}, {}", m.label());
        }
    }
    // The two factors act: softer bushings give a larger wheel recession (peak dx more
    // negative) at either damper scale.
    let peak = |r: &Vec<&str>| r[3].parse::<f64>().unwrap();
    assert!(peak(&rows[0]) < peak(&rows[3]) && peak(&rows[4]) < peak(&rows[7]));
}

#[test]
fn a_table_of_variants_and_a_failing_variant() {
    let d = tmp("sweep_table");
    std::fs::create_dir_all(&d).unwrap();
    let table = d.join("variants.csv");
    std::fs::write(
        &table,
        "# two variants\nbodies.mass.mass,force_elements.spring.stiffness\n1,100\n-1,100\n2,400\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = sprung(&[
        "sweep",
        "models/mass_spring_damper.toml",
        "--table",
        table.to_str().unwrap(),
        "--metric",
        "peak:x",
        "--t-end",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--plot",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("3 (2 ok, 1 failed, 0 cancelled)"), "{t}");
    assert!(
        t.contains("variant 1 failed:") && t.contains("mass = -1 is not positive"),
        "{t}"
    );
    assert!(t.contains("3/3 variants done (1 failed)"), "{t}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[2].starts_with("1,-1.0,100.0,NaN,failed,NaN,"),
        "{csv}"
    );
    assert!(
        lines[1].contains(",ok,1.0,") && lines[3].contains(",ok,1.0,"),
        "{csv}"
    );
    assert!(std::fs::metadata(out.join("sweep.png")).unwrap().len() > 1000);
}

#[test]
fn bad_sweeps_and_sets_say_what_is_wrong() {
    let msd = "models/mass_spring_damper.toml";
    let d = tmp("sweep_bad");
    std::fs::create_dir_all(&d).unwrap();
    let bad_header = d.join("bad.csv");
    std::fs::write(&bad_header, "force_elements.spring.stiffness,\n1,2\n").unwrap();
    let unknown_col = d.join("unknown.csv");
    std::fs::write(&unknown_col, "stifness\n1\n").unwrap();
    let out = d.join("out");
    let out = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "sweep",
                msd,
                "--grid",
                "force_elements.spring.stiffness=1:2",
                "--metric",
                "peak:x",
            ],
            "a range has three parts START:STOP:COUNT",
        ),
        (
            vec![
                "sweep",
                msd,
                "--grid",
                "force_elements.sprng.stiffness=1,2",
                "--metric",
                "peak:x",
            ],
            "did you mean 'spring'?",
        ),
        (
            vec![
                "sweep",
                MODEL,
                "--grid",
                "dampr_scale=1,2",
                "--metric",
                "peak:wc_dx_L",
            ],
            "did you mean 'damper_scale'? valid: bushing_scale, damper_scale",
        ),
        (
            vec![
                "sweep",
                msd,
                "--table",
                bad_header.to_str().unwrap(),
                "--metric",
                "peak:x",
            ],
            "bad.csv:1: column 2 of the header has no name",
        ),
        (
            vec![
                "sweep",
                msd,
                "--table",
                unknown_col.to_str().unwrap(),
                "--metric",
                "peak:x",
            ],
            "parameter 'stifness': is not a declared parameter",
        ),
        (
            vec![
                "sweep",
                msd,
                "--grid",
                "bodies.mass.mass=1,2",
                "--metric",
                "peak:xx",
            ],
            "no output channel 'xx'",
        ),
        (
            vec![
                "sweep",
                msd,
                "--grid",
                "bodies.mass.mass=1,2",
                "--metric",
                "peek:x",
            ],
            "unknown kind 'peek'",
        ),
        (
            vec!["sweep", msd, "--metric", "peak:x"],
            "give the variants with --grid",
        ),
        (
            vec!["run", MODEL, "--set", "dampr_scale=2", "--out", out],
            "did you mean 'damper_scale'?",
        ),
        (
            vec!["run", msd, "--set", "bodies.mass.mass", "--out", out],
            "expected NAME=VALUE",
        ),
        (
            vec!["run", msd, "--set", "bodies.mass.mass=x", "--out", out],
            "'x' is not a number",
        ),
        (
            vec!["run", msd, "--set", "bodies.mass.mass=-2", "--out", out],
            "parameter 'bodies.mass.mass': value -2 gives body 'mass': mass = -2 is not positive",
        ),
        (
            vec!["check", MODEL, "--set", "bushing_scale=-1"],
            "parameter 'bushing_scale': value -1 gives bushing",
        ),
        (
            vec![
                "static",
                msd,
                "--set",
                "force_elements.spring.stiffness[0]=1",
            ],
            "force_elements.spring.stiffness is a number, it has no index [0]",
        ),
    ];
    for (args, what) in cases {
        let o = sprung(&args);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?} succeeded: {t}");
        assert!(t.contains(what), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
}

#[test]
fn check_lists_the_parameters_and_applies_set() {
    let o = sprung(&["check", MODEL, "--set", "damper_scale=1.5"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("parameters:      2"), "{t}");
    assert!(
        t.contains("damper_scale             = 1.5 [-] (Scale of curves.C_DAMPER_A.y)"),
        "{t}"
    );
    assert!(t.contains("bushing_scale            = 1 [-]"), "{t}");
    let o = sprung(&["check", "models/mass_spring_damper.toml", "--paths"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("  force_elements.spring.stiffness = 100\n"),
        "{t}"
    );
    assert!(
        t.contains("  bodies.mass.inertia.principal[2] = 0.00042\n"),
        "{t}"
    );
    assert!(t.contains("  solver.t_end = 3\n"), "{t}");
    // `static --set` moves the equilibrium: softer bushings, more wheel travel under Fz.
    let dz = |set: &str| {
        let o = sprung(&["static", MODEL, "--set", set]);
        assert!(o.status.success(), "{}", text(&o));
        let t = text(&o);
        let line = t
            .lines()
            .find(|l| l.trim_start().starts_with("wc_dz_L"))
            .unwrap()
            .to_string();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(dz("bushing_scale=1") != dz("bushing_scale=0.5"));
}

#[test]
fn ctrl_c_stops_the_sweep_and_keeps_the_finished_rows() {
    // Two short variants, then two that would run for hours (one thread, in order).
    let d = tmp("sweep_sigint");
    std::fs::create_dir_all(&d).unwrap();
    let table = d.join("variants.csv");
    std::fs::write(&table, "solver.t_end\n0.2\n0.3\n100000\n100000\n").unwrap();
    let out = d.join("out");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(["sweep", "models/mass_spring_damper.toml", "--table"])
        .arg(&table)
        .args([
            "--metric",
            "peak:x",
            "--threads",
            "1",
            "--save-runs",
            "-q",
            "--out",
        ])
        .arg(&out)
        .current_dir(common::root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The per-run file of the second variant appears when it has finished.
    let t0 = std::time::Instant::now();
    while !out.join("runs").join("run_0001.csv.meta.json").exists() {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the short variants did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("interrupted by a signal: 2 of 4 variants finished"),
        "{t}"
    );
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let status: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    assert_eq!(status, ["ok", "ok", "cancelled", "cancelled"], "{csv}");
    // The stopped variant's run file keeps what it simulated.
    let partial = sprung_io::read_results(out.join("runs").join("run_0002.csv")).unwrap();
    assert!(partial.len() > 1 && *partial.time.last().unwrap() < 100000.0);
}
