//! End-to-end tests of `sprung static` (issue 17, item 8): the equilibrium printout with and
//! without gravity, at given input values, and clear errors for bad arguments.

mod common;

use common::{sprung_output as sprung, text};

/// Value of channel `name` in the printout ("  name  value unit").
fn channel(out: &str, name: &str) -> f64 {
    out.lines()
        .find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some(name))
                .then(|| it.next().and_then(|v| v.parse().ok()))
                .flatten()
        })
        .unwrap_or_else(|| panic!("channel {name} not in\n{out}"))
}

#[test]
fn static_prints_channels_and_displacements() {
    let o = sprung(&["static", "models/bushing_pair.toml"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("output channels:") && t.contains("body displacements") && t.contains("lower"),
        "{t}"
    );
    // Independent check: the hanger carries the weight of both bodies, (5 + 3) kg * 9.81 m/s^2
    // (the sine torque is zero at t = 0); the link carries the lower body's 3 kg.
    let hanger = channel(&t, "hanger_Fz").abs();
    let link = channel(&t, "link_Fz").abs();
    assert!((hanger - 8.0 * 9.81).abs() < 1e-6, "{hanger}\n{t}");
    assert!((link - 3.0 * 9.81).abs() < 1e-6, "{link}\n{t}");
}

#[test]
fn static_without_gravity_and_loads_stays_at_design() {
    let o = sprung(&[
        "static",
        "models/bushing_pair.toml",
        "--no-gravity",
        "--input",
        "Mz=0",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("gravity off") && t.contains("0 Newton iterations"),
        "{t}"
    );
    assert_eq!(channel(&t, "hanger_Fz"), 0.0, "{t}");
    // A constant torque about z instead: the bodies twist, the vertical forces stay zero.
    let o = sprung(&[
        "static",
        "models/bushing_pair.toml",
        "--no-gravity",
        "--input",
        "Mz=1.5",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(channel(&t, "link_Tz").abs() > 1.0, "{t}");
    assert!(channel(&t, "hanger_Fz").abs() < 1e-6, "{t}");
}

#[test]
fn static_rejects_bad_arguments_with_a_sentence() {
    let o = sprung(&["static", "models/bushing_pair.toml", "--input", "Nope=1"]);
    let t = text(&o);
    assert!(
        !o.status.success() && t.contains("no input 'Nope'") && t.contains("Mz"),
        "{t}"
    );
    let o = sprung(&["static", "models/bushing_pair.toml", "--input", "Mz=abc"]);
    assert!(!o.status.success() && text(&o).contains("not a finite number"));
    let o = sprung(&["static", "models/bushing_pair.toml", "--time", "nan"]);
    assert!(!o.status.success() && text(&o).contains("--time"));
    let o = sprung(&["static", "models/bushing_pair.toml", "--tolerance", "0"]);
    assert!(!o.status.success() && text(&o).contains("--tolerance"));
}

/// A model with ideal joints: the pendulum (`models/joint_pendulum.toml`, bob 1 m below the
/// pivot, starting at 0.1 rad) rests hanging straight down; the channels read the expanded
/// pose (bob_z = −1 m, bob_x = 0), not the joint coordinate in the state's first slot.
#[test]
fn static_solves_a_jointed_model_and_prints_its_poses() {
    let o = sprung(&["static", "models/joint_pendulum.toml"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("converged") && t.contains("bob"), "{t}");
    // The residual tolerance 1e-10 of the weight allows 1e-10 rad, i.e. 1e-10 m at the bob.
    assert!(channel(&t, "bob_x").abs() < 1e-9, "{t}");
    assert!((channel(&t, "bob_z") + 1.0).abs() < 1e-9, "{t}");
}
