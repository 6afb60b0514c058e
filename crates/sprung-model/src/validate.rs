//! Validation of an expanded model: every problem is collected (not only the first).
//!
//! Tolerances: frame / inline axes must be orthonormal to 1e-4 (largest entry of |A^T A - I|) and
//! right-handed (det > 0), and are then orthonormalised exactly by the loader; an inertia tensor
//! must be symmetric to 1e-9 relative to its largest entry, positive definite, and its principal
//! moments must satisfy the triangle inequality I_a + I_b >= I_c (relative slack 1e-9).

use std::collections::HashSet;

use crate::error::Problem;
use crate::rot;
use crate::types::{
    Axes, Body, Curve, ForceElement, Input, InputKind, Marker, Model, OpenElement, Output,
    OutputFrame, ParamValue, Quantity, Road, RoadType, Signal, Symmetry,
};

/// Tolerance on |A^T A - I| for frame axes.
pub const AXES_TOLERANCE: f64 = 1e-4;

struct Ctx<'a> {
    model: &'a Model,
    out: Vec<Problem>,
}

impl Ctx<'_> {
    fn push(
        &mut self,
        kind: &str,
        name: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.out.push(Problem::new(kind, name, message, hint));
    }
    fn finite(&mut self, kind: &str, name: &str, field: &str, v: &[f64]) -> bool {
        if v.iter().all(|x| x.is_finite()) {
            true
        } else {
            self.push(
                kind,
                name,
                format!("`{field}` contains a non-finite number (nan or inf)"),
                format!("give finite numbers for `{field}`"),
            );
            false
        }
    }
    fn non_negative(&mut self, kind: &str, name: &str, field: &str, v: &[f64]) {
        if self.finite(kind, name, field, v) && v.iter().any(|x| *x < 0.0) {
            self.push(
                kind,
                name,
                format!("`{field}` = {v:?} has a negative entry"),
                format!("`{field}` must be >= 0"),
            );
        }
    }
    fn axes(&mut self, kind: &str, name: &str, field: &str, a: &Axes) {
        if !self.finite(kind, name, field, &[a.x, a.y, a.z].concat()) {
            return;
        }
        let m = a.matrix();
        let err = rot::orthonormality_error(&m);
        if err > AXES_TOLERANCE {
            self.push(
                kind,
                name,
                format!("`{field}` are not orthonormal (largest |A^T A - I| entry {err:.3e} > tolerance {AXES_TOLERANCE:e})"),
                "give unit axes that are mutually perpendicular to at least 1e-4 (they are then orthonormalised exactly)",
            );
        } else if rot::det(&m) <= 0.0 {
            self.push(
                kind,
                name,
                format!("`{field}` form a left-handed frame (x cross y = -z)"),
                "negate one axis so that z = x cross y",
            );
        }
    }
    /// Hint for an unknown reference, with the closest existing name when there is one.
    fn unknown_hint(&self, what: &str, name: &str) -> String {
        let m = self.model;
        let candidates: Vec<&str> = match what {
            "body" => m
                .bodies
                .iter()
                .map(|b| b.name.as_str())
                .chain([m.ground_name()])
                .collect(),
            "marker" => m.markers.iter().map(|x| x.name.as_str()).collect(),
            "frame" => m.frames.iter().map(|x| x.name.as_str()).collect(),
            "curve" => m.curves.iter().map(|x| x.name.as_str()).collect(),
            "input" => m.inputs.iter().map(|x| x.name.as_str()).collect(),
            _ => m
                .force_elements
                .iter()
                .map(|x| x.name())
                .chain(m.elements.iter().map(|x| x.name.as_str()))
                .collect(),
        };
        let section = match what {
            "body" => "[[bodies]] (or use the ground name)",
            "marker" => "[[markers]]",
            "frame" => "[[frames]]",
            "curve" => "[[curves]]",
            "input" => "[[inputs]] (kind = \"signal\" for a scalar read by elements)",
            _ => "[[force_elements]]",
        };
        match closest(name, &candidates) {
            Some(c) => format!("did you mean '{c}'? Otherwise define the {what} in {section}"),
            None => format!("define the {what} in {section} or fix the name"),
        }
    }
    fn body_or_ground(&self, name: &str) -> bool {
        self.model.is_ground(name) || self.model.body(name).is_some()
    }
}

/// Levenshtein distance (on chars).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j]))
                .min(row[j] + 1)
                .min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate closest to `name` if it is close enough to be a likely typo.
fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).clamp(1, 3);
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn duplicates<'a>(ctx: &mut Ctx, label: &str, names: impl Iterator<Item = &'a str>) {
    let mut seen = HashSet::new();
    let mut reported = HashSet::new();
    for n in names {
        if n.is_empty() {
            ctx.push(
                label,
                n,
                "has an empty name",
                "give every item a non-empty unique name",
            );
        } else if !seen.insert(n) && reported.insert(n) {
            ctx.push(
                label,
                n,
                format!(
                    "the {label} name '{n}' is defined more than once (after mirror expansion)"
                ),
                format!("rename one of the {label}s; names must be unique per kind"),
            );
        }
    }
}

/// Validate an expanded model; returns all problems (empty = valid). File and line are filled in
/// by the loader.
pub(crate) fn validate(model: &Model) -> Vec<Problem> {
    let mut ctx = Ctx {
        model,
        out: Vec::new(),
    };
    model_section(&mut ctx);
    solver(&mut ctx);
    duplicates(
        &mut ctx,
        "frame",
        model.frames.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        &mut ctx,
        "curve",
        model.curves.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        &mut ctx,
        "body",
        model.bodies.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        &mut ctx,
        "marker",
        model.markers.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        &mut ctx,
        "force element",
        model
            .force_elements
            .iter()
            .map(|f| f.name())
            .chain(model.elements.iter().map(|e| e.name.as_str())),
    );
    duplicates(
        &mut ctx,
        "input",
        model.inputs.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        &mut ctx,
        "output",
        model.outputs.iter().map(|f| f.name.as_str()),
    );
    for f in &model.frames {
        match (&f.axes, &f.euler_zyx_deg) {
            (Some(a), None) => ctx.axes("frame", &f.name, "axes", a),
            (None, Some(e)) => {
                ctx.finite("frame", &f.name, "euler_zyx_deg", e);
            }
            (Some(_), Some(_)) => ctx.push(
                "frame",
                &f.name,
                "has both `axes` and `euler_zyx_deg`",
                "give exactly one of `axes` / `euler_zyx_deg`",
            ),
            (None, None) => ctx.push(
                "frame",
                &f.name,
                "has neither `axes` nor `euler_zyx_deg`",
                "give exactly one of `axes` / `euler_zyx_deg`",
            ),
        }
    }
    for c in &model.curves {
        curve(&mut ctx, c);
    }
    for b in &model.bodies {
        body(&mut ctx, b);
    }
    for m in &model.markers {
        marker(&mut ctx, m);
    }
    for e in &model.force_elements {
        element(&mut ctx, e);
    }
    for e in &model.elements {
        open_element(&mut ctx, e);
    }
    duplicates(
        &mut ctx,
        "road",
        model.roads.iter().map(|r| r.name.as_str()),
    );
    for r in &model.roads {
        road(&mut ctx, r);
    }
    for i in &model.inputs {
        input(&mut ctx, i);
    }
    for o in &model.outputs {
        output(&mut ctx, o);
    }
    ctx.out
}

