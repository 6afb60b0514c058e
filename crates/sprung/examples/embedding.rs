//! The embedding example of the README (kept identical to it by `tests/readme_example.rs`): a PD
//! controller on the wheel force of the double wishbone (its time signal replaced by a runtime
//! input), a snapshot and the linear model. Run from the repository root:
//! `cargo run --release -p sprung --example embedding`.

use sprung::{Model, Simulation};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = Model::from_file("models/double_wishbone.toml")?.with_runtime_inputs(&["Fz_L"])?;
    let mut sim = Simulation::new(model.into())?; // static equilibrium, LSRT2 at 1 ms
    let target = sim.channel("wc_dz_L")? + 0.010; // lift the wheel centre by 10 mm
    let mut z_prev = target - 0.010;
    for _ in 0..2000 {
        let z = sim.channel("wc_dz_L")?; // PD controller on the vertical wheel force
        let force = 5000.0 + 2e5 * (target - z) - 2e3 * (z - z_prev) / sim.step_size();
        sim.set_input("Fz_L", force)?;
        z_prev = z;
        sim.step()?;
    }
    let (snapshot, lin) = (sim.state(), sim.linearise()?); // serde snapshot; A, B, C, D
    let bytes = serde_json::to_vec(&snapshot)?.len();
    println!(
        "t = {} s, {} states, snapshot {bytes} B",
        sim.time(),
        lin.a.nrows()
    );
    Ok(())
}
