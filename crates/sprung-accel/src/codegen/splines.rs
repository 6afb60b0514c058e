//! `tree{t}_splines`: tree t's spline groups evaluated into their slots of the flat buffer
//! ([`sprung_mbs::tree_kernel::FlatLayout::gev`]), the in-range path of
//! [`sprung_mbs::joints::SplineGroup::eval_into`] (`TableSpline::basis_into` and `eval_slots`
//! in crates/sprung-model/src/kin_table.rs; the tables of docs/joints.md, "Tabulated joints";
//! document 004's kinematic tables, ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 2.2) with
//! the table's grid and Hermite node data as `static` arrays of exact literals (so the plugin's
//! key covers the data):
//!
//! - a group is evaluated only when each of its coordinates lies inside its grid
//!   [g₀, g_{n−1}]; otherwise its bit of the returned mask sends it to the host, whose generic
//!   code extrapolates linearly and records the excursion ([`sprung_model::TableSpline::excursion`]);
//! - the cell is the generic one, the last i ≤ n − 2 with g[i] ≤ x (on a uniform grid guessed
//!   from x and corrected by comparisons, else by bisection), the Hermite weights the generic
//!   formulas;
//! - the contraction of every channel in `TableSpline::contract`'s order: along the second axis
//!   first (per first-axis row and second-axis order, the sum over the four second-axis rows),
//!   then along the first (sums from 0); the slots of `eval_slots` (the leading
//!   `SplineGroup::second` channels with second derivatives, the others value and first
//!   derivatives; a 1D table's missing second axis's slots written 0).
//!
//! The channels are independent sums, so the generated code works on several at once: the node
//! data is re-laid node by node with all of the group's channels of a node row contiguous (18
//! for a carrier with two followers), and the channels go through the contraction in chunks of
//! 8 (then 4, 2) lanes, across the group's bodies; each chunk in vectors of the target's width
//! (`LANES`: 8 with AVX-512, 4 with AVX, 2 on the baseline x86-64), one vector after the other,
//! so that LLVM emits one vector multiply and one vector add per multiply-add of a vector's
//! channels (IEEE products and sums, no FMA). The second derivatives are formed for a chunk's
//! whole vector and stored for its leading channels (the carrier's). Per first-axis row each
//! node row is read once for every second-axis order, and the row's terms of every slot's sum
//! follow at once (each sum still in its order).
//!
//! Every channel's operations are the generic code's in the same order — but one: the sums
//! along the second axis start from their first product where the generic ones add it to 0.
//! They can differ only in the sign of a zero result (0 + x is x but for x = −0); the sums along
//! the first axis start from +0 as the generic ones and add w g: a partial sum that is never −0
//! plus a zero product of either sign is itself, so the slots are bit-identical.

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::FlatLayout;
use sprung_model::SPLINE_SLOTS;
use sprung_model::kin_table::POSE_COMPONENTS;

use super::lit;

/// The helpers every group's function calls (written once per source).
pub const HELPERS: &str = r#"
// ---- Spline groups: helpers (TableSpline::basis and TableSpline::contract, in range) ----

/// The cell of `x` (inside the grid) by bisection: the last i ≤ N − 2 with g[i] ≤ x.
#[inline(always)]
fn cell_bisect<const N: usize>(g: &[f64; N], x: f64) -> usize {
    let (mut lo, mut hi) = (0, N - 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if g[mid] <= x { lo = mid } else { hi = mid }
    }
    lo.min(N - 2)
}

/// The cell of `x` (inside the grid) on a uniform grid of spacing 1 / inv_h: the guess from
/// the spacing, corrected by comparisons with the grid (the last i ≤ N − 2 with g[i] ≤ x).
#[inline(always)]
fn cell_uniform<const N: usize>(g: &[f64; N], x: f64, inv_h: f64) -> usize {
    let mut i = (((x - g[0]) * inv_h) as usize).min(N - 2);
    while i > 0 && g[i] > x {
        i -= 1;
    }
    while i < N - 2 && g[i + 1] <= x {
        i += 1;
    }
    i.min(N - 2)
}

/// The lanes of one vector of the target: 8 with AVX-512, 4 with AVX, else 2 (SSE2). Lanes
/// are independent channels: the width changes no channel's order of operations.
const LANES: usize = if cfg!(target_feature = "avx512f") {
    8
} else if cfg!(target_feature = "avx") {
    4
} else {
    2
};

