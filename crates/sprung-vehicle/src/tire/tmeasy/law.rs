//! The TMeasy force law itself (Rill; `../shared/data/vehicle-reference.md`, "TMeasy tire (Rill)
//! as implemented in Chrono", steps 3–9, with the variants chosen in `docs/tire-tmeasy.md`),
//! written once for any [`Real`] so that the same code gives the forces (`f64`) and their
//! analytic partials ([`super::dual::Dual`]).
//!
//! The load dependence, the combined-slip characteristic, the bore characteristic and the trail
//! depend on at most three intermediate quantities (the load ratio q and the slips); they are
//! differentiated in those ([`Chained::Sub`], three derivative lanes) and chained back to the
//! kinematic inputs, which gives the same partials as one pass in all inputs at a fraction of
//! the arithmetic, and the same values bit for bit.

use super::params::{Curve, TmeasyParams};
use crate::dual::{Chained, Real};

/// Everything the law returns: forces/moments in the contact frame and the state rates.
#[derive(Debug, Clone, Copy)]
pub struct LawOut<T> {
    /// Fx, Fy, Mx, My, Mz.
    pub forces: [T; 5],
    /// ẋ_e, ẏ_e, ḃ_e.
    pub rates: [T; 3],
    /// Values the state partials are formed from.
    pub aux: Aux,
}

/// Intermediate values of the law: the rates and forces are affine in the states with these
/// coefficients, so their state partials follow without differentiating the law again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Aux {
    /// Transport velocity v_t, m/s.
    pub vt: f64,
    /// Secant slopes f_sx, f_sy (N per unit slip) and of the bore characteristic f_sB, N.
    pub fs: [f64; 3],
    /// Contact length times normalised trail, L n, m (M_z = −F_y L n + M_B).
    pub trail: f64,
    /// Bore radius R_B, m.
    pub rb: f64,
    /// Whether the tire is lifted off (all forces zero).
    pub lifted: bool,
}

/// The inputs of the law.
#[derive(Debug, Clone, Copy)]
pub struct LawIn<T> {
    /// Fz, ρ, vx, vy, ω, γ, ψ̇ (order of `tire::kin`).
    pub kin: [T; 7],
    /// x_e, y_e, b_e.
    pub states: [T; 3],
    /// μ_road / μ0 (constant).
    pub mu_scale: f64,
}

/// Parameters of one direction after the load dependence (step 4).
#[derive(Debug, Clone, Copy)]
struct Dir<T> {
    df0: T,
    fm: T,
    fs: T,
    sm: T,
    ss: T,
}

/// Degressive load dependence of a force, step 4: Q(w1, w2) = q (2 w1 − w2/2 − (w1 − w2/2) q),
/// returned without the leading factor q (so that ratios of forces stay finite at q = 0).
#[inline]
fn per_q<T: Real>(c: &Curve, q: T) -> T {
    T::cst(2.0 * c.pn - 0.5 * c.p2n) - q * (c.pn - 0.5 * c.p2n)
}

/// Linear load dependence of a slip or a torque parameter, step 4: w1 + (w2 − w1)(q − 1).
#[inline]
fn linear<T: Real>(c: &Curve, q: T) -> T {
    (q - 1.0) * (c.p2n - c.pn) + c.pn
}

/// Secant slope f(s)/s of the generalised characteristic (step 6) at s ≥ 0, with the slope rule
/// of `docs/tire-tmeasy.md`: when dF0 < 2 F_M / s_M the position of the maximum moves to
/// s_M = 2 F_M / dF0 (Rill & Castro), so the measured initial slope and maximum both hold.
#[inline]
pub fn secant<T: Real>(s: T, df0: T, fm: T, sm: T, fs: T, ss: T) -> T {
    let two_fm = fm * 2.0;
    let sm = if df0.val() * sm.val() < two_fm.val() {
        two_fm / df0
    } else {
        sm
    };
    // Guards for combinations the parameter checks exclude in the pure directions.
    let fs = fs.min(fm);
    let ss = if ss.val() <= sm.val() { sm * 1.001 } else { ss };
    if s.val() < sm.val() {
        // dF0/((σ + p) σ + 1) with σ = s/s_M, p = dF0 s_M/F_M − 2, i.e. dF0/((σ − 1)² + dF0 s/F_M),
        // multiplied through by F_M s_M²: one division instead of three, a sum of positive terms.
        let sm2 = sm * sm;
        let d = s - sm;
        df0 * fm * sm2 / (fm * d * d + df0 * s * sm2)
    } else if s.val() > ss.val() {
        fs / s
    } else {
        let a = (fm / sm) * (fm / sm) / (df0 * sm);
        let s_star = sm + (fm - fs) / (a * (ss - sm));
        let f = if s_star.val() < ss.val() {
            if s.val() <= s_star.val() {
                let d = s - sm;
                fm - a * d * d
            } else {
                let b = a * (s_star - sm) / (ss - s_star);
                let d = ss - s;
                fs + b * d * d
            }
        } else {
            let sg = (s - sm) / (ss - sm);
            fm - (fm - fs) * sg * sg * (T::cst(3.0) - sg * 2.0)
        };
        f / s
    }
}

