//! Compiling the generated source with the toolchain's `rustc` into a plugin, cached by key.
//!
//! The cache holds one directory per key ([`crate::codegen::Generated::key`]) with the source
//! (`model.rs`, for reading) and the plugin; a key found with its plugin is loaded without
//! compiling. The compiler is `SPRUNG_RUSTC` if set, else `rustc` on the PATH; the directory is
//! [`AccelOptions::cache_dir`], else `SPRUNG_ACCEL_DIR`, else the user's cache directory
//! (`$XDG_CACHE_HOME/sprung/accel`, `~/.cache/sprung/accel`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::AccelError;
use crate::codegen::Generated;

/// How to build a plugin.
#[derive(Debug, Clone)]
pub struct AccelOptions {
    /// The cache directory (see the module docs for the default).
    pub cache_dir: Option<PathBuf>,
    /// Code for the CPU of this machine (`-C target-cpu=native`: AVX2 and FMA where the CPU has
    /// them; the plugin then runs only on such CPUs); else for the baseline of the target.
    pub native: bool,
    /// Compile even if the cache holds the plugin.
    pub rebuild: bool,
}

impl Default for AccelOptions {
    fn default() -> Self {
        Self {
            cache_dir: None,
            native: true,
            rebuild: false,
        }
    }
}

impl AccelOptions {
    /// The cache directory these options use.
    pub fn resolved_cache_dir(&self) -> PathBuf {
        if let Some(d) = &self.cache_dir {
            return d.clone();
        }
        if let Some(d) = std::env::var_os("SPRUNG_ACCEL_DIR") {
            return PathBuf::from(d);
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("sprung").join("accel")
    }
}

/// A built (or cached) plugin.
#[derive(Debug, Clone)]
pub struct Built {
    /// The plugin (a shared library).
    pub library: PathBuf,
    /// The generated source next to it.
    pub source: PathBuf,
    /// Whether it was compiled now (false: found in the cache).
    pub compiled: bool,
    /// Seconds the compilation took (0 from the cache).
    pub seconds: f64,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AccelError + '_ {
    move |error| AccelError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Builds the plugin of `src` (or finds it in the cache).
pub fn build(src: &Generated, opts: &AccelOptions) -> Result<Built, AccelError> {
    let flavour = if opts.native { "native" } else { "baseline" };
    let dir = opts
        .resolved_cache_dir()
        .join(format!("{:016x}-{flavour}", src.key));
    let name = format!(
        "{}sprung_accel{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let library = dir.join(&name);
    let source = dir.join("model.rs");
    if library.is_file() && !opts.rebuild {
        return Ok(Built {
            library,
            source,
            compiled: false,
            seconds: 0.0,
        });
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // Written and compiled under names of this build and renamed into place: a concurrent build
    // of the same key (two runs or threads at once) never reads a half-written file, and the
    // last rename wins with identical content.
    static BUILDS: AtomicU64 = AtomicU64::new(0);
    let unique = format!(
        "{}.{}",
        std::process::id(),
        BUILDS.fetch_add(1, Ordering::Relaxed)
    );
    let src_tmp = dir.join(format!("model.rs.{unique}.tmp"));
    std::fs::write(&src_tmp, &src.text).map_err(io(&src_tmp))?;
    std::fs::rename(&src_tmp, &source).map_err(io(&source))?;
    // rustc's intermediate files go next to its output: a directory of this build alone.
    let work = dir.join(format!("build.{unique}.tmp"));
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let tmp = work.join(&name);
    let rustc = std::env::var("SPRUNG_RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let mut cmd = Command::new(&rustc);
    cmd.args([
        "--edition",
        "2024",
        "--crate-type",
        "cdylib",
        "--crate-name",
        "sprung_accel",
        "-C",
        "opt-level=3",
        "-C",
        "panic=abort",
        "-C",
        "codegen-units=1",
        "-C",
        "debuginfo=0",
    ]);
    if opts.native {
        cmd.args(["-C", "target-cpu=native"]);
    }
    cmd.arg("-o").arg(&tmp).arg(&source);
    let start = Instant::now();
    let out = cmd.output();
    let renamed = match out {
        Err(error) => Err(AccelError::NoCompiler { rustc, error }),
        Ok(out) if !out.status.success() => Err(AccelError::Compile {
            path: source.clone(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
        Ok(_) => std::fs::rename(&tmp, &library).map_err(io(&library)),
    };
    // (A leftover directory would only take space; the result above is what matters.)
    let _ = std::fs::remove_dir_all(&work);
    renamed?;
    Ok(Built {
        library,
        source,
        compiled: true,
        seconds: start.elapsed().as_secs_f64(),
    })
}
