//! `tree{t}_kinematics`: one joint tree's kinematics on the evaluation path written out for the
//! model — what [`sprung_mbs::joints::Joints::tree_kinematics_rows`] computes without
//! perturbation and without the massless leaves' rows (docs/joints.md; document 004,
//! ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 2.2 and the "Symbolic Accelerator" of sec. 5),
//! into the tree's flat buffer ([`FlatLayout`]):
//!
//! ```text
//! per body, parents first:  frame (x, R, v, ω)          Frame::of_free / JointDef::motion_with,
//!                                                        JointDef::tabulated_rel + motion_from_rel
//!   bodies with J̇_b ż:      a, α  (recursively)          a = a_p + α_p × d + ω_p × (ω_p × d)
//!                                                            + 2 ω_p × ṡ + (joint's term)
//!                           J_b's structural columns     v_b = v_p + ω_p × d, ω_b = R_bᵀ ω_p,
//!                                                        plus the joint's columns
//!   massless leaves:        d and the joint's columns    (TreeKin's dcols)
//! then M_b J_b and M_z's Cholesky factor                 (super::mass_matrix)
//! ```
//!
//! The generator evaluates the generic code's operations symbolically ([`E`]): the joint's
//! constants (axes, points, s₀, R_rel,0, the ground's frame) are literals, so products with an
//! exact 0 or ±1 and sums with an exact 0 are folded away at generation time — the same values
//! as the generic code's (which forms those terms and adds or multiplies exact zeros and ones),
//! up to the sign of a zero. Every other operation is written in the generic code's order:
//! nalgebra's matrix–vector products sum column by column, ((m₀ x₀ + m₁ x₁) + m₂ x₂), its cross
//! and dot products and the sums of several vectors associate from the left; no `mul_add`. The
//! buffer entries that are exact zeros at every state are not written (they keep the buffer's
//! initial zeros, [`FlatLayout::initial`]).
//!
//! Each body's statements are generated on their own, each `let` moved down to just before its
//! first reader and each store up to just after the statement that binds its value (shorter
//! live ranges, fewer spills; the same operations), and isomorphic bodies — jointed leaves of
//! one parent with the same joint kind and the same folded structure, e.g. a corner's left and
//! right carriers or the followers of two corners — are written as one statement sequence over
//! SIMD lanes ([`lanes`]: lane-wise IEEE operations, so each lane holds its body's bits): four
//! lanes where four bodies fuse (one AVX instruction per operation; in pairs without AVX), else
//! pairs.
//!
//! The rotation-vector coefficients of a tabulated joint (the generic `rotation_coeffs`: Taylor
//! series below θ = 1, closed forms above) are the prelude's `rot_coeffs`, written once per
//! source (tree 0), with the series' coefficients formed by the generic code's arithmetic.

mod lanes;

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::joints::{JointDef, Tree};
use sprung_mbs::tree_kernel::{ACC_LEN, DCOLS_LEN, FRAME_LEN, FlatLayout};
use sprung_model as sm;

use super::expr::{E, add, mul, neg, sub};
use super::lit;
use crate::AccelError;

type V3 = [E; 3];
/// Row-major: `m[i][j]`.
type M3 = [[E; 3]; 3];

fn lits(x: [f64; 3]) -> V3 {
    x.map(E::Lit)
}

fn zero3() -> V3 {
    lits([0.0; 3])
}

fn vadd(a: &V3, b: &V3) -> V3 {
    std::array::from_fn(|i| add(&a[i], &b[i]))
}

/// Vector times scalar (elementwise).
fn vscale(a: &V3, s: &E) -> V3 {
    std::array::from_fn(|i| mul(&a[i], s))
}

fn cross(a: &V3, b: &V3) -> V3 {
    [
        sub(&mul(&a[1], &b[2]), &mul(&a[2], &b[1])),
        sub(&mul(&a[2], &b[0]), &mul(&a[0], &b[2])),
        sub(&mul(&a[0], &b[1]), &mul(&a[1], &b[0])),
    ]
}

fn dot(a: &V3, b: &V3) -> E {
    add(
        &add(&mul(&a[0], &b[0]), &mul(&a[1], &b[1])),
        &mul(&a[2], &b[2]),
    )
}

/// nalgebra's Matrix3 * Vector3: column by column.
fn mv(m: &M3, x: &V3) -> V3 {
    std::array::from_fn(|i| {
        add(
            &add(&mul(&m[i][0], &x[0]), &mul(&m[i][1], &x[1])),
            &mul(&m[i][2], &x[2]),
        )
    })
}

/// nalgebra's Matrix3 * Matrix3: each column of the product as [`mv`].
fn mm(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            add(
                &add(&mul(&a[i][0], &b[0][j]), &mul(&a[i][1], &b[1][j])),
                &mul(&a[i][2], &b[2][j]),
            )
        })
    })
}

fn transpose(m: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i].clone()))
}

/// A constant matrix by its entries (i, j).
fn mat_lits(m: impl Fn(usize, usize) -> f64) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| E::Lit(m(i, j))))
}

fn identity() -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| E::Lit(if i == j { 1.0 } else { 0.0 })))
}

/// A body's frame, J̇_b ż and J_b columns as generated values.
#[derive(Debug, Clone)]
struct Body {
    x: V3,
    rot: M3,
    v: V3,
    w: V3,
    /// J̇_b ż (a, α), bodies with [`Tree::need_acc`].
    acc: (V3, V3),
    /// J_b's columns (v global, ω body) by tree coordinate (the rows' structural columns).
    jac: Vec<Option<[E; 6]>>,
}

/// What a joint adds to its body's motion ([`sprung_mbs::joints::JointMotion`]).
struct Motion {
    x: V3,
    rot: M3,
    v: V3,
    w: V3,
    /// R_rel (read where the parent is a free root).
    rel: M3,
    d: V3,
    s_dot: V3,
    cols: [(V3, V3); 2],
    /// The velocity-product terms (`None`: prismatic and fixed joints, which add none).
    bias: Option<(V3, V3)>,
}

