//! Linear modal analysis at a given state (document 000, section 5: eigenvalues of the linearised
//! suspension, the stiffness ratio max|λ|/min|λ| that motivates the linear-implicit integrator, and
//! natural frequencies; figures of `reference-suspensions.md` sections 0 and 6).
//!
//! In tangent coordinates (δ = position perturbation: δx global, δθ body frame; v = velocities) the
//! linearised equations of motion are
//!
//! ```text
//! d/dt [δ; v] = A [δ; v],   A = [[0, I], [J_r K, J_v]]
//! ```
//!
//! with J_r K and J_v from [`MechanicalSystem::linearise`]. The analysis computes
//!
//! * the complex eigenvalues λ of A (first-order system, 2n states);
//! * for every oscillatory pair (Im λ > 0) the natural frequency |λ|/2π and the damping ratio
//!   ζ = −Re λ/|λ|;
//! * the undamped natural frequencies √ω²/2π from the eigenvalues ω² of −J_r K evaluated at v = 0
//!   (ω² ≥ 0 for a stable, restrained system; tiny negative or complex round-off values are
//!   clipped to their real part / to zero and the largest imaginary part is reported);
//! * the stiffness ratio max|λ| / min|λ| over the non-zero eigenvalues.
//!
//! ## Free spin modes (wheel spin)
//! A bushing with a `spin_axis` (wheel bearing) leaves the rotation of its marker-I body about that
//! axis free: the free spin angle is a cyclic coordinate and gives λ = 0, its rate decays by the
//! bearing drag only (λ = −c_spin/I_spin, e.g. −0.05 1/s). These modes are identified
//! *structurally*, not by thresholds: for every such bushing the body of marker I and the spin axis
//! (marker-I axis, in body coordinates) define one rotational tangent direction. The headline
//! figures ([`Modes::eigenvalues`], frequencies, damping ratios, stiffness ratio, undamped
//! frequencies) are computed with those directions removed from the coordinates: T is an
//! orthonormal basis of the complement of the spin directions and the reduced system is
//! A_red = [[0, I], [Tᵀ J_r K T, Tᵀ J_v T]] (what the data sheet calls "wheel spin removed").
//! [`Modes::full_eigenvalues`] keeps all 2n eigenvalues, and
//! [`Modes::stiffness_ratio_all_nonzero`] is the ratio over the full spectrum excluding only
//! numerically zero eigenvalues (|λ| ≤ [`ZERO_REL`] · max|λ|), so it includes the drag mode.
//!
//! Eigenvalues come from nalgebra's real Schur decomposition after a diagonal similarity
//! balancing (Parlett–Reinsch, powers of two, so the balancing is exact in floating point); the
//! matrices of the reference axles span |λ| from 0.05 to 8e5 1/s.
//!
//! ## Large models: lowest eigenvalues by shift-invert
//! The dense path needs O(n²) memory and O(n³) time. Above [`ModesOptions::dense_limit`] degrees
//! of freedom (or with [`ModesMethod::ShiftInvert`]) only the lowest [`ModesOptions::count`]
//! eigenvalues are computed, by subspace iteration with Rayleigh–Ritz extraction (Saad,
//! *Numerical Methods for Large Eigenvalue Problems*, 2nd ed., SIAM 2011, sections 5.2 and 4.3)
//! on the shift-inverted operators, applied through the block-sparse LU (`sprung_solve::block_lu`,
//! one symbolic analysis for both factorisations):
//!
//! * undamped: (K − σ_u I)⁻¹ with K = −J_r K(v = 0), σ_u = −s², so the wanted ω² have the largest
//!   μ = 1/(ω² − σ_u) and ω² = σ_u + 1/μ;
//! * first order: (A − σ I)⁻¹ with σ = −s, applied without forming the 2n system:
//!   x = R⁻¹ (b − (J_v − σ I) a), y = a + σ x with R = J_r K + σ J_v − σ² I, λ = σ + 1/μ.
//!
//! Element states (first-order coordinates without positions, after the bodies' in v) enter
//! both operators without a change of R: the first-order system is z = (δ, v, s) with δ only for
//! the bodies, and because J_r K has no columns for the states the same formulas hold with a
//! extended by zeros on the states (the state part of x is s/σ). The padding of the state
//! blocks (zero rate, decoupled, λ = 0) is left out of the iterated vectors. The undamped
//! problem holds the states (as on the dense path): it iterates on the bodies' coordinates with
//! the bodies' part of −(J_r K − σ_u I)⁻¹ (x, 0), exactly −B_bb⁻¹ x because J_r K has no state
//! columns (block-triangular).
//!
//! The shift s = 1e-5 √(max|diag J_r K|) lies below the interesting part of the spectrum and keeps
//! R and K − σ_u I regular when the model has exactly zero modes (free bodies, free spins), whose
//! λ = 0 then appear as ordinary (dominant) eigenvalues. A subspace of max(2k, k + 10) vectors is
//! iterated until the wanted Ritz values change by less than 1e-13 relative (or the accuracy
//! rounding allows) in three consecutive iterations. Block (subspace) iteration rather than single-vector Lanczos/Arnoldi, because
//! multiple eigenvalues are common (symmetric chains, free bodies: six zero modes each).
//! In this mode the free spin coordinates are not removed from the first-order values
//! (`eigenvalues` = `full_eigenvalues`, the lowest k), the undamped frequencies drop the m
//! zero frequencies of the m spin coordinates (for the undamped problem the full spectrum is the
//! reduced one plus m exact zeros: the spin columns of J_r K vanish), and the figures that need
//! the top of the spectrum (`lambda_abs_max`, the stiffness ratios) are NaN: not computed.
//!
//! The undamped mode shapes come with the frequencies in this mode
//! ([`Modes::undamped_mode_shapes`]: Ritz vectors Q y of the converged subspace, y from inverse
//! iteration on the small Rayleigh quotient).
//!
//! Free bodies give zero-frequency modes (ω² = 0, f = 0 Hz, λ = 0), never NaN; an empty model
//! (no bodies) is an error ([`ModesError::Empty`]).

use std::f64::consts::PI;
use std::fmt;

use std::sync::Arc;

use nalgebra::{Complex, DMatrix, Matrix3, Vector3};
use sprung_solve::block::BlockMatrix;
use sprung_solve::block_lu::{BlockSparseLu, BlockSymbolic};
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::compiled::ElementKind;
use crate::system::MbsSystem;

/// Eigenvalues with |λ| ≤ `ZERO_REL` · max|λ| count as numerically zero.
pub const ZERO_REL: f64 = 1e-9;

