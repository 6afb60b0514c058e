//! Cost of one PAC2002 tire evaluation with partials (issue 13: ≤ 1 µs): `evaluate` followed by
//! `partials` at a combined-slip point, for the van (MF weighting functions) and the truck
//! (friction ellipse) files; `evaluate` alone for reference.
//!
//! `cargo bench -p sprung-vehicle --bench pac2002`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use sprung_vehicle::tire::pac2002::Pac2002;
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel, TirePartials};

fn bench(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/tires");
    for (label, file) in [
        ("van", "mf_185_80R14.tir"),
        ("truck", "335_65R22_5_G275MSA_60psi.tir"),
    ] {
        let law = Pac2002::from_file(&dir.join(file)).expect("tir file");
        let fz = law.coefficients().fnomin;
        let k = SlipKinematics {
            fz,
            rho: 0.02,
            vx: 20.0,
            vy: 1.0,
            omega: 20.0 * 1.05 / law.effective_radius(fz, 0.0),
            gamma: 0.02,
            psi_dot: 0.0,
            mu_road: 1.0,
        };
        let s = [0.05, 0.05];
        c.bench_function(&format!("pac2002 {label} evaluate + partials"), |b| {
            let mut f = TireForces::default();
            let mut r = [0.0; 2];
            let mut jac = TirePartials::default();
            b.iter(|| {
                law.evaluate(black_box(&k), black_box(&s), &mut f, &mut r);
                jac = TirePartials::default();
                law.partials(black_box(&k), black_box(&s), &mut jac);
                black_box((&f, &r, &jac));
            })
        });
        c.bench_function(&format!("pac2002 {label} evaluate"), |b| {
            let mut f = TireForces::default();
            let mut r = [0.0; 2];
            b.iter(|| {
                law.evaluate(black_box(&k), black_box(&s), &mut f, &mut r);
                black_box((&f, &r));
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
