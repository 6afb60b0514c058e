//! Evaluation of characteristic curves ([`Curve`]) and input signals ([`Signal`]).
//!
//! Curves (`reference-suspensions.md` section 2, model format `[[curves]]`):
//! * `linear`: piecewise-linear interpolation; at a knot the derivative of the segment to the
//!   right is returned (left segment at the last knot).
//! * `smooth`: C1 piecewise cubic Hermite interpolation whose knot tangents satisfy the
//!   Fritsch–Carlson monotonicity conditions (F. N. Fritsch, R. E. Carlson, "Monotone piecewise
//!   cubic interpolation", SIAM J. Numer. Anal. 17 (1980) 238–246). The interior tangents are the
//!   weighted harmonic means of the neighbouring secants (the three-point formula of Fritsch and
//!   Butland, 1984), which is zero at local extrema and never exceeds three times either adjacent
//!   secant, so every monotone data set gives a monotone interpolant; the end tangents use the
//!   shape-preserving one-sided three-point formula. Because each tangent depends only on its
//!   neighbours, evaluation needs no precomputed storage and never allocates.
//! * extrapolation `linear` continues with the end segment slope (linear) or end tangent
//!   (smooth); `constant` holds the end value (derivative 0); `error` holds the end value in
//!   [`Curve::eval`] and records the first offending abscissa in the curve's
//!   [`OutOfRangeFlag`] (a thread-local record, written only on the already out-of-range branch,
//!   so the in-range hot path is unchanged and nothing allocates; per thread so that simulations
//!   sharing one compiled model do not see each other's excursions); the run loop calls
//!   [`check_curve_ranges`] after each step and stops with a [`CurveRangeError`] naming the
//!   element(s), the curve, the value and the table range. [`Curve::eval_checked`] reports
//!   [`OutOfRange`] directly.
//! * symmetry `odd`: the table covers x >= 0 starting at (0, 0) and f(-x) = -f(x). For smooth odd
//!   curves the tangent at 0 uses the mirrored neighbour, so the curve is C1 through the origin.
//!
//! All evaluation functions are allocation-free and never panic, also on unvalidated data
//! (degenerate tables give constant or zero values).

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::types::{Curve, Extrapolation, Interpolation, Model, Signal, Symmetry};

thread_local! {
    /// The first out-of-range evaluation on this thread since the last reset: the address of
    /// the curve's flag (0 = none) and the abscissa.
    static OUT_OF_RANGE: Cell<(usize, f64)> = const { Cell::new((0, 0.0)) };
}

/// Where an `extrapolation = "error"` curve records that it was evaluated outside its table.
///
/// The record is *per thread*, not in the curve: the curves live in a compiled model that
/// several simulations share (threads of a sweep, Python threads), and an excursion in one of
/// them must not stop another. A simulation step runs on one thread from start to end, so the
/// run loops reset the thread's record at the start of every step ([`reset_out_of_range`]) and
/// look at it after the step ([`any_out_of_range`]); the record names the curve by the address
/// of its flag, so a record of another model's curve is never mistaken for one of these. The
/// flag itself holds no data (clones and equality are trivial).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct OutOfRangeFlag {
    /// Keeps the flag one byte wide so every curve's flag has its own address.
    _address: u8,
}

impl OutOfRangeFlag {
    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Records `x` for this curve unless this thread already recorded an excursion since the
    /// last reset (the first one is kept).
    #[inline]
    pub fn record(&self, x: f64) {
        OUT_OF_RANGE.with(|r| {
            if r.get().0 == 0 {
                r.set((self.address(), x));
            }
        });
    }

    /// The abscissa this thread recorded for this curve since the last reset, if any.
    #[inline]
    pub fn get(&self) -> Option<f64> {
        OUT_OF_RANGE.with(|r| {
            let (a, x) = r.get();
            (a == self.address()).then_some(x)
        })
    }

