//! Hostile-input corpus (issue 17 item 10): every real model of `models/` is mutated line by
//! line — truncated before every table header, every `key = value` line dropped, every value
//! replaced by one of the wrong type, every number replaced by NaN/±inf and by absurd
//! magnitudes — and loaded. Requirements checked for every case:
//! * no panic (a panic fails the test with the case in the message);
//! * every error is located: the message starts with `file:line:` (syntax/type errors) or
//!   lists problems that all carry a line, and a mutation inside a table is reported at a line
//!   of that table (from its header up to the next header) — for validation errors at least
//!   one problem is;
//! * no silent success where the input is certainly wrong: a wrong-type value, a non-finite
//!   number, and a dropped key that the schema lists as required must be rejected.
//!
//! The required keys come from the JSON Schema of the format (`required` lists), not from the
//! loader.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sprung_model::{Format, ModelError, from_str_with_base};

fn models() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 3, "models/ should hold the reference models");
    v
}

/// Every key that some definition of the schema lists as required.
fn required_keys() -> BTreeSet<String> {
    let schema: serde_json::Value = serde_json::from_str(&sprung_model::json_schema()).unwrap();
    let mut out = BTreeSet::new();
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Array(req)) = m.get("required") {
                    for r in req {
                        if let Some(s) = r.as_str() {
                            out.insert(s.to_string());
                        }
                    }
                }
                for x in m.values() {
                    walk(x, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&schema, &mut out);
    out
}

/// Keys required in every definition that has them: dropping such a key must fail. Keys that
/// are required in one definition but optional in another (e.g. `stiffness` of a bushing vs a
/// spring) are only checked for "no panic, located".
fn always_required() -> BTreeSet<&'static str> {
    ["name", "marker_i", "marker_j", "type", "mass", "x", "y"].into()
}

/// (start line, end line) of the table around 0-based line `i` (header to before next header).
fn table_range(lines: &[&str], i: usize) -> (usize, usize) {
    let is_header = |l: &str| l.trim_start().starts_with('[');
    let start = (0..=i).rev().find(|&k| is_header(lines[k])).unwrap_or(0);
    let end = (i + 1..lines.len())
        .find(|&k| is_header(lines[k]))
        .unwrap_or(lines.len());
    (start + 1, end) // 1-based inclusive start, exclusive end (1-based last line = end)
}

struct Outcome {
    ok: bool,
    located_in_range: bool,
    message: String,
}

fn load(src: &str, label: &str, base: &Path, range: Option<(usize, usize)>) -> Outcome {
    let r = std::panic::catch_unwind(|| from_str_with_base(src, Format::Toml, label, base));
    let r = match r {
        Ok(r) => r,
        Err(_) => panic!("PANIC while loading mutated {label}"),
    };
    match r {
        Ok(_) => Outcome {
            ok: true,
            located_in_range: true,
            message: String::new(),
        },
        Err(e) => {
            let message = e.to_string();
            let in_range = |l: usize| range.is_none_or(|(a, b)| l >= a && l <= b);
            let located_in_range = match &e {
                ModelError::Syntax { file, line, .. } => {
                    assert_eq!(file, label);
                    assert!(*line >= 1, "{message}");
                    in_range(*line)
                }
                ModelError::Invalid { problems, .. } => {
                    assert!(!problems.is_empty());
                    for p in problems {
                        assert!(p.line.is_some(), "unlocated problem: {message}");
                        assert!(!p.name.is_empty() || p.kind == "model", "{message}");
                    }
                    problems.iter().any(|p| p.line.is_some_and(in_range))
                }
                ModelError::Csv { .. } => true,
                other => panic!("unexpected error kind for {label}: {other}"),
            };
            Outcome {
                ok: false,
                located_in_range,
                message,
            }
        }
    }
}

/// `key = value` lines that are complete TOML on their own: (line index, key, value text).
fn key_lines<'a>(lines: &[&'a str]) -> Vec<(usize, &'a str, &'a str)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with('#') || t.starts_with('[') {
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        if toml::from_str::<toml::Table>(t).is_err() {
            continue;
        }
        out.push((i, k.trim(), v.split('#').next().unwrap_or("").trim()));
    }
    out
}

fn with_line(lines: &[&str], i: usize, new: Option<String>) -> String {
    let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    match new {
        Some(n) => v[i] = n,
        None => {
            v.remove(i);
        }
    }
    v.join("\n")
}

