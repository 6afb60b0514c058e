//! The analytic partials of the pipeline (J_r, J_v, J_u; document 000, eq. 5) agree with central
//! finite differences for every force-element type, both curve kinds, body- and global-frame inputs,
//! gravity and gyroscopic terms, at random states.
//!
//! Tolerance: relative error per column below 1e-6, measured against the column's norm. Central
//! differences with increment h have truncation error O(h²) and round-off O(ε/h); h = 1e-6 (scaled)
//! keeps both well below 1e-6 relative for these smooth-between-knots functions.

mod common;

use common::{ALL_ELEMENTS, Rng, max_rel_diff, model_from_toml, random_state};
use sprung_mbs::MbsSystem;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::column_error;

/// Central difference (f(+h) − f(−h)) / 2h of a vector function evaluated by `f(offset, out)`.
fn central_difference(h: f64, n: usize, mut f: impl FnMut(f64, &mut [f64])) -> Vec<f64> {
    let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
    f(h, &mut plus);
    f(-h, &mut minus);
    plus.iter()
        .zip(&minus)
        .map(|(p, m)| (p - m) / (2.0 * h))
        .collect()
}

#[test]
fn analytic_partials_match_central_differences() {
    let model = model_from_toml(ALL_ELEMENTS);
    let mut sys = MbsSystem::new(model.clone());
    let (nr, nv, nu) = (sys.n_r(), sys.n_v(), model.n_u());
    let mut lin = Linearisation::new(nr, sys.pattern());
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let t = 0.37;
    let mut worst = (0.0, String::new());
    for trial in 0..6 {
        let (r, v) = random_state(&sys, &mut rng, 2e-3, 0.05, 0.3);
        sys.linearise(t, &r, &v, &mut lin);
        let jv = lin.j_v.to_dense_row_major();
        let jrk = lin.j_rk.to_dense_row_major();
        let mut e = vec![0.0; nr];
        let mut w = vec![0.0; nv];
        let mut record = |err: f64, what: String| {
            if err > worst.0 {
                worst = (err, format!("trial {trial}: {what}"));
            }
        };
        for k in 0..nr {
            let fd = central_difference(1e-6 * (1.0 + r[k].abs()), nv, |d, q| {
                let mut rd = r.clone();
                rd[k] += d;
                sys.accelerations(t, &rd, &v, q);
            });
            // J_r column k = (J_r K) · L e_k.
            e.fill(0.0);
            e[k] = 1.0;
            sys.tangent(&r, &e, &mut w);
            let an: Vec<f64> = (0..nv)
                .map(|i| (0..nv).map(|j| jrk[i * nv + j] * w[j]).sum())
                .collect();
            record(column_error(&an, &fd), format!("J_r column {k}"));
        }
        for k in 0..nv {
            let fd = central_difference(1e-6 * (1.0 + v[k].abs()), nv, |d, q| {
                let mut vd = v.clone();
                vd[k] += d;
                sys.accelerations(t, &r, &vd, q);
            });
            let an: Vec<f64> = (0..nv).map(|i| jv[i * nv + k]).collect();
            record(column_error(&an, &fd), format!("J_v column {k}"));
        }
        // J_u: perturb each input value through a constant signal. q is affine in u, so a large
        // increment has no truncation error and little round-off.
        let ju = sys.eval.j_u.clone();
        for k in 0..nu {
            let u0 = sys.eval.u[k];
            let fd = central_difference(1e-2 * (1.0 + u0.abs()), nv, |d, q| {
                let mut m = (*model).clone();
                m.inputs[k].signal = sprung_model::Signal::Constant { value: u0 + d };
                MbsSystem::new(std::sync::Arc::new(m)).accelerations(t, &r, &v, q);
            });
            record(
                column_error(&ju[k * nv..(k + 1) * nv], &fd),
                format!("J_u column {k}"),
            );
        }
    }
    eprintln!("worst relative error {:e} at {}", worst.0, worst.1);
    assert!(
        worst.0 < 1e-6,
        "worst relative error {:e} at {}",
        worst.0,
        worst.1
    );
}

#[test]
fn stops_and_all_element_types_are_active_in_the_test_state() {
    // Guards the test above against silently testing inactive elements.
    let model = model_from_toml(ALL_ELEMENTS);
    let mut sys = MbsSystem::new(model.clone());
    let (r, v) = random_state(&sys, &mut Rng(7), 2e-3, 0.05, 0.3);
    let mut q = vec![0.0; sys.n_v()];
    sys.accelerations(0.37, &r, &v, &mut q);
    for (k, el) in model.elements.iter().enumerate() {
        let f = sys.eval.elements[k].out.force;
        assert!(f.norm() > 0.0, "element {} exerts no force", el.name);
    }
}