    /// Forgets this thread's record if it is this curve's.
    pub fn clear(&self) {
        OUT_OF_RANGE.with(|r| {
            if r.get().0 == self.address() {
                r.set((0, 0.0));
            }
        });
    }
}

/// Forgets this thread's out-of-range record, whichever curve made it: called by the run loops
/// at the start of every step (one thread-local store).
#[inline]
pub fn reset_out_of_range() {
    OUT_OF_RANGE.with(|r| r.set((0, 0.0)));
}

/// The knots of a curve at which its slope changes by more than a ratio (or changes sign),
/// computed once on the first [`Curve::segment`] call for that ratio and kept, and the table
/// interval of the last [`Curve::eval`] inside the table, tried first by the next one (derived
/// data, not model data: equality ignores it, clones copy it). The interval is a hint only:
/// evaluations along a trajectory mostly stay in one interval, and a wrong hint (another
/// thread's, another state's) costs the full search, never a different result.
#[derive(Debug, Default)]
pub struct SegmentKnots(std::sync::OnceLock<(f64, Vec<f64>)>, AtomicU32);

impl Clone for SegmentKnots {
    fn clone(&self) -> Self {
        Self(self.0.clone(), AtomicU32::new(self.1.load(Relaxed)))
    }
}

impl PartialEq for SegmentKnots {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A curve with `extrapolation = "error"` was evaluated outside its table during a run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{elements}: curve '{curve}' was evaluated at x = {x}, outside its table range [{min}, {max}] (extrapolation = \"error\"); extend the table, or set extrapolation = \"linear\" or \"constant\" if extrapolating is acceptable"
)]
pub struct CurveRangeError {
    /// The force elements using the curve, e.g. `force element 'damper_fl'` (or `curve
    /// user unknown` when no element of the model refers to it by name).
    pub elements: String,
    /// Curve name.
    pub curve: String,
    /// Offending abscissa.
    pub x: f64,
    /// Lower end of the table range (after symmetry).
    pub min: f64,
    /// Upper end of the table range.
    pub max: f64,
}

/// `true` if one of `curves` recorded an out-of-range evaluation on this thread since the last
/// reset: one thread-local load and an address range test, no allocation. Call after each step;
/// build the message with [`check_curve_ranges`].
#[inline]
pub fn any_out_of_range(curves: &[Curve]) -> bool {
    let (a, _) = OUT_OF_RANGE.with(Cell::get);
    match (curves.first(), curves.last()) {
        (Some(first), Some(last)) if a != 0 => {
            (first.out_of_range.address()..=last.out_of_range.address()).contains(&a)
        }
        _ => false,
    }
}

/// Forgets the out-of-range record of this thread if it belongs to one of `curves` (see
/// [`OutOfRangeFlag::clear`]).
pub fn clear_out_of_range(curves: &[Curve]) {
    if any_out_of_range(curves) {
        reset_out_of_range();
    }
}

/// Checks the out-of-range records of `curves` (the curves the run evaluates, e.g. the compiled
/// model's) and names the force elements of `model` that use the first offending curve.
/// Allocates only when it returns an error.
pub fn check_curve_ranges(model: &Model, curves: &[Curve]) -> Result<(), CurveRangeError> {
    let Some((c, x)) = curves
        .iter()
        .find_map(|c| c.out_of_range.get().map(|x| (c, x)))
    else {
        return Ok(());
    };
    let (min, max) = c.range();
    let users: Vec<String> = model
        .force_elements
        .iter()
        .filter(|fe| {
            serde_json::to_value(fe)
                .map(|v| refers_to(&v, &c.name))
                .unwrap_or(false)
        })
        .map(|fe| format!("'{}'", fe.name()))
        .collect();
    let elements = match users.len() {
        0 => "curve user unknown".to_string(),
        1 => format!("force element {}", users[0]),
        _ => format!("force elements {}", users.join(", ")),
    };
    Err(CurveRangeError {
        elements,
        curve: c.name.clone(),
        x,
        min,
        max,
    })
}