fn model_section(ctx: &mut Ctx) {
    let m = &ctx.model.model;
    let name = m.name.clone();
    if name.trim().is_empty() {
        ctx.push("model", &name, "`name` is empty", "give the model a name");
    }
    ctx.finite("model", &name, "gravity", &m.gravity);
    if m.ground.trim().is_empty() {
        ctx.push(
            "model",
            &name,
            "`ground` is empty",
            "omit `ground` (default \"ground\") or give a name",
        );
    }
    if let Some(b) = ctx.model.body(&m.ground) {
        let bn = b.name.clone();
        ctx.push(
            "body",
            &bn,
            format!("has the same name as the ground '{}'", m.ground),
            "rename the body or set [model] ground to a different name",
        );
    }
}

fn solver(ctx: &mut Ctx) {
    // One validation path for model files and command-line overrides.
    if let Err(e) = ctx
        .model
        .solver
        .validate(crate::settings::StepMode::Unknown)
    {
        for p in e.problems {
            ctx.push("solver", "solver", p.message, p.hint);
        }
    }
}

fn curve(ctx: &mut Ctx, c: &Curve) {
    let k = "curve";
    let n = c.name.as_str();
    let fx = ctx.finite(k, n, "x", &c.x);
    let fy = ctx.finite(k, n, "y", &c.y);
    if c.x.len() != c.y.len() {
        ctx.push(
            k,
            n,
            format!("`x` has {} points but `y` has {}", c.x.len(), c.y.len()),
            "give x and y with the same number of points",
        );
    }
    if c.x.len() < 2 {
        ctx.push(
            k,
            n,
            format!("has {} point(s)", c.x.len()),
            "give at least 2 points",
        );
    }
    if fx && let Some(i) = (1..c.x.len()).find(|&i| c.x[i] <= c.x[i - 1]) {
        ctx.push(
            k,
            n,
            format!(
                "`x` is not strictly increasing (x[{}] = {} <= x[{}] = {})",
                i,
                c.x[i],
                i - 1,
                c.x[i - 1]
            ),
            "sort the points by x and remove repeated x values",
        );
    }
    if c.symmetry == Symmetry::Odd
        && fx
        && fy
        && (c.x.first() != Some(&0.0) || c.y.first() != Some(&0.0))
    {
        ctx.push(
            k,
            n,
            "has symmetry = \"odd\" but does not start at (0, 0)",
            "tabulate odd curves for x >= 0 starting with x[0] = 0, y[0] = 0",
        );
    }
}

fn inertia_problems(ctx: &mut Ctx, b: &Body) {
    let k = "body";
    let n = b.name.as_str();
    let i = &b.inertia;
    match (&i.tensor, &i.principal) {
        (Some(_), Some(_)) => {
            ctx.push(
                k,
                n,
                "inertia has both `tensor` and `principal`",
                "give exactly one of inertia.tensor / inertia.principal",
            );
            return;
        }
        (None, None) => {
            ctx.push(
                k,
                n,
                "inertia has neither `tensor` nor `principal`",
                "give inertia = { tensor = [[..],[..],[..]] } or { principal = [I1, I2, I3] }",
            );
            return;
        }
        (Some(_), None) if i.euler_zyx_deg.is_some() => {
            ctx.push(
                k,
                n,
                "inertia.euler_zyx_deg is only allowed with inertia.principal",
                "remove euler_zyx_deg or give principal moments instead of the tensor",
            );
            return;
        }
        _ => {}
    }
    let moments = if let Some(t) = &i.tensor {
        if !ctx.finite(k, n, "inertia.tensor", &t.concat()) {
            return;
        }
        let scale = t.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
        let asym = (0..3)
            .flat_map(|r| (0..3).map(move |c| (r, c)))
            .map(|(r, c)| (t[r][c] - t[c][r]).abs())
            .fold(0.0, f64::max);
        if asym > 1e-9 * scale {
            ctx.push(
                k,
                n,
                format!("inertia tensor is not symmetric (largest |I_ij - I_ji| = {asym:e})"),
                "make I_ij = I_ji (off-diagonal entries are the negative products of inertia)",
            );
            return;
        }
        rot::symmetric_eigenvalues(t)
    } else {
        let p = i.principal.unwrap_or_default();
        if !ctx.finite(k, n, "inertia.principal", &p) {
            return;
        }
        if let Some(e) = &i.euler_zyx_deg
            && !ctx.finite(k, n, "inertia.euler_zyx_deg", e)
        {
            return;
        }
        let mut p = p;
        p.sort_by(|a, b| a.total_cmp(b));
        p
    };
    if massless_follower(b) {
        if moments.iter().any(|m| *m != 0.0) {
            ctx.push(
                k,
                n,
                format!("a massless follower has inertia (principal moments {moments:?})"),
                "give zero inertia with mass = 0 (a massless link), or a positive mass",
            );
        }
    } else if moments[0] <= 0.0 {
        ctx.push(
            k,
            n,
            format!("inertia is not positive definite (principal moments {moments:?})"),
            "all principal moments of inertia must be > 0",
        );
    } else if moments[0] + moments[1] < moments[2] * (1.0 - 1e-9) {
        ctx.push(
            k,
            n,
            format!("principal moments {moments:?} violate the triangle inequality I1 + I2 >= I3 (no real mass distribution has them)"),
            "check the inertia values: the sum of the two smaller principal moments must be at least the largest",
        );
    }
}

/// A follower (tabulated joint without an own coordinate) with mass 0: allowed with zero
/// inertia (document 004's massless links; their element wrenches enter through Jᵀ W only).
fn massless_follower(b: &Body) -> bool {
    b.mass == 0.0 && b.joint.as_ref().is_some_and(|j| j.is_follower())
}

fn body(ctx: &mut Ctx, b: &Body) {
    let k = "body";
    let n = b.name.as_str();
    if ctx.finite(k, n, "mass", &[b.mass]) && b.mass <= 0.0 && !massless_follower(b) {
        ctx.push(
            k,
            n,
            format!("mass = {} is not positive", b.mass),
            "give the mass in kg, > 0",
        );
    }
    ctx.finite(k, n, "position", &b.position);
    ctx.finite(k, n, "velocity", &b.velocity);
    ctx.finite(k, n, "angular_velocity", &b.angular_velocity);
    if let Some(e) = &b.euler_zyx_deg {
        ctx.finite(k, n, "euler_zyx_deg", e);
    }
    inertia_problems(ctx, b);
    if let Some(j) = &b.joint {
        joint(ctx, b, j);
    }
}