/// Copies of a weight per Pair: two (one SSE2 register, broadcast from there to AVX vectors),
/// one with AVX-512 (its multiplications broadcast a scalar from memory).
const WN: usize = if cfg!(target_feature = "avx512f") { 1 } else { 2 };

/// A weight, WN times (aligned, so that an SSE2 multiplication reads it from memory).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Pair([f64; WN]);

/// acc[l] += w f[l] per lane: TableSpline::contract's multiply-add (an IEEE product, then an
/// IEEE sum; Rust contracts no FMA).
#[inline(always)]
fn madd<const W: usize>(acc: &mut [f64; W], w: &Pair, f: &[f64; W]) {
    for l in 0..W {
        acc[l] += w.0[l % WN] * f[l];
    }
}

/// w f per lane.
#[inline(always)]
fn mul<const W: usize>(w: &Pair, f: &[f64; W]) -> [f64; W] {
    std::array::from_fn(|l| w.0[l % WN] * f[l])
}

/// W lanes of `x` from `o`.
#[inline(always)]
fn lanes<const W: usize, const R: usize>(x: &[f64; R], o: usize) -> &[f64; W] {
    x[o..o + W].try_into().expect("W lanes")
}

/// The cubic Hermite weights of cell i at x per derivative order (0, 1, and 2 with `second`)
/// and cell row r = 2 a + d (node i + a, derivative d), each twice: TableSpline::basis's
/// formulas.
#[inline(always)]
fn hermite<const N: usize>(g: &[f64; N], i: usize, x: f64, second: bool) -> [[Pair; 4]; 3] {
    let h = g[i + 1] - g[i];
    let t = (x - g[i]) / h;
    let (t2, t3) = (t * t, t * t * t);
    let b0 = [
        2.0 * t3 - 3.0 * t2 + 1.0,
        -2.0 * t3 + 3.0 * t2,
        (t3 - 2.0 * t2 + t) * h,
        (t3 - t2) * h,
    ];
    let b1 = [
        (6.0 * t2 - 6.0 * t) / h,
        (-6.0 * t2 + 6.0 * t) / h,
        3.0 * t2 - 4.0 * t + 1.0,
        3.0 * t2 - 2.0 * t,
    ];
    let b2 = if second {
        [
            (12.0 * t - 6.0) / (h * h),
            (-12.0 * t + 6.0) / (h * h),
            (6.0 * t - 4.0) / h,
            (6.0 * t - 2.0) / h,
        ]
    } else {
        [0.0; 4]
    };
    // Row r = 2 a + d: Hermite slot a (value) or 2 + a (slope).
    let rows = |b: [f64; 4]| [Pair([b[0]; WN]), Pair([b[2]; WN]), Pair([b[1]; WN]), Pair([b[3]; WN])];
    [rows(b0), rows(b1), rows(b2)]
}

/// Node data aligned to a cache line (whole vectors per row where the channel count allows).
#[repr(C, align(64))]
struct Aligned<const N: usize>([f64; N]);

/// Along the second axis for the first-axis row r = 2 a + dx of a 2D cell (`lanes_2d`), W
/// lanes from channel c, for the second-axis orders 0, 1 (and 2 with `s2`) at once:
/// g[o2] = Σ_{k = 2 b + dy} w2[o2][k] f(i1 + a, i2 + b)[dx + 2 dy] in k's order (each node row
/// loaded once for every order). The sums start from their first product, not from 0 + it as
/// TableSpline::contract's: they can differ from its g only by the sign of a zero result
/// (0 + x is x but for x = −0), which leaves the slots unchanged (`lanes_2d`).
#[inline(always)]
fn along2<const W: usize, const C: usize, const A: usize, const K: usize>(
    n: &[f64; K],
    w2: &[[Pair; 4]; 3],
    s2: bool,
    (a, dx): (usize, usize),
    c: usize,
) -> [[f64; W]; 3] {
    // Node (i1 + a, i2 + b) at a A + b R, its row d at d C.
    let row = |b: usize, d: usize| lanes::<W, K>(n, a * A + b * 4 * C + d * C + c);
    let mut g = [[0.0f64; W]; 3];
    let f = row(0, dx);
    for o2 in 0..if s2 { 3 } else { 2 } {
        g[o2] = mul(&w2[o2][0], f);
    }
    for (k, (b, d)) in [(1, (0, dx + 2)), (2, (1, dx)), (3, (1, dx + 2))] {
        let f = row(b, d);
        madd(&mut g[0], &w2[0][k], f);
        madd(&mut g[1], &w2[1][k], f);
        if s2 {
            madd(&mut g[2], &w2[2][k], f);
        }
    }
    g
}

