//! Issue 17 through the command. Item 5: a run whose state leaves the plausible range stops as
//! diverged, names the body, keeps the rows so far and records why; the bounds are set with
//! `--max-displacement` / `--max-velocity` / `--max-force` or `[solver]`, validated like every
//! setting. Item 7:
//! plausibility warnings of `sprung check` (stiffest mode against step and solver, slowest mode
//! against the step, mass ratio, far positions). Item 9: adaptive runs record their own
//! settings; `loadcase` takes its channels from the model.

mod common;

use std::path::{Path, PathBuf};

use common::{sprung_output as sprung, text};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// LSRT2 at a 1 s step on the double wishbone (stiffest mode in the kHz range) used to end
/// "completed" with the wheel 134 m away. It must stop with a message naming a body and the
/// displacement bound, keep the rows before, and record the reason in the metadata.
#[test]
fn double_wishbone_at_one_second_step_stops_as_diverged() {
    let out = tmp("dw_step_1");
    let o = sprung(&[
        "run",
        "models/double_wishbone.toml",
        "--step",
        "1.0",
        // The model's 1 ms output interval is not a multiple of a 1 s step (rejected).
        "--output-interval",
        "1.0",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("diverged: body '") && t.contains("left the plausible range"),
        "{t}"
    );
    assert!(!t.contains("(completed)"), "{t}");
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    // At least the initial row is kept, and the run stopped before t_end = 8 s.
    assert!(!set.is_empty());
    let meta = set.metadata();
    let reason = meta["stop_reason"].as_str().unwrap();
    assert!(reason.contains("left the plausible range"), "{reason}");
    assert!(meta["t_reached"].as_f64().unwrap() < 8.0);
    // Every kept row is plausible: the wheel-centre displacement channels stay below the
    // recorded bound (displacements of a marker, not the centre of mass, so only a sanity
    // check with the wheel's size as margin: 1 m).
    let bound = meta["bounds"]["max_displacement_m"].as_f64().unwrap();
    for ch in ["wc_dx_L", "wc_dy_L", "wc_dz_L"] {
        let max = set
            .column(ch)
            .unwrap()
            .iter()
            .fold(0.0f64, |a, x| a.max(x.abs()));
        assert!(
            max < bound + 1.0,
            "{ch}: {max} m against the bound {bound} m"
        );
    }
}

/// The reference load case never comes near the default bounds: it completes, and the recorded
/// bounds are the documented defaults (10 x the model extent, / 10 ms).
#[test]
fn reference_load_case_completes_with_recorded_default_bounds() {
    let out = tmp("dw_default");
    let o = sprung(&[
        "run",
        "models/double_wishbone.toml",
        "--t-end",
        "0.5",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    let b = &set.metadata()["bounds"];
    let extent = b["model_extent_m"].as_f64().unwrap();
    let d = b["max_displacement_m"].as_f64().unwrap();
    let v = b["max_velocity_m_per_s"].as_f64().unwrap();
    // An axle is between 0.5 and 3 m in size.
    assert!((0.5..3.0).contains(&extent), "{extent}");
    assert!((d - (10.0 * extent).max(1.0)).abs() < 1e-9 * d, "{d}");
    assert!((v - d / 0.01).abs() < 1e-9 * v, "{v}");
    // Force: the heaviest body's mass x v / 10 ms; the heaviest body of an axle is between 10
    // and 100 kg (wheel, knuckle, subframe).
    let f = b["max_force_n"].as_f64().unwrap();
    let heaviest = f / (v / 0.01);
    assert!(
        (10.0..100.0).contains(&heaviest),
        "{f} N = {heaviest} kg x {v} m/s / 10 ms"
    );
}

/// `--max-force`: the mass-spring-damper's mass (1 kg, no gravity) is pushed by the 10 N input
/// step from rest, so the resultant force on it is 10 N at the start and less afterwards (the
/// spring takes over: 17.29 N − 10 N = 7.29 N at the first peak, README of the model). A bound of
/// 9 N stops the first step, naming the mass, keeping the initial row and recording the bound;
/// 11 N lets the run complete; an invalid value is rejected naming the flag.
#[test]
fn the_force_bound_from_the_command_line_stops_and_is_recorded() {
    let out = tmp("msd_force_bound");
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--max-force",
        "9",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("body 'mass'")
            && t.contains("force bound 9.0000e0 N (as set)")
            && t.contains("t = 0.001 s"),
        "{t}"
    );
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    assert_eq!(set.time, vec![0.0]);
    assert_eq!(set.metadata()["bounds"]["max_force_n"].as_f64(), Some(9.0));

    let out = tmp("msd_force_bound_ok");
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--max-force",
        "11",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let out = tmp("msd_force_bound_bad");
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--max-force=-1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(!o.status.success() && t.contains("--max-force"), "{t}");
    assert!(!out.exists());
}

/// A tight bound from the command line stops the run naming the bound as set; an invalid one is
/// rejected before anything is written, naming the flag.
#[test]
fn command_line_bounds_are_used_and_validated() {
    let out = tmp("msd_bound");
    // The mass of the mass-spring-damper swings 0.17 m (README: first peak -0.172925 m).
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--max-displacement",
        "0.1",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("displacement bound 1.0000e-1 m (as set)"), "{t}");
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    let x = set.column("x").unwrap();
    assert!(
        x.iter().all(|x| x.abs() <= 0.1),
        "rows beyond the bound kept"
    );

    let out = tmp("msd_bad_bound");
    for bad in ["0", "-1", "nan"] {
        let arg = format!("--max-velocity={bad}");
        let o = sprung(&[
            "run",
            "models/mass_spring_damper.toml",
            &arg,
            "--out",
            out.to_str().unwrap(),
        ]);
        let t = text(&o);
        assert!(!o.status.success(), "{bad}: {t}");
        assert!(t.contains("--max-velocity"), "{bad}: {t}");
        assert!(
            !out.exists(),
            "{bad}: a rejected run created {}",
            out.display()
        );
    }
}

/// Parses the number before `unit` after `marker` in `t` (e.g. "the stiffest mode is 127.3 kHz").
fn number_after(t: &str, marker: &str) -> f64 {
    let rest = &t[t
        .find(marker)
        .unwrap_or_else(|| panic!("'{marker}' in {t}"))
        + marker.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// Item 7: explicit RK4 at the model's 1 ms step on the double wishbone. Independent
/// expectations: RK4 is stable for undamped modes up to |hλ| = 2√2, i.e. f = 2√2 / (2π · 1 ms)
/// = 450.158 Hz; the stiffest mode of the reference axles is |λ|max ≈ 8e5 1/s (module docs of
/// `sprung_mbs::modes`, data sheet), f ≈ 127 kHz (accepted: 100-160 kHz). A warning, not an error.
#[test]
fn check_warns_that_rk4_at_1_ms_is_unstable_on_the_double_wishbone() {
    let o = sprung(&["check", "models/double_wishbone.toml", "--solver", "rk4"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("warning: explicit rk4 at 1 ms is unstable above 450.158 Hz"),
        "{t}"
    );
    let f = number_after(&t, "the stiffest mode is ");
    assert!(t.contains(&format!("{f} kHz")), "{t}");
    assert!((100.0..160.0).contains(&f), "{f} kHz");
    // The suggested step keeps every mode stable; for the stiffest undamped mode that is at
    // most 2√2 / |λ|max (within the 25 % on |λ|max above).
    let h = number_after(&t, "a step of at most ");
    let lmax = 2.0 * std::f64::consts::PI * f * 1e3;
    assert!(h <= 1.001 * 8f64.sqrt() / lmax && h > 0.0, "{h}");
}

/// The model's own LSRT2 at 1 ms: A-stable, nothing to warn about.
#[test]
fn check_of_the_reference_settings_has_no_warnings() {
    let o = sprung(&["check", "models/double_wishbone.toml"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("warning:"), "{t}");
    assert!(t.contains("A-stable") && t.contains("no warnings"), "{t}");
    // The note states the divergence bound of item 5.
    assert!(t.contains("a run stops as diverged beyond"), "{t}");
}

/// A 1 s step on the double wishbone cannot resolve its slowest mode (the wheel modes of the
/// axle are above 1 Hz: at most one step per period).
#[test]
fn check_warns_when_the_step_does_not_resolve_the_slowest_mode() {
    let o = sprung(&["check", "models/double_wishbone.toml", "--step", "1.0"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("warning: the step 1 s does not resolve the slowest mode"),
        "{t}"
    );
}

/// Mass ratio and far positions on edited copies of the free pair (masses 4 kg and 2 kg, size
/// 0.35 m): body b at 1e-4 kg gives the ratio 4e4 > 1e4; a marker typed in mm (150 instead of
/// 0.15) lies 150 m away.
#[test]
fn check_warns_about_mass_ratio_and_far_positions() {
    let src = std::fs::read_to_string(common::root().join("models/free_pair.toml")).unwrap();
    let dir = tmp("check_edits");
    std::fs::create_dir_all(&dir).unwrap();
    let light = src.replacen("mass = 2.0", "mass = 1e-4", 1);
    assert_ne!(light, src);
    let p = dir.join("light.toml");
    std::fs::write(&p, light).unwrap();
    let o = sprung(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("warning: mass ratio 4.0e4: body 'a' has 4 kg, body 'b' 0.0001 kg"),
        "{t}"
    );
    let far = src.replacen(
        "global_position = [0.15, 0.05, 0.025]",
        "global_position = [150.0, 0.05, 0.025]",
        1,
    );
    assert_ne!(far, src);
    let p = dir.join("far.toml");
    std::fs::write(&p, far).unwrap();
    let o = sprung(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("warning: far from the rest of the model") && t.contains("marker 'joint.I'"),
        "{t}"
    );
    assert!(!t.contains("marker 'joint.J'"), "{t}");
}

/// RK4 at 1 ms on the mass-spring-damper (one slow mode, a few Hz): stable, noted, no warning.
#[test]
fn check_notes_a_stable_explicit_setting_without_warning() {
    let o = sprung(&["check", "models/mass_spring_damper.toml", "--solver", "rk4"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("all modes are inside its stability region") && !t.contains("warning:"),
        "{t}"
    );
}

/// Item 9: an adaptive run prints and records its own settings (tolerances, initial step), a
/// fixed-step run its step and not the tolerances it ignores.
#[test]
fn adaptive_and_fixed_runs_record_their_own_settings() {
    let out = tmp("msd_adaptive");
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--solver",
        "rodas4",
        "--rtol",
        "1e-7",
        "--atol",
        "1e-9",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("solver:            rodas4 (adaptive, rtol 1e-7, atol 1e-9"),
        "{t}"
    );
    assert!(!t.contains("fixed step"), "{t}");
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    let s = &set.metadata()["solver"];
    assert_eq!(s["adaptive"], true);
    assert_eq!(s["rtol"], 1e-7);
    assert_eq!(s["atol"], 1e-9);
    assert!(s.get("step").is_none(), "{s}");

    let out = tmp("msd_fixed");
    let o = sprung(&[
        "run",
        "models/mass_spring_damper.toml",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("solver:            lsrt2 (fixed step 0.001 s"),
        "{t}"
    );
    let set = sprung_io::read_results(out.join("results.csv")).unwrap();
    let s = &set.metadata()["solver"];
    assert_eq!(s["adaptive"], false);
    assert_eq!(s["step"], 1e-3);
    assert!(s.get("rtol").is_none(), "{s}");
}

/// Item 9: `loadcase` takes its channels from the model (first displacement and first force
/// output), and a model without a force output must name one — before anything runs.
#[test]
fn loadcase_takes_its_channels_from_the_model_or_requires_them() {
    let out = tmp("loadcase_msd");
    let o = sprung(&[
        "loadcase",
        "models/mass_spring_damper.toml",
        "--window",
        "0.5:1.0",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("compared channels x and spring_force"), "{t}");
    let out = tmp("loadcase_arb");
    let o = sprung(&[
        "loadcase",
        "models/anti_roll_bar.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("no output of quantity \"force\"") && t.contains("--force"),
        "{t}"
    );
    assert!(!out.join("anti_roll_bar").exists());
}
