//! `sprung bench solvers`: the command-line front end of the work-precision benchmark of the
//! solver suite; the ladders, the axle case, the table and the plot are the library module
//! [`sprung::workprecision`] (its docs state the error and work measures).

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use serde_json::json;
use sprung::workprecision::{
    AxleBench, AxleCase, BenchPoint, DEFAULT_AXLE_METHODS, DEFAULT_METHODS, StiffProblem,
    axle_ladder, format_table, label, machine, plot, setting, stiff_ladder,
};
use sprung_io::metrics::Window;
use sprung_solve::ode::Method;

/// Arguments of `sprung bench solvers`.
#[derive(Args, Debug, Clone)]
pub struct BenchSolversArgs {
    /// Problems: any of hires, vdp, rober, axle (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "hires,vdp,rober,axle")]
    pub problems: Vec<String>,
    /// Stiff methods for HIRES / Van der Pol / ROBER (comma-separated catalogue names).
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_METHODS)]
    pub methods: Vec<String>,
    /// Relative tolerances of the ladder for the test problems.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1e-3,1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10"
    )]
    pub rtols: Vec<f64>,
    /// Methods on the double-wishbone load case.
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_AXLE_METHODS)]
    pub axle_methods: Vec<String>,
    /// Relative tolerances of the ladder on the axle (adaptive methods).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1e-3,1e-4,1e-5,1e-6,1e-7"
    )]
    pub axle_rtols: Vec<f64>,
    /// Fixed steps in ms on the axle (fixed-step methods such as lsrt2).
    #[arg(long, value_delimiter = ',', default_value = "4,2,1,0.5,0.25")]
    pub axle_steps_ms: Vec<f64>,
    /// Re-linearisation intervals (steps) of the fixed-step mechanical methods (lsrt2, pie, …)
    /// on the axle, each a row of its own (e.g. `1,5`); default: the model's `[solver]` value.
    #[arg(long, value_delimiter = ',')]
    pub axle_relinearise_every: Vec<u64>,
    /// Axle model file.
    #[arg(long, default_value = "models/double_wishbone.toml")]
    pub model: PathBuf,
    /// Channel whose NMSE is the axle error measure.
    #[arg(long, default_value = "wc_dx_L")]
    pub channel: String,
    /// Second channel reported (NMSE) on the axle.
    #[arg(long, default_value = "tl_bushing_fx_L")]
    pub force_channel: String,
    /// Relative tolerance of the RODAS4 reference of the axle.
    #[arg(long, default_value_t = 1e-9)]
    pub reference_rtol: f64,
    /// Timed runs per configuration (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// PNG (or SVG) work-precision diagram; the reference cache goes to the same directory.
    #[arg(long, default_value = "out/bench/solvers.png")]
    pub out: PathBuf,
    /// Image size `WIDTHxHEIGHT` in pixels.
    #[arg(long, default_value = "1000x800")]
    pub size: String,
    /// Print JSON to stdout instead of tables (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Print no progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

impl Default for BenchSolversArgs {
    fn default() -> Self {
        BenchSolversArgs {
            problems: ["hires", "vdp", "rober", "axle"].map(String::from).to_vec(),
            methods: DEFAULT_METHODS.split(',').map(String::from).collect(),
            rtols: (3..=10).map(|k| 10f64.powi(-k)).collect(),
            axle_methods: DEFAULT_AXLE_METHODS.split(',').map(String::from).collect(),
            axle_rtols: (3..=7).map(|k| 10f64.powi(-k)).collect(),
            axle_steps_ms: vec![4.0, 2.0, 1.0, 0.5, 0.25],
            axle_relinearise_every: Vec::new(),
            model: PathBuf::from("models/double_wishbone.toml"),
            channel: "wc_dx_L".into(),
            force_channel: "tl_bushing_fx_L".into(),
            reference_rtol: 1e-9,
            repeats: 3,
            out: PathBuf::from("out/bench/solvers.png"),
            size: "1000x800".into(),
            json: false,
            quiet: false,
        }
    }
}

