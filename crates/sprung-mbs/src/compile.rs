//! Compiles a loaded, validated model description ([`sprung_model::Model`]) into the flat,
//! index-based [`CompiledModel`] (document 000, Bild 4): names become indices, marker poses become
//! body-frame constants, curves are referenced by index, and the body-coupling block pattern is
//! computed once.

use std::sync::Arc;

use nalgebra::{Matrix3, Vector3};
use sprung_model as sm;

use crate::compiled::{
    Body, Bushing, Characteristic, CompiledModel, DamperLaw, ElementKind, ForceElement, Input,
    InputKind, Marker, OpenElement, P2pLaw,
};
use crate::element_law::MarkerState;
use crate::elements::ElementRegistry;
use crate::kinematics::{BodyKin, MarkerKin};
use crate::rotation::matrix_to_quat;

/// A reference the validated model should not contain (compiling an unvalidated model).
#[derive(Debug, Clone, thiserror::Error)]
#[error("model '{model}': {what}")]
pub struct CompileError {
    /// Model name.
    pub model: String,
    /// What is wrong.
    pub what: String,
}

fn mat3(m: &[[f64; 3]; 3]) -> Matrix3<f64> {
    Matrix3::from_fn(|r, c| m[r][c])
}

/// Compiles `m` (already expanded and validated by [`sprung_model::load()`]) with the element
/// kinds that ship with sprung.
pub fn compile(m: &sm::Model) -> Result<CompiledModel, CompileError> {
    compile_with(m, &ElementRegistry::builtin())
}

