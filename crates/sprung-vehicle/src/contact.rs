//! Wheel–road contact: from a wheel marker and a road to the contact frame, deflection and
//! contact-frame kinematics of [`crate::tire::SlipKinematics`] (issue 13, item 1), the vertical
//! force, and the analytic partials of all of them with respect to the marker's motion.
//!
//! Source: TMeasy steps 1, 2 and 10 of `../shared/data/vehicle-reference.md` (Rill's disc
//! contact as Chrono implements it); `docs/roads-and-contact.md` has the derivation.
//!
//! The **wheel marker** sits at the wheel centre c; its **y axis is the spin axis** a (ISO wheel
//! frame: y to the left of a wheel rolling along its x axis, so ω > 0 about +y rolls forward).
//! With the road's height h, gradient and normal n queried at the centre's (x, y):
//!
//! * contact frame: e_x = (a × n)/|a × n| (forward in the road plane), e_y = n × e_x, e_z = n;
//! * camber γ = atan2(a·n, |a × n|) (positive: the wheel top leans to +e_y), for the usual
//!   cambers (|tan γ| ≤ 1/16, 3.6°) as the series of atan(a·n/|a × n|) ([`camber`]);
//! * distance of the centre from the road's tangent plane d = (c_z − h)/√(1 + |∇h|²);
//! * the wheel-plane direction towards the road −e_u, e_u = e_x × a (n projected into the wheel
//!   plane, normalised); the contact point P = c − r_s e_u lies on the tangent plane for the
//!   loaded radius r_s = d / cos γ;
//! * deflection normal to the road ρ = (R₀ − r_s) cos γ = R₀ cos γ − d (the penetration of the
//!   undeformed disc into the plane);
//! * vx = v_c·e_x (wheel centre), vy = (v_c + ω_w × (P − c))·e_y (contact point of the wheel),
//!   spin rate Ω = ω_w·a (the road does not move), ψ̇ = ω_w·n (Rill's ω_n: the wheel's angular
//!   velocity about the road normal, which includes the camber part Ω sin γ of the spin);
//! * vertical force F_z = F(ρ) + k_b max(0, ρ − (R₀ − R_b)) + d_z ρ̇ with ρ̇ = −v_c·n (TMeasy
//!   step 2, R_b = rim radius + 0.01 m); no tension: F_z = 0 and all tire forces zero when ρ ≤ 0
//!   or the sum would pull.
//!
//! The tire law's wrench (in the contact frame, about P) acts on the wheel at its centre as the
//! global force F = f_x e_x + f_y e_y + F_z n and torque T = m_x e_x + m_y e_y + m_z n +
//! (P − c) × F.
//!
//! **Partials** with respect to the marker's perturbations (δp, δφ, δv, δω; the relative marker
//! form of `sprung_mbs::element_law`) are 3 × 12 / 1 × 12 blocks built by the chain rule: the
//! road normal through the Hessian of h, the spin axis as δa = δφ × a, and every derived
//! direction through the derivative of its normalisation. They are exact for the contact as
//! defined (checked against central differences in the element tests). μ is piecewise constant
//! and has no partials. They are formed in 3 × 3 blocks over δp and δφ: the road normal moves
//! with δp only and the spin axis with δφ only, and where the road's Hessian is zero (a plane,
//! the flat parts of obstacles) the δp blocks reduce to ∂d/∂δp = n.

use nalgebra::{Matrix3, RowVector3, SMatrix, Vector3};

use crate::road::Road;
use crate::tire::{SlipKinematics, VerticalLaw, VerticalStiffness, kin};
use sprung_mbs::element_law::MarkerState;

/// Partials of a vector with respect to the marker's position and rotation (δp, δφ).
pub type G3 = SMatrix<f64, 3, 6>;
/// Partials of a scalar with respect to the marker's position and rotation (δp, δφ).
pub type G1 = SMatrix<f64, 1, 6>;

