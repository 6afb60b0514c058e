//! Subsystem composition (`[[subsystems]]`, `docs/model-format.md` section "Subsystems"): a
//! model file includes other model files — an axle, a steering system — with a name prefix and a
//! placement, as document 004 builds its car from the corner models of document 000.
//!
//! The included file is loaded on its own first (its own subsystems, mirroring and validation;
//! a problem there is reported with *its* file and line inside the including entry's message),
//! then flattened into the including model before that model is mirror-expanded and validated:
//!
//! * every name (bodies, markers, frames, curves, force elements, `[[elements]]`, inputs,
//!   outputs, parameters) gets the prefix `NAME.`; references follow, and so do text
//!   parameters of `[[elements]]` that name an included curve; an empty name includes
//!   without a prefix (the including file extends the included one, e.g. a car with another
//!   tire set);
//! * the placement `x -> R x + p` (`position`, `euler_zyx_deg`) moves every position, velocity,
//!   axis, frame and body orientation; body-frame quantities (inertia, body-local marker
//!   positions, angular velocities, bushing preloads) stay;
//! * the included ground is replaced by the body `attach.ground` of the including model (default
//!   its ground); a ground marker listed in `attach.markers` goes to the body named there (the
//!   tie rods' inner joints to a rack); re-attached markers get global positions and axes;
//! * `[[parameters]]` of the included file become parameters `NAME.param` of the including model
//!   (targets prefixed, values from the entry's `parameters = { .. }` or the file), applied before
//!   the including model's own;
//! * `[[outputs]]` are kept (`outputs = "drop"` leaves them out), force and torque `[[inputs]]`
//!   are dropped (`inputs = "keep"` keeps them): an axle's load case is not the car's; `signal`
//!   inputs, read by the included `[[elements]]`, are always kept;
//! * `[model]` (name, gravity), `[solver]` and `[initial_state]` of the included file are
//!   ignored: the including model's apply. An included file with `[[roads]]` is an error (roads
//!   are not placed; give them in the including model).
//!
//! Mirroring keeps working: the included file is mirror-expanded on its own, and a mirrored item
//! of the including file that refers to an included `_L` item whose `_R` twin exists refers to
//! that twin in its copy ([`crate::mirror`]).

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::Problem;
use crate::mirror::mirrored_name;
use crate::rot::{self, Mat3, Vec3};
use crate::types::{
    Axes, AxisCurves, ForceElement, IncludeItems, InputFrame, InputKind, Model, ParamValue,
    Subsystem,
};

thread_local! {
    /// Files being loaded on this thread, outermost first (for cycle detection).
    static LOADING: RefCell<Vec<PathBuf>> = const { RefCell::new(Vec::new()) };
}

/// Marks a file as being loaded on this thread while alive (cycle detection of includes).
pub(crate) struct LoadingGuard {
    pushed: bool,
}

impl LoadingGuard {
    /// Pushes `path` (canonicalised when possible); `Err` with the chain if it is already being
    /// loaded.
    pub(crate) fn enter(path: &Path) -> Result<Self, String> {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        LOADING.with(|l| {
            let mut l = l.borrow_mut();
            if let Some(i) = l.iter().position(|p| *p == canon) {
                let chain: Vec<String> = l[i..]
                    .iter()
                    .chain(std::iter::once(&canon))
                    .map(|p| p.display().to_string())
                    .collect();
                return Err(chain.join(" -> "));
            }
            l.push(canon);
            Ok(LoadingGuard { pushed: true })
        })
    }
}

impl Drop for LoadingGuard {
    fn drop(&mut self) {
        if self.pushed {
            LOADING.with(|l| {
                l.borrow_mut().pop();
            });
        }
    }
}

/// Result of [`include_all`].
pub(crate) struct Inclusion {
    /// Problems of the `[[subsystems]]` entries (kind "subsystem", named by the entry).
    pub problems: Vec<Problem>,
    /// Included `_L` names whose `_R` twin was included too (for [`crate::mirror::expand_with`]).
    pub paired: HashSet<String>,
}

