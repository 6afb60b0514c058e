//! The tire element's analytic partials (contact kinematics chained with the law's partials,
//! the rotating contact frame and lever arm) against central differences of the element itself
//! (`sprung_mbs::element_law::difference_partials`, step 6e-6), on every road type and several
//! wheel poses: upright rolling, near lift-off, cambered, steered, on a slope, on obstacles, on a
//! height grid, lifted off.

use std::sync::Arc;

use nalgebra::{Rotation3, Vector3};
use sprung_mbs::element_law::{
    ElementInput, ElementLaw, ElementScratch, MarkerState, difference_partials,
};
use sprung_test_support::column_error;
use sprung_vehicle::road::Road;
use sprung_vehicle::tire::linear::LinearTire;
use sprung_vehicle::tire::{VerticalLaw, VerticalStiffness};
use sprung_vehicle::tire_element::TireElement;

fn tire(stiffness: VerticalStiffness) -> LinearTire {
    LinearTire {
        unloaded_radius: 0.3,
        vertical: VerticalLaw {
            unloaded_radius: 0.3,
            width: 0.2,
            stiffness,
            damping: 300.0,
            rim_radius: 0.2,
            bottoming_stiffness: 1e6,
        },
        nominal_load: 4000.0,
        longitudinal_stiffness: 8e4,
        cornering_stiffness: 6e4,
        relaxation_x: 0.12,
        relaxation_y: 0.35,
        damping_x: 40.0,
        damping_y: 60.0,
        rolling_resistance: 0.012,
        pneumatic_trail: 0.03,
    }
}

fn road(src: &str) -> Road {
    let m = sprung_model::from_toml_str(
        &format!("[model]\nname = \"r\"\n[[roads]]\nname = \"r\"\n{src}"),
        "r.toml",
    )
    .unwrap();
    Road::from_model(&m.roads[0]).unwrap()
}

/// A wheel at (x, y) with deflection `rho` (approximately, for the given camber and heading),
/// rolling at `speed` with some side slip and yaw rate.
fn pose(road: &Road, x: f64, y: f64, rho: f64, camber: f64, heading: f64) -> MarkerState {
    let s = road.surface(x, y);
    let rot = Rotation3::from_axis_angle(&Vector3::z_axis(), heading)
        * Rotation3::from_axis_angle(&Vector3::x_axis(), camber);
    let z = s.height + (0.3 - rho) * camber.cos();
    MarkerState {
        x: Vector3::new(x, y, z),
        rot: rot.into_inner(),
        v: Vector3::new(12.0, 0.4, -0.05),
        w: Vector3::new(0.1, 12.0 / 0.295, 0.3),
    }
}

fn check(law: &dyn ElementLaw, m: MarkerState, what: &str) -> f64 {
    let markers = [m];
    let states = [0.004, -0.01];
    let x = ElementInput {
        t: 0.0,
        markers: &markers,
        states: &states,
        inputs: &[],
    };
    let mut analytic = ElementScratch::new(law);
    analytic.evaluate_with_partials(law, &x);
    let mut fd = ElementScratch::new(law);
    fd.evaluate(law, &x);
    difference_partials(law, &x, &mut fd, true, true);
    // Round-off of the central differences: a few ulps of the largest output over the step.
    let out_scale = analytic.force[0]
        .amax()
        .max(analytic.torque[0].amax())
        .max(1.0);
    let round_off = 8.0 * f64::EPSILON * out_scale / sprung_mbs::element_law::FD_RELATIVE_STEP;
    let mut worst: f64 = 0.0;
    for (a, f) in [
        (&analytic.d_position, &fd.d_position),
        (&analytic.d_velocity, &fd.d_velocity),
    ] {
        for c in 0..a.ncols() {
            let ac: Vec<f64> = a.column(c).iter().copied().collect();
            let fc: Vec<f64> = f.column(c).iter().copied().collect();
            let scale = fc.iter().chain(&ac).fold(0.0f64, |m, x| m.max(x.abs()));
            let e = column_error(&ac, &fc);
            // Truncation O(h²) of smooth pieces (measured ≤ 1e-7 relative) plus round-off.
            assert!(
                e * scale.max(1e-9) < 1e-6 * scale + round_off,
                "{what}: column {c} differs by {e:e}\nanalytic {ac:?}\ndifferenced {fc:?}"
            );
            worst = worst.max(e);
        }
    }
    worst
}

