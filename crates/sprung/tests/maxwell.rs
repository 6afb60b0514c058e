//! The Maxwell element (one internal state) of `models/maxwell_solid.toml` against the exact step
//! response of the linear system it forms with the mass and the parallel spring:
//!
//! y = (x, ẋ, x_d),  y' = A y + b,  A = [[0, 1, 0], [−(k_p + k)/m, 0, k/m], [k/c, 0, −k/c]],
//! b = (0, F/m, 0),  y(0) = 0  ⇒  y(t) = A⁻¹ (exp(A t) − I) b,
//!
//! with exp(A t) evaluated here by scaling and squaring of its Taylor series (independent of
//! the engine). The element state is integrated inside the iteration matrix of LSRT2, by the
//! adaptive Rosenbrock and by the first-order suite.

use nalgebra::{Matrix3, Vector3};
use sprung::{Control, Model, RunSettings, Simulation, StopReason};

const M: f64 = 10.0;
const KP: f64 = 1000.0;
const K: f64 = 10000.0;
const C: f64 = 200.0;
const F: f64 = 100.0;

fn expm(a: &Matrix3<f64>) -> Matrix3<f64> {
    let norm = a.abs().row_sum().max();
    let s = (norm.max(1.0).log2().ceil() as i32 + 4).max(0);
    let a_s = a / 2f64.powi(s);
    let mut term = Matrix3::identity();
    let mut sum = Matrix3::identity();
    for k in 1..30 {
        term = term * a_s / k as f64;
        sum += term;
    }
    for _ in 0..s {
        sum = sum * sum;
    }
    sum
}

fn exact(t: f64, c: f64) -> Vector3<f64> {
    let a = Matrix3::new(0.0, 1.0, 0.0, -(KP + K) / M, 0.0, K / M, K / c, 0.0, -K / c);
    let b = Vector3::new(0.0, F / M, 0.0);
    a.try_inverse().unwrap() * (expm(&(a * t)) - Matrix3::identity()) * b
}

fn model(c: f64) -> std::sync::Arc<Model> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/maxwell_solid.toml"
    );
    let mut d = sprung_model::load(std::path::Path::new(path)).unwrap();
    d.elements[0]
        .parameters
        .insert("damping".into(), sprung_model::ParamValue::Number(c));
    Model::from_description(d).unwrap()
}

/// Largest error of x and x_d over [0, 2] s of a run with `settings`, and the state scale.
fn max_error(c: f64, settings: RunSettings) -> (f64, f64) {
    max_error_against(c, c, settings)
}

/// [`max_error`] of the model with damping `c` against the exact response with damping `c_exact`.
fn max_error_against(c: f64, c_exact: f64, settings: RunSettings) -> (f64, f64) {
    let mut sim = Simulation::with_settings(model(c), settings).unwrap();
    let (mut err, mut scale) = (0.0f64, 0.0f64);
    let report = sim.run(2.0, &mut |t, ch| {
        let y = exact(t, c_exact);
        // Channels: x, maxwell_force, damper_elongation.
        err = err.max((ch[0] - y.x).abs()).max((ch[2] - y.z).abs());
        scale = scale.max(y.x.abs());
        Control::Continue
    });
    assert_eq!(report.stop, StopReason::Completed);
    (err, scale)
}

fn settings(method: &str, step: f64) -> RunSettings {
    let mut s = model(C).default_settings();
    s.method = method.into();
    s.step = step;
    s.output_interval = 1e-3;
    s
}

