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
//! Assembly accumulates the partials G of each body's global wrench with respect to each coupled
//! body's global perturbations straight into the stored 6 × 6 blocks of the pattern (in 3 × 3
//! pieces; the first contribution to a block overwrites it, so there is no clearing pass), then
//! adds each body's own terms in global form (\[τ\]× on δφ, gyroscopic \[I_g ω\]× − \[ω\]× I_g on ω).
//! That is the congruence form J = D_r G D_c of [`sprung_solve::mech::congruence`], which
//! [`Evaluator::linearise_congruent`] delivers as it is (the fixed-step stepper solves with it).
//! [`Evaluator::linearise`] converts it in place: columns to generalised coordinates (δφ = R δθ,
//! ω = R ω_body), rows through Newton–Euler (1/m and I⁻¹ Rᵀ). With quaternion coordinates the
//! result is exactly J_r K (the quaternion kinematics' left inverse cancels), see
//! [`crate::rotation`].
//!
//! The element-state rates alone ([`Evaluator::state_rates`], document 002 eq. 3, for the
//! partly implicit Euler's state step) run the open elements with states and their link
//! sources on the kinematics of the bodies they sit on, through the same preparation and law
//! calls as the q path (`prepare_open_element`): the same rates, bit for bit.

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_solve::block::BlockMatrix;
use sprung_solve::mech::{Congruence, Linearisation};

