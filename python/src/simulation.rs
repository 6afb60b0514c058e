//! `sprung.Simulation`: one run of a shared model, driving the facade's `sprung::Simulation`
//! (step, advance_to, set_input, channels, snapshots, linearise, equilibrium, modes and the one
//! run loop `run`). The GIL is released while the engine computes (`Python::detach`), so
//! simulations in different Python threads run in parallel.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use sprung::{Control, RunSettings, StopReason};
use sprung_model::InitialStateKind;

use crate::errors::{InputError, IntoPyResult, SimulationError, SnapshotError};
use crate::model::PyModel;
use crate::settings::Overrides;

/// A model given as a :class:`sprung.Model` or a path to a model file.
#[derive(FromPyObject)]
pub enum ModelArg {
    Model(Py<PyModel>),
    Path(PathBuf),
}

impl ModelArg {
    /// The shared model (loading the file with the GIL released).
    pub fn resolve(self, py: Python<'_>) -> PyResult<Arc<sprung::Model>> {
        match self {
            ModelArg::Model(m) => Ok(m.get().inner.clone()),
            ModelArg::Path(p) => py.detach(|| sprung::Model::from_file(&p)).py(),
        }
    }
}

/// An input addressed by name or index.
#[derive(FromPyObject)]
pub enum InputArg {
    Index(usize),
    Name(String),
}

/// Column names and columns of a run (`"time"` first).
type Columns<'py> = (Vec<String>, Vec<Bound<'py, PyArray1<f64>>>);

/// A dense nalgebra matrix as a 2-D numpy array.
fn matrix<'py>(py: Python<'py>, m: &nalgebra::DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py)
}

/// Creates a simulation at the model's initial state (design position, or static equilibrium
/// when the model file says ``[initial_state] kind = "equilibrium"`` and ``from_design`` is
/// false) with the model's ``[solver]`` settings, overridden by the keyword arguments (checked
/// by the model loader's settings validation; errors name the keyword).
pub fn build(
    py: Python<'_>,
    model: Arc<sprung::Model>,
    overrides: &Overrides,
) -> PyResult<sprung::Simulation> {
    let settings = overrides.apply(&model)?;
    py.detach(|| -> Result<sprung::Simulation, sprung::Error> {
        let equilibrium = model.description().initial_state.kind == InitialStateKind::Equilibrium
            && !overrides.from_design;
        let mut sim = sprung::Simulation::with_settings(model, settings)?;
        if equilibrium {
            sim.equilibrium()?;
        }
        Ok(sim)
    })
    .py()
}

/// Rows of a run: time and channel values at every output point.
pub struct Rows {
    pub n_channels: usize,
    pub data: Vec<f64>,
}

impl Rows {
    /// Storage for `n_rows` rows (the observer then only writes).
    pub fn with_capacity(n_channels: usize, n_rows: usize) -> Self {
        Self {
            n_channels,
            data: Vec::with_capacity(n_rows * (n_channels + 1)),
        }
    }

    /// Appends one row.
    pub fn push(&mut self, t: f64, row: &[f64]) {
        self.data.push(t);
        self.data.extend_from_slice(row);
    }

    /// Column `k` (0 = time).
    pub fn column(&self, k: usize) -> Vec<f64> {
        self.data
            .iter()
            .skip(k)
            .step_by(self.n_channels + 1)
            .copied()
            .collect()
    }
}

/// Runs `sim` from its current time to `t_end` through the facade's run loop, collecting the
/// output channels every output interval; the error message of a failed run.
pub fn run_rows(
    sim: &mut sprung::Simulation,
    settings: &RunSettings,
    t_end: f64,
) -> (Rows, Result<(), String>) {
    let n_ch = sim.model().outputs().len();
    let span = (t_end - sim.time()).max(0.0);
    let n_rows = (span / settings.output_interval).ceil() as usize + 2;
    let mut rows = Rows::with_capacity(n_ch, n_rows.min(1 << 20));
    let report = sim.run_with(settings, t_end, &mut |t, row| {
        rows.push(t, row);
        Control::Continue
    });
    let res = match report.stop {
        StopReason::Failed(msg) => Err(msg),
        StopReason::Completed | StopReason::Observer => Ok(()),
    };
    (rows, res)
}

