//! The macro joint on the double-wishbone axle (`models/double_wishbone.toml`, document 000's
//! reference front axle; the multilink rear axle for the statics too): the reduced axle against the full one in statics (wheel travel sweep
//! with toe, camber, track), in the Fx load case, in its modes, and with explicit Euler.

use std::sync::Arc;

use sprung::{Control, Model, RunSettings, Simulation};
use sprung_reduce::{ReduceOptions, Reduction, reduce};

const TRACKED: [&str; 4] = ["wc_dz_L", "toe_L", "camber_L", "wc_dy_L"];

fn full() -> sprung_model::Model {
    sprung_model::load(&sprung_test_support::model_path("double_wishbone.toml")).unwrap()
}

/// The full axle with the links' masses and inertias scaled by 1e-6: the massless-link limit
/// the macro joint stands for, in a model the engine integrates body by body.
fn massless_links(m: &sprung_model::Model, r: &Reduction) -> sprung_model::Model {
    let mut m = m.clone();
    for b in m.bodies.iter_mut() {
        if r.corners.iter().any(|c| c.links.contains(&b.name)) {
            b.mass *= 1e-6;
            if let Some(t) = b.inertia.tensor.as_mut() {
                t.iter_mut().flatten().for_each(|v| *v *= 1e-6);
            }
        }
    }
    m
}

/// Static equilibrium at each vertical wheel force: the tracked channels per force.
fn sweep(label: &str, m: sprung_model::Model, fz: &[f64], settle: bool) -> Vec<[f64; 4]> {
    let model = Model::from_description(m)
        .unwrap()
        .with_runtime_inputs(&["Fz_L", "Fz_R"])
        .unwrap();
    let model = Arc::new(model);
    // Continuation from the design load (5000 N) outwards in both directions, each equilibrium
    // started from its neighbour's.
    let mut out = vec![[0.0; 4]; fz.len()];
    let mid = fz.iter().position(|&f| f == 5000.0).unwrap();
    for branch in [
        (mid..fz.len()).collect::<Vec<_>>(),
        (0..=mid).rev().collect(),
    ] {
        let mut sim = Simulation::new(model.clone()).unwrap();
        let mut last = 5000.0;
        for k in branch {
            if settle {
                // The reduced axle: let the load change settle dynamically (LSRT2, 0.3 s), then
                // polish with the static solver — its Newton started at the previous
                // equilibrium diverges on the reduced axle (docs/macro-joint.md, open problems).
                sim.set_input("Fz_L", fz[k]).unwrap();
                sim.set_input("Fz_R", fz[k]).unwrap();
                let t = sim.time() + 0.3;
                sim.advance_to(t).unwrap();
                sim.equilibrium()
                    .unwrap_or_else(|e| panic!("{label}: Fz = {} N: {e}", fz[k]));
            } else {
                // Load steps of at most 250 N between equilibria.
                let n = ((fz[k] - last).abs() / 250.0).ceil().max(1.0) as usize;
                for j in 1..=n {
                    let f = last + (fz[k] - last) * j as f64 / n as f64;
                    sim.set_input("Fz_L", f).unwrap();
                    sim.set_input("Fz_R", f).unwrap();
                    sim.equilibrium()
                        .unwrap_or_else(|e| panic!("{label}: Fz = {f} N: {e}"));
                }
            }
            last = fz[k];
            out[k] = TRACKED.map(|c| sim.channel(c).unwrap());
        }
    }
    out
}

/// Largest |a − b| per tracked channel.
fn max_diff(a: &[[f64; 4]], b: &[[f64; 4]]) -> [f64; 4] {
    let mut d = [0.0f64; 4];
    for (x, y) in a.iter().zip(b) {
        for k in 0..4 {
            d[k] = d[k].max((x[k] - y[k]).abs());
        }
    }
    d
}

/// Vertical wheel forces from the design load up to 72 mm of compression (bump stop). Below the design
/// load (rebound) the static solver does not converge on the reduced axle even after a dynamic
/// settle (docs/macro-joint.md, open problems), so the sweep covers compression only.
const FZ: [f64; 5] = [5000.0, 5750.0, 6500.0, 7250.0, 8000.0];

