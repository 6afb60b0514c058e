//! Body and marker kinematics — the first two blocks of the evaluation pipeline (document 000, Bild 6).
//!
//! Body state per body l (document 000, eq. 3, with a unit quaternion instead of Euler angles so that
//! no orientation is singular): r_l = (x, y, z, q_w, q_x, q_y, q_z), v_l = (v_x, v_y, v_z global,
//! ω_x, ω_y, ω_z in body axes). Kinematics matrix K per body: ẋ = v, q̇ = ½ q ⊗ (0, ω).
//!
//! Force elements report partials with respect to their markers' own perturbations (position,
//! rotation, velocity, angular velocity, all global; [`crate::element`]); the pipeline maps them to
//! the carrying body's perturbations (δx, δφ, v, ω global) with the lever arm and angular velocity
//! kept here.

use nalgebra::{Matrix3, Vector3};

use crate::compiled::{CompiledModel, Marker};
use crate::m3::{Lanes, M3, Portable};
use crate::rotation::quat_to_matrix;

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
    /// `rot` as padded rows, for the four-lane products of the marker frames.
    pub rot_rows: M3,
}

impl Default for BodyKin {
    fn default() -> Self {
        Self {
            x: Vector3::zeros(),
            rot: Matrix3::identity(),
            rot_rows: M3::IDENTITY,
            v: Vector3::zeros(),
            w_body: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

impl BodyKin {
    /// Kinematics of body `i` from the state vectors.
    #[inline(always)]
    pub fn from_state(i: usize, r: &[f64], v: &[f64]) -> Self {
        let rr: &[f64; 7] = r[7 * i..7 * i + 7].try_into().expect("7 coordinates");
        let vv: &[f64; 6] = v[6 * i..6 * i + 6].try_into().expect("6 coordinates");
        Self::from_blocks(rr, vv)
    }

    /// Kinematics of a body from its position block (x, q) and velocity block (v, ω_body).
    #[inline(always)]
    pub fn from_blocks(rr: &[f64; 7], vv: &[f64; 6]) -> Self {
        let rot = quat_to_matrix(&rr[3..7]);
        let w_body = Vector3::new(vv[3], vv[4], vv[5]);
        Self {
            x: Vector3::new(rr[0], rr[1], rr[2]),
            rot,
            v: Vector3::new(vv[0], vv[1], vv[2]),
            w_body,
            w: rot * w_body,
            rot_rows: M3::from_matrix(&rot),
        }
    }

    /// Kinematics of a body from its frame, every vector global: centre of mass `x`,
    /// orientation `rot`, velocity `v`, angular velocity `w` (what the joint trees compute,
    /// [`crate::joints::JointWork::kinematics`]); ω in body axes is Rᵀ ω. No quaternion in
    /// between: R and ω as given, not rebuilt from a quaternion and the body-axis ω.
    #[inline(always)]
    pub fn from_frame(
        x: Vector3<f64>,
        rot: Matrix3<f64>,
        v: Vector3<f64>,
        w: Vector3<f64>,
    ) -> Self {
        Self {
            x,
            rot,
            v,
            w_body: rot.transpose() * w,
            w,
            rot_rows: M3::from_matrix(&rot),
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
    /// Marker orientation, global (columns = marker axes), as padded rows.
    pub rot: M3,
}

impl MarkerKin {
    /// Kinematics of `marker` given the body kinematics table (portable arithmetic).
    #[inline(always)]
    pub fn new(marker: &Marker, bodies: &[BodyKin]) -> Self {
        Self::with_axes(Portable, marker, false, bodies)
    }

    /// [`MarkerKin::new`] with the four-lane arithmetic `l` for the marker frame, for a marker
    /// whose [`has_body_axes`] is `body_axes` (when set, the frame is the body's rotation as it
    /// is, without the product with the identity: the same values, up to the sign of a zero
    /// entry).
    #[inline(always)]
    pub fn with_axes<L: Lanes>(l: L, marker: &Marker, body_axes: bool, bodies: &[BodyKin]) -> Self {
        match marker.body {
            None => Self {
                body: None,
                x: marker.position,
                arm: Vector3::zeros(),
                v: Vector3::zeros(),
                w: Vector3::zeros(),
                rot: M3::from_matrix(&marker.axes),
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
                    rot: if body_axes {
                        k.rot_rows
                    } else {
                        k.rot_rows.mul(l, &M3::from_matrix(&marker.axes))
                    },
                }
            }
        }
    }
}

/// Whether `marker`'s axes are those of its body (the identity; on the ground: the global
/// axes). Most markers are: their frame is then the body's rotation itself, and the evaluation
/// skips the 3 × 3 product with the identity ([`MarkerKin::with_axes`], the open elements'
/// marker states, the element packs). The product with the identity returns every nonzero entry
/// exactly, so both give the same bits up to the sign of an entry that is exactly zero.
pub fn has_body_axes(marker: &Marker) -> bool {
    marker.axes == Matrix3::identity()
}

/// \[a\]× M: the cross product of `a` with every column of `m`.
#[inline(always)]
pub fn skew_mul(a: &Vector3<f64>, m: &Matrix3<f64>) -> Matrix3<f64> {
    let c = |j: usize| {
        let x = m.column(j);
        Vector3::new(
            a.y * x[2] - a.z * x[1],
            a.z * x[0] - a.x * x[2],
            a.x * x[1] - a.y * x[0],
        )
    };
    Matrix3::from_columns(&[c(0), c(1), c(2)])
}

/// Fills the rows `which` of the body kinematics table from the state; the other rows keep
/// what they hold.
#[inline(always)]
pub fn body_kinematics_of(which: &[usize], r: &[f64], v: &[f64], out: &mut [BodyKin]) {
    for &b in which {
        out[b] = BodyKin::from_state(b, r, v);
    }
}

/// Fills the body kinematics table from the state.
#[inline(always)]
pub fn body_kinematics(model: &CompiledModel, r: &[f64], v: &[f64], out: &mut [BodyKin]) {
    let nb = model.bodies.len();
    let blocks = r[..7 * nb]
        .as_chunks::<7>()
        .0
        .iter()
        .zip(v[..6 * nb].as_chunks::<6>().0);
    for (k, (rr, vv)) in out.iter_mut().zip(blocks) {
        *k = BodyKin::from_blocks(rr, vv);
    }
}
