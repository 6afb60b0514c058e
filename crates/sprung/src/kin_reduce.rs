//! The kinematic reduced car in relative coordinates: document 004's *kinematic* variant
//! (`../shared/seeds/004_bf53df81c0e560f5.txt`, sec. 2.2: "Ersetzt man sämtliche Lager durch
//! ideale Gelenke erhält man die rein kinematische Modellierung"; links massless, the independent
//! coordinates are the wheel travel and the rack travel) written as a model file from the full
//! model (`sprung reduce --variant kinematic`, `docs/macro-joint.md`, "The kinematic reduced car").
//!
//! From the corners and kinematic tables of [`crate::kin_tables`] (the unloaded equilibrium of
//! each corner's bushings on a grid of travel and rack travel), the full model description
//! (mirrors expanded) is changed as follows:
//!
//! * **Carrier**: a tabulated joint on the corner's parent (the chassis, or the rear subframe)
//!   with `coordinates = ["self"]`, or `["self", <rack>]` at a steered corner — its own coordinate
//!   is the table's travel axis (wheel-centre height above design, m).
//! * **Rack**: a prismatic joint on the parent along its guide's free axis; the guide bushing
//!   (rack–parent) is removed.
//! * **Corner bushings** ([`crate::kin_tables::Corner::bushings`]) are removed: they are the ideal
//!   joints the table encodes — except the anti-roll bar coupling
//!   ([`crate::kin_tables::Corner::couplings`]): its translational part is a joint of the table,
//!   its *rotational* stiffness and damping (the bar's torsion spring) stay as a bushing between
//!   the two bar halves with the translational stiffness, damping and preload set to zero.
//! * **Links** (the corner's other bodies) that carry anything else — an element end (springs,
//!   dampers, stops, the coupling), an open element, an input or an output — become **massless
//!   followers** (document 004's massless links: no coordinate, `coordinates = [<carrier>]` or
//!   `[<carrier>, <rack>]` as the table's axes, mass and inertia zero; their mass is left out, not
//!   lumped, as in the elastokinematic reduction, and reported per corner). Links that carry
//!   nothing else are removed with their markers.
//! * **Element ends re-hosted**: an end of a kept spring, damper or stop on a link (a marker
//!   nothing else refers to) that stays at a fixed point of another body over the whole table —
//!   within [`KinOptions::rehost_tolerance`], 1 µm by default — moves onto that body at its
//!   design position: the parent first (a strut's top mount: an ideal joint with the chassis),
//!   then the carrier, then the fewest links that host all the remaining ends (the damper's and
//!   the spring's lower ends on the lower arm). A point-to-point element reads only its ends'
//!   positions and velocities, so it sees the same motion; the table's own points move by the
//!   residual compliance of the bushings it was solved with (≤ 0.34 µm on the reference car,
//!   where the nearest other candidate moves ≥ 13 mm). Fewer followers: the reference car's 20
//!   become 8 ([`KinCorner::rehosted`]).
//! * **Held bodies made rigid**: a body the corners hold besides the parent and the rack (the
//!   rear subframe) that is left with nothing but bushings to the parent — its links' bushings
//!   are ideal joints of the tables now — gets a fixed joint on the parent (its mass and inertia
//!   move with it; document 004 makes such mounts rigid like every bushing) and the mounts are
//!   removed ([`KinReduction::fixed`]).
//! * **Everything else stays** (springs, dampers, stops, tires, the steering element, speed
//!   controllers, the accelerometer, outputs whose items still exist).
//!   Jointed bodies lose their initial `velocity` (a joint's motion is its coordinate's: z0 = 0,
//!   ż0 = 0, the design state moving with its parent); a parameter target
//!   `bodies.<glob>.velocity…` / `angular_velocity…` is rewritten to the free bodies it matched.
//!   Other parameters stay when every target still resolves and the mode is `set` (re-applying
//!   a `scale` would scale twice); the rest are dropped and listed, as are outputs of removed
//!   items.
//! * **Solver settings** ([`lagged_jacobian`]): the source's `[solver]` stays, except that LSRT2
//!   re-uses its Jacobian — every [`RELINEARISE_EVERY`] steps and when a lagged step's error
//!   indicator exceeds [`RELINEARISE_STALE`] m (`docs/solvers.md`, *Adaptive
//!   re-linearisation*) — where the source re-linearises more often and sets no level of its
//!   own. The reduced car is the non-stiff ODE of document 004 (no bushing modes left): over
//!   the 10 s turn entry of the reference car this follows LSRT2 re-linearised every step to a
//!   path 0.11 µm apart, NMSE a_y 7e-17, at a seventh of the cost per step
//!   (`docs/macro-joint.md`, "The reduced models' solver settings, session 20").
//!
//! The tables are returned with their file names; [`KinReduction::write`] writes them next to
//! the model (`<stem>_tables/<corner>.toml`, paths in the model relative to it). The returned
//! description carries the loaded tables already (`Joint::kin_table`), so it compiles without I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_model::{self as sm, KinematicTable};

