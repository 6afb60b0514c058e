//! Issue acceptance (solver suite): both reference axles run with ode15s, ode23tb, ode23s and
//! RODAS4 through `sprung run` and agree with a tight reference (RODAS4, rtol 1e-9) over the
//! transient after the force step.
//!
//! Tolerance: at rtol 1e-6 the local errors are ~1e-6 of the state. Measured normalised RMS errors
//! of the transient: 3e-8 (rodas4), 2e-7 (ode15s), 1.5e-6 (ode23s), 5.6e-6 (ode23tb, second order
//! with the loosest error estimate); the bound 1e-4 leaves a factor ~20 over the worst for machine
//! and platform differences while still failing for a solver that is off by 0.01 %.

use std::path::Path;

mod common;

use common::sprung_ok as sprung;
use sprung_io::{Window, compare, read_results};

#[test]
fn stiff_solvers_agree_with_the_reference_on_both_axles() {
    for model in ["double_wishbone", "multilink"] {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("solvers_{model}"));
        let (o, m) = (out.to_str().unwrap(), format!("models/{model}.toml"));
        let common = ["--t-end", "5.2", "--out", o, "-q"];
        let run = |name: &str, solver: &str, rtol: &str, atol: &str| {
            let mut a = vec![
                "run",
                m.as_str(),
                "--name",
                name,
                "--solver",
                solver,
                "--rtol",
                rtol,
                "--atol",
                atol,
            ];
            a.extend_from_slice(&common);
            sprung(&a);
        };
        run("reference", "rodas4", "1e-9", "1e-11");
        let reference = read_results(out.join("reference.csv")).unwrap();
        for solver in ["ode15s", "ode23tb", "ode23s", "rodas4"] {
            run(solver, solver, "1e-6", "1e-9");
            let res = read_results(out.join(format!("{solver}.csv"))).unwrap();
            let e = compare(
                &res,
                &reference,
                &["wc_dx_L", "tl_bushing_fx_L"],
                Window::new(4.95, 5.2),
            )
            .unwrap();
            eprintln!(
                "{model} {solver}: NRMSE dx {:.2e}, Fx {:.2e}",
                e[0].nrmse, e[1].nrmse
            );
            assert!(
                e[0].nrmse < 1e-4 && e[1].nrmse < 1e-4,
                "{model} {solver}: NRMSE {} / {}",
                e[0].nrmse,
                e[1].nrmse
            );
        }
    }
}