/// Flattens every `[[subsystems]]` entry of `model` into it (files relative to `base_dir`).
pub(crate) fn include_all(model: &mut Model, base_dir: &Path) -> Inclusion {
    let mut out = Inclusion {
        problems: Vec::new(),
        paired: HashSet::new(),
    };
    let subs = std::mem::take(&mut model.subsystems);
    let mut own_parameters = std::mem::take(&mut model.parameters);
    let mut seen = HashSet::new();
    for s in &subs {
        if !seen.insert(s.name.clone()) {
            out.problems.push(problem(
                s,
                "the name is used by another [[subsystems]] entry",
                "give each subsystem its own name",
            ));
            continue;
        }
        if let Err(p) = include_one(model, s, base_dir, &mut out.paired) {
            out.problems.extend(p);
        }
    }
    model.parameters.append(&mut own_parameters);
    out
}

fn problem(s: &Subsystem, message: impl Into<String>, hint: impl Into<String>) -> Problem {
    Problem::new("subsystem", &s.name, message, hint)
}

/// The placement of an entry: rotation and translation.
struct Placement {
    r: Mat3,
    p: Vec3,
    rotated: bool,
}

impl Placement {
    fn point(&self, x: &Vec3) -> Vec3 {
        let y = if self.rotated {
            rot::mul_vec(&self.r, x)
        } else {
            *x
        };
        [y[0] + self.p[0], y[1] + self.p[1], y[2] + self.p[2]]
    }
    fn vector(&self, v: &Vec3) -> Vec3 {
        if self.rotated {
            rot::mul_vec(&self.r, v)
        } else {
            *v
        }
    }
    fn matrix(&self, a: &Mat3) -> Mat3 {
        if self.rotated {
            rot::mul(&self.r, a)
        } else {
            *a
        }
    }
    fn euler_deg(&self, e: &Vec3) -> Vec3 {
        if !self.rotated {
            return *e;
        }
        let m = self.matrix(&rot::euler_zyx_deg(e));
        rot::matrix_to_euler_zyx(&m).map(f64::to_degrees)
    }
}

