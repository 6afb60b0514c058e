//! `[[roads]]` and file parameters: located validation errors, and paths resolved against the
//! model file's folder with a clear error for a missing file.

const BASE: &str = "[model]\nname = \"r\"\n";

fn err(src: &str) -> String {
    sprung_model::from_toml_str(&format!("{BASE}{src}"), "roads.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn road_errors_are_located_and_say_what_to_fix() {
    let e = err("[[roads]]\nname = \"flat\"\ntype = \"plane\"\nlength = 2.0\n");
    assert!(
        e.contains(
            "roads.toml:4: road 'flat': field `length` does not apply to a road of type \"plane\""
        ),
        "{e}"
    );
    let e = err("\n[[roads]]\nname = \"b\"\ntype = \"bump\"\nheight = 0.1\n");
    assert!(
        e.contains("roads.toml:5: road 'b': a bump needs `length`"),
        "{e}"
    );
    let e = err(
        "[[roads]]\nname = \"p\"\ntype = \"profile\"\ndistance = [0, 2, 1]\nelevation = [0, 0, 0]\n",
    );
    assert!(
        e.contains("`distance` is not strictly increasing at index 2"),
        "{e}"
    );
    let e = err(
        "[[roads]]\nname = \"z\"\ntype = \"plane\"\nfriction_zones = [{ mu = 0.3, x_min = 2.0, x_max = 1.0 }]\n",
    );
    assert!(
        e.contains("friction zone #1: x_min = 2 is not below x_max = 1"),
        "{e}"
    );
    let e = err(
        "[[roads]]\nname = \"s\"\ntype = \"plane\"\nheight = 1.0\n[[roads]]\nname = \"s\"\ntype = \"plane\"\n",
    );
    assert!(e.contains("defined more than once"), "{e}");
    // Unknown field and wrong type: the parser's error names the item.
    let e = err("[[roads]]\nname = \"u\"\ntype = \"plane\"\nslope = 3.0\n");
    assert!(
        e.contains("unknown field `slope`") && e.contains("[[roads]] #1 'u'"),
        "{e}"
    );
    let e = err("[[roads]]\nname = \"t\"\ntype = \"hill\"\n");
    assert!(e.contains("unknown variant `hill`"), "{e}");
}

#[test]
fn file_parameters_resolve_against_the_model_folder() {
    let dir = std::env::temp_dir().join(format!("sprung-roads-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tires")).unwrap();
    std::fs::write(dir.join("tires/t.tir"), "x").unwrap();
    std::fs::write(dir.join("g.csv"), "0,0\n0,0\n").unwrap();
    let model = format!(
        "{BASE}[[roads]]\nname = \"g\"\ntype = \"grid\"\nfile = \"g.csv\"\nspacing = [1.0, 1.0]\n\
         [[bodies]]\nname = \"w\"\nmass = 1.0\nposition = [0, 0, 0]\ninertia = {{ principal = [1, 1, 1] }}\n\
         [[markers]]\nname = \"c\"\nbody = \"w\"\nposition = [0, 0, 0]\n\
         [[elements]]\nname = \"tire\"\ntype = \"pac2002\"\nmarkers = [\"c\"]\nparameters = {{ tir_file = \"tires/t.tir\", note = \"text\" }}\n"
    );
    let path = dir.join("m.toml");
    std::fs::write(&path, &model).unwrap();
    let m = sprung_model::load(&path).unwrap();
    let sprung_model::ParamValue::Text(tir) = &m.elements[0].parameters["tir_file"] else {
        panic!()
    };
    assert_eq!(std::path::Path::new(tir), dir.join("tires/t.tir"));
    assert_eq!(
        std::path::Path::new(m.roads[0].file.as_deref().unwrap()),
        dir.join("g.csv")
    );
    // Other text parameters stay as they are.
    assert_eq!(
        m.elements[0].parameters["note"],
        sprung_model::ParamValue::Text("text".into())
    );
    // A missing file: the element, the parameter and the path looked for.
    std::fs::write(&path, model.replace("tires/t.tir", "tires/missing.tir")).unwrap();
    let e = sprung_model::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("element 'tire': `tir_file` = \"tires/missing.tir\": no such file")
            && e.contains("missing.tir"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
