//! The mass-matrix fragment ([`sprung_accel::codegen::mass_matrix`]) alone against the generic
//! code, without the generated kinematics: a test plugin whose function `mz{t}` runs tree t's
//! fragment on a flat buffer that [`ReferenceKernel`] filled (so the frames and J_b rows it
//! reads are the generic ones) with the M_b J_b and factor parts zeroed; both parts must then
//! equal the reference's. The fragment performs the generic operations in their order
//! (products with exact zeros left out, constants folded by the same operations), so they are
//! compared for equality, not to round-off.
//! A model whose coordinate moves no mass must give the generic code's singular coordinate.

use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::Vector3;
use sprung_accel::AccelOptions;
use sprung_accel::codegen::{Generated, mass_matrix};
use sprung_mbs::CompiledModel;
use sprung_mbs::joints::axis_rotation;
use sprung_mbs::tree_kernel::{FlatLayout, ReferenceKernel, TreeKernel};

mod common;
use common::{load, moving_state};

/// An owned copy of the example model `name` (the tests change it).
fn owned(name: &str) -> CompiledModel {
    CompiledModel::clone(&load(name))
}

/// The test plugin of `model`: per tree t an export `mz{t}(flat) -> i64` (−1, or the singular
/// coordinate) running the fragment alone, built as the accelerator builds its plugins.
struct MzPlugin {
    funcs: Vec<unsafe extern "C" fn(*mut f64) -> i64>,
    _lib: libloading::Library,
}

impl MzPlugin {
    fn build(model: &CompiledModel) -> Self {
        let mut text = String::from("#![allow(unused, clippy::all, non_snake_case)]\n");
        let mut lens = Vec::new();
        for (t, tree) in model.joints.trees.iter().enumerate() {
            let len = FlatLayout::of(tree).len;
            lens.push(len);
            text.push_str(&format!(
                "\nfn tree{t}_mz(s: &mut [f64; {len}]) -> Result<(), usize> {{\n"
            ));
            mass_matrix::emit(model, t, &mut text).expect("fragment");
            text.push_str(&format!(
                "    Ok(())\n}}\n\n/// # Safety\n/// `flat` addresses {len} values.\n\
                 #[unsafe(no_mangle)]\npub unsafe extern \"C\" fn mz{t}(flat: *mut f64) -> i64 {{\n    \
                 match tree{t}_mz(unsafe {{ &mut *(flat as *mut [f64; {len}]) }}) {{ Ok(()) => -1, Err(k) => k as i64 }}\n}}\n"
            ));
        }
        // (A key of the text alone: the build cache only needs it to differ between sources.)
        let key = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let src = Generated {
            model: model.name.clone(),
            text,
            key,
            n_r: model.n_r(),
            n_v: model.n_v(),
            flat_lens: lens,
            force_elements: vec![],
            n_bodies: model.bodies.len(),
        };
        let opts = AccelOptions {
            cache_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("accel-mz")),
            ..AccelOptions::default()
        };
        let built = sprung_accel::build::build(&src, &opts).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: the library was built just now from the source above, which exports
        // `mz{t}` with this signature and runs no initialisers.
        let lib = unsafe { libloading::Library::new(&built.library) }.expect("load");
        let funcs = (0..src.flat_lens.len())
            .map(|t| {
                // SAFETY: as above; the pointer is copied out while `lib` lives in `Self`.
                unsafe {
                    *lib.get::<unsafe extern "C" fn(*mut f64) -> i64>(format!("mz{t}").as_bytes())
                        .expect("symbol")
                }
            })
            .collect();
        Self { funcs, _lib: lib }
    }

    /// Tree t's fragment on `flat` (of tree t's length).
    fn run(&self, t: usize, flat: &mut [f64]) -> Result<(), usize> {
        // SAFETY: `flat` has tree t's flat length (the callers' buffers are of its layout).
        let k = unsafe { (self.funcs[t])(flat.as_mut_ptr()) };
        if k < 0 { Ok(()) } else { Err(k as usize) }
    }
}

