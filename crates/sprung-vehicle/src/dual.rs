//! Forward-mode automatic differentiation for the tire laws: a number carrying its value and its
//! N first derivatives ([`Dual`]), and the [`Real`] trait the laws are written against (TMeasy in
//! [`crate::tire::tmeasy`], the Magic Formula in [`crate::tire::pac2002`]), so one transcription
//! of the equations gives the forces (`f64`) and their exact partials (`Dual<N>`, the chain rule
//! applied operation by operation; no differencing). Branches compare values, so each branch is
//! differentiated as written. Fixed-size arrays: nothing allocates.
//!
//! The value of every operation is computed exactly as `f64` computes it (a quotient by a true
//! division, the same functions: [`sin_cos`], [`sin`], [`tanh`] or the C library's), so a law's
//! dual pass gives bit for bit the forces of its `f64` evaluation and takes the same branches:
//! the tire element's one-pass evaluation with partials returns exactly what separate
//! evaluations would.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// sin x and cos x together by one argument reduction and two Taylor polynomials: the tire
/// laws' angles (the Magic Formula's C atan(·), camber) cost one call instead of the C
/// library's `sincos` (about half its instructions). x = q π/2 + r with q the nearest
/// integer to 2x/π and r formed in three steps with π/2 split into two 33-bit parts and a
/// remainder (Cody and Waite: q P₁ and q P₂ are exact for |q| < 2²⁰), so |r| ≤ π/4; then
/// sin r = r − r³/3! + … − r¹⁵/15! + r¹⁷/17! and cos r = 1 − r²/2! + … − r¹⁸/18! (the next
/// terms are below 1e-19 relative at |r| = π/4), rotated by the quadrant q mod 4. Within
/// ε |value| (ε = 2⁻⁵²) of the standard library's values (test
/// `sin_cos_matches_the_standard_library`). |x| > 1e5 and NaN go to the standard library.
#[inline]
pub fn sin_cos(x: f64) -> (f64, f64) {
    if x.is_nan() || x.abs() > 1e5 {
        return x.sin_cos();
    }
    // π/2 = P1 + P2 + P3 (P1, P2 with 33 significant bits).
    const P1: f64 = 1.5707963267341256;
    const P2: f64 = 6.077100506303966e-11;
    const P3: f64 = 2.0222662487959506e-21;
    // Adding and subtracting 1.5 · 2⁵² rounds to the nearest integer (no SSE4.1 `round`).
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let q = (x * std::f64::consts::FRAC_2_PI + SHIFT) - SHIFT;
    let r = ((x - q * P1) - q * P2) - q * P3;
    let z = r * r;
    const F: [f64; 19] = FACTORIAL_INV;
    let ps = sin_series(z);
    let pc = -F[2]
        + z * (F[4]
            + z * (-F[6]
                + z * (F[8]
                    + z * (-F[10] + z * (F[12] + z * (-F[14] + z * (F[16] - z * F[18])))))));
    let s = r + r * z * ps;
    let c = 1.0 + z * pc;
    match (q as i64) & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// 1/n!, n = 0..18: the coefficients of [`sin_cos`]'s polynomials.
const FACTORIAL_INV: [f64; 19] = {
    let mut f = [1.0; 19];
    let mut n = 1;
    while n < 19 {
        f[n] = f[n - 1] / n as f64;
        n += 1;
    }
    f
};

/// (sin r − r)/r³ as the polynomial in z = r² of [`sin_cos`].
#[inline(always)]
fn sin_series(z: f64) -> f64 {
    const F: [f64; 19] = FACTORIAL_INV;
    -F[3]
        + z * (F[5]
            + z * (-F[7] + z * (F[9] + z * (-F[11] + z * (F[13] + z * (-F[15] + z * F[17]))))))
}

/// sin x, bit for bit `sin_cos(x).0`: for |x| ≤ 0.78 (< π/4, where the reduction's q is 0 and
/// r = x exactly) the sine polynomial alone, without the cosine polynomial and the quadrant
/// selection of [`sin_cos`] (the tire laws' camber angles; ≈ 40 instructions fewer).
#[inline]
pub fn sin(x: f64) -> f64 {
    if x.abs() <= 0.78 {
        x + x * (x * x) * sin_series(x * x)
    } else {
        sin_cos(x).0
    }
}

/// tanh x: for 1 ≤ |x| < 22 as sgn x (1 − 2/(e^{2|x|} + 1)) by one `exp`, else by the C
/// library's `tanh` (whose branch for 1 ≤ |x| < 22 is 1 − 2/(expm1(2|x|) + 2), the same
/// quantity: `exp` is the cheaper call; ≈ 45 fewer instructions per tire evaluation). There
/// 2/(e^{2|x|} + 1) < 0.24 and tanh x > 0.76, so the value is within about an ulp of the
/// library's (test `tanh_matches_the_standard_library`).
#[inline]
pub fn tanh(x: f64) -> f64 {
    let a = x.abs();
    // NaN fails both comparisons and goes to the library.
    if (1.0..22.0).contains(&a) {
        (1.0 - 2.0 / ((2.0 * a).exp() + 1.0)).copysign(x)
    } else {
        x.tanh()
    }
}

/// The scalar operations the tire laws need.
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
    /// A constant (all derivatives zero).
    fn cst(x: f64) -> Self;
    /// The value.
    fn val(self) -> f64;
    /// sin x ([`sin_cos`], [`sin`]).
    fn sin(self) -> Self;
    /// cos x ([`sin_cos`]).
    fn cos(self) -> Self;
    /// atan x.
    fn atan(self) -> Self;
    /// exp x.
    fn exp(self) -> Self;
    /// √x (x > 0; the derivative is infinite at 0, callers avoid it).
    fn sqrt(self) -> Self;
    /// tanh x ([`tanh`]).
    fn tanh(self) -> Self;
    /// |x| (derivative sgn x; +1 at 0).
    fn abs(self) -> Self {
        if self.val() < 0.0 { -self } else { self }
    }
    /// The larger value (ties: `self`).
    fn max(self, o: Self) -> Self {
        if o.val() > self.val() { o } else { self }
    }
    /// The smaller value (ties: `self`).
    fn min(self, o: Self) -> Self {
        if o.val() < self.val() { o } else { self }
    }
    /// √(a² + b²), written out so that `f64` and [`Dual`] give the same value bit for bit.
    fn hypot(self, o: Self) -> Self {
        (self * self + o * o).sqrt()
    }
    /// min(x, c) for a constant c (the derivative of the chosen branch).
    fn min_c(self, c: f64) -> Self {
        if self.val() > c { Self::cst(c) } else { self }
    }
    /// max(x, c) for a constant c.
    fn max_c(self, c: f64) -> Self {
        if self.val() < c { Self::cst(c) } else { self }
    }
    /// x².
    fn sq(self) -> Self {
        self * self
    }
}

