//! The variable table, `modelDescription.xml` of both versions (parsed with an XML parser) and
//! the packer's archive, checked against the model they come from.

mod common;

use std::io::Read;

use common::*;
use sprung_fmi::pack::{model_identifier, platform_dir, resources};
use sprung_fmi::{Binding, Causality, FmiVersion, PackOptions, VariableTable};
use sprung_test_support::{model_path, model_text};

fn wishbone_runtime() -> (std::path::PathBuf, std::sync::Arc<sprung::Model>) {
    let dir = temp_dir("wishbone");
    let text = model_text("double_wishbone.toml");
    assert_eq!(text.matches(FX_STEP).count(), 1);
    let path = write_model(
        &dir,
        "double_wishbone_fmu.toml",
        &text.replace(FX_STEP, FX_RUNTIME),
    );
    let model = sprung::Model::from_file(&path).unwrap();
    (path, model)
}

/// The table of the double wishbone with a runtime Fx: time, the two mirrored Fx inputs (the
/// constant Fz stays inside the model), then every output channel in model order with its unit.
#[test]
fn variable_table_of_the_wishbone() {
    let (_, model) = wishbone_runtime();
    let t = VariableTable::of(&model).unwrap();
    let channels = model.channel_names();
    assert_eq!(t.variables.len(), 1 + 2 + 2 + channels.len());
    for (k, v) in t.variables.iter().enumerate() {
        assert_eq!(v.vr as usize, k);
    }
    assert_eq!(t.variables[0].binding, Binding::Time);
    // The declared scale factors: fixed parameters, start = the declared value, no unit ("-").
    let params: Vec<_> = t.with_causality(Causality::Parameter).collect();
    assert_eq!(params.len(), model.parameters().len());
    for (v, p) in params.iter().zip(model.parameters()) {
        assert_eq!(v.name, p.name);
        assert_eq!(v.start, Some(p.value));
        assert_eq!(v.variability, sprung_fmi::Variability::Fixed);
        assert_eq!(v.unit, None);
    }
    assert_eq!(
        params.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["bushing_scale", "damper_scale"]
    );
    let inputs: Vec<_> = t.with_causality(Causality::Input).collect();
    assert_eq!(
        inputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["Fx_L", "Fx_R"]
    );
    for v in &inputs {
        assert_eq!(v.unit.as_deref(), Some("N"));
        assert_eq!(v.start, Some(0.0));
        let Binding::Input(k) = v.binding else {
            panic!()
        };
        assert_eq!(model.input_names()[k], v.name);
    }
    let outputs: Vec<_> = t.with_causality(Causality::Output).collect();
    assert_eq!(outputs.len(), channels.len());
    for (v, (name, unit)) in outputs.iter().zip(&channels) {
        assert_eq!(v.name, *name);
        assert_eq!(v.unit.as_deref().unwrap_or(""), *unit);
        assert!(v.start.is_none());
    }
    // Every unit the channels use is known with SI exponents.
    for u in t.units() {
        assert!(u.base.is_some(), "unit {} has no base units", u.name);
    }
}

/// An input and an output with the same name cannot both be FMU variables.
#[test]
fn duplicate_names_are_refused() {
    let text = msd_runtime_text().replace("name = \"F\"", "name = \"x\"");
    let m =
        sprung::Model::from_description(sprung_model::from_toml_str(&text, "dup.toml").unwrap())
            .unwrap();
    let e = VariableTable::of(&m).unwrap_err().to_string();
    assert!(
        e.contains("the name 'x' is used by an input and an output"),
        "{e}"
    );
}

fn attr<'a>(n: roxmltree::Node<'a, 'a>, a: &str) -> &'a str {
    n.attribute(a)
        .unwrap_or_else(|| panic!("<{}> has no {a}", n.tag_name().name()))
}

