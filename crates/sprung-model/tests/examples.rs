//! The example models in `models/` load, validate and round-trip.

use std::path::PathBuf;

use sprung_model::{ForceElement, Model, Signal, load};

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

fn load_example(name: &str) -> Model {
    let p = models_dir().join(name);
    match load(&p) {
        Ok(m) => m,
        Err(e) => panic!("{name} failed to load:\n{e}"),
    }
}

fn roundtrip(m: &Model) {
    let json = serde_json::to_string_pretty(m).unwrap();
    let back = sprung_model::from_json_str(&json, "roundtrip.json").unwrap();
    assert_eq!(&back, m);
}

#[test]
fn mass_spring_damper_loads() {
    let m = load_example("mass_spring_damper.toml");
    assert_eq!(m.model.name, "mass_spring_damper");
    assert_eq!(m.bodies.len(), 1);
    assert_eq!(m.force_elements.len(), 2);
    assert!(matches!(m.force_elements[0], ForceElement::Spring(_)));
    assert!(matches!(m.force_elements[1], ForceElement::Damper(_)));
    let spring = &m.force_elements[0];
    assert!((m.design_length(spring).unwrap() - 1.0).abs() < 1e-15);
    let f = &m.inputs[0];
    assert_eq!(f.signal.value(0.0), 10.0);
    assert_eq!(f.signal.value(-1e-9), 0.0);
    assert_eq!(f.signal.discontinuities(), vec![0.0]);
    assert_eq!(m.model.gravity, [0.0; 3]);
    roundtrip(&m);
}

#[test]
fn bushing_pair_loads() {
    let m = load_example("bushing_pair.toml");
    assert_eq!(m.bodies.len(), 2);
    assert_eq!(m.force_elements.len(), 2);
    assert_eq!(m.model.gravity, [0.0, 0.0, -9.81]);
    let c = m.curve("C_PROG").unwrap();
    assert_eq!(c.eval(-1e-3).0, -5200.0);
    let link_i = m.marker("link.I").unwrap();
    let a = m.marker_axes_global(link_i);
    let s = 30f64.to_radians().sin();
    assert!((a[1][0] - s).abs() < 1e-15);
    // lower body: marker at global (0,0,-0.2), body CoM at (0,0,-0.35)
    let p = m.marker_position_body(link_i);
    assert!((p[2] - 0.15).abs() < 1e-15);
    assert!(matches!(m.inputs[0].signal, Signal::Sine { .. }));
    roundtrip(&m);
}

#[test]
fn free_pair_loads() {
    let m = load_example("free_pair.toml");
    assert_eq!(m.bodies.len(), 2);
    assert!(m.markers.iter().all(|k| !m.is_ground(&k.body)));
    let mom: Vec<f64> = (0..3)
        .map(|k| m.bodies.iter().map(|b| b.mass * b.velocity[k]).sum())
        .collect();
    assert!((mom[0]).abs() < 1e-15 && (mom[1] - 0.2).abs() < 1e-15 && (mom[2] - 0.2).abs() < 1e-15);
    // The two joint markers coincide and have the same global axes.
    let i = m.marker("joint.I").unwrap();
    let j = m.marker("joint.J").unwrap();
    assert_eq!(m.marker_position_global(i), m.marker_position_global(j));
    let (ai, aj) = (m.marker_axes_global(i), m.marker_axes_global(j));
    for r in 0..3 {
        for c in 0..3 {
            assert!((ai[r][c] - aj[r][c]).abs() < 1e-15);
        }
    }
    // joint.J on the rotated body a: body-frame position maps back to the global one.
    let pb = m.marker_position_body(j);
    let ra = m.bodies[0].rotation();
    let g = sprung_model::rot::mul_vec(&ra, &pb);
    for k in 0..3 {
        assert!((g[k] - [0.15, 0.05, 0.025][k]).abs() < 1e-15);
    }
    roundtrip(&m);
}
