//! Forward-mode derivatives for the TMeasy law: the law is written once, generic over [`Real`],
//! and evaluated with `f64` (forces and rates) or with [`Dual`] (forces, rates and their exact
//! partials by the chain rule, one derivative component per kinematic input and state). Branches
//! of the law compare values, so each branch is differentiated as written; the partials are
//! analytic, not differenced. Fixed-size arrays: nothing allocates.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A number the TMeasy law can be evaluated with.
pub trait Real:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    /// A constant (zero derivatives).
    fn cst(x: f64) -> Self;
    /// The value.
    fn v(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Absolute value (derivative sign(x); +1 at 0).
    fn abs(self) -> Self {
        if self.v() < 0.0 { -self } else { self }
    }
    /// The larger value (ties: `self`).
    fn max(self, o: Self) -> Self {
        if o.v() > self.v() { o } else { self }
    }
    /// The smaller value (ties: `self`).
    fn min(self, o: Self) -> Self {
        if o.v() < self.v() { o } else { self }
    }
    /// √(a² + b²).
    fn hypot(self, o: Self) -> Self {
        (self * self + o * o).sqrt()
    }
}

impl Real for f64 {
    #[inline]
    fn cst(x: f64) -> Self {
        x
    }
    #[inline]
    fn v(self) -> f64 {
        self
    }
    #[inline]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline]
    fn tanh(self) -> Self {
        f64::tanh(self)
    }
    #[inline]
    fn sin(self) -> Self {
        f64::sin(self)
    }
    #[inline]
    fn hypot(self, o: Self) -> Self {
        (self * self + o * o).sqrt()
    }
}

/// A value with its gradient with respect to `N` seeded inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dual<const N: usize> {
    /// Value.
    pub v: f64,
    /// Partials with respect to the seeded inputs.
    pub d: [f64; N],
}

impl<const N: usize> Dual<N> {
    /// Input number `i` with value `v` (∂/∂input_i = 1).
    #[inline]
    pub fn var(v: f64, i: usize) -> Self {
        let mut d = [0.0; N];
        d[i] = 1.0;
        Self { v, d }
    }
    #[inline]
    fn chain(self, v: f64, dv: f64) -> Self {
        let mut d = self.d;
        for x in &mut d {
            *x *= dv;
        }
        Self { v, d }
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        let mut d = self.d;
        for (x, y) in d.iter_mut().zip(o.d) {
            *x += y;
        }
        Self { v: self.v + o.v, d }
    }
}
impl<const N: usize> Sub for Dual<N> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        let mut d = self.d;
        for (x, y) in d.iter_mut().zip(o.d) {
            *x -= y;
        }
        Self { v: self.v - o.v, d }
    }
}
impl<const N: usize> Mul for Dual<N> {
    type Output = Self;
    #[inline]
    fn mul(self, o: Self) -> Self {
        let mut d = self.d;
        for (x, y) in d.iter_mut().zip(o.d) {
            *x = *x * o.v + self.v * y;
        }
        Self { v: self.v * o.v, d }
    }
}
impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        let inv = 1.0 / o.v;
        let v = self.v * inv;
        let mut d = self.d;
        for (x, y) in d.iter_mut().zip(o.d) {
            *x = (*x - v * y) * inv;
        }
        Self { v, d }
    }
}
impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self.chain(-self.v, -1.0)
    }
}
impl<const N: usize> Add<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn add(self, o: f64) -> Self {
        Self {
            v: self.v + o,
            d: self.d,
        }
    }
}
impl<const N: usize> Sub<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn sub(self, o: f64) -> Self {
        Self {
            v: self.v - o,
            d: self.d,
        }
    }
}
impl<const N: usize> Mul<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn mul(self, o: f64) -> Self {
        self.chain(self.v * o, o)
    }
}
impl<const N: usize> Div<f64> for Dual<N> {
    type Output = Self;
    #[inline]
    fn div(self, o: f64) -> Self {
        let inv = 1.0 / o;
        self.chain(self.v * inv, inv)
    }
}

impl<const N: usize> Real for Dual<N> {
    #[inline]
    fn cst(x: f64) -> Self {
        Self { v: x, d: [0.0; N] }
    }
    #[inline]
    fn v(self) -> f64 {
        self.v
    }
    #[inline]
    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        self.chain(r, 0.5 / r)
    }
    #[inline]
    fn tanh(self) -> Self {
        let t = self.v.tanh();
        self.chain(t, 1.0 - t * t)
    }
    #[inline]
    fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dual_rules_match_calculus() {
        // f(x, y) = sqrt(x y) / (x + 2) - tanh(y) sin(x), derivatives by hand.
        let (x0, y0) = (0.7, 1.3);
        let x = Dual::<2>::var(x0, 0);
        let y = Dual::<2>::var(y0, 1);
        let f = (x * y).sqrt() / (x + 2.0) - y.tanh() * x.sin();
        let s = (x0 * y0).sqrt();
        let dfdx = 0.5 * y0 / s / (x0 + 2.0) - s / (x0 + 2.0).powi(2) - y0.tanh() * x0.cos();
        let dfdy = 0.5 * x0 / s / (x0 + 2.0) - (1.0 - y0.tanh().powi(2)) * x0.sin();
        assert!((f.d[0] - dfdx).abs() < 1e-15);
        assert!((f.d[1] - dfdy).abs() < 1e-15);
    }
}