use crate::compiled::{CompiledModel, ElementKind, ForceElement, InputKind};
use crate::element::{ElementForce, Ends, Partials};
use crate::element_law::{ElementInput, ElementLaw, ElementScratch, FD_RELATIVE_STEP, MarkerState};
use crate::element_link::{self, LinkScratch};
use crate::kinematics::{BodyKin, MarkerKin};
#[cfg(target_arch = "x86_64")]
use crate::m3::Avx2;
use crate::m3::{Lanes, M3, Portable};
use crate::pack::ElementPacks;
use crate::tree_kernel::TreeKernel;
use crate::{bushing, open_chain, p2p};

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
    /// The inputs the evaluation loop visits ([`live_inputs`]); the others (a constant signal
    /// read only by open elements) keep the value and zero rate set in [`Evaluator::new`].
    live_inputs: Vec<usize>,
    /// Values of the `runtime` inputs as the caller set them (other inputs: unused).
    runtime_u: Vec<f64>,
    /// Per open element: marker kinematics and the evaluation scratch (forces, state rates,
    /// outputs, algebraic variables, partials).
    open: Vec<OpenWork>,
    /// The open elements [`Evaluator::state_rates`] evaluates, in model order
    /// ([`state_rate_elements`]).
    rate_elements: Vec<usize>,
    /// The bodies carrying their markers, ascending.
    rate_bodies: Vec<usize>,
    /// Whether any open element is time-driven ([`OpenWork::time_driven`]), fixed at creation:
    /// the linearisation then adds their ∂q/∂t to q_t.
    any_time_driven: bool,
    /// ∂/∂t at fixed state of the wrenches on the bodies (global) and of the element-state rates
    /// that time-driven open elements add (their own time tables, time signals in their input
    /// slots); part of the stage term q_t of the linearisation.
    force_t: Vec<Vector3<f64>>,
    torque_t: Vec<Vector3<f64>>,
    state_rates_t: Vec<f64>,
    /// Rates of the element states (the state part of q).
    state_rates: Vec<f64>,
    /// Current input rates u̇(t).
    pub u_dot: Vec<f64>,
    force: Vec<Vector3<f64>>,
    /// Weight m g per body: the start of each evaluation's force accumulation (one copy
    /// instead of a product per body).
    weight: Vec<Vector3<f64>>,
    /// 1 / mass per body (no division in the hot path).
    inv_mass: Vec<f64>,
    /// Body-frame inertia tensor and its inverse per body.
    inertia: Vec<(M3, M3)>,
    /// Their transposes (for products from rows in [`Self::newton_euler`]).
    inertia_transposed: Vec<(M3, M3)>,
    /// Per body: massless (a massless follower, `docs/joints.md`): zero inertia and the unit
    /// stand-ins 1/m = 1, I⁻¹ = 1, so [`Self::newton_euler`] writes its wrench (F, Rᵀτ) without
    /// the inertia products.
    massless: Vec<bool>,
    /// Slot of each body's diagonal block.
    diagonal_slots: Vec<usize>,
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
    /// Block slots no built-in element or input overwrites during assembly (the diagonal
    /// blocks of bodies nothing acts on, and the blocks only open elements add to): the
    /// linearisation zeroes them first.
    unclaimed_slots: Vec<usize>,
    /// Bushings and point-to-point elements grouped four to a pack for the q-only path
    /// ([`crate::pack`]).
    packs: ElementPacks,
    /// Whether [`Evaluator::accelerations`] uses the packs (else every element one by one).
    use_packs: bool,
    /// A model-specific force kernel ([`TreeKernel::forces`]) with the packs of the elements
    /// it leaves to the generic code; the path of q runs it when the trees' buffers are current
    /// ([`Evaluator::accelerations_with_trees`]).
    force_kernel: Option<ForceKernel>,
    /// Per marker of the model: whether its axes are its body's
    /// ([`crate::kinematics::has_body_axes`]: no frame product).
    body_axes: Vec<bool>,
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
        let firsts = first_contributions(&model, &slots);
        let n_state_v = model.n_v() - model.n_body_v();
        let open = open_work(&model);
        Self {
            runtime_u: model.inputs.iter().map(|u| u.signal.value(0.0)).collect(),
            any_time_driven: open.iter().any(|w| w.time_driven || w.link_time_driven),
            rate_elements: state_rate_elements(&model),
            rate_bodies: marker_bodies(&model, &state_rate_elements(&model)),
            open,
            force_t: vec![Vector3::zeros(); nb],
            torque_t: vec![Vector3::zeros(); nb],
            state_rates_t: vec![0.0; n_state_v],
            state_rates: vec![0.0; n_state_v],
            bodies: vec![BodyKin::default(); nb],
            elements: vec![ElementForce::default(); model.elements.len()],
            // A fixed input's value and zero rate, as the loop over the inputs would write them
            // (its entry is not visited there, [`live_inputs`]); the others' come with the first
            // evaluation.
            u: model
                .inputs
                .iter()
                .map(|u| {
                    if is_fixed(u) {
                        u.signal.eval(0.0).0
                    } else {
                        0.0
                    }
                })
                .collect(),
            u_dot: vec![0.0; model.inputs.len()],
            live_inputs: live_inputs(&model),
            force: vec![Vector3::zeros(); nb],
            weight: model
                .bodies
                .iter()
                .map(|b| b.mass * model.gravity)
                .collect(),
            inv_mass: model.bodies.iter().map(|b| b.inv_mass()).collect(),
            inertia: model
                .bodies
                .iter()
                .map(|b| (M3::from_matrix(&b.inertia), M3::from_matrix(&b.inertia_inv)))
                .collect(),
            inertia_transposed: model
                .bodies
                .iter()
                .map(|b| {
                    (
                        M3::from_matrix(&b.inertia.transpose()),
                        M3::from_matrix(&b.inertia_inv.transpose()),
                    )
                })
                .collect(),
            massless: model
                .bodies
                .iter()
                .map(|b| b.mass == 0.0 && b.inertia == nalgebra::Matrix3::zeros())
                .collect(),
            diagonal_slots: (0..nb)
                .map(|c| p.slot(c, c).expect("every diagonal block is stored"))
                .collect(),
            torque: vec![Vector3::zeros(); nb],
            slots,
            first: firsts.elements,
            input_slots: firsts.inputs,
            j_u: vec![0.0; model.n_v() * model.inputs.len()],
            scratch: ElementForce::default(),
            unclaimed_slots: firsts.unclaimed,
            packs: ElementPacks::new(&model),
            use_packs: true,
            force_kernel: None,
            body_axes: model
                .markers
                .iter()
                .map(crate::kinematics::has_body_axes)
                .collect(),
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
                &self.body_axes,
                false,
                &mut self.elements[k],
            );
        }
    }

    /// Sets the value of input `k` if it is a `runtime` input; returns false (and changes
    /// nothing) for an input driven by a time signal.
    pub fn set_runtime_input(&mut self, k: usize, value: f64) -> bool {
        if self.model.inputs[k].runtime {
            self.runtime_u[k] = value;
            true
        } else {
            false
        }
    }

    /// The values of the `runtime` inputs as set (entries of time-signal inputs: their value at
    /// t = 0, unused).
    pub fn runtime_inputs(&self) -> &[f64] {
        &self.runtime_u
    }

    /// Sets all runtime input values at once (a snapshot being restored).
    pub fn set_runtime_inputs(&mut self, values: &[f64]) {
        self.runtime_u.copy_from_slice(values);
    }

    /// Outputs of open element `e` from its last evaluation.
    pub fn open_element_outputs(&self, e: usize) -> &[f64] {
        &self.open[e].scratch.outputs
    }

    /// Algebraic variables of open element `e` (its warm start).
    pub fn open_element_algebraic(&self, e: usize) -> &[f64] {
        &self.open[e].scratch.algebraic
    }

    /// Sets the algebraic variables of open element `e` (a snapshot being restored).
    pub fn set_open_element_algebraic(&mut self, e: usize, values: &[f64]) {
        self.open[e].scratch.algebraic.copy_from_slice(values);
    }

    /// Evaluates the listed open elements at (t, r, v) for their outputs (body kinematics must
    /// be current, e.g. from [`Evaluator::evaluate_elements`]); no wrenches, no partials.
    pub fn evaluate_open_elements(&mut self, t: f64, v: &[f64], which: &[usize]) {
        let model = self.model.clone();
        let nbv = model.n_body_v();
        for &e in which {
            let el = &model.open_elements[e];
            // A fed element's sources first, for the values of its linked slots.
            for l in &el.links {
                self.evaluate_open_elements(t, v, &[l.source]);
            }
            let (_, work) = prepare_open_element(
                &model,
                e,
                &mut self.open,
                &self.bodies,
                ModelInputs::Signals(&self.runtime_u),
                t,
            );
            let ns = el.law.n_states();
            let input = ElementInput {
                t,
                markers: &work.markers,
                states: &v[nbv + el.state_offset..nbv + el.state_offset + ns],
                inputs: &work.inputs,
            };
            work.scratch.evaluate_outputs(el.law.as_ref(), &input);
        }
    }

    /// Evaluates q(t, r, v) only.
    ///
    /// Like [`Evaluator::linearise`], this runs an AVX2 compiled copy with 256-bit lanes for the
    /// marker frames and bushing kinematics where the CPU has AVX2 (same results to round-off).
    pub fn accelerations(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        self.accelerations_from(t, r, v, q, None, None);
    }

    /// [`Evaluator::accelerations`] with the kinematics of some bodies given: only the bodies
    /// listed in `from_state` are computed from (r, v); the caller has written the others'
    /// into [`Evaluator::bodies`] (a model with joints: the trees' frames as they are,
    /// [`crate::joints::JointWork::kinematics`], without the round trip through quaternions).
    /// The element states are read from `v` as always. With the joint trees' flat buffers of
    /// the last kernel kinematics (`flats`, [`crate::joints::JointWork::kernel_flats`]) the
    /// elements of the force kernel set by [`Evaluator::set_force_kernel`] are evaluated by it,
    /// from the frames there, the others by the packs; without `flats` or a force kernel, all
    /// by the packs.
    pub fn accelerations_with_trees(
        &mut self,
        t: f64,
        r: &[f64],
        v: &[f64],
        q: &mut [f64],
        from_state: &[usize],
        flats: Option<&[Vec<f64>]>,
    ) {
        self.accelerations_from(t, r, v, q, Some(from_state), flats);
    }

    /// Sets (or with `None` removes) the model-specific force kernel: the point-to-point
    /// elements `kernel` evaluates ([`TreeKernel::force_elements`]; none: no force kernel)
    /// leave the packs, and [`Evaluator::accelerations_with_trees`] evaluates them with
    /// [`TreeKernel::forces`]. The linearisation keeps the one-element path (with partials).
    /// On that path the table [`Evaluator::elements`] is not written for the kernel's
    /// elements (their scalar force, length and length rate are in
    /// [`Evaluator::kernel_element_outputs`]); every reader of the table in the engine (output
    /// channels, the force-bound check) evaluates the elements it reads first
    /// ([`Evaluator::evaluate_elements`]).
    pub fn set_force_kernel(&mut self, kernel: Option<Arc<dyn TreeKernel>>) {
        self.force_kernel = kernel
            .filter(|k| !k.force_elements().is_empty())
            .map(|kernel| {
                let covered = kernel.force_elements();
                let rest: Vec<usize> = (0..self.model.elements.len())
                    .filter(|k| covered.binary_search(k).is_err())
                    .collect();
                ForceKernel {
                    packs: ElementPacks::of(&self.model, &rest),
                    out: vec![0.0; 3 * covered.len()],
                    kernel,
                }
            });
    }

    /// The elements of the force kernel ([`Evaluator::set_force_kernel`]) and their outputs of
    /// its last evaluation: per element f (tension-positive, N), L (m), L̇ (m/s).
    pub fn kernel_element_outputs(&self) -> Option<(&[usize], &[f64])> {
        self.force_kernel
            .as_ref()
            .map(|k| (k.kernel.force_elements(), &k.out[..]))
    }

    /// q with the bodies `from_state` (`None`: all) computed from the state.
    #[inline(always)]
    fn accelerations_from(
        &mut self,
        t: f64,
        r: &[f64],
        v: &[f64],
        q: &mut [f64],
        from_state: Option<&[usize]>,
        flats: Option<&[Vec<f64>]>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = self.avx2 {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA.
            unsafe { self.accelerations_avx2(avx, t, r, v, q, from_state, flats) };
            return;
        }
        self.forces(Portable, t, r, v, from_state, flats, None);
        self.newton_euler(Portable, q);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    fn accelerations_avx2(
        &mut self,
        avx: Avx2,
        t: f64,
        r: &[f64],
        v: &[f64],
        q: &mut [f64],
        from_state: Option<&[usize]>,
        flats: Option<&[Vec<f64>]>,
    ) {
        self.forces(avx, t, r, v, from_state, flats, None);
        self.newton_euler(avx, q);
    }

    /// Evaluates the element-state rates alone at (t, r, v) into q[n_body_v..] (document 002,
    /// eq. 3; what the partly implicit Euler's state step needs), the same values bit for bit
    /// as [`Evaluator::accelerations`]; q[..n_body_v] is left as it was. Evaluated are only the
    /// open elements of `state_rate_elements` and the kinematics of the bodies carrying their
    /// markers (the other rows of the body table keep the last evaluation's values until the
    /// next full one): no built-in element, no input on a marker, no Newton–Euler, no open
    /// element without states that does not feed one (the truck: the 12 tires and 4 speed
    /// controllers of its 21 open elements and the 7 bodies they sit on, of 21; not the
    /// steering, the anti-roll bars, the built-in elements). The same body and marker
    /// kinematics routines, slot values and law calls as the q path (portable
    /// arithmetic on both paths), hence the same rates; the evaluated elements' tables
    /// (outputs, algebraic variables) change as a full evaluation would change them, the
    /// others' stay as they were. No allocation.
    pub fn state_rates(&mut self, t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
        let model = self.model.clone();
        let nbv = model.n_body_v();
        crate::kinematics::body_kinematics_of(&self.rate_bodies, r, v, &mut self.bodies);
        for &e in &self.rate_elements {
            let el = &model.open_elements[e];
            let (_, work) = prepare_open_element(
                &model,
                e,
                &mut self.open,
                &self.bodies,
                ModelInputs::Signals(&self.runtime_u),
                t,
            );
            let ns = el.law.n_states();
            let input = ElementInput {
                t,
                markers: &work.markers,
                states: &v[nbv + el.state_offset..nbv + el.state_offset + ns],
                inputs: &work.inputs,
            };
            work.scratch.evaluate(el.law.as_ref(), &input);
            self.state_rates[el.state_offset..el.state_offset + ns]
                .copy_from_slice(&work.scratch.state_rates);
        }
        q[nbv..].copy_from_slice(&self.state_rates);
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
        // Every stored block but the unclaimed diagonals is overwritten by its first
        // contribution (`first`): G_rK and G_v, accumulated in place.
        for &s in &self.unclaimed_slots {
            lin.j_rk.block_mut(s).fill(0.0);
            lin.j_v.block_mut(s).fill(0.0);
        }
        self.forces(
            l,
            t,
            r,
            v,
            None,
            None,
            Some((lin.j_rk.values_mut(), lin.j_v.values_mut())),
        );
        self.newton_euler(l, &mut lin.q);
        let cg = congruent.then_some(&mut lin.congruence);
        self.add_own_terms(l, &mut lin.j_rk, &mut lin.j_v, cg);
        if !congruent {
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
        if self.any_time_driven {
            self.add_element_time_terms(l, &mut lin.q_t);
        }
    }

    /// Adds the time-driven open elements' ∂q/∂t at fixed state (accumulated by
    /// [`Self::open_elements`]) to `q_t`: the wrench rates through the linear part of
    /// Newton–Euler (1/m, I⁻¹ Rᵀ; the gyroscopic term does not depend on t), the state-rate
    /// rates as they are.
    #[inline(always)]
    fn add_element_time_terms<L: Lanes>(&self, l: L, q_t: &mut [f64]) {
        for (i, k) in self.bodies.iter().enumerate() {
            let (_, inertia_inv_t) = &self.inertia_transposed[i];
            let a = self.force_t[i] * self.inv_mass[i];
            let alpha = inertia_inv_t.tmul_vec(l, &k.rot_rows.tmul_vec(l, &self.torque_t[i]));
            for c in 0..3 {
                q_t[6 * i + c] += a[c];
                q_t[6 * i + 3 + c] += alpha[c];
            }
        }
        let nbv = 6 * self.bodies.len();
        for (q, d) in q_t[nbv..].iter_mut().zip(&self.state_rates_t) {
            *q += d;
        }
    }

    /// Kinematics, element forces and body wrenches (global, about each centre of mass); with
    /// `acc` (the values of G_rK and G_v), the partials of the global wrenches with respect to
    /// the global perturbations (module docs) are accumulated in place per block. The body
    /// kinematics of the bodies `from_state` (`None`: all) from (r, v), the others' as given
    /// ([`Evaluator::accelerations_with_trees`]); with the trees' buffers `flats` and a force
    /// kernel, its elements by the kernel.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn forces<L: Lanes>(
        &mut self,
        l: L,
        t: f64,
        r: &[f64],
        v: &[f64],
        from_state: Option<&[usize]>,
        flats: Option<&[Vec<f64>]>,
        mut acc: Option<(&mut [f64], &mut [f64])>,
    ) {
        let want = acc.is_some();
        let model = self.model.clone();
        match from_state {
            None => crate::kinematics::body_kinematics(&model, r, v, &mut self.bodies),
            Some(which) => crate::kinematics::body_kinematics_of(which, r, v, &mut self.bodies),
        }
        self.force.copy_from_slice(&self.weight);
        self.torque.fill(Vector3::zeros());
        // The q-only path evaluates the elements four at a time (or those of a force kernel in
        // its generated code), the linearisation one by one.
        if let (false, true, Some(flats), Some(fk)) =
            (want, self.use_packs, flats, self.force_kernel.as_mut())
        {
            fk.packs.forces(
                l,
                &model.curves,
                &self.bodies,
                &mut self.force,
                &mut self.torque,
                &mut self.elements,
            );
            let watch = crate::compiled::watching_segments();
            let sig =
                fk.kernel
                    .forces(flats, &mut self.force, &mut self.torque, &mut fk.out, watch);
            if watch {
                crate::compiled::add_segment_signature(sig);
            }
        } else if !want && self.use_packs {
            self.packs.forces(
                l,
                &model.curves,
                &self.bodies,
                &mut self.force,
                &mut self.torque,
                &mut self.elements,
            );
        } else {
            for (k, el) in model.elements.iter().enumerate() {
                let ends = evaluate_element(
                    l,
                    &model,
                    el,
                    &self.bodies,
                    &self.body_axes,
                    want,
                    &mut self.elements[k],
                );
                apply_element(
                    l,
                    &mut self.force,
                    &mut self.torque,
                    &self.bodies,
                    &ends,
                    &self.elements[k],
                    reborrow(&mut acc),
                    &self.slots[k],
                    &self.first[k],
                );
            }
        }
        // Inputs u(t): forces and torques at markers (the other end is the ground). Only the
        // live ones: a constant signal without a marker keeps its value from `new`.
        for i in 0..self.live_inputs.len() {
            let k = self.live_inputs[i];
            let inp = &model.inputs[k];
            if inp.runtime {
                self.u[k] = self.runtime_u[k];
                self.u_dot[k] = 0.0;
            } else {
                // Value and rate from one evaluation of the signal.
                (self.u[k], self.u_dot[k]) = inp.signal.eval(t);
            }
            // A signal acts through the open elements that read it.
            let Some(marker) = inp.marker else { continue };
            let m = MarkerKin::with_axes(
                l,
                &model.markers[marker],
                self.body_axes[marker],
                &self.bodies,
            );
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
            let torque = match inp.kind {
                InputKind::Force => false,
                InputKind::Torque => true,
                InputKind::Signal => unreachable!("signal inputs have no marker"),
            };
            (ef.force, ef.torque) = if torque {
                (Vector3::zeros(), val)
            } else {
                (val, Vector3::zeros())
            };
            // The partials only where they are read (q alone skips the 0.2 k-instruction reset).
            if want {
                ef.partials = Partials::ZERO;
                // A body-fixed direction turns with the body: ∂(R d s) = −[R d s]× δφ.
                let d_val = if inp.body_frame {
                    M3::skew(&val).neg(l)
                } else {
                    M3::ZERO
                };
                if torque {
                    ef.partials.t_phi[0] = d_val;
                    ef.partials.has_torque = inp.body_frame;
                } else {
                    ef.partials.f_phi[0] = d_val;
                }
            }
            let mut ground = m;
            ground.body = None;
            let (slot, first) =
                self.input_slots[k].expect("the diagonal block of a body is stored");
            apply_element(
                l,
                &mut self.force,
                &mut self.torque,
                &self.bodies,
                &[m, ground],
                &self.scratch,
                reborrow(&mut acc),
                &[[Some(slot), None], [None, None]],
                &[[first, false], [false, false]],
            );
        }
        if !model.open_elements.is_empty() {
            self.open_elements(t, v, acc);
        }
    }

    /// Elements of open kinds ([`crate::element_law`]): marker kinematics, the law, the wrenches
    /// on the bodies, the state rates, and with `acc` the partials chained to the bodies
    /// (module docs of [`crate::element_law`]; chain rule as in [`apply_element`]) and added to
    /// G_rK / G_v (their blocks were zeroed or overwritten by a built-in contribution first).
    ///
    /// Where the evaluator runs its AVX2 copies, the glue (marker states, wrench sums, the
    /// chain rule) is compiled with AVX2 enabled too: the same operations (no contraction into
    /// fused multiply-adds), so the same results, in three-operand forms; the laws stay calls.
    #[inline(never)]
    fn open_elements(&mut self, t: f64, v: &[f64], acc: Option<(&mut [f64], &mut [f64])>) {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx) = self.avx2 {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA.
            unsafe { self.open_elements_avx2(avx, t, v, acc) };
            return;
        }
        self.open_elements_impl(t, v, acc);
    }

    /// [`Self::open_elements`] compiled with AVX2 enabled.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn open_elements_avx2(
        &mut self,
        _avx: Avx2,
        t: f64,
        v: &[f64],
        acc: Option<(&mut [f64], &mut [f64])>,
    ) {
        self.open_elements_impl(t, v, acc);
    }

    #[inline(always)]
    fn open_elements_impl(&mut self, t: f64, v: &[f64], mut acc: Option<(&mut [f64], &mut [f64])>) {
        let model = &*self.model;
        let nb = model.bodies.len();
        let nbv = 6 * nb;
        if acc.is_some() {
            self.force_t.fill(Vector3::zeros());
            self.torque_t.fill(Vector3::zeros());
            self.state_rates_t.fill(0.0);
        }
        for (e, el) in model.open_elements.iter().enumerate() {
            let (before, work) = prepare_open_element(
                model,
                e,
                &mut self.open,
                &self.bodies,
                ModelInputs::Values(&self.u),
                t,
            );
            let ns = work.n_states;
            let states = &v[nbv + el.state_offset..nbv + el.state_offset + ns];
            let input = ElementInput {
                t,
                markers: &work.markers,
                states,
                inputs: &work.inputs,
            };
            let rates = &mut self.state_rates[el.state_offset..el.state_offset + ns];
            if acc.is_some() {
                work.scratch.evaluate_with_partials(el.law.as_ref(), &input);
                rates.copy_from_slice(&work.scratch.state_rates);
            } else {
                // The rates go straight into the table q is assembled from.
                work.scratch
                    .evaluate_rates_into(el.law.as_ref(), &input, rates);
            }
            let sc = &work.scratch;
            let wrenches = sc.force.iter().zip(&sc.torque);
            // A marker without force (an accelerometer's, a speed controller's on the chassis
            // and on the wheel, which takes a torque only) skips the lever arm: the sums differ
            // from adding the zero terms only in the sign of a zero entry.
            for ((frame, m), (f, tq)) in work.frames.iter().zip(&work.markers).zip(wrenches) {
                let Some(c) = frame.body else { continue };
                if f.x != 0.0 || f.y != 0.0 || f.z != 0.0 {
                    let arm = m.x - self.bodies[c].x;
                    self.force[c] += f;
                    self.torque[c] += arm.cross(f) + tq;
                } else if tq.x != 0.0 || tq.y != 0.0 || tq.z != 0.0 {
                    self.torque[c] += tq;
                }
            }
            if let Some((g_rk, g_v)) = acc.as_mut() {
                open_chain::chain_open_element(
                    &work.chain,
                    &work.markers,
                    &self.bodies,
                    &mut work.scratch,
                    g_rk,
                    g_v,
                );
                if let Some(ls) = work.links.as_mut() {
                    chain_links(
                        model,
                        el,
                        before,
                        &input,
                        &mut work.scratch,
                        ls,
                        v,
                        &self.bodies,
                        g_rk,
                        g_v,
                    );
                }
                let d_dt = |k: usize| {
                    let src = &before[el.links[k].source];
                    if src.time_driven {
                        src.scratch.d_time_outputs[el.links[k].output]
                    } else {
                        0.0
                    }
                };
                if work.link_time_driven && !work.time_driven {
                    // Time only through fed slots: ∂y/∂u · ∂o/∂t, no evaluation.
                    let ls = work.links.as_ref().expect("a fed element has link scratch");
                    ls.time_derivative(&el.links, d_dt, &mut work.scratch.d_time);
                }
                if work.time_driven {
                    // ∂/∂t at fixed markers and states: central difference with the relative
                    // step of the element partials (a time table's slope, also across a knot
                    // as the mean of the two slopes); fed slots move with their sources.
                    let h = FD_RELATIVE_STEP * t.abs().max(1.0);
                    let t_plus = t + h;
                    let t_minus = t - h;
                    let inputs = (&mut work.inputs_plus, &mut work.inputs_minus);
                    let signals = ModelInputs::Signals(&self.runtime_u);
                    gather_inputs(model, signals, t_plus, &el.inputs, inputs.0);
                    gather_inputs(model, signals, t_minus, &el.inputs, inputs.1);
                    if !el.links.is_empty() {
                        element_link::feed_time(
                            &el.links,
                            &work.inputs,
                            h,
                            d_dt,
                            inputs.0,
                            inputs.1,
                        );
                    }
                    let at = |t, inputs| ElementInput {
                        t,
                        markers: &work.markers,
                        states,
                        inputs,
                    };
                    work.scratch.time_derivative(
                        el.law.as_ref(),
                        &at(t_plus, &work.inputs_plus[..]),
                        &at(t_minus, &work.inputs_minus[..]),
                    );
                }
                if work.time_driven || work.link_time_driven {
                    let d = &work.scratch.d_time;
                    for (k, &mk) in el.markers.iter().enumerate() {
                        if let Some(c) = model.markers[mk].body {
                            let arm = work.markers[k].x - self.bodies[c].x;
                            let df = Vector3::new(d[6 * k], d[6 * k + 1], d[6 * k + 2]);
                            let dt = Vector3::new(d[6 * k + 3], d[6 * k + 4], d[6 * k + 5]);
                            self.force_t[c] += df;
                            self.torque_t[c] += arm.cross(&df) + dt;
                        }
                    }
                    let m6 = 6 * el.markers.len();
                    self.state_rates_t[el.state_offset..el.state_offset + ns]
                        .copy_from_slice(&d[m6..m6 + ns]);
                }
            }
        }
    }

    /// Newton–Euler per body: q from the accumulated wrenches (3 × 3 products in lanes:
    /// Rᵀτ from the rows of R, I w and I⁻¹ x from the rows of the transposes). A massless body
    /// gets its wrench (F, Rᵀτ): what the products with its stand-ins (1/m = 1, I = 0,
    /// I⁻¹ = 1) give, up to the sign of a zero entry.
    #[inline(always)]
    fn newton_euler<L: Lanes>(&self, l: L, q: &mut [f64]) {
        let nbv = 6 * self.bodies.len();
        // Zipped per-body tables and 6-wide blocks of q: no index checks in the loop.
        let per_body = self
            .bodies
            .iter()
            .zip(self.inertia_transposed.iter().zip(&self.massless))
            .zip(self.force.iter().zip(&self.torque).zip(&self.inv_mass))
            .zip(q[..nbv].as_chunks_mut::<6>().0);
        for (((k, ((inertia_t, inertia_inv_t), &massless)), ((force, torque), inv_mass)), qb) in
            per_body
        {
            let a = force * *inv_mass;
            let tb = k.rot_rows.tmul_vec(l, torque);
            let w = k.w_body;
            let alpha = if massless {
                tb
            } else {
                inertia_inv_t.tmul_vec(l, &(tb - w.cross(&inertia_t.tmul_vec(l, &w))))
            };
            qb[..3].copy_from_slice(a.as_slice());
            qb[3..].copy_from_slice(alpha.as_slice());
        }
        // Element states: their rates (zero in the padding).
        q[nbv..].copy_from_slice(&self.state_rates);
    }

    /// Converts G_rK and G_v (global wrench partials, own terms included) in place into J_r K
    /// and J_v (see module docs), block by block in 3 × 3 pieces: columns φ → θ and ω → ω_body
    /// (δφ = R_e δθ, ω = R_e ω_body), rows through Newton–Euler (1/m, I⁻¹ R_cᵀ).
    #[inline(always)]
    fn finish_partials<L: Lanes>(&self, l: L, j_rk: &mut BlockMatrix, j_v: &mut BlockMatrix) {
        let pattern = &self.model.pattern;
        let nb = self.bodies.len();
        for c in 0..nb {
            let inv_m = self.inv_mass[c];
            let n = self.inertia[c]
                .1
                .mul(l, &self.bodies[c].rot_rows.transpose());
            for s in pattern.row_ptr()[c]..pattern.row_ptr()[c + 1] {
                let e = pattern.col_idx()[s];
                if e >= nb {
                    // An element-state column: rows through Newton–Euler only.
                    for g in [&mut *j_rk, &mut *j_v] {
                        let blk = block6(g.values_mut(), s);
                        for p in 0..2 {
                            let top = M3::load_piece(l, blk, 0, p);
                            let bottom = M3::load_piece(l, blk, 1, p);
                            top.put_piece(l, blk, 0, p, inv_m, true);
                            n.mul(l, &bottom).put_piece(l, blk, 1, p, 1.0, true);
                        }
                    }
                    continue;
                }
                let rot_e = &self.bodies[e].rot_rows;
                for g in [&mut *j_rk, &mut *j_v] {
                    let blk = block6(g.values_mut(), s);
                    let x = M3::load_piece(l, blk, 0, 0);
                    let phi = M3::load_piece(l, blk, 0, 1);
                    let t_x = M3::load_piece(l, blk, 1, 0);
                    let t_phi = M3::load_piece(l, blk, 1, 1);
                    x.put_piece(l, blk, 0, 0, inv_m, true);
                    phi.mul(l, rot_e).put_piece(l, blk, 0, 1, inv_m, true);
                    n.mul(l, &t_x).put_piece(l, blk, 1, 0, 1.0, true);
                    n.mul(l, &t_phi.mul(l, rot_e))
                        .put_piece(l, blk, 1, 1, 1.0, true);
                }
            }
        }
        // Element-state rows: columns only (δφ = R_e δθ, ω = R_e ω_body) for body columns.
        for c in nb..pattern.n_blocks() {
            for s in pattern.row_ptr()[c]..pattern.row_ptr()[c + 1] {
                let e = pattern.col_idx()[s];
                if e >= nb {
                    continue;
                }
                let rot_e = &self.bodies[e].rot_rows;
                for g in [&mut *j_rk, &mut *j_v] {
                    let blk = block6(g.values_mut(), s);
                    for p in 0..2 {
                        let phi = M3::load_piece(l, blk, p, 1);
                        phi.mul(l, rot_e).put_piece(l, blk, p, 1, 1.0, true);
                    }
                }
            }
        }
    }

    /// Adds each body's own partials to its diagonal block of G, in global form: [τ]× on δφ
    /// (∂(Rᵀτ)/∂θ = [Rᵀτ]× seen through D_r and D_c) and the gyroscopic
    /// ∂(−ω × I_g ω)/∂ω = [I_g ω]× − [ω]× I_g on ω (I_g = R I Rᵀ). With `cg`, also stores the
    /// factors D_r and D_c of the congruence form per body: m, R I, I⁻¹ Rᵀ and R, and the
    /// rotational block R I Rᵀ of M = D_r⁻¹ D_c⁻¹.
    #[inline(always)]
    fn add_own_terms<L: Lanes>(
        &self,
        l: L,
        g_rk: &mut BlockMatrix,
        g_v: &mut BlockMatrix,
        mut cg: Option<&mut Congruence>,
    ) {
        for (c, &s) in self.diagonal_slots.iter().enumerate() {
            let kc = &self.bodies[c];
            let (inertia, inertia_inv) = &self.inertia[c];
            let rot_t = kc.rot_rows.transpose();
            let ri = kc.rot_rows.mul(l, inertia);
            let i_g = ri.mul(l, &rot_t);
            let own_w = M3::skew(&i_g.mul_vec(&kc.w)).sub(l, &M3::skew_mul(l, &kc.w, &i_g));
            M3::skew(&self.torque[c]).put_piece(l, block6(g_rk.values_mut(), s), 1, 1, 1.0, false);
            own_w.put_piece(l, block6(g_v.values_mut(), s), 1, 1, 1.0, false);
            if let Some(cg) = cg.as_deref_mut() {
                // A massless body's unit stand-in (`Body::inv_mass`).
                let m = self.model.bodies[c].mass;
                cg.mass[c] = if m == 0.0 { 1.0 } else { m };
                cg.rot_rows_inv[c] = ri.to_row_major();
                cg.mass_rot[c] = i_g.to_row_major();
                cg.rot_rows[c] = inertia_inv.mul(l, &rot_t).to_row_major();
                cg.rot_cols[c] = kc.rot_rows.to_row_major();
            }
        }
    }

    /// J_u: ∂q/∂u_k for each input (wrench per unit signal through Newton–Euler).
    #[inline(always)]
    fn input_jacobian(&mut self) {
        let nv = 6 * self.model.bodies.len();
        self.j_u.fill(0.0);
        for (k, inp) in self.model.inputs.iter().enumerate() {
            // A signal input's column stays zero: it acts through open elements, whose input
            // partials are not part of the interface (the stage's ∂q/∂u · u̇ term is omitted).
            let Some(marker) = inp.marker else { continue };
            let m = MarkerKin::new(&self.model.markers[marker], &self.bodies);
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
                InputKind::Signal => unreachable!("signal inputs have no marker"),
            };
            let col = &mut self.j_u[k * nv..(k + 1) * nv];
            let a = f * body.inv_mass();
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

/// The AVX2 token where the CPU has AVX2 and FMA. The library reads no environment variables:
/// faces select the portable copies through [`Evaluator::force_portable`] (the `sprung` command
/// maps `SPRUNG_PORTABLE` onto it, e.g. for profiling under valgrind).
#[cfg(target_arch = "x86_64")]
fn detect_avx2() -> Option<Avx2> {
    Avx2::detect()
}

/// Marker kinematics of both ends of element `el` and the element's law (with partials if
/// `want`) into `out`; returns the ends for the assembly. `body_axes`: per model marker, whether
/// its axes are its body's.
#[inline(always)]
fn evaluate_element<L: Lanes>(
    l: L,
    model: &CompiledModel,
    el: &ForceElement,
    bodies: &[BodyKin],
    body_axes: &[bool],
    want: bool,
    out: &mut ElementForce,
) -> Ends {
    // Two direct calls, not a closure: a closure is a function of its own without the caller's
    // target features, in which the lanes' intrinsics would stay calls.
    let (i, j) = (el.marker_i, el.marker_j);
    let ends: Ends = [
        MarkerKin::with_axes(l, &model.markers[i], body_axes[i], bodies),
        MarkerKin::with_axes(l, &model.markers[j], body_axes[j], bodies),
    ];
    match &el.kind {
        ElementKind::Bushing(b) => bushing::evaluate(l, b, &model.curves, &ends, want, out),
        ElementKind::P2p(law) => {
            p2p::evaluate(l, law, &model.curves, el.design_length, &ends, want, out)
        }
    }
    ends
}

/// Global kinematics of an open element's markers, as it sees them; each state written in
/// place ([`write_marker_state`]).
#[inline(always)]
fn fill_marker_states(frames: &[MarkerFrame], bodies: &[BodyKin], out: &mut [MarkerState]) {
    for (ms, frame) in out.iter_mut().zip(frames) {
        write_marker_state(frame, bodies, ms);
    }
}

/// A force kernel on the evaluator ([`Evaluator::set_force_kernel`]).
#[derive(Debug, Clone)]
struct ForceKernel {
    kernel: Arc<dyn TreeKernel>,
    /// The packs of the elements the kernel does not evaluate.
    packs: ElementPacks,
    /// Per kernel element: f, L, L̇ of the last evaluation ([`TreeKernel::forces`]).
    out: Vec<f64>,
}

/// What the kinematics of a marker read from its definition ([`crate::compiled::Marker`]),
/// kept per open element next to its marker states: one compact record per marker instead of
/// a look-up in the model's marker table (whose records carry the name between these fields).
#[derive(Debug, Clone, Copy)]
struct MarkerFrame {
    body: Option<usize>,
    position: Vector3<f64>,
    axes: nalgebra::Matrix3<f64>,
    /// The axes are the body's ([`crate::kinematics::has_body_axes`]): the frame is the body's
    /// rotation, no product.
    body_axes: bool,
}

impl MarkerFrame {
    fn of(marker: &crate::compiled::Marker) -> Self {
        Self {
            body: marker.body,
            position: marker.position,
            axes: marker.axes,
            body_axes: crate::kinematics::has_body_axes(marker),
        }
    }
}

/// `MarkerState::of(&MarkerKin::new(marker, bodies))` without the padded-row frame and its
/// conversions (an open element reads neither the lever arm nor the rows): the same
/// arithmetic in the same order — entry (i, j) of the frame is (R_i0 A_0j + R_i1 A_1j) +
/// R_i2 A_2j as in the portable [`M3::mul`] — hence the same bits (tested); for a marker with
/// its body's axes the body's rotation itself (the same bits up to the sign of a zero entry).
#[cfg(test)]
fn marker_state(marker: &MarkerFrame, bodies: &[BodyKin]) -> MarkerState {
    let mut ms = MarkerState::default();
    write_marker_state(marker, bodies, &mut ms);
    ms
}

/// [`marker_state`] written field by field into `ms`: no state built on the stack and copied
/// (that copy was half the cost of the open elements' marker kinematics, about 30 of 60
/// instructions per marker).
#[inline(always)]
fn write_marker_state(marker: &MarkerFrame, bodies: &[BodyKin], ms: &mut MarkerState) {
    let Some(b) = marker.body else {
        ms.x = marker.position;
        ms.rot = marker.axes;
        ms.v = Vector3::zeros();
        ms.w = Vector3::zeros();
        return;
    };
    let k = &bodies[b];
    let arm = k.rot * marker.position;
    let (r, a) = (&k.rot, &marker.axes);
    if marker.body_axes {
        ms.rot = *r;
    } else {
        for j in 0..3 {
            for i in 0..3 {
                let p = r[(i, 1)] * a[(1, j)] + r[(i, 0)] * a[(0, j)];
                ms.rot[(i, j)] = r[(i, 2)] * a[(2, j)] + p;
            }
        }
    }
    ms.x = k.x + arm;
    ms.v = k.v + k.w.cross(&arm);
    ms.w = k.w;
}

/// Marker kinematics and input-slot values of open element `e` at time `t` (model inputs, then
/// the slots fed by the sources' last evaluation, [`crate::element_link`]); returns the
/// elements before it (its possible sources) and its work. The one preparation of the q path,
/// the linearisation and [`Evaluator::state_rates`].
#[inline(always)]
fn prepare_open_element<'a>(
    model: &CompiledModel,
    e: usize,
    open: &'a mut [OpenWork],
    bodies: &[BodyKin],
    inputs: ModelInputs,
    t: f64,
) -> (&'a mut [OpenWork], &'a mut OpenWork) {
    let el = &model.open_elements[e];
    let (before, rest) = open.split_at_mut(e);
    let work = &mut rest[0];
    fill_marker_states(&work.frames, bodies, &mut work.markers);
    gather_inputs(model, inputs, t, &el.inputs, &mut work.inputs);
    if !el.links.is_empty() {
        let source = |k: usize| before[el.links[k].source].scratch.outputs[el.links[k].output];
        element_link::feed(&el.links, source, &mut work.inputs);
    }
    (before, work)
}

