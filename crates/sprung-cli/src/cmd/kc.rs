//! `sprung kc MODEL`: the kinematics-and-compliance rig (`docs/kc.md`; library in
//! `sprung::kc`). Quasi-static sweeps of wheel travel, steering and wheel forces through the
//! static equilibrium → one CSV and one PNG per test, and the figures at the reference point.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use sprung::kc::{
    CornerSpec, PitchGeometry, Reference, Rig, RigOptions, Sweep, Test, Vertical,
    anti_pitch_percent,
};
use sprung_io::plot::plot_time_series_with;
use sprung_io::{Layout, LineStyle, Panel, PlotOptions, Series};

/// A test of `--test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestArg {
    /// Both wheels through the same travel.
    Parallel,
    /// Opposite wheel travel (roll).
    Opposite,
    /// Steering-input sweep (needs --steer-input and --steer-range).
    Steer,
    /// Longitudinal force at the wheel centre.
    Fx,
    /// Longitudinal force at the contact point (braking).
    FxContact,
    /// Lateral force at the contact point.
    Fy,
    /// Aligning torque on the carrier.
    Mz,
    /// Every test the model supports (steer only with --steer-input).
    All,
}

/// Arguments of `sprung kc`.
#[derive(Args, Debug)]
#[command(after_help = "\
Wheel travel is imposed by the vertical wheel force (a Newton iteration on the force until the \
wheel centre is at the target height), so the rig adds no stiffness. Forces act on every wheel in \
the same global direction; the model's own inputs are set to zero. Conventions: x forward, y left, \
z up; toe + = toe-in, camber + = top outward; travel + = bump.

Example: sprung kc models/double_wishbone.toml --test all --out kc_dw")]
pub struct KcArgs {
    /// Model file (an axle with wheel-centre markers, or a car with --clamp).
    pub model: PathBuf,
    /// Tests to run (comma separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    pub test: Vec<TestArg>,
    /// Half range of the sweep: travel in mm (default 80), force in N (2500), torque in Nm
    /// (250); applies to every selected test of that kind.
    #[arg(long)]
    pub range: Option<f64>,
    /// Points per sweep (odd: contains the reference point).
    #[arg(long, default_value_t = 33)]
    pub steps: usize,
    /// Output folder (created): TEST.csv and TEST.png per test, summary.txt.
    #[arg(long, short, default_value = "kc")]
    pub out: PathBuf,
    /// Wheel-centre marker (on the wheel body, local y = spin axis), once per wheel (default:
    /// the markers named wheel_centre*).
    #[arg(long = "wheel-centre", value_name = "MARKER")]
    pub wheel_centre: Vec<String>,
    /// Wheel carrier body, once per wheel in --wheel-centre order (default: the body joined to
    /// the wheel by an element).
    #[arg(long, value_name = "BODY")]
    pub carrier: Vec<String>,
    /// Wheel radius for the contact point, m (assumption when the model has no tyre).
    #[arg(long, default_value_t = sprung::kc::DEFAULT_WHEEL_RADIUS)]
    pub wheel_radius: f64,
    /// Reference wheel load in N instead of the design height (the wheel height is then free
    /// and the force tests hold the load, not the height).
    #[arg(long)]
    pub load: Option<f64>,
    /// Runtime input swept by the steering test.
    #[arg(long)]
    pub steer_input: Option<String>,
    /// Half range of the steering sweep, in the steering input's unit.
    #[arg(long)]
    pub steer_range: Option<f64>,
    /// Body clamped to the ground (the body of a car).
    #[arg(long, value_name = "BODY")]
    pub clamp: Option<String>,
    /// Element removed before the rig runs (repeatable; `*` matches any run of characters), e.g. a
    /// car's tires and drive controllers: `--remove-element 'tire_*' --remove-element 'drive_*'`.
    #[arg(long = "remove-element", value_name = "NAME")]
    pub remove_element: Vec<String>,
    /// CoG height in m (with --wheelbase: anti-dive/-lift/-squat in percent).
    #[arg(long)]
    pub cg_height: Option<f64>,
    /// Wheelbase in m.
    #[arg(long)]
    pub wheelbase: Option<f64>,
    /// The axle is a rear axle (anti-lift and anti-squat instead of anti-dive).
    #[arg(long)]
    pub rear: bool,
    /// Model value changed: NAME=VALUE (repeatable; docs/parameters.md), e.g.
    /// bushing_scale=1000 for the rigid-link limit.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
    /// Write CSV files only (no plots).
    #[arg(long)]
    pub no_plots: bool,
    /// Another model of the same vehicle (repeatable; e.g. the reduced cars of `sprung reduce`)
    /// run through the same tests with the same rig options: its curves go to `TEST_STEM.csv`,
    /// the largest differences from MODEL are printed, and `TEST_compare.png` draws the left
    /// wheel's curves of all models (docs/kc.md, "The reduced cars on the rig").
    #[arg(long = "compare", value_name = "MODEL")]
    pub compare: Vec<PathBuf>,
}

