//! Serde data types of the sprung model format v1 (`docs/model-format.md`).
//!
//! One schema serves TOML and JSON. Every struct denies unknown fields. Units are SI unless a key
//! ends in `_deg`. Defaults follow the specification; optional alternatives are `Option`s whose
//! mutual exclusivity is checked by [`crate::Model::validate`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| *x == 0.0)
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
fn default_ground() -> String {
    "ground".to_string()
}

/// A complete model file: the root of the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// General information (`[model]`).
    pub model: ModelInfo,
    /// Solver settings (`[solver]`), all optional.
    #[serde(default)]
    pub solver: SolverSettings,
    /// Initial state (`[initial_state]`).
    #[serde(default)]
    pub initial_state: InitialState,
    /// Named global orientations in the design position (`[[frames]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<Frame>,
    /// Characteristic curves (`[[curves]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<Curve>,
    /// Rigid bodies (`[[bodies]]`); the ground is implicit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bodies: Vec<Body>,
    /// Markers (`[[markers]]`): points with orientation fixed to a body or the ground.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
    /// Force elements (`[[force_elements]]`), tagged by `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub force_elements: Vec<ForceElement>,
    /// Force elements of open kinds (`[[elements]]`): any number of markers, internal states,
    /// parameters by name; the kind is looked up in the element registry of `sprung-mbs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<OpenElement>,
    /// Road surfaces (`[[roads]]`) the tires of `[[elements]]` roll on; immutable, shared by all
    /// tires that name them (`road = "..."`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roads: Vec<Road>,
    /// External force/torque inputs (`[[inputs]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Input>,
    /// Output channels (`[[outputs]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
    /// Other model files included as subsystems (`[[subsystems]]`, [`crate::subsystem`]); the
    /// loader flattens them into the lists above (a loaded model has none left).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subsystems: Vec<Subsystem>,
    /// Named parameters (`[[parameters]]`) that change model values without editing the file
    /// (`docs/parameters.md`, [`crate::parameters`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// The model as written in the file (before the parameters were applied) and its file label;
    /// set by [`crate::load()`] and [`Model::with_parameters`] when parameters act on the model
    /// (derived data, not part of the file format).
    #[serde(skip)]
    pub parameter_base: Option<std::sync::Arc<crate::parameters::ParameterBase>>,
}

/// How a parameter acts on its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParameterMode {
    /// The target value becomes the parameter value (default).
    #[default]
    Set,
    /// The target value is the file's value times the parameter value.
    Scale,
}

/// `[[parameters]]`: a named parameter acting on one or more model values addressed by paths
/// (`docs/parameters.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    /// Unique parameter name (letters, digits, `_`; not a path).
    pub name: String,
    /// Value (finite); with `mode = "scale"` a factor on the file's values.
    pub value: f64,
    /// Unit of the value (documentation, e.g. `"-"` for a factor, `"N/m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Paths of the model values it acts on, e.g. `"force_elements.damper_L.damping"` or
    /// `"force_elements.*_bushing_*.stiffness"` (at least one).
    pub targets: Vec<String>,
    /// `"set"` (default) or `"scale"`.
    #[serde(default)]
    pub mode: ParameterMode,
}

/// `[model]`: name, description, ground name and gravity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Model name (required).
    pub name: String,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Name of the fixed ground body (default `"ground"`); markers may reference it.
    #[serde(default = "default_ground")]
    pub ground: String,
    /// Gravitational acceleration in global coordinates, m/s^2 (default zero).
    #[serde(default)]
    pub gravity: [f64; 3],
}

/// Linear solver used inside implicit integrators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinearSolver {
    /// Dense LU.
    Dense,
    /// Block-sparse LU (default).
    #[default]
    BlockSparse,
}

fn default_method() -> String {
    "lsrt2".into()
}
fn default_step() -> f64 {
    1e-3
}
fn default_t_end() -> f64 {
    1.0
}
fn default_rtol() -> f64 {
    1e-6
}
fn default_atol() -> f64 {
    1e-9
}
fn default_relin() -> u32 {
    1
}