use crate::Model;
use crate::kin_tables::{self, CornerTable, KinError, KinOptions, Progress};

/// One corner of a [`KinReduction`].
#[derive(Debug, Clone)]
pub struct KinCorner {
    /// Corner label (`front_L`).
    pub name: String,
    /// The carrier (tabulated joint with its own travel coordinate).
    pub carrier: String,
    /// The joint's parent.
    pub parent: String,
    /// The rack body (input coordinate), at a steered corner.
    pub rack: Option<String>,
    /// Links kept as massless followers.
    pub followers: Vec<String>,
    /// Element ends moved onto another body (module docs, "Element ends re-hosted").
    pub rehosted: Vec<Rehosted>,
    /// Links removed (they carried nothing but the corner's bushings).
    pub removed_links: Vec<String>,
    /// Bushings removed (ideal joints now).
    pub removed_bushings: Vec<String>,
    /// Mass of the corner's links left out, kg.
    pub link_mass: f64,
    /// The table file, relative to the model file.
    pub table_file: String,
}

/// Default of [`KinOptions::rehost_tolerance`], m: between the table's own motion of an ideal
/// joint's point (the residual compliance of the bushings it is solved with, ≤ 0.34 µm on the
/// reference car) and the motion of any other point relative to the body (≥ 13 mm there).
pub const DEFAULT_REHOST_TOLERANCE: f64 = 1e-6;

/// The kinematic reduced model's Jacobian age bound, steps ([`lagged_jacobian`]).
pub const RELINEARISE_EVERY: u32 = 50;

/// The kinematic reduced model's stale-Jacobian level, m ([`lagged_jacobian`]): the level
/// `docs/solvers.md` recommends (half the LSRT2 split tolerance).
pub const RELINEARISE_STALE: f64 = 5e-8;

/// Makes LSRT2 settings `s` re-use the Jacobian (module docs, "Solver settings"): at least
/// `every` steps between re-linearisations on the fixed schedule, and re-linearised after a
/// lagged step whose error indicator exceeds `stale` m unless `s` has a level already. Other
/// methods are left as they are (no other was measured). Returns whether `s` changed.
pub fn lagged_jacobian(s: &mut sm::SolverSettings, every: u32, stale: f64) -> bool {
    if !s.method.eq_ignore_ascii_case("lsrt2") {
        return false;
    }
    let before = (s.relinearise_every, s.relinearise_stale);
    s.relinearise_every = s.relinearise_every.max(every);
    s.relinearise_stale = s.relinearise_stale.or(Some(stale));
    before != (s.relinearise_every, s.relinearise_stale)
}

/// An element end moved onto another body by the kinematic reduction (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Rehosted {
    /// The marker.
    pub marker: String,
    /// The link it was on.
    pub from: String,
    /// The body it is on now (the parent, the carrier or another link).
    pub to: String,
    /// Its largest distance over the table from its design position on `to`, m.
    pub deviation: f64,
}

/// A held body made rigid by the kinematic reduction (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    /// The body (a fixed joint on `parent` now).
    pub body: String,
    /// The corners' parent it is fixed to.
    pub parent: String,
    /// Its bushings to the parent, removed.
    pub mounts: Vec<String>,
}

/// The kinematic reduced model.
#[derive(Debug, Clone)]
pub struct KinReduction {
    /// The reduced description (tables attached to the joints).
    pub model: sm::Model,
    /// The corners.
    pub corners: Vec<KinCorner>,
    /// The corner tables (as [`kin_tables::kinematic_tables`] returns them).
    pub tables: Vec<CornerTable>,
    /// Anti-roll bar couplings kept with their rotational stiffness only.
    pub couplings: Vec<String>,
    /// Rack guide bushings removed (the racks' prismatic joints replace them).
    pub removed_guides: Vec<String>,
    /// Held bodies made rigid (fixed joints on the parent, their mounts removed).
    pub fixed: Vec<Fixed>,
    /// Output channels dropped because they referred to removed items.
    pub dropped_outputs: Vec<String>,
    /// Parameters dropped (applied at their values before reducing).
    pub dropped_parameters: Vec<String>,
    /// Parameter targets rewritten (old → new) for the jointed bodies' velocities.
    pub rewritten_targets: Vec<(String, Vec<String>)>,
    /// Whether the source's `[solver]` was changed to re-use the Jacobian ([`lagged_jacobian`]).
    pub lagged_jacobian: bool,
}

