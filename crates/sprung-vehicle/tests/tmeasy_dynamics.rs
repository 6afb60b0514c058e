//! Rill's first-order tire dynamics in the TMeasy law: the states converge to the steady-state
//! forces, a lateral slip step follows the first-order response the law implies (closed form,
//! derived in `docs/tire-tmeasy.md`, "Tire dynamics"), and start-up from and stop to standstill
//! integrate with document 002's partly implicit Euler step (eq. 7) at 1 ms without NaN or
//! oscillation. Tolerances: 40 time constants leave e^-40 ≈ 4e-18 of the initial error, RK4 at
//! τ/2000 errs by ~1e-15; 1e-12 covers rounding over the steps. Also: `evaluate`, `partials` and `steady_state` allocate nothing.

mod tmeasy_common;

use sprung_test_support::{CountingAllocator, Rng, allocations_in};
use sprung_vehicle::tire::tmeasy::Tmeasy;
use sprung_vehicle::tire::{N_FORCES, SlipKinematics, TireForces, TireModel, TirePartials};
use tmeasy_common::{SETS, rolling, tire};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn rates(t: &Tmeasy, k: &SlipKinematics, s: &[f64; 3]) -> ([f64; 3], TireForces) {
    let mut f = TireForces::default();
    let mut r = [0.0; 3];
    t.evaluate(k, s, &mut f, &mut r);
    (r, f)
}

fn rk4(t: &Tmeasy, k: &SlipKinematics, s: &mut [f64; 3], h: f64) {
    let add = |a: &[f64; 3], b: &[f64; 3], c: f64| std::array::from_fn(|i| a[i] + c * b[i]);
    let (k1, _) = rates(t, k, s);
    let (k2, _) = rates(t, k, &add(s, &k1, h / 2.0));
    let (k3, _) = rates(t, k, &add(s, &k2, h / 2.0));
    let (k4, _) = rates(t, k, &add(s, &k3, h));
    for i in 0..3 {
        s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

/// The decay rate of each state at fixed kinematics (the law is linear in its states there).
fn decay_rates(t: &Tmeasy, k: &SlipKinematics) -> [f64; 3] {
    let mut j = TirePartials::default();
    t.partials(k, &[0.0; 3], &mut j);
    std::array::from_fn(|i| -j.states[N_FORCES + i][i])
}

#[test]
fn states_converge_to_the_steady_state_forces() {
    let mut rng = Rng(0x5eed_7e5a);
    let mut worst = 0.0f64;
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for _ in 0..25 {
            let mut k = rolling(
                &t,
                p.pn * (0.3 + 2.5 * rng.uniform()),
                5.0 + 55.0 * rng.uniform(),
                rng.sym(0.8),
                rng.sym(0.8),
            );
            k.psi_dot = rng.sym(0.5);
            k.gamma = rng.sym(0.05);
            let lam = decay_rates(&t, &k);
            let (lo, hi) = lam
                .iter()
                .fold((f64::MAX, 0.0f64), |(a, b), l| (a.min(*l), b.max(*l)));
            assert!(lo > 0.0);
            let h = 0.1 / hi;
            let steps = (40.0 / lo / h).ceil() as usize;
            let mut s = [0.0; 3];
            for _ in 0..steps {
                rk4(&t, &k, &mut s, h);
            }
            let (_, dynamic) = rates(&t, &k, &s);
            let mut ss = TireForces::default();
            t.steady_state(&k, &mut ss);
            let scale = ss.fx.abs().max(ss.fy.abs());
            let e = [
                (dynamic.fx - ss.fx) / scale,
                (dynamic.fy - ss.fy) / scale,
                (dynamic.mz - ss.mz) / ss.mz.abs().max(1e-6 * scale),
            ];
            let e = e.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            worst = worst.max(e);
            assert!(
                e < 1e-12,
                "{set} {k:?}: dynamic {dynamic:?} vs steady {ss:?}"
            );
        }
    }
    println!("dynamic → steady state: worst relative difference {worst:.2e}");
}

#[test]
fn lateral_slip_step_is_first_order_with_the_implied_relaxation_length() {
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        for (sy, speed_omega) in [(1e-5, 60.0), (0.02, 60.0), (0.05, 10.0)] {
            let k = rolling(&t, p.pn, speed_omega, 0.0, sy);
            let vt = t.effective_radius(k.fz, k.rho) * k.omega + p.v_n;
            let mut ss = TireForces::default();
            t.steady_state(&k, &mut ss);
            // Secant slope of the characteristic at this slip: F_ss = k_s s_y.
            let ks = ss.fy / sy;
            // Closed form of ẏ = (−v c y − k_s v_sy)/(v d + k_s), F = c y + d ẏ from y(0) = 0.
            let tau = (vt * p.dy + ks) / (vt * p.cy);
            let jump = vt * p.dy / (vt * p.dy + ks);
            let closed = |time: f64| ss.fy * (1.0 - (1.0 - jump) * (-time / tau).exp());
            let h = tau / 2000.0;
            let mut s = [0.0; 3];
            let mut worst = 0.0f64;
            for n in 0..=10_000 {
                let (_, f) = rates(&t, &k, &s);
                worst = worst.max((f.fy - closed(n as f64 * h)).abs() / ss.fy.abs());
                rk4(&t, &k, &mut s, h);
            }
            assert!(
                worst < 1e-12,
                "{set} sy={sy}: deviation from the first-order response {worst:.2e}"
            );
            // Relaxation length σ_y = v_t τ = k_s/c_y + v_t d_y/c_y; at small slip k_s → dF_y0.
            let sigma = vt * tau;
            assert!((sigma - (ks + vt * p.dy) / p.cy).abs() < 1e-12 * sigma);
            if sy < 1e-4 {
                assert!(
                    (ks / p.dfy0.pn - 1.0).abs() < 2e-4,
                    "{set}: k_s = {ks} vs dFy0 = {}",
                    p.dfy0.pn
                );
                println!(
                    "{set}: v_t = {vt:.2} m/s, relaxation length {sigma:.4} m (dFy0/c_y = {:.4} m), \
                     first-order deviation {worst:.1e}",
                    p.dfy0.pn / p.cy
                );
            }
        }
    }
}

