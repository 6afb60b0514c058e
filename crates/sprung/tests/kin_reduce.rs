//! The kinematic reduced car in relative coordinates (`sprung::kin_reduce`, `sprung reduce
//! --variant kinematic`, docs/macro-joint.md "The kinematic reduced car"): document 004's
//! kinematic variant of `models/car_dw_ml.toml` — carriers on tabulated joints (travel, rack
//! travel), the rack on a prismatic joint, links massless followers — at its design state, its
//! wheels against the tables, the turn entry against the full car, and LSRT2 against RODAS4.

use std::sync::Arc;

use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung::kin_reduce::{
    DEFAULT_REHOST_TOLERANCE, KinReduction, kinematic_reduction, reduce_with_tables,
};
use sprung::kin_tables::{self, KinOptions};
use sprung::{Model, Simulation};
use sprung_test_support::{CountingAllocator, allocations, model_path};

mod common;
use common::{col, run};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The turn entry with the steering ramp moved to `start` → `end` s.
fn full_car(start: f64, end: f64) -> Arc<Model> {
    let d = sprung_model::load(&model_path("car_dw_ml.toml")).unwrap_or_else(|e| panic!("{e}"));
    let d = d
        .with_parameters(&[
            ("inputs.steering_wheel_angle.signal.start_time", start),
            ("inputs.steering_wheel_angle.signal.end_time", end),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    Model::from_description(d).unwrap_or_else(|e| panic!("{e}"))
}

fn reduce(full: &Model) -> (KinReduction, Arc<Model>) {
    let red = kinematic_reduction(full, &KinOptions::default(), "tables", &mut |_, _, _, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let m = Model::from_description(red.model.clone()).unwrap_or_else(|e| panic!("{e}"));
    (red, m)
}

fn nmse(a: &[f64], reference: &[f64]) -> f64 {
    let e: f64 = a.iter().zip(reference).map(|(x, y)| (x - y).powi(2)).sum();
    let v: f64 = reference.iter().map(|y| y * y).sum();
    e / v
}

fn pose(r: &[f64], b: usize) -> (Vector3<f64>, Matrix3<f64>) {
    (
        Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]),
        sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]),
    )
}

fn index(m: &Model, name: &str) -> usize {
    m.compiled()
        .bodies
        .iter()
        .position(|b| b.name == name)
        .unwrap_or_else(|| panic!("no body {name}"))
}

/// What the reduction made of the car, and the design state: every remaining body (free,
/// jointed, follower) starts at its design pose of the full model (the tables reproduce the
/// design at coordinates 0: the kinematic tables' design point is exact, the tabulated joint's
/// design-pose check allows 1e-6; measured to round-off, bound 1e-9 m / rad), and the
/// accelerations at t = 0 are finite (the massless followers enter through Jᵀ W only).
#[test]
fn the_kinematic_car_starts_at_the_full_cars_design_pose() {
    let full = full_car(2.0, 3.0);
    let (red, m) = reduce(&full);
    let d = m.description();
    assert_eq!(red.corners.len(), 4);
    assert_eq!(
        d.body("rack").unwrap().joint.as_ref().unwrap().kind.name(),
        "prismatic"
    );
    for c in &red.corners {
        let j = d.body(&c.carrier).unwrap().joint.as_ref().unwrap();
        assert_eq!(j.coordinates[0], "self", "{}", c.name);
        assert_eq!(j.coordinates.len(), if c.rack.is_some() { 2 } else { 1 });
        // The anti-roll bar halves and the lower arm (front) or lower spring seat (rear) ride
        // on massless followers; the other spring and damper ends moved onto the chassis or
        // the carrier (`the_rehosted_element_ends_move_as_on_their_links`).
        assert_eq!(c.followers.len(), 2, "{}: {:?}", c.name, c.followers);
        for f in &c.followers {
            assert_eq!(d.body(f).unwrap().mass, 0.0);
        }
    }
    assert!(d.force_elements.iter().all(|e| e.name() != "rack_guide"));
    let coupling = d
        .force_elements
        .iter()
        .find_map(|e| match e {
            sprung_model::ForceElement::Bushing(b) if b.name == "front.stab_coupling" => Some(b),
            _ => None,
        })
        .expect("the front bar's coupling stays");
    assert_eq!(coupling.stiffness, [0.0; 3]);
    assert!(coupling.rot_stiffness.iter().any(|&k| k > 0.0));
    for e in ["steering", "imu", "drive_L", "tire_fl.tire"] {
        assert!(d.elements.iter().any(|x| x.name == e), "{e}");
    }
    let mut sim = Simulation::new(m.clone()).unwrap();
    let (r, _) = sim.body_poses();
    let mut fsim = Simulation::new(full.clone()).unwrap();
    let (rf, _) = fsim.body_poses();
    let mut worst: f64 = 0.0;
    for (k, b) in m.compiled().bodies.iter().enumerate() {
        let (p, rot) = pose(&r, k);
        let (pf, rotf) = pose(&rf, index(&full, &b.name));
        let dr = Rotation3::from_matrix_unchecked(rot * rotf.transpose()).angle();
        worst = worst.max((p - pf).norm()).max(dr);
    }
    eprintln!("design pose: largest difference {worst:e} (m, rad)");
    assert!(worst < 1e-9, "{worst:e}");
    let a = sim.accelerations();
    assert!(a.iter().all(|x| x.is_finite()), "{a:?}");
}

