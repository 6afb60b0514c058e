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
//! When the stepper needs both, [`ElementLaw::evaluate_with_partials`] computes the contact
//! once and takes the forces and rates from the law's dual-number pass; the result is bit for
//! bit that of `evaluate` and `partials` (`tests/tire_element_one_pass.rs`).
//!
//! # Wheel spin as a state
//!
//! With `spin = "state"` the marker sits on a **non-spinning wheel carrier** (knuckle, axle
//! beam; y = spin axis a) and the wheel's absolute spin rate Ω about a is an element state
//! after the law's, with the brake deflection z (states `omega`, `brake_angle`). The wheel's
//! angular velocity is ω_w = ω_c − (ω_c·a) a + Ω a (ω_c the carrier's), which the contact sees
//! instead of the marker's. For an axisymmetric wheel the Euler equation about its axis is
//! exactly (the transverse terms cancel)
//!
//! I_w Ω̇ = T_d − T_b z/φ_s + a·τ,
//!
//! τ the tire's torque on the wheel about its centre (a·τ = −r_s F_x + the rolling-resistance
//! moment …), T_d the drive torque, T_b ≥ 0 the brake's friction torque (both element inputs).
//! The brake is a **Dahl friction element** (Dahl 1968, the bristle model behind LuGre): the
//! brake deflection z follows the wheel's spin relative to the carrier Ω_r = Ω − ω_c·a,
//! ż = Ω_r − |Ω_r| z/φ_s, and the brake acts with T_b (z + τ_b ż)/φ_s (τ_b the damping time,
//! LuGre's σ₁ term). While the wheel slides, z → ±φ_s and ż → 0 (the torque is ±T_b); through
//! Ω_r = 0 the torque follows a state, continuous, and a held wheel sticks (ż = 0 at Ω_r = 0): no
//! creep, no chatter, no regularising velocity; the held wheel turns at most φ_s
//! (`brake_stick_angle`) against the brake, damped by τ_b (`brake_damping_time`). The carrier takes the force F, the
//! tire torque without its axial part, the brake's reaction T_b z/φ_s a, the gyroscopic moment
//! −I_w Ω (ω_c × a) of the spinning wheel, and (with `drive_reaction = "carrier"`) −T_d a. The
//! wheel's mass and transverse inertia belong to the carrier body; its polar inertia is I_w.
//! The partials chain the contact's through ω_w to (δφ, δω, Ω) and add the spin and brake rows
//! and columns analytically.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use nalgebra::{DMatrix, SMatrix, Vector3};
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

/// The spin-model parameters every tire element has (module docs, "Wheel spin as a state").
pub const SPIN_PARAMETERS: &[ParamInfo] = &[
    ParamInfo {
        name: "spin",
        unit: "-",
        description: "\"body\" (default): the marker's body is the spinning wheel; \"state\": the marker's body is a non-spinning wheel carrier and the spin rate is an element state",
        default: Some(f64::NAN),
    },
    ParamInfo {
        name: "spin_inertia",
        unit: "kg m^2",
        description: "spin = \"state\": polar moment of inertia of the spinning parts (required there)",
        default: Some(f64::NAN),
    },
    ParamInfo {
        name: "brake_stick_angle",
        unit: "rad",
        description: "spin = \"state\": rotation of the wheel against the held brake before it slips (Dahl brake)",
        default: Some(DEFAULT_STICK_ANGLE),
    },
    ParamInfo {
        name: "brake_damping_time",
        unit: "s",
        description: "spin = \"state\": damping of the held brake as a time times its stiffness T_b/phi_s",
        default: Some(DEFAULT_BRAKE_DAMPING_TIME),
    },
    ParamInfo {
        name: "drive_reaction",
        unit: "-",
        description: "spin = \"state\": \"carrier\" (default): the drive torque reacts on the carrier; \"none\": its source takes the reaction",
        default: Some(f64::NAN),
    },
    ParamInfo {
        name: "initial_omega",
        unit: "rad/s",
        description: "spin = \"state\": initial spin rate (default: free rolling at the design velocity)",
        default: Some(f64::NAN),
    },
];

