//! Output channels (named, with units) computed from a state: body and marker kinematics,
//! displacements from the design position, camber and toe, element forces and deflections.
//!
//! Channels are resolved once from the model's `[[outputs]]` into indices; evaluation reads the
//! evaluator's tables, so the evaluator must have been run at the state first
//! ([`OutputSet::evaluate`] does that).
//!
//! Element loads: `force`/`torque` in marker-J axes (bushing) or as the scalar tension-positive
//! force (P2P) by default; with `frame = "global"` as global vectors (bushing: R_J f, R_J t; P2P:
//! −f u with u = (x_I − x_J)/L); `on = "body_j"` reports the load on the reference body instead:
//! the opposite force, and for a bushing the opposite torque (both act at x_I).
//!
//! Camber and toe use the spin axis a = local y axis of the marker, oriented outward (away from the
//! plane y = 0 of the axle): camber = −asin(a_z) (positive: top of the wheel leans outward),
//! toe = atan2(a_x, |a_y|) (positive: toe-in), both in degrees.

use nalgebra::{Matrix3, Vector3};
use sprung_model as sm;

use crate::compiled::CompiledModel;
use crate::kinematics::MarkerKin;
use crate::pipeline::Evaluator;
use crate::rotation::log_so3;

/// What a channel reads.
#[derive(Debug, Clone, Copy)]
enum Source {
    Marker(usize),
    Body(usize),
    Element(usize),
    /// Output `.1` of open element `.0`.
    OpenElement(usize, usize),
}

/// One resolved channel.
#[derive(Debug, Clone)]
pub struct Channel {
    /// Channel name.
    pub name: String,
    /// Unit.
    pub unit: &'static str,
    /// Human-readable description.
    pub description: String,
    source: Source,
    quantity: sm::Quantity,
    component: sm::Component,
    local: bool,
    /// Element loads: sign +1 on body_i, −1 on body_j.
    sign: f64,
    /// Design position (markers/bodies) and design orientation.
    design_x: Vector3<f64>,
    design_rot: Matrix3<f64>,
}

/// The resolved output channels of a model.
#[derive(Debug, Clone)]
pub struct OutputSet {
    /// Channels in order.
    pub channels: Vec<Channel>,
    /// The elements the channels read (sorted, once each): only these are evaluated.
    elements: Vec<usize>,
    /// The open elements the channels read (sorted, once each).
    open_elements: Vec<usize>,
}

fn component(v: &Vector3<f64>, c: sm::Component) -> f64 {
    match c {
        sm::Component::X => v.x,
        sm::Component::Y => v.y,
        sm::Component::Z => v.z,
        sm::Component::Norm => v.norm(),
    }
}

