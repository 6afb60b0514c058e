//! Ideal joints in relative coordinates (`docs/joints.md`, document 004 sec. 2.2) against
//! independent truth: the pendulum's small-swing period and its energy over a large swing, a
//! mass on a spring on a prismatic joint, a slider on a free carrier (momentum and the relative
//! frequency through the coupled joint mass matrix), and the projected linearisation against
//! central differences of the projected accelerations.

use std::f64::consts::PI;
use std::path::Path;
use std::sync::Arc;

use sprung_mbs::simulate::{LinearSolverKind, RunSettings, run};
use sprung_mbs::{CompiledModel, MbsSystem, compile};
use sprung_solve::mech::adaptive::Control;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::{column_error, tangent_columns};

fn load(name: &str) -> Arc<CompiledModel> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let m = sprung_model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

fn from_toml(src: &str) -> Arc<CompiledModel> {
    let m = sprung_model::from_toml_str(src, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    Arc::new(compile(&m).unwrap_or_else(|e| panic!("{e}")))
}

fn settings(method: &str, step: f64, t_end: f64) -> RunSettings {
    RunSettings {
        breakpoints: sprung_solve::mech::Breakpoints::Ignore,
        rtol: 1e-8,
        atol: 1e-10,
        adaptive: Some(false),
        ..RunSettings::fixed_step(method, step, t_end)
    }
}

/// Times of the upward zero crossings of velocity slot `slot` over recorded `rows` (t, r, v)
/// (linear interpolation).
fn up_crossings(rows: &[(f64, Vec<f64>, Vec<f64>)], slot: usize) -> Vec<f64> {
    let (t, x) = (|k: usize| rows[k].0, |k: usize| rows[k].2[slot]);
    (1..rows.len())
        .filter(|&k| x(k - 1) < 0.0 && x(k) >= 0.0)
        .map(|k| t(k - 1) + (t(k) - t(k - 1)) * (-x(k - 1)) / (x(k) - x(k - 1)))
        .collect()
}

/// Runs `model` with `s`, recording (t, r, v) at every output.
fn record(model: &Arc<CompiledModel>, s: &RunSettings) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let mut sys = MbsSystem::new(model.clone());
    let (mut r, mut v) = model.design_state();
    let mut out = Vec::new();
    run(&mut sys, s, &mut r, &mut v, &mut |t, r, v| {
        out.push((t, r.to_vec(), v.to_vec()));
        Control::Continue
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

#[test]
fn pendulum_small_swing_period_matches_the_compound_pendulum() {
    let model = load("joint_pendulum.toml");
    let rows = record(&model, &settings("lsrt2", 1e-3, 4.5));
    let ups = up_crossings(&rows, 0);
    assert!(ups.len() >= 2, "{ups:?}");
    let period = ups[1] - ups[0];
    let (m, g, l, i_p) = (2.0f64, 9.81f64, 1.0f64, 2.02f64);
    let t_lin = 2.0 * PI * (i_p / (m * g * l)).sqrt();
    // Amplitude 0.1 rad: the period is longer than the linear one by θ₀²/16 = 6.25e-4
    // (first term of the elliptic-integral series); LSRT2 at 1 ms adds its phase error.
    let t_amp = t_lin * (1.0 + 0.1f64.powi(2) / 16.0);
    let err = (period - t_amp).abs() / t_amp;
    println!(
        "period {period:.6} s, expected {t_amp:.6} s (linear {t_lin:.6}), rel. error {err:.2e}"
    );
    // Bound: the next series term 11 θ₀⁴ / 3072 = 3.6e-7 plus the phase error of LSRT2 at 1 ms
    // (measured total 7.5e-7).
    assert!(err < 2e-6, "{period} vs {t_amp}: {err:e}");
}

/// A fixed joint (`docs/joints.md`, "Fixed joints"): a 1 kg weight (inertia 0.01 kg m² about
/// y) fixed 0.5 m below the pendulum's bob swings with it as one compound pendulum: I_p = 2.02 +
/// 0.01 + 1 × 1.5² = 4.28 kg m², m g l = (2 × 1 + 1 × 1.5) g, the same amplitude correction and
/// bound as `pendulum_small_swing_period_matches_the_compound_pendulum` (measured there 7.5e-7;
/// the period is 35 % longer, LSRT2's phase error per period the same order); the weight stays
/// 0.5 m below the bob along the bob's axis to round-off (bound 1e-12 m); and over a 2.5 rad
/// swing (RK4 0.1 ms, 1 s) the energy of both bodies stays within 1e-12 m g l (the fixed body's
/// kinetic energy is the rigid pair's).
#[test]
fn a_fixed_body_swings_with_its_parent_as_one_compound_pendulum() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/joint_pendulum.toml"),
    )
    .unwrap()
        + r#"
[[bodies]]
name = "weight"
mass = 1.0
position = [0.0, 0.0, -1.5]
inertia = { principal = [0.01, 0.01, 0.01] }
joint = { type = "fixed", parent = "bob" }
"#;
    let model = from_toml(&src);
    assert!(model.joints.defs[1].as_ref().is_some_and(|d| !d.own));
    let rows = record(&model, &settings("lsrt2", 1e-3, 6.0));
    let ups = up_crossings(&rows, 0);
    assert!(ups.len() >= 2, "{ups:?}");
    let period = ups[1] - ups[0];
    let (g, i_p, mgl) = (9.81f64, 4.28f64, 3.5 * 9.81f64);
    let t_amp = 2.0 * PI * (i_p / mgl).sqrt() * (1.0 + 0.1f64.powi(2) / 16.0);
    let err = (period - t_amp).abs() / t_amp;
    println!("period {period:.6} s, expected {t_amp:.6} s, rel. error {err:.2e}");
    assert!(err < 2e-6, "{period} vs {t_amp}: {err:e}");
    let mut sys = MbsSystem::new(model.clone());
    let mut worst: f64 = 0.0;
    for (_, r, v) in rows.iter().step_by(50) {
        let (_, rf, _) = sys.expanded(r, v);
        let bob = nalgebra::Vector3::new(rf[0], rf[1], rf[2]);
        let weight = nalgebra::Vector3::new(rf[7], rf[8], rf[9]);
        let axes = sprung_mbs::rotation::quat_to_matrix(&rf[3..7]);
        let rel = axes.transpose() * (weight - bob) - nalgebra::Vector3::new(0.0, 0.0, -0.5);
        worst = worst.max(rel.norm());
    }
    assert!(worst < 1e-12, "{worst:e}");
    let big = from_toml(&src.replace("z0 = 0.1", "z0 = 2.5"));
    let rows = record(&big, &settings("rk4", 1e-4, 1.0));
    let drift = energy_drift(&mut MbsSystem::new(big.clone()), &rows);
    println!("energy drift {drift:.3e} J of m g l = {mgl} J ({g})");
    assert!(drift < 1e-12 * mgl, "{drift:e}");
}

/// The largest deviation of [`energy`] over the recorded `rows` from its value at the first, J.
fn energy_drift(sys: &mut MbsSystem, rows: &[(f64, Vec<f64>, Vec<f64>)]) -> f64 {
    let e0 = energy(sys, &rows[0].1, &rows[0].2);
    rows.iter()
        .map(|(_, r, v)| (energy(sys, r, v) - e0).abs())
        .fold(0.0f64, f64::max)
}

/// Kinetic plus potential energy of all bodies at the (reduced) state, J.
fn energy(sys: &mut MbsSystem, r: &[f64], v: &[f64]) -> f64 {
    let model = sys.model().clone();
    let (_, rf, vf) = sys.expanded(r, v);
    let g = model.gravity;
    model
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = nalgebra::Vector3::new(rf[7 * i], rf[7 * i + 1], rf[7 * i + 2]);
            let vel = nalgebra::Vector3::new(vf[6 * i], vf[6 * i + 1], vf[6 * i + 2]);
            let w = nalgebra::Vector3::new(vf[6 * i + 3], vf[6 * i + 4], vf[6 * i + 5]);
            0.5 * b.mass * vel.norm_squared() + 0.5 * w.dot(&(b.inertia * w)) - b.mass * g.dot(&x)
        })
        .sum()
}

