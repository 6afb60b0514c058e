//! The Magic Formula 5.2 / PAC2002 steady-state equations (Pacejka, *Tire and Vehicle Dynamics*,
//! 2nd ed., §4.3.2, eqs. 4.E1–4.E78; MF-Tyre 5.2 equation manual), written once over [`Real`] so
//! the same lines give the forces (`f64`) and their exact partials (`Dual`).
//!
//! Inputs are the slips the formulas see: κ (longitudinal slip), α* = tan α · sgn Vcx (the
//! *tangent* of the slip angle, as MF 5.2 eq. 4.E3), γ (camber, rad), Fz (N), and vx, ω for the
//! rolling resistance ([`rolling_resistance`]). Sign convention: ISO/TYDEX W-axis, as the `.tir` coefficients
//! (`docs/tire-pac2002.md` lists every equation with its number and every choice).

use super::coefficients::{Coefficients, CombinedMethod};
use crate::dual::{Dual, Real, Split, sin_cos};

/// What the formulas are evaluated at. F_z and γ are of the coefficient type
/// ([`Split::Coef`]): the Magic Formula's coefficients (B, C, D, E, the shifts, the trail's)
/// depend on them only and are differentiated in [`crate::dual::N_COEF`] lanes, then widened
/// where they meet the slips.
#[derive(Debug, Clone, Copy)]
pub struct MfInput<T: Split> {
    /// Vertical load Fz, N (> 0).
    pub fz: T::Coef,
    /// Longitudinal slip κ, -.
    pub kappa: T,
    /// α* = tan α sgn Vcx, -.
    pub alpha: T,
    /// Camber γ, rad.
    pub gamma: T::Coef,
}

/// Fixed settings of one evaluation.
#[derive(Debug, Clone, Copy)]
pub struct MfSettings {
    /// Friction scale applied to LMUX and LMUY (road μ / reference μ × `mu_scale`).
    pub mu_factor: f64,
    /// Force selection (USE_MODE mod 10).
    pub use_mode: u32,
    /// Combined-slip method.
    pub combined: CombinedMethod,
}

/// sgn x with sgn 0 = 0 (MF sign functions).
#[inline(always)]
fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// cos(atan x) = 1/√(1 + x²) (one square root instead of two transcendental calls).
#[inline(always)]
fn cos_atan<T: Real>(x: T) -> T {
    T::cst(1.0) / (x.sq() + 1.0).sqrt()
}

/// sin(2 atan x) = 2x/(1 + x²).
#[inline(always)]
pub(crate) fn sin_2atan<T: Real>(x: T) -> T {
    x * 2.0 / (x.sq() + 1.0)
}

/// The Magic Formula sine version D sin(C atan(B x − E (B x − atan(B x)))) (eq. 4.E9).
#[inline(always)]
fn magic_sin<T: Magic>(b: T, c: f64, d: T, e: T, x: T) -> T {
    T::magic(b, c, Some(d), e, x)
}

/// The cosine version cos(C atan(B x − E (B x − atan(B x)))) (weighting functions, trail).
#[inline(always)]
fn magic_cos<T: Magic>(b: T, c: f64, e: T, x: T) -> T {
    T::magic(b, c, None, e, x)
}

/// The Magic Formula's shape y = D sin(C φ) (`d` given) or cos(C φ) (`d` None),
/// φ = atan(u), u = B x − E (B x − atan(B x)), as one operation: for `f64` the formula
/// itself; for [`Dual`] the same value operations (bit for bit the `f64` result) and the
/// derivative in closed form, ∂y = y_u (A ∂(B x) − h ∂E) (+ sin(C φ) ∂D) with
/// ∂(B x) = x ∂B + B ∂x, h = B x − atan(B x), A = 1 − E (1 − 1/(1 + (B x)²)) and
/// y_u = D C cos(C φ)/(1 + u²) (sine) or −C sin(C φ)/(1 + u²) (cosine): one pass over the
/// derivative lanes instead of one per operation (the derivatives agree with the
/// operation-by-operation chain rule up to the order of the operations).
pub trait Magic: Real {
    /// y (see the trait).
    fn magic(b: Self, c: f64, d: Option<Self>, e: Self, x: Self) -> Self;
}

