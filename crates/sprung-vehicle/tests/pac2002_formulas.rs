//! PAC2002 steady state against an independent transcription of the MF 5.2 equations (Pacejka,
//! *Tire and Vehicle Dynamics*, 2nd ed., eqs. 4.E1–4.E78, with the PAC2002 camber scalings, the
//! MF-Tyre 5.2 Mx, My, and the friction-ellipse combination stated in `docs/tire-pac2002.md`),
//! written here in plain `f64` straight from the equations, reading the coefficients from the raw
//! key-value lines of the `.tir` file with its own defaults — it shares no code with
//! `src/tire/pac2002/mf.rs` but the syntax reader.
//!
//! The law is driven through the `TireModel` interface at the stationary states with
//! kinematics (vx, vy, ω) set from κ and tan α, above VXLOW (no low-speed term). Tolerance 1e-9
//! relative to the curve's largest magnitude: both evaluate the same closed-form expressions in
//! double precision (the measured difference is ~1e-15); the slips round-trip through ω and vy
//! at a few ulps.
//!
//! No published force values exist for these two files (the MF-Tyre/Adams reference outputs are
//! not public; Chrono ships the files without reference curves), so the check is against the
//! equations only.

use std::path::PathBuf;

use sprung_test_support::workspace_root;
use sprung_vehicle::tire::pac2002::Pac2002;
use sprung_vehicle::tire::pac2002::tir::{TirFile, TirValue};
use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel};

fn tir_path(name: &str) -> PathBuf {
    workspace_root().join("models/tires").join(name)
}

const VAN: &str = "mf_185_80R14.tir";
const TRUCK: &str = "335_65R22_5_G275MSA_60psi.tir";

/// The raw coefficients: a key's number, or `default` when absent.
struct Raw(TirFile);

