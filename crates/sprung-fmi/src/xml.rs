//! `modelDescription.xml` for FMI 2.0 and FMI 3.0 co-simulation, written from the one
//! [`VariableTable`] (FMI 2.0.4 standard sec. 2.2 and 4.3.1; FMI 3.0 standard sec. 2.4 and
//! 4.2.1 — schema layout learnt from the modelica/Reference-FMUs descriptions).
//!
//! Both versions carry the same variables with the same value references; they differ only in
//! syntax: FMI 2 wraps each variable in `<ScalarVariable>` and refers to outputs by their
//! 1-based position, FMI 3 uses typed elements (`<Float64>`) and value references.

use std::fmt::Write as _;

use crate::variables::{Causality, VariableTable};

/// The FMI version of an FMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiVersion {
    /// FMI 2.0 co-simulation.
    V2,
    /// FMI 3.0 co-simulation.
    V3,
}

impl FmiVersion {
    /// "2" or "3".
    pub fn number(self) -> u32 {
        match self {
            FmiVersion::V2 => 2,
            FmiVersion::V3 => 3,
        }
    }
}

/// What `modelDescription.xml` says besides the variables.
#[derive(Debug, Clone, PartialEq)]
pub struct DescriptionInfo {
    /// Model name (`[model] name`).
    pub model_name: String,
    /// C identifier of the shared library (file name without `.so`).
    pub model_identifier: String,
    /// GUID (FMI 2) / instantiation token (FMI 3).
    pub token: String,
    /// Model description text.
    pub description: String,
    /// Default experiment: start time, s.
    pub start_time: f64,
    /// Default experiment: stop time, s.
    pub stop_time: f64,
    /// Default experiment: communication step, s (the model's output interval).
    pub step_size: f64,
    /// The internal fixed step, s (FMI 3 `fixedInternalStepSize`).
    pub internal_step: f64,
}

/// Escapes text for an XML attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// An `xs:double` that round-trips (`{:?}` is the shortest exact decimal form of an f64).
fn num(x: f64) -> String {
    format!("{x:?}")
}

fn unit_definitions(table: &VariableTable, out: &mut String) {
    let units = table.units();
    if units.is_empty() {
        return;
    }
    out.push_str("  <UnitDefinitions>\n");
    for u in units {
        match u.base {
            Some(b) => {
                let mut attrs = String::new();
                for (name, e) in [("kg", b.kg), ("m", b.m), ("s", b.s), ("rad", b.rad)] {
                    if e != 0 {
                        let _ = write!(attrs, " {name}=\"{e}\"");
                    }
                }
                if b.factor != 1.0 {
                    let _ = write!(attrs, " factor=\"{}\"", num(b.factor));
                }
                let _ = writeln!(
                    out,
                    "    <Unit name=\"{}\">\n      <BaseUnit{attrs}/>\n    </Unit>",
                    escape(&u.name)
                );
            }
            None => {
                let _ = writeln!(out, "    <Unit name=\"{}\"/>", escape(&u.name));
            }
        }
    }
    out.push_str("  </UnitDefinitions>\n");
}

/// `modelDescription.xml` of `version` for `table` (module docs).
pub fn model_description(
    table: &VariableTable,
    info: &DescriptionInfo,
    version: FmiVersion,
) -> String {
    match version {
        FmiVersion::V2 => fmi2(table, info),
        FmiVersion::V3 => fmi3(table, info),
    }
}

fn header(info: &DescriptionInfo) -> String {
    format!(
        "modelName=\"{}\"\n  description=\"{}\"\n  generationTool=\"sprung {}\"",
        escape(&info.model_name),
        escape(&info.description),
        env!("CARGO_PKG_VERSION")
    )
}

