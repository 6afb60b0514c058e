//! Kinematics-and-compliance (K&C) rig: quasi-static sweeps of an axle (or a car with its body
//! clamped) through the static equilibrium of [`Simulation::equilibrium`] — parallel and
//! opposite wheel travel, a steering sweep, longitudinal force at the wheel centre and at the
//! contact point, lateral force and aligning torque (issue 15 item 2; axles of document 000,
//! `../shared/data/reference-suspensions.md`). `docs/kc.md` describes tests and conventions.
//!
//! **How the rig holds a wheel.** The rig adds its own runtime inputs to a copy of the model:
//! per corner a global force (x, y, z) at the wheel-centre marker and a global torque (x, y, z)
//! on the wheel carrier (a marker the rig adds at the wheel centre). The model's own inputs are
//! set to zero (the rig is the only external load besides gravity). Wheel travel is imposed
//! without adding any stiffness: the vertical wheel force of each held corner is the unknown of
//! a Newton iteration whose residual is the wheel-centre height minus its target (Jacobian =
//! the corners' vertical compliance matrix, from finite differences of equilibria at the start,
//! updated by Broyden's rule and refreshed when the iteration stalls). The wheel is thus free in
//! x, y and all rotations, like a wheel on a frictionless pad driven by a force servo.
//!
//! **Conventions** (global frame of the data sheet: x forward, y left, z up; the model's
//! `camber`/`toe` channels use the same): the spin axis is the local y axis of the wheel-centre
//! marker, oriented outward; camber = −asin(a_z), positive = top of the wheel outward; toe =
//! atan2(a_x, |a_y|), positive = toe-in. The data sheet's rates are rotation rates about +x and
//! +z of the left wheel, i.e. its camber rate is −(ours) and its toe rate (+ = toe-out) −(ours).
//! Travel = wheel-centre z minus its design z (bump > 0). Half-track change = outward y
//! displacement of a point (wheel centre, contact point); wheelbase change = x displacement.
//! The contact point is the point one wheel radius below the wheel centre in the design
//! position, fixed to the carrier (the contact point of a braked wheel).
//!
//! **Roll centre** (kinematic, from the instantaneous centres): in the front view the
//! instantaneous centre of a wheel carrier lies on the normal to the path of its contact point;
//! the roll centre is the intersection of the two normals of an axle (left and right corner),
//! the height is measured from the mean contact-point height. **Side view**: the line from the
//! contact point (or the wheel centre) to the side-view instant centre is normal to that point's
//! path, so its slope is tan θ = dx/dz of the path (positive: the point moves forward in bump).
//! Anti-dive of a front axle (brakes on the carrier) = tan θ_cp · wheelbase / CoG height;
//! anti-lift of a rear axle = −tan θ_cp · l / h, anti-squat (drive torque through the shafts)
//! = −tan θ_wc · l / h (each for the whole brake or drive force on this axle).
//!
//! **Roll** (opposite travel): roll angle = atan((z_L − z_R)/(y_L − y_R)) of the wheel centres
//! (+ when the left wheel rises), roll moment = Σ y_i F_z,i of the vertical wheel forces about the
//! x axis, roll stiffness = d(moment)/d(angle), roll steer = d(toe of the left wheel)/d(angle).
//!
//! Derivatives along a sweep (rates, compliances) are 3-point finite differences on the sweep
//! points (second order on a uniform grid).
//!
//! **Models with ideal or tabulated joints** (the kinematic reduced car, `docs/joints.md`) run the
//! same way: the equilibrium solves for the free bodies' poses and the joint coordinates
//! (`sprung_mbs::equilibrium`, "Models with ideal joints"), and the rig reads the expanded body
//! poses ([`Simulation::body_poses`]; the design poses with every joint coordinate at 0). The
//! force servo is damped (a force step that brings the wheels no closer, or whose equilibrium
//! fails, is halved) and a sweep point that cannot be reached from the last one is approached
//! through the midpoint ([`Rig::run`]): the kinematic car's wheels hang on their rebound stops
//! at the start, and its steering sweep moves the carriers through the tables' rack axis in
//! steps larger than the static Newton's reach.

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use sprung_model as sm;

use crate::{Model, Simulation};

/// What can go wrong in the rig (messages name the option that fixes it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KcError {
    /// The model does not fit the rig (no wheel-centre marker, no carrier, ...).
    #[error("{0}")]
    Setup(String),
    /// An equilibrium or a travel target could not be reached.
    #[error("{0}")]
    Solve(String),
    /// From the facade (model compilation, inputs, equilibrium).
    #[error(transparent)]
    Sim(#[from] crate::Error),
}

/// A wheel station: the wheel-centre marker (on the wheel body; its local y axis is the spin
/// axis) and the wheel carrier body (`None`: the one body joined to the wheel by an element).
#[derive(Debug, Clone, PartialEq)]
pub struct CornerSpec {
    /// Name of the wheel-centre marker.
    pub wheel_centre: String,
    /// Name of the carrier body (upright, knuckle).
    pub carrier: Option<String>,
}

/// The state the sweeps start from and return to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reference {
    /// Every wheel centre at this travel from its design height, m (0 = design height).
    Travel(f64),
    /// Every wheel loaded by this vertical force, N (height free).
    Load(f64),
}

/// How the wheels are held vertically in the force and steering tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vertical {
    /// At the reference travel (vertical force adjusted; a K&C rig's wheel pads).
    Travel,
    /// At the reference vertical load (height free).
    Load,
}

/// Vehicle data for the anti-dive/-squat percentages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PitchGeometry {
    /// Height of the centre of gravity above the ground, m.
    pub cg_height: f64,
    /// Wheelbase, m.
    pub wheelbase: f64,
    /// Whether the axle is the front axle (anti-dive) or the rear one (anti-lift, anti-squat).
    pub front: bool,
}

/// Rig settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RigOptions {
    /// Wheel stations; empty = detect (markers named `wheel_centre*`).
    pub corners: Vec<CornerSpec>,
    /// Wheel (tyre) radius for the contact point, m.
    pub wheel_radius: f64,
    /// Start state of every test.
    pub reference: Reference,
    /// Vertical holding in the force and steering tests.
    pub vertical: Vertical,
    /// Runtime input swept by the steering test (a rack force or travel input).
    pub steer_input: Option<String>,
    /// Body clamped to the ground by a stiff bushing (the body of a car on a K&C rig).
    pub clamp: Option<String>,
    /// Elements removed before the rig runs (e.g. the tires and drive controllers of a car: the
    /// rig loads the wheels itself); `*` in a name matches any run of characters. The model's
    /// output channels of a removed element are dropped with it.
    pub remove_elements: Vec<String>,
    /// Vehicle data for anti-dive/-lift/-squat in percent (tan θ is reported always).
    pub pitch: Option<PitchGeometry>,
}

