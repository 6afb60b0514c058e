//! `sprung loadcase [MODEL...]`: document 000's validation study in one command. For each model
//! (default: both reference axles) it runs the model's own load case with LSRT2 at the model's
//! fixed step and with the RODAS4 reference (rtol 1e-8), writes both result files, prints the
//! normalised errors over the window of Bild 7 against document 000's Table 3 values and the
//! real-time factors (Table 2), and draws a Bild 7-like figure: a displacement and a force channel
//! over time, LSRT2 against the reference, one row per model. The channels are
//! `--displacement`/`--force` or each model's first output of quantity "displacement" and of
//! quantity "force" ([`compared_channels`]; the reference axles: the wheel displacement `wc_dx_L`
//! and the trailing-link bushing force `tl_bushing_fx_L`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use sprung_io::plot::plot_time_series_with;
use sprung_io::{Layout, LineStyle, Panel, PlotOptions, Series, Window, compare, read_results};

use super::run::RunArgs;
use crate::FormatArg;

/// Arguments of `sprung loadcase`.
#[derive(Args, Debug)]
pub struct LoadcaseArgs {
    /// Models (default: models/double_wishbone.toml models/multilink.toml).
    pub models: Vec<PathBuf>,
    /// Output directory.
    #[arg(long, default_value = "out/loadcase")]
    pub out: PathBuf,
    /// Comparison window `t0:t1` (document 000, Bild 7: 4.9:6.0).
    #[arg(long, default_value = "4.9:6.0")]
    pub window: String,
    /// Displacement channel (default: the model's first output of quantity "displacement").
    #[arg(long)]
    pub displacement: Option<String>,
    /// Force channel (default: the model's first output of quantity "force").
    #[arg(long)]
    pub force: Option<String>,
    /// Relative tolerance of the RODAS4 reference.
    #[arg(long, default_value_t = 1e-8)]
    pub rtol: f64,
}

/// The two compared channels of `model` (file `file`): the given names, else the first output of
/// quantity "displacement" and the first of quantity "force"; an error names the flag to give
/// when the model has no such output.
pub fn compared_channels(
    model: &sprung_model::Model,
    file: &Path,
    displacement: Option<&str>,
    force: Option<&str>,
) -> anyhow::Result<[String; 2]> {
    let pick = |given: Option<&str>, q: sprung_model::Quantity, what: &str| {
        if let Some(n) = given {
            return Ok(n.to_string());
        }
        model
            .outputs
            .iter()
            .find(|o| o.quantity == q)
            .map(|o| o.name.clone())
            .with_context(|| {
                format!(
                    "{}: the model has no output of quantity \"{what}\" to compare; name a channel with --{what}",
                    file.display()
                )
            })
    };
    Ok([
        pick(
            displacement,
            sprung_model::Quantity::Displacement,
            "displacement",
        )?,
        pick(force, sprung_model::Quantity::Force, "force")?,
    ])
}

/// Document 000, Table 3: NMSE of LSRT2 vs the reference (wheel displacement, force) per axle.
fn table3(model: &Path) -> Option<(f64, f64)> {
    let name = model.file_stem()?.to_string_lossy();
    match name.as_ref() {
        "double_wishbone" => Some((0.00243, 0.00751)),
        "multilink" => Some((0.01286, 0.01545)),
        _ => None,
    }
}

fn run_one(
    model: &Path,
    out: &Path,
    name: &str,
    solver: Option<&str>,
    rtol: Option<f64>,
) -> anyhow::Result<PathBuf> {
    let args = RunArgs {
        model: model.to_path_buf(),
        solver: solver.map(String::from),
        step: None,
        rtol,
        atol: rtol.map(|r| r * 1e-2),
        t_end: None,
        output_interval: None,
        relinearise_every: None,
        relinearise_stale: None,
        breakpoints: Default::default(),
        linear_solver: None,
        max_displacement: None,
        max_velocity: None,
        max_force: None,
        out: Some(out.to_path_buf()),
        format: FormatArg::Csv,
        name: name.to_string(),
        plot: false,
        xy: Vec::new(),
        plot_channels: Vec::new(),
        from_design: false,
        quiet: true,
        inputs: None,
        set: Vec::new(),
        accelerate: false,
    };
    super::run::run(&args)?;
    Ok(out.join(format!("{name}.csv")))
}

/// Runs the command.
pub fn run(a: &LoadcaseArgs) -> anyhow::Result<()> {
    let models = if a.models.is_empty() {
        vec![
            PathBuf::from("models/double_wishbone.toml"),
            PathBuf::from("models/multilink.toml"),
        ]
    } else {
        a.models.clone()
    };
    let window = super::compare::parse_window(&a.window)?;
    let mut panels = Vec::new();
    let mut summary = Vec::new();
    for model in &models {
        let stem = model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let dir = a.out.join(&stem);
        let (m, _) = super::load_model(model)?;
        let [disp, force] =
            compared_channels(&m, model, a.displacement.as_deref(), a.force.as_deref())?;
        println!("== {stem}: compared channels {disp} and {force}");
        println!("== {stem}: LSRT2 (model settings)");
        let res = run_one(model, &dir, "lsrt2", None, None)?;
        println!("== {stem}: RODAS4 reference (rtol {:e})", a.rtol);
        let reference = run_one(model, &dir, "reference", Some("rodas4"), Some(a.rtol))?;
        let rs = read_results(&res)?;
        let rf = read_results(&reference)?;
        let errs = compare(&rs, &rf, &[disp.as_str(), force.as_str()], window)
            .with_context(|| format!("comparing {} with {}", res.display(), reference.display()))?;
        let rtf = rs.metadata()["real_time_factor"]
            .as_f64()
            .unwrap_or(f64::NAN);
        summary.push((stem.clone(), errs.clone(), rtf, table3(model)));
        for (ch, scale, unit) in [(&disp, 1e3, "mm"), (&force, 1.0, "N")] {
            let mut p = Panel::new(format!("{stem}: {ch}"), format!("{ch} [{unit}]"));
            for (set, label, style) in [
                (&rs, "LSRT2, 1 ms", LineStyle::Solid),
                (&rf, "RODAS4 reference", LineStyle::Dashed),
            ] {
                p = p.with_series(
                    Series::from_result(label, set, ch, scale, style)
                        .with_context(|| format!("channel '{ch}' missing"))?,
                );
            }
            panels.push(p);
        }
    }
    println!();
    println!(
        "{:<18} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "model", "NMSE disp", "(Table 3)", "NMSE force", "(Table 3)", "RTF"
    );
    for (stem, errs, rtf, t3) in &summary {
        let (d3, f3) = t3
            .map(|(d, f)| (format!("{d:.5}"), format!("{f:.5}")))
            .unwrap_or(("-".into(), "-".into()));
        println!(
            "{:<18} {:>12.3e} {:>12} {:>12.3e} {:>12} {:>10.4}",
            stem, errs[0].nmse, d3, errs[1].nmse, f3, rtf
        );
    }
    let png = a.out.join("bild7.png");
    let opts = PlotOptions {
        layout: Layout::Grid {
            rows: models.len(),
            cols: 2,
        },
        window: Some(Window::new(window.t0, window.t1)),
        ..Default::default()
    };
    plot_time_series_with(
        &png,
        "Longitudinal force step (document 000, Bild 7)",
        &panels,
        &opts,
    )?;
    println!("plot: {}", png.display());
    Ok(())
}
