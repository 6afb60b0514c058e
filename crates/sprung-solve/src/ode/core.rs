//! Shared machinery: evaluation context with statistics, dense LU (faer), difference Jacobians,
//! the error norm of document 001 eq. 14 ([`Ctx::err_norm`], with transformed tolerances
//! [`Ctx::err_norm_scaled`]), the asymptotic step-size controller ([`step_factor`]), the
//! Jacobian + LU refresh of the iteration matrix `alpha·I - beta·J` ([`IterationMatrix`]), the
//! automatic initial step, the driver preamble (pieces between breakpoints, attempt counting),
//! output recording and the top-level dispatch of [`super::solve`]; the mass matrix `M(t, y)`
//! (evaluation, products, which methods accept which kind) and the consistent initialisation of
//! index-1 DAEs ([`consistent_start`], the algorithm of `docs/dae.md`).

use super::{
    Control, Failure, Mass, MassFn, MassSingular, Method, Observer, OdeError, OdeSystem, Options,
    Solution, Stats, StepController, Tolerance,
};
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
    /// Mass matrix `M(t, y)`; `None` is the identity.
    mass: Option<MassState<'s>>,
    /// Predictive step-size control requested (`Some(true)`), refused (`Some(false)`) or left to
    /// the method (`None`).
    pub predictive: Option<bool>,
    /// With a mass matrix: the consistent initial slope `y'(t0)`.
    pub yp0: Option<Vec<f64>>,
    /// radau5 uses `rtol`/`atol` as given (no RADAU5 transformation).
    pub radau_as_given: bool,
}

/// Kind of mass matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MassKind {
    Constant,
    Time,
    State,
}

