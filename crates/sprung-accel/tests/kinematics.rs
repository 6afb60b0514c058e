//! The generated tree kinematics (`codegen::kinematics`) against the generic code
//! ([`ReferenceKernel`]): on the example models with joints and on a deep chain (revolute on
//! revolute on a rotated free root, then a prismatic and a fixed joint, body axes off their
//! parents', a non-unit quaternion) beside a tree on the ground, the frames, J̇_b ż, the massless
//! leaves' columns and J_b are the generic code's to the bit (the generator folds only exact
//! zeros and ones and keeps the generic order of operations; `==` leaves the sign of a zero
//! open), and the generated function is straight-line code up to the mass matrix.

use std::sync::Arc;

use sprung_accel::{AccelOptions, accelerate};
use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::{FlatLayout, ReferenceKernel, TreeKernel};

mod common;
use common::{from_toml, load, moving_state, options};

/// A free carrier with a three-joint chain and a fixed weight, and a two-link pendulum on the
/// ground (assumed test values, no vehicle data).
const DEEP: &str = r#"
[model]
name = "deep_chain"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "carrier"
mass = 20.0
position = [0.0, 0.0, 0.5]
euler_zyx_deg = [20.0, 5.0, -3.0]
inertia = { principal = [0.5, 0.7, 0.9] }

[[bodies]]
name = "arm"
mass = 3.0
position = [0.3, 0.1, 0.4]
euler_zyx_deg = [15.0, -10.0, 5.0]
inertia = { principal = [0.02, 0.05, 0.04] }
joint = { type = "revolute", parent = "carrier", axis = [0.2, 1.0, 0.1], point = [0.1, 0.05, 0.45], z0 = 0.1 }

[[bodies]]
name = "forearm"
mass = 1.0
position = [0.6, 0.1, 0.3]
inertia = { principal = [0.01, 0.02, 0.015] }
joint = { type = "revolute", parent = "arm", axis = [0.0, 0.0, 1.0], point = [0.45, 0.1, 0.35], z0 = -0.2 }

[[bodies]]
name = "slider"
mass = 1.5
position = [0.8, 0.15, 0.3]
euler_zyx_deg = [0.0, 30.0, 0.0]
inertia = { principal = [0.004, 0.003, 0.005] }
joint = { type = "prismatic", parent = "forearm", axis = [1.0, 0.1, -0.3], z0 = 0.02 }

[[bodies]]
name = "weight"
mass = 0.5
position = [0.9, 0.15, 0.2]
inertia = { principal = [0.001, 0.001, 0.001] }
joint = { type = "fixed", parent = "slider" }

[[bodies]]
name = "upper"
mass = 2.0
position = [2.0, 0.0, -0.5]
inertia = { principal = [0.02, 0.02, 0.01] }
joint = { type = "revolute", parent = "ground", axis = [0.0, 1.0, 0.0], point = [2.0, 0.0, 0.0], z0 = 0.3 }

[[bodies]]
name = "lower"
mass = 1.0
position = [2.0, 0.0, -1.5]
inertia = { principal = [0.01, 0.01, 0.005] }
joint = { type = "revolute", parent = "upper", axis = [0.3, 1.0, 0.2], point = [2.0, 0.0, -1.0], z0 = -0.4 }
"#;

/// Four arms on one slider, each with a massless follower link, on the tabulated joint of
/// `models/joint_tabulated.toml` (its table; assumed test values): the arms and the links are
/// isomorphic bodies, written in lanes (`codegen::kinematics`'s lanes: four lanes with AVX,
/// else pairs), at different swing angles so that the lanes hold different values.
const MIRRORED: &str = r#"
[model]
name = "mirrored_arms"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "slider"
mass = 1.5
position = [0.0, 0.0, 0.0]
inertia = { principal = [0.002, 0.002, 0.002] }
joint = { type = "prismatic", parent = "ground", axis = [1.0, 0.0, 0.0], z0 = 0.05 }

[[bodies]]
name = "arm_FL"
mass = 2.0
position = [0.05, 0.0, -0.4]
inertia = { principal = [0.03, 0.05, 0.03] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "arm", coordinates = ["slider", "self"], z0 = 0.4 }

[[bodies]]
name = "link_FL"
mass = 0.0
position = [0.1, 0.0, -0.6]
inertia = { principal = [0.0, 0.0, 0.0] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "link", coordinates = ["slider", "arm_FL"] }

[[bodies]]
name = "arm_FR"
mass = 2.5
position = [0.05, 0.0, -0.4]
inertia = { principal = [0.04, 0.06, 0.035] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "arm", coordinates = ["slider", "self"], z0 = -0.3 }

[[bodies]]
name = "link_FR"
mass = 0.0
position = [0.1, 0.0, -0.6]
inertia = { principal = [0.0, 0.0, 0.0] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "link", coordinates = ["slider", "arm_FR"] }

