//! Parameter sweeps (`docs/sweeps.md`): many variants of one model, each a set of parameter
//! values ([`crate::parameters`]), run on all cores; per variant a few scalar metrics of the
//! output channels.
//!
//! * Variants come from a grid ([`grid`]: the product of axes `NAME=start:stop:count` or
//!   `NAME=v1,v2,…`) or a table ([`table_from_csv`]: one column per parameter, one row per
//!   variant).
//! * [`run_variant`] runs one: the model is recompiled from the base model with the variant's
//!   parameters ([`Model::with_parameters`]), one [`Simulation`] steps it through the facade's
//!   one run loop ([`Simulation::run_with`]) from the model's initial state (static equilibrium
//!   if the model asks for it), and the [`Metric`]s are computed from the recorded channels.
//! * [`run`] / [`run_monitored`] run all variants on a rayon pool of `threads` threads. Each
//!   variant is computed by one thread from its own compiled model and simulation, so the
//!   results do not depend on the number of threads or the order of completion (bitwise,
//!   tested). A failing variant is reported in its row ([`RunStatus::Failed`]) and does not
//!   stop the others; a stop flag ends the sweep early, keeping the finished rows.
//!
//! Metrics (`KIND:CHANNEL[:BAND]`; definitions of `sprung_io::step_response` with the step time
//! [`SweepSpec::step_time`], default the first sample):
//! `peak` (the sample farthest from the value at the step time, in the direction of the final
//! value), `overshoot` (%, of the step), `settling:CH:BAND` (time from the step time until the
//! channel stays within BAND × |final − initial| of the final value; NaN if it does not settle
//! within the run), `final` (mean over the last 5 % of the record after the step time),
//! `delta` (final − value at the step time), `max`, `min` (over the whole record).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;
use sprung_io::step_response::{StepOptions, step_response};

use crate::{Control, Error, Model, Simulation, StopReason};

/// What is computed from a channel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricKind {
    /// The sample farthest from the value at the step time (direction of the final value).
    Peak,
    /// Overshoot of the peak beyond the final value, % of the step.
    Overshoot,
    /// Settling time after the step time into the band (fraction of the step, e.g. 0.02), s.
    Settling(f64),
    /// Final value (mean over the last 5 % of the record after the step time).
    Final,
    /// Final value minus the value at the step time.
    Delta,
    /// Largest sample.
    Max,
    /// Smallest sample.
    Min,
}

/// A metric of one output channel (`KIND:CHANNEL[:BAND]`, module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// What.
    pub kind: MetricKind,
    /// Output channel name.
    pub channel: String,
}

impl Metric {
    /// Parses `peak:CH`, `overshoot:CH`, `settling:CH:BAND`, `final:CH`, `delta:CH`, `max:CH`,
    /// `min:CH`.
    pub fn parse(spec: &str) -> Result<Metric, Error> {
        let bad = |why: &str| {
            Error::Settings(format!(
                "metric '{spec}': {why}; write KIND:CHANNEL with KIND one of peak, overshoot, final, delta, max, min, or settling:CHANNEL:BAND (e.g. settling:wc_dx_L:0.02)"
            ))
        };
        let parts: Vec<&str> = spec.split(':').collect();
        let kind = parts[0].trim();
        let channel = parts.get(1).map(|c| c.trim()).unwrap_or("");
        if channel.is_empty() {
            return Err(bad("no channel"));
        }
        let kind = match (kind, parts.len()) {
            ("settling", 3) => {
                let band: f64 = parts[2]
                    .trim()
                    .parse()
                    .map_err(|_| bad("the band is not a number"))?;
                if !(band > 0.0 && band < 1.0) {
                    return Err(bad("the band must lie in (0, 1), e.g. 0.02 for 2 %"));
                }
                MetricKind::Settling(band)
            }
            ("settling", _) => return Err(bad("settling needs a band")),
            (_, n) if n != 2 => return Err(bad("too many ':'")),
            ("peak", _) => MetricKind::Peak,
            ("overshoot", _) => MetricKind::Overshoot,
            ("final", _) => MetricKind::Final,
            ("delta", _) => MetricKind::Delta,
            ("max", _) => MetricKind::Max,
            ("min", _) => MetricKind::Min,
            _ => return Err(bad(&format!("unknown kind '{kind}'"))),
        };
        Ok(Metric {
            kind,
            channel: channel.to_string(),
        })
    }

