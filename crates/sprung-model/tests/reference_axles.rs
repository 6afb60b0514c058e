//! Independent check of mirroring, the Euler convention and the principal-axes inertia form
//! against the machine-readable reference axles (`../shared/data/double_wishbone.json`,
//! `multilink.json`, see `reference-suspensions.md`), which list both sides explicitly.
//!
//! Only the left side and the shared items are converted to the sprung format (with
//! `mirror = true` on the left items); the expanded model must reproduce the published right
//! side: positions, inertia tensors S I S, bushing axes S A S, body-frame marker positions,
//! principal-frame Euler angles, element parameters and P2P design lengths.

use std::path::PathBuf;

use serde_json::{Value, json};
use sprung_model::{ForceElement, Model, from_json_str};

fn data(name: &str) -> Option<Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(name);
    let text = std::fs::read_to_string(&p).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn arr3(v: &Value) -> [f64; 3] {
    let a = v.as_array().unwrap();
    [
        a[0].as_f64().unwrap(),
        a[1].as_f64().unwrap(),
        a[2].as_f64().unwrap(),
    ]
}

fn mat3(v: &Value) -> [[f64; 3]; 3] {
    let a = v.as_array().unwrap();
    [arr3(&a[0]), arr3(&a[1]), arr3(&a[2])]
}

/// Orientation matrix with the given axes as columns.
fn axes(v: &Value) -> [[f64; 3]; 3] {
    let (x, y, z) = (arr3(&v["x"]), arr3(&v["y"]), arr3(&v["z"]));
    std::array::from_fn(|r| [x[r], y[r], z[r]])
}

fn is_left(name: &str) -> bool {
    sprung_model::mirror::mirrored_name(name).is_some()
}

fn is_right(name: &str) -> bool {
    name.ends_with("_R") || name.contains("_R.")
}

