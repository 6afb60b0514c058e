//! Curve and signal evaluation against independent truth: central finite differences,
//! monotonicity, C1 continuity, odd symmetry, extrapolation rules, tabulated reference values.

use sprung_model::{Curve, Extrapolation, Interpolation, Signal, Symmetry};
use sprung_test_support::Rng;

fn curve(x: &[f64], y: &[f64], i: Interpolation, e: Extrapolation, s: Symmetry) -> Curve {
    Curve {
        name: "C".into(),
        x: x.to_vec(),
        y: y.to_vec(),
        interpolation: i,
        extrapolation: e,
        symmetry: s,
        x_unit: None,
        y_unit: None,
        out_of_range: Default::default(),
        segment_knots: Default::default(),
    }
}

/// C_LCA_RADIAL of reference-suspensions.md section 2.
fn lca_radial(i: Interpolation) -> Curve {
    curve(
        &[0.0, 5e-4, 1e-3, 1.5e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3],
        &[0.0, 2500.0, 5200.0, 8200.0, 1.18e4, 2.1e4, 3.6e4, 6e4, 1e5],
        i,
        Extrapolation::Linear,
        Symmetry::Odd,
    )
}

/// C_DAMPER_A of reference-suspensions.md section 2 (asymmetric, non-odd).
fn damper_a(i: Interpolation) -> Curve {
    curve(
        &[
            -1.5, -1.0, -0.5, -0.3, -0.2, -0.1, -0.05, -0.025, -0.01, 0.0, 0.01, 0.025, 0.05, 0.1,
            0.2, 0.3, 0.5, 1.0, 1.5,
        ],
        &[
            -1600.0, -1250.0, -860.0, -660.0, -520.0, -340.0, -210.0, -140.0, -80.0, 0.0, 80.0,
            200.0, 380.0, 680.0, 1080.0, 1380.0, 1830.0, 2730.0, 3530.0,
        ],
        i,
        Extrapolation::Linear,
        Symmetry::None,
    )
}

fn fd(c: &Curve, x: f64, h: f64) -> f64 {
    (c.eval(x + h).0 - c.eval(x - h).0) / (2.0 * h)
}

#[test]
fn knots_are_reproduced() {
    for i in [Interpolation::Linear, Interpolation::Smooth] {
        let c = lca_radial(i);
        for (x, y) in c.x.iter().zip(&c.y) {
            assert!((c.eval(*x).0 - y).abs() <= 1e-9 * y.abs().max(1.0));
            assert!((c.eval(-*x).0 + y).abs() <= 1e-9 * y.abs().max(1.0));
        }
        let d = damper_a(i);
        for (x, y) in d.x.iter().zip(&d.y) {
            assert!((d.eval(*x).0 - y).abs() <= 1e-9 * y.abs().max(1.0));
        }
    }
    // Linear: midpoint is the mean.
    let c = lca_radial(Interpolation::Linear);
    assert_eq!(c.eval(2.5e-3).0, 0.5 * (1.18e4 + 2.1e4));
}

#[test]
fn linear_derivative_matches_finite_differences_away_from_knots() {
    let mut rng = Rng(7);
    for c in [
        lca_radial(Interpolation::Linear),
        damper_a(Interpolation::Linear),
    ] {
        let (lo, hi) = c.range();
        let span = hi - lo;
        let h = 1e-7 * span;
        let mut tested = 0;
        while tested < 500 {
            let x = lo - 0.2 * span + 1.4 * span * rng.uniform();
            // Away from knots (and from 0 for odd curves).
            let near =
                c.x.iter()
                    .any(|k| (x - k).abs() < 10.0 * h || (x + k).abs() < 10.0 * h);
            if near {
                continue;
            }
            tested += 1;
            let (_, d) = c.eval(x);
            let f = fd(&c, x, h);
            assert!(
                (d - f).abs() <= 1e-6 * d.abs().max(1e-300),
                "x = {x}: {d} vs {f}"
            );
        }
    }
}

#[test]
fn smooth_derivative_matches_finite_differences_everywhere() {
    let mut rng = Rng(11);
    for c in [
        lca_radial(Interpolation::Smooth),
        damper_a(Interpolation::Smooth),
    ] {
        let (lo, hi) = c.range();
        let span = hi - lo;
        let mut xs: Vec<f64> = (0..1000)
            .map(|_| lo - 0.2 * span + 1.4 * span * rng.uniform())
            .collect();
        // Including the knots themselves (C1: the one-sided derivatives agree).
        xs.extend(c.x.iter().copied());
        xs.extend(c.x.iter().map(|x| -x));
        let scale = c.y.iter().fold(0.0f64, |a, y| a.max(y.abs())) / span;
        for x in xs {
            let h = 1e-9 * span;
            let (_, d) = c.eval(x);
            let f = fd(&c, x, h);
            assert!(
                (d - f).abs() <= 1e-6 * d.abs().max(1e-3 * scale),
                "x = {x}: {d} vs {f}"
            );
        }
    }
}

