//! Four bushings side by side: the force path (q only) of linear bushings, one bushing per lane.
//!
//! Document 000 (section 3, Table 2) evaluates q twice per LSRT2 step and the linearisation only
//! every k steps, so with Jacobian reuse the force path of the bushings dominates the step. One
//! bushing's kinematics are short chains of 3 × 3 products ([`crate::bushing`]); in
//! [`crate::m3`]'s row lanes they leave a quarter of every register idle (the padding lane) and
//! are dominated by shuffles. Here four bushings share each register instead: lane k holds
//! bushing k of a *pack*, every quantity (a coordinate of a lever arm, one entry of a rotation
//! matrix) is one four-lane value, and every product is plain lane-wise multiply-adds.
//!
//! The equations are exactly those of [`crate::bushing::evaluate`] (deflections in the axes of
//! marker J, rotation vector of R_Jᵀ R_I, f = preload − (k d + c ḋ) per axis) and of the marker
//! kinematics ([`crate::kinematics::MarkerKin`]); the results agree with the one-bushing path to
//! round-off (fused multiply-adds, other summation order — tested in `tests/jacobian_fd.rs`).
//!
//! Packed are all bushings whose rotational deflection is the rotation vector (no free spin
//! axis). Linear characteristics are lane-wise multiply-adds; a tabulated curve is evaluated for
//! its own lane and axis after the linear part (its slope is zero in the lanes), so bushings with
//! curves are packed too — together, after the linear ones, so that few packs need a curve.
//! Swing vectors and point-to-point elements stay on the one-element path; so does the
//! linearisation, which needs the partials. Rotation angles beyond the square-root-free series of
//! [`crate::rotation::small_angle_ratio`] (≈ 0.06 rad) are rare in a bushing; a pack with one
//! such lane computes the rotation vectors of its lanes one by one with
//! [`crate::bushing::log_with_inv_jacobian`], so every angle is handled exactly as on the
//! one-element path.

use nalgebra::{Matrix3, Vector3};
use sprung_model::Curve;

use crate::bushing::log_with_inv_jacobian;
use crate::compiled::{Characteristic, CompiledModel, ElementKind};
use crate::element::ElementForce;
use crate::kinematics::BodyKin;
use crate::m3::{L4, Lanes};
use crate::rotation::{ASIN_RATIO_SERIES, SERIES_U_MAX, SHORT_SERIES_U_MAX};

/// Lanes per pack.
const W: usize = 4;

/// Three four-lane values: one 3-vector per lane.
type V3<V> = [V; 3];
/// Nine four-lane values: one 3 × 3 matrix per lane, `m[row][col]`.
type V33<V> = [[V; 3]; 3];

/// A four-lane value from the lane expressions `|k| expr` for k = 0…3 (a macro rather than a
/// closure: see [`crate::m3`] on closures in the AVX2 copies).
macro_rules! gather {
    ($l:expr, |$k:ident| $e:expr) => {
        $l.load(&[
            {
                let $k = 0;
                $e
            },
            {
                let $k = 1;
                $e
            },
            {
                let $k = 2;
                $e
            },
            {
                let $k = 3;
                $e
            },
        ])
    };
}

/// Constant data of one marker per lane: position (body frame) and axes (relative to the body).
#[derive(Debug, Clone)]
struct PackedMarkers {
    body: [Option<usize>; W],
    /// Position per coordinate, lanes = bushings.
    s: [L4; 3],
    /// Axes entry (row, col) per lane.
    axes: [[L4; 3]; 3],
}

/// A tabulated characteristic of one lane: `group` 0…3 = stiffness, damping, rotational
/// stiffness, rotational damping (argument d, ḋ, θ, θ̇), local `axis` 0…2.
#[derive(Debug, Clone, Copy)]
struct CurveLaw {
    lane: usize,
    group: usize,
    axis: usize,
    curve: usize,
}

/// Four bushings (unused lanes repeat lane 0 and are not written back).
#[derive(Debug, Clone)]
struct Pack {
    /// The tabulated characteristics of the pack's lanes (their slopes are zero in the lanes).
    curves: Vec<CurveLaw>,
    element: [usize; W],
    used: usize,
    i: PackedMarkers,
    j: PackedMarkers,
    preload: [L4; 3],
    rot_preload: [L4; 3],
    stiffness: [L4; 3],
    damping: [L4; 3],
    rot_stiffness: [L4; 3],
    rot_damping: [L4; 3],
}

