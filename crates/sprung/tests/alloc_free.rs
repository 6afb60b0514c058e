//! The facade's stepping loop does not allocate: `set_input`, `step` and `channel_values` on
//! the double wishbone (runtime wheel force) and on the Maxwell model (an element state), after a
//! warm-up, counted by a thread-local counting allocator; with LSRT2 and with the partly
//! implicit Euler (`pie`).

use sprung::{Model, Simulation};
use sprung_test_support::{CountingAllocator, allocations};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn count(file: &str, method: &str, runtime: Option<&str>, every: u64) -> u64 {
    let path = format!("{}/../../models/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut d = sprung_model::load(std::path::Path::new(&path)).unwrap();
    if let Some(name) = runtime {
        for u in d.inputs.iter_mut().filter(|u| u.name == name) {
            u.signal = sprung_model::Signal::Runtime { default: 5000.0 };
        }
    }
    let model = Model::from_description(d).unwrap();
    let mut s = model.default_settings();
    s.relinearise_every = every;
    s.method = method.into();
    let mut sim = Simulation::with_settings(model, s).unwrap();
    let run = |sim: &mut Simulation, n: usize| {
        for k in 0..n {
            if let Some(name) = runtime {
                sim.set_input(name, 5000.0 + (k % 7) as f64).unwrap();
            }
            sim.step().unwrap();
            std::hint::black_box(sim.channel_values());
        }
    };
    run(&mut sim, 20);
    let before = allocations();
    run(&mut sim, 500);
    allocations() - before
}

#[test]
fn facade_steps_do_not_allocate() {
    for method in ["lsrt2", "pie"] {
        for every in [1, 5] {
            assert_eq!(
                count("double_wishbone.toml", method, Some("Fz_L"), every),
                0
            );
            assert_eq!(count("maxwell_solid.toml", method, None, every), 0);
            // Tires on roads: the quarter car crosses its cleat within the counted steps.
            assert_eq!(count("quarter_car.toml", method, None, every), 0);
            assert_eq!(count("wheel_on_road.toml", method, None, every), 0);
            // The steering element: a Newton solve in every evaluation and in the partials.
            assert_eq!(count("steering_dual_axle.toml", method, None, every), 0);
        }
    }
}
