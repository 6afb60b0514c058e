//! M_b J_b, M_z and its Cholesky factor inside `tree{t}_kinematics`: the second half of
//! [`sprung_mbs::joints::Joints`]' `tree_kinematics_rows` on the evaluation path (no base, no
//! perturbation) and its `cholesky`, written out for one tree (docs/joints.md; document 004's
//! "Symbolic Accelerator", ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5):
//!
//! ```text
//! M_b J_b = [m J_b,v ; I_b J_b,ω]          per body with mass, its structural columns
//! M_z     = Σ_b J_bᵀ (M_b J_b)             lower triangle, body by body, each entry row by row
//! M_z     = L Lᵀ                           L below the diagonal, Lᵀ mirrored above,
//!                                          1 / L_jj on the diagonal
//! ```
//!
//! The generated statements perform the generic code's operations in its order, so they give
//! its bits: every entry of M_z is the generic running sum (from +0, body by body in tree
//! order, within a body the products over the six rows in order) written as one left-to-right
//! expression; I_b J_b,ω is nalgebra's `Matrix3 * Vector3` (column by column); the factor's
//! pivot and entries subtract their products in the order of k, the pivot's reciprocal
//! 1 / √d_j is the column's one division and its entries are their sums times it. What is
//! known when the code is generated is folded by the same IEEE operations: the masses and
//! inertia tensors (literals), a free root's J_root = I and every body's root-translation
//! columns e_c (constant, see
//! [`sprung_mbs::tree_kernel::FlatLayout::initial`]), so the root's M_b J_b and its block of
//! M_z are literals, the translation block of M_z is Σ m I, and its pivots are constants; and
//! the J_b entries the generic code makes constants whatever the state (`known_jac`: the
//! rotation rows of a fixed or prismatic joint on the free root, R_relᵀ e_k, and of a prismatic
//! joint's own column, 0), which the fragment takes as those constants instead of reading
//! them.
//! Products with an exact constant 0 are left out and so are sums that stay exactly 0 (adding
//! an exact zero to a running sum changes nothing but, at most, the sign of a zero): what the
//! code writes is a subset of [`super::factor_pattern`], every other entry of `s[chol..]` and
//! `s[mj..]` is an exact zero of the generic code too and stays as the zero-initialised buffer
//! holds it.

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::FlatLayout;
use sprung_model as sm;

use super::expr::{E, add, mul, sub};
use super::factor_pattern;
use crate::AccelError;

/// Where the fragment writes, and its output.
struct Emitter<'a> {
    w: &'a mut String,
    n: usize,
    layout: FlatLayout,
}

impl Emitter<'_> {
    fn line(&mut self, text: &str) {
        let _ = writeln!(self.w, "        {text}");
    }

    /// `let name = value;` for a value that is not a literal: the local to use.
    fn bind(&mut self, name: String, v: E) -> E {
        match v {
            E::Lit(_) => v,
            E::X(e, _) => {
                self.line(&format!("let {name} = {e};"));
                E::atom(name)
            }
        }
    }

    /// `s[idx] = v;` unless v is an exact zero (the buffer's entry is one already).
    fn store(&mut self, idx: usize, v: &E) {
        if !v.is_lit(0.0) {
            self.line(&format!("s[{idx}] = {};", v.text()));
        }
    }

    fn chol(&self, i: usize, j: usize) -> usize {
        self.layout.chol + i * self.n + j
    }
}