/// The `joint` of body `b` (`docs/joints.md`): a known parent that is not the body itself and
/// whose chain of joint parents ends at a free body or the ground (no cycle), a finite non-zero
/// axis, a point for a revolute joint (none for a prismatic one), finite initial values, and no
/// initial body velocities (the joint rate `zd0` sets them).
fn joint(ctx: &mut Ctx, b: &Body, j: &crate::types::Joint) {
    let k = "body";
    let n = b.name.as_str();
    let model = ctx.model;
    if j.parent == b.name {
        ctx.push(
            k,
            n,
            "joint parent is the body itself",
            "give another body or the ground as `parent`",
        );
    } else if !model.is_ground(&j.parent) && model.body(&j.parent).is_none() {
        let names: Vec<&str> = model
            .bodies
            .iter()
            .map(|x| x.name.as_str())
            .chain(std::iter::once(model.ground_name()))
            .collect();
        let hint = match closest(&j.parent, &names) {
            Some(c) => format!("did you mean '{c}'? `parent` names a body or the ground"),
            None => "`parent` names a body or the ground".to_string(),
        };
        ctx.push(
            k,
            n,
            format!("joint parent '{}' is not a body", j.parent),
            hint,
        );
    } else {
        // Follow the joint parents: a body met twice closes a cycle.
        let mut seen = vec![n];
        let mut p = j.parent.as_str();
        while let Some(pb) = model.body(p) {
            if seen.contains(&p) {
                ctx.push(
                    k,
                    n,
                    format!(
                        "the joint parents form a cycle: {} -> {p}",
                        seen.join(" -> ")
                    ),
                    "make one body of the cycle free (no `joint`) or jointed to the ground",
                );
                break;
            }
            seen.push(p);
            match &pb.joint {
                Some(pj) => p = pj.parent.as_str(),
                None => break,
            }
        }
    }
    if j.kind == crate::types::JointKind::Tabulated {
        tabulated_joint(ctx, b, j);
        return;
    }
    for (field, given) in [
        ("table", j.table.is_some()),
        ("entry", j.entry.is_some()),
        ("coordinates", !j.coordinates.is_empty()),
    ] {
        if given {
            ctx.push(
                k,
                n,
                format!(
                    "{} joint with `{field}` (only tabulated joints read a table)",
                    j.kind.name()
                ),
                format!("remove `{field}`, or make the joint `type = \"tabulated\"`"),
            );
        }
    }
    if j.kind == crate::types::JointKind::Fixed {
        for (field, given) in [
            ("axis", j.axis.is_some()),
            ("point", j.point.is_some()),
            ("z0", j.z0 != 0.0),
            ("zd0", j.zd0 != 0.0),
        ] {
            if given {
                ctx.push(
                    k,
                    n,
                    format!("fixed joint with `{field}` (it has no axis and no coordinate)"),
                    format!(
                        "remove `{field}`: the body stays at its design pose relative to the parent"
                    ),
                );
            }
        }
    } else {
        moving_joint(ctx, k, n, j);
    }
    if b.velocity != [0.0; 3] || b.angular_velocity != [0.0; 3] {
        ctx.push(
            k,
            n,
            "a jointed body has `velocity` / `angular_velocity` (its motion is the joint's)",
            "remove them and give the joint rate `zd0` (rad/s or m/s)",
        );
    }
}

/// The axis, point and coordinate of a revolute or prismatic joint.
fn moving_joint(ctx: &mut Ctx, k: &str, n: &str, j: &crate::types::Joint) {
    match j.axis {
        None => ctx.push(
            k,
            n,
            format!("{} joint without `axis`", j.kind.name()),
            "give the joint axis in the design (global) frame: `axis = [x, y, z]`",
        ),
        Some(axis) => {
            if ctx.finite(k, n, "joint.axis", &axis) && axis.iter().all(|x| *x == 0.0) {
                ctx.push(
                    k,
                    n,
                    "joint axis is zero",
                    "give the joint axis as a non-zero vector in the design (global) frame",
                );
            }
        }
    }
    match (j.kind, &j.point) {
        (crate::types::JointKind::Revolute, None) => ctx.push(
            k,
            n,
            "revolute joint without `point`",
            "give a point on the axis in the design (global) frame, m: `point = [x, y, z]`",
        ),
        (crate::types::JointKind::Revolute, Some(p)) => {
            ctx.finite(k, n, "joint.point", p);
        }
        (crate::types::JointKind::Prismatic, Some(_)) => ctx.push(
            k,
            n,
            "prismatic joint with `point` (a translation has no axis position)",
            "remove `point`",
        ),
        (crate::types::JointKind::Prismatic, None)
        | (crate::types::JointKind::Tabulated | crate::types::JointKind::Fixed, _) => {}
    }
    ctx.finite(k, n, "joint.z0 / joint.zd0", &[j.z0, j.zd0]);
}

/// The root of body `name`'s joint tree: the first body up the joint parents without a joint
/// (`Some`), or `None` for the ground (cycles are reported elsewhere and end the walk).
fn joint_root<'a>(model: &'a Model, name: &'a str) -> Option<&'a str> {
    let mut p = name;
    for _ in 0..=model.bodies.len() {
        match model.body(p).and_then(|b| b.joint.as_ref().map(|j| (b, j))) {
            None => return model.body(p).map(|b| b.name.as_str()),
            Some((_, j)) => p = j.parent.as_str(),
        }
    }
    None
}

/// Largest deviation of a tabulated joint's pose at c = 0 from the design pose tolerated: the
/// z = 0 convention of the other joints, m and rad.
pub const TABLE_DESIGN_TOLERANCE: f64 = 1e-6;

