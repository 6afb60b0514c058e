//! Helpers shared by the FMI 2 and FMI 3 entry points: C strings, arrays, resource
//! locations and FMU-state handles.

use std::ffi::{CStr, c_char};
use std::path::PathBuf;

use sprung::Snapshot;

use crate::FmiError;
use crate::instance::{Instance, Status};

/// A C string (empty for null; invalid UTF-8 replaced).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
pub unsafe fn string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// A C array of `n` elements (empty for n = 0; an error for a null pointer with n > 0).
///
/// # Safety
/// `p` is null or points to `n` valid elements that outlive the returned slice.
pub unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], FmiError> {
    if n == 0 {
        Ok(&[])
    } else if p.is_null() {
        Err(FmiError::Argument(format!(
            "{what}: null pointer for {n} elements"
        )))
    } else {
        // SAFETY: the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// A mutable C array of `n` elements.
///
/// # Safety
/// As [`slice`], writable.
pub unsafe fn slice_mut<'a, T>(p: *mut T, n: usize, what: &str) -> Result<&'a mut [T], FmiError> {
    if n == 0 {
        Ok(&mut [])
    } else if p.is_null() {
        Err(FmiError::Argument(format!(
            "{what}: null pointer for {n} elements"
        )))
    } else {
        // SAFETY: the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }
}

/// The folder of an FMI 2 `fmuResourceLocation` URI (`file:///a/b`, `file:/a/b`,
/// `file://localhost/a/b`; `%XX` escapes decoded) or an FMI 3 resource path.
pub fn resource_dir(location: &str) -> Result<PathBuf, FmiError> {
    let rest = if let Some(r) = location.strip_prefix("file://localhost/") {
        format!("/{r}")
    } else if let Some(r) = location.strip_prefix("file://") {
        r.to_string()
    } else if let Some(r) = location.strip_prefix("file:") {
        r.to_string()
    } else if location.contains("://") {
        return Err(FmiError::Instantiate(format!(
            "resource location '{location}' is not a file URI; unpack the FMU and pass file:///path/to/resources"
        )));
    } else {
        location.to_string()
    };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) =
                u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or(""), 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out).map_err(|_| {
        FmiError::Instantiate(format!("resource location '{location}' is not UTF-8"))
    })?;
    if path.is_empty() {
        return Err(FmiError::Instantiate(
            "no resource location given; the FMU needs its resources/ folder".into(),
        ));
    }
    Ok(PathBuf::from(path))
}

/// Stores the instance's current state in `*handle` (a new boxed [`Snapshot`], or the one
/// already there overwritten, as FMI requires).
///
/// # Safety
/// `handle` is null or points to null or to a handle from this function or [`deserialise`].
pub unsafe fn get_state(
    inst: &mut Instance,
    handle: *mut *mut Snapshot,
) -> Result<Status, FmiError> {
    if handle.is_null() {
        return Err(FmiError::Argument("null FMU state pointer".into()));
    }
    let s = inst.get_state()?;
    // SAFETY: the caller's contract.
    unsafe {
        if (*handle).is_null() {
            *handle = Box::into_raw(Box::new(s));
        } else {
            **handle = s;
        }
    }
    Ok(Status::Ok)
}

/// The snapshot behind a handle.
///
/// # Safety
/// `handle` is null or a live handle of [`get_state`] / [`deserialise`].
pub unsafe fn state_ref<'a>(handle: *const Snapshot) -> Result<&'a Snapshot, FmiError> {
    if handle.is_null() {
        Err(FmiError::Argument("null FMU state".into()))
    } else {
        // SAFETY: the caller's contract.
        Ok(unsafe { &*handle })
    }
}

/// Frees `*handle` and sets it to null.
///
/// # Safety
/// As [`get_state`].
pub unsafe fn free_state(handle: *mut *mut Snapshot) -> Result<Status, FmiError> {
    if handle.is_null() {
        return Ok(Status::Ok);
    }
    // SAFETY: the caller's contract.
    unsafe {
        if !(*handle).is_null() {
            drop(Box::from_raw(*handle));
            *handle = std::ptr::null_mut();
        }
    }
    Ok(Status::Ok)
}

/// Size of a serialised state.
///
/// # Safety
/// As [`state_ref`]; `size` is null or writable.
pub unsafe fn serialised_size(
    handle: *const Snapshot,
    size: *mut usize,
) -> Result<Status, FmiError> {
    // SAFETY: the caller's contract.
    let s = unsafe { state_ref(handle) }?;
    if size.is_null() {
        return Err(FmiError::Argument("null size pointer".into()));
    }
    let n = Instance::serialise(s)?.len();
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *size = n };
    Ok(Status::Ok)
}

/// Writes a serialised state into `bytes[..size]` (size from [`serialised_size`]).
///
/// # Safety
/// As [`state_ref`]; `bytes` holds `size` writable bytes.
pub unsafe fn serialise(
    handle: *const Snapshot,
    bytes: *mut u8,
    size: usize,
) -> Result<Status, FmiError> {
    // SAFETY: the caller's contract.
    let s = unsafe { state_ref(handle) }?;
    let data = Instance::serialise(s)?;
    if data.len() != size {
        return Err(FmiError::Argument(format!(
            "serialised FMU state has {} bytes, the buffer {size}; ask the serialised size first",
            data.len()
        )));
    }
    // SAFETY: the caller's contract.
    let out = unsafe { slice_mut(bytes, size, "serialised state") }?;
    out.copy_from_slice(&data);
    Ok(Status::Ok)
}

/// Reads a serialised state into a new handle.
///
/// # Safety
/// `bytes` holds `size` bytes; `handle` as in [`get_state`].
pub unsafe fn deserialise(
    bytes: *const u8,
    size: usize,
    handle: *mut *mut Snapshot,
) -> Result<Status, FmiError> {
    if handle.is_null() {
        return Err(FmiError::Argument("null FMU state pointer".into()));
    }
    // SAFETY: the caller's contract.
    let data = unsafe { slice(bytes, size, "serialised state") }?;
    let s = Instance::deserialise(data)?;
    // SAFETY: the caller's contract.
    unsafe {
        if (*handle).is_null() {
            *handle = Box::into_raw(Box::new(s));
        } else {
            **handle = s;
        }
    }
    Ok(Status::Ok)
}
