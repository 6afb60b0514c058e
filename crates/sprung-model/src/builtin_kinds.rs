//! The built-in force-element kinds — `bushing`, `spring`, `damper`, `stop` (document 000,
//! section 2) — written in the one `[[elements]]` syntax of all kinds:
//!
//! ```toml
//! [[elements]]
//! type = "bushing"
//! name = "lca_front_bushing_L"
//! markers = ["lca_front_bushing_L.I", "lca_front_bushing_L.J"]   # marker_i, marker_j
//! parameters = { stiffness = [8e5, 8e5, 8e5], rot_stiffness = [300.0, 300.0, 300.0] }
//! mirror = true
//! ```
//!
//! The parameters are the keys of the kind's `[[force_elements]]` table (`docs/model-format.md`)
//! with the same meaning, units and defaults; only the per-axis curve tables of a bushing
//! (`stiffness_curves = { x = "C" }`) are flattened to one text parameter per axis
//! (`stiffness_curve_x = "C"`), because an `[[elements]]` parameter is a number, a list of
//! numbers or a string. The two markers are `marker_i` and `marker_j` in that order. The
//! `[[force_elements]]` tables are the shorthand of this form.
//!
//! **One representation.** [`normalise`] turns every such entry into exactly the
//! [`ForceElement`] its `[[force_elements]]` table gives (appended to
//! [`Model::force_elements`] in `[[elements]]` order), and the loader calls it on every file
//! before subsystems are merged, mirrors expanded, the model validated and parameters applied.
//! Everything downstream — mirroring, validation, `[[parameters]]` paths
//! (`force_elements.<name>.<field>`), subsystem prefixes, output channels, the compiler's
//! per-kind SIMD arrays and the macro-joint reduction of `sprung-reduce` — therefore sees one
//! representation of a built-in element, whichever syntax wrote it: a model compiles to the same
//! elements bit for bit. `sprung_mbs::compile_with` and `sprung::Model::from_description`
//! normalise a description built in code the same way.

use std::collections::BTreeMap;

use crate::error::Problem;
use crate::types::{
    Axis, AxisCurves, Bushing, Damper, ForceElement, Model, OpenElement, ParamValue, Spring, Stop,
    StopKind,
};

/// The names of the built-in kinds, in the order `sprung elements` lists them.
pub const KINDS: [&str; 4] = ["bushing", "spring", "damper", "stop"];

/// Whether `kind` names a built-in kind.
pub fn is_builtin(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// The value a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A number.
    Number,
    /// A list of three numbers: local x, y, z (marker-J axes).
    Vector3,
    /// A string: a curve name or one of a set of words.
    Text,
}

impl Shape {
    fn describe(self) -> &'static str {
        match self {
            Shape::Number => "a number",
            Shape::Vector3 => "a list of 3 numbers [x, y, z] (marker-J axes)",
            Shape::Text => "a string",
        }
    }
}

/// A parameter of a built-in kind in the `[[elements]]` form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Name (the key of the `[[force_elements]]` table, or `<curves field>_<axis>`).
    pub name: &'static str,
    /// The value it takes.
    pub shape: Shape,
    /// Required (the table's key has no default): what to add when it is missing.
    pub required: Option<&'static str>,
}

const fn p(name: &'static str, shape: Shape) -> ParamSpec {
    ParamSpec {
        name,
        shape,
        required: None,
    }
}

const fn required(name: &'static str, shape: Shape, example: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        shape,
        required: Some(example),
    }
}

use Shape::{Number, Text, Vector3};

/// The per-axis curve fields of a bushing and their flattened parameter names.
const BUSHING_CURVES: [(&str, [&str; 3]); 4] = [
    (
        "stiffness_curves",
        [
            "stiffness_curve_x",
            "stiffness_curve_y",
            "stiffness_curve_z",
        ],
    ),
    (
        "rot_stiffness_curves",
        [
            "rot_stiffness_curve_x",
            "rot_stiffness_curve_y",
            "rot_stiffness_curve_z",
        ],
    ),
    (
        "damping_curves",
        ["damping_curve_x", "damping_curve_y", "damping_curve_z"],
    ),
    (
        "rot_damping_curves",
        [
            "rot_damping_curve_x",
            "rot_damping_curve_y",
            "rot_damping_curve_z",
        ],
    ),
];