/// A free rotation removed from the coordinates (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct SpinCoordinate {
    /// Name of the element whose `spin_axis` frees the rotation.
    pub element: String,
    /// Name of the spinning body (body of marker I).
    pub body: String,
    /// Spin axis in body coordinates (unit vector).
    pub axis_body: [f64; 3],
}

/// One oscillatory eigenvalue pair (Im λ > 0 is stored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OscillatoryMode {
    /// The eigenvalue with positive imaginary part, 1/s.
    pub eigenvalue: Complex<f64>,
    /// Natural frequency |λ| / 2π, Hz.
    pub frequency_hz: f64,
    /// Damping ratio −Re λ / |λ|.
    pub damping_ratio: f64,
}

/// Result of [`modal_analysis`].
#[derive(Debug, Clone)]
pub struct Modes {
    /// Eigenvalues of the first-order system with the free spin coordinates removed
    /// (2(n − m) values), sorted by |λ|, then by imaginary part.
    pub eigenvalues: Vec<Complex<f64>>,
    /// All 2n eigenvalues of the full first-order system, sorted the same way.
    pub full_eigenvalues: Vec<Complex<f64>>,
    /// The free spin coordinates that were removed.
    pub spin_coordinates: Vec<SpinCoordinate>,
    /// Oscillatory pairs of [`Modes::eigenvalues`], sorted by frequency.
    pub oscillatory: Vec<OscillatoryMode>,
    /// Undamped natural frequencies (eigenvalues of −Tᵀ J_r K T at v = 0), ascending, Hz.
    pub undamped_frequencies_hz: Vec<f64>,
    /// Mode shapes of [`Modes::undamped_frequencies_hz`], same order, in tangent coordinates
    /// (δx, δθ per body, largest entry +1): computed by the shift-invert path (Ritz vectors);
    /// empty on the dense path, and an empty vector for a value that came out complex.
    pub undamped_mode_shapes: Vec<Vec<f64>>,
    /// Largest |Im ω²| / max|ω²| of the undamped problem (asymmetry indicator, ~0 for a
    /// conservative system).
    pub undamped_imag_rel: f64,
    /// Smallest |λ| over the non-zero reduced eigenvalues, 1/s.
    pub lambda_abs_min: f64,
    /// Largest |λ|, 1/s.
    pub lambda_abs_max: f64,
    /// max|λ| / min|λ| over the non-zero reduced eigenvalues (headline figure).
    pub stiffness_ratio: f64,
    /// max|λ| / min|λ| over all non-zero eigenvalues of the full system (includes the drag mode).
    pub stiffness_ratio_all_nonzero: f64,
    /// Number of numerically zero eigenvalues of the full system.
    pub full_zero_count: usize,
    /// Largest real part of the reduced eigenvalues (< 0: asymptotically stable), 1/s.
    pub max_real_part: f64,
}

/// Why the analysis failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModesError {
    /// The model has ideal joints, which the modal analysis does not support yet
    /// (`docs/joints.md`); the message names the jointed body.
    #[error("{0}")]
    Unsupported(String),
    /// State vectors of the wrong length.
    #[error(
        "modal analysis: state has {got_r} positions / {got_v} velocities, the model needs {n_r} / {n_v}"
    )]
    Shape {
        /// Given position length.
        got_r: usize,
        /// Given velocity length.
        got_v: usize,
        /// Required position length.
        n_r: usize,
        /// Required velocity length.
        n_v: usize,
    },
    /// The model has no moving bodies.
    #[error("modal analysis: the model has no moving bodies, so there are no modes")]
    Empty,
    /// The shifted matrix of the shift-invert iteration is singular.
    #[error(
        "modal analysis: the shifted matrix for shift-invert is singular near coordinate {row} (shift {shift:e})"
    )]
    SingularShift {
        /// Scalar row of the failing pivot.
        row: usize,
        /// The shift σ.
        shift: f64,
    },
    /// The subspace iteration did not converge.
    #[error(
        "modal analysis: the shift-invert subspace iteration did not converge in {iterations} iterations \
         (last change of the wanted values {change:.2e} x the convergence bound); ask for fewer modes or use the dense method"
    )]
    SubspaceNoConvergence {
        /// Iterations done.
        iterations: usize,
        /// Last change of the wanted values in units of the convergence bound.
        change: f64,
    },
    /// The eigenvalue iteration did not converge.
    #[error(
        "modal analysis: the eigenvalue iteration did not converge for the {0}x{0} matrix \
         (non-finite entries in the linearisation?)"
    )]
    NoConvergence(usize),
}

fn by_modulus(a: &Complex<f64>, b: &Complex<f64>) -> std::cmp::Ordering {
    a.norm().total_cmp(&b.norm()).then(a.im.total_cmp(&b.im))
}

/// Diagonal similarity balancing (Parlett–Reinsch with powers of two, as in LAPACK `gebal`
/// without permutations) in place: row/column norms of the off-diagonal parts are equalised.
fn balance(a: &mut DMatrix<f64>) {
    const RADIX: f64 = 2.0;
    let n = a.nrows();
    for _sweep in 0..200 {
        let mut converged = true;
        for i in 0..n {
            let mut c = 0.0;
            let mut r = 0.0;
            for j in 0..n {
                if j != i {
                    c += a[(j, i)].abs();
                    r += a[(i, j)].abs();
                }
            }
            if c == 0.0 || r == 0.0 {
                continue;
            }
            let s = c + r;
            let mut f = 1.0;
            let mut g = r / RADIX;
            while c < g {
                f *= RADIX;
                c *= RADIX * RADIX;
            }
            g = r * RADIX;
            while c > g {
                f /= RADIX;
                c /= RADIX * RADIX;
            }
            if (c + r) / f < 0.95 * s {
                converged = false;
                for j in 0..n {
                    a[(i, j)] /= f;
                    a[(j, i)] *= f;
                }
            }
        }
        if converged {
            break;
        }
    }
}

/// Sorted complex eigenvalues of a real square matrix (balanced real Schur form).
fn eigenvalues(mut a: DMatrix<f64>) -> Result<Vec<Complex<f64>>, ModesError> {
    let n = a.nrows();
    if n == 0 {
        return Ok(Vec::new());
    }
    if a.iter().any(|x| !x.is_finite()) {
        return Err(ModesError::NoConvergence(n));
    }
    balance(&mut a);
    let schur = nalgebra::linalg::Schur::try_new(a, f64::EPSILON, 1000 * n)
        .ok_or(ModesError::NoConvergence(n))?;
    let mut ev: Vec<Complex<f64>> = schur.complex_eigenvalues().iter().copied().collect();
    ev.sort_by(by_modulus);
    Ok(ev)
}