/// One simulation of a model (time, state, runtime inputs, integrator workspace).
///
/// ``Simulation(model, **settings)``: ``model`` is a :class:`sprung.Model` or a path to a model
/// file; keyword settings override the model's ``[solver]`` table: ``method``, ``step``,
/// ``output_interval``, ``relinearise_every``, ``rtol``, ``atol``, ``linear_solver``
/// (``"dense"``/``"block_sparse"``), ``max_displacement``, ``max_velocity``; ``from_design=True``
/// starts at the design position even when the model asks for static equilibrium.
#[pyclass(module = "sprung._sprung", name = "Simulation", subclass)]
pub struct PySimulation {
    /// Boxed: the simulation's workspaces hold 32-byte aligned SIMD blocks inline, and Python
    /// allocates the class's own storage with 16-byte alignment only (aligned AVX stores into
    /// it crashed); the Rust allocator honours the alignment. Behind a mutex only to make the
    /// class `Sync` for PyO3: every method takes `&mut self` (PyO3's borrow flag already
    /// guarantees exclusive access), so it is reached with `Mutex::get_mut`, which never locks.
    inner: Box<Mutex<sprung::Simulation>>,
}

impl PySimulation {
    fn sim(&mut self) -> &mut sprung::Simulation {
        self.inner.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (model, *, method = None, step = None, output_interval = None,
        relinearise_every = None, rtol = None, atol = None, linear_solver = None,
        max_displacement = None, max_velocity = None, from_design = false))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        model: ModelArg,
        method: Option<String>,
        step: Option<f64>,
        output_interval: Option<f64>,
        relinearise_every: Option<u64>,
        rtol: Option<f64>,
        atol: Option<f64>,
        linear_solver: Option<String>,
        max_displacement: Option<f64>,
        max_velocity: Option<f64>,
        from_design: bool,
    ) -> PyResult<Self> {
        let model = model.resolve(py)?;
        let overrides = Overrides {
            method,
            step,
            output_interval,
            relinearise_every,
            rtol,
            atol,
            linear_solver,
            max_displacement,
            max_velocity,
            from_design,
        };
        Ok(Self {
            inner: Box::new(Mutex::new(build(py, model, &overrides)?)),
        })
    }

    /// The shared model.
    #[getter]
    fn model(&mut self) -> PyModel {
        PyModel::new(self.sim().model().clone())
    }

    /// Current time, s (t0 + steps · h, never accumulated).
    #[getter]
    fn time(&mut self) -> f64 {
        self.sim().time()
    }

    /// The fixed step, s.
    #[getter]
    fn step_size(&mut self) -> f64 {
        self.sim().step_size()
    }

    /// The integration method (``"lsrt2"``, ...).
    #[getter]
    fn method(&mut self) -> String {
        self.sim().settings().method.clone()
    }

    /// Output interval of :meth:`run`, s.
    #[getter]
    fn output_interval(&mut self) -> f64 {
        self.sim().settings().output_interval
    }

    /// Names of the output channels in order.
    #[getter]
    fn channel_names(&mut self) -> Vec<String> {
        self.sim()
            .model()
            .channel_names()
            .into_iter()
            .map(|(n, _)| n.to_owned())
            .collect()
    }

    /// SI units of the output channels, ``{name: unit}``.
    #[getter]
    fn channel_units<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, u) in self.sim().model().channel_names() {
            d.set_item(n, u)?;
        }
        Ok(d)
    }

    /// Names of the inputs in index order.
    #[getter]
    fn input_names(&mut self) -> Vec<String> {
        self.sim()
            .model()
            .input_names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// One fixed step of the model's method (GIL released). Raises
    /// :class:`sprung.SimulationError` if the step fails or leaves the plausible range.
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        let sim = self.sim();
        py.detach(|| sim.step()).py()
    }

    /// Fixed steps until time ``t`` (a whole number of steps from t0), GIL released.
    fn advance_to(&mut self, py: Python<'_>, t: f64) -> PyResult<()> {
        let sim = self.sim();
        py.detach(|| sim.advance_to(t)).py()
    }

    /// ``n`` fixed steps (GIL released).
    fn steps(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        let sim = self.sim();
        py.detach(|| (0..n).try_for_each(|_| sim.step())).py()
    }

    /// Sets the runtime input ``input`` (name or index) to ``value`` from now on. Inputs driven
    /// by a time signal raise :class:`sprung.InputError` (declare them
    /// ``signal = { type = "runtime", default = ... }``).
    fn set_input(&mut self, input: InputArg, value: f64) -> PyResult<()> {
        match input {
            InputArg::Index(k) => self.sim().set_input(k, value),
            InputArg::Name(n) => self.sim().set_input(n.as_str(), value),
        }
        .py()
    }

    /// Current value of input ``input`` (name or index).
    fn input(&mut self, input: InputArg) -> PyResult<f64> {
        match input {
            InputArg::Index(k) => self.sim().input(k),
            InputArg::Name(n) => self.sim().input(n.as_str()),
        }
        .py()
    }

    /// The output channels at the current state, ``{name: value}`` (units: ``channel_units``).
    fn channels<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for c in self.sim().channels() {
            d.set_item(c.name, c.value)?;
        }
        Ok(d)
    }

    /// The output channels at the current state as an array in ``channel_names`` order.
    fn channel_values<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.sim().channel_values())
    }

    /// The value of channel ``name`` at the current state.
    fn channel(&mut self, name: &str) -> PyResult<f64> {
        self.sim().channel(name).py()
    }

    /// Positions r (7 per body: x, y, z in m, unit quaternion w, x, y, z).
    fn positions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.sim().positions())
    }

    /// Velocities (6 per body: ẋ global in m/s, ω body axes in rad/s), then the element states
    /// in 6-wide blocks.
    fn velocities<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.sim().velocities())
    }

    /// State derivatives at the current state: body accelerations (6 per body), then the rates
    /// of the element states — the velocity rows of :meth:`linearise`.
    fn accelerations<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let sim = self.sim();
        let a = py.detach(|| sim.accelerations());
        a.into_pyarray(py)
    }

    /// A snapshot of the state as a JSON string: restoring it with :meth:`set_state` and
    /// stepping on gives bit for bit the results of not stopping (floats are written and
    /// parsed round-trip exact).
    fn state(&mut self) -> PyResult<String> {
        serde_json::to_string(&self.sim().state())
            .map_err(|e| SnapshotError::new_err(format!("serialising the snapshot: {e}")))
    }

    /// Restores a snapshot taken with :meth:`state` (``str`` or UTF-8 ``bytes``) of this
    /// model with the same step.
    fn set_state(&mut self, py: Python<'_>, snapshot: &Bound<'_, PyAny>) -> PyResult<()> {
        let text: String = if let Ok(b) = snapshot.cast::<PyBytes>() {
            String::from_utf8(b.as_bytes().to_vec())
                .map_err(|e| SnapshotError::new_err(format!("snapshot bytes: {e}")))?
        } else if let Ok(s) = snapshot.cast::<PyString>() {
            s.to_cow()?.into_owned()
        } else {
            return Err(SnapshotError::new_err(
                "a snapshot is the str (or bytes) returned by Simulation.state()",
            ));
        };
        let s: sprung::Snapshot = serde_json::from_str(&text)
            .map_err(|e| SnapshotError::new_err(format!("snapshot JSON: {e}")))?;
        let sim = self.sim();
        py.detach(|| sim.set_state(&s)).py()
    }

    /// Runs the joint trees' evaluation path through Rust code generated and compiled for this
    /// model (the toolchain's ``rustc`` builds a plugin, cached; docs/accelerate.md): the same
    /// results, less work per step. ``cache_dir`` defaults to ``SPRUNG_ACCEL_DIR``, else the
    /// user's cache directory. Returns ``{"library", "compiled", "seconds"}``; raises
    /// ``sprung.Error`` with the reason (no joints, no rustc).
    #[pyo3(signature = (*, cache_dir = None))]
    fn accelerate<'py>(
        &mut self,
        py: Python<'py>,
        cache_dir: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim();
        let opts = sprung::AccelOptions {
            cache_dir,
            ..sprung::AccelOptions::default()
        };
        let built = py.detach(|| sim.accelerate(&opts)).py()?;
        let d = PyDict::new(py);
        d.set_item("library", built.library.display().to_string())?;
        d.set_item("compiled", built.compiled)?;
        d.set_item("seconds", built.seconds)?;
        Ok(d)
    }

    /// Static equilibrium at the current time and inputs (positions and element states moved
    /// there, body velocities zero). Returns ``{"iterations", "relative_residual",
    /// "load_scale"}`` (load scale in N).
    fn equilibrium<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim();
        let eq = py.detach(|| sim.equilibrium()).py()?;
        let d = PyDict::new(py);
        d.set_item("iterations", eq.iterations)?;
        d.set_item("relative_residual", eq.relative_residual)?;
        d.set_item("load_scale", eq.load_scale)?;
        Ok(d)
    }

    /// Modal analysis at the current state: a dict with ``frequencies_hz`` and
    /// ``damping_ratios`` of the oscillatory modes (sorted by frequency), their
    /// ``eigenvalues`` (Im > 0), ``all_eigenvalues`` (reduced system, free spins removed),
    /// ``full_eigenvalues``, ``undamped_frequencies_hz``, ``undamped_mode_shapes``,
    /// ``spin_coordinates``, ``stiffness_ratio``, ``stiffness_ratio_all_nonzero``,
    /// ``lambda_abs_min``, ``lambda_abs_max``, ``max_real_part`` (1/s), ``full_zero_count``,
    /// ``undamped_imag_rel``.
    fn modes<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.sim();
        let m = py.detach(|| sim.modes()).py()?;
        let d = PyDict::new(py);
        let osc = &m.oscillatory;
        d.set_item(
            "frequencies_hz",
            osc.iter()
                .map(|o| o.frequency_hz)
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )?;
        d.set_item(
            "damping_ratios",
            osc.iter()
                .map(|o| o.damping_ratio)
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )?;
        d.set_item(
            "eigenvalues",
            osc.iter()
                .map(|o| o.eigenvalue)
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )?;
        d.set_item("all_eigenvalues", m.eigenvalues.clone().into_pyarray(py))?;
        d.set_item(
            "full_eigenvalues",
            m.full_eigenvalues.clone().into_pyarray(py),
        )?;
        d.set_item(
            "undamped_frequencies_hz",
            m.undamped_frequencies_hz.clone().into_pyarray(py),
        )?;
        d.set_item("undamped_mode_shapes", m.undamped_mode_shapes.clone())?;
        let spins = PyList::empty(py);
        for s in &m.spin_coordinates {
            let e = PyDict::new(py);
            e.set_item("element", &s.element)?;
            e.set_item("body", &s.body)?;
            e.set_item("axis_body", s.axis_body.to_vec())?;
            spins.append(e)?;
        }
        d.set_item("spin_coordinates", spins)?;
        d.set_item("stiffness_ratio", m.stiffness_ratio)?;
        d.set_item("stiffness_ratio_all_nonzero", m.stiffness_ratio_all_nonzero)?;
        d.set_item("lambda_abs_min", m.lambda_abs_min)?;
        d.set_item("lambda_abs_max", m.lambda_abs_max)?;
        d.set_item("max_real_part", m.max_real_part)?;
        d.set_item("full_zero_count", m.full_zero_count)?;
        d.set_item("undamped_imag_rel", m.undamped_imag_rel)?;
        Ok(d)
    }

    /// The state-space model about the current state (GIL released): ``(A, B, C, D,
    /// state_names, input_names, output_names)``; :meth:`sprung.Simulation.linearise` wraps it.
    #[allow(clippy::type_complexity)]
    fn _linearise<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
        Bound<'py, PyArray2<f64>>,
        Vec<String>,
        Vec<String>,
        Vec<String>,
    )> {
        let sim = self.sim();
        let ss = py.detach(|| sim.linearise()).py()?;
        Ok((
            matrix(py, &ss.a),
            matrix(py, &ss.b),
            matrix(py, &ss.c),
            matrix(py, &ss.d),
            ss.state_names,
            ss.input_names,
            ss.output_names,
        ))
    }

    /// Runs to ``t_end`` through the engine's run loop (the one ``sprung run`` uses; GIL
    /// released) and returns ``(names, columns)``: ``"time"`` then the channels, each column
    /// an array over the output points (the start and every ``output_interval``);
    /// :meth:`sprung.Simulation.run` wraps it in a DataFrame. A failed run raises
    /// :class:`sprung.SimulationError` with the same pair up to the failure as ``partial``.
    #[pyo3(signature = (t_end, output_interval = None))]
    fn _run<'py>(
        &mut self,
        py: Python<'py>,
        t_end: f64,
        output_interval: Option<f64>,
    ) -> PyResult<Columns<'py>> {
        if !t_end.is_finite() || t_end < self.sim().time() {
            return Err(InputError::new_err(format!(
                "run({t_end}): t_end must be finite and not before the current time {} s",
                self.sim().time()
            )));
        }
        let mut settings = self.sim().settings().clone();
        if let Some(dt) = output_interval {
            settings.output_interval = dt;
            crate::settings::check_output_interval(self.sim(), &settings)?;
        }
        let sim = self.sim();
        let (rows, res) = py.detach(|| run_rows(sim, &settings, t_end));
        let mut names = vec!["time".to_owned()];
        names.extend(self.channel_names());
        let cols: Vec<_> = (0..names.len())
            .map(|k| rows.column(k).into_pyarray(py))
            .collect();
        match res {
            Ok(()) => Ok((names, cols)),
            Err(msg) => {
                // The rows up to the failure travel with the exception (`partial`).
                let err = SimulationError::new_err(format!("run failed: {msg}"));
                err.value(py).setattr("partial", (names, cols))?;
                Err(err)
            }
        }
    }

    fn __repr__(&mut self) -> String {
        let sim = self.sim();
        format!(
            "sprung.Simulation('{}', t = {} s, {} at {} s)",
            sim.model().compiled().name,
            sim.time(),
            sim.settings().method,
            sim.step_size()
        )
    }
}
