//! Reading a Chrono TMeasy JSON file (`"Template": "TMeasyTire"`, e.g.
//! `../shared/data/chrono/VW_microbus/json/van_TMeasyTireFull.json`) into TMeasy parameter
//! names. Chrono's files carry `//` comments, which are removed before parsing. Keys read:
//! `Design` (radius, width, rim radius; mass and inertia belong to the wheel body and are
//! skipped), `Coefficient of Friction`, `Rolling Resistance Coefficient`, and the `Parameters`
//! blocks `Vertical`, `Longitudinal`, `Lateral`, `Aligning` (and `Tire Load`, `Tire Stiffness`,
//! `Tire Damping` of Chrono's newer files, longitudinal/lateral entries). An unknown key inside
//! `Parameters` is an error; a file without `Parameters` (Chrono then estimates the tire from its
//! load index, which sprung does not) gives only the design values.

use std::collections::BTreeMap;

use serde_json::Value;

/// The parameter values of a Chrono file, by TMeasy parameter name.
#[derive(Debug, Clone, Default)]
pub struct ChronoFile {
    /// The path, for messages.
    pub path: String,
    /// Numbers by parameter name.
    pub numbers: BTreeMap<&'static str, f64>,
    /// Vertical spring curve (deflections m, forces N).
    pub curve: Option<(Vec<f64>, Vec<f64>)>,
    /// Added to "not in the file" messages.
    pub note: &'static str,
}

/// Removes `//` and `/* */` comments outside strings.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '/' && chars.peek() == Some(&'/') {
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                }
                if prev == '*' && n == '/' {
                    break;
                }
                prev = n;
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A pair [at pn, at 2 pn] → two parameter names.
type PairKey = (&'static str, &'static str, &'static str);

const LONGITUDINAL: &[PairKey] = &[
    ("Initial Slopes dFx/dsx [N]", "dfx0_pn", "dfx0_2pn"),
    ("Maximum Fx Load [N]", "fxm_pn", "fxm_2pn"),
    ("Sliding Fx Load [N]", "fxs_pn", "fxs_2pn"),
    ("Slip sx at Maximum Fx", "sxm_pn", "sxm_2pn"),
    ("Slip sx where sliding begins", "sxs_pn", "sxs_2pn"),
];
const LATERAL: &[PairKey] = &[
    ("Initial Slopes dFy/dsy [N]", "dfy0_pn", "dfy0_2pn"),
    ("Maximum Fy Load [N]", "fym_pn", "fym_2pn"),
    ("Sliding Fy Load [N]", "fys_pn", "fys_2pn"),
    ("Slip sy at Maximum Fy", "sym_pn", "sym_2pn"),
    ("Slip sy where sliding begins", "sys_pn", "sys_2pn"),
];
const ALIGNING: &[PairKey] = &[
    ("Normalized Trail at Zero Slip sy", "nl0_pn", "nl0_2pn"),
    ("Slip sy where Trail Changes Sign", "sq0_pn", "sq0_2pn"),
    ("Slip sy where Trail Tends to Zero", "sqe_pn", "sqe_2pn"),
];
const VERTICAL: &[(&str, &str)] = &[
    ("Nominal Vertical Force [N]", "pn"),
    ("Maximum Vertical Force [N]", "pn_max"),
    ("Vertical Tire Stiffness [N/m]", "cz"),
    ("Vertical Tire Damping [Ns/m]", "dz"),
    ("Tire Bottoming Stiffness [N/m]", "bottoming_stiffness"),
];
const TIRE_LOAD: &[(&str, &str)] = &[
    ("Nominal Vertical Force [N]", "pn"),
    ("Maximum Vertical Force [N]", "pn_max"),
];
const TIRE_STIFFNESS: &[(&str, &str)] = &[("Longitudinal [N/m]", "cx"), ("Lateral [N/m]", "cy")];
const TIRE_DAMPING: &[(&str, &str)] = &[
    ("Longitudinal [Ns/m]", "dx"),
    ("Lateral [Ns/m]", "dy"),
    ("Vertical [Ns/m]", "dz"),
];

impl ChronoFile {
    /// Reads `path`; errors name the file and the key.
    pub fn read(path: &str) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the TMeasy file {path}: {e}"))?;
        Self::parse(path, &text)
    }

    /// Parses the text of a file named `path`.
    pub fn parse(path: &str, text: &str) -> Result<Self, String> {
        let root: Value = serde_json::from_str(&strip_comments(text))
            .map_err(|e| format!("{path}:{}:{}: not a JSON file: {e}", e.line(), e.column()))?;
        let mut f = ChronoFile {
            path: path.to_string(),
            ..Default::default()
        };
        let obj = root
            .as_object()
            .ok_or_else(|| format!("{path}: expected a JSON object at the top"))?;
        if let Some(t) = obj.get("Template")
            && t.as_str() != Some("TMeasyTire")
        {
            return Err(format!(
                "{path}: \"Template\" is {t}, not \"TMeasyTire\"; give a Chrono TMeasy tire file"
            ));
        }
        let num = |v: &Value, key: &str| -> Result<f64, String> {
            v.as_f64()
                .ok_or_else(|| format!("{path}: \"{key}\" must be a number, not {v}"))
        };
        if let Some(design) = obj.get("Design") {
            for (key, name) in [
                ("Unloaded Radius [m]", "r0"),
                ("Width [m]", "width"),
                ("Rim Radius [m]", "rim_radius"),
            ] {
                if let Some(v) = design.get(key) {
                    f.numbers.insert(name, num(v, key)?);
                }
            }
        }
        if let Some(v) = obj.get("Coefficient of Friction") {
            f.numbers.insert("mu0", num(v, "Coefficient of Friction")?);
        }
        if let Some(v) = obj.get("Rolling Resistance Coefficient") {
            f.numbers
                .insert("fr", num(v, "Rolling Resistance Coefficient")?);
        }
        let Some(params) = obj.get("Parameters") else {
            f.note = "; it has no \"Parameters\" block, and Chrono's estimate from the load index is \
                      not implemented";
            return Ok(f);
        };
        let params = params
            .as_object()
            .ok_or_else(|| format!("{path}: \"Parameters\" must be an object"))?;
        for (block, value) in params {
            let entries = value
                .as_object()
                .ok_or_else(|| format!("{path}: \"Parameters.{block}\" must be an object"))?;
            for (key, v) in entries {
                let full = format!("Parameters.{block}.{key}");
                let pair = |keys: &[PairKey]| keys.iter().find(|k| k.0 == key).copied();
                let single = |keys: &[(&'static str, &'static str)]| {
                    keys.iter().find(|k| k.0 == key).map(|k| k.1)
                };
                let known_pair = match block.as_str() {
                    "Longitudinal" => Some(pair(LONGITUDINAL)),
                    "Lateral" => Some(pair(LATERAL)),
                    "Aligning" => Some(pair(ALIGNING)),
                    _ => None,
                };
                if let Some(found) = known_pair {
                    let (_, a, b) = found.ok_or_else(|| unknown(path, &full))?;
                    let arr = v.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
                        format!("{path}: \"{full}\" must be a list of two numbers (at pn and 2 pn)")
                    })?;
                    f.numbers.insert(a, num(&arr[0], &full)?);
                    f.numbers.insert(b, num(&arr[1], &full)?);
                    continue;
                }
                let name = match block.as_str() {
                    "Vertical" if key == "Tire Spring Curve Data" => {
                        f.curve = Some(spring_curve(path, &full, v)?);
                        continue;
                    }
                    // Larger than R0 in the van file, so not a rim radius: the rim radius comes
                    // from Design (docs/tire-tmeasy.md).
                    "Vertical" if key == "Tire Bottoming Radius [m]" => continue,
                    "Vertical" => single(VERTICAL),
                    "Tire Load" => single(TIRE_LOAD),
                    "Tire Stiffness" => single(TIRE_STIFFNESS),
                    "Tire Damping" => single(TIRE_DAMPING),
                    _ => None,
                };
                let name = name.ok_or_else(|| unknown(path, &full))?;
                f.numbers.insert(name, num(v, &full)?);
            }
        }
        Ok(f)
    }
}

