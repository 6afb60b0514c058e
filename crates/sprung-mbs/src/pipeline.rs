//! The evaluation pipeline of document 000, Bild 6: body kinematics → marker kinematics → force
//! elements (forces and analytic partials) → Newton–Euler per body → assembly of q, J_r K, J_v and
//! J_u, block-structured by body (6 × 6 blocks of the body-coupling graph).
//!
//! Newton–Euler per body (document 000, eqs. 1-3) with v = (ẋ global, ω in body axes):
//! q_l = ( F/m + g ,  I⁻¹ (Rᵀ τ − ω × I ω) ), F and τ (about the centre of mass) global.
//!
//! Partials: elements report partials of their global force/torque with respect to their two
//! markers' own perturbations (relative marker form, [`crate::element::Partials`]); `apply_element`
//! chains them to the carrying bodies' global perturbations (δx, δφ; at fixed body-frame ω, so
//! the global ω = R ω_body turns with δφ) and velocities (v, ω global).
//! Assembly accumulates the partials of each body's global wrench per coupled body pair in 3 × 3
//! blocks (`SlotAcc`, one per stored block of the pattern), then converts once per block:
//! [`Evaluator::linearise`] maps columns to generalised coordinates (δφ = R δθ, ω = R ω_body) and
//! rows through Newton–Euler (1/m and I⁻¹ Rᵀ), and finally adds the body's own terms
//! (∂(Rᵀτ)/∂θ = \[Rᵀτ\]×, gyroscopic ∂(−ω × Iω)/∂ω). With quaternion coordinates the result is
//! exactly J_r K (the quaternion kinematics' left inverse cancels), see [`crate::rotation`].
//! [`Evaluator::linearise_congruent`] leaves both transforms to the solver (the congruence form
//! J = D_r G D_c of [`sprung_solve::mech::congruence`]) and adds the own terms in global form.

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_solve::block::BlockMatrix;
use sprung_solve::mech::{Congruence, Linearisation};

use crate::compiled::{CompiledModel, ElementKind, ForceElement, InputKind};
use crate::element::{ElementForce, Ends, Partials};
use crate::kinematics::{BodyKin, MarkerKin, skew_mul};
#[cfg(target_arch = "x86_64")]
use crate::m3::Avx2;
use crate::m3::{Lanes, M3, Portable};
use crate::pack::ElementPacks;
use crate::rotation::skew;
use crate::{bushing, p2p};

/// Accumulated partials of one body's global wrench (force; torque about the centre of mass) with
/// respect to one coupled body's perturbations, in 3 × 3 blocks: `r[row][col]` with rows
/// (force, torque) and columns (δx, δφ at fixed body-frame ω); `v[row][col]` with columns (v, ω),
/// all global.
#[derive(Debug, Clone, Copy)]
struct SlotAcc {
    r: [[M3; 2]; 2],
    v: [[M3; 2]; 2],
}