/// Distance added to the rim radius below which the bottoming stiffness acts, m (TMeasy step 2).
pub const RIM_CLEARANCE: f64 = 0.01;

/// The contact of one wheel with the road at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Whether the tire carries load (ρ > 0 and the vertical force is positive).
    pub in_contact: bool,
    /// Contact-frame kinematics for the tire law (F_z = 0, ρ = 0 when not in contact).
    pub kin: SlipKinematics,
    /// Contact frame: columns e_x, e_y, n (global).
    pub frame: Matrix3<f64>,
    /// Contact point P, m (global).
    pub point: Vector3<f64>,
    /// e_u = e_x × a: the direction from P to the centre in the wheel plane.
    pub up: Vector3<f64>,
    /// Loaded radius r_s = |P − c|, m.
    pub loaded_radius: f64,
    /// Geometric deflection ρ (negative when lifted off), m.
    pub deflection: f64,
    /// Deflection rate ρ̇ = −v_c·n used by the damping, m/s.
    pub deflection_rate: f64,
}

/// The partials of a [`Contact`] with respect to the marker perturbations. The directions and
/// radii depend on the marker's position and rotation only, so their blocks have the 6 position
/// columns (δp, δφ); the kinematic inputs have all 12 (δp, δφ, δv, δω).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPartials {
    /// ∂(kinematic inputs, in the order of [`kin`])/∂(δp, δφ, δv, δω).
    pub kin: SMatrix<f64, 7, 12>,
    /// ∂e_x/∂(δp, δφ).
    pub e_x: G3,
    /// ∂e_y/∂(δp, δφ).
    pub e_y: G3,
    /// ∂n/∂(δp, δφ).
    pub n: G3,
    /// ∂e_u/∂(δp, δφ).
    pub up: G3,
    /// ∂r_s/∂(δp, δφ).
    pub loaded_radius: G1,
    /// Whether the road's Hessian is zero at the wheel (a plane, the flat parts of obstacles):
    /// then the directions do not move with δp (their δp blocks are zero), ∂r_s/∂δp = n/cos γ,
    /// and of the kinematic inputs only F_z, ρ and v_y move with δp.
    pub flat: bool,
}

/// Vertical force of the law at deflection ρ and rate ρ̇ before the no-tension rule:
/// (F, ∂F/∂ρ, ∂F/∂ρ̇).
#[inline]
pub fn vertical_force(law: &VerticalLaw, rho: f64, rho_dot: f64) -> (f64, f64, f64) {
    let (mut f, mut df) = match &law.stiffness {
        VerticalStiffness::Linear { k } => (k * rho, *k),
        VerticalStiffness::Quadratic { d1, d2 } => (d1 * rho + d2 * rho * rho, d1 + 2.0 * d2 * rho),
        VerticalStiffness::Table { rho: r, force } => table_force(r, force, rho),
    };
    let bottoming = law.unloaded_radius - (law.rim_radius + RIM_CLEARANCE);
    if rho > bottoming {
        f += law.bottoming_stiffness * (rho - bottoming);
        df += law.bottoming_stiffness;
    }
    (f + law.damping * rho_dot, df, law.damping)
}

/// Piecewise-linear force table (extrapolated with the last segment's slope): (F, dF/dρ).
fn table_force(r: &[f64], force: &[f64], rho: f64) -> (f64, f64) {
    let n = r.len();
    if n < 2 {
        return (0.0, 0.0);
    }
    let i = r.partition_point(|x| *x <= rho).clamp(1, n - 1) - 1;
    let slope = (force[i + 1] - force[i]) / (r[i + 1] - r[i]);
    (force[i] + slope * (rho - r[i]), slope)
}

