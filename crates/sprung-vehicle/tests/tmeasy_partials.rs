//! Analytic partials of the TMeasy law (`TireModel::partials`, forward-mode derivatives of the
//! law) against central finite differences of `TireModel::evaluate`, over the three data-sheet
//! sets: pure and combined slip in every branch of the characteristic, low speed, standstill,
//! both signs of vx and ω, camber and turn slip, above pn_max, lifted off.
//!
//! Error measure: for output row r and input column c, |J_rc − D_rc| · typ_c / S_r, with typ_c a
//! typical size of input c (velocities: min(1 m/s, 10 v_t)) and S_r = max_c |D_rc| typ_c (the row's sensitivity to typical input
//! changes). Step h_c = 1e-6 (|x_c| + typ_c); the central-difference error is O(h²) ≈ 1e-10 of
//! the row scale plus rounding ε/h ≈ 1e-10, so the tolerance is 1e-6 (measured worst: printed).
//! At standstill the step is 1e-10 relative (see there).

mod tmeasy_common;

use sprung_test_support::Rng;
use sprung_vehicle::tire::tmeasy::Tmeasy;
use sprung_vehicle::tire::{N_FORCES, N_KIN, SlipKinematics, TireForces, TireModel, TirePartials};
use tmeasy_common::{SETS, rolling, tire};

const NS: usize = 3;
const NR: usize = N_FORCES + NS;

fn eval(t: &Tmeasy, k: &SlipKinematics, s: &[f64; NS]) -> [f64; NR] {
    let mut f = TireForces::default();
    let mut r = [0.0; NS];
    t.evaluate(k, s, &mut f, &mut r);
    let a = f.as_array();
    [a[0], a[1], a[2], a[3], a[4], r[0], r[1], r[2]]
}

/// Worst scaled error of the partials at one point (module docs).
fn check(t: &Tmeasy, k: &SlipKinematics, s: &[f64; NS], what: &str) -> f64 {
    check_with(t, k, s, what, 1e-6)
}

/// [`check`] with the relative step `step`.
fn check_with(t: &Tmeasy, k: &SlipKinematics, s: &[f64; NS], what: &str, step: f64) -> f64 {
    let p = &t.params;
    // Velocities vary on the scale of the transport velocity v_t (slips are v/v_t): at low speed
    // the typical velocity change (and so the step) shrinks with it.
    let vt = t.effective_radius(k.fz, k.rho) * k.omega.abs() + p.v_n;
    let typ_v = (10.0 * vt).min(1.0);
    let typ_k = [p.pn, 0.01, typ_v, typ_v, typ_v / p.r0, 0.1, 1.0];
    let typ_s = [1e-3; NS];
    let mut jac = TirePartials::default();
    t.partials(k, s, &mut jac);
    let x0 = k.as_array();
    // Columns: (analytic column, fd column, typ).
    let mut cols: Vec<([f64; NR], [f64; NR], f64)> = Vec::new();
    for c in 0..N_KIN {
        let h = step * (x0[c].abs() + typ_k[c]);
        let (mut kp, mut km) = (*k, *k);
        let (mut xp, mut xm) = (x0, x0);
        xp[c] += h;
        xm[c] -= h;
        kp.set_array(&xp);
        km.set_array(&xm);
        let (fp, fm) = (eval(t, &kp, s), eval(t, &km, s));
        let fd = std::array::from_fn(|r| (fp[r] - fm[r]) / (2.0 * h));
        cols.push((std::array::from_fn(|r| jac.kin[r][c]), fd, typ_k[c]));
    }
    for c in 0..NS {
        let h = step * (s[c].abs() + typ_s[c]);
        let (mut sp, mut sm) = (*s, *s);
        sp[c] += h;
        sm[c] -= h;
        let (fp, fm) = (eval(t, k, &sp), eval(t, k, &sm));
        let fd = std::array::from_fn(|r| (fp[r] - fm[r]) / (2.0 * h));
        cols.push((std::array::from_fn(|r| jac.states[r][c]), fd, typ_s[c]));
    }
    let mut worst = 0.0f64;
    for r in 0..NR {
        let scale = cols
            .iter()
            .fold(0.0f64, |m, (_, d, typ)| m.max(d[r].abs() * typ));
        for (ci, (a, d, typ)) in cols.iter().enumerate() {
            assert!(a[r].is_finite(), "{what}: partial ({r}, {ci}) not finite");
            if scale == 0.0 {
                assert!(
                    a[r] == 0.0,
                    "{what}: row {r} should be constant, partial {ci} = {}",
                    a[r]
                );
                continue;
            }
            let e = (a[r] - d[r]).abs() * typ / scale;
            assert!(
                e < 1e-6,
                "{what}: row {r} col {ci}: analytic {} vs fd {} (scaled error {e:.2e})",
                a[r],
                d[r]
            );
            worst = worst.max(e);
        }
    }
    worst
}

