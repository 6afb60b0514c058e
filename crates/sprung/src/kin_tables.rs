//! Kinematic tables from the full model: document 004's *kinematic* corner (ideal joints in place
//! of the link bushings, `../shared/seeds/004_bf53df81c0e560f5.txt`, sec. 2.2: "Ersetzt man
//! sämtliche Lager durch ideale Gelenke erhält man die rein kinematische Modellierung") solved on
//! a grid of the corner's independent coordinates — the wheel travel s and, at a steered corner,
//! the rack travel r — and written as [`sprung_model::KinematicTable`]s (`sprung kinematics`,
//! `docs/macro-joint.md`, "Kinematic tables").
//!
//! **Corners.** A corner is found from its wheel-centre marker (named `wheel_centre*`, as the
//! K&C rig finds them, [`crate::kc`]): its carrier is the wheel body's only neighbour (the wheel
//! on its bearing) or the marker's body itself (a wheel merged into its carrier). The corner's
//! bodies are the carrier and every light body reached from it through bushings: the links of
//! the macro-joint reduction ([`sprung_reduce::light_bodies`]) and the light bodies joined to
//! their own mirror image (anti-roll bar halves). The other bodies the corner touches are held
//! at their design poses: the *parent* (the ground of an axle model, the chassis of a car: the
//! heaviest one), a subframe, the other anti-roll bar half (its coupling bushing to this half
//! stays without its rotational stiffness — the anti-roll bar's torsion spring —: its
//! translational stiffness is the joint that holds the half's centre on the bar axis; the
//! coupling point lies on that axis, so the other half's rotation would not move it), and a
//! *rack* — a held body joined to the parent by a bushing with exactly one free
//! translational direction (the rack's guide), moved along that direction by r.
//!
//! **What is solved.** Per corner and grid point, the *unloaded* static equilibrium of the
//! corner's bushings alone: every other element is removed (springs, dampers, stops, tires and
//! other open elements, the wheel bearing), gravity is off, the
//! bushings' damping and preloads are dropped, and the wheel-centre height is held at s by a
//! vertical force on the carrier at the wheel centre (the K&C rig's force servo,
//! [`crate::kc::Rig::hold_travel`], here with a soft vertical servo spring beside it so that the
//! servo's Newton iteration knows its slope: the sum of the two is the servo force). Without
//! load the scale of the bushing stiffnesses drops out; what remains is the ratio of rotational
//! to translational stiffness, which sets how far the bushings' markers separate under the
//! moments of their own rotational stiffness — the distance from ideal spherical joints. The
//! rotational stiffnesses (and their curves) are multiplied by [`KinOptions::rotational_factor`]:
//! the markers' separation, and so the table's distance from ideal joints, is proportional to
//! it (measured, `docs/macro-joint.md`), while the rotations the joints leave free (a link's spin
//! about its own axis) stay defined by the scaled rotational stiffnesses.
//!
//! **Continuation.** The grid is solved from the design point outwards: along the travel from 0
//! up, then from 0 down; the rack columns from r = 0 outwards, each column started from the
//! neighbouring column's solution at s = 0. Every equilibrium starts from the last solved point.
//!
//! **Output.** Per corner a table with `parent` = the parent body, axes `travel` (m, wheel-centre
//! height above design along the parent's z) and, at a steered corner, `rack` (m, the rack's
//! displacement along its guide's free axis), and the poses of all the corner's bodies (carrier
//! first) relative to the parent's design frame.

use std::collections::{BTreeMap, BTreeSet};

use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_model::{self as sm, KinematicTable, TableAxis, TableBody};

use crate::{Model, Simulation};

/// What can go wrong (messages name the corner, the grid point and the fix).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KinError {
    /// The model or the options do not fit (no corners, a bad grid, ...).
    #[error("{0}")]
    Setup(String),
    /// An equilibrium of a corner at a grid point did not converge.
    #[error("{0}")]
    Solve(String),
    /// From the facade (model compilation, inputs).
    #[error(transparent)]
    Sim(#[from] crate::Error),
}

/// Default rotational factor: the bushings' rotational stiffnesses × 1e-3. The convergence
/// study (`docs/macro-joint.md`, "Kinematic tables"): the largest separation of a bushing's
/// markers is ∝ the factor (double wishbone 1.6e-4 m × factor over ±100 mm, multilink 5.2e-4 m ×
/// factor), the toe and camber curves converge linearly to the ideal-joint limit, 1e-3 lies
/// 4.3e-6 deg (toe) and 4.5e-5 deg (camber) from it on the double wishbone; 1e-4 loses the car's
/// steered corner at −30 mm rack (an intermediate equilibrium turns singular in a soft
/// direction), 1e-3 solves all three reference models on the default grids.
pub const DEFAULT_ROTATIONAL_FACTOR: f64 = 1e-3;

/// Stiffness of the vertical servo spring at the wheel centre, N/m (the servo's slope; any value
/// well above the corner's unloaded vertical rate and well below the bushings' rates works: the
/// spring and the servo force act at the same point and only their sum, the servo force, loads
/// the corner).
const SERVO_STIFFNESS: f64 = 1e5;

/// The wheel-centre height is held to this, m.
pub const TRAVEL_TOLERANCE: f64 = 1e-10;

/// Residual tolerance of each equilibrium, relative to the load scale (1 N at the design point:
/// the corner is unloaded; the servo force at s ≠ 0 raises it): 1e-9 N of residual force moves
/// a bushing of 1e6-1e8 N/m by < 1e-15 m. The engine's default 1e-10 lies below the round-off
/// floor of the car's corners (1.1e-8 N: bushings of 1e8 N/m at coordinates of a few metres); a
/// search that stalls there within 100 × the tolerance is accepted as converged at round-off
/// (`sprung_mbs::equilibrium`, "Convergence criterion").
const EQUILIBRIUM_TOLERANCE: f64 = 1e-9;

