//! The reduction (document 004, sec. 2.1, Bild 2): full model description → reduced model
//! description, from the same data ("ein Modell- und Datenursprung").
//!
//! 1. **Links** are chosen (explicitly, or automatically: bodies of at most `max_link_mass`
//!    that carry no input, no element of an open kind, and are not joined directly to their own
//!    mirror image — an anti-roll bar half joined to the other half spans both corners and stays
//!    a body, so each corner gets its own macro joint).
//! 2. Links joined to each other by force elements form **corners** (connected components).
//! 3. Per corner, the force elements with an end on a link move into a links model (the link
//!    bodies, the boundary bodies at their design poses, the markers, frames and curves these
//!    elements use; gravity zero — the links are massless), which becomes the `links` parameter
//!    of ONE `[[elements]]` entry of kind `macro_joint` on one new marker per boundary body
//!    (`<corner>.<body>` at the body's frame).
//! 4. The link bodies, the moved elements and the markers nothing else uses are removed; output
//!    channels of removed items and the `[[parameters]]` (whose targets may now sit inside a
//!    macro joint) are dropped and listed in the [`Reduction`].
//!
//! Variants (document 004: "Ersetzt man sämtliche Lager durch ideale Gelenke erhält man die rein
//! kinematische Modellierung"): [`Variant::Elastokinematic`] keeps the link bushings as they
//! are; [`Variant::Stiffened`] multiplies every bushing inside the macro joints (stiffness,
//! rotational stiffness, their curves, and the damping so that the time constants stay) by
//! `kinematic_factor` — the force-element stand-in for ideal joints in an engine without
//! constraints. Its consequence: the carrier is held in its five constrained directions by
//! factor × the elastic rates, a stiff ODE (docs/macro-joint.md quantifies it).

use std::collections::{BTreeMap, BTreeSet};

use sprung_model::{self as sm, ParamValue};

/// Which reduced model document 004 describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Link bushings kept as compliances.
    Elastokinematic,
    /// Link bushings stiffened by [`ReduceOptions::kinematic_factor`] (ideal joints approximated
    /// by force elements; called `kinematic` before the kinematic variant with ideal joints,
    /// `sprung::kin_reduce`, existed).
    Stiffened,
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "elastokinematic" | "ek" => Ok(Variant::Elastokinematic),
            "stiffened" => Ok(Variant::Stiffened),
            "kinematic" | "k" => Err(
                "the kinematic variant (ideal joints, tabulated corners) is not a macro-joint reduction: use `sprung reduce --variant kinematic` (sprung::kin_reduce); the macro joint with stiffened link bushings is 'stiffened'"
                    .to_string(),
            ),
            _ => Err(format!(
                "unknown reduction variant '{s}'; use 'elastokinematic' or 'stiffened'"
            )),
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Elastokinematic => "elastokinematic",
            Variant::Stiffened => "stiffened",
        })
    }
}

/// Options of [`reduce()`].
#[derive(Debug, Clone)]
pub struct ReduceOptions {
    /// The variant.
    pub variant: Variant,
    /// The link bodies; `None` = automatic selection (module docs).
    pub links: Option<Vec<String>>,
    /// Bodies that stay bodies even when the automatic selection would take them.
    pub keep: Vec<String>,
    /// Automatic selection: bodies up to this mass are links, kg.
    pub max_link_mass: f64,
    /// Kinematic variant: factor on the bushings inside the macro joints.
    pub kinematic_factor: f64,
}

impl Default for ReduceOptions {
    fn default() -> Self {
        Self {
            variant: Variant::Elastokinematic,
            links: None,
            keep: Vec::new(),
            // The reference axles' links weigh 0.25-2.5 kg, their carriers 7 kg and more
            // (models/double_wishbone.toml, models/multilink.toml).
            max_link_mass: 3.0,
            kinematic_factor: 1000.0,
        }
    }
}

/// What a reduction did.
#[derive(Debug, Clone)]
pub struct Reduction {
    /// The reduced model description.
    pub model: sm::Model,
    /// The macro joints, one per corner.
    pub corners: Vec<Corner>,
    /// Output channels dropped because they referred to removed items.
    pub dropped_outputs: Vec<String>,
    /// Parameters dropped (their targets may sit inside a macro joint now).
    pub dropped_parameters: Vec<String>,
}

