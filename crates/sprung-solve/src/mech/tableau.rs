//! Rosenbrock tableaus in the classical form used by document 000, eqs. 6-9: stage arguments
//! r̃ = r + h Σ α_ij Δr_j, coupling γ_ij, weights b_i and optional embedded weights b̂_i.
//!
//! The coefficients themselves live once, in [`crate::ode::tableau`] (transformed form, with
//! order-condition tests); this module converts them to the flat classical layout the mechanical
//! stage loop needs (Γ = (diag(1/γ) − C)⁻¹, α = a Γ, b = m Γ; `integrators.md`).

use crate::ode::tableau as ode_tab;

/// A Rosenbrock method with a single diagonal γ in classical form.
#[derive(Debug, Clone)]
pub struct Tableau {
    /// Method name (lower case, as on the command line).
    pub name: &'static str,
    /// Classical order p.
    pub order: u32,
    /// Number of stages s.
    pub stages: usize,
    /// Diagonal γ (γ_ii, equal for all stages).
    pub gamma: f64,
    /// α_ij (j < i), row-major s × s.
    pub alpha: Vec<f64>,
    /// γ_ij (j < i), row-major s × s (diagonal not stored here).
    pub gamma_ij: Vec<f64>,
    /// Weights b_i.
    pub b: Vec<f64>,
    /// Embedded weights b̂_i of the error estimate, if the method has one.
    pub b_hat: Option<Vec<f64>>,
    /// c_i = Σ_j α_ij.
    pub c: Vec<f64>,
    /// γ_i = γ + Σ_j γ_ij (coefficient of the explicit time derivative).
    pub gamma_sum: Vec<f64>,
}

/// Names of the Rosenbrock methods available on mechanical systems.
pub const NAMES: &[&str] = &[
    "lsrt2", "lie", "ros2", "ros3p", "ros34pw2", "rodas3", "rodas4", "rodas5p",
];

impl Tableau {
    /// Classical form of a tableau of the ODE suite.
    pub fn from_ode(name: &'static str, t: &ode_tab::RosenbrockTableau) -> Self {
        let cl = t.to_classical();
        let s = cl.b.len();
        let mut alpha = vec![0.0; s * s];
        let mut gamma_ij = vec![0.0; s * s];
        for i in 0..s {
            for j in 0..i {
                alpha[i * s + j] = cl.alpha[i][j];
                gamma_ij[i * s + j] = cl.gam[i][j];
            }
        }
        let gamma = cl.gam[0][0];
        let c = (0..s)
            .map(|i| (0..i).map(|j| alpha[i * s + j]).sum())
            .collect();
        let gamma_sum = (0..s).map(|i| cl.gam[i][..=i].iter().sum()).collect();
        Self {
            name,
            order: t.order as u32,
            stages: s,
            gamma,
            alpha,
            gamma_ij,
            b: cl.b,
            b_hat: cl.bhat,
            c,
            gamma_sum,
        }
    }

    /// LSRT2 (Bursi et al. 2008; document 000, Table 1): order 2, L-stable, W-method.
    pub fn lsrt2() -> Self {
        Self::from_ode("lsrt2", &ode_tab::lsrt2())
    }

    /// Linear-implicit Euler: one stage, γ = 1, order 1.
    pub fn linear_implicit_euler() -> Self {
        Self::from_ode("lie", &ode_tab::lin_impl_euler())
    }

    /// RODAS4 (Hairer & Wanner), order 4(3), stiffly accurate.
    pub fn rodas4() -> Self {
        Self::from_ode("rodas4", &ode_tab::rodas4())
    }

    /// Looks a method up by name (see [`NAMES`]).
    pub fn by_name(name: &str) -> Option<Self> {
        let (n, t) = match name {
            "lsrt2" => ("lsrt2", ode_tab::lsrt2()),
            "lie" | "linear_implicit_euler" => ("lie", ode_tab::lin_impl_euler()),
            "ros2" => ("ros2", ode_tab::ros2()),
            "ros3p" => ("ros3p", ode_tab::ros3p()),
            "ros34pw2" => ("ros34pw2", ode_tab::ros34pw2()),
            "rodas3" => ("rodas3", ode_tab::rodas3()),
            "rodas4" => ("rodas4", ode_tab::rodas4()),
            "rodas5p" => ("rodas5p", ode_tab::rodas5p()),
            _ => return None,
        };
        Some(Self::from_ode(n, &t))
    }

    /// Stability function R(z) = 1 + z bᵀ (I − z B)⁻¹ 𝟙 with B = α + Γ (for tests).
    pub fn stability(&self, z: f64) -> f64 {
        let s = self.stages;
        let mut x = vec![0.0; s];
        for i in 0..s {
            let acc: f64 = 1.0
                + (0..i)
                    .map(|j| z * (self.alpha[i * s + j] + self.gamma_ij[i * s + j]) * x[j])
                    .sum::<f64>();
            x[i] = acc / (1.0 - z * self.gamma);
        }
        1.0 + z * (0..s).map(|i| self.b[i] * x[i]).sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Order conditions 1-3 (Hairer & Wanner IV.7, Table 7.1) in the flat classical layout: they
    /// check the conversion from the transformed form.
    fn residuals(t: &Tableau) -> Vec<f64> {
        let s = t.stages;
        let beta = |i: usize, j: usize| t.alpha[i * s + j] + t.gamma_ij[i * s + j];
        let betap = |i: usize| (0..i).map(|j| beta(i, j)).sum::<f64>();
        let bsum = |f: &dyn Fn(usize) -> f64| (0..s).map(|i| t.b[i] * f(i)).sum::<f64>();
        let g = t.gamma;
        let mut v = vec![bsum(&|_| 1.0) - 1.0];
        if t.order >= 2 {
            v.push(bsum(&|i| betap(i)) - (0.5 - g));
        }
        if t.order >= 3 {
            v.push(bsum(&|i| t.c[i] * t.c[i]) - 1.0 / 3.0);
            let bb = |i: usize| {
                (0..i)
                    .map(|j| (beta(i, j) + if i == j { g } else { 0.0 }) * betap(j))
                    .sum::<f64>()
            };
            v.push(bsum(&bb) - (1.0 / 6.0 - g + g * g));
        }
        v
    }

    #[test]
    fn converted_tableaus_satisfy_order_conditions() {
        for name in NAMES {
            let t = Tableau::by_name(name).unwrap();
            for r in residuals(&t) {
                assert!(r.abs() < 1e-10, "{name}: residual {r}");
            }
        }
    }

    #[test]
    fn lsrt2_matches_document_000_table_1_and_is_l_stable() {
        let t = Tableau::lsrt2();
        let g = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
        assert!((t.gamma - g).abs() < 1e-15);
        assert!((t.alpha[2] - 0.5).abs() < 1e-15 && (t.gamma_ij[2] + g).abs() < 1e-15);
        assert_eq!(t.b, vec![0.0, 1.0]);
        assert!(t.stability(-1e12).abs() < 1e-6);
        let z: f64 = -0.7;
        let expect = (1.0 + (2f64.sqrt() - 1.0) * z) / (1.0 - g * z).powi(2);
        assert!((t.stability(z) - expect).abs() < 1e-13);
    }
}
