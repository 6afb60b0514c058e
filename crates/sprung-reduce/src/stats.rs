//! Model statistics in the form of document 004, Table 1 ("MKS Systemstatistik des Referenz- und
//! des reduzierten Modells"), for the full and the reduced model.
//!
//! What maps to what in an engine of rigid bodies coupled by force elements only: every body
//! hangs on a 6-DOF joint, so the *joint states* n_zg are the 6 velocity coordinates per body
//! (document 004 counts the joints' degrees of freedom); the *first-order states* n_x are what
//! the integrator carries: 7 position coordinates per body (position and unit quaternion), 6
//! velocity coordinates per body, and the elements' differential states; *constraints* are
//! always 0 (no ideal joints, no DAE). A macro joint adds no state: its link poses are
//! algebraic variables solved inside the element (6 coordinates per link, stored as position
//! and rotation matrix, 12 numbers, next to the warm start's predictor), counted separately.
//! A body on an ideal or tabulated joint (docs/joints.md) counts its joint coordinate (2
//! first-order states z, ż; 1 joint state) instead of 13 and 6, a follower none (the
//! integrator's vector keeps 13 slots per body; these are the independent ones).

use sprung_mbs::CompiledModel;

/// The numbers of document 004, Table 1, plus what the macro joints hold inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Statistics {
    /// First-order states the integrator carries: 7 + 6 per body + element states.
    pub first_order_states: usize,
    /// Joint states: 6 per free body (its 6-DOF joint) plus one per ideal or tabulated joint coordinate.
    pub joint_states: usize,
    /// Constraints (always 0: force elements only).
    pub constraints: usize,
    /// Bodies (without the ground).
    pub bodies: usize,
    /// Markers of the model.
    pub markers: usize,
    /// Force elements (built-in and open kinds).
    pub force_elements: usize,
    /// Differential states of elements.
    pub element_states: usize,
    /// Links inside macro joints (massless, solved locally).
    pub macro_links: usize,
    /// Link coordinates solved inside macro joints (6 per link).
    pub macro_link_coordinates: usize,
    /// Macro joints.
    pub macro_joints: usize,
    /// Force elements inside macro joints.
    pub macro_elements: usize,
    /// Markers inside macro joints.
    pub macro_markers: usize,
    /// Coordinates of ideal and tabulated joints (docs/joints.md; one per jointed body except
    /// followers).
    pub joint_coordinates: usize,
    /// Followers of tabulated joints (bodies without a coordinate of their own).
    pub followers: usize,
}

impl Statistics {
    /// The statistics of a compiled model and its description (for the macro joints' contents).
    pub fn of(description: &sprung_model::Model, c: &CompiledModel) -> Self {
        let n_states = c.n_states();
        // Ideal and tabulated joints (docs/joints.md): a jointed body has one coordinate (z, ż:
        // two first-order states) or none (a follower) instead of 13 and 6.
        let jointed = c.joints.defs.iter().flatten().count();
        let coords = c.joints.defs.iter().flatten().filter(|d| d.own).count();
        let free = c.bodies.len() - jointed;
        let mut s = Statistics {
            first_order_states: 13 * free + 2 * coords + n_states,
            joint_states: 6 * free + coords,
            joint_coordinates: coords,
            followers: jointed - coords,
            constraints: 0,
            bodies: c.bodies.len(),
            markers: c.markers.len(),
            force_elements: c.elements.len() + c.open_elements.len(),
            element_states: n_states,
            ..Default::default()
        };
        for e in &description.elements {
            if e.kind != crate::macro_joint::INFO.name {
                continue;
            }
            s.macro_joints += 1;
            let Some(sprung_model::ParamValue::Text(text)) = e.parameters.get("links") else {
                continue;
            };
            let Ok(sub) = sprung_model::from_toml_str(text, "macro_joint links") else {
                continue;
            };
            let boundary = e.markers.len();
            let links = sub.bodies.len().saturating_sub(boundary);
            s.macro_links += links;
            s.macro_link_coordinates += 6 * links;
            s.macro_elements += sub.force_elements.len();
            s.macro_markers += sub.markers.len();
        }
        s
    }

    /// Rows (label, value) in the order of document 004, Table 1, then the macro-joint rows.
    pub fn rows(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("first-order states n_x", self.first_order_states),
            ("joint states n_zg (6 per free body)", self.joint_states),
            ("constraints", self.constraints),
            ("bodies", self.bodies),
            ("markers", self.markers),
            ("force elements", self.force_elements),
            ("element states", self.element_states),
            ("macro joints", self.macro_joints),
            ("links inside macro joints", self.macro_links),
            (
                "link coordinates solved locally",
                self.macro_link_coordinates,
            ),
            ("force elements inside macro joints", self.macro_elements),
            ("markers inside macro joints", self.macro_markers),
            ("ideal/tabulated joint coordinates", self.joint_coordinates),
            ("followers (no own coordinate)", self.followers),
        ]
    }

    /// A two-column text table (full, reduced) like document 004, Table 1.
    pub fn table(full: &Self, reduced: &Self, reduced_label: &str) -> String {
        Self::table_of(&[("full", full), (reduced_label, reduced)])
    }

    /// A text table with one column per labelled statistics (e.g. the full model and several
    /// reductions of it), rows as in [`Statistics::rows`].
    pub fn table_of(columns: &[(&str, &Self)]) -> String {
        let mut s = format!("{:<38}", "");
        for (label, _) in columns {
            s.push_str(&format!(" {label:>16}"));
        }
        s.push('\n');
        let rows: Vec<_> = columns.iter().map(|(_, c)| c.rows()).collect();
        for (i, (label, _)) in rows
            .first()
            .map(|r| r.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            s.push_str(&format!("{label:<38}"));
            for r in &rows {
                s.push_str(&format!(" {:>16}", r[i].1));
            }
            s.push('\n');
        }
        s
    }
}
