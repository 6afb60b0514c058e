//! ode14x: implicit Euler (document 001, eq. 13) with a fixed number of Newton iterations and
//! extrapolation (document 001, Abbildung 3), fixed step.
//!
//! A major step `H` is computed `p` times (`p` = extrapolation order 1..=4) with `n_j = j`
//! implicit-Euler sub-steps (the harmonic sequence 1, 2, 3, 4, as in SEULEX; MathWorks does not
//! publish its sequence). Each sub-step solves `y_{i+1} = y_i + h f(t_{i+1}, y_{i+1})` with
//! `newton_iters` simplified Newton iterations from `y_i` with `W = I - h J(t0, y0)` (one
//! iteration = linear-implicit Euler). The results are combined by Aitken–Neville extrapolation
//! for an error expansion in powers of `h`:
//! `T_{j,k+1} = T_{j,k} + (T_{j,k} - T_{j-1,k}) / (n_j / n_{j-k} - 1)`, giving order `p`.

use super::OdeError;
use super::core::{Ctx, Lu};
use super::onestep::{Attempt, OneStep, Step};
use faer::Mat;

pub(crate) struct Ode14x {
    iters: usize,
    order: usize,
    jac: Mat<f64>,
    lus: Vec<Lu>,
    table: Vec<Vec<Vec<f64>>>,
    ycur: Vec<f64>,
    ynext: Vec<f64>,
    fbuf: Vec<f64>,
}

impl Ode14x {
    pub fn new(n: usize, iters: usize, order: usize) -> Result<Self, OdeError> {
        if iters == 0 || !(1..=4).contains(&order) {
            return Err(OdeError::InvalidInput(format!(
                "ode14x needs newton_iters >= 1 and extrapolation order 1..=4, got {iters} and {order}"
            )));
        }
        Ok(Self {
            iters,
            order,
            jac: Mat::zeros(n, n),
            lus: (0..order).map(|_| Lu::new(n)).collect(),
            table: vec![vec![vec![0.0; n]; order]; order],
            ycur: vec![0.0; n],
            ynext: vec![0.0; n],
            fbuf: vec![0.0; n],
        })
    }
}

impl OneStep for Ode14x {
    fn order(&self) -> usize {
        self.order
    }
    fn error_order(&self) -> Option<usize> {
        None
    }
    fn name(&self) -> &'static str {
        "ode14x"
    }

    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError> {
        let Step {
            t, h, y0, f0, y1, ..
        } = step;
        let n = ctx.n;
        ctx.jacobian(t, y0, f0, self.jac.as_mut());
        for j in 1..=self.order {
            let hj = h / j as f64;
            let lu = &mut self.lus[j - 1];
            if !lu.factor_shifted(1.0, hj, &self.jac, &mut ctx.stats) {
                return Err(OdeError::Singular { t, h: hj });
            }
            self.ycur.copy_from_slice(y0);
            for i in 0..j {
                let tn = t + (i + 1) as f64 * hj;
                self.ynext.copy_from_slice(&self.ycur);
                for _ in 0..self.iters {
                    ctx.f(tn, &self.ynext, &mut self.fbuf);
                    for c in 0..n {
                        self.fbuf[c] = self.ycur[c] + hj * self.fbuf[c] - self.ynext[c];
                    }
                    lu.solve(&mut self.fbuf, &mut ctx.stats);
                    for c in 0..n {
                        self.ynext[c] += self.fbuf[c];
                    }
                }
                std::mem::swap(&mut self.ycur, &mut self.ynext);
            }
            // Aitken–Neville: T[j][0] = result with j sub-steps,
            // T[j][k] = T[j][k-1] + (T[j][k-1] - T[j-1][k-1]) / (n_j / n_{j-k} - 1)
            let r = j - 1;
            self.table[r][0].copy_from_slice(&self.ycur);
            for k in 1..=r {
                let denom = j as f64 / (j - k) as f64 - 1.0;
                let (above, row) = self.table.split_at_mut(r);
                let prev = &above[r - 1][k - 1];
                let row = &mut row[0];
                let (lo, hi) = row.split_at_mut(k);
                let cur = &lo[k - 1];
                for c in 0..n {
                    hi[0][c] = cur[c] + (cur[c] - prev[c]) / denom;
                }
            }
        }
        y1.copy_from_slice(&self.table[self.order - 1][self.order - 1]);
        Ok(Attempt::Done {
            err: 0.0,
            fsal: false,
        })
    }
}