const BUSHING: &[ParamSpec] = &[
    required(
        "stiffness",
        Vector3,
        "stiffness = [kx, ky, kz] (N/m, translational rates in marker-J axes)",
    ),
    required(
        "rot_stiffness",
        Vector3,
        "rot_stiffness = [kx, ky, kz] (Nm/rad, rotational rates in marker-J axes)",
    ),
    p("damping", Vector3),
    p("rot_damping", Vector3),
    p("preload", Vector3),
    p("rot_preload", Vector3),
    p("spin_axis", Text),
    p("stiffness_curve_x", Text),
    p("stiffness_curve_y", Text),
    p("stiffness_curve_z", Text),
    p("rot_stiffness_curve_x", Text),
    p("rot_stiffness_curve_y", Text),
    p("rot_stiffness_curve_z", Text),
    p("damping_curve_x", Text),
    p("damping_curve_y", Text),
    p("damping_curve_z", Text),
    p("rot_damping_curve_x", Text),
    p("rot_damping_curve_y", Text),
    p("rot_damping_curve_z", Text),
];

const SPRING: &[ParamSpec] = &[
    p("stiffness", Number),
    p("curve", Text),
    p("free_length", Number),
    p("preload", Number),
    p("damping", Number),
];

const DAMPER: &[ParamSpec] = &[
    p("damping", Number),
    p("damping_rebound", Number),
    p("damping_compression", Number),
    p("curve", Text),
];

const STOP: &[ParamSpec] = &[
    required(
        "kind",
        Text,
        "kind = \"bump\" (pushes apart) or kind = \"rebound\" (pulls together)",
    ),
    required(
        "clearance",
        Number,
        "clearance = ... (m, travel from the design length to engagement)",
    ),
    p("curve", Text),
    p("stiffness", Number),
    p("design_length", Number),
    p("damping", Number),
];

/// The parameters of a built-in kind in the `[[elements]]` form (`None` for other kinds).
pub fn parameters(kind: &str) -> Option<&'static [ParamSpec]> {
    match kind {
        "bushing" => Some(BUSHING),
        "spring" => Some(SPRING),
        "damper" => Some(DAMPER),
        "stop" => Some(STOP),
        _ => None,
    }
}

/// Reads the parameters of one entry, collecting every problem.
struct Reader<'a> {
    e: &'a OpenElement,
    problems: Vec<Problem>,
}

impl<'a> Reader<'a> {
    fn problem(&mut self, message: String, hint: String) {
        self.problems
            .push(Problem::new("element", &self.e.name, message, hint));
    }

    fn spec(&self, name: &str) -> ParamSpec {
        parameters(&self.e.kind)
            .and_then(|ps| ps.iter().find(|p| p.name == name).copied())
            .unwrap_or(p("?", Number))
    }

    fn missing(&mut self, name: &str) {
        if let Some(example) = self.spec(name).required {
            self.problem(
                format!("parameter `{name}` of type \"{}\" is missing", self.e.kind),
                format!("add {example} to `parameters`"),
            );
        }
    }

    fn wrong(&mut self, name: &str, got: &ParamValue) {
        let spec = self.spec(name);
        let got = match got {
            ParamValue::Number(x) => format!("the number {x}"),
            ParamValue::List(v) => format!("a list of {} numbers", v.len()),
            ParamValue::Text(t) => format!("the string \"{t}\""),
        };
        self.problem(
            format!(
                "parameter `{name}` must be {}, not {got}",
                spec.shape.describe()
            ),
            format!("write {name} as {}", spec.shape.describe()),
        );
    }

    fn number(&mut self, name: &str) -> Option<f64> {
        match self.e.parameters.get(name) {
            None => {
                self.missing(name);
                None
            }
            Some(ParamValue::Number(x)) => Some(*x),
            Some(v) => {
                self.wrong(name, v);
                None
            }
        }
    }

    fn vector3(&mut self, name: &str) -> Option<[f64; 3]> {
        match self.e.parameters.get(name) {
            None => {
                self.missing(name);
                None
            }
            Some(ParamValue::List(v)) if v.len() == 3 => Some([v[0], v[1], v[2]]),
            Some(v) => {
                self.wrong(name, v);
                None
            }
        }
    }

    fn text(&mut self, name: &str) -> Option<String> {
        match self.e.parameters.get(name) {
            None => {
                self.missing(name);
                None
            }
            Some(ParamValue::Text(t)) => Some(t.clone()),
            Some(v) => {
                self.wrong(name, v);
                None
            }
        }
    }

