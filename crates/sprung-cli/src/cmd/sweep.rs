//! `sprung sweep MODEL`: run many parameter variants of a model on all cores and tabulate a
//! few metrics per run (`docs/sweeps.md`). Everything runs through `sprung::sweep` (one
//! compiled model per variant, one `Simulation` per variant through the facade's run loop).
//!
//! Writes `<out>/sweep.csv` (variant, parameter values, metrics, status, t_reached, message),
//! with `--save-runs` one result file per variant under `<out>/runs/`, with `--plot` a PNG of
//! every metric against the first parameter (one line per value of the second). Progress lines
//! (variants done / total, elapsed, ETA) go to stderr; Ctrl-C stops the running variants and
//! writes the table with the finished rows (the others marked `cancelled`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;
use sprung::sweep::{self, Metric, RunStatus, SweepRow, SweepSpec};
use sprung_io::{Channel, Format, ResultWriter};

/// Arguments of `sprung sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Model file (.toml or .json).
    pub model: PathBuf,
    /// A grid axis: NAME=START:STOP:COUNT (COUNT evenly spaced values) or NAME=V1,V2,...
    /// (repeatable; the variants are the product of the axes, the first varying slowest). NAME
    /// is a declared parameter or a path (docs/parameters.md).
    #[arg(long = "grid", value_name = "NAME=VALUES")]
    pub grid: Vec<String>,
    /// A table of variants instead of a grid: CSV with one column per parameter (header = names)
    /// and one row per variant.
    #[arg(long, value_name = "FILE.csv", conflicts_with = "grid")]
    pub table: Option<PathBuf>,
    /// A metric per run: peak:CH, overshoot:CH, settling:CH:BAND, final:CH, delta:CH, max:CH,
    /// min:CH (repeatable; docs/sweeps.md).
    #[arg(long = "metric", value_name = "KIND:CHANNEL[:BAND]", required = true)]
    pub metrics: Vec<String>,
    /// Parameter value for every variant: NAME=VALUE (repeatable), applied before the variant's.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
    /// End time in s (default: the model's [solver] t_end).
    #[arg(long)]
    pub t_end: Option<f64>,
    /// Step time of the step-response metrics in s (default: the first sample).
    #[arg(long)]
    pub step_time: Option<f64>,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Output directory (default: out/<model name>-sweep).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write every run's channels to <out>/runs/run_<variant>.csv.
    #[arg(long)]
    pub save_runs: bool,
    /// Also plot every metric against the first parameter to <out>/sweep.png.
    #[arg(long)]
    pub plot: bool,
    /// Print no progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs the command.
