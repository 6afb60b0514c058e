//! Accuracy metrics of a result against a reference solution (document 000, section 5.2,
//! Table 3: "auf den Mittelwert normierte mittlere Fehlerquadrate für den in Bild 7
//! dargestellten Zeitbereich").
//!
//! Over a time window `[t0, t1]` (both ends inclusive) the reference `x_ref(t)` is interpolated
//! linearly onto the result's own time points `t_i` inside the window (on identical grids the
//! interpolation returns the reference samples exactly). With `e_i = x(t_i) - x_ref(t_i)` and
//! `N` points:
//!
//! * `NMSE  = mean(e²) / mean(x_ref)²`
//! * `NRMSE = sqrt(mean(e²)) / |mean(x_ref)|`  (= `sqrt(NMSE)`)
//! * `max |e|` and the time where it occurs.
//!
//! Both normalised errors divide by the mean of the reference over the window, as stated in
//! the paper; a reference whose mean is zero (or negligible against its RMS) cannot be
//! normalised that way and is reported as an error instead of producing `inf`.

use std::fmt::Write as _;

use crate::reader::ResultSet;

/// Relative size of |mean| against RMS of the reference below which the mean is treated as 0.
const ZERO_MEAN_RELATIVE: f64 = 1e-12;

/// A closed time interval `[t0, t1]` in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Start time (inclusive).
    pub t0: f64,
    /// End time (inclusive).
    pub t1: f64,
}

impl Window {
    /// The window `[t0, t1]`.
    pub fn new(t0: f64, t1: f64) -> Self {
        Window { t0, t1 }
    }

    /// The whole time axis.
    pub fn all() -> Self {
        Window {
            t0: f64::NEG_INFINITY,
            t1: f64::INFINITY,
        }
    }

    /// `true` if `t0 <= t <= t1`.
    pub fn contains(&self, t: f64) -> bool {
        self.t0 <= t && t <= self.t1
    }
}

/// Errors of a comparison.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    /// Invalid input of a metric or adjustment (message says what and how to fix it).
    #[error("{message}")]
    Invalid {
        /// What is wrong.
        message: String,
    },
    /// A requested channel is missing.
    #[error("channel '{channel}' is missing in the {which}; available channels: {available}")]
    MissingChannel {
        /// Requested channel.
        channel: String,
        /// `result` or `reference`.
        which: &'static str,
        /// Comma-separated list of the channels that exist.
        available: String,
    },
    /// The window is not a valid interval.
    #[error("invalid time window [{t0}, {t1}]: need finite or infinite bounds with t0 <= t1")]
    InvalidWindow {
        /// Start.
        t0: f64,
        /// End.
        t1: f64,
    },
    /// No result time point lies inside the window.
    #[error(
        "channel '{channel}': no result time points inside the window [{t0}, {t1}] (result covers \
         [{first}, {last}]); choose a window inside the simulated time span"
    )]
    EmptyWindow {
        /// Channel.
        channel: String,
        /// Window start.
        t0: f64,
        /// Window end.
        t1: f64,
        /// First result time (NaN if empty).
        first: f64,
        /// Last result time (NaN if empty).
        last: f64,
    },
    /// The window reaches outside the reference time span (no extrapolation is done).
    #[error(
        "channel '{channel}': result time {t} s lies outside the reference data [{ref_first}, \
         {ref_last}] s; shrink the window to the reference time span"
    )]
    OutsideReference {
        /// Channel.
        channel: String,
        /// Offending result time.
        t: f64,
        /// First reference time.
        ref_first: f64,
        /// Last reference time.
        ref_last: f64,
    },
    /// The reference mean over the window is zero, so mean-normalised errors are undefined.
    #[error(
        "channel '{channel}': the reference mean over the window is {mean} (RMS {rms}), so errors \
         normalised by the mean are undefined; use max_abs_error / rms_error or a window where the \
         signal has a non-zero mean"
    )]
    ZeroMeanReference {
        /// Channel.
        channel: String,
        /// Mean of the reference over the window.
        mean: f64,
        /// RMS of the reference over the window.
        rms: f64,
    },
    /// Time and value vectors have different lengths.
    #[error(
        "channel '{channel}' of the {which}: {values} values for {times} time points; both must \
         have the same length"
    )]
    LengthMismatch {
        /// Channel.
        channel: String,
        /// `result` or `reference`.
        which: &'static str,
        /// Time points.
        times: usize,
        /// Values.
        values: usize,
    },
    /// Time is not non-decreasing.
    #[error(
        "time of the {which} decreases at index {index} ({prev} -> {next}); time must be sorted"
    )]
    UnsortedTime {
        /// `result` or `reference`.
        which: &'static str,
        /// Index of the offending point.
        index: usize,
        /// Previous time.
        prev: f64,
        /// Offending time.
        next: f64,
    },
    /// A NaN or infinite value was met inside the window.
    #[error("channel '{channel}' of the {which} is not finite ({value}) at t = {t} s")]
    NonFinite {
        /// Channel.
        channel: String,
        /// `result` or `reference`.
        which: &'static str,
        /// Time.
        t: f64,
        /// Value.
        value: f64,
    },
}

