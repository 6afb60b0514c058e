//! The compiled model as a [`MechanicalSystem`] for the integrators of `sprung-solve`:
//! q and its linearisation from the [`Evaluator`], K(r) v from quaternion kinematics, the left
//! inverse of K, and quaternion re-normalisation as the projection after each step.
//!
//! A model with ideal joints ([`crate::joints`], `docs/joints.md`) keeps the layout "block i =
//! body i", but a jointed body's slots hold its joint coordinate and rate (K = I there, no
//! normalisation): q and the linearisation expand the state to full body poses, call the
//! evaluator, and project onto the tree coordinates ([`JointWork`]). A model without joints
//! takes exactly the free-body path (one branch per call).

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_solve::block::BlockPattern;
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::compiled::CompiledModel;
use crate::joints::JointWork;
use crate::pipeline::Evaluator;
use crate::rotation::{quat_increment_to_body_rotation, quat_normalise, quat_rate};
use crate::simulate::{Limits, Violation};

/// A compiled model plus its evaluation workspace.
#[derive(Debug, Clone)]
pub struct MbsSystem {
    /// The pipeline (its tables hold the last evaluation).
    pub eval: Evaluator,
    /// The evaluator's model, held here too: the q path borrows it beside the evaluator and
    /// the joints' workspace without a reference-count update (two atomic operations) per call.
    model: Arc<CompiledModel>,
    /// Segment signature of the curves at the last linearisation ([`crate::compiled`]).
    lin_segments: u64,
    /// Evaluations of q since creation whose segment signature differed from `lin_segments`
    /// ([`MechanicalSystem::segment_changes`]).
    segment_changes: u64,
    /// Whether q and the linearisation compute the segment signature (see
    /// [`MbsSystem::set_watch_segments`]).
    watch_segments: bool,
    /// Characteristic length of each body, m ([`characteristic_lengths`]).
    lengths: Vec<f64>,
    /// The joints' workspace (`None` for a model without joints).
    joints: Option<Box<JointWork>>,
    /// The bodies without a joint, ascending (with joints: the ones with quaternion
    /// coordinates).
    free_bodies: Vec<usize>,
    /// Per body: whether it is jointed (its slots hold a joint coordinate and rate); the
    /// stage-level maps K and L take all bodies in one pass by it.
    jointed: Vec<bool>,
}

impl MbsSystem {
    /// Creates the system for `model`.
    pub fn new(model: Arc<CompiledModel>) -> Self {
        let joints = (!model.joints.is_empty()).then(|| Box::new(JointWork::new(&model)));
        let jointed: Vec<bool> = (0..model.bodies.len())
            .map(|b| model.joints.defs.get(b).is_some_and(|d| d.is_some()))
            .collect();
        let free_bodies = (0..model.bodies.len()).filter(|&b| !jointed[b]).collect();
        Self {
            lengths: characteristic_lengths(&model),
            free_bodies,
            jointed,
            joints,
            eval: Evaluator::new(model.clone()),
            model,
            lin_segments: 0,
            segment_changes: 0,
            watch_segments: true,
        }
    }

    /// Whether the evaluations of q and of the linearisation track the segments of the
    /// piecewise characteristics ([`MechanicalSystem::segment_changes`]; on by default). A
    /// stepper that ignores breakpoints never reads them: with tracking off, no curve
    /// evaluation locates its segment or adds to the signature (≈ 0.4 k instructions per q of
    /// the multilink, `docs/performance.md`) and `segment_changes` stays where it was. The
    /// results of q and of the linearisation do not depend on it.
    pub fn set_watch_segments(&mut self, on: bool) {
        self.watch_segments = on;
    }

    /// Characteristic length of each body, m ([`characteristic_lengths`]), as used by the
    /// split norm ([`MechanicalSystem::error_scales`]).
    pub fn characteristic_lengths(&self) -> &[f64] {
        &self.lengths
    }

    /// The compiled model.
    pub fn model(&self) -> &Arc<CompiledModel> {
        &self.model
    }

    /// Whether the model has ideal joints (then r and v hold joint coordinates for jointed
    /// bodies; [`MbsSystem::expanded`] gives the full body poses).
    pub fn has_joints(&self) -> bool {
        self.joints.is_some()
    }

