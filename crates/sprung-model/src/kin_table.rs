//! Kinematic tables: the poses of a suspension corner's bodies relative to a parent body as
//! functions of one or two coordinates (wheel travel; rack travel at a steered corner).
//!
//! Document 004 (`../shared/seeds/004_bf53df81c0e560f5.txt`, sec. 2.2) reduces a corner to
//! independent coordinates z_G (travel, steer) whose link poses follow from the loop closure.
//! In the kinematic variant (ideal joints in place of the link bushings) that closure does not
//! depend on the loads, so it can be solved once on a grid of the coordinates and stored: a
//! kinematic table. `sprung kinematics` writes one per corner from the full model
//! (the equilibrium of the corner's link bushings alone, without load); a body of the reduced
//! model follows it through a joint of type `tabulated` (`docs/joints.md`).
//!
//! ## File format (TOML, `docs/joints.md`, "Tabulated joints")
//!
//! ```toml
//! source = "sprung kinematics models/car_dw_ml.toml (corner front_L)"
//! parent = "chassis"          # the poses are in this body's design body frame
//!
//! [[axes]]                    # 1 or 2 axes; the first is the outer index of the grid
//! name = "travel"
//! unit = "m"
//! grid = [-0.09, -0.08, ..., 0.09]   # strictly increasing, >= 4 points
//!
//! [[bodies]]
//! name = "carrier_L"
//! position = [[x, y, z], ...]  # the body frame's origin in the parent's design frame, m
//! rotation = [[rx, ry, rz], ...] # rotation vector φ, rad: R_rel(c) = exp([φ]×) R_rel,0
//! ```
//!
//! `position` and `rotation` hold one entry per grid point, the first axis outer (entry
//! `i1 * n2 + i2` for the point (grid₁[i1], grid₂[i2])). `R_rel,0` is the body's design
//! orientation relative to the parent's (`R_p,0ᵀ R_b,0`), so φ is the rotation *away from the
//! design orientation*, in parent axes; at the design point (all coordinates 0) it is zero.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Problem};

/// A kinematic table (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KinematicTable {
    /// How the table was made (command, source model); free text.
    #[serde(default)]
    pub source: String,
    /// The body (name in the source model) in whose design frame the poses are given.
    pub parent: String,
    /// The coordinate axes: one or two.
    pub axes: Vec<TableAxis>,
    /// The tabulated bodies.
    pub bodies: Vec<TableBody>,
}

/// One coordinate axis of a [`KinematicTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableAxis {
    /// Name, e.g. `"travel"` or `"rack"`.
    pub name: String,
    /// Unit of the coordinate: `"m"` or `"rad"`.
    pub unit: String,
    /// What the coordinate measures (free text, e.g. "wheel-centre height above design, parent z").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Grid points, strictly increasing, at least 4.
    pub grid: Vec<f64>,
}

/// The poses of one body over the grid of a [`KinematicTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableBody {
    /// Body name (in the source model).
    pub name: String,
    /// Origin of the body frame in the parent's design body frame, m; one per grid point.
    pub position: Vec<[f64; 3]>,
    /// Rotation vector φ (rad, parent design axes) away from the design orientation relative to
    /// the parent: R_rel(c) = exp([φ]×) R_rel,0; one per grid point.
    pub rotation: Vec<[f64; 3]>,
}

/// Smallest number of grid points per axis (a cubic spline with not-a-knot or natural ends
/// needs four to be more than a parabola).
pub const MIN_GRID_POINTS: usize = 4;

impl KinematicTable {
    /// Number of grid points (product of the axes' lengths).
    pub fn points(&self) -> usize {
        self.axes.iter().map(|a| a.grid.len()).product()
    }

    /// The tabulated body named `name`.
    pub fn body(&self, name: &str) -> Option<&TableBody> {
        self.bodies.iter().find(|b| b.name == name)
    }

    /// Every problem of the table (empty when it is valid). `file` labels the messages.
    pub fn problems(&self, file: &str) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut push = |kind: &str, name: &str, msg: String, hint: &str| {
            let mut p = Problem::new(kind, name, msg, hint);
            p.file = file.to_string();
            out.push(p);
        };
        if self.axes.is_empty() || self.axes.len() > 2 {
            push(
                "kinematic table",
                &self.parent,
                format!("has {} axes; a table has 1 or 2", self.axes.len()),
                "give one [[axes]] entry per coordinate (travel, and rack travel at a steered corner)",
            );
        }
        for a in &self.axes {
            if a.unit != "m" && a.unit != "rad" {
                push(
                    "table axis",
                    &a.name,
                    format!("unit '{}' is not supported", a.unit),
                    "use \"m\" or \"rad\"",
                );
            }
            if a.grid.len() < MIN_GRID_POINTS {
                push(
                    "table axis",
                    &a.name,
                    format!("has {} grid points", a.grid.len()),
                    "give at least 4 grid points (cubic splines)",
                );
            }
            if let Some(k) = a.grid.iter().position(|g| !g.is_finite()) {
                push(
                    "table axis",
                    &a.name,
                    format!("grid point {k} is not finite"),
                    "give finite numbers",
                );
            } else if let Some(k) = a.grid.windows(2).position(|w| w[1] <= w[0]) {
                push(
                    "table axis",
                    &a.name,
                    format!(
                        "grid is not strictly increasing at points {k} and {} ({} then {})",
                        k + 1,
                        a.grid[k],
                        a.grid[k + 1]
                    ),
                    "sort the grid and remove repeated points",
                );
            }
        }
        if self.bodies.is_empty() {
            push(
                "kinematic table",
                &self.parent,
                "has no [[bodies]]".to_string(),
                "tabulate at least one body",
            );
        }
        let n = self.points();
        for (i, b) in self.bodies.iter().enumerate() {
            if self.bodies[..i].iter().any(|o| o.name == b.name) {
                push(
                    "table body",
                    &b.name,
                    "is tabulated twice".to_string(),
                    "keep one [[bodies]] entry per body",
                );
            }
            for (what, v) in [("position", &b.position), ("rotation", &b.rotation)] {
                if v.len() != n {
                    push(
                        "table body",
                        &b.name,
                        format!("has {} {what} entries but the grid has {n} points", v.len()),
                        "give one entry per grid point, the first axis outer",
                    );
                } else if let Some(k) = v.iter().position(|p| p.iter().any(|x| !x.is_finite())) {
                    push(
                        "table body",
                        &b.name,
                        format!("{what} entry {k} is not finite"),
                        "regenerate the table (`sprung kinematics`)",
                    );
                }
            }
        }
        out
    }

    /// Parse TOML source; syntax errors carry line and column, validation errors list every problem.
    pub fn from_toml_str(src: &str, file: &str) -> Result<Self, ModelError> {
        let table: KinematicTable = toml::from_str(src).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| line_column(src, s.start))
                .unwrap_or((1, 1));
            ModelError::Syntax {
                file: file.to_string(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        let problems = table.problems(file);
        if problems.is_empty() {
            Ok(table)
        } else {
            Err(ModelError::Invalid {
                file: file.to_string(),
                problems,
            })
        }
    }

    /// Read and validate a table file.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let label = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: label.clone(),
            source,
        })?;
        Self::from_toml_str(&src, &label)
    }

    /// The mirror image in the y = 0 plane: positions as points, rotation vectors as axial
    /// vectors (`crate::rot::mirror_vec`, `mirror_pseudo`), the same coordinates.
    pub fn mirrored(&self) -> Self {
        let mut t = self.clone();
        for b in &mut t.bodies {
            for p in &mut b.position {
                *p = crate::rot::mirror_vec(p);
            }
            for r in &mut b.rotation {
                *r = crate::rot::mirror_pseudo(r);
            }
        }
        t
    }

    /// The table as TOML text.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a kinematic table serialises to TOML")
    }
}

