//! M_b J_b, M_z and its Cholesky factor inside `tree{t}_kinematics`: the second half of
//! [`sprung_mbs::joints::Joints`]' `tree_kinematics_rows` on the evaluation path (no base, no
//! perturbation) and its `cholesky`, written out for one tree (docs/joints.md; document 004's
//! "Symbolic Accelerator", ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5):
//!
//! ```text
//! M_b J_b = [m J_b,v ; I_b J_b,ω]          per body with mass, its structural columns
//! M_z     = Σ_b J_bᵀ (M_b J_b)             lower triangle, body by body, each entry row by row
//! M_z     = L Lᵀ                           L below the diagonal, Lᵀ mirrored above
//! ```
//!
//! The generated statements perform the generic code's operations in its order, so they give
//! its bits: every entry of M_z is the generic running sum (from +0, body by body in tree
//! order, within a body the products over the six rows in order) written as one left-to-right
//! expression; I_b J_b,ω is nalgebra's `Matrix3 * Vector3` (column by column); the factor's
//! pivot and entries subtract their products in the order of k. What is known when the code is
//! generated is folded by the same IEEE operations: the masses and inertia tensors (literals),
//! a free root's J_root = I and every body's root-translation columns e_c (constant, see
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

use super::{factor_pattern, lit};
use crate::AccelError;

/// A value of the generated code: known at generation (`C`) or an atom of the generated code
/// (`E`: a local or an array element, never an operator expression).
#[derive(Debug, Clone)]
enum Val {
    C(f64),
    E(String),
}

impl Val {
    fn is_zero(&self) -> bool {
        matches!(self, Val::C(x) if *x == 0.0)
    }

    fn text(&self) -> String {
        match self {
            Val::C(x) => lit(*x),
            Val::E(e) => e.clone(),
        }
    }
}

/// The product a · b, folded: `None` for an exact zero (a constant 0 times a finite value),
/// `Some(C)` for two constants, else its text (a factor 1 left out).
fn product(a: &Val, b: &Val) -> Option<Val> {
    match (a, b) {
        _ if a.is_zero() || b.is_zero() => None,
        (Val::C(x), Val::C(y)) => Some(Val::C(x * y)),
        (Val::C(x), e) | (e, Val::C(x)) if *x == 1.0 => Some(e.clone()),
        _ => Some(Val::E(format!("{} * {}", a.text(), b.text()))),
    }
}

/// A running sum `s = init; s += p; s -= p; …` as one left-to-right expression: constant while
/// only constants entered (folded as the generic code would add them), then text.
struct Sum {
    acc: Val,
}

impl Sum {
    fn from(init: &Val) -> Self {
        Self { acc: init.clone() }
    }

