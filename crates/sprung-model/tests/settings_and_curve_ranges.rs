//! Issue 17 items 2 and 4: `SolverSettings::validate` (one validation path for model files and
//! command-line overrides) and the run-time record of `extrapolation = "error"` curves.

use sprung_model::{
    Curve, Extrapolation, Interpolation, SolverSettings, StepMode, Symmetry, any_out_of_range,
    check_curve_ranges, clear_out_of_range, from_toml_str,
};

fn settings(step: f64, t_end: f64, oi: Option<f64>) -> SolverSettings {
    SolverSettings {
        step,
        t_end,
        output_interval: oi,
        ..SolverSettings::default()
    }
}

fn fields(s: &SolverSettings, mode: StepMode) -> Vec<&'static str> {
    match s.validate(mode) {
        Ok(()) => Vec::new(),
        Err(e) => e.problems.iter().map(|p| p.field).collect(),
    }
}

#[test]
fn valid_grids_pass() {
    assert_eq!(
        fields(&settings(1e-3, 3.0, Some(1e-2)), StepMode::Fixed),
        Vec::<&str>::new()
    );
    assert_eq!(
        fields(&settings(1e-3, 1.0, None), StepMode::Unknown),
        Vec::<&str>::new()
    );
    // 0.1/1e-3 is not exactly 100 in binary; still a whole multiple within the tolerance.
    assert_eq!(
        fields(&settings(1e-3, 0.3, Some(0.1)), StepMode::Fixed),
        Vec::<&str>::new()
    );
}

#[test]
fn bad_values_are_rejected_each_with_its_field() {
    for step in [0.0, -1e-3, f64::INFINITY, f64::NAN] {
        assert!(
            fields(&settings(step, 1.0, None), StepMode::Fixed).contains(&"step"),
            "{step}"
        );
    }
    for t_end in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(fields(&settings(1e-3, t_end, None), StepMode::Fixed).contains(&"t_end"));
    }
    for rtol in [0.0, -1.0, 1.0, 1e10, f64::NAN] {
        let s = SolverSettings {
            rtol,
            ..SolverSettings::default()
        };
        assert_eq!(fields(&s, StepMode::Adaptive), vec!["rtol"], "{rtol}");
    }
    for atol in [0.0, -1e-9, f64::INFINITY] {
        let s = SolverSettings {
            atol,
            ..SolverSettings::default()
        };
        assert_eq!(fields(&s, StepMode::Adaptive), vec!["atol"], "{atol}");
    }
    for x in [0.0, -5e-8, f64::NAN, f64::NEG_INFINITY] {
        let s = SolverSettings {
            relinearise_stale: Some(x),
            ..SolverSettings::default()
        };
        assert_eq!(
            fields(&s, StepMode::Fixed),
            vec!["relinearise_stale"],
            "{x}"
        );
    }
    // A level (m) and `inf` (= the fixed schedule alone) are accepted.
    for x in [5e-8, f64::INFINITY] {
        let s = SolverSettings {
            relinearise_stale: Some(x),
            ..SolverSettings::default()
        };
        assert_eq!(fields(&s, StepMode::Fixed), Vec::<&str>::new(), "{x}");
    }
    let s = SolverSettings {
        relinearise_every: 0,
        method: " ".into(),
        ..SolverSettings::default()
    };
    assert_eq!(
        fields(&s, StepMode::Fixed),
        vec!["relinearise_every", "method"]
    );
}

#[test]
fn grid_violations_name_the_nearest_valid_values() {
    // Output interval 1e-4 < step 1e-3.
    let e = settings(1e-3, 1.0, Some(1e-4))
        .validate(StepMode::Fixed)
        .unwrap_err();
    assert_eq!(e.problems[0].field, "output_interval");
    assert!(e.problems[0].message.contains("smaller than"), "{e}");
    // 2.5 steps: nearest multiples 2 and 3 steps.
    let e = settings(1e-3, 1.0, Some(2.5e-3))
        .validate(StepMode::Fixed)
        .unwrap_err();
    assert!(e.problems[0].hint.contains("0.002 and 0.003"), "{e}");
    // 0.7 ms does not divide 1 s (1428.57 steps): steps 1/1429 and 1/1428, or t_end 0.9996 / 1.0003.
    let e = settings(7e-4, 1.0, None)
        .validate(StepMode::Fixed)
        .unwrap_err();
    let p = &e.problems[0];
    assert_eq!(p.field, "step");
    let expect_a = format!("{}", 1.0 / 1429.0);
    let expect_b = format!("{}", 1.0 / 1428.0);
    assert!(
        p.hint.contains(&expect_a[..8]) && p.hint.contains(&expect_b[..8]),
        "{p}"
    );
    assert!(
        p.hint.contains("0.9996") && p.hint.contains("1.0003"),
        "{p}"
    );
    // Adaptive runs: the step is only the initial step, no grid rules.
    assert!(
        settings(7e-4, 1.0, Some(2.5e-3))
            .validate(StepMode::Adaptive)
            .is_ok()
    );
}

