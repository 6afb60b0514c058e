//! Shared helpers of the `sprung` end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (models are referenced relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the `sprung` binary in the workspace root.
pub fn sprung_output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run sprung")
}

/// Runs the `sprung` binary and asserts success, showing its output otherwise.
pub fn sprung_ok(args: &[&str]) {
    let o = sprung_output(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

/// stdout and stderr of a run.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A numeric CSV result file written by the CLI: header and rows (test helper; panics with the
/// path on a missing file or a non-number).
pub fn read_csv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = s.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    (header, rows)
}