impl SlotAcc {
    const ZERO: Self = Self {
        r: [[M3::ZERO; 2]; 2],
        v: [[M3::ZERO; 2]; 2],
    };
}

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
    /// 1 / mass per body (no division in the hot path).
    inv_mass: Vec<f64>,
    torque: Vec<Vector3<f64>>,
    /// Block slots per element: slot[c][e] for (I/J side c, I/J side e).
    slots: Vec<[[Option<usize>; 2]; 2]>,
    /// Per element and (side, end): whether it is the first contribution to its block in the
    /// fixed evaluation order (elements, then inputs); the first one overwrites instead of adding.
    first: Vec<FirstFlags>,
    /// Block slot of each input's body and whether the input is its block's first contribution.
    input_slots: Vec<Option<(usize, bool)>>,
    /// J_u, column-major: column k (input k) = ∂q/∂u_k.
    pub j_u: Vec<f64>,
    scratch: ElementForce,
    /// Wrench partials per stored block of the pattern (global form, before `finish_partials`).
    acc: Vec<SlotAcc>,
    /// Bushings and point-to-point elements grouped four to a pack for the q-only path
    /// ([`crate::pack`]).
    packs: ElementPacks,
    /// Whether [`Evaluator::accelerations`] uses the packs (else every element one by one).
    use_packs: bool,
    /// The AVX2 token when [`Evaluator::linearise`] runs its AVX2 compiled copy.
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
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
                let b = [
                    model.markers[e.marker_i].body,
                    model.markers[e.marker_j].body,
                ];
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
            .collect::<Vec<_>>();
        let (first, input_slots) = first_contributions(&model, &slots);
        Self {
            bodies: vec![BodyKin::default(); nb],
            elements: vec![ElementForce::default(); model.elements.len()],
            u: vec![0.0; model.inputs.len()],
            u_dot: vec![0.0; model.inputs.len()],
            force: vec![Vector3::zeros(); nb],
            inv_mass: model.bodies.iter().map(|b| 1.0 / b.mass).collect(),
            torque: vec![Vector3::zeros(); nb],
            slots,
            first,
            input_slots,
            j_u: vec![0.0; 6 * nb * model.inputs.len()],
            scratch: ElementForce::default(),
            acc: vec![SlotAcc::ZERO; p.n_stored()],
            packs: ElementPacks::new(&model),
            use_packs: true,
            #[cfg(target_arch = "x86_64")]
            avx2: detect_avx2(),
            model,
        }
    }

    /// The compiled model.
    pub fn model(&self) -> &Arc<CompiledModel> {
        &self.model
    }

    /// Body kinematics and the listed elements only, at (t, r, v): what output channels read
    /// (`elements` and `bodies` tables). No body wrenches, no inputs, no partials — a fraction of
    /// [`Evaluator::accelerations`] when few elements are observed.
    pub fn evaluate_elements(&mut self, _t: f64, r: &[f64], v: &[f64], which: &[usize]) {
        let model = self.model.clone();
        crate::kinematics::body_kinematics(&model, r, v, &mut self.bodies);
        for &k in which {
            let el = &model.elements[k];
            evaluate_element(
                Portable,
                &model,
                el,
                &self.bodies,
                false,
                &mut self.elements[k],
            );
        }
    }

    /// Evaluates q(t, r, v) only.
    ///
    /// Like [`Evaluator::linearise`], this runs an AVX2 compiled copy with 256-bit lanes for the
    /// marker frames and bushing kinematics where the CPU has AVX2 (same results to round-off).
    pub fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = self.avx2 {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA.
            unsafe { self.accelerations_avx2(avx, t, r, v, q) };
            return;
        }
        self.forces(Portable, t, r, v, false);
        self.newton_euler(q);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn accelerations_avx2(&mut self, avx: Avx2, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        self.forces(avx, t, r, v, false);
        self.newton_euler(q);
    }

    /// Evaluates q, J_v, J_r K and J_u at (t, r, v) and J_u u̇ into `lin`.
    ///
    /// The pipeline below is inlined into this function and into [`Self::accelerations`]
    /// (`#[inline(always)]` down to the element laws): the q-only copy then drops every partial
    /// and the element results stay in registers (measured: q 5.5 → 3.0 µs on the double wishbone).
    ///
    /// On CPUs with AVX2 the same code runs compiled with AVX2 and FMA enabled and with 256-bit
    /// lanes and fused multiply-adds for the 3 × 3 blocks of the partials ([`crate::m3`]); the
    /// results agree with the portable copy to round-off (tested).
    pub fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        self.linearise_form(t, r, v, lin, false);
    }

    /// Like [`Evaluator::linearise`], but leaves J_v and J_r K in the congruence form
    /// J = D_r G D_c of [`sprung_solve::mech::congruence`] (`lin.congruent` set): G holds the
    /// partials of the global body wrenches with respect to the global perturbations, D_r is
    /// Newton–Euler (1/m, I⁻¹ Rᵀ) and D_c = diag(I₃, R). Saves the 3 × 3 block products per
    /// block piece of [`Evaluator::linearise`]; what the fixed-step stepper uses.
    pub fn linearise_congruent(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
        self.linearise_form(t, r, v, lin, true);
    }

    fn linearise_form(
        &mut self,
        t: f64,
        r: &[f64],
        v: &[f64],
        lin: &mut Linearisation,
        congruent: bool,
    ) {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = self.avx2 {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA.
            unsafe { self.linearise_avx2(avx, t, r, v, lin, congruent) };
            return;
        }
        self.linearise_with(Portable, t, r, v, lin, congruent);
    }

    /// Uses the portable copies of [`Evaluator::linearise`] and [`Evaluator::accelerations`] even
    /// where AVX2 is available (for tests that compare both copies, and for measurements).
    pub fn force_portable(&mut self, portable: bool) {
        #[cfg(target_arch = "x86_64")]
        {
            self.avx2 = if portable { None } else { detect_avx2() };
        }
        let _ = portable;
    }

    /// Whether [`Evaluator::accelerations`] evaluates bushings and point-to-point elements four
    /// at a time ([`crate::pack`], the default) or one by one like [`Evaluator::linearise`]; both
    /// agree to round-off (tested). For tests and measurements.
    pub fn use_element_packs(&mut self, packs: bool) {
        self.use_packs = packs;
    }

    /// Number of (bushings, point-to-point elements) the q-only path evaluates in packs of four.
    pub fn n_packed_elements(&self) -> (usize, usize) {
        self.packs.n_packed()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn linearise_avx2(
        &mut self,
        avx: Avx2,
        t: f64,
        r: &[f64],
        v: &[f64],
        lin: &mut Linearisation,
        congruent: bool,
    ) {
        self.linearise_with(avx, t, r, v, lin, congruent);
    }

    #[inline(always)]
    fn linearise_with<L: Lanes>(
        &mut self,
        l: L,
        t: f64,
        r: &[f64],
        v: &[f64],
        lin: &mut Linearisation,
        congruent: bool,
    ) {
        lin.r.copy_from_slice(r);
        // Every block of `self.acc` is overwritten by its first contribution (`first`); blocks
        // nothing contributes to keep the zeros of `new`.
        self.forces(l, t, r, v, true);
        self.newton_euler(&mut lin.q);
        if congruent {
            self.finish_congruent(l, &mut lin.j_rk, &mut lin.j_v);
            self.congruence_factors(&mut lin.congruence);
        } else {
            self.finish_partials(l, &mut lin.j_rk, &mut lin.j_v);
        }
        lin.congruent = congruent;
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
    /// `want`, the global wrench partials are accumulated per block into `self.acc`.
    #[inline(always)]
    fn forces<L: Lanes>(&mut self, l: L, t: f64, r: &[f64], v: &[f64], want: bool) {
        let model = self.model.clone();
        crate::kinematics::body_kinematics(&model, r, v, &mut self.bodies);
        for (i, b) in model.bodies.iter().enumerate() {
            self.force[i] = b.mass * model.gravity;
            self.torque[i] = Vector3::zeros();
        }
        // The q-only path evaluates the packed elements four at a time, the rest one by one.
        let packed = !want && self.use_packs;
        if packed {
            self.packs.forces(
                l,
                &model.curves,
                &self.bodies,
                &mut self.force,
                &mut self.torque,
                &mut self.elements,
            );
        }
        let n_single = if packed {
            self.packs.unpacked().len()
        } else {
            model.elements.len()
        };
        for i in 0..n_single {
            let k = if packed { self.packs.unpacked()[i] } else { i };
            let el = &model.elements[k];
            let ends = evaluate_element(l, &model, el, &self.bodies, want, &mut self.elements[k]);
            let acc = if want { Some(&mut self.acc[..]) } else { None };
            apply_element(
                l,
                &mut self.force,
                &mut self.torque,
                &self.bodies,
                &ends,
                &self.elements[k],
                acc,
                &self.slots[k],
                &self.first[k],
            );
        }
        // Inputs u(t): forces and torques at markers (the other end is the ground).
        for (k, inp) in model.inputs.iter().enumerate() {
            self.u[k] = inp.signal.value(t);
            self.u_dot[k] = inp.signal.rate(t);
            let m = MarkerKin::with_lanes(l, &model.markers[inp.marker], &self.bodies);
            let Some(c) = m.body else { continue };
            let dir = if inp.body_frame {
                self.bodies[c].rot * inp.direction
            } else {
                inp.direction
            };
            let val = dir * self.u[k];
            let ef = &mut self.scratch;
            ef.point = [m.x, m.x];
            ef.point_end = [0, 0];
            ef.partials = Partials::ZERO;
            // A body-fixed direction turns with the body: ∂(R d s) = −[R d s]× δφ.
            let d_val = if inp.body_frame {
                M3::skew(&val).neg(l)
            } else {
                M3::ZERO
            };
            match inp.kind {
                InputKind::Force => {
                    ef.force = val;
                    ef.torque = Vector3::zeros();
                    ef.partials.f_phi[0] = d_val;
                }
                InputKind::Torque => {
                    ef.force = Vector3::zeros();
                    ef.torque = val;
                    ef.partials.t_phi[0] = d_val;
                    ef.partials.has_torque = inp.body_frame;
                }
            }
            let mut ground = m;
            ground.body = None;
            let (slot, first) =
                self.input_slots[k].expect("the diagonal block of a body is stored");
            let acc = if want { Some(&mut self.acc[..]) } else { None };
            apply_element(
                l,
                &mut self.force,
                &mut self.torque,
                &self.bodies,
                &[m, ground],
                &self.scratch,
                acc,
                &[[Some(slot), None], [None, None]],
                &[[first, false], [false, false]],
            );
        }
    }

    /// Newton–Euler per body: q from the accumulated wrenches.
    #[inline(always)]
    fn newton_euler(&self, q: &mut [f64]) {
        for (i, b) in self.model.bodies.iter().enumerate() {
            let k = &self.bodies[i];
            let a = self.force[i] * self.inv_mass[i];
            let tb = k.rot.transpose() * self.torque[i];
            let w = k.w_body;
            let alpha = b.inertia_inv * (tb - w.cross(&(b.inertia * w)));
            q[6 * i..6 * i + 3].copy_from_slice(a.as_slice());
            q[6 * i + 3..6 * i + 6].copy_from_slice(alpha.as_slice());
        }
    }

    /// Converts the accumulated global wrench partials into J_r K and J_v (see module docs), block
    /// by block in 3 × 3 pieces: columns φ → θ and ω → ω_body (δφ = R_e δθ, ω = R_e ω_body), rows
    /// through Newton–Euler (1/m, I⁻¹ R_cᵀ).
    #[inline(always)]
    fn finish_partials<L: Lanes>(&self, l: L, j_rk: &mut BlockMatrix, j_v: &mut BlockMatrix) {
        let pattern = &self.model.pattern;
        for c in 0..pattern.n_blocks() {
            let body = &self.model.bodies[c];
            let kc = &self.bodies[c];
            let inv_m = 1.0 / body.mass;
            let n = M3::from_matrix(&(body.inertia_inv * kc.rot.transpose()));
            for s in pattern.row_ptr()[c]..pattern.row_ptr()[c + 1] {
                let e = pattern.col_idx()[s];
                let ke = &self.bodies[e];
                let rot_e = &ke.rot_rows;
                let a = &self.acc[s];
                let (f_phi, f_w) = (a.r[0][1].mul(l, rot_e), a.v[0][1].mul(l, rot_e));
                let (t_phi, t_w) = (a.r[1][1].mul(l, rot_e), a.v[1][1].mul(l, rot_e));
                let (mut t_phi, mut t_w) = (n.mul(l, &t_phi), n.mul(l, &t_w));
                if e == c {
                    // The body's own terms: ∂(Rᵀτ)/∂θ = [Rᵀτ]×, gyroscopic ∂(−ω × Iω)/∂ω.
                    let tb = kc.rot.transpose() * self.torque[c];
                    let w = kc.w_body;
                    let iw = body.inertia * w;
                    let own_phi = body.inertia_inv * skew(&tb);
                    let own_w = body.inertia_inv * (skew(&iw) - skew_mul(&w, &body.inertia));
                    t_phi.add_assign(l, &M3::from_matrix(&own_phi));
                    t_w.add_assign(l, &M3::from_matrix(&own_w));
                }
                let out_r: &mut [f64; 36] = j_rk.block_mut(s).try_into().expect("6 x 6 block");
                store_block(
                    out_r,
                    [
                        [&a.r[0][0].scale(l, inv_m), &f_phi.scale(l, inv_m)],
                        [&n.mul(l, &a.r[1][0]), &t_phi],
                    ],
                );
                let out_v: &mut [f64; 36] = j_v.block_mut(s).try_into().expect("6 x 6 block");
                store_block(
                    out_v,
                    [
                        [&a.v[0][0].scale(l, inv_m), &f_w.scale(l, inv_m)],
                        [&n.mul(l, &a.v[1][0]), &t_w],
                    ],
                );
            }
        }
    }

    /// The congruence form of [`Self::finish_partials`]: G_rK and G_v stay global (no row or
    /// column transform); only the body's own terms are added to the diagonal block, in global
    /// form: [τ]× on the δφ column and the gyroscopic [I_g ω]× − [ω]× I_g (I_g = R I Rᵀ) on
    /// the ω column. D_r G D_c equals [`Self::finish_partials`] in exact arithmetic.
    #[inline(always)]
    fn finish_congruent<L: Lanes>(&self, l: L, g_rk: &mut BlockMatrix, g_v: &mut BlockMatrix) {
        let pattern = &self.model.pattern;
        for c in 0..pattern.n_blocks() {
            for s in pattern.row_ptr()[c]..pattern.row_ptr()[c + 1] {
                let e = pattern.col_idx()[s];
                let a = &self.acc[s];
                let (mut t_phi, mut t_w) = (a.r[1][1], a.v[1][1]);
                if e == c {
                    let (own_phi, own_w) = self.own_terms_global(c);
                    t_phi.add_assign(l, &own_phi);
                    t_w.add_assign(l, &own_w);
                }
                let out_r: &mut [f64; 36] = g_rk.block_mut(s).try_into().expect("6 x 6 block");
                store_block(out_r, [[&a.r[0][0], &a.r[0][1]], [&a.r[1][0], &t_phi]]);
                let out_v: &mut [f64; 36] = g_v.block_mut(s).try_into().expect("6 x 6 block");
                store_block(out_v, [[&a.v[0][0], &a.v[0][1]], [&a.v[1][0], &t_w]]);
            }
        }
    }

    /// The body's own partials in global form: [τ]× on δφ (the torque turns with the body in
    /// Rᵀτ) and the gyroscopic ∂(−ω × I_g ω)/∂ω = [I_g ω]× − [ω]× I_g on ω.
    #[inline(always)]
    fn own_terms_global(&self, c: usize) -> (M3, M3) {
        let kc = &self.bodies[c];
        let i_g = kc.rot * self.model.bodies[c].inertia * kc.rot.transpose();
        let own_w = skew(&(i_g * kc.w)) - skew_mul(&kc.w, &i_g);
        (M3::skew(&self.torque[c]), M3::from_matrix(&own_w))
    }

    /// D_r and D_c of the congruence form per body: m, R I, I⁻¹ Rᵀ and R.
    #[inline(always)]
    fn congruence_factors(&self, cg: &mut Congruence) {
        for (k, body) in self.model.bodies.iter().enumerate() {
            let rot = &self.bodies[k].rot;
            cg.mass[k] = body.mass;
            cg.rot_rows_inv[k] = row_major(&(rot * body.inertia));
            cg.rot_rows[k] = row_major(&(body.inertia_inv * rot.transpose()));
            cg.rot_cols[k] = row_major(rot);
        }
    }

    /// J_u: ∂q/∂u_k for each input (wrench per unit signal through Newton–Euler).
    #[inline(always)]
    fn input_jacobian(&mut self) {
        let nv = 6 * self.model.bodies.len();
        self.j_u.fill(0.0);
        for (k, inp) in self.model.inputs.iter().enumerate() {
            let m = MarkerKin::new(&self.model.markers[inp.marker], &self.bodies);
            let Some(c) = m.body else { continue };
            let kc = &self.bodies[c];
            let body = &self.model.bodies[c];
            let dir = if inp.body_frame {
                kc.rot * inp.direction
            } else {
                inp.direction
            };
            let (f, t) = match inp.kind {
                InputKind::Force => (dir, m.arm.cross(&dir)),
                InputKind::Torque => (Vector3::zeros(), dir),
            };
            let col = &mut self.j_u[k * nv..(k + 1) * nv];
            let a = f * (1.0 / body.mass);
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

/// The AVX2 token unless the environment variable `SPRUNG_PORTABLE` is set (it selects the
/// portable copies of the pipeline, e.g. for profiling under valgrind, which does not decode all
/// AVX instructions).
#[cfg(target_arch = "x86_64")]
fn detect_avx2() -> Option<Avx2> {
    if std::env::var_os("SPRUNG_PORTABLE").is_some() {
        None
    } else {
        Avx2::detect()
    }
}

/// Marker kinematics of both ends of element `el` and the element's law (with partials if
/// `want`) into `out`; returns the ends for the assembly.
#[inline(always)]
fn evaluate_element<L: Lanes>(
    l: L,
    model: &CompiledModel,
    el: &ForceElement,
    bodies: &[BodyKin],
    want: bool,
    out: &mut ElementForce,
) -> Ends {
    let ends: Ends = [
        MarkerKin::with_lanes(l, &model.markers[el.marker_i], bodies),
        MarkerKin::with_lanes(l, &model.markers[el.marker_j], bodies),
    ];
    match &el.kind {
        ElementKind::Bushing(b) => bushing::evaluate(l, b, &model.curves, &ends, want, out),
        ElementKind::P2p(law) => {
            p2p::evaluate(l, law, &model.curves, el.design_length, &ends, want, out)
        }
    }
    ends
}

/// Per (side, end) of an element: whether it is its block's first contribution.
type FirstFlags = [[bool; 2]; 2];

/// Marks, for the fixed evaluation order (elements with their (side, end) pairs, then inputs),
/// which contribution comes first to each block: `(per element, per input)`. Blocks nothing
/// contributes to are never written and keep the zeros they start with.
fn first_contributions(
    model: &CompiledModel,
    slots: &[[[Option<usize>; 2]; 2]],
) -> (Vec<FirstFlags>, Vec<Option<(usize, bool)>>) {
    let mut seen = vec![false; model.pattern.n_stored()];
    let mut claim = |slot: usize| !std::mem::replace(&mut seen[slot], true);
    let first = slots
        .iter()
        .map(|s| {
            let mut f = [[false; 2]; 2];
            for side in 0..2 {
                for e in 0..2 {
                    if let Some(slot) = s[side][e] {
                        f[side][e] = claim(slot);
                    }
                }
            }
            f
        })
        .collect();
    let inputs = model
        .inputs
        .iter()
        .map(|inp| {
            let c = model.markers[inp.marker].body?;
            let slot = model.pattern.slot(c, c)?;
            Some((slot, claim(slot)))
        })
        .collect();
    (first, inputs)
}

/// A 3 × 3 matrix as nine row-major entries.
#[inline(always)]
fn row_major(m: &Matrix3<f64>) -> [f64; 9] {
    let mut out = [0.0; 9];
    out.copy_from_slice(m.transpose().as_slice());
    out
}

/// `dst = k x` for the first contribution to a block, else `dst += k x` (a plain function, not a
/// closure: closures do not inherit the AVX2 target features, and one that is not inlined calls
/// every intrinsic out of line — measured 6× slower).
#[inline(always)]
fn put_block<L: Lanes>(l: L, first: bool, dst: &mut M3, x: &M3, k: f64) {
    *dst = if first {
        x.scale(l, k)
    } else {
        dst.add_scaled(l, x, k)
    };
}

/// Stores the four 3 × 3 pieces [[a, b], [c, d]] of a row-major 6 × 6 block row by row: the
/// padded left row first (its fourth lane lands where the right row goes next), then the right row.
#[inline(always)]
fn store_block(out: &mut [f64; 36], pieces: [[&M3; 2]; 2]) {
    for (half, [left, right]) in pieces.iter().enumerate() {
        for r in 0..3 {
            let row = &mut out[(3 * half + r) * 6..(3 * half + r) * 6 + 6];
            row[..4].copy_from_slice(&left.r[r]);
            row[3..].copy_from_slice(&right.r[r][..3]);
        }
    }
}

/// Adds the wrenches of one element to the bodies of its two ends (side I: +force, +torque at
/// `point[0]`; side J: the opposites at `point[1]`) and, with `acc`, their partials per block.
///
/// Chain rule per end e (sign σ_e = +1 for I, −1 for J; lever arm a_e = R s; W_e = [ω_e]×[a_e]×),
/// from the marker perturbations δp = δx − [a]×δφ, δv = δv_b − [a]×δω − W δφ to the carrying
/// body's (δx, δφ, v, ω), where δφ also turns the global ω = R ω_body, δω = −[ω_e]× δφ:
/// ∂F = σ_e F_p δx + (F_φ,e − σ_e (F_p [a_e]× + F_v [ω_e × a_e]×)) δφ + σ_e F_v v
///      − σ_e F_v [a_e]× ω,
/// ∂T = (T_φ,e − σ_e T_ω [ω_e]×) δφ + σ_e T_ω ω (see [`crate::element::Partials`]).
/// For the wrench (s F, s (a_c × F + T)) on body c with arm a_c = point − x_c the torque rows are
/// [a_c]× (force rows) + torque rows, plus −[s F]× on the δp of the end carrying the point (chained
/// to its body) and +[s F]× on body c's own δx. The force-row blocks and [a_c]× F_p, [a_c]× F_v
/// are shared by both ends (they differ only in sign), so each (c, e) block costs two skew products.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one call site per kind of contribution, all in this file
fn apply_element<L: Lanes>(
    l: L,
    force: &mut [Vector3<f64>],
    torque: &mut [Vector3<f64>],
    bodies: &[BodyKin],
    ends: &Ends,
    ef: &ElementForce,
    acc: Option<&mut [SlotAcc]>,
    slots: &[[Option<usize>; 2]; 2],
    first: &FirstFlags,
) {
    const SIGN: [f64; 2] = [1.0, -1.0];
    for side in 0..2 {
        if let Some(c) = ends[side].body {
            let f = SIGN[side] * ef.force;
            let arm = ef.point[side] - bodies[c].x;
            force[c] += f;
            torque[c] += arm.cross(&f) + SIGN[side] * ef.torque;
        }
    }
    let Some(acc) = acc else { return };
    let p = &ef.partials;
    // Force partials with respect to each end's body rotation and angular velocity.
    // δφ columns at fixed body-frame ω (module docs): the marker-velocity term F_v W_e and the
    // turning of ω = R ω_body with the body, −(∂F/∂ω)[ω_e]× = σ_e F_v [a_e]× [ω_e]×, combine
    // to σ_e F_v ([ω_e]×[a_e]× − [a_e]×[ω_e]×) = σ_e F_v [ω_e × a_e]× (Jacobi identity); the
    // element torque's ω partial turns likewise: T_φ,e − σ_e T_ω [ω_e]×.
    let mut f_phi = [M3::ZERO; 2];
    let mut f_w = [M3::ZERO; 2];
    let mut t_phi_el = [M3::ZERO; 2];
    for e in 0..2 {
        if ends[e].body.is_none() {
            continue;
        }
        let (a, w, sg) = (&ends[e].arm, &ends[e].w, SIGN[e]);
        let mut chain = p.f_p.mul_skew(l, a);
        if p.has_f_v {
            chain.add_assign(l, &p.f_v.mul_skew(l, &w.cross(a)));
            f_w[e] = p.f_v.mul_skew(l, a).scale(l, -sg);
        }
        f_phi[e] = p.f_phi[e].sub(l, &chain.scale(l, sg));
        if p.has_torque {
            t_phi_el[e] = p.t_phi[e].sub(l, &p.t_w.mul_skew(l, w).scale(l, sg));
        }
    }
    for side in 0..2 {
        let Some(c) = ends[side].body else { continue };
        let s = SIGN[side];
        let f = s * ef.force;
        let arm = ef.point[side] - bodies[c].x;
        let f_x = M3::skew(&f);
        let g_p = M3::skew_mul(l, &arm, &p.f_p);
        let g_v = if p.has_f_v {
            M3::skew_mul(l, &arm, &p.f_v)
        } else {
            M3::ZERO
        };
        for e in 0..2 {
            let Some(slot) = slots[side][e] else { continue };
            let ss = s * SIGN[e];
            let a = &mut acc[slot];
            // The first contribution to a block in the (fixed) evaluation order overwrites the
            // previous linearisation's value (no clearing pass); later ones add, fused.
            let first = first[side][e];
            put_block(l, first, &mut a.r[0][0], &p.f_p, ss);
            put_block(l, first, &mut a.r[0][1], &f_phi[e], s);
            put_block(l, first, &mut a.r[1][0], &g_p, ss);
            let mut t_phi = M3::skew_mul(l, &arm, &f_phi[e]);
            if p.has_torque {
                t_phi.add_assign(l, &t_phi_el[e]);
            }
            put_block(l, first, &mut a.r[1][1], &t_phi, s);
            if e == ef.point_end[side] {
                // −[f]× δp_e with δp_e = δx_e − [a_e]× δφ_e
                a.r[1][0] = a.r[1][0].sub(l, &f_x);
                a.r[1][1].add_assign(l, &f_x.mul_skew(l, &ends[e].arm));
            }
            if e == side {
                // +[f]× δx_c: the arm a_c = point − x_c shortens with the body's own δx.
                a.r[1][0].add_assign(l, &f_x);
            }
            if p.has_f_v || p.has_torque {
                let mut t_w = M3::skew_mul(l, &arm, &f_w[e]);
                if p.has_torque {
                    t_w.add_assign(l, &p.t_w.scale(l, SIGN[e]));
                }
                put_block(l, first, &mut a.v[0][0], &p.f_v, ss);
                put_block(l, first, &mut a.v[0][1], &f_w[e], s);
                put_block(l, first, &mut a.v[1][0], &g_v, ss);
                put_block(l, first, &mut a.v[1][1], &t_w, s);
            } else if first {
                a.v = [[M3::ZERO; 2]; 2];
            }
        }
    }
}
