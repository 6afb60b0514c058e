//! `sprung compare RESULT REFERENCE`: normalised errors per channel over a time window
//! (document 000, Table 3: NMSE = mean((x − x_ref)²) / mean(x_ref)²; NRMSE = sqrt(mean((x − x_ref)²)) / |mean(x_ref)|).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use sprung_io::{
    Adjustment, Window, compare, format_comparison_table, read_results, subtract_datum,
};

/// Arguments of `sprung compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result file (CSV or Parquet).
    pub result: PathBuf,
    /// Reference result file.
    pub reference: PathBuf,
    /// Channels to compare (comma separated; default: all channels of RESULT).
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// Time window `t0:t1` in s (default: everything).
    #[arg(long)]
    pub window: Option<String>,
    /// Also write the comparison plot (PNG/SVG) of the compared channels.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Multiply the reference values (unit conversion, e.g. 1e-3 for mm to m): `FACTOR` for
    /// every channel or `CHANNEL=FACTOR` (repeatable; a channel entry wins).
    #[arg(long = "ref-scale", value_name = "[CHANNEL=]FACTOR")]
    pub ref_scale: Vec<String>,
    /// Add to the reference values after scaling: `OFFSET` or `CHANNEL=OFFSET` (repeatable).
    #[arg(long = "ref-offset", value_name = "[CHANNEL=]OFFSET")]
    pub ref_offset: Vec<String>,
    /// Shift the reference in time: reference time + SHIFT (s).
    #[arg(long = "ref-time-shift", value_name = "SHIFT", default_value_t = 0.0)]
    pub ref_time_shift: f64,
    /// Compare deviations from a datum: subtract from every channel of both files its value at
    /// this time (s, after the time shift).
    #[arg(long, value_name = "T")]
    pub datum: Option<f64>,
}

/// Parses `VALUE` or `CHANNEL=VALUE`.
fn channel_value(s: &str, what: &str) -> anyhow::Result<(Option<String>, f64)> {
    let (c, v) = match s.rsplit_once('=') {
        Some((c, v)) => (Some(c.trim().to_string()), v),
        None => (None, s),
    };
    let x: f64 = v.trim().parse().with_context(|| {
        format!("{what} '{s}': '{v}' is not a number (give VALUE or CHANNEL=VALUE)")
    })?;
    anyhow::ensure!(x.is_finite(), "{what} '{s}' is not finite");
    Ok((c, x))
}

/// Parses `t0:t1`.
pub fn parse_window(s: &str) -> anyhow::Result<Window> {
    let (a, b) = s
        .split_once(':')
        .with_context(|| format!("window '{s}' must look like 4.9:6.0"))?;
    let t0: f64 = a
        .trim()
        .parse()
        .with_context(|| format!("window start '{a}' is not a number"))?;
    let t1: f64 = b
        .trim()
        .parse()
        .with_context(|| format!("window end '{b}' is not a number"))?;
    anyhow::ensure!(t1 > t0, "window end {t1} must be after its start {t0}");
    Ok(Window::new(t0, t1))
}

/// Runs the command.
pub fn run(a: &CompareArgs) -> anyhow::Result<()> {
    let adjust = Adjustment {
        time_shift: a.ref_time_shift,
        scale: a
            .ref_scale
            .iter()
            .map(|s| channel_value(s, "--ref-scale"))
            .collect::<anyhow::Result<_>>()?,
        offset: a
            .ref_offset
            .iter()
            .map(|s| channel_value(s, "--ref-offset"))
            .collect::<anyhow::Result<_>>()?,
    };
    let mut res =
        read_results(&a.result).with_context(|| format!("reading {}", a.result.display()))?;
    let mut reference =
        read_results(&a.reference).with_context(|| format!("reading {}", a.reference.display()))?;
    for w in res.warnings.iter().chain(&reference.warnings) {
        eprintln!("warning: {w}");
    }
    adjust.apply(&mut reference, "reference")?;
    if let Some(t) = a.datum {
        subtract_datum(&mut res, t, "result")?;
        subtract_datum(&mut reference, t, "reference")?;
    }
    if !adjust.is_identity() || a.datum.is_some() {
        println!(
            "reference adjusted: time + {} s, scale {:?}, offset {:?}{}",
            a.ref_time_shift,
            a.ref_scale,
            a.ref_offset,
            a.datum
                .map(|t| format!("; both files relative to their values at t = {t} s"))
                .unwrap_or_default()
        );
    }
    let window = match &a.window {
        Some(w) => parse_window(w)?,
        None => Window::all(),
    };
    let names: Vec<&str> = a.channels.iter().map(String::as_str).collect();
    let errors = compare(&res, &reference, &names, window)?;
    println!(
        "{} vs reference {}",
        a.result.display(),
        a.reference.display()
    );
    println!("{}", format_comparison_table(&errors));
    if let Some(p) = &a.plot {
        let chans: Vec<String> = errors.iter().map(|e| e.channel.clone()).collect();
        // The adjusted data (scale, offset, time shift, datum), as compared.
        super::plot::plot_sets(
            &[
                (a.result.as_path(), &res),
                (a.reference.as_path(), &reference),
            ],
            &chans,
            p,
            a.window.as_deref(),
            "comparison",
        )?;
        println!("plot: {}", p.display());
    }
    Ok(())
}