    /// s += p (`sign` '+') or s −= p (`sign` '-'); `p` from [`product`].
    fn add(&mut self, sign: char, p: Option<Val>) {
        let Some(p) = p else { return };
        self.acc = match (&self.acc, p) {
            (Val::C(x), Val::C(y)) => Val::C(if sign == '+' { x + y } else { x - y }),
            // (+0 + p is p, +0 − p is −p: at most the sign of a zero differs.)
            (Val::C(x), Val::E(e)) if *x == 0.0 => {
                Val::E(if sign == '+' { e } else { format!("-({e})") })
            }
            (a, p) if p.is_zero() => a.clone(),
            (a, p) => Val::E(format!("{} {sign} {}", a.text(), p.text())),
        };
    }
}

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

    /// `let name = value;` for an expression (a constant stays a constant): the atom to use.
    fn bind(&mut self, name: String, v: Val) -> Val {
        match v {
            Val::C(_) => v,
            Val::E(e) if e == name => Val::E(e),
            Val::E(e) => {
                self.line(&format!("let {name} = {e};"));
                Val::E(name)
            }
        }
    }

    /// `s[idx] = v;` unless v is an exact zero (the buffer's entry is one already).
    fn store(&mut self, idx: usize, v: &Val) {
        if !v.is_zero() {
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
    let mut z: Vec<Sum> = (0..n * n).map(|_| Sum::from(&Val::C(0.0))).collect();
    let mut terms: Vec<Vec<Option<Val>>> = vec![Vec::new(); n * n];
    for (lb, &b) in tree.bodies.iter().enumerate() {
        if tree.massless[lb] {
            continue;
        }
        let body = &model.bodies[b];
        let mass = Val::C(body.mass);
        e.line(&format!(
            "// body '{}' (m = {} kg): M_b J_b",
            body.name.replace('\n', " "),
            body.mass
        ));
        // The root translation's columns: M_b J_b's m e_c, M_z's m I.
        for c in 0..nt {
            e.store(mj + (6 * lb + c) * n + c, &mass);
            terms[c * n + c].push(Some(mass.clone()));
        }
        // The other structural columns: J_b's six rows (a free root's are I's) and M_b J_b's.
        let cols = &tree.jac_cols[lb][nt..];
        let mut gathered: Vec<([Val; 6], [Val; 6])> = Vec::with_capacity(cols.len());
        for &col in cols {
            let known: [Option<f64>; 6] = std::array::from_fn(|k| known_jac(model, t, lb, k, col));
            let g: [Val; 6] = if known.iter().all(Option::is_some) {
                known.map(|x| Val::C(x.unwrap_or_default()))
            } else {
                let name = format!("j{lb}_{col}");
                let rows: Vec<String> = (0..6)
                    .map(|k| format!("s[{}]", jac + (6 * lb + k) * n + col))
                    .collect();
                e.line(&format!("let {name} = [{}];", rows.join(", ")));
                std::array::from_fn(|k| match known[k] {
                    Some(x) => Val::C(x),
                    None => Val::E(format!("{name}[{k}]")),
                })
            };
            // m g_v, then I_b g_ω as nalgebra's product: column by column.
            let m: [Val; 6] = std::array::from_fn(|k| {
                if k < 3 {
                    product(&mass, &g[k]).unwrap_or(Val::C(0.0))
                } else {
                    let mut s = Sum::from(&Val::C(0.0));
                    for a in 0..3 {
                        s.add('+', product(&Val::C(body.inertia[(k - 3, a)]), &g[3 + a]));
                    }
                    s.acc
                }
            });
            let m = if m.iter().all(|v| matches!(v, Val::C(_))) {
                m
            } else {
                let name = format!("m{lb}_{col}");
                let texts: Vec<String> = m.iter().map(Val::text).collect();
                e.line(&format!("let {name} = [{}];", texts.join(", ")));
                std::array::from_fn(|k| match &m[k] {
                    Val::C(x) => Val::C(*x),
                    Val::E(_) => Val::E(format!("{name}[{k}]")),
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
                terms[i * n + c].push((!gi[c].is_zero()).then(|| mi[c].clone()));
            }
            for (jj, &j) in cols[..=ii].iter().enumerate() {
                let mjj = &gathered[jj].1;
                for k in 0..6 {
                    terms[i * n + j].push(product(&gi[k], &mjj[k]));
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
                let s = &mut z[i * n + j];
                for p in pending {
                    s.add('+', p);
                }
                if let Val::E(text) = &s.acc
                    && text.contains(' ')
                {
                    s.acc = e.bind(format!("z{i}_{j}"), s.acc.clone());
                }
            }
        }
    }
    let a: Vec<Val> = z.into_iter().map(|s| s.acc).collect();
    // The factor, column by column as `cholesky`.
    e.line("// M_z = L Lᵀ (L below the diagonal, Lᵀ above)");
    let mut lf: Vec<Val> = vec![Val::C(0.0); n * n];
    for j in 0..n {
        let mut d = Sum::from(&a[j * n + j]);
        for k in 0..j {
            d.add('-', product(&lf[j * n + k], &lf[j * n + k]));
        }
        let ljj = match d.acc {
            Val::C(x) if x.is_nan() || x <= 0.0 => {
                // Singular whatever the state (no mass on the coordinate).
                e.line(&format!("return Err({j});"));
                let _ = writeln!(e.w, "    }}");
                return Ok(());
            }
            Val::C(x) => Val::C(x.sqrt()),
            Val::E(expr) => {
                e.line(&format!("let d{j} = {expr};"));
                e.line(&format!(
                    "if d{j}.is_nan() || d{j} <= 0.0 {{ return Err({j}); }}"
                ));
                e.bind(format!("l{j}_{j}"), Val::E(format!("d{j}.sqrt()")))
            }
        };
        let at = e.chol(j, j);
        e.store(at, &ljj);
        for i in j + 1..n {
            let mut s = Sum::from(&a[i * n + j]);
            for k in 0..j {
                s.add('-', product(&lf[i * n + k], &lf[j * n + k]));
            }
            let lij = match (&s.acc, &ljj) {
                (v, _) if v.is_zero() => Val::C(0.0),
                (Val::C(x), Val::C(y)) => Val::C(x / y),
                (v, l) => {
                    let num = match v {
                        Val::E(t) if t.contains(' ') => format!("({t})"),
                        v => v.text(),
                    };
                    e.bind(format!("l{i}_{j}"), Val::E(format!("{num} / {}", l.text())))
                }
            };
            if !lij.is_zero() {
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
        lf[j * n + j] = ljj;
    }
    let _ = writeln!(e.w, "    }}");
    Ok(())
}
