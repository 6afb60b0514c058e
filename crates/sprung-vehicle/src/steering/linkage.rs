//! The linkage equations of the quasi-static dual-axle steering, document 002
//! (`../shared/seeds/002_e0ef91a6cdcd28dd.txt`, eqs. 10-50) with the corrections of
//! `../shared/seeds/002-errata.md`, written as the stationarity of one elastic energy.
//!
//! Markers (relative marker form of `sprung_mbs::element_law`): 0 = steering box at H₁ (its z
//! axis is the pitman-arm axis e_P), 1 = coupling-lever bearing at H₂ (z axis = e_L), 2 = joint
//! J₁ of tie rod 1 on the left knuckle of axle 1, 3 = joint J₂ of tie rod 2 on the left knuckle
//! of axle 2. z collects the 24 marker perturbations (δp_k, δφ_k), k = 0..3.
//!
//! Rod ends: a knuckle end is its marker's origin; an arm end on marker k (k = 0: pitman arm,
//! angle θ₀ = δ_P; k = 1: coupling lever, θ₁ = δ_L) is x_k + s, s = R_k A_z(θ_k) p (p: the arm
//! vector in the marker frame at θ = 0), eqs. 14, 15. For each rod r = x_b − x_a (eq. 11),
//! ℓ = |r|, e = r/ℓ, u = ℓ − ℓ₀, elastic force F = c u (eq. 12), φ = F e. The force on end a is
//! +φ, on end b −φ; an arm end passes its force and moment s × f to the frame marker (the arm's
//! bearing and the box carry it), so the element's wrenches balance exactly (errata item 9).
//!
//! Energy: V = ½ c_S φ_S² + Σ ½ c_i u_i² + V_PL(δ_P) + V_LL(δ_L) with δ_P = P(δ_W − φ_S) (eq. 18,
//! `ratio`), the stops V_stop = ½ k (θ − θ_max)² beyond θ_max (likewise below θ_min). The
//! algebraic variables y = (φ_S, δ_L) solve g = ∂V/∂y = 0:
//!
//! g₀ = c_S φ_S − i_S E_θ₀  (= T₁ of eq. 31 with T_PL = −V_PL', errata item 1),
//! g₁ = E_θ₁               (= −T₂ of eq. 32),
//!
//! E_θⱼ = ∂E/∂θⱼ = Σ_rods φ·∂r/∂θⱼ + V'_stop, ∂r/∂θⱼ = ±e_j × s (errata item 4: the arm vector
//! turns with +e × s). The Newton matrix is exact (errata items 2, 3):
//!
//! J = [[c_S + i_S² E_θ₀θ₀ + P'' E_θ₀, −i_S E_θ₀θ₁], [−i_S E_θ₁θ₀, E_θ₁θ₁]],
//! E_θθ = Σ (∂r/∂θ)ᵀ K (∂r/∂θ) + Σ_ends σ φ·(e × (e × s)) + V''_stop, K = c e eᵀ + (F/ℓ)(I − e eᵀ),
//!
//! where the first term reproduces eqs. 36-39 with the sign of ∂F₂/∂δ_L corrected (errata item
//! 2) and the second keeps the turning of the rod directions and the lever arms that eqs. 36-39
//! drop (errata item 3).
//!
//! Exact total partials (implicit function theorem, the exact form of eqs. 41-50 and 57-58): with
//! w(z, θ) the marker wrenches (24), W_z = ∂w/∂z, W_θ = ∂w/∂θ at fixed θ, D = diag(−i_S, 1) =
//! ∂θ/∂y and ∂g/∂z = −Dᵀ W_θᵀ (w = −∂E/∂z),
//!
//! dy/dz = J⁻¹ Dᵀ W_θᵀ,   dw/dz = W_z + W_θ D dy/dz,
//!
//! a symmetric softening (the Schur complement of the elastic Hessian) of the rigid-arm stiffness
//! W_z. Eqs. 47-50's effective stiffness c_ij is the rod-direction projection of it.

use std::ops::AddAssign;

use nalgebra::{Matrix2, Matrix3, SMatrix, Vector2, Vector3};
use sprung_mbs::element_law::MarkerState;

use super::ratio::{BoxRatio, Transmission};
use crate::dual::sin_cos;

