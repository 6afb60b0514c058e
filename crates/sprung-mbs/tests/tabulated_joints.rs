//! Tabulated joints (`docs/joints.md`, "Tabulated joints"; document 004 sec. 2.2: a body's pose
//! relative to its parent as a function of independent coordinates) against independent
//! truth: tables generated here from the revolute joint's pose map (the ideal joint is the
//! reference), a 2D table with the slider's coordinate as input coordinate against the ideal
//! chain, followers against a lumped body and a massless follower's spring against the same
//! spring on the driving body, energy conservation, the projected linearisation against finite
//! differences, and the located model errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{Matrix3, Rotation3, Unit, Vector3};
use sprung_mbs::simulate::{LinearSolverKind, RunSettings, run};
use sprung_mbs::{CompiledModel, MbsSystem, compile};
use sprung_model::{KinematicTable, TableAxis, TableBody};
use sprung_solve::mech::adaptive::Control;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::{tangent_columns, worst_mechanical_jacobian_error_with_steps};

fn from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

fn settings(method: &str, step: f64, t_end: f64) -> RunSettings {
    RunSettings {
        breakpoints: sprung_solve::mech::Breakpoints::Ignore,
        adaptive: Some(false),
        ..RunSettings::fixed_step(method, step, t_end)
    }
}

/// Runs `model` with `s`, recording (t, r, v) at every output.
fn record(model: &Arc<CompiledModel>, s: &RunSettings) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let mut sys = MbsSystem::new(model.clone());
    let (mut r, mut v) = model.design_state();
    let mut out = Vec::new();
    run(&mut sys, s, &mut r, &mut v, &mut |t, r, v| {
        out.push((t, r.to_vec(), v.to_vec()));
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// Largest difference of the position coordinates `slots` of two recordings.
fn largest_difference(
    a: &[(f64, Vec<f64>, Vec<f64>)],
    b: &[(f64, Vec<f64>, Vec<f64>)],
    slots: &[usize],
) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|((_, ra, _), (_, rb, _))| slots.iter().map(move |&k| (ra[k] - rb[k]).abs()))
        .fold(0.0, f64::max)
}

/// A revolute motion: rotation by θ about the unit `axis` through `pivot` (global, the parent
/// being the ground), written with nalgebra's rotation (independent of the engine's pose maps).
struct Revolute {
    axis: Unit<Vector3<f64>>,
    pivot: Vector3<f64>,
}

impl Revolute {
    /// Position of a point at `s0` (design) after turning by θ, and the rotation vector θ a.
    fn pose(&self, s0: &Vector3<f64>, th: f64) -> ([f64; 3], [f64; 3]) {
        let q = Rotation3::from_axis_angle(&self.axis, th);
        let p = self.pivot + q * (s0 - self.pivot);
        let phi = self.axis.into_inner() * th;
        ([p.x, p.y, p.z], [phi.x, phi.y, phi.z])
    }
}

fn grid(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| a + (b - a) * k as f64 / (n - 1) as f64)
        .collect()
}

/// A 1D table of `bodies` (name, design position) following `rev` over the angle grid `g`, in
/// the ground's frame; written to the test's scratch folder, path returned.
fn revolute_table(
    file: &str,
    rev: &Revolute,
    bodies: &[(&str, Vector3<f64>)],
    g: &[f64],
) -> PathBuf {
    let table = KinematicTable {
        source: "tabulated_joints.rs: the revolute pose map".into(),
        parent: "ground".into(),
        axes: vec![TableAxis {
            name: "angle".into(),
            unit: "rad".into(),
            description: String::new(),
            grid: g.to_vec(),
        }],
        bodies: bodies
            .iter()
            .map(|(name, s0)| {
                let (position, rotation) = g.iter().map(|&th| rev.pose(s0, th)).unzip();
                TableBody {
                    name: (*name).into(),
                    position,
                    rotation,
                }
            })
            .collect(),
    };
    write_table(file, &table)
}

fn write_table(file: &str, table: &KinematicTable) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(file);
    std::fs::write(&path, table.to_toml_string()).unwrap();
    path
}

/// The pendulum of the tests: bob (2 kg) off the pivot in x, y and z, turned, a skewed axis.
const BOB: [f64; 3] = [0.3, 0.1, -0.9];

fn pendulum_axis() -> Revolute {
    Revolute {
        axis: Unit::new_normalize(Vector3::new(0.1, 1.0, 0.2)),
        pivot: Vector3::zeros(),
    }
}

/// The pendulum model with `joint` on the bob and `extra` TOML appended.
fn pendulum(joint: &str, extra: &str) -> String {
    format!(
        r#"
[model]
name = "pendulum"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "bob"
mass = 2.0
position = [{}, {}, {}]
euler_zyx_deg = [10.0, -5.0, 3.0]
inertia = {{ principal = [0.02, 0.03, 0.025] }}
joint = {joint}
{extra}
"#,
        BOB[0], BOB[1], BOB[2]
    )
}