/// The pendulum swinging through 2.5 rad (z0 = 2.5 rad, near the top), RK4 at 0.1 ms over 3 s:
/// the total energy stays within 1e-12 m g l of its start (m g l = 19.6 J; RK4's energy error
/// at this step is O(h⁴), measured 4e-13 J = 2e-14 m g l); and with LSRT2 at 1 ms the swing's
/// turning angle stays within 1e-6 rad of −2.5 rad (measured 9.5e-8 rad).
#[test]
fn pendulum_large_swing_conserves_energy() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/joint_pendulum.toml"),
    )
    .unwrap()
    .replace("z0 = 0.1", "z0 = 2.5");
    let model = from_toml(&src);
    let rows = record(&model, &settings("rk4", 1e-4, 3.0));
    let drift = energy_drift(&mut MbsSystem::new(model.clone()), &rows);
    let mgl = 2.0 * 9.81;
    println!("energy drift {drift:.3e} J of m g l = {mgl} J");
    assert!(drift < 1e-12 * mgl, "{drift}");
    // The swing reaches −2.5 rad (energy) within the time; sampled every 0.1 ms near the
    // turning point, where z changes by ½ z̈ h² ≈ 3e-8 rad per sample.
    let zmin = rows.iter().map(|x| x.1[0]).fold(f64::INFINITY, f64::min);
    assert!((zmin + 2.5).abs() < 1e-7, "{zmin}");
    let rows = record(&model, &settings("lsrt2", 1e-3, 3.0));
    let zmin = rows.iter().map(|x| x.1[0]).fold(f64::INFINITY, f64::min);
    println!("LSRT2 1 ms: turning angle {zmin:.9} rad");
    assert!((zmin + 2.5).abs() < 1e-6, "{zmin}");
}