/// The packs of a model and the elements that stay on the one-element path.
#[derive(Debug, Clone)]
pub struct BushingPacks {
    packs: Vec<Pack>,
    unpacked: Vec<usize>,
    /// Kinematics of the ground (identity, at rest): ground markers read it like a body.
    ground: BodyKin,
}

/// The slope of a characteristic in the lanes: that of a linear one, zero for zero and for a
/// curve (evaluated per lane, [`CurveLaw`]).
fn lane_slope(c: &Characteristic) -> f64 {
    match *c {
        Characteristic::Linear(k) => k,
        Characteristic::Zero | Characteristic::Curve(_) => 0.0,
    }
}

/// The four characteristic groups of a bushing in [`CurveLaw`] order.
fn groups(b: &crate::compiled::Bushing) -> [&[Characteristic; 3]; 4] {
    [&b.stiffness, &b.damping, &b.rot_stiffness, &b.rot_damping]
}

impl BushingPacks {
    /// Groups the packable bushings of `model` in element order, four to a pack.
    pub fn new(model: &CompiledModel) -> Self {
        let mut linear = Vec::new();
        let mut with_curves = Vec::new();
        let mut unpacked = Vec::new();
        for (k, el) in model.elements.iter().enumerate() {
            match &el.kind {
                ElementKind::Bushing(b) if b.spin_axis.is_none() => {
                    let curved = groups(b)
                        .iter()
                        .any(|g| g.iter().any(|c| matches!(c, Characteristic::Curve(_))));
                    if curved {
                        with_curves.push(k);
                    } else {
                        linear.push(k);
                    }
                }
                _ => unpacked.push(k),
            }
        }
        let packable = [linear, with_curves].concat();
        let packs = packable
            .chunks(W)
            .map(|chunk| Pack::new(model, chunk))
            .collect();
        Self {
            packs,
            unpacked,
            ground: BodyKin::default(),
        }
    }

    /// Elements not in a pack, in element order.
    pub fn unpacked(&self) -> &[usize] {
        &self.unpacked
    }

    /// Number of packed bushings.
    pub fn n_packed(&self) -> usize {
        self.packs.iter().map(|p| p.used).sum()
    }

    /// Evaluates every pack: adds the bushings' wrenches (force; torque about the centre of mass)
    /// to `force` and `torque` per body and writes each bushing's result (without partials) to
    /// `elements`.
    #[inline(always)]
    pub fn forces<L: Lanes>(
        &self,
        l: L,
        curves: &[Curve],
        bodies: &[BodyKin],
        force: &mut [Vector3<f64>],
        torque: &mut [Vector3<f64>],
        elements: &mut [ElementForce],
    ) {
        for p in &self.packs {
            let bi = lane_bodies(&p.i, bodies, &self.ground);
            let bj = lane_bodies(&p.j, bodies, &self.ground);
            let mi = marker_lanes(l, &bi, &p.i);
            let mj = marker_lanes(l, &bj, &p.j);
            let dx = sub3(l, &mi.x, &mj.x);
            let dv = sub3(l, &mi.v, &mj.v);
            let dw = sub3(l, &mi.w, &mj.w);
            let d = mat_t_vec(l, &mj.rot, &dx);
            let d_dot = mat_t_vec(l, &mj.rot, &dv);
            let theta_dot = mat_t_vec(l, &mj.rot, &dw);
            let theta = rotation_vector(l, &mat_t_mat(l, &mj.rot, &mi.rot));
            let mut f = law(l, &p.preload, &p.stiffness, &p.damping, &d, &d_dot);
            let mut t = law(
                l,
                &p.rot_preload,
                &p.rot_stiffness,
                &p.rot_damping,
                &theta,
                &theta_dot,
            );
            if !p.curves.is_empty() {
                (f, t) = curve_laws(l, &p.curves, curves, [&d, &d_dot, &theta, &theta_dot], f, t);
            }
            let force_g = mat_vec(l, &mj.rot, &f);
            let torque_g = mat_vec(l, &mj.rot, &t);
            // Torques about the centres of mass of body I (arm a_I) and body J (x_I − x_J + a_J).
            let tau_i = add3(l, &cross(l, &mi.arm, &force_g), &torque_g);
            let tau_j = add3(l, &cross(l, &add3(l, &dx, &mj.arm), &force_g), &torque_g);
            let (fg, tg, ti, tj) = (
                to_lanes(l, &force_g),
                to_lanes(l, &torque_g),
                to_lanes(l, &tau_i),
                to_lanes(l, &tau_j),
            );
            let (xi, fl, tl, dl, thl) = (
                to_lanes(l, &mi.x),
                to_lanes(l, &f),
                to_lanes(l, &t),
                to_lanes(l, &d),
                to_lanes(l, &theta),
            );
            let lane = |v: &[L4; 3], k: usize| Vector3::new(v[0][k], v[1][k], v[2][k]);
            for k in 0..p.used {
                let fk = lane(&fg, k);
                if let Some(b) = p.i.body[k] {
                    force[b] += fk;
                    torque[b] += lane(&ti, k);
                }
                if let Some(b) = p.j.body[k] {
                    force[b] -= fk;
                    torque[b] -= lane(&tj, k);
                }
                let e = &mut elements[p.element[k]];
                e.force = fk;
                e.torque = lane(&tg, k);
                let x = lane(&xi, k);
                e.point = [x, x];
                e.point_end = [0, 0];
                e.out.force = lane(&fl, k);
                e.out.torque = lane(&tl, k);
                e.out.deflection = lane(&dl, k);
                e.out.rot_deflection = lane(&thl, k);
            }
        }
    }
}