impl Default for RigOptions {
    fn default() -> Self {
        Self {
            corners: Vec::new(),
            wheel_radius: DEFAULT_WHEEL_RADIUS,
            reference: Reference::Travel(0.0),
            vertical: Vertical::Travel,
            steer_input: None,
            clamp: None,
            remove_elements: Vec::new(),
            pitch: None,
        }
    }
}

/// Default wheel radius, m (**assumption**: a 205/55 R16 passenger-car tyre, loaded radius
/// ≈ 0.30 m; the reference axles carry no tyre).
pub const DEFAULT_WHEEL_RADIUS: f64 = 0.30;

/// Stiffness of the clamp bushing, N/m and Nm/rad.
const CLAMP_STIFFNESS: f64 = 1e10;

/// The wheel-centre height is held to this, m (far below any K&C resolution; the equilibrium
/// itself is solved to 1e-10 of the load scale).
const TRAVEL_TOLERANCE: f64 = 1e-9;

/// Largest number of halvings of a sweep step that does not converge ([`Rig::run`]).
const MAX_SUBDIVISIONS: usize = 4;

/// Largest number of halvings of one force step of [`Rig::hold_travel`].
const MAX_FORCE_HALVINGS: usize = 8;

/// Vertical force step of the finite-difference compliance matrix, N.
const FD_FORCE: f64 = 50.0;

/// A K&C test programme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Test {
    /// All wheels through the same travel (bump > 0).
    Parallel,
    /// Left wheels +s, right wheels −s (roll).
    Opposite,
    /// Sweep of the steering input at the reference height.
    Steer,
    /// Longitudinal force at the wheel centre (all wheels, global x).
    Fx,
    /// Longitudinal force at the contact point (braking: the moment goes into the carrier).
    FxContact,
    /// Lateral force at the contact point (all wheels, global y).
    Fy,
    /// Aligning torque about global z on the carrier.
    Mz,
}

impl Test {
    /// All tests in report order.
    pub const ALL: [Test; 7] = [
        Test::Parallel,
        Test::Opposite,
        Test::Steer,
        Test::Fx,
        Test::FxContact,
        Test::Fy,
        Test::Mz,
    ];

    /// Short name (CLI, file names).
    pub fn name(self) -> &'static str {
        match self {
            Test::Parallel => "parallel",
            Test::Opposite => "opposite",
            Test::Steer => "steer",
            Test::Fx => "fx",
            Test::FxContact => "fx-contact",
            Test::Fy => "fy",
            Test::Mz => "mz",
        }
    }

    /// The swept quantity's name and SI unit.
    pub fn variable(self) -> (&'static str, &'static str) {
        match self {
            Test::Parallel | Test::Opposite => ("travel", "m"),
            Test::Steer => ("steer input", "input unit"),
            Test::Fx | Test::FxContact => ("Fx", "N"),
            Test::Fy => ("Fy", "N"),
            Test::Mz => ("Mz", "Nm"),
        }
    }

    /// Default symmetric range (half width, SI), `None` for the steering test (units of the
    /// model's input).
    pub fn default_range(self) -> Option<f64> {
        match self {
            Test::Parallel | Test::Opposite => Some(0.08),
            Test::Steer => None,
            Test::Fx | Test::FxContact | Test::Fy => Some(2500.0),
            Test::Mz => Some(250.0),
        }
    }

    /// Whether the swept value is a wheel travel.
    pub fn is_travel(self) -> bool {
        matches!(self, Test::Parallel | Test::Opposite)
    }
}

/// A resolved wheel station.
#[derive(Debug, Clone)]
pub struct Corner {
    /// Label (suffix of the marker name, e.g. `L`).
    pub name: String,
    /// Wheel-centre marker.
    pub wheel_centre: String,
    /// Carrier body.
    pub carrier: String,
    /// +1 left (y > 0), −1 right.
    pub side: f64,
    /// Axle index (corners grouped by design x).
    pub axle: usize,
    /// Design position of the wheel centre, m.
    pub design_centre: Vector3<f64>,
    marker: usize,
    carrier_body: usize,
    /// Contact point in carrier coordinates.
    contact_local: Vector3<f64>,
    /// Input indices: fx, fy, fz, mx, my, mz.
    inputs: [usize; 6],
}

/// State of one corner at one sweep point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CornerState {
    /// Wheel-centre position, global, m.
    pub centre: Vector3<f64>,
    /// Contact point (carrier-fixed), global, m.
    pub contact: Vector3<f64>,
    /// Toe, deg (+ toe-in).
    pub toe: f64,
    /// Camber, deg (+ top outward).
    pub camber: f64,
    /// Applied wheel force, global, N (z = vertical wheel load).
    pub force: Vector3<f64>,
    /// Applied torque on the carrier, global, Nm.
    pub torque: Vector3<f64>,
}

/// One sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Swept value (m, N, Nm or the steering input's unit).
    pub x: f64,
    /// Corners in [`Rig::corners`] order.
    pub corners: Vec<CornerState>,
}

/// Result of one test.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The test.
    pub test: Test,
    /// Points in ascending x.
    pub points: Vec<Point>,
    /// Corner labels.
    pub corner_names: Vec<String>,
    /// Design wheel-centre positions.
    pub design: Vec<Vector3<f64>>,
    /// Outward sign per corner.
    pub sides: Vec<f64>,
    /// Axle pairs (left index, right index).
    pub axles: Vec<(usize, usize)>,
}

/// The rig: a copy of the model with the rig's inputs, one simulation and the corners.
pub struct Rig {
    sim: Simulation,
    corners: Vec<Corner>,
    axles: Vec<(usize, usize)>,
    options: RigOptions,
    steer: Option<usize>,
    /// Vertical compliance matrix dz_i/dFz_j, m/N (Broyden-updated).
    compliance: DMatrix<f64>,
    /// Reference state (positions, velocities and inputs) after [`Rig::new`].
    reference: crate::Snapshot,
    /// Wheel travel of every corner in the reference state, m.
    ref_heights: Vec<f64>,
}

fn marker_pose(
    cm: &sprung_mbs::CompiledModel,
    r: &[f64],
    m: usize,
) -> (Vector3<f64>, Matrix3<f64>) {
    let mk = &cm.markers[m];
    match mk.body {
        None => (mk.position, mk.axes),
        Some(b) => {
            let rot = sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]);
            let p = Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]);
            (p + rot * mk.position, rot * mk.axes)
        }
    }
}

/// The bodies' design poses (7 per body) of `cm`: the design state with every joint coordinate
/// at 0 (a jointed body's design pose, `docs/joints.md`), expanded to full poses.
fn design_poses(cm: &sprung_mbs::CompiledModel) -> Vec<f64> {
    let (mut r, mut v) = cm.design_state();
    if cm.joints.is_empty() {
        return r;
    }
    for &b in &cm.joints.order {
        r[7 * b..7 * b + 7].fill(0.0);
        v[6 * b..6 * b + 6].fill(0.0);
    }
    let (mut rf, mut vf) = (r.clone(), v.clone());
    cm.joints.expand(&r, &v, &mut rf, &mut vf);
    rf
}

