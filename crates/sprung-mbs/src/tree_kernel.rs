//! A model-specific implementation of the joint trees' evaluation path: the hook through which
//! code generated for one model (`sprung accelerate`, crate `sprung-accel`; document 004's
//! "Symbolic Accelerator", ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5, which cut the
//! reduced model's time by 2.6×) replaces the generic, data-driven tree kinematics and
//! projection of [`crate::joints`] on the path of q (not on the linearisation's, which keeps the
//! generic code and its perturbations).
//!
//! A kernel works on one flat `f64` buffer per tree ([`FlatLayout`]) that holds what the generic
//! code keeps in a [`TreeKin`]: the bodies' frames, J̇_b ż, the massless leaves' columns, J_b,
//! M_b J_b, M_z's Cholesky factor, and the tree's spline-group evaluations. The kernel
//! evaluates the spline groups it can ([`TreeKernel::spline_groups`]: generated code does the
//! groups whose coordinates lie inside their grids) and the host the others
//! ([`crate::joints::SplineGroup::eval_into`], the generic path, so excursions outside a table are extrapolated
//! and recorded as before), then the host calls [`TreeKernel::kinematics`]; after the evaluator has computed the free-body accelerations,
//! [`TreeKernel::project`] turns them into the tree coordinates' accelerations. A kernel may
//! also evaluate point-to-point force elements on the trees' bodies from the frames in the
//! buffers ([`TreeKernel::force_elements`], [`TreeKernel::forces`]; the evaluator's packs keep
//! the others, `crate::pipeline::Evaluator::set_force_kernel`). Entries a
//! kernel does not write keep the values the buffer was created with ([`FlatLayout::initial`]:
//! the constant entries of J and zeros), so a kernel writes only what can change.
//!
//! [`ReferenceKernel`] implements the trait with the generic code itself: the check of the
//! layout's round trip and of every generated kernel (tests compare a kernel's buffer and
//! projected accelerations with it).

use std::fmt;
use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_model as sm;

use crate::CompiledModel;
use crate::joints::{Frame, Joints, Perturb, Tree, TreeKin};

/// Values per body frame in the flat buffer: x (3), R column-major (9), v (3), ω global (3).
pub const FRAME_LEN: usize = 18;
/// Values per body of J̇_b ż: a (3, global), α (3, global).
pub const ACC_LEN: usize = 6;
/// Values per body of a massless leaf's columns: d (3) then per joint coordinate k = 0, 1 the
/// translation and rotation columns (3 + 3), global ([`TreeKin`]'s `dcols`).
pub const DCOLS_LEN: usize = 15;

/// Where each part of a tree's kinematics lies in its flat buffer (offsets in `f64`s; nb = the
/// tree's bodies, n = its coordinates). Body `lb` (local index in [`Tree::bodies`]):
///
/// ```text
/// frames + 18 lb : x, R (column-major), v, ω            (every body)
/// acc    +  6 lb : J̇_b ż: a, α (global)                 (bodies with Tree::need_acc)
/// dcols  + 15 lb : d, (v_c, ω_c) per joint coordinate    (massless leaves)
/// jac    + (6 lb + k) n + c : J_b row k, column c        (bodies with Tree::need_acc)
/// mj     + (6 lb + k) n + c : M_b J_b, same layout       (bodies with mass)
/// chol   + i n + j : M_z's Cholesky factor L (j < i), Lᵀ above the diagonal, 1 / L_ii on it
/// gev[g] + s C + m : spline group g's slot s, channel m (C channels; TreeKernel::spline_groups or the host)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatLayout {
    /// Number of tree bodies.
    pub nb: usize,
    /// Number of tree coordinates.
    pub n: usize,
    /// Offset of the frames.
    pub frames: usize,
    /// Offset of J̇_b ż.
    pub acc: usize,
    /// Offset of the massless leaves' columns.
    pub dcols: usize,
    /// Offset of J.
    pub jac: usize,
    /// Offset of M_b J_b.
    pub mj: usize,
    /// Offset of M_z's Cholesky factor.
    pub chol: usize,
    /// Offset of each spline group's evaluation.
    pub gev: Vec<usize>,
    /// Total length.
    pub len: usize,
}

impl FlatLayout {
    /// The layout of `tree`'s buffer.
    pub fn of(tree: &Tree) -> Self {
        let (nb, n) = (tree.bodies.len(), tree.n_coords());
        let frames = 0;
        let acc = frames + FRAME_LEN * nb;
        let dcols = acc + ACC_LEN * nb;
        let jac = dcols + DCOLS_LEN * nb;
        let mj = jac + 6 * nb * n;
        let chol = mj + 6 * nb * n;
        let mut at = chol + n * n;
        let gev = tree
            .groups
            .iter()
            .map(|g| {
                let o = at;
                at += sm::SPLINE_SLOTS * g.spline.channels();
                o
            })
            .collect();
        Self {
            nb,
            n,
            frames,
            acc,
            dcols,
            jac,
            mj,
            chol,
            gev,
            len: at,
        }
    }

