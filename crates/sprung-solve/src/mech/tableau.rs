//! Rosenbrock tableaus in the classical form used by document 000, eqs. 6-9:
//! stage arguments r̃ = r + h Σ α_ij Δr_j, coupling γ_ij, weights b_i, and optional embedded weights.
//! Methods published in the transformed form (a, C, m; RODAS4) are converted once:
//! Γ⁻¹ = diag(1/γ) − C, α = a Γ, b = m Γ (`integrators.md`, Rosenbrock conventions).

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

impl Tableau {
    fn classical(
        name: &'static str,
        order: u32,
        gamma: f64,
        alpha: Vec<f64>,
        gamma_ij: Vec<f64>,
        b: Vec<f64>,
        b_hat: Option<Vec<f64>>,
    ) -> Self {
        let s = b.len();
        let c = (0..s).map(|i| (0..i).map(|j| alpha[i * s + j]).sum()).collect();
        let gamma_sum = (0..s).map(|i| gamma + (0..i).map(|j| gamma_ij[i * s + j]).sum::<f64>()).collect();
        Self { name, order, stages: s, gamma, alpha, gamma_ij, b, b_hat, c, gamma_sum }
    }

    /// From the transformed form: `a` and `cc` strictly lower (row-major s × s), `m` weights,
    /// `m_hat` embedded weights.
    fn transformed(name: &'static str, order: u32, gamma: f64, a: &[f64], cc: &[f64], m: &[f64], m_hat: &[f64]) -> Self {
        let s = m.len();
        // Γ⁻¹ = diag(1/γ) − C (lower triangular); invert by forward substitution.
        let mut ginv = vec![0.0; s * s];
        for i in 0..s {
            ginv[i * s + i] = 1.0 / gamma;
            for j in 0..i {
                ginv[i * s + j] = -cc[i * s + j];
            }
        }
        let mut g = vec![0.0; s * s];
        for col in 0..s {
            for i in 0..s {
                let mut acc = if i == col { 1.0 } else { 0.0 };
                for j in 0..i {
                    acc -= ginv[i * s + j] * g[j * s + col];
                }
                g[i * s + col] = acc / ginv[i * s + i];
            }
        }
        let mul = |x: &[f64]| -> Vec<f64> {
            let mut out = vec![0.0; s * s];
            for i in 0..s {
                for j in 0..s {
                    out[i * s + j] = (0..s).map(|k| x[i * s + k] * g[k * s + j]).sum();
                }
            }
            out
        };
        let alpha = mul(a);
        let mut gamma_ij = g.clone();
        for i in 0..s {
            gamma_ij[i * s + i] = 0.0;
            for j in i + 1..s {
                gamma_ij[i * s + j] = 0.0;
            }
        }
        let vec_mul = |w: &[f64]| -> Vec<f64> { (0..s).map(|j| (0..s).map(|k| w[k] * g[k * s + j]).sum()).collect() };
        Self::classical(name, order, gamma, alpha, gamma_ij, vec_mul(m), Some(vec_mul(m_hat)))
    }

    /// LSRT2 (Bursi et al. 2008; document 000, Table 1): order 2, L-stable, W-method.
    pub fn lsrt2() -> Self {
        let g = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
        Self::classical("lsrt2", 2, g, vec![0.0, 0.0, 0.5, 0.0], vec![0.0, 0.0, -g, 0.0], vec![0.0, 1.0], None)
    }

    /// Linear-implicit Euler: one stage, γ = 1, order 1.
    pub fn linear_implicit_euler() -> Self {
        Self::classical("lie", 1, 1.0, vec![0.0], vec![0.0], vec![1.0], None)
    }

    /// ROS2 (Verwer 1999): order 2(1), L-stable, W-method, embedded first-order estimate.
    pub fn ros2() -> Self {
        let g = 1.0 + std::f64::consts::FRAC_1_SQRT_2;
        Self::classical("ros2", 2, g, vec![0.0, 0.0, 1.0, 0.0], vec![0.0, 0.0, -2.0 * g, 0.0], vec![0.5, 0.5], Some(vec![1.0, 0.0]))
    }

