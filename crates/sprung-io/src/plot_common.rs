//! Private helpers shared by the time-series plots ([`crate::plot`], document 000, Bild 7) and
//! the log-log work-precision plots ([`crate::xy_plot`]): the embedded font, the colour palette,
//! input checks of the panel grid and image size, error mapping, the bounding box of the data,
//! backend selection by file extension (PNG/SVG), the titled panel grid and the legend box.
//!
//! The DejaVu Sans font (Bitstream Vera / DejaVu license, see `assets/DejaVuSans-LICENSE.txt`) is
//! embedded in the crate and registered with plotters on first use under the family names
//! `sans-serif`, `serif` and `monospace`, so plots render on machines without system fonts.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::error::IoError;

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

/// Default series colours, used by position when a series sets none. The time-series plots
/// cycle through the first eight, the log-log plots through all ten.
pub(crate) const PALETTE: [(u8, u8, u8); 10] = [
    (0, 84, 159),    // blue
    (204, 7, 30),    // red
    (87, 171, 39),   // green
    (246, 168, 0),   // orange
    (97, 33, 88),    // purple
    (0, 152, 161),   // teal
    (100, 100, 100), // grey
    (0, 0, 0),       // black
    (189, 205, 0),   // lime
    (227, 0, 102),   // magenta
];

/// Maps a message to [`IoError::Plot`] for the image at `path`.
pub(crate) fn plot_error(path: &Path) -> impl Fn(String) -> IoError + '_ {
    move |message| IoError::Plot {
        path: path.to_path_buf(),
        message,
    }
}

/// Maps a plotters drawing error to its message.
pub(crate) fn drawing_error<E: std::error::Error + Send + Sync>(
    e: DrawingAreaErrorKind<E>,
) -> String {
    e.to_string()
}

/// Checks that there is at least one panel and that a `rows × cols` grid has room for all.
pub(crate) fn check_grid(panels: usize, rows: usize, cols: usize) -> Result<(), String> {
    if panels == 0 {
        return Err("no panels given; pass at least one panel".into());
    }
    if rows * cols < panels {
        return Err(format!(
            "a {rows}x{cols} grid has room for {} panels but {panels} were given; enlarge the grid",
            rows * cols,
        ));
    }
    Ok(())
}

/// The image size: `size` if given, otherwise `per_panel` pixels per grid cell plus 50 px for
/// the title; rejects images smaller than 100×100 px.
pub(crate) fn image_size(
    size: Option<(u32, u32)>,
    per_panel: (u32, u32),
    rows: usize,
    cols: usize,
) -> Result<(u32, u32), String> {
    let size = size.unwrap_or((per_panel.0 * cols as u32, per_panel.1 * rows as u32 + 50));
    if size.0 < 100 || size.1 < 100 {
        return Err(format!(
            "image size {}x{} px is too small; use at least 100x100",
            size.0, size.1
        ));
    }
    Ok(size)
}

/// Bounding box `((x0, x1), (y0, y1))` of all points of `curves`; `None` if there are none.
pub(crate) fn bounds(curves: &[Vec<(f64, f64)>]) -> Option<((f64, f64), (f64, f64))> {
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in curves.iter().flatten() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    x0.is_finite().then_some(((x0, x1), (y0, y1)))
}

/// Draws one panel of a figure into its grid cell.
pub(crate) trait PanelPainter {
    /// Number of panels.
    fn len(&self) -> usize;

    /// Draws panel `index` into `area`.
    fn paint<DB: DrawingBackend>(
        &self,
        index: usize,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// Layout of a figure: overall title, its font size and the panel grid.
pub(crate) struct Frame<'a> {
    /// Overall title; empty for none.
    pub title: &'a str,
    /// Font size of the overall title.
    pub title_size: u32,
    /// Grid rows.
    pub rows: usize,
    /// Grid columns.
    pub cols: usize,
    /// Image size in pixels.
    pub size: (u32, u32),
}

/// Registers the font, picks the backend from the extension of `path` (`.png` bitmap, `.svg`
/// vector graphic, case-insensitive), draws the figure and writes the file.
pub(crate) fn render(
    path: &Path,
    frame: &Frame<'_>,
    painter: &impl PanelPainter,
) -> Result<(), IoError> {
    let err = plot_error(path);
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
        && !dir.is_dir()
    {
        return Err(err(format!(
            "the folder '{}' does not exist; create it first or write the plot elsewhere",
            dir.display()
        )));
    }
    ensure_font().map_err(&err)?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("png") => {
            let root = BitMapBackend::new(path, frame.size).into_drawing_area();
            draw_grid(&root, frame, painter).map_err(&err)?;
            root.present()
                .map_err(|e| err(format!("writing the image failed: {e}")))
        }
        Some("svg") => {
            let root = SVGBackend::new(path, frame.size).into_drawing_area();
            draw_grid(&root, frame, painter).map_err(&err)?;
            root.present()
                .map_err(|e| err(format!("writing the image failed: {e}")))
        }
        _ => Err(err(
            "unknown image format; use the extension .png or .svg".into()
        )),
    }
}

/// White background, optional title, then the panels row by row in an even grid.
fn draw_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    frame: &Frame<'_>,
    painter: &impl PanelPainter,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(drawing_error)?;
    let body = if frame.title.is_empty() {
        root.clone()
    } else {
        root.titled(frame.title, ("sans-serif", frame.title_size))
            .map_err(drawing_error)?
    };
    let areas = body.split_evenly((frame.rows, frame.cols));
    for (k, area) in areas.iter().take(painter.len()).enumerate() {
        painter.paint(k, area)?;
    }
    Ok(())
}

/// Draws the legend box (upper right, translucent white, black border) of a chart.
pub(crate) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    font_size: u32,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", font_size))
        .draw()
        .map_err(drawing_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_and_size_checks() {
        assert!(check_grid(0, 1, 1).unwrap_err().contains("no panels"));
        assert!(
            check_grid(5, 2, 2)
                .unwrap_err()
                .contains("room for 4 panels but 5")
        );
        assert!(check_grid(4, 2, 2).is_ok());
        assert_eq!(image_size(None, (600, 400), 2, 2), Ok((1200, 850)));
        assert_eq!(
            image_size(Some((300, 200)), (600, 400), 2, 2),
            Ok((300, 200))
        );
        assert!(image_size(Some((99, 500)), (600, 400), 1, 1).is_err());
    }

    #[test]
    fn bounds_of_points() {
        let c = vec![vec![(1.0, -2.0), (3.0, 4.0)], vec![(-1.0, 0.5)]];
        assert_eq!(bounds(&c), Some(((-1.0, 3.0), (-2.0, 4.0))));
        assert_eq!(bounds(&[Vec::new()]), None);
    }
}
