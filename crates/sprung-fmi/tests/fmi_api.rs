//! The exported FMI functions called directly through the rlib, against the facade driven by
//! hand (the second path): stepping, the step-multiple rule, FMU states, the error and panic
//! paths.

mod common;

use std::ffi::{CString, c_void};
use std::ptr::null_mut;

use common::*;
use sprung_fmi::{FmiVersion, fmi2, fmi3};

const OK: i32 = 0;
const ERROR: i32 = 3;

/// An FMI 3 instance of `model` (packed and unpacked), with the test logger.
fn instantiate3(model: &std::path::Path, dir: &std::path::Path) -> *mut c_void {
    let (resources, token) = unpacked(model, FmiVersion::V3, dir);
    let name = CString::new("test").unwrap();
    let token = CString::new(token).unwrap();
    let path = CString::new(format!("{}/", resources.display())).unwrap();
    // SAFETY: valid strings; the callback has the fmi3LogMessageCallback signature.
    let inst = unsafe {
        fmi3::fmi3InstantiateCoSimulation(
            name.as_ptr(),
            token.as_ptr(),
            path.as_ptr(),
            false,
            false,
            false,
            false,
            std::ptr::null(),
            0,
            null_mut(),
            Some(log_message),
            null_mut(),
        )
    };
    assert!(
        !inst.is_null(),
        "instantiation failed: {:?}",
        LOG.lock().unwrap()
    );
    inst
}

fn logged() -> String {
    LOG.lock()
        .unwrap()
        .iter()
        .map(|(_, m)| m.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// FMI 3: the FMU's outputs equal those of a `Simulation` stepped by hand with the same
/// inputs, bit for bit (the FMU is a thin layer over the facade); a communication step of
/// three internal steps equals three of one.
#[test]
fn fmi3_steps_like_the_facade() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("fmi3-facade");
    let model = write_model(&dir, "msd.toml", &msd_runtime_text());
    let inst = instantiate3(&model, &dir);
    let mut sim = sprung::Simulation::from_file(&model).unwrap();
    // vr: 0 time, 1 F, 2 x, 3 v, 4 spring_force.
    unsafe {
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(
            fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [10.0].as_ptr(), 1),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
    }
    sim.set_input("F", 10.0).unwrap();
    let mut t = 0.0;
    for k in 0..200 {
        let n = if k % 2 == 0 { 1 } else { 3 };
        let h = n as f64 * 1e-3;
        let mut last = 0.0;
        let mut flags = [false; 3];
        let st = unsafe {
            fmi3::fmi3DoStep(
                inst,
                t,
                h,
                false,
                &mut flags[0],
                &mut flags[1],
                &mut flags[2],
                &mut last,
            )
        };
        assert_eq!(st, OK, "{}", logged());
        for _ in 0..n {
            sim.step().unwrap();
        }
        t = sim.time();
        assert_eq!(last, t);
        let mut y = [0.0; 4];
        unsafe {
            assert_eq!(
                fmi3::fmi3GetFloat64(inst, [0, 2, 3, 4].as_ptr(), 4, y.as_mut_ptr(), 4),
                OK
            )
        };
        let c = sim.channel_values();
        assert_eq!(y, [t, c[0], c[1], c[2]]);
    }
    // The 10 N force acts along −x (direction [−1, 0, 0]): the mass moves towards x = −0.1 m.
    assert!(sim.channel("x").unwrap() < -0.05);
    unsafe { fmi3::fmi3FreeInstance(inst) };
}

/// A communication step that is not a whole number of internal steps is rejected with
/// fmi3Error and a message naming the internal step; the instance stays usable.
#[test]
fn non_multiple_communication_step_is_rejected() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LOG.lock().unwrap().clear();
    let dir = temp_dir("non-multiple");
    let model = write_model(&dir, "msd.toml", &msd_runtime_text());
    let inst = instantiate3(&model, &dir);
    unsafe {
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
        let mut last = 0.0;
        let mut f = [false; 3];
        let st = fmi3::fmi3DoStep(
            inst, 0.0, 1.5e-3, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, ERROR);
        let log = logged();
        assert!(
            log.contains("communication step 0.0015 s is not a whole multiple of the internal fixed step 0.001 s"),
            "{log}"
        );
        assert_eq!(last, 0.0);
        // Still usable: a valid step follows.
        let st = fmi3::fmi3DoStep(
            inst, 0.0, 2e-3, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, OK, "{}", logged());
        assert_eq!(last, 2e-3);
        fmi3::fmi3FreeInstance(inst);
    }
}

