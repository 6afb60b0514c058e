//! The common interface of force elements (document 000, Bild 5 and 6): every element computes, from
//! the kinematics of its two markers, the global force and torque it exerts on the body of marker I
//! (the body of marker J receives the opposite), the points where the forces act, and — when asked —
//! the analytic partials of all of these with respect to the 12 position perturbations and the 12
//! velocities of its two bodies (layout in [`crate::kinematics`]).

use nalgebra::Vector3;

use crate::kinematics::{M3x12, MarkerKin};

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

/// Result of one force-element evaluation.
#[derive(Debug, Clone)]
pub struct ElementForce {
    /// Global force on the body of marker I, N (the body of marker J receives `-force`).
    pub force: Vector3<f64>,
    /// Global pure torque on the body of marker I, Nm (the body of marker J receives `-torque`).
    pub torque: Vector3<f64>,
    /// Points of application for the I side and the J side, global.
    pub point: [Vector3<f64>; 2],
    /// ∂force / ∂positions (12 columns).
    pub d_force_r: M3x12,
    /// ∂force / ∂velocities.
    pub d_force_v: M3x12,
    /// ∂torque / ∂positions.
    pub d_torque_r: M3x12,
    /// ∂torque / ∂velocities.
    pub d_torque_v: M3x12,
    /// ∂point / ∂positions for both sides.
    pub d_point: [M3x12; 2],
    /// Values for output channels.
    pub out: ElementOutput,
}

impl Default for ElementForce {
    fn default() -> Self {
        Self {
            force: Vector3::zeros(),
            torque: Vector3::zeros(),
            point: [Vector3::zeros(); 2],
            d_force_r: M3x12::zeros(),
            d_force_v: M3x12::zeros(),
            d_torque_r: M3x12::zeros(),
            d_torque_v: M3x12::zeros(),
            d_point: [M3x12::zeros(); 2],
            out: ElementOutput::default(),
        }
    }
}

/// Marker kinematics of both ends of an element: `[I, J]`.
pub type Ends = [MarkerKin; 2];
