//! Merging bodies of an included file (`merge` of `[[subsystems]]`, `docs/model-format.md`
//! section "Subsystems"): an included body becomes part of another included body, one rigid
//! body. Its use: a reference axle brings its wheels as bodies on bearing bushings; a car that
//! carries the wheel spin as a tire state (`spin = "state"`,
//! `crates/sprung-vehicle/src/tire_element.rs`) merges each wheel into its carrier instead of
//! copying the axle text.
//!
//! For `body` B merged into `into` A (design poses; R the body rotations, x the centres of mass):
//!
//! * mass m = m_A + m_B, centre of mass c = (m_A x_A + m_B x_B) / m;
//! * inertia about c in global axes Σ R_i I_i R_iᵀ + m_i (|d_i|² E − d_i d_iᵀ), d_i = x_i − c
//!   (parallel-axis theorem), stored as A's tensor in A's body axes; with `spin_axis` the term
//!   I_p a aᵀ of B's polar moment I_p about its axis a is left out first: for an axisymmetric
//!   wheel spinning as an element state about a, the carrier carries the wheel's mass and
//!   transverse inertia and the element its polar inertia (the wheel's kinetic energy
//!   ½ I_t |ω_c⊥|² + ½ I_p Ω² splits exactly so);
//! * every marker of A and B is kept on A at its design position and axes (given globally, since
//!   A's centre of mass moves), so elements, inputs and outputs on B's markers act on A;
//! * the force elements between A and B (the bearing) are dropped: they would act inside one
//!   rigid body; A keeps its initial velocities (B's are dropped).
//!
//! A merge that leaves a reference behind is an error: an output or parameter naming B, or an
//! output reading a dropped force element. Tested in `crates/sprung-model/tests/subsystems.rs`
//! (mass, centre of mass and inertia against the sums written out by hand; the errors).

use std::collections::HashSet;

use crate::rot::{self, Mat3, Vec3};
use crate::types::{Axes, Inertia, Model};
use crate::types::{ForceElement, Merge};

/// A problem of one merge entry: message and hint.
pub(crate) type MergeProblem = (String, String);