/// Number of pose components of a table body: position (3, m) and rotation vector (3, rad).
pub const POSE_COMPONENTS: usize = 6;

/// A table body's pose as a spline in the table's coordinates ([`KinematicTable::spline`]).
///
/// Per component (position x, y, z in m, rotation vector φ x, y, z in rad; parent design axes)
/// the interpolant is the cubic spline with **not-a-knot** end conditions in 1D and its tensor
/// product (bicubic, C² in each coordinate) in 2D. Not-a-knot reproduces cubic polynomials
/// exactly and converges with O(h⁴) in the value, O(h³) in the first and O(h²) in the second
/// derivative up to the ends, without end slopes the table does not have (a natural end would
/// force f'' = 0 there and lose two orders near the ends).
///
/// Stored as Hermite data per grid node (f, ∂₁f, ∂₂f, ∂₁∂₂f): the tensor-product spline is a
/// bicubic polynomial in each cell and those 16 values at the cell's corners determine it, so
/// each evaluation is one bicubic Hermite patch (no allocation, no search beyond a bisection of
/// each axis). A spline holds six channels per body — several bodies on the same grid share one
/// ([`KinematicTable::spline_of`]), stored body by body with a node's rows contiguous, so that
/// one basis and one pass over the cell's node rows per body evaluate all of them
/// ([`TableSpline::basis_at`], [`TableSpline::eval_slots`]).
///
/// **Outside the grid** the spline continues linearly in each coordinate that left the range
/// (value and slope of the end, second derivative 0) and records the excursion: the smallest and
/// largest coordinate reached per axis ([`TableSpline::excursion`]), read by the run after a
/// simulation (`sprung run` warns). The record is shared by every user of the spline (relaxed
/// atomics, written only on the out-of-range branch).
#[derive(Debug)]
pub struct TableSpline {
    /// Grid per axis (1 or 2 axes; a 1D table has a single-point second axis internally).
    grid: [Vec<f64>; 2],
    dims: usize,
    /// Number of functions (channels; six per tabulated body).
    channels: usize,
    /// Hermite node data in blocks of six channels (one body's; [`POSE_COMPONENTS`]), each
    /// block row-major over the node rows: `node[(blk * rows + r) * 6 + m]` for channel
    /// `6 blk + m` and node row `r = (i1 * n2 + i2) * 4 + k`, k: f, ∂₁f, ∂₂f, ∂₁∂₂f
    /// (`rows = 4 n1 n2`): a node's four rows of one body are contiguous ([`NODE_ROWS`]
    /// values, one bounds check per node and body in [`TableSpline::eval_slots`]).
    node: Vec<f64>,
    /// Values of one channel block of `node` (`rows` × six).
    block: usize,
    /// Per axis: the smallest and largest coordinate evaluated outside the grid (f64 bits;
    /// +∞ / −∞ while in range).
    seen: [[std::sync::atomic::AtomicU64; 2]; 2],
    /// Per axis: the cell of the last search, where the next one starts
    /// ([`TableSpline::basis`]; a hint only: every cell it can hold gives the same result).
    cell: [std::sync::atomic::AtomicUsize; 2],
}

impl Clone for TableSpline {
    fn clone(&self) -> Self {
        use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
        let c = |a: &AtomicU64| AtomicU64::new(a.load(Relaxed));
        let i = |a: &AtomicUsize| AtomicUsize::new(a.load(Relaxed));
        Self {
            grid: self.grid.clone(),
            dims: self.dims,
            channels: self.channels,
            node: self.node.clone(),
            block: self.block,
            seen: [
                [c(&self.seen[0][0]), c(&self.seen[0][1])],
                [c(&self.seen[1][0]), c(&self.seen[1][1])],
            ],
            cell: [i(&self.cell[0]), i(&self.cell[1])],
        }
    }
}

/// Value and derivatives of the six pose components at one point ([`TableSpline::eval`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplineEval {
    /// Position (m) and rotation vector (rad), parent design axes.
    pub value: [f64; POSE_COMPONENTS],
    /// ∂/∂c_k per axis k (entries for a missing second axis are 0).
    pub d1: [[f64; POSE_COMPONENTS]; 2],
    /// ∂²/∂c_k∂c_l (symmetric; entries of a missing second axis are 0).
    pub d2: [[[f64; POSE_COMPONENTS]; 2]; 2],
}

impl KinematicTable {
    /// The spline of body `entry` ([`TableSpline`]), `None` if the table has no such body. The
    /// table must be valid ([`KinematicTable::problems`] empty).
    pub fn spline(&self, entry: &str) -> Option<TableSpline> {
        self.spline_of(&[(self, entry)])
    }

