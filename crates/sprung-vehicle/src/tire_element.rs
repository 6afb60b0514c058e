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
//!
//! **Initial brake deflection.** A wheel rolling at Ω₀ ≠ 0 (the default initial spin is free
//! rolling) starts with the brake deflection at its sliding steady state z₀ = sgn(Ω₀) φ_s (a
//! wheel at rest: z₀ = 0). While Ω_r keeps its sign, z = sgn(Ω_r) φ_s is an exact fixed point,
//! ż = Ω_r (1 − sgn(Ω_r) z/φ_s) = 0 for every |Ω_r| and every brake torque, and the rate is
//! evaluated as Ω_r − |Ω_r| (z/φ_s) so that it is exactly 0 there in floating point (z/φ_s = ±1
//! exactly): an integrator stays on it exactly. That matters for explicit methods: about the
//! fixed point the deflection relaxes at |Ω_r|/φ_s (3.2e4 1/s for a car wheel at 20 m/s with
//! φ_s = 2 mrad), which explicit Euler at step h integrates stably only for h |Ω_r|/φ_s < 2;
//! started at z = 0 (before), it left the fixed point in its first step and diverged at 1 ms
//! whether a brake acted or not. A deflection off the fixed point (the wheel reversing against
//! its carrier, a held brake) still needs h |Ω_r|/φ_s < 2 for explicit methods
//! (`docs/macro-joint.md`, "Explicit Euler at 1 ms").

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use nalgebra::{DMatrix, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo, ParamInfo};
use sprung_model as sm;