/// The emitter of one tree's function: the output and the locals' naming.
struct Gen<'a> {
    w: &'a mut String,
}

impl Gen<'_> {
    fn line(&mut self, s: &str) {
        let _ = writeln!(self.w, "    {s}");
    }

    /// `e` bound to the local `name` unless it is a literal or an atom.
    fn scalar(&mut self, name: &str, e: E) -> E {
        match e {
            E::X(_, p) if p < 2 => {
                self.line(&format!("let {name} = {};", e.text()));
                E::atom(name)
            }
            _ => e,
        }
    }

    /// `v` bound to the local array `name` if a component needs it; the components that are
    /// literals or atoms stay as they are.
    fn vec(&mut self, name: &str, v: V3) -> V3 {
        if v.iter().all(|e| e.prec() == 2) {
            return v;
        }
        let t: Vec<String> = v.iter().map(E::text).collect();
        self.line(&format!("let {name} = [{}];", t.join(", ")));
        std::array::from_fn(|i| match &v[i] {
            E::Lit(_) => v[i].clone(),
            _ => E::atom(format!("{name}[{i}]")),
        })
    }

    /// `m` bound to the local row-major array `name` (as [`Gen::vec`]).
    fn mat(&mut self, name: &str, m: M3) -> M3 {
        if m.iter().flatten().all(|e| e.prec() == 2) {
            return m;
        }
        let rows: Vec<String> = m
            .iter()
            .map(|r| format!("[{}]", r.iter().map(E::text).collect::<Vec<_>>().join(", ")))
            .collect();
        self.line(&format!("let {name} = [{}];", rows.join(", ")));
        std::array::from_fn(|i| {
            std::array::from_fn(|j| match &m[i][j] {
                E::Lit(_) => m[i][j].clone(),
                _ => E::atom(format!("{name}[{i}][{j}]")),
            })
        })
    }

    /// `s[at] = e;` unless e is the exact +0 the buffer holds (an entry that is 0 at every state).
    fn store(&mut self, at: usize, e: &E) {
        if let E::Lit(x) = e
            && x.to_bits() == 0
        {
            return;
        }
        self.line(&format!("s[{at}] = {};", e.text()));
    }
}

/// A body's name for the comments (one line).
fn name_of(model: &CompiledModel, b: usize) -> String {
    model.bodies[b].name.replace(['\n', '\r'], " ")
}

/// Writes `tree{t}_kinematics` of `model`'s tree `t` into `out` (and, for tree 0, the prelude it
/// calls).
pub fn emit(model: &CompiledModel, t: usize, out: &mut String) -> Result<(), AccelError> {
    let tree = &model.joints.trees[t];
    check(model, tree)?;
    if t == 0 {
        prelude(out);
        out.push_str(lanes::PRELUDE);
    }
    let l = FlatLayout::of(tree);
    let n = tree.n_coords();
    let nt = tree.translation_cols();
    let root = tree
        .root
        .map_or(model.ground_name.clone(), |r| name_of(model, r));
    let _ = writeln!(
        out,
        "\n/// Tree {t} (root '{root}', {} bodies, {n} coordinates): frames, J̇_b ż, the massless \
         leaves' columns, J_b, M_b J_b and M_z's Cholesky factor into its flat buffer \
         (sprung-mbs `Joints::tree_kinematics_rows` on the evaluation path).\n\
         #[inline(never)]\nfn tree{t}_kinematics(r: &[f64; NR], v: &[f64; NV], s: &mut [f64; {}]) -> Result<(), usize> {{",
        tree.bodies.len(),
        l.len
    );
    // Each body's statements on their own, then written in tree order with the isomorphic
    // bodies fused into lanes (lanes::fuse) where they can be.
    let mut bodies: Vec<Body> = Vec::with_capacity(tree.bodies.len());
    let mut texts: Vec<String> = Vec::with_capacity(tree.bodies.len());
    for (lb, &b) in tree.bodies.iter().enumerate() {
        let mut text = String::new();
        let mut g = Gen { w: &mut text };
        let body = match model.joints.defs[b].as_ref() {
            None => free_root(&mut g, model, lb, b, n),
            Some(d) => jointed(&mut g, model, tree, &l, lb, d, &bodies)?,
        };
        // The frame.
        let fo = l.frames + FRAME_LEN * lb;
        for i in 0..3 {
            g.store(fo + i, &body.x[i]);
        }
        for j in 0..3 {
            for i in 0..3 {
                g.store(fo + 3 + 3 * j + i, &body.rot[i][j]);
            }
        }
        for i in 0..3 {
            g.store(fo + 12 + i, &body.v[i]);
            g.store(fo + 15 + i, &body.w[i]);
        }
        if tree.need_acc[lb] {
            let ao = l.acc + ACC_LEN * lb;
            for i in 0..3 {
                g.store(ao + i, &body.acc.0[i]);
                g.store(ao + 3 + i, &body.acc.1[i]);
            }
            if model.joints.defs[b].is_some() {
                for &c in &tree.jac_cols[lb][nt..] {
                    let col = body.jac[c].as_ref().expect("a structural column");
                    for (k, e) in col.iter().enumerate() {
                        g.store(l.jac + (6 * lb + k) * n + c, e);
                    }
                }
            }
        }
        bodies.push(body);
        texts.push(stores_early(&lets_late(&text)));
    }
    write_bodies(model, tree, &texts, out);
    let _ = writeln!(out, "    // M_b J_b, M_z and its Cholesky factor.");
    super::mass_matrix::emit(model, t, out)?;
    let _ = writeln!(out, "    Ok(())\n}}");
    Ok(())
}