/// A tabulated joint (`docs/joints.md`, "Tabulated joints"): a loaded table with the entry, one
/// coordinate item per table axis (at most one `"self"`; other items name jointed bodies of the
/// same tree with exactly one coordinate), no `axis` / `point`, no initial values on a follower,
/// and the table at c = 0 reproducing the design pose relative to the parent's.
fn tabulated_joint(ctx: &mut Ctx, b: &Body, j: &crate::types::Joint) {
    use crate::types::SELF_COORDINATE;
    let k = "body";
    let n = b.name.as_str();
    let model = ctx.model;
    for (field, given) in [("axis", j.axis.is_some()), ("point", j.point.is_some())] {
        if given {
            ctx.push(
                k,
                n,
                format!("tabulated joint with `{field}` (the table gives the pose)"),
                format!("remove `{field}`"),
            );
        }
    }
    if j.table.is_none() {
        ctx.push(
            k,
            n,
            "tabulated joint without `table`",
            "give the kinematic table file relative to the model file: `table = \"tables/corner.toml\"`",
        );
    }
    if b.velocity != [0.0; 3] || b.angular_velocity != [0.0; 3] {
        ctx.push(
            k,
            n,
            "a jointed body has `velocity` / `angular_velocity` (its motion is the joint's)",
            "remove them and give the joint rate `zd0` of the \"self\" coordinate",
        );
    }
    let selfs = j
        .coordinates
        .iter()
        .filter(|c| *c == SELF_COORDINATE)
        .count();
    if selfs > 1 {
        ctx.push(
            k,
            n,
            format!("tabulated joint lists \"self\" {selfs} times in `coordinates`"),
            "a body has at most one own coordinate: list \"self\" once, other axes name input coordinates' bodies",
        );
    }
    ctx.finite(k, n, "joint.z0 / joint.zd0", &[j.z0, j.zd0]);
    if selfs == 0 && (j.z0 != 0.0 || j.zd0 != 0.0) {
        ctx.push(
            k,
            n,
            "a follower (tabulated joint without \"self\") has `z0` / `zd0`",
            "remove them (a follower has no coordinate of its own), or list \"self\" in `coordinates`",
        );
    }
    let root = joint_root(model, n);
    for c in j.coordinates.iter().filter(|c| *c != SELF_COORDINATE) {
        let Some(src) = model.body(c) else {
            let names: Vec<&str> = model.bodies.iter().map(|x| x.name.as_str()).collect();
            let hint = match closest(c, &names) {
                Some(m) => format!(
                    "did you mean '{m}'? a coordinate item is \"self\" or a jointed body's name"
                ),
                None => "a coordinate item is \"self\" or the name of a jointed body".to_string(),
            };
            ctx.push(k, n, format!("joint coordinate '{c}' is not a body"), hint);
            continue;
        };
        if src.name == b.name {
            ctx.push(
                k,
                n,
                format!("joint coordinate '{c}' is the body itself"),
                "write \"self\" for the body's own coordinate",
            );
            continue;
        }
        match &src.joint {
            None => ctx.push(
                k,
                n,
                format!("joint coordinate '{c}' names a free body (it has no joint coordinate)"),
                "name a body with a revolute, prismatic or tabulated (\"self\") joint",
            ),
            Some(sj) if !sj.has_own_coordinate() => ctx.push(
                k,
                n,
                format!(
                    "joint coordinate '{c}' names a follower (it has no coordinate of its own)"
                ),
                "name the body whose coordinate the follower follows",
            ),
            Some(_) => {
                if joint_root(model, c) != root {
                    ctx.push(
                        k,
                        n,
                        format!("joint coordinate '{c}' belongs to another joint tree (root {} vs {})", joint_root(model, c).unwrap_or("ground"), root.unwrap_or("ground")),
                        "an input coordinate must come from a body jointed (directly or through a chain) to the same free body or to the ground",
                    );
                }
            }
        }
    }
    let Some(table) = &j.kin_table else { return };
    let entry = j.entry.as_deref().unwrap_or(n);
    if table.axes.len() != j.coordinates.len() {
        ctx.push(
            k,
            n,
            format!(
                "`coordinates` has {} items but the table has {} axes ({})",
                j.coordinates.len(),
                table.axes.len(),
                table.axes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "give one item per table axis, in axis order: \"self\" or the name of the jointed body whose coordinate it is",
        );
        return;
    }
    let Some(spline) = table.spline(entry) else {
        let names: Vec<&str> = table.bodies.iter().map(|x| x.name.as_str()).collect();
        let hint = match closest(entry, &names) {
            Some(m) => format!("did you mean '{m}'? set `entry` to the table body to follow"),
            None => format!(
                "set `entry` to one of the table's bodies: {}",
                names.join(", ")
            ),
        };
        ctx.push(k, n, format!("the table has no body '{entry}'"), hint);
        return;
    };
    // The design pose relative to the parent's design pose (z = 0 convention).
    let (xp, rp) = match model.body(&j.parent) {
        Some(p) => (p.position, p.rotation()),
        None => ([0.0; 3], rot::IDENTITY),
    };
    let d = [
        b.position[0] - xp[0],
        b.position[1] - xp[1],
        b.position[2] - xp[2],
    ];
    let s0 = rot::mul_t_vec(&rp, &d);
    let ev = spline.eval(&[0.0, 0.0][..spline.dims()]);
    let dpos = (0..3)
        .map(|i| (ev.value[i] - s0[i]).abs())
        .fold(0.0, f64::max);
    let drot = (3..6).map(|i| ev.value[i].abs()).fold(0.0, f64::max);
    if dpos > TABLE_DESIGN_TOLERANCE || drot > TABLE_DESIGN_TOLERANCE {
        ctx.push(
            k,
            n,
            format!(
                "the table's pose of '{entry}' at coordinates 0 is not the body's design pose relative to '{}': position {:?} m vs design {:?} m, rotation vector {:?} rad vs 0 (tolerance {TABLE_DESIGN_TOLERANCE})",
                j.parent,
                &ev.value[..3],
                s0,
                &ev.value[3..],
            ),
            "put the body at the table's design pose (`position`, `euler_zyx_deg`), or regenerate the table from this model's design pose",
        );
    }
}

fn marker(ctx: &mut Ctx, m: &Marker) {
    let k = "marker";
    let n = m.name.as_str();
    if !ctx.body_or_ground(&m.body) {
        ctx.push(
            k,
            n,
            format!("refers to unknown body '{}'", m.body),
            ctx.unknown_hint("body", &m.body),
        );
    }
    match (&m.global_position, &m.position) {
        (Some(p), None) | (None, Some(p)) => {
            ctx.finite(k, n, "position", p);
        }
        (Some(_), Some(_)) => ctx.push(
            k,
            n,
            "has both `global_position` and `position`",
            "give exactly one of global_position (global) / position (body frame)",
        ),
        (None, None) => ctx.push(
            k,
            n,
            "has neither `global_position` nor `position`",
            "give exactly one of global_position (global) / position (body frame)",
        ),
    }
    let count =
        m.frame.is_some() as u8 + m.global_axes.is_some() as u8 + m.euler_zyx_deg.is_some() as u8;
    if count > 1 {
        ctx.push(
            k,
            n,
            "has more than one of `frame`, `global_axes`, `euler_zyx_deg`",
            "give at most one orientation (default: parallel to the body frame)",
        );
    }
    if let Some(f) = &m.frame
        && ctx.model.frame(f).is_none()
    {
        ctx.push(
            k,
            n,
            format!("refers to unknown frame '{f}'"),
            ctx.unknown_hint("frame", f),
        );
    }
    if let Some(a) = &m.global_axes {
        ctx.axes(k, n, "global_axes", a);
    }
    if let Some(e) = &m.euler_zyx_deg {
        ctx.finite(k, n, "euler_zyx_deg", e);
    }
}

fn curve_ref(ctx: &mut Ctx, k: &str, n: &str, field: &str, c: &str) {
    if ctx.model.curve(c).is_none() {
        ctx.push(
            k,
            n,
            format!("`{field}` refers to unknown curve '{c}'"),
            ctx.unknown_hint("curve", c),
        );
    }
}

fn exactly_one(ctx: &mut Ctx, k: &str, n: &str, options: &[(&str, bool)]) -> bool {
    let given: Vec<&str> = options.iter().filter(|o| o.1).map(|o| o.0).collect();
    let all: Vec<String> = options.iter().map(|o| format!("`{}`", o.0)).collect();
    match given.len() {
        1 => true,
        0 => {
            ctx.push(
                k,
                n,
                format!("has none of {}", all.join(" / ")),
                format!("give exactly one of {}", all.join(" / ")),
            );
            false
        }
        _ => {
            ctx.push(
                k,
                n,
                format!(
                    "has more than one of {} (given: {})",
                    all.join(" / "),
                    given.join(", ")
                ),
                format!("keep exactly one of {}", all.join(" / ")),
            );
            false
        }
    }
}

fn element(ctx: &mut Ctx, e: &ForceElement) {
    let k = e.type_name();
    let n = e.name();
    let mut markers_ok = true;
    for (field, mn) in [("marker_i", e.marker_i()), ("marker_j", e.marker_j())] {
        if ctx.model.marker(mn).is_none() {
            markers_ok = false;
            ctx.push(
                k,
                n,
                format!("`{field}` refers to unknown marker '{mn}'"),
                ctx.unknown_hint("marker", mn),
            );
        }
    }
    if markers_ok {
        let bi = &ctx
            .model
            .marker(e.marker_i())
            .map(|m| m.body.clone())
            .unwrap_or_default();
        let bj = &ctx
            .model
            .marker(e.marker_j())
            .map(|m| m.body.clone())
            .unwrap_or_default();
        if bi == bj {
            ctx.push(
                k,
                n,
                format!("both markers are on the same body '{bi}', so the element has no effect"),
                "attach marker_i and marker_j to two different bodies",
            );
        }
    }
    let p2p_length = if markers_ok && e.is_point_to_point() {
        ctx.model.design_length(e)
    } else {
        None
    };
    match e {
        ForceElement::Bushing(b) => {
            ctx.non_negative(k, n, "stiffness", &b.stiffness);
            ctx.non_negative(k, n, "rot_stiffness", &b.rot_stiffness);
            ctx.non_negative(k, n, "damping", &b.damping);
            ctx.non_negative(k, n, "rot_damping", &b.rot_damping);
            ctx.finite(k, n, "preload", &b.preload);
            ctx.finite(k, n, "rot_preload", &b.rot_preload);
            for (field, curves) in [
                ("stiffness_curves", &b.stiffness_curves),
                ("rot_stiffness_curves", &b.rot_stiffness_curves),
                ("damping_curves", &b.damping_curves),
                ("rot_damping_curves", &b.rot_damping_curves),
            ] {
                for (ax, c) in ["x", "y", "z"].iter().zip(curves.as_array()) {
                    if let Some(c) = c {
                        curve_ref(ctx, k, n, &format!("{field}.{ax}"), c);
                    }
                }
            }
            if let Some(ax) = b.spin_axis {
                let i = ax.index();
                let an = ["x", "y", "z"][i];
                if b.rot_stiffness[i] != 0.0 {
                    ctx.push(k, n, format!("spin_axis = \"{an}\" but rot_stiffness on that axis is {} (the spin is free)", b.rot_stiffness[i]), format!("set rot_stiffness {an} component to 0 or remove spin_axis"));
                }
                if b.rot_stiffness_curves.as_array()[i].is_some() {
                    ctx.push(k, n, format!("spin_axis = \"{an}\" but rot_stiffness_curves.{an} is given (the spin is free)"), format!("remove rot_stiffness_curves.{an} or spin_axis"));
                }
            }
        }
        ForceElement::Spring(s) => {
            if exactly_one(
                ctx,
                k,
                n,
                &[
                    ("stiffness", s.stiffness.is_some()),
                    ("curve", s.curve.is_some()),
                ],
            ) && let Some(kv) = s.stiffness
            {
                ctx.non_negative(k, n, "stiffness", &[kv]);
            }
            if let Some(c) = &s.curve {
                curve_ref(ctx, k, n, "curve", c);
            }
            if let Some(l) = s.free_length
                && ctx.finite(k, n, "free_length", &[l])
                && l <= 0.0
            {
                ctx.push(
                    k,
                    n,
                    format!("free_length = {l} is not positive"),
                    "give free_length > 0 or omit it (default: design length)",
                );
            }
            ctx.finite(k, n, "preload", &[s.preload]);
            ctx.non_negative(k, n, "damping", &[s.damping]);
        }
        ForceElement::Damper(d) => {
            let bilinear = d.damping_rebound.is_some() || d.damping_compression.is_some();
            if exactly_one(
                ctx,
                k,
                n,
                &[
                    ("damping", d.damping.is_some()),
                    ("damping_rebound + damping_compression", bilinear),
                    ("curve", d.curve.is_some()),
                ],
            ) && bilinear
                && (d.damping_rebound.is_none() || d.damping_compression.is_none())
            {
                ctx.push(
                    k,
                    n,
                    "bilinear damping needs both `damping_rebound` and `damping_compression`",
                    "give both bilinear coefficients",
                );
            }
            for (f, v) in [
                ("damping", d.damping),
                ("damping_rebound", d.damping_rebound),
                ("damping_compression", d.damping_compression),
            ] {
                if let Some(v) = v {
                    ctx.non_negative(k, n, f, &[v]);
                }
            }
            if let Some(c) = &d.curve {
                curve_ref(ctx, k, n, "curve", c);
            }
        }
        ForceElement::Stop(s) => {
            if exactly_one(
                ctx,
                k,
                n,
                &[
                    ("curve", s.curve.is_some()),
                    ("stiffness", s.stiffness.is_some()),
                ],
            ) && let Some(kv) = s.stiffness
            {
                ctx.non_negative(k, n, "stiffness", &[kv]);
            }
            if let Some(c) = &s.curve {
                curve_ref(ctx, k, n, "curve", c);
            }
            ctx.non_negative(k, n, "clearance", &[s.clearance]);
            ctx.non_negative(k, n, "damping", &[s.damping]);
            if let Some(l) = s.design_length
                && ctx.finite(k, n, "design_length", &[l])
                && l <= 0.0
            {
                ctx.push(
                    k,
                    n,
                    format!("design_length = {l} is not positive"),
                    "give design_length > 0 or omit it (default: marker distance)",
                );
            }
        }
    }
    if let Some(l) = p2p_length
        && !(l.is_finite() && l > 1e-9)
    {
        ctx.push(k, n, format!("the two markers coincide in the design position (distance {l:e} m), so the force direction of the point-to-point element is undefined"), "place marker_i and marker_j at different points");
    }
}

fn signal(ctx: &mut Ctx, k: &str, n: &str, s: &Signal) {
    match s {
        Signal::Constant { value } => {
            ctx.finite(k, n, "signal.value", &[*value]);
        }
        Signal::Step {
            time,
            before,
            after,
        } => {
            ctx.finite(k, n, "signal (step)", &[*time, *before, *after]);
        }
        Signal::Ramp {
            start_time,
            end_time,
            from,
            to,
        } => {
            if ctx.finite(k, n, "signal (ramp)", &[*start_time, *end_time, *from, *to])
                && end_time <= start_time
            {
                ctx.push(
                    k,
                    n,
                    format!("ramp end_time = {end_time} is not after start_time = {start_time}"),
                    "give end_time > start_time (use a step for a jump)",
                );
            }
        }
        Signal::Sine {
            amplitude,
            frequency_hz,
            phase_deg,
            offset,
            start_time,
        } => {
            if ctx.finite(
                k,
                n,
                "signal (sine)",
                &[*amplitude, *frequency_hz, *phase_deg, *offset, *start_time],
            ) && *frequency_hz < 0.0
            {
                ctx.push(
                    k,
                    n,
                    format!("sine frequency_hz = {frequency_hz} is negative"),
                    "give frequency_hz >= 0 (use phase_deg = 180 for a sign change)",
                );
            }
        }
        Signal::Table { t, value, .. } => {
            let ft = ctx.finite(k, n, "signal.t", t);
            ctx.finite(k, n, "signal.value", value);
            if t.len() != value.len() || t.is_empty() {
                ctx.push(
                    k,
                    n,
                    format!(
                        "table signal has {} times and {} values",
                        t.len(),
                        value.len()
                    ),
                    "give t and value with the same, non-zero number of entries",
                );
            }
            if ft && let Some(i) = (1..t.len()).find(|&i| t[i] <= t[i - 1]) {
                ctx.push(
                    k,
                    n,
                    format!(
                        "table signal times are not strictly increasing (t[{}] = {} <= t[{}] = {})",
                        i,
                        t[i],
                        i - 1,
                        t[i - 1]
                    ),
                    "sort the table by time and remove repeated times",
                );
            }
        }
        Signal::Runtime { default } => {
            ctx.finite(k, n, "signal.default", &[*default]);
        }
        Signal::Csv { file, .. } => {
            ctx.push(
                k,
                n,
                format!("csv signal '{file}' was not loaded"),
                "load the model with sprung_model::load so CSV files are read",
            );
        }
    }
}

/// An `[[elements]]` entry: name, kind and marker references (the kind checks its own marker
/// count and parameters when the model is compiled, against its registry entry).
fn open_element(ctx: &mut Ctx, e: &OpenElement) {
    let k = "element";
    let n = e.name.as_str();
    if e.kind.trim().is_empty() {
        ctx.push(
            k,
            n,
            "has an empty `type`",
            "name an element kind, e.g. type = \"maxwell\" (`sprung elements` lists them)",
        );
    }
    if e.mirror && !crate::builtin_kinds::is_builtin(&e.kind) {
        ctx.push(
            k,
            n,
            format!(
                "mirror = true: elements of type \"{}\" cannot be mirrored (only the built-in kinds {} can)",
                e.kind,
                crate::builtin_kinds::KINDS.join(", ")
            ),
            "remove `mirror` and write the mirrored element as an entry of its own",
        );
    }
    if e.markers.is_empty() {
        ctx.push(
            k,
            n,
            "has no markers",
            "list the markers the kind expects, e.g. markers = [\"a\", \"b\"]",
        );
    }
    for m in &e.markers {
        if ctx.model.marker(m).is_none() {
            ctx.push(
                k,
                n,
                format!("refers to unknown marker '{m}'"),
                ctx.unknown_hint("marker", m),
            );
        }
    }
    for (slot, input) in &e.inputs {
        if let Some((source, _)) = ctx.model.element_output_source(input) {
            if source == e.name {
                ctx.push(
                    k,
                    n,
                    format!("feeds its own input slot `{slot}` from its output '{input}'"),
                    "an element cannot read its own output; map the slot to an [[inputs]] signal or another element's output",
                );
            }
        } else if ctx.model.input(input).is_none() {
            ctx.push(
                k,
                n,
                format!(
                    "maps its input slot `{slot}` to '{input}', which is neither an input nor an element output"
                ),
                format!(
                    "{}, or write \"element.output\" with an [[elements]] name (`sprung elements` lists the outputs)",
                    ctx.unknown_hint("input", input)
                ),
            );
        }
    }
    for (p, v) in &e.parameters {
        let bad = match v {
            ParamValue::Number(x) => !x.is_finite(),
            ParamValue::List(xs) => xs.iter().any(|x| !x.is_finite()),
            ParamValue::Text(_) => false,
        };
        if bad {
            ctx.push(
                k,
                n,
                format!("parameter `{p}` is not finite"),
                "give a finite number",
            );
        }
    }
}

/// A `[[roads]]` entry: the fields its type needs are there and sensible, the others absent.
fn road(ctx: &mut Ctx, r: &Road) {
    let k = "road";
    let n = r.name.as_str();
    let t = r.kind;
    let tn = t.name();
    let obstacle = matches!(t, RoadType::Cleat | RoadType::Ramp | RoadType::Bump);
    // (field, given, used by this type)
    let fields: [(&str, bool, bool); 13] = [
        ("slope_x_deg", r.slope_x_deg.is_some(), t == RoadType::Plane),
        ("slope_y_deg", r.slope_y_deg.is_some(), t == RoadType::Plane),
        ("normal", r.normal.is_some(), t == RoadType::Plane),
        ("origin", r.origin.is_some(), t != RoadType::Plane),
        (
            "angle_deg",
            r.angle_deg.is_some(),
            obstacle || t == RoadType::Profile,
        ),
        ("distance", r.distance.is_some(), t == RoadType::Profile),
        ("elevation", r.elevation.is_some(), t == RoadType::Profile),
        ("file", r.file.is_some(), t == RoadType::Grid),
        ("spacing", r.spacing.is_some(), t == RoadType::Grid),
        ("height", r.height.is_some(), obstacle),
        ("length", r.length.is_some(), obstacle),
        ("edge_length", r.edge_length.is_some(), t == RoadType::Cleat),
        (
            "plateau_length",
            r.plateau_length.is_some(),
            t == RoadType::Ramp,
        ),
    ];
    for (f, given, used) in fields {
        if given && !used {
            ctx.push(
                k,
                n,
                format!("field `{f}` does not apply to a road of type \"{tn}\""),
                format!("remove `{f}` (docs/roads-and-contact.md lists the fields of each type)"),
            );
        }
    }
    let positive = |ctx: &mut Ctx, f: &str, v: Option<f64>| {
        if let Some(x) = v
            && !(x.is_finite() && x > 0.0)
        {
            ctx.push(
                k,
                n,
                format!("`{f}` = {x} is not positive"),
                format!("give `{f}` > 0"),
            );
        }
    };
    positive(ctx, "mu", Some(r.mu));
    for (i, z) in r.friction_zones.iter().enumerate() {
        if !(z.mu.is_finite() && z.mu > 0.0) {
            ctx.push(
                k,
                n,
                format!("friction zone #{}: mu = {} is not positive", i + 1, z.mu),
                "give mu > 0",
            );
        }
        let b = [z.x_min, z.x_max, z.y_min, z.y_max];
        if b.iter().flatten().any(|x| !x.is_finite()) {
            ctx.push(
                k,
                n,
                format!("friction zone #{}: a bound is not finite", i + 1),
                "leave a bound out for an open side instead of inf",
            );
        }
        for (lo, hi, a) in [(z.x_min, z.x_max, "x"), (z.y_min, z.y_max, "y")] {
            if let (Some(lo), Some(hi)) = (lo, hi)
                && lo >= hi
            {
                ctx.push(
                    k,
                    n,
                    format!(
                        "friction zone #{}: {a}_min = {lo} is not below {a}_max = {hi}",
                        i + 1
                    ),
                    format!("give {a}_min < {a}_max"),
                );
            }
        }
    }
    ctx.finite(k, n, "offset", &[r.offset]);
    if let Some(o) = r.origin {
        ctx.finite(k, n, "origin", &o);
    }
    if let Some(a) = r.angle_deg
        && ctx.finite(k, n, "angle_deg", &[a])
        && a.abs() >= 90.0
        && obstacle
    {
        ctx.push(
            k,
            n,
            format!("angle_deg = {a}: the crest line must cross the x axis (|angle| < 90)"),
            "give an angle between -90 and 90 degrees from the y axis",
        );
    }
    match t {
        RoadType::Plane => {
            let slopes = r.slope_x_deg.is_some() || r.slope_y_deg.is_some();
            if slopes && r.normal.is_some() {
                ctx.push(
                    k,
                    n,
                    "has both slope angles and `normal`",
                    "give either slope_x_deg / slope_y_deg or normal",
                );
            }
            for (f, v) in [
                ("slope_x_deg", r.slope_x_deg),
                ("slope_y_deg", r.slope_y_deg),
            ] {
                if let Some(v) = v
                    && ctx.finite(k, n, f, &[v])
                    && v.abs() >= 89.0
                {
                    ctx.push(
                        k,
                        n,
                        format!("`{f}` = {v} is too steep for a height field"),
                        "give a slope below 89 degrees",
                    );
                }
            }
            if let Some(nv) = r.normal
                && ctx.finite(k, n, "normal", &nv)
            {
                let len = (nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]).sqrt();
                if !(len > 0.0 && nv[2] > 0.02 * len) {
                    ctx.push(
                        k,
                        n,
                        format!("`normal` = {nv:?} does not point upwards"),
                        "give a normal with a positive z component (the plane's upper side)",
                    );
                }
            }
        }
        RoadType::Profile => match (&r.distance, &r.elevation) {
            (Some(d), Some(e)) => {
                if d.len() != e.len() || d.len() < 2 {
                    ctx.push(
                        k,
                        n,
                        format!(
                            "`distance` has {} values and `elevation` {}",
                            d.len(),
                            e.len()
                        ),
                        "give two tables of the same length, at least 2 points",
                    );
                } else if ctx.finite(k, n, "distance", d)
                    && ctx.finite(k, n, "elevation", e)
                    && let Some(i) = d.windows(2).position(|w| w[1] <= w[0])
                {
                    {
                        ctx.push(
                            k,
                            n,
                            format!(
                                "`distance` is not strictly increasing at index {} ({} after {})",
                                i + 1,
                                d[i + 1],
                                d[i]
                            ),
                            "sort the table by distance and remove duplicates",
                        );
                    }
                }
            }
            _ => ctx.push(
                k,
                n,
                "a profile needs `distance` and `elevation`",
                "add distance = [...] (m along the path) and elevation = [...] (m)",
            ),
        },
        RoadType::Grid => {
            if r.file.is_none() {
                ctx.push(
                    k,
                    n,
                    "a grid needs `file`",
                    "add file = \"heights.csv\" (heights, rows along y, columns along x; relative to the model file)",
                );
            }
            match r.spacing {
                Some(s) if s.iter().all(|x| x.is_finite() && *x > 0.0) => {}
                Some(s) => ctx.push(
                    k,
                    n,
                    format!("`spacing` = {s:?} must be positive"),
                    "give spacing = [dx, dy] > 0 in m",
                ),
                None => ctx.push(
                    k,
                    n,
                    "a grid needs `spacing`",
                    "add spacing = [dx, dy] (m between grid points)",
                ),
            }
        }
        RoadType::Cleat | RoadType::Ramp | RoadType::Bump => {
            match r.height {
                Some(h) if h.is_finite() && h != 0.0 => {}
                Some(h) => ctx.push(
                    k,
                    n,
                    format!("`height` = {h} must be finite and non-zero"),
                    "give the obstacle height in m",
                ),
                None => ctx.push(
                    k,
                    n,
                    format!("a {tn} needs `height`"),
                    "add height = ... (m)",
                ),
            }
            if r.length.is_none() {
                ctx.push(
                    k,
                    n,
                    format!("a {tn} needs `length`"),
                    "add length = ... (m, across the crest line)",
                );
            }
            positive(ctx, "length", r.length);
            positive(ctx, "plateau_length", r.plateau_length);
            if let Some(e) = r.edge_length {
                if !(e.is_finite() && e >= 0.0) {
                    ctx.push(
                        k,
                        n,
                        format!("`edge_length` = {e} is negative"),
                        "give edge_length >= 0",
                    );
                } else if let Some(l) = r.length
                    && 2.0 * e > l
                {
                    ctx.push(
                        k,
                        n,
                        format!("`edge_length` = {e} is more than half the cleat `length` = {l}"),
                        "give edge_length <= length / 2",
                    );
                }
            }
        }
    }
}

