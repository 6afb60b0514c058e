//! One tire element evaluation with analytic partials (contact, law, chain rule to the wheel
//! marker): `cargo bench -p sprung-vehicle --bench tire_element`. Target ≤ 1 µs (issue 13).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_mbs::element_law::{ElementInput, ElementLaw, ElementScratch, MarkerState};

/// The quarter car's tire element (on its cleat road) with the law `kind`: TMeasy as in the
/// model file, the linear tire of `wheel_on_road.toml`, the van's PAC2002 `.tir` file.
fn element(kind: &str) -> Arc<dyn ElementLaw> {
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
    for name in ["tire_linear", "tmeasy", "pac2002"] {
        let law = element(name);
        let states = vec![0.001; law.n_states()];
        let markers = [marker];
        let x = ElementInput {
            t: 0.0,
            markers: &markers,
            states: &states,
            inputs: &[],
        };
        let mut sc = ElementScratch::new(law.as_ref());
        c.bench_function(&format!("{name} on a cleat: evaluate + partials"), |b| {
            b.iter(|| {
                sc.evaluate_with_partials(law.as_ref(), black_box(&x));
                black_box(sc.d_position[(0, 0)]);
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