/// Camber γ = atan2(sin γ, cos γ) for cos γ > 0 (`inv_cg` = 1/cos γ): for |t| ≤ 1/16
/// (|γ| ≤ 3.6°, the cambers of road vehicles) with t = sin γ · (1/cos γ) as the Taylor series of
/// atan t = t − t³/3 + t⁵/5 − … to the t¹³ term (the first term left out, t¹⁵/15, is below 2⁻⁶⁰ |t|; the sum rounds to within
/// about one unit in the last place of the C library's `atan2`), else by `atan2`. A ratio, seven
/// multiply-adds and a comparison instead of the library call (≈ 115 instructions; ≈ 1.2 k per
/// step of the 12-tire truck).
#[inline(always)]
pub fn camber(sg: f64, cg: f64, inv_cg: f64) -> f64 {
    let t = sg * inv_cg;
    if t.abs() <= 0.0625 {
        let z = t * t;
        let p = -1.0 / 3.0
            + z * (1.0 / 5.0
                + z * (-1.0 / 7.0 + z * (1.0 / 9.0 + z * (-1.0 / 11.0 + z * (1.0 / 13.0)))));
        t + t * z * p
    } else {
        sg.atan2(cg)
    }
}

fn skew(v: &Vector3<f64>) -> Matrix3<f64> {
    v.cross_matrix()
}