fn input(ctx: &mut Ctx, i: &Input) {
    let k = "input";
    let n = i.name.as_str();
    if i.kind == InputKind::Signal {
        // A named scalar read by `[[elements]]`: it acts on no marker.
        if !i.marker.is_empty() {
            ctx.push(
                k,
                n,
                format!("is a `signal` input but names marker '{}'", i.marker),
                "remove `marker` (a signal acts on no marker; elements read it through their \
                 `inputs` map), or use kind = \"force\" / \"torque\"",
            );
        }
        if i.direction.iter().any(|x| *x != 0.0) {
            ctx.push(
                k,
                n,
                "is a `signal` input but gives a `direction`",
                "remove `direction`: a signal is a scalar",
            );
        }
        signal(ctx, k, n, &i.signal);
        return;
    }
    if i.marker.is_empty() {
        ctx.push(
            k,
            n,
            format!("is a `{}` input without `marker`", i.kind.name()),
            "give the marker it acts at, e.g. marker = \"wheel_centre_L\"",
        );
    } else {
        match ctx.model.marker(&i.marker) {
            None => ctx.push(
                k,
                n,
                format!("refers to unknown marker '{}'", i.marker),
                ctx.unknown_hint("marker", &i.marker),
            ),
            Some(m) if ctx.model.is_ground(&m.body) => {
                let body = m.body.clone();
                ctx.push(
                    k,
                    n,
                    format!(
                        "acts at marker '{}' on the ground '{body}', which cannot move",
                        i.marker
                    ),
                    "apply the input at a marker on a moving body",
                )
            }
            Some(_) => {}
        }
    }
    if ctx.finite(k, n, "direction", &i.direction) && i.direction.iter().all(|x| *x == 0.0) {
        ctx.push(
            k,
            n,
            "direction is the zero vector",
            "give a non-zero direction, e.g. [0, 0, 1]",
        );
    }
    signal(ctx, k, n, &i.signal);
}

