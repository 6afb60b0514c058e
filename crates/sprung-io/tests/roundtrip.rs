//! Round-trip tests of the CSV and Parquet writers and readers: values must come back with
//! identical bits, units and metadata must be present, and interrupted writers must still
//! leave readable files.

use std::path::PathBuf;

use serde_json::json;
use sprung_io::{
    BackgroundOptions, BackgroundWriter, Channel, Format, IoError, ResultWriter,
    STOP_REASON_DROPPED, WriterOptions, read_results, sidecar_path,
};

fn tmp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sprung-io-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn channels() -> Vec<Channel> {
    vec![
        Channel::new("x_wheel", "m", "longitudinal wheel centre displacement"),
        Channel::new("F_bushing", "N", "longitudinal bushing force"),
        Channel::new("odd, name \"quoted\"", "1", "name needing CSV quoting"),
    ]
}

/// Values that stress the decimal round trip.
fn nasty(i: usize) -> [f64; 3] {
    let specials = [
        0.1,
        1.0 / 3.0,
        std::f64::consts::PI,
        -0.0,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        -1.234_567_890_123_456_7e-200,
        2.5e15,
        f64::INFINITY,
        f64::NEG_INFINITY,
        123_456_789.012_345_68,
    ];
    let a = specials[i % specials.len()];
    let x = (i as f64 * 0.001).sin() * 1e-3 + 1e-17 * i as f64;
    [x, a, -(i as f64).sqrt() / 7.0]
}

fn times(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 1e-3).collect()
}

fn check_values(path: &std::path::Path, n: usize) {
    let set = read_results(path).unwrap();
    assert_eq!(set.len(), n);
    let chans = channels();
    for (i, &t) in times(n).iter().enumerate() {
        assert_eq!(set.time[i].to_bits(), t.to_bits(), "time row {i}");
        let v = nasty(i);
        for (k, c) in chans.iter().enumerate() {
            let got = set.column(&c.name).unwrap()[i];
            assert_eq!(
                got.to_bits(),
                v[k].to_bits(),
                "{} row {i}: {got} vs {}",
                c.name,
                v[k]
            );
        }
    }
}

fn write_plain(path: &std::path::Path, format: Format, n: usize, options: WriterOptions) {
    let mut w = ResultWriter::create_with_options(
        path,
        format,
        &channels(),
        json!({"model": "double wishbone", "solver": {"name": "LSRT2", "h": 1e-3}}),
        options,
    )
    .unwrap();
    for (i, &t) in times(n).iter().enumerate() {
        w.write_row(t, &nasty(i)).unwrap();
    }
    let summary = w
        .finish("end time reached", json!({"statistics": {"steps": n}}))
        .unwrap();
    assert_eq!(summary.rows, n as u64);
}

fn check_meta(path: &std::path::Path, n: usize, stop: &str) {
    let set = read_results(path).unwrap();
    assert_eq!(set.unit("time"), Some("s"));
    assert_eq!(set.unit("x_wheel"), Some("m"));
    assert_eq!(set.unit("F_bushing"), Some("N"));
    assert_eq!(
        set.columns[0].description,
        "longitudinal wheel centre displacement"
    );
    let meta = set.meta.as_ref().expect("metadata document present");
    assert!(meta.complete);
    assert_eq!(meta.rows, n as u64);
    assert_eq!(meta.format, "sprung-results");
    assert_eq!(set.metadata()["stop_reason"], stop);
    let names: Vec<&str> = set.channel_names().collect();
    assert_eq!(names, ["x_wheel", "F_bushing", "odd, name \"quoted\""]);
}

#[test]
fn csv_round_trip_is_exact() {
    let p = tmp("rt.csv");
    write_plain(&p, Format::Csv, 1000, WriterOptions::default());
    check_values(&p, 1000);
    check_meta(&p, 1000, "end time reached");
    let set = read_results(&p).unwrap();
    assert_eq!(set.metadata()["model"], "double wishbone");
    assert_eq!(set.metadata()["statistics"]["steps"], 1000);
    // Plain header row.
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "time,x_wheel,F_bushing,\"odd, name \"\"quoted\"\"\""
    );
    // Sidecar is plain JSON with the channels.
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sidecar_path(&p)).unwrap()).unwrap();
    assert_eq!(side["channels"][1]["unit"], "N");
    assert_eq!(side["metadata"]["solver"]["name"], "LSRT2");
}

