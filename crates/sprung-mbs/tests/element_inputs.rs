//! Inputs of elements of open kinds: a `signal` input (a named scalar acting on no marker) read by
//! an element through its input slot (`[[elements]] inputs = { slot = "input" }`).
//!
//! * Equivalence: a force input at a marker and the same signal read by an element that applies
//!   it at that marker give the same accelerations (the independent path is the built-in force
//!   input) — for a time signal and for a runtime value set by the caller.
//! * Errors: an unknown slot, a slot naming an unknown input, and a signal input that names a
//!   marker are refused with the element/input named and the fix stated.

use std::sync::Arc;

use nalgebra::Vector3;
use sprung_mbs::CompiledModel;
use sprung_mbs::element_law::{ElementInput, ElementLaw, ElementOutput, MarkerState, OutputInfo};
use sprung_mbs::elements::{ElementParams, ElementRegistry, KindInfo};
use sprung_mbs::pipeline::Evaluator;
use sprung_model::{InputKind, Model, OpenElement, Signal};

/// A test kind: a force of the slot's value along the global x axis at its one marker.
const SLOTS: &[OutputInfo] = &[OutputInfo {
    name: "force",
    unit: "N",
    description: "force along global x",
}];

const INFO: KindInfo = KindInfo {
    name: "pusher",
    description: "force u e_x at the marker (test kind)",
    markers: &["point"],
    parameters: &[],
    states: &[],
    outputs: &[],
    inputs: SLOTS,
};

#[derive(Debug)]
struct Pusher;

fn build(_: &ElementParams, _: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    Ok(Arc::new(Pusher))
}

impl ElementLaw for Pusher {
    fn kind(&self) -> &str {
        "pusher"
    }
    fn n_markers(&self) -> usize {
        1
    }
    fn inputs(&self) -> &[OutputInfo] {
        SLOTS
    }
    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        out.force[0] = Vector3::new(x.inputs[0], 0.0, 0.0);
        out.torque[0].fill(0.0);
    }
}

fn registry() -> ElementRegistry {
    let mut r = ElementRegistry::builtin();
    r.register(INFO, build);
    r
}

fn base() -> Model {
    let path = format!(
        "{}/../../models/maxwell_solid.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    sprung_model::load(std::path::Path::new(&path)).expect("model loads")
}

/// The model with its force input `F` turned into a signal read by a `pusher` at the same marker.
fn through_element(signal: Signal) -> Model {
    let mut m = base();
    let input = &mut m.inputs[0];
    input.kind = InputKind::Signal;
    input.marker.clear();
    input.direction = [0.0; 3];
    input.signal = signal;
    m.elements.push(OpenElement {
        name: "push".into(),
        kind: "pusher".into(),
        markers: vec!["mass_point".into()],
        parameters: Default::default(),
        inputs: [("force".to_string(), "F".to_string())]
            .into_iter()
            .collect(),
        mirror: false,
    });
    m
}

fn compile(m: &Model) -> Arc<CompiledModel> {
    Arc::new(sprung_mbs::compile_with(m, &registry()).expect("compiles"))
}

/// q at a perturbed state at time t.
fn q(model: &Arc<CompiledModel>, t: f64, runtime: Option<f64>) -> Vec<f64> {
    let mut eval = Evaluator::new(model.clone());
    if let Some(u) = runtime {
        assert!(eval.set_runtime_input(0, u));
    }
    let (mut r, mut v) = model.design_state();
    r[0] += 2e-3;
    v[0] = 0.3;
    let n = model.n_states();
    let nbv = model.n_body_v();
    v[nbv..nbv + n].fill(1e-3);
    let mut q = vec![0.0; model.n_v()];
    eval.accelerations(t, &r, &v, &mut q);
    q
}

#[test]
fn a_signal_read_by_an_element_acts_like_the_force_input_it_replaces() {
    let step = Signal::Step {
        time: 0.5,
        before: -20.0,
        after: 100.0,
    };
    let mut direct = base();
    direct.inputs[0].signal = step.clone();
    let direct = compile(&direct);
    let via = compile(&through_element(step));
    assert!(via.inputs[0].marker.is_none());
    assert_eq!(via.open_elements.last().unwrap().inputs, vec![Some(0)]);
    for t in [0.1, 0.7] {
        let (a, b) = (q(&direct, t, None), q(&via, t, None));
        for (x, y) in a.iter().zip(&b) {
            // Same forces summed in another order: round-off only.
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + x.abs()),
                "t {t}: {a:?} vs {b:?}"
            );
        }
        // And the input does act: 100 N or -20 N on 10 kg along x.
        let expected_u = if t < 0.5 { -20.0 } else { 100.0 };
        let without = {
            let mut m = base();
            m.inputs.clear();
            q(&compile(&m), t, None)
        };
        assert!((b[0] - without[0] - expected_u / 10.0).abs() < 1e-12);
    }
}

#[test]
fn a_runtime_signal_set_by_the_caller_reaches_the_element() {
    let rt = Signal::Runtime { default: 0.0 };
    let mut direct = base();
    direct.inputs[0].signal = rt.clone();
    let direct = compile(&direct);
    let via = compile(&through_element(rt));
    let (a, b) = (q(&direct, 0.3, Some(42.0)), q(&via, 0.3, Some(42.0)));
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "{a:?} vs {b:?}");
    }
    let zero = q(&via, 0.3, Some(0.0));
    assert!((b[0] - zero[0] - 4.2).abs() < 1e-12, "42 N on 10 kg");
}

#[test]
fn element_input_mistakes_are_located_and_explained() {
    // A slot the kind does not have.
    let mut m = through_element(Signal::Constant { value: 1.0 });
    m.elements.last_mut().unwrap().inputs = [("torque".to_string(), "F".to_string())]
        .into_iter()
        .collect();
    let e = sprung_mbs::compile_with(&m, &registry())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("element 'push'")
            && e.contains("unknown input slot `torque`")
            && e.contains("force"),
        "{e}"
    );
    // A slot naming an input that does not exist: caught by validation with a suggestion.
    let mut m = through_element(Signal::Constant { value: 1.0 });
    m.elements.last_mut().unwrap().inputs = [("force".to_string(), "G".to_string())]
        .into_iter()
        .collect();
    let problems = m.validate().unwrap_err().to_string();
    assert!(
        problems.contains("push")
            && problems.contains("'G'")
            && problems.contains("neither an input nor an element output"),
        "{problems}"
    );
    // A signal input with a marker.
    let mut m = through_element(Signal::Constant { value: 1.0 });
    m.inputs[0].marker = "mass_point".into();
    let problems = m.validate().unwrap_err().to_string();
    assert!(
        problems.contains("signal") && problems.contains("remove `marker`"),
        "{problems}"
    );
    // A force input without a marker.
    let mut m = base();
    m.inputs[0].marker.clear();
    let problems = m.validate().unwrap_err().to_string();
    assert!(problems.contains("without `marker`"), "{problems}");
}
