//! The partly implicit Euler of document 002 (eqs. 4-9), fixed step, for a mechanical system
//! with force-element states: y' = K(y) z, M z' = q(y, z, s, u), s' = f(y, z, s, u) (eqs. 1-3).
//!
//! One step from t to t + h, in this order (superscripts k, k + 1 = t, t + h; u^{k+1} = u(t + h)):
//! ```text
//! (a) [I − h ∂f/∂s] (s^{k+1} − s^k) = h f(y^k, z^k, s^k, u^{k+1})                       (eq. 7)
//! (b) [M − h (∂q/∂z + h ∂q/∂y K)] (z^{k+1} − z^k)
//!                                 = h q(y^k + h K(y^k) z^k, z^k, s^{k+1}, u^{k+1})       (eq. 9)
//! (c) y^{k+1} = y^k + h K(y^k) z^{k+1}, then projected onto the manifold                 (eq. 4)
//! ```
//! Eq. 7 is the implicit Euler step of eq. 6 for the states, linearised in s only: the vehicle
//! coordinates y, z enter it explicitly. Eq. 9 is eq. 5 with q expanded (eq. 8) about the explicit
//! Euler predictor y^k + h K(y^k) z^k of the positions and with the new states s^{k+1} already in
//! the argument, so that ∂q/∂s does not appear. Order 1 in all variables; stable for stiff force
//! elements and stiff element states (both are inside the iteration matrices).
//!
//! ## Where the states live, and one factorisation for both matrices
//!
//! The [`MechanicalSystem`] keeps the element states s in the velocity-level vector after the
//! generalised speeds z ([`MechanicalSystem::n_speeds`]): v = (z, s), with s' = f in the rows of
//! q after the accelerations, no position coordinates (K(r) has zero columns there) and the
//! partials ∂f/∂s in the state-state blocks of J_v. The Rosenbrock steppers treat v as one
//! vector; document 002 splits it. This stepper uses the same linearisation (J_v, J_r K at
//! (t, y^k, z^k, s^k), re-linearised every `relinearise_every` steps like LSRT2), drops the
//! couplings that eqs. 7 and 9 treat explicitly —
//! ∂f/∂z and ∂f/∂y K (state rows, speed columns) and ∂q/∂s (speed rows, state columns) —
//! and then forms the iteration matrix with the Rosenbrock steppers' own assembly
//! (`iteration_matrix`, γ = 1):
//! ```text
//!   A = [ I − h J_v^zz − h² (J_r K)^zz        0         ]   (speed rows: M⁻¹ × eq. 9's matrix)
//!       [             0                I − h ∂f/∂s      ]   (state rows: eq. 7's matrix)
//! ```
//! A is block diagonal over the split, so one LU factorisation (block-sparse or dense, the
//! Rosenbrock steppers' solvers; on the system's pattern less the blocks coupling speeds and
//! states, [`PartlyImplicitEuler::iteration_pattern`]) holds both matrices, and a solve with a right-hand side that is
//! zero in one part returns exactly zero there: step (a) solves with (0, h f), step (b) with
//! (h q, 0). Each solve visits only its own part's blocks
//! ([`LinearSolver::solve_blocks_in_place`]; the rest would add exact zeros). The congruence form of the linearisation ([`super::congruence`], M inside) is used
//! as by the Rosenbrock steppers; its factors are the identity on state blocks, so the same
//! blocks are dropped in either form. Padding coordinates of partly filled state blocks have
//! zero rate and zero partials and stay zero. A model without element states skips step (a).
//!
//! Work per step: with element states, one evaluation of their rates f alone at the start state
//! with the new inputs ([`MechanicalSystem::state_rates`]: a multibody system evaluates only the
//! elements with states and what feeds them, not the bodies' accelerations); one evaluation of
//! q at the predictor; one or two triangular solves; on re-linearising steps one linearisation
//! and one factorisation. No allocation.
//!
//! ## Variants: the state rates of the last predictor evaluation ([`StateRates::Lagged`])
//!
//! The evaluation of q at the predictor in (b) also gives the state rows,
//! f(y^k + h K(y^k) z^k, z^k, s^{k+1}, u^{k+1}): the rates at the new states s^{k+1}, at the
//! speeds and inputs of one step before and at positions that differ from y^{k+1} by
//! h K(y^k) (z^{k+1} − z^k) (before the projection). [`StateRates::Lagged`] takes them as they
//! are for step (a) of the next step instead of evaluating f at (y^{k+1}, z^{k+1}, s^{k+1},
//! u^{k+2}); [`StateRates::LaggedCorrected`] carries them there to first order with the blocks of
//! the linearisation that the split drops:
//! ```text
//! f ≈ f_pred + (∂f/∂z + h ∂f/∂y K) (z^{k+1} − z^k) + h J_u u̇
//! ```
//! (a sparse product with the state-row, speed-column blocks, kept at each re-linearisation;
//! exact for a linear system; u̇ as the linearisation's J_u u̇ has it, so an input changed
//! between steps by the caller reaches the state rates one step late). Either way the states among themselves stay implicit (the same
//! matrix), their coupling to the positions and speeds explicit as in eq. 7; still order 1. They
//! save the state-rate evaluation of every step but the first (after
//! [`PartlyImplicitEuler::invalidate`] or [`PartlyImplicitEuler::linearise_at`], too, the rates
//! are evaluated afresh). Not document 002's scheme bit for bit (the plain variant lags the
//! speeds and inputs by a step; the corrected one differs from eq. 7 by second-order terms and
//! the Jacobian's age), hence not the default ([`StateRates::AtStart`], eq. 7 as written). The
//! 40 t truck (bump, pie every 200 steps): the state-rate evaluation is 27.7 k of 128.2 k
//! instructions per step; plain 100.5 k, corrected 105.9 k; the front tires' lateral forces
//! move by up to 1.25 % (plain) and 0.96 % (corrected) of their range, the cornering run's
//! channels by 0.7 % and 0.05 %. The plain lag is the rougher one where the states follow the
//! speeds quickly: the quarter car's and the cars' tire forces move by up to 11 % and 9 % of
//! their range with it, by at most 0.02 % with the correction.
//!
//! Breakpoints: when the evaluation of q at the predictor sees other segments of a piecewise
//! characteristic than the linearisation ([`MechanicalSystem::segment_changes`]; the evaluation
//! of the state rates need not count), the next step re-linearises (counted in `Stats::breakpoint_steps`); the step itself is not redone — at
//! order 1 the stale slope costs no more than the method's own error. [`Breakpoints::Ignore`]
//! switches this off.

