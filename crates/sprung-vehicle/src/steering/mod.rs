//! Quasi-static steering system for two steered front axles, document 002
//! (`../shared/seeds/002_e0ef91a6cdcd28dd.txt`, eqs. 10-58, with the corrections of
//! `../shared/seeds/002-errata.md`), as one force element of kind `steering_dual_axle` on the open
//! interface of [`sprung_mbs::element_law`] (issue 14, item 1; `docs/steering-dual-axle.md`).
//!
//! The layout (document 002, Figs. 1-2): the steering column (torsion c_S) turns the steering-box
//! input δ_S; the box (ratio i_S, [`ratio`]) turns the pitman arm (bearing H₁ on the frame, axis
//! e_P) by δ_P; tie rod 1 (the drag link, I₁ on the pitman arm → J₁ on the steering arm of the left
//! knuckle of axle 1) steers axle 1; the coupling rod (C₁ on the pitman arm → C₂ on the coupling
//! lever) turns the coupling lever (bearing H₂ on the frame, axis e_L) by δ_L; tie rod 2 (I₂ on the
//! lever → J₂ on the left knuckle of axle 2) steers axle 2. The track rods joining the left and
//! right knuckles of each axle are not part of the element (they are ordinary rods or
//! point-to-point springs of the model).
//!
//! Four markers, in this order:
//! 0. `steering_box` — on the frame at H₁; its z axis is the pitman-arm axis e_P (a positive δ_P
//!    turns the arm about +z);
//! 1. `coupling_lever` — on the frame at H₂; z axis = e_L;
//! 2. `knuckle_1` — the joint J₁ of tie rod 1 on the left knuckle of axle 1 (origin only);
//! 3. `knuckle_2` — the joint J₂ of tie rod 2 on the left knuckle of axle 2 (origin only).
//!
//! The arm joints I₁, C₁ (pitman arm) and C₂, I₂ (coupling lever) are given as global design
//! positions and move with their arm; the rods' free lengths are their design lengths (eq. 10).
//! The two torque balances (eqs. 31, 32) are solved by Newton's method in every evaluation
//! ([`linkage`]); the algebraic variables (φ_S, δ_L) are the warm start. The partials are the
//! exact total derivatives by the implicit function theorem ([`linkage`] module docs). The element
//! itself is in [`element`].

pub mod element;
pub mod linkage;
pub mod ratio;

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_mbs::element_law::{ElementLaw, MarkerState, OutputInfo};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo, ParamInfo};

pub use element::DualAxleSteering;
use linkage::{End, Linkage, Rod, Stop};
use ratio::BoxRatio;

/// The kind name.
pub const KIND: &str = "steering_dual_axle";

/// The outputs (read with `quantity = "element_output"`).
pub const OUTPUTS: &[OutputInfo] = &[
    OutputInfo::new("delta_w", "rad", "steering-wheel angle (the input)"),
    OutputInfo::new("delta_s", "rad", "steering-box input angle"),
    OutputInfo::new("delta_p", "rad", "pitman-arm rotation about e_P"),
    OutputInfo::new("delta_l", "rad", "coupling-lever rotation about e_L"),
    OutputInfo::new("phi_s", "rad", "steering-column torsion delta_w - delta_s"),
    OutputInfo::new(
        "steering_wheel_torque",
        "N m",
        "column torque c_S phi_s the driver holds",
    ),
    OutputInfo::new(
        "f1",
        "N",
        "tie rod 1 force (elastic + viscous, tension positive)",
    ),
    OutputInfo::new(
        "fc",
        "N",
        "coupling rod force (elastic + viscous, tension positive)",
    ),
    OutputInfo::new(
        "f2",
        "N",
        "tie rod 2 force (elastic + viscous, tension positive)",
    ),
    OutputInfo::new(
        "newton_iterations",
        "-",
        "Newton iterations of this evaluation's torque balance",
    ),
    OutputInfo::new(
        "newton_converged",
        "-",
        "1 when the torque balance converged, 0 otherwise",
    ),
];

