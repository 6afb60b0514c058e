//! Dense (faer) vs block-sparse LU on suspension-like block patterns (document 000, section 3,
//! Tabelle 2: "with/without exploiting the sparsity structure of (11)").
//!
//! Patterns: a 24-body double-wishbone axle (two 11-body halves with closed loops, joined by a
//! two-part stabiliser) and a 27-body multilink axle (two 12-body halves, a subframe coupled to
//! every link of both halves, and a two-part stabiliser). Each LSRT2 step needs one
//! factorisation and two solves (`γ11 = γ22`), measured here as `step`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sprung_solve::block::{BlockMatrix, BlockPattern};
use sprung_solve::block_lu::BlockSparseLu;
use sprung_solve::dense::DenseLu;

fn double_wishbone() -> (usize, Vec<(usize, usize)>) {
    let mut edges = Vec::new();
    for h in 0..2 {
        let o = 11 * h;
        // 0 wheel, 1 carrier, 2 upper arm, 3 lower arm, 4 track rod, 5 damper rod, 6 damper tube,
        // 7 spring, 8 stabiliser link, 9 rack half, 10 top mount.
        for (a, b) in [
            (0, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (4, 9),
            (3, 5),
            (5, 6),
            (6, 7),
            (7, 3),
            (7, 10),
            (6, 10),
            (6, 8),
        ] {
            edges.push((o + a, o + b));
        }
    }
    edges.extend([(8, 22), (22, 23), (23, 19), (9, 20)]);
    (24, edges)
}

fn multilink() -> (usize, Vec<(usize, usize)>) {
    let mut edges = Vec::new();
    let subframe = 24;
    for h in 0..2 {
        let o = 12 * h;
        // 0 wheel, 1 carrier, 2-6 links, 7 damper rod, 8 damper tube, 9 spring, 10 stabiliser
        // link, 11 top mount.
        for (a, b) in [
            (0, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (1, 5),
            (1, 6),
            (4, 7),
            (7, 8),
            (8, 11),
            (9, 4),
            (9, 11),
            (8, 10),
        ] {
            edges.push((o + a, o + b));
        }
        for link in 2..7 {
            edges.push((o + link, subframe));
        }
        edges.push((o + 9, subframe));
    }
    edges.extend([(10, 25), (25, 26), (26, 22), (25, subframe), (26, subframe)]);
    (27, edges)
}

/// Deterministic, block-diagonally dominant values on the pattern.
fn matrix(p: &Arc<BlockPattern>) -> BlockMatrix {
    let mut a = BlockMatrix::zeros(p.clone());
    let mut state = 0x1234_5678_u64;
    for v in a.values_mut() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *v = ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.2;
    }
    a.add_identity(1.0 + p.row(0).len() as f64);
    a
}

fn bench_lu(c: &mut Criterion) {
    for (name, (n, edges)) in [
        ("double_wishbone24", double_wishbone()),
        ("multilink27", multilink()),
    ] {
        let p = Arc::new(BlockPattern::from_couplings(n, 6, &edges));
        let a = matrix(&p);
        let rhs: Vec<f64> = (0..p.dim()).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut sparse = BlockSparseLu::new(&p);
        let mut dense = DenseLu::new(p.dim());
        eprintln!(
            "{name}: dim {}, order {:?}, fill blocks {}, factor flops sparse {} / dense {}, solve flops sparse {} / dense {}",
            p.dim(),
            sparse.order_kind(),
            sparse.fill_blocks(),
            sparse.flops(),
            dense.flops(),
            sparse.solve_flops(),
            dense.solve_flops()
        );
        let mut group = c.benchmark_group(format!("lu/{name}"));
        group.bench_function(BenchmarkId::new("factor", "block_sparse"), |bch| {
            bch.iter(|| sparse.factor(black_box(&a)).unwrap())
        });
        group.bench_function(BenchmarkId::new("factor", "dense"), |bch| {
            bch.iter(|| dense.factor_block(black_box(&a)).unwrap())
        });
        sparse.factor(&a).unwrap();
        dense.factor_block(&a).unwrap();
        let mut x = rhs.clone();
        group.bench_function(BenchmarkId::new("solve", "block_sparse"), |bch| {
            bch.iter(|| {
                x.copy_from_slice(&rhs);
                sparse.solve_in_place(black_box(&mut x));
            })
        });
        group.bench_function(BenchmarkId::new("solve", "dense"), |bch| {
            bch.iter(|| {
                x.copy_from_slice(&rhs);
                dense.solve_in_place(black_box(&mut x));
            })
        });
        group.bench_function(BenchmarkId::new("step", "block_sparse"), |bch| {
            bch.iter(|| {
                sparse.factor(black_box(&a)).unwrap();
                x.copy_from_slice(&rhs);
                sparse.solve_in_place(&mut x);
                sparse.solve_in_place(black_box(&mut x));
            })
        });
        group.bench_function(BenchmarkId::new("step", "dense"), |bch| {
            bch.iter(|| {
                dense.factor_block(black_box(&a)).unwrap();
                x.copy_from_slice(&rhs);
                dense.solve_in_place(&mut x);
                dense.solve_in_place(black_box(&mut x));
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench_lu);
criterion_main!(benches);
