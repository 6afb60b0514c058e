//! Block-sparse LU against dense LU (faer) and against manufactured solutions, on random
//! matrices over many coupling topologies (document 000, section 3, eqs. 10-17).

use sprung_test_support::SplitMix;
use std::sync::Arc;

use sprung_solve::block::{BlockMatrix, BlockPattern};
use sprung_solve::block_lu::{BlockSparseLu, LinearSolver, OrderKind};
use sprung_solve::dense::{DenseLu, SingularMatrix};

/// A named coupling graph.
struct Topology {
    name: String,
    n: usize,
    edges: Vec<(usize, usize)>,
}

fn chain(n: usize) -> Topology {
    Topology {
        name: format!("chain{n}"),
        n,
        edges: (1..n).map(|i| (i - 1, i)).collect(),
    }
}

fn star(n: usize, hub: usize) -> Topology {
    Topology {
        name: format!("star{n}"),
        n,
        edges: (0..n).filter(|&i| i != hub).map(|i| (hub, i)).collect(),
    }
}

fn random_tree(n: usize, rng: &mut SplitMix) -> Topology {
    Topology {
        name: format!("tree{n}"),
        n,
        edges: (1..n).map(|i| (rng.below(i), i)).collect(),
    }
}

fn random_graph(n: usize, extra: usize, rng: &mut SplitMix) -> Topology {
    let mut t = random_tree(n, rng);
    for _ in 0..extra {
        let (i, j) = (rng.below(n), rng.below(n));
        if i != j {
            t.edges.push((i, j));
        }
    }
    t.name = format!("graph{n}+{extra}");
    t
}

fn complete(n: usize) -> Topology {
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            edges.push((i, j));
        }
    }
    Topology {
        name: format!("complete{n}"),
        n,
        edges,
    }
}

/// Two 11-body halves of a double-wishbone axle with closed loops, joined by a two-part
/// stabiliser (24 bodies), resembling document 000, Bild 1 and Bild 3.
fn double_wishbone() -> Topology {
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
    Topology {
        name: "double_wishbone24".into(),
        n: 24,
        edges,
    }
}

/// Two disconnected chains and an isolated body.
fn disconnected() -> Topology {
    Topology {
        name: "disconnected".into(),
        n: 9,
        edges: vec![(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (6, 4)],
    }
}

/// A single loop (cycle), as formed by the links of a multilink suspension.
fn ring(n: usize) -> Topology {
    let mut edges: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
    edges.push((n - 1, 0));
    Topology {
        name: format!("ring{n}"),
        n,
        edges,
    }
}

fn topologies(rng: &mut SplitMix) -> Vec<Topology> {
    vec![
        Topology {
            name: "single".into(),
            n: 1,
            edges: vec![],
        },
        chain(2),
        chain(9),
        star(8, 3),
        random_tree(15, rng),
        random_tree(27, rng),
        ring(7),
        random_graph(12, 6, rng),
        random_graph(20, 15, rng),
        complete(5),
        disconnected(),
        double_wishbone(),
    ]
}

/// Random matrix with a strictly block-diagonally dominant structure (non-symmetric values).
fn diagonally_dominant(p: &Arc<BlockPattern>, rng: &mut SplitMix) -> BlockMatrix {
    let mut a = BlockMatrix::zeros(p.clone());
    for v in a.values_mut() {
        *v = rng.sym();
    }
    let b = p.block_size();
    let mut row_sums = vec![0.0; p.dim()];
    for i in 0..p.n_blocks() {
        for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
            for r in 0..b {
                row_sums[i * b + r] += a.block(s)[r * b..(r + 1) * b]
                    .iter()
                    .map(|v| v.abs())
                    .sum::<f64>();
            }
        }
    }
    for i in 0..p.n_blocks() {
        let s = p.slot(i, i).unwrap();
        for r in 0..b {
            let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            a.block_mut(s)[r * b + r] = sign * (row_sums[i * b + r] + 0.5);
        }
    }
    a
}

/// Random symmetric positive definite `b × b` matrix with eigenvalue spread `cond`.
fn spd(b: usize, scale: f64, cond: f64, rng: &mut SplitMix) -> Vec<f64> {
    let g: Vec<f64> = (0..b * b).map(|_| rng.sym()).collect();
    let mut s = vec![0.0; b * b];
    for r in 0..b {
        for c in 0..b {
            s[r * b + c] = (0..b).map(|t| g[r * b + t] * g[c * b + t]).sum::<f64>() / b as f64;
        }
        s[r * b + r] += 1.0 / cond;
    }
    s.iter().map(|v| v * scale).collect()
}