/// Mass matrix of the run.
pub(crate) struct MassState<'s> {
    pub kind: MassKind,
    /// The constant matrix, or the last evaluated one.
    pub m: Mat<f64>,
    fun: Option<MassFn<'s>>,
    /// `M` is singular (a DAE).
    pub singular: bool,
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
            mass: None,
            predictive: None,
            yp0: None,
            radau_as_given: false,
        }
    }

    /// Kind of mass matrix; `None` for the identity.
    pub fn mass_kind(&self) -> Option<MassKind> {
        self.mass.as_ref().map(|m| m.kind)
    }

    /// True when the mass matrix is singular (a DAE).
    pub fn mass_singular(&self) -> bool {
        self.mass.as_ref().is_some_and(|m| m.singular)
    }

    /// Evaluates `M(t, y)` into `out` (identity without mass matrix).
    pub fn mass_into(&mut self, t: f64, y: &[f64], mut out: MatMut<'_, f64>) {
        let tc = self.clamp_t(t);
        match self.mass.as_mut() {
            None => {
                out.fill(0.0);
                for i in 0..self.n {
                    out[(i, i)] = 1.0;
                }
            }
            Some(ms) => {
                if let Some(f) = ms.fun.as_mut() {
                    f(tc, y, ms.m.as_mut());
                }
                out.copy_from(&ms.m);
            }
        }
    }

    /// `out = M(t, y) v` (`out = v` without mass matrix).
    pub fn mass_mul(&mut self, t: f64, y: &[f64], v: &[f64], out: &mut [f64]) {
        let tc = self.clamp_t(t);
        match self.mass.as_mut() {
            None => out.copy_from_slice(v),
            Some(ms) => {
                if let Some(f) = ms.fun.as_mut() {
                    f(tc, y, ms.m.as_mut());
                }
                mat_vec(&ms.m, v, out);
            }
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

    /// `out = M v` with the mass matrix evaluated last (or the constant one); `out = v` without.
    pub fn mass_mul_last(&self, v: &[f64], out: &mut [f64]) {
        match self.mass.as_ref() {
            None => out.copy_from_slice(v),
            Some(ms) => mat_vec(&ms.m, v, out),
        }
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

/// `out = a v`.
pub(crate) fn mat_vec(a: &Mat<f64>, v: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for j in 0..a.ncols() {
        let vj = v[j];
        if vj != 0.0 {
            for i in 0..a.nrows() {
                out[i] += a[(i, j)] * vj;
            }
        }
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
        self.factor_shifted_mass(alpha, beta, jac, None, stats)
    }

    /// Fills `a = alpha·M - beta·J` (`M = I` when `mass` is `None`) and factors it; false when
    /// singular.
    pub fn factor_shifted_mass(
        &mut self,
        alpha: f64,
        beta: f64,
        jac: &Mat<f64>,
        mass: Option<&Mat<f64>>,
        stats: &mut Stats,
    ) -> bool {
        let n = jac.nrows();
        for j in 0..n {
            for i in 0..n {
                self.a[(i, j)] = -beta * jac[(i, j)];
            }
            match mass {
                None => self.a[(j, j)] += alpha,
                Some(m) => {
                    for i in 0..n {
                        self.a[(i, j)] += alpha * m[(i, j)];
                    }
                }
            }
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
/// `alpha·M - beta·J` (Rosenbrock `M/(γh) - J`, implicit stages `M - h d J`; `M = I` without
/// mass matrix, else `M` evaluated with the Jacobian). The Jacobian is evaluated only when
/// invalidated; the LU only when the step key or the Jacobian changes.
pub(crate) struct IterationMatrix {
    /// The Jacobian.
    pub jac: Mat<f64>,
    /// Mass matrix at the Jacobian's point (`None`: identity).
    pub mass: Option<Mat<f64>>,
    /// LU factors of the iteration matrix.
    pub lu: Lu,
    jac_valid: bool,
    lu_key: f64,
}

impl IterationMatrix {
    pub fn new(n: usize) -> Self {
        Self {
            jac: Mat::zeros(n, n),
            mass: None,
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
        if ctx.mass_kind().is_some() {
            let n = ctx.n;
            let m = self.mass.get_or_insert_with(|| Mat::zeros(n, n));
            ctx.mass_into(t, y0, m.as_mut());
        }
        self.jac_valid = true;
        self.lu_key = f64::NAN;
    }

    /// Factors `alpha·I - beta·J` unless it is already factored for `key` (the step size, or any
    /// value that determines `alpha` and `beta`).
    pub fn factor(&mut self, stats: &mut Stats, key: f64, alpha: f64, beta: f64) -> Factored {
        if self.lu_key == key {
            return Factored::Kept;
        }
        if !self
            .lu
            .factor_shifted_mass(alpha, beta, &self.jac, self.mass.as_ref(), stats)
        {
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
    /// End of the last accepted step (or the start).
    pub t_last: f64,
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
            t_last: f64::NAN,
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
        self.t_last = t0;
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
        self.t_last = t1;
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

/// Methods that accept a mass matrix: every kind (`ode15s`), constant including singular
/// (radau5, Rosenbrock family), constant nonsingular (ode23s).
fn mass_support(method: Method) -> (bool, bool, bool) {
    // (constant, variable, singular)
    match method {
        Method::Ode15s { .. } => (true, true, true),
        // radau5: the stage residuals take M(t_i, Y_i) per stage (RADAU5 itself: constant only)
        Method::Radau5 => (true, true, true),
        Method::Rodas3
        | Method::Rodas4
        | Method::Rodas5p
        | Method::Ros2
        | Method::Ros3p
        | Method::Ros34pw2
        | Method::Lsrt2
        | Method::Lie => (true, false, true),
        Method::Ode23s => (true, false, false),
        // MATLAB: ode23t solves M(t, y) y' = f including DAEs, ode23tb only nonsingular M
        Method::Ode23t => (true, true, true),
        Method::Ode23tb => (true, true, false),
        _ => (false, false, false),
    }
}

/// Validates the mass option against the method and installs it in `ctx`; decides whether `M`
/// is singular (MATLAB's `MassSingular`).
fn install_mass<'s>(
    ctx: &mut Ctx<'s>,
    method: Method,
    mass: Mass<'s>,
    dep: super::MStateDependence,
    singular: MassSingular,
    t0: f64,
    y0: &[f64],
) -> Result<(), OdeError> {
    let n = ctx.n;
    let (kind, m, fun) = match mass {
        Mass::Constant(m) => {
            if m.nrows() != n || m.ncols() != n {
                return Err(OdeError::InvalidInput(format!(
                    "mass matrix is {}x{} but the system dimension is {n}",
                    m.nrows(),
                    m.ncols()
                )));
            }
            (MassKind::Constant, m, None)
        }
        Mass::Function(f) => {
            let kind = if dep == super::MStateDependence::None {
                MassKind::Time
            } else {
                MassKind::State
            };
            (kind, Mat::zeros(n, n), Some(f))
        }
    };
    let name = method.info().name;
    let (c, v, _) = mass_support(method);
    if !c {
        return Err(OdeError::InvalidInput(format!(
            "{name} does not accept a mass matrix; use ode15s, radau5, rodas4, rodas5p (or another Rosenbrock method) or ode23s"
        )));
    }
    if kind != MassKind::Constant && !v {
        return Err(OdeError::InvalidInput(format!(
            "{name} accepts only a constant mass matrix (Mass::Constant); use ode15s for M(t) or M(t, y)"
        )));
    }
    ctx.mass = Some(MassState {
        kind,
        m,
        fun,
        singular: false,
    });
    let mut m0 = Mat::zeros(n, n);
    ctx.mass_into(t0, y0, m0.as_mut());
    if (0..n).any(|j| (0..n).any(|i| !m0[(i, j)].is_finite())) {
        return Err(OdeError::InvalidInput(
            "mass matrix contains NaN or Inf".into(),
        ));
    }
    let is_singular = match singular {
        MassSingular::Yes => true,
        MassSingular::No => false,
        MassSingular::Maybe => null_spaces(&m0)?.2 > 0,
    };
    if is_singular && !mass_support(method).2 {
        return Err(OdeError::InvalidInput(format!(
            "{name} cannot solve DAEs (singular mass matrix); use ode15s, radau5 or rodas4"
        )));
    }
    if let Some(ms) = ctx.mass.as_mut() {
        ms.singular = is_singular;
    }
    Ok(())
}

/// SVD of `m`: `(U, V, k)` with `k` the number of singular values below
/// `n · 1e3 · eps · σ_max` (the last `k` columns of `U` and `V` span the left and right null
/// spaces).
fn null_spaces(m: &Mat<f64>) -> Result<(Mat<f64>, Mat<f64>, usize), OdeError> {
    let n = m.nrows();
    let svd = m
        .svd()
        .map_err(|_| OdeError::InvalidInput("SVD of the mass matrix did not converge".into()))?;
    let s = svd.S().column_vector();
    let smax = s[0];
    let tol = n as f64 * 1e3 * f64::EPSILON * smax;
    let k = (0..n).filter(|&i| s[i] <= tol || s[i].is_nan()).count();
    Ok((svd.U().to_owned(), svd.V().to_owned(), k))
}

/// Makes the initial state of an index-1 DAE `M y' = f` consistent (see [`super::Options::mass`]):
/// with `M(t, y) = U S Vᵀ` and null spaces `U₂`, `V₂`, Newton on `U₂ᵀ f(t, y + V₂ δ) = 0` with the
/// matrix `U₂ᵀ J V₂`. Returns the initial slope `y'` with
/// `U₁ᵀ M y' = U₁ᵀ f`, `U₂ᵀ (J y' + f_t) = 0` (for nonsingular `M`: `M y' = f`).
pub(crate) fn consistent_start(
    ctx: &mut Ctx,
    t: f64,
    y: &mut [f64],
    fix: bool,
    yp: &mut [f64],
) -> Result<(), OdeError> {
    let n = ctx.n;
    let mut m = Mat::zeros(n, n);
    ctx.mass_into(t, y, m.as_mut());
    let (u, v, k) = if ctx.mass_singular() {
        null_spaces(&m)?
    } else {
        (Mat::identity(n, n), Mat::identity(n, n), 0)
    };
    let r = n - k;
    let mut f0 = vec![0.0; n];
    let mut jac = Mat::zeros(n, n);
    let mut lu_k = Lu::new(k.max(1));
    let mut g = vec![0.0; k];
    let mut dy = vec![0.0; n];
    if fix && k > 0 {
        let mut converged = false;
        let mut res = f64::INFINITY;
        for it in 0..20 {
            ctx.f(t, y, &mut f0);
            if !all_finite(&f0) {
                return Err(OdeError::NonFinite { t });
            }
            if it % 4 == 0 {
                ctx.jacobian(t, y, &f0, jac.as_mut());
                // G = U2ᵀ J V2
                for a in 0..k {
                    for b in 0..k {
                        let mut acc = 0.0;
                        for i in 0..n {
                            let mut jv = 0.0;
                            for j in 0..n {
                                jv += jac[(i, j)] * v[(j, r + b)];
                            }
                            acc += u[(i, r + a)] * jv;
                        }
                        lu_k.a[(a, b)] = acc;
                    }
                }
                if !lu_k.factor(&mut ctx.stats) {
                    return Err(OdeError::InconsistentInitialState {
                        t,
                        residual: f64::INFINITY,
                    });
                }
            }
            for a in 0..k {
                g[a] = (0..n).map(|i| u[(i, r + a)] * f0[i]).sum();
            }
            lu_k.solve(&mut g, &mut ctx.stats);
            for i in 0..n {
                dy[i] = (0..k).map(|a| v[(i, r + a)] * g[a]).sum();
            }
            for i in 0..n {
                y[i] -= dy[i];
            }
            res = ctx.norm1(&dy, y);
            if !res.is_finite() {
                break;
            }
            if res <= 1e-3 {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(OdeError::InconsistentInitialState { t, residual: res });
        }
    }
    // initial slope
    ctx.f(t, y, &mut f0);
    if !all_finite(&f0) {
        return Err(OdeError::NonFinite { t });
    }
    let mut ft = vec![0.0; n];
    if k > 0 {
        ctx.jacobian(t, y, &f0, jac.as_mut());
        ctx.dfdt(t, y, &f0, &mut ft);
        ctx.mass_into(t, y, m.as_mut());
    }
    let mut lu = Lu::new(n);
    for i in 0..n {
        for j in 0..n {
            // row a < r: (U1ᵀ M)[a, j]; row a >= r: (U2ᵀ J)[a, j]
            let src = if i < r { &m } else { &jac };
            lu.a[(i, j)] = (0..n).map(|l| u[(l, i)] * src[(l, j)]).sum();
        }
    }
    for i in 0..n {
        yp[i] = if i < r {
            (0..n).map(|l| u[(l, i)] * f0[l]).sum()
        } else {
            -(0..n).map(|l| u[(l, i)] * ft[l]).sum::<f64>()
        };
    }
    if !lu.factor(&mut ctx.stats) {
        return Err(OdeError::InvalidInput(format!(
            "cannot compute the initial slope at t = {t}: [U1' M; U2' J] is singular (mass matrix singular beyond the algebraic part, or the DAE has index > 1)"
        )));
    }
    lu.solve(yp, &mut ctx.stats);
    Ok(())
}

/// Top-level dispatch of [`super::solve`] and [`super::solve_detailed`].
pub(crate) fn run(
    method: Method,
    system: &mut dyn OdeSystem,
    t0: f64,
    y0: &[f64],
    t_end: f64,
    mut opts: Options<'_>,
) -> Result<Solution, Box<Failure>> {
    let n = system.dim();
    let empty = |error: OdeError| Failure {
        error,
        solution: Solution {
            t: Vec::new(),
            y: Vec::new(),
            dim: n,
            t_final: t0,
            y_final: y0.to_vec(),
            stopped: false,
            stats: Stats::default(),
        },
    };
    let (setup, atol) = validate(n, t0, y0, t_end, &mut opts).map_err(|e| Box::new(empty(e)))?;
    let rtol = opts.rtol.max(100.0 * f64::EPSILON);
    let mut ctx = Ctx::new(system, rtol, atol, setup.stops[0]);
    ctx.predictive = match opts.controller {
        StepController::Auto => None,
        StepController::Standard => Some(false),
        StepController::Predictive => Some(true),
    };
    ctx.radau_as_given = opts.radau_tolerances == super::RadauTolerances::AsGiven;
    let mut y = y0.to_vec();
    if let Some(mass) = opts.mass.take() {
        let res = install_mass(
            &mut ctx,
            method,
            mass,
            opts.m_state_dependence,
            opts.mass_singular,
            t0,
            y0,
        )
        .and_then(|()| {
            let mut yp = vec![0.0; n];
            consistent_start(&mut ctx, t0, &mut y, true, &mut yp)?;
            ctx.yp0 = Some(yp);
            Ok(())
        });
        if let Err(error) = res {
            let mut f = empty(error);
            f.solution.stats = ctx.stats;
            return Err(Box::new(f));
        }
    }
    let mut rec = Recorder::new(
        n,
        opts.output_times.take(),
        opts.observer.take(),
        opts.record,
    );
    let res = dispatch(method, &mut ctx, &setup, &mut rec, t0, &mut y);
    let t_final = match &res {
        Ok(t) => *t,
        Err(_) if rec.t_last.is_nan() => t0,
        Err(_) => rec.t_last,
    };
    let solution = Solution {
        t: rec.t,
        y: rec.y,
        dim: n,
        t_final,
        y_final: y,
        stopped: rec.stopped,
        stats: ctx.stats,
    };
    match res {
        Ok(_) => Ok(solution),
        Err(error) => Err(Box::new(Failure { error, solution })),
    }
}

fn dispatch(
    method: Method,
    ctx: &mut Ctx,
    setup: &Setup,
    rec: &mut Recorder,
    t0: f64,
    y: &mut [f64],
) -> Result<f64, OdeError> {
    let n = ctx.n;
    Ok(match method {
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
            super::ndf::run(ctx, setup, rec, t0, y, max_order, bdf)?
        }
        Method::Ode113 => {
            if setup.step.is_some() {
                return Err(OdeError::InvalidInput(
                    "ode113 is a variable-step multistep method; remove options.step or choose a fixed-step method".into(),
                ));
            }
            super::adams::run(ctx, setup, rec, t0, y)?
        }
        _ => {
            let mut stepper = super::onestep::make(method, n)?;
            super::onestep::run(stepper.as_mut(), ctx, setup, rec, t0, y)?
        }
    })
}
