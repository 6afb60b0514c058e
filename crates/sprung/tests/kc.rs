//! The K&C rig (`sprung::kc`, docs/kc.md) against the reference axles' data sheet
//! (`../shared/data/reference-suspensions.md`, figures with all digits from the `verification`
//! block of `../shared/data/double_wishbone.json` and `multilink.json`), against finite
//! differences of the model's own equilibrium (its load inputs and output channels, not the rig),
//! against its mirror symmetry and against virtual work.

use std::sync::Arc;

use sprung::kc::{Reference, Rig, RigOptions, Test, Vertical};
use sprung::{Model, Simulation};
use sprung_model as sm;
use sprung_test_support::model_path;

fn model(name: &str) -> Arc<Model> {
    Model::from_file(model_path(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn rig(m: &Model, reference: Reference, vertical: Vertical) -> Rig {
    Rig::new(
        m,
        RigOptions {
            reference,
            vertical,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Data-sheet figures of one axle (`verification` block of the JSON file).
struct Sheet {
    file: &'static str,
    /// wheel_rate_parallel / _opposite / _single, N/mm.
    rates: [f64; 3],
    /// kinematics: wc_dx_per_dz, wc_dy_per_dz, camber_rate_deg_per_m (rotation about +x of the
    /// left wheel), toe_rate_deg_per_m (rotation about +z: toe-out).
    kinematics: [f64; 4],
}

const DW: Sheet = Sheet {
    file: "double_wishbone.toml",
    rates: [29.127633282858266, 58.94392221454314, 38.98868234634948],
    kinematics: [
        0.029451280001062667,
        0.0015630556421915853,
        17.509774724202437,
        -0.002322003910906175,
    ],
};
const ML: Sheet = Sheet {
    file: "multilink.toml",
    rates: [28.510584701967584, 43.198294443927416, 34.3502407900803],
    kinematics: [
        -0.030852130894880456,
        -0.00043122265110389756,
        20.326646530667038,
        -3.268309515267127,
    ],
};

#[test]
fn double_wishbone_statics_match_the_data_sheet() {
    let m = model("double_wishbone.toml");
    // Fz = 5000 N per wheel + gravity (the load case of document 000 sec. 5.2).
    let mut r = rig(&m, Reference::Load(5000.0), Vertical::Load);
    let s = r.reference_state().unwrap();
    let d = s[0].centre - r.corners()[0].design_centre;
    // verification.wheel_centre_displacement_L; the same 2 µm bound as the model's own
    // equilibrium test (crates/sprung-mbs/tests/reference_axles.rs).
    let d_ref = [
        -0.000581850743883347,
        -0.0003096906845013736,
        -2.9074660746538426e-05,
    ];
    for k in 0..3 {
        assert!(
            (d[k] - d_ref[k]).abs() < 2e-6,
            "wc displacement {d:?} vs {d_ref:?}"
        );
    }
    // Quasi-static Fx = -2500 N at both wheel centres, load held (verification
    // fx_wheel_centre_delta_L); 2 % as the reference-axle tests (issue 3).
    let sw = r
        .run(Test::Fx, &[-2500.0, 0.0, 100.0], &mut |_, _| {})
        .unwrap();
    let delta = sw.points[0].corners[0].centre - sw.points[1].corners[0].centre;
    eprintln!("wc displacement at 5000 N: {d:?}");
    let delta_ref = [
        -0.0021145086162162436,
        -0.00013708143279278495,
        -0.0023292218288904366,
    ];
    for k in 0..3 {
        assert!(
            (delta[k] - delta_ref[k]).abs() <= 0.02 * delta_ref[k].abs().max(0.5e-3),
            "Fx = -2500 N: wc delta {delta:?} vs {delta_ref:?}"
        );
    }
    // Linear longitudinal compliance at the wheel centre (long_compliance_lin_mm_per_kN).
    let sw = r
        .run(Test::Fx, &[-50.0, 0.0, 50.0], &mut |_, _| {})
        .unwrap();
    let c = sw.at_reference("wc_x_compliance_L").unwrap();
    eprintln!("Fx -2500 N delta {delta:?}, compliance {c} mm/kN");
    assert!(
        (c - 0.8313478758114793).abs() < 0.02 * 0.8313,
        "compliance {c} mm/kN"
    );
}

#[test]
fn wheel_rates_match_the_data_sheet() {
    for sheet in [DW, ML] {
        let m = model(sheet.file);
        let mut r = rig(&m, Reference::Travel(0.0), Vertical::Travel);
        let par = r
            .run(Test::Parallel, &Rig::values(0.001, 3), &mut |_, _| {})
            .unwrap();
        let opp = r
            .run(Test::Opposite, &Rig::values(0.001, 3), &mut |_, _| {})
            .unwrap();
        // one wheel moved, the other free at constant load: 1 / C_LL of the compliance matrix
        let single = 1e-3 / r.vertical_compliance()[(0, 0)];
        let got = [
            par.at_reference("wheel_rate_L").unwrap(),
            opp.at_reference("wheel_rate_L").unwrap(),
            single,
        ];
        eprintln!("{}: wheel rates {got:?} N/mm", sheet.file);
        // Roll stiffness from moment and angle = opposite wheel rate × track² / 2; 0.2 %: the
        // moment uses the wheel centres' current y and vertical force (track and load change with
        // travel; measured 0.08 %)
        let track = r.corners()[0].design_centre.y - r.corners()[1].design_centre.y;
        let k_roll = opp.at_reference("roll_stiffness_LR").unwrap();
        let expect = got[1] * 1e3 * track * track / 2.0 * std::f64::consts::PI / 180.0;
        eprintln!("{}: roll stiffness {k_roll} vs {expect} Nm/deg", sheet.file);
        assert!(
            (k_roll - expect).abs() < 2e-3 * expect,
            "{k_roll} vs {expect}"
        );
        for k in 0..3 {
            // 0.3 %: the data sheet's rates are taken at the loaded equilibrium (5000 N, 0.03 mm
            // below design), ours at the design height with a ±1 mm difference quotient
            assert!(
                (got[k] - sheet.rates[k]).abs() < 3e-3 * sheet.rates[k],
                "{}: wheel rates {got:?} vs {:?}",
                sheet.file,
                sheet.rates
            );
        }
    }
}

/// The model with its two vertical wheel loads as runtime inputs (the model's own load path).
fn loaded(m: &Model, f: f64) -> Simulation {
    let rm = Arc::new(m.with_runtime_inputs(&["Fz_L", "Fz_R"]).unwrap());
    let settings = rm.default_settings();
    let mut sim = Simulation::with_settings(rm, settings).unwrap();
    sim.set_input("Fz_L", f).unwrap();
    sim.set_input("Fz_R", f).unwrap();
    sim.equilibrium().unwrap();
    sim
}

#[test]
fn travel_slopes_agree_with_finite_differences_of_the_model_equilibrium() {
    for sheet in [DW, ML] {
        let m = model(sheet.file);
        // Independent path: the model's own Fz inputs at 5000 ± 30 N (±1 mm) and its output
        // channels (camber/toe of the bearing marker on the carrier, wheel-centre displacement).
        let (f0, df) = (5000.0, 30.0);
        let chans = ["wc_dz_L", "camber_L", "toe_L", "wc_dx_L", "wc_dy_L"];
        let read = |f: f64| {
            let mut sim = loaded(&m, f);
            chans.map(|c| sim.channel(c).unwrap())
        };
        let (lo, mid, hi) = (read(f0 - df), read(f0), read(f0 + df));
        let fd: Vec<f64> = (1..5).map(|k| (hi[k] - lo[k]) / (hi[0] - lo[0])).collect();
        // The rig at the same reference load, through the same three wheel heights.
        let mut r = rig(&m, Reference::Load(f0), Vertical::Load);
        let xs = [lo[0] - mid[0], 0.0, hi[0] - mid[0]];
        let sw = r.run(Test::Parallel, &xs, &mut |_, _| {}).unwrap();
        let rig_rates = [
            sw.at_reference("camber_rate_L").unwrap(),
            sw.at_reference("toe_rate_L").unwrap(),
            sw.per_travel(0, &sw.centre_displacement(0, 0))[1],
            sw.per_travel(0, &sw.centre_displacement(0, 1))[1],
        ];
        eprintln!("{}: rig {rig_rates:?} vs FD {fd:?}", sheet.file);
        // The states are the same equilibria (to 1e-14 m); the rates differ by the formula: the
        // rig's 3-point derivative at the centre against the secant of the two outer points,
        // O(curvature × asymmetry of the two heights) — with ±1 mm about 1e-4 deg/m and 1e-6 m/m
        // (the wheel-centre track has a curvature of -3.6 1/m at design). The rig reads the
        // wheel's spin axis, the channels the carrier's bearing marker.
        for k in 0..4 {
            let tol = if k < 2 { 1e-3 } else { 1e-5 };
            assert!(
                (rig_rates[k] - fd[k]).abs() < tol,
                "{}: rate {k}: rig {} vs FD {}",
                sheet.file,
                rig_rates[k],
                fd[k]
            );
        }
        // The rig's vertical loads at those heights are the model's (5000 ± 150 N).
        for (p, f) in sw.points.iter().zip([f0 - df, f0, f0 + df]) {
            assert!(
                (p.corners[0].force.z - f).abs() < 1e-3,
                "load {} vs {f}",
                p.corners[0].force.z
            );
        }
    }
}

#[test]
fn left_and_right_results_are_mirror_images() {
    let m = model("double_wishbone.toml");
    let mut r = rig(&m, Reference::Travel(0.0), Vertical::Travel);
    // Lateral force in +y on both wheels: outward on the left, inward on the right; the left
    // wheel at +F is the mirror image of the right wheel at -F.
    let sw = r
        .run(Test::Fy, &[-1500.0, 0.0, 1500.0], &mut |_, _| {})
        .unwrap();
    let (p, q) = (&sw.points[2].corners[0], &sw.points[0].corners[1]);
    let e = [
        p.toe - q.toe,
        p.camber - q.camber,
        (p.centre.x - q.centre.x) * 1e3,
        (p.centre.y + q.centre.y) * 1e3,
        (p.centre.z - q.centre.z) * 1e3,
        p.force.z - q.force.z,
    ];
    eprintln!("mirror differences (deg, deg, mm, mm, mm, N): {e:?}");
    // deg / mm at the equilibrium's round-off (relative residual 1e-10 of ~1e4 N); the wheel
    // load to 1e-4 N (the travel Newton's tolerance 1e-9 m times the wheel rate 3e4 N/m)
    assert!(
        e[..5].iter().all(|x| x.abs() < 1e-7) && e[5].abs() < 1e-4,
        "{e:?}"
    );
    let sw = r
        .run(Test::Parallel, &Rig::values(0.04, 5), &mut |_, _| {})
        .unwrap();
    for p in &sw.points {
        let (l, rr) = (&p.corners[0], &p.corners[1]);
        assert!((l.toe - rr.toe).abs() < 1e-6 && (l.camber - rr.camber).abs() < 1e-6);
    }
    // The roll centre of a symmetric axle lies on y = 0.
    let rc = sw.roll_centre(0);
    assert!(rc.iter().all(|(_, y)| y.abs() < 1e-6), "{rc:?}");
}

/// The rigid-link limit: translational stiffness of the link bushings (and their radial/axial
/// curves) × `factor`, ball joints × `joints`; the bushings' rotational stiffness is kept — the
/// links still pivot in them as in a kinematic model with ideal joints.
fn rigid_links(m: &Model, factor: f64, joints: f64) -> Arc<Model> {
    let mut d = m.description().clone();
    d.parameter_base = None;
    let mut curves = Vec::new();
    for e in &mut d.force_elements {
        if let sm::ForceElement::Bushing(b) = e {
            let link = b.name.contains("_bushing") || b.name.contains("subframe_mount");
            let scale = if link {
                factor
            } else if b.name.contains("joint") {
                joints
            } else {
                continue;
            };
            b.stiffness.iter_mut().for_each(|k| *k *= scale);
            let c = &b.stiffness_curves;
            for name in [&c.x, &c.y, &c.z].into_iter().flatten() {
                if !curves.contains(name) {
                    curves.push(name.clone());
                }
            }
        }
    }
    for c in d.curves.iter_mut().filter(|c| curves.contains(&c.name)) {
        c.y.iter_mut().for_each(|y| *y *= factor);
    }
    Model::from_description(d).unwrap()
}

#[test]
fn rigid_link_limit_gives_the_data_sheet_kinematics() {
    for sheet in [DW, ML] {
        let m = rigid_links(&model(sheet.file), 1e3, 1e2);
        let mut r = rig(&m, Reference::Travel(0.0), Vertical::Travel);
        let sw = r
            .run(Test::Parallel, &Rig::values(0.002, 5), &mut |_, _| {})
            .unwrap();
        let k = sw.centre_index();
        let got = [
            sw.per_travel(0, &sw.centre_displacement(0, 0))[k],
            sw.per_travel(0, &sw.centre_displacement(0, 1))[k],
            // the data sheet's rates are rotations about +x / +z of the left wheel:
            // camber (+ top out) and toe (+ toe-in) are their negatives
            -sw.at_reference("camber_rate_L").unwrap(),
            -sw.at_reference("toe_rate_L").unwrap(),
        ];
        eprintln!(
            "{}: rigid limit {got:?} vs data sheet {:?}",
            sheet.file, sheet.kinematics
        );
        let kin = sheet.kinematics;
        // Bounds: 0.5 % on dx/dz and camber; toe 0.02 deg/m; dy/dz 0.3 mm/m (the data sheet
        // linearises ideal joints at the unloaded design position, the rig differentiates the
        // loaded equilibrium with joints of 1e10 N/m)
        assert!(
            (got[0] - kin[0]).abs() < 5e-3 * kin[0].abs(),
            "{}: dx/dz",
            sheet.file
        );
        assert!((got[1] - kin[1]).abs() < 3e-4, "{}: dy/dz", sheet.file);
        assert!(
            (got[2] - kin[2]).abs() < 5e-3 * kin[2].abs(),
            "{}: camber",
            sheet.file
        );
        assert!((got[3] - kin[3]).abs() < 0.02, "{}: toe", sheet.file);
    }
}

#[test]
fn force_based_side_view_and_roll_geometry_agree_with_the_kinematic_ones() {
    // Virtual work on a (nearly) rigid linkage held at its height: a force F at the contact
    // point changes the vertical wheel force by -F · d(contact point)/dz.
    let m = rigid_links(&model("double_wishbone.toml"), 1e3, 1e2);
    let mut r = rig(&m, Reference::Travel(0.0), Vertical::Travel);
    let par = r
        .run(Test::Parallel, &Rig::values(0.002, 5), &mut |_, _| {})
        .unwrap();
    let k = par.centre_index();
    let tan_cp = par.side_view_tan(0, true)[k];
    let track = par.per_travel(0, &par.half_track_contact(0))[k];
    let fx = r
        .run(Test::FxContact, &[-200.0, 0.0, 200.0], &mut |_, _| {})
        .unwrap();
    let dfz_dfx = fx.slope(&fx.wheel_load(0))[1];
    let fy = r
        .run(Test::Fy, &[-200.0, 0.0, 200.0], &mut |_, _| {})
        .unwrap();
    let dfz_dfy = fy.slope(&fy.wheel_load(0))[1];
    eprintln!(
        "tan_cp {tan_cp} vs -dFz/dFx {}; track rate {track} vs -dFz/dFy {}",
        -dfz_dfx, -dfz_dfy
    );
    // 2e-3: the bushings' rotational stiffness and the finite joint stiffness make the linkage
    // not exactly rigid
    assert!(
        (tan_cp + dfz_dfx).abs() < 2e-3,
        "side view: {tan_cp} vs {}",
        -dfz_dfx
    );
    assert!(
        (track + dfz_dfy).abs() < 2e-3,
        "front view: {track} vs {}",
        -dfz_dfy
    );
}

#[test]
fn a_model_without_wheel_centres_is_a_located_error() {
    let m = model("mass_spring_damper.toml");
    let e = Rig::new(&m, RigOptions::default())
        .err()
        .expect("no wheel centre");
    let msg = e.to_string();
    assert!(
        msg.contains("--wheel-centre") && msg.contains("no wheel-centre marker"),
        "{msg}"
    );
}

#[test]
fn full_travel_curves_for_the_reduced_corners() {
    // ±80 mm (the bump stop engages in bump: progressive wheel load)
    let m = model("double_wishbone.toml");
    let sw = sprung::kc::travel_curves(&m, 0.08, 5).unwrap();
    let t = sw.travel(0);
    for (x, z) in sw.xs().iter().zip(&t) {
        assert!((x - z).abs() < 2e-9, "travel {z} vs target {x}");
    }
    let f = sw.wheel_load(0);
    let rate_out = (f[4] - f[3]) / 0.04;
    let rate_in = (f[3] - f[2]) / 0.04;
    eprintln!("wheel loads {f:?}");
    assert!(
        rate_out > 1.2 * rate_in,
        "the bump stop should stiffen: {rate_in} -> {rate_out}"
    );
}

#[test]
fn removing_the_anti_roll_bar_coupling_removes_the_roll_stiffening() {
    // Without the torsion coupling of the two stabilizer halves (the only element joining the
    // wheels), opposite travel meets the same wheel rate as parallel travel.
    let m = model("double_wishbone.toml");
    let opts = RigOptions {
        remove_elements: vec!["stab_coupling".into()],
        ..Default::default()
    };
    let mut r = Rig::new(&m, opts).unwrap();
    let par = r
        .run(Test::Parallel, &Rig::values(0.001, 3), &mut |_, _| {})
        .unwrap();
    let opp = r
        .run(Test::Opposite, &Rig::values(0.001, 3), &mut |_, _| {})
        .unwrap();
    let (kp, ko) = (
        par.at_reference("wheel_rate_L").unwrap(),
        opp.at_reference("wheel_rate_L").unwrap(),
    );
    eprintln!("without stab_coupling: parallel {kp} opposite {ko} N/mm");
    // the wheels then share no element: equal to the travel Newton's round-off (measured 4e-10)
    assert!((ko - kp).abs() < 1e-6 * kp, "{kp} vs {ko}");
    let bad = Rig::new(
        &m,
        RigOptions {
            remove_elements: vec!["no_such_element".into()],
            ..Default::default()
        },
    );
    assert!(bad.err().unwrap().to_string().contains("--remove-element"));
}

#[test]
fn clamping_the_subframe_stiffens_the_multilink() {
    // A car body on the rig is clamped; here the multilink's subframe (on six rubber mounts):
    // the rubber's share of the longitudinal compliance disappears.
    let m = model("multilink.toml");
    let free = rig(&m, Reference::Travel(0.0), Vertical::Travel)
        .run(Test::Fx, &[-100.0, 0.0, 100.0], &mut |_, _| {})
        .unwrap()
        .at_reference("wc_x_compliance_L")
        .unwrap();
    let mut r = Rig::new(
        &m,
        RigOptions {
            clamp: Some("subframe".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let clamped = r
        .run(Test::Fx, &[-100.0, 0.0, 100.0], &mut |_, _| {})
        .unwrap()
        .at_reference("wc_x_compliance_L")
        .unwrap();
    eprintln!("multilink x compliance: free subframe {free}, clamped {clamped} mm/kN");
    assert!(clamped < free && clamped > 0.0, "{free} vs {clamped}");
}

#[test]
fn the_steering_test_sweeps_the_named_input() {
    // No reference axle has a steering rack; the test sweeps the model's own left longitudinal
    // force input (set to zero by the rig otherwise): the left wheel centre moves back by its
    // longitudinal compliance, the toe moves, the point at 0 is the reference state.
    let m = model("double_wishbone.toml");
    let mut r = Rig::new(
        &m,
        RigOptions {
            steer_input: Some("Fx_L".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let sw = r
        .run(Test::Steer, &[-100.0, 0.0, 100.0], &mut |_, _| {})
        .unwrap();
    let reference = r.reference_state().unwrap();
    assert_eq!(sw.points[1].corners[0].toe, reference[0].toe);
    let dtoe = sw.slope(&sw.toe(0))[1];
    let dx = sw.slope(&sw.centre_displacement(0, 0))[1];
    // a force at the left wheel centre pushes it back by ~0.8 mm/kN (data sheet 0.831, both wheels)
    assert!(dx > 0.6e-6 && dx < 1.0e-6, "dx/dF {dx} m/N");
    assert!(dtoe.abs() > 1e-7, "toe does not move: {dtoe}");
    let no = Rig::new(&m, RigOptions::default())
        .unwrap()
        .run(Test::Steer, &[0.0], &mut |_, _| {});
    assert!(no.err().unwrap().to_string().contains("--steer-input"));
}

#[test]
fn a_wheel_centre_marker_in_body_axes_gives_the_same_rig() {
    let m = model("double_wishbone.toml");
    let mut d = m.description().clone();
    d.parameter_base = None;
    for mk in d
        .markers
        .iter_mut()
        .filter(|mk| mk.name.starts_with("wheel_centre"))
    {
        // the wheel body's origin is its centre of mass = the wheel centre
        mk.global_position = None;
        mk.position = Some([0.0; 3]);
    }
    let local = Model::from_description(d).unwrap();
    let a = rig(&m, Reference::Travel(0.0), Vertical::Travel)
        .run(Test::FxContact, &[-500.0, 0.0, 500.0], &mut |_, _| {})
        .unwrap();
    let b = rig(&local, Reference::Travel(0.0), Vertical::Travel)
        .run(Test::FxContact, &[-500.0, 0.0, 500.0], &mut |_, _| {})
        .unwrap();
    for (p, q) in a.points.iter().zip(&b.points) {
        assert!((p.corners[0].toe - q.corners[0].toe).abs() < 1e-9);
        assert!((p.corners[0].contact - q.corners[0].contact).norm() < 1e-12);
    }
}

/// The rig on the full car (models/car_dw_ml.toml): one axle at a time, the chassis clamped, the
/// tires and drive controllers removed (the rig loads the wheels itself).
fn car_axle_rig(car: &Model, axle: &str, extra: RigOptions) -> Rig {
    let corner = |side: &str| sprung::kc::CornerSpec {
        wheel_centre: format!("{axle}.wheel_centre_{side}"),
        carrier: Some(format!("{axle}.carrier_{side}")),
    };
    Rig::new(
        car,
        RigOptions {
            corners: vec![corner("L"), corner("R")],
            clamp: Some("chassis".into()),
            remove_elements: vec!["tire_*".into(), "drive_*".into()],
            ..extra
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_cars_axles_on_the_rig_match_the_axles_alone() {
    // A second model of the same thing: the car includes the two reference axles from their own
    // files, so its clamped axles must show the axles' wheel-travel kinematics. What differs:
    // the car merges each wheel into its carrier (no 1e8 N/m bearing bushing between them, the
    // wheel-centre marker sits on the carrier) and clamps the chassis with a 1e10 N/m bushing
    // instead of grounding the axle's frame; the front tie rods end at the car's rack (pinion
    // ratio and column spring) instead of a fixed point. Measured largest differences of toe and
    // camber over ±80 mm (17 points): front 3.2e-3 / 4.1e-3 deg (of 0.58 / 3.38 deg spans: the
    // rack's compliance moves the front toe), rear 3.3e-4 / 3.5e-3 deg (of 0.48 / 3.52 deg);
    // the bounds are about 1.5x these, the wheel rates to 5e-4 (measured 2.2e-4 / 2.4e-4).
    let car = model("car_dw_ml.toml");
    let travel = Rig::values(0.08, 17);
    for (axle, file, bound_toe, bound_camber) in [
        ("front", "double_wishbone.toml", 5.0e-3, 6.0e-3),
        ("rear", "multilink.toml", 6.0e-4, 5.0e-3),
    ] {
        let in_car = car_axle_rig(&car, axle, RigOptions::default())
            .run(Test::Parallel, &travel, &mut |_, _| {})
            .unwrap();
        let alone = rig(&model(file), Reference::Travel(0.0), Vertical::Travel)
            .run(Test::Parallel, &travel, &mut |_, _| {})
            .unwrap();
        let worst = |a: Vec<f64>, b: Vec<f64>| {
            a.iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
        };
        let span = |a: Vec<f64>| {
            a.iter().cloned().fold(f64::MIN, f64::max) - a.iter().cloned().fold(f64::MAX, f64::min)
        };
        let d_toe = worst(in_car.toe(0), alone.toe(0));
        let d_camber = worst(in_car.camber(0), alone.camber(0));
        eprintln!(
            "{axle}: toe difference {d_toe:.2e} deg of a {:.3} deg span, camber {d_camber:.2e} deg of {:.3} deg",
            span(alone.toe(0)),
            span(alone.camber(0))
        );
        assert!(d_toe < bound_toe, "{axle}: toe differs by {d_toe} deg");
        assert!(
            d_camber < bound_camber,
            "{axle}: camber differs by {d_camber} deg"
        );
        let rate = |s: &sprung::kc::Sweep| s.at_reference("wheel_rate_L").unwrap();
        let (a, b) = (rate(&in_car), rate(&alone));
        assert!(
            ((a - b) / b).abs() < 5e-4,
            "{axle}: wheel rate {a} vs {b} N/mm"
        );
    }
}

#[test]
fn the_cars_steering_sweep_is_mirror_symmetric() {
    // The car's steering-wheel angle (rad) through pinion, rack and tie rods: a sweep of ±0.5 rad
    // steers both front wheels the same way (toe of opposite sign in each side's convention),
    // mirror-symmetric (L at +δ equals R at −δ: the car is symmetric). The assumed rack
    // geometry has no Ackermann: at 0.5 rad the outer wheel steers 1.4114 deg, the inner
    // 1.4090 deg (docs/kc.md); that is reported, not asserted.
    let car = model("car_dw_ml.toml");
    let mut r = car_axle_rig(
        &car,
        "front",
        RigOptions {
            steer_input: Some("steering_wheel_angle".into()),
            ..Default::default()
        },
    );
    let sw = r
        .run(Test::Steer, &Rig::values(0.5, 5), &mut |_, _| {})
        .unwrap();
    let (l, rr) = (sw.toe(0), sw.toe(1));
    let n = l.len();
    for k in 0..n {
        let mirror = (l[k] - rr[n - 1 - k]).abs();
        assert!(
            mirror < 1e-6,
            "mirror symmetry: {} vs {}",
            l[k],
            rr[n - 1 - k]
        );
    }
    // δ = +0.5 rad steers left: the left wheel is inner. Toe is toe-in positive per side, so a
    // left turn is toe-out (−) on the left and toe-in (+) on the right; the steer angles are the
    // changes from the reference point (the static toe is not steering).
    let mid = n / 2;
    let (inner, outer) = (-(l[n - 1] - l[mid]), rr[n - 1] - rr[mid]);
    eprintln!("steering 0.5 rad left: inner {inner:.4} deg, outer {outer:.4} deg");
    assert!(
        inner > 0.5 && outer > 0.5,
        "both wheels steer left: {inner}, {outer}"
    );
}