/// Writes the bodies' statements `texts` in tree order, the groups of isomorphic bodies
/// ([`lane_candidates`]) fused into lanes ([`lanes::fuse`]) at their first body's place: four
/// lanes where four fuse (on a CPU with AVX, one 256-bit instruction per operation; else, where
/// a 4-lane value would take two of the 16 SSE registers and spill, the same bodies in pairs),
/// else pairs, else one by one.
fn write_bodies(model: &CompiledModel, tree: &Tree, texts: &[String], out: &mut String) {
    let nb = tree.bodies.len();
    // The fused text of each group, at its first body; the bodies written with it.
    let mut fused: Vec<Option<String>> = vec![None; nb];
    let mut taken = vec![false; nb];
    for class in lane_candidates(model, tree) {
        let mut left: Vec<usize> = class;
        while left.len() >= 2 {
            let quad = (left.len() >= 4)
                .then(|| try_fuse(model, tree, texts, &left[..4]))
                .flatten();
            let (text, lbs) = match quad {
                Some(q) => {
                    let lbs = left[..4].to_vec();
                    let mut pairs = String::new();
                    for (_, f) in fuse_pairs(model, tree, texts, &lbs) {
                        pairs.push_str(&f);
                    }
                    let text = format!(
                        "    #[cfg(target_feature = \"avx\")]\n    {{\n{q}    }}\n    \
                         #[cfg(not(target_feature = \"avx\"))]\n    {{\n{pairs}    }}\n"
                    );
                    (text, lbs)
                }
                None => match fuse_pairs(model, tree, texts, &left[..]).into_iter().next() {
                    Some((lbs, f)) if lbs.len() == 2 => (f, lbs),
                    _ => {
                        left.remove(0);
                        continue;
                    }
                },
            };
            fused[lbs[0]] = Some(text);
            for &lb in &lbs {
                taken[lb] = true;
            }
            left.retain(|lb| !lbs.contains(lb));
        }
    }
    for lb in 0..nb {
        match &fused[lb] {
            Some(f) => out.push_str(f),
            None if !taken[lb] => out.push_str(&texts[lb]),
            None => {}
        }
    }
}

/// `lbs` in fused pairs (each with the first later body it fuses with) and, the bodies that
/// fuse with none, alone: (the bodies, their text) in the order of their first bodies.
fn fuse_pairs(
    model: &CompiledModel,
    tree: &Tree,
    texts: &[String],
    lbs: &[usize],
) -> Vec<(Vec<usize>, String)> {
    let mut out = Vec::new();
    let mut left = lbs.to_vec();
    while let Some(&first) = left.first() {
        let pair = left[1..]
            .iter()
            .find_map(|&o| try_fuse(model, tree, texts, &[first, o]).map(|f| (vec![first, o], f)));
        let (group, text) = pair.unwrap_or_else(|| (vec![first], texts[first].clone()));
        left.retain(|lb| !group.contains(lb));
        out.push((group, text));
    }
    out
}

/// A body's statements with each `let` moved down to right before the first statement that
/// reads a name it binds, the stores (which read no entry a `let` of the body reads) after them
/// in their order: the same operations, shorter live ranges. Left as it is if a name is bound
/// twice (a moved statement could then read another binding).
fn lets_late(text: &str) -> String {
    let words = |l: &str| -> Vec<String> {
        l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let bound = |l: &str| -> Vec<String> {
        l.trim_start()
            .strip_prefix("let ")
            .map(|rest| words(rest.split(" = ").next().unwrap_or("")))
            .unwrap_or_default()
    };
    let all: Vec<&str> = text.lines().collect();
    let mut names: Vec<String> = all.iter().flat_map(|l| bound(l)).collect();
    names.sort();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return text.to_string();
    }
    let is_store = |l: &str| l.trim_start().starts_with("s[");
    let mut lines: Vec<&str> = all.iter().copied().filter(|l| !is_store(l)).collect();
    // From the last `let` upwards, each moved before its first reader (or to the end).
    let mut i = lines.len();
    while i > 0 {
        i -= 1;
        let names = bound(lines[i]);
        if names.is_empty() {
            continue;
        }
        let reader = (i + 1..lines.len())
            .find(|&j| words(lines[j]).iter().any(|w| names.contains(w)))
            .unwrap_or(lines.len());
        if reader > i + 1 {
            let l = lines.remove(i);
            lines.insert(reader - 1, l);
        }
    }
    lines.extend(all.iter().copied().filter(|l| is_store(l)));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A body's statements with each store `s[i] = x;` right after the statement that binds the
/// last local it reads (else after the leading comments): the same operations, each output
/// written as soon as it is known, so that it need not stay in a register (or be spilled) to
/// the end of the body.
fn stores_early(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let is_store = |l: &str| l.trim_start().starts_with("s[");
    // The line index that binds each local.
    let mut bound: Vec<(String, usize)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.trim_start().strip_prefix("let ") {
            let pat = rest.split(" = ").next().unwrap_or("");
            for name in pat.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if !name.is_empty() {
                    bound.push((name.to_string(), i));
                }
            }
        }
    }
    let first = lines
        .iter()
        .position(|l| !l.trim_start().starts_with("//"))
        .unwrap_or(lines.len());
    // Per line, the stores to write after it (in their order).
    let mut after: Vec<Vec<&str>> = vec![Vec::new(); lines.len() + 1];
    for l in lines.iter().filter(|l| is_store(l)) {
        let rhs = l.split(" = ").nth(1).unwrap_or("");
        let reads = rhs
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter_map(|w| bound.iter().find(|(n, _)| n == w).map(|&(_, i)| i + 1))
            .max()
            .unwrap_or(first);
        after[reads].push(l);
    }
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        for s in &after[i] {
            out.push_str(s);
            out.push('\n');
        }
        if !is_store(l) {
            out.push_str(l);
            out.push('\n');
        }
    }
    for s in &after[lines.len()] {
        out.push_str(s);
        out.push('\n');
    }
    out
}

/// The fused statements of the bodies `lbs`, if they fuse.
fn try_fuse(model: &CompiledModel, tree: &Tree, texts: &[String], lbs: &[usize]) -> Option<String> {
    let names: Vec<String> = lbs
        .iter()
        .map(|&lb| format!("'{}'", name_of(model, tree.bodies[lb])))
        .collect();
    let group = lanes::Group::new(lbs);
    let lane_texts: Vec<String> = lbs.iter().map(|&lb| texts[lb].clone()).collect();
    lanes::fuse(
        &group,
        &lane_texts,
        &format!("{} lanes: {}", lbs.len(), names.join(", ")),
    )
}

