//! Open loop: the double-wishbone load case of document 000 (static equilibrium under Fz = 5000 N,
//! then the Fx step at 5 s) run through the facade, its output channels written to a CSV file.
//!
//! `cargo run --release -p sprung --example open_loop_csv -- out/open_loop.csv`

use std::io::Write;
use std::path::Path;

use sprung::{Control, Simulation, StopReason};

/// Runs to `t_end` and writes `out`; returns the number of rows written.
pub fn run(out: &Path, t_end: f64) -> Result<usize, Box<dyn std::error::Error>> {
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/double_wishbone.toml"
    );
    let mut sim = Simulation::from_file(model)?; // starts in static equilibrium, LSRT2 at 1 ms
    let names: Vec<String> = sim
        .model()
        .channel_names()
        .iter()
        .map(|(n, u)| format!("{n} [{u}]"))
        .collect();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    writeln!(file, "time [s],{}", names.join(","))?;
    let mut rows = 0;
    let mut io_error = None;
    let report = sim.run(t_end, &mut |t, channels| {
        let line: Vec<String> = channels.iter().map(|x| x.to_string()).collect();
        match writeln!(file, "{t},{}", line.join(",")) {
            Ok(()) => {
                rows += 1;
                Control::Continue
            }
            Err(e) => {
                io_error = Some(e);
                Control::Stop
            }
        }
    });
    if let Some(e) = io_error {
        return Err(e.into());
    }
    if let StopReason::Failed(why) = report.stop {
        return Err(why.into());
    }
    file.flush()?;
    Ok(rows)
}

#[allow(dead_code)] // run by the test suite through `run`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "open_loop.csv".into());
    let rows = run(Path::new(&out), 8.0)?;
    println!("{rows} rows written to {out}");
    Ok(())
}
