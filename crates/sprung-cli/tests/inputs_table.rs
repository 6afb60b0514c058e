//! `sprung run --inputs FILE.csv`: runtime inputs fed from a table, held from row to row.
//!
//! The mass-spring-damper with its force declared `runtime` and fed 10 N from t = 0 must give bit
//! for bit the results of the original file's 10 N step at t = 0 (same forces, same steps); a
//! second row setting 0 N at 1.5 s releases the mass, which then decays to rest; a column for an
//! input driven by a time signal replaces the signal; a bad table is refused with file, line and
//! column.

mod common;

use std::path::{Path, PathBuf};

use common::{sprung_output as sprung, text};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn runtime_model(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let src = std::fs::read_to_string(root.join("models/mass_spring_damper.toml")).unwrap();
    let changed = src.replace(
        r#"signal = { type = "step", time = 0.0, before = 0.0, after = 10.0 }"#,
        r#"signal = { type = "runtime", default = 0.0 }"#,
    );
    assert_ne!(src, changed, "the step signal is in the model file");
    let path = dir.join("msd_runtime.toml");
    std::fs::write(&path, changed).unwrap();
    path
}

/// `sprung run MODEL --inputs TABLE --out OUT -q`.
fn run_fed(model: &Path, table: &Path, out: &Path) -> std::process::Output {
    sprung(&[
        "run",
        model.to_str().unwrap(),
        "--inputs",
        table.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ])
}

#[test]
fn a_table_feeds_runtime_inputs_zero_order_hold() {
    let dir = tmp("inputs_table");
    let model = runtime_model(&dir);
    let table = dir.join("f.csv");
    std::fs::write(&table, "t,F\n0.0,10.0\n1.5,0.0\n").unwrap();
    let o = run_fed(&model, &table, &dir.join("fed"));
    assert!(o.status.success(), "{}", text(&o));
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--out",
        dir.join("step").to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let fed = sprung_io::read_results(dir.join("fed/results.csv")).unwrap();
    let step = sprung_io::read_results(dir.join("step/results.csv")).unwrap();
    assert_eq!(
        fed.len(),
        3001,
        "one row per output time, none repeated at the switch"
    );
    let (xf, xs) = (fed.column("x").unwrap(), step.column("x").unwrap());
    for k in 0..=1500 {
        assert_eq!(
            xf[k].to_bits(),
            xs[k].to_bits(),
            "row {k}: {} vs {}",
            xf[k],
            xs[k]
        );
    }
    // After the release at 1.5 s the mass swings about 0 (decay rate ζ ω0 = 1/s): at 3 s the
    // amplitude is below 0.1 m · e^{-1.5} ≈ 0.022 m while the held force keeps it near −0.1 m.
    assert!(xs[3000] < -0.09, "held: {}", xs[3000]);
    assert!(xf[3000].abs() < 0.03, "released: {}", xf[3000]);
}

#[test]
fn bad_tables_are_refused_with_file_line_and_column() {
    let dir = tmp("inputs_table_bad");
    let model = runtime_model(&dir);
    for (content, expect) in [
        ("t,G\n0,1\n", "column 'G' names no input"),
        ("t,F\n0,1\n0,2\n", ":3: time 0 s does not increase"),
        ("t,F\n0,abc\n", ":2: column 'F': 'abc' is not a number"),
        ("time,F\n0,1\n", ":1: the first column must be the time"),
        ("t,F\n0.0005,1\n", "not on the output grid"),
    ] {
        let table = dir.join("bad.csv");
        std::fs::write(&table, content).unwrap();
        let o = run_fed(&model, &table, &dir.join("out"));
        assert!(!o.status.success(), "{content}: accepted");
        assert!(text(&o).contains(expect), "{content}: {}", text(&o));
    }
}

/// A column may name an input driven by a time signal: the table replaces the signal
/// (`Model::with_runtime_inputs`), bit for bit like the model declaring it `runtime`.
#[test]
fn a_table_replaces_a_time_signal() {
    let dir = tmp("inputs_table_replace");
    let table = dir.join("f.csv");
    std::fs::write(&table, "t,F\n0.0,10.0\n1.5,0.0\n").unwrap();
    let msd = common::root().join("models/mass_spring_damper.toml");
    let o = run_fed(&msd, &table, &dir.join("replaced"));
    assert!(o.status.success(), "{}", text(&o));
    let o = run_fed(&runtime_model(&dir), &table, &dir.join("declared"));
    assert!(o.status.success(), "{}", text(&o));
    let a = sprung_io::read_results(dir.join("replaced/results.csv")).unwrap();
    let b = sprung_io::read_results(dir.join("declared/results.csv")).unwrap();
    let (xa, xb) = (a.column("x").unwrap(), b.column("x").unwrap());
    assert_eq!(xa.len(), 3001);
    assert!(xa.iter().zip(xb).all(|(p, q)| p.to_bits() == q.to_bits()));
}
