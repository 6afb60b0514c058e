//! Six-direction bushing (document 000, section 2; conventions of `reference-suspensions.md` §1.3).
//!
//! Between marker I (body_i) and marker J (body_j), in the axes of marker J:
//! d = R_Jᵀ (x_I − x_J), θ = log(R_Jᵀ R_I) (or the swing vector when a spin axis is free),
//! ḋ = R_Jᵀ (v_I − v_J), θ̇ = R_Jᵀ (ω_I − ω_J);
//! f = preload − (k(d) + c(ḋ)), t = rot_preload − (k_r(θ) + c_r(θ̇)) per local axis;
//! R_J f and R_J t act on body_i at x_I, the opposites on body_j, also at x_I.
//! Partials are in relative marker form ([`crate::element::Partials`]); the translational ones are
//! the closed forms ∓R_J K R_Jᵀ, ∓R_J C R_Jᵀ per end, so no 3 × 12 products are formed.
//! The rotational deflection is computed by [`rotational_deflection`] only — force, partials and
//! output channel all use it.
//!
//! The law itself ([`local_law`]) is written once, generic over the arithmetic
//! ([`crate::arith::Arith`]): the one-element path (force and partials, [`evaluate`]) instantiates
//! it with plain `f64`, the q-only path ([`BushingPack`], four bushings in the lanes of the SIMD
//! token; also those with a free spin axis, swing vector per lane) with the lanes; only the
//! characteristics' evaluation differs (a slope kept for the partials, or lane-wise products
//! with the curves' lanes patched). Both give the same force bit for bit from the same
//! deflections (products and sums rounded separately on both paths).

use nalgebra::{Matrix3, Vector3};
use sprung_model::Curve;

use crate::arith::{Arith, One};
use crate::compiled::{Bushing, Characteristic, CompiledModel, ElementKind};
use crate::element::{ElementForce, Ends};
use crate::element_law::OutputInfo;
use crate::elements::{KindInfo, ParamInfo};
use crate::m3::{L4, Lanes, M3};
use crate::pack::{
    LanePack, PackBodies, PackedMarkers, V3, V33, W, Wrenches, add3, column, cross, dot, lane,
    lane_elements, load3, marker_frame, marker_motion, mat_t_mat, mat_t_vec, mat_vec, sub3,
    to_lanes,
};
use crate::rotation::{
    ASIN_RATIO_SERIES, SERIES_U_MAX, SHORT_SERIES_U_MAX, angle_and_ratio, inv_left_jacobian,
    log_so3, skew, small_angle_ratio, swing_of_image, swing_vector,
};

/// The bushing as a kind (`type = "bushing"` in `[[force_elements]]`): what `sprung elements`
/// lists. Vector parameters are per local axis x, y, z of marker J; a `*_curves` table names a
/// curve per axis that replaces the linear rate.
pub const KIND: KindInfo = KindInfo {
    name: "bushing",
    description: "six-direction bushing (document 000, section 2): f = preload - (k(d) + c(d')), t = rot_preload - (k_r(theta) + c_r(theta')) in the axes of marker J; [[force_elements]], evaluated four at a time in SIMD lanes",
    markers: &[
        "marker_i (action, body_i)",
        "marker_j (reference: deflections in its axes)",
    ],
    parameters: &[
        ParamInfo {
            name: "stiffness",
            unit: "N/m",
            description: "translational rates, local x y z (or stiffness_curves: force of deflection)",
            default: None,
        },
        ParamInfo {
            name: "rot_stiffness",
            unit: "Nm/rad",
            description: "rotational rates (or rot_stiffness_curves)",
            default: None,
        },
        ParamInfo {
            name: "damping",
            unit: "Ns/m",
            description: "translational damping (or damping_curves)",
            default: Some(0.0),
        },
        ParamInfo {
            name: "rot_damping",
            unit: "Nms/rad",
            description: "rotational damping (or rot_damping_curves)",
            default: Some(0.0),
        },
        ParamInfo {
            name: "preload",
            unit: "N",
            description: "force on body_i at zero deflection, marker-J axes",
            default: Some(0.0),
        },
        ParamInfo {
            name: "rot_preload",
            unit: "Nm",
            description: "torque on body_i at zero deflection, marker-J axes",
            default: Some(0.0),
        },
        ParamInfo {
            name: "spin_axis",
            unit: "-",
            description: "\"x\", \"y\" or \"z\": rotation about it free (swing-twist split), e.g. a wheel bearing",
            default: Some(f64::NAN),
        },
    ],
    states: &[],
    outputs: &[
        OutputInfo {
            name: "force",
            unit: "N",
            description: "force on body_i, marker-J axes",
        },
        OutputInfo {
            name: "torque",
            unit: "Nm",
            description: "torque on body_i, marker-J axes",
        },
        OutputInfo {
            name: "deflection",
            unit: "m",
            description: "translational deflection, marker-J axes",
        },
        OutputInfo {
            name: "rot_deflection",
            unit: "rad",
            description: "rotation vector (swing vector with a free spin axis)",
        },
    ],
    inputs: &[],
};