/// Marker index of the steering box (pitman-arm bearing H₁).
pub const BOX: usize = 0;
/// Marker index of the coupling-lever bearing H₂.
pub const LEVER: usize = 1;
/// Marker index of J₁ on the left knuckle of axle 1.
pub const KNUCKLE_1: usize = 2;
/// Marker index of J₂ on the left knuckle of axle 2.
pub const KNUCKLE_2: usize = 3;
/// Number of marker perturbation coordinates.
pub const NZ: usize = 24;

/// 24 × 24 partials.
pub type Mat24 = SMatrix<f64, NZ, NZ>;
/// 24 × 2 partials.
pub type Mat24x2 = SMatrix<f64, NZ, 2>;
/// 2 × 24 partials.
pub type Mat2x24 = SMatrix<f64, 2, NZ>;
type Mat3x24 = SMatrix<f64, 3, NZ>;
type Mat3x2 = SMatrix<f64, 3, 2>;
/// A 24-vector (wrenches, marker velocities).
pub type Vec24 = SMatrix<f64, NZ, 1>;

/// Newton tolerance, rad: the iteration stops after a step of at most 1e-10 rad, or after a
/// step s_k whose contraction θ = |s_k|/|s_{k−1}| < 1 bounds the error left after it,
/// θ/(1 − θ) |s_k|, below a tenth of the tolerance (the bound of a linearly converging
/// iteration whose rate does not grow; with quadratic convergence the error left is far
/// smaller, κ|s_k|²). The second test saves the third iteration of most warm-started solves
/// (steps ≈ 1e-5, then ≈ 1e-9 rad: θ ≈ 1e-4, bound ≈ 1e-13 rad).
pub const NEWTON_TOLERANCE: f64 = 1e-10;
/// Iteration limit of the Newton solve.
pub const NEWTON_MAX_ITERATIONS: u32 = 30;
/// Largest Newton step component, rad (a damped first step far from the solution).
const MAX_STEP: f64 = 0.3;

/// One end of a rod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct End {
    /// The marker it moves with.
    pub marker: usize,
    /// For an arm end (markers 0 and 1): the arm vector in the marker frame at θ = 0, m.
    pub arm: Option<Vector3<f64>>,
}

/// A rod: linear spring with a viscous part between two ends (eq. 12).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rod {
    /// End a (r = x_b − x_a).
    pub a: End,
    /// End b.
    pub b: End,
    /// c_i, N/m.
    pub stiffness: f64,
    /// d_i, N s/m.
    pub damping: f64,
    /// ℓ_i0, m.
    pub free_length: f64,
}

/// A pair of stops on an arm angle: V = ½ k (θ − θ_max)² for θ > θ_max, ½ k (θ − θ_min)² for
/// θ < θ_min (a linear restoring torque past the stop).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stop {
    /// θ_min, rad.
    pub min: f64,
    /// θ_max, rad.
    pub max: f64,
    /// k, N m/rad.
    pub stiffness: f64,
}

impl Stop {
    /// (V', V'') at θ: V' = −(restoring torque).
    pub fn at(&self, theta: f64) -> (f64, f64) {
        if theta > self.max {
            (self.stiffness * (theta - self.max), self.stiffness)
        } else if theta < self.min {
            (self.stiffness * (theta - self.min), self.stiffness)
        } else {
            (0.0, 0.0)
        }
    }
}

/// The linkage parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Linkage {
    /// Tie rod 1 (pitman arm I₁ → J₁), coupling rod (C₁ → C₂), tie rod 2 (lever I₂ → J₂).
    pub rods: [Rod; 3],
    /// c_S, N m/rad.
    pub column_stiffness: f64,
    /// The box transmission.
    pub ratio: BoxRatio,
    /// Stops of the pitman arm (δ_P) and the coupling lever (δ_L).
    pub stops: [Stop; 2],
}

/// An end's geometry at the current state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndGeo {
    /// Marker.
    pub marker: usize,
    /// σ: −1 for end a, +1 for end b (r = Σ σ x_end).
    pub sign: f64,
    /// Arm vector s from the marker origin, global (zero for a knuckle end), m.
    pub s: Vector3<f64>,
    /// Position, global, m.
    pub pos: Vector3<f64>,
    /// Arm axis e_k for an arm end.
    pub axis: Option<Vector3<f64>>,
}

