//! TR-BDF2 (placeholder during development).
use super::OdeError;
use super::core::Ctx;
use super::onestep::{Attempt, OneStep};
pub(crate) struct TrBdf2;
impl TrBdf2 {
    pub fn new(_n: usize) -> Self {
        TrBdf2
    }
}
pub(crate) struct Trap;
impl Trap {
    pub fn new(_n: usize) -> Self {
        Trap
    }
}
impl OneStep for TrBdf2 {
    fn order(&self) -> usize {
        2
    }
    fn error_order(&self) -> Option<usize> {
        Some(2)
    }
    fn name(&self) -> &'static str {
        "ode23tb"
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
impl OneStep for Trap {
    fn order(&self) -> usize {
        2
    }
    fn error_order(&self) -> Option<usize> {
        Some(2)
    }
    fn name(&self) -> &'static str {
        "ode23t"
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
