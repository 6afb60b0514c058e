//! Run-time CPU feature detection for the optional AVX2 + FMA kernels (block LU, block products
//! of the Rosenbrock stages, the iteration matrix). The default build targets baseline x86-64 so
//! that the binary runs on any machine; hot kernels that profit from 256-bit vectors and fused
//! multiply-add exist a second time, compiled with those features, and are chosen at run time.

/// The one SIMD dispatch idiom of the workspace: a zero-sized token that only
/// [`Avx2Fma::detect`] creates, on CPUs with AVX2 and FMA. Code with an AVX2 + FMA compiled copy
/// keeps an `Option<Avx2Fma>` and dispatches with
/// `if let Some(t) = token { unsafe { f_avx2(t, …) } } else { f(…) }`, where `f_avx2` is the same
/// body under `#[target_feature(enable = "avx2,fma")]`; holding the token is the proof that the
/// `unsafe` call is sound. The pipeline's lane arithmetic (`sprung_mbs::m3`), the Rosenbrock
/// stages and the block LU all use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Avx2Fma(());

impl Avx2Fma {
    /// The token if the CPU running this process supports AVX2 and FMA.
    pub fn detect() -> Option<Self> {
        has_avx2_fma().then_some(Self(()))
    }
}

/// Whether the CPU running this process supports AVX2 and FMA (always false off x86-64).
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Sums of six 6-wide rows held as a 4-wide and a 2-wide register each (`lo[r]`: entries 0-3 of
/// row r, `hi[r]`: entries 4-5): returns (sums of rows 0-3, sums of rows 4-5) — the horizontal
/// reduction that ends the 6 × 6 block products of the AVX2 kernels.
///
/// # Safety
/// The CPU must support AVX2 ([`has_avx2_fma`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn row_sums6(
    lo: &[std::arch::x86_64::__m256d; 6],
    hi: &[std::arch::x86_64::__m128d; 6],
) -> (std::arch::x86_64::__m256d, std::arch::x86_64::__m128d) {
    use std::arch::x86_64::*;
    // Fold each row to two lanes, then pairwise horizontal adds.
    let mut t = [_mm_setzero_pd(); 6];
    for r in 0..6 {
        let l = _mm_add_pd(
            _mm256_castpd256_pd128(lo[r]),
            _mm256_extractf128_pd::<1>(lo[r]),
        );
        t[r] = _mm_add_pd(l, hi[r]);
    }
    let s01 = _mm_hadd_pd(t[0], t[1]);
    let s23 = _mm_hadd_pd(t[2], t[3]);
    (_mm256_set_m128d(s23, s01), _mm_hadd_pd(t[4], t[5]))
}
