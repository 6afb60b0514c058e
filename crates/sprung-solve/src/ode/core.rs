//! Shared machinery: evaluation context with statistics, dense LU (faer), difference Jacobians,
//! the error norm of document 001 eq. 14 ([`Ctx::err_norm`], with transformed tolerances
//! [`Ctx::err_norm_scaled`]), the asymptotic step-size controller ([`step_factor`]), the
//! Jacobian + LU refresh of the iteration matrix `alpha·I - beta·J` ([`IterationMatrix`]), the
//! automatic initial step, the driver preamble (pieces between breakpoints, attempt counting),
//! output recording and the top-level dispatch of [`super::solve`].

use super::{Control, Method, Observer, OdeError, OdeSystem, Options, Solution, Stats, Tolerance};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::{factor, solve as lusolve};
use faer::perm::PermRef;
use faer::{Mat, MatMut, Par};

/// Evaluation context: the system, counters, tolerances and the current piece end.
pub(crate) struct Ctx<'s> {
    sys: &'s mut dyn OdeSystem,
    /// Dimension.
    pub n: usize,
    /// Work counters.
    pub stats: Stats,
    /// End of the current piece: `f` is evaluated at its left limit there.
    pub t_hi: f64,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance per component.
    pub atol: Vec<f64>,
    /// Step attempts (accepted + rejected) over all pieces.
    attempts: usize,
    ytmp: Vec<f64>,
    ftmp: Vec<f64>,
}

impl<'s> Ctx<'s> {
    pub fn new(sys: &'s mut dyn OdeSystem, rtol: f64, atol: Vec<f64>, t_hi: f64) -> Self {
        let n = sys.dim();
        Self {
            sys,
            n,
            stats: Stats::default(),
            t_hi,
            rtol,
            atol,
            attempts: 0,
            ytmp: vec![0.0; n],
            ftmp: vec![0.0; n],
        }
    }

    #[inline]
    fn clamp_t(&self, t: f64) -> f64 {
        if t >= self.t_hi {
            self.t_hi.next_down()
        } else {
            t
        }
    }

    /// Right-hand side `dy = f(t, y)` (left limit at the piece end).
    pub fn f(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        self.stats.f_evals += 1;
        let t = self.clamp_t(t);
        self.sys.rhs(t, y, dy);
    }

    /// Starts the piece ending at `b`: evaluates `f0 = f(t, y)` with `b` as the new piece end.
    pub fn start_piece(
        &mut self,
        b: f64,
        t: f64,
        y: &[f64],
        f0: &mut [f64],
    ) -> Result<(), OdeError> {
        self.t_hi = b;
        self.f(t, y, f0);
        if !all_finite(f0) {
            return Err(OdeError::NonFinite { t });
        }
        Ok(())
    }

    /// Counts one step attempt at `t`; [`OdeError::MaxSteps`] beyond `max_steps`.
    pub fn count_attempt(&mut self, max_steps: usize, t: f64) -> Result<(), OdeError> {
        self.attempts += 1;
        if self.attempts > max_steps {
            return Err(OdeError::MaxSteps { t, max: max_steps });
        }
        Ok(())
    }

    /// Projection hook of the system.
    pub fn project(&mut self, y: &mut [f64]) {
        self.sys.project(y);
    }

    /// Jacobian `∂f/∂y` at `(t, y)`; `f0 = f(t, y)` is used for forward differences.
    pub fn jacobian(&mut self, t: f64, y: &[f64], f0: &[f64], mut jac: MatMut<'_, f64>) {
        self.stats.jac_evals += 1;
        let tc = self.clamp_t(t);
        if self.sys.jacobian(tc, y, jac.as_mut()) {
            return;
        }
        let n = self.n;
        self.ytmp.copy_from_slice(y);
        for j in 0..n {
            let yj = y[j];
            let del = (f64::EPSILON * yj.abs().max(1e-5)).sqrt();
            self.ytmp[j] = yj + del;
            let del = self.ytmp[j] - yj;
            self.stats.f_evals += 1;
            self.sys.rhs(tc, &self.ytmp, &mut self.ftmp);
            for i in 0..n {
                jac[(i, j)] = (self.ftmp[i] - f0[i]) / del;
            }
            self.ytmp[j] = yj;
        }
    }

