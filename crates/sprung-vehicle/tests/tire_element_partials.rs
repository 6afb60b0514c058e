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
use sprung_test_support::{CountingAllocator, allocations_in, column_error};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;
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

/// A tire element with `spin = "state"` driven and braked by fixed torques (the element's
/// inputs), as an [`ElementLaw`] for the differencing.
#[derive(Debug)]
struct Torqued<M: sprung_vehicle::tire::TireModel> {
    element: TireElement<M>,
    drive: f64,
    brake: f64,
}

impl<M: sprung_vehicle::tire::TireModel> ElementLaw for Torqued<M> {
    fn kind(&self) -> &str {
        "torqued"
    }
    fn n_markers(&self) -> usize {
        1
    }
    fn n_states(&self) -> usize {
        self.element.n_states()
    }
    fn outputs(&self) -> &[sprung_mbs::element_law::OutputInfo] {
        self.element.outputs()
    }
    fn evaluate(&self, x: &ElementInput, out: &mut sprung_mbs::element_law::ElementOutput) {
        self.element
            .evaluate_with_torques(x, self.drive, self.brake, out);
    }
    fn partials(
        &self,
        x: &ElementInput,
        jac: &mut sprung_mbs::element_law::ElementJacobian,
    ) -> sprung_mbs::element_law::Provided {
        self.element
            .partials_with_torques(x, self.drive, self.brake, jac)
    }
}

/// Like [`check`] with the element's states given.
fn check_states(law: &dyn ElementLaw, m: MarkerState, states: &[f64], what: &str) -> f64 {
    let markers = [m];
    let x = ElementInput {
        t: 0.0,
        markers: &markers,
        states,
        inputs: &[],
    };
    let mut analytic = ElementScratch::new(law);
    analytic.evaluate_with_partials(law, &x);
    let mut fd = ElementScratch::new(law);
    fd.evaluate(law, &x);
    difference_partials(law, &x, &mut fd, true, true);
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
            assert!(
                e * scale.max(1e-9) < 1e-6 * scale + round_off,
                "{what}: column {c} differs by {e:e}\nanalytic {ac:?}\ndifferenced {fc:?}"
            );
            worst = worst.max(e);
        }
    }
    worst
}