use std::sync::Arc;

use crate::block::{BlockMatrix, BlockPattern};
use crate::block_lu::{BlockSparseLu, BlockSymbolic};
use crate::dense::LinearSolver;
use crate::mech::rosenbrock::{first_non_finite, iteration_matrix};
use crate::mech::{Breakpoints, Linearisation, MechanicalSystem, StepError, rosenbrock::Stats};

/// Where step (a) takes the state rates f from (module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StateRates {
    /// Eq. 7 as written: f evaluated at the start of the step, (y^k, z^k, s^k, u^{k+1}) (one
    /// [`MechanicalSystem::state_rates`] per step).
    #[default]
    AtStart,
    /// The state rows of the last step's evaluation at the predictor,
    /// (y^{k−1} + h K z^{k−1}, z^{k−1}, s^k, u^k), as they are: no evaluation of its own
    /// (module docs, "Variants").
    Lagged,
    /// [`StateRates::Lagged`] carried to (y^k, z^k, s^k, u^{k+1}) to first order with the
    /// linearisation's state-row, speed-column blocks (module docs, "Variants"). Set it before
    /// the first step (the blocks are kept at re-linearisations).
    LaggedCorrected,
}

impl StateRates {
    /// Whether step (a) reuses the last predictor evaluation's state rows.
    fn lagged(self) -> bool {
        self != Self::AtStart
    }
}