/// Outputs of every tire element (read with `quantity = "element_output"`).
pub const OUTPUTS: &[OutputInfo] = &[
    OutputInfo::new("fz", "N", "vertical (normal) force"),
    OutputInfo::new("fx", "N", "longitudinal force in the contact frame"),
    OutputInfo::new("fy", "N", "lateral force in the contact frame"),
    OutputInfo::new("mx", "N m", "overturning moment about the contact point"),
    OutputInfo::new(
        "my",
        "N m",
        "rolling-resistance moment about the contact point",
    ),
    OutputInfo::new(
        "mz",
        "N m",
        "aligning (and bore) moment about the contact point",
    ),
    OutputInfo::new(
        "rho",
        "m",
        "tire deflection normal to the road (negative: lifted off)",
    ),
    OutputInfo::new(
        "vx",
        "m/s",
        "longitudinal velocity of the wheel centre in the contact frame",
    ),
    OutputInfo::new(
        "vy",
        "m/s",
        "lateral velocity of the contact point in the contact frame",
    ),
    OutputInfo::new("omega", "rad/s", "spin rate about the wheel axis"),
    OutputInfo::new("camber", "rad", "camber angle against the road normal"),
    OutputInfo::new(
        "psi_dot",
        "rad/s",
        "angular velocity of the wheel about the road normal",
    ),
    OutputInfo::new("contact_x", "m", "contact point x (global)"),
    OutputInfo::new("contact_y", "m", "contact point y (global)"),
    OutputInfo::new("contact_z", "m", "contact point z (global)"),
    OutputInfo::new("mu", "-", "road friction coefficient at the wheel"),
    OutputInfo::new(
        "loaded_radius",
        "m",
        "distance of the contact point from the wheel centre",
    ),
    OutputInfo::new(
        "effective_radius",
        "m",
        "effective rolling radius of the tire law",
    ),
    OutputInfo::new(
        "slip",
        "-",
        "longitudinal slip (omega r_e - vx) / max(|vx|, 0.1 m/s)",
    ),
    OutputInfo::new(
        "drive_torque",
        "N m",
        "drive torque on the wheel (spin = \"state\"; else 0)",
    ),
    OutputInfo::new(
        "brake_torque",
        "N m",
        "acting brake torque against the wheel's spin on its carrier (spin = \"state\"; else 0)",
    ),
];

/// Input slots of every tire element (`[[elements]] inputs = { drive_torque = "...",
/// brake_torque = "..." }`, usually `kind = "signal"` model inputs); read with `spin = "state"`
/// only.
pub const TORQUE_INPUTS: &[OutputInfo] = &[
    OutputInfo::new(
        "drive_torque",
        "N m",
        "spin = \"state\": drive torque on the wheel about its axis (> 0 drives forward)",
    ),
    OutputInfo::new(
        "brake_torque",
        "N m",
        "spin = \"state\": brake friction torque (>= 0; the brake acts against the wheel's spin on the carrier)",
    ),
];

/// Number of outputs before `slip`, `drive_torque`, `brake_torque`.
const N_BASE_OUTPUTS: usize = 18;

/// How the wheel spins (parameter `spin`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spin {
    /// `spin = "body"` (default): the marker's body is the spinning wheel; its angular velocity
    /// about the marker's y axis is the spin rate.
    Body,
    /// `spin = "state"`: the marker's body is a non-spinning wheel carrier and the wheel's spin
    /// rate is an element state ([`SpinState`]).
    State(SpinState),
}

/// The wheel spin as element states (module docs, "Wheel spin as a state"): the wheel turns
/// about the carrier's y axis a with the absolute spin rate Ω, and the brake is a Dahl
/// friction element with the stick angle φ_s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpinState {
    /// Polar moment of inertia of the spinning parts I_w, kg m².
    pub inertia: f64,
    /// Brake stick angle φ_s, rad: the wheel turns against the held brake by at most φ_s
    /// before the brake slips (the brake's torsional stiffness is T_b/φ_s).
    pub stick_angle: f64,
    /// Brake damping time τ_b, s: the held brake's damping is τ_b times its stiffness (the
    /// LuGre σ₁ term), so the wheel does not ring on the brake's stiffness.
    pub damping_time: f64,
    /// Whether the drive torque's reaction acts on the carrier (`drive_reaction = "carrier"`,
    /// a hub motor or a drive housed in the carrier) or is left to the torque's source
    /// (`"none"`, e.g. a driveline element on the chassis).
    pub drive_reaction_on_carrier: bool,
    /// Initial spin rate, rad/s.
    pub initial_omega: f64,
}

/// Default brake damping time τ_b, s (assumption: damping ratio ≈ 0.2–0.6 of a 1–1.2 kg m² car
/// wheel on a 300–3000 N m brake).
pub const DEFAULT_BRAKE_DAMPING_TIME: f64 = 1e-3;

/// Default brake stick angle φ_s, rad (assumption: 2 mrad, brake and hub compliance of a car
/// wheel; a 2 kN m brake is then a 1 MN m/rad torsional spring while it holds).
pub const DEFAULT_STICK_ANGLE: f64 = 2e-3;

/// Velocity floor of the `slip` output's denominator, m/s.
pub const SLIP_VELOCITY_FLOOR: f64 = 0.1;

/// Torques and state rates of the spin state at one evaluation.
#[derive(Debug, Clone, Copy)]
struct SpinRates {
    /// Torque on the carrier, N m (global).
    carrier_torque: Vector3<f64>,
    /// Ω̇, rad/s².
    omega_dot: f64,
    /// ż, rad/s (brake deflection).
    z_dot: f64,
    /// Acting brake torque T_b (z + τ_b ż)/φ_s, N m (opposes the wheel's spin relative to the carrier).
    brake: f64,
}