impl Magic for f64 {
    #[inline(always)]
    fn magic(b: f64, c: f64, d: Option<f64>, e: f64, x: f64) -> f64 {
        let bx = b * x;
        let phi = (bx - e * (bx - bx.atan())).atan() * c;
        let (s, co) = sin_cos(phi);
        match d {
            Some(d) => d * s,
            None => co,
        }
    }
}

impl<const N: usize> Magic for Dual<N> {
    #[inline(always)]
    fn magic(b: Self, c: f64, d: Option<Self>, e: Self, x: Self) -> Self {
        let bx = b.v * x.v;
        let h = bx - bx.atan();
        let u = bx - e.v * h;
        let phi = u.atan() * c;
        let (s, co) = sin_cos(phi);
        let a = 1.0 - e.v * (1.0 - 1.0 / (1.0 + bx * bx));
        let cu = c / (1.0 + u * u);
        let mut out = [0.0; N];
        let (v, yu) = match d {
            Some(d) => (d.v * s, d.v * co * cu),
            None => (co, -s * cu),
        };
        for (k, o) in out.iter_mut().enumerate() {
            let dbx = b.d[k] * x.v + b.v * x.d[k];
            *o = yu * (a * dbx - h * e.d[k]);
        }
        if let Some(d) = d {
            for (o, dd) in out.iter_mut().zip(d.d) {
                *o += s * dd;
            }
        }
        Dual::new(v, out)
    }
}

