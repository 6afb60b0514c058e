//! One tire element evaluation with analytic partials (contact, law, chain rule to the wheel
//! marker): `cargo bench -p sprung-vehicle --bench tire_element`. Target ≤ 1 µs (issue 13).
//! Each law on the spinning wheel body and with `spin = "state"` (the wheel's spin and brake
//! as element states on a non-spinning carrier); `evaluate + partials` is what the stepper calls
//! when it forms the Jacobian (`ElementLaw::evaluate_with_partials`, one pass), `evaluate` what
//! it calls otherwise.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_mbs::element_law::{ElementInput, ElementLaw, ElementScratch, MarkerState};

/// The quarter car's tire element (on its cleat road) with the law `kind`: TMeasy as in the
/// model file, the linear tire of `wheel_on_road.toml`, the van's PAC2002 `.tir` file.
fn element(kind: &str, spin_state: bool) -> Arc<dyn ElementLaw> {
    let load = |name: &str| sprung_model::load(&sprung_test_support::model_path(name)).unwrap();
    let mut m = load("quarter_car.toml");
    match kind {
        "tire_linear" => {
            let mut p = load("wheel_on_road.toml").elements[0].parameters.clone();
            p.remove("road");
            m.elements[0].parameters = p;
        }
        "pac2002" => {
            let tir = sprung_test_support::model_path("tires/mf_185_80R14.tir");
            m.elements[0].parameters = [(
                "tir_file".to_string(),
                sprung_model::ParamValue::Text(tir.display().to_string()),
            )]
            .into();
        }
        _ => {}
    }
    m.elements[0].kind = kind.to_string();
    if spin_state {
        let p = &mut m.elements[0].parameters;
        p.insert(
            "spin".into(),
            sprung_model::ParamValue::Text("state".into()),
        );
        p.insert("spin_inertia".into(), sprung_model::ParamValue::Number(1.2));
    }
    let c = sprung_mbs::compile_with(&m, &sprung_vehicle::registry()).unwrap();
    c.open_elements[0].law.clone()
}

fn bench(c: &mut Criterion) {
    let marker = MarkerState {
        x: Vector3::new(2.1, 0.01, 0.31),
        rot: Rotation3::from_axis_angle(&Vector3::z_axis(), 0.02).into_inner()
            * Matrix3::identity(),
        v: Vector3::new(10.0, 0.2, -0.01),
        w: Vector3::new(0.0, 34.0, 0.1),
    };
    for spin_state in [false, true] {
        for name in ["tire_linear", "tmeasy", "pac2002"] {
            let law = element(name, spin_state);
            let mut states = vec![0.001; law.n_states()];
            let mut marker = marker;
            let label = if spin_state {
                // The carrier does not spin; Ω = 34 rad/s and a sliding brake deflection.
                marker.w = Vector3::new(0.0, 0.0, 0.1);
                let n = states.len();
                states[n - 2] = 34.0;
                states[n - 1] = 0.002;
                "spin state"
            } else {
                "spinning body"
            };
            let markers = [marker];
            let x = ElementInput {
                t: 0.0,
                markers: &markers,
                states: &states,
                // Drive 100 N m, brake 800 N m (the spin state reads them; the body ignores them).
                inputs: &[100.0, 800.0],
            };
            let mut sc = ElementScratch::new(law.as_ref());
            c.bench_function(
                &format!("{name} on a cleat, {label}: evaluate + partials"),
                |b| {
                    b.iter(|| {
                        sc.evaluate_with_partials(law.as_ref(), black_box(&x));
                        black_box(sc.d_position[(0, 0)]);
                    })
                },
            );
            c.bench_function(&format!("{name} on a cleat, {label}: evaluate"), |b| {
                b.iter(|| {
                    sc.evaluate(law.as_ref(), black_box(&x));
                    black_box(sc.force[0][0]);
                })
            });
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
