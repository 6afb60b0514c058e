//! Metrics (document 000, Table 3) against hand-computed values, and error cases.

use sprung_io::metrics::{channel_error, interpolate_linear};
use sprung_io::{Column, MetricsError, ResultSet, Window, compare, format_comparison_table};

fn set(time: Vec<f64>, cols: &[(&str, &str, Vec<f64>)]) -> ResultSet {
    ResultSet {
        time,
        columns: cols
            .iter()
            .map(|(n, u, v)| Column {
                name: n.to_string(),
                unit: u.to_string(),
                description: String::new(),
                values: v.clone(),
            })
            .collect(),
        meta: None,
        warnings: Vec::new(),
    }
}

#[test]
fn identical_grids_hand_computed() {
    // x_ref = [1, 2, 3, 4], x = [1.1, 2, 2.8, 4] -> e = [0.1, 0, -0.2, 0]
    // mean(e²) = (0.01 + 0.04) / 4 = 0.0125, mean(x_ref) = 2.5
    // NMSE = 0.0125 / 6.25 = 0.002, NRMSE = sqrt(0.0125) / 2.5
    let t = vec![0.0, 1.0, 2.0, 3.0];
    let e = channel_error(
        "x",
        &t,
        &[1.1, 2.0, 2.8, 4.0],
        &t,
        &[1.0, 2.0, 3.0, 4.0],
        Window::all(),
    )
    .unwrap();
    assert_eq!(e.points, 4);
    assert!((e.mean_reference - 2.5).abs() < 1e-15);
    assert!((e.nmse - 0.002).abs() < 1e-15, "{}", e.nmse);
    assert!((e.nrmse - 0.0125f64.sqrt() / 2.5).abs() < 1e-15);
    assert!((e.rms_error - 0.0125f64.sqrt()).abs() < 1e-15);
    assert!((e.max_abs_error - 0.2).abs() < 1e-15);
    assert_eq!(e.t_max_abs_error, 2.0);
}

#[test]
fn window_selects_points_inclusively() {
    // Window [1, 2] keeps t = 1 and t = 2: e = [0, -0.2], x_ref = [2, 3]
    // mean(e²) = 0.02, mean(x_ref) = 2.5 -> NMSE = 0.02 / 6.25 = 0.0032
    let t = vec![0.0, 1.0, 2.0, 3.0];
    let e = channel_error(
        "x",
        &t,
        &[1.1, 2.0, 2.8, 4.0],
        &t,
        &[1.0, 2.0, 3.0, 4.0],
        Window::new(1.0, 2.0),
    )
    .unwrap();
    assert_eq!(e.points, 2);
    assert!((e.nmse - 0.0032).abs() < 1e-15, "{}", e.nmse);
}

#[test]
fn reference_is_interpolated_linearly() {
    // Reference x_ref(t) = 2 + t sampled at t = 0, 1, 2 (exact for linear interpolation);
    // result at t = 0.25, 0.5, 1.5 with x = x_ref + [0.1, -0.1, 0.3].
    // mean(e²) = (0.01 + 0.01 + 0.09) / 3 = 0.11/3; mean(x_ref) = (2.25 + 2.5 + 3.5)/3 = 2.75
    let t_ref = [0.0, 1.0, 2.0];
    let x_ref = [2.0, 3.0, 4.0];
    let t = [0.25, 0.5, 1.5];
    let x = [2.35, 2.4, 3.8];
    let e = channel_error("x", &t, &x, &t_ref, &x_ref, Window::all()).unwrap();
    let mse: f64 = 0.11 / 3.0;
    assert!((e.nmse - mse / (2.75 * 2.75)).abs() < 1e-14, "{}", e.nmse);
    assert!((e.nrmse - mse.sqrt() / 2.75).abs() < 1e-14);
    assert!((e.max_abs_error - 0.3).abs() < 1e-14);
    assert_eq!(e.t_max_abs_error, 1.5);
}

#[test]
fn interpolation_edges_and_jumps() {
    let t = [0.0, 1.0, 1.0, 2.0];
    let x = [0.0, 1.0, 5.0, 7.0];
    assert_eq!(interpolate_linear(&t, &x, 0.0), Some(0.0));
    assert_eq!(interpolate_linear(&t, &x, 0.5), Some(0.5));
    // At a repeated time the later sample (right limit) is used.
    assert_eq!(interpolate_linear(&t, &x, 1.0), Some(5.0));
    assert_eq!(interpolate_linear(&t, &x, 1.5), Some(6.0));
    assert_eq!(interpolate_linear(&t, &x, 2.0), Some(7.0));
    assert_eq!(interpolate_linear(&t, &x, 2.0001), None);
    assert_eq!(interpolate_linear(&t, &x, -1e-9), None);
    assert_eq!(interpolate_linear(&[], &[], 0.0), None);
}