use crate::contact::{Contact, ContactPartials, contact};
use crate::road::Road;
use crate::tire::{
    MAX_STATES, N_FORCES, N_KIN, TireForces, TireModel, TirePartials, VerticalLaw, kin,
};

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
    /// The Dahl brake deflection's rate ż = Ω_r − |Ω_r| (z/φ_s), written once for every
    /// evaluation path: the quotient first, so that at the sliding fixed point z = sgn(Ω_r) φ_s
    /// the rate is exactly 0 in floating point (module docs, "Initial brake deflection").
    #[inline(always)]
    fn deflection_rate(&self, omega_r: f64, z: f64) -> f64 {
        omega_r - omega_r.abs() * (z / self.stick_angle)
    }

    /// The spin balance I_w Ω̇ = T_d − T_b (z + τ_b ż)/φ_s + a·τ (τ: the tire's torque on the wheel about
    /// its centre), the Dahl brake ż = Ω_r − |Ω_r| z/φ_s with Ω_r = Ω − ω_c·a, and the torque the
    /// carrier takes: τ − (a·τ) a + T_b z/φ_s a − I_w Ω (ω_c × a) (− T_d a with the drive
    /// reaction on the carrier).
    #[inline]
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
        let z_dot = self.deflection_rate(omega_r, z);
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
    #[inline(always)]
    pub fn contact(&self, m: &MarkerState) -> Contact {
        contact(&self.road, &self.vertical, m, None)
    }

    /// Law forces and rates at the contact, zeroed when the tire carries no load.
    #[inline(always)]
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

    /// [`Self::evaluate_with_torques`] compiled for AVX, as
    /// [`Self::partials_and_evaluation_avx`] is for the evaluation with partials: the contact,
    /// the law (TMeasy's `f64` pass is `#[inline(always)]` down to its formulas) and the wrench
    /// run with AVX's three-operand instructions, the road query and the C library's functions
    /// stay calls. The same operations, so the same results bit for bit (no contraction into
    /// fused multiply-adds); about 2 k fewer instructions per step of the 12-tire truck, most of
    /// them the register copies of the two-operand SSE2 forms.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn evaluate_avx(
        &self,
        _token: sprung_mbs::m3::Avx2,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        out: &mut ElementOutput,
    ) {
        self.evaluate_with_torques(x, drive, brake, out)
    }

    /// [`ElementLaw::evaluate`] with the drive torque T_d and the brake torque T_b (≥ 0; the
    /// largest friction torque of the brake) given, N m; they act only with `spin = "state"`.
    #[inline(always)]
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
        let r_e = self.model.effective_radius(c.kin.fz, c.kin.rho);
        let (force, torque) = wrench(&c, &f);
        self.write_evaluation(
            x,
            &c,
            (&f, force, torque),
            &rates[..ns],
            r_e,
            drive,
            brake,
            out,
        );
    }

    /// Writes the element's forces, torques, state rates and outputs from the contact `c`, the
    /// law's forces `f` (zero when the tire carries no load) with the wheel's force and torque
    /// ([`wrench`]), rates `law_rates` and effective rolling radius `r_e`: the common end of
    /// [`Self::evaluate_with_torques`] and of the one-pass evaluation with partials.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn write_evaluation(
        &self,
        x: &ElementInput,
        c: &Contact,
        (f, force, torque): (&TireForces, Vector3<f64>, Vector3<f64>),
        law_rates: &[f64],
        r_e: f64,
        drive: f64,
        brake: f64,
        out: &mut ElementOutput,
    ) {
        let ns = M::STATES.len();
        let m = &x.markers[0];
        let spin_states = &x.states[ns..];
        out.state_rates[..ns].copy_from_slice(law_rates);
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
    ///
    /// The columns are formed by group with the contact's structure known here
    /// ([`KinRows`]): a velocity column moves v_x, v_y and F_z only, an angular-velocity
    /// column v_y, Ω and ψ̇, a position column on a flat road F_z, ρ and v_y; inputs the law
    /// does not read ([`TireModel::KIN_USED`]) are skipped at compile time.
    #[inline(always)]
    fn partials_and_evaluation(
        &self,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        jac: &mut ElementJacobian,
        out: Option<&mut ElementOutput>,
    ) -> Provided {
        // The columns of the chain rule are 6 + (the law's states) long (a constant of the
        // law: only one arm is taken; PAC2002 and the linear tire 8, TMeasy 9).
        match M::STATES.len() {
            0..=2 => self.partials_and_evaluation_in::<8>(x, drive, brake, jac, out),
            3 => self.partials_and_evaluation_in::<9>(x, drive, brake, jac, out),
            _ => self.partials_and_evaluation_in::<G_MAX>(x, drive, brake, jac, out),
        }
    }

    /// [`Self::partials_and_evaluation`] with the evaluation, compiled for AVX: the contact,
    /// the law's dual-number pass and the chain rule are inlined into it (`#[inline(always)]`
    /// down to the law's formulas; the road query and the C library's functions are calls), so
    /// they run with AVX's three-operand instructions: about 15 % fewer instructions than the
    /// SSE2 copy (mostly the register copies the two-operand SSE2 forms need). Rust does not
    /// contract `a * b + c` into fused multiply-adds, so the operations and their results are
    /// those of the portable copy bit for bit (`tests/tire_element_one_pass.rs` compares this
    /// copy with `evaluate` and `partials`). Dispatched with the workspace's one SIMD idiom, the
    /// AVX2 + FMA token (`sprung_solve::cpu::Avx2Fma`, re-exported as `sprung_mbs::m3::Avx2`):
    /// holding it proves AVX, a subset of what it stands for. The copy is compiled for AVX alone
    /// because valgrind 3.19 cannot decode one instruction of the `avx2,fma` build (instruction
    /// counts of the tire would need the portable copy then) and AVX2 gained nothing here.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn partials_and_evaluation_avx(
        &self,
        _token: sprung_mbs::m3::Avx2,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        jac: &mut ElementJacobian,
        out: &mut ElementOutput,
    ) -> Provided {
        self.partials_and_evaluation(x, drive, brake, jac, Some(out))
    }

    /// [`Self::partials_and_evaluation`] with columns of length `G` ≥ 6 + the law's states.
    #[inline(always)]
    fn partials_and_evaluation_in<const G: usize>(
        &self,
        x: &ElementInput,
        drive: f64,
        brake: f64,
        jac: &mut ElementJacobian,
        out: Option<&mut ElementOutput>,
    ) -> Provided {
        let ns = M::STATES.len();
        const { assert!(G <= G_MAX) };
        assert!(6 + ns <= G);
        let m = &x.markers[0];
        let (law_states, spin_states) = x.states.split_at(ns);
        // With the spin as a state the contact sees the wheel: the carrier's marker turning
        // with Ω about the spin axis.
        let spinning = match self.spin {
            Spin::State(_) => Some(SpinState::wheel(m, spin_states[0])),
            _ => None,
        };
        let mut cp = ContactPartials::default();
        let c = contact(
            &self.road,
            &self.vertical,
            spinning.as_ref().unwrap_or(m),
            Some(&mut cp),
        );
        let mut tp = TirePartials::default();
        let ch = self.chain::<G>(&c, law_states, &cp, &mut tp);
        if let Some(out) = out {
            self.write_evaluation(
                x,
                &c,
                (&ch.forces, ch.force, ch.torque),
                &ch.rates[..ns],
                ch.effective_radius,
                drive,
                brake,
                out,
            );
        }
        let Spin::State(sp) = self.spin else {
            let rows = KinRows::<M>::new(&cp);
            for k in 0..3 {
                let g = rows.position(&ch, k);
                put(column(jac.position, k), &g, ns);
                let g = rows.rotation(&ch, k, None);
                put(column(jac.position, 3 + k), &g, ns);
                let g = rows.velocity(&ch, k);
                put(column(jac.velocity, k), &g, ns);
                let g = ch.law::<M, 3>(OMEGA_ROWS, rows.w[k]);
                put(column(jac.velocity, 3 + k), &g, ns);
            }
            for j in 0..ns {
                let (df, dt) = ch.state(j);
                let dst = &mut column(jac.velocity, 6 + j)[..6 + ns];
                dst[..3].copy_from_slice(df.as_slice());
                dst[3..6].copy_from_slice(dt.as_slice());
                for (i, d) in dst[6..].iter_mut().enumerate() {
                    *d = ch.tp.states[N_FORCES + i][j];
                }
            }
            return Provided::ALL;
        };
        let (omega, z) = (spin_states[0], spin_states[1]);
        let rows = KinRows::<M>::new(&cp);
        // Columns (δp, δφ, δv, δω) of the wheel → (δp, δφ, δv, δω, δΩ) of the carrier and the
        // spin state: ω_w = ω_c − (ω_c·a) a + Ω a with δa = −[a]× δφ. The map is the identity
        // on (δp, δφ, δv) except that δω_w also moves with δφ ((a wᵀ − (Ω − ω_c·a) I)[a]×),
        // δω_c (I − a aᵀ) and δΩ (a): of the contact's partials only the rows that move with
        // δω_w (v_y, Ω, ψ̇) are mapped: a row k of ∂kin/∂ω_w gives k·a on δΩ, k − (k·a) a on
        // δω_c and ((k·a) ω_c − s k) × a on δφ.
        let a: Vector3<f64> = m.rot.column(1).into_owned();
        let w = m.w;
        let wa = w.dot(&a);
        let s_w = omega - wa;
        let mut kw = [Vector3::zeros(); 3];
        let mut ka = [0.0; 3];
        let mut phi = [Vector3::zeros(); 3];
        for r in 0..3 {
            kw[r] = Vector3::new(rows.w[0][r], rows.w[1][r], rows.w[2][r]);
            ka[r] = kw[r].dot(&a);
            phi[r] = (w * ka[r] - kw[r] * s_w).cross(&a);
        }
        let brake = brake.max(0.0);
        let tau = ch.torque;
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
        let z_dot = sp.deflection_rate(omega_r, z);
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
        let inv_i = 1.0 / sp.inertia;
        let (iw, iz) = (6 + ns, 7 + ns);
        let fin = SpinColumn {
            a,
            z_fac,
            k_bt,
            inv_i,
            ns,
        };
        for k in 0..3 {
            let g = rows.position(&ch, k);
            fin.put_plain(column(jac.position, k), &g);
            let g = rows.rotation(&ch, k, Some([phi[0][k], phi[1][k], phi[2][k]]));
            let ek_a = Vector3::ith(k, 1.0).cross(&a);
            let extra = ek_a * s_phi - w.cross(&ek_a) * io;
            fin.put(column(jac.position, 3 + k), &g, axt[k], wxa[k], &extra);
            let g = rows.velocity(&ch, k);
            fin.put_plain(column(jac.velocity, k), &g);
            let gk = [
                kw[0][k] - ka[0] * a[k],
                kw[1][k] - ka[1] * a[k],
                kw[2][k] - ka[2] * a[k],
            ];
            let g = ch.law::<M, 3>(OMEGA_ROWS, gk);
            let extra = a.cross(&Vector3::ith(k, 1.0)) * io;
            fin.put(column(jac.velocity, 3 + k), &g, 0.0, -a[k], &extra);
        }
        let g = ch.law::<M, 3>(OMEGA_ROWS, ka);
        fin.put(column(jac.velocity, iw), &g, 0.0, 1.0, &(-wxa * sp.inertia));
        let v = &mut *jac.velocity;
        for r in 0..3 {
            // Brake deflection: the brake torque on the wheel (−) and the carrier (+).
            v[(3 + r, iz)] = a[r] * d_t_bk_z;
        }
        v[(iw, iz)] = -d_t_bk_z * inv_i;
        v[(iz, iz)] = dzdot_dz;
        // Law-state columns: the wheel torque's share goes to the spin (a·) and the carrier.
        for j in 0..ns {
            let (df, dt) = ch.state(j);
            let dt_a = a.dot(&dt);
            let dtc = dt - a * dt_a;
            let dst = &mut column(v, 6 + j)[..8 + ns];
            dst[..3].copy_from_slice(df.as_slice());
            dst[3..6].copy_from_slice(dtc.as_slice());
            for (i, d) in dst[6..6 + ns].iter_mut().enumerate() {
                *d = ch.tp.states[N_FORCES + i][j];
            }
            dst[iw] = dt_a * inv_i;
        }
        Provided::ALL
    }

    /// The law at the contact `c` with its partials (into `tp`, which arrives zeroed), and what
    /// the chain rule to the wheel's force, torque and law rates needs ([`Chain`]; its columns
    /// are formed by [`Chain::law`] and [`Chain::frame`] through [`KinRows`]).
    // Range loops over the rows: the iterator form (take/skip) costs ~150 instructions more.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn chain<'a, const G: usize>(
        &self,
        c: &'a Contact,
        states: &[f64],
        cp: &'a ContactPartials,
        tp: &'a mut TirePartials,
    ) -> Chain<'a, G> {
        let ns = M::STATES.len();
        let mut rates = [0.0; MAX_STATES];
        let mut f = TireForces::default();
        let effective_radius = self.model.evaluate_with_partials_and_radius(
            &c.kin,
            states,
            &mut f,
            &mut rates[..ns],
            tp,
        );
        // The force rows are zero when the tire carries no load.
        let rows = if c.in_contact { 0 } else { N_FORCES };
        if !c.in_contact {
            f = TireForces::default();
            for r in &mut tp.states[..N_FORCES] {
                *r = [0.0; MAX_STATES];
            }
        }
        let tp = &*tp;
        let (force, torque) = wrench(c, &f);
        let e_x: Vector3<f64> = c.frame.column(0).into_owned();
        let e_y: Vector3<f64> = c.frame.column(1).into_owned();
        let n: Vector3<f64> = c.frame.column(2).into_owned();
        // Per kinematic input k the law reads: ∂F = e_x ∂f_x + e_y ∂f_y + n ∂F_z,
        // ∂T = e_x ∂m_x + e_y ∂m_y + n ∂m_z − r_s e_u × ∂F and the law's rates, so that a
        // column is Σ_k g_k G_k ([`Chain::law`]; the others are never read).
        let mut per_kin = [[0.0; G]; N_KIN];
        for (k, gk) in per_kin.iter_mut().enumerate() {
            if k != kin::FZ && !M::KIN_USED[k] {
                continue;
            }
            let l = |r: usize| if r >= rows { tp.kin[r][k] } else { 0.0 };
            let mut df = e_x * l(0) + e_y * l(1);
            if k == kin::FZ {
                df += n;
            }
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
            tp,
            forces: f,
            rates,
            effective_radius,
            per_kin,
            force,
            torque,
            e_uxf: c.up.cross(&force),
            e_x,
            e_y,
            n,
        }
    }
}

