//! Issue 17, item 5: divergence by plausibility. A run stops when a body's centre of mass leaves
//! the displacement or velocity bound, or the resultant force on a body leaves the force bound
//! (`sprung_mbs::simulate` module docs), names the body (and for the force the element with the
//! largest force on it), and keeps what was observed before; the default bounds come from the
//! model extent and the body masses.
//!
//! The test model has two free bodies without forces or gravity, so every method reproduces the
//! exact motion x(t) = x0 + v0 t to round-off: the time at which a bound is passed is known
//! independently of the integrator.

use sprung::{Bounds, Model, Simulation, StopReason};

/// Body `slow` at the origin moving at 0.1 m/s, body `fast` at (3, 4, 0) m moving at 10 m/s along
/// x. Without markers the model extent is the distance between the centres of mass, 5 m.
const FREE: &str = r#"
[model]
name = "free_bodies"

[solver]
method = "lsrt2"
step = 1e-3
t_end = 1.0

[[bodies]]
name = "slow"
mass = 1.0
position = [0.0, 0.0, 0.0]
velocity = [0.1, 0.0, 0.0]
inertia = { principal = [0.01, 0.01, 0.01] }

[[bodies]]
name = "fast"
mass = 2.0
position = [3.0, 4.0, 0.0]
velocity = [10.0, 0.0, 0.0]
inertia = { principal = [0.01, 0.01, 0.01] }
"#;

fn model() -> std::sync::Arc<Model> {
    Model::from_description(sprung_model::from_toml_str(FREE, "free.toml").unwrap()).unwrap()
}

#[test]
fn default_bounds_follow_the_model_extent() {
    let sim = Simulation::new(model()).unwrap();
    let l = sim.limits();
    // Hand computation: extent = |(3, 4, 0)| = 5 m; 10 x extent = 50 m; 50 m / 10 ms = 5000 m/s.
    assert!((l.extent - 5.0).abs() < 1e-12, "{}", l.extent);
    assert!((l.max_displacement - 50.0).abs() < 1e-12);
    assert!((l.max_velocity - 5000.0).abs() < 1e-9);
    assert!(l.displacement_default && l.velocity_default);
    // Force: the heaviest body (2 kg) from rest to 5000 m/s in 10 ms: 2 kg x 5e5 m/s^2 = 1e6 N.
    assert!((l.max_force - 1e6).abs() < 1e-6, "{}", l.max_force);
    assert!(l.force_default && l.heaviest == 2.0);
    // Without force elements neither body is held to the ground: the default displacement bound
    // applies to none of them (free flight is legitimate); a set bound applies to all.
    assert_eq!(l.bounded, vec![false, false]);
    let mut s = model().default_settings();
    s.bounds.max_displacement = Some(1.0);
    assert_eq!(
        s.bounds.resolve(&model().compiled().clone()).bounded,
        vec![true, true]
    );
    // The default run (1 s: the fast body travels 10 m < 50 m) completes.
    let mut sim = Simulation::new(model()).unwrap();
    let report = sim.run(1.0, &mut |_, _| sprung::Control::Continue);
    assert_eq!(report.stop, StopReason::Completed);
}

/// With max_displacement = 0.9505 m the fast body (10 m/s) passes the bound at t = 0.09505 s; the
/// first output after that is t = 0.096 s (1 ms grid). Every method must stop there, naming
/// `fast`, with the last observed row at t = 0.095 s.
#[test]
fn every_route_stops_at_the_first_output_beyond_the_displacement_bound() {
    for (method, adaptive) in [
        ("lsrt2", None),
        ("rk4", None),
        ("rodas4", Some(true)),
        ("ode45", Some(true)),
    ] {
        let m = model();
        let mut s = m.default_settings();
        s.method = method.into();
        s.adaptive = adaptive;
        s.output_interval = 1e-3;
        s.bounds = Bounds {
            max_displacement: Some(0.9505),
            ..Default::default()
        };
        let mut sim = Simulation::with_settings(m, s.clone()).unwrap();
        let mut last = f64::NAN;
        let report = sim.run_with(&s, 1.0, &mut |t, _| {
            last = t;
            sprung::Control::Continue
        });
        let StopReason::Failed(msg) = &report.stop else {
            panic!("{method}: {:?}", report.stop)
        };
        assert!(
            msg.contains("body 'fast'") && msg.contains("displacement bound"),
            "{method}: {msg}"
        );
        assert!(msg.contains("t = 0.096"), "{method}: {msg}");
        assert!((last - 0.095).abs() < 1e-9, "{method}: last row at {last}");
    }
}

/// The velocity bound names the body moving faster than it: `fast` (10 m/s) against 5 m/s, in
/// the first step; `slow` (0.1 m/s) is within it. Also through `Simulation::step`.
#[test]
fn the_velocity_bound_names_the_fast_body_also_in_step() {
    let m = model();
    let mut s = m.default_settings();
    s.bounds.max_velocity = Some(5.0);
    let mut sim = Simulation::with_settings(m, s).unwrap();
    let e = sim.step().unwrap_err().to_string();
    assert!(
        e.contains("body 'fast'") && e.contains("velocity bound 5.0000e0 m/s"),
        "{e}"
    );
    // The reported speed is the exact 10 m/s (free motion), to round-off.
    assert!(e.contains("1.0000e1 m/s"), "{e}");
}

