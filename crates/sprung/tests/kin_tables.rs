//! Kinematic tables from the full model (`sprung::kin_tables`, `docs/macro-joint.md`, "Kinematic
//! tables"): the ideal-joint limit, the design point, the full axle with stiffened corner
//! bushings on the K&C rig as an independent second path, mirror symmetry, errors. Coarse grids:
//! each test takes a second or less.

use std::sync::Arc;

use nalgebra::Vector3;
use sprung::kin_tables::{self, CornerTable, KinError, KinOptions, grid};
use sprung::{Model, kc};

#[path = "common/stiffen.rs"]
mod stiffen;
use stiffen::stiffen_translational;

fn model(name: &str) -> Arc<Model> {
    Model::from_file(sprung_test_support::model_path(name)).unwrap()
}

fn tables_with(m: &Model, travel: Vec<f64>, rack: Option<Vec<f64>>, f: f64) -> Vec<CornerTable> {
    let opts = KinOptions {
        travel,
        rack,
        rotational_factor: f,
        ..Default::default()
    };
    kin_tables::kinematic_tables(m, &opts, &mut |_, _, _, _| {}).unwrap()
}

fn tables(m: &Model, travel: Vec<f64>, f: f64) -> Vec<CornerTable> {
    tables_with(m, travel, None, f)
}

fn max_gap(t: &CornerTable) -> f64 {
    t.max_gap.iter().cloned().fold(0.0, f64::max)
}

/// Largest difference of toe and camber (deg) between two tables on the same grid.
fn curve_difference(a: &CornerTable, b: &CornerTable) -> (f64, f64) {
    (0..a.points()).fold((0.0, 0.0), |(t, c), k| {
        let (wa, wb) = (a.wheel(k), b.wheel(k));
        (
            f64::max(t, (wa.toe - wb.toe).abs()),
            f64::max(c, (wa.camber - wb.camber).abs()),
        )
    })
}

/// (a) Ideal joints in the limit: the two markers of every kept bushing separate (in the
/// bushing's stiff directions) in proportion to the rotational factor, and the toe and camber
/// curves converge linearly to the ideal-joint limit.
#[test]
fn bushing_markers_close_in_proportion_to_the_rotational_factor() {
    let m = model("double_wishbone.toml");
    let travel = grid(-0.08, 0.08, 0.04).unwrap();
    let factors = [1e-1, 1e-2, 1e-3];
    let ts: Vec<CornerTable> = factors
        .iter()
        .map(|&f| tables(&m, travel.clone(), f).remove(0))
        .collect();
    let gaps: Vec<f64> = ts.iter().map(max_gap).collect();
    println!("largest marker separation over ±80 mm: {gaps:?} (factors {factors:?})");
    for (g, f) in gaps.iter().zip(factors) {
        // measured 1.170e-4 m × factor; 5 % around it
        let per = g / f;
        assert!(
            (1.11e-4..1.23e-4).contains(&per),
            "separation {g:.3e} at factor {f}"
        );
    }
    // Toe and camber: differences between successive factors shrink by 10 (linear convergence).
    let d1 = curve_difference(&ts[0], &ts[1]);
    let d2 = curve_difference(&ts[1], &ts[2]);
    println!("toe/camber change 1e-1 -> 1e-2: {d1:?} deg, 1e-2 -> 1e-3: {d2:?} deg");
    for (a, b) in [(d1.0, d2.0), (d1.1, d2.1)] {
        assert!((8.5..11.5).contains(&(a / b)), "{a:.3e} / {b:.3e}");
    }
    // The default factor's (1e-3) distance from the limit (geometric series: d2/10 + d2/100 +
    // ... = d2/9): below 1e-5 deg in toe, 1e-4 deg in camber (measured 4.3e-6, 4.5e-5).
    assert!(d2.0 / 9.0 < 1e-5 && d2.1 / 9.0 < 1e-4, "{d2:?}");
}

/// Design poses of every body relative to the parent (position, design orientation R_rel,0).
fn design_poses(m: &Model, t: &CornerTable) -> Vec<Vector3<f64>> {
    let cm = m.compiled();
    let parent = cm.bodies.iter().find(|b| b.name == t.table.parent);
    let (pp, pr) = parent.map_or((Vector3::zeros(), nalgebra::Matrix3::identity()), |b| {
        (
            b.position,
            sprung_mbs::rotation::quat_to_matrix(&b.orientation),
        )
    });
    t.table
        .bodies
        .iter()
        .map(|tb| {
            let b = cm.bodies.iter().find(|b| b.name == tb.name).unwrap();
            pr.transpose() * (b.position - pp)
        })
        .collect()
}

