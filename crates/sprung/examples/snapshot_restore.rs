//! Snapshot and restore: run the double wishbone to 4.9 s, take a snapshot (serialised to JSON
//! as a file or a network message would carry it), run on through the Fx step at 5 s, restore
//! the snapshot and run the same stretch again: both runs agree bit for bit.
//!
//! `cargo run --release -p sprung --example snapshot_restore`

use sprung::{Simulation, Snapshot};

/// The wheel-centre x displacement at 6 s on the first and the repeated run, and the JSON size.
pub fn run(relinearise_every: u64) -> Result<(f64, f64, usize), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/double_wishbone.toml"
    );
    let model = sprung::Model::from_file(path)?;
    let mut settings = model.default_settings();
    settings.relinearise_every = relinearise_every;
    let mut sim = Simulation::with_settings(model, settings)?;
    sim.equilibrium()?;
    sim.advance_to(4.9)?;
    let json = serde_json::to_string(&sim.state())?;
    sim.advance_to(6.0)?;
    let first = sim.channel("wc_dx_L")?;
    let snapshot: Snapshot = serde_json::from_str(&json)?;
    sim.set_state(&snapshot)?;
    sim.advance_to(6.0)?;
    let again = sim.channel("wc_dx_L")?;
    Ok((first, again, json.len()))
}

#[allow(dead_code)] // run by the test suite through `run`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (a, b, bytes) = run(5)?;
    println!(
        "wc_dx_L(6 s): {a:e} m, after restore {b:e} m (identical: {}); snapshot {bytes} bytes",
        a == b
    );
    Ok(())
}
