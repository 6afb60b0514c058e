//! The tire element's one-pass `ElementLaw::evaluate_with_partials` (one wheel–road contact, one
//! dual-number pass of the law) against `evaluate` followed by `partials` (two contacts, the
//! law's `f64` evaluation and its separate dual pass): forces, torques, state rates, outputs and
//! both partial blocks must be **bit for bit** equal, for every tire law (linear, TMeasy,
//! PAC2002 from both `.tir` files), both spin models, and poses on the cleat's flat part, its
//! edge and top, cambered and steered, at standstill, reversing and lifted off. Exact equality is
//! the bound because both paths perform the same floating-point operations on the same inputs
//! (`sprung_vehicle::dual`: a dual number's value is the `f64` result); any drift of the fast
//! path would show here first.

use nalgebra::{DMatrix, Rotation3, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, ElementScratch, MarkerState,
};
use sprung_model::ParamValue;

/// The quarter car's tire element on its cleat road with law `kind`, on the spinning wheel body
/// or (`spin_state`) on a carrier with the spin as a state.
fn element(kind: &str, tir: Option<&str>, spin_state: bool) -> std::sync::Arc<dyn ElementLaw> {
    let load = |name: &str| sprung_model::load(&sprung_test_support::model_path(name)).unwrap();
    let mut m = load("quarter_car.toml");
    match kind {
        "tire_linear" => {
            let mut p = load("wheel_on_road.toml").elements[0].parameters.clone();
            p.remove("road");
            m.elements[0].parameters = p;
        }
        "pac2002" => {
            let path = sprung_test_support::model_path(tir.unwrap());
            m.elements[0].parameters = [(
                "tir_file".to_string(),
                ParamValue::Text(path.display().to_string()),
            )]
            .into();
        }
        _ => {}
    }
    m.elements[0].kind = kind.to_string();
    if spin_state {
        let p = &mut m.elements[0].parameters;
        p.insert("spin".into(), ParamValue::Text("state".into()));
        p.insert("spin_inertia".into(), ParamValue::Number(1.2));
    }
    let c = sprung_mbs::compile_with(&m, &sprung_vehicle::registry()).unwrap();
    c.open_elements[0].law.clone()
}

/// Everything one evaluation writes.
#[derive(Debug, PartialEq)]
struct Written {
    force: Vec<Vector3<f64>>,
    torque: Vec<Vector3<f64>>,
    rates: Vec<f64>,
    outputs: Vec<f64>,
    position: DMatrix<f64>,
    velocity: DMatrix<f64>,
    provided: (bool, bool),
}

impl Written {
    fn new(law: &dyn ElementLaw) -> Self {
        let s = ElementScratch::new(law);
        Self {
            force: s.force,
            torque: s.torque,
            rates: s.state_rates,
            outputs: s.outputs,
            position: s.d_position,
            velocity: s.d_velocity,
            provided: (false, false),
        }
    }
}

/// `evaluate`, then `partials` (separate) or `evaluate_with_partials` (one pass) into fresh
/// buffers; NaN-filled first, so an entry left unwritten by one path shows as a difference.
fn run(law: &dyn ElementLaw, x: &ElementInput, one_pass: bool) -> Written {
    let mut w = Written::new(law);
    let mut algebraic: Vec<f64> = Vec::new();
    w.force.fill(Vector3::repeat(f64::NAN));
    w.torque.fill(Vector3::repeat(f64::NAN));
    w.rates.fill(f64::NAN);
    w.outputs.fill(f64::NAN);
    // Zeroed on entry, as the interface promises.
    w.position.fill(0.0);
    w.velocity.fill(0.0);
    let mut out = ElementOutput {
        force: &mut w.force,
        torque: &mut w.torque,
        state_rates: &mut w.rates,
        outputs: &mut w.outputs,
        algebraic: &mut algebraic,
    };
    let mut jac = ElementJacobian {
        position: &mut w.position,
        velocity: &mut w.velocity,
    };
    let p = if one_pass {
        law.evaluate_with_partials(x, &mut out, &mut jac)
    } else {
        law.evaluate(x, &mut out);
        law.partials(x, &mut jac)
    };
    w.provided = (p.position, p.velocity);
    w
}