/// Evaluates the contact of the wheel `m` (marker at the centre, y = spin axis) with `road`
/// under the vertical law `law`; with `partials`, also their derivatives. `partials` must
/// arrive zeroed ([`ContactPartials::default`]): the entries that are zero by structure (the
/// normal over δφ, the velocity columns' other rows, …) are not written. Does not allocate.
/// Inlined into its callers (the tire element's AVX copy compiles it for AVX).
#[inline(always)]
pub fn contact(
    road: &Road,
    law: &VerticalLaw,
    m: &MarkerState,
    partials: Option<&mut ContactPartials>,
) -> Contact {
    let c = m.x;
    let a: Vector3<f64> = m.rot.column(1).into_owned();
    let v = m.v;
    let w_w = m.w;
    let s = road.surface(c.x, c.y);
    let [hx, hy] = s.gradient;
    // One reciprocal each of |N| = l and of cos γ = |a × n|, multiplied where the formulas
    // divide (two divisions instead of nine; within an ulp of the quotients). A level road
    // (zero gradient) has l = 1 exactly: no square root and division at the head of the
    // chain of long-latency operations that the contact is.
    let (l, inv_l) = if hx == 0.0 && hy == 0.0 {
        (1.0, 1.0)
    } else {
        let l = (1.0 + hx * hx + hy * hy).sqrt();
        (l, 1.0 / l)
    };
    let n = Vector3::new(-hx * inv_l, -hy * inv_l, inv_l);
    let d = (c.z - s.height) * inv_l;
    let w = a.cross(&n);
    let cg = w.norm().max(1e-12);
    let inv_cg = 1.0 / cg;
    let e_x = w * inv_cg;
    let e_y = n.cross(&e_x);
    let sg = a.dot(&n);
    let gamma = camber(sg, cg, inv_cg);
    let r0 = law.unloaded_radius;
    let rho = r0 * cg - d;
    let r_s = d * inv_cg;
    let e_u = e_x.cross(&a);
    let point = c - r_s * e_u;
    let b = e_u.cross(&e_y);
    let vx = v.dot(&e_x);
    let vy = v.dot(&e_y) - r_s * w_w.dot(&b);
    let omega = w_w.dot(&a);
    let psi_dot = w_w.dot(&n);
    let rho_dot = -v.dot(&n);
    let (f_total, df_drho, df_drhodot) = vertical_force(law, rho, rho_dot);
    let in_contact = rho > 0.0 && f_total > 0.0;
    let kin = SlipKinematics {
        fz: if in_contact { f_total } else { 0.0 },
        rho: if in_contact { rho } else { 0.0 },
        vx,
        vy,
        omega,
        gamma,
        psi_dot,
        mu_road: s.mu,
    };
    let frame = Matrix3::from_columns(&[e_x, e_y, n]);
    if let Some(p) = partials {
        // Directions over (δp, δφ) only (the velocities do not move them), by column: the
        // road normal moves with δp only, the spin axis with δφ only, so half of the products
        // vanish structurally. Each column is written straight into the blocks.
        // δφ = e_k: δa = e_k × a, δn = 0; w = a × n: δw = δa × n; e_x = w/|w|:
        // δe_x = (δw − e_x (e_x·δw))/|w|; e_y = n × e_x; e_u = e_x × a; b = e_u × e_y;
        // cos γ = |w|: δ cos γ = e_x·δw; sin γ = a·n: δ sin γ = n·δa.
        let ww = w_w.dot(&b);
        // F_z and ρ move only while the tire carries load.
        let (dfz_drho, dfz_drhodot, drho_on) = if in_contact {
            (df_drho, df_drhodot, true)
        } else {
            (0.0, 0.0, false)
        };
        // With a = cos γ e_y + sin γ n (a ⊥ e_x): b = e_u × e_y = −(a·e_y) e_x = −w
        // identically, so δb = −δw; for δφ = e_k (δa = e_k × a, δn = 0):
        // δw = δa × n = a n_k − sin γ e_k, δ cos γ = e_x·δw = −sin γ e_x,k, and
        // e_x × δa = −e_x,k a in δe_u = δe_x × a + e_x × δa.
        for k in 0..3 {
            let c = 3 + k;
            let ek = Vector3::ith(k, 1.0);
            let da = ek.cross(&a);
            let dw = a * n[k] - ek * sg;
            let dcg = -sg * e_x[k];
            let dex = (dw - e_x * dcg) * inv_cg;
            let dey = n.cross(&dex);
            let deu = dex.cross(&a) - a * e_x[k];
            let drs = dcg * (-r_s * inv_cg);
            p.e_x.set_column(c, &dex);
            p.e_y.set_column(c, &dey);
            p.up.set_column(c, &deu);
            p.loaded_radius[c] = drs;
            p.kin[(kin::VX, c)] = v.dot(&dex);
            p.kin[(kin::VY, c)] = v.dot(&dey) - drs * ww + w_w.dot(&dw) * r_s;
            p.kin[(kin::OMEGA, c)] = w_w.dot(&da);
            p.kin[(kin::GAMMA, c)] = n.dot(&da) * cg - dcg * sg;
            if drho_on {
                let drho = dcg * r0;
                p.kin[(kin::FZ, c)] = drho * dfz_drho;
                p.kin[(kin::RHO, c)] = drho;
            }
        }
        p.flat = s.hessian == [0.0; 3];
        if p.flat {
            // A plane (zero Hessian): the normal does not turn as the wheel moves, so the
            // directions' δp blocks are zero and ∇d = n: ∂ρ = −n, ∂r_s = n/cos γ, and v_y moves
            // through r_s only.
            for k in 0..3 {
                let drs = n[k] * inv_cg;
                p.loaded_radius[k] = drs;
                p.kin[(kin::VY, k)] = -drs * ww;
                if drho_on {
                    p.kin[(kin::FZ, k)] = -n[k] * dfz_drho;
                    p.kin[(kin::RHO, k)] = -n[k];
                }
            }
        } else {
            // Road normal: ∂N/∂(c_x, c_y) = (−h_xx, −h_xy, 0), (−h_xy, −h_yy, 0); n = N/|N|.
            let ax = skew(&a);
            let proj = (Matrix3::identity() - e_x * e_x.transpose()) / cg;
            let (sn, sx, sy, su) = (skew(&n), skew(&e_x), skew(&e_y), skew(&e_u));
            let [hxx, hxy, hyy] = s.hessian;
            let dn_big = Matrix3::new(-hxx, -hxy, 0.0, -hxy, -hyy, 0.0, 0.0, 0.0, 0.0);
            let dn_p = (Matrix3::identity() - n * n.transpose()) / l * dn_big;
            // d = (c_z − h)/|N|: ∇d = n + (c_z − h) ∇n_z.
            let mut dd_p = RowVector3::zeros();
            for k in 0..3 {
                dd_p[k] = n[k] + (c.z - s.height) * dn_p[(2, k)];
            }
            let dw_p = ax * dn_p;
            let de_x_p = proj * dw_p;
            let de_y_p = -sx * dn_p + sn * de_x_p;
            let de_u_p = -ax * de_x_p;
            let db_p = -sy * de_u_p + su * de_y_p;
            let dcg_p = e_x.transpose() * dw_p;
            let dsg_p = a.transpose() * dn_p;
            let dgamma_p = dsg_p * cg - dcg_p * sg;
            let drho_p = dcg_p * r0 - dd_p;
            let drs_p = (dd_p - dcg_p * r_s) / cg;
            // ρ̇ = −v·n: ∂ρ̇ = −vᵀ ∂n − nᵀ δv.
            let drho_dot_p = -(v.transpose() * dn_p);
            let vx_p = v.transpose() * de_x_p;
            let vy_p = v.transpose() * de_y_p - drs_p * ww - (w_w.transpose() * db_p) * r_s;
            let psi_p = w_w.transpose() * dn_p;
            for k in 0..3 {
                p.e_x.set_column(k, &de_x_p.column(k));
                p.e_y.set_column(k, &de_y_p.column(k));
                p.n.set_column(k, &dn_p.column(k));
                p.up.set_column(k, &de_u_p.column(k));
                p.loaded_radius[k] = drs_p[k];
                p.kin[(kin::VX, k)] = vx_p[k];
                p.kin[(kin::VY, k)] = vy_p[k];
                p.kin[(kin::GAMMA, k)] = dgamma_p[k];
                p.kin[(kin::PSI_DOT, k)] = psi_p[k];
                if drho_on {
                    p.kin[(kin::FZ, k)] = drho_p[k] * dfz_drho + drho_dot_p[k] * dfz_drhodot;
                    p.kin[(kin::RHO, k)] = drho_p[k];
                }
            }
        }
        // Velocity columns 6..9 and angular-velocity columns 9..12.
        for k in 0..3 {
            p.kin[(kin::VX, 6 + k)] = e_x[k];
            p.kin[(kin::VY, 6 + k)] = e_y[k];
            p.kin[(kin::FZ, 6 + k)] = -dfz_drhodot * n[k];
            p.kin[(kin::VY, 9 + k)] = -r_s * b[k];
            p.kin[(kin::OMEGA, 9 + k)] = a[k];
            p.kin[(kin::PSI_DOT, 9 + k)] = n[k];
        }
    }
    Contact {
        in_contact,
        kin,
        frame,
        point,
        up: e_u,
        loaded_radius: r_s,
        deflection: rho,
        deflection_rate: rho_dot,
    }
}