    /// One spline for several bodies, possibly of other tables on the same grid
    /// (`(table, entry)` pairs; the grids must equal this table's): six channels per body in
    /// the order given, so that one evaluation ([`TableSpline::eval_slots`]) serves all of them
    /// with one basis and one pass over the nodes. Each body's channels are the spline its own
    /// table gives ([`KinematicTable::spline`]: the slope solves are per channel). `None` if an
    /// entry is missing.
    pub fn spline_of(&self, bodies: &[(&KinematicTable, &str)]) -> Option<TableSpline> {
        let n = self.points();
        let channels = POSE_COMPONENTS * bodies.len();
        let mut samples = vec![0.0; n * channels];
        for (j, (table, entry)) in bodies.iter().enumerate() {
            let body = table.body(entry)?;
            if table.points() != n {
                return None;
            }
            for (k, (p, r)) in body.position.iter().zip(&body.rotation).enumerate() {
                let o = k * channels + POSE_COMPONENTS * j;
                samples[o..o + POSE_COMPONENTS]
                    .copy_from_slice(&[p[0], p[1], p[2], r[0], r[1], r[2]]);
            }
        }
        let g1 = self.axes.first()?.grid.clone();
        let g2 = self
            .axes
            .get(1)
            .map_or_else(|| vec![0.0], |a| a.grid.clone());
        Some(TableSpline::with_channels(
            g1,
            g2,
            self.axes.len(),
            channels,
            &samples,
        ))
    }

    /// Whether `other` has the same axes grids (its bodies can share one spline with this
    /// table's, [`KinematicTable::spline_of`]).
    pub fn same_grid(&self, other: &KinematicTable) -> bool {
        self.axes.len() == other.axes.len()
            && self
                .axes
                .iter()
                .zip(&other.axes)
                .all(|(a, b)| a.grid == b.grid)
    }
}

impl TableSpline {
    /// The spline through `samples` on the grid `g1` × `g2` (`g2 = [0]` and `dims = 1` for one
    /// axis), samples with the first axis outer.
    pub fn new(
        g1: Vec<f64>,
        g2: Vec<f64>,
        dims: usize,
        samples: &[[f64; POSE_COMPONENTS]],
    ) -> Self {
        let flat: Vec<f64> = samples.iter().flatten().copied().collect();
        Self::with_channels(g1, g2, dims, POSE_COMPONENTS, &flat)
    }

    /// The spline of `channels` functions through `samples` (`samples[point * channels + ch]`,
    /// points with the first axis outer) on the grid `g1` × `g2` ([`TableSpline::new`]).
    pub fn with_channels(
        g1: Vec<f64>,
        g2: Vec<f64>,
        dims: usize,
        channels: usize,
        samples: &[f64],
    ) -> Self {
        use std::sync::atomic::AtomicU64;
        let (n1, n2) = (g1.len(), g2.len());
        let nc = channels;
        assert_eq!(samples.len(), n1 * n2 * nc, "one sample per grid point");
        assert!(
            nc.is_multiple_of(POSE_COMPONENTS),
            "six channels per tabulated body"
        );
        let s1 = SlopeSolver::new(&g1);
        let s2 = (dims == 2).then(|| SlopeSolver::new(&g2));
        let mut node = vec![0.0; 4 * n1 * n2 * nc];
        let row = |k: usize, d: usize| (4 * k + d) * nc..(4 * k + d + 1) * nc;
        for k in 0..n1 * n2 {
            node[row(k, 0)].copy_from_slice(&samples[k * nc..(k + 1) * nc]);
        }
        // ∂₂f along every row (fixed i1), then ∂₁f and ∂₁∂₂f along every column (fixed i2).
        if let Some(s2) = &s2 {
            for i1 in 0..n1 {
                let y: Vec<f64> = (0..n2)
                    .flat_map(|i2| node[row(i1 * n2 + i2, 0)].to_vec())
                    .collect();
                let d = s2.slopes(&y, nc);
                for i2 in 0..n2 {
                    node[row(i1 * n2 + i2, 2)].copy_from_slice(&d[i2 * nc..(i2 + 1) * nc]);
                }
            }
        }
        for i2 in 0..n2 {
            for (src, dst) in [(0, 1), (2, 3)] {
                if dims == 1 && src == 2 {
                    continue;
                }
                let y: Vec<f64> = (0..n1)
                    .flat_map(|i1| node[row(i1 * n2 + i2, src)].to_vec())
                    .collect();
                let d = s1.slopes(&y, nc);
                for i1 in 0..n1 {
                    node[row(i1 * n2 + i2, dst)].copy_from_slice(&d[i1 * nc..(i1 + 1) * nc]);
                }
            }
        }
        // Into blocks of six channels (`TableSpline::node`).
        let rows = 4 * n1 * n2;
        let mut blocks = vec![0.0; node.len()];
        for (blk, block) in blocks.chunks_exact_mut(rows * POSE_COMPONENTS).enumerate() {
            for (r, dst) in block.chunks_exact_mut(POSE_COMPONENTS).enumerate() {
                let src = r * nc + blk * POSE_COMPONENTS;
                dst.copy_from_slice(&node[src..src + POSE_COMPONENTS]);
            }
        }
        let inf = |x: f64| AtomicU64::new(x.to_bits());
        Self {
            grid: [g1, g2],
            dims,
            channels,
            node: blocks,
            block: rows * POSE_COMPONENTS,
            seen: [
                [inf(f64::INFINITY), inf(f64::NEG_INFINITY)],
                [inf(f64::INFINITY), inf(f64::NEG_INFINITY)],
            ],
            cell: Default::default(),
        }
    }

    /// Number of channels (six per tabulated body: position, rotation vector).
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Number of coordinates (1 or 2).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The spline's data as stored, for code generation (the model accelerator writes it into
    /// generated source and evaluates it as [`TableSpline::basis_into`] and
    /// [`TableSpline::eval_slots`] do): the grid per axis (a 1D table's second is `[0]`), the
    /// number of axes, the Hermite node data in blocks of six channels (`node[(blk * rows + r)
    /// * 6 + m]`, node row `r = (i1 * n2 + i2) * 4 + k`, k: f, ∂₁f, ∂₂f, ∂₁∂₂f) and the length
    /// of one block (`6 * rows`, `rows = 4 n1 n2`).
    pub fn raw(&self) -> (&[Vec<f64>; 2], usize, &[f64], usize) {
        (&self.grid, self.dims, &self.node, self.block)
    }

    /// The grid range of axis `k`.
    pub fn range(&self, k: usize) -> (f64, f64) {
        let g = &self.grid[k];
        (g[0], g[g.len() - 1])
    }

    /// The smallest and largest coordinate of axis `k` evaluated outside the grid since the
    /// spline was built (or [`TableSpline::reset_excursions`]): `None` while every evaluation
    /// was inside; a side never left reads ±∞ (min = +∞ means the lower end was never left).
    pub fn excursion(&self, k: usize) -> Option<(f64, f64)> {
        use std::sync::atomic::Ordering::Relaxed;
        let lo = f64::from_bits(self.seen[k][0].load(Relaxed));
        let hi = f64::from_bits(self.seen[k][1].load(Relaxed));
        let (a, b) = self.range(k);
        (lo < a || hi > b).then_some((lo, hi))
    }

