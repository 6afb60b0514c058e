//! Test problems: smooth problems with analytic solutions and the stiff reference problems HIRES,
//! Van der Pol (ε = 1e-6, scaled form) and ROBER with the reference values of the Test Set for
//! IVP Solvers (Mazzia & Magherini, release 2.4), as listed in `integrators.md`.
//! Public so that benchmarks (work-precision diagrams) can reuse them.

use super::OdeSystem;
use faer::MatMut;

/// A stiff reference problem: initial value, interval and reference solution at `t_end`.
#[derive(Clone, Debug)]
pub struct Reference {
    /// Problem name.
    pub name: &'static str,
    /// Start time.
    pub t0: f64,
    /// Initial state.
    pub y0: Vec<f64>,
    /// End time.
    pub t_end: f64,
    /// Reference solution at `t_end`.
    pub y_ref: Vec<f64>,
    /// Suggested absolute tolerance scale per component (relative to `rtol`), see [`Reference::atol`].
    pub atol_scale: Vec<f64>,
}

impl Reference {
    /// Absolute tolerances suited to the problem at relative tolerance `rtol`:
    /// `atol_i = rtol · atol_scale_i`.
    pub fn atol(&self, rtol: f64) -> Vec<f64> {
        self.atol_scale.iter().map(|s| s * rtol).collect()
    }
}

/// Significant correct digits `scd = -log10(max_i |y_i - y_ref_i| / |y_ref_i|)` (test-set score).
pub fn scd(y: &[f64], y_ref: &[f64]) -> f64 {
    let m = y
        .iter()
        .zip(y_ref)
        .map(|(a, b)| ((a - b) / b).abs())
        .fold(0.0f64, |acc, v| if v.is_nan() || v > acc { v } else { acc });
    -m.log10()
}

/// HIRES: 8 species of a plant's light-dependent growth process (Schäfer 1975).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hires;

impl Hires {
    /// Reference data: `t ∈ [0, 321.8122]`.
    pub fn reference() -> Reference {
        Reference {
            name: "HIRES",
            t0: 0.0,
            y0: vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057],
            t_end: 321.8122,
            y_ref: vec![
                7.371312573325668e-4,
                1.442485726316185e-4,
                5.888729740967575e-5,
                1.175651343283149e-3,
                2.386356198831331e-3,
                6.238968252742796e-3,
                2.849998395185769e-3,
                2.850001604814231e-3,
            ],
            atol_scale: vec![1e-4; 8],
        }
    }
}

impl OdeSystem for Hires {
    fn dim(&self) -> usize {
        8
    }
    fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) {
        f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
        f[1] = 1.71 * y[0] - 8.75 * y[1];
        f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
        f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
        f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
        f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
        f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
        f[7] = -f[6];
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], mut j: MatMut<'_, f64>) -> bool {
        j.fill(0.0);
        j[(0, 0)] = -1.71;
        j[(0, 1)] = 0.43;
        j[(0, 2)] = 8.32;
        j[(1, 0)] = 1.71;
        j[(1, 1)] = -8.75;
        j[(2, 2)] = -10.03;
        j[(2, 3)] = 0.43;
        j[(2, 4)] = 0.035;
        j[(3, 1)] = 8.32;
        j[(3, 2)] = 1.71;
        j[(3, 3)] = -1.12;
        j[(4, 4)] = -1.745;
        j[(4, 5)] = 0.43;
        j[(4, 6)] = 0.43;
        j[(5, 3)] = 0.69;
        j[(5, 4)] = 1.71;
        j[(5, 5)] = -0.43 - 280.0 * y[7];
        j[(5, 6)] = 0.69;
        j[(5, 7)] = -280.0 * y[5];
        j[(6, 5)] = 280.0 * y[7];
        j[(6, 6)] = -1.81;
        j[(6, 7)] = 280.0 * y[5];
        j[(7, 5)] = -280.0 * y[7];
        j[(7, 6)] = 1.81;
        j[(7, 7)] = -280.0 * y[5];
        true
    }
    fn time_derivative(&mut self, _t: f64, _y: &[f64], d: &mut [f64]) -> bool {
        d.fill(0.0);
        true
    }
}

/// Van der Pol oscillator in scaled form `y1' = y2`, `y2' = ((1 - y1²) y2 - y1)/ε`.
#[derive(Clone, Copy, Debug)]
pub struct VanDerPol {
    /// Stiffness parameter ε.
    pub eps: f64,
}

impl Default for VanDerPol {
    fn default() -> Self {
        Self { eps: 1e-6 }
    }
}

