//! TMeasy steady state against the formulas of `../shared/data/vehicle-reference.md` ("TMeasy
//! tire", steps 4–9) for the data sheet's truck, car and van: exact points of the
//! characteristic, an independent evaluation of the characteristic and of Rill's normalised
//! combined slip written here from the data sheet, the maximum-force envelope under combined slip,
//! trail, rolling resistance, overturning moment, road friction scaling.

mod tmeasy_common;

use sprung_test_support::Rng;
use sprung_vehicle::tire::tmeasy::{Curve, Tmeasy};
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel};
use tmeasy_common::{SETS, deflection, rolling, tire};

fn steady(t: &Tmeasy, k: &SlipKinematics) -> TireForces {
    let mut f = TireForces::default();
    t.steady_state(k, &mut f);
    f
}

/// Load dependence of a force (step 4).
fn force_at(c: &Curve, q: f64) -> f64 {
    q * (2.0 * c.pn - 0.5 * c.p2n - (c.pn - 0.5 * c.p2n) * q)
}
/// Load dependence of a slip (step 4).
fn slip_at(c: &Curve, q: f64) -> f64 {
    c.pn + (c.p2n - c.pn) * (q - 1.0)
}

/// One direction's characteristic data at load ratio q and friction scale mu.
#[derive(Clone, Copy, Debug)]
struct Char {
    df0: f64,
    fm: f64,
    sm: f64,
    fs: f64,
    ss: f64,
}

fn dir(t: &Tmeasy, lateral: bool, q: f64, mu: f64) -> Char {
    let p = &t.params;
    let (df0, fm, fs, sm, ss) = if lateral {
        (&p.dfy0, &p.fym, &p.fys, &p.sym, &p.sys)
    } else {
        (&p.dfx0, &p.fxm, &p.fxs, &p.sxm, &p.sxs)
    };
    Char {
        df0: force_at(df0, q),
        fm: mu * force_at(fm, q),
        sm: mu * slip_at(sm, q),
        fs: mu * force_at(fs, q),
        ss: mu * slip_at(ss, q),
    }
}

/// s_M after the slope rule: moved to 2 F_M / dF0 when dF0 < 2 F_M / s_M (docs/tire-tmeasy.md).
fn sm_eff(c: &Char) -> f64 {
    c.sm.max(2.0 * c.fm / c.df0)
}