/// Folder of the tables for the reduced model file `output`: `<stem>_tables` beside it.
pub fn tables_folder(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "reduced".into());
    output.with_file_name(format!("{stem}_tables"))
}

fn velocity_target(t: &str) -> Option<(&str, &str)> {
    // bodies.<glob>.velocity[..] / bodies."<glob>".angular_velocity[..]
    let rest = t.strip_prefix("bodies.")?;
    for field in [".velocity", ".angular_velocity"] {
        if let Some(k) = rest.rfind(field) {
            let glob = rest[..k].trim_matches('"');
            return Some((glob, &rest[k..]));
        }
    }
    None
}

/// The kinematic reduction of `model` (module docs); `tables_dir` is the tables' folder name as
/// written into the model (relative to the model file's folder, `/`-separated).
pub fn kinematic_reduction(
    model: &Model,
    opts: &KinOptions,
    tables_dir: &str,
    progress: Progress<'_>,
) -> Result<KinReduction, KinError> {
    let tables = kin_tables::kinematic_tables(model, opts, progress)?;
    let d = kin_tables::description(model)?;
    reduce_with_tables(&d, tables, tables_dir, opts.rehost_tolerance)
}

/// [`kinematic_reduction`] from tables already computed for the expanded description `d`, with
/// the element ends re-hosted within `rehost_tolerance` (m; 0: none).
pub fn reduce_with_tables(
    d: &sm::Model,
    tables: Vec<CornerTable>,
    tables_dir: &str,
    rehost_tolerance: f64,
) -> Result<KinReduction, KinError> {
    let setup = |s: String| KinError::Setup(format!("model '{}': {s}", d.model.name));
    if !(rehost_tolerance.is_finite() && rehost_tolerance >= 0.0) {
        return Err(setup(format!(
            "the re-hosting tolerance is {rehost_tolerance} m; give a distance >= 0 (--rehost-tolerance, 0 keeps every element end on its link)"
        )));
    }
    let mut m = d.clone();
    let mut body_of: BTreeMap<String, String> = d
        .markers
        .iter()
        .map(|k| (k.name.clone(), k.body.clone()))
        .collect();
    let bof0 = body_of.clone();
    let bof = |k: &str| bof0.get(k).cloned().unwrap_or_default();

    let mut removed_elements: BTreeSet<String> = BTreeSet::new();
    let mut couplings: BTreeSet<String> = BTreeSet::new();
    let mut joints: BTreeMap<String, sm::Joint> = BTreeMap::new();
    let mut removed_guides = Vec::new();
    let mut corner_links: Vec<(usize, String)> = Vec::new();
    for (ci, t) in tables.iter().enumerate() {
        let c = &t.corner;
        for b in &c.bushings {
            if c.couplings.contains(b) {
                couplings.insert(b.clone());
            } else {
                removed_elements.insert(b.clone());
            }
        }
        if let Some(r) = &c.rack {
            let guide = d.force_elements.iter().find(|e| {
                let (i, j) = (bof(e.marker_i()), bof(e.marker_j()));
                matches!(e, sm::ForceElement::Bushing(_))
                    && ((i == r.body && j == c.parent) || (j == r.body && i == c.parent))
            });
            let Some(g) = guide else {
                return Err(setup(format!(
                    "rack '{}' of corner {}: no guide bushing to '{}' found",
                    r.body, c.name, c.parent
                )));
            };
            if removed_elements.insert(g.name().to_string()) {
                removed_guides.push(g.name().to_string());
            }
            let joint = sm::Joint {
                axis: Some([r.axis.x, r.axis.y, r.axis.z]),
                ..joint_on(sm::JointKind::Prismatic, &c.parent)
            };
            if let Some(old) = joints.get(&r.body)
                && (old.parent != joint.parent || old.axis != joint.axis)
            {
                return Err(setup(format!(
                    "rack '{}' has different guides in two corners ({} along {:?}, {} along {:?})",
                    r.body, old.parent, old.axis, joint.parent, joint.axis
                )));
            }
            joints.insert(r.body.clone(), joint);
        }
        for b in c.bodies.iter().skip(1) {
            corner_links.push((ci, b.clone()));
        }
    }
    // Markers that may move (module docs, "Element ends re-hosted"): ends of kept
    // point-to-point elements that nothing else refers to.
    let mut other_refs: BTreeSet<&str> = BTreeSet::new();
    let mut p2p_ends: BTreeSet<&str> = BTreeSet::new();
    for e in &d.force_elements {
        if removed_elements.contains(e.name()) {
            continue;
        }
        let ends = if matches!(e, sm::ForceElement::Bushing(_)) {
            &mut other_refs
        } else {
            &mut p2p_ends
        };
        ends.extend([e.marker_i(), e.marker_j()]);
    }
    for e in &d.elements {
        other_refs.extend(e.markers.iter().map(String::as_str));
    }
    other_refs.extend(d.inputs.iter().map(|u| u.marker.as_str()));
    other_refs.extend(d.outputs.iter().filter_map(|o| o.marker.as_deref()));
    let movable: BTreeSet<&str> = if rehost_tolerance > 0.0 {
        p2p_ends.difference(&other_refs).copied().collect()
    } else {
        BTreeSet::new()
    };
    // What a link carries besides the removed bushings and the movable ends.
    let mut carried: BTreeSet<String> = BTreeSet::new();
    for &k in p2p_ends.iter().chain(&other_refs) {
        if !movable.contains(k) {
            carried.insert(bof(k));
        }
    }
    carried.extend(d.outputs.iter().filter_map(|o| o.body.clone()));
    let mut rehosted: Vec<Vec<Rehosted>> = Vec::new();
    for t in &tables {
        let moved = rehost_ends(d, t, &movable, &carried, rehost_tolerance);
        for r in &moved {
            body_of.insert(r.marker.clone(), r.to.clone());
        }
        rehosted.push(moved);
    }
    for &k in &movable {
        carried.insert(body_of.get(k).cloned().unwrap_or_default());
    }
    for k in m.markers.iter_mut() {
        let Some(host) = body_of.get(&k.name).filter(|&h| *h != k.body) else {
            continue;
        };
        // Same design position and axes, now given globally (a body-relative position or
        // orientation would be relative to the new host).
        k.global_position = Some(d.marker_position_global(k));
        k.position = None;
        if k.euler_zyx_deg.is_some() {
            let a = d.marker_axes_global(k);
            k.global_axes = Some(sm::Axes {
                x: [a[0][0], a[1][0], a[2][0]],
                y: [a[0][1], a[1][1], a[2][1]],
                z: [a[0][2], a[1][2], a[2][2]],
            });
            k.euler_zyx_deg = None;
        }
        k.body = host.clone();
    }
    let mut removed_bodies: BTreeSet<String> = BTreeSet::new();
    let mut corners = Vec::new();
    for (ci, t) in tables.iter().enumerate() {
        let c = &t.corner;
        let file = format!("{tables_dir}/{}.toml", c.name);
        let table = Arc::new(t.table.clone());
        let tabulated = |coordinates: Vec<String>| sm::Joint {
            table: Some(file.clone()),
            coordinates,
            kin_table: Some(Arc::clone(&table)),
            ..joint_on(sm::JointKind::Tabulated, &c.parent)
        };
        let rack = c.rack.as_ref().map(|r| r.body.clone());
        let mut own = vec![sm::SELF_COORDINATE.to_string()];
        let mut follow = vec![c.carrier.clone()];
        if let Some(r) = &rack {
            own.push(r.clone());
            follow.push(r.clone());
        }
        joints.insert(c.carrier.clone(), tabulated(own));
        let mut followers = Vec::new();
        let mut removed_links = Vec::new();
        let mut link_mass = 0.0;
        for (_, b) in corner_links.iter().filter(|(k, _)| *k == ci) {
            link_mass += d.body(b).map_or(0.0, |b| b.mass);
            if carried.contains(b) {
                joints.insert(b.clone(), tabulated(follow.clone()));
                followers.push(b.clone());
            } else {
                removed_bodies.insert(b.clone());
                removed_links.push(b.clone());
            }
        }
        corners.push(KinCorner {
            name: c.name.clone(),
            carrier: c.carrier.clone(),
            parent: c.parent.clone(),
            rack,
            followers,
            rehosted: std::mem::take(&mut rehosted[ci]),
            removed_links,
            removed_bushings: c
                .bushings
                .iter()
                .filter(|b| !c.couplings.contains(b))
                .cloned()
                .collect(),
            link_mass,
            table_file: file,
        });
    }
    // Held bodies left with nothing but bushings to the parent (the rear subframe on its
    // mounts, its links' bushings now ideal joints of the tables): rigid, a fixed joint on the
    // parent, the mounts removed (module docs).
    let mut fixed: Vec<Fixed> = Vec::new();
    for t in &tables {
        let c = &t.corner;
        for h in &c.held {
            if *h == c.parent || joints.contains_key(h) || fixed.iter().any(|f| f.body == *h) {
                continue;
            }
            let carries_joints = d.bodies.iter().any(|b| {
                b.joint.as_ref().is_some_and(|j| j.parent == *h)
                    && !removed_bodies.contains(&b.name)
            }) || joints.values().any(|j| j.parent == *h);
            if carries_joints {
                continue;
            }
            if let Some(mounts) = mounts_alone(d, &body_of, &removed_elements, h, &c.parent) {
                fixed.push(Fixed {
                    body: h.clone(),
                    parent: c.parent.clone(),
                    mounts,
                });
            }
        }
    }
    for f in &fixed {
        removed_elements.extend(f.mounts.iter().cloned());
        joints.insert(f.body.clone(), joint_on(sm::JointKind::Fixed, &f.parent));
    }
    // Bodies: joints, massless followers, removed links.
    let followers: BTreeSet<&String> = corners.iter().flat_map(|c| &c.followers).collect();
    m.bodies.retain(|b| !removed_bodies.contains(&b.name));
    for b in m.bodies.iter_mut() {
        if let Some(j) = joints.remove(&b.name) {
            b.joint = Some(j);
            b.velocity = [0.0; 3];
            b.angular_velocity = [0.0; 3];
        }
        if followers.contains(&b.name) {
            b.mass = 0.0;
            b.inertia = sm::Inertia {
                tensor: None,
                principal: Some([0.0; 3]),
                euler_zyx_deg: None,
            };
        }
    }
    // Elements: corner bushings and rack guides go, couplings keep their rotational part.
    m.force_elements
        .retain(|e| !removed_elements.contains(e.name()));
    for e in m.force_elements.iter_mut() {
        if let sm::ForceElement::Bushing(b) = e
            && couplings.contains(&b.name)
        {
            b.stiffness = [0.0; 3];
            b.damping = [0.0; 3];
            b.preload = [0.0; 3];
            b.stiffness_curves = Default::default();
            b.damping_curves = Default::default();
        }
    }
    // Outputs of removed items.
    let mut dropped_outputs = Vec::new();
    m.outputs.retain(|o| {
        let gone = o
            .element
            .as_ref()
            .is_some_and(|e| removed_elements.contains(e))
            || o.body.as_ref().is_some_and(|b| removed_bodies.contains(b))
            || o.marker
                .as_ref()
                .is_some_and(|k| removed_bodies.contains(&bof(k)));
        if gone {
            dropped_outputs.push(o.name.clone());
        }
        !gone
    });
    // Markers on removed bodies, and element-end markers nothing refers to any more.
    let referenced =
        serde_json::to_string(&(&m.force_elements, &m.elements, &m.inputs, &m.outputs))
            .unwrap_or_default();
    let element_end: BTreeSet<&str> = d
        .force_elements
        .iter()
        .filter(|e| removed_elements.contains(e.name()))
        .flat_map(|e| [e.marker_i(), e.marker_j()])
        .collect();
    m.markers.retain(|k| {
        !removed_bodies.contains(&k.body)
            && (!element_end.contains(k.name.as_str())
                || referenced.contains(&format!("\"{}\"", k.name)))
    });
    let frames_used: BTreeSet<String> = m.markers.iter().filter_map(|k| k.frame.clone()).collect();
    let frames_json = serde_json::to_string(&m.outputs).unwrap_or_default();
    m.frames.retain(|f| {
        frames_used.contains(&f.name) || frames_json.contains(&format!("\"{}\"", f.name))
    });
    let used = serde_json::to_string(&(&m.force_elements, &m.elements, &m.inputs, &m.roads))
        .unwrap_or_default();
    m.curves
        .retain(|c| used.contains(&format!("\"{}\"", c.name)));
    // Parameters.
    let free: Vec<String> = m
        .bodies
        .iter()
        .filter(|b| b.joint.is_none())
        .map(|b| b.name.clone())
        .collect();
    let mut dropped_parameters = Vec::new();
    let mut rewritten_targets = Vec::new();
    let params = std::mem::take(&mut m.parameters);
    let mut probe = m.clone();
    probe.parameter_base = None;
    for mut p in params {
        let mut targets = Vec::new();
        let mut ok = p.mode == sm::ParameterMode::Set;
        for t in &p.targets {
            if let Some((glob, field)) = velocity_target(t) {
                let new: Vec<String> = free
                    .iter()
                    .filter(|b| sm::parameters::glob(glob, b))
                    .map(|b| format!("bodies.\"{b}\"{field}"))
                    .collect();
                ok &= !new.is_empty();
                if m.bodies
                    .iter()
                    .any(|b| b.joint.is_some() && sm::parameters::glob(glob, &b.name))
                {
                    rewritten_targets.push((t.clone(), new.clone()));
                    targets.extend(new);
                } else {
                    targets.push(t.clone());
                }
            } else {
                ok &= probe.check_parameter_name(t).is_ok();
                targets.push(t.clone());
            }
        }
        if ok {
            p.targets = targets;
            m.parameters.push(p);
        } else {
            dropped_parameters.push(p.name.clone());
        }
    }
    if let Some(desc) = &mut m.model.description {
        desc.push_str(" -- reduced (kinematic: tabulated joints in relative coordinates)");
    }
    m.model.name = format!("{}_kinematic", d.model.name);
    let lagged = lagged_jacobian(&mut m.solver, RELINEARISE_EVERY, RELINEARISE_STALE);
    Ok(KinReduction {
        model: m,
        corners,
        tables,
        couplings: couplings.into_iter().collect(),
        removed_guides,
        fixed,
        dropped_outputs,
        dropped_parameters,
        rewritten_targets,
        lagged_jacobian: lagged,
    })
}

