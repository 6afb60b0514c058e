//! The per-step hot path does not allocate (common rules; document 000, section 3: a real-time
//! step must have a bounded, predictable cost). A counting global allocator counts the allocations
//! of the current thread while 1000 LSRT2 steps run on both reference axles with both linear
//! solvers, re-linearising every step and every 5 steps, and while the output channels are
//! evaluated (`OutputSet::evaluate`, `OutputSet::read`) after every step; and on two models with
//! open elements (an element state; a three-marker element with differenced partials); and on the
//! two models with ideal joints (`docs/joints.md`).
//!
//! Everything is warmed up first on the same thread: the dense LU (faer) allocates a per-thread
//! scratch buffer once at its first factorisation.

use sprung_test_support::{CountingAllocator, allocations};
use std::path::Path;
use std::sync::Arc;

use sprung_mbs::MbsSystem;
use sprung_mbs::equilibrium::{self, EquilibriumOptions};
use sprung_mbs::outputs::OutputSet;
use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::{DenseLu, LinearSolver};
use sprung_solve::mech::{MechanicalSystem, RosenbrockStepper, Tableau};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn load(name: &str) -> (sprung_model::Model, Arc<sprung_mbs::CompiledModel>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let c = sprung_mbs::compile(&m).expect("reference axle compiles");
    (m, Arc::new(c))
}

/// Allocations during `steps` steps (after `warmup` steps) with output evaluation after each step.
fn count(file: &str, dense: bool, relinearise_every: u64, warmup: u64, steps: u64) -> u64 {
    let (m, model) = load(file);
    let mut sys = MbsSystem::new(model.clone());
    let (r0, mut v) = model.design_state();
    let eq = equilibrium::solve(&mut sys, 0.0, &r0, EquilibriumOptions::default())
        .expect("static equilibrium");
    let mut r = eq.r;
    v.fill(0.0);
    let nbv = model.n_body_v();
    v[nbv..].copy_from_slice(&eq.states);
    let lu: Box<dyn LinearSolver + Send> = if dense {
        Box::new(DenseLu::new(sys.n_v()))
    } else {
        Box::new(BlockSparseLu::new(&sys.pattern()))
    };
    let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, relinearise_every, lu);
    let outputs = OutputSet::new(&m, &model).expect("outputs resolve");
    let mut out_eval = sys.eval.clone();
    let mut row = vec![0.0; outputs.len()];
    let mut k = 0;
    let mut run = |n: u64, k: &mut u64| {
        for _ in 0..n {
            st.step(&mut sys, *k, &mut r, &mut v)
                .expect("step succeeds");
            *k += 1;
            outputs.evaluate(&mut out_eval, st.time(*k), &r, &v, &mut row);
            outputs.read(&sys.eval, &mut row);
        }
    };
    run(warmup, &mut k);
    let before = allocations();
    run(steps, &mut k);
    let n = allocations() - before;
    assert!(row.iter().all(|x| x.is_finite()), "{file}: outputs finite");
    n
}

#[test]
fn lsrt2_steps_and_outputs_do_not_allocate() {
    // Sanity check of the counter itself.
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 16]);
    assert_eq!(allocations() - before, 1);
    drop(v);
    let mut report = Vec::new();
    for file in ["double_wishbone.toml", "multilink.toml"] {
        for dense in [false, true] {
            for every in [1, 5] {
                let n = count(file, dense, every, 10, 1000);
                report.push(format!(
                    "{file} dense={dense} relinearise_every={every}: {n} allocations"
                ));
                assert_eq!(n, 0, "{}", report.join("\n"));
            }
        }
    }
    // Open elements: an element state (Maxwell) and a three-marker element whose position
    // partials are differenced by the interface (anti-roll bar).
    for file in ["maxwell_solid.toml", "anti_roll_bar.toml"] {
        for every in [1, 5] {
            let n = count(file, false, every, 10, 1000);
            report.push(format!("{file} relinearise_every={every}: {n} allocations"));
            assert_eq!(n, 0, "{}", report.join("\n"));
        }
    }
}

/// Models with ideal and tabulated joints (`docs/joints.md`): LSRT2 steps re-linearising every step (the
/// projection of q and of the linearisation, the differenced kinematic terms) with the channels
/// read from the expanded state after each step, and explicit-Euler-like q evaluations, allocate
/// nothing after a warm-up.
#[test]
fn steps_with_joints_do_not_allocate() {
    for file in [
        "joint_pendulum.toml",
        "joint_slider.toml",
        "joint_tabulated.toml",
    ] {
        let (m, model) = load(file);
        let mut sys = MbsSystem::new(model.clone());
        let (mut r, mut v) = model.design_state();
        let lu: Box<dyn LinearSolver + Send> = Box::new(BlockSparseLu::new(&sys.pattern()));
        let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, 1, lu);
        let outputs = OutputSet::new(&m, &model).expect("outputs resolve");
        let mut out_eval = sys.eval.clone();
        let mut expansion = sprung_mbs::joints::Expansion::new(&model);
        let mut row = vec![0.0; outputs.len()];
        let mut q = vec![0.0; sys.n_v()];
        let mut run = |n: u64, k: &mut u64| {
            for _ in 0..n {
                st.step(&mut sys, *k, &mut r, &mut v)
                    .expect("step succeeds");
                *k += 1;
                sys.accelerations(st.time(*k), &r, &v, &mut q);
                let (rf, vf) = expansion.apply(&model.joints, &r, &v);
                outputs.evaluate(&mut out_eval, st.time(*k), rf, vf, &mut row);
            }
        };
        let mut k = 0;
        run(10, &mut k);
        let before = allocations();
        run(200, &mut k);
        assert_eq!(allocations() - before, 0, "{file}");
    }
}