    /// Time derivative `∂f/∂t` at `(t, y)`; `f0 = f(t, y)`.
    pub fn dfdt(&mut self, t: f64, y: &[f64], f0: &[f64], out: &mut [f64]) {
        let tc = self.clamp_t(t);
        if self.sys.time_derivative(tc, y, out) {
            return;
        }
        let mut del = f64::EPSILON.sqrt() * t.abs().max(1.0);
        if t + del >= self.t_hi {
            del = -del;
        }
        let t1 = t + del;
        let del = t1 - t;
        self.stats.f_evals += 1;
        self.sys.rhs(t1, y, &mut self.ftmp);
        for i in 0..self.n {
            out[i] = (self.ftmp[i] - f0[i]) / del;
        }
    }

    /// `max_i |e_i| / max(rtol·max(|ya_i|, |yb_i|), atol_i)` (document 001, eq. 14);
    /// infinite when anything is NaN.
    pub fn err_norm(&self, e: &[f64], ya: &[f64], yb: &[f64]) -> f64 {
        self.err_norm_scaled(e, ya, yb, self.rtol, 1.0)
    }

    /// The eq.-14 norm with transformed tolerances `rt` and `ascale·atol_i`:
    /// `max_k |e_k| / max(rt·max(|ya_i|, |yb_i|), ascale·atol_i)` with `i = k mod n`, so `e` may
    /// stack several vectors of length `n` (stage vectors); infinite when anything is NaN.
    pub fn err_norm_scaled(&self, e: &[f64], ya: &[f64], yb: &[f64], rt: f64, ascale: f64) -> f64 {
        let mut m = 0.0f64;
        for block in e.chunks(self.n) {
            for (i, ei) in block.iter().enumerate() {
                let w = (rt * ya[i].abs().max(yb[i].abs())).max(ascale * self.atol[i]);
                let r = ei.abs() / w;
                if r.is_nan() {
                    return f64::INFINITY;
                }
                if r > m {
                    m = r;
                }
            }
        }
        m
    }

    /// Automatic initial step (Hairer, Nørsett & Wanner I, II.4) for a method of order `order`
    /// from `(t0, y0)` with `f0 = f(t0, y0)`. Costs one evaluation of `f`. `hmax` bounds the
    /// result and the trial step.
    pub fn initial_step(
        &mut self,
        t0: f64,
        y0: &[f64],
        f0: &[f64],
        order: usize,
        hmax: f64,
    ) -> f64 {
        let mut y1 = std::mem::take(&mut self.ytmp);
        let mut f1 = std::mem::take(&mut self.ftmp);
        let d0 = self.norm1(y0, y0);
        let d1 = self.norm1(f0, y0);
        let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        };
        h0 = h0.min(hmax);
        for i in 0..self.n {
            y1[i] = y0[i] + h0 * f0[i];
        }
        self.f(t0 + h0, &y1, &mut f1);
        for i in 0..self.n {
            f1[i] -= f0[i];
        }
        let d2 = self.norm1(&f1, y0) / h0;
        let dm = d1.max(d2);
        let h1 = if !dm.is_finite() {
            h0 * 1e-3
        } else if dm <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else {
            (0.01 / dm).powf(1.0 / (order as f64 + 1.0))
        };
        self.ytmp = y1;
        self.ftmp = f1;
        (100.0 * h0).min(h1).min(hmax)
    }

    /// Norm of `v` with weights from a single state `y`.
    pub fn norm1(&self, v: &[f64], y: &[f64]) -> f64 {
        self.err_norm(v, y, y)
    }
}