impl KinReduction {
    /// The reduced model as the text of a model file (TOML) with a header saying where it came
    /// from and what was left out.
    pub fn to_toml(&self, source: &str) -> Result<String, KinError> {
        let body = toml::to_string(&self.model)
            .map_err(|e| KinError::Setup(format!("writing the reduced model as TOML: {e}")))?;
        let mut head = format!(
            "# {}: the kinematic reduced model (document 004: ideal joints, massless links, coordinates travel and rack travel)\n# written by `sprung reduce --variant kinematic` from {source}; docs/macro-joint.md, \"The kinematic reduced car\".\n# Edit the full model and reduce again rather than this file.\n",
            self.model.model.name
        );
        for c in &self.corners {
            head.push_str(&format!(
                "# {}: carrier {} on {}{} (table {}); massless followers {}; removed links {} ({:.2} kg of links left out)\n",
                c.name,
                c.carrier,
                c.parent,
                c.rack
                    .as_ref()
                    .map(|r| format!(", rack {r}"))
                    .unwrap_or_default(),
                c.table_file,
                list(&c.followers),
                list(&c.removed_links),
                c.link_mass
            ));
            if !c.rehosted.is_empty() {
                head.push_str(&format!(
                    "# {}: element ends re-hosted (fixed points of their new body over the table): {}\n",
                    c.name,
                    rehosted_summary(&c.rehosted)
                ));
            }
        }
        if !self.couplings.is_empty() {
            head.push_str(&format!(
                "# anti-roll bar couplings kept with their rotational stiffness only: {}\n",
                self.couplings.join(", ")
            ));
        }
        if !self.removed_guides.is_empty() {
            head.push_str(&format!(
                "# rack guides replaced by prismatic joints: {}\n",
                self.removed_guides.join(", ")
            ));
        }
        for f in &self.fixed {
            head.push_str(&format!(
                "# {} made rigid (fixed joint on {}; mounts removed: {})\n",
                f.body,
                f.parent,
                f.mounts.join(", ")
            ));
        }
        if !self.dropped_outputs.is_empty() {
            head.push_str(&format!(
                "# output channels of removed items dropped: {}\n",
                self.dropped_outputs.join(", ")
            ));
        }
        if !self.dropped_parameters.is_empty() {
            head.push_str(&format!(
                "# parameters dropped (applied at their values before reducing): {}\n",
                self.dropped_parameters.join(", ")
            ));
        }
        for (old, new) in &self.rewritten_targets {
            head.push_str(&format!(
                "# parameter target {old} -> {} (jointed bodies move with their joints)\n",
                new.join(", ")
            ));
        }
        let body = if self.lagged_jacobian {
            with_solver_comment(&body, &self.solver_comment())
        } else {
            body
        };
        Ok(format!("{head}\n{body}"))
    }