/// The spin state's partials (the wheel's spin Ω and the brake deflection z as states, the
/// carrier's rotation and angular velocity entering the wheel's) against central differences,
/// on the linear law, TMeasy and PAC2002: driving, braking while the brake slides (z = ±φ_s)
/// and while it holds (|z| < φ_s), the brake released (T_b = 0, |z| < φ_s), the wheel
/// spinning backwards against its carrier, a
/// turning and cambered carrier, on a slope and a cleat, and lifted off.
#[test]
fn spin_state_partials_match_differences() {
    use sprung_vehicle::tire_element::{Spin, SpinState};
    let spin = |inertia: f64, hub: bool| {
        Spin::State(SpinState {
            inertia,
            stick_angle: 2e-3,
            damping_time: 1e-3,
            drive_reaction_on_carrier: hub,
            initial_omega: 0.0,
        })
    };
    let params = |file: &str| {
        let src = sprung_test_support::model_text(file);
        let m = sprung_model::parse_raw(
            &format!("[model]\nname = \"t\"\n{src}"),
            sprung_model::Format::Toml,
            file,
        )
        .unwrap();
        m.elements[0].parameters.clone()
    };
    let tmeasy = {
        use sprung_vehicle::tire::TireModel;
        use sprung_vehicle::tire::tmeasy::Tmeasy;
        let info = sprung_vehicle::tire_element::kind_info::<Tmeasy>();
        let p = params("tires/car_tmeasy.toml");
        Tmeasy::from_params(&sprung_mbs::elements::ElementParams::new(&info, &p)).unwrap()
    };
    let pac = sprung_vehicle::tire::pac2002::Pac2002::from_file(&sprung_test_support::model_path(
        "tires/mf_185_80R14.tir",
    ))
    .unwrap();
    let roads = [
        road("type = \"plane\""),
        road("type = \"plane\"\nslope_x_deg = 5.71\nslope_y_deg = -2.0\noffset = 0.1"),
        road(
            "type = \"cleat\"\nheight = 0.02\nlength = 0.2\nedge_length = 0.05\norigin = [0.9, 0]",
        ),
    ];
    // (Ω, z, drive, brake): driving, sliding brake, holding brake, wheel backwards vs carrier.
    let cases = [
        (40.0, 0.0, 300.0, 0.0),
        (30.0, 2e-3, 0.0, 900.0),
        (38.0, 0.7e-3, 50.0, 1500.0),
        (-3.0, -2e-3, 0.0, 400.0),
        (0.5, -1.2e-3, 100.0, 2000.0),
        // No brake torque, the deflection inside ±φ_s (ż still follows the spin).
        (25.0, 1.5e-3, 80.0, 0.0),
    ];
    let mut worst: f64 = 0.0;
    for (ri, r) in roads.iter().enumerate() {
        // Cambered by at least 0.01 rad: PAC2002's |γ| terms have a kink at γ = 0.
        for (pi, &(x, y, rho, camber, heading)) in [
            (0.92, 0.1, 0.015, 0.01, 0.0),
            (0.93, -0.2, 0.01, 0.06, 0.3),
            (0.92, 0.1, -0.01, -0.01, 0.0),
        ]
        .iter()
        .enumerate()
        {
            let mut m = pose(r, x, y, rho, camber, heading);
            // The carrier turns (yaw, roll and a little pitch), it does not spin.
            m.w = Vector3::new(0.2, -0.4, 0.5);
            for (ci, &(omega, z, drive, brake)) in cases.iter().enumerate() {
                let what = |law: &str| format!("{law}, road {ri}, pose {pi}, case {ci}");
                let hub = ci % 2 == 0;
                let lin = Torqued {
                    element: TireElement::with_spin(
                        tire(VerticalStiffness::Quadratic { d1: 2e5, d2: 5e5 }),
                        Arc::new(r.clone()),
                        spin(1.1, hub),
                    ),
                    drive,
                    brake,
                };
                worst = worst.max(check_states(
                    &lin,
                    m,
                    &[0.004, -0.01, omega, z],
                    &what("linear"),
                ));
                let tm = Torqued {
                    element: TireElement::with_spin(
                        tmeasy.clone(),
                        Arc::new(r.clone()),
                        spin(0.9, hub),
                    ),
                    drive,
                    brake,
                };
                worst = worst.max(check_states(
                    &tm,
                    m,
                    &[0.002, -0.003, 1e-4, omega, z],
                    &what("tmeasy"),
                ));
                let pc = Torqued {
                    element: TireElement::with_spin(
                        pac.clone(),
                        Arc::new(r.clone()),
                        spin(0.9, hub),
                    ),
                    drive,
                    brake,
                };
                worst = worst.max(check_states(
                    &pc,
                    m,
                    &[0.01, -0.02, omega, z],
                    &what("pac2002"),
                ));
            }
        }
    }
    eprintln!("spin state: largest column error {worst:e}");
}