impl Pack {
    fn new(model: &CompiledModel, chunk: &[usize]) -> Self {
        let element: [usize; W] = std::array::from_fn(|k| chunk[k.min(chunk.len() - 1)]);
        let bushing = |k: usize| match &model.elements[element[k]].kind {
            ElementKind::Bushing(b) => b,
            ElementKind::P2p(_) => unreachable!("only bushings are packed"),
        };
        let slopes = |pick: fn(&crate::compiled::Bushing) -> &[Characteristic; 3]| -> [L4; 3] {
            std::array::from_fn(|a| std::array::from_fn(|k| lane_slope(&pick(bushing(k))[a])))
        };
        let vectors = |pick: fn(&crate::compiled::Bushing) -> Vector3<f64>| -> [L4; 3] {
            std::array::from_fn(|a| std::array::from_fn(|k| pick(bushing(k))[a]))
        };
        let markers = |end: usize| {
            let m = |k: usize| {
                let el = &model.elements[element[k]];
                &model.markers[if end == 0 { el.marker_i } else { el.marker_j }]
            };
            PackedMarkers {
                body: std::array::from_fn(|k| m(k).body),
                s: std::array::from_fn(|a| std::array::from_fn(|k| m(k).position[a])),
                axes: std::array::from_fn(|r| {
                    std::array::from_fn(|c| std::array::from_fn(|k| m(k).axes[(r, c)]))
                }),
            }
        };
        let mut curves = Vec::new();
        for lane in 0..chunk.len() {
            for (group, g) in groups(bushing(lane)).iter().enumerate() {
                for (axis, c) in g.iter().enumerate() {
                    if let Characteristic::Curve(curve) = *c {
                        curves.push(CurveLaw {
                            lane,
                            group,
                            axis,
                            curve,
                        });
                    }
                }
            }
        }
        Self {
            curves,
            element,
            used: chunk.len(),
            i: markers(0),
            j: markers(1),
            preload: vectors(|b| b.preload),
            rot_preload: vectors(|b| b.rot_preload),
            stiffness: slopes(|b| &b.stiffness),
            damping: slopes(|b| &b.damping),
            rot_stiffness: slopes(|b| &b.rot_stiffness),
            rot_damping: slopes(|b| &b.rot_damping),
        }
    }
}

/// Kinematics of one marker per lane (see [`crate::kinematics::MarkerKin`]).
struct MarkerLanes<V> {
    x: V3<V>,
    arm: V3<V>,
    v: V3<V>,
    w: V3<V>,
    rot: V33<V>,
}

