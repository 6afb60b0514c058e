//! `forces`: the model's point-to-point force elements (spring, damper, bump and rebound stops;
//! document 000, ../shared/seeds/000_8175e629bee5f91e.txt, section 2 — the scalar law f(L, L̇)
//! along the marker line) as straight-line code on the trees' flat buffers, the accelerator's step beyond the
//! joint trees (document 004, ../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5: the model's
//! force elements written out with their constants folded instead of the generic,
//! data-driven evaluation).
//!
//! It mirrors the q-only path of the engine's four-lane packs, `P2pPack::evaluate`
//! (crates/sprung-mbs/src/p2p.rs) with `PackBodies::ends` and `marker_lanes`
//! (crates/sprung-mbs/src/pack.rs), and the law of `p2p::length`, `p2p::length_law` and
//! `p2p::scalar_force`:
//!
//! - the marker kinematics from the body's frame in its tree's buffer
//!   ([`sprung_mbs::tree_kernel::FlatLayout`]: x, R column-major, v, ω): lever arm R s with the
//!   marker position s folded (products with exact zeros left out), x = x_b + R s,
//!   v = v_b + ω × R s; a ground marker is its constant position at rest;
//! - per marker pair (geometry) once: Δx, Δv, L = |Δx|, 1/L, L̇ = Δx · Δv / L (nothing below
//!   `p2p::MIN_LENGTH`), shared by the elements acting there (a damper and its stops, a spring
//!   and its coil-bind stop), as the packs share a lane;
//! - per element the law with its constants as literals (linear rates, free and engagement
//!   lengths, bilinear damping) and its f, L, L̇ into the output block; per pair the force
//!   F = −(Σ f)/L Δx of its elements together, added to body i's force and torque (arm × F,
//!   about the centre of mass) and subtracted at body j (one wrench per pair instead of one per
//!   element: a damper with its gas spring and two stops costs one);
//! - curves (`Curve::eval`, crates/sprung-model/src/interp.rs) with linear interpolation
//!   (linear or constant extrapolation, any symmetry) as `static` tables of exact literals and
//!   the secants folded (the same division of the same literals): the value is the generic
//!   one bit for bit; with `watch` the curve's segment (`Curve::segment` at
//!   `BREAKPOINT_SLOPE_RATIO`, breakpoints folded) is hashed as `eval_curve` hashes it
//!   (`sprung_mbs::compiled::segment_pair_hash`) and summed into the returned signature.
//!
//! Left to the generic packs (not in [`covered`]): bushings, elements with a marker on a body
//! outside the joint trees, elements with both markers on the ground, and elements with a
//! curve of smooth interpolation or `extrapolation = "error"` (whose excursion record is the
//! host's). The arithmetic is the portable packs' but for the sum over a pair's elements
//! before the product with Δx/L (the packs add one wrench per element) and the order in which
//! the pairs' wrenches reach a body; the packs in AVX2 lanes also fuse some multiply-adds. The
//! two agree to round-off (tests/forces.rs states the measured bound).

use std::fmt::Write;

use sprung_mbs::CompiledModel;
use sprung_mbs::compiled::{
    BREAKPOINT_SLOPE_RATIO, Characteristic, DamperLaw, ElementKind, P2pLaw,
};
use sprung_mbs::p2p::MIN_LENGTH;
use sprung_mbs::tree_kernel::{FRAME_LEN, FlatLayout};
use sprung_model::{Curve, Extrapolation, Interpolation, Symmetry};

use super::lit;

/// The most trees whose buffers the force kernel reads (the plugin passes their pointers in
/// an array of this length); a model with more trees keeps the generic force path.
pub const MAX_TREES: usize = 8;

/// The body's place in the trees: (tree, local index).
fn tree_body(model: &CompiledModel, b: usize) -> Option<(usize, usize)> {
    model
        .joints
        .trees
        .iter()
        .enumerate()
        .find_map(|(t, tree)| tree.bodies.iter().position(|&x| x == b).map(|lb| (t, lb)))
}

/// Whether the generated code reproduces curve `c`'s evaluation (and segment) exactly.
fn curve_supported(c: &Curve) -> bool {
    c.interpolation == Interpolation::Linear
        && c.extrapolation != Extrapolation::Error
        && c.x.len() >= 2
        && c.x.len() == c.y.len()
        && c.x.windows(2).all(|w| w[0] < w[1])
}