/// The step-multiple rule itself: accepted with the round-off of accumulated times, rejected
/// with a half step, the nearest valid steps named.
#[test]
fn step_multiple_rule() {
    use sprung_fmi::Instance;
    assert_eq!(Instance::steps_in(3e-3, 1e-3).unwrap(), 3);
    // FMPy's H = t0 + (n+1)·H − t: 5.001 − 5.0 = 0.0009999999999994458.
    assert_eq!(Instance::steps_in(5.001 - 5.0, 1e-3).unwrap(), 1);
    assert_eq!(Instance::steps_in(0.0, 1e-3).unwrap(), 0);
    let e = Instance::steps_in(2.5e-3, 1e-3).unwrap_err().to_string();
    assert!(e.contains("such as 0.002 s or 0.003 s"), "{e}");
    assert!(Instance::steps_in(1e-3 * (1.0 + 1e-5), 1e-3).is_err());
    assert!(Instance::steps_in(-1e-3, 1e-3).is_err());
    assert!(Instance::steps_in(f64::NAN, 1e-3).is_err());
}

/// FMU state: get → serialise → deserialise → set, then stepping on repeats the outputs bit for
/// bit (the snapshot carries the integrator's linearisation point and the inputs).
#[test]
fn fmu_state_round_trip_repeats_the_run() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("state");
    let model = write_model(&dir, "msd.toml", &msd_runtime_text());
    let inst = instantiate3(&model, &dir);
    let mut f = [false; 3];
    let mut last = 0.0;
    let mut run = |t0: f64, steps: usize| -> Vec<f64> {
        let mut out = Vec::new();
        for k in 0..steps {
            let t = t0 + k as f64 * 1e-3;
            let u = if k % 50 < 25 { 10.0 } else { -5.0 };
            let mut y = [0.0; 2];
            unsafe {
                assert_eq!(
                    fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [u].as_ptr(), 1),
                    OK
                );
                assert_eq!(
                    fmi3::fmi3DoStep(
                        inst, t, 1e-3, false, &mut f[0], &mut f[1], &mut f[2], &mut last
                    ),
                    OK
                );
                assert_eq!(
                    fmi3::fmi3GetFloat64(inst, [2, 3].as_ptr(), 2, y.as_mut_ptr(), 2),
                    OK
                );
            }
            out.extend(y);
        }
        out
    };
    unsafe {
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
    }
    run(0.0, 100);
    let mut state: *mut c_void = null_mut();
    let mut size = 0usize;
    let bytes = unsafe {
        assert_eq!(
            fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [3.0].as_ptr(), 1),
            OK
        );
        assert_eq!(fmi3::fmi3GetFMUState(inst, &mut state), OK);
        assert_eq!(fmi3::fmi3SerializedFMUStateSize(inst, state, &mut size), OK);
        let mut bytes = vec![0u8; size];
        assert_eq!(
            fmi3::fmi3SerializeFMUState(inst, state, bytes.as_mut_ptr(), size),
            OK
        );
        assert_eq!(fmi3::fmi3FreeFMUState(inst, &mut state), OK);
        assert!(state.is_null());
        bytes
    };
    let first = run(0.1, 150);
    unsafe {
        let mut restored: *mut c_void = null_mut();
        assert_eq!(
            fmi3::fmi3DeserializeFMUState(inst, bytes.as_ptr(), bytes.len(), &mut restored),
            OK
        );
        assert_eq!(fmi3::fmi3SetFMUState(inst, restored), OK);
        let mut u = [0.0];
        assert_eq!(
            fmi3::fmi3GetFloat64(inst, [1].as_ptr(), 1, u.as_mut_ptr(), 1),
            OK
        );
        assert_eq!(u[0], 3.0, "the input comes back with the state");
        assert_eq!(fmi3::fmi3FreeFMUState(inst, &mut restored), OK);
    }
    let second = run(0.1, 150);
    assert_eq!(first, second);
    unsafe { fmi3::fmi3FreeInstance(inst) };
}

