//! The chain rule of an open element ([`crate::element_law`]): the partials of its
//! (F_k, T_k, ṡ) with respect to its markers' (δp, δφ; δv, δω) and its states, taken to the
//! carrying bodies' global perturbations (δx, δφ; v, ω) and wrenches and added into the blocks
//! of G_rK and G_v (the congruence form of [`crate::pipeline`]).
//!
//! Columns of marker k on body c (lever arm a = x_k − x_c, angular velocity ω):
//! δx: ∂/∂δp;  δφ: −∂/∂δp [a]× + ∂/∂δφ − ∂/∂δv [ω × a]× − ∂/∂δω [ω]×;  v: ∂/∂δv;
//! ω: −∂/∂δv [a]× + ∂/∂δω (a row vector y times −[x]× is the row x × y). Rows of marker k on
//! body c: F and [a]× F + T, plus [F]× [a]× on the body's own δφ (the lever arm turns). State
//! rows and columns are not transformed.
//!
//! Cost (the 40 t truck's linearisation, `docs/truck.md`): the element Jacobians are read in
//! pieces of one column and the six rows of one marker — contiguous in the column-major
//! [`nalgebra::DMatrix`] — so a marker pair costs a dozen bounds checks instead of one per
//! entry; a marker pair without entries (the rows of a marker the element puts no force on,
//! the columns of a marker it does not read) is skipped, and of the others the force or torque
//! rows or the velocity columns without entries are not transformed. The block slots are looked up once per model ([`ChainSlots`]).
//! Where every marker of the element is on a body the chain rule reads every entry, and it
//! clears what it read: the element Jacobian is then all zeros again, so the next linearisation
//! need not zero it ([`ElementScratch::set_partials_cleared`]).

use nalgebra::{Matrix3, Vector3};

use crate::compiled::{CompiledModel, OpenElement};
use crate::element_law::{ElementScratch, MarkerState};
use crate::kinematics::BodyKin;

/// The block slots one open element adds to, looked up once per model.
#[derive(Debug, Clone)]
pub(crate) struct ChainSlots {
    /// Carrying body per marker (`None`: the marker is on the ground).
    bodies: Vec<Option<usize>>,
    /// m × m: slot of the block (body of row marker kr, body of column marker kc) at
    /// kr · m + kc (`usize::MAX` where either marker is on the ground).
    pairs: Vec<usize>,
    /// Per marker: its body's diagonal slot (the turning lever arm).
    own: Vec<usize>,
    /// n_s × m: slot of (state block of state i, body of marker kc) at i · m + kc.
    state_rows: Vec<usize>,
    /// m × n_s: slot of (body of marker kr, state block of state j) at kr · n_s + j.
    state_cols: Vec<usize>,
    /// n_s × n_s: slot of (state block of state i, state block of state j).
    states: Vec<usize>,
    /// Whether every marker is on a body: the chain rule then reads, and clears, every entry
    /// of the element Jacobian.
    clears: bool,
}

impl ChainSlots {
    /// The slots of element `el` of `model`.
    pub(crate) fn new(model: &CompiledModel, el: &OpenElement) -> Self {
        let pattern = &model.pattern;
        let nb = model.bodies.len();
        let m = el.markers.len();
        let ns = el.law.n_states();
        let bodies: Vec<Option<usize>> = el
            .markers
            .iter()
            .map(|&mk| model.markers[mk].body)
            .collect();
        let state_block = |j: usize| nb + el.first_block + j / 6;
        let slot = |i: Option<usize>, j: Option<usize>| match (i, j) {
            (Some(i), Some(j)) => pattern
                .slot(i, j)
                .expect("open element blocks are in the pattern"),
            _ => usize::MAX,
        };
        let mut pairs = Vec::with_capacity(m * m);
        for &br in &bodies {
            for &bc in &bodies {
                pairs.push(slot(br, bc));
            }
        }
        let mut state_rows = Vec::with_capacity(ns * m);
        for i in 0..ns {
            for &bc in &bodies {
                state_rows.push(slot(Some(state_block(i)), bc));
            }
        }
        let mut state_cols = Vec::with_capacity(m * ns);
        for &br in &bodies {
            for j in 0..ns {
                state_cols.push(slot(br, Some(state_block(j))));
            }
        }
        let mut states = Vec::with_capacity(ns * ns);
        for i in 0..ns {
            for j in 0..ns {
                states.push(slot(Some(state_block(i)), Some(state_block(j))));
            }
        }
        Self {
            own: bodies.iter().map(|&c| slot(c, c)).collect(),
            clears: bodies.iter().all(Option::is_some),
            bodies,
            pairs,
            state_rows,
            state_cols,
            states,
        }
    }
}