[[bodies]]
name = "arm_RL"
mass = 1.5
position = [0.05, 0.0, -0.4]
inertia = { principal = [0.02, 0.04, 0.02] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "arm", coordinates = ["slider", "self"], z0 = 0.2 }

[[bodies]]
name = "link_RL"
mass = 0.0
position = [0.1, 0.0, -0.6]
inertia = { principal = [0.0, 0.0, 0.0] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "link", coordinates = ["slider", "arm_RL"] }

[[bodies]]
name = "arm_RR"
mass = 1.8
position = [0.05, 0.0, -0.4]
inertia = { principal = [0.025, 0.045, 0.03] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "arm", coordinates = ["slider", "self"], z0 = -0.1 }

[[bodies]]
name = "link_RR"
mass = 0.0
position = [0.1, 0.0, -0.6]
inertia = { principal = [0.0, 0.0, 0.0] }
joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", entry = "link", coordinates = ["slider", "arm_RR"] }
"#;

fn mirrored() -> Arc<CompiledModel> {
    // (Named as a file of models/, so that the table's path resolves there.)
    from_toml(
        MIRRORED,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../models/mirrored_arms.toml"
        ),
    )
}

fn deep() -> Arc<CompiledModel> {
    from_toml(DEEP, "deep_chain.toml")
}

/// Every jointed body off its design pose and moving, the free bodies moving and turned
/// (a quaternion off unit length).
fn turned_state(model: &CompiledModel, s: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut r, v) = moving_state(model, s);
    for (b, d) in model.joints.defs.iter().enumerate() {
        if d.is_none() {
            r[7 * b + 4] += 0.03 * s;
            r[7 * b + 6] -= 0.02;
        }
    }
    (r, v)
}

fn check(model: &Arc<CompiledModel>, opts: &AccelOptions) {
    let (kernel, built) = accelerate(model, opts).unwrap_or_else(|e| panic!("{e}"));
    let source = std::fs::read_to_string(&built.source).expect("the source");
    let reference = ReferenceKernel::new(model.clone());
    for (t, tree) in model.joints.trees.iter().enumerate() {
        // Straight-line code up to the mass matrix.
        let f = source
            .split(&format!("fn tree{t}_kinematics("))
            .nth(1)
            .expect("the function");
        let kin = f.split("// M_b J_b").next().expect("its kinematics");
        assert!(
            !kin.contains("for ") && !kin.contains("while ") && !kin.contains("loop "),
            "{}: tree {t}'s kinematics loop",
            model.name
        );
        let l = FlatLayout::of(tree);
        for s in [1.0, -0.7, 2.0, 25.0] {
            let (r, v) = turned_state(model, s);
            let mut want = l.initial(tree);
            reference.kinematics(t, &r, &v, &mut want).expect("regular");
            let mut got = l.initial(tree);
            if let Some(&g0) = l.gev.first() {
                got[g0..].copy_from_slice(&want[g0..]);
            }
            kernel.kinematics(t, &r, &v, &mut got).expect("regular");
            for (i, (a, b)) in got[..l.mj].iter().zip(&want[..l.mj]).enumerate() {
                assert!(
                    a == b,
                    "{} tree {t} at {s}: entry {i} of the kinematics {a:e} vs {b:e} (layout {l:?})",
                    model.name
                );
            }
        }
    }
}

#[test]
fn the_generated_kinematics_are_the_generic_ones_to_the_bit() {
    for name in [
        "joint_pendulum.toml",
        "joint_slider.toml",
        "joint_tabulated.toml",
    ] {
        check(&load(name), &options());
    }
    let model = deep();
    assert_eq!(model.joints.trees.len(), 2);
    assert_eq!(model.joints.trees[0].bodies.len(), 5);
    check(&model, &options());
}

/// Isomorphic bodies in lanes: the arms and the links are fused (four lanes with AVX, else
/// pairs) and give the generic code's bits lane by lane, in the plugin for this machine's CPU
/// and in the baseline-CPU one.
#[test]
fn isomorphic_bodies_in_lanes_are_the_generic_ones_to_the_bit() {
    let model = mirrored();
    let (_, built) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
    let source = std::fs::read_to_string(&built.source).expect("the source");
    for lanes in [
        "// 4 lanes: 'arm_FL', 'arm_FR', 'arm_RL', 'arm_RR'",
        "// 2 lanes: 'arm_FL', 'arm_FR'",
        "// 2 lanes: 'arm_RL', 'arm_RR'",
        "// 4 lanes: 'link_FL', 'link_FR', 'link_RL', 'link_RR'",
    ] {
        assert!(source.contains(lanes), "{lanes}");
    }
    check(&model, &options());
    let baseline = AccelOptions {
        native: false,
        ..options()
    };
    check(&model, &baseline);
}
