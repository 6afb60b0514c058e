//! `sprung metrics RESULT`: step-response metrics per channel (definitions in
//! `sprung_io::step_response`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use sprung_io::{StepOptions, read_results, step_response};

/// Arguments of `sprung metrics`.
#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// Result file (CSV or Parquet; an unfinished Parquet run's `.parts` folder also works).
    pub result: PathBuf,
    /// Channels (comma separated; default: every channel).
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// Step time in s (default: the first sample).
    #[arg(long)]
    pub t_step: Option<f64>,
    /// Settling band as a fraction of the step size |final - initial|.
    #[arg(long, default_value_t = 0.02)]
    pub band: f64,
    /// Fraction of the record after the step time averaged for the final value.
    #[arg(long, default_value_t = 0.05)]
    pub final_fraction: f64,
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.6}"))
}

/// Runs the command.
pub fn run(a: &MetricsArgs) -> anyhow::Result<()> {
    let set = read_results(&a.result).with_context(|| format!("reading {}", a.result.display()))?;
    for w in &set.warnings {
        eprintln!("warning: {w}");
    }
    let names: Vec<String> = if a.channels.is_empty() {
        set.channel_names().map(String::from).collect()
    } else {
        a.channels.clone()
    };
    let opts = StepOptions {
        t_step: a.t_step,
        final_fraction: a.final_fraction,
        band: a.band,
    };
    println!(
        "step-response metrics of {} (final value: mean of the last {} % of the record; period: mean interval between upward crossings of the final value; settling: within {} % of the step size until the end)",
        a.result.display(),
        100.0 * a.final_fraction,
        100.0 * a.band
    );
    println!(
        "{:<24} {:>8} {:>14} {:>14} {:>14} {:>10} {:>11} {:>10} {:>10}",
        "channel", "unit", "initial", "final", "peak", "peak t", "overshoot%", "period", "settling"
    );
    for name in &names {
        let y = set.column(name).with_context(|| {
            format!(
                "channel '{name}' is not in {}; available: {}",
                a.result.display(),
                set.channel_names().collect::<Vec<_>>().join(", ")
            )
        })?;
        let r = step_response(&set.time, y, opts).with_context(|| format!("channel '{name}'"))?;
        println!(
            "{:<24} {:>8} {:>14.6e} {:>14.6e} {:>14.6e} {:>10.6} {:>11.2} {:>10} {:>10}",
            name,
            set.unit(name).unwrap_or(""),
            r.initial,
            r.final_value,
            r.peak,
            r.peak_time,
            r.overshoot_percent,
            opt(r.period),
            opt(r.settling_time)
        );
    }
    Ok(())
}
