//! Elements of open kinds ([`sprung_mbs::element_law`]): the Maxwell element (one internal
//! state) and the anti-roll bar (three markers).
//!
//! * The assembled J_r K, J_v of models with these elements (element-state rows and columns
//!   included, plain and congruence form) agree with central differences of q at random states
//!   with velocities — the check of the chain rule from markers to bodies, of the state blocks
//!   and of the automatic differencing for a kind that declares no partials (a user kind
//!   registered on its own registry).
//!   Tolerance 1e-6 of each column's scale, as in `jacobian_fd.rs`: central differences with a
//!   scaled step of 1e-6 have truncation O(h²) and round-off O(ε/h), both far below it.
//! * Each kind's analytic partials agree with [`difference_partials`] of its own law, at the
//!   element level (the blocks each kind declares).
//! * The anti-roll bar's forces and torques balance (zero net force and moment): a law that
//!   depends only on relative positions must not push the vehicle.

mod common;

use std::sync::Arc;

use common::{Rng, random_state};
use nalgebra::{Matrix3, Vector3};
use sprung_mbs::element_law::{ElementInput, ElementScratch, MarkerState, difference_partials};
use sprung_mbs::{CompiledModel, MbsSystem};
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_test_support::{tangent_columns, worst_mechanical_jacobian_error};

fn load(name: &str) -> Arc<CompiledModel> {
    let path = format!("{}/../../models/{name}", env!("CARGO_MANIFEST_DIR"));
    let m = sprung_model::load(std::path::Path::new(&path)).expect("model loads");
    Arc::new(sprung_mbs::compile(&m).expect("model compiles"))
}

/// Worst column error of J_r (through the tangent map) and J_v against central differences of q.
fn worst_jacobian_error(model: &Arc<CompiledModel>, congruent: bool, seed: u64) -> f64 {
    let mut sys = MbsSystem::new(model.clone());
    let (nr, nv) = (sys.n_r(), sys.n_v());
    let mut lin = Linearisation::new(nr, sys.pattern());
    let mut rng = Rng(seed);
    let t = 0.8;
    let mut worst = 0.0f64;
    for _ in 0..4 {
        let (r, mut v) = random_state(&sys, &mut rng, 3e-3, 0.05, 0.4);
        for x in &mut v[model.n_body_v()..] {
            *x = rng.sym(0.01);
        }
        if congruent {
            sys.linearise_congruent(t, &r, &v, &mut lin);
            lin.expand();
        } else {
            sys.linearise(t, &r, &v, &mut lin);
        }
        let jv = lin.j_v.to_dense_row_major();
        let jrk = lin.j_rk.to_dense_row_major();
        let tangent_columns = tangent_columns(nr, nv, |e, w| sys.tangent(&r, e, w));
        let err =
            worst_mechanical_jacobian_error(&r, &v, &jrk, &jv, &tangent_columns, |r, v, out| {
                sys.accelerations(t, r, v, out)
            });
        worst = worst.max(err);
    }
    worst
}

#[test]
fn assembled_jacobians_with_open_elements_match_finite_differences() {
    for name in ["maxwell_solid.toml", "anti_roll_bar.toml"] {
        let model = load(name);
        assert!(!model.open_elements.is_empty());
        for congruent in [false, true] {
            let err = worst_jacobian_error(&model, congruent, 0x5eed_0001);
            assert!(
                err < 1e-6,
                "{name} (congruent {congruent}): worst column error {err:e}"
            );
        }
    }
}