/// The open elements whose evaluation the element-state rates need ([`Evaluator::state_rates`]),
/// in model order: those with states and the sources feeding them through element links,
/// recursively (a source precedes its sink, so one backward pass closes the set).
///
/// An element without states that carries a warm start between evaluations (algebraic
/// variables: the steering's Newton start) is not evaluated either: its next evaluation starts
/// from its last full one instead of from this one. Its solve ends within its tolerance of the
/// same root from either start, so a run differs from one with full evaluations at that level
/// (the truck's steering, Newton to 1e-10 rad: `docs/truck.md`, *Cost per step of `pie`*).
fn state_rate_elements(model: &CompiledModel) -> Vec<usize> {
    let n = model.open_elements.len();
    let mut need = vec![false; n];
    for e in (0..n).rev() {
        let el = &model.open_elements[e];
        need[e] |= el.law.n_states() > 0;
        if need[e] {
            for l in &el.links {
                need[l.source] = true;
            }
        }
    }
    (0..n).filter(|&e| need[e]).collect()
}

/// The bodies carrying a marker of the listed open elements, ascending.
fn marker_bodies(model: &CompiledModel, elements: &[usize]) -> Vec<usize> {
    let mut carries = vec![false; model.bodies.len()];
    for &e in elements {
        for &mk in &model.open_elements[e].markers {
            if let Some(b) = model.markers[mk].body {
                carries[b] = true;
            }
        }
    }
    (0..carries.len()).filter(|&b| carries[b]).collect()
}

