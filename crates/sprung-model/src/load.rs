//! Loading: syntax selection, parsing with line/column errors, CSV signals, and the
//! parse -> CSV -> mirror expansion -> validation -> orthonormalisation pipeline.
//!
//! Element lines for validation messages are located by a light lexical scan of the source
//! (`[[bodies]]` / `"bodies": [` sections and their `name = "..."` / `"name": "..."` keys).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::ModelError;
use crate::mirror;
use crate::rot;
use crate::types::{Axes, Interpolation, Model, Signal};
use crate::validate;

/// Source syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML.
    Toml,
    /// JSON.
    Json,
}

/// Load a model file, choosing the syntax by extension (`.toml` or `.json`). CSV signals are read
/// relative to the file's directory. The result is mirror-expanded, validated and has its frame
/// axes orthonormalised.
pub fn load(path: &Path) -> Result<Model, ModelError> {
    let label = path.display().to_string();
    let _guard = crate::subsystem::LoadingGuard::enter(path).map_err(|chain| {
        let mut p = crate::error::Problem::new(
            "subsystem",
            "",
            format!("the file includes itself through [[subsystems]] ({chain})"),
            "remove the [[subsystems]] entry that closes the cycle",
        );
        p.file = label.clone();
        ModelError::Invalid {
            file: label.clone(),
            problems: vec![p],
        }
    })?;
    let format = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    {
        Some(e) if e == "toml" => Format::Toml,
        Some(e) if e == "json" => Format::Json,
        _ => return Err(ModelError::UnsupportedExtension { path: label }),
    };
    let src = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
        path: label.clone(),
        source,
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    from_str_with_base(&src, format, &label, &base)
}

/// Parse TOML source. `file_label` is used in messages; CSV paths are resolved relative to its
/// parent directory.
pub fn from_toml_str(src: &str, file_label: &str) -> Result<Model, ModelError> {
    from_str_with_base(src, Format::Toml, file_label, &base_of(file_label))
}

/// Parse JSON source. `file_label` is used in messages; CSV paths are resolved relative to its
/// parent directory.
pub fn from_json_str(src: &str, file_label: &str) -> Result<Model, ModelError> {
    from_str_with_base(src, Format::Json, file_label, &base_of(file_label))
}

