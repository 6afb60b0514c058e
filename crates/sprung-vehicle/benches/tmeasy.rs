//! Cost of one TMeasy evaluation: forces and rates, partials, and both (the car set of the data
//! sheet, `models/tires/car_tmeasy.toml`, at combined slip while rolling at 20 m/s).
//! `cargo bench -p sprung-vehicle --bench tmeasy`.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use sprung_mbs::elements::{ElementParams, KindInfo};
use sprung_model::ParamValue;
use sprung_vehicle::tire::tmeasy::Tmeasy;
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel, TirePartials};

const INFO: KindInfo = KindInfo {
    name: Tmeasy::KIND,
    description: Tmeasy::DESCRIPTION,
    markers: &[],
    parameters: Tmeasy::PARAMETERS,
    states: Tmeasy::STATES,
    outputs: &[],
    inputs: &[],
};

#[derive(serde::Deserialize)]
struct Fragment {
    elements: Vec<sprung_model::OpenElement>,
}

fn car() -> Tmeasy {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/tires/car_tmeasy.toml"
    );
    let doc: Fragment = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let values: BTreeMap<String, ParamValue> = doc.elements[0].parameters.clone();
    Tmeasy::from_params(&ElementParams::new(&INFO, &values)).unwrap()
}

fn bench(c: &mut Criterion) {
    let t = car();
    let k = SlipKinematics {
        fz: 3500.0,
        rho: 0.011,
        vx: 20.0,
        vy: -0.8,
        omega: 20.0 / 0.3149 * 1.03,
        gamma: 0.02,
        psi_dot: 0.3,
        mu_road: 0.85,
    };
    let states = [2e-3, 3e-3, 1e-4];
    c.bench_function("tmeasy evaluate", |b| {
        let mut out = TireForces::default();
        let mut rates = [0.0; 3];
        b.iter(|| {
            t.evaluate(black_box(&k), black_box(&states), &mut out, &mut rates);
            black_box((&out, &rates));
        })
    });
    c.bench_function("tmeasy partials", |b| {
        let mut jac = TirePartials::default();
        b.iter(|| {
            t.partials(black_box(&k), black_box(&states), &mut jac);
            black_box(&jac);
        })
    });
    c.bench_function("tmeasy evaluate + partials", |b| {
        let mut out = TireForces::default();
        let mut rates = [0.0; 3];
        let mut jac = TirePartials::default();
        b.iter(|| {
            t.evaluate(black_box(&k), black_box(&states), &mut out, &mut rates);
            t.partials(black_box(&k), black_box(&states), &mut jac);
            black_box((&out, &rates, &jac));
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