/// A mass on a spring along a prismatic joint to the ground, the joint axis skewed in space and
/// gravity across it: the joint coordinate oscillates at √(k/m) about the static deflection
/// m g·a / k. Frequency from the zero crossings of ż over 3 periods, LSRT2 at 0.5 ms.
#[test]
fn prismatic_mass_on_a_spring_oscillates_at_sqrt_k_over_m() {
    let model = from_toml(
        r#"
[model]
name = "prismatic_spring"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "mass"
mass = 2.5
position = [0.2, 0.3, 0.4]
euler_zyx_deg = [10.0, 20.0, 30.0]
inertia = { principal = [0.01, 0.02, 0.03] }
joint = { type = "prismatic", parent = "ground", axis = [1.0, 2.0, 2.0], z0 = 0.02 }

[[markers]]
name = "anchor"
body = "ground"
global_position = [-0.13333333333333333, -0.36666666666666667, -0.26666666666666667]

[[markers]]
name = "mass.point"
body = "mass"
global_position = [0.2, 0.3, 0.4]

[[force_elements]]
type = "spring"
name = "spring"
marker_i = "mass.point"
marker_j = "anchor"
stiffness = 1000.0
free_length = 1.0
"#,
    );
    // The anchor sits 1 m from the mass along −a (a = (1, 2, 2)/3), so the spring is along the
    // axis at its free length in the design pose.
    let (k, m) = (1000.0f64, 2.5f64);
    let rows = record(&model, &settings("lsrt2", 5e-4, 1.0));
    let ups = up_crossings(&rows, 0);
    let n = ups.len() - 1;
    let period = (ups[n] - ups[0]) / n as f64;
    let w = 2.0 * PI / period;
    let err = (w - (k / m).sqrt()).abs() / (k / m).sqrt();
    println!(
        "ω = {w:.6} rad/s vs √(k/m) = {:.6}: {err:.2e}",
        (k / m).sqrt()
    );
    // LSRT2's phase error at ω h = 0.01: O((ωh)²)/12 ≈ 1e-5; measured below.
    assert!(err < 2e-5, "{err:e}");
    // The whole history against z(t) = z_s + (z0 − z_s) cos(√(k/m) t), z_s = −m g a_z / k the
    // static deflection (a_z = 2/3, gravity −z).
    let z_s = -m * 9.81 * (2.0 / 3.0) / k;
    let worst = rows
        .iter()
        .map(|(t, r, _)| (r[0] - (z_s + (0.02 - z_s) * ((k / m).sqrt() * t).cos())).abs())
        .fold(0.0f64, f64::max);
    println!(
        "largest |z − z_exact| {worst:.3e} m (amplitude {:.4} m)",
        0.02 - z_s
    );
    // The phase error above over 20 rad of phase: 20 × 4e-6 × 0.036 m ≈ 3e-6 m.
    assert!(worst < 5e-6, "{worst:e}");
}

