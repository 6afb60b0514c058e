//! # sprung-model — the sprung model file format (v1)
//!
//! Types, loading, mirror expansion, validation and curve/signal evaluation for the model files
//! specified in `docs/model-format.md`; conventions and curves after
//! `reference-suspensions.md` sections 1–2 (Archut & Corves elastokinematic suspension models:
//! rigid bodies coupled only by bushings and point-to-point force elements, chassis = ground).
//!
//! ## Pipeline
//! [`load()`] (or [`from_toml_str`] / [`from_json_str`]) parses TOML or JSON into one serde schema
//! ([`Model`], unknown fields are errors with file:line:column), turns `[[elements]]` entries of
//! the built-in kinds into the [`ForceElement`]s of their `[[force_elements]]` tables
//! ([`builtin_kinds`]), reads `csv` input signals into
//! `table` signals (relative to the model file's directory; errors name the CSV file and line),
//! expands `mirror = true` items ([`mirror`]), validates the flat model collecting *all*
//! problems ([`ModelError::Invalid`], each with file, line of the element definition, element
//! kind and name, what is wrong and how to fix it), and finally orthonormalises frame axes
//! exactly (they must be orthonormal to [`validate::AXES_TOLERANCE`] = 1e-4 and right-handed).
//!
//! ## Resolved helpers for the compiler
//! [`Body::inertia_tensor`], [`Body::rotation`], [`Model::marker_axes_global`],
//! [`Model::marker_axes_body`], [`Model::marker_position_body`],
//! [`Model::marker_position_global`], [`Model::design_length`], lookups by name
//! ([`Model::body`], [`Model::marker`], …), [`Curve::eval`], [`Signal::value`] /
//! [`Signal::rate`] / [`Signal::discontinuities`] / [`Signal::kinks`], [`Quantity::unit`].
//! Rotation math is in [`rot`] (plain arrays; Euler z-y'-x'', R = Rz(a) Ry(b) Rx(c)).
//!
//! ## Example
//! ```
//! let src = r#"
//! [model]
//! name = "demo"
//!
//! [[bodies]]
//! name = "mass"
//! mass = 1.0
//! position = [0.0, 0.0, 0.0]
//! inertia = { principal = [1e-3, 1e-3, 1e-3] }
//!
//! [[markers]]
//! name = "anchor"
//! body = "ground"
//! global_position = [-1.0, 0.0, 0.0]
//!
//! [[markers]]
//! name = "p"
//! body = "mass"
//! position = [0.0, 0.0, 0.0]
//!
//! [[force_elements]]
//! type = "spring"
//! name = "spring"
//! marker_i = "p"
//! marker_j = "anchor"
//! stiffness = 100.0
//! "#;
//! let model = sprung_model::from_toml_str(src, "demo.toml").unwrap();
//! let spring = model.force_element("spring").unwrap();
//! assert_eq!(model.design_length(spring), Some(1.0));
//! assert_eq!(model.solver.output_interval(), 1e-3);
//!
//! // A negative mass is reported with file, line, element and a fix.
//! let err = sprung_model::from_toml_str(&src.replace("mass = 1.0", "mass = -1.0"), "demo.toml")
//!     .unwrap_err()
//!     .to_string();
//! assert!(err.contains("demo.toml:6: body 'mass': mass = -1 is not positive"));
//! ```
//!
//! ## Additions to the specification (small, needed)
//! * `csv` signals: `time_column` defaults to `"t"`; `,` or `;` separators, `#` comment lines;
//!   the CSV table uses linear interpolation.
//! * `sine` signal: `u = offset` before `start_time` (a non-zero phase therefore makes a jump at
//!   `start_time`, reported by [`Signal::discontinuities`]).
//! * `ramp`: requires `end_time > start_time`; `table`: constant before the first and after the
//!   last sample, `interpolation` may also be `"smooth"`.
//! * `[[inputs]] frame` defaults to `"global"`; outputs: `component` must be omitted for scalar
//!   quantities (camber, toe, length, length_rate, P2P force/deflection) and `frame` is only
//!   allowed for position, displacement, velocity, angular_velocity, orientation; a `body`
//!   output must name a moving body (not the ground).
//! * A force element whose two markers are on the same body is an error, as is a
//!   point-to-point element whose markers coincide in the design position (undefined force
//!   direction; this holds even when `free_length` / `design_length` are given).
//! * `inertia.euler_zyx_deg` is only allowed together with `inertia.principal`.
//! * A mirrored marker referring to a non-mirrored (shared) frame gets the inline mirrored axes
//!   `S A S` (see [`mirror`]).
//! * `solver.rtol`, `solver.atol` must be > 0 and `relinearise_every` >= 1.

#![warn(missing_docs)]
#![allow(clippy::large_enum_variant)] // ForceElement variants are the spec's plain data structs

pub mod builtin_kinds;
pub mod error;
pub mod interp;
pub mod kin_table;
pub mod load;
mod merge;
pub mod mirror;
pub mod model;
pub mod parameters;
pub mod rot;
pub mod settings;
pub mod subsystem;
pub mod types;
pub mod validate;

pub use error::{ModelError, Problem};
pub use interp::{
    CurveRangeError, OutOfRange, OutOfRangeFlag, any_out_of_range, check_curve_ranges,
    clear_out_of_range, reset_out_of_range,
};
pub use kin_table::{
    KinematicTable, SPLINE_SLOTS, SplineBasis, SplineEval, TableAxis, TableBody, TableSpline,
};
pub use load::{Format, from_json_str, from_str_with_base, from_toml_str, load, parse_raw};
pub use settings::{SettingProblem, SettingsError, StepMode};
pub use types::*;

/// Pretty-printed JSON Schema of the model format (printed by `sprung schema`).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Model);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}
