//! Shared by the TMeasy tests: the three parameter sets of the data sheet
//! (`models/tires/*_tmeasy.toml`), built through the `[[elements]]` path a model file takes.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;
use sprung_mbs::elements::{ElementParams, KindInfo};
use sprung_model::{OpenElement, ParamValue};
use sprung_test_support::model_path;
use sprung_vehicle::tire::tmeasy::Tmeasy;
use sprung_vehicle::tire::{SlipKinematics, TireModel};

/// The kind description the tire element will register (markers and outputs are its business).
pub const INFO: KindInfo = KindInfo {
    name: Tmeasy::KIND,
    description: Tmeasy::DESCRIPTION,
    markers: &[],
    parameters: Tmeasy::PARAMETERS,
    states: Tmeasy::STATES,
    outputs: &[],
    inputs: &[],
};

#[derive(Deserialize)]
struct Fragment {
    elements: Vec<OpenElement>,
}

/// The parameters of the fixture `models/tires/{name}`, with `file` resolved against its folder.
pub fn fixture_values(name: &str) -> BTreeMap<String, ParamValue> {
    let path = model_path(&format!("tires/{name}"));
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Fragment = toml::from_str(&text).unwrap();
    let mut values = doc.elements[0].parameters.clone();
    if let Some(ParamValue::Text(f)) = values.get("file").cloned() {
        let full = path.parent().unwrap().join(f);
        values.insert(
            "file".into(),
            ParamValue::Text(full.to_string_lossy().into_owned()),
        );
    }
    values
}

/// Builds a law from parameter values as a model file would (unknown names rejected).
pub fn build(values: &BTreeMap<String, ParamValue>) -> Result<Tmeasy, String> {
    let p = ElementParams::new(&INFO, values);
    p.finish()?;
    Tmeasy::from_params(&p)
}

/// The tire of a data-sheet set: "truck", "car" or "van".
pub fn tire(set: &str) -> Tmeasy {
    build(&fixture_values(&format!("{set}_tmeasy.toml"))).unwrap()
}

pub const SETS: [&str; 3] = ["truck", "car", "van"];

/// Deflection at which the vertical law carries `fz` (bisection on d1 ρ + d2 ρ²).
pub fn deflection(t: &Tmeasy, fz: f64) -> f64 {
    let p = &t.params;
    let (mut lo, mut hi) = (0.0, 0.5 * p.r0);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if p.d1 * m + p.d2 * m * m < fz {
            lo = m
        } else {
            hi = m
        }
    }
    0.5 * (lo + hi)
}

/// Kinematics with the given slips while rolling forward at spin rate `omega` (> 0), road μ = μ0.
pub fn rolling(t: &Tmeasy, fz: f64, omega: f64, sx: f64, sy: f64) -> SlipKinematics {
    let rho = deflection(t, fz);
    let r = t.effective_radius(fz, rho);
    let vt = r * omega.abs() + t.params.v_n;
    SlipKinematics {
        fz,
        rho,
        vx: omega * r - sx * vt,
        vy: -sy * vt,
        omega,
        gamma: 0.0,
        psi_dot: 0.0,
        mu_road: t.params.mu0,
    }
}
