//! Helpers of the FMU tests: model variants with runtime inputs, unpacked FMU folders and a
//! log collector for the FMI 3 logger callback.

#![allow(dead_code)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sprung_test_support::model_text;

/// The step signal of the double-wishbone load case and the runtime input that replaces it.
pub const FX_STEP: &str =
    r#"signal = { type = "step", time = 5.0, before = 0.0, after = -2500.0 }"#;
/// The runtime Fx of the FMU variant.
pub const FX_RUNTIME: &str = r#"signal = { type = "runtime", default = 0.0 }"#;

/// The mass-spring-damper model with its step force made a runtime input (default 0).
pub fn msd_runtime_text() -> String {
    let text = model_text("mass_spring_damper.toml");
    let step = r#"signal = { type = "step", time = 0.0, before = 0.0, after = 10.0 }"#;
    assert_eq!(text.matches(step).count(), 1, "the F signal line changed");
    text.replace(step, FX_RUNTIME)
}

/// [`msd_runtime_text`] with a declared parameter `stiffness` (N/m) setting the spring's rate.
pub fn msd_parameter_text() -> String {
    msd_runtime_text()
        + r#"
[[parameters]]
name = "stiffness"
value = 100.0
unit = "N/m"
description = "spring rate"
targets = ["force_elements.spring.stiffness"]
"#
}

/// A fresh folder under the target's temporary area.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sprung-fmi-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` as `file` into a new folder and returns the model path.
pub fn write_model(dir: &Path, file: &str, text: &str) -> PathBuf {
    let p = dir.join(file);
    std::fs::write(&p, text).unwrap();
    p
}

/// Packs `model` and unpacks the FMU's resources folder (what an importer does): returns the
/// resources folder and the token.
pub fn unpacked(model: &Path, version: sprung_fmi::FmiVersion, dir: &Path) -> (PathBuf, String) {
    std::fs::create_dir_all(dir).unwrap();
    let lib = dir.join("libdummy.so");
    std::fs::write(
        &lib,
        b"not a library: the Rust tests call the functions directly",
    )
    .unwrap();
    let fmu = dir.join("m.fmu");
    let report = sprung_fmi::pack(&sprung_fmi::PackOptions {
        model: model.to_path_buf(),
        library: lib,
        version,
        output: fmu.clone(),
    })
    .unwrap();
    let out = dir.join("unpacked");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&fmu).unwrap()).unwrap();
    zip.extract(&out).unwrap();
    (out.join("resources"), report.token)
}

/// Messages logged through [`log_message`] (status, message).
pub static LOG: Mutex<Vec<(c_int, String)>> = Mutex::new(Vec::new());

/// An `fmi3LogMessageCallback` that records into [`LOG`] (tests that read LOG hold
/// [`SERIAL`]).
pub unsafe extern "C" fn log_message(
    _env: *mut c_void,
    status: c_int,
    _category: *const c_char,
    message: *const c_char,
) {
    // SAFETY: the FMU passes a NUL-terminated message.
    let m = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap().push((status, m));
}

/// Serialises the tests that use [`LOG`].
pub static SERIAL: Mutex<()> = Mutex::new(());