/// A rod's geometry and elastic force at the current state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodGeo {
    /// Ends a, b.
    pub ends: [EndGeo; 2],
    /// ℓ, m.
    pub length: f64,
    /// e = r/ℓ.
    pub e: Vector3<f64>,
    /// Elastic force F = c u, N (tension positive).
    pub force: f64,
    /// K = ∂φ/∂r = c e eᵀ + (F/ℓ)(I − e eᵀ), N/m.
    pub k: Matrix3<f64>,
}

/// The linkage at one y = (φ_S, δ_L): geometry, balance g and Newton matrix J.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct State {
    /// y = (φ_S, δ_L), rad.
    pub y: Vector2<f64>,
    /// δ_W, rad.
    pub delta_w: f64,
    /// δ_S = δ_W − φ_S, rad.
    pub delta_s: f64,
    /// The box transmission at δ_S.
    pub trans: Transmission,
    /// θ = (δ_P, δ_L), rad.
    pub theta: Vector2<f64>,
    /// Rods 1, C, 2.
    pub rods: [RodGeo; 3],
    /// E_θ, N m.
    pub e_th: Vector2<f64>,
    /// E_θθ, N m/rad.
    pub e_thth: Matrix2<f64>,
    /// g = ∂V/∂y, N m.
    pub g: Vector2<f64>,
    /// J = ∂g/∂y, N m/rad.
    pub jac: Matrix2<f64>,
}

/// The outcome of a Newton solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solution {
    /// The linkage at the solution.
    pub state: State,
    /// Newton iterations (Newton-matrix solves).
    pub iterations: u32,
    /// Whether the step fell below [`NEWTON_TOLERANCE`] within [`NEWTON_MAX_ITERATIONS`].
    pub converged: bool,
}

/// The derivatives of the wrenches at fixed θ and the rod-geometry Jacobians.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivs {
    /// ∂r_i/∂z.
    pub dr_dz: [Mat3x24; 3],
    /// ∂r_i/∂θ.
    pub dr_dth: [Mat3x2; 3],
    /// W_θ = ∂w/∂θ (24 × 2).
    pub w_th: Mat24x2,
    /// dy/dz = J⁻¹ Dᵀ W_θᵀ (2 × 24).
    pub dy_dz: Mat2x24,
    /// dy/dδ_W = −J⁻¹ ∂g/∂δ_W.
    pub dy_dw: Vector2<f64>,
}

fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    v.cross_matrix()
}

/// Rotation of `p` about the local z axis by the angle with sine and cosine `(s, c)`.
fn rot_z((s, c): (f64, f64), p: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(c * p.x - s * p.y, s * p.x + c * p.y, p.z)
}

/// (sin θ_j, cos θ_j) of the two arm angles: one [`crate::dual::sin_cos`] per arm (within ε of
/// the C library's `sincos` at half its instructions), shared by its rod ends.
fn arm_sin_cos(theta: &Vector2<f64>) -> [(f64, f64); 2] {
    [sin_cos(theta[0]), sin_cos(theta[1])]
}

impl EndGeo {
    /// A placeholder overwritten by [`Linkage::state`].
    const ZERO: Self = Self {
        marker: 0,
        sign: 0.0,
        s: Vector3::new(0.0, 0.0, 0.0),
        pos: Vector3::new(0.0, 0.0, 0.0),
        axis: None,
    };
}

impl RodGeo {
    /// A placeholder overwritten by [`Linkage::state`].
    const ZERO: Self = Self {
        ends: [EndGeo::ZERO; 2],
        length: 0.0,
        e: Vector3::new(0.0, 0.0, 0.0),
        force: 0.0,
        k: Matrix3::new(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    };
}

impl State {
    /// A placeholder overwritten by [`Linkage::state_into`].
    const ZERO: Self = Self {
        y: Vector2::new(0.0, 0.0),
        delta_w: 0.0,
        delta_s: 0.0,
        trans: Transmission {
            delta_p: 0.0,
            ratio: 0.0,
            ratio_slope: 0.0,
        },
        theta: Vector2::new(0.0, 0.0),
        rods: [RodGeo::ZERO; 3],
        e_th: Vector2::new(0.0, 0.0),
        e_thth: Matrix2::new(0.0, 0.0, 0.0, 0.0),
        g: Vector2::new(0.0, 0.0),
        jac: Matrix2::new(0.0, 0.0, 0.0, 0.0),
    };
}

impl Linkage {
    #[inline(always)]
    fn end_geo(end: &End, sign: f64, markers: &[MarkerState], sc: &[(f64, f64); 2]) -> EndGeo {
        let m = &markers[end.marker];
        match end.arm {
            Some(p) => {
                let s = m.rot * rot_z(sc[end.marker], &p);
                EndGeo {
                    marker: end.marker,
                    sign,
                    s,
                    pos: m.x + s,
                    axis: Some(m.rot.column(2).into_owned()),
                }
            }
            None => EndGeo {
                marker: end.marker,
                sign,
                s: Vector3::zeros(),
                pos: m.x,
                axis: None,
            },
        }
    }

