//! Step-response metrics of one channel, and adjustments (unit scale, offset, datum, time
//! shift) that make an external reference comparable with a result.
//!
//! Definitions of [`step_response`] (all times absolute, in the time unit of the file):
//! * **initial value** `y0`: the sample at the step time `t_step` (linear interpolation;
//!   default `t_step` = first sample);
//! * **final value** `y_f`: the mean of the samples in the last `final_fraction` of the record
//!   (default 5 % of the duration after `t_step`);
//! * **peak**: the sample farthest from `y0` in the direction of `y_f - y0` (the largest
//!   `|y - y0|` when `y_f = y0`), its time, and the overshoot `(peak - y_f) / (y_f - y0)` in %;
//! * **period**: the mean interval between successive *upward crossings of the final value*
//!   (crossing times by linear interpolation between samples), over the crossings after
//!   `t_step` and before the response last leaves ±[`PERIOD_FLOOR`]·|y_f - y0| around `y_f`
//!   (later crossings are rounding noise); needs at least two crossings, else `None`;
//! * **settling time**: the first time after which `|y - y_f|` stays within
//!   `band · |y_f - y0|` (default band 2 %) until the end, measured from `t_step`, with the
//!   band entry interpolated between the last sample outside and the next sample; `None` if the
//!   last sample is outside the band (not settled within the record).

use crate::metrics::{MetricsError, interpolate_linear};
use crate::reader::ResultSet;

/// Deviation from the final value, relative to the step size, below which crossings of the
/// final value no longer count for the period.
pub const PERIOD_FLOOR: f64 = 1e-3;

/// Options of [`step_response`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOptions {
    /// Step time (None: the first sample).
    pub t_step: Option<f64>,
    /// Fraction of the record after `t_step` averaged for the final value (0 < f <= 1).
    pub final_fraction: f64,
    /// Settling band relative to the step size `|y_f - y0|` (e.g. 0.02 = 2 %).
    pub band: f64,
}

impl Default for StepOptions {
    fn default() -> Self {
        StepOptions {
            t_step: None,
            final_fraction: 0.05,
            band: 0.02,
        }
    }
}

/// Step-response metrics; see the module documentation for the definitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResponse {
    /// Step time used.
    pub t_step: f64,
    /// Value at the step time.
    pub initial: f64,
    /// Mean over the final part of the record.
    pub final_value: f64,
    /// Peak value.
    pub peak: f64,
    /// Time of the peak (absolute).
    pub peak_time: f64,
    /// Overshoot in % of the step size (NaN when the step size is 0).
    pub overshoot_percent: f64,
    /// Mean interval between upward crossings of the final value.
    pub period: Option<f64>,
    /// Time from `t_step` until the response stays in the settling band.
    pub settling_time: Option<f64>,
}

fn bad(message: String) -> MetricsError {
    MetricsError::Invalid { message }
}