#[test]
fn compare_uses_units_and_reports_missing_channels() {
    let result = set(
        vec![0.0, 1.0, 2.0],
        &[
            ("x", "mm", vec![1.0, 2.0, 3.0]),
            ("F", "N", vec![10.0, 10.0, 10.0]),
        ],
    );
    let reference = set(
        vec![0.0, 2.0],
        &[("x", "mm", vec![1.0, 3.0]), ("F", "", vec![10.0, 12.0])],
    );
    let errs = compare(&result, &reference, &[], Window::all()).unwrap();
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].channel, "x");
    assert_eq!(errs[0].unit, "mm");
    assert_eq!(errs[0].nmse, 0.0);
    // F: ref = [10, 11, 12], x = 10 -> e = [0, -1, -2], mean(e²) = 5/3, mean(ref) = 11
    assert!((errs[1].nmse - (5.0 / 3.0) / 121.0).abs() < 1e-15);
    assert_eq!(errs[1].max_abs_error, 2.0);

    let e = compare(&result, &reference, &["y"], Window::all()).unwrap_err();
    assert!(matches!(
        e,
        MetricsError::MissingChannel {
            which: "result",
            ..
        }
    ));
    assert!(e.to_string().contains("x, F"), "{e}");
    let r2 = set(vec![0.0, 2.0], &[("x", "mm", vec![1.0, 3.0])]);
    let e = compare(&result, &r2, &["F"], Window::all()).unwrap_err();
    assert!(matches!(
        e,
        MetricsError::MissingChannel {
            which: "reference",
            ..
        }
    ));

    let table = format_comparison_table(&errs);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("channel") && lines[0].contains("NMSE"));
    assert!(
        lines[3].starts_with("F ") && lines[3].contains("1.377e-2"),
        "{table}"
    );
}

#[test]
fn error_cases() {
    let t = [0.0, 1.0, 2.0];
    let x = [1.0, 2.0, 3.0];
    // Empty window.
    let e = channel_error("x", &t, &x, &t, &x, Window::new(5.0, 6.0)).unwrap_err();
    assert!(matches!(e, MetricsError::EmptyWindow { .. }));
    assert!(e.to_string().contains("no result time points"));
    // Reversed / NaN window.
    assert!(matches!(
        channel_error("x", &t, &x, &t, &x, Window::new(2.0, 1.0)),
        Err(MetricsError::InvalidWindow { .. })
    ));
    assert!(matches!(
        channel_error("x", &t, &x, &t, &x, Window::new(f64::NAN, 1.0)),
        Err(MetricsError::InvalidWindow { .. })
    ));
    // Zero-mean reference.
    let e = channel_error(
        "x",
        &t,
        &[1.0, 0.0, -1.0],
        &t,
        &[1.0, 0.0, -1.0],
        Window::all(),
    )
    .unwrap_err();
    assert!(matches!(e, MetricsError::ZeroMeanReference { .. }), "{e}");
    // Outside the reference span.
    let e = channel_error("x", &t, &x, &[0.0, 1.5], &[1.0, 2.5], Window::all()).unwrap_err();
    assert!(
        matches!(e, MetricsError::OutsideReference { t: 2.0, .. }),
        "{e}"
    );
    // Unsorted time and length mismatch.
    assert!(matches!(
        channel_error("x", &[0.0, 2.0, 1.0], &x, &t, &x, Window::all()),
        Err(MetricsError::UnsortedTime {
            which: "result",
            index: 2,
            ..
        })
    ));
    assert!(matches!(
        channel_error("x", &t, &x[..2], &t, &x, Window::all()),
        Err(MetricsError::LengthMismatch { .. })
    ));
    // Non-finite values inside the window.
    assert!(matches!(
        channel_error("x", &t, &[1.0, f64::NAN, 3.0], &t, &x, Window::all()),
        Err(MetricsError::NonFinite {
            which: "result",
            ..
        })
    ));
    // ...but outside the window they do not matter.
    assert!(
        channel_error(
            "x",
            &t,
            &[1.0, 2.0, f64::NAN],
            &t,
            &x,
            Window::new(0.0, 1.0)
        )
        .is_ok()
    );
}

#[test]
fn nmse_of_a_known_signal_pair() {
    // x_ref(t) = 1 + sin(t), x(t) = 1 + sin(t) + 0.01 on 0..2π (uniform grid, endpoints
    // excluded from the period). mean(e²) = 1e-4 exactly; mean(x_ref) = 1 + mean(sin) ≈ 1.
    let n = 1000;
    let t: Vec<f64> = (0..n)
        .map(|i| i as f64 * std::f64::consts::TAU / n as f64)
        .collect();
    let x_ref: Vec<f64> = t.iter().map(|t| 1.0 + t.sin()).collect();
    let x: Vec<f64> = x_ref.iter().map(|v| v + 0.01).collect();
    let e = channel_error("x", &t, &x, &t, &x_ref, Window::all()).unwrap();
    assert!((e.mean_reference - 1.0).abs() < 1e-12);
    assert!((e.nmse - 1e-4).abs() < 1e-12);
    assert!((e.nrmse - 1e-2).abs() < 1e-12);
}
