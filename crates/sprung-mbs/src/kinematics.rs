//! Body and marker kinematics — the first two blocks of the evaluation pipeline (document 000, Bild 6).
//!
//! Body state per body l (document 000, eq. 3, with a unit quaternion instead of Euler angles so that
//! no orientation is singular): r_l = (x, y, z, q_w, q_x, q_y, q_z), v_l = (v_x, v_y, v_z global,
//! ω_x, ω_y, ω_z in body axes). Kinematics matrix K per body: ẋ = v, q̇ = ½ q ⊗ (0, ω).
//!
//! Marker partials are expressed for the 12 perturbation coordinates of a two-marker force element
//! (body of marker I: columns 0..6, body of marker J: columns 6..12; per body δx global then the
//! global rotation δφ) and the 12 velocity coordinates (v, ω global) in the same layout.

use nalgebra::{Matrix3, SMatrix, Vector3};

use crate::compiled::{CompiledModel, Marker};
use crate::rotation::{quat_to_matrix, skew};

/// 3 × 12 partial-derivative block of a force element.
pub type M3x12 = SMatrix<f64, 3, 12>;

/// Kinematics of one body at the current state.
#[derive(Debug, Clone, Copy)]
pub struct BodyKin {
    /// Centre of mass, global.
    pub x: Vector3<f64>,
    /// Orientation body → global.
    pub rot: Matrix3<f64>,
    /// Velocity of the centre of mass, global.
    pub v: Vector3<f64>,
    /// Angular velocity, body axes (the generalised velocity).
    pub w_body: Vector3<f64>,
    /// Angular velocity, global axes.
    pub w: Vector3<f64>,
}

impl Default for BodyKin {
    fn default() -> Self {
        Self {
            x: Vector3::zeros(),
            rot: Matrix3::identity(),
            v: Vector3::zeros(),
            w_body: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

impl BodyKin {
    /// Kinematics of body `i` from the state vectors.
    pub fn from_state(i: usize, r: &[f64], v: &[f64]) -> Self {
        let rr = &r[7 * i..7 * i + 7];
        let vv = &v[6 * i..6 * i + 6];
        let rot = quat_to_matrix(&rr[3..7]);
        let w_body = Vector3::new(vv[3], vv[4], vv[5]);
        Self {
            x: Vector3::new(rr[0], rr[1], rr[2]),
            rot,
            v: Vector3::new(vv[0], vv[1], vv[2]),
            w_body,
            w: rot * w_body,
        }
    }
}

/// Kinematics of one marker, plus what the partials need.
#[derive(Debug, Clone, Copy)]
pub struct MarkerKin {
    /// Carrying body (None = ground).
    pub body: Option<usize>,
    /// Origin, global.
    pub x: Vector3<f64>,
    /// Lever arm from the body's centre of mass to the marker origin, global (R s).
    pub arm: Vector3<f64>,
    /// Velocity of the marker origin, global.
    pub v: Vector3<f64>,
    /// Angular velocity of the body, global.
    pub w: Vector3<f64>,
    /// Marker orientation, global (columns = marker axes).
    pub rot: Matrix3<f64>,
}

impl MarkerKin {
    /// Kinematics of `marker` given the body kinematics table.
    pub fn new(marker: &Marker, bodies: &[BodyKin]) -> Self {
        match marker.body {
            None => Self {
                body: None,
                x: marker.position,
                arm: Vector3::zeros(),
                v: Vector3::zeros(),
                w: Vector3::zeros(),
                rot: marker.axes,
            },
            Some(b) => {
                let k = &bodies[b];
                let arm = k.rot * marker.position;
                Self {
                    body: Some(b),
                    x: k.x + arm,
                    arm,
                    v: k.v + k.w.cross(&arm),
                    w: k.w,
                    rot: k.rot * marker.axes,
                }
            }
        }
    }

    /// ∂x / ∂(perturbation) with this marker's body at column offset `o` (0 or 6).
    pub fn d_position(&self, o: usize) -> M3x12 {
        let mut m = M3x12::zeros();
        if self.body.is_some() {
            m.fixed_view_mut::<3, 3>(0, o).copy_from(&Matrix3::identity());
            m.fixed_view_mut::<3, 3>(0, o + 3).copy_from(&(-skew(&self.arm)));
        }
        m
    }

    /// ∂φ (marker rotation) / ∂(perturbation): identity on the body's rotation columns.
    pub fn d_rotation(&self, o: usize) -> M3x12 {
        let mut m = M3x12::zeros();
        if self.body.is_some() {
            m.fixed_view_mut::<3, 3>(0, o + 3).copy_from(&Matrix3::identity());
        }
        m
    }

    /// ∂v / ∂(position perturbation) at fixed global velocities: -[ω]× [arm]× δφ.
    pub fn d_velocity_pos(&self, o: usize) -> M3x12 {
        let mut m = M3x12::zeros();
        if self.body.is_some() {
            m.fixed_view_mut::<3, 3>(0, o + 3).copy_from(&(-skew(&self.w) * skew(&self.arm)));
        }
        m
    }

    /// ∂v / ∂(v, ω global).
    pub fn d_velocity_vel(&self, o: usize) -> M3x12 {
        self.d_position(o)
    }
}

/// Fills the body kinematics table from the state.
pub fn body_kinematics(model: &CompiledModel, r: &[f64], v: &[f64], out: &mut [BodyKin]) {
    for (i, k) in out.iter_mut().enumerate().take(model.bodies.len()) {
        *k = BodyKin::from_state(i, r, v);
    }
}
