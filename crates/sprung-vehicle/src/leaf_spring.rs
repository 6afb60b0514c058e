//! Leaf-spring template: the lumped three-link leaf spring (SAE three-link model) built from
//! bodies and bushings of the model format.
//!
//! Source: document 002 (`../shared/seeds/002_e0ef91a6cdcd28dd.txt`, "leaf springs act as
//! generalized force elements, suspending and guiding the axle carrier"; the seed's truck uses a
//! 5-link lumped model after Rill et al. 2022) and the SAE three-link parameters of
//! `../shared/data/vehicle-reference.md` ("Leaf-spring axle"). The leaf is cut into a front link
//! (front eye to front clamp), the clamped centre part (rigid with the axle, or a separate seat
//! body when a wind-up rate below the geometric one is asked for) and a rear link (rear clamp to
//! the shackle); the shackle is a third body pivoting on the frame. Bending of the two halves is
//! lumped into rotational springs about the lateral axis at the clamps.
//!
//! Stiffness synthesis (small deflections, straight leaf, eye forces vertical; `docs/leaf-spring.md`
//! derives it): with a, b the lengths of the front and rear links and L_f, L_r the horizontal
//! distances from the front eye and the rear (shackle) end to the seat, L = L_f + L_r, a seat that
//! moves by z and pitches by φ turns the links relative to the seat by θ_f = (z − φ c/2)/a − φ and
//! θ_r = −(z + φ c/2)/b − φ (c the clamp length). The clamp rotational stiffnesses
//! k_f = K_z a² L_r/L and k_r = K_z b² L_f/L give the vertical rate K_z with no coupling between
//! vertical load and pitch; the wind-up rate is then K_w,geo = K_z L_f L_r. A smaller wind-up rate
//! K_w puts a rotational spring k_s = 1/(1/K_w − 1/K_w,geo) between a seat body and the axle;
//! a larger one cannot be produced by this layout and is an error. The lateral rate K_y at the
//! seat comes from two lateral paths of rate K_y (L_f² + L_r²)/L² each (a leaf free to yaw about
//! the seat), front eye and shackle; the pins' lateral stiffness is what remains after the series
//! compliance of the clamps, the links' bending about z and the shackle.
//!
//! Preload: in the design position the leaf carries `design_load` at the seat; the bushings get
//! the preload forces and torques of the static force flow (eye, shackle as a two-force member,
//! link equilibrium), so that the design position is the static equilibrium under that load
//! (the weight of the leaf links, a few per mille of a truck's axle load, is not included).

use nalgebra::Vector3;
use serde::Deserialize;

/// Rounds to 10 significant digits, so that generated files do not carry round-off noise
/// (`30.000000000000004`); the rounding is far below every tolerance of the model.
fn tidy(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0; // also turns -0.0 into 0.0
    }
    if !x.is_finite() {
        return x;
    }
    let e = 9 - x.abs().log10().floor() as i32;
    let p = 10f64.powi(e.abs());
    let r = if e >= 0 {
        (x * p).round() / p
    } else {
        (x / p).round() * p
    };
    if r.abs() < 1e-12 { 0.0 } else { r }
}

fn tidy3(v: Vector3<f64>) -> [f64; 3] {
    [tidy(v[0]), tidy(v[1]), tidy(v[2])]
}
use sprung_model::types::{Axis, Body, Bushing, ForceElement, Inertia, Marker};

