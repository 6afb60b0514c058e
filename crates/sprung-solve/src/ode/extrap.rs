//! ode14x (placeholder during development).
use super::OdeError;
use super::core::Ctx;
use super::onestep::{Attempt, OneStep};
pub(crate) struct Ode14x;
impl Ode14x {
    pub fn new(_n: usize, _a: usize, _b: usize) -> Result<Self, OdeError> {
        Ok(Ode14x)
    }
}
impl OneStep for Ode14x {
    fn order(&self) -> usize {
        4
    }
    fn error_order(&self) -> Option<usize> {
        None
    }
    fn name(&self) -> &'static str {
        "ode14x"
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
