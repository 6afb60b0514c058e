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