/// Convert the left side + shared items of a reference axle into the sprung format (JSON).
fn convert(d: &Value) -> String {
    let markers = d["markers"].as_array().unwrap();
    let marker_name = |id: &Value| {
        markers[id.as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut curves = Vec::new();
    for (name, c) in d["curves"].as_object().unwrap() {
        curves.push(json!({
            "name": name, "x": c["x"], "y": c["y"], "symmetry": c["symmetry"],
            "x_unit": c["x_unit"], "y_unit": c["y_unit"],
        }));
    }
    let mut bodies = Vec::new();
    for (k, b) in d["bodies"].as_array().unwrap().iter().enumerate() {
        let name = b["name"].as_str().unwrap();
        if is_right(name) {
            continue;
        }
        // Alternate the two inertia forms.
        let inertia = if k % 2 == 0 {
            json!({ "principal": b["principal_moments_kgm2"], "euler_zyx_deg": b["principal_frame_euler_zyx_deg"] })
        } else {
            json!({ "tensor": b["inertia_kgm2_body_axes"] })
        };
        bodies.push(json!({
            "name": name, "mass": b["mass_kg"], "position": b["com_m"], "inertia": inertia, "mirror": is_left(name),
        }));
    }
    let mut out_markers = Vec::new();
    for m in markers {
        let name = m["name"].as_str().unwrap();
        if is_right(name) {
            continue;
        }
        out_markers.push(json!({
            "name": name, "body": m["body"], "global_position": m["position_global_m"],
            "global_axes": m["local_axes_global"], "mirror": is_left(name),
        }));
    }
    let mut elements = Vec::new();
    for e in d["force_elements"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        if is_right(name) {
            continue;
        }
        let (mi, mj) = (marker_name(&e["marker_i"]), marker_name(&e["marker_j"]));
        let mirror = is_left(name);
        let t = e["type"].as_str().unwrap();
        let el = match t {
            "bushing" | "ball_joint" | "slide" | "bearing" => {
                let mut b = json!({
                    "type": "bushing", "name": name, "marker_i": mi, "marker_j": mj,
                    "stiffness": e["stiffness_trans_N_per_m"], "rot_stiffness": e["stiffness_rot_Nm_per_rad"],
                    "damping": e["damping_trans_Ns_per_m"], "rot_damping": e["damping_rot_Nms_per_rad"],
                    "stiffness_curves": e["nonlinear_trans_curves"], "mirror": mirror,
                });
                if t == "bearing" {
                    b["spin_axis"] = json!("y");
                }
                b
            }
            "p2p_spring" => json!({
                "type": "spring", "name": name, "marker_i": mi, "marker_j": mj,
                "stiffness": e["stiffness_N_per_m"], "free_length": e["free_length_m"],
                "damping": e["damping_Ns_per_m"], "mirror": mirror,
            }),
            "p2p_damper" => json!({
                "type": "damper", "name": name, "marker_i": mi, "marker_j": mj, "curve": e["curve"], "mirror": mirror,
            }),
            "p2p_stop_bump" | "p2p_stop_rebound" => json!({
                "type": "stop", "name": name, "marker_i": mi, "marker_j": mj,
                "kind": if t == "p2p_stop_bump" { "bump" } else { "rebound" },
                "clearance": e["clearance_m"], "curve": e["curve"], "mirror": mirror,
            }),
            other => panic!("unknown element type {other}"),
        };
        elements.push(el);
    }
    let model = json!({
        "model": { "name": d["model"], "ground": "chassis", "gravity": [0.0, 0.0, -9.81] },
        "curves": curves, "bodies": bodies, "markers": out_markers, "force_elements": elements,
    });
    serde_json::to_string_pretty(&model).unwrap()
}

fn close3(a: &[f64; 3], b: &[f64; 3], tol: f64) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

fn close33(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3], tol: f64) -> bool {
    (0..3).all(|r| close3(&a[r], &b[r], tol))
}

fn check_axle(file: &str) {
    let Some(d) = data(file) else {
        eprintln!("reference data {file} not found; skipping");
        return;
    };
    let src = convert(&d);
    let m: Model = from_json_str(&src, file).unwrap_or_else(|e| panic!("{e}"));
    let counts = &d["counts"];
    assert_eq!(m.bodies.len() as u64, counts["bodies"].as_u64().unwrap());
    assert_eq!(
        m.force_elements.len() as u64,
        counts["force_elements"].as_u64().unwrap()
    );
    assert_eq!(m.markers.len(), d["markers"].as_array().unwrap().len());
    let p2p = m
        .force_elements
        .iter()
        .filter(|e| e.is_point_to_point())
        .count();
    assert_eq!(p2p as u64, counts["p2p"].as_u64().unwrap());

    for b in d["bodies"].as_array().unwrap() {
        let name = b["name"].as_str().unwrap();
        let mine = m
            .body(name)
            .unwrap_or_else(|| panic!("body {name} missing"));
        assert!(
            close3(&mine.position, &arr3(&b["com_m"]), 1e-15),
            "{name} position"
        );
        assert_eq!(mine.mass, b["mass_kg"].as_f64().unwrap());
        // Tensor: exact S I S for the tensor form; principal form agrees with the published
        // tensor to the rounding of the published principal data (4 digits, 0.001 deg).
        let reference = mat3(&b["inertia_kgm2_body_axes"]);
        let scale = reference
            .iter()
            .flatten()
            .fold(0.0f64, |a, x| a.max(x.abs()));
        let tol = if mine.inertia.tensor.is_some() {
            1e-15
        } else {
            2e-3 * scale
        };
        assert!(
            close33(&mine.inertia_tensor(), &reference, tol),
            "{name}: {:?} vs {reference:?}",
            mine.inertia_tensor()
        );
        if let Some(e) = mine.inertia.euler_zyx_deg {
            // Mirrored Euler angles equal the published right-side ones, and R(euler) gives the
            // published principal axes (Euler z-y'-x'' convention).
            assert!(
                close3(&e, &arr3(&b["principal_frame_euler_zyx_deg"]), 1e-12),
                "{name} euler"
            );
            let p = sprung_model::rot::euler_zyx_deg(&e);
            assert!(
                close33(&p, &axes(&b["principal_axes_global"]), 5e-5),
                "{name} principal axes"
            );
        }
    }
    for mk in d["markers"].as_array().unwrap() {
        let name = mk["name"].as_str().unwrap();
        let mine = m
            .marker(name)
            .unwrap_or_else(|| panic!("marker {name} missing"));
        assert_eq!(mine.body, mk["body"].as_str().unwrap(), "{name} body");
        assert!(
            close3(
                &m.marker_position_global(mine),
                &arr3(&mk["position_global_m"]),
                1e-15
            ),
            "{name}"
        );
        assert!(
            close3(
                &m.marker_position_body(mine),
                &arr3(&mk["position_body_m"]),
                1e-12
            ),
            "{name} body position"
        );
        let a = m.marker_axes_global(mine);
        assert!((sprung_model::rot::det(&a) - 1.0).abs() < 1e-14);
        if mk["local_axes_global"].is_object() {
            assert!(
                close33(&a, &axes(&mk["local_axes_global"]), 1e-8),
                "{name} axes {a:?}"
            );
        } else {
            // P2P markers have no published axes: default = body axes = identity.
            assert_eq!(a, sprung_model::rot::IDENTITY);
        }
    }
    for e in d["force_elements"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let mine = m
            .force_element(name)
            .unwrap_or_else(|| panic!("element {name} missing"));
        let markers = d["markers"].as_array().unwrap();
        let mname = |k: &str| {
            markers[e[k].as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        };
        assert_eq!(mine.marker_i(), mname("marker_i"), "{name}");
        assert_eq!(mine.marker_j(), mname("marker_j"), "{name}");
        match mine {
            ForceElement::Bushing(b) => {
                assert_eq!(b.stiffness, arr3(&e["stiffness_trans_N_per_m"]));
                assert_eq!(b.rot_damping, arr3(&e["damping_rot_Nms_per_rad"]));
                assert_eq!(
                    b.stiffness_curves.x.as_deref(),
                    e["nonlinear_trans_curves"]["x"].as_str()
                );
                // Both markers of a bushing coincide and have the element's axes.
                let mi = m.marker(&b.marker_i).unwrap();
                assert!(close3(
                    &m.marker_position_global(mi),
                    &arr3(&e["point_m"]),
                    1e-15
                ));
                assert!(close33(
                    &m.marker_axes_global(mi),
                    &axes(&e["local_axes_global"]),
                    1e-8
                ));
            }
            _ => {
                let l = m.design_length(mine).unwrap();
                let l_ref = e["L_design_m"].as_f64().unwrap();
                assert!((l - l_ref).abs() < 1e-6, "{name}: {l} vs {l_ref}");
                if let ForceElement::Stop(s) = mine {
                    let contact = if e["type"] == "p2p_stop_bump" {
                        l - s.clearance
                    } else {
                        l + s.clearance
                    };
                    assert!((contact - e["contact_length_m"].as_f64().unwrap()).abs() < 1e-6);
                }
            }
        }
    }
}

#[test]
fn double_wishbone_mirror_matches_reference() {
    check_axle("double_wishbone.json");
}

#[test]
fn multilink_mirror_matches_reference() {
    check_axle("multilink.json");
}