/// The wheels follow the tables: over the first 1.2 s of a turn entry with the steering ramp at
/// 0.2 → 0.7 s (so that the rack moves), each carrier's pose relative to the chassis, taken from
/// the simulated body poses, gives (through `CornerTable::wheel_at`) the wheel-centre height
/// above design = the carrier's travel coordinate z (the table's axis definition) and the toe and
/// camber of the table's spline at (z, r), r the rack coordinate. Measured (session 20, the
/// reduced model's own settings: LSRT2 every 50 steps or when stale): toe 4.0e-10 deg, camber
/// 2.5e-9 deg (the pose expansion and the rotation-vector round trip; bound 1e-7 deg);
/// height − z 2.1e-9 m — the splines interpolate the carrier's pose components, and the
/// wheel-centre height is a nonlinear function of them, exact at the grid nodes only (the
/// kinematic tables' spline error at the 10 mm step is 2.1e-7 m, `crates/sprung/tests/
/// kin_tables.rs`; bound 2e-8 m). Travel covered −40.4 … +19.5 mm, rack up to 5.2 mm (printed:
/// the check is not at the design point only).
#[test]
fn the_wheels_follow_the_tables_toe_and_travel() {
    let full = full_car(0.2, 0.7);
    let (red, m) = reduce(&full);
    let mut sim = Simulation::new(m.clone()).unwrap();
    let chassis = index(&m, "chassis");
    let rack = index(&m, "rack");
    let (mut worst_h, mut worst_toe, mut worst_camber) = (0.0f64, 0.0f64, 0.0f64);
    let (mut zmin, mut zmax, mut rmax) = (0.0f64, 0.0f64, 0.0f64);
    for _ in 0..1200 {
        sim.step().unwrap();
        let (r, _) = sim.body_poses();
        let (pc, rc) = pose(&r, chassis);
        let q = sim.positions().to_vec();
        let rack_r = q[7 * rack];
        rmax = rmax.max(rack_r.abs());
        for ct in &red.tables {
            let c = &ct.corner;
            let b = index(&m, &c.carrier);
            let z = q[7 * b];
            zmin = zmin.min(z);
            zmax = zmax.max(z);
            let rr = if c.rack.is_some() { rack_r } else { 0.0 };
            let (p, rot) = pose(&r, b);
            let prel = rc.transpose() * (p - pc);
            let phi = Rotation3::from_matrix_unchecked(
                rc.transpose() * rot * ct.carrier_rel0.transpose(),
            )
            .scaled_axis();
            let sim_w = ct.wheel_at((z, rr), prel.into(), phi.into());
            let spline = ct.table.spline(&c.carrier).unwrap();
            let coords = if c.rack.is_some() {
                vec![z, rr]
            } else {
                vec![z]
            };
            let v = spline.eval(&coords).value;
            let tab_w = ct.wheel_at((z, rr), [v[0], v[1], v[2]], [v[3], v[4], v[5]]);
            let design = ct.wheel(ct.design_index()).centre;
            worst_h = worst_h.max((sim_w.centre.z - design.z - z).abs());
            worst_toe = worst_toe.max((sim_w.toe - tab_w.toe).abs());
            worst_camber = worst_camber.max((sim_w.camber - tab_w.camber).abs());
        }
    }
    eprintln!(
        "travel {:.2}..{:.2} mm, rack up to {:.2} mm; wheel-centre height - z {worst_h:e} m, toe {worst_toe:e} deg, camber {worst_camber:e} deg",
        zmin * 1e3,
        zmax * 1e3,
        rmax * 1e3
    );
    assert!(zmax - zmin > 2e-3 && rmax > 2e-3);
    assert!(worst_h < 2e-8, "{worst_h:e}");
    assert!(worst_toe < 1e-7 && worst_camber < 1e-7);
}

