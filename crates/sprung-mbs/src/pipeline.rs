//! The evaluation pipeline of document 000, Bild 6: body kinematics → marker kinematics → force
//! elements (forces and analytic partials) → Newton–Euler per body → assembly of q, J_r K, J_v and
//! J_u, block-structured by body (6 × 6 blocks of the body-coupling graph).
//!
//! Newton–Euler per body (document 000, eqs. 1-3) with v = (ẋ global, ω in body axes):
//! q_l = ( F/m + g ,  I⁻¹ (Rᵀ τ − ω × I ω) ), F and τ (about the centre of mass) global.
//!
//! Partials: elements report partials of their global force/torque with respect to global position
//! perturbations (δx, δφ) and global velocities (v, ω) of their two bodies. Assembly accumulates the
//! partials of each body's global wrench per coupled body pair, then converts once per block:
//! columns to generalised coordinates (δφ = R δθ, ω = R ω_body, and the change of ω_global with the
//! orientation at fixed ω_body), rows through Newton–Euler (1/m and I⁻¹ Rᵀ), and finally adds the
//! body's own terms (∂(Rᵀτ)/∂θ = [Rᵀτ]×, gyroscopic ∂(−ω × Iω)/∂ω). With quaternion coordinates the
//! result is exactly J_r K (the quaternion kinematics' left inverse cancels), see [`crate::rotation`].

use std::sync::Arc;

use nalgebra::{Matrix3, SMatrix, Vector3};
use sprung_solve::block::BlockMatrix;
use sprung_solve::mech::Linearisation;

use crate::compiled::{CompiledModel, ElementKind, InputKind};
use crate::element::{ElementForce, Ends};
use crate::kinematics::{BodyKin, M3x12, MarkerKin};
use crate::rotation::skew;
use crate::{bushing, p2p};

type M6x12 = SMatrix<f64, 6, 12>;
type M6 = SMatrix<f64, 6, 6>;

/// Workspace and entry point of the pipeline; all storage is allocated in [`Evaluator::new`].
#[derive(Debug, Clone)]
pub struct Evaluator {
    model: Arc<CompiledModel>,
    /// Body kinematics table of the last evaluation.
    pub bodies: Vec<BodyKin>,
    /// Element results of the last evaluation (for output channels).
    pub elements: Vec<ElementForce>,
    /// Current input values u(t).
    pub u: Vec<f64>,
    /// Current input rates u̇(t).
    pub u_dot: Vec<f64>,
    force: Vec<Vector3<f64>>,
    torque: Vec<Vector3<f64>>,
    /// Block slots per element: slot[c][e] for (I/J side c, I/J side e).
    slots: Vec<[[Option<usize>; 2]; 2]>,
    /// J_u, column-major: column k (input k) = ∂q/∂u_k.
    pub j_u: Vec<f64>,
    scratch: ElementForce,
}

/// Scatter target for wrench partials.
struct Partials<'a> {
    w_r: &'a mut BlockMatrix,
    w_v: &'a mut BlockMatrix,
}

impl Evaluator {
    /// Creates the workspace for `model`.
    pub fn new(model: Arc<CompiledModel>) -> Self {
        let nb = model.bodies.len();
        let p = &model.pattern;
        let slots = model
            .elements
            .iter()
            .map(|e| {
                let b = [model.markers[e.marker_i].body, model.markers[e.marker_j].body];
                let mut s = [[None; 2]; 2];
                for c in 0..2 {
                    for k in 0..2 {
                        if let (Some(bc), Some(bk)) = (b[c], b[k]) {
                            s[c][k] = p.slot(bc, bk);
                        }
                    }
                }
                s
            })
            .collect();
        Self {
            bodies: vec![BodyKin::default(); nb],
            elements: vec![ElementForce::default(); model.elements.len()],
            u: vec![0.0; model.inputs.len()],
            u_dot: vec![0.0; model.inputs.len()],
            force: vec![Vector3::zeros(); nb],
            torque: vec![Vector3::zeros(); nb],
            slots,
            j_u: vec![0.0; 6 * nb * model.inputs.len()],
            scratch: ElementForce::default(),
            model,
        }
    }

    /// The compiled model.
    pub fn model(&self) -> &Arc<CompiledModel> {
        &self.model
    }

