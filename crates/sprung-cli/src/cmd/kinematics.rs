//! `sprung kinematics MODEL -o DIR`: kinematic tables from the full model (document 004's
//! kinematic corner — ideal joints in place of the link bushings — solved on a grid of wheel
//! travel and rack travel; `sprung::kin_tables`, `docs/macro-joint.md`, "Kinematic tables").
//! Writes per corner DIR/<corner>.toml (the table), DIR/<corner>.csv (toe, camber, track and
//! wheelbase change, wheel-centre x/y, marker separation and servo force over the grid, long
//! format) and DIR/<corner>.png (toe and camber against travel).

use std::path::{Path, PathBuf};

use anyhow::Context;
use sprung::kin_tables::{self, CornerTable, KinOptions};
use sprung_io::plot::{Layout, LineStyle, Panel, PlotOptions, Series, plot_time_series_with};

/// Arguments of `sprung kinematics`.
#[derive(clap::Args, Debug)]
pub struct KinematicsArgs {
    /// Full model file (an axle or a car; .toml or .json).
    pub model: PathBuf,
    /// Output folder (created).
    #[arg(short = 'o', long)]
    pub out: PathBuf,
    /// Travel grid MIN:MAX:STEP, m (must contain 0).
    #[arg(long, default_value = "-0.1:0.1:0.01", value_parser = parse_range)]
    pub travel: (f64, f64, f64),
    /// Rack grid MIN:MAX:STEP at steered corners, m (must contain 0).
    #[arg(long, default_value = "-0.08:0.08:0.01", value_parser = parse_range)]
    pub rack: (f64, f64, f64),
    /// Factor on the bushings' rotational stiffnesses (distance from ideal joints ∝ factor).
    #[arg(long, default_value_t = kin_tables::DEFAULT_ROTATIONAL_FACTOR)]
    pub rotational_factor: f64,
    /// Bodies up to this mass are links, kg (as `sprung reduce`).
    #[arg(long, default_value_t = 3.0)]
    pub max_link_mass: f64,
    /// Change a model value first: NAME=VALUE (repeatable; docs/parameters.md).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
    /// Write tables and CSV only (no plots).
    #[arg(long)]
    pub no_plots: bool,
    /// No progress output.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Parses MIN:MAX:STEP.
pub fn parse_range(s: &str) -> Result<(f64, f64, f64), String> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 3 {
        return Err(format!("'{s}': expected MIN:MAX:STEP, e.g. -0.1:0.1:0.01"));
    }
    let mut v = [0.0; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = p
            .trim()
            .parse()
            .map_err(|_| format!("'{s}': '{}' is not a number", p.trim()))?;
    }
    Ok((v[0], v[1], v[2]))
}

/// Runs the command.
pub fn run(a: &KinematicsArgs) -> anyhow::Result<()> {
    let d = super::load_description(&a.model, &a.set)?;
    let model = sprung::Model::from_description(d)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.model.display()))?;
    let opts = KinOptions {
        travel: kin_tables::grid(a.travel.0, a.travel.1, a.travel.2).context("--travel")?,
        rack: Some(kin_tables::grid(a.rack.0, a.rack.1, a.rack.2).context("--rack")?),
        rotational_factor: a.rotational_factor,
        max_link_mass: a.max_link_mass,
        ..KinOptions::default()
    };
    kin_tables::check_grid("travel (--travel)", opts.travel.as_slice())?;
    let corners = kin_tables::corners(&model, a.max_link_mass)
        .with_context(|| format!("{}", a.model.display()))?;
    if !a.quiet {
        for c in &corners {
            println!(
                "corner {}: carrier {}, {} bodies, {} bushings, parent {}{}{}",
                c.name,
                c.carrier,
                c.bodies.len(),
                c.bushings.len(),
                c.parent,
                if c.held.is_empty() {
                    String::new()
                } else {
                    format!(", held {}", c.held.join(", "))
                },
                c.rack
                    .as_ref()
                    .map(|r| format!(", steered (rack {})", r.body))
                    .unwrap_or_default()
            );
        }
    }
    let start = std::time::Instant::now();
    let quiet = a.quiet;
    let mut last = (usize::MAX, 0);
    let tables = kin_tables::kinematic_tables(&model, &opts, &mut |ci, name, done, n| {
        // A line per corner at every tenth of its points.
        let tenth = (10 * done) / n;
        if !quiet && (ci != last.0 || tenth != last.1) {
            last = (ci, tenth);
            println!("  {name}: {done}/{n} points");
        }
    })
    .with_context(|| format!("{}", a.model.display()))?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    for t in &tables {
        let name = &t.corner.name;
        let toml = a.out.join(format!("{name}.toml"));
        std::fs::write(&toml, t.table.to_toml_string())
            .with_context(|| format!("writing {}", toml.display()))?;
        let csv = a.out.join(format!("{name}.csv"));
        write_csv(t, &csv).with_context(|| format!("writing {}", csv.display()))?;
        let gap = t.max_gap.iter().cloned().fold(0.0, f64::max);
        let (lo, hi) = (0, t.table.axes[0].grid.len() - 1);
        let at = |it: usize| t.wheel(t.index(it, t.design_index() % rack_len(t)));
        println!(
            "{name}: {} points, toe {:+.4} .. {:+.4} deg, camber {:+.4} .. {:+.4} deg over travel {:+.0} .. {:+.0} mm; largest bushing marker separation {gap:.2e} m -> {}",
            t.points(),
            at(lo).toe,
            at(hi).toe,
            at(lo).camber,
            at(hi).camber,
            t.table.axes[0].grid[lo] * 1e3,
            t.table.axes[0].grid[hi] * 1e3,
            toml.display()
        );
        if !a.no_plots {
            let png = a.out.join(format!("{name}.png"));
            plot(t, &png, &model.description().model.name)
                .with_context(|| format!("plotting {}", png.display()))?;
        }
    }
    if !a.quiet {
        println!(
            "{} corner tables in {:.2} s -> {}",
            tables.len(),
            start.elapsed().as_secs_f64(),
            a.out.display()
        );
    }
    Ok(())
}

