//! The full model with stiffened corner bushings, shared by the kinematic-table and the
//! kinematic-car K&C tests (`#[path = "common/stiffen.rs"] mod stiffen;`): the limit in which a
//! full corner tends to its ideal-joint (kinematic) table.

/// The full model with the translational stiffness (and its curves) of every bushing with an
/// end on one of `bodies` multiplied by `f`, the rotational stiffness unchanged: the ratio of
/// rotational to translational stiffness × 1/f, the loads' deflections × 1/f.
pub fn stiffen_translational(
    m: &sprung_model::Model,
    bodies: &[String],
    f: f64,
) -> sprung_model::Model {
    let mut d = m.clone();
    let body_of = |k: &str| m.marker(k).map(|k| k.body.clone()).unwrap_or_default();
    let mut curves = Vec::new();
    for e in d.force_elements.iter_mut() {
        if let sprung_model::ForceElement::Bushing(b) = e
            && (bodies.contains(&body_of(&b.marker_i)) || bodies.contains(&body_of(&b.marker_j)))
        {
            b.stiffness.iter_mut().for_each(|k| *k *= f);
            curves.extend(
                b.stiffness_curves
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(str::to_string),
            );
        }
    }
    for c in d.curves.iter_mut().filter(|c| curves.contains(&c.name)) {
        c.y.iter_mut().for_each(|y| *y *= f);
    }
    d
}