/// Fixed-step partly implicit Euler (document 002, eqs. 4-9; module docs) with a preallocated
/// workspace: [`PartlyImplicitEuler::step`] does not allocate.
pub struct PartlyImplicitEuler {
    lin: Linearisation,
    /// The iteration matrix in the system's pattern (as the Rosenbrock steppers assemble it).
    a: BlockMatrix,
    /// The same without the speed–state coupling blocks ([`Self::iteration_pattern`]): what is
    /// factored.
    a_split: BlockMatrix,
    /// Per slot of `a_split`, the slot of the same block in `a`.
    split_slots: Vec<usize>,
    lu: Box<dyn LinearSolver + Send>,
    /// Step size h, s.
    pub h: f64,
    /// Start time t0, s.
    pub t0: f64,
    /// Re-linearise every this many steps (≥ 1).
    pub relinearise_every: u64,
    /// Whether to ask the system for the congruence form of the linearisation
    /// ([`super::congruence`]; default true).
    pub congruent: bool,
    /// Reaction to characteristics changing segment (module docs; default: re-linearise at the
    /// next step).
    pub breakpoints: Breakpoints,
    /// Where step (a) takes the state rates from (default: eq. 7 as written).
    pub state_rates: StateRates,
    /// Work counters.
    pub stats: Stats,
    /// Whether the state rows of `q` hold the rates of the last predictor evaluation at the
    /// current states ([`StateRates::lagged`]).
    have_rates: bool,
    /// Number of generalised speeds z (the rest of v are element states).
    n_z: usize,
    /// Number of pattern blocks of the speeds (the first blocks).
    nb_z: usize,
    /// q or f of the current evaluation (n_v).
    q: Vec<f64>,
    /// Right-hand side / increment of a solve (n_v).
    rhs: Vec<f64>,
    /// Predictor y^k + h K(y^k) z^k (n_r).
    r_pred: Vec<f64>,
    /// K(y^k) z (n_r).
    r_dot: Vec<f64>,
    have_lin: bool,
    /// The blocks of the system's pattern in a state row and a speed column: (slot, column
    /// block), by row block ([`StateRates::LaggedCorrected`]).
    coupling_slots: Vec<(usize, usize)>,
    /// Where each state row block's entries of `coupling_slots` start (and a last end).
    coupling_ptr: Vec<usize>,
    /// C = ∂f/∂z + h ∂f/∂y K in those blocks at the last linearisation (in the congruence form
    /// when the linearisation is congruent: G_sz, D_r being the identity on state rows), its
    /// non-zero entries: the state rows that have any, each with the end of its entries,
    /// then (speed index, value) pairs. Sized for every entry of the blocks, so refilling them
    /// does not allocate ([`StateRates::LaggedCorrected`]; the truck: up to 336 entries in 28
    /// blocks, too sparse for products by block rows).
    c_rows: Vec<(usize, usize)>,
    c_entries: Vec<(usize, f64)>,
    /// The speed blocks of `coupling_slots`' columns, sorted: the only part of `dz` C reads.
    c_blocks: Vec<usize>,
    /// Whether J_u u̇ has non-zero state rows at the last linearisation.
    c_inputs: bool,
    /// The speeds of the last predictor evaluation z^{k−1}, then D_c (z^k − z^{k−1}) (in the
    /// blocks of `c_blocks`; the rest is not read).
    dz: Vec<f64>,
}

impl PartlyImplicitEuler {
    /// Creates a stepper for `sys` with step `h`, start time `t0`, re-linearisation every
    /// `relinearise_every` steps and the given linear solver, which factors matrices of
    /// [`Self::iteration_pattern`] (a dense LU fits any pattern; the block-sparse one:
    /// [`Self::block_sparse_lu`]).
    pub fn new<S: MechanicalSystem + ?Sized>(
        sys: &S,
        h: f64,
        t0: f64,
        relinearise_every: u64,
        lu: Box<dyn LinearSolver + Send>,
    ) -> Self {
        let pattern = sys.pattern();
        let (n_r, n_v) = (sys.n_r(), sys.n_v());
        let n_z = sys.n_speeds();
        let nb_z = n_z / pattern.block_size();
        assert!(
            n_z <= n_v && n_z.is_multiple_of(pattern.block_size()),
            "n_speeds = {n_z} must be a whole number of blocks within n_v = {n_v}"
        );
        let split = Self::iteration_pattern(sys);
        let mut coupling_slots = Vec::new();
        let mut coupling_ptr = vec![0];
        for i in nb_z..pattern.n_blocks() {
            for &j in pattern.row(i).iter().filter(|&&j| j < nb_z) {
                coupling_slots.push((pattern.slot(i, j).expect("a block of the row"), j));
            }
            coupling_ptr.push(coupling_slots.len());
        }
        let n_c = coupling_slots.len() * pattern.block_size().pow(2);
        let mut c_blocks: Vec<usize> = coupling_slots.iter().map(|&(_, j)| j).collect();
        c_blocks.sort_unstable();
        c_blocks.dedup();
        let split_slots = (0..split.n_blocks())
            .flat_map(|i| split.row(i).iter().map(move |&j| (i, j)))
            .map(|(i, j)| pattern.slot(i, j).expect("a block of the split is stored"))
            .collect();
        Self {
            lin: Linearisation::new(n_r, pattern.clone()),
            a: BlockMatrix::zeros(pattern),
            a_split: BlockMatrix::zeros(split),
            split_slots,
            lu,
            h,
            t0,
            relinearise_every: relinearise_every.max(1),
            congruent: true,
            breakpoints: Breakpoints::default(),
            state_rates: StateRates::default(),
            stats: Stats::default(),
            have_rates: false,
            n_z,
            nb_z,
            q: vec![0.0; n_v],
            rhs: vec![0.0; n_v],
            r_pred: vec![0.0; n_r],
            r_dot: vec![0.0; n_r],
            have_lin: false,
            coupling_slots,
            coupling_ptr,
            c_rows: Vec::with_capacity(n_v - n_z),
            c_entries: Vec::with_capacity(n_c),
            c_blocks,
            c_inputs: false,
            dz: vec![0.0; n_z],
        }
    }

