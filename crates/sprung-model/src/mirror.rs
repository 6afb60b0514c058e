//! Mirror expansion (`mirror = true`), model format section "Mirroring" and
//! `reference-suspensions.md` section 1.7: the copy is mirrored in the global x-z plane with
//! S = diag(1, -1, 1).
//!
//! * names: every `_L` that ends the name or precedes a `.` becomes `_R`;
//! * references to bodies, markers, frames and elements get the same substitution when the
//!   referenced item is itself mirrored, otherwise they stay (shared items, the ground); curve
//!   names are never renamed;
//! * points and velocities `p -> S p`; body angular velocity and torques `w -> -S w`;
//!   inertia `I -> S I S`; axes `A -> S A S`; Euler angles via `S R S`, which for
//!   R = Rz(a) Ry(b) Rx(c) is exactly Rz(-a) Ry(b) Rx(-c); force input directions `d -> S d`,
//!   torque input directions `d -> -S d`; bushing preload `S p` and rotational preload `-S p`
//!   (local components in the mirrored marker-J axes S A S).
//! * Addition to the specification: a mirrored marker that refers to a frame which is *not*
//!   mirrored (a shared frame such as `F03`) gets the inline axes `S A S` (`global_axes`) instead
//!   of the frame reference, because keeping the reference would leave the copy un-mirrored.

use std::collections::{HashMap, HashSet};

use crate::error::Problem;
use crate::rot::{self, MIRROR_S};
use crate::types::{Axes, ForceElement, Inertia, InputKind, Model};

/// Name of the mirrored copy: every `_L` at the end or before a `.` replaced by `_R`; `None` if
/// the name has no such `_L`.
pub fn mirrored_name(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut found = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'_'
            && i + 1 < bytes.len()
            && bytes[i + 1] == b'L'
            && (i + 2 == bytes.len() || bytes[i + 2] == b'.')
        {
            out.push_str("_R");
            found = true;
            i += 2;
        } else {
            let ch = name[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(ch);
            i += ch.len_utf8().max(1);
        }
    }
    found.then_some(out)
}