/// Forces and moments on the wheel (Fx, Fy, Mx, 0, Mz), contact frame, about the contact point;
/// My comes from [`rolling_resistance`].
/// `inp.fz` must be positive and `set.mu_factor` positive (the caller handles lift-off).
/// Quantities of F_z and γ alone are of type `T::Coef` and widened (`w`) where they meet the
/// slips (module docs of [`crate::dual`], [`Split`]); the operations are the same as over one
/// type, so the values are too, bit for bit.
#[inline(always)]
pub fn forces<T: Split + Magic>(c: &Coefficients, set: &MfSettings, inp: &MfInput<T>) -> [T; 5] {
    let MfInput {
        fz,
        kappa,
        alpha,
        gamma,
    } = *inp;
    let w = T::widen;
    let r0 = c.unloaded_radius;
    let lmux = c.lmux * set.mu_factor;
    let lmuy = c.lmuy * set.mu_factor;
    // 4.E1, 4.E2: nominal load and normalised load change.
    let fz0p = c.fnomin * c.lfzo;
    let dfz = (fz - fz0p) / fz0p;

    // Longitudinal force, pure slip (4.E9–4.E18; PDX3 and LGAX as in PAC2002).
    let gx = gamma * c.lgax;
    let shx = (dfz * c.phx2 + c.phx1) * c.lhx;
    let kx_ = kappa + w(shx);
    let cx = c.pcx1 * c.lcx;
    let mux = (dfz * c.pdx2 + c.pdx1) * (-(gx.sq() * c.pdx3) + 1.0) * lmux;
    let dx = mux * fz;
    let ex =
        ((dfz * c.pex2 + dfz.sq() * c.pex3 + c.pex1) * (1.0 - c.pex4 * sgn(kx_.val())) * c.lex)
            .min_c(1.0);
    let kxk = fz * (dfz * c.pkx2 + c.pkx1) * (dfz * c.pkx3).exp() * c.lkx;
    let bx = kxk / (dx * cx);
    let svx = fz * (dfz * c.pvx2 + c.pvx1) * c.lvx * lmux;
    let fx0 = magic_sin(w(bx), cx, w(dx), w(ex), kx_) + w(svx);

    // Lateral force, pure slip (4.E19–4.E30, PAC2002 camber γy = γ LGAY).
    let gy = gamma * c.lgay;
    let shy = (dfz * c.phy2 + c.phy1) * c.lhy + gy * c.phy3;
    let ay = alpha + w(shy);
    let cy = c.pcy1 * c.lcy;
    let muy = (dfz * c.pdy2 + c.pdy1) * (-(gy.sq() * c.pdy3) + 1.0) * lmuy;
    let dy = muy * fz;
    let ey = ((dfz * c.pey2 + c.pey1) * (-((gy * c.pey4 + c.pey3) * sgn(ay.val())) + 1.0) * c.ley)
        .min_c(1.0);
    let kya =
        sin_2atan(fz / (c.pky2 * fz0p)) * (-(gy.abs() * c.pky3) + 1.0) * (c.pky1 * fz0p * c.lky);
    let by = kya / (dy * cy);
    let svy = fz * ((dfz * c.pvy2 + c.pvy1) * c.lvy + (dfz * c.pvy4 + c.pvy3) * gy) * lmuy;
    let fy0 = magic_sin(w(by), cy, w(dy), w(ey), ay) + w(svy);

    // Combined slip.
    let (fx, fy, svyk) = match set.combined {
        CombinedMethod::Uncombined => (fx0, fy0, T::cst(0.0)),
        CombinedMethod::Weighting => {
            // 4.E50–4.E57: Fx = Gxα Fx0.
            let shxa = c.rhx1;
            let a_s = alpha + shxa;
            let bxa = cos_atan(kappa * c.rbx2) * (c.rbx1 * c.lxal);
            let cxa = c.rcx1;
            let exa = w((dfz * c.rex2 + c.rex1).min_c(1.0));
            let gxa = magic_cos(bxa, cxa, exa, a_s) / magic_cos(bxa, cxa, exa, T::cst(shxa));
            // 4.E58–4.E67: Fy = Gyκ Fy0 + SVyκ.
            let shyk = dfz * c.rhy2 + c.rhy1;
            let k_s = kappa + w(shyk);
            let byk = cos_atan((alpha - c.rby3) * c.rby2) * (c.rby1 * c.lyka);
            let cyk = c.rcy1;
            let eyk = w((dfz * c.rey2 + c.rey1).min_c(1.0));
            let gyk = magic_cos(byk, cyk, eyk, k_s) / magic_cos(byk, cyk, eyk, w(shyk));
            // SVyκ vanishes identically when RVY5 or RVY6 is zero (the van file).
            let svyk = if c.rvy5 == 0.0 || c.rvy6 == 0.0 {
                T::cst(0.0)
            } else {
                let dvyk = w(muy * fz * (dfz * c.rvy2 + gamma * c.rvy3 + c.rvy1))
                    * cos_atan(alpha * c.rvy4);
                dvyk * ((kappa * c.rvy6).atan() * c.rvy5).sin() * c.lvyka
            };
            (gxa * fx0, gyk * fy0 + svyk, svyk)
        }
        CombinedMethod::FrictionEllipse => {
            // Friction ellipse (PAC2002 FE_METHOD, docs): with the shifted slips κc, αc and the
            // used (|F0 − Sv|) and available (|D|) friction in each direction,
            // Gx = |Dy| |κc| / √(Dy² κc² + (Fx0 − Svx)² sin² αc),
            // Gy = |Dx| |sin αc| / √(Dx² sin² αc + (Fy0 − Svy)² κc²).
            let kc = kappa + w(shx) + w(svx / kxk);
            let s = (alpha + w(shy) + w(svy / kya)).sin();
            let ux = fx0 - w(svx);
            let uy = fy0 - w(svy);
            let (kc2, s2) = (kc.sq(), s.sq());
            let denx = w(dy.sq()) * kc2 + ux.sq() * s2;
            let deny = w(dx.sq()) * s2 + uy.sq() * kc2;
            let gx_fe = if denx.val() > 0.0 {
                w(dy.abs()) * kc.abs() / denx.sqrt()
            } else {
                T::cst(1.0)
            };
            let gy_fe = if deny.val() > 0.0 {
                w(dx.abs()) * s.abs() / deny.sqrt()
            } else {
                T::cst(1.0)
            };
            (fx0 * gx_fe, fy0 * gy_fe, T::cst(0.0))
        }
    };
    let fx = if set.use_mode == 2 { T::cst(0.0) } else { fx };
    let lat_on = set.use_mode != 1;

    // Aligning moment (4.E31–4.E49 pure, 4.E71–4.E78 combined).
    let mz = if lat_on {
        let gz = gamma * c.lgaz;
        let sht = dfz * c.qhz2 + c.qhz1 + (dfz * c.qhz4 + c.qhz3) * gz;
        let at = alpha + w(sht);
        let shf = shy + svy / kya;
        let ar = alpha + w(shf);
        let bt = (dfz * c.qbz2 + dfz.sq() * c.qbz3 + c.qbz1)
            * (gz * c.qbz4 + gz.abs() * c.qbz5 + 1.0)
            * (c.lky / lmuy);
        let ct = c.qcz1;
        let dt = fz
            * (dfz * c.qdz2 + c.qdz1)
            * (gz * c.qdz3 + gz.sq() * c.qdz4 + 1.0)
            * (r0 / fz0p * c.ltr);
        let et = (w(dfz * c.qez2 + dfz.sq() * c.qez3 + c.qez1)
            * (w(gz * c.qez5 + c.qez4)
                * (w(bt) * (at * ct)).atan()
                * (2.0 / std::f64::consts::PI)
                + 1.0))
            .min_c(1.0);
        let br = by * cy * c.qbz10 + c.qbz9 * c.lky / lmuy;
        let dr =
            fz * ((dfz * c.qdz7 + c.qdz6) * c.lres + (dfz * c.qdz9 + c.qdz8) * gz) * (r0 * lmuy);
        let cos_a = cos_atan(alpha);
        // The moment arm of Fx (combined slip only).
        let s_arm =
            || (fy / fz0p * c.ssz2 + c.ssz1 + w((dfz * c.ssz4 + c.ssz3) * gz)) * (r0 * c.ls);
        // Equivalent slips: the combined forms reduce to αt, αr at κ = 0 (exactly, here).
        let (at_eq, ar_eq, s_arm) =
            if set.combined == CombinedMethod::Uncombined || kappa.val() == 0.0 {
                let s_arm = if set.combined == CombinedMethod::Uncombined {
                    T::cst(0.0)
                } else {
                    s_arm()
                };
                (at, ar, s_arm)
            } else {
                let kr = (w(kxk / kya) * kappa).sq();
                let at_eq = (at.sq() + kr).sqrt() * sgn(at.val());
                let ar_eq = (ar.sq() + kr).sqrt() * sgn(ar.val());
                (at_eq, ar_eq, s_arm())
            };
        let t = w(dt) * magic_cos(w(bt), ct, et, at_eq) * cos_a;
        let mzr = w(dr) * cos_atan(w(br) * ar_eq) * cos_a;
        -(t * (fy - svyk)) + mzr + s_arm * fx
    } else {
        T::cst(0.0)
    };
    let fy = if lat_on { fy } else { T::cst(0.0) };

    // Overturning moment (MF 5.2): Mx = R0 Fz (QSX1 LVMX − QSX2 γ + QSX3 Fy/Fz0') LMX; without
    // its coefficients exactly +0, as the sum gives it ([`overturning`]).
    let mx = if lat_on && overturning(c) {
        w(fz) * (fy / fz0p * c.qsx3 - w(gamma * c.qsx2) + c.qsx1 * c.lvmx) * (r0 * c.lmx)
    } else {
        T::cst(0.0)
    };
    [fx, fy, mx, T::cst(0.0), mz]
}