    /// The pattern of the matrix this stepper factors: the system's pattern without the blocks
    /// that couple speeds and states (module docs: A is block diagonal over the split, so they
    /// are zero). The same block count and numbering as the system's pattern.
    pub fn iteration_pattern<S: MechanicalSystem + ?Sized>(sys: &S) -> Arc<BlockPattern> {
        let p = sys.pattern();
        let split = split_pattern(&p, sys.n_speeds() / p.block_size());
        if split == *p { p } else { Arc::new(split) }
    }

    /// The block-sparse LU for [`Self::iteration_pattern`], eliminating in the order the
    /// analysis of the system's full pattern chooses, the speeds' steps moved before the
    /// states' (the parts do not interact, so this changes no number): the factors and solves
    /// then do the same arithmetic as on the full pattern less the products with the (exactly
    /// zero) coupling blocks, hence the same numbers bit for bit, with fewer block operations
    /// (the truck: 183 → 127 factor blocks; the steps' solves leave the other part's blocks
    /// out anyway, and run over their part's consecutive steps without a test per step).
    pub fn block_sparse_lu<S: MechanicalSystem + ?Sized>(sys: &S) -> BlockSparseLu {
        let full = sys.pattern();
        let split = Self::iteration_pattern(sys);
        if Arc::ptr_eq(&split, &full) {
            return BlockSparseLu::new(&full);
        }
        split_lu(&full, &split, sys.n_speeds() / full.block_size())
    }

    /// Whether step `k` starts with a re-linearisation.
    pub fn relinearises_at(&self, k: u64) -> bool {
        !self.have_lin || k.is_multiple_of(self.relinearise_every)
    }

    /// Time at the start of step `k`: t0 + k h (never accumulated).
    pub fn time(&self, k: u64) -> f64 {
        self.t0 + k as f64 * self.h
    }