/// Position and orientation of body `b` in the full poses `r` (expanded, [`design_poses`],
/// [`Simulation::body_poses`]).
fn body_pose(r: &[f64], b: usize) -> (Vector3<f64>, Matrix3<f64>) {
    (
        Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]),
        sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]),
    )
}

/// Toe and camber (deg) of a spin axis `a` on side `side` (module docs).
pub fn toe_camber(a: Vector3<f64>, side: f64) -> (f64, f64) {
    let a = if a.y * side < 0.0 { -a } else { a };
    (
        a.x.atan2(a.y.abs()).to_degrees(),
        (-a.z.clamp(-1.0, 1.0).asin()).to_degrees(),
    )
}

/// The wheel-centre markers of the reference axles: names starting with `wheel_centre` or
/// `wheel_center`, on a body.
fn detect_corners(d: &sm::Model) -> Vec<CornerSpec> {
    d.markers
        .iter()
        .filter(|m| {
            (m.name.starts_with("wheel_centre") || m.name.starts_with("wheel_center"))
                && m.body != d.model.ground
        })
        .map(|m| CornerSpec {
            wheel_centre: m.name.clone(),
            carrier: None,
        })
        .collect()
}

/// Bodies joined to `body` by a force element (built-in or open), except `body` and the ground.
pub(crate) fn neighbours(d: &sm::Model, body: &str) -> Vec<String> {
    let body_of = |marker: &str| {
        d.markers
            .iter()
            .find(|m| m.name == marker)
            .map(|m| m.body.clone())
    };
    let mut out: Vec<String> = Vec::new();
    let mut consider = |markers: &[&str]| {
        let bodies: Vec<String> = markers.iter().filter_map(|m| body_of(m)).collect();
        if bodies.iter().any(|b| b == body) {
            for b in bodies {
                if b != body && b != d.model.ground && !out.contains(&b) {
                    out.push(b);
                }
            }
        }
    };
    for e in &d.force_elements {
        consider(&[e.marker_i(), e.marker_j()]);
    }
    for e in &d.elements {
        let ms: Vec<&str> = e.markers.iter().map(String::as_str).collect();
        consider(&ms);
    }
    out
}

