//! Driver for one-step methods: fixed step (constant grid, shortened before breakpoints) and
//! adaptive step with the error test of document 001 eq. 14, step rejection, automatic
//! initial step and dense output.
//!
//! Step-size update after an attempt with scaled error `err` and controller order `q`
//! (the error estimate behaves like `h^(q+1)`):
//! `h_new = h · min(fac_max, max(0.2, 0.9 · err^(-1/(q+1))))`, with `fac_max = 5`, and 1 right
//! after a rejection (standard controller). The predictive controller of Gustafsson (Hairer &
//! Wanner II, IV.8, eq. (8.21); RADAU5 and RODAS) takes, after an accepted step, the smaller of
//! that factor and `s · (h_n/h_{n-1}) · (err_{n-1}/err_n²)^(1/(q+1))` with `err_{n-1} ≥ 0.01`
//! (history reset at every breakpoint); it is the default for radau5 and the Rosenbrock family.
//!
//! With a mass matrix `f` is not `y'`: the automatic initial step uses the consistent slope and
//! the default dense output is linear between the step points (methods with their own
//! interpolant — radau5 — keep it). After a projection a method with algebraically recovered
//! slopes may correct `f1` itself (`OneStep::correct_slope`) instead of re-evaluating it.

use super::core::{Accepted, Ctx, Recorder, Setup, all_finite, hermite, min_step, step_factor};
use super::{Method, OdeError};

/// Outcome of one step attempt.
pub(crate) enum Attempt {
    /// The step was computed; `err` is the scaled error norm (0 without estimate).
    Done {
        /// Scaled error norm (≤ 1 means acceptable).
        err: f64,
        /// `f1` already holds `f(t + h, y1)`.
        fsal: bool,
    },
    /// The step failed (Newton divergence, singular matrix): retry with `h · factor`.
    Failed {
        /// Step reduction factor.
        factor: f64,
    },
}

/// One step attempt of size `h` from `(t, y0)` with `f0 = f(t, y0)`: the method writes `y1`
/// (and may write `f1 = f(t + h, y1)`, see [`Attempt::Done`]); `adaptive` asks for the error
/// estimate.
pub(crate) struct Step<'a> {
    pub t: f64,
    pub h: f64,
    pub y0: &'a [f64],
    pub f0: &'a [f64],
    pub y1: &'a mut [f64],
    pub f1: &'a mut [f64],
    pub adaptive: bool,
}

/// A one-step method.
pub(crate) trait OneStep {
    /// Order of the propagated solution (used for the initial step).
    fn order(&self) -> usize;
    /// Order `q` of the error estimate's leading term `h^(q+1)`; `None` = fixed step only.
    fn error_order(&self) -> Option<usize>;
    /// Name for error messages.
    fn name(&self) -> &'static str;
    /// Start or restart at a breakpoint: discard history.
    fn restart(&mut self) {}
    /// Attempts one step (see [`Step`]).
    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError>;
    /// Notification: the last attempt was accepted (`y1` after projection).
    fn accepted(&mut self, t: f64, h: f64, y0: &[f64], y1: &[f64]) {
        let _ = (t, h, y0, y1);
    }
    /// Notification: the last attempt was rejected.
    fn rejected(&mut self) {}
    /// The projection hook moved the accepted `y1` to `yp`; a method whose `f1` is not
    /// `f(t1, y1)` but an algebraically recovered slope may correct `f1` itself and return true.
    /// Default false: the driver re-evaluates `f(t1, yp)`.
    fn correct_slope(&mut self, y1: &[f64], yp: &[f64], f1: &mut [f64]) -> bool {
        let _ = (y1, yp, f1);
        false
    }
    /// Step factor from the error; default is the standard controller.
    fn step_factor(&self, err: f64, q: usize, after_reject: bool) -> f64 {
        let fmax = if after_reject { 1.0 } else { 5.0 };
        step_factor(err, q as f64 + 1.0, self.safety(), 0.2, fmax)
    }
    /// Safety factor of the controllers (default 0.9).
    fn safety(&self) -> f64 {
        0.9
    }
    /// Final adjustment of an accepted step's factor (e.g. keep `h` to reuse an LU).
    fn hold(&self, fac: f64) -> f64 {
        fac
    }
    /// True when [`super::StepController::Auto`] means the predictive controller.
    fn predictive_default(&self) -> bool {
        false
    }
    /// Dense output inside the last accepted step; default cubic Hermite.
    fn interpolate(&self, step: &Accepted<'_>, t: f64, out: &mut [f64]) {
        hermite(step, t, out);
    }
}