/// The slider on a prismatic joint on a free carrier in zero gravity (models/joint_slider.toml):
/// the total linear momentum m1 v1 + m2 v2 stays at its start (no external force: the joint
/// reaction is internal, which only holds when the coupling through M_z is right), and the
/// relative coordinate oscillates at √(k (m1 + m2) / (m1 m2)).
#[test]
fn slider_on_a_free_carrier_conserves_momentum_and_oscillates_at_the_reduced_mass_frequency() {
    let model = load("joint_slider.toml");
    let mut sys = MbsSystem::new(model.clone());
    let rows = record(&model, &settings("lsrt2", 2.5e-4, 1.0));
    let momentum = |sys: &mut MbsSystem, r: &[f64], v: &[f64]| {
        let m: Vec<f64> = sys.model().bodies.iter().map(|b| b.mass).collect();
        let (_, _, vf) = sys.expanded(r, v);
        (0..3)
            .map(|k| m[0] * vf[k] + m[1] * vf[6 + k])
            .collect::<Vec<f64>>()
    };
    let p0 = momentum(&mut sys, &rows[0].1, &rows[0].2);
    // Both bodies start at the carrier's 0.5 m/s (the joint rate is 0): (3 + 1) × 0.5.
    assert!((p0[0] - 2.0).abs() < 1e-12, "{p0:?}");
    let worst = rows
        .iter()
        .map(|(_, r, v)| {
            let p = momentum(&mut sys, r, v);
            (0..3).map(|k| (p[k] - p0[k]).abs()).fold(0.0f64, f64::max)
        })
        .fold(0.0f64, f64::max);
    println!("largest momentum change {worst:.3e} kg m/s of 2");
    // The momentum is a linear invariant of the projected equations; LSRT2 keeps linear
    // invariants to round-off if its Jacobian respects them too (measured 7.5e-15).
    assert!(worst < 1e-13, "{worst:e}");
    let ups = up_crossings(&rows, 6);
    let n = ups.len() - 1;
    let w = 2.0 * PI * n as f64 / (ups[n] - ups[0]);
    let (k, m1, m2) = (400.0f64, 3.0f64, 1.0f64);
    let w_exact = (k * (m1 + m2) / (m1 * m2)).sqrt();
    let err = (w - w_exact).abs() / w_exact;
    println!("ω = {w:.6} rad/s vs {w_exact:.6}: {err:.2e} ({n} periods)");
    // LSRT2 phase error at ω h = 5.8e-3: ≈ (ωh)²/12 ≈ 3e-6 (measured 1.35e-6).
    assert!(err < 5e-6, "{err:e}");
}

