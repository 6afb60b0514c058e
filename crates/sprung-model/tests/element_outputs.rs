//! `frame = "global"` and `on = "body_j"` on element force/torque outputs are accepted, and rejected
//! (with file, line and output name) where they make no sense.

const BASE: &str = r#"
[model]
name = "m"
[[bodies]]
name = "b"
mass = 1.0
position = [0.0, 0.0, 0.0]
inertia = { principal = [1.0, 1.0, 1.0] }
[[markers]]
name = "mi"
body = "b"
position = [0.0, 0.0, 0.0]
[[markers]]
name = "mj"
body = "ground"
global_position = [0.0, 0.0, 1.0]
[[force_elements]]
type = "spring"
name = "s"
marker_i = "mi"
marker_j = "mj"
stiffness = 10.0
"#;

fn with_output(out: &str) -> Result<sprung_model::Model, sprung_model::ModelError> {
    sprung_model::from_toml_str(&format!("{BASE}[[outputs]]\n{out}"), "m.toml")
}

#[test]
fn global_force_on_body_j_is_accepted_for_point_to_point_elements() {
    let m = with_output("name = \"fz\"\nquantity = \"force\"\nelement = \"s\"\ncomponent = \"z\"\nframe = \"global\"\non = \"body_j\"\n").unwrap();
    assert_eq!(m.outputs[0].on, Some(sprung_model::ElementSide::BodyJ));
    // the local P2P force stays a scalar: a component is an error there
    let e = with_output("name = \"f\"\nquantity = \"force\"\nelement = \"s\"\ncomponent = \"z\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.toml") && e.contains("'f'") && e.contains("component"),
        "{e}"
    );
}

#[test]
fn on_is_rejected_for_non_load_quantities() {
    let e =
        with_output("name = \"d\"\nquantity = \"deflection\"\nelement = \"s\"\non = \"body_j\"\n")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("m.toml:") && e.contains("'d'") && e.contains("`on`"),
        "{e}"
    );
}
