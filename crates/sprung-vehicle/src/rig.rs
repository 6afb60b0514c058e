//! The tire test rig: steady sweeps of longitudinal slip, slip angle, load and camber and a
//! transient slip-angle step on any tire law of the model format (issue 13, item 6; the
//! `sprung tire` command, `docs/tire-rig.md`).
//!
//! The rig drives a law directly through [`TireModel`] (no bodies, no road): it sets the
//! contact-frame kinematics from the slips it sweeps —
//! ```text
//! vx = V,  vy = V tan α,  ω = V (1 + κ) / r_e(Fz, ρ),  ρ = deflection of the vertical law at Fz
//! ```
//! so κ = (ω r_e − vx)/vx is the practical longitudinal slip (ISO 8855, driving > 0) and α the
//! slip angle with tan α = vy/vx (ISO: a wheel sliding to the left has α > 0 and gets Fy < 0).
//! Steady sweeps use [`TireModel::steady_state`]; the step integrates the law's states with RK4
//! at fixed kinematics.
//!
//! Laws are reached through the object-safe [`AnyTire`] and built by kind from an `[[elements]]`
//! entry ([`TIRE_KINDS`]: "tire_linear", "tmeasy", "pac2002"; a new kind is one line there).

mod sweep;

pub use sweep::{RigSetup, Sweep, SweepTable, kinematics, run_sweep};

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

use sprung_mbs::elements::ElementParams;
use sprung_model::ParamValue;

use crate::tire::linear::LinearTire;
use crate::tire::pac2002::Pac2002;
use crate::tire::tmeasy::Tmeasy;
use crate::tire::{
    SlipKinematics, TireForces, TireModel, TirePartials, VerticalLaw, VerticalStiffness,
};

/// A tire law behind a trait object: [`TireModel`] without its associated constants.
pub trait AnyTire: Send + Sync + Debug {
    /// Kind name.
    fn kind(&self) -> &'static str;
    /// Names of the internal states.
    fn state_names(&self) -> &'static [&'static str];
    /// The vertical law.
    fn vertical(&self) -> VerticalLaw;
    /// Effective rolling radius, m.
    fn effective_radius(&self, fz: f64, rho: f64) -> f64;
    /// Forces and state rates.
    fn evaluate(&self, k: &SlipKinematics, states: &[f64], out: &mut TireForces, rates: &mut [f64]);
    /// Steady-state forces.
    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces);
    /// Analytic partials.
    fn partials(&self, k: &SlipKinematics, states: &[f64], jac: &mut TirePartials);
    /// The law's reference load, N, if it has one.
    fn nominal_load(&self) -> Option<f64>;
}

/// A [`TireModel`] as an [`AnyTire`].
#[derive(Debug)]
struct Boxed<T> {
    law: T,
}

impl<T: TireModel> AnyTire for Boxed<T> {
    fn kind(&self) -> &'static str {
        T::KIND
    }
    fn state_names(&self) -> &'static [&'static str] {
        T::STATES
    }
    fn vertical(&self) -> VerticalLaw {
        self.law.vertical()
    }
    fn effective_radius(&self, fz: f64, rho: f64) -> f64 {
        self.law.effective_radius(fz, rho)
    }
    fn evaluate(
        &self,
        k: &SlipKinematics,
        states: &[f64],
        out: &mut TireForces,
        rates: &mut [f64],
    ) {
        self.law.evaluate(k, states, out, rates)
    }
    fn steady_state(&self, k: &SlipKinematics, out: &mut TireForces) {
        self.law.steady_state(k, out)
    }
    fn partials(&self, k: &SlipKinematics, states: &[f64], jac: &mut TirePartials) {
        self.law.partials(k, states, jac)
    }
    fn nominal_load(&self) -> Option<f64> {
        self.law.nominal_load()
    }
}

/// Wraps a law as a trait object.
pub fn boxed<T: TireModel>(law: T) -> Box<dyn AnyTire> {
    Box::new(Boxed { law })
}

/// Builds a law from the parameters of an `[[elements]]` entry.
pub type TireBuilder = fn(&BTreeMap<String, ParamValue>) -> Result<Box<dyn AnyTire>, String>;

/// A tire kind of the model format: its element for the registry and its law for the rig.
#[derive(Debug, Clone, Copy)]
pub struct TireKind {
    /// Kind name (`type = "..."`).
    pub kind: &'static str,
    /// Builds the law from the entry's parameters (the rig).
    pub build: TireBuilder,
    /// Registers the tire element of the kind ([`crate::register_all`]).
    pub register: fn(&mut sprung_mbs::elements::ElementRegistry),
}