/// Orthonormal basis (columns, n × (n − m)) of the complement of the spin directions.
fn reduction_basis(n: usize, spins: &[(usize, Vector3<f64>)]) -> DMatrix<f64> {
    let m = spins.len();
    let mut t = DMatrix::zeros(n, n - m);
    let mut col = 0;
    for b in 0..n / 6 {
        let axes: Vec<Vector3<f64>> = spins
            .iter()
            .filter(|(k, _)| *k == b)
            .map(|(_, a)| *a)
            .collect();
        for k in 0..3 {
            t[(6 * b + k, col)] = 1.0;
            col += 1;
        }
        // Rotational block: Gram–Schmidt of the spin axes, then complete to a basis and keep the rest.
        let mut basis: Vec<Vector3<f64>> = Vec::new();
        for a in axes
            .iter()
            .chain([Vector3::x(), Vector3::y(), Vector3::z()].iter())
        {
            let mut u = *a;
            for e in &basis {
                u -= e * e.dot(&u);
            }
            if u.norm() > 1e-8 && basis.len() < 3 {
                basis.push(u.normalize());
            }
        }
        for e in basis.iter().skip(axes.len()) {
            for k in 0..3 {
                t[(6 * b + 3 + k, col)] = e[k];
            }
            col += 1;
        }
    }
    debug_assert_eq!(col, n - m);
    t
}

/// The first-order matrix [[0, I, 0], [J_r K, J_v]] of (positions, velocities, element states):
/// the first `n_pos` velocity-level coordinates have positions (the bodies' 6 each, in tangent
/// coordinates), the rest are element states (first-order coordinates without positions).
fn first_order(jrk: &DMatrix<f64>, jv: &DMatrix<f64>, n_pos: usize) -> DMatrix<f64> {
    let n = jrk.nrows();
    let mut a = DMatrix::zeros(n_pos + n, n_pos + n);
    for k in 0..n_pos {
        a[(k, n_pos + k)] = 1.0;
    }
    a.view_mut((n_pos, 0), (n, n_pos))
        .copy_from(&jrk.view((0, 0), (n, n_pos)));
    a.view_mut((n_pos, n_pos), (n, n)).copy_from(jv);
    a
}

/// The oscillatory pairs of `eigenvalues` (Im λ > 0), sorted by frequency.
fn oscillatory_modes(eigenvalues: &[Complex<f64>]) -> Vec<OscillatoryMode> {
    let mut modes: Vec<OscillatoryMode> = eigenvalues
        .iter()
        .filter(|l| l.im > 0.0)
        .map(|l| OscillatoryMode {
            eigenvalue: *l,
            frequency_hz: l.norm() / (2.0 * PI),
            damping_ratio: -l.re / l.norm(),
        })
        .collect();
    modes.sort_by(|a, b| a.frequency_hz.total_cmp(&b.frequency_hz));
    modes
}

fn dense(b: &sprung_solve::block::BlockMatrix, n: usize) -> DMatrix<f64> {
    DMatrix::from_row_slice(n, n, &b.to_dense_row_major())
}

/// Ratio max|λ| / min|λ| over the eigenvalues with |λ| > ZERO_REL · max|λ|; (ratio, min, max, zeros).
fn ratio(ev: &[Complex<f64>]) -> (f64, f64, f64, usize) {
    let max = ev.iter().map(|l| l.norm()).fold(0.0, f64::max);
    let tol = ZERO_REL * max;
    let zeros = ev.iter().filter(|l| l.norm() <= tol).count();
    let min = ev
        .iter()
        .map(|l| l.norm())
        .filter(|&x| x > tol)
        .fold(f64::INFINITY, f64::min);
    (max / min, min, max, zeros)
}

/// The free spin coordinates of a model: one per bushing with a `spin_axis` whose marker I is on a
/// moving body.
pub fn spin_coordinates(sys: &MbsSystem) -> Vec<SpinCoordinate> {
    let model = sys.model();
    model
        .elements
        .iter()
        .filter_map(|e| match &e.kind {
            ElementKind::Bushing(b) => {
                let k = b.spin_axis?;
                let mk = &model.markers[e.marker_i];
                let body = mk.body?;
                let axes: Matrix3<f64> = mk.axes;
                let a = axes.column(k).normalize();
                Some(SpinCoordinate {
                    element: e.name.clone(),
                    body: model.bodies[body].name.clone(),
                    axis_body: [a.x, a.y, a.z],
                })
            }
            _ => None,
        })
        .collect()
}

/// Linear modal analysis of `sys` at (t, r, v); see the module documentation.
///
/// Panics never; a state of the wrong size or a non-converging eigenvalue iteration is an error
/// through [`try_modal_analysis`]. This convenience wrapper returns a [`Modes`] with empty
/// spectra (and NaN figures) in those cases.
pub fn modal_analysis(sys: &mut MbsSystem, t: f64, r: &[f64], v: &[f64]) -> Modes {
    try_modal_analysis(sys, t, r, v).unwrap_or_else(|_| Modes {
        eigenvalues: Vec::new(),
        full_eigenvalues: Vec::new(),
        spin_coordinates: Vec::new(),
        oscillatory: Vec::new(),
        undamped_frequencies_hz: Vec::new(),
        undamped_mode_shapes: Vec::new(),
        undamped_imag_rel: f64::NAN,
        lambda_abs_min: f64::NAN,
        lambda_abs_max: f64::NAN,
        stiffness_ratio: f64::NAN,
        stiffness_ratio_all_nonzero: f64::NAN,
        full_zero_count: 0,
        max_real_part: f64::NAN,
    })
}

/// Linear modal analysis of `sys` at (t, r, v) with errors; see the module documentation.
pub fn try_modal_analysis(
    sys: &mut MbsSystem,
    t: f64,
    r: &[f64],
    v: &[f64],
) -> Result<Modes, ModesError> {
    modal_analysis_with(sys, t, r, v, &ModesOptions::default())
}

/// How [`modal_analysis_with`] computes the eigenvalues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModesMethod {
    /// Dense up to [`ModesOptions::dense_limit`] degrees of freedom, shift-invert above.
    #[default]
    Auto,
    /// All eigenvalues, dense (real Schur).
    Dense,
    /// The lowest [`ModesOptions::count`] by shift-invert with the block-sparse LU.
    ShiftInvert,
}