/// A chain on a free carrier: carrier (free, on a bushing to the ground) → arm (revolute, skewed
/// axis) → slider (prismatic on the arm), a spring from the slider to the ground and a damper
/// from the arm to the carrier, gravity on. The projected linearisation (J_r K and J_v) against
/// central differences of the projected accelerations at random states, column by column
/// ([`sprung_test_support::column_error`]). Steps: 1e-6 (1 + |r|) over the positions (as
/// `worst_mechanical_jacobian_error`), 1e-4 (1 + |v|) over the velocities: q of this model is
/// quadratic in v (linear dampers, gyroscopic and J̇ ż terms), so that difference is exact but
/// for round-off, which the larger step keeps at ≈ 1e-11 (with 1e-6 the small slider column
/// shows 6e-7 of difference noise). Measured worst 4.3e-9 (the differenced kinematic terms of
/// the projection, `KINEMATIC_FD_STEP`, and this test's own differences); bound 2e-8.
#[test]
fn projected_linearisation_matches_finite_differences() {
    let model = from_toml(CHAIN);
    let mut sys = MbsSystem::new(model.clone());
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let mut lin = Linearisation::new(nr, sys.pattern());
    let mut rng = sprung_test_support::Rng(11);
    let (mut qp, mut qm) = (vec![0.0; nv], vec![0.0; nv]);
    for case in 0..4 {
        let (mut r, mut v) = model.design_state();
        for x in r[..7].iter_mut().chain(v[..6].iter_mut()) {
            *x += rng.sym(0.1);
        }
        sys.project(&mut r);
        for b in [1usize, 2] {
            r[7 * b] += rng.sym(0.3);
            v[6 * b] += rng.sym(1.0);
        }
        sys.linearise(0.0, &r, &v, &mut lin);
        let mut q = vec![0.0; nv];
        sys.accelerations(0.0, &r, &v, &mut q);
        assert_eq!(q, lin.q, "case {case}: q of the linearisation");
        let jrk = lin.j_rk.to_dense_row_major();
        let jv = lin.j_v.to_dense_row_major();
        let cols = tangent_columns(nr, nv, |dr, w| sys.tangent(&r, dr, w));
        let mut worst = 0.0f64;
        for k in 0..nr {
            let h = 1e-6 * (1.0 + r[k].abs());
            let (mut rp, mut rm) = (r.clone(), r.clone());
            rp[k] += h;
            rm[k] -= h;
            sys.accelerations(0.0, &rp, &v, &mut qp);
            sys.accelerations(0.0, &rm, &v, &mut qm);
            let fd: Vec<f64> = (0..nv).map(|i| (qp[i] - qm[i]) / (2.0 * h)).collect();
            let an: Vec<f64> = (0..nv)
                .map(|i| (0..nv).map(|j| jrk[i * nv + j] * cols[k][j]).sum())
                .collect();
            worst = worst.max(column_error(&an, &fd));
        }
        for k in 0..nv {
            let h = 1e-4 * (1.0 + v[k].abs());
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[k] += h;
            vm[k] -= h;
            sys.accelerations(0.0, &r, &vp, &mut qp);
            sys.accelerations(0.0, &r, &vm, &mut qm);
            let fd: Vec<f64> = (0..nv).map(|i| (qp[i] - qm[i]) / (2.0 * h)).collect();
            let an: Vec<f64> = (0..nv).map(|i| jv[i * nv + k]).collect();
            worst = worst.max(column_error(&an, &fd));
        }
        println!("case {case}: worst column error {worst:.2e}");
        assert!(worst < 2e-8, "case {case}: {worst:e}");
    }
}

/// The chain through the run loop with the block-sparse LU on the reduced system's pattern
/// (the carrier, arm and slider blocks coupled densely by the projection, plus the ground
/// springs' blocks) against the dense LU: the same steps to round-off (LSRT2, 1 ms, 0.5 s,
/// every step re-linearised; bound 1e-10 on every coordinate, measured 9.2e-15).
#[test]
fn the_block_sparse_lu_on_the_joint_pattern_matches_the_dense_one() {
    let model = from_toml(CHAIN);
    let mut s = settings("lsrt2", 1e-3, 0.5);
    let sparse = record(&model, &s);
    s.linear_solver = LinearSolverKind::Dense;
    let dense = record(&model, &s);
    let mut worst = 0.0f64;
    for ((_, r1, v1), (_, r2, v2)) in sparse.iter().zip(&dense) {
        for (a, b) in r1.iter().chain(v1).zip(r2.iter().chain(v2)) {
            worst = worst.max((a - b).abs());
        }
    }
    println!("largest sparse/dense difference {worst:.2e}");
    assert!(worst < 1e-10, "{worst:e}");
    // The motion is not trivial: the arm swings.
    let z = sparse
        .iter()
        .map(|x| x.1[7])
        .fold(0.0f64, |m, z| m.max((z - 0.1).abs()));
    assert!(z > 1e-3, "{z}");
}

const CHAIN: &str = r#"
[model]
name = "chain"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "carrier"
mass = 20.0
position = [0.0, 0.0, 0.5]
inertia = { principal = [0.5, 0.7, 0.9] }