    /// Column name in the results table, e.g. `peak:wc_dx_L`, `settling:wc_dx_L:0.02`.
    pub fn label(&self) -> String {
        let k = match self.kind {
            MetricKind::Peak => "peak",
            MetricKind::Overshoot => "overshoot",
            MetricKind::Settling(b) => return format!("settling:{}:{b}", self.channel),
            MetricKind::Final => "final",
            MetricKind::Delta => "delta",
            MetricKind::Max => "max",
            MetricKind::Min => "min",
        };
        format!("{k}:{}", self.channel)
    }

    /// The metric of the record `y(time)`, with the step at `t_step` (None: first sample).
    pub fn evaluate(&self, time: &[f64], y: &[f64], t_step: Option<f64>) -> Result<f64, String> {
        match self.kind {
            MetricKind::Max => return Ok(y.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            MetricKind::Min => return Ok(y.iter().copied().fold(f64::INFINITY, f64::min)),
            _ => {}
        }
        let band = match self.kind {
            MetricKind::Settling(b) => b,
            _ => StepOptions::default().band,
        };
        let r = step_response(
            time,
            y,
            StepOptions {
                t_step,
                band,
                ..StepOptions::default()
            },
        )
        .map_err(|e| format!("{}: {e}", self.label()))?;
        Ok(match self.kind {
            MetricKind::Peak => r.peak,
            MetricKind::Overshoot => r.overshoot_percent,
            MetricKind::Settling(_) => r.settling_time.unwrap_or(f64::NAN),
            MetricKind::Final => r.final_value,
            MetricKind::Delta => r.final_value - r.initial,
            MetricKind::Max | MetricKind::Min => unreachable!("handled above"),
        })
    }
}

/// What each variant computes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSpec {
    /// Metrics per run (columns of the table).
    pub metrics: Vec<Metric>,
    /// End time, s (None: the model's `[solver] t_end`).
    pub t_end: Option<f64>,
    /// Step time of the step-response metrics, s (None: the first sample).
    pub step_time: Option<f64>,
    /// Keep every channel of every run in [`SweepRow::record`] (for per-run result files).
    pub keep_records: bool,
}

/// How a variant ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Ran to the end; the metrics are valid.
    Ok,
    /// The parameters were rejected, the run failed or a metric could not be computed.
    Failed(String),
    /// Not run or stopped because the sweep was stopped.
    Cancelled,
}

impl RunStatus {
    /// `ok`, `failed` or `cancelled`.
    pub fn label(&self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed(_) => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
    /// The failure message (empty otherwise).
    pub fn message(&self) -> &str {
        match self {
            RunStatus::Failed(m) => m,
            _ => "",
        }
    }
}

/// The channels of one run: time and one column per channel (names as the model's outputs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunRecord {
    /// Channel names.
    pub names: Vec<String>,
    /// Channel units.
    pub units: Vec<String>,
    /// Output times, s.
    pub time: Vec<f64>,
    /// One column per channel.
    pub columns: Vec<Vec<f64>>,
}

/// The result of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// Index of the variant (0-based, the order of the variants given).
    pub index: usize,
    /// Its parameter values.
    pub parameters: Vec<(String, f64)>,
    /// One value per metric of the spec (NaN unless the status is ok; settling may be NaN).
    pub metrics: Vec<f64>,
    /// How it ended.
    pub status: RunStatus,
    /// Simulated time reached, s.
    pub t_reached: f64,
    /// Every channel, when [`SweepSpec::keep_records`] is set.
    pub record: Option<RunRecord>,
}

/// Checks before a sweep: every parameter name is declared or a path of the model, every
/// metric's channel exists. Errors name the item and list what exists.
pub fn check(model: &Model, names: &[&str], spec: &SweepSpec) -> Result<(), Error> {
    for n in names {
        model
            .description()
            .check_parameter_name(n)
            .map_err(|e| Error::Model(e.to_string()))?;
    }
    let channels: Vec<String> = model
        .channel_names()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    for m in &spec.metrics {
        if !channels.contains(&m.channel) {
            return Err(Error::Settings(format!(
                "metric '{}': the model has no output channel '{}'; {}",
                m.label(),
                m.channel,
                sprung_model::parameters::suggest(&m.channel, &channels)
            )));
        }
    }
    if let Some(t) = spec.t_end
        && !(t.is_finite() && t > 0.0)
    {
        return Err(Error::Settings(format!(
            "end time {t} s: give a positive finite end time"
        )));
    }
    Ok(())
}