/// Rotational deflection of `r_rel = R_Jᵀ R_I` and its derivative with respect to a left
/// perturbation of `r_rel`: the rotation vector, or the swing vector about a free spin axis.
#[inline(always)]
pub fn rotational_deflection(
    r_rel: &Matrix3<f64>,
    spin_axis: Option<usize>,
) -> (Vector3<f64>, Matrix3<f64>) {
    match spin_axis {
        Some(k) => {
            let mut e = Vector3::zeros();
            e[k] = 1.0;
            swing_vector(r_rel, &e)
        }
        None => log_with_inv_jacobian(r_rel, true),
    }
}

/// Rotation vector θ = log(R) and, with `jacobian`, J_l⁻¹(θ), directly from the matrix: with
/// cos a = (tr R − 1)/2 and sin a · n = vee(R − Rᵀ)/2, a = atan2(sin a, cos a) and θ = a n
/// ([`angle_and_ratio`]: no library call for small angles); then
/// J_l⁻¹ = I − ½\[θ\]× + (1/a² − (1 + cos a)/(2 a sin a)) (θθᵀ − a² I) needs no further trigonometry.
/// Same values as [`log_so3`] and [`inv_left_jacobian`] up to round-off; for a > 2π/3, where
/// vee(R − Rᵀ) loses precision, those quaternion-based functions are used.
#[inline(always)]
pub fn log_with_inv_jacobian(r: &Matrix3<f64>, jacobian: bool) -> (Vector3<f64>, Matrix3<f64>) {
    let c = 0.5 * (r.trace() - 1.0);
    if c < -0.5 {
        let th = log_so3(r);
        return (
            th,
            if jacobian {
                inv_left_jacobian(&th)
            } else {
                Matrix3::zeros()
            },
        );
    }
    let vee = 0.5
        * Vector3::new(
            r[(2, 1)] - r[(1, 2)],
            r[(0, 2)] - r[(2, 0)],
            r[(1, 0)] - r[(0, 1)],
        );
    // θ needs only a / sin a, which needs no square root for small angles.
    let sn2 = vee.norm_squared();
    let ratio = small_angle_ratio(sn2, c).unwrap_or_else(|| angle_and_ratio(sn2.sqrt(), c).1);
    let th = vee * ratio;
    if !jacobian {
        return (th, Matrix3::zeros());
    }
    let sn = sn2.sqrt();
    let a = ratio * sn;
    let coef = if a < 1e-4 {
        // Series of 1/a² − (1 + cos a) / (2 a sin a) = 1/12 + a²/720 + ...
        1.0 / 12.0 + a * a / 720.0
    } else {
        1.0 / (a * a) - (1.0 + c) / (2.0 * a * sn)
    };
    let th2 = th.dot(&th);
    let d = Matrix3::identity() - 0.5 * skew(&th)
        + coef * (th * th.transpose() - Matrix3::from_diagonal_element(th2));
    (th, d)
}

/// Characteristic groups of a bushing in the order of [`Characteristics::values`]: stiffness
/// (argument d), damping (ḋ), rotational stiffness (θ), rotational damping (θ̇).
const STIFFNESS: usize = 0;
const DAMPING: usize = 1;
const ROT_STIFFNESS: usize = 2;
const ROT_DAMPING: usize = 3;

/// The characteristics of one bushing ([`One`]) or of the four bushings of a [`BushingPack`]
/// (a SIMD token), evaluated at one value per bushing.
pub(crate) trait Characteristics<A: Arith> {
    /// y of every characteristic group (see [`STIFFNESS`] …) and local axis at its argument
    /// `args[group][axis]`. All twelve at once, so that a pack patches its tabulated lanes in one
    /// pass after the lane-wise products instead of testing for curves per characteristic
    /// (which cost ≈ 5 % of q: the branches kept the twelve lane values out of registers).
    fn values(&mut self, a: A, args: [&[A::V; 3]; 4]) -> [[A::V; 3]; 4];

    /// Whether every characteristic is linear (y = slope · x lane-wise, no tabulated curve):
    /// then [`local_law`] takes the values axis by axis from [`Self::linear_axis`].
    fn is_linear(&self) -> bool {
        false
    }

