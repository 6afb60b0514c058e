//! Static equilibrium of models with ideal and tabulated joints (`sprung_mbs::equilibrium`,
//! "Models with ideal joints"; `docs/joints.md`) against independent truth: a mass on a spring
//! on a skewed prismatic joint (linear: the exact static deflection), a pendulum held by a
//! spring (the stationary point of the potential energy, found by bisection), a chain on a
//! free, bushing-mounted carrier (revolute arm, prismatic slider: the end of a long damped run),
//! the tabulated example against the same mechanism with an ideal revolute joint (a second
//! implementation of the pose map), and the error of an unrestrained joint coordinate.

use std::path::Path;
use std::sync::Arc;

use sprung_mbs::equilibrium::{
    self, EquilibriumError, EquilibriumOptions, EquilibriumProgress, EquilibriumSolver,
};
use sprung_mbs::simulate::{RunSettings, run};
use sprung_mbs::{CompiledModel, MbsSystem, compile};
use sprung_solve::mech::adaptive::Control;

fn from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

/// The equilibrium from the model's initial state with both linear solvers; they must agree
/// (the same Newton iterates up to the LU's rounding).
fn statics(model: &Arc<CompiledModel>) -> equilibrium::Equilibrium {
    let (r0, _) = model.design_state();
    let mut out = Vec::new();
    for solver in [EquilibriumSolver::Dense, EquilibriumSolver::BlockSparse] {
        let mut sys = MbsSystem::new(model.clone());
        let opts = EquilibriumOptions {
            solver,
            ..Default::default()
        };
        let mut seen = 0;
        let eq = equilibrium::solve_observed(
            &mut sys,
            0.0,
            &r0,
            &opts,
            &mut |_: &EquilibriumProgress| seen += 1,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen, eq.iterations, "one progress report per iteration");
        println!(
            "{solver:?}: {} iterations, residual {:.2e}, history {:?}",
            eq.iterations, eq.relative_residual, eq.history
        );
        out.push(eq);
    }
    let d = out[0]
        .r
        .iter()
        .zip(&out[1].r)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    // Both stop at the tolerance; their last iterates differ by LU rounding only.
    assert!(d < 1e-12, "dense vs block-sparse {d:e}");
    out.pop().unwrap()
}

/// A mass on a linear spring along a skewed prismatic axis a = (1, 2, 2)/3, gravity −z: the
/// equilibrium coordinate is z_s = −m g a_z / k exactly (the spring stays on the axis). Newton
/// on a linear problem: one iteration; measured |z − z_s| at round-off (bound 1e-12 m).
#[test]
fn a_mass_on_a_prismatic_spring_settles_at_the_static_deflection() {
    let model = from_toml(
        r#"
[model]
name = "prismatic_spring"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "mass"
mass = 2.5
position = [0.2, 0.3, 0.4]
euler_zyx_deg = [10.0, 20.0, 30.0]
inertia = { principal = [0.01, 0.02, 0.03] }
joint = { type = "prismatic", parent = "ground", axis = [1.0, 2.0, 2.0], z0 = 0.02 }

[[markers]]
name = "anchor"
body = "ground"
global_position = [-0.13333333333333333, -0.36666666666666667, -0.26666666666666667]

[[markers]]
name = "mass.point"
body = "mass"
global_position = [0.2, 0.3, 0.4]

[[force_elements]]
type = "spring"
name = "spring"
marker_i = "mass.point"
marker_j = "anchor"
stiffness = 1000.0
free_length = 1.0
"#,
    );
    let eq = statics(&model);
    let z_s = -2.5 * 9.81 * (2.0 / 3.0) / 1000.0;
    let err = (eq.r[0] - z_s).abs();
    println!("z = {:.15} m vs z_s = {z_s:.15}: {err:.2e}", eq.r[0]);
    assert!(err < 1e-12, "{err:e}");
    // The padding slots of the jointed body stay 0.
    assert!(eq.r[1..7].iter().all(|x| *x == 0.0), "{:?}", &eq.r[..7]);
}

