//! The inert velocity coordinates of the kinematic reduced car
//! (`MechanicalSystem::inert_velocity_slots`: followers, joint-coordinate padding, element-state
//! padding) carry nothing: zero rows and columns of the projected linearisation, zero q and
//! q_t, zero columns of K(r) and zero entries of the tangent map, at states along a run.

use sprung::Model;
use sprung_mbs::MbsSystem;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::model_path;

#[test]
fn inert_slots_of_the_kinematic_car_carry_nothing() {
    let path = std::env::var("SPRUNG_KIN_CAR")
        .unwrap_or_else(|_| model_path("car_dw_ml.toml").to_string_lossy().into_owned());
    let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let cm = model.compiled().clone();
    let mut sys = MbsSystem::new(cm.clone());
    let Some(inert) = sys.inert_velocity_slots() else {
        println!("no joints in {path}");
        return;
    };
    let (nr, nv) = (sys.n_r(), sys.n_v());
    println!("{} active of {nv}", inert.iter().filter(|x| !**x).count());
    let (r, mut v) = cm.design_state();
    for (k, x) in v.iter_mut().enumerate() {
        if !inert[k] {
            *x += 0.01 * ((k as f64) * 0.7).sin();
        }
    }
    let mut lin = Linearisation::new(nr, sys.pattern());
    sys.linearise(0.0, &r, &v, &mut lin);
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
        }
    }
}
