//! ode15s: variable-order (1..=5) numerical differentiation formulas (NDF) or backward
//! differentiation formulas (BDF) in backward-difference form with quasi-constant step size,
//! following Shampine & Reichelt, "The MATLAB ODE suite" (document 001, ref. \[11\]).
//!
//! * Formula of order k: `Σ_{m=1}^k γ_m ∇^m y_{n+1} - κ γ_k (y_{n+1} - y⁽⁰⁾_{n+1}) - h f(t_{n+1}, y_{n+1}) = 0`
//!   with `γ_m = Σ_{j≤m} 1/j`, predictor `y⁽⁰⁾ = Σ_{m=0}^k ∇^m y_n`, solved by simplified Newton
//!   with `I - (h/((1-κ)γ_k)) J` (at most 4 iterations, rate-based convergence test).
//! * κ per order (Shampine & Reichelt, Table 1): `(-0.1850, -1/9, -0.0823, -0.0415, 0)` for
//!   orders 1..5 (order 5 is the BDF); `bdf = true` sets κ = 0 everywhere. (The list in
//!   `integrators.md` puts the 0 first; the published table — and MATLAB — have it for order 5.)
//! * Local error `(κ γ_k + 1/(k+1)) ‖y_{n+1} - y⁽⁰⁾‖` in the norm of document 001 eq. 14.
//! * Step change by interpolation of the difference array (`dif · R·U`), order change by ±1
//!   after k+2 steps at constant h, the Jacobian is re-evaluated only when Newton converges too
//!   slowly with a Jacobian from an earlier point, the LU only when h or k change.
//! * Dense output: the interpolating polynomial of the backward differences.

use super::OdeError;
use super::core::{
    Ctx, Factored, IterationMatrix, Recorder, Setup, consistent_start, min_step, step_factor,
};

const MAXIT: usize = 4;
const G: [f64; 6] = [0.0, 1.0, 1.5, 11.0 / 6.0, 25.0 / 12.0, 137.0 / 60.0];
const KAPPA_NDF: [f64; 6] = [0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];

struct State {
    n: usize,
    inv_ga: [f64; 6],
    erconst: [f64; 7],
    /// Backward differences: column j (1-based) in dif[j-1], maxk + 2 columns.
    dif: Vec<Vec<f64>>,
    tmpcol: Vec<Vec<f64>>,
    /// Jacobian and LU of `I - (h/((1-κ)γ_k)) J`.
    w: IterationMatrix,
}

impl State {
    fn new(n: usize, maxk: usize, bdf: bool) -> Self {
        let mut kappa = KAPPA_NDF;
        if bdf {
            kappa = [0.0; 6];
        }
        let mut inv_ga = [0.0; 6];
        let mut erconst = [0.0; 7];
        for k in 1..=5 {
            inv_ga[k] = 1.0 / (G[k] * (1.0 - kappa[k]));
            erconst[k] = kappa[k] * G[k] + 1.0 / (k as f64 + 1.0);
        }
        erconst[6] = 1.0 / 7.0;
        Self {
            n,
            inv_ga,
            erconst,
            dif: vec![vec![0.0; n]; maxk + 2],
            tmpcol: vec![vec![0.0; n]; maxk + 2],
            w: IterationMatrix::new(n),
        }
    }

    /// Rescales the first k difference columns for the step ratio ρ = h_new/h_old.
    fn rescale(&mut self, k: usize, rho: f64) {
        // R(i,j) = Π_{m=1}^{i} (m - 1 - j ρ)/m ; U(i,j) = (-1)^i C(j, i) (1-based, i ≤ j)
        let mut r = [[0.0f64; 5]; 5];
        for j in 1..=k {
            let mut p = 1.0;
            for i in 1..=k {
                p *= (i as f64 - 1.0 - j as f64 * rho) / i as f64;
                r[i - 1][j - 1] = p;
            }
        }
        let mut u = [[0.0f64; 5]; 5];
        for j in 1..=k {
            let mut binom = 1.0; // C(j, i)
            for i in 1..=j {
                binom = binom * (j - i + 1) as f64 / i as f64;
                let sign = if i % 2 == 1 { -1.0 } else { 1.0 };
                u[i - 1][j - 1] = sign * binom;
            }
        }
        let mut ru = [[0.0f64; 5]; 5];
        for i in 0..k {
            for j in 0..k {
                ru[i][j] = (0..k).map(|m| r[i][m] * u[m][j]).sum();
            }
        }
        // dif(:,K) = dif(:,K) * RU
        for j in 0..k {
            for c in 0..self.n {
                self.tmpcol[j][c] = (0..k).map(|m| self.dif[m][c] * ru[m][j]).sum();
            }
        }
        for j in 0..k {
            let (a, b) = (&mut self.dif[j], &self.tmpcol[j]);
            a.copy_from_slice(b);
        }
    }
}

/// Step size allowed after a successful step by an error estimate `err` that behaves like `h^p`
/// (order selection of ode15s): `h / (safety · err^(1/p))`, at most `10 h`.
fn h_allowed(absh: f64, err: f64, p: f64, safety: f64) -> f64 {
    let temp = safety * err.powf(1.0 / p);
    if temp > 0.1 { absh / temp } else { 10.0 * absh }
}

