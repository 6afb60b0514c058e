//! Model parameters through the facade (`docs/parameters.md`): a parameter or path gives the
//! same model, bit for bit, as editing the file by hand; declared scale factors of 1 leave the
//! reference model unchanged; every error names the parameter and how to fix it.

use std::sync::Arc;

use sprung::{Control, Model, ParameterMode, Simulation};
use sprung_test_support::{model_path, model_text};

/// The channel rows of a run of `t_end` seconds (every output interval).
fn run_rows(model: Model, t_end: f64) -> Vec<Vec<f64>> {
    let mut sim = Simulation::new(Arc::new(model)).unwrap();
    let mut rows = Vec::new();
    let report = sim.run(t_end, &mut |_, row| {
        rows.push(row.to_vec());
        Control::Continue
    });
    assert_eq!(report.stop, sprung::StopReason::Completed);
    rows
}

fn load_str(text: &str, name: &str) -> Model {
    let label = model_path(name).display().to_string();
    let d = sprung_model::from_toml_str(text, &label).unwrap_or_else(|e| panic!("{e}"));
    Arc::unwrap_or_clone(Model::from_description(d).unwrap())
}

fn msd() -> Arc<Model> {
    Model::from_file(model_path("mass_spring_damper.toml")).unwrap()
}

/// The description without the parameter bookkeeping, for comparing with a hand-edited file.
fn plain(m: &Model) -> sprung_model::Model {
    let mut d = m.description().clone();
    d.parameters.clear();
    d.parameter_base = None;
    d
}

#[test]
fn a_path_gives_the_same_model_and_run_as_editing_the_file() {
    let edited = load_str(
        &model_text("mass_spring_damper.toml")
            .replace("stiffness = 100.0", "stiffness = 250.0")
            .replace("damping = 2.0", "damping = 3.5"),
        "mass_spring_damper.toml",
    );
    let set = msd()
        .with_parameters(&[
            ("force_elements.spring.stiffness", 250.0),
            ("force_elements.damper.damping", 3.5),
        ])
        .unwrap();
    assert_eq!(plain(&set), plain(&edited));
    assert_eq!(
        set.parameter_value("force_elements.spring.stiffness"),
        Ok(250.0)
    );
    // The run is the same bit for bit (0.5 s, 500 steps) and differs from the original.
    let a = run_rows(set, 0.5);
    assert_eq!(a, run_rows(edited, 0.5));
    assert_ne!(a, run_rows(Arc::unwrap_or_clone(msd()), 0.5));
}

#[test]
fn the_reference_axle_with_scale_factors_of_one_is_bitwise_the_file_without_them() {
    let text = model_text("double_wishbone.toml");
    let cut = text
        .find("[[parameters]]")
        .expect("the model declares parameters");
    let stripped = load_str(&text[..cut], "double_wishbone.toml");
    let with = Arc::unwrap_or_clone(Model::from_file(model_path("double_wishbone.toml")).unwrap());
    let names: Vec<&str> = with.parameters().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["bushing_scale", "damper_scale"]);
    assert!(with.parameters().iter().all(|p| p.value == 1.0
        && p.mode == ParameterMode::Scale
        && p.unit == "-"
        && !p.description.is_empty()));
    assert_eq!(plain(&with), plain(&stripped));
    // Static equilibrium and 20 ms of the load case, bit for bit.
    assert_eq!(run_rows(with, 0.02), run_rows(stripped, 0.02));
}

#[test]
fn a_scale_factor_multiplies_every_target_value_as_written() {
    let base = Model::from_file(model_path("double_wishbone.toml")).unwrap();
    let scaled = base
        .with_parameters(&[("damper_scale", 1.5), ("bushing_scale", 0.5)])
        .unwrap();
    assert_eq!(scaled.parameter_value("damper_scale"), Ok(1.5));
    assert_eq!(scaled.parameters()[1].value, 1.5);
    // Independent: scale the values in the description by hand.
    let mut d = plain(&base);
    for c in d.curves.iter_mut() {
        let f = match c.name.as_str() {
            "C_DAMPER_A" => 1.5,
            "C_LCA_RADIAL" | "C_TL_AXIAL" => 0.5,
            _ => continue,
        };
        c.y.iter_mut().for_each(|y| *y *= f);
    }
    let mut n = 0;
    for e in d.force_elements.iter_mut() {
        if let sprung_model::ForceElement::Bushing(b) = e
            && b.name.contains("_bushing_")
        {
            b.stiffness.iter_mut().for_each(|k| *k *= 0.5);
            b.rot_stiffness.iter_mut().for_each(|k| *k *= 0.5);
            n += 1;
        }
    }
    assert_eq!(n, 8, "four rubber bushings per side");
    assert_eq!(plain(&scaled), d);
    // A second change keeps the first; setting a factor back to 1 restores the file values.
    let again = scaled.with_parameters(&[("bushing_scale", 1.0)]).unwrap();
    assert_eq!(again.parameter_value("damper_scale"), Ok(1.5));
    let back = again.with_parameters(&[("damper_scale", 1.0)]).unwrap();
    assert_eq!(plain(&back), plain(&base));
    // The derived models share the registry of the original.
    assert!(Arc::ptr_eq(base.registry(), back.registry()));
}