impl Real for f64 {
    #[inline(always)]
    fn cst(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn val(self) -> f64 {
        self
    }
    #[inline(always)]
    fn sin(self) -> Self {
        sin(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        sin_cos(self).1
    }
    #[inline(always)]
    fn atan(self) -> Self {
        f64::atan(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        f64::exp(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        tanh(self)
    }
}

/// A value with its derivatives with respect to N seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dual<const N: usize> {
    /// The value.
    pub v: f64,
    /// ∂value/∂seed_i.
    pub d: [f64; N],
}

impl<const N: usize> Dual<N> {
    /// Seed number `i` with value `v` (derivative 1 with respect to itself).
    #[inline(always)]
    pub fn seed(v: f64, i: usize) -> Self {
        let mut d = [0.0; N];
        d[i] = 1.0;
        Self { v, d }
    }

    /// A value with given derivatives.
    #[inline(always)]
    pub fn new(v: f64, d: [f64; N]) -> Self {
        Self { v, d }
    }

    /// f(x) given f(x.v) and f'(x.v).
    #[inline(always)]
    fn chain(self, f: f64, df: f64) -> Self {
        let mut d = self.d;
        for x in d.iter_mut() {
            *x *= df;
        }
        Self { v: f, d }
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    #[inline(always)]
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
    #[inline(always)]
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
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let mut d = [0.0; N];
        for ((x, a), b) in d.iter_mut().zip(self.d).zip(o.d) {
            *x = a * o.v + self.v * b;
        }
        Self { v: self.v * o.v, d }
    }
}

impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        let inv = 1.0 / o.v;
        // The value by a true division (not self.v · inv): the same bits as the f64 law.
        let q = self.v / o.v;
        let mut d = [0.0; N];
        for ((x, a), b) in d.iter_mut().zip(self.d).zip(o.d) {
            *x = (a - q * b) * inv;
        }
        Self { v: q, d }
    }
}

impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.chain(-self.v, -1.0)
    }
}