impl Raw {
    fn get(&self, key: &str, default: f64) -> f64 {
        self.0
            .entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| match e.value {
                TirValue::Number(x) => x,
                TirValue::Text(_) => panic!("{key} is text"),
            })
            .unwrap_or(default)
    }
    fn p(&self, key: &str) -> f64 {
        self.get(key, 0.0)
    }
    /// Scaling factors default to 1.
    fn l(&self, key: &str) -> f64 {
        self.get(key, 1.0)
    }
    fn text(&self, key: &str) -> Option<String> {
        self.0
            .entries
            .iter()
            .find(|e| e.key == key)
            .and_then(|e| match &e.value {
                TirValue::Text(t) => Some(t.to_uppercase()),
                TirValue::Number(_) => None,
            })
    }
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// MF 5.2 / PAC2002 forces (Fx, Fy, Mx, My, Mz) at Fz, κ, α* = tan α, γ, vx, ω.
fn mf52(r: &Raw, fz: f64, kappa: f64, alpha: f64, gamma: f64, vx: f64, omega: f64) -> [f64; 5] {
    let pi = std::f64::consts::PI;
    let r0 = r.p("UNLOADED_RADIUS");
    let fz0 = r.p("FNOMIN");
    // 4.E1, 4.E2
    let fz0_ = fz0 * r.l("LFZO");
    let dfz = (fz - fz0_) / fz0_;
    // Longitudinal pure slip, 4.E9–4.E18 (PAC2002: PDX3 with γx = γ LGAX).
    let gamma_x = gamma * r.l("LGAX");
    let s_hx = (r.p("PHX1") + r.p("PHX2") * dfz) * r.l("LHX");
    let kappa_x = kappa + s_hx;
    let c_x = r.p("PCX1") * r.l("LCX");
    let mu_x =
        (r.p("PDX1") + r.p("PDX2") * dfz) * (1.0 - r.p("PDX3") * gamma_x * gamma_x) * r.l("LMUX");
    let d_x = mu_x * fz;
    let e_x = ((r.p("PEX1") + r.p("PEX2") * dfz + r.p("PEX3") * dfz * dfz)
        * (1.0 - r.p("PEX4") * sign(kappa_x))
        * r.l("LEX"))
    .min(1.0);
    let k_x = fz * (r.p("PKX1") + r.p("PKX2") * dfz) * (r.p("PKX3") * dfz).exp() * r.l("LKX");
    let b_x = k_x / (c_x * d_x);
    let s_vx = fz * (r.p("PVX1") + r.p("PVX2") * dfz) * r.l("LVX") * r.l("LMUX");
    let fx0 = d_x
        * (c_x * (b_x * kappa_x - e_x * (b_x * kappa_x - (b_x * kappa_x).atan())).atan()).sin()
        + s_vx;
    // Lateral pure slip, 4.E19–4.E30 (PAC2002: γy = γ LGAY).
    let gamma_y = gamma * r.l("LGAY");
    let s_hy = (r.p("PHY1") + r.p("PHY2") * dfz) * r.l("LHY") + r.p("PHY3") * gamma_y;
    let alpha_y = alpha + s_hy;
    let c_y = r.p("PCY1") * r.l("LCY");
    let mu_y =
        (r.p("PDY1") + r.p("PDY2") * dfz) * (1.0 - r.p("PDY3") * gamma_y * gamma_y) * r.l("LMUY");
    let d_y = mu_y * fz;
    let e_y = ((r.p("PEY1") + r.p("PEY2") * dfz)
        * (1.0 - (r.p("PEY3") + r.p("PEY4") * gamma_y) * sign(alpha_y))
        * r.l("LEY"))
    .min(1.0);
    let k_y = r.p("PKY1")
        * fz0_
        * (2.0 * (fz / (r.p("PKY2") * fz0_)).atan()).sin()
        * (1.0 - r.p("PKY3") * gamma_y.abs())
        * r.l("LKY");
    let b_y = k_y / (c_y * d_y);
    let s_vy = fz
        * ((r.p("PVY1") + r.p("PVY2") * dfz) * r.l("LVY")
            + (r.p("PVY3") + r.p("PVY4") * dfz) * gamma_y)
        * r.l("LMUY");
    let fy0 = d_y
        * (c_y * (b_y * alpha_y - e_y * (b_y * alpha_y - (b_y * alpha_y).atan())).atan()).sin()
        + s_vy;

    // Combined slip: FE_METHOD = 'YES' or no combined coefficients → friction ellipse.
    let fe = match r.text("FE_METHOD").as_deref() {
        Some("YES") => true,
        Some("NO") => false,
        _ => {
            (r.p("RBX1") == 0.0 && r.p("RCX1") == 0.0) || (r.p("RBY1") == 0.0 && r.p("RCY1") == 0.0)
        }
    };
    let (fx, fy, s_vyk) = if fe {
        let kc = kappa + s_hx + s_vx / k_x;
        let ac = alpha + s_hy + s_vy / k_y;
        let sa = ac.sin();
        let gx_den = (d_y * kc).powi(2) + ((fx0 - s_vx) * sa).powi(2);
        let gy_den = (d_x * sa).powi(2) + ((fy0 - s_vy) * kc).powi(2);
        let gx = if gx_den > 0.0 {
            d_y.abs() * kc.abs() / gx_den.sqrt()
        } else {
            1.0
        };
        let gy = if gy_den > 0.0 {
            d_x.abs() * sa.abs() / gy_den.sqrt()
        } else {
            1.0
        };
        (gx * fx0, gy * fy0, 0.0)
    } else {
        // 4.E50–4.E57
        let s_hxa = r.p("RHX1");
        let alpha_s = alpha + s_hxa;
        let b_xa = r.p("RBX1") * (r.p("RBX2") * kappa).atan().cos() * r.l("LXAL");
        let c_xa = r.p("RCX1");
        let e_xa = (r.p("REX1") + r.p("REX2") * dfz).min(1.0);
        let g = |x: f64| (c_xa * (b_xa * x - e_xa * (b_xa * x - (b_xa * x).atan())).atan()).cos();
        let g_xa = g(alpha_s) / g(s_hxa);
        // 4.E58–4.E67
        let s_hyk = r.p("RHY1") + r.p("RHY2") * dfz;
        let kappa_s = kappa + s_hyk;
        let b_yk = r.p("RBY1") * (r.p("RBY2") * (alpha - r.p("RBY3"))).atan().cos() * r.l("LYKA");
        let c_yk = r.p("RCY1");
        let e_yk = (r.p("REY1") + r.p("REY2") * dfz).min(1.0);
        let h = |x: f64| (c_yk * (b_yk * x - e_yk * (b_yk * x - (b_yk * x).atan())).atan()).cos();
        let g_yk = h(kappa_s) / h(s_hyk);
        let d_vyk = mu_y
            * fz
            * (r.p("RVY1") + r.p("RVY2") * dfz + r.p("RVY3") * gamma)
            * (r.p("RVY4") * alpha).atan().cos();
        let s_vyk = d_vyk * (r.p("RVY5") * (r.p("RVY6") * kappa).atan()).sin() * r.l("LVYKA");
        (g_xa * fx0, g_yk * fy0 + s_vyk, s_vyk)
    };

    // Aligning moment, 4.E31–4.E49 and 4.E71–4.E78.
    let gamma_z = gamma * r.l("LGAZ");
    let s_ht = r.p("QHZ1") + r.p("QHZ2") * dfz + (r.p("QHZ3") + r.p("QHZ4") * dfz) * gamma_z;
    let alpha_t = alpha + s_ht;
    let s_hf = s_hy + s_vy / k_y;
    let alpha_r = alpha + s_hf;
    let b_t = (r.p("QBZ1") + r.p("QBZ2") * dfz + r.p("QBZ3") * dfz * dfz)
        * (1.0 + r.p("QBZ4") * gamma_z + r.p("QBZ5") * gamma_z.abs())
        * r.l("LKY")
        / r.l("LMUY");
    let c_t = r.p("QCZ1");
    let d_t = fz
        * (r.p("QDZ1") + r.p("QDZ2") * dfz)
        * (1.0 + r.p("QDZ3") * gamma_z + r.p("QDZ4") * gamma_z * gamma_z)
        * (r0 / fz0_)
        * r.l("LTR");
    let e_t = ((r.p("QEZ1") + r.p("QEZ2") * dfz + r.p("QEZ3") * dfz * dfz)
        * (1.0
            + (r.p("QEZ4") + r.p("QEZ5") * gamma_z) * (2.0 / pi) * (b_t * c_t * alpha_t).atan()))
    .min(1.0);
    let b_r = r.p("QBZ9") * r.l("LKY") / r.l("LMUY") + r.p("QBZ10") * b_y * c_y;
    let d_r = fz
        * ((r.p("QDZ6") + r.p("QDZ7") * dfz) * r.l("LRES")
            + (r.p("QDZ8") + r.p("QDZ9") * dfz) * gamma_z)
        * r0
        * r.l("LMUY");
    let cos_alpha = 1.0 / (1.0 + alpha * alpha).sqrt();
    let kk = (k_x / k_y * kappa).powi(2);
    let alpha_t_eq = (alpha_t * alpha_t + kk).sqrt() * sign(alpha_t);
    let alpha_r_eq = (alpha_r * alpha_r + kk).sqrt() * sign(alpha_r);
    let t = d_t
        * (c_t * (b_t * alpha_t_eq - e_t * (b_t * alpha_t_eq - (b_t * alpha_t_eq).atan())).atan())
            .cos()
        * cos_alpha;
    let m_zr = d_r * (b_r * alpha_r_eq).atan().cos() * cos_alpha;
    let s = (r.p("SSZ1") + r.p("SSZ2") * fy / fz0_ + (r.p("SSZ3") + r.p("SSZ4") * dfz) * gamma_z)
        * r0
        * r.l("LS");
    let mz = -t * (fy - s_vyk) + m_zr + s * fx;
    // MF 5.2 overturning and rolling-resistance moments; My opposes the rolling direction, its
    // sign smoothed as tanh(2 ω R0 / VXLOW) (the stated low-speed choice).
    let mx = r0
        * fz
        * (r.p("QSX1") * r.l("LVMX") - r.p("QSX2") * gamma + r.p("QSX3") * fy / fz0_)
        * r.l("LMX");
    let v0 = r.get("LONGVL", 16.7);
    let my = -r0
        * fz
        * (r.p("QSY1")
            + r.p("QSY2") * fx / fz0_
            + r.p("QSY3") * (vx / v0).abs()
            + r.p("QSY4") * (vx / v0).powi(4))
        * r.l("LMY")
        * (2.0 * omega * r0 / r.get("VXLOW", 1.0)).tanh();
    [fx, fy, mx, my, mz]
}