/// Smallest continuation step (travel, m, or rack travel, m) before a grid point counts as
/// unreachable.
const MIN_CONTINUATION_STEP: f64 = 1e-5;

/// Servo iterations at most per grid point.
const SERVO_ITERATIONS: usize = 30;

/// Options of [`kinematic_tables`].
#[derive(Debug, Clone, PartialEq)]
pub struct KinOptions {
    /// Travel grid, m (strictly increasing, containing 0, at least 4 points).
    pub travel: Vec<f64>,
    /// Rack grid at steered corners, m (`None`: [`default_rack_grid`]).
    pub rack: Option<Vec<f64>>,
    /// Factor on the bushings' rotational stiffnesses (module docs).
    pub rotational_factor: f64,
    /// Bodies up to this mass are links (the macro-joint reduction's rule), kg.
    pub max_link_mass: f64,
    /// The kinematic reduction's re-hosting of point-to-point element ends, m: an end that
    /// stays within this distance of a fixed point of another body over the whole table moves
    /// onto that body (`crate::kin_reduce`, "Element ends re-hosted"); 0 keeps every end on its
    /// link. Not used by the tables themselves.
    pub rehost_tolerance: f64,
}

impl Default for KinOptions {
    fn default() -> Self {
        Self {
            travel: default_travel_grid(),
            rack: None,
            rotational_factor: DEFAULT_ROTATIONAL_FACTOR,
            max_link_mass: sprung_reduce::ReduceOptions::default().max_link_mass,
            rehost_tolerance: crate::kin_reduce::DEFAULT_REHOST_TOLERANCE,
        }
    }
}

/// Default travel grid: −0.10 … 0.10 m in steps of 10 mm (21 points). The range covers the
/// reference axles' stops (the double wishbone's bump and rebound stops engage at about ±55 mm,
/// `docs/kc.md`; the K&C rig drives them to ±80 mm) with margin for a reduced model running into
/// them; the step is the spline-error choice of `docs/macro-joint.md`, "Kinematic tables" (10 mm:
/// 1.8e-5 deg toe and camber between the grid points).
pub fn default_travel_grid() -> Vec<f64> {
    grid(-0.10, 0.10, 0.01).expect("valid default grid")
}

/// Default rack grid: −0.08 … 0.08 m in steps of 10 mm (17 points). **Assumption** (the car's
/// data sheet states no steering lock): the car's pinion, 7.6 mm/rad, turns ±80 mm into ±600 deg
/// at the steering wheel (3.3 turns lock to lock, typical), and the front corner of
/// `models/car_dw_ml.toml` steers ±30 deg there (`docs/macro-joint.md`, "Kinematic tables").
pub fn default_rack_grid() -> Vec<f64> {
    grid(-0.08, 0.08, 0.01).expect("valid default grid")
}

/// The grid min, min + step, …, max (the last point within 1e-9 step of max); checked by
/// [`check_grid`].
pub fn grid(min: f64, max: f64, step: f64) -> Result<Vec<f64>, KinError> {
    if !(min.is_finite() && max.is_finite() && step.is_finite() && step > 0.0 && max > min) {
        return Err(KinError::Setup(format!(
            "grid {min}:{max}:{step} is not MIN:MAX:STEP with MIN < MAX and STEP > 0"
        )));
    }
    let n = ((max - min) / step + 1e-9).floor() as usize + 1;
    if n > 10_000 {
        return Err(KinError::Setup(format!(
            "grid {min}:{max}:{step} has {n} points; take a larger step"
        )));
    }
    // Points as integer multiples of the step where MIN is one (0.02, not 0.020000000000000004).
    let k0 = (min / step).round();
    let on_step = (min / step - k0).abs() < 1e-9;
    let mut g: Vec<f64> = (0..n)
        .map(|k| {
            if on_step {
                (k0 + k as f64) * step
            } else {
                min + k as f64 * step
            }
        })
        .collect();
    // Snap the point at the design (round-off of min + k step) to exactly 0.
    for x in g.iter_mut() {
        if x.abs() < 1e-9 * step {
            *x = 0.0;
        }
    }
    Ok(g)
}

/// Checks a grid (`what` names it in the message): finite, strictly increasing, at least
/// [`sprung_model::kin_table::MIN_GRID_POINTS`] points, containing 0 (the design point, where
/// the continuation starts).
pub fn check_grid(what: &str, g: &[f64]) -> Result<(), KinError> {
    let min = sm::kin_table::MIN_GRID_POINTS;
    if g.len() < min {
        return Err(KinError::Setup(format!(
            "{what} grid has {} points; a table needs at least {min} per axis (cubic splines): take a smaller step or a wider range",
            g.len()
        )));
    }
    if g.iter().any(|x| !x.is_finite()) || g.windows(2).any(|w| w[1] <= w[0]) {
        return Err(KinError::Setup(format!(
            "{what} grid is not strictly increasing finite numbers"
        )));
    }
    if !g.contains(&0.0) {
        return Err(KinError::Setup(format!(
            "{what} grid {}…{} does not contain 0 (the design point, where the solution starts): choose MIN and STEP so that MIN + k STEP = 0",
            g[0],
            g[g.len() - 1]
        )));
    }
    Ok(())
}

/// A rack: a held body moved along its guide's free axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// Body name.
    pub body: String,
    /// The guide's free axis (global, unit; the direction of positive rack travel).
    pub axis: Vector3<f64>,
}