/// The generalised characteristic of step 6, written directly (force, not secant slope).
fn characteristic(s: f64, c: &Char) -> f64 {
    let sm = sm_eff(c);
    let (df0, fm, fs, ss) = (c.df0, c.fm, c.fs, c.ss);
    if s <= sm {
        let p = df0 * sm / fm - 2.0;
        let sg = s / sm;
        df0 * sm * sg / (1.0 + (sg + p) * sg)
    } else if s >= ss {
        fs
    } else {
        let a = (fm / sm).powi(2) / (df0 * sm);
        let s_star = sm + (fm - fs) / (a * (ss - sm));
        if s_star <= ss {
            if s <= s_star {
                fm - a * (s - sm).powi(2)
            } else {
                let b = a * (s_star - sm) / (ss - s_star);
                fs + b * (ss - s).powi(2)
            }
        } else {
            let sg = (s - sm) / (ss - sm);
            fm - (fm - fs) * sg * sg * (3.0 - 2.0 * sg)
        }
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn initial_slope_maximum_and_sliding_force_are_exact_at_pn_and_2pn() {
    let mut moved = Vec::new();
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for (q, fz) in [(1.0, p.pn), (2.0, 2.0 * p.pn)] {
            for lateral in [false, true] {
                let c = dir(&t, lateral, q, 1.0);
                // Data sheet values at pn and 2 pn are reproduced by the load dependence.
                let (df0_sheet, fm_sheet) = match (lateral, q == 1.0) {
                    (false, true) => (p.dfx0.pn, p.fxm.pn),
                    (false, false) => (p.dfx0.p2n, p.fxm.p2n),
                    (true, true) => (p.dfy0.pn, p.fym.pn),
                    (true, false) => (p.dfy0.p2n, p.fym.p2n),
                };
                assert!(rel(c.df0, df0_sheet) < 1e-14 && rel(c.fm, fm_sheet) < 1e-14);
                let force = |k: &SlipKinematics| {
                    let f = steady(&t, k);
                    if lateral { f.fy } else { f.fx }
                };
                let slips = |s: f64| if lateral { (0.0, s) } else { (s, 0.0) };
                // Initial slope: standing wheel (ω = 0) so that s = −v_s/v_N is exact.
                let s0 = 1e-11;
                let mut k = rolling(&t, fz, 0.0, 0.0, 0.0);
                if lateral {
                    k.vy = -s0 * p.v_n;
                } else {
                    k.vx = -s0 * p.v_n;
                }
                let slope = force(&k) / s0;
                assert!(
                    rel(slope, c.df0) < 1e-9,
                    "{set} q={q} lat={lateral}: slope {slope} vs {}",
                    c.df0
                );
                // Maximum at s_M (after the slope rule), both signs of the slip.
                let sm = sm_eff(&c);
                if sm > c.sm {
                    moved.push(format!(
                        "{set} {} q={q}: s_M {} -> {sm:.5}",
                        if lateral { "y" } else { "x" },
                        c.sm
                    ));
                }
                for sign in [1.0, -1.0] {
                    let (sx, sy) = slips(sign * sm);
                    let f = force(&rolling(&t, fz, 40.0, sx, sy));
                    assert!(
                        rel(f, sign * c.fm) < 1e-9,
                        "{set} q={q} lat={lateral}: F(s_M) {f} vs {}",
                        c.fm
                    );
                    for beyond in [1.001, 1.5, 4.0] {
                        let (sx, sy) = slips(sign * beyond * c.ss);
                        let f = force(&rolling(&t, fz, 40.0, sx, sy));
                        assert!(
                            rel(f, sign * c.fs) < 1e-9,
                            "{set} q={q}: F beyond s_S {f} vs {}",
                            c.fs
                        );
                    }
                }
            }
        }
    }
    // The data sheet's note: the truck's longitudinal set needs the slope rule at 2 pn.
    assert!(
        moved.iter().any(|m| m.starts_with("truck x q=2")),
        "{moved:?}"
    );
    println!("slope rule moved s_M: {moved:#?}");
}

#[test]
fn pure_slip_curves_match_an_independent_evaluation_of_step_6() {
    let mut worst = 0.0f64;
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for fz_pn in [0.3, 1.0, 1.37, 2.0, 2.8, 3.5, 4.0] {
            let fz = fz_pn * p.pn;
            let q = fz.min(p.pn_max) / p.pn;
            for lateral in [false, true] {
                for mu in [1.0, 0.4] {
                    let c = dir(&t, lateral, q, mu);
                    for i in 1..=300 {
                        let s = 1.3 * c.ss * i as f64 / 300.0;
                        let (sx, sy) = if lateral { (0.0, -s) } else { (-s, 0.0) };
                        let mut k = rolling(&t, fz, 30.0, sx, sy);
                        k.mu_road = mu * p.mu0;
                        let f = steady(&t, &k);
                        let got = if lateral { -f.fy } else { -f.fx };
                        let want = characteristic(s, &c);
                        let e = rel(got, want);
                        worst = worst.max(e);
                        assert!(
                            e < 1e-12,
                            "{set} fz={fz_pn}pn lat={lateral} mu={mu} s={s}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
    println!("pure slip vs independent step 6: worst relative difference {worst:.2e}");
}

/// Rill's normalised combined slip (data sheet, step 5 note), written here from the formulas.
fn combined_independent(t: &Tmeasy, k: &SlipKinematics) -> (f64, f64) {
    let p = &t.params;
    let q = k.fz.min(p.pn_max) / p.pn;
    let mu = k.mu_road / p.mu0;
    let r = p.r0 - k.rho / 3.0;
    let vt = r * k.omega.abs() + p.v_n;
    let sx = -(k.vx - k.omega * r) / vt;
    let sy = -k.vy / vt;
    let x = dir(t, false, q, 1.0);
    let y = dir(t, true, q, 1.0);
    let shx = x.sm / (x.sm + y.sm) + (x.fm / x.df0) / (x.fm / x.df0 + y.fm / y.df0);
    let shy = y.sm / (x.sm + y.sm) + (y.fm / y.df0) / (x.fm / x.df0 + y.fm / y.df0);
    let sn = ((sx / shx).powi(2) + (sy / shy).powi(2)).sqrt();
    let (c, s) = (sx / shx / sn, sy / shy / sn);
    let h = |a: f64, b: f64| (a * a + b * b).sqrt();
    let ch = Char {
        df0: h(x.df0 * shx * c, y.df0 * shy * s),
        fm: mu * h(x.fm * c, y.fm * s),
        sm: mu * h(x.sm / shx * c, y.sm / shy * s),
        fs: mu * h(x.fs * c, y.fs * s),
        ss: mu * h(x.ss / shx * c, y.ss / shy * s),
    };
    let f = characteristic(sn, &ch);
    (f * c, f * s)
}

#[test]
fn combined_slip_matches_rills_normalised_form_and_stays_inside_the_envelope() {
    let mut rng = Rng(0x7e57_ab1e);
    let (mut worst, mut worst_env, mut max_ellipse) = (0.0f64, 0.0f64, 0.0f64);
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for _ in 0..4000 {
            let fz = p.pn * (0.1 + 3.2 * rng.uniform());
            let sx = rng.sym(1.2);
            let sy = rng.sym(1.5);
            let omega = if rng.uniform() < 0.5 {
                5.0 + 60.0 * rng.uniform()
            } else {
                -20.0 * rng.uniform() - 1.0
            };
            let mut k = rolling(&t, fz, omega, sx, sy);
            k.mu_road = p.mu0 * (0.2 + 0.8 * rng.uniform());
            let f = steady(&t, &k);
            let (fx, fy) = combined_independent(&t, &k);
            let scale = fx.abs().max(fy.abs());
            let e = (f.fx - fx).abs().max((f.fy - fy).abs()) / scale;
            worst = worst.max(e);
            assert!(e < 1e-11, "{set}: ({}, {}) vs ({fx}, {fy})", f.fx, f.fy);
            // Envelope: |F| ≤ F_M(φ) = μ √((F_xM cos φ)² + (F_yM sin φ)²) in the force's own
            // direction φ, and ≤ the larger of the pure maxima.
            let q = fz.min(p.pn_max) / p.pn;
            let mu = k.mu_road / p.mu0;
            let (fxm, fym) = (mu * force_at(&p.fxm, q), mu * force_at(&p.fym, q));
            let mag = f.fx.hypot(f.fy);
            let env = (fxm * f.fx / mag).hypot(fym * f.fy / mag);
            worst_env = worst_env.max(mag / env);
            assert!(
                mag <= env * (1.0 + 1e-12),
                "{set}: |F| = {mag} above F_M(φ) = {env}"
            );
            assert!(mag <= fxm.max(fym) * (1.0 + 1e-12));
            max_ellipse = max_ellipse.max((f.fx / fxm).powi(2) + (f.fy / fym).powi(2));
        }
    }
    println!(
        "combined slip: worst difference {worst:.2e}; |F|/F_M(φ) ≤ {worst_env:.6}; \
         largest (Fx/FxM)²+(Fy/FyM)² = {max_ellipse:.4}"
    );
}

#[test]
fn aligning_torque_follows_the_pneumatic_trail() {
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for fz in [p.pn, 2.0 * p.pn, 1.6 * p.pn] {
            let q = fz / p.pn;
            let (nl0, sq0, sqe) = (
                slip_at(&p.nl0, q),
                slip_at(&p.sq0, q),
                slip_at(&p.sqe, q).max(slip_at(&p.sq0, q)),
            );
            let w = sq0 / sqe;
            let trail = |s: f64| {
                if s <= sq0 {
                    let sh = s / sq0;
                    nl0 * ((1.0 - w) * (1.0 - sh) + w * (1.0 - (3.0 - 2.0 * sh) * sh * sh))
                } else if s < sqe {
                    -nl0 * (1.0 - w) * (s - sq0) / sq0 * ((sqe - s) / (sqe - sq0)).powi(2)
                } else {
                    0.0
                }
            };
            let len = 2.0 * (p.r0 * deflection(&t, fz)).sqrt();
            for i in 1..=120 {
                let sy = 1.2 * sqe * i as f64 / 120.0;
                for sign in [1.0, -1.0] {
                    let f = steady(&t, &rolling(&t, fz, 30.0, 0.0, sign * sy));
                    let want = -f.fy * len * trail(sy);
                    assert!(
                        (f.mz - want).abs() <= 1e-12 * (f.fy * len * nl0).abs(),
                        "{set} sy={sy}: {} vs {want}",
                        f.mz
                    );
                }
            }
            // The torque changes sign at s_q0.
            let m_lo = steady(&t, &rolling(&t, fz, 30.0, 0.0, 0.999 * sq0)).mz;
            let m_at = steady(&t, &rolling(&t, fz, 30.0, 0.0, sq0));
            let m_hi = steady(&t, &rolling(&t, fz, 30.0, 0.0, 1.001 * sq0)).mz;
            assert!(
                m_lo * m_hi <= 0.0 || w == 1.0,
                "{set}: no sign change at s_q0"
            );
            assert!(
                m_at.mz.abs() < 1e-9 * (m_at.fy * len * nl0).abs(),
                "{set}: Mz(s_q0) = {}",
                m_at.mz
            );
            // Trail at zero slip: Mz / (−Fy) → L n_L0.
            let f = steady(&t, &rolling(&t, fz, 30.0, 0.0, 1e-7));
            assert!(rel(-f.mz / f.fy, len * nl0) < 1e-5);
        }
    }
}

#[test]
fn rolling_resistance_overturning_moment_and_lift_off() {
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        let fz = 1.3 * p.pn;
        for omega in [-30.0, -0.5, 0.3, 12.0] {
            let mut k = rolling(&t, fz, omega, 0.0, 0.0);
            k.gamma = 0.05;
            let f = steady(&t, &k);
            let my = -p.fr * fz * p.r0 * omega.tanh();
            assert!(rel(f.my, my) < 1e-14, "{set}: My {} vs {my}", f.my);
            let mx = -(p.width.powi(2) * (p.d1 + 2.0 * p.d2 * k.rho) / 12.0) * k.gamma;
            assert!(rel(f.mx, mx) < 1e-14, "{set}: Mx {} vs {mx}", f.mx);
        }
        // Lifted off: nothing, also in the dynamic evaluation.
        for fz in [0.0, -100.0] {
            let mut k = rolling(&t, p.pn, 30.0, 0.2, -0.1);
            k.fz = fz;
            assert_eq!(steady(&t, &k), TireForces::default());
            let mut out = TireForces {
                fx: 1.0,
                ..Default::default()
            };
            let mut rates = [0.0; 3];
            t.evaluate(&k, &[1e-3, -2e-3, 1e-4], &mut out, &mut rates);
            assert_eq!(out, TireForces::default());
            // Deflections relax at c/d.
            assert!(rel(rates[0], -p.cx / p.dx * 1e-3) < 1e-12);
            assert!(rel(rates[1], p.cy / p.dy * 2e-3) < 1e-12);
        }
    }
}

#[test]
fn road_friction_scales_maximum_and_sliding_force_and_their_slips() {
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        let full = dir(&t, false, 1.0, 1.0);
        let half = dir(&t, false, 1.0, 0.5);
        let mut k = rolling(&t, p.pn, 30.0, sm_eff(&half), 0.0);
        k.mu_road = 0.5 * p.mu0;
        assert!(rel(steady(&t, &k).fx, 0.5 * full.fm) < 1e-9);
        let mut k = rolling(&t, p.pn, 30.0, 0.6 * full.ss, 0.0);
        k.mu_road = 0.5 * p.mu0;
        assert!(rel(steady(&t, &k).fx, 0.5 * full.fs) < 1e-9);
    }
}

/// The car with a short sliding range (s_S = 0.15, F_S = F_M/2): s* > s_S, so the longitudinal
/// characteristic takes the cubic branch of step 6, which none of the data sheet's sets reaches.
fn cubic_variant() -> Tmeasy {
    let mut v = tmeasy_common::fixture_values("car_tmeasy.toml");
    use sprung_model::ParamValue::Number;
    for (k, x) in [
        ("sxs_pn", 0.15),
        ("sxs_2pn", 0.15),
        ("fxs_pn", 1900.0),
        ("fxs_2pn", 3650.0),
    ] {
        v.insert(k.into(), Number(x));
    }
    tmeasy_common::build(&v).unwrap()
}

#[test]
fn every_branch_of_step_6_is_reached_continuous_and_matches_the_formula() {
    let mut branches = std::collections::BTreeSet::new();
    let mut tires: Vec<(String, Tmeasy)> = SETS.iter().map(|s| (s.to_string(), tire(s))).collect();
    tires.push(("car, cubic variant".into(), cubic_variant()));
    for (name, t) in &tires {
        let p = &t.params;
        for lateral in [false, true] {
            let c = dir(t, lateral, 1.0, 1.0);
            let sm = sm_eff(&c);
            let a = (c.fm / sm).powi(2) / (c.df0 * sm);
            let s_star = sm + (c.fm - c.fs) / (a * (c.ss - sm));
            let force = |s: f64| {
                let (sx, sy) = if lateral { (0.0, s) } else { (s, 0.0) };
                let f = steady(t, &rolling(t, p.pn, 30.0, sx, sy));
                if lateral { f.fy } else { f.fx }
            };
            let mut points = vec![0.5 * sm, sm, c.ss, 1.5 * c.ss];
            if s_star < c.ss {
                branches.insert("s_M..s*");
                branches.insert("s*..s_S");
                points.extend([0.5 * (sm + s_star), s_star, 0.5 * (s_star + c.ss)]);
            } else {
                branches.insert("cubic");
                points.push(0.5 * (sm + c.ss));
            }
            for s in points {
                // Continuity across each point (and the formula on both sides).
                let d = 1e-9 * s;
                let (lo, hi) = (force(s - d), force(s + d));
                assert!(
                    (hi - lo).abs() < 1e-6 * c.fm,
                    "{name} lat={lateral}: jump at s = {s}: {lo} → {hi}"
                );
                for x in [s - d, s + d] {
                    assert!(
                        rel(force(x), characteristic(x, &c)) < 1e-12,
                        "{name} lat={lateral} s={x}"
                    );
                }
            }
        }
    }
    assert_eq!(branches.len(), 3, "{branches:?}");
}
