//! The fixed-step stepper solves with the congruence form of the linearisation
//! (`sprung_solve::mech::congruence`: D_r⁻¹ on the right-hand side, M − hγ G_v − (hγ)² G_rK,
//! D_c⁻¹ on the result) by default. It must reproduce the plain form (I − hγ J_v − (hγ)² J_r K
//! with the expanded Jacobians, checked against finite differences in `tests/jacobian_fd.rs`) on
//! both reference axles, both linear solvers and with and without Jacobian reuse.
//!
//! Tolerance: over the whole second (the axle settles from its design state, a large transient),
//! the largest difference of positions and of velocities below 1e-9 of their largest magnitude
//! (the "load case unchanged within 1e-9"). Both forms are the same linear algebra in
//! another order: the trajectories differ by round-off amplified by the condition of the
//! iteration matrices.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::max_rel_diff;
use sprung_mbs::MbsSystem;
use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::{MechanicalSystem, RosenbrockStepper, Tableau};

fn load(name: &str) -> Arc<sprung_mbs::CompiledModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Arc::new(sprung_mbs::compile(&m).expect("reference axle compiles"))
}

/// (r, v) after each of 1000 LSRT2 steps of 1 ms from the design state (the axle settles under
/// gravity and the model's inputs: large, fast motions at first).
fn run(
    model: &Arc<sprung_mbs::CompiledModel>,
    dense: bool,
    every: u64,
    congruent: bool,
) -> (Vec<f64>, Vec<f64>) {
    let mut sys = MbsSystem::new(model.clone());
    let (mut r, mut v) = model.design_state();
    let lu: Box<dyn LinearSolver + Send> = if dense {
        Box::new(DenseLu::new(sys.n_v()))
    } else {
        Box::new(BlockSparseLu::new(&sys.pattern()))
    };
    let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, every, lu);
    st.congruent = congruent;
    let (mut rs, mut vs) = (Vec::new(), Vec::new());
    for k in 0..1000 {
        st.step(&mut sys, k, &mut r, &mut v).expect("step succeeds");
        rs.extend_from_slice(&r);
        vs.extend_from_slice(&v);
    }
    (rs, vs)
}

#[test]
fn congruent_and_plain_steps_agree_on_both_axles() {
    for file in ["double_wishbone.toml", "multilink.toml"] {
        let model = load(file);
        for dense in [false, true] {
            for every in [1, 5] {
                let plain = run(&model, dense, every, false);
                let cong = run(&model, dense, every, true);
                let (dr, dv) = (
                    max_rel_diff(&plain.0, &cong.0),
                    max_rel_diff(&plain.1, &cong.1),
                );
                eprintln!("{file} dense={dense} every={every}: r {dr:.1e}, v {dv:.1e}");
                assert!(
                    dr < 1e-9 && dv < 1e-9,
                    "{file} dense={dense} every={every}: r {dr:e}, v {dv:e}"
                );
            }
        }
    }
}
