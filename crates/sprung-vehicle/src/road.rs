//! Roads: height, normal and friction of the road surface at a point (issue 13, item 2;
//! `docs/roads-and-contact.md`).
//!
//! Every road is a height field z = h(x, y) in global coordinates (z up) with a friction
//! coefficient μ(x, y). The wheel–road contact ([`crate::contact`]) needs, at the (x, y) of the
//! wheel centre, the height h, its gradient ∇h (the upward unit normal is
//! n = (−h_x, −h_y, 1)/√(1 + h_x² + h_y²)) and its Hessian (for the analytic partials of the
//! contact with respect to the wheel position). All are analytic:
//!
//! * `plane`: h = offset + x tan(slope_x) + y tan(slope_y), or the plane through (0, 0, offset)
//!   with a given normal: h = offset − (n_x x + n_y y)/n_z;
//! * `profile`: h = offset + f(u) with u = (x − x₀) cos θ + (y − y₀) sin θ the distance along the
//!   path, f a C¹ piecewise-cubic Hermite interpolant of the (distance, elevation) table (slopes
//!   from central differences of the table, zero at both ends; constant beyond the ends);
//! * `grid`: bilinear interpolation of a regular grid of heights read from a CSV file (rows
//!   along y, columns along x), clamped to the edge values outside;
//! * `cleat`, `ramp`, `bump`: obstacles h = offset + f(u) across a crest line through `origin` at
//!   `angle_deg` from the y axis (u as for the profile, so u is the distance in the crossing
//!   direction): a cleat of square or half-cosine rounded edges, a linear ramp onto a plateau, and
//!   the (1 − cos) bump of document 002's angled bump crossing (`../shared/seeds/`, document 002,
//!   Fig. 5; the paper gives no dimensions: height, base length and angle are the model's).
//!
//! Friction: the road's μ, replaced inside each friction zone (axis-aligned rectangles or
//! half-planes; the last listed zone that contains the point wins). μ is piecewise constant: its
//! derivative is zero almost everywhere, so the contact partials ignore it.
//!
//! A [`Road`] is immutable and shared by all tires that roll on it (`Arc`); evaluation does not
//! allocate (enum dispatch).

use std::path::Path;

use sprung_model as sm;

/// Height, gradient, Hessian and friction of a road at a point.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Surface {
    /// Height h, m.
    pub height: f64,
    /// Gradient (∂h/∂x, ∂h/∂y), dimensionless.
    pub gradient: [f64; 2],
    /// Hessian (∂²h/∂x², ∂²h/∂x∂y, ∂²h/∂y²), 1/m.
    pub hessian: [f64; 3],
    /// Friction coefficient μ.
    pub mu: f64,
}

impl Surface {
    /// The upward unit normal (−h_x, −h_y, 1)/√(1 + h_x² + h_y²).
    pub fn normal(&self) -> [f64; 3] {
        let [hx, hy] = self.gradient;
        let l = (1.0 + hx * hx + hy * hy).sqrt();
        [-hx / l, -hy / l, 1.0 / l]
    }
}

/// A friction zone: the rectangle x_min ≤ x ≤ x_max, y_min ≤ y ≤ y_max (open bounds infinite).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionZone {
    /// Friction coefficient inside.
    pub mu: f64,
    /// Bounds (x_min, x_max, y_min, y_max), m; ±∞ for open sides.
    pub bounds: [f64; 4],
}

impl FrictionZone {
    /// Whether (x, y) lies in the zone.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        let [x0, x1, y0, y1] = self.bounds;
        x >= x0 && x <= x1 && y >= y0 && y <= y1
    }
}

/// Cross-section f(u) of a road that varies only along one direction.
#[derive(Debug, Clone, PartialEq)]
pub enum Section {
    /// C¹ cubic Hermite table: knots u_i, values f_i, slopes m_i.
    Table {
        /// Distances, m (strictly increasing).
        u: Vec<f64>,
        /// Heights, m.
        f: Vec<f64>,
        /// Slopes at the knots.
        slope: Vec<f64>,
    },
    /// A cleat from u = 0 to u = `length`, `height` high; edges blended by half cosines over
    /// `edge` (0: square edges, a step in height).
    Cleat {
        /// Height, m.
        height: f64,
        /// Width across the crest line, m.
        length: f64,
        /// Horizontal length of each rounded edge, m.
        edge: f64,
    },
    /// A ramp rising by `height` over [0, `length`], then a plateau of `plateau` (∞: endless)
    /// and a falling ramp of the same length.
    Ramp {
        /// Height, m.
        height: f64,
        /// Horizontal length of the incline, m.
        length: f64,
        /// Plateau length, m (∞ for none).
        plateau: f64,
    },
    /// f = height (1 + cos(2π u / length))/2 for |u| ≤ length/2.
    Bump {
        /// Height, m.
        height: f64,
        /// Base length, m.
        length: f64,
    },
}