impl<const N: usize> Add<f64> for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: f64) -> Self {
        Self {
            v: self.v + c,
            d: self.d,
        }
    }
}

impl<const N: usize> Sub<f64> for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: f64) -> Self {
        Self {
            v: self.v - c,
            d: self.d,
        }
    }
}

impl<const N: usize> Mul<f64> for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: f64) -> Self {
        self.chain(self.v * c, c)
    }
}

impl<const N: usize> Div<f64> for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: f64) -> Self {
        self.chain(self.v / c, 1.0 / c)
    }
}

impl<const N: usize> Real for Dual<N> {
    #[inline(always)]
    fn cst(x: f64) -> Self {
        Self { v: x, d: [0.0; N] }
    }
    #[inline(always)]
    fn val(self) -> f64 {
        self.v
    }
    #[inline(always)]
    fn sin(self) -> Self {
        let (s, c) = sin_cos(self.v);
        self.chain(s, c)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        let (s, c) = sin_cos(self.v);
        self.chain(c, -s)
    }
    #[inline(always)]
    fn atan(self) -> Self {
        self.chain(self.v.atan(), 1.0 / (1.0 + self.v * self.v))
    }
    #[inline(always)]
    fn exp(self) -> Self {
        let e = self.v.exp();
        self.chain(e, e)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        self.chain(r, 0.5 / r)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        let t = tanh(self.v);
        self.chain(t, 1.0 - t * t)
    }
}

/// Number of inputs of a sub-expression differentiated apart ([`Chained`]).
pub const N_SUB: usize = 3;

/// A scalar whose sub-expressions of at most [`N_SUB`] inputs are differentiated in a smaller
/// dual type and chained back: a part of a law that depends on few intermediate quantities u
/// (TMeasy's characteristic depends on the load ratio and the two slips only) costs
/// [`N_SUB`] derivative lanes instead of N, and y's derivatives follow as Σ ∂y/∂u_i ∂u_i (the
/// chain rule, exact). For `f64` both types are `f64` and nothing changes: the values are the
/// same operations on the same numbers in both, so bit for bit equal.
pub trait Chained: Real {
    /// The type of the sub-expression (`f64` for `f64`, [`Dual<N_SUB>`] for [`Dual<N>`]).
    type Sub: Real;
    /// `self` as input number `i` (< [`N_SUB`]) of a sub-expression.
    fn sub_seed(self, i: usize) -> Self::Sub;
    /// A sub-expression's result y(u) in this type: value y, derivatives Σ_i ∂y/∂u_i ∂u_i.
    fn lift(y: Self::Sub, u: &[Self; N_SUB]) -> Self;
}

impl Chained for f64 {
    type Sub = f64;
    #[inline(always)]
    fn sub_seed(self, _i: usize) -> f64 {
        self
    }
    #[inline(always)]
    fn lift(y: f64, _u: &[f64; N_SUB]) -> f64 {
        y
    }
}

impl<const N: usize> Chained for Dual<N> {
    type Sub = Dual<N_SUB>;
    #[inline(always)]
    fn sub_seed(self, i: usize) -> Dual<N_SUB> {
        Dual::seed(self.v, i)
    }
    #[inline(always)]
    fn lift(y: Dual<N_SUB>, u: &[Self; N_SUB]) -> Self {
        let mut d = [0.0; N];
        for (g, ui) in y.d.iter().zip(u) {
            for (x, du) in d.iter_mut().zip(ui.d) {
                *x += g * du;
            }
        }
        Self { v: y.v, d }
    }
}

