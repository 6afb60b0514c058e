//! Time-series plots of simulation results (PNG or SVG), e.g. the 2×2 layout of document 000,
//! Bild 7: longitudinal wheel-centre displacement and bushing force for two axles, LSRT2 (solid)
//! against the reference (dashed).
//!
//! The DejaVu Sans font (Bitstream Vera / DejaVu license, see `assets/DejaVuSans-LICENSE.txt`) is
//! embedded in the crate and registered with plotters on first use under the family names
//! `sans-serif`, `serif` and `monospace`, so plots render on machines without system fonts.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::error::IoError;
use crate::metrics::Window;

static FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static FONT_INIT: OnceLock<Result<(), String>> = OnceLock::new();

/// Registers the embedded font (once per process); shared by all plot kinds of this crate.
pub(crate) fn ensure_font() -> Result<(), String> {
    FONT_INIT
        .get_or_init(|| {
            for family in ["sans-serif", "serif", "monospace"] {
                for style in [FontStyle::Normal, FontStyle::Bold] {
                    register_font(family, style, FONT_BYTES)
                        .map_err(|_| "the embedded DejaVu Sans font is invalid".to_string())?;
                }
            }
            Ok(())
        })
        .clone()
}

/// Line style of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineStyle {
    /// Continuous line.
    #[default]
    Solid,
    /// Dashed line.
    Dashed,
}

/// One curve: label, time points (s), values and style.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Time points in seconds (sorted).
    pub t: Vec<f64>,
    /// Values, one per time point.
    pub y: Vec<f64>,
    /// Line style.
    pub style: LineStyle,
    /// RGB colour; `None` picks from a default palette by position.
    pub color: Option<(u8, u8, u8)>,
}

impl Series {
    /// A series with the default colour.
    pub fn new(label: impl Into<String>, t: Vec<f64>, y: Vec<f64>, style: LineStyle) -> Self {
        Series {
            label: label.into(),
            t,
            y,
            style,
            color: None,
        }
    }

    /// A series from channel `channel` of a result set, each value multiplied by `scale` (e.g.
    /// `1e3` to plot metres as millimetres). Returns `None` if the channel does not exist.
    pub fn from_result(
        label: impl Into<String>,
        set: &crate::reader::ResultSet,
        channel: &str,
        scale: f64,
        style: LineStyle,
    ) -> Option<Self> {
        let y = set.column(channel)?.iter().map(|v| v * scale).collect();
        Some(Series::new(label, set.time.clone(), y, style))
    }

    /// Sets the colour.
    pub fn with_color(mut self, rgb: (u8, u8, u8)) -> Self {
        self.color = Some(rgb);
        self
    }
}

/// One diagram: title, y-axis label (include the unit, e.g. `"x_wheel [mm]"`) and its curves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panel {
    /// Diagram title.
    pub title: String,
    /// Y-axis label including the unit.
    pub y_label: String,
    /// Curves.
    pub series: Vec<Series>,
}

impl Panel {
    /// An empty panel.
    pub fn new(title: impl Into<String>, y_label: impl Into<String>) -> Self {
        Panel {
            title: title.into(),
            y_label: y_label.into(),
            series: Vec::new(),
        }
    }

    /// Adds a curve.
    pub fn with_series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }
}

/// Arrangement of the panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// 2×2 grid for exactly four panels, otherwise stacked.
    #[default]
    Auto,
    /// One column, panels stacked vertically.
    Stacked,
    /// `rows × cols` grid filled row by row.
    Grid {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
}

/// Options of [`plot_time_series_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotOptions {
    /// Panel arrangement.
    pub layout: Layout,
    /// Time window shown; `None` shows the full data range.
    pub window: Option<Window>,
    /// Image size in pixels; `None` chooses from the layout (600×400 px per panel).
    pub size: Option<(u32, u32)>,
    /// Label of the time axis.
    pub x_label: &'static str,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            layout: Layout::Auto,
            window: None,
            size: None,
            x_label: "time [s]",
        }
    }
}

const PALETTE: [(u8, u8, u8); 8] = [
    (0, 84, 159),    // blue
    (204, 7, 30),    // red
    (87, 171, 39),   // green
    (246, 168, 0),   // orange
    (97, 33, 88),    // purple
    (0, 152, 161),   // teal
    (100, 100, 100), // grey
    (0, 0, 0),       // black
];

/// Plots `panels` with default options (2×2 grid for four panels, stacked otherwise, full time
/// range) to `path`; `.png` gives a bitmap, `.svg` a vector graphic.
pub fn plot_time_series(
    path: impl AsRef<Path>,
    title: &str,
    panels: &[Panel],
) -> Result<(), IoError> {
    plot_time_series_with(path, title, panels, &PlotOptions::default())
}