    /// Why the written `[solver]` re-uses the Jacobian (module docs, "Solver settings").
    fn solver_comment(&self) -> String {
        let s = &self.model.solver;
        format!(
            "# LSRT2 re-uses its Jacobian: re-linearised every {} steps and after a step whose error indicator\n\
             # says it is stale (relinearise_stale = {:e} m). The kinematic reduced car is a non-stiff ODE\n\
             # (document 004: ideal joints, massless links, no bushing modes). Measured on the reference car's\n\
             # 10 s turn entry against the run re-linearised every step: path 0.11 um apart, NMSE a_y 7e-17\n\
             # (both 0.5 um from RODAS4), at 1/7 of the time per step (docs/macro-joint.md, \"The reduced\n\
             # models' solver settings\"). Every step again: `sprung run <this file> --relinearise-every 1`\n\
             # (or relinearise_every = 1 here).\n",
            s.relinearise_every,
            s.relinearise_stale.unwrap_or(f64::INFINITY)
        )
    }

    /// Writes the model file `output` and its tables (in the folder named by the joints' table
    /// paths, relative to `output`'s folder, created).
    pub fn write(&self, output: &Path, source: &str) -> Result<(), KinError> {
        let dir = output.parent().unwrap_or(Path::new("."));
        let io = |p: &Path, e: std::io::Error| KinError::Setup(format!("{}: {e}", p.display()));
        for (c, t) in self.corners.iter().zip(&self.tables) {
            let path = dir.join(&c.table_file);
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder).map_err(|e| io(folder, e))?;
            }
            std::fs::write(&path, t.table.to_toml_string()).map_err(|e| io(&path, e))?;
        }
        std::fs::write(output, self.to_toml(source)?).map_err(|e| io(output, e))
    }

    /// The loaded table of corner `name`.
    pub fn table(&self, name: &str) -> Option<&KinematicTable> {
        self.tables
            .iter()
            .find(|t| t.corner.name == name)
            .map(|t| &t.table)
    }
}

