//! End-to-end tests of what the full car (docs/car.md) added to the command line: `sprung compare
//! --xy` draws the path of two result files and the compared channels over time in ONE figure
//! (document 004, Bild 6), and `sprung bench` benchmarks chosen linear solvers and
//! re-linearisation intervals and reports a CPU-time real-time factor.

mod common;

use std::path::{Path, PathBuf};

use common::{sprung_output as sprung, text};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Width and height of a PNG file from its IHDR chunk, px.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[1..4], b"PNG", "{} is not a PNG", path.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn compare_xy_draws_path_and_channels_in_one_figure() {
    let out = tmp("car_cli_cmp");
    for (name, k) in [("stiff", "400"), ("soft", "250")] {
        let o = sprung(&[
            "run",
            "models/mass_spring_damper.toml",
            "--t-end",
            "1",
            "--set",
            &format!("force_elements.spring.stiffness={k}"),
            "--out",
            out.join(name).to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let (a, b) = (out.join("soft/results.csv"), out.join("stiff/results.csv"));
    let png = out.join("cmp.png");
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--channels",
        "x",
        "--xy",
        "x,spring_force",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Two panels side by side (the x-y panel and x over time), 800 px each, in one image.
    assert_eq!(png_size(&png), (1600, 690), "{}", text(&o));
    // A channel missing from a file is named with the file and the available channels.
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--channels",
        "x",
        "--xy",
        "x,nope",
        "--plot",
        png.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("'nope'") && t.contains("spring_force"),
        "{t}"
    );
    // --xy needs two channels and a plot file.
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--xy",
        "x",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && text(&o).contains("--xy takes two channel names"));
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--xy",
        "x,v",
    ]);
    assert!(
        !o.status.success() && text(&o).contains("--plot"),
        "{}",
        text(&o)
    );
}

/// `compare --with`: further result files against the same reference, each with its own table,
/// all in the one figure (docs/car.md: the full, the elastokinematic and the kinematic car).
#[test]
fn compare_with_adds_results_to_the_table_and_the_figure() {
    let out = tmp("car_cli_cmp_with");
    for (name, k) in [("stiff", "400"), ("soft", "250"), ("mid", "320")] {
        let o = sprung(&[
            "run",
            "models/mass_spring_damper.toml",
            "--t-end",
            "1",
            "--set",
            &format!("force_elements.spring.stiffness={k}"),
            "--out",
            out.join(name).to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let (a, b, c) = (
        out.join("soft/results.csv"),
        out.join("stiff/results.csv"),
        out.join("mid/results.csv"),
    );
    let png = out.join("cmp.png");
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--with",
        c.to_str().unwrap(),
        "--channels",
        "x",
        "--xy",
        "x,spring_force",
        "--plot",
        png.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // One table per result file, each against the reference.
    for f in [&a, &c] {
        assert!(
            t.contains(&format!("{} vs reference {}", f.display(), b.display())),
            "{t}"
        );
    }
    assert_eq!(png_size(&png), (1600, 690), "{t}");
    // A missing file is named.
    let o = sprung(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--with",
        out.join("nope.csv").to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && text(&o).contains("nope.csv"),
        "{}",
        text(&o)
    );
}

#[test]
fn bench_runs_the_chosen_rows_and_reports_cpu_time() {
    let out = tmp("car_cli_bench");
    let o = sprung(&[
        "bench",
        "--models",
        "models/mass_spring_damper.toml",
        "--displacement",
        "x",
        "--force",
        "spring_force",
        "--t-end",
        "2",
        "--window",
        "0.5:2",
        "--repeat",
        "1",
        "--linear-solvers",
        "block-sparse",
        "--relinearise",
        "3",
        "--breakpoints",
        "ignore",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let rows = v["models"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["linear_solver"], "block-sparse");
    assert_eq!(rows[0]["relinearise_every"], 3);
    // 2000 steps, a linearisation at steps 0, 3, ..., 1998 (no splits: --breakpoints ignore).
    assert_eq!(rows[0]["steps"], 2000);
    assert_eq!(rows[0]["linearisations"], 667);
    let cpu = rows[0]["cpu_real_time_factor"].as_f64().unwrap();
    assert!(cpu.is_finite() && cpu > 0.0, "{v}");
    let o = sprung(&[
        "bench",
        "--models",
        "models/mass_spring_damper.toml",
        "--relinearise",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && text(&o).contains("--relinearise"),
        "{}",
        text(&o)
    );
}
