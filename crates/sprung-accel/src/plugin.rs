//! Loading a built plugin and calling it as a [`TreeKernel`].

use std::path::Path;

use libloading::Library;
use nalgebra::Vector3;
use sprung_mbs::tree_kernel::TreeKernel;

use crate::AccelError;
use crate::codegen::forces::MAX_TREES;
use crate::codegen::{ABI_VERSION, Generated};

type KinematicsFn = unsafe extern "C" fn(usize, *const f64, *const f64, *mut f64) -> i64;
type SplinesFn = unsafe extern "C" fn(usize, *const f64, *mut f64) -> u64;
type ProjectFn = unsafe extern "C" fn(usize, *const f64, *mut f64) -> i64;
type ForcesFn = unsafe extern "C" fn(*const *const f64, *mut f64, *mut f64, *mut f64, u64) -> u64;

// The force and torque arrays are passed as 3 f64 per body: nalgebra's Vector3<f64> is a
// `repr(C)` matrix over a `[[f64; 3]; 1]` array (no padding), checked here at compile time.
const _: () = assert!(
    std::mem::size_of::<Vector3<f64>>() == 3 * std::mem::size_of::<f64>()
        && std::mem::align_of::<Vector3<f64>>() == std::mem::align_of::<f64>()
);

/// A loaded plugin: the accelerated evaluation path of one model ([`TreeKernel`]).
pub struct Plugin {
    splines: SplinesFn,
    kinematics: KinematicsFn,
    project: ProjectFn,
    forces: ForcesFn,
    force_elements: Vec<usize>,
    n_bodies: usize,
    n_r: usize,
    n_v: usize,
    flat_lens: Vec<usize>,
    key: u64,
    /// Keeps the library mapped while the function pointers above live (declared last: dropped
    /// after them).
    _lib: Library,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Plugin(key {:016x}, {} trees)",
            self.key,
            self.flat_lens.len()
        )
    }
}

impl Plugin {
    /// Loads the plugin at `path`, which must have been built from `src` (its ABI version and
    /// key are checked).
    pub fn load(path: &Path, src: &Generated) -> Result<Self, AccelError> {
        let err = |message: String| AccelError::Load {
            path: path.to_path_buf(),
            message,
        };
        // SAFETY: the library is one this crate built from generated source (its key is
        // checked below before any other function of it is called); loading it runs no
        // initialisers of ours (the generated source has none).
        let lib = unsafe { Library::new(path) }.map_err(|e| err(e.to_string()))?;
        // SAFETY: the symbols are the generated source's exports, with these signatures for
        // ABI_VERSION (checked first, through a function that takes nothing).
        let (abi, key, splines, kinematics, project, forces) = unsafe {
            let abi = lib
                .get::<unsafe extern "C" fn() -> u64>(b"sprung_accel_abi")
                .map_err(|e| err(format!("not a sprung accelerator plugin ({e})")))?;
            let abi = abi();
            if abi != ABI_VERSION {
                return Err(err(format!(
                    "built for plugin ABI {abi}, this engine speaks {ABI_VERSION}: run `sprung accelerate --rebuild`"
                )));
            }
            let key = lib
                .get::<unsafe extern "C" fn() -> u64>(b"sprung_accel_key")
                .map_err(|e| err(e.to_string()))?();
            let s = *lib
                .get::<SplinesFn>(b"sprung_accel_spline_groups")
                .map_err(|e| err(e.to_string()))?;
            let k = *lib
                .get::<KinematicsFn>(b"sprung_accel_kinematics")
                .map_err(|e| err(e.to_string()))?;
            let p = *lib
                .get::<ProjectFn>(b"sprung_accel_project")
                .map_err(|e| err(e.to_string()))?;
            let f = *lib
                .get::<ForcesFn>(b"sprung_accel_forces")
                .map_err(|e| err(e.to_string()))?;
            (abi, key, s, k, p, f)
        };
        debug_assert_eq!(abi, ABI_VERSION);
        if key != src.key {
            return Err(err(format!(
                "built for another model or engine version (key {key:016x}, model '{}' needs {:016x}): run `sprung accelerate --rebuild`",
                src.model, src.key
            )));
        }
        Ok(Self {
            splines,
            kinematics,
            project,
            forces,
            force_elements: src.force_elements.clone(),
            n_bodies: src.n_bodies,
            n_r: src.n_r,
            n_v: src.n_v,
            flat_lens: src.flat_lens.clone(),
            key,
            _lib: lib,
        })
    }

    /// The key of the source it was built from.
    pub fn key(&self) -> u64 {
        self.key
    }
}

impl TreeKernel for Plugin {
    fn kinematics(&self, t: usize, r: &[f64], v: &[f64], flat: &mut [f64]) -> Result<(), usize> {
        assert!(
            r.len() == self.n_r && v.len() == self.n_v && flat.len() == self.flat_lens[t],
            "accelerator plugin called with buffers of another model"
        );
        // SAFETY: the lengths are the ones the generated function views the pointers as
        // (checked above); the buffers do not overlap (two shared, one exclusive borrow).
        let k = unsafe { (self.kinematics)(t, r.as_ptr(), v.as_ptr(), flat.as_mut_ptr()) };
        if k < 0 { Ok(()) } else { Err(k as usize) }
    }

    fn spline_groups(&self, t: usize, r: &[f64], flat: &mut [f64]) -> u64 {
        assert!(
            r.len() == self.n_r && flat.len() == self.flat_lens[t],
            "accelerator plugin called with buffers of another model"
        );
        // SAFETY: the lengths are the ones the generated function views the pointers as
        // (checked above); the buffers do not overlap (one shared, one exclusive borrow).
        unsafe { (self.splines)(t, r.as_ptr(), flat.as_mut_ptr()) }
    }

    fn project(&self, t: usize, flat: &[f64], q: &mut [f64]) {
        assert!(
            flat.len() == self.flat_lens[t] && q.len() == self.n_v,
            "accelerator plugin called with buffers of another model"
        );
        // SAFETY: as in `kinematics`.
        let rc = unsafe { (self.project)(t, flat.as_ptr(), q.as_mut_ptr()) };
        debug_assert_eq!(rc, 0);
    }

    fn force_elements(&self) -> &[usize] {
        &self.force_elements
    }

    fn forces(
        &self,
        flats: &[Vec<f64>],
        force: &mut [Vector3<f64>],
        torque: &mut [Vector3<f64>],
        out: &mut [f64],
        watch: bool,
    ) -> u64 {
        assert!(
            flats.len() == self.flat_lens.len()
                && flats.len() <= MAX_TREES
                && flats
                    .iter()
                    .zip(&self.flat_lens)
                    .all(|(f, &n)| f.len() == n)
                && force.len() == self.n_bodies
                && torque.len() == self.n_bodies
                && out.len() == 3 * self.force_elements.len(),
            "accelerator plugin called with buffers of another model"
        );
        let mut ptrs = [std::ptr::null::<f64>(); MAX_TREES];
        for (p, f) in ptrs.iter_mut().zip(flats) {
            *p = f.as_ptr();
        }
        // SAFETY: the lengths are the ones the generated function views the pointers as
        // (checked above; a Vector3<f64> is 3 f64, checked at compile time); the buffers do not
        // overlap (shared borrows of the flats, exclusive ones of force, torque and out).
        unsafe {
            (self.forces)(
                ptrs.as_ptr(),
                force.as_mut_ptr().cast::<f64>(),
                torque.as_mut_ptr().cast::<f64>(),
                out.as_mut_ptr(),
                u64::from(watch),
            )
        }
    }
}
