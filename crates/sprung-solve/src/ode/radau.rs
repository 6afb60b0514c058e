//! Radau IIA of order 5 (3 stages), the high-accuracy stiff reference (Hairer & Wanner II,
//! IV.8, code RADAU5).
//!
//! * Stage equations `Z - h (A ⊗ I) F(Z) = 0` for `z_i = Y_i - y0` are solved by simplified
//!   Newton in the eigen-coordinates of `A⁻¹` (as RADAU5): with `T⁻¹A⁻¹T = Λ = diag(γ̂, B₂ₓ₂)`
//!   and `Z = (T ⊗ I) W` the Newton matrix splits into the real `n × n` matrix `γ̂/h I - J` and
//!   the real `2n × 2n` matrix `B/h ⊗ I - I ⊗ J` (the complex pair), instead of one `3n × 3n`
//!   LU. `T` is computed from the eigen-decomposition of `A⁻¹` at construction.
//! * Convergence monitoring with the contraction rate θ; the Jacobian is kept for the next step
//!   when θ ≤ 0.001 and the step size is kept when the proposed change lies in [1, 1.2], so no
//!   new LU is needed.
//! * Error estimate of RADAU5: `err = (γ₀⁻¹/h I - J)⁻¹ (f(t0, y0) + (e₁z₁ + e₂z₂ + e₃z₃)/h)`,
//!   refined once by another evaluation after a rejection or on the first step.
//! * Tolerances are transformed as in RADAU5 (`rtol' = 0.1 rtol^(2/3)`, `atol' = rtol'·atol/rtol`)
//!   so the achieved accuracy is proportional to `rtol` (document 001 eq. 14 norm otherwise);
//!   `Options::radau_tolerances = RadauTolerances::AsGiven` uses `rtol`/`atol` unchanged.
//! * Starting values and dense output come from the collocation polynomial of the last step.

use super::OdeError;
use super::core::{Accepted, Ctx, Factored, IterationMatrix, Lu, MassKind, step_factor};
use super::onestep::{Attempt, OneStep, Step};

const MAX_NEWTON: usize = 7;

pub(crate) struct Radau5 {
    n: usize,
    c: [f64; 3],
    dd: [f64; 3],
    u1: f64,
    /// Jacobian and the LU of the real block `γ̂/h I - J`.
    m: IterationMatrix,
    jac_fresh: bool,
    /// LU of the complex-pair block `B/h ⊗ I - I ⊗ J`.
    pair: Lu,
    tm: [[f64; 3]; 3],
    ti: [[f64; 3]; 3],
    lam: [[f64; 3]; 3],
    w: Vec<f64>,
    dzz: Vec<f64>,
    z: Vec<f64>,
    dz: Vec<f64>,
    f: Vec<f64>,
    ytmp: Vec<f64>,
    cont: Vec<f64>,
    f2: Vec<f64>,
    mtmp: Vec<f64>,
    zprev: Vec<f64>,
    hprev: f64,
    have_prev: bool,
    first: bool,
    theta: f64,
    faccon: f64,
    newt: usize,
}

