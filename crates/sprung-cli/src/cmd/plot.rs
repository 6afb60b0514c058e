//! `sprung plot RESULT [RESULT...]`: one panel per channel, one line per result file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use sprung_io::plot::plot_time_series_with;
use sprung_io::{LineStyle, Panel, PlotOptions, ResultSet, Series, read_results};

/// Arguments of `sprung plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Result files (the first solid, the others dashed; e.g. LSRT2 result and reference).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Channels (comma separated; default: the first four of the first file).
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// Output image (.png or .svg).
    #[arg(long, short, default_value = "plot.png")]
    pub out: PathBuf,
    /// Time window `t0:t1` in s.
    #[arg(long)]
    pub window: Option<String>,
    /// Plot title.
    #[arg(long, default_value = "sprung results")]
    pub title: String,
}

/// Plots `channels` of all `files` into `out`.
pub fn plot_files(
    files: &[PathBuf],
    channels: &[String],
    out: &Path,
    window: Option<&str>,
    title: &str,
) -> anyhow::Result<()> {
    let sets = files
        .iter()
        .map(|f| read_results(f).with_context(|| format!("reading {}", f.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let labelled: Vec<(&Path, &ResultSet)> = files
        .iter()
        .map(PathBuf::as_path)
        .zip(sets.iter())
        .collect();
    plot_sets(&labelled, channels, out, window, title)
}

/// Plots `channels` of result sets already in memory (e.g. adjusted by `compare`); each set is
/// labelled by the file it came from.
pub fn plot_sets(
    sets: &[(&Path, &ResultSet)],
    channels: &[String],
    out: &Path,
    window: Option<&str>,
    title: &str,
) -> anyhow::Result<()> {
    let mut panels = Vec::new();
    for ch in channels {
        let unit = sets[0].1.unit(ch).unwrap_or("").to_string();
        let mut p = Panel::new(
            ch.clone(),
            if unit.is_empty() {
                ch.clone()
            } else {
                format!("{ch} [{unit}]")
            },
        );
        for (k, (file, set)) in sets.iter().enumerate() {
            let style = if k == 0 {
                LineStyle::Solid
            } else {
                LineStyle::Dashed
            };
            let label = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let label = if sets.len() > 1 {
                format!("{label} ({})", file.display())
            } else {
                label
            };
            let s = Series::from_result(label, set, ch, 1.0, style)
                .with_context(|| format!("channel '{ch}' not in {}", file.display()))?;
            p = p.with_series(s);
        }
        panels.push(p);
    }
    let opts = PlotOptions {
        window: window.map(super::compare::parse_window).transpose()?,
        ..Default::default()
    };
    plot_time_series_with(out, title, &panels, &opts)?;
    Ok(())
}

/// Runs the command.
pub fn run(a: &PlotArgs) -> anyhow::Result<()> {
    let channels = if a.channels.is_empty() {
        let set = read_results(&a.results[0])?;
        set.channel_names().take(4).map(String::from).collect()
    } else {
        a.channels.clone()
    };
    plot_files(&a.results, &channels, &a.out, a.window.as_deref(), &a.title)?;
    println!("plot: {}", a.out.display());
    Ok(())
}