impl VanDerPol {
    /// Reference data for ε = 1e-6: `y(0) = (2, 0)`, `t ∈ [0, 2]`.
    pub fn reference() -> Reference {
        Reference {
            name: "Van der Pol (eps = 1e-6)",
            t0: 0.0,
            y0: vec![2.0, 0.0],
            t_end: 2.0,
            y_ref: vec![1.706167732170483, -0.8928097010247975],
            atol_scale: vec![1.0, 1.0],
        }
    }
}

impl OdeSystem for VanDerPol {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) {
        f[0] = y[1];
        f[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / self.eps;
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], mut j: MatMut<'_, f64>) -> bool {
        j[(0, 0)] = 0.0;
        j[(0, 1)] = 1.0;
        j[(1, 0)] = (-2.0 * y[0] * y[1] - 1.0) / self.eps;
        j[(1, 1)] = (1.0 - y[0] * y[0]) / self.eps;
        true
    }
    fn time_derivative(&mut self, _t: f64, _y: &[f64], d: &mut [f64]) -> bool {
        d.fill(0.0);
        true
    }
}

/// Robertson's chemical kinetics (ROBER), `k1 = 0.04`, `k2 = 3e7`, `k3 = 1e4`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rober;

impl Rober {
    /// Reference data: `y(0) = (1, 0, 0)`, `t ∈ [0, 1e11]`. Suggested absolute tolerances
    /// `rtol · (1e-8, 1e-12, 1e-8)`: y1 ends near 2e-8 and y2 (at most 4e-5) near 8e-14, and the
    /// test-set score is the relative error of every component.
    pub fn reference() -> Reference {
        Reference {
            name: "ROBER",
            t0: 0.0,
            y0: vec![1.0, 0.0, 0.0],
            t_end: 1e11,
            y_ref: vec![
                2.083340149701255e-8,
                8.333360770334713e-14,
                0.9999999791665050,
            ],
            atol_scale: vec![1e-8, 1e-12, 1e-8],
        }
    }
}

impl OdeSystem for Rober {
    fn dim(&self) -> usize {
        3
    }
    fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) {
        let r1 = 0.04 * y[0];
        let r2 = 3e7 * y[1] * y[1];
        let r3 = 1e4 * y[1] * y[2];
        f[0] = -r1 + r3;
        f[1] = r1 - r2 - r3;
        f[2] = r2;
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], mut j: MatMut<'_, f64>) -> bool {
        j[(0, 0)] = -0.04;
        j[(0, 1)] = 1e4 * y[2];
        j[(0, 2)] = 1e4 * y[1];
        j[(1, 0)] = 0.04;
        j[(1, 1)] = -6e7 * y[1] - 1e4 * y[2];
        j[(1, 2)] = -1e4 * y[1];
        j[(2, 0)] = 0.0;
        j[(2, 1)] = 6e7 * y[1];
        j[(2, 2)] = 0.0;
        true
    }
    fn time_derivative(&mut self, _t: f64, _y: &[f64], d: &mut [f64]) -> bool {
        d.fill(0.0);
        true
    }
}

/// Smooth non-autonomous nonlinear problem with known solution:
/// `y1' = -2 t y1²` (`y1 = 1/(1 + t²)`), `y2' = y2 cos t` (`y2 = exp(sin t)`),
/// `y(0) = (1, 1)`. No analytic Jacobian (exercises the difference Jacobian and `∂f/∂t`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Smooth;

impl Smooth {
    /// Exact solution at `t`.
    pub fn exact(t: f64) -> [f64; 2] {
        [1.0 / (1.0 + t * t), t.sin().exp()]
    }
}

impl OdeSystem for Smooth {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, t: f64, y: &[f64], f: &mut [f64]) {
        f[0] = -2.0 * t * y[0] * y[0];
        f[1] = y[1] * t.cos();
    }
}

/// Mildly stiff linear problem with known solution (Prothero–Robinson type):
/// `y' = λ (y - sin t) + cos t`, `y(0) = 0`, solution `y = sin t`; with `λ = -1e4` it is stiff
/// for explicit methods but smooth.
#[derive(Clone, Copy, Debug)]
pub struct ProtheroRobinson {
    /// Eigenvalue λ (negative).
    pub lambda: f64,
}

impl OdeSystem for ProtheroRobinson {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, t: f64, y: &[f64], f: &mut [f64]) {
        f[0] = self.lambda * (y[0] - t.sin()) + t.cos();
    }
    fn jacobian(&mut self, _t: f64, _y: &[f64], mut j: MatMut<'_, f64>) -> bool {
        j[(0, 0)] = self.lambda;
        true
    }
}
