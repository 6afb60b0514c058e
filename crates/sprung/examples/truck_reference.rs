//! The two truck manoeuvres of document 002 (`models/truck_10wheeler.toml`: angled bump crossing,
//! Fig. 5; `models/truck_cornering.toml`: Table-1 cornering, Fig. 4) run with the real-time
//! fixed-step methods — the partly implicit Euler (`pie`, eqs. 4-9) and LSRT2 at 1 ms — and
//! compared with a stiff adaptive reference on the channels of Figs. 4 and 5 (issue 14).
//!
//! All runs of a window start from one state: the manoeuvre is run with LSRT2 at 1 ms from its
//! initial state to the window's start, and that state (a [`sprung::Snapshot`]) is restored into
//! every run. The error is the variance-normalised squared error of each channel
//! (`sprung_test_support::nmse_about_mean`: 1 = as far off as the reference's own spread over the
//! window), sampled every 1 ms (the reference by its dense output).
//!
//! ```sh
//! cargo run --release -p sprung --example truck_reference -- bump 1.3 1.8
//! cargo run --release -p sprung --example truck_reference -- cornering 4.9 6.0 radau5 1e-6
//! ```
//! Arguments: manoeuvre (`bump` or `cornering`), window start and end in s, reference method
//! (default [`REFERENCE_METHOD`]) and its relative tolerance (default [`REFERENCE_RTOL`]), and
//! optionally the compared runs as `METHOD:EVERY` (re-linearise every EVERY steps) or
//! `METHOD:EVERY:LEVEL` (also re-linearise after a step with a lagged Jacobian whose error
//! indicator exceeds LEVEL m, `RunSettings::relinearise_stale`), comma separated (default
//! `pie:1,lsrt2:1`), e.g. to measure re-linearisation schedules:
//! ```sh
//! cargo run --release -p sprung --example truck_reference -- bump 1.3 1.8 rodas4 1e-6 lsrt2:1,lsrt2:5,lsrt2:50:5e-8
//! ```

use std::path::PathBuf;
use std::time::Instant;

use sprung::{Control, Model, Simulation, StopReason};
use sprung_solve::mech::rosenbrock::Stats;

/// The channels of Figs. 4 and 5 that are compared: knuckle angles (rad), tie-rod and coupling-rod
/// forces (N), wheel loads and lateral tire forces of the steered axles (N).
pub const CHANNELS: [&str; 15] = [
    "delta_11", "delta_12", "delta_21", "delta_22", "F1", "F2", "FC", "fz11", "fz12", "fz21",
    "fz22", "fy11", "fy12", "fy21", "fy22",
];

/// Default reference method.
pub const REFERENCE_METHOD: &str = "rodas4";

/// Default relative tolerance of the reference (absolute: 1e-2 of it, as `sprung loadcase`).
pub const REFERENCE_RTOL: f64 = 1e-6;

/// Sampling interval of the compared traces, s.
pub const SAMPLE: f64 = 1e-3;

/// The model file of a manoeuvre: `bump` (Fig. 5) or `cornering` (Fig. 4).
pub fn model_file(manoeuvre: &str) -> Result<PathBuf, String> {
    let file = match manoeuvre {
        "bump" => "truck_10wheeler.toml",
        "cornering" => "truck_cornering.toml",
        other => return Err(format!("unknown manoeuvre '{other}': bump or cornering")),
    };
    Ok(PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(file))
}

/// One run over the window: sample times, one trace per channel of [`CHANNELS`], the solver's
/// counters and the wall-clock time of the integration (s).
#[derive(Debug, Clone)]
pub struct Trace {
    /// Method and its setting, e.g. `pie 1 ms`, `rodas4 rtol 1e-6`.
    pub label: String,
    /// Sample times, s.
    pub t: Vec<f64>,
    /// Channel traces in the order of [`CHANNELS`].
    pub channels: Vec<Vec<f64>>,
    /// Work counters.
    pub stats: Stats,
    /// Wall-clock time of the integration, s.
    pub cpu_s: f64,
}

/// A fixed-step method against the reference: NMSE per channel (order of [`CHANNELS`]).
#[derive(Debug, Clone)]
pub struct Compared {
    /// The method's run.
    pub trace: Trace,
    /// `nmse_about_mean` of each channel against the reference.
    pub nmse: Vec<f64>,
}

/// The reference run and the compared fixed-step runs of one window.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Manoeuvre (`bump`, `cornering`).
    pub manoeuvre: String,
    /// Window, s.
    pub window: (f64, f64),
    /// Wall-clock time of the lead-in to the window start (LSRT2, 1 ms), s.
    pub lead_in_s: f64,
    /// The adaptive reference.
    pub reference: Trace,
    /// `pie` and `lsrt2` at 1 ms.
    pub runs: Vec<Compared>,
}