    /// RODAS4 (Hairer & Wanner), order 4(3), stiffly accurate, converted from the transformed form.
    pub fn rodas4() -> Self {
        let s = 6;
        let mut a = vec![0.0; s * s];
        let mut c = vec![0.0; s * s];
        let set = |m: &mut Vec<f64>, i: usize, row: &[f64]| {
            for (j, v) in row.iter().enumerate() {
                m[i * s + j] = *v;
            }
        };
        set(&mut a, 1, &[1.544]);
        set(&mut a, 2, &[0.9466785280815826, 0.2557011698983284]);
        set(&mut a, 3, &[3.314825187068521, 2.896124015972201, 0.9986419139977817]);
        set(&mut a, 4, &[1.221224509226641, 6.019134481288629, 12.53708332932087, -0.687886036105895]);
        set(&mut a, 5, &[1.221224509226641, 6.019134481288629, 12.53708332932087, -0.687886036105895, 1.0]);
        set(&mut c, 1, &[-5.6688]);
        set(&mut c, 2, &[-2.430093356833875, -0.2063599157091915]);
        set(&mut c, 3, &[-0.1073529058151375, -9.594562251023355, -20.47028614809616]);
        set(&mut c, 4, &[7.496443313967647, -10.24680431464352, -33.99990352819905, 11.7089089320616]);
        set(&mut c, 5, &[8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054]);
        let m = [1.221224509226641, 6.019134481288629, 12.53708332932087, -0.687886036105895, 1.0, 1.0];
        let m_hat = [1.221224509226641, 6.019134481288629, 12.53708332932087, -0.687886036105895, 1.0, 0.0];
        Self::transformed("rodas4", 4, 0.25, &a, &c, &m, &m_hat)
    }

    /// Looks a method up by name.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "lsrt2" => Some(Self::lsrt2()),
            "lie" | "linear_implicit_euler" => Some(Self::linear_implicit_euler()),
            "ros2" => Some(Self::ros2()),
            "rodas4" => Some(Self::rodas4()),
            _ => None,
        }
    }

    /// Stability function R(z) = 1 + z bᵀ (I − z B)⁻¹ 𝟙 with B = α + Γ (for tests).
    pub fn stability(&self, z: f64) -> f64 {
        let s = self.stages;
        // Solve (I - z B) x = 1 by forward substitution (B lower triangular).
        let mut x = vec![0.0; s];
        for i in 0..s {
            let mut acc = 1.0;
            for j in 0..i {
                acc += z * (self.alpha[i * s + j] + self.gamma_ij[i * s + j]) * x[j];
            }
            x[i] = acc / (1.0 - z * self.gamma);
        }
        1.0 + z * (0..s).map(|i| self.b[i] * x[i]).sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Order conditions of Rosenbrock methods (Hairer & Wanner IV.7, table 7.1) with β = α + Γ
    /// including the diagonal.
    fn order_conditions(t: &Tableau) -> Vec<(u32, f64)> {
        let s = t.stages;
        let beta = |i: usize, j: usize| t.alpha[i * s + j] + t.gamma_ij[i * s + j] + if i == j { t.gamma } else { 0.0 };
        let bsum = |f: &dyn Fn(usize) -> f64| (0..s).map(|i| t.b[i] * f(i)).sum::<f64>();
        let betap = |i: usize| (0..i).map(|j| beta(i, j)).sum::<f64>();
        let alpha_c = |i: usize| t.c[i];
        let g = t.gamma;
        let mut v = vec![
            (1, bsum(&|_| 1.0) - 1.0),
            (2, bsum(&|i| betap(i)) - (0.5 - g)),
        ];
        if t.order >= 3 {
            v.push((3, bsum(&|i| alpha_c(i) * alpha_c(i)) - 1.0 / 3.0));
            let bb = |i: usize| (0..i).map(|j| beta(i, j) * betap(j)).sum::<f64>();
            v.push((3, bsum(&bb) - (1.0 / 6.0 - g + g * g)));
        }
        v
    }

    #[test]
    fn tableaus_satisfy_their_order_conditions() {
        for t in [Tableau::lsrt2(), Tableau::linear_implicit_euler(), Tableau::ros2(), Tableau::rodas4()] {
            for (p, res) in order_conditions(&t) {
                assert!(res.abs() < 1e-12, "{} order-{p} condition residual {res}", t.name);
            }
        }
    }

    #[test]
    fn lsrt2_third_order_fails_and_l_stable() {
        let t = Tableau::lsrt2();
        let s = t.stages;
        let c2: f64 = (0..s).map(|i| t.b[i] * t.c[i] * t.c[i]).sum();
        assert!((c2 - 1.0 / 3.0).abs() > 1e-3);
        assert!(t.stability(-1e12).abs() < 1e-6);
        // R(z) = (1 + (√2 − 1) z)/(1 − γ z)² (integrators.md)
        let z: f64 = -0.7;
        let expect = (1.0 + (2f64.sqrt() - 1.0) * z) / (1.0 - t.gamma * z).powi(2);
        assert!((t.stability(z) - expect).abs() < 1e-13);
    }

    #[test]
    fn rodas4_is_stiffly_accurate_and_embedded_is_consistent() {
        let t = Tableau::rodas4();
        assert!(t.stability(-1e12).abs() < 1e-6);
        let bh = t.b_hat.as_ref().unwrap();
        assert!((bh.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((t.c[5] - 1.0).abs() < 1e-12);
    }
}