/// Settings of [`modal_analysis_with`].
#[derive(Debug, Clone, Copy)]
pub struct ModesOptions {
    /// Dense or shift-invert.
    pub method: ModesMethod,
    /// Number of lowest eigenvalues computed by shift-invert (first-order and undamped each).
    pub count: usize,
    /// Largest number of degrees of freedom for which [`ModesMethod::Auto`] uses the dense path.
    pub dense_limit: usize,
}

impl Default for ModesOptions {
    fn default() -> Self {
        Self {
            method: ModesMethod::Auto,
            count: 10,
            dense_limit: 600,
        }
    }
}

/// Linear modal analysis of `sys` at (t, r, v) with the given method; see the module documentation.
pub fn modal_analysis_with(
    sys: &mut MbsSystem,
    t: f64,
    r: &[f64],
    v: &[f64],
    opts: &ModesOptions,
) -> Result<Modes, ModesError> {
    let (n_r, n) = (sys.n_r(), sys.n_v());
    if r.len() != n_r || v.len() != n {
        return Err(ModesError::Shape {
            got_r: r.len(),
            got_v: v.len(),
            n_r,
            n_v: n,
        });
    }
    if n == 0 {
        return Err(ModesError::Empty);
    }
    let dense_path = match opts.method {
        ModesMethod::Dense => true,
        ModesMethod::ShiftInvert => false,
        ModesMethod::Auto => n <= opts.dense_limit,
    };
    if !dense_path {
        sys.model()
            .require_no_joints("the shift-invert modal analysis (above the dense limit)")
            .map_err(ModesError::Unsupported)?;
        return shift_invert_analysis(sys, t, r, v, opts.count.max(1));
    }
    let mut lin = Linearisation::new(n_r, sys.pattern());
    sys.linearise(t, r, v, &mut lin);
    // The bodies' coordinates and the element states in use (not the padding of their blocks):
    // with ideal joints (`docs/joints.md`) a jointed body's block holds its joint coordinate in
    // the first slot and padding (a follower's block only padding); the padding is left out.
    let model = sys.model().clone();
    let nbv = model.n_body_v();
    let body_padding = |i: usize| {
        model
            .joints
            .defs
            .get(i / 6)
            .and_then(Option::as_ref)
            .is_some_and(|d| !(d.own && i.is_multiple_of(6)))
    };
    let n_kb = (0..nbv).filter(|&i| !body_padding(i)).count();
    let keep: Vec<usize> = (0..nbv)
        .filter(|&i| !body_padding(i))
        .chain(
            model
                .open_elements
                .iter()
                .enumerate()
                .flat_map(|(e, el)| (0..el.law.n_states()).map(move |j| (e, j)))
                .map(|(e, j)| model.state_index(e, j)),
        )
        .collect();
    let nk = keep.len();
    let restrict = |m: DMatrix<f64>| {
        if nk == n {
            m
        } else {
            DMatrix::from_fn(nk, nk, |i, j| m[(keep[i], keep[j])])
        }
    };
    let jrk = restrict(dense(&lin.j_rk, n));
    let jv = restrict(dense(&lin.j_v, n));
    // J_r K at v = 0 (element states kept) for the undamped problem (velocity-dependent terms
    // vanish there).
    let jrk0 = if v[..nbv].iter().any(|x| *x != 0.0) {
        let mut v0 = v.to_vec();
        v0[..nbv].fill(0.0);
        sys.linearise(t, r, &v0, &mut lin);
        restrict(dense(&lin.j_rk, n))
    } else {
        jrk.clone()
    };

    let spin_coordinates = spin_coordinates(sys);
    let body_index = |name: &str| {
        sys.model()
            .bodies
            .iter()
            .position(|b| b.name == name)
            .unwrap_or(0)
    };
    let spins: Vec<(usize, Vector3<f64>)> = spin_coordinates
        .iter()
        .map(|s| (body_index(&s.body), Vector3::from(s.axis_body)))
        .collect();
    if let Some((b, _)) = spins
        .iter()
        .find(|(b, _)| model.joints.defs.get(*b).is_some_and(Option::is_some))
    {
        return Err(ModesError::Unsupported(format!(
            "the modal analysis does not support a free spin (a bushing's `spin_axis`) on a body with a joint, and body '{}' has both; make the spin a state of its tire (`spin = \"state\"`) or replace the joint by bushings",
            model.bodies[*b].name
        )));
    }
    // The basis on all body coordinates, restricted to the kept ones: the padding's unit
    // columns drop out (no spin on a jointed body, checked above), so it stays orthonormal.
    let tb_body = {
        let full = reduction_basis(nbv, &spins);
        let rows = &keep[..n_kb];
        let cols: Vec<usize> = (0..full.ncols())
            .filter(|&c| rows.iter().any(|&r| full[(r, c)] != 0.0))
            .collect();
        DMatrix::from_fn(n_kb, cols.len(), |i, j| full[(rows[i], cols[j])])
    };
    let n_pos = tb_body.ncols();
    let tb = if nk == n_kb {
        tb_body
    } else {
        // Element states are not reduced: identity on them.
        let mut t = DMatrix::zeros(nk, n_pos + nk - n_kb);
        t.view_mut((0, 0), (n_kb, n_pos)).copy_from(&tb_body);
        for k in 0..nk - n_kb {
            t[(n_kb + k, n_pos + k)] = 1.0;
        }
        t
    };
    let tbt = tb.transpose();

    let full_eigenvalues = eigenvalues(first_order(&jrk, &jv, n_kb))?;
    let eigenvalues = eigenvalues(first_order(
        &(&tbt * &jrk * &tb),
        &(&tbt * &jv * &tb),
        n_pos,
    ))?;

    let oscillatory = oscillatory_modes(&eigenvalues);

    // The undamped problem of the bodies (element states held).
    let k_red = -(&tbt * &jrk0 * &tb)
        .view((0, 0), (n_pos, n_pos))
        .into_owned();
    let omega2 = self::eigenvalues(k_red)?;
    let w2_max = omega2.iter().map(|l| l.norm()).fold(0.0, f64::max);
    let undamped_imag_rel = if w2_max > 0.0 {
        omega2.iter().map(|l| l.im.abs()).fold(0.0, f64::max) / w2_max
    } else {
        0.0
    };
    let mut undamped_frequencies_hz: Vec<f64> = omega2
        .iter()
        .map(|l| l.re.max(0.0).sqrt() / (2.0 * PI))
        .collect();
    undamped_frequencies_hz.sort_by(f64::total_cmp);

    let (stiffness_ratio, lambda_abs_min, lambda_abs_max, _) = ratio(&eigenvalues);
    let (stiffness_ratio_all_nonzero, _, _, full_zero_count) = ratio(&full_eigenvalues);
    let max_real_part = eigenvalues
        .iter()
        .map(|l| l.re)
        .fold(f64::NEG_INFINITY, f64::max);
    Ok(Modes {
        eigenvalues,
        full_eigenvalues,
        spin_coordinates,
        oscillatory,
        undamped_frequencies_hz,
        undamped_mode_shapes: Vec::new(),
        undamped_imag_rel,
        lambda_abs_min,
        lambda_abs_max,
        stiffness_ratio,
        stiffness_ratio_all_nonzero,
        full_zero_count,
        max_real_part,
    })
}