/// `true` if a string value in `v` equals `name`, other than the element's own `name`.
fn refers_to(v: &serde_json::Value, name: &str) -> bool {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .any(|(k, x)| k != "name" && k != "type" && refers_to(x, name)),
        serde_json::Value::Array(a) => a.iter().any(|x| refers_to(x, name)),
        serde_json::Value::String(s) => s == name,
        _ => false,
    }
}

/// A curve with `extrapolation = "error"` was evaluated outside its table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "curve '{curve}' evaluated at x = {x}, outside its table range [{min}, {max}]; extend the table or set extrapolation = \"linear\" or \"constant\""
)]
pub struct OutOfRange {
    /// Curve name.
    pub curve: String,
    /// Requested abscissa.
    pub x: f64,
    /// Lower end of the valid range.
    pub min: f64,
    /// Upper end of the valid range.
    pub max: f64,
}

/// Secant slope of segment k.
#[inline]
fn secant(xs: &[f64], ys: &[f64], k: usize) -> f64 {
    (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k])
}

/// Fritsch–Carlson-admissible tangent at knot `k`. `odd_origin`: knot 0 is the centre of an odd
/// curve, so its left neighbour is the mirror of knot 1.
fn tangent(xs: &[f64], ys: &[f64], k: usize, odd_origin: bool) -> f64 {
    let n = xs.len();
    if n < 2 {
        return 0.0;
    }
    if n == 2 {
        return secant(xs, ys, 0);
    }
    let harmonic = |h0: f64, h1: f64, d0: f64, d1: f64| -> f64 {
        if d0 * d1 <= 0.0 {
            0.0
        } else {
            let w1 = 2.0 * h1 + h0;
            let w2 = h1 + 2.0 * h0;
            (w1 + w2) / (w1 / d0 + w2 / d1)
        }
    };
    let end = |h0: f64, h1: f64, d0: f64, d1: f64| -> f64 {
        // h0, d0: end segment; h1, d1: its neighbour.
        let m = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
        if m * d0 <= 0.0 {
            0.0
        } else if d0 * d1 < 0.0 && m.abs() > 3.0 * d0.abs() {
            3.0 * d0
        } else {
            m
        }
    };
    if k == 0 {
        let (h0, d0) = (xs[1] - xs[0], secant(xs, ys, 0));
        if odd_origin {
            return harmonic(h0, h0, d0, d0);
        }
        end(h0, xs[2] - xs[1], d0, secant(xs, ys, 1))
    } else if k == n - 1 {
        end(
            xs[n - 1] - xs[n - 2],
            xs[n - 2] - xs[n - 3],
            secant(xs, ys, n - 2),
            secant(xs, ys, n - 3),
        )
    } else {
        harmonic(
            xs[k] - xs[k - 1],
            xs[k + 1] - xs[k],
            secant(xs, ys, k - 1),
            secant(xs, ys, k),
        )
    }
}

/// Number of knots `<= x` (`xs` increasing). Characteristic tables are short, and the point
/// moves between segments unpredictably from call to call: counting every knot without branches
/// (vectorised) beats a binary search's mispredicted branches up to a few dozen knots.
#[inline]
fn knots_at_or_below(xs: &[f64], x: f64) -> usize {
    if xs.len() <= 32 {
        xs.iter().map(|v| usize::from(*v <= x)).sum()
    } else {
        xs.partition_point(|v| *v <= x)
    }
}

