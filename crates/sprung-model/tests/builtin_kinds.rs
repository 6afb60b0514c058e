//! The built-in kinds written as `[[elements]]` (`src/builtin_kinds.rs`): the example model
//! `models/mass_spring_damper_elements.toml` loads to exactly the description of
//! `models/mass_spring_damper.toml`; problems of an entry are located at it (file:line, element
//! name, the parameter, what to write); the JSON Schema accepts the form.

use serde_json::Value;
use sprung_model::{ModelError, from_json_str, from_toml_str, load};
use sprung_test_support::{model_path, model_text};

const FILE: &str = "mass_spring_damper_elements.toml";

/// The problems of loading the example with `from` replaced by `to`, as printed.
fn problems(from: &str, to: &str) -> Vec<String> {
    let text = model_text(FILE);
    assert!(text.contains(from), "{from}");
    match from_toml_str(&text.replacen(from, to, 1), FILE) {
        Ok(_) => panic!("{to}: accepted"),
        Err(ModelError::Invalid { problems, .. }) => {
            problems.iter().map(ToString::to_string).collect()
        }
        Err(e) => panic!("{e}"),
    }
}

/// The 1-based line of `name = "<name>"` inside the `[[elements]]` section of the example.
fn line_of(name: &str) -> usize {
    let text = model_text(FILE);
    let start = text.find("[[elements]]").unwrap();
    let at = start + text[start..].find(&format!("name = \"{name}\"")).unwrap();
    text[..at].matches('\n').count() + 1
}

#[test]
fn the_example_is_the_model_of_the_dedicated_tables() {
    let tables = load(&model_path("mass_spring_damper.toml")).unwrap();
    let mut elements = load(&model_path(FILE)).unwrap();
    assert!(
        elements.elements.is_empty(),
        "normalised into force_elements"
    );
    assert_eq!(elements.force_elements, tables.force_elements);
    elements.model = tables.model.clone();
    assert_eq!(elements, tables);
}

#[test]
fn an_unknown_parameter_is_located_and_the_closest_name_suggested() {
    let p = problems("stiffness = 100.0", "stifness = 100.0");
    assert_eq!(
        p,
        [format!(
            "{FILE}:{}: element 'spring': unknown parameter `stifness` for type \"spring\"; fix: did you mean 'stiffness'? valid: stiffness, curve, free_length, preload, damping (`sprung elements` describes them)",
            line_of("spring")
        )]
    );
}

#[test]
fn a_wrong_number_of_markers_is_located() {
    let p = problems(
        "markers = [\"mass_point\", \"anchor\"]  # marker_i",
        "markers = [\"mass_point\"]  # marker_i",
    );
    assert_eq!(
        p,
        [format!(
            "{FILE}:{}: element 'spring': type \"spring\" takes 2 markers (marker_i, marker_j), 1 given; fix: markers = [\"<marker_i: action, on body_i>\", \"<marker_j: reference, on body_j>\"]",
            line_of("spring")
        )]
    );
}

#[test]
fn missing_required_parameters_and_values_of_the_wrong_shape_say_what_to_write() {
    // The damper entry turned into a bushing: `damping` is a vector there, and the two rates
    // without defaults are missing.
    let p = problems("type = \"damper\"", "type = \"bushing\"");
    let at = format!("{FILE}:{}: element 'damper': ", line_of("damper"));
    assert_eq!(
        p,
        [
            format!(
                "{at}parameter `stiffness` of type \"bushing\" is missing; fix: add stiffness = [kx, ky, kz] (N/m, translational rates in marker-J axes) to `parameters`"
            ),
            format!(
                "{at}parameter `rot_stiffness` of type \"bushing\" is missing; fix: add rot_stiffness = [kx, ky, kz] (Nm/rad, rotational rates in marker-J axes) to `parameters`"
            ),
            format!(
                "{at}parameter `damping` must be a list of 3 numbers [x, y, z] (marker-J axes), not the number 2; fix: write damping as a list of 3 numbers [x, y, z] (marker-J axes)"
            ),
        ]
    );
}