/// One macro joint of a [`Reduction`].
#[derive(Debug, Clone)]
pub struct Corner {
    /// Element name.
    pub name: String,
    /// The links it replaces.
    pub links: Vec<String>,
    /// The boundary bodies (one marker each).
    pub boundary: Vec<String>,
    /// The force elements it contains.
    pub elements: Vec<String>,
    /// Total mass of the links, kg (what the reduced model leaves out).
    pub link_mass: f64,
}

/// Why a model cannot be reduced.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReduceError {
    /// No body qualifies as a link.
    #[error(
        "model '{0}': no link bodies to reduce (no body of at most {1} kg joined only by force elements); name them with --links"
    )]
    NoLinks(String, f64),
    /// A named body is not usable as a link.
    #[error("model '{model}': body '{body}' cannot be a link: {why}")]
    BadLink {
        /// Model name.
        model: String,
        /// Body name.
        body: String,
        /// Reason and fix.
        why: String,
    },
    /// The links model could not be written.
    #[error("model '{0}': writing the links model of '{1}' failed: {2}")]
    Write(String, String, String),
    /// Anything else, with a fix.
    #[error("model '{0}': {1}")]
    Invalid(String, String),
}

fn bushing_curves(b: &sm::Bushing) -> impl Iterator<Item = &str> {
    [
        &b.stiffness_curves,
        &b.rot_stiffness_curves,
        &b.damping_curves,
        &b.rot_damping_curves,
    ]
    .into_iter()
    .flat_map(|c| c.as_array().into_iter().flatten())
}

fn element_curves(e: &sm::ForceElement) -> Vec<&str> {
    match e {
        sm::ForceElement::Bushing(b) => bushing_curves(b).collect(),
        sm::ForceElement::Spring(s) => s.curve.iter().map(String::as_str).collect(),
        sm::ForceElement::Damper(d) => d.curve.iter().map(String::as_str).collect(),
        sm::ForceElement::Stop(s) => s.curve.iter().map(String::as_str).collect(),
    }
}

/// Name suffix of a mirrored item and the name of its twin (`_L` ↔ `_R`).
fn mirror_twin(name: &str) -> Option<String> {
    if let Some(s) = name.strip_suffix("_L") {
        Some(format!("{s}_R"))
    } else {
        name.strip_suffix("_R").map(|s| format!("{s}_L"))
    }
}

/// The light bodies of a model (mirrors expanded): [`LightBodies::links`] is the automatic link
/// selection of [`reduce()`] (module docs, step 1), [`LightBodies::twin_joined`] the bodies that
/// pass every test but the last — joined directly to their own mirror image (anti-roll bar
/// halves): they span both corners.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LightBodies {
    /// Bodies the automatic selection takes as links.
    pub links: BTreeSet<String>,
    /// Light bodies joined to their own mirror image by a force element.
    pub twin_joined: BTreeSet<String>,
}

/// Sorts the bodies of `m` (mirrors expanded) of at most `max_link_mass` that carry no input and
/// no element of an open kind, have a force element, and are not in `keep` (module docs, step 1).
pub fn light_bodies(m: &sm::Model, max_link_mass: f64, keep: &[String]) -> LightBodies {
    let body_of = |marker: &str| m.marker(marker).map(|k| k.body.as_str()).unwrap_or("");
    let mut pinned: BTreeSet<&str> = BTreeSet::new();
    for u in &m.inputs {
        pinned.insert(body_of(&u.marker));
    }
    for e in &m.elements {
        for k in &e.markers {
            pinned.insert(body_of(k));
        }
    }
    let twin_joined = |b: &str| {
        mirror_twin(b).is_some_and(|t| {
            m.force_elements.iter().any(|e| {
                let (i, j) = (body_of(e.marker_i()), body_of(e.marker_j()));
                (i == b && j == t) || (i == t && j == b)
            })
        })
    };
    let mut out = LightBodies::default();
    for b in &m.bodies {
        let light = b.mass <= max_link_mass
            && !pinned.contains(b.name.as_str())
            && !keep.contains(&b.name)
            && m.force_elements
                .iter()
                .any(|e| body_of(e.marker_i()) == b.name || body_of(e.marker_j()) == b.name);
        if !light {
            continue;
        }
        if twin_joined(&b.name) {
            out.twin_joined.insert(b.name.clone());
        } else {
            out.links.insert(b.name.clone());
        }
    }
    out
}