fn revolute_joint() -> String {
    let a = pendulum_axis().axis;
    format!(
        "{{ type = \"revolute\", parent = \"ground\", axis = [{}, {}, {}], point = [0.0, 0.0, 0.0], z0 = 0.3 }}",
        a.x, a.y, a.z
    )
}

/// (a) The tabulated pendulum (a 1D table of the revolute pose map, h = 0.05 rad) against the
/// revolute pendulum: the same motion to the spline's accuracy. The not-a-knot spline's first
/// derivative errs by ≈ h³/24 |s⁗| ≈ 5e-6 × 0.95 m per rad relative to |s'| ≈ 0.95 m, so the
/// mass matrix and the gravity torque err by ≈ 1e-5 relative, the frequency by ≈ 5e-6, and
/// over the ≈ 1.5 periods of 3 s the angle's phase error is ≈ 2π × 1.5 × 5e-6 × 0.3 rad ≈ 1.4e-5
/// rad at most (an upper estimate: the error's sign alternates over a cell). Measured 1.8e-6
/// rad, bound 5e-6; with h / 2 the difference falls by 7.0 (≈ 2³, the derivative's order).
/// LSRT2 1 ms for both (the same integrator error cancels to first order).
#[test]
fn a_tabulated_pendulum_moves_as_the_revolute_one() {
    let g = grid(-0.6, 0.6, 25);
    let table = revolute_table(
        "pendulum_bob.toml",
        &pendulum_axis(),
        &[("bob", Vector3::from(BOB))],
        &g,
    );
    let tab = format!(
        "{{ type = \"tabulated\", parent = \"ground\", table = \"{}\", coordinates = [\"self\"], z0 = 0.3 }}",
        table.display()
    );
    let s = settings("lsrt2", 1e-3, 3.0);
    let reference = record(&from_toml(&pendulum(&revolute_joint(), "")), &s);
    let tabulated = record(&from_toml(&pendulum(&tab, "")), &s);
    let d = largest_difference(&reference, &tabulated, &[0]);
    let swing = reference
        .iter()
        .map(|x| x.1[0])
        .fold(0.0f64, |m, z| m.max(z.abs()));
    println!("largest angle difference {d:.2e} rad (swing {swing:.3} rad)");
    assert!(swing > 0.29, "{swing}");
    assert!(d < 5e-6, "{d:e}");
    // Finer grid (h / 2): the difference falls with the spline's derivative error (≈ h³).
    let g = grid(-0.6, 0.6, 49);
    revolute_table(
        "pendulum_bob.toml",
        &pendulum_axis(),
        &[("bob", Vector3::from(BOB))],
        &g,
    );
    let fine = record(&from_toml(&pendulum(&tab, "")), &s);
    let d2 = largest_difference(&reference, &fine, &[0]);
    println!("with h / 2: {d2:.2e} rad (ratio {:.1})", d / d2);
    assert!(d / d2 > 5.0, "{d:e} -> {d2:e}");
}

/// (b) The example `models/joint_tabulated.toml` — an arm on a 2D table in the slider's travel
/// (input coordinate) and its own angle, with a massless follower link carrying a damper —
/// against the ideal chain slider (prismatic) → arm (revolute on the slider) with the damper on
/// the arm at the link's point. The table is exact in x (the motion is linear in it) and has
/// h = 0.1 rad in the angle: position error ≈ (5/384) h⁴ × 0.6 m ≈ 8e-7 m, first derivative
/// ≈ h³/24 × 0.6 ≈ 2.5e-5 m/rad (relative 6e-5): over 3 s (≈ 4 swings) the coordinates agree to
/// ≈ 2π × 4 × 6e-5 × 0.4 rad ≈ 6e-4 at most (upper estimate). Measured 3.7e-6, bound 1e-5 (in
/// m and rad).
#[test]
fn the_example_matches_the_ideal_chain_with_the_damper_on_the_arm() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/joint_tabulated.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let tab = Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")));
    // The chain: the arm on a revolute joint on the slider; no link body, its damper (and
    // output) on the arm at the same point.
    let link = "[[bodies]]\nname = \"link\"\nmass = 0.0\nposition = [0.1, 0.0, -0.6]\ninertia = { principal = [0.0, 0.0, 0.0] }\njoint = { type = \"tabulated\", parent = \"ground\", table = \"tables/joint_tabulated_arm.toml\", coordinates = [\"slider\", \"arm\"] }\n";
    assert!(text.contains(link));
    let arm = r#"joint = { type = "tabulated", parent = "ground", table = "tables/joint_tabulated_arm.toml", coordinates = ["slider", "self"], z0 = 0.4 }"#;
    assert!(text.contains(arm));
    let chain_src = text
        .replace(link, "")
        .replace(
            arm,
            r#"joint = { type = "revolute", parent = "slider", axis = [0.0, 1.0, 0.0], point = [0.0, 0.0, 0.0], z0 = 0.4 }"#,
        )
        .replace("body = \"link\"", "body = \"arm\"");
    let chain = from_toml(&chain_src);
    let s = settings("lsrt2", 1e-3, 3.0);
    let a = record(&chain, &s);
    let b = record(&tab, &s);
    let (slider, arm) = (0usize, 7usize);
    let d = largest_difference(&a, &b, &[slider, arm]);
    let travel = a.iter().map(|x| x.1[slider].abs()).fold(0.0, f64::max);
    let swing = a.iter().map(|x| (x.1[arm] - 0.4).abs()).fold(0.0, f64::max);
    println!("chain vs table: {d:.2e} (slider travel {travel:.3} m, arm swing {swing:.3} rad)");
    assert!(travel > 0.04 && swing > 0.3, "{travel} {swing}");
    assert!(d < 1e-5, "{d:e}");
}