    /// The four groups' y at axis `ax` when [`Self::is_linear`] (the same products as
    /// [`Self::values`]).
    fn linear_axis(&self, a: A, ax: usize, args: [&[A::V; 3]; 4]) -> [A::V; 4] {
        let _ = (a, ax, args);
        unreachable!("only called when is_linear")
    }
}

/// The bushing law on the local axes of marker J (document 000, section 2), written once for one
/// bushing and for the four lanes of a pack: f = preload − (k(d) + c(ḋ)) and
/// t = rot_preload − (k_r(θ) + c_r(θ̇)) per axis; `args` = [d, ḋ, θ, θ̇].
#[inline(always)]
pub(crate) fn local_law<A: Arith>(
    a: A,
    ch: &mut impl Characteristics<A>,
    preload: [A::V; 3],
    rot_preload: [A::V; 3],
    args: [&[A::V; 3]; 4],
) -> ([A::V; 3], [A::V; 3]) {
    let (mut f, mut t) = (preload, rot_preload);
    if ch.is_linear() {
        // Axis by axis: only one axis's four products are live at a time (all twelve at once
        // kept the AVX2 copy of a pack spilling them to the stack; the same operations).
        for ax in 0..3 {
            (f[ax], t[ax]) = axis_law(a, preload[ax], rot_preload[ax], ch.linear_axis(a, ax, args));
        }
        return (f, t);
    }
    let y = ch.values(a, args);
    for ax in 0..3 {
        let y_ax = [
            y[STIFFNESS][ax],
            y[DAMPING][ax],
            y[ROT_STIFFNESS][ax],
            y[ROT_DAMPING][ax],
        ];
        (f[ax], t[ax]) = axis_law(a, preload[ax], rot_preload[ax], y_ax);
    }
    (f, t)
}

/// The law of [`local_law`] at one axis from the four groups' values `y` (in [`STIFFNESS`] …
/// order): (preload − (k + c), rot_preload − (k_r + c_r)).
#[inline(always)]
fn axis_law<A: Arith>(a: A, preload: A::V, rot_preload: A::V, y: [A::V; 4]) -> (A::V, A::V) {
    (
        a.sub(preload, a.add(y[STIFFNESS], y[DAMPING])),
        a.sub(rot_preload, a.add(y[ROT_STIFFNESS], y[ROT_DAMPING])),
    )
}

/// The four characteristic groups of a bushing in [`Characteristics`] order.
fn groups(b: &Bushing) -> [&[Characteristic; 3]; 4] {
    [&b.stiffness, &b.damping, &b.rot_stiffness, &b.rot_damping]
}

/// One bushing's characteristics; keeps the slopes for the partials.
struct OneBushing<'a> {
    b: &'a Bushing,
    curves: &'a [Curve],
    /// dy/dx per group and axis at the last evaluation.
    slope: [[f64; 3]; 4],
}

impl Characteristics<One> for OneBushing<'_> {
    #[inline(always)]
    fn values(&mut self, _: One, args: [&[f64; 3]; 4]) -> [[f64; 3]; 4] {
        // Axis by axis with the four groups written out (a loop over the groups costs ≈ 4 %
        // of the linearisation: the characteristics' matches are then not specialised).
        let (b, c) = (self.b, self.curves);
        let mut y = [[0.0; 3]; 4];
        for ax in 0..3 {
            let (k, dk) = b.stiffness[ax].eval(c, args[STIFFNESS][ax]);
            let (d, dd) = b.damping[ax].eval(c, args[DAMPING][ax]);
            let (kr, dkr) = b.rot_stiffness[ax].eval(c, args[ROT_STIFFNESS][ax]);
            let (dr, ddr) = b.rot_damping[ax].eval(c, args[ROT_DAMPING][ax]);
            (y[STIFFNESS][ax], y[DAMPING][ax]) = (k, d);
            (y[ROT_STIFFNESS][ax], y[ROT_DAMPING][ax]) = (kr, dr);
            self.slope[STIFFNESS][ax] = dk;
            self.slope[DAMPING][ax] = dd;
            self.slope[ROT_STIFFNESS][ax] = dkr;
            self.slope[ROT_DAMPING][ax] = ddr;
        }
        y
    }
}