/// Reduces `model` (see the module docs).
pub fn reduce(model: &sm::Model, opts: &ReduceOptions) -> Result<Reduction, ReduceError> {
    let name = model.model.name.clone();
    let m = if has_mirrors(model) {
        model
            .expand_mirrors()
            .map_err(|e| ReduceError::Invalid(name.clone(), e.to_string()))?
    } else {
        model.clone()
    };
    if !(opts.kinematic_factor.is_finite() && opts.kinematic_factor >= 1.0) {
        return Err(ReduceError::Invalid(
            name,
            format!(
                "kinematic factor {} must be a finite number >= 1",
                opts.kinematic_factor
            ),
        ));
    }
    if let Some(b) = m.bodies.iter().find(|b| b.joint.is_some()) {
        return Err(ReduceError::Invalid(
            name,
            format!(
                "body '{}' has a `joint`: the macro-joint reduction does not support ideal joints yet (docs/joints.md); reduce a model whose bodies are joined by force elements",
                b.name
            ),
        ));
    }
    let ground = m.model.ground.clone();
    let marker_body: BTreeMap<&str, &str> = m
        .markers
        .iter()
        .map(|k| (k.name.as_str(), k.body.as_str()))
        .collect();
    let body_of = |marker: &str| marker_body.get(marker).copied().unwrap_or("");
    // Bodies that cannot be links: those with inputs or open elements on them.
    let mut pinned: BTreeSet<&str> = BTreeSet::new();
    for u in &m.inputs {
        pinned.insert(body_of(&u.marker));
    }
    for e in &m.elements {
        for k in &e.markers {
            pinned.insert(body_of(k));
        }
    }
    let links: BTreeSet<String> = match &opts.links {
        Some(list) => {
            for b in list {
                let why = if b == &ground {
                    Some("it is the ground".to_string())
                } else if m.body(b).is_none() {
                    Some("no such body in the model".to_string())
                } else if pinned.contains(b.as_str()) {
                    Some(
                        "an input or an element of an open kind acts on it; keep it as a body"
                            .to_string(),
                    )
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(ReduceError::BadLink {
                        model: name,
                        body: b.clone(),
                        why,
                    });
                }
            }
            list.iter().cloned().collect()
        }
        None => light_bodies(&m, opts.max_link_mass, &opts.keep).links,
    };
    if links.is_empty() {
        return Err(ReduceError::NoLinks(name, opts.max_link_mass));
    }
    // Corners: connected components of the links through force elements (union-find).
    let link_list: Vec<&String> = links.iter().collect();
    let index: BTreeMap<&str, usize> = link_list
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_str(), i))
        .collect();
    let mut parent: Vec<usize> = (0..link_list.len()).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for e in &m.force_elements {
        if let (Some(&a), Some(&b)) = (
            index.get(body_of(e.marker_i())),
            index.get(body_of(e.marker_j())),
        ) {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
        }
    }
    let mut groups: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (i, b) in link_list.iter().enumerate() {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(b.as_str());
    }
    // Components in the order of their first body in the model file.
    let order = |b: &str| m.body_index(b).unwrap_or(usize::MAX);
    let mut comps: Vec<Vec<&str>> = groups.into_values().collect();
    for c in comps.iter_mut() {
        c.sort_by_key(|b| order(b));
    }
    comps.sort_by_key(|c| order(c[0]));

    let mut out = m.clone();
    out.parameter_base = None;
    let dropped_parameters: Vec<String> = out.parameters.drain(..).map(|p| p.name).collect();
    let mut removed_elements: BTreeSet<String> = BTreeSet::new();
    let mut corners = Vec::new();
    let mut new_markers = Vec::new();
    let mut new_elements = Vec::new();
    let mut used_names: BTreeSet<String> = m
        .markers
        .iter()
        .map(|k| k.name.clone())
        .chain(m.force_elements.iter().map(|e| e.name().to_string()))
        .chain(m.elements.iter().map(|e| e.name.clone()))
        .collect();
    for comp in &comps {
        let set: BTreeSet<&str> = comp.iter().copied().collect();
        let internal: Vec<&sm::ForceElement> = m
            .force_elements
            .iter()
            .filter(|e| set.contains(body_of(e.marker_i())) || set.contains(body_of(e.marker_j())))
            .collect();
        let mut boundary: Vec<String> = Vec::new();
        for e in &internal {
            for b in [body_of(e.marker_i()), body_of(e.marker_j())] {
                if !set.contains(b) && !boundary.iter().any(|x| x == b) {
                    boundary.push(b.to_string());
                }
            }
        }
        if boundary.is_empty() {
            return Err(ReduceError::Invalid(
                name,
                format!(
                    "the links {} touch no other body; a macro joint needs the chassis or a carrier",
                    comp.join(", ")
                ),
            ));
        }
        // The ground (the chassis of an axle model) first: it is the frame of the warm start.
        if let Some(p) = boundary.iter().position(|b| *b == ground) {
            boundary[..=p].rotate_right(1);
        }
        let corner = corner_name(comp, &mut used_names);
        let sub = links_model(&m, &corner, comp, &boundary, &internal, opts)
            .map_err(|e| ReduceError::Invalid(name.clone(), e))?;
        let text = toml::to_string(&sub)
            .map_err(|e| ReduceError::Write(name.clone(), corner.clone(), e.to_string()))?;
        let mut markers = Vec::new();
        for b in &boundary {
            let mk = unique(&format!("{corner}.{b}"), &mut used_names);
            new_markers.push(sm::Marker {
                name: mk.clone(),
                body: b.clone(),
                global_position: None,
                position: Some([0.0; 3]),
                frame: None,
                global_axes: None,
                euler_zyx_deg: None,
                mirror: false,
            });
            markers.push(mk);
        }
        let mut parameters = BTreeMap::new();
        parameters.insert("links".to_string(), ParamValue::Text(text));
        parameters.insert("boundary".to_string(), ParamValue::Text(boundary.join(" ")));
        new_elements.push(sm::OpenElement {
            name: corner.clone(),
            kind: "macro_joint".into(),
            markers,
            parameters,
            inputs: Default::default(),
            mirror: false,
        });
        for e in &internal {
            removed_elements.insert(e.name().to_string());
        }
        corners.push(Corner {
            name: corner,
            links: comp.iter().map(|s| s.to_string()).collect(),
            boundary,
            elements: internal.iter().map(|e| e.name().to_string()).collect(),
            link_mass: comp.iter().filter_map(|b| m.body(b)).map(|b| b.mass).sum(),
        });
    }
    out.bodies.retain(|b| !links.contains(&b.name));
    out.force_elements
        .retain(|e| !removed_elements.contains(e.name()));
    // Outputs of removed items go.
    let mut dropped_outputs = Vec::new();
    out.outputs.retain(|o| {
        let gone = o
            .element
            .as_ref()
            .is_some_and(|e| removed_elements.contains(e))
            || o.body.as_ref().is_some_and(|b| links.contains(b))
            || o.marker
                .as_ref()
                .is_some_and(|k| links.contains(body_of(k)));
        if gone {
            dropped_outputs.push(o.name.clone());
        }
        !gone
    });
    // Markers nothing refers to any more go.
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for e in &out.force_elements {
        referenced.insert(e.marker_i().to_string());
        referenced.insert(e.marker_j().to_string());
    }
    for e in &out.elements {
        referenced.extend(e.markers.iter().cloned());
    }
    for u in &out.inputs {
        referenced.insert(u.marker.clone());
    }
    for o in &out.outputs {
        if let Some(k) = &o.marker {
            referenced.insert(k.clone());
        }
    }
    out.markers.retain(|k| {
        !links.contains(&k.body)
            && (referenced.contains(&k.name) || !is_element_marker(&m, &k.name))
    });
    out.markers.extend(new_markers);
    out.elements.extend(new_elements);
    // Curves and frames only the moved elements used go (they live in the links models now).
    let mut curves_used: BTreeSet<&str> = BTreeSet::new();
    for e in &out.force_elements {
        curves_used.extend(element_curves(e));
    }
    let curve_names_in_signals =
        serde_json::to_string(&(&out.inputs, &out.elements, &out.roads)).unwrap_or_default();
    out.curves.retain(|c| {
        curves_used.contains(c.name.as_str())
            || curve_names_in_signals.contains(&format!("\"{}\"", c.name))
    });
    let frames_used: BTreeSet<&str> = out
        .markers
        .iter()
        .filter_map(|k| k.frame.as_deref())
        .collect();
    out.frames.retain(|f| frames_used.contains(f.name.as_str()));
    if let Some(d) = &mut out.model.description {
        d.push_str(&format!(
            " -- reduced ({}, sprung-reduce): {} macro joint(s)",
            opts.variant,
            corners.len()
        ));
    }
    out.model.name = format!("{}_{}", m.model.name, opts.variant);
    Ok(Reduction {
        model: out,
        corners,
        dropped_outputs,
        dropped_parameters,
    })
}