impl Rig {
    /// Builds the rig for `model` and solves the reference state.
    pub fn new(model: &Model, options: RigOptions) -> Result<Self, KcError> {
        if !(options.wheel_radius.is_finite() && options.wheel_radius > 0.0) {
            return Err(KcError::Setup(format!(
                "wheel radius {} m is not positive; set it with --wheel-radius",
                options.wheel_radius
            )));
        }
        let mut d = model.description().clone();
        d.parameter_base = None;
        for pattern in &options.remove_elements {
            let removed: Vec<String> = d
                .force_elements
                .iter()
                .map(|e| e.name().to_string())
                .chain(d.elements.iter().map(|e| e.name.clone()))
                .filter(|n| sm::parameters::glob(pattern, n))
                .collect();
            if removed.is_empty() {
                return Err(KcError::Setup(format!(
                    "--remove-element {pattern}: the model has no element of that name \
                     (`*` matches any run of characters; `sprung check MODEL` lists the elements)"
                )));
            }
            d.force_elements
                .retain(|e| !removed.iter().any(|n| n == e.name()));
            d.elements.retain(|e| !removed.contains(&e.name));
            // The rig computes its own channels; the model's outputs of a removed element
            // (a car's tire forces) go with it.
            d.outputs
                .retain(|o| o.element.as_ref().is_none_or(|e| !removed.contains(e)));
        }
        let specs = if options.corners.is_empty() {
            detect_corners(&d)
        } else {
            options.corners.clone()
        };
        if specs.is_empty() {
            return Err(KcError::Setup(format!(
                "model '{}' has no wheel-centre marker (a marker named wheel_centre* on the wheel body, \
                 local y = spin axis); name them with --wheel-centre MARKER (once per wheel)",
                d.model.name
            )));
        }
        // The model's vertical wheel loads at t = 0 (global force inputs on the wheel bodies)
        // start the first equilibrium near the design height; then the rig is the only external
        // load: the model's inputs are set to zero.
        let start_load = |d: &sm::Model, wheel_body: &str| -> f64 {
            d.inputs
                .iter()
                .filter(|u| {
                    u.kind == sm::InputKind::Force
                        && u.frame == sm::InputFrame::Global
                        && d.markers
                            .iter()
                            .any(|m| m.name == u.marker && m.body == wheel_body)
                })
                .map(|u| u.direction[2] * u.signal.value(0.0))
                .sum()
        };
        let start_loads: Vec<f64> = specs
            .iter()
            .map(|s| {
                d.markers
                    .iter()
                    .find(|m| m.name == s.wheel_centre)
                    .map(|m| start_load(&d, &m.body))
                    .unwrap_or(0.0)
            })
            .collect();
        for u in &mut d.inputs {
            u.signal = sm::Signal::Runtime { default: 0.0 };
        }
        let mut resolved = Vec::new();
        for (k, s) in specs.iter().enumerate() {
            let Some(mk) = d.markers.iter().find(|m| m.name == s.wheel_centre) else {
                return Err(KcError::Setup(format!(
                    "--wheel-centre {}: model '{}' has no marker of that name",
                    s.wheel_centre, d.model.name
                )));
            };
            let wheel_body = mk.body.clone();
            if wheel_body == d.model.ground {
                return Err(KcError::Setup(format!(
                    "wheel-centre marker {} is on the ground; it must be on the wheel body",
                    s.wheel_centre
                )));
            }
            let carrier = match &s.carrier {
                Some(c) => {
                    if !d.bodies.iter().any(|b| b.name == *c) {
                        return Err(KcError::Setup(format!(
                            "--carrier {c}: model '{}' has no body of that name",
                            d.model.name
                        )));
                    }
                    c.clone()
                }
                None => {
                    let n = neighbours(&d, &wheel_body);
                    if n.len() != 1 {
                        return Err(KcError::Setup(format!(
                            "cannot tell the wheel carrier of {} (body {wheel_body}): {} bodies are joined to it ({}); name it with --carrier BODY (once per wheel, in --wheel-centre order)",
                            s.wheel_centre,
                            n.len(),
                            n.join(", ")
                        )));
                    }
                    n[0].clone()
                }
            };
            let label = s
                .wheel_centre
                .rsplit_once('_')
                .map(|(_, t)| t.to_string())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| format!("{k}"));
            resolved.push((s.wheel_centre.clone(), carrier, label));
        }
        // Clamp (car body on the rig).
        if let Some(body) = &options.clamp {
            let Some(b) = d.bodies.iter().find(|b| b.name == *body) else {
                return Err(KcError::Setup(format!(
                    "--clamp {body}: model '{}' has no body of that name",
                    d.model.name
                )));
            };
            let pos = b.position;
            d.markers.push(marker("kc_clamp_body", body, pos));
            d.markers
                .push(marker("kc_clamp_ground", &d.model.ground.clone(), pos));
            d.force_elements
                .push(sm::ForceElement::Bushing(sm::Bushing::elastic(
                    "kc_clamp",
                    "kc_clamp_body",
                    "kc_clamp_ground",
                    [CLAMP_STIFFNESS; 3],
                    [CLAMP_STIFFNESS; 3],
                )));
        }
        // The rig's inputs.
        let mut input_names = Vec::new();
        for (wc, carrier, label) in &resolved {
            // The wheel centre's global design position (markers may be given in body axes).
            let pos = {
                let cm = model.compiled();
                let r = design_poses(cm);
                let m = cm
                    .markers
                    .iter()
                    .position(|m| m.name == *wc)
                    .expect("resolved");
                let (p, _) = marker_pose(cm, &r, m);
                [p.x, p.y, p.z]
            };
            let cmk = format!("kc_carrier_{label}");
            d.markers.push(marker(&cmk, carrier, pos));
            let mut names = Vec::new();
            for (kind, mk, axis, dir) in [
                (sm::InputKind::Force, wc.as_str(), "fx", [1.0, 0.0, 0.0]),
                (sm::InputKind::Force, wc.as_str(), "fy", [0.0, 1.0, 0.0]),
                (sm::InputKind::Force, wc.as_str(), "fz", [0.0, 0.0, 1.0]),
                (sm::InputKind::Torque, cmk.as_str(), "mx", [1.0, 0.0, 0.0]),
                (sm::InputKind::Torque, cmk.as_str(), "my", [0.0, 1.0, 0.0]),
                (sm::InputKind::Torque, cmk.as_str(), "mz", [0.0, 0.0, 1.0]),
            ] {
                let name = format!("kc_{axis}_{label}");
                if d.inputs.iter().any(|u| u.name == name) {
                    return Err(KcError::Setup(format!(
                        "model '{}' already has an input '{name}' (a name the rig uses); rename it",
                        d.model.name
                    )));
                }
                d.inputs.push(sm::Input {
                    name: name.clone(),
                    kind,
                    marker: mk.to_string(),
                    frame: sm::InputFrame::Global,
                    direction: dir,
                    signal: sm::Signal::Runtime { default: 0.0 },
                    mirror: false,
                });
                names.push(name);
            }
            input_names.push(names);
        }
        let rig_model = Model::from_description_with(d, model.registry())?;
        let cm = rig_model.compiled().clone();
        let r0 = design_poses(&cm);
        let mut corners = Vec::new();
        for (k, (wc, carrier, label)) in resolved.iter().enumerate() {
            let m = cm
                .markers
                .iter()
                .position(|m| m.name == *wc)
                .expect("exists");
            let cb = cm
                .bodies
                .iter()
                .position(|b| b.name == *carrier)
                .expect("exists");
            let (p, _) = marker_pose(&cm, &r0, m);
            if p.y.abs() < 1e-6 {
                return Err(KcError::Setup(format!(
                    "wheel centre {wc} lies on y = 0: cannot tell left from right (the rig needs y > 0 left, y < 0 right)"
                )));
            }
            let (pc, rc) = body_pose(&r0, cb);
            let contact = p - Vector3::new(0.0, 0.0, options.wheel_radius);
            let mut inputs = [0; 6];
            for (i, n) in input_names[k].iter().enumerate() {
                inputs[i] = cm.input_index(n).expect("added above");
            }
            corners.push(Corner {
                name: label.clone(),
                wheel_centre: wc.clone(),
                carrier: carrier.clone(),
                side: p.y.signum(),
                axle: 0,
                design_centre: p,
                marker: m,
                carrier_body: cb,
                contact_local: rc.transpose() * (contact - pc),
                inputs,
            });
        }
        // Axles: corners grouped by design x (within 0.3 m), one left and one right each.
        let mut axles = Vec::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, c) in corners.iter().enumerate() {
            match groups
                .iter_mut()
                .find(|g| (corners[g[0]].design_centre.x - c.design_centre.x).abs() < 0.3)
            {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        for (a, g) in groups.iter().enumerate() {
            for &i in g {
                corners[i].axle = a;
            }
            let l: Vec<usize> = g
                .iter()
                .copied()
                .filter(|&i| corners[i].side > 0.0)
                .collect();
            let rr: Vec<usize> = g
                .iter()
                .copied()
                .filter(|&i| corners[i].side < 0.0)
                .collect();
            if l.len() == 1 && rr.len() == 1 {
                axles.push((l[0], rr[0]));
            }
        }
        let steer = match &options.steer_input {
            Some(s) => Some(cm.input_index(s).ok_or_else(|| {
                KcError::Setup(format!(
                    "--steer-input {s}: the model has no input of that name; its inputs are: {}",
                    model.input_names().join(", ")
                ))
            })?),
            None => None,
        };
        let settings = rig_model.default_settings();
        let sim = Simulation::with_settings(rig_model, settings)?;
        let n = corners.len();
        let reference = sim.state();
        let mut rig = Rig {
            sim,
            corners,
            axles,
            options,
            steer,
            compliance: DMatrix::zeros(n, n),
            reference,
            ref_heights: vec![0.0; n],
        };
        for (i, f) in start_loads.into_iter().enumerate() {
            rig.set(i, 2, f)?;
        }
        rig.solve_reference()?;
        Ok(rig)
    }

    /// The corners.
    pub fn corners(&self) -> &[Corner] {
        &self.corners
    }

    /// Axles as (left corner, right corner) index pairs.
    pub fn axles(&self) -> &[(usize, usize)] {
        &self.axles
    }

    /// The rig's simulation (the model copy with the rig's inputs).
    pub fn simulation(&mut self) -> &mut Simulation {
        &mut self.sim
    }

    /// The vertical compliance matrix dz_i/dFz_j at the reference state, m/N.
    pub fn vertical_compliance(&self) -> &DMatrix<f64> {
        &self.compliance
    }

    fn equilibrium(&mut self) -> Result<(), KcError> {
        self.sim
            .equilibrium()
            .map_err(|e| KcError::Solve(format!("quasi-static point: {e}")))?;
        Ok(())
    }

    fn heights(&mut self) -> DVector<f64> {
        let (r, _) = self.sim.body_poses();
        let cm = self.sim.model().compiled();
        DVector::from_iterator(
            self.corners.len(),
            self.corners
                .iter()
                .map(|c| marker_pose(cm, &r, c.marker).0.z - c.design_centre.z),
        )
    }

    fn set(&mut self, corner: usize, axis: usize, value: f64) -> Result<(), KcError> {
        let k = self.corners[corner].inputs[axis];
        self.sim.set_input(k, value)?;
        Ok(())
    }

    fn get(&self, corner: usize, axis: usize) -> f64 {
        self.sim
            .input(self.corners[corner].inputs[axis])
            .expect("rig input")
    }

    /// Finite-difference vertical compliance matrix at the current state.
    fn refresh_compliance(&mut self) -> Result<(), KcError> {
        let base = self.sim.state();
        let z0 = self.heights();
        let n = self.corners.len();
        for j in 0..n {
            let f = self.get(j, 2);
            self.set(j, 2, f + FD_FORCE)?;
            self.equilibrium()?;
            let dz = (self.heights() - &z0) / FD_FORCE;
            self.compliance.set_column(j, &dz);
            self.sim.set_state(&base)?;
        }
        Ok(())
    }

    /// Adjusts the vertical forces of the corners with a target (travel, m) until their wheel
    /// centres are there (module docs); the others keep their force.
    pub fn hold_travel(&mut self, targets: &[Option<f64>]) -> Result<(), KcError> {
        self.equilibrium()?;
        let held: Vec<usize> = (0..self.corners.len())
            .filter(|&i| targets[i].is_some())
            .collect();
        if held.is_empty() {
            return Ok(());
        }
        let nh = held.len();
        let residual = |rig: &mut Self| {
            let z = rig.heights();
            DVector::from_iterator(nh, held.iter().map(|&i| z[i] - targets[i].unwrap_or(0.0)))
        };
        let mut res = residual(self);
        let mut refreshed = false;
        let mut best = res.amax();
        for _ in 0..60 {
            if res.amax() < TRAVEL_TOLERANCE {
                return Ok(());
            }
            let jac = DMatrix::from_fn(nh, nh, |a, b| self.compliance[(held[a], held[b])]);
            let Some(df) = jac.clone().lu().solve(&(-&res)) else {
                return Err(KcError::Solve(
                    "the vertical compliance of the wheels is singular (a wheel without vertical stiffness?)".into(),
                ));
            };
            // Damped: a force step that does not bring the held wheels closer to their targets
            // (or whose equilibrium fails: the wheel pulled beyond what the suspension carries)
            // is halved, from the state before it — the compliance at the start (a wheel
            // hanging on its rebound stop) can be far from the one on the way.
            let base = self.sim.state();
            let f0: Vec<f64> = held.iter().map(|&i| self.get(i, 2)).collect();
            let mut df = df;
            let mut halvings = 0;
            let new = loop {
                for (a, &i) in held.iter().enumerate() {
                    self.set(i, 2, f0[a] + df[a])?;
                }
                let last = halvings >= MAX_FORCE_HALVINGS;
                match self.equilibrium() {
                    Ok(()) => {
                        let new = residual(self);
                        if new.amax() < res.amax() || last {
                            break new;
                        }
                    }
                    Err(e) if last => return Err(e),
                    Err(_) => {}
                }
                self.sim.set_state(&base)?;
                df *= 0.5;
                halvings += 1;
            };
            // Broyden's update of the held block.
            let dz = &new - &res;
            let denom = df.dot(&df);
            if denom > 0.0 {
                let upd = (&dz - &jac * &df) * df.transpose() / denom;
                for a in 0..nh {
                    for b in 0..nh {
                        self.compliance[(held[a], held[b])] += upd[(a, b)];
                    }
                }
            }
            res = new;
            if res.amax() > 0.5 * best && !refreshed && res.amax() >= TRAVEL_TOLERANCE {
                self.refresh_compliance()?;
                refreshed = true;
            }
            best = best.min(res.amax());
        }
        let (a, _) = res.iamax_full();
        let c = &self.corners[held[a]];
        Err(KcError::Solve(format!(
            "wheel {} ({}): travel target {:.1} mm not reached (off by {:.3e} m, vertical force {:.0} N); the travel may be beyond the suspension's range (stops): reduce --range",
            c.name,
            c.wheel_centre,
            targets[held[a]].unwrap_or(0.0) * 1e3,
            res[a],
            self.get(held[a], 2)
        )))
    }

    fn solve_reference(&mut self) -> Result<(), KcError> {
        let n = self.corners.len();
        self.equilibrium()?;
        self.refresh_compliance()?;
        match self.options.reference {
            Reference::Travel(s) => self.hold_travel(&vec![Some(s); n])?,
            Reference::Load(f) => {
                for i in 0..n {
                    self.set(i, 2, f)?;
                }
                self.equilibrium()?;
            }
        }
        self.refresh_compliance()?;
        self.reference = self.sim.state();
        self.ref_heights = self.heights().iter().copied().collect();
        Ok(())
    }

    /// The corner states at the current equilibrium.
    pub fn corner_states(&mut self) -> Vec<CornerState> {
        let (r, _) = self.sim.body_poses();
        let r = &r[..];
        let cm = self.sim.model().compiled();
        self.corners
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (p, axes) = marker_pose(cm, r, c.marker);
                let (pc, rc) = body_pose(r, c.carrier_body);
                let (toe, camber) = toe_camber(axes.column(1).into_owned(), c.side);
                CornerState {
                    centre: p,
                    contact: pc + rc * c.contact_local,
                    toe,
                    camber,
                    force: Vector3::new(self.get(i, 0), self.get(i, 1), self.get(i, 2)),
                    torque: Vector3::new(self.get(i, 3), self.get(i, 4), self.get(i, 5)),
                }
            })
            .collect()
    }

    /// Reference state's travel per corner (m) and vertical loads (N).
    pub fn reference_state(&mut self) -> Result<Vec<CornerState>, KcError> {
        let s = self.reference.clone();
        self.sim.set_state(&s)?;
        Ok(self.corner_states())
    }

    /// Sweep points: `steps` values evenly from −range to +range (odd `steps` contain 0).
    pub fn values(range: f64, steps: usize) -> Vec<f64> {
        let n = steps.max(3);
        (0..n)
            .map(|k| -range + 2.0 * range * k as f64 / (n - 1) as f64)
            .collect()
    }

    /// Runs `test` over the values `xs` (any order; the result is sorted ascending). Every
    /// point starts from the nearest solved point (warm start); the rig returns to the
    /// reference state afterwards. `progress(k, n)` is called after each point.
    pub fn run(
        &mut self,
        test: Test,
        xs: &[f64],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Sweep, KcError> {
        if test == Test::Steer && self.steer.is_none() {
            return Err(KcError::Setup(
                "the steering test needs a steering input: name it with --steer-input INPUT".into(),
            ));
        }
        if test == Test::Opposite && self.axles.is_empty() {
            return Err(KcError::Setup(
                "opposite wheel travel needs an axle with one left (y > 0) and one right (y < 0) wheel centre".into(),
            ));
        }
        let mut xs: Vec<f64> = xs.to_vec();
        if xs.iter().any(|x| !x.is_finite()) {
            return Err(KcError::Setup("sweep values must be finite".into()));
        }
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        // Sweep outward from the point nearest to 0 in both directions (continuation).
        let start = (0..xs.len())
            .min_by(|&a, &b| xs[a].abs().total_cmp(&xs[b].abs()))
            .unwrap_or(0);
        let order: Vec<usize> = (start..xs.len()).chain((0..start).rev()).collect();
        let mut points: Vec<Option<Point>> = vec![None; xs.len()];
        let reference = self.reference.clone();
        let compliance = self.compliance.clone();
        let mut done = 0;
        // The last solved point (swept value, state) to continue from.
        let mut last = (0.0, reference.clone());
        for (k, &i) in order.iter().enumerate() {
            if k == 0 || i + 1 == start {
                self.sim.set_state(&reference)?;
                self.compliance.copy_from(&compliance);
                last = (0.0, reference.clone());
            }
            let p = self
                .point_continued(test, &last, xs[i], MAX_SUBDIVISIONS)
                .map_err(|e| match e {
                    KcError::Solve(m) => KcError::Solve(format!(
                        "{} test at {} = {}: {m}",
                        test.name(),
                        test.variable().0,
                        xs[i]
                    )),
                    e => e,
                })?;
            last = (xs[i], self.sim.state());
            points[i] = Some(p);
            done += 1;
            progress(done, xs.len());
        }
        self.sim.set_state(&reference)?;
        self.compliance.copy_from(&compliance);
        Ok(Sweep {
            test,
            points: points.into_iter().map(|p| p.expect("all solved")).collect(),
            corner_names: self.corners.iter().map(|c| c.name.clone()).collect(),
            design: self.corners.iter().map(|c| c.design_centre).collect(),
            sides: self.corners.iter().map(|c| c.side).collect(),
            axles: self.axles.clone(),
        })
    }

    /// [`Rig::point`] at `x` continued from the solved point `from` (value, state): if the
    /// point's equilibrium cannot be reached from there in one go (Newton's convergence region
    /// is smaller than the sweep's step, e.g. a large steering step of the kinematic car), the
    /// midpoint is solved first, up to `depth` halvings of the step.
    fn point_continued(
        &mut self,
        test: Test,
        from: &(f64, crate::Snapshot),
        x: f64,
        depth: usize,
    ) -> Result<Point, KcError> {
        match self.point(test, x) {
            Err(KcError::Solve(_)) if depth > 0 => {
                self.sim.set_state(&from.1)?;
                let mid = 0.5 * (from.0 + x);
                self.point_continued(test, from, mid, depth - 1)?;
                let half = (mid, self.sim.state());
                self.point_continued(test, &half, x, depth - 1)
            }
            r => r,
        }
    }

    /// One quasi-static point of `test` at value `x`.
    fn point(&mut self, test: Test, x: f64) -> Result<Point, KcError> {
        let n = self.corners.len();
        let ref_heights = self.ref_heights.clone();
        let hold = |rig: &Self| -> Vec<Option<f64>> {
            match rig.options.vertical {
                Vertical::Travel => ref_heights.iter().map(|&z| Some(z)).collect(),
                Vertical::Load => vec![None; n],
            }
        };
        let r = self.options.wheel_radius;
        match test {
            Test::Parallel | Test::Opposite => {
                let targets: Vec<Option<f64>> = (0..n)
                    .map(|i| {
                        let s = if test == Test::Opposite {
                            x * self.corners[i].side
                        } else {
                            x
                        };
                        Some(ref_heights[i] + s)
                    })
                    .collect();
                self.hold_travel(&targets)?;
            }
            Test::Steer => {
                let k = self.steer.expect("checked");
                self.sim.set_input(k, x)?;
                let t = hold(self);
                self.hold_travel(&t)?;
            }
            Test::Fx | Test::FxContact | Test::Fy | Test::Mz => {
                for i in 0..n {
                    let (f, m) = match test {
                        Test::Fx => ([x, 0.0, 0.0], [0.0, 0.0, 0.0]),
                        // force at the contact point = force at the centre + (−r e_z) × F on the carrier
                        Test::FxContact => ([x, 0.0, 0.0], [0.0, -r * x, 0.0]),
                        Test::Fy => ([0.0, x, 0.0], [r * x, 0.0, 0.0]),
                        _ => ([0.0, 0.0, 0.0], [0.0, 0.0, x]),
                    };
                    self.set(i, 0, f[0])?;
                    self.set(i, 1, f[1])?;
                    self.set(i, 3, m[0])?;
                    self.set(i, 4, m[1])?;
                    self.set(i, 5, m[2])?;
                }
                let t = hold(self);
                self.hold_travel(&t)?;
            }
        }
        Ok(Point {
            x,
            corners: self.corner_states(),
        })
    }
}

