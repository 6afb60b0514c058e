//! Kinematic tables: the poses of a suspension corner's bodies relative to a parent body as
//! functions of one or two coordinates (wheel travel; rack travel at a steered corner).
//!
//! Document 004 (`../shared/seeds/004_bf53df81c0e560f5.txt`, sec. 2.2) reduces a corner to
//! independent coordinates z_G (travel, steer) whose link poses follow from the loop closure.
//! In the kinematic variant (ideal joints in place of the link bushings) that closure does not
//! depend on the loads, so it can be solved once on a grid of the coordinates and stored: a
//! kinematic table. `sprung reduce --variant kinematic` writes one per corner from the full model
//! (the equilibrium of the corner's link bushings alone, without load); a body of the reduced
//! model follows it through a joint of type `tabulated` (`docs/joints.md`).
//!
//! ## File format (TOML, `docs/joints.md`, "Tabulated joints")
//!
//! ```toml
//! source = "sprung reduce --variant kinematic models/car_dw_ml.toml (corner FL)"
//! parent = "chassis"          # the poses are in this body's design body frame
//!
//! [[axes]]                    # 1 or 2 axes; the first is the outer index of the grid
//! name = "travel"
//! unit = "m"
//! grid = [-0.09, -0.08, ..., 0.09]   # strictly increasing, >= 4 points
//!
//! [[bodies]]
//! name = "carrier_L"
//! position = [[x, y, z], ...]  # the body frame's origin in the parent's design frame, m
//! rotation = [[rx, ry, rz], ...] # rotation vector φ, rad: R_rel(c) = exp([φ]×) R_rel,0
//! ```
//!
//! `position` and `rotation` hold one entry per grid point, the first axis outer (entry
//! `i1 * n2 + i2` for the point (grid₁[i1], grid₂[i2])). `R_rel,0` is the body's design
//! orientation relative to the parent's (`R_p,0ᵀ R_b,0`), so φ is the rotation *away from the
//! design orientation*, in parent axes; at the design point (all coordinates 0) it is zero.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Problem};

/// A kinematic table (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KinematicTable {
    /// How the table was made (command, source model); free text.
    #[serde(default)]
    pub source: String,
    /// The body (name in the source model) in whose design frame the poses are given.
    pub parent: String,
    /// The coordinate axes: one or two.
    pub axes: Vec<TableAxis>,
    /// The tabulated bodies.
    pub bodies: Vec<TableBody>,
}

/// One coordinate axis of a [`KinematicTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableAxis {
    /// Name, e.g. `"travel"` or `"rack"`.
    pub name: String,
    /// Unit of the coordinate: `"m"` or `"rad"`.
    pub unit: String,
    /// What the coordinate measures (free text, e.g. "wheel-centre height above design, parent z").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Grid points, strictly increasing, at least 4.
    pub grid: Vec<f64>,
}

/// The poses of one body over the grid of a [`KinematicTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableBody {
    /// Body name (in the source model).
    pub name: String,
    /// Origin of the body frame in the parent's design body frame, m; one per grid point.
    pub position: Vec<[f64; 3]>,
    /// Rotation vector φ (rad, parent design axes) away from the design orientation relative to
    /// the parent: R_rel(c) = exp([φ]×) R_rel,0; one per grid point.
    pub rotation: Vec<[f64; 3]>,
}

/// Smallest number of grid points per axis (a cubic spline with not-a-knot or natural ends
/// needs four to be more than a parabola).
pub const MIN_GRID_POINTS: usize = 4;

impl KinematicTable {
    /// Number of grid points (product of the axes' lengths).
    pub fn points(&self) -> usize {
        self.axes.iter().map(|a| a.grid.len()).product()
    }

    /// The tabulated body named `name`.
    pub fn body(&self, name: &str) -> Option<&TableBody> {
        self.bodies.iter().find(|b| b.name == name)
    }

