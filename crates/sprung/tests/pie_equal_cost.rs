//! Issue 14, item 2: the partly implicit Euler (`pie`, document 002 eqs. 4-9) against LSRT2 at
//! equal cost on the two reference axles of document 000 (the Table 3 load case), through the
//! work-precision library (`sprung::workprecision`, the `sprung bench solvers` of the accuracy
//! table in docs/solvers.md).
//!
//! Cost is compared in evaluation counts, not time (the machine is shared; the timed table is in
//! the docs): per step both methods take one linearisation and one LU when they re-linearise
//! every step, and one further q evaluation (LSRT2's second stage, pie's predictor of eq. 9);
//! LSRT2 needs two solves to pie's one. Re-linearising every 5 steps, the steps in between cost
//! pie one q and one solve, LSRT2 two q and two solves. The accuracy is the NMSE (document 000,
//! Table 3) of the wheel-centre travel against a RODAS4 reference (rtol 1e-6) over the first
//! 0.2 s of the transient after the force step, where the errors of both methods are largest.
//!
//! Independent truth: the RODAS4 reference (its own NMSE at rtol 1e-6 is ~1e-15, far below
//! every value compared here).

use std::path::PathBuf;

use sprung::workprecision::{AxleBench, AxleCase, BenchPoint};
use sprung_io::metrics::Window;
use sprung_test_support::workspace_root;