    /// Geometry and elastic force of rod `i` at θ.
    pub fn rod_geo(&self, i: usize, markers: &[MarkerState], theta: &Vector2<f64>) -> RodGeo {
        let mut rg = RodGeo::ZERO;
        self.rod_geo_into(i, markers, &arm_sin_cos(theta), &mut rg);
        rg
    }

    /// [`Self::rod_geo`] with the arm angles' sines and cosines computed once per state,
    /// written in place (the state's rods; moving the ≈ 300-byte geometry cost more than
    /// computing it).
    #[inline(always)]
    fn rod_geo_into(
        &self,
        i: usize,
        markers: &[MarkerState],
        sc: &[(f64, f64); 2],
        out: &mut RodGeo,
    ) {
        let rod = &self.rods[i];
        out.ends[0] = Self::end_geo(&rod.a, -1.0, markers, sc);
        out.ends[1] = Self::end_geo(&rod.b, 1.0, markers, sc);
        let r = out.ends[1].pos - out.ends[0].pos;
        let length = r.norm().max(1e-12);
        let e = r / length;
        let force = rod.stiffness * (length - rod.free_length);
        let eet = e * e.transpose();
        out.k = rod.stiffness * eet + (force / length) * (Matrix3::identity() - eet);
        out.length = length;
        out.e = e;
        out.force = force;
    }

    /// θ = (δ_P, δ_L) and the transmission at y for the steering-wheel angle `delta_w`.
    #[inline(always)]
    fn theta(&self, delta_w: f64, y: &Vector2<f64>) -> (f64, Transmission, Vector2<f64>) {
        let delta_s = delta_w - y[0];
        let trans = self.ratio.at(delta_s);
        (delta_s, trans, Vector2::new(trans.delta_p, y[1]))
    }

    /// The linkage at y (module docs).
    pub fn state(&self, markers: &[MarkerState], delta_w: f64, y: Vector2<f64>) -> State {
        let mut st = State::ZERO;
        self.state_into(markers, delta_w, y, &mut st);
        st
    }

    /// [`Self::state`] written into `st` (the Newton iteration keeps one state and rewrites
    /// it: built by value, each state was moved about 1 kB at a time).
    #[inline(always)]
    pub fn state_into(
        &self,
        markers: &[MarkerState],
        delta_w: f64,
        y: Vector2<f64>,
        st: &mut State,
    ) {
        let (delta_s, trans, theta) = self.theta(delta_w, &y);
        let sc = arm_sin_cos(&theta);
        for (i, rg) in st.rods.iter_mut().enumerate() {
            self.rod_geo_into(i, markers, &sc, rg);
        }
        let mut e_th = Vector2::zeros();
        let mut e_thth = Matrix2::zeros();
        for rg in &st.rods {
            let phi = rg.force * rg.e;
            let mut dr_dth = Mat3x2::zeros();
            for end in &rg.ends {
                if let Some(ax) = end.axis {
                    let j = end.marker;
                    let d1 = end.sign * ax.cross(&end.s);
                    dr_dth.column_mut(j).add_assign(&d1);
                    // ∂²r/∂θ² of this end: σ e × (e × s).
                    e_thth[(j, j)] += end.sign * phi.dot(&ax.cross(&ax.cross(&end.s)));
                }
            }
            e_th += dr_dth.transpose() * phi;
            e_thth += dr_dth.transpose() * rg.k * dr_dth;
        }
        for (j, stop) in self.stops.iter().enumerate() {
            let (d1, d2) = stop.at(theta[j]);
            e_th[j] += d1;
            e_thth[(j, j)] += d2;
        }
        let (i_s, p2, cs) = (trans.ratio, trans.ratio_slope, self.column_stiffness);
        let g = Vector2::new(cs * y[0] - i_s * e_th[0], e_th[1]);
        let jac = Matrix2::new(
            cs + i_s * i_s * e_thth[(0, 0)] + p2 * e_th[0],
            -i_s * e_thth[(0, 1)],
            -i_s * e_thth[(1, 0)],
            e_thth[(1, 1)],
        );
        st.y = y;
        st.delta_w = delta_w;
        st.delta_s = delta_s;
        st.trans = trans;
        st.theta = theta;
        st.e_th = e_th;
        st.e_thth = e_thth;
        st.g = g;
        st.jac = jac;
    }