/// The kinematic variant's change of one bushing: stiffness, rotational stiffness and both
/// dampings times `factor` (the curves it names are scaled by the caller).
fn stiffen_bushing(b: &mut sm::Bushing, factor: f64) {
    for a in 0..3 {
        b.stiffness[a] *= factor;
        b.rot_stiffness[a] *= factor;
        b.damping[a] *= factor;
        b.rot_damping[a] *= factor;
    }
}

/// The full model with every bushing that has an end on one of `links` stiffened as the
/// kinematic variant does it inside the macro joints (`factor` on stiffness, damping and their
/// curves): the full-model counterpart of [`Variant::Stiffened`], for comparing the two.
pub fn stiffen_link_bushings(
    model: &sm::Model,
    links: &[String],
    factor: f64,
) -> Result<sm::Model, ReduceError> {
    let mut m = model.clone();
    let body_of =
        |k: &str| -> String { model.marker(k).map(|k| k.body.clone()).unwrap_or_default() };
    let mut scaled: BTreeSet<String> = BTreeSet::new();
    for e in m.force_elements.iter_mut() {
        let touches =
            links.contains(&body_of(e.marker_i())) || links.contains(&body_of(e.marker_j()));
        if let (true, sm::ForceElement::Bushing(b)) = (touches, e) {
            stiffen_bushing(b, factor);
            scaled.extend(bushing_curves(b).map(str::to_string));
        }
    }
    for e in &m.force_elements {
        let touches =
            links.contains(&body_of(e.marker_i())) || links.contains(&body_of(e.marker_j()));
        if touches && matches!(e, sm::ForceElement::Bushing(_)) {
            continue;
        }
        if let Some(c) = element_curves(e).into_iter().find(|c| scaled.contains(*c)) {
            return Err(ReduceError::Invalid(
                model.model.name.clone(),
                format!(
                    "curve '{c}' is used by a link bushing and by '{}'; give that element a curve of its own",
                    e.name()
                ),
            ));
        }
    }
    for c in m.curves.iter_mut() {
        if scaled.contains(&c.name) {
            c.y.iter_mut().for_each(|y| *y *= factor);
        }
    }
    Ok(m)
}