fn run_window(
    model: &std::sync::Arc<Model>,
    start: &sprung::Snapshot,
    mut settings: sprung::RunSettings,
    t_end: f64,
    label: String,
) -> Result<Trace, Box<dyn std::error::Error>> {
    let idx: Vec<usize> = CHANNELS
        .iter()
        .map(|name| {
            model
                .channel_names()
                .iter()
                .position(|(n, _)| n == name)
                .ok_or_else(|| format!("model {} has no channel {name}", model.compiled().name))
        })
        .collect::<Result<_, _>>()?;
    settings.output_interval = SAMPLE;
    let mut sim = Simulation::with_settings(model.clone(), settings)?;
    sim.set_state(start)?;
    let mut trace = Trace {
        label,
        t: Vec::new(),
        channels: vec![Vec::new(); CHANNELS.len()],
        stats: Stats::default(),
        cpu_s: 0.0,
    };
    let clock = Instant::now();
    let report = sim.run(t_end, &mut |t, ch| {
        trace.t.push(t);
        for (k, &i) in idx.iter().enumerate() {
            trace.channels[k].push(ch[i]);
        }
        Control::Continue
    });
    trace.cpu_s = clock.elapsed().as_secs_f64();
    if report.stop != StopReason::Completed {
        return Err(format!("{}: {:?}", trace.label, report.stop).into());
    }
    trace.stats = report.summary.stats;
    Ok(trace)
}

/// A compared fixed-step run at 1 ms: method and re-linearisation interval (steps).
#[derive(Debug, Clone)]
pub struct Setup {
    /// Fixed-step method (`pie`, `lsrt2`, …).
    pub method: String,
    /// Re-linearise every this many steps.
    pub relinearise_every: u64,
    /// Adaptive re-linearisation level, m (`RunSettings::relinearise_stale`).
    pub relinearise_stale: Option<f64>,
}

impl Setup {
    /// Parses `METHOD`, `METHOD:EVERY` or `METHOD:EVERY:LEVEL`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}': expected METHOD[:EVERY[:LEVEL]] with EVERY >= 1 and LEVEL > 0 in m, e.g. lsrt2:5 or lsrt2:50:5e-8"
            )
        };
        let mut parts = s.split(':');
        let method = parts.next().filter(|m| !m.is_empty()).ok_or_else(bad)?;
        let relinearise_every = match parts.next() {
            Some(k) => k.parse::<u64>().ok().filter(|&k| k >= 1).ok_or_else(bad)?,
            None => 1,
        };
        let relinearise_stale = match parts.next() {
            Some(x) => Some(x.parse::<f64>().ok().filter(|&x| x > 0.0).ok_or_else(bad)?),
            None => None,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Self {
            method: method.into(),
            relinearise_every,
            relinearise_stale,
        })
    }

    /// The label of the run: `lsrt2 1 ms` (every step), `lsrt2 1 ms k=5`, or with the
    /// adaptive level `lsrt2 1 ms k=50 stale 5e-8`.
    fn label(&self) -> String {
        let mut l = match self.relinearise_every {
            1 => format!("{} 1 ms", self.method),
            k => format!("{} 1 ms k={k}", self.method),
        };
        if let Some(x) = self.relinearise_stale {
            l += &format!(" stale {x:e}");
        }
        l
    }
}

/// Runs `manoeuvre` over `[t_start, t_end]`: the lead-in with LSRT2 at 1 ms, then the reference
/// (`reference_method` at `reference_rtol`, atol 1e-2 · rtol) and `pie` and `lsrt2` at 1 ms from
/// the same state (re-linearising every step), and compares them.
pub fn compare(
    manoeuvre: &str,
    t_start: f64,
    t_end: f64,
    reference_method: &str,
    reference_rtol: f64,
) -> Result<Comparison, Box<dyn std::error::Error>> {
    let setups = ["pie", "lsrt2"].map(|m| Setup {
        method: m.into(),
        relinearise_every: 1,
        relinearise_stale: None,
    });
    compare_setups(
        manoeuvre,
        t_start,
        t_end,
        reference_method,
        reference_rtol,
        &setups,
    )
}