/// `[solver]`: integration settings; all optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SolverSettings {
    /// Solver name (checked later against the solver catalogue), default `"lsrt2"`.
    #[serde(default = "default_method")]
    pub method: String,
    /// Fixed step size in s (> 0), default 1e-3.
    #[serde(default = "default_step")]
    pub step: f64,
    /// End time in s (> 0), default 1.
    #[serde(default = "default_t_end")]
    pub t_end: f64,
    /// Output interval in s (>= step); default = step. Use [`SolverSettings::output_interval`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_interval: Option<f64>,
    /// Relative tolerance of adaptive methods, default 1e-6.
    #[serde(default = "default_rtol")]
    pub rtol: f64,
    /// Absolute tolerance of adaptive methods, default 1e-9.
    #[serde(default = "default_atol")]
    pub atol: f64,
    /// Jacobian update every N steps (>= 1), default 1.
    #[serde(default = "default_relin")]
    pub relinearise_every: u32,
    /// Adaptive re-linearisation of the fixed-step Rosenbrock methods (m, > 0; default none =
    /// the fixed schedule alone): a step taken with a lagged Jacobian whose local error
    /// indicator exceeds this level makes the next step re-linearise; `relinearise_every` then
    /// bounds the Jacobian's age (`docs/solvers.md`, *Adaptive re-linearisation*).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relinearise_stale: Option<f64>,
    /// Linear solver, default `block_sparse`.
    #[serde(default)]
    pub linear_solver: LinearSolver,
    /// Plausibility bound on the distance of a body's centre of mass from its design position,
    /// m (> 0; `inf` = no bound): a run that passes it stops as diverged, naming the body.
    /// Default: 10 x the model extent (the diagonal of the bounding box of bodies and markers),
    /// at least 1 m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_displacement: Option<f64>,
    /// Plausibility bound on the speed of a body's centre of mass, m/s (> 0; `inf` = no bound).
    /// Default: the displacement bound per 10 ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_velocity: Option<f64>,
    /// Plausibility bound on the resultant force on a body (elements, inputs and gravity), N
    /// (> 0; `inf` = no bound). Default: the heaviest body's mass x the velocity bound per 10 ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_force: Option<f64>,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            method: default_method(),
            step: default_step(),
            t_end: default_t_end(),
            output_interval: None,
            rtol: default_rtol(),
            atol: default_atol(),
            relinearise_every: default_relin(),
            relinearise_stale: None,
            linear_solver: LinearSolver::default(),
            max_displacement: None,
            max_velocity: None,
            max_force: None,
        }
    }
}

impl SolverSettings {
    /// Effective output interval: the given value or, by default, the step size.
    pub fn output_interval(&self) -> f64 {
        self.output_interval.unwrap_or(self.step)
    }
}

/// Kind of initial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialStateKind {
    /// Start in the design position with the given velocities (default).
    #[default]
    Design,
    /// Start from the static equilibrium with the inputs evaluated at t = 0.
    Equilibrium,
}

/// `[initial_state]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitialState {
    /// `"design"` (default) or `"equilibrium"`.
    #[serde(default)]
    pub kind: InitialStateKind,
}

/// Three axis vectors given in global coordinates (columns of an orientation matrix).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Axes {
    /// Local x axis in global coordinates.
    pub x: [f64; 3],
    /// Local y axis in global coordinates.
    pub y: [f64; 3],
    /// Local z axis in global coordinates.
    pub z: [f64; 3],
}

impl Axes {
    /// Orientation matrix whose columns are the x, y, z axes.
    pub fn matrix(&self) -> [[f64; 3]; 3] {
        std::array::from_fn(|r| [self.x[r], self.y[r], self.z[r]])
    }
    /// Axes from the columns of a matrix.
    pub fn from_matrix(m: &[[f64; 3]; 3]) -> Self {
        Self {
            x: [m[0][0], m[1][0], m[2][0]],
            y: [m[0][1], m[1][1], m[2][1]],
            z: [m[0][2], m[1][2], m[2][2]],
        }
    }
}

/// `[[frames]]`: a named orientation (global, design position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    /// Unique frame name.
    pub name: String,
    /// Axes in global coordinates (exactly one of `axes` / `euler_zyx_deg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<Axes>,
    /// Euler angles z-y'-x'' in degrees, R = Rz(a) Ry(b) Rx(c).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_zyx_deg: Option<[f64; 3]>,
    /// Also create the y-mirrored copy (`_L` -> `_R`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Interpolation between tabulated points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Piecewise linear (default).
    #[default]
    Linear,
    /// C1 monotonicity-preserving cubic Hermite (Fritsch–Carlson conditions).
    Smooth,
}

/// Behaviour outside the tabulated range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Extrapolation {
    /// Continue with the slope of the end segment (linear) / the end derivative (smooth). Default.
    #[default]
    Linear,
    /// Hold the end value.
    Constant,
    /// Out-of-range evaluation is an error: [`Curve::eval`] holds the end value and records the
    /// abscissa, which stops a run ([`crate::interp::check_curve_ranges`]); [`Curve::eval_checked`]
    /// returns it directly.
    Error,
}

/// Symmetry of a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Symmetry {
    /// Tabulated over the whole range (default).
    #[default]
    None,
    /// Tabulated for x >= 0 starting at (0, 0); f(-x) = -f(x).
    Odd,
}

/// `[[curves]]`: a tabulated characteristic y = f(x). Evaluate with [`Curve::eval`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Curve {
    /// Unique curve name.
    pub name: String,
    /// Strictly increasing abscissae, at least two.
    pub x: Vec<f64>,
    /// Ordinates, same length as `x`.
    pub y: Vec<f64>,
    /// `"linear"` (default) or `"smooth"`.
    #[serde(default)]
    pub interpolation: Interpolation,
    /// `"linear"` (default), `"constant"` or `"error"`.
    #[serde(default)]
    pub extrapolation: Extrapolation,
    /// `"none"` (default) or `"odd"`.
    #[serde(default)]
    pub symmetry: Symmetry,
    /// Unit of x (documentation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_unit: Option<String>,
    /// Unit of y (documentation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_unit: Option<String>,
    /// Run-time record of the first evaluation outside the table of an
    /// `extrapolation = "error"` curve (not part of the file format); see
    /// [`crate::interp::check_curve_ranges`].
    #[serde(skip)]
    pub out_of_range: crate::interp::OutOfRangeFlag,
    /// The knots where the slope changes by more than the breakpoint ratio, cached by
    /// [`Curve::segment`] (derived data, not part of the file format).
    #[serde(skip)]
    pub segment_knots: crate::interp::SegmentKnots,
}

