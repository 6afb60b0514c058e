//! After construction, `factor` and `solve_in_place` of both solvers perform no heap allocation
//! (hot-path rule of the project; document 000 factors once per step and solves twice).

use std::sync::Arc;

use sprung_test_support::{CountingAllocator, allocations_in};

use sprung_solve::block::{BlockMatrix, BlockPattern};
use sprung_solve::block_lu::{BlockSparseLu, LinearSolver};
use sprung_solve::dense::DenseLu;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A coupled pattern with cycles and fill-in, and a diagonally dominant matrix on it.
fn system(block_size: usize) -> (Arc<BlockPattern>, BlockMatrix, Vec<f64>) {
    let edges = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 0),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 4),
        (2, 7),
        (8, 9),
    ];
    let p = Arc::new(BlockPattern::from_couplings(10, block_size, &edges));
    let mut a = BlockMatrix::zeros(p.clone());
    for (k, v) in a.values_mut().iter_mut().enumerate() {
        *v = ((k * 7919) % 113) as f64 / 113.0 - 0.5;
    }
    a.add_identity(40.0);
    let rhs = (0..p.dim()).map(|i| (i as f64).cos()).collect();
    (p, a, rhs)
}

#[test]
fn factor_and_solve_do_not_allocate() {
    // Make sure the counter itself works.
    assert!(allocations_in(|| drop(std::hint::black_box(vec![1u8; 16]))) >= 1);

    for block_size in [6, 3, 5] {
        let (p, a, rhs) = system(block_size);
        let mut sparse = BlockSparseLu::new(&p);
        let mut dense = DenseLu::new(p.dim());
        let mut x = rhs.clone();
        let mut y = rhs.clone();
        let row_major = a.to_dense_row_major();
        let mut results = Vec::with_capacity(32);
        let n = allocations_in(|| {
            for it in 0..4 {
                // Both the SIMD (where available) and the portable kernels.
                sparse.force_portable_kernels(it % 2 == 1);
                results.push(sparse.factor(&a).is_ok());
                sparse.solve_in_place(&mut x);
                sparse.solve_in_place(&mut x);
                results.push(LinearSolver::factor(&mut dense, &a).is_ok());
                dense.solve_in_place(&mut y);
                dense.solve_in_place(&mut y);
                results.push(dense.factor_dense(&row_major).is_ok());
                dense.solve_in_place(&mut y);
            }
        });
        assert_eq!(
            n, 0,
            "block size {block_size}: {n} allocations in factor/solve"
        );
        assert!(results.iter().all(|&ok| ok));
        // The error path does not allocate either.
        let mut singular = a.clone();
        singular.fill_zero();
        let n = allocations_in(|| {
            results.push(sparse.factor(&singular).is_err());
            results.push(dense.factor_block(&singular).is_err());
        });
        assert_eq!(
            n, 0,
            "block size {block_size}: {n} allocations on the error path"
        );
        assert!(results.iter().all(|&ok| ok));
    }
}