    /// The full poses and velocities of all bodies at the state (r, v) (the evaluator's layout,
    /// [`crate::joints::Joints::expand`]) and the evaluator, for consumers that read body poses
    /// (output channels, plausibility limits). For a model without joints: (r, v) themselves.
    /// No allocation.
    pub fn expanded<'a>(
        &'a mut self,
        r: &'a [f64],
        v: &'a [f64],
    ) -> (&'a mut Evaluator, &'a [f64], &'a [f64]) {
        match &mut self.joints {
            None => (&mut self.eval, r, v),
            Some(w) => {
                w.expand(&self.model.joints, r, v);
                (&mut self.eval, &w.r_full, &w.v_full)
            }
        }
    }

    /// The plausibility check after a step ([`Limits::check_state`]) without expanding again:
    /// with joints on the body states of the last evaluation of q (the frames
    /// [`crate::joints::JointWork::kinematics`] left: LSRT2's second stage, the partly implicit
    /// Euler's predictor), the evaluation whose resultant forces the check reads too; without
    /// joints on (r, v), the state reached. The expansion costs about a fifth of a step of the
    /// kinematic reduced car; a diverging run passes the bounds one evaluation later at most.
    ///
    /// With joints, while that evaluation's jointed poses are not written into the expanded
    /// state ([`crate::joints::JointWork::write_poses`]), the motion bounds read the
    /// evaluator's body table instead: every body's centre of mass and velocity of that
    /// evaluation, the values the expanded state would hold bit for bit (the free bodies' from
    /// their state blocks, the jointed bodies' from their frames); the poses (quaternion and
    /// body-axis ω from each frame) are written only for a force violation, whose search for
    /// the largest element force evaluates the elements at the expanded state.
    pub fn check_last_evaluated(
        &mut self,
        limits: &Limits,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Option<Violation> {
        let Some(w) = &mut self.joints else {
            return limits.check_state(&mut self.eval, t, r, v);
        };
        if w.poses_pending() {
            let bodies = &self.eval.bodies;
            if let Some(x) = limits.check_motion(|i| (bodies[i].x.into(), bodies[i].v.into())) {
                return Some(x);
            }
            limits.check_force(&self.eval)?;
        }
        w.write_poses(&self.model.joints);
        limits.check_state(&mut self.eval, t, &w.r_full, &w.v_full)
    }

    /// q with joints: the trees' kinematics, the evaluator with the jointed bodies'
    /// kinematics from their frames and the free bodies' from the state, the projection.
    fn joint_accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        let w = self.joints.as_mut().expect("joints");
        let model = &*self.model;
        w.kinematics(model, r, v, &self.free_bodies, &mut self.eval.bodies);
        self.eval
            .accelerations_with_bodies(t, &w.r_full, &w.v_full, q, &self.free_bodies);
        w.project_q(model, q, None);
    }

    /// The linearisation with joints ([`JointWork::linearise`]).
    fn joint_linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        let w = self.joints.as_mut().expect("joints");
        let model = &*self.model;
        let eval = &mut self.eval;
        w.linearise(model, r, v, lin, |rf, vf, fl| eval.linearise(t, rf, vf, fl));
    }

    /// Whether body `b` is jointed.
    #[inline]
    fn jointed(&self, b: usize) -> bool {
        self.jointed[b]
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
        match &self.joints {
            None => self.model().pattern.clone(),
            Some(w) => w.pattern.clone(),
        }
    }

    /// With joints: a jointed body's slots but the first (its coordinate), all six of a
    /// follower (no coordinate of its own), and the padding of the element-state blocks (each
    /// element's states start a block; zero rates and partials, [`CompiledModel::n_v`]); the projection leaves their rows and
    /// columns zero ([`JointWork::linearise`], `docs/joints.md`). Without joints `None`: the
    /// steppers keep their block-sparse path, results unchanged.
    fn inert_velocity_slots(&self) -> Option<Vec<bool>> {
        self.joints.as_ref()?;
        let model = self.model();
        let mut inert = vec![false; model.n_v()];
        for d in model.joints.defs.iter().flatten() {
            let b = d.body;
            inert[6 * b + 1..6 * b + 6].fill(true);
            inert[6 * b] = !d.own;
        }
        // Each open element's states start a block of their own.
        let nbv = model.n_body_v();
        inert[nbv..].fill(true);
        for e in &model.open_elements {
            let at = nbv + e.state_offset;
            inert[at..at + e.law.n_states()].fill(false);
        }
        Some(inert)
    }

    fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        if self.joints.is_some() {
            if !self.watch_segments {
                crate::compiled::without_segment_watch(|| self.joint_accelerations(t, r, v, q));
                return;
            }
            crate::compiled::take_segment_signature();
            self.joint_accelerations(t, r, v, q);
            if crate::compiled::take_segment_signature() != self.lin_segments {
                self.segment_changes += 1;
            }
            return;
        }
        if !self.watch_segments {
            crate::compiled::without_segment_watch(|| self.eval.accelerations(t, r, v, q));
            return;
        }
        crate::compiled::take_segment_signature();
        self.eval.accelerations(t, r, v, q);
        if crate::compiled::take_segment_signature() != self.lin_segments {
            self.segment_changes += 1;
        }
    }

    /// The open elements with states and what they need alone ([`Evaluator::state_rates`]),
    /// without the segment signature (it sees only some characteristics; the full evaluations
    /// count). With joints at the expanded state (the state rows need no projection).
    fn state_rates(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        let (eval, rf, vf) = self.expanded(r, v);
        crate::compiled::without_segment_watch(|| eval.state_rates(t, rf, vf, q));
    }

    fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        if self.joints.is_some() {
            if !self.watch_segments {
                crate::compiled::without_segment_watch(|| self.joint_linearise(t, r, v, lin));
                return;
            }
            crate::compiled::take_segment_signature();
            self.joint_linearise(t, r, v, lin);
            self.lin_segments = crate::compiled::take_segment_signature();
            return;
        }
        if !self.watch_segments {
            crate::compiled::without_segment_watch(|| self.eval.linearise(t, r, v, lin));
            return;
        }
        crate::compiled::take_segment_signature();
        self.eval.linearise(t, r, v, lin);
        self.lin_segments = crate::compiled::take_segment_signature();
    }

    fn linearise_congruent(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        if self.joints.is_some() {
            // The projection works on the plain form.
            self.linearise(t, r, v, lin);
            return;
        }
        if !self.watch_segments {
            crate::compiled::without_segment_watch(|| self.eval.linearise_congruent(t, r, v, lin));
            return;
        }
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
        let nb = self.model().bodies.len();
        let (pos, vel, out) = (
            positions(r, nb),
            velocities(v, nb),
            positions_mut(r_dot, nb),
        );
        if self.joints.is_some() {
            // Free bodies as below; jointed bodies: ż in the first slot, K = I there, zeros
            // elsewhere.
            for (((ri, vi), di), &j) in pos.iter().zip(vel).zip(out).zip(&self.jointed) {
                if j {
                    *di = [vi[0], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
                } else {
                    free_body_rate(ri, vi, di);
                }
            }
            return;
        }
        for ((ri, vi), di) in pos.iter().zip(vel).zip(out) {
            free_body_rate(ri, vi, di);
        }
    }

    /// Per body: the translational entries of K(r) v are v itself, and every component of
    /// ½ q ⊗ (0, ω) is at most ½ (|ω_x| + |ω_y| + |ω_z|) for a unit quaternion (each is ½ a
    /// dot product of ω with three components of q); the factor 1 + 1e-12 covers the
    /// rounding of the products and of |q| ≈ 1. About a tenth of the work of
    /// [`MechanicalSystem::kinematics`] (no quaternion products, no stores).
    fn kinematics_max_abs_bound(&self, _r: &[f64], v: &[f64], _scratch: &mut [f64]) -> f64 {
        let mut m = 0.0f64;
        for w in v[..self.model().n_body_v()].chunks_exact(6) {
            let rot = 0.5 * (w[3].abs() + w[4].abs() + w[5].abs()) * (1.0 + 1e-12);
            m = m.max(w[0].abs()).max(w[1].abs()).max(w[2].abs()).max(rot);
        }
        m
    }

    /// κ = 1.5: translations have K = I; a quaternion rate ½ q ⊗ ω has components that are ½
    /// a signed sum of three products q_j ω_k with |q_j| ≤ 1, so ≤ ½ |ω|₁ ≤ 1.5 max |ω| — at
    /// least the bound of `kinematics_max_abs_bound` above (the round-off factor included).
    fn kinematics_gain(&self) -> Option<f64> {
        Some(1.5 * (1.0 + 2e-12))
    }

    /// ℓ = 1 for a body's translational velocity and for element states (which have no
    /// position coordinates), 2 L for its angular velocity with L the body's characteristic
    /// length ([`characteristic_lengths`]): K maps ω only into the body's own quaternion
    /// (q̇ = ½ q ⊗ (0, ω)), so the stepper's K(r) (ℓ ∘ x) is the quaternion error times 2 L — a
    /// quaternion error δq turns the body by δθ ≈ 2 δq and moves a point at distance L by
    /// L |δθ| ≈ 2 L |δq| (`docs/solvers.md`, *Split norm per coordinate kind*).
    ///
    /// A jointed body: a prismatic coordinate is a displacement (ℓ = 1); a revolute angle moves
    /// the body's points by at most (distance of its centre of mass from the axis + L) per rad;
    /// a tabulated coordinate by |∂s/∂c| + L |∂φ/∂c| ([`crate::joints::JointDef::error_scale`]).
    /// Padding slots (and followers): 1 (they stay 0).
    fn error_scales(&self) -> Option<Vec<f64>> {
        let mut l = vec![1.0; self.n_v()];
        for (lb, len) in l.chunks_exact_mut(6).zip(&self.lengths) {
            lb[3..].fill(2.0 * len);
        }
        for d in self.model().joints.defs.iter().flatten() {
            let b = d.body;
            l[6 * b..6 * b + 6].fill(1.0);
            if d.own {
                l[6 * b] = d.error_scale(self.lengths[b]);
            }
        }
        Some(l)
    }

    fn tangent(&self, r: &[f64], dr: &[f64], w: &mut [f64]) {
        let nb = self.model().bodies.len();
        let (pos, inc, out) = (positions(r, nb), positions(dr, nb), velocities_mut(w, nb));
        if self.joints.is_some() {
            // Free bodies as below; jointed bodies: the coordinate's increment.
            for (((ri, di), wi), &j) in pos.iter().zip(inc).zip(out).zip(&self.jointed) {
                if j {
                    *wi = [di[0], 0.0, 0.0, 0.0, 0.0, 0.0];
                } else {
                    free_body_tangent(ri, di, wi);
                }
            }
        } else {
            for ((ri, di), wi) in pos.iter().zip(inc).zip(out) {
                free_body_tangent(ri, di, wi);
            }
        }
        // Element states have no position coordinates.
        w[6 * nb..].fill(0.0);
    }

    fn has_kinematic_jacobian(&self) -> bool {
        true
    }

    // For a body, K(r) v = (v_x, ½ q ⊗ (0, ω)) is linear in the quaternion q: G acts on the
    // quaternion part only, G x = ½ x ⊗ (0, ω), a skew-symmetric 4 × 4 matrix Ω with
    // Ω² = −|ω|²/4 I. Hence (I − cG)⁻¹ = (I + cG) / (1 + (c|ω|/2)²), and in body rotation
    // coordinates L (I − cG)⁻¹ K y = (y − (c/2) ω × y) / (1 + (c|ω|/2)²) (unit q).
    fn kinematic_jacobian(&self, _r: &[f64], v: &[f64], x: &[f64], out: &mut [f64]) {
        let nb = self.model().bodies.len();
        for ((vi, xi), oi) in velocities(v, nb)
            .iter()
            .zip(positions(x, nb))
            .zip(positions_mut(out, nb))
        {
            oi[..3].fill(0.0);
            let w = Vector3::new(vi[3], vi[4], vi[5]);
            quat_rate(&xi[3..], &w, &mut oi[3..]);
        }
        if self.joints.is_some() {
            // K = I on joint coordinates: G = 0 there.
            for &b in &self.model().joints.order {
                out[7 * b..7 * b + 7].fill(0.0);
            }
        }
    }

    fn kinematic_solve(&self, _r: &[f64], v: &[f64], c: f64, x: &mut [f64]) {
        let nb = self.model().bodies.len();
        for (b, (vi, xi)) in velocities(v, nb)
            .iter()
            .zip(positions_mut(x, nb))
            .enumerate()
        {
            // G = 0 on joint coordinates: (I − cG)⁻¹ = I.
            if self.joints.is_some() && self.jointed(b) {
                continue;
            }
            let w = Vector3::new(vi[3], vi[4], vi[5]);
            let mut gx = [0.0; 4];
            quat_rate(&xi[3..], &w, &mut gx);
            let den = 1.0 + 0.25 * c * c * w.norm_squared();
            for (xk, gk) in xi[3..].iter_mut().zip(gx) {
                *xk = (*xk + c * gk) / den;
            }
        }
    }

    fn kinematic_tangent_solve(&self, _r: &[f64], v: &[f64], c: f64, y: &mut [f64]) {
        let nb = self.model().bodies.len();
        for (b, (vi, yi)) in velocities(v, nb)
            .iter()
            .zip(velocities_mut(y, nb))
            .enumerate()
        {
            if self.joints.is_some() && self.jointed(b) {
                continue;
            }
            let w = Vector3::new(vi[3], vi[4], vi[5]);
            let yr = Vector3::new(yi[3], yi[4], yi[5]);
            let den = 1.0 + 0.25 * c * c * w.norm_squared();
            let out = (yr - 0.5 * c * w.cross(&yr)) / den;
            yi[3..].copy_from_slice(out.as_slice());
        }
    }

    fn project(&self, r: &mut [f64]) {
        let nb = self.model().bodies.len();
        if self.joints.is_some() {
            // Joint coordinates are not normalised.
            let pos = positions_mut(r, nb);
            for &b in &self.free_bodies {
                quat_normalise(&mut pos[b][3..]);
            }
            return;
        }
        for ri in positions_mut(r, nb) {
            quat_normalise(&mut ri[3..]);
        }
    }
}

