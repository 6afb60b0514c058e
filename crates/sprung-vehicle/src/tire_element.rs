//! The tire force element: a [`crate::tire::TireModel`] on a road through the wheel–road contact,
//! as an [`sprung_mbs::element_law::ElementLaw`] on one wheel marker (issue 13).
//!
//! One marker, `wheel`, at the wheel centre with its y axis along the spin axis
//! ([`crate::contact`]). The element names its road with the text parameter `road = "..."`
//! (default: the model's only `[[roads]]` entry). Its states are the tire law's
//! ([`TireModel::STATES`]), integrated with the system. Each evaluation
//! 1. computes the contact ([`crate::contact::contact`]): contact frame, deflection, vertical
//!    force, [`crate::tire::SlipKinematics`];
//! 2. evaluates the tire law: contact-frame forces and moments, state rates;
//! 3. zeroes the forces when the tire does not carry load (lift-off, no tension) — the states
//!    keep their law's rates — and moves the wrench to the wheel centre: F = E (f_x, f_y, F_z),
//!    T = E (m_x, m_y, m_z) + (P − c) × F, E = [e_x e_y n].
//!
//! Partials are analytic ([`Provided::ALL`]): the contact's kinematic partials
//! ([`crate::contact::ContactPartials`]) chained with the law's [`TireModel::partials`], plus the
//! rotation of the contact frame and the lever arm P − c under the marker's motion. They are
//! checked against central differences of the element (`tests/tire_element_partials.rs`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use nalgebra::{SMatrix, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo, ParamInfo};
use sprung_model as sm;

use crate::contact::{Contact, ContactPartials, contact};
use crate::road::Road;
use crate::tire::{MAX_STATES, N_FORCES, N_KIN, TireForces, TireModel, TirePartials, VerticalLaw};

/// The parameter every tire element has besides its law's.
pub const ROAD_PARAMETER: ParamInfo = ParamInfo {
    name: "road",
    unit: "-",
    description: "name of the [[roads]] entry the tire rolls on (text; default: the only road)",
    default: Some(f64::NAN),
};

/// Outputs of every tire element (read with `quantity = "element_output"`).
pub const OUTPUTS: &[OutputInfo] = &[
    o("fz", "N", "vertical (normal) force"),
    o("fx", "N", "longitudinal force in the contact frame"),
    o("fy", "N", "lateral force in the contact frame"),
    o("mx", "N m", "overturning moment about the contact point"),
    o(
        "my",
        "N m",
        "rolling-resistance moment about the contact point",
    ),
    o(
        "mz",
        "N m",
        "aligning (and bore) moment about the contact point",
    ),
    o(
        "rho",
        "m",
        "tire deflection normal to the road (negative: lifted off)",
    ),
    o(
        "vx",
        "m/s",
        "longitudinal velocity of the wheel centre in the contact frame",
    ),
    o(
        "vy",
        "m/s",
        "lateral velocity of the contact point in the contact frame",
    ),
    o("omega", "rad/s", "spin rate about the wheel axis"),
    o("camber", "rad", "camber angle against the road normal"),
    o(
        "psi_dot",
        "rad/s",
        "angular velocity of the wheel about the road normal",
    ),
    o("contact_x", "m", "contact point x (global)"),
    o("contact_y", "m", "contact point y (global)"),
    o("contact_z", "m", "contact point z (global)"),
    o("mu", "-", "road friction coefficient at the wheel"),
    o(
        "loaded_radius",
        "m",
        "distance of the contact point from the wheel centre",
    ),
    o(
        "effective_radius",
        "m",
        "effective rolling radius of the tire law",
    ),
];

const fn o(name: &'static str, unit: &'static str, description: &'static str) -> OutputInfo {
    OutputInfo {
        name,
        unit,
        description,
    }
}

/// A tire law on a road, acting on one wheel marker (module docs).
#[derive(Debug)]
pub struct TireElement<M: TireModel> {
    /// The tire law.
    pub model: M,
    /// The road it rolls on (shared by all tires on it).
    pub road: Arc<Road>,
    /// The law's vertical contact law.
    pub vertical: VerticalLaw,
}

