//! An element output feeding an element input slot (`sprung_mbs::element_link`): a PI speed
//! controller (`speed_controller`, `torque = "output"`) drives a tire whose wheel spin is an
//! element state through `inputs = { drive_torque = "drive.torque" }`, on the quarter car
//! (`models/quarter_car.toml`).
//!
//! * The linked model follows the same manoeuvre as the quarter car whose spinning wheel body is
//!   driven by the same controller acting as a torque between wheel and body (a second
//!   implementation path: no link, no spin state).
//! * The assembled J_r K and J_v agree with central differences of q — the check of the link's
//!   chain rule (∂tire/∂T_d · ∂T/∂(controller's markers and state)) and of its block pattern.
//! * Chained links, cycles, unknown outputs and unknown names are errors naming the element.

use std::sync::Arc;

use sprung::{Control, Model, Simulation, StopReason};
use sprung_mbs::MbsSystem;
use sprung_model::{OpenElement, ParamValue};
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::{tangent_columns, worst_mechanical_jacobian_error};

fn load() -> sprung_model::Model {
    sprung_model::load(&sprung_test_support::model_path("quarter_car.toml")).unwrap()
}

fn body<'a>(d: &'a mut sprung_model::Model, name: &str) -> &'a mut sprung_model::Body {
    d.bodies.iter_mut().find(|b| b.name == name).unwrap()
}

fn text(s: &str) -> ParamValue {
    ParamValue::Text(s.into())
}

/// The speed controller `drive` on the quarter car: the body's speed from 10 to 12 m/s in 1 s.
fn controller(torque: &str) -> OpenElement {
    let num = |x: f64| ParamValue::Number(x);
    OpenElement {
        name: "drive".into(),
        kind: "speed_controller".into(),
        markers: vec!["guide.I".into(), "wheel_centre".into(), "knuckle.J".into()],
        parameters: [
            ("target_time", ParamValue::List(vec![0.0, 1.0])),
            ("target_speed", ParamValue::List(vec![10.0, 12.0])),
            ("kp", num(400.0)),
            ("ki", num(200.0)),
            ("torque_max", num(900.0)),
            ("initial_integral", num(0.3)),
            ("torque", text(torque)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        inputs: Default::default(),
        mirror: false,
    }
}

/// The quarter car with the spinning wheel body driven by the controller (torque applied
/// between wheel and body), or with the wheel's spin as the tire's state and the controller's
/// torque fed into the tire's `drive_torque` slot. The spin-state variant follows
/// `tires.rs::spin_as_state`: the carrier keeps the mass and transverse inertia, the knuckle
/// holds it about y (1e6 N m/rad).
fn quarter_car(linked: bool) -> sprung_model::Model {
    let mut d = load();
    if linked {
        let wheel = body(&mut d, "wheel");
        let omega = wheel.angular_velocity[1];
        wheel.angular_velocity = [0.0; 3];
        wheel.inertia.principal = Some([0.8, 0.8, 0.8]);
        for e in &mut d.force_elements {
            if let sprung_model::ForceElement::Bushing(b) = e
                && b.name == "knuckle"
            {
                b.rot_stiffness[1] = 1e6;
                b.rot_damping[1] = 500.0;
                b.spin_axis = None;
            }
        }
        let tire = &mut d.elements[0];
        let p = &mut tire.parameters;
        p.insert("spin".into(), text("state"));
        p.insert("spin_inertia".into(), ParamValue::Number(1.2));
        p.insert("initial_omega".into(), ParamValue::Number(omega));
        tire.inputs = [("drive_torque".to_string(), "drive.torque".to_string())].into();
        d.elements.push(controller("output"));
    } else {
        d.elements.push(controller("applied"));
    }
    let extra = sprung_model::parse_raw(
        "[model]\nname = \"o\"\n[[outputs]]\nname = \"torque\"\nquantity = \"element_output\"\nelement = \"drive\"\noutput = \"torque\"\n[[outputs]]\nname = \"fx\"\nquantity = \"element_output\"\nelement = \"tire\"\noutput = \"fx\"\n",
        sprung_model::Format::Toml,
        "o",
    )
    .unwrap();
    d.outputs.retain(|o| o.name != "fx");
    d.outputs.extend(extra.outputs);
    d
}

fn channel(model: &Model, name: &str) -> usize {
    model
        .channel_names()
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap()
}

/// Both variants over the 1 s speed ramp with the cleat at 2 m (LSRT2, 1 ms): speed, drive
/// torque and F_x. Differences come from the carrier's stiff hold about the spin axis (the
/// spinning body has none) and from where the drive reaction acts (carrier / body), as in
/// `tires.rs::spin_state_matches_the_spinning_wheel_body_on_the_quarter_car`. Measured: speed
/// 1.2e-4 of the 2 m/s ramp, torque 3.2e-4 and F_x 2.0e-3 of their largest values; bounds
/// 2.5e-4, 2e-3, 5e-3.
#[test]
fn controller_feeding_a_spin_state_tire_matches_the_driven_wheel_body() {
    let record = |linked: bool| {
        let model = Model::from_description(quarter_car(linked)).unwrap();
        let idx = ["vx", "torque", "fx"].map(|n| channel(&model, n));
        let mut sim = Simulation::new(model).unwrap();
        let mut rows = Vec::new();
        let rep = sim.run(1.0, &mut |_, ch| {
            rows.push(idx.map(|k| ch[k]));
            Control::Continue
        });
        assert_eq!(rep.stop, StopReason::Completed, "{rep:?}");
        rows
    };
    let (a, b) = (record(false), record(true));
    assert_eq!(a.len(), b.len());
    let worst = |k: usize| {
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x[k] - y[k]).abs())
            .fold(0.0, f64::max)
    };
    let largest = |k: usize| a.iter().map(|x| x[k].abs()).fold(0.0, f64::max);
    let (dv, dt, dfx) = (worst(0), worst(1), worst(2));
    let (t_max, fx_max) = (largest(1), largest(2));
    eprintln!(
        "linked vs body: |d vx| {dv:.2e} m/s, |d torque| {dt:.3} of {t_max:.1} N m, |d fx| {dfx:.3} of {fx_max:.1} N; final vx {}",
        b.last().unwrap()[0]
    );
    assert!(
        b.last().unwrap()[0] > 11.5,
        "the controller accelerates the car"
    );
    assert!(t_max > 100.0, "the test drives with a real torque");
    assert!(dv < 2.5e-4 * 2.0, "speed differs by {dv}");
    assert!(dt < 2e-3 * t_max, "torque differs by {dt}");
    assert!(dfx < 5e-3 * fx_max, "F_x differs by {dfx}");
}

