//! The packer: writes a co-simulation FMU (a zip archive, FMI 2.0 sec. 2.3 / FMI 3.0 sec.
//! 2.5) for a model file:
//!
//! ```text
//! modelDescription.xml                      from the variable table (crate::xml)
//! binaries/<platform>/<modelIdentifier>.so  the engine (this crate's cdylib)
//! resources/sprung-fmu.json                 manifest: model path, instantiation token
//! resources/<model file and the files it references, relative paths kept>
//! ```
//!
//! Files the model references (CSV signals now, tyre property files later) are found by
//! walking the model text: every string value that names an existing file relative to the
//! model's folder is copied. The files keep their positions relative to the model — the
//! resources folder is rooted at the deepest folder containing the model and all of them — so
//! the model text is copied unchanged. The platform folder is `x86_64-linux` in both versions
//! (FMI 2 `<arch><bits>-linux` → `linux64` is the FMI 2 name; see [`platform_dir`]).

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use zip::write::SimpleFileOptions;

use crate::FmiError;
use crate::instance::{MANIFEST, Manifest};
use crate::variables::VariableTable;
use crate::xml::{DescriptionInfo, FmiVersion, model_description};

/// What to pack.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// Model file (.toml or .json).
    pub model: PathBuf,
    /// The engine: `libsprung_fmi.so` built by `cargo build --release -p sprung-fmi`.
    pub library: PathBuf,
    /// FMI version.
    pub version: FmiVersion,
    /// Output `.fmu` file.
    pub output: PathBuf,
}

/// What was packed.
#[derive(Debug, Clone, PartialEq)]
pub struct PackReport {
    /// Model identifier (shared-library name).
    pub model_identifier: String,
    /// GUID / instantiation token.
    pub token: String,
    /// Archive entries in order.
    pub entries: Vec<String>,
    /// Number of inputs and outputs.
    pub n_inputs: usize,
    /// Number of outputs.
    pub n_outputs: usize,
}

/// The binaries folder of the platform: FMI 2 names Linux x86-64 `linux64`, FMI 3 uses the
/// platform tuple `x86_64-linux`.
pub fn platform_dir(version: FmiVersion) -> &'static str {
    match version {
        FmiVersion::V2 => "linux64",
        FmiVersion::V3 => "x86_64-linux",
    }
}

/// A C identifier from a model name (`[^A-Za-z0-9_]` → `_`, a leading digit prefixed).
pub fn model_identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// FNV-1a over `bytes` from `seed`.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A GUID-formatted token from the packed content (two 64-bit FNV-1a hashes): the same model,
/// files and variable table give the same token.
pub fn token(parts: &[&[u8]]) -> String {
    let mut a = 0xcbf2_9ce4_8422_2325_u64;
    let mut b = 0x84222325_cbf29ce4_u64;
    for p in parts {
        a = fnv1a(a, p);
        b = fnv1a(b, &(p.len() as u64).to_le_bytes());
        b = fnv1a(b, p);
    }
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Strings in a TOML or JSON value tree.
fn strings_toml(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::String(s) => out.push(s.clone()),
        toml::Value::Array(a) => a.iter().for_each(|x| strings_toml(x, out)),
        toml::Value::Table(t) => t.values().for_each(|x| strings_toml(x, out)),
        _ => {}
    }
}

fn strings_json(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings_json(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings_json(x, out)),
        _ => {}
    }
}