/// The characteristics of a point-to-point law.
fn characteristics(law: &P2pLaw) -> Vec<Characteristic> {
    match law {
        P2pLaw::Spring { stiffness, .. } => vec![*stiffness],
        P2pLaw::Damper(DamperLaw::Characteristic(c)) => vec![*c],
        P2pLaw::Damper(DamperLaw::Bilinear { .. }) => vec![],
        P2pLaw::Stop { law, .. } => vec![*law],
    }
}

/// The built-in force elements the generated force kernel evaluates (ascending): the
/// point-to-point elements with both markers on tree bodies or the ground (not both on the
/// ground) whose curves it reproduces; none for a model with more than [`MAX_TREES`] trees.
pub fn covered(model: &CompiledModel) -> Vec<usize> {
    if model.joints.trees.len() > MAX_TREES {
        return vec![];
    }
    let on_trees = |m: usize| {
        model.markers[m]
            .body
            .is_none_or(|b| tree_body(model, b).is_some())
    };
    (0..model.elements.len())
        .filter(|&k| {
            let el = &model.elements[k];
            let ElementKind::P2p(law) = &el.kind else {
                return false;
            };
            let grounded = |m: usize| model.markers[m].body.is_none();
            on_trees(el.marker_i)
                && on_trees(el.marker_j)
                && !(grounded(el.marker_i) && grounded(el.marker_j))
                && characteristics(law).iter().all(|c| match c {
                    Characteristic::Curve(i) => curve_supported(&model.curves[*i]),
                    _ => true,
                })
        })
        .collect()
}

/// A 3-vector of expressions.
type V3 = [String; 3];

/// One marker's kinematics in the generated code: position, lever arm and velocity (None for
/// a ground marker: at rest, no arm), and the body it acts on.
struct MarkerCode {
    body: Option<usize>,
    x: V3,
    arm: Option<V3>,
    v: Option<V3>,
}