/// Longest column of the chain rule: ∂F, ∂T, then the law's rates (`G` in [`Chain`]: 6 + the
/// law's number of states).
const G_MAX: usize = 6 + MAX_STATES;

/// The law's values and partials at a contact, for the chain rule to the wheel's force, torque
/// and law rates (see [`TireElement::chain`]).
struct Chain<'a, const G: usize> {
    c: &'a Contact,
    cp: &'a ContactPartials,
    /// The law's forces at the evaluation (zero when the tire carries no load).
    forces: TireForces,
    /// The law's state rates at the evaluation.
    rates: [f64; MAX_STATES],
    /// The law's effective rolling radius at the evaluation, m.
    effective_radius: f64,
    /// (∂F, ∂T, ∂(law rates)) per unit of kinematic input k, by k.
    per_kin: [[f64; G]; N_KIN],
    /// The law's partials (force rows zero when the tire carries no load).
    tp: &'a TirePartials,
    /// The wheel's force F (global).
    force: Vector3<f64>,
    /// The wheel's torque about its centre (global).
    torque: Vector3<f64>,
    /// e_u × F.
    e_uxf: Vector3<f64>,
    e_x: Vector3<f64>,
    e_y: Vector3<f64>,
    n: Vector3<f64>,
}

/// Rows of the contact's kinematic partials that move with the wheel's angular velocity
/// (`crate::contact`: v_y through the contact point's lever arm, Ω, ψ̇).
const OMEGA_ROWS: [usize; 3] = [kin::VY, kin::OMEGA, kin::PSI_DOT];
/// Rows that move with the wheel centre's velocity (v_x, v_y, F_z through the damping).
const VELOCITY_ROWS: [usize; 3] = [kin::VX, kin::VY, kin::FZ];
/// Rows that move with the position on a flat road (F_z and ρ through the distance, v_y through
/// the loaded radius).
const FLAT_POSITION_ROWS: [usize; 3] = [kin::FZ, kin::RHO, kin::VY];
/// Rows that move with the rotation (all but ψ̇: the normal does not turn with δφ).
const ROTATION_ROWS: [usize; 6] = [kin::FZ, kin::RHO, kin::VX, kin::VY, kin::OMEGA, kin::GAMMA];
/// All kinematic rows.
const ALL_ROWS: [usize; N_KIN] = [0, 1, 2, 3, 4, 5, 6];