/// One corner (module docs, "Corners").
#[derive(Debug, Clone, PartialEq)]
pub struct Corner {
    /// Label: the wheel-centre marker's name without `wheel_centre` (`L`, `front_L`).
    pub name: String,
    /// The wheel-centre marker (local y = spin axis).
    pub wheel_centre: String,
    /// The carrier body.
    pub carrier: String,
    /// The corner's bodies: the carrier first, then the others in model order.
    pub bodies: Vec<String>,
    /// The parent: the ground or the heaviest held body.
    pub parent: String,
    /// Other held bodies (subframe, rack).
    pub held: Vec<String>,
    /// The rack, at a steered corner.
    pub rack: Option<Rack>,
    /// The bushings kept (both ends on the corner or on held bodies).
    pub bushings: Vec<String>,
    /// The kept bushings that join a corner body to its own mirror image (the anti-roll bar's
    /// coupling): their rotational stiffness — the bar's torsion spring — is dropped, their
    /// translational stiffness is the joint.
    pub couplings: Vec<String>,
    /// +1 left (wheel centre y > 0), −1 right.
    pub side: f64,
}

/// Global design pose of every marker and body of a compiled model.
struct Design {
    marker: BTreeMap<String, (Vector3<f64>, Matrix3<f64>)>,
    body: BTreeMap<String, (Vector3<f64>, Matrix3<f64>)>,
}

impl Design {
    fn of(cm: &sprung_mbs::CompiledModel) -> Self {
        let body: BTreeMap<String, (Vector3<f64>, Matrix3<f64>)> = cm
            .bodies
            .iter()
            .map(|b| {
                (
                    b.name.clone(),
                    (
                        b.position,
                        sprung_mbs::rotation::quat_to_matrix(&b.orientation),
                    ),
                )
            })
            .collect();
        let marker = cm
            .markers
            .iter()
            .map(|m| {
                let pose = match m.body {
                    None => (m.position, m.axes),
                    Some(b) => {
                        let (p, r) = body[&cm.bodies[b].name];
                        (p + r * m.position, r * m.axes)
                    }
                };
                (m.name.clone(), pose)
            })
            .collect();
        Self { marker, body }
    }

    /// The pose of a body, or the identity for the ground.
    fn body_or_ground(&self, name: &str) -> (Vector3<f64>, Matrix3<f64>) {
        self.body
            .get(name)
            .copied()
            .unwrap_or((Vector3::zeros(), Matrix3::identity()))
    }
}

fn bushing_stiff_axis(b: &sm::Bushing, a: usize) -> bool {
    b.stiffness[a] > 0.0 || b.stiffness_curves.as_array()[a].is_some()
}

/// The corners of `model` (module docs); an error if it has none.
pub fn corners(model: &Model, max_link_mass: f64) -> Result<Vec<Corner>, KinError> {
    model
        .compiled()
        .require_no_joints("the kinematic tables")
        .map_err(KinError::Setup)?;
    let d = description(model)?;
    let design = Design::of(model.compiled());
    let ground = d.model.ground.clone();
    let light = sprung_reduce::light_bodies(&d, max_link_mass, &[]);
    let is_light = |b: &str| light.links.contains(b) || light.twin_joined.contains(b);
    let body_of = |m: &str| d.marker(m).map(|k| k.body.clone()).unwrap_or_default();
    let mass = |b: &str| d.body(b).map_or(f64::INFINITY, |b| b.mass);
    let twins = |a: &str, b: &str| {
        let t = |x: &str| {
            x.strip_suffix("_L")
                .map(|s| format!("{s}_R"))
                .or_else(|| x.strip_suffix("_R").map(|s| format!("{s}_L")))
        };
        t(a).is_some_and(|t| t == b)
    };
    let bushings: Vec<(&sm::Bushing, String, String)> = d
        .force_elements
        .iter()
        .filter_map(|e| match e {
            sm::ForceElement::Bushing(b) => Some((b, body_of(&b.marker_i), body_of(&b.marker_j))),
            _ => None,
        })
        .collect();
    // Wheel-centre markers: the K&C rig's names, also inside subsystems (`front.wheel_centre_L`).
    let specs: Vec<&sm::Marker> = d
        .markers
        .iter()
        .filter(|m| {
            let leaf = m.name.rsplit('.').next().unwrap_or("");
            (leaf.starts_with("wheel_centre") || leaf.starts_with("wheel_center"))
                && m.body != ground
        })
        .collect();
    if specs.is_empty() {
        return Err(KinError::Setup(format!(
            "model '{}' has no corners: no wheel-centre marker (a marker named wheel_centre* on the wheel or carrier body, local y = spin axis)",
            d.model.name
        )));
    }
    let mut out = Vec::new();
    for s in specs {
        let wheel = s.body.clone();
        let n = crate::kc::neighbours(&d, &wheel);
        let (carrier, wheel_body) = if n.len() == 1 && !n.iter().any(|b| is_light(b)) {
            (n[0].clone(), Some(wheel.clone()))
        } else {
            (wheel.clone(), None)
        };
        // The corner: the carrier and the light bodies reached through bushings.
        let mut bodies = vec![carrier.clone()];
        let mut held: BTreeSet<String> = BTreeSet::new();
        let mut k = 0;
        while k < bodies.len() {
            let b = bodies[k].clone();
            for (_, i, j) in &bushings {
                let other = if *i == b {
                    j
                } else if *j == b {
                    i
                } else {
                    continue;
                };
                if bodies.contains(other) || Some(other) == wheel_body.as_ref() {
                    continue;
                }
                if is_light(other) && !twins(&b, other) {
                    bodies.push(other.clone());
                } else {
                    held.insert(other.clone());
                }
            }
            k += 1;
        }
        let in_corner = |b: &str| bodies.iter().any(|x| x == b);
        let kept: Vec<&sm::Bushing> = bushings
            .iter()
            .filter(|(_, i, j)| {
                (in_corner(i) || in_corner(j))
                    && (in_corner(i) || held.contains(i))
                    && (in_corner(j) || held.contains(j))
            })
            .map(|(b, _, _)| *b)
            .collect();
        if bodies.len() == 1 || held.is_empty() {
            return Err(KinError::Setup(format!(
                "corner at {}: carrier '{carrier}' has no links joined to a chassis or ground by bushings (links are bodies of at most {max_link_mass} kg; raise it with --max-link-mass)",
                s.name
            )));
        }
        let parent = if held.contains(&ground) {
            ground.clone()
        } else {
            held.iter()
                .max_by(|a, b| mass(a).total_cmp(&mass(b)))
                .cloned()
                .expect("not empty")
        };
        held.remove(&parent);
        // A rack: a held body joined to the parent by a bushing free in exactly one direction.
        let mut rack = None;
        for h in &held {
            for (b, i, j) in &bushings {
                if !((i == h && *j == parent) || (j == h && *i == parent)) {
                    continue;
                }
                let free: Vec<usize> = (0..3).filter(|&a| !bushing_stiff_axis(b, a)).collect();
                if free.len() == 1 {
                    let axes = design.marker[&b.marker_j].1;
                    rack = Some(Rack {
                        body: h.clone(),
                        axis: axes.column(free[0]).into_owned(),
                    });
                }
            }
        }
        let order = |b: &str| d.bodies.iter().position(|x| x.name == b);
        bodies[1..].sort_by_key(|b| order(b));
        let name = corner_label(&s.name);
        let side = design.marker[&s.name].0.y.signum();
        out.push(Corner {
            name,
            wheel_centre: s.name.clone(),
            carrier,
            bodies,
            parent,
            held: held.into_iter().collect(),
            rack,
            bushings: kept.iter().map(|b| b.name.clone()).collect(),
            couplings: bushings
                .iter()
                .filter(|(b, i, j)| twins(i, j) && kept.iter().any(|k| k.name == b.name))
                .map(|(b, _, _)| b.name.clone())
                .collect(),
            side,
        });
    }
    Ok(out)
}

