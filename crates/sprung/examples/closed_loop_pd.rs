//! Closed loop: a PD controller written by the user holds the left wheel centre of the double
//! wishbone 10 mm above its static position by setting the vertical wheel force every step.
//!
//! The model file drives Fz_L with a constant 5000 N; here the description is changed before
//! compiling so that Fz_L is a `runtime` input (default 5000 N), which the loop sets:
//! Fz = 5000 N + K_p (z_target − z) − K_d ż, with ż differenced from the measured z.
//!
//! `cargo run --release -p sprung --example closed_loop_pd`

use sprung::{Model, Simulation};
use sprung_model::Signal;

/// Proportional gain, N/m.
pub const KP: f64 = 2.0e5;
/// Derivative gain, N s/m.
pub const KD: f64 = 2.0e3;
/// Lift of the target above the static position, m.
pub const LIFT: f64 = 0.010;

/// What the loop achieved.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Static wheel-centre height (displacement channel), m.
    pub z_static: f64,
    /// Target, m.
    pub z_target: f64,
    /// Wheel-centre height at the end, m.
    pub z_final: f64,
    /// Largest |z − z_final| over the last 0.2 s (settled?), m.
    pub late_variation: f64,
    /// Force at the end, N.
    pub force_final: f64,
}

/// Runs the loop for `t_end` seconds.
pub fn run(t_end: f64) -> Result<Outcome, Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/double_wishbone.toml"
    );
    let mut description = sprung_model::load(std::path::Path::new(path))?;
    for u in description.inputs.iter_mut().filter(|u| u.name == "Fz_L") {
        u.signal = Signal::Runtime { default: 5000.0 };
    }
    let mut sim = Simulation::new(Model::from_description(description)?)?;
    let h = sim.step_size();
    let z_static = sim.channel("wc_dz_L")?;
    let z_target = z_static + LIFT;
    let mut z_prev = z_static;
    let n = (t_end / h).round() as usize;
    let mut late: Vec<f64> = Vec::new();
    let mut force = 5000.0;
    for k in 0..n {
        let z = sim.channel("wc_dz_L")?;
        let z_dot = (z - z_prev) / h;
        z_prev = z;
        force = 5000.0 + KP * (z_target - z) - KD * z_dot;
        sim.set_input("Fz_L", force)?;
        sim.step()?;
        if (k as f64) * h > t_end - 0.2 {
            late.push(z);
        }
    }
    let z_final = sim.channel("wc_dz_L")?;
    let late_variation = late.iter().map(|z| (z - z_final).abs()).fold(0.0, f64::max);
    Ok(Outcome {
        z_static,
        z_target,
        z_final,
        late_variation,
        force_final: force,
    })
}

#[allow(dead_code)] // run by the test suite through `run`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = run(2.0)?;
    println!(
        "target {:.4} m, reached {:.4} m (error {:.2} mm), wheel force {:.0} N",
        o.z_target,
        o.z_final,
        1e3 * (o.z_target - o.z_final),
        o.force_final
    );
    Ok(())
}