/// Evaluates a bushing; partials only when `partials` is set (computed with the lanes `l`).
#[inline(always)]
pub fn evaluate<L: Lanes>(
    l: L,
    b: &Bushing,
    curves: &[Curve],
    ends: &Ends,
    partials: bool,
    out: &mut ElementForce,
) {
    let [mi, mj] = ends;
    let rj = &mj.rot;
    let dx = mi.x - mj.x;
    let dv = mi.v - mj.v;
    let dw = mi.w - mj.w;
    let d = rj.tmul_vec(l, &dx);
    let d_dot = rj.tmul_vec(l, &dv);
    let r_rel = rj.tmul(l, &mi.rot).to_matrix();
    // The rotation vector's Jacobian D is only needed for partials; the swing vector yields both.
    let (theta, dtheta_deps) = match (b.spin_axis, partials) {
        (None, false) => log_with_inv_jacobian(&r_rel, false),
        _ => rotational_deflection(&r_rel, b.spin_axis),
    };
    let theta_dot = rj.tmul_vec(l, &dw);

    let mut ch = OneBushing {
        b,
        curves,
        slope: [[0.0; 3]; 4],
    };
    let (f, t) = local_law(
        One,
        &mut ch,
        b.preload.into(),
        b.rot_preload.into(),
        [&d.into(), &d_dot.into(), &theta.into(), &theta_dot.into()],
    );
    let (f, t) = (Vector3::from(f), Vector3::from(t));
    let s = &ch.slope;
    let (kf, cf) = (Vector3::from(s[0]), Vector3::from(s[1]));
    let (kt, ct) = (Vector3::from(s[2]), Vector3::from(s[3]));
    let force = rj.mul_vec(&f);
    let torque = rj.mul_vec(&t);
    out.force = force;
    out.torque = torque;
    out.point = [mi.x, mi.x];
    out.point_end = [0, 0];
    out.out.force = f;
    out.out.torque = t;
    out.out.deflection = d;
    out.out.rot_deflection = theta;
    if !partials {
        return;
    }
    // Marker-form partials (see `crate::element`), with A = R_J K R_Jᵀ etc.:
    // ∂d = R_Jᵀ (δp_I − δp_J) + R_Jᵀ [Δx]× δφ_J,   ∂ḋ = R_Jᵀ (δv_I − δv_J) + R_Jᵀ [Δv]× δφ_J,
    // ∂θ = D R_Jᵀ (δφ_I − δφ_J),                   ∂θ̇ = R_Jᵀ (δω_I − δω_J) + R_Jᵀ [Δω]× δφ_J,
    // ∂(R_J f) = R_J ∂f − [R_J f]× δφ_J (and the same for the torque).
    let rjt = rj.transpose();
    let a_k = M3::rotate_diag(l, rj, &rjt, &kf);
    let a_c = M3::rotate_diag(l, rj, &rjt, &cf);
    let b_c = M3::rotate_diag(l, rj, &rjt, &ct);
    let b_k = rj
        .scale_columns(l, &kt)
        .mul(l, &M3::from_matrix(&dtheta_deps))
        .mul(l, &rjt);
    let f_phi_j = a_k
        .mul_skew(l, &dx)
        .add(l, &a_c.mul_skew(l, &dv))
        .add(l, &M3::skew(&force));
    let p = &mut out.partials;
    p.f_p = a_k.neg(l);
    p.f_v = a_c.neg(l);
    p.f_phi = [M3::ZERO, f_phi_j.neg(l)];
    p.t_phi = [
        b_k.neg(l),
        b_k.sub(l, &b_c.mul_skew(l, &dw)).sub(l, &M3::skew(&torque)),
    ];
    p.t_w = b_c.neg(l);
    p.has_f_v = true;
    p.has_torque = true;
}

// ---------------------------------------------------------------------------------------------
// Four bushings side by side (`crate::pack`): the force path (q only), one bushing per lane.
// The law is [`local_law`], instantiated with the SIMD token; the deflections are those of
// [`evaluate`] computed in the lanes (marker kinematics of `crate::kinematics::MarkerKin`).
// Linear characteristics are lane-wise products; a tabulated curve is evaluated for its own lane
// and axis ([`PackCharacteristics`]). The rotational deflection is the rotation vector, or, in a
// pack of bushings free about the same local axis k, the swing vector from the image R_rel e_k
// alone ([`swing_vector_lanes`]); both take a / sin a from the square-root-free series of
// [`crate::rotation::small_angle_ratio`] ([`asin_ratio`]). Angles beyond its range (≈ 0.06 rad)
// are rare in a bushing; a pack with one such lane computes the deflections of its lanes one by
// one with the one-element functions ([`log_with_inv_jacobian`],
// [`crate::rotation::swing_of_image`]), so every angle is handled exactly as on the one-element
// path.
// ---------------------------------------------------------------------------------------------

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
    /// The free spin axis (local axis of marker J) shared by the pack's lanes: the rotational
    /// deflection is then the swing vector ([`swing_vector_lanes`]), else the rotation vector.
    spin_axis: Option<usize>,
    /// Lanes in use (1…4).
    pub used: usize,
    pub i: PackedMarkers,
    pub j: PackedMarkers,
    preload: [L4; 3],
    rot_preload: [L4; 3],
    /// The lanes' slopes per characteristic group and axis ([`lane_slope`]).
    slope: [[L4; 3]; 4],
    /// Bit 3 · group + axis set: some lane of that characteristic is a curve.
    curve_mask: u16,
}

