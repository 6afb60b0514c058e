//! The tabulated joint from the command line (`docs/joints.md`, "Tabulated joints"): `sprung
//! check` lists the tabulated joint, its input coordinate and the massless follower and counts
//! the DOF; `sprung run` runs the example with LSRT2 and explicit Euler, and warns when a
//! coordinate leaves its table's grid.

mod common;

use std::path::Path;

use common::{root, sprung_output as sprung, text};

#[test]
fn check_lists_tabulated_joints_followers_and_input_coordinates() {
    let o = sprung(&["check", "models/joint_tabulated.toml"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("DOF:             2 (= 6 x 0 free bodies + 2 joint coordinates"),
        "{t}"
    );
    assert!(t.contains("followers: 1"), "{t}");
    assert!(
        t.contains(
            "tabulated on 'ground' (own coordinate; coordinates: input 'slider', self), z0 = 0.4"
        ),
        "{t}"
    );
    assert!(
        t.contains(
            "tabulated on 'ground' (massless follower; coordinates: input 'slider', input 'arm')"
        ),
        "{t}"
    );
}

#[test]
fn the_example_runs_and_a_coordinate_leaving_its_table_is_reported() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tabulated_cli");
    let _ = std::fs::remove_dir_all(&dir);
    for solver in ["lsrt2", "ode1"] {
        let out = dir.join(solver);
        let o = sprung(&[
            "run",
            "models/joint_tabulated.toml",
            "--solver",
            solver,
            "--step",
            "1e-3",
            "--t-end",
            "0.5",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        let t = text(&o);
        assert!(o.status.success(), "{solver}: {t}");
        assert!(!t.contains("left the table's range"), "{solver}: {t}");
    }
    // Started at 20 rad/s the arm swings beyond the table's ±1 rad: a warning names the body,
    // the coordinate and the range, and the run completes on the linear extension.
    let table = root().join("models/tables/joint_tabulated_arm.toml");
    let src = std::fs::read_to_string(root().join("models/joint_tabulated.toml"))
        .unwrap()
        .replace(
            "tables/joint_tabulated_arm.toml",
            table.canonicalize().unwrap().to_str().unwrap(),
        )
        .replace("z0 = 0.4 }", "z0 = 0.4, zd0 = 20.0 }");
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("fast_swing.toml");
    std::fs::write(&model, src).unwrap();
    let o = sprung(&[
        "run",
        model.to_str().unwrap(),
        "--t-end",
        "0.5",
        "--out",
        dir.join("fast").to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(
            "warning: body 'arm': its own coordinate (table axis 2) left the table's range [-1, 1]"
        ),
        "{t}"
    );
}