#[test]
fn parquet_round_trip_is_exact_over_several_row_groups() {
    let p = tmp("rt.parquet");
    write_plain(
        &p,
        Format::Parquet,
        1000,
        WriterOptions {
            row_group_rows: 128,
        },
    );
    check_values(&p, 1000);
    check_meta(&p, 1000, "end time reached");
    let set = read_results(&p).unwrap();
    assert_eq!(set.metadata()["solver"]["h"], 1e-3);
}

#[test]
fn empty_result_files_are_readable() {
    for (name, f) in [
        ("empty.csv", Format::Csv),
        ("empty.parquet", Format::Parquet),
    ] {
        let p = tmp(name);
        let w = ResultWriter::create(&p, f, &channels(), json!(null)).unwrap();
        w.finish("no steps", json!(null)).unwrap();
        let set = read_results(&p).unwrap();
        assert!(set.is_empty());
        assert_eq!(set.columns.len(), 3);
        assert_eq!(set.metadata()["stop_reason"], "no steps");
    }
}

#[test]
fn interrupted_writers_leave_readable_files() {
    for (name, f) in [("drop.csv", Format::Csv), ("drop.parquet", Format::Parquet)] {
        let p = tmp(name);
        {
            let mut w = ResultWriter::create_with_options(
                &p,
                f,
                &channels(),
                json!({"model": "m"}),
                WriterOptions { row_group_rows: 64 },
            )
            .unwrap();
            for (i, &t) in times(300).iter().enumerate() {
                w.write_row(t, &nasty(i)).unwrap();
            }
            // Dropped without finish.
        }
        check_values(&p, 300);
        check_meta(&p, 300, STOP_REASON_DROPPED);
    }
}

#[test]
fn csv_is_readable_while_still_being_written() {
    let p = tmp("live.csv");
    let mut w = ResultWriter::create(&p, Format::Csv, &channels(), json!({})).unwrap();
    for (i, &t) in times(50).iter().enumerate() {
        w.write_row(t, &nasty(i)).unwrap();
    }
    w.flush().unwrap();
    let set = read_results(&p).unwrap();
    assert_eq!(set.len(), 50);
    assert!(!set.meta.as_ref().unwrap().complete);
    assert_eq!(set.unit("F_bushing"), Some("N"));
    drop(w);
}

#[test]
fn background_writer_round_trip_both_formats() {
    for (name, f) in [("bg.csv", Format::Csv), ("bg.parquet", Format::Parquet)] {
        let p = tmp(name);
        let mut w = BackgroundWriter::create(
            &p,
            f,
            &channels(),
            json!({"model": "multi-link"}),
            BackgroundOptions {
                rows_per_buffer: 37,
                buffers: 3,
                writer: WriterOptions {
                    row_group_rows: 100,
                },
            },
        )
        .unwrap();
        for (i, &t) in times(1001).iter().enumerate() {
            w.push_row(t, &nasty(i)).unwrap();
        }
        assert_eq!(w.stats().rows, 1001);
        let s = w
            .finish("user stop", json!({"statistics": {"rejected": 0}}))
            .unwrap();
        assert_eq!(s.rows, 1001);
        check_values(&p, 1001);
        check_meta(&p, 1001, "user stop");
    }
}

#[test]
fn background_writer_finishes_on_drop() {
    for (name, f) in [
        ("bgdrop.csv", Format::Csv),
        ("bgdrop.parquet", Format::Parquet),
    ] {
        let p = tmp(name);
        {
            let mut w = BackgroundWriter::create(
                &p,
                f,
                &channels(),
                json!({}),
                BackgroundOptions {
                    rows_per_buffer: 16,
                    buffers: 2,
                    writer: WriterOptions::default(),
                },
            )
            .unwrap();
            for (i, &t) in times(77).iter().enumerate() {
                w.push_row(t, &nasty(i)).unwrap();
            }
            w.flush().unwrap();
            for (i, &t) in times(100).iter().enumerate().skip(77) {
                w.push_row(t, &nasty(i)).unwrap();
            }
        }
        check_values(&p, 100);
        check_meta(&p, 100, STOP_REASON_DROPPED);
    }
}