/// A tabulated joint line following `bodies`' coordinates through `table`.
fn tabulated(parent: &str, table: &Path, entry: &str, coordinates: &str) -> String {
    format!(
        "{{ type = \"tabulated\", parent = \"{parent}\", table = \"{}\", entry = \"{entry}\", coordinates = [{coordinates}] }}",
        table.display()
    )
}

/// (c) A second body rigidly attached to the pendulum as a follower (a table of its pose over
/// the bob's angle, the bob's coordinate as input) against one lumped body of the combined
/// mass and inertia about the combined centre of mass on the revolute joint. Spline error as
/// in (a) (h = 0.05 rad, a third of the mass tabulated): measured 7.8e-7 rad, bound 2.5e-6.
#[test]
fn a_rigidly_attached_follower_moves_as_one_lumped_body() {
    let weight = Vector3::new(0.2, -0.1, -1.3);
    let (m1, m2) = (2.0, 1.0);
    let table = revolute_table(
        "follower_weight.toml",
        &pendulum_axis(),
        &[("weight", weight)],
        &grid(-0.6, 0.6, 25),
    );
    let follower = format!(
        "\n[[bodies]]\nname = \"weight\"\nmass = {m2}\nposition = [{}, {}, {}]\ninertia = {{ principal = [0.01, 0.02, 0.015] }}\njoint = {}\n",
        weight.x,
        weight.y,
        weight.z,
        tabulated("ground", &table, "weight", "\"bob\"")
    );
    let two = from_toml(&pendulum(&revolute_joint(), &follower));
    // The lumped body: global axes, inertia about the combined centre of mass.
    let bob = Vector3::from(BOB);
    let c = (m1 * bob + m2 * weight) / (m1 + m2);
    let r1 =
        Rotation3::from_euler_angles(3f64.to_radians(), -5f64.to_radians(), 10f64.to_radians());
    let i1 = r1.matrix()
        * Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.025))
        * r1.matrix().transpose();
    let i2 = Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, 0.015));
    let steiner =
        |m: f64, d: Vector3<f64>| m * (d.norm_squared() * Matrix3::identity() - d * d.transpose());
    let it = i1 + i2 + steiner(m1, bob - c) + steiner(m2, weight - c);
    let row = |k: usize| format!("[{}, {}, {}]", it[(k, 0)], it[(k, 1)], it[(k, 2)]);
    let a = pendulum_axis().axis;
    let lumped = from_toml(&format!(
        r#"
[model]
name = "lumped"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "bob"
mass = {}
position = [{}, {}, {}]
inertia = {{ tensor = [{}, {}, {}] }}
joint = {{ type = "revolute", parent = "ground", axis = [{}, {}, {}], point = [0.0, 0.0, 0.0], z0 = 0.3 }}
"#,
        m1 + m2,
        c.x,
        c.y,
        c.z,
        row(0),
        row(1),
        row(2),
        a.x,
        a.y,
        a.z
    ));
    let s = settings("lsrt2", 1e-3, 3.0);
    let d = largest_difference(&record(&lumped, &s), &record(&two, &s), &[0]);
    println!("follower vs lumped: largest angle difference {d:.2e} rad");
    assert!(d < 2.5e-6, "{d:e}");
}