    /// A text parameter that must be one of `words`, mapped to its value.
    fn word<T: Copy>(&mut self, name: &str, words: &[(&str, T)]) -> Option<T> {
        let t = self.text(name)?;
        let found = words.iter().find(|(w, _)| *w == t).map(|(_, v)| *v);
        if found.is_none() {
            let list: Vec<String> = words.iter().map(|(w, _)| format!("\"{w}\"")).collect();
            self.problem(
                format!(
                    "parameter `{name}` = \"{t}\" is not one of {}",
                    list.join(", ")
                ),
                format!("write {name} = {}", list.join(" or ")),
            );
        }
        found
    }

    fn curves(&mut self, names: [&str; 3]) -> AxisCurves {
        let [x, y, z] = names.map(|n| self.text(n));
        AxisCurves { x, y, z }
    }
}

/// The [`ForceElement`] that the `[[elements]]` entry `e` of a built-in kind stands for (the
/// one its `[[force_elements]]` table gives), or every problem of the entry (unknown or
/// misspelt parameters with a suggestion, values of the wrong shape, missing required
/// parameters, the number of markers, input slots), located at the entry. `None` when `e` is not
/// of a built-in kind. Values are checked by validation afterwards, as for the table.
pub fn to_force_element(e: &OpenElement) -> Option<Result<ForceElement, Vec<Problem>>> {
    let specs = parameters(&e.kind)?;
    let mut r = Reader {
        e,
        problems: Vec::new(),
    };
    let valid: Vec<String> = specs.iter().map(|p| p.name.to_string()).collect();
    for name in e.parameters.keys() {
        if !specs.iter().any(|p| p.name == name) {
            r.problem(
                format!("unknown parameter `{name}` for type \"{}\"", e.kind),
                format!(
                    "{} (`sprung elements` describes them)",
                    crate::parameters::suggest(name, &valid)
                ),
            );
        }
    }
    if e.markers.len() != 2 {
        r.problem(
            format!(
                "type \"{}\" takes 2 markers (marker_i, marker_j), {} given",
                e.kind,
                e.markers.len()
            ),
            "markers = [\"<marker_i: action, on body_i>\", \"<marker_j: reference, on body_j>\"]"
                .to_string(),
        );
    }
    if !e.inputs.is_empty() {
        r.problem(
            format!("type \"{}\" reads no inputs", e.kind),
            "remove `inputs` (forces and torques from outside are [[inputs]] of kind \"force\" or \"torque\")".to_string(),
        );
    }
    let name = e.name.clone();
    let (marker_i, marker_j) = match e.markers.as_slice() {
        [i, j] => (i.clone(), j.clone()),
        _ => (String::new(), String::new()),
    };
    let mirror = e.mirror;
    let has = |n: &str| e.parameters.contains_key(n);
    let element = match e.kind.as_str() {
        "bushing" => {
            let mut v3 = |n: &str| {
                if has(n) || r.spec(n).required.is_some() {
                    r.vector3(n).unwrap_or_default()
                } else {
                    [0.0; 3]
                }
            };
            let stiffness = v3("stiffness");
            let rot_stiffness = v3("rot_stiffness");
            let damping = v3("damping");
            let rot_damping = v3("rot_damping");
            let preload = v3("preload");
            let rot_preload = v3("rot_preload");
            let [sc, rsc, dc, rdc] = BUSHING_CURVES.map(|(_, names)| r.curves(names));
            let spin_axis = if has("spin_axis") {
                r.word(
                    "spin_axis",
                    &[("x", Axis::X), ("y", Axis::Y), ("z", Axis::Z)],
                )
            } else {
                None
            };
            ForceElement::Bushing(Bushing {
                name,
                marker_i,
                marker_j,
                stiffness,
                rot_stiffness,
                damping,
                rot_damping,
                stiffness_curves: sc,
                rot_stiffness_curves: rsc,
                damping_curves: dc,
                rot_damping_curves: rdc,
                preload,
                rot_preload,
                spin_axis,
                mirror,
            })
        }
        "spring" => ForceElement::Spring(Spring {
            name,
            marker_i,
            marker_j,
            stiffness: r.number("stiffness"),
            curve: r.text("curve"),
            free_length: r.number("free_length"),
            preload: r.number("preload").unwrap_or(0.0),
            damping: r.number("damping").unwrap_or(0.0),
            mirror,
        }),
        "damper" => ForceElement::Damper(Damper {
            name,
            marker_i,
            marker_j,
            damping: r.number("damping"),
            damping_rebound: r.number("damping_rebound"),
            damping_compression: r.number("damping_compression"),
            curve: r.text("curve"),
            mirror,
        }),
        _ => {
            let kind = r.word(
                "kind",
                &[("bump", StopKind::Bump), ("rebound", StopKind::Rebound)],
            );
            ForceElement::Stop(Stop {
                name,
                marker_i,
                marker_j,
                kind: kind.unwrap_or(StopKind::Bump),
                clearance: r.number("clearance").unwrap_or(0.0),
                curve: r.text("curve"),
                stiffness: r.number("stiffness"),
                design_length: r.number("design_length"),
                damping: r.number("damping").unwrap_or(0.0),
                mirror,
            })
        }
    };
    Some(if r.problems.is_empty() {
        Ok(element)
    } else {
        Err(r.problems)
    })
}

