//! The tire test rig on the PAC2002 van model: the law found in a model file, every sweep's rows
//! against direct evaluation of the law, the slip definitions, the transient step against the
//! exact first-order response of the relaxation length, and clear errors.

use sprung_test_support::{model_path, workspace_root};
use sprung_vehicle::rig::{RigSetup, Sweep, deflection_at, kinematics, run_sweep, tire_from_model};
use sprung_vehicle::tire::pac2002::Pac2002;
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel, VerticalLaw, VerticalStiffness};

fn van_model() -> std::path::PathBuf {
    model_path("tires/van_pac2002.toml")
}

fn van_law() -> Pac2002 {
    Pac2002::from_file(&workspace_root().join("models/tires/mf_185_80R14.tir")).unwrap()
}

#[test]
fn finds_the_tire_element_and_builds_its_law() {
    let t = tire_from_model(&van_model(), None).unwrap();
    assert_eq!(t.element, "tire");
    assert_eq!(t.law.kind(), "pac2002");
    assert_eq!(t.law.nominal_load(), Some(3800.0));
    let named = tire_from_model(&van_model(), Some("tire")).unwrap();
    assert_eq!(named.law.state_names(), ["kappa_relaxed", "alpha_relaxed"]);
}

#[test]
fn errors_name_the_model_and_what_to_do() {
    let e = tire_from_model(&van_model(), Some("front_left")).unwrap_err();
    assert!(
        e.contains("van_pac2002.toml") && e.contains("front_left") && e.contains("tire"),
        "{e}"
    );
    let e = tire_from_model(&model_path("maxwell_solid.toml"), None).unwrap_err();
    assert!(e.contains("no tire element"), "{e}");
    let e = tire_from_model(&model_path("maxwell_solid.toml"), Some("maxwell")).unwrap_err();
    assert!(e.contains("not a tire kind"), "{e}");
    // A model whose .tir file does not exist: the element and the file are named.
    let dir = std::env::temp_dir().join(format!("sprung-rig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(van_model())
        .unwrap()
        .replace("mf_185_80R14.tir", "missing.tir");
    let p = dir.join("m.toml");
    std::fs::write(&p, text).unwrap();
    let e = tire_from_model(&p, None).unwrap_err();
    assert!(
        e.contains("element 'tire'") && e.contains("missing.tir"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Every steady sweep: each row equals the law's steady state at the row's kinematics (same
/// expressions, bit for bit), and the kinematics encode the stated slips: κ = (ω r_e − vx)/vx,
/// tan α = vy/vx (to round-off, 1e-12).
#[test]
fn steady_rows_are_the_law_at_the_stated_slips() {
    let rig = tire_from_model(&van_model(), None).unwrap();
    let law = van_law();
    let setup = RigSetup {
        points: 21,
        ..RigSetup::at_load(3800.0)
    };
    for sweep in [
        Sweep::Kappa,
        Sweep::Alpha,
        Sweep::Load,
        Sweep::Camber,
        Sweep::Combined,
    ] {
        let t = run_sweep(rig.law.as_ref(), &setup, sweep).unwrap();
        assert_eq!(t.rows.len(), 3 * 21, "{sweep:?}");
        let col = |n: &str| t.columns.iter().position(|c| c == n).unwrap();
        for r in &t.rows {
            let k = SlipKinematics {
                fz: r[col("fz_N")],
                rho: r[col("rho_m")],
                vx: r[col("vx_mps")],
                vy: r[col("vy_mps")],
                omega: r[col("omega_radps")],
                gamma: r[col("gamma_rad")],
                psi_dot: 0.0,
                mu_road: 1.0,
            };
            let mut f = TireForces::default();
            law.steady_state(&k, &mut f);
            assert_eq!(
                [
                    r[col("fx_N")],
                    r[col("fy_N")],
                    r[col("mx_Nm")],
                    r[col("my_Nm")],
                    r[col("mz_Nm")]
                ],
                f.as_array()
            );
            let re = law.effective_radius(k.fz, k.rho);
            assert!(((k.omega * re - k.vx) / k.vx - r[col("kappa")]).abs() < 1e-12);
            assert!((k.vy / k.vx - r[col("alpha_rad")].tan()).abs() < 1e-12);
            assert!(
                (r[col("rho_m")] - k.fz / 1.75e5).abs() < 1e-15,
                "linear vertical law"
            );
        }
        // Curves per series value (what the plots draw).
        let curves = t.curves("fy_N");
        assert_eq!(curves.len(), 3);
        assert!(curves.iter().all(|c| c.1.len() == 21));
    }
}

/// The slip-angle step on PAC2002: κ' stays 0, α' follows α_ss (1 − exp(−V t/σα)) exactly, so
/// Fy(t) is the Magic Formula at that α'. RK4 at T/2000 reproduces it to 1e-10 relative to the
/// final force (measured 1.2e-12); the end value is within exp(−5 m/σα) of the steady state.
#[test]
fn step_follows_the_first_order_relaxation() {
    let rig = tire_from_model(&van_model(), None).unwrap();
    let law = van_law();
    let setup = RigSetup::at_load(3800.0);
    let t = run_sweep(rig.law.as_ref(), &setup, Sweep::Step).unwrap();
    let col = |n: &str| t.column(n).unwrap();
    let (ts, fy, fy_ss) = (col("t_s"), col("fy_N"), col("fy_steady_N"));
    let k = kinematics(
        rig.law.as_ref(),
        3800.0,
        0.0,
        setup.step_alpha,
        0.0,
        setup.speed,
        1.0,
    );
    // σα from the rate at zero state: α̇' = vy/σα.
    let mut f = TireForces::default();
    let mut r = [0.0; 2];
    law.evaluate(&k, &[0.0, 0.0], &mut f, &mut r);
    let sigma = k.vy / r[1];
    let a_ss = setup.step_alpha.tan();
    let scale = fy_ss[0].abs();
    let mut worst = 0.0f64;
    for (i, &ti) in ts.iter().enumerate() {
        let a = a_ss * (1.0 - (-setup.speed * ti / sigma).exp());
        let exact = law.forces_at_slip(3800.0, 0.0, a, 0.0, setup.speed, 1.0).fy;
        worst = worst.max((fy[i] - exact).abs() / scale);
    }
    eprintln!("step: σα = {sigma} m, largest deviation from the first-order response {worst:e}");
    assert!(worst < 1e-10, "{worst:e}");
    let last = *fy.last().unwrap();
    let bound = (-setup.step_distance / sigma).exp() * 1.5;
    assert!((last - fy_ss[0]).abs() / scale < bound);
}

#[test]
fn deflection_inverts_the_vertical_laws() {
    let mk = |stiffness| VerticalLaw {
        unloaded_radius: 0.3,
        width: 0.2,
        stiffness,
        damping: 0.0,
        rim_radius: 0.2,
        bottoming_stiffness: 1e6,
    };
    let lin = mk(VerticalStiffness::Linear { k: 2e5 });
    assert!((deflection_at(&lin, 4000.0) - 0.02).abs() < 1e-15);
    let quad = mk(VerticalStiffness::Quadratic { d1: 2e5, d2: 1e6 });
    let rho = deflection_at(&quad, 4400.0);
    assert!((2e5 * rho + 1e6 * rho * rho - 4400.0).abs() < 1e-9);
    let table = mk(VerticalStiffness::Table {
        rho: vec![0.0, 0.01, 0.02],
        force: vec![0.0, 1000.0, 3000.0],
    });
    assert!((deflection_at(&table, 2000.0) - 0.015).abs() < 1e-15);
    assert_eq!(deflection_at(&table, 0.0), 0.0);
}

#[test]
fn bad_setup_is_refused() {
    let rig = tire_from_model(&van_model(), None).unwrap();
    let e = run_sweep(
        rig.law.as_ref(),
        &RigSetup {
            speed: 0.0,
            ..RigSetup::at_load(3800.0)
        },
        Sweep::Kappa,
    )
    .unwrap_err();
    assert!(e.contains("speed"), "{e}");
    let e = Sweep::parse("slip").unwrap_err();
    assert!(
        e.contains("kappa, alpha, load, camber, combined, step"),
        "{e}"
    );
}