/// Merges the bodies of `merges` in the included model `inc` (names as in that file).
pub(crate) fn merge_bodies(inc: &mut Model, merges: &[Merge]) -> Result<(), Vec<MergeProblem>> {
    let mut problems = Vec::new();
    let merged: HashSet<&str> = merges.iter().map(|m| m.body.as_str()).collect();
    for m in merges {
        let known = |b: &str| inc.bodies.iter().any(|x| x.name == b);
        for b in [&m.body, &m.into] {
            if !known(b) {
                problems.push((
                    format!("merge: '{b}' is not a body of the included file"),
                    "name bodies of the included file by their name there (after its mirroring, e.g. `wheel_R`)".to_string(),
                ));
            }
        }
        if m.body == m.into {
            problems.push((
                format!("merge: '{}' is merged into itself", m.body),
                "give two different bodies".to_string(),
            ));
        }
        if merged.contains(m.into.as_str()) {
            problems.push((
                format!(
                    "merge: '{}' takes '{}' but is merged into another body itself",
                    m.into, m.body
                ),
                "merge every body directly into the body that remains".to_string(),
            ));
        }
    }
    if merges.len() != merged.len() {
        problems.push((
            "merge: a body is listed more than once".to_string(),
            "merge each body once".to_string(),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    for m in merges {
        if let Err(p) = merge_one(inc, m) {
            problems.push(p);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn merge_one(inc: &mut Model, m: &Merge) -> Result<(), MergeProblem> {
    let a = inc.body(&m.into).cloned().expect("checked");
    let b = inc.body(&m.body).cloned().expect("checked");
    if let Some(jointed) = [&a, &b].into_iter().find(|x| x.joint.is_some()) {
        return Err((
            format!(
                "merge: body '{}' has a joint; merging jointed bodies is not supported",
                jointed.name
            ),
            "merge bodies without `joint`, or keep the body separate".to_string(),
        ));
    }
    if let Some(child) = inc
        .bodies
        .iter()
        .find(|x| x.joint.as_ref().is_some_and(|j| j.parent == m.body))
    {
        return Err((
            format!(
                "merge: body '{}' is the joint parent of '{}'",
                m.body, child.name
            ),
            "make the merged-into body the joint's parent instead".to_string(),
        ));
    }
    // B's inertia in global axes, without its polar part about the spin axis.
    let rb = b.rotation();
    let ib_body = b.inertia_tensor();
    let mut ib = rot::mul(&rb, &rot::mul(&ib_body, &rot::transpose(&rb)));
    if let Some(axis) = m.spin_axis {
        let k = axis.index();
        let scale = ib_body[0][0] + ib_body[1][1] + ib_body[2][2];
        let off = (0..3).filter(|&j| j != k).map(|j| ib_body[k][j].abs());
        if off.fold(0.0, f64::max) > 1e-9 * scale {
            return Err((
                format!(
                    "merge: the spin axis {axis:?} of '{}' is not a principal axis of its inertia",
                    m.body
                ),
                "give the wheel's inertia with the spin axis as a body axis (no products of inertia with it)".to_string(),
            ));
        }
        let ip = ib_body[k][k];
        let ax: Vec3 = [rb[0][k], rb[1][k], rb[2][k]];
        for (r, row) in ib.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v -= ip * ax[r] * ax[c];
            }
        }
    }
    let ra = a.rotation();
    let ia = rot::mul(&ra, &rot::mul(&a.inertia_tensor(), &rot::transpose(&ra)));
    let mass = a.mass + b.mass;
    let c: Vec3 = std::array::from_fn(|i| (a.mass * a.position[i] + b.mass * b.position[i]) / mass);
    let mut total = [[0.0; 3]; 3];
    for (mi, xi, ii) in [(a.mass, a.position, ia), (b.mass, b.position, ib)] {
        let d: Vec3 = std::array::from_fn(|i| xi[i] - c[i]);
        let d2 = rot::dot(&d, &d);
        for r in 0..3 {
            for s in 0..3 {
                let e = if r == s { 1.0 } else { 0.0 };
                total[r][s] += ii[r][s] + mi * (d2 * e - d[r] * d[s]);
            }
        }
    }
    let tensor: Mat3 = rot::mul(&rot::transpose(&ra), &rot::mul(&total, &ra));
    // Markers of A and B: global design poses (A's centre of mass moves), all on A.
    let poses: Vec<Option<(Vec3, Option<Mat3>)>> = inc
        .markers
        .iter()
        .map(|mk| {
            (mk.body == a.name || mk.body == b.name).then(|| {
                let axes = mk.frame.is_none().then(|| inc.marker_axes_global(mk));
                (inc.marker_position_global(mk), axes)
            })
        })
        .collect();
    let mut moved = HashSet::new();
    let mut on_a = HashSet::new();
    for (mk, pose) in inc.markers.iter_mut().zip(poses) {
        if let Some((p, axes)) = pose {
            if mk.body == b.name {
                moved.insert(mk.name.clone());
            } else {
                on_a.insert(mk.name.clone());
            }
            mk.body = a.name.clone();
            mk.global_position = Some(p);
            mk.position = None;
            if let Some(r) = axes {
                mk.global_axes = Some(Axes::from_matrix(&r));
                mk.euler_zyx_deg = None;
            }
        }
    }
    // Force elements between A and B act inside one body now: dropped.
    let between = |e: &ForceElement| {
        let (i, j) = (e.marker_i(), e.marker_j());
        (moved.contains(i) && (on_a.contains(j) || moved.contains(j)))
            || (moved.contains(j) && on_a.contains(i))
    };
    let dropped: HashSet<String> = inc
        .force_elements
        .iter()
        .filter(|e| between(e))
        .map(|e| e.name().to_string())
        .collect();
    inc.force_elements.retain(|e| !dropped.contains(e.name()));
    for o in &inc.outputs {
        let reads_dropped = o.element.as_deref().is_some_and(|e| dropped.contains(e));
        if o.body.as_deref() == Some(b.name.as_str()) || reads_dropped {
            return Err((
                format!(
                    "merge: the output '{}' reads '{}', which merging '{}' into '{}' removes",
                    o.name,
                    o.body
                        .clone()
                        .or_else(|| o.element.clone())
                        .unwrap_or_default(),
                    b.name,
                    a.name
                ),
                "leave the included outputs out (outputs = \"drop\") or merge other bodies"
                    .to_string(),
            ));
        }
    }
    for p in &inc.parameters {
        for t in &p.targets {
            let named = t
                .split_once('.')
                .map(|(list, rest)| {
                    let item = rest.trim_start_matches('"');
                    let end = item.find(['.', '[', '"']).unwrap_or(item.len());
                    (list, &item[..end])
                })
                .filter(|(list, item)| {
                    (*list == "bodies" && *item == b.name)
                        || (*list == "force_elements" && dropped.contains(*item))
                });
            if let Some((_, item)) = named {
                return Err((
                    format!(
                        "merge: the parameter '{}' acts on '{item}', which merging '{}' into '{}' removes",
                        p.name, b.name, a.name
                    ),
                    "merge other bodies, or change the included file's parameter".to_string(),
                ));
            }
        }
    }
    let body = inc
        .bodies
        .iter_mut()
        .find(|x| x.name == a.name)
        .expect("checked");
    body.mass = mass;
    body.position = c;
    body.inertia = Inertia {
        tensor: Some(tensor),
        principal: None,
        euler_zyx_deg: None,
    };
    inc.bodies.retain(|x| x.name != b.name);
    Ok(())
}
