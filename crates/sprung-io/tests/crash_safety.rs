//! Issue 17 items 1, 3 and 9 at library level: what a killed writer leaves is readable (CSV
//! whole rows, a cut last CSV line dropped with a warning, Parquet part files), write failures
//! are recorded, result folders lock, and the step-response metrics and reference adjustments
//! match independent expectations.

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::json;
use sprung_io::{
    Adjustment, Channel, Format, ResultFolder, ResultWriter, StepOptions, read_results,
    step_response, subtract_datum, validate_result_name,
};

fn dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sprung-io-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn channels() -> Vec<Channel> {
    vec![Channel::new("a", "m", ""), Channel::new("b", "N", "")]
}

/// Writes `n` rows (t = k/100, a = k, b = -k), flushes, writes `extra` more rows without a
/// flush, then abandons the writer like SIGKILL would (no finish, no drop).
fn killed_writer(path: &std::path::Path, format: Format, n: usize, extra: usize) {
    let mut w = ResultWriter::create(path, format, &channels(), json!({"model": "t"})).unwrap();
    for k in 0..n {
        w.write_row(k as f64 / 100.0, &[k as f64, -(k as f64)])
            .unwrap();
    }
    w.flush().unwrap();
    for k in n..n + extra {
        w.write_row(k as f64 / 100.0, &[k as f64, -(k as f64)])
            .unwrap();
    }
    std::mem::forget(w);
}

fn check_rows(set: &sprung_io::ResultSet, n: usize) {
    assert_eq!(set.len(), n);
    for k in 0..n {
        assert_eq!(set.time[k], k as f64 / 100.0);
        assert_eq!(set.column("a").unwrap()[k], k as f64);
        assert_eq!(set.column("b").unwrap()[k], -(k as f64));
    }
}

#[test]
fn killed_csv_keeps_flushed_whole_rows_and_drops_a_cut_line() {
    let d = dir("csv");
    let p = d.join("r.csv");
    killed_writer(&p, Format::Csv, 250, 30);
    let set = read_results(&p).unwrap();
    check_rows(&set, 250);
    assert!(!set.meta.as_ref().unwrap().complete);
    assert!(set.warnings.iter().any(|w| w.contains("did not finish")));
    // A row cut by the crash (no line end): dropped with a warning, never read as a number.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"2.5,250,-2").unwrap();
    drop(f);
    let set = read_results(&p).unwrap();
    check_rows(&set, 250);
    assert!(
        set.warnings
            .iter()
            .any(|w| w.contains("incomplete last line")),
        "{:?}",
        set.warnings
    );
    // A short row in the middle is an error, not skipped.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"\n2.51,1\n").unwrap();
    drop(f);
    assert!(read_results(&p).is_err());
}

#[test]
fn killed_parquet_is_read_from_its_part_files() {
    let d = dir("pq");
    let p = d.join("r.parquet");
    let mut w = ResultWriter::create(&p, Format::Parquet, &channels(), json!({})).unwrap();
    for k in 0..300 {
        w.write_row(k as f64 / 100.0, &[k as f64, -(k as f64)])
            .unwrap();
        if k % 70 == 69 {
            w.flush().unwrap();
        }
    }
    std::mem::forget(w);
    assert!(!p.exists(), "the result appears only when finished");
    let parts = sprung_io::parts_dir_of(&p);
    assert_eq!(
        std::fs::read_dir(&parts).unwrap().count(),
        4,
        "one part per flush"
    );
    for path in [p.clone(), parts.clone()] {
        let set = read_results(&path).unwrap();
        check_rows(&set, 280);
        assert_eq!(set.unit("b"), Some("N"));
        assert!(set.warnings.iter().any(|w| w.contains("did not finish")));
    }
    // A new writer into the same path discards the leftovers; finishing removes the parts.
    let mut w = ResultWriter::create(&p, Format::Parquet, &channels(), json!({})).unwrap();
    for k in 0..10 {
        w.write_row(k as f64 / 100.0, &[k as f64, -(k as f64)])
            .unwrap();
    }
    w.flush().unwrap();
    w.finish("done", json!(null)).unwrap();
    assert!(!parts.exists());
    let set = read_results(&p).unwrap();
    check_rows(&set, 10);
    assert!(set.warnings.is_empty());
}

#[test]
fn a_write_failure_is_recorded_in_the_metadata() {
    let d = dir("fail");
    for (name, format) in [("r.csv", Format::Csv), ("r.parquet", Format::Parquet)] {
        let p = d.join(name);
        let mut w = ResultWriter::create(&p, format, &channels(), json!({})).unwrap();
        for k in 0..50 {
            w.write_row(k as f64 / 100.0, &[k as f64, -(k as f64)])
                .unwrap();
        }
        w.flush().unwrap();
        w.record_failure("No space left on device (os error 28)")
            .unwrap();
        assert!(
            w.write_row(1.0, &[0.0, 0.0]).is_err(),
            "abandoned after a failure"
        );
        drop(w);
        let set = read_results(&p).unwrap();
        check_rows(&set, 50);
        let reason = set.metadata()["stop_reason"].as_str().unwrap();
        assert!(
            reason.contains("writing results failed: No space left"),
            "{reason}"
        );
        assert!(!set.meta.as_ref().unwrap().complete);
    }
}