/// Inertia of a body about its CoM: exactly one of `tensor` / `principal` (+ optional `euler_zyx_deg`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Inertia {
    /// Full tensor in body axes, kg m^2 (symmetric, positive definite, triangle inequality).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<[[f64; 3]; 3]>,
    /// Principal moments, kg m^2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<[f64; 3]>,
    /// Orientation of the principal axes w.r.t. the body frame (z-y'-x'' deg); only with `principal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_zyx_deg: Option<[f64; 3]>,
}

/// `[[bodies]]`: a rigid body; its frame origin is the CoM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Body {
    /// Unique body name (must differ from the ground name).
    pub name: String,
    /// Mass in kg (> 0).
    pub mass: f64,
    /// Initial (design) global position of the CoM.
    pub position: [f64; 3],
    /// Initial orientation of the body frame, z-y'-x'' deg (default identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_zyx_deg: Option<[f64; 3]>,
    /// Initial CoM velocity, global, m/s.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub velocity: [f64; 3],
    /// Initial angular velocity in body axes, rad/s.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub angular_velocity: [f64; 3],
    /// Inertia about the CoM.
    pub inertia: Inertia,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
    /// An ideal joint to a parent body or the ground (`docs/joints.md`): the body's pose is then a
    /// function of the joint coordinate instead of six free coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<Joint>,
}

/// Kind of an ideal joint (`docs/joints.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JointKind {
    /// Rotation about an axis through a point; coordinate: the angle, rad.
    Revolute,
    /// Translation along an axis; coordinate: the displacement, m.
    Prismatic,
    /// The relative pose from a kinematic table as a spline in 1-2 coordinates (the body's own
    /// and/or other joints' coordinates; `docs/joints.md`, "Tabulated joints").
    Tabulated,
    /// Rigidly attached at the design pose relative to the parent, no coordinate: the body's
    /// mass and inertia move with the parent (document 004's rigid mount of a part whose
    /// bushings the kinematic variant makes ideal; `docs/joints.md`, "Fixed joints").
    Fixed,
}

impl JointKind {
    /// The kind's name in the model format.
    pub fn name(self) -> &'static str {
        match self {
            JointKind::Revolute => "revolute",
            JointKind::Prismatic => "prismatic",
            JointKind::Tabulated => "tabulated",
            JointKind::Fixed => "fixed",
        }
    }
}

/// `joint = { type, parent, axis, point, z0, zd0 }` on a body: an ideal joint in relative
/// coordinates (document 004 sec. 2.2, `docs/joints.md`). The joint coordinate z is 0 at the
/// design pose (the body's `position` / `euler_zyx_deg`); the axis and point are given in the
/// design (global) frame and move with the parent.
///
/// `type = "tabulated"`: `joint = { type, parent, table, entry, coordinates, z0, zd0 }`, the pose
/// relative to the parent's design frame from a kinematic table ([`crate::KinematicTable`]) as a
/// spline in its coordinates; no `axis` / `point`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Joint {
    /// `"revolute"`, `"prismatic"` or `"tabulated"`.
    #[serde(rename = "type")]
    pub kind: JointKind,
    /// The parent: the ground name or another body.
    pub parent: String,
    /// Joint axis in the design (global) frame; any length > 0 (normalised when compiled).
    /// Revolute and prismatic only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    /// Revolute: a point on the axis in the design (global) frame, m. Not used by prismatic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<[f64; 3]>,
    /// Tabulated: the kinematic table file, relative to the model file's folder (read when the
    /// model is loaded, kept in [`Joint::kin_table`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Tabulated: the table body whose pose this body follows (default: the body's own name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Tabulated: one item per table axis, in axis order: `"self"` (a coordinate of this body,
    /// at most one) or the name of a jointed body with exactly one coordinate (an input
    /// coordinate). Without `"self"` the body is a follower (no coordinate of its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coordinates: Vec<String>,
    /// Initial joint coordinate (rad or m), default 0 = the design pose.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub z0: f64,
    /// Initial joint rate (rad/s or m/s), default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zd0: f64,
    /// Tabulated: the loaded table (set by the loader; not part of the file format).
    #[serde(skip)]
    pub kin_table: Option<std::sync::Arc<crate::KinematicTable>>,
}

/// The coordinate item of a tabulated joint that names the body's own coordinate.
pub const SELF_COORDINATE: &str = "self";