    /// Evaluates q(t, r, v) only.
    pub fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        self.forces(t, r, v, None);
        self.newton_euler(q);
    }

    /// Evaluates q, J_v, J_r K and J_u at (t, r, v) and J_u u̇ into `lin`.
    pub fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        lin.j_v.fill_zero();
        lin.j_rk.fill_zero();
        lin.r.copy_from_slice(r);
        self.forces(t, r, v, Some(Partials { w_r: &mut lin.j_rk, w_v: &mut lin.j_v }));
        self.newton_euler(&mut lin.q);
        self.finish_partials(&mut lin.j_rk, &mut lin.j_v);
        self.input_jacobian();
        let nv = lin.q_t.len();
        lin.q_t.fill(0.0);
        for (k, ud) in self.u_dot.iter().enumerate() {
            if *ud != 0.0 {
                for (qt, ju) in lin.q_t.iter_mut().zip(&self.j_u[k * nv..(k + 1) * nv]) {
                    *qt += ju * ud;
                }
            }
        }
    }

    /// Kinematics, element forces and body wrenches (global, about each centre of mass); with
    /// `partials`, the global wrench partials are accumulated into the block matrices.
    fn forces(&mut self, t: f64, r: &[f64], v: &[f64], mut partials: Option<Partials<'_>>) {
        let model = self.model.clone();
        crate::kinematics::body_kinematics(&model, r, v, &mut self.bodies);
        for (i, b) in model.bodies.iter().enumerate() {
            self.force[i] = b.mass * model.gravity;
            self.torque[i] = Vector3::zeros();
        }
        let want = partials.is_some();
        for (k, el) in model.elements.iter().enumerate() {
            let ends: Ends = [
                MarkerKin::new(&model.markers[el.marker_i], &self.bodies),
                MarkerKin::new(&model.markers[el.marker_j], &self.bodies),
            ];
            let out = &mut self.elements[k];
            match &el.kind {
                ElementKind::Bushing(b) => bushing::evaluate(b, &model.curves, &ends, want, out),
                ElementKind::P2p(law) => p2p::evaluate(law, &model.curves, el.design_length, &ends, want, out),
            }
            let bodies = [ends[0].body, ends[1].body];
            for side in 0..2 {
                let sign = if side == 0 { 1.0 } else { -1.0 };
                if let Some(c) = bodies[side] {
                    apply_wrench(
                        &mut self.force[c],
                        &mut self.torque[c],
                        self.bodies[c].x,
                        side,
                        sign,
                        &self.elements[k],
                        partials.as_mut().map(|p| (p, &self.slots[k][side])),
                    );
                }
            }
        }
        // Inputs u(t): forces and torques at markers.
        for (k, inp) in model.inputs.iter().enumerate() {
            self.u[k] = inp.signal.value(t);
            self.u_dot[k] = inp.signal.rate(t);
            let m = MarkerKin::new(&model.markers[inp.marker], &self.bodies);
            let Some(c) = m.body else { continue };
            let dir = if inp.body_frame { self.bodies[c].rot * inp.direction } else { inp.direction };
            let val = dir * self.u[k];
            let ef = &mut self.scratch;
            ef.point = [m.x, m.x];
            ef.d_point = [m.d_position(0), m.d_position(0)];
            ef.d_force_v.fill(0.0);
            ef.d_torque_v.fill(0.0);
            // A body-fixed direction turns with the body: ∂(R d s) = −[R d s]× δφ.
            let d_val = if inp.body_frame { -skew(&val) * m.d_rotation(0) } else { M3x12::zeros() };
            match inp.kind {
                InputKind::Force => {
                    ef.force = val;
                    ef.torque = Vector3::zeros();
                    ef.d_force_r = d_val;
                    ef.d_torque_r.fill(0.0);
                }
                InputKind::Torque => {
                    ef.force = Vector3::zeros();
                    ef.torque = val;
                    ef.d_force_r.fill(0.0);
                    ef.d_torque_r = d_val;
                }
            }
            let slot = [[self.model.pattern.slot(c, c), None], [None, None]];
            apply_wrench(
                &mut self.force[c],
                &mut self.torque[c],
                self.bodies[c].x,
                0,
                1.0,
                &self.scratch,
                partials.as_mut().map(|p| (p, &slot[0])),
            );
        }
    }

    /// Newton–Euler per body: q from the accumulated wrenches.
    fn newton_euler(&self, q: &mut [f64]) {
        for (i, b) in self.model.bodies.iter().enumerate() {
            let k = &self.bodies[i];
            let a = self.force[i] / b.mass;
            let tb = k.rot.transpose() * self.torque[i];
            let w = k.w_body;
            let alpha = b.inertia_inv * (tb - w.cross(&(b.inertia * w)));
            q[6 * i..6 * i + 3].copy_from_slice(a.as_slice());
            q[6 * i + 3..6 * i + 6].copy_from_slice(alpha.as_slice());
        }
    }

    /// Converts accumulated global wrench partials into J_r K and J_v (see module docs).
    fn finish_partials(&self, w_r: &mut BlockMatrix, w_v: &mut BlockMatrix) {
        let pattern = self.model.pattern.clone();
        for c in 0..pattern.n_blocks() {
            let body = &self.model.bodies[c];
            let kc = &self.bodies[c];
            let mut row = M6::zeros();
            row.fixed_view_mut::<3, 3>(0, 0).copy_from(&(Matrix3::identity() / body.mass));
            row.fixed_view_mut::<3, 3>(3, 3).copy_from(&(body.inertia_inv * kc.rot.transpose()));
            for s in pattern.row_ptr()[c]..pattern.row_ptr()[c + 1] {
                let e = pattern.col_idx()[s];
                let ke = &self.bodies[e];
                let mut gx = M6::from_row_slice(w_r.block(s));
                let mut gv = M6::from_row_slice(w_v.block(s));
                let gv_w = gv.fixed_view::<6, 3>(0, 3).into_owned();
                let gx_phi = gx.fixed_view::<6, 3>(0, 3) - gv_w * skew(&ke.w);
                gx.fixed_view_mut::<6, 3>(0, 3).copy_from(&(gx_phi * ke.rot));
                gv.fixed_view_mut::<6, 3>(0, 3).copy_from(&(gv_w * ke.rot));
                let mut px = row * gx;
                let mut pv = row * gv;
                if e == c {
                    let tb = kc.rot.transpose() * self.torque[c];
                    let w = kc.w_body;
                    let iw = body.inertia * w;
                    let mut bx = px.fixed_view_mut::<3, 3>(3, 3);
                    bx += body.inertia_inv * skew(&tb);
                    let mut bv = pv.fixed_view_mut::<3, 3>(3, 3);
                    bv += body.inertia_inv * (skew(&iw) - skew(&w) * body.inertia);
                }
                copy_row_major(&px, w_r.block_mut(s));
                copy_row_major(&pv, w_v.block_mut(s));
            }
        }
    }

    /// J_u: ∂q/∂u_k for each input (wrench per unit signal through Newton–Euler).
    fn input_jacobian(&mut self) {
        let nv = 6 * self.model.bodies.len();
        self.j_u.fill(0.0);
        for (k, inp) in self.model.inputs.iter().enumerate() {
            let m = MarkerKin::new(&self.model.markers[inp.marker], &self.bodies);
            let Some(c) = m.body else { continue };
            let kc = &self.bodies[c];
            let body = &self.model.bodies[c];
            let dir = if inp.body_frame { kc.rot * inp.direction } else { inp.direction };
            let (f, t) = match inp.kind {
                InputKind::Force => (dir, m.arm.cross(&dir)),
                InputKind::Torque => (Vector3::zeros(), dir),
            };
            let col = &mut self.j_u[k * nv..(k + 1) * nv];
            let a = f / body.mass;
            let alpha = body.inertia_inv * (kc.rot.transpose() * t);
            col[6 * c..6 * c + 3].copy_from_slice(a.as_slice());
            col[6 * c + 3..6 * c + 6].copy_from_slice(alpha.as_slice());
        }
    }

    /// Global force and torque (about the centre of mass) on body `i` from the last evaluation.
    pub fn body_wrench(&self, i: usize) -> (Vector3<f64>, Vector3<f64>) {
        (self.force[i], self.torque[i])
    }
}

