//! `sprung kc` end to end on the double-wishbone axle: CSV and PNG per test, the CSV's wheel
//! travel is the requested one, the wheel rate column matches the data sheet, left and right
//! agree; bad input names the option that fixes it.

mod common;

use common::{read_csv, root, sprung_output, text};

#[test]
fn kc_rig_writes_travel_and_force_tests() {
    let out = std::env::temp_dir().join(format!("sprung-kc-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let model = root().join("models/double_wishbone.toml");
    let o = sprung_output(&[
        "kc",
        model.to_str().unwrap(),
        "--test",
        "parallel,fy",
        "--steps",
        "5",
        "--range",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&o);
    let stderr = &stdout;
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("roll_centre_height_LR"), "{stdout}");
    for f in [
        "parallel.csv",
        "parallel.png",
        "fy.csv",
        "fy.png",
        "summary.txt",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let (h, rows) = read_csv(&out.join("parallel.csv"));
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("{n} in {h:?}"))
    };
    let (x, t, tl, tr, k) = (
        col("travel_mm"),
        col("travel_L_mm"),
        col("toe_L_deg"),
        col("toe_R_deg"),
        col("wheel_rate_L_N_per_mm"),
    );
    assert_eq!(rows.len(), 5);
    for r in &rows {
        // travel held to 1e-9 m by the force Newton
        assert!((r[x] - r[t]).abs() < 1e-5, "travel {} vs {}", r[t], r[x]);
        assert!((r[tl] - r[tr]).abs() < 1e-6, "toe L/R {} {}", r[tl], r[tr]);
    }
    // data sheet: parallel wheel rate 29.13 N/mm at design (±10 mm difference quotient here;
    // the rate rises with travel, hence 1 %)
    assert!(
        (rows[2][k] - 29.128).abs() < 0.3,
        "wheel rate {}",
        rows[2][k]
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn kc_rig_errors_name_the_fixing_option() {
    let msd = root().join("models/mass_spring_damper.toml");
    let o = sprung_output(&["kc", msd.to_str().unwrap(), "--out", "/nonexistent/kc"]);
    let stderr = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("--wheel-centre"), "{stderr}");
    let dw = root().join("models/double_wishbone.toml");
    let o = sprung_output(&[
        "kc",
        dw.to_str().unwrap(),
        "--wheel-centre",
        "wheel_centre_L",
        "--carrier",
        "carrier_L",
        "--carrier",
        "carrier_R",
    ]);
    let stderr = text(&o);
    assert!(
        !o.status.success() && stderr.contains("one carrier per wheel centre"),
        "{stderr}"
    );
    let o = sprung_output(&["kc", dw.to_str().unwrap(), "--test", "steer"]);
    let stderr = text(&o);
    assert!(
        !o.status.success() && stderr.contains("--steer-range"),
        "{stderr}"
    );
    let o = sprung_output(&["kc", dw.to_str().unwrap(), "--wheel-centre", "nope"]);
    let stderr = text(&o);
    assert!(
        !o.status.success() && stderr.contains("no marker of that name"),
        "{stderr}"
    );
}

/// `--compare MODEL`: the same tests on other models with the same rig options — the axle
/// against itself (the same curves to the byte, zero differences) and against its kinematic
/// reduction (a model with tabulated joints: the compliance it leaves out shows), one figure.
#[test]
fn kc_compare_runs_other_models_through_the_same_tests() {
    let out = std::env::temp_dir().join(format!("sprung-kc-cmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let model = root().join("models/double_wishbone.toml");
    let kin = out.join("dw_kin.toml");
    let o = sprung_output(&[
        "reduce",
        model.to_str().unwrap(),
        "--variant",
        "kinematic",
        "-o",
        kin.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = sprung_output(&[
        "kc",
        model.to_str().unwrap(),
        "--test",
        "parallel",
        "--steps",
        "5",
        "--range",
        "20",
        "--compare",
        model.to_str().unwrap(),
        "--compare",
        kin.to_str().unwrap(),
        "--out",
        out.join("kc").to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("double_wishbone minus double_wishbone: wheel L: toe 0.0000 deg, camber 0.0000 deg, half-track 0.0000 mm"),
        "{t}"
    );
    let same = |a: &str, b: &str| {
        std::fs::read(out.join("kc").join(a)).unwrap()
            == std::fs::read(out.join("kc").join(b)).unwrap()
    };
    assert!(same("parallel.csv", "parallel_double_wishbone.csv"));
    assert!(out.join("kc/parallel_dw_kin.csv").exists());
    assert!(out.join("kc/parallel_compare.png").exists());
    let line = t.lines().find(|l| l.contains("dw_kin minus")).unwrap();
    let camber: f64 = line
        .split("camber ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    // ±20 mm: the bushings' compliance camber under the 5 kN wheel load (0.46 deg measured).
    assert!(camber > 0.1, "{line}");
    // A compared model that does not exist is named.
    let o = sprung_output(&[
        "kc",
        model.to_str().unwrap(),
        "--test",
        "parallel",
        "--steps",
        "3",
        "--compare",
        "nope.toml",
        "--out",
        out.join("kc2").to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && text(&o).contains("nope.toml"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&out);
}