/// (b) The design point (travel 0, rack 0) of the tables is the design pose of every body, on
/// an axle (parent = the ground) and on the car (parent = the chassis body, a steered corner with
/// the rack held, a rear corner with the subframe held).
#[test]
fn the_design_point_is_the_design_pose() {
    for (name, rack) in [
        ("double_wishbone.toml", None),
        ("car_dw_ml.toml", Some(grid(-0.01, 0.02, 0.01).unwrap())),
    ] {
        let m = model(name);
        let ts = tables_with(
            &m,
            grid(-0.02, 0.04, 0.02).unwrap(),
            rack,
            kin_tables::DEFAULT_ROTATIONAL_FACTOR,
        );
        for t in &ts {
            let k = t.design_index();
            assert_eq!(t.coordinates(k), (0.0, 0.0));
            let design = design_poses(&m, t);
            let mut worst = (0.0f64, 0.0f64);
            for (b, p0) in t.table.bodies.iter().zip(&design) {
                let dp = (Vector3::from(b.position[k]) - p0).amax();
                let dr = Vector3::from(b.rotation[k]).amax();
                worst = (worst.0.max(dp), worst.1.max(dr));
            }
            println!(
                "{name} {}: design point off by {worst:?} (m, rad)",
                t.corner.name
            );
            assert!(worst.0 <= 1e-9 && worst.1 <= 1e-9, "{worst:?}");
            // the wheel centre and the servo force at the design
            assert!(t.servo_force[k].abs() < 1e-6, "{}", t.servo_force[k]);
        }
        if name.starts_with("car") {
            assert!(ts[0].corner.rack.is_some() && ts[2].corner.rack.is_none());
            assert_eq!(ts[0].table.parent, "chassis");
            assert!(ts[2].corner.held.iter().any(|h| h == "rear.subframe"));
        }
    }
}

/// (d) Left and right corners of the mirrored axles are mirror images: position (x, −y, z),
/// rotation vector (−x, y, −z) (an axial vector).
#[test]
fn left_and_right_corners_are_mirror_images() {
    for name in ["double_wishbone.toml", "multilink.toml"] {
        let m = model(name);
        let ts = tables(
            &m,
            grid(-0.08, 0.08, 0.04).unwrap(),
            kin_tables::DEFAULT_ROTATIONAL_FACTOR,
        );
        let (l, r) = (&ts[0], &ts[1]);
        assert_eq!((l.corner.side, r.corner.side), (1.0, -1.0));
        let (mut dp, mut dr) = (0.0f64, 0.0f64);
        for bl in &l.table.bodies {
            let twin = bl.name.replace("_L", "_R");
            let br = r.table.body(&twin).unwrap_or_else(|| panic!("{twin}"));
            for k in 0..l.points() {
                let (pl, pr) = (bl.position[k], br.position[k]);
                let (ql, qr) = (bl.rotation[k], br.rotation[k]);
                dp = dp.max(
                    (pl[0] - pr[0])
                        .abs()
                        .max((pl[1] + pr[1]).abs())
                        .max((pl[2] - pr[2]).abs()),
                );
                dr = dr.max(
                    (ql[0] + qr[0])
                        .abs()
                        .max((ql[1] - qr[1]).abs())
                        .max((ql[2] + qr[2]).abs()),
                );
            }
        }
        println!("{name}: left vs mirrored right {dp:.2e} m, {dr:.2e} rad");
        assert!(dp < 1e-9 && dr < 1e-9, "{dp:.2e} m, {dr:.2e} rad");
    }
}

