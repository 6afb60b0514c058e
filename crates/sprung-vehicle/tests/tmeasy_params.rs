//! TMeasy parameters: the three fixtures, the Chrono JSON path against the data sheet's values,
//! inline overrides, the spring-curve fit against an independent least-squares solve, and the
//! error messages for missing, unknown and invalid values.

mod tmeasy_common;

use std::collections::BTreeMap;

use sprung_model::ParamValue;
use sprung_vehicle::tire::tmeasy::params::fit_quadratic;
use sprung_vehicle::tire::tmeasy::{Curve, VerticalInput};
use sprung_vehicle::tire::{TireModel, VerticalStiffness};
use tmeasy_common::{build, fixture_values, tire};

fn num(x: f64) -> ParamValue {
    ParamValue::Number(x)
}

#[test]
fn van_file_gives_the_data_sheet_values() {
    let t = tire("van");
    let p = &t.params;
    // ../shared/data/vehicle-reference.md, column "van".
    assert_eq!((p.r0, p.width, p.rim_radius), (0.376, 0.185, 0.1778));
    assert_eq!((p.pn, p.pn_max, p.dz), (1900.0, 6650.0, 1801.74));
    assert_eq!((p.mu0, p.fr), (0.8, 0.015));
    assert_eq!(
        p.dfx0,
        Curve {
            pn: 34910.7021,
            p2n: 73974.3082
        }
    );
    assert_eq!(
        p.fxs,
        Curve {
            pn: 1522.8229,
            p2n: 2922.8487
        }
    );
    assert_eq!(
        p.sym,
        Curve {
            pn: 0.14852,
            p2n: 0.18504
        }
    );
    assert_eq!(
        p.sys,
        Curve {
            pn: 0.96524,
            p2n: 1.0714
        }
    );
    assert_eq!(
        p.sqe,
        Curve {
            pn: 0.96524,
            p2n: 1.0714
        }
    );
    assert_eq!(p.bottoming_stiffness, 500000.0);
    assert_eq!(
        p.vertical_input,
        VerticalInput::Curve(vec![0.0, 0.03, 0.06], vec![0.0, 2900.0, 6000.0])
    );
    // Two points besides the origin: the fit is exact.
    assert!((p.d1 * 0.03 + p.d2 * 0.0009 - 2900.0).abs() < 1e-9);
    assert!((p.d1 * 0.06 + p.d2 * 0.0036 - 6000.0).abs() < 1e-9);
}

#[test]
fn inline_values_override_the_file() {
    let mut v = fixture_values("van_tmeasy.toml");
    v.insert("mu0".into(), num(0.9));
    v.insert("fxm_2pn".into(), num(4000.0));
    v.insert("cz".into(), num(2.0e5));
    let t = build(&v).unwrap();
    assert_eq!(t.params.mu0, 0.9);
    assert_eq!(
        t.params.fxm,
        Curve {
            pn: 2145.5102,
            p2n: 4000.0
        }
    );
    assert_eq!(
        t.vertical().stiffness,
        VerticalStiffness::Linear { k: 2.0e5 }
    );
    assert_eq!(t.params.bottoming_stiffness, 500000.0);
}

#[test]
fn vertical_laws_of_the_three_sets() {
    let car = tire("car").vertical();
    assert_eq!(car.stiffness, VerticalStiffness::Linear { k: 310526.32 });
    assert_eq!(
        (car.damping, car.rim_radius, car.bottoming_stiffness),
        (186.49, 0.2286, 5.0 * 310526.32)
    );
    let truck = tire("truck");
    let VerticalStiffness::Quadratic { d1, d2 } = truck.vertical().stiffness else {
        panic!("quadratic expected")
    };
    // The data sheet's curve, fitted independently: least squares by nalgebra's SVD.
    let VerticalInput::Curve(rho, fz) = &truck.params.vertical_input else {
        panic!("curve expected")
    };
    let a = nalgebra::DMatrix::from_fn(rho.len(), 2, |i, j| rho[i].powi(j as i32 + 1));
    let b = nalgebra::DVector::from_column_slice(fz);
    let x = a.clone().svd(true, true).solve(&b, 1e-14).unwrap();
    assert!(
        (d1 - x[0]).abs() < 1e-9 * x[0].abs() && (d2 - x[1]).abs() < 1e-9 * x[1].abs(),
        "{d1} {d2} vs {x}"
    );
    let resid = (&a * &x - &b).amax();
    println!("truck curve fit: d1 = {d1:.2} N/m, d2 = {d2:.1} N/m², largest residual {resid:.1} N");
    // The curve is S-shaped (stiffness rises to ρ ≈ 0.05 m, then falls); a quadratic cannot follow
    // its degressive end: measured residual 1.9 kN = 3.5 % of the largest force (docs).
    assert!(resid < 0.036 * fz[fz.len() - 1]);
    let t = tire("truck");
    assert!((t.effective_radius(0.0, 0.03) - (2.0 * 0.4987 + (0.4987 - 0.03)) / 3.0).abs() < 1e-15);
}