fn output(ctx: &mut Ctx, o: &Output) {
    let k = "output";
    let n = o.name.as_str();
    let q = o.quantity;
    let qn = serde_json::to_value(q)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    if !exactly_one(
        ctx,
        k,
        n,
        &[
            ("marker", o.marker.is_some()),
            ("body", o.body.is_some()),
            ("element", o.element.is_some()),
        ],
    ) {
        return;
    }
    let mut scalar = matches!(
        q,
        Quantity::Camber | Quantity::Toe | Quantity::Length | Quantity::LengthRate
    );
    if let Some(m) = &o.marker
        && ctx.model.marker(m).is_none()
    {
        ctx.push(
            k,
            n,
            format!("refers to unknown marker '{m}'"),
            ctx.unknown_hint("marker", m),
        );
    }
    if let Some(b) = &o.body
        && ctx.model.body(b).is_none()
    {
        let hint = if ctx.model.is_ground(b) {
            "the ground does not move; use a moving body".to_string()
        } else {
            ctx.unknown_hint("body", b)
        };
        ctx.push(k, n, format!("refers to unknown body '{b}'"), hint);
    }
    if q.is_kinematic() && o.element.is_some() {
        ctx.push(k, n, format!("quantity \"{qn}\" applies to a marker or body, not to an element"), "use marker = \"...\" or body = \"...\", or an element quantity (force, torque, deflection, rot_deflection, length, length_rate)");
    }
    if !q.is_kinematic() && o.element.is_none() {
        ctx.push(k, n, format!("quantity \"{qn}\" applies to a force element, not to a marker or body"), "use element = \"...\", or a marker/body quantity (position, displacement, velocity, angular_velocity, orientation, camber, toe)");
    }
    let open = o
        .element
        .as_deref()
        .and_then(|en| ctx.model.elements.iter().find(|e| e.name == en))
        // An entry of a built-in kind left here could not be converted; that is reported.
        .filter(|e| !crate::builtin_kinds::is_builtin(&e.kind));
    if (q == Quantity::ElementOutput) != o.output.is_some() {
        ctx.push(
            k,
            n,
            "`output` names an element output and goes together with quantity \"element_output\"",
            "use quantity = \"element_output\" with output = \"...\" (the kind's outputs: `sprung elements`)",
        );
    }
    if let Some(e) = open {
        scalar = true;
        if q != Quantity::ElementOutput {
            ctx.push(
                k,
                n,
                format!("'{}' is an [[elements]] element of kind '{}': its channels are read with quantity \"element_output\"", e.name, e.kind),
                "use quantity = \"element_output\" and output = \"...\" (the kind's outputs: `sprung elements`)",
            );
        }
    } else if q == Quantity::ElementOutput {
        if let Some(fe) = o
            .element
            .as_deref()
            .and_then(|en| ctx.model.force_element(en))
        {
            ctx.push(
                k,
                n,
                format!(
                    "'{}' is a {} (a built-in kind, whichever syntax writes it): its channels are the force-element quantities",
                    fe.name(),
                    fe.type_name()
                ),
                if fe.is_point_to_point() {
                    "use quantity = \"force\", \"deflection\", \"length\" or \"length_rate\" without `output`"
                } else {
                    "use quantity = \"force\", \"torque\", \"deflection\" or \"rot_deflection\" without `output`"
                },
            );
        } else if let Some(en) = &o.element {
            ctx.push(
                k,
                n,
                format!(
                    "quantity \"element_output\" needs an [[elements]] element, '{en}' is not one"
                ),
                ctx.unknown_hint("force element", en),
            );
        }
    } else if let Some(en) = &o.element {
        let unconverted = ctx.model.elements.iter().any(|e| e.name == *en);
        match ctx.model.force_element(en) {
            // An `[[elements]]` entry of a built-in kind that could not be converted: reported.
            None if unconverted => {}
            None => ctx.push(
                k,
                n,
                format!("refers to unknown force element '{en}'"),
                ctx.unknown_hint("force element", en),
            ),
            Some(e) => {
                let p2p = e.is_point_to_point();
                let global_force = q == Quantity::Force && o.frame == Some(OutputFrame::Global);
                if p2p && matches!(q, Quantity::Force | Quantity::Deflection) && !global_force {
                    scalar = true;
                }
                let bad = match q {
                    Quantity::Torque | Quantity::RotDeflection => p2p,
                    Quantity::Length | Quantity::LengthRate => !p2p,
                    _ => false,
                };
                if bad {
                    ctx.push(k, n, format!("quantity \"{qn}\" is not applicable to the {} '{en}'", e.type_name()), if p2p { "torque/rot_deflection exist only for bushings" } else { "length/length_rate exist only for point-to-point elements (spring, damper, stop)" });
                }
            }
        }
    }
    if scalar && o.component.is_some() {
        ctx.push(
            k,
            n,
            format!("`component` is given but quantity \"{qn}\" is a scalar here"),
            "remove `component`",
        );
    }
    let element_load = o.element.is_some() && matches!(q, Quantity::Force | Quantity::Torque);
    let frame_ok = element_load
        || matches!(
            q,
            Quantity::Position
                | Quantity::Displacement
                | Quantity::Velocity
                | Quantity::AngularVelocity
                | Quantity::Orientation
        );
    if o.frame.is_some() && !frame_ok {
        ctx.push(k, n, format!("`frame` is not applicable to quantity \"{qn}\" (deflections are in marker-J axes; angles are scalars)"), "remove `frame`");
    }
    if o.on.is_some() && !element_load {
        ctx.push(
            k,
            n,
            format!("`on` is only applicable to element force/torque outputs, not to \"{qn}\""),
            "remove `on`",
        );
    }
}