/// Entry (k, col) of J_b of tree `t`'s body `lb` where the generic code makes it a constant
/// (else `None`: read from the buffer): a free root's J_root = I; a fixed or prismatic joint
/// on the free root, its rotation rows of the root's rotation columns (R_relᵀ e_k, R_rel its
/// constant design rotation); a prismatic joint's own column, its rotation rows (0).
/// (The root translation's columns are constant too but never read here.)
fn known_jac(model: &CompiledModel, t: usize, lb: usize, k: usize, col: usize) -> Option<f64> {
    let tree = &model.joints.trees[t];
    let Some(d) = model.joints.defs[tree.bodies[lb]].as_ref() else {
        // The free root (the only tree body without a joint).
        return Some(if k == col { 1.0 } else { 0.0 });
    };
    let on_root = tree.root.is_some() && tree.parent_local[lb] == Some(0);
    let rotation = k >= 3;
    match d.kind {
        sm::JointKind::Fixed | sm::JointKind::Prismatic
            if on_root && rotation && (3..6).contains(&col) =>
        {
            Some(d.rel0[(col - 3, k - 3)])
        }
        sm::JointKind::Prismatic
            if rotation && tree.joint_coord[lb] == Some(col) && !tree.shared[lb][0] =>
        {
            Some(0.0)
        }
        _ => None,
    }
}

