//! Subsystem composition (`[[subsystems]]`, `crate::subsystem`): a model built from included
//! files equals the same model written out by hand (names, bodies, markers, frames, elements,
//! parameters, inputs, outputs: the resolved design geometry to round-off of the placement
//! rotation), includes of the reference axles keep their content, and bad includes (cycles,
//! missing files, problems in the included file, unknown attach bodies or parameters) are
//! located errors.

use sprung_model::rot::Mat3;
use sprung_model::{ForceElement, Model, load};
use sprung_test_support::{fixture_path, model_path};

fn load_ok(name: &str) -> Model {
    load(&fixture_path(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{what}: {a:?} != {b:?}");
    }
}

fn flat(m: &Mat3) -> Vec<f64> {
    m.iter().flatten().copied().collect()
}

/// The placement by 180 deg about z multiplies with sin(pi) = 1.2e-16: positions and axes agree
/// to a few ulps of their magnitude (< 2 m), 1e-12 leaves room for that and nothing more.
const TOL: f64 = 1e-12;

fn assert_same_model(a: &Model, b: &Model) {
    let names = |m: &Model| {
        let mut v: Vec<String> = m
            .bodies
            .iter()
            .map(|x| format!("body {}", x.name))
            .chain(m.markers.iter().map(|x| format!("marker {}", x.name)))
            .chain(m.curves.iter().map(|x| format!("curve {}", x.name)))
            .chain(m.force_elements.iter().map(|x| format!("fe {}", x.name())))
            .chain(m.inputs.iter().map(|x| format!("input {}", x.name)))
            .chain(m.outputs.iter().map(|x| format!("output {}", x.name)))
            .chain(m.parameters.iter().map(|x| format!("param {}", x.name)))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(a), names(b));
    for x in &a.bodies {
        let y = b.body(&x.name).unwrap();
        assert_eq!(x.mass, y.mass, "{}", x.name);
        close(&x.position, &y.position, TOL, &x.name);
        close(&flat(&x.rotation()), &flat(&y.rotation()), TOL, &x.name);
        close(&x.velocity, &y.velocity, TOL, &x.name);
        close(
            &flat(&x.inertia_tensor()),
            &flat(&y.inertia_tensor()),
            TOL,
            &x.name,
        );
    }
    for x in &a.markers {
        let y = b.marker(&x.name).unwrap();
        assert_eq!(x.body, y.body, "marker {}", x.name);
        close(
            &a.marker_position_global(x),
            &b.marker_position_global(y),
            TOL,
            &x.name,
        );
        close(
            &a.marker_position_body(x),
            &b.marker_position_body(y),
            TOL,
            &x.name,
        );
        close(
            &flat(&a.marker_axes_global(x)),
            &flat(&b.marker_axes_global(y)),
            TOL,
            &x.name,
        );
    }
    for x in &a.curves {
        assert_eq!(Some(x), b.curve(&x.name));
    }
    for x in &a.force_elements {
        let y = b.force_element(x.name()).unwrap();
        match (x, y) {
            (ForceElement::Bushing(p), ForceElement::Bushing(q)) => {
                assert_eq!(p.stiffness_curves, q.stiffness_curves);
                assert_eq!(p.stiffness, q.stiffness);
                assert_eq!((&p.marker_i, &p.marker_j), (&q.marker_i, &q.marker_j));
            }
            _ => assert_eq!(x, y),
        }
    }
    for x in &a.inputs {
        let y = b.input(&x.name).unwrap();
        assert_eq!((&x.marker, &x.signal), (&y.marker, &y.signal));
        close(&x.direction, &y.direction, TOL, &x.name);
    }
    for x in &a.outputs {
        assert_eq!(Some(x), b.output(&x.name));
    }
    for x in &a.parameters {
        let y = b.parameters.iter().find(|p| p.name == x.name).unwrap();
        assert_eq!((x.value, &x.targets), (y.value, &y.targets));
    }
}

#[test]
fn composed_model_equals_the_hand_written_one() {
    let composed = load_ok("subsystems/pair.toml");
    let by_hand = load_ok("subsystems/pair_by_hand.toml");
    assert!(composed.subsystems.is_empty());
    assert_same_model(&composed, &by_hand);
    assert_same_model(&by_hand, &composed);
    // The entry's parameter value acts: front springs 1.5 x 2e4, rear springs 2e4.
    let k = |m: &Model, n: &str| match m.force_element(n) {
        Some(ForceElement::Spring(s)) => s.stiffness,
        _ => None,
    };
    assert_eq!(k(&composed, "front.spring_R"), Some(3e4));
    assert_eq!(k(&composed, "rear.spring_L"), Some(2e4));
    // Mirrored items of the including file follow included L/R pairs.
    assert_eq!(composed.marker("lift_R").unwrap().body, "front.wheel_R");
    // The included parameters can be changed like the file's own.
    let m2 = composed
        .with_parameters(&[("rear.spring_scale", 2.0)])
        .unwrap();
    assert_eq!(k(&m2, "rear.spring_R"), Some(4e4));
    assert_eq!(k(&m2, "front.spring_R"), Some(3e4));
}

#[test]
fn an_included_axle_keeps_its_content() {
    let axle = load(&model_path("double_wishbone.toml")).unwrap();
    let dir = fixture_path("subsystems");
    let rel = pathdiff(&model_path("double_wishbone.toml"), &dir);
    let src = format!(
        "[model]\nname = \"a\"\nground = \"body\"\n\n[[subsystems]]\nname = \"front\"\nfile = \"{rel}\"\nposition = [1.4, 0.0, 0.3]\ninputs = \"keep\"\n"
    );
    let m = sprung_model::from_str_with_base(&src, sprung_model::Format::Toml, "inline.toml", &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.bodies.len(), axle.bodies.len());
    assert_eq!(m.force_elements.len(), axle.force_elements.len());
    assert_eq!(m.inputs.len(), axle.inputs.len());
    assert_eq!(m.outputs.len(), axle.outputs.len());
    assert_eq!(m.parameters.len(), axle.parameters.len());
    for b in &axle.bodies {
        let c = m.body(&format!("front.{}", b.name)).unwrap();
        assert_eq!(
            c.position,
            [b.position[0] + 1.4, b.position[1], b.position[2] + 0.3]
        );
    }
    for mk in &axle.markers {
        let c = m.marker(&format!("front.{}", mk.name)).unwrap();
        let want = if mk.body == "chassis" {
            "body".to_string()
        } else {
            format!("front.{}", mk.body)
        };
        assert_eq!(c.body, want);
    }
}

/// `to` relative to `from` (both absolute or both relative to the same folder).
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> String {
    let to = std::fs::canonicalize(to).unwrap();
    let from = std::fs::canonicalize(from).unwrap();
    let common = to
        .components()
        .zip(from.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from.components().count() - common;
    let mut s: Vec<String> = vec!["..".into(); ups];
    s.extend(
        to.components()
            .skip(common)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    s.join("/")
}

fn err_of(src: &str) -> String {
    let dir = fixture_path("subsystems");
    sprung_model::from_str_with_base(src, sprung_model::Format::Toml, "top.toml", &dir)
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_cycle_of_includes_is_an_error() {
    let e = load(&fixture_path("subsystems/cycle_a.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cycle_a.toml:6: subsystem 'b'"), "{e}");
    assert!(e.contains("includes itself"), "{e}");
    assert!(e.contains("cycle_a.toml -> "), "{e}");
}

#[test]
fn a_missing_file_is_an_error_at_the_entry() {
    let src =
        "[model]\nname = \"x\"\n\n[[subsystems]]\nname = \"front\"\nfile = \"no_such_axle.toml\"\n";
    let e = err_of(src);
    assert!(e.contains("top.toml:5: subsystem 'front'"), "{e}");
    assert!(e.contains("no_such_axle.toml"), "{e}");
}

#[test]
fn bad_entries_are_located_errors() {
    let base = "[model]\nname = \"x\"\n\n[[bodies]]\nname = \"chassis\"\nmass = 1.0\nposition = [0.0, 0.0, 0.0]\ninertia = { principal = [1.0, 1.0, 1.0] }\n\n[[subsystems]]\nname = \"front\"\nfile = \"corner.toml\"\n";
    // Unknown attach body.
    let e = err_of(&format!("{base}attach = {{ ground = \"chasis\" }}\n"));
    assert!(e.contains("top.toml:11: subsystem 'front'"), "{e}");
    assert!(e.contains("'chasis' is not a body"), "{e}");
    // Unknown parameter.
    let e = err_of(&format!("{base}parameters = {{ sprng_scale = 2.0 }}\n"));
    assert!(
        e.contains("'sprng_scale' is not a declared parameter"),
        "{e}"
    );
    assert!(e.contains("spring_scale"), "{e}");
    // A ground marker to re-attach that is not on the included ground.
    let e = err_of(&format!(
        "{base}attach = {{ markers = {{ \"hub_L.J\" = \"chassis\" }} }}\n"
    ));
    assert!(e.contains("'hub_L.J' is not a marker on the ground"), "{e}");
    // A name clash between an included and an own item is a validation problem at the entry.
    let clash = base.replace("name = \"chassis\"", "name = \"front.arm_L\"");
    let e = err_of(&clash);
    assert!(e.contains("front.arm_L"), "{e}");
    // Unknown key in the entry: located at the key.
    let e = err_of(&format!("{base}positon = [0.0, 0.0, 0.0]\n"));
    assert!(e.contains("top.toml:13"), "{e}");
    assert!(e.contains("unknown field `positon`"), "{e}");
}

#[test]
fn problems_in_the_included_file_name_its_line() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("subsystem_bad_include");
    std::fs::create_dir_all(&dir).unwrap();
    let corner = std::fs::read_to_string(fixture_path("subsystems/corner.toml")).unwrap();
    let bad = corner.replace("mass = 15.0", "mass = -15.0");
    std::fs::write(dir.join("bad_corner.toml"), bad).unwrap();
    let src =
        "[model]\nname = \"x\"\n\n[[subsystems]]\nname = \"front\"\nfile = \"bad_corner.toml\"\n";
    let e = sprung_model::from_str_with_base(src, sprung_model::Format::Toml, "top.toml", &dir)
        .unwrap_err()
        .to_string();
    assert!(e.contains("top.toml:5: subsystem 'front'"), "{e}");
    assert!(
        e.contains("bad_corner.toml:34: body 'wheel_L': mass = -15"),
        "{e}"
    );
}

/// `merge`: the corner's wheels (15 kg, turned 5° about z, principal (0.4, 0.7, 0.4) kg m²)
/// merged into their arms (2 kg, principal (0.01, 0.02, 0.03)) with the spin about the wheel's
/// y axis left to an element: mass and centre of mass are the sums; the inertia equals the
/// parallel-axis sum written out here with the wheel's transverse inertia diag(0.4, 0, 0.4) in
/// its own axes (the merge subtracts I_p a aᵀ from the full tensor instead), to round-off; the
/// wheel's markers sit on the arm at their placed design positions, the hub bushing between the
/// two is gone, the other items stay.
#[test]
fn merged_bodies_combine_mass_and_inertia_and_keep_the_markers() {
    use sprung_model::rot;
    let src = "[model]\nname = \"x\"\n\n[[subsystems]]\nname = \"front\"\nfile = \"corner.toml\"\nposition = [1.0, 0.0, 0.2]\ninputs = \"keep\"\nmerge = [{ body = \"wheel_L\", into = \"arm_L\", spin_axis = \"y\" }, { body = \"wheel_R\", into = \"arm_R\", spin_axis = \"y\" }]\n";
    let dir = fixture_path("subsystems");
    let m = sprung_model::from_str_with_base(src, sprung_model::Format::Toml, "top.toml", &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let plain = load_ok("subsystems/corner.toml");
    assert_eq!(m.bodies.len(), plain.bodies.len() - 2);
    assert!(m.body("front.wheel_L").is_none());
    assert!(m.force_elements.iter().all(|e| !e.name().contains("hub_")));
    assert_eq!(m.force_elements.len(), plain.force_elements.len() - 2);
    assert_eq!(m.inputs.len(), plain.inputs.len());
    assert_eq!(m.outputs.len(), plain.outputs.len());
    // Hand sums (left side, the corner's own frame, then placed by (1, 0, 0.2)).
    let (ma, xa) = (2.0, [0.1, 0.4, 0.0]);
    let (mw, xw) = (15.0, [0.0, 0.7, 0.0]);
    let mass = ma + mw;
    let c: [f64; 3] = std::array::from_fn(|i| (ma * xa[i] + mw * xw[i]) / mass);
    let rw = rot::euler_zyx_deg(&[5.0, 0.0, 0.0]);
    let iw_t = [[0.4, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.4]];
    let iw = rot::mul(&rw, &rot::mul(&iw_t, &rot::transpose(&rw)));
    let ia = [[0.01, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.03]];
    let mut want = [[0.0; 3]; 3];
    for (mi, xi, ii) in [(ma, xa, ia), (mw, xw, iw)] {
        let d: [f64; 3] = std::array::from_fn(|k| xi[k] - c[k]);
        for r in 0..3 {
            for s in 0..3 {
                let e = if r == s { rot::dot(&d, &d) } else { 0.0 };
                want[r][s] += ii[r][s] + mi * (e - d[r] * d[s]);
            }
        }
    }
    let arm = m.body("front.arm_L").unwrap();
    assert_eq!(arm.mass, mass);
    close(
        &arm.position,
        &[c[0] + 1.0, c[1], c[2] + 0.2],
        TOL,
        "centre of mass",
    );
    close(&flat(&arm.inertia_tensor()), &flat(&want), TOL, "inertia");
    let wc = m.marker("front.wc_L").unwrap();
    assert_eq!(wc.body, "front.arm_L");
    close(&m.marker_position_global(wc), &[1.0, 0.7, 0.2], TOL, "wc_L");
    close(
        &flat(&m.marker_axes_global(wc)),
        &flat(&rw),
        TOL,
        "wc_L axes (the wheel's)",
    );
    let pivot = m.marker("front.arm_pivot_L.I").unwrap();
    close(
        &m.marker_position_global(pivot),
        &[1.1, 0.25, 0.2],
        TOL,
        "pivot",
    );
    // The mirrored side merged alike.
    let arm_r = m.body("front.arm_R").unwrap();
    close(
        &arm_r.position,
        &[c[0] + 1.0, -c[1], c[2] + 0.2],
        TOL,
        "arm_R",
    );
}

#[test]
fn bad_merges_and_connections_are_located_errors() {
    let base =
        "[model]\nname = \"x\"\n\n[[subsystems]]\nname = \"front\"\nfile = \"corner.toml\"\n";
    let e = err_of(&format!(
        "{base}merge = [{{ body = \"whel_L\", into = \"arm_L\" }}]\n"
    ));
    assert!(e.contains("top.toml:5: subsystem 'front'"), "{e}");
    assert!(
        e.contains("'whel_L' is not a body of the included file"),
        "{e}"
    );
    let e = err_of(&format!(
        "{base}merge = [{{ body = \"wheel_L\", into = \"wheel_L\" }}]\n"
    ));
    assert!(e.contains("merged into itself"), "{e}");
    let e = err_of(&format!(
        "{base}merge = [{{ body = \"wheel_L\", into = \"arm_L\" }}, {{ body = \"arm_L\", into = \"arm_R\" }}]\n"
    ));
    assert!(e.contains("is merged into another body itself"), "{e}");
    // An output that reads the merged body is an error, not a silent change of meaning.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("subsystem_merge_output");
    std::fs::create_dir_all(&dir).unwrap();
    let corner = std::fs::read_to_string(fixture_path("subsystems/corner.toml")).unwrap();
    let extra = "\n[[outputs]]\nname = \"wheel_x\"\nquantity = \"position\"\nbody = \"wheel_L\"\ncomponent = \"x\"\n";
    std::fs::write(dir.join("corner.toml"), corner + extra).unwrap();
    let src = format!("{base}merge = [{{ body = \"wheel_L\", into = \"arm_L\" }}]\n");
    let e = sprung_model::from_str_with_base(&src, sprung_model::Format::Toml, "top.toml", &dir)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the output 'wheel_x' reads 'wheel_L'"), "{e}");
    // connect: an element or slot that is not there.
    let tire = pathdiff(
        &model_path("tires/car_tmeasy_wheel.toml"),
        &fixture_path("subsystems"),
    );
    let e = err_of(&format!(
        "[model]\nname = \"x\"\n\n[[subsystems]]\nname = \"t\"\nfile = \"{tire}\"\nconnect = {{ \"tyre.drive_torque\" = \"ctrl.torque\" }}\n"
    ));
    assert!(
        e.contains("'tyre.drive_torque' is not '<element>.<slot>'"),
        "{e}"
    );
    assert!(e.contains("elements there: tire"), "{e}");
}

/// `connect` feeds an included element's slot from the including model's source by its own
/// (unprefixed) name; the element's other slots keep their prefixed mapping.
#[test]
fn connected_slots_name_the_including_models_source() {
    let dir = fixture_path("subsystems");
    let tire = pathdiff(&model_path("tires/car_tmeasy_wheel.toml"), &dir);
    let src = format!(
        "[model]\nname = \"x\"\n\n[[bodies]]\nname = \"hub\"\nmass = 10.0\nposition = [0.0, 0.0, 0.3]\ninertia = {{ principal = [1.0, 1.0, 1.0] }}\n\n[[inputs]]\nname = \"brake\"\nkind = \"signal\"\nsignal = {{ type = \"constant\", value = 0.0 }}\n\n[[subsystems]]\nname = \"t\"\nfile = \"{tire}\"\nposition = [0.0, 0.0, 0.3]\nattach = {{ ground = \"hub\" }}\nconnect = {{ \"tire.brake_torque\" = \"brake\" }}\n"
    );
    let m = sprung_model::from_str_with_base(&src, sprung_model::Format::Toml, "top.toml", &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    let e = m.elements.iter().find(|e| e.name == "t.tire").unwrap();
    assert_eq!(
        e.inputs.get("brake_torque").map(String::as_str),
        Some("brake")
    );
    assert_eq!(e.inputs.len(), 1);
    assert_eq!(m.marker("t.centre").unwrap().body, "hub");
}
