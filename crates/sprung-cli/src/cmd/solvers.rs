//! `sprung solvers`: list every solver with order, kind, step control and stiffness suitability
//! (the first-order catalogue, then the mechanical-only `rk4` and `pie`).

use sprung_solve::mech::tableau::NAMES as MECH_ROSENBROCK;
use sprung_solve::ode::{MethodKind, StepControl, catalogue};

/// Runs the command.
pub fn run() -> anyhow::Result<()> {
    println!(
        "{:<10} {:>5}  {:<16} {:<9} {:<6} description",
        "name", "order", "kind", "step", "stiff"
    );
    for m in catalogue() {
        let kind = match m.kind {
            MethodKind::Explicit => "explicit",
            MethodKind::Implicit => "implicit",
            MethodKind::LinearImplicit => "linear-implicit",
        };
        let step = match m.step_control {
            StepControl::Fixed => "fixed",
            StepControl::Adaptive => "adaptive",
        };
        println!(
            "{:<10} {:>5}  {:<16} {:<9} {:<6} {}",
            m.name,
            m.order,
            kind,
            step,
            if m.stiff { "yes" } else { "no" },
            m.description
        );
    }
    let rk4 = "classical Runge-Kutta on the mechanical system (same method as ode4)";
    println!(
        "{:<10} {:>5}  {:<16} {:<9} {:<6} {rk4}",
        "rk4", 4, "explicit", "fixed", "no"
    );
    let pie = "partly implicit Euler (document 002, eqs. 4-9): element states (eq. 7), then velocities about an explicit Euler position predictor (eq. 9), then positions (eq. 4)";
    println!(
        "{:<10} {:>5}  {:<16} {:<9} {:<6} {pie}",
        "pie", 1, "linear-implicit", "fixed", "yes"
    );
    let pie_lagged = "pie with the element-state rates of the last predictor evaluation, carried to the step start to first order (one q evaluation per step; docs/solvers.md)";
    println!(
        "{:<10} {:>5}  {:<16} {:<9} {:<6} {pie_lagged}",
        "pie_lagged", 1, "linear-implicit", "fixed", "yes"
    );
    println!();
    println!(
        "On sprung models the linear-implicit methods ({}) solve the reduced velocity-level",
        MECH_ROSENBROCK.join(", ")
    );
    println!(
        "system (I - h g J_v - (h g)^2 J_r K) dv = ... of document 000 eq. 11 per stage; methods with an embedded"
    );
    println!(
        "estimate run adaptively unless --step is given. All other methods integrate y = (r, v) with the analytic Jacobian."
    );
    println!(
        "rk4, pie and pie_lagged run on sprung models only (pie needs the split of v into body velocities and element states)."
    );
    println!(
        "Fixed step: sprung run MODEL --solver NAME --step H;  adaptive: sprung run MODEL --solver NAME --rtol R --atol A"
    );
    Ok(())
}