    /// Forgets the excursions.
    pub fn reset_excursions(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        for s in &self.seen {
            s[0].store(f64::INFINITY.to_bits(), Relaxed);
            s[1].store(f64::NEG_INFINITY.to_bits(), Relaxed);
        }
    }

    #[cold]
    fn record(&self, k: usize, x: f64) {
        use std::sync::atomic::Ordering::Relaxed;
        let (lo, hi) = self.range(k);
        if x < lo {
            let _ = self.seen[k][0].fetch_update(Relaxed, Relaxed, |b| {
                (x < f64::from_bits(b)).then_some(x.to_bits())
            });
        } else if x > hi {
            let _ = self.seen[k][1].fetch_update(Relaxed, Relaxed, |b| {
                (x > f64::from_bits(b)).then_some(x.to_bits())
            });
        }
    }

    /// The cell of axis `k` containing `x` (clamped), the local coordinate's basis weights
    /// `w[order][hermite slot]` (slot 0, 1: values at the cell's ends, 2, 3: slopes) with the
    /// linear extension outside the grid folded in.
    ///
    /// The search starts from the last call's cell ([`TableSpline::cell`]): a caller that moves
    /// little between calls stays in it, and a bisection finds any other. Both give the last
    /// `i ≤ n − 2` with `g[i] ≤ x`, so the hint changes nothing but the cost.
    #[inline]
    fn basis(&self, k: usize, x: f64) -> (usize, [[f64; 4]; 3]) {
        use std::sync::atomic::Ordering::Relaxed;
        let g = &self.grid[k];
        let n = g.len();
        if n == 1 {
            // The missing second axis of a 1D table: the node values only.
            return (0, [[1.0, 0.0, 0.0, 0.0], [0.0; 4], [0.0; 4]]);
        }
        let (lo, hi) = (g[0], g[n - 1]);
        let (xc, outside) = if x < lo {
            self.record(k, x);
            (lo, x - lo)
        } else if x > hi {
            self.record(k, x);
            (hi, x - hi)
        } else {
            (x, 0.0)
        };
        // The last i with g[i] <= xc, at most n − 2: the hinted cell if it holds xc (its upper
        // end included for the last cell), else by bisection.
        let hint = self.cell[k].load(Relaxed);
        let i = match g.get(hint..hint + 2) {
            Some(&[a, b]) if a <= xc && (xc < b || hint + 2 == n) => hint,
            _ => {
                let i = g
                    .partition_point(|&gi| gi <= xc)
                    .saturating_sub(1)
                    .min(n - 2);
                self.cell[k].store(i, Relaxed);
                i
            }
        };
        let h = g[i + 1] - g[i];
        let t = (xc - g[i]) / h;
        // Cubic Hermite basis on [0, 1] and its derivatives (slopes scaled by h).
        let (t2, t3) = (t * t, t * t * t);
        let b0 = [
            2.0 * t3 - 3.0 * t2 + 1.0,
            -2.0 * t3 + 3.0 * t2,
            (t3 - 2.0 * t2 + t) * h,
            (t3 - t2) * h,
        ];
        let b1 = [
            (6.0 * t2 - 6.0 * t) / h,
            (-6.0 * t2 + 6.0 * t) / h,
            3.0 * t2 - 4.0 * t + 1.0,
            3.0 * t2 - 2.0 * t,
        ];
        let b2 = [
            (12.0 * t - 6.0) / (h * h),
            (-12.0 * t + 6.0) / (h * h),
            (6.0 * t - 4.0) / h,
            (6.0 * t - 2.0) / h,
        ];
        if outside == 0.0 {
            (i, [b0, b1, b2])
        } else {
            // f(x) = f(xc) + (x − xc) f'(xc): value, slope, no curvature.
            let v: [f64; 4] = std::array::from_fn(|s| b0[s] + outside * b1[s]);
            (i, [v, b1, [0.0; 4]])
        }
    }

    /// The evaluation weights at coordinates `c` (length [`TableSpline::dims`]; a missing
    /// second coordinate reads 0), with the second-derivative slots: [`TableSpline::basis_into`]
    /// into a new [`SplineBasis`].
    pub fn basis_at(&self, c: &[f64]) -> SplineBasis {
        let mut b = SplineBasis::default();
        self.basis_into(c, true, &mut b);
        b
    }

    /// The evaluation weights at coordinates `c` (length [`TableSpline::dims`]; a missing
    /// second coordinate reads 0) into `b`: where the cell's nodes are and, per axis and
    /// derivative order, the Hermite weights of the cell's rows along the axis (the linear
    /// extension outside the grid folded in; excursions recorded). The second-derivative
    /// weights only with `second` ([`TableSpline::eval_slots`] asks for them only then). `b` is
    /// scratch: every weight an evaluation reads is written (no allocation, no clearing).
    pub fn basis_into(&self, c: &[f64], second: bool, b: &mut SplineBasis) {
        b.dims = self.dims;
        b.second = second;
        let orders = if second { 3 } else { 2 };
        // Row r = 2 a + d of an axis: node (i + a), derivative d; its Hermite slot a (value)
        // or 2 + a (slope).
        let slot = |r: usize| r / 2 + 2 * (r % 2);
        let mut cells = [0; 2];
        for (k, (cell, wk)) in cells.iter_mut().zip(&mut b.w).enumerate().take(self.dims) {
            let (i, w) = self.basis(k, c[k]);
            *cell = i;
            for (wo, hermite) in wk.iter_mut().zip(&w).take(orders) {
                for (r, wr) in wo.iter_mut().enumerate() {
                    *wr = [hermite[slot(r)]; 2];
                }
            }
        }
        // Node (i1 + a, i2 + b) at a NB + b (NB = 1 in 1D, 2 in 2D).
        let [i1, i2] = cells;
        let (n2, nb) = (self.grid[1].len(), self.dims);
        for a in 0..2 {
            for bb in 0..nb {
                b.node[nb * a + bb] = 4 * ((i1 + a) * n2 + i2 + bb) * POSE_COMPONENTS;
            }
        }
    }