fn rack_len(t: &CornerTable) -> usize {
    t.table.axes.get(1).map_or(1, |a| a.grid.len())
}

/// Long format: one row per grid point.
fn write_csv(t: &CornerTable, path: &Path) -> anyhow::Result<()> {
    let mut text = String::from(
        "travel_mm,rack_mm,toe_deg,camber_deg,half_track_change_mm,wheelbase_change_mm,wc_x_mm,wc_y_mm,wc_z_mm,max_marker_separation_m,servo_force_N\n",
    );
    let design = t.wheel(t.design_index()).centre;
    let side = t.corner.side;
    for k in 0..t.points() {
        let w = t.wheel(k);
        let row = [
            w.travel * 1e3,
            w.rack * 1e3,
            w.toe,
            w.camber,
            side * (w.centre.y - design.y) * 1e3,
            (w.centre.x - design.x) * 1e3,
            w.centre.x * 1e3,
            w.centre.y * 1e3,
            w.centre.z * 1e3,
            t.max_gap[k],
            t.servo_force[k],
        ];
        let row: Vec<String> = row.iter().map(|v| format!("{v:.9e}")).collect();
        text += &row.join(",");
        text.push('\n');
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// Toe and camber against travel; at a steered corner one line per rack value at the ends, the
/// quarters and 0 of the rack grid (the CSV has every column).
fn plot(t: &CornerTable, png: &Path, model: &str) -> anyhow::Result<()> {
    let travel = &t.table.axes[0].grid;
    let nr = rack_len(t);
    let zero = t.design_index() % nr;
    let mut columns = vec![0, nr / 4, zero, (3 * nr) / 4, nr - 1];
    columns.sort_unstable();
    columns.dedup();
    let mut toe = Panel::new("toe", "toe [deg] (+ toe-in)");
    let mut camber = Panel::new("camber", "camber [deg] (+ top out)");
    for ir in columns {
        let ws: Vec<_> = (0..travel.len())
            .map(|it| t.wheel(t.index(it, ir)))
            .collect();
        let x: Vec<f64> = travel.iter().map(|s| s * 1e3).collect();
        let label = match t.table.axes.get(1) {
            Some(r) => format!("rack {:+.0} mm", r.grid[ir] * 1e3),
            None => format!("corner {}", t.corner.name),
        };
        let style = if ws[0].rack == 0.0 {
            LineStyle::Solid
        } else {
            LineStyle::Dashed
        };
        toe = toe.with_series(Series::new(
            label.clone(),
            x.clone(),
            ws.iter().map(|w| w.toe).collect(),
            style,
        ));
        camber = camber.with_series(Series::new(
            label,
            x,
            ws.iter().map(|w| w.camber).collect(),
            style,
        ));
    }
    let options = PlotOptions {
        layout: Layout::Grid { rows: 1, cols: 2 },
        window: None,
        size: Some((1200, 500)),
        x_label: "wheel travel [mm]",
    };
    plot_time_series_with(
        png,
        &format!("kinematic table {model}, corner {}", t.corner.name),
        &[toe, camber],
        &options,
    )?;
    Ok(())
}
