//! `tree{t}_kinematics`: PLACEHOLDER on the accel branch (the helper writes it).

use sprung_mbs::CompiledModel;

use crate::AccelError;

/// Writes `tree{t}_kinematics` of `model`'s tree `t` into `out`.
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let _ = (t, out);
    Err(AccelError::Unsupported {
        model: model.name.clone(),
        what: "the kinematics (not written yet)".into(),
    })
}