/// The interval k (0 ≤ k ≤ n − 2) of a table with n ≥ 2 strictly increasing knots that holds
/// `x` inside the table (`xs[k] ≤ x < xs[k + 1]`, the last interval also for x at the last
/// knot; 0 for NaN). With `last`, its interval is tried first and updated when another one
/// holds `x`: for strictly increasing knots the same interval as the search, two comparisons
/// instead of one per knot when `x` stays in it.
#[inline]
fn interval(xs: &[f64], x: f64, last: Option<&AtomicU32>) -> usize {
    let n = xs.len();
    let search = || knots_at_or_below(xs, x).saturating_sub(1).min(n - 2);
    let Some(last) = last else {
        return search();
    };
    let k = last.load(Relaxed) as usize;
    if k + 2 <= n && xs[k] <= x && (k + 2 == n || x < xs[k + 1]) {
        return k;
    }
    let k = search();
    last.store(k as u32, Relaxed);
    k
}

/// Interpolate inside (or extrapolate linearly beyond) a table; returns value and derivative.
/// `odd_origin` as in [`tangent`]; `last` as in [`interval`].
fn table_eval(
    xs: &[f64],
    ys: &[f64],
    interp: Interpolation,
    x: f64,
    odd_origin: bool,
    last: Option<&AtomicU32>,
) -> (f64, f64) {
    let n = xs.len().min(ys.len());
    let (xs, ys) = (&xs[..n], &ys[..n]);
    if n == 0 {
        return (0.0, 0.0);
    }
    if n == 1 {
        return (ys[0], 0.0);
    }
    if x < xs[0] || x > xs[n - 1] {
        // Linear extrapolation with end slope/tangent.
        let (k, slope) = if x < xs[0] {
            (
                0,
                match interp {
                    Interpolation::Linear => secant(xs, ys, 0),
                    Interpolation::Smooth => tangent(xs, ys, 0, odd_origin),
                },
            )
        } else {
            (
                n - 1,
                match interp {
                    Interpolation::Linear => secant(xs, ys, n - 2),
                    Interpolation::Smooth => tangent(xs, ys, n - 1, odd_origin),
                },
            )
        };
        return (ys[k] + slope * (x - xs[k]), slope);
    }
    let k = interval(xs, x, last);
    let h = xs[k + 1] - xs[k];
    let d = secant(xs, ys, k);
    match interp {
        Interpolation::Linear => (ys[k] + d * (x - xs[k]), d),
        Interpolation::Smooth => {
            let m0 = tangent(xs, ys, k, odd_origin);
            let m1 = tangent(xs, ys, k + 1, odd_origin);
            let t = (x - xs[k]) / h;
            let t2 = t * t;
            let t3 = t2 * t;
            let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
            let h10 = t3 - 2.0 * t2 + t;
            let h01 = -2.0 * t3 + 3.0 * t2;
            let h11 = t3 - t2;
            let f = h00 * ys[k] + h10 * h * m0 + h01 * ys[k + 1] + h11 * h * m1;
            let dh00 = 6.0 * t2 - 6.0 * t;
            let dh10 = 3.0 * t2 - 4.0 * t + 1.0;
            let dh01 = -6.0 * t2 + 6.0 * t;
            let dh11 = 3.0 * t2 - 2.0 * t;
            let df = (dh00 * ys[k] + dh01 * ys[k + 1]) / h + dh10 * m0 + dh11 * m1;
            (f, df)
        }
    }
}

impl Curve {
    /// Valid abscissa range `(min, max)` after symmetry (`(-x_max, x_max)` for odd curves).
    pub fn range(&self) -> (f64, f64) {
        let n = self.x.len().min(self.y.len());
        if n == 0 {
            return (0.0, 0.0);
        }
        let hi = self.x[n - 1];
        match self.symmetry {
            Symmetry::None => (self.x[0], hi),
            Symmetry::Odd => (-hi, hi),
        }
    }