/// Errors of the leaf-spring template.
#[derive(Debug, thiserror::Error)]
pub enum LeafSpringError {
    /// The parameter file is not valid TOML or has unknown/missing keys.
    #[error("leaf-spring parameters {file}: {message}")]
    Parse {
        /// File label.
        file: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A parameter value is out of range or the geometry is inconsistent.
    #[error("leaf spring '{name}': {message}; fix: {fix}")]
    Invalid {
        /// The leaf spring's name.
        name: String,
        /// What is wrong.
        message: String,
        /// How to fix it.
        fix: String,
    },
}

fn d_frame() -> String {
    "frame".to_string()
}
fn d_true() -> bool {
    true
}
fn d_joint() -> f64 {
    1e8
}
fn d_joint_rot() -> f64 {
    1e7
}
fn d_eye_rot() -> f64 {
    2e4
}
fn d_damping_time() -> f64 {
    0.01
}
fn d_shackle_mass() -> f64 {
    2.0
}

/// Parameters of one leaf spring (left side; `mirror = true` creates the right one).
/// Positions are global design positions in m; the leaf lies along x (front eye at larger x).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpringParams {
    /// Name prefix of the generated items; names end in `_L` (bodies `{name}_front_L`, ...).
    pub name: String,
    /// Body the eye and the shackle pivot are fixed to (default `frame`).
    #[serde(default = "d_frame")]
    pub frame: String,
    /// Body the leaf is clamped to (the axle carrier; not mirrored, shared by both sides).
    pub axle: String,
    /// Front eye centre (pin on the frame hanger), m.
    pub front_eye: [f64; 3],
    /// Rear end of the leaf (the shackle's lower pin), m.
    pub rear_eye: [f64; 3],
    /// Shackle pivot on the frame (upper pin), m.
    pub shackle_pivot: [f64; 3],
    /// Centre of the axle seat (middle of the clamped length) on the leaf line, m.
    pub seat: [f64; 3],
    /// Clamped length of the leaf at the seat (U-bolts), m.
    pub clamp_length: f64,
    /// Vertical rate at the seat, N/m.
    pub vertical_rate: f64,
    /// Vertical load the leaf carries at the seat in the design position, N (> 0 = frame weight on the axle).
    pub design_load: f64,
    /// Lateral rate at the seat, N/m.
    pub lateral_rate: f64,
    /// Wind-up (pitch) rate of the seat, N m/rad; default the layout's geometric rate K_z L_f L_r.
    #[serde(default)]
    pub windup_rate: Option<f64>,
    /// Mass of the two free leaf parts together, kg (the clamped centre belongs to the axle).
    pub leaf_mass: f64,
    /// Mass of the shackle, kg.
    #[serde(default = "d_shackle_mass")]
    pub shackle_mass: f64,
    /// Translational stiffness of the pins and clamps in their stiff directions, N/m.
    #[serde(default = "d_joint")]
    pub joint_stiffness: f64,
    /// Rotational stiffness of clamps and pins in their stiff directions, N m/rad.
    #[serde(default = "d_joint_rot")]
    pub joint_rot_stiffness: f64,
    /// Rotational stiffness of the rubber eyes about x and z (the pins turn freely about y), N m/rad.
    #[serde(default = "d_eye_rot")]
    pub eye_rot_stiffness: f64,
    /// Damping of every bushing as a fraction of its stiffness, s (data sheet: 1 % → 0.01 s).
    #[serde(default = "d_damping_time")]
    pub damping_time: f64,
    /// Generate left items with `mirror = true` (default true).
    #[serde(default = "d_true")]
    pub mirror: bool,
}

/// Derived values of a generated leaf spring (also written into the generated file's header).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeafSpringDerived {
    /// Front link length a, m.
    pub front_link: f64,
    /// Rear link length b, m.
    pub rear_link: f64,
    /// Horizontal distance front eye – seat L_f, m.
    pub l_front: f64,
    /// Horizontal distance rear end – seat L_r, m.
    pub l_rear: f64,
    /// Clamp rotational stiffness, front, N m/rad.
    pub k_clamp_front: f64,
    /// Clamp rotational stiffness, rear, N m/rad.
    pub k_clamp_rear: f64,
    /// Geometric wind-up rate K_z L_f L_r, N m/rad.
    pub windup_geometric: f64,
    /// Seat rotational stiffness (None: no seat body, the clamps act on the axle), N m/rad.
    pub k_seat: Option<f64>,
    /// Lateral stiffness of the front eye, N/m.
    pub k_lateral_front: f64,
    /// Lateral stiffness of the shackle's lower pin, N/m.
    pub k_lateral_rear: f64,
    /// Force in the shackle (positive = tension), N.
    pub shackle_force: f64,
    /// Vertical load at the front eye, N.
    pub front_eye_load: f64,
}

