//! Every generated kernel against the generic code ([`ReferenceKernel`]) on the example models
//! with joints: the kinematics' flat buffer and the projected accelerations at moving states to
//! round-off, and LSRT2 runs with the plugin installed against the generic system's.
//!
//! The kinematics and the projection are exactly equal (`==`, so only the sign of a zero may
//! differ): the generated code performs the generic code's floating-point operations in the
//! generic order (only products with exact zeros and ones are left out; Rust contracts no
//! multiply-add into an FMA unless asked), so any difference is a generator bug. The failure
//! messages give the largest difference relative to the magnitude of the part of the buffer it
//! is in. Runs with the plugin agree to round-off only: its point-to-point force elements
//! (`codegen/forces.rs`, tests/forces.rs) add one wrench per marker pair where the packs add one
//! per element and fuse multiply-adds in AVX2 lanes (measured: 3e-16 of the state's magnitude
//! after 0.3 s; asserted ≤ 1e-12).

use sprung_accel::accelerate;
use sprung_mbs::MbsSystem;
use sprung_mbs::simulate::{RunSettings, run};
use sprung_mbs::tree_kernel::{FlatLayout, ReferenceKernel, TreeKernel};
use sprung_solve::mech::MechanicalSystem;
use sprung_solve::mech::adaptive::Control;

mod common;
use common::{JOINT_MODELS, load, moving_state, options};

/// The largest difference of `a` and `b` over each part of the layout relative to the part's
/// largest magnitude in `b`, with the part's name.
fn worst_part(l: &FlatLayout, a: &[f64], b: &[f64]) -> (f64, &'static str) {
    let g0 = l.gev.first().copied().unwrap_or(l.len);
    let parts = [
        ("frames", l.frames, l.acc),
        ("acc", l.acc, l.dcols),
        ("dcols", l.dcols, l.jac),
        ("jac", l.jac, l.mj),
        ("mj", l.mj, l.chol),
        ("chol", l.chol, g0),
        ("gev", g0, l.len),
    ];
    let mut worst = (0.0, "none");
    for (name, from, to) in parts {
        let scale = b[from..to].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let d = a[from..to]
            .iter()
            .zip(&b[from..to])
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        let rel = if scale > 0.0 { d / scale } else { d };
        // (A NaN difference counts as the worst.)
        if rel > worst.0 || rel.is_nan() {
            worst = (rel, name);
        }
    }
    worst
}

#[test]
fn generated_kinematics_and_projection_match_the_generic_code() {
    for name in JOINT_MODELS {
        let model = load(name);
        let (kernel, built) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
        assert!(built.library.is_file() && built.source.is_file());
        let reference = ReferenceKernel::new(model.clone());
        for (t, tree) in model.joints.trees.iter().enumerate() {
            let l = FlatLayout::of(tree);
            for s in [1.0, -0.7, 2.0] {
                let (r, v) = moving_state(&model, s);
                let mut want = l.initial(tree);
                reference.kinematics(t, &r, &v, &mut want).expect("regular");
                let mut got = l.initial(tree);
                // The host fills the spline groups' evaluations (JointWork): taken from the
                // reference here.
                if let Some(&g0) = l.gev.first() {
                    got[g0..].copy_from_slice(&want[g0..]);
                }
                kernel.kinematics(t, &r, &v, &mut got).expect("regular");
                let (rel, part) = worst_part(&l, &got, &want);
                assert!(
                    rel == 0.0,
                    "{name} tree {t} at {s}: {part} differs by {rel:e} of its scale"
                );
                // The projection of some free-body accelerations.
                let n_v = model.n_v();
                let q0: Vec<f64> = (0..n_v)
                    .map(|i| ((i * 7919) % 113) as f64 / 17.0 - 3.0)
                    .collect();
                let (mut qa, mut qb) = (q0.clone(), q0);
                reference.project(t, &want, &mut qa);
                kernel.project(t, &want, &mut qb);
                let scale = qa.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let d = qa
                    .iter()
                    .zip(&qb)
                    .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
                assert!(
                    d == 0.0,
                    "{name} tree {t} at {s}: projection differs by {:e}",
                    d / scale
                );
            }
        }
    }
}

/// LSRT2 runs (re-linearised every step through the generic code) with the plugin installed
/// are the generic system's: 0.3 s, the same final state and q there to round-off (module
/// docs).
#[test]
fn runs_with_the_plugin_follow_the_generic_runs() {
    for name in JOINT_MODELS {
        let model = load(name);
        let (kernel, _) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
        let mut plain = MbsSystem::new(model.clone());
        let mut fast = MbsSystem::new(model.clone());
        fast.set_tree_kernel(Some(kernel));
        let settings = RunSettings::fixed_step("lsrt2", 1e-3, 0.3);
        let mut ends = Vec::new();
        for sys in [&mut plain, &mut fast] {
            let (mut r, mut v) = moving_state(&model, 1.0);
            run(sys, &settings, &mut r, &mut v, &mut |_, _, _| {
                Control::Continue
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            ends.push([r, v].concat());
        }
        let scale = ends[0].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let d = ends[0]
            .iter()
            .zip(&ends[1])
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(d <= 1e-12 * scale, "{name}: {:e}", d / scale);
        // q at the end state agrees too.
        let (r, v) = ends[1].split_at(model.n_r());
        let (mut qa, mut qb) = (vec![0.0; plain.n_v()], vec![0.0; fast.n_v()]);
        plain.accelerations(0.3, r, v, &mut qa);
        fast.accelerations(0.3, r, v, &mut qb);
        let scale = qa.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let d = qa
            .iter()
            .zip(&qb)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(d <= 1e-12 * scale, "{name}: q differs by {:e}", d / scale);
    }
}

/// A cached plugin is loaded without compiling; a plugin of another model is refused.
#[test]
fn the_cache_is_keyed_by_the_model() {
    let a = load("joint_pendulum.toml");
    let b = load("joint_slider.toml");
    let (_, first) = accelerate(&a, &options()).unwrap_or_else(|e| panic!("{e}"));
    let (_, again) = accelerate(&a, &options()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!again.compiled && again.library == first.library);
    let src_b = sprung_accel::codegen::source(&b).expect("source");
    let err =
        sprung_accel::Plugin::load(&first.library, &src_b).expect_err("another model's plugin");
    assert!(err.to_string().contains("another model"), "{err}");
}