/// Whether any of `x` is nonzero (−0 counts as zero); a fold without early exit, which the
/// compiler vectorises.
#[inline(always)]
fn any_nonzero(x: &[f64]) -> bool {
    x.iter().fold(0u64, |a, v| a | (v.to_bits() << 1)) != 0
}

/// Stored 6 × 6 block `slot` (row-major) of a block matrix's values.
#[inline(always)]
fn block6(values: &mut [f64], slot: usize) -> &mut [f64; 36] {
    (&mut values[36 * slot..36 * slot + 36])
        .try_into()
        .expect("6 x 6 block")
}

/// The column transform of one row of the element Jacobian for a marker with lever arm `arm`
/// and angular velocity `w` (`w_arm` = ω × a): the row's (δp, δφ, δv, δω) entries `row` become
/// its (δx, δφ, v, ω) entries of the body, in place (a row vector y times −[x]× is the row
/// x × y).
#[inline(always)]
fn column_transform(
    row: &mut [f64; 12],
    arm: &Vector3<f64>,
    w: &Vector3<f64>,
    w_arm: &Vector3<f64>,
) {
    let v3 = |k: usize| Vector3::new(row[k], row[k + 1], row[k + 2]);
    let (p_p, p_phi, v_v, v_w) = (v3(0), v3(3), v3(6), v3(9));
    let phi = p_phi + arm.cross(&p_p) + w_arm.cross(&v_v) + w.cross(&v_w);
    let om = v_w + arm.cross(&v_v);
    row[3..6].copy_from_slice(phi.as_slice());
    row[9..12].copy_from_slice(om.as_slice());
}

/// The row transform of one marker's six rows (F, T) of body columns: T ← [a]× F + T, column by
/// column (the cross product written out per component, as [`Vector3::cross`] computes it).
#[inline(always)]
fn row_transform(rows: &mut [[f64; 12]; 6], arm: &Vector3<f64>, cols: usize) {
    let [f0, f1, f2, t0, t1, t2] = rows;
    for c in 0..cols {
        t0[c] += arm.y * f2[c] - arm.z * f1[c];
        t1[c] += arm.z * f0[c] - arm.x * f2[c];
        t2[c] += arm.x * f1[c] - arm.y * f0[c];
    }
}