#[test]
fn result_folders_lock_and_names_are_checked() {
    let d = dir("lock").join("out");
    for bad in ["", "  ", "a/b", "..", "x\ty"] {
        assert!(validate_result_name(bad).is_err(), "{bad:?}");
        assert!(ResultFolder::acquire(&d, bad, Format::Csv).is_err());
    }
    assert!(!d.exists(), "a rejected name creates nothing");
    let f = ResultFolder::acquire(&d, "results", Format::Parquet).unwrap();
    assert_eq!(f.result_path(), d.join("results.parquet"));
    let e = ResultFolder::acquire(&d, "other", Format::Csv)
        .unwrap_err()
        .to_string();
    assert!(e.contains("in use by a running sprung process"), "{e}");
    assert!(e.contains(&std::process::id().to_string()), "{e}");
    drop(f);
    assert!(!d.join(sprung_io::LOCK_FILE_NAME).exists());
    // A stale lock (no such process: pid beyond pid_max) is taken over.
    std::fs::write(
        d.join(sprung_io::LOCK_FILE_NAME),
        "pid=4294967294\nname=sprung\n",
    )
    .unwrap();
    let f = ResultFolder::acquire(&d, "results", Format::Csv).unwrap();
    drop(f);
}

/// x(t) of the underdamped oscillator of models/mass_spring_damper.toml (zeta 0.1, w0 10).
fn oscillator(t: f64) -> f64 {
    let (z, w0) = (0.1f64, 10.0f64);
    let wd = w0 * (1.0 - z * z).sqrt();
    -0.1 * (1.0
        - (-z * w0 * t).exp() * ((wd * t).cos() + z / (1.0 - z * z).sqrt() * (wd * t).sin()))
}

#[test]
fn step_response_of_the_analytic_oscillator() {
    let time: Vec<f64> = (0..=30_000).map(|k| k as f64 * 1e-3).collect();
    let y: Vec<f64> = time.iter().map(|&t| oscillator(t)).collect();
    let r = step_response(&time, &y, StepOptions::default()).unwrap();
    let wd = 10.0 * (0.99f64).sqrt();
    assert_eq!(r.initial, 0.0);
    assert!((r.final_value + 0.1).abs() < 1e-9, "{}", r.final_value);
    // First peak at pi/wd = 0.315740 s, x = -0.172925 m (model file comment); 1 ms grid.
    assert!(
        (r.peak_time - std::f64::consts::PI / wd).abs() <= 1e-3,
        "{}",
        r.peak_time
    );
    assert!((r.peak + 0.172925).abs() < 1e-5, "{}", r.peak);
    assert!(
        (r.overshoot_percent - 72.925).abs() < 0.01,
        "{}",
        r.overshoot_percent
    );
    // Damped period 2 pi / wd = 0.631476 s; crossings interpolated linearly on a 1 ms grid.
    let period = r.period.unwrap();
    assert!(
        (period - 2.0 * std::f64::consts::PI / wd).abs() < 1e-4,
        "{period}"
    );
    // 2 % band: the envelope 0.1 exp(-t)/sqrt(1-zeta^2) reaches 0.002 at t = 3.917 s; the
    // response itself leaves the band for the last time within half a period before that.
    let ts = r.settling_time.unwrap();
    assert!(ts <= 3.918 && ts > 3.917 - period / 2.0, "{ts}");
}

#[test]
fn step_response_rejects_bad_input() {
    assert!(step_response(&[0.0, 1.0], &[0.0, 1.0], StepOptions::default()).is_err());
    assert!(
        step_response(
            &[0.0, 1.0, 2.0],
            &[0.0, f64::NAN, 1.0],
            StepOptions::default()
        )
        .is_err()
    );
    let o = StepOptions {
        band: 0.0,
        ..StepOptions::default()
    };
    assert!(step_response(&[0.0, 1.0, 2.0], &[0.0, 1.0, 1.0], o).is_err());
}

#[test]
fn adjustments_scale_offset_shift_and_datum() {
    let mut set = sprung_io::ResultSet {
        time: vec![0.0, 1.0, 2.0],
        columns: vec![
            sprung_io::Column {
                name: "z_mm".into(),
                unit: "mm".into(),
                description: String::new(),
                values: vec![1000.0, 2000.0, 4000.0],
            },
            sprung_io::Column {
                name: "f".into(),
                unit: "N".into(),
                description: String::new(),
                values: vec![1.0, 2.0, 3.0],
            },
        ],
        meta: None,
        warnings: Vec::new(),
    };
    let a = Adjustment {
        time_shift: -0.5,
        scale: vec![(Some("z_mm".into()), 1e-3), (None, 2.0)],
        offset: vec![(Some("f".into()), 1.0)],
    };
    a.apply(&mut set, "reference").unwrap();
    assert_eq!(set.time, vec![-0.5, 0.5, 1.5]);
    assert_eq!(set.column("z_mm").unwrap(), &[1.0, 2.0, 4.0]);
    assert_eq!(set.column("f").unwrap(), &[3.0, 5.0, 7.0]);
    subtract_datum(&mut set, 0.0, "reference").unwrap();
    assert_eq!(set.column("z_mm").unwrap(), &[-0.5, 0.5, 2.5]);
    assert!(subtract_datum(&mut set, 9.0, "reference").is_err());
    let missing = Adjustment {
        scale: vec![(Some("nope".into()), 1.0)],
        ..Adjustment::default()
    };
    assert!(missing.apply(&mut set, "reference").is_err());
}
