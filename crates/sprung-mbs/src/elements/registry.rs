//! The element registry: kind name → description and factory (module docs of
//! [`crate::elements`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use sprung_model::{ParamValue, Road};

use crate::element_law::{ElementLaw, MarkerState, OutputInfo};

/// A parameter of an element kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamInfo {
    /// Name in the model file.
    pub name: &'static str,
    /// SI unit.
    pub unit: &'static str,
    /// What it is.
    pub description: &'static str,
    /// Default value, `None` = required.
    pub default: Option<f64>,
}

impl ParamInfo {
    /// A numeric parameter with a default (`Some`) or a required one (`None`).
    pub const fn new(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
        default: Option<f64>,
    ) -> Self {
        Self {
            name,
            unit,
            description,
            default,
        }
    }

    /// A required numeric parameter.
    pub const fn required(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
    ) -> Self {
        Self::new(name, unit, description, None)
    }

    /// An optional text parameter (a curve or road name, a mode): its default is NaN, which the
    /// kind reads as "not given".
    pub const fn text(name: &'static str, unit: &'static str, description: &'static str) -> Self {
        Self::new(name, unit, description, Some(f64::NAN))
    }
}

/// Description of an element kind (what `sprung elements` prints).
#[derive(Debug, Clone, Copy)]
pub struct KindInfo {
    /// Kind name (`type = "..."`).
    pub name: &'static str,
    /// One-line description with the source of the law.
    pub description: &'static str,
    /// Roles of the markers in order.
    pub markers: &'static [&'static str],
    /// Parameters.
    pub parameters: &'static [ParamInfo],
    /// Names of the internal states.
    pub states: &'static [&'static str],
    /// Outputs for output channels.
    pub outputs: &'static [OutputInfo],
    /// Input slots (scalars the element reads, mapped by its `inputs` table to model inputs).
    pub inputs: &'static [OutputInfo],
}

/// Builds a law from the parameters and the design kinematics of its markers.
pub type Factory = fn(&ElementParams, &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String>;

/// Parameters of one `[[elements]]` entry with checked access: every name the kind reads is
/// recorded, so [`ElementParams::finish`] can reject unknown names with a suggestion.
#[derive(Debug)]
pub struct ElementParams<'a> {
    info: &'a KindInfo,
    values: &'a BTreeMap<String, ParamValue>,
    roads: &'a [Road],
}

impl<'a> ElementParams<'a> {
    /// Wraps the parameters of an entry of kind `info` (of a model without roads).
    pub fn new(info: &'a KindInfo, values: &'a BTreeMap<String, ParamValue>) -> Self {
        Self {
            info,
            values,
            roads: &[],
        }
    }

    /// The same parameters seeing the model's `[[roads]]` (for tires).
    pub fn with_roads(self, roads: &'a [Road]) -> Self {
        Self { roads, ..self }
    }