    /// Start values without a previous solution: a rigid column (φ_S = 0, so δ_P = P(δ_W)) and
    /// the coupling-lever angle that keeps the coupling rod at its free length, found by a
    /// one-dimensional Newton iteration from δ_L = δ_P (eq. 35 is its first guess; errata item 9:
    /// eq. 35 alone fails when the lever lags the pitman arm by tens of degrees).
    pub fn start(&self, markers: &[MarkerState], delta_w: f64) -> Vector2<f64> {
        let delta_p = self.ratio.at(delta_w).delta_p;
        let mut delta_l = delta_p;
        for _ in 0..NEWTON_MAX_ITERATIONS {
            let theta = Vector2::new(delta_p, delta_l);
            let rg = self.rod_geo(1, markers, &theta);
            let mut dl = 0.0;
            for end in &rg.ends {
                if let (Some(ax), LEVER) = (end.axis, end.marker) {
                    dl += end.sign * rg.e.dot(&ax.cross(&end.s));
                }
            }
            let res = rg.length - self.rods[1].free_length;
            if dl.abs() < 1e-9 {
                break;
            }
            let step = (-res / dl).clamp(-MAX_STEP, MAX_STEP);
            delta_l += step;
            if step.abs() <= NEWTON_TOLERANCE {
                break;
            }
        }
        Vector2::new(0.0, delta_l)
    }

    /// Solves g(y) = 0 by Newton's method (eq. 33) from `start`; convergence: a step, or the
    /// step after it predicted from the quadratic convergence, of at most [`NEWTON_TOLERANCE`]
    /// in both components.
    #[inline(always)]
    pub fn solve(&self, markers: &[MarkerState], delta_w: f64, start: Vector2<f64>) -> Solution {
        let mut y = start;
        let mut iterations = 0;
        let mut converged = false;
        // The last full (undamped) step's largest component.
        let mut last = f64::INFINITY;
        let mut st = State::ZERO;
        while iterations < NEWTON_MAX_ITERATIONS {
            self.state_into(markers, delta_w, y, &mut st);
            let Some(inv) = st.jac.try_inverse() else {
                break;
            };
            let mut step = -(inv * st.g);
            iterations += 1;
            let big = step.amax();
            if !big.is_finite() {
                break;
            }
            let damped = big > MAX_STEP;
            if damped {
                step *= MAX_STEP / big;
            }
            y += step;
            let theta = big / last;
            // No bound after a first or a damped step (`last` infinite).
            let contracted = last.is_finite()
                && theta < 1.0
                && theta / (1.0 - theta) * big <= 0.1 * NEWTON_TOLERANCE;
            if big <= NEWTON_TOLERANCE || contracted {
                converged = true;
                break;
            }
            last = if damped { f64::INFINITY } else { big };
        }
        self.state_into(markers, delta_w, y, &mut st);
        Solution {
            state: st,
            iterations,
            converged,
        }
    }

    /// The wrenches of rod forces `forces` (N, tension positive) on the four markers:
    /// w = Σ_i n_i F_i with n_i = −(∂r_i/∂z)ᵀ e_i (forces, then moments about the marker origin).
    #[inline(always)]
    pub fn wrench(st: &State, forces: &[f64; 3]) -> Vec24 {
        let mut w = Vec24::zeros();
        for (rg, &f) in st.rods.iter().zip(forces) {
            for end in &rg.ends {
                let fe = -end.sign * f * rg.e;
                let k = 6 * end.marker;
                w.fixed_rows_mut::<3>(k).add_assign(&fe);
                w.fixed_rows_mut::<3>(k + 3).add_assign(&end.s.cross(&fe));
            }
        }
        w
    }