/// The slope of a characteristic in the lanes: that of a linear one, zero for zero and for a
/// curve (evaluated per lane, [`CurveLaw`]).
fn lane_slope(c: &Characteristic) -> f64 {
    match *c {
        Characteristic::Linear(k) => k,
        Characteristic::Zero | Characteristic::Curve(_) => 0.0,
    }
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
        let vectors = |pick: fn(&Bushing) -> Vector3<f64>| -> [L4; 3] {
            std::array::from_fn(|a| std::array::from_fn(|k| pick(bushing(k))[a]))
        };
        let spin_axis = bushing(0).spin_axis;
        assert!(
            (0..W).all(|k| bushing(k).spin_axis == spin_axis),
            "a pack's bushings share their spin axis"
        );
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
        let curve_mask = curves
            .iter()
            .fold(0u16, |m, c| m | 1 << (3 * c.group + c.axis));
        Self {
            curves,
            curve_mask,
            element,
            spin_axis,
            used: chunk.len(),
            i: PackedMarkers::new(|k| &model.markers[model.elements[element[k]].marker_i]),
            j: PackedMarkers::new(|k| &model.markers[model.elements[element[k]].marker_j]),
            preload: vectors(|b| b.preload),
            rot_preload: vectors(|b| b.rot_preload),
            slope: std::array::from_fn(|g| {
                std::array::from_fn(|a| {
                    std::array::from_fn(|k| lane_slope(&groups(bushing(k))[g][a]))
                })
            }),
        }
    }
}

impl LanePack for BushingPack {
    /// The law's two forms (all characteristics linear, or some tabulated) are separate copies
    /// chosen once per pack, so that each copy is straight-line code from the gather to the
    /// scatter; in each copy the orientation comes first (marker axes, lever arms, θ), so that
    /// only R_J and the two arms are live across the rotation vector's range test, and the
    /// positions and velocities are gathered after it. The same operations as
    /// [`PackBodies::ends`] followed by the law in one piece (so the same bits).
    #[inline(always)]
    fn evaluate<L: Lanes>(&self, l: L, curves: &[Curve], bodies: &PackBodies, out: &mut Wrenches) {
        if self.curves.is_empty() {
            self.evaluate_as::<L, true>(l, curves, bodies, out);
        } else {
            self.evaluate_as::<L, false>(l, curves, bodies, out);
        }
    }
}