[[bodies]]
name = "arm"
mass = 3.0
position = [0.3, 0.1, 0.4]
euler_zyx_deg = [15.0, -10.0, 5.0]
inertia = { principal = [0.02, 0.05, 0.04] }
joint = { type = "revolute", parent = "carrier", axis = [0.2, 1.0, 0.1], point = [0.1, 0.05, 0.45], z0 = 0.1 }

[[bodies]]
name = "slider"
mass = 1.5
position = [0.5, 0.15, 0.3]
inertia = { principal = [0.004, 0.003, 0.005] }
joint = { type = "prismatic", parent = "arm", axis = [1.0, 0.1, -0.3], z0 = 0.02 }

[[markers]]
name = "g.c"
body = "ground"
global_position = [0.0, 0.0, 0.5]

[[markers]]
name = "carrier.c"
body = "carrier"
global_position = [0.0, 0.0, 0.5]

[[markers]]
name = "carrier.d"
body = "carrier"
global_position = [0.4, 0.0, 0.5]

[[markers]]
name = "arm.d"
body = "arm"
global_position = [0.4, 0.1, 0.35]

[[markers]]
name = "slider.s"
body = "slider"
global_position = [0.55, 0.15, 0.3]

[[markers]]
name = "g.s"
body = "ground"
global_position = [0.9, 0.4, 0.0]

[[force_elements]]
type = "bushing"
name = "mount"
marker_i = "carrier.c"
marker_j = "g.c"
stiffness = [2e4, 3e4, 4e4]
rot_stiffness = [2e3, 3e3, 4e3]
damping = [50.0, 60.0, 70.0]
rot_damping = [5.0, 6.0, 7.0]

[[force_elements]]
type = "damper"
name = "arm_damper"
marker_i = "arm.d"
marker_j = "carrier.d"
damping = 40.0

[[force_elements]]
type = "spring"
name = "slider_spring"
marker_i = "slider.s"
marker_j = "g.s"
stiffness = 800.0
"#;

/// The y-mirrored copy of a jointed body moves as the mirror image (S = diag(1, −1, 1)): a
/// pendulum `bob_L` on a skewed revolute axis off the symmetry plane with `mirror = true`, both
/// copies in one run (RK4, 1 ms, 2 s): every position of `bob_R` is S times that of `bob_L` to
/// 1e-12 m (both integrate mirror-image equations; measured: equal to the bit, the arithmetic
/// is mirror-symmetric, the bound allows a different rounding). This
/// checks the mirroring of the axis as an axial vector (−S a) and of the point.
#[test]
fn a_mirrored_joint_moves_as_the_mirror_image() {
    let model = from_toml(
        r#"
[model]
name = "mirrored"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "bob_L"
mass = 2.0
position = [0.2, 0.7, -1.0]
euler_zyx_deg = [10.0, 5.0, -20.0]
inertia = { principal = [0.02, 0.03, 0.04] }
joint = { type = "revolute", parent = "ground", axis = [0.3, 1.0, 0.2], point = [0.1, 0.6, 0.0], z0 = 0.3, zd0 = 0.5 }
mirror = true
"#,
    );
    let mut sys = MbsSystem::new(model.clone());
    let rows = record(&model, &settings("rk4", 1e-3, 2.0));
    let mut worst = 0.0f64;
    for (_, r, v) in &rows {
        let (_, rf, _) = sys.expanded(r, v);
        let (l, rr) = (&rf[0..3], &rf[7..10]);
        worst = worst
            .max((l[0] - rr[0]).abs())
            .max((l[1] + rr[1]).abs())
            .max((l[2] - rr[2]).abs());
    }
    println!("largest mirror asymmetry {worst:.2e} m");
    assert!(worst < 1e-12, "{worst:e}");
    // And the copy really swings: z moved away from its start.
    assert!((rows[1000].1[7] - 0.3).abs() > 0.1);
}

/// A pendulum included as a `[[subsystems]]` entry with a placement (rotation 30 deg about z,
/// translation) moves as the placed original: positions equal R x + p of the stand-alone run
/// to 1e-12 m (same equations in rotated axes; gravity along z is unchanged by the rotation;
/// measured 4.4e-16 m).
#[test]
fn a_placed_subsystem_moves_its_joint_with_it() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let src = r#"
[model]
name = "placed"
gravity = [0.0, 0.0, -9.81]