impl OutputSet {
    /// Resolves the `[[outputs]]` of `m` against the compiled model. Names were validated at load,
    /// so unknown names are reported as errors naming the output.
    pub fn new(m: &sm::Model, cm: &CompiledModel) -> Result<Self, String> {
        let (r0, _) = cm.design_poses();
        let mut channels = Vec::with_capacity(m.outputs.len());
        for o in &m.outputs {
            let (source, design_x, design_rot) = if let Some(name) = &o.marker {
                let k = cm
                    .markers
                    .iter()
                    .position(|mk| &mk.name == name)
                    .ok_or(format!("output '{}': unknown marker '{name}'", o.name))?;
                let bodies: Vec<_> = (0..cm.bodies.len())
                    .map(|i| crate::kinematics::BodyKin::from_state(i, &r0, &vec![0.0; cm.n_v()]))
                    .collect();
                let mk = MarkerKin::new(&cm.markers[k], &bodies);
                (Source::Marker(k), mk.x, mk.rot.to_matrix())
            } else if let Some(name) = &o.body {
                let k = cm
                    .bodies
                    .iter()
                    .position(|b| &b.name == name)
                    .ok_or(format!("output '{}': unknown body '{name}'", o.name))?;
                let b = &cm.bodies[k];
                (
                    Source::Body(k),
                    b.position,
                    crate::rotation::quat_to_matrix(&b.orientation),
                )
            } else if let (Some(name), Some(out)) = (&o.element, &o.output) {
                let e = cm
                    .open_elements
                    .iter()
                    .position(|e| &e.name == name)
                    .ok_or(format!(
                        "output '{}': '{name}' is not an [[elements]] element",
                        o.name
                    ))?;
                let law = &cm.open_elements[e].law;
                let j = law.outputs().iter().position(|x| x.name == out).ok_or_else(|| {
                    let names: Vec<&str> = law.outputs().iter().map(|x| x.name).collect();
                    format!(
                        "output '{}': element '{name}' of kind '{}' has no output '{out}'; its outputs are: {}",
                        o.name,
                        law.kind(),
                        names.join(", ")
                    )
                })?;
                (
                    Source::OpenElement(e, j),
                    Vector3::zeros(),
                    Matrix3::identity(),
                )
            } else if let Some(name) = &o.element {
                let k = cm
                    .elements
                    .iter()
                    .position(|e| &e.name == name)
                    .ok_or(format!("output '{}': unknown element '{name}'", o.name))?;
                (Source::Element(k), Vector3::zeros(), Matrix3::identity())
            } else {
                return Err(format!(
                    "output '{}': names no marker, body or element",
                    o.name
                ));
            };
            let local = match source {
                Source::Element(_) => o.frame != Some(sm::OutputFrame::Global),
                _ => o.frame() == sm::OutputFrame::Local,
            };
            let sign = if o.on == Some(sm::ElementSide::BodyJ) {
                -1.0
            } else {
                1.0
            };
            let what = o
                .marker
                .as_deref()
                .or(o.body.as_deref())
                .or(o.element.as_deref())
                .unwrap_or("");
            let unit = match source {
                Source::OpenElement(e, j) => cm.open_elements[e].law.outputs()[j].unit,
                _ => o.quantity.unit(),
            };
            channels.push(Channel {
                name: o.name.clone(),
                unit,
                description: format!("{:?} of {what}", o.quantity).to_lowercase(),
                source,
                quantity: o.quantity,
                component: o.component(),
                local,
                sign,
                design_x,
                design_rot,
            });
        }
        let mut elements: Vec<usize> = channels
            .iter()
            .filter_map(|c| match c.source {
                Source::Element(k) => Some(k),
                _ => None,
            })
            .collect();
        elements.sort_unstable();
        elements.dedup();
        let mut open_elements: Vec<usize> = channels
            .iter()
            .filter_map(|c| match c.source {
                Source::OpenElement(e, _) => Some(e),
                _ => None,
            })
            .collect();
        open_elements.sort_unstable();
        open_elements.dedup();
        Ok(Self {
            channels,
            elements,
            open_elements,
        })
    }

    /// Number of channels.
    pub fn len(&self) -> usize {
        self.channels.len()
    }

    /// True when there are no channels.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Evaluates the model at (t, r, v) and writes all channel values into `out`.
    pub fn evaluate(&self, eval: &mut Evaluator, t: f64, r: &[f64], v: &[f64], out: &mut [f64]) {
        eval.evaluate_elements(t, r, v, &self.elements);
        if !self.open_elements.is_empty() {
            eval.evaluate_open_elements(t, v, &self.open_elements);
        }
        self.read(eval, out);
    }

