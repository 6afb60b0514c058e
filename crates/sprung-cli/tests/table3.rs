//! Issue acceptance (document 000, Table 3): LSRT2 at 1 ms, re-linearised every step, against the
//! RODAS4 reference (rtol 1e-8) over 4.9-6.0 s, normalised mean squared error of the wheel
//! displacement and of the trailing-link bushing force. The paper's values (0.00243 / 0.00751 and
//! 0.01286 / 0.01545) are 1e4 times above what the engine reaches, so the test guards today's
//! accuracy instead: 1.5 × the measured NMSE (with breakpoint and error-triggered step splitting
//! in the displacement norm of docs/solvers.md, "Split norm per coordinate kind": double wishbone
//! 4.991e-8 / 6.976e-8, multilink 7.808e-8 / 9.529e-8; with quaternion components weighted 1
//! before it 2.964e-8 / 4.219e-8 and 4.705e-8 / 5.749e-8 for 109 and 92 instead of 73 and 56
//! split steps; before the error-triggered splits 3.400e-7 / 4.868e-7 and 5.685e-7 / 7.007e-7);
//! the margin
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
        ("double_wishbone", 1.5 * 4.991e-8, 1.5 * 6.976e-8),
        ("multilink", 1.5 * 7.808e-8, 1.5 * 9.529e-8),
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
/// C_DAMPER_B at −0.01 m/s (6000 → 2667 N s/m) inside a 1 ms step. Without step splitting
/// (`--breakpoints ignore`) LSRT2 keeps the old slope in the Jacobian and the wheel displacement
/// is off by up to 7.7 % of the step response for ≈ 0.8 s (NMSE 1.8e-3 / 1.1e-3). The default
/// splits the crossing steps, and the steps whose local error indicator exceeds 0.1 µm (the
/// first ≈ 100 ms of the transient, where LSRT2's own truncation error at 1 ms gave 0.23 % of
/// the step response before — it did so on a damper table without any breakpoint too).
/// Measured (default, displacement norm of docs/solvers.md): NMSE 7.81e-8 (wc_dx_L) / 9.53e-8
/// (tl_bushing_fx_L), bound 2e-7 (≈ 2× margin for platform round-off through the stiff modes;
/// the issue asks ≤ 1e-4); largest displacement error after the step 1.79e-6 m at 5.055 s =
/// 0.064 % of the peak step response 2.81e-3 m (the issue: ≤ 0.1 %; 0.5 ms steps everywhere
/// give 0.058 %), bound 0.08 %; 56 of 6000 steps split for accuracy, 1 at a breakpoint (bound
/// 40-200 split steps: the cost stays within the issue's +10 % real-time factor,
/// docs/performance.md). With quaternion components weighted 1 (before): 4.71e-8 / 5.75e-8,
/// 0.059 %, 92 splits.
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
    let (xr, tr) = (reference.column("wc_dx_L").unwrap(), &reference.time[..]);
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
    let worst_after = |res: &sprung_io::ResultSet| {
        let x = res.column("wc_dx_L").unwrap();
        res.time
            .iter()
            .zip(x)
            .filter(|(tk, _)| (5.0..=6.0).contains(*tk))
            .map(|(&tk, xk)| (xk - at(tk)).abs())
            .fold(0.0, f64::max)
    };
    let (worst, worst_ignore) = (worst_after(&split), worst_after(&ignore));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("split.csv.meta.json")).unwrap())
            .unwrap();
    let splits = meta["metadata"]["error_split_steps"]
        .as_u64()
        .unwrap_or_else(|| panic!("no error_split_steps in {meta}"));
    eprintln!(
        "multilink: NMSE split {:.3e} / {:.3e}, ignore {:.3e} / {:.3e}; worst error after the step {:.3e} m = {:.4} % of {:.3e} m (ignore: {:.3} %); {splits} steps split for accuracy",
        es[0],
        es[1],
        ei[0],
        ei[1],
        worst,
        100.0 * worst / amplitude,
        amplitude,
        100.0 * worst_ignore / amplitude,
    );
    assert!(es[0] <= 2e-7 && es[1] <= 2e-7, "split: NMSE {es:?}");
    assert!(worst <= 8e-4 * amplitude, "worst error {worst} m");
    assert!((40..=200).contains(&splits), "{splits} steps split");
    assert!(
        ei[0] > 1e-4,
        "ignore: NMSE {ei:?} (the bug is no longer visible)"
    );
}