impl Radau5 {
    pub fn new(n: usize) -> Self {
        let s6 = 6f64.sqrt();
        let a = [
            [
                (88.0 - 7.0 * s6) / 360.0,
                (296.0 - 169.0 * s6) / 1800.0,
                (-2.0 + 3.0 * s6) / 225.0,
            ],
            [
                (296.0 + 169.0 * s6) / 1800.0,
                (88.0 + 7.0 * s6) / 360.0,
                (-2.0 - 3.0 * s6) / 225.0,
            ],
            [(16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
        ];
        let c = [(4.0 - s6) / 10.0, (4.0 + s6) / 10.0, 1.0];
        let dd = [
            -(13.0 + 7.0 * s6) / 3.0,
            (-13.0 + 7.0 * s6) / 3.0,
            -1.0 / 3.0,
        ];
        let (tm, ti, lam) = eigen_transform(&a);
        let u1 = lam[0][0];
        Self {
            n,
            c,
            dd,
            u1,
            m: IterationMatrix::new(n),
            jac_fresh: false,
            pair: Lu::new(2 * n),
            tm,
            ti,
            lam,
            w: vec![0.0; 3 * n],
            dzz: vec![0.0; 3 * n],
            z: vec![0.0; 3 * n],
            dz: vec![0.0; 3 * n],
            f: vec![0.0; 3 * n],
            ytmp: vec![0.0; n],
            cont: vec![0.0; n],
            f2: vec![0.0; n],
            mtmp: vec![0.0; n],
            zprev: vec![0.0; 3 * n],
            hprev: 0.0,
            have_prev: false,
            first: true,
            theta: 1.0,
            faccon: 1.0,
            newt: 0,
        }
    }

    /// Lagrange basis of node k (1..=3) on nodes {0, c1, c2, 1}, evaluated at s.
    fn lagrange(&self, k: usize, s: f64) -> f64 {
        let x = [0.0, self.c[0], self.c[1], self.c[2]];
        let mut v = 1.0;
        for (m, xm) in x.iter().enumerate() {
            if m != k {
                v *= (s - xm) / (x[k] - xm);
            }
        }
        v
    }

    fn tolerances(ctx: &Ctx) -> (f64, f64) {
        if ctx.radau_as_given {
            return (ctx.rtol, 1.0);
        }
        let rt = 0.1 * ctx.rtol.powf(2.0 / 3.0);
        (rt, rt / ctx.rtol)
    }
}

impl OneStep for Radau5 {
    fn order(&self) -> usize {
        5
    }
    fn error_order(&self) -> Option<usize> {
        Some(3)
    }
    fn name(&self) -> &'static str {
        "radau5"
    }
    fn restart(&mut self) {
        self.m.invalidate();
        self.have_prev = false;
        self.first = true;
        self.faccon = 1.0;
    }
    fn rejected(&mut self) {
        self.first = true;
    }
    fn accepted(&mut self, _t: f64, h: f64, _y0: &[f64], _y1: &[f64]) {
        self.zprev.copy_from_slice(&self.z);
        self.hprev = h;
        self.have_prev = true;
        self.first = false;
        // keep the Jacobian when Newton converged fast (RADAU5's THET = 0.001)
        if self.theta > 1e-3 {
            self.m.invalidate();
        }
        self.jac_fresh = false;
    }
    fn step_factor(&self, err: f64, _q: usize, after_reject: bool) -> f64 {
        step_factor(
            err,
            4.0,
            self.safety(),
            0.2,
            if after_reject { 1.0 } else { 8.0 },
        )
    }
    fn safety(&self) -> f64 {
        let nit = MAX_NEWTON as f64;
        0.9_f64.min(0.9 * (2.0 * nit + 1.0) / (self.newt as f64 + 2.0 * nit))
    }
    fn hold(&self, f: f64) -> f64 {
        if (1.0..=1.2).contains(&f) { 1.0 } else { f }
    }
    fn predictive_default(&self) -> bool {
        true
    }

    fn attempt(&mut self, ctx: &mut Ctx, step: Step<'_>) -> Result<Attempt, OdeError> {
        let Step {
            t,
            h,
            y0,
            f0,
            y1,
            adaptive,
            ..
        } = step;
        let n = self.n;
        // fixed-step mode: rtol/atol set the Newton accuracy directly
        let (rt, ascale) = if adaptive {
            Self::tolerances(ctx)
        } else {
            (ctx.rtol, 1.0)
        };
        for pass in 0..2 {
            if !self.prepare(ctx, t, h, y0, f0) {
                return Ok(Attempt::Failed { factor: 0.5 });
            }
            if self.newton(ctx, t, h, y0, rt, ascale, adaptive) {
                break;
            }
            self.have_prev = false;
            if pass == 1 || self.jac_fresh {
                return Ok(Attempt::Failed { factor: 0.5 });
            }
            self.m.invalidate();
        }
        for cc in 0..n {
            y1[cc] = y0[cc] + self.z[2 * n + cc];
        }
        let mut err = 0.0;
        if adaptive {
            for cc in 0..n {
                self.mtmp[cc] = (self.dd[0] * self.z[cc]
                    + self.dd[1] * self.z[n + cc]
                    + self.dd[2] * self.z[2 * n + cc])
                    / h;
            }
            // F2 = M (Σ e_i z_i)/h (RADAU5's ESTRAD with mass matrix; M(t0, y0) if variable)
            if matches!(ctx.mass_kind(), Some(MassKind::Time | MassKind::State)) {
                ctx.mass_mul(t, y0, &self.mtmp, &mut self.f2);
            } else {
                ctx.mass_mul_last(&self.mtmp, &mut self.f2);
            }
            for cc in 0..n {
                self.cont[cc] = self.f2[cc] + f0[cc];
            }
            self.m.lu.solve(&mut self.cont, &mut ctx.stats);
            err = ctx.err_norm_scaled(&self.cont, y0, y1, rt, ascale);
            if err >= 1.0 && self.first {
                for cc in 0..n {
                    self.ytmp[cc] = y0[cc] + self.cont[cc];
                }
                ctx.f(t, &self.ytmp, &mut self.cont);
                for cc in 0..n {
                    self.cont[cc] += self.f2[cc];
                }
                self.m.lu.solve(&mut self.cont, &mut ctx.stats);
                err = ctx.err_norm_scaled(&self.cont, y0, y1, rt, ascale);
            }
        }
        Ok(Attempt::Done { err, fsal: false })
    }

    fn interpolate(&self, step: &Accepted<'_>, t: f64, out: &mut [f64]) {
        let Accepted { t0, h, y0, .. } = *step;
        let n = self.n;
        let s = (t - t0) / h;
        let l = [
            self.lagrange(1, s),
            self.lagrange(2, s),
            self.lagrange(3, s),
        ];
        for cc in 0..n {
            let mut v = y0[cc];
            for (k, lk) in l.iter().enumerate() {
                v += lk * self.zprev[k * n + cc];
            }
            out[cc] = v;
        }
    }
}

impl Radau5 {
    /// Jacobian (if stale) and LU factors for step `h`; false when singular.
    fn prepare(&mut self, ctx: &mut Ctx, t: f64, h: f64, y0: &[f64], f0: &[f64]) -> bool {
        let n = self.n;
        if self.m.refresh_jacobian(ctx, t, y0, f0) {
            self.jac_fresh = true;
        }
        if self.m.lu_stale(h) {
            // block of the complex pair: [[B00/h M - J, B01/h M], [B10/h M, B11/h M - J]]
            // (M = I without mass matrix)
            for bi in 0..2 {
                for bj in 0..2 {
                    let l = self.lam[bi + 1][bj + 1] / h;
                    for cc in 0..n {
                        for r in 0..n {
                            let mut v = if bi == bj { -self.m.jac[(r, cc)] } else { 0.0 };
                            match &self.m.mass {
                                Some(mm) => v += l * mm[(r, cc)],
                                None if r == cc => v += l,
                                None => {}
                            }
                            self.pair.a[(bi * n + r, bj * n + cc)] = v;
                        }
                    }
                }
            }
            if !self.pair.factor(&mut ctx.stats) {
                self.m.invalidate_lu();
                return false;
            }
            if self.m.factor(&mut ctx.stats, h, self.u1 / h, 1.0) == Factored::Singular {
                return false;
            }
        }
        true
    }