#[test]
fn smooth_is_c1_at_knots() {
    for c in [
        lca_radial(Interpolation::Smooth),
        damper_a(Interpolation::Smooth),
    ] {
        let (lo, hi) = c.range();
        let eps = 1e-12 * (hi - lo);
        for &k in c.x.iter().chain([0.0].iter()) {
            let (fl, dl) = c.eval(k - eps);
            let (fr, dr) = c.eval(k + eps);
            let tol = 1e-6 * dl.abs().max(dr.abs()).max(1.0);
            assert!(
                (dl - dr).abs() <= tol,
                "derivative jump at {k}: {dl} vs {dr}"
            );
            assert!((fl - fr).abs() <= 1e-6 * fl.abs().max(1.0));
        }
    }
    // The linear interpolant is not C1 (a sanity check that the test can fail).
    let c = lca_radial(Interpolation::Linear);
    let (_, dl) = c.eval(1e-3 - 1e-9);
    let (_, dr) = c.eval(1e-3 + 1e-9);
    assert!((dl - dr).abs() > 1e5);
}

#[test]
fn smooth_preserves_monotonicity() {
    let mut rng = Rng(3);
    for trial in 0..200 {
        let n = 2 + (rng.uniform() * 10.0) as usize;
        let mut x = vec![0.0];
        let mut y = vec![0.0];
        for _ in 1..n {
            x.push(
                x.last().unwrap()
                    + 1e-3
                    + rng.uniform() * (if trial % 2 == 0 { 1.0 } else { 1e-3 }),
            );
            // Flat pieces and steep jumps included.
            let step = if rng.uniform() < 0.2 {
                0.0
            } else {
                rng.uniform().powi(4) * 1e4
            };
            y.push(y.last().unwrap() + step);
        }
        let c = curve(
            &x,
            &y,
            Interpolation::Smooth,
            Extrapolation::Constant,
            Symmetry::None,
        );
        let mut prev = f64::NEG_INFINITY;
        for k in 0..=2000 {
            let xx = x[0] + (x[n - 1] - x[0]) * k as f64 / 2000.0;
            let (f, d) = c.eval(xx);
            assert!(
                f >= prev - 1e-9 * f.abs().max(1.0),
                "trial {trial}: not monotone at {xx}"
            );
            assert!(
                d >= -1e-9 * d.abs().max(1.0),
                "trial {trial}: negative slope {d} at {xx}"
            );
            // Stays within the data range (no overshoot).
            assert!(f >= y[0] - 1e-9 && f <= y[n - 1] * (1.0 + 1e-12) + 1e-9);
            prev = f;
        }
    }
}

#[test]
fn odd_symmetry() {
    let mut rng = Rng(5);
    for i in [Interpolation::Linear, Interpolation::Smooth] {
        let c = lca_radial(i);
        for _ in 0..200 {
            let x = (rng.uniform() * 2.0 - 1.0) * 8e-3;
            let (fp, dp) = c.eval(x);
            let (fm, dm) = c.eval(-x);
            assert_eq!(fp, -fm);
            assert_eq!(dp, dm);
        }
        assert_eq!(c.eval(0.0).0, 0.0);
        assert_eq!(c.range(), (-6e-3, 6e-3));
    }
}