fn base_of(label: &str) -> PathBuf {
    Path::new(label)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Full pipeline with an explicit directory for CSV paths.
pub fn from_str_with_base(
    src: &str,
    format: Format,
    file_label: &str,
    base_dir: &Path,
) -> Result<Model, ModelError> {
    let raw = parse_raw(src, format, file_label)?;
    let smap = SourceMap::scan(src, format == Format::Toml);
    process(raw, &smap, file_label, base_dir)
}

/// Parse only (no CSV, expansion or validation): syntax and type errors with line/column.
///
/// Errors inside the n-th item of an array (`[[force_elements]]`, ...) are located at that
/// item and name it: the item is deserialised on its own to find which one fails (serde
/// reports errors inside internally tagged enums without a usable position). A TOML file that
/// contains JSON (or the reverse), and `NaN`/`Infinity` in JSON, get a message that says so.
pub fn parse_raw(src: &str, format: Format, file_label: &str) -> Result<Model, ModelError> {
    let mixup = |line: usize, column: usize, message: String| ModelError::Syntax {
        file: file_label.to_string(),
        line,
        column,
        message,
    };
    match format {
        Format::Toml => toml::from_str::<Model>(src).map_err(|e| {
            if looks_like_json(src) {
                return mixup(
                    1,
                    1,
                    "this file contains JSON but has the extension .toml; rename it to .json (the syntax is chosen by the extension)".into(),
                );
            }
            if let Some(item) = toml_failing_item(src, e.span().map(|s| s.start)) {
                return ModelError::Syntax {
                    file: file_label.to_string(),
                    line: item.line,
                    column: item.column,
                    message: item.message,
                };
            }
            let start = e.span().map(|s| s.start).unwrap_or(0);
            let start = unknown_field_key(e.message())
                .and_then(|k| find_key_forward_toml(src, &k, start))
                .unwrap_or(start);
            let (line, column) = line_col(src, start);
            let mut message = e.message().trim().to_string();
            if let Some(ctx) = toml_context(src, start) {
                message.push_str(&format!(" (in {ctx})"));
            }
            ModelError::Syntax {
                file: file_label.to_string(),
                line,
                column,
                message,
            }
        }),
        Format::Json => serde_json::from_str::<Model>(src).map_err(|e| {
            let mut message = strip_json_position(&e.to_string());
            let (mut line, mut column) = (e.line().max(1), e.column().max(1));
            if e.is_syntax() && !looks_like_json(src) && looks_like_toml(src) {
                return mixup(
                    line,
                    column,
                    "this file contains TOML but has the extension .json; rename it to .toml (the syntax is chosen by the extension)".into(),
                );
            }
            if e.is_syntax() {
                let off = offset_of(src, line, column);
                // serde_json points at or just after the offending token.
                let around = &src[off.saturating_sub(12).min(src.len())..(off + 12).min(src.len())];
                if ["NaN", "nan", "Infinity", "inf"].iter().any(|w| around.contains(w)) {
                    message = format!(
                        "{message}: JSON has no NaN or Infinity; give a finite number (and check how the file was generated)"
                    );
                }
            } else if let Some((kind, index, name)) = json_failing_item(src) {
                message = format!("{message} (in {kind}[{index}]{name})");
            }
            // Errors inside internally tagged enums are reported at the end of the object;
            // point at the offending key instead.
            if let Some(key) = unknown_field_key(&message) {
                let end = offset_of(src, line, column);
                if let Some(off) = find_key_backward_json(src, &key, end) {
                    (line, column) = line_col(src, off);
                }
            }
            ModelError::Syntax {
                file: file_label.to_string(),
                line,
                column,
                message,
            }
        }),
    }
}

/// `true` if the first significant character opens a JSON object.
fn looks_like_json(src: &str) -> bool {
    src.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

/// `true` if a line starts a TOML table header or a `key = value` pair.
fn looks_like_toml(src: &str) -> bool {
    src.lines().map(str::trim).any(|l| {
        (l.starts_with('[')
            && l.ends_with(']')
            && l[1..]
                .trim_start()
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '['))
            || l.split_once('=').is_some_and(|(k, _)| {
                let k = k.trim();
                !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            })
    })
}

/// A failing array item found by [`toml_failing_item`].
struct ItemError {
    line: usize,
    column: usize,
    message: String,
}

/// Array kinds of the model and the type of their items (deserialises one item).
type ItemCheck<V, E> = (&'static str, fn(V) -> Result<(), E>);

/// The array kinds with their item types, for either value type (TOML or JSON).
fn item_checks<V, E>() -> [ItemCheck<V, E>; 10]
where
    V: for<'de> serde::Deserializer<'de, Error = E>,
{
    use crate::types::*;
    fn ck<T: for<'de> serde::Deserialize<'de>, V, E>(v: V) -> Result<(), E>
    where
        V: for<'de> serde::Deserializer<'de, Error = E>,
    {
        T::deserialize(v).map(|_| ())
    }
    [
        ("frames", ck::<Frame, V, E>),
        ("curves", ck::<crate::types::Curve, V, E>),
        ("bodies", ck::<Body, V, E>),
        ("markers", ck::<Marker, V, E>),
        ("force_elements", ck::<ForceElement, V, E>),
        ("elements", ck::<OpenElement, V, E>),
        ("roads", ck::<Road, V, E>),
        ("inputs", ck::<Input, V, E>),
        ("outputs", ck::<Output, V, E>),
        ("subsystems", ck::<Subsystem, V, E>),
    ]
}

/// Finds the first array item (in file order of kinds) that fails to deserialise on its own;
/// locates the error at the offending key (unknown field) or the item's header, and names the
/// item. `None` if every item deserialises (the error is elsewhere) or the TOML is malformed.
fn toml_failing_item(src: &str, parser_offset: Option<usize>) -> Option<ItemError> {
    let doc: toml::Table = toml::from_str(src).ok()?;
    let mut best: Option<(usize, ItemError)> = None;
    for (kind, check) in item_checks::<toml::Value, toml::de::Error>() {
        let Some(toml::Value::Array(items)) = doc.get(kind) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Err(e) = check(item.clone()) else {
                continue;
            };
            let name = item
                .get("name")
                .and_then(toml::Value::as_str)
                .map(|n| format!(" '{n}'"))
                .unwrap_or_default();
            // The (i+1)-th `[[kind]]` header, or the array key for inline arrays.
            let start = nth_toml_header(src, kind, i).unwrap_or(0);
            let end = next_toml_header(src, start);
            let mut off = start;
            if let Some(k) = unknown_field_key(e.message()).or_else(|| invalid_key(e.message()))
                && let Some(o) = find_key_forward_toml(src, &k, start)
            {
                off = o;
            } else if let Some(p) = parser_offset
                && p > start
                && p < end
            {
                // The parser's own position is precise when it lies inside this item (plain
                // structs); for internally tagged items it points elsewhere and is ignored.
                off = p;
            } else if let Some(o) = offending_value_line(src, start, end, e.message()) {
                off = o;
            }
            let (line, column) = line_col(src, off);
            let message = format!("{} (in [[{kind}]] #{}{name})", e.message().trim(), i + 1);
            if best.as_ref().is_none_or(|(o, _)| start < *o) {
                best = Some((
                    start,
                    ItemError {
                        line,
                        column,
                        message,
                    },
                ));
            }
            break;
        }
    }
    best.map(|(_, e)| e)
}

/// The field named in a wrong-type message of the form "... for key `x`" (if any).
fn invalid_key(message: &str) -> Option<String> {
    let rest = message.split("key `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

/// For "invalid type: integer `5`, expected ..." (or `string "x"`) inside an item: the offset of
/// the only `key = value` line in `start..end` whose value is that text. `None` if there is no
/// such line or more than one.
fn offending_value_line(src: &str, start: usize, end: usize, message: &str) -> Option<usize> {
    let rest = message.strip_prefix("invalid type: ")?;
    let shown = if let Some(q) = rest.split('`').nth(1) {
        q.to_string()
    } else {
        let q = rest.split('"').nth(1)?;
        format!("\"{q}\"")
    };
    let mut found = None;
    let mut pos = start;
    for l in src.get(start..end)?.split_inclusive('\n') {
        if let Some((_, v)) = l.split_once('=') {
            let v = v.split('#').next().unwrap_or("").trim();
            if v == shown {
                if found.is_some() {
                    return None;
                }
                found = Some(pos + (l.len() - l.trim_start().len()));
            }
        }
        pos += l.len();
    }
    found
}

/// Byte offset of the first table header after the line at `from` (end of source if none).
fn next_toml_header(src: &str, from: usize) -> usize {
    let mut pos = from;
    let mut first = true;
    for l in src[from.min(src.len())..].split_inclusive('\n') {
        if !first && l.trim_start().starts_with('[') {
            return pos;
        }
        first = false;
        pos += l.len();
    }
    src.len()
}

/// Byte offset of the `n`-th (0-based) `[[kind]]` header in TOML source.
fn nth_toml_header(src: &str, kind: &str, n: usize) -> Option<usize> {
    let mut pos = 0;
    let mut seen = 0;
    for l in src.split_inclusive('\n') {
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("[[")
            && rest.split("]]").next().map(str::trim) == Some(kind)
        {
            if seen == n {
                return Some(pos + (l.len() - t.len()));
            }
            seen += 1;
        }
        pos += l.len();
    }
    None
}

/// The first array item of a JSON model that fails to deserialise on its own: (kind, index,
/// " 'name'").
fn json_failing_item(src: &str) -> Option<(&'static str, usize, String)> {
    let doc: serde_json::Value = serde_json::from_str(src).ok()?;
    for (kind, check) in item_checks::<serde_json::Value, serde_json::Error>() {
        let Some(items) = doc.get(kind).and_then(serde_json::Value::as_array) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if check(item.clone()).is_err() {
                let name = item
                    .get("name")
                    .and_then(serde_json::Value::as_str)
                    .map(|n| format!(" '{n}'"))
                    .unwrap_or_default();
                return Some((kind, i, name));
            }
        }
    }
    None
}

/// 1-based line where the item `name` of kind label `kind` (`"output"`, `"solver"`,
/// `"force element"`, `"curve"`, ...) is defined in model source `src` (the section start when
/// the name is not found). For errors found after loading, e.g. by the CLI's `check`.
pub fn locate_in_source(src: &str, format: Format, kind: &str, name: &str) -> Option<usize> {
    SourceMap::scan(src, format == Format::Toml).locate(kind, name, &HashMap::new())
}

/// A located [`ModelError::Invalid`] with one problem in the model file `path` (read again to
/// find the line of `kind` `name`). For checks outside this crate (solver catalogue, outputs).
pub fn problem_in_file(
    path: &Path,
    kind: &str,
    name: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> ModelError {
    let label = path.display().to_string();
    let format = if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        Format::Json
    } else {
        Format::Toml
    };
    let line = std::fs::read_to_string(path)
        .ok()
        .and_then(|src| locate_in_source(&src, format, kind, name));
    let mut p = crate::error::Problem::new(kind, name, message, hint);
    p.file = label.clone();
    p.line = line;
    ModelError::Invalid {
        file: label,
        problems: vec![p],
    }
}

/// Describe the TOML table enclosing byte offset `off`: `[[bodies]] 'wheel_L'` or `[solver]`.
fn toml_context(src: &str, off: usize) -> Option<String> {
    let off = off.min(src.len());
    let is_header = |l: &str| l.trim_start().starts_with('[');
    let mut start = 0;
    let mut header = None;
    let mut pos = 0;
    for l in src.split_inclusive('\n') {
        if pos > off {
            break;
        }
        if is_header(l) {
            header = Some(l.split('#').next().unwrap_or("").trim().to_string());
            start = pos;
        }
        pos += l.len();
    }
    let header = header?;
    let rest = &src[start..];
    let mut name = None;
    for l in rest.split_inclusive('\n').skip(1) {
        if is_header(l) {
            break;
        }
        let t = l.trim_start();
        if let Some(v) = t.strip_prefix("name") {
            let v = v.trim_start();
            if let Some(v) = v.strip_prefix('=') {
                let v = v.trim();
                if let Some(q) = v.strip_prefix('"') {
                    name = q.split('"').next().map(str::to_string);
                    break;
                }
            }
        }
    }
    Some(match name {
        Some(n) => format!("{header} '{n}'"),
        None => header,
    })
}

/// The key named in an "unknown field `key`" message.
fn unknown_field_key(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

/// Byte offset of a 1-based line/column (columns counted in bytes by serde_json).
fn offset_of(src: &str, line: usize, column: usize) -> usize {
    let mut off = 0;
    for (i, l) in src.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return (off + column.saturating_sub(1)).min(src.len());
        }
        off += l.len();
    }
    src.len()
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// First `key =` (bare or quoted) at or after `from` in TOML source.
fn find_key_forward_toml(src: &str, key: &str, from: usize) -> Option<usize> {
    let b = src.as_bytes();
    let mut i = from.min(src.len());
    while let Some(p) = src.get(i..).and_then(|r| r.find(key)) {
        let s = i + p;
        let e = s + key.len();
        let quoted =
            s > 0 && e < b.len() && (b[s - 1] == b'"' || b[s - 1] == b'\'') && b[e] == b[s - 1];
        let (ks, ke) = if quoted { (s - 1, e + 1) } else { (s, e) };
        let before_ok = ks == 0 || !is_key_char(b[ks - 1]) && b[ks - 1] != b'.';
        let after = src[ke..].trim_start_matches([' ', '\t']);
        if before_ok && (quoted || ke >= b.len() || !is_key_char(b[ke])) && after.starts_with('=') {
            return Some(ks);
        }
        i = e;
    }
    None
}

/// Last `"key":` before `end` in JSON source.
fn find_key_backward_json(src: &str, key: &str, end: usize) -> Option<usize> {
    let pat = format!("\"{key}\"");
    let mut hay = src.get(..end.min(src.len()))?;
    while let Some(p) = hay.rfind(&pat) {
        if src[p + pat.len()..].trim_start().starts_with(':') {
            return Some(p);
        }
        hay = &hay[..p];
    }
    None
}

fn strip_json_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// 1-based (line, column) of a byte offset.
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(src.len());
    while !src.is_char_boundary(off) {
        off -= 1;
    }
    let before = &src[..off];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

fn process(
    raw: Model,
    smap: &SourceMap,
    file_label: &str,
    base_dir: &Path,
) -> Result<Model, ModelError> {
    let mut raw = raw;
    // Built-in kinds written as `[[elements]]` become the force elements of their tables
    // before anything else sees the model (one representation, `builtin_kinds`).
    let builtin_problems = crate::builtin_kinds::normalise(&mut raw);
    resolve_csv(&mut raw, base_dir)?;
    let mut file_problems = resolve_files(&mut raw, base_dir);
    file_problems.extend(resolve_tables(&mut raw, base_dir));
    file_problems.extend(builtin_problems);
    let sub_names: Vec<String> = raw.subsystems.iter().map(|s| s.name.clone()).collect();
    let inclusion = crate::subsystem::include_all(&mut raw, base_dir);
    let exp = mirror::expand_with(&raw, &inclusion.paired);
    let mut problems = exp.problems;
    problems.extend(file_problems);
    problems.extend(inclusion.problems);
    if problems.iter().all(|p| p.kind != "subsystem") {
        problems.extend(validate::validate(&exp.model));
    }
    let locate = |p: &crate::Problem| match crate::subsystem::owner(&sub_names, &p.name) {
        Some(sub) => smap.locate("subsystem", sub, &exp.origins),
        None => smap.locate(&p.kind, &p.name, &exp.origins),
    };
    if !problems.is_empty() {
        for p in &mut problems {
            p.file = file_label.to_string();
            p.line = locate(p);
        }
        return Err(ModelError::Invalid {
            file: file_label.to_string(),
            problems,
        });
    }
    let mut model = exp.model;
    finalize(&mut model);
    crate::parameters::apply_declared(model, file_label).map_err(|mut problems| {
        for p in &mut problems {
            p.line = locate(p);
        }
        ModelError::Invalid {
            file: file_label.to_string(),
            problems,
        }
    })
}

/// Orthonormalise every frame and inline marker axes exactly (validation guarantees they are
/// within 1e-4 of orthonormal and right-handed).
pub(crate) fn finalize(model: &mut Model) {
    let fix = |a: &Axes| Axes::from_matrix(&rot::orthonormalise(&a.matrix()));
    for f in &mut model.frames {
        if let Some(a) = &f.axes {
            f.axes = Some(fix(a));
        }
    }
    for m in &mut model.markers {
        if let Some(a) = &m.global_axes {
            m.global_axes = Some(fix(a));
        }
    }
}

/// Replace every `csv` signal by a `table` read from the file (relative to `base_dir`).
pub fn resolve_csv(model: &mut Model, base_dir: &Path) -> Result<(), ModelError> {
    for input in &mut model.inputs {
        if let Signal::Csv {
            file,
            column,
            time_column,
        } = &input.signal
        {
            let path = base_dir.join(file);
            let (t, value) = read_csv_columns(&path, time_column, column)?;
            input.signal = Signal::Table {
                t,
                value,
                interpolation: Interpolation::Linear,
            };
        }
    }
    Ok(())
}

/// Whether an `[[elements]]` parameter names a file: `file` or a name ending in `_file`.
pub fn is_file_parameter(name: &str) -> bool {
    name == "file" || name.ends_with("_file")
}

/// Resolves file references against `base_dir` (the model file's folder), so that element
/// factories and road builders can open them wherever the program runs: text parameters of
/// `[[elements]]` named `file` or ending in `_file` ([`is_file_parameter`]) and the `file` of
/// `[[roads]]`. Absolute paths stay as they are. A file that does not exist is a problem naming
/// the element or road, the parameter and the path it looked for.
pub fn resolve_files(model: &mut Model, base_dir: &Path) -> Vec<crate::Problem> {
    let mut problems = Vec::new();
    let mut resolve = |kind: &str, name: &str, param: &str, value: &mut String| {
        let joined = base_dir.join(&*value);
        let path = std::path::absolute(&joined).unwrap_or(joined);
        if !path.is_file() {
            problems.push(crate::Problem::new(
                kind,
                name,
                format!("`{param}` = \"{value}\": no such file {}", path.display()),
                "give the path relative to the model file's folder (or an absolute path)",
            ));
        }
        *value = path.display().to_string();
    };
    for e in &mut model.elements {
        for (p, v) in &mut e.parameters {
            if let crate::types::ParamValue::Text(t) = v
                && is_file_parameter(p)
            {
                resolve("element", &e.name, p, t);
            }
        }
    }
    for r in &mut model.roads {
        if let Some(f) = &mut r.file {
            resolve("road", &r.name, "file", f);
        }
    }
    problems
}

/// Reads the kinematic table of every tabulated joint (`joint.table`, relative to `base_dir`,
/// the model file's folder) into [`crate::types::Joint::kin_table`], so that compiling does no
/// I/O. A missing or invalid table is a problem naming the body, the path and the table's own
/// problems. Tables already loaded (an included subsystem's) are kept.
pub fn resolve_tables(model: &mut Model, base_dir: &Path) -> Vec<crate::Problem> {
    let mut problems = Vec::new();
    for b in &mut model.bodies {
        let Some(j) = &mut b.joint else { continue };
        if j.kind != crate::types::JointKind::Tabulated || j.kin_table.is_some() {
            continue;
        }
        let Some(file) = &j.table else { continue };
        let joined = base_dir.join(file);
        let path = std::path::absolute(&joined).unwrap_or(joined);
        match crate::KinematicTable::load(&path) {
            Ok(t) => j.kin_table = Some(std::sync::Arc::new(t)),
            Err(e) => problems.push(crate::Problem::new(
                "body",
                &b.name,
                format!("`joint.table` = \"{file}\": {e}"),
                "give the table's path relative to the model file's folder, and fix the table's problems listed (or regenerate it: `sprung reduce --variant kinematic`)",
            )),
        }
        j.table = Some(path.display().to_string());
    }
    problems
}

fn split_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' | ';' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Read two numeric columns (by header name) from a CSV file with a header line. Blank lines
/// and lines starting with `#` are skipped; `,` or `;` separate fields. Times must be strictly
/// increasing.
pub fn read_csv_columns(
    path: &Path,
    time_column: &str,
    column: &str,
) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::Csv {
        file: file.clone(),
        line: 0,
        message: format!("cannot read the CSV input file ({e}); the path is relative to the model file's directory"),
    })?;
    let err = |line: usize, message: String| ModelError::Csv {
        file: file.clone(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_start_matches('\u{feff}')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (hline, header) = lines.next().ok_or_else(|| {
        err(
            1,
            "the CSV file is empty; it needs a header line and data".into(),
        )
    })?;
    let header = split_csv_line(header);
    let find = |name: &str| header.iter().position(|h| h == name);
    let ti = find(time_column).ok_or_else(|| {
        err(hline, format!("no column named '{time_column}' in the header {header:?}; set time_column to one of them"))
    })?;
    let vi = find(column).ok_or_else(|| {
        err(
            hline,
            format!(
                "no column named '{column}' in the header {header:?}; set column to one of them"
            ),
        )
    })?;
    let (mut t, mut v) = (Vec::new(), Vec::new());
    for (ln, l) in lines {
        let f = split_csv_line(l);
        let get = |i: usize, name: &str| -> Result<f64, ModelError> {
            let s = f
                .get(i)
                .ok_or_else(|| err(ln, format!("missing field for column '{name}'")))?;
            let x: f64 = s
                .parse()
                .map_err(|_| err(ln, format!("'{s}' in column '{name}' is not a number")))?;
            if !x.is_finite() {
                return Err(err(
                    ln,
                    format!("non-finite value '{s}' in column '{name}'"),
                ));
            }
            Ok(x)
        };
        let tt = get(ti, time_column)?;
        let vv = get(vi, column)?;
        if let Some(last) = t.last()
            && tt <= *last
        {
            return Err(err(
                ln,
                format!(
                    "time {tt} is not greater than the previous time {last}; times must be strictly increasing"
                ),
            ));
        }
        t.push(tt);
        v.push(vv);
    }
    if t.is_empty() {
        return Err(err(
            hline,
            "the CSV file has a header but no data lines".into(),
        ));
    }
    Ok((t, v))
}

/// Kinds scanned in the source (plural array names and singular sections).
const KINDS: [&str; 14] = [
    "subsystems",
    "bodies",
    "parameters",
    "markers",
    "frames",
    "curves",
    "force_elements",
    "elements",
    "roads",
    "inputs",
    "outputs",
    "model",
    "solver",
    "initial_state",
];

/// Map from problem kind label (see [`Problem::kind`]) to scanned kind.
fn kind_key(label: &str) -> &'static str {
    match label {
        "body" => "bodies",
        "marker" => "markers",
        "frame" => "frames",
        "curve" => "curves",
        "force element" | "bushing" | "spring" | "damper" | "stop" => "force_elements",
        "element" => "elements",
        "road" => "roads",
        "input" => "inputs",
        "output" => "outputs",
        "parameter" => "parameters",
        "subsystem" => "subsystems",
        "solver" => "solver",
        "initial_state" => "initial_state",
        _ => "model",
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
}

/// Element definition lines found by scanning the source text.
#[derive(Debug, Default)]
pub(crate) struct SourceMap {
    /// (kind, name) -> lines of each definition, in order.
    names: HashMap<(&'static str, String), Vec<usize>>,
    /// Section kind -> first line.
    sections: HashMap<&'static str, usize>,
}

impl SourceMap {
    pub(crate) fn scan(src: &str, toml: bool) -> Self {
        // Tokenise with byte offsets.
        let mut toks: Vec<(Tok, usize)> = Vec::new();
        let b = src.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'#' && toml {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            } else if c == b'"' || (c == b'\'' && toml) {
                let start = i;
                let q = c;
                i += 1;
                let mut s = Vec::new();
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' && q == b'"' && i + 1 < b.len() {
                        s.push(b[i + 1]);
                        i += 2;
                    } else {
                        s.push(b[i]);
                        i += 1;
                    }
                }
                i += 1;
                toks.push((Tok::Str(String::from_utf8_lossy(&s).into_owned()), start));
            } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'-')
                {
                    i += 1;
                }
                toks.push((Tok::Word(src[start..i].to_string()), start));
            } else {
                if matches!(c, b'[' | b']' | b'{' | b'}' | b'=' | b':' | b',') {
                    toks.push((Tok::Punct(c as char), i));
                }
                i += 1;
            }
        }
        let mut map = SourceMap::default();
        // Byte offsets of line starts: line lookup by binary search.
        let starts: Vec<usize> = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let line_of = |off: usize| starts.partition_point(|s| *s <= off).max(1);
        let mut current: Option<&'static str> = None;
        let key_text = |t: &Tok| match t {
            Tok::Word(w) | Tok::Str(w) => Some(w.clone()),
            _ => None,
        };
        let kind_of = |s: &str| KINDS.iter().copied().find(|k| *k == s);
        // A key opens a section only at the top level: in JSON inside the root object (depth
        // 1), in TOML before the first table header. Keys of the same names inside an item
        // (`markers = [...]`, `parameters = {...}` of an `[[elements]]` entry) do not.
        let mut depth = 0i32;
        let mut header_seen = false;
        for k in 0..toks.len() {
            let (t, off) = &toks[k];
            let top_level = if toml { !header_seen } else { depth == 1 };
            if !toml {
                match t {
                    Tok::Punct('[' | '{') => depth += 1,
                    Tok::Punct(']' | '}') => depth -= 1,
                    _ => {}
                }
            }
            // TOML headers [[kind]] and [kind].
            if toml && *t == Tok::Punct('[') && (k == 0 || line_of(toks[k - 1].1) != line_of(*off))
            {
                let (j, double) = if toks.get(k + 1).map(|x| &x.0) == Some(&Tok::Punct('[')) {
                    (k + 2, true)
                } else {
                    (k + 1, false)
                };
                if let Some(w) = toks.get(j).and_then(|x| key_text(&x.0)) {
                    header_seen = true;
                    let close = toks.get(j + 1).map(|x| &x.0) == Some(&Tok::Punct(']'));
                    if close {
                        current = kind_of(&w);
                        if let Some(kd) = current {
                            map.sections.entry(kd).or_insert(line_of(*off));
                        }
                        let _ = double;
                    } else {
                        current = None;
                    }
                }
                continue;
            }
            let Some(key) = key_text(t) else { continue };
            let sep = toks.get(k + 1).map(|x| &x.0);
            if sep != Some(&Tok::Punct('=')) && sep != Some(&Tok::Punct(':')) {
                continue;
            }
            let next = toks.get(k + 2).map(|x| &x.0);
            if let Some(kd) = kind_of(&key)
                && top_level
                && (next == Some(&Tok::Punct('[')) || next == Some(&Tok::Punct('{')))
            {
                current = Some(kd);
                map.sections.entry(kd).or_insert(line_of(*off));
                continue;
            }
            if key == "name"
                && let (Some(kd), Some(Tok::Str(v))) = (current, next)
            {
                map.names
                    .entry((kd, v.clone()))
                    .or_default()
                    .push(line_of(*off));
            }
        }
        map
    }

    /// Line of the element `name` of kind label `kind` (falls back to the original of a mirrored
    /// copy, then to the section start). For duplicates, the second definition's line.
    pub(crate) fn locate(
        &self,
        kind: &str,
        name: &str,
        origins: &HashMap<(&'static str, String), String>,
    ) -> Option<usize> {
        let kd = kind_key(kind);
        // The line of `n` defined in section `section`.
        let lookup = |section: &'static str, n: &str| {
            self.names
                .get(&(section, n.to_string()))
                .map(|v| if v.len() > 1 { v[1] } else { v[0] })
        };
        let original = origins.get(&(kd, name.to_string()));
        let in_section = |section: &'static str| {
            lookup(section, name).or_else(|| original.and_then(|o| lookup(section, o)))
        };
        // A force element of a built-in kind may be written as an `[[elements]]` entry.
        in_section(kd)
            .or_else(|| {
                (kd == "force_elements")
                    .then(|| in_section("elements"))
                    .flatten()
            })
            .or_else(|| self.sections.get(kd).copied())
    }
}
