//! The one variable table of an FMU: every exposed variable with its value reference, name,
//! causality, variability, unit, start value and description. `modelDescription.xml` of both
//! FMI versions is written from it ([`crate::xml`]) and the shared library resolves value
//! references through it ([`crate::instance`]), so the two can never disagree.
//!
//! Mapping (docs/fmi.md): value reference 0 is the independent variable `time` (s); then the
//! model's declared parameters (`[[parameters]]`, causality parameter, variability fixed,
//! start = the declared value: set before initialisation, fixed after); then the model's
//! runtime inputs (`signal = { type = "runtime" }`, causality input, start = the
//! signal's default), then its output channels (causality output, unit from the channel).
//! Value references are the positions in the table.

use std::collections::HashMap;

use crate::FmiError;

/// FMI causality of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    /// The independent variable (time).
    Independent,
    /// A parameter (set before initialisation).
    Parameter,
    /// An input set by the importer between steps.
    Input,
    /// An output read by the importer.
    Output,
}

impl Causality {
    /// The attribute value in `modelDescription.xml` (same in FMI 2 and 3).
    pub fn as_str(self) -> &'static str {
        match self {
            Causality::Independent => "independent",
            Causality::Parameter => "parameter",
            Causality::Input => "input",
            Causality::Output => "output",
        }
    }
}

/// FMI variability of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variability {
    /// Changes continuously in time.
    Continuous,
    /// Fixed after initialisation.
    Fixed,
}

impl Variability {
    /// The attribute value in `modelDescription.xml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Variability::Continuous => "continuous",
            Variability::Fixed => "fixed",
        }
    }
}

/// What a value reference reads or writes in the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// Simulation time, s.
    Time,
    /// The declared model parameter with this index (`Model::parameters`).
    Parameter(usize),
    /// The model input with this index (a runtime input).
    Input(usize),
    /// The output channel with this index.
    Output(usize),
}

/// One exposed variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Value reference (its position in the table).
    pub vr: u32,
    /// Name (unique in the table).
    pub name: String,
    /// Causality.
    pub causality: Causality,
    /// Variability.
    pub variability: Variability,
    /// SI unit (`None`: dimensionless or unknown).
    pub unit: Option<String>,
    /// Start value (inputs and parameters; outputs are calculated).
    pub start: Option<f64>,
    /// Description.
    pub description: String,
    /// What it reads or writes.
    pub binding: Binding,
}

/// The variable table of one model (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct VariableTable {
    /// Variables in value-reference order.
    pub variables: Vec<Variable>,
}

/// A unit of `<UnitDefinitions>`: its name and SI base-unit exponents (kg, m, s, rad) with a
/// factor to the base units (degrees: π/180).
#[derive(Debug, Clone, PartialEq)]
pub struct UnitDef {
    /// Unit name as used in the variables' `unit` attribute.
    pub name: String,
    /// Exponents of kg, m, s and rad; `None` for a unit sprung does not know (written without
    /// base units, which FMI allows).
    pub base: Option<BaseUnit>,
}

/// Exponents of the SI base units plus a factor (value in base units = factor × value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseUnit {
    /// Exponent of kg.
    pub kg: i32,
    /// Exponent of m.
    pub m: i32,
    /// Exponent of s.
    pub s: i32,
    /// Exponent of rad.
    pub rad: i32,
    /// Factor to the base units.
    pub factor: f64,
}

/// SI base-unit exponents of the units sprung's channels and inputs use.
pub fn base_unit(unit: &str) -> Option<BaseUnit> {
    let b = |kg, m, s, rad, factor| {
        Some(BaseUnit {
            kg,
            m,
            s,
            rad,
            factor,
        })
    };
    match unit {
        "m" => b(0, 1, 0, 0, 1.0),
        "m/s" => b(0, 1, -1, 0, 1.0),
        "m/s2" | "m/s^2" => b(0, 1, -2, 0, 1.0),
        "s" => b(0, 0, 1, 0, 1.0),
        "rad" => b(0, 0, 0, 1, 1.0),
        "rad/s" => b(0, 0, -1, 1, 1.0),
        "deg" => b(0, 0, 0, 1, std::f64::consts::PI / 180.0),
        "N" => b(1, 1, -2, 0, 1.0),
        "Nm" | "N·m" | "N*m" => b(1, 2, -2, 0, 1.0),
        "N/m" => b(1, 0, -2, 0, 1.0),
        "Ns/m" => b(1, 0, -1, 0, 1.0),
        "kg" => b(1, 0, 0, 0, 1.0),
        _ => None,
    }
}

