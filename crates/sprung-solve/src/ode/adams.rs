//! ode113 (placeholder during development).
use super::OdeError;
use super::core::{Ctx, Recorder, Setup};
pub(crate) fn run(
    _c: &mut Ctx,
    _s: &Setup,
    _r: &mut Recorder,
    _t0: f64,
    _y: &mut [f64],
) -> Result<f64, OdeError> {
    Err(OdeError::InvalidInput("not yet".into()))
}
