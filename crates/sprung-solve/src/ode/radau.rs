//! Radau IIA (placeholder during development).
use super::OdeError;
use super::core::Ctx;
use super::onestep::{Attempt, OneStep};
pub(crate) struct Radau5;
impl Radau5 {
    pub fn new(_n: usize) -> Self {
        Radau5
    }
}
impl OneStep for Radau5 {
    fn order(&self) -> usize {
        5
    }
    fn error_order(&self) -> Option<usize> {
        Some(3)
    }
    fn name(&self) -> &'static str {
        "radau5"
    }
    fn attempt(
        &mut self,
        _c: &mut Ctx,
        _t: f64,
        _h: f64,
        _y0: &[f64],
        _f0: &[f64],
        _y1: &mut [f64],
        _f1: &mut [f64],
        _a: bool,
    ) -> Result<Attempt, OdeError> {
        Err(OdeError::InvalidInput("not yet".into()))
    }
}
