//! `sprung modes MODEL`: linearise at static equilibrium (or the design state if the model starts
//! there) and print eigenvalues, natural frequencies, damping ratios and the stiffness ratio
//! max|λ|/min|λ| (document 000, section 2).

use std::path::Path;

use anyhow::Context;
use sprung_mbs::MbsSystem;
use sprung_mbs::equilibrium::{self, EquilibriumOptions};
use sprung_mbs::modes::{ModesOptions, modal_analysis_with};
use sprung_model::InitialStateKind;

use super::load_model;

/// Runs the command.
pub fn run(path: &Path, count: usize) -> anyhow::Result<()> {
    let (m, model) = load_model(path)?;
    let mut sys = MbsSystem::new(model.clone());
    sys.eval.force_portable(super::portable_requested());
    let (mut r, v) = model.design_state();
    let at = if m.initial_state.kind == InitialStateKind::Equilibrium {
        let eq = equilibrium::solve(&mut sys, 0.0, &r, EquilibriumOptions::default())
            .with_context(|| format!("static equilibrium of '{}'", m.model.name))?;
        r = eq.r;
        "static equilibrium at t = 0 (inputs at t = 0 applied)"
    } else {
        "the design state"
    };
    let v = if m.initial_state.kind == InitialStateKind::Equilibrium {
        vec![0.0; v.len()]
    } else {
        v
    };
    let opts = ModesOptions {
        count: count.max(1),
        ..ModesOptions::default()
    };
    let modes = modal_analysis_with(&mut sys, 0.0, &r, &v, &opts)
        .with_context(|| format!("modal analysis of '{}'", m.model.name))?;
    println!(
        "model '{}': linearised at {at}, {} DOF, {} element states, {} first-order states",
        m.model.name,
        model.n_body_v(),
        model.n_states(),
        2 * model.n_body_v() + model.n_states()
    );
    print!("{}", modes.report(count));
    Ok(())
}
