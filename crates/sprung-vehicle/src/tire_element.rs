//! The tire force element: a [`crate::tire::TireModel`] on a road through the wheel–road contact,
//! as an [`sprung_mbs::element_law::ElementLaw`] on one wheel marker (issue 13).
