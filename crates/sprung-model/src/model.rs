//! Lookups and resolved geometry helpers on a loaded (expanded, validated) [`Model`], so the
//! mechanics compiler does not repeat the format's resolution rules.
//!
//! Conventions (`reference-suspensions.md` section 1): body frame origin = CoM; an orientation
//! matrix has the frame's axes (in the parent frame) as columns; Euler angles z-y'-x'',
//! R = Rz(a) Ry(b) Rx(c). The helpers assume validated references; a missing body reference is
//! treated like the ground (identity orientation, origin at zero) instead of panicking.

use crate::error::ModelError;
use crate::mirror;
use crate::rot::{self, Mat3, Vec3};
use crate::types::{Body, Curve, ForceElement, Frame, Input, Marker, Model, Output};
use crate::validate;

impl Body {
    /// Inertia tensor about the CoM in body axes, from either form
    /// (`principal` + `euler_zyx_deg`: I = P diag(I1, I2, I3) P^T with P = R(euler)).
    pub fn inertia_tensor(&self) -> Mat3 {
        if let Some(t) = self.inertia.tensor {
            return t;
        }
        let p = self.inertia.principal.unwrap_or([0.0; 3]);
        let r = rot::euler_zyx_deg(&self.inertia.euler_zyx_deg.unwrap_or([0.0; 3]));
        let d = [[p[0], 0.0, 0.0], [0.0, p[1], 0.0], [0.0, 0.0, p[2]]];
        rot::mul(&r, &rot::mul(&d, &rot::transpose(&r)))
    }

    /// Initial orientation matrix (columns = body axes in global coordinates).
    pub fn rotation(&self) -> Mat3 {
        match &self.euler_zyx_deg {
            Some(e) => rot::euler_zyx_deg(e),
            None => rot::IDENTITY,
        }
    }
}

impl Frame {
    /// Orientation matrix (columns = frame axes in global coordinates).
    pub fn rotation(&self) -> Mat3 {
        match (&self.axes, &self.euler_zyx_deg) {
            (Some(a), _) => a.matrix(),
            (None, Some(e)) => rot::euler_zyx_deg(e),
            _ => rot::IDENTITY,
        }
    }
}