/// (c) A massless follower (mass 0, zero inertia) carrying a spring against the same spring on
/// the driving body at the same point: the wrench enters through Jᵀ W only. Only the spring's
/// point and lever come from the spline (h = 0.05 rad): measured 5.4e-8 rad, bound 2e-7.
#[test]
fn a_massless_follower_carries_its_spring_like_the_driving_body() {
    let link = Vector3::new(0.4, 0.1, -0.7);
    let table = revolute_table(
        "massless_link.toml",
        &pendulum_axis(),
        &[("link", link)],
        &grid(-0.6, 0.6, 25),
    );
    let spring = |body: &str| {
        format!(
            r#"
[[markers]]
name = "m"
body = "{body}"
global_position = [{}, {}, {}]

[[markers]]
name = "g"
body = "ground"
global_position = [0.9, 0.1, -0.6]

[[force_elements]]
type = "spring"
name = "s"
marker_i = "m"
marker_j = "g"
stiffness = 60.0
free_length = 0.3
"#,
            link.x, link.y, link.z
        )
    };
    let body = format!(
        "\n[[bodies]]\nname = \"link\"\nmass = 0.0\nposition = [{}, {}, {}]\ninertia = {{ principal = [0.0, 0.0, 0.0] }}\njoint = {}\n",
        link.x,
        link.y,
        link.z,
        tabulated("ground", &table, "link", "\"bob\"")
    );
    let direct = from_toml(&pendulum(&revolute_joint(), &spring("bob")));
    let follower = from_toml(&pendulum(
        &revolute_joint(),
        &format!("{body}{}", spring("link")),
    ));
    let s = settings("lsrt2", 1e-3, 3.0);
    let a = record(&direct, &s);
    let b = record(&follower, &s);
    let d = largest_difference(&a, &b, &[0]);
    let swing = a.iter().map(|x| (x.1[0] - 0.3).abs()).fold(0.0, f64::max);
    println!("massless follower vs direct spring: {d:.2e} rad (swing {swing:.3} rad)");
    assert!(swing > 0.1, "{swing}");
    assert!(d < 2e-7, "{d:e}");
}

/// Kinetic plus gravitational energy of all bodies at the (reduced) state, J.
fn energy(sys: &mut MbsSystem, r: &[f64], v: &[f64]) -> f64 {
    let model = sys.model().clone();
    let (_, rf, vf) = sys.expanded(r, v);
    let g = model.gravity;
    model
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = Vector3::new(rf[7 * i], rf[7 * i + 1], rf[7 * i + 2]);
            let vel = Vector3::new(vf[6 * i], vf[6 * i + 1], vf[6 * i + 2]);
            let w = Vector3::new(vf[6 * i + 3], vf[6 * i + 4], vf[6 * i + 5]);
            0.5 * b.mass * vel.norm_squared() + 0.5 * w.dot(&(b.inertia * w)) - b.mass * g.dot(&x)
        })
        .sum()
}

/// (d) Energy with a tabulated joint: the example without its damper (slider spring, gravity,
/// the arm on the 2D table with the slider as input coordinate, the massless link), RK4 at
/// 0.1 ms over 1 s. The splined system is an exact holonomic system, so its energy (kinetic,
/// gravity and the spring's ½ k (ℓ − ℓ₀)²) is conserved up to RK4's O(h⁴) error: measured
/// 2.0e-11 J of the energy scale m g l ≈ 7.8 J, bound 1e-10 J.
#[test]
fn energy_is_conserved_with_a_tabulated_joint() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/joint_tabulated.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("damping = 5.0", "damping = 0.0");
    let m = sprung_model::from_str_with_base(
        &text,
        sprung_model::Format::Toml,
        "joint_tabulated.toml",
        path.parent().unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let model = Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")));
    let mut sys = MbsSystem::new(model.clone());
    let rows = record(&model, &settings("rk4", 1e-4, 1.0));
    let total = |sys: &mut MbsSystem, r: &[f64], v: &[f64]| {
        // Spring from the slider's centre to (−0.5, 0, 0), free length 0.5 m, k = 300 N/m.
        let len = (r[0] + 0.5).abs();
        energy(sys, r, v) + 0.5 * 300.0 * (len - 0.5).powi(2)
    };
    let e0 = total(&mut sys, &rows[0].1, &rows[0].2);
    let drift = rows
        .iter()
        .map(|(_, r, v)| (total(&mut sys, r, v) - e0).abs())
        .fold(0.0f64, f64::max);
    let scale = 2.0 * 9.81 * 0.4;
    println!("energy drift {drift:.2e} J (scale {scale:.2} J)");
    assert!(drift < 1e-10, "{drift:e}");
}