/// The law's steady state through the interface at κ, tan α, γ, Fz (vx = 20 m/s).
fn law_at(law: &Pac2002, fz: f64, kappa: f64, tan_alpha: f64, gamma: f64) -> [f64; 5] {
    let vx = 20.0;
    let re = law.effective_radius(fz, 0.0);
    let k = SlipKinematics {
        fz,
        rho: 0.0,
        vx,
        vy: tan_alpha * vx,
        omega: vx * (1.0 + kappa) / re,
        gamma,
        psi_dot: 0.0,
        mu_road: 1.0,
    };
    let mut f = TireForces::default();
    law.steady_state(&k, &mut f);
    f.as_array()
}

/// Largest difference over a curve relative to the curve's largest magnitude, per output.
fn curve_error(a: &[[f64; 5]], b: &[[f64; 5]]) -> [f64; 5] {
    std::array::from_fn(|j| {
        let scale = b.iter().fold(0.0f64, |m, x| m.max(x[j].abs()));
        let diff = a
            .iter()
            .zip(b)
            .fold(0.0f64, |m, (x, y)| m.max((x[j] - y[j]).abs()));
        if scale == 0.0 { diff } else { diff / scale }
    })
}

/// A sweep parameter s ∈ [−1, 1] → (κ, tan α).
type SlipPath = fn(f64) -> (f64, f64);