    /// Value and derivatives of the channels `chans` at the point of `b` ([`TableSpline::basis_into`])
    /// into `out[slot * stride + (ch − chans.start)]` for the slots of [`SPLINE_SLOTS`]: value,
    /// ∂/∂c1, ∂/∂c2 and, with `second` (`b` must have them), ∂²/∂c1², ∂²/∂c1∂c2, ∂²/∂c2² (left
    /// as they are without; a missing second axis's slots are written 0). Per body (six
    /// channels), the tensor product one axis at a time ([`TableSpline::contract`]). No
    /// allocation.
    pub fn eval_slots(
        &self,
        b: &SplineBasis,
        chans: std::ops::Range<usize>,
        second: bool,
        out: &mut [f64],
        stride: usize,
    ) {
        assert!(
            chans.start.is_multiple_of(POSE_COMPONENTS)
                && chans.len().is_multiple_of(POSE_COMPONENTS)
                && chans.end <= self.channels,
            "whole bodies' channels"
        );
        assert_eq!(b.dims, self.dims, "a basis of a spline with as many axes");
        assert!(
            !second || b.second,
            "a basis with the second-derivative weights"
        );
        match (self.dims, second) {
            (1, false) => self.contract::<2, 1, 1>(b, [0, 1], [2], chans, out, stride),
            (1, true) => self.contract::<3, 3, 1>(b, [0, 1, 3], [2, 4, 5], chans, out, stride),
            (_, false) => self.contract::<3, 0, 2>(b, [0, 1, 2], [], chans, out, stride),
            (_, true) => self.contract::<6, 0, 2>(b, [0, 1, 2, 3, 4, 5], [], chans, out, stride),
        }
    }

    /// The slots `slots` of [`TableSpline::eval_slots`] of a spline with `NB` = 1 (1D) or 2
    /// (2D) second-axis nodes per cell, and 0 in the slots `zeros`. Per body (six channels):
    /// in 2D first along the second axis, per first-axis row r = 2 a + dx (node i1 + a,
    /// derivative dx) and second-axis order o2, g = Σ w2[o2][2 b + dy] f(i1 + a, i2 + b)[dx + 2 dy];
    /// then along the first axis, slot s = (o1, o2): Σ_r w1[o1][r] g[o2][r] (in 1D over the
    /// node rows themselves). 44 multiply-adds per channel for the value and first
    /// derivatives, 72 with the second (48 and 96 for the 16 product weights per slot).
    #[inline(always)]
    fn contract<const S: usize, const Z: usize, const NB: usize>(
        &self,
        b: &SplineBasis,
        slots: [usize; S],
        zeros: [usize; Z],
        chans: std::ops::Range<usize>,
        out: &mut [f64],
        stride: usize,
    ) {
        const C: usize = POSE_COMPONENTS;
        // The second-axis orders the slots need (1 in 1D: the node rows).
        let o2n = if NB == 1 {
            1
        } else {
            slots
                .iter()
                .map(|&s| SLOT_ORDERS[s].1 + 1)
                .max()
                .unwrap_or(0)
        };
        let mul_add = |acc: &mut [f64; C], w: &[f64; 2], f: &[f64]| {
            // The weight as a pair: one load per pair of channels.
            for (x, fm) in acc.chunks_exact_mut(2).zip(f.chunks_exact(2)) {
                x[0] += w[0] * fm[0];
                x[1] += w[1] * fm[1];
            }
        };
        for blk in chans.start / C..chans.end / C {
            // The cell's nodes' rows (one bounds check each), node (a, b) at a NB + b.
            let node: [&[f64; NODE_ROWS]; 4] = std::array::from_fn(|k| {
                let s = blk * self.block + b.node[k.min(2 * NB - 1)];
                self.node[s..s + NODE_ROWS]
                    .try_into()
                    .expect("a node's rows")
            });
            let o = blk * C - chans.start;
            for o2 in 0..o2n {
                // Along the second axis: per first-axis row r = 2 a + dx, g[r] (1D: the node
                // rows themselves).
                let g: [[f64; C]; 4] = std::array::from_fn(|r| {
                    let (a, dx) = (r / 2, r % 2);
                    let mut acc = [0.0; C];
                    if NB == 1 {
                        acc.copy_from_slice(&node[a][dx * C..(dx + 1) * C]);
                    } else {
                        for (k, wk) in b.w[1][o2].iter().enumerate() {
                            let (bb, dy) = (k / 2, k % 2);
                            let row = (dx + 2 * dy) * C;
                            mul_add(&mut acc, wk, &node[2 * a + bb][row..row + C]);
                        }
                    }
                    acc
                });
                // Along the first axis: the slots of this second-axis order.
                for s in slots {
                    let (o1, so2) = SLOT_ORDERS[s];
                    if so2 != o2 {
                        continue;
                    }
                    let mut acc = [0.0; C];
                    for (wr, gr) in b.w[0][o1].iter().zip(&g) {
                        mul_add(&mut acc, wr, gr);
                    }
                    out[s * stride + o..s * stride + o + C].copy_from_slice(&acc);
                }
            }
            for s in zeros {
                out[s * stride + o..s * stride + o + C].copy_from_slice(&[0.0; C]);
            }
        }
    }

    /// Value, first and second derivatives of the six components at coordinates `c` (length
    /// [`TableSpline::dims`]; a missing second coordinate reads 0) of a six-channel spline
    /// ([`TableSpline::eval_body`] for one body of a shared spline). No allocation.
    pub fn eval(&self, c: &[f64]) -> SplineEval {
        self.eval_body(c, 0, true)
    }

    /// Value and first derivatives alone (`d2` left 0): [`TableSpline::eval`] without the
    /// second-derivative contractions (a caller that needs no velocity-product terms, e.g. a
    /// massless follower's pose). The values and first derivatives are `eval`'s bit for bit.
    pub fn eval_first(&self, c: &[f64]) -> SplineEval {
        self.eval_body(c, 0, false)
    }

    /// [`TableSpline::eval`] (`second`) or [`TableSpline::eval_first`] of the six channels
    /// from `offset` (one body of a shared spline, [`KinematicTable::spline_of`]).
    pub fn eval_body(&self, c: &[f64], offset: usize, second: bool) -> SplineEval {
        let mut buf = [0.0; SPLINE_SLOTS * POSE_COMPONENTS];
        let b = self.basis_at(c);
        self.eval_slots(
            &b,
            offset..offset + POSE_COMPONENTS,
            second,
            &mut buf,
            POSE_COMPONENTS,
        );
        let g = |s: usize| -> [f64; POSE_COMPONENTS] {
            std::array::from_fn(|m| buf[s * POSE_COMPONENTS + m])
        };
        let d01 = g(4);
        SplineEval {
            value: g(0),
            d1: [g(1), g(2)],
            d2: [[g(3), d01], [d01, g(5)]],
        }
    }
}

