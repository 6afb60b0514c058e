//! `sprung modes MODEL`: modal analysis at static equilibrium.

use std::path::Path;

/// Runs the command.
pub fn run(_path: &Path, _count: usize) -> anyhow::Result<()> {
    anyhow::bail!("modal analysis is being added (sprung_mbs::modes)")
}