/// A flat buffer and the result that filled it.
type Run = (Vec<f64>, Result<(), usize>);

/// The reference's buffer at (r, v) and the fragment's on it (M_b J_b and the factor zeroed
/// first), with the results of both.
fn both(
    model: &Arc<CompiledModel>,
    plugin: &MzPlugin,
    t: usize,
    r: &[f64],
    v: &[f64],
) -> (Run, Run) {
    let tree = &model.joints.trees[t];
    let l = FlatLayout::of(tree);
    let mut want = l.initial(tree);
    let res_want = ReferenceKernel::new(model.clone()).kinematics(t, r, v, &mut want);
    let mut got = want.clone();
    got[l.mj..l.chol + l.n * l.n].fill(0.0);
    let res_got = plugin.run(t, &mut got);
    ((want, res_want), (got, res_got))
}

/// The slider with its body turned against the carrier (a design rotation R_rel ≠ I: the
/// fragment's constant J_b entries of a prismatic joint on the root are R_relᵀ e_k).
fn turned_slider() -> CompiledModel {
    let mut m = owned("joint_slider.toml");
    for d in m.joints.defs.iter_mut().flatten() {
        d.rel0 = axis_rotation(&Vector3::new(0.3, -0.5, 0.8).normalize(), 0.7) * d.rel0;
        d.rel0_identity = false;
    }
    m.name = "joint_slider (turned)".into();
    m
}

#[test]
fn the_fragment_gives_the_generic_mass_matrix_and_factor() {
    let models = [
        owned("joint_pendulum.toml"),
        owned("joint_slider.toml"),
        owned("joint_tabulated.toml"),
        turned_slider(),
    ];
    for model in models {
        let name = model.name.clone();
        let model = Arc::new(model);
        let plugin = MzPlugin::build(&model);
        for (t, tree) in model.joints.trees.iter().enumerate() {
            let l = FlatLayout::of(tree);
            for s in [0.0, 1.0, -0.7, 2.0] {
                let (r, v) = moving_state(&model, s);
                let ((want, rw), (got, rg)) = both(&model, &plugin, t, &r, &v);
                assert_eq!(rw, Ok(()), "{name}: the reference is regular");
                assert_eq!(rg, Ok(()), "{name} tree {t} at {s}");
                for (part, from, to) in [("mj", l.mj, l.chol), ("chol", l.chol, l.chol + l.n * l.n)]
                {
                    for i in from..to {
                        assert!(
                            got[i] == want[i],
                            "{name} tree {t} at {s}: {part}[{}] = {:e}, the generic code's {:e}",
                            i - from,
                            got[i],
                            want[i]
                        );
                    }
                }
            }
        }
    }
}

/// Singular M_z: the pendulum with its centre of mass on the joint axis and no inertia (the
/// generated pivot check at the state: J_b's translation column is 0 there), and the slider
/// carried by its free root with no mass on its coordinate (the fragment returns at once).
#[test]
fn a_coordinate_without_mass_is_singular_where_the_generic_code_says() {
    let mut pendulum = owned("joint_pendulum.toml");
    let b = pendulum.joints.trees[0].bodies[0];
    let def = pendulum.joints.defs[b].as_mut().expect("jointed");
    def.s0 = def.point;
    pendulum.bodies[b].inertia.fill(0.0);
    let mut slider = owned("joint_slider.toml");
    let tree = &slider.joints.trees[0];
    let lb = tree
        .joint_coord
        .iter()
        .position(Option::is_some)
        .expect("a joint");
    let b = tree.bodies[lb];
    slider.bodies[b].mass = 0.0;
    slider.bodies[b].inertia.fill(0.0);
    for model in [pendulum, slider] {
        let model = Arc::new(model);
        let plugin = MzPlugin::build(&model);
        let (r, v) = moving_state(&model, 1.0);
        let ((_, rw), (_, rg)) = both(&model, &plugin, 0, &r, &v);
        assert!(rw.is_err(), "{}: the generic M_z is singular", model.name);
        assert_eq!(rg, rw, "{}", model.name);
    }
}