/// Builds the stepper of a one-step method.
pub(crate) fn make(method: Method, n: usize) -> Result<Box<dyn OneStep>, OdeError> {
    use super::explicit::Erk;
    use super::rosenbrock::{Ode23s, Rosenbrock};
    use super::tableau as tb;
    Ok(match method {
        Method::Ode1 => Box::new(Erk::new("ode1", tb::euler(), n)),
        Method::Ode2 => Box::new(Erk::new("ode2", tb::heun(), n)),
        Method::Ode3 => Box::new(Erk::new("ode3", tb::bs3().without_estimate(), n)),
        Method::Ode4 => Box::new(Erk::new("ode4", tb::rk4(), n)),
        Method::Ode5 => Box::new(Erk::new("ode5", tb::dopri5().without_estimate(), n)),
        Method::Ode8 => Box::new(Erk::new("ode8", tb::dp87().without_estimate(), n)),
        Method::Ode45 => Box::new(Erk::new("ode45", tb::dopri5(), n)),
        Method::Ode23 => Box::new(Erk::new("ode23", tb::bs3(), n)),
        Method::Ode14x {
            newton_iters,
            extrapolation_order,
        } => Box::new(super::extrap::Ode14x::new(
            n,
            newton_iters,
            extrapolation_order,
        )?),
        Method::Ode23s => Box::new(Ode23s::new(n)),
        Method::Ode23t => Box::new(super::trbdf2::Trap::new(n)),
        Method::Ode23tb => Box::new(super::trbdf2::TrBdf2::new(n)),
        Method::Lsrt2 => Box::new(Rosenbrock::new("lsrt2", tb::lsrt2(), n)),
        Method::Lie => Box::new(Rosenbrock::new("lie", tb::lin_impl_euler(), n)),
        Method::Ros2 => Box::new(Rosenbrock::new("ros2", tb::ros2(), n)),
        Method::Ros3p => Box::new(Rosenbrock::new("ros3p", tb::ros3p(), n)),
        Method::Ros34pw2 => Box::new(Rosenbrock::new("ros34pw2", tb::ros34pw2(), n)),
        Method::Rodas3 => Box::new(Rosenbrock::new("rodas3", tb::rodas3(), n)),
        Method::Rodas4 => Box::new(Rosenbrock::new("rodas4", tb::rodas4(), n)),
        Method::Rodas5p => Box::new(Rosenbrock::new("rodas5p", tb::rodas5p(), n)),
        Method::Radau5 => Box::new(super::radau::Radau5::new(n)),
        Method::Ode15s { .. } | Method::Ode113 => {
            return Err(OdeError::InvalidInput(
                "internal: multistep method given to the one-step driver".into(),
            ));
        }
    })
}

