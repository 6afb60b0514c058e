//! ode113: variable-step, variable-order (1..=12) Adams–Bashforth–Moulton PECE with local
//! extrapolation (document 001, "ode113 und ode15s"; Shampine–Gordon lineage).
//!
//! The formulas are built directly on the non-uniform grid from the Newton form of the
//! interpolating polynomial of past slopes:
//! * predict (Adams–Bashforth, order k): integrate the polynomial through `f_n, …, f_{n-k+1}`
//!   over `[t_n, t_n + h]`;
//! * evaluate `f_p = f(t_{n+1}, y_p)`;
//! * correct (Adams–Moulton, order k+1 = local extrapolation): integrate the polynomial through
//!   `f_p, f_n, …, f_{n-k+1}`; evaluate `f(t_{n+1}, y_c)` for the history.
//!
//! The corrector is a sum of Newton terms `T_i = f[x_0..x_i] ∫ Π_{j<i}(s - x_j) ds`; the error of
//! the order-k formula is estimated by `‖T_k‖` (eq.-14 norm), those of orders k-1 and k+1 by
//! `‖T_{k-1}‖` and `‖T_{k+1}‖`, which drive the order change. Step factors are limited to
//! [0.5, 2] after success. Dense output integrates the corrector polynomial to the output time.

use super::OdeError;
use super::core::{Ctx, Recorder, Setup, all_finite, min_step, step_factor};

const KMAX: usize = 12;
const NHIST: usize = KMAX + 2;

/// Integrals `I_i(u) = h^{i+1} ∫_0^u Π_{j<i} (v - ξ_j) dv` for i = 0..=m with ξ_j = (x_j - t_n)/h.
fn newton_integrals(x: &[f64], tn: f64, h: f64, u: f64, m: usize, out: &mut [f64]) {
    let mut poly = [0.0f64; NHIST + 2];
    poly[0] = 1.0;
    let mut hp = h;
    for (i, deg) in (0..=m).enumerate() {
        // integrate current polynomial (degree deg) from 0 to u
        let mut s = 0.0;
        let mut up = u;
        for (mm, c) in poly.iter().enumerate().take(deg + 1) {
            s += c * up / (mm as f64 + 1.0);
            up *= u;
        }
        out[i] = hp * s;
        if i == m {
            break;
        }
        // multiply by (v - ξ_i)
        let xi = (x[i] - tn) / h;
        for mm in (0..=deg + 1).rev() {
            let lower = if mm > 0 { poly[mm - 1] } else { 0.0 };
            poly[mm] = lower - xi * poly[mm];
        }
        hp *= h;
    }
}

/// Divided differences `d[i] = f[x_0..x_i]` (vector-valued) for nodes `x[0..=m]`, values `f[i]`.
fn divided_differences(x: &[f64], f: &[&[f64]], m: usize, d: &mut [Vec<f64>]) {
    for i in 0..=m {
        d[i].copy_from_slice(f[i]);
    }
    for l in 1..=m {
        for i in (l..=m).rev() {
            let den = x[i] - x[i - l];
            let (lo, hi) = d.split_at_mut(i);
            let prev = &lo[i - 1];
            for (a, b) in hi[0].iter_mut().zip(prev.iter()) {
                *a = (*a - b) / den;
            }
        }
    }
}