impl Model {
    /// Name of the fixed ground body.
    pub fn ground_name(&self) -> &str {
        &self.model.ground
    }
    /// True if `name` is the ground.
    pub fn is_ground(&self, name: &str) -> bool {
        name == self.model.ground
    }
    /// Body by name (`None` for the ground or unknown names).
    pub fn body(&self, name: &str) -> Option<&Body> {
        self.bodies.iter().find(|b| b.name == name)
    }
    /// Index of a body in [`Model::bodies`] (`None` for the ground or unknown names).
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }
    /// Marker by name.
    pub fn marker(&self, name: &str) -> Option<&Marker> {
        self.markers.iter().find(|m| m.name == name)
    }
    /// Index of a marker in [`Model::markers`].
    pub fn marker_index(&self, name: &str) -> Option<usize> {
        self.markers.iter().position(|m| m.name == name)
    }
    /// Frame by name.
    pub fn frame(&self, name: &str) -> Option<&Frame> {
        self.frames.iter().find(|f| f.name == name)
    }
    /// Curve by name.
    pub fn curve(&self, name: &str) -> Option<&Curve> {
        self.curves.iter().find(|c| c.name == name)
    }
    /// Index of a curve in [`Model::curves`].
    pub fn curve_index(&self, name: &str) -> Option<usize> {
        self.curves.iter().position(|c| c.name == name)
    }
    /// Force element by name.
    pub fn force_element(&self, name: &str) -> Option<&ForceElement> {
        self.force_elements.iter().find(|e| e.name() == name)
    }
    /// Index of a force element in [`Model::force_elements`].
    pub fn force_element_index(&self, name: &str) -> Option<usize> {
        self.force_elements.iter().position(|e| e.name() == name)
    }
    /// Input by name.
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|i| i.name == name)
    }
    /// The element output an input slot's `source` names when it is not a model input:
    /// `"element.output"` with `element` an `[[elements]]` entry (split at the last `.`), as
    /// `(element, output)`. Model inputs take precedence (their names may contain dots).
    pub fn element_output_source<'a>(&self, source: &'a str) -> Option<(&'a str, &'a str)> {
        if self.input(source).is_some() {
            return None;
        }
        let (element, output) = source.rsplit_once('.')?;
        self.elements
            .iter()
            .any(|e| e.name == element)
            .then_some((element, output))
    }
    /// Output by name.
    pub fn output(&self, name: &str) -> Option<&Output> {
        self.outputs.iter().find(|o| o.name == name)
    }

    /// Initial orientation of a body or the ground (identity for the ground / unknown names).
    pub fn body_rotation(&self, body: &str) -> Mat3 {
        self.body(body).map(Body::rotation).unwrap_or(rot::IDENTITY)
    }
    /// Initial CoM position of a body (zero for the ground / unknown names).
    pub fn body_position(&self, body: &str) -> Vec3 {
        self.body(body).map(|b| b.position).unwrap_or([0.0; 3])
    }

    /// Marker axes in global coordinates in the design position: from `frame`, `global_axes`,
    /// `euler_zyx_deg` relative to the body's initial orientation, or (default) the body axes.
    pub fn marker_axes_global(&self, marker: &Marker) -> Mat3 {
        if let Some(f) = marker.frame.as_deref().and_then(|f| self.frame(f)) {
            return f.rotation();
        }
        if let Some(a) = &marker.global_axes {
            return a.matrix();
        }
        let rb = self.body_rotation(&marker.body);
        match &marker.euler_zyx_deg {
            Some(e) => rot::mul(&rb, &rot::euler_zyx_deg(e)),
            None => rb,
        }
    }

    /// Marker axes relative to its body frame (constant): `R_body^T A_global`.
    pub fn marker_axes_body(&self, marker: &Marker) -> Mat3 {
        let rb = self.body_rotation(&marker.body);
        rot::mul(&rot::transpose(&rb), &self.marker_axes_global(marker))
    }

    /// Marker position in its body frame: `position`, or `R_body^T (global_position - x_body)`.
    pub fn marker_position_body(&self, marker: &Marker) -> Vec3 {
        if let Some(p) = marker.position {
            return p;
        }
        let g = marker.global_position.unwrap_or([0.0; 3]);
        let x = self.body_position(&marker.body);
        let rb = self.body_rotation(&marker.body);
        rot::mul_t_vec(&rb, &[g[0] - x[0], g[1] - x[1], g[2] - x[2]])
    }

    /// Marker position in global coordinates in the design position.
    pub fn marker_position_global(&self, marker: &Marker) -> Vec3 {
        if let Some(g) = marker.global_position {
            return g;
        }
        let p = marker.position.unwrap_or([0.0; 3]);
        let x = self.body_position(&marker.body);
        let r = rot::mul_vec(&self.body_rotation(&marker.body), &p);
        [x[0] + r[0], x[1] + r[1], x[2] + r[2]]
    }

    /// Distance between the two markers of an element in the design position (the default
    /// design/free length of point-to-point elements). `None` if a marker is unknown.
    pub fn design_length(&self, element: &ForceElement) -> Option<f64> {
        let a = self.marker_position_global(self.marker(element.marker_i())?);
        let b = self.marker_position_global(self.marker(element.marker_j())?);
        Some(rot::norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]]))
    }

    /// Mirror-expanded copy (see [`crate::mirror`]); a `mirror = true` item without an `_L` name
    /// is an error. Models returned by [`crate::load()`] are already expanded. `[[elements]]`
    /// entries of the built-in kinds are turned into force elements first, as by the loader
    /// ([`crate::builtin_kinds::normalise`]).
    pub fn expand_mirrors(&self) -> Result<Model, ModelError> {
        let mut src = self.clone();
        let mut problems = crate::builtin_kinds::normalise(&mut src);
        let exp = mirror::expand(&src);
        problems.extend(exp.problems);
        if problems.is_empty() {
            Ok(exp.model)
        } else {
            Err(ModelError::Invalid {
                file: "<model>".into(),
                problems,
            })
        }
    }

    /// Validate an already expanded model (no line information); all problems are listed.
    pub fn validate(&self) -> Result<(), ModelError> {
        let problems = validate::validate(self);
        if problems.is_empty() {
            Ok(())
        } else {
            let problems = problems
                .into_iter()
                .map(|mut p| {
                    p.file = "<model>".into();
                    p
                })
                .collect();
            Err(ModelError::Invalid {
                file: "<model>".into(),
                problems,
            })
        }
    }

    /// Pretty JSON of the model (the same schema as the input files). A model with parameters
    /// is written with the file's values and the parameters' current values, so that reading
    /// it back gives the same model.
    pub fn to_json_pretty(&self) -> String {
        match &self.parameter_base {
            Some(b) => {
                let mut m = b.model.clone();
                m.parameters = self.parameters.clone();
                serde_json::to_string_pretty(&m).unwrap_or_default()
            }
            None => serde_json::to_string_pretty(self).unwrap_or_default(),
        }
    }
}
