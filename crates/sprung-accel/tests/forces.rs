//! The generated point-to-point force elements (`codegen/forces.rs`) against the generic packs:
//! per-body forces and torques, the elements' f, L, L̇ and q at moving states of every example
//! model with joints and of a test model with every law and curve kind the generator writes
//! (odd curve with constant extrapolation, curves with breakpoints, bilinear damper, bump and
//! rebound stops with damping, springs with preload and damping, ground markers, two trees and
//! an element between them) next to the elements it leaves to the packs (a bushing, an element
//! on a body outside the trees, a smooth curve); and the segment signature (the breakpoint
//! detection of the lagged Jacobian). Runs with the plugin: tests/kernels.rs.
//!
//! Not `==`: the packs add one wrench per element and fuse some multiply-adds in AVX2 lanes, the
//! generated code adds one wrench per marker pair (Σ f of its elements) in plain products, so
//! the two differ by round-off. Measured (AMD EPYC with AVX2, the packs in AVX2 lanes): body
//! forces ≤ 3e-16 of the largest force on a body, torques ≤ 4e-15 of the largest torque, the
//! elements' f, L, L̇ ≤ 3e-15 of their largest magnitude (L̇: Δx · Δv fused in the packs), q
//! ≤ 5e-16 of the largest |q|; asserted ≤ 1e-14 (q ≤ 1e-12). The curves' values are the generic
//! `Curve::eval`'s to the bit (the same operations on the same literals).

use std::sync::Arc;

use sprung_accel::accelerate;
use sprung_mbs::compiled::ElementKind;
use sprung_mbs::{CompiledModel, MbsSystem};
use sprung_solve::mech::{Linearisation, MechanicalSystem};

mod common;
use common::{JOINT_MODELS, from_toml, load, moving_state, options};

/// A free carrier with an arm on a revolute joint and a slider on a prismatic joint on the arm,
/// a pendulum on the ground (a second tree), a loose free body (no joint: outside the trees),
/// markers on the ground; every law, an element between the two trees.
const TEST_MODEL: &str = r#"
[model]
name = "p2p_laws"
ground = "ground"
gravity = [0.0, 0.0, -9.81]

[[curves]]
name = "odd_soft"
x = [0.0, 0.01, 0.03, 0.1]
y = [0.0, 50.0, 400.0, 4000.0]
extrapolation = "constant"
symmetry = "odd"

[[curves]]
name = "damp"
x = [-1.0, -0.1, -0.01, 0.0, 0.01, 0.1, 1.0]
y = [-900.0, -200.0, -60.0, 0.0, 90.0, 350.0, 1500.0]

[[curves]]
name = "stop"
x = [0.0, 0.005, 0.01, 0.02]
y = [0.0, 100.0, 300.0, 5000.0]

[[curves]]
name = "smooth"
x = [-1.0, 0.0, 1.0]
y = [-500.0, 0.0, 800.0]
interpolation = "smooth"

[[bodies]]
name = "carrier"
mass = 20.0
position = [0.0, 0.0, 0.5]
inertia = { principal = [0.5, 0.6, 0.7] }

[[bodies]]
name = "arm"
mass = 3.0
position = [0.4, 0.1, 0.45]
inertia = { principal = [0.02, 0.05, 0.04] }
joint = { type = "revolute", parent = "carrier", axis = [0.0, 1.0, 0.0], point = [0.1, 0.1, 0.5], z0 = 0.05 }

[[bodies]]
name = "slider"
mass = 1.0
position = [0.6, 0.1, 0.4]
inertia = { principal = [0.002, 0.003, 0.004] }
joint = { type = "prismatic", parent = "arm", axis = [0.0, 0.0, 1.0], z0 = 0.01 }

[[bodies]]
name = "pendulum"
mass = 1.5
position = [1.0, 0.0, 0.2]
inertia = { principal = [0.01, 0.01, 0.01] }
joint = { type = "revolute", parent = "ground", axis = [1.0, 0.0, 0.0], point = [1.0, 0.0, 0.6], z0 = 0.2 }

[[bodies]]
name = "loose"
mass = 2.0
position = [-0.5, 0.0, 0.3]
inertia = { principal = [0.01, 0.01, 0.01] }

[[markers]]
name = "carrier.a"
body = "carrier"
global_position = [0.2, 0.15, 0.7]

[[markers]]
name = "carrier.b"
body = "carrier"
global_position = [-0.3, -0.1, 0.4]