impl Joint {
    /// Whether the joint has a coordinate of its own (revolute, prismatic, or a tabulated joint
    /// with a `"self"` coordinate); a tabulated joint without is a follower.
    pub fn has_own_coordinate(&self) -> bool {
        match self.kind {
            JointKind::Revolute | JointKind::Prismatic => true,
            JointKind::Tabulated => self.coordinates.iter().any(|c| c == SELF_COORDINATE),
            JointKind::Fixed => false,
        }
    }

    /// Whether the body is a follower: a tabulated joint without an own coordinate, or a fixed
    /// joint.
    pub fn is_follower(&self) -> bool {
        !self.has_own_coordinate()
    }
}

/// `[[markers]]`: a point with orientation on a body (or the ground).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// Unique marker name.
    pub name: String,
    /// Body name or the ground name.
    pub body: String,
    /// Design position in global coordinates (exactly one of `global_position` / `position`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_position: Option<[f64; 3]>,
    /// Position in body coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 3]>,
    /// Orientation from a named frame (at most one of `frame` / `global_axes` / `euler_zyx_deg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// Orientation from inline global axes (design position).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_axes: Option<Axes>,
    /// Orientation relative to the body frame, z-y'-x'' deg. Default: parallel to the body frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_zyx_deg: Option<[f64; 3]>,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Optional per-axis curve names (local x, y, z).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AxisCurves {
    /// Curve for local x.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// Curve for local y.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<String>,
    /// Curve for local z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub z: Option<String>,
}

impl AxisCurves {
    /// The three entries as an array indexed by axis.
    pub fn as_array(&self) -> [Option<&str>; 3] {
        [self.x.as_deref(), self.y.as_deref(), self.z.as_deref()]
    }
    /// True when no axis has a curve.
    pub fn is_empty(&self) -> bool {
        self.x.is_none() && self.y.is_none() && self.z.is_none()
    }
}

/// A local axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Local x.
    X,
    /// Local y.
    Y,
    /// Local z.
    Z,
}

impl Axis {
    /// Index 0, 1, 2.
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
}

/// 6-DOF bushing between marker I (action) and marker J (reference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bushing {
    /// Unique element name.
    pub name: String,
    /// Action marker (body_i).
    pub marker_i: String,
    /// Reference marker (body_j); deflections are measured in its axes.
    pub marker_j: String,
    /// Translational stiffness, local x y z, N/m (>= 0).
    pub stiffness: [f64; 3],
    /// Rotational stiffness, Nm/rad (>= 0).
    pub rot_stiffness: [f64; 3],
    /// Translational damping, Ns/m (>= 0), default 0.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub damping: [f64; 3],
    /// Rotational damping, Nms/rad (>= 0), default 0.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub rot_damping: [f64; 3],
    /// Per-axis force(deflection) curves replacing k*d.
    #[serde(default, skip_serializing_if = "AxisCurves::is_empty")]
    pub stiffness_curves: AxisCurves,
    /// Per-axis torque(angle) curves replacing k_r*theta.
    #[serde(default, skip_serializing_if = "AxisCurves::is_empty")]
    pub rot_stiffness_curves: AxisCurves,
    /// Per-axis force(deflection rate) curves replacing c*d_dot.
    #[serde(default, skip_serializing_if = "AxisCurves::is_empty")]
    pub damping_curves: AxisCurves,
    /// Per-axis torque(angle rate) curves replacing c_r*theta_dot.
    #[serde(default, skip_serializing_if = "AxisCurves::is_empty")]
    pub rot_damping_curves: AxisCurves,
    /// Force on body_i at zero deflection, marker-J axes, N.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub preload: [f64; 3],
    /// Torque on body_i at zero deflection, marker-J axes, Nm.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub rot_preload: [f64; 3],
    /// Free spin axis (swing-twist split), e.g. a wheel bearing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_axis: Option<Axis>,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

impl Bushing {
    /// A linear elastic bushing without damping, curves or preload (the rigs' clamps and
    /// servo springs): stiffness N/m and rotational stiffness N m/rad per marker-J axis.
    pub fn elastic(
        name: &str,
        marker_i: &str,
        marker_j: &str,
        stiffness: [f64; 3],
        rot_stiffness: [f64; 3],
    ) -> Self {
        Self {
            name: name.into(),
            marker_i: marker_i.into(),
            marker_j: marker_j.into(),
            stiffness,
            rot_stiffness,
            damping: [0.0; 3],
            rot_damping: [0.0; 3],
            stiffness_curves: Default::default(),
            rot_stiffness_curves: Default::default(),
            damping_curves: Default::default(),
            rot_damping_curves: Default::default(),
            preload: [0.0; 3],
            rot_preload: [0.0; 3],
            spin_axis: None,
            mirror: false,
        }
    }
}

