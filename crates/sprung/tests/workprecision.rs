//! Fast checks of the work-precision benchmark (`sprung bench solvers`, library module
//! `sprung::workprecision`) on a tiny ladder.
//!
//! Independent truth: the published reference values of the Test Set for IVP Solvers (through
//! `scd`) and, on the axle, a RODAS4 reference at a tighter tolerance.

use std::path::PathBuf;

use sprung::workprecision::{
    AxleBench, AxleCase, BenchPoint, StiffProblem, format_table, plot, stiff_ladder,
};
use sprung_io::metrics::Window;
use sprung_solve::ode::Method;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "sprung_bench_solvers_{}_{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn stiff_ladder_gains_digits_reports_failures_and_plots() {
    let mut seen = 0;
    let mut points = Vec::new();
    for prob in [StiffProblem::Hires, StiffProblem::VanDerPol] {
        let pts = stiff_ladder(prob, Method::Rodas4, &[1e-3, 1e-6], 1, &mut |_| seen += 1);
        assert_eq!(pts.len(), 2);
        let (a, b) = (pts[0].scd.unwrap(), pts[1].scd.unwrap());
        // a fourth-order method gains about three digits for three decades of tolerance
        assert!(a > 2.5 && b > a + 2.0, "{prob:?}: scd {a} -> {b}");
        for p in &pts {
            assert!(p.failure.is_none() && p.steps > 10 && p.f_evals > p.steps && p.lu >= p.steps);
            assert!((p.error - 10f64.powf(-p.scd.unwrap())).abs() <= 1e-12 * p.error);
            assert!(p.cpu_ms > 0.0 && p.runs >= 1);
        }
        points.extend(pts);
    }
    // the trapezoidal rule reaches t = 1e11 on ROBER (measured scd 3.07 at rtol 1e-3)
    let trap = stiff_ladder(StiffProblem::Rober, Method::Ode23t, &[1e-3], 1, &mut |_| {
        seen += 1
    });
    assert!(
        trap[0].failure.is_none() && trap[0].scd.unwrap() > 2.5,
        "{:?}",
        trap[0]
    );
    // an explicit method cannot (stability-limited steps): the failure is reported
    let rober = stiff_ladder(StiffProblem::Rober, Method::Ode23, &[1e-3], 1, &mut |_| {
        seen += 1
    });
    assert!(
        rober[0]
            .failure
            .as_deref()
            .unwrap()
            .contains("maximum number of steps"),
        "{:?}",
        rober[0]
    );
    assert!(rober[0].error.is_nan() && rober[0].scd.is_none());
    assert_eq!(seen, 6);
    points.extend(rober);
    points.extend(trap);

    let table = format_table("rober", &points);
    assert!(
        table.contains("ode23t ") && table.contains("ode23 ") && table.contains("FAILED"),
        "{table}"
    );
    let table = format_table("hires", &points);
    assert!(table.contains("rodas4") && table.contains("scd"), "{table}");

    let json = points[0].to_json();
    assert_eq!(json["method"], "rodas4");
    assert!(json["scd"].as_f64().unwrap() > 2.5);
    let failed = rober_json(&points);
    assert!(failed["failure"].is_string() && failed["error"].is_null());

    let png = tmp("plot").join("wp.png");
    plot(&points, &png, "test", Some((800, 600))).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

fn rober_json(points: &[BenchPoint]) -> serde_json::Value {
    points
        .iter()
        .find(|p| p.problem == "rober")
        .unwrap()
        .to_json()
}

#[test]
fn axle_ladder_measures_against_a_cached_reference() {
    let dir = tmp("axle");
    let case = AxleCase {
        model: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/double_wishbone.toml"),
        t_start: 4.9,
        t_end: 5.15,
        window: Window::new(4.95, 5.15),
        channel: "wc_dx_L".into(),
        force_channel: "tl_bushing_fx_L".into(),
        reference_rtol: 1e-6,
        cache_dir: dir.clone(),
        portable: false,
        // The bare method: the error-triggered splits after the force step (on by default)
        // make the fixed step partly adaptive, which is not the method whose order is measured.
        breakpoints: sprung_solve::mech::Breakpoints::Ignore,
    };
    let mut log = Vec::new();
    let bench = AxleBench::new(case.clone(), &mut |s| log.push(s.to_string())).unwrap();
    assert!(log.iter().any(|l| l.contains("computed once")), "{log:?}");
    let coarse = bench.measure("lsrt2", None, Some(2e-3), 1);
    let fine = bench.measure("lsrt2", None, Some(0.5e-3), 1);
    for p in [&coarse, &fine] {
        assert!(p.failure.is_none(), "{p:?}");
        assert!(p.error.is_finite() && p.error > 0.0 && p.nmse_force.unwrap() > 0.0);
    }
    // LSRT2 is second order: the error measure is an NMSE (a mean of squared errors), which
    // scales as h^(2p); the observed order p = log(NMSE ratio) / (2 log(step ratio)). Measured
    // 2.003 between 2 ms and 0.5 ms (NMSE 4.0e-5 -> 1.55e-7); the bound allows ±0.15 for the
    // reference's own error (RODAS4 at rtol 1e-6) and higher-order terms at 2 ms.
    let order = (coarse.error / fine.error).ln() / (2.0 * 4f64.ln());
    assert!(
        (order - 2.0).abs() < 0.15,
        "observed order {order} (NMSE {} -> {})",
        coarse.error,
        fine.error
    );
    assert_eq!(fine.steps, 500);
    let adaptive = bench.measure("rodas4", Some(1e-4), None, 1);
    assert!(
        adaptive.failure.is_none() && adaptive.error < 1e-3,
        "{adaptive:?}"
    );
    // the second construction reads the cache
    let mut log2 = Vec::new();
    AxleBench::new(case, &mut |s| log2.push(s.to_string())).unwrap();
    assert!(log2.iter().any(|l| l.contains("cached")), "{log2:?}");
    let bad = bench.measure("no-such-solver", Some(1e-4), None, 1);
    assert!(bad.failure.unwrap().contains("no-such-solver"));
}