/// Adds the chained partials of open element `el` (evaluated with partials into `sc` at
/// `markers`) into the values of G_rK and G_v (module docs); clears the element Jacobian as it
/// reads it where every marker is on a body.
pub(crate) fn chain_open_element(
    slots: &ChainSlots,
    markers: &[MarkerState],
    bodies: &[BodyKin],
    sc: &mut ElementScratch,
    g_rk: &mut [f64],
    g_v: &mut [f64],
) {
    let m = slots.bodies.len();
    let nr = sc.d_velocity.nrows();
    let ns = nr - 6 * m;
    let clear = slots.clears;
    let pd = sc.d_position.as_mut_slice();
    let vd = sc.d_velocity.as_mut_slice();
    for kc in 0..m {
        let Some(cc) = slots.bodies[kc] else { continue };
        let arm = markers[kc].x - bodies[cc].x;
        let w = markers[kc].w;
        let w_arm = w.cross(&arm);
        // The marker's 6 position and 6 velocity columns, contiguous over the rows.
        let pcols = &mut pd[6 * kc * nr..6 * (kc + 1) * nr];
        let vcols = &mut vd[6 * kc * nr..6 * (kc + 1) * nr];
        for kr in 0..m {
            let Some(cr) = slots.bodies[kr] else { continue };
            // The pieces (F rows, T rows) × (12 columns) of this marker pair; a pair without
            // entries (the rows of a marker the element puts no force on, the columns of a
            // marker it does not read) is skipped.
            let mut nz_f = [false; 12];
            let mut nz_t = [false; 12];
            for j in 0..6 {
                let p = &pcols[j * nr + 6 * kr..j * nr + 6 * kr + 6];
                let v = &vcols[j * nr + 6 * kr..j * nr + 6 * kr + 6];
                (nz_f[j], nz_t[j]) = (any_nonzero(&p[..3]), any_nonzero(&p[3..]));
                (nz_f[6 + j], nz_t[6 + j]) = (any_nonzero(&v[..3]), any_nonzero(&v[3..]));
            }
            let f_any = nz_f.iter().any(|&x| x);
            let t_any = nz_t.iter().any(|&x| x);
            if !f_any && !t_any {
                continue;
            }
            let v_any = nz_f[6..].iter().chain(&nz_t[6..]).any(|&x| x);
            let mut rows = [[0.0; 12]; 6];
            for j in 0..12 {
                let cols = if j < 6 { &mut *pcols } else { &mut *vcols };
                let c0 = (j % 6) * nr + 6 * kr;
                let s: &mut [f64; 6] = (&mut cols[c0..c0 + 6]).try_into().expect("six rows");
                for (row, x) in rows.iter_mut().zip(s.iter()) {
                    row[j] = *x;
                }
                if clear && (nz_f[j] || nz_t[j]) {
                    *s = [0.0; 6];
                }
            }
            // Column transform of the rows that have entries; a zero row stays zero.
            let (lo, hi) = (if f_any { 0 } else { 3 }, if t_any { 6 } else { 3 });
            for row in &mut rows[lo..hi] {
                column_transform(row, &arm, &w, &w_arm);
            }
            // Rows of marker kr: F and [a]× F + T.
            let ncols = if v_any { 12 } else { 6 };
            if f_any {
                let arm_r = markers[kr].x - bodies[cr].x;
                row_transform(&mut rows, &arm_r, ncols);
            }
            let slot = slots.pairs[kr * m + kc];
            let (lo, hi) = (if f_any { 0 } else { 3 }, 6);
            let gr = block6(g_rk, slot);
            for a in lo..hi {
                for c in 0..6 {
                    gr[6 * a + c] += rows[a][c];
                }
            }
            if v_any {
                let gv = block6(g_v, slot);
                for a in lo..hi {
                    for c in 0..6 {
                        gv[6 * a + c] += rows[a][6 + c];
                    }
                }
            }
        }
        // State rows: the column transform only.
        for i in 0..ns {
            let r = 6 * m + i;
            let mut row = [0.0; 12];
            for j in 0..6 {
                row[j] = pcols[j * nr + r];
                row[6 + j] = vcols[j * nr + r];
            }
            if !any_nonzero(&row) {
                continue;
            }
            if clear {
                for j in 0..6 {
                    pcols[j * nr + r] = 0.0;
                    vcols[j * nr + r] = 0.0;
                }
            }
            column_transform(&mut row, &arm, &w, &w_arm);
            let (bi_row, slot) = (i % 6, slots.state_rows[i * m + kc]);
            let gr = block6(g_rk, slot);
            for b in 0..6 {
                gr[6 * bi_row + b] += row[b];
            }
            let gv = block6(g_v, slot);
            for b in 0..6 {
                gv[6 * bi_row + b] += row[6 + b];
            }
        }
    }
    for (kr, (body, marker)) in slots.bodies.iter().zip(markers).enumerate() {
        let Some(cr) = *body else { continue };
        let arm_r = marker.x - bodies[cr].x;
        // The lever arm of the force turns with the body: +[F]×[a]× on its own δφ.
        let f = sc.force[kr];
        if f != Vector3::zeros() {
            let own = block6(g_rk, slots.own[kr]);
            let piece = skew(&f) * skew(&arm_r);
            for r in 0..3 {
                for c in 0..3 {
                    own[6 * (3 + r) + 3 + c] += piece[(r, c)];
                }
            }
        }
        // State columns: rows F and [a]× F + T.
        for j in 0..ns {
            let c0 = (6 * m + j) * nr + 6 * kr;
            let s: &mut [f64; 6] = (&mut vd[c0..c0 + 6]).try_into().expect("six rows");
            if !any_nonzero(s) {
                continue;
            }
            let fj = Vector3::new(s[0], s[1], s[2]);
            let tj = Vector3::new(s[3], s[4], s[5]);
            if clear {
                *s = [0.0; 6];
            }
            let tt = arm_r.cross(&fj) + tj;
            let col = j % 6;
            let gv = block6(g_v, slots.state_cols[kr * ns + j]);
            for a in 0..3 {
                gv[6 * a + col] += fj[a];
                gv[6 * (3 + a) + col] += tt[a];
            }
        }
    }
    // State rows against the state columns (the marker columns are above).
    for i in 0..ns {
        for j in 0..ns {
            let e = &mut vd[(6 * m + j) * nr + 6 * m + i];
            if *e == 0.0 {
                continue;
            }
            block6(g_v, slots.states[i * ns + j])[6 * (i % 6) + j % 6] += *e;
            if clear {
                *e = 0.0;
            }
        }
    }
    if clear {
        sc.set_partials_cleared();
    }
}

/// [x]×, the cross-product matrix.
#[inline(always)]
fn skew(x: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -x.z, x.y, x.z, 0.0, -x.x, -x.y, x.x, 0.0)
}

