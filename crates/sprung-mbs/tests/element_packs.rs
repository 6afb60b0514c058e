//! The four-element lanes of the q-only path (`sprung_mbs::pack`: bushings and point-to-point
//! elements) against the one-element path of the linearisation: same element results and same q
//! to round-off, on both reference axles, on the model with every element type of the Jacobian
//! tests (springs, dampers and engaged stops with curves, a partly filled point-to-point pack)
//! and on a small model with partly filled bushing packs, ground markers, rotated marker axes,
//! preloads and curves — at small deflections (the in-lane rotation-vector series, both lengths)
//! and at large ones (the lane-by-lane fallback up to angles beyond 2π/3).
//!
//! Tolerance. Both paths evaluate the same formulas; they differ in fused multiply-adds and in the
//! order in which element wrenches are summed per body. Deflections are differences of marker
//! positions of order 1 m, so an element's force may differ by ε · k · 1 m (k its stiffness) —
//! round-off of the positions, not of the force: we compare element forces and torques against
//! that scale, 1e-13 · (largest stiffness · 1 m + |force|), and q against 1e-11 of its largest
//! entry (the body sums cancel large opposing element forces).

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{ALL_ELEMENTS, Rng, model_from_toml, random_state};
use sprung_mbs::compiled::{Characteristic, ElementKind};
use sprung_mbs::{CompiledModel, MbsSystem};
use sprung_solve::mech::{Linearisation, MechanicalSystem};

const PARTLY_FILLED: &str = r#"
[model]
name = "five_bushings"
ground = "chassis"
gravity = [0.0, 0.0, -9.81]

[[curves]]
name = "C_RADIAL"
x = [0.0, 0.001, 0.002, 0.004, 0.01]
y = [0.0, 1000.0, 2500.0, 6000.0, 30000.0]
symmetry = "odd"

[[curves]]
name = "C_ROT"
x = [-0.3, -0.05, 0.0, 0.1, 0.3]
y = [-500.0, -30.0, 0.0, 50.0, 400.0]
interpolation = "smooth"

[[bodies]]
name = "a"
mass = 3.0
position = [0.2, 0.1, 0.0]
euler_zyx_deg = [15.0, -10.0, 5.0]
inertia = { principal = [0.05, 0.04, 0.03] }

[[bodies]]
name = "b"
mass = 5.0
position = [0.0, 0.5, 0.1]
inertia = { principal = [0.08, 0.06, 0.07], euler_zyx_deg = [5.0, 0.0, 30.0] }

[[markers]]
name = "g1"
body = "chassis"
global_position = [0.3, 0.0, 0.0]
global_axes = { x = [0.0, 1.0, 0.0], y = [-1.0, 0.0, 0.0], z = [0.0, 0.0, 1.0] }

[[markers]]
name = "a1"
body = "a"
global_position = [0.3, 0.0, 0.0]

[[markers]]
name = "a2"
body = "a"
global_position = [0.1, 0.3, 0.05]
euler_zyx_deg = [40.0, -25.0, 10.0]

[[markers]]
name = "b1"
body = "b"
global_position = [0.1, 0.3, 0.05]

[[markers]]
name = "b2"
body = "b"
global_position = [-0.1, 0.6, 0.1]

[[markers]]
name = "g2"
body = "chassis"
global_position = [-0.1, 0.6, 0.1]

[[force_elements]]
type = "bushing"
name = "ground_a"
marker_i = "a1"
marker_j = "g1"
stiffness = [2e6, 5e5, 1e6]
rot_stiffness = [800.0, 40.0, 600.0]
damping = [2000.0, 500.0, 1000.0]
rot_damping = [0.8, 0.04, 0.6]
preload = [10.0, -20.0, 30.0]
rot_preload = [1.0, 0.5, -0.25]

[[force_elements]]
type = "bushing"
name = "a_b"
marker_i = "b1"
marker_j = "a2"
stiffness = [1e7, 1e7, 2e7]
rot_stiffness = [50.0, 50.0, 80.0]
damping = [1e4, 1e4, 2e4]

[[force_elements]]
type = "bushing"
name = "b_ground"
marker_i = "g2"
marker_j = "b2"
stiffness = [3e5, 3e5, 1e6]
rot_stiffness = [100.0, 200.0, 300.0]

[[force_elements]]
type = "bushing"
name = "a_b_2"
marker_i = "a2"
marker_j = "b1"
stiffness = [1e6, 2e6, 3e6]
rot_stiffness = [0.0, 20.0, 0.0]
damping = [100.0, 200.0, 300.0]
rot_damping = [1.0, 2.0, 3.0]

[[force_elements]]
type = "bushing"
name = "ground_b"
marker_i = "b2"
marker_j = "g2"
stiffness = [4e5, 4e5, 4e5]
rot_stiffness = [10.0, 10.0, 10.0]
rot_damping = [0.1, 0.1, 0.1]