impl<M: TireModel> TireElement<M> {
    /// A tire element of law `model` on `road`.
    pub fn new(model: M, road: Arc<Road>) -> Self {
        let vertical = model.vertical();
        Self {
            model,
            road,
            vertical,
        }
    }

    /// The contact of the wheel `m` with the road (no partials).
    pub fn contact(&self, m: &MarkerState) -> Contact {
        contact(&self.road, &self.vertical, m, None)
    }

    /// Law forces and rates at the contact, zeroed when the tire carries no load.
    fn forces(&self, c: &Contact, states: &[f64], rates: &mut [f64]) -> TireForces {
        let mut f = TireForces::default();
        self.model.evaluate(&c.kin, states, &mut f, rates);
        if c.in_contact {
            f
        } else {
            TireForces::default()
        }
    }
}

/// Global force and torque at the wheel centre from contact-frame forces at P.
fn wrench(c: &Contact, f: &TireForces) -> (Vector3<f64>, Vector3<f64>) {
    let force = c.frame * Vector3::new(f.fx, f.fy, c.kin.fz);
    let torque = c.frame * Vector3::new(f.mx, f.my, f.mz) - c.loaded_radius * c.up.cross(&force);
    (force, torque)
}

impl<M: TireModel> ElementLaw for TireElement<M> {
    fn kind(&self) -> &str {
        M::KIND
    }
    fn n_markers(&self) -> usize {
        1
    }
    fn n_states(&self) -> usize {
        M::STATES.len()
    }
    fn state_names(&self) -> Vec<String> {
        M::STATES.iter().map(|s| s.to_string()).collect()
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let m = &x.markers[0];
        let c = self.contact(m);
        let f = self.forces(&c, x.states, out.state_rates);
        let (force, torque) = wrench(&c, &f);
        out.force[0] = force;
        out.torque[0] = torque;
        let k = &c.kin;
        let values = [
            k.fz,
            f.fx,
            f.fy,
            f.mx,
            f.my,
            f.mz,
            c.deflection,
            k.vx,
            k.vy,
            k.omega,
            k.gamma,
            k.psi_dot,
            c.point.x,
            c.point.y,
            c.point.z,
            k.mu_road,
            c.loaded_radius,
            self.model.effective_radius(k.fz, k.rho),
        ];
        out.outputs.copy_from_slice(&values);
    }

    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let m = &x.markers[0];
        let ns = M::STATES.len();
        let mut cp = ContactPartials::default();
        let c = contact(&self.road, &self.vertical, m, Some(&mut cp));
        let mut rates = [0.0; MAX_STATES];
        let f = self.forces(&c, x.states, &mut rates[..ns]);
        let mut tp = TirePartials::default();
        self.model.partials(&c.kin, x.states, &mut tp);
        // Law outputs over the marker perturbations: ∂(f, ṡ)/∂kin · ∂kin/∂(δp, δφ, δv, δω).
        let law_kin =
            SMatrix::<f64, { N_FORCES + MAX_STATES }, N_KIN>::from_fn(|r, col| tp.kin[r][col]);
        let mut d_law = law_kin * cp.kin;
        let mut d_law_s =
            SMatrix::<f64, { N_FORCES + MAX_STATES }, MAX_STATES>::from_fn(|r, col| {
                tp.states[r][col]
            });
        if !c.in_contact {
            for r in 0..N_FORCES {
                d_law.row_mut(r).fill(0.0);
                d_law_s.row_mut(r).fill(0.0);
            }
        }
        let e_x: Vector3<f64> = c.frame.column(0).into_owned();
        let e_y: Vector3<f64> = c.frame.column(1).into_owned();
        let n: Vector3<f64> = c.frame.column(2).into_owned();
        let fz = c.kin.fz;
        // F = f_x e_x + f_y e_y + F_z n.
        let d_fz = cp.kin.row(crate::tire::kin::FZ);
        let d_force = e_x * d_law.row(0)
            + f.fx * cp.e_x
            + e_y * d_law.row(1)
            + f.fy * cp.e_y
            + n * d_fz
            + fz * cp.n;
        let (force, _) = wrench(&c, &f);
        // T = m_x e_x + m_y e_y + m_z n − r_s e_u × F.
        let r_s = c.loaded_radius;
        let e_u = c.up;
        let d_torque = e_x * d_law.row(2)
            + f.mx * cp.e_x
            + e_y * d_law.row(3)
            + f.my * cp.e_y
            + n * d_law.row(4)
            + f.mz * cp.n
            - e_u.cross(&force) * cp.loaded_radius
            - r_s * (e_u.cross_matrix() * d_force - force.cross_matrix() * cp.up);
        for col in 0..12 {
            let (dst, cc) = if col < 6 {
                (&mut *jac.position, col)
            } else {
                (&mut *jac.velocity, col - 6)
            };
            for r in 0..3 {
                dst[(r, cc)] = d_force[(r, col)];
                dst[(3 + r, cc)] = d_torque[(r, col)];
            }
            for j in 0..ns {
                dst[(6 + j, cc)] = d_law[(N_FORCES + j, col)];
            }
        }
        // State columns: forces through the law's state partials; rates likewise.
        for j in 0..ns {
            let df = e_x * d_law_s[(0, j)] + e_y * d_law_s[(1, j)];
            let dt = e_x * d_law_s[(2, j)] + e_y * d_law_s[(3, j)] + n * d_law_s[(4, j)]
                - r_s * e_u.cross(&df);
            for r in 0..3 {
                jac.velocity[(r, 6 + j)] = df[r];
                jac.velocity[(3 + r, 6 + j)] = dt[r];
            }
            for i in 0..ns {
                jac.velocity[(6 + i, 6 + j)] = d_law_s[(N_FORCES + i, j)];
            }
        }
        Provided::ALL
    }
}

