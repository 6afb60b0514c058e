//! The hook for model-specific evaluation paths of the joint trees (`sprung_mbs::tree_kernel`):
//! the flat layout's round trip, and the reference kernel (the generic code through the flat
//! layout) installed on a system gives the generic system's accelerations and runs to the bit
//! on every example model with joints.

use std::path::Path;
use std::sync::Arc;

use sprung_mbs::joints::TreeKin;
use sprung_mbs::simulate::{RunSettings, run};
use sprung_mbs::tree_kernel::{FlatLayout, ReferenceKernel, TreeKernel};
use sprung_mbs::{CompiledModel, MbsSystem, compile};
use sprung_solve::mech::MechanicalSystem;
use sprung_solve::mech::adaptive::Control;

const MODELS: [&str; 3] = [
    "joint_pendulum.toml",
    "joint_slider.toml",
    "joint_tabulated.toml",
];

fn load(name: &str) -> Arc<CompiledModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

/// Every jointed body off its design pose and moving, the free bodies moving too.
fn moving_state(model: &CompiledModel, s: f64) -> (Vec<f64>, Vec<f64>) {
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

/// A tree's kinematics written into its flat buffer and read back is the same to the bit.
#[test]
fn the_flat_layout_round_trips() {
    for name in MODELS {
        let model = load(name);
        for (t, tree) in model.joints.trees.iter().enumerate() {
            let layout = FlatLayout::of(tree);
            let (r, v) = moving_state(&model, 1.0);
            let mut kin = TreeKin::new(tree);
            model
                .joints
                .tree_kinematics(
                    &model,
                    t,
                    &r,
                    &v,
                    sprung_mbs::joints::Perturb::None,
                    &mut kin,
                )
                .unwrap_or_else(|e| panic!("{e}"));
            let mut a = layout.initial(tree);
            kin.write_flat(tree, &layout, &mut a);
            let mut back = TreeKin::new(tree);
            back.read_flat(&layout, &a);
            let mut b = layout.initial(tree);
            back.write_flat(tree, &layout, &mut b);
            assert!(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{name} tree {t}"
            );
            // The frames are where the layout says.
            for lb in 0..tree.bodies.len() {
                let f = layout.frame(&a, lb);
                assert_eq!(f.rot, kin.frames[lb].rot, "{name} tree {t} body {lb}");
                assert_eq!(f.w, kin.frames[lb].w, "{name} tree {t} body {lb}");
            }
        }
    }
}

/// With the reference kernel installed, q at moving states and a whole LSRT2 run (which
/// re-linearises through the generic code) are those of the generic system to the bit.
#[test]
fn the_reference_kernel_gives_the_generic_results_to_the_bit() {
    for name in MODELS {
        let model = load(name);
        let mut plain = MbsSystem::new(model.clone());
        let mut fast = MbsSystem::new(model.clone());
        let kernel: Arc<dyn TreeKernel> = Arc::new(ReferenceKernel::new(model.clone()));
        fast.set_tree_kernel(Some(kernel));
        assert!(fast.has_tree_kernel() && !plain.has_tree_kernel());
        for s in [1.0, -0.7, 2.0] {
            let (r, v) = moving_state(&model, s);
            let mut qa = vec![0.0; plain.n_v()];
            let mut qb = vec![1.0; fast.n_v()];
            plain.accelerations(0.1, &r, &v, &mut qa);
            fast.accelerations(0.1, &r, &v, &mut qb);
            assert!(
                qa.iter().zip(&qb).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{name} at scale {s}: {qa:?} vs {qb:?}"
            );
        }
        let settings = RunSettings::fixed_step("lsrt2", 1e-3, 0.3);
        let mut ends = Vec::new();
        for sys in [&mut plain, &mut fast] {
            let (mut r, mut v) = moving_state(&model, 1.0);
            run(sys, &settings, &mut r, &mut v, &mut |_, _, _| {
                Control::Continue
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            ends.push((r, v));
        }
        assert_eq!(ends[0], ends[1], "{name}");
    }
}