[[force_elements]]
type = "bushing"
name = "curved_a_b"
marker_i = "a2"
marker_j = "b2"
stiffness = [1e6, 1e6, 2e6]
stiffness_curves = { x = "C_RADIAL", z = "C_RADIAL" }
rot_stiffness = [30.0, 20.0, 10.0]
rot_stiffness_curves = { y = "C_ROT" }
damping = [100.0, 200.0, 300.0]
rot_damping = [1.0, 2.0, 3.0]
"#;

fn reference_axle(file: &str) -> Arc<CompiledModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(file);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(sprung_mbs::compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

/// Largest translational stiffness of any bushing (the scale of a force's round-off per metre).
fn largest_stiffness(model: &CompiledModel) -> f64 {
    let mut k_max = 0.0f64;
    for el in &model.elements {
        if let ElementKind::Bushing(b) = &el.kind {
            for c in &b.stiffness {
                if let Characteristic::Linear(k) = c {
                    k_max = k_max.max(k.abs());
                }
            }
        }
    }
    k_max
}

/// Evaluates q with and without packs at random states (translations ±dx, rotations ±dth,
/// velocities ±vel) and returns the worst (element, q) differences in units of the tolerance.
fn compare(model: &Arc<CompiledModel>, seed: u64, dx: f64, dth: f64, vel: f64) -> (f64, f64) {
    let mut sys = MbsSystem::new(model.clone());
    let mut rng = Rng(seed);
    let k_max = largest_stiffness(model);
    let (mut worst_el, mut worst_q) = (0.0f64, 0.0f64);
    for portable in [true, false] {
        sys.eval.force_portable(portable);
        for _ in 0..6 {
            let (r, v) = random_state(&sys, &mut rng, dx, dth, vel);
            let mut q = [0, 1].map(|_| vec![0.0; sys.n_v()]);
            let mut results = Vec::new();
            for (packs, out) in [false, true].into_iter().zip(q.iter_mut()) {
                sys.eval.use_element_packs(packs);
                sys.accelerations(0.25, &r, &v, out);
                results.push(sys.eval.elements.clone());
            }
            for (k, (a, b)) in results[0].iter().zip(&results[1]).enumerate() {
                let scale = 1e-13 * (k_max + a.force.norm() + a.torque.norm());
                let (o, p) = (&a.out, &b.out);
                let d = [
                    (a.force - b.force).norm() + (a.torque - b.torque).norm(),
                    (o.force - p.force).norm() + (o.torque - p.torque).norm(),
                ]
                .iter()
                .fold(0.0f64, |m, x| m.max(x / scale));
                // Deflections, lengths and rates: differences of coordinates of order 1 m
                // (1 m/s, 1 rad), a few roundings.
                let kin = [
                    (o.deflection - p.deflection).norm(),
                    (o.rot_deflection - p.rot_deflection).norm(),
                    (o.length - p.length).abs(),
                    (o.length_rate - p.length_rate).abs(),
                ];
                assert!(
                    kin.iter().all(|x| *x <= 1e-14),
                    "{}: element {} kinematics differ: {kin:?}",
                    model.name,
                    model.elements[k].name
                );
                assert!(
                    d <= 1.0,
                    "{}: element {} differs by {d} tolerances",
                    model.name,
                    model.elements[k].name
                );
                // Points of application: marker origins of order 1 m, a few roundings.
                for side in 0..2 {
                    assert!((a.point[side] - b.point[side]).norm() <= 1e-14);
                }
                assert_eq!(a.point_end, b.point_end);
                worst_el = worst_el.max(d);
            }
            let q_scale = q[0].iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let dq = q[0]
                .iter()
                .zip(&q[1])
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
                / (1e-11 * q_scale);
            assert!(dq <= 1.0, "{}: q differs by {dq} tolerances", model.name);
            worst_q = worst_q.max(dq);
        }
    }
    (worst_el, worst_q)
}

/// The models of the comparison: both reference axles, every element type, partly filled packs.
fn models() -> Vec<Arc<CompiledModel>> {
    vec![
        reference_axle("double_wishbone.toml"),
        reference_axle("multilink.toml"),
        model_from_toml(ALL_ELEMENTS),
        model_from_toml(PARTLY_FILLED),
    ]
}

#[test]
fn packs_cover_every_element() {
    for model in models() {
        let bushings = model
            .elements
            .iter()
            .filter(|e| matches!(&e.kind, ElementKind::Bushing(_)))
            .count();
        let p2p = model
            .elements
            .iter()
            .filter(|e| matches!(&e.kind, ElementKind::P2p(_)))
            .count();
        let sys = MbsSystem::new(model.clone());
        assert_eq!(
            sys.eval.n_packed_elements(),
            (bushings, p2p),
            "{}",
            model.name
        );
        assert!(bushings > 0 && (p2p > 0 || model.name == "five_bushings"));
    }
}

#[test]
fn packed_and_single_elements_agree_to_round_off() {
    for model in &models() {
        // Small deflections: in-lane series (three and seven terms); then large rotations:
        // lane by lane, including angles beyond 2π/3 (the quaternion-based logarithm).
        for (seed, dx, dth) in [
            (1, 1e-5, 2e-4),
            (2, 2e-3, 0.02),
            (3, 2e-3, 0.5),
            (4, 1e-2, 1.5),
        ] {
            let (el, q) = compare(model, seed, dx, dth, 0.3);
            eprintln!(
                "{} dth {dth}: worst element {el:.2e}, q {q:.2e} (in tolerances)",
                model.name
            );
        }
    }
}

#[test]
fn linearisation_and_single_path_q_are_identical() {
    // Without packs, q comes from the very code of the linearisation (its partials switched off).
    let model = reference_axle("double_wishbone.toml");
    let mut sys = MbsSystem::new(model);
    let (r, v) = random_state(&sys, &mut Rng(9), 1e-3, 0.01, 0.2);
    let mut lin = Linearisation::new(sys.n_r(), sys.pattern());
    sys.linearise(0.1, &r, &v, &mut lin);
    let mut q = vec![0.0; sys.n_v()];
    sys.eval.use_element_packs(false);
    sys.accelerations(0.1, &r, &v, &mut q);
    assert_eq!(lin.q, q);
}

/// The packed q path sees the same curve segments as the linearisation at the same state: no
/// segment change is counted (`MechanicalSystem::segment_changes`). The models hold partly
/// filled point-to-point packs with curves (every element type) and bushing packs with curves;
/// before the fix in `sprung_mbs::p2p` the padding lanes of a point-to-point pack evaluated their
/// law again, so every q evaluation of such a model counted as a segment change (the 10-wheeler
/// of document 002 split every LSRT2 step). The last model adds one spring with a curve to the
/// bushing model: a point-to-point pack with three padding lanes that repeat it.
#[test]
fn packed_q_sees_the_linearisations_segments() {
    let one_curved_spring = format!(
        "{PARTLY_FILLED}\n[[force_elements]]\ntype = \"spring\"\nname = \"curved_spring\"\nmarker_i = \"a1\"\nmarker_j = \"g2\"\ncurve = \"C_RADIAL\"\n"
    );
    let mut all = models();
    all.push(model_from_toml(&one_curved_spring));
    for model in all {
        let mut sys = MbsSystem::new(model.clone());
        let mut lin = Linearisation::new(sys.n_r(), sys.pattern());
        let mut q = vec![0.0; sys.n_v()];
        for seed in 0..4 {
            let (r, v) = random_state(&sys, &mut Rng(20 + seed), 2e-3, 0.02, 0.3);
            sys.linearise(0.1, &r, &v, &mut lin);
            let before = sys.segment_changes();
            sys.eval.use_element_packs(true);
            sys.accelerations(0.1, &r, &v, &mut q);
            assert_eq!(sys.segment_changes(), before, "{} seed {seed}", model.name);
        }
    }
}

/// With segment tracking off (`MbsSystem::set_watch_segments(false)`, what a stepper that ignores
/// breakpoints sets) q and the linearisation are the same bits as with it on, and no segment
/// change is counted where the tracking counts some: the linearisation at one random state and
/// q at other states (larger deflections and velocities, so that some curve — the multilink's
/// damper knot at −0.01 m/s, the bushing tables — changes segment between them).
#[test]
fn segment_tracking_off_changes_nothing_but_the_count() {
    let mut counted = 0;
    for model in models() {
        let mut on = MbsSystem::new(model.clone());
        let mut off = MbsSystem::new(model.clone());
        off.set_watch_segments(false);
        let mut lin_on = Linearisation::new(on.n_r(), on.pattern());
        let mut lin_off = Linearisation::new(off.n_r(), off.pattern());
        let (mut q_on, mut q_off) = (vec![0.0; on.n_v()], vec![0.0; off.n_v()]);
        let (r0, v0) = random_state(&on, &mut Rng(40), 2e-3, 0.02, 0.3);
        on.linearise(0.1, &r0, &v0, &mut lin_on);
        off.linearise(0.1, &r0, &v0, &mut lin_off);
        assert_eq!(lin_on.q, lin_off.q, "{}", model.name);
        assert_eq!(lin_on.j_v.values(), lin_off.j_v.values(), "{}", model.name);
        for seed in 0..8 {
            let (r, v) = random_state(&on, &mut Rng(41 + seed), 1e-2, 0.05, 1.0);
            on.accelerations(0.1, &r, &v, &mut q_on);
            off.accelerations(0.1, &r, &v, &mut q_off);
            assert_eq!(q_on, q_off, "{} seed {seed}", model.name);
        }
        assert_eq!(off.segment_changes(), 0, "{}", model.name);
        counted += on.segment_changes();
    }
    // The states do cross segments: the count with tracking on is not zero.
    assert!(counted > 0, "no segment change with tracking on");
}