/// Lowest-k analysis by shift-invert subspace iteration; see the module documentation.
fn shift_invert_analysis(
    sys: &mut MbsSystem,
    t: f64,
    r: &[f64],
    v: &[f64],
    k: usize,
) -> Result<Modes, ModesError> {
    let (n_r, n) = (sys.n_r(), sys.n_v());
    let model = sys.model().clone();
    let nbv = model.n_body_v();
    // The padding of the element-state blocks (v indices): decoupled coordinates with zero
    // rate (λ = 0), left out of the first-order iteration.
    let mut padding = vec![true; n - nbv];
    for (e, el) in model.open_elements.iter().enumerate() {
        for j in 0..el.law.n_states() {
            padding[model.state_index(e, j) - nbv] = false;
        }
    }
    let padding: Vec<usize> = (nbv..n).filter(|&i| padding[i - nbv]).collect();
    let pattern = sys.pattern();
    let symbolic = Arc::new(BlockSymbolic::new(&pattern));
    let mut lin = Linearisation::new(n_r, pattern.clone());
    // J_r K at zero body velocities, element states kept (as on the dense path).
    let mut v0 = v.to_vec();
    v0[..nbv].fill(0.0);
    sys.linearise(t, r, &v0, &mut lin);
    let jrk0 = lin.j_rk.clone();
    if v.iter().any(|x| *x != 0.0) {
        sys.linearise(t, r, v, &mut lin);
    }
    let d = (0..n).map(|i| jrk0.get(i, i).abs()).fold(0.0, f64::max);
    if !d.is_finite() {
        return Err(ModesError::NoConvergence(n));
    }
    // Shift: below the interesting spectrum, regular for exact zero modes (module docs).
    let s = if d > 0.0 { 1e-5 * d.sqrt() } else { 1e-5 };
    let spin_coordinates = spin_coordinates(sys);
    let m = spin_coordinates.len();

    // Undamped: mu = 1/(omega^2 + s^2) of -(J_rK0 - s^2 I)^-1.
    let mut b = jrk0.clone();
    b.add_identity(-s * s);
    let mut lu = BlockSparseLu::from_symbolic(symbolic.clone());
    lu.factor(&b).map_err(|e| ModesError::SingularShift {
        row: e.row(),
        shift: -s * s,
    })?;
    // The undamped problem of the bodies, element states held: J_r K has no columns for the
    // states, so B = [[B_bb, 0], [B_sb, −s² I]] is block lower triangular and the bodies' part
    // of −B⁻¹ (x, 0) is exactly −B_bb⁻¹ x: the iteration runs on the nbv body coordinates.
    let mut full = vec![0.0; n];
    let mu = subspace_iteration(
        nbv,
        (k + m).min(nbv),
        &mut |x: &[f64], y: &mut [f64]| {
            full[..nbv].copy_from_slice(x);
            full[nbv..].fill(0.0);
            lu.solve_in_place(&mut full);
            for (yi, fi) in y.iter_mut().zip(&full) {
                *yi = -*fi;
            }
        },
        &|u| u.inv() - s * s,
        1e-3 * s * s,
    )?;
    // (omega^2, mu) by |omega^2|; the m smallest are the spin zeros.
    let mut pairs: Vec<(Complex<f64>, Complex<f64>)> =
        mu.values.iter().map(|&u| (u.inv() - s * s, u)).collect();
    pairs.sort_by(|a, b| by_modulus(&a.0, &b.0));
    let mut pairs: Vec<(Complex<f64>, Complex<f64>)> = pairs.into_iter().skip(m).take(k).collect();
    pairs.sort_by(|a, b| a.0.re.max(0.0).total_cmp(&b.0.re.max(0.0)));
    let undamped_mode_shapes = mu.real_ritz_vectors(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let omega2: Vec<Complex<f64>> = pairs.iter().map(|p| p.0).collect();
    let w2_max = omega2.iter().map(|l| l.norm()).fold(0.0, f64::max);
    let undamped_imag_rel = if w2_max > 0.0 {
        omega2.iter().map(|l| l.im.abs()).fold(0.0, f64::max) / w2_max
    } else {
        0.0
    };
    let undamped_frequencies_hz: Vec<f64> = omega2
        .iter()
        .map(|l| l.re.max(0.0).sqrt() / (2.0 * PI))
        .collect();

    // First order: R = J_rK + sigma J_v - sigma^2 I with sigma = -s.
    let sigma = -s;
    let mut rm = lin.j_rk.clone();
    rm.axpy(sigma, &lin.j_v);
    rm.add_identity(-sigma * sigma);
    let mut lu1 = BlockSparseLu::from_symbolic(symbolic);
    lu1.factor(&rm).map_err(|e| ModesError::SingularShift {
        row: e.row(),
        shift: sigma,
    })?;
    let jv: &BlockMatrix = &lin.j_v;
    let mut w = vec![0.0; n];
    let mut a_ext = vec![0.0; n];
    // A few extra values: the iteration orders by |lambda - sigma|, the result by |lambda|.
    let extra = 4;
    // z = (a, b): a the nbv position-level coordinates of the bodies, b the n velocity-level
    // coordinates (bodies, then element states); a_ext = (a, 0) on all n.
    // The iteration runs on the coordinates without the padding (`kept`: positions in z).
    let kept: Vec<usize> = (0..nbv + n)
        .filter(|&i| i < nbv || padding.binary_search(&(i - nbv)).is_err())
        .collect();
    let (mut z, mut out) = (vec![0.0; nbv + n], vec![0.0; nbv + n]);
    let mut op1 = |xc: &[f64], yc: &mut [f64]| {
        for (&i, xi) in kept.iter().zip(xc) {
            z[i] = *xi;
        }
        let (a, bb) = z.split_at(nbv);
        a_ext[..nbv].copy_from_slice(a);
        // w = b - (J_v - sigma I) a_ext
        w.copy_from_slice(bb);
        jv.gemv(-1.0, &a_ext, 1.0, &mut w);
        for (wi, ai) in w.iter_mut().zip(a) {
            *wi += sigma * ai;
        }
        lu1.solve_in_place(&mut w);
        let (yx, yy) = out.split_at_mut(nbv);
        yx.copy_from_slice(&w[..nbv]);
        for ((yi, ai), xi) in yy.iter_mut().zip(&a_ext).zip(&w) {
            *yi = ai + sigma * xi;
        }
        for (&i, yi) in kept.iter().zip(yc.iter_mut()) {
            *yi = out[i];
        }
    };
    let mu1 = subspace_iteration(
        kept.len(),
        (k + extra).min(kept.len()),
        &mut op1,
        &|u| u.inv() + sigma,
        1e-3 * s,
    )?;
    let mut lambdas: Vec<Complex<f64>> = mu1.values.iter().map(|u| u.inv() + sigma).collect();
    lambdas.sort_by(by_modulus);
    lambdas.truncate(k);
    let max_abs = lambdas.iter().map(|l| l.norm()).fold(0.0, f64::max);
    let zero_tol = ZERO_REL * d.sqrt().max(max_abs);
    let full_zero_count = lambdas.iter().filter(|l| l.norm() <= zero_tol).count();
    let lambda_abs_min = lambdas
        .iter()
        .map(|l| l.norm())
        .filter(|&x| x > zero_tol)
        .fold(f64::INFINITY, f64::min);
    let oscillatory = oscillatory_modes(&lambdas);
    let max_real_part = lambdas
        .iter()
        .map(|l| l.re)
        .fold(f64::NEG_INFINITY, f64::max);
    Ok(Modes {
        eigenvalues: lambdas.clone(),
        full_eigenvalues: lambdas,
        spin_coordinates,
        oscillatory,
        undamped_frequencies_hz,
        undamped_mode_shapes,
        undamped_imag_rel,
        lambda_abs_min,
        lambda_abs_max: f64::NAN,
        stiffness_ratio: f64::NAN,
        stiffness_ratio_all_nonzero: f64::NAN,
        full_zero_count,
        max_real_part,
    })
}

/// Deterministic start vectors (xorshift in [-1, 1]).
fn start_block(n: usize, p: usize) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..n * p)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// Orthonormalises the `p` columns (each of length `n`, stored one after the other) by modified
/// Gram–Schmidt applied twice; a column that vanishes is replaced by a fresh start vector.
fn orthonormalise(q: &mut [f64], n: usize, p: usize) {
    let mut fresh = 0;
    for j in 0..p {
        for _pass in 0..2 {
            let (done, rest) = q.split_at_mut(j * n);
            let col = &mut rest[..n];
            for i in 0..j {
                let qi = &done[i * n..(i + 1) * n];
                let dot: f64 = qi.iter().zip(col.iter()).map(|(a, b)| a * b).sum();
                for (c, a) in col.iter_mut().zip(qi) {
                    *c -= dot * a;
                }
            }
        }
        let norm = q[j * n..(j + 1) * n]
            .iter()
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt();
        if norm > 1e-300 && norm.is_finite() {
            for x in &mut q[j * n..(j + 1) * n] {
                *x /= norm;
            }
        } else if fresh < 4 * p {
            fresh += 1;
            let v = start_block(n, p + fresh);
            q[j * n..(j + 1) * n].copy_from_slice(&v[(p + fresh - 1) * n..]);
            // Redo this column against the previous ones.
            let (done, rest) = q.split_at_mut(j * n);
            let col = &mut rest[..n];
            for i in 0..j {
                let qi = &done[i * n..(i + 1) * n];
                let dot: f64 = qi.iter().zip(col.iter()).map(|(a, b)| a * b).sum();
                for (c, a) in col.iter_mut().zip(qi) {
                    *c -= dot * a;
                }
            }
            let norm = col.iter().map(|x| x * x).sum::<f64>().sqrt();
            for x in col.iter_mut() {
                *x /= norm;
            }
        }
    }
}

