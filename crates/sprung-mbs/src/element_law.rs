//! The open force-element interface: one [`ElementLaw`] per element of an open kind (Maxwell
//! element, anti-roll bar; later tires and the quasi-static steering of document 002), see the
//! target architecture `../shared/design/architecture.md`, "The force-element interface".
//!
//! An element of an open kind
//! * acts on any number of markers ([`ElementLaw::n_markers`]); it sees their global kinematics
//!   ([`MarkerState`]: origin, axes, velocity, angular velocity) and applies a force at each
//!   marker origin and a torque to each marker's body, all global;
//! * may carry internal differential states s with s' = f(t, markers, s) (document 002, eqs. 3,
//!   6, 7: force-element states), integrated together with the bodies' r and v by every
//!   integrator — for the linear-implicit methods inside the iteration matrix, not lagged;
//! * may keep internal algebraic variables that it solves itself in every evaluation
//!   ([`ElementOutput::algebraic`]: the last solution comes in as the warm start);
//! * reports named outputs with units for the output channels;
//! * declares which partials it provides analytically ([`ElementLaw::partials`] returns
//!   [`Provided`]); the pipeline differences the rest over the element's own markers and states
//!   ([`difference_partials`]), so a new kind works before its derivatives are written.
//!
//! Partials are taken with respect to the markers' own perturbations (the *relative marker
//! form* of [`crate::element`], generalised to m markers): rows (F₀, T₀, F₁, T₁, …, ṡ), position
//! columns (δp₀, δφ₀, δp₁, δφ₁, …) and velocity columns (δv₀, δω₀, …, s), all global; δφ is a
//! small global rotation of the marker frame. The pipeline chains them to the carrying bodies
//! ([`crate::pipeline`]). The built-in bushing and point-to-point elements keep their fused
//! four-lane path; the interface is what every other kind goes through.

use std::fmt::Debug;

use nalgebra::{DMatrix, Matrix3, Vector3};

/// Kinematics of one marker as an element sees it; all vectors global.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarkerState {
    /// Origin, m.
    pub x: Vector3<f64>,
    /// Axes: columns are the marker's x, y, z axes in global coordinates.
    pub rot: Matrix3<f64>,
    /// Velocity of the origin, m/s.
    pub v: Vector3<f64>,
    /// Angular velocity of the marker frame (its body's), rad/s.
    pub w: Vector3<f64>,
}

impl MarkerState {
    /// The global kinematics of a marker from the pipeline's marker kinematics.
    pub fn of(k: &crate::kinematics::MarkerKin) -> Self {
        Self {
            x: k.x,
            rot: k.rot.to_matrix(),
            v: k.v,
            w: k.w,
        }
    }
}

impl Default for MarkerState {
    fn default() -> Self {
        Self {
            x: Vector3::zeros(),
            rot: Matrix3::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

/// What an element is evaluated at.
#[derive(Debug, Clone, Copy)]
pub struct ElementInput<'a> {
    /// Time, s.
    pub t: f64,
    /// The element's markers in the order of the model file.
    pub markers: &'a [MarkerState],
    /// The element's internal differential states.
    pub states: &'a [f64],
    /// Values of the kind's input slots ([`ElementLaw::inputs`]) in their order: the model
    /// inputs the element's `inputs` map names (time signals or runtime values), 0 for a slot
    /// left unmapped.
    pub inputs: &'a [f64],
}

/// What an element writes.
#[derive(Debug)]
pub struct ElementOutput<'a> {
    /// Force on each marker's body, applied at the marker origin, N (global).
    pub force: &'a mut [Vector3<f64>],
    /// Torque on each marker's body, Nm (global), in addition to the moment of `force`.
    pub torque: &'a mut [Vector3<f64>],
    /// Derivatives of the internal states.
    pub state_rates: &'a mut [f64],
    /// Values of the outputs declared by [`ElementLaw::outputs`].
    pub outputs: &'a mut [f64],
    /// Internal algebraic variables: on entry the last solution (a warm start), on return the
    /// solution at this evaluation.
    pub algebraic: &'a mut [f64],
}

/// One output of an element kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputInfo {
    /// Name (as in `output = "..."` of an `[[outputs]]` entry).
    pub name: &'static str,
    /// SI unit.
    pub unit: &'static str,
    /// What it is.
    pub description: &'static str,
}

