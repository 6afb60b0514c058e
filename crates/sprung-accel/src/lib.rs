//! The model accelerator: Rust source generated for one model's joint-tree evaluation path,
//! compiled by the toolchain's `rustc` into a plugin that the engine loads at run time
//! (`sprung accelerate`, `sprung run --accelerate`; `docs/accelerate.md`).
//!
//! Document 004 (../shared/seeds/004_bf53df81c0e560f5.txt, sec. 5) reports the reduced
//! vehicle model 2.6× faster with SIMPACK's "Symbolic Accelerator" (5.5 instead of 14.2 CPU
//! seconds with explicit Euler at 1 ms): code written for the one model, its structure unrolled
//! and its constants folded, instead of the generic, data-driven evaluation. This crate does
//! the same for the part of the evaluation of q that costs most in a reduced model, the joint
//! trees' kinematics (spline groups, frames, J_b, J̇_b ż, M_z and its Cholesky factor) and the
//! projection of the free-body accelerations onto the tree coordinates ([`sprung_mbs::joints`]),
//! and the point-to-point force elements acting on tree bodies ([`codegen::forces`]); a spline
//! group with a coordinate outside its table's grid stays evaluated by the engine (so
//! excursions are extrapolated and recorded as before), the bushings, tires, open elements and
//! the linearisation run the generic code.
//!
//! The pieces: [`codegen`] writes the source from the compiled model (one function per tree and
//! task, through the flat buffer of [`sprung_mbs::tree_kernel::FlatLayout`]); [`build`] runs
//! `rustc` on it into a cache directory keyed by the source's hash (a second run of the same
//! model and engine loads the plugin without compiling); [`Plugin`] loads it and implements
//! [`sprung_mbs::tree_kernel::TreeKernel`], which [`sprung_mbs::MbsSystem::set_tree_kernel`]
//! installs. The generic code stays the reference: tests compare every generated kernel with
//! [`sprung_mbs::tree_kernel::ReferenceKernel`] on every example model with joints.

pub mod build;
pub mod codegen;
mod plugin;

use std::path::PathBuf;
use std::sync::Arc;

pub use build::{AccelOptions, Built};
pub use plugin::Plugin;
use sprung_mbs::CompiledModel;
use sprung_mbs::tree_kernel::TreeKernel;

/// Why a model could not be accelerated.
#[derive(Debug, thiserror::Error)]
pub enum AccelError {
    /// The model has a part the generator does not write code for.
    #[error(
        "model '{model}': the accelerator does not support {what}; run without --accelerate (the generic evaluation runs every model)"
    )]
    Unsupported {
        /// The model's name.
        model: String,
        /// What is not supported.
        what: String,
    },
    /// The model has no joint trees (nothing to accelerate).
    #[error(
        "model '{model}' has no joints: the accelerator writes code for joint trees (document 004's reduced models); models of free bodies and force elements run the generic evaluation"
    )]
    NoJoints {
        /// The model's name.
        model: String,
    },
    /// `rustc` could not be started.
    #[error(
        "the accelerator needs the Rust compiler to build the model's plugin: `{rustc}` could not be run ({error}); install the Rust toolchain (https://rustup.rs) or set SPRUNG_RUSTC to rustc's path"
    )]
    NoCompiler {
        /// The command tried.
        rustc: String,
        /// The error of starting it (in the message, not a source: printed once).
        error: std::io::Error,
    },
    /// `rustc` failed on the generated source.
    #[error("rustc failed to compile the generated source {}:\n{stderr}", path.display())]
    Compile {
        /// The generated source.
        path: PathBuf,
        /// rustc's diagnostics.
        stderr: String,
    },
    /// The cache directory could not be written or read.
    #[error("accelerator cache {}: {error}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error (in the message, not a source: printed once).
        error: std::io::Error,
    },
    /// The plugin could not be loaded or does not match.
    #[error("accelerator plugin {}: {message}", path.display())]
    Load {
        /// The plugin.
        path: PathBuf,
        /// What went wrong and how to fix it.
        message: String,
    },
}

/// Generates, builds (or finds in the cache) and loads the accelerated evaluation path of
/// `model`: the kernel to install with [`sprung_mbs::MbsSystem::set_tree_kernel`], and what was
/// done ([`Built`]: the plugin's path and whether it was compiled now).
pub fn accelerate(
    model: &Arc<CompiledModel>,
    opts: &AccelOptions,
) -> Result<(Arc<dyn TreeKernel>, Built), AccelError> {
    let src = codegen::source(model)?;
    let built = build::build(&src, opts)?;
    let plugin = Plugin::load(&built.library, &src)?;
    Ok((Arc::new(plugin), built))
}