    /// The road declarations of the model (`[[roads]]`), for kinds that act on a road.
    pub fn roads(&self) -> &'a [Road] {
        self.roads
    }

    /// The road named by the text parameter `param` (e.g. `road = "track"`); without it, the
    /// only road of the model. Errors list the roads there are.
    pub fn road(&self, param: &str) -> Result<&'a Road, String> {
        let names = || {
            self.roads
                .iter()
                .map(|r| format!("'{}'", r.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.text(param)? {
            Some(name) => self.roads.iter().find(|r| r.name == name).ok_or_else(|| {
                if self.roads.is_empty() {
                    format!("`{param}` = \"{name}\": the model declares no [[roads]]; add one named '{name}'")
                } else {
                    format!("`{param}` = \"{name}\": no such road; the model's roads are {}", names())
                }
            }),
            None => match self.roads {
                [only] => Ok(only),
                [] => Err(
                    "the model declares no [[roads]]; add a [[roads]] entry (e.g. type = \"plane\") for this element to roll on"
                        .to_string(),
                ),
                _ => Err(format!(
                    "the model declares several roads ({}); choose one with {param} = \"...\"",
                    names()
                )),
            },
        }
    }

    /// A number: the given value, else the kind's default, else an error that says what to add.
    pub fn number(&self, name: &str) -> Result<f64, String> {
        let info = self.info.parameters.iter().find(|p| p.name == name);
        match self.values.get(name) {
            Some(ParamValue::Number(x)) => Ok(*x),
            Some(other) => Err(format!(
                "parameter `{name}` must be a number, not {}",
                match other {
                    ParamValue::List(_) => "a list",
                    ParamValue::Text(_) => "a string",
                    ParamValue::Number(_) => unreachable!("handled above"),
                }
            )),
            None => info.and_then(|p| p.default).ok_or_else(|| {
                format!(
                    "parameter `{name}` is missing; add {name} = ... ({}, {})",
                    info.map_or("", |p| p.description),
                    info.map_or("", |p| p.unit)
                )
            }),
        }
    }

    /// A string parameter (a file name, a road name, a variant), `None` when absent.
    pub fn text(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(ParamValue::Text(t)) => Ok(Some(t.as_str())),
            Some(_) => Err(format!("parameter `{name}` must be a string")),
        }
    }

    /// A list of numbers (a table, a curve), `None` when absent.
    pub fn list(&self, name: &str) -> Result<Option<&'a [f64]>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(ParamValue::List(v)) => Ok(Some(v.as_slice())),
            Some(_) => Err(format!("parameter `{name}` must be a list of numbers")),
        }
    }

    /// Whether the entry gives `name` explicitly.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// A number that must be positive (> 0).
    pub fn positive(&self, name: &str) -> Result<f64, String> {
        let x = self.number(name)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(format!("parameter `{name}` = {x} must be positive"))
        }
    }

    /// A number that must not be negative.
    pub fn non_negative(&self, name: &str) -> Result<f64, String> {
        let x = self.number(name)?;
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(format!("parameter `{name}` = {x} must not be negative"))
        }
    }

    /// Rejects parameters the kind does not know, naming the closest known one.
    pub fn finish(&self) -> Result<(), String> {
        for name in self.values.keys() {
            if !self.info.parameters.iter().any(|p| p.name == name) {
                let known: Vec<&str> = self.info.parameters.iter().map(|p| p.name).collect();
                return Err(format!(
                    "unknown parameter `{name}` for kind '{}'; its parameters are: {}",
                    self.info.name,
                    known.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// Kind name → description and factory.
#[derive(Debug, Clone)]
pub struct ElementRegistry {
    kinds: Vec<(KindInfo, Factory)>,
}

impl Default for ElementRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ElementRegistry {
    /// The kinds that ship with sprung.
    pub fn builtin() -> Self {
        let mut r = Self { kinds: Vec::new() };
        r.register(super::maxwell::INFO, super::maxwell::build);
        r.register(super::anti_roll_bar::INFO, super::anti_roll_bar::build);
        r
    }

    /// Adds (or replaces) a kind. The names of the built-in kinds (bushing, spring, damper,
    /// stop) are taken: an `[[elements]]` entry of such a type is always the built-in element
    /// ([`ElementRegistry::builtin_kind`]).
    pub fn register(&mut self, info: KindInfo, factory: Factory) {
        self.kinds.retain(|(k, _)| k.name != info.name);
        self.kinds.push((info, factory));
    }

    /// All kinds.
    pub fn kinds(&self) -> impl Iterator<Item = &KindInfo> {
        self.kinds.iter().map(|(k, _)| k)
    }

    /// Builds the law of an `[[elements]]` entry of a model without roads; errors say what to
    /// fix.
    pub fn build(
        &self,
        kind: &str,
        parameters: &BTreeMap<String, ParamValue>,
        design: &[MarkerState],
    ) -> Result<Arc<dyn ElementLaw>, String> {
        self.build_with_roads(kind, parameters, design, &[])
    }

    /// Builds the law of an `[[elements]]` entry whose factory sees the model's `roads`
    /// ([`ElementParams::roads`]); errors say what to fix.
    pub fn build_with_roads(
        &self,
        kind: &str,
        parameters: &BTreeMap<String, ParamValue>,
        design: &[MarkerState],
        roads: &[Road],
    ) -> Result<Arc<dyn ElementLaw>, String> {
        if self.builtin_kind(kind).is_some() {
            return Err(format!(
                "type \"{kind}\" is a built-in kind: its entries become force elements when the model is loaded (sprung_model::builtin_kinds::normalise), not laws of their own"
            ));
        }
        let Some((info, factory)) = self.kinds.iter().find(|(k, _)| k.name == kind) else {
            let names: Vec<&str> = self
                .force_element_kinds()
                .chain(self.kinds())
                .map(|k| k.name)
                .collect();
            return Err(format!(
                "unknown element kind '{kind}'; known kinds: {} (`sprung elements` describes them)",
                names.join(", ")
            ));
        };
        // A last role ending in "..." (e.g. "boundary...") repeats: the kind takes any number of
        // markers from the number of roles on (the macro joint of sprung-reduce).
        let variadic = info.markers.last().is_some_and(|r| r.ends_with("..."));
        if (variadic && design.len() < info.markers.len())
            || (!variadic && design.len() != info.markers.len())
        {
            return Err(format!(
                "kind '{kind}' takes {}{} markers ({}), {} given",
                if variadic { "at least " } else { "" },
                info.markers.len(),
                info.markers.join(", "),
                design.len()
            ));
        }
        let params = ElementParams::new(info, parameters).with_roads(roads);
        params.finish()?;
        factory(&params, design)
    }

    /// The built-in kinds (bushing, spring, damper, stop): the same kind information as the
    /// open kinds, with every parameter an `[[elements]]` entry may set
    /// ([`super::builtin::KINDS`]); stored per kind and evaluated four at a time on the q-only
    /// path (`crate::pack`), with their laws written once for both paths (`docs/elements.md`).
    pub fn force_element_kinds(&self) -> impl Iterator<Item = &KindInfo> {
        super::builtin::KINDS.iter()
    }

    /// The kind information of the built-in kind `kind`, if it is one.
    pub fn builtin_kind(&self, kind: &str) -> Option<&KindInfo> {
        self.force_element_kinds().find(|k| k.name == kind)
    }

    /// The factory of the built-in kinds: the element description an `[[elements]]` entry of a
    /// built-in kind stands for (the one its `[[force_elements]]` table gives), compiled into
    /// the kind's SIMD array like the table ([`super::builtin`]); `None` for other kinds.
    /// Errors name the parameter and say what to write.
    pub fn build_force_element(
        &self,
        entry: &sprung_model::OpenElement,
    ) -> Option<Result<sprung_model::ForceElement, Vec<sprung_model::Problem>>> {
        sprung_model::builtin_kinds::to_force_element(entry)
    }

    /// A text description of every kind (markers, parameters with units and defaults): the
    /// built-in kinds first, then the open kinds.
    pub fn describe(&self) -> String {
        let mut s = String::from(
            "Built-in kinds: written as [[elements]] with type = \"<kind>\", markers = [marker_i, marker_j]\n\
             and parameters = { ... } as listed, or with the shorthand [[force_elements]] tables\n\
             (type, name, marker_i, marker_j and the same keys; a bushing's curves as\n\
             stiffness_curves = { x = \"C\" } for stiffness_curve_x = \"C\"). Both compile to the same\n\
             element; its channels are quantity = \"force\", \"torque\", \"deflection\", ... (docs/model-format.md).\n",
        );
        for k in self.force_element_kinds() {
            describe_kind(&mut s, k);
        }
        s.push_str("\n[[elements]] kinds (open interface, docs/elements.md):\n");
        for (k, _) in &self.kinds {
            describe_kind(&mut s, k);
        }
        s
    }
}

/// Appends the description of kind `k` to `s`.
fn describe_kind(s: &mut String, k: &KindInfo) {
    s.push_str(&format!(
        "{}: {}\n  markers: {}\n",
        k.name,
        k.description,
        k.markers.join(", ")
    ));
    for p in k.parameters {
        let d = match p.default {
            None => "required".to_string(),
            Some(d) if d.is_nan() => "optional".to_string(),
            Some(d) => format!("default {d}"),
        };
        s.push_str(&format!(
            "  {} [{}] {} ({d})\n",
            p.name, p.unit, p.description
        ));
    }
    if !k.states.is_empty() {
        s.push_str(&format!("  states: {}\n", k.states.join(", ")));
    }
    for o in k.outputs {
        s.push_str(&format!(
            "  output {} [{}] {}\n",
            o.name, o.unit, o.description
        ));
    }
    for i in k.inputs {
        s.push_str(&format!(
            "  input {} [{}] {}\n",
            i.name, i.unit, i.description
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_kinds_are_described_with_the_model_format_names() {
        let r = ElementRegistry::builtin();
        let names: Vec<&str> = r.force_element_kinds().map(|k| k.name).collect();
        assert_eq!(names, ["bushing", "spring", "damper", "stop"]);
        // Every listed parameter is a field of the model format (its JSON Schema), so the
        // listing cannot drift from what `[[force_elements]]` accepts.
        let schema = sprung_model::json_schema();
        for k in r.force_element_kinds() {
            assert!(schema.contains(&format!("\"{}\"", k.name)), "{}", k.name);
            assert_eq!(k.markers.len(), 2);
            for p in k.parameters {
                // A bushing's per-axis curve parameters are the `x`/`y`/`z` of its table's
                // curve fields (`stiffness_curve_x` for `stiffness_curves.x`).
                let field = match p.name.rsplit_once("_curve_") {
                    Some((field, _)) => format!("{field}_curves"),
                    None => p.name.to_string(),
                };
                assert!(
                    schema.contains(&format!("\"{field}\"")),
                    "{}: parameter {} is not in the model format",
                    k.name,
                    p.name
                );
            }
        }
        let text = r.describe();
        for kind in ["bushing:", "spring:", "damper:", "stop:", "maxwell:"] {
            assert!(text.contains(kind), "{kind} missing from\n{text}");
        }
        assert!(text.find("bushing:") < text.find("[[elements]] kinds"));
        assert!(text.contains("[[force_elements]] tables"), "{text}");
    }
}