#[test]
fn extrapolation_rules() {
    let x = [0.0, 1.0, 2.0];
    let y = [0.0, 10.0, 30.0];
    let lin = curve(
        &x,
        &y,
        Interpolation::Linear,
        Extrapolation::Linear,
        Symmetry::None,
    );
    assert_eq!(lin.eval(3.0), (50.0, 20.0));
    assert_eq!(lin.eval(-1.0), (-10.0, 10.0));
    let con = curve(
        &x,
        &y,
        Interpolation::Linear,
        Extrapolation::Constant,
        Symmetry::None,
    );
    assert_eq!(con.eval(3.0), (30.0, 0.0));
    assert_eq!(con.eval(-1.0), (0.0, 0.0));
    let err = curve(
        &x,
        &y,
        Interpolation::Linear,
        Extrapolation::Error,
        Symmetry::None,
    );
    assert_eq!(err.eval(3.0), (30.0, 0.0));
    let e = err.eval_checked(3.0).unwrap_err();
    assert_eq!((e.x, e.min, e.max), (3.0, 0.0, 2.0));
    assert!(e.to_string().contains("curve 'C'"));
    assert!(err.eval_checked(f64::NAN).is_err());
    assert_eq!(err.eval_checked(1.5).unwrap(), (20.0, 20.0));
    assert_eq!(lin.eval_checked(10.0).unwrap(), (190.0, 20.0));
    // Smooth linear extrapolation continues with the end tangent (value and slope continuous).
    let sm = curve(
        &x,
        &y,
        Interpolation::Smooth,
        Extrapolation::Linear,
        Symmetry::None,
    );
    let (f_end, d_end) = sm.eval(2.0);
    let (f_out, d_out) = sm.eval(2.5);
    assert!((d_out - d_end).abs() < 1e-12);
    assert!((f_out - (f_end + 0.5 * d_end)).abs() < 1e-12);
    // Odd curve extrapolates on both sides.
    let c = lca_radial(Interpolation::Linear);
    let slope = (1e5 - 6e4) / 1e-3;
    let (f, d) = c.eval(-7e-3);
    assert!((f + 1e5 + slope * 1e-3).abs() < 1e-6 && (d - slope).abs() < 1e-3);
}

#[test]
fn degenerate_curves_do_not_panic() {
    let c = curve(
        &[],
        &[],
        Interpolation::Smooth,
        Extrapolation::Linear,
        Symmetry::Odd,
    );
    assert_eq!(c.eval(1.0), (0.0, 0.0));
    let c = curve(
        &[1.0],
        &[2.0],
        Interpolation::Smooth,
        Extrapolation::Linear,
        Symmetry::None,
    );
    assert_eq!(c.eval(5.0).0, 2.0);
    let c = curve(
        &[1.0, 1.0, 0.0],
        &[2.0],
        Interpolation::Smooth,
        Extrapolation::Error,
        Symmetry::None,
    );
    let _ = c.eval(0.5);
    let _ = c.eval_checked(0.5);
}

#[test]
fn signal_step_ramp_sine() {
    let s = Signal::Step {
        time: 0.5,
        before: 1.0,
        after: -2.0,
    };
    assert_eq!((s.value(0.49), s.value(0.5), s.rate(0.7)), (1.0, -2.0, 0.0));
    assert_eq!(s.discontinuities(), vec![0.5]);
    assert!(s.kinks().is_empty());
    let r = Signal::Ramp {
        start_time: 1.0,
        end_time: 2.0,
        from: 0.0,
        to: 100.0,
    };
    assert_eq!(
        (r.value(0.0), r.value(1.5), r.value(3.0)),
        (0.0, 50.0, 100.0)
    );
    assert_eq!((r.rate(0.5), r.rate(1.5), r.rate(2.5)), (0.0, 100.0, 0.0));
    assert!(r.discontinuities().is_empty());
    assert_eq!(r.kinks(), vec![1.0, 2.0]);
    let w = Signal::Sine {
        amplitude: 2.0,
        frequency_hz: 3.0,
        phase_deg: 30.0,
        offset: 1.0,
        start_time: 0.2,
    };
    assert_eq!(w.value(0.1), 1.0);
    assert!((w.value(0.2) - 2.0).abs() < 1e-12); // 1 + 2 sin(30 deg)
    assert_eq!(w.discontinuities(), vec![0.2]);
    for t in [0.25, 0.4, 0.77] {
        let h = 1e-6;
        let f = (w.value(t + h) - w.value(t - h)) / (2.0 * h);
        assert!((w.rate(t) - f).abs() < 1e-6 * w.rate(t).abs().max(1.0));
    }
    let w0 = Signal::Sine {
        amplitude: 2.0,
        frequency_hz: 3.0,
        phase_deg: 0.0,
        offset: 0.0,
        start_time: 0.0,
    };
    assert!(w0.discontinuities().is_empty());
    assert_eq!(w0.kinks(), vec![0.0]);
    assert_eq!(Signal::Constant { value: 4.0 }.eval(9.0), (4.0, 0.0));
}