/// Converged subspace: the wanted Ritz values (decreasing modulus), the orthonormal basis
/// (`p` columns of length `n`, one after the other) and the Rayleigh quotient H = Qᵀ Op Q.
struct Subspace {
    values: Vec<Complex<f64>>,
    q: Vec<f64>,
    h: DMatrix<f64>,
}

impl Subspace {
    /// Ritz vectors Q y of real Ritz values μ (H y = μ y by inverse iteration on the small H),
    /// scaled to a largest entry of +1; an empty vector for a complex value. Within a multiple
    /// value the vectors are made orthogonal (each iterate is orthogonalised against the earlier
    /// vectors of the same value), so they span its eigenspace.
    fn real_ritz_vectors(&self, mus: &[Complex<f64>]) -> Vec<Vec<f64>> {
        let p = self.h.nrows();
        let n = self.q.len() / p.max(1);
        let mut done: Vec<(Complex<f64>, nalgebra::DVector<f64>)> = Vec::new();
        let mut out = Vec::with_capacity(mus.len());
        for (idx, &mu) in mus.iter().enumerate() {
            if p == 0 || mu.im.abs() > 1e-8 * mu.norm() {
                out.push(Vec::new());
                continue;
            }
            let shift = mu.re * (1.0 + 1e-10) + f64::MIN_POSITIVE;
            let lu = (&self.h - DMatrix::identity(p, p) * shift).lu();
            let same: Vec<&nalgebra::DVector<f64>> = done
                .iter()
                .filter(|(m, _)| (m - mu).norm() <= 1e-8 * mu.norm())
                .map(|(_, y)| y)
                .collect();
            let mut y =
                nalgebra::DVector::from_fn(p, |i, _| 1.0 + 0.1 * ((7 * i + 13 * idx) % 11) as f64);
            let mut ok = true;
            for _ in 0..3 {
                match lu.solve(&y) {
                    Some(z) => y = z,
                    None => {
                        ok = false;
                        break;
                    }
                }
                for e in &same {
                    let d = e.dot(&y);
                    y -= *e * d;
                }
                let norm = y.norm();
                if !(norm.is_finite() && norm > 0.0) {
                    ok = false;
                    break;
                }
                y /= norm;
            }
            if !ok {
                out.push(Vec::new());
                continue;
            }
            let mut x = vec![0.0; n];
            for (j, yj) in y.iter().enumerate() {
                for (xi, qi) in x.iter_mut().zip(&self.q[j * n..(j + 1) * n]) {
                    *xi += yj * qi;
                }
            }
            done.push((mu, y));
            let big = x
                .iter()
                .copied()
                .fold(0.0f64, |m, v| if v.abs() > m.abs() { v } else { m });
            if big != 0.0 && big.is_finite() {
                x.iter_mut().for_each(|v| *v /= big);
            }
            out.push(x);
        }
        out
    }
}