pub fn run(a: &SweepArgs) -> anyhow::Result<()> {
    let model = sprung::Model::from_file(&a.model)?;
    let model = if a.set.is_empty() {
        model
    } else {
        let sets: Vec<(&str, f64)> = a.set.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        Arc::new(model.with_parameters(&sets)?)
    };
    let variants = match &a.table {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading the variant table {}", file.display()))?;
            sweep::table_from_csv(&text, &file.display().to_string())?
        }
        None => {
            if a.grid.is_empty() {
                bail!(
                    "give the variants with --grid NAME=START:STOP:COUNT (repeatable) or --table FILE.csv"
                );
            }
            let axes: Vec<&str> = a.grid.iter().map(String::as_str).collect();
            sweep::grid(&axes)?
        }
    };
    let metrics = a
        .metrics
        .iter()
        .map(|m| Metric::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    let spec = SweepSpec {
        metrics,
        t_end: a.t_end,
        step_time: a.step_time,
        keep_records: a.save_runs,
    };
    let names: Vec<&str> = variants[0].iter().map(|(n, _)| n.as_str()).collect();
    sweep::check(&model, &names, &spec)?;
    let name = &model.description().model.name;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{name}-sweep")));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let runs_dir = out.join("runs");
    if a.save_runs {
        std::fs::create_dir_all(&runs_dir)
            .with_context(|| format!("creating {}", runs_dir.display()))?;
    }
    let threads = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    if !a.quiet {
        eprintln!(
            "sweep of '{name}': {} variants of {} on {threads} thread{} -> {}",
            variants.len(),
            names.join(", "),
            if threads == 1 { "" } else { "s" },
            out.display()
        );
    }
    let wall = Instant::now();
    let last = Mutex::new(Instant::now());
    let failed = std::sync::atomic::AtomicUsize::new(0);
    let save_error: Mutex<Option<String>> = Mutex::new(None);
    let progress = |row: &SweepRow, done: usize, total: usize| {
        if matches!(row.status, RunStatus::Failed(_)) {
            failed.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(rec) = &row.record
            && let Err(e) = save_run(&runs_dir, row, rec, name)
            && let Ok(mut s) = save_error.lock()
        {
            s.get_or_insert(e);
        }
        if a.quiet {
            return;
        }
        let Ok(mut last) = last.lock() else { return };
        if last.elapsed().as_secs_f64() < 1.0 && done < total {
            return;
        }
        *last = Instant::now();
        let elapsed = wall.elapsed().as_secs_f64();
        let eta = elapsed / done as f64 * (total - done) as f64;
        eprintln!(
            "  {done}/{total} variants done ({} failed), {elapsed:.1} s elapsed, ETA {eta:.0} s",
            failed.load(Ordering::Relaxed)
        );
    };
    let rows = sweep::run_monitored(&model, &variants, &spec, threads, &interrupted, &progress)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let table = out.join("sweep.csv");
    std::fs::write(&table, format_table(&rows, &spec))
        .with_context(|| format!("writing {}", table.display()))?;
    let count = |s: &str| rows.iter().filter(|r| r.status.label() == s).count();
    let (ok, nfailed, cancelled) = (count("ok"), count("failed"), count("cancelled"));
    println!("model:     {name}");
    println!(
        "variants:  {} ({ok} ok, {nfailed} failed, {cancelled} cancelled)",
        rows.len()
    );
    println!("threads:   {threads}");
    println!(
        "wall time: {wall_s:.3} s ({:.3} s per variant)",
        wall_s / rows.len().max(1) as f64
    );
    println!("table:     {}", table.display());
    if a.save_runs {
        println!("runs:      {}", runs_dir.display());
    }
    if let Ok(Some(e)) = save_error.lock().map(|s| s.clone()) {
        bail!("writing a per-run file failed: {e}");
    }
    if a.plot {
        let png = out.join("sweep.png");
        plot(&png, &rows, &spec, name)?;
        println!("plot:      {}", png.display());
    }
    for r in rows
        .iter()
        .filter(|r| matches!(r.status, RunStatus::Failed(_)))
    {
        eprintln!("variant {} failed: {}", r.index, r.status.message());
    }
    if interrupted.load(Ordering::Relaxed) {
        bail!(
            "interrupted by a signal: {} of {} variants finished; the table {} has their rows (the others are marked cancelled)",
            ok + nfailed,
            rows.len(),
            table.display()
        );
    }
    Ok(())
}

/// A CSV field: quoted when it holds a separator, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The results table: `variant`, the parameters, the metrics, `status`, `t_reached`,
/// `message`; numbers in the shortest form that reads back to the same f64.
pub fn format_table(rows: &[SweepRow], spec: &SweepSpec) -> String {
    let mut s = String::new();
    let mut header = vec!["variant".to_string()];
    if let Some(r) = rows.first() {
        header.extend(r.parameters.iter().map(|(n, _)| field(n)));
    }
    header.extend(spec.metrics.iter().map(|m| field(&m.label())));
    header.extend(["status", "t_reached", "message"].map(String::from));
    s.push_str(&header.join(","));
    s.push('\n');
    for r in rows {
        let _ = write!(s, "{}", r.index);
        for (_, v) in &r.parameters {
            let _ = write!(s, ",{v:?}");
        }
        for v in &r.metrics {
            let _ = write!(s, ",{v:?}");
        }
        let _ = writeln!(
            s,
            ",{},{:?},{}",
            r.status.label(),
            r.t_reached,
            field(r.status.message())
        );
    }
    s
}

/// Writes one run's channels to `<dir>/run_<variant>.csv` (the result format of `sprung run`).
fn save_run(dir: &Path, row: &SweepRow, rec: &sweep::RunRecord, model: &str) -> Result<(), String> {
    let path = dir.join(format!("run_{:04}.csv", row.index));
    let channels: Vec<Channel> = rec
        .names
        .iter()
        .zip(&rec.units)
        .map(|(n, u)| Channel::new(n.clone(), u.clone(), String::new()))
        .collect();
    let params: serde_json::Map<String, serde_json::Value> = row
        .parameters
        .iter()
        .map(|(n, v)| (n.clone(), json!(v)))
        .collect();
    let meta = json!({ "model": model, "sweep_variant": row.index, "parameters": params });
    let err = |e: sprung_io::IoError| format!("{}: {e}", path.display());
    let mut w = ResultWriter::create(&path, Format::Csv, &channels, meta).map_err(err)?;
    let mut values = vec![0.0; rec.columns.len()];
    for (i, t) in rec.time.iter().enumerate() {
        for (v, c) in values.iter_mut().zip(&rec.columns) {
            *v = c[i];
        }
        w.write_row(*t, &values).map_err(err)?;
    }
    let stop = match &row.status {
        RunStatus::Ok => "completed".to_string(),
        RunStatus::Failed(m) => format!("stopped: {m}"),
        RunStatus::Cancelled => "interrupted by a signal".to_string(),
    };
    w.finish(&stop, json!({ "t_reached": row.t_reached }))
        .map_err(err)?;
    Ok(())
}

/// A legend number: at most 4 significant digits, no trailing zeros.
fn short(v: f64) -> String {
    let s = format!("{v:.4e}");
    let x: f64 = s.parse().unwrap_or(v);
    format!("{x}")
}

/// Every metric against the first parameter, one line per value of the second (if any).
fn plot(path: &Path, rows: &[SweepRow], spec: &SweepSpec, model: &str) -> anyhow::Result<()> {
    use sprung_io::plot::{LineStyle, Panel, PlotOptions, Series, plot_time_series_with};
    let Some(first) = rows.first() else {
        bail!("no variants to plot");
    };
    let Some((x_name, _)) = first.parameters.first() else {
        bail!("no parameter to plot against");
    };
    let second = first.parameters.get(1).map(|(n, _)| n.clone());
    // Groups by the second parameter's value, in order of first appearance.
    let mut groups: Vec<(Option<f64>, Vec<&SweepRow>)> = Vec::new();
    for r in rows.iter().filter(|r| r.status == RunStatus::Ok) {
        let key = r.parameters.get(1).map(|(_, v)| *v);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    if groups.is_empty() {
        bail!("no variant ran to the end; nothing to plot");
    }
    let panels: Vec<Panel> = spec
        .metrics
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let mut p = Panel::new(format!("{} vs {x_name}", m.label()), m.label());
            for (key, g) in &groups {
                let mut pts: Vec<(f64, f64)> = g
                    .iter()
                    .map(|r| (r.parameters[0].1, r.metrics[k]))
                    .filter(|(_, y)| y.is_finite())
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let label = match (&second, key) {
                    (Some(n), Some(v)) => format!("{n} = {}", short(*v)),
                    _ => m.label(),
                };
                let (x, y) = pts.into_iter().unzip();
                p = p.with_series(Series::new(label, x, y, LineStyle::Solid));
            }
            p
        })
        .collect();
    // The axis label outlives the call (a 'static str in the plot options): one small string
    // per plotted sweep.
    let x_label: &'static str = Box::leak(format!("{x_name} [parameter value]").into_boxed_str());
    let options = PlotOptions {
        x_label,
        ..PlotOptions::default()
    };
    plot_time_series_with(path, &format!("sweep of {model}"), &panels, &options)?;
    Ok(())
}
