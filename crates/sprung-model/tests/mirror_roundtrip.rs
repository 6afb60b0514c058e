//! Mirror expansion (positions, S A S proper rotations, S I S, names and references),
//! TOML -> Model -> JSON -> Model round trip, and schema generation.

use sprung_model::rot::{self, MIRROR_S, Mat3};
use sprung_model::{ForceElement, Model, from_json_str, from_toml_str, parse_raw};

const BASE: &str = include_str!("common_base.toml");

fn model() -> Model {
    // Add a shared (non-mirrored) marker referenced by a mirrored element.
    let src = BASE.replace(
        "[[force_elements]]\ntype = \"damper\"",
        "[[markers]]\nname = \"shared\"\nbody = \"chassis\"\nglobal_position = [0.0, 0.0, 0.6]\n\n[[force_elements]]\ntype = \"damper\"",
    );
    let src = src.replacen(
        "marker_i = \"top_L\"\nmarker_j = \"arm_inner_L.I\"\ndamping_rebound",
        "marker_i = \"shared\"\nmarker_j = \"arm_inner_L.I\"\ndamping_rebound",
        1,
    );
    from_toml_str(&src, "base.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn sms(a: &Mat3) -> Mat3 {
    rot::mul(&MIRROR_S, &rot::mul(a, &MIRROR_S))
}

fn assert_mat(a: &Mat3, b: &Mat3, tol: f64) {
    for r in 0..3 {
        for c in 0..3 {
            assert!((a[r][c] - b[r][c]).abs() <= tol, "{a:?} != {b:?}");
        }
    }
}

fn assert_vec(a: &[f64; 3], b: &[f64; 3], tol: f64) {
    for k in 0..3 {
        assert!((a[k] - b[k]).abs() <= tol, "{a:?} != {b:?}");
    }
}

#[test]
fn bodies_are_mirrored() {
    let m = model();
    assert_eq!(
        m.bodies.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        ["arm_L", "wheel_L", "arm_R", "wheel_R"]
    );
    for side in ["arm", "wheel"] {
        let l = m.body(&format!("{side}_L")).unwrap();
        let r = m.body(&format!("{side}_R")).unwrap();
        assert!(!l.mirror && !r.mirror);
        assert_eq!(r.mass, l.mass);
        assert_vec(
            &r.position,
            &[l.position[0], -l.position[1], l.position[2]],
            0.0,
        );
        assert_vec(
            &r.velocity,
            &[l.velocity[0], -l.velocity[1], l.velocity[2]],
            0.0,
        );
        assert_vec(
            &r.angular_velocity,
            &[
                -l.angular_velocity[0],
                l.angular_velocity[1],
                -l.angular_velocity[2],
            ],
            0.0,
        );
        assert_mat(&r.inertia_tensor(), &sms(&l.inertia_tensor()), 1e-15);
        let rr = r.rotation();
        assert_mat(&rr, &sms(&l.rotation()), 1e-15);
        assert!((rot::det(&rr) - 1.0).abs() < 1e-14);
        // The angular velocity mirrors as a pseudovector in global coordinates too.
        let wl = rot::mul_vec(&l.rotation(), &l.angular_velocity);
        let wr = rot::mul_vec(&rr, &r.angular_velocity);
        assert_vec(&wr, &[-wl[0], wl[1], -wl[2]], 1e-14);
    }
    // The tensor form: products of inertia with y change sign.
    let r = m.body("arm_R").unwrap().inertia.tensor.unwrap();
    assert_eq!(r[0][1], 0.001);
    assert_eq!(r[0][0], 0.02);
}

#[test]
fn markers_are_mirrored() {
    let m = model();
    let lefts: Vec<_> = m.markers.iter().filter(|k| k.name.contains("_L")).collect();
    assert_eq!(lefts.len(), 5);
    for l in lefts {
        let rn = sprung_model::mirror::mirrored_name(&l.name).unwrap();
        let r = m.marker(&rn).unwrap_or_else(|| panic!("{rn} missing"));
        // Body reference: mirrored bodies renamed, the ground stays.
        if m.is_ground(&l.body) {
            assert_eq!(r.body, l.body);
        } else {
            assert_eq!(r.body, l.body.replace("_L", "_R"));
        }
        let pl = m.marker_position_global(l);
        let pr = m.marker_position_global(r);
        assert_vec(&pr, &[pl[0], -pl[1], pl[2]], 1e-15);
        let al = m.marker_axes_global(l);
        let ar = m.marker_axes_global(r);
        assert_mat(&ar, &sms(&al), 1e-14);
        assert!(
            (rot::det(&ar) - 1.0).abs() < 1e-12,
            "{rn}: S A S must stay a proper rotation"
        );
        assert!(rot::orthonormality_error(&ar) < 1e-14);
        // Body-frame position of the copy = S p.
        let bl = m.marker_position_body(l);
        let br = m.marker_position_body(r);
        assert_vec(&br, &[bl[0], -bl[1], bl[2]], 1e-14);
    }
    // The shared frame F01 is inlined as S A S on the copy.
    let r = m.marker("arm_inner_R.I").unwrap();
    assert!(r.frame.is_none() && r.global_axes.is_some());
    let shared = m.marker("shared").unwrap();
    assert!(m.marker("shared_R").is_none() && shared.body == "chassis");
}

#[test]
fn elements_inputs_outputs_are_mirrored() {
    let m = model();
    assert_eq!(m.force_elements.len(), 10);
    let ForceElement::Bushing(r) = m.force_element("arm_inner_R").unwrap() else {
        panic!()
    };
    assert_eq!(
        (r.marker_i.as_str(), r.marker_j.as_str()),
        ("arm_inner_R.I", "arm_inner_R.J")
    );
    assert_eq!(
        r.stiffness_curves.x.as_deref(),
        Some("C_RAD"),
        "curve names are not renamed"
    );
    assert_eq!(r.preload, [1.0, -2.0, 3.0]);
    assert_eq!(r.rot_preload, [-4.0, 5.0, -6.0]);
    assert_eq!(r.stiffness, [5e6, 1.5e6, 5e6]);
    let ForceElement::Damper(d) = m.force_element("damper_R").unwrap() else {
        panic!()
    };
    assert_eq!(d.marker_i, "shared", "non-mirrored references stay");
    assert_eq!(d.marker_j, "arm_inner_R.I");
    let ForceElement::Stop(s) = m.force_element("bump_R").unwrap() else {
        panic!()
    };
    assert_eq!(s.curve.as_deref(), Some("C_STOP"));
    // Inputs: force d -> S d, torque d -> -S d.
    let f = m.input("Fz_R").unwrap();
    assert_eq!(f.direction, [0.0, -1.0, 1.0]);
    assert_eq!(f.marker, "bearing_R.I");
    let t = m.input("My_R").unwrap();
    assert_eq!(t.direction, [-1.0, 2.0, -3.0]);
    assert_eq!(t.signal, m.input("My_L").unwrap().signal);
    // Outputs: references renamed, component unchanged.
    let o = m.output("wc_dz_R").unwrap();
    assert_eq!(o.marker.as_deref(), Some("bearing_R.I"));
    assert_eq!(o.component, m.output("wc_dz_L").unwrap().component);
    assert_eq!(
        m.output("bush_F_R").unwrap().element.as_deref(),
        Some("arm_inner_R")
    );
    assert_eq!(
        m.output("spring_len_R").unwrap().element.as_deref(),
        Some("spring_R")
    );
    assert!(m.output("wheel_w_R").is_none());
    // No mirror flags remain anywhere.
    let json = serde_json::to_string(&m).unwrap();
    assert!(!json.contains("\"mirror\""));
}

#[test]
fn expand_mirrors_api_matches_loader() {
    let raw = parse_raw(BASE, sprung_model::Format::Toml, "base.toml").unwrap();
    let exp = raw.expand_mirrors().unwrap();
    exp.validate().unwrap();
    let loaded = from_toml_str(BASE, "base.toml").unwrap();
    assert_eq!(exp.bodies, loaded.bodies);
    assert_eq!(exp.force_elements, loaded.force_elements);
    assert_eq!(exp.inputs, loaded.inputs);
    // Expanding an expanded model changes nothing.
    assert_eq!(loaded.expand_mirrors().unwrap(), loaded);
}

#[test]
fn roundtrip_toml_json() {
    let m = model();
    let json = serde_json::to_string_pretty(&m).unwrap();
    let back = from_json_str(&json, "rt.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, m);
    // And once more through compact JSON.
    let back2 = from_json_str(&serde_json::to_string(&back).unwrap(), "rt2.json").unwrap();
    assert_eq!(back2, m);
}

#[test]
fn schema_generation() {
    let s = sprung_model::json_schema();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["title"], "Model");
    assert!(v["properties"]["force_elements"].is_object());
    let defs = v["definitions"].as_object().unwrap();
    for d in [
        "Body",
        "Marker",
        "ForceElement",
        "Signal",
        "Curve",
        "Output",
        "Frame",
        "Inertia",
    ] {
        assert!(defs.contains_key(d), "definition {d} missing");
    }
    let variants = defs["ForceElement"]["oneOf"].as_array().unwrap();
    let tags: Vec<&str> = variants
        .iter()
        .map(|v| v["properties"]["type"]["enum"][0].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["bushing", "spring", "damper", "stop"]);
    assert!(variants.iter().all(|v| v["additionalProperties"] == false));
    assert_eq!(
        v["additionalProperties"], false,
        "unknown fields are errors"
    );
    assert!(s.contains("\"block_sparse\"") && s.contains("\"rot_deflection\""));
}
