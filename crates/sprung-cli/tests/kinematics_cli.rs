//! `sprung kinematics` end to end on the car (four corners, two of them steered) with a coarse
//! grid: a valid table, CSV and PNG per corner, the CSV's design row at zero, the table's design
//! point at the design pose; bad grids and a model without corners name the fix.

mod common;

use common::{read_csv, root, sprung_output, text};
use sprung_model::KinematicTable;

#[test]
fn kinematics_writes_a_table_csv_and_plot_per_corner() {
    let out = std::env::temp_dir().join(format!("sprung-kinematics-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let model = root().join("models/car_dw_ml.toml");
    let o = sprung_output(&[
        "kinematics",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--travel=-0.04:0.04:0.02",
        "--rack=-0.01:0.02:0.01",
    ]);
    let stdout = text(&o);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains("corner front_L") && stdout.contains("steered (rack rack)"),
        "{stdout}"
    );
    for corner in ["front_L", "front_R", "rear_L", "rear_R"] {
        for ext in ["toml", "csv", "png"] {
            let f = out.join(format!("{corner}.{ext}"));
            assert!(f.exists(), "{} missing\n{stdout}", f.display());
        }
        let t = KinematicTable::load(&out.join(format!("{corner}.toml"))).unwrap();
        assert_eq!(t.parent, "chassis");
        let steered = corner.starts_with("front");
        assert_eq!(t.axes.len(), if steered { 2 } else { 1 });
        let (h, rows) = read_csv(&out.join(format!("{corner}.csv")));
        assert_eq!(rows.len(), t.points());
        let col = |n: &str| {
            h.iter()
                .position(|x| x == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        let design = rows
            .iter()
            .find(|r| r[col("travel_mm")] == 0.0 && r[col("rack_mm")] == 0.0)
            .expect("design row");
        for c in [
            "toe_deg",
            "camber_deg",
            "half_track_change_mm",
            "wheelbase_change_mm",
        ] {
            assert!(
                design[col(c)].abs() < 1e-9,
                "{corner} {c} {}",
                design[col(c)]
            );
        }
        // The travel column is the wheel-centre height change (parent z): wc_z follows it.
        let z0 = design[col("wc_z_mm")];
        for r in &rows {
            assert!((r[col("wc_z_mm")] - z0 - r[col("travel_mm")]).abs() < 1e-6);
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn kinematics_errors_name_the_fix() {
    let out = std::env::temp_dir().join(format!("sprung-kinematics-err-{}", std::process::id()));
    let dw = root().join("models/double_wishbone.toml");
    let run = |args: &[&str]| {
        let mut a = vec![
            "kinematics",
            dw.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(args);
        let o = sprung_output(&a);
        assert!(!o.status.success());
        text(&o)
    };
    let e = run(&["--travel=-0.05:0.05:0.03"]);
    assert!(e.contains("does not contain 0"), "{e}");
    let e = run(&["--travel=-0.01:0.01:0.01"]);
    assert!(e.contains("at least 4"), "{e}");
    let e = run(&["--travel=0.1:-0.1:0.01"]);
    assert!(e.contains("MIN < MAX"), "{e}");
    let e = run(&["--travel=a:b"]);
    assert!(e.contains("MIN:MAX:STEP"), "{e}");
    let msd = root().join("models/mass_spring_damper.toml");
    let o = sprung_output(&[
        "kinematics",
        msd.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("has no corners"), "{}", text(&o));
}