#[test]
fn element_partials_match_differences_on_every_road_and_pose() {
    let roads = [
        ("flat", road("type = \"plane\"")),
        (
            "slope",
            road("type = \"plane\"\nslope_x_deg = 5.71\nslope_y_deg = -2.0\noffset = 0.1"),
        ),
        (
            "profile",
            road(
                "type = \"profile\"\ndistance = [0, 1, 2, 3]\nelevation = [0, 0.03, -0.01, 0.0]\nangle_deg = 20",
            ),
        ),
        (
            "cleat",
            road(
                "type = \"cleat\"\nheight = 0.02\nlength = 0.2\nedge_length = 0.05\norigin = [0.9, 0]",
            ),
        ),
        ("ramp", road("type = \"ramp\"\nheight = 0.05\nlength = 0.5")),
        (
            "bump",
            road(
                "type = \"bump\"\nheight = 0.06\nlength = 0.5\norigin = [1.0, 0.0]\nangle_deg = 30",
            ),
        ),
        (
            "mu_split",
            road("type = \"plane\"\nfriction_zones = [{ mu = 0.3, y_min = 0.5 }]"),
        ),
    ];
    let stiffness = [
        VerticalStiffness::Linear { k: 2e5 },
        VerticalStiffness::Quadratic { d1: 2e5, d2: 5e5 },
        VerticalStiffness::Table {
            rho: vec![0.0, 0.02, 0.05],
            force: vec![0.0, 3000.0, 9000.0],
        },
    ];
    let mut worst: f64 = 0.0;
    for (k, st) in stiffness.into_iter().enumerate() {
        for (name, r) in &roads {
            let law = TireElement::new(tire(st.clone()), Arc::new(r.clone()));
            // (x, y, rho, camber, heading)
            for (i, &(x, y, rho, camber, heading)) in [
                (0.92, 0.1, 0.015, 0.0, 0.0),
                (0.92, 0.1, 2e-4, 0.0, 0.0),
                (0.93, -0.2, 0.01, 0.06, 0.0),
                (1.07, 0.3, 0.012, -0.04, 0.3),
                (0.25, 0.05, 0.011, 0.02, -0.2),
                (0.92, 0.1, 0.12, 0.0, 0.1),
            ]
            .iter()
            .enumerate()
            {
                let m = pose(r, x, y, rho, camber, heading);
                worst = worst.max(check(&law, m, &format!("{name}, stiffness {k}, pose {i}")));
            }
        }
    }
    eprintln!("largest column error: {worst:e}");
}

#[test]
fn lifted_off_wheel_has_only_state_partials() {
    let r = Road::flat(1.0);
    let law = TireElement::new(
        tire(VerticalStiffness::Linear { k: 2e5 }),
        Arc::new(r.clone()),
    );
    let m = pose(&r, 0.0, 0.0, -0.01, 0.0, 0.0);
    check(&law, m, "lifted off");
    let mut sc = ElementScratch::new(&law);
    let markers = [m];
    sc.evaluate_with_partials(
        &law,
        &ElementInput {
            t: 0.0,
            markers: &markers,
            states: &[0.01, 0.01],
            inputs: &[],
        },
    );
    assert_eq!(sc.force[0], Vector3::zeros());
    assert_eq!(sc.torque[0], Vector3::zeros());
    assert!(sc.d_position.rows(0, 6).amax() == 0.0);
    // The deflection states still relax (u̇ = −|v_x| u/σ − V_s).
    assert!(sc.d_velocity[(6, 6)] < 0.0);
}
