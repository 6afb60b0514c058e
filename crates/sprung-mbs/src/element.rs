//! The common interface of force elements (document 000, Bild 5 and 6): every element computes, from
//! the kinematics of its two markers, the global force and torque it exerts on the body of marker I
//! (the body of marker J receives the opposite), the points where the forces act, and — when asked —
//! the analytic partials of force and torque.
//!
//! Partials are reported in *relative marker form* ([`Partials`]): 3 × 3 blocks with respect to the
//! markers' own perturbations — origin position δp, rotation δφ, origin velocity δv and angular
//! velocity δω, all global — where the blocks of marker J are the negatives of marker I's except for
//! the rotations. Elements therefore never see body coordinates; the pipeline applies the chain rule
//! to the carrying bodies and assembles the body blocks in one pass, skipping the structurally zero
//! blocks. The blocks are small closed forms (e.g. −R K Rᵀ for a bushing's translational stiffness).

use nalgebra::Vector3;

use crate::kinematics::MarkerKin;
use crate::m3::M3;

/// Scalar and vector quantities of an element for output channels.
#[derive(Debug, Clone, Copy, Default)]
pub struct ElementOutput {
    /// Bushing: local force on body_i in marker-J axes; P2P: (f, 0, 0) with f tension-positive, N.
    pub force: Vector3<f64>,
    /// Bushing: local torque on body_i in marker-J axes, Nm.
    pub torque: Vector3<f64>,
    /// Bushing: translational deflection in marker-J axes; P2P: (L - L_design, 0, 0), m.
    pub deflection: Vector3<f64>,
    /// Bushing: rotational deflection (rotation vector or swing vector), rad.
    pub rot_deflection: Vector3<f64>,
    /// P2P: current length, m.
    pub length: f64,
    /// P2P: length rate, m/s.
    pub length_rate: f64,
}

/// Analytic partials of an element's global force F and torque T (on the body of marker I) in
/// *relative marker form*: with respect to the perturbations of the two markers (origin position δp,
/// rotation δφ, origin velocity δv, angular velocity δω, all global).
///
/// Every element of document 000 depends on the relative motion of its markers, so the partials
/// with respect to marker J's δp, δv and δω are the negatives of those with respect to marker I's
/// (`f_p`, `f_v`, `t_w`); the rotation partials are given per end (`f_phi`, `t_phi`) because the
/// element frame turns with marker J. The force depends neither on δω nor the torque on δp or δv.
/// Blocks are padded row-major [`M3`]s, the form the assembly computes with.
/// Flags mark blocks that are structurally zero so that the assembly can skip them.
#[derive(Debug, Clone, Copy)]
pub struct Partials {
    /// ∂F/∂δp_I = −∂F/∂δp_J.
    pub f_p: M3,
    /// ∂F/∂δv_I = −∂F/∂δv_J (zero unless `has_f_v`).
    pub f_v: M3,
    /// ∂F/∂δφ per end [I, J].
    pub f_phi: [M3; 2],
    /// ∂T/∂δφ per end [I, J] (zero unless `has_torque`).
    pub t_phi: [M3; 2],
    /// ∂T/∂δω_I = −∂T/∂δω_J (zero unless `has_torque`).
    pub t_w: M3,
    /// Whether the force depends on the marker velocities at all.
    pub has_f_v: bool,
    /// Whether the torque depends on the state at all (false for point-to-point elements).
    pub has_torque: bool,
}

impl Partials {
    /// All blocks zero.
    pub const ZERO: Self = Self {
        f_p: M3::ZERO,
        f_v: M3::ZERO,
        f_phi: [M3::ZERO; 2],
        t_phi: [M3::ZERO; 2],
        t_w: M3::ZERO,
        has_f_v: false,
        has_torque: false,
    };
}

impl Default for Partials {
    fn default() -> Self {
        Self::ZERO
    }
}

/// Result of one force-element evaluation.
#[derive(Debug, Clone)]
pub struct ElementForce {
    /// Global force on the body of marker I, N (the body of marker J receives `-force`).
    pub force: Vector3<f64>,
    /// Global pure torque on the body of marker I, Nm (the body of marker J receives `-torque`).
    pub torque: Vector3<f64>,
    /// Points of application for the I side and the J side, global.
    pub point: [Vector3<f64>; 2],
    /// Which marker origin (0 = I, 1 = J) is the point of application of each side: the point's
    /// partial is the identity on that end's δp.
    pub point_end: [usize; 2],
    /// Partials of force and torque (relative marker form), filled when asked for.
    pub partials: Partials,
    /// Values for output channels.
    pub out: ElementOutput,
}

impl Default for ElementForce {
    fn default() -> Self {
        Self {
            force: Vector3::zeros(),
            torque: Vector3::zeros(),
            point: [Vector3::zeros(); 2],
            point_end: [0, 0],
            partials: Partials::ZERO,
            out: ElementOutput::default(),
        }
    }
}

/// Marker kinematics of both ends of an element: `[I, J]`.
pub type Ends = [MarkerKin; 2];