/// Compiles `m` with the element kinds of `registry` (for kinds a library user adds).
pub fn compile_with(
    m: &sm::Model,
    registry: &ElementRegistry,
) -> Result<CompiledModel, CompileError> {
    let err = |what: String| CompileError {
        model: m.model.name.clone(),
        what,
    };
    // `[[elements]]` entries of the built-in kinds in a description built in code (the loader
    // has turned those of a file into force elements already): compiled as the force elements
    // they stand for, appended in their order (`sprung_model::builtin_kinds`).
    if m.elements
        .iter()
        .any(|e| registry.builtin_kind(&e.kind).is_some())
    {
        let normalised = m
            .clone()
            .with_builtin_elements_normalised()
            .map_err(|problems| {
                err(problems
                    .iter()
                    .map(|p| format!("element '{}': {}; fix: {}", p.name, p.message, p.hint))
                    .collect::<Vec<_>>()
                    .join("; "))
            })?;
        return compile_with(&normalised, registry);
    }
    let curve = |name: &str| -> Result<usize, CompileError> {
        m.curve_index(name)
            .ok_or_else(|| err(format!("unknown curve '{name}'")))
    };
    let bodies: Vec<Body> = m
        .bodies
        .iter()
        .map(|b| {
            let inertia = mat3(&b.inertia_tensor());
            let rot = mat3(&b.rotation());
            // A massless follower (`docs/joints.md`): zero mass and inertia; the evaluator
            // divides by a unit stand-in (`Body::inv_mass`, I⁻¹ = 1), so its acceleration slots
            // carry its wrench, which the joint projection uses directly.
            let massless = b.mass == 0.0 && inertia == Matrix3::zeros();
            let inertia_inv = if massless {
                Matrix3::identity()
            } else {
                inertia
                    .try_inverse()
                    .ok_or_else(|| err(format!("body '{}': inertia tensor is singular", b.name)))?
            };
            Ok(Body {
                name: b.name.clone(),
                mass: b.mass,
                inertia,
                inertia_inv,
                position: Vector3::from(b.position),
                orientation: matrix_to_quat(&rot),
                velocity: Vector3::from(b.velocity),
                angular_velocity: Vector3::from(b.angular_velocity),
            })
        })
        .collect::<Result<_, _>>()?;
    let body_of = |name: &str| -> Result<Option<usize>, CompileError> {
        if m.is_ground(name) {
            Ok(None)
        } else {
            m.body_index(name)
                .map(Some)
                .ok_or_else(|| err(format!("unknown body '{name}'")))
        }
    };
    let markers: Vec<Marker> = m
        .markers
        .iter()
        .map(|mk| {
            let body = body_of(&mk.body)?;
            let (position, axes) = match body {
                None => (m.marker_position_global(mk), m.marker_axes_global(mk)),
                Some(_) => (m.marker_position_body(mk), m.marker_axes_body(mk)),
            };
            Ok(Marker {
                name: mk.name.clone(),
                body,
                position: Vector3::from(position),
                axes: mat3(&axes),
            })
        })
        .collect::<Result<_, _>>()?;
    let marker_of = |name: &str| -> Result<usize, CompileError> {
        m.marker_index(name)
            .ok_or_else(|| err(format!("unknown marker '{name}'")))
    };
    let axis_laws =
        |lin: &[f64; 3], curves: &sm::AxisCurves| -> Result<[Characteristic; 3], CompileError> {
            let names = curves.as_array();
            let mut out = [Characteristic::Zero; 3];
            for a in 0..3 {
                out[a] = match names[a] {
                    Some(c) => Characteristic::Curve(curve(c)?),
                    None if lin[a] != 0.0 => Characteristic::Linear(lin[a]),
                    None => Characteristic::Zero,
                };
            }
            Ok(out)
        };
    let linear_or_curve =
        |k: Option<f64>, c: &Option<String>| -> Result<Characteristic, CompileError> {
            Ok(match (k, c) {
                (_, Some(c)) => Characteristic::Curve(curve(c)?),
                (Some(k), None) => Characteristic::Linear(k),
                (None, None) => Characteristic::Zero,
            })
        };
    let mut elements = Vec::with_capacity(m.force_elements.len());
    for fe in &m.force_elements {
        let design_length = m.design_length(fe).unwrap_or(0.0);
        let kind = match fe {
            sm::ForceElement::Bushing(b) => ElementKind::Bushing(Bushing {
                stiffness: axis_laws(&b.stiffness, &b.stiffness_curves)?,
                rot_stiffness: axis_laws(&b.rot_stiffness, &b.rot_stiffness_curves)?,
                damping: axis_laws(&b.damping, &b.damping_curves)?,
                rot_damping: axis_laws(&b.rot_damping, &b.rot_damping_curves)?,
                preload: Vector3::from(b.preload),
                rot_preload: Vector3::from(b.rot_preload),
                spin_axis: b.spin_axis.map(sm::Axis::index),
            }),
            sm::ForceElement::Spring(s) => ElementKind::P2p(P2pLaw::Spring {
                stiffness: linear_or_curve(s.stiffness, &s.curve)?,
                free_length: s.free_length.unwrap_or(design_length),
                preload: s.preload,
                damping: s.damping,
            }),
            sm::ForceElement::Damper(d) => {
                ElementKind::P2p(P2pLaw::Damper(match (&d.curve, d.damping) {
                    (Some(c), _) => DamperLaw::Characteristic(Characteristic::Curve(curve(c)?)),
                    (None, Some(c)) => DamperLaw::Characteristic(Characteristic::Linear(c)),
                    (None, None) => DamperLaw::Bilinear {
                        rebound: d.damping_rebound.unwrap_or(0.0),
                        compression: d.damping_compression.unwrap_or(0.0),
                    },
                }))
            }
            sm::ForceElement::Stop(s) => {
                let l_design = s.design_length.unwrap_or(design_length);
                let bump = s.kind == sm::StopKind::Bump;
                ElementKind::P2p(P2pLaw::Stop {
                    bump,
                    engage_length: if bump {
                        l_design - s.clearance
                    } else {
                        l_design + s.clearance
                    },
                    law: linear_or_curve(s.stiffness, &s.curve)?,
                    damping: s.damping,
                })
            }
        };
        let design_length = match fe {
            sm::ForceElement::Stop(s) => s.design_length.unwrap_or(design_length),
            _ => design_length,
        };
        elements.push(ForceElement {
            name: fe.name().to_string(),
            marker_i: marker_of(fe.marker_i())?,
            marker_j: marker_of(fe.marker_j())?,
            design_length,
            kind,
        });
    }
    let inputs = m
        .inputs
        .iter()
        .map(|u| {
            Ok(Input {
                name: u.name.clone(),
                kind: match u.kind {
                    sm::InputKind::Force => InputKind::Force,
                    sm::InputKind::Torque => InputKind::Torque,
                    sm::InputKind::Signal => InputKind::Signal,
                },
                marker: match u.kind {
                    sm::InputKind::Signal => None,
                    _ => Some(marker_of(&u.marker)?),
                },
                body_frame: u.frame == sm::InputFrame::Body,
                direction: Vector3::from(u.direction),
                signal: u.signal.clone(),
                runtime: matches!(u.signal, sm::Signal::Runtime { .. }),
            })
        })
        .collect::<Result<Vec<_>, CompileError>>()?;
    // Open elements: the law from the registry, built at the design kinematics of its markers.
    let mut open_elements = Vec::with_capacity(m.elements.len());
    let mut n_state_blocks = 0;
    let poses: Vec<(Vector3<f64>, Matrix3<f64>)> = bodies
        .iter()
        .map(|b| (b.position, crate::rotation::quat_to_matrix(&b.orientation)))
        .collect();
    let joints = crate::joints::Joints::new(m, &poses).map_err(err)?;
    // Body kinematics at the design poses and initial velocities (what the laws are built at,
    // e.g. a tire's free-rolling initial spin); a jointed body at its design pose (z = 0)
    // moving with its parent and its joint's initial rate (`joints::Joints::expand`).
    let design_kin: Vec<BodyKin> = {
        let nb = bodies.len();
        let (mut r, mut v) = (vec![0.0; 7 * nb], vec![0.0; 6 * nb]);
        for (i, b) in bodies.iter().enumerate() {
            r[7 * i..7 * i + 3].copy_from_slice(b.position.as_slice());
            r[7 * i + 3..7 * i + 7].copy_from_slice(&b.orientation);
            v[6 * i..6 * i + 3].copy_from_slice(b.velocity.as_slice());
            v[6 * i + 3..6 * i + 6].copy_from_slice(b.angular_velocity.as_slice());
        }
        let v_full = if joints.is_empty() {
            v
        } else {
            let (mut rz, mut vz) = (r.clone(), v);
            joints.initial_state(&mut rz, &mut vz);
            for d in joints.defs.iter().flatten() {
                rz[7 * d.body] = 0.0;
            }
            let (mut r_full, mut v_full) = (vec![0.0; rz.len()], vec![0.0; vz.len()]);
            joints.expand(&rz, &vz, &mut r_full, &mut v_full);
            v_full
        };
        (0..nb)
            .map(|i| BodyKin::from_state(0, &r[7 * i..7 * i + 7], &v_full[6 * i..6 * i + 6]))
            .collect()
    };
    for e in crate::element_link::evaluation_order(m).map_err(err)? {
        let idx = e
            .markers
            .iter()
            .map(|n| marker_of(n))
            .collect::<Result<Vec<_>, _>>()?;
        let design: Vec<MarkerState> = idx
            .iter()
            .map(|&k| MarkerState::of(&MarkerKin::new(&markers[k], &design_kin)))
            .collect();
        let law = registry
            .build_with_roads(&e.kind, &e.parameters, &design, &m.roads)
            .map_err(|w| err(format!("element '{}' (type \"{}\"): {w}", e.name, e.kind)))?;
        let n_blocks = law.n_states().div_ceil(6);
        // Input slots: each mapped model input by name; unknown slot names are errors.
        let slots = law.inputs();
        for slot in e.inputs.keys() {
            if !slots.iter().any(|s| s.name == slot.as_str()) {
                let known: Vec<&str> = slots.iter().map(|s| s.name).collect();
                return Err(err(format!(
                    "element '{}' (type \"{}\"): unknown input slot `{slot}`; the kind reads {}",
                    e.name,
                    e.kind,
                    if known.is_empty() {
                        "no inputs (remove `inputs`)".to_string()
                    } else {
                        format!("{} (`sprung elements`)", known.join(", "))
                    }
                )));
            }
        }
        let links =
            crate::element_link::resolve(m, e, law.as_ref(), &open_elements).map_err(err)?;
        let input_idx = slots
            .iter()
            .map(|s| match e.inputs.get(s.name) {
                None => Ok(None),
                Some(name) if m.element_output_source(name).is_some() => Ok(None),
                Some(name) => inputs
                    .iter()
                    .position(|u: &Input| u.name == *name)
                    .map(Some)
                    .ok_or_else(|| {
                        err(format!(
                            "element '{}': input slot `{}` reads '{name}', which is neither an input nor an element output (\"element.output\" of an [[elements]] entry)",
                            e.name, s.name
                        ))
                    }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        open_elements.push(OpenElement {
            name: e.name.clone(),
            markers: idx,
            inputs: input_idx,
            links,
            law,
            state_offset: 6 * n_state_blocks,
            first_block: n_state_blocks,
            n_blocks,
        });
        n_state_blocks += n_blocks;
    }
    let pattern = Arc::new(CompiledModel::coupling_pattern(
        bodies.len(),
        &markers,
        &elements,
        &open_elements,
        n_state_blocks,
    ));
    let cm = CompiledModel {
        joints,
        name: m.model.name.clone(),
        ground_name: m.ground_name().to_string(),
        bodies,
        markers,
        elements,
        open_elements,
        n_state_blocks,
        inputs,
        curves: m.curves.clone(),
        gravity: Vector3::from(m.model.gravity),
        pattern,
    };
    if !cm.joints.is_empty() {
        let (r, v) = cm.design_state();
        cm.joints.check_mass(&cm, &r, &v).map_err(err)?;
    }
    Ok(cm)
}
