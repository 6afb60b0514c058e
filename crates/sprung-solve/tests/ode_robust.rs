//! Robustness of the implicit one-step methods (issue 18, item 4): ode23tb with a projection
//! hook, and the trapezoidal rule's ringing of stiff components (ode23t).

use sprung_solve::ode::problems::{Reference, Rober, scd};
use sprung_solve::ode::{MatMut, Method, OdeSystem, Options, Stats, Tolerance, solve};

/// ROBER with a projection onto `y1 + y2 + y3 = 1` (rescaling), which the exact solution
/// satisfies: the projection changes the state by round-off or by the integration error only.
struct RoberProjected;

impl OdeSystem for RoberProjected {
    fn dim(&self) -> usize {
        3
    }
    fn rhs(&mut self, t: f64, y: &[f64], f: &mut [f64]) {
        Rober.rhs(t, y, f)
    }
    fn jacobian(&mut self, t: f64, y: &[f64], j: MatMut<'_, f64>) -> bool {
        Rober.jacobian(t, y, j)
    }
    fn time_derivative(&mut self, t: f64, y: &[f64], d: &mut [f64]) -> bool {
        Rober.time_derivative(t, y, d)
    }
    fn project(&mut self, y: &mut [f64]) {
        let s = y[0] + y[1] + y[2];
        for v in y.iter_mut() {
            *v /= s;
        }
    }
}

fn run(method: Method, sys: &mut dyn OdeSystem, r: &Reference, rtol: f64) -> (f64, Stats) {
    let opts = Options {
        rtol,
        atol: Tolerance::PerComponent(r.atol(rtol)),
        max_step: Some(r.t_end),
        max_steps: 200_000,
        record: false,
        ..Default::default()
    };
    let sol = solve(method, sys, r.t0, &r.y0, r.t_end, opts)
        .unwrap_or_else(|e| panic!("{method:?} on {}: {e}", r.name));
    (scd(&sol.y_final, &r.y_ref), sol.stats)
}

/// Before the fix (issue 18): 1552 / 3425 / 18462 steps with 1635 / 3427 / 19927 rejections at
/// rtol 1e-3 / 1e-4 / 1e-6 against 224 / 449 / 1973 steps without the projection (the projection
/// changes the state by round-off only, 4.4e-16 relative). After: 219 / 445 / 1971 steps, 1
/// rejection, the same scd (2.45 / 3.09 / 4.40). Bounds: 10 % more steps, 0.2 digits.
#[test]
fn ode23tb_with_projection_costs_about_the_same() {
    let r = Rober::reference();
    for rtol in [1e-3, 1e-4, 1e-6] {
        let (s0, a) = run(Method::Ode23tb, &mut Rober, &r, rtol);
        let (s1, b) = run(Method::Ode23tb, &mut RoberProjected, &r, rtol);
        eprintln!(
            "ode23tb ROBER rtol {rtol:.0e}: plain {} steps ({} rej, scd {s0:.2}), projected {} steps ({} rej, scd {s1:.2})",
            a.steps, a.rejected, b.steps, b.rejected
        );
        assert!(
            b.steps as f64 <= 1.1 * a.steps as f64 && b.rejected <= a.rejected + 5,
            "projected: {} steps ({} rejected) vs {}",
            b.steps,
            b.rejected,
            a.steps
        );
        assert!(s1 > s0 - 0.2, "projected scd {s1:.2} vs {s0:.2}");
    }
}

/// ROBER with ode23t at rtol 1e-6: the trapezoidal rule (`R(∞) = -1`) does not damp errors of
/// the fast species y2; without removal of that ringing y2 ended 2 % off (scd 1.6, with wrong
/// signs at loose tolerances, see `src/ode/trbdf2.rs`). ode23t must detect it, remove it and
/// report it in `Stats::ringing_damped`. Measured: scd 4.44, ringing removed in 210 of
/// 2233 steps. (Known limit, not fixed: a stiff component that follows a smooth solution, as in
/// Prothero–Robinson with λ = -1e6, is mistaken for ringing; documented in docs/solvers.md.)
#[test]
fn ode23t_damps_and_reports_ringing() {
    let r = Rober::reference();
    let opts = Options {
        rtol: 1e-6,
        atol: Tolerance::PerComponent(r.atol(1e-6)),
        max_step: Some(r.t_end),
        ..Default::default()
    };
    let sol = solve(Method::Ode23t, &mut Rober, r.t0, &r.y0, r.t_end, opts).unwrap();
    let s = scd(&sol.y_final, &r.y_ref);
    let negative = (0..sol.len()).filter(|&i| sol.state(i)[1] < 0.0).count();
    eprintln!(
        "ode23t ROBER rtol 1e-6: scd {s:.2}, {} steps, ringing removed in {}, y2 < 0 at {negative} output points",
        sol.stats.steps, sol.stats.ringing_damped
    );
    assert!(s > 4.0, "scd {s:.2}");
    assert!(sol.stats.ringing_damped > 0);
    assert_eq!(negative, 0, "the fast species changed sign");
}
