//! The arithmetic in which a built-in element law is written once, for one element and for the
//! four lanes of a pack (`crate::pack`): the scalar path of the linearisation instantiates the law
//! with [`One`], the q-only path with the SIMD token of `crate::m3` (the one dispatch idiom: the
//! AVX2 copy exists only behind CPU detection). A separate trait from `Lanes`, whose loads and
//! stores are four-lane, so that a law needs nothing but values.

use crate::m3::Lanes;

/// The arithmetic an element law is written in once for one element and for the four lanes of a
/// pack ([`crate::pack`]): [`One`] computes one element in plain `f64`, every [`Lanes`] token
/// four elements side by side (lane k = element k).
pub trait Arith: Copy {
    /// One value per element: `f64`, or a four-lane value.
    type V: Copy;
    /// x in every lane.
    fn splat(self, x: f64) -> Self::V;
    /// a + b.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// a − b.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// a · b.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
}

impl<L: Lanes> Arith for L {
    type V = L::V;
    #[inline(always)]
    fn splat(self, x: f64) -> Self::V {
        Lanes::splat(self, x)
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        Lanes::add(self, a, b)
    }
    #[inline(always)]
    fn sub(self, a: Self::V, b: Self::V) -> Self::V {
        Lanes::sub(self, a, b)
    }
    #[inline(always)]
    fn mul(self, a: Self::V, b: Self::V) -> Self::V {
        Lanes::mul(self, a, b)
    }
}

/// One element in plain `f64` (the one-element path of the linearisation).
#[derive(Debug, Clone, Copy, Default)]
pub struct One;

impl Arith for One {
    type V = f64;
    #[inline(always)]
    fn splat(self, x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn add(self, a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn sub(self, a: f64, b: f64) -> f64 {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: f64, b: f64) -> f64 {
        a * b
    }
}