    /// Advances (r, v) = (y, (z, s)) from step `k` (t = t0 + k h) to step k + 1 in place.
    pub fn step<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        let (t, t1, h) = (self.time(k), self.time(k + 1), self.h);
        let n_z = self.n_z;
        if self.relinearises_at(k) {
            self.relinearise(sys, t, r, v)?;
        }
        let c0 = sys.segment_changes();
        // (a) Element states, eq. 7: f at the start state with the new inputs (the state rows
        // alone: the accelerations there are not used), or the state rows the last predictor
        // evaluation left in `q` (`StateRates::Lagged`, `LaggedCorrected`).
        if n_z < v.len() {
            if self.have_rates && self.state_rates.lagged() {
                if self.state_rates == StateRates::LaggedCorrected {
                    self.correct_lagged_rates(&v[..n_z]);
                }
            } else {
                sys.state_rates(t1, r, v, &mut self.q);
                self.stats.state_rate_evals += 1;
            }
            self.rhs[..n_z].fill(0.0);
            for (b, f) in self.rhs[n_z..].iter_mut().zip(&self.q[n_z..]) {
                *b = h * f;
            }
            self.solve(Part::States);
            for (s, ds) in v[n_z..].iter_mut().zip(&self.rhs[n_z..]) {
                *s += ds;
            }
        }
        // (b) Speeds, eq. 9: q at the explicit Euler predictor, the old speeds, the new states.
        sys.kinematics(r, v, &mut self.r_dot);
        for ((p, y), yd) in self.r_pred.iter_mut().zip(&*r).zip(&self.r_dot) {
            *p = y + h * yd;
        }
        sys.project(&mut self.r_pred);
        if self.state_rates == StateRates::LaggedCorrected {
            self.dz.copy_from_slice(&v[..n_z]);
        }
        sys.accelerations(t1, &self.r_pred, v, &mut self.q);
        self.stats.q_evals += 1;
        // Its state rows are the rates at the new states s^{k+1} (`StateRates::lagged`).
        self.have_rates = true;
        for (b, q) in self.rhs[..n_z].iter_mut().zip(&self.q[..n_z]) {
            *b = h * q;
        }
        self.rhs[n_z..].fill(0.0);
        self.solve(Part::Speeds);
        for (z, dz) in v[..n_z].iter_mut().zip(&self.rhs[..n_z]) {
            *z += dz;
        }
        // (c) Positions, eq. 4, with K at the start positions and the new speeds.
        sys.kinematics(r, v, &mut self.r_dot);
        for (y, yd) in r.iter_mut().zip(&self.r_dot) {
            *y += h * yd;
        }
        sys.project(r);
        if self.breakpoints != Breakpoints::Ignore && sys.segment_changes() != c0 {
            // The Jacobian holds slopes of segments the state has left: re-linearise next step.
            self.have_lin = false;
            self.stats.breakpoint_steps += 1;
        }
        self.stats.steps += 1;
        match first_non_finite(r, v) {
            Some(index) => Err(StepError::NonFinite { t: t1, index }),
            None => Ok(()),
        }
    }

    /// `rhs ← A⁻¹ rhs` with the current factorisation (through the congruence factors when the
    /// linearisation is in congruence form) for a right-hand side that is zero outside `part`:
    /// A has no couplings between the speeds and the states, so only that part's blocks are
    /// solved ([`LinearSolver::solve_blocks_in_place`]), and the congruence factors, the
    /// identity on state blocks, are applied to the speeds only. The same numbers as a full
    /// solve (the work left out adds exact zeros).
    fn solve(&mut self, part: Part) {
        let n_z = self.n_z;
        let cg = self.lin.congruent.then_some(&self.lin.congruence);
        let blocks = match part {
            Part::Speeds => 0..self.nb_z,
            Part::States => self.nb_z..usize::MAX,
        };
        let speeds = part == Part::Speeds;
        if let Some(cg) = cg.filter(|_| speeds) {
            cg.apply_rows_inverse(&mut self.rhs[..n_z]);
        }
        self.lu.solve_blocks_in_place(&mut self.rhs, blocks);
        if let Some(cg) = cg.filter(|_| speeds) {
            cg.apply_cols_inverse(&mut self.rhs[..n_z]);
        }
        self.stats.solves += 1;
    }

    /// Linearises at (t, r, v), drops the couplings eqs. 7 and 9 treat explicitly and factors
    /// the iteration matrix (module docs).
    fn relinearise<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Result<(), StepError> {
        // Systems without a congruence form leave the flag cleared.
        self.lin.congruent = false;
        if self.congruent {
            sys.linearise_congruent(t, r, v, &mut self.lin);
        } else {
            sys.linearise(t, r, v, &mut self.lin);
        }
        self.stats.linearisations += 1;
        if self.state_rates == StateRates::LaggedCorrected {
            self.keep_coupling();
        }
        split_speeds_and_states(&mut self.lin, self.n_z);
        iteration_matrix(&self.lin, self.h, &mut self.a);
        let bb = self.a.pattern().block_size().pow(2);
        for (s, &f) in self.split_slots.iter().enumerate() {
            self.a_split.values_mut()[s * bb..(s + 1) * bb].copy_from_slice(self.a.block(f));
        }
        self.lu
            .factor(&self.a_split)
            .map_err(|source| StepError::Singular { t, source })?;
        self.stats.factorisations += 1;
        self.have_lin = true;
        Ok(())
    }

    /// Keeps C = J_v + h J_r K of the blocks coupling state rows to speed columns before the
    /// split drops them ([`StateRates::LaggedCorrected`]).
    fn keep_coupling(&mut self) {
        let b = self.a.pattern().block_size();
        let h = self.h;
        self.c_rows.clear();
        self.c_entries.clear();
        let mut row = 0;
        for ib in 0..self.coupling_ptr.len() - 1 {
            let slots = &self.coupling_slots[self.coupling_ptr[ib]..self.coupling_ptr[ib + 1]];
            for lr in 0..b {
                for &(s, j) in slots {
                    let jv = &self.lin.j_v.block(s)[lr * b..(lr + 1) * b];
                    let jr = &self.lin.j_rk.block(s)[lr * b..(lr + 1) * b];
                    for (lc, (a, r)) in jv.iter().zip(jr).enumerate() {
                        let c = a + h * r;
                        if c != 0.0 {
                            self.c_entries.push((j * b + lc, c));
                        }
                    }
                }
                if self.c_rows.last().map_or(0, |r| r.1) < self.c_entries.len() {
                    self.c_rows.push((row, self.c_entries.len()));
                }
                row += 1;
            }
        }
        self.c_inputs = self.lin.q_t[self.n_z..].iter().any(|&x| x != 0.0);
    }

    /// The state rows of `q` (the last predictor evaluation's, at (y^{k−1} + h K z^{k−1},
    /// z^{k−1}, s^k, u^k)) carried to eq. 7's point to first order: + C (z^k − z^{k−1}) for the
    /// speeds and the positions (y^k − (y^{k−1} + h K z^{k−1})) = h K (z^k − z^{k−1})), + h J_u u̇
    /// for the inputs (module docs, "Variants"). `z` = z^k; `dz` holds z^{k−1}.
    fn correct_lagged_rates(&mut self, z: &[f64]) {
        let b = self.a.pattern().block_size();
        // J = D_r G D_c with D_r the identity on the state rows.
        let cg = self.lin.congruent.then_some(&self.lin.congruence);
        // Only the speed blocks C has columns in: the rest of `dz` is not read.
        for &j in &self.c_blocks {
            let dz = &mut self.dz[j * b..(j + 1) * b];
            for (d, zk) in dz.iter_mut().zip(&z[j * b..(j + 1) * b]) {
                *d = zk - *d;
            }
            if let Some(cg) = cg {
                cg.apply_cols_to_block(j, dz);
            }
        }
        let f = &mut self.q[self.n_z..];
        let mut start = 0;
        for &(row, end) in &self.c_rows {
            let acc = self.c_entries[start..end]
                .iter()
                .fold(0.0, |acc, &(col, c)| acc + c * self.dz[col]);
            f[row] += acc;
            start = end;
        }
        if self.c_inputs {
            let h = self.h;
            for (f, qt) in f.iter_mut().zip(&self.lin.q_t[self.n_z..]) {
                *f += h * qt;
            }
        }
    }

    /// Linearises and factors at (t, r, v) as a re-linearising step would, without stepping
    /// (restoring a snapshot between re-linearisations continues bit for bit with
    /// [`StateRates::AtStart`]; with the lagged variants the next step evaluates the state
    /// rates afresh).
    pub fn linearise_at<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        t: f64,
        r: &[f64],
        v: &[f64],
    ) -> Result<(), StepError> {
        self.have_rates = false;
        self.relinearise(sys, t, r, v)
    }

    /// Forces a re-linearisation at the next step (e.g. after a discontinuity), and with
    /// the lagged variants ([`StateRates::Lagged`]) a fresh evaluation of the state rates.
    pub fn invalidate(&mut self) {
        self.have_lin = false;
        self.have_rates = false;
    }
}

