//! Log-log line-and-marker plots (PNG or SVG), made for work-precision diagrams: one panel per
//! test problem, error on the y axis against computing time on the x axis, one polyline with
//! markers per method (the diagrams of Hairer & Wanner, *Solving ODEs II*, sec. IV.10, and of the
//! Test Set for IVP Solvers).
//!
//! Both axes are logarithmic (base 10). Points with a non-positive or non-finite coordinate
//! cannot be shown on a log axis and are skipped (a failed run is reported in the tables, not in
//! the figure). The embedded DejaVu Sans font (see [`crate::plot`]) is registered on first use so
//! the plots render on machines without system fonts.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::combinators::IntoLogRange;
use plotters::prelude::*;

use crate::error::IoError;
use crate::plot_common::{
    Frame, PanelPainter, bounds, check_grid, draw_legend, drawing_error, image_size, plot_error,
    render,
};

/// Marker drawn at every data point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Marker {
    /// Filled circle.
    #[default]
    Circle,
    /// Filled triangle.
    Triangle,
    /// Filled square.
    Square,
    /// Diagonal cross.
    Cross,
    /// No marker (line only).
    None,
}

impl Marker {
    /// The markers in the order used when a series does not choose one.
    pub const CYCLE: [Marker; 4] = [
        Marker::Circle,
        Marker::Triangle,
        Marker::Square,
        Marker::Cross,
    ];
}

/// One polyline: legend label, points `(x, y)` in drawing order, colour and marker.
#[derive(Debug, Clone, PartialEq)]
pub struct XySeries {
    /// Legend label.
    pub label: String,
    /// Points `(x, y)`, drawn in this order (both coordinates must be positive to be shown).
    pub points: Vec<(f64, f64)>,
    /// RGB colour; `None` picks from the default palette by position.
    pub color: Option<(u8, u8, u8)>,
    /// Marker; `None` picks from [`Marker::CYCLE`] by position.
    pub marker: Option<Marker>,
}

impl XySeries {
    /// A series with the default colour and marker.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        XySeries {
            label: label.into(),
            points,
            color: None,
            marker: None,
        }
    }

    /// Sets the colour.
    pub fn with_color(mut self, rgb: (u8, u8, u8)) -> Self {
        self.color = Some(rgb);
        self
    }

    /// Sets the marker.
    pub fn with_marker(mut self, marker: Marker) -> Self {
        self.marker = Some(marker);
        self
    }
}

/// One log-log diagram: title, axis labels (include units) and its series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct XyPanel {
    /// Diagram title.
    pub title: String,
    /// X-axis label, e.g. `"CPU time [ms]"`.
    pub x_label: String,
    /// Y-axis label, e.g. `"max. relative error at t_end"`.
    pub y_label: String,
    /// Series.
    pub series: Vec<XySeries>,
}

impl XyPanel {
    /// An empty panel.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        XyPanel {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
        }
    }

    /// Adds a series.
    pub fn with_series(mut self, series: XySeries) -> Self {
        self.series.push(series);
        self
    }
}

/// Options of [`plot_loglog`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XyOptions {
    /// Grid rows.
    pub rows: usize,
    /// Grid columns.
    pub cols: usize,
    /// Image size in pixels; `None`: 640×480 px per panel plus the title.
    pub size: Option<(u32, u32)>,
}

impl Default for XyOptions {
    fn default() -> Self {
        XyOptions {
            rows: 1,
            cols: 1,
            size: None,
        }
    }
}

/// Marker radius in pixels.
const MARKER_SIZE: i32 = 4;

/// Default colours, used by position when a series sets none.
pub const PALETTE: [(u8, u8, u8); 10] = crate::plot_common::PALETTE;

/// Default colour and marker of the `k`-th series: colours cycle through [`PALETTE`], markers
/// through [`Marker::CYCLE`], so that the first 40 combinations differ. Useful to give one
/// method the same look in every panel.
pub fn default_style(k: usize) -> ((u8, u8, u8), Marker) {
    (
        PALETTE[k % PALETTE.len()],
        Marker::CYCLE[(k / PALETTE.len() + k) % Marker::CYCLE.len()],
    )
}

/// A panel with the drawable points and the (padded) axis ranges.
#[derive(Debug)]
struct Prepared<'a> {
    panel: &'a XyPanel,
    curves: Vec<Vec<(f64, f64)>>,
    x_range: (f64, f64),
    y_range: (f64, f64),
}

/// Range `[lo, hi]` of positive values widened by `pad` decades on both sides; a single value
/// gets one decade either side.
fn log_range(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    let (a, b) = (lo.log10(), hi.log10());
    let (a, b) = if b - a < 1e-9 {
        (a - 1.0, b + 1.0)
    } else {
        (a, b)
    };
    let p = pad * (b - a).max(1.0);
    (10f64.powf(a - p), 10f64.powf(b + p))
}

fn prepare(panel: &XyPanel) -> Result<Prepared<'_>, String> {
    if panel.series.is_empty() {
        return Err(format!("panel '{}' has no series", panel.title));
    }
    let shown = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
    let curves: Vec<Vec<(f64, f64)>> = panel
        .series
        .iter()
        .map(|s| s.points.iter().copied().filter(shown).collect())
        .collect();
    let Some(((x0, x1), (y0, y1))) = bounds(&curves) else {
        return Err(format!(
            "panel '{}' has no point with positive finite coordinates; a log-log plot needs x > 0 and y > 0",
            panel.title
        ));
    };
    Ok(Prepared {
        panel,
        curves,
        x_range: log_range(x0, x1, 0.05),
        y_range: log_range(y0, y1, 0.05),
    })
}

