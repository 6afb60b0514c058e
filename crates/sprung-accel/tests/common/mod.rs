//! Helpers shared by the accelerator's integration tests (`mod common;` in a test file).
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sprung_accel::AccelOptions;
use sprung_mbs::{CompiledModel, compile};

/// The example models with joint trees.
pub const JOINT_MODELS: [&str; 3] = [
    "joint_pendulum.toml",
    "joint_slider.toml",
    "joint_tabulated.toml",
];

/// The compiled example model `name` of `models/`.
pub fn load(name: &str) -> Arc<CompiledModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

/// A model compiled from TOML text (`file` names it in errors).
pub fn from_toml(src: &str, file: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, file).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

/// The tests' plugin cache (inside the build's target directory).
pub fn options() -> AccelOptions {
    AccelOptions {
        cache_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("accel")),
        ..AccelOptions::default()
    }
}

/// Every jointed body off its design pose and moving, the free bodies moving too (scaled by
/// `s`).
pub fn moving_state(model: &CompiledModel, s: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut r, mut v) = model.design_state();
    for (b, d) in model.joints.defs.iter().enumerate() {
        if d.is_some() {
            r[7 * b] += 0.05 * s;
            v[6 * b] += 0.3 * s;
        } else {
            v[6 * b..6 * b + 6].copy_from_slice(&[0.2 * s, -0.1, 0.05, 0.3, -0.2 * s, 0.1]);
        }
    }
    (r, v)
}
