//! Shared helpers of the sprung test suites, in one place instead of copies per crate:
//!
//! * [`CountingAllocator`] and [`allocations`]: a global allocator that counts the allocations of
//!   the current thread, for the "no allocation per step" tests. A test binary installs it with
//!   `#[global_allocator] static A: CountingAllocator = CountingAllocator;`;
//! * [`Rng`] (xorshift) and [`SplitMix`]: small deterministic generators for reproducible test data;
//! * [`model_path`], [`model_text`]: the example models under `models/`;
//! * [`max_rel_diff`], [`column_error`]: the comparisons the finite-difference and agreement tests
//!   use; [`worst_mechanical_jacobian_error`]: an assembled J_r, J_v against central differences of
//!   q(r, v).
//!
//! The crate depends on none of the sprung crates, so every crate's tests can use it without a
//! dependency cycle; builders that return compiled models live beside the tests that need them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

/// Forwards to the system allocator and counts the allocations of the calling thread.
pub struct CountingAllocator;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call unchanged to the system allocator; the counter is a
// const-initialised thread-local `Cell`, whose access never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations of the current thread so far (only counted where [`CountingAllocator`] is the
/// global allocator).
pub fn allocations() -> u64 {
    ALLOCS.with(|c| c.get())
}

/// Allocations made by `f` on the current thread.
pub fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}