#[test]
fn signal_table() {
    let t = Signal::Table {
        t: vec![0.0, 1.0, 3.0],
        value: vec![0.0, 10.0, 0.0],
        interpolation: Interpolation::Linear,
    };
    assert_eq!(
        (t.value(-1.0), t.value(0.5), t.value(2.0), t.value(5.0)),
        (0.0, 5.0, 5.0, 0.0)
    );
    assert_eq!(
        (t.rate(-1.0), t.rate(0.5), t.rate(2.0), t.rate(5.0)),
        (0.0, 10.0, -5.0, 0.0)
    );
    assert!(t.discontinuities().is_empty());
    assert_eq!(t.kinks(), vec![0.0, 1.0, 3.0]);
    let s = Signal::Table {
        t: vec![0.0, 1.0, 3.0, 4.0],
        value: vec![0.0, 10.0, 12.0, 0.0],
        interpolation: Interpolation::Smooth,
    };
    for x in [0.3, 0.999, 1.0, 1.7, 3.2] {
        let h = 1e-7;
        let f = (s.value(x + h) - s.value(x - h)) / (2.0 * h);
        assert!(
            (s.rate(x) - f).abs() < 1e-5 * s.rate(x).abs().max(1.0),
            "{x}"
        );
    }
    assert_eq!(s.kinks(), vec![0.0, 4.0]);
}

/// `Curve::segment` names the slope that `eval` uses: with `min_ratio = 1` equal segments ⇒
/// equal derivatives of a piecewise-linear table; with a ratio r only knots whose slopes differ
/// by more than r start a new segment; knots belong
/// to the segment on their right (as in `eval`); smooth curves are one segment inside the
/// table; constant extrapolation is a segment of its own.
#[test]
fn segment_names_the_slope_of_piecewise_linear_tables() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for c in [
        damper_a(Interpolation::Linear),
        lca_radial(Interpolation::Linear),
    ] {
        let hi = c.range().1;
        let xs: Vec<f64> = (0..400).map(|_| rng.sym(1.2 * hi)).collect();
        for &a in &xs {
            for &b in &xs[..40] {
                let (da, db) = (c.eval(a).1, c.eval(b).1);
                if c.segment(a, 1.0) == c.segment(b, 1.0) {
                    assert!((da - db).abs() <= 1e-12 * da.abs(), "{a} {b}");
                }
            }
        }
    }
    let d = damper_a(Interpolation::Linear);
    assert_ne!(d.segment(-0.010_000_1, 1.0), d.segment(-0.01, 1.0));
    assert_eq!(d.segment(-0.01, 1.0), d.segment(-0.005, 1.0));
    assert_eq!(d.segment(-7.0, 1.0), d.segment(-1.2, 1.0)); // linear extrapolation continues
    let s = damper_a(Interpolation::Smooth);
    assert_eq!(s.segment(-0.3, 1.0), s.segment(0.7, 1.0));
    let k = curve(
        &[0.0, 1.0, 2.0],
        &[0.0, 1.0, 3.0],
        Interpolation::Linear,
        Extrapolation::Constant,
        Symmetry::None,
    );
    assert_ne!(k.segment(2.5, 1.0), k.segment(1.5, 1.0));
    assert_ne!(k.segment(-0.5, 1.0), k.segment(0.5, 1.0));
    assert_ne!(k.segment(-0.5, 1.0), k.segment(2.5, 1.0));
    assert_eq!(k.segment(0.5, 2.5), k.segment(1.5, 2.5)); // slope ratio 2 < 2.5
    assert_ne!(k.segment(0.5, 1.9), k.segment(1.5, 1.9));
}

/// The interval of the last evaluation that a curve tries first is a hint only: a curve
/// evaluated along a random walk (small steps within an interval, jumps across several, the
/// knots themselves, beyond the table, NaN) gives the same bits as a fresh copy each time.
#[test]
fn the_last_interval_hint_changes_no_value() {
    let mut rng = Rng(7);
    for c in [
        damper_a(Interpolation::Linear),
        damper_a(Interpolation::Smooth),
        lca_radial(Interpolation::Linear),
    ] {
        let fresh = || curve(&c.x, &c.y, c.interpolation, c.extrapolation, c.symmetry);
        let mut x = 0.0;
        for k in 0..4000 {
            x = match k % 50 {
                0 => c.x[k % c.x.len()],
                1 => f64::NAN,
                2 => 3.0 * rng.sym(1.0),
                _ if x.is_nan() => 0.0,
                _ => x + rng.sym(0.02),
            };
            let (a, b) = (c.eval(x), fresh().eval(x));
            assert_eq!(
                (a.0.to_bits(), a.1.to_bits()),
                (b.0.to_bits(), b.1.to_bits()),
                "x = {x}"
            );
        }
    }
}