#[test]
fn travel_sweep_full_vs_reduced() {
    let f = full();
    let ek = reduce(&f, &ReduceOptions::default()).unwrap();
    let full_sweep = sweep("full", f.clone(), &FZ, false);
    let massless = sweep("massless links", massless_links(&f, &ek), &FZ, false);
    let reduced = sweep("reduced", ek.model.clone(), &FZ, true);
    for (k, fz) in FZ.iter().enumerate() {
        println!(
            "Fz {fz:6.0} N: full dz {:+.4} m toe {:+.4} camber {:+.4} dy {:+.5} | reduced {:+.4} {:+.4} {:+.4} {:+.5}",
            full_sweep[k][0],
            full_sweep[k][1],
            full_sweep[k][2],
            full_sweep[k][3],
            reduced[k][0],
            reduced[k][1],
            reduced[k][2],
            reduced[k][3]
        );
    }
    let travel = (full_sweep[0][0], full_sweep[FZ.len() - 1][0]);
    println!("travel range {:.4} .. {:.4} m", travel.0, travel.1);
    // The sweep reaches 72 mm of compression at 8000 N, into the bump stop (whose last segment
    // is ten times steeper: more load adds little travel).
    assert!(travel.1 > 0.07, "{travel:?}");
    let exact = E(max_diff(&reduced, &massless));
    let gravity = E(max_diff(&reduced, &full_sweep));
    println!("reduced vs full with massless links: {exact:.3e} (m, deg, deg, m)");
    println!("reduced vs full (link gravity):      {gravity:.3e}");
    // Massless links: the same equilibrium to the Newton tolerances (1e-10 m per link pose in
    // the macro joint, the engine's equilibrium residual 1e-10 relative): 1e-7 m, 1e-5 deg.
    assert!(exact[0] < 1e-7 && exact[3] < 1e-7, "{exact:e}");
    assert!(exact[1] < 1e-5 && exact[2] < 1e-5, "{exact:e}");
    // Against the full axle the difference is the links' weight (10.75 kg per side, 105 N,
    // partly carried by the wheel): measured dz 1.49e-3 m, toe 1.18e-2 deg, camber 4.88e-2 deg,
    // dy 2.79e-4 m over 0 ... 72 mm; bounds 20 % above.
    assert!(gravity[0] < 1.8e-3 && gravity[3] < 3.4e-4, "{gravity:e}");
    assert!(gravity[1] < 0.014 && gravity[2] < 0.059, "{gravity:e}");
}

/// Four differences printed in exponent form.
struct E([f64; 4]);

impl std::fmt::LowerExp for E {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "dz {:.3e} m, toe {:.3e} deg, camber {:.3e} deg, dy {:.3e} m",
            self.0[0], self.0[1], self.0[2], self.0[3]
        )
    }
}

impl std::ops::Index<usize> for E {
    type Output = f64;
    fn index(&self, k: usize) -> &f64 {
        &self.0[k]
    }
}

/// Wheel-centre x response to the load case's Fx step (-2500 N on both wheels, applied at t = 0
/// from the static equilibrium) over `span` s with LSRT2 at 1 ms.
fn fx_step(m: sprung_model::Model, span: f64) -> (Vec<f64>, Vec<f64>) {
    let model = Model::from_description(m)
        .unwrap()
        .with_runtime_inputs(&["Fx_L", "Fx_R"])
        .unwrap();
    let mut sim = Simulation::new(Arc::new(model)).unwrap();
    sim.set_input("Fx_L", -2500.0).unwrap();
    sim.set_input("Fx_R", -2500.0).unwrap();
    let (mut t, mut x) = (Vec::new(), Vec::new());
    while sim.time() < span - 1e-9 {
        sim.step().unwrap();
        t.push(sim.time());
        x.push(sim.channel("wc_dx_L").unwrap());
    }
    (t, x)
}

