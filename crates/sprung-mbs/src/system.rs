//! The compiled model as a [`MechanicalSystem`] for the integrators of `sprung-solve`:
//! q and its linearisation from the [`Evaluator`], K(r) v from quaternion kinematics, the left
//! inverse of K, and quaternion re-normalisation as the projection after each step.

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_solve::block::BlockPattern;
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::compiled::CompiledModel;
use crate::pipeline::Evaluator;
use crate::rotation::{quat_increment_to_body_rotation, quat_normalise, quat_rate};

/// A compiled model plus its evaluation workspace.
#[derive(Debug, Clone)]
pub struct MbsSystem {
    /// The pipeline (its tables hold the last evaluation).
    pub eval: Evaluator,
    /// Segment signature of the curves at the last linearisation ([`crate::compiled`]).
    lin_segments: u64,
    /// Evaluations of q since creation whose segment signature differed from `lin_segments`
    /// ([`MechanicalSystem::segment_changes`]).
    segment_changes: u64,
}

impl MbsSystem {
    /// Creates the system for `model`.
    pub fn new(model: Arc<CompiledModel>) -> Self {
        Self {
            eval: Evaluator::new(model),
            lin_segments: 0,
            segment_changes: 0,
        }
    }

    /// The compiled model.
    pub fn model(&self) -> &Arc<CompiledModel> {
        self.eval.model()
    }
}

impl MechanicalSystem for MbsSystem {
    fn n_r(&self) -> usize {
        self.model().n_r()
    }

    fn n_v(&self) -> usize {
        self.model().n_v()
    }

    /// The body velocities; the element states follow in their 6-wide blocks.
    fn n_speeds(&self) -> usize {
        self.model().n_body_v()
    }

    fn pattern(&self) -> Arc<BlockPattern> {
        self.model().pattern.clone()
    }

    fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        crate::compiled::take_segment_signature();
        self.eval.accelerations(t, r, v, q);
        if crate::compiled::take_segment_signature() != self.lin_segments {
            self.segment_changes += 1;
        }
    }

    fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        crate::compiled::take_segment_signature();
        self.eval.linearise(t, r, v, lin);
        self.lin_segments = crate::compiled::take_segment_signature();
    }

    fn linearise_congruent(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        crate::compiled::take_segment_signature();
        self.eval.linearise_congruent(t, r, v, lin);
        self.lin_segments = crate::compiled::take_segment_signature();
    }

    /// Counts the evaluations of q whose curve segments ([`sprung_model::Curve::segment`], a
    /// signature over all curve evaluations of the built-in elements) differ from those of
    /// the last linearisation.
    fn segment_changes(&self) -> u64 {
        self.segment_changes
    }

    fn kinematics(&self, r: &[f64], v: &[f64], r_dot: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            r_dot[7 * i..7 * i + 3].copy_from_slice(&v[6 * i..6 * i + 3]);
            let w = Vector3::new(v[6 * i + 3], v[6 * i + 4], v[6 * i + 5]);
            quat_rate(
                &r[7 * i + 3..7 * i + 7],
                &w,
                &mut r_dot[7 * i + 3..7 * i + 7],
            );
        }
    }

    fn tangent(&self, r: &[f64], dr: &[f64], w: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            w[6 * i..6 * i + 3].copy_from_slice(&dr[7 * i..7 * i + 3]);
            let th = quat_increment_to_body_rotation(
                &r[7 * i + 3..7 * i + 7],
                &dr[7 * i + 3..7 * i + 7],
            );
            w[6 * i + 3..6 * i + 6].copy_from_slice(th.as_slice());
        }
        // Element states have no position coordinates.
        w[self.model().n_body_v()..].fill(0.0);
    }

    fn has_kinematic_jacobian(&self) -> bool {
        true
    }

    // For a body, K(r) v = (v_x, ½ q ⊗ (0, ω)) is linear in the quaternion q: G acts on the
    // quaternion part only, G x = ½ x ⊗ (0, ω), a skew-symmetric 4 × 4 matrix Ω with
    // Ω² = −|ω|²/4 I. Hence (I − cG)⁻¹ = (I + cG) / (1 + (c|ω|/2)²), and in body rotation
    // coordinates L (I − cG)⁻¹ K y = (y − (c/2) ω × y) / (1 + (c|ω|/2)²) (unit q).
    fn kinematic_jacobian(&self, _r: &[f64], v: &[f64], x: &[f64], out: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            out[7 * i..7 * i + 3].fill(0.0);
            let w = Vector3::new(v[6 * i + 3], v[6 * i + 4], v[6 * i + 5]);
            quat_rate(&x[7 * i + 3..7 * i + 7], &w, &mut out[7 * i + 3..7 * i + 7]);
        }
    }

    fn kinematic_solve(&self, _r: &[f64], v: &[f64], c: f64, x: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            let w = Vector3::new(v[6 * i + 3], v[6 * i + 4], v[6 * i + 5]);
            let mut gx = [0.0; 4];
            quat_rate(&x[7 * i + 3..7 * i + 7], &w, &mut gx);
            let den = 1.0 + 0.25 * c * c * w.norm_squared();
            for (xk, gk) in x[7 * i + 3..7 * i + 7].iter_mut().zip(gx) {
                *xk = (*xk + c * gk) / den;
            }
        }
    }

    fn kinematic_tangent_solve(&self, _r: &[f64], v: &[f64], c: f64, y: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            let w = Vector3::new(v[6 * i + 3], v[6 * i + 4], v[6 * i + 5]);
            let yr = Vector3::new(y[6 * i + 3], y[6 * i + 4], y[6 * i + 5]);
            let den = 1.0 + 0.25 * c * c * w.norm_squared();
            let out = (yr - 0.5 * c * w.cross(&yr)) / den;
            y[6 * i + 3..6 * i + 6].copy_from_slice(out.as_slice());
        }
    }

    fn project(&self, r: &mut [f64]) {
        for i in 0..self.model().bodies.len() {
            quat_normalise(&mut r[7 * i + 3..7 * i + 7]);
        }
    }
}