/// `body` (a model file's TOML) with `comment` (whole `#` lines) above its `[solver]` table, or
/// at its top when it has none.
pub fn with_solver_comment(body: &str, comment: &str) -> String {
    match body.find("\n[solver]\n") {
        Some(k) => format!("{}\n{comment}{}", &body[..k], &body[k + 1..]),
        None => format!("{comment}{body}"),
    }
}

/// The element ends of corner `t` to move (module docs, "Element ends re-hosted"): each movable
/// marker on one of the corner's links goes to the parent if it stays within `tol` (m) of its
/// design position in the parent's frame at every grid point, else to the carrier on the same
/// test, else to a link: one that stays a follower anyway (`carried`) if it can, else the links
/// taking the most of the remaining ends, greedily (ties: the link the most of them are on, then
/// the corner's order). An end whose host is its own link is not listed.
fn rehost_ends(
    d: &sm::Model,
    t: &CornerTable,
    movable: &BTreeSet<&str>,
    carried: &BTreeSet<String>,
    tol: f64,
) -> Vec<Rehosted> {
    let c = &t.corner;
    let m3 = |a: sm::rot::Mat3| Matrix3::from_fn(|r, k| a[r][k]);
    let rp0 = m3(d.body_rotation(&c.parent));
    let xp0 = Vector3::from(d.body_position(&c.parent));
    let n = t.table.points();
    // A table body's poses in the parent's design frame: (s, R_rel = exp([φ]×) R_rel,0) per
    // grid point, and its design pose (x, R) in the model.
    let poses = |b: &sm::TableBody| {
        let rel0 = rp0.transpose() * m3(d.body_rotation(&b.name));
        let at: Vec<(Vector3<f64>, Matrix3<f64>)> = (0..n)
            .map(|i| {
                let r = Rotation3::new(Vector3::from(b.rotation[i])).into_inner();
                (Vector3::from(b.position[i]), r * rel0)
            })
            .collect();
        let design = (
            Vector3::from(d.body_position(&b.name)),
            m3(d.body_rotation(&b.name)),
        );
        (at, design)
    };
    let table_body = |name: &str| t.table.bodies.iter().find(|b| b.name == name);
    // Hosts: the carrier, then the links (the corner's order).
    let hosts: Vec<(&String, _)> = c
        .bodies
        .iter()
        .filter_map(|b| table_body(b).map(|tb| (b, poses(tb))))
        .collect();
    let deviation = |p: &[Vector3<f64>], xm: &Vector3<f64>, h: usize| {
        let (at, (xh, rh)) = &hosts[h].1;
        let q0 = rh.transpose() * (xm - xh);
        p.iter()
            .zip(at)
            .map(|(p, (s, r))| (r.transpose() * (p - s) - q0).norm())
            .fold(0.0, f64::max)
    };
    // An end left for the links: its marker and link, the links within `tol` with its
    // deviation on each.
    struct Pending {
        marker: String,
        own: usize,
        within: Vec<(usize, f64)>,
    }
    let mut out = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    for k in d
        .markers
        .iter()
        .filter(|k| movable.contains(k.name.as_str()))
    {
        // On a link of the corner (host 0 is the carrier).
        let Some(own) = hosts
            .iter()
            .position(|(b, _)| **b == k.body)
            .filter(|&h| h > 0)
        else {
            continue;
        };
        let rho = Vector3::from(d.marker_position_body(k));
        let xm = Vector3::from(d.marker_position_global(k));
        let p: Vec<Vector3<f64>> = hosts[own].1.0.iter().map(|(s, r)| s + r * rho).collect();
        let q0 = rp0.transpose() * (xm - xp0);
        let on_parent = p.iter().map(|p| (p - q0).norm()).fold(0.0, f64::max);
        let on_carrier = deviation(&p, &xm, 0);
        let (to, dev) = if on_parent <= tol {
            (c.parent.clone(), on_parent)
        } else if on_carrier <= tol {
            (c.carrier.clone(), on_carrier)
        } else {
            let within = (1..hosts.len())
                .map(|h| (h, deviation(&p, &xm, h)))
                .filter(|&(h, dev)| h == own || dev <= tol)
                .collect();
            pending.push(Pending {
                marker: k.name.clone(),
                own,
                within,
            });
            continue;
        };
        out.push(Rehosted {
            marker: k.name.clone(),
            from: k.body.clone(),
            to,
            deviation: dev,
        });
    }
    let mut chosen: Vec<usize> = (1..hosts.len())
        .filter(|&h| carried.contains(hosts[h].0))
        .collect();
    while !pending.is_empty() {
        let takes = |e: &Pending, h: usize| e.within.iter().find(|w| w.0 == h).map(|w| w.1);
        let kept = pending
            .iter()
            .flat_map(|e| &e.within)
            .find(|w| chosen.contains(&w.0));
        let pick = match kept {
            Some(&(h, _)) => h,
            None => {
                let score = |h: usize| {
                    let takes = pending.iter().filter(|e| takes(e, h).is_some()).count();
                    let owns = pending.iter().filter(|e| e.own == h).count();
                    (takes, owns, std::cmp::Reverse(h))
                };
                let best = (1..hosts.len()).max_by_key(|&h| score(h)).expect("links");
                chosen.push(best);
                best
            }
        };
        pending.retain(|e| {
            let Some(dev) = takes(e, pick) else {
                return true;
            };
            if e.own != pick {
                out.push(Rehosted {
                    marker: e.marker.clone(),
                    from: hosts[e.own].0.clone(),
                    to: hosts[pick].0.clone(),
                    deviation: dev,
                });
            }
            false
        });
    }
    out
}