fn bench(model: &str) -> AxleBench {
    let dir = std::env::temp_dir().join(format!("sprung_pie_equal_cost_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = AxleCase {
        model: workspace_root().join(format!("models/{model}.toml")),
        t_start: 4.9,
        t_end: 5.15,
        window: Window::new(4.95, 5.15),
        channel: "wc_dx_L".into(),
        force_channel: "tl_bushing_fx_L".into(),
        reference_rtol: 1e-6,
        cache_dir: PathBuf::from(&dir),
        portable: false,
        // What `sprung run` does (LSRT2 splits steps at breakpoints and fast transients; the
        // extra work is in its counters).
        breakpoints: Default::default(),
    };
    AxleBench::new(case, &mut |_| {}).unwrap()
}

fn show(model: &str, p: &BenchPoint) {
    eprintln!(
        "{model} {:<6} h {:>6} ms relin {:?}: NMSE x {:.3e} F {:.3e}; steps {} q {} lin {} LU {} solves {}",
        p.method,
        p.step.unwrap() * 1e3,
        p.relinearise_every,
        p.error,
        p.nmse_force.unwrap(),
        p.steps,
        p.f_evals,
        p.jac_evals,
        p.lu,
        p.solves
    );
    assert!(p.failure.is_none(), "{model}: {p:?}");
}

#[test]
fn pie_costs_as_much_per_step_as_lsrt2_and_is_less_accurate_at_equal_cost() {
    for model in ["double_wishbone", "multilink"] {
        let b = bench(model);
        let run = |method: &str, h_ms: f64, relin: u64| {
            let p = b.measure_with(method, None, Some(h_ms * 1e-3), Some(relin), 1);
            show(model, &p);
            p
        };
        // Re-linearising every step (the models' setting).
        let lsrt2 = run("lsrt2", 1.0, 1);
        let pie = run("pie", 1.0, 1);
        let pie_half = run("pie", 0.5, 1);
        let pie_quarter = run("pie", 0.25, 1);
        // Counts per step of pie: one linearisation, one LU, one q, one solve, no split steps;
        // LSRT2 takes at least as many of each (more where it splits a step) and two solves.
        let n = pie.steps;
        assert_eq!(n, 200 + 50, "4.9-5.15 s at 1 ms");
        assert_eq!(
            (pie.jac_evals, pie.lu, pie.f_evals, pie.solves),
            (n, n, n, n)
        );
        assert!(lsrt2.jac_evals >= n && lsrt2.lu >= n && lsrt2.f_evals >= n);
        assert!(lsrt2.solves >= 2 * n);
        // At equal step (equal or lower evaluation count for pie) LSRT2 is far more accurate.
        eprintln!(
            "{model}: NMSE ratios pie/lsrt2: {:.0} (1 ms), {:.0} (pie 0.5 ms), {:.0} (pie 0.25 ms)",
            pie.error / lsrt2.error,
            pie_half.error / lsrt2.error,
            pie_quarter.error / lsrt2.error
        );
        assert!(pie.error > BOUND_RATIO * lsrt2.error, "{model}");
        // Twice and four times LSRT2's linearisations, LUs and q evaluations buy pie no parity.
        assert!(pie_half.error > BOUND_RATIO_HALF * lsrt2.error, "{model}");
        assert!(
            pie_quarter.error > BOUND_RATIO_QUARTER * lsrt2.error,
            "{model}"
        );
        // First order: the NMSE (a mean of squared errors) falls as h² once h is small; observed
        // order log(NMSE ratio) / (2 log 2) between 1 and 0.5 ms and between 0.5 and 0.25 ms.
        // Still pre-asymptotic at these steps (the full-window table in docs/solvers.md goes
        // 0.58, 0.72, 0.83, 0.91, 0.95 from 2 down to 0.0625 ms): it lies in ORDER_RANGE and rises towards 1.
        let order = |a: &BenchPoint, c: &BenchPoint| (a.error / c.error).ln() / (2.0 * 2f64.ln());
        let (o1, o2) = (order(&pie, &pie_half), order(&pie_half, &pie_quarter));
        eprintln!("{model}: observed order of pie {o1:.3}, {o2:.3}");
        assert!(ORDER_RANGE.contains(&o1) && ORDER_RANGE.contains(&o2) && o2 > o1);

        // Re-linearising every 5 steps: pie's steps in between are cheaper (one q, one solve
        // against two and two), so pie at half LSRT2's step costs as many q evaluations and
        // solves — and is still less accurate.
        let lsrt2_5 = run("lsrt2", 1.0, 5);
        let pie_5_half = run("pie", 0.5, 5);
        assert_eq!(pie_5_half.f_evals, pie_5_half.steps);
        assert!(lsrt2_5.f_evals >= 2 * lsrt2_5.steps - lsrt2_5.jac_evals);
        eprintln!(
            "{model}: relin 5: NMSE ratio pie 0.5 ms / lsrt2 1 ms {:.0}",
            pie_5_half.error / lsrt2_5.error
        );
        assert!(
            pie_5_half.error > BOUND_RATIO_HALF * lsrt2_5.error,
            "{model}"
        );
    }
}

/// Lower bound of NMSE(pie, 1 ms) / NMSE(LSRT2, 1 ms). Measured on this window (loaded 2-vCPU
/// VM; counts and errors do not depend on the load): double wishbone 26 417, multilink 28 058;
/// the bounds are about a fifth of the smaller measured ratio (room for round-off through the
/// stiff modes and harmless changes of the order of operations, while a pie that became as
/// accurate as LSRT2 per evaluation would fail by orders of magnitude).
const BOUND_RATIO: f64 = 5000.0;
/// Lower bound of NMSE(pie, 0.5 ms) / NMSE(LSRT2, 1 ms) (measured 9608 / 9723 re-linearising
/// every step, 9760 / 9731 every 5 steps).
const BOUND_RATIO_HALF: f64 = 2000.0;
/// Lower bound of NMSE(pie, 0.25 ms) / NMSE(LSRT2, 1 ms) (measured 2994 / 2940).
const BOUND_RATIO_QUARTER: f64 = 500.0;
/// Range of the observed (pre-asymptotic) order of pie (measured 0.730 / 0.841 on the double
/// wishbone, 0.764 / 0.863 on the multilink).
const ORDER_RANGE: std::ops::Range<f64> = 0.6..1.1;