fn test_of(t: TestArg) -> Option<Test> {
    Some(match t {
        TestArg::Parallel => Test::Parallel,
        TestArg::Opposite => Test::Opposite,
        TestArg::Steer => Test::Steer,
        TestArg::Fx => Test::Fx,
        TestArg::FxContact => Test::FxContact,
        TestArg::Fy => Test::Fy,
        TestArg::Mz => Test::Mz,
        TestArg::All => return None,
    })
}

/// Runs the rig.
pub fn run(a: &KcArgs) -> anyhow::Result<()> {
    if !a.carrier.is_empty() && a.carrier.len() != a.wheel_centre.len() {
        bail!(
            "--carrier given {} times but --wheel-centre {} times: give one carrier per wheel centre, in the same order",
            a.carrier.len(),
            a.wheel_centre.len()
        );
    }
    if a.steps < 3 {
        bail!("--steps {}: need at least 3 points per sweep", a.steps);
    }
    let d = super::load_description(&a.model, &a.set)?;
    let model = sprung::Model::from_description(d)
        .with_context(|| format!("compiling {}", a.model.display()))?;
    let pitch = match (a.cg_height, a.wheelbase) {
        (Some(h), Some(l)) if h > 0.0 && l > 0.0 => Some(PitchGeometry {
            cg_height: h,
            wheelbase: l,
            front: !a.rear,
        }),
        (None, None) => None,
        _ => bail!("--cg-height and --wheelbase go together and must be positive"),
    };
    let options = RigOptions {
        corners: a
            .wheel_centre
            .iter()
            .enumerate()
            .map(|(k, w)| CornerSpec {
                wheel_centre: w.clone(),
                carrier: a.carrier.get(k).cloned(),
            })
            .collect(),
        wheel_radius: a.wheel_radius,
        reference: match a.load {
            Some(f) => Reference::Load(f),
            None => Reference::Travel(0.0),
        },
        vertical: if a.load.is_some() {
            Vertical::Load
        } else {
            Vertical::Travel
        },
        steer_input: a.steer_input.clone(),
        clamp: a.clamp.clone(),
        remove_elements: a.remove_element.clone(),
        pitch,
    };
    let mut tests: Vec<Test> = Vec::new();
    for t in &a.test {
        match test_of(*t) {
            Some(t) => tests.push(t),
            None => tests.extend(
                Test::ALL
                    .into_iter()
                    .filter(|t| *t != Test::Steer || a.steer_input.is_some()),
            ),
        }
    }
    tests.dedup();
    if tests.contains(&Test::Steer) && a.steer_range.is_none() {
        bail!("the steering test needs --steer-range (half range in the steering input's unit)");
    }
    let model: Arc<sprung::Model> = model;
    let mut rig = Rig::new(&model, options.clone())
        .with_context(|| format!("setting up the K&C rig for {}", a.model.display()))?;
    // The models compared with MODEL, each on its own rig with the same options.
    let mut others = Vec::new();
    for path in &a.compare {
        let d = super::load_description(path, &a.set)?;
        let m = sprung::Model::from_description(d)
            .with_context(|| format!("compiling {}", path.display()))?;
        let r = Rig::new(&m, options.clone())
            .with_context(|| format!("setting up the K&C rig for {}", path.display()))?;
        others.push((model_stem(path), r));
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("creating the output folder {}", a.out.display()))?;
    let reference = rig.reference_state()?;
    let mut summary = String::new();
    summary += &format!(
        "K&C rig: {} ({})\n",
        model.description().model.name,
        a.model.display()
    );
    for (c, s) in rig.corners().iter().zip(&reference) {
        summary += &format!(
            "  wheel {}: centre marker {}, carrier {}; reference travel {:+.3} mm, load {:.1} N, toe {:+.4} deg, camber {:+.4} deg\n",
            c.name,
            c.wheel_centre,
            c.carrier,
            (s.centre.z - c.design_centre.z) * 1e3,
            s.force.z,
            s.toe,
            s.camber
        );
    }
    print!("{summary}");
    for test in tests {
        let range = match test {
            Test::Steer => a.steer_range.expect("checked"),
            t if t.is_travel() => a.range.map(|r| r * 1e-3).unwrap_or(0.08),
            t => a
                .range
                .or(t.default_range())
                .expect("force tests have a range"),
        };
        let xs = Rig::values(range, a.steps);
        let mut last = std::time::Instant::now();
        let sweep = rig
            .run(test, &xs, &mut |k, n| {
                if last.elapsed().as_secs_f64() > 1.0 || k == n {
                    print!("\r  {:<10} {k}/{n} points", test.name());
                    let _ = std::io::stdout().flush();
                    last = std::time::Instant::now();
                }
            })
            .with_context(|| format!("{} test of {}", test.name(), a.model.display()))?;
        println!();
        let csv = a.out.join(format!("{}.csv", test.name()));
        write_csv(&sweep, &csv).with_context(|| format!("writing {}", csv.display()))?;
        let lines = figures(&sweep, pitch);
        for l in &lines {
            println!("    {l}");
        }
        summary += &format!("{}:\n", test.name());
        for l in &lines {
            summary += &format!("  {l}\n");
        }
        print!("    -> {}", csv.display());
        if !a.no_plots {
            let png = a.out.join(format!("{}.png", test.name()));
            plot(&sweep, &png, &model.description().model.name)
                .with_context(|| format!("plotting {}", png.display()))?;
            print!(", {}", png.display());
        }
        println!();
        if !others.is_empty() {
            let mut sweeps = vec![(model_stem(&a.model), sweep)];
            for (stem, r) in &mut others {
                let sw = r.run(test, &xs, &mut |_, _| {}).with_context(|| {
                    format!("{} test of the compared model {stem}", test.name())
                })?;
                let csv = a.out.join(format!("{}_{stem}.csv", test.name()));
                write_csv(&sw, &csv).with_context(|| format!("writing {}", csv.display()))?;
                let line = format!(
                    "{stem} minus {}: {} -> {}",
                    sweeps[0].0,
                    differences(&sweeps[0].1, &sw),
                    csv.display()
                );
                println!("    {line}");
                summary += &format!("  {line}\n");
                sweeps.push((stem.clone(), sw));
            }
            if !a.no_plots {
                let png = a.out.join(format!("{}_compare.png", test.name()));
                plot_compare(&sweeps, &png)
                    .with_context(|| format!("plotting {}", png.display()))?;
                println!("    -> {}", png.display());
            }
        }
    }
    let path = a.out.join("summary.txt");
    std::fs::write(&path, summary).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The file stem of a model path (the label of a compared model).
fn model_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Largest differences `b − a` over the sweep points of toe, camber (deg) and half-track change
/// at the wheel centre (mm), per wheel.
fn differences(a: &Sweep, b: &Sweep) -> String {
    let worst = |x: Vec<f64>, y: Vec<f64>| {
        x.iter()
            .zip(&y)
            .map(|(p, q)| (q - p).abs())
            .fold(0.0, f64::max)
    };
    (0..a.corner_names.len().min(b.corner_names.len()))
        .map(|c| {
            format!(
                "wheel {}: toe {:.4} deg, camber {:.4} deg, half-track {:.4} mm",
                a.corner_names[c],
                worst(a.toe(c), b.toe(c)),
                worst(a.camber(c), b.camber(c)),
                1e3 * worst(a.half_track_centre(c), b.half_track_centre(c))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Toe, camber, half-track change at the wheel centre and wheel load of the first wheel of
/// every model against the swept variable (the first model solid, the others dashed).
fn plot_compare(sweeps: &[(String, Sweep)], png: &Path) -> anyhow::Result<()> {
    let first = &sweeps[0].1;
    let wheel = &first.corner_names[0];
    let spec = [
        ("toe", "toe [deg] (+ toe-in)"),
        ("camber", "camber [deg] (+ top out)"),
        (
            "half_track_wc",
            "half-track change at the wheel centre [mm]",
        ),
        ("wheel_load", "vertical wheel force [N]"),
    ];
    let mut panels = Vec::new();
    for (col, label) in spec {
        let mut p = Panel::new(label, label);
        for (k, (stem, s)) in sweeps.iter().enumerate() {
            let cols = s.columns();
            let name = format!("{col}_{wheel}");
            if let Some(c) = cols.iter().find(|c| c.name == name) {
                p = p.with_series(Series::new(
                    stem.clone(),
                    cols[0].values.clone(),
                    c.values.clone(),
                    if k == 0 {
                        LineStyle::Solid
                    } else {
                        LineStyle::Dashed
                    },
                ));
            }
        }
        panels.push(p);
    }
    let options = PlotOptions {
        layout: Layout::Grid { rows: 2, cols: 2 },
        window: None,
        size: Some((1200, 800)),
        x_label: x_label(first.test),
    };
    plot_time_series_with(
        png,
        &format!("K&C {} test, wheel {wheel}", first.test.name()),
        &panels,
        &options,
    )?;
    Ok(())
}

/// The figures at the reference point of a sweep, one line each.
fn figures(s: &Sweep, pitch: Option<PitchGeometry>) -> Vec<String> {
    let mut out = Vec::new();
    let names: Vec<&str> = match s.test {
        Test::Parallel => vec![
            "toe_rate",
            "camber_rate",
            "track_rate_cp",
            "wheel_rate",
            "side_view_tan_cp",
            "side_view_tan_wc",
        ],
        Test::Opposite => vec!["toe_rate", "camber_rate", "wheel_rate"],
        _ => vec![
            "toe_compliance",
            "camber_compliance",
            "wc_x_compliance",
            "wc_y_compliance",
            "wc_z_compliance",
        ],
    };
    let cols = s.columns();
    let k = s.centre_index();
    for (c, cn) in s.corner_names.iter().enumerate() {
        let mut parts = Vec::new();
        for n in &names {
            if let Some(col) = cols.iter().find(|x| x.name == format!("{n}_{cn}")) {
                parts.push(format!("{n} {:+.4} {}", col.values[k], col.unit));
            }
        }
        if s.test == Test::Parallel
            && let Some(g) = pitch
        {
            let (a, b) = anti_pitch_percent(
                &g,
                s.side_view_tan(c, true)[k],
                s.side_view_tan(c, false)[k],
            );
            if g.front {
                parts.push(format!("anti-dive {a:.1} %"));
            } else {
                parts.push(format!("anti-lift {a:.1} %, anti-squat {b:.1} %"));
            }
        }
        out.push(format!("{cn}: {}", parts.join(", ")));
    }
    for col in cols.iter().filter(|c| {
        c.name.starts_with("roll_centre_height")
            || c.name.starts_with("roll_stiffness")
            || c.name.starts_with("roll_steer")
    }) {
        out.push(format!("{} {:.4} {}", col.name, col.values[k], col.unit));
    }
    out
}

fn write_csv(s: &Sweep, path: &Path) -> anyhow::Result<()> {
    // Names and numbers only (no quoting needed): header NAME_UNIT, '/' in units as '_per_'.
    let cols = s.columns();
    let mut text = cols
        .iter()
        .map(|c| format!("{}_{}", c.name, c.unit.replace('/', "_per_")))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for k in 0..s.points.len() {
        let row: Vec<String> = cols
            .iter()
            .map(|c| format!("{:.9e}", c.values[k]))
            .collect();
        text += &row.join(",");
        text.push('\n');
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// Toe, camber, half-track and wheel load (travel tests) or toe, camber and wheel-centre
/// displacement (force tests) against the swept variable, one line per wheel.
fn plot(s: &Sweep, png: &Path, model: &str) -> anyhow::Result<()> {
    let cols = s.columns();
    let x = &cols[0];
    let panels_spec: &[(&str, &str)] = if s.test.is_travel() {
        &[
            ("toe", "toe [deg] (+ toe-in)"),
            ("camber", "camber [deg] (+ top out)"),
            ("half_track_cp", "half-track change at contact [mm]"),
            ("wheel_load", "vertical wheel force [N]"),
        ]
    } else {
        &[
            ("toe", "toe [deg] (+ toe-in)"),
            ("camber", "camber [deg] (+ top out)"),
            ("wc_dx", "wheel-centre dx [mm]"),
            ("wc_dy", "wheel-centre dy [mm]"),
        ]
    };
    let mut panels = Vec::new();
    for (col, label) in panels_spec {
        let mut p = Panel::new(*label, *label);
        for cn in &s.corner_names {
            if let Some(c) = cols.iter().find(|c| c.name == format!("{col}_{cn}")) {
                p = p.with_series(Series::new(
                    format!("wheel {cn}"),
                    x.values.clone(),
                    c.values.clone(),
                    if s.sides[s.corner_names.iter().position(|n| n == cn).unwrap_or(0)] > 0.0 {
                        LineStyle::Solid
                    } else {
                        LineStyle::Dashed
                    },
                ));
            }
        }
        panels.push(p);
    }
    let options = PlotOptions {
        layout: Layout::Grid { rows: 2, cols: 2 },
        window: None,
        size: Some((1200, 800)),
        x_label: x_label(s.test),
    };
    plot_time_series_with(
        png,
        &format!("K&C {}: {} test", model, s.test.name()),
        &panels,
        &options,
    )?;
    Ok(())
}

/// The x-axis label of a test's plots.
fn x_label(test: Test) -> &'static str {
    match test {
        Test::Parallel => "wheel travel, parallel [mm]",
        Test::Opposite => "wheel travel, left (right opposite) [mm]",
        Test::Steer => "steering input",
        Test::Fx => "Fx at the wheel centre [N]",
        Test::FxContact => "Fx at the contact point [N]",
        Test::Fy => "Fy at the contact point [N]",
        Test::Mz => "Mz on the carrier [Nm]",
    }
}