#[test]
fn a_set_parameter_replaces_and_a_path_value_is_scaled_by_declared_factors() {
    let text = model_text("mass_spring_damper.toml").replace(
        "[[outputs]]\nname = \"x\"",
        "[[parameters]]\nname = \"k\"\nvalue = 400.0\nunit = \"N/m\"\ntargets = [\"force_elements.spring.stiffness\"]\n\n\
         [[parameters]]\nname = \"mass_factor\"\nvalue = 1.0\nmode = \"scale\"\ntargets = [\"bodies.mass.mass\", \"bodies.mass.inertia.principal\"]\n\n\
         [[outputs]]\nname = \"x\"",
    );
    let m = load_str(&text, "mass_spring_damper.toml");
    // The declared value acts at load time.
    assert_eq!(
        m.parameter_value("force_elements.spring.stiffness"),
        Ok(400.0)
    );
    assert_eq!(m.parameter_value("k"), Ok(400.0));
    // A path sets the file value; the declared factor then multiplies it.
    let m2 = m
        .with_parameters(&[("bodies.mass.mass", 2.0), ("mass_factor", 3.0)])
        .unwrap();
    assert_eq!(m2.parameter_value("bodies.mass.mass"), Ok(6.0));
    assert_eq!(
        m2.parameter_value("bodies.mass.inertia.principal[1]"),
        Ok(4.2e-4 * 3.0)
    );
    // Serialised with the file values and the current parameter values: reading it back gives
    // the same model.
    let json = m2.description().to_json_pretty();
    let back = sprung_model::from_json_str(&json, "back.json").unwrap();
    assert_eq!(back.bodies, m2.description().bodies);
    assert_eq!(back.force_elements, m2.description().force_elements);
}

