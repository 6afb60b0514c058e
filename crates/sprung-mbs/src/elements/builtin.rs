//! The built-in kinds — bushing, spring, damper, stop — as kinds of the one `[[elements]]`
//! syntax: their [`KindInfo`] (what `sprung elements` prints and what an entry may set) and
//! their factory.
//!
//! The laws and the descriptions of markers, parameters and outputs are those of
//! [`crate::bushing::KIND`] and [`crate::p2p::KINDS`] (the laws written once for the one-by-one
//! path and the SIMD packs, `docs/elements.md`); the `[[elements]]` form adds the parameters
//! that the `[[force_elements]]` tables write as nested tables or as alternatives (a bushing's
//! per-axis curves, the `curve` of a point-to-point element), so the kind information lists
//! every parameter an entry may set.
//!
//! The factory of a built-in kind is [`sprung_model::builtin_kinds::to_force_element`]: an
//! entry becomes the element description its `[[force_elements]]` table gives, and the compiler
//! turns that into the kind's SIMD array entry in one place (`crate::compile`). It runs in the
//! model crate because mirroring, subsystem composition, `[[parameters]]` and the macro-joint
//! reduction act on descriptions before anything is compiled: every consumer sees one
//! representation, whichever syntax wrote the element.

use crate::elements::registry::{KindInfo, ParamInfo};

/// `base` followed by `extra`, as an array of length `N` (checked at compile time).
const fn concat<const N: usize>(base: &[ParamInfo], extra: &[ParamInfo]) -> [ParamInfo; N] {
    assert!(base.len() + extra.len() == N);
    let mut out = [base[0]; N];
    let mut i = 0;
    while i < base.len() {
        out[i] = base[i];
        i += 1;
    }
    let mut j = 0;
    while j < extra.len() {
        out[base.len() + j] = extra[j];
        j += 1;
    }
    out
}

const BUSHING_CURVES: [ParamInfo; 12] = [
    ParamInfo::text(
        "stiffness_curve_x",
        "N(m)",
        "curve name: force of the local x deflection, replaces k d (table: stiffness_curves.x)",
    ),
    ParamInfo::text(
        "stiffness_curve_y",
        "N(m)",
        "curve name: force of the local y deflection",
    ),
    ParamInfo::text(
        "stiffness_curve_z",
        "N(m)",
        "curve name: force of the local z deflection",
    ),
    ParamInfo::text(
        "rot_stiffness_curve_x",
        "Nm(rad)",
        "curve name: torque of the local x rotation, replaces k_r theta (table: rot_stiffness_curves.x)",
    ),
    ParamInfo::text(
        "rot_stiffness_curve_y",
        "Nm(rad)",
        "curve name: torque of the local y rotation",
    ),
    ParamInfo::text(
        "rot_stiffness_curve_z",
        "Nm(rad)",
        "curve name: torque of the local z rotation",
    ),
    ParamInfo::text(
        "damping_curve_x",
        "N(m/s)",
        "curve name: force of the local x deflection rate, replaces c d' (table: damping_curves.x)",
    ),
    ParamInfo::text(
        "damping_curve_y",
        "N(m/s)",
        "curve name: force of the local y deflection rate",
    ),
    ParamInfo::text(
        "damping_curve_z",
        "N(m/s)",
        "curve name: force of the local z deflection rate",
    ),
    ParamInfo::text(
        "rot_damping_curve_x",
        "Nm(rad/s)",
        "curve name: torque of the local x rotation rate, replaces c_r theta' (table: rot_damping_curves.x)",
    ),
    ParamInfo::text(
        "rot_damping_curve_y",
        "Nm(rad/s)",
        "curve name: torque of the local y rotation rate",
    ),
    ParamInfo::text(
        "rot_damping_curve_z",
        "Nm(rad/s)",
        "curve name: torque of the local z rotation rate",
    ),
];

const BUSHING_PARAMETERS: [ParamInfo; 19] =
    concat(crate::bushing::KIND.parameters, &BUSHING_CURVES);
const SPRING_PARAMETERS: [ParamInfo; 5] = concat(
    crate::p2p::KINDS[0].parameters,
    &[ParamInfo::text(
        "curve",
        "N(m)",
        "curve name: force of L - L_free, instead of stiffness",
    )],
);
const DAMPER_PARAMETERS: [ParamInfo; 4] = concat(
    crate::p2p::KINDS[1].parameters,
    &[ParamInfo::text(
        "curve",
        "N(m/s)",
        "curve name: force of L', instead of damping",
    )],
);
const STOP_PARAMETERS: [ParamInfo; 6] = concat(
    crate::p2p::KINDS[2].parameters,
    &[ParamInfo::text(
        "curve",
        "N(m)",
        "curve name: force magnitude of the penetration, instead of stiffness",
    )],
);

/// The built-in kinds with every parameter an `[[elements]]` entry may set, in the order
/// `sprung elements` lists them.
pub const KINDS: [KindInfo; 4] = [
    KindInfo {
        parameters: &BUSHING_PARAMETERS,
        ..crate::bushing::KIND
    },
    KindInfo {
        parameters: &SPRING_PARAMETERS,
        ..crate::p2p::KINDS[0]
    },
    KindInfo {
        parameters: &DAMPER_PARAMETERS,
        ..crate::p2p::KINDS[1]
    },
    KindInfo {
        parameters: &STOP_PARAMETERS,
        ..crate::p2p::KINDS[2]
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_information_lists_exactly_what_an_entry_may_set() {
        // The model crate converts entries (and rejects unknown parameters) by its own list of
        // names and shapes; the kind information printed by `sprung elements` must not drift.
        for (k, name) in KINDS.iter().zip(sprung_model::builtin_kinds::KINDS) {
            assert_eq!(k.name, name);
            let mut info: Vec<&str> = k.parameters.iter().map(|p| p.name).collect();
            let mut model: Vec<&str> = sprung_model::builtin_kinds::parameters(name)
                .unwrap()
                .iter()
                .map(|p| p.name)
                .collect();
            info.sort_unstable();
            model.sort_unstable();
            assert_eq!(info, model, "{name}");
            // Required in the model crate = no default in the kind information, except the
            // point-to-point rates that have a curve as alternative.
            for p in sprung_model::builtin_kinds::parameters(name).unwrap() {
                let i = k.parameters.iter().find(|q| q.name == p.name).unwrap();
                if p.required.is_some() {
                    assert_eq!(i.default, None, "{name}.{}", p.name);
                }
            }
            assert_eq!(k.markers.len(), 2);
        }
    }
}