/// "Mechanical-like" matrix `I + hγ M⁻¹ C + (hγ)² M⁻¹ K` (document 000, eq. 11 with
/// `J_v = -M⁻¹ C`, `J_r K = -M⁻¹ K`): block-diagonal SPD mass, and damping/stiffness assembled
/// from random SPD coupling blocks per edge, with a weak grounding of every body.
fn mechanical(topo: &Topology, p: &Arc<BlockPattern>, rng: &mut SplitMix) -> BlockMatrix {
    mechanical_with(topo, p, rng, STIFF)
}

/// Parameter ranges (log-uniform) of the mechanical test matrices.
#[derive(Clone, Copy)]
struct Ranges {
    stiffness: (f64, f64),
    damping: (f64, f64),
    mass: (f64, f64),
}

/// Bushing-like stiffness and damping with masses from 50 g to 50 kg.
const STIFF: Ranges = Ranges {
    stiffness: (1e4, 1e7),
    damping: (1e1, 1e4),
    mass: (0.05, 50.0),
};

/// Much stiffer couplings and a wider mass range: `(hγ)² k / m` up to about 1e5.
const VERY_STIFF: Ranges = Ranges {
    stiffness: (1e6, 1e10),
    damping: (1e3, 1e6),
    mass: (0.01, 100.0),
};