/// A diverging model: doStep returns fmi3Error with the facade's located message (the body
/// passing the plausibility bound), the last successful time is where it stopped, and the
/// instance refuses further steps until reset.
#[test]
fn diverging_model_reports_an_error() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LOG.lock().unwrap().clear();
    let dir = temp_dir("diverging");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/models/diverging.toml");
    let model = write_model(
        &dir,
        "diverging.toml",
        &std::fs::read_to_string(src).unwrap(),
    );
    let inst = instantiate3(&model, &dir);
    let mut f = [false; 3];
    let mut last = 0.0;
    unsafe {
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(
            fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [10.0].as_ptr(), 1),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
        let mut before: *mut c_void = null_mut();
        assert_eq!(fmi3::fmi3GetFMUState(inst, &mut before), OK);
        let st = fmi3::fmi3DoStep(
            inst, 0.0, 3.0, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, ERROR);
        let log = logged();
        assert!(log.contains("fmi3DoStep: step from t = "), "{log}");
        assert!(log.contains("mass"), "the message names the body: {log}");
        // x grows like (F/k)(cosh(10 t) − 1): 0.5 m at t = acosh(6)/10 = 0.248 s.
        assert!((last - 0.248).abs() < 0.01, "stopped at {last}");
        let st = fmi3::fmi3DoStep(
            inst, last, 1e-3, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, ERROR);
        assert!(logged().contains("reset or free the instance"));
        // Restoring a state from before the failure returns to step mode at t = 0.
        assert_eq!(fmi3::fmi3SetFMUState(inst, before), OK);
        let st = fmi3::fmi3DoStep(
            inst, 0.0, 0.01, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, OK);
        assert_eq!(last, 0.01);
        assert_eq!(fmi3::fmi3FreeFMUState(inst, &mut before), OK);
        assert_eq!(fmi3::fmi3Reset(inst), OK);
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
        let st = fmi3::fmi3DoStep(
            inst, 0.0, 0.1, false, &mut f[0], &mut f[1], &mut f[2], &mut last,
        );
        assert_eq!(st, OK, "after reset (F back to 0) the mass stays at rest");
        fmi3::fmi3FreeInstance(inst);
    }
}

/// A panic inside an FMI call is caught, logged with the function name and returned as an
/// error status; the instance is then failed until reset.
#[test]
fn panic_is_caught_and_logged() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("panic");
    let model = write_model(&dir, "msd.toml", &msd_runtime_text());
    let log: std::rc::Rc<std::cell::RefCell<Vec<String>>> = Default::default();
    let sink = log.clone();
    let m = sprung::Model::from_file(&model).unwrap();
    let inst = sprung_fmi::Instance::with_model(
        "p",
        m,
        Box::new(move |_, _, msg| sink.borrow_mut().push(msg.to_string())),
        false,
    )
    .unwrap();
    let ptr = Box::into_raw(Box::new(inst));
    let st = unsafe {
        sprung_fmi::guard::call(ptr, "fmi3DoStep", |_| -> Result<sprung_fmi::Status, _> {
            panic!("index out of bounds in a test")
        })
    };
    assert_eq!(st, sprung_fmi::Status::Error);
    assert!(
        log.borrow()[0]
            .contains("fmi3DoStep: internal error (panic: index out of bounds in a test)")
    );
    let inst = unsafe { Box::from_raw(ptr) };
    assert_eq!(inst.phase(), sprung_fmi::instance::Phase::Failed);
    // A null instance is an error, not a crash.
    assert_eq!(unsafe { fmi3::fmi3Terminate(null_mut()) }, ERROR);
    assert_eq!(unsafe { fmi2::fmi2Terminate(null_mut()) }, ERROR);
}

/// FMI 2 entry points (without a logger: stable Rust cannot define the variadic callback):
/// the same run as FMI 3, bit for bit, and a wrong GUID is refused.
#[test]
fn fmi2_matches_fmi3() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("fmi2");
    let model = write_model(&dir, "msd.toml", &msd_runtime_text());
    let (resources, token) = unpacked(&model, FmiVersion::V2, &dir.join("v2"));
    let uri = CString::new(format!("file://{}", resources.display())).unwrap();
    let name = CString::new("v2").unwrap();
    let guid = CString::new(token).unwrap();
    let callbacks = fmi2::CallbackFunctions {
        logger: None,
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: null_mut(),
    };
    let wrong = CString::new("{00000000-0000-0000-0000-000000000000}").unwrap();
    unsafe {
        let bad = fmi2::fmi2Instantiate(
            name.as_ptr(),
            1,
            wrong.as_ptr(),
            uri.as_ptr(),
            &callbacks,
            0,
            0,
        );
        assert!(bad.is_null());
        let me = fmi2::fmi2Instantiate(
            name.as_ptr(),
            0,
            guid.as_ptr(),
            uri.as_ptr(),
            &callbacks,
            0,
            0,
        );
        assert!(me.is_null(), "model exchange is refused");
    }
    let c = unsafe {
        fmi2::fmi2Instantiate(
            name.as_ptr(),
            1,
            guid.as_ptr(),
            uri.as_ptr(),
            &callbacks,
            0,
            0,
        )
    };
    assert!(!c.is_null());
    let i3 = instantiate3(&model, &dir.join("v3"));
    let mut f = [false; 3];
    let mut last = 0.0;
    unsafe {
        assert_eq!(fmi2::fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2::fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2::fmi2ExitInitializationMode(c), OK);
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(i3, false, 0.0, 0.0, false, 0.0),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(i3), OK);
        for k in 0..300 {
            let t = k as f64 * 2e-3;
            let u = if k < 100 { 10.0 } else { 0.0 };
            assert_eq!(fmi2::fmi2SetReal(c, [1].as_ptr(), 1, [u].as_ptr()), OK);
            assert_eq!(
                fmi3::fmi3SetFloat64(i3, [1].as_ptr(), 1, [u].as_ptr(), 1),
                OK
            );
            assert_eq!(fmi2::fmi2DoStep(c, t, 2e-3, 1), OK);
            assert_eq!(
                fmi3::fmi3DoStep(
                    i3, t, 2e-3, true, &mut f[0], &mut f[1], &mut f[2], &mut last
                ),
                OK
            );
            let (mut y2, mut y3) = ([0.0; 4], [0.0; 4]);
            assert_eq!(
                fmi2::fmi2GetReal(c, [0, 2, 3, 4].as_ptr(), 4, y2.as_mut_ptr()),
                OK
            );
            assert_eq!(
                fmi3::fmi3GetFloat64(i3, [0, 2, 3, 4].as_ptr(), 4, y3.as_mut_ptr(), 4),
                OK
            );
            assert_eq!(y2, y3);
        }
        // Setting an output is an error.
        assert_eq!(fmi2::fmi2SetReal(c, [2].as_ptr(), 1, [1.0].as_ptr()), ERROR);
        assert_eq!(fmi2::fmi2Terminate(c), OK);
        fmi2::fmi2FreeInstance(c);
        fmi3::fmi3FreeInstance(i3);
    }
}