[[markers]]
name = "arm.p"
body = "arm"
global_position = [0.5, 0.12, 0.42]

[[markers]]
name = "slider.s"
body = "slider"
global_position = [0.62, 0.1, 0.35]

[[markers]]
name = "pendulum.e"
body = "pendulum"
global_position = [1.0, 0.05, 0.25]

[[markers]]
name = "loose.c"
body = "loose"
global_position = [-0.5, 0.0, 0.3]

[[markers]]
name = "ground.g"
body = "ground"
global_position = [0.55, 0.1, 0.0]

[[markers]]
name = "ground.h"
body = "ground"
global_position = [0.0, 0.0, 0.2]

[[force_elements]]
type = "spring"
name = "corner_spring"
marker_i = "slider.s"
marker_j = "ground.g"
curve = "odd_soft"
preload = 20.0
damping = 3.0

[[force_elements]]
type = "damper"
name = "corner_damper"
marker_i = "slider.s"
marker_j = "ground.g"
curve = "damp"

[[force_elements]]
type = "stop"
name = "corner_bump"
marker_i = "slider.s"
marker_j = "ground.g"
kind = "bump"
clearance = 0.004
stiffness = 1e5
damping = 50.0

[[force_elements]]
type = "stop"
name = "corner_rebound"
marker_i = "slider.s"
marker_j = "ground.g"
kind = "rebound"
clearance = 0.003
curve = "stop"

[[force_elements]]
type = "damper"
name = "arm_damper"
marker_i = "arm.p"
marker_j = "carrier.a"
damping_rebound = 400.0
damping_compression = 150.0

[[force_elements]]
type = "spring"
name = "arm_spring"
marker_i = "carrier.a"
marker_j = "arm.p"
stiffness = 2000.0
free_length = 0.2

[[force_elements]]
type = "spring"
name = "carrier_spring"
marker_i = "carrier.b"
marker_j = "ground.h"
stiffness = 30000.0
damping = 300.0

[[force_elements]]
type = "spring"
name = "loose_spring"
marker_i = "loose.c"
marker_j = "carrier.b"
stiffness = 500.0

[[force_elements]]
type = "damper"
name = "smooth_damper"
marker_i = "arm.p"
marker_j = "ground.h"
curve = "smooth"

[[force_elements]]
type = "bushing"
name = "loose_mount"
marker_i = "loose.c"
marker_j = "ground.h"
stiffness = [1e4, 1e4, 1e4]
rot_stiffness = [1e3, 1e3, 1e3]
damping = [10.0, 10.0, 10.0]
rot_damping = [1.0, 1.0, 1.0]

[[force_elements]]
type = "spring"
name = "tree_to_tree"
marker_i = "pendulum.e"
marker_j = "carrier.a"
stiffness = 800.0
preload = -5.0

[[force_elements]]
type = "damper"
name = "pendulum_damper"
marker_i = "pendulum.e"
marker_j = "ground.h"
curve = "damp"
"#;

/// The largest |a − b| over `pairs` relative to the largest |b| (absolute when that is 0).
fn rel(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut d, mut scale) = (0.0f64, 0.0f64);
    for (a, b) in pairs {
        d = d.max((a - b).abs());
        scale = scale.max(b.abs());
        if a.is_nan() != b.is_nan() {
            return f64::INFINITY;
        }
    }
    if scale > 0.0 { d / scale } else { d }
}

