//! M_b J_b, M_z and its Cholesky factor: TEMPORARY test stand-in on the accel-kin branch (the
//! generic code's loops over the buffer, in its order of operations; the mass-matrix helper's
//! straight-line emitter replaces it at the merge).

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::FlatLayout;

use super::lit;
use crate::AccelError;

/// Writes the statements (inside `tree{t}_kinematics`, after every J_b row it reads is in the
/// flat buffer `s`) that form M_b J_b (`s[mj..]`) and M_z's Cholesky factor (`s[chol..]`) of
/// `model`'s tree `t`, and `return Err(k)` at a non-positive pivot k.
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let tree = &model.joints.trees[t];
    let l = FlatLayout::of(tree);
    let n = tree.n_coords();
    let nt = tree.translation_cols();
    let (jac, mj, chol) = (l.jac, l.mj, l.chol);
    let w = out;
    let _ = writeln!(w, "    s[{chol}..{}].fill(0.0);", chol + n * n);
    for (lb, &b) in tree.bodies.iter().enumerate() {
        if tree.massless[lb] {
            continue;
        }
        let body = &model.bodies[b];
        let cols = &tree.jac_cols[lb][nt..];
        let ii: Vec<String> = (0..3)
            .map(|i| {
                format!(
                    "[{}, {}, {}]",
                    lit(body.inertia[(i, 0)]),
                    lit(body.inertia[(i, 1)]),
                    lit(body.inertia[(i, 2)])
                )
            })
            .collect();
        let _ = writeln!(
            w,
            "    {{\n        let cols: [usize; {}] = {:?};\n        let m = {};\n        let ii = [{}];",
            cols.len(),
            cols,
            lit(body.mass),
            ii.join(", ")
        );
        for c in 0..nt {
            let _ = writeln!(
                w,
                "        s[{}] = m;\n        s[{}] += m;",
                mj + (6 * lb + c) * n + c,
                chol + c * n + c
            );
        }
        let _ = writeln!(
            w,
            "        let mut gat = [([0.0f64; 6], [0.0f64; 6]); {nc}];\n        \
             for (q, &col) in cols.iter().enumerate() {{\n            \
             let g: [f64; 6] = core::array::from_fn(|k| s[{jac} + ({lb6} + k) * {n} + col]);\n            \
             let wv: [f64; 3] = core::array::from_fn(|i| ii[i][0] * g[3] + ii[i][1] * g[4] + ii[i][2] * g[5]);\n            \
             let mm = [m * g[0], m * g[1], m * g[2], wv[0], wv[1], wv[2]];\n            \
             for k in 0..6 {{ s[{mj} + ({lb6} + k) * {n} + col] = mm[k]; }}\n            \
             gat[q] = (g, mm);\n        }}\n        \
             for (q, &i) in cols.iter().enumerate() {{\n            \
             let ji = gat[q].0;\n            \
             for c in 0..{nt} {{ s[{chol} + i * {n} + c] += ji[c] * m; }}\n            \
             for (q2, &j) in cols[..=q].iter().enumerate() {{\n                \
             let mut acc = s[{chol} + i * {n} + j];\n                \
             for k in 0..6 {{ acc += ji[k] * gat[q2].1[k]; }}\n                \
             s[{chol} + i * {n} + j] = acc;\n            }}\n        }}\n    }}",
            nc = cols.len(),
            lb6 = 6 * lb,
        );
    }
    let _ = writeln!(
        w,
        "    for j in 0..{n} {{\n        \
         let mut d = s[{chol} + j * {n} + j];\n        \
         for k in 0..j {{ let x = s[{chol} + j * {n} + k]; d -= x * x; }}\n        \
         if d.is_nan() || d <= 0.0 {{ return Err(j); }}\n        \
         let d = d.sqrt();\n        s[{chol} + j * {n} + j] = d;\n        \
         for i in j + 1..{n} {{\n            \
         let mut acc = s[{chol} + i * {n} + j];\n            \
         for k in 0..j {{ acc -= s[{chol} + i * {n} + k] * s[{chol} + j * {n} + k]; }}\n            \
         let x = acc / d;\n            s[{chol} + i * {n} + j] = x;\n            s[{chol} + j * {n} + i] = x;\n        }}\n    }}"
    );
    Ok(())
}