#[test]
fn model_files_go_through_the_same_function() {
    let src = "[model]\nname = \"m\"\n[solver]\nstep = 7e-4\nrtol = 2.0\n";
    let e = from_toml_str(src, "m.toml").unwrap_err().to_string();
    assert!(e.contains("m.toml:3: solver 'solver'"), "{e}");
    assert!(e.contains("does not divide t_end"), "{e}");
    assert!(e.contains("rtol = 2"), "{e}");
}

fn curve(extrapolation: Extrapolation, symmetry: Symmetry) -> Curve {
    Curve {
        name: "C_DAMPER".into(),
        x: vec![0.0, 1.0, 2.0],
        y: vec![0.0, 10.0, 30.0],
        interpolation: Interpolation::Linear,
        extrapolation,
        symmetry,
        x_unit: None,
        y_unit: None,
        out_of_range: Default::default(),
        segment_knots: Default::default(),
    }
}

#[test]
fn error_curves_record_the_first_out_of_range_value() {
    let c = curve(Extrapolation::Error, Symmetry::None);
    // In range: nothing recorded, values unchanged.
    assert_eq!(c.eval(1.5), (20.0, 20.0));
    assert_eq!(c.out_of_range.get(), None);
    // Out of range: end value held, the first offending x recorded.
    assert_eq!(c.eval(2.5), (30.0, 0.0));
    assert_eq!(c.eval(-1.0), (0.0, 0.0));
    assert_eq!(c.out_of_range.get(), Some(2.5));
    assert!(any_out_of_range(std::slice::from_ref(&c)));
    clear_out_of_range(std::slice::from_ref(&c));
    assert!(!any_out_of_range(std::slice::from_ref(&c)));
    // Odd curves cover [-2, 2].
    let odd = curve(Extrapolation::Error, Symmetry::Odd);
    assert_eq!(odd.eval(-1.5), (-20.0, 20.0));
    assert_eq!(odd.out_of_range.get(), None);
    odd.eval(-2.5);
    assert_eq!(odd.out_of_range.get(), Some(-2.5));
    // Other extrapolations never record.
    for e in [Extrapolation::Constant, Extrapolation::Linear] {
        let c = curve(e, Symmetry::None);
        c.eval(5.0);
        assert_eq!(c.out_of_range.get(), None);
    }
}

#[test]
fn the_run_error_names_element_curve_value_and_range() {
    let src = r#"
[model]
name = "m"
[[curves]]
name = "C_DAMPER"
x = [-1.0, 0.0, 1.0]
y = [-500.0, 0.0, 500.0]
extrapolation = "error"
[[bodies]]
name = "b"
mass = 1.0
inertia = { principal = [1.0, 1.0, 1.0] }
position = [0.0, 0.0, 0.0]
[[markers]]
name = "mb"
body = "b"
position = [0.0, 0.0, 0.0]
[[markers]]
name = "mg"
body = "ground"
position = [0.0, 0.0, 1.0]
[[force_elements]]
type = "damper"
name = "damper_fl"
marker_i = "mb"
marker_j = "mg"
curve = "C_DAMPER"
"#;
    let m = from_toml_str(src, "m.toml").unwrap();
    assert!(check_curve_ranges(&m, &m.curves).is_ok());
    m.curves[0].eval(1.75);
    let e = check_curve_ranges(&m, &m.curves).unwrap_err();
    assert_eq!(e.curve, "C_DAMPER");
    assert_eq!(e.x, 1.75);
    assert_eq!((e.min, e.max), (-1.0, 1.0));
    let msg = e.to_string();
    assert!(msg.contains("force element 'damper_fl'"), "{msg}");
    assert!(msg.contains("x = 1.75") && msg.contains("[-1, 1]"), "{msg}");
}