#[inline(always)]
fn marker_lanes<L: Lanes>(l: L, b: &[&BodyKin; W], m: &PackedMarkers) -> MarkerLanes<L::V> {
    let z = l.splat(0.0);
    let mut rot_b = [[z; 3]; 3];
    for (r, row) in rot_b.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = gather!(l, |k| b[k].rot_rows.r[r][c]);
        }
    }
    let mut x_b = [z; 3];
    let mut v_b = [z; 3];
    let mut w = [z; 3];
    for a in 0..3 {
        x_b[a] = gather!(l, |k| b[k].x[a]);
        v_b[a] = gather!(l, |k| b[k].v[a]);
        w[a] = gather!(l, |k| b[k].w[a]);
    }
    let s = [l.load(&m.s[0]), l.load(&m.s[1]), l.load(&m.s[2])];
    let mut axes = [[z; 3]; 3];
    for (r, row) in axes.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = l.load(&m.axes[r][c]);
        }
    }
    let arm = mat_vec(l, &rot_b, &s);
    MarkerLanes {
        x: add3(l, &x_b, &arm),
        v: add3(l, &v_b, &cross(l, &w, &arm)),
        w,
        arm,
        rot: mat_mat(l, &rot_b, &axes),
    }
}

/// The rotation vector of R per lane (as [`log_with_inv_jacobian`] without the Jacobian): θ =
/// (a / sin a) vee(R − Rᵀ)/2 with the series of [`crate::rotation::small_angle_ratio`] in the
/// lanes when every lane is within its range, else lane by lane.
#[inline(always)]
fn rotation_vector<L: Lanes>(l: L, r: &V33<L::V>) -> V3<L::V> {
    let half = l.splat(0.5);
    let trace = l.add(l.add(r[0][0], r[1][1]), r[2][2]);
    let c = l.mul(half, l.sub(trace, l.splat(1.0)));
    let vee = [
        l.mul(half, l.sub(r[2][1], r[1][2])),
        l.mul(half, l.sub(r[0][2], r[2][0])),
        l.mul(half, l.sub(r[1][0], r[0][1])),
    ];
    let u = dot(l, &vee, &vee);
    let (mut cs, mut us) = ([0.0; 4], [0.0; 4]);
    l.store(c, &mut cs);
    l.store(u, &mut us);
    let u_max = us.iter().fold(0.0f64, |m, &x| m.max(x));
    let series = cs.iter().all(|&c| c > 0.0) && u_max <= SERIES_U_MAX;
    if !series {
        return rotation_vector_by_lane(l, r);
    }
    let s = &ASIN_RATIO_SERIES;
    let u2 = l.mul(u, u);
    let p01 = l.mul_add(u, l.splat(s[1]), l.splat(s[0]));
    let ratio = if u_max <= SHORT_SERIES_U_MAX {
        l.mul_add(u2, l.splat(s[2]), p01)
    } else {
        let u4 = l.mul(u2, u2);
        let p23 = l.mul_add(u, l.splat(s[3]), l.splat(s[2]));
        let p45 = l.mul_add(u, l.splat(s[5]), l.splat(s[4]));
        let p6 = l.mul_add(u2, l.splat(s[6]), p45);
        l.mul_add(u4, p6, l.mul_add(u2, p23, p01))
    };
    [
        l.mul(vee[0], ratio),
        l.mul(vee[1], ratio),
        l.mul(vee[2], ratio),
    ]
}

/// [`rotation_vector`] lane by lane with the one-element function (any angle).
#[cold]
#[inline(never)]
fn rotation_vector_by_lane<L: Lanes>(l: L, r: &V33<L::V>) -> V3<L::V> {
    let mut e = [[[0.0; 4]; 3]; 3];
    for (er, rr) in e.iter_mut().zip(r) {
        for (x, v) in er.iter_mut().zip(rr) {
            l.store(*v, x);
        }
    }
    let mut th = [[0.0; 4]; 3];
    for k in 0..W {
        let m = Matrix3::from_fn(|i, j| e[i][j][k]);
        let t = log_with_inv_jacobian(&m, false).0;
        for a in 0..3 {
            th[a][k] = t[a];
        }
    }
    [l.load(&th[0]), l.load(&th[1]), l.load(&th[2])]
}

#[inline(always)]
fn add3<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [l.add(a[0], b[0]), l.add(a[1], b[1]), l.add(a[2], b[2])]
}

#[inline(always)]
fn sub3<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [l.sub(a[0], b[0]), l.sub(a[1], b[1]), l.sub(a[2], b[2])]
}

#[inline(always)]
fn dot<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> L::V {
    l.mul_add(a[2], b[2], l.mul_add(a[1], b[1], l.mul(a[0], b[0])))
}

/// a × b per lane.
#[inline(always)]
fn cross<L: Lanes>(l: L, a: &V3<L::V>, b: &V3<L::V>) -> V3<L::V> {
    [
        l.mul_sub(a[1], b[2], l.mul(a[2], b[1])),
        l.mul_sub(a[2], b[0], l.mul(a[0], b[2])),
        l.mul_sub(a[0], b[1], l.mul(a[1], b[0])),
    ]
}

