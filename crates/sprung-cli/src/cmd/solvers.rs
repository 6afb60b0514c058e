//! `sprung solvers`: list the solvers.

/// Runs the command.
pub fn run() -> anyhow::Result<()> {
    println!("Solvers for mechanical models (sprung run MODEL --solver NAME):");
    for (name, what) in sprung_mbs::simulate::METHODS {
        println!("  {name:<8} {what}");
    }
    Ok(())
}