/// A 2D table on the chain carrier → slider (prismatic along `a_s` through the carrier) → arm
/// (revolute about `a_r` through the slider's centre): the poses of `bodies` (name, design
/// position, global) relative to the carrier's design frame (at `carrier`, unrotated) over the
/// slider travel and the arm angle.
fn chain_table(file: &str, carrier: Vector3<f64>, bodies: &[(&str, Vector3<f64>)]) -> PathBuf {
    let a_s = Vector3::new(1.0, 0.1, -0.3).normalize();
    let rev = Revolute {
        axis: Unit::new_normalize(Vector3::new(0.2, 1.0, 0.1)),
        pivot: Vector3::new(0.1, 0.0, 0.4) - carrier,
    };
    let (gx, gt) = (grid(-0.2, 0.2, 11), grid(-0.8, 0.8, 33));
    let table = KinematicTable {
        source: "tabulated_joints.rs: slider and revolute pose maps".into(),
        parent: "carrier".into(),
        axes: vec![
            TableAxis {
                name: "slider".into(),
                unit: "m".into(),
                description: String::new(),
                grid: gx.clone(),
            },
            TableAxis {
                name: "angle".into(),
                unit: "rad".into(),
                description: String::new(),
                grid: gt.clone(),
            },
        ],
        bodies: bodies
            .iter()
            .map(|(name, s0)| {
                let mut position = Vec::new();
                let mut rotation = Vec::new();
                for &x in &gx {
                    for &th in &gt {
                        let (p, phi) = rev.pose(&(s0 - carrier), th);
                        position.push([p[0] + x * a_s.x, p[1] + x * a_s.y, p[2] + x * a_s.z]);
                        rotation.push(phi);
                    }
                }
                TableBody {
                    name: (*name).into(),
                    position,
                    rotation,
                }
            })
            .collect(),
    };
    write_table(file, &table)
}

/// A free carrier on a bushing, a slider (prismatic) on it, an arm on a 2D table (the slider's
/// coordinate as input, its own angle), a massive follower and a massless follower carrying a
/// spring to the ground, a damper on the arm: every kind of column and term of the projection.
fn fd_model() -> String {
    let carrier = Vector3::new(0.0, 0.0, 0.5);
    let table = chain_table(
        "fd_chain.toml",
        carrier,
        &[
            ("arm", Vector3::new(0.3, 0.1, 0.2)),
            ("weight", Vector3::new(0.4, 0.15, 0.1)),
            ("link", Vector3::new(0.35, -0.1, 0.15)),
        ],
    );
    format!(
        r#"
[model]
name = "fd"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "carrier"
mass = 20.0
position = [0.0, 0.0, 0.5]
inertia = {{ principal = [0.5, 0.7, 0.9] }}

[[bodies]]
name = "slider"
mass = 1.5
position = [0.1, 0.0, 0.4]
inertia = {{ principal = [0.004, 0.003, 0.005] }}
joint = {{ type = "prismatic", parent = "carrier", axis = [1.0, 0.1, -0.3], z0 = 0.02 }}

[[bodies]]
name = "arm"
mass = 3.0
position = [0.3, 0.1, 0.2]
euler_zyx_deg = [15.0, -10.0, 5.0]
inertia = {{ principal = [0.02, 0.05, 0.04] }}
joint = {{ type = "tabulated", parent = "carrier", table = "{t}", coordinates = ["slider", "self"], z0 = 0.1 }}

[[bodies]]
name = "weight"
mass = 0.7
position = [0.4, 0.15, 0.1]
inertia = {{ principal = [0.001, 0.002, 0.0015] }}
joint = {{ type = "tabulated", parent = "carrier", table = "{t}", coordinates = ["slider", "arm"] }}

[[bodies]]
name = "link"
mass = 0.0
position = [0.35, -0.1, 0.15]
inertia = {{ principal = [0.0, 0.0, 0.0] }}
joint = {{ type = "tabulated", parent = "carrier", table = "{t}", coordinates = ["slider", "arm"] }}

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
name = "link.s"
body = "link"
global_position = [0.3, -0.1, 0.1]

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
damping = [50.0, 60.0, 70.0]
rot_damping = [5.0, 6.0, 7.0]

[[force_elements]]
type = "damper"
name = "arm_damper"
marker_i = "arm.d"
marker_j = "carrier.d"
damping = 40.0

[[force_elements]]
type = "spring"
name = "link_spring"
marker_i = "link.s"
marker_j = "g.s"
stiffness = 800.0
"#,
        t = table.display()
    )
}