/// Runs the command.
pub fn run(a: &BenchSolversArgs) -> anyhow::Result<()> {
    let mut stiff = Vec::new();
    let mut axle = false;
    for p in &a.problems {
        if p.trim().eq_ignore_ascii_case("axle") || p.trim().eq_ignore_ascii_case("double_wishbone")
        {
            axle = true;
        } else {
            stiff.push(StiffProblem::from_name(p).ok_or_else(|| {
                anyhow::anyhow!("unknown problem '{p}'; choose from hires, vdp, rober, axle")
            })?);
        }
    }
    let methods: Vec<Method> = a
        .methods
        .iter()
        .map(|m| Method::from_name(m).map_err(|e| anyhow::anyhow!("--methods: {e}")))
        .collect::<Result<_, _>>()?;
    for r in a.rtols.iter().chain(&a.axle_rtols) {
        if !(*r > 0.0 && *r < 1.0) {
            bail!("relative tolerances must lie in (0, 1), got {r}");
        }
    }
    if !a.axle_steps_ms.iter().all(|h| *h > 0.0) {
        bail!("--axle-steps-ms must be positive step sizes in ms");
    }
    if a.axle_relinearise_every.contains(&0) {
        bail!("--axle-relinearise-every must be whole numbers of steps >= 1, got 0");
    }
    let size = a
        .size
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--size must look like 1100x860, got '{}'", a.size))?;
    let quiet = a.quiet;
    let mut log = |s: &str| {
        if !quiet {
            eprintln!("{s}");
        }
    };
    let total = stiff.len() * methods.len() * a.rtols.len();
    let mut done = 0usize;
    let mut progress = |p: &BenchPoint| {
        done += 1;
        if quiet {
            return;
        }
        let what = match (&p.failure, p.scd) {
            (Some(f), _) => format!("FAILED ({})", f.chars().take(70).collect::<String>()),
            (None, Some(s)) => format!("scd {s:5.2}, {:9.3} ms, {} steps", p.cpu_ms, p.steps),
            (None, None) => format!(
                "NMSE {:.2e}, {:9.3} ms, {} steps",
                p.error, p.cpu_ms, p.steps
            ),
        };
        let of = if p.problem == "axle" {
            String::new()
        } else {
            format!("/{total}")
        };
        eprintln!(
            "[{done:>3}{of}] {:<6} {:<9} {:>9}: {what}",
            p.problem,
            label(p),
            setting(p)
        );
    };
    let mut points = Vec::new();
    for &prob in &stiff {
        for &m in &methods {
            points.extend(stiff_ladder(prob, m, &a.rtols, a.repeats, &mut progress));
        }
    }
    if axle {
        let cache_dir = a
            .out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let case = AxleCase {
            model: a.model.clone(),
            t_start: 4.8,
            t_end: 6.0,
            window: Window::new(4.9, 6.0),
            channel: a.channel.clone(),
            force_channel: a.force_channel.clone(),
            reference_rtol: a.reference_rtol,
            cache_dir,
            portable: super::portable_requested(),
            breakpoints: Default::default(),
        };
        let bench = AxleBench::new(case, &mut log)?;
        points.extend(axle_ladder(
            &bench,
            &a.axle_methods,
            &a.axle_rtols,
            &a.axle_steps_ms,
            &a.axle_relinearise_every,
            a.repeats,
            &mut progress,
        )?);
    }
    let machine = machine();
    let title = "Work-precision: error vs CPU time (sprung)";
    plot(&points, &a.out, title, Some(size))?;
    if a.json {
        let doc = json!({
            "machine": machine,
            "sprung_version": env!("CARGO_PKG_VERSION"),
            "repeats": a.repeats,
            "plot": a.out.display().to_string(),
            "points": points.iter().map(BenchPoint::to_json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "machine: {machine}; CPU time = median of >= {} runs (wall clock of the integration; short runs repeated to >= 50 ms, runs > 0.5 s once)",
            a.repeats
        );
        let mut keys: Vec<&str> = Vec::new();
        for p in &points {
            if !keys.contains(&p.problem.as_str()) {
                keys.push(&p.problem);
            }
        }
        for k in keys {
            println!();
            print!("{}", format_table(k, &points));
        }
        println!();
        println!("plot: {}", a.out.display());
    }
    Ok(())
}
