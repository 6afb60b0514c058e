//! Rosenbrock (linear-implicit Runge–Kutta) methods on first-order ODEs: LSRT2, linear-implicit
//! Euler, ROS2, ROS3P, ROS34PW2, RODAS3, RODAS4, Rodas5P in the transformed form of
//! [`super::tableau`], and MATLAB's ode23s (modified Rosenbrock 2(3), Shampine & Reichelt;
//! document 001, "ode23s"). All stages share one LU of `I/(γh) - J` per step; the Jacobian and
//! `∂f/∂t` are evaluated once per step point and reused when a step is rejected.

use super::OdeError;
use super::core::{Ctx, Factored, IterationMatrix, embedded_error};
use super::onestep::{Attempt, OneStep, Step};
use super::tableau::RosenbrockTableau;

/// Jacobian, `∂f/∂t` and the LU of the iteration matrix shared by all stages, evaluated once per
/// step point and reused when a step is rejected.
struct RosenbrockMatrix {
    w: IterationMatrix,
    ft: Vec<f64>,
}

impl RosenbrockMatrix {
    fn new(n: usize) -> Self {
        Self {
            w: IterationMatrix::new(n),
            ft: vec![0.0; n],
        }
    }

    /// Forgets Jacobian and LU (new step point or restart).
    fn invalidate(&mut self) {
        self.w.invalidate();
    }

    /// Jacobian and `∂f/∂t` at `(t, y0)` if not yet evaluated, LU of `alpha·I - beta·J` for step
    /// `h`. `Ok(false)`: singular in adaptive mode (retry with a smaller step); in fixed-step mode
    /// a singular matrix is an error.
    fn prepare(
        &mut self,
        ctx: &mut Ctx,
        t: f64,
        h: f64,
        y0: &[f64],
        f0: &[f64],
        alpha: f64,
        beta: f64,
        adaptive: bool,
    ) -> Result<bool, OdeError> {
        if self.w.refresh_jacobian(ctx, t, y0, f0) {
            ctx.dfdt(t, y0, f0, &mut self.ft);
        }
        match self.w.factor(&mut ctx.stats, h, alpha, beta) {
            Factored::Singular if !adaptive => Err(OdeError::Singular { t, h }),
            Factored::Singular => Ok(false),
            Factored::Kept | Factored::New => Ok(true),
        }
    }
}

/// Generic Rosenbrock stepper (transformed form).
pub(crate) struct Rosenbrock {
    name: &'static str,
    t: RosenbrockTableau,
    m: RosenbrockMatrix,
    u: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
    fbuf: Vec<f64>,
    sbuf: Vec<f64>,
    mbuf: Vec<f64>,
}

impl Rosenbrock {
    pub fn new(name: &'static str, t: RosenbrockTableau, n: usize) -> Self {
        let s = t.stages();
        Self {
            name,
            t,
            m: RosenbrockMatrix::new(n),
            u: vec![vec![0.0; n]; s],
            ytmp: vec![0.0; n],
            fbuf: vec![0.0; n],
            sbuf: vec![0.0; n],
            mbuf: vec![0.0; n],
        }
    }
}

