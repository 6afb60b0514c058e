//! M_b J_b, M_z and its Cholesky factor: PLACEHOLDER on the accel branch (a helper writes it).

use sprung_mbs::CompiledModel;

use crate::AccelError;

/// Writes the statements (inside `tree{t}_kinematics`, after every J_b row it reads is in the
/// flat buffer `s`) that form M_b J_b (`s[mj..]`) and M_z's Cholesky factor (`s[chol..]`) of
/// `model`'s tree `t`, and `return Err(k)` at a non-positive pivot k.
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let _ = (t, out);
    Err(AccelError::Unsupported {
        model: model.name.clone(),
        what: "the mass matrix (not written yet)".into(),
    })
}