fn unknown(path: &str, key: &str) -> String {
    format!(
        "{path}: unknown or unsupported key \"{key}\" for a TMeasy tire; remove it and give the value \
         inline (docs/tire-tmeasy.md lists the keys read)"
    )
}

fn spring_curve(path: &str, key: &str, v: &Value) -> Result<(Vec<f64>, Vec<f64>), String> {
    let bad = || format!("{path}: \"{key}\" must be a list of [deflection m, force N] pairs");
    let rows = v.as_array().ok_or_else(bad)?;
    let mut rho = Vec::with_capacity(rows.len());
    let mut fz = Vec::with_capacity(rows.len());
    for row in rows {
        let pair = row.as_array().filter(|r| r.len() == 2).ok_or_else(bad)?;
        rho.push(pair[0].as_f64().ok_or_else(bad)?);
        fz.push(pair[1].as_f64().ok_or_else(bad)?);
    }
    Ok((rho, fz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_removed_outside_strings_only() {
        let t = "{ \"a//b\": 1, // note\n /* x\n y */ \"c\": \"/*k*/\" }";
        let v: Value = serde_json::from_str(&strip_comments(t)).unwrap();
        assert_eq!(v["a//b"], 1);
        assert_eq!(v["c"], "/*k*/");
    }

    #[test]
    fn unknown_parameter_key_is_named() {
        let t = r#"{"Template": "TMeasyTire", "Parameters": {"Lateral": {"Cornering": [1, 2]}}}"#;
        let e = ChronoFile::parse("t.json", t).unwrap_err();
        assert!(e.contains("Parameters.Lateral.Cornering"), "{e}");
    }
}