/// `wheel_centre_L` → `L`, `front.wheel_centre_L` → `front_L`.
fn corner_label(marker: &str) -> String {
    let s = marker
        .replace("wheel_centre", "")
        .replace("wheel_center", "");
    let parts: Vec<&str> = s.split(['.', '_']).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        marker.to_string()
    } else {
        parts.join("_")
    }
}

/// The model's description with its mirrored items expanded (what the tables and the kinematic
/// reduction, [`crate::kin_reduce::reduce_with_tables`], work on).
pub fn description(model: &Model) -> Result<sm::Model, KinError> {
    let d = model.description();
    let mirrored = d.bodies.iter().any(|b| b.mirror)
        || d.markers.iter().any(|k| k.mirror)
        || d.force_elements.iter().any(|e| e.mirror());
    if mirrored {
        d.expand_mirrors()
            .map_err(|e| KinError::Setup(e.to_string()))
    } else {
        Ok(d.clone())
    }
}

/// The kinematic table of one corner and what the solve measured.
#[derive(Debug, Clone)]
pub struct CornerTable {
    /// The corner.
    pub corner: Corner,
    /// The table (parent = [`Corner::parent`]).
    pub table: KinematicTable,
    /// The wheel-centre marker in the carrier's body frame: position, m, and spin axis (the
    /// marker's local y), unit.
    pub wheel_centre_local: (Vector3<f64>, Vector3<f64>),
    /// The carrier's design orientation relative to the parent (R_rel,0 of the table).
    pub carrier_rel0: Matrix3<f64>,
    /// Per grid point: the largest separation of the two markers of a kept bushing in its
    /// stiff directions (directions with stiffness or a curve), m — zero for ideal joints.
    pub max_gap: Vec<f64>,
    /// Per grid point: the bushing with that largest separation.
    pub max_gap_bushing: Vec<String>,
    /// Per grid point: the vertical servo force holding the wheel centre, N.
    pub servo_force: Vec<f64>,
}

/// The wheel at one grid point of a [`CornerTable`], in the parent's design frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WheelPoint {
    /// Travel coordinate, m.
    pub travel: f64,
    /// Rack coordinate, m (0 at an unsteered corner).
    pub rack: f64,
    /// Wheel-centre position, m.
    pub centre: Vector3<f64>,
    /// Toe, deg (+ toe-in, [`crate::kc`] conventions).
    pub toe: f64,
    /// Camber, deg (+ top outward).
    pub camber: f64,
}

impl CornerTable {
    /// Number of grid points.
    pub fn points(&self) -> usize {
        self.table.points()
    }

    /// The coordinates (travel, rack) of grid point `k`.
    pub fn coordinates(&self, k: usize) -> (f64, f64) {
        let t = &self.table.axes[0].grid;
        match self.table.axes.get(1) {
            Some(r) => (t[k / r.grid.len()], r.grid[k % r.grid.len()]),
            None => (t[k], 0.0),
        }
    }

    /// The wheel at grid point `k`.
    pub fn wheel(&self, k: usize) -> WheelPoint {
        let b = &self.table.bodies[0];
        let (travel, rack) = self.coordinates(k);
        self.wheel_at((travel, rack), b.position[k], b.rotation[k])
    }

    /// The wheel of a carrier pose in the table's terms (position of the carrier's frame, m,
    /// and rotation vector away from its design orientation, rad, both in the parent's design
    /// frame — a table entry or a spline value) at the coordinates `(travel, rack)`.
    pub fn wheel_at(
        &self,
        (travel, rack): (f64, f64),
        position: [f64; 3],
        rotation: [f64; 3],
    ) -> WheelPoint {
        let rel = Rotation3::new(Vector3::from(rotation)).into_inner() * self.carrier_rel0;
        let (p, a) = self.wheel_centre_local;
        let centre = Vector3::from(position) + rel * p;
        let (toe, camber) = crate::kc::toe_camber(rel * a, self.corner.side);
        WheelPoint {
            travel,
            rack,
            centre,
            toe,
            camber,
        }
    }