impl SpinState {
    /// The spin balance I_w Ω̇ = T_d − T_b (z + τ_b ż)/φ_s + a·τ (τ: the tire's torque on the wheel about
    /// its centre), the Dahl brake ż = Ω_r − |Ω_r| z/φ_s with Ω_r = Ω − ω_c·a, and the torque the
    /// carrier takes: τ − (a·τ) a + T_b z/φ_s a − I_w Ω (ω_c × a) (− T_d a with the drive
    /// reaction on the carrier).
    fn rates(
        &self,
        m: &MarkerState,
        omega: f64,
        z: f64,
        tau: &Vector3<f64>,
        drive: f64,
        brake: f64,
    ) -> SpinRates {
        let a: Vector3<f64> = m.rot.column(1).into_owned();
        let omega_r = omega - m.w.dot(&a);
        let z_dot = omega_r - omega_r.abs() * z / self.stick_angle;
        let t_bk = brake.max(0.0) * (z + self.damping_time * z_dot) / self.stick_angle;
        let tau_a = a.dot(tau);
        let mut carrier_torque = tau - a * tau_a + a * t_bk - self.inertia * omega * m.w.cross(&a);
        if self.drive_reaction_on_carrier {
            carrier_torque -= a * drive;
        }
        SpinRates {
            carrier_torque,
            omega_dot: (drive - t_bk + tau_a) / self.inertia,
            z_dot,
            brake: t_bk,
        }
    }

    /// The wheel's kinematics on the carrier `m`: angular velocity ω_c − (ω_c·a) a + Ω a.
    fn wheel(m: &MarkerState, omega: f64) -> MarkerState {
        let a: Vector3<f64> = m.rot.column(1).into_owned();
        MarkerState {
            w: m.w + a * (omega - m.w.dot(&a)),
            ..*m
        }
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
    /// How the wheel spins.
    pub spin: Spin,
}

impl<M: TireModel> TireElement<M> {
    /// A tire element of law `model` on `road`, on the spinning wheel body.
    pub fn new(model: M, road: Arc<Road>) -> Self {
        Self::with_spin(model, road, Spin::Body)
    }