/// The input slots (`[[elements]] inputs = { steering_wheel_angle = "..." }`).
pub const INPUTS: &[OutputInfo] = &[
    OutputInfo::new(
        "steering_wheel_angle",
        "rad",
        "steering-wheel angle delta_W (ignored when the steering_wheel_angle_deg table is given)",
    ),
    OutputInfo::new(
        "steering_wheel_rate",
        "rad/s",
        "its rate d delta_W / dt, for the viscous parts only (unmapped: 0, the viscous parts then see a held wheel)",
    ),
];

/// Registry entry.
pub const INFO: KindInfo = KindInfo {
    name: KIND,
    description: "quasi-static steering of two steered front axles (document 002, eqs. 10-58): column torsion, box ratio, pitman arm and coupling lever with stops, tie rods 1, 2 and coupling rod; markers: steering box (z = pitman-arm axis) and coupling-lever bearing on the frame, tie-rod joints on the left knuckles of axles 1 and 2",
    markers: &["steering_box", "coupling_lever", "knuckle_1", "knuckle_2"],
    parameters: &[
        ParamInfo::new(
            "column_stiffness",
            "N m/rad",
            "torsional stiffness c_S of the steering column",
            None,
        ),
        ParamInfo::new(
            "box_ratio",
            "-",
            "constant steering-box ratio i_S = d delta_P / d delta_S (give this or box_ratio_curve)",
            Some(f64::NAN),
        ),
        ParamInfo::new(
            "box_ratio_curve",
            "rad, -",
            "ratio curve as pairs [delta_S, i_S, ...] (piecewise linear, end values beyond)",
            Some(f64::NAN),
        ),
        ParamInfo::new(
            "joint_i1",
            "m",
            "global design position [x, y, z] of I1, tie rod 1 on the pitman arm",
            None,
        ),
        ParamInfo::new(
            "joint_c1",
            "m",
            "global design position of C1, coupling rod on the pitman arm",
            None,
        ),
        ParamInfo::new(
            "joint_c2",
            "m",
            "global design position of C2, coupling rod on the coupling lever",
            None,
        ),
        ParamInfo::new(
            "joint_i2",
            "m",
            "global design position of I2, tie rod 2 on the coupling lever",
            None,
        ),
        ParamInfo::new(
            "tie_rod_1_stiffness",
            "N/m",
            "axial stiffness c_1 of tie rod 1 (drag link)",
            None,
        ),
        ParamInfo::new(
            "tie_rod_1_damping",
            "N s/m",
            "viscous part d_1 of tie rod 1",
            Some(0.0),
        ),
        ParamInfo::new(
            "coupling_rod_stiffness",
            "N/m",
            "axial stiffness c_C of the coupling rod",
            None,
        ),
        ParamInfo::new(
            "coupling_rod_damping",
            "N s/m",
            "viscous part d_C of the coupling rod",
            Some(0.0),
        ),
        ParamInfo::new(
            "tie_rod_2_stiffness",
            "N/m",
            "axial stiffness c_2 of tie rod 2",
            None,
        ),
        ParamInfo::new(
            "tie_rod_2_damping",
            "N s/m",
            "viscous part d_2 of tie rod 2",
            Some(0.0),
        ),
        ParamInfo::new(
            "pitman_arm_min_deg",
            "deg",
            "pitman-arm stop delta_P_min",
            Some(-55.0),
        ),
        ParamInfo::new(
            "pitman_arm_max_deg",
            "deg",
            "pitman-arm stop delta_P_max",
            Some(55.0),
        ),
        ParamInfo::new(
            "pitman_arm_stop_stiffness",
            "N m/rad",
            "torsional stiffness of the pitman-arm stops (linear past the stop)",
            Some(1.0e6),
        ),
        ParamInfo::new(
            "coupling_lever_min_deg",
            "deg",
            "coupling-lever stop delta_L_min",
            Some(-55.0),
        ),
        ParamInfo::new(
            "coupling_lever_max_deg",
            "deg",
            "coupling-lever stop delta_L_max",
            Some(55.0),
        ),
        ParamInfo::new(
            "coupling_lever_stop_stiffness",
            "N m/rad",
            "torsional stiffness of the coupling-lever stops",
            Some(1.0e6),
        ),
        ParamInfo::new(
            "steering_wheel_angle_deg",
            "s, deg",
            "optional time table [t0, delta0, t1, delta1, ...] of delta_W (linear, constant outside; exact rate); without it the input slots steering_wheel_angle and steering_wheel_rate are read",
            Some(f64::NAN),
        ),
    ],
    states: &[],
    outputs: OUTPUTS,
    inputs: INPUTS,
};