fn err(r: Result<Model, sprung::Error>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn an_unknown_parameter_lists_the_declared_ones_and_the_closest() {
    let m = Model::from_file(model_path("double_wishbone.toml")).unwrap();
    let e = err(m.with_parameters(&[("dampr_scale", 2.0)]));
    assert!(e.contains("parameter 'dampr_scale'"), "{e}");
    assert!(e.contains("did you mean 'damper_scale'?"), "{e}");
    assert!(e.contains("valid: bushing_scale, damper_scale"), "{e}");
    assert!(e.contains("docs/parameters.md"), "{e}");
    let e = m.parameter_value("bushing").unwrap_err().to_string();
    assert!(e.contains("did you mean 'bushing_scale'?"), "{e}");
}

#[test]
fn a_bad_path_says_what_exists() {
    let m = msd();
    let cases = [
        (
            "force_elements.sprng.stiffness",
            "there is no force element named 'sprng'",
            "did you mean 'spring'?",
        ),
        (
            "force_elements.spring.stifness",
            "has no field 'stifness'",
            "did you mean 'stiffness'?",
        ),
        (
            "force_elements.spring.marker_i",
            "is a text, not a number",
            "numeric field",
        ),
        (
            "bodies.mass.position[3]",
            "index [3] is out of range",
            "from 0 to 2",
        ),
        ("bodies.mass.position[x]", "'x' is not an index", "[2]"),
        (
            "bodies.mass.inertia",
            "is a table, not a number",
            "principal",
        ),
        (
            "bodys.mass.mass",
            "'bodys' is neither a declared parameter nor the start of a path",
            "bodies",
        ),
        (
            "bodies.*_L.mass",
            "no body name matches '*_L'",
            "valid: mass",
        ),
        (
            "parameters.k.value",
            "neither a declared parameter",
            "force_elements",
        ),
    ];
    for (path, what, hint) in cases {
        let e = err(m.with_parameters(&[(path, 1.0)]));
        assert!(e.contains(what) && e.contains(hint), "{path}: {e}");
        assert!(e.contains(&format!("parameter '{path}'")), "{path}: {e}");
    }
    let e = m
        .parameter_value("bodies.mass.position")
        .unwrap_err()
        .to_string();
    assert!(e.contains("addresses 3 numbers"), "{e}");
}

#[test]
fn an_invalid_value_is_reported_by_the_validation_naming_the_parameter() {
    let e = err(msd().with_parameters(&[("bodies.mass.mass", -1.0)]));
    assert!(
        e.contains(
            "parameter 'bodies.mass.mass': value -1 gives body 'mass': mass = -1 is not positive"
        ),
        "{e}"
    );
    let dw = Model::from_file(model_path("double_wishbone.toml")).unwrap();
    let e = err(dw.with_parameters(&[("bushing_scale", -2.0)]));
    assert!(
        e.contains(
            "parameter 'bushing_scale': value -2 gives bushing 'uca_front_bushing_L': `stiffness`"
        ),
        "{e}"
    );
    for bad in [f64::NAN, f64::INFINITY] {
        let e = err(dw.with_parameters(&[("damper_scale", bad)]));
        assert!(
            e.contains("parameter 'damper_scale'") && e.contains("not finite"),
            "{e}"
        );
    }
    // A whole-number field takes whole numbers only.
    let e = err(msd().with_parameters(&[("solver.relinearise_every", 2.5)]));
    assert!(e.contains("whole number"), "{e}");
    let m = msd()
        .with_parameters(&[("solver.relinearise_every", 3.0)])
        .unwrap();
    assert_eq!(m.description().solver.relinearise_every, 3);
}

#[test]
fn bad_declarations_are_located_in_the_file() {
    let base = model_text("mass_spring_damper.toml");
    let with = |decl: &str| {
        let text = format!("{base}\n{decl}");
        let line = base.lines().count() + 2;
        let e = sprung_model::from_toml_str(&text, "msd.toml")
            .unwrap_err()
            .to_string();
        (e, line)
    };
    let (e, line) = with(
        "[[parameters]]\nname = \"k\"\nvalue = 1.0\ntargets = [\"force_elements.spring.stifness\"]\n",
    );
    assert!(
        e.contains(&format!(
            "msd.toml:{}: parameter 'k': target 'force_elements.spring.stifness'",
            line + 1
        )),
        "{e}"
    );
    assert!(e.contains("did you mean 'stiffness'?"), "{e}");
    let (e, _) = with("[[parameters]]\nname = \"k\"\nvalue = 1.0\ntargets = []\n");
    assert!(e.contains("targets is empty"), "{e}");
    let (e, _) = with(
        "[[parameters]]\nname = \"k\"\nvalue = 1.0\ntargets = [\"bodies.mass.mass\"]\n\n\
         [[parameters]]\nname = \"k\"\nvalue = 2.0\nmode = \"scale\"\ntargets = [\"bodies.mass.mass\"]\n",
    );
    assert!(e.contains("declared twice"), "{e}");
    assert!(
        e.contains("targeted by several parameters (k, k) and one of them sets it"),
        "{e}"
    );
    // Dotted names are those of included subsystems' parameters (`front.bushing_scale`); one
    // that reads as a path (first part a path section) or has an empty part is refused.
    for bad in ["bodies.b", "a..b"] {
        let (e, _) = with(&format!(
            "[[parameters]]\nname = \"{bad}\"\nvalue = 1.0\ntargets = [\"bodies.mass.mass\"]\n"
        ));
        assert!(e.contains("letters, digits"), "{bad}: {e}");
    }
    let (e, line) =
        with("[[parameters]]\nname = \"m\"\nvalue = -3.0\ntargets = [\"bodies.mass.mass\"]\n");
    // Located at the parameter's declaration: that is where the value comes from.
    let want = format!(
        "msd.toml:{}: parameter 'm': value -3 gives body 'mass': mass = -3 is not positive",
        line + 1
    );
    assert!(e.contains(&want), "{e}");
}

#[test]
fn every_listed_path_resolves_to_its_value() {
    let m = Model::from_file(model_path("double_wishbone.toml")).unwrap();
    let paths = m.description().numeric_paths();
    assert!(paths.len() > 1000, "{}", paths.len());
    // Names with dots are quoted; every listed path reads back its own value.
    assert!(
        paths
            .iter()
            .any(|(p, _)| p.starts_with("markers.\"wheel_bearing_L.I\""))
    );
    for (p, v) in paths.iter().step_by(7) {
        assert_eq!(m.parameter_value(p), Ok(*v), "{p}");
    }
}