/// (e) The projected linearisation with a 2D tabulated joint, an input coordinate, a massive
/// and a massless follower against central differences of the projected accelerations at four
/// random states. Relative steps 1e-5: the test's own velocity differences are round-off
/// bound (their error grows as 1/h: 7.5e-9, 9.6e-8, 5e-7 at 1e-5, 1e-6, 1e-7 — q is quadratic
/// in the velocities, so truncation is nil), the position differences' truncation and
/// round-off balance there (≤ 3.3e-9). The linearisation's own differenced geometric and
/// Coriolis terms err by ≈ ε/δ ≈ 1e-10. Measured worst 1.2e-8 over the four states (the
/// velocity differences' round-off); bound 2e-8 as for the ideal joints.
#[test]
fn projected_linearisation_with_tabulated_joints_matches_finite_differences() {
    let model = from_toml(&fd_model());
    let mut sys = MbsSystem::new(model.clone());
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let mut lin = Linearisation::new(nr, sys.pattern());
    let mut rng = sprung_test_support::Rng(5);
    let mut worst = 0.0f64;
    for case in 0..4 {
        let (mut r, mut v) = model.design_state();
        for x in r[..7].iter_mut().chain(v[..6].iter_mut()) {
            *x += rng.sym(0.1);
        }
        sys.project(&mut r);
        for (b, (dz, dv)) in [(1usize, (0.1, 1.0)), (2, (0.5, 2.0))] {
            r[7 * b] += rng.sym(dz);
            v[6 * b] += rng.sym(dv);
        }
        sys.linearise(0.0, &r, &v, &mut lin);
        let mut q = vec![0.0; nv];
        sys.accelerations(0.0, &r, &v, &mut q);
        assert_eq!(q, lin.q, "case {case}: q of the linearisation");
        let jrk = lin.j_rk.to_dense_row_major();
        let jv = lin.j_v.to_dense_row_major();
        let cols = tangent_columns(nr, nv, |dr, w| sys.tangent(&r, dr, w));
        let e = worst_mechanical_jacobian_error_with_steps(
            &r,
            &v,
            &jrk,
            &jv,
            &cols,
            1e-5,
            1e-5,
            |r, v, out| sys.accelerations(0.0, r, v, out),
        );
        println!("case {case}: worst column error {e:.2e}");
        worst = worst.max(e);
    }
    assert!(worst < 2e-8, "{worst:e}");
    // The followers move: the massless link's spring acts on the arm's and slider's rows.
    let (mut r, v) = model.design_state();
    let mut q0 = vec![0.0; nv];
    sys.accelerations(0.0, &r, &v, &mut q0);
    r[7 * 2] += 0.1;
    let mut q1 = vec![0.0; nv];
    sys.accelerations(0.0, &r, &v, &mut q1);
    assert!((q1[6] - q0[6]).abs() > 1e-3, "{} {}", q1[6], q0[6]);
}

/// The reduced system's pattern (`joints::joint_pattern`): a follower holds no coordinate, so
/// its block row keeps the diagonal alone while the coordinate blocks couple densely; and the
/// block-sparse LU on that pattern steps as the dense LU does (LSRT2, 1 ms, 0.3 s, every step
/// re-linearised, the model of the test above with its rigid and its massless follower: every
/// coordinate to 1e-10; measured 5.6e-16, the round-off of another elimination order).
#[test]
fn followers_keep_their_diagonal_block_and_the_sparse_lu_matches_the_dense_one() {
    let model = from_toml(&fd_model());
    let sys = MbsSystem::new(model.clone());
    let pattern = sys.pattern();
    let followers: Vec<usize> = model
        .joints
        .defs
        .iter()
        .flatten()
        .filter(|d| !d.own)
        .map(|d| d.body)
        .collect();
    assert_eq!(followers.len(), 2, "{followers:?}");
    for &b in &followers {
        assert_eq!(pattern.row(b), &[b], "follower {b}");
    }
    let blocks = model.joints.trees[0].coordinate_blocks();
    assert!(blocks.len() >= 2, "{blocks:?}");
    for &a in blocks {
        for &b in blocks {
            assert!(pattern.slot(a, b).is_some(), "coordinate blocks {a}, {b}");
        }
    }
    let mut s = settings("lsrt2", 1e-3, 0.3);
    let sparse = record(&model, &s);
    s.linear_solver = LinearSolverKind::Dense;
    let dense = record(&model, &s);
    let slots: Vec<usize> = (0..model.n_r()).collect();
    let worst = largest_difference(&sparse, &dense, &slots);
    println!("largest sparse/dense difference {worst:.2e}");
    assert!(worst < 1e-10, "{worst:e}");
}