#[test]
fn the_element_state_has_its_own_block_and_rate() {
    let model = load("maxwell_solid.toml");
    assert_eq!(model.n_states(), 1);
    assert_eq!(model.n_state_blocks, 1);
    assert_eq!(model.n_v(), 12, "one body block and one padded state block");
    let mut sys = MbsSystem::new(model.clone());
    let (r, mut v) = model.design_state();
    v[0] = 0.0;
    let xd = model.state_index(0, 0);
    v[xd] = -0.01; // damper elongation below the spring's: spring stretched by 10 mm
    let mut q = vec![0.0; model.n_v()];
    sys.accelerations(0.0, &r, &v, &mut q);
    // f = k ((L − L0) − x_d) = 1e4 · 0.01 = 100 N, tension: ẋ_d = f / c = 0.5 m/s, and the mass
    // is pulled towards the anchor (−x) by 100 N plus the 100 N step input: q_x = 0.
    assert!((q[xd] - 0.5).abs() < 1e-12, "state rate {}", q[xd]);
    assert!(q[0].abs() < 1e-12, "acceleration {}", q[0]);
    assert!(
        q[xd + 1..].iter().all(|&x| x == 0.0),
        "padding rates stay zero"
    );
}

fn random_markers(rng: &mut Rng, n: usize) -> Vec<MarkerState> {
    (0..n)
        .map(|k| {
            let th = Vector3::new(rng.sym(0.3), rng.sym(0.3), rng.sym(0.3));
            MarkerState {
                x: Vector3::new(
                    0.25 * k as f64 + rng.sym(0.05),
                    0.6 * (k as f64 - 1.0),
                    0.3 + rng.sym(0.05),
                ),
                rot: nalgebra::Rotation3::new(th).into_inner(),
                v: Vector3::new(rng.sym(1.0), rng.sym(1.0), rng.sym(1.0)),
                w: Vector3::new(rng.sym(1.0), rng.sym(1.0), rng.sym(1.0)),
            }
        })
        .collect()
}

#[test]
fn declared_element_partials_match_differences_of_the_law() {
    let mut rng = Rng(0xabcd_ef01);
    for (name, n_markers) in [("maxwell_solid.toml", 2), ("anti_roll_bar.toml", 3)] {
        let model = load(name);
        let el = &model.open_elements[0];
        let law = el.law.as_ref();
        assert_eq!(law.n_markers(), n_markers);
        for _ in 0..5 {
            let markers = random_markers(&mut rng, n_markers);
            let states: Vec<f64> = (0..law.n_states()).map(|_| rng.sym(0.02)).collect();
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
            let scale = fd.d_position.amax().max(fd.d_velocity.amax()).max(1.0);
            let err = (&analytic.d_position - &fd.d_position)
                .amax()
                .max((&analytic.d_velocity - &fd.d_velocity).amax());
            assert!(
                err < 1e-6 * scale,
                "{name}: partials differ by {err:e} (scale {scale:e})"
            );
        }
    }
}

#[test]
fn anti_roll_bar_forces_and_moments_balance() {
    let model = load("anti_roll_bar.toml");
    let law = model.open_elements[0].law.as_ref();
    let mut rng = Rng(0x0b0b_0b0b);
    for _ in 0..10 {
        let markers = random_markers(&mut rng, 3);
        let mut sc = ElementScratch::new(law);
        sc.evaluate(
            law,
            &ElementInput {
                t: 0.0,
                markers: &markers,
                states: &[],
                inputs: &[],
            },
        );
        let net_force: Vector3<f64> = sc.force.iter().sum();
        let net_moment: Vector3<f64> = markers
            .iter()
            .zip(sc.force.iter().zip(&sc.torque))
            .map(|(m, (f, t))| m.x.cross(f) + t)
            .sum();
        let scale = sc.force.iter().map(|f| f.norm()).fold(1.0, f64::max);
        assert!(net_force.norm() < 1e-12 * scale, "net force {net_force}");
        assert!(net_moment.norm() < 1e-12 * scale, "net moment {net_moment}");
        // The twist is the difference of the arm angles about the bar axis.
        let tw = sc.outputs[0];
        let angle = |k: usize| {
            let d = markers[k].x - markers[0].x;
            let r: Matrix3<f64> = markers[0].rot;
            d.dot(&r.column(2)).atan2(d.dot(&r.column(0)))
        };
        let design = (0.0f64).atan2(0.25) - (0.0f64).atan2(0.25);
        assert!((tw - (angle(1) - angle(2) - design)).abs() < 1e-12);
    }
}

