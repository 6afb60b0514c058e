//! The `steering_dual_axle` element: the linkage of [`super::linkage`] as an
//! [`ElementLaw`] on four markers (module docs of [`super`]).
//!
//! Each evaluation
//! 1. takes the steering-wheel angle δ_W and its rate ([`DualAxleSteering::steering_wheel`]);
//! 2. solves the torque balances (eqs. 31, 32) for y = (φ_S, δ_L) by Newton's method from the
//!    last solution (the algebraic variables; at the first evaluation, or when the warm-started
//!    iteration fails, from [`Linkage::start`]);
//! 3. adds to the elastic rod forces F_i = c_i u_i their viscous parts d_i u̇_i, where u̇_i is the
//!    rate of the rod elongation along the quasi-static solution (marker velocities and δ̇_W through
//!    the implicit derivatives dy/dz, dy/dδ_W). The viscous parts do not enter the balance, which
//!    stays quasi-static (the arms have no inertia and no state): their moments about e_P and e_L
//!    go to the box and the lever bearing, i.e. to the frame — document 002 leaves this open
//!    (errata item 9); the error against a linkage whose arms balance them too is of the order of
//!    the rods' relaxation time d_i/c_i times the steering rate (`docs/steering-dual-axle.md`);
//! 4. applies the rod forces at the knuckle joints and carries the arm-end forces, with their
//!    moments about H₁ and H₂, to the frame markers, so that the wrenches on the four markers sum
//!    to zero (errata item 9).
//!
//! Partials ([`Provided::ALL`]): the position columns are the exact total derivatives of the
//! elastic wrenches (implicit function theorem, [`super::linkage`]); the viscous forces'
//! dependence on the positions at fixed velocities is left out (like eq. 57 leaves out the change
//! of the partial velocities; it vanishes at rest). The velocity columns are exact:
//! ∂w/∂ż = Σ_i d_i n_i ∂u̇_i/∂ż.
//!
//! `partials()` receives no algebraic variables, so it solves the balance again from
//! [`Linkage::start`] to the same tolerance; the linkage has one solution near the rigid-column
//! configuration, so both solves meet to round-off (tested).

use nalgebra::Vector2;
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, OutputInfo, Provided,
};

use super::linkage::{Linkage, NZ, Solution};
use super::{INPUTS, OUTPUTS, TimeTable};

/// The quasi-static dual-axle steering element (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct DualAxleSteering {
    /// The linkage.
    pub linkage: Linkage,
    /// δ_W(t), rad, from the `steering_wheel_angle_deg` table (none: δ_W = 0).
    pub wheel: Option<TimeTable>,
}

impl DualAxleSteering {
    /// The steering-wheel angle δ_W (rad) and its rate (rad/s) at this evaluation: the one place
    /// the input comes from — the `steering_wheel_angle_deg` table if given, else the input
    /// slots `steering_wheel_angle` and `steering_wheel_rate` (0 where unmapped).
    pub fn steering_wheel(&self, x: &ElementInput) -> (f64, f64) {
        match &self.wheel {
            Some(w) => w.at(x.t),
            None => (
                x.inputs.first().copied().unwrap_or(0.0),
                x.inputs.get(1).copied().unwrap_or(0.0),
            ),
        }
    }

    /// Solves the balance from `warm` (if given), falling back to the start values.
    #[inline(always)]
    pub fn solve(&self, x: &ElementInput, delta_w: f64, warm: Option<Vector2<f64>>) -> Solution {
        if let Some(y) = warm {
            let sol = self.linkage.solve(x.markers, delta_w, y);
            if sol.converged {
                return sol;
            }
        }
        let start = self.linkage.start(x.markers, delta_w);
        self.linkage.solve(x.markers, delta_w, start)
    }

    /// Elastic and viscous rod forces at a solution, and the rod rates.
    #[inline(always)]
    fn rod_forces(&self, x: &ElementInput, sol: &Solution, delta_w_dot: f64) -> [f64; 3] {
        let st = &sol.state;
        let mut f = [st.rods[0].force, st.rods[1].force, st.rods[2].force];
        if self.linkage.rods.iter().any(|r| r.damping > 0.0) {
            let rates = Linkage::rod_rates(st, x.markers, delta_w_dot);
            for ((fi, rod), rate) in f.iter_mut().zip(&self.linkage.rods).zip(rates) {
                *fi += rod.damping * rate;
            }
        }
        f
    }
}

impl ElementLaw for DualAxleSteering {
    fn kind(&self) -> &str {
        super::KIND
    }
    /// The own time table (if any) is read at `x.t`; a constant table (the bump crossing's
    /// held wheel) has no time derivative, so the linearisation need not difference over t.
    fn reads_time(&self) -> bool {
        self.wheel.as_ref().is_some_and(|w| !w.is_constant())
    }

    fn n_markers(&self) -> usize {
        4
    }