#[test]
fn fx_step_modes_and_explicit_euler() {
    let f = full();
    let ek = reduce(&f, &ReduceOptions::default()).unwrap();
    let span = 0.2;
    let (t, x_full) = fx_step(f.clone(), span);
    let (_, x_red) = fx_step(ek.model.clone(), span);
    let e = sprung_io::metrics::channel_error(
        "wc_dx_L",
        &t,
        &x_red,
        &t,
        &x_full,
        sprung_io::metrics::Window::new(0.0, span),
    )
    .unwrap();
    println!(
        "Fx step, wc_dx_L over {span} s: NMSE {:.3e}, final full {:.5} m reduced {:.5} m",
        e.nmse,
        x_full.last().unwrap(),
        x_red.last().unwrap()
    );
    // The difference is the links' inertia and weight (static offset 5e-5 m in x at design
    // load): measured NMSE below; bound 2x.
    assert!(e.nmse < 2.0 * NMSE_MEASURED, "NMSE {:.3e}", e.nmse);

    // Stiffest modes: the reduction removes the links' own high-frequency modes; measured
    // 7.99e5 1/s (full) and 2.62e5 1/s (reduced: the wheel bearing, 1e8 N/m between wheel and
    // carrier, is not part of the suspension links and stays).
    let lam = |m: sprung_model::Model| {
        let mut sim = Simulation::new(Model::from_description(m).unwrap()).unwrap();
        let modes = sim.modes().unwrap();
        (modes.lambda_abs_max, modes.full_eigenvalues)
    };
    let (full_max, _) = lam(f.clone());
    let (red_max, red_eig) = lam(ek.model.clone());
    println!("largest |lambda|: full {full_max:.4e} 1/s, reduced {red_max:.4e} 1/s");
    assert!(red_max < full_max, "{red_max} vs {full_max}");

    // Explicit Euler at 1 ms is stable iff |1 + h lambda| <= 1 for every eigenvalue of the
    // linearisation, i.e. h <= -2 Re(lambda) / |lambda|^2; the run must agree with that
    // prediction.
    let h = 1e-3;
    let worst = red_eig
        .iter()
        .map(|l| ((1.0 + h * l.re).powi(2) + (h * l.im).powi(2)).sqrt())
        .fold(0.0f64, f64::max);
    let (h_max, unstable) = euler_limit(&red_eig, h);
    let (h_max_full, unstable_full) = euler_limit(&lam(f.clone()).1, h);
    for l in red_eig.iter().filter(|l| l.im >= 0.0) {
        if (1.0 + h * l.re).powi(2) + (h * l.im).powi(2) > 1.0 + 1e-12 {
            println!(
                "  unstable at 1 ms: lambda {:.4e} {:+.4e} i ({:.1} Hz, damping ratio {:.3})",
                l.re,
                l.im,
                l.norm() / std::f64::consts::TAU,
                -l.re / l.norm()
            );
        }
    }
    println!(
        "explicit Euler stability limit: full axle h <= {h_max_full:.3e} s ({unstable_full} eigenvalues unstable at 1 ms), reduced h <= {h_max:.3e} s ({unstable} unstable at 1 ms)"
    );
    let model = Model::from_description(ek.model.clone()).unwrap();
    let mut sim = Simulation::new(model).unwrap();
    let settings = RunSettings {
        method: "ode1".into(),
        step: h,
        ..sim.settings().clone()
    };
    let report = sim.run_with(&settings, 0.5, &mut |_, _| Control::Continue);
    let completed = report.stop == sprung::StopReason::Completed;
    println!(
        "explicit Euler (ode1) at 1 ms on the reduced axle: largest |1 + h lambda| = {worst:.3}, run {:?}",
        report.stop
    );
    assert_eq!(completed, worst <= 1.0 + 1e-9, "{:?}", report.stop);
    assert_eq!(completed, unstable == 0);
}

/// The largest explicit-Euler step for which every eigenvalue λ of `eig` (non-zero, |λ| above
/// 1e-9 of the largest) satisfies |1 + h λ| ≤ 1, i.e. h ≤ −2 Re λ / |λ|², s (0 if one has
/// Re λ ≥ 0), and how many eigenvalues violate that at step `h`.
fn euler_limit(eig: &[nalgebra::Complex<f64>], h: f64) -> (f64, usize) {
    let big = eig.iter().map(|l| l.norm()).fold(0.0f64, f64::max);
    let mut h_max = f64::INFINITY;
    let mut unstable = 0;
    for l in eig.iter().filter(|l| l.norm() > 1e-9 * big) {
        h_max = h_max.min((-2.0 * l.re / l.norm_sqr()).max(0.0));
        if (1.0 + h * l.re).powi(2) + (h * l.im).powi(2) > 1.0 + 1e-12 {
            unstable += 1;
        }
    }
    (h_max, unstable)
}