    /// A tire element of law `model` on `road` with the spin model `spin`.
    pub fn with_spin(model: M, road: Arc<Road>, spin: Spin) -> Self {
        let vertical = model.vertical();
        Self {
            model,
            road,
            vertical,
            spin,
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

    /// The drive and brake torques of the element's input slots ([`TORQUE_INPUTS`]), N m; they
    /// act only with `spin = "state"` (the spinning body has no carrier to react on).
    fn torques(&self, x: &ElementInput) -> (f64, f64) {
        match self.spin {
            Spin::Body => (0.0, 0.0),
            Spin::State(_) => (
                x.inputs.first().copied().unwrap_or(0.0),
                x.inputs.get(1).copied().unwrap_or(0.0),
            ),
        }
    }

    /// [`ElementLaw::evaluate`] with the drive torque T_d and the brake torque T_b (≥ 0; the
    /// largest friction torque of the brake) given, N m; they act only with `spin = "state"`.
    pub fn evaluate_with_torques(
        &self,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        out: &mut ElementOutput,
    ) {
        let ns = M::STATES.len();
        let m = &x.markers[0];
        let (law_states, spin_states) = x.states.split_at(ns);
        let c = match self.spin {
            Spin::Body => self.contact(m),
            Spin::State(_) => self.contact(&SpinState::wheel(m, spin_states[0])),
        };
        let mut rates = [0.0; MAX_STATES];
        let f = self.forces(&c, law_states, &mut rates[..ns]);
        self.write_evaluation(x, &c, &f, &rates[..ns], drive, brake, out);
    }

    /// Writes the element's forces, torques, state rates and outputs from the contact `c`, the
    /// law's forces `f` (zero when the tire carries no load) and rates `law_rates`: the common
    /// end of [`Self::evaluate_with_torques`] and of the one-pass evaluation with partials.
    #[allow(clippy::too_many_arguments)]
    fn write_evaluation(
        &self,
        x: &ElementInput,
        c: &Contact,
        f: &TireForces,
        law_rates: &[f64],
        drive: f64,
        brake: f64,
        out: &mut ElementOutput,
    ) {
        let ns = M::STATES.len();
        let m = &x.markers[0];
        let spin_states = &x.states[ns..];
        out.state_rates[..ns].copy_from_slice(law_rates);
        let (force, torque) = wrench(c, f);
        out.force[0] = force;
        match self.spin {
            Spin::Body => {
                out.torque[0] = torque;
                out.outputs[N_BASE_OUTPUTS + 1] = 0.0;
                out.outputs[N_BASE_OUTPUTS + 2] = 0.0;
            }
            Spin::State(sp) => {
                let r = sp.rates(m, spin_states[0], spin_states[1], &torque, drive, brake);
                out.torque[0] = r.carrier_torque;
                out.state_rates[ns] = r.omega_dot;
                out.state_rates[ns + 1] = r.z_dot;
                out.outputs[N_BASE_OUTPUTS + 1] = drive;
                out.outputs[N_BASE_OUTPUTS + 2] = r.brake;
            }
        }
        let k = &c.kin;
        let r_e = self.model.effective_radius(k.fz, k.rho);
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
            r_e,
        ];
        out.outputs[..N_BASE_OUTPUTS].copy_from_slice(&values);
        out.outputs[N_BASE_OUTPUTS] = (k.omega * r_e - k.vx) / k.vx.abs().max(SLIP_VELOCITY_FLOOR);
    }

    /// [`ElementLaw::partials`] with the torques given (see [`Self::evaluate_with_torques`]).
    pub fn partials_with_torques(
        &self,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        jac: &mut ElementJacobian,
    ) -> Provided {
        self.partials_and_evaluation(x, drive, brake, jac, None)
    }

    /// The partials (as [`Self::partials_with_torques`]) and, with `out`, the evaluation (as
    /// [`Self::evaluate_with_torques`]) from one contact and one pass of the law: the law's
    /// dual-number pass gives the forces and rates bit for bit as its `f64` evaluation
    /// ([`crate::dual`]), and the contact's values are the same with or without its partials.
    fn partials_and_evaluation(
        &self,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        jac: &mut ElementJacobian,
        out: Option<&mut ElementOutput>,
    ) -> Provided {
        let ns = M::STATES.len();
        let m = &x.markers[0];
        let (law_states, spin_states) = x.states.split_at(ns);
        let sp = match self.spin {
            Spin::Body => {
                let mut cp = ContactPartials::default();
                let c = contact(&self.road, &self.vertical, m, Some(&mut cp));
                let ch = self.chain(&c, law_states, &cp);
                let kin = cp.kin.as_slice();
                for col in 0..12 {
                    let (df, dt, l) = ch.column(
                        &kin[N_KIN * col..N_KIN * (col + 1)],
                        (col < 6).then_some(col),
                    );
                    let dst = if col < 6 {
                        column(jac.position, col)
                    } else {
                        column(jac.velocity, col - 6)
                    };
                    Chain::write(dst, &df, &dt, &l, ns);
                }
                for j in 0..ns {
                    let (df, dt) = ch.state(j);
                    let dst = column(jac.velocity, 6 + j);
                    Chain::write(dst, &df, &dt, &ch.law_states[j][N_FORCES..], ns);
                }
                if let Some(out) = out {
                    self.write_evaluation(x, &c, &ch.forces, &ch.rates[..ns], drive, brake, out);
                }
                return Provided::ALL;
            }
            Spin::State(sp) => sp,
        };
        let (omega, z) = (spin_states[0], spin_states[1]);
        let wheel = SpinState::wheel(m, omega);
        let mut cp = ContactPartials::default();
        let c = contact(&self.road, &self.vertical, &wheel, Some(&mut cp));
        // Columns (δp, δφ, δv, δω) of the wheel → (δp, δφ, δv, δω, δΩ) of the carrier and the
        // spin state: ω_w = ω_c − (ω_c·a) a + Ω a with δa = −[a]× δφ.
        let a: Vector3<f64> = m.rot.column(1).into_owned();
        let w = m.w;
        let wa = w.dot(&a);
        let s_w = omega - wa;
        // The map T (12 × 13) is the identity on (δp, δφ, δv) except that δω_w also moves
        // with δφ ((a wᵀ − (Ω − ω_c·a) I)[a]×), δω_c (I − a aᵀ) and δΩ (a): only the ω columns
        // of the contact's partials are multiplied (kin13 = cp.kin T), row by row: a row k of
        // ∂kin/∂ω_w gives k·a on δΩ, k − (k·a) a on δω_c and ((k·a) ω_c − s k) × a on δφ.
        let mut kin13 = SMatrix::<f64, N_KIN, 13>::zeros();
        kin13
            .fixed_view_mut::<N_KIN, 9>(0, 0)
            .copy_from(&cp.kin.fixed_view::<N_KIN, 9>(0, 0));
        for r in 0..N_KIN {
            let k = Vector3::new(cp.kin[(r, 9)], cp.kin[(r, 10)], cp.kin[(r, 11)]);
            if k == Vector3::zeros() {
                continue;
            }
            let ka = k.dot(&a);
            let phi = (w * ka - k * s_w).cross(&a);
            for i in 0..3 {
                kin13[(r, 3 + i)] += phi[i];
                kin13[(r, 9 + i)] = k[i] - ka * a[i];
            }
            kin13[(r, 12)] = ka;
        }
        let ch = self.chain(&c, law_states, &cp);
        if let Some(out) = out {
            self.write_evaluation(x, &c, &ch.forces, &ch.rates[..ns], drive, brake, out);
        }
        let brake = brake.max(0.0);
        let (_, tau) = wrench(&c, &ch.forces);
        let omega_r = omega - wa;
        let sgn = if omega_r > 0.0 {
            1.0
        } else if omega_r < 0.0 {
            -1.0
        } else {
            0.0
        };
        // ż = Ω_r − |Ω_r| z/φ_s: ∂ż = ∂Ω_r (1 − sgn Ω_r z/φ_s), with ∂Ω_r = 1 on δΩ, −aᵀ on
        // δω_c and (ω_c × a)ᵀ on δφ (δa = −[a]× δφ).
        let z_fac = 1.0 - sgn * z / sp.stick_angle;
        let z_dot = omega_r - omega_r.abs() * z / sp.stick_angle;
        let dzdot_dz = -omega_r.abs() / sp.stick_angle;
        // Brake torque T_b (z + τ_b ż)/φ_s over the columns (k_b τ_b ∂ż) and over z.
        let k_b = brake / sp.stick_angle;
        let t_bk = k_b * (z + sp.damping_time * z_dot);
        let k_bt = k_b * sp.damping_time;
        let d_t_bk_z = k_b * (1.0 + sp.damping_time * dzdot_dz);
        let tau_a = a.dot(&tau);
        // Over each column: g = ∂(a·τ) − ∂T_bk (∂(a·τ) = aᵀ ∂τ, plus (a × τ)ᵀ on δφ), Ω̇ = g/I_w,
        // and the carrier's torque τ − (a·τ) a + T_bk a − I_w Ω (ω_c × a) (− T_d a):
        // ∂τ_c = ∂τ − a g, plus on δφ (column k, δa = e_k × a) (e_k × a)(T_bk − a·τ − T_d)
        // − I_w Ω ω_c × (e_k × a), on δω_c I_w Ω a × e_k, on δΩ −I_w (ω_c × a).
        let wxa = w.cross(&a);
        let axt = a.cross(&tau);
        let s_phi = t_bk
            - tau_a
            - if sp.drive_reaction_on_carrier {
                drive
            } else {
                0.0
            };
        let io = sp.inertia * omega;
        let (iw, iz) = (6 + ns, 7 + ns);
        let kin = kin13.as_slice();
        for col in 0..13 {
            let (df, dtau, l) = ch.column(
                &kin[N_KIN * col..N_KIN * (col + 1)],
                (col < 6).then_some(col),
            );
            let mut dta = a.dot(&dtau);
            let d_or = match col {
                3..=5 => {
                    dta += axt[col - 3];
                    wxa[col - 3]
                }
                9..=11 => -a[col - 9],
                12 => 1.0,
                _ => 0.0,
            };
            let dzd = d_or * z_fac;
            let g = dta - k_bt * dzd;
            let mut dtc = dtau - a * g;
            match col {
                3..=5 => {
                    let ek_a = Vector3::ith(col - 3, 1.0).cross(&a);
                    dtc += ek_a * s_phi - w.cross(&ek_a) * io;
                }
                9..=11 => dtc += a.cross(&Vector3::ith(col - 9, 1.0)) * io,
                12 => dtc -= wxa * sp.inertia,
                _ => {}
            }
            let dst = match col {
                0..=5 => column(jac.position, col),
                6..=11 => column(jac.velocity, col - 6),
                _ => column(jac.velocity, iw),
            };
            Chain::write(dst, &df, &dtc, &l, ns);
            dst[iw] = g / sp.inertia;
            dst[iz] = dzd;
        }
        let v = &mut *jac.velocity;
        for r in 0..3 {
            // Brake deflection: the brake torque on the wheel (−) and the carrier (+).
            v[(3 + r, iz)] = a[r] * d_t_bk_z;
        }
        v[(iw, iz)] = -d_t_bk_z / sp.inertia;
        v[(iz, iz)] = dzdot_dz;
        // Law-state columns: the wheel torque's share goes to the spin (a·) and the carrier.
        for j in 0..ns {
            let (df, dt) = ch.state(j);
            let dt_a = a.dot(&dt);
            let dtc = dt - a * dt_a;
            for r in 0..3 {
                v[(r, 6 + j)] = df[r];
                v[(3 + r, 6 + j)] = dtc[r];
            }
            for i in 0..ns {
                v[(6 + i, 6 + j)] = ch.law_states[j][N_FORCES + i];
            }
            v[(iw, 6 + j)] = dt_a / sp.inertia;
        }
        Provided::ALL
    }

    /// The law at the contact `c` with its partials, and what the chain rule to the wheel's
    /// force, torque and law rates needs ([`Chain`]; its columns are formed by
    /// [`Chain::column`]).
    // Range loops over the rows: the iterator form (take/skip) costs ~150 instructions more.
    #[allow(clippy::needless_range_loop)]
    fn chain<'a>(&self, c: &'a Contact, states: &[f64], cp: &'a ContactPartials) -> Chain<'a> {
        let ns = M::STATES.len();
        let mut rates = [0.0; MAX_STATES];
        let mut f = TireForces::default();
        let mut tp = TirePartials::default();
        self.model
            .evaluate_with_partials(&c.kin, states, &mut f, &mut rates[..ns], &mut tp);
        // The law's rows by kinematic input (one contiguous row of outputs per input); the
        // force rows zero when the tire carries no load.
        let rows = if c.in_contact { 0 } else { N_FORCES };
        let mut law_states = [[0.0; R]; MAX_STATES];
        for (j, ls) in law_states.iter_mut().enumerate().take(ns) {
            for r in rows..N_FORCES + ns {
                ls[r] = tp.states[r][j];
            }
        }
        if !c.in_contact {
            f = TireForces::default();
        }
        let (force, _) = wrench(c, &f);
        let e_x: Vector3<f64> = c.frame.column(0).into_owned();
        let e_y: Vector3<f64> = c.frame.column(1).into_owned();
        let n: Vector3<f64> = c.frame.column(2).into_owned();
        // Per kinematic input k: ∂F = e_x ∂f_x + e_y ∂f_y + n ∂F_z, ∂T = e_x ∂m_x + e_y ∂m_y
        // + n ∂m_z − r_s e_u × ∂F and the law's rates, so that a column is Σ_k g_k G_k.
        let mut per_kin = [[0.0; G]; N_KIN];
        for (k, gk) in per_kin.iter_mut().enumerate() {
            let l = |r: usize| if r >= rows { tp.kin[r][k] } else { 0.0 };
            let fz = if k == crate::tire::kin::FZ { 1.0 } else { 0.0 };
            let df = e_x * l(0) + e_y * l(1) + n * fz;
            let dt = e_x * l(2) + e_y * l(3) + n * l(4) - c.up.cross(&df) * c.loaded_radius;
            for i in 0..3 {
                gk[i] = df[i];
                gk[3 + i] = dt[i];
            }
            for r in 0..ns {
                gk[6 + r] = tp.kin[N_FORCES + r][k];
            }
        }
        Chain {
            c,
            cp,
            forces: f,
            rates,
            per_kin,
            law_states,
            force,
            e_uxf: c.up.cross(&force),
            e_x,
            e_y,
            n,
        }
    }
}

/// Rows of the law's outputs: forces and moments, then the rates.
const R: usize = N_FORCES + MAX_STATES;
/// Entries of a column of the chain rule: ∂F, ∂T, then the law's rates.
const G: usize = 6 + MAX_STATES;

/// The law's values and partials at a contact, for the chain rule to the wheel's force, torque
/// and law rates (see [`TireElement::chain`]).
struct Chain<'a> {
    c: &'a Contact,
    cp: &'a ContactPartials,
    /// The law's forces at the evaluation (zero when the tire carries no load).
    forces: TireForces,
    /// The law's state rates at the evaluation.
    rates: [f64; MAX_STATES],
    /// (∂F, ∂T, ∂(law rates)) per unit of kinematic input k, by k.
    per_kin: [[f64; G]; N_KIN],
    /// ∂(law forces, law rates)/∂(law state j), by j.
    law_states: [[f64; R]; MAX_STATES],
    /// The wheel's force F (global).
    force: Vector3<f64>,
    /// e_u × F.
    e_uxf: Vector3<f64>,
    e_x: Vector3<f64>,
    e_y: Vector3<f64>,
    n: Vector3<f64>,
}

impl Chain<'_> {
    /// One column of the partials: `kin` is ∂(kinematic inputs)/∂(column) (the contact's, or
    /// mapped), `pos` the column's index among the marker's δp, δφ (position columns turn the
    /// contact frame and the lever arm), None for the others. Returns ∂F, ∂T (the wheel's torque
    /// about its centre) and ∂(law rates): F = f_x e_x + f_y e_y + F_z n,
    /// T = m_x e_x + m_y e_y + m_z n − r_s e_u × F. The part through the law is Σ_k g_k G_k
    /// over the per-input columns G_k of [`TireElement::chain`] (one accumulation per nonzero
    /// g_k instead of the law's rows followed by the frame products per column: the same
    /// partials up to the order of the sums, ~2e-16 of the block's largest entry).
    #[inline(always)]
    fn column(
        &self,
        kin: &[f64],
        pos: Option<usize>,
    ) -> (Vector3<f64>, Vector3<f64>, [f64; MAX_STATES]) {
        // ∂kin/∂(column) is sparse: a velocity column moves three or four of the seven inputs.
        let mut acc = [0.0; G];
        for (g, gk) in kin.iter().zip(&self.per_kin) {
            if *g != 0.0 {
                for (d, s) in acc.iter_mut().zip(gk) {
                    *d += s * g;
                }
            }
        }
        let mut df = Vector3::new(acc[0], acc[1], acc[2]);
        let mut dt = Vector3::new(acc[3], acc[4], acc[5]);
        if let Some(k) = pos {
            let r_s = self.c.loaded_radius;
            let (cp, f) = (self.cp, &self.forces);
            let col = |m: &crate::contact::G3| Vector3::new(m[(0, k)], m[(1, k)], m[(2, k)]);
            let (dex, dey, dn, dup) = (col(&cp.e_x), col(&cp.e_y), col(&cp.n), col(&cp.up));
            // The frame turns: ∂E (f, m) and the lever arm: −∂r_s e_u × F − r_s ∂e_u × F.
            let df_frame = dex * f.fx + dey * f.fy + dn * self.c.kin.fz;
            df += df_frame;
            dt += dex * f.mx + dey * f.my + dn * f.mz - self.e_uxf * cp.loaded_radius[k]
                + self.force.cross(&dup) * r_s
                - self.c.up.cross(&df_frame) * r_s;
        }
        let mut rates = [0.0; MAX_STATES];
        rates.copy_from_slice(&acc[6..]);
        (df, dt, rates)
    }