#[cfg(test)]
mod tests {
    //! The chain rule against the same transform written as dense matrix products
    //! (G(c_r, c_c) += R(a_r) · J(k_r, k_c) · C(a_c, ω_c), independent of the piecewise code and
    //! its zero skipping), and the cleared element Jacobian it leaves behind.

    use std::sync::Arc;

    use nalgebra::{DMatrix, Matrix3, Vector3};

    use super::*;
    use crate::element_law::ElementInput;
    use crate::kinematics::{MarkerKin, body_kinematics};

    fn model(name: &str, edit: impl Fn(String) -> String) -> Arc<CompiledModel> {
        let path = format!("{}/../../models/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = edit(std::fs::read_to_string(&path).expect("model file"));
        let m = sprung_model::from_toml_str(&text, name).expect("model loads");
        Arc::new(crate::compile(&m).expect("model compiles"))
    }

    fn put(d: &mut DMatrix<f64>, r: usize, c: usize, m: &Matrix3<f64>) {
        d.fixed_view_mut::<3, 3>(r, c).copy_from(m);
    }

    /// The reference: per marker pair the 6 × 12 piece of (F, T) × (δp, δφ, δv, δω) times the
    /// 12 × 12 column map to (δx, δφ, v, ω), rows mapped by [[I, 0], [[a]×, I]].
    #[allow(clippy::too_many_arguments)]
    fn reference(
        model: &CompiledModel,
        el: &OpenElement,
        markers: &[MarkerState],
        bodies: &[BodyKin],
        force: &[Vector3<f64>],
        pd: &DMatrix<f64>,
        vd: &DMatrix<f64>,
        n_stored: usize,
    ) -> (Vec<f64>, Vec<f64>) {
        let (mut g_rk, mut g_v) = (vec![0.0; 36 * n_stored], vec![0.0; 36 * n_stored]);
        let m = el.markers.len();
        let ns = el.law.n_states();
        let nb = model.bodies.len();
        let body = |k: usize| model.markers[el.markers[k]].body;
        let state_block = |j: usize| (nb + el.first_block + j / 6, j % 6);
        let slot = |i: usize, j: usize| model.pattern.slot(i, j).expect("stored");
        let arm = |k: usize| markers[k].x - bodies[body(k).expect("on a body")].x;
        let colmap = |k: usize| {
            let (a, w) = (arm(k), markers[k].w);
            let mut c = DMatrix::<f64>::zeros(12, 12);
            let i3 = Matrix3::identity();
            put(&mut c, 0, 0, &i3);
            put(&mut c, 3, 3, &i3);
            put(&mut c, 0, 3, &-a.cross_matrix());
            put(&mut c, 6, 3, &-w.cross(&a).cross_matrix());
            put(&mut c, 9, 3, &-w.cross_matrix());
            put(&mut c, 6, 6, &i3);
            put(&mut c, 9, 9, &i3);
            put(&mut c, 6, 9, &-a.cross_matrix());
            c
        };
        let rowmap = |k: usize| {
            let mut r = DMatrix::<f64>::identity(6, 6);
            put(&mut r, 3, 0, &arm(k).cross_matrix());
            r
        };
        let piece = |rows: std::ops::Range<usize>, kc: usize| {
            let mut j = DMatrix::<f64>::zeros(rows.len(), 12);
            j.view_mut((0, 0), (rows.len(), 6))
                .copy_from(&pd.view((rows.start, 6 * kc), (rows.len(), 6)));
            j.view_mut((0, 6), (rows.len(), 6))
                .copy_from(&vd.view((rows.start, 6 * kc), (rows.len(), 6)));
            j
        };
        let add = |g: &mut Vec<f64>, s: usize, r: usize, c: usize, x: f64| {
            g[36 * s + 6 * r + c] += x;
        };
        for kc in 0..m {
            let cc = body(kc).expect("on a body");
            for kr in 0..m {
                let cr = body(kr).expect("on a body");
                let g = rowmap(kr) * piece(6 * kr..6 * kr + 6, kc) * colmap(kc);
                for r in 0..6 {
                    for c in 0..6 {
                        add(&mut g_rk, slot(cr, cc), r, c, g[(r, c)]);
                        add(&mut g_v, slot(cr, cc), r, c, g[(r, 6 + c)]);
                    }
                }
            }
            for i in 0..ns {
                let g = piece(6 * m + i..6 * m + i + 1, kc) * colmap(kc);
                let (bi, row) = state_block(i);
                for c in 0..6 {
                    add(&mut g_rk, slot(bi, cc), row, c, g[(0, c)]);
                    add(&mut g_v, slot(bi, cc), row, c, g[(0, 6 + c)]);
                }
            }
        }
        for (kr, f) in force.iter().enumerate() {
            let cr = body(kr).expect("on a body");
            let own = f.cross_matrix() * arm(kr).cross_matrix();
            for r in 0..3 {
                for c in 0..3 {
                    add(&mut g_rk, slot(cr, cr), 3 + r, 3 + c, own[(r, c)]);
                }
            }
            for j in 0..ns {
                let (bj, col) = state_block(j);
                let g = rowmap(kr) * vd.view((6 * kr, 6 * m + j), (6, 1));
                for r in 0..6 {
                    add(&mut g_v, slot(cr, bj), r, col, g[(r, 0)]);
                }
            }
        }
        for i in 0..ns {
            for j in 0..ns {
                let ((bi, row), (bj, col)) = (state_block(i), state_block(j));
                add(&mut g_v, slot(bi, bj), row, col, vd[(6 * m + i, 6 * m + j)]);
            }
        }
        (g_rk, g_v)
    }

    /// Every open element of `model` at a state with velocities, twice (the second time on the
    /// Jacobian scratch the first chain rule cleared): the chained blocks against the
    /// reference (round-off of differently ordered sums: 1e-12 of the largest entry), and the
    /// cleared scratch.
    fn check(model: &CompiledModel) {
        let (r, mut v) = model.design_state();
        for (k, x) in v.iter_mut().enumerate() {
            *x = 0.3 * ((k as f64) * 0.7).sin();
        }
        let mut bodies = vec![BodyKin::default(); model.bodies.len()];
        body_kinematics(model, &r, &v, &mut bodies);
        let n_stored = model.pattern.n_stored();
        for el in &model.open_elements {
            let slots = ChainSlots::new(model, el);
            assert!(slots.clears, "{}: every marker on a body", el.name);
            let markers: Vec<MarkerState> = el
                .markers
                .iter()
                .map(|&mk| MarkerState::of(&MarkerKin::new(&model.markers[mk], &bodies)))
                .collect();
            let ns = el.law.n_states();
            let states: Vec<f64> = (0..ns).map(|k| 0.01 * (k as f64 + 1.0)).collect();
            let inputs = vec![0.0; el.law.inputs().len()];
            let x = ElementInput {
                t: 0.3,
                markers: &markers,
                states: &states,
                inputs: &inputs,
            };
            let mut sc = ElementScratch::new(el.law.as_ref());
            for pass in 0..2 {
                sc.evaluate_with_partials(el.law.as_ref(), &x);
                let (pd, vd) = (sc.d_position.clone(), sc.d_velocity.clone());
                assert!(pd.amax() > 0.0 && vd.amax() > 0.0, "{}: partials", el.name);
                let (ref_rk, ref_v) =
                    reference(model, el, &markers, &bodies, &sc.force, &pd, &vd, n_stored);
                let (mut g_rk, mut g_v) = (vec![0.0; 36 * n_stored], vec![0.0; 36 * n_stored]);
                chain_open_element(&slots, &markers, &bodies, &mut sc, &mut g_rk, &mut g_v);
                for (name, got, want) in [("G_rK", &g_rk, &ref_rk), ("G_v", &g_v, &ref_v)] {
                    let scale = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
                    let err = got
                        .iter()
                        .zip(want.iter())
                        .fold(0.0f64, |a, (g, w)| a.max((g - w).abs()));
                    assert!(
                        err <= 1e-12 * scale,
                        "{} pass {pass}: {name} differs by {err:e} (scale {scale:e})",
                        el.name
                    );
                }
                assert!(
                    sc.d_position
                        .iter()
                        .chain(sc.d_velocity.iter())
                        .all(|x| *x == 0.0),
                    "{}: the chain rule leaves the element Jacobian cleared",
                    el.name
                );
            }
        }
    }

    #[test]
    fn chained_blocks_match_the_dense_products_and_the_scratch_is_cleared() {
        // Three markers, no states.
        check(&model("anti_roll_bar.toml", |s| s));
        // A state on two bodies: the Maxwell element's anchor moved from the ground onto a
        // second body.
        check(&model("maxwell_solid.toml", |s| {
            s.replace(
                "name = \"anchor\"\nbody = \"ground\"",
                "name = \"anchor\"\nbody = \"frame\"",
            ) + "\n[[bodies]]\nname = \"frame\"\nmass = 50.0\nposition = [-0.6, 0.1, 0.2]\ninertia = { principal = [0.5, 0.6, 0.7] }\n"
        }));
    }
}