#[test]
fn portable_and_avx2_evaluations_agree_to_round_off() {
    // The AVX2 copies of q and the linearisation (256-bit lanes for the 3 × 3 blocks,
    // `sprung_mbs::m3`) perform the same operations in the same order as the portable copies,
    // except that the matrix products fuse multiply and add (one rounding instead of two). The
    // results therefore agree to round-off: 1e-12 of the largest entry allows for the
    // cancellation between element contributions of opposite sign in a block (measured ~1e-15).
    // On a CPU without AVX2 both runs take the portable path and agree exactly.
    if !sprung_solve::cpu::has_avx2_fma() {
        eprintln!("no AVX2 on this CPU: only the portable evaluation is exercised");
    }
    let model = model_from_toml(ALL_ELEMENTS);
    let mut sys = MbsSystem::new(model.clone());
    // q one element at a time, as in the linearisation (the four-element lanes of the q-only
    // path are compared with it in `tests/element_packs.rs`).
    sys.eval.use_element_packs(false);
    let mut rng = Rng(0x0bad_cafe_f00d_1234);
    let mut lin = [0, 1].map(|_| Linearisation::new(sys.n_r(), sys.pattern()));
    let mut worst = 0.0f64;
    for _ in 0..4 {
        let (r, v) = random_state(&sys, &mut rng, 2e-3, 0.05, 0.3);
        for (portable, out) in [true, false].into_iter().zip(lin.iter_mut()) {
            sys.eval.force_portable(portable);
            sys.linearise(0.37, &r, &v, out);
        }
        let mut q = [0, 1].map(|_| vec![0.0; sys.n_v()]);
        for (portable, out) in [true, false].into_iter().zip(q.iter_mut()) {
            sys.eval.force_portable(portable);
            sys.accelerations(0.37, &r, &v, out);
        }
        let [a, b] = &lin;
        // The q of a linearisation is the q of the same copy of the pipeline.
        assert_eq!(a.q, q[0]);
        assert_eq!(b.q, q[1]);
        for d in [
            max_rel_diff(&q[0], &q[1]),
            max_rel_diff(a.j_v.values(), b.j_v.values()),
            max_rel_diff(a.j_rk.values(), b.j_rk.values()),
            max_rel_diff(&a.q_t, &b.q_t),
        ] {
            worst = worst.max(d);
        }
    }
    assert!(worst <= 1e-12, "portable vs AVX2: {worst:e}");
    eprintln!("portable vs AVX2: largest relative difference {worst:e}");
}

#[test]
fn congruence_form_expands_to_the_plain_jacobian() {
    // `linearise_congruent` leaves J = D_r G D_c factored (sprung_solve::mech::congruence);
    // expanded, it is the plain linearisation, which the test above checks against finite
    // differences. Same operations in another order (the row and column transforms applied
    // once to the sum instead of per block piece): round-off, 1e-12 of the largest entry as in
    // the portable-vs-AVX2 comparison. The velocity scale 2 rad/s makes the orientation term of
    // the ω columns and the gyroscopic terms ~1e-3 of the largest entries, far above it.
    let model = model_from_toml(ALL_ELEMENTS);
    let mut sys = MbsSystem::new(model.clone());
    let mut rng = Rng(0x5eed_0fc0_4812_3456);
    let mut plain = Linearisation::new(sys.n_r(), sys.pattern());
    let mut cong = Linearisation::new(sys.n_r(), sys.pattern());
    let mut worst = 0.0f64;
    for _ in 0..4 {
        let (r, v) = random_state(&sys, &mut rng, 2e-3, 0.3, 2.0);
        sys.linearise(0.37, &r, &v, &mut plain);
        assert!(!plain.congruent);
        sys.linearise_congruent(0.37, &r, &v, &mut cong);
        assert!(cong.congruent);
        assert_eq!(plain.q, cong.q);
        assert_eq!(plain.q_t, cong.q_t);
        cong.expand();
        for d in [
            max_rel_diff(plain.j_v.values(), cong.j_v.values()),
            max_rel_diff(plain.j_rk.values(), cong.j_rk.values()),
        ] {
            worst = worst.max(d);
        }
    }
    assert!(worst <= 1e-12, "congruence form vs plain: {worst:e}");
    eprintln!("congruence form vs plain: largest relative difference {worst:e}");
}

#[test]
fn linearisation_overwrites_every_block_of_a_reused_workspace() {
    // The partials are accumulated in place, each block overwritten by its first contribution
    // (no clearing pass). A workspace full of NaN from elsewhere must come out exactly as a fresh
    // one, including the diagonal block of a body no element acts on (a free spinning body: only
    // its gyroscopic own terms), in both forms.
    let src = format!(
        "{ALL_ELEMENTS}\n[[bodies]]\nname = \"free\"\nmass = 1.5\nposition = [1.0, 1.0, 1.0]\n\
         inertia = {{ principal = [0.1, 0.2, 0.3] }}\nangular_velocity = [3.0, 1.0, -2.0]\n"
    );
    let model = model_from_toml(&src);
    let mut sys = MbsSystem::new(model.clone());
    let mut rng = Rng(0x0dd_ba11_c0ff_ee00);
    let (r, v) = random_state(&sys, &mut rng, 2e-3, 0.05, 0.3);
    for congruent in [false, true] {
        let mut fresh = Linearisation::new(sys.n_r(), sys.pattern());
        let mut reused = Linearisation::new(sys.n_r(), sys.pattern());
        reused.j_v.values_mut().fill(f64::NAN);
        reused.j_rk.values_mut().fill(f64::NAN);
        for lin in [&mut fresh, &mut reused] {
            if congruent {
                sys.linearise_congruent(0.37, &r, &v, lin);
            } else {
                sys.linearise(0.37, &r, &v, lin);
            }
        }
        assert_eq!(
            fresh.j_v.values(),
            reused.j_v.values(),
            "J_v, congruent {congruent}"
        );
        assert_eq!(
            fresh.j_rk.values(),
            reused.j_rk.values(),
            "J_rK, congruent {congruent}"
        );
        let free = model.bodies.len() - 1;
        let s = sys.pattern().slot(free, free).unwrap();
        assert!(
            fresh.j_v.block(s).iter().any(|x| *x != 0.0),
            "gyroscopic terms of the free body"
        );
    }
}
