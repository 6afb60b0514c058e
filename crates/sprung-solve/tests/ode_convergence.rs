//! Convergence tests: every one-step method shows its theoretical order on the smooth
//! non-autonomous nonlinear problem `problems::Smooth` (analytic solution) in fixed-step mode.
//! The observed order is log2(e(h)/e(h/2)) of the max error at t_end, required within ±0.2.
//! In fixed-step mode `rtol`/`atol` only set the Newton accuracy of implicit methods; they are
//! tight here so that iteration errors do not mask the discretisation error.

use sprung_solve::ode::problems::Smooth;
use sprung_solve::ode::{Method, Options, Tolerance, solve};

const T_END: f64 = 2.0;

fn error_with_steps(method: Method, n: usize) -> f64 {
    let mut sys = Smooth;
    let opts = Options {
        step: Some(T_END / n as f64),
        // in fixed-step mode rtol/atol only set the Newton accuracy of implicit methods
        rtol: 1e-12,
        atol: Tolerance::Scalar(1e-12),
        ..Default::default()
    };
    let sol = solve(method, &mut sys, 0.0, &[1.0, 1.0], T_END, opts).unwrap();
    let ex = Smooth::exact(T_END);
    (0..2)
        .map(|i| (sol.y_final[i] - ex[i]).abs())
        .fold(0.0, f64::max)
}

fn observed_order(method: Method, n: usize) -> f64 {
    let e1 = error_with_steps(method, n);
    let e2 = error_with_steps(method, 2 * n);
    let e3 = error_with_steps(method, 4 * n);
    let p1 = (e1 / e2).log2();
    let p2 = (e2 / e3).log2();
    eprintln!("{method:?}: errors {e1:.3e} {e2:.3e} {e3:.3e}, orders {p1:.3} {p2:.3}");
    p2
}

fn check(method: Method, order: f64, n: usize) {
    let p = observed_order(method, n);
    assert!(
        (p - order).abs() <= 0.2,
        "{method:?}: observed order {p:.3}, expected {order}"
    );
}

#[test]
fn explicit_fixed_step_orders() {
    check(Method::Ode1, 1.0, 200);
    check(Method::Ode2, 2.0, 100);
    check(Method::Ode3, 3.0, 50);
    check(Method::Ode4, 4.0, 40);
    check(Method::Ode5, 5.0, 40);
    check(Method::Ode8, 8.0, 4);
}

#[test]
fn adaptive_explicit_in_fixed_mode_orders() {
    check(Method::Ode23, 3.0, 50);
    check(Method::Ode45, 5.0, 40);
}

#[test]
fn rosenbrock_orders() {
    check(Method::Lie, 1.0, 200);
    check(Method::Lsrt2, 2.0, 100);
    check(Method::Ros2, 2.0, 100);
    check(Method::Ros3p, 3.0, 50);
    check(Method::Ros34pw2, 3.0, 50);
    check(Method::Rodas3, 3.0, 50);
    check(Method::Rodas4, 4.0, 40);
    check(Method::Rodas5p, 5.0, 20);
    check(Method::Ode23s, 2.0, 100);
}

#[test]
fn implicit_one_step_orders() {
    check(Method::Radau5, 5.0, 10);
    check(Method::Ode23t, 2.0, 100);
    check(Method::Ode23tb, 2.0, 100);
}

#[test]
fn ode14x_orders() {
    for ord in 1..=4 {
        for iters in [1usize, 3] {
            check(
                Method::Ode14x {
                    newton_iters: iters,
                    extrapolation_order: ord,
                },
                ord as f64,
                [100, 50, 50, 40][ord - 1],
            );
        }
    }
}
