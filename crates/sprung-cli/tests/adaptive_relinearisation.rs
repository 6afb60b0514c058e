//! Adaptive re-linearisation of LSRT2 (`--relinearise-stale`, `docs/solvers.md`, *Adaptive
//! re-linearisation*) on the reference axles of document 000, Table 3 (the load case of
//! `table3.rs`, 4.9-6.0 s): re-linearising at most every 50 steps, and at the next step after
//! one taken with a lagged Jacobian whose local error indicator exceeds 5e-8 m (half the split
//! tolerance), LSRT2 follows its every-step solution to round-off level and keeps issue 18's
//! accuracy against RODAS4, while the fixed schedule "every 50 steps" alone does not.
//!
//! Measured (2-vCPU development VM): NMSE of the adaptive run against the every-step run
//! 7.2e-12 / 4.4e-11 (double wishbone, wheel displacement / trailing-link bushing force) and
//! 7.3e-13 / 5.4e-11 (multilink), bound 1e-10 (round-off and the split decisions of a few steps
//! differ, the method's own error is 1e3 times larger); fixed every 50 steps 7.2e-8 / 1.6e-7
//! and 7.0e-10 / 1.3e-9 (fixed every 5 steps: 4.6e-10 / 9.3e-10 and 3.3e-11 / 1.3e-10). Against
//! RODAS4 (rtol 1e-8) the adaptive runs give 4.99e-8 / 6.95e-8 and 7.78e-8 / 9.51e-8, within
//! the Table 3 bounds of `table3.rs` (1.5 × the every-step values 4.991e-8 / 6.976e-8 and
//! 7.808e-8 / 9.529e-8); fixed every 50 steps the double wishbone is at 1.15e-7 / 1.92e-7, above
//! them. Linearisations in 6 s: 170 (double wishbone: 120 on the grid + 50 for a stale Jacobian)
//! and 167 (multilink: 35 stale, 12 around its 6 breakpoint steps) instead of 6000.

use std::path::Path;

mod common;

use common::sprung_ok as sprung;
use sprung_io::{ResultSet, Window, compare, read_results};

const CHANNELS: [&str; 2] = ["wc_dx_L", "tl_bushing_fx_L"];

fn nmse(res: &ResultSet, reference: &ResultSet) -> [f64; 2] {
    let e = compare(res, reference, &CHANNELS, Window::new(4.9, 6.0)).unwrap();
    [e[0].nmse, e[1].nmse]
}

#[test]
fn adaptive_relinearisation_follows_the_every_step_solution_on_both_axles() {
    for (model, bound_disp, bound_force) in [
        ("double_wishbone", 1.5 * 4.991e-8, 1.5 * 6.976e-8),
        ("multilink", 1.5 * 7.808e-8, 1.5 * 9.529e-8),
    ] {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("adaptive_relin_{model}"));
        let (o, m) = (out.to_str().unwrap(), format!("models/{model}.toml"));
        let run = |name: &str, extra: &[&str]| {
            let mut args = vec![
                "run", &m, "--t-end", "6.0", "--out", o, "--name", name, "-q",
            ];
            args.extend_from_slice(extra);
            sprung(&args);
            let meta: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.join(format!("{name}.csv.meta.json"))).unwrap(),
            )
            .unwrap();
            let count = |key: &str| {
                meta["metadata"][key]
                    .as_u64()
                    .unwrap_or_else(|| panic!("no {key} in {meta}"))
            };
            let counts = [
                count("linearisations"),
                count("stale_relinearisations"),
                count("breakpoint_steps"),
            ];
            (
                read_results(out.join(format!("{name}.csv"))).unwrap(),
                counts,
            )
        };
        let (every, _) = run("every_step", &[]);
        let (adaptive, [lins, stale, breakpoints]) = run(
            "adaptive",
            &["--relinearise-every", "50", "--relinearise-stale", "5e-8"],
        );
        let (fixed, [fixed_lins, fixed_stale, _]) = run("fixed50", &["--relinearise-every", "50"]);
        let (reference, _) = run(
            "reference",
            &["--solver", "rodas4", "--rtol", "1e-8", "--atol", "1e-10"],
        );
        let (a_vs_every, f_vs_every) = (nmse(&adaptive, &every), nmse(&fixed, &every));
        let (a_vs_ref, f_vs_ref) = (nmse(&adaptive, &reference), nmse(&fixed, &reference));
        let f = |e: [f64; 2]| format!("{:.3e} / {:.3e}", e[0], e[1]);
        eprintln!(
            "{model}: NMSE vs every step: adaptive {}, fixed 50 {}; vs RODAS4: adaptive {}, fixed 50 {}; linearisations adaptive {lins} ({stale} stale, {breakpoints} breakpoint steps), fixed {fixed_lins}",
            f(a_vs_every),
            f(f_vs_every),
            f(a_vs_ref),
            f(f_vs_ref)
        );
        assert!(
            a_vs_every.iter().all(|&e| e <= 1e-10),
            "{model}: adaptive vs every step {a_vs_every:?}"
        );
        assert!(
            a_vs_ref[0] <= bound_disp && a_vs_ref[1] <= bound_force,
            "{model}: adaptive vs RODAS4 {a_vs_ref:?}"
        );
        // The fixed schedule alone: 1 + 119 grid steps, none stale; what the adaptive part adds.
        assert_eq!((fixed_stale, stale > 0), (0, true), "{model}");
        assert!(fixed_lins >= 120 && lins >= 120 + stale, "{model}: {lins}");
        if breakpoints == 0 {
            // Every linearisation is on the grid or asked for by the indicator.
            assert_eq!(lins, 120 + stale, "{model}");
        }
        assert!(lins <= 250, "{model}: {lins} linearisations");
        if model == "double_wishbone" {
            // The test sees what the indicator adds: the fixed schedule alone loses accuracy.
            assert!(
                f_vs_every[1] > 1e3 * a_vs_every[1] && f_vs_ref[1] > bound_force,
                "{model}: fixed 50 {f_vs_every:?} / {f_vs_ref:?}"
            );
        }
    }
}