/// Error measures of one channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelError {
    /// Channel name.
    pub channel: String,
    /// Unit of the channel (from the result, else the reference; may be empty).
    pub unit: String,
    /// Number of result time points in the window.
    pub points: usize,
    /// Mean of the (interpolated) reference over the window.
    pub mean_reference: f64,
    /// Root mean square error `sqrt(mean(e²))`.
    pub rms_error: f64,
    /// `mean(e²) / mean(x_ref)²`.
    pub nmse: f64,
    /// `sqrt(mean(e²)) / |mean(x_ref)|`.
    pub nrmse: f64,
    /// `max |e|`.
    pub max_abs_error: f64,
    /// Time of the maximum absolute error.
    pub t_max_abs_error: f64,
}

fn check_sorted(which: &'static str, t: &[f64]) -> Result<(), MetricsError> {
    for (i, w) in t.windows(2).enumerate() {
        // `!(a <= b)` also rejects NaN times.
        if w[0].partial_cmp(&w[1]).is_none_or(|o| o.is_gt()) {
            return Err(MetricsError::UnsortedTime {
                which,
                index: i + 1,
                prev: w[0],
                next: w[1],
            });
        }
    }
    Ok(())
}

/// Linear interpolation of `(t_ref, x_ref)` at `t`; `None` outside `[t_ref[0], t_ref[last]]`.
/// `t_ref` must be sorted; at a repeated time (a jump) the last sample of that time is used.
pub fn interpolate_linear(t_ref: &[f64], x_ref: &[f64], t: f64) -> Option<f64> {
    let n = t_ref.len().min(x_ref.len());
    if n == 0 || !(t >= t_ref[0] && t <= t_ref[n - 1]) {
        return None;
    }
    // First index with t_ref > t; k >= 1 because t >= t_ref[0].
    let k = t_ref[..n].partition_point(|&tr| tr <= t);
    if k == n {
        return Some(x_ref[n - 1]);
    }
    let (ta, tb) = (t_ref[k - 1], t_ref[k]);
    let (xa, xb) = (x_ref[k - 1], x_ref[k]);
    if t == ta {
        return Some(xa);
    }
    let s = (t - ta) / (tb - ta);
    Some(xa + s * (xb - xa))
}

/// Error measures of one channel given as raw vectors; see the module documentation.
pub fn channel_error(
    channel: &str,
    t: &[f64],
    x: &[f64],
    t_ref: &[f64],
    x_ref: &[f64],
    window: Window,
) -> Result<ChannelError, MetricsError> {
    if window.t0.is_nan() || window.t1.is_nan() || window.t0 > window.t1 {
        return Err(MetricsError::InvalidWindow {
            t0: window.t0,
            t1: window.t1,
        });
    }
    for (which, tt, xx) in [("result", t, x), ("reference", t_ref, x_ref)] {
        if tt.len() != xx.len() {
            return Err(MetricsError::LengthMismatch {
                channel: channel.to_string(),
                which,
                times: tt.len(),
                values: xx.len(),
            });
        }
        check_sorted(which, tt)?;
    }
    let lo = t.partition_point(|&ti| ti < window.t0);
    let hi = t.partition_point(|&ti| ti <= window.t1);
    if lo >= hi {
        return Err(MetricsError::EmptyWindow {
            channel: channel.to_string(),
            t0: window.t0,
            t1: window.t1,
            first: t.first().copied().unwrap_or(f64::NAN),
            last: t.last().copied().unwrap_or(f64::NAN),
        });
    }
    let identical = t.len() == t_ref.len() && t == t_ref;
    let (ref_first, ref_last) = (
        t_ref.first().copied().unwrap_or(f64::NAN),
        t_ref.last().copied().unwrap_or(f64::NAN),
    );
    // Tolerate rounding of the end points (e.g. 9.999999999999 vs 10).
    let tol = 1e-9 * (ref_last - ref_first).abs().max(1e-300);
    let mut sum_sq = 0.0;
    let mut sum_ref = 0.0;
    let mut sum_ref_sq = 0.0;
    let mut max_abs = 0.0;
    let mut t_max = t[lo];
    for i in lo..hi {
        let ti = t[i];
        let xr = if identical {
            x_ref[i]
        } else {
            let tc = if ti < ref_first && ti >= ref_first - tol {
                ref_first
            } else if ti > ref_last && ti <= ref_last + tol {
                ref_last
            } else {
                ti
            };
            interpolate_linear(t_ref, x_ref, tc).ok_or_else(|| MetricsError::OutsideReference {
                channel: channel.to_string(),
                t: ti,
                ref_first,
                ref_last,
            })?
        };
        if !xr.is_finite() {
            return Err(MetricsError::NonFinite {
                channel: channel.to_string(),
                which: "reference",
                t: ti,
                value: xr,
            });
        }
        if !x[i].is_finite() {
            return Err(MetricsError::NonFinite {
                channel: channel.to_string(),
                which: "result",
                t: ti,
                value: x[i],
            });
        }
        let e = x[i] - xr;
        sum_sq += e * e;
        sum_ref += xr;
        sum_ref_sq += xr * xr;
        if e.abs() > max_abs {
            max_abs = e.abs();
            t_max = ti;
        }
    }
    let n = (hi - lo) as f64;
    let mse = sum_sq / n;
    let mean_ref = sum_ref / n;
    let rms_ref = (sum_ref_sq / n).sqrt();
    if mean_ref == 0.0 || mean_ref.abs() <= ZERO_MEAN_RELATIVE * rms_ref {
        return Err(MetricsError::ZeroMeanReference {
            channel: channel.to_string(),
            mean: mean_ref,
            rms: rms_ref,
        });
    }
    Ok(ChannelError {
        channel: channel.to_string(),
        unit: String::new(),
        points: hi - lo,
        mean_reference: mean_ref,
        rms_error: mse.sqrt(),
        nmse: mse / (mean_ref * mean_ref),
        nrmse: mse.sqrt() / mean_ref.abs(),
        max_abs_error: max_abs,
        t_max_abs_error: t_max,
    })
}

