//! `sprung reduce` and `sprung check --reduce` (docs/macro-joint.md): the written reduced model
//! loads and runs, the statistics table has both columns, bad input is a clear error.

use std::process::Command;

fn sprung(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(args)
        .current_dir(sprung_test_support::workspace_root())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn reduce_writes_a_model_that_runs() {
    let dir = std::env::temp_dir().join(format!("sprung_reduce_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dw_ek.toml");
    let (ok, out, err) = sprung(&[
        "reduce",
        "models/double_wishbone.toml",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("8 macro joint(s)"), "{out}");
    assert!(
        out.contains("bodies") && out.contains("elastokinematic"),
        "{out}"
    );
    // The file runs: 50 ms of the reduced axle with LSRT2.
    let run_dir = dir.join("run");
    let (ok, out, err) = sprung(&[
        "run",
        file.to_str().unwrap(),
        "--t-end",
        "0.05",
        "--out",
        run_dir.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(run_dir.join("results.csv").exists());
    // Statistics of both models from `check`.
    let (ok, out, err) = sprung(&[
        "check",
        "models/double_wishbone.toml",
        "--reduce",
        "kinematic",
    ]);
    assert!(ok, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("bodies "))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[1..], ["24", "6"], "{row}");
    // A body that cannot be a link: a clear error naming it.
    let (ok, _, err) = sprung(&[
        "reduce",
        "models/double_wishbone.toml",
        "--links",
        "no_such_body",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("no_such_body") && err.contains("no such body"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