/// The `k` eigenvalues of largest modulus of the operator `op` (dimension `n`) by subspace
/// iteration with Rayleigh–Ritz extraction; sorted by decreasing modulus.
///
/// Convergence: every wanted value, mapped by `to_lambda` to the eigenvalue of the original
/// problem, lies within `1e-13 |λ| + 100 p ε μ_max / |μ|²` of a value of the previous
/// iteration (the second term is the accuracy that rounding in the operator allows for a value
/// far below the dominant one, μ_max, e.g. next to exact zero modes), in three consecutive
/// iterations (compared as sets, so that near-equal values may swap places). Values with
/// |λ| ≤ `zero_level` (numerically zero next to the shift) only need to stay below it: defective
/// zero eigenvalues — free bodies in the first-order system — have Ritz values that converge
/// only like 1/iteration.
fn subspace_iteration(
    n: usize,
    k: usize,
    op: &mut dyn FnMut(&[f64], &mut [f64]),
    to_lambda: &dyn Fn(Complex<f64>) -> Complex<f64>,
    zero_level: f64,
) -> Result<Subspace, ModesError> {
    const MAX_ITERATIONS: usize = 2000;
    const TOL: f64 = 1e-13;
    if k == 0 {
        return Ok(Subspace {
            values: Vec::new(),
            q: Vec::new(),
            h: DMatrix::zeros(0, 0),
        });
    }
    let p = (2 * k).max(k + 10).min(n);
    let k = k.min(p);
    let mut q = start_block(n, p);
    orthonormalise(&mut q, n, p);
    let mut y = vec![0.0; n * p];
    let mut prev: Vec<Complex<f64>> = Vec::new();
    let mut settled = 0;
    let mut change = f64::INFINITY;
    for it in 0..MAX_ITERATIONS {
        for j in 0..p {
            op(&q[j * n..(j + 1) * n], &mut y[j * n..(j + 1) * n]);
        }
        // Rayleigh quotient H = Q^T Op Q.
        let mut h = DMatrix::zeros(p, p);
        for i in 0..p {
            let qi = &q[i * n..(i + 1) * n];
            for j in 0..p {
                h[(i, j)] = qi
                    .iter()
                    .zip(&y[j * n..(j + 1) * n])
                    .map(|(a, b)| a * b)
                    .sum::<f64>();
            }
        }
        let mut ritz = eigenvalues(h.clone())?;
        ritz.reverse();
        let lambdas: Vec<Complex<f64>> = ritz.iter().map(|&m| to_lambda(m)).collect();
        if !prev.is_empty() {
            let mu_max = ritz[0].norm();
            change = lambdas[..k]
                .iter()
                .zip(&ritz)
                .map(|(a, mu)| {
                    let d = prev
                        .iter()
                        .map(|b| (a - b).norm())
                        .fold(f64::INFINITY, f64::min);
                    // Attainable accuracy: Ritz values are exact to ~ p eps mu_max in mu, i.e.
                    // p eps mu_max / |mu|^2 in lambda.
                    let attainable = 100.0 * p as f64 * f64::EPSILON * mu_max / mu.norm_sqr();
                    let zero = if a.norm() <= zero_level {
                        zero_level
                    } else {
                        0.0
                    };
                    d / (TOL * a.norm() + attainable + zero)
                })
                .fold(0.0, f64::max);
            settled = if change <= 1.0 { settled + 1 } else { 0 };
            if settled >= 3 {
                ritz.truncate(k);
                return Ok(Subspace { values: ritz, q, h });
            }
        }
        prev = lambdas;
        std::mem::swap(&mut q, &mut y);
        orthonormalise(&mut q, n, p);
        if it + 1 == MAX_ITERATIONS {
            break;
        }
    }
    Err(ModesError::SubspaceNoConvergence {
        iterations: MAX_ITERATIONS,
        change,
    })
}

impl Modes {
    /// A printable report listing at most `count` entries per table.
    pub fn report(&self, count: usize) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "free spin coordinates removed: {}",
            self.spin_coordinates.len()
        );
        for c in &self.spin_coordinates {
            let a = c.axis_body;
            let _ = writeln!(
                s,
                "  {} (element {}), body axis ({:.4}, {:.4}, {:.4})",
                c.body, c.element, a[0], a[1], a[2]
            );
        }
        if self.lambda_abs_max.is_nan() {
            let _ = writeln!(
                s,
                "first-order eigenvalues: lowest {} of the full system ({} numerically zero)",
                self.full_eigenvalues.len(),
                self.full_zero_count
            );
        } else {
            let _ = writeln!(
                s,
                "first-order eigenvalues: {} (spin removed), {} (full, {} numerically zero)",
                self.eigenvalues.len(),
                self.full_eigenvalues.len(),
                self.full_zero_count
            );
        }
        if self.lambda_abs_max.is_nan() {
            let _ = writeln!(
                s,
                "min |lambda| = {:.6e} 1/s; lowest {} eigenvalues by shift-invert (spin not removed from \
                 the first-order values); max |lambda| and the stiffness ratio are not computed",
                self.lambda_abs_min,
                self.full_eigenvalues.len()
            );
        } else {
            let _ = writeln!(
                s,
                "min |lambda| = {:.6e} 1/s, max |lambda| = {:.6e} 1/s, stiffness ratio = {:.4e} (all non-zero, full: {:.4e})",
                self.lambda_abs_min,
                self.lambda_abs_max,
                self.stiffness_ratio,
                self.stiffness_ratio_all_nonzero
            );
        }
        let _ = writeln!(s, "max real part = {:.6e} 1/s", self.max_real_part);
        let _ = writeln!(
            s,
            "smallest |lambda|{}:",
            if self.lambda_abs_max.is_nan() {
                " (full system)"
            } else {
                " (spin removed)"
            }
        );
        let _ = writeln!(s, "  {:>14} {:>14} {:>14}", "|lambda|", "re", "im");
        for l in self.eigenvalues.iter().take(count) {
            let _ = writeln!(s, "  {:>14.6e} {:>14.6e} {:>14.6e}", l.norm(), l.re, l.im);
        }
        if !self.lambda_abs_max.is_nan() {
            let _ = writeln!(s, "largest |lambda|:");
            for l in self.eigenvalues.iter().rev().take(count) {
                let _ = writeln!(s, "  {:>14.6e} {:>14.6e} {:>14.6e}", l.norm(), l.re, l.im);
            }
        }
        let _ = writeln!(s, "oscillatory modes (lowest {count}):");
        let _ = writeln!(s, "  {:>12} {:>10}", "f Hz", "zeta");
        for m in self.oscillatory.iter().take(count) {
            let _ = writeln!(s, "  {:>12.4} {:>10.5}", m.frequency_hz, m.damping_ratio);
        }
        let _ = writeln!(
            s,
            "undamped natural frequencies (lowest {count}, spin removed), Hz:"
        );
        for (k, f) in self.undamped_frequencies_hz.iter().take(count).enumerate() {
            let _ = writeln!(s, "  {:>4} {:>12.4}", k + 1, f);
        }
        if let Some(f) = self
            .undamped_frequencies_hz
            .last()
            .filter(|_| !self.lambda_abs_max.is_nan())
        {
            let _ = writeln!(s, "highest undamped natural frequency: {f:.1} Hz");
        }
        s
    }
}