impl OutputInfo {
    /// An output with its SI unit and description.
    pub const fn new(name: &'static str, unit: &'static str, description: &'static str) -> Self {
        Self {
            name,
            unit,
            description,
        }
    }
}

/// The analytic partials an element provides, in relative marker form (module docs).
#[derive(Debug)]
pub struct ElementJacobian<'a> {
    /// ∂(F, T, ṡ)/∂(δp, δφ) per marker: (6 m + n_s) × 6 m.
    pub position: &'a mut DMatrix<f64>,
    /// ∂(F, T, ṡ)/∂(δv, δω per marker, s): (6 m + n_s) × (6 m + n_s).
    pub velocity: &'a mut DMatrix<f64>,
}

/// Which blocks of [`ElementJacobian`] an element filled analytically; the pipeline differences
/// the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Provided {
    /// The position columns.
    pub position: bool,
    /// The velocity and state columns.
    pub velocity: bool,
}

impl Provided {
    /// Nothing analytic: everything is differenced.
    pub const NONE: Self = Self {
        position: false,
        velocity: false,
    };
    /// Everything analytic.
    pub const ALL: Self = Self {
        position: true,
        velocity: true,
    };
}

/// The law of one element of an open kind (module docs). Implementations hold their parameters;
/// everything that changes lives in the simulation's data (states, algebraic variables).
pub trait ElementLaw: Send + Sync + Debug {
    /// The kind's name as written in model files, e.g. `"maxwell"`.
    fn kind(&self) -> &str;
    /// Number of markers the element acts on.
    fn n_markers(&self) -> usize;
    /// Number of internal differential states.
    fn n_states(&self) -> usize {
        0
    }
    /// Names of the states (for snapshots and `sprung check`).
    fn state_names(&self) -> Vec<String> {
        (0..self.n_states()).map(|k| format!("s{k}")).collect()
    }
    /// Initial values of the states at the design position (default zero).
    fn initial_states(&self, states: &mut [f64]) {
        states.fill(0.0);
    }
    /// Number of internal algebraic variables (warm-started between evaluations).
    fn n_algebraic(&self) -> usize {
        0
    }
    /// Outputs for output channels.
    fn outputs(&self) -> &[OutputInfo] {
        &[]
    }
    /// Input slots: named scalars the element reads (e.g. a steering-wheel angle, a drive
    /// torque), mapped to model inputs by the `inputs` table of its `[[elements]]` entry and
    /// delivered in this order as [`ElementInput::inputs`]. Their partials are not part of the
    /// interface: J_u of runtime inputs is differenced (`sprung::Simulation::linearise`).
    fn inputs(&self) -> &[OutputInfo] {
        &[]
    }
    /// Whether [`evaluate`](Self::evaluate) reads the time `x.t` itself (e.g. a time table of
    /// its own). The linearisation then differences the element over time for the stage term
    /// ∂q/∂t of the Rosenbrock methods (without it RODAS4 and LSRT2 drop to first order while
    /// the table drives the model). Input slots fed by time signals are covered without it.
    /// Default `false`.
    fn reads_time(&self) -> bool {
        false
    }
    /// ∂(F, T, ṡ)/∂u, the partials with respect to the input slots, into `d_inputs`
    /// ((6 m + n_s) × number of slots, zeroed on entry); returns whether it filled them. Needed
    /// only where a slot is fed by another element's output ([`crate::element_link`]); the
    /// default returns `false` and the slot is differenced ([`difference_input_partials`]).
    /// Must not allocate.
    fn input_partials(&self, _x: &ElementInput, _d_inputs: &mut DMatrix<f64>) -> bool {
        false
    }
    /// The partials of output `output` with respect to the element's markers and states, in
    /// the columns of [`ElementJacobian`]: ∂/∂(δp, δφ per marker) into `d_position` (6 m) and
    /// ∂/∂(δv, δω per marker, s) into `d_velocity` (6 m + n_s), both zeroed on entry; returns
    /// whether it filled them. Needed only for an output that feeds another element's input
    /// slot ([`crate::element_link`]); the default returns `false` and the output is
    /// differenced ([`difference_output_partials`]). Must not allocate.
    fn output_partials(
        &self,
        _x: &ElementInput,
        _output: usize,
        _d_position: &mut [f64],
        _d_velocity: &mut [f64],
    ) -> bool {
        false
    }
    /// Forces, torques, state rates and outputs at `x`. Must not allocate (it runs inside the
    /// real-time step).
    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput);
    /// Fills the partials it knows analytically into `jac` (zeroed on entry) and says which.
    /// The default provides none: the pipeline differences everything.
    fn partials(&self, _x: &ElementInput, _jac: &mut ElementJacobian) -> Provided {
        Provided::NONE
    }
    /// [`ElementLaw::evaluate`] and [`ElementLaw::partials`] at the same `x` in one call: what
    /// the pipeline calls when it needs the Jacobian ([`ElementScratch::evaluate_with_partials`]).
    /// `jac` is zeroed on entry; the blocks not reported in the returned [`Provided`] are
    /// differenced afterwards, as for `partials`. The default calls `evaluate`, then `partials`;
    /// a kind overrides it to share the work of both (a tire's wheel–road contact, a Newton
    /// solve) and must give exactly the results of the two separate calls. Must not allocate.
    fn evaluate_with_partials(
        &self,
        x: &ElementInput,
        out: &mut ElementOutput,
        jac: &mut ElementJacobian,
    ) -> Provided {
        self.evaluate(x, out);
        self.partials(x, jac)
    }
}