fn mechanical_with(
    topo: &Topology,
    p: &Arc<BlockPattern>,
    rng: &mut SplitMix,
    ranges: Ranges,
) -> BlockMatrix {
    let b = p.block_size();
    let h_gamma = 1e-3 * (1.0 - std::f64::consts::FRAC_1_SQRT_2);
    let mut stiff = BlockMatrix::zeros(p.clone());
    let mut damp = BlockMatrix::zeros(p.clone());
    let add = |m: &mut BlockMatrix, i: usize, j: usize, blk: &[f64], sign: f64| {
        let s = p.slot(i, j).unwrap();
        for (o, v) in m.block_mut(s).iter_mut().zip(blk) {
            *o += sign * v;
        }
    };
    for &(i, j) in &topo.edges {
        let k = spd(
            b,
            rng.log_uniform(ranges.stiffness.0, ranges.stiffness.1),
            1e3,
            rng,
        );
        let c = spd(
            b,
            rng.log_uniform(ranges.damping.0, ranges.damping.1),
            1e3,
            rng,
        );
        for (m, blk) in [(&mut stiff, &k), (&mut damp, &c)] {
            add(m, i, i, blk, 1.0);
            add(m, j, j, blk, 1.0);
            add(m, i, j, blk, -1.0);
            add(m, j, i, blk, -1.0);
        }
    }
    for i in 0..topo.n {
        let k = spd(b, rng.log_uniform(1e2, 1e5), 10.0, rng);
        add(&mut stiff, i, i, &k, 1.0);
    }
    // Row-scale by M⁻¹ with a diagonal mass matrix (masses and inertias per body).
    let mut a = BlockMatrix::zeros(p.clone());
    for i in 0..topo.n {
        let inv_mass: Vec<f64> = (0..b)
            .map(|_| 1.0 / rng.log_uniform(ranges.mass.0, ranges.mass.1))
            .collect();
        for s in p.row_ptr()[i]..p.row_ptr()[i + 1] {
            let (kb, cb) = (stiff.block(s).to_vec(), damp.block(s).to_vec());
            let out = a.block_mut(s);
            for (r, &im) in inv_mass.iter().enumerate() {
                for c in 0..b {
                    let t = r * b + c;
                    out[t] = im * (h_gamma * cb[t] + h_gamma * h_gamma * kb[t]);
                }
            }
        }
    }
    a.add_identity(1.0);
    a
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Relative residual `‖A x - b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)`.
fn relative_residual(a: &BlockMatrix, x: &[f64], b: &[f64]) -> f64 {
    let mut r = b.to_vec();
    a.gemv(1.0, x, -1.0, &mut r);
    let d = a.to_dense_row_major();
    let n = b.len();
    let a_norm = (0..n)
        .map(|i| d[i * n..(i + 1) * n].iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    inf_norm(&r) / (a_norm * inf_norm(x) + inf_norm(b))
}

/// Factors `a` with both solvers, solves for a manufactured solution twice (reusing the
/// factorisation) and checks agreement, residual and error against the manufactured solution.
fn check(
    label: &str,
    a: &BlockMatrix,
    sparse: &mut BlockSparseLu,
    dense: &mut DenseLu,
    rng: &mut SplitMix,
    truth_tol: f64,
) {
    sparse
        .factor(a)
        .unwrap_or_else(|e| panic!("{label}: sparse factor failed: {e}"));
    dense
        .factor_block(a)
        .unwrap_or_else(|e| panic!("{label}: dense factor failed: {e}"));
    let n = a.pattern().dim();
    for rep in 0..2 {
        let x_true: Vec<f64> = (0..n).map(|_| rng.sym()).collect();
        let mut rhs = vec![0.0; n];
        a.gemv(1.0, &x_true, 0.0, &mut rhs);
        let mut xs = rhs.clone();
        let mut xd = rhs.clone();
        sparse.solve_in_place(&mut xs);
        dense.solve_in_place(&mut xd);
        let diff: Vec<f64> = xs.iter().zip(&xd).map(|(u, v)| u - v).collect();
        let rel = inf_norm(&diff) / inf_norm(&xd);
        assert!(
            rel < 1e-10,
            "{label} solve {rep}: sparse vs dense relative difference {rel:e}"
        );
        let res = relative_residual(a, &xs, &rhs);
        assert!(
            res < 1e-14,
            "{label} solve {rep}: relative residual {res:e}"
        );
        let err: Vec<f64> = xs.iter().zip(&x_true).map(|(u, v)| u - v).collect();
        let rel_err = inf_norm(&err) / inf_norm(&x_true);
        assert!(
            rel_err < truth_tol,
            "{label} solve {rep}: error vs manufactured solution {rel_err:e}"
        );
    }
}

#[test]
fn agrees_with_dense_on_diagonally_dominant_matrices() {
    let mut rng = SplitMix(0x5eed_0001);
    for block_size in [6, 3, 1, 4] {
        for topo in topologies(&mut rng) {
            let p = Arc::new(BlockPattern::from_couplings(
                topo.n,
                block_size,
                &topo.edges,
            ));
            let mut sparse = BlockSparseLu::new(&p);
            let mut dense = DenseLu::new(p.dim());
            // Several numeric factorisations with one symbolic analysis, alternating between the
            // automatically chosen kernels and the portable ones.
            for trial in 0..4 {
                sparse.force_portable_kernels(trial % 2 == 1);
                let a = diagonally_dominant(&p, &mut rng);
                check(
                    &format!("dd {} b={block_size} #{trial}", topo.name),
                    &a,
                    &mut sparse,
                    &mut dense,
                    &mut rng,
                    1e-12,
                );
            }
        }
    }
}

#[test]
fn agrees_with_dense_on_mechanical_matrices() {
    let mut rng = SplitMix(0x5eed_0002);
    for block_size in [6, 3, 2] {
        for topo in topologies(&mut rng) {
            let p = Arc::new(BlockPattern::from_couplings(
                topo.n,
                block_size,
                &topo.edges,
            ));
            let mut sparse = BlockSparseLu::new(&p);
            let mut dense = DenseLu::new(p.dim());
            for trial in 0..4 {
                sparse.force_portable_kernels(trial % 2 == 1);
                let a = mechanical(&topo, &p, &mut rng);
                check(
                    &format!("mech {} b={block_size} #{trial}", topo.name),
                    &a,
                    &mut sparse,
                    &mut dense,
                    &mut rng,
                    1e-9,
                );
            }
        }
    }
}

#[test]
fn agrees_with_dense_on_very_stiff_mechanical_matrices() {
    let mut rng = SplitMix(0x5eed_0004);
    for topo in topologies(&mut rng) {
        let p = Arc::new(BlockPattern::from_couplings(topo.n, 6, &topo.edges));
        let mut sparse = BlockSparseLu::new(&p);
        let mut dense = DenseLu::new(p.dim());
        for trial in 0..2 {
            sparse.force_portable_kernels(trial % 2 == 1);
            let a = mechanical_with(&topo, &p, &mut rng, VERY_STIFF);
            check(
                &format!("very stiff {} #{trial}", topo.name),
                &a,
                &mut sparse,
                &mut dense,
                &mut rng,
                1e-8,
            );
        }
    }
}

#[test]
fn every_order_gives_the_same_solution() {
    // Natural order, reversed order, the chosen fill-reducing order and document 000's hand
    // partition (eq. 12: eliminate 1 and 5, then 2 and 4, then solve for 3) all solve the system.
    let mut rng = SplitMix(0x5eed_0003);
    let topo = chain(5);
    let p = Arc::new(BlockPattern::from_couplings(5, 6, &topo.edges));
    let a = mechanical(&topo, &p, &mut rng);
    let mut dense = DenseLu::new(p.dim());
    for order in [
        vec![0, 4, 1, 3, 2],
        vec![0, 1, 2, 3, 4],
        vec![4, 3, 2, 1, 0],
        vec![2, 0, 4, 1, 3],
    ] {
        let mut sparse = BlockSparseLu::with_order(&p, &order).unwrap();
        assert_eq!(sparse.order_kind(), OrderKind::User);
        check(
            &format!("order {order:?}"),
            &a,
            &mut sparse,
            &mut dense,
            &mut rng,
            1e-9,
        );
    }
    let topo = double_wishbone();
    let p = Arc::new(BlockPattern::from_couplings(topo.n, 6, &topo.edges));
    let a = mechanical(&topo, &p, &mut rng);
    let mut dense = DenseLu::new(p.dim());
    let chosen = BlockSparseLu::new(&p);
    let mut natural = BlockSparseLu::with_order(&p, &(0..24).collect::<Vec<_>>()).unwrap();
    assert!(chosen.flops() <= natural.flops());
    check(
        "double wishbone natural order",
        &a,
        &mut natural,
        &mut dense,
        &mut rng,
        1e-9,
    );
}

#[test]
fn fill_reducing_order_beats_dense() {
    let topo = double_wishbone();
    let p = BlockPattern::from_couplings(topo.n, 6, &topo.edges);
    let lu = BlockSparseLu::new(&p);
    let dense = DenseLu::new(p.dim());
    // The block-sparse factorisation needs far fewer operations than dense LU of 144 × 144.
    assert!(
        lu.flops() * 10 < dense.flops(),
        "{} vs {}",
        lu.flops(),
        dense.flops()
    );
    assert!(lu.solve_flops() < dense.solve_flops());
    // A disconnected pattern never creates fill between its components.
    let topo = disconnected();
    let p = BlockPattern::from_couplings(topo.n, 6, &topo.edges);
    let lu = BlockSparseLu::new(&p);
    // The only fill: the triangle (4, 5, 6) is already complete, chains fill nothing.
    assert_eq!(lu.fill_blocks(), 0);
}

/// Sets block (i, j) of `a` to `v` times the identity.
fn set_identity_block(a: &mut BlockMatrix, i: usize, j: usize, v: f64) {
    let p = a.pattern().clone();
    let b = p.block_size();
    let blk = a.block_mut(p.slot(i, j).unwrap());
    blk.fill(0.0);
    for r in 0..b {
        blk[r * b + r] = v;
    }
}

#[test]
fn singular_matrices_are_reported_with_their_block() {
    // [[I, I], [I, I]] in a chain 0-1, plus a regular third body: the Schur complement of the
    // second eliminated block of {0, 1} is exactly zero.
    let p = Arc::new(BlockPattern::from_couplings(3, 6, &[(0, 1), (1, 2)]));
    let mut a = BlockMatrix::zeros(p.clone());
    for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2)] {
        set_identity_block(&mut a, i, j, 1.0);
    }
    let mut sparse = BlockSparseLu::new(&p);
    let err = sparse.factor(&a).unwrap_err();
    let SingularMatrix::ZeroPivot {
        block: Some(blk),
        row,
        ..
    } = err
    else {
        panic!("unexpected error {err:?}")
    };
    assert!(blk == 0 || blk == 1, "{err}");
    assert_eq!(row / 6, blk);
    assert!(err.to_string().contains(&format!("block {blk}")), "{err}");
    let mut dense = DenseLu::new(p.dim());
    assert!(matches!(
        dense.factor_block(&a),
        Err(SingularMatrix::ZeroPivot { block: None, .. })
    ));

    // A body whose diagonal block is zero and that is not coupled at all.
    let mut a = BlockMatrix::zeros(p.clone());
    set_identity_block(&mut a, 0, 0, 2.0);
    set_identity_block(&mut a, 1, 1, 0.0);
    set_identity_block(&mut a, 2, 2, 3.0);
    // Coupling 1-2 present in the pattern but zero: body 1 stays singular.
    let err = sparse.factor(&a).unwrap_err();
    assert_eq!(err.block(), Some(1), "{err}");
    assert!(dense.factor_block(&a).is_err());

    // Non-finite input is located exactly.
    let mut rng = SplitMix(7);
    let mut a = diagonally_dominant(&p, &mut rng);
    let s = p.slot(2, 1).unwrap();
    a.block_mut(s)[3 * 6 + 4] = f64::NAN;
    let err = sparse.factor(&a).unwrap_err();
    assert!(
        matches!(err, SingularMatrix::NonFiniteEntry { row: 15, col: 10, value } if value.is_nan()),
        "{err}"
    );
    assert!(matches!(
        dense.factor_block(&a),
        Err(SingularMatrix::NonFiniteEntry {
            row: 15,
            col: 10,
            ..
        })
    ));
    a.block_mut(s)[3 * 6 + 4] = f64::INFINITY;
    assert!(matches!(
        sparse.factor(&a),
        Err(SingularMatrix::NonFiniteEntry {
            row: 15,
            col: 10,
            ..
        })
    ));

    // Nearly singular: a pivot at the level of rounding noise is rejected, a small but
    // meaningful one is accepted.
    let mut a = diagonally_dominant(&p, &mut rng);
    a.fill_zero();
    set_identity_block(&mut a, 0, 0, 1.0);
    set_identity_block(&mut a, 1, 1, 1.0);
    set_identity_block(&mut a, 2, 2, 1e-16);
    assert_eq!(sparse.factor(&a).unwrap_err().block(), Some(2));
    set_identity_block(&mut a, 2, 2, 1e-8);
    sparse.factor(&a).unwrap();

    // After a failure the solver recovers with a regular matrix.
    let a = diagonally_dominant(&p, &mut rng);
    let mut dense = DenseLu::new(p.dim());
    check(
        "after failure",
        &a,
        &mut sparse,
        &mut dense,
        &mut rng,
        1e-12,
    );
}

