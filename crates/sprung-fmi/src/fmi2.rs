//! The FMI 2.0 co-simulation C API (FMI 2.0.4 standard, chapters 2 and 4; function types of
//! `fmi2FunctionTypes.h`), exported unprefixed from the shared library. Each function
//! forwards to [`Instance`] inside [`guard::call`]; model-exchange functions are not exported
//! (the FMU declares co-simulation only). Functions for value types the FMU does not have
//! (Integer, Boolean, String) accept empty requests and reject any value reference.

#![allow(clippy::missing_safety_doc)] // the FMI standard is the contract of every function here

use std::ffi::{CString, c_char, c_int, c_uint, c_void};

use sprung::Snapshot;

use crate::FmiError;
use crate::ffi;
use crate::guard::{self, call};
use crate::instance::{Instance, Status};

/// `fmi2CallbackLogger` (variadic: the message is a printf format).
pub type Logger = unsafe extern "C" fn(
    env: *mut c_void,
    instance_name: *const c_char,
    status: c_int,
    category: *const c_char,
    message: *const c_char,
    ...
);

/// `fmi2CallbackFunctions`.
#[repr(C)]
pub struct CallbackFunctions {
    /// Logger.
    pub logger: Option<Logger>,
    /// calloc-like allocator (unused: the FMU allocates with Rust's allocator).
    pub allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    /// free-like (unused).
    pub free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    /// Asynchronous step finished (unused: steps are synchronous).
    pub step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    /// Passed back to the logger.
    pub component_environment: *mut c_void,
}

const CO_SIMULATION: c_int = 1;
/// `fmi2LastSuccessfulTime` of `fmi2StatusKind`.
const LAST_SUCCESSFUL_TIME: c_int = 2;
/// `fmi2Terminated`.
const TERMINATED: c_int = 3;

/// A C string without interior NULs.
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).expect("NULs replaced")
}

/// The log function for an instance: messages are passed as the format string with `%`
/// escaped.
fn log_fn(logger: Option<Logger>, env: *mut c_void, name: &str) -> crate::instance::LogFn {
    let name = c_string(name);
    Box::new(move |status: Status, category: &str, message: &str| {
        if let Some(f) = logger {
            let cat = c_string(category);
            let msg = c_string(&message.replace('%', "%%"));
            // SAFETY: the importer's logger with valid NUL-terminated strings.
            unsafe {
                f(
                    env,
                    name.as_ptr(),
                    status as c_int,
                    cat.as_ptr(),
                    msg.as_ptr(),
                )
            };
        }
    })
}