/// (c) The limit from the other side: the full double-wishbone axle on the K&C rig (gravity,
/// springs, stops, anti-roll bar, the wheel on its bearing; `kc::travel_curves`, parallel
/// travel ±80 mm) with the translational stiffness of every bushing of its corners — links,
/// carrier, bearing — multiplied by F (10 … 300) tends to the ideal-joint table with an error ∝ 1/F (the
/// loads' deflections and the ratio of rotational to translational stiffness both fall as 1/F).
/// F = 1 is the full axle: it differs from the table by the compliance the kinematic corner
/// leaves out. (`sprung_reduce::stiffen_link_bushings`, which scales the rotational stiffness
/// too, tends to the table with rotational factor 1, whose equilibria turn singular on this axle
/// between −50 and −60 mm: `docs/macro-joint.md`.)
#[test]
fn the_full_axle_with_stiff_corner_bushings_tends_to_the_table() {
    let m = model("double_wishbone.toml");
    let travel = grid(-0.08, 0.08, 0.02).unwrap();
    // The ideal-joint limit of the toe, camber and wheel-centre curves, extrapolated from the
    // tables at rotational factors 1e-2 and 1e-3 (linear convergence, test above): the default
    // factor's curves plus a ninth of their change from 1e-2.
    let t2 = tables(&m, travel.clone(), 1e-2).remove(0);
    let t3 = tables(&m, travel.clone(), 1e-3).remove(0);
    let limit: Vec<(f64, f64, f64)> = (0..t3.points())
        .map(|k| {
            let (a, b) = (t2.wheel(k), t3.wheel(k));
            let x = |p: f64, q: f64| q + (q - p) / 9.0;
            (
                x(a.toe, b.toe),
                x(a.camber, b.camber),
                x(a.centre.y, b.centre.y),
            )
        })
        .collect();
    let y0 = limit[t3.design_index()].2;
    let corners = kin_tables::corners(&m, 3.0).unwrap();
    let mut stiffen: Vec<String> = corners.iter().flat_map(|c| c.bodies.clone()).collect();
    stiffen.extend(["wheel_L".to_string(), "wheel_R".to_string()]);
    let curves = |f: f64| -> kc::Sweep {
        let d = stiffen_translational(m.description(), &stiffen, f);
        let mf = Model::from_description(d).unwrap();
        kc::travel_curves(&mf, 0.08, 9).unwrap()
    };
    // largest |difference| of toe, camber (deg), half-track at the wheel centre (m), left corner
    let diff = |s: &kc::Sweep| {
        let (toe, camber, track) = (s.toe(0), s.camber(0), s.half_track_centre(0));
        let mut e = [0.0f64; 3];
        for (k, &x) in s.xs().iter().enumerate() {
            let it = travel.iter().position(|&g| (g - x).abs() < 1e-12).unwrap();
            assert!((s.travel(0)[k] - x).abs() < 1e-8);
            let (lt, lc, ly) = limit[it];
            e[0] = e[0].max((toe[k] - lt).abs());
            e[1] = e[1].max((camber[k] - lc).abs());
            e[2] = e[2].max((track[k] - (ly - y0)).abs());
        }
        e
    };
    let full = diff(&curves(1.0));
    println!(
        "full axle (F = 1) minus ideal-joint table over ±80 mm: toe {:.4} deg, camber {:.4} deg, half-track {:.3e} m",
        full[0], full[1], full[2]
    );
    let factors = [10.0, 30.0, 100.0, 300.0];
    let mut errs = Vec::new();
    for f in factors {
        let e = diff(&curves(f));
        println!(
            "F = {f:e}: K&C minus table: toe {:.3e} deg, camber {:.3e} deg, half-track {:.3e} m",
            e[0], e[1], e[2]
        );
        errs.push(e);
    }
    // ∝ 1/F: F × error is the same for every F, to 5 % (measured 3.3 % from F = 10 to 300,
    // the bushings' curves being not quite linear over the larger deflections at F = 10).
    // (F ≥ 1000 is beyond the K&C rig's static solver: not converging, as docs/macro-joint.md
    // notes for the kinematic variant's ×1000.)
    for q in 0..3 {
        let scaled: Vec<f64> = factors.iter().zip(&errs).map(|(f, e)| f * e[q]).collect();
        let (lo, hi) = scaled
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(hi / lo < 1.05, "F × error {scaled:?}");
    }
    // F = 100 leaves about 1/100 of the compliance (measured 1.1-1.2 %).
    for q in 0..3 {
        let r = errs[2][q] / full[q];
        assert!((0.003..0.03).contains(&r), "{r}");
    }
}