impl Section {
    /// (f, f′, f″) at u.
    pub fn eval(&self, u: f64) -> [f64; 3] {
        match self {
            Section::Table { u: knots, f, slope } => table(knots, f, slope, u),
            Section::Cleat {
                height,
                length,
                edge,
            } => {
                if u < 0.0 || u > *length {
                    [0.0, 0.0, 0.0]
                } else if *edge > 0.0 && u < *edge {
                    half_cosine(*height, *edge, u)
                } else if *edge > 0.0 && u > length - edge {
                    let [f, d, dd] = half_cosine(*height, *edge, length - u);
                    [f, -d, dd]
                } else {
                    [*height, 0.0, 0.0]
                }
            }
            Section::Ramp {
                height,
                length,
                plateau,
            } => {
                let slope = height / length;
                if u <= 0.0 {
                    [0.0, 0.0, 0.0]
                } else if u < *length {
                    [slope * u, slope, 0.0]
                } else if u <= length + plateau {
                    [*height, 0.0, 0.0]
                } else if u < 2.0 * length + plateau {
                    let r = 2.0 * length + plateau - u;
                    [slope * r, -slope, 0.0]
                } else {
                    [0.0, 0.0, 0.0]
                }
            }
            Section::Bump { height, length } => {
                if u.abs() >= 0.5 * length {
                    [0.0, 0.0, 0.0]
                } else {
                    let k = 2.0 * std::f64::consts::PI / length;
                    let (s, c) = (k * u).sin_cos();
                    [
                        0.5 * height * (1.0 + c),
                        -0.5 * height * k * s,
                        -0.5 * height * k * k * c,
                    ]
                }
            }
        }
    }
}

/// Half-cosine blend rising from 0 at u = 0 to `h` at u = `l`: (f, f′, f″).
fn half_cosine(h: f64, l: f64, u: f64) -> [f64; 3] {
    let k = std::f64::consts::PI / l;
    let (s, c) = (k * u).sin_cos();
    [0.5 * h * (1.0 - c), 0.5 * h * k * s, 0.5 * h * k * k * c]
}

/// Cubic Hermite interpolation of a table (constant beyond the ends): (f, f′, f″).
fn table(u: &[f64], f: &[f64], m: &[f64], x: f64) -> [f64; 3] {
    let n = u.len();
    if x <= u[0] {
        return [f[0], 0.0, 0.0];
    }
    if x >= u[n - 1] {
        return [f[n - 1], 0.0, 0.0];
    }
    let i = u.partition_point(|v| *v <= x).clamp(1, n - 1) - 1;
    let h = u[i + 1] - u[i];
    let t = (x - u[i]) / h;
    let (t2, t3) = (t * t, t * t * t);
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    let d00 = (6.0 * t2 - 6.0 * t) / h;
    let d10 = 3.0 * t2 - 4.0 * t + 1.0;
    let d01 = (-6.0 * t2 + 6.0 * t) / h;
    let d11 = 3.0 * t2 - 2.0 * t;
    let dd00 = (12.0 * t - 6.0) / (h * h);
    let dd10 = (6.0 * t - 4.0) / h;
    let dd01 = (-12.0 * t + 6.0) / (h * h);
    let dd11 = (6.0 * t - 2.0) / h;
    [
        h00 * f[i] + h10 * h * m[i] + h01 * f[i + 1] + h11 * h * m[i + 1],
        d00 * f[i] + d10 * m[i] + d01 * f[i + 1] + d11 * m[i + 1],
        dd00 * f[i] + dd10 * m[i] + dd01 * f[i + 1] + dd11 * m[i + 1],
    ]
}