/// A kind written by a library user with no partials at all: a cubic point-to-point spring,
/// registered on a registry of its own. The interface differences its partials; the assembled
/// Jacobian must still match differences of q.
mod user_kind {
    use std::sync::Arc;

    use sprung_mbs::element_law::{
        ElementInput, ElementLaw, ElementOutput, MarkerState, OutputInfo,
    };
    use sprung_mbs::elements::{ElementParams, KindInfo, ParamInfo};

    pub const INFO: KindInfo = KindInfo {
        name: "cubic_spring",
        description: "f = k1 (L - L0) + k3 (L - L0)^3 along the marker line (test kind)",
        markers: &["i", "j"],
        parameters: &[
            ParamInfo {
                name: "k1",
                unit: "N/m",
                description: "linear rate",
                default: None,
            },
            ParamInfo {
                name: "k3",
                unit: "N/m^3",
                description: "cubic rate",
                default: Some(0.0),
            },
        ],
        states: &[],
        outputs: &[],
        inputs: &[],
    };

    #[derive(Debug)]
    pub struct Cubic {
        k1: f64,
        k3: f64,
        l0: f64,
    }

    pub fn build(p: &ElementParams, d: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
        Ok(Arc::new(Cubic {
            k1: p.positive("k1")?,
            k3: p.non_negative("k3")?,
            l0: (d[0].x - d[1].x).norm(),
        }))
    }

    impl ElementLaw for Cubic {
        fn kind(&self) -> &str {
            "cubic_spring"
        }
        fn n_markers(&self) -> usize {
            2
        }
        fn outputs(&self) -> &[OutputInfo] {
            &[]
        }
        fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
            let d = x.markers[0].x - x.markers[1].x;
            let l = d.norm();
            let e = l - self.l0;
            let f = self.k1 * e + self.k3 * e * e * e;
            out.force[0] = -f * d / l;
            out.force[1] = f * d / l;
            out.torque[0].fill(0.0);
            out.torque[1].fill(0.0);
        }
    }
}

#[test]
fn a_user_kind_without_partials_is_differenced_by_the_interface() {
    let path = format!(
        "{}/../../models/maxwell_solid.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut d = sprung_model::load(std::path::Path::new(&path)).unwrap();
    d.outputs.retain(|o| o.element.is_none());
    d.elements[0].kind = "cubic_spring".into();
    d.elements[0].parameters = [
        ("k1".to_string(), sprung_model::ParamValue::Number(5e3)),
        ("k3".to_string(), sprung_model::ParamValue::Number(4e6)),
    ]
    .into_iter()
    .collect();
    // Unknown to the built-in registry: a clear error naming the known kinds.
    let e = sprung_mbs::compile(&d).unwrap_err().to_string();
    assert!(
        e.contains("unknown element kind 'cubic_spring'") && e.contains("maxwell"),
        "{e}"
    );
    let mut registry = sprung_mbs::elements::ElementRegistry::builtin();
    registry.register(user_kind::INFO, user_kind::build);
    let model = Arc::new(sprung_mbs::compile_with(&d, &registry).unwrap());
    for congruent in [false, true] {
        let err = worst_jacobian_error(&model, congruent, 0x5eed_0002);
        assert!(
            err < 1e-6,
            "congruent {congruent}: worst column error {err:e}"
        );
    }
    // A wrong parameter name is refused with the kind's parameter list.
    d.elements[0]
        .parameters
        .insert("k2".into(), sprung_model::ParamValue::Number(1.0));
    let e = sprung_mbs::compile_with(&d, &registry)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown parameter `k2`") && e.contains("k1, k3"),
        "{e}"
    );
}