impl Default for ContactPartials {
    fn default() -> Self {
        Self {
            kin: SMatrix::zeros(),
            e_x: SMatrix::zeros(),
            e_y: SMatrix::zeros(),
            n: SMatrix::zeros(),
            up: SMatrix::zeros(),
            loaded_radius: SMatrix::zeros(),
            flat: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Rotation3;

    fn law() -> VerticalLaw {
        VerticalLaw {
            unloaded_radius: 0.3,
            width: 0.2,
            stiffness: VerticalStiffness::Quadratic { d1: 2e5, d2: 1e6 },
            damping: 500.0,
            rim_radius: 0.2,
            bottoming_stiffness: 1e6,
        }
    }

    #[test]
    fn upright_wheel_on_a_flat_road() {
        let road = Road::flat(0.8);
        let m = MarkerState {
            x: Vector3::new(1.0, 2.0, 0.29),
            rot: Matrix3::identity(),
            v: Vector3::new(10.0, 0.5, -0.1),
            w: Vector3::new(0.0, 30.0, 0.2),
        };
        let c = contact(&road, &law(), &m, None);
        assert!(c.in_contact);
        assert!((c.kin.rho - 0.01).abs() < 1e-15);
        assert!((c.kin.fz - (2e5 * 0.01 + 1e6 * 1e-4 + 500.0 * 0.1)).abs() < 1e-9);
        assert_eq!(c.frame, Matrix3::identity());
        assert!((c.point - Vector3::new(1.0, 2.0, 0.0)).norm() < 1e-15);
        assert_eq!((c.kin.vx, c.kin.omega, c.kin.gamma), (10.0, 30.0, 0.0));
        // The contact point's lateral velocity: v_y + (ω × (P − c))_y = 0.5 + 0 (ω_z · 0).
        assert!((c.kin.vy - 0.5).abs() < 1e-15);
        assert_eq!(c.kin.mu_road, 0.8);
    }

    /// The series of [`camber`] agrees with `atan2` to about an ulp where it is used, and the
    /// library takes over beyond.
    #[test]
    fn camber_matches_atan2() {
        let mut worst: f64 = 0.0;
        for i in -2000..=2000 {
            let g = f64::from(i) * 1e-4 + 1e-9;
            let (sg, cg) = g.sin_cos();
            let (a, b) = (camber(sg, cg, 1.0 / cg), sg.atan2(cg));
            worst = worst.max((a - b).abs() / b.abs());
        }
        assert!(worst <= 2.5 * f64::EPSILON, "relative difference {worst:e}");
    }

    #[test]
    fn cambered_wheel_geometry() {
        // Wheel cambered by γ about x: the disc's lowest point penetrates R0 cos γ − d.
        let road = Road::flat(1.0);
        let g: f64 = 0.1;
        let m = MarkerState {
            x: Vector3::new(0.0, 0.0, 0.29),
            rot: Rotation3::from_axis_angle(&Vector3::x_axis(), g).into_inner(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        };
        let c = contact(&road, &law(), &m, None);
        assert!((c.kin.gamma - g).abs() < 1e-15);
        assert!((c.kin.rho - (0.3 * g.cos() - 0.29)).abs() < 1e-15);
        assert!((c.loaded_radius - 0.29 / g.cos()).abs() < 1e-15);
        assert!(c.point.z.abs() < 1e-15, "contact point on the road");
        // The lowest disc point of the undeformed wheel lies at centre − R0 e_u.
        let lowest = m.x - 0.3 * c.up;
        assert!((-lowest.z - c.kin.rho).abs() < 1e-15);
    }

    #[test]
    fn lifted_off_and_pulling_give_no_force() {
        let road = Road::flat(1.0);
        let mut m = MarkerState {
            x: Vector3::new(0.0, 0.0, 0.31),
            ..Default::default()
        };
        assert!(!contact(&road, &law(), &m, None).in_contact);
        // In the road but moving up fast: the damping would pull.
        m.x.z = 0.299;
        m.v.z = 10.0;
        let c = contact(&road, &law(), &m, None);
        assert!(!c.in_contact && c.kin.fz == 0.0);
    }

    #[test]
    fn table_and_bottoming() {
        let mut l = law();
        l.stiffness = VerticalStiffness::Table {
            rho: vec![0.0, 0.01, 0.02],
            force: vec![0.0, 1000.0, 3000.0],
        };
        l.damping = 0.0;
        assert_eq!(vertical_force(&l, 0.015, 0.0).0, 2000.0);
        assert_eq!(vertical_force(&l, 0.03, 0.0).0, 5000.0);
        // Bottoming below rim + 0.01 m: R0 − ρ < 0.21 m.
        let (f, df, _) = vertical_force(&l, 0.1, 0.0);
        assert!((f - (19000.0 + 1e6 * 0.01)).abs() < 1e-6);
        assert!((df - (2e5 + 1e6)).abs() < 1e-6);
    }
}