/// Normalised trail n/L of the aligning torque (step 8) at |s_y|.
#[inline]
fn trail<T: Real>(sy_abs: T, nl0: T, sq0: T, sqe: T) -> T {
    let sqe = sqe.max(sq0);
    let w = sq0 / sqe;
    if sy_abs.val() <= sq0.val() {
        let sh = sy_abs / sq0;
        let one = T::cst(1.0);
        nl0 * ((one - w) * (one - sh) + w * (one - (T::cst(3.0) - sh * 2.0) * sh * sh))
    } else if sy_abs.val() < sqe.val() {
        let r = (sqe - sy_abs) / (sqe - sq0);
        -nl0 * (T::cst(1.0) - w) * (sy_abs - sq0) / sq0 * r * r
    } else {
        T::cst(0.0)
    }
}

impl TmeasyParams {
    /// Evaluates the law. `dynamic` = false gives the steady-state forces (states ignored,
    /// rates zero).
    #[inline(always)]
    pub fn law<T: Chained>(&self, inp: &LawIn<T>, dynamic: bool) -> LawOut<T> {
        let zero = T::cst(0.0);
        let sub_zero = T::Sub::cst(0.0);
        let [fz, rho, vx, vy, om, gam, psid] = inp.kin;
        let [xe, ye, be] = inp.states;
        let mu = inp.mu_scale;

        // Step 3: load ratio, radii, contact length, transport and slip velocities, slips.
        let q = if fz.val() <= 0.0 {
            zero
        } else if fz.val() >= self.pn_max {
            T::cst(self.pn_max / self.pn)
        } else {
            fz / self.pn
        };
        let r_eff = rho * (-1.0 / 3.0) + self.r0;
        let vt = r_eff * om.abs() + self.v_n;
        // The slips (and the bore slip below) by one reciprocal of v_t.
        let inv_vt = T::cst(1.0) / vt;
        let vsx = vx - om * r_eff;
        let vsy = vy;
        let sx = -vsx * inv_vt;
        let sy = -vsy * inv_vt;
        let len = if rho.val() > 0.0 {
            (rho * (4.0 * self.r0)).sqrt()
        } else {
            zero
        };

        // Step 4: load dependence, in the sub-expression's inputs u = (q, s_x, s_y).
        let qs = q.sub_seed(0);
        let x = Dir {
            df0: per_q(&self.dfx0, qs),
            fm: per_q(&self.fxm, qs),
            fs: per_q(&self.fxs, qs),
            sm: linear(&self.sxm, qs),
            ss: linear(&self.sxs, qs),
        };
        let y = Dir {
            df0: per_q(&self.dfy0, qs),
            fm: per_q(&self.fym, qs),
            fs: per_q(&self.fys, qs),
            sm: linear(&self.sym, qs),
            ss: linear(&self.sys, qs),
        };

        // Step 5 in Rill's normalised form: ŝ_x, ŝ_y from the pure-slip maxima (independent of q's
        // leading factor and of μ, which cancel), s_N = |(s_x/ŝ_x, s_y/ŝ_y)|.
        // With r = F_M/dF0 per direction, r_x/(r_x + r_y) = F_xM dF_y0/(F_xM dF_y0 + F_yM dF_x0);
        // 1/ŝ_x and 1/ŝ_y from one reciprocal of ŝ_x ŝ_y (three divisions instead of six).
        let (gx, gy) = (x.fm * y.df0, y.fm * x.df0);
        let shx = x.sm / (x.sm + y.sm) + gx / (gx + gy);
        let shy = T::Sub::cst(2.0) - shx; // ŝ_x + ŝ_y = 2
        let i_xy = T::Sub::cst(1.0) / (shx * shy);
        let (ihx, ihy) = (shy * i_xy, shx * i_xy);
        let nx = sx.sub_seed(1) * ihx;
        let ny = sy.sub_seed(2) * ihy;
        let sn = nx.hypot(ny);

        // Secant slopes dF/ds per direction (N per unit slip): F_x = f_sx s_x, F_y = f_sy s_y.
        let (fsx, fsy) = if qs.val() <= 0.0 {
            (sub_zero, sub_zero)
        } else if self.direction_blend_width > 0.0 {
            // The parameters of the combined characteristic blended between the directions
            // with squared direction cosines regularised at zero slip over the width s_B (docs,
            // "combined slip near zero slip"): c² = (n_x² + s_B²/2)/(s_N² + s_B²), s² =
            // (n_y² + s_B²/2)/(s_N² + s_B²). Rill's cosines turn by 90° while the slip passes
            // the origin at a distance |n_y|, which puts a spike of height ∝ 1/|n_y| into the
            // slopes' derivatives (issue 14); these weights are smooth, sum to 1, and tend to
            // Rill's for s_N ≫ s_B.
            let sb2 = self.direction_blend_width * self.direction_blend_width;
            let (nx2, ny2) = (nx * nx, ny * ny);
            let id2 = T::Sub::cst(1.0) / (nx2 + ny2 + sb2);
            let cc = (nx2 + sb2 * 0.5) * id2;
            let ss = (ny2 + sb2 * 0.5) * id2;
            let blend = |a: T::Sub, b: T::Sub| (a * a * cc + b * b * ss).sqrt();
            // s_N's derivative is undefined at exactly zero slip (a cone): there the secant
            // argument is the constant 0 (the slopes' values are continuous).
            let sn = if sn.val() > 0.0 { sn } else { sub_zero };
            let qm = qs * mu;
            let df0 = blend(x.df0 * shx, y.df0 * shy) * qs;
            let fm = blend(x.fm, y.fm) * qm;
            let fs = blend(x.fs, y.fs) * qm;
            let sm = blend(x.sm * ihx, y.sm * ihy) * mu;
            let ss = blend(x.ss * ihx, y.ss * ihy) * mu;
            let g = secant(sn, df0, fm, sm, fs, ss);
            (g * ihx, g * ihy)
        } else if sn.val() > 0.0 {
            let isn = T::Sub::cst(1.0) / sn;
            let c = nx * isn;
            let s = ny * isn;
            let qm = qs * mu;
            let df0 = (x.df0 * shx * c).hypot(y.df0 * shy * s) * qs;
            let fm = (x.fm * c).hypot(y.fm * s) * qm;
            let fs = (x.fs * c).hypot(y.fs * s) * qm;
            let sm = (x.sm * ihx * c).hypot(y.sm * ihy * s) * mu;
            let ss = (x.ss * ihx * c).hypot(y.ss * ihy * s) * mu;
            let g = secant(sn, df0, fm, sm, fs, ss);
            (g * ihx, g * ihy)
        } else {
            // Exactly zero slip: the pure-slip initial slopes in each direction (the limits
            // of the secant slopes along the axes; docs, "combined slip").
            (x.df0 * qs, y.df0 * qs)
        };
        let u = [q, sx, sy];
        let (fsx, fsy) = (T::lift(fsx, &u), T::lift(fsy, &u));

        // Bore torque: bore radius from the contact patch, bore slip, and a characteristic with
        // the mean of the longitudinal and lateral parameters (docs, "bore torque").
        let rb = (len * 0.5 + self.width * 0.5) * (0.5 * 2.0 / 3.0);
        let omega_n = psid + om * gam.sin();
        let vsb = rb * omega_n;
        let sb = -vsb * inv_vt;
        let sb_abs = sb.abs();
        let fsb = if qs.val() <= 0.0 {
            sub_zero
        } else {
            let h = |a: T::Sub, b: T::Sub| (a + b) * 0.5;
            secant(
                sb_abs.sub_seed(1),
                h(x.df0, y.df0) * qs,
                h(x.fm, y.fm) * (qs * mu),
                h(x.sm, y.sm) * mu,
                h(x.fs, y.fs) * (qs * mu),
                h(x.ss, y.ss) * mu,
            )
        };
        let fsb = T::lift(fsb, &[q, sb_abs, zero]);

        // Rill's first-order tire dynamics: the contact patch deflects by x_e against c_x, d_x and
        // slides with v_sx + ẋ_e, so c_x x_e + d_x ẋ_e = −f_sx (v_sx + ẋ_e) / v_t.
        let (fx, fy, mb, rates) = if dynamic {
            let xd = (-(vt * self.cx * xe) - fsx * vsx) / (vt * self.dx + fsx);
            let yd = (-(vt * self.cy * ye) - fsy * vsy) / (vt * self.dy + fsy);
            let bd = (-(vt * self.cy * be) - fsb * vsb) / (vt * self.dy + fsb);
            let fx = xe * self.cx + xd * self.dx;
            let fy = ye * self.cy + yd * self.dy;
            let mb = rb * (be * self.cy + bd * self.dy);
            (fx, fy, mb, [xd, yd, bd])
        } else {
            (fsx * sx, fsy * sy, rb * fsb * sb, [zero; 3])
        };

        let mut aux = Aux {
            vt: vt.val(),
            fs: [fsx.val(), fsy.val(), fsb.val()],
            trail: 0.0,
            rb: rb.val(),
            lifted: true,
        };
        if fz.val() <= 0.0 {
            // Lifted off: no forces; the deflections relax (f_s = 0 in the rates).
            return LawOut {
                forces: [zero; 5],
                rates,
                aux,
            };
        }

        // Step 8: aligning torque by the pneumatic trail, plus the bore torque.
        let sy_abs = sy.abs();
        let n = trail(
            sy_abs.sub_seed(1),
            linear(&self.nl0, qs),
            linear(&self.sq0, qs),
            linear(&self.sqe, qs),
        );
        let n = T::lift(n, &[q, sy_abs, zero]);
        let len_n = len * n;
        aux.trail = len_n.val();
        aux.lifted = false;
        let mz = -fy * len_n + mb;
        // Step 9: rolling resistance and overturning moment.
        let my = -(fz * (self.fr * self.r0)) * om.tanh();
        let mx = -((rho * (2.0 * self.d2) + self.d1) * gam) * (self.width * self.width / 12.0);
        LawOut {
            forces: [fx, fy, mx, my, mz],
            rates,
            aux,
        }
    }
}