impl fmt::Display for Modes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report(10))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// 1-DOF oscillator: m = 2 kg on a ground bushing with k = 800 N/m and c = 8 Ns/m in x; the
    /// other five directions are stiff and undamped (decoupled: marker at the CoM, identity axes).
    const MSD: &str = r#"
[model]
name = "msd"
[[bodies]]
name = "mass"
mass = 2.0
position = [0.0, 0.0, 0.0]
inertia = { principal = [0.01, 0.02, 0.03] }
[[markers]]
name = "m"
body = "mass"
position = [0.0, 0.0, 0.0]
[[markers]]
name = "g"
body = "ground"
global_position = [0.0, 0.0, 0.0]
[[force_elements]]
type = "bushing"
name = "b"
marker_i = "m"
marker_j = "g"
stiffness = [800.0, 8.0e8, 8.0e8]
rot_stiffness = [1.0e7, 1.0e7, 1.0e7]
damping = [8.0, 0.0, 0.0]
"#;

    fn system(src: &str) -> (MbsSystem, Vec<f64>, Vec<f64>) {
        let m = sprung_model::from_toml_str(src, "msd.toml").unwrap();
        let c = Arc::new(crate::compile(&m).unwrap());
        let (r, v) = c.design_state();
        (MbsSystem::new(c), r, v)
    }

    #[test]
    fn one_dof_mass_spring_damper_matches_analytic_frequency_and_damping() {
        let (mut sys, r, v) = system(MSD);
        let modes = try_modal_analysis(&mut sys, 0.0, &r, &v).unwrap();
        // x direction: w0 = sqrt(k/m) = 20 rad/s, zeta = c / (2 sqrt(k m)) = 8 / 80 = 0.1.
        let (w0, zeta) = (20.0f64, 0.1f64);
        let m = modes.oscillatory[0];
        assert!(
            (m.frequency_hz - w0 / (2.0 * PI)).abs() < 1e-9 * w0,
            "{m:?}"
        );
        assert!((m.damping_ratio - zeta).abs() < 1e-10, "{m:?}");
        assert!((m.eigenvalue.re + zeta * w0).abs() < 1e-8);
        assert!((m.eigenvalue.im - w0 * (1.0 - zeta * zeta).sqrt()).abs() < 1e-8);
        assert!((modes.undamped_frequencies_hz[0] - w0 / (2.0 * PI)).abs() < 1e-9 * w0);
        // Other undamped frequencies: sqrt(8e8 / 2), sqrt(1e7 / I).
        let mut expect = [
            (4e8f64).sqrt(),
            (4e8f64).sqrt(),
            (1e9f64).sqrt(),
            (5e8f64).sqrt(),
            (1e7f64 / 0.03).sqrt(),
        ];
        expect.sort_by(f64::total_cmp);
        for (f, w) in modes.undamped_frequencies_hz[1..].iter().zip(expect) {
            assert!((f * 2.0 * PI - w).abs() < 1e-7 * w, "{f} vs {w}");
        }
        // Undamped directions give purely imaginary pairs; stiffness ratio = max|l| / min|l|.
        assert_eq!(modes.eigenvalues.len(), 12);
        assert!(modes.spin_coordinates.is_empty());
        assert!(
            (modes.stiffness_ratio - (1e9f64).sqrt() / w0).abs() < 1e-6 * modes.stiffness_ratio
        );
        assert!(
            modes.max_real_part.abs() < 1e-6,
            "undamped modes have Re = 0: {}",
            modes.max_real_part
        );
        assert!(modes.report(5).contains("stiffness ratio"));
    }

    #[test]
    fn free_spin_axis_is_removed_structurally() {
        // Same body, but the bushing leaves the rotation about local z free (spin_axis) with drag.
        let src = MSD.replace("rot_stiffness = [1.0e7, 1.0e7, 1.0e7]", "rot_stiffness = [1.0e7, 1.0e7, 0.0]\nrot_damping = [0.0, 0.0, 0.06]\nspin_axis = \"z\"");
        let (mut sys, r, v) = system(&src);
        let modes = try_modal_analysis(&mut sys, 0.0, &r, &v).unwrap();
        assert_eq!(modes.spin_coordinates.len(), 1);
        assert_eq!(modes.eigenvalues.len(), 10);
        assert_eq!(modes.full_eigenvalues.len(), 12);
        // Full spectrum: one zero (spin angle) and the drag mode -c/I = -0.06 / 0.03 = -2.
        assert_eq!(modes.full_zero_count, 1);
        assert!((modes.full_eigenvalues[1] - Complex::new(-2.0, 0.0)).norm() < 1e-9);
        // The reduced spectrum does not contain them; the smallest is the x oscillator.
        assert!((modes.lambda_abs_min - 20.0).abs() < 1e-8);
        assert!(modes.stiffness_ratio_all_nonzero > modes.stiffness_ratio);
        assert_eq!(modes.undamped_frequencies_hz.len(), 5);
    }

    #[test]
    fn wrong_state_size_is_an_error() {
        let (mut sys, r, v) = system(MSD);
        assert!(matches!(
            try_modal_analysis(&mut sys, 0.0, &r[1..], &v),
            Err(ModesError::Shape { .. })
        ));
        assert!(
            modal_analysis(&mut sys, 0.0, &r[1..], &v)
                .stiffness_ratio
                .is_nan()
        );
    }
}