/// The contact's kinematic partials by column group, for the columns of the chain rule
/// ([`Chain::law`] over the rows that move with each group).
struct KinRows<'a, M> {
    cp: &'a ContactPartials,
    /// ∂(v_y, Ω, ψ̇)/∂ω of the wheel ([`OMEGA_ROWS`]).
    w: [[f64; 3]; 3],
    law: std::marker::PhantomData<fn() -> M>,
}

impl<'a, M: TireModel> KinRows<'a, M> {
    fn new(cp: &'a ContactPartials) -> Self {
        Self {
            cp,
            w: [
                gather(&cp.kin, OMEGA_ROWS, 9),
                gather(&cp.kin, OMEGA_ROWS, 10),
                gather(&cp.kin, OMEGA_ROWS, 11),
            ],
            law: std::marker::PhantomData,
        }
    }

    /// Column δp_k: ∂F, ∂T, ∂(law rates).
    #[inline(always)]
    fn position<const G: usize>(&self, ch: &Chain<G>, k: usize) -> [f64; G] {
        let kin = &self.cp.kin;
        if self.cp.flat {
            // The frame does not turn; only the lever arm r_s changes: −∂r_s e_u × F.
            let mut g = ch.law::<M, 3>(FLAT_POSITION_ROWS, gather(kin, FLAT_POSITION_ROWS, k));
            let drs = self.cp.loaded_radius[k];
            for i in 0..3 {
                g[3 + i] -= ch.e_uxf[i] * drs;
            }
            g
        } else {
            let mut g = ch.law::<M, N_KIN>(ALL_ROWS, gather(kin, ALL_ROWS, k));
            ch.frame(&mut g, k, true);
            g
        }
    }