/// The classes of bodies that may share lanes, in tree order: jointed leaves (no body is
/// their child, so no later statement reads their locals) with the same parent, joint kind,
/// number of coordinates and J̇_b ż, each of whose parent comes before the class's first body
/// (its statements move there).
fn lane_candidates(model: &CompiledModel, tree: &Tree) -> Vec<Vec<usize>> {
    let nb = tree.bodies.len();
    let leaf = |lb: usize| !tree.parent_local.contains(&Some(lb));
    let mut classes: Vec<Vec<usize>> = Vec::new();
    let key = |lb: usize| {
        let d = model.joints.defs[tree.bodies[lb]].as_ref();
        d.map(|d| {
            (
                tree.parent_local[lb],
                d.kind,
                d.sources.len(),
                tree.need_acc[lb],
            )
        })
    };
    for lb in 0..nb {
        if !leaf(lb) || key(lb).is_none() {
            continue;
        }
        match classes.iter_mut().find(|c| key(c[0]) == key(lb)) {
            Some(c) => c.push(lb),
            None => classes.push(vec![lb]),
        }
    }
    classes.retain(|c| c.len() >= 2);
    // (Parents come before their children in tree order; the class moves to its first body.)
    for c in &mut classes {
        let first = c[0];
        c.retain(|&lb| tree.parent_local[lb].is_none_or(|p| p < first));
    }
    classes
}

/// The tree's joints the generator writes code for (every kind of the engine; a tabulated
/// joint of at most two coordinates in a spline group).
fn check(model: &CompiledModel, tree: &Tree) -> Result<(), AccelError> {
    for (lb, &b) in tree.bodies.iter().enumerate() {
        let Some(d) = model.joints.defs[b].as_ref() else {
            if lb != 0 || tree.root != Some(b) {
                return Err(unsupported(model, b, "a free body inside a joint tree"));
            }
            continue;
        };
        let ok = match d.kind {
            sm::JointKind::Revolute | sm::JointKind::Prismatic => d.sources.len() == 1,
            sm::JointKind::Fixed => d.sources.is_empty(),
            sm::JointKind::Tabulated => {
                (1..=2).contains(&d.sources.len()) && tree.group_of[lb].is_some()
            }
        };
        if !ok || tree.deps[lb].len() != d.sources.len() {
            return Err(unsupported(
                model,
                b,
                &format!("its {} joint's coordinates", d.kind.name()),
            ));
        }
    }
    Ok(())
}

fn unsupported(model: &CompiledModel, b: usize, what: &str) -> AccelError {
    AccelError::Unsupported {
        model: model.name.clone(),
        what: format!("body '{}': {what}", name_of(model, b)),
    }
}

/// A free root's frame ([`sprung_mbs::joints::Frame::of_free`], the quaternion's matrix of
/// `rotation::quat_to_matrix`); J̇ ż = 0 and its J rows are constant.
fn free_root(g: &mut Gen, model: &CompiledModel, lb: usize, b: usize, n: usize) -> Body {
    g.line(&format!(
        "// Free root '{}' (block {b}).",
        name_of(model, b)
    ));
    let q = |k: usize| E::atom(format!("r[{}]", 7 * b + 3 + k));
    let (qw, qx, qy, qz) = (q(0), q(1), q(2), q(3));
    let p = format!("b{lb}_");
    let norm2 = add(
        &add(&add(&mul(&qw, &qw), &mul(&qx, &qx)), &mul(&qy, &qy)),
        &mul(&qz, &qz),
    );
    let sc = g.scalar(
        &format!("{p}qs"),
        E::X(format!("2.0f64 / ({})", norm2.text()), 1),
    );
    let mut f = |name: &str, a: &E, b2: &E| {
        let e = mul(&mul(&sc, a), b2);
        g.scalar(&format!("{p}{name}"), e)
    };
    let (xx, yy, zz) = (f("xx", &qx, &qx), f("yy", &qy, &qy), f("zz", &qz, &qz));
    let (xy, xz, yz) = (f("xy", &qx, &qy), f("xz", &qx, &qz), f("yz", &qy, &qz));
    let (wx, wy, wz) = (f("wx", &qw, &qx), f("wy", &qw, &qy), f("wz", &qw, &qz));
    let one = E::Lit(1.0);
    let rot = [
        [sub(&one, &add(&yy, &zz)), sub(&xy, &wz), add(&xz, &wy)],
        [add(&xy, &wz), sub(&one, &add(&xx, &zz)), sub(&yz, &wx)],
        [sub(&xz, &wy), add(&yz, &wx), sub(&one, &add(&xx, &yy))],
    ];
    let rot = g.mat(&format!("{p}R"), rot);
    let x = std::array::from_fn(|i| E::atom(format!("r[{}]", 7 * b + i)));
    let v = std::array::from_fn(|i| E::atom(format!("v[{}]", 6 * b + i)));
    let wb: V3 = std::array::from_fn(|i| E::atom(format!("v[{}]", 6 * b + 3 + i)));
    let w = g.vec(&format!("{p}w"), mv(&rot, &wb));
    Body {
        x,
        rot,
        v,
        w,
        acc: (zero3(), zero3()),
        jac: vec![None; n],
    }
}

