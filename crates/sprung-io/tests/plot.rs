//! Plot output: a 2×2 figure like document 000, Bild 7 (wheel displacement and bushing force,
//! two axles, LSRT2 vs reference) as PNG and SVG, plus input validation.

use sprung_io::plot::plot_time_series_with;
use sprung_io::{IoError, Layout, LineStyle, Panel, PlotOptions, Series, Window, plot_time_series};

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sprung-io-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Damped step response resembling Bild 7: force step at t = 5 s.
fn response(t: &[f64], amp: f64, omega: f64, zeta: f64, phase: f64) -> Vec<f64> {
    t.iter()
        .map(|&t| {
            if t < 5.0 {
                0.0
            } else {
                let s = t - 5.0;
                amp * (1.0 - (-zeta * omega * s).exp() * (omega * s + phase).cos())
            }
        })
        .collect()
}

fn bild7_panels() -> Vec<Panel> {
    let t: Vec<f64> = (0..=3000).map(|i| 4.5 + i as f64 * 1e-3).collect();
    let mut panels = Vec::new();
    for (axle, w) in [("double wishbone", 55.0), ("multi-link", 48.0)] {
        let x = response(&t, -4.0, w, 0.05, 0.0);
        let x_ref = response(&t, -4.0, w * 1.002, 0.05, 0.0);
        let f = response(&t, -2400.0, w, 0.05, 0.1);
        let f_ref = response(&t, -2400.0, w * 1.002, 0.05, 0.1);
        panels.push(
            Panel::new(format!("{axle}: wheel displacement"), "x_wheel [mm]")
                .with_series(Series::new("LSRT2", t.clone(), x, LineStyle::Solid))
                .with_series(Series::new(
                    "reference",
                    t.clone(),
                    x_ref,
                    LineStyle::Dashed,
                )),
        );
        panels.push(
            Panel::new(format!("{axle}: bushing force"), "F_x [N]")
                .with_series(Series::new("LSRT2", t.clone(), f, LineStyle::Solid))
                .with_series(Series::new(
                    "reference",
                    t.clone(),
                    f_ref,
                    LineStyle::Dashed,
                )),
        );
    }
    // Reorder to rows = quantity, columns = axle, as in Bild 7.
    vec![
        panels[0].clone(),
        panels[2].clone(),
        panels[1].clone(),
        panels[3].clone(),
    ]
}

#[test]
fn png_grid_is_written_and_decodes() {
    let p = tmp("bild7.png");
    plot_time_series(&p, "Force step F_x = -2500 N at t = 5 s", &bild7_panels()).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.len() > 20_000, "PNG only {} bytes", bytes.len());
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .unwrap()
        .to_rgb8();
    assert_eq!(img.dimensions(), (1200, 850));
    // Non-trivial content: many non-white pixels, and both series colours present.
    let non_white = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    assert!(non_white > 20_000, "only {non_white} non-white pixels");
    let blue = img.pixels().filter(|p| p.0 == [0, 84, 159]).count();
    let red = img.pixels().filter(|p| p.0 == [204, 7, 30]).count();
    assert!(blue > 500 && red > 200, "blue {blue}, red {red}");
}

#[test]
fn svg_stacked_with_window_contains_labels() {
    let p = tmp("stacked.svg");
    let opts = PlotOptions {
        layout: Layout::Stacked,
        window: Some(Window::new(4.9, 6.0)),
        ..PlotOptions::default()
    };
    plot_time_series_with(&p, "window 4.9..6 s", &bild7_panels()[..2], &opts).unwrap();
    let svg = std::fs::read_to_string(&p).unwrap();
    assert!(svg.len() > 5_000);
    for needle in [
        "x_wheel [mm]",
        "time [s]",
        "LSRT2",
        "reference",
        "window 4.9..6 s",
    ] {
        assert!(svg.contains(needle), "SVG lacks '{needle}'");
    }
}

#[test]
fn plot_input_errors() {
    let p = tmp("bad.png");
    let e = plot_time_series(&p, "t", &[]).unwrap_err();
    assert!(matches!(e, IoError::Plot { .. }));
    let bad = Panel::new("p", "y [m]").with_series(Series::new(
        "s",
        vec![0.0, 1.0],
        vec![1.0],
        LineStyle::Solid,
    ));
    let e = plot_time_series(&p, "t", &[bad]).unwrap_err();
    assert!(e.to_string().contains("2 time points but 1 values"), "{e}");
    let ok = Panel::new("p", "y [m]").with_series(Series::new(
        "s",
        vec![0.0, 1.0],
        vec![1.0, 2.0],
        LineStyle::Solid,
    ));
    let e = plot_time_series(tmp("x.jpg"), "t", std::slice::from_ref(&ok)).unwrap_err();
    assert!(e.to_string().contains(".png or .svg"), "{e}");
    let opts = PlotOptions {
        window: Some(Window::new(5.0, 6.0)),
        ..PlotOptions::default()
    };
    let e = plot_time_series_with(&p, "t", std::slice::from_ref(&ok), &opts).unwrap_err();
    assert!(e.to_string().contains("inside the time window"), "{e}");
    let opts = PlotOptions {
        layout: Layout::Grid { rows: 1, cols: 1 },
        ..PlotOptions::default()
    };
    let e = plot_time_series_with(&p, "t", &[ok.clone(), ok], &opts).unwrap_err();
    assert!(e.to_string().contains("enlarge the grid"), "{e}");
}