    /// Column δφ_k; `spin` adds the spin-state map's ∂(v_y, Ω, ψ̇)/∂φ_k (the wheel's ω turns
    /// with the carrier's axis).
    #[inline(always)]
    fn rotation<const G: usize>(
        &self,
        ch: &Chain<G>,
        k: usize,
        spin: Option<[f64; 3]>,
    ) -> [f64; G] {
        let kin = &self.cp.kin;
        let c = 3 + k;
        let mut g = match spin {
            None => ch.law::<M, 6>(ROTATION_ROWS, gather(kin, ROTATION_ROWS, c)),
            Some(p) => {
                let mut gk = gather(kin, ALL_ROWS, c);
                for (i, &r) in OMEGA_ROWS.iter().enumerate() {
                    gk[r] += p[i];
                }
                ch.law::<M, N_KIN>(ALL_ROWS, gk)
            }
        };
        ch.frame(&mut g, c, false);
        g
    }

    /// Column δv_k.
    #[inline(always)]
    fn velocity<const G: usize>(&self, ch: &Chain<G>, k: usize) -> [f64; G] {
        ch.law::<M, 3>(VELOCITY_ROWS, gather(&self.cp.kin, VELOCITY_ROWS, 6 + k))
    }
}

/// The entries `rows` of column `c` of the contact's kinematic partials.
#[inline(always)]
fn gather<const K: usize>(
    m: &nalgebra::SMatrix<f64, N_KIN, 12>,
    rows: [usize; K],
    c: usize,
) -> [f64; K] {
    let mut g = [0.0; K];
    for i in 0..K {
        g[i] = m[(rows[i], c)];
    }
    g
}

