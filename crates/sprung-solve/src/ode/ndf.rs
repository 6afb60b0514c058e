//! ode15s (placeholder during development).
use super::OdeError;
use super::core::{Ctx, Recorder, Setup};
pub(crate) fn run(
    _c: &mut Ctx,
    _s: &Setup,
    _r: &mut Recorder,
    _t0: f64,
    _y: &mut [f64],
    _k: usize,
    _b: bool,
) -> Result<f64, OdeError> {
    Err(OdeError::InvalidInput("not yet".into()))
}