fn include_one(
    model: &mut Model,
    s: &Subsystem,
    base_dir: &Path,
    paired: &mut HashSet<String>,
) -> Result<(), Vec<Problem>> {
    let bad_name = !s
        .name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if bad_name {
        return Err(vec![problem(
            s,
            "the name must consist of letters, digits, '_' and '-' (or be empty: no prefix)",
            "rename it; it becomes the prefix `NAME.` of every included name",
        )]);
    }
    let finite = s.position.iter().all(|v| v.is_finite())
        && s.euler_zyx_deg
            .is_none_or(|e| e.iter().all(|v| v.is_finite()));
    if !finite {
        return Err(vec![problem(
            s,
            "position or euler_zyx_deg is not finite",
            "give finite numbers (m, deg)",
        )]);
    }
    let path = base_dir.join(&s.file);
    if !path.is_file() {
        return Err(vec![problem(
            s,
            format!("file = '{}': no such file ({})", s.file, path.display()),
            "give the path of a model file relative to the including file's folder",
        )]);
    }
    let loaded = crate::load::load(&path).map_err(|e| {
        vec![problem(
            s,
            format!(
                "the included file '{}' has problems:\n      {}\n   ",
                s.file,
                e.to_string().trim_end().replace('\n', "\n      ")
            ),
            "fix the included file (the lines above are in that file)",
        )]
    })?;
    let mut inc = match &loaded.parameter_base {
        Some(b) => b.model.clone(),
        None => loaded,
    };
    if let Err(p) = crate::merge::merge_bodies(&mut inc, &s.merge) {
        return Err(p.into_iter().map(|(m, h)| problem(s, m, h)).collect());
    }
    let mut problems = Vec::new();
    if !inc.roads.is_empty() {
        problems.push(problem(
            s,
            format!(
                "the included file '{}' defines [[roads]]; roads are not placed by subsystems",
                s.file
            ),
            "give the roads in the including model and remove them from the included file",
        ));
    }
    for k in s.parameters.keys() {
        if !inc.parameters.iter().any(|p| &p.name == k) {
            let names: Vec<String> = inc.parameters.iter().map(|p| p.name.clone()).collect();
            problems.push(problem(
                s,
                format!(
                    "parameters: '{k}' is not a declared parameter of '{}'",
                    s.file
                ),
                format!("declared there: {}", crate::parameters::suggest(k, &names)),
            ));
        }
    }
    for key in s.connect.keys() {
        let known = key
            .split_once('.')
            .is_some_and(|(e, slot)| !slot.is_empty() && inc.elements.iter().any(|x| x.name == e));
        if !known {
            let names: Vec<&str> = inc.elements.iter().map(|x| x.name.as_str()).collect();
            problems.push(problem(
                s,
                format!(
                    "connect: '{key}' is not '<element>.<slot>' of an [[elements]] entry of '{}'",
                    s.file
                ),
                format!(
                    "name the included element and its input slot, e.g. \"tire.drive_torque\"; elements there: {}",
                    names.join(", ")
                ),
            ));
        }
    }
    let ground = inc.model.ground.clone();
    let target_ground = s
        .attach
        .ground
        .clone()
        .unwrap_or_else(|| model.model.ground.clone());
    let parent_has = |b: &str| {
        b == model.model.ground
            || model
                .bodies
                .iter()
                .any(|x| x.name == b || (x.mirror && mirrored_name(&x.name).as_deref() == Some(b)))
    };
    for b in std::iter::once(&target_ground).chain(s.attach.markers.values()) {
        if !parent_has(b) {
            problems.push(problem(
                s,
                format!("attach: '{b}' is not a body (or the ground) of the including model"),
                "name a body of the including file, e.g. attach = { ground = \"chassis\" }",
            ));
        }
    }
    for m in s.attach.markers.keys() {
        if !inc.markers.iter().any(|x| &x.name == m && x.body == ground) {
            problems.push(problem(
                s,
                format!(
                    "attach.markers: '{m}' is not a marker on the ground '{ground}' of '{}'",
                    s.file
                ),
                "list ground markers of the included file by their name there (after its mirroring, e.g. `tierod_inner_joint_R.J`)",
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }

    let pre = |n: &str| {
        if s.name.is_empty() {
            n.to_string()
        } else {
            format!("{}.{n}", s.name)
        }
    };
    let pl = Placement {
        r: rot::euler_zyx_deg(&s.euler_zyx_deg.unwrap_or([0.0; 3])),
        p: s.position,
        rotated: s.euler_zyx_deg.is_some_and(|e| e != [0.0; 3]),
    };
    let curve_names: HashSet<&str> = inc.curves.iter().map(|c| c.name.as_str()).collect();

    // Pairs for mirroring of the including file's references.
    let mut note_pairs = |names: Vec<&str>| {
        let all: HashSet<&str> = names.iter().copied().collect();
        for n in names {
            if let Some(m) = mirrored_name(n)
                && all.contains(m.as_str())
            {
                paired.insert(pre(n));
            }
        }
    };
    note_pairs(inc.bodies.iter().map(|b| b.name.as_str()).collect());
    note_pairs(inc.markers.iter().map(|b| b.name.as_str()).collect());
    note_pairs(inc.frames.iter().map(|b| b.name.as_str()).collect());
    note_pairs(inc.force_elements.iter().map(|b| b.name()).collect());

    for f in &inc.frames {
        let mut c = f.clone();
        c.name = pre(&f.name);
        c.axes = Some(Axes::from_matrix(&pl.matrix(&f.rotation())));
        c.euler_zyx_deg = None;
        if !pl.rotated {
            c.axes = f.axes;
            c.euler_zyx_deg = f.euler_zyx_deg;
        }
        model.frames.push(c);
    }
    for cv in &inc.curves {
        let mut c = cv.clone();
        c.name = pre(&cv.name);
        model.curves.push(c);
    }
    for b in &inc.bodies {
        let mut c = b.clone();
        c.name = pre(&b.name);
        c.position = pl.point(&b.position);
        c.velocity = pl.vector(&b.velocity);
        if pl.rotated {
            c.euler_zyx_deg = Some(pl.euler_deg(&b.euler_zyx_deg.unwrap_or([0.0; 3])));
        }
        if let Some(j) = &mut c.joint {
            // The joint's parent is renamed like every body; the included ground becomes the
            // body the subsystem is attached to (as for the ground markers below).
            if j.kind == crate::types::JointKind::Tabulated {
                // The table names the body as in the included file.
                j.entry = Some(j.entry.clone().unwrap_or_else(|| b.name.clone()));
            }
            let on_ground = j.parent == ground;
            j.parent = if on_ground {
                target_ground.clone()
            } else {
                pre(&j.parent)
            };
            if on_ground && let Some(t) = &j.kin_table {
                // A table on the included ground is in that ground's frame: placed (P) and
                // then seen from the attachment body's design frame (A): A⁻¹ P.
                let (xa, ra) = match model.bodies.iter().find(|x| x.name == target_ground) {
                    Some(a) => (a.position, a.rotation()),
                    None => ([0.0; 3], rot::IDENTITY),
                };
                let mut t = (**t).clone();
                for tb in &mut t.bodies {
                    for x in &mut tb.position {
                        let y = pl.point(x);
                        *x = rot::mul_t_vec(&ra, &[y[0] - xa[0], y[1] - xa[1], y[2] - xa[2]]);
                    }
                    for phi in &mut tb.rotation {
                        *phi = rot::mul_t_vec(&ra, &pl.vector(phi));
                    }
                }
                j.kin_table = Some(std::sync::Arc::new(t));
            }
            j.axis = j.axis.map(|a| pl.vector(&a));
            j.point = j.point.map(|p| pl.point(&p));
            // A tabulated joint's poses are relative to its parent's design frame (placed with
            // it); its input coordinates name bodies of the subsystem.
            for c in &mut j.coordinates {
                if c != crate::types::SELF_COORDINATE {
                    *c = pre(c);
                }
            }
        }
        model.bodies.push(c);
    }
    for m in &inc.markers {
        let mut c = m.clone();
        c.name = pre(&m.name);
        c.frame = m.frame.as_deref().map(pre);
        if m.body == ground {
            c.body = s
                .attach
                .markers
                .get(&m.name)
                .cloned()
                .unwrap_or_else(|| target_ground.clone());
            c.global_position = Some(pl.point(&inc.marker_position_global(m)));
            c.position = None;
            if m.frame.is_none() {
                c.global_axes = Some(Axes::from_matrix(&pl.matrix(&inc.marker_axes_global(m))));
                c.euler_zyx_deg = None;
            }
        } else {
            c.body = pre(&m.body);
            c.global_position = m.global_position.map(|g| pl.point(&g));
            c.global_axes = m
                .global_axes
                .map(|a| Axes::from_matrix(&pl.matrix(&a.matrix())));
        }
        model.markers.push(c);
    }
    let pc = |c: &Option<String>| c.as_deref().map(pre);
    let pac = |a: &AxisCurves| AxisCurves {
        x: pc(&a.x),
        y: pc(&a.y),
        z: pc(&a.z),
    };
    for e in &inc.force_elements {
        let mut c = e.clone();
        match &mut c {
            ForceElement::Bushing(b) => {
                b.name = pre(&b.name);
                b.marker_i = pre(&b.marker_i);
                b.marker_j = pre(&b.marker_j);
                b.stiffness_curves = pac(&b.stiffness_curves);
                b.rot_stiffness_curves = pac(&b.rot_stiffness_curves);
                b.damping_curves = pac(&b.damping_curves);
                b.rot_damping_curves = pac(&b.rot_damping_curves);
            }
            ForceElement::Spring(b) => {
                b.name = pre(&b.name);
                b.marker_i = pre(&b.marker_i);
                b.marker_j = pre(&b.marker_j);
                b.curve = pc(&b.curve);
            }
            ForceElement::Damper(b) => {
                b.name = pre(&b.name);
                b.marker_i = pre(&b.marker_i);
                b.marker_j = pre(&b.marker_j);
                b.curve = pc(&b.curve);
            }
            ForceElement::Stop(b) => {
                b.name = pre(&b.name);
                b.marker_i = pre(&b.marker_i);
                b.marker_j = pre(&b.marker_j);
                b.curve = pc(&b.curve);
            }
        }
        model.force_elements.push(c);
    }
    for e in &inc.elements {
        let mut c = e.clone();
        c.name = pre(&e.name);
        c.markers = e.markers.iter().map(|m| pre(m)).collect();
        c.inputs = e.inputs.iter().map(|(k, v)| (k.clone(), pre(v))).collect();
        for (key, source) in &s.connect {
            if let Some((name, slot)) = key.split_once('.')
                && name == e.name
            {
                c.inputs.insert(slot.to_string(), source.clone());
            }
        }
        for v in c.parameters.values_mut() {
            if let ParamValue::Text(t) = v
                && curve_names.contains(t.as_str())
            {
                *t = pre(t);
            }
        }
        model.elements.push(c);
    }
    for i in &inc.inputs {
        // `signal` inputs are data of the included elements (read through their slots): always
        // kept; force and torque inputs (a load case) only with `inputs = "keep"`.
        if s.inputs == IncludeItems::Keep || i.kind == InputKind::Signal {
            let mut c = i.clone();
            c.name = pre(&i.name);
            if !i.marker.is_empty() {
                c.marker = pre(&i.marker);
            }
            if i.frame == InputFrame::Global {
                c.direction = pl.vector(&i.direction);
            }
            model.inputs.push(c);
        }
    }
    if s.outputs == IncludeItems::Keep {
        for o in &inc.outputs {
            let mut c = o.clone();
            c.name = pre(&o.name);
            c.marker = o.marker.as_deref().map(pre);
            c.body = o.body.as_deref().map(pre);
            c.element = o.element.as_deref().map(pre);
            model.outputs.push(c);
        }
    }
    let mut problems = Vec::new();
    for p in &inc.parameters {
        let mut c = p.clone();
        c.name = pre(&p.name);
        if let Some(v) = s.parameters.get(&p.name) {
            c.value = *v;
        }
        let mut targets = Vec::new();
        for t in &p.targets {
            match prefix_path(t, &s.name) {
                Some(t) => targets.push(t),
                None => problems.push(problem(
                    s,
                    format!(
                        "parameter '{}' of '{}' acts on '{t}', a setting an included file does not bring",
                        p.name, s.file
                    ),
                    "only values of bodies, markers, frames, curves, force elements, elements, inputs and outputs can be targets of an included parameter",
                )),
            }
        }
        c.targets = targets;
        model.parameters.push(c);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The path `t` of an included file with its item name prefixed by `sub.`; `None` for paths
/// into `[model]` / `[solver]` (or malformed ones, which keep their text and fail later).
fn prefix_path(t: &str, sub: &str) -> Option<String> {
    let (list, rest) = t.split_once('.')?;
    if sub.is_empty() {
        return (list != "model" && list != "solver").then(|| t.to_string());
    }
    const LISTS: [&str; 8] = [
        "bodies",
        "markers",
        "frames",
        "curves",
        "force_elements",
        "elements",
        "inputs",
        "outputs",
    ];
    if !LISTS.contains(&list) {
        return None;
    }
    Some(match rest.strip_prefix('"') {
        Some(q) => format!("{list}.\"{sub}.{q}"),
        None => {
            // An unquoted pattern cannot contain '.': quote it with the prefix.
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let (item, field) = rest.split_at(end);
            if item.contains('*') {
                format!("{list}.\"{sub}.{item}\"{field}")
            } else {
                format!("{list}.{sub}.{rest}")
            }
        }
    })
}

/// Lines of problems about included items: a problem whose name starts with `SUB.` is reported
/// at the `[[subsystems]]` entry `SUB` (the caller looks its line up) with a note.
pub(crate) fn owner<'a>(subs: &'a [String], name: &str) -> Option<&'a str> {
    subs.iter()
        .find(|s| !s.is_empty() && name.starts_with(&format!("{s}.")))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::prefix_path;

    #[test]
    fn paths_get_the_prefix_on_the_item() {
        assert_eq!(
            prefix_path("force_elements.*_bushing_*.stiffness", "front").as_deref(),
            Some("force_elements.\"front.*_bushing_*\".stiffness")
        );
        assert_eq!(
            prefix_path("markers.\"a_L.I\".global_position[2]", "rear").as_deref(),
            Some("markers.\"rear.a_L.I\".global_position[2]")
        );
        assert_eq!(prefix_path("solver.t_end", "x"), None);
        assert_eq!(prefix_path("model.gravity[2]", "x"), None);
    }
}