fn check_file(name: &str) -> f64 {
    let path = tir_path(name);
    let raw = Raw(TirFile::read(&path).unwrap());
    let law = Pac2002::from_file(&path).unwrap();
    let fz0 = raw.p("FNOMIN");
    let mut worst = 0.0f64;
    let sweep: Vec<f64> = (0..=60).map(|i| -1.0 + i as f64 / 30.0).collect();
    for &load in &[0.4, 1.0, 1.6] {
        let fz = load * fz0;
        for &gamma in &[0.0, 0.04, -0.08] {
            // Pure longitudinal slip, pure lateral slip (tan α ∈ [−0.5, 0.5]), then combined.
            let cases: [(&str, SlipPath); 3] = [
                ("kappa", |s| (s, 0.0)),
                ("alpha", |s| (0.0, 0.5 * s)),
                ("combined", |s| (0.3 * s, 0.15)),
            ];
            for (what, slip) in cases.iter() {
                let mut a = Vec::new();
                let mut b = Vec::new();
                for &s in &sweep {
                    let (kappa, alpha) = slip(s);
                    a.push(law_at(&law, fz, kappa, alpha, gamma));
                    let omega = 20.0 * (1.0 + kappa) / law.effective_radius(fz, 0.0);
                    b.push(mf52(&raw, fz, kappa, alpha, gamma, 20.0, omega));
                }
                let e = curve_error(&a, &b);
                for (j, ej) in e.iter().enumerate() {
                    assert!(
                        *ej < 1e-9,
                        "{name}: {what} sweep at Fz = {fz}, γ = {gamma}: output {j} differs by {ej:e}"
                    );
                    worst = worst.max(*ej);
                }
            }
        }
    }
    worst
}

#[test]
fn van_matches_independent_mf52() {
    let worst = check_file(VAN);
    eprintln!("van: largest relative difference {worst:e}");
}

#[test]
fn truck_matches_independent_mf52() {
    let worst = check_file(TRUCK);
    eprintln!("truck: largest relative difference {worst:e}");
}

/// The truck's combined-slip coefficients are zero and it asks for the friction ellipse; the van
/// file has the weighting functions.
#[test]
fn combined_method_follows_the_file() {
    use sprung_vehicle::tire::pac2002::coefficients::CombinedMethod;
    let van = Pac2002::from_file(&tir_path(VAN)).unwrap();
    let truck = Pac2002::from_file(&tir_path(TRUCK)).unwrap();
    assert_eq!(van.combined_method(), CombinedMethod::Weighting);
    assert_eq!(truck.combined_method(), CombinedMethod::FrictionEllipse);
    // The truck file repeats [DEFLECTION_LOAD_CURVE]: the first (21 points) is used, noted.
    assert!(
        truck
            .file()
            .tir
            .notes
            .iter()
            .any(|n| n.contains("DEFLECTION_LOAD_CURVE"))
    );
    assert_eq!(truck.file().deflection_curve.as_ref().unwrap().0.len(), 21);
}

/// Combined slip stays inside the pure-slip envelopes: |Fx(κ, α)| ≤ max over κ of |Fx0| and
/// |Fy(κ, α)| ≤ max over α of |Fy0| (at the same load and camber), on a grid of both files.
/// The bound is the pure-slip peak (plus round-off, 1e-12); the measured largest ratio is 1,
/// reached on the pure-slip lines of the grid.
#[test]
fn combined_slip_within_pure_slip_envelopes() {
    for name in [VAN, TRUCK] {
        let law = Pac2002::from_file(&tir_path(name)).unwrap();
        let fz0 = law.coefficients().fnomin;
        let mut worst = 0.0f64;
        for &load in &[0.5, 1.0, 1.5] {
            let fz = load * fz0;
            let grid: Vec<f64> = (0..=40).map(|i| -1.0 + i as f64 / 20.0).collect();
            let fx_peak = grid
                .iter()
                .map(|&k| law_at(&law, fz, k, 0.0, 0.0)[0].abs())
                .fold(0.0, f64::max);
            let fy_peak = grid
                .iter()
                .map(|&a| law_at(&law, fz, 0.0, 0.6 * a, 0.0)[1].abs())
                .fold(0.0, f64::max);
            for &k in &grid {
                for &a in &grid {
                    let f = law_at(&law, fz, k, 0.6 * a, 0.0);
                    worst = worst.max(f[0].abs() / fx_peak).max(f[1].abs() / fy_peak);
                    assert!(
                        f[0].abs() <= (1.0 + 1e-12) * fx_peak,
                        "{name}: Fx({k}, {a}) = {} > {fx_peak}",
                        f[0]
                    );
                    assert!(
                        f[1].abs() <= (1.0 + 1e-12) * fy_peak,
                        "{name}: Fy({k}, {a}) = {} > {fy_peak}",
                        f[1]
                    );
                }
            }
        }
        eprintln!("{name}: largest combined / pure peak {worst}");
    }
}