    /// A new buffer: J's constant entries ([`TreeKin::new`]) in place, zeros elsewhere.
    pub fn initial(&self, tree: &Tree) -> Vec<f64> {
        let mut out = vec![0.0; self.len];
        TreeKin::new(tree).write_flat(tree, self, &mut out);
        out
    }

    /// Body `lb`'s frame from a buffer.
    pub fn frame(&self, flat: &[f64], lb: usize) -> Frame {
        let f = &flat[self.frames + FRAME_LEN * lb..self.frames + FRAME_LEN * (lb + 1)];
        let v3 = |o: usize| Vector3::new(f[o], f[o + 1], f[o + 2]);
        Frame {
            x: v3(0),
            rot: Matrix3::from_column_slice(&f[3..12]),
            v: v3(12),
            w: v3(15),
        }
    }
}

impl TreeKin {
    /// Writes this kinematics into a flat buffer of `layout` ([`FlatLayout`]).
    pub fn write_flat(&self, tree: &Tree, layout: &FlatLayout, out: &mut [f64]) {
        let (nb, n) = (layout.nb, layout.n);
        for lb in 0..nb {
            let f = &self.frames[lb];
            let o = layout.frames + FRAME_LEN * lb;
            out[o..o + 3].copy_from_slice(f.x.as_slice());
            out[o + 3..o + 12].copy_from_slice(f.rot.as_slice());
            out[o + 12..o + 15].copy_from_slice(f.v.as_slice());
            out[o + 15..o + 18].copy_from_slice(f.w.as_slice());
            let (a, al) = self.acc[lb];
            let o = layout.acc + ACC_LEN * lb;
            out[o..o + 3].copy_from_slice(a.as_slice());
            out[o + 3..o + 6].copy_from_slice(al.as_slice());
            let (d, cols) = &self.dcols[lb];
            let o = layout.dcols + DCOLS_LEN * lb;
            out[o..o + 3].copy_from_slice(d.as_slice());
            for (k, (vc, wc)) in cols.iter().enumerate() {
                out[o + 3 + 6 * k..o + 6 + 6 * k].copy_from_slice(vc.as_slice());
                out[o + 6 + 6 * k..o + 9 + 6 * k].copy_from_slice(wc.as_slice());
            }
        }
        out[layout.jac..layout.jac + 6 * nb * n].copy_from_slice(&self.jac);
        out[layout.mj..layout.mj + 6 * nb * n].copy_from_slice(&self.mj);
        out[layout.chol..layout.chol + n * n].copy_from_slice(&self.chol);
        for (g, &o) in layout.gev.iter().enumerate() {
            let ev = &self.gev[g];
            out[o..o + ev.len()].copy_from_slice(ev);
        }
        debug_assert_eq!(layout.gev.len(), tree.groups.len());
    }

    /// Reads a flat buffer of `layout` into this kinematics (the inverse of
    /// [`TreeKin::write_flat`]).
    pub fn read_flat(&mut self, layout: &FlatLayout, flat: &[f64]) {
        let (nb, n) = (layout.nb, layout.n);
        for lb in 0..nb {
            self.frames[lb] = layout.frame(flat, lb);
            let o = layout.acc + ACC_LEN * lb;
            let v3 = |o: usize| Vector3::new(flat[o], flat[o + 1], flat[o + 2]);
            self.acc[lb] = (v3(o), v3(o + 3));
            let o = layout.dcols + DCOLS_LEN * lb;
            let cols = [(v3(o + 3), v3(o + 6)), (v3(o + 9), v3(o + 12))];
            self.dcols[lb] = (v3(o), cols);
        }
        self.jac
            .copy_from_slice(&flat[layout.jac..layout.jac + 6 * nb * n]);
        self.mj
            .copy_from_slice(&flat[layout.mj..layout.mj + 6 * nb * n]);
        self.chol
            .copy_from_slice(&flat[layout.chol..layout.chol + n * n]);
        for (g, &o) in layout.gev.iter().enumerate() {
            let len = self.gev[g].len();
            self.gev[g].copy_from_slice(&flat[o..o + len]);
        }
    }
}