/// K(r) v of a free body: (v, ½ q ⊗ (0, ω)).
#[inline(always)]
fn free_body_rate(ri: &[f64; 7], vi: &[f64; 6], di: &mut [f64; 7]) {
    di[..3].copy_from_slice(&vi[..3]);
    let w = Vector3::new(vi[3], vi[4], vi[5]);
    quat_rate(&ri[3..], &w, &mut di[3..]);
}

/// L(r) Δr of a free body: (Δx, the body rotation of the quaternion increment).
#[inline(always)]
fn free_body_tangent(ri: &[f64; 7], di: &[f64; 7], wi: &mut [f64; 6]) {
    wi[..3].copy_from_slice(&di[..3]);
    let th = quat_increment_to_body_rotation(&ri[3..], &di[3..]);
    wi[3..].copy_from_slice(th.as_slice());
}

/// Characteristic length L of each body, m: the largest distance of a marker on the body from
/// its centre of mass (the body frame's origin), or the body's largest radius of gyration
/// √(I_max / m) if that is larger (a body whose force points are not all markers, e.g. a wheel
/// with one marker at its centre and a tire contact a radius below it, or a body without
/// markers). It converts a rotation error to the displacement of the body's points in the split
/// norm ([`MechanicalSystem::error_scales`]). A body with neither (a point mass without
/// markers off its centre) gets L = ½ m, the scale the norm had before (2 L = 1).
pub fn characteristic_lengths(model: &CompiledModel) -> Vec<f64> {
    let mut lengths: Vec<f64> = model
        .bodies
        .iter()
        .map(|b| {
            let i_max = b.inertia.symmetric_eigenvalues().max();
            (i_max / b.mass).max(0.0).sqrt()
        })
        .collect();
    for m in &model.markers {
        if let Some(b) = m.body {
            lengths[b] = lengths[b].max(m.position.norm());
        }
    }
    for l in &mut lengths {
        if !(l.is_finite() && *l > 0.0) {
            *l = 0.5;
        }
    }
    lengths
}