/// The inputs whose value can change or that act at a marker (runtime inputs, time signals
/// other than constants, forces and torques): the ones the evaluation's loop over the inputs
/// visits, ascending. A constant signal read only by open elements (the kinematic car's target
/// speed and brake torques: 5 of its 6 inputs) has the same value and zero rate at every
/// evaluation; [`Evaluator::new`] sets them once.
fn live_inputs(model: &CompiledModel) -> Vec<usize> {
    (0..model.inputs.len())
        .filter(|&k| !is_fixed(&model.inputs[k]))
        .collect()
}

/// A constant time signal without a marker, not a runtime input ([`live_inputs`]).
fn is_fixed(u: &crate::compiled::Input) -> bool {
    !u.runtime && u.marker.is_none() && matches!(u.signal, sprung_model::Signal::Constant { .. })
}

/// Where the input slots of an open element take the values of the model inputs from.
#[derive(Debug, Clone, Copy)]
enum ModelInputs<'a> {
    /// The values at the element's time, evaluated already ([`Evaluator::u`]: the q and
    /// linearisation paths, whose inputs loop evaluates every model input first).
    Values(&'a [f64]),
    /// Evaluated per slot: a runtime input's value as set (here), a time signal at the time
    /// asked (the same value as in [`Evaluator::u`] at that time, bit for bit).
    Signals(&'a [f64]),
}

/// The values of an open element's input slots at time `t`: each mapped model input's runtime
/// value or time signal (from `inputs`), 0 where the slot is unmapped.
#[inline]
fn gather_inputs(
    model: &CompiledModel,
    inputs: ModelInputs,
    t: f64,
    slots: &[Option<usize>],
    dst: &mut [f64],
) {
    for (d, slot) in dst.iter_mut().zip(slots) {
        *d = match (*slot, inputs) {
            (None, _) => 0.0,
            (Some(k), ModelInputs::Values(u)) => u[k],
            (Some(k), ModelInputs::Signals(runtime_u)) if model.inputs[k].runtime => runtime_u[k],
            (Some(k), ModelInputs::Signals(_)) => model.inputs[k].signal.value(t),
        };
    }
}

/// The work of every open element; a fed element ([`crate::element_link`]) depends on time
/// when one of its sources does.
fn open_work(model: &CompiledModel) -> Vec<OpenWork> {
    let mut open: Vec<OpenWork> = Vec::with_capacity(model.open_elements.len());
    for e in &model.open_elements {
        let sources: Vec<&dyn ElementLaw> = e
            .links
            .iter()
            .map(|l| model.open_elements[l.source].law.as_ref())
            .collect();
        open.push(OpenWork {
            markers: vec![MarkerState::default(); e.markers.len()],
            frames: e
                .markers
                .iter()
                .map(|&mk| MarkerFrame::of(&model.markers[mk]))
                .collect(),
            chain: open_chain::ChainSlots::new(model, e),
            n_states: e.law.n_states(),
            inputs: vec![0.0; e.inputs.len()],
            inputs_plus: vec![0.0; e.inputs.len()],
            inputs_minus: vec![0.0; e.inputs.len()],
            time_driven: e.law.reads_time()
                || e.inputs.iter().flatten().any(|&k| !model.inputs[k].runtime),
            link_time_driven: e.links.iter().any(|l| open[l.source].time_driven),
            scratch: ElementScratch::new(e.law.as_ref()),
            links: (!e.links.is_empty()).then(|| LinkScratch::new(e.law.as_ref(), &sources)),
        });
    }
    open
}

/// Per open element: its markers' kinematics and the evaluation scratch.
#[derive(Debug, Clone)]
struct OpenWork {
    markers: Vec<MarkerState>,
    /// The definitions of its markers, in the element's marker order.
    frames: Vec<MarkerFrame>,
    /// The block slots of its chain rule to the bodies.
    chain: open_chain::ChainSlots,
    /// Number of its states (the law's, kept here: no call through the law per evaluation).
    n_states: usize,
    /// Values of the kind's input slots (model inputs by index, 0 where unmapped).
    inputs: Vec<f64>,
    /// The same at t ± h, for the time derivative of a time-driven element.
    inputs_plus: Vec<f64>,
    inputs_minus: Vec<f64>,
    /// The law reads time itself, or a slot reads a time signal: ∂/∂t is differenced in the
    /// linearisation.
    time_driven: bool,
    /// A source of a fed slot is time-driven (`time_driven`: differenced with the slots moving
    /// by the sources' ∂o/∂t; else ∂y/∂u · ∂o/∂t without evaluations).
    link_time_driven: bool,
    scratch: ElementScratch,
    /// The partials of the slots fed by other elements' outputs (`None`: no such slot).
    links: Option<LinkScratch>,
}

/// The partials of a fed element's forces and rates with respect to its sources' markers and
/// states through its linked slots ([`crate::element_link`]): per link the rank-one block
/// ∂y/∂u · ∂o/∂z, chained to the bodies as an outer product. The sink's rows per unit slot
/// value become body wrenches (f, a × f + t) and state rows (the row side of
/// [`open_chain::chain_open_element`]); the source output's row ∂o/∂z becomes body columns (δx, δφ; v, ω)
/// and state columns (the column side, as for a state row there).
#[allow(clippy::too_many_arguments)]
fn chain_links(
    model: &CompiledModel,
    el: &crate::compiled::OpenElement,
    sources: &mut [OpenWork],
    input: &ElementInput,
    scratch: &mut ElementScratch,
    ls: &mut LinkScratch,
    v: &[f64],
    bodies: &[BodyKin],
    g_rk: &mut [f64],
    g_v: &mut [f64],
) {
    let nbv = model.n_body_v();
    let nb = model.bodies.len();
    let pattern = &model.pattern;
    ls.sink_partials(&el.links, el.law.as_ref(), input, scratch);
    let (m_r, ns_r) = (el.markers.len(), el.law.n_states());
    let v3 = |d: &[f64], k: usize| Vector3::new(d[k], d[k + 1], d[k + 2]);
    for (k, l) in el.links.iter().enumerate() {
        let src_el = &model.open_elements[l.source];
        let src = &mut sources[l.source];
        let ns = src_el.law.n_states();
        let x = ElementInput {
            t: input.t,
            markers: &src.markers,
            states: &v[nbv + src_el.state_offset..nbv + src_el.state_offset + ns],
            inputs: &src.inputs,
        };
        ls.output_partials(k, l, src_el.law.as_ref(), &x, &mut src.scratch);
        let du = ls.input_column(l.slot);
        let (dp, dv) = ls.output_row(k);
        let m = src_el.markers.len();
        // Row side: the sink's body wrench per unit slot value, per marker.
        let wrench = |kr: usize| -> Option<(usize, [f64; 6])> {
            let cr = model.markers[el.markers[kr]].body?;
            let (f, t) = (v3(du, 6 * kr), v3(du, 6 * kr + 3));
            if f == Vector3::zeros() && t == Vector3::zeros() {
                return None;
            }
            let tt = (input.markers[kr].x - bodies[cr].x).cross(&f) + t;
            Some((cr, [f.x, f.y, f.z, tt.x, tt.y, tt.z]))
        };
        let state_row = |i: usize| (nb + el.first_block + i / 6, i % 6, du[6 * m_r + i]);
        // Column side: each source marker's body columns (δx, δφ) and (v, ω).
        for kc in 0..m {
            let Some(cc) = model.markers[src_el.markers[kc]].body else {
                continue;
            };
            let (p_p, p_phi) = (v3(dp, 6 * kc), v3(dp, 6 * kc + 3));
            let (v_v, v_w) = (v3(dv, 6 * kc), v3(dv, 6 * kc + 3));
            if [p_p, p_phi, v_v, v_w]
                .iter()
                .all(|x| *x == Vector3::zeros())
            {
                continue;
            }
            let arm = src.markers[kc].x - bodies[cc].x;
            let w = src.markers[kc].w;
            let phi = p_phi + arm.cross(&p_p) + w.cross(&arm).cross(&v_v) + w.cross(&v_w);
            let om = v_w + arm.cross(&v_v);
            let cols_r = [p_p.x, p_p.y, p_p.z, phi.x, phi.y, phi.z];
            let cols_v = [v_v.x, v_v.y, v_v.z, om.x, om.y, om.z];
            for kr in 0..m_r {
                let Some((cr, wr)) = wrench(kr) else { continue };
                let slot = pattern
                    .slot(cr, cc)
                    .expect("link blocks are in the pattern");
                for (g, cols) in [(&mut *g_rk, &cols_r), (&mut *g_v, &cols_v)] {
                    let blk = block6(g, slot);
                    for a in 0..6 {
                        for b in 0..6 {
                            blk[6 * a + b] += wr[a] * cols[b];
                        }
                    }
                }
            }
            for i in 0..ns_r {
                let (bi, row, d) = state_row(i);
                if d == 0.0 {
                    continue;
                }
                let slot = pattern
                    .slot(bi, cc)
                    .expect("link blocks are in the pattern");
                for (g, cols) in [(&mut *g_rk, &cols_r), (&mut *g_v, &cols_v)] {
                    let blk = block6(g, slot);
                    for b in 0..6 {
                        blk[6 * row + b] += d * cols[b];
                    }
                }
            }
        }
        // The source's state columns.
        for j in 0..ns {
            let o = dv[6 * m + j];
            if o == 0.0 {
                continue;
            }
            let (bj, col) = (nb + src_el.first_block + j / 6, j % 6);
            for kr in 0..m_r {
                let Some((cr, wr)) = wrench(kr) else { continue };
                let slot = pattern
                    .slot(cr, bj)
                    .expect("link blocks are in the pattern");
                let blk = block6(g_v, slot);
                for a in 0..6 {
                    blk[6 * a + col] += wr[a] * o;
                }
            }
            for i in 0..ns_r {
                let (bi, row, d) = state_row(i);
                let slot = pattern
                    .slot(bi, bj)
                    .expect("link blocks are in the pattern");
                block6(g_v, slot)[6 * row + col] += d * o;
            }
        }
    }
}

/// Per (side, end) of an element: whether it is its block's first contribution.
type FirstFlags = [[bool; 2]; 2];

/// Which contribution comes first to each block in the fixed evaluation order (elements with
/// their (side, end) pairs, then inputs).
struct FirstContributions {
    /// Per element.
    elements: Vec<FirstFlags>,
    /// Per input: its body's diagonal slot and whether it comes first there.
    inputs: Vec<Option<(usize, bool)>>,
    /// Slots no built-in element or input contributes to: diagonal blocks of bodies nothing
    /// acts on, and the blocks of open elements and element states.
    unclaimed: Vec<usize>,
}

/// Marks the first contribution to each block (see [`FirstContributions`]).
fn first_contributions(
    model: &CompiledModel,
    slots: &[[[Option<usize>; 2]; 2]],
) -> FirstContributions {
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
            let c = model.markers[inp.marker?].body?;
            let slot = model.pattern.slot(c, c)?;
            Some((slot, claim(slot)))
        })
        .collect();
    let unclaimed = (0..model.pattern.n_stored())
        .filter(|&s| !seen[s])
        .collect();
    FirstContributions {
        elements: first,
        inputs,
        unclaimed,
    }
}

