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
    /// Further result files compared with the same reference and drawn in the same plot
    /// (repeatable; e.g. two reduced models against the full one).
    #[arg(long = "with", value_name = "RESULT")]
    pub with: Vec<PathBuf>,
    /// Channels to compare (comma separated; default: all channels of RESULT).
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// Time window `t0:t1` in s (default: everything).
    #[arg(long)]
    pub window: Option<String>,
    /// Also write the comparison plot (PNG/SVG) of the compared channels.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// With `--plot`: two channels `X,Y` drawn against each other (equal axis scales, e.g. the
    /// path `x,y` of a vehicle) in the first panel, then the compared channels over time, all in
    /// one row (document 004, Bild 6: path and lateral acceleration of two models).
    #[arg(long, value_delimiter = ',', requires = "plot")]
    pub xy: Vec<String>,
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
    let files: Vec<&PathBuf> = std::iter::once(&a.result).chain(&a.with).collect();
    let mut results = files
        .iter()
        .map(|f| read_results(f).with_context(|| format!("reading {}", f.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut reference =
        read_results(&a.reference).with_context(|| format!("reading {}", a.reference.display()))?;
    for w in results
        .iter()
        .flat_map(|r| &r.warnings)
        .chain(&reference.warnings)
    {
        eprintln!("warning: {w}");
    }
    adjust.apply(&mut reference, "reference")?;
    if let Some(t) = a.datum {
        for res in &mut results {
            subtract_datum(res, t, "result")?;
        }
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
    let mut chans: Vec<String> = Vec::new();
    for (file, res) in files.iter().zip(&results) {
        let errors = compare(res, &reference, &names, window)?;
        println!("{} vs reference {}", file.display(), a.reference.display());
        println!("{}", format_comparison_table(&errors));
        if chans.is_empty() {
            chans = errors.iter().map(|e| e.channel.clone()).collect();
        }
    }
    // The results, then the reference (the adjusted data: scale, offset, time shift, datum).
    let sets: Vec<(&std::path::Path, &sprung_io::ResultSet)> = files
        .iter()
        .map(|f| f.as_path())
        .zip(&results)
        .chain(std::iter::once((a.reference.as_path(), &reference)))
        .collect();
    if let (Some(p), false) = (&a.plot, a.xy.is_empty()) {
        plot_path_and_channels(&sets, &a.xy, &chans, p)?;
        println!("plot: {}", p.display());
    } else if let Some(p) = &a.plot {
        super::plot::plot_sets(&sets, &chans, p, a.window.as_deref(), "comparison")?;
        println!("plot: {}", p.display());
    }
    Ok(())
}

/// One figure in a row: channel `xy[1]` over `xy[0]` of every set (equal scales), then each of
/// `channels` over time, every set a series labelled by its file's folder (or name).
fn plot_path_and_channels(
    sets: &[(&std::path::Path, &sprung_io::ResultSet)],
    xy: &[String],
    channels: &[String],
    out: &std::path::Path,
) -> anyhow::Result<()> {
    use sprung_io::xy_plot::{XyPanel, XySeries};
    let [x, y] = xy else {
        anyhow::bail!(
            "--xy takes two channel names, e.g. --xy x,y (got {})",
            xy.join(",")
        );
    };
    let label = |p: &std::path::Path| {
        let name = |q: &std::path::Path| q.file_name().map(|n| n.to_string_lossy().into_owned());
        p.parent()
            .and_then(name)
            .filter(|n| !n.is_empty())
            .or_else(|| name(p))
            .unwrap_or_else(|| p.display().to_string())
    };
    let col = |file: &std::path::Path, set: &sprung_io::ResultSet, c: &str| {
        set.column(c).map(<[f64]>::to_vec).ok_or_else(|| {
            anyhow::anyhow!(
                "--xy/--channels: no channel '{c}' in {}; channels: {}",
                file.display(),
                set.channel_names().collect::<Vec<_>>().join(", ")
            )
        })
    };
    let unit = |set: &sprung_io::ResultSet, c: &str| {
        set.unit(c).map(|u| format!(" [{u}]")).unwrap_or_default()
    };
    let first = sets[0].1;
    let mut path = XyPanel::new(
        format!("{y} over {x}"),
        format!("{x}{}", unit(first, x)),
        format!("{y}{}", unit(first, y)),
    );
    for (file, set) in sets {
        let (xs, ys) = (col(file, set, x)?, col(file, set, y)?);
        path = path.with_series(XySeries::new(label(file), xs.into_iter().zip(ys).collect()));
    }
    let mut panels = vec![(path, true)];
    for c in channels {
        let mut panel = XyPanel::new(c.clone(), "t [s]", format!("{c}{}", unit(first, c)));
        for (file, set) in sets {
            let v = col(file, set, c)?;
            panel = panel.with_series(XySeries::new(
                label(file),
                set.time.iter().copied().zip(v).collect(),
            ));
        }
        panels.push((panel, false));
    }
    let refs: Vec<(&XyPanel, bool)> = panels.iter().map(|(p, e)| (p, *e)).collect();
    sprung_io::path_plot::plot_line_panels(out, "comparison", &refs, None)?;
    Ok(())
}