/// A bob on a revolute joint about +y through the origin, its centre of mass at (l, 0, 0) in
/// the design pose, held up by a spring from the centre of mass to the anchor (l, 0, H). Turned
/// by θ the centre is at (l cos θ, 0, −l sin θ); the potential V(θ) = −m g l sin θ + ½ k (L −
/// L₀)², L² = (l − l cos θ)² + (H + l sin θ)², is stationary at the equilibrium: V'(θ) = 0
/// found by bisection (to 1e-15 rad), independent of the joint projection. The residual
/// tolerance 1e-10 of the weight (19.6 N) over the stiffness k l² ≈ 128 N m/rad allows 1.5e-11
/// rad; bound 1e-9 rad.
#[test]
fn a_pendulum_held_by_a_spring_rests_where_its_potential_is_stationary() {
    let (m, g, l, h, k, l0) = (2.0, 9.81, 0.8, 1.0, 200.0, 0.7);
    let model = from_toml(&format!(
        r#"
[model]
name = "spring_pendulum"
gravity = [0.0, 0.0, -{g}]

[[bodies]]
name = "bob"
mass = {m}
position = [{l}, 0.0, 0.0]
inertia = {{ principal = [0.02, 0.03, 0.04] }}
joint = {{ type = "revolute", parent = "ground", axis = [0.0, 1.0, 0.0], point = [0.0, 0.0, 0.0] }}

[[markers]]
name = "bob.c"
body = "bob"
global_position = [{l}, 0.0, 0.0]

[[markers]]
name = "anchor"
body = "ground"
global_position = [{l}, 0.0, {h}]

[[force_elements]]
type = "spring"
name = "spring"
marker_i = "bob.c"
marker_j = "anchor"
stiffness = {k}
free_length = {l0}
"#
    ));
    let dv = |th: f64| {
        let (s, c) = th.sin_cos();
        let (dx, dz) = (l - l * c, h + l * s);
        let len = (dx * dx + dz * dz).sqrt();
        let dlen = (dx * l * s + dz * l * c) / len;
        -m * g * l * c + k * (len - l0) * dlen
    };
    // V' changes sign from − to + (a minimum: the stable rest) between −0.5 and −0.2 rad (the
    // spring's pull of 60 N at θ = 0 exceeds the weight: the bob rises).
    let (mut a, mut b) = (-0.5f64, -0.2f64);
    assert!(dv(a) < 0.0 && dv(b) > 0.0);
    while b - a > 1e-15 {
        let c = 0.5 * (a + b);
        if dv(c) < 0.0 { a = c } else { b = c }
    }
    let exact = 0.5 * (a + b);
    let eq = statics(&model);
    let err = (eq.r[0] - exact).abs();
    println!("θ = {:.15} rad vs {exact:.15}: {err:.2e}", eq.r[0]);
    assert!(exact.abs() > 0.1, "a non-trivial equilibrium: {exact}");
    assert!(err < 1e-9, "{err:e}");
}

/// A chain on a free carrier: carrier (free, on a damped bushing to the ground) → arm
/// (revolute, skewed axis) → slider (prismatic), a spring and a damper on the slider, gravity.
const CHAIN: &str = r#"
[model]
name = "chain"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "carrier"
mass = 20.0
position = [0.0, 0.0, 0.5]
inertia = { principal = [0.5, 0.7, 0.9] }

[[bodies]]
name = "arm"
mass = 3.0
position = [0.3, 0.1, 0.4]
euler_zyx_deg = [15.0, -10.0, 5.0]
inertia = { principal = [0.02, 0.05, 0.04] }
joint = { type = "revolute", parent = "carrier", axis = [0.2, 1.0, 0.1], point = [0.1, 0.05, 0.45], z0 = 0.1 }

[[bodies]]
name = "slider"
mass = 1.5
position = [0.5, 0.15, 0.3]
inertia = { principal = [0.004, 0.003, 0.005] }
joint = { type = "prismatic", parent = "arm", axis = [1.0, 0.1, -0.3], z0 = 0.02 }

[[markers]]
name = "g.c"
body = "ground"
global_position = [0.0, 0.0, 0.5]

[[markers]]
name = "carrier.c"
body = "carrier"
global_position = [0.0, 0.0, 0.5]

[[markers]]
name = "carrier.d"
body = "carrier"
global_position = [0.4, 0.0, 0.5]

[[markers]]
name = "arm.d"
body = "arm"
global_position = [0.4, 0.1, 0.35]

[[markers]]
name = "slider.s"
body = "slider"
global_position = [0.55, 0.15, 0.3]

[[markers]]
name = "g.s"
body = "ground"
global_position = [0.9, 0.4, 0.0]

[[force_elements]]
type = "bushing"
name = "mount"
marker_i = "carrier.c"
marker_j = "g.c"
stiffness = [2e4, 3e4, 4e4]
rot_stiffness = [2e3, 3e3, 4e3]
damping = [400.0, 500.0, 600.0]
rot_damping = [20.0, 25.0, 30.0]

[[force_elements]]
type = "spring"
name = "arm_spring"
marker_i = "arm.d"
marker_j = "carrier.d"
stiffness = 3000.0

[[force_elements]]
type = "damper"
name = "arm_damper"
marker_i = "arm.d"
marker_j = "carrier.d"
damping = 60.0

[[force_elements]]
type = "spring"
name = "slider_spring"
marker_i = "slider.s"
marker_j = "g.s"
stiffness = 800.0

[[force_elements]]
type = "damper"
name = "slider_damper"
marker_i = "slider.s"
marker_j = "g.s"
damping = 30.0
"#;