fn marker(name: &str, body: &str, global: [f64; 3]) -> sm::Marker {
    sm::Marker {
        name: name.into(),
        body: body.into(),
        global_position: Some(global),
        position: None,
        frame: None,
        global_axes: None,
        euler_zyx_deg: None,
        mirror: false,
    }
}

/// 3-point finite-difference derivative dy/dx at every point of a (nonuniform) grid.
pub fn gradient(x: &[f64], y: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 2 {
        return vec![f64::NAN; n];
    }
    if n == 2 {
        let g = (y[1] - y[0]) / (x[1] - x[0]);
        return vec![g, g];
    }
    (0..n)
        .map(|i| {
            // Lagrange derivative through three neighbouring points.
            let (a, b, c) = if i == 0 {
                (0, 1, 2)
            } else if i == n - 1 {
                (n - 3, n - 2, n - 1)
            } else {
                (i - 1, i, i + 1)
            };
            let (x0, x1, x2, t) = (x[a], x[b], x[c], x[i]);
            y[a] * (2.0 * t - x1 - x2) / ((x0 - x1) * (x0 - x2))
                + y[b] * (2.0 * t - x0 - x2) / ((x1 - x0) * (x1 - x2))
                + y[c] * (2.0 * t - x0 - x1) / ((x2 - x0) * (x2 - x1))
        })
        .collect()
}

