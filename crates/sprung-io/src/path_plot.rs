//! Linear x-y line plots (PNG or SVG): one curve per series in the plane of two channels, e.g.
//! the path y(x) of a vehicle (document 004, Bild 6 left). Both axes are linear and share one
//! scale (1 m is as long on x as on y), so that a path looks like the road it follows. Points
//! with a non-finite coordinate are skipped.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::IoError;
use crate::plot_common::{
    Frame, PanelPainter, bounds, check_grid, draw_legend, drawing_error, image_size, plot_error,
    render,
};
use crate::xy_plot::{XyPanel, default_style};

/// Plots `panel` (its series as lines, linear axes of equal scale) to `path` (`.png` or
/// `.svg`), `size` pixels (default 800 × 640).
pub fn plot_path(
    path: impl AsRef<Path>,
    title: &str,
    panel: &XyPanel,
    size: Option<(u32, u32)>,
) -> Result<(), IoError> {
    plot_line_panels(path, title, &[(panel, true)], size)
}

/// Plots several line panels side by side in one figure (one row), each `(panel, equal_scale)`:
/// with `equal_scale` the axes share one scale (a path), otherwise each axis spans its data (a
/// time history drawn as x = t). Document 004, Bild 6 is such a figure: the x-y path and the
/// lateral acceleration over time. `size` defaults to 800 × 640 pixels per panel.
pub fn plot_line_panels(
    path: impl AsRef<Path>,
    title: &str,
    panels: &[(&XyPanel, bool)],
    size: Option<(u32, u32)>,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let err = plot_error(path);
    let n = panels.len().max(1);
    check_grid(panels.len(), 1, n).map_err(&err)?;
    let size = image_size(size, (800, 640), 1, n).map_err(&err)?;
    let mut prepared = Vec::with_capacity(panels.len());
    for &(panel, equal) in panels {
        if panel.series.is_empty() {
            return Err(err(format!("panel '{}' has no series", panel.title)));
        }
        let curves: Vec<Vec<(f64, f64)>> = panel
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .copied()
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .collect()
            })
            .collect();
        let Some(((x0, x1), (y0, y1))) = bounds(&curves) else {
            return Err(err(format!(
                "panel '{}' has no point with finite coordinates",
                panel.title
            )));
        };
        let (x_range, y_range) = if equal {
            // Equal scale: the longer extent sets both, each range centred on its data.
            let half = 0.5 * (x1 - x0).max(y1 - y0).max(1e-9) * 1.05;
            let (cx, cy) = (0.5 * (x0 + x1), 0.5 * (y0 + y1));
            ((cx - half, cx + half), (cy - half, cy + half))
        } else {
            let pad = |a: f64, b: f64| {
                let m = 0.05 * (b - a).max(1e-9);
                (a - m, b + m)
            };
            ((x0, x1.max(x0 + 1e-9)), pad(y0, y1))
        };
        prepared.push(Prepared {
            panel,
            curves,
            x_range,
            y_range,
        });
    }
    let frame = Frame {
        title,
        title_size: 24,
        rows: 1,
        cols: n,
        size,
    };
    render(path, &frame, &Panels(prepared))
}

struct Prepared<'a> {
    panel: &'a XyPanel,
    curves: Vec<Vec<(f64, f64)>>,
    x_range: (f64, f64),
    y_range: (f64, f64),
}

struct Panels<'a>(Vec<Prepared<'a>>);

impl PanelPainter for Panels<'_> {
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
        self.0[index].paint(0, area)
    }
}

impl PanelPainter for Prepared<'_> {
    fn len(&self) -> usize {
        1
    }

    fn paint<DB: DrawingBackend>(
        &self,
        _index: usize,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let e = drawing_error;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.panel.title, ("sans-serif", 19))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(70)
            .build_cartesian_2d(
                self.x_range.0..self.x_range.1,
                self.y_range.0..self.y_range.1,
            )
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(self.panel.x_label.as_str())
            .y_desc(self.panel.y_label.as_str())
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(e)?;
        for (k, (s, pts)) in self.panel.series.iter().zip(&self.curves).enumerate() {
            let (r, g, b) = s.color.unwrap_or(default_style(k).0);
            let line = RGBColor(r, g, b).stroke_width(2);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), line))
                .map_err(e)?
                .label(s.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], line));
        }
        draw_legend(&mut chart, 13)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xy_plot::XySeries;

    #[test]
    fn writes_a_png_and_rejects_empty_panels() {
        let dir = std::env::temp_dir().join(format!("sprung_path_plot_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("path.png");
        let circle: Vec<(f64, f64)> = (0..100)
            .map(|k| {
                let a = k as f64 * 0.05;
                (10.0 * a.sin(), 10.0 * (1.0 - a.cos()))
            })
            .collect();
        let panel =
            XyPanel::new("path", "x [m]", "y [m]").with_series(XySeries::new("car", circle));
        plot_path(&out, "test", &panel, None).unwrap();
        assert!(std::fs::metadata(&out).unwrap().len() > 1000);
        let empty = XyPanel::new("none", "x", "y");
        assert!(plot_path(&out, "test", &empty, None).is_err());
        // Two panels in one figure: the path (equal scale) and a time history.
        let ay = XyPanel::new("a_y", "t [s]", "a_y [m/s^2]").with_series(XySeries::new(
            "car",
            (0..100).map(|k| (k as f64 * 0.1, 0.5 * k as f64)).collect(),
        ));
        let two = dir.join("two.png");
        plot_line_panels(&two, "test", &[(&panel, true), (&ay, false)], None).unwrap();
        assert!(std::fs::metadata(&two).unwrap().len() > 1000);
        assert!(plot_line_panels(&two, "test", &[(&panel, true), (&empty, false)], None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
