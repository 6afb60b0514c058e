//! The steering-box transmission δ_P = P(δ_S) of document 002 (`../shared/seeds/002_e0ef91a6cdcd28dd.txt`,
//! eq. 18): the ratio i_S = dδ_P/dδ_S is a constant or a piecewise-linear curve i_S(δ_S).
//!
//! With a curve, P is its exact integral from δ_S = 0 (so δ_P = 0 at δ_S = 0): piecewise
//! quadratic and continuously differentiable; P'' (the slope of the ratio curve) enters the
//! Newton matrix (`linkage`) and the exact partials. Outside the table the end ratio holds (P is
//! linear there).

/// The box transmission.
#[derive(Debug, Clone, PartialEq)]
pub enum BoxRatio {
    /// A constant ratio i_S (−).
    Constant(f64),
    /// A ratio curve: knots δ_S (rad, strictly increasing), ratios i_S (−), and the integral P at
    /// each knot (rad).
    Curve {
        /// Knots δ_S, rad.
        x: Vec<f64>,
        /// Ratio i_S at the knots.
        i: Vec<f64>,
        /// P(x_k), rad.
        p: Vec<f64>,
    },
}

/// P(δ_S), P'(δ_S) = i_S and P''(δ_S).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transmission {
    /// δ_P = P(δ_S), rad.
    pub delta_p: f64,
    /// i_S = P'(δ_S), −.
    pub ratio: f64,
    /// P''(δ_S), 1/rad.
    pub ratio_slope: f64,
}

impl BoxRatio {
    /// A curve from pairs (δ_S in rad, i_S), checked: at least two points, δ_S strictly
    /// increasing, every ratio finite and non-zero with one sign.
    pub fn curve(pairs: &[f64]) -> Result<Self, String> {
        if pairs.len() < 4 || !pairs.len().is_multiple_of(2) {
            return Err(format!(
                "parameter `box_ratio_curve` needs pairs [delta_s_rad, i_s, ...] with at least two points, got {} numbers",
                pairs.len()
            ));
        }
        let x: Vec<f64> = pairs.iter().step_by(2).copied().collect();
        let i: Vec<f64> = pairs.iter().skip(1).step_by(2).copied().collect();
        for w in x.windows(2) {
            if w[1] <= w[0] || !w[0].is_finite() || !w[1].is_finite() {
                return Err(format!(
                    "parameter `box_ratio_curve`: the input angles must be finite and strictly increasing ({} then {})",
                    w[0], w[1]
                ));
            }
        }
        if i.iter().any(|r| !r.is_finite() || *r == 0.0)
            || !(i.iter().all(|r| *r > 0.0) || i.iter().all(|r| *r < 0.0))
        {
            return Err(
                "parameter `box_ratio_curve`: the ratios must be finite, non-zero and of one sign (the box must not lock or reverse)"
                    .to_string(),
            );
        }
        // Integral at the knots from 0.
        let mut p = vec![0.0; x.len()];
        let prim = |k: usize, s: f64| {
            // ∫_{x_k}^{s} of the segment k's linear ratio.
            let slope = (i[k + 1] - i[k]) / (x[k + 1] - x[k]);
            let d = s - x[k];
            i[k] * d + 0.5 * slope * d * d
        };
        for k in 1..x.len() {
            p[k] = p[k - 1] + prim(k - 1, x[k]);
        }
        let mut curve = BoxRatio::Curve { x, i, p };
        let at0 = curve.at(0.0).delta_p;
        if let BoxRatio::Curve { p, .. } = &mut curve {
            p.iter_mut().for_each(|v| *v -= at0);
        }
        Ok(curve)
    }

    /// P, P', P'' at the box input angle `delta_s` (rad).
    pub fn at(&self, delta_s: f64) -> Transmission {
        match self {
            BoxRatio::Constant(i) => Transmission {
                delta_p: i * delta_s,
                ratio: *i,
                ratio_slope: 0.0,
            },
            BoxRatio::Curve { x, i, p } => {
                let n = x.len();
                if delta_s <= x[0] {
                    return Transmission {
                        delta_p: p[0] + i[0] * (delta_s - x[0]),
                        ratio: i[0],
                        ratio_slope: 0.0,
                    };
                }
                if delta_s >= x[n - 1] {
                    return Transmission {
                        delta_p: p[n - 1] + i[n - 1] * (delta_s - x[n - 1]),
                        ratio: i[n - 1],
                        ratio_slope: 0.0,
                    };
                }
                // Segment k with x_k <= δ_S < x_{k+1} (binary search, no allocation).
                let k = x.partition_point(|&v| v <= delta_s) - 1;
                let slope = (i[k + 1] - i[k]) / (x[k + 1] - x[k]);
                let d = delta_s - x[k];
                Transmission {
                    delta_p: p[k] + i[k] * d + 0.5 * slope * d * d,
                    ratio: i[k] + slope * d,
                    ratio_slope: slope,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_integrates_the_ratio_exactly() {
        let c = BoxRatio::curve(&[-10.0, 0.08, 0.0, 0.06, 10.0, 0.08]).unwrap();
        assert_eq!(c.at(0.0).delta_p, 0.0);
        // ∫_0^5 (0.06 + 0.002 s) ds = 0.3 + 0.025.
        let t = c.at(5.0);
        assert!((t.delta_p - 0.325).abs() < 1e-15, "{t:?}");
        assert!((t.ratio - 0.07).abs() < 1e-15);
        assert!((t.ratio_slope - 0.002).abs() < 1e-15);
        // Beyond the table: the end ratio; P continuous at the end.
        let e = c.at(10.0).delta_p;
        assert!((c.at(12.0).delta_p - (e + 0.16)).abs() < 1e-14);
        // P' = i_S by central differences everywhere (the curve is C1; at a knot the differences
        // average the two slopes: error h |di/ds| = 2e-9).
        for s in [-11.0, -7.3, -0.2, 0.0, 3.3, 9.99, 10.5] {
            let h = 1e-6;
            let fd = (c.at(s + h).delta_p - c.at(s - h).delta_p) / (2.0 * h);
            assert!((fd - c.at(s).ratio).abs() < 5e-9, "s = {s}");
        }
    }

    #[test]
    fn bad_curves_are_rejected() {
        assert!(BoxRatio::curve(&[0.0, 0.07]).is_err());
        assert!(BoxRatio::curve(&[0.0, 0.07, 0.0, 0.07]).is_err());
        assert!(BoxRatio::curve(&[0.0, 0.07, 1.0, -0.07]).is_err());
        assert!(BoxRatio::curve(&[0.0, 0.07, 1.0, 0.0]).is_err());
    }
}