/// M x per lane.
#[inline(always)]
fn mat_vec<L: Lanes>(l: L, m: &V33<L::V>, x: &V3<L::V>) -> V3<L::V> {
    [dot(l, &m[0], x), dot(l, &m[1], x), dot(l, &m[2], x)]
}

/// Column `c` of M per lane.
#[inline(always)]
fn column<V: Copy>(m: &[[V; 3]; 3], c: usize) -> V3<V> {
    [m[0][c], m[1][c], m[2][c]]
}

/// Mᵀ x per lane.
#[inline(always)]
fn mat_t_vec<L: Lanes>(l: L, m: &V33<L::V>, x: &V3<L::V>) -> V3<L::V> {
    [
        dot(l, &column(m, 0), x),
        dot(l, &column(m, 1), x),
        dot(l, &column(m, 2), x),
    ]
}

/// A B per lane.
#[inline(always)]
fn mat_mat<L: Lanes>(l: L, a: &V33<L::V>, b: &V33<L::V>) -> V33<L::V> {
    let mut out = [[l.splat(0.0); 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = dot(l, &a[r], &column(b, c));
        }
    }
    out
}

/// Aᵀ B per lane.
#[inline(always)]
fn mat_t_mat<L: Lanes>(l: L, a: &V33<L::V>, b: &V33<L::V>) -> V33<L::V> {
    let mut out = [[l.splat(0.0); 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, e) in row.iter_mut().enumerate() {
            *e = dot(l, &column(a, r), &column(b, c));
        }
    }
    out
}

/// Subtracts the tabulated characteristics `laws` (their lanes hold the linear part only) from
/// the local force `f` and torque `t`: y = curve(x) for the argument x of the law's group.
#[inline(always)]
fn curve_laws<L: Lanes>(
    l: L,
    laws: &[CurveLaw],
    curves: &[Curve],
    args: [&V3<L::V>; 4],
    f: V3<L::V>,
    t: V3<L::V>,
) -> (V3<L::V>, V3<L::V>) {
    let x = [
        to_lanes(l, args[0]),
        to_lanes(l, args[1]),
        to_lanes(l, args[2]),
        to_lanes(l, args[3]),
    ];
    let mut ft = [to_lanes(l, &f), to_lanes(l, &t)];
    for c in laws {
        let (y, _) = curves[c.curve].eval(x[c.group][c.axis][c.lane]);
        ft[c.group / 2][c.axis][c.lane] -= y;
    }
    let [f, t] = ft;
    (
        [l.load(&f[0]), l.load(&f[1]), l.load(&f[2])],
        [l.load(&t[0]), l.load(&t[1]), l.load(&t[2])],
    )
}

/// One law per axis and lane: preload − (k x + c ẋ) with linear slopes k and c.
#[inline(always)]
fn law<L: Lanes>(
    l: L,
    pre: &[L4; 3],
    k: &[L4; 3],
    c: &[L4; 3],
    x: &V3<L::V>,
    x_dot: &V3<L::V>,
) -> V3<L::V> {
    let mut out = [l.splat(0.0); 3];
    for (a, o) in out.iter_mut().enumerate() {
        let kc = l.mul_add(l.load(&k[a]), x[a], l.mul(l.load(&c[a]), x_dot[a]));
        *o = l.sub(l.load(&pre[a]), kc);
    }
    out
}

/// The lanes of a per-lane 3-vector as arrays: `out[coordinate][lane]`.
#[inline(always)]
fn to_lanes<L: Lanes>(l: L, v: &V3<L::V>) -> [L4; 3] {
    let mut out = [[0.0; 4]; 3];
    for (o, x) in out.iter_mut().zip(v) {
        l.store(*x, o);
    }
    out
}

/// The kinematics each lane's marker reads: its body's, or the ground's.
#[inline(always)]
fn lane_bodies<'a>(
    m: &PackedMarkers,
    bodies: &'a [BodyKin],
    ground: &'a BodyKin,
) -> [&'a BodyKin; W] {
    let pick = |b: Option<usize>| b.map_or(ground, |b| &bodies[b]);
    [
        pick(m.body[0]),
        pick(m.body[1]),
        pick(m.body[2]),
        pick(m.body[3]),
    ]
}