/// LSRT2 at 1 ms: second order. The bound is derived by Richardson extrapolation: with the
/// error e_h ≈ C h², e_h ≈ (4/3) |y_h − y_{h/2}|; the ratio e_h / e_{h/2} (measured 3.99) shows
/// that 1 ms is in the asymptotic range, and the error at 1 ms must stay within 1.2× the
/// extrapolated estimate (20 % for the non-asymptotic remainder). Measured: 3.54e-7 m of the
/// 0.1 m response at 1 ms, 8.8e-8 m at 0.5 ms (ratio 4.002); the absolute bound 5e-6 of the
/// response is 1.4× the measured value.
#[test]
fn lsrt2_at_1_ms_follows_the_exact_step_response_at_second_order() {
    let (e1, scale) = max_error(C, settings("lsrt2", 1e-3));
    let (e2, _) = max_error(C, settings("lsrt2", 5e-4));
    let ratio = e1 / e2;
    assert!((3.5..4.5).contains(&ratio), "order-2 ratio {ratio}");
    let estimate = 4.0 / 3.0 * (e1 - e2);
    assert!(
        e1 <= 1.2 * estimate,
        "error {e1:e}, Richardson estimate {estimate:e}"
    );
    assert!(e1 < 5e-6 * scale, "error {e1:e} of {scale}");
}

/// A stiff element state: c = 1 N s/m gives a relaxation rate k/c = 1e4 1/s, ten times 1/h.
/// A lagged (explicit) state would blow up (|1 − h k/c| = 9); inside the iteration matrix LSRT2
/// stays stable and within 1e-4 of the 0.1 m response (measured 6.7e-5: the fast mode is
/// resolved only after it has decayed).
#[test]
fn a_stiff_element_state_is_stable_at_1_ms() {
    let (err, scale) = max_error(1.0, settings("lsrt2", 1e-3));
    assert!(err < 1e-4 * scale, "error {err:e} of {scale}");
}

/// The adaptive Rosenbrock (rodas4) and the first-order suite (ode15s, radau5) integrate the
/// element state too. At rtol 1e-8 (atol 1e-10) the local errors are about 1e-9 of the 0.1 m
/// response and accumulate a few times over the run: bound 5e-8 of the response; measured 8e-10
/// (rodas4), 1.5e-9 (ode15s), 2.1e-9 m (radau5).
#[test]
fn adaptive_and_first_order_methods_integrate_element_states() {
    for method in ["rodas4", "ode15s", "radau5"] {
        let mut s = settings(method, 1e-3);
        s.rtol = 1e-8;
        s.atol = 1e-10;
        s.adaptive = Some(true);
        let (err, scale) = max_error(C, s);
        assert!(err < 5e-8 * scale, "{method}: error {err:e} of {scale}");
    }
}

/// Static equilibrium with an element state: under the 100 N load the Maxwell element relaxes
/// completely (series force 0, damper elongation = displacement) and the parallel spring carries
/// the load alone: x = F / k_p = 0.1 m. The state is an unknown of the Newton search; the
/// tolerance 1e-9 m is the search's relative tolerance (1e-10) times the 0.1 m deflection with
/// a factor 100 of margin (measured: exact to round-off, the problem is linear).
#[test]
fn static_equilibrium_solves_for_the_element_state() {
    let mut sim = Simulation::new(model(C)).unwrap();
    sim.advance_to(0.01).unwrap();
    sim.equilibrium().unwrap();
    let x = sim.channel("x").unwrap();
    let xd = sim.channel("damper_elongation").unwrap();
    let f = sim.channel("maxwell_force").unwrap();
    assert!((x - F / KP).abs() < 1e-9, "x {x}");
    assert!((xd - F / KP).abs() < 1e-9, "x_d {xd}");
    assert!(f.abs() < 1e-6, "series force {f}");
    assert_eq!(sim.element_states("maxwell").unwrap(), &[xd]);
    // From there nothing moves.
    sim.advance_to(0.5).unwrap();
    assert!((sim.channel("x").unwrap() - F / KP).abs() < 1e-9);
}