/// The `[[elements]]` entry that writes `fe` in the generic form: the inverse of
/// [`to_force_element`] (`to_force_element(&to_open_element(fe)) == fe`). Parameters equal to
/// the table's defaults are left out, as `sprung`'s serialisation of the table leaves them out.
pub fn to_open_element(fe: &ForceElement) -> OpenElement {
    let mut params = BTreeMap::new();
    let mut num = |n: &str, x: Option<f64>| {
        if let Some(x) = x {
            params.insert(n.to_string(), ParamValue::Number(x));
        }
    };
    let nonzero = |x: f64| (x != 0.0).then_some(x);
    match fe {
        ForceElement::Bushing(_) => {}
        ForceElement::Spring(s) => {
            num("stiffness", s.stiffness);
            num("free_length", s.free_length);
            num("preload", nonzero(s.preload));
            num("damping", nonzero(s.damping));
        }
        ForceElement::Damper(d) => {
            num("damping", d.damping);
            num("damping_rebound", d.damping_rebound);
            num("damping_compression", d.damping_compression);
        }
        ForceElement::Stop(s) => {
            num("clearance", Some(s.clearance));
            num("stiffness", s.stiffness);
            num("design_length", s.design_length);
            num("damping", nonzero(s.damping));
        }
    }
    let mut text = |n: &str, t: Option<&str>| {
        if let Some(t) = t {
            params.insert(n.to_string(), ParamValue::Text(t.to_string()));
        }
    };
    match fe {
        ForceElement::Bushing(b) => {
            let curves = [
                &b.stiffness_curves,
                &b.rot_stiffness_curves,
                &b.damping_curves,
                &b.rot_damping_curves,
            ];
            for (c, (_, names)) in curves.iter().zip(BUSHING_CURVES) {
                for (axis, n) in c.as_array().into_iter().zip(names) {
                    text(n, axis);
                }
            }
            text("spin_axis", b.spin_axis.map(|a| ["x", "y", "z"][a.index()]));
        }
        ForceElement::Spring(s) => text("curve", s.curve.as_deref()),
        ForceElement::Damper(d) => text("curve", d.curve.as_deref()),
        ForceElement::Stop(s) => {
            text("curve", s.curve.as_deref());
            text(
                "kind",
                Some(match s.kind {
                    StopKind::Bump => "bump",
                    StopKind::Rebound => "rebound",
                }),
            );
        }
    }
    if let ForceElement::Bushing(b) = fe {
        let mut v3 = |n: &str, v: [f64; 3], always: bool| {
            if always || v != [0.0; 3] {
                params.insert(n.to_string(), ParamValue::List(v.to_vec()));
            }
        };
        v3("stiffness", b.stiffness, true);
        v3("rot_stiffness", b.rot_stiffness, true);
        v3("damping", b.damping, false);
        v3("rot_damping", b.rot_damping, false);
        v3("preload", b.preload, false);
        v3("rot_preload", b.rot_preload, false);
    }
    OpenElement {
        name: fe.name().to_string(),
        kind: fe.type_name().to_string(),
        markers: vec![fe.marker_i().to_string(), fe.marker_j().to_string()],
        parameters: params,
        inputs: BTreeMap::new(),
        mirror: fe.mirror(),
    }
}

/// Moves every `[[elements]]` entry of a built-in kind into [`Model::force_elements`] (appended
/// in `[[elements]]` order) as the [`ForceElement`] it stands for ([`to_force_element`]); returns
/// the problems of the entries that could not be converted, which stay in
/// [`Model::elements`] so that references to them do not add further problems.
pub fn normalise(model: &mut Model) -> Vec<Problem> {
    if !model.elements.iter().any(|e| is_builtin(&e.kind)) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    let mut open = Vec::with_capacity(model.elements.len());
    for e in std::mem::take(&mut model.elements) {
        match to_force_element(&e) {
            None => open.push(e),
            Some(Ok(fe)) => model.force_elements.push(fe),
            Some(Err(p)) => {
                problems.extend(p);
                open.push(e);
            }
        }
    }
    model.elements = open;
    problems
}