#[test]
fn truncation_at_every_table_never_panics_and_errors_are_located() {
    let mut cases = 0;
    for path in models() {
        let src = std::fs::read_to_string(&path).unwrap();
        let base = path.parent().unwrap();
        let label = path.display().to_string();
        let lines: Vec<&str> = src.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if !l.trim_start().starts_with('[') {
                continue;
            }
            // Truncate before the header, and in the middle of the table's first key line.
            let cut = lines[..i].join("\n");
            let o = load(&cut, &label, base, None);
            cases += 1;
            assert!(
                o.located_in_range,
                "{label} cut at line {}: {}",
                i + 1,
                o.message
            );
            if let Some(next) = lines.get(i + 1) {
                let half = format!("{}\n{}", lines[..=i].join("\n"), &next[..next.len() / 2]);
                let o = load(&half, &label, base, None);
                cases += 1;
                assert!(o.located_in_range, "{}", o.message);
            }
        }
    }
    assert!(cases > 50, "{cases} cases");
}

#[test]
fn dropped_keys_wrong_types_and_non_finite_numbers_are_rejected_where_they_are() {
    let required = required_keys();
    let always = always_required();
    for k in &always {
        assert!(required.contains(*k), "schema does not require '{k}'");
    }
    let mut cases = 0;
    let mut wrong_type_at_line = 0;
    for path in models() {
        let src = std::fs::read_to_string(&path).unwrap();
        let base = path.parent().unwrap();
        let label = path.display().to_string();
        let lines: Vec<&str> = src.lines().collect();
        for (i, key, value) in key_lines(&lines) {
            let range = Some(table_range(&lines, i));
            let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
            // 1. Dropped key.
            let o = load(&with_line(&lines, i, None), &label, base, range);
            cases += 1;
            if always.contains(key) {
                assert!(!o.ok, "{label}:{}: dropping '{key}' was accepted", i + 1);
            }
            if !o.ok && always.contains(key) && key != "name" {
                // (A dropped name is also reported where the name is referenced, and a dropped
                // optional key changes a default that other items may depend on, e.g. `ground`.)
                assert!(
                    o.located_in_range,
                    "{label}:{}: dropping '{key}' reported elsewhere: {}",
                    i + 1,
                    o.message
                );
            }
            // 2. Wrong type: strings become numbers, everything else a string.
            let wrong = if value.starts_with('"') {
                "12".to_string()
            } else {
                "\"text\"".to_string()
            };
            let o = load(
                &with_line(&lines, i, Some(format!("{indent}{key} = {wrong}"))),
                &label,
                base,
                range,
            );
            cases += 1;
            assert!(!o.ok, "{label}:{}: '{key} = {wrong}' was accepted", i + 1);
            assert!(
                o.located_in_range,
                "{label}:{}: '{key} = {wrong}' reported elsewhere: {}",
                i + 1,
                o.message
            );
            // Type errors point at the offending line itself.
            if o.message.contains("invalid type") {
                assert!(
                    o.message.starts_with(&format!("{label}:{}:", i + 1)),
                    "{label}:{}: '{key} = {wrong}' located at another line: {}",
                    i + 1,
                    o.message
                );
                wrong_type_at_line += 1;
            }
            // 3. Non-finite and absurd numbers in place of every number.
            let is_number = value.parse::<f64>().is_ok();
            if is_number {
                for bad in ["nan", "inf", "-inf"] {
                    let o = load(
                        &with_line(&lines, i, Some(format!("{indent}{key} = {bad}"))),
                        &label,
                        base,
                        range,
                    );
                    cases += 1;
                    assert!(!o.ok, "{label}:{}: '{key} = {bad}' was accepted", i + 1);
                    assert!(o.located_in_range, "{}", o.message);
                }
                for absurd in ["1e300", "-1e300", "0", "1e-300"] {
                    let o = load(
                        &with_line(&lines, i, Some(format!("{indent}{key} = {absurd}"))),
                        &label,
                        base,
                        range,
                    );
                    cases += 1;
                    if !o.ok {
                        assert!(o.located_in_range, "{}", o.message);
                    }
                }
            }
        }
    }
    assert!(cases > 500, "{cases} cases");
    assert!(wrong_type_at_line > 100, "{wrong_type_at_line} type errors");
}

#[test]
fn json_models_with_nan_or_toml_content_say_what_is_wrong() {
    let e = sprung_model::from_json_str(
        r#"{"model": {"name": "x", "gravity": [0, 0, NaN]}}"#,
        "m.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("m.json:1:"), "{e}");
    assert!(e.contains("JSON has no NaN or Infinity"), "{e}");
    let e = sprung_model::from_json_str("[model]\nname = \"x\"\n", "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("contains TOML but has the extension .json"),
        "{e}"
    );
    let e = sprung_model::from_toml_str("{\"model\": {\"name\": \"x\"}}", "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("contains JSON but has the extension .toml"),
        "{e}"
    );
}
