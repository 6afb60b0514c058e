//! `sprung run --inputs FILE.csv`: the model's `runtime` inputs fed from a table.
//!
//! The file has a header with a time column `t` (s) and one column per input, named like the
//! input: a runtime input, or an input driven by a time signal, which the table then replaces
//! (`sprung::Model::with_runtime_inputs`); columns may come in any order, runtime inputs without
//! a column keep their default. Values
//! are held from a row's time until the next row's (zero-order hold — what a controller or a
//! test-rig log delivers), so each row time starts a segment of the run: the integrator restarts
//! there (a fixed-step method re-linearises, an adaptive one stops exactly at the switch), and
//! row times must lie on the output grid so that no output row straddles a switch.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sprung::{Control, Model, RunReport, RunSettings, Simulation, StopReason};

/// A loaded input table.
#[derive(Debug, Clone)]
pub struct InputTable {
    file: PathBuf,
    /// Row times, s (strictly increasing).
    times: Vec<f64>,
    /// Per column: the input index and the values per row.
    columns: Vec<(usize, Vec<f64>)>,
}

impl InputTable {
    /// The input names of the table's header (all columns after `t`); errors as in
    /// [`InputTable::load`].
    pub fn column_names(file: &Path) -> anyhow::Result<Vec<String>> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading the input table {}", file.display()))?;
        let header = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        Ok(header
            .split(',')
            .map(str::trim)
            .skip(1)
            .map(str::to_string)
            .collect())
    }

    /// Reads and checks `file` against the model's runtime inputs.
    pub fn load(file: &Path, model: &Model) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading the input table {}", file.display()))?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            bail!(
                "{}: the input table is empty; expected a header `t,<input>,...`",
                file.display()
            );
        };
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        if names.first() != Some(&"t") {
            bail!(
                "{}:1: the first column must be the time `t` (s), found '{}'",
                file.display(),
                names.first().unwrap_or(&"")
            );
        }
        let cm = model.compiled();
        let runtime: Vec<&str> = cm
            .inputs
            .iter()
            .filter(|u| u.runtime)
            .map(|u| u.name.as_str())
            .collect();
        let mut columns = Vec::new();
        for name in &names[1..] {
            let Some(k) = cm.input_index(name) else {
                bail!(
                    "{}:1: column '{name}' names no input of the model; its runtime inputs are: {}",
                    file.display(),
                    runtime.join(", ")
                );
            };
            if !cm.inputs[k].runtime {
                bail!(
                    "{}:1: input '{name}' is driven by a time signal in the model; declare it signal = {{ type = \"runtime\" }} to feed it from a table",
                    file.display()
                );
            }
            columns.push((k, Vec::new()));
        }
        let mut times = Vec::new();
        for (i, line) in lines {
            let line_no = i + 1;
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if cells.len() != names.len() {
                bail!(
                    "{}:{line_no}: {} values, the header has {} columns",
                    file.display(),
                    cells.len(),
                    names.len()
                );
            }
            let num = |c: &str, col: &str| -> anyhow::Result<f64> {
                let x: f64 = c.parse().map_err(|_| {
                    anyhow::anyhow!(
                        "{}:{line_no}: column '{col}': '{c}' is not a number",
                        file.display()
                    )
                })?;
                if !x.is_finite() {
                    bail!(
                        "{}:{line_no}: column '{col}': {x} is not finite",
                        file.display()
                    );
                }
                Ok(x)
            };
            let t = num(cells[0], "t")?;
            if let Some(&last) = times.last()
                && t <= last
            {
                bail!(
                    "{}:{line_no}: time {t} s does not increase (previous row: {last} s)",
                    file.display()
                );
            }
            times.push(t);
            for (j, (_, vals)) in columns.iter_mut().enumerate() {
                vals.push(num(cells[j + 1], names[j + 1])?);
            }
        }
        if times.is_empty() {
            bail!(
                "{}: the input table has a header but no rows",
                file.display()
            );
        }
        Ok(Self {
            file: file.to_path_buf(),
            times,
            columns,
        })
    }

    /// Runs `sim` to `t_end` segment by segment (module docs), `observer` seeing every output
    /// row once.
    pub fn run(
        &self,
        sim: &mut Simulation,
        settings: &RunSettings,
        t_end: f64,
        observer: &mut dyn FnMut(f64, &[f64]) -> Control,
    ) -> anyhow::Result<RunReport> {
        let dt = settings.output_interval;
        for &t in &self.times {
            let n = (t - settings.t0) / dt;
            if t > settings.t0 && t < t_end && (n - n.round()).abs() > 1e-9 * n.abs().max(1.0) {
                bail!(
                    "{}: row time {t} s is not on the output grid of {dt} s; use a multiple of the output interval (nearest: {} s or {} s)",
                    self.file.display(),
                    settings.t0 + n.floor() * dt,
                    settings.t0 + n.ceil() * dt
                );
            }
        }
        let mut report: Option<RunReport> = None;
        let mut t = sim.time();
        let mut first_segment = true;
        while t < t_end {
            // The row in force at t: the last one with time ≤ t (before the first row, the first).
            let row = self
                .times
                .iter()
                .rposition(|&x| x <= t + 1e-12)
                .unwrap_or(0);
            for (k, vals) in &self.columns {
                sim.set_input(*k, vals[row])?;
            }
            let seg_end = self
                .times
                .iter()
                .copied()
                .find(|&x| x > t + 1e-12)
                .map_or(t_end, |x| x.min(t_end));
            let seg_start = t;
            let skip_first = !first_segment;
            let r = sim.run_with(settings, seg_end, &mut |tt, y| {
                if skip_first && tt == seg_start {
                    return Control::Continue;
                }
                observer(tt, y)
            });
            first_segment = false;
            let done = r.stop != StopReason::Completed;
            t = r.summary.t_reached;
            report = Some(match report {
                None => r,
                Some(mut acc) => {
                    let s = &mut acc.summary;
                    s.t_reached = r.summary.t_reached;
                    s.compute_time += r.summary.compute_time;
                    s.worst_step_time = s.worst_step_time.max(r.summary.worst_step_time);
                    s.step_times.extend_from_slice(&r.summary.step_times);
                    s.stopped_by_observer |= r.summary.stopped_by_observer;
                    s.stats += r.summary.stats;
                    acc.stop = r.stop;
                    acc
                }
            });
            if done {
                break;
            }
        }
        report.context("the run covers no time (t_end not after the start)")
    }
}