/// What a column of the spin-state form needs besides the law's part (see
/// `partials_and_evaluation`): the axis a, ∂ż/∂Ω_r, k_b τ_b, 1/I_w and the law's state count.
struct SpinColumn {
    a: Vector3<f64>,
    z_fac: f64,
    k_bt: f64,
    inv_i: f64,
    ns: usize,
}

impl SpinColumn {
    /// Writes a column from the law's part `g` (∂F, ∂τ, law rates), the extra ∂(a·τ) `dta0`,
    /// ∂Ω_r `d_or` and the extra carrier torque `extra`: g_Ω = a·∂τ + dta0 − k_b τ_b ∂ż,
    /// ∂τ_c = ∂τ − a g_Ω + extra, Ω̇ = g_Ω/I_w, ∂ż = ∂Ω_r (1 − sgn Ω_r z/φ_s).
    #[inline(always)]
    fn put<const G: usize>(
        &self,
        dst: &mut [f64],
        g: &[f64; G],
        dta0: f64,
        d_or: f64,
        extra: &Vector3<f64>,
    ) {
        let ns = self.ns;
        let dst = &mut dst[..8 + ns];
        let a = &self.a;
        let dtau = Vector3::new(g[3], g[4], g[5]);
        let dzd = d_or * self.z_fac;
        let gg = a.dot(&dtau) + dta0 - self.k_bt * dzd;
        let dtc = dtau - a * gg + extra;
        dst[..3].copy_from_slice(&g[..3]);
        dst[3..6].copy_from_slice(dtc.as_slice());
        dst[6..6 + ns].copy_from_slice(&g[6..6 + ns]);
        dst[6 + ns] = gg * self.inv_i;
        dst[7 + ns] = dzd;
    }

    /// [`Self::put`] for a column that moves neither Ω_r nor the carrier's torque besides
    /// through τ (δp, δv): g_Ω = a·∂τ, ∂ż = 0.
    #[inline(always)]
    fn put_plain<const G: usize>(&self, dst: &mut [f64], g: &[f64; G]) {
        let ns = self.ns;
        let dst = &mut dst[..8 + ns];
        let a = &self.a;
        let dtau = Vector3::new(g[3], g[4], g[5]);
        let gg = a.dot(&dtau);
        let dtc = dtau - a * gg;
        dst[..3].copy_from_slice(&g[..3]);
        dst[3..6].copy_from_slice(dtc.as_slice());
        dst[6..6 + ns].copy_from_slice(&g[6..6 + ns]);
        dst[6 + ns] = gg * self.inv_i;
        dst[7 + ns] = 0.0;
    }
}

/// Writes a column of the spinning-body form: ∂F, ∂T, then the `ns` law rates.
#[inline(always)]
fn put<const G: usize>(dst: &mut [f64], g: &[f64; G], ns: usize) {
    dst[..6 + ns].copy_from_slice(&g[..6 + ns]);
}