/// Roads alive in some compiled model, by declaration: tires naming the same declared road share
/// one [`Road`] (a grid is read once), across elements and models. An entry is reused only while
/// a model holds the road.
fn shared_road(decl: &sm::Road) -> Result<Arc<Road>, String> {
    type Cache = Mutex<Vec<(sm::Road, Weak<Road>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(_, w)| w.strong_count() > 0);
    if let Some(r) = cache
        .iter()
        .find(|(d, _)| d == decl)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(r);
    }
    let road = Arc::new(Road::from_model(decl).map_err(|e| e.to_string())?);
    cache.push((decl.clone(), Arc::downgrade(&road)));
    Ok(road)
}

/// The factory of kind `M`: the law from the parameters, the road by name.
pub fn build<M: TireModel>(
    p: &ElementParams,
    _design: &[MarkerState],
) -> Result<Arc<dyn ElementLaw>, String> {
    let decl = p.road(ROAD_PARAMETER.name)?;
    let road = shared_road(decl)?;
    let model = M::from_params(p)?;
    if M::STATES.len() > MAX_STATES {
        return Err(format!(
            "tire law '{}' declares {} states, at most {MAX_STATES} are supported",
            M::KIND,
            M::STATES.len()
        ));
    }
    Ok(Arc::new(TireElement::new(model, road)))
}

/// The parameter list of kind `M`: `road` and the law's own (made once per kind and kept for
/// the program's life, as [`KindInfo`] holds `'static` slices).
fn parameters<M: TireModel>() -> &'static [ParamInfo] {
    static LISTS: OnceLock<Mutex<BTreeMap<&'static str, &'static [ParamInfo]>>> = OnceLock::new();
    let lists = LISTS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut lists = lists.lock().unwrap_or_else(|e| e.into_inner());
    lists.entry(M::KIND).or_insert_with(|| {
        let mut v = vec![ROAD_PARAMETER];
        v.extend_from_slice(M::PARAMETERS);
        Vec::leak(v)
    })
}

/// The registry entry of a tire element of law `M`.
pub fn kind_info<M: TireModel>() -> KindInfo {
    KindInfo {
        name: M::KIND,
        description: M::DESCRIPTION,
        markers: &["wheel"],
        parameters: parameters::<M>(),
        states: M::STATES,
        outputs: OUTPUTS,
        inputs: &[],
    }
}

/// Registers the tire element of law `M` (kind [`TireModel::KIND`]).
pub fn register<M: TireModel>(reg: &mut ElementRegistry) {
    reg.register(kind_info::<M>(), build::<M>);
}
