//! CSV input signals (loaded relative to the model file into a table; errors name the CSV file
//! and line) and a fuzz-style robustness test: mutated model files never panic.

use sprung_test_support::Rng;
use std::path::PathBuf;

use sprung_model::{ModelError, Signal, from_json_str, from_toml_str, load};

const BASE: &str = include_str!("common_base.toml");

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sprung_model_{}_{tag}", std::process::id()));
    std::fs::create_dir_all(d.join("inputs")).unwrap();
    d
}

fn model_with_csv(column: &str) -> String {
    BASE.replacen(
        "signal = { type = \"table\", t = [0.0, 0.1, 0.2], value = [0.0, 100.0, 50.0] }",
        &format!("signal = {{ type = \"csv\", file = \"inputs/fz.csv\", column = \"{column}\", time_column = \"time\" }}"),
        1,
    )
}

#[test]
fn csv_signal_is_loaded_relative_to_model() {
    let d = temp_dir("ok");
    std::fs::write(
        d.join("inputs/fz.csv"),
        "# wheel force\ntime, fx, \"fz\"\n0.0, 1, 0\n0.1, 2, 100\n\n0.2, 3, 50\n",
    )
    .unwrap();
    let p = d.join("model.toml");
    std::fs::write(&p, model_with_csv("fz")).unwrap();
    let m = load(&p).unwrap_or_else(|e| panic!("{e}"));
    let expect = Signal::Table {
        t: vec![0.0, 0.1, 0.2],
        value: vec![0.0, 100.0, 50.0],
        interpolation: sprung_model::Interpolation::Linear,
    };
    assert_eq!(m.input("Fz_L").unwrap().signal, expect);
    // The mirrored copy got the same table.
    assert_eq!(m.input("Fz_R").unwrap().signal, expect);
    // Same through JSON with a file label in that directory.
    let v: toml::Value = toml::from_str(&model_with_csv("fx")).unwrap();
    let json = serde_json::to_string(&v).unwrap();
    let jp = d.join("model.json");
    let mj = from_json_str(&json, jp.to_str().unwrap()).unwrap();
    assert_eq!(mj.input("Fz_L").unwrap().signal.value(0.15), 2.5);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn csv_errors_name_file_and_line() {
    let d = temp_dir("bad");
    let p = d.join("model.toml");
    let csv = d.join("inputs/fz.csv");
    let cases = [
        ("time,fz\n0.0,1\n0.1,abc\n", "fz", 3, "not a number"),
        (
            "time,fz\n0.0,1\n0.1,2\n0.1,3\n",
            "fz",
            4,
            "strictly increasing",
        ),
        ("time,fz\n0.0,1\n0.1\n", "fz", 3, "missing field"),
        ("time,fz\n0.0,1\n", "fy", 1, "no column named 'fy'"),
        ("time,fz\n", "fz", 1, "no data"),
        ("", "fz", 1, "empty"),
    ];
    for (content, column, line, needle) in cases {
        std::fs::write(&csv, content).unwrap();
        std::fs::write(&p, model_with_csv(column)).unwrap();
        let e = load(&p).unwrap_err();
        assert!(matches!(e, ModelError::Csv { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("fz.csv:{line}:")) && msg.contains(needle),
            "{content:?}: {msg}"
        );
    }
    std::fs::remove_file(&csv).unwrap();
    let msg = load(&p).unwrap_err().to_string();
    assert!(
        msg.contains("fz.csv") && msg.contains("relative to the model file"),
        "{msg}"
    );
    std::fs::remove_dir_all(&d).ok();
}

const TOKENS: [&str; 24] = [
    "nan",
    "inf",
    "-inf",
    "-1.0",
    "0",
    "1e308",
    "-0.0",
    "\"\"",
    "\"arm_L\"",
    "\"chassis\"",
    "[]",
    "[1, 2]",
    "{}",
    "true",
    "\"odd\"",
    "\"smooth\"",
    "\"error\"",
    "[[1,0,0],[0,1,0],[0,0,1]]",
    "\"_L\"",
    "mirror = true",
    "\n[[bodies]]\n",
    "\n[[force_elements]]\ntype = \"stop\"\n",
    "=",
    "\"x\"",
];

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut s: Vec<u8> = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        if s.is_empty() {
            break;
        }
        let p = rng.below(s.len());
        match rng.below(6) {
            0 => {
                s.remove(p);
            }
            1 => s.insert(p, b"[]{}=\",.#\n0123456789-_Le"[rng.below(24)]),
            2 => {
                // Replace a numeric literal or word with a token.
                let end = (p + 1 + rng.below(12)).min(s.len());
                let tok = TOKENS[rng.below(TOKENS.len())].as_bytes();
                s.splice(p..end, tok.iter().copied());
            }
            3 => {
                // Duplicate a line.
                let text = String::from_utf8_lossy(&s).into_owned();
                let lines: Vec<&str> = text.lines().collect();
                let i = rng.below(lines.len());
                let mut out: Vec<&str> = lines.clone();
                out.insert(rng.below(lines.len()), lines[i]);
                s = out.join("\n").into_bytes();
            }
            4 => {
                // Delete a line.
                let text = String::from_utf8_lossy(&s).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    lines.remove(rng.below(lines.len()));
                }
                s = lines.join("\n").into_bytes();
            }
            _ => s.truncate(p),
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

#[test]
fn mutated_inputs_never_panic() {
    let models_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut sources = vec![BASE.to_string()];
    for f in [
        "mass_spring_damper.toml",
        "bushing_pair.toml",
        "free_pair.toml",
    ] {
        sources.push(std::fs::read_to_string(models_dir.join(f)).unwrap());
    }
    let jsons: Vec<String> = sources
        .iter()
        .map(|s| serde_json::to_string_pretty(&toml::from_str::<toml::Value>(s).unwrap()).unwrap())
        .collect();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let (mut ok, mut err) = (0, 0);
    for i in 0..3000 {
        let src = &sources[i % sources.len()];
        let m = mutate(src, &mut rng);
        match from_toml_str(&m, "fuzz.toml") {
            Ok(model) => {
                ok += 1;
                // Loaded models are usable: helpers and evaluation do not panic either.
                for mk in &model.markers {
                    let _ = model.marker_axes_global(mk);
                    let _ = model.marker_position_body(mk);
                }
                for c in &model.curves {
                    let _ = c.eval(0.123);
                }
            }
            Err(e) => {
                err += 1;
                let msg = e.to_string();
                assert!(msg.contains("fuzz.toml"), "error without file name: {msg}");
            }
        }
        let j = mutate(&jsons[i % jsons.len()], &mut rng);
        if let Err(e) = from_json_str(&j, "fuzz.json") {
            assert!(e.to_string().contains("fuzz.json"));
        }
    }
    assert!(
        ok > 0 && err > 0,
        "mutations should produce both valid and invalid files ({ok}/{err})"
    );
}
