//! Maxwell element: a linear spring k in series with a linear damper c between two markers,
//! acting along their connecting line — the simplest force element with an internal state
//! (document 002, eqs. 3, 6, 7: force-element states integrated with the mechanical system).
//!
//! With L the distance of the marker origins, L₀ the free length (default: the design distance)
//! and x_d the damper elongation (the state), the spring elongation is (L − L₀) − x_d and the
//! series force (tension-positive)
//!
//! f = k ((L − L₀) − x_d),      ẋ_d = f / c,
//!
//! acts on marker 0 as −f u and on marker 1 as +f u, u = (x₀ − x₁)/L. For slow motion the element
//! is a damper (relaxation time c/k), for fast motion a spring. Partials are analytic
//! (∂f/∂x₀ = k uᵀ, ∂u/∂x₀ = (I − u uᵀ)/L, ∂f/∂x_d = −k).

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};

use super::registry::{ElementParams, KindInfo, ParamInfo};
use crate::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: "maxwell",
    description: "linear spring in series with a linear damper along the line of two markers (one state: the damper elongation)",
    markers: &["marker_i", "marker_j"],
    parameters: &[
        ParamInfo {
            name: "stiffness",
            unit: "N/m",
            description: "spring rate k",
            default: None,
        },
        ParamInfo {
            name: "damping",
            unit: "N s/m",
            description: "damper rate c",
            default: None,
        },
        ParamInfo {
            name: "free_length",
            unit: "m",
            description: "length at which the element is unloaded (default: the design distance)",
            default: Some(f64::NAN),
        },
    ],
    states: &["damper_elongation"],
    outputs: OUTPUTS,
    inputs: &[],
};

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "force",
        unit: "N",
        description: "series force, tension-positive",
    },
    OutputInfo {
        name: "length",
        unit: "m",
        description: "distance of the marker origins",
    },
    OutputInfo {
        name: "damper_elongation",
        unit: "m",
        description: "the state x_d",
    },
    OutputInfo {
        name: "spring_elongation",
        unit: "m",
        description: "(L - L0) - x_d",
    },
];

/// Lengths below this are treated as coincident markers (force direction undefined, zero force).
const MIN_LENGTH: f64 = 1e-9;

/// A Maxwell element (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Maxwell {
    /// Spring rate k, N/m.
    pub stiffness: f64,
    /// Damper rate c, N s/m.
    pub damping: f64,
    /// Free length L₀, m.
    pub free_length: f64,
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    let free = p.number("free_length")?;
    let design_length = (design[0].x - design[1].x).norm();
    Ok(Arc::new(Maxwell {
        stiffness: p.positive("stiffness")?,
        damping: p.positive("damping")?,
        free_length: if free.is_nan() { design_length } else { free },
    }))
}

impl Maxwell {
    /// Unit vector from marker 1 to marker 0 and the length.
    fn geometry(x: &ElementInput) -> (Vector3<f64>, f64) {
        let d = x.markers[0].x - x.markers[1].x;
        let l = d.norm();
        if l > MIN_LENGTH {
            (d / l, l)
        } else {
            (Vector3::zeros(), l)
        }
    }
}

impl ElementLaw for Maxwell {
    fn kind(&self) -> &str {
        INFO.name
    }
    fn n_markers(&self) -> usize {
        2
    }
    fn n_states(&self) -> usize {
        1
    }
    fn state_names(&self) -> Vec<String> {
        INFO.states.iter().map(|s| s.to_string()).collect()
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let (u, l) = Self::geometry(x);
        let xd = x.states[0];
        let spring = (l - self.free_length) - xd;
        let f = self.stiffness * spring;
        out.force[0] = -f * u;
        out.force[1] = f * u;
        out.torque[0] = Vector3::zeros();
        out.torque[1] = Vector3::zeros();
        out.state_rates[0] = f / self.damping;
        out.outputs.copy_from_slice(&[f, l, xd, spring]);
    }

    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let (u, l) = Self::geometry(x);
        if l <= MIN_LENGTH {
            return Provided::ALL; // zero force and zero partials where the direction is undefined
        }
        let f = self.stiffness * ((l - self.free_length) - x.states[0]);
        let k = self.stiffness;
        // ∂(−f u)/∂x₀ = −(k u uᵀ + f (I − u uᵀ)/L); marker 1 the opposite; rows 0-2 (marker 0),
        // rows 6-8 (marker 1); columns 0-2 (δp₀), 6-8 (δp₁).
        let uut = u * u.transpose();
        let d_f0_dp0 = -(k * uut + (f / l) * (Matrix3::identity() - uut));
        for (row, rs) in [(0usize, 1.0), (6, -1.0)] {
            for (col, cs) in [(0usize, 1.0), (6, -1.0)] {
                let blk = d_f0_dp0 * (rs * cs);
                jac.position
                    .fixed_view_mut::<3, 3>(row, col)
                    .copy_from(&blk);
            }
        }
        // State rate ẋ_d = f / c: ∂/∂δp₀ = (k/c) uᵀ, ∂/∂δp₁ = −(k/c) uᵀ (row 12).
        for (col, cs) in [(0usize, 1.0), (6, -1.0)] {
            for a in 0..3 {
                jac.position[(12, col + a)] = cs * k / self.damping * u[a];
            }
        }
        // ∂/∂x_d (velocity-group column 12): forces ±k u, rate −k/c.
        for a in 0..3 {
            jac.velocity[(a, 12)] = k * u[a];
            jac.velocity[(6 + a, 12)] = -k * u[a];
        }
        jac.velocity[(12, 12)] = -k / self.damping;
        Provided::ALL
    }
}