/// Smallest step size allowed at `t` (16 units in the last place of `t`).
pub(crate) fn min_step(t: f64) -> f64 {
    16.0 * f64::EPSILON * t.abs().max(f64::MIN_POSITIVE)
}

/// True when all entries are finite.
pub(crate) fn all_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Embedded error estimate `out_c = scale · Σ_i (w_i - ŵ_i) k_{i,c}` from the stage vectors `k`
/// and the weights of the propagated (`w`) and the embedded (`ŵ`) solution.
pub(crate) fn embedded_error(
    out: &mut [f64],
    w: &[f64],
    w_hat: &[f64],
    k: &[Vec<f64>],
    scale: f64,
) {
    for c in 0..out.len() {
        let mut acc = 0.0;
        for i in 0..k.len() {
            acc += (w[i] - w_hat[i]) * k[i][c];
        }
        out[c] = scale * acc;
    }
}

/// Step-size factor of the asymptotic controller: for a scaled error `err` (eq.-14 norm) that
/// behaves like `h^p`, `safety · err^(-1/p)` limited to `[fmin, fmax]`; `fmax` when `err = 0`.
pub(crate) fn step_factor(err: f64, p: f64, safety: f64, fmin: f64, fmax: f64) -> f64 {
    if err == 0.0 {
        fmax
    } else {
        (safety * err.powf(-1.0 / p)).clamp(fmin, fmax)
    }
}

/// Dense LU factorisation with partial pivoting (faer low-level API, allocation-free after
/// construction).
pub(crate) struct Lu {
    /// Matrix to factor (fill it, then call [`Lu::factor`]); holds the factors afterwards.
    pub a: Mat<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
    n: usize,
}

impl Lu {
    pub fn new(n: usize) -> Self {
        let req = StackReq::any_of(&[
            factor::lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default()),
            lusolve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq),
        ]);
        Self {
            a: Mat::zeros(n, n),
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
            n,
        }
    }

    /// Factors `self.a` in place; returns false if it is (numerically) singular.
    pub fn factor(&mut self, stats: &mut Stats) -> bool {
        stats.lu_factorisations += 1;
        if (0..self.n).any(|j| (0..self.n).any(|i| !self.a[(i, j)].is_finite())) {
            return false;
        }
        let stack = MemStack::new(&mut self.mem);
        factor::lu_in_place::<usize, f64>(
            self.a.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        (0..self.n).all(|i| {
            let d = self.a[(i, i)];
            d != 0.0 && d.is_finite()
        })
    }

    /// Solves `A x = b` in place (`x` holds `b` on entry).
    pub fn solve(&mut self, x: &mut [f64], stats: &mut Stats) {
        stats.lu_solves += 1;
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, self.n);
        let rhs = MatMut::from_column_major_slice_mut(x, self.n, 1);
        let stack = MemStack::new(&mut self.mem);
        lusolve::solve_in_place::<usize, f64, f64>(
            self.a.as_ref(),
            self.a.as_ref(),
            perm,
            rhs,
            Par::Seq,
            stack,
        );
    }
}

impl Lu {
    /// Fills `a = diag(alpha) - beta·J` and factors it; false when singular.
    pub fn factor_shifted(
        &mut self,
        alpha: f64,
        beta: f64,
        jac: &Mat<f64>,
        stats: &mut Stats,
    ) -> bool {
        let n = jac.nrows();
        for j in 0..n {
            for i in 0..n {
                self.a[(i, j)] = -beta * jac[(i, j)];
            }
            self.a[(j, j)] += alpha;
        }
        self.factor(stats)
    }
}

/// Outcome of [`IterationMatrix::factor`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Factored {
    /// The LU of the previous call is still valid (same step key, same Jacobian).
    Kept,
    /// The matrix was refactored.
    New,
    /// The matrix is singular; the next call refactors.
    Singular,
}