impl<const G: usize> Chain<'_, G> {
    /// The part of a column through the law: Σ_k g_k G_k over the kinematic inputs `rows`
    /// with g_k = ∂(input k)/∂(column), skipping inputs the law does not read
    /// ([`TireModel::KIN_USED`]; F_z always counts: it is the normal force itself). One
    /// accumulation per input instead of the law's rows followed by the frame products per
    /// column: the same partials up to the order of the sums.
    #[inline(always)]
    fn law<M: TireModel, const K: usize>(&self, rows: [usize; K], g: [f64; K]) -> [f64; G] {
        let mut acc = [0.0; G];
        for (&k, &gk) in rows.iter().zip(&g) {
            if k != kin::FZ && !M::KIN_USED[k] {
                continue;
            }
            for (d, s) in acc.iter_mut().zip(&self.per_kin[k]) {
                *d += s * gk;
            }
        }
        acc
    }

    /// Adds the contact frame's turning and the lever arm's change in the position column `k`
    /// of the contact's direction blocks (0..6: δp, δφ): ∂E (f, m) and −∂r_s e_u × F
    /// − r_s ∂e_u × F, with F = f_x e_x + f_y e_y + F_z n and T = m_x e_x + m_y e_y + m_z n
    /// − r_s e_u × F. `normal`: whether the normal moves with the column (δp off a flat road).
    #[inline(always)]
    fn frame(&self, acc: &mut [f64; G], k: usize, normal: bool) {
        let (cp, f, r_s) = (self.cp, &self.forces, self.c.loaded_radius);
        let col = |m: &crate::contact::G3| Vector3::new(m[(0, k)], m[(1, k)], m[(2, k)]);
        let (dex, dey, dup) = (col(&cp.e_x), col(&cp.e_y), col(&cp.up));
        let mut df = dex * f.fx + dey * f.fy;
        let mut dt = dex * f.mx + dey * f.my;
        if normal {
            let dn = col(&cp.n);
            df += dn * self.c.kin.fz;
            dt += dn * f.mz;
        }
        dt += self.force.cross(&dup) * r_s
            - self.e_uxf * cp.loaded_radius[k]
            - self.c.up.cross(&df) * r_s;
        for i in 0..3 {
            acc[i] += df[i];
            acc[3 + i] += dt[i];
        }
    }

    /// ∂F and ∂T over the law state j.
    #[inline(always)]
    fn state(&self, j: usize) -> (Vector3<f64>, Vector3<f64>) {
        let l = |r: usize| self.tp.states[r][j];
        let df = self.e_x * l(0) + self.e_y * l(1);
        let dt = self.e_x * l(2) + self.e_y * l(3) + self.n * l(4)
            - self.c.up.cross(&df) * self.c.loaded_radius;
        (df, dt)
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
    /// The law's states 0; the spin Ω₀ (`initial_omega`) and the brake deflection at its
    /// sliding steady state z₀ = sgn(Ω₀) φ_s (module docs, "Initial brake deflection"; 0 for a
    /// wheel at rest).
    fn initial_states(&self, states: &mut [f64]) {
        states.fill(0.0);
        if let Spin::State(sp) = self.spin {
            let ns = M::STATES.len();
            states[ns] = sp.initial_omega;
            states[ns + 1] = if sp.initial_omega > 0.0 {
                sp.stick_angle
            } else if sp.initial_omega < 0.0 {
                -sp.stick_angle
            } else {
                0.0
            };
        }
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }
    fn inputs(&self) -> &[OutputInfo] {
        TORQUE_INPUTS
    }

    /// On CPUs with AVX in a copy compiled for it ([`TireElement::evaluate_avx`], the same
    /// results).
    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        let (drive, brake) = self.torques(x);
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = sprung_mbs::m3::Avx2::detect() {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA, hence with AVX.
            return unsafe { self.evaluate_avx(token, x, drive, brake, out) };
        }
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
        let z_dot = sp.deflection_rate(omega_r, z);
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
    /// `partials` called one after the other, bit for bit); on CPUs with AVX in a copy compiled
    /// for it ([`TireElement::partials_and_evaluation_avx`], the same results).
    fn evaluate_with_partials(
        &self,
        x: &ElementInput,
        out: &mut ElementOutput,
        jac: &mut ElementJacobian,
    ) -> Provided {
        let (drive, brake) = self.torques(x);
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = sprung_mbs::m3::Avx2::detect() {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA, hence with AVX.
            return unsafe { self.partials_and_evaluation_avx(token, x, drive, brake, jac, out) };
        }
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