/// `p` without the blocks coupling the first `nb_z` blocks (speeds) with the others (states).
fn split_pattern(p: &BlockPattern, nb_z: usize) -> BlockPattern {
    let kept: Vec<(usize, usize)> = (0..p.n_blocks())
        .flat_map(|i| p.row(i).iter().map(move |&j| (i, j)))
        .filter(|&(i, j)| (i < nb_z) == (j < nb_z))
        .collect();
    BlockPattern::from_couplings(p.n_blocks(), p.block_size(), &kept)
}

/// The block-sparse LU of `split` (a sub-pattern of `full` with the same blocks, the first
/// `nb_z` decoupled from the rest) eliminating in the order the analysis of `full` chooses
/// ([`PartlyImplicitEuler::block_sparse_lu`]), the first `nb_z` blocks' steps moved before the
/// others'. No step of one part touches the other part's blocks, so where the parts' steps lie
/// relative to each other changes no number; consecutive steps per part let the solves of one
/// part run over a range of steps without a test per step
/// ([`BlockSparseLu::solve_blocks_in_place`]).
fn split_lu(full: &BlockPattern, split: &BlockPattern, nb_z: usize) -> BlockSparseLu {
    let (mut order, states): (Vec<usize>, Vec<usize>) = BlockSymbolic::new(full)
        .order()
        .iter()
        .partition(|&&b| b < nb_z);
    order.extend(states);
    BlockSparseLu::with_order(split, &order)
        .expect("the full pattern's elimination order is a permutation of the same blocks")
}

/// The part of v a solve is for: its right-hand side is zero in the other part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The generalised speeds z (eq. 9).
    Speeds,
    /// The element states s (eq. 7).
    States,
}