#[test]
fn a_file_without_parameters_asks_for_them_inline() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/MAN_5t_TMeasyTire.json"
    );
    let mut v = BTreeMap::new();
    v.insert("file".to_string(), ParamValue::Text(path.into()));
    let e = build(&v).unwrap_err();
    assert!(
        e.contains("pn") && e.contains("Parameters") && e.contains("load index"),
        "{e}"
    );
    // Given inline (here: the car's values), the file still supplies the design.
    let mut v = fixture_values("car_tmeasy.toml");
    for k in ["r0", "width", "rim_radius", "mu0", "fr"] {
        v.remove(k);
    }
    v.insert("file".to_string(), ParamValue::Text(path.into()));
    let t = build(&v).unwrap();
    assert_eq!(
        (t.params.r0, t.params.width, t.params.rim_radius),
        (0.629, 0.386, 0.254)
    );
}

fn err_with(change: impl FnOnce(&mut BTreeMap<String, ParamValue>)) -> String {
    let mut v = fixture_values("car_tmeasy.toml");
    change(&mut v);
    build(&v).unwrap_err()
}

#[test]
fn bad_input_gives_errors_that_say_what_to_fix() {
    let e = err_with(|v| {
        v.remove("fxm_2pn");
    });
    assert!(e.contains("`fxm_2pn` is missing; add fxm_2pn = ..."), "{e}");
    let e = err_with(|v| {
        v.insert("fxm2pn".into(), num(1.0));
    });
    assert!(e.contains("unknown parameter `fxm2pn`"), "{e}");
    let e = err_with(|v| {
        v.insert("sxm_pn".into(), num(-0.1));
    });
    assert!(e.contains("`sxm_pn` = -0.1 must be positive"), "{e}");
    let e = err_with(|v| {
        v.insert("sxs_2pn".into(), num(0.05));
    });
    assert!(e.contains("0 < sxm < sxs"), "{e}");
    let e = err_with(|v| {
        v.insert("fys_pn".into(), num(5000.0));
    });
    assert!(
        e.contains("sliding force fys exceeds the maximum fym"),
        "{e}"
    );
    let e = err_with(|v| {
        v.insert("dfx0_2pn".into(), num(500000.0));
    });
    assert!(e.contains("dfx0") && e.contains("pn_max"), "{e}");
    let e = err_with(|v| {
        v.insert("rim_radius".into(), num(0.4));
    });
    assert!(
        e.contains("rim_radius = 0.4 m must be smaller than r0"),
        "{e}"
    );
    let e = err_with(|v| {
        v.insert("d1".into(), num(1e5));
    });
    assert!(e.contains("give the vertical stiffness once"), "{e}");
    let e = err_with(|v| {
        v.remove("cz");
    });
    assert!(e.contains("vertical stiffness is missing; add cz"), "{e}");
    let e = err_with(|v| {
        v.remove("cz");
        v.insert("curve_rho".into(), ParamValue::List(vec![0.0, 0.01]));
        v.insert("curve_fz".into(), ParamValue::List(vec![0.0, 100.0, 200.0]));
    });
    assert!(
        e.contains("curve_rho has 2 values but curve_fz has 3"),
        "{e}"
    );
    let e = err_with(|v| {
        v.insert("cx".into(), ParamValue::List(vec![1.0]));
    });
    assert!(e.contains("`cx` must be a number"), "{e}");
    let e = err_with(|v| {
        v.insert("file".into(), ParamValue::Text("no/such/tire.json".into()));
    });
    assert!(
        e.contains("cannot read the TMeasy file no/such/tire.json"),
        "{e}"
    );
    assert!(
        fit_quadratic(&[0.0, 0.01, 0.02], &[0.0, -5.0, -10.0])
            .unwrap_err()
            .contains("not positive")
    );
}
