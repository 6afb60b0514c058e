//! Issue acceptance (document 000, Table 3): LSRT2 at 1 ms, re-linearised every step, against the
//! RODAS4 reference (rtol 1e-8) over 4.9-6.0 s, normalised mean squared error of the wheel
//! displacement and of the trailing-link bushing force. The paper's values (0.00243 / 0.00751 and
//! 0.01286 / 0.01545) are 1e4 times above what the engine reaches, so the test guards today's
//! accuracy instead: 1.5 × the measured NMSE (double wishbone 3.400e-7 / 4.868e-7, multilink with
//! breakpoint-aware stepping 5.685e-7 / 7.007e-7; the Xeon of earlier sessions gave the same values
//! to the digits it printed); the margin
//! covers the AVX2/portable round-off and the reference's own error (rtol 1e-8), both orders of
//! magnitude smaller, with room for harmless changes of the order of operations. Plus the
//! `sprung loadcase` command end to end (tables and the Bild 7 figure).

use std::path::Path;

mod common;

use common::sprung_ok as sprung;
use sprung_io::{Window, compare, read_results};

#[test]
fn lsrt2_meets_document_000_table_3_on_both_axles() {
    for (model, nmse_disp, nmse_force) in [
        ("double_wishbone", 1.5 * 3.400e-7, 1.5 * 4.868e-7),
        ("multilink", 1.5 * 5.685e-7, 1.5 * 7.007e-7),
    ] {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("table3_{model}"));
        let (o, m) = (out.to_str().unwrap(), format!("models/{model}.toml"));
        sprung(&[
            "run", &m, "--t-end", "6.0", "--out", o, "--name", "lsrt2", "-q",
        ]);
        sprung(&[
            "run",
            &m,
            "--t-end",
            "6.0",
            "--out",
            o,
            "--name",
            "reference",
            "--solver",
            "rodas4",
            "--rtol",
            "1e-8",
            "--atol",
            "1e-10",
            "-q",
        ]);
        let res = read_results(out.join("lsrt2.csv")).unwrap();
        let reference = read_results(out.join("reference.csv")).unwrap();
        let e = compare(
            &res,
            &reference,
            &["wc_dx_L", "tl_bushing_fx_L"],
            Window::new(4.9, 6.0),
        )
        .unwrap();
        eprintln!(
            "{model}: NMSE displacement {:.3e} (bound {nmse_disp:.3e}), force {:.3e} (bound {nmse_force:.3e})",
            e[0].nmse, e[1].nmse
        );
        assert!(
            e[0].nmse <= nmse_disp,
            "{model}: displacement NMSE {}",
            e[0].nmse
        );
        assert!(e[1].nmse <= nmse_force, "{model}: force NMSE {}", e[1].nmse);
        // Left/right symmetry of the symmetric load case, to round-off: the two sides are computed
        // in a different floating-point order (element order, elimination order of the LU), and the
        // iteration matrix amplifies rounding by its condition number (~1e5 here): ε · 1e5 · 0.75 m
        // ≈ 2e-11 m over the run; piecewise-linear damper and bushing curves add jumps in the slope,
        // where rounding decides which segment a side is on. Measured: 7e-12 m (double wishbone),
        // 1.2e-10 m (multilink); the bound 1e-9 m is 5e-7 of the wheel travel.
        let (l, r) = (
            res.column("wc_dz_L").unwrap(),
            res.column("wc_dz_R").unwrap(),
        );
        let asym = l
            .iter()
            .zip(r)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            asym < 1e-9,
            "{model}: left/right wheel travel differs by {asym:e} m"
        );
    }
}