/// Xorshift (13, 7, 17): a small deterministic generator for reproducible test data.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// Next raw 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [−a, a].
    pub fn sym(&mut self, a: f64) -> f64 {
        a * (2.0 * self.uniform() - 1.0)
    }
    /// Uniform index below `n` (0 for n = 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// SplitMix64: a deterministic generator whose outputs are well mixed even for small seeds.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// Next raw 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [−1, 1).
    pub fn sym(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
    /// Uniform index below `n` (0 for n = 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// Log-uniform in [lo, hi].
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// A Python interpreter with pandas and pyarrow for the cross-checks with an independent reader:
/// `SPRUNG_TEST_PYTHON` (set by `tools/test` to its virtual environment, which installs them),
/// else `python3` from the path; `None` if neither imports both.
pub fn python_with_pandas() -> Option<PathBuf> {
    let candidates = std::env::var_os("SPRUNG_TEST_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::iter::once(PathBuf::from("python3")));
    candidates.into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-c", "import pandas, pyarrow"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Path of an example model, e.g. `model_path("double_wishbone.toml")`.
pub fn model_path(name: &str) -> PathBuf {
    workspace_root().join("models").join(name)
}

/// Text of an example model.
pub fn model_text(name: &str) -> String {
    let p = model_path(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every force-element type (bushings with and without curves and spin axis, linear and curve
/// springs, characteristic and bilinear dampers, bump and rebound stops), body- and global-frame
/// inputs, gravity and a spinning wheel: the model of the Jacobian and element-pack tests.
pub const ALL_ELEMENTS: &str = include_str!("../fixtures/all_elements.toml");

/// Largest entry-wise |a − b| relative to the largest magnitude in `a` (at least the smallest
/// positive number).
pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "max_rel_diff: lengths differ");
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / scale.max(f64::MIN_POSITIVE)
}

/// Error of an analytic Jacobian column against its finite-difference estimate: the largest
/// difference relative to the largest entry of either (absolute when both are below 1e-9).
pub fn column_error(analytic: &[f64], fd: &[f64]) -> f64 {
    let scale = fd
        .iter()
        .chain(analytic)
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = analytic
        .iter()
        .zip(fd)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    if scale < 1e-9 { diff } else { diff / scale }
}

/// Path of a test fixture file, e.g. `fixture_path("subsystems/pair.toml")`.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Variance-normalised squared error of `y` against `y_ref`: Σ(y − y_ref)² / Σ(y_ref − ȳ_ref)²
/// (1 = as far off as the reference's own spread; the tests' measure for time histories that
/// swing about a non-zero mean, unlike the mean-normalised NMSE of document 000 in
/// `sprung_io::metrics`).
pub fn nmse_about_mean(y: &[f64], y_ref: &[f64]) -> f64 {
    let mean = y_ref.iter().sum::<f64>() / y_ref.len() as f64;
    let var: f64 = y_ref.iter().map(|v| (v - mean).powi(2)).sum();
    let err: f64 = y.iter().zip(y_ref).map(|(a, b)| (a - b).powi(2)).sum();
    err / var
}

/// The columns K(r) e_k (k < n_r, each of length n_v) of a tangent map given as
/// `tangent(dr, w)`: w = K(r) dr — what [`worst_mechanical_jacobian_error`] takes.
pub fn tangent_columns(
    nr: usize,
    nv: usize,
    mut tangent: impl FnMut(&[f64], &mut [f64]),
) -> Vec<Vec<f64>> {
    (0..nr)
        .map(|k| {
            let (mut e, mut w) = (vec![0.0; nr], vec![0.0; nv]);
            e[k] = 1.0;
            tangent(&e, &mut w);
            w
        })
        .collect()
}

/// Worst [`column_error`] of an assembled mechanical Jacobian against central differences of the
/// accelerations q(r, v) at (r, v): J_r through the tangent map (`jrk` is J_r K, n_v × n_v
/// row-major; `tangent_columns[k]` is K(r) e_k ([`tangent_columns`]), the velocity coordinates of a unit increment of
/// position coordinate k) and J_v (n_v × n_v row-major). `q(r, v, out)` evaluates the
/// accelerations. Relative steps 1e-6 (1 + |x|): truncation ~1e-12 against round-off ~1e-10 of q's
/// scale, so errors above 1e-6 mean a wrong partial.
pub fn worst_mechanical_jacobian_error(
    r: &[f64],
    v: &[f64],
    jrk: &[f64],
    jv: &[f64],
    tangent_columns: &[Vec<f64>],
    q: impl FnMut(&[f64], &[f64], &mut [f64]),
) -> f64 {
    worst_mechanical_jacobian_error_with_steps(r, v, jrk, jv, tangent_columns, 1e-6, 1e-6, q)
}

/// [`worst_mechanical_jacobian_error`] with the relative steps `h_r` (positions) and `h_v`
/// (velocities) given: a larger velocity step where q is quadratic in the velocities (the
/// Coriolis terms of relative coordinates: the central difference is exact for any step, so
/// only the round-off ε |q| / h remains).
#[allow(clippy::too_many_arguments)]
pub fn worst_mechanical_jacobian_error_with_steps(
    r: &[f64],
    v: &[f64],
    jrk: &[f64],
    jv: &[f64],
    tangent_columns: &[Vec<f64>],
    h_r: f64,
    h_v: f64,
    mut q: impl FnMut(&[f64], &[f64], &mut [f64]),
) -> f64 {
    let (nr, nv) = (r.len(), v.len());
    let (mut qp, mut qm) = (vec![0.0; nv], vec![0.0; nv]);
    let mut worst = 0.0f64;
    let difference = |qp: &[f64], qm: &[f64], h: f64| -> Vec<f64> {
        qp.iter()
            .zip(qm)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect()
    };
    for (k, w) in tangent_columns.iter().enumerate().take(nr) {
        let h = h_r * (1.0 + r[k].abs());
        let (mut rp, mut rm) = (r.to_vec(), r.to_vec());
        rp[k] += h;
        rm[k] -= h;
        q(&rp, v, &mut qp);
        q(&rm, v, &mut qm);
        let fd = difference(&qp, &qm, h);
        let an: Vec<f64> = (0..nv)
            .map(|i| (0..nv).map(|j| jrk[i * nv + j] * w[j]).sum())
            .collect();
        worst = worst.max(column_error(&an, &fd));
    }
    for k in 0..nv {
        let h = h_v * (1.0 + v[k].abs());
        let (mut vp, mut vm) = (v.to_vec(), v.to_vec());
        vp[k] += h;
        vm[k] -= h;
        q(r, &vp, &mut qp);
        q(r, &vm, &mut qm);
        let fd = difference(&qp, &qm, h);
        let an: Vec<f64> = (0..nv).map(|i| jv[i * nv + k]).collect();
        worst = worst.max(column_error(&an, &fd));
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_in_range() {
        let (mut a, mut b) = (Rng(7), Rng(7));
        let xs: Vec<f64> = (0..1000).map(|_| a.uniform()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        assert!(
            xs.iter()
                .zip((0..1000).map(|_| b.uniform()))
                .all(|(x, y)| *x == y)
        );
        let mean = xs.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
        let mut s = SplitMix(1);
        let ys: Vec<f64> = (0..1000).map(|_| s.sym()).collect();
        assert!(ys.iter().all(|y| (-1.0..1.0).contains(y)));
        assert!(ys.iter().sum::<f64>().abs() / 1000.0 < 0.1);
    }

    #[test]
    fn comparisons() {
        assert_eq!(max_rel_diff(&[1.0, 4.0], &[1.0, 2.0]), 0.5);
        assert_eq!(column_error(&[1e-12], &[0.0]), 1e-12);
        assert_eq!(column_error(&[1.0, 2.0], &[1.0, 1.0]), 0.5);
    }
}