fn fmi2(table: &VariableTable, info: &DescriptionInfo) -> String {
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<fmiModelDescription\n  fmiVersion=\"2.0\"\n  {}\n  guid=\"{}\"\n  variableNamingConvention=\"flat\"\n  numberOfEventIndicators=\"0\">",
        header(info),
        escape(&info.token)
    );
    let _ = writeln!(
        out,
        "  <CoSimulation\n    modelIdentifier=\"{}\"\n    canHandleVariableCommunicationStepSize=\"true\"\n    canGetAndSetFMUstate=\"true\"\n    canSerializeFMUstate=\"true\"\n    canNotUseMemoryManagementFunctions=\"true\"/>",
        escape(&info.model_identifier)
    );
    unit_definitions(table, &mut out);
    let _ = writeln!(
        out,
        "  <DefaultExperiment startTime=\"{}\" stopTime=\"{}\" stepSize=\"{}\"/>",
        num(info.start_time),
        num(info.stop_time),
        num(info.step_size)
    );
    out.push_str("  <ModelVariables>\n");
    for v in &table.variables {
        let mut attrs = format!(
            "name=\"{}\" valueReference=\"{}\" causality=\"{}\" variability=\"{}\"",
            escape(&v.name),
            v.vr,
            v.causality.as_str(),
            v.variability.as_str()
        );
        match v.causality {
            Causality::Output => attrs.push_str(" initial=\"calculated\""),
            Causality::Parameter => attrs.push_str(" initial=\"exact\""),
            _ => {}
        }
        let _ = write!(attrs, " description=\"{}\"", escape(&v.description));
        let mut real = String::new();
        if let Some(u) = &v.unit {
            let _ = write!(real, " unit=\"{}\"", escape(u));
        }
        if let Some(s) = v.start {
            let _ = write!(real, " start=\"{}\"", num(s));
        }
        let _ = writeln!(
            out,
            "    <!-- index {} -->\n    <ScalarVariable {attrs}>\n      <Real{real}/>\n    </ScalarVariable>",
            v.vr + 1
        );
    }
    out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    let outputs: Vec<u32> = table
        .with_causality(Causality::Output)
        .map(|v| v.vr + 1)
        .collect();
    if !outputs.is_empty() {
        // Outputs are functions of the state only (no direct feedthrough of the inputs):
        // dependencies="" (FMI 2.0 sec. 2.2.8).
        out.push_str("    <Outputs>\n");
        for i in &outputs {
            let _ = writeln!(out, "      <Unknown index=\"{i}\" dependencies=\"\"/>");
        }
        out.push_str("    </Outputs>\n    <InitialUnknowns>\n");
        for i in &outputs {
            let _ = writeln!(out, "      <Unknown index=\"{i}\"/>");
        }
        out.push_str("    </InitialUnknowns>\n");
    }
    out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    out
}

fn fmi3(table: &VariableTable, info: &DescriptionInfo) -> String {
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<fmiModelDescription\n  fmiVersion=\"3.0\"\n  {}\n  instantiationToken=\"{}\"\n  variableNamingConvention=\"flat\">",
        header(info),
        escape(&info.token)
    );
    let _ = writeln!(
        out,
        "  <CoSimulation\n    modelIdentifier=\"{}\"\n    canHandleVariableCommunicationStepSize=\"true\"\n    fixedInternalStepSize=\"{}\"\n    canGetAndSetFMUState=\"true\"\n    canSerializeFMUState=\"true\"\n    hasEventMode=\"false\"/>",
        escape(&info.model_identifier),
        num(info.internal_step)
    );
    unit_definitions(table, &mut out);
    let _ = writeln!(
        out,
        "  <DefaultExperiment startTime=\"{}\" stopTime=\"{}\" stepSize=\"{}\"/>",
        num(info.start_time),
        num(info.stop_time),
        num(info.step_size)
    );
    out.push_str("  <ModelVariables>\n");
    for v in &table.variables {
        let mut attrs = format!(
            "name=\"{}\" valueReference=\"{}\" causality=\"{}\" variability=\"{}\"",
            escape(&v.name),
            v.vr,
            v.causality.as_str(),
            v.variability.as_str()
        );
        match v.causality {
            Causality::Output => attrs.push_str(" initial=\"calculated\""),
            Causality::Parameter => attrs.push_str(" initial=\"exact\""),
            _ => {}
        }
        let _ = write!(attrs, " description=\"{}\"", escape(&v.description));
        if let Some(u) = &v.unit {
            let _ = write!(attrs, " unit=\"{}\"", escape(u));
        }
        if let Some(s) = v.start {
            let _ = write!(attrs, " start=\"{}\"", num(s));
        }
        let _ = writeln!(out, "    <Float64 {attrs}/>");
    }
    out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    let outputs: Vec<u32> = table
        .with_causality(Causality::Output)
        .map(|v| v.vr)
        .collect();
    // Outputs are functions of the state only (no direct feedthrough): dependencies="".
    for vr in &outputs {
        let _ = writeln!(
            out,
            "    <Output valueReference=\"{vr}\" dependencies=\"\"/>"
        );
    }
    for vr in &outputs {
        let _ = writeln!(out, "    <InitialUnknown valueReference=\"{vr}\"/>");
    }
    out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    out
}