/// The kept bushings between `body` and `parent` if they are all `body` carries — no other kept
/// force element, open element or input refers to one of its markers (`body_of`: marker →
/// body) — and there is at least one.
fn mounts_alone(
    d: &sm::Model,
    body_of: &BTreeMap<String, String>,
    removed_elements: &BTreeSet<String>,
    body: &str,
    parent: &str,
) -> Option<Vec<String>> {
    let on = |k: &str, b: &str| body_of.get(k).is_some_and(|x| x == b);
    let mut mounts = Vec::new();
    for e in &d.force_elements {
        let (i, j) = (e.marker_i(), e.marker_j());
        if removed_elements.contains(e.name()) || !(on(i, body) || on(j, body)) {
            continue;
        }
        let other = if on(i, body) { j } else { i };
        if !(matches!(e, sm::ForceElement::Bushing(_)) && on(other, parent)) {
            return None;
        }
        mounts.push(e.name().to_string());
    }
    let referred = d
        .elements
        .iter()
        .any(|e| e.markers.iter().any(|k| on(k, body)))
        || d.inputs.iter().any(|u| on(&u.marker, body));
    (!referred && !mounts.is_empty()).then_some(mounts)
}

/// A joint of `kind` on `parent` at the design pose (z0 = 0, ż0 = 0) with nothing else given.
fn joint_on(kind: sm::JointKind, parent: &str) -> sm::Joint {
    sm::Joint {
        kind,
        parent: parent.to_string(),
        axis: None,
        point: None,
        table: None,
        entry: None,
        coordinates: Vec::new(),
        z0: 0.0,
        zd0: 0.0,
        kin_table: None,
    }
}

/// "link -> host (n ends, within x m)" per pair, in the order of `r`.
pub fn rehosted_summary(r: &[Rehosted]) -> String {
    let mut pairs: Vec<(&str, &str, usize, f64)> = Vec::new();
    for e in r {
        match pairs.iter_mut().find(|p| p.0 == e.from && p.1 == e.to) {
            Some(p) => {
                p.2 += 1;
                p.3 = p.3.max(e.deviation);
            }
            None => pairs.push((&e.from, &e.to, 1, e.deviation)),
        }
    }
    pairs
        .iter()
        .map(|(f, t, n, dev)| format!("{f} -> {t} ({n} end(s), within {dev:.1e} m)"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