/// Modes with an element state: the first-order system (x, ẋ, x_d) has the characteristic
/// polynomial λ³ + (k/c) λ² + ((k_p + k)/m) λ + k_p k/(m c) (from A of the module docs): the
/// non-zero eigenvalues of `modes()` are its roots (checked by the polynomial's residual), and
/// there are exactly three of them and 13 in all (6 positions, 6 velocities, 1 state: no
/// spurious modes from the padding of the state block).
#[test]
fn modes_include_the_element_state_without_spurious_ones() {
    let mut sim = Simulation::new(model(C)).unwrap();
    let modes = sim.modes().unwrap();
    let nonzero: Vec<_> = modes
        .eigenvalues
        .iter()
        .filter(|l| l.norm() > 1e-6)
        .collect();
    assert_eq!(nonzero.len(), 3, "{nonzero:?}");
    assert_eq!(modes.eigenvalues.len(), 2 * 6 + 1);
    let p = |l: nalgebra::Complex<f64>| {
        l * l * l + (K / C) * l * l + ((KP + K) / M) * l + KP * K / (M * C)
    };
    for l in nonzero {
        // |p'(λ)| ~ 3|λ|² ~ 2500: a residual of 1e-9 of |λ|³ is an eigenvalue error of ~1e-9.
        let r = p(*l).norm() / l.norm().powi(3);
        assert!(r < 1e-9, "lambda {l}: residual {r:e}");
    }
}

/// The partly implicit Euler (`pie`, document 002 eqs. 4-9) integrates the element state by
/// eq. 7 before the mass: first order. Errors at 1, 0.5 and 0.25 ms; the observed order
/// log2(e_h / e_{h/2}) must be 1 ± 0.1 on both halvings (a first-order error constant with a
/// small h² remainder; measured errors 2.40e-3, 1.22e-3, 6.15e-4 m: orders 0.975, 0.988).
/// `pie_lagged` (step (a)'s state rates from the last predictor evaluation, carried to the step
/// start to first order; docs/solvers.md) is first order too: the same bound. (On this linear
/// model its correction is exact and it repeats `pie`'s steps to round-off; the nonlinear
/// check is the truck against RODAS4, `tests/truck_reference.rs`.)
#[test]
fn pie_follows_the_exact_step_response_at_first_order() {
    for method in ["pie", "pie_lagged"] {
        let e: Vec<f64> = [1e-3, 5e-4, 2.5e-4]
            .iter()
            .map(|&h| max_error(C, settings(method, h)).0)
            .collect();
        eprintln!("{method}: errors {e:?}");
        for w in e.windows(2) {
            let q = (w[0] / w[1]).log2();
            assert!(
                (q - 1.0).abs() < 0.1,
                "{method} observed order {q:.3} (errors {e:?})"
            );
        }
    }
}

/// The stiff element state of `a_stiff_element_state_is_stable_at_1_ms` (k/c = 1e4 1/s, ten
/// times 1/h) with the partly implicit Euler: eq. 7 holds ∂f/∂s = −k/c inside its matrix, so
/// the state is stable at 1 ms where a lagged state would blow up (|1 − h k/c| = 9). Eq. 7 takes
/// the position explicitly, though: in a motion at speed u the state trails the position by
/// δ = h u + c u / k (from s^{k+1} = (s^k + a x^k)/(1 + a), a = h k/c), so the element force is
/// k δ = (c + k h) u — a damper c + k h = 11 N s/m instead of c = 1 N s/m at this step, the
/// method's first-order error, large here because k h ≫ c. The test checks this modified
/// equation: against the exact response with damping c + k h the run stays within 2.5 % of the
/// 0.2 m peak response (measured 1.6 %, the ordinary first-order error; bound 1.5 × measured),
/// while against the true damping it is off by 30 % (5.9e-2 m); the modified equation must
/// explain at least 90 % of that error (measured 95 %). Bounded errors: nothing grows.
#[test]
fn pie_keeps_a_stiff_element_state_stable_at_1_ms() {
    let h = 1e-3;
    let (err_true, scale) = max_error(1.0, settings("pie", h));
    let (err_mod, _) = max_error_against(1.0, 1.0 + K * h, settings("pie", h));
    eprintln!("pie stiff: vs c {err_true:e}, vs c + k h {err_mod:e} of {scale}");
    assert!(err_mod < 2.5e-2 * scale, "error {err_mod:e} of {scale}");
    assert!(err_mod < 0.1 * err_true, "{err_mod:e} vs {err_true:e}");
}