/// Writes the statements (inside `tree{t}_kinematics`, after every J_b row it reads is in the
/// flat buffer `s`) that form M_b J_b (`s[mj..]`) and M_z's Cholesky factor (`s[chol..]`) of
/// `model`'s tree `t`, and `return Err(k)` at a non-positive (or NaN) pivot k. One block: its
/// locals do not reach the surrounding function.
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let tree = &model.joints.trees[t];
    let n = tree.n_coords();
    let nt = tree.translation_cols();
    let layout = FlatLayout::of(tree);
    let pat = factor_pattern(model, t);
    let (mj, jac) = (layout.mj, layout.jac);
    let mut e = Emitter { w: out, n, layout };
    let _ = writeln!(
        e.w,
        "    // M_b J_b, M_z = Σ J_bᵀ M_b J_b and M_z = L Lᵀ (Joints::tree_kinematics_rows, cholesky).\n    {{"
    );
    // Per entry (i, j ≤ i) of M_z: its running sum, from +0, and the current body's products
    // in the generic order.
    let mut z: Vec<E> = vec![E::zero(); n * n];
    let mut terms: Vec<Vec<E>> = vec![Vec::new(); n * n];
    for (lb, &b) in tree.bodies.iter().enumerate() {
        if tree.massless[lb] {
            continue;
        }
        let body = &model.bodies[b];
        let mass = E::Lit(body.mass);
        e.line(&format!(
            "// body '{}' (m = {} kg): M_b J_b",
            body.name.replace('\n', " "),
            body.mass
        ));
        // The root translation's columns: M_b J_b's m e_c, M_z's m I.
        for c in 0..nt {
            e.store(mj + (6 * lb + c) * n + c, &mass);
            terms[c * n + c].push(mass.clone());
        }
        // The other structural columns: J_b's six rows (a free root's are I's) and M_b J_b's.
        let cols = &tree.jac_cols[lb][nt..];
        let mut gathered: Vec<([E; 6], [E; 6])> = Vec::with_capacity(cols.len());
        for &col in cols {
            let known: [Option<f64>; 6] = std::array::from_fn(|k| known_jac(model, t, lb, k, col));
            let g: [E; 6] = if known.iter().all(Option::is_some) {
                known.map(|x| E::Lit(x.unwrap_or_default()))
            } else {
                let name = format!("j{lb}_{col}");
                let rows: Vec<String> = (0..6)
                    .map(|k| format!("s[{}]", jac + (6 * lb + k) * n + col))
                    .collect();
                e.line(&format!("let {name} = [{}];", rows.join(", ")));
                std::array::from_fn(|k| match known[k] {
                    Some(x) => E::Lit(x),
                    None => E::atom(format!("{name}[{k}]")),
                })
            };
            // m g_v, then I_b g_ω as nalgebra's product: column by column.
            let m: [E; 6] = std::array::from_fn(|k| {
                if k < 3 {
                    mul(&mass, &g[k])
                } else {
                    (0..3).fold(E::zero(), |s, a| {
                        add(&s, &mul(&E::Lit(body.inertia[(k - 3, a)]), &g[3 + a]))
                    })
                }
            });
            let m = if m.iter().all(|v| matches!(v, E::Lit(_))) {
                m
            } else {
                let name = format!("m{lb}_{col}");
                let texts: Vec<String> = m.iter().map(E::text).collect();
                e.line(&format!("let {name} = [{}];", texts.join(", ")));
                std::array::from_fn(|k| match &m[k] {
                    E::Lit(x) => E::Lit(*x),
                    E::X(..) => E::atom(format!("{name}[{k}]")),
                })
            };
            for (k, v) in m.iter().enumerate() {
                e.store(mj + (6 * lb + k) * n + col, v);
            }
            gathered.push((g, m));
        }
        // Its terms of M_z: (i, c) for the translation columns (J_b's e_c picks m J_b(c, i),
        // the generic code's J_b(c, i) · m), then (i, j) for its columns j ≤ i, row by row.
        for (ii, &i) in cols.iter().enumerate() {
            let (gi, mi) = &gathered[ii];
            for c in 0..nt {
                if !gi[c].is_lit(0.0) {
                    terms[i * n + c].push(mi[c].clone());
                }
            }
            for (jj, &j) in cols[..=ii].iter().enumerate() {
                let mjj = &gathered[jj].1;
                for k in 0..6 {
                    terms[i * n + j].push(mul(&gi[k], &mjj[k]));
                }
            }
        }
        // Its part of M_z's sums (the entries it adds to, the others unchanged).
        e.line("// M_z += J_bᵀ M_b J_b");
        for i in 0..n {
            for j in 0..=i {
                let pending = std::mem::take(&mut terms[i * n + j]);
                if pending.is_empty() {
                    continue;
                }
                let s = pending.iter().fold(z[i * n + j].clone(), |s, p| add(&s, p));
                z[i * n + j] = if s.prec() < 2 {
                    e.bind(format!("z{i}_{j}"), s)
                } else {
                    s
                };
            }
        }
    }
    let a = z;
    // The factor, column by column as `cholesky`.
    e.line("// M_z = L Lᵀ (L below the diagonal, Lᵀ above)");
    let mut lf: Vec<E> = vec![E::zero(); n * n];
    for j in 0..n {
        let d = (0..j).fold(a[j * n + j].clone(), |d, k| {
            sub(&d, &mul(&lf[j * n + k], &lf[j * n + k]))
        });
        let rj = match d {
            E::Lit(x) if x.is_nan() || x <= 0.0 => {
                // Singular whatever the state (no mass on the coordinate).
                e.line(&format!("return Err({j});"));
                let _ = writeln!(e.w, "    }}");
                return Ok(());
            }
            E::Lit(x) => E::Lit(1.0 / x.sqrt()),
            E::X(expr, _) => {
                e.line(&format!("let d{j} = {expr};"));
                e.line(&format!(
                    "if d{j}.is_nan() || d{j} <= 0.0 {{ return Err({j}); }}"
                ));
                e.bind(format!("r{j}"), E::X(format!("1.0 / d{j}.sqrt()"), 1))
            }
        };
        // The diagonal holds 1 / L_jj (`cholesky`: the column's one division).
        let at = e.chol(j, j);
        e.store(at, &rj);
        for i in j + 1..n {
            let s = (0..j).fold(a[i * n + j].clone(), |s, k| {
                sub(&s, &mul(&lf[i * n + k], &lf[j * n + k]))
            });
            let lij = if s.is_lit(0.0) {
                E::zero()
            } else {
                e.bind(format!("l{i}_{j}"), mul(&s, &rj))
            };
            if !lij.is_lit(0.0) {
                debug_assert!(
                    pat[i][j],
                    "tree {t}: L({i}, {j}) outside the factor pattern"
                );
                let (lo, up) = (e.chol(i, j), e.chol(j, i));
                e.store(lo, &lij);
                e.store(up, &lij);
            }
            lf[i * n + j] = lij;
        }
    }
    let _ = writeln!(e.w, "    }}");
    Ok(())
}
