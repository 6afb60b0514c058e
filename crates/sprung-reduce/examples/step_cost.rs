//! Cost of one LSRT2 step (1 ms) of the double-wishbone axle, full or reduced (macro joints):
//! static equilibrium, then `steps` steps of the response to the load case's Fx step
//! (-2500 N per wheel at t = 0). Wall time
//! per step is printed; for load-independent numbers run it under callgrind twice (0 and N
//! steps) and divide the difference of the instruction counts by N (docs/macro-joint.md):
//!
//! ```sh
//! cargo run --release -p sprung-reduce --example step_cost -- reduced 2000
//! valgrind --tool=callgrind target/release/examples/step_cost reduced 200
//! ```
//!
//! Arguments: `full|reduced|stiffened` (default `reduced`), steps (default 2000), model file
//! under `models/` (default `double_wishbone.toml`), method (default `lsrt2`; `ode1` = explicit
//! Euler).

use std::time::Instant;

use sprung::{Model, RunSettings, Simulation};
use sprung_reduce::{ReduceOptions, Variant, reduce};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("reduced", |s| s.as_str());
    let steps: usize = args.get(2).map_or(2000, |s| s.parse().expect("steps"));
    let file = args.get(3).map_or("double_wishbone.toml", |s| s.as_str());
    let method = args.get(4).map_or("lsrt2", |s| s.as_str());
    let (completed, seconds) = run(which, steps, file, method);
    println!(
        "{which} {file} {method}: {completed} of {steps} steps, {:.2} us per step, real-time factor {:.4}",
        seconds / completed.max(1) as f64 * 1e6,
        seconds / (completed.max(1) as f64 * 1e-3)
    );
}

/// Runs `steps` steps of 1 ms of `file` (`full`, `reduced` or `stiffened`) with `method` from
/// the static equilibrium; returns the steps completed (fewer if the run diverged) and the wall
/// time, s.
pub fn run(which: &str, steps: usize, file: &str, method: &str) -> (usize, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(file);
    let full = sprung_model::load(&path).expect("model loads");
    let model = match which {
        "full" => full,
        "reduced" => {
            reduce(&full, &ReduceOptions::default())
                .expect("reduces")
                .model
        }
        "stiffened" => {
            let opts = ReduceOptions {
                variant: Variant::Stiffened,
                ..ReduceOptions::default()
            };
            reduce(&full, &opts).expect("reduces").model
        }
        other => panic!("unknown variant '{other}' (full, reduced, stiffened)"),
    };
    // The load case's Fx step (-2500 N per wheel, document 000) is applied at t = 0, right
    // after the static equilibrium, so that the measured steps move (the step response).
    let model = Model::from_description(model)
        .expect("compiles")
        .with_runtime_inputs(&["Fx_L", "Fx_R"])
        .expect("the model has the inputs Fx_L and Fx_R");
    let settings = RunSettings {
        method: method.into(),
        step: 1e-3,
        ..model.default_settings()
    };
    let mut sim =
        Simulation::with_settings(std::sync::Arc::new(model), settings.clone()).expect("sim");
    // Valgrind 3.19 does not decode every AVX2 instruction: SPRUNG_PORTABLE=1 selects the
    // portable copies of the pipeline (docs/performance.md).
    sim.force_portable(std::env::var_os("SPRUNG_PORTABLE").is_some());
    sim.equilibrium().expect("static equilibrium");
    for name in ["Fx_L", "Fx_R"] {
        sim.set_input(name, -2500.0).expect("input");
    }
    let t0 = Instant::now();
    if method == "ode1" {
        let report = sim.run_with(&settings, steps as f64 * 1e-3, &mut |_, _| {
            sprung::Control::Continue
        });
        println!("explicit Euler: {:?}", report.stop);
    } else {
        for _ in 0..steps {
            sim.step().expect("step");
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let st = sim.stats();
    println!(
        "{which}: {} steps, {} linearisations, {} q evaluations, {} breakpoint steps, {} error splits",
        st.steps, st.linearisations, st.q_evals, st.breakpoint_steps, st.error_splits
    );
    ((sim.time() / 1e-3).round() as usize, wall)
}
