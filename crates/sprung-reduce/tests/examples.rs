//! The examples of `examples/` run in the test suite.

#[allow(dead_code)]
#[path = "../examples/step_cost.rs"]
mod step_cost;

#[test]
fn step_cost_example_steps_full_and_reduced() {
    for which in ["full", "reduced", "stiffened"] {
        let (done, wall) = step_cost::run(which, 20, "double_wishbone.toml", "lsrt2");
        assert_eq!(done, 20, "{which}");
        assert!(wall > 0.0);
    }
}