    /// The index of grid point (travel index, rack index).
    pub fn index(&self, it: usize, ir: usize) -> usize {
        it * self.table.axes.get(1).map_or(1, |a| a.grid.len()) + ir
    }

    /// The grid point at the design (travel 0, rack 0).
    pub fn design_index(&self) -> usize {
        let z = |a: &TableAxis| a.grid.iter().position(|&x| x == 0.0).unwrap_or(0);
        self.index(z(&self.table.axes[0]), self.table.axes.get(1).map_or(0, z))
    }
}

/// One corner's model: its bodies, its bushings (scaled), the held bodies as ground markers,
/// the servo spring and force (module docs).
fn corner_model(
    d: &sm::Model,
    design: &Design,
    c: &Corner,
    factor: f64,
    rack: f64,
) -> Result<sm::Model, KinError> {
    let ground = d.model.ground.clone();
    let held = |b: &str| b == c.parent || c.held.iter().any(|h| h == b) || b == ground;
    let (_, parent_axes) = design.body_or_ground(&c.parent);
    let bodies: Vec<sm::Body> = c
        .bodies
        .iter()
        .map(|n| {
            let mut b = d.body(n).expect("corner body").clone();
            b.mirror = false;
            b.velocity = [0.0; 3];
            b.angular_velocity = [0.0; 3];
            b
        })
        .collect();
    let mut markers: Vec<sm::Marker> = Vec::new();
    let mut add_marker = |name: &str, body: &str, shift: Vector3<f64>| {
        if markers.iter().any(|m| m.name == name) {
            return;
        }
        let (p, a) = design.marker[name];
        let p = p + shift;
        markers.push(sm::Marker {
            name: name.to_string(),
            body: body.to_string(),
            global_position: Some([p.x, p.y, p.z]),
            position: None,
            frame: None,
            global_axes: Some(sm::Axes {
                x: [a[(0, 0)], a[(1, 0)], a[(2, 0)]],
                y: [a[(0, 1)], a[(1, 1)], a[(2, 1)]],
                z: [a[(0, 2)], a[(1, 2)], a[(2, 2)]],
            }),
            euler_zyx_deg: None,
            mirror: false,
        });
    };
    let mut elements = Vec::new();
    let mut curves: Vec<sm::Curve> = Vec::new();
    let add_curve = |name: &str, scale: f64, curves: &mut Vec<sm::Curve>| -> String {
        let new = if scale == 1.0 {
            name.to_string()
        } else {
            format!("kin_rot.{name}")
        };
        if !curves.iter().any(|c| c.name == new) {
            let mut cv = d.curve(name).expect("validated curve").clone();
            cv.name = new.clone();
            cv.y.iter_mut().for_each(|y| *y *= scale);
            curves.push(cv);
        }
        new
    };
    for e in &d.force_elements {
        let sm::ForceElement::Bushing(b) = e else {
            continue;
        };
        if !c.bushings.contains(&b.name) {
            continue;
        }
        for m in [&b.marker_i, &b.marker_j] {
            let body = d.marker(m).expect("validated").body.clone();
            let shift = match &c.rack {
                Some(r) if r.body == body => r.axis * rack,
                _ => Vector3::zeros(),
            };
            let on = if held(&body) { ground.clone() } else { body };
            add_marker(m, &on, shift);
        }
        let mut b = b.clone();
        b.mirror = false;
        b.damping = [0.0; 3];
        b.rot_damping = [0.0; 3];
        b.damping_curves = Default::default();
        b.rot_damping_curves = Default::default();
        b.preload = [0.0; 3];
        b.rot_preload = [0.0; 3];
        if c.couplings.contains(&b.name) {
            b.rot_stiffness = [0.0; 3];
            b.rot_stiffness_curves = Default::default();
        }
        for a in 0..3 {
            b.rot_stiffness[a] *= factor;
        }
        let c = &mut b.stiffness_curves;
        for n in [&mut c.x, &mut c.y, &mut c.z].into_iter().flatten() {
            *n = add_curve(n, 1.0, &mut curves);
        }
        let c = &mut b.rot_stiffness_curves;
        for n in [&mut c.x, &mut c.y, &mut c.z].into_iter().flatten() {
            *n = add_curve(n, factor, &mut curves);
        }
        elements.push(sm::ForceElement::Bushing(b));
    }
    // The servo: spring and force along the parent's z at the wheel centre, on the carrier.
    let (wc, _) = design.marker[&c.wheel_centre];
    let axes = sm::Axes {
        x: parent_axes.column(0).into_owned().into(),
        y: parent_axes.column(1).into_owned().into(),
        z: parent_axes.column(2).into_owned().into(),
    };
    for (name, body) in [(SERVO_MARKER, &c.carrier), (ANCHOR_MARKER, &ground)] {
        markers.push(sm::Marker {
            name: name.into(),
            body: body.clone(),
            global_position: Some([wc.x, wc.y, wc.z]),
            position: None,
            frame: None,
            global_axes: Some(axes),
            euler_zyx_deg: None,
            mirror: false,
        });
    }
    elements.push(sm::ForceElement::Bushing(sm::Bushing::elastic(
        "kin.servo_spring",
        SERVO_MARKER,
        ANCHOR_MARKER,
        [0.0, 0.0, SERVO_STIFFNESS],
        [0.0; 3],
    )));
    let z = parent_axes.column(2);
    Ok(sm::Model {
        model: sm::ModelInfo {
            name: format!("{}_kinematic_{}", d.model.name, c.name),
            description: Some(format!(
                "corner {} of '{}': its bushings alone, rotational stiffness x {factor}, unloaded (sprung kinematics)",
                c.name, d.model.name
            )),
            ground,
            gravity: [0.0; 3],
        },
        solver: Default::default(),
        initial_state: Default::default(),
        frames: Vec::new(),
        curves,
        bodies,
        markers,
        force_elements: elements,
        elements: Vec::new(),
        roads: Vec::new(),
        inputs: vec![sm::Input {
            name: SERVO_INPUT.into(),
            kind: sm::InputKind::Force,
            marker: SERVO_MARKER.into(),
            frame: sm::InputFrame::Global,
            direction: [z[0], z[1], z[2]],
            signal: sm::Signal::Runtime { default: 0.0 },
            mirror: false,
        }],
        outputs: Vec::new(),
        subsystems: Vec::new(),
        parameters: Vec::new(),
        parameter_base: None,
    })
}