impl OneStep for Rosenbrock {
    fn order(&self) -> usize {
        self.t.order
    }
    fn error_order(&self) -> Option<usize> {
        self.t.mhat.as_ref().map(|_| self.t.est_order)
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn restart(&mut self) {
        self.m.invalidate();
    }
    fn accepted(&mut self, _t: f64, _h: f64, _y0: &[f64], _y1: &[f64]) {
        self.m.invalidate();
    }
    fn predictive_default(&self) -> bool {
        true
    }

    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError> {
        let Step {
            t,
            h,
            y0,
            f0,
            y1,
            adaptive,
            ..
        } = step;
        let n = ctx.n;
        let s = self.t.stages();
        let mass = ctx.mass_kind().is_some();
        let alpha = 1.0 / (self.t.gamma * h);
        if !self.m.prepare(ctx, t, h, y0, f0, alpha, 1.0, adaptive)? {
            return Ok(Attempt::Failed { factor: 0.25 });
        }
        for i in 0..s {
            if i == 0 {
                self.fbuf.copy_from_slice(f0);
            } else {
                for c in 0..n {
                    let mut acc = y0[c];
                    for j in 0..i {
                        let a = self.t.a[i][j];
                        if a != 0.0 {
                            acc += a * self.u[j][c];
                        }
                    }
                    self.ytmp[c] = acc;
                }
                ctx.f(t + self.t.c[i] * h, &self.ytmp, &mut self.fbuf);
            }
            let hd = h * self.t.d[i];
            let (prev, cur) = self.u.split_at_mut(i);
            let ui = &mut cur[0];
            // M Σ_j (c_ij/h) u_j (Hairer & Wanner II, VI.4 (4.8) with constant M)
            for c in 0..n {
                let mut acc = 0.0;
                for (j, pj) in prev.iter().enumerate() {
                    let cij = self.t.cmat[i][j];
                    if cij != 0.0 {
                        acc += cij / h * pj[c];
                    }
                }
                self.sbuf[c] = acc;
            }
            if mass {
                ctx.mass_mul_last(&self.sbuf, &mut self.mbuf);
            } else {
                self.mbuf.copy_from_slice(&self.sbuf);
            }
            for c in 0..n {
                ui[c] = self.fbuf[c] + hd * self.m.ft[c] + self.mbuf[c];
            }
            self.m.w.lu.solve(ui, &mut ctx.stats);
        }
        for c in 0..n {
            let mut acc = y0[c];
            for i in 0..s {
                acc += self.t.m[i] * self.u[i][c];
            }
            y1[c] = acc;
        }
        let mut err = 0.0;
        if adaptive && let Some(mh) = &self.t.mhat {
            embedded_error(&mut self.ytmp, &self.t.m, mh, &self.u, 1.0);
            err = ctx.err_norm(&self.ytmp, y0, y1);
        }
        Ok(Attempt::Done { err, fsal: false })
    }
}

/// MATLAB's ode23s: modified Rosenbrock 2(3) with `W = I - h d J`, `d = 1/(2 + √2)`.
pub(crate) struct Ode23s {
    m: RosenbrockMatrix,
    k1: Vec<f64>,
    k2: Vec<f64>,
    k3: Vec<f64>,
    f1: Vec<f64>,
    ytmp: Vec<f64>,
    mk1: Vec<f64>,
    mk2: Vec<f64>,
}

impl Ode23s {
    pub fn new(n: usize) -> Self {
        Self {
            m: RosenbrockMatrix::new(n),
            k1: vec![0.0; n],
            k2: vec![0.0; n],
            k3: vec![0.0; n],
            f1: vec![0.0; n],
            ytmp: vec![0.0; n],
            mk1: vec![0.0; n],
            mk2: vec![0.0; n],
        }
    }
}

impl OneStep for Ode23s {
    fn order(&self) -> usize {
        2
    }
    fn error_order(&self) -> Option<usize> {
        Some(2)
    }
    fn name(&self) -> &'static str {
        "ode23s"
    }
    fn restart(&mut self) {
        self.m.invalidate();
    }
    fn accepted(&mut self, _t: f64, _h: f64, _y0: &[f64], _y1: &[f64]) {
        self.m.invalidate();
    }

    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError> {
        let Step {
            t,
            h,
            y0,
            f0,
            y1,
            f1: f2,
            adaptive,
        } = step;
        let n = ctx.n;
        let d = 1.0 / (2.0 + std::f64::consts::SQRT_2);
        let e32 = 6.0 + std::f64::consts::SQRT_2;
        if !self.m.prepare(ctx, t, h, y0, f0, 1.0, h * d, adaptive)? {
            return Ok(Attempt::Failed { factor: 0.25 });
        }
        let hd = h * d;
        for c in 0..n {
            self.k1[c] = f0[c] + hd * self.m.ft[c];
        }
        self.m.w.lu.solve(&mut self.k1, &mut ctx.stats);
        for c in 0..n {
            self.ytmp[c] = y0[c] + 0.5 * h * self.k1[c];
        }
        ctx.f(t + 0.5 * h, &self.ytmp, &mut self.f1);
        // with a constant mass matrix M: W = M - h d J and M k in place of k (MATLAB's ode23s)
        ctx.mass_mul_last(&self.k1, &mut self.mk1);
        for c in 0..n {
            self.k2[c] = self.f1[c] - self.mk1[c];
        }
        self.m.w.lu.solve(&mut self.k2, &mut ctx.stats);
        for c in 0..n {
            self.k2[c] += self.k1[c];
            y1[c] = y0[c] + h * self.k2[c];
        }
        ctx.f(t + h, y1, f2);
        let mut err = 0.0;
        if adaptive {
            ctx.mass_mul_last(&self.k2, &mut self.mk2);
            for c in 0..n {
                self.k3[c] = f2[c] - e32 * (self.mk2[c] - self.f1[c]) - 2.0 * (self.mk1[c] - f0[c])
                    + hd * self.m.ft[c];
            }
            self.m.w.lu.solve(&mut self.k3, &mut ctx.stats);
            for c in 0..n {
                self.ytmp[c] = h / 6.0 * (self.k1[c] - 2.0 * self.k2[c] + self.k3[c]);
            }
            err = ctx.err_norm(&self.ytmp, y0, y1);
        }
        Ok(Attempt::Done { err, fsal: true })
    }
}
