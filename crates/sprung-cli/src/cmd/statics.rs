//! `sprung static MODEL`: static equilibrium q(t, r, 0) = 0 (Newton with the block-sparse LU,
//! `sprung_mbs::equilibrium`) and a printout of the result: how the search ended, the output
//! channels and every body's displacement and rotation from the design state. Options: without
//! gravity, at a time T (input signals evaluated at T), with inputs set to given constant values,
//! and the dense reference solver. Long searches print one progress line per Newton iteration to
//! stderr once they have run for half a second.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use sprung_mbs::equilibrium::{self, Convergence, EquilibriumOptions, EquilibriumSolver};
use sprung_mbs::outputs::OutputSet;
use sprung_mbs::rotation::{log_so3, quat_to_matrix};
use sprung_mbs::{CompiledModel, MbsSystem};

/// Arguments of `sprung static`.
#[derive(Args, Debug)]
pub struct StaticArgs {
    /// Model file (.toml or .json).
    pub model: PathBuf,
    /// Switch gravity off (travel under the inputs alone).
    #[arg(long)]
    pub no_gravity: bool,
    /// Time at which the input signals are evaluated, s.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub time: f64,
    /// Set an input to a constant value instead of its signal: NAME=VALUE (repeatable).
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// Residual tolerance relative to the load scale (see the equilibrium documentation).
    #[arg(long, default_value_t = EquilibriumOptions::default().tolerance)]
    pub tolerance: f64,
    /// Maximum Newton iterations.
    #[arg(long, default_value_t = EquilibriumOptions::default().max_iterations)]
    pub max_iterations: usize,
    /// Use the dense LU instead of the block-sparse one (reference path; quadratic memory).
    #[arg(long)]
    pub dense: bool,
    /// Number of bodies to list (largest displacement first); 0 lists all.
    #[arg(long, default_value_t = 20)]
    pub bodies: usize,
    /// Change a model value: NAME=VALUE, a declared parameter or a path (repeatable;
    /// docs/parameters.md).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = super::parse_set)]
    pub set: Vec<(String, f64)>,
}

