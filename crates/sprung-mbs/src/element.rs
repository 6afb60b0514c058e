//! The common interface of force elements (document 000, Bild 5 and 6): every element computes, from
//! the kinematics of its two markers, the global force and torque it exerts on the body of marker I
//! (the body of marker J receives the opposite), the points where the forces act, and — when asked —
//! the analytic partials of force and torque.
//!
//! Partials are reported in *marker form*: per element end e ∈ {I, J}, four 3 × 3 blocks with respect
//! to the marker's own perturbations — origin position δp_e, rotation δφ_e, origin velocity δv_e and
//! angular velocity δω_e, all global. Elements therefore never see body coordinates; the pipeline
//! applies the chain rule to the carrying body once per end ([`crate::kinematics::MarkerKin::chain`]).
//! Most blocks of an element are small closed forms (e.g. −R K Rᵀ for a bushing's translational
//! stiffness), where the former 3 × 12 layout multiplied mostly zero and identity columns.

use nalgebra::{Matrix3, Vector3};

use crate::kinematics::MarkerKin;

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

/// Partials of one global 3-vector (force or torque) with respect to the marker-level perturbations
/// of one element end (all global): ∂/∂p (origin), ∂/∂φ (rotation), ∂/∂v (origin velocity),
/// ∂/∂ω (angular velocity).
#[derive(Debug, Clone, Copy)]
pub struct EndPartials {
    /// ∂ / ∂(marker origin position).
    pub p: Matrix3<f64>,
    /// ∂ / ∂(marker rotation δφ).
    pub phi: Matrix3<f64>,
    /// ∂ / ∂(marker origin velocity).
    pub v: Matrix3<f64>,
    /// ∂ / ∂(angular velocity).
    pub w: Matrix3<f64>,
}

impl EndPartials {
    /// All blocks zero.
    pub const ZERO: Self = Self {
        p: ZERO3,
        phi: ZERO3,
        v: ZERO3,
        w: ZERO3,
    };
}

const ZERO3: Matrix3<f64> = Matrix3::new(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);

impl Default for EndPartials {
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
    /// ∂force per element end (marker form).
    pub d_force: [EndPartials; 2],
    /// ∂torque per element end (marker form); only meaningful when `torque_partials` is set.
    pub d_torque: [EndPartials; 2],
    /// Whether the torque depends on the state at all (false: `d_torque` is zero and skipped).
    pub torque_partials: bool,
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
            d_force: [EndPartials::ZERO; 2],
            d_torque: [EndPartials::ZERO; 2],
            torque_partials: false,
            out: ElementOutput::default(),
        }
    }
}

/// Marker kinematics of both ends of an element: `[I, J]`.
pub type Ends = [MarkerKin; 2];