/// The evaluation path of a model's joint trees, implemented for one model (generated code,
/// [`ReferenceKernel`]). Both methods must give what the generic code gives up to round-off:
/// [`TreeKernel::kinematics`] the entries of [`Joints::tree_kinematics_rows`] without
/// perturbation on the evaluation path (J_b and M_b J_b of the bodies with
/// [`Tree::need_acc`], the leaves' columns instead of theirs), [`TreeKernel::project`]
/// [`crate::joints::JointWork::project_q`]'s accelerations.
pub trait TreeKernel: Send + Sync + fmt::Debug {
    /// Tree `t`'s kinematics at the reduced state (r, v) into its buffer `flat`, whose spline
    /// groups' evaluations at (r, v) are in place. `Err(k)`: M_z is singular at tree
    /// coordinate k (its Cholesky factor met a non-positive pivot there).
    fn kinematics(&self, t: usize, r: &[f64], v: &[f64], flat: &mut [f64]) -> Result<(), usize>;

    /// Tree `t`'s spline groups at the reduced positions `r` into their slots of `flat`
    /// ([`FlatLayout::gev`]), as [`crate::joints::SplineGroup::eval_into`] writes them, for the groups it
    /// chooses to evaluate; returns the bit mask of the groups it did **not** evaluate (bit g
    /// for group g; groups from 64 on are always the host's), which the host then evaluates
    /// with the generic code. A kernel must leave to the host every group with a coordinate
    /// outside its grid: the generic code extrapolates and records the excursion in the
    /// table's spline ([`sm::TableSpline::excursion`]). The default evaluates none.
    fn spline_groups(&self, t: usize, r: &[f64], flat: &mut [f64]) -> u64 {
        let _ = (t, r, flat);
        u64::MAX
    }

    /// Projects the free-body accelerations `q` (evaluator layout, at the state of the last
    /// [`TreeKernel::kinematics`] of `flat`) onto tree `t`'s coordinates in place: the tree's
    /// jointed bodies' blocks get 0 but the coordinates' slots, which get z̈ (the root's
    /// block its six).
    fn project(&self, t: usize, flat: &[f64], q: &mut [f64]);

    /// The built-in force elements [`TreeKernel::forces`] evaluates (indices into
    /// [`CompiledModel::elements`], ascending): point-to-point elements whose markers lie on
    /// tree bodies or the ground. Empty (the default): the kernel evaluates no force element and
    /// [`TreeKernel::forces`] is never called.
    fn force_elements(&self) -> &[usize] {
        &[]
    }

    /// The wrenches of the elements [`TreeKernel::force_elements`] on the path of q, from the
    /// bodies' frames in the trees' buffers `flats` (one per tree, at the state of their last
    /// [`TreeKernel::kinematics`]): adds each element's force to `force[b]` and its torque about
    /// the body's centre of mass (lever arm × force, global) to `torque[b]` of both its bodies
    /// (none for the ground), as [`crate::p2p`]'s packs do, and writes per element (in the
    /// order of [`TreeKernel::force_elements`]) its scalar force f, length L and length rate L̇
    /// to `out` (3 values each). With `watch`, returns the wrapping sum of
    /// [`crate::compiled::segment_pair_hash`] over its curve evaluations (what
    /// `crate::compiled::eval_curve` would have added to the segment signature), else 0.
    fn forces(
        &self,
        flats: &[Vec<f64>],
        force: &mut [Vector3<f64>],
        torque: &mut [Vector3<f64>],
        out: &mut [f64],
        watch: bool,
    ) -> u64 {
        let _ = (flats, force, torque, out, watch);
        0
    }
}

/// [`TreeKernel`] by the generic code ([`Joints::tree_kinematics_rows`], the projection of
/// [`crate::joints::JointWork::project_q`]) through the flat layout: the reference every
/// generated kernel is checked against. Not for stepping (it allocates).
#[derive(Debug, Clone)]
pub struct ReferenceKernel {
    model: Arc<CompiledModel>,
}

impl ReferenceKernel {
    /// The reference kernel of `model`.
    pub fn new(model: Arc<CompiledModel>) -> Self {
        Self { model }
    }
}

impl TreeKernel for ReferenceKernel {
    fn kinematics(&self, t: usize, r: &[f64], v: &[f64], flat: &mut [f64]) -> Result<(), usize> {
        let tree = &self.model.joints.trees[t];
        let layout = FlatLayout::of(tree);
        let mut kin = TreeKin::new(tree);
        let res = self.model.joints.tree_kinematics_rows(
            &self.model,
            t,
            r,
            v,
            Perturb::None,
            None,
            false,
            &mut kin,
        );
        kin.write_flat(tree, &layout, flat);
        res
    }

    fn project(&self, t: usize, flat: &[f64], q: &mut [f64]) {
        let tree = &self.model.joints.trees[t];
        let layout = FlatLayout::of(tree);
        let mut kin = TreeKin::new(tree);
        kin.read_flat(&layout, flat);
        let n = tree.n_coords();
        let mut rhs = vec![0.0; n];
        let mut acc = vec![(Vector3::zeros(), Vector3::zeros()); tree.bodies.len()];
        Joints::project_tree(tree, &kin, 1.0, q, &mut rhs, &mut acc);
    }
}
