//! Explicit Runge–Kutta methods (document 001, eqs. 16–21): ode1–ode5, ode8 with a fixed step,
//! ode23 (Bogacki–Shampine 3(2)) and ode45 (Dormand–Prince 5(4)) with embedded error estimate.
//! Dense output: Shampine's fourth-order continuous extension for Dormand–Prince 5(4) (as in
//! DOPRI5), the cubic Hermite interpolant of the step end values and slopes otherwise.

use super::OdeError;
use super::core::{Accepted, Ctx, embedded_error, hermite};
use super::onestep::{Attempt, OneStep, Step};
use super::tableau::ExplicitTableau;

/// Explicit Runge–Kutta stepper with preallocated stage storage.
pub(crate) struct Erk {
    name: &'static str,
    t: ExplicitTableau,
    k: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
}

impl Erk {
    pub fn new(name: &'static str, t: ExplicitTableau, n: usize) -> Self {
        let s = t.stages();
        Self {
            name,
            t,
            k: vec![vec![0.0; n]; s],
            ytmp: vec![0.0; n],
        }
    }
}

impl OneStep for Erk {
    fn order(&self) -> usize {
        self.t.order
    }
    fn error_order(&self) -> Option<usize> {
        self.t
            .bhat
            .as_ref()
            .map(|_| self.t.order.min(self.t.est_order))
    }
    fn name(&self) -> &'static str {
        self.name
    }

    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError> {
        let Step {
            t,
            h,
            y0,
            f0,
            y1,
            f1,
            adaptive,
        } = step;
        let n = ctx.n;
        let s = self.t.stages();
        self.k[0].copy_from_slice(f0);
        let last_fsal = self.t.fsal;
        for i in 1..s {
            let row = &self.t.a[i];
            for c in 0..n {
                let mut acc = 0.0;
                for (j, aij) in row.iter().enumerate() {
                    if *aij != 0.0 {
                        acc += aij * self.k[j][c];
                    }
                }
                self.ytmp[c] = y0[c] + h * acc;
            }
            let (done, rest) = self.k.split_at_mut(i);
            let _ = done;
            ctx.f(t + self.t.c[i] * h, &self.ytmp, &mut rest[0]);
        }
        if last_fsal {
            // the last stage was evaluated at y1 = ytmp
            y1.copy_from_slice(&self.ytmp);
            f1.copy_from_slice(&self.k[s - 1]);
        } else {
            for c in 0..n {
                let mut acc = 0.0;
                for i in 0..s {
                    acc += self.t.b[i] * self.k[i][c];
                }
                y1[c] = y0[c] + h * acc;
            }
        }
        let mut err = 0.0;
        if adaptive && let Some(bh) = &self.t.bhat {
            // reuse ytmp for the error vector
            embedded_error(&mut self.ytmp, &self.t.b, bh, &self.k, h);
            err = ctx.err_norm(&self.ytmp, y0, y1);
        }
        Ok(Attempt::Done {
            err,
            fsal: last_fsal,
        })
    }

    fn interpolate(&self, step: &Accepted<'_>, t: f64, out: &mut [f64]) {
        if self.t.stages() != 7 || !self.t.fsal {
            hermite(step, t, out);
            return;
        }
        let Accepted {
            t0, h, y0, y1, f1, ..
        } = *step;
        // Dormand–Prince continuous extension (Shampine 1986, as used in DOPRI5)
        const D: [f64; 7] = [
            -12715105075.0 / 11282082432.0,
            0.0,
            87487479700.0 / 32700410799.0,
            -10690763975.0 / 1880347072.0,
            701980252875.0 / 199316789632.0,
            -1453857185.0 / 822651844.0,
            69997945.0 / 29380423.0,
        ];
        let th = (t - t0) / h;
        let th1 = 1.0 - th;
        for c in 0..out.len() {
            let r2 = y1[c] - y0[c];
            let r3 = h * self.k[0][c] - r2;
            let r4 = r2 - h * f1[c] - r3;
            let r5: f64 = h * (0..7).map(|i| D[i] * self.k[i][c]).sum::<f64>();
            out[c] = y0[c] + th * (r2 + th1 * (r3 + th * (r4 + th1 * r5)));
        }
    }
}
