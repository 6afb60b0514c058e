//! `sprung compare RESULT REFERENCE`: normalised errors per channel over a time window
//! (document 000, Table 3: NMSE = mean((x − x_ref)²) / mean(x_ref)²; NRMSE = sqrt(mean((x − x_ref)²)) / |mean(x_ref)|).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use sprung_io::{Window, compare, format_comparison_table, read_results};

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
    let res = read_results(&a.result).with_context(|| format!("reading {}", a.result.display()))?;
    let reference =
        read_results(&a.reference).with_context(|| format!("reading {}", a.reference.display()))?;
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
        super::plot::plot_files(
            &[a.result.clone(), a.reference.clone()],
            &chans,
            p,
            a.window.as_deref(),
            "comparison",
        )?;
        println!("plot: {}", p.display());
    }
    Ok(())
}