/// Runs one variant (module docs). Never panics on bad input: a rejected parameter value or a
/// failed run is the row's status. `stop` ends the run early (status cancelled).
pub fn run_variant(
    base: &Model,
    index: usize,
    parameters: &[(String, f64)],
    spec: &SweepSpec,
    stop: &AtomicBool,
) -> SweepRow {
    let mut row = SweepRow {
        index,
        parameters: parameters.to_vec(),
        metrics: vec![f64::NAN; spec.metrics.len()],
        status: RunStatus::Cancelled,
        t_reached: f64::NAN,
        record: None,
    };
    if stop.load(Ordering::Relaxed) {
        return row;
    }
    let values: Vec<(&str, f64)> = parameters.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    // One line per row in the table: multi-line messages (lists of problems) are joined.
    let fail = |mut row: SweepRow, e: String| {
        let one_line: Vec<&str> = e.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        row.status = RunStatus::Failed(one_line.join(" "));
        row
    };
    let model = match base.with_parameters(&values) {
        Ok(m) => Arc::new(m),
        Err(e) => return fail(row, e.to_string()),
    };
    let settings = model.default_settings();
    let t_end = spec.t_end.unwrap_or(settings.t_end);
    let mut sim = match Simulation::with_settings(model.clone(), settings.clone()) {
        Ok(s) => s,
        Err(e) => return fail(row, e.to_string()),
    };
    if model.description().initial_state.kind == sprung_model::InitialStateKind::Equilibrium
        && let Err(e) = sim.equilibrium()
    {
        return fail(row, format!("initial static equilibrium: {e}"));
    }
    // Record the channels the metrics need (all of them for per-run files).
    let names: Vec<(String, String)> = model
        .channel_names()
        .iter()
        .map(|(n, u)| (n.to_string(), u.to_string()))
        .collect();
    let wanted: Vec<usize> = if spec.keep_records {
        (0..names.len()).collect()
    } else {
        let mut w: Vec<usize> = spec
            .metrics
            .iter()
            .filter_map(|m| names.iter().position(|(n, _)| *n == m.channel))
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    let samples = ((t_end - sim.time()) / settings.output_interval)
        .ceil()
        .max(0.0) as usize
        + 2;
    let mut time = Vec::with_capacity(samples);
    let mut columns: Vec<Vec<f64>> = wanted.iter().map(|_| Vec::with_capacity(samples)).collect();
    let report = sim.run_with(&settings, t_end, &mut |t, values| {
        time.push(t);
        for (c, &i) in columns.iter_mut().zip(&wanted) {
            c.push(values[i]);
        }
        if stop.load(Ordering::Relaxed) {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    row.t_reached = report.summary.t_reached;
    if spec.keep_records {
        row.record = Some(RunRecord {
            names: names.iter().map(|(n, _)| n.clone()).collect(),
            units: names.iter().map(|(_, u)| u.clone()).collect(),
            time: time.clone(),
            columns: columns.clone(),
        });
    }
    match report.stop {
        StopReason::Completed => {}
        StopReason::Observer => return row,
        StopReason::Failed(e) => return fail(row, e),
    }
    for (k, m) in spec.metrics.iter().enumerate() {
        let Some(col) = wanted
            .iter()
            .position(|&i| names[i].0 == m.channel)
            .map(|p| &columns[p])
        else {
            return fail(row, format!("no output channel '{}'", m.channel));
        };
        match m.evaluate(&time, col, spec.step_time) {
            Ok(v) => row.metrics[k] = v,
            Err(e) => return fail(row, e),
        }
    }
    row.status = RunStatus::Ok;
    row
}

/// Runs all variants on `threads` threads (0: all cores); rows in variant order.
pub fn run(
    model: &Model,
    variants: &[Vec<(String, f64)>],
    spec: &SweepSpec,
    threads: usize,
) -> Result<Vec<SweepRow>, Error> {
    run_monitored(
        model,
        variants,
        spec,
        threads,
        &AtomicBool::new(false),
        &|_, _, _| {},
    )
}

/// [`run`] with a stop flag (checked before each variant and at every output of a running
/// one) and a progress callback `progress(row, done, total)` called as each variant finishes
/// (from the worker threads, in completion order).
pub fn run_monitored(
    model: &Model,
    variants: &[Vec<(String, f64)>],
    spec: &SweepSpec,
    threads: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(&SweepRow, usize, usize) + Sync),
) -> Result<Vec<SweepRow>, Error> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Settings(format!("cannot start {threads} threads: {e}")))?;
    let done = AtomicUsize::new(0);
    let total = variants.len();
    Ok(pool.install(|| {
        variants
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(i, v)| {
                let row = run_variant(model, i, v, spec, stop);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(&row, n, total);
                row
            })
            .collect()
    }))
}

fn bad_axis(axis: &str, why: &str) -> Error {
    Error::Settings(format!(
        "grid axis '{axis}': {why}; write NAME=START:STOP:COUNT (COUNT >= 2 evenly spaced values from START to STOP) or NAME=V1,V2,... (docs/sweeps.md)"
    ))
}