#[test]
fn loadcase_command_writes_tables_and_bild7() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("loadcase");
    sprung(&[
        "loadcase",
        "models/double_wishbone.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(out.join("bild7.png")).unwrap().len() > 20_000);
    assert!(out.join("double_wishbone/reference.csv").exists());
}

/// Issue 18, item 6: on the multilink load case (Fx step at 5 s) both dampers cross the knot of
/// C_DAMPER_B at −0.01 m/s (6000 → 2667 N s/m) inside a 1 ms step. Without breakpoint handling
/// (`--breakpoints ignore`) LSRT2 keeps the old slope in the Jacobian and the wheel displacement
/// is off by up to 7.7 % of the step response for ≈ 0.8 s (NMSE 1.8e-3 / 1.1e-3); with the
/// default (split the crossing step) it follows RODAS4. Measured (default): NMSE 5.7e-7
/// (wc_dx_L) / 7.0e-7 (tl_bushing_fx_L); bound 2e-6 (≈ 3× margin for platform round-off through
/// the stiff modes; the issue asks ≤ 1e-4). Largest displacement error after the step 6.4e-6 m
/// at 5.041 s = 0.23 % of the peak step response 2.81e-3 m — LSRT2's own truncation error in the
/// transient (0.5 ms steps: 1.6e-6 m, ÷ 4, with or without breakpoint handling), so the issue's
/// 0.1 % is NOT met at 1 ms in the first 92 ms; bounds: 0.3 % overall, 0.1 % from 5.1 s on.
/// The `ignore` run guards that the option still switches it off (and that the test sees the bug).
#[test]
fn lsrt2_stays_accurate_across_the_multilink_damper_breakpoint() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("breakpoints_multilink");
    let o = out.to_str().unwrap();
    let m = "models/multilink.toml";
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec!["run", m, "--t-end", "6.0", "--out", o, "--name", name, "-q"];
        args.extend_from_slice(extra);
        sprung(&args);
        read_results(out.join(format!("{name}.csv"))).unwrap()
    };
    let split = run("split", &[]);
    let ignore = run("ignore", &["--breakpoints", "ignore"]);
    let reference = run(
        "reference",
        &["--solver", "rodas4", "--rtol", "1e-8", "--atol", "1e-10"],
    );
    let names = ["wc_dx_L", "tl_bushing_fx_L"];
    let nmse = |res| {
        let e = compare(res, &reference, &names, Window::new(4.9, 6.0)).unwrap();
        [e[0].nmse, e[1].nmse]
    };
    let (es, ei) = (nmse(&split), nmse(&ignore));
    // Largest displacement error after the step relative to the step response (largest
    // deviation of the reference from its value at 4.99 s); both runs write every 1 ms.
    let (t, x, xr, tr) = (
        &split.time[..],
        split.column("wc_dx_L").unwrap(),
        reference.column("wc_dx_L").unwrap(),
        &reference.time[..],
    );
    let at = |tt: f64| {
        let k = tr.iter().position(|&s| (s - tt).abs() < 1e-9).unwrap();
        xr[k]
    };
    let x0 = at(4.99);
    let amplitude = tr
        .iter()
        .zip(xr)
        .filter(|(s, _)| **s >= 5.0)
        .map(|(_, x)| (x - x0).abs())
        .fold(0.0, f64::max);
    let (mut worst, mut worst_late): (f64, f64) = (0.0, 0.0);
    for (k, &tk) in t.iter().enumerate() {
        if (5.0..=6.0).contains(&tk) {
            let e = (x[k] - at(tk)).abs();
            worst = worst.max(e);
            if tk >= 5.1 {
                worst_late = worst_late.max(e);
            }
        }
    }
    eprintln!(
        "multilink: NMSE split {:.3e} / {:.3e}, ignore {:.3e} / {:.3e}; worst error after the step {:.3e} m = {:.4} % of {:.3e} m ({:.4} % from 5.1 s)",
        es[0],
        es[1],
        ei[0],
        ei[1],
        worst,
        100.0 * worst / amplitude,
        amplitude,
        100.0 * worst_late / amplitude,
    );
    assert!(es[0] <= 2e-6 && es[1] <= 2e-6, "split: NMSE {es:?}");
    assert!(worst <= 3e-3 * amplitude, "worst error {worst} m");
    assert!(
        worst_late <= 1e-3 * amplitude,
        "worst error from 5.1 s {worst_late} m"
    );
    assert!(
        ei[0] > 1e-4,
        "ignore: NMSE {ei:?} (the bug is no longer visible)"
    );
}