impl VariableTable {
    /// The table of `model` (module docs). Fails if two variables would share a name.
    pub fn of(model: &sprung::Model) -> Result<Self, FmiError> {
        let cm = model.compiled();
        let mut variables = vec![Variable {
            vr: 0,
            name: "time".into(),
            causality: Causality::Independent,
            variability: Variability::Continuous,
            unit: Some("s".into()),
            start: None,
            description: "simulation time".into(),
            binding: Binding::Time,
        }];
        for (k, p) in model.parameters().iter().enumerate() {
            let unit = p.unit.trim();
            variables.push(Variable {
                vr: variables.len() as u32,
                name: p.name.clone(),
                causality: Causality::Parameter,
                variability: Variability::Fixed,
                // "-" and "1" mark dimensionless parameters (scale factors).
                unit: (!matches!(unit, "" | "-" | "1")).then(|| unit.to_string()),
                start: Some(p.value),
                description: if p.description.is_empty() {
                    format!("model parameter acting on {}", p.targets.join(", "))
                } else {
                    p.description.clone()
                },
                binding: Binding::Parameter(k),
            });
        }
        for (k, u) in cm.inputs.iter().enumerate() {
            if !u.runtime {
                continue;
            }
            let (unit, description) = match (u.kind, u.marker) {
                (sprung_mbs::compiled::InputKind::Signal, _) | (_, None) => {
                    // A signal read by open elements: its unit is the slot's.
                    let readers: Vec<(&str, &str)> = cm
                        .open_elements
                        .iter()
                        .flat_map(|e| {
                            e.law
                                .inputs()
                                .iter()
                                .zip(&e.inputs)
                                .filter(|(_, m)| **m == Some(k))
                                .map(move |(slot, _)| (e.name.as_str(), slot.unit))
                        })
                        .collect();
                    let unit = readers.first().map(|(_, unit)| *unit).unwrap_or("");
                    let names: Vec<&str> = readers.iter().map(|(n, _)| *n).collect();
                    (
                        unit,
                        format!(
                            "runtime signal read by element(s) {} (held over each communication step)",
                            if names.is_empty() {
                                "none".to_string()
                            } else {
                                names.join(", ")
                            }
                        ),
                    )
                }
                (kind, Some(marker)) => {
                    let (unit, what) = match kind {
                        sprung_mbs::compiled::InputKind::Torque => ("Nm", "torque"),
                        _ => ("N", "force"),
                    };
                    let marker = &cm.markers[marker].name;
                    let d = u.direction;
                    (
                        unit,
                        format!(
                            "runtime {what} input at marker {marker}, applied along ({}, {}, {}) in {} axes (held over each communication step)",
                            d.x,
                            d.y,
                            d.z,
                            if u.body_frame { "body" } else { "global" }
                        ),
                    )
                }
            };
            variables.push(Variable {
                vr: variables.len() as u32,
                name: u.name.clone(),
                causality: Causality::Input,
                variability: Variability::Continuous,
                unit: (!unit.is_empty()).then(|| unit.into()),
                start: Some(u.signal.value(0.0)),
                description,
                binding: Binding::Input(k),
            });
        }
        for (k, c) in model.outputs().channels.iter().enumerate() {
            variables.push(Variable {
                vr: variables.len() as u32,
                name: c.name.clone(),
                causality: Causality::Output,
                variability: Variability::Continuous,
                unit: (!c.unit.is_empty()).then(|| c.unit.to_string()),
                start: None,
                description: c.description.clone(),
                binding: Binding::Output(k),
            });
        }
        let mut seen: HashMap<&str, Causality> = HashMap::new();
        for v in &variables {
            if let Some(prev) = seen.insert(&v.name, v.causality) {
                return Err(FmiError::Model(format!(
                    "model '{}': the name '{}' is used by an {} and an {}; FMI needs unique variable names: rename the input or the output",
                    cm.name,
                    v.name,
                    prev.as_str(),
                    v.causality.as_str()
                )));
            }
        }
        Ok(Self { variables })
    }

    /// The variable with value reference `vr`.
    pub fn get(&self, vr: u32) -> Option<&Variable> {
        self.variables.get(vr as usize)
    }

    /// The variables of one causality, in value-reference order.
    pub fn with_causality(&self, c: Causality) -> impl Iterator<Item = &Variable> {
        self.variables.iter().filter(move |v| v.causality == c)
    }

    /// The distinct units used, in order of first use.
    pub fn units(&self) -> Vec<UnitDef> {
        let mut out: Vec<UnitDef> = Vec::new();
        for v in &self.variables {
            if let Some(u) = &v.unit
                && !out.iter().any(|d| &d.name == u)
            {
                out.push(UnitDef {
                    name: u.clone(),
                    base: base_unit(u),
                });
            }
        }
        out
    }

    /// A short text form of the table (name, causality, unit per line) that the instantiation
    /// token hashes: an FMU whose description and library disagree is refused at instantiation.
    pub fn signature(&self) -> String {
        let mut s = String::new();
        for v in &self.variables {
            s.push_str(&format!(
                "{} {} {} {} {}\n",
                v.vr,
                v.name,
                v.causality.as_str(),
                v.variability.as_str(),
                v.unit.as_deref().unwrap_or("-")
            ));
        }
        s
    }
}
