//! The FMI 3.0 co-simulation C API (FMI 3.0 standard, chapters 2 and 4; function types of
//! `fmi3FunctionTypes.h`), exported unprefixed from the shared library. The whole function set
//! of the header is exported (importers resolve every symbol when loading): the co-simulation
//! functions forward to [`Instance`] inside [`guard::call`]; model-exchange, scheduled-execution,
//! event-mode, clock and derivative functions, which `modelDescription.xml` does not declare,
//! log that and return fmi3Error. Typed get/set for types the FMU has no variables of accept
//! empty requests.

#![allow(clippy::missing_safety_doc)] // the FMI standard is the contract of every function here

use std::ffi::{CString, c_char, c_int, c_void};

use sprung::Snapshot;

use crate::FmiError;
use crate::ffi;
use crate::guard::{self, call};
use crate::instance::{Instance, Status};

/// `fmi3LogMessageCallback`.
pub type LogMessage = unsafe extern "C" fn(
    env: *mut c_void,
    status: c_int,
    category: *const c_char,
    message: *const c_char,
);

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).expect("NULs replaced")
}

fn log_fn(logger: Option<LogMessage>, env: *mut c_void) -> crate::instance::LogFn {
    Box::new(move |status: Status, category: &str, message: &str| {
        if let Some(f) = logger {
            let cat = c_string(category);
            let msg = c_string(message);
            // SAFETY: the importer's callback with valid NUL-terminated strings.
            unsafe { f(env, status as c_int, cat.as_ptr(), msg.as_ptr()) };
        }
    })
}