/// Number of leading derivative lanes of a law's coefficient quantities ([`Split`]).
pub const N_COEF: usize = 2;

/// A scalar whose first [`N_COEF`] derivative lanes are the inputs a law's *coefficients*
/// depend on (PAC2002: F_z and γ; the Magic Formula's B, C, D, E and shifts depend on them
/// only): those quantities are computed in [`Split::Coef`] ([`N_COEF`] lanes for a dual number)
/// and widened where they meet the other inputs (the slips), so they cost [`N_COEF`] lanes
/// instead of N. Widening puts their lanes first and zeros after them — exactly the
/// derivatives the full-width pass gives them (its other lanes are exact zeros), and the
/// values are the same operations on the same numbers: bit for bit. For `f64` both are `f64`.
pub trait Split: Real {
    /// The type of the coefficient quantities (`f64` for `f64`, [`Dual<N_COEF>`] for
    /// [`Dual<N>`]).
    type Coef: Real;
    /// A coefficient quantity in this type (its lanes first, zeros after).
    fn widen(x: Self::Coef) -> Self;
}

impl Split for f64 {
    type Coef = f64;
    #[inline(always)]
    fn widen(x: f64) -> f64 {
        x
    }
}

impl<const N: usize> Split for Dual<N> {
    type Coef = Dual<N_COEF>;
    #[inline(always)]
    fn widen(x: Dual<N_COEF>) -> Self {
        const { assert!(N >= N_COEF) };
        let mut d = [0.0; N];
        d[..N_COEF].copy_from_slice(&x.d);
        Self { v: x.v, d }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivatives of a composite expression against central differences (step 1e-6,
    /// truncation error ~1e-12 times the third derivative; 1e-8 relative is far above it).
    #[test]
    fn dual_matches_differences() {
        fn f<T: Real>(x: T, y: T) -> T {
            (x * y).sin() + (x / (y + 2.0)).atan() * y.exp() - (x.sq() + 1.0).sqrt() * x.cos()
                + (y * 0.3).tanh()
                - x.abs() * 2.0
        }
        for &(x, y) in &[(0.3, -0.7), (-1.2, 0.4), (2.0, 1.5)] {
            let d = f(Dual::<2>::seed(x, 0), Dual::<2>::seed(y, 1));
            let h = 1e-6;
            let dx = (f(x + h, y) - f(x - h, y)) / (2.0 * h);
            let dy = (f(x, y + h) - f(x, y - h)) / (2.0 * h);
            // The value is the f64 law's, bit for bit (module docs).
            assert_eq!(d.v, f(x, y));
            assert!(
                (d.d[0] - dx).abs() < 1e-8 * (1.0 + dx.abs()),
                "{} {}",
                d.d[0],
                dx
            );
            assert!(
                (d.d[1] - dy).abs() < 1e-8 * (1.0 + dy.abs()),
                "{} {}",
                d.d[1],
                dy
            );
        }
    }

    /// A sub-expression differentiated in 3 lanes and chained back equals the same expression
    /// differentiated in all lanes (value bit for bit, derivatives to rounding).
    #[test]
    fn chained_sub_expression_matches_the_full_pass() {
        fn g<T: Real>(a: T, b: T) -> T {
            (a * b).atan() / (a.sq() + 1.0).sqrt() + b.exp() * a
        }
        let x = [0.4, -1.1, 2.3, 0.7];
        let s: [Dual<4>; 4] = std::array::from_fn(|i| Dual::seed(x[i], i));
        let u = [s[0] * s[1] + s[2], (s[3] * s[0]).sin(), Dual::cst(0.0)];
        let full = g(u[0], u[1]);
        let sub = Dual::lift(g(u[0].sub_seed(0), u[1].sub_seed(1)), &u);
        assert_eq!(sub.v, full.v);
        assert_eq!(sub.v, g(u[0].v, u[1].v));
        for k in 0..4 {
            assert!((sub.d[k] - full.d[k]).abs() < 1e-14 * (1.0 + full.d[k].abs()));
        }
    }

    /// [`sin_cos`] against the standard library's sin and cos (glibc: correctly rounded in
    /// practice) on 400 001 points over ±40 rad, the quadrant boundaries and multiples of π/2:
    /// the difference in units of ε |value| (ε = 2⁻⁵², so 1 is one to two units in the last
    /// place); measured 1.0, bound 1.5 (and 1e-36 absolute at the zeros).
    #[test]
    fn tanh_matches_the_standard_library() {
        let mut worst: f64 = 0.0;
        for i in -300_000..=300_000 {
            let x = f64::from(i) * 1e-4;
            let (a, b) = (tanh(x), x.tanh());
            if b != 0.0 {
                worst = worst.max((a - b).abs() / (f64::EPSILON * b.abs()));
            } else {
                assert_eq!(a, 0.0);
            }
        }
        assert!(worst <= 1.5, "largest error {worst} ε|value|");
        assert!(tanh(f64::NAN).is_nan());
        assert_eq!((tanh(f64::INFINITY), tanh(-40.0)), (1.0, -1.0));
    }

    #[test]
    fn sin_is_sin_cos_bit_for_bit() {
        for i in -100_000..=100_000 {
            let x = f64::from(i) * 1e-5;
            assert_eq!(sin(x).to_bits(), sin_cos(x).0.to_bits(), "x = {x}");
        }
        for x in [0.78, -0.78, std::f64::consts::FRAC_PI_4, -0.0, 1e-300] {
            assert_eq!(sin(x).to_bits(), sin_cos(x).0.to_bits(), "x = {x}");
        }
    }

    #[test]
    fn sin_cos_matches_the_standard_library() {
        let mut worst: f64 = 0.0;
        let mut check = |x: f64| {
            let (s, c) = sin_cos(x);
            for (a, b) in [(s, x.sin()), (c, x.cos())] {
                // Error in units of the last place of the reference (of 1e-300 for zeros).
                let ulp = f64::EPSILON * b.abs().max(1e-300);
                let e = (a - b).abs() / ulp;
                // Below 1e-20 (the zeros of sin and cos at multiples of π/2 ± rounding) the
                // reduction's absolute error decides.
                let e = if b.abs() < 1e-20 {
                    (a - b).abs() / 1e-36
                } else {
                    e
                };
                worst = worst.max(e);
            }
        };
        for i in -200_000..=200_000 {
            check(i as f64 * 2e-4);
        }
        for k in -30..=30 {
            let x = k as f64 * std::f64::consts::FRAC_PI_2;
            for d in [-1e-9, 0.0, 1e-9] {
                check(x + d);
                check(x + std::f64::consts::FRAC_PI_4 + d);
            }
        }
        assert!(worst <= 1.5, "largest error {worst} ε|value|");
        assert_eq!(sin_cos(0.0), (0.0, 1.0));
        assert!(sin_cos(f64::NAN).0.is_nan());
        assert_eq!(sin_cos(1e6), 1e6f64.sin_cos());
    }

    #[test]
    fn dual_rules_match_calculus() {
        // f(x, y) = sqrt(x y) / (x + 2) - tanh(y) sin(x), derivatives by hand.
        let (x0, y0) = (0.7, 1.3);
        let x = Dual::<2>::seed(x0, 0);
        let y = Dual::<2>::seed(y0, 1);
        let f = (x * y).sqrt() / (x + 2.0) - y.tanh() * x.sin();
        let s = (x0 * y0).sqrt();
        let dfdx = 0.5 * y0 / s / (x0 + 2.0) - s / (x0 + 2.0).powi(2) - y0.tanh() * x0.cos();
        let dfdy = 0.5 * x0 / s / (x0 + 2.0) - (1.0 - y0.tanh().powi(2)) * x0.sin();
        assert!((f.d[0] - dfdx).abs() < 1e-15);
        assert!((f.d[1] - dfdy).abs() < 1e-15);
    }
}