/// Document 002, eq. 7: [I − h ∂f/∂s] Δs = h f(s^k, u^{k+1}) for the three states.
fn implicit_euler(t: &Tmeasy, k: &SlipKinematics, s: &mut [f64; 3], h: f64) -> TireForces {
    let (r, f) = rates(t, k, s);
    let mut j = TirePartials::default();
    t.partials(k, s, &mut j);
    let a = nalgebra::Matrix3::from_fn(
        |i, c| if i == c { 1.0 } else { 0.0 } - h * j.states[N_FORCES + i][c],
    );
    let ds = a
        .lu()
        .solve(&nalgebra::Vector3::new(h * r[0], h * r[1], h * r[2]))
        .unwrap();
    for i in 0..3 {
        s[i] += ds[i];
    }
    f
}

#[test]
fn start_up_and_stop_at_one_millisecond_without_nan_or_oscillation() {
    for set in SETS {
        let t = tire(set);
        let p = &t.params;
        let fz = p.pn;
        let h = 1e-3;
        let mut s = [0.0; 3];
        let mut fx_hist = Vec::new();
        // Start-up: driven wheel, spin rate ramps 0 → 30 rad/s in 3 s with 5 % drive slip, then
        // a stop back to standstill with 5 % brake slip, then 2 s parked.
        let r = t.effective_radius(fz, tmeasy_common::deflection(&t, fz));
        for n in 0..9000 {
            let time = n as f64 * h;
            let omega = if time < 3.0 {
                10.0 * time
            } else if time < 6.0 {
                10.0 * (6.0 - time)
            } else {
                0.0
            };
            let vx = if time < 3.0 {
                0.95 * omega * r
            } else {
                omega * r / 0.95
            };
            let mut k = rolling(&t, fz, 0.0, 0.0, 0.0);
            k.omega = omega;
            k.vx = vx;
            let f = implicit_euler(&t, &k, &mut s, h);
            assert!(
                f.fx.is_finite()
                    && f.fy.is_finite()
                    && f.mz.is_finite()
                    && s.iter().all(|x| x.is_finite())
            );
            assert!(
                f.fx.abs() <= 1.01 * p.fxm.pn,
                "{set} t={time}: Fx = {}",
                f.fx
            );
            fx_hist.push((time, f.fx));
        }
        // Driving: Fx ≥ 0 throughout the start-up; braking: Fx ≤ 0 (no oscillation through zero);
        // parked: the deflection relaxes without sign change.
        let worst_drive = fx_hist
            .iter()
            .filter(|(t, _)| *t < 3.0)
            .fold(0.0f64, |m, (_, f)| m.min(*f));
        let worst_brake = fx_hist
            .iter()
            .filter(|(t, _)| *t > 3.1 && *t < 6.0)
            .fold(0.0f64, |m, (_, f)| m.max(*f));
        assert!(
            worst_drive > -1e-9 * p.fxm.pn,
            "{set}: Fx < 0 while driving: {worst_drive}"
        );
        assert!(
            worst_brake < 1e-9 * p.fxm.pn,
            "{set}: Fx > 0 while braking: {worst_brake}"
        );
        let parked: Vec<f64> = fx_hist
            .iter()
            .filter(|(t, _)| *t > 6.0)
            .map(|(_, f)| *f)
            .collect();
        assert!(
            parked.windows(2).all(|w| w[0] * w[1] >= 0.0),
            "{set}: Fx oscillates when parked"
        );
        assert!(parked.last().unwrap().abs() <= parked[0].abs());
    }
}

