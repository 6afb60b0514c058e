//! `sprung check MODEL`: validate and summarise a model.

use std::collections::BTreeMap;
use std::path::Path;

use super::load_model;

/// Runs the command.
pub fn run(path: &Path) -> anyhow::Result<()> {
    let (m, c) = load_model(path)?;
    println!("model '{}' ({}): OK", m.model.name, path.display());
    if let Some(d) = &m.model.description {
        println!("  {d}");
    }
    println!(
        "bodies:          {} (+ ground '{}')",
        c.bodies.len(),
        c.ground_name
    );
    println!("markers:         {}", c.markers.len());
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for fe in &m.force_elements {
        *by_type.entry(fe.type_name()).or_default() += 1;
    }
    let types: Vec<String> = by_type.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!(
        "force elements:  {} ({})",
        c.elements.len(),
        types.join(", ")
    );
    println!("curves:          {}", c.curves.len());
    println!(
        "DOF:             {} (= 6 x {} bodies; {} position coordinates with quaternions)",
        c.n_v(),
        c.bodies.len(),
        c.n_r()
    );
    println!(
        "coupling blocks: {} of {} (6x6 body blocks)",
        c.pattern.n_stored(),
        c.bodies.len() * c.bodies.len()
    );
    println!("inputs:          {}", c.inputs.len());
    for u in &m.inputs {
        println!(
            "  {:<24} {:?} at {} ({:?} frame)",
            u.name, u.kind, u.marker, u.frame
        );
    }
    println!("outputs:         {}", m.outputs.len());
    for o in &m.outputs {
        let what = o
            .marker
            .as_deref()
            .or(o.body.as_deref())
            .or(o.element.as_deref())
            .unwrap_or("");
        println!(
            "  {:<24} [{}] {:?} of {what}",
            o.name,
            o.quantity.unit(),
            o.quantity
        );
    }
    let s = &m.solver;
    println!(
        "solver:          {} step {} s, t_end {} s, output every {} s, initial state {:?}",
        s.method,
        s.step,
        s.t_end,
        s.output_interval(),
        m.initial_state.kind
    );
    Ok(())
}