fn status(s: Status) -> c_int {
    s as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    logging_on: c_int,
) -> *mut c_void {
    // SAFETY: the importer passes NUL-terminated strings or null.
    let (name, guid, location) = unsafe {
        (
            ffi::string(instance_name),
            ffi::string(guid),
            ffi::string(resource_location),
        )
    };
    let (logger, env) = if functions.is_null() {
        (None, std::ptr::null_mut())
    } else {
        // SAFETY: a valid fmi2CallbackFunctions pointer (FMI 2.0 sec. 2.1.5).
        let f = unsafe { &*functions };
        (f.logger, f.component_environment)
    };
    let report = log_fn(logger, env, &name);
    let made = guard::call_without_instance(
        "fmi2Instantiate",
        &|m: &str| report(Status::Error, "logStatusError", m),
        || {
            if fmu_type != CO_SIMULATION {
                return Err(FmiError::Instantiate(
                    "this FMU supports co-simulation only (fmi2CoSimulation)".into(),
                ));
            }
            let dir = ffi::resource_dir(&location)?;
            Instance::new(
                &name,
                &dir,
                &guid,
                log_fn(logger, env, &name),
                logging_on != 0,
            )
        },
    );
    match made {
        Some(inst) => Box::into_raw(Box::new(inst)).cast(),
        None => std::ptr::null_mut(),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
    if !c.is_null() {
        // A panic while dropping must not unwind into the importer.
        let _ = std::panic::catch_unwind(|| {
            // SAFETY: a pointer from fmi2Instantiate, freed once (FMI 2.0 sec. 2.1.5).
            drop(unsafe { Box::from_raw(c.cast::<Instance>()) });
        });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: *mut c_void,
    logging_on: c_int,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> c_int {
    // SAFETY: the FMI contract for component pointers (guard::call).
    status(unsafe {
        call(c.cast(), "fmi2SetDebugLogging", |i| {
            i.logging_on = logging_on != 0;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: *mut c_void,
    _tolerance_defined: c_int,
    _tolerance: f64,
    start_time: f64,
    _stop_time_defined: c_int,
    _stop_time: f64,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2SetupExperiment", |i| {
            i.setup_experiment(start_time)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2EnterInitializationMode", |i| {
            i.enter_initialisation()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2ExitInitializationMode", |i| {
            i.exit_initialisation()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2Terminate", |i| {
            i.terminate()?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2Reset", |i| {
            i.reset();
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *mut f64,
) -> c_int {
    // SAFETY: as above; the arrays hold nvr elements (FMI 2.0 sec. 2.1.7).
    status(unsafe {
        call(c.cast(), "fmi2GetReal", |i| {
            let vrs = ffi::slice(vr, nvr, "value references")?;
            let out = ffi::slice_mut(value, nvr, "values")?;
            i.get_real(vrs, out)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *const f64,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2SetReal", |i| {
            let vrs = ffi::slice(vr, nvr, "value references")?;
            let vals = ffi::slice(value, nvr, "values")?;
            i.set_real(vrs, vals)?;
            Ok(Status::Ok)
        })
    })
}

/// Get/set of a type the FMU has no variables of: empty requests succeed.
unsafe fn no_variables(c: *mut c_void, func: &str, kind: &str, nvr: usize) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), func, |_| {
            if nvr == 0 {
                Ok(Status::Ok)
            } else {
                Err(FmiError::Argument(format!(
                    "the FMU has no {kind} variables (all its variables are Real)"
                )))
            }
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetInteger(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *mut c_int,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2GetInteger", "Integer", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *mut c_int,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2GetBoolean", "Boolean", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *mut *const c_char,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2GetString", "String", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetInteger(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *const c_int,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2SetInteger", "Integer", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *const c_int,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2SetBoolean", "Boolean", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *const *const c_char,
) -> c_int {
    // SAFETY: as above.
    unsafe { no_variables(c, "fmi2SetString", "String", nvr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(c: *mut c_void, state: *mut *mut c_void) -> c_int {
    // SAFETY: as above; `state` points to a handle of this library or null.
    status(unsafe {
        call(c.cast(), "fmi2GetFMUstate", |i| {
            ffi::get_state(i, state.cast())
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: *mut c_void, state: *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2SetFMUstate", |i| {
            let s = ffi::state_ref(state.cast::<Snapshot>())?;
            i.set_state(s)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: *mut c_void, state: *mut *mut c_void) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2FreeFMUstate", |_| {
            ffi::free_state(state.cast())
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: *mut c_void,
    state: *mut c_void,
    size: *mut usize,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2SerializedFMUstateSize", |_| {
            ffi::serialised_size(state.cast(), size)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2SerializeFMUstate", |_| {
            ffi::serialise(state.cast(), bytes, size)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: *mut c_void,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2DeSerializeFMUstate", |_| {
            ffi::deserialise(bytes, size, state.cast())
        })
    })
}

/// A function the FMU does not provide (its capability flag in modelDescription.xml is false).
unsafe fn not_provided(c: *mut c_void, func: &str) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), func, |_| {
            Err(FmiError::Argument(format!(
                "{func} is not provided by this FMU (see its modelDescription.xml capabilities)"
            )))
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: *mut c_void,
    _unknowns: *const c_uint,
    _n_unknowns: usize,
    _knowns: *const c_uint,
    _n_knowns: usize,
    _dv_known: *const f64,
    _dv_unknown: *mut f64,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2GetDirectionalDerivative") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: *mut c_void,
    _vr: *const c_uint,
    _nvr: usize,
    _order: *const c_int,
    _value: *const f64,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2SetRealInputDerivatives") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: *mut c_void,
    _vr: *const c_uint,
    _nvr: usize,
    _order: *const c_int,
    _value: *mut f64,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2GetRealOutputDerivatives") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    c: *mut c_void,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: c_int,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2DoStep", |i| {
            i.do_step(current_communication_point, communication_step_size)?;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: *mut c_void) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2CancelStep (steps are synchronous)") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(c: *mut c_void, _kind: c_int, _value: *mut c_int) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2GetStatus (steps are synchronous)") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(c: *mut c_void, kind: c_int, value: *mut f64) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2GetRealStatus", |i| {
            if kind != LAST_SUCCESSFUL_TIME || value.is_null() {
                return Err(FmiError::Argument(
                    "only fmi2LastSuccessfulTime is available as a Real status".into(),
                ));
            }
            let mut t = [0.0];
            i.get_real(&[0], &mut t)?;
            *value = t[0];
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: *mut c_void,
    _kind: c_int,
    _value: *mut c_int,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2GetIntegerStatus") }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: *mut c_void,
    kind: c_int,
    value: *mut c_int,
) -> c_int {
    // SAFETY: as above.
    status(unsafe {
        call(c.cast(), "fmi2GetBooleanStatus", |_| {
            if kind != TERMINATED || value.is_null() {
                return Err(FmiError::Argument(
                    "only fmi2Terminated is available as a Boolean status".into(),
                ));
            }
            *value = 0;
            Ok(Status::Ok)
        })
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: *mut c_void,
    _kind: c_int,
    _value: *mut *const c_char,
) -> c_int {
    // SAFETY: as above.
    unsafe { not_provided(c, "fmi2GetStringStatus") }
}
