//! Shared helpers for the sprung-mbs integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use sprung_mbs::{CompiledModel, MbsSystem, compile};
#[allow(unused_imports)] // each test binary uses a different subset
pub use sprung_test_support::{ALL_ELEMENTS, Rng, max_rel_diff};

/// Compiles a TOML model given as a string.
pub fn model_from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap())
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