/// Registers the kind on `reg`.
pub fn register(reg: &mut ElementRegistry) {
    reg.register(INFO, build);
}

/// A piecewise-linear time table (constant outside).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeTable {
    t: Vec<f64>,
    v: Vec<f64>,
}

impl TimeTable {
    /// From pairs [t0, v0, t1, v1, ...] with strictly increasing times; `scale` multiplies the
    /// values.
    pub fn from_pairs(name: &str, pairs: &[f64], scale: f64) -> Result<Self, String> {
        if pairs.len() < 2 || !pairs.len().is_multiple_of(2) || pairs.iter().any(|x| !x.is_finite())
        {
            return Err(format!(
                "parameter `{name}` needs finite pairs [t0, value0, t1, value1, ...], got {} numbers",
                pairs.len()
            ));
        }
        let t: Vec<f64> = pairs.iter().step_by(2).copied().collect();
        let v: Vec<f64> = pairs.iter().skip(1).step_by(2).map(|x| x * scale).collect();
        if t.windows(2).any(|w| w[1] <= w[0]) {
            return Err(format!(
                "parameter `{name}`: the times must be strictly increasing"
            ));
        }
        Ok(Self { t, v })
    }

    /// Whether every value is the same (the table then does not depend on time).
    pub fn is_constant(&self) -> bool {
        self.v.iter().all(|&v| v == self.v[0])
    }

    /// Value and rate at `t` (the rate is the segment slope, 0 outside the table).
    pub fn at(&self, t: f64) -> (f64, f64) {
        let n = self.t.len();
        if t <= self.t[0] {
            return (self.v[0], 0.0);
        }
        if t >= self.t[n - 1] {
            return (self.v[n - 1], 0.0);
        }
        let k = self.t.partition_point(|&x| x <= t) - 1;
        let slope = (self.v[k + 1] - self.v[k]) / (self.t[k + 1] - self.t[k]);
        (self.v[k] + slope * (t - self.t[k]), slope)
    }
}

fn point(p: &ElementParams, name: &str) -> Result<Vector3<f64>, String> {
    match p.list(name)? {
        Some([x, y, z]) if x.is_finite() && y.is_finite() && z.is_finite() => {
            Ok(Vector3::new(*x, *y, *z))
        }
        Some(other) => Err(format!(
            "parameter `{name}` must be a point [x, y, z] of finite numbers (m), got {} numbers",
            other.len()
        )),
        None => Err(format!(
            "parameter `{name}` is missing; add {name} = [x, y, z] (global design position, m)"
        )),
    }
}

/// The arm vector in the frame of `bearing` at θ = 0 for the global design point `point`;
/// rejects a point on the arm axis.
fn arm(bearing: &MarkerState, name: &str, point: &Vector3<f64>) -> Result<Vector3<f64>, String> {
    let local = bearing.rot.transpose() * (point - bearing.x);
    let radius = local.x.hypot(local.y);
    if radius < 1e-4 {
        return Err(format!(
            "parameter `{name}` lies on the arm's rotation axis (z axis of its bearing marker; {radius:.2e} m from it): the arm needs a lever length"
        ));
    }
    Ok(local)
}

