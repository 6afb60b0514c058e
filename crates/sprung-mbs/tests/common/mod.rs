//! Shared helpers for the sprung-mbs integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use sprung_mbs::{CompiledModel, MbsSystem, compile};

/// Compiles a TOML model given as a string.
pub fn model_from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap())
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