const SERVO_MARKER: &str = "kin.servo";
const ANCHOR_MARKER: &str = "kin.anchor";
const SERVO_INPUT: &str = "kin.servo_force";

/// The solver of one corner: its simulation at one rack value and what it needs to read it.
struct CornerSolver {
    sim: Simulation,
    /// Body indices of the corner's bodies in the corner model.
    bodies: Vec<usize>,
    /// Wheel-centre marker in the carrier frame.
    wc_local: Vector3<f64>,
    wc_design: Vector3<f64>,
    z_axis: Vector3<f64>,
    /// The kept bushings: marker i, marker j (indices) and their stiff directions.
    gaps: Vec<(String, usize, usize, [bool; 3])>,
}

impl CornerSolver {
    fn new(
        d: &sm::Model,
        design: &Design,
        c: &Corner,
        factor: f64,
        rack: f64,
        registry: &sprung_mbs::elements::ElementRegistry,
    ) -> Result<Self, KinError> {
        let m = corner_model(d, design, c, factor, rack)?;
        let model = Model::from_description_with(m, registry)?;
        let cm = model.compiled().clone();
        let bodies = c
            .bodies
            .iter()
            .map(|n| cm.bodies.iter().position(|b| b.name == *n).expect("body"))
            .collect();
        let marker = |n: &str| cm.markers.iter().position(|m| m.name == n).expect("marker");
        let mut gaps = Vec::new();
        for e in &d.force_elements {
            if let sm::ForceElement::Bushing(b) = e
                && c.bushings.contains(&b.name)
            {
                gaps.push((
                    b.name.clone(),
                    marker(&b.marker_i),
                    marker(&b.marker_j),
                    [0, 1, 2].map(|a| bushing_stiff_axis(b, a)),
                ));
            }
        }
        let (wc_design, _) = design.marker[&c.wheel_centre];
        let (pc, rc) = design.body[&c.carrier];
        let (_, parent_axes) = design.body_or_ground(&c.parent);
        let settings = model.default_settings();
        Ok(Self {
            sim: Simulation::with_settings(model, settings)?,
            bodies,
            wc_local: rc.transpose() * (wc_design - pc),
            wc_design,
            z_axis: parent_axes.column(2).into_owned(),
            gaps,
        })
    }