/// Named per-corner and per-axle curves and the figures at the reference point of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name, e.g. `toe_L` (CSV header adds the unit).
    pub name: String,
    /// Unit.
    pub unit: &'static str,
    /// Values per sweep point.
    pub values: Vec<f64>,
}

impl Sweep {
    /// The swept values.
    pub fn xs(&self) -> Vec<f64> {
        self.points.iter().map(|p| p.x).collect()
    }

    fn series(&self, corner: usize, f: impl Fn(&CornerState) -> f64) -> Vec<f64> {
        self.points.iter().map(|p| f(&p.corners[corner])).collect()
    }

    /// Wheel travel of a corner (m) at every point.
    pub fn travel(&self, corner: usize) -> Vec<f64> {
        let z0 = self.design[corner].z;
        self.series(corner, |c| c.centre.z - z0)
    }

    /// Toe (deg) of a corner.
    pub fn toe(&self, corner: usize) -> Vec<f64> {
        self.series(corner, |c| c.toe)
    }

    /// Camber (deg) of a corner.
    pub fn camber(&self, corner: usize) -> Vec<f64> {
        self.series(corner, |c| c.camber)
    }

    /// Wheel-centre displacement component `k` (0 x, 1 y, 2 z) from the design position, m.
    pub fn centre_displacement(&self, corner: usize, k: usize) -> Vec<f64> {
        let d = self.design[corner][k];
        self.series(corner, |c| c.centre[k] - d)
    }