    /// ∂r_i/∂z, ∂r_i/∂θ, W_θ and the implicit derivatives dy/dz, dy/dδ_W at `st`.
    pub fn derivs(&self, st: &State) -> Derivs {
        let mut dr_dz = [Mat3x24::zeros(); 3];
        let mut dr_dth = [Mat3x2::zeros(); 3];
        let mut w_th = Mat24x2::zeros();
        for (i, rg) in st.rods.iter().enumerate() {
            for end in &rg.ends {
                let k = 6 * end.marker;
                let mut blk = dr_dz[i].fixed_view_mut::<3, 3>(0, k);
                blk += Matrix3::identity() * end.sign;
                let mut blk = dr_dz[i].fixed_view_mut::<3, 3>(0, k + 3);
                blk -= skew(&end.s) * end.sign;
                if let Some(ax) = end.axis {
                    let d1 = end.sign * ax.cross(&end.s);
                    dr_dth[i].column_mut(end.marker).add_assign(&d1);
                }
            }
            let phi = rg.force * rg.e;
            for end in &rg.ends {
                let k = 6 * end.marker;
                let f = -end.sign * phi;
                let df = -end.sign * rg.k * dr_dth[i];
                let mut rows = w_th.fixed_rows_mut::<3>(k);
                rows += df;
                let mut rows = w_th.fixed_rows_mut::<3>(k + 3);
                rows += skew(&end.s) * df;
                if let Some(ax) = end.axis {
                    // The arm turns: ∂s/∂θ = e × s.
                    let dt = ax.cross(&end.s).cross(&f);
                    w_th.fixed_view_mut::<3, 1>(k + 3, end.marker)
                        .add_assign(&dt);
                }
            }
        }
        let i_s = st.trans.ratio;
        let d = Matrix2::new(-i_s, 0.0, 0.0, 1.0);
        let inv = st.jac.try_inverse().unwrap_or_else(Matrix2::zeros);
        let dy_dz = inv * d.transpose() * w_th.transpose();
        let dy_dw = -(inv * Self::g_w(st));
        Derivs {
            dr_dz,
            dr_dth,
            w_th,
            dy_dz,
            dy_dw,
        }
    }

    /// ∂g/∂δ_W at `st`.
    fn g_w(st: &State) -> Vector2<f64> {
        let i_s = st.trans.ratio;
        Vector2::new(
            -st.trans.ratio_slope * st.e_th[0] - i_s * i_s * st.e_thth[(0, 0)],
            i_s * st.e_thth[(1, 0)],
        )
    }

    /// W_z = ∂w/∂z at fixed θ for the elastic rod forces.
    pub fn w_z(st: &State, dv: &Derivs) -> Mat24 {
        let mut w = Mat24::zeros();
        for (i, rg) in st.rods.iter().enumerate() {
            let phi = rg.force * rg.e;
            let kd = rg.k * dv.dr_dz[i];
            for end in &rg.ends {
                let k = 6 * end.marker;
                let f = -end.sign * phi;
                let df = -end.sign * kd;
                let mut rows = w.fixed_rows_mut::<3>(k);
                rows += df;
                let mut rows = w.fixed_rows_mut::<3>(k + 3);
                rows += skew(&end.s) * df;
                if end.axis.is_some() {
                    // The arm turns with its marker: δs = δφ × s, δ(s × f) = [f]×[s]× δφ.
                    let mut blk = w.fixed_view_mut::<3, 3>(k + 3, k + 3);
                    blk += skew(&f) * skew(&end.s);
                }
            }
        }
        w
    }

