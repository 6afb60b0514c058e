//! Helpers shared by the facade's integration tests (`mod common;` in a test file).

use sprung::{Control, RunSettings, Simulation, StopReason};

/// Channel name -> samples of a run from the current state to `t_end` with `settings`; the run
/// must complete.
pub fn run(sim: &mut Simulation, settings: &RunSettings, t_end: f64) -> Vec<(String, Vec<f64>)> {
    let names: Vec<String> = sim
        .model()
        .channel_names()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut cols = vec![Vec::new(); names.len()];
    let report = sim.run_with(settings, t_end, &mut |_, row| {
        for (c, v) in cols.iter_mut().zip(row) {
            c.push(*v);
        }
        Control::Continue
    });
    assert_eq!(report.stop, StopReason::Completed, "{report:?}");
    names.into_iter().zip(cols).collect()
}

/// The samples of channel `name` in a [`run`]'s result.
pub fn col<'a>(r: &'a [(String, Vec<f64>)], name: &str) -> &'a [f64] {
    &r.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no channel {name}"))
        .1
}