    /// Writes all channel values into `out` from the evaluator's current tables.
    pub fn read(&self, eval: &Evaluator, out: &mut [f64]) {
        let model: &CompiledModel = eval.model();
        for (ch, o) in self.channels.iter().zip(out.iter_mut()) {
            *o = match ch.source {
                Source::Element(k) => element_value(ch, model, eval, k),
                Source::OpenElement(e, j) => eval.open_element_outputs(e)[j],
                Source::Marker(k) => {
                    let mk = MarkerKin::new(&model.markers[k], &eval.bodies);
                    let rot = mk.rot.to_matrix();
                    let w_local = rot.transpose() * mk.w;
                    kinematic_value(ch, mk.x, rot, mk.v, mk.w, w_local)
                }
                Source::Body(k) => {
                    let b = &eval.bodies[k];
                    kinematic_value(ch, b.x, b.rot, b.v, b.w, b.w_body)
                }
            };
        }
    }
}

/// Global force and torque of element `k` on body_i: the local values turned by marker J's axes
/// (bushing) or −f u (P2P).
fn element_load_global(
    model: &CompiledModel,
    eval: &Evaluator,
    k: usize,
) -> (Vector3<f64>, Vector3<f64>) {
    let el = &model.elements[k];
    let e = &eval.elements[k].out;
    let mi = MarkerKin::new(&model.markers[el.marker_i], &eval.bodies);
    let mj = MarkerKin::new(&model.markers[el.marker_j], &eval.bodies);
    match el.kind {
        crate::compiled::ElementKind::Bushing(_) => {
            (mj.rot.mul_vec(&e.force), mj.rot.mul_vec(&e.torque))
        }
        crate::compiled::ElementKind::P2p(_) => {
            let d = mi.x - mj.x;
            let u = if d.norm() > crate::p2p::MIN_LENGTH {
                d / d.norm()
            } else {
                Vector3::zeros()
            };
            (-e.force.x * u, Vector3::zeros())
        }
    }
}

fn element_value(ch: &Channel, model: &CompiledModel, eval: &Evaluator, k: usize) -> f64 {
    use sm::Quantity as Q;
    let e = &eval.elements[k].out;
    let p2p = matches!(model.elements[k].kind, crate::compiled::ElementKind::P2p(_));
    match ch.quantity {
        Q::Force | Q::Torque if !ch.local => {
            let (f, t) = element_load_global(model, eval, k);
            ch.sign * component(if ch.quantity == Q::Force { &f } else { &t }, ch.component)
        }
        Q::Force if p2p => ch.sign * e.force.x,
        Q::Force => ch.sign * component(&e.force, ch.component),
        Q::Torque => ch.sign * component(&e.torque, ch.component),
        Q::Deflection => component(&e.deflection, ch.component),
        Q::RotDeflection => component(&e.rot_deflection, ch.component),
        Q::Length => e.length,
        Q::LengthRate => e.length_rate,
        _ => f64::NAN,
    }
}

fn kinematic_value(
    ch: &Channel,
    x: Vector3<f64>,
    rot: Matrix3<f64>,
    v: Vector3<f64>,
    w: Vector3<f64>,
    w_local: Vector3<f64>,
) -> f64 {
    use sm::Quantity as Q;
    let frame = |g: Vector3<f64>| if ch.local { rot.transpose() * g } else { g };
    match ch.quantity {
        Q::Position => component(&frame(x), ch.component),
        Q::Displacement => component(&frame(x - ch.design_x), ch.component),
        Q::Velocity => component(&frame(v), ch.component),
        Q::AngularVelocity => component(if ch.local { &w_local } else { &w }, ch.component),
        Q::Orientation => component(
            &frame(log_so3(&(rot * ch.design_rot.transpose()))),
            ch.component,
        ),
        Q::Camber | Q::Toe => {
            let mut a: Vector3<f64> = rot.column(1).into_owned();
            let outward = if ch.design_x.y >= 0.0 { 1.0 } else { -1.0 };
            if a.y * outward < 0.0 {
                a = -a;
            }
            if ch.quantity == Q::Camber {
                (-a.z.clamp(-1.0, 1.0).asin()).to_degrees()
            } else {
                a.x.atan2(a.y.abs()).to_degrees()
            }
        }
        _ => f64::NAN,
    }
}