/// Output slots of [`TableSpline::eval_slots`]: value, ∂/∂c1, ∂/∂c2, ∂²/∂c1², ∂²/∂c1∂c2,
/// ∂²/∂c2².
pub const SPLINE_SLOTS: usize = 6;

/// The derivative orders (∂c1, ∂c2) of each output slot of [`TableSpline::eval_slots`].
const SLOT_ORDERS: [(usize, usize); SPLINE_SLOTS] =
    [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)];

/// Values of a node's rows in a channel block: f, ∂₁f, ∂₂f, ∂₁∂₂f of six channels
/// ([`TableSpline::node`]).
const NODE_ROWS: usize = 4 * POSE_COMPONENTS;

/// The evaluation weights of a [`TableSpline`] at one point ([`TableSpline::basis_into`]);
/// `Default` is an empty one to fill.
#[derive(Debug, Clone, Copy, Default)]
pub struct SplineBasis {
    /// Start of the rows of the cell's nodes within a channel block ([`TableSpline::node`]):
    /// node (i1 + a, i2 + b) at a NB + b (NB = 1 in 1D, 2 in 2D).
    node: [usize; 4],
    /// Per axis and derivative order, the Hermite weight of each of the cell's rows along the
    /// axis, row r = 2 a + d (node i + a, derivative d); each weight twice (a pair of SIMD
    /// lanes, for two channels at a time in the contraction). Only the axes and orders of the
    /// last [`TableSpline::basis_into`] are current.
    w: [[[[f64; 2]; 4]; 3]; 2],
    dims: usize,
    /// Whether the second-derivative slots are current.
    second: bool,
}

impl SplineBasis {
    /// Number of coordinates of the spline it was made for.
    pub fn dims(&self) -> usize {
        self.dims
    }
}

/// The node slopes of the not-a-knot cubic spline on a grid (the de Boor formulation: one
/// equation per node in the slopes, the end rows making the third derivative continuous at
/// the second and the last-but-one node), LU-factored once with partial pivoting.
struct SlopeSolver {
    n: usize,
    /// Row-major LU factors of the slope system and the row permutation.
    lu: Vec<f64>,
    perm: Vec<usize>,
    h: Vec<f64>,
}

impl SlopeSolver {
    fn new(g: &[f64]) -> Self {
        let n = g.len();
        let h: Vec<f64> = g.windows(2).map(|w| w[1] - w[0]).collect();
        let mut a = vec![0.0; n * n];
        // Interior: h_i m_{i−1} + 2 (h_{i−1} + h_i) m_i + h_{i−1} m_{i+1} = 3 (h_i δ_{i−1} + h_{i−1} δ_i).
        for i in 1..n - 1 {
            a[i * n + i - 1] = h[i];
            a[i * n + i] = 2.0 * (h[i - 1] + h[i]);
            a[i * n + i + 1] = h[i - 1];
        }
        // Not-a-knot ends.
        a[0] = h[1];
        a[1] = h[0] + h[1];
        let d = h[n - 2] + h[n - 3];
        a[(n - 1) * n + n - 2] = d;
        a[(n - 1) * n + n - 1] = h[n - 3];
        // LU with partial pivoting.
        let mut perm: Vec<usize> = (0..n).collect();
        for j in 0..n {
            let p = (j..n)
                .max_by(|&x, &y| a[x * n + j].abs().total_cmp(&a[y * n + j].abs()))
                .unwrap_or(j);
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
                perm.swap(j, p);
            }
            for i in j + 1..n {
                let f = a[i * n + j] / a[j * n + j];
                a[i * n + j] = f;
                for c in j + 1..n {
                    a[i * n + c] -= f * a[j * n + c];
                }
            }
        }
        Self { n, lu: a, perm, h }
    }

    /// The node slopes of the spline through `y` (`y[node * nc + ch]`, `nc` functions per node).
    fn slopes(&self, y: &[f64], nc: usize) -> Vec<f64> {
        let (n, h) = (self.n, &self.h);
        let delta: Vec<f64> = (0..(n - 1) * nc)
            .map(|k| {
                let (i, m) = (k / nc, k % nc);
                (y[(i + 1) * nc + m] - y[i * nc + m]) / h[i]
            })
            .collect();
        let dl = |i: usize, m: usize| delta[i * nc + m];
        let mut rhs = vec![0.0; n * nc];
        for i in 1..n - 1 {
            for m in 0..nc {
                rhs[i * nc + m] = 3.0 * (h[i] * dl(i - 1, m) + h[i - 1] * dl(i, m));
            }
        }
        let c = h[0] + h[1];
        let d = h[n - 2] + h[n - 3];
        for m in 0..nc {
            rhs[m] = ((h[0] + 2.0 * c) * h[1] * dl(0, m) + h[0] * h[0] * dl(1, m)) / c;
            rhs[(n - 1) * nc + m] = (h[n - 2] * h[n - 2] * dl(n - 3, m)
                + (2.0 * d + h[n - 2]) * h[n - 3] * dl(n - 2, m))
                / d;
        }
        let mut x: Vec<f64> = self
            .perm
            .iter()
            .flat_map(|&p| rhs[p * nc..(p + 1) * nc].to_vec())
            .collect();
        for i in 0..n {
            for k in 0..i {
                let l = self.lu[i * n + k];
                for m in 0..nc {
                    x[i * nc + m] -= l * x[k * nc + m];
                }
            }
        }
        for i in (0..n).rev() {
            for k in i + 1..n {
                let u = self.lu[i * n + k];
                for m in 0..nc {
                    x[i * nc + m] -= u * x[k * nc + m];
                }
            }
            let d = self.lu[i * n + i];
            for m in 0..nc {
                x[i * nc + m] /= d;
            }
        }
        x
    }
}

