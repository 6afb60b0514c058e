//! `sprung tire` end to end on the van PAC2002 model: every sweep writes its CSV and PNG, the
//! CSV rows equal direct evaluation of the law (the `.tir` file read independently of the model
//! loader), the step ends at the steady state, and bad input gives clear errors.

mod common;

use common::{read_csv, root, sprung_output, text};
use sprung_vehicle::tire::pac2002::Pac2002;
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel};

#[test]
fn tire_rig_writes_sweeps_that_match_the_law() {
    let out = std::env::temp_dir().join(format!("sprung-tire-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = sprung_output(&[
        "tire",
        "models/tires/van_pac2002.toml",
        "--points",
        "31",
        "--out",
        out.to_str().unwrap(),
    ]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(
        log.contains("tire 'tire' (pac2002)") && log.contains("load 3800 N"),
        "{log}"
    );
    let law = Pac2002::from_file(&root().join("models/tires/mf_185_80R14.tir")).unwrap();
    for sweep in ["kappa", "alpha", "load", "camber", "combined", "step"] {
        let png = out.join(format!("{sweep}.png"));
        assert!(
            std::fs::metadata(&png)
                .map(|m| m.len() > 10_000)
                .unwrap_or(false),
            "{sweep}: {log}"
        );
        let (h, rows) = read_csv(&out.join(format!("{sweep}.csv")));
        let col = |n: &str| {
            h.iter()
                .position(|c| c == n)
                .unwrap_or_else(|| panic!("{sweep}: no column {n}"))
        };
        if sweep == "step" {
            assert!(rows.len() > 100);
            let last = rows.last().unwrap();
            let rel = (last[col("fy_N")] - last[col("fy_steady_N")]).abs()
                / last[col("fy_steady_N")].abs();
            // 5 m of travel is ~9 relaxation lengths (σα = 0.56 m): exp(−8.9) = 1.4e-4.
            assert!(rel < 2e-4, "step end {rel:e}");
            continue;
        }
        assert_eq!(rows.len(), 3 * 31, "{sweep}");
        for r in &rows {
            let k = SlipKinematics {
                fz: r[col("fz_N")],
                rho: r[col("rho_m")],
                vx: r[col("vx_mps")],
                vy: r[col("vy_mps")],
                omega: r[col("omega_radps")],
                gamma: r[col("gamma_rad")],
                psi_dot: 0.0,
                mu_road: r[col("mu_road")],
            };
            let mut f = TireForces::default();
            law.steady_state(&k, &mut f);
            let got = [
                r[col("fx_N")],
                r[col("fy_N")],
                r[col("mx_Nm")],
                r[col("my_Nm")],
                r[col("mz_Nm")],
            ];
            // The CSV holds the shortest round-trip decimal of each number: exact.
            assert_eq!(got, f.as_array(), "{sweep}");
        }
    }
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn tire_rig_errors_are_clear() {
    let out = std::env::temp_dir().join(format!("sprung-tire-cli-err-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let o = sprung_output(&[
        "tire",
        "models/tires/van_pac2002.toml",
        "--sweep",
        "kappa,slip",
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("unknown sweep 'slip'"), "{}", text(&o));
    let o = sprung_output(&["tire", "models/maxwell_solid.toml"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no tire element"), "{}", text(&o));
    let o = sprung_output(&[
        "tire",
        "models/tires/van_pac2002.toml",
        "--speed",
        "0",
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("speed 0 m/s must be positive"),
        "{}",
        text(&o)
    );
    let o = sprung_output(&["tire", "--help"]);
    assert!(
        text(&o).contains("practical slip") && text(&o).contains("--step-angle"),
        "{}",
        text(&o)
    );
    assert!(
        !std::path::Path::new(out).exists(),
        "no output folder on bad input"
    );
}