/// Step-response metrics of `y(time)`; errors for mismatched lengths, fewer than 3 samples
/// after the step time, non-finite samples or invalid options.
pub fn step_response(
    time: &[f64],
    y: &[f64],
    opts: StepOptions,
) -> Result<StepResponse, MetricsError> {
    if time.len() != y.len() {
        return Err(bad(format!(
            "{} time points but {} values",
            time.len(),
            y.len()
        )));
    }
    if !(opts.final_fraction > 0.0 && opts.final_fraction <= 1.0) {
        return Err(bad(format!(
            "final fraction {} is outside (0, 1]",
            opts.final_fraction
        )));
    }
    if !(opts.band > 0.0 && opts.band < 1.0) {
        return Err(bad(format!(
            "settling band {} is outside (0, 1)",
            opts.band
        )));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(bad(format!(
            "value {} at t = {} is not finite",
            y[i], time[i]
        )));
    }
    let t_step = opts.t_step.unwrap_or(*time.first().unwrap_or(&0.0));
    let start = time.partition_point(|&t| t < t_step);
    if time.len().saturating_sub(start) < 3 {
        return Err(bad(format!(
            "fewer than 3 samples at or after the step time {t_step}"
        )));
    }
    let (ts, ys) = (&time[start..], &y[start..]);
    let initial = interpolate_linear(time, y, t_step).unwrap_or(ys[0]);
    let t_last = ts[ts.len() - 1];
    let t_final = t_last - opts.final_fraction * (t_last - t_step);
    let tail: Vec<f64> = ts
        .iter()
        .zip(ys)
        .filter(|(t, _)| **t >= t_final)
        .map(|(_, v)| *v)
        .collect();
    let final_value = tail.iter().sum::<f64>() / tail.len() as f64;
    let step = final_value - initial;
    let dir = if step > 0.0 {
        1.0
    } else if step < 0.0 {
        -1.0
    } else {
        0.0
    };
    let mut k_peak = 0;
    let mut best = f64::NEG_INFINITY;
    for (k, v) in ys.iter().enumerate() {
        let score = if dir == 0.0 {
            (v - initial).abs()
        } else {
            dir * (v - initial)
        };
        if score > best {
            best = score;
            k_peak = k;
        }
    }
    let peak = ys[k_peak];
    let overshoot_percent = if step != 0.0 {
        100.0 * (peak - final_value) / step
    } else {
        f64::NAN
    };
    // Upward crossings of the final value, up to the last sample outside the noise floor.
    let floor = PERIOD_FLOOR * step.abs();
    let last_significant = ys
        .iter()
        .rposition(|v| (v - final_value).abs() > floor)
        .map_or(0, |k| (k + 1).min(ys.len() - 1));
    let mut crossings = Vec::new();
    for k in 1..=last_significant {
        let (a, b) = (ys[k - 1] - final_value, ys[k] - final_value);
        if a < 0.0 && b >= 0.0 {
            crossings.push(ts[k - 1] + (ts[k] - ts[k - 1]) * (-a) / (b - a));
        }
    }
    let period = (crossings.len() >= 2)
        .then(|| (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64);
    let band = opts.band * step.abs();
    let settling_time = if step == 0.0 {
        None
    } else {
        let outside = |v: f64| (v - final_value).abs() > band;
        match ys.iter().rposition(|v| outside(*v)) {
            None => Some(0.0),
            Some(k) if k + 1 == ys.len() => None,
            Some(k) => {
                // Interpolate the band entry between sample k (outside) and k+1 (inside).
                let (a, b) = ((ys[k] - final_value).abs(), (ys[k + 1] - final_value).abs());
                let frac = if a > b { (a - band) / (a - b) } else { 1.0 };
                Some(ts[k] + frac.clamp(0.0, 1.0) * (ts[k + 1] - ts[k]) - t_step)
            }
        }
    };
    Ok(StepResponse {
        t_step,
        initial,
        final_value,
        peak,
        peak_time: ts[k_peak],
        overshoot_percent,
        period,
        settling_time,
    })
}

/// A per-channel or global setting: `None` channel = every channel.
pub type ChannelValue = (Option<String>, f64);

/// Adjustments applied to a result set (typically an external reference) before a comparison:
/// `time' = time + time_shift`, `x' = x · scale + offset` (per channel or global; a
/// channel-specific entry wins over a global one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Adjustment {
    /// Added to every time.
    pub time_shift: f64,
    /// Factors (unit conversion, e.g. 1e-3 for mm to m).
    pub scale: Vec<ChannelValue>,
    /// Added after scaling.
    pub offset: Vec<ChannelValue>,
}

fn lookup(list: &[ChannelValue], channel: &str, default: f64) -> f64 {
    list.iter()
        .find(|(c, _)| c.as_deref() == Some(channel))
        .or_else(|| list.iter().find(|(c, _)| c.is_none()))
        .map_or(default, |(_, v)| *v)
}

impl Adjustment {
    /// `true` if nothing changes.
    pub fn is_identity(&self) -> bool {
        self.time_shift == 0.0 && self.scale.is_empty() && self.offset.is_empty()
    }

    /// Applies the adjustment; a channel named in `scale`/`offset` that `set` lacks is an error.
    pub fn apply(&self, set: &mut ResultSet, which: &'static str) -> Result<(), MetricsError> {
        for (c, v) in self.scale.iter().chain(&self.offset) {
            if !v.is_finite() {
                return Err(bad(format!("scale/offset {v} is not finite")));
            }
            if let Some(c) = c
                && set.column(c).is_none()
            {
                return Err(MetricsError::MissingChannel {
                    channel: c.clone(),
                    which,
                    available: set.channel_names().collect::<Vec<_>>().join(", "),
                });
            }
        }
        if !self.time_shift.is_finite() {
            return Err(bad(format!("time shift {} is not finite", self.time_shift)));
        }
        for t in &mut set.time {
            *t += self.time_shift;
        }
        for col in &mut set.columns {
            let s = lookup(&self.scale, &col.name, 1.0);
            let o = lookup(&self.offset, &col.name, 0.0);
            if s != 1.0 || o != 0.0 {
                for v in &mut col.values {
                    *v = *v * s + o;
                }
            }
        }
        Ok(())
    }
}

/// Subtracts from every channel its value at time `t_datum` (linear interpolation), so that
/// deflections from a datum are compared instead of absolute values. Error if `t_datum` is
/// outside the record.
pub fn subtract_datum(set: &mut ResultSet, t_datum: f64, which: &str) -> Result<(), MetricsError> {
    for col in &mut set.columns {
        let d = interpolate_linear(&set.time, &col.values, t_datum).ok_or_else(|| {
            bad(format!(
                "datum time {t_datum} is outside the time range of the {which} [{}, {}]",
                set.time.first().copied().unwrap_or(f64::NAN),
                set.time.last().copied().unwrap_or(f64::NAN)
            ))
        })?;
        for v in &mut col.values {
            *v -= d;
        }
    }
    Ok(())
}
