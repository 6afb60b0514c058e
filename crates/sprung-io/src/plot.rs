//! Time-series plots of simulation results (PNG or SVG), e.g. the 2×2 layout of document 000,
//! Bild 7: longitudinal wheel-centre displacement and bushing force for two axles, LSRT2 (solid)
//! against the reference (dashed).
//!
//! The DejaVu Sans font (Bitstream Vera / DejaVu license, see `assets/DejaVuSans-LICENSE.txt`) is
//! embedded in the crate and registered with plotters on first use under the family names
//! `sans-serif`, `serif` and `monospace`, so plots render on machines without system fonts.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::IoError;
use crate::metrics::Window;
use crate::plot_common::{
    Frame, PALETTE, PanelPainter, bounds, check_grid, draw_legend, drawing_error, image_size,
    plot_error, render,
};

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

/// Number of [`PALETTE`] colours the time-series plots cycle through.
const COLOURS: usize = 8;

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
    let err = plot_error(path);
    let (rows, cols) = match options.layout {
        Layout::Auto if panels.len() == 4 => (2, 2),
        Layout::Auto | Layout::Stacked => (panels.len(), 1),
        Layout::Grid { rows, cols } => (rows, cols),
    };
    check_grid(panels.len(), rows, cols).map_err(&err)?;
    if let Some(w) = options.window
        && (w.t0.is_nan() || w.t1.is_nan() || w.t0 >= w.t1)
    {
        return Err(err(format!(
            "invalid time window [{}, {}]; need t0 < t1",
            w.t0, w.t1
        )));
    }
    let size = image_size(options.size, (600, 400), rows, cols).map_err(&err)?;
    let buckets = (size.0 as usize / cols).max(50);
    let mut prepared = Vec::with_capacity(panels.len());
    for p in panels {
        prepared.push(prepare_panel(p, options.window, buckets).map_err(&err)?);
    }
    let frame = Frame {
        title,
        title_size: 26,
        rows,
        cols,
        size,
    };
    render(
        path,
        &frame,
        &Figure {
            panels: &prepared,
            x_label: options.x_label,
        },
    )
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
    let Some(((x0, x1), (y0, y1))) = bounds(&curves) else {
        return Err(format!(
            "panel '{}' has no finite data points{}",
            panel.title,
            if window.is_some() {
                " inside the time window"
            } else {
                ""
            }
        ));
    };
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

/// The prepared panels of one time-series figure and the label of the shared time axis.
struct Figure<'a> {
    panels: &'a [Prepared<'a>],
    x_label: &'a str,
}

impl PanelPainter for Figure<'_> {
    fn len(&self) -> usize {
        self.panels.len()
    }

    fn paint<DB: DrawingBackend>(
        &self,
        index: usize,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let e = drawing_error;
        let p = &self.panels[index];
        let mut chart = ChartBuilder::on(area)
            .caption(&p.panel.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(p.x_range.0..p.x_range.1, p.y_range.0..p.y_range.1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(p.panel.y_label.as_str())
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .light_line_style(RGBColor(235, 235, 235))
            .x_label_formatter(&|v| tick_label(*v, p.x_range))
            .y_label_formatter(&|v| tick_label(*v, p.y_range))
            .draw()
            .map_err(e)?;
        for (k, (s, pts)) in p.panel.series.iter().zip(&p.curves).enumerate() {
            let (r, g, b) = s.color.unwrap_or(PALETTE[k % COLOURS]);
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
        draw_legend(&mut chart, 15)
    }
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