/// The generated model-description fragment.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafSpring {
    /// Leaf links, shackle (and the seat body when a wind-up rate is given).
    pub bodies: Vec<Body>,
    /// Markers on the links, the frame and the axle.
    pub markers: Vec<Marker>,
    /// Bushings: eye, clamps, shackle pins (and seat).
    pub force_elements: Vec<ForceElement>,
    /// Derived stiffnesses and loads.
    pub derived: LeafSpringDerived,
}

impl LeafSpringParams {
    /// Reads parameters from TOML text; `file` labels errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Self, LeafSpringError> {
        toml::from_str(text).map_err(|e| LeafSpringError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })
    }

    fn invalid(&self, message: String, fix: &str) -> LeafSpringError {
        LeafSpringError::Invalid {
            name: self.name.clone(),
            message,
            fix: fix.to_string(),
        }
    }

    fn check(&self) -> Result<(), LeafSpringError> {
        if self.name.is_empty() || self.name.ends_with("_L") || self.name.ends_with("_R") {
            return Err(self.invalid(
                format!("name = '{}' is empty or ends in _L/_R", self.name),
                "give a plain prefix such as 'leaf_f1'; the template appends _L",
            ));
        }
        let positive = [
            ("clamp_length", self.clamp_length),
            ("vertical_rate", self.vertical_rate),
            ("lateral_rate", self.lateral_rate),
            ("leaf_mass", self.leaf_mass),
            ("shackle_mass", self.shackle_mass),
            ("joint_stiffness", self.joint_stiffness),
            ("joint_rot_stiffness", self.joint_rot_stiffness),
        ];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(self.invalid(
                    format!("{key} = {v} is not a positive finite number"),
                    "give a value > 0 in SI units",
                ));
            }
        }
        let nonneg = [
            ("design_load", self.design_load),
            ("eye_rot_stiffness", self.eye_rot_stiffness),
            ("damping_time", self.damping_time),
        ];
        for (key, v) in nonneg {
            if !(v.is_finite() && v >= 0.0) {
                return Err(self.invalid(
                    format!("{key} = {v} is not a finite number >= 0"),
                    "give a value >= 0 in SI units",
                ));
            }
        }
        for (key, p) in [
            ("front_eye", self.front_eye),
            ("rear_eye", self.rear_eye),
            ("shackle_pivot", self.shackle_pivot),
            ("seat", self.seat),
        ] {
            if p.iter().any(|x| !x.is_finite()) {
                return Err(self.invalid(
                    format!("{key} = {p:?} has a non-finite coordinate"),
                    "give finite global coordinates in m",
                ));
            }
            if key != "shackle_pivot" && p[1] <= 0.0 && self.mirror {
                return Err(self.invalid(
                    format!("{key} = {p:?} is not on the left side (y <= 0) but mirror = true"),
                    "give the left leaf (y > 0); the right one is its mirror image",
                ));
            }
        }
        let half = 0.5 * self.clamp_length;
        if !(self.front_eye[0] > self.seat[0] + half && self.rear_eye[0] < self.seat[0] - half) {
            return Err(self.invalid(
                format!(
                    "the clamp [{:.4}, {:.4}] m is not between the rear end x = {} m and the front eye x = {} m",
                    self.seat[0] - half,
                    self.seat[0] + half,
                    self.rear_eye[0],
                    self.front_eye[0]
                ),
                "put the front eye ahead of the clamp (larger x) and the rear end behind it",
            ));
        }
        let s = Vector3::from(self.shackle_pivot) - Vector3::from(self.rear_eye);
        if s.norm() < 1e-3 || s[2].abs() < 0.5 * s.norm() {
            return Err(self.invalid(
                format!(
                    "the shackle from {:?} to {:?} is shorter than 1 mm or inclined more than 60 deg from vertical",
                    self.rear_eye, self.shackle_pivot
                ),
                "place the shackle pivot above or below the rear end, the shackle near vertical",
            ));
        }
        Ok(())
    }

    /// Builds the bodies, markers and bushings of the leaf spring.
    pub fn build(&self) -> Result<LeafSpring, LeafSpringError> {
        self.check()?;
        let eye = Vector3::from(self.front_eye);
        let end = Vector3::from(self.rear_eye);
        let pivot = Vector3::from(self.shackle_pivot);
        let seat = Vector3::from(self.seat);
        let half = 0.5 * self.clamp_length;
        let cf = seat + Vector3::new(half, 0.0, 0.0);
        let cr = seat - Vector3::new(half, 0.0, 0.0);
        let a = (eye - cf).norm();
        let b = (end - cr).norm();
        let l_f = eye[0] - seat[0];
        let l_r = seat[0] - end[0];
        let l = l_f + l_r;
        let kz = self.vertical_rate;
        let k_f = kz * a * a * l_r / l;
        let k_r = kz * b * b * l_f / l;
        let kw_geo = kz * l_f * l_r;
        let k_seat = match self.windup_rate {
            None => None,
            Some(kw) if kw.is_finite() && kw > 0.0 && kw < kw_geo => {
                Some(1.0 / (1.0 / kw - 1.0 / kw_geo))
            }
            Some(kw) => {
                return Err(self.invalid(
                    format!(
                        "windup_rate = {kw} N m/rad is not in (0, {kw_geo:.6e}), the geometric wind-up rate K_z L_f L_r of this layout"
                    ),
                    "give a smaller wind-up rate, or omit it to get the geometric one",
                ));
            }
        };
        // Lateral: each path (seat → clamp → link bending about z → pin) must have the rate
        // k_path; the pins get what is left after the clamps' and the links' compliance (and, at
        // the rear, the shackle's: its upper pin and its swing about x).
        let k_path = self.lateral_rate * (l_f * l_f + l_r * l_r) / (l * l);
        let kj = self.joint_stiffness;
        let kjr = self.joint_rot_stiffness;
        let shackle_len = (pivot - end).norm();
        let pin = |series: f64, which: &str| {
            let c = 1.0 / k_path - series;
            if c > 0.0 {
                Ok(1.0 / c)
            } else {
                Err(self.invalid(
                    format!(
                        "lateral_rate = {} N/m cannot be reached: the {which} path's joints alone are softer ({:.4e} N/m)",
                        self.lateral_rate,
                        1.0 / series
                    ),
                    "lower lateral_rate or raise joint_stiffness / joint_rot_stiffness",
                ))
            }
        };
        let k_pin_front = pin(a * a / kjr + 1.0 / kj, "front")?;
        let k_pin_rear = pin(
            b * b / kjr + 2.0 / kj + shackle_len * shackle_len / kjr,
            "rear",
        )?;

        // Static force flow in the design position (module docs): the axle pushes the leaf up
        // with design_load at the seat, the shackle (a two-force member along s) and the eye
        // hold it; zero pitch moment at the seat fixes the shackle force g.
        let s = (pivot - end).normalize();
        let fd = self.design_load;
        let d = end - eye;
        let g = -fd * (eye[0] - seat[0]) / (d[2] * s[0] - d[0] * s[2]);
        let f_shackle_on_leaf = s * g;
        let f_eye_on_leaf = -Vector3::new(0.0, 0.0, fd) - f_shackle_on_leaf;
        let f_front_clamp = -f_eye_on_leaf; // on the front link, from the seat
        let t_front_clamp = -(eye - cf).cross(&f_eye_on_leaf);
        let f_rear_clamp = -f_shackle_on_leaf;
        let t_rear_clamp = -(end - cr).cross(&f_shackle_on_leaf);

        let n = &self.name;
        let m = self.mirror;
        let front = format!("{n}_front_L");
        let rear = format!("{n}_rear_L");
        let shackle = format!("{n}_shackle_L");
        let seat_body = format!("{n}_seat_L");
        let clamp_body = if k_seat.is_some() {
            seat_body.clone()
        } else {
            self.axle.clone()
        };
        let m_front = self.leaf_mass * a / (a + b);
        let m_rear = self.leaf_mass * b / (a + b);
        // Slender bars of 0.1 m section along x (links, seat) or z (shackle).
        let rod = |mass: f64, len: f64, along_z: bool| {
            let (thin, long) = (mass * 0.1 * 0.1 / 12.0, mass * len * len / 12.0);
            Inertia {
                tensor: None,
                principal: Some(if along_z {
                    [tidy(long), tidy(long), tidy(thin)]
                } else {
                    [tidy(thin), tidy(long), tidy(long)]
                }),
                euler_zyx_deg: None,
            }
        };
        let body = |name: &str, mass: f64, pos: Vector3<f64>, len: f64| Body {
            name: name.to_string(),
            mass: tidy(mass),
            position: tidy3(pos),
            euler_zyx_deg: None,
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            inertia: rod(mass, len, name.contains("_shackle_")),
            mirror: m,
            joint: None,
        };
        let mut bodies = vec![
            body(&front, m_front, 0.5 * (eye + cf), a),
            body(&rear, m_rear, 0.5 * (end + cr), b),
            body(
                &shackle,
                self.shackle_mass,
                0.5 * (end + pivot),
                (pivot - end).norm(),
            ),
        ];
        if k_seat.is_some() {
            // The clamped centre part: a short stiff piece; its mass is a share of the leaf's by length.
            let m_seat = self.leaf_mass * self.clamp_length / (a + b);
            bodies.push(body(&seat_body, m_seat.max(1.0), seat, self.clamp_length));
        }
        let mut markers = Vec::new();
        let mut marker = |name: String, body: &str, pos: Vector3<f64>| {
            markers.push(Marker {
                name,
                body: body.to_string(),
                global_position: Some(tidy3(pos)),
                position: None,
                frame: None,
                global_axes: None,
                euler_zyx_deg: None,
                mirror: m,
            });
        };
        let ct = self.damping_time;
        let ke = self.eye_rot_stiffness;
        let mut elements = Vec::new();
        let mut bushing = |name: String,
                           body_i: &str,
                           body_j: &str,
                           at: Vector3<f64>,
                           k: [f64; 3],
                           kr: [f64; 3],
                           f0: Vector3<f64>,
                           t0: Vector3<f64>| {
            let mi = format!("{name}.I");
            let mj = format!("{name}.J");
            marker(mi.clone(), body_i, at);
            marker(mj.clone(), body_j, at);
            let spin_free = kr[1] == 0.0;
            elements.push(ForceElement::Bushing(Bushing {
                name,
                marker_i: mi,
                marker_j: mj,
                stiffness: k.map(tidy),
                rot_stiffness: kr.map(tidy),
                damping: k.map(|x| tidy(x * ct)),
                rot_damping: kr.map(|x| tidy(x * ct)),
                stiffness_curves: Default::default(),
                rot_stiffness_curves: Default::default(),
                damping_curves: Default::default(),
                rot_damping_curves: Default::default(),
                preload: tidy3(f0),
                rot_preload: tidy3(t0),
                spin_axis: spin_free.then_some(Axis::Y),
                mirror: m,
            }));
        };
        let zero = Vector3::zeros();
        bushing(
            format!("{n}_eye_L"),
            &front,
            &self.frame,
            eye,
            [kj, k_pin_front, kj],
            [ke, 0.0, ke],
            f_eye_on_leaf,
            zero,
        );
        bushing(
            format!("{n}_clamp_front_L"),
            &front,
            &clamp_body,
            cf,
            [kj, kj, kj],
            [kjr, k_f, kjr],
            f_front_clamp,
            t_front_clamp,
        );
        bushing(
            format!("{n}_clamp_rear_L"),
            &rear,
            &clamp_body,
            cr,
            [kj, kj, kj],
            [kjr, k_r, kjr],
            f_rear_clamp,
            t_rear_clamp,
        );
        bushing(
            format!("{n}_shackle_lower_L"),
            &rear,
            &shackle,
            end,
            [kj, k_pin_rear, kj],
            [ke, 0.0, ke],
            f_shackle_on_leaf,
            zero,
        );
        bushing(
            format!("{n}_shackle_upper_L"),
            &shackle,
            &self.frame,
            pivot,
            [kj, kj, kj],
            [kjr, 0.0, kjr],
            f_shackle_on_leaf,
            zero,
        );
        if let Some(ks) = k_seat {
            bushing(
                format!("{n}_seat_L"),
                &seat_body,
                &self.axle,
                seat,
                [kj, kj, kj],
                [kjr, ks, kjr],
                Vector3::new(0.0, 0.0, fd),
                zero,
            );
        }
        Ok(LeafSpring {
            bodies,
            markers,
            force_elements: elements,
            derived: LeafSpringDerived {
                front_link: a,
                rear_link: b,
                l_front: l_f,
                l_rear: l_r,
                k_clamp_front: k_f,
                k_clamp_rear: k_r,
                windup_geometric: kw_geo,
                k_seat,
                k_lateral_front: k_pin_front,
                k_lateral_rear: k_pin_rear,
                shackle_force: g,
                front_eye_load: -f_eye_on_leaf[2],
            },
        })
    }
}