/// The worst relative differences (body forces and torques, element outputs, q) of the
/// accelerated system against the generic one at moving states of `model`; asserts the
/// kernel's elements are `expect`.
fn compare(name: &str, model: &Arc<CompiledModel>, expect: &[usize]) -> [f64; 4] {
    let (kernel, _) = accelerate(model, &options()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(kernel.force_elements(), expect, "{name}: covered elements");
    let mut plain = MbsSystem::new(model.clone());
    let mut fast = MbsSystem::new(model.clone());
    fast.set_tree_kernel(Some(kernel));
    let nb = model.bodies.len();
    let mut worst = [0.0f64; 4];
    for s in [1.0, -0.7, 2.0, -3.0, 0.2] {
        let (r, v) = moving_state(model, s);
        let (mut qa, mut qb) = (vec![0.0; plain.n_v()], vec![0.0; fast.n_v()]);
        plain.accelerations(0.0, &r, &v, &mut qa);
        fast.accelerations(0.0, &r, &v, &mut qb);
        let wa: Vec<_> = (0..nb).map(|i| plain.eval.body_wrench(i)).collect();
        let wb: Vec<_> = (0..nb).map(|i| fast.eval.body_wrench(i)).collect();
        let forces = rel(wb
            .iter()
            .zip(&wa)
            .flat_map(|(b, a)| (0..3).map(|k| (b.0[k], a.0[k]))));
        let torques = rel(wb
            .iter()
            .zip(&wa)
            .flat_map(|(b, a)| (0..3).map(|k| (b.1[k], a.1[k]))));
        let (els, out) = fast.eval.kernel_element_outputs().unwrap_or((&[], &[]));
        let mut outputs = 0.0f64;
        for c in 0..3 {
            let pairs = els.iter().enumerate().map(|(n, &k)| {
                let e = &plain.eval.elements[k].out;
                (out[3 * n + c], [e.force.x, e.length, e.length_rate][c])
            });
            outputs = outputs.max(rel(pairs));
        }
        let q = rel(qb.iter().copied().zip(qa.iter().copied()));
        for (w, x) in worst.iter_mut().zip([forces, torques, outputs, q]) {
            *w = w.max(x);
        }
    }
    assert!(
        worst[0] <= 1e-14 && worst[1] <= 1e-14 && worst[2] <= 1e-14 && worst[3] <= 1e-12,
        "{name}: forces {:e}, torques {:e}, element outputs {:e}, q {:e}",
        worst[0],
        worst[1],
        worst[2],
        worst[3]
    );
    worst
}

/// The point-to-point elements of `model`.
fn p2p(model: &CompiledModel) -> Vec<usize> {
    (0..model.elements.len())
        .filter(|&k| matches!(model.elements[k].kind, ElementKind::P2p(_)))
        .collect()
}

#[test]
fn generated_forces_match_the_generic_packs_on_the_joint_models() {
    for name in JOINT_MODELS {
        let model = load(name);
        let w = compare(name, &model, &p2p(&model));
        eprintln!("{name}: {w:?}");
    }
}

#[test]
fn generated_forces_match_the_generic_packs_for_every_law() {
    let model = from_toml(TEST_MODEL, "p2p_laws.toml");
    let names: Vec<&str> = model.elements.iter().map(|e| e.name.as_str()).collect();
    // All but the element on the loose body, the smooth curve's and the bushing.
    let expect: Vec<usize> = (0..7).chain([10, 11]).collect();
    assert_eq!(model.joints.trees.len(), 2);
    assert_eq!(
        names[7..10],
        ["loose_spring", "smooth_damper", "loose_mount"],
        "{names:?}"
    );
    let w = compare("p2p_laws", &model, &expect);
    eprintln!("p2p_laws: {w:?}");
}

/// The kernel's curve evaluations add to the segment signature what the generic ones add: after
/// a (generic) linearisation at a state, q at that state sees the same segments on both systems
/// and at states in other segments both see a change, equally often.
#[test]
fn the_segment_signature_is_the_generic_one() {
    let model = from_toml(TEST_MODEL, "p2p_laws.toml");
    let (kernel, _) = accelerate(&model, &options()).unwrap_or_else(|e| panic!("{e}"));
    let mut plain = MbsSystem::new(model.clone());
    let mut fast = MbsSystem::new(model.clone());
    fast.set_tree_kernel(Some(kernel));
    let scales = [0.0, 0.05, 0.3, 1.0, -0.5, -2.0, 3.0];
    let mut changes = Vec::new();
    for sys in [&mut plain, &mut fast] {
        let mut lin = Linearisation::new(sys.n_r(), sys.pattern());
        let mut q = vec![0.0; sys.n_v()];
        let mut seen = Vec::new();
        for &a in &scales {
            let (ra, va) = moving_state(&model, a);
            sys.linearise(0.0, &ra, &va, &mut lin);
            let before = sys.segment_changes();
            sys.accelerations(0.0, &ra, &va, &mut q);
            assert_eq!(
                sys.segment_changes(),
                before,
                "q at the linearisation's state"
            );
            for &b in &scales {
                let (rb, vb) = moving_state(&model, b);
                sys.accelerations(0.0, &rb, &vb, &mut q);
            }
            seen.push(sys.segment_changes() - before);
        }
        changes.push(seen);
    }
    assert_eq!(changes[0], changes[1]);
    assert!(changes[0].iter().any(|&c| c > 0), "{:?}", changes[0]);
}