/// A jointed body: its joint's motion on the parent's frame, J̇_b ż and J_b's columns.
fn jointed(
    g: &mut Gen,
    model: &CompiledModel,
    tree: &Tree,
    l: &FlatLayout,
    lb: usize,
    d: &JointDef,
    bodies: &[Body],
) -> Result<Body, AccelError> {
    let b = d.body;
    let n = tree.n_coords();
    let nt = tree.translation_cols();
    let need_acc = tree.need_acc[lb];
    let pl = tree.parent_local[lb];
    let ground = Body {
        x: zero3(),
        rot: identity(),
        v: zero3(),
        w: zero3(),
        acc: (zero3(), zero3()),
        jac: Vec::new(),
    };
    let p = pl.map_or(&ground, |pl| &bodies[pl]);
    let parent = d
        .parent
        .map_or(model.ground_name.clone(), |q| name_of(model, q));
    let coords: Vec<String> = d.sources.iter().map(|&s| name_of(model, s)).collect();
    g.line(&format!(
        "// Body '{}': {} joint on '{parent}'{}{}.",
        name_of(model, b),
        d.kind.name(),
        if coords.is_empty() {
            String::new()
        } else {
            format!(", coordinates of {}", coords.join(", "))
        },
        if need_acc { "" } else { " (massless leaf)" }
    ));
    let pre = format!("b{lb}_");
    let m = match d.kind {
        sm::JointKind::Revolute | sm::JointKind::Prismatic | sm::JointKind::Fixed => {
            elementary(g, &pre, d, p)
        }
        sm::JointKind::Tabulated => {
            let (grp, off) = tree.group_of[lb].expect("checked");
            let stride = tree.groups[grp].spline.channels();
            let base = l.gev[grp] + off;
            let slot = |k: usize, m: usize| E::atom(format!("s[{}]", base + k * stride + m));
            tabulated(g, &pre, d, p, &slot, need_acc)
        }
    };
    let x = g.vec(&format!("{pre}x"), m.x);
    let rot = g.mat(&format!("{pre}R"), m.rot);
    let v = g.vec(&format!("{pre}v"), m.v);
    let w = g.vec(&format!("{pre}w"), m.w);
    let mut body = Body {
        x,
        rot,
        v,
        w,
        acc: (zero3(), zero3()),
        jac: vec![None; n],
    };
    if !need_acc {
        // The massless leaf's d and joint columns (global) for the projection of its wrench.
        let o = l.dcols + DCOLS_LEN * lb;
        for i in 0..3 {
            g.store(o + i, &m.d[i]);
        }
        for (k, (vc, wc)) in m.cols.iter().enumerate() {
            for i in 0..3 {
                g.store(o + 3 + 6 * k + i, &vc[i]);
                g.store(o + 6 + 6 * k + i, &wc[i]);
            }
        }
        return Ok(body);
    }
    // J̇_b ż: a = a_p + α_p × d + ω_p × (ω_p × d) + 2 ω_p × ṡ (+ the joint's terms).
    let (ap, alp) = &p.acc;
    let wxd = g.vec(&format!("{pre}wpxd"), cross(&p.w, &m.d));
    let mut a = vadd(
        &vadd(&vadd(ap, &cross(alp, &m.d)), &cross(&p.w, &wxd)),
        &vscale(&cross(&p.w, &m.s_dot), &E::Lit(2.0)),
    );
    let mut al = alp.clone();
    if let Some((ba, bal)) = &m.bias {
        al = vadd(&al, bal);
        a = vadd(&a, ba);
    }
    body.acc = (g.vec(&format!("{pre}a"), a), g.vec(&format!("{pre}al"), al));
    // J_b: the parent's columns moved by d (v_b = v_p + ω_p × d, ω_b = R_bᵀ ω_p), then the
    // joint's own (added to the parent's where the follower shares the coordinate).
    let rbt = transpose(&body.rot);
    if let Some(pl) = pl {
        if model.joints.defs[tree.bodies[pl]].is_none() {
            // A free root's J = I: ω_p = R_p e_k, ω_b = R_rel's row k.
            let rel = g.mat(&format!("{pre}rel"), m.rel.clone());
            for (k, relk) in rel.iter().enumerate() {
                let wp: V3 = std::array::from_fn(|i| p.rot[i][k].clone());
                let vb = cross(&wp, &m.d);
                let col = [
                    vb[0].clone(),
                    vb[1].clone(),
                    vb[2].clone(),
                    relk[0].clone(),
                    relk[1].clone(),
                    relk[2].clone(),
                ];
                body.jac[3 + k] = Some(col);
            }
        } else {
            for &c in &tree.jac_cols[pl][nt..] {
                let pc = p.jac[c].as_ref().expect("the parent's structural column");
                let gv: V3 = std::array::from_fn(|i| pc[i].clone());
                let gw: V3 = std::array::from_fn(|i| pc[3 + i].clone());
                let wp = g.vec(&format!("{pre}wp{c}"), mv(&p.rot, &gw));
                let vb = vadd(&gv, &cross(&wp, &m.d));
                let wb = mv(&rbt, &wp);
                body.jac[c] = Some([
                    vb[0].clone(),
                    vb[1].clone(),
                    vb[2].clone(),
                    wb[0].clone(),
                    wb[1].clone(),
                    wb[2].clone(),
                ]);
            }
        }
    }
    for (k, &ci) in tree.deps[lb].iter().enumerate() {
        let (vc, wg) = &m.cols[k];
        let wc = mv(&rbt, wg);
        let x = [&vc[0], &vc[1], &vc[2], &wc[0], &wc[1], &wc[2]];
        let col: [E; 6] = if tree.shared[lb][k] {
            let prev = body.jac[ci].as_ref().expect("a shared column");
            std::array::from_fn(|i| add(&prev[i], x[i]))
        } else {
            x.map(E::clone)
        };
        body.jac[ci] = Some(col);
    }
    for &c in &tree.jac_cols[lb][nt..] {
        let col = body.jac[c].take().expect("a structural column");
        let name = format!("{pre}j{c}");
        let (hv, hw) = col.split_at(3);
        let hv: V3 = std::array::from_fn(|i| hv[i].clone());
        let hw: V3 = std::array::from_fn(|i| hw[i].clone());
        let bv = g.vec(&format!("{name}v"), hv);
        let bw = g.vec(&format!("{name}w"), hw);
        body.jac[c] = Some([
            bv[0].clone(),
            bv[1].clone(),
            bv[2].clone(),
            bw[0].clone(),
            bw[1].clone(),
            bw[2].clone(),
        ]);
    }
    Ok(body)
}