fn clean(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Writes the kinematics of marker `m` (variables prefixed `p`) and returns their names.
fn marker(
    w: &mut String,
    model: &CompiledModel,
    layouts: &[FlatLayout],
    m: usize,
    p: &str,
) -> MarkerCode {
    let mk = &model.markers[m];
    let s = mk.position;
    let Some(b) = mk.body else {
        let _ = writeln!(
            w,
            "    // marker '{}' on the ground: at rest at its global position",
            clean(&mk.name)
        );
        return MarkerCode {
            body: None,
            x: std::array::from_fn(|a| lit(s[a])),
            arm: None,
            v: None,
        };
    };
    let (t, lb) = tree_body(model, b).expect("covered elements sit on tree bodies");
    let o = layouts[t].frames + FRAME_LEN * lb;
    let _ = writeln!(
        w,
        "    // marker '{}' on body '{}' (tree {t}, body {lb}): arm = R s, x = x_b + arm, v = v_b + ω × arm",
        clean(&mk.name),
        clean(&model.bodies[b].name)
    );
    let f = format!("f{t}");
    // R column-major: R[r][c] at 3 + 3 c + r.
    for r in 0..3 {
        let terms: Vec<String> = (0..3)
            .filter(|&c| s[c] != 0.0)
            .map(|c| format!("{f}[{}] * {}", o + 3 + 3 * c + r, lit(s[c])))
            .collect();
        let e = if terms.is_empty() {
            "0.0f64".to_string()
        } else {
            terms.join(" + ")
        };
        let _ = writeln!(w, "    let {p}a{r} = {e};");
    }
    for a in 0..3 {
        let _ = writeln!(w, "    let {p}x{a} = {f}[{}] + {p}a{a};", o + a);
    }
    // v_b + ω × arm, the cross product as `pack::cross` forms it.
    let wv = |k: usize| format!("{f}[{}]", o + 15 + k);
    let arm = |k: usize| format!("{p}a{k}");
    for a in 0..3 {
        let (i, j) = ((a + 1) % 3, (a + 2) % 3);
        let _ = writeln!(
            w,
            "    let {p}v{a} = {f}[{}] + ({} * {} - {} * {});",
            o + 12 + a,
            wv(i),
            arm(j),
            wv(j),
            arm(i)
        );
    }
    MarkerCode {
        body: Some(b),
        x: std::array::from_fn(|a| format!("{p}x{a}")),
        arm: Some(std::array::from_fn(arm)),
        v: Some(std::array::from_fn(|a| format!("{p}v{a}"))),
    }
}

/// The expression of characteristic `c` at `x` (a variable name).
fn characteristic(c: &Characteristic, x: &str) -> String {
    match c {
        Characteristic::Zero => "0.0f64".to_string(),
        Characteristic::Linear(k) => format!("{} * {x}", lit(*k)),
        Characteristic::Curve(i) => format!("curve{i}({x}, watch, &mut sig)"),
    }
}

/// `e + c * lr` unless c is 0 (a parallel damping term).
fn plus_damping(e: String, c: f64) -> String {
    if c == 0.0 {
        e
    } else {
        format!("{e} + {} * lr", lit(c))
    }
}

/// The law's tension-positive force f(len, lr) (`p2p::scalar_force`) as a block expression,
/// and a description of the law for the comment.
fn law_code(law: &P2pLaw) -> (String, String) {
    match law {
        P2pLaw::Spring {
            stiffness,
            free_length,
            preload,
            damping,
        } => {
            let mut e = characteristic(stiffness, "d");
            if *preload != 0.0 {
                e = format!("{e} + {}", lit(*preload));
            }
            let e = plus_damping(e, *damping);
            (
                format!("{{ let d = len - {}; {e} }}", lit(*free_length)),
                format!(
                    "spring, f = {} (L - {free_length}) + {preload} + {damping} L'",
                    describe(stiffness)
                ),
            )
        }
        P2pLaw::Damper(DamperLaw::Characteristic(c)) => (
            characteristic(c, "lr"),
            format!("damper, f = {} (L')", describe(c)),
        ),
        P2pLaw::Damper(DamperLaw::Bilinear {
            rebound,
            compression,
        }) => (
            format!(
                "if lr >= 0.0 {{ {} * lr }} else {{ {} * lr }}",
                lit(*rebound),
                lit(*compression)
            ),
            format!("damper, bilinear: {rebound} N s/m in rebound, {compression} in compression"),
        ),
        P2pLaw::Stop {
            bump,
            engage_length,
            law,
            damping,
        } => {
            let pen = if *bump {
                format!("{} - len", lit(*engage_length))
            } else {
                format!("len - {}", lit(*engage_length))
            };
            let fs = characteristic(law, "pen");
            let f = if *bump { format!("-({fs})") } else { fs };
            let f = plus_damping(f, *damping);
            (
                format!("{{ let pen = {pen}; if pen <= 0.0 {{ 0.0 }} else {{ {f} }} }}"),
                format!(
                    "{} stop engaged {} L = {engage_length}, law {}, damping {damping}",
                    if *bump { "bump" } else { "rebound" },
                    if *bump { "below" } else { "above" },
                    describe(law)
                ),
            )
        }
    }
}

fn describe(c: &Characteristic) -> String {
    match c {
        Characteristic::Zero => "0".to_string(),
        Characteristic::Linear(k) => format!("{k}"),
        Characteristic::Curve(i) => format!("curve {i}"),
    }
}

/// `static`s and the function `curve{i}` of curve i: its value at x as `Curve::eval` gives it,
/// and with `watch` its segment's hash added to `sig`.
fn emit_curve(w: &mut String, i: usize, c: &Curve) {
    let n = c.x.len();
    let arr = |v: &[f64]| v.iter().map(|x| lit(*x)).collect::<Vec<_>>().join(", ");
    let secants: Vec<f64> = (0..n - 1)
        .map(|k| (c.y[k + 1] - c.y[k]) / (c.x[k + 1] - c.x[k]))
        .collect();
    let bps = c.breakpoints(BREAKPOINT_SLOPE_RATIO);
    let odd = c.symmetry == Symmetry::Odd;
    let linear_ex = c.extrapolation == Extrapolation::Linear;
    let _ = writeln!(
        w,
        "\n// Curve {i} '{}': linear interpolation, {n} knots, {} extrapolation{}; \
         breakpoints (slope ratio > {BREAKPOINT_SLOPE_RATIO}) at {bps:?}.",
        clean(&c.name),
        if linear_ex { "linear" } else { "constant" },
        if odd { ", odd" } else { "" }
    );
    let _ = writeln!(w, "static C{i}_X: [f64; {n}] = [{}];", arr(&c.x));
    let _ = writeln!(w, "static C{i}_Y: [f64; {n}] = [{}];", arr(&c.y));
    let _ = writeln!(
        w,
        "/// The secants (y[k+1] − y[k]) / (x[k+1] − x[k]).\nstatic C{i}_D: [f64; {}] = [{}];",
        n - 1,
        arr(&secants)
    );
    let _ = writeln!(w, "static C{i}_B: [f64; {}] = [{}];", bps.len(), arr(&bps));
    let _ = writeln!(
        w,
        "#[inline(always)]\nfn curve{i}(x: f64, watch: bool, sig: &mut u64) -> f64 {{"
    );
    if odd {
        let _ = writeln!(
            w,
            "    let (sign, xa) = if x < 0.0 {{ (-1.0f64, -x) }} else {{ (1.0f64, x) }};"
        );
    } else {
        let _ = writeln!(w, "    let xa = x;");
    }
    let (lo, hi) = (lit(c.x[0]), lit(c.x[n - 1]));
    // Curve::segment: |x| for odd curves; beyond a constant extrapolation's table a segment of
    // its own; else the number of breakpoints at or below.
    let xs = if odd { "x.abs()" } else { "x" };
    let count = format!("C{i}_B.iter().map(|b| u32::from(*b <= xs)).sum::<u32>()");
    let seg = if linear_ex {
        count
    } else {
        format!(
            "if xs < {lo} {{ u32::MAX }} else if xs > {hi} {{ u32::MAX - 1 }} else {{ {count} }}"
        )
    };
    let _ = writeln!(
        w,
        "    if watch {{\n        let xs = {xs};\n        let seg: u32 = {seg};\n        \
         *sig = sig.wrapping_add(mix64(({i}u64 << 32) | u64::from(seg)));\n    }}"
    );
    // Curve::eval and table_eval: the interval k of xs (knots belong to the segment on their
    // right; the last interval at the last knot; 0 for NaN).
    let inside = format!(
        "{{ let k = C{i}_X.partition_point(|v| *v <= xa).saturating_sub(1).min({}); \
         C{i}_Y[k] + C{i}_D[k] * (xa - C{i}_X[k]) }}",
        n - 2
    );
    let f = if linear_ex {
        format!(
            "if xa < {lo} {{ C{i}_Y[0] + C{i}_D[0] * (xa - {lo}) }} \
             else if xa > {hi} {{ C{i}_Y[{}] + C{i}_D[{}] * (xa - {hi}) }} \
             else {inside}",
            n - 1,
            n - 2
        )
    } else {
        format!(
            "if xa < {lo} {{ C{i}_Y[0] }} else if xa > {hi} {{ C{i}_Y[{}] }} else {inside}",
            n - 1
        )
    };
    let _ = writeln!(w, "    let f = {f};");
    let _ = writeln!(w, "    {}\n}}", if odd { "sign * f" } else { "f" });
}

/// The helpers of the force kernel.
const HELPERS: &str = r#"
// ---- Point-to-point force elements: helpers ----

/// SplitMix64 finaliser (sprung_mbs::compiled's `mix64`): the hash of a (curve, segment) pair.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
"#;

/// Writes the force kernel `forces` of `model` (the elements of [`covered`]) into `out`, with
/// its curves and helpers; returns the covered elements. Its signature:
///
/// ```text
/// fn forces(f0: &[f64; L0], …, force: &mut [f64; 3 NB], torque: &mut [f64; 3 NB],
///           out: &mut [f64; 3 NE], watch: bool) -> u64
/// ```
pub fn emit(model: &CompiledModel, layouts: &[FlatLayout], out: &mut String) -> Vec<usize> {
    let elements = covered(model);
    let w = out;
    w.push_str(HELPERS);
    let mut curves: Vec<usize> = elements
        .iter()
        .flat_map(|&k| match &model.elements[k].kind {
            ElementKind::P2p(law) => characteristics(law),
            ElementKind::Bushing(_) => vec![],
        })
        .filter_map(|c| match c {
            Characteristic::Curve(i) => Some(i),
            _ => None,
        })
        .collect();
    curves.sort_unstable();
    curves.dedup();
    for &i in &curves {
        emit_curve(w, i, &model.curves[i]);
    }
    // Geometries: elements with equal markers (body and body-frame position of both), in the
    // order of their first element; the elements of one in element order (as the packs group them).
    let geometries = sprung_mbs::p2p::geometries(model, &elements);
    let nb3 = 3 * model.bodies.len();
    let _ = writeln!(
        w,
        "\n/// The point-to-point force elements of model '{}' ({} of {} built-in elements, {} \
         marker pairs): adds their wrenches to `force` and `torque` (3 per body, torque about \
         the centre of mass), writes f, L, L' per element to `out`, returns the segment \
         signature of their curve evaluations (with `watch`).",
        clean(&model.name),
        elements.len(),
        model.elements.len(),
        geometries.len()
    );
    let flats: String = layouts
        .iter()
        .enumerate()
        .map(|(t, l)| format!("f{t}: &[f64; {}], ", l.len))
        .collect();
    let _ = writeln!(
        w,
        "#[inline(never)]\nfn forces({flats}force: &mut [f64; {nb3}], torque: &mut [f64; {nb3}], \
         out: &mut [f64; {}], watch: bool) -> u64 {{\n    let mut sig = 0u64;",
        3 * elements.len()
    );
    for (gi, g) in geometries.iter().enumerate() {
        let el0 = &model.elements[g[0]];
        let names: Vec<String> = g
            .iter()
            .map(|&k| format!("'{}'", clean(&model.elements[k].name)))
            .collect();
        let _ = writeln!(
            w,
            "\n    // ---- Marker pair {gi}: {} ----",
            names.join(", ")
        );
        let _ = writeln!(w, "    {{");
        // The pair's block, written at one indentation level and indented once more below.
        let outer = std::mem::take(w);
        let mi = marker(w, model, layouts, el0.marker_i, "i");
        let mj = marker(w, model, layouts, el0.marker_j, "j");
        for a in 0..3 {
            let _ = writeln!(w, "    let dx{a} = {} - {};", mi.x[a], mj.x[a]);
        }
        for a in 0..3 {
            let e = match (&mi.v, &mj.v) {
                (Some(vi), Some(vj)) => format!("{} - {}", vi[a], vj[a]),
                (Some(vi), None) => vi[a].clone(),
                (None, Some(vj)) => format!("-{}", vj[a]),
                (None, None) => unreachable!("not both on the ground"),
            };
            let _ = writeln!(w, "    let dv{a} = {e};");
        }
        let _ = writeln!(
            w,
            "    // L, 1/L, L' (p2p::length; no direction below {MIN_LENGTH:e} m)\n    \
             let len = (dx0 * dx0 + dx1 * dx1 + dx2 * dx2).sqrt();\n    \
             let has_dir = len > {};\n    \
             let inv = if has_dir {{ 1.0 / len }} else {{ 0.0 }};\n    \
             let lr = if has_dir {{ (dx0 * dv0 + dx1 * dv1 + dx2 * dv2) * inv }} else {{ 0.0 }};",
            lit(MIN_LENGTH)
        );
        for (n, &k) in g.iter().enumerate() {
            let el = &model.elements[k];
            let ElementKind::P2p(law) = &el.kind else {
                unreachable!("covered elements are point-to-point")
            };
            let slot = elements.binary_search(&k).expect("covered");
            let (code, what) = law_code(law);
            let _ = writeln!(w, "    // '{}': {what}", clean(&el.name));
            let _ = writeln!(
                w,
                "    let fe{n}: f64 = if has_dir {{ {code} }} else {{ 0.0 }};\n    \
                 out[{}] = fe{n};\n    out[{}] = len;\n    out[{}] = lr;",
                3 * slot,
                3 * slot + 1,
                3 * slot + 2
            );
        }
        let sum: Vec<String> = (0..g.len()).map(|n| format!("fe{n}")).collect();
        let _ = writeln!(
            w,
            "    // The pair's force F = −(Σ f)/L Δx on body i, −F on body j; torque arm × F.\n    \
             let s = -({}) * inv;\n    let (F0, F1, F2) = (s * dx0, s * dx1, s * dx2);",
            sum.join(" + ")
        );
        for (m, sign) in [(&mi, "+"), (&mj, "-")] {
            let (Some(b), Some(arm)) = (m.body, &m.arm) else {
                continue;
            };
            for a in 0..3 {
                let _ = writeln!(w, "    force[{}] {sign}= F{a};", 3 * b + a);
            }
            for a in 0..3 {
                let (i, j) = ((a + 1) % 3, (a + 2) % 3);
                let _ = writeln!(
                    w,
                    "    torque[{}] {sign}= {} * F{j} - {} * F{i};",
                    3 * b + a,
                    arm[i],
                    arm[j],
                );
            }
        }
        let block = std::mem::replace(w, outer);
        for line in block.lines() {
            let _ = writeln!(w, "    {line}");
        }
        let _ = writeln!(w, "    }}");
    }
    let _ = writeln!(w, "    sig\n}}");
    elements
}
