//! Four point-to-point elements side by side ([`crate::pack`]): the force path (q only) of
//! springs, dampers and stops, one element per lane.
//!
//! The equations are those of [`crate::p2p::evaluate`]: Δx = x_I − x_J, L = |Δx|,
//! L̇ = Δx · (v_I − v_J) / L, force −f(L, L̇) Δx / L on body_i at x_I and the opposite on body_j at
//! x_J. Marker kinematics and the force vectors are computed in the lanes; length, rate and the
//! scalar law ([`crate::p2p::scalar_force`], any law, curve or not) lane by lane.

use nalgebra::Vector3;
use sprung_model::Curve;

use crate::compiled::{CompiledModel, ElementKind, P2pLaw};
use crate::m3::{L4, Lanes};
use crate::p2p::{MIN_LENGTH, scalar_force};
use crate::pack::{
    EndLanes, LanePack, PackedMarkers, W, Wrenches, cross, dot, lane, lane_elements, to_lanes,
};

/// Four point-to-point elements (unused lanes repeat lane 0 and are not written back).
#[derive(Debug, Clone)]
pub(crate) struct P2pPack {
    element: [usize; W],
    /// Lanes in use (1…4).
    pub used: usize,
    pub i: PackedMarkers,
    pub j: PackedMarkers,
    laws: [P2pLaw; W],
    design_length: [f64; W],
}

impl P2pPack {
    /// The point-to-point elements `chunk` (1…4 element indices).
    pub fn new(model: &CompiledModel, chunk: &[usize]) -> Self {
        let element = lane_elements(chunk);
        let el = |k: usize| &model.elements[element[k]];
        Self {
            element,
            used: chunk.len(),
            i: PackedMarkers::new(|k| &model.markers[el(k).marker_i]),
            j: PackedMarkers::new(|k| &model.markers[el(k).marker_j]),
            laws: std::array::from_fn(|k| match &el(k).kind {
                ElementKind::P2p(law) => law.clone(),
                ElementKind::Bushing(_) => unreachable!("only point-to-point elements"),
            }),
            design_length: std::array::from_fn(|k| el(k).design_length),
        }
    }
}

impl LanePack for P2pPack {
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
        let (mut len2, mut dx_dv) = ([0.0; 4], [0.0; 4]);
        l.store(dot(l, dx, dx), &mut len2);
        l.store(dot(l, dx, dv), &mut dx_dv);
        // Per lane: length, rate and the scalar law; the force is s Δx with s = −f / L.
        let (mut s, mut f, mut len, mut rate) = ([0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
        for k in 0..W {
            len[k] = len2[k].sqrt();
            if len[k] > MIN_LENGTH {
                let inv_len = 1.0 / len[k];
                rate[k] = dx_dv[k] * inv_len;
                f[k] = scalar_force(&self.laws[k], curves, len[k], rate[k]).0;
                s[k] = -f[k] * inv_len;
            }
        }
        let s = l.load(&s);
        let force = [l.mul(s, dx[0]), l.mul(s, dx[1]), l.mul(s, dx[2])];
        let (fg, ti, tj) = (
            to_lanes(l, &force),
            to_lanes(l, &cross(l, &mi.arm, &force)),
            to_lanes(l, &cross(l, &mj.arm, &force)),
        );
        let (xi, xj): ([L4; 3], [L4; 3]) = (to_lanes(l, &mi.x), to_lanes(l, &mj.x));
        for k in 0..self.used {
            let fk = lane(&fg, k);
            out.add(self.i.body[k], fk, lane(&ti, k));
            out.add(self.j.body[k], -fk, -lane(&tj, k));
            let e = &mut out.elements[self.element[k]];
            e.force = fk;
            e.torque = Vector3::zeros();
            e.point = [lane(&xi, k), lane(&xj, k)];
            e.point_end = [0, 1];
            e.out.force = Vector3::new(f[k], 0.0, 0.0);
            e.out.deflection = Vector3::new(len[k] - self.design_length[k], 0.0, 0.0);
            e.out.length = len[k];
            e.out.length_rate = rate[k];
        }
    }
}
