//! The model accelerator from the library (docs/accelerate.md): run the tabulated-joint example
//! with the generic code and with Rust generated and compiled for it (`Simulation::accelerate`,
//! which builds the plugin with the toolchain's rustc or finds it in the cache), and compare the
//! two runs — the same numbers to round-off, less work per step.
//!
//! `cargo run --release -p sprung --example accelerate [CACHE_DIR]`

use sprung::{AccelOptions, Model, Simulation};

/// The largest difference of the two runs' channels over `t_end` s (round-off), the
/// accelerated run's plugin and whether it was compiled now.
pub fn run(
    t_end: f64,
    cache_dir: Option<std::path::PathBuf>,
) -> Result<(f64, sprung::AcceleratorBuild), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/joint_tabulated.toml"
    );
    let model = Model::from_file(path)?;
    let mut generic = Simulation::new(model.clone())?;
    let mut fast = Simulation::new(model)?;
    let built = fast.accelerate(&AccelOptions {
        cache_dir,
        ..AccelOptions::default()
    })?;
    let mut largest = 0.0f64;
    let mut t = 0.0;
    while t < t_end {
        t += 0.01;
        generic.advance_to(t)?;
        fast.advance_to(t)?;
        for (a, b) in generic
            .channel_values()
            .to_vec()
            .iter()
            .zip(fast.channel_values())
        {
            largest = largest.max((a - b).abs());
        }
    }
    Ok((largest, built))
}

#[allow(dead_code)] // the tests call `run`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cache = std::env::args().nth(1).map(std::path::PathBuf::from);
    let (largest, built) = run(2.0, cache)?;
    println!(
        "plugin {} ({}); largest difference of the accelerated run's channels: {largest:e}",
        built.library.display(),
        if built.compiled {
            "compiled now"
        } else {
            "from the cache"
        }
    );
    Ok(())
}