/// Runs ode113 over all pieces; returns the final time.
pub(crate) fn run(
    ctx: &mut Ctx,
    setup: &Setup,
    rec: &mut Recorder,
    t0: f64,
    y: &mut [f64],
) -> Result<f64, OdeError> {
    let n = ctx.n;
    // history, newest first
    let mut ts = vec![0.0f64; NHIST];
    let mut fs: Vec<Vec<f64>> = vec![vec![0.0; n]; NHIST];
    let mut nh: usize;
    let mut dd_old: Vec<Vec<f64>> = vec![vec![0.0; n]; NHIST + 1];
    let mut dd_new: Vec<Vec<f64>> = vec![vec![0.0; n]; NHIST + 1];
    let mut xs = vec![0.0f64; NHIST + 1];
    let mut integ = vec![0.0f64; NHIST + 2];
    let mut yp = vec![0.0; n];
    let mut yc = vec![0.0; n];
    let mut fp = vec![0.0; n];
    let mut tmp = vec![0.0; n];
    if rec.start(t0, y) {
        return Ok(t0);
    }
    let mut t = t0;
    let mut h_carry = 0.0f64;
    for (piece, &b) in setup.stops.iter().enumerate() {
        ctx.start_piece(b, t, y, &mut fs[0])?;
        ts[0] = t;
        nh = 1;
        let hmax = setup.hmax.min(b - t);
        let mut h = if piece == 0 {
            setup.first_step(ctx, t, y, &fs[0], 1, hmax)
        } else {
            h_carry.min(hmax)
        };
        let mut k = 1usize;
        let mut steps_at_k = 0usize;
        let mut fails = 0usize;
        let mut starting = true;
        while t < b {
            ctx.count_attempt(setup.max_steps, t)?;
            let hmin = min_step(t);
            h = h.min(hmax);
            let last = t + 1.05 * h >= b;
            let tnew = if last { b } else { t + h };
            let hs = tnew - t;
            if hs <= hmin {
                return Err(OdeError::StepSizeUnderflow { t, h: hs });
            }
            // predictor (AB order k over history nodes ts[0..k])
            let kk = k.min(nh);
            let mut old_refs: [&[f64]; NHIST] = [&[]; NHIST];
            for i in 0..kk {
                old_refs[i] = &fs[i];
            }
            divided_differences(&ts, &old_refs, kk - 1, &mut dd_old);
            newton_integrals(&ts, t, hs, 1.0, kk - 1, &mut integ);
            for c in 0..n {
                let mut v = y[c];
                for i in 0..kk {
                    v += dd_old[i][c] * integ[i];
                }
                yp[c] = v;
            }
            ctx.f(tnew, &yp, &mut fp);
            // corrector nodes: tnew, ts[0..]
            let mnew = (kk + 1).min(nh); // highest index usable: kk (order kk+1) and kk+1 if history allows
            xs[0] = tnew;
            xs[1..=nh].copy_from_slice(&ts[..nh]);
            let mut new_refs: [&[f64]; NHIST + 1] = [&[]; NHIST + 1];
            new_refs[0] = &fp;
            for i in 0..nh {
                new_refs[i + 1] = &fs[i];
            }
            divided_differences(&xs, &new_refs, mnew, &mut dd_new);
            newton_integrals(&xs, t, hs, 1.0, mnew, &mut integ);
            for c in 0..n {
                let mut v = y[c];
                for i in 0..=kk {
                    v += dd_new[i][c] * integ[i];
                }
                yc[c] = v;
            }
            let term_norm = |i: usize, tmp: &mut [f64], ctx: &Ctx, yc: &[f64], y: &[f64]| {
                for c in 0..n {
                    tmp[c] = dd_new[i][c] * integ[i];
                }
                ctx.err_norm(tmp, y, yc)
            };
            let err = term_norm(kk, &mut tmp, ctx, &yc, y);
            if !err.is_finite() || err > 1.0 {
                ctx.stats.rejected += 1;
                fails += 1;
                starting = false;
                if fails > 30 && !err.is_finite() {
                    return Err(OdeError::NonFinite { t: tnew });
                }
                let fac = if err.is_finite() {
                    step_factor(err, kk as f64 + 1.0, 0.9, 0.1, 0.5)
                } else {
                    0.25
                };
                h = hs * fac;
                if fails >= 3 {
                    k = 1;
                    steps_at_k = 0;
                }
                continue;
            }
            // accept
            fails = 0;
            ctx.stats.steps += 1;
            let errkm1 = if kk > 1 {
                term_norm(kk - 1, &mut tmp, ctx, &yc, y)
            } else {
                f64::INFINITY
            };
            let errkp1 = if mnew > kk {
                term_norm(kk + 1, &mut tmp, ctx, &yc, y)
            } else {
                f64::INFINITY
            };
            tmp.copy_from_slice(&yc);
            ctx.project(&mut tmp);
            yc.copy_from_slice(&tmp);
            // history push (newest first)
            ts.rotate_right(1);
            fs.rotate_right(1);
            ts[0] = tnew;
            ctx.f(tnew, &yc, &mut fs[0]);
            if !all_finite(&fs[0]) {
                return Err(OdeError::NonFinite { t: tnew });
            }
            nh = (nh + 1).min(NHIST);
            let stop = {
                let (ddn, xsr, yold) = (&dd_new, &xs, &*y);
                let (t_old, korder) = (t, kk);
                rec.step(tnew, &yc, &mut |tau, out| {
                    let mut ig = [0.0f64; NHIST + 2];
                    let u = (tau - t_old) / hs;
                    newton_integrals(xsr, t_old, hs, u, korder, &mut ig);
                    for c in 0..out.len() {
                        let mut v = yold[c];
                        for i in 0..=korder {
                            v += ddn[i][c] * ig[i];
                        }
                        out[c] = v;
                    }
                })
            };
            y.copy_from_slice(&yc);
            t = tnew;
            if stop {
                return Ok(t);
            }
            // order selection
            steps_at_k += 1;
            let mut knew = kk;
            let mut e = err;
            if kk > 1 && errkm1 <= err {
                knew = kk - 1;
                e = errkm1;
                starting = false;
            } else if kk < KMAX && nh > kk + 1 && (starting || steps_at_k > kk) && errkp1 < err {
                knew = kk + 1;
                e = errkp1;
            }
            if knew != k {
                steps_at_k = 0;
            }
            k = knew;
            let fac = step_factor(e, knew as f64 + 1.0, 0.9, 0.5, 2.0);
            if fac < 1.0 {
                starting = false;
            }
            h = if last { h.max(hs) } else { hs * fac };
        }
        h_carry = h;
        t = b;
    }
    Ok(t)
}
