//! The embedding example of the README (kept identical to it by `tests/readme_example.rs`): a PD
//! controller on a runtime wheel force, a snapshot and the linear model. Run from the repository
//! root: `cargo run --release -p sprung --example embedding`.

use sprung::{Model, Simulation};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut d = sprung_model::load("models/double_wishbone.toml".as_ref())?;
    d.inputs
        .iter_mut()
        .filter(|u| u.name == "Fz_L")
        .for_each(|u| u.signal = sprung_model::Signal::Runtime { default: 5000.0 });
    let mut sim = Simulation::new(Model::from_description(d)?)?; // static equilibrium, LSRT2 1 ms
    let target = sim.channel("wc_dz_L")? + 0.010; // 10 mm above the static position
    let mut z_prev = target - 0.010;
    for _ in 0..2000 {
        let z = sim.channel("wc_dz_L")?;
        let force = 5000.0 + 2e5 * (target - z) - 2e3 * (z - z_prev) / sim.step_size();
        z_prev = z;
        sim.set_input("Fz_L", force)?; // PD controller
        sim.step()?;
    }
    let snapshot = sim.state(); // serde: JSON, bincode, ...
    let lin = sim.linearise()?; // A, B, C, D (also sparse)
    println!(
        "t = {} s, {} states, snapshot of {} bytes",
        sim.time(),
        lin.a.nrows(),
        serde_json::to_string(&snapshot)?.len()
    );
    Ok(())
}