/// Both descriptions parse as XML and carry the same variables, value references, units and
/// start values as the table; every unit used is defined; the model structure lists exactly the
/// outputs (FMI 2 by 1-based index, FMI 3 by value reference).
#[test]
fn model_descriptions_of_both_versions() {
    let (_, model) = wishbone_runtime();
    let t = VariableTable::of(&model).unwrap();
    let info = sprung_fmi::DescriptionInfo {
        model_name: "double_wishbone".into(),
        model_identifier: "double_wishbone".into(),
        token: "{01234567-89ab-cdef-0123-456789abcdef}".into(),
        description: "a <test> & \"quotes\"".into(),
        start_time: 0.0,
        stop_time: 8.0,
        step_size: 1e-3,
        internal_step: 1e-3,
    };
    for version in [FmiVersion::V2, FmiVersion::V3] {
        let xml = sprung_fmi::model_description(&t, &info, version);
        let doc = roxmltree::Document::parse(&xml)
            .unwrap_or_else(|e| panic!("FMI {}: {e}\n{xml}", version.number()));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "fmiModelDescription");
        assert_eq!(attr(root, "description"), "a <test> & \"quotes\"");
        let (fmi_version, token_attr) = match version {
            FmiVersion::V2 => ("2.0", "guid"),
            FmiVersion::V3 => ("3.0", "instantiationToken"),
        };
        assert_eq!(attr(root, "fmiVersion"), fmi_version);
        assert_eq!(attr(root, token_attr), info.token);
        let cs = root
            .children()
            .find(|n| n.has_tag_name("CoSimulation"))
            .unwrap();
        assert_eq!(attr(cs, "modelIdentifier"), "double_wishbone");
        let units: Vec<&str> = root
            .descendants()
            .filter(|n| n.has_tag_name("Unit"))
            .map(|n| attr(n, "name"))
            .collect();
        let vars = root
            .children()
            .find(|n| n.has_tag_name("ModelVariables"))
            .unwrap();
        let vars: Vec<_> = vars.children().filter(|n| n.is_element()).collect();
        assert_eq!(vars.len(), t.variables.len());
        for (node, v) in vars.iter().zip(&t.variables) {
            assert_eq!(attr(*node, "name"), v.name);
            assert_eq!(attr(*node, "valueReference").parse::<u32>().unwrap(), v.vr);
            assert_eq!(attr(*node, "causality"), v.causality.as_str());
            // FMI 2 puts unit and start on the <Real> child, FMI 3 on <Float64> itself.
            let typed = match version {
                FmiVersion::V2 => node.children().find(|n| n.has_tag_name("Real")).unwrap(),
                FmiVersion::V3 => {
                    assert!(node.has_tag_name("Float64"));
                    *node
                }
            };
            assert_eq!(typed.attribute("unit"), v.unit.as_deref());
            if let Some(u) = typed.attribute("unit") {
                assert!(units.contains(&u), "unit {u} not defined");
            }
            assert_eq!(
                typed.attribute("start").map(|s| s.parse::<f64>().unwrap()),
                v.start
            );
        }
        let structure = root
            .children()
            .find(|n| n.has_tag_name("ModelStructure"))
            .unwrap();
        let listed: Vec<u32> = match version {
            FmiVersion::V2 => structure
                .descendants()
                .filter(|n| {
                    n.has_tag_name("Unknown") && n.parent().unwrap().has_tag_name("Outputs")
                })
                .map(|n| attr(n, "index").parse::<u32>().unwrap() - 1)
                .collect(),
            FmiVersion::V3 => structure
                .children()
                .filter(|n| n.has_tag_name("Output"))
                .map(|n| attr(n, "valueReference").parse().unwrap())
                .collect(),
        };
        let outputs: Vec<u32> = t.with_causality(Causality::Output).map(|v| v.vr).collect();
        assert_eq!(listed, outputs);
    }
}

/// The packer: the archive's entries, the library under the version's platform folder, the
/// manifest, the description and a CSV signal referenced as `../signals/force.csv` (outside the
/// model's folder) packed at the same relative position.
#[test]
fn packer_writes_the_archive() {
    let dir = temp_dir("pack");
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::create_dir_all(dir.join("signals")).unwrap();
    std::fs::write(dir.join("signals/force.csv"), "t,f\n0,0\n1,10\n").unwrap();
    let step = r#"signal = { type = "step", time = 0.0, before = 0.0, after = 10.0 }"#;
    let text = model_text("mass_spring_damper.toml").replace(
        step,
        r#"signal = { type = "csv", file = "../signals/force.csv", column = "f" }"#,
    );
    let model = write_model(&dir.join("models"), "msd_csv.toml", &text);
    let res = resources(&model).unwrap();
    assert_eq!(
        res.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["models/msd_csv.toml", "signals/force.csv"]
    );
    let lib = dir.join("libsprung_fmi.so");
    std::fs::write(&lib, b"engine bytes").unwrap();
    for version in [FmiVersion::V2, FmiVersion::V3] {
        let out = dir.join(format!("msd{}.fmu", version.number()));
        let report = sprung_fmi::pack(&PackOptions {
            model: model.clone(),
            library: lib.clone(),
            version,
            output: out.clone(),
        })
        .unwrap();
        assert_eq!(report.model_identifier, "mass_spring_damper");
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let mut names: Vec<String> = zip.file_names().map(String::from).collect();
        names.sort();
        let so = format!("binaries/{}/mass_spring_damper.so", platform_dir(version));
        let mut expected = vec![
            "modelDescription.xml".to_string(),
            so.clone(),
            "resources/models/msd_csv.toml".into(),
            "resources/signals/force.csv".into(),
            "resources/sprung-fmu.json".into(),
        ];
        expected.sort();
        assert_eq!(names, expected);
        let mut read = |name: &str| {
            let mut s = Vec::new();
            zip.by_name(name).unwrap().read_to_end(&mut s).unwrap();
            s
        };
        assert_eq!(read(&so), b"engine bytes");
        assert_eq!(read("resources/models/msd_csv.toml"), text.as_bytes());
        let manifest: serde_json::Value =
            serde_json::from_slice(&read("resources/sprung-fmu.json")).unwrap();
        assert_eq!(manifest["model"], "models/msd_csv.toml");
        assert_eq!(manifest["token"], report.token.as_str());
        let xml = String::from_utf8(read("modelDescription.xml")).unwrap();
        assert!(xml.contains(&report.token));
        roxmltree::Document::parse(&xml).unwrap();
    }
    // The packed model loads from the unpacked resources (the CSV found relative to it).
    let (resources_dir, _) = unpacked(&model, FmiVersion::V3, &dir.join("unpack"));
    sprung::Model::from_file(resources_dir.join("models/msd_csv.toml")).unwrap();
}

/// A missing library is a clear error telling how to build it; identifiers are C identifiers.
#[test]
fn packer_errors_and_identifiers() {
    let dir = temp_dir("pack-errors");
    let e = sprung_fmi::pack(&PackOptions {
        model: model_path("mass_spring_damper.toml"),
        library: dir.join("missing.so"),
        version: FmiVersion::V3,
        output: dir.join("x.fmu"),
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("cargo build --release -p sprung-fmi"), "{e}");
    assert_eq!(model_identifier("double-wishbone v2"), "double_wishbone_v2");
    assert_eq!(model_identifier("4link"), "_4link");
}