/// Stored 6 × 6 block `slot` (row-major) of a block matrix's values.
#[inline(always)]
fn block6(values: &mut [f64], slot: usize) -> &mut [f64; 36] {
    (&mut values[36 * slot..36 * slot + 36])
        .try_into()
        .expect("6 x 6 block")
}

/// Reborrows the optional partial accumulators for one call.
#[inline(always)]
fn reborrow<'a>(
    acc: &'a mut Option<(&mut [f64], &mut [f64])>,
) -> Option<(&'a mut [f64], &'a mut [f64])> {
    match acc {
        Some((g_rk, g_v)) => Some((&mut **g_rk, &mut **g_v)),
        None => None,
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
    acc: Option<(&mut [f64], &mut [f64])>,
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
    let Some((g_rk, g_v_all)) = acc else { return };
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
        let arm_f_v = if p.has_f_v {
            M3::skew_mul(l, &arm, &p.f_v)
        } else {
            M3::ZERO
        };
        for e in 0..2 {
            let Some(slot) = slots[side][e] else { continue };
            let ss = s * SIGN[e];
            let g_r = block6(g_rk, slot);
            // The first contribution to a block in the (fixed) evaluation order overwrites the
            // previous linearisation's value (no clearing pass); later ones add, fused.
            let first = first[side][e];
            p.f_p.put_piece(l, g_r, 0, 0, ss, first);
            f_phi[e].put_piece(l, g_r, 0, 1, s, first);
            // −[f]× δp_e with δp_e = δx_e − [a_e]× δφ_e for the end carrying the point, and
            // +[f]× δx_c (the arm a_c = point − x_c shortens with the body's own δx): they cancel
            // on the δx column when both ends are the same.
            let point_end = e == ef.point_end[side];
            match (point_end, e == side) {
                (true, false) => g_p
                    .scale(l, ss)
                    .sub(l, &f_x)
                    .put_piece(l, g_r, 1, 0, 1.0, first),
                (false, true) => g_p
                    .scale(l, ss)
                    .add(l, &f_x)
                    .put_piece(l, g_r, 1, 0, 1.0, first),
                _ => g_p.put_piece(l, g_r, 1, 0, ss, first),
            }
            let mut t_phi = M3::skew_mul(l, &arm, &f_phi[e]);
            if p.has_torque {
                t_phi.add_assign(l, &t_phi_el[e]);
            }
            if point_end {
                let t_phi = t_phi.scale(l, s).add(l, &f_x.mul_skew(l, &ends[e].arm));
                t_phi.put_piece(l, g_r, 1, 1, 1.0, first);
            } else {
                t_phi.put_piece(l, g_r, 1, 1, s, first);
            }
            let g_v = block6(g_v_all, slot);
            if p.has_f_v || p.has_torque {
                let mut t_w = M3::skew_mul(l, &arm, &f_w[e]);
                if p.has_torque {
                    t_w.add_assign(l, &p.t_w.scale(l, SIGN[e]));
                }
                p.f_v.put_piece(l, g_v, 0, 0, ss, first);
                f_w[e].put_piece(l, g_v, 0, 1, s, first);
                arm_f_v.put_piece(l, g_v, 1, 0, ss, first);
                t_w.put_piece(l, g_v, 1, 1, s, first);
            } else if first {
                g_v.fill(0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::Marker;
    use nalgebra::{Rotation3, Unit};

    /// The open elements' marker kinematics are those of the pipeline's `MarkerKin`, bit for
    /// bit (body-fixed markers with turned axes on a moving, turned body, and a ground marker).
    #[test]
    fn marker_state_is_the_marker_kinematics_bits() {
        let q = nalgebra::UnitQuaternion::from_euler_angles(0.3, -1.1, 2.4);
        let rr = [0.4, -1.3, 0.9, q.w, q.i, q.j, q.k];
        let vv = [1.7, -0.2, 0.05, 0.8, -2.1, 0.37];
        let bodies = [BodyKin::default(), BodyKin::from_blocks(&rr, &vv)];
        let axes = |a: f64| {
            Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::new(0.2, 1.0, -0.6)), a)
                .into_inner()
        };
        let bits = |m: &MarkerState| {
            let mut b: Vec<u64> = m.rot.iter().map(|x| x.to_bits()).collect();
            for v in [m.x, m.v, m.w] {
                b.extend(v.iter().map(|x| x.to_bits()));
            }
            b
        };
        for (body, angle) in [(Some(1), 0.7), (Some(1), 0.0), (Some(0), -2.2), (None, 1.3)] {
            let marker = Marker {
                name: "m".into(),
                body,
                position: Vector3::new(-0.31, 0.77, 1.9),
                axes: axes(angle),
            };
            let want = MarkerState::of(&MarkerKin::new(&marker, &bodies));
            let got = marker_state(&MarkerFrame::of(&marker), &bodies);
            assert_eq!(bits(&got), bits(&want), "{body:?}, {angle}");
        }
    }
}
