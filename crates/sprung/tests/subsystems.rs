//! Subsystem composition through the facade: a model built from included files simulates like
//! the same model written out by hand, and a reference axle included with a placement gives
//! the axle's own load-case results (translation invariance of the mechanics).

use std::sync::Arc;

use sprung::{Control, Model, Simulation};
use sprung_test_support::{fixture_path, model_path};

/// Channel name -> time series of a run to `t_end`.
fn run(model: Arc<Model>, t_end: f64) -> Vec<(String, Vec<f64>)> {
    let names: Vec<String> = model
        .channel_names()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut sim = Simulation::new(model).unwrap();
    let mut cols = vec![Vec::new(); names.len()];
    let report = sim.run(t_end, &mut |_, row| {
        for (c, v) in cols.iter_mut().zip(row) {
            c.push(*v);
        }
        Control::Continue
    });
    assert_eq!(report.stop, sprung::StopReason::Completed);
    names.into_iter().zip(cols).collect()
}

fn column<'a>(run: &'a [(String, Vec<f64>)], name: &str) -> &'a [f64] {
    &run.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no channel {name}"))
        .1
}

/// Largest |a - b| over the run relative to the largest |a| (the channel's scale).
fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

#[test]
fn composed_model_simulates_like_the_hand_written_one() {
    let a = run(
        Model::from_file(fixture_path("subsystems/pair.toml")).unwrap(),
        0.4,
    );
    let b = run(
        Model::from_file(fixture_path("subsystems/pair_by_hand.toml")).unwrap(),
        0.4,
    );
    assert_eq!(a.len(), b.len());
    for (name, col) in &a {
        // The two descriptions differ by round-off of the 180 deg placement (sin(pi) =
        // 1.2e-16) in positions and axes; an equilibrium solve and 400 stiff steps keep that
        // at round-off level. Measured: < 1e-11.
        let e = rel_err(col, column(&b, name));
        assert!(e < 1e-9, "{name}: relative difference {e:e}");
    }
}

#[test]
fn an_included_axle_gives_the_axles_own_results() {
    let t_end = 0.2;
    let mut axle_desc = sprung_model::load(&model_path("double_wishbone.toml")).unwrap();
    // The load case with its Fx step inside the short span.
    for i in &mut axle_desc.inputs {
        if let sprung_model::Signal::Step { time, .. } = &mut i.signal {
            *time = 0.1;
        }
    }
    let direct = run(Model::from_description(axle_desc).unwrap(), t_end);

    let src = r#"
[model]
name = "placed_axle"
ground = "body"
gravity = [0.0, 0.0, -9.81]

[solver]
method = "lsrt2"
step = 1e-3
t_end = 0.2

[initial_state]
kind = "equilibrium"

[[subsystems]]
name = "front"
file = "double_wishbone.toml"
position = [1.4, 0.0, 0.3]
inputs = "keep"
"#;
    let mut placed = sprung_model::from_str_with_base(
        src,
        sprung_model::Format::Toml,
        "placed_axle.toml",
        &model_path(""),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for i in &mut placed.inputs {
        if let sprung_model::Signal::Step { time, .. } = &mut i.signal {
            *time = 0.1;
        }
    }
    let placed = run(Model::from_description(placed).unwrap(), t_end);
    assert_eq!(placed.len(), direct.len());
    for (name, col) in &direct {
        // Positions are shifted by (1.4, 0, 0.3) m; every relative quantity is the same up to
        // the round-off of that shift (1e-16 x 1.4 m against millimetre displacements).
        // Measured: < 1e-9.
        let e = rel_err(col, column(&placed, &format!("front.{name}")));
        assert!(e < 1e-7, "{name}: relative difference {e:e}");
    }
}