fn has_mirrors(m: &sm::Model) -> bool {
    m.bodies.iter().any(|b| b.mirror)
        || m.markers.iter().any(|k| k.mirror)
        || m.force_elements.iter().any(|e| e.mirror())
}

/// Whether `marker` is an end of a force element of `m` (a marker only an element used).
fn is_element_marker(m: &sm::Model, marker: &str) -> bool {
    m.force_elements
        .iter()
        .any(|e| e.marker_i() == marker || e.marker_j() == marker)
}

fn unique(base: &str, used: &mut BTreeSet<String>) -> String {
    let mut n = base.to_string();
    let mut k = 2;
    while used.contains(&n) {
        n = format!("{base}_{k}");
        k += 1;
    }
    used.insert(n.clone());
    n
}

/// `macro_joint_<first link>` (e.g. `macro_joint_lca_L`).
fn corner_name(comp: &[&str], used: &mut BTreeSet<String>) -> String {
    unique(&format!("macro_joint_{}", comp[0]), used)
}

/// The links model of one corner (module docs, step 3).
fn links_model(
    m: &sm::Model,
    corner: &str,
    comp: &[&str],
    boundary: &[String],
    internal: &[&sm::ForceElement],
    opts: &ReduceOptions,
) -> Result<sm::Model, String> {
    let world = "macro_joint_world".to_string();
    let mut bodies = Vec::new();
    for b in comp
        .iter()
        .map(|s| s.to_string())
        .chain(boundary.iter().cloned())
    {
        match m.body(&b) {
            Some(body) => {
                let mut body = body.clone();
                body.mirror = false;
                bodies.push(body);
            }
            None => bodies.push(sm::Body {
                // The outer ground as a boundary body at the global frame.
                name: b.clone(),
                mass: 1.0,
                position: [0.0; 3],
                euler_zyx_deg: None,
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
                inertia: sm::Inertia {
                    tensor: None,
                    principal: Some([1.0; 3]),
                    euler_zyx_deg: None,
                },
                mirror: false,
                joint: None,
            }),
        }
    }
    let mut marker_names: BTreeSet<&str> = BTreeSet::new();
    for e in internal {
        marker_names.insert(e.marker_i());
        marker_names.insert(e.marker_j());
    }
    let mut markers: Vec<sm::Marker> = m
        .markers
        .iter()
        .filter(|k| marker_names.contains(k.name.as_str()))
        .cloned()
        .collect();
    for k in markers.iter_mut() {
        k.mirror = false;
    }
    let frames_used: BTreeSet<&str> = markers.iter().filter_map(|k| k.frame.as_deref()).collect();
    let frames: Vec<sm::Frame> = m
        .frames
        .iter()
        .filter(|f| frames_used.contains(f.name.as_str()))
        .cloned()
        .map(|mut f| {
            f.mirror = false;
            f
        })
        .collect();
    let mut elements: Vec<sm::ForceElement> = internal.iter().map(|e| (*e).clone()).collect();
    let mut scaled_curves: BTreeSet<String> = BTreeSet::new();
    for e in elements.iter_mut() {
        match e {
            sm::ForceElement::Bushing(b) => {
                b.mirror = false;
                if opts.variant == Variant::Stiffened {
                    stiffen_bushing(b, opts.kinematic_factor);
                    scaled_curves.extend(bushing_curves(b).map(str::to_string));
                }
            }
            sm::ForceElement::Spring(s) => s.mirror = false,
            sm::ForceElement::Damper(d) => d.mirror = false,
            sm::ForceElement::Stop(s) => s.mirror = false,
        }
    }
    let curve_names: BTreeSet<&str> = elements.iter().flat_map(element_curves).collect();
    for e in &elements {
        if !matches!(e, sm::ForceElement::Bushing(_)) {
            for c in element_curves(e) {
                if scaled_curves.contains(c) {
                    return Err(format!(
                        "curve '{c}' is used by bushing and by '{}' in {corner}; the kinematic variant scales the bushing curves — give that element a curve of its own",
                        e.name()
                    ));
                }
            }
        }
    }
    let curves: Vec<sm::Curve> = m
        .curves
        .iter()
        .filter(|c| curve_names.contains(c.name.as_str()))
        .cloned()
        .map(|mut c| {
            if scaled_curves.contains(&c.name) {
                for y in c.y.iter_mut() {
                    *y *= opts.kinematic_factor;
                }
            }
            c
        })
        .collect();
    Ok(sm::Model {
        model: sm::ModelInfo {
            name: corner.to_string(),
            description: Some(format!(
                "links of {corner} (massless, {}), written by sprung-reduce from '{}'",
                opts.variant, m.model.name
            )),
            ground: world,
            gravity: [0.0; 3],
        },
        solver: Default::default(),
        initial_state: Default::default(),
        frames,
        curves,
        bodies,
        markers,
        force_elements: elements,
        elements: Vec::new(),
        roads: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        parameters: Vec::new(),
        parameter_base: None,
        subsystems: Vec::new(),
    })
}