/// The turn entry compressed into 4 s (ramp 1 → 2 s), kinematic reduced car against the full
/// car, both LSRT2 at 1 ms from the design state. What the kinematic car leaves out: the link
/// bushings' compliance (the K&C compliance steer and camber under the tire forces and the
/// weight: `docs/macro-joint.md` measures 0.24 deg toe / 0.74 deg camber over ±80 mm between
/// the stiffened and the elastokinematic axle) and the links' mass (51.7 kg of 2039 kg) — so it
/// steers more directly (less compliance understeer) and turns tighter: at 4 s a_y 4.11 against
/// 3.92 m/s² (+4.8 %). Measured (deterministic): path deviation (chassis centre of mass) 0.489 m
/// after 4 s (bound 0.8 m), NMSE a_y 2.01e-3, yaw rate 2.11e-3 (bound 4e-3; 0.538 m, 2.47e-3
/// and 2.40e-3 while the kinematic car's wheels started at rest, `tests/kin_stability.rs`). Over
/// the whole 10 s manoeuvre (`sprung run`, docs/macro-joint.md) NMSE a_y 2.2e-3 and 4.7 m path
/// deviation.
#[test]
fn the_kinematic_car_follows_the_full_car_through_the_turn_entry() {
    let full = full_car(1.0, 2.0);
    let (_, m) = reduce(&full);
    let t_end = 4.0;
    let mut s = full.default_settings();
    s.output_interval = 0.01;
    let mut sim = Simulation::new(full.clone()).unwrap();
    let a = run(&mut sim, &s, t_end);
    let mut sim = Simulation::new(m.clone()).unwrap();
    let b = run(&mut sim, &s, t_end);
    let dev = col(&a, "x")
        .iter()
        .zip(col(&a, "y"))
        .zip(col(&b, "x").iter().zip(col(&b, "y")))
        .map(|((xa, ya), (xb, yb))| (xa - xb).hypot(ya - yb))
        .fold(0.0f64, f64::max);
    let ay = nmse(col(&b, "ay"), col(&a, "ay"));
    let yaw = nmse(col(&b, "yaw_rate"), col(&a, "yaw_rate"));
    let last = |r: &[(String, Vec<f64>)], ch: &str| *col(r, ch).last().unwrap();
    eprintln!(
        "4 s: path deviation {dev:.4} m, NMSE ay {ay:e}, yaw rate {yaw:e}; ay {:.4} (full {:.4}) m/s^2, y {:.3} (full {:.3}) m",
        last(&b, "ay"),
        last(&a, "ay"),
        last(&b, "y"),
        last(&a, "y")
    );
    assert!(last(&b, "ay") > 1.0 && last(&a, "ay") > 1.0);
    assert!(dev < PATH_BOUND, "{dev}");
    assert!(ay < AY_BOUND, "{ay:e}");
    assert!(yaw < AY_BOUND, "{yaw:e}");
}