/// A parameter set before initialisation rebuilds the model (`Model::with_parameters`): the FMU
/// then steps bit for bit like a `Simulation` of the rebuilt model and settles at the static
/// deflection −F/c of the new rate; after initialisation the parameter is fixed.
#[test]
fn parameters_are_tunable_before_initialisation() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LOG.lock().unwrap().clear();
    let dir = temp_dir("parameters");
    let model = write_model(&dir, "msd_p.toml", &msd_parameter_text());
    let inst = instantiate3(&model, &dir);
    // vr: 0 time, 1 stiffness, 2 F, 3 x, 4 v, 5 spring_force.
    let base = sprung::Model::from_file(&model).unwrap();
    let rebuilt = std::sync::Arc::new(base.with_parameters(&[("stiffness", 400.0)]).unwrap());
    let mut sim = sprung::Simulation::new(rebuilt).unwrap();
    sim.set_input("F", 10.0).unwrap();
    let mut f = [false; 3];
    let mut last = 0.0;
    unsafe {
        let mut k = [0.0];
        assert_eq!(
            fmi3::fmi3GetFloat64(inst, [1].as_ptr(), 1, k.as_mut_ptr(), 1),
            OK
        );
        assert_eq!(k[0], 100.0, "start value = the declared value");
        assert_eq!(
            fmi3::fmi3EnterInitializationMode(inst, false, 0.0, 0.0, false, 0.0),
            OK
        );
        // Set in initialisation mode: takes effect at ExitInitializationMode.
        assert_eq!(
            fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [400.0].as_ptr(), 1),
            OK
        );
        assert_eq!(
            fmi3::fmi3SetFloat64(inst, [2].as_ptr(), 1, [10.0].as_ptr(), 1),
            OK
        );
        assert_eq!(fmi3::fmi3ExitInitializationMode(inst), OK);
        for k in 0..3000 {
            let t = k as f64 * 1e-3;
            assert_eq!(
                fmi3::fmi3DoStep(
                    inst, t, 1e-3, false, &mut f[0], &mut f[1], &mut f[2], &mut last
                ),
                OK
            );
            sim.step().unwrap();
        }
        let mut y = [0.0; 2];
        assert_eq!(
            fmi3::fmi3GetFloat64(inst, [3, 5].as_ptr(), 2, y.as_mut_ptr(), 2),
            OK
        );
        let c = sim.channel_values();
        assert_eq!(y, [c[0], c[2]]);
        // ζ = d/(2√(cm)) = 0.05, decay e^{−ζω t} = e^{−3} after 3 s: within 5 % of −F/c.
        assert!(
            (y[0] - (-10.0 / 400.0)).abs() < 0.05 * 0.025,
            "x = {}",
            y[0]
        );
        let st = fmi3::fmi3SetFloat64(inst, [1].as_ptr(), 1, [200.0].as_ptr(), 1);
        assert_eq!(st, ERROR);
        assert!(logged().contains("parameter 'stiffness' is fixed after initialisation"));
        fmi3::fmi3FreeInstance(inst);
    }
}
