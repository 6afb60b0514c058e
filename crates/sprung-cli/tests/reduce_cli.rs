//! `sprung reduce` and `sprung check --reduce` (docs/macro-joint.md): the written reduced model
//! loads and runs, the statistics table has both columns, bad input is a clear error; the
//! kinematic variant (tabulated joints) writes its tables beside the model, and the model runs
//! with LSRT2 and with explicit Euler at 1 ms.

use std::process::Command;

fn sprung(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(args)
        .current_dir(sprung_test_support::workspace_root())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn reduce_writes_a_model_that_runs() {
    let dir = std::env::temp_dir().join(format!("sprung_reduce_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dw_ek.toml");
    let (ok, out, err) = sprung(&[
        "reduce",
        "models/double_wishbone.toml",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("8 macro joint(s)"), "{out}");
    assert!(
        out.contains("bodies") && out.contains("elastokinematic"),
        "{out}"
    );
    // The file runs: 50 ms of the reduced axle with LSRT2.
    let run_dir = dir.join("run");
    let (ok, out, err) = sprung(&[
        "run",
        file.to_str().unwrap(),
        "--t-end",
        "0.05",
        "--out",
        run_dir.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(run_dir.join("results.csv").exists());
    // Statistics of both models from `check`.
    let (ok, out, err) = sprung(&[
        "check",
        "models/double_wishbone.toml",
        "--reduce",
        "stiffened",
    ]);
    assert!(ok, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("bodies "))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[1..], ["24", "6"], "{row}");
    // A body that cannot be a link: a clear error naming it.
    let (ok, _, err) = sprung(&[
        "reduce",
        "models/double_wishbone.toml",
        "--links",
        "no_such_body",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("no_such_body") && err.contains("no such body"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `sprung reduce models/car_dw_ml.toml --variant kinematic`: the tables are written to
/// `<stem>_tables/` and found again when the written file is loaded from another folder
/// (paths relative to the model file); `check` prints the joints and Table 1 (first-order states
/// 662 → 48, bodies 49 → 15, 5 joint coordinates, 9 followers: the spring and damper ends
/// re-hosted, the subframe fixed); `run` with LSRT2 and with
/// re-linearising every 20 steps over 0.2 s (it stopped at 0.02 s while the wheels started at
/// rest) and with explicit Euler (`ode1`) at 1 ms over 0.1 s (it runs the whole turn entry:
/// docs/macro-joint.md, "Explicit Euler at 1 ms"), and with the file's own settings (LSRT2
/// every 50 steps or when stale, "The reduced models' solver settings, session 20");
/// `check --reduce kinematic` prints the same
/// columns; the old variant name in the macro-joint API gives a hint.
#[test]
fn reduce_kinematic_writes_the_tables_and_a_car_that_runs() {
    let dir = std::env::temp_dir().join(format!("sprung_reduce_kin_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("car_kin.toml");
    let (ok, out, err) = sprung(&[
        "reduce",
        "models/car_dw_ml.toml",
        "--variant",
        "kinematic",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("4 tabulated corner(s)"), "{out}");
    for c in ["front_L", "front_R", "rear_L", "rear_R"] {
        assert!(
            dir.join("car_kin_tables")
                .join(format!("{c}.toml"))
                .exists(),
            "{c}"
        );
    }
    let row = |out: &str, label: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {out}"))
            .split_whitespace()
            .rev()
            .take(2)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(row(&out, "first-order states"), ["48", "662"], "{out}");
    assert_eq!(row(&out, "bodies "), ["15", "49"], "{out}");
    assert_eq!(row(&out, "ideal/tabulated joint coordinates"), ["5", "0"]);
    assert_eq!(row(&out, "followers"), ["9", "0"]);
    assert!(
        out.contains("rear.subframe made rigid: fixed joint on chassis"),
        "{out}"
    );
    assert!(
        out.contains("element ends re-hosted: front.tube_L -> chassis"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("table = \"car_kin_tables/front_L.toml\""),
        "relative paths"
    );
    let (ok, out, err) = sprung(&["check", file.to_str().unwrap()]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("tabulated"), "{out}");
    assert!(
        out.contains("fixed on 'chassis' (rigid at the design pose, no coordinate)"),
        "{out}"
    );
    // The reduced car re-uses LSRT2's Jacobian by default (every 50 steps or when stale), with a
    // comment saying why; `run` without options uses it, `--solver ode1` (no error indicator)
    // runs without the stale level.
    assert!(
        text.contains("relinearise_every = 50\nrelinearise_stale = 0.00000005\n"),
        "{text}"
    );
    assert!(text.contains("non-stiff ODE"), "{text}");
    let (ok, out, err) = sprung(&[
        "run",
        file.to_str().unwrap(),
        "--t-end",
        "0.1",
        "--out",
        dir.join("default").to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains(
            "re-linearise every 50 or when the error indicator of a lagged Jacobian exceeds 5e-8 m"
        ),
        "{out}"
    );
    for (solver, t_end) in [("lsrt2", "0.2"), ("ode1", "0.1")] {
        let (ok, out, err) = sprung(&[
            "run",
            file.to_str().unwrap(),
            "--t-end",
            t_end,
            "--solver",
            solver,
            "--step",
            "0.001",
            "--relinearise-every",
            "20",
            "-q",
            "--out",
            dir.join(solver).to_str().unwrap(),
        ]);
        assert!(ok, "{solver}: {out}\n{err}");
    }
    // A model without corners: a clear error naming the model and what a corner needs.
    let (ok, _, err) = sprung(&[
        "reduce",
        "models/mass_spring_damper.toml",
        "--variant",
        "kinematic",
        "-o",
        dir.join("msd.toml").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("mass_spring_damper") && err.contains("wheel-centre marker"),
        "{err}"
    );
    let (ok, out, err) = sprung(&["check", "models/car_dw_ml.toml", "--reduce", "kinematic"]);
    assert!(ok, "{err}");
    assert_eq!(row(&out, "bodies "), ["15", "49"], "{out}");
    // Both of document 004's reductions in one table (full, elastokinematic, kinematic): the
    // same counts as the two-column tables (the elastokinematic car keeps 11 bodies,
    // docs/macro-joint.md "Statistics").
    let (ok, out, err) = sprung(&[
        "check",
        "models/car_dw_ml.toml",
        "--reduce",
        "elastokinematic,kinematic",
    ]);
    assert!(ok, "{err}");
    let header = out
        .lines()
        .skip_while(|l| !l.starts_with("statistics"))
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["full", "elastokinematic", "kinematic"],
        "{out}"
    );
    let bodies = out.lines().find(|l| l.starts_with("bodies ")).unwrap();
    assert_eq!(
        bodies.split_whitespace().skip(1).collect::<Vec<_>>(),
        ["49", "11", "15"],
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
