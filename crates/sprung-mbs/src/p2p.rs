//! Point-to-point force elements: spring, damper, bump and rebound stops (document 000, section 2;
//! `reference-suspensions.md` §1.4).
//!
//! L = |x_I − x_J|, u = (x_I − x_J)/L, L̇ = u · (v_I − v_J); the scalar force f(L, L̇) is
//! tension-positive: −f u acts on body_i at x_I and +f u on body_j at x_J.
//!
//! The law — L, L̇ from |Δx|² and Δx · Δv ([`length`]), and f(L, L̇) ([`length_law`], [`scalar_force`]) — is
//! written once; the one-element path ([`evaluate`], with partials) and the four-lane pack of
//! the q-only path ([`P2pPack`], marker kinematics and force vectors in SIMD lanes) both call it.

use nalgebra::Vector3;
use sprung_model::Curve;

use crate::compiled::{CompiledModel, DamperLaw, ElementKind, P2pLaw};
use crate::element::{ElementForce, Ends, Partials};
use crate::element_law::OutputInfo;
use crate::elements::{KindInfo, ParamInfo};
use crate::m3::{L4, Lanes, M3};
use crate::pack::{
    LanePack, PackBodies, PackedMarkers, W, Wrenches, cross, dot, lane, lane_elements, to_lanes,
};

/// The markers of a point-to-point kind.
const MARKERS: &[&str] = &["marker_i (body_i)", "marker_j (body_j)"];

/// The outputs of a point-to-point kind (output channel quantities).
const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "force",
        unit: "N",
        description: "scalar force f, tension-positive",
    },
    OutputInfo {
        name: "deflection",
        unit: "m",
        description: "L - L_design",
    },
    OutputInfo {
        name: "length",
        unit: "m",
        description: "marker distance L",
    },
    OutputInfo {
        name: "length_rate",
        unit: "m/s",
        description: "L', positive in extension",
    },
];

/// The point-to-point kinds of `[[force_elements]]` as `sprung elements` lists them.
pub const KINDS: [KindInfo; 3] = [
    KindInfo {
        name: "spring",
        description: "point-to-point spring (document 000, section 2): f = k(L - L_free) + preload + c L'; [[force_elements]], four at a time in SIMD lanes",
        markers: MARKERS,
        parameters: &[
            ParamInfo {
                name: "stiffness",
                unit: "N/m",
                description: "linear rate (or curve: force of L - L_free)",
                default: None,
            },
            ParamInfo {
                name: "free_length",
                unit: "m",
                description: "free length (default: design length)",
                default: Some(f64::NAN),
            },
            ParamInfo {
                name: "preload",
                unit: "N",
                description: "added tension",
                default: Some(0.0),
            },
            ParamInfo {
                name: "damping",
                unit: "Ns/m",
                description: "parallel linear damping",
                default: Some(0.0),
            },
        ],
        states: &[],
        outputs: OUTPUTS,
        inputs: &[],
    },
    KindInfo {
        name: "damper",
        description: "point-to-point damper (document 000, section 2): f = c L', bilinear (rebound / compression) or a curve of L'; [[force_elements]], four at a time in SIMD lanes",
        markers: MARKERS,
        parameters: &[
            ParamInfo {
                name: "damping",
                unit: "Ns/m",
                description: "linear damping (or damping_rebound + damping_compression, or curve: force of L')",
                default: None,
            },
            ParamInfo {
                name: "damping_rebound",
                unit: "Ns/m",
                description: "bilinear: damping in extension (L' > 0)",
                default: Some(f64::NAN),
            },
            ParamInfo {
                name: "damping_compression",
                unit: "Ns/m",
                description: "bilinear: damping in compression (L' < 0)",
                default: Some(f64::NAN),
            },
        ],
        states: &[],
        outputs: OUTPUTS,
        inputs: &[],
    },
    KindInfo {
        name: "stop",
        description: "bump or rebound stop (document 000, section 2): engaged beyond the clearance, f = -+law(penetration) + c L'; [[force_elements]], four at a time in SIMD lanes",
        markers: MARKERS,
        parameters: &[
            ParamInfo {
                name: "kind",
                unit: "-",
                description: "\"bump\" (pushes apart) or \"rebound\" (pulls together)",
                default: None,
            },
            ParamInfo {
                name: "clearance",
                unit: "m",
                description: "travel from the design length to engagement",
                default: None,
            },
            ParamInfo {
                name: "stiffness",
                unit: "N/m",
                description: "linear stop rate (or curve: force of penetration)",
                default: None,
            },
            ParamInfo {
                name: "design_length",
                unit: "m",
                description: "design length (default: marker distance in the design position)",
                default: Some(f64::NAN),
            },
            ParamInfo {
                name: "damping",
                unit: "Ns/m",
                description: "damping while engaged",
                default: Some(0.0),
            },
        ],
        states: &[],
        outputs: OUTPUTS,
        inputs: &[],
    },
];

