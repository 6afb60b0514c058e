//! The generated spline groups' evaluation (`tree{t}_splines`,
//! [`sprung_mbs::tree_kernel::TreeKernel::spline_groups`]) against the generic code
//! ([`sprung_mbs::joints::SplineGroup::eval_into`]) on models/joint_tabulated.toml (a 2D table
//! with a follower) and a 1D variant of it: bit-identical slots, with the native and the
//! baseline-CPU plugin, at many coordinates inside the grid (on every node, the last one
//! included, one ulp beside nodes, between them); every
//! coordinate outside the grid left to the host, whose generic path extrapolates and records
//! the excursion (through [`MbsSystem`] with the plugin, and a whole run: the same messages as
//! the generic run's).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sprung_accel::{AccelOptions, accelerate};
use sprung_mbs::simulate::{RunSettings, run};
use sprung_mbs::tree_kernel::FlatLayout;
use sprung_mbs::{CompiledModel, MbsSystem};
use sprung_model::{KinematicTable, SPLINE_SLOTS, SplineBasis};
use sprung_solve::mech::MechanicalSystem;
use sprung_solve::mech::adaptive::Control;

mod common;
use common::{from_toml, load, options};

/// Coordinates of an axis with grid `g` inside its range: every node, its neighbours one ulp
/// away (inside), the midpoints and some points at irregular fractions of each cell.
fn inside_points(g: &[f64]) -> Vec<f64> {
    let mut xs = Vec::new();
    for (i, &gi) in g.iter().enumerate() {
        xs.push(gi);
        if i > 0 {
            xs.push(gi.next_down());
        }
        if i + 1 < g.len() {
            xs.push(gi.next_up());
            let h = g[i + 1] - gi;
            for f in [0.5, 0.137, 0.911] {
                xs.push(gi + f * h);
            }
        }
    }
    xs
}

/// joint_tabulated.toml with a 1D table: the arm's and the link's poses at the slider's
/// design travel (slider grid index 5) over the swing angle, the arm on its own coordinate, the
/// link following it.
fn one_axis_model() -> Arc<CompiledModel> {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let table_path = models.join("tables/joint_tabulated_arm.toml");
    let mut table = KinematicTable::load(&table_path).unwrap_or_else(|e| panic!("{e}"));
    let n2 = table.axes[1].grid.len();
    let i1 = 5;
    assert_eq!(table.axes[0].grid[i1], 0.0);
    table.axes.remove(0);
    for b in &mut table.bodies {
        b.position = b.position[i1 * n2..(i1 + 1) * n2].to_vec();
        b.rotation = b.rotation[i1 * n2..(i1 + 1) * n2].to_vec();
    }
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("splines_arm_1d.toml");
    std::fs::write(&path, table.to_toml_string()).expect("write the table");
    let src = std::fs::read_to_string(models.join("joint_tabulated.toml"))
        .expect("the model")
        .replace(
            "tables/joint_tabulated_arm.toml",
            &path.display().to_string(),
        )
        .replace(
            r#"coordinates = ["slider", "self"]"#,
            r#"coordinates = ["self"]"#,
        )
        .replace(
            r#"coordinates = ["slider", "arm"]"#,
            r#"coordinates = ["arm"]"#,
        );
    from_toml(&src, "joint_tabulated_1d.toml")
}

#[test]
fn generated_groups_are_bit_identical_to_the_generic_evaluation_inside_the_grid() {
    // The native plugin (vectors of this CPU's width) and the baseline one (SSE2 pairs on
    // x86-64): the generated code's lanes differ, the slots must not.
    for native in [true, false] {
        let opts = AccelOptions {
            native,
            ..options()
        };
        let two = bit_identical_inside(&load("joint_tabulated.toml"), &opts);
        let one = bit_identical_inside(&one_axis_model(), &opts);
        assert_eq!((two, one), ([1, 0], [0, 1]), "the tables' axes");
    }
}

/// The bit-identity check on every group of `model` with the plugin built with `opts`; the
/// number of groups with 2 and 1 axes.
fn bit_identical_inside(model: &Arc<CompiledModel>, opts: &AccelOptions) -> [usize; 2] {
    let (kernel, _) = accelerate(model, opts).unwrap_or_else(|e| panic!("{e}"));
    let mut dims = [0; 2];
    let (r0, _) = model.design_state();
    let mut checked = 0;
    for (t, tree) in model.joints.trees.iter().enumerate() {
        let l = FlatLayout::of(tree);
        for (gi, grp) in tree.groups.iter().enumerate() {
            let sp = &grp.spline;
            dims[2 - sp.dims()] += 1;
            assert!(grp.second > 0 && grp.second < sp.channels(), "mixed group");
            let axes: Vec<Vec<f64>> = (0..sp.dims())
                .map(|k| inside_points(&sp.raw().0[k]))
                .collect();
            let second_axis = axes.get(1).cloned().unwrap_or_else(|| vec![0.0]);
            let (o, len) = (l.gev[gi], SPLINE_SLOTS * sp.channels());
            for &c1 in &axes[0] {
                for &c2 in &second_axis {
                    let mut r = r0.clone();
                    for (k, &src) in grp.sources.iter().enumerate() {
                        r[7 * src] = [c1, c2][k];
                    }
                    // Both from the same buffer of sentinels: the slots neither writes stay.
                    let mut want = vec![7.25; l.len];
                    let mut got = want.clone();
                    let mut bs = SplineBasis::default();
                    grp.eval_into(grp.coordinates(&r), &mut bs, &mut want[o..o + len]);
                    let host = kernel.spline_groups(t, &r, &mut got);
                    assert_eq!(host & (1 << gi), 0, "group {gi} at ({c1}, {c2}) is inside");
                    for (s, (a, b)) in got[o..o + len].iter().zip(&want[o..o + len]).enumerate() {
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "tree {t} group {gi} at ({c1:e}, {c2:e}): slot entry {s}: {a:e} vs {b:e}"
                        );
                    }
                    checked += 1;
                }
            }
            assert!(sp.excursion(0).is_none(), "no excursion inside the grid");
        }
    }
    assert!(checked > 100, "{checked} points");
    dims
}