    fn pose(&self, b: usize) -> (Vector3<f64>, Matrix3<f64>) {
        let r = self.sim.positions();
        (
            Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]),
            sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]),
        )
    }

    fn travel(&self) -> f64 {
        let (p, r) = self.pose(self.bodies[0]);
        self.z_axis.dot(&(p + r * self.wc_local - self.wc_design))
    }

    /// The servo force on the carrier (input + spring), N.
    fn servo_force(&self) -> f64 {
        let f = self.sim.input(SERVO_INPUT).unwrap_or(0.0);
        f - SERVO_STIFFNESS * self.travel()
    }

    /// Largest marker separation of a kept bushing in its stiff directions, and the bushing.
    fn max_gap(&self) -> (f64, String) {
        let cm = self.sim.model().compiled();
        let r = self.sim.positions();
        let pose = |m: usize| {
            let mk = &cm.markers[m];
            match mk.body {
                None => (mk.position, mk.axes),
                Some(b) => {
                    let rot = sprung_mbs::rotation::quat_to_matrix(&r[7 * b + 3..7 * b + 7]);
                    let p = Vector3::new(r[7 * b], r[7 * b + 1], r[7 * b + 2]);
                    (p + rot * mk.position, rot * mk.axes)
                }
            }
        };
        let mut worst = (0.0, String::new());
        for (name, i, j, stiff) in &self.gaps {
            let (pi, _) = pose(*i);
            let (pj, aj) = pose(*j);
            let dl = aj.transpose() * (pi - pj);
            for a in 0..3 {
                if stiff[a] && dl[a].abs() > worst.0 {
                    worst = (dl[a].abs(), name.clone());
                }
            }
        }
        worst
    }

    /// Sets the state predicted for parameter `x` from the last two solved points of `hist`
    /// (linear extrapolation of positions and the servo input, quaternions normalised), or the
    /// last solved point alone.
    fn predict(&mut self, x: f64, hist: &[(f64, crate::Snapshot)]) -> Result<(), KinError> {
        let (x1, st1) = hist.last().expect("a solved start");
        let mut st = st1.clone();
        if let [.., (x0, st0), _] = hist {
            let a = (x - x1) / (x1 - x0);
            for (r, (r1, r0)) in st.r.iter_mut().zip(st1.r.iter().zip(&st0.r)) {
                *r = r1 + a * (r1 - r0);
            }
            for q in st.r.chunks_exact_mut(7) {
                let n = q[3..].iter().map(|x| x * x).sum::<f64>().sqrt();
                q[3..].iter_mut().for_each(|x| *x /= n);
            }
            for (u, (u1, u0)) in st
                .runtime_inputs
                .iter_mut()
                .zip(st1.runtime_inputs.iter().zip(&st0.runtime_inputs))
            {
                *u = u1 + a * (u1 - u0);
            }
        }
        self.sim.set_state(&st)?;
        Ok(())
    }

    /// Continuation from the last solved point of `hist` to travel `s`: each equilibrium starts
    /// from the predicted state ([`CornerSolver::predict`]); a step whose equilibrium fails is
    /// halved (down to [`MIN_CONTINUATION_STEP`]). `hist` keeps the last two solved points.
    fn advance(
        &mut self,
        s: f64,
        hist: &mut Vec<(f64, crate::Snapshot)>,
        label: &dyn Fn() -> String,
    ) -> Result<(), KinError> {
        let mut cur = hist.last().expect("a solved start").0;
        let mut h = s - cur;
        while cur != s {
            let next = if (s - cur).abs() <= h.abs() {
                s
            } else {
                cur + h
            };
            self.predict(next, hist)?;
            match self.hold(next, label) {
                Ok(()) => {
                    hist.push((next, self.sim.state()));
                    if hist.len() > 2 {
                        hist.remove(0);
                    }
                    cur = next;
                }
                Err(e) => {
                    h *= 0.5;
                    if h.abs() < MIN_CONTINUATION_STEP {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// Holds the wheel centre at travel `s` (module docs): Newton on the servo force with the
    /// secant slope; `label` names the grid point in errors.
    fn hold(&mut self, s: f64, label: &dyn Fn() -> String) -> Result<(), KinError> {
        // Start: the servo spring's share for the new travel plus the last point's servo force.
        let mut f = SERVO_STIFFNESS * s + self.servo_force();
        let mut last: Option<(f64, f64)> = None;
        let mut slope = SERVO_STIFFNESS;
        let mut err = f64::NAN;
        for _ in 0..SERVO_ITERATIONS {
            self.sim.set_input(SERVO_INPUT, f)?;
            self.sim.equilibrium_with_tolerance(EQUILIBRIUM_TOLERANCE).map_err(|e| {
                KinError::Solve(format!(
                    "{}: the equilibrium of the corner's bushings did not converge: {e}; the travel may be beyond the corner's geometric range: reduce --travel (or --rack), or try another --rotational-factor",
                    label()
                ))
            })?;
            let z = self.travel();
            err = z - s;
            if err.abs() <= TRAVEL_TOLERANCE {
                return Ok(());
            }
            if let Some((f0, z0)) = last {
                let k = (f - f0) / (z - z0);
                if k.is_finite() && k > 0.0 {
                    slope = k;
                }
            }
            last = Some((f, z));
            f -= slope * err;
        }
        Err(KinError::Solve(format!(
            "{}: the wheel centre was not held at the travel (off by {err:.3e} m after {SERVO_ITERATIONS} servo iterations, servo force {:.4e} N); the travel may be beyond the corner's geometric range: reduce --travel",
            label(),
            self.servo_force()
        )))
    }
}

/// Progress of [`kinematic_tables`]: corner index, corner name, points done, points of the corner.
pub type Progress<'a> = &'a mut dyn FnMut(usize, &str, usize, usize);

/// The kinematic tables of every corner of `model` (module docs).
pub fn kinematic_tables(
    model: &Model,
    opts: &KinOptions,
    progress: Progress<'_>,
) -> Result<Vec<CornerTable>, KinError> {
    if !(opts.rotational_factor.is_finite() && opts.rotational_factor > 0.0) {
        return Err(KinError::Setup(format!(
            "rotational factor {} is not a positive number (default {DEFAULT_ROTATIONAL_FACTOR})",
            opts.rotational_factor
        )));
    }
    check_grid("travel", &opts.travel)?;
    let corners = corners(model, opts.max_link_mass)?;
    let rack_grid = opts.rack.clone().unwrap_or_else(default_rack_grid);
    if corners.iter().any(|c| c.rack.is_some()) {
        check_grid("rack", &rack_grid)?;
    }
    let d = description(model)?;
    let design = Design::of(model.compiled());
    let mut out = Vec::new();
    for (ci, c) in corners.iter().enumerate() {
        out.push(corner_table(
            model, &d, &design, c, opts, &rack_grid, ci, progress,
        )?);
    }
    Ok(out)
}

/// Continuation order over a grid containing 0: 0, up to the end, then down from 0.
fn outward(g: &[f64]) -> Vec<usize> {
    let z = g.iter().position(|&x| x == 0.0).expect("checked grid");
    (z..g.len()).chain((0..z).rev()).collect()
}

#[allow(clippy::too_many_arguments)]
fn corner_table(
    model: &Model,
    d: &sm::Model,
    design: &Design,
    c: &Corner,
    opts: &KinOptions,
    rack_grid: &[f64],
    ci: usize,
    progress: Progress<'_>,
) -> Result<CornerTable, KinError> {
    let travel = &opts.travel;
    let racks: Vec<f64> = if c.rack.is_some() {
        rack_grid.to_vec()
    } else {
        vec![0.0]
    };
    let (nt, nr) = (travel.len(), racks.len());
    let n = nt * nr;
    let (pp, pr) = design.body_or_ground(&c.parent);
    let nb = c.bodies.len();
    let mut position = vec![vec![[0.0; 3]; n]; nb];
    let mut rotation = vec![vec![[0.0; 3]; n]; nb];
    let rel0: Vec<Matrix3<f64>> = c
        .bodies
        .iter()
        .map(|b| pr.transpose() * design.body[b].1)
        .collect();
    let mut max_gap = vec![0.0; n];
    let mut max_gap_bushing = vec![String::new(); n];
    let mut servo_force = vec![0.0; n];
    let mut done = 0;
    // The solution at s = 0 of each solved rack column (warm start of the next column).
    let mut column_start: BTreeMap<usize, (f64, crate::Snapshot)> = BTreeMap::new();
    let zr = racks.iter().position(|&x| x == 0.0).expect("checked");
    let registry = model.registry();
    let zt = travel.iter().position(|&x| x == 0.0).expect("checked");
    let label_at = |s: f64, r: f64| {
        if c.rack.is_some() {
            format!(
                "corner {}, travel {:.3} mm, rack {:.3} mm",
                c.name,
                s * 1e3,
                r * 1e3
            )
        } else {
            format!("corner {}, travel {:.3} mm", c.name, s * 1e3)
        }
    };
    // The s = 0 solutions along the rack (the last two, for the predictor).
    let mut rack_hist: Vec<(f64, crate::Snapshot)> = Vec::new();
    for ir in outward(&racks) {
        let r = racks[ir];
        if ir + 1 == zr {
            // the downward half starts from r = 0 again
            rack_hist.truncate(0);
            rack_hist.push(column_start.remove(&zr).expect("solved first"));
        }
        // Continuation in r to this column at s = 0 (a model per rack value: the rack is held).
        let mut solver = CornerSolver::new(d, design, c, opts.rotational_factor, 0.0, registry)?;
        if ir == zr {
            let label = || label_at(0.0, 0.0);
            solver.hold(0.0, &label)?;
            rack_hist.push((0.0, solver.sim.state()));
            column_start.insert(zr, (0.0, solver.sim.state()));
        } else {
            let mut cur = rack_hist.last().expect("solved").0;
            let mut h = r - cur;
            while cur != r {
                let next = if (r - cur).abs() <= h.abs() {
                    r
                } else {
                    cur + h
                };
                solver = CornerSolver::new(d, design, c, opts.rotational_factor, next, registry)?;
                solver.predict(next, &rack_hist)?;
                let label = || label_at(0.0, next);
                match solver.hold(0.0, &label) {
                    Ok(()) => {
                        rack_hist.push((next, solver.sim.state()));
                        if rack_hist.len() > 2 {
                            rack_hist.remove(0);
                        }
                        cur = next;
                    }
                    Err(e) => {
                        h *= 0.5;
                        if h.abs() < MIN_CONTINUATION_STEP {
                            return Err(e);
                        }
                    }
                }
            }
        }
        let start = solver.sim.state();
        let mut hist = vec![(0.0, start.clone())];
        for it in outward(travel) {
            let s = travel[it];
            if it + 1 == zt {
                // the downward half starts from s = 0 again
                hist = vec![(0.0, start.clone())];
            }
            let label = || label_at(s, r);
            solver.advance(s, &mut hist, &label)?;
            let k = it * nr + ir;
            for (bi, &b) in solver.bodies.iter().enumerate() {
                let (p, rot) = solver.pose(b);
                let prel = pr.transpose() * (p - pp);
                let rrel = pr.transpose() * rot;
                let phi =
                    Rotation3::from_matrix_unchecked(rrel * rel0[bi].transpose()).scaled_axis();
                position[bi][k] = [prel.x, prel.y, prel.z];
                rotation[bi][k] = [phi.x, phi.y, phi.z];
            }
            let (g, name) = solver.max_gap();
            max_gap[k] = g;
            max_gap_bushing[k] = name;
            servo_force[k] = solver.servo_force();
            done += 1;
            progress(ci, &c.name, done, n);
        }
    }
    let mut axes = vec![TableAxis {
        name: "travel".into(),
        unit: "m".into(),
        description: format!(
            "wheel-centre height of {} above design, along the z axis of {}",
            c.wheel_centre, c.parent
        ),
        grid: travel.clone(),
    }];
    if let Some(rk) = &c.rack {
        axes.push(TableAxis {
            name: "rack".into(),
            unit: "m".into(),
            description: format!(
                "displacement of {} along its guide's free axis [{:.6}, {:.6}, {:.6}] (global)",
                rk.body, rk.axis.x, rk.axis.y, rk.axis.z
            ),
            grid: racks.clone(),
        });
    }
    let table = KinematicTable {
        source: format!(
            "sprung kinematics {} (corner {}: carrier {}, wheel centre {}; bushings alone, unloaded, rotational stiffness x {})",
            model.description().model.name,
            c.name,
            c.carrier,
            c.wheel_centre,
            opts.rotational_factor
        ),
        parent: c.parent.clone(),
        axes,
        bodies: c
            .bodies
            .iter()
            .enumerate()
            .map(|(bi, b)| TableBody {
                name: b.clone(),
                position: std::mem::take(&mut position[bi]),
                rotation: std::mem::take(&mut rotation[bi]),
            })
            .collect(),
    };
    let (pc, rc) = design.body[&c.carrier];
    let (wc, wa) = design.marker[&c.wheel_centre];
    Ok(CornerTable {
        corner: c.clone(),
        table,
        wheel_centre_local: (rc.transpose() * (wc - pc), rc.transpose() * wa.column(1)),
        carrier_rel0: rel0[0],
        max_gap,
        max_gap_bushing,
        servo_force,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_contain_zero_exactly_and_bad_grids_are_named() {
        let g = grid(-0.1, 0.1, 0.01).unwrap();
        assert_eq!(g.len(), 21);
        assert_eq!(g[10], 0.0);
        assert!((g[20] - 0.1).abs() < 1e-15);
        let e = check_grid("travel", &grid(-0.095, 0.1, 0.01).unwrap()).unwrap_err();
        assert!(e.to_string().contains("does not contain 0"), "{e}");
        let e = check_grid("rack", &grid(-0.01, 0.01, 0.01).unwrap()).unwrap_err();
        assert!(e.to_string().contains("has 3 points"), "{e}");
        assert!(grid(0.1, -0.1, 0.01).is_err());
        assert!(grid(-0.1, 0.1, 0.0).is_err());
    }

    #[test]
    fn corner_labels() {
        assert_eq!(corner_label("wheel_centre_L"), "L");
        assert_eq!(corner_label("front.wheel_centre_R"), "front_R");
        assert_eq!(corner_label("wheel_centre"), "wheel_centre");
    }

    #[test]
    fn continuation_runs_outward_from_zero() {
        assert_eq!(outward(&[-0.2, -0.1, 0.0, 0.1]), vec![2, 3, 1, 0]);
    }
}