// The per-body loops of the stages (K(r) v, its left inverse, the projection) run over the
// bodies' coordinate blocks as fixed-size arrays: every index below is then checked at compile
// time instead of once per entry in the loop (measured: ≈ 2 % of a double-wishbone step's
// instructions at k = 5, `docs/performance.md`).

/// The position coordinates (x, y, z, q_w, q_x, q_y, q_z) of the first `nb` bodies.
#[inline(always)]
fn positions(r: &[f64], nb: usize) -> &[[f64; 7]] {
    r[..7 * nb].as_chunks::<7>().0
}

/// [`positions`], mutable.
#[inline(always)]
fn positions_mut(r: &mut [f64], nb: usize) -> &mut [[f64; 7]] {
    r[..7 * nb].as_chunks_mut::<7>().0
}

/// The velocity coordinates (v global, ω body) of the first `nb` bodies (element states follow).
#[inline(always)]
fn velocities(v: &[f64], nb: usize) -> &[[f64; 6]] {
    v[..6 * nb].as_chunks::<6>().0
}

/// [`velocities`], mutable.
#[inline(always)]
fn velocities_mut(v: &mut [f64], nb: usize) -> &mut [[f64; 6]] {
    v[..6 * nb].as_chunks_mut::<6>().0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cheap bound of the split decision (and the screen by `kinematics_gain` above it)
    /// against the exact largest entry of K(r) v, on
    /// random unit quaternions and velocities of the all-elements fixture: never below it (the
    /// decision from the bound is then the exact one), and within the factor the bound's
    /// construction allows (a quaternion rate ½ q ⊗ (0, ω) has norm |ω|/2, so its largest
    /// component is at least |ω|/4, while the bound is ½ |ω|₁ ≤ ½ √3 |ω|: at most 2√3).
    #[test]
    fn kinematics_bound_is_an_upper_bound_of_the_exact_value() {
        let m = sprung_model::from_toml_str(sprung_test_support::ALL_ELEMENTS, "all.toml").unwrap();
        let sys = MbsSystem::new(Arc::new(crate::compile(&m).unwrap()));
        let mut rng = sprung_test_support::Rng(7);
        let (n_r, n_v) = (sys.n_r(), sys.n_v());
        let mut scratch = vec![0.0; n_r];
        for case in 0..200 {
            let mut r: Vec<f64> = (0..n_r).map(|_| rng.sym(1.0)).collect();
            sys.project(&mut r);
            // Translation-dominated, rotation-dominated and mixed velocities.
            let (st, sw) = [(1.0, 1e-3), (1e-3, 1.0), (1.0, 1.0)][case % 3];
            let v: Vec<f64> = (0..n_v)
                .map(|k| if k % 6 < 3 { rng.sym(st) } else { rng.sym(sw) })
                .collect();
            let bound = sys.kinematics_max_abs_bound(&r, &v, &mut scratch);
            sys.kinematics(&r, &v, &mut scratch);
            let exact = scratch.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(
                exact <= bound,
                "case {case}: exact {exact} above bound {bound}"
            );
            assert!(
                bound <= 2.0 * 3f64.sqrt() * exact * (1.0 + 1e-9),
                "case {case}: bound {bound} vs exact {exact}"
            );
            // The screen κ max |v| over the speeds lies above the bound (so the split decision
            // is unchanged by it), and by at most 3 (½ |ω|₁ ≥ ½ max |ω|).
            let gain = sys.kinematics_gain().unwrap();
            let vmax = v[..sys.n_speeds()]
                .iter()
                .fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(
                bound <= gain * vmax,
                "case {case}: {bound} vs {}",
                gain * vmax
            );
            assert!(gain * vmax <= 3.0 * bound * (1.0 + 1e-9), "case {case}");
        }
    }

    /// Two bodies for the split-norm tests: `arm` (2 kg, principal inertia 0.04 / 0.08 / 0.05
    /// kg m², radius of gyration √(0.08 / 2) = 0.2 m) with markers 0.5 m (at (0.3, 0.4, 0) from
    /// its centre of mass) and 0.1 m from its centre; `hub` (4 kg, inertia tensor [[0.3, 0.1,
    /// 0], [0.1, 0.3, 0], [0, 0, 0.2]] with eigenvalues 0.4, 0.2, 0.2, so √(0.4 / 4) = 0.3162 m)
    /// with its one marker at the centre. Optionally `arm` with a marker `tip` 0.15 m from its
    /// centre along x instead (the front carrier's size).
    fn two_bodies(arm_markers: &str) -> MbsSystem {
        let toml = format!(
            r#"
[model]
name = "lengths"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "arm"
mass = 2.0
position = [1.0, 2.0, 3.0]
inertia = {{ principal = [0.04, 0.08, 0.05] }}

[[bodies]]
name = "hub"
mass = 4.0
position = [0.0, 0.0, 0.0]
inertia = {{ tensor = [[0.3, 0.1, 0.0], [0.1, 0.3, 0.0], [0.0, 0.0, 0.2]] }}

{arm_markers}

[[markers]]
name = "hub.c"
body = "hub"
global_position = [0.0, 0.0, 0.0]

[[markers]]
name = "j.J"
body = "hub"
global_position = [0.0, 0.0, 0.0]

[[force_elements]]
type = "bushing"
name = "j"
marker_i = "a.I"
marker_j = "j.J"
stiffness = [1e3, 1e3, 1e3]
rot_stiffness = [10.0, 10.0, 10.0]
"#
        );
        let m = sprung_model::from_toml_str(&toml, "lengths.toml").unwrap();
        MbsSystem::new(Arc::new(crate::compile(&m).unwrap()))
    }

    /// The characteristic lengths and scales of the split norm against the hand-computed values
    /// of [`two_bodies`]: the farthest marker (0.5 m) for the arm, the radius of gyration of
    /// the largest principal moment (0.3162 m) for the hub, whose only markers sit at its
    /// centre; ℓ = 1 for translations, 2 L for angular velocities.
    #[test]
    fn characteristic_lengths_of_hand_computed_bodies() {
        let sys = two_bodies(
            r#"
[[markers]]
name = "a.I"
body = "arm"
global_position = [1.3, 2.4, 3.0]

[[markers]]
name = "a.near"
body = "arm"
global_position = [1.1, 2.0, 3.0]
"#,
        );
        let hub = 0.1f64.sqrt();
        let l = sys.characteristic_lengths();
        assert!((l[0] - 0.5).abs() < 1e-15, "arm: {}", l[0]);
        assert!((l[1] - hub).abs() < 1e-15, "hub: {}", l[1]);
        // The marker positions are stored relative to the centre of mass (global position
        // minus the body's, exact to one rounding): 1e-15.
        let s = sys.error_scales().unwrap();
        let expect = [
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            2.0 * hub,
            2.0 * hub,
            2.0 * hub,
        ];
        assert_eq!(s.len(), sys.n_v());
        for (k, (a, b)) in s.iter().zip(expect).enumerate() {
            assert!((a - b).abs() < 1e-15, "entry {k}: {a} vs {b}");
        }
    }

    /// A rotation error that moves the arm's tip (0.3 m from its centre) by d is judged as a
    /// translation error of d: the split indicator of the LSRT2 stepper (γ h² max |K(r) (ℓ ∘
    /// x)|) is the same for both, to rounding (four roundings of a product chain: 1e-14
    /// relative), and both fall on the same side of the tolerance at d = 0.9 and 1.1 × 0.1 µm.
    /// Without the scales (the norm before) the rotation would count δq_z = d / (2 L) = 1.67 d
    /// (checked too). The velocity-space errors are
    /// x = (d / (γ h²)) × (unit translation along y) and (d / (L γ h²)) × (unit rotation about
    /// z): ω × ρ = ω_z e_z × L e_x = L ω_z e_y moves the tip along y.
    #[test]
    fn a_rotation_error_is_judged_by_the_displacement_it_causes() {
        use sprung_solve::dense::DenseLu;
        use sprung_solve::mech::{RosenbrockStepper, SPLIT_TOLERANCE, Tableau};
        let sys = two_bodies(
            r#"
[[markers]]
name = "a.I"
body = "arm"
global_position = [1.3, 2.0, 3.0]
"#,
        );
        let len = sys.characteristic_lengths()[0];
        assert!((len - 0.3).abs() < 1e-15, "{len}");
        let (r, _) = sys.model().design_state();
        let lu = Box::new(DenseLu::new(sys.n_v()));
        let mut st = RosenbrockStepper::new(&sys, Tableau::lsrt2(), 1e-3, 0.0, 1, lu);
        let c = st.tableau().gamma * st.h * st.h;
        for factor in [0.9, 1.1] {
            let d = factor * SPLIT_TOLERANCE;
            let mut x_trans = vec![0.0; sys.n_v()];
            x_trans[1] = d / c;
            let mut x_rot = vec![0.0; sys.n_v()];
            x_rot[5] = d / (len * c);
            let e_trans = st.error_indicator(&sys, &r, &x_trans);
            let e_rot = st.error_indicator(&sys, &r, &x_rot);
            assert!((e_trans - d).abs() <= 1e-14 * d, "{e_trans} vs {d}");
            assert!((e_rot - d).abs() <= 1e-14 * d, "{e_rot} vs {d}");
            assert_eq!(e_rot > SPLIT_TOLERANCE, factor > 1.0);
            assert_eq!(e_trans > SPLIT_TOLERANCE, factor > 1.0);
            // The unscaled norm: the quaternion component δq_z = δθ / 2 = d / (2 L).
            let mut q = vec![0.0; sys.n_r()];
            sys.kinematics(&r, &x_rot, &mut q);
            assert!((c * q[6] - d / (2.0 * len)).abs() <= 1e-14 * d / len);
        }
    }
}