/// Tick label of a log axis: plain decimals between 0.01 and 10⁵, scientific notation outside.
fn log_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-2..1e5).contains(&a) {
        let e = a.log10().round();
        if (a / 10f64.powf(e) - 1.0).abs() < 1e-6 {
            format!("1e{e}")
        } else {
            format!("{v:.0e}")
        }
    } else if a >= 1.0 {
        format!("{v:.0}")
    } else {
        let d = (-a.log10().floor()) as usize;
        format!("{v:.d$}")
    }
}

/// Plots `panels` as log-log line-and-marker diagrams in a `rows × cols` grid (filled row by
/// row) to `path`; `.png` gives a bitmap, `.svg` a vector graphic.
pub fn plot_loglog(
    path: impl AsRef<Path>,
    title: &str,
    panels: &[XyPanel],
    options: &XyOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let err = plot_error(path);
    let (rows, cols) = (options.rows, options.cols);
    check_grid(panels.len(), rows, cols).map_err(&err)?;
    let size = image_size(options.size, (640, 480), rows, cols).map_err(&err)?;
    let prepared = panels
        .iter()
        .map(prepare)
        .collect::<Result<Vec<_>, _>>()
        .map_err(&err)?;
    let frame = Frame {
        title,
        title_size: 24,
        rows,
        cols,
        size,
    };
    render(path, &frame, &Figure(&prepared))
}

/// The prepared panels of one log-log figure.
struct Figure<'a>(&'a [Prepared<'a>]);

impl PanelPainter for Figure<'_> {
    fn len(&self) -> usize {
        self.0.len()
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
        let p = &self.0[index];
        let mut chart = ChartBuilder::on(area)
            .caption(&p.panel.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (p.x_range.0..p.x_range.1).log_scale(),
                (p.y_range.0..p.y_range.1).log_scale(),
            )
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(p.panel.x_label.as_str())
            .y_desc(p.panel.y_label.as_str())
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            // decade lines only: the nine light lines per decade make the PNG twice as large
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .x_label_formatter(&|v| log_tick(*v))
            .y_label_formatter(&|v| log_tick(*v))
            .draw()
            .map_err(e)?;
        for (k, (s, pts)) in p.panel.series.iter().zip(&p.curves).enumerate() {
            let (default_color, default_marker) = default_style(k);
            let (r, g, b) = s.color.unwrap_or(default_color);
            let color = RGBColor(r, g, b);
            let line = color.stroke_width(2);
            let marker = s.marker.unwrap_or(default_marker);
            let fill = color.filled();
            // One arm per marker shape: plotters elements are concrete types.
            macro_rules! series {
                ($mk:expr) => {{
                    let mk = $mk;
                    chart
                        .draw_series(LineSeries::new(pts.iter().copied(), line))
                        .map_err(e)?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| {
                            EmptyElement::at((x, y))
                                + PathElement::new(vec![(0, 0), (22, 0)], line)
                                + mk((11, 0))
                        });
                    chart
                        .draw_series(pts.iter().map(|&p| EmptyElement::at(p) + mk((0, 0))))
                        .map_err(e)?;
                }};
            }
            match marker {
                Marker::Circle => series!(move |c| Circle::new(c, MARKER_SIZE, fill)),
                Marker::Triangle => {
                    series!(move |c| TriangleMarker::new(c, MARKER_SIZE + 1, fill))
                }
                Marker::Square => series!(move |c: (i32, i32)| Rectangle::new(
                    [
                        (c.0 - MARKER_SIZE, c.1 - MARKER_SIZE),
                        (c.0 + MARKER_SIZE, c.1 + MARKER_SIZE)
                    ],
                    fill
                )),
                Marker::Cross => series!(move |c| Cross::new(c, MARKER_SIZE, line)),
                Marker::None => series!(move |c| EmptyElement::at(c)),
            }
        }
        draw_legend(&mut chart, 13)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ranges_pad_and_widen_degenerate_ranges() {
        let (a, b) = log_range(1e-3, 1e1, 0.05);
        assert!((a.log10() + 3.2).abs() < 1e-12 && (b.log10() - 1.2).abs() < 1e-12);
        let (a, b) = log_range(5.0, 5.0, 0.05);
        assert!(a < 0.5 && b > 50.0);
    }

    #[test]
    fn log_tick_labels() {
        assert_eq!(log_tick(1e-6), "1e-6");
        assert_eq!(log_tick(0.01), "0.01");
        assert_eq!(log_tick(0.2), "0.2");
        assert_eq!(log_tick(100.0), "100");
        assert_eq!(log_tick(1e6), "1e6");
    }

    #[test]
    fn non_positive_points_are_skipped_and_empty_panels_rejected() {
        let p = XyPanel::new("p", "x", "y").with_series(XySeries::new(
            "s",
            vec![
                (1.0, 1.0),
                (0.0, 2.0),
                (2.0, -1.0),
                (f64::NAN, 1.0),
                (3.0, 0.5),
            ],
        ));
        let prep = prepare(&p).unwrap();
        assert_eq!(prep.curves[0], vec![(1.0, 1.0), (3.0, 0.5)]);
        let bad = XyPanel::new("q", "x", "y").with_series(XySeries::new("s", vec![(0.0, 1.0)]));
        assert!(prepare(&bad).err().unwrap().contains("positive"));
        assert!(prepare(&XyPanel::new("r", "x", "y")).is_err());
    }
}