/// `inf` switches a bound off; invalid bounds are rejected by the one settings validation.
#[test]
fn infinite_bounds_never_trigger_and_invalid_ones_are_rejected() {
    let m = model();
    let mut s = m.default_settings();
    s.bounds = Bounds {
        max_displacement: Some(f64::INFINITY),
        max_velocity: Some(f64::INFINITY),
        max_force: Some(f64::INFINITY),
    };
    let mut sim = Simulation::with_settings(m, s).unwrap();
    let report = sim.run(1.0, &mut |_, _| sprung::Control::Continue);
    assert_eq!(report.stop, StopReason::Completed);

    // The loader validates [solver] like the command line does.
    for bad in ["0.0", "-1.0", "nan"] {
        let text = FREE.replace(
            "t_end = 1.0",
            &format!("t_end = 1.0\nmax_displacement = {bad}"),
        );
        let e = sprung_model::from_toml_str(&text, "free.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("max_displacement"), "{bad}: {e}");
    }
}

/// One free 2 kg block without gravity pushed along x by a ramp force F(t) = 1000 N/s · t: the
/// resultant force on it is F(t) exactly, whatever the integrator.
const PUSHED: &str = r#"
[model]
name = "pushed_block"
gravity = [0.0, 0.0, 0.0]

[solver]
method = "lsrt2"
step = 1e-3
t_end = 1.0

[[bodies]]
name = "block"
mass = 2.0
position = [0.0, 0.0, 0.0]
inertia = { principal = [0.01, 0.01, 0.01] }

[[markers]]
name = "centre"
body = "block"
position = [0.0, 0.0, 0.0]

[[inputs]]
name = "F"
kind = "force"
marker = "centre"
direction = [1.0, 0.0, 0.0]
signal = { type = "ramp", start_time = 0.0, end_time = 1.0, from = 0.0, to = 1000.0 }
"#;

/// The force bound 500.25 N is passed at t = 0.50025 s. The fixed-step routes check the
/// resultant forces of the step's last evaluation — LSRT2's second stage at the midpoint
/// (F(0.5005 s) = 500.5 N in the step to 0.501 s, 499.5 N the step before), RK4's last stage at
/// the step end (501 N; 500 N before): both stop at t = 0.501 s naming the block, with the value
/// of their evaluation, and keep the rows up to 0.5 s. No element acts on the block, so none is
/// named. (Adaptive routes check only the motion bounds: `sprung_mbs::simulate` module docs.)
#[test]
fn every_route_stops_when_the_resultant_force_passes_the_force_bound() {
    let m =
        Model::from_description(sprung_model::from_toml_str(PUSHED, "p.toml").unwrap()).unwrap();
    for (method, adaptive, value) in [("lsrt2", None, "5.0050e2 N"), ("rk4", None, "5.0100e2 N")] {
        let mut s = m.default_settings();
        s.method = method.into();
        s.adaptive = adaptive;
        s.output_interval = 1e-3;
        s.bounds = Bounds {
            max_velocity: Some(f64::INFINITY),
            max_force: Some(500.25),
            ..Default::default()
        };
        let mut sim = Simulation::with_settings(m.clone(), s.clone()).unwrap();
        let mut last = f64::NAN;
        let report = sim.run_with(&s, 1.0, &mut |t, _| {
            last = t;
            sprung::Control::Continue
        });
        let StopReason::Failed(msg) = &report.stop else {
            panic!("{method}: {:?}", report.stop)
        };
        assert!(
            msg.contains("body 'block'")
                && msg.contains("t = 0.501 s")
                && msg.contains(&format!("resultant force on it is {value}"))
                && msg.contains("force bound 5.0025e2 N (as set)")
                && !msg.contains("element"),
            "{method}: {msg}"
        );
        assert!((last - 0.5).abs() < 1e-9, "{method}: last row at {last}");
    }
}

/// The mass-spring-damper with its spring pre-stretched by 0.5 m (free length 0.5 m instead of
/// 1 m): 100 N/m x 0.5 m = 50 N on the mass from the start (plus the 10 N input: 60 N resultant),
/// against a force bound of 25 N. The first step stops, naming the mass and the spring as the
/// element with the largest force on it (50 N to 2e-3 relative: the mass moves 3e-5 m in the
/// first 1 ms; the damper's force is 2 N s/m x 0.06 m/s = 0.12 N at most). With the bound at its default (1 kg x 1000 m/s per 10 ms
/// = 1e5 N) the same model runs to the end.
#[test]
fn the_force_bound_names_the_element_with_the_largest_force_on_the_body() {
    let path = sprung_test_support::model_path("mass_spring_damper.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let stretched = text.replace("free_length = 1.0", "free_length = 0.5");
    assert_ne!(stretched, text);
    let model = |bound: Option<f64>| {
        let mut d = sprung_model::from_toml_str(&stretched, "msd.toml").unwrap();
        d.solver.max_force = bound;
        Model::from_description(d).unwrap()
    };
    let mut sim = Simulation::new(model(Some(25.0))).unwrap();
    let e = sim.step().unwrap_err().to_string();
    assert!(
        e.contains("body 'mass'")
            && e.contains("force bound 2.5000e1 N (as set)")
            && e.contains("element 'spring'"),
        "{e}"
    );
    let f: f64 = e
        .split("largest element force on it is ")
        .nth(1)
        .and_then(|r| r.split(" N").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!((f - 50.0).abs() < 0.1, "{f} N: {e}");

    let mut sim = Simulation::new(model(None)).unwrap();
    assert!((sim.limits().max_force - 1e5).abs() < 1e-6);
    let report = sim.run(3.0, &mut |_, _| sprung::Control::Continue);
    assert_eq!(report.stop, StopReason::Completed);

    // The loader validates max_force like the other bounds.
    let bad = stretched.replace("t_end = 3.0", "t_end = 3.0\nmax_force = -1.0");
    let e = sprung_model::from_toml_str(&bad, "msd.toml")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("max_force"), "{e}");
}
