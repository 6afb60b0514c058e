//! Issue 17 item 1 and 3, end to end against the release binary: SIGTERM/SIGHUP stop a run like
//! Ctrl-C (results finished, stop reason recorded, exit code 1); after SIGKILL every row flushed
//! before is readable (CSV and Parquet) by sprung-io's reader, and by pandas/pyarrow when a venv
//! with them can be made (otherwise a visible SKIPPED line on stderr); a file-size limit (the
//! stand-in for a full disk) is reported and recorded; a second run into a folder in use is
//! refused, and a stale lock of a killed run is taken over.
//!
//! Expectations are independent of the implementation: the output grid (times k·Δt with the
//! model's output interval), strictly increasing times, finite values, and row counts that can
//! only grow while the run lives.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::root;
use sprung_io::read_results;

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("term-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Prints past the test harness's output capture, so a skip is visible in `cargo test`.
fn visible_skip(what: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}");
}

/// A run of the mass-spring-damper that lasts minutes unless stopped.
fn spawn_long_run(out: &Path, format: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args([
            "run",
            "models/mass_spring_damper.toml",
            "--t-end",
            "100000",
            "--quiet",
            "--format",
            format,
            "--out",
        ])
        .arg(out)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sprung")
}

/// The entries of a result folder, sorted (hidden files included).
fn entries(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// What a cleanly finished run leaves: the one result file readers expect (Parquet: the parts
/// compacted into it, no `.partial`, no `.parts`, no failure sidecar), CSV with its sidecar.
fn clean_entries(format: &str) -> Vec<String> {
    match format {
        "csv" => vec!["results.csv".into(), "results.csv.meta.json".into()],
        _ => vec!["results.parquet".into()],
    }
}

fn result_path(out: &Path, format: &str) -> PathBuf {
    out.join(format!("results.{format}"))
}

/// Rows readable now (0 while nothing is flushed).
fn rows_now(out: &Path, format: &str) -> usize {
    read_results(result_path(out, format)).map_or(0, |s| s.len())
}

fn wait_for_rows(out: &Path, format: &str, min: usize) -> usize {
    let t0 = Instant::now();
    loop {
        let n = rows_now(out, format);
        if n >= min {
            return n;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no flushed rows after 60 s in {}",
            out.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: sending a signal to our own child process.
    let r = unsafe { libc::kill(child.id() as i32, sig) };
    assert_eq!(r, 0, "kill failed");
}

/// Output grid of the model: output interval 1 ms (the model's step), times k·1e-3.
fn check_grid(set: &sprung_io::ResultSet) {
    assert!(!set.is_empty());
    for (k, t) in set.time.iter().enumerate() {
        assert!(
            (t - k as f64 * 1e-3).abs() <= 1e-9 * (1.0 + t.abs()),
            "row {k}: time {t} is not on the 1 ms output grid"
        );
    }
    for c in &set.columns {
        assert_eq!(c.values.len(), set.len());
        assert!(c.values.iter().all(|v| v.is_finite()), "{}", c.name);
    }
}

#[test]
fn sigterm_and_sighup_stop_like_ctrl_c_for_csv_and_parquet() {
    for (format, sig, name) in [
        ("csv", libc::SIGTERM, "SIGTERM"),
        ("parquet", libc::SIGTERM, "SIGTERM"),
        ("csv", libc::SIGHUP, "SIGHUP"),
    ] {
        let out = tmp(&format!("{format}-{name}"));
        let child = spawn_long_run(&out, format);
        wait_for_rows(&out, format, 100);
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(1), "{name} {format}: {text}");
        assert!(text.contains("interrupted by a signal"), "{text}");
        let set = read_results(result_path(&out, format)).unwrap();
        check_grid(&set);
        let meta = set.meta.as_ref().expect("metadata");
        assert!(meta.complete, "{name} {format}: finished file expected");
        let reason = set.metadata()["stop_reason"].as_str().unwrap_or("");
        assert!(reason.contains("interrupted by a signal"), "{reason}");
        assert_eq!(meta.rows as usize, set.len());
        assert!(set.warnings.is_empty(), "{:?}", set.warnings);
        assert!(!out.join(sprung_io::LOCK_FILE_NAME).exists(), "lock left");
        assert_eq!(entries(&out), clean_entries(format), "{name} {format}");
    }
}

#[test]
fn sigkill_leaves_readable_results_and_a_lock_that_is_taken_over() {
    let venv = pandas_python();
    for format in ["csv", "parquet"] {
        let out = tmp(&format!("{format}-kill"));
        let mut child = spawn_long_run(&out, format);
        let n0 = wait_for_rows(&out, format, 100);
        // While the run lives, a second run into the same folder is refused.
        let second = Command::new(env!("CARGO_BIN_EXE_sprung"))
            .args(["run", "models/mass_spring_damper.toml", "--quiet", "--out"])
            .arg(&out)
            .args(["--format", format])
            .current_dir(root())
            .output()
            .unwrap();
        let msg = String::from_utf8_lossy(&second.stderr);
        assert!(!second.status.success());
        assert!(msg.contains("in use by a running sprung process"), "{msg}");
        // Rows keep arriving (flushes at least every ~0.5 s of wall time).
        let t0 = Instant::now();
        let mut n1 = n0;
        while n1 <= n0 && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
            n1 = rows_now(&out, format);
        }
        assert!(n1 > n0, "{format}: no new rows flushed in 30 s");
        signal(&child, libc::SIGKILL);
        child.wait().unwrap();
        if format == "parquet" {
            // Killed: no compacted file, the flushed rows are in the part files.
            let r = result_path(&out, format);
            assert!(!r.exists(), "{}", r.display());
            assert!(sprung_io::parts_dir_of(&r).is_dir());
        }
        let set = read_results(result_path(&out, format)).unwrap();
        check_grid(&set);
        assert!(set.len() >= n1, "{format}: {} < {n1} rows", set.len());
        assert!(
            !set.meta.as_ref().unwrap().complete,
            "{format}: killed run marked complete"
        );
        assert!(
            set.warnings.iter().any(|w| w.contains("did not finish")),
            "{:?}",
            set.warnings
        );
        // `sprung compare` reads it too (against itself: zero error).
        let r = result_path(&out, format);
        let rs = r.to_string_lossy().to_string();
        let cmp = Command::new(env!("CARGO_BIN_EXE_sprung"))
            .args(["compare", &rs, &rs, "--channels", "x"])
            .current_dir(root())
            .output()
            .unwrap();
        let ct = String::from_utf8_lossy(&cmp.stdout).to_string()
            + &String::from_utf8_lossy(&cmp.stderr);
        assert!(cmp.status.success(), "{ct}");
        assert!(ct.contains("did not finish"), "{ct}");
        if let Some(py) = &venv {
            let target = if format == "csv" {
                r.clone()
            } else {
                sprung_io::parts_dir_of(&r)
            };
            let script = format!(
                "import sys, pandas as pd\n\
                 p = sys.argv[1]\n\
                 df = pd.read_csv(p) if p.endswith('.csv') else pd.read_parquet(p)\n\
                 assert len(df) == {n}, (len(df), {n})\n\
                 assert list(df.columns)[0] == 'time'\n\
                 d = df['time'].diff().dropna()\n\
                 assert (abs(d - 1e-3) < 1e-9).all()\n\
                 assert df.notna().all().all()\n",
                n = set.len()
            );
            let o = Command::new(py)
                .args(["-c", &script])
                .arg(&target)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "pandas on {}: {}",
                target.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        // The killed run's lock is stale: a new run into the folder proceeds.
        assert!(out.join(sprung_io::LOCK_FILE_NAME).exists());
        let again = Command::new(env!("CARGO_BIN_EXE_sprung"))
            .args([
                "run",
                "models/mass_spring_damper.toml",
                "--quiet",
                "--t-end",
                "0.5",
                "--format",
                format,
                "--out",
            ])
            .arg(&out)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            again.status.success(),
            "{}",
            String::from_utf8_lossy(&again.stderr)
        );
        let set = read_results(&r).unwrap();
        assert_eq!(set.len(), 501);
        assert!(set.warnings.is_empty(), "{:?}", set.warnings);
        // The clean re-run replaced the killed run's parts by the one compacted file.
        assert_eq!(
            entries(&out),
            clean_entries(format),
            "{format} after the re-run"
        );
    }
    if venv.is_none() {
        visible_skip(
            "pandas/pyarrow check of killed runs: no venv with pandas and pyarrow could be made (python3 -m venv + pip install pandas pyarrow)",
        );
    }
}

#[test]
fn a_file_size_limit_is_reported_and_recorded_like_a_full_disk() {
    let out = tmp("fsize");
    // 400 KiB per file (bash: `ulimit -f` counts 1024-byte blocks); SIGXFSZ is ignored by
    // sprung, so writes beyond the limit fail with EFBIG like writes to a full disk fail.
    let bin = env!("CARGO_BIN_EXE_sprung");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f 400 && exec '{bin}' run models/mass_spring_damper.toml --t-end 100000 --quiet --out '{}'",
            out.display()
        ))
        .current_dir(root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("File too large"), "{text}");
    let set = read_results(out.join("results.csv")).unwrap();
    check_grid(&set);
    let reason = set.metadata()["stop_reason"].as_str().unwrap_or("");
    assert!(reason.contains("writing results failed"), "{reason}");
    assert!(!set.meta.as_ref().unwrap().complete);
    // Every whole row below the limit is there: ~400 KiB / ~70 bytes per row.
    assert!(set.len() > 2000, "{} rows", set.len());
}

/// A python with pandas and pyarrow: `SPRUNG_TEST_PYTHON` or `python3` when they have them
/// (`sprung_test_support::python_with_pandas`), else a venv this test makes (and reuses) under
/// the target directory; `None` if it cannot be made (no network, no venv module).
fn pandas_python() -> Option<PathBuf> {
    if let Some(py) = sprung_test_support::python_with_pandas() {
        return Some(py);
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sprung-pandas-venv");
    let py = dir.join("bin/python");
    let works = |p: &Path| {
        Command::new(p)
            .args(["-c", "import pandas, pyarrow"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&py) {
        return Some(py);
    }
    let ok = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&dir)
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "pandas",
                "pyarrow",
            ])
            .output()
            .is_ok_and(|o| o.status.success());
    (ok && works(&py)).then_some(py)
}