/// Result of the expansion with bookkeeping used for error locations.
pub(crate) struct Expansion {
    pub model: Model,
    /// (kind, mirrored name) -> original name.
    pub origins: HashMap<(&'static str, String), String>,
    pub problems: Vec<Problem>,
}

fn mirror_inertia(i: &Inertia) -> Inertia {
    Inertia {
        tensor: i.tensor.map(|t| rot::mirror_matrix(&t)),
        principal: i.principal,
        euler_zyx_deg: i.euler_zyx_deg.map(|e| rot::mirror_euler(&e)),
    }
}

fn mirror_axes(a: &Axes) -> Axes {
    Axes::from_matrix(&rot::mirror_matrix(&a.matrix()))
}

pub(crate) fn expand(src: &Model) -> Expansion {
    expand_with(src, &HashSet::new())
}

/// [`expand`] where the names in `paired` (left-side items of included subsystems whose `_R`
/// twins already exist, `crate::subsystem`) count as mirrored items for the renaming of
/// references: a mirrored item of the including file that refers to `front.wheel_L` gets
/// `front.wheel_R` in its copy.
pub(crate) fn expand_with(src: &Model, paired: &HashSet<String>) -> Expansion {
    let mut problems = Vec::new();
    let mut origins = HashMap::new();
    let set = |names: Vec<(&str, bool)>| -> HashSet<String> {
        names
            .into_iter()
            .filter(|(n, m)| *m || paired.contains(*n))
            .map(|(n, _)| n.to_string())
            .collect()
    };
    let m_bodies = set(src
        .bodies
        .iter()
        .map(|b| (b.name.as_str(), b.mirror))
        .collect());
    let m_markers = set(src
        .markers
        .iter()
        .map(|b| (b.name.as_str(), b.mirror))
        .collect());
    let m_frames = set(src
        .frames
        .iter()
        .map(|b| (b.name.as_str(), b.mirror))
        .collect());
    let m_elements = set(src
        .force_elements
        .iter()
        .map(|e| (e.name(), e.mirror()))
        .collect());
    let rename = |set: &HashSet<String>, n: &str| -> String {
        if set.contains(n) {
            mirrored_name(n).unwrap_or_else(|| n.to_string())
        } else {
            n.to_string()
        }
    };

    let mut out = src.clone();
    // Returns the mirrored name or records a problem.
    let mut new_name = |kind: &'static str,
                        label: &'static str,
                        name: &str,
                        problems: &mut Vec<Problem>| {
        match mirrored_name(name) {
            Some(n) => {
                origins.insert((kind, n.clone()), name.to_string());
                Some(n)
            }
            None => {
                problems.push(Problem::new(
                    label,
                    name,
                    "has mirror = true but its name has no `_L` suffix (at the end or before a `.`) to turn into `_R`",
                    "rename it with an `_L` suffix, e.g. `wheel_L` or `bearing_L.I`, or remove `mirror = true`",
                ));
                None
            }
        }
    };

    for f in &mut out.frames {
        f.mirror = false;
    }
    for f in src.frames.iter().filter(|f| f.mirror) {
        if let Some(name) = new_name("frames", "frame", &f.name, &mut problems) {
            let mut c = f.clone();
            c.name = name;
            c.mirror = false;
            c.axes = f.axes.as_ref().map(mirror_axes);
            c.euler_zyx_deg = f.euler_zyx_deg.map(|e| rot::mirror_euler(&e));
            out.frames.push(c);
        }
    }

    for b in &mut out.bodies {
        b.mirror = false;
    }
    for b in src.bodies.iter().filter(|b| b.mirror) {
        if let Some(name) = new_name("bodies", "body", &b.name, &mut problems) {
            let mut c = b.clone();
            c.name = name;
            c.mirror = false;
            c.position = rot::mirror_vec(&b.position);
            c.euler_zyx_deg = b.euler_zyx_deg.map(|e| rot::mirror_euler(&e));
            c.velocity = rot::mirror_vec(&b.velocity);
            c.angular_velocity = rot::mirror_pseudo(&b.angular_velocity);
            c.inertia = mirror_inertia(&b.inertia);
            if let Some(j) = &mut c.joint {
                // A revolute axis is an axial vector (a rotation about it mirrors to one about
                // −S a), a prismatic axis a polar one (S a); the point is a point.
                j.axis = j.axis.map(|a| match j.kind {
                    crate::types::JointKind::Revolute => rot::mirror_pseudo(&a),
                    _ => rot::mirror_vec(&a),
                });
                j.point = j.point.map(|p| rot::mirror_vec(&p));
                j.parent = rename(&m_bodies, &j.parent);
                if j.kind == crate::types::JointKind::Tabulated {
                    // The mirror image of the table (positions as points, rotation vectors as
                    // axial vectors) as a function of the mirrored coordinates: the body's own
                    // and those of mirrored bodies. The coordinate of a body that is not
                    // mirrored has no mirror image (a rack moving +y mirrors to one moving −y).
                    j.entry = Some(j.entry.clone().unwrap_or_else(|| b.name.clone()));
                    j.kin_table = j
                        .kin_table
                        .as_ref()
                        .map(|t| std::sync::Arc::new(t.mirrored()));
                    for c in &mut j.coordinates {
                        if c == crate::types::SELF_COORDINATE {
                            continue;
                        }
                        if !m_bodies.contains(c.as_str()) {
                            problems.push(Problem::new(
                                "body",
                                &b.name,
                                format!("mirror = true on a tabulated joint whose coordinate '{c}' belongs to a body that is not mirrored (its mirror image is not that body's coordinate)"),
                                "give the mirrored side its own body with `joint.table` for that side instead of `mirror = true`",
                            ));
                        }
                        *c = rename(&m_bodies, c);
                    }
                }
            }
            out.bodies.push(c);
        }
    }

    for m in &mut out.markers {
        m.mirror = false;
    }
    for m in src.markers.iter().filter(|m| m.mirror) {
        if let Some(name) = new_name("markers", "marker", &m.name, &mut problems) {
            let mut c = m.clone();
            c.name = name;
            c.mirror = false;
            c.body = rename(&m_bodies, &m.body);
            c.global_position = m.global_position.map(|p| rot::mirror_vec(&p));
            c.position = m.position.map(|p| rot::mirror_vec(&p));
            c.global_axes = m.global_axes.as_ref().map(mirror_axes);
            c.euler_zyx_deg = m.euler_zyx_deg.map(|e| rot::mirror_euler(&e));
            if let Some(fname) = &m.frame {
                if m_frames.contains(fname) {
                    c.frame = Some(rename(&m_frames, fname));
                } else if let Some(frame) = src.frames.iter().find(|f| &f.name == fname) {
                    // Shared (non-mirrored) frame: inline its mirrored axes S A S.
                    let a = match (&frame.axes, &frame.euler_zyx_deg) {
                        (Some(ax), _) => Some(ax.matrix()),
                        (None, Some(e)) => Some(rot::euler_zyx_deg(e)),
                        _ => None,
                    };
                    if let Some(a) = a
                        && c.global_axes.is_none()
                        && c.euler_zyx_deg.is_none()
                    {
                        c.frame = None;
                        c.global_axes = Some(Axes::from_matrix(&rot::mirror_matrix(&a)));
                    }
                }
                // Unknown frames stay as they are and are reported by validation.
            }
            out.markers.push(c);
        }
    }

    for e in &mut out.force_elements {
        set_mirror_false(e);
    }
    for e in src.force_elements.iter().filter(|e| e.mirror()) {
        if let Some(name) = new_name("force_elements", "force element", e.name(), &mut problems) {
            let mut c = e.clone();
            set_mirror_false(&mut c);
            let mi = rename(&m_markers, e.marker_i());
            let mj = rename(&m_markers, e.marker_j());
            match &mut c {
                ForceElement::Bushing(b) => {
                    b.name = name;
                    b.marker_i = mi;
                    b.marker_j = mj;
                    b.preload = rot::mul_vec(&MIRROR_S, &b.preload);
                    b.rot_preload = rot::mirror_pseudo(&b.rot_preload);
                }
                ForceElement::Spring(s) => {
                    s.name = name;
                    s.marker_i = mi;
                    s.marker_j = mj;
                }
                ForceElement::Damper(s) => {
                    s.name = name;
                    s.marker_i = mi;
                    s.marker_j = mj;
                }
                ForceElement::Stop(s) => {
                    s.name = name;
                    s.marker_i = mi;
                    s.marker_j = mj;
                }
            }
            out.force_elements.push(c);
        }
    }

    for i in &mut out.inputs {
        i.mirror = false;
    }
    for i in src.inputs.iter().filter(|i| i.mirror) {
        if let Some(name) = new_name("inputs", "input", &i.name, &mut problems) {
            let mut c = i.clone();
            c.name = name;
            c.mirror = false;
            c.marker = rename(&m_markers, &i.marker);
            c.direction = match i.kind {
                InputKind::Force => rot::mirror_vec(&i.direction),
                InputKind::Torque => rot::mirror_pseudo(&i.direction),
                InputKind::Signal => i.direction,
            };
            out.inputs.push(c);
        }
    }

    for o in &mut out.outputs {
        o.mirror = false;
    }
    for o in src.outputs.iter().filter(|o| o.mirror) {
        if let Some(name) = new_name("outputs", "output", &o.name, &mut problems) {
            let mut c = o.clone();
            c.name = name;
            c.mirror = false;
            c.marker = o.marker.as_ref().map(|n| rename(&m_markers, n));
            c.body = o.body.as_ref().map(|n| rename(&m_bodies, n));
            c.element = o.element.as_ref().map(|n| rename(&m_elements, n));
            out.outputs.push(c);
        }
    }

    Expansion {
        model: out,
        origins,
        problems,
    }
}

fn set_mirror_false(e: &mut ForceElement) {
    match e {
        ForceElement::Bushing(b) => b.mirror = false,
        ForceElement::Spring(b) => b.mirror = false,
        ForceElement::Damper(b) => b.mirror = false,
        ForceElement::Stop(b) => b.mirror = false,
    }
}

#[cfg(test)]
mod tests {
    use super::mirrored_name;

    #[test]
    fn names() {
        assert_eq!(mirrored_name("wheel_L").as_deref(), Some("wheel_R"));
        assert_eq!(
            mirrored_name("wheel_bearing_L.I").as_deref(),
            Some("wheel_bearing_R.I")
        );
        assert_eq!(mirrored_name("a_L.b_L").as_deref(), Some("a_R.b_R"));
        assert_eq!(mirrored_name("_Lx"), None);
        assert_eq!(mirrored_name("wheel"), None);
        assert_eq!(mirrored_name("stab_Lever"), None);
        assert_eq!(mirrored_name("räder_L").as_deref(), Some("räder_R"));
    }
}
