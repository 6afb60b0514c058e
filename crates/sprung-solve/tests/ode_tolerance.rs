//! Honest tolerances (issue 18, item 3): achieved global error divided by the requested
//! tolerance, per method, over the test problems. The ratio is the eq.-14 norm of the global
//! error at the end point, `max_i |y_i - y_ref,i| / max(rtol·|y_ref,i|, atol_i)`: 1 means "the
//! end value is as accurate as a single step was asked to be".
//!
//! References: HIRES, Van der Pol (ε = 1e-6) and ROBER with the published reference values of
//! the Test Set for IVP Solvers ([`sprung_solve::ode::problems`]); `Smooth` with its analytic
//! solution (non-stiff, for the explicit methods too).

use sprung_solve::ode::problems::{Hires, Reference, Rober, Smooth, VanDerPol};
use sprung_solve::ode::{Method, OdeSystem, Options, RadauTolerances, Tolerance, solve};

fn ratio(
    method: Method,
    sys: &mut dyn OdeSystem,
    r: &Reference,
    rtol: f64,
    rt: RadauTolerances,
) -> f64 {
    let atol = r.atol(rtol);
    let opts = Options {
        rtol,
        atol: Tolerance::PerComponent(atol.clone()),
        max_step: Some(r.t_end - r.t0),
        record: false,
        radau_tolerances: rt,
        ..Default::default()
    };
    let sol = solve(method, sys, r.t0, &r.y0, r.t_end, opts)
        .unwrap_or_else(|e| panic!("{method:?} on {}: {e}", r.name));
    (0..r.y0.len())
        .map(|i| (sol.y_final[i] - r.y_ref[i]).abs() / (rtol * r.y_ref[i].abs()).max(atol[i]))
        .fold(0.0, f64::max)
}

fn smooth_ref() -> Reference {
    let t_end = 10.0;
    Reference {
        name: "Smooth",
        t0: 0.0,
        y0: vec![1.0, 1.0],
        t_end,
        y_ref: Smooth::exact(t_end).to_vec(),
        atol_scale: vec![1.0, 1.0],
    }
}

/// One row per method: ratios on each problem at rtol 1e-4 and 1e-7.
fn row(name: &str, stiff: bool, rt: RadauTolerances) -> Vec<f64> {
    let m = Method::from_name(name).unwrap();
    let mut out = Vec::new();
    for rtol in [1e-4, 1e-7] {
        out.push(ratio(m, &mut Smooth, &smooth_ref(), rtol, rt));
        if stiff {
            out.push(ratio(m, &mut Hires, &Hires::reference(), rtol, rt));
            out.push(ratio(
                m,
                &mut VanDerPol::default(),
                &VanDerPol::reference(),
                rtol,
                rt,
            ));
            out.push(ratio(m, &mut Rober, &Rober::reference(), rtol, rt));
        }
    }
    let cells: Vec<String> = out.iter().map(|v| format!("{v:.2}")).collect();
    eprintln!(
        "| {name}{} | {} |",
        if rt == RadauTolerances::AsGiven {
            " (AsGiven)"
        } else {
            ""
        },
        cells.join(" | ")
    );
    out
}

#[test]
fn achieved_error_over_requested_tolerance() {
    eprintln!(
        "| method | rtol 1e-4: Smooth | HIRES | VdP | ROBER | rtol 1e-7: Smooth | HIRES | VdP | ROBER |"
    );
    for name in ["ode45", "ode23", "ode113"] {
        row(name, false, RadauTolerances::Hairer);
    }
    let mut worst = Vec::new();
    for name in [
        "ode15s", "ode23s", "ode23t", "ode23tb", "ros2", "ros3p", "ros34pw2", "rodas3", "rodas4",
        "rodas5p", "radau5",
    ] {
        let r = row(name, true, RadauTolerances::Hairer);
        worst.push((name, r.iter().copied().fold(0.0, f64::max)));
    }
    let given = row("radau5", true, RadauTolerances::AsGiven);
    // Measured (2026-11-26, see docs/solvers.md): the Rosenbrock methods of order ≥ 3 and
    // radau5 stay within 6.05 (ros3p on Smooth at 1e-7); bound 10. The low-order implicit
    // methods do not (ode23t 1188 on HIRES at 1e-7, ode23s 74, ode23tb 99, ode15s 11): their
    // rows in docs/solvers.md say so, the bound 2000 only catches a regression.
    for (name, w) in worst {
        let bound = match name {
            "ode15s" | "ode23s" | "ode23t" | "ode23tb" => 2000.0,
            _ => 10.0,
        };
        assert!(w <= bound, "{name}: achieved / requested {w:.2} > {bound}");
    }
    // radau5 with the tolerances as given is at least as accurate as requested everywhere
    // (measured at most 0.14)
    let gw = given.iter().copied().fold(0.0, f64::max);
    assert!(gw <= 1.0, "radau5 AsGiven: {gw:.2}");
}