impl BushingPack {
    /// [`LanePack::evaluate`] with `LINEAR` = the pack has no tabulated characteristic.
    #[inline(always)]
    fn evaluate_as<L: Lanes, const LINEAR: bool>(
        &self,
        l: L,
        curves: &[Curve],
        bodies: &PackBodies,
        out: &mut Wrenches,
    ) {
        let (bi, bj) = (bodies.of(&self.i), bodies.of(&self.j));
        let (arm_i, rot_i) = marker_frame(l, &bi, &self.i);
        let (arm_j, rot_j) = marker_frame(l, &bj, &self.j);
        let theta = match self.spin_axis {
            None => rotation_vector(l, &mat_t_mat(l, &rot_j, &rot_i)),
            // Only the image of the spin axis is needed: a = R_Jᵀ (R_I e_k).
            Some(k) => swing_vector_lanes(l, &mat_t_vec(l, &rot_j, &column(&rot_i, k)), k),
        };
        let thl = to_lanes(l, &theta);
        let (mi, mj) = (marker_motion(l, &bi, &arm_i), marker_motion(l, &bj, &arm_j));
        let xi = to_lanes(l, &mi.x);
        let dx = sub3(l, &mi.x, &mj.x);
        let dv = sub3(l, &mi.v, &mj.v);
        let dw = sub3(l, &mi.w, &mj.w);
        let d = mat_t_vec(l, &rot_j, &dx);
        let d_dot = mat_t_vec(l, &rot_j, &dv);
        let theta_dot = mat_t_vec(l, &rot_j, &dw);
        let dl = to_lanes(l, &d);
        // Arm of the force about the centre of mass of body J: x_I − x_J + a_J.
        let arm_ij = add3(l, &dx, &arm_j);
        let (f, t) = local_law(
            l,
            &mut PackCharacteristics::<LINEAR> { pack: self, curves },
            load3(l, &self.preload),
            load3(l, &self.rot_preload),
            [&d, &d_dot, &theta, &theta_dot],
        );
        let (fl, tl) = (to_lanes(l, &f), to_lanes(l, &t));
        let force_g = mat_vec(l, &rot_j, &f);
        let torque_g = mat_vec(l, &rot_j, &t);
        // Torques about the centres of mass of body I (arm a_I) and body J (x_I − x_J + a_J).
        let tau_i = add3(l, &cross(l, &arm_i, &force_g), &torque_g);
        let tau_j = add3(l, &cross(l, &arm_ij, &force_g), &torque_g);
        let (fg, tg, ti, tj) = (
            to_lanes(l, &force_g),
            to_lanes(l, &torque_g),
            to_lanes(l, &tau_i),
            to_lanes(l, &tau_j),
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
    let Some(ratio) = asin_ratio(l, c, u) else {
        // The lanes stored and loaded here, in the caller's instruction set ([`swing_vector_by_lane`]).
        let mut e = [[[0.0; 4]; 3]; 3];
        for (er, rr) in e.iter_mut().zip(r) {
            for (x, v) in er.iter_mut().zip(rr) {
                l.store(*v, x);
            }
        }
        return load3(l, &rotation_vector_by_lane(&e));
    };
    [
        l.mul(vee[0], ratio),
        l.mul(vee[1], ratio),
        l.mul(vee[2], ratio),
    ]
}

/// The ratio a / sin a per lane from u = sin²a and c = cos a by the series of
/// [`crate::rotation::small_angle_ratio`] (three or seven terms), when every lane is within
/// its range (c > 0, u ≤ [`SERIES_U_MAX`]); else `None` (the caller goes lane by lane).
#[inline(always)]
fn asin_ratio<L: Lanes>(l: L, c: L::V, u: L::V) -> Option<L::V> {
    let (mut cs, mut us) = ([0.0; 4], [0.0; 4]);
    l.store(c, &mut cs);
    l.store(u, &mut us);
    let u_max = us.iter().fold(0.0f64, |m, &x| m.max(x));
    if !(cs.iter().all(|&c| c > 0.0) && u_max <= SERIES_U_MAX) {
        return None;
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
    Some(ratio)
}

/// The swing vector about the local axis `k` (x, y, z) per lane from the image a = R_rel e_k of
/// the spin axis (as [`crate::rotation::swing_vector`] without the Jacobian): s = e_k × a has
/// |s| = sin φ and a_k = cos φ of the swing angle φ, and θ_sw = (φ / sin φ) s, the ratio by
/// [`asin_ratio`] (no square root, no atan2) when every lane is within its range, else lane by
/// lane with the one-element function.
#[inline(always)]
fn swing_vector_lanes<L: Lanes>(l: L, a: &V3<L::V>, k: usize) -> V3<L::V> {
    let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
    let mut s = [l.splat(0.0); 3];
    s[k1] = l.sub(l.splat(0.0), a[k2]);
    s[k2] = a[k1];
    let u = l.mul_add(s[k2], s[k2], l.mul(s[k1], s[k1]));
    let Some(ratio) = asin_ratio(l, a[k], u) else {
        // The lanes stored and loaded here, in the caller's instruction set ([`swing_vector_by_lane`]).
        return load3(l, &swing_vector_by_lane(&to_lanes(l, a), k));
    };
    [l.mul(s[0], ratio), l.mul(s[1], ratio), l.mul(s[2], ratio)]
}

/// [`swing_vector_lanes`] lane by lane with the one-element function (any angle), from the
/// lanes of the image `al[coordinate][lane]` to the lanes of the swing vector.
///
/// The out-of-range fallbacks (`by_lane`) take and return plain arrays: a cold, not inlined
/// function does not inherit the AVX2 target features of the copy that calls it, so lane loads
/// and stores in it would be calls to out-of-line intrinsics (seen in the kinematic car's turn,
/// where a bushing leaves the series range on every evaluation of q); the callers store and
/// load the lanes inlined.
#[cold]
#[inline(never)]
fn swing_vector_by_lane(al: &[L4; 3], k: usize) -> [L4; 3] {
    let mut e = Vector3::zeros();
    e[k] = 1.0;
    let mut th = [[0.0; 4]; 3];
    for lane_k in 0..W {
        let t = swing_of_image(&lane(al, lane_k), &e).0;
        for (ax, tha) in th.iter_mut().enumerate() {
            tha[lane_k] = t[ax];
        }
    }
    th
}

/// [`rotation_vector`] lane by lane with the one-element function (any angle), from the lanes
/// of R, `e[row][column][lane]` ([`swing_vector_by_lane`] on the plain arrays).
#[cold]
#[inline(never)]
fn rotation_vector_by_lane(e: &[[L4; 3]; 3]) -> [L4; 3] {
    let mut th = [[0.0; 4]; 3];
    for k in 0..W {
        let m = Matrix3::from_fn(|i, j| e[i][j][k]);
        let t = log_with_inv_jacobian(&m, false).0;
        for a in 0..3 {
            th[a][k] = t[a];
        }
    }
    th
}

/// The characteristics of a pack's four bushings: linear ones lane-wise (k x), then the lanes
/// whose characteristic is a curve overwritten with curve(x) (their slope in the lanes is zero).
/// `LINEAR`: the pack has no curve (then [`local_law`] goes axis by axis).
struct PackCharacteristics<'a, const LINEAR: bool> {
    pack: &'a BushingPack,
    curves: &'a [Curve],
}

impl<L: Lanes, const LINEAR: bool> Characteristics<L> for PackCharacteristics<'_, LINEAR> {
    #[inline(always)]
    fn values(&mut self, l: L, args: [&V3<L::V>; 4]) -> [V3<L::V>; 4] {
        let pack = self.pack;
        let mut y = [[l.splat(0.0); 3]; 4];
        for (g, yg) in y.iter_mut().enumerate() {
            for (ax, ya) in yg.iter_mut().enumerate() {
                *ya = l.mul(l.load(&pack.slope[g][ax]), args[g][ax]);
            }
        }
        if pack.curves.is_empty() {
            return y;
        }
        patch_curves(l, pack, self.curves, args, &mut y);
        y
    }

    #[inline(always)]
    fn is_linear(&self) -> bool {
        LINEAR
    }

    #[inline(always)]
    fn linear_axis(&self, l: L, ax: usize, args: [&V3<L::V>; 4]) -> [L::V; 4] {
        let slope = &self.pack.slope;
        [
            l.mul(l.load(&slope[STIFFNESS][ax]), args[STIFFNESS][ax]),
            l.mul(l.load(&slope[DAMPING][ax]), args[DAMPING][ax]),
            l.mul(l.load(&slope[ROT_STIFFNESS][ax]), args[ROT_STIFFNESS][ax]),
            l.mul(l.load(&slope[ROT_DAMPING][ax]), args[ROT_DAMPING][ax]),
        ]
    }
}

/// Overwrites the lanes of `y` whose characteristic is a curve with curve(x) (one pass over
/// the pack's tabulated characteristics).
#[inline(always)]
fn patch_curves<L: Lanes>(
    l: L,
    pack: &BushingPack,
    curves: &[Curve],
    args: [&V3<L::V>; 4],
    y: &mut [V3<L::V>; 4],
) {
    let (mut xs, mut ys) = ([[[0.0; W]; 3]; 4], [[[0.0; W]; 3]; 4]);
    for g in 0..4 {
        for ax in 0..3 {
            if pack.curve_mask & (1 << (3 * g + ax)) != 0 {
                l.store(args[g][ax], &mut xs[g][ax]);
                l.store(y[g][ax], &mut ys[g][ax]);
            }
        }
    }
    for c in &pack.curves {
        ys[c.group][c.axis][c.lane] =
            crate::compiled::eval_curve(curves, c.curve, xs[c.group][c.axis][c.lane]).0;
    }
    for g in 0..4 {
        for ax in 0..3 {
            if pack.curve_mask & (1 << (3 * g + ax)) != 0 {
                y[g][ax] = l.load(&ys[g][ax]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::m3::Portable;

    /// The law of four bushings in the lanes of `l` (a pack) and of each bushing alone.
    fn law_in_lanes_and_alone<L: Lanes>(l: L, model: &CompiledModel, chunk: &[usize], seed: u64) {
        let pack = BushingPack::new(model, chunk);
        let mut rng = sprung_test_support::Rng(seed);
        // Arguments d, ḋ, θ, θ̇ per axis and lane, spanning the curves' knots (±12 mm, ±1 m/s,
        // ±0.3 rad, ±1 rad/s).
        let scale = [0.012, 1.0, 0.3, 1.0];
        let args: [[L4; 3]; 4] = std::array::from_fn(|g| {
            std::array::from_fn(|_| std::array::from_fn(|_| rng.sym(scale[g])))
        });
        let lanes = |v: &[L4; 3]| load3(l, v);
        let a = [
            &lanes(&args[0]),
            &lanes(&args[1]),
            &lanes(&args[2]),
            &lanes(&args[3]),
        ];
        let (pre, rot_pre) = (load3(l, &pack.preload), load3(l, &pack.rot_preload));
        let curves = &model.curves;
        let (f, t) = if pack.curves.is_empty() {
            let ch = &mut PackCharacteristics::<true> {
                pack: &pack,
                curves,
            };
            local_law(l, ch, pre, rot_pre, a)
        } else {
            let ch = &mut PackCharacteristics::<false> {
                pack: &pack,
                curves,
            };
            local_law(l, ch, pre, rot_pre, a)
        };
        let (f, t) = (to_lanes(l, &f), to_lanes(l, &t));
        for (k, &e) in chunk.iter().enumerate() {
            let ElementKind::Bushing(b) = &model.elements[e].kind else {
                unreachable!()
            };
            let arg = |g: usize| -> [f64; 3] { std::array::from_fn(|a| args[g][a][k]) };
            let mut one = OneBushing {
                b,
                curves: &model.curves,
                slope: [[0.0; 3]; 4],
            };
            let (f1, t1) = local_law(
                One,
                &mut one,
                b.preload.into(),
                b.rot_preload.into(),
                [&arg(0), &arg(1), &arg(2), &arg(3)],
            );
            for a in 0..3 {
                assert_eq!(f1[a].to_bits(), f[a][k].to_bits(), "element {e} axis {a}");
                assert_eq!(t1[a].to_bits(), t[a][k].to_bits(), "element {e} axis {a}");
            }
        }
    }

    #[test]
    fn the_law_is_the_same_for_one_bushing_and_in_the_lanes() {
        // The fixture's bushings: linear and tabulated characteristics (translational and
        // rotational), preloads; the same law source gives the same bits on every path.
        let m = sprung_model::from_toml_str(sprung_test_support::ALL_ELEMENTS, "all.toml").unwrap();
        let model = crate::compile(&m).unwrap();
        let bushings: Vec<usize> = (0..model.elements.len())
            .filter(|&e| matches!(model.elements[e].kind, ElementKind::Bushing(_)))
            .collect();
        let curved = |e: &usize| match &model.elements[*e].kind {
            ElementKind::Bushing(b) => has_curves(b),
            _ => false,
        };
        let (with_curves, linear): (Vec<usize>, Vec<usize>) =
            bushings.iter().partition(|e| curved(e));
        assert!(!with_curves.is_empty() && !linear.is_empty());
        // Mixed packs, and packs of linear bushings only (the law's axis-by-axis path,
        // `Characteristics::is_linear`) and of tabulated ones only; a pack's bushings share
        // their spin axis.
        let spin = |e: &usize| match &model.elements[*e].kind {
            ElementKind::Bushing(b) => b.spin_axis,
            _ => None,
        };
        let packs_of = |list: &[usize]| -> Vec<Vec<usize>> {
            let mut packs = vec![];
            for axis in [None, Some(0), Some(1), Some(2)] {
                let group: Vec<usize> = list.iter().copied().filter(|e| spin(e) == axis).collect();
                packs.extend(group.chunks(W).map(<[usize]>::to_vec));
            }
            packs
        };
        let packs = [
            packs_of(&bushings),
            packs_of(&linear),
            packs_of(&with_curves),
        ]
        .concat();
        for (seed, chunk) in packs.iter().enumerate() {
            law_in_lanes_and_alone(Portable, &model, chunk, 11 + seed as u64);
            #[cfg(target_arch = "x86_64")]
            if let Some(avx) = crate::m3::Avx2::detect() {
                law_in_lanes_and_alone(avx, &model, chunk, 11 + seed as u64);
            }
        }
    }

    #[test]
    fn direct_log_and_jacobian_match_the_quaternion_route() {
        for th in [
            [0.0, 0.0, 0.0],
            [1e-9, -2e-9, 3e-9],
            [2e-5, 1e-5, -3e-5],
            [0.01, -0.02, 0.005],
            [0.3, -1.2, 0.7],
            [1.2, 1.3, -0.4],
            [2.9, 0.1, 0.0],
        ] {
            let th = Vector3::from(th);
            let r = nalgebra::Rotation3::from_scaled_axis(th).into_inner();
            let (t_fast, d_fast) = log_with_inv_jacobian(&r, true);
            let t_ref = log_so3(&r);
            let d_ref = inv_left_jacobian(&t_ref);
            assert!(
                (t_fast - t_ref).norm() <= 1e-14 * (1.0 + th.norm()),
                "{th:?}: {t_fast:?} vs {t_ref:?}"
            );
            assert!((d_fast - d_ref).norm() <= 1e-12, "{th:?}");
        }
    }
}