    /// The rates of the rod elongations u̇_i along the quasi-static solution for the marker
    /// velocities of `markers` (v_k, ω_k) and the steering-wheel rate `delta_w_dot`:
    /// u̇_i = e_iᵀ(ṙ_i + ∂r_i/∂θ θ̇), θ̇ = D ẏ + (i_S δ̇_W, 0), ẏ = dy/dz ż + dy/dδ_W δ̇_W.
    ///
    /// Formed from vectors without the 24-column matrices of [`Self::derivs`] (which the
    /// evaluation needs only for this; the partials need them): at fixed θ the rod vector moves
    /// by ṙ_i = ∂r_i/∂z ż = Σ_ends σ (v_k + ω_k × s) and the arm directions ∂r_i/∂θ_j = σ e_j × s
    /// turn with their marker, so −W_θᵀ ż = ∂E_θ/∂z ż = Σ_i (∂r_i/∂θ)ᵀ K_i ṙ_i + Σ_arm ends
    /// σ φ_i·(ω_k × (e_k × s)) (the transposed rows of W_θ in [`Self::derivs`] applied to ż),
    /// and ẏ = −J⁻¹ (Dᵀ ∂E_θ/∂z ż + ∂g/∂δ_W δ̇_W). Equal to the matrix form
    /// [`Self::rod_rate_partials`] ż + the δ̇_W column to round-off (tested).
    #[inline(always)]
    pub fn rod_rates(st: &State, markers: &[MarkerState], delta_w_dot: f64) -> [f64; 3] {
        let i_s = st.trans.ratio;
        let mut r_dot = [Vector3::zeros(); 3];
        let mut dr_dth = [Mat3x2::zeros(); 3];
        let mut e_th_z = Vector2::zeros();
        for (i, rg) in st.rods.iter().enumerate() {
            let phi = rg.force * rg.e;
            for end in &rg.ends {
                let m = &markers[end.marker];
                r_dot[i] += end.sign * (m.v + m.w.cross(&end.s));
                if let Some(ax) = end.axis {
                    let es = ax.cross(&end.s);
                    dr_dth[i]
                        .column_mut(end.marker)
                        .add_assign(&(end.sign * es));
                    e_th_z[end.marker] += end.sign * phi.dot(&m.w.cross(&es));
                }
            }
            e_th_z += dr_dth[i].transpose() * (rg.k * r_dot[i]);
        }
        let inv = st.jac.try_inverse().unwrap_or_else(Matrix2::zeros);
        let rhs = Vector2::new(-i_s * e_th_z[0], e_th_z[1]) + Self::g_w(st) * delta_w_dot;
        let ydot = -(inv * rhs);
        let thdot = Vector2::new(-i_s * ydot[0] + i_s * delta_w_dot, ydot[1]);
        [0, 1, 2].map(|i| st.rods[i].e.dot(&(r_dot[i] + dr_dth[i] * thdot)))
    }

    /// ∂u̇_i/∂ż = e_iᵀ(∂r_i/∂z + ∂r_i/∂θ D dy/dz) (1 × 24 each).
    pub fn rod_rate_partials(st: &State, dv: &Derivs) -> [SMatrix<f64, 1, NZ>; 3] {
        let i_s = st.trans.ratio;
        let d = Matrix2::new(-i_s, 0.0, 0.0, 1.0);
        let dth = d * dv.dy_dz;
        [0, 1, 2].map(|i| st.rods[i].e.transpose() * (dv.dr_dz[i] + dv.dr_dth[i] * dth))
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{Rotation3, Vector2, Vector3};
    use sprung_mbs::element_law::MarkerState;

    use super::super::ratio::BoxRatio;
    use super::*;

    /// A linkage in a general pose: tilted arm axes, moving markers, a ratio curve (so that
    /// ∂i_S/∂δ_S enters), every rod loaded.
    fn pose() -> (Linkage, [MarkerState; 4]) {
        let rot = |ax: Vector3<f64>, a: f64| {
            *Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(ax), a).matrix()
        };
        let markers = [
            MarkerState {
                x: Vector3::new(0.6, 0.5, 0.55),
                rot: rot(Vector3::new(0.1, 0.2, 1.0), 0.3),
                v: Vector3::new(2.0, 0.1, -0.3),
                w: Vector3::new(0.2, -0.4, 0.3),
            },
            MarkerState {
                x: Vector3::new(-0.9, 0.45, 0.6),
                rot: rot(Vector3::new(-0.2, 0.1, 1.0), -0.2),
                v: Vector3::new(1.9, 0.2, 0.1),
                w: Vector3::new(0.2, -0.4, 0.3),
            },
            MarkerState {
                x: Vector3::new(0.2, 0.75, 0.45),
                rot: Matrix3::identity(),
                v: Vector3::new(2.1, -0.2, 0.4),
                w: Vector3::new(0.5, 0.1, -1.2),
            },
            MarkerState {
                x: Vector3::new(-1.7, 0.8, 0.5),
                rot: Matrix3::identity(),
                v: Vector3::new(1.8, 0.3, -0.5),
                w: Vector3::new(-0.3, 0.6, 0.9),
            },
        ];
        let end = |marker, arm| End { marker, arm };
        let rod = |a, b, free_length| Rod {
            a,
            b,
            stiffness: 2e7,
            damping: 2e4,
            free_length,
        };
        let linkage = Linkage {
            rods: [
                rod(
                    end(0, Some(Vector3::new(0.05, 0.2, -0.02))),
                    end(2, None),
                    0.6,
                ),
                rod(
                    end(0, Some(Vector3::new(-0.03, 0.15, 0.05))),
                    end(1, Some(Vector3::new(0.02, 0.18, 0.04))),
                    1.45,
                ),
                rod(
                    end(1, Some(Vector3::new(0.04, 0.2, 0.0))),
                    end(3, None),
                    0.85,
                ),
            ],
            column_stiffness: 5000.0,
            ratio: BoxRatio::curve(&[-10.0, 0.05, 0.0, 0.07, 10.0, 0.09]).expect("valid curve"),
            stops: [
                Stop {
                    min: -1.0,
                    max: 1.0,
                    stiffness: 1e5,
                },
                Stop {
                    min: -1.0,
                    max: 1.0,
                    stiffness: 1e5,
                },
            ],
        };
        // Free lengths 1-3 mm off the pose's lengths at θ = 0: every rod loaded, moderately.
        let mut linkage = linkage;
        for (i, off) in [(0, 0.002), (1, -0.001), (2, 0.003)] {
            let length = linkage.rod_geo(i, &markers, &Vector2::zeros()).length;
            linkage.rods[i].free_length = length + off;
        }
        (linkage, markers)
    }

