//! The element-state rates alone (`MechanicalSystem::state_rates`, the partly implicit Euler's
//! state step, `docs/truck.md`) against the full evaluation of q: on the truck (both
//! manoeuvres: the held and the time-driven steering wheel) and the car (spin-state tires fed by
//! speed controllers, the accelerometer, the rack-and-pinion steering), at states along a `pie`
//! run, with the AVX2 and the portable q path, warm-started and cold. The rates must be the
//! same bits, and so must the warm starts and outputs of the elements with states (what their
//! next evaluation starts from).

use sprung::{Model, Simulation};
use sprung_mbs::MbsSystem;
use sprung_solve::mech::MechanicalSystem;
use sprung_test_support::model_path;

/// Bits of a slice (so that −0.0 vs 0.0 or a NaN would count as a difference).
fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// Compares the state rows of a full q evaluation and of `state_rates` at (t, r, v) on two
/// copies of `sys` (same warm starts), then the tables a later evaluation reads: algebraic
/// variables and outputs of every open element with states. Returns the number of state rows
/// compared.
fn compare_at(sys: &MbsSystem, t: f64, r: &[f64], v: &[f64], portable: bool, what: &str) -> usize {
    let (mut full, mut part) = (sys.clone(), sys.clone());
    full.eval.force_portable(portable);
    part.eval.force_portable(portable);
    let nv = full.n_v();
    let nz = full.n_speeds();
    let mut q_full = vec![0.0; nv];
    // Speed rows filled with a marker value: `state_rates` may leave them, never the state rows.
    let mut q_part = vec![f64::NAN; nv];
    full.accelerations(t, r, v, &mut q_full);
    part.state_rates(t, r, v, &mut q_part);
    assert_eq!(
        bits(&q_full[nz..]),
        bits(&q_part[nz..]),
        "{what}: state rates differ at t = {t}"
    );
    assert!(
        q_full[nz..].iter().any(|x| *x != 0.0),
        "{what}: the rates are not all zero"
    );
    let model = sys.model().clone();
    for (e, el) in model.open_elements.iter().enumerate() {
        if el.law.n_states() == 0 {
            continue;
        }
        assert_eq!(
            bits(full.eval.open_element_algebraic(e)),
            bits(part.eval.open_element_algebraic(e)),
            "{what}: warm start of {} at t = {t}",
            el.name
        );
        assert_eq!(
            bits(full.eval.open_element_outputs(e)),
            bits(part.eval.open_element_outputs(e)),
            "{what}: outputs of {} at t = {t}",
            el.name
        );
    }
    nv - nz
}

/// Runs `file` with `pie` and compares at the start (cold: no warm start yet) and every
/// `every` steps up to `n` steps, each with both q paths.
fn check_model(file: &str, n: usize, every: usize) {
    let model = Model::from_file(model_path(file)).unwrap();
    let mut s = model.default_settings();
    s.method = "pie".into();
    s.relinearise_every = 50;
    let mut sim = Simulation::with_settings(model.clone(), s).unwrap();
    // A system whose warm starts follow the run's states (one full evaluation per checkpoint).
    let mut sys = MbsSystem::new(model.compiled().clone());
    assert!(sys.n_speeds() < sys.n_v(), "{file} has element states");
    let mut checked = 0;
    for k in 0..=n {
        if k % every == 0 {
            let (t, r, v) = (
                sim.time(),
                sim.positions().to_vec(),
                sim.velocities().to_vec(),
            );
            for portable in [false, true] {
                checked += compare_at(&sys, t, &r, &v, portable, file);
            }
            // Off the trajectory too: the next step's time at the current state (the state
            // step's own arguments) with velocities and states nudged.
            let v2: Vec<f64> = v
                .iter()
                .enumerate()
                .map(|(i, x)| x * (1.0 + 1e-3 * ((i % 7) as f64 - 3.0)))
                .collect();
            checked += compare_at(&sys, t + sim.step_size(), &r, &v2, false, file);
            let mut q = vec![0.0; sys.n_v()];
            sys.accelerations(t, &r, &v, &mut q);
        }
        if k < n {
            sim.step().unwrap();
        }
    }
    assert!(checked > 0);
}

#[test]
fn truck_bump_state_rates_are_the_full_evaluations_bits() {
    check_model("truck_10wheeler.toml", 300, 100);
}

#[test]
fn truck_cornering_state_rates_are_the_full_evaluations_bits() {
    check_model("truck_cornering.toml", 300, 100);
}

#[test]
fn car_state_rates_are_the_full_evaluations_bits() {
    check_model("car_dw_ml.toml", 300, 100);
}