/// Below this length (m) the direction of a point-to-point element is undefined; the element then
/// exerts no force (validation rejects elements of zero design length).
pub const MIN_LENGTH: f64 = 1e-12;

/// Scalar law: tension-positive force and its derivatives with respect to L and L̇.
#[inline(always)]
pub fn scalar_force(law: &P2pLaw, curves: &[Curve], len: f64, len_rate: f64) -> (f64, f64, f64) {
    match law {
        P2pLaw::Spring {
            stiffness,
            free_length,
            preload,
            damping,
        } => {
            let (fk, dk) = stiffness.eval(curves, len - free_length);
            (fk + preload + damping * len_rate, dk, *damping)
        }
        P2pLaw::Damper(DamperLaw::Characteristic(c)) => {
            let (f, df) = c.eval(curves, len_rate);
            (f, 0.0, df)
        }
        P2pLaw::Damper(DamperLaw::Bilinear {
            rebound,
            compression,
        }) => {
            let c = if len_rate >= 0.0 {
                *rebound
            } else {
                *compression
            };
            (c * len_rate, 0.0, c)
        }
        P2pLaw::Stop {
            bump,
            engage_length,
            law,
            damping,
        } => {
            let pen = if *bump {
                engage_length - len
            } else {
                len - engage_length
            };
            if pen <= 0.0 {
                return (0.0, 0.0, 0.0);
            }
            let (fs, ds) = law.eval(curves, pen);
            // bump: f = -law(L_c - L) → df/dL = +law'; rebound: f = +law(L - L_c) → df/dL = +law'
            let f = if *bump { -fs } else { fs };
            (f + damping * len_rate, ds, *damping)
        }
    }
}

/// Length and length rate of a marker pair ([`length`]), shared by the elements acting there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Length {
    /// L = |Δx|, m.
    pub len: f64,
    /// 1/L, or 0 below [`MIN_LENGTH`].
    pub inv_len: f64,
    /// L̇ = Δx · Δv / L (0 below [`MIN_LENGTH`]), m/s.
    pub len_rate: f64,
}

/// L, 1/L and L̇ from |Δx|² and Δx · Δv, written once for the one-element path ([`evaluate`])
/// and the lanes of a [`P2pPack`] (once per marker pair there, for all the elements acting at
/// it). One division (the reciprocal of L) instead of two: the divider is a scarce unit in q.
#[inline(always)]
pub(crate) fn length(len2: f64, dx_dv: f64) -> Length {
    let len = len2.sqrt();
    if len > MIN_LENGTH {
        let inv_len = 1.0 / len;
        Length {
            len,
            inv_len,
            len_rate: dx_dv * inv_len,
        }
    } else {
        Length {
            len,
            inv_len: 0.0,
            len_rate: 0.0,
        }
    }
}

/// The scalar law of one element at its [`Length`] ([`length_law`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LengthLaw {
    /// Tension-positive force f(L, L̇) (0 below [`MIN_LENGTH`]), N.
    pub f: f64,
    /// ∂f/∂L, N/m.
    pub f_l: f64,
    /// ∂f/∂L̇, N s/m.
    pub f_ld: f64,
}

/// The element's law at `g`: [`scalar_force`]; below [`MIN_LENGTH`] the direction is
/// undefined and there is no force.
#[inline(always)]
pub(crate) fn length_law(law: &P2pLaw, curves: &[Curve], g: &Length) -> LengthLaw {
    let (f, f_l, f_ld) = if g.len > MIN_LENGTH {
        scalar_force(law, curves, g.len, g.len_rate)
    } else {
        (0.0, 0.0, 0.0)
    };
    LengthLaw { f, f_l, f_ld }
}

