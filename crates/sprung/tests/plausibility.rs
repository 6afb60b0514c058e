//! Issue 17, item 5: divergence by plausibility. A run stops when a body's centre of mass leaves
//! the displacement or velocity bound (`sprung_mbs::simulate` module docs), names the body, and
//! keeps what was observed before; the default bounds come from the model extent.
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
            max_velocity: None,
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