#[test]
fn partials_match_central_differences_everywhere() {
    let mut rng = Rng(0xbadc_0ffe);
    let mut worst = 0.0f64;
    let mut n = 0;
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        let sxm = p.sxm.pn.max(2.0 * p.fxm.pn / p.dfx0.pn);
        let sym = p.sym.pn.max(2.0 * p.fym.pn / p.dfy0.pn);
        // Pure slip in each branch: below s_M, between s_M and s*, between s* and s_S, beyond.
        let fractions = [
            0.2,
            0.8,
            1.2,
            1.02 * (1.0 + p.sxs.pn / sxm) / 2.0,
            0.97 * p.sxs.pn / sxm,
            1.6 * p.sxs.pn / sxm,
        ];
        for f in fractions {
            for sign in [1.0, -1.0] {
                let k = rolling(&t, p.pn, 40.0, sign * f * sxm, 0.0);
                worst = worst.max(check(
                    &t,
                    &k,
                    &[2e-3, 0.0, 0.0],
                    &format!("{set} pure x {f}"),
                ));
                let fy = f * sym * p.sxs.pn.min(p.sys.pn) / p.sxs.pn;
                let k = rolling(&t, 1.7 * p.pn, 40.0, 0.0, sign * fy);
                worst = worst.max(check(
                    &t,
                    &k,
                    &[0.0, -3e-3, 0.0],
                    &format!("{set} pure y {f}"),
                ));
                n += 2;
            }
        }
        // Between s_M and s* explicitly (the parabola up to s*): s* from the step-6 formula.
        let (fm, fs, df0, ss) = (p.fxm.pn, p.fxs.pn, p.dfx0.pn, p.sxs.pn);
        let a = (fm / sxm).powi(2) / (df0 * sxm);
        let s_star = sxm + (fm - fs) / (a * (ss - sxm));
        for sign in [1.0, -1.0] {
            let k = rolling(&t, p.pn, 40.0, sign * 0.5 * (sxm + s_star), 0.0);
            worst = worst.max(check(&t, &k, &[2e-3, 0.0, 0.0], &format!("{set} s_M..s*")));
            n += 1;
        }
        // Standstill (states zero), lifted off, above pn_max.
        let mut k = rolling(&t, p.pn, 0.0, 0.0, 0.0);
        k.vx = 0.0;
        // At standstill the trail n(|s_y|) has its kink at s_y = 0 and multiplies F_y ∝ v_y, so a
        // central difference errs by n'(0) h / v_N (first order): a step of 1e-10 m/s keeps that
        // below 1e-8, and rounding stays small because all forces vanish at the point itself.
        worst = worst.max(check_with(
            &t,
            &k,
            &[0.0; NS],
            &format!("{set} standstill"),
            1e-10,
        ));
        let mut k = rolling(&t, p.pn, 30.0, 0.1, -0.05);
        k.fz = -50.0;
        k.gamma = 0.03;
        k.psi_dot = 0.2;
        worst = worst.max(check(
            &t,
            &k,
            &[1e-3, 2e-3, -1e-4],
            &format!("{set} lifted off"),
        ));
        let mut k = rolling(&t, 4.0 * p.pn, 30.0, 0.05, 0.03);
        k.gamma = -0.02;
        worst = worst.max(check(
            &t,
            &k,
            &[1e-3, -2e-3, 1e-4],
            &format!("{set} above pn_max"),
        ));
        n += 3;
        // Random combined slip, low speed, reversing, camber, turn slip.
        for i in 0..400 {
            let fz = p.pn * (0.05 + 3.0 * rng.uniform());
            let omega = match i % 4 {
                0 => 60.0 * rng.uniform() + 1.0,
                1 => -(30.0 * rng.uniform() + 0.5),
                2 => rng.sym(2.0),
                _ => rng.sym(0.05),
            };
            let mut k = rolling(&t, fz, omega, rng.sym(1.2), rng.sym(1.2));
            if i % 4 == 3 {
                // Low speed / start-up: velocities of mm/s to dm/s.
                k.vx = rng.sym(0.3);
                k.vy = rng.sym(0.1);
            }
            k.gamma = rng.sym(0.08);
            k.psi_dot = rng.sym(1.0);
            k.mu_road = p.mu0 * (0.3 + 0.7 * rng.uniform());
            let s = [rng.sym(5e-3), rng.sym(5e-3), rng.sym(1e-3)];
            worst = worst.max(check(&t, &k, &s, &format!("{set} random {i} {k:?} {s:?}")));
            n += 1;
        }
    }
    // The cubic branch of step 6 (s* > s_S), which no data-sheet set reaches: the car with
    // s_S = 0.15 and F_S = F_M / 2 in x.
    let mut v = tmeasy_common::fixture_values("car_tmeasy.toml");
    for (key, x) in [
        ("sxs_pn", 0.15),
        ("sxs_2pn", 0.15),
        ("fxs_pn", 1900.0),
        ("fxs_2pn", 3650.0),
    ] {
        v.insert(key.into(), sprung_model::ParamValue::Number(x));
    }
    let t = tmeasy_common::build(&v).unwrap();
    for s in [0.12, 0.13, 0.14, -0.125] {
        for fz in [t.params.pn, 2.0 * t.params.pn] {
            let k = rolling(&t, fz, 40.0, s, 0.0);
            worst = worst.max(check(&t, &k, &[1e-3, 0.0, 0.0], &format!("cubic s={s}")));
            n += 1;
        }
    }
    println!("partials vs central differences: {n} points, worst scaled error {worst:.2e}");
}
