//! The inert velocity coordinates of the kinematic reduced car
//! (`MechanicalSystem::inert_velocity_slots`: followers, joint-coordinate padding, element-state
//! padding; the fixed-step Rosenbrock stepper's compact products and solves rely on them) carry
//! nothing: zero rows and columns of the projected linearisation (what the stepper relies on),
//! and zero q, q_t and v, at the design state and at a state 0.2 s into a run. A model without joints has none (its steppers keep the block-sparse path).

use sprung::kin_reduce::kinematic_reduction;
use sprung::kin_tables::KinOptions;
use sprung::{Model, Simulation};
use sprung_mbs::MbsSystem;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::model_path;

fn check(sys: &mut MbsSystem, inert: &[bool], r: &[f64], v: &[f64]) {
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let mut lin = Linearisation::new(nr, sys.pattern());
    sys.linearise(0.2, r, v, &mut lin);
    for i in 0..nv {
        for j in 0..nv {
            if inert[i] || inert[j] {
                assert_eq!(lin.j_rk.get(i, j), 0.0, "J_rK ({i}, {j})");
                assert_eq!(lin.j_v.get(i, j), 0.0, "J_v ({i}, {j})");
            }
        }
        if inert[i] {
            assert_eq!(lin.q[i], 0.0, "q {i}");
            assert_eq!(lin.q_t[i], 0.0, "q_t {i}");
            assert_eq!(v[i], 0.0, "v {i} stays 0");
        }
    }
    let mut q = vec![0.0; nv];
    sys.accelerations(0.2, r, v, &mut q);
    for j in (0..nv).filter(|&j| inert[j]) {
        assert_eq!(q[j], 0.0, "q {j}");
    }
}

#[test]
fn inert_slots_of_the_kinematic_car_carry_nothing() {
    let full = Model::from_file(model_path("car_dw_ml.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        MbsSystem::new(full.compiled().clone())
            .inert_velocity_slots()
            .is_none(),
        "no joints, no inert slots"
    );
    let d = kinematic_reduction(
        &full,
        &KinOptions::default(),
        "tables",
        &mut |_, _, _, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .model;
    let model = Model::from_description(d).unwrap_or_else(|e| panic!("{e}"));
    let cm = model.compiled().clone();
    let mut sys = MbsSystem::new(cm.clone());
    let inert = sys.inert_velocity_slots().expect("joints");
    let active = inert.iter().filter(|x| !**x).count();
    println!("{active} active of {}", sys.n_v());
    // The chassis 6, the rack and four carriers 1 each (the subframe is fixed to the chassis),
    // the element states.
    assert_eq!(active, 11 + cm.n_states());
    let (r, v) = cm.design_state();
    check(&mut sys, &inert, &r, &v);
    let mut sim = Simulation::new(model.clone()).unwrap_or_else(|e| panic!("{e}"));
    sim.advance_to(0.2).unwrap_or_else(|e| panic!("{e}"));
    let st = sim.state();
    check(&mut sys, &inert, &st.r, &st.v);
}