/// Point-to-point spring; tension-positive scalar force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spring {
    /// Unique element name.
    pub name: String,
    /// Marker on body_i.
    pub marker_i: String,
    /// Marker on body_j.
    pub marker_j: String,
    /// Linear rate N/m (exactly one of `stiffness` / `curve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Curve force(L - free_length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<String>,
    /// Free length in m (> 0); default: design length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_length: Option<f64>,
    /// Added tension, N.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preload: f64,
    /// Parallel linear damping, Ns/m (>= 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub damping: f64,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Point-to-point damper; tension-positive force of L_dot (L_dot > 0 = extension = rebound).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Damper {
    /// Unique element name.
    pub name: String,
    /// Marker on body_i.
    pub marker_i: String,
    /// Marker on body_j.
    pub marker_j: String,
    /// Linear damping Ns/m (exactly one of `damping` / bilinear pair / `curve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// Bilinear: damping in extension (L_dot > 0), Ns/m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_rebound: Option<f64>,
    /// Bilinear: damping in compression (L_dot < 0), Ns/m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_compression: Option<f64>,
    /// Curve force(L_dot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<String>,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Kind of end stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// Engages when L < L_design - clearance; pushes apart: f = -curve(L_c - L).
    Bump,
    /// Engages when L > L_design + clearance; pulls together: f = +curve(L - L_c).
    Rebound,
}

/// Point-to-point bump / rebound stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Unique element name.
    pub name: String,
    /// Marker on body_i.
    pub marker_i: String,
    /// Marker on body_j.
    pub marker_j: String,
    /// `"bump"` or `"rebound"`.
    pub kind: StopKind,
    /// Clearance in m (>= 0).
    pub clearance: f64,
    /// Penetration -> force magnitude curve (exactly one of `curve` / `stiffness`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<String>,
    /// Linear stop rate N/m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Design length in m (> 0); default: marker distance in the design position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_length: Option<f64>,
    /// Damping while engaged, Ns/m (>= 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub damping: f64,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// A force element, internally tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ForceElement {
    /// 6-DOF bushing.
    Bushing(Bushing),
    /// Point-to-point spring.
    Spring(Spring),
    /// Point-to-point damper.
    Damper(Damper),
    /// Bump / rebound stop.
    Stop(Stop),
}

impl ForceElement {
    /// Element name.
    pub fn name(&self) -> &str {
        match self {
            ForceElement::Bushing(e) => &e.name,
            ForceElement::Spring(e) => &e.name,
            ForceElement::Damper(e) => &e.name,
            ForceElement::Stop(e) => &e.name,
        }
    }
    /// Action marker name.
    pub fn marker_i(&self) -> &str {
        match self {
            ForceElement::Bushing(e) => &e.marker_i,
            ForceElement::Spring(e) => &e.marker_i,
            ForceElement::Damper(e) => &e.marker_i,
            ForceElement::Stop(e) => &e.marker_i,
        }
    }
    /// Reference marker name.
    pub fn marker_j(&self) -> &str {
        match self {
            ForceElement::Bushing(e) => &e.marker_j,
            ForceElement::Spring(e) => &e.marker_j,
            ForceElement::Damper(e) => &e.marker_j,
            ForceElement::Stop(e) => &e.marker_j,
        }
    }
    /// The `type` tag: `"bushing"`, `"spring"`, `"damper"` or `"stop"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ForceElement::Bushing(_) => "bushing",
            ForceElement::Spring(_) => "spring",
            ForceElement::Damper(_) => "damper",
            ForceElement::Stop(_) => "stop",
        }
    }
    /// True for the point-to-point elements (spring, damper, stop).
    pub fn is_point_to_point(&self) -> bool {
        !matches!(self, ForceElement::Bushing(_))
    }
    /// The `mirror` flag.
    pub fn mirror(&self) -> bool {
        match self {
            ForceElement::Bushing(e) => e.mirror,
            ForceElement::Spring(e) => e.mirror,
            ForceElement::Damper(e) => e.mirror,
            ForceElement::Stop(e) => e.mirror,
        }
    }
}

/// Kind of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A force applied at the marker position.
    Force,
    /// A torque applied to the marker's body.
    Torque,
    /// A named scalar value read by force elements of open kinds (`[[elements]]` entries map
    /// their input slots to it, e.g. a steering-wheel angle or a drive torque); it acts on no
    /// marker itself (no `marker`, no `direction`).
    Signal,
}

impl InputKind {
    /// Name as written in model files.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Force => "force",
            InputKind::Torque => "torque",
            InputKind::Signal => "signal",
        }
    }
}

/// Frame in which an input direction is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputFrame {
    /// Global coordinates (default).
    #[default]
    Global,
    /// Body frame of the marker's body (follows the body).
    Body,
}

fn default_time_column() -> String {
    "t".into()
}