    /// (φ_S, δ_L, solved flag).
    fn n_algebraic(&self) -> usize {
        3
    }

    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }

    fn inputs(&self) -> &[OutputInfo] {
        INPUTS
    }

    /// On CPUs with AVX in a copy compiled for it ([`DualAxleSteering::evaluate_avx`], the
    /// same results).
    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = sprung_mbs::m3::Avx2::detect() {
            // SAFETY: the token exists only on CPUs with AVX2 and FMA, hence with AVX.
            return unsafe { self.evaluate_avx(token, x, out) };
        }
        self.evaluate_here(x, out);
    }

    /// At a cold-started solution (`partials` has no warm start).
    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        let (delta_w, _) = self.steering_wheel(x);
        let sol = self.solve(x, delta_w, None);
        self.partials_at(&sol, jac)
    }

    /// One warm-started torque balance for the forces and the partials (`evaluate` then
    /// `partials` solved it twice, the second time from a cold start: ≈ 4 % of the truck's
    /// step). The partials are taken at the evaluation's own solution; the separate calls'
    /// solutions agree to the Newton tolerance, so both give the same partials to that
    /// level (`tests/steering_partials.rs`).
    fn evaluate_with_partials(
        &self,
        x: &ElementInput,
        out: &mut ElementOutput,
        jac: &mut ElementJacobian,
    ) -> Provided {
        let wheel = self.steering_wheel(x);
        let warm =
            (out.algebraic[2] == 1.0).then(|| Vector2::new(out.algebraic[0], out.algebraic[1]));
        let sol = self.solve(x, wheel.0, warm);
        self.write_solution(x, &sol, wheel, out);
        self.partials_at(&sol, jac)
    }
}

impl DualAxleSteering {
    /// [`ElementLaw::evaluate`]: the warm-started solve and the forces at its solution.
    #[inline(always)]
    fn evaluate_here(&self, x: &ElementInput, out: &mut ElementOutput) {
        let wheel = self.steering_wheel(x);
        let warm =
            (out.algebraic[2] == 1.0).then(|| Vector2::new(out.algebraic[0], out.algebraic[1]));
        let sol = self.solve(x, wheel.0, warm);
        self.write_solution(x, &sol, wheel, out);
    }

    /// [`Self::evaluate_here`] compiled for AVX, as the tire element's evaluation is
    /// (`crate::tire_element`): the Newton solve's linkage states, the rod rates and the wrench
    /// are inlined into it and run with AVX's three-operand instructions; the same operations
    /// (no fused multiply-adds), so the same results bit for bit.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn evaluate_avx(
        &self,
        _token: sprung_mbs::m3::Avx2,
        x: &ElementInput,
        out: &mut ElementOutput,
    ) {
        self.evaluate_here(x, out)
    }

    /// Forces, algebraic variables (the warm start) and outputs at the solution `sol`.
    #[inline(always)]
    fn write_solution(
        &self,
        x: &ElementInput,
        sol: &Solution,
        (delta_w, delta_w_dot): (f64, f64),
        out: &mut ElementOutput,
    ) {
        let st = &sol.state;
        let f = self.rod_forces(x, sol, delta_w_dot);
        let w = Linkage::wrench(st, &f);
        for k in 0..4 {
            out.force[k] = w.fixed_rows::<3>(6 * k).into_owned();
            out.torque[k] = w.fixed_rows::<3>(6 * k + 3).into_owned();
        }
        if sol.converged {
            out.algebraic[0] = st.y[0];
            out.algebraic[1] = st.y[1];
            out.algebraic[2] = 1.0;
        } else {
            // Start afresh next time.
            out.algebraic[2] = 0.0;
        }
        out.outputs.copy_from_slice(&[
            delta_w,
            st.delta_s,
            st.theta[0],
            st.theta[1],
            st.y[0],
            self.linkage.column_stiffness * st.y[0],
            f[0],
            f[1],
            f[2],
            f64::from(sol.iterations),
            if sol.converged { 1.0 } else { 0.0 },
        ]);
    }

    /// The analytic partials (module docs) at the solution `sol`.
    fn partials_at(&self, sol: &Solution, jac: &mut ElementJacobian) -> Provided {
        let st = &sol.state;
        let dv = self.linkage.derivs(st);
        let i_s = st.trans.ratio;
        // dw/dz = W_z + W_θ D dy/dz (D = diag(−i_S, 1)).
        let mut dth = dv.dy_dz;
        dth.row_mut(0).scale_mut(-i_s);
        // Straight into the Jacobian's storage (a 24 × 24 sum and an entry-by-entry copy
        // before: ≈ 20 k instructions per linearisation of the truck).
        let mut position = jac.position.fixed_view_mut::<NZ, NZ>(0, 0);
        position.copy_from(&Linkage::w_z(st, &dv));
        position.gemm(1.0, &dv.w_th, &dth, 1.0);
        if self.linkage.rods.iter().any(|r| r.damping > 0.0) {
            let b = Linkage::rod_rate_partials(st, &dv);
            let mut velocity = jac.velocity.fixed_view_mut::<NZ, NZ>(0, 0);
            for (i, rod) in self.linkage.rods.iter().enumerate() {
                if rod.damping == 0.0 {
                    continue;
                }
                // n_i = −(∂r_i/∂z)ᵀ e_i: the wrench per unit rod force; d_i n_i ∂u̇_i/∂ż.
                let n = -(dv.dr_dz[i].transpose() * st.rods[i].e);
                velocity.ger(rod.damping, &n, &b[i].transpose(), 1.0);
            }
        }
        Provided::ALL
    }
}