fn status(s: Status) -> c_int {
    s as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    inst: *mut c_void,
    logging_on: bool,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> c_int {
    // SAFETY: the FMI contract for instance pointers (guard::call).
    status(unsafe {
        call(inst.cast(), "fmi3SetDebugLogging", |i| {
            i.logging_on = logging_on;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    env: *mut c_void,
    log: Option<LogMessage>,
) -> *mut c_void {
    log_fn(log, env)(
        Status::Error,
        "logStatusError",
        "fmi3InstantiateModelExchange: this FMU supports co-simulation only",
    );
    std::ptr::null_mut()
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instance_name: *const c_char,
    token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    _early_return_allowed: bool,
    _required_intermediate: *const u32,
    _n_required_intermediate: usize,
    env: *mut c_void,
    log: Option<LogMessage>,
    _intermediate_update: *mut c_void,
) -> *mut c_void {
    // SAFETY: NUL-terminated strings or null from the importer.
    let (name, token, path) = unsafe {
        (
            ffi::string(instance_name),
            ffi::string(token),
            ffi::string(resource_path),
        )
    };
    let report = log_fn(log, env);
    let made = guard::call_without_instance(
        "fmi3InstantiateCoSimulation",
        &|m: &str| report(Status::Error, "logStatusError", m),
        || {
            if event_mode_used {
                return Err(FmiError::Instantiate(
                    "event mode was requested, but the FMU has no event mode (hasEventMode=\"false\")".into(),
                ));
            }
            let dir = ffi::resource_dir(&path)?;
            Instance::new(&name, &dir, &token, log_fn(log, env), logging_on)
        },
    );
    match made {
        Some(inst) => Box::into_raw(Box::new(inst)).cast(),
        None => std::ptr::null_mut(),
    }
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    env: *mut c_void,
    log: Option<LogMessage>,
    _clock_update: *mut c_void,
    _lock: *mut c_void,
    _unlock: *mut c_void,
) -> *mut c_void {
    log_fn(log, env)(
        Status::Error,
        "logStatusError",
        "fmi3InstantiateScheduledExecution: this FMU supports co-simulation only",
    );
    std::ptr::null_mut()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeInstance(inst: *mut c_void) {
    if !inst.is_null() {
        let _ = std::panic::catch_unwind(|| {
            // SAFETY: a pointer from fmi3InstantiateCoSimulation, freed once.
            drop(unsafe { Box::from_raw(inst.cast::<Instance>()) });
        });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    inst: *mut c_void,
    _tolerance_defined: bool,
    _tolerance: f64,
    start_time: f64,
    _stop_time_defined: bool,
    _stop_time: f64,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3EnterInitializationMode", |i| {
            i.setup_experiment(start_time)?;
            i.enter_initialisation()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitInitializationMode(inst: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3ExitInitializationMode", |i| {
            i.exit_initialisation()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterStepMode(inst: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3EnterStepMode", |i| {
            if i.phase() == crate::instance::Phase::Stepping {
                Ok(Status::Ok)
            } else {
                Err(FmiError::Sequence(
                    "fmi3EnterStepMode: the FMU has no event mode; it is in step mode after fmi3ExitInitializationMode".into(),
                ))
            }
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Terminate(inst: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3Terminate", |i| {
            i.terminate()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Reset(inst: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3Reset", |i| {
            i.reset();
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFloat64(
    inst: *mut c_void,
    vrs: *const u32,
    n_vrs: usize,
    values: *mut f64,
    n_values: usize,
) -> c_int {
    // SAFETY: as above; the arrays hold the given counts (FMI 3.0 sec. 2.2.6.2).
    status(unsafe {
        call(inst.cast(), "fmi3GetFloat64", |i| {
            let vrs = ffi::slice(vrs, n_vrs, "value references")?;
            let out = ffi::slice_mut(values, n_values, "values")?;
            i.get_real(vrs, out)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFloat64(
    inst: *mut c_void,
    vrs: *const u32,
    n_vrs: usize,
    values: *const f64,
    n_values: usize,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3SetFloat64", |i| {
            let vrs = ffi::slice(vrs, n_vrs, "value references")?;
            let vals = ffi::slice(values, n_values, "values")?;
            i.set_real(vrs, vals)?;
            Ok(Status::Ok)
        })
    })
}

/// Get/set of a type the FMU has no variables of: empty requests succeed.
unsafe fn no_variables(inst: *mut c_void, func: &str, n_vrs: usize) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), func, |_| {
            if n_vrs == 0 {
                Ok(Status::Ok)
            } else {
                Err(FmiError::Argument(format!(
                    "{func}: the FMU has no variables of this type (all its variables are Float64)"
                )))
            }
        })
    })
}

/// A function of the header that the FMU's description does not declare.
unsafe fn not_provided(inst: *mut c_void, func: &str) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), func, |_| {
            Err(FmiError::Argument(format!(
                "{func} is not provided by this FMU (co-simulation without event mode, clocks or derivatives; see modelDescription.xml)"
            )))
        })
    })
}

macro_rules! typed_get_set {
    ($($name:ident($values:ty);)*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            inst: *mut c_void,
            _vrs: *const u32,
            n_vrs: usize,
            _values: $values,
            _n_values: usize,
        ) -> c_int {
            // SAFETY: as above.
            unsafe { no_variables(inst, stringify!($name), n_vrs) }
        }
    )*};
}

typed_get_set! {
    fmi3GetFloat32(*mut f32);
    fmi3GetInt8(*mut i8);
    fmi3GetUInt8(*mut u8);
    fmi3GetInt16(*mut i16);
    fmi3GetUInt16(*mut u16);
    fmi3GetInt32(*mut i32);
    fmi3GetUInt32(*mut u32);
    fmi3GetInt64(*mut i64);
    fmi3GetUInt64(*mut u64);
    fmi3GetBoolean(*mut bool);
    fmi3GetString(*mut *const c_char);
    fmi3SetFloat32(*const f32);
    fmi3SetInt8(*const i8);
    fmi3SetUInt8(*const u8);
    fmi3SetInt16(*const i16);
    fmi3SetUInt16(*const u16);
    fmi3SetInt32(*const i32);
    fmi3SetUInt32(*const u32);
    fmi3SetInt64(*const i64);
    fmi3SetUInt64(*const u64);
    fmi3SetBoolean(*const bool);
    fmi3SetString(*const *const c_char);
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetBinary(
    inst: *mut c_void,
    _vrs: *const u32,
    n_vrs: usize,
    _sizes: *mut usize,
    _values: *mut *const u8,
    _n_values: usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(inst, "fmi3GetBinary", n_vrs) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetBinary(
    inst: *mut c_void,
    _vrs: *const u32,
    n_vrs: usize,
    _sizes: *const usize,
    _values: *const *const u8,
    _n_values: usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(inst, "fmi3SetBinary", n_vrs) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetClock(
    inst: *mut c_void,
    _vrs: *const u32,
    n_vrs: usize,
    _values: *mut bool,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(inst, "fmi3GetClock", n_vrs) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetClock(
    inst: *mut c_void,
    _vrs: *const u32,
    n_vrs: usize,
    _values: *const bool,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(inst, "fmi3SetClock", n_vrs) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfVariableDependencies(
    inst: *mut c_void,
    _vr: u32,
    _n: *mut usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(inst, "fmi3GetNumberOfVariableDependencies") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetVariableDependencies(
    inst: *mut c_void,
    _dependent: u32,
    _element_indices_of_dependent: *mut usize,
    _independents: *mut u32,
    _element_indices_of_independents: *mut usize,
    _kinds: *mut c_int,
    _n: usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(inst, "fmi3GetVariableDependencies") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFMUState(inst: *mut c_void, state: *mut *mut c_void) -> c_int {
    // SAFETY: as above; `state` points to a handle of this library or null.
    status(unsafe {
        call(inst.cast(), "fmi3GetFMUState", |i| {
            ffi::get_state(i, state.cast())
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFMUState(inst: *mut c_void, state: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3SetFMUState", |i| {
            let s = ffi::state_ref(state.cast::<Snapshot>())?;
            i.set_state(s)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeFMUState(inst: *mut c_void, state: *mut *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3FreeFMUState", |_| {
            ffi::free_state(state.cast())
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    inst: *mut c_void,
    state: *mut c_void,
    size: *mut usize,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3SerializedFMUStateSize", |_| {
            ffi::serialised_size(state.cast(), size)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    inst: *mut c_void,
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3SerializeFMUState", |_| {
            ffi::serialise(state.cast(), bytes, size)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    inst: *mut c_void,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(inst.cast(), "fmi3DeserializeFMUState", |_| {
            ffi::deserialise(bytes, size, state.cast())
        })
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3GetDirectionalDerivative(
    inst: *mut c_void,
    _unknowns: *const u32,
    _n_unknowns: usize,
    _knowns: *const u32,
    _n_knowns: usize,
    _seed: *const f64,
    _n_seed: usize,
    _sensitivity: *mut f64,
    _n_sensitivity: usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(inst, "fmi3GetDirectionalDerivative") }
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3GetAdjointDerivative(
    inst: *mut c_void,
    _unknowns: *const u32,
    _n_unknowns: usize,
    _knowns: *const u32,
    _n_knowns: usize,
    _seed: *const f64,
    _n_seed: usize,
    _sensitivity: *mut f64,
    _n_sensitivity: usize,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(inst, "fmi3GetAdjointDerivative") }
}

macro_rules! not_provided_fns {
    ($($name:ident($($arg:ident: $t:ty),*);)*) => {$(
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(inst: *mut c_void $(, $arg: $t)*) -> c_int {
            $(let _ = $arg;)*
            // SAFETY: as above.
            unsafe { not_provided(inst, stringify!($name)) }
        }
    )*};
}

not_provided_fns! {
    fmi3EnterConfigurationMode();
    fmi3ExitConfigurationMode();
    fmi3EnterEventMode();
    fmi3GetIntervalDecimal(vrs: *const u32, n: usize, intervals: *mut f64, qualifiers: *mut c_int);
    fmi3GetIntervalFraction(vrs: *const u32, n: usize, counters: *mut u64, resolutions: *mut u64, qualifiers: *mut c_int);
    fmi3GetShiftDecimal(vrs: *const u32, n: usize, shifts: *mut f64);
    fmi3GetShiftFraction(vrs: *const u32, n: usize, counters: *mut u64, resolutions: *mut u64);
    fmi3SetIntervalDecimal(vrs: *const u32, n: usize, intervals: *const f64);
    fmi3SetIntervalFraction(vrs: *const u32, n: usize, counters: *const u64, resolutions: *const u64);
    fmi3SetShiftDecimal(vrs: *const u32, n: usize, shifts: *const f64);
    fmi3SetShiftFraction(vrs: *const u32, n: usize, counters: *const u64, resolutions: *const u64);
    fmi3EvaluateDiscreteStates();
    fmi3UpdateDiscreteStates(a: *mut bool, b: *mut bool, c: *mut bool, d: *mut bool, e: *mut bool, f: *mut f64);
    fmi3EnterContinuousTimeMode();
    fmi3CompletedIntegratorStep(no_set_prior: bool, enter_event_mode: *mut bool, terminate: *mut bool);
    fmi3SetTime(time: f64);
    fmi3SetContinuousStates(x: *const f64, n: usize);
    fmi3GetContinuousStateDerivatives(dx: *mut f64, n: usize);
    fmi3GetEventIndicators(z: *mut f64, n: usize);
    fmi3GetContinuousStates(x: *mut f64, n: usize);
    fmi3GetNominalsOfContinuousStates(x: *mut f64, n: usize);
    fmi3GetNumberOfEventIndicators(n: *mut usize);
    fmi3GetNumberOfContinuousStates(n: *mut usize);
    fmi3GetOutputDerivatives(vrs: *const u32, n_vrs: usize, orders: *const i32, values: *mut f64, n_values: usize);
    fmi3ActivateModelPartition(clock: u32, time: f64);
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3DoStep(
    inst: *mut c_void,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> c_int {
    // SAFETY: as above; the out-pointers are null or writable (FMI 3.0 sec. 4.2.1).
    status(unsafe {
        call(inst.cast(), "fmi3DoStep", |i| {
            let res = i.do_step(current_communication_point, communication_step_size);
            let mut t = [0.0];
            i.get_real(&[0], &mut t)?;
            for (p, v) in [
                (event_handling_needed, false),
                (terminate_simulation, false),
                (early_return, false),
            ] {
                if !p.is_null() {
                    *p = v;
                }
            }
            if !last_successful_time.is_null() {
                *last_successful_time = t[0];
            }
            res?;
            Ok(Status::Ok)
        })
    })
}