#[test]
fn coordinates_outside_the_grid_are_left_to_the_host_which_records_the_excursion() {
    let model = load("joint_tabulated.toml");
    let (kernel, _) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
    let (r0, v0) = model.design_state();
    let tree = &model.joints.trees[0];
    let l = FlatLayout::of(tree);
    let (gi, grp) = tree
        .groups
        .iter()
        .enumerate()
        .find(|(_, g)| g.spline.dims() == 2)
        .expect("a 2D group");
    let sp = &grp.spline;
    // Just outside each end of each axis (one ulp, and far).
    for k in 0..sp.dims() {
        let (lo, hi) = sp.range(k);
        for x in [
            lo.next_down(),
            lo - 0.3 * (hi - lo),
            hi.next_up(),
            hi + 0.01,
        ] {
            let mut r = r0.clone();
            r[7 * grp.sources[k]] = x;
            let mut flat = vec![7.25; l.len];
            let host = kernel.spline_groups(0, &r, &mut flat);
            assert_ne!(host & (1 << gi), 0, "axis {k} at {x:e} is outside");
            let o = l.gev[gi];
            assert!(
                flat[o..o + SPLINE_SLOTS * sp.channels()]
                    .iter()
                    .all(|&y| y == 7.25),
                "a group left to the host is not written"
            );
        }
    }
    // Through the system with the plugin installed: inside, nothing recorded; outside, the
    // host's path records the excursion, and the accelerations equal the generic system's
    // (to round-off of the generated kinematics).
    let mut fast = MbsSystem::new(model.clone());
    fast.set_tree_kernel(Some(kernel));
    let mut plain = MbsSystem::new(model.clone());
    sp.reset_excursions();
    let mut q = vec![0.0; fast.n_v()];
    fast.accelerations(0.0, &r0, &v0, &mut q);
    assert!(sp.excursion(0).is_none() && sp.excursion(1).is_none());
    let (lo, hi) = sp.range(1);
    let mut r = r0.clone();
    let x = hi + 0.25 * (hi - lo);
    r[7 * grp.sources[1]] = x;
    fast.accelerations(0.0, &r, &v0, &mut q);
    assert_eq!(sp.excursion(1), Some((f64::INFINITY, x)));
    assert!(sp.excursion(0).is_none());
    let mut qp = vec![0.0; plain.n_v()];
    plain.accelerations(0.0, &r, &v0, &mut qp);
    let scale = qp.iter().fold(0.0f64, |m, y| m.max(y.abs()));
    let d = q
        .iter()
        .zip(&qp)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(d <= 1e-12 * scale, "outside: q differs by {:e}", d / scale);
}

/// A run started with the slider outside the table's travel: with the plugin installed the
/// run reports the same excursions as the generic run (the messages `sprung run` prints), and
/// the same final state (q's generated kinematics to round-off).
#[test]
fn a_run_outside_the_table_reports_the_same_excursions_with_the_plugin() {
    let mut msgs = Vec::new();
    let mut ends = Vec::new();
    for plugin in [false, true] {
        let model = load("joint_tabulated.toml");
        let mut sys = MbsSystem::new(model.clone());
        if plugin {
            let (kernel, _) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
            sys.set_tree_kernel(Some(kernel));
        }
        let slider = model
            .bodies
            .iter()
            .position(|b| b.name == "slider")
            .expect("the slider");
        let (mut r, mut v) = model.design_state();
        r[7 * slider] = 0.3; // the table's slider axis ends at 0.25
        let settings = RunSettings::fixed_step("lsrt2", 1e-3, 0.2);
        run(&mut sys, &settings, &mut r, &mut v, &mut |_, _, _| {
            Control::Continue
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let m = model.joints.table_excursions(&model);
        assert!(!m.is_empty(), "the run left the table");
        msgs.push(m);
        ends.push([r, v].concat());
    }
    assert_eq!(msgs[0], msgs[1]);
    let scale = ends[0].iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let d = ends[0]
        .iter()
        .zip(&ends[1])
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-10 * scale, "{:e}", d / scale);
}