/// Evaluates a point-to-point element; partials only when `partials` is set (computed with the
/// lanes `l`).
#[inline(always)]
pub fn evaluate<L: Lanes>(
    l: L,
    law: &P2pLaw,
    curves: &[Curve],
    design_length: f64,
    ends: &Ends,
    partials: bool,
    out: &mut ElementForce,
) {
    let [mi, mj] = ends;
    let dx = mi.x - mj.x;
    let dv = mi.v - mj.v;
    let g = length(dx.norm_squared(), dx.dot(&dv));
    let Length {
        len,
        inv_len,
        len_rate,
    } = g;
    let LengthLaw { f, f_l, f_ld } = length_law(law, curves, &g);
    let u = dx * inv_len;
    let force = -f * u;
    out.force = force;
    out.torque = Vector3::zeros();
    out.point = [mi.x, mj.x];
    out.point_end = [0, 1];
    out.out.force = Vector3::new(f, 0.0, 0.0);
    out.out.deflection = Vector3::new(len - design_length, 0.0, 0.0);
    out.out.length = len;
    out.out.length_rate = len_rate;
    if !partials {
        return;
    }
    // Marker form (see `crate::element`): with P = I − u uᵀ,
    // ∂u = P/L ∂Δx, ∂L = uᵀ ∂Δx, ∂L̇ = Δvᵀ P/L ∂Δx + uᵀ ∂Δv, ∂F = −u (f_L ∂L + f_L̇ ∂L̇) − f ∂u,
    // so ∂F/∂Δx = −u (f_L uᵀ + f_L̇ Δvᵀ P/L) − f P/L and ∂F/∂Δv = −f_L̇ u uᵀ; Δ = I side − J side.
    let (g_x, g_v) = if len <= MIN_LENGTH {
        (M3::ZERO, M3::ZERO)
    } else {
        let uu = M3::outer(l, &u, &u);
        let proj = M3::IDENTITY.sub(l, &uu).scale(l, inv_len);
        // The row f_L uᵀ + f_L̇ Δvᵀ P/L, transposed (P is symmetric).
        let row = f_l * u + f_ld * proj.mul_vec(&dv);
        let g_x = M3::outer(l, &u, &row).add(l, &proj.scale(l, f));
        (g_x.neg(l), uu.scale(l, -f_ld))
    };
    out.partials = Partials {
        f_p: g_x,
        f_v: g_v,
        has_f_v: f_ld != 0.0,
        ..Partials::ZERO
    };
}

// ---------------------------------------------------------------------------------------------
// Four point-to-point elements side by side (`crate::pack`): the force path (q only), one marker
// pair per lane. Marker kinematics, |Δx|², Δx · Δv and the force vectors −f Δx / L are computed in
// the lanes; L and L̇ ([`length`]) and the law ([`length_law`], any law, curve or not) lane by lane.
//
// Elements often share their ends: a damper, its gas spring and its bump and rebound stops all
// act between the same two points of the rod and the tube, a spring and its coil-bind stop
// between the same spring seats. A lane therefore holds one *geometry* (two markers' bodies and
// positions) with the elements acting there; the pack computes the ends once and then the
// elements in rounds (round r: the r-th element of every lane). [`p2p_packs`] shares a geometry
// only where every body still receives its elements' wrenches in element order, so the sums on
// the bodies (and hence the results) are the same bits as element by element.
// ---------------------------------------------------------------------------------------------

/// One element of a [`P2pPack`] lane.
#[derive(Debug, Clone)]
struct P2pLane {
    element: usize,
    law: P2pLaw,
    design_length: f64,
}

/// Up to four geometries (marker pairs) side by side and the elements acting at each (unused
/// lanes repeat lane 0's markers and have no elements).
#[derive(Debug, Clone)]
pub(crate) struct P2pPack {
    /// Per round, per lane: the round's element of the lane's geometry (none once a lane's
    /// elements are done).
    rounds: Vec<[Option<P2pLane>; W]>,
    pub i: PackedMarkers,
    pub j: PackedMarkers,
}

impl P2pPack {
    /// The geometries `lanes` (1…4), each the element indices acting at it in element order;
    /// the markers of a lane are its first element's.
    fn new(model: &CompiledModel, lanes: &[Vec<usize>]) -> Self {
        let first = lane_elements(&lanes.iter().map(|g| g[0]).collect::<Vec<_>>());
        let el = |k: usize| &model.elements[first[k]];
        let n_rounds = lanes.iter().map(Vec::len).max().unwrap_or(0);
        let rounds = (0..n_rounds)
            .map(|r| {
                std::array::from_fn(|k| {
                    let e = *lanes.get(k)?.get(r)?;
                    let element = &model.elements[e];
                    let law = match &element.kind {
                        ElementKind::P2p(law) => law.clone(),
                        ElementKind::Bushing(_) => unreachable!("only point-to-point elements"),
                    };
                    Some(P2pLane {
                        element: e,
                        law,
                        design_length: element.design_length,
                    })
                })
            })
            .collect();
        Self {
            rounds,
            i: PackedMarkers::new(|k| &model.markers[el(k).marker_i]),
            j: PackedMarkers::new(|k| &model.markers[el(k).marker_j]),
        }
    }

