//! Shared helpers for the sprung-mbs integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use sprung_mbs::{CompiledModel, MbsSystem, compile};

/// Compiles a TOML model given as a string.
pub fn model_from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap())
}

/// Largest entry-wise difference of `a` and `b` relative to the largest magnitude in `a`.
pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / scale.max(f64::MIN_POSITIVE)
}

/// Small deterministic pseudo-random generator (xorshift) for reproducible random states.
pub struct Rng(pub u64);

impl Rng {
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [-a, a].
    pub fn sym(&mut self, a: f64) -> f64 {
        a * (2.0 * self.uniform() - 1.0)
    }
}

/// A random state near the design state: translations ±dx, rotations ±dth rad, velocities ±vel.
pub fn random_state(
    sys: &MbsSystem,
    rng: &mut Rng,
    dx: f64,
    dth: f64,
    vel: f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut r, mut v) = sys.model().design_state();
    for i in 0..sys.model().bodies.len() {
        for k in 0..3 {
            r[7 * i + k] += rng.sym(dx);
        }
        let th = nalgebra::Vector3::new(rng.sym(dth), rng.sym(dth), rng.sym(dth));
        sprung_mbs::rotation::quat_apply_body_increment(&mut r[7 * i + 3..7 * i + 7], &th);
        for k in 0..6 {
            v[6 * i + k] += rng.sym(vel);
        }
    }
    (r, v)
}

/// Every force-element type (bushings with and without curves and spin axis, linear and curve
/// springs, characteristic and bilinear dampers, bump and rebound stops), body- and global-frame
/// inputs, gravity and a spinning wheel: the model of the Jacobian and element-pack tests.
pub const ALL_ELEMENTS: &str = r#"
[model]
name = "all_elements"
ground = "chassis"
gravity = [0.0, 0.0, -9.81]

[[curves]]
name = "C_LIN"
x = [0.0, 0.001, 0.002, 0.004, 0.01]
y = [0.0, 1000.0, 2500.0, 6000.0, 30000.0]
symmetry = "odd"

[[curves]]
name = "C_SMOOTH"
x = [-0.02, -0.005, 0.0, 0.004, 0.02]
y = [-900.0, -100.0, 0.0, 150.0, 1500.0]
interpolation = "smooth"

[[curves]]
name = "C_DAMP"
x = [-1.0, -0.1, 0.0, 0.1, 1.0]
y = [-800.0, -150.0, 0.0, 300.0, 1500.0]
interpolation = "smooth"

[[curves]]
name = "C_ROT"
x = [0.0, 0.05, 0.1, 0.3]
y = [0.0, 20.0, 50.0, 400.0]
symmetry = "odd"

[[bodies]]
name = "arm"
mass = 2.5
position = [0.1, 0.3, 0.0]
inertia = { tensor = [[0.02, 0.001, -0.002], [0.001, 0.01, 0.0005], [-0.002, 0.0005, 0.025]] }
angular_velocity = [1.0, -2.0, 0.5]

[[bodies]]
name = "carrier"
mass = 7.0
position = [0.0, 0.6, 0.0]
euler_zyx_deg = [10.0, -5.0, 3.0]
inertia = { principal = [0.05, 0.04, 0.03], euler_zyx_deg = [20.0, 10.0, -5.0] }

[[bodies]]
name = "wheel"
mass = 20.0
position = [0.0, 0.75, 0.0]
inertia = { principal = [0.6, 1.0, 0.6] }
angular_velocity = [0.0, 30.0, 0.0]

[[frames]]
name = "F1"
euler_zyx_deg = [30.0, 10.0, -20.0]

[[markers]]
name = "arm_in.I"
body = "arm"
global_position = [0.1, 0.1, 0.0]
frame = "F1"
[[markers]]
name = "arm_in.J"
body = "chassis"
global_position = [0.1, 0.1, 0.0]
frame = "F1"
[[markers]]
name = "arm_out.I"
body = "carrier"
global_position = [0.05, 0.5, 0.02]
[[markers]]
name = "arm_out.J"
body = "arm"
global_position = [0.05, 0.5, 0.02]
[[markers]]
name = "bearing.I"
body = "wheel"
global_position = [0.0, 0.75, 0.0]
[[markers]]
name = "bearing.J"
body = "carrier"
global_position = [0.0, 0.75, 0.0]
[[markers]]
name = "top"
body = "chassis"
global_position = [0.0, 0.45, 0.4]
[[markers]]
name = "arm_seat"
body = "arm"
global_position = [0.08, 0.35, -0.02]
[[markers]]
name = "carrier_low"
body = "carrier"
global_position = [0.02, 0.6, -0.1]
[[markers]]
name = "wheel_centre"
body = "wheel"
position = [0.0, 0.0, 0.0]