/// A scalar input signal u(t), internally tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Signal {
    /// u = value.
    Constant {
        /// Constant value.
        value: f64,
    },
    /// u = before for t < time, after for t >= time.
    Step {
        /// Step time, s.
        time: f64,
        /// Value before the step.
        before: f64,
        /// Value from the step on.
        after: f64,
    },
    /// Linear ramp from `from` (t <= start_time) to `to` (t >= end_time), constant outside.
    Ramp {
        /// Ramp start, s.
        start_time: f64,
        /// Ramp end, s (> start_time).
        end_time: f64,
        /// Value before/at the start.
        from: f64,
        /// Value at/after the end.
        to: f64,
    },
    /// u = offset + amplitude sin(2 pi f (t - start_time) + phase) for t >= start_time, u = offset before.
    Sine {
        /// Amplitude.
        amplitude: f64,
        /// Frequency, Hz (>= 0).
        frequency_hz: f64,
        /// Phase at start_time, degrees.
        #[serde(default)]
        phase_deg: f64,
        /// Offset.
        #[serde(default)]
        offset: f64,
        /// Start time, s.
        #[serde(default)]
        start_time: f64,
    },
    /// Tabulated signal, constant before the first and after the last point.
    Table {
        /// Strictly increasing times, s.
        t: Vec<f64>,
        /// Values, same length as `t`.
        value: Vec<f64>,
        /// `"linear"` (default) or `"smooth"`.
        #[serde(default)]
        interpolation: Interpolation,
    },
    /// Set by the caller while the model runs (library `Simulation::set_input`, FMU input,
    /// Python, `sprung run --inputs FILE.csv`); `default` until the caller sets it. Its rate is
    /// taken as zero (the value is held between the caller's updates).
    Runtime {
        /// Value until the caller sets one.
        #[serde(default)]
        default: f64,
    },
    /// CSV file (relative to the model file), replaced by a `table` at load time.
    Csv {
        /// Path relative to the model file's directory.
        file: String,
        /// Value column header.
        column: String,
        /// Time column header (default `"t"`).
        #[serde(default = "default_time_column")]
        time_column: String,
    },
}

/// `[[inputs]]`: an external force or torque, value = direction * signal(t).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Unique input name.
    pub name: String,
    /// `"force"`, `"torque"` or `"signal"` (a scalar read by `[[elements]]`).
    pub kind: InputKind,
    /// Marker at which a force or torque input acts (must not be on the ground); empty (absent)
    /// for a `signal` input.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub marker: String,
    /// `"global"` (default) or `"body"`.
    #[serde(default)]
    pub frame: InputFrame,
    /// Direction of a force or torque input (non-zero; not normalised: value = direction *
    /// signal); absent for a `signal` input.
    #[serde(default, skip_serializing_if = "is_zero3")]
    pub direction: [f64; 3],
    /// The signal.
    pub signal: Signal,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Output quantity; [`Quantity::unit`] gives its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Marker/body position, m.
    Position,
    /// Marker/body displacement from the design position, m.
    Displacement,
    /// Marker/body velocity, m/s.
    Velocity,
    /// Body angular velocity, rad/s.
    AngularVelocity,
    /// Rotation vector relative to design, rad.
    Orientation,
    /// Camber angle, deg (marker local y = spin axis).
    Camber,
    /// Toe angle, deg.
    Toe,
    /// Element force, N (bushing: marker-J axes; P2P: scalar, tension-positive).
    Force,
    /// Bushing torque, Nm (marker-J axes).
    Torque,
    /// Bushing translational deflection (m) or P2P L - L_design (m).
    Deflection,
    /// Bushing rotational deflection, rad.
    RotDeflection,
    /// P2P length, m.
    Length,
    /// P2P length rate, m/s.
    LengthRate,
    /// A named output of an `[[elements]]` element (`output = "..."`); the unit is the one the
    /// element kind declares.
    ElementOutput,
}

impl Quantity {
    /// SI unit string of the quantity.
    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Position
            | Quantity::Displacement
            | Quantity::Deflection
            | Quantity::Length => "m",
            Quantity::Velocity | Quantity::LengthRate => "m/s",
            Quantity::AngularVelocity => "rad/s",
            Quantity::Orientation | Quantity::RotDeflection => "rad",
            Quantity::Camber | Quantity::Toe => "deg",
            Quantity::Force => "N",
            Quantity::Torque => "Nm",
            Quantity::ElementOutput => "",
        }
    }
    /// True for quantities of a marker or body, false for element quantities.
    pub fn is_kinematic(self) -> bool {
        matches!(
            self,
            Quantity::Position
                | Quantity::Displacement
                | Quantity::Velocity
                | Quantity::AngularVelocity
                | Quantity::Orientation
                | Quantity::Camber
                | Quantity::Toe
        )
    }
}

/// Vector component of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// x component.
    X,
    /// y component.
    Y,
    /// z component.
    Z,
    /// Euclidean norm.
    Norm,
}

/// Frame of a vector output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputFrame {
    /// Global axes (default).
    #[default]
    Global,
    /// Local axes of the marker / body.
    Local,
}