    /// Value and derivative `(f(x), f'(x))`. Out of range, `extrapolation = "error"` holds the end
    /// value and records `x` in [`Curve::out_of_range`] (see [`check_curve_ranges`]). Never
    /// allocates.
    pub fn eval(&self, x: f64) -> (f64, f64) {
        let (sign, xa) = match self.symmetry {
            Symmetry::Odd if x < 0.0 => (-1.0, -x),
            _ => (1.0, x),
        };
        let odd = self.symmetry == Symmetry::Odd;
        let n = self.x.len().min(self.y.len());
        if n == 0 {
            return (0.0, 0.0);
        }
        let (lo, hi) = (self.x[0], self.x[n - 1]);
        let (f, df) = if (xa < lo || xa > hi) && self.extrapolation != Extrapolation::Linear {
            if self.extrapolation == Extrapolation::Error {
                self.out_of_range.record(x);
            }
            let end = if xa < lo { 0 } else { n - 1 };
            (self.y[end], 0.0)
        } else {
            let last = Some(&self.segment_knots.1);
            table_eval(&self.x, &self.y, self.interpolation, xa, odd, last)
        };
        // f(-x) = -f(x)  =>  f'(-x) = f'(x).
        (sign * f, df)
    }

    /// The slope segment of the characteristic at `x`: for `linear` interpolation the number of
    /// interior knots at or below x (knots belong to the segment on their right, as in
    /// [`Curve::eval`]) at which the slope changes by more than the factor `min_ratio` (or
    /// changes sign); `min_ratio = 1` counts every change of slope. Smooth curves (C1) are one
    /// segment inside the table. Beyond the table, linear extrapolation continues the end
    /// segment, `constant` and `error` extrapolation (slope 0) are segments of their own. Odd
    /// curves use |x| (f'(−x) = f'(x)). Within one segment no knot changes the slope by more
    /// than `min_ratio` (gradual changes may add up): a change of segment is a breakpoint
    /// crossing (the real-time stepper splits the step there). No division, never allocates.
    #[inline]
    pub fn segment(&self, x: f64, min_ratio: f64) -> u32 {
        let xa = match self.symmetry {
            Symmetry::Odd => x.abs(),
            Symmetry::None => x,
        };
        let n = self.x.len().min(self.y.len());
        if n < 2 {
            return 0;
        }
        let (lo, hi) = (self.x[0], self.x[n - 1]);
        if self.extrapolation != Extrapolation::Linear && (xa < lo || xa > hi) {
            return if xa < lo { u32::MAX } else { u32::MAX - 1 };
        }
        if self.interpolation == Interpolation::Smooth {
            return 0;
        }
        let (ratio, knots) = self
            .segment_knots
            .0
            .get_or_init(|| (min_ratio, self.breakpoints(min_ratio)));
        if *ratio == min_ratio {
            knots.iter().map(|&k| u32::from(k <= xa)).sum()
        } else {
            self.breakpoints(min_ratio)
                .iter()
                .map(|&k| u32::from(k <= xa))
                .sum()
        }
    }

    /// The inner knots at which the slope changes by more than `min_ratio` or changes sign:
    /// the knots [`Curve::segment`] counts for `linear` interpolation (also read by generated
    /// code that reproduces the segments, `sprung accelerate`). Allocates.
    pub fn breakpoints(&self, min_ratio: f64) -> Vec<f64> {
        let n = self.x.len().min(self.y.len());
        let (xs, ys) = (&self.x[..n], &self.y[..n]);
        (1..n.saturating_sub(1))
            .filter(|&j| {
                let (dxa, dya) = (xs[j] - xs[j - 1], ys[j] - ys[j - 1]);
                let (dxb, dyb) = (xs[j + 1] - xs[j], ys[j + 1] - ys[j]);
                // |s_a| dx_a dx_b and |s_b| dx_a dx_b (dx > 0): the slope ratio without a division.
                let (pa, pb) = (dya.abs() * dxb, dyb.abs() * dxa);
                dya * dyb < 0.0 || pa > min_ratio * pb || pb > min_ratio * pa
            })
            .map(|j| xs[j])
            .collect()
    }

