//! The facade: linearisation against finite differences of its own evaluation, several
//! simulations of one model in parallel threads, runtime inputs, the run summary after a
//! divergence, and clear errors.

use std::sync::Arc;

use nalgebra::{DMatrix, Vector3};
use sprung::{Control, Error, Model, Simulation, StopReason};

fn models(name: &str) -> String {
    format!("{}/../../models/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The state x = (p, v_b, s) of [`Simulation::linearise`] applied as a perturbation `dx` to a
/// snapshot (positions by the same retraction: x + δx, R exp([δθ]×)).
fn perturbed(sim: &Simulation, base: &sprung::Snapshot, dx: &[f64]) -> sprung::Snapshot {
    let cm = sim.model().compiled();
    let nb = cm.bodies.len();
    let mut s = base.clone();
    for b in 0..nb {
        for k in 0..3 {
            s.r[7 * b + k] += dx[6 * b + k];
        }
        let th = Vector3::new(dx[6 * b + 3], dx[6 * b + 4], dx[6 * b + 5]);
        sprung_mbs::rotation::quat_apply_body_increment(&mut s.r[7 * b + 3..7 * b + 7], &th);
    }
    for i in 0..6 * nb {
        s.v[i] += dx[6 * nb + i];
    }
    let mut j = 12 * nb;
    for (e, el) in cm.open_elements.iter().enumerate() {
        for k in 0..el.law.n_states() {
            s.v[cm.state_index(e, k)] += dx[j];
            j += 1;
        }
    }
    s
}

/// ẋ of the state-space coordinates at the snapshot's state: ṗ = (ẋ, J_r(δθ)⁻¹ ω) in the chart
/// about `base` (series to second order, exact enough for central differences), then the
/// facade's accelerations.
fn derivative(sim: &mut Simulation, s: &sprung::Snapshot, dx: &[f64]) -> Vec<f64> {
    sim.set_state(s).unwrap();
    let nb = sim.model().compiled().bodies.len();
    let mut out = Vec::new();
    for b in 0..nb {
        let v = &s.v[6 * b..6 * b + 6];
        let th = Vector3::new(dx[6 * b + 3], dx[6 * b + 4], dx[6 * b + 5]);
        let w = Vector3::new(v[3], v[4], v[5]);
        let pdot = w + 0.5 * th.cross(&w) + th.cross(&th.cross(&w)) / 12.0;
        out.extend_from_slice(&[v[0], v[1], v[2], pdot.x, pdot.y, pdot.z]);
    }
    out.extend(sim.accelerations());
    out
}

/// A and B of `linearise()` against central differences of the facade's own state derivative
/// at a moving state. Tolerance per column: 1e-6 of the column's scale for the truncation error
/// O(h²) of central differences with h = 1e-6, plus their round-off, 100 ε max|ẋ| / h (the
/// accelerations of the stiff axle reach 1e4, so round-off dominates in the small columns).
fn check_linearisation(path: &str, runtime_input: Option<&str>) {
    let mut d = sprung_model::load(std::path::Path::new(path)).unwrap();
    let mut u0 = 0.0;
    if let Some(name) = runtime_input {
        for u in d.inputs.iter_mut().filter(|u| u.name == name) {
            u0 = u.signal.value(0.0).max(1000.0);
            u.signal = sprung_model::Signal::Runtime { default: u0 };
        }
    }
    let model = Model::from_description(d).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    sim.advance_to(0.05).unwrap();
    // Give every body some velocity so that the ω terms are exercised.
    let mut base = sim.state();
    for (i, v) in base
        .v
        .iter_mut()
        .enumerate()
        .take(6 * sim.model().compiled().bodies.len())
    {
        *v += 0.05 * ((i as f64) * 0.7).sin();
    }
    sim.set_state(&base).unwrap();
    let lin = sim.linearise().unwrap();
    let sparse = sim.linearise_sparse().unwrap();
    let n = lin.a.nrows();
    let f0 = derivative(&mut sim, &base, &vec![0.0; n]);
    let f_max = f0.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let h = 1e-6;
    // Round-off of a central difference: about ε |f| / h per entry; allow 100 ε.
    let noise = 100.0 * f64::EPSILON * f_max / h;
    let mut fd_a = DMatrix::zeros(n, n);
    for j in 0..n {
        let mut dx = vec![0.0; n];
        dx[j] = h;
        let sp = perturbed(&sim, &base, &dx);
        let plus = derivative(&mut sim, &sp, &dx);
        dx[j] = -h;
        let sm = perturbed(&sim, &base, &dx);
        let minus = derivative(&mut sim, &sm, &dx);
        for i in 0..n {
            fd_a[(i, j)] = (plus[i] - minus[i]) / (2.0 * h);
        }
    }
    for j in 0..n {
        let scale = fd_a.column(j).amax().max(lin.a.column(j).amax());
        let err = (fd_a.column(j) - lin.a.column(j)).amax();
        assert!(
            err <= 1e-6 * scale + noise,
            "{path}: A column {j} ({}): error {err:e} of {scale:e}",
            lin.state_names[j]
        );
    }
    // The sparse A is the dense one.
    let mut sp = DMatrix::zeros(n, n);
    for j in 0..n {
        let rows = sparse.a.as_ref().row_idx_of_col_raw(j);
        let vals = sparse.a.as_ref().val_of_col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            sp[(i, j)] += v;
        }
    }
    assert_eq!(sp, lin.a, "sparse and dense A");
    // B through the runtime input: differences of the accelerations in u.
    if let Some(name) = runtime_input {
        let k = lin.input_names.iter().position(|x| x == name).unwrap();
        sim.set_state(&base).unwrap();
        let h = 1e-3;
        // The snapshot carries the runtime input values.
        let mut with_u = base.clone();
        with_u.runtime_inputs[k] = u0 + h;
        let plus = derivative(&mut sim, &with_u, &vec![0.0; n]);
        with_u.runtime_inputs[k] = u0 - h;
        let minus = derivative(&mut sim, &with_u, &vec![0.0; n]);
        let fd: Vec<f64> = plus
            .iter()
            .zip(&minus)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect();
        let scale = fd.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (i, f) in fd.iter().enumerate() {
            assert!(
                (f - lin.b[(i, k)]).abs() <= 1e-7 * scale,
                "B row {i}: {f} vs {}",
                lin.b[(i, k)]
            );
        }
        assert!(
            lin.d.column(k).amax() < 1e-6,
            "no channel reads an input directly"
        );
    }
    assert_eq!(lin.c.nrows(), lin.output_names.len());
}

#[test]
fn linearise_matches_differences_of_the_facade() {
    check_linearisation(&models("double_wishbone.toml"), Some("Fz_L"));
    check_linearisation(&models("maxwell_solid.toml"), None);
    check_linearisation(&models("anti_roll_bar.toml"), Some("lift_L"));
}

#[test]
fn two_simulations_of_one_model_in_two_threads_equal_sequential_runs() {
    let model = Model::from_file(models("multilink.toml")).unwrap();
    let run = |model: Arc<Model>, every: u64| {
        let mut s = model.default_settings();
        s.relinearise_every = every;
        let mut sim = Simulation::with_settings(model, s).unwrap();
        sim.equilibrium().unwrap();
        sim.advance_to(5.2).unwrap();
        (sim.positions().to_vec(), sim.velocities().to_vec())
    };
    let sequential = [run(model.clone(), 1), run(model.clone(), 5)];
    let handles: Vec<_> = [1u64, 5]
        .into_iter()
        .map(|every| {
            let m = model.clone();
            std::thread::spawn(move || run(m, every))
        })
        .collect();
    for (h, seq) in handles.into_iter().zip(&sequential) {
        let par = h.join().unwrap();
        assert!(
            par.0
                .iter()
                .zip(&seq.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        assert!(
            par.1
                .iter()
                .zip(&seq.1)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
    assert_ne!(sequential[0].0, sequential[1].0, "the two settings differ");
}

/// The mass-spring-damper with RK4 at 0.5 s (ω h = 5, beyond RK4's stability limit of 2.79)
/// diverges: with the plausibility bounds off the run stops with the non-finite error, and the
/// summary says where.
#[test]
fn divergence_keeps_the_summary() {
    let model = Model::from_file(models("mass_spring_damper.toml")).unwrap();
    let mut s = model.default_settings();
    s.method = "rk4".into();
    s.step = 0.5;
    s.output_interval = 0.5;
    // This test is about the non-finite path: without bounds (the default displacement bound
    // stops this run at t = 1 s, tests/plausibility.rs).
    s.bounds = sprung::Bounds {
        max_displacement: Some(f64::INFINITY),
        max_velocity: Some(f64::INFINITY),
        max_force: Some(f64::INFINITY),
    };
    let mut sim = Simulation::with_settings(model, s).unwrap();
    let mut last_t = 0.0;
    let report = sim.run(1000.0, &mut |t, _| {
        last_t = t;
        Control::Continue
    });
    let StopReason::Failed(why) = &report.stop else {
        panic!("expected a failure, got {:?}", report.stop)
    };
    assert!(why.contains("not finite"), "{why}");
    let steps = report.summary.stats.steps;
    assert!(steps > 10, "steps {steps}");
    // The failing step counts as taken; the last good state is one step earlier.
    assert_eq!(report.summary.t_reached, 0.5 * (steps - 1) as f64);
    assert_eq!(
        last_t, report.summary.t_reached,
        "every good state was observed"
    );
    assert!(report.summary.t_reached > 0.0 && report.summary.t_reached < 1000.0);
}

#[test]
fn inputs_and_channels_give_clear_errors() {
    let mut sim = Simulation::from_file(models("mass_spring_damper.toml")).unwrap();
    let e = sim.set_input("F", 1.0).unwrap_err();
    assert!(
        matches!(&e, Error::Input(m) if m.contains("time signal") && m.contains("runtime")),
        "{e}"
    );
    let e = sim.set_input("G", 1.0).unwrap_err();
    assert!(
        e.to_string().contains("unknown input 'G'") && e.to_string().contains("F"),
        "{e}"
    );
    let e = sim.set_input(7usize, 1.0).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
    let e = sim.channel("y").unwrap_err();
    assert!(e.to_string().contains("x, v, spring_force"), "{e}");
    let e = sim.advance_to(0.0105).unwrap_err();
    assert!(e.to_string().contains("0.01 s and 0.011"), "{e}");
}

/// Snapshots across the multilink damper breakpoint (breakpoint-aware stepping splits a step
/// there, and the steps of the transient whose error estimate is large, and re-linearises off
/// schedule) continue bit for bit, re-linearising every 5 steps,
/// from snapshots taken before, inside and after the transient; with LSRT2 and with the partly
/// implicit Euler (which re-linearises at the next step after a segment change); and with LSRT2's
/// adaptive schedule (every 50 steps, and at the next step after a lagged step whose error
/// indicator exceeds 5e-8 m: `relinearise_stale`), whose re-linearisations depend on the steps
/// before the snapshot.
#[test]
fn snapshots_continue_bit_for_bit_across_breakpoints() {
    for (method, every, stale) in [
        ("lsrt2", 5, None),
        ("pie", 5, None),
        ("lsrt2", 50, Some(5e-8)),
    ] {
        let model = Model::from_file(models("multilink.toml")).unwrap();
        let mut s = model.default_settings();
        s.relinearise_every = every;
        s.relinearise_stale = stale;
        s.method = method.into();
        let mut sim = Simulation::with_settings(model, s).unwrap();
        sim.equilibrium().unwrap();
        sim.advance_to(4.998).unwrap();
        let mut snaps = Vec::new();
        for t in [4.998, 5.003, 5.041, 5.107] {
            sim.advance_to(t).unwrap();
            snaps.push(sim.state());
        }
        sim.advance_to(5.3).unwrap();
        let end = (sim.positions().to_vec(), sim.velocities().to_vec());
        assert!(
            sim.stats().breakpoint_steps > 0,
            "{method}: the breakpoint is crossed"
        );
        // LSRT2 also splits the first ≈ 100 ms of the transient for accuracy (error estimate
        // above `SPLIT_TOLERANCE`); snapshots taken inside it continue bit for bit too.
        assert!(
            method != "lsrt2" || sim.stats().error_splits > 0,
            "{method}: no error-triggered split"
        );
        assert_eq!(
            sim.stats().stale_relinearisations > 0,
            stale.is_some(),
            "{method}: stale re-linearisations {}",
            sim.stats().stale_relinearisations
        );
        for snap in &snaps {
            sim.set_state(snap).unwrap();
            sim.advance_to(5.3).unwrap();
            assert!(
                sim.positions()
                    .iter()
                    .zip(&end.0)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
                    && sim
                        .velocities()
                        .iter()
                        .zip(&end.1)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{method}: restored at {} s: not bitwise equal at 5.3 s",
                snap.steps
            );
        }
    }
}

/// Curve-range records belong to the simulation that made them, not to the shared model: of two
/// simulations of one model stepped alternately on one thread and then in two threads, the one
/// whose damper leaves its `extrapolation = "error"` table (a 10 N push through |v| = 0.5 m/s)
/// stops, the other (held by a zero push) runs to the end. Before, the record lived in the
/// shared curve and stopped both.
#[test]
fn a_curve_excursion_stops_only_the_simulation_that_made_it() {
    let base = std::fs::read_to_string(models("mass_spring_damper.toml")).unwrap();
    let src = base.replace("damping = 2.0", "curve = \"C_D\"").replace(
        "signal = { type = \"step\", time = 0.0, before = 0.0, after = 10.0 }",
        "signal = { type = \"runtime\", default = 0.0 }",
    ) + "\n[[curves]]\nname = \"C_D\"\nx = [-0.5, 0.5]\ny = [-1.0, 1.0]\nextrapolation = \"error\"\n";
    let d = sprung_model::from_toml_str(&src, "curve_excursion.toml").unwrap();
    let model = Model::from_description(d).unwrap();
    let sim = |push: f64| {
        let mut s = Simulation::new(model.clone()).unwrap();
        s.set_input("F", push).unwrap();
        s
    };
    // Alternately on this thread: the pushed one fails first (|v| = 0.5 m/s at 0.0557 s).
    let (mut pushed, mut held) = (sim(10.0), sim(0.0));
    let mut failed_at = None;
    for _ in 0..300 {
        if failed_at.is_none()
            && let Err(e) = pushed.step()
        {
            assert!(e.to_string().contains("C_D"), "{e}");
            failed_at = Some(pushed.time());
        }
        held.step()
            .expect("the held simulation never leaves the table");
    }
    let t = failed_at.expect("the pushed simulation leaves the table");
    assert!((0.054..=0.060).contains(&t), "{t}");
    // In two threads.
    let handles: Vec<_> = [10.0, 0.0]
        .into_iter()
        .map(|push| {
            let mut s = sim(push);
            std::thread::spawn(move || {
                for _ in 0..300 {
                    s.step().map_err(|e| e.to_string())?;
                }
                Ok::<f64, String>(s.time())
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results[0].as_ref().is_err_and(|e| e.contains("C_D")));
    assert_eq!(results[1], Ok(0.3));
}

/// `with_runtime_inputs` replaces a time signal by a runtime input whose default is the signal's
/// value at t = 0 (so nothing changes until the caller sets it), keeps working under declared
/// parameters, and names the model's inputs for an unknown name.
#[test]
fn with_runtime_inputs_replaces_time_signals() {
    let model = Model::from_file(models("double_wishbone.toml")).unwrap();
    let err = model.with_runtime_inputs(&["Fz"]).unwrap_err().to_string();
    assert!(
        err.contains("no input 'Fz'") && err.contains("Fz_L"),
        "{err}"
    );
    let fed = Arc::new(model.with_runtime_inputs(&["Fz_L"]).unwrap());
    let mut a = Simulation::new(model.clone()).unwrap();
    let mut b = Simulation::new(fed.clone()).unwrap();
    assert!(
        a.set_input("Fz_L", 1.0).is_err(),
        "a time signal in the file"
    );
    assert_eq!(b.input("Fz_L").unwrap(), 5000.0);
    for _ in 0..50 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert!(
        a.positions()
            .iter()
            .zip(b.positions())
            .all(|(x, y)| x.to_bits() == y.to_bits()),
        "held at the signal's value: the same run"
    );
    // Declared parameters act on the converted model and keep the input a runtime input.
    let scaled = fed.with_parameters(&[("damper_scale", 2.0)]).unwrap();
    let mut c = Simulation::new(Arc::new(scaled)).unwrap();
    c.set_input("Fz_L", 6000.0).unwrap();
}