    /// Number of elements in the pack.
    pub fn n_elements(&self) -> usize {
        self.rounds.iter().flatten().flatten().count()
    }
}

/// The point-to-point elements `elements` grouped by *geometry* — equal bodies and body-frame
/// positions of both markers (a damper with its gas spring and stops, a spring with its
/// coil-bind stop) — in the order of each geometry's first element, the elements of one in
/// the order of `elements`: the marker pairs whose kinematics the packs ([`p2p_packs`]) and the
/// generated force elements (`sprung-accel`) compute once for all the elements acting there.
pub fn geometries(model: &CompiledModel, elements: &[usize]) -> Vec<Vec<usize>> {
    let ends = |e: usize| {
        let el = &model.elements[e];
        let key = |m: usize| {
            let m = &model.markers[m];
            (m.body, m.position.map(f64::to_bits))
        };
        (key(el.marker_i), key(el.marker_j))
    };
    let mut geometries: Vec<Vec<usize>> = vec![];
    for &e in elements {
        match geometries.iter_mut().find(|g| ends(g[0]) == ends(e)) {
            Some(g) => g.push(e),
            None => geometries.push(vec![e]),
        }
    }
    geometries
}

/// The point-to-point elements `elements` (ascending) in packs: grouped by geometry (equal
/// bodies and body-frame positions of both markers), geometries with more elements first (so
/// that a pack's lanes have equal round counts), four to a pack — provided every body receives
/// the wrenches of its elements in element order in that schedule (rounds of the packs in
/// turn, lanes in turn); else one element per lane in element order.
pub(crate) fn p2p_packs(model: &CompiledModel, elements: &[usize]) -> Vec<P2pPack> {
    let mut geometries = geometries(model, elements);
    geometries.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let schedule = |lanes: &[Vec<usize>]| -> Vec<usize> {
        let mut order = vec![];
        for pack in lanes.chunks(W) {
            let n_rounds = pack.iter().map(Vec::len).max().unwrap_or(0);
            for r in 0..n_rounds {
                order.extend(pack.iter().filter_map(|g| g.get(r)));
            }
        }
        order
    };
    let in_element_order = |order: &[usize]| {
        let mut last: Vec<Option<usize>> = vec![None; model.bodies.len()];
        order.iter().all(|&e| {
            let el = &model.elements[e];
            [el.marker_i, el.marker_j].iter().all(|&m| {
                let Some(b) = model.markers[m].body else {
                    return true;
                };
                let ok = last[b].is_none_or(|p| p <= e);
                last[b] = Some(e);
                ok
            })
        })
    };
    if !in_element_order(&schedule(&geometries)) {
        geometries = elements.iter().map(|&e| vec![e]).collect();
    }
    geometries
        .chunks(W)
        .map(|c| P2pPack::new(model, c))
        .collect()
}