/// `[[outputs]]`: one result channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Channel name (column name in results).
    pub name: String,
    /// The quantity.
    pub quantity: Quantity,
    /// Marker (exactly one of `marker` / `body` / `element`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// Body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Force element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// Component (default `x` for vector quantities; must be absent for scalar quantities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<Component>,
    /// Frame: for marker/body vector quantities `global` (default) or `local` (marker/body
    /// axes); for element `force`/`torque` `local` (default: marker-J axes; P2P: the scalar
    /// tension-positive force) or `global` (global axes, a vector also for P2P elements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<OutputFrame>,
    /// `element_output` only: the name of the element kind's output (see `sprung elements`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Element `force`/`torque` only: the body whose load is reported, `body_i` (default, the
    /// action body of marker I) or `body_j` (the reference body of marker J, e.g. the chassis:
    /// the opposite force; for a bushing the torque about the bushing point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<ElementSide>,
    /// Also create the y-mirrored copy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Which body of a force element an output refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ElementSide {
    /// The body of marker I (action body).
    #[default]
    BodyI,
    /// The body of marker J (reference body).
    BodyJ,
}

impl Output {
    /// Effective component: the given one or `X` by default.
    pub fn component(&self) -> Component {
        self.component.unwrap_or(Component::X)
    }
    /// Unit of the channel (from the quantity).
    pub fn unit(&self) -> &'static str {
        self.quantity.unit()
    }
    /// Effective frame: the given one or `Global` by default.
    pub fn frame(&self) -> OutputFrame {
        self.frame.unwrap_or_default()
    }
}

/// A parameter value of an `[[elements]]` entry: a number, a list of numbers, or a string (e.g.
/// the name of a curve or a mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// A number.
    Number(f64),
    /// A list of numbers.
    List(Vec<f64>),
    /// A string.
    Text(String),
}

/// `[[elements]]`: a force element of any kind — an open kind (Maxwell element, anti-roll bar,
/// tires, steering systems) or a built-in one (`bushing`, `spring`, `damper`, `stop`, which the
/// loader turns into the [`ForceElement`] its `[[force_elements]]` table would give,
/// [`crate::builtin_kinds`]): any number of markers, parameters by name. The kind's
/// documentation (`sprung elements`) lists its markers, parameters, states and outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenElement {
    /// Unique element name (shared namespace with `[[force_elements]]`).
    pub name: String,
    /// Kind, e.g. `"maxwell"` or `"anti_roll_bar"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Marker names in the order the kind expects.
    pub markers: Vec<String>,
    /// Parameters by name.
    #[serde(default)]
    pub parameters: std::collections::BTreeMap<String, ParamValue>,
    /// Input slots of the kind mapped to model inputs by name (`slot = "input name"`), e.g.
    /// `inputs = { steering_wheel_angle = "delta_w" }`; a slot left out reads 0.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: std::collections::BTreeMap<String, String>,
    /// Also create the y-mirrored copy: for the built-in kinds (bushing, spring, damper, stop)
    /// only, mirrored like their `[[force_elements]]` tables ([`crate::builtin_kinds`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
}

/// Surface type of a `[[roads]]` entry (`docs/roads-and-contact.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoadType {
    /// A flat plane of any inclination: `offset` (height at x = y = 0), and `slope_x_deg` /
    /// `slope_y_deg` or `normal`.
    Plane,
    /// A height profile along a straight path: `distance` → `elevation` table along the
    /// direction `angle_deg` from the x axis through `origin`; constant across the path.
    Profile,
    /// A regular 2D height grid read from a CSV file (`file`, `origin`, `spacing`), bilinear.
    Grid,
    /// A cleat: a bar of `height` and `length` (across its crest line) whose leading edge passes
    /// through `origin`, crest line at `angle_deg` to the y axis; `edge_length` > 0 rounds the
    /// edges with half-cosine blends of that horizontal length.
    Cleat,
    /// A ramp: rises linearly by `height` over `length` from the line through `origin`, then a
    /// plateau (of `plateau_length`, after which it falls again over `length`; endless if
    /// absent).
    Ramp,
    /// A (1 − cos) bump of `height` and base `length` whose crest line passes through `origin`
    /// at `angle_deg` to the y axis: document 002's angled bump crossing.
    Bump,
}

impl RoadType {
    /// Name as written in model files.
    pub fn name(self) -> &'static str {
        match self {
            RoadType::Plane => "plane",
            RoadType::Profile => "profile",
            RoadType::Grid => "grid",
            RoadType::Cleat => "cleat",
            RoadType::Ramp => "ramp",
            RoadType::Bump => "bump",
        }
    }
}

fn default_mu() -> f64 {
    1.0
}

/// A region of a road with its own friction coefficient (μ-split, wet patches): the rectangle
/// `x_min ≤ x ≤ x_max`, `y_min ≤ y ≤ y_max`; an absent bound is open (a half-plane or a strip).
/// Where zones overlap the last one listed wins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrictionZone {
    /// Friction coefficient inside the zone (> 0).
    pub mu: f64,
    /// Lower x bound, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_min: Option<f64>,
    /// Upper x bound, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_max: Option<f64>,
    /// Lower y bound, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_min: Option<f64>,
    /// Upper y bound, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_max: Option<f64>,
}