fn line_column(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> KinematicTable {
        let grid = vec![-0.02, -0.01, 0.0, 0.01, 0.02];
        KinematicTable {
            source: "test".into(),
            parent: "chassis".into(),
            axes: vec![TableAxis {
                name: "travel".into(),
                unit: "m".into(),
                description: String::new(),
                grid: grid.clone(),
            }],
            bodies: vec![TableBody {
                name: "carrier".into(),
                position: grid.iter().map(|s| [0.0, 0.7, 0.3 + s]).collect(),
                rotation: grid.iter().map(|s| [0.1 * s, 0.0, 0.0]).collect(),
            }],
        }
    }

    #[test]
    fn a_table_round_trips_through_toml() {
        let t = table();
        let back = KinematicTable::from_toml_str(&t.to_toml_string(), "t.toml").unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn bad_tables_list_every_problem() {
        let mut t = table();
        t.axes[0].grid[3] = t.axes[0].grid[2];
        t.bodies[0].rotation.pop();
        t.axes[0].unit = "mm".into();
        let err = KinematicTable::from_toml_str(&t.to_toml_string(), "t.toml").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("3 problems"), "{msg}");
        assert!(
            msg.contains("not strictly increasing at points 2 and 3"),
            "{msg}"
        );
        assert!(
            msg.contains("has 4 rotation entries but the grid has 5 points"),
            "{msg}"
        );
        assert!(msg.contains("unit 'mm'"), "{msg}");
    }

    #[test]
    fn syntax_errors_are_located() {
        let src = "parent = \"chassis\"\naxes = []\nbodies = []\nextra = 1\n";
        let err = KinematicTable::from_toml_str(src, "t.toml").unwrap_err();
        assert!(err.to_string().starts_with("t.toml:4:"), "{err}");
    }

    /// A spline of f(c) (one function per component) on a uniform grid of n points per axis.
    fn spline_of(
        f: &dyn Fn(f64, f64) -> [f64; POSE_COMPONENTS],
        dims: usize,
        n: usize,
        (a, b): (f64, f64),
    ) -> TableSpline {
        let g: Vec<f64> = (0..n)
            .map(|k| a + (b - a) * k as f64 / (n - 1) as f64)
            .collect();
        let g2 = if dims == 2 { g.clone() } else { vec![0.0] };
        let samples: Vec<_> = g
            .iter()
            .flat_map(|&x| g2.iter().map(move |&y| (x, y)))
            .map(|(x, y)| f(x, y))
            .collect();
        TableSpline::new(g, g2, dims, &samples)
    }

    #[test]
    fn the_not_a_knot_spline_reproduces_cubics_exactly() {
        // 1D: a cubic; 2D: a bicubic product. Every component, value and derivatives.
        let p = |x: f64| 0.3 - 1.2 * x + 0.7 * x * x + 2.1 * x * x * x;
        let dp = |x: f64| -1.2 + 1.4 * x + 6.3 * x * x;
        let ddp = |x: f64| 1.4 + 12.6 * x;
        let q = |y: f64| 1.0 + 0.5 * y - 0.4 * y * y * y;
        let dq = |y: f64| 0.5 - 1.2 * y * y;
        let ddq = |y: f64| -2.4 * y;
        // A non-uniform grid.
        let g = vec![-1.0, -0.7, -0.1, 0.0, 0.35, 1.0];
        for dims in [1, 2] {
            let g2 = if dims == 2 { g.clone() } else { vec![0.0] };
            let f = |x: f64, y: f64| {
                let v = p(x) * if dims == 2 { q(y) } else { 1.0 };
                std::array::from_fn(|m| v * (m + 1) as f64)
            };
            let samples: Vec<_> = g
                .iter()
                .flat_map(|&x| g2.iter().map(move |&y| (x, y)))
                .map(|(x, y)| f(x, y))
                .collect();
            let s = TableSpline::new(g.clone(), g2.clone(), dims, &samples);
            for &(x, y) in &[(-0.93, 0.41), (0.2, -0.65), (0.999, 0.0), (-0.1, 0.35)] {
                let ev = s.eval(&[x, y][..dims]);
                let (qy, dqy, ddqy) = if dims == 2 {
                    (q(y), dq(y), ddq(y))
                } else {
                    (1.0, 0.0, 0.0)
                };
                for m in 0..POSE_COMPONENTS {
                    let k = (m + 1) as f64;
                    let want = [
                        p(x) * qy,
                        dp(x) * qy,
                        p(x) * dqy,
                        ddp(x) * qy,
                        dp(x) * dqy,
                        p(x) * ddqy,
                    ];
                    let got = [
                        ev.value[m],
                        ev.d1[0][m],
                        ev.d1[1][m],
                        ev.d2[0][0][m],
                        ev.d2[0][1][m],
                        ev.d2[1][1][m],
                    ];
                    for (w, g) in want.iter().zip(got) {
                        // Round-off of the slope solve and the Hermite sums: ≈ 1e-14.
                        assert!(
                            (k * w - g).abs() < 1e-12,
                            "dims {dims} ({x}, {y}): {w} vs {g}"
                        );
                    }
                }
                // Without the second derivatives: the same values and slopes to the bit.
                let first = s.eval_first(&[x, y][..dims]);
                assert_eq!((first.value, first.d1), (ev.value, ev.d1), "dims {dims}");
                assert_eq!(first.d2, [[[0.0; POSE_COMPONENTS]; 2]; 2]);
            }
        }
    }

    #[test]
    fn spline_errors_converge_with_h4_h3_h2() {
        // f = sin(2x) (1D) and sin(2x) cos(1.5 y) (2D) on [-1, 1]: halving h divides the value
        // error by ≈ 16, the first derivative's by ≈ 8, the second's by ≈ 4.
        for dims in [1usize, 2] {
            let cy = |y: f64| if dims == 2 { (1.5 * y).cos() } else { 1.0 };
            let f = |x: f64, y: f64| [(2.0 * x).sin() * cy(y); POSE_COMPONENTS];
            let mut prev: Option<[f64; 6]> = None;
            for n in [11, 21, 41] {
                let s = spline_of(&f, dims, n, (-1.0, 1.0));
                let mut e = [0.0f64; 6];
                let m = 61;
                for i in 0..m {
                    for j in 0..(if dims == 2 { m } else { 1 }) {
                        let x = -1.0 + 2.0 * (i as f64 + 0.37) / m as f64;
                        let y = -1.0 + 2.0 * (j as f64 + 0.61) / m as f64;
                        let ev = s.eval(&[x, y][..dims]);
                        let (sx, cx) = (2.0 * x).sin_cos();
                        let (c, dc, ddc) = if dims == 2 {
                            let (sy, cyv) = (1.5 * y).sin_cos();
                            (cyv, -1.5 * sy, -2.25 * cyv)
                        } else {
                            (1.0, 0.0, 0.0)
                        };
                        let want = [
                            sx * c,
                            2.0 * cx * c,
                            sx * dc,
                            -4.0 * sx * c,
                            2.0 * cx * dc,
                            sx * ddc,
                        ];
                        let got = [
                            ev.value[4],
                            ev.d1[0][4],
                            ev.d1[1][4],
                            ev.d2[0][0][4],
                            ev.d2[0][1][4],
                            ev.d2[1][1][4],
                        ];
                        for k in 0..6 {
                            e[k] = e[k].max((want[k] - got[k]).abs());
                        }
                    }
                }
                if let Some(p) = prev {
                    // Orders 4, 3, 3 (∂₂ in 2D), 2, 2, 2: the error falls at least by 2^order
                    // per halving (less 25 %; measured ratios are printed).
                    let orders = [4, 3, 3, 2, 2, 2];
                    for k in 0..(if dims == 2 { 6 } else { 4 }) {
                        if dims == 1 && k == 2 {
                            continue;
                        }
                        let ratio = p[k] / e[k];
                        let want = 2f64.powi(orders[k]);
                        println!("dims {dims} n {n} quantity {k}: ratio {ratio:.2} (2^p = {want})");
                        assert!(
                            ratio > 0.75 * want,
                            "dims {dims} n {n} quantity {k}: ratio {ratio} (errors {p:?} -> {e:?})"
                        );
                    }
                }
                prev = Some(e);
            }
        }
    }

    #[test]
    fn outside_the_grid_the_spline_continues_linearly_and_records_the_excursion() {
        let f = |x: f64, y: f64| [(2.0 * x).sin() + 0.3 * y * y; POSE_COMPONENTS];
        for dims in [1usize, 2] {
            let s = spline_of(&f, dims, 11, (-1.0, 1.0));
            assert_eq!(s.excursion(0), None);
            let inside = s.eval(&[1.0, 0.2][..dims]);
            assert_eq!(s.excursion(0), None, "the end itself is inside");
            let out = s.eval(&[1.3, 0.2][..dims]);
            let lin = inside.value[0] + 0.3 * inside.d1[0][0];
            assert!(
                (out.value[0] - lin).abs() < 1e-15,
                "{} vs {lin}",
                out.value[0]
            );
            assert_eq!(out.d1[0][0], inside.d1[0][0]);
            assert_eq!(out.d2[0][0][0], 0.0);
            let _ = s.eval(&[1.1, 0.2][..dims]);
            let _ = s.eval(&[-1.05, 0.2][..dims]);
            assert_eq!(s.excursion(0), Some((-1.05, 1.3)));
            if dims == 2 {
                assert_eq!(s.excursion(1), None);
                let _ = s.eval(&[0.0, -2.0]);
                assert_eq!(s.excursion(1), Some((-2.0, f64::NEG_INFINITY)));
            }
            s.reset_excursions();
            assert_eq!(s.excursion(0), None);
        }
    }

    #[test]
    fn a_shared_spline_gives_each_body_its_own_spline_to_the_bit() {
        let mut t = table();
        let mut b = t.bodies[0].clone();
        b.name = "link".into();
        for (p, r) in b.position.iter_mut().zip(&mut b.rotation) {
            *p = [p[2] * p[2], -0.3 * p[1], 0.1 + p[2]];
            *r = [0.0, r[0] * r[0], -2.0 * r[0]];
        }
        t.bodies.push(b);
        let shared = t.spline_of(&[(&t, "link"), (&t, "carrier")]).unwrap();
        assert_eq!(shared.channels(), 12);
        for x in [-0.017, 0.0, 0.013, 0.02, 0.031] {
            let bs = shared.basis_at(&[x]);
            let mut all = [0.0; SPLINE_SLOTS * 12];
            shared.eval_slots(&bs, 0..6, true, &mut all, 12);
            shared.eval_slots(&bs, 6..12, false, &mut all[6..], 12);
            for (k, name) in ["link", "carrier"].iter().enumerate() {
                let own = t.spline(name).unwrap().eval(&[x]);
                assert_eq!(shared.eval_body(&[x], 6 * k, true), own);
                for m in 0..6 {
                    assert_eq!(all[6 * k + m], own.value[m]);
                    assert_eq!(all[12 + 6 * k + m], own.d1[0][m]);
                    if k == 0 {
                        assert_eq!(all[36 + m], own.d2[0][0][m]);
                    }
                }
            }
        }
    }

    #[test]
    fn the_cell_hint_and_a_first_derivative_basis_change_nothing() {
        // One spline carried through points that stay in a cell, jump, land on nodes and on
        // the ends, and leave the grid, against a new spline (no hint) per point; the basis
        // without the second-derivative weights gives the same value and slopes.
        let f = |x: f64, y: f64| [(2.0 * x).sin() + 0.3 * y * y * x; POSE_COMPONENTS];
        let points = [
            (0.05, 0.1),
            (0.06, 0.1),
            (0.2, -0.2),
            (-0.9, 0.9),
            (1.0, 1.0),
            (1.0, -1.0),
            (0.8, 0.4),
            (-1.0, -1.0),
            (1.2, -1.3),
            (0.0, 0.0),
            (-0.2, 0.6),
            (-0.2, 0.6),
        ];
        for dims in [1usize, 2] {
            let s = spline_of(&f, dims, 11, (-1.0, 1.0));
            let mut b = SplineBasis::default();
            for &(x, y) in &points {
                let c = &[x, y][..dims];
                let fresh = spline_of(&f, dims, 11, (-1.0, 1.0)).eval(c);
                assert_eq!(s.eval(c), fresh, "dims {dims} ({x}, {y})");
                s.basis_into(c, false, &mut b);
                let mut got = [0.0; SPLINE_SLOTS * POSE_COMPONENTS];
                s.eval_slots(&b, 0..POSE_COMPONENTS, false, &mut got, POSE_COMPONENTS);
                let want: Vec<f64> = [fresh.value, fresh.d1[0], fresh.d1[1]].concat();
                assert_eq!(
                    got[..3 * POSE_COMPONENTS],
                    want[..],
                    "dims {dims} ({x}, {y})"
                );
            }
        }
    }

    #[test]
    fn a_table_spline_interpolates_its_samples() {
        let t = table();
        let s = t.spline("carrier").unwrap();
        assert!(t.spline("nope").is_none());
        for (k, g) in t.axes[0].grid.iter().enumerate() {
            let ev = s.eval(&[*g]);
            let want = t.bodies[0].position[k];
            for (got, want) in ev.value.iter().zip(want) {
                assert!((got - want).abs() < 1e-15);
            }
            assert!((ev.d1[0][2] - 1.0).abs() < 1e-12, "{}", ev.d1[0][2]);
            assert!((ev.d1[0][3] - 0.1).abs() < 1e-12);
        }
    }
}