/// The resources of a model: (path inside `resources/`, source file), the model first.
pub fn resources(model: &Path) -> Result<Vec<(String, PathBuf)>, FmiError> {
    let text = std::fs::read_to_string(model)
        .map_err(|e| FmiError::Pack(format!("reading {}: {e}", model.display())))?;
    let mut strings = Vec::new();
    if model.extension().is_some_and(|e| e == "json") {
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| FmiError::Pack(format!("{}: {e}", model.display())))?;
        strings_json(&v, &mut strings);
    } else {
        let v: toml::Value = toml::from_str(&text)
            .map_err(|e| FmiError::Pack(format!("{}: {e}", model.display())))?;
        strings_toml(&v, &mut strings);
    }
    let canon = |p: &Path| {
        p.canonicalize()
            .map_err(|e| FmiError::Pack(format!("{}: {e}", p.display())))
    };
    let model_abs = canon(model)?;
    let dir = model_abs
        .parent()
        .expect("a file has a parent")
        .to_path_buf();
    let mut files = vec![model_abs.clone()];
    for s in strings {
        let p = Path::new(&s);
        if s.is_empty() || s.contains('\n') {
            continue;
        }
        let candidate = dir.join(p);
        if !candidate.is_file() {
            continue;
        }
        if p.is_absolute() {
            return Err(FmiError::Pack(format!(
                "{}: the model references the file '{s}' by an absolute path, which does not exist inside an FMU; give it relative to the model file",
                model.display()
            )));
        }
        let abs = canon(&candidate)?;
        if !files.contains(&abs) {
            files.push(abs);
        }
    }
    // The deepest folder containing every file.
    let mut root = dir.clone();
    while !files.iter().all(|f| f.starts_with(&root)) {
        if !root.pop() {
            break;
        }
    }
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).expect("root contains every file");
            let name = rel
                .components()
                .map(|c| match c {
                    Component::Normal(s) => Ok(s.to_string_lossy().into_owned()),
                    _ => Err(FmiError::Pack(format!("unexpected path {}", f.display()))),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join("/");
            Ok((name, f))
        })
        .collect()
}

/// Writes the FMU (module docs).
pub fn pack(opts: &PackOptions) -> Result<PackReport, FmiError> {
    let model = sprung::Model::from_file(&opts.model)?;
    let table = VariableTable::of(&model)?;
    let res = resources(&opts.model)?;
    let library = std::fs::read(&opts.library).map_err(|e| {
        FmiError::Pack(format!(
            "reading the engine library {}: {e}; build it with `cargo build --release -p sprung-fmi`",
            opts.library.display()
        ))
    })?;
    let mut contents = Vec::new();
    for (_, src) in &res {
        contents.push(
            std::fs::read(src)
                .map_err(|e| FmiError::Pack(format!("reading {}: {e}", src.display())))?,
        );
    }
    let signature = table.signature();
    let mut parts: Vec<&[u8]> = vec![signature.as_bytes()];
    for ((name, _), c) in res.iter().zip(&contents) {
        parts.push(name.as_bytes());
        parts.push(c);
    }
    parts.push(&library);
    let token = token(&parts);
    let d = model.description();
    let settings = model.default_settings();
    let identifier = model_identifier(&d.model.name);
    let info = DescriptionInfo {
        model_name: d.model.name.clone(),
        model_identifier: identifier.clone(),
        token: token.clone(),
        description: d.model.description.clone().unwrap_or_default(),
        start_time: 0.0,
        stop_time: settings.t_end,
        step_size: settings.output_interval,
        internal_step: settings.step,
    };
    let xml = model_description(&table, &info, opts.version);
    let manifest = Manifest {
        model: res[0].0.clone(),
        token: token.clone(),
    };
    let manifest_json = serde_json::to_string_pretty(&manifest).expect("plain data");

    let mut files: Vec<(String, &[u8])> = vec![("modelDescription.xml".into(), xml.as_bytes())];
    files.push((
        format!("binaries/{}/{identifier}.so", platform_dir(opts.version)),
        &library,
    ));
    files.push((format!("resources/{MANIFEST}"), manifest_json.as_bytes()));
    for ((name, _), c) in res.iter().zip(&contents) {
        files.push((format!("resources/{name}"), c));
    }
    let out = std::fs::File::create(&opts.output)
        .map_err(|e| FmiError::Pack(format!("creating {}: {e}", opts.output.display())))?;
    let mut zip = zip::ZipWriter::new(out);
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        // Level 1: the engine library is tens of MB (with debug info); the default level takes
        // several times longer for a few per cent smaller archives.
        .compression_level(Some(1))
        .unix_permissions(0o644);
    let werr = |e: &dyn std::fmt::Display| {
        FmiError::Pack(format!("writing {}: {e}", opts.output.display()))
    };
    for (name, data) in &files {
        zip.start_file(name.as_str(), options)
            .map_err(|e| werr(&e))?;
        zip.write_all(data).map_err(|e| werr(&e))?;
    }
    zip.finish().map_err(|e| werr(&e))?;
    Ok(PackReport {
        model_identifier: identifier,
        token,
        entries: files.into_iter().map(|(n, _)| n).collect(),
        n_inputs: table.with_causality(crate::Causality::Input).count(),
        n_outputs: table.with_causality(crate::Causality::Output).count(),
    })
}
