//! Where the time of one LSRT2 step goes (document 000, section 3 and Tabelle 2), on both reference
//! axles at a realistic state (static equilibrium, then the load case run to t = 5 s):
//!
//! * `pipeline/q` — q(t, r, v) only (the second stage and the output channels need this), with
//!   four elements per SIMD lane set (`sprung_mbs::pack`); `pipeline/q_one_by_one` — the same
//!   without the packs, element by element as in the linearisation;
//! * `pipeline/linearise` — q plus the analytic J_v, J_r K and J_u (Bild 6, all blocks);
//! * `assembly/iteration_matrix` — I − hγ J_v − (hγ)² J_r K (eq. 11) from the block matrices;
//! * `lu/factor_{dense,block_sparse}` — one factorisation of that matrix;
//! * `lu/solve_{dense,block_sparse}` — one forward/back substitution;
//! * `step/*` — one complete step (both stages), dense or block-sparse, re-linearising every step
//!   or every 5 steps.
//!
//! Run: `cargo bench -p sprung-mbs --bench step`.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sprung_mbs::MbsSystem;
use sprung_mbs::equilibrium::{self, EquilibriumOptions};
use sprung_solve::block::BlockMatrix;
use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::{Linearisation, MechanicalSystem, RosenbrockStepper, Tableau};

const H: f64 = 1e-3;

/// The system and a state in the middle of the load case (t = 5 s).
fn setup(file: &str) -> (MbsSystem, Vec<f64>, Vec<f64>, f64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(file);
    let m = sprung_model::load(&path).expect("model loads");
    let model = Arc::new(sprung_mbs::compile(&m).expect("model compiles"));
    let mut sys = MbsSystem::new(model.clone());
    let (r0, mut v) = model.design_state();
    let mut r = equilibrium::solve(&mut sys, 0.0, &r0, EquilibriumOptions::default())
        .expect("equilibrium")
        .r;
    v.fill(0.0);
    let lu = Box::new(BlockSparseLu::new(&sys.pattern()));
    let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), H, 0.0, 1, lu);
    let n = 5000;
    for k in 0..n {
        st.step(&mut sys, k, &mut r, &mut v).expect("step");
    }
    (sys, r, v, n as f64 * H)
}

fn bench(c: &mut Criterion) {
    for file in ["double_wishbone.toml", "multilink.toml"] {
        let name = file.trim_end_matches(".toml");
        let (mut sys, r, v, t) = setup(file);
        let n_v = sys.n_v();
        let mut q = vec![0.0; n_v];
        let mut lin = Linearisation::new(sys.n_r(), sys.pattern());
        let mut g = c.benchmark_group(name);
        {
            let lu = BlockSparseLu::new(&sys.pattern());
            let p = sys.pattern();
            eprintln!(
                "{name}: {} DOF, {} elements, {} stored 6x6 blocks; block LU: {} fill blocks, factor {} flops, one solve {} flops; dense LU factor {} flops",
                n_v,
                sys.model().elements.len(),
                p.n_stored(),
                lu.fill_blocks(),
                lu.flops(),
                lu.solve_flops(),
                DenseLu::new(n_v).flops()
            );
        }

        g.bench_function("pipeline/q", |b| {
            b.iter(|| sys.accelerations(black_box(t), black_box(&r), &v, &mut q))
        });
        sys.eval.use_element_packs(false);
        g.bench_function("pipeline/q_one_by_one", |b| {
            b.iter(|| sys.accelerations(black_box(t), black_box(&r), &v, &mut q))
        });
        sys.eval.use_element_packs(true);
        g.bench_function("pipeline/linearise", |b| {
            b.iter(|| sys.linearise(black_box(t), black_box(&r), &v, &mut lin))
        });
        // The congruence form J = D_r G D_c the fixed-step stepper uses.
        let mut lin_c = lin.clone();
        g.bench_function("pipeline/linearise_congruent", |b| {
            b.iter(|| sys.linearise_congruent(black_box(t), black_box(&r), &v, &mut lin_c))
        });

        let hg = H * Tableau::lsrt2().gamma;
        let mut a = BlockMatrix::zeros(sys.pattern());
        // Linearise and form the matrix once, so that the LU benches work under any filter.
        sys.linearise(t, &r, &v, &mut lin);
        // As the stepper forms it: one pass, I − hγ J_v − (hγ)² J_r K.
        lin.j_v
            .combination_plus_identity_into(-hg, &lin.j_rk, -hg * hg, 1.0, &mut a);
        g.bench_function("assembly/iteration_matrix", |b| {
            b.iter(|| {
                lin.j_v
                    .combination_plus_identity_into(-hg, &lin.j_rk, -hg * hg, 1.0, &mut a);
                black_box(&a);
            })
        });
        // As the stepper forms it from the congruence form: M − hγ G_v − (hγ)² G_rK.
        let mut a_c = a.clone();
        g.bench_function("assembly/iteration_matrix_congruent", |b| {
            b.iter(|| {
                lin_c
                    .congruence
                    .iteration_matrix(&lin_c.j_v, -hg, &lin_c.j_rk, -hg * hg, &mut a_c);
                black_box(&a_c);
            })
        });

        let mut solvers: Vec<(&str, Box<dyn LinearSolver>)> = vec![
            ("dense", Box::new(DenseLu::new(n_v))),
            ("block_sparse", Box::new(BlockSparseLu::new(&sys.pattern()))),
        ];
        let rhs: Vec<f64> = (0..n_v).map(|i| (i as f64).sin()).collect();
        let mut x = rhs.clone();
        for (lname, lu) in &mut solvers {
            g.bench_function(BenchmarkId::new("lu/factor", *lname), |b| {
                b.iter(|| lu.factor(black_box(&a)).expect("regular"))
            });
            g.bench_function(BenchmarkId::new("lu/solve", *lname), |b| {
                b.iter(|| {
                    x.copy_from_slice(&rhs);
                    lu.solve_in_place(black_box(&mut x));
                })
            });
        }

        for (lname, every) in [
            ("block_sparse", 1),
            ("block_sparse", 5),
            ("dense", 1),
            ("dense", 5),
        ] {
            let lu: Box<dyn LinearSolver + Send> = if lname == "dense" {
                Box::new(DenseLu::new(n_v))
            } else {
                Box::new(BlockSparseLu::new(&sys.pattern()))
            };
            let k0 = (t / H).round() as u64;
            let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), H, 0.0, every, lu);
            // Restart from the same state for every sample; k cycles through `every` steps so the
            // mean includes the share of re-linearisations.
            let (mut rr, mut vv) = (r.clone(), v.clone());
            let mut k = k0;
            g.bench_function(
                BenchmarkId::new(
                    format!("step/{lname}"),
                    format!("relinearise_every_{every}"),
                ),
                |b| {
                    b.iter(|| {
                        if k == k0 + 50 {
                            rr.copy_from_slice(&r);
                            vv.copy_from_slice(&v);
                            k = k0;
                            st.invalidate();
                        }
                        st.step(&mut sys, k, &mut rr, &mut vv).expect("step");
                        k += 1;
                    })
                },
            );
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