/// Zeroes in J_v and J_r K (or their congruence forms) every block that couples speeds and
/// states, and the state rows of J_r K: what is left is ∂q/∂z, ∂q/∂y K on the speeds and ∂f/∂s
/// on the states (module docs). `n_z` is a whole number of blocks.
fn split_speeds_and_states(lin: &mut Linearisation, n_z: usize) {
    let p = lin.j_v.pattern().clone();
    let nb_z = n_z / p.block_size();
    if nb_z == p.n_blocks() {
        return;
    }
    for i in 0..p.n_blocks() {
        for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
            let j = p.col_idx()[s];
            let (row_z, col_z) = (i < nb_z, j < nb_z);
            if row_z != col_z {
                lin.j_v.block_mut(s).fill(0.0);
            }
            if !(row_z && col_z) {
                lin.j_rk.block_mut(s).fill(0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::DenseLu;

    /// A mass on a spring k_p with a Maxwell element (spring k in series with a damper c, state
    /// x_d) in one 1 × 1-block system: y = x, z = ẋ, s = x_d; m ẍ = F − k_p x − k (x − x_d),
    /// c ẋ_d = k (x − x_d). Block size 1 so the split is visible in a 2 × 2 pattern.
    struct Zener {
        m: f64,
        kp: f64,
        k: f64,
        c: f64,
        f: f64,
        evals: u64,
    }

    impl MechanicalSystem for Zener {
        fn n_r(&self) -> usize {
            1
        }
        fn n_v(&self) -> usize {
            2
        }
        fn n_speeds(&self) -> usize {
            1
        }
        fn pattern(&self) -> Arc<BlockPattern> {
            Arc::new(BlockPattern::from_couplings(2, 1, &[(0, 1)]))
        }
        fn accelerations(&mut self, _t: f64, r: &[f64], v: &[f64], q: &mut [f64]) {
            self.evals += 1;
            q[0] = (self.f - self.kp * r[0] - self.k * (r[0] - v[1])) / self.m;
            q[1] = self.k * (r[0] - v[1]) / self.c;
        }
        fn linearise(&mut self, t: f64, r: &[f64], v: &[f64], lin: &mut Linearisation) {
            self.accelerations(t, r, v, &mut lin.q);
            let p = lin.j_v.pattern().clone();
            let (s00, s01, s10, s11) = (
                p.slot(0, 0).unwrap(),
                p.slot(0, 1).unwrap(),
                p.slot(1, 0).unwrap(),
                p.slot(1, 1).unwrap(),
            );
            lin.j_v.fill_zero();
            lin.j_rk.fill_zero();
            lin.j_v.block_mut(s01)[0] = self.k / self.m;
            lin.j_v.block_mut(s11)[0] = -self.k / self.c;
            lin.j_rk.block_mut(s00)[0] = -(self.kp + self.k) / self.m;
            lin.j_rk.block_mut(s10)[0] = self.k / self.c;
            lin.q_t.fill(0.0);
            lin.r.copy_from_slice(r);
        }
        fn kinematics(&self, _r: &[f64], v: &[f64], r_dot: &mut [f64]) {
            r_dot[0] = v[0];
        }
        fn tangent(&self, _r: &[f64], dr: &[f64], w: &mut [f64]) {
            w[0] = dr[0];
            w[1] = 0.0;
        }
    }

    /// The LU of the split pattern (no speed–state coupling blocks, the full pattern's
    /// elimination order) solves like the LU of the full pattern with those blocks zero, bit for
    /// bit, for right-hand sides in either part (block sizes 6 with the AVX2 and the portable
    /// kernels, and 3; a pattern whose cross couplings would change the elimination order).
    #[test]
    fn split_pattern_lu_solves_as_the_full_one() {
        let (n, nb_z) = (9, 5);
        let pairs = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (0, 4),
            (1, 5),
            (2, 6),
            (4, 6),
            (5, 6),
            (6, 7),
            (7, 8),
            (4, 8),
            (3, 7),
            (0, 8),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut rand = || {
            // xorshift64*: any spread of values will do.
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for (b, portable) in [(6, false), (6, true), (3, false)] {
            let full = Arc::new(BlockPattern::from_couplings(n, b, &pairs));
            let split = Arc::new(split_pattern(&full, nb_z));
            assert!(split.col_idx().len() < full.col_idx().len());
            let (mut a, mut a_split) = (
                BlockMatrix::zeros(full.clone()),
                BlockMatrix::zeros(split.clone()),
            );
            for i in 0..n {
                for &j in split.row(i) {
                    let (sf, ss) = (full.slot(i, j).unwrap(), split.slot(i, j).unwrap());
                    for k in 0..b * b {
                        let d = if i == j && k % (b + 1) == 0 { 4.0 } else { 0.0 };
                        let v = rand() + d;
                        a.block_mut(sf)[k] = v;
                        a_split.block_mut(ss)[k] = v;
                    }
                }
            }
            let mut lu_full = BlockSparseLu::new(&full);
            let mut lu_split = split_lu(&full, &split, nb_z);
            lu_full.force_portable_kernels(portable);
            lu_split.force_portable_kernels(portable);
            lu_full.factor(&a).unwrap();
            lu_split.factor(&a_split).unwrap();
            for part in [0..nb_z, nb_z..n] {
                let rhs: Vec<f64> = (0..n * b)
                    .map(|k| if part.contains(&(k / b)) { rand() } else { 0.0 })
                    .collect();
                let (mut x_full, mut x_split) = (rhs.clone(), rhs);
                lu_full.solve_blocks_in_place(&mut x_full, part.clone());
                lu_split.solve_blocks_in_place(&mut x_split, part.clone());
                let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&x_split), bits(&x_full), "b = {b}, {part:?}");
            }
        }
    }

    /// The Zener solid of the hand-computed steps below (m, k_p, k, c, F).
    fn zener() -> Zener {
        Zener {
            m: 2.0,
            kp: 300.0,
            k: 5000.0,
            c: 40.0,
            f: 10.0,
            evals: 0,
        }
    }

    /// One step by hand from a non-trivial state against eqs. 7, 9 and 4 written out for the
    /// scalar system (the stepper's block bookkeeping is what is checked; round-off only).
    #[test]
    fn one_step_is_eqs_7_9_and_4() {
        let mut sys = zener();
        let h = 1e-3;
        let mut st = PartlyImplicitEuler::new(&sys, h, 0.0, 1, Box::new(DenseLu::new(2)));
        let (y, z, s) = (0.01, -0.3, 0.004);
        let (mut r, mut v) = (vec![y], vec![z, s]);
        st.step(&mut sys, 0, &mut r, &mut v).unwrap();
        let Zener { m, kp, k, c, f, .. } = sys;
        // eq. 7: (1 + h k/c) Δs = h k (y − s)/c
        let s1 = s + h * k * (y - s) / c / (1.0 + h * k / c);
        // eq. 9 (scalar, M = m): (m + h² (k_p + k)) Δz = h (F − k_p y_p − k (y_p − s1)).
        let yp = y + h * z;
        let z1 = z + h * (f - kp * yp - k * (yp - s1)) / (m + h * h * (kp + k));
        let y1 = y + h * z1;
        for (got, want) in [(r[0], y1), (v[0], z1), (v[1], s1)] {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        assert_eq!(st.stats.steps, 1);
        assert_eq!(st.stats.factorisations, 1);
        assert_eq!(st.stats.solves, 2);
        // Linearisation (one q), the state evaluation (the default `state_rates`: a full q)
        // and the predictor evaluation.
        assert_eq!(st.stats.q_evals, 1);
        assert_eq!(st.stats.state_rate_evals, 1);
        assert_eq!(sys.evals, 3);
    }

    /// The lagged variants: the second step's eq. 7 takes f from the first step's predictor
    /// evaluation (y^0 + h z^0, s^1) as it is (`Lagged`) or plus C (z^1 − z^0),
    /// C = ∂f/∂z + h ∂f/∂y K (`LaggedCorrected`), instead of evaluating at (y^1, s^1); the steps
    /// after the first evaluate q only (and linearise). The Zener system is linear, so the
    /// corrected rates are eq. 7's exactly (y^1 = y^0 + h z^1) and agree with it to round-off over
    /// many steps; the plain lag stays within O(h).
    #[test]
    fn lagged_state_rates_reuse_the_predictor_evaluation() {
        let h = 1e-3;
        let (y, z, s) = (0.01, -0.3, 0.004);
        for (rates, corrected) in [
            (StateRates::Lagged, 0.0),
            (StateRates::LaggedCorrected, 1.0),
        ] {
            let mut sys = zener();
            let mut st = PartlyImplicitEuler::new(&sys, h, 0.0, 1, Box::new(DenseLu::new(2)));
            st.state_rates = rates;
            let (mut r, mut v) = (vec![y], vec![z, s]);
            st.step(&mut sys, 0, &mut r, &mut v).unwrap();
            st.step(&mut sys, 1, &mut r, &mut v).unwrap();
            let Zener { m, kp, k, c, f, .. } = sys;
            // Step 1 as eq. 7, 9, 4; step 2's eq. 7 at the step-1 predictor y^0 + h z^0 (with
            // the correction: + (h k/c)(z^1 − z^0), which makes it k (y^1 − s^1)/c).
            let s1 = s + h * k * (y - s) / c / (1.0 + h * k / c);
            let yp0 = y + h * z;
            let z1 = z + h * (f - kp * yp0 - k * (yp0 - s1)) / (m + h * h * (kp + k));
            let y1 = y + h * z1;
            let f1 = (yp0 - s1) / c + corrected * h / c * (z1 - z);
            let s2 = s1 + h * k * f1 / (1.0 + h * k / c);
            let yp1 = y1 + h * z1;
            let z2 = z1 + h * (f - kp * yp1 - k * (yp1 - s2)) / (m + h * h * (kp + k));
            let y2 = y1 + h * z2;
            for (got, want) in [(r[0], y2), (v[0], z2), (v[1], s2)] {
                assert!((got - want).abs() < 1e-15, "{rates:?}: {got} vs {want}");
            }
            assert_eq!(st.stats.state_rate_evals, 1);
            // Two linearisations, one state-rate evaluation, two predictor evaluations.
            assert_eq!(sys.evals, 5);
        }

        // 1 s against eq. 7 as written; after `invalidate` the rates are evaluated afresh.
        let run = |rates: StateRates| {
            let mut sys = zener();
            let mut st = PartlyImplicitEuler::new(&sys, h, 0.0, 50, Box::new(DenseLu::new(2)));
            st.state_rates = rates;
            let (mut r, mut v) = (vec![y], vec![z, s]);
            for k in 0..1000 {
                if k == 500 {
                    st.invalidate();
                }
                st.step(&mut sys, k, &mut r, &mut v).unwrap();
            }
            (r[0], v[0], v[1], st.stats.state_rate_evals)
        };
        let a = run(StateRates::AtStart);
        for (rates, tol) in [
            (StateRates::Lagged, 1e-2),
            (StateRates::LaggedCorrected, 1e-12),
        ] {
            let b = run(rates);
            assert_eq!((a.3, b.3), (1000, 2));
            for (x, w, scale) in [(b.0, a.0, y), (b.1, a.1, z), (b.2, a.2, s)] {
                assert!((x - w).abs() < tol * scale.abs(), "{rates:?}: {x} vs {w}");
            }
        }
    }
}