/// Bit-for-bit comparison (`to_bits`, so that −0.0 ≠ +0.0 and NaN = NaN count as written).
fn bits(w: &Written) -> Vec<u64> {
    w.force
        .iter()
        .chain(&w.torque)
        .flat_map(|v| v.iter().copied().collect::<Vec<_>>())
        .chain(w.rates.iter().copied())
        .chain(w.outputs.iter().copied())
        .chain(w.position.iter().copied())
        .chain(w.velocity.iter().copied())
        .map(f64::to_bits)
        .collect()
}

#[test]
fn one_pass_equals_evaluate_then_partials_bit_for_bit() {
    let laws: [(&str, Option<&str>); 4] = [
        ("tire_linear", None),
        ("tmeasy", None),
        ("pac2002", Some("tires/mf_185_80R14.tir")),
        ("pac2002", Some("tires/335_65R22_5_G275MSA_60psi.tir")),
    ];
    // (x, z, heading, camber, v, ω about y): cleat from x = 2.0 to 2.2 m, edges 0.05 m; the
    // quarter car's design height 0.3 − 0.0139 m.
    let poses = [
        (1.0, 0.286, 0.0, 0.0, [10.0, 0.0, -0.01], 34.0),
        (2.02, 0.292, 0.02, 0.0, [10.0, 0.2, -0.3], 33.0),
        (2.1, 0.305, -0.1, 0.04, [8.0, -0.5, 0.1], 30.0),
        (1.0, 0.29, 0.3, -0.03, [0.0, 0.0, 0.0], 0.0),
        (1.0, 0.287, 0.0, 0.0, [-3.0, 0.1, 0.0], -10.5),
        (1.0, 0.33, 0.0, 0.0, [10.0, 0.0, 0.5], 34.0),
    ];
    let mut compared = 0;
    for (kind, tir) in laws {
        for spin_state in [false, true] {
            let law = element(kind, tir, spin_state);
            for (i, &(x, z, heading, camber, v, w)) in poses.iter().enumerate() {
                let rot = Rotation3::from_axis_angle(&Vector3::z_axis(), heading)
                    * Rotation3::from_axis_angle(&Vector3::x_axis(), camber);
                let mut m = MarkerState {
                    x: Vector3::new(x, 0.01, z),
                    rot: rot.into_inner(),
                    v: Vector3::from(v),
                    w: rot * Vector3::new(0.0, w, 0.0) + Vector3::new(0.0, 0.0, 0.1),
                };
                let mut states = vec![0.001; law.n_states()];
                states[0] = -0.002;
                if spin_state {
                    // The carrier does not spin; Ω and a brake deflection are states.
                    m.w = Vector3::new(0.0, 0.0, 0.1);
                    let n = states.len();
                    states[n - 2] = w;
                    states[n - 1] = 0.0015;
                }
                let markers = [m];
                let x = ElementInput {
                    t: 0.0,
                    markers: &markers,
                    states: &states,
                    inputs: &[100.0, 800.0],
                };
                let separate = run(law.as_ref(), &x, false);
                let one_pass = run(law.as_ref(), &x, true);
                let what = format!("{kind} {tir:?}, spin state {spin_state}, pose {i}");
                assert_eq!(separate.provided, (true, true), "{what}");
                assert!(
                    bits(&separate) == bits(&one_pass),
                    "{what}: one pass differs\nseparate {separate:?}\none pass {one_pass:?}"
                );
                // Every output is written (no NaN left from the fill).
                assert!(
                    bits(&one_pass).iter().all(|b| !f64::from_bits(*b).is_nan()),
                    "{what}"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 4 * 2 * 6);
}