/// Whether the file has an overturning moment: QSX1 LVMX, QSX2 or QSX3 nonzero (both example
/// files have none; Mx and its partials are then exactly zero and not formed).
#[inline(always)]
pub fn overturning(c: &Coefficients) -> bool {
    c.qsx1 * c.lvmx != 0.0 || c.qsx2 != 0.0 || c.qsx3 != 0.0
}

/// Rolling-resistance moment My (MF 5.2), opposing the rolling direction, the sign smoothed as
/// tanh(2 ω R0/VXLOW) (docs, "Low speed"); zero in USE_MODE 2. Kept apart from [`forces`] so its
/// partials with respect to vx and ω do not widen the differentiation of the Magic Formula.
#[inline(always)]
pub fn rolling_resistance<T: Real>(
    c: &Coefficients,
    set: &MfSettings,
    fz: T,
    fx: T,
    vx: T,
    omega: T,
) -> T {
    if set.use_mode == 2 {
        return T::cst(0.0);
    }
    let r0 = c.unloaded_radius;
    let fz0p = c.fnomin * c.lfzo;
    let v = vx / c.longvl;
    // QSY2 Fx/Fz0' + QSY3 |v| + QSY4 v⁴ + QSY1, the terms of zero coefficient left out (they add
    // exact zeros: the same sum; the van file has QSY1 only).
    let mut sum = T::cst(0.0);
    if c.qsy2 != 0.0 {
        sum = fx / fz0p * c.qsy2;
    }
    if c.qsy3 != 0.0 {
        sum = sum + v.abs() * c.qsy3;
    }
    if c.qsy4 != 0.0 {
        sum = sum + v.sq().sq() * c.qsy4;
    }
    let mag = fz * (sum + c.qsy1) * (r0 * c.lmy);
    -(mag * (omega * (2.0 * r0 / c.vxlow)).tanh())
}