#[test]
#[should_panic(expected = "without a successful factorisation")]
fn solve_without_factorisation_panics() {
    let p = BlockPattern::from_couplings(2, 6, &[(0, 1)]);
    let mut lu = BlockSparseLu::new(&p);
    lu.solve_in_place(&mut [0.0; 12]);
}

#[test]
fn trait_objects_switch_between_solvers() {
    let mut rng = SplitMix(11);
    let topo = random_graph(10, 5, &mut rng);
    let p = Arc::new(BlockPattern::from_couplings(topo.n, 6, &topo.edges));
    let a = mechanical(&topo, &p, &mut rng);
    let mut solvers: Vec<Box<dyn LinearSolver>> = vec![
        Box::new(BlockSparseLu::new(&p)),
        Box::new(DenseLu::new(p.dim())),
    ];
    let rhs: Vec<f64> = (0..p.dim()).map(|_| rng.sym()).collect();
    let mut sols = Vec::new();
    for s in &mut solvers {
        s.factor(&a).unwrap();
        let mut x = rhs.clone();
        s.solve_in_place(&mut x);
        sols.push(x);
    }
    let diff: Vec<f64> = sols[0].iter().zip(&sols[1]).map(|(u, v)| u - v).collect();
    assert!(inf_norm(&diff) <= 1e-10 * inf_norm(&sols[1]));
}

