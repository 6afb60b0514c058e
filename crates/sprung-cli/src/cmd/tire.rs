//! `sprung tire MODEL`: the tire test rig (`docs/tire-rig.md`; library in
//! `sprung_vehicle::rig`). Steady sweeps of slip, slip angle, load and camber and a transient
//! slip-angle step of a tire element of a model file → one CSV per sweep and a PNG of Fx, Fy, Mz.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use sprung_io::plot::plot_time_series_with;
use sprung_io::{Layout, LineStyle, Panel, PlotOptions, Series};
use sprung_vehicle::rig::{RigSetup, Sweep, SweepTable, run_sweep, tire_from_model};

/// Arguments of `sprung tire`.
#[derive(Args, Debug)]
#[command(after_help = "\
Slips: vx = speed, vy = speed tan(alpha), omega = speed (1 + kappa) / r_e(Fz), so kappa is the \
practical slip (omega r_e - vx)/vx (driving > 0) and alpha the ISO slip angle (a wheel sliding \
to the left has alpha > 0 and Fy < 0).

Sweeps: kappa (-1..1, Fz = 0.5/1/1.5 load), alpha (-15..15 deg, same loads), load (0.1..2 load at \
alpha = 2/4/8 deg), camber (-10..10 deg at alpha = 0/2/4 deg), combined (kappa -1..1 at alpha = \
0/3/6 deg), step (alpha 0 -> --step-angle at t = 0, states integrated by RK4 over \
--step-distance).

Example: sprung tire models/tires/van_pac2002.toml --sweep kappa,alpha,step --out van_rig")]
pub struct TireArgs {
    /// Model file with a tire in `[[elements]]` (kinds: pac2002, tmeasy).
    pub model: PathBuf,
    /// Name of the tire's `[[elements]]` entry (default: the first tire element).
    #[arg(long)]
    pub element: Option<String>,
    /// Sweeps to run, comma separated: kappa, alpha, load, camber, combined, step.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "kappa,alpha,load,camber,combined,step"
    )]
    pub sweep: Vec<String>,
    /// Reference load in N (default: the tire's nominal load, FNOMIN or pn).
    #[arg(long)]
    pub load: Option<f64>,
    /// Travel speed in m/s (wheel-centre velocity along the wheel heading).
    #[arg(long, default_value_t = 20.0)]
    pub speed: f64,
    /// Road friction coefficient passed to the tire.
    #[arg(long, default_value_t = 1.0)]
    pub mu: f64,
    /// Points per steady curve.
    #[arg(long, default_value_t = 101)]
    pub points: usize,
    /// Slip angle of the transient step in degrees.
    #[arg(long, default_value_t = 3.0)]
    pub step_angle: f64,
    /// Distance travelled in the transient step in m.
    #[arg(long, default_value_t = 5.0)]
    pub step_distance: f64,
    /// Output folder (created): SWEEP.csv and SWEEP.png per sweep.
    #[arg(long, short, default_value = "tire_rig")]
    pub out: PathBuf,
    /// Write CSV files only (no plots).
    #[arg(long)]
    pub no_plots: bool,
}

/// Runs the rig.
pub fn run(a: &TireArgs) -> anyhow::Result<()> {
    let sweeps = a
        .sweep
        .iter()
        .map(|s| Sweep::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let tire = tire_from_model(&a.model, a.element.as_deref()).map_err(anyhow::Error::msg)?;
    let load = match a.load.or_else(|| tire.law.nominal_load()) {
        Some(l) => l,
        None => bail!(
            "the '{}' tire states no nominal load; give one with --load N",
            tire.law.kind()
        ),
    };
    let setup = RigSetup {
        load,
        speed: a.speed,
        mu_road: a.mu,
        points: a.points,
        step_alpha: a.step_angle.to_radians(),
        step_distance: a.step_distance,
    };
    setup.check().map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("creating the output folder {}", a.out.display()))?;
    println!(
        "tire '{}' ({}) of {}: load {load} N, speed {} m/s, mu {}",
        tire.element,
        tire.law.kind(),
        a.model.display(),
        a.speed,
        a.mu
    );
    for sweep in sweeps {
        let table = run_sweep(tire.law.as_ref(), &setup, sweep).map_err(anyhow::Error::msg)?;
        let csv = a.out.join(format!("{}.csv", sweep.name()));
        table
            .write_csv(&csv)
            .with_context(|| format!("writing {}", csv.display()))?;
        print!(
            "  {:<8} {:>5} rows -> {}",
            sweep.name(),
            table.rows.len(),
            csv.display()
        );
        if !a.no_plots {
            let png = a.out.join(format!("{}.png", sweep.name()));
            plot(&table, &png, &tire.element, tire.law.kind())
                .with_context(|| format!("plotting {}", png.display()))?;
            print!(", {}", png.display());
        }
        println!();
    }
    Ok(())
}

/// Fx, Fy and Mz over the swept variable, one line per series value (the step also shows the
/// steady-state Fy and Mz dashed).
fn plot(t: &SweepTable, png: &std::path::Path, element: &str, kind: &str) -> anyhow::Result<()> {
    let (_, x_label) = t.sweep.x_column();
    let (series_name, series_unit) = t.sweep.series_label();
    let mut panels = Vec::new();
    for (col, title, unit) in [
        ("fx_N", "longitudinal force Fx", "Fx [N]"),
        ("fy_N", "lateral force Fy", "Fy [N]"),
        ("mz_Nm", "aligning moment Mz", "Mz [N m]"),
    ] {
        let mut p = Panel::new(title, unit);
        for (s, x, y) in t.curves(col) {
            p = p.with_series(Series::new(
                format!("{series_name} = {} {series_unit}", short(s)),
                x,
                y,
                LineStyle::Solid,
            ));
        }
        if t.sweep == Sweep::Step {
            let steady = if col == "fy_N" {
                "fy_steady_N"
            } else {
                "mz_steady_Nm"
            };
            if col != "fx_N" {
                for (_, x, y) in t.curves(steady) {
                    p = p.with_series(Series::new("steady state", x, y, LineStyle::Dashed));
                }
            }
        }
        panels.push(p);
    }
    let options = PlotOptions {
        layout: Layout::Grid { rows: 1, cols: 3 },
        window: None,
        size: Some((1500, 450)),
        x_label,
    };
    let title = format!("tire '{element}' ({kind}): {} sweep", t.sweep.name());
    plot_time_series_with(png, &title, &panels, &options)?;
    Ok(())
}

/// A legend number: at most 4 decimals, trailing zeros dropped.
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