/// The values of one grid axis `NAME=START:STOP:COUNT` or `NAME=V1,V2,…`.
pub fn parse_axis(axis: &str) -> Result<(String, Vec<f64>), Error> {
    let (name, values) = axis
        .split_once('=')
        .ok_or_else(|| bad_axis(axis, "no '='"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(bad_axis(axis, "no parameter name before '='"));
    }
    let num = |s: &str| -> Result<f64, Error> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| bad_axis(axis, &format!("'{}' is not a number", s.trim())))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(bad_axis(axis, &format!("{v} is not finite")))
        }
    };
    let vals = if values.contains(':') {
        let p: Vec<&str> = values.split(':').collect();
        if p.len() != 3 {
            return Err(bad_axis(axis, "a range has three parts START:STOP:COUNT"));
        }
        let (a, b) = (num(p[0])?, num(p[1])?);
        let n: usize = p[2].trim().parse().map_err(|_| {
            bad_axis(
                axis,
                &format!("count '{}' is not a whole number", p[2].trim()),
            )
        })?;
        if n < 2 {
            return Err(bad_axis(
                axis,
                "a range needs COUNT >= 2 (give one value as NAME=V)",
            ));
        }
        // v_i = a + (b - a) i / (n - 1); the last value is exactly b.
        (0..n)
            .map(|i| {
                if i + 1 == n {
                    b
                } else {
                    a + (b - a) * i as f64 / (n - 1) as f64
                }
            })
            .collect()
    } else {
        values
            .split(',')
            .map(num)
            .collect::<Result<Vec<f64>, Error>>()?
    };
    Ok((name.to_string(), vals))
}

/// The variants of a grid: the product of the axes, the first axis varying slowest.
pub fn grid(axes: &[&str]) -> Result<Vec<Vec<(String, f64)>>, Error> {
    let mut parsed = Vec::new();
    for a in axes {
        let (name, vals) = parse_axis(a)?;
        if parsed.iter().any(|(n, _): &(String, Vec<f64>)| *n == name) {
            return Err(bad_axis(a, &format!("'{name}' is given twice")));
        }
        parsed.push((name, vals));
    }
    let mut out: Vec<Vec<(String, f64)>> = vec![Vec::new()];
    for (name, vals) in &parsed {
        out = out
            .into_iter()
            .flat_map(|v| {
                vals.iter().map(move |x| {
                    let mut w = v.clone();
                    w.push((name.clone(), *x));
                    w
                })
            })
            .collect();
    }
    if parsed.is_empty() {
        out.clear();
    }
    Ok(out)
}

/// The variants of a CSV table (`,` or `;`, `#` comment lines): a header with one parameter
/// name per column, then one row of numbers per variant. Errors name `label` and the line.
pub fn table_from_csv(text: &str, label: &str) -> Result<Vec<Vec<(String, f64)>>, Error> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let split = |l: &str| -> Vec<String> {
        l.split([',', ';'])
            .map(|c| c.trim().trim_matches('"').trim().to_string())
            .collect()
    };
    let Some((hline, header)) = lines.next() else {
        return Err(Error::Settings(format!(
            "{label}: the table is empty; write a header with one parameter name per column, then one row per variant"
        )));
    };
    let names = split(header);
    for (k, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(Error::Settings(format!(
                "{label}:{hline}: column {} of the header has no name; name every column after a parameter or path",
                k + 1
            )));
        }
        if names[..k].contains(n) {
            return Err(Error::Settings(format!(
                "{label}:{hline}: column '{n}' appears twice in the header"
            )));
        }
        if n.parse::<f64>().is_ok() {
            return Err(Error::Settings(format!(
                "{label}:{hline}: the header is missing (column {} is the number {n}); the first row names the parameters",
                k + 1
            )));
        }
    }
    let mut out = Vec::new();
    for (line, l) in lines {
        let cells = split(l);
        if cells.len() != names.len() {
            return Err(Error::Settings(format!(
                "{label}:{line}: {} values but the header has {} columns",
                cells.len(),
                names.len()
            )));
        }
        let mut v = Vec::with_capacity(names.len());
        for (n, c) in names.iter().zip(&cells) {
            let x: f64 = c.parse().map_err(|_| {
                Error::Settings(format!(
                    "{label}:{line}: column '{n}': '{c}' is not a number"
                ))
            })?;
            if !x.is_finite() {
                return Err(Error::Settings(format!(
                    "{label}:{line}: column '{n}': {x} is not finite"
                )));
            }
            v.push((n.clone(), x));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(Error::Settings(format!(
            "{label}: the table has a header but no rows"
        )));
    }
    Ok(out)
}