    /// Newton right-hand side `-(Λ/h ⊗ M) W + (T⁻¹ ⊗ I) F` into `dz` for `M` = I or constant.
    fn rhs_constant_mass(&mut self, ctx: &mut Ctx, h: f64) {
        let n = self.n;
        for k in 0..3 {
            for cc in 0..n {
                let mut v = 0.0;
                for i in 0..3 {
                    v += self.lam[k][i] / h * self.w[i * n + cc];
                }
                self.ytmp[cc] = v;
            }
            ctx.mass_mul_last(&self.ytmp, &mut self.mtmp);
            for cc in 0..n {
                let mut v = -self.mtmp[cc];
                for i in 0..3 {
                    v += self.ti[k][i] * self.f[i * n + cc];
                }
                self.dz[k * n + cc] = v;
            }
        }
    }

    /// Simplified Newton iteration for the stage increments; false on divergence.
    #[allow(clippy::too_many_arguments)]
    fn newton(
        &mut self,
        ctx: &mut Ctx,
        t: f64,
        h: f64,
        y0: &[f64],
        rt: f64,
        ascale: f64,
        adaptive: bool,
    ) -> bool {
        let n = self.n;
        // fixed-step mode: iterate to the tolerance (up to 30 iterations) while contracting
        let maxit = if adaptive { MAX_NEWTON } else { 30 };
        // starting values
        if self.have_prev {
            for i in 0..3 {
                let s = 1.0 + self.c[i] * h / self.hprev;
                let l = [
                    self.lagrange(1, s),
                    self.lagrange(2, s),
                    self.lagrange(3, s),
                ];
                for cc in 0..n {
                    let mut v = -self.zprev[2 * n + cc];
                    for (k, lk) in l.iter().enumerate() {
                        v += lk * self.zprev[k * n + cc];
                    }
                    self.z[i * n + cc] = v;
                }
            }
        } else {
            self.z.fill(0.0);
        }
        // W = (T⁻¹ ⊗ I) Z
        for k in 0..3 {
            for cc in 0..n {
                self.w[k * n + cc] = (0..3).map(|i| self.ti[k][i] * self.z[i * n + cc]).sum();
            }
        }
        // simplified Newton
        let fnewt = (10.0 * f64::EPSILON / rt).max(0.03f64.min(rt.sqrt()));
        self.faccon = self.faccon.max(f64::EPSILON).powf(0.8);
        self.theta = self.theta.abs();
        let mut dynold = 0.0;
        let mut newt = 0;
        loop {
            if newt >= maxit {
                return false;
            }
            for i in 0..3 {
                for cc in 0..n {
                    self.ytmp[cc] = y0[cc] + self.z[i * n + cc];
                }
                let (lo, hi) = (i * n, (i + 1) * n);
                ctx.f(t + self.c[i] * h, &self.ytmp, &mut self.f[lo..hi]);
            }
            // right-hand side -(Λ/h ⊗ M) W + (T⁻¹ ⊗ I) F
            if matches!(ctx.mass_kind(), Some(MassKind::Time | MassKind::State)) {
                // M(t, y) differs per stage: (T⁻¹ ⊗ I)(F_i - M(t_i, Y_i) Y'_i) with the stage
                // slopes Y' = (A⁻¹ ⊗ I) Z / h = (T Λ ⊗ I) W / h of the collocation polynomial
                for k in 0..3 {
                    for cc in 0..n {
                        self.dzz[k * n + cc] = (0..3)
                            .map(|i| self.lam[k][i] / h * self.w[i * n + cc])
                            .sum();
                    }
                }
                for i in 0..3 {
                    for cc in 0..n {
                        self.ytmp[cc] = y0[cc] + self.z[i * n + cc];
                        self.cont[cc] = (0..3).map(|k| self.tm[i][k] * self.dzz[k * n + cc]).sum();
                    }
                    ctx.mass_mul(t + self.c[i] * h, &self.ytmp, &self.cont, &mut self.mtmp);
                    for cc in 0..n {
                        self.f[i * n + cc] -= self.mtmp[cc];
                    }
                }
                for k in 0..3 {
                    for cc in 0..n {
                        self.dz[k * n + cc] =
                            (0..3).map(|i| self.ti[k][i] * self.f[i * n + cc]).sum();
                    }
                }
            } else {
                self.rhs_constant_mass(ctx, h);
            }
            self.m.lu.solve(&mut self.dz[..n], &mut ctx.stats);
            self.pair.solve(&mut self.dz[n..], &mut ctx.stats);
            // ΔZ = (T ⊗ I) ΔW
            for i in 0..3 {
                for cc in 0..n {
                    self.dzz[i * n + cc] =
                        (0..3).map(|k| self.tm[i][k] * self.dz[k * n + cc]).sum();
                }
            }
            newt += 1;
            let dyno = ctx.err_norm_scaled(&self.dzz, y0, y0, rt, ascale);
            if !dyno.is_finite() {
                return false;
            }
            if newt >= 2 {
                let theta = dyno / dynold;
                self.theta = theta;
                if theta >= 0.99 {
                    return false;
                }
                self.faccon = theta / (1.0 - theta);
                if adaptive {
                    let rest = maxit.saturating_sub(1 + newt) as i32;
                    let dyth = self.faccon * dyno * theta.powi(rest) / fnewt;
                    if dyth >= 1.0 {
                        return false;
                    }
                }
            }
            dynold = dyno.max(f64::EPSILON);
            for k in 0..3 * n {
                self.w[k] += self.dz[k];
                self.z[k] += self.dzz[k];
            }
            if self.faccon * dyno <= fnewt {
                break;
            }
        }
        self.newt = newt;
        if newt == 1 {
            self.theta = 0.0;
        }
        true
    }
}

/// 3 × 3 matrix.
type M3 = [[f64; 3]; 3];

fn inv3(m: &M3) -> M3 {
    let c =
        |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let cof = [
        [c(1, 2, 1, 2), -c(1, 2, 0, 2), c(1, 2, 0, 1)],
        [-c(0, 2, 1, 2), c(0, 2, 0, 2), -c(0, 2, 0, 1)],
        [c(0, 1, 1, 2), -c(0, 1, 0, 2), c(0, 1, 0, 1)],
    ];
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    let mut inv = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            inv[i][j] = cof[j][i] / det;
        }
    }
    inv
}

