//! The built-in kinds (bushing, spring, damper, stop) written in the one `[[elements]]` syntax
//! (`crates/sprung-model/src/builtin_kinds.rs`, docs/model-format.md) give the same model as
//! their `[[force_elements]]` tables, bit for bit: the reference axles (mirroring, curves,
//! declared parameters acting on `force_elements.*_bushing_*`), the fixture with every kind and
//! option, and a model built from subsystems are rewritten here, table by table, into the
//! `[[elements]]` form — an independent transform of the file text, not the library's own
//! inverse — and the descriptions, the compiled elements, the runs from static equilibrium
//! (the models' load cases) and the macro-joint reduction are compared.

use std::path::Path;
use std::sync::Arc;

use sprung::{Control, Model, Simulation};
use sprung_test_support::{fixture_path, model_path};

/// The model text with every `[[force_elements]]` table written as an `[[elements]]` entry:
/// `type` and `name` stay, `marker_i`/`marker_j` become `markers`, `mirror` stays, a bushing's
/// curve tables `<field>s = { x = "C" }` become `<field>_x = "C"`, every other key goes into
/// `parameters`. The entries come before the model's own `[[elements]]` (the loader appends
/// them to the force elements in this order, so the element order is the file's).
fn elements_form(text: &str) -> String {
    let mut doc: toml::Table = toml::from_str(text).unwrap();
    let Some(toml::Value::Array(tables)) = doc.remove("force_elements") else {
        panic!("the model has no [[force_elements]]");
    };
    let mut entries: Vec<toml::Value> = tables
        .into_iter()
        .map(|t| {
            let toml::Value::Table(t) = t else {
                panic!("not a table")
            };
            let mut e = toml::Table::new();
            let mut params = toml::Table::new();
            let mut markers = [None, None];
            for (k, v) in t {
                match k.as_str() {
                    "type" | "name" | "mirror" => {
                        e.insert(k, v);
                    }
                    "marker_i" => markers[0] = Some(v),
                    "marker_j" => markers[1] = Some(v),
                    _ if k.ends_with("_curves") => {
                        let field = k.trim_end_matches('s');
                        for (axis, curve) in v.as_table().unwrap() {
                            params.insert(format!("{field}_{axis}"), curve.clone());
                        }
                    }
                    _ => {
                        params.insert(k, v);
                    }
                }
            }
            e.insert(
                "markers".into(),
                toml::Value::Array(markers.into_iter().map(Option::unwrap).collect()),
            );
            e.insert("parameters".into(), toml::Value::Table(params));
            toml::Value::Table(e)
        })
        .collect();
    if let Some(toml::Value::Array(open)) = doc.remove("elements") {
        entries.extend(open);
    }
    doc.insert("elements".into(), toml::Value::Array(entries));
    let out = toml::to_string(&doc).unwrap();
    assert!(!out.contains("[[force_elements]]") && out.contains("[[elements]]"));
    out
}