/// The shape of a road.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// h = offset + gx x + gy y.
    Plane {
        /// Height at the origin, m.
        offset: f64,
        /// Gradient (∂h/∂x, ∂h/∂y).
        gradient: [f64; 2],
    },
    /// h = offset + f(u), u = (x − x₀, y − y₀)·(cos θ, sin θ).
    Section {
        /// Base height, m.
        offset: f64,
        /// (x₀, y₀), m.
        origin: [f64; 2],
        /// (cos θ, sin θ).
        direction: [f64; 2],
        /// The cross-section.
        section: Section,
    },
    /// Bilinear height grid.
    Grid {
        /// Base height added to the grid values, m.
        offset: f64,
        /// (x, y) of grid point (0, 0), m.
        origin: [f64; 2],
        /// (dx, dy), m.
        spacing: [f64; 2],
        /// Number of points along x.
        nx: usize,
        /// Number of points along y.
        ny: usize,
        /// Heights, row-major: z[j * nx + i] at (x₀ + i dx, y₀ + j dy), m.
        z: Vec<f64>,
    },
}

/// A road surface (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Road {
    /// Name in the model file.
    pub name: String,
    /// The height field.
    pub shape: Shape,
    /// Friction coefficient outside the zones.
    pub mu: f64,
    /// Friction zones.
    pub zones: Vec<FrictionZone>,
}