/// Runs the command.
pub fn run(a: &StaticArgs) -> anyhow::Result<()> {
    if !a.time.is_finite() {
        bail!("--time must be a finite number of seconds, got {}", a.time);
    }
    if !(a.tolerance.is_finite() && a.tolerance > 0.0 && a.tolerance < 1.0) {
        bail!(
            "--tolerance must be in (0, 1) (relative residual), got {}",
            a.tolerance
        );
    }
    let mut m = super::load_description(&a.model, &a.set)?;
    if a.no_gravity {
        m.model.gravity = [0.0; 3];
    }
    for spec in &a.inputs {
        let (name, value) = spec
            .split_once('=')
            .with_context(|| format!("--input '{spec}': expected NAME=VALUE"))?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .with_context(|| format!("--input '{spec}': '{value}' is not a finite number"))?;
        let name = name.trim();
        let input = m.inputs.iter_mut().find(|i| i.name == name);
        let Some(input) = input else {
            let names: Vec<&str> = m.inputs.iter().map(|i| i.name.as_str()).collect();
            bail!(
                "--input '{spec}': the model has no input '{name}' (inputs: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        };
        input.signal = sprung_model::Signal::Constant { value };
    }
    let model = Arc::new(
        sprung_mbs::compile_with(&m, &sprung::element_registry())
            .with_context(|| format!("compiling {}", a.model.display()))?,
    );
    if model.bodies.is_empty() {
        bail!("model '{}' has no moving bodies", m.model.name);
    }
    let mut outputs = OutputSet::new(&m, &model).map_err(anyhow::Error::msg)?;
    let mut sys = MbsSystem::new(model.clone());
    let (r0, _) = model.design_state();
    let opts = EquilibriumOptions {
        tolerance: a.tolerance,
        max_iterations: a.max_iterations,
        solver: if a.dense {
            EquilibriumSolver::Dense
        } else {
            EquilibriumSolver::BlockSparse
        },
        ..EquilibriumOptions::default()
    };
    println!(
        "model '{}': {} bodies, {} DOF; static equilibrium at t = {} s, gravity {}, {} LU",
        m.model.name,
        model.bodies.len(),
        model.n_body_v(),
        a.time,
        if a.no_gravity { "off" } else { "on" },
        if a.dense { "dense" } else { "block-sparse" }
    );
    let start = Instant::now();
    let mut progress = |p: &equilibrium::EquilibriumProgress| {
        if p.elapsed.as_secs_f64() >= 0.5 {
            eprintln!(
                "  iteration {:>3}: residual {:.2e}, step {:.2e}, line search {}, {:.1} s",
                p.iteration,
                p.relative_residual,
                p.step,
                p.alpha,
                p.elapsed.as_secs_f64()
            );
        }
    };
    let eq = equilibrium::solve_observed(&mut sys, a.time, &r0, &opts, &mut progress)
        .with_context(|| format!("static equilibrium of '{}'", m.model.name))?;
    let how = match eq.convergence {
        Convergence::Residual => "residual below the tolerance".to_string(),
        Convergence::Stalled { step } => format!(
            "residual stalled at round-off level (above the tolerance {:.1e}; last step {step:.1e}, \
             positions as accurate as the residual can tell)",
            a.tolerance
        ),
    };
    println!(
        "converged in {} Newton iterations ({:.3} s): relative residual {:.2e} of the load scale {:.4} N; {how}",
        eq.iterations,
        start.elapsed().as_secs_f64(),
        eq.relative_residual,
        eq.load_scale
    );
    // Channels and bodies read full poses: a model with ideal joints holds joint coordinates
    // in r (`docs/joints.md`), expanded here (the design with every joint coordinate at 0).
    let mut v = vec![0.0; model.n_body_v()];
    v.extend_from_slice(&eq.states);
    let r_eq = expanded(&model, &eq.r, &v);
    let r_design = {
        let mut r = r0.clone();
        for &b in &model.joints.order {
            r[7 * b..7 * b + 7].fill(0.0);
        }
        expanded(&model, &r, &v)
    };
    print_channels(&mut outputs, &mut sys, a.time, &r_eq, &v);
    print_bodies(&model, &r_design, &r_eq, a.bodies);
    Ok(())
}

/// The full body poses at (r, v) (r itself for a model without joints).
fn expanded(model: &CompiledModel, r: &[f64], v: &[f64]) -> Vec<f64> {
    let mut rf = r.to_vec();
    if !model.joints.is_empty() {
        let mut vf = v.to_vec();
        model.joints.expand(r, v, &mut rf, &mut vf);
    }
    rf
}

/// Prints the channels at the equilibrium: full poses `r`, velocities `v` (body velocities
/// zero, then the element states).
fn print_channels(outputs: &mut OutputSet, sys: &mut MbsSystem, t: f64, r: &[f64], v: &[f64]) {
    if outputs.is_empty() {
        println!("output channels: none");
        return;
    }
    let mut values = vec![0.0; outputs.len()];
    outputs.evaluate(&mut sys.eval, t, r, v, &mut values);
    println!("output channels:");
    let width = outputs
        .channels
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    for (c, x) in outputs.channels.iter().zip(&values) {
        println!("  {:<width$}  {:>16.9e} {}", c.name, x, c.unit);
    }
}

fn print_bodies(model: &CompiledModel, r0: &[f64], r: &[f64], count: usize) {
    let n = model.bodies.len();
    let mut rows: Vec<(usize, [f64; 3], [f64; 3])> = (0..n)
        .map(|i| {
            let d = [
                r[7 * i] - r0[7 * i],
                r[7 * i + 1] - r0[7 * i + 1],
                r[7 * i + 2] - r0[7 * i + 2],
            ];
            // Rotation from the design orientation, global axes, as a rotation vector.
            let rel = quat_to_matrix(&r[7 * i + 3..7 * i + 7])
                * quat_to_matrix(&r0[7 * i + 3..7 * i + 7]).transpose();
            let rv = log_so3(&rel);
            (i, d, [rv.x, rv.y, rv.z])
        })
        .collect();
    let shown = if count == 0 { n } else { count.min(n) };
    if shown < n {
        rows.sort_by(|a, b| {
            let na = a.1.iter().map(|x| x * x).sum::<f64>();
            let nb = b.1.iter().map(|x| x * x).sum::<f64>();
            nb.total_cmp(&na)
        });
        println!(
            "body displacements from the design state ({shown} of {n}, largest first; --bodies 0 lists all):"
        );
    } else {
        println!("body displacements from the design state:");
    }
    let width = model
        .bodies
        .iter()
        .map(|b| b.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!(
        "  {:<width$}  {:>12} {:>12} {:>12}  {:>10} {:>10} {:>10}",
        "body", "dx mm", "dy mm", "dz mm", "rx deg", "ry deg", "rz deg"
    );
    for (i, d, rv) in rows.iter().take(shown) {
        println!(
            "  {:<width$}  {:>12.6} {:>12.6} {:>12.6}  {:>10.5} {:>10.5} {:>10.5}",
            model.bodies[*i].name,
            d[0] * 1e3,
            d[1] * 1e3,
            d[2] * 1e3,
            rv[0].to_degrees(),
            rv[1].to_degrees(),
            rv[2].to_degrees()
        );
    }
}