/// The laws' one-pass `evaluate_with_partials` (forces and rates from the dual-number pass that
/// gives the partials, what the element uses) against `evaluate` and `partials` called apart:
/// the same numbers up to round-off (the dual arithmetic evaluates the same expressions; 1e-12
/// relative to the largest force), at driving, braking, cornering, standstill, reversing and
/// lifted-off points.
#[test]
fn one_pass_values_equal_separate_evaluation() {
    use sprung_vehicle::tire::{SlipKinematics, TireForces, TireModel, TirePartials};
    fn compare<M: TireModel>(law: &M, name: &str) {
        let n = M::STATES.len();
        let states = [0.003, -0.004, 1e-4, 0.0];
        for (fz, vx, vy, omega, gamma) in [
            (3500.0, 20.0, -0.5, 64.0, 0.02),
            (3500.0, 20.0, 0.3, 50.0, -0.03),
            (5000.0, 5.0, 0.0, 20.0, 0.01),
            (2000.0, 0.0, 0.0, 0.0, 0.0),
            (3000.0, -4.0, 0.2, -13.0, 0.01),
            (0.0, 10.0, 0.0, 33.0, 0.0),
        ] {
            let k = SlipKinematics {
                fz,
                rho: fz / 2e5,
                vx,
                vy,
                omega,
                gamma,
                psi_dot: 0.1,
                mu_road: 0.9,
            };
            let (mut f1, mut f2) = (TireForces::default(), TireForces::default());
            let (mut r1, mut r2) = ([0.0; 4], [0.0; 4]);
            let (mut j1, mut j2) = (TirePartials::default(), TirePartials::default());
            law.evaluate(&k, &states[..n], &mut f1, &mut r1[..n]);
            law.partials(&k, &states[..n], &mut j1);
            law.evaluate_with_partials(&k, &states[..n], &mut f2, &mut r2[..n], &mut j2);
            let a: Vec<f64> = f1.as_array().into_iter().chain(r1).collect();
            let b: Vec<f64> = f2.as_array().into_iter().chain(r2).collect();
            let scale = a.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            for (x, y) in a.iter().zip(&b) {
                assert!(
                    (x - y).abs() <= 1e-12 * scale,
                    "{name} at {k:?}: {a:?} vs {b:?}"
                );
            }
            assert_eq!(j1, j2, "{name}: partials differ");
        }
    }
    compare(&tire(VerticalStiffness::Linear { k: 2e5 }), "tire_linear");
    let tmeasy = {
        use sprung_vehicle::tire::tmeasy::Tmeasy;
        let info = sprung_vehicle::tire_element::kind_info::<Tmeasy>();
        let src = sprung_test_support::model_text("tires/car_tmeasy.toml");
        let m = sprung_model::parse_raw(
            &format!("[model]\nname = \"t\"\n{src}"),
            sprung_model::Format::Toml,
            "car_tmeasy.toml",
        )
        .unwrap();
        let p = m.elements[0].parameters.clone();
        Tmeasy::from_params(&sprung_mbs::elements::ElementParams::new(&info, &p)).unwrap()
    };
    compare(&tmeasy, "tmeasy");
    for file in [
        "tires/mf_185_80R14.tir",
        "tires/335_65R22_5_G275MSA_60psi.tir",
    ] {
        let path = sprung_test_support::model_path(file);
        let pac = sprung_vehicle::tire::pac2002::Pac2002::from_file(&path).unwrap();
        compare(&pac, file);
    }
}

/// The spin-state element (TMeasy) evaluates and forms its partials without allocating (it runs
/// inside the real-time step).
#[test]
fn spin_state_evaluation_allocates_nothing() {
    use sprung_vehicle::tire::TireModel;
    use sprung_vehicle::tire::tmeasy::Tmeasy;
    use sprung_vehicle::tire_element::{Spin, SpinState};
    let info = sprung_vehicle::tire_element::kind_info::<Tmeasy>();
    let src = sprung_test_support::model_text("tires/car_tmeasy.toml");
    let m = sprung_model::parse_raw(
        &format!("[model]\nname = \"t\"\n{src}"),
        sprung_model::Format::Toml,
        "car_tmeasy.toml",
    )
    .unwrap();
    let p = m.elements[0].parameters.clone();
    let law = Tmeasy::from_params(&sprung_mbs::elements::ElementParams::new(&info, &p)).unwrap();
    let r = Road::flat(1.0);
    let element = TireElement::with_spin(
        law,
        Arc::new(r.clone()),
        Spin::State(SpinState {
            inertia: 1.2,
            stick_angle: 2e-3,
            damping_time: 1e-3,
            drive_reaction_on_carrier: true,
            initial_omega: 30.0,
        }),
    );
    let markers = [pose(&r, 0.0, 0.0, 0.012, 0.01, 0.0)];
    let states = [0.001, -0.002, 0.0, 30.0, 1e-3];
    let x = ElementInput {
        t: 0.0,
        markers: &markers,
        states: &states,
        inputs: &[100.0, 500.0],
    };
    let mut sc = ElementScratch::new(&element);
    sc.evaluate_with_partials(&element, &x);
    let n = allocations_in(|| {
        for _ in 0..100 {
            sc.evaluate_with_partials(&element, &x);
        }
    });
    assert_eq!(n, 0);
    // The inputs reach the spin: drive 100 N m and the brake's torque are in the outputs.
    let k = element
        .outputs()
        .iter()
        .position(|o| o.name == "drive_torque")
        .unwrap();
    assert_eq!(sc.outputs[k], 100.0);
}