    /// ∂F and ∂T over the law state j.
    fn state(&self, j: usize) -> (Vector3<f64>, Vector3<f64>) {
        let l = &self.law_states[j];
        let df = self.e_x * l[0] + self.e_y * l[1];
        let dt = self.e_x * l[2] + self.e_y * l[3] + self.n * l[4]
            - self.c.up.cross(&df) * self.c.loaded_radius;
        (df, dt)
    }

    /// Writes one column of the spinning-body form: ∂F, ∂T, then the `ns` law rates.
    #[inline(always)]
    fn write(dst: &mut [f64], df: &Vector3<f64>, dt: &Vector3<f64>, rates: &[f64], ns: usize) {
        for r in 0..3 {
            dst[r] = df[r];
            dst[3 + r] = dt[r];
        }
        for (d, s) in dst[6..6 + ns].iter_mut().zip(rates) {
            *d = *s;
        }
    }
}

/// Column `c` of a (column-major) partials block as a slice.
fn column(m: &mut DMatrix<f64>, c: usize) -> &mut [f64] {
    let n = m.nrows();
    &mut m.as_mut_slice()[c * n..(c + 1) * n]
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
        M::STATES.len() + self.n_spin_states()
    }
    fn state_names(&self) -> Vec<String> {
        let mut v: Vec<String> = M::STATES.iter().map(|s| s.to_string()).collect();
        if let Spin::State(_) = self.spin {
            v.extend(SPIN_STATES.iter().map(|s| s.to_string()));
        }
        v
    }
    fn initial_states(&self, states: &mut [f64]) {
        states.fill(0.0);
        if let Spin::State(sp) = self.spin {
            states[M::STATES.len()] = sp.initial_omega;
        }
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }
    fn inputs(&self) -> &[OutputInfo] {
        TORQUE_INPUTS
    }

    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let (drive, brake) = self.torques(x);
        self.evaluate_with_torques(x, drive, brake, out);
    }

    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let (drive, brake) = self.torques(x);
        self.partials_with_torques(x, drive, brake, jac)
    }

    /// ∂/∂(T_d, T_b) with `spin = "state"` (module docs): Ω̇ gains 1/I_w per unit drive
    /// torque and the carrier −a (drive reaction on the carrier); the brake torque acts with
    /// ∂T_bk/∂T_b = (z + τ_b ż)/φ_s (the right derivative at T_b = 0, where the brake starts to
    /// act) on Ω̇ (−1/I_w) and the carrier (+a). Without the spin state the slots are not read.
    fn input_partials(&self, x: &ElementInput, d_inputs: &mut DMatrix<f64>) -> bool {
        let Spin::State(sp) = self.spin else {
            return true;
        };
        let m = &x.markers[0];
        let nl = M::STATES.len();
        let (omega, z) = (x.states[nl], x.states[nl + 1]);
        let a: Vector3<f64> = m.rot.column(1).into_owned();
        let omega_r = omega - m.w.dot(&a);
        let z_dot = omega_r - omega_r.abs() * z / sp.stick_angle;
        let brake = if x.inputs.get(1).copied().unwrap_or(0.0) >= 0.0 {
            (z + sp.damping_time * z_dot) / sp.stick_angle
        } else {
            0.0
        };
        let drive_carrier = if sp.drive_reaction_on_carrier {
            -1.0
        } else {
            0.0
        };
        for k in 0..3 {
            d_inputs[(3 + k, 0)] = drive_carrier * a[k];
            d_inputs[(3 + k, 1)] = brake * a[k];
        }
        d_inputs[(6 + nl, 0)] = 1.0 / sp.inertia;
        d_inputs[(6 + nl, 1)] = -brake / sp.inertia;
        true
    }

    /// One contact and one pass of the law for both (the same results as `evaluate` and
    /// `partials` called one after the other, bit for bit).
    fn evaluate_with_partials(
        &self,
        x: &ElementInput,
        out: &mut ElementOutput,
        jac: &mut ElementJacobian,
    ) -> Provided {
        let (drive, brake) = self.torques(x);
        self.partials_and_evaluation(x, drive, brake, jac, Some(out))
    }
}