[[force_elements]]
type = "bushing"
name = "arm_inner"
marker_i = "arm_in.I"
marker_j = "arm_in.J"
stiffness = [5e6, 1.5e6, 5e6]
rot_stiffness = [1500, 60, 1500]
damping = [5000, 1500, 5000]
rot_damping = [1.5, 0.06, 1.5]
stiffness_curves = { x = "C_LIN", z = "C_SMOOTH" }
damping_curves = { y = "C_DAMP" }
rot_stiffness_curves = { x = "C_ROT" }
rot_damping_curves = { z = "C_DAMP" }
preload = [10.0, -20.0, 5.0]
rot_preload = [0.5, 0.0, -0.3]

[[force_elements]]
type = "bushing"
name = "ball_joint"
marker_i = "arm_out.I"
marker_j = "arm_out.J"
stiffness = [1e7, 1e7, 1e7]
rot_stiffness = [5, 5, 5]
damping = [1e4, 1e4, 1e4]
rot_damping = [5e-3, 5e-3, 5e-3]

[[force_elements]]
type = "bushing"
name = "wheel_bearing"
marker_i = "bearing.I"
marker_j = "bearing.J"
stiffness = [1e8, 5e7, 1e8]
rot_stiffness = [5e5, 0, 5e5]
damping = [1e5, 5e4, 1e5]
rot_damping = [500, 0.05, 500]
spin_axis = "y"

[[force_elements]]
type = "spring"
name = "spring_lin"
marker_i = "arm_seat"
marker_j = "top"
stiffness = 8.5e4
free_length = 0.6
damping = 100.0
preload = 20.0

[[force_elements]]
type = "spring"
name = "spring_curve"
marker_i = "carrier_low"
marker_j = "top"
curve = "C_SMOOTH"

[[force_elements]]
type = "damper"
name = "damper_curve"
marker_i = "arm_seat"
marker_j = "top"
curve = "C_DAMP"

[[force_elements]]
type = "damper"
name = "damper_lin"
marker_i = "carrier_low"
marker_j = "top"
damping = 1500.0

[[force_elements]]
type = "damper"
name = "damper_bilinear"
marker_i = "carrier_low"
marker_j = "arm_seat"
damping_rebound = 2000.0
damping_compression = 800.0

[[force_elements]]
type = "stop"
name = "bump"
marker_i = "arm_seat"
marker_j = "top"
kind = "bump"
clearance = 0.005
design_length = 0.6
curve = "C_LIN"
damping = 50.0

[[force_elements]]
type = "stop"
name = "rebound"
marker_i = "carrier_low"
marker_j = "top"
kind = "rebound"
clearance = 0.005
design_length = 0.3
stiffness = 2e5

[[inputs]]
name = "fz"
kind = "force"
marker = "wheel_centre"
direction = [0.2, 0.0, 1.0]
signal = { type = "sine", amplitude = 300.0, frequency_hz = 2.0, offset = 5000.0 }
[[inputs]]
name = "fx_body"
kind = "force"
marker = "carrier_low"
frame = "body"
direction = [1.0, 0.5, 0.0]
signal = { type = "constant", value = -700.0 }
[[inputs]]
name = "torque_body"
kind = "torque"
marker = "wheel_centre"
frame = "body"
direction = [0.0, 1.0, 0.1]
signal = { type = "ramp", start_time = 0.0, end_time = 10.0, from = 0.0, to = 500.0 }
[[inputs]]
name = "torque_global"
kind = "torque"
marker = "arm_seat"
direction = [0.0, 0.0, 1.0]
signal = { type = "constant", value = 12.0 }
"#;

/// Parameters of the N-body bushing chain of [`bushing_chain_toml`].
pub struct Chain {
    /// Number of bodies.
    pub n: usize,
    /// Body mass, kg.
    pub mass: f64,
    /// Distance of the body centres, m.
    pub spacing: f64,
    /// Bushing stiffness [x, y, z], N/m.
    pub stiffness: [f64; 3],
    /// Downward force on the last body, N.
    pub end_load: f64,
    /// Gravity on (9.81 m/s² downward) or off.
    pub gravity: bool,
}