/// The chain's equilibrium against the end of a damped run from the initial state (LSRT2 1 ms,
/// 12 s; the slowest mode decays at ≈ 2.5 1/s, so the start's offsets of ≈ 0.1 are below 1e-11
/// by then): every coordinate (carrier position m, quaternion, joint angle rad, slider m)
/// agrees to 1e-9 (measured below), velocities at the end ≤ 1e-9. Exercises a free root with
/// jointed children (its six rows projected, the tree's total wrench in the residual).
#[test]
fn a_chain_on_a_free_carrier_rests_where_a_long_damped_run_ends() {
    let model = from_toml(CHAIN);
    let eq = statics(&model);
    let mut sys = MbsSystem::new(model.clone());
    let (mut r, mut v) = model.design_state();
    let s = RunSettings {
        breakpoints: sprung_solve::mech::Breakpoints::Ignore,
        adaptive: Some(false),
        output_interval: 1.0,
        ..RunSettings::fixed_step("lsrt2", 1e-3, 12.0)
    };
    run(&mut sys, &s, &mut r, &mut v, &mut |_, _, _| {
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let vmax = v.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let (r0, _) = model.design_state();
    let moved = r0
        .iter()
        .zip(&eq.r)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    // The quaternion's sign is fixed by continuity from the same start in both.
    let d = r
        .iter()
        .zip(&eq.r)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!(
        "run end vs statics {d:.2e} (moved {moved:.3} from the start), |v| at the end {vmax:.2e}"
    );
    assert!(moved > 0.05, "a non-trivial equilibrium: {moved}");
    assert!(vmax < 1e-9, "{vmax:e}");
    assert!(d < 1e-9, "{d:e}");
}

/// The tabulated example (`models/joint_tabulated.toml`: slider on a prismatic joint and a
/// spring, the arm on a 2D table of the slider's travel and its own angle, a massless follower
/// link) rests where the same mechanism with an ideal revolute arm rests: the table's spline
/// (h = 0.1 rad) interpolates the revolute pose map with a slope error ≈ h³/24 × 0.6 m ≈ 2.5e-5
/// m/rad; the generalised gravity force m g ∂z/∂θ is off by as much relative to its stiffness
/// m g ∂²z/∂θ² ≈ m g × 0.6 m, which moves the hanging angle by up to ≈ 4e-5 rad. Measured 7.9e-6
/// rad; bound 2e-5.
#[test]
fn the_tabulated_example_rests_where_the_ideal_chain_rests() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/joint_tabulated.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let tab = Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")));
    let link = "[[bodies]]\nname = \"link\"\nmass = 0.0\nposition = [0.1, 0.0, -0.6]\ninertia = { principal = [0.0, 0.0, 0.0] }\njoint = { type = \"tabulated\", parent = \"ground\", table = \"tables/joint_tabulated_arm.toml\", coordinates = [\"slider\", \"arm\"] }\n";
    let arm = r#"joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", coordinates = ["slider", "self"], z0 = 0.4 }"#;
    assert!(text.contains(link) && text.contains(arm));
    let chain_src = text
        .replace(link, "")
        .replace(
            arm,
            r#"joint = { type = "revolute", parent = "slider", axis = [0.0, 1.0, 0.0], point = [0.0, 0.0, 0.0], z0 = 0.4 }"#,
        )
        .replace("body = \"link\"", "body = \"arm\"");
    let chain = from_toml(&chain_src);
    let a = statics(&chain);
    let b = statics(&tab);
    let (slider, arm) = (0usize, 7usize);
    let d = (a.r[slider] - b.r[slider])
        .abs()
        .max((a.r[arm] - b.r[arm]).abs());
    println!(
        "chain: slider {:.9} m, arm {:.9} rad; table: {:.9}, {:.9}: {d:.2e}",
        a.r[slider], a.r[arm], b.r[slider], b.r[arm]
    );
    assert!((a.r[arm] - 0.4).abs() > 0.1, "the arm swings down to rest");
    assert!(d < 2e-5, "{d:e}");
}

/// A loaded joint coordinate that nothing restrains (a prismatic joint along gravity without a
/// spring) is reported as singular, naming the body and its joint coordinate.
#[test]
fn an_unrestrained_joint_coordinate_is_named() {
    let model = from_toml(
        r#"
[model]
name = "falling"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "block"
mass = 1.0
position = [0.0, 0.0, 0.0]
inertia = { principal = [0.01, 0.01, 0.01] }
joint = { type = "prismatic", parent = "ground", axis = [0.0, 0.6, 0.8] }
"#,
    );
    let (r0, _) = model.design_state();
    let mut sys = MbsSystem::new(model.clone());
    let e = equilibrium::solve(&mut sys, 0.0, &r0, EquilibriumOptions::default()).unwrap_err();
    let msg = e.to_string();
    println!("{msg}");
    assert!(matches!(e, EquilibriumError::Singular { .. }), "{msg}");
    assert!(
        msg.contains("body 'block', its joint coordinate") && msg.contains("add a spring"),
        "{msg}"
    );
}