    /// Every problem of the table (empty when it is valid). `file` labels the messages.
    pub fn problems(&self, file: &str) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut push = |kind: &str, name: &str, msg: String, hint: &str| {
            let mut p = Problem::new(kind, name, msg, hint);
            p.file = file.to_string();
            out.push(p);
        };
        if self.axes.is_empty() || self.axes.len() > 2 {
            push(
                "kinematic table",
                &self.parent,
                format!("has {} axes; a table has 1 or 2", self.axes.len()),
                "give one [[axes]] entry per coordinate (travel, and rack travel at a steered corner)",
            );
        }
        for a in &self.axes {
            if a.unit != "m" && a.unit != "rad" {
                push(
                    "table axis",
                    &a.name,
                    format!("unit '{}' is not supported", a.unit),
                    "use \"m\" or \"rad\"",
                );
            }
            if a.grid.len() < MIN_GRID_POINTS {
                push(
                    "table axis",
                    &a.name,
                    format!("has {} grid points", a.grid.len()),
                    "give at least 4 grid points (cubic splines)",
                );
            }
            if let Some(k) = a.grid.iter().position(|g| !g.is_finite()) {
                push(
                    "table axis",
                    &a.name,
                    format!("grid point {k} is not finite"),
                    "give finite numbers",
                );
            } else if let Some(k) = a.grid.windows(2).position(|w| w[1] <= w[0]) {
                push(
                    "table axis",
                    &a.name,
                    format!(
                        "grid is not strictly increasing at points {k} and {} ({} then {})",
                        k + 1,
                        a.grid[k],
                        a.grid[k + 1]
                    ),
                    "sort the grid and remove repeated points",
                );
            }
        }
        if self.bodies.is_empty() {
            push(
                "kinematic table",
                &self.parent,
                "has no [[bodies]]".to_string(),
                "tabulate at least one body",
            );
        }
        let n = self.points();
        for (i, b) in self.bodies.iter().enumerate() {
            if self.bodies[..i].iter().any(|o| o.name == b.name) {
                push(
                    "table body",
                    &b.name,
                    "is tabulated twice".to_string(),
                    "keep one [[bodies]] entry per body",
                );
            }
            for (what, v) in [("position", &b.position), ("rotation", &b.rotation)] {
                if v.len() != n {
                    push(
                        "table body",
                        &b.name,
                        format!("has {} {what} entries but the grid has {n} points", v.len()),
                        "give one entry per grid point, the first axis outer",
                    );
                } else if let Some(k) = v.iter().position(|p| p.iter().any(|x| !x.is_finite())) {
                    push(
                        "table body",
                        &b.name,
                        format!("{what} entry {k} is not finite"),
                        "regenerate the table (`sprung reduce --variant kinematic`)",
                    );
                }
            }
        }
        out
    }

    /// Parse TOML source; syntax errors carry line and column, validation errors list every problem.
    pub fn from_toml_str(src: &str, file: &str) -> Result<Self, ModelError> {
        let table: KinematicTable = toml::from_str(src).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| line_column(src, s.start))
                .unwrap_or((1, 1));
            ModelError::Syntax {
                file: file.to_string(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        let problems = table.problems(file);
        if problems.is_empty() {
            Ok(table)
        } else {
            Err(ModelError::Invalid {
                file: file.to_string(),
                problems,
            })
        }
    }

    /// Read and validate a table file.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let label = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: label.clone(),
            source,
        })?;
        Self::from_toml_str(&src, &label)
    }

    /// The table as TOML text.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a kinematic table serialises to TOML")
    }
}

fn line_column(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> KinematicTable {
        let grid = vec![-0.02, -0.01, 0.0, 0.01, 0.02];
        KinematicTable {
            source: "test".into(),
            parent: "chassis".into(),
            axes: vec![TableAxis {
                name: "travel".into(),
                unit: "m".into(),
                description: String::new(),
                grid: grid.clone(),
            }],
            bodies: vec![TableBody {
                name: "carrier".into(),
                position: grid.iter().map(|s| [0.0, 0.7, 0.3 + s]).collect(),
                rotation: grid.iter().map(|s| [0.1 * s, 0.0, 0.0]).collect(),
            }],
        }
    }

    #[test]
    fn a_table_round_trips_through_toml() {
        let t = table();
        let back = KinematicTable::from_toml_str(&t.to_toml_string(), "t.toml").unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn bad_tables_list_every_problem() {
        let mut t = table();
        t.axes[0].grid[3] = t.axes[0].grid[2];
        t.bodies[0].rotation.pop();
        t.axes[0].unit = "mm".into();
        let err = KinematicTable::from_toml_str(&t.to_toml_string(), "t.toml").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("3 problems"), "{msg}");
        assert!(
            msg.contains("not strictly increasing at points 2 and 3"),
            "{msg}"
        );
        assert!(
            msg.contains("has 4 rotation entries but the grid has 5 points"),
            "{msg}"
        );
        assert!(msg.contains("unit 'mm'"), "{msg}");
    }

    #[test]
    fn syntax_errors_are_located() {
        let src = "parent = \"chassis\"\naxes = []\nbodies = []\nextra = 1\n";
        let err = KinematicTable::from_toml_str(src, "t.toml").unwrap_err();
        assert!(err.to_string().starts_with("t.toml:4:"), "{err}");
    }
}