/// Runs ode15s over all pieces; returns the final time.
pub(crate) fn run(
    ctx: &mut Ctx,
    setup: &Setup,
    rec: &mut Recorder,
    t0: f64,
    y: &mut [f64],
    maxk: usize,
    bdf: bool,
) -> Result<f64, OdeError> {
    let n = ctx.n;
    let mut st = State::new(n, maxk, bdf);
    let mut f0 = vec![0.0; n];
    let mut ynew = vec![0.0; n];
    let mut pred = vec![0.0; n];
    let mut psi = vec![0.0; n];
    let mut difkp1 = vec![0.0; n];
    let mut del = vec![0.0; n];
    let mut tmp = vec![0.0; n];
    let mass = ctx.mass_kind().is_some();
    let mut slope = vec![0.0; n];
    let mut mbuf = vec![0.0; n];
    if rec.start(t0, y) {
        return Ok(t0);
    }
    let mut t = t0;
    let mut absh_next = 0.0f64;
    for (piece, &b) in setup.stops.iter().enumerate() {
        ctx.start_piece(b, t, y, &mut f0)?;
        // initial slope y' (M y' = f with a mass matrix, consistent for a DAE)
        if !mass {
            slope.copy_from_slice(&f0);
        } else if piece == 0
            && let Some(yp) = ctx.yp0.as_ref()
        {
            slope.copy_from_slice(yp);
        } else {
            consistent_start(ctx, t, y, false, &mut slope)?;
        }
        let hmax = setup.hmax.min(b - t);
        let mut absh: f64 = if piece == 0 {
            setup.first_step(ctx, t, y, &slope, 1, hmax)
        } else {
            absh_next.min(hmax)
        };
        // restart at order 1
        let mut k = 1usize;
        for col in st.dif.iter_mut() {
            col.fill(0.0);
        }
        for c in 0..n {
            st.dif[0][c] = absh * slope[c];
        }
        st.w.evaluate_jacobian(ctx, t, y, &f0);
        let mut jcurrent = true;
        let mut abshlast = absh;
        let mut rate = 0.0f64;
        let mut havrate = false;
        let mut nconhk = 0usize;
        let mut done = false;
        while !done {
            let hmin = min_step(t);
            absh = absh.min(hmax).max(hmin);
            if 1.1 * absh >= b - t {
                absh = b - t;
                done = true;
            }
            if absh != abshlast {
                st.rescale(k, absh / abshlast);
                abshlast = absh;
                nconhk = 0;
            }
            let mut nfails = 0usize;
            // one step (with retries)
            let err = loop {
                ctx.count_attempt(setup.max_steps, t)?;
                let h = absh;
                let tnew = if done { b } else { t + h };
                let hinv_gak = h * st.inv_ga[k];
                // the LU key hinv_gak determines the matrix (it changes with h and k)
                match st.w.factor(&mut ctx.stats, hinv_gak, 1.0, hinv_gak) {
                    Factored::Singular => return Err(OdeError::Singular { t, h }),
                    Factored::New => havrate = false,
                    Factored::Kept => {}
                }
                // predict
                for c in 0..n {
                    let mut p = y[c];
                    let mut s = 0.0;
                    for j in 1..=k {
                        p += st.dif[j - 1][c];
                        s += st.dif[j - 1][c] * G[j];
                    }
                    pred[c] = p;
                    psi[c] = s * st.inv_ga[k];
                    ynew[c] = p;
                    difkp1[c] = 0.0;
                }
                let minnrm = 100.0 * f64::EPSILON * ctx.norm1(&ynew, y);
                let mut gotynew = false;
                let mut oldnrm = 0.0;
                for iter in 0..MAXIT {
                    ctx.f(tnew, &ynew, &mut tmp);
                    if mass {
                        // hinv_gak f - M(t, y) (ψ + d) (MATLAB's ode15s with mass matrix)
                        for c in 0..n {
                            del[c] = psi[c] + difkp1[c];
                        }
                        ctx.mass_mul(tnew, &ynew, &del, &mut mbuf);
                        for c in 0..n {
                            del[c] = hinv_gak * tmp[c] - mbuf[c];
                        }
                    } else {
                        for c in 0..n {
                            del[c] = hinv_gak * tmp[c] - (psi[c] + difkp1[c]);
                        }
                    }
                    st.w.lu.solve(&mut del, &mut ctx.stats);
                    let newnrm = ctx.norm1(&del, y);
                    for c in 0..n {
                        difkp1[c] += del[c];
                        ynew[c] = pred[c] + difkp1[c];
                    }
                    if !newnrm.is_finite() {
                        break;
                    }
                    if newnrm <= minnrm {
                        gotynew = true;
                        break;
                    } else if iter == 0 {
                        if havrate {
                            let errit = newnrm * rate / (1.0 - rate);
                            if errit <= 0.05 {
                                gotynew = true;
                                break;
                            }
                        } else {
                            rate = 0.0;
                        }
                    } else if newnrm > 0.9 * oldnrm {
                        break;
                    } else {
                        rate = (0.9 * rate).max(newnrm / oldnrm);
                        havrate = true;
                        let errit = newnrm * rate / (1.0 - rate);
                        if errit <= 0.5 {
                            gotynew = true;
                            break;
                        } else if iter == MAXIT - 1
                            || 0.5 < errit * rate.powi((MAXIT - 1 - iter) as i32)
                        {
                            break;
                        }
                    }
                    oldnrm = newnrm;
                }
                if !gotynew {
                    ctx.stats.rejected += 1;
                    if absh <= hmin {
                        return Err(OdeError::StepSizeUnderflow { t, h: absh });
                    }
                    if !jcurrent {
                        ctx.f(t, y, &mut tmp);
                        st.w.evaluate_jacobian(ctx, t, y, &tmp);
                        jcurrent = true;
                    } else {
                        absh = (0.3 * absh).max(hmin);
                        done = false;
                        st.rescale(k, absh / abshlast);
                        abshlast = absh;
                        nconhk = 0;
                    }
                    st.w.invalidate_lu();
                    continue;
                }
                let err = ctx.err_norm(&difkp1, y, &ynew) * st.erconst[k];
                if err.is_finite() && err <= 1.0 {
                    break err;
                }
                // error test failed
                ctx.stats.rejected += 1;
                if absh <= hmin {
                    return Err(OdeError::StepSizeUnderflow { t, h: absh });
                }
                nfails += 1;
                if !err.is_finite() {
                    if nfails > 20 {
                        return Err(OdeError::NonFinite { t: tnew });
                    }
                    absh = (0.25 * absh).max(hmin);
                } else if nfails == 1 {
                    let old = absh;
                    absh = hmin
                        .max(absh * step_factor(err, k as f64 + 1.0, 0.833, 0.1, f64::INFINITY));
                    if k > 1 {
                        for c in 0..n {
                            tmp[c] = st.dif[k - 1][c] + difkp1[c];
                        }
                        let errkm1 = ctx.err_norm(&tmp, y, &ynew) * st.erconst[k - 1];
                        let hkm1 = hmin
                            .max(old * step_factor(errkm1, k as f64, 0.769, 0.1, f64::INFINITY));
                        if hkm1 > absh {
                            absh = hkm1.min(old);
                            k -= 1;
                        }
                    }
                } else {
                    absh = hmin.max(0.5 * absh);
                }
                done = false;
                st.rescale(k, absh / abshlast);
                abshlast = absh;
                nconhk = 0;
            };
            // accepted
            ctx.stats.steps += 1;
            let h = absh;
            let tnew = if done { b } else { t + h };
            if k + 1 < st.dif.len() {
                for c in 0..n {
                    st.dif[k + 1][c] = difkp1[c] - st.dif[k][c];
                }
            }
            st.dif[k].copy_from_slice(&difkp1);
            for j in (1..=k).rev() {
                for c in 0..n {
                    let v = st.dif[j][c];
                    st.dif[j - 1][c] += v;
                }
            }
            // projection: keep the difference array consistent by adjusting ∇y
            tmp.copy_from_slice(&ynew);
            ctx.project(&mut tmp);
            if tmp != ynew {
                for c in 0..n {
                    st.dif[0][c] += tmp[c] - ynew[c];
                }
                ynew.copy_from_slice(&tmp);
            }
            let stop = {
                let (dif, kk, yn) = (&st.dif, k, &ynew);
                rec.step(tnew, &ynew, &mut |tau, out| {
                    let s = (tau - tnew) / h;
                    out.copy_from_slice(yn);
                    let mut p = 1.0;
                    for j in 1..=kk {
                        p *= (s + j as f64 - 1.0) / j as f64;
                        for c in 0..out.len() {
                            out[c] += dif[j - 1][c] * p;
                        }
                    }
                })
            };
            y.copy_from_slice(&ynew);
            t = tnew;
            jcurrent = false;
            if stop {
                return Ok(t);
            }
            if done {
                break;
            }
            // order and step selection
            nconhk = (nconhk + 1).min(maxk + 2);
            if nconhk >= k + 2 {
                let mut hopt = h_allowed(absh, err, k as f64 + 1.0, 1.2);
                let mut kopt = k;
                if k > 1 {
                    let errkm1 = ctx.err_norm(&st.dif[k - 1], y, y) * st.erconst[k - 1];
                    let hkm1 = h_allowed(absh, errkm1, k as f64, 1.3);
                    if hkm1 > hopt {
                        hopt = hkm1;
                        kopt = k - 1;
                    }
                }
                if k < maxk {
                    let errkp1 = ctx.err_norm(&st.dif[k + 1], y, y) * st.erconst[k + 1];
                    let hkp1 = h_allowed(absh, errkp1, k as f64 + 2.0, 1.4);
                    if hkp1 > hopt {
                        hopt = hkp1;
                        kopt = k + 1;
                    }
                }
                if hopt > absh {
                    absh = hopt;
                    if k != kopt {
                        k = kopt;
                    }
                }
            }
        }
        absh_next = abshlast;
        t = b;
    }
    Ok(t)
}
