//! PAC2002 law beyond the steady-state formulas: analytic partials against central differences
//! over many points of both `.tir` files (pure, combined, camber, low speed, reverse, lifted off),
//! the relaxation states converging to the steady state with the first-order response of the
//! relaxation lengths, standstill without singularity, bad input, and no allocation.

#![allow(clippy::needless_range_loop)] // Jacobian rows and columns read best indexed

use std::path::PathBuf;

use sprung_test_support::{CountingAllocator, Rng, allocations_in, workspace_root};
use sprung_vehicle::tire::pac2002::Pac2002;
use sprung_vehicle::tire::{
    MAX_STATES, N_FORCES, N_KIN, SlipKinematics, TireForces, TireModel, TirePartials, kin,
};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn law(name: &str) -> Pac2002 {
    Pac2002::from_file(&workspace_root().join("models/tires").join(name)).unwrap()
}

const FILES: [&str; 2] = ["mf_185_80R14.tir", "335_65R22_5_G275MSA_60psi.tir"];

/// Outputs (Fx, Fy, Mx, My, Mz, ṡ0, ṡ1) of `evaluate`.
fn outputs(l: &Pac2002, k: &SlipKinematics, s: &[f64; 2]) -> [f64; N_FORCES + 2] {
    let mut f = TireForces::default();
    let mut r = [0.0; 2];
    l.evaluate(k, s, &mut f, &mut r);
    let a = f.as_array();
    [a[0], a[1], a[2], a[3], a[4], r[0], r[1]]
}

/// Central-difference Jacobian, columns = 7 kinematic inputs + 2 states; step 1e-6 relative to
/// the input's scale (truncation ~1e-12 × third derivative, round-off ~1e-10 relative).
fn fd_jacobian(l: &Pac2002, k: &SlipKinematics, s: &[f64; 2]) -> [[f64; N_KIN + 2]; N_FORCES + 2] {
    let mut j = [[0.0; N_KIN + 2]; N_FORCES + 2];
    let scale = [
        k.fz.abs().max(100.0),
        1e-3,
        1.0,
        1.0,
        1.0,
        0.1,
        1.0,
        0.1,
        0.1,
    ];
    for c in 0..N_KIN + 2 {
        let h = 1e-6 * scale[c];
        let eval = |d: f64| {
            let mut kk = *k;
            let mut ss = *s;
            if c < N_KIN {
                let mut a = kk.as_array();
                a[c] += d;
                kk.set_array(&a);
            } else {
                ss[c - N_KIN] += d;
            }
            outputs(l, &kk, &ss)
        };
        let (p, m) = (eval(h), eval(-h));
        for r in 0..N_FORCES + 2 {
            j[r][c] = (p[r] - m[r]) / (2.0 * h);
        }
    }
    j
}

fn analytic(l: &Pac2002, k: &SlipKinematics, s: &[f64; 2]) -> [[f64; N_KIN + 2]; N_FORCES + 2] {
    let mut jac = TirePartials::default();
    l.partials(k, s, &mut jac);
    let mut j = [[0.0; N_KIN + 2]; N_FORCES + 2];
    for r in 0..N_FORCES + 2 {
        j[r][..N_KIN].copy_from_slice(&jac.kin[r]);
        j[r][N_KIN] = jac.states[r][0];
        j[r][N_KIN + 1] = jac.states[r][1];
    }
    // Rows and columns beyond the law's 2 states stay zero.
    for r in 0..N_FORCES + MAX_STATES {
        for c in 2..MAX_STATES {
            assert_eq!(jac.states[r][c], 0.0);
        }
    }
    j
}

/// Per output row: the largest |analytic − FD| relative to the row's largest entry (scaled by
/// the input scales so Fz-columns and slip columns compare fairly).
fn row_errors(
    a: &[[f64; N_KIN + 2]; N_FORCES + 2],
    f: &[[f64; N_KIN + 2]; N_FORCES + 2],
    k: &SlipKinematics,
) -> f64 {
    let scale = [
        k.fz.abs().max(100.0),
        1e-3,
        1.0,
        1.0,
        1.0,
        0.1,
        1.0,
        0.1,
        0.1,
    ];
    let mut worst = 0.0f64;
    for r in 0..N_FORCES + 2 {
        let big = (0..N_KIN + 2).fold(0.0f64, |m, c| m.max((f[r][c] * scale[c]).abs()));
        let diff =
            (0..N_KIN + 2).fold(0.0f64, |m, c| m.max(((a[r][c] - f[r][c]) * scale[c]).abs()));
        let e = if big < 1e-6 { diff } else { diff / big };
        worst = worst.max(e);
    }
    worst
}