/// Bad spin settings are refused when the model compiles, naming the parameter and the fix.
#[test]
fn bad_spin_parameters_give_clear_errors() {
    use sprung_model::ParamValue;
    let base = sprung_model::load(&sprung_test_support::model_path("quarter_car.toml")).unwrap();
    let cases: [(&[(&str, ParamValue)], &str); 5] = [
        (
            &[("spin", ParamValue::Text("wheel".into()))],
            "use \"body\"",
        ),
        (
            &[("spin", ParamValue::Text("state".into()))],
            "needs spin_inertia",
        ),
        (
            &[("spin_inertia", ParamValue::Number(1.2))],
            "applies to spin = \"state\" only",
        ),
        (
            &[
                ("spin", ParamValue::Text("state".into())),
                ("spin_inertia", ParamValue::Number(-1.0)),
            ],
            "must be positive",
        ),
        (
            &[
                ("spin", ParamValue::Text("state".into())),
                ("spin_inertia", ParamValue::Number(1.2)),
                ("drive_reaction", ParamValue::Text("chassis".into())),
            ],
            "\"carrier\"",
        ),
    ];
    for (set, expected) in cases {
        let mut m = base.clone();
        for (k, v) in set {
            m.elements[0].parameters.insert(k.to_string(), v.clone());
        }
        let err = sprung_mbs::compile_with(&m, &sprung_vehicle::registry())
            .err()
            .unwrap_or_else(|| panic!("{set:?} was accepted"))
            .to_string();
        assert!(
            err.contains(expected) && err.contains("tire"),
            "{set:?}: error '{err}' should name the element and say {expected}"
        );
    }
}

/// The brake deflection's sliding state z = sgn(Ω_r) φ_s is an exact fixed point (module docs,
/// "Initial brake deflection"): its rate is exactly 0 — not round-off — for spin rates of either
/// sign and size relative to a turning carrier, with and without brake torque, in `evaluate`
/// and in the one-pass `evaluate_with_partials` (scalar and AVX paths); and the element starts
/// there: z₀ = sgn(Ω₀) φ_s (0 for a wheel at rest).
#[test]
fn brake_deflection_starts_on_its_exact_sliding_fixed_point() {
    use sprung_vehicle::tire_element::{Spin, SpinState};
    let r = Road::flat(1.0);
    let m = {
        let mut m = pose(&r, 0.0, 0.0, 0.012, 0.01, 0.0);
        m.w = Vector3::new(0.2, -0.4, 0.5);
        m
    };
    let a_w = m.rot.column(1).dot(&m.w);
    let element = |omega0: f64| {
        TireElement::with_spin(
            tire(VerticalStiffness::Quadratic { d1: 2e5, d2: 5e5 }),
            Arc::new(r.clone()),
            Spin::State(SpinState {
                inertia: 1.1,
                stick_angle: 2e-3,
                damping_time: 1e-3,
                drive_reaction_on_carrier: true,
                initial_omega: omega0,
            }),
        )
    };
    for (omega0, z0) in [(63.85, 2e-3), (-7.0, -2e-3), (0.0, 0.0)] {
        let e = element(omega0);
        let mut s = vec![f64::NAN; e.n_states()];
        e.initial_states(&mut s);
        assert_eq!((s[2], s[3]), (omega0, z0), "initial states {s:?}");
    }
    for omega in [63.85, 1e-3, 123.456, -0.37, -70.1] {
        let z = (omega - a_w).signum() * 2e-3;
        for brake in [0.0, 900.0] {
            let law = element(omega);
            let states = [0.004, -0.01, omega, z];
            let markers = [m];
            let inputs = [50.0, brake];
            let x = ElementInput {
                t: 0.0,
                markers: &markers,
                states: &states,
                inputs: &inputs,
            };
            let mut sc = ElementScratch::new(&law);
            sc.evaluate(&law, &x);
            assert_eq!(sc.state_rates[3], 0.0, "Ω {omega}, T_b {brake}: evaluate");
            sc.evaluate_with_partials(&law, &x);
            assert_eq!(sc.state_rates[3], 0.0, "Ω {omega}, T_b {brake}: one pass");
        }
    }
}
