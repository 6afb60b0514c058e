//! `tree{t}_project`: the projection of the free-body accelerations onto tree t's coordinates,
//! [`sprung_mbs::joints::Joints::project_tree`] with J̇ ż (bias 1) written out for the tree's
//! structure (docs/joints.md; document 004 eq. 1 with the reaction forces eliminated):
//!
//! ```text
//! M_z z̈ = Σ_b (M_b J_b)ᵀ (q_b − J̇_b ż) + Σ_leaves J_bᵀ W_b,   then L Lᵀ z̈ = rhs
//! ```
//!
//! in the generic code's order of operations: the massless leaves' wrenches first (into their
//! own joint's columns, moved onto the parent as F, M + d × F), then the bodies with J̇_b ż in
//! tree order, each row over the body's structural columns ([`sprung_mbs::joints::Tree::jac_cols`]);
//! the weights read from the flat buffer except the root translation's constant ones (1 in J_b,
//! m in M_b J_b); the Cholesky solve over the factor's structural non-zeros alone
//! ([`super::factor_pattern`]; the entries left out are exact zeros).

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::{DCOLS_LEN, FRAME_LEN, FlatLayout};

use super::{factor_pattern, lit};
use crate::AccelError;

/// Writes `tree{t}_project` of `model`'s tree `t` into `out`.
// (Index loops over the tree's bodies and the factor's pattern: the indices are the generated
// code's.)
#[allow(clippy::needless_range_loop)]
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let tree = &model.joints.trees[t];
    let l = FlatLayout::of(tree);
    let n = tree.n_coords();
    let nt = tree.translation_cols();
    let nb = tree.bodies.len();
    let w = out;
    let _ = writeln!(
        w,
        "\n/// Tree {t}: the projection of q onto its {n} coordinates (bias J̇ ż).\n\
         #[inline(never)]\nfn tree{t}_project(s: &[f64; {}], q: &mut [f64; NV]) {{\n    \
         let mut z = [0.0f64; {n}];",
        l.len
    );
    // R (column-major) entry (i, j) of body lb's frame.
    let rot =
        |lb: usize, i: usize, j: usize| format!("s[{}]", l.frames + FRAME_LEN * lb + 3 + 3 * j + i);
    // Per body: whether leaves hang on it (their wrench accumulators).
    let mut has_leaves = vec![false; nb];
    for lb in 0..nb {
        if !tree.need_acc[lb]
            && let Some(pl) = tree.parent_local[lb]
        {
            has_leaves[pl] = true;
        }
    }
    for (lb, &h) in has_leaves.iter().enumerate() {
        if h {
            let _ = writeln!(
                w,
                "    let mut lf{lb} = [0.0f64; 3];\n    let mut lm{lb} = [0.0f64; 3];"
            );
        }
    }
    // The massless leaves.
    for lb in 0..nb {
        if tree.need_acc[lb] {
            continue;
        }
        let b = tree.bodies[lb];
        let _ = writeln!(
            w,
            "    {{ // leaf '{}'",
            model.bodies[b].name.replace('\n', " ")
        );
        let _ = writeln!(
            w,
            "        let fg = [q[{}], q[{}], q[{}]];\n        let x = [q[{}], q[{}], q[{}]];",
            6 * b,
            6 * b + 1,
            6 * b + 2,
            6 * b + 3,
            6 * b + 4,
            6 * b + 5
        );
        let _ = writeln!(
            w,
            "        let mg = [{}];",
            (0..3)
                .map(|i| format!(
                    "{} * x[0] + {} * x[1] + {} * x[2]",
                    rot(lb, i, 0),
                    rot(lb, i, 1),
                    rot(lb, i, 2)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let dc = l.dcols + DCOLS_LEN * lb;
        for (k, &ci) in tree.deps[lb].iter().enumerate() {
            let (vo, wo) = (dc + 3 + 6 * k, dc + 6 + 6 * k);
            let _ = writeln!(
                w,
                "        z[{ci}] += (s[{vo}] * fg[0] + s[{}] * fg[1] + s[{}] * fg[2]) + (s[{wo}] * mg[0] + s[{}] * mg[1] + s[{}] * mg[2]);",
                vo + 1,
                vo + 2,
                wo + 1,
                wo + 2
            );
        }
        if let Some(pl) = tree.parent_local[lb] {
            // F onto the parent, M + d × F.
            let d = |i: usize| format!("s[{}]", dc + i);
            let _ = writeln!(
                w,
                "        lf{pl}[0] += fg[0]; lf{pl}[1] += fg[1]; lf{pl}[2] += fg[2];\n        \
                 let dxf = [{d1} * fg[2] - {d2} * fg[1], {d2} * fg[0] - {d0} * fg[2], {d0} * fg[1] - {d1} * fg[0]];\n        \
                 lm{pl}[0] += mg[0] + dxf[0]; lm{pl}[1] += mg[1] + dxf[1]; lm{pl}[2] += mg[2] + dxf[2];",
                d0 = d(0),
                d1 = d(1),
                d2 = d(2)
            );
        }
        let _ = writeln!(w, "    }}");
    }
    // The bodies with J̇_b ż (the root, bodies with mass, bodies with children).
    for (lb, &b) in tree.bodies.iter().enumerate() {
        if !tree.need_acc[lb] {
            continue;
        }
        let body = &model.bodies[b];
        let massless = tree.massless[lb];
        let cols = &tree.jac_cols[lb][nt..];
        let _ = writeln!(w, "    {{ // body '{}'", body.name.replace('\n', " "));
        let src = if massless { l.jac } else { l.mj };
        let wt = |row: usize, c: usize| format!("s[{}]", src + (6 * lb + row) * n + c);
        if massless {
            let _ = writeln!(
                w,
                "        let y = [q[{}], q[{}], q[{}], q[{}], q[{}], q[{}]];",
                6 * b,
                6 * b + 1,
                6 * b + 2,
                6 * b + 3,
                6 * b + 4,
                6 * b + 5
            );
        } else {
            // y = q_b − (a, Rᵀ α).
            let a = l.acc + sprung_mbs::tree_kernel::ACC_LEN * lb;
            let rt = |i: usize| {
                format!(
                    "({} * s[{}] + {} * s[{}] + {} * s[{}])",
                    rot(lb, 0, i),
                    a + 3,
                    rot(lb, 1, i),
                    a + 4,
                    rot(lb, 2, i),
                    a + 5
                )
            };
            let _ = writeln!(
                w,
                "        let y = [q[{}] - s[{}], q[{}] - s[{}], q[{}] - s[{}], q[{}] - {}, q[{}] - {}, q[{}] - {}];",
                6 * b,
                a,
                6 * b + 1,
                a + 1,
                6 * b + 2,
                a + 2,
                6 * b + 3,
                rt(0),
                6 * b + 4,
                rt(1),
                6 * b + 5,
                rt(2)
            );
        }
        for row in 0..6 {
            if row < nt {
                // (J_b's entry there is 1, M_b J_b's the mass: 1 · y is y.)
                let term = if massless {
                    format!("y[{row}]")
                } else {
                    format!("{} * y[{row}]", lit(body.mass))
                };
                let _ = writeln!(w, "        z[{row}] += {term};");
            }
            for &c in cols {
                let _ = writeln!(w, "        z[{c}] += {} * y[{row}];", wt(row, c));
            }
        }
        if has_leaves[lb] {
            // The leaves' wrenches through J_b: global force, body-axes moment.
            let jt = |row: usize, c: usize| format!("s[{}]", l.jac + (6 * lb + row) * n + c);
            let _ = writeln!(
                w,
                "        let mb = [{}];\n        let wl = [lf{lb}[0], lf{lb}[1], lf{lb}[2], mb[0], mb[1], mb[2]];",
                (0..3)
                    .map(|i| format!(
                        "{} * lm{lb}[0] + {} * lm{lb}[1] + {} * lm{lb}[2]",
                        rot(lb, 0, i),
                        rot(lb, 1, i),
                        rot(lb, 2, i)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for row in 0..6 {
                if row < nt {
                    let _ = writeln!(w, "        z[{row}] += wl[{row}];");
                }
                for &c in cols {
                    let _ = writeln!(w, "        z[{c}] += {} * wl[{row}];", jt(row, c));
                }
            }
        }
        let _ = writeln!(w, "    }}");
    }
    // L Lᵀ z̈ = rhs over the factor's structural non-zeros, times the reciprocals 1 / L_ii on
    // the diagonal (`cholesky_solve_cols`).
    let pat = factor_pattern(model, t);
    let ch = |i: usize, j: usize| format!("s[{}]", l.chol + i * n + j);
    for (i, row) in pat.iter().enumerate() {
        let mut e = format!("z[{i}]");
        for (k, _) in row[..i].iter().enumerate().filter(|(_, nz)| **nz) {
            let _ = write!(e, " - {} * z[{k}]", ch(i, k));
        }
        let _ = writeln!(w, "    z[{i}] = ({e}) * {};", ch(i, i));
    }
    for i in (0..n).rev() {
        let mut e = format!("z[{i}]");
        for (k, row) in pat.iter().enumerate().skip(i + 1) {
            if row[i] {
                // Lᵀ's row i in the upper triangle: L_ki at (i, k).
                let _ = write!(e, " - {} * z[{k}]", ch(i, k));
            }
        }
        let _ = writeln!(w, "    z[{i}] = ({e}) * {};", ch(i, i));
    }
    for &b in &tree.bodies[usize::from(tree.root.is_some())..] {
        let _ = writeln!(w, "    q[{}..{}].fill(0.0);", 6 * b, 6 * b + 6);
    }
    for (c, &vi) in tree.coords.iter().enumerate() {
        let _ = writeln!(w, "    q[{vi}] = z[{c}];");
    }
    let _ = writeln!(w, "}}");
    Ok(())
}