/// Assembled J_r K (through the tangent map) and J_v of the linked model against central
/// differences of q at four perturbed states with velocities (element states included), plain
/// and congruence form. Bound 1e-6 of each column's scale as in
/// `crates/sprung-mbs/tests/open_elements.rs` (central differences with a scaled step of 1e-6:
/// truncation and round-off both far below). Also asserts that the link's block is not empty:
/// the tire's spin rate reacts to the body's forward speed through the controller.
#[test]
fn linked_jacobian_matches_differences_of_q() {
    let model = Model::from_description(quarter_car(true)).unwrap();
    let compiled = model.compiled().clone();
    let tire = compiled
        .open_elements
        .iter()
        .position(|e| e.name == "tire")
        .unwrap();
    let drive = compiled
        .open_elements
        .iter()
        .position(|e| e.name == "drive")
        .unwrap();
    assert!(drive < tire, "the source is evaluated first");
    assert_eq!(compiled.open_elements[tire].links.len(), 1);
    let nbv = compiled.n_body_v();
    let tire_el = &compiled.open_elements[tire];
    let omega = tire_el.law.state_names().iter().position(|s| s == "omega");
    let omega_row = nbv + tire_el.state_offset + omega.unwrap();
    let mut sys = MbsSystem::new(compiled.clone());
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let mut lin = Linearisation::new(nr, sys.pattern());
    let (r0, v0) = compiled.design_state();
    let t = 0.4;
    let mut worst = 0.0f64;
    for (trial, congruent) in [(0, false), (1, true), (2, false), (3, true)] {
        let (mut r, mut v) = (r0.clone(), v0.clone());
        let wiggle = |k: usize| ((k * 7 + trial * 13) % 11) as f64 / 11.0 - 0.5;
        r[2] -= 0.01; // body down: the tire carries load
        r[9] -= 0.005 + 0.002 * trial as f64;
        for (k, x) in v.iter_mut().enumerate() {
            *x += 0.05 * wiggle(k);
        }
        if congruent {
            sys.linearise_congruent(t, &r, &v, &mut lin);
            lin.expand();
        } else {
            sys.linearise(t, &r, &v, &mut lin);
        }
        let jv = lin.j_v.to_dense_row_major();
        let jrk = lin.j_rk.to_dense_row_major();
        assert!(
            jv[omega_row * nv].abs() > 1e-3,
            "∂Ω̇/∂v_x of the body through the controller: {}",
            jv[omega_row * nv]
        );
        let tangent_columns = tangent_columns(nr, nv, |e, w| sys.tangent(&r, e, w));
        let err =
            worst_mechanical_jacobian_error(&r, &v, &jrk, &jv, &tangent_columns, |r, v, out| {
                sys.accelerations(t, r, v, out)
            });
        worst = worst.max(err);
    }
    eprintln!("worst column error {worst:e}");
    assert!(worst < 1e-6, "worst column error {worst:e}");
}

fn compile_error(d: sprung_model::Model) -> String {
    match Model::from_description(d) {
        Ok(_) => panic!("the model compiles"),
        Err(e) => e.to_string(),
    }
}