/// Plots `panels` to `path` (`.png` or `.svg`) with explicit [`PlotOptions`].
pub fn plot_time_series_with(
    path: impl AsRef<Path>,
    title: &str,
    panels: &[Panel],
    options: &PlotOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let err = |message: String| IoError::Plot {
        path: path.to_path_buf(),
        message,
    };
    if panels.is_empty() {
        return Err(err("no panels given; pass at least one panel".into()));
    }
    let (rows, cols) = match options.layout {
        Layout::Auto if panels.len() == 4 => (2, 2),
        Layout::Auto | Layout::Stacked => (panels.len(), 1),
        Layout::Grid { rows, cols } => (rows, cols),
    };
    if rows * cols < panels.len() {
        return Err(err(format!(
            "a {rows}x{cols} grid has room for {} panels but {} were given; enlarge the grid",
            rows * cols,
            panels.len()
        )));
    }
    if let Some(w) = options.window
        && (w.t0.is_nan() || w.t1.is_nan() || w.t0 >= w.t1)
    {
        return Err(err(format!(
            "invalid time window [{}, {}]; need t0 < t1",
            w.t0, w.t1
        )));
    }
    let size = options
        .size
        .unwrap_or((600 * cols as u32, 400 * rows as u32 + 50));
    if size.0 < 100 || size.1 < 100 {
        return Err(err(format!(
            "image size {}x{} px is too small; use at least 100x100",
            size.0, size.1
        )));
    }
    let buckets = (size.0 as usize / cols).max(50);
    let mut prepared = Vec::with_capacity(panels.len());
    for p in panels {
        prepared.push(prepare_panel(p, options.window, buckets).map_err(err)?);
    }
    ensure_font().map_err(err)?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("png") => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, title, &prepared, rows, cols, options.x_label).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))
        }
        Some("svg") => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, title, &prepared, rows, cols, options.x_label).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))
        }
        _ => Err(err(
            "unknown image format; use the extension .png or .svg".into()
        )),
    }
}

/// A panel with its curves clipped to the window and the axis ranges computed.
struct Prepared<'a> {
    panel: &'a Panel,
    curves: Vec<Vec<(f64, f64)>>,
    x_range: (f64, f64),
    y_range: (f64, f64),
}

fn prepare_panel(
    panel: &Panel,
    window: Option<Window>,
    buckets: usize,
) -> Result<Prepared<'_>, String> {
    if panel.series.is_empty() {
        return Err(format!("panel '{}' has no series", panel.title));
    }
    let mut curves = Vec::with_capacity(panel.series.len());
    for s in &panel.series {
        if s.t.len() != s.y.len() {
            return Err(format!(
                "series '{}' of panel '{}' has {} time points but {} values",
                s.label,
                panel.title,
                s.t.len(),
                s.y.len()
            ));
        }
        let pts: Vec<(f64, f64)> =
            s.t.iter()
                .zip(&s.y)
                .map(|(&t, &y)| (t, y))
                .filter(|(t, y)| t.is_finite() && y.is_finite())
                .collect();
        curves.push(match window {
            Some(w) => clip(&pts, w.t0, w.t1),
            None => pts,
        });
    }
    let all = curves.iter().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(t, y) in all {
        x0 = x0.min(t);
        x1 = x1.max(t);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return Err(format!(
            "panel '{}' has no finite data points{}",
            panel.title,
            if window.is_some() {
                " inside the time window"
            } else {
                ""
            }
        ));
    }
    let x_range = match window {
        Some(w) if w.t0.is_finite() && w.t1.is_finite() => (w.t0, w.t1),
        _ => pad_degenerate(x0, x1),
    };
    for c in &mut curves {
        if c.len() > 4 * buckets {
            *c = decimate(c, x_range, buckets);
        }
    }
    let (y0, y1) = pad_degenerate(y0, y1);
    let pad = 0.05 * (y1 - y0);
    Ok(Prepared {
        panel,
        curves,
        x_range,
        y_range: (y0 - pad, y1 + pad),
    })
}

fn pad_degenerate(a: f64, b: f64) -> (f64, f64) {
    if b > a {
        (a, b)
    } else {
        let d = if a == 0.0 { 1.0 } else { 0.1 * a.abs() };
        (a - d, b + d)
    }
}