/// Scratch of one element evaluation, sized once for a law (no allocation per evaluation).
#[derive(Debug, Clone)]
pub struct ElementScratch {
    /// Forces per marker.
    pub force: Vec<Vector3<f64>>,
    /// Torques per marker.
    pub torque: Vec<Vector3<f64>>,
    /// State rates.
    pub state_rates: Vec<f64>,
    /// Outputs.
    pub outputs: Vec<f64>,
    /// Algebraic variables (persist between evaluations: the warm start).
    pub algebraic: Vec<f64>,
    /// Position partials (6 m + n_s) × 6 m.
    pub d_position: DMatrix<f64>,
    /// Velocity and state partials (6 m + n_s) × (6 m + n_s).
    pub d_velocity: DMatrix<f64>,
    /// ∂(F, T, ṡ)/∂t at fixed markers and states (rows as in [`ElementJacobian`]), from
    /// [`ElementScratch::time_derivative`].
    pub d_time: Vec<f64>,
    /// ∂(outputs)/∂t at fixed markers and states, from [`ElementScratch::time_derivative`]
    /// (what an element fed by this one's output sees of time, [`crate::element_link`]).
    pub d_time_outputs: Vec<f64>,
    /// Perturbed copies for differencing.
    fd_markers: Vec<MarkerState>,
    fd_inputs: Vec<f64>,
    fd_outputs_plus: Vec<f64>,
    fd_states: Vec<f64>,
    fd_plus: Vec<f64>,
    fd_minus: Vec<f64>,
    fd_force: Vec<Vector3<f64>>,
    fd_torque: Vec<Vector3<f64>>,
    fd_rates: Vec<f64>,
    fd_outputs: Vec<f64>,
    fd_algebraic: Vec<f64>,
    /// Whether `d_position` and `d_velocity` are known to hold only zeros (±0): the pipeline's
    /// chain rule clears the entries it reads ([`ElementScratch::set_partials_cleared`]), and
    /// [`ElementScratch::evaluate_with_partials`] then need not zero them.
    partials_zero: bool,
}

impl ElementScratch {
    /// Scratch for `law`.
    pub fn new(law: &dyn ElementLaw) -> Self {
        let m = law.n_markers();
        let ns = law.n_states();
        let rows = 6 * m + ns;
        Self {
            force: vec![Vector3::zeros(); m],
            torque: vec![Vector3::zeros(); m],
            state_rates: vec![0.0; ns],
            outputs: vec![0.0; law.outputs().len()],
            algebraic: vec![0.0; law.n_algebraic()],
            d_position: DMatrix::zeros(rows, 6 * m),
            d_velocity: DMatrix::zeros(rows, 6 * m + ns),
            d_time: vec![0.0; rows],
            d_time_outputs: vec![0.0; law.outputs().len()],
            fd_markers: vec![MarkerState::default(); m],
            fd_inputs: vec![0.0; law.inputs().len()],
            fd_outputs_plus: vec![0.0; law.outputs().len()],
            fd_states: vec![0.0; ns],
            fd_plus: vec![0.0; rows],
            fd_minus: vec![0.0; rows],
            fd_force: vec![Vector3::zeros(); m],
            fd_torque: vec![Vector3::zeros(); m],
            fd_rates: vec![0.0; ns],
            fd_outputs: vec![0.0; law.outputs().len()],
            fd_algebraic: vec![0.0; law.n_algebraic()],
            partials_zero: true,
        }
    }