fn available(set: &ResultSet) -> String {
    let names: Vec<&str> = set.channel_names().collect();
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

/// Compares `channels` of `result` against `reference` over `window`. An empty `channels` list
/// means every channel of `result`.
pub fn compare(
    result: &ResultSet,
    reference: &ResultSet,
    channels: &[&str],
    window: Window,
) -> Result<Vec<ChannelError>, MetricsError> {
    let all: Vec<&str>;
    let channels = if channels.is_empty() {
        all = result.channel_names().collect();
        &all[..]
    } else {
        channels
    };
    let mut out = Vec::with_capacity(channels.len());
    for &name in channels {
        let x = result
            .column(name)
            .ok_or_else(|| MetricsError::MissingChannel {
                channel: name.to_string(),
                which: "result",
                available: available(result),
            })?;
        let x_ref = reference
            .column(name)
            .ok_or_else(|| MetricsError::MissingChannel {
                channel: name.to_string(),
                which: "reference",
                available: available(reference),
            })?;
        let mut err = channel_error(name, &result.time, x, &reference.time, x_ref, window)?;
        let unit = result.unit(name).unwrap_or("");
        err.unit = if unit.is_empty() {
            reference.unit(name).unwrap_or("").to_string()
        } else {
            unit.to_string()
        };
        out.push(err);
    }
    Ok(out)
}

/// Formats comparison results as a plain-text table for the terminal.
pub fn format_comparison_table(errors: &[ChannelError]) -> String {
    let headers = [
        "channel",
        "unit",
        "points",
        "mean(ref)",
        "RMS error",
        "NMSE",
        "NRMSE",
        "max |error|",
        "at t [s]",
    ];
    let rows: Vec<[String; 9]> = errors
        .iter()
        .map(|e| {
            [
                e.channel.clone(),
                if e.unit.is_empty() {
                    "-".to_string()
                } else {
                    e.unit.clone()
                },
                e.points.to_string(),
                format!("{:.4e}", e.mean_reference),
                format!("{:.4e}", e.rms_error),
                format!("{:.3e}", e.nmse),
                format!("{:.3e}", e.nrmse),
                format!("{:.4e}", e.max_abs_error),
                format!("{:.4}", e.t_max_abs_error),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    let line = |s: &mut String, cells: &[&str]| {
        for (k, (c, w)) in cells.iter().zip(widths).enumerate() {
            if k > 0 {
                s.push_str("  ");
            }
            if k < 2 {
                let _ = write!(s, "{c:<w$}");
            } else {
                let _ = write!(s, "{c:>w$}");
            }
        }
        let trimmed = s.trim_end().len();
        s.truncate(trimmed);
        s.push('\n');
    };
    line(&mut s, &headers);
    let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    s.push_str(&"-".repeat(total));
    s.push('\n');
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&mut s, &cells);
    }
    s
}