#[test]
fn problems_found_by_validation_are_located_at_the_entry() {
    // Checked on the force element the entry stands for, located at the entry.
    let p = problems("stiffness = 100.0", "stiffness = -100.0");
    assert_eq!(
        p,
        [format!(
            "{FILE}:{}: spring 'spring': `stiffness` = [-100.0] has a negative entry; fix: `stiffness` must be >= 0",
            line_of("spring")
        )]
    );
    // Two force elements of one name, whichever syntax writes them, are duplicates.
    let p = problems("name = \"damper\"", "name = \"spring\"");
    assert!(
        p.iter()
            .any(|p| p.contains("'spring'") && p.contains("unique")),
        "{p:?}"
    );
}

#[test]
fn mirroring_works_for_built_in_entries_and_is_refused_for_open_kinds() {
    // A mirrored spring: the `_R` copy exists with mirrored marker references.
    let text = model_text(FILE)
        .replace("name = \"spring\"", "name = \"spring_L\"\nmirror = true")
        .replace(
            "name = \"mass_point\"",
            "name = \"mass_point_L\"\nmirror = true",
        )
        .replace("\"mass_point\"", "\"mass_point_L\"")
        .replace("name = \"mass\"\n", "name = \"mass_L\"\nmirror = true\n")
        .replace("body = \"mass\"", "body = \"mass_L\"")
        .replace(
            "position = [0.0, 0.0, 0.0]\ninertia",
            "position = [0.0, 0.5, 0.0]\ninertia",
        )
        .replace("element = \"spring\"", "element = \"spring_L\"");
    let m = from_toml_str(&text, FILE).unwrap_or_else(|e| panic!("{e}"));
    let r = m.force_element("spring_R").expect("mirrored copy");
    assert_eq!((r.marker_i(), r.marker_j()), ("mass_point_R", "anchor"));
    assert_eq!(m.force_elements.len(), 3);
    // An open kind cannot be mirrored: located at its entry.
    let maxwell = model_text("maxwell_solid.toml");
    let text = maxwell.replacen("type = \"maxwell\"", "type = \"maxwell\"\nmirror = true", 1);
    let err = from_toml_str(&text, "maxwell_solid.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("element 'maxwell': mirror = true: elements of type \"maxwell\" cannot be mirrored (only the built-in kinds bushing, spring, damper, stop can)"),
        "{err}"
    );
}

#[test]
fn channels_and_parameter_paths_of_built_in_entries_are_those_of_force_elements() {
    let m = load(&model_path(FILE)).unwrap();
    // The file's channel `quantity = "force", element = "spring"` resolves as for the table.
    assert!(
        m.outputs
            .iter()
            .any(|o| o.element.as_deref() == Some("spring"))
    );
    // element_output is for open kinds: the message names the quantities to use.
    let text = model_text(FILE).replace(
        "quantity = \"force\"\nelement = \"spring\"",
        "quantity = \"element_output\"\nelement = \"spring\"\noutput = \"force\"",
    );
    let err = from_toml_str(&text, FILE).unwrap_err().to_string();
    assert!(
        err.contains("'spring' is a spring (a built-in kind, whichever syntax writes it): its channels are the force-element quantities"),
        "{err}"
    );
    // A path into the entry as written says how to address the value.
    let err = m
        .with_parameters(&[("elements.spring.parameters.stiffness", 200.0)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("address it as force_elements.spring.<field>"),
        "{err}"
    );
    let set = m
        .with_parameters(&[("force_elements.spring.stiffness", 200.0)])
        .unwrap();
    let Some(sprung_model::ForceElement::Spring(s)) = set.force_element("spring") else {
        panic!()
    };
    assert_eq!(s.stiffness, Some(200.0));
}

#[test]
fn the_json_form_loads_alike_and_its_problems_are_located() {
    let toml_value: toml::Value = toml::from_str(&model_text(FILE)).unwrap();
    let json = serde_json::to_string_pretty(&toml_value).unwrap();
    let a = from_json_str(&json, "m.json").unwrap();
    let b = load(&model_path(FILE)).unwrap();
    assert_eq!(a.force_elements, b.force_elements);
    let bad = json.replacen("\"free_length\"", "\"free_lenght\"", 1);
    let err = from_json_str(&bad, "m.json").unwrap_err().to_string();
    let line = json[..json.find("\"name\": \"spring\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        err.contains(&format!(
            "m.json:{line}: element 'spring': unknown parameter `free_lenght` for type \"spring\"; fix: did you mean 'free_length'?"
        )),
        "{err}"
    );
}