/// Jacobian `J = ∂f/∂y` kept over steps together with the LU of an iteration matrix
/// `alpha·I - beta·J` (Rosenbrock `I/(γh) - J`, implicit stages `I - h d J`). The Jacobian is
/// evaluated only when invalidated; the LU only when the step key or the Jacobian changes.
pub(crate) struct IterationMatrix {
    /// The Jacobian.
    pub jac: Mat<f64>,
    /// LU factors of the iteration matrix.
    pub lu: Lu,
    jac_valid: bool,
    lu_key: f64,
}

impl IterationMatrix {
    pub fn new(n: usize) -> Self {
        Self {
            jac: Mat::zeros(n, n),
            lu: Lu::new(n),
            jac_valid: false,
            lu_key: f64::NAN,
        }
    }

    /// Discards the Jacobian (and with it the LU): the next [`Self::refresh_jacobian`] evaluates.
    pub fn invalidate(&mut self) {
        self.jac_valid = false;
        self.lu_key = f64::NAN;
    }

    /// Discards the LU only.
    pub fn invalidate_lu(&mut self) {
        self.lu_key = f64::NAN;
    }

    /// True when the LU is not factored for `key` (with the current Jacobian).
    pub fn lu_stale(&self, key: f64) -> bool {
        self.lu_key != key
    }

    /// Evaluates `J` at `(t, y0)` (`f0 = f(t, y0)`) unless the current one is valid; returns true
    /// when it evaluated (the LU is then stale).
    pub fn refresh_jacobian(&mut self, ctx: &mut Ctx, t: f64, y0: &[f64], f0: &[f64]) -> bool {
        if self.jac_valid {
            return false;
        }
        self.evaluate_jacobian(ctx, t, y0, f0);
        true
    }

    /// Evaluates `J` at `(t, y0)` now (`f0 = f(t, y0)`); the LU becomes stale.
    pub fn evaluate_jacobian(&mut self, ctx: &mut Ctx, t: f64, y0: &[f64], f0: &[f64]) {
        ctx.jacobian(t, y0, f0, self.jac.as_mut());
        self.jac_valid = true;
        self.lu_key = f64::NAN;
    }

    /// Factors `alpha·I - beta·J` unless it is already factored for `key` (the step size, or any
    /// value that determines `alpha` and `beta`).
    pub fn factor(&mut self, stats: &mut Stats, key: f64, alpha: f64, beta: f64) -> Factored {
        if self.lu_key == key {
            return Factored::Kept;
        }
        if !self.lu.factor_shifted(alpha, beta, &self.jac, stats) {
            self.lu_key = f64::NAN;
            return Factored::Singular;
        }
        self.lu_key = key;
        Factored::New
    }
}

/// An accepted step `[t0, t0 + h]` with its end values and slopes (for dense output).
#[derive(Clone, Copy)]
pub(crate) struct Accepted<'a> {
    pub t0: f64,
    pub h: f64,
    pub y0: &'a [f64],
    pub f0: &'a [f64],
    pub y1: &'a [f64],
    pub f1: &'a [f64],
}

/// Cubic Hermite interpolation on the step from end values and slopes.
pub(crate) fn hermite(step: &Accepted<'_>, t: f64, out: &mut [f64]) {
    let Accepted {
        t0,
        h,
        y0,
        f0,
        y1,
        f1,
    } = *step;
    let s = (t - t0) / h;
    let s2 = s * s;
    let s3 = s2 * s;
    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
    let h10 = s3 - 2.0 * s2 + s;
    let h01 = -2.0 * s3 + 3.0 * s2;
    let h11 = s3 - s2;
    for i in 0..out.len() {
        out[i] = h00 * y0[i] + h * h10 * f0[i] + h01 * y1[i] + h * h11 * f1[i];
    }
}

/// Output recording: output times (dense output), the observer and stored results.
pub(crate) struct Recorder<'a> {
    times: Vec<f64>,
    next: usize,
    every_step: bool,
    observer: Option<Observer<'a>>,
    record: bool,
    pub t: Vec<f64>,
    pub y: Vec<f64>,
    buf: Vec<f64>,
    pub stopped: bool,
}