/// NMSE of wc_dx_L, reduced vs full, Fx step over 0.2 s: measured 1.565e-3.
const NMSE_MEASURED: f64 = 1.6e-3;

#[test]
fn multilink_statics_match_massless_links() {
    // The same code on the reference rear axle (models/multilink.toml): five links per side,
    // a subframe as a further boundary body.
    let f = sprung_model::load(&sprung_test_support::model_path("multilink.toml")).unwrap();
    let ek = reduce(&f, &ReduceOptions::default()).unwrap();
    let fz = [5000.0, 5750.0, 6500.0];
    let reduced = sweep("multilink reduced", ek.model.clone(), &fz, true);
    let massless = sweep(
        "multilink massless links",
        massless_links(&f, &ek),
        &fz,
        false,
    );
    let full_sweep = sweep("multilink full", f.clone(), &fz, false);
    let exact = E(max_diff(&reduced, &massless));
    let gravity = E(max_diff(&reduced, &full_sweep));
    println!("multilink: reduced vs massless links {exact:e}");
    println!("multilink: reduced vs full (link gravity) {gravity:e}");
    assert!(exact[0] < 1e-7 && exact[3] < 1e-7, "{exact:e}");
    assert!(exact[1] < 1e-5 && exact[2] < 1e-5, "{exact:e}");
    // Link weight (measured dz 2.00e-3 m, toe 6.78e-3 deg, camber 6.31e-2 deg, dy 3.14e-4 m;
    // bounds 20 % above).
    assert!(gravity[0] < 2.4e-3 && gravity[3] < 3.8e-4, "{gravity:e}");
    assert!(gravity[1] < 8.2e-3 && gravity[2] < 7.6e-2, "{gravity:e}");
}

/// Toe (deg), camber (deg) and half-track change at the wheel centre (m) of the left corner
/// over the K&C rig's parallel-travel sweep, ±80 mm in 9 points (`sprung::kc::travel_curves`:
/// static equilibria with the wheel-centre height held by a vertical force servo, gravity on).
fn kc_curves(label: &str, m: sprung_model::Model) -> [Vec<f64>; 3] {
    let model = Model::from_description(m).unwrap();
    let sw = sprung::kc::travel_curves(&model, 0.08, 9)
        .unwrap_or_else(|e| panic!("{label}: K&C travel sweep: {e}"));
    let travel = sw.travel(0);
    assert!(
        (travel[0] + 0.08).abs() < 1e-6 && (travel[8] - 0.08).abs() < 1e-6,
        "{label}: travel {travel:?}"
    );
    [sw.toe(0), sw.camber(0), sw.half_track_centre(0)]
}

/// Largest |a − b| per curve.
fn curve_diff(a: &[Vec<f64>; 3], b: &[Vec<f64>; 3]) -> [f64; 3] {
    [0, 1, 2].map(|k| {
        a[k].iter()
            .zip(&b[k])
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
    })
}

/// The curves' difference a − b, point by point.
fn curve_sub(a: &[Vec<f64>; 3], b: &[Vec<f64>; 3]) -> [Vec<f64>; 3] {
    [0, 1, 2].map(|k| a[k].iter().zip(&b[k]).map(|(x, y)| x - y).collect())
}