    /// Evaluates `law` at `x` into the scratch's force/torque/rates/outputs.
    pub fn evaluate(&mut self, law: &dyn ElementLaw, x: &ElementInput) {
        let mut out = ElementOutput {
            force: &mut self.force,
            torque: &mut self.torque,
            state_rates: &mut self.state_rates,
            outputs: &mut self.outputs,
            algebraic: &mut self.algebraic,
        };
        law.evaluate(x, &mut out);
    }

    /// [`Self::evaluate`] with the state rates written straight into `rates` (the caller's
    /// table; length [`ElementLaw::n_states`]) instead of the scratch's own, which keeps its
    /// values: the q path's evaluation without a copy of the rates.
    pub fn evaluate_rates_into(
        &mut self,
        law: &dyn ElementLaw,
        x: &ElementInput,
        rates: &mut [f64],
    ) {
        let mut out = ElementOutput {
            force: &mut self.force,
            torque: &mut self.torque,
            state_rates: rates,
            outputs: &mut self.outputs,
            algebraic: &mut self.algebraic,
        };
        law.evaluate(x, &mut out);
    }

    /// Evaluates `law` at `x` for its outputs, leaving the algebraic variables (the warm start
    /// of the stepping evaluations) as they were, so that reading outputs never changes a run.
    pub fn evaluate_outputs(&mut self, law: &dyn ElementLaw, x: &ElementInput) {
        self.fd_algebraic.copy_from_slice(&self.algebraic);
        self.evaluate(law, x);
        std::mem::swap(&mut self.algebraic, &mut self.fd_algebraic);
    }

    /// Evaluates `law` and all its partials at `x`: the analytic ones it provides, the others by
    /// [`difference_partials`]; [`ElementLaw::evaluate_with_partials`] gives both in one call.
    pub fn evaluate_with_partials(&mut self, law: &dyn ElementLaw, x: &ElementInput) {
        // Zeroed through the contiguous storage (one memset each): `DMatrix::fill`
        // wrote entry by entry and was 8 % of the 10-wheeler's step (`docs/truck.md`). Not
        // at all where the reader of the last partials cleared them.
        if !self.partials_zero {
            self.d_position.as_mut_slice().fill(0.0);
            self.d_velocity.as_mut_slice().fill(0.0);
        }
        self.partials_zero = false;
        let provided = law.evaluate_with_partials(
            x,
            &mut ElementOutput {
                force: &mut self.force,
                torque: &mut self.torque,
                state_rates: &mut self.state_rates,
                outputs: &mut self.outputs,
                algebraic: &mut self.algebraic,
            },
            &mut ElementJacobian {
                position: &mut self.d_position,
                velocity: &mut self.d_velocity,
            },
        );
        if !provided.position || !provided.velocity {
            difference_partials(law, x, self, !provided.position, !provided.velocity);
        }
    }

    /// Tells the scratch that every entry of `d_position` and `d_velocity` is zero again (the
    /// caller read the partials and cleared what it read), so that the next
    /// [`ElementScratch::evaluate_with_partials`] skips zeroing them.
    pub(crate) fn set_partials_cleared(&mut self) {
        debug_assert!(
            self.d_position
                .iter()
                .chain(self.d_velocity.iter())
                .all(|x| *x == 0.0),
            "partials marked cleared that are not zero"
        );
        self.partials_zero = true;
    }