/// A road that cannot be built (grid file unreadable or malformed).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("road '{road}': {message}")]
pub struct RoadError {
    /// Road name.
    pub road: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Road {
    /// A flat horizontal road at height 0 with friction `mu` (for tests and the tire rig).
    pub fn flat(mu: f64) -> Self {
        Self {
            name: "flat".into(),
            shape: Shape::Plane {
                offset: 0.0,
                gradient: [0.0, 0.0],
            },
            mu,
            zones: Vec::new(),
        }
    }

    /// Builds a road from its (validated) model declaration; a grid reads its CSV file (the
    /// path is resolved against the model file's folder when the model is loaded).
    pub fn from_model(r: &sm::Road) -> Result<Self, RoadError> {
        let err = |message: String| RoadError {
            road: r.name.clone(),
            message,
        };
        let origin = r.origin.unwrap_or([0.0, 0.0]);
        let theta = r.angle_deg.unwrap_or(0.0).to_radians();
        let direction = [theta.cos(), theta.sin()];
        let need = |v: Option<f64>, f: &str| {
            v.ok_or_else(|| err(format!("a road of type \"{}\" needs `{f}`", r.kind.name())))
        };
        let section = |section: Section| Shape::Section {
            offset: r.offset,
            origin,
            direction,
            section,
        };
        let shape = match r.kind {
            sm::RoadType::Plane => {
                let gradient = if let Some(nv) = r.normal {
                    [-nv[0] / nv[2], -nv[1] / nv[2]]
                } else {
                    [
                        r.slope_x_deg.unwrap_or(0.0).to_radians().tan(),
                        r.slope_y_deg.unwrap_or(0.0).to_radians().tan(),
                    ]
                };
                Shape::Plane {
                    offset: r.offset,
                    gradient,
                }
            }
            sm::RoadType::Profile => {
                let (Some(u), Some(f)) = (&r.distance, &r.elevation) else {
                    return Err(err("a profile needs `distance` and `elevation`".into()));
                };
                if u.len() != f.len() || u.len() < 2 || u.windows(2).any(|w| w[1] <= w[0]) {
                    return Err(err(
                        "`distance` and `elevation` must have the same length (≥ 2) and strictly increasing distances".into(),
                    ));
                }
                let n = u.len();
                let slope = (0..n)
                    .map(|i| {
                        if i == 0 || i == n - 1 {
                            0.0
                        } else {
                            (f[i + 1] - f[i - 1]) / (u[i + 1] - u[i - 1])
                        }
                    })
                    .collect();
                section(Section::Table {
                    u: u.clone(),
                    f: f.clone(),
                    slope,
                })
            }
            sm::RoadType::Grid => {
                let file = r
                    .file
                    .as_deref()
                    .ok_or_else(|| err("a grid needs `file`".into()))?;
                let spacing = r
                    .spacing
                    .ok_or_else(|| err("a grid needs `spacing`".into()))?;
                let (nx, ny, z) = read_grid(Path::new(file)).map_err(err)?;
                Shape::Grid {
                    offset: r.offset,
                    origin,
                    spacing,
                    nx,
                    ny,
                    z,
                }
            }
            sm::RoadType::Cleat => section(Section::Cleat {
                height: need(r.height, "height")?,
                length: need(r.length, "length")?,
                edge: r.edge_length.unwrap_or(0.0),
            }),
            sm::RoadType::Ramp => section(Section::Ramp {
                height: need(r.height, "height")?,
                length: need(r.length, "length")?,
                plateau: r.plateau_length.unwrap_or(f64::INFINITY),
            }),
            sm::RoadType::Bump => section(Section::Bump {
                height: need(r.height, "height")?,
                length: need(r.length, "length")?,
            }),
        };
        let zones = r
            .friction_zones
            .iter()
            .map(|z| FrictionZone {
                mu: z.mu,
                bounds: [
                    z.x_min.unwrap_or(f64::NEG_INFINITY),
                    z.x_max.unwrap_or(f64::INFINITY),
                    z.y_min.unwrap_or(f64::NEG_INFINITY),
                    z.y_max.unwrap_or(f64::INFINITY),
                ],
            })
            .collect();
        Ok(Self {
            name: r.name.clone(),
            shape,
            mu: r.mu,
            zones,
        })
    }

    /// Friction coefficient at (x, y).
    pub fn mu(&self, x: f64, y: f64) -> f64 {
        self.zones
            .iter()
            .rev()
            .find(|z| z.contains(x, y))
            .map_or(self.mu, |z| z.mu)
    }

    /// Height, gradient, Hessian and μ at (x, y). Does not allocate.
    pub fn surface(&self, x: f64, y: f64) -> Surface {
        let mu = self.mu(x, y);
        match &self.shape {
            Shape::Plane { offset, gradient } => Surface {
                height: offset + gradient[0] * x + gradient[1] * y,
                gradient: *gradient,
                hessian: [0.0; 3],
                mu,
            },
            Shape::Section {
                offset,
                origin,
                direction: [c, s],
                section,
            } => {
                let u = (x - origin[0]) * c + (y - origin[1]) * s;
                let [f, d, dd] = section.eval(u);
                Surface {
                    height: offset + f,
                    gradient: [d * c, d * s],
                    hessian: [dd * c * c, dd * c * s, dd * s * s],
                    mu,
                }
            }
            Shape::Grid {
                offset,
                origin,
                spacing,
                nx,
                ny,
                z,
            } => {
                let (gx, ix, fx) = cell(x - origin[0], spacing[0], *nx);
                let (gy, iy, fy) = cell(y - origin[1], spacing[1], *ny);
                let at = |i: usize, j: usize| z[j * nx + i];
                let (i1, j1) = ((ix + 1).min(nx - 1), (iy + 1).min(ny - 1));
                let (z00, z10, z01, z11) = (at(ix, iy), at(i1, iy), at(ix, j1), at(i1, j1));
                let h = z00 * (1.0 - fx) * (1.0 - fy)
                    + z10 * fx * (1.0 - fy)
                    + z01 * (1.0 - fx) * fy
                    + z11 * fx * fy;
                // Derivatives inside the cell; zero along an axis clamped outside the grid.
                let dfx = gx / spacing[0];
                let dfy = gy / spacing[1];
                let hx = ((z10 - z00) * (1.0 - fy) + (z11 - z01) * fy) * dfx;
                let hy = ((z01 - z00) * (1.0 - fx) + (z11 - z10) * fx) * dfy;
                let hxy = (z11 - z10 - z01 + z00) * dfx * dfy;
                Surface {
                    height: offset + h,
                    gradient: [hx, hy],
                    hessian: [0.0, hxy, 0.0],
                    mu,
                }
            }
        }
    }
}

/// Grid cell of coordinate `d` (relative to the first point) with spacing `h` and `n` points:
/// (1 inside / 0 clamped, cell index, fraction in the cell).
fn cell(d: f64, h: f64, n: usize) -> (f64, usize, f64) {
    if n < 2 {
        return (0.0, 0, 0.0);
    }
    let t = d / h;
    if t <= 0.0 {
        (0.0, 0, 0.0)
    } else if t >= (n - 1) as f64 {
        (0.0, n - 2, 1.0)
    } else {
        let i = (t.floor() as usize).min(n - 2);
        (1.0, i, t - i as f64)
    }
}

/// Reads a height grid: one row per y value, comma- or semicolon-separated heights per x;
/// `#` comment lines and blank lines skipped. Errors name the file and line.
pub fn read_grid(path: &Path) -> Result<(usize, usize, Vec<f64>), String> {
    let file = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the height grid {file} ({e})"))?;
    let mut z = Vec::new();
    let mut nx = 0;
    let mut ny = 0;
    for (ln, line) in text.lines().enumerate() {
        let l = line.trim().trim_start_matches('\u{feff}');
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut count = 0;
        for field in l.split([',', ';']) {
            let f = field.trim();
            let v: f64 = f.parse().map_err(|_| {
                format!(
                    "{file}:{}: '{f}' is not a number (the grid file holds heights in m only, no header)",
                    ln + 1
                )
            })?;
            if !v.is_finite() {
                return Err(format!("{file}:{}: non-finite height '{f}'", ln + 1));
            }
            z.push(v);
            count += 1;
        }
        if ny == 0 {
            nx = count;
        } else if count != nx {
            return Err(format!(
                "{file}:{}: {count} heights, the first row has {nx}; every row needs the same number",
                ln + 1
            ));
        }
        ny += 1;
    }
    if nx < 2 || ny < 2 {
        return Err(format!(
            "{file}: the grid has {nx} x {ny} points; give at least 2 x 2"
        ));
    }
    Ok((nx, ny, z))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of h and ∇h against the analytic gradient and Hessian.
    fn check_derivatives(road: &Road, points: &[[f64; 2]]) {
        let e = 1e-6;
        for &[x, y] in points {
            let s = road.surface(x, y);
            let dx = |f: &dyn Fn(&Surface) -> f64| {
                (f(&road.surface(x + e, y)) - f(&road.surface(x - e, y))) / (2.0 * e)
            };
            let dy = |f: &dyn Fn(&Surface) -> f64| {
                (f(&road.surface(x, y + e)) - f(&road.surface(x, y - e))) / (2.0 * e)
            };
            let pairs = [
                (s.gradient[0], dx(&|s| s.height)),
                (s.gradient[1], dy(&|s| s.height)),
                (s.hessian[0], dx(&|s| s.gradient[0])),
                (s.hessian[1], dy(&|s| s.gradient[0])),
                (s.hessian[1], dx(&|s| s.gradient[1])),
                (s.hessian[2], dy(&|s| s.gradient[1])),
            ];
            for (k, (a, fd)) in pairs.iter().enumerate() {
                // Differences of smooth pieces: truncation (e² f‴) + round-off (ε h / e).
                assert!(
                    (a - fd).abs() < 1e-6 * (1.0 + a.abs()),
                    "{} at ({x}, {y}) entry {k}: analytic {a}, differenced {fd}",
                    road.name
                );
            }
        }
    }

    fn decl(src: &str) -> sm::Road {
        let m = sm::from_toml_str(
            &format!("[model]\nname = \"r\"\n[[roads]]\nname = \"r\"\n{src}"),
            "r.toml",
        )
        .unwrap();
        m.roads[0].clone()
    }

    #[test]
    fn plane_slopes_and_normal_agree() {
        let a = Road::from_model(&decl(
            "type = \"plane\"\nslope_x_deg = 5.710593137499643\noffset = 0.2",
        ))
        .unwrap();
        let b = Road::from_model(&decl(
            "type = \"plane\"\nnormal = [-0.1, 0.0, 1.0]\noffset = 0.2",
        ))
        .unwrap();
        for (x, y) in [(0.0, 0.0), (3.0, -2.0)] {
            let (sa, sb) = (a.surface(x, y), b.surface(x, y));
            assert!((sa.height - sb.height).abs() < 1e-12);
            assert!((sa.height - (0.2 + 0.1 * x)).abs() < 1e-12, "10 % slope");
            let n = sa.normal();
            assert!((n[0] + 0.1 / 1.01f64.sqrt()).abs() < 1e-12);
        }
    }

    #[test]
    fn sections_are_continuous_and_differentiable() {
        let roads = [
            Road::from_model(&decl("type = \"profile\"\ndistance = [0, 1, 2.5, 4]\nelevation = [0, 0.05, -0.02, 0.01]\nangle_deg = 30")).unwrap(),
            Road::from_model(&decl("type = \"cleat\"\nheight = 0.02\nlength = 0.1\nedge_length = 0.02\norigin = [1.0, 0.0]\nangle_deg = 10")).unwrap(),
            Road::from_model(&decl("type = \"ramp\"\nheight = 0.05\nlength = 0.5\nplateau_length = 1.0")).unwrap(),
            Road::from_model(&decl("type = \"bump\"\nheight = 0.08\nlength = 0.6\norigin = [2.0, 1.0]\nangle_deg = 45")).unwrap(),
        ];
        let pts = [
            [0.3, 0.1],
            [0.55, 0.7],
            [1.017, 0.0],
            [1.07, 0.02],
            [2.1, 1.05],
            [1.8, 1.1],
            [3.3, -0.4],
        ];
        for r in &roads {
            check_derivatives(r, &pts);
        }
        // The bump's crest is at its origin, at its height; the crest line runs at 45°.
        let b = &roads[3];
        assert!((b.surface(2.0, 1.0).height - 0.08).abs() < 1e-15);
        assert!((b.surface(2.0 - 0.5, 1.0 + 0.5).height - 0.08).abs() < 1e-12);
        // Table knots are interpolated exactly.
        let p = &roads[0];
        let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
        assert!((p.surface(2.5 * c, 2.5 * s).height + 0.02).abs() < 1e-12);
        // The square cleat is a step.
        let sq = Road::from_model(&decl("type = \"cleat\"\nheight = 0.02\nlength = 0.1")).unwrap();
        assert_eq!(sq.surface(-1e-9, 0.0).height, 0.0);
        assert_eq!(sq.surface(1e-9, 0.0).height, 0.02);
    }

    #[test]
    fn grid_is_bilinear_and_reads_its_file() {
        let dir = std::env::temp_dir().join(format!("sprung-road-grid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("g.csv");
        // h = 0.01 x + 0.02 y + 0.003 x y sampled on a 4 x 3 grid with spacing (0.5, 1.0):
        // bilinear interpolation reproduces it exactly.
        let mut s = String::from("# heights\n");
        for j in 0..3 {
            let row: Vec<String> = (0..4)
                .map(|i| {
                    let (x, y) = (0.5 * i as f64, j as f64);
                    format!("{}", 0.01 * x + 0.02 * y + 0.003 * x * y)
                })
                .collect();
            s.push_str(&row.join(","));
            s.push('\n');
        }
        std::fs::write(&f, s).unwrap();
        let r = Road::from_model(&decl(&format!(
            "type = \"grid\"\nfile = \"{}\"\nspacing = [0.5, 1.0]",
            f.display()
        )))
        .unwrap();
        for (x, y) in [(0.3, 0.4), (1.2, 1.7), (0.75, 0.5)] {
            let sf = r.surface(x, y);
            assert!((sf.height - (0.01 * x + 0.02 * y + 0.003 * x * y)).abs() < 1e-15);
            assert!((sf.gradient[0] - (0.01 + 0.003 * y)).abs() < 1e-14);
            assert!((sf.gradient[1] - (0.02 + 0.003 * x)).abs() < 1e-14);
            assert!((sf.hessian[1] - 0.003).abs() < 1e-13);
        }
        check_derivatives(&r, &[[0.3, 0.4], [1.2, 1.7]]);
        // Outside: the edge values, flat.
        assert_eq!(r.surface(-1.0, 0.0).gradient[0], 0.0);
        std::fs::write(&f, "0,1\n0,x\n").unwrap();
        let e = Road::from_model(&decl(&format!(
            "type = \"grid\"\nfile = \"{}\"\nspacing = [0.5, 1.0]",
            f.display()
        )))
        .unwrap_err()
        .to_string();
        assert!(e.contains("g.csv:2: 'x' is not a number"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn friction_zones_split_mu() {
        let r = Road::from_model(&decl(
            "type = \"plane\"\nmu = 0.9\nfriction_zones = [{ mu = 0.2, y_min = 0.0 }, { mu = 0.5, x_min = 10.0, x_max = 12.0 }]",
        ))
        .unwrap();
        assert_eq!(r.mu(0.0, -1.0), 0.9);
        assert_eq!(r.mu(0.0, 1.0), 0.2);
        assert_eq!(r.mu(11.0, 1.0), 0.5, "the last zone wins");
        assert_eq!(r.surface(11.0, -3.0).mu, 0.5);
    }
}
