//! Four bushings side by side ([`crate::pack`]): the force path (q only) of the bushings
//! without a free spin axis, one bushing per lane.
//!
//! The equations are exactly those of [`crate::bushing::evaluate`] (deflections in the axes of
//! marker J, rotation vector of R_Jᵀ R_I, f = preload − (k d + c ḋ) per axis) and of the marker
//! kinematics ([`crate::kinematics::MarkerKin`]). Linear characteristics are lane-wise
//! multiply-adds; a tabulated curve is evaluated for its own lane and axis after the linear part
//! (its slope is zero in the lanes). Rotation angles beyond the square-root-free series of
//! [`crate::rotation::small_angle_ratio`] (≈ 0.06 rad) are rare in a bushing; a pack with one such
//! lane computes the rotation vectors of its lanes one by one with
//! [`crate::bushing::log_with_inv_jacobian`], so every angle is handled exactly as on the
//! one-element path.

use nalgebra::{Matrix3, Vector3};
use sprung_model::Curve;

use crate::bushing::log_with_inv_jacobian;
use crate::compiled::{Bushing, Characteristic, CompiledModel, ElementKind};
use crate::m3::{L4, Lanes};
use crate::pack::{
    EndLanes, LanePack, PackedMarkers, V3, V33, W, Wrenches, add3, cross, dot, lane, lane_elements,
    load3, mat_t_mat, mat_t_vec, mat_vec, sub3, to_lanes,
};
use crate::rotation::{ASIN_RATIO_SERIES, SERIES_U_MAX, SHORT_SERIES_U_MAX};

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
pub(crate) struct BushingPack {
    /// The tabulated characteristics of the pack's lanes (their slopes are zero in the lanes).
    curves: Vec<CurveLaw>,
    element: [usize; W],
    /// Lanes in use (1…4).
    pub used: usize,
    pub i: PackedMarkers,
    pub j: PackedMarkers,
    preload: [L4; 3],
    rot_preload: [L4; 3],
    stiffness: [L4; 3],
    damping: [L4; 3],
    rot_stiffness: [L4; 3],
    rot_damping: [L4; 3],
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
fn groups(b: &Bushing) -> [&[Characteristic; 3]; 4] {
    [&b.stiffness, &b.damping, &b.rot_stiffness, &b.rot_damping]
}

/// Whether any characteristic of `b` is a tabulated curve.
pub(crate) fn has_curves(b: &Bushing) -> bool {
    groups(b)
        .iter()
        .any(|g| g.iter().any(|c| matches!(c, Characteristic::Curve(_))))
}

impl BushingPack {
    /// The bushings `chunk` (1…4 element indices).
    pub fn new(model: &CompiledModel, chunk: &[usize]) -> Self {
        let element = lane_elements(chunk);
        let bushing = |k: usize| match &model.elements[element[k]].kind {
            ElementKind::Bushing(b) => b,
            ElementKind::P2p(_) => unreachable!("only bushings are packed"),
        };
        let slopes = |pick: fn(&Bushing) -> &[Characteristic; 3]| -> [L4; 3] {
            std::array::from_fn(|a| std::array::from_fn(|k| lane_slope(&pick(bushing(k))[a])))
        };
        let vectors = |pick: fn(&Bushing) -> Vector3<f64>| -> [L4; 3] {
            std::array::from_fn(|a| std::array::from_fn(|k| pick(bushing(k))[a]))
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
            i: PackedMarkers::new(|k| &model.markers[model.elements[element[k]].marker_i]),
            j: PackedMarkers::new(|k| &model.markers[model.elements[element[k]].marker_j]),
            preload: vectors(|b| b.preload),
            rot_preload: vectors(|b| b.rot_preload),
            stiffness: slopes(|b| &b.stiffness),
            damping: slopes(|b| &b.damping),
            rot_stiffness: slopes(|b| &b.rot_stiffness),
            rot_damping: slopes(|b| &b.rot_damping),
        }
    }
}

impl LanePack for BushingPack {
    fn markers(&self) -> (&PackedMarkers, &PackedMarkers) {
        (&self.i, &self.j)
    }

    #[inline(always)]
    fn evaluate<L: Lanes>(
        &self,
        l: L,
        curves: &[Curve],
        ends: &EndLanes<L::V>,
        out: &mut Wrenches,
    ) {
        let (mi, mj, dx, dv) = (&ends.i, &ends.j, &ends.dx, &ends.dv);
        let dw = sub3(l, &mi.w, &mj.w);
        let d = mat_t_vec(l, &mj.rot, dx);
        let d_dot = mat_t_vec(l, &mj.rot, dv);
        let theta_dot = mat_t_vec(l, &mj.rot, &dw);
        let theta = rotation_vector(l, &mat_t_mat(l, &mj.rot, &mi.rot));
        let mut f = law(l, &self.preload, &self.stiffness, &self.damping, &d, &d_dot);
        let mut t = law(
            l,
            &self.rot_preload,
            &self.rot_stiffness,
            &self.rot_damping,
            &theta,
            &theta_dot,
        );
        if !self.curves.is_empty() {
            (f, t) = curve_laws(
                l,
                &self.curves,
                curves,
                [&d, &d_dot, &theta, &theta_dot],
                f,
                t,
            );
        }
        let force_g = mat_vec(l, &mj.rot, &f);
        let torque_g = mat_vec(l, &mj.rot, &t);
        // Torques about the centres of mass of body I (arm a_I) and body J (x_I − x_J + a_J).
        let tau_i = add3(l, &cross(l, &mi.arm, &force_g), &torque_g);
        let tau_j = add3(l, &cross(l, &add3(l, dx, &mj.arm), &force_g), &torque_g);
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
        for k in 0..self.used {
            let fk = lane(&fg, k);
            out.add(self.i.body[k], fk, lane(&ti, k));
            out.add(self.j.body[k], -fk, -lane(&tj, k));
            let e = &mut out.elements[self.element[k]];
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
    load3(l, &th)
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
        let (y, _) = crate::compiled::eval_curve(curves, c.curve, x[c.group][c.axis][c.lane]);
        ft[c.group / 2][c.axis][c.lane] -= y;
    }
    (load3(l, &ft[0]), load3(l, &ft[1]))
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
