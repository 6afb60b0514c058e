//! Stepping the reduced double wishbone (8 macro joints) allocates nothing after a warm-up:
//! the macro joint's Newton, velocity map and IFT partials work in a per-thread workspace sized
//! on first use. Counted by the thread-local counting allocator, LSRT2 at 1 ms.

use sprung::{Model, Simulation};
use sprung_reduce::{ReduceOptions, reduce};
use sprung_test_support::{CountingAllocator, allocations};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn reduced_axle_steps_do_not_allocate() {
    let full =
        sprung_model::load(&sprung_test_support::model_path("double_wishbone.toml")).unwrap();
    let red = reduce(&full, &ReduceOptions::default()).unwrap();
    let mut sim = Simulation::new(Model::from_description(red.model).unwrap()).unwrap();
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let before = allocations();
    for _ in 0..200 {
        sim.step().unwrap();
        std::hint::black_box(sim.channel_values());
    }
    assert_eq!(allocations() - before, 0);
}