impl<M: TireModel> TireElement<M> {
    /// Number of element states of the spin model (0 on the spinning body; Ω and z).
    fn n_spin_states(&self) -> usize {
        match self.spin {
            Spin::Body => 0,
            Spin::State(_) => SPIN_STATES.len(),
        }
    }
}

/// Names of the states `spin = "state"` adds after the law's.
pub const SPIN_STATES: &[&str] = &["omega", "brake_angle"];

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
    design: &[MarkerState],
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
    let mut element = TireElement::new(model, road);
    element.spin = spin_model(p, &element, design)?;
    Ok(Arc::new(element))
}

/// The spin model from the parameters `spin`, `spin_inertia`, `brake_stick_angle`,
/// `drive_reaction`, `initial_omega`; the default initial spin rate is free rolling
/// (Ω = v_x / r_e) at the design kinematics of the carrier.
fn spin_model<M: TireModel>(
    p: &ElementParams,
    element: &TireElement<M>,
    design: &[MarkerState],
) -> Result<Spin, String> {
    let state_only = [
        "spin_inertia",
        "drive_reaction",
        "initial_omega",
        "brake_stick_angle",
        "brake_damping_time",
    ];
    match p.text("spin")? {
        None | Some("body") => {
            if let Some(name) = state_only.iter().find(|n| p.has(n)) {
                return Err(format!(
                    "parameter `{name}` applies to spin = \"state\" only; add spin = \"state\" (the marker on a non-spinning wheel carrier) or remove it"
                ));
            }
            Ok(Spin::Body)
        }
        Some("state") => {
            if !p.has("spin_inertia") {
                return Err(
                    "spin = \"state\" needs spin_inertia = ... (polar moment of inertia of the wheel, kg m^2)"
                        .to_string(),
                );
            }
            let inertia = p.positive("spin_inertia")?;
            let stick_angle = p.positive("brake_stick_angle")?;
            let damping_time = p.non_negative("brake_damping_time")?;
            let drive_reaction_on_carrier = match p.text("drive_reaction")? {
                None | Some("carrier") => true,
                Some("none") => false,
                Some(other) => {
                    return Err(format!(
                        "drive_reaction = \"{other}\": use \"carrier\" (the carrier takes the drive torque's reaction) or \"none\" (its source does)"
                    ));
                }
            };
            let initial_omega = if p.has("initial_omega") {
                let w = p.number("initial_omega")?;
                if !w.is_finite() {
                    return Err(format!("parameter `initial_omega` = {w} must be finite"));
                }
                w
            } else {
                let m = design.first().copied().unwrap_or_default();
                let a: Vector3<f64> = m.rot.column(1).into_owned();
                let c = element.contact(&SpinState::wheel(&m, m.w.dot(&a)));
                c.kin.vx / element.model.effective_radius(c.kin.fz, c.kin.rho)
            };
            Ok(Spin::State(SpinState {
                inertia,
                stick_angle,
                damping_time,
                drive_reaction_on_carrier,
                initial_omega,
            }))
        }
        Some(other) => Err(format!(
            "spin = \"{other}\": use \"body\" (the marker's body is the spinning wheel) or \"state\" (a non-spinning carrier with the spin rate as an element state)"
        )),
    }
}

/// The parameter list of kind `M`: `road` and the law's own (made once per kind and kept for
/// the program's life, as [`KindInfo`] holds `'static` slices).
fn parameters<M: TireModel>() -> &'static [ParamInfo] {
    static LISTS: OnceLock<Mutex<BTreeMap<&'static str, &'static [ParamInfo]>>> = OnceLock::new();
    let lists = LISTS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut lists = lists.lock().unwrap_or_else(|e| e.into_inner());
    lists.entry(M::KIND).or_insert_with(|| {
        let mut v = vec![ROAD_PARAMETER];
        v.extend_from_slice(SPIN_PARAMETERS);
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
        inputs: TORQUE_INPUTS,
    }
}

/// Registers the tire element of law `M` (kind [`TireModel::KIND`]).
pub fn register<M: TireModel>(reg: &mut ElementRegistry) {
    reg.register(kind_info::<M>(), build::<M>);
}