    /// ∂(F, T, ṡ)/∂t into [`d_time`](Self::d_time) (and the outputs' into
    /// [`d_time_outputs`](Self::d_time_outputs)) by the central difference of the
    /// evaluations at `x_plus` and `x_minus`, which differ only in `t` (and in the input-slot
    /// values read at that time). The algebraic variables are restored after each evaluation, as
    /// in [`difference_partials`], so the warm start does not move.
    pub fn time_derivative(
        &mut self,
        law: &dyn ElementLaw,
        x_plus: &ElementInput,
        x_minus: &ElementInput,
    ) {
        for (sign, x) in [(1.0, x_plus), (-1.0, x_minus)] {
            self.fd_algebraic.copy_from_slice(&self.algebraic);
            let mut out = ElementOutput {
                force: &mut self.fd_force,
                torque: &mut self.fd_torque,
                state_rates: &mut self.fd_rates,
                outputs: &mut self.fd_outputs,
                algebraic: &mut self.fd_algebraic,
            };
            law.evaluate(x, &mut out);
            let dst = if sign > 0.0 {
                self.fd_outputs_plus.copy_from_slice(&self.fd_outputs);
                &mut self.fd_plus
            } else {
                &mut self.fd_minus
            };
            ElementScratch::pack_rows(&self.fd_force, &self.fd_torque, &self.fd_rates, dst);
        }
        let dt = x_plus.t - x_minus.t;
        for (d, (p, q)) in self
            .d_time_outputs
            .iter_mut()
            .zip(self.fd_outputs_plus.iter().zip(&self.fd_outputs))
        {
            *d = (p - q) / dt;
        }
        for (d, (p, q)) in self
            .d_time
            .iter_mut()
            .zip(self.fd_plus.iter().zip(&self.fd_minus))
        {
            *d = (p - q) / dt;
        }
    }

    /// Row vector (F₀, T₀, …, ṡ) of the last perturbed evaluation into `dst`.
    fn pack_rows(force: &[Vector3<f64>], torque: &[Vector3<f64>], rates: &[f64], dst: &mut [f64]) {
        for (k, (f, t)) in force.iter().zip(torque).enumerate() {
            dst[6 * k..6 * k + 3].copy_from_slice(f.as_slice());
            dst[6 * k + 3..6 * k + 6].copy_from_slice(t.as_slice());
        }
        let m = force.len();
        dst[6 * m..].copy_from_slice(rates);
    }
}

/// Relative step of the central differences of [`difference_partials`]: ε^(1/3) of the value's
/// scale, the step that balances the O(h²) truncation against the O(ε/h) round-off.
pub const FD_RELATIVE_STEP: f64 = 6.0e-6;

/// Central differences of the element's (F, T, ṡ) over its own markers' perturbations (δp, δφ;
/// δv, δω) and its states: fills the position columns if `position`, the velocity and state
/// columns if `velocity`. Each of the marker quantities (x, R, v, ω) is perturbed on its
/// own, rotations as R ← exp([±h e_k]×) R: the relative marker form treats them as independent
/// (the chain rule to the carrying bodies is the pipeline's).
/// Steps: h = [`FD_RELATIVE_STEP`] × max(1, |value|) for positions and velocities (m, m/s, rad/s),
/// and [`FD_RELATIVE_STEP`] rad for rotations. The element's algebraic variables are restored after
/// each perturbed evaluation, so differencing does not move its warm start.
pub fn difference_partials(
    law: &dyn ElementLaw,
    x: &ElementInput,
    s: &mut ElementScratch,
    position: bool,
    velocity: bool,
) {
    let (m, ns) = (x.markers.len(), x.states.len());
    for group in 0..2 {
        let wanted = if group == 0 { position } else { velocity };
        if !wanted {
            continue;
        }
        let n_cols = if group == 0 { 6 * m } else { 6 * m + ns };
        for col in 0..n_cols {
            let mut h = 0.0;
            for sign in [1.0, -1.0] {
                h = perturb(x, s, group == 0, col, sign);
                evaluate_perturbed(law, x.t, x.inputs, s);
                let dst = if sign > 0.0 {
                    &mut s.fd_plus
                } else {
                    &mut s.fd_minus
                };
                ElementScratch::pack_rows(&s.fd_force, &s.fd_torque, &s.fd_rates, dst);
            }
            let dst = if group == 0 {
                &mut s.d_position
            } else {
                &mut s.d_velocity
            };
            for (row, (p, q)) in s.fd_plus.iter().zip(&s.fd_minus).enumerate() {
                dst[(row, col)] = (p - q) / (2.0 * h);
            }
        }
    }
}