/// Largest spline error of a coarse table against a fine one at the fine grid points that are
/// not coarse grid points: (position m, rotation rad) over all bodies, and (toe, camber) deg of
/// the carrier, with the body of the largest position error.
fn spline_error(coarse: &CornerTable, fine: &CornerTable) -> (f64, f64, f64, f64, String) {
    let on = |g: &[f64], x: f64| g.iter().any(|y| (y - x).abs() < 1e-12);
    let mut e = (0.0f64, 0.0f64, 0.0f64, 0.0f64, String::new());
    for (bi, b) in fine.table.bodies.iter().enumerate() {
        let sp = coarse.table.spline(&b.name).unwrap();
        for k in 0..fine.points() {
            let (s, r) = fine.coordinates(k);
            let g0 = &coarse.table.axes[0].grid;
            let on_grid = on(g0, s) && coarse.table.axes.get(1).is_none_or(|a| on(&a.grid, r));
            if on_grid {
                continue;
            }
            let c = if coarse.table.axes.len() == 2 {
                vec![s, r]
            } else {
                vec![s]
            };
            let v = sp.eval(&c).value;
            let (p, q) = ([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
            let dp = (0..3)
                .map(|i| (p[i] - b.position[k][i]).abs())
                .fold(0.0, f64::max);
            let dq = (0..3)
                .map(|i| (q[i] - b.rotation[k][i]).abs())
                .fold(0.0, f64::max);
            if dp > e.0 {
                e.0 = dp;
                e.4 = b.name.clone();
            }
            e.1 = e.1.max(dq);
            if bi == 0 {
                let (w, wf) = (coarse.wheel_at((s, r), p, q), fine.wheel(k));
                e.2 = e.2.max((w.toe - wf.toe).abs());
                e.3 = e.3.max((w.camber - wf.camber).abs());
            }
        }
    }
    e
}

/// The tables' splines (`KinematicTable::spline`: not-a-knot cubic in travel, bicubic in travel
/// and rack) between the grid points against equilibria solved there (a table on the halved
/// grid): the error falls with h⁴ (×16 per halving) and at the default 10 mm step is far below
/// what the K&C curves resolve.
#[test]
fn splines_between_grid_points_match_the_equilibria() {
    let f = kin_tables::DEFAULT_ROTATIONAL_FACTOR;
    let m = model("double_wishbone.toml");
    let fine = tables(&m, grid(-0.08, 0.08, 0.005).unwrap(), f).remove(0);
    let mut errs = Vec::new();
    for step in [0.02, 0.01] {
        let coarse = tables(&m, grid(-0.08, 0.08, step).unwrap(), f).remove(0);
        let e = spline_error(&coarse, &fine);
        println!(
            "travel step {} mm: position {:.2e} m ({}), rotation {:.2e} rad, toe {:.2e} deg, camber {:.2e} deg",
            step * 1e3,
            e.0,
            e.4,
            e.1,
            e.2,
            e.3
        );
        errs.push(e);
    }
    let m = model("car_dw_ml.toml");
    let fine = tables_with(
        &m,
        grid(-0.04, 0.04, 0.01).unwrap(),
        Some(grid(-0.02, 0.02, 0.005).unwrap()),
        f,
    )
    .remove(0);
    let coarse = tables_with(
        &m,
        grid(-0.04, 0.04, 0.02).unwrap(),
        Some(grid(-0.02, 0.02, 0.01).unwrap()),
        f,
    )
    .remove(0);
    let e2 = spline_error(&coarse, &fine);
    println!(
        "car front_L, steps 20 mm x 10 mm: position {:.2e} m ({}), rotation {:.2e} rad, toe {:.2e} deg, camber {:.2e} deg",
        e2.0, e2.4, e2.1, e2.2, e2.3
    );
    // h⁴ away from the ends, h³ near them (not-a-knot): measured 11.3-13 per halving.
    let (a, b) = (&errs[0], &errs[1]);
    for (x, y) in [(a.0, b.0), (a.1, b.1), (a.2, b.2), (a.3, b.3)] {
        assert!(x / y > 8.0, "{x:.3e} -> {y:.3e}");
    }
    // The default 10 mm step: measured 2.1e-7 m, 2.6e-6 rad, 1.8e-5 deg (toe and camber) —
    // the size of the default rotational factor's distance from ideal joints.
    assert!(
        b.0 < 5e-7 && b.1 < 5e-6 && b.2 < 4e-5 && b.3 < 4e-5,
        "{b:?}"
    );
    // 2D (travel 20 mm × rack 10 mm): measured 1.0e-6 m, 1.0e-5 rad, 1.0e-4 / 1.3e-4 deg.
    assert!(
        e2.0 < 2e-6 && e2.1 < 2e-5 && e2.2 < 3e-4 && e2.3 < 3e-4,
        "{e2:?}"
    );
}

/// The table feeds the tabulated joint (`docs/joints.md`): the double wishbone's carrier on its
/// table (own coordinate: the travel) and the lower arm as a massless follower, falling freely
/// for 0.1 s from the design pose — the wheel centre stays on the table's path (x, y and toe,
/// camber at the travel the wheel centre reached, from the table's spline), so the table's
/// conventions (parent frame, travel = wheel-centre height, rotation vector away from the design
/// orientation) are the joint's.
#[test]
fn the_table_drives_a_tabulated_joint() {
    let m = model("double_wishbone.toml");
    let t = tables(
        &m,
        grid(-0.1, 0.1, 0.01).unwrap(),
        kin_tables::DEFAULT_ROTATIONAL_FACTOR,
    )
    .remove(0);
    let dir = std::env::temp_dir().join(format!("sprung-kin-joint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("L.toml"), t.table.to_toml_string()).unwrap();
    let pos = |name: &str| {
        let b = m.compiled().bodies.iter().find(|b| b.name == name).unwrap();
        format!("[{}, {}, {}]", b.position.x, b.position.y, b.position.z)
    };
    let wc0 = t.wheel(t.design_index()).centre;
    let text = format!(
        r#"
[model]
name = "kinematic_corner"
ground = "chassis"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "carrier_L"
mass = 7.0
position = {}
inertia = {{ principal = [0.055, 0.04, 0.03] }}
joint = {{ type = "tabulated", parent = "chassis", table = "L.toml", coordinates = ["self"] }}

[[bodies]]
name = "lca_L"
mass = 0.0
position = {}
inertia = {{ principal = [0.0, 0.0, 0.0] }}
joint = {{ type = "tabulated", parent = "chassis", table = "L.toml", coordinates = ["carrier_L"] }}

[[markers]]
name = "wc"
body = "carrier_L"
global_position = [{}, {}, {}]
"#,
        pos("carrier_L"),
        pos("lca_L"),
        wc0.x,
        wc0.y,
        wc0.z
    );
    let file = dir.join("corner.toml");
    std::fs::write(&file, text).unwrap();
    let mut sim = sprung::Simulation::from_file(&file).unwrap();
    sim.advance_to(0.1).unwrap();
    let (r, _) = sim.body_poses();
    let cm = sim.model().compiled().clone();
    let b = cm
        .bodies
        .iter()
        .position(|b| b.name == "carrier_L")
        .unwrap();
    let p = Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]);
    let rot = sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]);
    let (wl, axis) = t.wheel_centre_local;
    let (wc, spin) = (p + rot * wl, rot * axis);
    let travel = wc.z - wc0.z;
    let (toe, camber) = kc::toe_camber(spin, 1.0);
    let v = t.table.spline("carrier_L").unwrap().eval(&[travel]).value;
    let w = t.wheel_at((travel, 0.0), [v[0], v[1], v[2]], [v[3], v[4], v[5]]);
    let d = (wc - w.centre).amax();
    println!(
        "fell {:.1} mm in 0.1 s; off the table's path by {d:.2e} m, toe {:.2e} deg, camber {:.2e} deg",
        -travel * 1e3,
        (toe - w.toe).abs(),
        (camber - w.camber).abs()
    );
    assert!(travel < -0.03, "the carrier fell {travel} m");
    assert!(d < 1e-9 && (toe - w.toe).abs() < 1e-7 && (camber - w.camber).abs() < 1e-7);
    let _ = std::fs::remove_dir_all(&dir);
}