/// A random point: speed class 0 = normal (5–30 m/s), 1 = low speed (|vx| < VXLOW), 2 =
/// reverse; slips via the states (combined), camber up to 0.1 rad, load 0.2–2 Fz0.
fn random_point(rng: &mut Rng, fz0: f64, class: usize) -> (SlipKinematics, [f64; 2]) {
    let vx = match class {
        0 => 5.0 + 25.0 * rng.uniform(),
        1 => rng.sym(0.9),
        _ => -(2.0 + 10.0 * rng.uniform()),
    };
    let k = SlipKinematics {
        fz: fz0 * (0.2 + 1.8 * rng.uniform()),
        rho: 0.01,
        vx,
        vy: rng.sym(0.3) * vx.abs().max(0.5),
        omega: vx / 0.4 * (1.0 + rng.sym(0.3)),
        gamma: rng.sym(0.1),
        psi_dot: rng.sym(0.5),
        mu_road: 0.6 + 0.5 * rng.uniform(),
    };
    (k, [rng.sym(0.6), rng.sym(0.4)])
}

/// Analytic partials against central differences at 600 random points per file (200 per speed
/// class) and at lift-off. Tolerance 2e-5 of the row's largest entry: central differences at
/// step 1e-6 are accurate to ~1e-8 here; the bound leaves room for points that land within a
/// step of a kink of the MF (sgn in E, |γ|, the friction ellipse's |κc|), which a random draw
/// rarely does. The measured worst error is printed.
#[test]
fn partials_match_differences() {
    for name in FILES {
        let l = law(name);
        let fz0 = l.coefficients().fnomin;
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut worst = [0.0f64; 3];
        for class in 0..3 {
            for _ in 0..200 {
                let (k, s) = random_point(&mut rng, fz0, class);
                let e = row_errors(&analytic(&l, &k, &s), &fd_jacobian(&l, &k, &s), &k);
                assert!(
                    e < 2e-5,
                    "{name}: partials differ by {e:e} at {k:?}, states {s:?}"
                );
                worst[class] = worst[class].max(e);
            }
        }
        eprintln!("{name}: worst partial error normal/low-speed/reverse {worst:?}");
        // Lifted off: forces zero with zero partials; the states still relax.
        let (mut k, s) = random_point(&mut rng, fz0, 0);
        k.fz = -10.0;
        let a = analytic(&l, &k, &s);
        for row in a.iter().take(N_FORCES) {
            assert!(row.iter().all(|x| *x == 0.0));
        }
        let f = fd_jacobian(&l, &k, &s);
        assert!(row_errors(&a, &f, &k) < 1e-8);
        assert!(a[N_FORCES][N_KIN] < 0.0, "κ' relaxes when lifted");
    }
}