/// Revolute, prismatic and fixed joints ([`JointDef::motion_with`]).
fn elementary(g: &mut Gen, pre: &str, d: &JointDef, p: &Body) -> Motion {
    let axis = lits([d.axis[0], d.axis[1], d.axis[2]]);
    let point = lits([d.point[0], d.point[1], d.point[2]]);
    let s0 = lits([d.s0[0], d.s0[1], d.s0[2]]);
    let rel0 = mat_lits(|i, j| d.rel0[(i, j)]);
    // (A fixed joint has no coordinate: z = ż = 0.)
    let (z, zd) = match d.sources.first() {
        Some(&src) => (
            E::atom(format!("r[{}]", 7 * src)),
            E::atom(format!("v[{}]", 6 * src)),
        ),
        None => (E::zero(), E::zero()),
    };
    let u = g.vec(&format!("{pre}u"), mv(&p.rot, &axis));
    if d.kind == sm::JointKind::Revolute {
        // Q(z) = I + sin z [a]× + (1 − cos z) [a]×² (axis_rotation).
        g.line(&format!(
            "let ({pre}sin, {pre}cos) = {}.sin_cos();",
            z.text()
        ));
        let (sn, cs) = (E::atom(format!("{pre}sin")), E::atom(format!("{pre}cos")));
        let (ax, ay, az) = (&axis[0], &axis[1], &axis[2]);
        let k: M3 = [
            [E::zero(), neg(az), ay.clone()],
            [az.clone(), E::zero(), neg(ax)],
            [neg(ay), ax.clone(), E::zero()],
        ];
        let omc = g.scalar(&format!("{pre}omc"), sub(&E::Lit(1.0), &cs));
        let sk: M3 = std::array::from_fn(|i| std::array::from_fn(|j| mul(&sn, &k[i][j])));
        let ck: M3 = std::array::from_fn(|i| std::array::from_fn(|j| mul(&omc, &k[i][j])));
        let kk = mm(&ck, &k);
        let id = identity();
        let q: M3 = std::array::from_fn(|i| {
            std::array::from_fn(|j| add(&add(&id[i][j], &sk[i][j]), &kk[i][j]))
        });
        let q = g.mat(&format!("{pre}Q"), q);
        let sp = g.vec(
            &format!("{pre}s"),
            vadd(&point, &mv(&q, &vsub(&s0, &point))),
        );
        let e = g.vec(&format!("{pre}e"), mv(&p.rot, &vsub(&sp, &point)));
        let rel = mm(&q, &rel0);
        let uxe = g.vec(&format!("{pre}uxe"), cross(&u, &e));
        let s_dot = g.vec(&format!("{pre}sd"), vscale(&uxe, &zd));
        let dd = g.vec(&format!("{pre}d"), mv(&p.rot, &sp));
        let w = vadd(&p.w, &vscale(&u, &zd));
        let bias_a = vscale(&vscale(&cross(&u, &uxe), &zd), &zd);
        let bias_al = vscale(&cross(&p.w, &u), &zd);
        finish(
            p,
            dd,
            rel,
            s_dot,
            w,
            [(uxe, u), (zero3(), zero3())],
            Some((bias_a, bias_al)),
        )
    } else {
        let sp = vadd(&s0, &vscale(&axis, &z));
        let dd = g.vec(&format!("{pre}d"), mv(&p.rot, &sp));
        let s_dot = g.vec(&format!("{pre}sd"), vscale(&u, &zd));
        let w = p.w.clone();
        let bias = (d.kind == sm::JointKind::Fixed).then(|| (zero3(), zero3()));
        finish(
            p,
            dd,
            rel0,
            s_dot,
            w,
            [(u, zero3()), (zero3(), zero3())],
            bias,
        )
    }
}

fn vsub(a: &V3, b: &V3) -> V3 {
    std::array::from_fn(|i| sub(&a[i], &b[i]))
}

/// The body's frame from the joint's d, R_rel, ṡ and ω: x = x_p + d, R = R_p R_rel,
/// v = v_p + ω_p × d + ṡ.
fn finish(
    p: &Body,
    d: V3,
    rel: M3,
    s_dot: V3,
    w: V3,
    cols: [(V3, V3); 2],
    bias: Option<(V3, V3)>,
) -> Motion {
    Motion {
        x: vadd(&p.x, &d),
        rot: mm(&p.rot, &rel),
        v: vadd(&vadd(&p.v, &cross(&p.w, &d)), &s_dot),
        w,
        rel,
        d,
        s_dot,
        cols,
        bias,
    }
}