#[test]
fn kc_travel_curves_of_both_variants_over_80_mm() {
    let f = full();
    let ek = reduce(&f, &ReduceOptions::default()).unwrap();
    let kinematic = |factor: f64| {
        reduce(
            &f,
            &ReduceOptions {
                variant: sprung_reduce::Variant::Stiffened,
                kinematic_factor: factor,
                ..ReduceOptions::default()
            },
        )
        .unwrap()
    };
    let (kin, kin10) = (
        kinematic(ReduceOptions::default().kinematic_factor),
        kinematic(10.0),
    );
    let full_c = kc_curves("full", f.clone());
    let massless_c = kc_curves("massless links", massless_links(&f, &ek));
    let ek_c = kc_curves("elastokinematic", ek.model.clone());
    let kin_c = kc_curves("kinematic", kin.model.clone());
    let kin10_c = kc_curves("kinematic, factor 10", kin10.model.clone());
    let links: Vec<String> = kin.corners.iter().flat_map(|c| c.links.clone()).collect();
    // The engine's static solver handles the full axle with link bushings x10 (x1000 makes its
    // stiffness matrix numerically singular).
    let stiff = sprung_reduce::stiffen_link_bushings(&f, &links, 10.0).unwrap();
    let stiff_c = kc_curves("full, link bushings x10", stiff);
    for k in 0..9 {
        println!(
            "point {k}: toe full {:+.5} ek {:+.5} kin {:+.5} | camber {:+.5} {:+.5} {:+.5} | track {:+.6} {:+.6} {:+.6}",
            full_c[0][k],
            ek_c[0][k],
            kin_c[0][k],
            full_c[1][k],
            ek_c[1][k],
            kin_c[1][k],
            full_c[2][k],
            ek_c[2][k],
            kin_c[2][k]
        );
    }
    // Elastokinematic corner = the full axle in the massless-link limit: equal to the
    // equilibrium tolerances (rig: 1e-10 relative; macro joint: 1e-10 m per link pose).
    let exact = curve_diff(&ek_c, &massless_c);
    let weight = curve_diff(&ek_c, &full_c);
    println!(
        "elastokinematic vs massless links: toe {:.2e} deg, camber {:.2e} deg, track {:.2e} m",
        exact[0], exact[1], exact[2]
    );
    println!(
        "elastokinematic vs full (link weight): toe {:.2e} deg, camber {:.2e} deg, track {:.2e} m",
        weight[0], weight[1], weight[2]
    );
    assert!(
        exact[0] < 1e-5 && exact[1] < 1e-5 && exact[2] < 1e-7,
        "{exact:?}"
    );
    // Against the full axle the difference is the links' weight (10.75 kg per side, about
    // 105 N next to the 5000 N wheel load); bounds 20 % above the measured values.
    assert!(
        weight[0] < WEIGHT_TOE && weight[1] < WEIGHT_CAMBER && weight[2] < WEIGHT_TRACK,
        "{weight:?}"
    );
    // The kinematic corner differs from the elastokinematic one by the compliance of the link
    // bushings it stiffens. (1) With factor 10 that difference is the one the full axle shows
    // between link bushings x10 and the original ones (a model the engine integrates body by
    // body; the remaining difference is the links' weight acting on the compliance).
    let size = curve_diff(&kin10_c, &ek_c);
    let same = curve_diff(&curve_sub(&kin10_c, &ek_c), &curve_sub(&stiff_c, &full_c));
    println!(
        "kinematic (x10) - elastokinematic: toe {:.3e} deg, camber {:.3e} deg, track {:.3e} m",
        size[0], size[1], size[2]
    );
    println!(
        "  minus (full x10 - full): toe {:.2e} deg, camber {:.2e} deg, track {:.2e} m",
        same[0], same[1], same[2]
    );
    // Measured: the difference itself 0.193 deg toe, 0.536 deg camber, 3.4e-4 m track; the two
    // ways of computing it agree to 8.1e-4 deg, 5.0e-3 deg, 6.1e-6 m (the links' weight on the
    // compliance, present in the full axle only; bounds 20 % above), i.e. to 0.4 %, 0.9 %, 1.8 %.
    assert!(
        same[0] < 9.7e-4 && same[1] < 6.0e-3 && same[2] < 7.3e-6,
        "{same:?}"
    );
    assert!(
        (0..3).all(|k| size[k] > 50.0 * same[k]),
        "{size:?} {same:?}"
    );
    // The default factor 1000 leaves out 99.9 % of the link bushings' compliance: the
    // kinematic curves move further from the elastokinematic ones than with factor 10.
    let size1000 = curve_diff(&kin_c, &ek_c);
    println!(
        "kinematic (x1000) - elastokinematic: toe {:.3e} deg, camber {:.3e} deg, track {:.3e} m",
        size1000[0], size1000[1], size1000[2]
    );
    assert!(
        (0..3).all(|k| size1000[k] > size[k]),
        "{size1000:?} {size:?}"
    );
}

/// Link weight in the K&C travel curves, reduced vs full, ±80 mm: measured bounds (20 % above).
const WEIGHT_TOE: f64 = 1.1e-3;
const WEIGHT_CAMBER: f64 = 6.6e-3;
const WEIGHT_TRACK: f64 = 8.3e-6;
