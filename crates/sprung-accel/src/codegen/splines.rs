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
//! - the contraction per body (six channels) in `TableSpline::contract`'s order: along the
//!   second axis first (per first-axis row and second-axis order, sums from 0 over the four
//!   second-axis rows), then along the first; the slots of `eval_slots` (the leading
//!   `SplineGroup::second` channels with second derivatives, the others value and first
//!   derivatives; a 1D table's missing second axis's slots written 0).
//!
//! Every operation is the generic code's in the same order, so the slots are bit-identical.

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
    lo
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
    i
}

/// A weight twice, or two channels' values: one SIMD pair (the generic code's SplineBasis).
type Pair = [f64; 2];

/// acc += w f for a pair of channels.
#[inline(always)]
fn mul_add(acc: &mut Pair, w: &Pair, f: &[f64]) {
    acc[0] += w[0] * f[0];
    acc[1] += w[1] * f[1];
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
    let rows = |b: [f64; 4]| [[b[0]; 2], [b[2]; 2], [b[1]; 2], [b[3]; 2]];
    [rows(b0), rows(b1), rows(b2)]
}

/// The rows of a node of a channel block: f, ∂₁f, ∂₂f, ∂₁∂₂f of six channels.
type Node = [f64; 24];

/// Slots of TableSpline::eval_slots with their derivative orders (slot, ∂c1, ∂c2).
const SLOTS: [(usize, usize, usize); 6] =
    [(0, 0, 0), (1, 1, 0), (2, 0, 1), (3, 2, 0), (4, 1, 1), (5, 0, 2)];

/// One body's six channels of a 1D group into out[s * STRIDE + o + m], a pair of channels at a
/// time: slots 0, 1 (and 3 with `second`) over the node rows; slot 2 (and 4, 5) written 0.
#[inline(always)]
fn body_1d<const L: usize, const STRIDE: usize>(
    n: [&Node; 2],
    w: &[[Pair; 4]; 3],
    second: bool,
    out: &mut [f64; L],
    o: usize,
) {
    for p in (0..6).step_by(2) {
        for (s, o1) in [(0, 0), (1, 1), (3, 2)] {
            if o1 == 2 && !second {
                continue;
            }
            let mut acc = [0.0f64; 2];
            for r in 0..4 {
                let (a, dx) = (r / 2, r % 2);
                mul_add(&mut acc, &w[o1][r], &n[a][6 * dx + p..6 * dx + p + 2]);
            }
            out[s * STRIDE + o + p..s * STRIDE + o + p + 2].copy_from_slice(&acc);
        }
    }
    for s in [2, 4, 5] {
        if s != 2 && !second {
            continue;
        }
        out[s * STRIDE + o..s * STRIDE + o + 6].copy_from_slice(&[0.0; 6]);
    }
}

/// One body's six channels of a 2D group into out[s * STRIDE + o + m], a pair of channels at a
/// time: slots 0, 1, 2 (and 3, 4, 5 with `second`); nodes (i1 + a, i2 + b) at 2 a + b; weights
/// w1 (first axis), w2 (second).
#[inline(always)]
fn body_2d<const L: usize, const STRIDE: usize>(
    n: [&Node; 4],
    w1: &[[Pair; 4]; 3],
    w2: &[[Pair; 4]; 3],
    second: bool,
    out: &mut [f64; L],
    o: usize,
) {
    let o2n = if second { 3 } else { 2 };
    let ns = if second { 6 } else { 3 };
    for p in (0..6).step_by(2) {
        for o2 in 0..o2n {
            // Along the second axis: per first-axis row r = 2 a + dx.
            let mut g = [[0.0f64; 2]; 4];
            for r in 0..4 {
                let (a, dx) = (r / 2, r % 2);
                for k in 0..4 {
                    let (b, dy) = (k / 2, k % 2);
                    let row = 6 * (dx + 2 * dy) + p;
                    mul_add(&mut g[r], &w2[o2][k], &n[2 * a + b][row..row + 2]);
                }
            }
            // Along the first axis: the slots of this second-axis order.
            for &(s, o1, so2) in &SLOTS[..ns] {
                if so2 != o2 {
                    continue;
                }
                let mut acc = [0.0f64; 2];
                for r in 0..4 {
                    mul_add(&mut acc, &w1[o1][r], &g[r]);
                }
                out[s * STRIDE + o + p..s * STRIDE + o + p + 2].copy_from_slice(&acc);
            }
        }
    }
}
"#;

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
        let _ = writeln!(
            w,
            "/// Hermite node data, blocks of six channels (one body's), rows f, ∂₁f, ∂₂f, ∂₁∂₂f per node.\n\
             static {pre}_NODE: [f64; {}] = [",
            node.len()
        );
        for row in node.chunks(POSE_COMPONENTS) {
            let _ = writeln!(
                w,
                "    {},",
                row.iter().map(|&x| lit(x)).collect::<Vec<_>>().join(", ")
            );
        }
        let _ = writeln!(w, "];");
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
        if dims == 2 {
            let _ = writeln!(
                w,
                "    let i2 = {};\n    let w2 = hermite(&{pre}_GRID2, i2, c2, {second});",
                cell_call(&format!("{pre}_GRID2"), &grid[1], "c2")
            );
        } else {
            let _ = writeln!(w, "    let i2 = 0;");
        }
        // The cell's nodes (i1 + a, i2 + b) of channel block blk at 2 a + b (a 1D table: a).
        let nodes = if dims == 2 {
            "[at(0, 0), at(0, 1), at(1, 0), at(1, 1)]"
        } else {
            "[at(0, 0), at(1, 0)]"
        };
        let _ = writeln!(
            w,
            "    let cell = |blk: usize| {{\n        \
             let at = |a: usize, b: usize| -> &'static Node {{\n            \
             let s = {block} * blk + {} * ((i1 + a) * {n2} + i2 + b);\n            \
             {pre}_NODE[s..s + {}].try_into().expect(\"a node's rows\")\n        }};\n        \
             {nodes}\n    }};",
            4 * POSE_COMPONENTS,
            4 * POSE_COMPONENTS,
        );
        for blk in 0..nc / POSE_COMPONENTS {
            let ch = POSE_COMPONENTS * blk;
            let sec = ch < grp.second;
            let _ = writeln!(
                w,
                "    // '{}': channels {ch}..{}{}",
                member(ch),
                ch + POSE_COMPONENTS,
                if sec { ", with second derivatives" } else { "" }
            );
            if dims == 2 {
                let _ = writeln!(
                    w,
                    "    body_2d::<{len}, {nc}>(cell({blk}), &w1, &w2, {sec}, out, {ch});"
                );
            } else {
                let _ = writeln!(
                    w,
                    "    body_1d::<{len}, {nc}>(cell({blk}), &w1, {sec}, out, {ch});"
                );
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