/// A tabulated joint ([`JointDef::tabulated_rel`] then [`JointDef::motion_from_rel`]) from its
/// spline group's evaluation `slot(k, m)` (slot k, channel m of the body's six).
fn tabulated(
    g: &mut Gen,
    pre: &str,
    d: &JointDef,
    p: &Body,
    slot: &dyn Fn(usize, usize) -> E,
    bias: bool,
) -> Motion {
    let n = d.sources.len();
    let cd: Vec<E> = d
        .sources
        .iter()
        .map(|&src| E::atom(format!("v[{}]", 6 * src)))
        .collect();
    let v3 = |k: usize, o: usize| -> V3 { std::array::from_fn(|i| slot(k, o + i)) };
    let s = v3(0, 0);
    let phi = v3(0, 3);
    let ds: Vec<V3> = (0..n).map(|k| v3(1 + k, 0)).collect();
    let dphi: Vec<V3> = (0..n).map(|k| v3(1 + k, 3)).collect();
    // ṡ, φ̇ and (with bias) Σ_kl ∂²/∂c_k∂c_l ċ_k ċ_l, in the generic loops' order.
    let (mut sd, mut phid, mut dds, mut ddphi) = (zero3(), zero3(), zero3(), zero3());
    for k in 0..n {
        sd = vadd(&sd, &vscale(&ds[k], &cd[k]));
        phid = vadd(&phid, &vscale(&dphi[k], &cd[k]));
        if bias {
            for (l, cdl) in cd.iter().enumerate() {
                let cc = g.scalar(&format!("{pre}cc{k}{l}"), mul(&cd[k], cdl));
                dds = vadd(&dds, &vscale(&v3(3 + k + l, 0), &cc));
                ddphi = vadd(&ddphi, &vscale(&v3(3 + k + l, 3), &cc));
            }
        }
    }
    let sd = g.vec(&format!("{pre}srd"), sd);
    let phid = g.vec(&format!("{pre}phid"), phid);
    let (dds, ddphi) = if bias {
        (
            g.vec(&format!("{pre}dds"), dds),
            g.vec(&format!("{pre}ddphi"), ddphi),
        )
    } else {
        (dds, ddphi)
    };
    let theta2 = dot(&phi, &phi);
    g.line(&format!(
        "let ({pre}S, {pre}A, {pre}B, {pre}dA, {pre}dB) = rot_coeffs({}, {bias});",
        theta2.text()
    ));
    let at = |x: &str| E::atom(format!("{pre}{x}"));
    let (sa, a, bb, da, db) = (at("S"), at("A"), at("B"), at("dA"), at("dB"));
    // J_l(φ) x = x + A φ × x + B φ × (φ × x).
    let jl = |g: &mut Gen, name: &str, x: &V3| -> V3 {
        let px = g.vec(&format!("{pre}p{name}"), cross(&phi, x));
        g.vec(
            &format!("{pre}{name}"),
            vadd(&vadd(x, &vscale(&px, &a)), &vscale(&cross(&phi, &px), &bb)),
        )
    };
    let wcols: Vec<V3> = (0..n)
        .map(|k| jl(g, &format!("wcol{k}"), &dphi[k]))
        .collect();
    let al_rel = if bias {
        let pp = g.vec(&format!("{pre}pp"), cross(&phi, &phid));
        let rate = g.scalar(&format!("{pre}rate"), dot(&phi, &phid));
        let j = jl(g, "jdd", &ddphi);
        let e = vadd(
            &vadd(
                &vadd(&j, &vscale(&pp, &mul(&da, &rate))),
                &vscale(&cross(&phi, &pp), &mul(&db, &rate)),
            ),
            &vscale(&cross(&phid, &pp), &bb),
        );
        g.vec(&format!("{pre}alrel"), e)
    } else {
        zero3()
    };
    let mut w_rel = zero3();
    for k in 0..n {
        w_rel = vadd(&w_rel, &vscale(&wcols[k], &cd[k]));
    }
    let w_rel = g.vec(&format!("{pre}wrel"), w_rel);
    // exp([φ]×) (rotation_from_coeffs).
    let (x, y, z) = (&phi[0], &phi[1], &phi[2]);
    let (ax, ay, az) = (mul(&a, x), mul(&a, y), mul(&a, z));
    let (ax, ay, az) = (
        g.scalar(&format!("{pre}ax"), ax),
        g.scalar(&format!("{pre}ay"), ay),
        g.scalar(&format!("{pre}az"), az),
    );
    let (sx, sy, sz) = (
        g.scalar(&format!("{pre}sx"), mul(&sa, x)),
        g.scalar(&format!("{pre}sy"), mul(&sa, y)),
        g.scalar(&format!("{pre}sz"), mul(&sa, z)),
    );
    let one = E::Lit(1.0);
    let rrot: M3 = [
        [
            add(&one, &sub(&mul(&neg(&az), z), &mul(&ay, y))),
            add(&neg(&sz), &mul(&ay, x)),
            add(&sy, &mul(&az, x)),
        ],
        [
            add(&sz, &mul(&ax, y)),
            add(&one, &sub(&mul(&neg(&az), z), &mul(&ax, x))),
            add(&neg(&sx), &mul(&az, y)),
        ],
        [
            add(&neg(&sy), &mul(&ax, z)),
            add(&sx, &mul(&ay, z)),
            add(&one, &sub(&mul(&neg(&ay), y), &mul(&ax, x))),
        ],
    ];
    let rrot = g.mat(&format!("{pre}Rr"), rrot);
    // On the parent's frame (motion_from_rel).
    let dd = g.vec(&format!("{pre}d"), mv(&p.rot, &s));
    let s_dot = g.vec(&format!("{pre}sd"), mv(&p.rot, &sd));
    let w_relg = g.vec(&format!("{pre}wrelg"), mv(&p.rot, &w_rel));
    let (rot, rel) = if d.rel0_identity {
        (mm(&p.rot, &rrot), rrot)
    } else {
        let rel0 = mat_lits(|i, j| d.rel0[(i, j)]);
        let r = g.mat(&format!("{pre}Rp"), mm(&p.rot, &rrot));
        (mm(&r, &rel0), mm(&rrot, &rel0))
    };
    let mut cols = [(zero3(), zero3()), (zero3(), zero3())];
    for k in 0..n {
        cols[k] = (
            g.vec(&format!("{pre}dsg{k}"), mv(&p.rot, &ds[k])),
            g.vec(&format!("{pre}wcolg{k}"), mv(&p.rot, &wcols[k])),
        );
    }
    let bias = bias.then(|| {
        (
            mv(&p.rot, &dds),
            vadd(&cross(&p.w, &w_relg), &mv(&p.rot, &al_rel)),
        )
    });
    Motion {
        x: vadd(&p.x, &dd),
        rot,
        v: vadd(&vadd(&p.v, &cross(&p.w, &dd)), &s_dot),
        w: vadd(&p.w, &w_relg),
        rel,
        d: dd,
        s_dot,
        cols,
        bias,
    }
}

/// Number of terms of the rotation series (the generic `ROT_TERMS`).
const ROT_TERMS: usize = 10;