/// `[[roads]]`: a road surface (height, normal from the height gradient, friction) in global
/// coordinates, z up. Which fields apply depends on `type` ([`RoadType`]); the others must be
/// absent (checked by validation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Road {
    /// Unique road name (tires refer to it with `road = "..."`).
    pub name: String,
    /// Surface type.
    #[serde(rename = "type")]
    pub kind: RoadType,
    /// Friction coefficient of the surface outside the friction zones (default 1).
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Regions with their own friction coefficient.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub friction_zones: Vec<FrictionZone>,
    /// Base height, m: of the plane at x = y = 0, added to profile and grid heights, of the
    /// ground an obstacle stands on (default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: f64,
    /// plane: rise angle along +x, degrees (h = offset + x tan(slope_x) + y tan(slope_y)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_x_deg: Option<f64>,
    /// plane: rise angle along +y, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_y_deg: Option<f64>,
    /// plane: the upward normal instead of slope angles (any length, z component > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normal: Option<[f64; 3]>,
    /// profile, obstacles: a point of the path / crest line, m (default [0, 0]); grid: the (x, y)
    /// of the first grid point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<[f64; 2]>,
    /// profile: direction of the path from the x axis; obstacles: angle of the crest line from
    /// the y axis (the same rotation), degrees (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub angle_deg: Option<f64>,
    /// profile: distances along the path, m (strictly increasing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<Vec<f64>>,
    /// profile: heights at `distance`, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elevation: Option<Vec<f64>>,
    /// grid: CSV file of heights (rows along y, columns along x), relative to the model file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// grid: spacing [dx, dy] of the grid points, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<[f64; 2]>,
    /// cleat, ramp, bump: obstacle height, m (may be negative for a pothole / dip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f64>,
    /// cleat: width across the crest line; ramp: horizontal length of the incline; bump: base
    /// length across the crest line, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// cleat: horizontal length of the rounded (half-cosine) edges, m (default 0: square edges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_length: Option<f64>,
    /// ramp: length of the plateau before the ramp falls again, m (absent: endless plateau).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_length: Option<f64>,
}

/// What happens to the `[[inputs]]` or `[[outputs]]` of an included file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IncludeItems {
    /// Kept, with the subsystem prefix.
    Keep,
    /// Left out.
    Drop,
}

fn default_drop() -> IncludeItems {
    IncludeItems::Drop
}
fn default_keep() -> IncludeItems {
    IncludeItems::Keep
}

/// Where an included file's fixed ground goes (`attach` of `[[subsystems]]`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attach {
    /// Body of the including model that takes the included file's ground (default: the
    /// including model's ground).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground: Option<String>,
    /// Per-marker exceptions: included ground marker (name in the included file, after its
    /// mirroring) -> body of the including model, e.g. the tie rods' inner joints to the rack.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub markers: std::collections::BTreeMap<String, String>,
}

/// `[[subsystems]]`: another model file included with a name prefix and a placement
/// (`docs/model-format.md`, section Subsystems; [`crate::subsystem`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Subsystem {
    /// Prefix of every included name (`name.` + the included name); letters, digits, `_`, `-`;
    /// empty: no prefix (the including file extends the included one).
    pub name: String,
    /// Model file to include, relative to the including file's folder.
    pub file: String,
    /// Placement: translation of the included file's global frame, m.
    #[serde(default)]
    pub position: [f64; 3],
    /// Placement: orientation of the included file's global frame (z-y'-x'' Euler angles, deg).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_zyx_deg: Option<[f64; 3]>,
    /// Where the included ground is attached.
    #[serde(default)]
    pub attach: Attach,
    /// Values of the included file's declared `[[parameters]]`, by their name in that file.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameters: std::collections::BTreeMap<String, f64>,
    /// The included file's force and torque `[[inputs]]`: `"drop"` (default: a subsystem's load
    /// case is not the including model's) or `"keep"`; `signal` inputs are always kept.
    #[serde(default = "default_drop")]
    pub inputs: IncludeItems,
    /// The included file's `[[outputs]]`: `"keep"` (default) or `"drop"`.
    #[serde(default = "default_keep")]
    pub outputs: IncludeItems,
    /// Included bodies merged into other included bodies (a wheel into its carrier), applied
    /// before everything else of the inclusion ([`crate::subsystem`], "Merging bodies").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merge: Vec<Merge>,
    /// Input slots of included `[[elements]]` fed from the including model, by
    /// `"<element>.<slot>"` (names in the included file) -> a source of the including model (a
    /// `signal` input or an element output `"<element>.<output>"`, not prefixed), e.g.
    /// `{ "tire.drive_torque" = "drive_L.torque" }`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub connect: std::collections::BTreeMap<String, String>,
}

/// One entry of `merge` of `[[subsystems]]`: the included body `body` becomes part of the
/// included body `into` (one rigid body: masses added, centre of mass and inertia combined with
/// the parallel-axis terms, `body`'s markers moved to `into` at their design poses, the force
/// elements between the two dropped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Merge {
    /// The body that disappears (its name in the included file, after its mirroring).
    pub body: String,
    /// The body that takes it.
    pub into: String,
    /// Body axis of `body` about which it spins as an element state (a tire with
    /// `spin = "state"` on `into`): its polar moment of inertia about that axis is left out of
    /// the merge (the element carries it); the axis must be a principal axis of `body`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_axis: Option<Axis>,
}