    /// A solve that stops on the contraction bound ends at a root: one more Newton solve from
    /// its solution moves y by less than the bound's 1e-11 rad (δ_W = 0 puts δ_S on the ratio
    /// curve's knot, where Newton converges only linearly).
    #[test]
    fn predicted_convergence_ends_at_the_root() {
        let (linkage, markers) = pose();
        for delta_w in [-1.0, -0.4, 0.0, 0.4, 1.0] {
            let start = linkage.start(&markers, delta_w);
            let sol = linkage.solve(&markers, delta_w, start);
            assert!(sol.converged && sol.iterations < 10, "δ_W = {delta_w}");
            // Warm start from a nearby solution, as in stepping.
            let warm = linkage.solve(&markers, delta_w + 1e-3, sol.state.y);
            for s in [&sol, &warm] {
                let again = linkage.solve(&markers, s.state.delta_w, s.state.y);
                let moved = (again.state.y - s.state.y).amax();
                // The bound of the stopping test (a tenth of NEWTON_TOLERANCE).
                assert!(moved <= 1e-11, "δ_W = {delta_w}: moved {moved:e} rad");
            }
        }
    }

    /// The vector form of the rod rates equals the matrix form (∂u̇/∂ż ż from
    /// `rod_rate_partials`, plus e_iᵀ ∂r_i/∂θ (D dy/dδ_W + (i_S, 0)) δ̇_W from `derivs`) to
    /// round-off: two independent assemblies of the same derivative.
    #[test]
    fn rod_rates_match_the_matrix_form() {
        let (linkage, markers) = pose();
        let delta_w = 0.4;
        let start = linkage.start(&markers, delta_w);
        let sol = linkage.solve(&markers, delta_w, start);
        assert!(sol.converged);
        let st = &sol.state;
        let dv = linkage.derivs(st);
        let b = Linkage::rod_rate_partials(st, &dv);
        let mut zdot = Vec24::zeros();
        for (k, m) in markers.iter().enumerate() {
            zdot.fixed_rows_mut::<3>(6 * k).copy_from(&m.v);
            zdot.fixed_rows_mut::<3>(6 * k + 3).copy_from(&m.w);
        }
        let i_s = st.trans.ratio;
        for delta_w_dot in [0.0, 3.0] {
            let fast = Linkage::rod_rates(st, &markers, delta_w_dot);
            let thdot_w = Vector2::new(-i_s * dv.dy_dw[0] + i_s, dv.dy_dw[1]) * delta_w_dot;
            for i in 0..3 {
                let reference = (b[i] * zdot)[0] + st.rods[i].e.dot(&(dv.dr_dth[i] * thdot_w));
                let err = (fast[i] - reference).abs();
                // Round-off of sums of terms up to |ż| · |s| ≈ 1 m/s: 1e-12 m/s.
                assert!(
                    err <= 1e-12 * reference.abs().max(1.0),
                    "rod {i}, δ̇_W = {delta_w_dot}: {} vs {reference} (error {err:e})",
                    fast[i]
                );
            }
        }
    }
}