/// As [`compare`], with the given fixed-step runs.
pub fn compare_setups(
    manoeuvre: &str,
    t_start: f64,
    t_end: f64,
    reference_method: &str,
    reference_rtol: f64,
    setups: &[Setup],
) -> Result<Comparison, Box<dyn std::error::Error>> {
    let model = Model::from_file(model_file(manoeuvre)?)?;
    let mut lead = model.default_settings();
    lead.method = "lsrt2".into();
    lead.step = 1e-3;
    lead.adaptive = Some(false);
    let mut sim = Simulation::with_settings(model.clone(), lead.clone())?;
    let clock = Instant::now();
    sim.advance_to(t_start)?;
    let lead_in_s = clock.elapsed().as_secs_f64();
    let start = sim.state();
    let mut reference = model.default_settings();
    reference.method = reference_method.into();
    reference.adaptive = Some(true);
    reference.rtol = reference_rtol;
    reference.atol = 1e-2 * reference_rtol;
    let reference = run_window(
        &model,
        &start,
        reference,
        t_end,
        format!("{reference_method} rtol {reference_rtol:.0e}"),
    )?;
    let mut runs = Vec::new();
    for setup in setups {
        let mut s = lead.clone();
        s.method = setup.method.clone();
        s.relinearise_every = setup.relinearise_every;
        s.relinearise_stale = setup.relinearise_stale;
        let trace = run_window(&model, &start, s, t_end, setup.label())?;
        // Samples at the same times (within 1 µs; the adaptive run's output grid can miss the
        // last sample by round-off of t0 + k·Δt).
        let (mut i, mut pairs) = (0, Vec::with_capacity(trace.t.len()));
        for (k, &t) in trace.t.iter().enumerate() {
            while i < reference.t.len() && reference.t[i] < t - 1e-6 {
                i += 1;
            }
            if i < reference.t.len() && (reference.t[i] - t).abs() <= 1e-6 {
                pairs.push((k, i));
            }
        }
        if pairs.len() + 2 < trace.t.len().max(reference.t.len()) {
            return Err(format!(
                "{}: only {} of {} samples at the reference's times",
                trace.label,
                pairs.len(),
                trace.t.len()
            )
            .into());
        }
        let nmse = trace
            .channels
            .iter()
            .zip(&reference.channels)
            .map(|(y, y_ref)| {
                let (a, b): (Vec<f64>, Vec<f64>) =
                    pairs.iter().map(|&(k, i)| (y[k], y_ref[i])).unzip();
                sprung_test_support::nmse_about_mean(&a, &b)
            })
            .collect();
        runs.push(Compared { trace, nmse });
    }
    Ok(Comparison {
        manoeuvre: manoeuvre.into(),
        window: (t_start, t_end),
        lead_in_s,
        reference,
        runs,
    })
}

/// The comparison as a Markdown table (one row per channel) with the runs' counters.
pub fn format(c: &Comparison) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} {:.3}-{:.3} s against {} (lead-in with lsrt2 1 ms: {:.2} s wall)\n",
        c.manoeuvre, c.window.0, c.window.1, c.reference.label, c.lead_in_s
    );
    let _ = write!(s, "| channel | reference spread (std) |");
    for r in &c.runs {
        let _ = write!(s, " NMSE {} |", r.trace.label);
    }
    let _ = write!(s, "\n|---|---|");
    for _ in &c.runs {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    for (k, name) in CHANNELS.iter().enumerate() {
        let y = &c.reference.channels[k];
        let mean = y.iter().sum::<f64>() / y.len() as f64;
        let std = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / y.len() as f64).sqrt();
        let _ = write!(s, "| {name} | {std:.3e} |");
        for r in &c.runs {
            let _ = write!(s, " {:.2e} |", r.nmse[k]);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "\n| run | steps | rejected | split | q evals (+ state rates alone) | linearisations (stale) | LUs | wall s |\n|---|---|---|---|---|---|---|---|"
    );
    for t in std::iter::once(&c.reference).chain(c.runs.iter().map(|r| &r.trace)) {
        let st = &t.stats;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} (+{}) | {} ({}) | {} | {:.2} |",
            t.label,
            st.steps,
            st.rejected,
            st.error_splits + st.breakpoint_steps,
            st.q_evals,
            st.state_rate_evals,
            st.linearisations,
            st.stale_relinearisations,
            st.factorisations,
            t.cpu_s
        );
    }
    s
}

#[allow(dead_code)] // run by the test suite through `compare`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: truck_reference bump|cornering T_START T_END [METHOD [RTOL [RUN,...]]] (RUN = METHOD:EVERY, e.g. lsrt2:5)";
    let num = |i: usize| -> Result<f64, Box<dyn std::error::Error>> {
        let a = args.get(i).ok_or(usage)?;
        a.parse::<f64>()
            .map_err(|_| format!("'{a}' is not a time in s; {usage}").into())
    };
    let manoeuvre = args.first().ok_or(usage)?;
    let (t0, t1) = (num(1)?, num(2)?);
    let method = args.get(3).map_or(REFERENCE_METHOD, String::as_str);
    let rtol = match args.get(4) {
        Some(_) => num(4)?,
        None => REFERENCE_RTOL,
    };
    let setups = match args.get(5) {
        Some(list) => list
            .split(',')
            .map(Setup::parse)
            .collect::<Result<Vec<_>, _>>()?,
        None => ["pie", "lsrt2"]
            .into_iter()
            .map(Setup::parse)
            .collect::<Result<_, _>>()?,
    };
    let c = compare_setups(manoeuvre, t0, t1, method, rtol, &setups)?;
    print!("{}", format(&c));
    Ok(())
}