[[subsystems]]
name = "p"
file = "joint_pendulum.toml"
position = [1.0, 2.0, 3.0]
euler_zyx_deg = [30.0, 0.0, 0.0]
"#;
    let m = sprung_model::from_str_with_base(src, sprung_model::Format::Toml, "placed.toml", &base)
        .unwrap_or_else(|e| panic!("{e}"));
    let placed = Arc::new(compile(&m).unwrap());
    assert_eq!(placed.bodies[0].name, "p.bob");
    let alone = load("joint_pendulum.toml");
    let s = settings("rk4", 1e-3, 1.0);
    let (ra, rp) = (record(&alone, &s), record(&placed, &s));
    let (mut sa, mut sp) = (MbsSystem::new(alone), MbsSystem::new(placed));
    let rot =
        nalgebra::Rotation3::from_axis_angle(&nalgebra::Vector3::z_axis(), 30f64.to_radians());
    let mut worst = 0.0f64;
    for ((_, r1, v1), (_, r2, v2)) in ra.iter().zip(&rp) {
        let (_, f1, _) = sa.expanded(r1, v1);
        let x1 = rot * nalgebra::Vector3::new(f1[0], f1[1], f1[2])
            + nalgebra::Vector3::new(1.0, 2.0, 3.0);
        let (_, f2, _) = sp.expanded(r2, v2);
        worst = worst.max((x1 - nalgebra::Vector3::new(f2[0], f2[1], f2[2])).norm());
    }
    println!("largest placement difference {worst:.2e} m");
    assert!(worst < 1e-12, "{worst:e}");
}

/// The plausibility check after a step with joints reads the body states of the last q
/// evaluation from the evaluator's body table (`MbsSystem::check_last_evaluated`, no pose
/// write): the same violations, body, value and element, as the check of that evaluation's
/// expanded state — for a displacement, a velocity and a force bound that every moved body
/// passes.
#[test]
fn the_check_of_the_last_evaluation_reads_the_states_of_its_expansion() {
    use sprung_mbs::simulate::Bounds;
    for name in [
        "joint_slider.toml",
        "joint_tabulated.toml",
        "joint_pendulum.toml",
    ] {
        let model = load(name);
        let mut sys = MbsSystem::new(model.clone());
        let (mut r, mut v) = model.design_state();
        // Every jointed body off its design pose and moving, the free bodies moving too.
        for (b, d) in model.joints.defs.iter().enumerate() {
            if d.is_some() {
                r[7 * b] += 0.05;
                v[6 * b] += 0.3;
            } else {
                v[6 * b..6 * b + 6].copy_from_slice(&[0.2, -0.1, 0.05, 0.3, -0.2, 0.1]);
            }
        }
        let mut q = vec![0.0; model.n_v()];
        let tiny = Some(1e-9);
        for bounds in [
            Bounds {
                max_displacement: tiny,
                ..Bounds::default()
            },
            Bounds {
                max_displacement: Some(f64::INFINITY),
                max_velocity: tiny,
                ..Bounds::default()
            },
            Bounds {
                max_displacement: Some(f64::INFINITY),
                max_velocity: Some(f64::INFINITY),
                max_force: tiny,
            },
        ] {
            let limits = bounds.resolve(&model);
            sys.accelerations(0.1, &r, &v, &mut q);
            let got = sys.check_last_evaluated(&limits, 0.1, &r, &v);
            let (eval, rf, vf) = sys.expanded(&r, &v);
            let want = limits.check_state(eval, 0.1, rf, vf);
            let (got, want) = (got.expect(name), want.expect(name));
            assert_eq!(
                (got.body, got.quantity, got.element.map(|e| e.0)),
                (want.body, want.quantity, want.element.map(|e| e.0)),
                "{name}"
            );
            assert!(
                (got.value - want.value).abs() <= 1e-12 * want.value,
                "{name}: {} vs {}",
                got.value,
                want.value
            );
        }
    }
}