    /// Half-track change at the wheel centre (outward y displacement), m.
    pub fn half_track_centre(&self, corner: usize) -> Vec<f64> {
        let (s, d) = (self.sides[corner], self.design[corner].y);
        self.series(corner, |c| s * (c.centre.y - d))
    }

    /// Half-track change at the contact point (outward y displacement), m.
    pub fn half_track_contact(&self, corner: usize) -> Vec<f64> {
        // the design contact point lies straight below the wheel centre
        let (s, d) = (self.sides[corner], self.design[corner].y);
        self.series(corner, |c| s * (c.contact.y - d))
    }

    /// Vertical wheel force applied by the rig, N.
    pub fn wheel_load(&self, corner: usize) -> Vec<f64> {
        self.series(corner, |c| c.force.z)
    }

    /// Derivative of `y` along the sweep (per unit of the swept variable).
    pub fn slope(&self, y: &[f64]) -> Vec<f64> {
        gradient(&self.xs(), y)
    }

    /// Derivative of `y` with respect to a corner's wheel travel (travel tests).
    pub fn per_travel(&self, corner: usize, y: &[f64]) -> Vec<f64> {
        let dz = self.slope(&self.travel(corner));
        self.slope(y).iter().zip(dz).map(|(a, b)| a / b).collect()
    }

    /// Roll-centre height above the mean contact-point height and its y position, m, at every
    /// point, of axle `a` (module docs; meaningful in the parallel-travel test).
    pub fn roll_centre(&self, a: usize) -> Vec<(f64, f64)> {
        let (l, r) = self.axles[a];
        let line = |c: usize| {
            let y = self.series(c, |s| s.contact.y);
            let z = self.series(c, |s| s.contact.z);
            (self.slope(&y), self.slope(&z), y, z)
        };
        let (dyl, dzl, yl, zl) = line(l);
        let (dyr, dzr, yr, zr) = line(r);
        (0..self.points.len())
            .map(|k| {
                // normal lines: t · (P − CP) = 0 with t the contact-point path direction
                let m = nalgebra::Matrix2::new(dyl[k], dzl[k], dyr[k], dzr[k]);
                let rhs = nalgebra::Vector2::new(
                    dyl[k] * yl[k] + dzl[k] * zl[k],
                    dyr[k] * yr[k] + dzr[k] * zr[k],
                );
                match m.lu().solve(&rhs) {
                    Some(p) => (p.y - 0.5 * (zl[k] + zr[k]), p.x),
                    None => (f64::NAN, f64::NAN),
                }
            })
            .collect()
    }

    /// tan θ of the side-view line from the contact point (`contact`) or the wheel centre to the
    /// side-view instant centre: dx/dz of that point's path (travel tests).
    pub fn side_view_tan(&self, corner: usize, contact: bool) -> Vec<f64> {
        let x = if contact {
            self.series(corner, |c| c.contact.x)
        } else {
            self.series(corner, |c| c.centre.x)
        };
        let z = if contact {
            self.series(corner, |c| c.contact.z)
        } else {
            self.series(corner, |c| c.centre.z)
        };
        self.slope(&x)
            .iter()
            .zip(self.slope(&z))
            .map(|(a, b)| a / b)
            .collect()
    }

    /// Index of the point nearest to x = 0 (the reference point of a symmetric sweep).
    pub fn centre_index(&self) -> usize {
        (0..self.points.len())
            .min_by(|&a, &b| self.points[a].x.abs().total_cmp(&self.points[b].x.abs()))
            .unwrap_or(0)
    }