fn stop(p: &ElementParams, prefix: &str) -> Result<Stop, String> {
    let min = p.number(&format!("{prefix}_min_deg"))?;
    let max = p.number(&format!("{prefix}_max_deg"))?;
    if min >= max || !min.is_finite() || !max.is_finite() {
        return Err(format!(
            "parameters `{prefix}_min_deg` = {min} and `{prefix}_max_deg` = {max}: the stops need min < max"
        ));
    }
    Ok(Stop {
        min: min.to_radians(),
        max: max.to_radians(),
        stiffness: p.non_negative(&format!("{prefix}_stop_stiffness"))?,
    })
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    Ok(Arc::new(steering(p, design)?))
}

/// The element from its parameters and the design kinematics of its four markers.
pub fn steering(p: &ElementParams, design: &[MarkerState]) -> Result<DualAxleSteering, String> {
    let ratio = match (p.has("box_ratio"), p.list("box_ratio_curve")?) {
        (true, None) => {
            let i = p.number("box_ratio")?;
            if !i.is_finite() || i == 0.0 {
                return Err(format!(
                    "parameter `box_ratio` = {i} must be finite and non-zero"
                ));
            }
            BoxRatio::Constant(i)
        }
        (false, Some(c)) => BoxRatio::curve(c)?,
        (true, Some(_)) => {
            return Err("give either `box_ratio` or `box_ratio_curve`, not both".to_string());
        }
        (false, None) => {
            return Err(
                "the steering-box ratio is missing; add box_ratio = 0.07 (i_S = d delta_P / d delta_S) or box_ratio_curve = [delta_S, i_S, ...]"
                    .to_string(),
            );
        }
    };
    let (h1, h2) = (&design[0], &design[1]);
    let (i1, c1) = (point(p, "joint_i1")?, point(p, "joint_c1")?);
    let (c2, i2) = (point(p, "joint_c2")?, point(p, "joint_i2")?);
    let ends = [
        (
            End {
                marker: 0,
                arm: Some(arm(h1, "joint_i1", &i1)?),
            },
            End {
                marker: 2,
                arm: None,
            },
            i1,
            design[2].x,
            "tie_rod_1",
        ),
        (
            End {
                marker: 0,
                arm: Some(arm(h1, "joint_c1", &c1)?),
            },
            End {
                marker: 1,
                arm: Some(arm(h2, "joint_c2", &c2)?),
            },
            c1,
            c2,
            "coupling_rod",
        ),
        (
            End {
                marker: 1,
                arm: Some(arm(h2, "joint_i2", &i2)?),
            },
            End {
                marker: 3,
                arm: None,
            },
            i2,
            design[3].x,
            "tie_rod_2",
        ),
    ];
    let mut rods = Vec::with_capacity(3);
    for (a, b, xa, xb, name) in ends {
        let free_length = (xb - xa).norm();
        if free_length < 1e-3 {
            return Err(format!(
                "{name}: its ends coincide in the design position ({free_length:.2e} m apart); check the joint positions and the knuckle markers"
            ));
        }
        rods.push(Rod {
            a,
            b,
            stiffness: p.positive(&format!("{name}_stiffness"))?,
            damping: p.non_negative(&format!("{name}_damping"))?,
            free_length,
        });
    }
    let linkage = Linkage {
        rods: [rods[0], rods[1], rods[2]],
        column_stiffness: p.positive("column_stiffness")?,
        ratio,
        stops: [stop(p, "pitman_arm")?, stop(p, "coupling_lever")?],
    };
    let wheel = match p.list("steering_wheel_angle_deg")? {
        Some(pairs) => Some(TimeTable::from_pairs(
            "steering_wheel_angle_deg",
            pairs,
            std::f64::consts::PI / 180.0,
        )?),
        None => None,
    };
    Ok(DualAxleSteering { linkage, wheel })
}