/// Mistakes in links are errors that name the element, the slot and the way out.
#[test]
fn link_mistakes_are_explained() {
    // An output the source does not have.
    let mut d = quarter_car(true);
    d.elements[0].inputs = [("drive_torque".to_string(), "drive.moment".to_string())].into();
    let e = compile_error(d);
    assert!(
        e.contains("'tire'") && e.contains("no output `moment`") && e.contains("torque"),
        "{e}"
    );
    // An element feeding itself.
    let mut d = quarter_car(true);
    d.elements[0].inputs = [("drive_torque".to_string(), "tire.fx".to_string())].into();
    let e = compile_error(d);
    assert!(e.contains("tire") && e.contains("own"), "{e}");
    // A cycle: the controller's target from the tire, the tire's torque from the controller.
    let mut d = quarter_car(true);
    let drive = d.elements.iter_mut().find(|e| e.name == "drive").unwrap();
    drive.parameters.remove("target_time");
    drive.parameters.remove("target_speed");
    drive.inputs = [("target_speed".to_string(), "tire.vx".to_string())].into();
    let e = compile_error(d);
    assert!(e.contains("cycle") && e.contains("one level deep"), "{e}");
    // Neither an input nor an element output.
    let mut d = quarter_car(true);
    d.elements[0].inputs = [("drive_torque".to_string(), "driv.torque".to_string())].into();
    let e = compile_error(d);
    assert!(
        e.contains("driv.torque") && e.contains("neither an input nor an element output"),
        "{e}"
    );
}

/// Reading an output channel of the fed element alone evaluates its source first: the tire's
/// drive torque output equals the controller's torque at every sample.
#[test]
fn fed_slot_is_current_in_the_output_channels() {
    let mut d = quarter_car(true);
    let extra = sprung_model::parse_raw(
        "[model]\nname = \"o\"\n[[outputs]]\nname = \"tire_drive\"\nquantity = \"element_output\"\nelement = \"tire\"\noutput = \"drive_torque\"\n",
        sprung_model::Format::Toml,
        "o",
    )
    .unwrap();
    d.outputs.extend(extra.outputs);
    let model: Arc<Model> = Model::from_description(d).unwrap();
    let (it, id) = (channel(&model, "torque"), channel(&model, "tire_drive"));
    let mut sim = Simulation::new(model).unwrap();
    let mut n = 0;
    sim.run(0.2, &mut |_, ch| {
        assert_eq!(ch[it], ch[id]);
        n += 1;
        Control::Continue
    });
    assert!(n > 10);
}

/// The spin-state tire's analytic ∂(F, T, ṡ)/∂(T_d, T_b) (`input_partials`, what a link chains)
/// against central differences over the slot values, driving and braking, while rolling and
/// with the wheel slipping against the brake. Bound 1e-6 of the largest entry (the differences'
/// truncation and round-off level, as for the other element partials). The brake torque acts
/// only when positive; at T_b = 0 the analytic column is the right derivative (a central
/// difference there gives half of it), so both points have T_b > 0.
#[test]
fn tire_input_partials_match_differences() {
    use nalgebra::{DMatrix, Matrix3, Vector3};
    use sprung_mbs::element_law::{
        ElementInput, ElementScratch, MarkerState, difference_input_partials,
    };
    let model = Model::from_description(quarter_car(true)).unwrap();
    let el = model
        .compiled()
        .open_elements
        .iter()
        .find(|e| e.name == "tire")
        .unwrap();
    let law = el.law.as_ref();
    let rows = 6 + law.n_states();
    let marker = MarkerState {
        x: Vector3::new(0.0, 0.0, 0.30),
        rot: Matrix3::identity(),
        v: Vector3::new(10.0, 0.1, 0.0),
        w: Vector3::new(0.02, 0.1, 0.05),
    };
    let markers = [marker];
    for (omega, z, drive, brake) in [(31.0, 0.0, 200.0, 0.5), (29.0, 1.5e-3, -50.0, 600.0)] {
        let states = [0.001, -0.002, 0.0, omega, z];
        let inputs = [drive, brake];
        let x = ElementInput {
            t: 0.0,
            markers: &markers,
            states: &states,
            inputs: &inputs,
        };
        let mut an = DMatrix::zeros(rows, 2);
        assert!(law.input_partials(&x, &mut an));
        let mut s = ElementScratch::new(law);
        s.evaluate(law, &x);
        let mut fd = DMatrix::zeros(rows, 2);
        for slot in 0..2 {
            let mut col = vec![0.0; rows];
            difference_input_partials(law, &x, &mut s, slot, &mut col);
            fd.column_mut(slot).copy_from_slice(&col);
        }
        let scale = an.amax();
        let err = (&an - &fd).amax();
        assert!(scale > 1e-3, "the slots act: {an}");
        assert!(err < 1e-6 * scale, "input partials: {an} vs {fd}");
    }
}
