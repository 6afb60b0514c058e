//! The stage term ∂q/∂t of the linearisation (document 000, eq. 6: the Rosenbrock stages need
//! the explicit time derivative of the right-hand side) includes open elements driven by time:
//! an element's own time table (the dual-axle steering's `steering_wheel_angle_deg` of the
//! 10-wheeler's cornering) and time signals read through input slots (the steering-wheel angle
//! of `models/steering_dual_axle.toml`). Checked against central differences over t of the
//! accelerations at a fixed state; without the term RODAS4 and LSRT2 lose their order while a
//! table drives the model (measured: the step count of RODAS4 grew like rtol^(-1/2)).

use sprung_mbs::Evaluator;
use sprung_solve::mech::Linearisation;
use sprung_test_support::model_path;

/// q_t of the linearisation at (t, design state) against (q(t + h) − q(t − h)) / 2h.
/// Returns (largest difference, largest |q_t|).
fn q_t_against_differences(file: &str, t: f64) -> (f64, f64) {
    let model = sprung::Model::from_file(model_path(file)).unwrap();
    let c = model.compiled().clone();
    let (r, v) = c.design_state();
    let mut eval = Evaluator::new(c.clone());
    let mut lin = Linearisation::new(c.n_r(), c.pattern.clone());
    eval.linearise(t, &r, &v, &mut lin);
    // h: the ramps are linear in t, so the difference is exact up to round-off; 1e-4 s keeps
    // the round-off of the stiff forces (up to 1e6 N on 1e-4 s) well below the compared terms.
    let h = 1e-4;
    let (mut qp, mut qm) = (vec![0.0; c.n_v()], vec![0.0; c.n_v()]);
    eval.accelerations(t + h, &r, &v, &mut qp);
    eval.accelerations(t - h, &r, &v, &mut qm);
    let mut diff = 0.0f64;
    let mut scale = 0.0f64;
    for (k, qt) in lin.q_t.iter().enumerate() {
        let fd = (qp[k] - qm[k]) / (2.0 * h);
        diff = diff.max((qt - fd).abs());
        scale = scale.max(qt.abs());
    }
    (diff, scale)
}

#[test]
fn q_t_contains_an_element_s_own_time_table() {
    // 6.5 s: inside the −720° ramp of Table 1 (5 → 8 s).
    let (diff, scale) = q_t_against_differences("truck_cornering.toml", 6.5);
    eprintln!("truck cornering: |q_t - FD| = {diff:.3e}, |q_t| = {scale:.3e}");
    assert!(scale > 1.0, "the ramp must move something: |q_t| = {scale}");
    // Measured ~1e-7 of the scale; 1e-5 leaves room for the FD round-off of both sides.
    assert!(diff <= 1e-5 * scale, "{diff} vs {scale}");
}

#[test]
fn q_t_contains_time_signals_read_through_input_slots() {
    let (diff, scale) = q_t_against_differences("steering_dual_axle.toml", 6.5);
    eprintln!("steering (slot signals): |q_t - FD| = {diff:.3e}, |q_t| = {scale:.3e}");
    assert!(scale > 1.0, "the ramp must move something: |q_t| = {scale}");
    assert!(diff <= 1e-5 * scale, "{diff} vs {scale}");
}

/// Through an element link (`sprung_mbs::element_link`): in the bump crossing the speed
/// controllers' target ramps (their own time tables) and their torque output feeds the rear
/// tires' `drive_torque` slots, so the rear wheels' Ω̇ moves with time through the link
/// (∂Ω̇/∂T_d · ∂T/∂t, without evaluating the tire). Same check and bound as above.
#[test]
fn q_t_contains_time_through_element_links() {
    let t = 3.0;
    let (diff, scale) = q_t_against_differences("truck_10wheeler.toml", t);
    eprintln!("truck bump (links): |q_t - FD| = {diff:.3e}, |q_t| = {scale:.3e}");
    assert!(
        scale > 1e-3,
        "the ramp must move something: |q_t| = {scale}"
    );
    assert!(diff <= 1e-5 * scale, "{diff} vs {scale}");
    // The rear tire's spin row is among the rows that move.
    let model = sprung::Model::from_file(model_path("truck_10wheeler.toml")).unwrap();
    let c = model.compiled().clone();
    let tire = c
        .open_elements
        .iter()
        .find(|e| e.name == "tire_r1_in_L")
        .unwrap();
    assert_eq!(tire.links.len(), 1);
    let omega = tire.law.state_names().iter().position(|s| s == "omega");
    let row = c.n_body_v() + tire.state_offset + omega.unwrap();
    let (r, v) = c.design_state();
    let mut eval = Evaluator::new(c.clone());
    let mut lin = Linearisation::new(c.n_r(), c.pattern.clone());
    eval.linearise(t, &r, &v, &mut lin);
    assert!(lin.q_t[row].abs() > 1e-3, "∂Ω̇/∂t = {}", lin.q_t[row]);
}