impl LanePack for P2pPack {
    #[inline(always)]
    fn evaluate<L: Lanes>(&self, l: L, curves: &[Curve], bodies: &PackBodies, out: &mut Wrenches) {
        let ends = bodies.ends(l, &self.i, &self.j);
        let (mi, mj, dx, dv) = (&ends.i, &ends.j, &ends.dx, &ends.dv);
        let (mut len2, mut dx_dv) = ([0.0; 4], [0.0; 4]);
        l.store(dot(l, dx, dx), &mut len2);
        l.store(dot(l, dx, dv), &mut dx_dv);
        let (xi, xj): ([L4; 3], [L4; 3]) = (to_lanes(l, &mi.x), to_lanes(l, &mj.x));
        let g: [Length; W] = std::array::from_fn(|k| length(len2[k], dx_dv[k]));
        for round in &self.rounds {
            // Per lane the scalar law; the force is s Δx with s = −f / L.
            // Only the lanes with an element: a padding lane's law would add its curve
            // evaluation to the segment signature a second time (`crate::compiled::eval_curve`),
            // so that every q evaluation differed from the linearisation's and the stepper split
            // every step (s = 0 there).
            let (mut s, mut f) = ([0.0; 4], [0.0; 4]);
            for (k, lane_el) in round.iter().enumerate() {
                let Some(p) = lane_el else { continue };
                f[k] = length_law(&p.law, curves, &g[k]).f;
                s[k] = -f[k] * g[k].inv_len;
            }
            let s = l.load(&s);
            let force = [l.mul(s, dx[0]), l.mul(s, dx[1]), l.mul(s, dx[2])];
            let (fg, ti, tj) = (
                to_lanes(l, &force),
                to_lanes(l, &cross(l, &mi.arm, &force)),
                to_lanes(l, &cross(l, &mj.arm, &force)),
            );
            for (k, lane_el) in round.iter().enumerate() {
                let Some(p) = lane_el else { continue };
                let fk = lane(&fg, k);
                out.add(self.i.body[k], fk, lane(&ti, k));
                out.add(self.j.body[k], -fk, -lane(&tj, k));
                let e = &mut out.elements[p.element];
                e.force = fk;
                e.torque = Vector3::zeros();
                e.point = [lane(&xi, k), lane(&xj, k)];
                e.point_end = [0, 1];
                e.out.force = Vector3::new(f[k], 0.0, 0.0);
                e.out.deflection = Vector3::new(g[k].len - p.design_length, 0.0, 0.0);
                e.out.length = g[k].len;
                e.out.length_rate = g[k].len_rate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model with free bodies a, b, c, d and the point-to-point elements `elements`
    /// (type, marker I, marker J); marker `xk` sits on body x at a point of its own per k.
    fn model(elements: &[(&str, &str, &str)]) -> CompiledModel {
        let mut src = String::from(
            "[model]\nname = \"pairs\"\nground = \"chassis\"\ngravity = [0.0, 0.0, -9.81]\n",
        );
        for (i, b) in ["a", "b", "c", "d"].iter().enumerate() {
            src += &format!(
                "[[bodies]]\nname = \"{b}\"\nmass = 2.0\nposition = [{i}.0, 0.0, 0.0]\n\
                 inertia = {{ principal = [0.1, 0.1, 0.1] }}\n"
            );
            for k in 0..6 {
                src += &format!(
                    "[[markers]]\nname = \"{b}{k}\"\nbody = \"{b}\"\n\
                     global_position = [{i}.{k}, {k}.5, 0.{i}]\n"
                );
            }
        }
        for (n, (kind, i, j)) in elements.iter().enumerate() {
            let law = match *kind {
                "spring" => "stiffness = 1000.0",
                _ => "damping = 40.0",
            };
            src += &format!(
                "[[force_elements]]\ntype = \"{kind}\"\nname = \"e{n}\"\nmarker_i = \"{i}\"\n\
                 marker_j = \"{j}\"\n{law}\n"
            );
        }
        let m = sprung_model::from_toml_str(&src, "pairs.toml").unwrap_or_else(|e| panic!("{e}"));
        crate::compile(&m).unwrap_or_else(|e| panic!("{e}"))
    }

    fn rounds(model: &CompiledModel) -> Vec<usize> {
        let all: Vec<usize> = (0..model.elements.len()).collect();
        p2p_packs(model, &all)
            .iter()
            .map(|p| p.rounds.len())
            .collect()
    }

    #[test]
    fn elements_at_one_marker_pair_share_a_lane() {
        // e0 and e1 act between the same points of a and b, e2 elsewhere: one pack, two rounds.
        let m = model(&[
            ("spring", "a0", "b0"),
            ("damper", "a0", "b0"),
            ("spring", "c0", "d0"),
        ]);
        assert_eq!(rounds(&m), [2]);
        let all: Vec<usize> = (0..3).collect();
        assert_eq!(p2p_packs(&m, &all)[0].n_elements(), 3);
    }

    #[test]
    fn a_pair_is_shared_only_where_each_body_keeps_element_order() {
        // Shared, the pair of e0 and e5 would run e5 in the first pack before e4 in the
        // second, both on bodies a and b: one element per lane instead.
        let pairs = [
            ("spring", "a0", "b0"),
            ("damper", "a1", "b1"),
            ("damper", "a2", "b2"),
            ("damper", "a3", "b3"),
            ("damper", "a4", "b4"),
            ("damper", "a0", "b0"),
        ];
        assert_eq!(rounds(&model(&pairs)), [1, 1]);
        // Without e4 the shared schedule keeps the order: one pack, two rounds.
        let m = model(&[pairs[0], pairs[1], pairs[2], pairs[3], pairs[5]]);
        assert_eq!(rounds(&m), [2]);
    }
}