/// Writes `text` as `name` into a folder of its own under the test target directory.
fn write(dir: &str, name: &str, text: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(path: &Path) -> Arc<Model> {
    Model::from_file(path).unwrap_or_else(|e| panic!("{e}"))
}

/// The description with the file label of the parameter bookkeeping removed (the two files
/// have different paths).
fn description(m: &Model) -> sprung_model::Model {
    let mut d = m.description().clone();
    d.parameter_base = d.parameter_base.map(|b| {
        let mut b = (*b).clone();
        b.file.clear();
        Arc::new(b)
    });
    d
}

/// The channel rows of a run of `t_end` seconds from the model's initial state.
fn run_rows(model: &Arc<Model>, t_end: f64) -> Vec<Vec<f64>> {
    let mut sim = Simulation::new(model.clone()).unwrap();
    let mut rows = Vec::new();
    let report = sim.run(t_end, &mut |_, row| {
        rows.push(row.to_vec());
        Control::Continue
    });
    assert_eq!(report.stop, sprung::StopReason::Completed);
    rows
}

/// Loads `path` and its `[[elements]]` form and checks they are the same model bit for bit.
fn assert_same(path: &Path, t_end: f64) -> (Arc<Model>, Arc<Model>) {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();
    let rewritten = write(
        &format!("elements_form_{name}"),
        name,
        &elements_form(&text),
    );
    let (a, b) = (load(path), load(&rewritten));
    assert!(!a.description().force_elements.is_empty());
    assert_eq!(description(&a), description(&b), "{name}");
    assert_eq!(a.compiled().elements.len(), b.compiled().elements.len());
    for (x, y) in a.compiled().elements.iter().zip(&b.compiled().elements) {
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{name}");
    }
    let rows = run_rows(&a, t_end);
    assert!(rows.len() > 10);
    assert_eq!(rows, run_rows(&b, t_end), "{name}: the runs differ");
    (a, b)
}

#[test]
fn the_double_wishbone_in_elements_form_is_the_same_model_bit_for_bit() {
    // Mirrored bushings with curves, springs, dampers, stops, wheel bearings with a spin axis,
    // declared scale parameters targeting force_elements.*_bushing_*; 20 ms of the load case
    // from static equilibrium.
    let (a, b) = assert_same(&model_path("double_wishbone.toml"), 0.02);
    // A parameter changes both alike (the targets resolve in the elements form too).
    let (a, b) = (
        a.with_parameters(&[("bushing_scale", 1.7)]).unwrap(),
        b.with_parameters(&[("bushing_scale", 1.7)]).unwrap(),
    );
    assert_eq!(run_rows(&Arc::new(a), 0.01), run_rows(&Arc::new(b), 0.01));
}

#[test]
fn the_multilink_and_the_fixture_of_every_kind_are_the_same_bit_for_bit() {
    assert_same(&model_path("multilink.toml"), 0.02);
    assert_same(&fixture_path("all_elements.toml"), 0.02);
}

#[test]
fn a_model_of_subsystems_in_elements_form_is_the_same_bit_for_bit() {
    // pair.toml includes corner.toml twice (one placed and turned); both files rewritten.
    let dir = fixture_path("subsystems");
    let corner = std::fs::read_to_string(dir.join("corner.toml")).unwrap();
    let pair = std::fs::read_to_string(dir.join("pair.toml")).unwrap();
    write(
        "elements_form_subsystems",
        "corner.toml",
        &elements_form(&corner),
    );
    let rewritten = write(
        "elements_form_subsystems",
        "pair.toml",
        &elements_form(&pair),
    );
    let (a, b) = (load(&dir.join("pair.toml")), load(&rewritten));
    assert!(
        a.description()
            .force_elements
            .iter()
            .any(|e| e.name().starts_with("front."))
    );
    assert_eq!(description(&a), description(&b));
    assert_eq!(run_rows(&a, 0.02), run_rows(&b, 0.02));
}

#[test]
fn the_macro_joint_reduction_sees_bushings_of_either_syntax() {
    let path = model_path("double_wishbone.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let rewritten = write(
        "elements_form_reduce",
        "double_wishbone.toml",
        &elements_form(&text),
    );
    let opts = sprung_reduce::ReduceOptions::default();
    let a = sprung_reduce::reduce(load(&path).description(), &opts).unwrap();
    let b = sprung_reduce::reduce(load(&rewritten).description(), &opts).unwrap();
    assert!(!a.corners.is_empty());
    let names = |r: &sprung_reduce::Reduction| -> Vec<(String, Vec<String>)> {
        r.corners
            .iter()
            .map(|c| (c.name.clone(), c.elements.clone()))
            .collect()
    };
    assert_eq!(names(&a), names(&b));
    let mut ma = a.model.clone();
    let mut mb = b.model.clone();
    ma.parameter_base = None;
    mb.parameter_base = None;
    assert_eq!(ma, mb);
}

#[test]
fn a_description_built_in_code_compiles_its_built_in_entries_alike() {
    // An [[elements]] spring and damper put into a description in code (not through the
    // loader) give the model of the file with the tables.
    let file = load(&model_path("mass_spring_damper.toml"));
    let mut d = file.description().clone();
    let tables = std::mem::take(&mut d.force_elements);
    d.elements = tables
        .iter()
        .map(sprung_model::builtin_kinds::to_open_element)
        .collect();
    let built = Model::from_description(d).unwrap();
    assert_eq!(built.description(), file.description());
    assert_eq!(run_rows(&built, 0.3), run_rows(&file, 0.3));
}
