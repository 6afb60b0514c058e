//! `sprung check MODEL [--solver NAME] [--step H]`: validate and summarise a model, then list
//! plausibility warnings (masses, far positions, the stiffest mode against the step and solver;
//! [`super::plausibility`]). Warnings do not fail the check.

use std::collections::BTreeMap;
use std::path::Path;

use super::load_model_with;

/// Runs the command.
pub fn run(
    path: &Path,
    solver: Option<&str>,
    step: Option<f64>,
    sets: &[(String, f64)],
    paths: bool,
) -> anyhow::Result<()> {
    let (m, c) = load_model_with(path, sets)?;
    // [hardening17] what `run` would reject must fail `check` too, located in the file.
    let method = m.solver.method.to_lowercase();
    let route = sprung_mbs::simulate::route(&method, None).map_err(|e| {
        sprung_model::load::problem_in_file(
            path,
            "solver",
            "solver",
            format!("`method` = \"{}\": {e}", m.solver.method),
            "use a name listed by `sprung solvers`",
        )
    })?;
    if let Err(e) = m.solver.validate(route.step_mode()) {
        let p = &e.problems[0];
        return Err(sprung_model::load::problem_in_file(
            path,
            "solver",
            "solver",
            format!("`{}`: {}", p.field, p.message),
            p.hint.clone(),
        )
        .into());
    }
    if let Err(e) = sprung_mbs::outputs::OutputSet::new(&m, &c) {
        let name = e
            .strip_prefix("output '")
            .and_then(|r| r.split('\'').next())
            .unwrap_or("");
        return Err(sprung_model::load::problem_in_file(
            path,
            "output",
            name,
            e.clone(),
            "refer to a marker, body or element defined in the model",
        )
        .into());
    }
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
    let jointed: Vec<&sprung_mbs::joints::JointDef> = c.joints.defs.iter().flatten().collect();
    if jointed.is_empty() {
        println!(
            "DOF:             {} (= 6 x {} bodies; {} position coordinates with quaternions)",
            c.n_body_v(),
            c.bodies.len(),
            c.n_r()
        );
    } else {
        // Ideal joints (docs/joints.md): one joint coordinate per jointed body except
        // followers (tabulated joints without an own coordinate).
        let free = c.bodies.len() - jointed.len();
        let n_coords = jointed.iter().filter(|d| d.own).count();
        let followers = jointed.len() - n_coords;
        println!(
            "DOF:             {} (= 6 x {free} free bodies + {n_coords} joint coordinates; {} position coordinates with quaternions)",
            6 * free + n_coords,
            7 * free + n_coords
        );
        println!(
            "joint states:    {n_coords} (in the first slot of the jointed body's 7 + 6; trees: {}; followers: {followers})",
            c.joints.trees.len()
        );
        let unit = |d: &sprung_mbs::joints::JointDef| match d.kind {
            sprung_model::JointKind::Revolute => "rad",
            sprung_model::JointKind::Prismatic => "m",
            sprung_model::JointKind::Tabulated | sprung_model::JointKind::Fixed => "",
        };
        for d in &jointed {
            let parent = d
                .parent
                .map_or(c.ground_name.as_str(), |p| c.bodies[p].name.as_str());
            let name = &c.bodies[d.body].name;
            if d.kind == sprung_model::JointKind::Tabulated {
                // Coordinates in table-axis order: own ("self") or input (another body's).
                let coords: Vec<String> = d
                    .sources
                    .iter()
                    .map(|&s| {
                        if s == d.body {
                            "self".to_string()
                        } else {
                            format!("input '{}'", c.bodies[s].name)
                        }
                    })
                    .collect();
                let role = if !d.own {
                    if d.massless {
                        "massless follower"
                    } else {
                        "follower"
                    }
                } else {
                    "own coordinate"
                };
                let init = if d.own {
                    format!(", z0 = {}, zd0 = {}", d.z0, d.zd0)
                } else {
                    String::new()
                };
                println!(
                    "  {name:<24} tabulated on '{parent}' ({role}; coordinates: {}){init}",
                    coords.join(", ")
                );
            } else if d.kind == sprung_model::JointKind::Fixed {
                println!(
                    "  {name:<24} fixed on '{parent}' (rigid at the design pose, no coordinate)"
                );
            } else {
                println!(
                    "  {name:<24} {} on '{parent}', z0 = {} {u}, zd0 = {} {u}/s",
                    d.kind.name(),
                    d.z0,
                    d.zd0,
                    u = unit(d)
                );
            }
        }
    }
    if c.n_states() > 0 {
        println!(
            "element states:  {} (in {} blocks of 6 after the bodies' velocities)",
            c.n_states(),
            c.n_state_blocks
        );
    }
    // With joints, the pattern of the reduced system (a tree's bodies couple densely).
    let pattern = if jointed.is_empty() {
        (*c.pattern).clone()
    } else {
        sprung_mbs::joints::joint_pattern(&c.pattern, &c.joints, c.bodies.len())
    };
    println!(
        "coupling blocks: {} of {} (6x6 blocks: bodies, then element states)",
        pattern.n_stored(),
        pattern.n_blocks() * pattern.n_blocks()
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
    if !m.parameters.is_empty() {
        println!("parameters:      {}", m.parameters.len());
        for p in &m.parameters {
            println!(
                "  {:<24} = {} [{}] ({:?} of {}){}",
                p.name,
                p.value,
                p.unit.as_deref().unwrap_or(""),
                p.mode,
                p.targets.join(", "),
                p.description
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            );
        }
    }
    if paths {
        let all = m.numeric_paths();
        println!("paths:           {} numeric values", all.len());
        for (p, v) in &all {
            println!("  {p} = {v}");
        }
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
    let method = solver.map_or(method, str::to_lowercase);
    let h = step.unwrap_or(s.step);
    if let Err(e) = sprung_mbs::simulate::route(&method, step.map(|_| false)) {
        anyhow::bail!("--solver {method}: {e}");
    }
    if !(h.is_finite() && h > 0.0) {
        anyhow::bail!("--step {h}: the step must be a positive finite number of seconds");
    }
    let model = sprung::Model::from_description(m.clone())?;
    let f = super::plausibility::assess(&model, &method, step.map(|_| false), h, s.t_end);
    println!("plausibility ({method}, step {h} s):");
    for n in &f.notes {
        println!("  {n}");
    }
    if f.warnings.is_empty() {
        println!("  no warnings");
    }
    for w in &f.warnings {
        println!("warning: {w}");
    }
    Ok(())
}