impl<'a> Recorder<'a> {
    pub fn new(
        n: usize,
        times: Option<Vec<f64>>,
        observer: Option<Observer<'a>>,
        record: bool,
    ) -> Self {
        let every_step = times.is_none();
        Self {
            times: times.unwrap_or_default(),
            next: 0,
            every_step,
            observer,
            record,
            t: Vec::new(),
            y: Vec::new(),
            buf: vec![0.0; n],
            stopped: false,
        }
    }

    fn emit(&mut self, t: f64, y: &[f64]) {
        if self.record {
            self.t.push(t);
            self.y.extend_from_slice(y);
        }
        if let Some(obs) = self.observer.as_mut()
            && obs(t, y) == Control::Stop
        {
            self.stopped = true;
        }
    }

    /// Initial point. Returns true when the observer asked to stop.
    pub fn start(&mut self, t0: f64, y0: &[f64]) -> bool {
        if self.every_step {
            self.emit(t0, y0);
        } else {
            while self.next < self.times.len() && self.times[self.next] <= t0 {
                self.next += 1;
                self.emit(t0, y0);
                if self.stopped {
                    break;
                }
            }
        }
        self.stopped
    }

    /// A step `(t0, t1]` ending in `y1`; `interp(t, out)` gives the dense output inside.
    /// Returns true when the observer asked to stop.
    pub fn step(&mut self, t1: f64, y1: &[f64], interp: &mut dyn FnMut(f64, &mut [f64])) -> bool {
        if self.every_step {
            self.emit(t1, y1);
        } else {
            while self.next < self.times.len() && self.times[self.next] <= t1 {
                let tau = self.times[self.next];
                self.next += 1;
                if tau == t1 {
                    self.emit(t1, y1);
                } else {
                    let mut buf = std::mem::take(&mut self.buf);
                    interp(tau, &mut buf);
                    self.emit(tau, &buf);
                    self.buf = buf;
                }
                if self.stopped {
                    break;
                }
            }
        }
        self.stopped
    }
}

/// Validated problem setup shared by all drivers.
pub(crate) struct Setup {
    /// Breakpoints including `t_end` (strictly increasing, all `> t0`).
    pub stops: Vec<f64>,
    pub hmax: f64,
    pub h_init: Option<f64>,
    pub max_steps: usize,
    pub step: Option<f64>,
}

impl Setup {
    /// First step of a multistep method of starting order `order` with `f0 = f(t, y)`: the user's
    /// initial step or the automatic one, at most `hmax`.
    pub fn first_step(
        &self,
        ctx: &mut Ctx,
        t: f64,
        y: &[f64],
        f0: &[f64],
        order: usize,
        hmax: f64,
    ) -> f64 {
        match self.h_init {
            Some(h) => h.min(hmax),
            None => ctx.initial_step(t, y, f0, order, hmax),
        }
    }
}