#[test]
fn solvers_can_move_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BlockSparseLu>();
    assert_send_sync::<DenseLu>();
}

/// Diagonal blocks whose rows are cyclically shifted (dominant entries off the diagonal, small
/// ones on it) force row exchanges inside every pivot block; both kernel paths must pivot
/// identically and agree with dense LU and with each other.
#[test]
fn pivoting_inside_blocks_on_both_kernel_paths() {
    let mut rng = SplitMix(0x5eed_0007);
    for topo in [double_wishbone(), ring(7), random_graph(12, 6, &mut rng)] {
        let p = Arc::new(BlockPattern::from_couplings(topo.n, 6, &topo.edges));
        let base = diagonally_dominant(&p, &mut rng);
        let mut a = base.clone();
        for i in 0..p.n_blocks() {
            let s = p.slot(i, i).unwrap();
            let shift = 1 + i % 5;
            let src = base.block(s).to_vec();
            let blk = a.block_mut(s);
            for r in 0..6 {
                let from = (r + shift) % 6;
                blk[r * 6..r * 6 + 6].copy_from_slice(&src[from * 6..from * 6 + 6]);
            }
        }
        let mut dense = DenseLu::new(p.dim());
        let mut solutions = Vec::new();
        for portable in [false, true] {
            let mut sparse = BlockSparseLu::new(&p);
            sparse.force_portable_kernels(portable);
            check(
                &format!("pivoting {} portable={portable}", topo.name),
                &a,
                &mut sparse,
                &mut dense,
                &mut rng,
                1e-12,
            );
            let mut x: Vec<f64> = (0..p.dim()).map(|i| (i as f64 * 0.3).sin()).collect();
            sparse.solve_in_place(&mut x);
            solutions.push(x);
        }
        let diff: Vec<f64> = solutions[0]
            .iter()
            .zip(&solutions[1])
            .map(|(u, v)| u - v)
            .collect();
        let rel = inf_norm(&diff) / inf_norm(&solutions[1]);
        assert!(
            rel < 1e-12,
            "{}: SIMD vs portable kernels {rel:e}",
            topo.name
        );
    }
}