fn mul3(a: &M3, b: &M3) -> M3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

/// Eigen-transformation of `A⁻¹`: returns `(T, T⁻¹, Λ = T⁻¹A⁻¹T)` with `Λ = diag(γ̂, B)`,
/// `γ̂` the real eigenvalue and `B` the 2×2 real block of the complex pair `α ± iβ`.
fn eigen_transform(a: &M3) -> (M3, M3, M3) {
    let m = inv3(a);
    // characteristic polynomial λ³ - c2 λ² + c1 λ - c0
    let c2 = m[0][0] + m[1][1] + m[2][2];
    let c1 = m[0][0] * m[1][1] - m[0][1] * m[1][0] + m[0][0] * m[2][2] - m[0][2] * m[2][0]
        + m[1][1] * m[2][2]
        - m[1][2] * m[2][1];
    let c0 = 1.0 / {
        // det(A⁻¹) = 1/det(A)
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let mut r = 3.6;
    for _ in 0..50 {
        let p = ((r - c2) * r + c1) * r - c0;
        let dp = (3.0 * r - 2.0 * c2) * r + c1;
        r -= p / dp;
    }
    let pp = r - c2;
    let q = c0 / r;
    let alpha = -pp / 2.0;
    let beta = (q - pp * pp / 4.0).sqrt();
    // real eigenvector: cross product of two rows of (M - r I)
    let cross = |u: [f64; 3], v: [f64; 3]| {
        [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ]
    };
    let t1 = cross(
        [m[0][0] - r, m[0][1], m[0][2]],
        [m[1][0], m[1][1] - r, m[1][2]],
    );
    // complex eigenvector for α + iβ: complex cross product of two rows of (M - λI)
    type C = (f64, f64);
    let cm = |x: C, y: C| (x.0 * y.0 - x.1 * y.1, x.0 * y.1 + x.1 * y.0);
    let cs = |x: C, y: C| (x.0 - y.0, x.1 - y.1);
    let r0: [C; 3] = [(m[0][0] - alpha, -beta), (m[0][1], 0.0), (m[0][2], 0.0)];
    let r1: [C; 3] = [(m[1][0], 0.0), (m[1][1] - alpha, -beta), (m[1][2], 0.0)];
    let v = [
        cs(cm(r0[1], r1[2]), cm(r0[2], r1[1])),
        cs(cm(r0[2], r1[0]), cm(r0[0], r1[2])),
        cs(cm(r0[0], r1[1]), cm(r0[1], r1[0])),
    ];
    let mut t = [[0.0; 3]; 3];
    for i in 0..3 {
        t[i][0] = t1[i];
        t[i][1] = v[i].0;
        t[i][2] = v[i].1;
    }
    let ti = inv3(&t);
    let lam = mul3(&ti, &mul3(&m, &t));
    (t, ti, lam)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_transform_block_diagonalises_a_inverse() {
        let r = Radau5::new(1);
        let l = r.lam;
        for (i, j) in [(0, 1), (0, 2), (1, 0), (2, 0)] {
            assert!(l[i][j].abs() < 1e-12, "Λ[{i}][{j}] = {}", l[i][j]);
        }
        // RADAU5's constants: γ̂ = 30/(6 + 81^(1/3) - 9^(1/3)), α ± iβ
        let u1 = 30.0 / (6.0 + 81f64.cbrt() - 9f64.cbrt());
        assert!((l[0][0] - u1).abs() < 1e-12);
        let alpha = 0.5 * (l[1][1] + l[2][2]);
        assert!((alpha - 2.681082873627752).abs() < 1e-9, "{alpha}");
        let det = l[1][1] * l[2][2] - l[1][2] * l[2][1];
        let beta = (det - alpha * alpha).sqrt();
        assert!((beta - 3.050430199247410).abs() < 1e-9, "{beta}");
        // T T⁻¹ = I
        let p = mul3(&r.tm, &r.ti);
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((p[i][j] - e).abs() < 1e-12);
            }
        }
    }
}
