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
    if !c.open_elements.is_empty() {
        println!("elements:        {} (open kinds)", c.open_elements.len());
        for e in &c.open_elements {
            println!(
                "  {:<24} {} on {} markers, {} states",
                e.name,
                e.law.kind(),
                e.markers.len(),
                e.law.n_states()
            );
        }
    }
    println!("curves:          {}", c.curves.len());
    println!(
        "DOF:             {} (= 6 x {} bodies; {} position coordinates with quaternions)",
        c.n_body_v(),
        c.bodies.len(),
        c.n_r()
    );
    if c.n_states() > 0 {
        println!(
            "element states:  {} (in {} blocks of 6 after the bodies' velocities)",
            c.n_states(),
            c.n_state_blocks
        );
    }
    println!(
        "coupling blocks: {} of {} (6x6 blocks: bodies, then element states)",
        c.pattern.n_stored(),
        c.pattern.n_blocks() * c.pattern.n_blocks()
    );
    println!("inputs:          {}", c.inputs.len());
    for u in &m.inputs {
        println!(
            "  {:<24} {:?} at {} ({:?} frame)",
            u.name, u.kind, u.marker, u.frame
        );
    }
    // Resolving the channels catches what would only fail at run time.
    let outputs = sprung_mbs::outputs::OutputSet::new(&m, &c)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    println!("outputs:         {}", m.outputs.len());
    for (o, ch) in m.outputs.iter().zip(&outputs.channels) {
        let what = o
            .marker
            .as_deref()
            .or(o.body.as_deref())
            .or(o.element.as_deref())
            .unwrap_or("");
        let quantity = match &o.output {
            Some(out) => format!("output '{out}'"),
            None => format!("{:?}", o.quantity),
        };
        println!("  {:<24} [{}] {quantity} of {what}", o.name, ch.unit);
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