fn validate(
    n: usize,
    t0: f64,
    y0: &[f64],
    t_end: f64,
    opts: &mut Options<'_>,
) -> Result<(Setup, Vec<f64>), OdeError> {
    let bad = |s: String| Err(OdeError::InvalidInput(s));
    if y0.len() != n {
        return bad(format!(
            "initial state has {} entries but the system dimension is {n}",
            y0.len()
        ));
    }
    if n == 0 {
        return bad("system dimension is 0".into());
    }
    if !t0.is_finite() || !t_end.is_finite() || t_end <= t0 {
        return bad(format!(
            "need finite t0 < t_end, got t0 = {t0}, t_end = {t_end} (only forward integration is supported)"
        ));
    }
    if !all_finite(y0) {
        return bad("initial state contains NaN or Inf".into());
    }
    if !(opts.rtol > 0.0 && opts.rtol < 1.0) {
        return bad(format!("rtol must be in (0, 1), got {}", opts.rtol));
    }
    let rtol = opts.rtol.max(100.0 * f64::EPSILON);
    let _ = rtol;
    let atol = match &opts.atol {
        Tolerance::Scalar(a) => vec![*a; n],
        Tolerance::PerComponent(v) => {
            if v.len() != n {
                return bad(format!(
                    "per-component atol has {} entries but the system dimension is {n}",
                    v.len()
                ));
            }
            v.clone()
        }
    };
    if atol.iter().any(|a| !(*a > 0.0 && a.is_finite())) {
        return bad("every atol entry must be positive and finite".into());
    }
    if let Some(h) = opts.step
        && !(h > 0.0 && h.is_finite())
    {
        return bad(format!("fixed step must be positive and finite, got {h}"));
    }
    if let Some(h) = opts.initial_step
        && !(h > 0.0 && h.is_finite())
    {
        return bad(format!("initial_step must be positive and finite, got {h}"));
    }
    let span = t_end - t0;
    let hmax = match opts.max_step {
        Some(h) if h.is_nan() || h <= 0.0 => {
            return bad(format!("max_step must be positive, got {h}"));
        }
        Some(h) => h.min(span),
        None => 0.1 * span,
    };
    if let Some(times) = opts.output_times.as_mut() {
        if times
            .iter()
            .any(|t| !t.is_finite() || *t < t0 || *t > t_end)
        {
            return bad(format!(
                "output times must lie in [t0, t_end] = [{t0}, {t_end}]"
            ));
        }
        times.sort_by(|a, b| a.total_cmp(b));
        times.dedup();
    }
    if opts.tstops.iter().any(|t| !t.is_finite()) {
        return bad("tstops must be finite".into());
    }
    let mut stops: Vec<f64> = opts
        .tstops
        .iter()
        .copied()
        .filter(|&t| t > t0 && t < t_end)
        .collect();
    stops.sort_by(|a, b| a.total_cmp(b));
    stops.dedup();
    stops.push(t_end);
    Ok((
        Setup {
            stops,
            hmax,
            h_init: opts.initial_step,
            max_steps: opts.max_steps,
            step: opts.step,
        },
        atol,
    ))
}

/// Top-level dispatch of [`super::solve`].
pub(crate) fn run(
    method: Method,
    system: &mut dyn OdeSystem,
    t0: f64,
    y0: &[f64],
    t_end: f64,
    mut opts: Options<'_>,
) -> Result<Solution, OdeError> {
    let n = system.dim();
    let (setup, atol) = validate(n, t0, y0, t_end, &mut opts)?;
    let rtol = opts.rtol.max(100.0 * f64::EPSILON);
    let mut ctx = Ctx::new(system, rtol, atol, setup.stops[0]);
    let mut rec = Recorder::new(
        n,
        opts.output_times.take(),
        opts.observer.take(),
        opts.record,
    );
    let mut y = y0.to_vec();
    let t_final = match method {
        Method::Ode15s { max_order, bdf } => {
            if setup.step.is_some() {
                return Err(OdeError::InvalidInput(
                    "ode15s is a variable-step multistep method; remove options.step or choose a fixed-step method".into(),
                ));
            }
            if !(1..=5).contains(&max_order) {
                return Err(OdeError::InvalidInput(format!(
                    "ode15s max_order must be 1..=5, got {max_order}"
                )));
            }
            super::ndf::run(&mut ctx, &setup, &mut rec, t0, &mut y, max_order, bdf)?
        }
        Method::Ode113 => {
            if setup.step.is_some() {
                return Err(OdeError::InvalidInput(
                    "ode113 is a variable-step multistep method; remove options.step or choose a fixed-step method".into(),
                ));
            }
            super::adams::run(&mut ctx, &setup, &mut rec, t0, &mut y)?
        }
        _ => {
            let mut stepper = super::onestep::make(method, n)?;
            super::onestep::run(stepper.as_mut(), &mut ctx, &setup, &mut rec, t0, &mut y)?
        }
    };
    Ok(Solution {
        t: rec.t,
        y: rec.y,
        dim: n,
        t_final,
        y_final: y,
        stopped: rec.stopped,
        stats: ctx.stats,
    })
}