/// A minimal JSON-Schema (draft 7) check of the constructs schemars emits: `$ref`, `type`,
/// `properties`, `required`, `additionalProperties`, `items`, `minItems`/`maxItems`, `enum`,
/// `anyOf`/`oneOf`/`allOf`. Returns where `v` is rejected.
fn check(schema: &Value, root: &Value, v: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        return check(&root["definitions"][name], root, v, at);
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            return Err(format!("{at}: not of type {types:?}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        return Err(format!("{at}: {v} not in {e:?}"));
    }
    for (key, any) in [("anyOf", true), ("oneOf", true), ("allOf", false)] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            let results: Vec<_> = list.iter().map(|s| check(s, root, v, at)).collect();
            let n_ok = results.iter().filter(|r| r.is_ok()).count();
            if (any && n_ok == 0) || (!any && n_ok < list.len()) {
                return Err(format!("{at}: no {key} alternative fits: {results:?}"));
            }
        }
    }
    if let Some(obj) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(req) = schema.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) {
                    return Err(format!("{at}: missing {r}"));
                }
            }
        }
        for (k, x) in obj {
            let at = format!("{at}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(s, root, x, &at)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("{at}: not allowed")),
                    Some(s @ Value::Object(_)) => check(s, root, x, &at)?,
                    _ => {}
                },
            }
        }
    }
    if let Some(a) = v.as_array() {
        if let Some(items) = schema.get("items") {
            for (i, x) in a.iter().enumerate() {
                check(items, root, x, &format!("{at}[{i}]"))?;
            }
        }
        let n = a.len() as u64;
        if schema
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
            || schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|m| n > m)
        {
            return Err(format!("{at}: {n} items"));
        }
    }
    Ok(())
}

#[test]
fn the_json_schema_accepts_built_in_kinds_as_elements() {
    let schema: Value = serde_json::from_str(&sprung_model::json_schema()).unwrap();
    let file = |name: &str| -> Value {
        let v: toml::Value = toml::from_str(&model_text(name)).unwrap();
        serde_json::to_value(v).unwrap()
    };
    // Both example files, and every model's tables, are valid; the checker rejects what the
    // loader rejects.
    for name in [FILE, "mass_spring_damper.toml", "double_wishbone.toml"] {
        check(&schema, &schema, &file(name), name).unwrap();
    }
    let mut m = file(FILE);
    let e = &mut m["elements"][0];
    e["mirror"] = Value::Bool(true);
    e["parameters"]["stiffness_curve_x"] = Value::String("C".into());
    e["parameters"]["preload"] = serde_json::json!([1.0, 2.0, 3.0]);
    check(&schema, &schema, &m, "edited").unwrap();
    m["elements"][0]["mirorr"] = Value::Bool(true);
    let err = check(&schema, &schema, &m, "m").unwrap_err();
    assert!(err.contains("mirorr: not allowed"), "{err}");
    let mut m = file(FILE);
    m["elements"][0]["parameters"]["stiffness"] = serde_json::json!({ "x": 1.0 });
    assert!(check(&schema, &schema, &m, "m").is_err());
}