#[test]
fn row_length_and_channel_errors_are_reported() {
    let p = tmp("errs.csv");
    let mut w = ResultWriter::create(&p, Format::Csv, &channels(), json!({})).unwrap();
    let e = w.write_row(0.0, &[1.0]).unwrap_err();
    assert!(
        matches!(
            e,
            IoError::RowLength {
                expected: 3,
                got: 1,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("errs.csv"));
    let mut bg = BackgroundWriter::create(
        tmp("errs2.parquet"),
        Format::Parquet,
        &channels(),
        json!({}),
        BackgroundOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        bg.push_row(0.0, &[1.0, 2.0]),
        Err(IoError::RowLength { .. })
    ));

    let dup = vec![Channel::new("a", "m", ""), Channel::new("a", "N", "")];
    let e = ResultWriter::create(tmp("dup.csv"), Format::Csv, &dup, json!({})).unwrap_err();
    assert!(e.to_string().contains("more than once"), "{e}");
    let time = vec![Channel::new("time", "s", "")];
    let e = ResultWriter::create(tmp("time.csv"), Format::Csv, &time, json!({})).unwrap_err();
    assert!(e.to_string().contains("reserved"), "{e}");

    let e = read_results(tmp("x.txt")).unwrap_err();
    assert!(matches!(e, IoError::UnknownFormat { .. }));
    let e = read_results(tmp("does-not-exist.parquet")).unwrap_err();
    assert!(e.to_string().contains("does-not-exist.parquet"));
}

#[test]
fn malformed_csv_is_rejected_with_location() {
    let p = tmp("bad.csv");
    std::fs::write(&p, "time,a\n0,1\n0.1,abc\n").unwrap();
    let e = read_results(&p).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("row 3") && msg.contains("'a'") && msg.contains("abc"),
        "{msg}"
    );
    let p = tmp("notime.csv");
    std::fs::write(&p, "t,a\n0,1\n").unwrap();
    assert!(read_results(&p).unwrap_err().to_string().contains("'time'"));
}

#[test]
fn foreign_csv_without_sidecar_reads_with_empty_units() {
    let p = tmp("foreign.csv");
    let _ = std::fs::remove_file(sidecar_path(&p));
    std::fs::write(&p, "a, time ,b\n1, 0 ,2\n3,0.5,4e-3\n").unwrap();
    let set = read_results(&p).unwrap();
    assert_eq!(set.time, [0.0, 0.5]);
    assert_eq!(set.column("a").unwrap(), [1.0, 3.0]);
    assert_eq!(set.column("b").unwrap(), [2.0, 4e-3]);
    assert_eq!(set.unit("a"), Some(""));
    assert!(set.meta.is_none());
}

#[cfg(target_os = "linux")]
#[test]
fn writer_thread_errors_surface_with_the_file_name() {
    let dev_full = std::path::Path::new("/dev/full");
    if !dev_full.exists() {
        eprintln!("skipped: /dev/full not available");
        return;
    }
    // Parquet buffers the header in memory, so creation succeeds and the first row group
    // write on the writer thread fails with ENOSPC.
    let mut w = BackgroundWriter::create(
        dev_full,
        Format::Parquet,
        &channels(),
        json!({}),
        BackgroundOptions {
            rows_per_buffer: 8,
            buffers: 2,
            writer: WriterOptions { row_group_rows: 8 },
        },
    )
    .unwrap();
    let mut err = None;
    for i in 0..100_000 {
        if let Err(e) = w.push_row(i as f64, &nasty(i)) {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("writing to /dev/full must fail");
    let msg = err.to_string();
    assert!(matches!(err, IoError::WriterThread { .. }), "{msg}");
    assert!(msg.contains("/dev/full"), "{msg}");
    // Later calls report the same failure.
    let again = w.finish("x", json!(null)).unwrap_err();
    assert!(again.to_string().contains("/dev/full"));
}

#[test]
fn write_results_converts_between_formats() {
    let src = tmp("conv_src.csv");
    write_plain(&src, Format::Csv, 200, WriterOptions::default());
    let set = read_results(&src).unwrap();
    let dst = tmp("conv_dst.parquet");
    let s = sprung_io::write_results(&dst, &set, json!({"source": "conv_src.csv"}), "converted")
        .unwrap();
    assert_eq!(s.rows, 200);
    check_values(&dst, 200);
    let back = read_results(&dst).unwrap();
    assert_eq!(back.unit("F_bushing"), Some("N"));
    assert_eq!(
        back.channel("x_wheel").unwrap().description,
        set.columns[0].description
    );
    assert_eq!(back.metadata()["source"], "conv_src.csv");
}

#[test]
fn format_must_match_a_known_extension() {
    let e =
        ResultWriter::create(tmp("m.parquet"), Format::Csv, &channels(), json!({})).unwrap_err();
    assert!(matches!(e, IoError::FormatMismatch { .. }), "{e}");
    assert!(e.to_string().contains("m.parquet"));
}