/// W lanes (a target vector or less) from channel c of a 2D cell into out[slot C + c..]: the
/// cell's data n (C channels; node (i1 + a, i2 + b) at a A + b R, R = 4 C values: its rows f,
/// ∂₁f, ∂₂f, ∂₁∂₂f of the C channels), per first-axis row r = 2 a + dx the rows along the
/// second axis (`along2`), then their terms of the sums along the first — slots 0, 1, 2 and
/// for the leading e lanes (the channels with second derivatives) 3, 4, 5: TableSpline::contract's
/// sums in its order, these from 0 as its are (so a g that is −0 where the generic one is +0 adds
/// a zero product of either sign to a partial sum that is never −0: the same sum). With
/// 0 < e < W the other lanes' second derivatives are formed and not stored (one vector).
#[inline(always)]
fn lanes_2d<const W: usize, const C: usize, const A: usize, const K: usize, const L: usize>(
    n: &[f64; K],
    w1: &[[Pair; 4]; 3],
    w2: &[[Pair; 4]; 3],
    (c, e): (usize, usize),
    out: &mut [f64; L],
) {
    // Per first-axis row r = 2 a + dx: g[o2] along the second axis, then its term of each
    // slot's sum along the first (the sums over r in r's order, each from 0).
    let mut acc = [[0.0f64; W]; 6];
    if LANES <= 4 {
        // (As a loop: LLVM unrolls it for SSE2 and AVX vectors, row after row, with fewer
        // spills than from the rows written out.)
        for ax in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            row_2d::<W, C, A, K>(&mut acc, n, w1, w2, ax, (c, e));
        }
    } else {
        // (Written out: for AVX-512 vectors that loop is one LLVM keeps rolled.)
        row_2d::<W, C, A, K>(&mut acc, n, w1, w2, (0, 0), (c, e));
        row_2d::<W, C, A, K>(&mut acc, n, w1, w2, (0, 1), (c, e));
        row_2d::<W, C, A, K>(&mut acc, n, w1, w2, (1, 0), (c, e));
        row_2d::<W, C, A, K>(&mut acc, n, w1, w2, (1, 1), (c, e));
    }
    for (s, x) in acc.iter().enumerate() {
        let m = if s < 3 { W } else { e };
        out[s * C + c..s * C + c + m].copy_from_slice(&x[..m]);
    }
}

/// First-axis row r = 2 a + dx of a 2D cell (`lanes_2d`): its rows along the second axis
/// (`along2`), then their terms of each slot's sum along the first.
#[inline(always)]
fn row_2d<const W: usize, const C: usize, const A: usize, const K: usize>(
    acc: &mut [[f64; W]; 6],
    n: &[f64; K],
    w1: &[[Pair; 4]; 3],
    w2: &[[Pair; 4]; 3],
    (a, dx): (usize, usize),
    (c, e): (usize, usize),
) {
    let r = 2 * a + dx;
    let g = along2::<W, C, A, K>(n, w2, e > 0, (a, dx), c);
    madd(&mut acc[0], &w1[0][r], &g[0]); // slot 0 (f): ∂c1 order 0, ∂c2 order 0
    madd(&mut acc[1], &w1[1][r], &g[0]); // slot 1 (∂₁f): 1, 0
    madd(&mut acc[2], &w1[0][r], &g[1]); // slot 2 (∂₂f): 0, 1
    if e > 0 {
        madd(&mut acc[3], &w1[2][r], &g[0]); // slot 3 (∂₁²f): 2, 0
        madd(&mut acc[4], &w1[1][r], &g[1]); // slot 4 (∂₁∂₂f): 1, 1
        madd(&mut acc[5], &w1[0][r], &g[2]); // slot 5 (∂₂²f): 0, 2
    }
}

