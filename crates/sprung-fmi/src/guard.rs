//! The wrapper every exported FMI function runs in: checks the instance pointer, catches
//! panics (`std::panic::catch_unwind`; unwinding across `extern "C"` would abort the importer)
//! and turns errors and panics into a logged message plus an error status.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::FmiError;
use crate::instance::{Instance, Status};

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// Runs `f` on the instance behind `ptr` as FMI function `func`: a null pointer, an error or a
/// panic is logged (naming `func`) and returned as [`Status::Error`]; after a panic the
/// instance only accepts reset and free. `Ok(status)` is returned as is.
///
/// # Safety
/// `ptr` is null or a pointer returned by this library's instantiate functions and not yet
/// freed, used by one thread at a time (the FMI rule for an instance).
pub unsafe fn call(
    ptr: *mut Instance,
    func: &str,
    f: impl FnOnce(&mut Instance) -> Result<Status, FmiError>,
) -> Status {
    if ptr.is_null() {
        return Status::Error;
    }
    // SAFETY: see the function's contract.
    let res = catch_unwind(AssertUnwindSafe(|| f(unsafe { &mut *ptr })));
    // SAFETY: as above; the closure's borrow has ended.
    let inst = unsafe { &mut *ptr };
    match res {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            inst.log(Status::Error, &format!("{func}: {e}"));
            // A failed step leaves the simulation at an implausible state: only reset or a
            // restored FMU state continue. Rejected arguments change nothing.
            if matches!(e, FmiError::Sprung(_)) {
                inst.fail();
            }
            Status::Error
        }
        Err(payload) => {
            inst.fail();
            inst.log(
                Status::Error,
                &format!(
                    "{func}: internal error (panic: {}); the instance must be reset or freed. Please report this with the model file",
                    panic_message(payload.as_ref())
                ),
            );
            Status::Error
        }
    }
}

/// Runs `f` (which has no instance yet, e.g. instantiation) catching panics: `None` on an
/// error or panic, after passing the message to `report`.
pub fn call_without_instance<T>(
    func: &str,
    report: &dyn Fn(&str),
    f: impl FnOnce() -> Result<T, FmiError>,
) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(x)) => Some(x),
        Ok(Err(e)) => {
            report(&format!("{func}: {e}"));
            None
        }
        Err(payload) => {
            report(&format!(
                "{func}: internal error (panic: {})",
                panic_message(payload.as_ref())
            ));
            None
        }
    }
}