/// The element ends re-hosted by the reduction (`sprung::kin_reduce`, "Element ends re-hosted")
/// against the same reduction with every end left on its link (`rehost_tolerance` 0), from the
/// same tables: 8 followers instead of 20, every moved end within 1 µm of its link's tabulated
/// motion (measured ≤ 0.24 µm: the table's residual bushing compliance), and the same run — the
/// turn entry compressed into 1.2 s (ramp 0.2 → 0.7 s), LSRT2 1 ms re-linearised every 10 steps:
/// measured ≤ 2.3e-6 of each channel's range over the 10 s turn entry (`steering_torque`,
/// the damper forces: a damper force is c L̇, and L̇ moves by the ends' ≤ 0.24 µm over a
/// stroke); bound 1e-5 of the range on every channel.
#[test]
fn the_rehosted_element_ends_move_as_on_their_links() {
    let full = full_car(0.2, 0.7);
    let tables = kin_tables::kinematic_tables(&full, &KinOptions::default(), &mut |_, _, _, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let d = kin_tables::description(&full).unwrap_or_else(|e| panic!("{e}"));
    let moved = reduce_with_tables(&d, tables.clone(), "tables", DEFAULT_REHOST_TOLERANCE)
        .unwrap_or_else(|e| panic!("{e}"));
    let kept = reduce_with_tables(&d, tables, "tables", 0.0).unwrap_or_else(|e| panic!("{e}"));
    let followers = |r: &KinReduction| r.corners.iter().map(|c| c.followers.len()).sum::<usize>();
    assert_eq!((followers(&moved), followers(&kept)), (8, 20));
    assert!(kept.corners.iter().all(|c| c.rehosted.is_empty()));
    let mut worst: f64 = 0.0;
    for c in &moved.corners {
        // Damper, gas spring, bump and rebound stop, spring and coil-bind stop ends: 12 front
        // (the strut's top on the chassis, its bottom and the spring seat on the lower arm),
        // 10 rear (the lower spring seat stays a follower).
        let n = if c.rack.is_some() { 12 } else { 10 };
        assert_eq!(c.rehosted.len(), n, "{}: {:?}", c.name, c.rehosted);
        for e in &c.rehosted {
            assert!(e.deviation <= DEFAULT_REHOST_TOLERANCE, "{e:?}");
            worst = worst.max(e.deviation);
            let k = moved.model.marker(&e.marker).unwrap();
            assert_eq!(k.body, e.to);
        }
    }
    eprintln!("largest deviation of a re-hosted end: {worst:e} m");
    let run_of = |r: &KinReduction| {
        let m = Model::from_description(r.model.clone()).unwrap_or_else(|e| panic!("{e}"));
        let mut s = m.default_settings();
        s.output_interval = 0.01;
        s.relinearise_every = 10;
        s.relinearise_stale = None;
        let mut sim = Simulation::new(m.clone()).unwrap();
        run(&mut sim, &s, 1.2)
    };
    let (a, b) = (run_of(&kept), run_of(&moved));
    let mut worst = (0.0, String::new());
    for (name, x) in &a {
        let y = col(&b, name);
        let range =
            x.iter().fold(f64::MIN, |m, v| m.max(*v)) - x.iter().fold(f64::MAX, |m, v| m.min(*v));
        let d = x
            .iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        let rel = if range > 0.0 { d / range } else { d };
        if rel > worst.0 {
            worst = (rel, name.clone());
        }
    }
    eprintln!(
        "largest difference: {:e} of the range of {}",
        worst.0, worst.1
    );
    assert!(
        col(&a, "ay").iter().any(|v| v.abs() > 1.0),
        "the turn is driven"
    );
    assert!(worst.0 < 1e-5, "{worst:?}");
}

const PATH_BOUND: f64 = 0.8;
const AY_BOUND: f64 = 4e-3;

/// The integration of the kinematic car: LSRT2 at 1 ms against RODAS4 at rtol 1e-6 / atol 1e-8
/// (errors orders below LSRT2's) over the turn entry compressed into 1 s (ramp 0.1 → 0.4 s).
/// Measured NMSE a_y 1.1e-12, yaw rate 6.4e-13, y 2.2e-13 (the tabulated joints' splines are
/// smooth, C², and the ride and steering are resolved at 1 ms; 9.2e-12, 5.7e-12, 1.6e-11 while
/// the wheels started at rest and spun up, `tests/kin_stability.rs`); bounds about 3 ×.
#[test]
fn the_kinematic_car_with_lsrt2_agrees_with_rodas4() {
    let full = full_car(0.1, 0.4);
    let (_, m) = reduce(&full);
    let mut s = m.default_settings();
    s.output_interval = 0.01;
    // Every step (the reduced model's own settings re-use the Jacobian).
    s.relinearise_every = 1;
    s.relinearise_stale = None;
    let mut sim = Simulation::new(m.clone()).unwrap();
    let lsrt2 = run(&mut sim, &s, 1.0);
    let mut reference = s.clone();
    reference.method = "rodas4".into();
    reference.rtol = 1e-6;
    reference.atol = 1e-8;
    let mut sim = Simulation::new(m.clone()).unwrap();
    let rodas = run(&mut sim, &reference, 1.0);
    for (ch, bound) in [("ay", 3e-12), ("yaw_rate", 2e-12), ("y", 7e-13)] {
        let e = nmse(col(&lsrt2, ch), col(&rodas, ch));
        eprintln!("NMSE {ch}: {e:e}");
        assert!(e < bound, "{ch}: NMSE {e:e}, bound {bound:e}");
    }
}

/// The stepping hot path of the kinematic car allocates nothing (LSRT2 re-linearising every step,
/// every 5 steps, and every 50 or when stale as the reduced model's own settings; 20 warm-up steps, then 100 counted on this thread; `ode1` is adaptive in
/// `Simulation::step`, its fixed-step runs go through `run_with`).
#[test]
fn kinematic_car_steps_do_not_allocate() {
    let full = full_car(0.0, 0.2);
    let (_, m) = reduce(&full);
    for (method, every, stale) in [
        ("lsrt2", 1, None),
        ("lsrt2", 5, None),
        ("lsrt2", 50, Some(5e-8)),
    ] {
        let mut s = m.default_settings();
        s.method = method.into();
        s.relinearise_every = every;
        s.relinearise_stale = stale;
        let mut sim = Simulation::with_settings(m.clone(), s).unwrap();
        for _ in 0..20 {
            sim.step().unwrap();
        }
        let before = allocations();
        for _ in 0..100 {
            sim.step().unwrap();
        }
        assert_eq!(allocations() - before, 0, "{method}, every {every}");
    }
}
