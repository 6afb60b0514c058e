//! `sprung elements`: the element kinds of `[[elements]]` with their markers, parameters,
//! states and outputs (docs/elements.md explains the interface).

/// Runs the command.
pub fn run() -> anyhow::Result<()> {
    print!("{}", sprung::element_registry().describe());
    Ok(())
}