    /// Like [`Curve::eval`], but an evaluation outside the table of a curve with
    /// `extrapolation = "error"` returns [`OutOfRange`].
    pub fn eval_checked(&self, x: f64) -> Result<(f64, f64), OutOfRange> {
        if self.extrapolation == Extrapolation::Error {
            let (min, max) = self.range();
            if !(x >= min && x <= max) {
                return Err(OutOfRange {
                    curve: self.name.clone(),
                    x,
                    min,
                    max,
                });
            }
        }
        Ok(self.eval(x))
    }
}

impl Signal {
    /// Value u(t). An unresolved `csv` signal (only possible when not loaded through
    /// [`crate::load()`]) evaluates to 0.
    pub fn value(&self, t: f64) -> f64 {
        self.eval(t).0
    }

    /// Rate du/dt (0 at steps and outside ramps/tables; at a kink the right-hand derivative).
    pub fn rate(&self, t: f64) -> f64 {
        self.eval(t).1
    }

    /// Value and rate together.
    pub fn eval(&self, t: f64) -> (f64, f64) {
        match self {
            Signal::Constant { value } => (*value, 0.0),
            Signal::Step {
                time,
                before,
                after,
            } => {
                if t < *time {
                    (*before, 0.0)
                } else {
                    (*after, 0.0)
                }
            }
            Signal::Ramp {
                start_time,
                end_time,
                from,
                to,
            } => {
                if t < *start_time {
                    (*from, 0.0)
                } else if t >= *end_time {
                    (*to, 0.0)
                } else {
                    let slope = (to - from) / (end_time - start_time);
                    (from + slope * (t - start_time), slope)
                }
            }
            Signal::Sine {
                amplitude,
                frequency_hz,
                phase_deg,
                offset,
                start_time,
            } => {
                if t < *start_time {
                    (*offset, 0.0)
                } else {
                    let w = 2.0 * std::f64::consts::PI * frequency_hz;
                    let arg = w * (t - start_time) + phase_deg.to_radians();
                    let (s, c) = arg.sin_cos();
                    (offset + amplitude * s, amplitude * w * c)
                }
            }
            Signal::Table {
                t: ts,
                value,
                interpolation,
            } => {
                let n = ts.len().min(value.len());
                if n == 0 {
                    return (0.0, 0.0);
                }
                if t < ts[0] {
                    (value[0], 0.0)
                } else if t >= ts[n - 1] {
                    (value[n - 1], 0.0)
                } else {
                    table_eval(ts, value, *interpolation, t, false, None)
                }
            }
            Signal::Runtime { default } => (*default, 0.0),
            Signal::Csv { .. } => (0.0, 0.0),
        }
    }

    /// Times at which the value jumps (step times; the start of a sine whose phase makes it
    /// start away from the offset). Integrators should stop/restart there.
    pub fn discontinuities(&self) -> Vec<f64> {
        match self {
            Signal::Step {
                time,
                before,
                after,
            } if before != after => vec![*time],
            Signal::Sine {
                amplitude,
                phase_deg,
                start_time,
                ..
            } if *amplitude != 0.0 && phase_deg.to_radians().sin().abs() > 1e-15 => {
                vec![*start_time]
            }
            _ => Vec::new(),
        }
    }

    /// Times at which the value is continuous but the rate jumps (ramp ends, table knots of a
    /// linear table, table ends, sine start).
    pub fn kinks(&self) -> Vec<f64> {
        match self {
            Signal::Ramp {
                start_time,
                end_time,
                from,
                to,
            } if from != to => {
                vec![*start_time, *end_time]
            }
            Signal::Sine {
                amplitude,
                frequency_hz,
                start_time,
                ..
            } if *amplitude != 0.0 && *frequency_hz != 0.0 => {
                vec![*start_time]
            }
            Signal::Table {
                t,
                value,
                interpolation,
            } => {
                let n = t.len().min(value.len());
                if n < 2 {
                    return Vec::new();
                }
                match interpolation {
                    Interpolation::Linear => t[..n].to_vec(),
                    Interpolation::Smooth => vec![t[0], t[n - 1]],
                }
            }
            _ => Vec::new(),
        }
    }
}
