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
//! * **Everything else stays** (springs, dampers, stops, tires, the steering element, speed
//!   controllers, the accelerometer, subframe mounts, outputs whose items still exist).
//!   Jointed bodies lose their initial `velocity` (a joint's motion is its coordinate's: z0 = 0,
//!   ż0 = 0, the design state moving with its parent); a parameter target
//!   `bodies.<glob>.velocity…` / `angular_velocity…` is rewritten to the free bodies it matched.
//!   Other parameters stay when every target still resolves and the mode is `set` (re-applying
//!   a `scale` would scale twice); the rest are dropped and listed, as are outputs of removed
//!   items.
//!
//! The tables are returned with their file names; [`KinReduction::write`] writes them next to
//! the model (`<stem>_tables/<corner>.toml`, paths in the model relative to it). The returned
//! description carries the loaded tables already (`Joint::kin_table`), so it compiles without I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// Links removed (they carried nothing but the corner's bushings).
    pub removed_links: Vec<String>,
    /// Bushings removed (ideal joints now).
    pub removed_bushings: Vec<String>,
    /// Mass of the corner's links left out, kg.
    pub link_mass: f64,
    /// The table file, relative to the model file.
    pub table_file: String,
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
    /// Output channels dropped because they referred to removed items.
    pub dropped_outputs: Vec<String>,
    /// Parameters dropped (applied at their values before reducing).
    pub dropped_parameters: Vec<String>,
    /// Parameter targets rewritten (old → new) for the jointed bodies' velocities.
    pub rewritten_targets: Vec<(String, Vec<String>)>,
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
    reduce_with_tables(&d, tables, tables_dir)
}

/// [`kinematic_reduction`] from tables already computed for the expanded description `d`.
pub fn reduce_with_tables(
    d: &sm::Model,
    tables: Vec<CornerTable>,
    tables_dir: &str,
) -> Result<KinReduction, KinError> {
    let setup = |s: String| KinError::Setup(format!("model '{}': {s}", d.model.name));
    let mut m = d.clone();
    let body_of: BTreeMap<String, String> = d
        .markers
        .iter()
        .map(|k| (k.name.clone(), k.body.clone()))
        .collect();
    let bof = |k: &str| body_of.get(k).cloned().unwrap_or_default();

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
                kind: sm::JointKind::Prismatic,
                parent: c.parent.clone(),
                axis: Some([r.axis.x, r.axis.y, r.axis.z]),
                point: None,
                table: None,
                entry: None,
                coordinates: Vec::new(),
                z0: 0.0,
                zd0: 0.0,
                kin_table: None,
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
    // What a link carries besides the removed bushings.
    let mut carried: BTreeSet<String> = BTreeSet::new();
    for e in &d.force_elements {
        if removed_elements.contains(e.name()) {
            continue;
        }
        carried.insert(bof(e.marker_i()));
        carried.insert(bof(e.marker_j()));
    }
    for e in &d.elements {
        carried.extend(e.markers.iter().map(|k| bof(k)));
    }
    for u in &d.inputs {
        carried.insert(bof(&u.marker));
    }
    for o in &d.outputs {
        if let Some(b) = &o.body {
            carried.insert(b.clone());
        }
        if let Some(k) = &o.marker {
            carried.insert(bof(k));
        }
    }
    let mut removed_bodies: BTreeSet<String> = BTreeSet::new();
    let mut corners = Vec::new();
    for (ci, t) in tables.iter().enumerate() {
        let c = &t.corner;
        let file = format!("{tables_dir}/{}.toml", c.name);
        let table = Arc::new(t.table.clone());
        let tabulated = |coordinates: Vec<String>| sm::Joint {
            kind: sm::JointKind::Tabulated,
            parent: c.parent.clone(),
            axis: None,
            point: None,
            table: Some(file.clone()),
            entry: None,
            coordinates,
            z0: 0.0,
            zd0: 0.0,
            kin_table: Some(Arc::clone(&table)),
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
    Ok(KinReduction {
        model: m,
        corners,
        tables,
        couplings: couplings.into_iter().collect(),
        removed_guides,
        dropped_outputs,
        dropped_parameters,
        rewritten_targets,
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
        Ok(format!("{head}\n{body}"))
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

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