impl Chain {
    /// The chain used for the statics-at-scale measurements: 1 kg bodies 0.1 m apart, bushings
    /// 2e7 / 2e7 / 5e7 N/m (the lowest body of a 2000-body chain drops about 0.4 m).
    pub fn new(n: usize) -> Self {
        Self {
            n,
            mass: 1.0,
            spacing: 0.1,
            stiffness: [2e7, 2e7, 5e7],
            end_load: 0.0,
            gravity: true,
        }
    }

    /// Analytic static vertical displacement of body `i` (0 = top): bushing j carries the weight
    /// of bodies j..n plus the end load, so u_i = −Σ_{j≤i} ((n − j) m g + F) / k_z. The loads act
    /// on the vertical line through all centres and markers, so there is no rotation and the
    /// linear bushing law makes this exact.
    pub fn displacement(&self, i: usize) -> f64 {
        let g = if self.gravity { 9.81 } else { 0.0 };
        -(0..=i)
            .map(|j| ((self.n - j) as f64 * self.mass * g + self.end_load) / self.stiffness[2])
            .sum::<f64>()
    }
}

/// TOML of an N-body chain hanging from the ground: body `b{i}` at z = −(i + 1) a, bushing `k{i}`
/// at z = −(i + ½) a between body i (marker I) and body i − 1 (or the ground, marker J),
/// light damping, optional constant end load on the last body (input `F_end`) and output
/// channels for the last body's displacement and the top bushing's force.
pub fn bushing_chain_toml(c: &Chain) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let g = if c.gravity { -9.81 } else { 0.0 };
    let _ = writeln!(
        s,
        "[model]\nname = \"bushing_chain_{}\"\nground = \"ground\"\ngravity = [0.0, 0.0, {g}]\n\n[initial_state]\nkind = \"equilibrium\"\n",
        c.n
    );
    let inertia = c.mass * c.spacing * c.spacing / 6.0;
    for i in 0..c.n {
        let z = -((i + 1) as f64) * c.spacing;
        let zb = -(i as f64 + 0.5) * c.spacing;
        let parent = if i == 0 {
            "ground".to_string()
        } else {
            format!("b{}", i - 1)
        };
        let [kx, ky, kz] = c.stiffness;
        let _ = write!(
            s,
            "[[bodies]]\nname = \"b{i}\"\nmass = {m}\nposition = [0.0, 0.0, {z}]\ninertia = {{ principal = [{inertia}, {inertia}, {inertia}] }}\n\n\
             [[markers]]\nname = \"k{i}.I\"\nbody = \"b{i}\"\nglobal_position = [0.0, 0.0, {zb}]\n\n\
             [[markers]]\nname = \"k{i}.J\"\nbody = \"{parent}\"\nglobal_position = [0.0, 0.0, {zb}]\n\n\
             [[force_elements]]\ntype = \"bushing\"\nname = \"k{i}\"\nmarker_i = \"k{i}.I\"\nmarker_j = \"k{i}.J\"\n\
             stiffness = [{kx}, {ky}, {kz}]\nrot_stiffness = [2000.0, 2000.0, 1000.0]\n\
             damping = [20.0, 20.0, 50.0]\nrot_damping = [0.01, 0.01, 0.01]\n\n",
            m = c.mass
        );
    }
    let last = c.n - 1;
    let _ = write!(
        s,
        "[[markers]]\nname = \"tip\"\nbody = \"b{last}\"\nposition = [0.0, 0.0, 0.0]\n\n\
         [[inputs]]\nname = \"F_end\"\nkind = \"force\"\nmarker = \"tip\"\nframe = \"global\"\n\
         direction = [0.0, 0.0, -1.0]\nsignal = {{ type = \"constant\", value = {f} }}\n\n\
         [[outputs]]\nname = \"tip_dz\"\nquantity = \"displacement\"\nbody = \"b{last}\"\ncomponent = \"z\"\n\n\
         [[outputs]]\nname = \"top_Fz\"\nquantity = \"force\"\nelement = \"k0\"\ncomponent = \"z\"\n",
        f = c.end_load
    );
    s
}