#[test]
fn evaluation_and_partials_allocate_nothing() {
    let t = tire("car");
    let k = rolling(&t, 3500.0, 30.0, 0.05, -0.03);
    let s = [1e-3, -2e-3, 1e-4];
    let mut f = TireForces::default();
    let mut r = [0.0; 3];
    let mut j = TirePartials::default();
    let n = allocations_in(|| {
        for _ in 0..100 {
            t.evaluate(&k, &s, &mut f, &mut r);
            t.partials(&k, &s, &mut j);
            t.steady_state(&k, &mut f);
        }
    });
    assert_eq!(n, 0);
}

/// A braked (ω = 0) quarter-car mass of 400 kg held by the car tire on a 10 % slope for 60 s:
/// the contact patch holds it like a spring, and the deflection creeps at the rate the
/// regularisation v_N implies — the body slides at v = v_N s_c, where s_c is the slip whose steady
/// force carries the slope force. Returns (drift over 60 s, predicted drift), m.
fn parked_on_slope(v_n: f64) -> (f64, f64) {
    let mut values = tmeasy_common::fixture_values("car_tmeasy.toml");
    values.insert("v_n".into(), sprung_model::ParamValue::Number(v_n));
    let t = tmeasy_common::build(&values).unwrap();
    let (m, g) = (400.0, 9.81);
    let f_slope = m * g * (0.1f64).atan().sin();
    let mut k = rolling(&t, m * g, 0.0, 0.0, 0.0);
    // Creep slip: steady F_x(s_c) = f_slope (bisection on the pure characteristic, ω = 0).
    let (mut lo, mut hi) = (0.0, 0.05);
    for _ in 0..100 {
        let s = 0.5 * (lo + hi);
        k.vx = -s * v_n;
        let mut f = TireForces::default();
        t.steady_state(&k, &mut f);
        if f.fx < f_slope { lo = s } else { hi = s }
    }
    let predicted = 60.0 * v_n * 0.5 * (lo + hi);
    // RK4 on (position, velocity, x_e, y_e, b_e), starting in the spring equilibrium.
    let mut y = [0.0, 0.0, f_slope / t.params.cx, 0.0, 0.0];
    let rhs = |y: &[f64; 5]| -> [f64; 5] {
        let mut k = k;
        k.vx = y[1];
        let (r, f) = rates(&t, &k, &[y[2], y[3], y[4]]);
        [y[1], (f.fx - f_slope) / m, r[0], r[1], r[2]]
    };
    let h = 1e-3;
    for _ in 0..60_000 {
        let add = |a: &[f64; 5], b: &[f64; 5], c: f64| -> [f64; 5] {
            std::array::from_fn(|i| a[i] + c * b[i])
        };
        let k1 = rhs(&y);
        let k2 = rhs(&add(&y, &k1, h / 2.0));
        let k3 = rhs(&add(&y, &k2, h / 2.0));
        let k4 = rhs(&add(&y, &k3, h));
        for i in 0..5 {
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    (-y[0], predicted)
}

#[test]
fn a_braked_wheel_on_a_slope_creeps_at_the_rate_v_n_implies() {
    for v_n in [0.01, 0.001] {
        let (drift, predicted) = parked_on_slope(v_n);
        println!(
            "v_n = {v_n} m/s: drift over 60 s {:.4} mm (predicted {:.4} mm, rel. {:.1e})",
            drift * 1e3,
            predicted * 1e3,
            drift / predicted - 1.0
        );
        // The creep is a steady slide; the settling of the (lightly damped) contact spring at the
        // start shifts it by ~5e-6 of the total (measured), so 1e-4.
        assert!(
            (drift - predicted).abs() < 1e-4 * predicted,
            "drift {drift} vs {predicted}"
        );
    }
    // The 1 mm over 60 s on a 10 % slope needs v_n ≤ ~0.006 m/s for this tire (the
    // drift is linear in v_n: 1.67 mm at 0.01 m/s); the default holds it with a factor 2.
    let (drift, _) = parked_on_slope(sprung_vehicle::tire::tmeasy::DEFAULT_V_N);
    println!("default v_n: drift over 60 s {:.4} mm", drift * 1e3);
    assert!(drift < 0.6e-3, "default v_n creeps {drift} m in 60 s");
}