/// Min/max decimation for drawing: the time range is cut into `buckets` equal bins (about
/// one per pixel column) and each bin keeps its first, minimum, maximum and last point in time
/// order, so peaks survive while the point count drops to at most `4 * buckets`.
fn decimate(pts: &[(f64, f64)], x_range: (f64, f64), buckets: usize) -> Vec<(f64, f64)> {
    let span = x_range.1 - x_range.0;
    let bin = |t: f64| (((t - x_range.0) / span * buckets as f64) as usize).min(buckets - 1);
    let mut out = Vec::with_capacity(4 * buckets + 4);
    let mut start = 0;
    while start < pts.len() {
        let b = bin(pts[start].0);
        let mut end = start + 1;
        while end < pts.len() && bin(pts[end].0) == b {
            end += 1;
        }
        let seg = &pts[start..end];
        let (mut imin, mut imax) = (0, 0);
        for (k, p) in seg.iter().enumerate() {
            if p.1 < seg[imin].1 {
                imin = k;
            }
            if p.1 > seg[imax].1 {
                imax = k;
            }
        }
        let mut idx = [0, imin, imax, seg.len() - 1];
        idx.sort_unstable();
        for (j, &k) in idx.iter().enumerate() {
            if j == 0 || k != idx[j - 1] {
                out.push(seg[k]);
            }
        }
        start = end;
    }
    out
}

/// Keeps the points inside `[t0, t1]` and adds linearly interpolated points at the window edges.
fn clip(pts: &[(f64, f64)], t0: f64, t1: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len());
    for (k, &(t, y)) in pts.iter().enumerate() {
        if k > 0 {
            let (tp, yp) = pts[k - 1];
            for edge in [t0, t1] {
                if tp < edge && edge < t && edge.is_finite() {
                    out.push((edge, yp + (y - yp) * (edge - tp) / (t - tp)));
                }
            }
        }
        if t0 <= t && t <= t1 {
            out.push((t, y));
        }
    }
    out
}

/// Formats a tick value with as many decimals as the axis range needs (about ten ticks).
fn tick_label(v: f64, range: (f64, f64)) -> String {
    let step = (range.1 - range.0).abs() / 10.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        3
    };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        format!("{v:.2e}")
    } else {
        format!("{v:.decimals$}")
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Prepared<'_>],
    rows: usize,
    cols: usize,
    x_label: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let body = if title.is_empty() {
        root.clone()
    } else {
        root.titled(title, ("sans-serif", 26)).map_err(e)?
    };
    let areas = body.split_evenly((rows, cols));
    for (p, area) in panels.iter().zip(areas.iter()) {
        let mut chart = ChartBuilder::on(area)
            .caption(&p.panel.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(p.x_range.0..p.x_range.1, p.y_range.0..p.y_range.1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(p.panel.y_label.as_str())
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .light_line_style(RGBColor(235, 235, 235))
            .x_label_formatter(&|v| tick_label(*v, p.x_range))
            .y_label_formatter(&|v| tick_label(*v, p.y_range))
            .draw()
            .map_err(e)?;
        for (k, (s, pts)) in p.panel.series.iter().zip(&p.curves).enumerate() {
            let (r, g, b) = s.color.unwrap_or(PALETTE[k % PALETTE.len()]);
            let style = RGBColor(r, g, b).stroke_width(2);
            match s.style {
                LineStyle::Solid => chart
                    .draw_series(LineSeries::new(pts.iter().copied(), style))
                    .map_err(e)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style)),
                LineStyle::Dashed => chart
                    .draw_series(DashedLineSeries::new(pts.iter().copied(), 9, 6, style))
                    .map_err(e)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (9, 0)], style)
                            + PathElement::new(vec![(15, 0), (24, 0)], style)
                    }),
            };
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_extremes_and_order() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| {
                let t = i as f64 * 1e-3;
                (t, (t * 40.0).sin() + if i == 5_123 { 3.0 } else { 0.0 })
            })
            .collect();
        let d = decimate(&pts, (0.0, 9.999), 100);
        assert!(d.len() <= 400 && d.len() >= 200, "{}", d.len());
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(d.contains(&pts[5_123]));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
        let max = d.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        assert_eq!(max, pts[5_123].1);
    }

    #[test]
    fn clipping_interpolates_window_edges() {
        let pts = [(0.0, 0.0), (1.0, 10.0), (2.0, 20.0)];
        assert_eq!(clip(&pts, 0.5, 1.5), [(0.5, 5.0), (1.0, 10.0), (1.5, 15.0)]);
        assert_eq!(clip(&pts, 1.0, 3.0), [(1.0, 10.0), (2.0, 20.0)]);
    }

    #[test]
    fn tick_labels_follow_the_range() {
        assert_eq!(tick_label(-500.0, (-4500.0, 0.0)), "-500");
        assert_eq!(tick_label(5.5, (4.5, 7.5)), "5.5");
        assert_eq!(tick_label(-0.0012, (-0.008, 0.0)), "-0.0012");
        assert_eq!(tick_label(1e-17, (-1.0, 1.0)), "0.0");
    }
}