fn copy_row_major(m: &M6, out: &mut [f64]) {
    for r in 0..6 {
        for c in 0..6 {
            out[r * 6 + c] = m[(r, c)];
        }
    }
}

/// Adds the wrench of one element side (`sign` · force at `point[side]`, `sign` · torque) to a body
/// and, with partials, its derivative blocks to the (body, element body) slots.
fn apply_wrench(
    force: &mut Vector3<f64>,
    torque: &mut Vector3<f64>,
    com: Vector3<f64>,
    side: usize,
    sign: f64,
    ef: &ElementForce,
    partials: Option<(&mut Partials<'_>, &[Option<usize>; 2])>,
) {
    let f = sign * ef.force;
    let arm = ef.point[side] - com;
    *force += f;
    *torque += arm.cross(&f) + sign * ef.torque;
    let Some((p, slots)) = partials else { return };
    // ∂(p − x_c): the body's own δx columns are at 6 · side.
    let mut d_arm = ef.d_point[side];
    for k in 0..3 {
        d_arm[(k, 6 * side + k)] -= 1.0;
    }
    let arm_x = skew(&arm);
    let mut g_r = M6x12::zeros();
    let mut g_v = M6x12::zeros();
    g_r.fixed_view_mut::<3, 12>(0, 0).copy_from(&(sign * ef.d_force_r));
    g_v.fixed_view_mut::<3, 12>(0, 0).copy_from(&(sign * ef.d_force_v));
    g_r.fixed_view_mut::<3, 12>(3, 0)
        .copy_from(&(sign * (arm_x * ef.d_force_r + ef.d_torque_r) - skew(&f) * d_arm));
    g_v.fixed_view_mut::<3, 12>(3, 0).copy_from(&(sign * (arm_x * ef.d_force_v + ef.d_torque_v)));
    for (e, slot) in slots.iter().enumerate() {
        let Some(s) = slot else { continue };
        add_block(p.w_r.block_mut(*s), &g_r, 6 * e);
        add_block(p.w_v.block_mut(*s), &g_v, 6 * e);
    }
}

fn add_block(out: &mut [f64], g: &M6x12, col: usize) {
    for r in 0..6 {
        for c in 0..6 {
            out[r * 6 + c] += g[(r, col + c)];
        }
    }
}