/// The generic `ROT_SERIES` (coefficients of θ^2k of S, A, B, A'/θ, B'/θ), formed by the same
/// operations (so the same bits).
fn rot_series() -> [[f64; ROT_TERMS]; 5] {
    // The five coefficients of θ^2k.
    let term = |k: usize| -> [f64; 5] {
        let sign = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        // 1/(2k+m)! for m = 1..5.
        let mut f = [1.0; 6];
        for (m, fm) in f.iter_mut().enumerate().skip(1) {
            let mut x = 1.0;
            for i in 2..=2 * k + m {
                x *= i as f64;
            }
            *fm = 1.0 / x;
        }
        let kk = 2.0 * (k + 1) as f64;
        [
            sign * f[1],
            sign * f[2],
            sign * f[3],
            -sign * kk * f[4],
            -sign * kk * f[5],
        ]
    };
    let terms: [[f64; 5]; ROT_TERMS] = std::array::from_fn(term);
    std::array::from_fn(|m| std::array::from_fn(|k| terms[k][m]))
}

/// The prelude: `rot_coeffs` (the generic `rotation_coeffs`).
fn prelude(out: &mut String) {
    let c = rot_series();
    let horner = |c: &[f64; ROT_TERMS]| {
        let mut e = lit(c[ROT_TERMS - 1]);
        for ck in c[..ROT_TERMS - 1].iter().rev() {
            e = format!("{} + theta2 * ({e})", lit(*ck));
        }
        e
    };
    let _ = writeln!(
        out,
        "\n/// (S, A, B, A'/θ, B'/θ) of exp([φ]×) = I + S [φ]× + A [φ]×² and J_l(φ) = I + A [φ]× + B [φ]×² \
         at θ² (sprung-mbs joints `rotation_coeffs`: ten-term Taylor series in Horner form below θ = 1, \
         closed forms above; without `rates` the last two are 0).\n\
         #[inline(always)]\nfn rot_coeffs(theta2: f64, rates: bool) -> (f64, f64, f64, f64, f64) {{\n    \
         if theta2 < 1.0 {{\n        \
         let s = {};\n        let a = {};\n        let b = {};\n        \
         if !rates {{\n            return (s, a, b, 0.0, 0.0);\n        }}\n        \
         (s, a, b, {}, {})\n    }} else {{\n        \
         let th = theta2.sqrt();\n        let (sn, c) = th.sin_cos();\n        \
         let s = sn / th;\n        let a = (1.0 - c) / theta2;\n        let b = (th - sn) / (theta2 * th);\n        \
         if !rates {{\n            return (s, a, b, 0.0, 0.0);\n        }}\n        \
         let da = sn / (theta2 * th) - 2.0 * (1.0 - c) / (theta2 * theta2);\n        \
         let db = (1.0 - c) / (theta2 * theta2) - 3.0 * (th - sn) / (theta2 * theta2 * th);\n        \
         (s, a, b, da, db)\n    }}\n}}",
        horner(&c[0]),
        horner(&c[1]),
        horner(&c[2]),
        horner(&c[3]),
        horner(&c[4]),
    );
    // The same series on lanes (`Lanes::rot_coeffs` where every lane is below θ = 1).
    let _ = writeln!(
        out,
        "\n/// `rot_coeffs`' series branch on a value with the lanes' operators (the same Horner \
         forms, the same operations lane by lane): (S, A, B, A'/θ, B'/θ), the last two `zero` \
         without `rates`.\n\
         macro_rules! rot_series {{\n    ($theta2:expr, $rates:expr, $zero:expr) => {{{{\n        \
         let theta2 = $theta2;\n        \
         let s = {};\n        let a = {};\n        let b = {};\n        \
         if $rates {{ (s, a, b, {}, {}) }} else {{ (s, a, b, $zero, $zero) }}\n    }}}};\n}}",
        horner(&c[0]),
        horner(&c[1]),
        horner(&c[2]),
        horner(&c[3]),
        horner(&c[4]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(s: &str) -> E {
        E::atom(s)
    }

    #[test]
    fn exact_zeros_and_ones_fold_and_the_order_of_operations_is_kept() {
        let (a, b, c) = (x("a"), x("b"), x("c"));
        assert_eq!(mul(&E::Lit(0.0), &a), E::Lit(0.0));
        assert_eq!(mul(&a, &E::Lit(1.0)), a);
        assert_eq!(mul(&E::Lit(-1.0), &a).text(), "-a");
        assert_eq!(add(&E::Lit(0.0), &a), a);
        assert_eq!(sub(&a, &E::Lit(0.0)), a);
        assert_eq!(mul(&E::Lit(2.0), &E::Lit(0.25)), E::Lit(0.5));
        // Left-associated sums need no parentheses, right-nested ones keep theirs.
        assert_eq!(add(&add(&a, &b), &c).text(), "a + b + c");
        assert_eq!(add(&a, &add(&b, &c)).text(), "a + (b + c)");
        assert_eq!(sub(&a, &sub(&b, &c)).text(), "a - (b - c)");
        assert_eq!(mul(&a, &mul(&b, &c)).text(), "a * (b * c)");
        assert_eq!(mul(&add(&a, &b), &c).text(), "(a + b) * c");
        assert_eq!(mul(&a, &E::Lit(-0.5)).text(), "a * (-0.5f64)");
        // nalgebra's Matrix3 * Vector3: column by column, the zero columns left out.
        let m: M3 = [
            [x("m00"), E::Lit(0.0), x("m02")],
            [x("m10"), x("m11"), x("m12")],
            [E::Lit(0.0), E::Lit(0.0), E::Lit(1.0)],
        ];
        let y = mv(&m, &[x("v0"), x("v1"), x("v2")]);
        assert_eq!(y[0].text(), "m00 * v0 + m02 * v2");
        assert_eq!(y[1].text(), "m10 * v0 + m11 * v1 + m12 * v2");
        assert_eq!(y[2], x("v2"));
    }

    #[test]
    fn the_rotation_series_start_as_the_closed_forms() {
        let c = rot_series();
        assert_eq!(c[0][0], 1.0);
        assert_eq!(c[1][0], 0.5);
        assert_eq!(c[2][0], 1.0 / 6.0);
        assert_eq!(c[3][0], -2.0 / 24.0);
        assert_eq!(c[4][0], -2.0 / 120.0);
    }
}