/// (e) Errors name the problem and the fix.
#[test]
fn errors_name_the_corner_the_grid_point_and_the_fix() {
    let msd = model("mass_spring_damper.toml");
    let e = kin_tables::kinematic_tables(&msd, &KinOptions::default(), &mut |_, _, _, _| {})
        .unwrap_err();
    assert!(e.to_string().contains("has no corners"), "{e}");
    let dw = model("double_wishbone.toml");
    let run = |opts: KinOptions| {
        kin_tables::kinematic_tables(&dw, &opts, &mut |_, _, _, _| {}).unwrap_err()
    };
    let e = run(KinOptions {
        travel: vec![-0.05, -0.01, 0.03, 0.07],
        ..Default::default()
    });
    assert!(e.to_string().contains("does not contain 0"), "{e}");
    let e = run(KinOptions {
        travel: vec![-0.01, 0.0, 0.01],
        ..Default::default()
    });
    assert!(e.to_string().contains("at least 4"), "{e}");
    let e = run(KinOptions {
        rotational_factor: 0.0,
        ..Default::default()
    });
    assert!(e.to_string().contains("rotational factor"), "{e}");
    // Beyond the geometric range (a 40 cm bump): which corner, which point, the residual.
    let e = run(KinOptions {
        travel: grid(-0.1, 0.4, 0.1).unwrap(),
        ..Default::default()
    });
    println!("{e}");
    let msg = e.to_string();
    assert!(matches!(e, KinError::Solve(_)), "{msg}");
    assert!(
        msg.contains("corner L, travel 300.000 mm") && msg.contains("reduce --travel"),
        "{msg}"
    );
}