/// (f) Located model errors of tabulated joints: each names the file and line, the body and a
/// fix.
#[test]
fn bad_tabulated_joints_give_located_errors() {
    let good = revolute_table(
        "errors_good.toml",
        &pendulum_axis(),
        &[
            ("bob", Vector3::from(BOB)),
            ("link", Vector3::new(0.4, 0.1, -0.7)),
        ],
        &grid(-0.6, 0.6, 13),
    );
    let mut bad_table = std::fs::read_to_string(&good).unwrap();
    bad_table = bad_table.replacen("-0.6", "0.6", 1);
    let bad = Path::new(env!("CARGO_TARGET_TMPDIR")).join("errors_bad.toml");
    std::fs::write(&bad, bad_table).unwrap();
    let constant = write_table(
        "errors_constant.toml",
        &KinematicTable {
            source: String::new(),
            parent: "ground".into(),
            axes: vec![TableAxis {
                name: "a".into(),
                unit: "rad".into(),
                description: String::new(),
                grid: grid(-0.5, 0.5, 5),
            }],
            bodies: vec![TableBody {
                name: "bob".into(),
                position: vec![BOB; 5],
                rotation: vec![[0.0; 3]; 5],
            }],
        },
    );
    let tab = |t: &Path, rest: &str| {
        format!(
            "{{ type = \"tabulated\", parent = \"ground\", table = \"{}\"{rest} }}",
            t.display()
        )
    };
    let free = "\n[[bodies]]\nname = \"cart\"\nmass = 1.0\nposition = [0.0, 0.0, 0.0]\ninertia = { principal = [0.1, 0.1, 0.1] }\n";
    let on_cart = "\n[[bodies]]\nname = \"cart\"\nmass = 1.0\nposition = [0.0, 0.0, 0.0]\ninertia = { principal = [0.1, 0.1, 0.1] }\n\n[[bodies]]\nname = \"pin\"\nmass = 1.0\nposition = [0.0, 0.0, 0.1]\ninertia = { principal = [0.1, 0.1, 0.1] }\njoint = { type = \"prismatic\", parent = \"cart\", axis = [1.0, 0.0, 0.0] }\n";
    let link = |coords: &str| {
        format!(
            "\n[[bodies]]\nname = \"link\"\nmass = 0.0\nposition = [0.4, 0.1, -0.7]\ninertia = {{ principal = [0.0, 0.0, 0.0] }}\njoint = {}\n",
            tab(&good, &format!(", coordinates = [{coords}]"))
        )
    };
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no_such_table.toml");
    let cases: Vec<(String, String, &str)> = vec![
        (
            tab(&missing, ", coordinates = [\"self\"]"),
            String::new(),
            "no_such_table.toml",
        ),
        (
            tab(&bad, ", coordinates = [\"self\"]"),
            String::new(),
            "not strictly increasing",
        ),
        (
            tab(&good, ", entry = \"bobb\", coordinates = [\"self\"]"),
            String::new(),
            "the table has no body 'bobb'",
        ),
        (
            tab(&good, ", coordinates = [\"self\", \"self\"]"),
            String::new(),
            "lists \"self\" 2 times",
        ),
        (
            tab(&good, ", coordinates = []"),
            String::new(),
            "`coordinates` has 0 items but the table has 1 axes",
        ),
        (
            revolute_joint(),
            link("\"bobx\""),
            "joint coordinate 'bobx' is not a body",
        ),
        (
            revolute_joint(),
            format!("{free}{}", link("\"cart\"")),
            "names a free body",
        ),
        (
            revolute_joint(),
            format!(
                "{}\n[[bodies]]\nname = \"link2\"\nmass = 1.0\nposition = [0.4, 0.1, -0.7]\ninertia = {{ principal = [0.1, 0.1, 0.1] }}\njoint = {}\n",
                link("\"bob\""),
                tab(&good, ", entry = \"link\", coordinates = [\"link\"]")
            ),
            "names a follower",
        ),
        (
            revolute_joint(),
            format!("{on_cart}{}", link("\"pin\"")),
            "belongs to another joint tree",
        ),
        (
            tab(&good, ", coordinates = [\"self\"], axis = [0.0, 1.0, 0.0]"),
            String::new(),
            "tabulated joint with `axis`",
        ),
        (
            revolute_joint(),
            link("\"bob\"").replace("[0.4, 0.1, -0.7]", "[0.4, 0.1, -0.75]"),
            "is not the body's design pose",
        ),
        (
            revolute_joint(),
            link("\"bob\"").replace(
                "coordinates = [\"bob\"]",
                "coordinates = [\"bob\"], z0 = 0.1",
            ),
            "a follower (tabulated joint without \"self\") has `z0`",
        ),
        (
            revolute_joint(),
            link("\"bob\"").replace("principal = [0.0, 0.0, 0.0]", "principal = [0.1, 0.1, 0.1]"),
            "a massless follower has inertia",
        ),
        (
            revolute_joint(),
            link("\"bob\"")
                .replace("name = \"link\"", "name = \"link_L\"\nmirror = true")
                .replace("table = ", "entry = \"link\", table = "),
            "belongs to a body that is not mirrored",
        ),
    ];
    for (joint, extra, want) in cases {
        let src = pendulum(&joint, &extra);
        let err = sprung_model::from_toml_str(&src, "test.toml")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        println!("{err}\n");
        assert!(err.contains(want), "want '{want}' in: {err}");
        assert!(err.contains("test.toml:"), "located: {err}");
        assert!(
            err.contains("fix") || err.contains("hint") || err.contains("→"),
            "{err}"
        );
    }
    // A coordinate that moves no mass: compiling names the tree and the coordinate.
    let src = pendulum(&tab(&constant, ", coordinates = [\"self\"]"), "");
    let m = sprung_model::from_toml_str(&src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    let err = compile(&m).map(|_| ()).unwrap_err().to_string();
    println!("{err}");
    assert!(
        err.contains("M_z is singular at the coordinate of body 'bob'"),
        "{err}"
    );
}

/// `mirror = true` on a tabulated body: the copy follows the mirrored table (positions as
/// points, rotation vectors as axial vectors) and moves as the mirror image of the original
/// (gravity is mirror-symmetric): the same coordinate history and mirrored positions (measured:
/// to the bit; bound 1e-12 for round-off, the two coordinates share one M_z factorisation).
#[test]
fn a_mirrored_tabulated_body_moves_as_the_mirror_image() {
    let table = revolute_table(
        "mirror_bob.toml",
        &pendulum_axis(),
        &[("bob", Vector3::from(BOB))],
        &grid(-0.6, 0.6, 25),
    );
    let joint = format!(
        "{{ type = \"tabulated\", parent = \"ground\", table = \"{}\", entry = \"bob\", coordinates = [\"self\"], z0 = 0.3 }}",
        table.display()
    );
    let src = pendulum(&joint, "").replace("name = \"bob\"", "name = \"bob_L\"\nmirror = true");
    let model = from_toml(&src);
    assert_eq!(model.bodies[1].name, "bob_R");
    let mut sys = MbsSystem::new(model.clone());
    let rows = record(&model, &settings("lsrt2", 1e-3, 1.0));
    let mut worst = 0.0f64;
    for (_, r, v) in &rows {
        let (_, rf, _) = sys.expanded(r, v);
        worst = worst
            .max((r[0] - r[7]).abs())
            .max((rf[0] - rf[7]).abs())
            .max((rf[1] + rf[8]).abs())
            .max((rf[2] - rf[9]).abs());
    }
    let swing = rows.iter().map(|x| x.1[0].abs()).fold(0.0, f64::max);
    println!("mirror: largest deviation from the mirror image {worst:.2e} (swing {swing:.3} rad)");
    assert!(swing > 0.29, "{swing}");
    assert!(worst < 1e-12, "{worst:e}");
}

/// `[[subsystems]]` placement: the example included with a rotation about z and a translation
/// (its table on the included ground is placed with it, its input coordinate renamed) moves
/// as the placed stand-alone model (gravity is along z, so the motion is the same; bound 1e-12
/// m for round-off, measured below).
#[test]
fn a_placed_subsystem_moves_its_tabulated_joint_with_it() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let src = r#"
[model]
name = "placed"
gravity = [0.0, 0.0, -9.81]

[[subsystems]]
name = "p"
file = "joint_tabulated.toml"
position = [1.0, 2.0, 3.0]
euler_zyx_deg = [30.0, 0.0, 0.0]
"#;
    let m = sprung_model::from_str_with_base(src, sprung_model::Format::Toml, "placed.toml", &base)
        .unwrap_or_else(|e| panic!("{e}"));
    let placed = Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(placed.bodies[1].name, "p.arm");
    let alone = sprung_model::load(&base.join("joint_tabulated.toml")).unwrap();
    let alone = Arc::new(compile(&alone).unwrap());
    let s = settings("lsrt2", 1e-3, 1.0);
    let (ra, rp) = (record(&alone, &s), record(&placed, &s));
    let (mut sa, mut sp) = (MbsSystem::new(alone), MbsSystem::new(placed));
    let rot = Rotation3::from_axis_angle(&Vector3::z_axis(), 30f64.to_radians());
    let mut worst = 0.0f64;
    for ((_, r1, v1), (_, r2, v2)) in ra.iter().zip(&rp) {
        let (_, f1, _) = sa.expanded(r1, v1);
        let f1 = f1.to_vec();
        let (_, f2, _) = sp.expanded(r2, v2);
        for b in 0..3 {
            let x1 = rot * Vector3::new(f1[7 * b], f1[7 * b + 1], f1[7 * b + 2])
                + Vector3::new(1.0, 2.0, 3.0);
            let x2 = Vector3::new(f2[7 * b], f2[7 * b + 1], f2[7 * b + 2]);
            worst = worst.max((x1 - x2).norm());
        }
    }
    println!("largest placement difference {worst:.2e} m");
    assert!(worst < 1e-12, "{worst:e}");
}