impl Model {
    /// This description with its `[[elements]]` entries of built-in kinds turned into
    /// [`Model::force_elements`] ([`normalise`]), for descriptions built in code (the loader
    /// does this for every file). Errors are the problems of the entries, unlocated.
    pub fn with_builtin_elements_normalised(mut self) -> Result<Model, Vec<Problem>> {
        let problems = normalise(&mut self);
        if problems.is_empty() {
            Ok(self)
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: &str, markers: &[&str], params: &[(&str, ParamValue)]) -> OpenElement {
        OpenElement {
            name: "e".into(),
            kind: kind.into(),
            markers: markers.iter().map(|m| m.to_string()).collect(),
            parameters: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            inputs: BTreeMap::new(),
            mirror: false,
        }
    }

    #[test]
    fn every_parameter_of_every_kind_round_trips_through_the_table() {
        use ParamValue::{List, Number as N, Text as T};
        let t = |s: &str| T(s.into());
        let bushing: Vec<(&str, ParamValue)> = BUSHING
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let v = match p.shape {
                    Vector3 => List(vec![k as f64 + 1.0, 2.0, 3.0]),
                    Number => N(k as f64 + 1.0),
                    Text if p.name == "spin_axis" => t("y"),
                    Text => t(&format!("C{k}")),
                };
                (p.name, v)
            })
            .collect();
        let cases = [
            ("bushing", bushing),
            (
                "spring",
                vec![
                    ("stiffness", N(1.0)),
                    ("curve", t("C")),
                    ("free_length", N(0.3)),
                    ("preload", N(2.0)),
                    ("damping", N(3.0)),
                ],
            ),
            (
                "damper",
                vec![
                    ("damping", N(1.0)),
                    ("damping_rebound", N(2.0)),
                    ("damping_compression", N(3.0)),
                    ("curve", t("C")),
                ],
            ),
            (
                "stop",
                vec![
                    ("kind", t("rebound")),
                    ("clearance", N(0.01)),
                    ("curve", t("C")),
                    ("stiffness", N(1e5)),
                    ("design_length", N(0.2)),
                    ("damping", N(10.0)),
                ],
            ),
        ];
        for (kind, params) in cases {
            // Every parameter of the kind is given, so every field of the table is set from
            // one and the inverse gives the entry back exactly.
            assert_eq!(params.len(), parameters(kind).unwrap().len(), "{kind}");
            let e = entry(kind, &["a", "b"], &params);
            let fe = to_force_element(&e).unwrap().unwrap();
            assert_eq!(fe.type_name(), kind);
            assert_eq!((fe.marker_i(), fe.marker_j()), ("a", "b"));
            assert_eq!(to_open_element(&fe), e, "{kind}");
        }
    }

    #[test]
    fn problems_name_the_parameter_and_say_what_to_write() {
        let e = entry(
            "bushing",
            &["a", "b", "c"],
            &[
                ("stifness", ParamValue::List(vec![1.0, 2.0, 3.0])),
                ("rot_stiffness", ParamValue::Number(3.0)),
                ("spin_axis", ParamValue::Text("w".into())),
            ],
        );
        let p = to_force_element(&e).unwrap().unwrap_err();
        let text: Vec<String> = p
            .iter()
            .map(|p| format!("{}; fix: {}", p.message, p.hint))
            .collect();
        let all = text.join("\n");
        assert!(p.iter().all(|p| p.kind == "element" && p.name == "e"));
        assert!(
            all.contains(
                "unknown parameter `stifness` for type \"bushing\"; fix: did you mean 'stiffness'?"
            ),
            "{all}"
        );
        assert!(
            all.contains("takes 2 markers (marker_i, marker_j), 3 given"),
            "{all}"
        );
        assert!(all.contains("parameter `stiffness` of type \"bushing\" is missing; fix: add stiffness = [kx, ky, kz]"), "{all}");
        assert!(all.contains("parameter `rot_stiffness` must be a list of 3 numbers [x, y, z] (marker-J axes), not the number 3"), "{all}");
        assert!(
            all.contains("parameter `spin_axis` = \"w\" is not one of \"x\", \"y\", \"z\""),
            "{all}"
        );
        assert_eq!(p.len(), 5, "{all}");
        // Other kinds are not built-in ones.
        assert!(to_force_element(&entry("maxwell", &["a", "b"], &[])).is_none());
    }
}