/// At fixed kinematics the states follow σ ṡ = v − |vx| s exactly: RK4 over 5 time constants
/// reproduces s(t) = s_ss + (s0 − s_ss) exp(−|vx| t / σ) (RK4 at h = T/50: error ~1e-9), and the
/// forces reach `steady_state` (to 1e-9 relative after 25 time constants).
#[test]
fn states_converge_to_steady_state_with_relaxation_length() {
    for name in FILES {
        let l = law(name);
        let fz = l.coefficients().fnomin;
        let vx = 15.0;
        let re = l.effective_radius(fz, 0.0);
        let k = SlipKinematics {
            fz,
            rho: 0.02,
            vx,
            vy: 0.05 * vx,
            omega: vx * 0.97 / re,
            gamma: 0.02,
            psi_dot: 0.0,
            mu_road: 1.0,
        };
        // σ from the rates at s = 0: ṡ = v/σ.
        let r0 = outputs(&l, &k, &[0.0, 0.0]);
        let ss = [-(vx - k.omega * re) / vx, k.vy / vx];
        let sigma = [ss[0] * vx / r0[5], ss[1] * vx / r0[6]];
        eprintln!(
            "{name}: relaxation lengths σκ = {} m, σα = {} m",
            sigma[0], sigma[1]
        );
        assert!(sigma[0] > 0.02 && sigma[1] > 0.02);
        let tau = sigma[0].max(sigma[1]) / vx;
        let h = sigma[0].min(sigma[1]) / vx / 50.0;
        let mut s = [0.0, 0.0];
        let mut t = 0.0;
        let rate = |s: &[f64; 2]| {
            let o = outputs(&l, &k, s);
            [o[5], o[6]]
        };
        while t < 25.0 * tau {
            let k1 = rate(&s);
            let k2 = rate(&[s[0] + 0.5 * h * k1[0], s[1] + 0.5 * h * k1[1]]);
            let k3 = rate(&[s[0] + 0.5 * h * k2[0], s[1] + 0.5 * h * k2[1]]);
            let k4 = rate(&[s[0] + h * k3[0], s[1] + h * k3[1]]);
            for i in 0..2 {
                s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
            t += h;
            if (t - 5.0 * tau).abs() < 0.5 * h {
                for i in 0..2 {
                    let exact = ss[i] * (1.0 - (-vx * t / sigma[i]).exp());
                    assert!(
                        (s[i] - exact).abs() < 1e-9 * ss[i].abs(),
                        "{name}: state {i}: {} vs {exact}",
                        s[i]
                    );
                }
            }
        }
        let dyn_f = outputs(&l, &k, &s);
        let mut st = TireForces::default();
        l.steady_state(&k, &mut st);
        let st = st.as_array();
        for j in 0..N_FORCES {
            assert!(
                (dyn_f[j] - st[j]).abs() <= 1e-9 * st[j].abs().max(1.0),
                "{name}: output {j}: {} vs {}",
                dyn_f[j],
                st[j]
            );
        }
    }
}

/// Standstill and very low speed: finite forces and partials, no NaN, the states act as a
/// damped carcass spring (force opposes the deflection and the sliding velocity).
#[test]
fn standstill_is_regular() {
    for name in FILES {
        let l = law(name);
        let fz = l.coefficients().fnomin;
        for &(vx, vy, omega, s0, s1) in &[
            (0.0, 0.0, 0.0, 0.0, 0.0),
            (0.0, 0.0, 0.0, 0.01, -0.01),
            (0.0, 0.2, 0.0, 0.0, 0.0),
            (1e-9, -1e-9, 0.0, -0.02, 0.02),
            (0.3, 0.0, 2.0, 0.0, 0.0),
        ] {
            let k = SlipKinematics {
                fz,
                rho: 0.02,
                vx,
                vy,
                omega,
                gamma: 0.0,
                psi_dot: 0.0,
                mu_road: 1.0,
            };
            let o = outputs(&l, &k, &[s0, s1]);
            assert!(o.iter().all(|x| x.is_finite()), "{name}: {o:?}");
            let a = analytic(&l, &k, &[s0, s1]);
            assert!(a.iter().flatten().all(|x| x.is_finite()));
            let mut st = TireForces::default();
            l.steady_state(&k, &mut st);
            assert!(st.as_array().iter().all(|x| x.is_finite()));
        }
        // Deflected carcass at rest: Fx against κ' (a driving deflection pushes forward), Fy
        // against α' (a leftward deflection, α' > 0, pulls right).
        let k = SlipKinematics {
            fz,
            rho: 0.02,
            mu_road: 1.0,
            ..Default::default()
        };
        let o = outputs(&l, &k, &[0.01, 0.01]);
        assert!(o[0] > 0.0 && o[1] < 0.0, "{name}: {o:?}");
        // A sliding velocity adds a damping force of the same direction as the deflection term.
        let kv = SlipKinematics { vy: 0.01, ..k };
        let ov = outputs(&l, &kv, &[0.0, 0.0]);
        assert!(ov[1] < 0.0, "{name}: lateral damping {ov:?}");
    }
}

/// Bad input: a missing file and a missing `tir_file` give clear errors, never a panic.
#[test]
fn bad_files_give_located_errors() {
    let e = Pac2002::from_file(&PathBuf::from("/nonexistent/x.tir")).unwrap_err();
    assert!(e.contains("x.tir") && e.contains("cannot read"), "{e}");
    let dir = std::env::temp_dir().join(format!("sprung-pac2002-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("typo.tir");
    let text =
        std::fs::read_to_string(workspace_root().join("models/tires/mf_185_80R14.tir")).unwrap();
    std::fs::write(&p, text.replace("PKY3 ", "PKY33")).unwrap();
    let e = Pac2002::from_file(&p).unwrap_err();
    assert!(
        e.contains("typo.tir:") && e.contains("PKY33") && e.contains("did you mean PKY3"),
        "{e}"
    );
    std::fs::write(&p, text.replace("FNOMIN", "!FNOMIN")).unwrap();
    let e = Pac2002::from_file(&p).unwrap_err();
    assert!(e.contains("required key FNOMIN"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `evaluate`, `steady_state` and `partials` allocate nothing.
#[test]
fn no_allocation_in_evaluation() {
    for name in FILES {
        let l = law(name);
        let mut rng = Rng(7);
        let pts: Vec<_> = (0..30)
            .map(|i| random_point(&mut rng, l.coefficients().fnomin, i % 3))
            .collect();
        let mut f = TireForces::default();
        let mut r = [0.0; 2];
        let mut jac = TirePartials::default();
        let n = allocations_in(|| {
            for (k, s) in &pts {
                l.evaluate(k, s, &mut f, &mut r);
                l.steady_state(k, &mut f);
                l.partials(k, s, &mut jac);
            }
        });
        assert_eq!(n, 0, "{name}");
        assert!(jac.kin[0][kin::FZ].is_finite());
    }
}
