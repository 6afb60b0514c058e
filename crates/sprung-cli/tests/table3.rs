//! Issue acceptance (document 000, Table 3): LSRT2 at 1 ms, re-linearised every step, against the
//! RODAS4 reference (rtol 1e-8) over 4.9-6.0 s, normalised mean squared error of the wheel
//! displacement and of the trailing-link bushing force below the paper's values; plus the
//! `sprung loadcase` command end to end (tables and the Bild 7 figure).

use std::path::Path;

mod common;

use common::sprung_ok as sprung;
use sprung_io::{Window, compare, read_results};

#[test]
fn lsrt2_meets_document_000_table_3_on_both_axles() {
    for (model, nmse_disp, nmse_force) in [
        ("double_wishbone", 0.00243, 0.00751),
        ("multilink", 0.01286, 0.01545),
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
            "{model}: NMSE displacement {:.3e} (Table 3: {nmse_disp}), force {:.3e} (Table 3: {nmse_force})",
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