/// Sets the scratch's perturbed copies of `x`'s markers and states to `x` moved by `sign` times
/// the step along column `col` of the position (`position`) or velocity group (the columns of
/// [`ElementJacobian`]); returns the step h ([`difference_partials`] gives the step rules).
fn perturb(x: &ElementInput, s: &mut ElementScratch, position: bool, col: usize, sign: f64) -> f64 {
    let m = x.markers.len();
    s.fd_markers.copy_from_slice(x.markers);
    s.fd_states.copy_from_slice(x.states);
    if col >= 6 * m {
        let j = col - 6 * m;
        let h = FD_RELATIVE_STEP * s.fd_states[j].abs().max(1.0);
        s.fd_states[j] += sign * h;
        return h;
    }
    let (k, a) = (col / 6, col % 6);
    let mk = &mut s.fd_markers[k];
    match (position, a < 3) {
        (true, true) => {
            let h = FD_RELATIVE_STEP * mk.x[a].abs().max(1.0);
            mk.x[a] += sign * h;
            h
        }
        (true, false) => {
            let h = FD_RELATIVE_STEP;
            let mut dphi = Vector3::zeros();
            dphi[a - 3] = sign * h;
            mk.rot = nalgebra::Rotation3::new(dphi).into_inner() * mk.rot;
            h
        }
        (false, true) => {
            let h = FD_RELATIVE_STEP * mk.v[a].abs().max(1.0);
            mk.v[a] += sign * h;
            h
        }
        (false, false) => {
            let h = FD_RELATIVE_STEP * mk.w[a - 3].abs().max(1.0);
            mk.w[a - 3] += sign * h;
            h
        }
    }
}

/// One evaluation of `law` at the scratch's perturbed markers and states with the slot values
/// `inputs` into the scratch's perturbed outputs; the algebraic variables are restored, so the
/// warm start does not move.
fn evaluate_perturbed(law: &dyn ElementLaw, t: f64, inputs: &[f64], s: &mut ElementScratch) {
    s.fd_algebraic.copy_from_slice(&s.algebraic);
    let mut out = ElementOutput {
        force: &mut s.fd_force,
        torque: &mut s.fd_torque,
        state_rates: &mut s.fd_rates,
        outputs: &mut s.fd_outputs,
        algebraic: &mut s.fd_algebraic,
    };
    law.evaluate(
        &ElementInput {
            t,
            markers: &s.fd_markers,
            states: &s.fd_states,
            inputs,
        },
        &mut out,
    );
}

/// ∂(F, T, ṡ)/∂u_slot by the central difference over the slot's value (step
/// [`FD_RELATIVE_STEP`] × max(1, |u|)) into `dst` (6 m + n_s rows): the fallback of
/// [`ElementLaw::input_partials`].
pub fn difference_input_partials(
    law: &dyn ElementLaw,
    x: &ElementInput,
    s: &mut ElementScratch,
    slot: usize,
    dst: &mut [f64],
) {
    let h = FD_RELATIVE_STEP * x.inputs[slot].abs().max(1.0);
    s.fd_markers.copy_from_slice(x.markers);
    s.fd_states.copy_from_slice(x.states);
    for sign in [1.0, -1.0] {
        let mut inputs = std::mem::take(&mut s.fd_inputs);
        inputs.copy_from_slice(x.inputs);
        inputs[slot] += sign * h;
        evaluate_perturbed(law, x.t, &inputs, s);
        s.fd_inputs = inputs;
        let dst = if sign > 0.0 {
            &mut s.fd_plus
        } else {
            &mut s.fd_minus
        };
        ElementScratch::pack_rows(&s.fd_force, &s.fd_torque, &s.fd_rates, dst);
    }
    for (d, (p, q)) in dst.iter_mut().zip(s.fd_plus.iter().zip(&s.fd_minus)) {
        *d = (p - q) / (2.0 * h);
    }
}

/// ∂(output `output`)/∂(markers, states) by central differences with the steps of
/// [`difference_partials`]: position columns into `d_position` (6 m), velocity and state columns
/// into `d_velocity` (6 m + n_s); the fallback of [`ElementLaw::output_partials`].
pub fn difference_output_partials(
    law: &dyn ElementLaw,
    x: &ElementInput,
    s: &mut ElementScratch,
    output: usize,
    d_position: &mut [f64],
    d_velocity: &mut [f64],
) {
    for (position, dst) in [(true, d_position), (false, d_velocity)] {
        for (col, d) in dst.iter_mut().enumerate() {
            let h = perturb(x, s, position, col, 1.0);
            evaluate_perturbed(law, x.t, x.inputs, s);
            let plus = s.fd_outputs[output];
            perturb(x, s, position, col, -1.0);
            evaluate_perturbed(law, x.t, x.inputs, s);
            *d = (plus - s.fd_outputs[output]) / (2.0 * h);
        }
    }
}