    /// All curves of the sweep as named columns in display units (mm, deg, N, N/mm,
    /// deg/m, deg/kN, mm/kN): per corner the state, per corner the slopes, per axle the roll
    /// centre (parallel travel).
    pub fn columns(&self) -> Vec<Column> {
        let xs = self.xs();
        let (xname, xunit) = self.test.variable();
        let (xscale, xunit) = match xunit {
            "m" => (1e3, "mm"),
            u => (1.0, u),
        };
        let mut cols = vec![Column {
            name: xname.replace(' ', "_"),
            unit: xunit,
            values: xs.iter().map(|x| x * xscale).collect(),
        }];
        let mm = |v: Vec<f64>| v.into_iter().map(|x| x * 1e3).collect::<Vec<_>>();
        let travel_test = self.test.is_travel();
        for (c, name) in self.corner_names.iter().enumerate() {
            let mut push = |n: &str, unit: &'static str, values: Vec<f64>| {
                cols.push(Column {
                    name: format!("{n}_{name}"),
                    unit,
                    values,
                })
            };
            push("travel", "mm", mm(self.travel(c)));
            push("toe", "deg", self.toe(c));
            push("camber", "deg", self.camber(c));
            for (k, n) in [(0, "wc_x"), (1, "wc_y"), (2, "wc_z")] {
                push(n, "mm", mm(self.series(c, |s| s.centre[k])));
            }
            push("wc_dx", "mm", mm(self.centre_displacement(c, 0)));
            push("wc_dy", "mm", mm(self.centre_displacement(c, 1)));
            push("wc_dz", "mm", mm(self.centre_displacement(c, 2)));
            push("half_track_wc", "mm", mm(self.half_track_centre(c)));
            push("half_track_cp", "mm", mm(self.half_track_contact(c)));
            push("wheel_load", "N", self.wheel_load(c));
            let p = &self.points;
            push("fx", "N", p.iter().map(|q| q.corners[c].force.x).collect());
            push("fy", "N", p.iter().map(|q| q.corners[c].force.y).collect());
            push(
                "mz",
                "Nm",
                p.iter().map(|q| q.corners[c].torque.z).collect(),
            );
            if travel_test {
                push("toe_rate", "deg/m", self.per_travel(c, &self.toe(c)));
                push("camber_rate", "deg/m", self.per_travel(c, &self.camber(c)));
                push(
                    "track_rate_cp",
                    "mm/m",
                    mm(self.per_travel(c, &self.half_track_contact(c))),
                );
                push(
                    "wheel_rate",
                    "N/mm",
                    self.per_travel(c, &self.wheel_load(c))
                        .iter()
                        .map(|k| k * 1e-3)
                        .collect(),
                );
                push("side_view_tan_cp", "1", self.side_view_tan(c, true));
                push("side_view_tan_wc", "1", self.side_view_tan(c, false));
            } else {
                let per = match self.test {
                    Test::Steer => 1.0,
                    _ => 1e3,
                };
                let unit_of = |base: &'static str| -> &'static str {
                    match (self.test, base) {
                        (Test::Steer, "deg") => "deg/unit",
                        (Test::Steer, _) => "mm/unit",
                        (Test::Mz, "deg") => "deg/kNm",
                        (Test::Mz, _) => "mm/kNm",
                        (_, "deg") => "deg/kN",
                        _ => "mm/kN",
                    }
                };
                push(
                    "toe_compliance",
                    unit_of("deg"),
                    self.slope(&self.toe(c)).iter().map(|v| v * per).collect(),
                );
                push(
                    "camber_compliance",
                    unit_of("deg"),
                    self.slope(&self.camber(c))
                        .iter()
                        .map(|v| v * per)
                        .collect(),
                );
                for (k, n) in [
                    (0, "wc_x_compliance"),
                    (1, "wc_y_compliance"),
                    (2, "wc_z_compliance"),
                ] {
                    push(
                        n,
                        unit_of("mm"),
                        self.slope(&self.centre_displacement(c, k))
                            .iter()
                            .map(|v| v * 1e3 * per)
                            .collect(),
                    );
                }
            }
        }
        if self.test == Test::Opposite {
            for a in 0..self.axles.len() {
                let (l, r) = self.axles[a];
                let tag = format!("{}{}", self.corner_names[l], self.corner_names[r]);
                let phi: Vec<f64> = self
                    .points
                    .iter()
                    .map(|p| {
                        let (cl, cr) = (&p.corners[l], &p.corners[r]);
                        ((cl.centre.z - cr.centre.z) / (cl.centre.y - cr.centre.y))
                            .atan()
                            .to_degrees()
                    })
                    .collect();
                let moment: Vec<f64> = self
                    .points
                    .iter()
                    .map(|p| {
                        let (cl, cr) = (&p.corners[l], &p.corners[r]);
                        cl.centre.y * cl.force.z + cr.centre.y * cr.force.z
                    })
                    .collect();
                let dphi = self.slope(&phi);
                let stiffness = self
                    .slope(&moment)
                    .iter()
                    .zip(&dphi)
                    .map(|(m, p)| m / p)
                    .collect();
                let dtoe = self.slope(&self.toe(l));
                let steer = dtoe.iter().zip(&dphi).map(|(t, p)| t / p).collect();
                for (name, unit, values) in [
                    (format!("roll_angle_{tag}"), "deg", phi),
                    (format!("roll_moment_{tag}"), "Nm", moment),
                    (format!("roll_stiffness_{tag}"), "Nm/deg", stiffness),
                    (
                        format!("roll_steer_{}", self.corner_names[l]),
                        "deg/deg",
                        steer,
                    ),
                ] {
                    cols.push(Column { name, unit, values });
                }
            }
        }
        if self.test == Test::Parallel {
            for a in 0..self.axles.len() {
                let rc = self.roll_centre(a);
                let (l, r) = self.axles[a];
                let tag = format!("{}{}", self.corner_names[l], self.corner_names[r]);
                cols.push(Column {
                    name: format!("roll_centre_height_{tag}"),
                    unit: "mm",
                    values: rc.iter().map(|p| p.0 * 1e3).collect(),
                });
                cols.push(Column {
                    name: format!("roll_centre_y_{tag}"),
                    unit: "mm",
                    values: rc.iter().map(|p| p.1 * 1e3).collect(),
                });
            }
        }
        cols
    }

    /// The column `name`.
    pub fn column(&self, name: &str) -> Option<Column> {
        self.columns().into_iter().find(|c| c.name == name)
    }

    /// The value of column `name` at the reference point ([`Sweep::centre_index`]).
    pub fn at_reference(&self, name: &str) -> Option<f64> {
        let k = self.centre_index();
        self.column(name).map(|c| c.values[k])
    }
}

/// Toe, camber and wheel-centre track change against wheel travel of a model's corners over a
/// parallel-travel sweep from −range to +range (m) in `steps` points — the curves a reduced
/// suspension must reproduce. Default rig options (detected corners, design height).
pub fn travel_curves(model: &Model, range: f64, steps: usize) -> Result<Sweep, KcError> {
    let mut rig = Rig::new(model, RigOptions::default())?;
    rig.run(Test::Parallel, &Rig::values(range, steps), &mut |_, _| {})
}

/// Anti-dive (front) or anti-lift (rear) and anti-squat (rear) in percent from the side-view
/// tangents (module docs): returns (anti-dive or anti-lift, anti-squat; NaN for a front axle).
pub fn anti_pitch_percent(g: &PitchGeometry, tan_cp: f64, tan_wc: f64) -> (f64, f64) {
    let f = g.wheelbase / g.cg_height * 100.0;
    if g.front {
        (tan_cp * f, f64::NAN)
    } else {
        (-tan_cp * f, -tan_wc * f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_is_exact_for_quadratics_on_an_uneven_grid() {
        let x = [-0.3, -0.1, 0.05, 0.2, 0.6];
        let y: Vec<f64> = x.iter().map(|x| 2.0 + 3.0 * x - 5.0 * x * x).collect();
        for (g, x) in gradient(&x, &y).iter().zip(x) {
            assert!((g - (3.0 - 10.0 * x)).abs() < 1e-12, "{g} at {x}");
        }
    }

    #[test]
    fn toe_and_camber_signs() {
        let t = 0.01f64;
        // left wheel (outward +y): top outward = axis tips down; toe-in = axis turns to +x
        let (toe, camber) = toe_camber(Vector3::new(0.0, t.cos(), -t.sin()), 1.0);
        assert!(toe.abs() < 1e-12 && (camber - t.to_degrees()).abs() < 1e-9);
        let (toe, _) = toe_camber(Vector3::new(t.sin(), t.cos(), 0.0), 1.0);
        assert!((toe - t.to_degrees()).abs() < 1e-9);
        // right wheel: the same physical toe-in and camber mirrored (axis may point either way)
        let (toe, camber) = toe_camber(Vector3::new(t.sin(), -t.cos(), 0.0), -1.0);
        assert!((toe - t.to_degrees()).abs() < 1e-9 && camber.abs() < 1e-12);
        let (_, camber) = toe_camber(-Vector3::new(0.0, -t.cos(), -t.sin()), -1.0);
        assert!((camber - t.to_degrees()).abs() < 1e-9);
    }
}