/// Runs a one-step method over all pieces; returns the final time (`y` holds the final state).
pub(crate) fn run(
    m: &mut dyn OneStep,
    ctx: &mut Ctx,
    setup: &Setup,
    rec: &mut Recorder,
    t0: f64,
    y: &mut [f64],
) -> Result<f64, OdeError> {
    let n = ctx.n;
    let fixed = setup.step;
    let q = match (fixed, m.error_order()) {
        (Some(_), _) => None,
        (None, Some(q)) => Some(q),
        (None, None) => {
            return Err(OdeError::InvalidInput(format!(
                "{} is a fixed-step method: set options.step (e.g. (t_end - t0) / 1000)",
                m.name()
            )));
        }
    };
    let mut f0 = vec![0.0; n];
    let mut y1 = vec![0.0; n];
    let mut f1 = vec![0.0; n];
    let mut yproj = vec![0.0; n];
    // with a mass matrix f is not y': dense output from the secant (linear) unless the method
    // has its own interpolant
    let mass = ctx.mass_kind().is_some();
    let mut secant = vec![0.0; if mass { n } else { 0 }];
    let predictive = ctx.predictive.unwrap_or_else(|| m.predictive_default());
    // Gustafsson controller memory: (h, max(err, 0.01)) of the last accepted step
    let mut gus: Option<(f64, f64)>;
    if rec.start(t0, y) {
        return Ok(t0);
    }
    let mut t = t0;
    let mut h_prop = 0.0;
    for (piece, &b) in setup.stops.iter().enumerate() {
        m.restart();
        ctx.start_piece(b, t, y, &mut f0)?;
        if piece == 0 {
            h_prop = match (fixed, setup.h_init) {
                (Some(h), _) => h,
                (None, Some(h)) => h.min(setup.hmax),
                (None, None) => {
                    let slope = ctx.yp0.clone().unwrap_or_else(|| f0.clone());
                    ctx.initial_step(t, y, &slope, m.order(), setup.hmax.min(b - t))
                }
            };
        }
        let mut after_reject = false;
        let mut nonfinite = 0usize;
        gus = None;
        // Fixed-step grid: t = a + k h within the piece.
        let a = t;
        let mut k = 0usize;
        while t < b {
            ctx.count_attempt(setup.max_steps, t)?;
            let (h, t_new) = if let Some(hf) = fixed {
                let tn = a + (k + 1) as f64 * hf;
                if tn >= b - 1e-10 * hf {
                    (b - t, b)
                } else {
                    (tn - t, tn)
                }
            } else {
                let h = h_prop.min(setup.hmax);
                if t + 1.05 * h >= b {
                    (b - t, b)
                } else {
                    (h, t + h)
                }
            };
            let hmin = min_step(t);
            if h <= hmin {
                return Err(OdeError::StepSizeUnderflow { t, h });
            }
            let step = Step {
                t,
                h,
                y0: y,
                f0: &f0,
                y1: &mut y1,
                f1: &mut f1,
                adaptive: q.is_some(),
            };
            let res = m.attempt(ctx, step)?;
            let (err, fsal) = match res {
                Attempt::Failed { factor } => {
                    if fixed.is_some() {
                        return Err(OdeError::NewtonFailure { t, h });
                    }
                    ctx.stats.rejected += 1;
                    m.rejected();
                    after_reject = true;
                    h_prop = h * factor;
                    continue;
                }
                Attempt::Done { err, fsal } => (err, fsal),
            };
            if fixed.is_some() {
                if !all_finite(&y1) {
                    return Err(OdeError::NonFinite { t: t_new });
                }
            } else {
                let qq = q.unwrap_or(1);
                if !err.is_finite() || !all_finite(&y1) {
                    nonfinite += 1;
                    if nonfinite > 20 {
                        return Err(OdeError::NonFinite { t: t_new });
                    }
                    ctx.stats.rejected += 1;
                    m.rejected();
                    after_reject = true;
                    h_prop = 0.25 * h;
                    continue;
                }
                nonfinite = 0;
                if err > 1.0 {
                    ctx.stats.rejected += 1;
                    m.rejected();
                    h_prop = h * m.step_factor(err, qq, true).min(0.9);
                    after_reject = true;
                    continue;
                }
                let mut fac = m.step_factor(err, qq, after_reject);
                if predictive {
                    // Gustafsson (Hairer & Wanner II, IV.8 (8.21); RADAU5 / RODAS)
                    if let Some((hacc, erracc)) = gus {
                        let fg = if err == 0.0 {
                            f64::INFINITY
                        } else {
                            m.safety()
                                * (h / hacc)
                                * (erracc / (err * err)).powf(1.0 / (qq as f64 + 1.0))
                        };
                        fac = fac.min(fg.max(0.2));
                    }
                    gus = Some((h, err.max(1e-2)));
                }
                let fac = m.hold(fac);
                // keep the proposal of a full step when the step was shortened to land
                if t_new < b || h >= h_prop {
                    h_prop = h * fac;
                } else {
                    h_prop = h_prop.max(h * fac);
                }
                after_reject = false;
            }
            // accept
            ctx.stats.steps += 1;
            k += 1;
            yproj.copy_from_slice(&y1);
            ctx.project(&mut yproj);
            let projected = yproj != y1;
            let mut need_f = !fsal;
            if projected {
                need_f |= !(fsal && m.correct_slope(&y1, &yproj, &mut f1));
                y1.copy_from_slice(&yproj);
            }
            if need_f {
                ctx.f(t_new, &y1, &mut f1);
            }
            if !all_finite(&f1) {
                return Err(OdeError::NonFinite { t: t_new });
            }
            m.accepted(t, h, y, &y1);
            {
                if mass {
                    for c in 0..n {
                        secant[c] = (y1[c] - y[c]) / h;
                    }
                }
                let (s0, s1) = if mass { (&secant, &secant) } else { (&f0, &f1) };
                let step = Accepted {
                    t0: t,
                    h,
                    y0: y,
                    f0: s0,
                    y1: &y1,
                    f1: s1,
                };
                let mm = &*m;
                let stop = rec.step(t_new, &y1, &mut |tau, out| mm.interpolate(&step, tau, out));
                y.copy_from_slice(&y1);
                f0.copy_from_slice(&f1);
                t = t_new;
                if stop {
                    return Ok(t);
                }
            }
        }
        t = b;
    }
    Ok(t)
}
