//! Model parameters: named values declared in `[[parameters]]` and paths that address any
//! numeric value of a model, so that a run, a sweep, an FMU or a Python script changes a model
//! without editing its file (`docs/parameters.md`).
//!
//! ## Paths
//! A path addresses numbers of the *expanded* model (mirrored copies exist under their `_R`
//! names), by the serde names of the model format:
//!
//! ```text
//! path    = section { "." field | "[" index "]" }
//! section = ("model" | "solver")
//!         | list "." item
//! list    = "bodies" | "markers" | "frames" | "curves" | "force_elements" | "elements"
//!         | "inputs" | "outputs"
//! item    = an item name | a pattern with "*" (any characters) | "\"" name "\""
//! ```
//!
//! e.g. `bodies.wheel_L.mass`, `force_elements.damper_L.damping`, `force_elements.*_bushing_*.stiffness`,
//! `bodies.carrier_L.inertia.principal[2]`, `inputs.Fx_L.signal.after`, `curves.damper_curve.y`,
//! `elements.arb.parameters.stiffness`, `solver.t_end`, `markers."tl_front_bushing_L.I".global_position[2]`.
//! An unquoted item name may contain dots (the longest name that fits is taken); quotes are
//! needed only for a pattern of such names. A path that ends at a list of numbers addresses
//! all of them; a pattern addresses every matching item that has the field (at least one must).
//!
//! ## Semantics
//! A declared parameter acts on the values *as written in the file*: `mode = "set"` (default)
//! replaces each target by the value, `mode = "scale"` multiplies it (so a scale of 1 leaves
//! the model bitwise unchanged). Parameters are applied in declaration order. A path given to
//! [`Model::with_parameters`] instead of a declared name sets that file value (declared scale
//! factors then act on the new value). The resulting model is validated like a loaded file; a
//! problem caused by a parameter names it, its value and the path.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{ModelError, Problem};
use crate::types::{Model, Parameter, ParameterMode};
use crate::validate;

/// The lists of named items a path can address, with the kind label of validation problems.
const LISTS: [(&str, &str); 8] = [
    ("bodies", "body"),
    ("markers", "marker"),
    ("frames", "frame"),
    ("curves", "curve"),
    ("force_elements", "force element"),
    ("elements", "element"),
    ("inputs", "input"),
    ("outputs", "output"),
];

/// The single tables a path can address.
const TABLES: [&str; 2] = ["model", "solver"];

/// The model as written in its file (expanded and validated, parameters not applied) and the
/// file label used in messages: what [`Model::with_parameters`] starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterBase {
    /// File label (path as given) or `"<model>"`.
    pub file: String,
    /// The model before the parameters act on it (its own `parameter_base` is `None`).
    pub model: Model,
}