#[derive(serde::Serialize)]
struct Fragment<'a> {
    markers: &'a [Marker],
    force_elements: &'a [ForceElement],
}

impl LeafSpring {
    /// The fragment as model-file TOML (`[[bodies]]`, `[[markers]]`, `[[force_elements]]`) with a
    /// header naming the parameter file `source` and the derived stiffnesses; what
    /// `sprung template leaf-spring` writes. Deterministic: the same parameters give the same text.
    pub fn to_toml(&self, params: &LeafSpringParams, source: &str) -> String {
        let d = &self.derived;
        let mut out = String::new();
        out.push_str(&format!(
            "# Leaf spring '{}' (SAE three-link model, docs/leaf-spring.md), generated by\n\
             # `sprung template leaf-spring {source}`: do not edit, change the parameters and regenerate.\n\
             # Vertical rate {:.6e} N/m at the seat, design load {:.6e} N, lateral rate {:.6e} N/m.\n\
             # Derived: links a = {:.6} m, b = {:.6} m; L_f = {:.6} m, L_r = {:.6} m; clamp rotational\n\
             # stiffness front {:.6e}, rear {:.6e} N m/rad; geometric wind-up rate {:.6e} N m/rad;\n\
             # seat spring {}; lateral pin stiffness front {:.6e}, rear {:.6e} N/m;\n\
             # shackle force {:.6e} N (tension > 0);\n\
             # front eye load {:.6e} N.\n\n",
            params.name,
            params.vertical_rate,
            params.design_load,
            params.lateral_rate,
            d.front_link,
            d.rear_link,
            d.l_front,
            d.l_rear,
            d.k_clamp_front,
            d.k_clamp_rear,
            d.windup_geometric,
            match d.k_seat {
                Some(k) => format!("{k:.6e} N m/rad"),
                None => "none (clamped to the axle)".to_string(),
            },
            d.k_lateral_front,
            d.k_lateral_rear,
            d.shackle_force,
            d.front_eye_load,
        ));
        // Bodies by hand, with the inertia as an inline table on its own line (the serialiser
        // would write a `[bodies.inertia]` sub-table, which located errors cannot point into).
        let num = |x: f64| toml::Value::Float(x).to_string();
        let arr = |v: [f64; 3]| format!("[{}, {}, {}]", num(v[0]), num(v[1]), num(v[2]));
        for b in &self.bodies {
            out.push_str(&format!(
                "[[bodies]]\nname = \"{}\"\nmass = {}\nposition = {}\ninertia = {{ principal = {} }}\n{}\n",
                b.name,
                num(b.mass),
                arr(b.position),
                arr(b.inertia.principal.unwrap_or_default()),
                if b.mirror { "mirror = true\n" } else { "" }
            ));
        }
        let frag = Fragment {
            markers: &self.markers,
            force_elements: &self.force_elements,
        };
        out.push_str(&toml::to_string(&frag).expect("model types serialise to TOML"));
        out
    }
}
