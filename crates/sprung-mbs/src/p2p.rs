//! Point-to-point force elements: spring, damper, bump and rebound stops (document 000, section 2;
//! `reference-suspensions.md` §1.4).
//!
//! L = |x_I − x_J|, u = (x_I − x_J)/L, L̇ = u · (v_I − v_J); the scalar force f(L, L̇) is
//! tension-positive: −f u acts on body_i at x_I and +f u on body_j at x_J.

use nalgebra::Vector3;
use sprung_model::Curve;

use crate::compiled::{DamperLaw, P2pLaw};
use crate::element::{ElementForce, Ends, Partials};
use crate::m3::{Lanes, M3};

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
    let len = dx.norm();
    let dv = mi.v - mj.v;
    // One division (its reciprocal) instead of three: the divider is a scarce unit in q.
    let inv_len = if len > MIN_LENGTH { 1.0 / len } else { 0.0 };
    let u = dx * inv_len;
    let len_rate = u.dot(&dv);
    let (f, f_l, f_ld) = if len > MIN_LENGTH {
        scalar_force(law, curves, len, len_rate)
    } else {
        (0.0, 0.0, 0.0)
    };
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
