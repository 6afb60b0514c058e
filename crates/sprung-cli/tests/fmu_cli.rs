//! `sprung fmu`: an FMU written with an explicit engine library, and the errors for a missing
//! library or a wrong output extension (the FMUs themselves are tested in crates/sprung-fmi).

use std::process::Command;

fn sprung(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sprung"))
        .args(args)
        .output()
        .expect("run sprung")
}

fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sprung-fmu-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn fmu_export_and_errors() {
    let dir = temp("export");
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/mass_spring_damper.toml"
    );
    let lib = dir.join("engine.so");
    std::fs::write(&lib, b"engine").unwrap();
    let out = dir.join("msd.fmu");
    let o = sprung(&[
        "fmu",
        model,
        "-o",
        out.to_str().unwrap(),
        "--fmi",
        "2",
        "--library",
        lib.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains(
            "FMI 2.0 co-simulation, model identifier mass_spring_damper, 0 inputs, 3 outputs"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("binaries/linux64/mass_spring_damper.so"),
        "{stdout}"
    );
    assert!(out.is_file());

    let missing = dir.join("missing.so");
    let o = sprung(&[
        "fmu",
        model,
        "-o",
        out.to_str().unwrap(),
        "--library",
        missing.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("no such file; build it with `cargo build --release -p sprung-fmi`"),
        "{err}"
    );

    let o = sprung(&[
        "fmu",
        model,
        "-o",
        dir.join("msd.zip").to_str().unwrap(),
        "--library",
        lib.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("an FMU file must end in .fmu"), "{err}");
}