/// W ≤ 8 lanes from channel c of a 2D cell (`lanes_2d`; the leading e with second
/// derivatives), in vectors of the target (LANES): one after the other, written out (a loop
/// over them is what the vectorizer would take across vectors instead of lanes).
#[inline(always)]
fn chunk_2d<const W: usize, const C: usize, const A: usize, const K: usize, const L: usize>(
    n: &[f64; K],
    w1: &[[Pair; 4]; 3],
    w2: &[[Pair; 4]; 3],
    (c, e): (usize, usize),
    out: &mut [f64; L],
) {
    // The leading lanes with second derivatives of the part from lane o.
    let part = |o: usize, w: usize| (c + o, e.saturating_sub(o).min(w));
    if W <= LANES {
        lanes_2d::<W, C, A, K, L>(n, w1, w2, (c, e), out);
    } else if LANES == 4 {
        lanes_2d::<4, C, A, K, L>(n, w1, w2, part(0, 4), out);
        lanes_2d::<4, C, A, K, L>(n, w1, w2, part(4, 4), out);
    } else {
        lanes_2d::<2, C, A, K, L>(n, w1, w2, part(0, 2), out);
        lanes_2d::<2, C, A, K, L>(n, w1, w2, part(2, 2), out);
        if W == 8 {
            lanes_2d::<2, C, A, K, L>(n, w1, w2, part(4, 2), out);
            lanes_2d::<2, C, A, K, L>(n, w1, w2, part(6, 2), out);
        }
    }
}

/// W lanes (a target vector or less) from channel c of a 1D cell into out[slot C + c..]: the
/// cell's data n (C channels; node i1 + a at 2 a C: its rows f, ∂₁f of the C channels), slots
/// 0, 1 and for the leading e lanes 3, each the sum over the cell's rows r = 2 a + dx along the
/// first axis: TableSpline::contract's sums in its order, from 0.
#[inline(always)]
fn lanes_1d<const W: usize, const C: usize, const K: usize, const L: usize>(
    n: &[f64; K],
    w1: &[[Pair; 4]; 3],
    (c, e): (usize, usize),
    out: &mut [f64; L],
) {
    // Per row r = 2 a + dx of the cell: its term of each slot's sum (in r's order, from 0).
    let mut acc = [[0.0f64; W]; 3];
    for (a, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let (r, f) = (2 * a + dx, lanes::<W, K>(n, (2 * a + dx) * C + c));
        madd(&mut acc[0], &w1[0][r], f); // slot 0 (f)
        madd(&mut acc[1], &w1[1][r], f); // slot 1 (∂₁f)
        if e > 0 {
            madd(&mut acc[2], &w1[2][r], f); // slot 3 (∂₁²f)
        }
    }
    out[c..c + W].copy_from_slice(&acc[0]);
    out[C + c..C + c + W].copy_from_slice(&acc[1]);
    out[3 * C + c..3 * C + c + e].copy_from_slice(&acc[2][..e]);
}

/// W ≤ 8 lanes from channel c of a 1D cell (`lanes_1d`), in vectors of the target (LANES),
/// one after the other (as `chunk_2d`).
#[inline(always)]
fn chunk_1d<const W: usize, const C: usize, const K: usize, const L: usize>(
    n: &[f64; K],
    w1: &[[Pair; 4]; 3],
    (c, e): (usize, usize),
    out: &mut [f64; L],
) {
    let part = |o: usize, w: usize| (c + o, e.saturating_sub(o).min(w));
    if W <= LANES {
        lanes_1d::<W, C, K, L>(n, w1, (c, e), out);
    } else if LANES == 4 {
        lanes_1d::<4, C, K, L>(n, w1, part(0, 4), out);
        lanes_1d::<4, C, K, L>(n, w1, part(4, 4), out);
    } else {
        lanes_1d::<2, C, K, L>(n, w1, part(0, 2), out);
        lanes_1d::<2, C, K, L>(n, w1, part(2, 2), out);
        if W == 8 {
            lanes_1d::<2, C, K, L>(n, w1, part(4, 2), out);
            lanes_1d::<2, C, K, L>(n, w1, part(6, 2), out);
        }
    }
}
"#;

/// The channels c0..c1 (even) in chunks of 8 lanes, the rest in 4 and 2: (first channel,
/// width).
fn chunks(c0: usize, c1: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut c = c0;
    for width in [8, 4, 2] {
        while c + width <= c1 {
            out.push((c, width));
            c += width;
        }
    }
    out
}

/// The grid's evaluation of the cell: `cell_uniform` when the grid is uniform to 1 % of its
/// spacing (the guess is then off by at most one), else `cell_bisect`.
fn cell_call(grid_name: &str, g: &[f64], x: &str) -> String {
    let n = g.len();
    let h = (g[n - 1] - g[0]) / (n - 1) as f64;
    let uniform = g
        .iter()
        .enumerate()
        .all(|(i, &gi)| (gi - (g[0] + i as f64 * h)).abs() <= 0.01 * h);
    if uniform {
        format!("cell_uniform(&{grid_name}, {x}, {})", lit(1.0 / h))
    } else {
        format!("cell_bisect(&{grid_name}, {x})")
    }
}