/// One numeric value a path resolved to.
#[derive(Debug, Clone, PartialEq)]
struct Leaf {
    /// JSON pointer into the serialised model.
    pointer: String,
    /// Kind label and name of the item it belongs to (for messages), if any.
    item: Option<(&'static str, String)>,
}

/// Which parameter (name or path, value) changed a value of which item.
type Source = (Option<(&'static str, String)>, String, f64);

/// Why a path does not resolve: what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq)]
struct PathError {
    message: String,
    hint: String,
}

fn perr(message: impl Into<String>, hint: impl Into<String>) -> PathError {
    PathError {
        message: message.into(),
        hint: hint.into(),
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `*` matches any run of characters (also used for element names on the command line, e.g.
/// `sprung kc --remove-element 'tire_*'`).
pub fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Levenshtein distance (for "did you mean").
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// "did you mean 'x'; valid: a, b, c" for `name` among `valid` (the list shortened to 12).
pub fn suggest(name: &str, valid: &[String]) -> String {
    // The closest by edit distance, if near enough; else the shortest name containing the
    // given one (an abbreviation such as `bushing` for `bushing_scale`).
    let near = valid
        .iter()
        .map(|v| (distance(name, v), v))
        .filter(|(d, _)| *d <= (name.chars().count() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v);
    let containing = || {
        valid
            .iter()
            .filter(|v| !name.is_empty() && v.contains(name))
            .min_by_key(|v| v.len())
    };
    let mut s = String::new();
    if let Some(v) = near.or_else(containing) {
        s.push_str(&format!("did you mean '{v}'? "));
    }
    if valid.is_empty() {
        s.push_str("there are none");
    } else {
        let shown: Vec<&str> = valid.iter().take(12).map(String::as_str).collect();
        s.push_str(&format!("valid: {}", shown.join(", ")));
        if valid.len() > 12 {
            s.push_str(&format!(", … ({} in all)", valid.len()));
        }
    }
    s
}

/// True if `v` holds at least one number.
fn has_number(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::Array(a) => a.iter().any(has_number),
        Value::Object(o) => o.values().any(has_number),
        _ => false,
    }
}

/// Fields of an object that hold numbers, sorted.
fn numeric_fields(v: &Value) -> Vec<String> {
    match v {
        Value::Object(o) => o
            .iter()
            .filter(|(_, x)| has_number(x))
            .map(|(k, _)| k.clone())
            .collect(),
        _ => Vec::new(),
    }
}

/// Every number below `v` (a number or nested lists of numbers) as pointers.
fn leaves_below(
    v: &Value,
    pointer: &str,
    what: &str,
    out: &mut Vec<String>,
) -> Result<(), PathError> {
    match v {
        Value::Number(_) => out.push(pointer.to_string()),
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                leaves_below(x, &format!("{pointer}/{i}"), what, out)?;
            }
        }
        Value::Object(_) => {
            return Err(perr(
                format!("{what} is a table, not a number"),
                format!(
                    "add one of its numeric fields: {}",
                    numeric_fields(v).join(", ")
                ),
            ));
        }
        other => {
            return Err(perr(
                format!("{what} is {}, not a number", kind_of(other)),
                "address a numeric field (docs/parameters.md)",
            ));
        }
    }
    Ok(())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "not set",
        Value::Bool(_) => "a boolean",
        Value::String(_) => "a text",
        Value::Array(_) => "an empty list",
        Value::Number(_) => "a number",
        Value::Object(_) => "a table",
    }
}

/// Follows `rest` (`.field` / `[index]` steps) from `v` and collects the numbers there.
fn walk(v: &Value, rest: &str, pointer: String, what: String) -> Result<Vec<String>, PathError> {
    let (mut v, mut rest, mut pointer, mut what) = (v, rest, pointer, what);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or_else(|| {
                perr(
                    format!("'[' without ']' after {what}"),
                    "write an index as [0]",
                )
            })?;
            let idx: usize = r[..close].trim().parse().map_err(|_| {
                perr(
                    format!("'{}' is not an index (in {what})", &r[..close]),
                    "write an index as a whole number from 0, e.g. [2]",
                )
            })?;
            let Value::Array(a) = v else {
                return Err(perr(
                    format!("{what} is {}, it has no index [{idx}]", kind_of(v)),
                    "remove the index",
                ));
            };
            let x = a.get(idx).ok_or_else(|| {
                perr(
                    format!(
                        "index [{idx}] is out of range: {what} has {} entries",
                        a.len()
                    ),
                    format!("use an index from 0 to {}", a.len().saturating_sub(1)),
                )
            })?;
            pointer = format!("{pointer}/{idx}");
            what = format!("{what}[{idx}]");
            v = x;
            rest = &r[close + 1..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            let Value::Object(o) = v else {
                return Err(perr(
                    format!("{what} is {}, it has no field '{key}'", kind_of(v)),
                    "shorten the path",
                ));
            };
            let x = o.get(key).ok_or_else(|| {
                perr(
                    format!("{what} has no field '{key}' (or it is not set in the model)"),
                    format!(
                        "numeric fields of {what}: {}",
                        suggest(key, &numeric_fields(v))
                    ),
                )
            })?;
            pointer = format!("{pointer}/{}", escape(key));
            what = format!("{what}.{key}");
            v = x;
            rest = &r[end..];
        } else {
            return Err(perr(
                format!("unexpected '{rest}' after {what}"),
                "separate fields with '.' and write indices as [0]",
            ));
        }
    }
    let mut out = Vec::new();
    leaves_below(v, &pointer, &what, &mut out)?;
    Ok(out)
}

/// Resolves `path` on the serialised model `tree` to the numbers it addresses.
fn resolve(tree: &Value, path: &str) -> Result<Vec<Leaf>, PathError> {
    let path = path.trim();
    let head_end = path.find(['.', '[']).unwrap_or(path.len());
    let head = &path[..head_end];
    let rest = &path[head_end..];
    let sections = || {
        LISTS
            .iter()
            .map(|(l, _)| l.to_string())
            .chain(TABLES.iter().map(|t| t.to_string()))
            .collect::<Vec<_>>()
    };
    if TABLES.contains(&head) {
        let v = tree.get(head).unwrap_or(&Value::Null);
        let ptrs = walk(v, rest, format!("/{head}"), head.to_string())?;
        return Ok(ptrs
            .into_iter()
            .map(|pointer| Leaf {
                pointer,
                item: Some((
                    if head == "solver" { "solver" } else { "model" },
                    head.into(),
                )),
            })
            .collect());
    }
    let Some(&(list, label)) = LISTS.iter().find(|(l, _)| *l == head) else {
        return Err(perr(
            format!("'{head}' is neither a declared parameter nor the start of a path"),
            format!(
                "a path starts with a section ({}), e.g. force_elements.<name>.<field> (docs/parameters.md)",
                sections().join(", ")
            ),
        ));
    };
    let empty = Vec::new();
    let items = tree.get(list).and_then(Value::as_array).unwrap_or(&empty);
    let names: Vec<String> = items
        .iter()
        .filter_map(|i| i.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    let Some(after) = rest.strip_prefix('.') else {
        return Err(perr(
            format!("'{path}' names no {label}"),
            format!("write {list}.<name>.<field>; {}", suggest("", &names)),
        ));
    };
    // The item name: quoted, a pattern, or the longest name that fits.
    let (pattern, remaining, is_glob) = if let Some(q) = after.strip_prefix('"') {
        let close = q.find('"').ok_or_else(|| {
            perr(
                format!("unterminated quote in '{path}'"),
                "close the quoted name with \"",
            )
        })?;
        (&q[..close], &q[close + 1..], q[..close].contains('*'))
    } else {
        let seg_end = after.find(['.', '[']).unwrap_or(after.len());
        if after[..seg_end].contains('*') {
            (&after[..seg_end], &after[seg_end..], true)
        } else {
            let fit = names
                .iter()
                .filter(|n| {
                    after.starts_with(n.as_str())
                        && (after.len() == n.len()
                            || matches!(after.as_bytes()[n.len()], b'.' | b'['))
                })
                .max_by_key(|n| n.len());
            match fit {
                Some(n) => (&after[..n.len()], &after[n.len()..], false),
                None => {
                    let name = &after[..seg_end];
                    // An `[[elements]]` entry of a built-in kind is a force element once loaded.
                    let is_force_element = tree
                        .get("force_elements")
                        .and_then(Value::as_array)
                        .is_some_and(|fe| {
                            fe.iter()
                                .any(|i| i.get("name").and_then(Value::as_str) == Some(name))
                        });
                    if list == "elements" && is_force_element {
                        return Err(perr(
                            format!(
                                "'{name}' is an element of a built-in kind (bushing, spring, damper, stop): its values are those of a force element, whichever syntax writes it"
                            ),
                            format!(
                                "address it as force_elements.{name}.<field> (the parameter names, e.g. force_elements.{name}.stiffness)"
                            ),
                        ));
                    }
                    return Err(perr(
                        format!("there is no {label} named '{name}'"),
                        format!("{} names: {}", label, suggest(name, &names)),
                    ));
                }
            }
        }
    };
    let mut out = Vec::new();
    let mut matched = 0;
    let mut first_err = None;
    for (i, item) in items.iter().enumerate() {
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        if !glob(pattern, name) {
            continue;
        }
        matched += 1;
        match walk(
            item,
            remaining,
            format!("/{list}/{i}"),
            format!("{list}.{name}"),
        ) {
            Ok(ptrs) => out.extend(ptrs.into_iter().map(|pointer| Leaf {
                pointer,
                item: Some((label, name.to_string())),
            })),
            Err(e) if is_glob => {
                first_err.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    if out.is_empty() {
        if matched == 0 {
            return Err(perr(
                format!("no {label} name matches '{pattern}'"),
                format!("{} names: {}", label, suggest(pattern, &names)),
            ));
        }
        return Err(first_err
            .unwrap_or_else(|| perr(format!("'{path}' addresses nothing"), "check the path")));
    }
    Ok(out)
}

fn tree_of(m: &Model) -> Value {
    // Serialising the plain data types cannot fail (string keys, finite numbers).
    let mut tree = serde_json::to_value(m).unwrap_or(Value::Null);
    // A body's initial velocity and angular velocity default to zero and are left out of the
    // file form when zero; they are addressable all the same (e.g. one `speed` parameter that
    // sets `bodies.*.velocity[0]` of every body of a vehicle).
    if let Some(Value::Array(bodies)) = tree.get_mut("bodies") {
        for b in bodies.iter_mut().filter_map(Value::as_object_mut) {
            for key in ["velocity", "angular_velocity"] {
                b.entry(key)
                    .or_insert_with(|| Value::from(vec![0.0, 0.0, 0.0]));
            }
        }
    }
    tree
}

/// Sets the number at `pointer` to `f(old)`, keeping whole-number fields whole.
fn update(tree: &mut Value, pointer: &str, f: impl Fn(f64) -> f64) -> Result<(), String> {
    let Some(slot) = tree.pointer_mut(pointer) else {
        return Err(format!("internal: pointer {pointer} vanished"));
    };
    let Value::Number(n) = slot else {
        return Err(format!("internal: {pointer} is not a number"));
    };
    let integral = n.is_u64() || n.is_i64();
    let new = f(n.as_f64().unwrap_or(f64::NAN));
    if !new.is_finite() {
        return Err(format!("gives the non-finite value {new}"));
    }
    *slot = if integral {
        if new.fract() != 0.0 || new < 0.0 || new > u32::MAX as f64 {
            return Err(format!(
                "gives {new}, but this field takes a whole number >= 0"
            ));
        }
        Value::from(new as u64)
    } else {
        Value::from(new)
    };
    Ok(())
}

/// The parameter problems of the declarations in `m` (names, values, targets).
fn check_declarations(m: &Model, tree: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut seen = BTreeMap::new();
    let mut setters: BTreeMap<String, Vec<(String, ParameterMode)>> = BTreeMap::new();
    for p in &m.parameters {
        // Names of included subsystems' parameters are `SUB.name` (crate::subsystem): dotted
        // segments of the same characters, the first not a list or table of a path.
        let bad_name = p.name.split('.').any(|seg| {
            seg.is_empty()
                || !seg
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        }) || p.name.split_once('.').is_some_and(|(first, _)| {
            LISTS.iter().any(|(l, _)| *l == first) || TABLES.contains(&first)
        });
        if bad_name {
            problems.push(Problem::new(
                "parameter",
                &p.name,
                "the name must be non-empty and consist of letters, digits, '_' and '-'",
                "rename it (a name with '.' would read as a path)",
            ));
        }
        if seen.insert(p.name.clone(), ()).is_some() {
            problems.push(Problem::new(
                "parameter",
                &p.name,
                "the name is declared twice",
                "give each [[parameters]] entry its own name",
            ));
        }
        if !p.value.is_finite() {
            problems.push(Problem::new(
                "parameter",
                &p.name,
                format!("value = {} is not finite", num(p.value)),
                "give a finite number",
            ));
        }
        if p.targets.is_empty() {
            problems.push(Problem::new(
                "parameter",
                &p.name,
                "targets is empty",
                "list the model values it acts on, e.g. targets = [\"force_elements.damper_L.damping\"]",
            ));
        }
        for t in &p.targets {
            match resolve(tree, t) {
                Ok(leaves) => {
                    for l in leaves {
                        setters
                            .entry(l.pointer)
                            .or_default()
                            .push((p.name.clone(), p.mode));
                    }
                }
                Err(e) => problems.push(Problem::new(
                    "parameter",
                    &p.name,
                    format!("target '{t}': {}", e.message),
                    e.hint,
                )),
            }
        }
    }
    for (ptr, who) in setters {
        if who.len() > 1 && who.iter().any(|(_, m)| *m == ParameterMode::Set) {
            let names: Vec<&str> = who.iter().map(|(n, _)| n.as_str()).collect();
            problems.push(Problem::new(
                "parameter",
                &who[who.len() - 1].0,
                format!(
                    "the value at {ptr} is targeted by several parameters ({}) and one of them sets it",
                    names.join(", ")
                ),
                "let one parameter set a value, or use mode = \"scale\" for all of them",
            ));
        }
    }
    problems
}

/// Applies the declared parameters `decl` (with their current values) and the path values
/// `path_sets` to `base`; validates the result. Problems carry `file` but no line.
fn build(
    base: &ParameterBase,
    decl: &[Parameter],
    path_sets: &[(String, f64)],
) -> Result<Model, Vec<Problem>> {
    let mut tree = tree_of(&base.model);
    let mut problems = Vec::new();
    // Which parameter changed which item (for annotating validation problems).
    let mut sources: Vec<Source> = Vec::new();
    let mut touched_axes = false;
    let mut new_base = base.model.clone();
    if !path_sets.is_empty() {
        for (path, v) in path_sets {
            match resolve(&tree, path) {
                Ok(leaves) => {
                    for l in &leaves {
                        touched_axes |= l.pointer.contains("axes/");
                        if let Err(msg) = update(&mut tree, &l.pointer, |_| *v) {
                            problems.push(Problem::new(
                                "parameter",
                                path,
                                msg,
                                "give another value",
                            ));
                        }
                        sources.push((l.item.clone(), path.clone(), *v));
                    }
                }
                Err(e) => problems.push(Problem::new("parameter", path, e.message, e.hint)),
            }
        }
        if problems.is_empty() {
            match serde_json::from_value::<Model>(tree.clone()) {
                Ok(mut m) => {
                    keep_tables(&base.model, &mut m);
                    new_base = m
                }
                Err(e) => problems.push(Problem::new(
                    "parameter",
                    &path_sets[0].0,
                    format!("the changed model does not read back: {e}"),
                    "check the values' types",
                )),
            }
        }
    }
    for p in decl {
        if !p.value.is_finite() {
            problems.push(Problem::new(
                "parameter",
                &p.name,
                format!("value = {} is not finite", num(p.value)),
                "give a finite number",
            ));
            continue;
        }
        for t in &p.targets {
            match resolve(&tree, t) {
                Ok(leaves) => {
                    for l in &leaves {
                        touched_axes |= l.pointer.contains("axes/");
                        let r = match p.mode {
                            ParameterMode::Set => update(&mut tree, &l.pointer, |_| p.value),
                            ParameterMode::Scale => update(&mut tree, &l.pointer, |x| x * p.value),
                        };
                        if let Err(msg) = r {
                            problems.push(Problem::new(
                                "parameter",
                                &p.name,
                                format!(
                                    "value {} on target '{t}' ({}) {msg}",
                                    num(p.value),
                                    l.pointer
                                ),
                                "give another value",
                            ));
                        }
                        sources.push((l.item.clone(), p.name.clone(), p.value));
                    }
                }
                Err(e) => problems.push(Problem::new(
                    "parameter",
                    &p.name,
                    format!("target '{t}': {}", e.message),
                    e.hint,
                )),
            }
        }
    }
    if !problems.is_empty() {
        return Err(with_file(problems, &base.file));
    }
    let mut m: Model = match serde_json::from_value(tree) {
        Ok(m) => m,
        Err(e) => {
            return Err(with_file(
                vec![Problem::new(
                    "parameter",
                    decl.first().map(|p| p.name.as_str()).unwrap_or(""),
                    format!("the changed model does not read back: {e}"),
                    "check the values' types",
                )],
                &base.file,
            ));
        }
    };
    keep_tables(&base.model, &mut m);
    if touched_axes {
        crate::load::finalize(&mut m);
    }
    let mut problems = validate::validate(&m);
    if !problems.is_empty() {
        // A problem of an item a parameter changed is reported as the parameter's (located
        // at its declaration when loading a file): that is where the value comes from.
        for p in &mut problems {
            let label = p.kind.as_str();
            let mut mine: Vec<(&str, f64)> = Vec::new();
            for (item, name, v) in &sources {
                let hit = item.as_ref().is_some_and(|(k, n)| {
                    n == &p.name
                        && (*k == label
                            || (*k == "force element"
                                && matches!(label, "bushing" | "spring" | "damper" | "stop")))
                });
                if hit && !mine.iter().any(|(m, _)| m == name) {
                    mine.push((name, *v));
                }
            }
            let list = |v: &[(&str, f64)]| {
                v.iter()
                    .map(|(n, x)| format!("'{n}' = {}", num(*x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if let Some(&(name, v)) = mine.first() {
                let also = if mine.len() > 1 {
                    format!(" (together with {})", list(&mine[1..]))
                } else {
                    String::new()
                };
                p.message = format!(
                    "value {} gives {} '{}': {}{also}",
                    num(v),
                    p.kind,
                    p.name,
                    p.message
                );
                p.kind = "parameter".into();
                p.name = name.to_string();
            } else {
                let mut all: Vec<(&str, f64)> = Vec::new();
                for (_, name, v) in &sources {
                    if !all.iter().any(|(m, _)| m == name) {
                        all.push((name, *v));
                    }
                }
                p.message = format!("{} (with parameters {})", p.message, list(&all));
            }
        }
        return Err(with_file(problems, &base.file));
    }
    let mut base_model = new_base;
    base_model.parameter_base = None;
    m.parameters = decl.to_vec();
    m.parameter_base = Some(Arc::new(ParameterBase {
        file: base.file.clone(),
        model: base_model,
    }));
    Ok(m)
}

/// A number for messages: plain for ordinary magnitudes, with an exponent for very large or
/// small ones.
fn num(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn with_file(mut problems: Vec<Problem>, file: &str) -> Vec<Problem> {
    for p in &mut problems {
        p.file = file.to_string();
    }
    problems
}

/// Checks the declarations of a freshly loaded (expanded, validated) model and applies their
/// values. A model without `[[parameters]]` is returned unchanged.
pub(crate) fn apply_declared(model: Model, file: &str) -> Result<Model, Vec<Problem>> {
    if model.parameters.is_empty() {
        return Ok(model);
    }
    let problems = check_declarations(&model, &tree_of(&model));
    if !problems.is_empty() {
        return Err(with_file(problems, file));
    }
    let decl = model.parameters.clone();
    let base = ParameterBase {
        file: file.to_string(),
        model,
    };
    build(&base, &decl, &[])
}

/// The loaded kinematic tables of tabulated joints (`Joint::kin_table`, not part of the file
/// format, so lost in the JSON round trip of [`build`]) copied back from `from` by body name.
fn keep_tables(from: &Model, to: &mut Model) {
    for b in &mut to.bodies {
        let Some(j) = &mut b.joint else { continue };
        if j.kin_table.is_some() {
            continue;
        }
        j.kin_table = from
            .bodies
            .iter()
            .find(|x| x.name == b.name)
            .and_then(|x| x.joint.as_ref())
            .filter(|x| x.table == j.table)
            .and_then(|x| x.kin_table.clone());
    }
}

/// A path is anything that is not a declared parameter name and contains `.` or `[`.
fn is_path(name: &str) -> bool {
    name.contains(['.', '['])
}

impl Model {
    /// A copy of this model with parameter values changed: each name is a declared parameter
    /// (its new value) or a path (the file value there is set; module docs). The result is
    /// validated; problems name the parameter, its value and the path, and an unknown name
    /// lists the declared ones (with the closest).
    pub fn with_parameters(&self, values: &[(&str, f64)]) -> Result<Model, ModelError> {
        let base = match &self.parameter_base {
            Some(b) => (**b).clone(),
            None => ParameterBase {
                file: "<model>".into(),
                model: self.clone(),
            },
        };
        let mut decl = self.parameters.clone();
        let mut path_sets = Vec::new();
        let mut problems = Vec::new();
        for (name, v) in values {
            if !v.is_finite() {
                problems.push(Problem::new(
                    "parameter",
                    name,
                    format!("value {v} is not finite"),
                    "give a finite number",
                ));
            } else if let Some(p) = decl.iter_mut().find(|p| p.name == *name) {
                p.value = *v;
            } else if is_path(name) {
                path_sets.push((name.to_string(), *v));
            } else {
                problems.push(self.unknown(name));
            }
        }
        if !problems.is_empty() {
            return Err(ModelError::Invalid {
                file: base.file.clone(),
                problems: with_file(problems, &base.file),
            });
        }
        build(&base, &decl, &path_sets).map_err(|problems| ModelError::Invalid {
            file: base.file.clone(),
            problems,
        })
    }

    fn unknown(&self, name: &str) -> Problem {
        let names: Vec<String> = self.parameters.iter().map(|p| p.name.clone()).collect();
        Problem::new(
            "parameter",
            name,
            "is not a declared parameter",
            format!(
                "declared parameters: {}; or give a path such as force_elements.<name>.<field> (docs/parameters.md)",
                suggest(name, &names)
            ),
        )
    }

    /// Checks that `name` is a declared parameter or a path that resolves in this model (the
    /// value is not checked).
    pub fn check_parameter_name(&self, name: &str) -> Result<(), ModelError> {
        let file = self
            .parameter_base
            .as_ref()
            .map(|b| b.file.clone())
            .unwrap_or_else(|| "<model>".into());
        let problem = if self.parameters.iter().any(|p| p.name == name) {
            return Ok(());
        } else if !is_path(name) {
            self.unknown(name)
        } else {
            match resolve(&tree_of(self), name) {
                Ok(_) => return Ok(()),
                Err(e) => Problem::new("parameter", name, e.message, e.hint),
            }
        };
        Err(ModelError::Invalid {
            file: file.clone(),
            problems: with_file(vec![problem], &file),
        })
    }

    /// The current value of a declared parameter, or of the number a path addresses in this
    /// (parameterised) model. A path to several numbers is an error that says how many.
    pub fn parameter_value(&self, name: &str) -> Result<f64, ModelError> {
        let file = self
            .parameter_base
            .as_ref()
            .map(|b| b.file.clone())
            .unwrap_or_else(|| "<model>".into());
        let fail = |p: Problem| ModelError::Invalid {
            file: file.clone(),
            problems: with_file(vec![p], &file),
        };
        if let Some(p) = self.parameters.iter().find(|p| p.name == name) {
            return Ok(p.value);
        }
        if !is_path(name) {
            return Err(fail(self.unknown(name)));
        }
        let tree = tree_of(self);
        let leaves = resolve(&tree, name)
            .map_err(|e| fail(Problem::new("parameter", name, e.message, e.hint)))?;
        if leaves.len() != 1 {
            return Err(fail(Problem::new(
                "parameter",
                name,
                format!("the path addresses {} numbers", leaves.len()),
                "address one number, e.g. with an index [0] or an item name instead of a pattern",
            )));
        }
        Ok(tree
            .pointer(&leaves[0].pointer)
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN))
    }

    /// Every number a path can address, as (path, value) in model order (for listings such as
    /// `sprung check --paths`).
    pub fn numeric_paths(&self) -> Vec<(String, f64)> {
        fn rec(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
            match v {
                Value::Number(n) => out.push((path, n.as_f64().unwrap_or(f64::NAN))),
                Value::Array(a) => {
                    for (i, x) in a.iter().enumerate() {
                        rec(x, format!("{path}[{i}]"), out);
                    }
                }
                Value::Object(o) => {
                    for (k, x) in o {
                        rec(x, format!("{path}.{k}"), out);
                    }
                }
                _ => {}
            }
        }
        let tree = tree_of(self);
        let mut out = Vec::new();
        for t in TABLES {
            if let Some(v) = tree.get(t) {
                rec(v, t.to_string(), &mut out);
            }
        }
        for (list, _) in LISTS {
            for item in tree
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                let shown = if name.contains(['.', '*', '[']) {
                    format!("\"{name}\"")
                } else {
                    name.to_string()
                };
                rec(item, format!("{list}.{shown}"), &mut out);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches() {
        assert!(glob("*_bushing_*", "uca_front_bushing_L"));
        assert!(glob("damper_*", "damper_R"));
        assert!(!glob("damper_*", "spring_L"));
        assert!(glob("a*b*c", "aXXbYc"));
        assert!(!glob("a*b*c", "acb"));
        assert!(glob("exact", "exact"));
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("damper_scale", "damper_scale"), 0);
        assert_eq!(distance("dampr_scale", "damper_scale"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