/// Builds any [`TireModel`] from an entry's parameters (its reference load from
/// [`TireModel::nominal_load`]): the builder of a [`TIRE_KINDS`] entry.
pub fn build_law<T: TireModel>(
    p: &BTreeMap<String, ParamValue>,
) -> Result<Box<dyn AnyTire>, String> {
    let info = crate::tire_element::kind_info::<T>();
    Ok(boxed(T::from_params(&ElementParams::new(&info, p))?))
}

/// The entry of law `T` in [`TIRE_KINDS`].
const fn tire_kind<T: TireModel>() -> TireKind {
    TireKind {
        kind: T::KIND,
        build: build_law::<T>,
        register: crate::tire_element::register::<T>,
    }
}

/// The tire kinds of the model format: what the element registry ([`crate::register_all`]) and
/// the rig know. A further kind is one entry `tire_kind::<T>()`.
pub const TIRE_KINDS: &[TireKind] = &[
    tire_kind::<LinearTire>(),
    tire_kind::<Tmeasy>(),
    tire_kind::<Pac2002>(),
];

/// A tire law taken from a model file.
#[derive(Debug)]
pub struct RigTire {
    /// Name of the `[[elements]]` entry.
    pub element: String,
    /// The law.
    pub law: Box<dyn AnyTire>,
}

/// Loads `model` and builds the law of its tire element `element` (or of the first tire element).
/// File parameters (`file`, `*_file`) given relative are resolved against the model's folder.
pub fn tire_from_model(model: &Path, element: Option<&str>) -> Result<RigTire, String> {
    let m = sprung_model::load(model).map_err(|e| e.to_string())?;
    let is_tire = |kind: &str| TIRE_KINDS.iter().any(|k| k.kind == kind);
    let kinds = TIRE_KINDS
        .iter()
        .map(|k| k.kind)
        .collect::<Vec<_>>()
        .join(", ");
    let entry = match element {
        Some(name) => m.elements.iter().find(|e| e.name == name).ok_or_else(|| {
            let names: Vec<&str> = m.elements.iter().map(|e| e.name.as_str()).collect();
            format!(
                "{}: no [[elements]] entry named '{name}'; the entries are: {}",
                model.display(),
                if names.is_empty() { "(none)".into() } else { names.join(", ") }
            )
        })?,
        None => m.elements.iter().find(|e| is_tire(&e.kind)).ok_or_else(|| {
            format!(
                "{}: no tire element ([[elements]] of kind {kinds}); give one or name it with --element",
                model.display()
            )
        })?,
    };
    let Some(kind) = TIRE_KINDS.iter().find(|k| k.kind == entry.kind) else {
        return Err(format!(
            "{}: element '{}' is of kind '{}', not a tire kind the rig knows ({kinds})",
            model.display(),
            entry.name,
            entry.kind
        ));
    };
    let base = model.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut params = entry.parameters.clone();
    for (name, value) in params.iter_mut() {
        if (name == "file" || name.ends_with("_file"))
            && let ParamValue::Text(t) = value
        {
            let p = PathBuf::from(&*t);
            if p.is_relative() {
                *t = base.join(p).to_string_lossy().into_owned();
            }
        }
    }
    let law = (kind.build)(&params)
        .map_err(|e| format!("{}: element '{}': {e}", model.display(), entry.name))?;
    Ok(RigTire {
        element: entry.name.clone(),
        law,
    })
}

/// The deflection ρ of a vertical law at load `fz` (static, without damping; bottoming ignored),
/// m: the inverse of the stiffness curve.
pub fn deflection_at(v: &VerticalLaw, fz: f64) -> f64 {
    let fz = fz.max(0.0);
    match &v.stiffness {
        VerticalStiffness::Linear { k } => fz / k,
        VerticalStiffness::Quadratic { d1, d2 } => {
            if *d2 == 0.0 {
                fz / d1
            } else {
                // d2 ρ² + d1 ρ − Fz = 0, the positive root in the cancellation-free form.
                2.0 * fz / (d1 + (d1 * d1 + 4.0 * d2 * fz).sqrt())
            }
        }
        VerticalStiffness::Table { rho, force } => {
            let n = rho.len();
            let i = force.partition_point(|f| *f < fz).clamp(1, n - 1);
            let (f0, f1) = (force[i - 1], force[i]);
            if f1 == f0 {
                rho[i]
            } else {
                rho[i - 1] + (rho[i] - rho[i - 1]) * (fz - f0) / (f1 - f0)
            }
        }
    }
}