/// Writes the statics and functions of tree `t`'s spline groups and `tree{t}_splines` into
/// `out`.
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) {
    let tree = &model.joints.trees[t];
    let l = FlatLayout::of(tree);
    let w = out;
    let body_name = |lb: usize| model.bodies[tree.bodies[lb]].name.replace('\n', " ");
    let mut calls = Vec::new();
    for (gi, grp) in tree.groups.iter().enumerate().take(64) {
        let (grid, dims, node, block) = grp.spline.raw();
        let nc = grp.spline.channels();
        let len = SPLINE_SLOTS * nc;
        let second = grp.second > 0;
        let pre = format!("T{t}G{gi}");
        let members: Vec<(usize, usize)> = tree
            .group_of
            .iter()
            .enumerate()
            .filter_map(|(lb, m)| m.and_then(|(g, ch)| (g == gi).then_some((ch, lb))))
            .collect();
        let member = |ch: usize| {
            members
                .iter()
                .find(|&&(c, _)| c == ch)
                .map_or_else(|| "?".to_string(), |&(_, lb)| body_name(lb))
        };
        let sources: Vec<String> = grp
            .sources
            .iter()
            .map(|&b| model.bodies[b].name.replace('\n', " "))
            .collect();
        let (n1, n2) = (grid[0].len(), grid[1].len());
        let _ = writeln!(
            w,
            "\n// ---- Tree {t}, spline group {gi}: {} ({}-D table, {} grid points; coordinates: the joint coordinate of {}) ----",
            (0..nc / POSE_COMPONENTS)
                .map(|k| format!("'{}'", member(POSE_COMPONENTS * k)))
                .collect::<Vec<_>>()
                .join(", "),
            dims,
            if dims == 2 {
                format!("{n1} × {n2}")
            } else {
                n1.to_string()
            },
            sources
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(" and ")
        );
        for (k, g) in grid.iter().enumerate().take(dims) {
            let _ = writeln!(
                w,
                "static {pre}_GRID{}: [f64; {}] = [{}];",
                k + 1,
                g.len(),
                g.iter().map(|&x| lit(x)).collect::<Vec<_>>().join(", ")
            );
        }
        // The node data re-laid node by node: per node its rows (f, ∂₁f, ∂₂f, ∂₁∂₂f; a 1D
        // table's f, ∂₁f alone) of all the group's channels, body by body (TableSpline's
        // blocks: node[(blk rows + 4 node + k) 6 + m]).
        let rows = 4 * n1 * n2;
        let kn = if dims == 2 { 4 } else { 2 };
        let rn = kn * nc;
        let _ = writeln!(
            w,
            "/// Hermite node data per grid node (first axis outer): its rows {} of the {nc} channels ({} values each).\n\
             static {pre}_NODE: Aligned<{}> = Aligned([",
            if dims == 2 {
                "f, ∂₁f, ∂₂f, ∂₁∂₂f"
            } else {
                "f, ∂₁f"
            },
            nc,
            n1 * n2 * rn
        );
        for nd in 0..n1 * n2 {
            for k in 0..kn {
                let row: Vec<String> = (0..nc)
                    .map(|ch| {
                        let (blk, m) = (ch / POSE_COMPONENTS, ch % POSE_COMPONENTS);
                        lit(node[(blk * rows + 4 * nd + k) * POSE_COMPONENTS + m])
                    })
                    .collect();
                let _ = writeln!(w, "    {},", row.join(", "));
            }
        }
        debug_assert_eq!(block, rows * POSE_COMPONENTS);
        let _ = writeln!(w, "]);");
        let args = if dims == 2 {
            "c1: f64, c2: f64"
        } else {
            "c1: f64"
        };
        let _ = writeln!(
            w,
            "/// Spline group {gi} of tree {t} at its coordinates into its {len} slots, if they lie \
             inside the grid (else false: the host extrapolates and records the excursion).\n\
             #[inline(always)]\nfn tree{t}_group{gi}({args}, out: &mut [f64; {len}]) -> bool {{"
        );
        let g1 = &grid[0];
        let mut inside = format!("{} <= c1 && c1 <= {}", lit(g1[0]), lit(g1[n1 - 1]));
        if dims == 2 {
            let g2 = &grid[1];
            let _ = write!(
                inside,
                " && {} <= c2 && c2 <= {}",
                lit(g2[0]),
                lit(g2[n2 - 1])
            );
        }
        let _ = writeln!(w, "    if !({inside}) {{\n        return false;\n    }}");
        let _ = writeln!(
            w,
            "    let i1 = {};\n    let w1 = hermite(&{pre}_GRID1, i1, c1, {second});",
            cell_call(&format!("{pre}_GRID1"), g1, "c1")
        );
        // The cell's nodes (i1 + a, i2 + b) at 2 a + b (a 1D table: i1 + a at a).
        // The cell's data: from node (i1, i2) to node (i1 + 1, i2 + 1) (a 1D table: i1, i1 + 1).
        let (first, kc, consts) = if dims == 2 {
            let _ = writeln!(
                w,
                "    let i2 = {};\n    let w2 = hermite(&{pre}_GRID2, i2, c2, {second});",
                cell_call(&format!("{pre}_GRID2"), &grid[1], "c2")
            );
            let a = rn * n2;
            (
                format!("{rn} * (i1 * {n2} + i2)"),
                a + 2 * rn,
                format!("{nc}, {a}, {}, {len}", a + 2 * rn),
            )
        } else {
            (
                format!("{rn} * i1"),
                2 * rn,
                format!("{nc}, {}, {len}", 2 * rn),
            )
        };
        let _ = writeln!(
            w,
            "    let s = {first};\n    \
             let n: &[f64; {kc}] = {pre}_NODE.0[s..s + {kc}].try_into().expect(\"the cell's nodes\");"
        );
        // All channels in vector chunks; the leading `sec` (the members whose J̇ ż is used)
        // with second derivatives.
        let sec = grp.second.min(nc);
        let _ = writeln!(
            w,
            "    // {}: channels 0..{nc}, the first {sec} with second derivatives;\n    \
             // chunk_{dims}d::<lanes, {}>(cell, weights, (first channel, leading lanes with second derivatives), slots)",
            (0..nc / POSE_COMPONENTS)
                .map(|blk| format!("'{}'", member(POSE_COMPONENTS * blk)))
                .collect::<Vec<_>>()
                .join(", "),
            if dims == 2 {
                "channels, offset of node (i1 + 1, i2), cell values, slot values"
            } else {
                "channels, cell values, slot values"
            }
        );
        for (c, width) in chunks(0, nc) {
            let e = sec.saturating_sub(c).min(width);
            let f = if dims == 2 { "chunk_2d" } else { "chunk_1d" };
            let w2 = if dims == 2 { "&w2, " } else { "" };
            let _ = writeln!(
                w,
                "    {f}::<{width}, {consts}>(n, &w1, {w2}({c}, {e}), out);"
            );
        }
        if dims == 1 {
            // The missing second axis's slots: 2 (and 4, 5 with second derivatives).
            let _ = writeln!(
                w,
                "    // The missing second axis: slot 2{}.",
                if sec > 0 {
                    format!(", slots 4 and 5 of the first {sec} channels")
                } else {
                    String::new()
                }
            );
            let _ = writeln!(w, "    out[{}..{}].fill(0.0);", 2 * nc, 3 * nc);
            if sec > 0 {
                for z in [4, 5] {
                    let _ = writeln!(w, "    out[{}..{}].fill(0.0);", z * nc, z * nc + sec);
                }
            }
        }
        let _ = writeln!(w, "    true\n}}");
        let coords: Vec<String> = grp
            .sources
            .iter()
            .map(|&b| format!("r[{}]", 7 * b))
            .collect();
        calls.push(format!(
            "    // group {gi}\n    if !tree{t}_group{gi}({}, (&mut s[{}..{}]).try_into().expect(\"the group's slots\")) {{\n        host |= 1 << {gi};\n    }}",
            coords.join(", "),
            l.gev[gi],
            l.gev[gi] + len
        ));
    }
    let _ = writeln!(
        w,
        "\n/// Tree {t}: its spline groups inside their grids into the buffer; the bits of the others \
         (the host's: extrapolation and the excursion's record).\n\
         #[inline(never)]\nfn tree{t}_splines(r: &[f64; NR], s: &mut [f64; {}]) -> u64 {{",
        l.len
    );
    if tree.groups.len() > 64 {
        let _ = writeln!(w, "    // (groups from 64 on are always the host's)");
    }
    let _ = writeln!(w, "    let mut host = 0u64;");
    for c in &calls {
        let _ = writeln!(w, "{c}");
    }
    let _ = writeln!(w, "    host\n}}");
}
