//! Vehicle subsystems built on the open force-element interface of `sprung-mbs`
//! ([`sprung_mbs::element_law`]): tires on roads first (issue 13; source document 002 and
//! `../shared/data/vehicle-reference.md`), later steering systems and leaf springs (issue 14).
//!
//! Layering (see `ARCHITECTURE.md`):
//! * [`tire`] — the tire *force laws* (TMeasy, Pacejka 2002) behind one [`tire::TireModel`]
//!   trait: contact-frame kinematics in, contact-frame forces, state rates and their analytic
//!   partials out. They know nothing about bodies or roads, so the tire test rig and the unit
//!   tests drive them directly.
//! * the wheel–road contact and the roads turn a wheel marker into those kinematics and the
//!   forces back into a wrench on the wheel body; the tire *element* is the generic
//!   [`sprung_mbs::element_law::ElementLaw`] that joins them.

pub mod accelerometer;
pub mod contact;
pub mod dual;
pub mod leaf_spring;
pub mod rack_pinion;
pub mod rig;
pub mod road;
pub mod speed_controller;
pub mod steering;
pub mod tire;
pub mod tire_element;

use sprung_mbs::elements::ElementRegistry;

/// Registers every tire kind of this crate on `reg` (`tire_linear`, `tmeasy`, `pac2002`, each a
/// [`tire_element::TireElement`] on a road), the dual-axle steering ([`steering`]), the
/// rack-and-pinion steering ([`rack_pinion`]), the accelerometer ([`accelerometer`]) and the
/// speed controller ([`speed_controller`]); the facade's `sprung::element_registry()` is the
/// built-in kinds plus these.
pub fn register_all(reg: &mut ElementRegistry) {
    for kind in rig::TIRE_KINDS {
        (kind.register)(reg);
    }
    reg.register(speed_controller::INFO, speed_controller::build);
    steering::register(reg);
    rack_pinion::register(reg);
    accelerometer::register(reg);
}

/// The built-in element kinds of `sprung-mbs` plus the vehicle kinds of [`register_all`].
pub fn registry() -> ElementRegistry {
    let mut reg = ElementRegistry::builtin();
    register_all(&mut reg);
    reg
}
