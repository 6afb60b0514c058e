"""sprung — real-time multibody simulation of vehicles, from Python.

The engine is the Rust library ``sprung`` (the facade every face uses); this package binds it
with PyO3 (``sprung._sprung``) and adds the numpy/pandas conveniences and parameter sweeps on
threads or a Dask cluster. See ``docs/python.md``.

>>> import sprung
>>> sim = sprung.Simulation("models/mass_spring_damper.toml")   # doctest: +SKIP
>>> sim.advance_to(0.5)                                          # doctest: +SKIP
>>> sim.channels()["x"]                                          # doctest: +SKIP
"""

from __future__ import annotations

from typing import Dict, List, Optional, Union

import numpy as np

from ._sprung import (
    EquilibriumError,
    Error,
    InputError,
    Model,
    ModelError,
    ModesError,
    SettingsError,
    SimulationError,
    SnapshotError,
    __version__,
)
from ._sprung import Simulation as _NativeSimulation

__all__ = [
    "Model",
    "Simulation",
    "StateSpace",
    "sweep",
    "Error",
    "ModelError",
    "SettingsError",
    "InputError",
    "SimulationError",
    "SnapshotError",
    "EquilibriumError",
    "ModesError",
    "__version__",
]


class StateSpace(tuple):
    """The linear model ``dx/dt = A x + B u``, ``y = C x + D u`` about a state.

    A tuple ``(A, B, C, D)`` of numpy arrays (so ``A, B, C, D = sim.linearise()`` works) with
    the names of the states (``x``), inputs (``u``) and outputs (``y``) as attributes.
    """

    state_names: List[str]
    input_names: List[str]
    output_names: List[str]

    def __new__(cls, a, b, c, d, state_names, input_names, output_names):
        self = super().__new__(cls, (a, b, c, d))
        self.state_names = list(state_names)
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        return self

    @property
    def A(self) -> np.ndarray:  # noqa: N802 - the control-engineering name
        return self[0]

    @property
    def B(self) -> np.ndarray:  # noqa: N802
        return self[1]

    @property
    def C(self) -> np.ndarray:  # noqa: N802
        return self[2]

    @property
    def D(self) -> np.ndarray:  # noqa: N802
        return self[3]


def _frame(names, columns, as_frame):
    """A pandas DataFrame indexed by time when pandas is importable (or ``as_frame`` is True),
    else a dict of numpy arrays (``as_frame=False`` forces the dict)."""
    if as_frame is not False:
        try:
            import pandas as pd
        except ImportError:
            if as_frame:
                raise
        else:
            df = pd.DataFrame(dict(zip(names[1:], columns[1:])), index=pd.Index(columns[0], name="time"))
            return df
    return dict(zip(names, columns))


class Simulation(_NativeSimulation):
    __doc__ = _NativeSimulation.__doc__

    def linearise(self) -> StateSpace:
        """The state-space model about the current state (what MATLAB calls ``linmod``).

        States x: the body position perturbations in tangent coordinates (6 per body: δx
        global, δθ body axes), the body velocities (6 per body), the element states. Inputs u:
        the model's inputs; outputs y: the channels. A and B come from the engine's analytic
        linearisation, C and D from central differences (see the Rust docs of
        ``sprung::linearise``). The GIL is released while it is computed.
        """
        return StateSpace(*self._linearise())

    def run(self, t_end: float, output_interval: Optional[float] = None, as_frame: Optional[bool] = None):
        """Runs from the current time to ``t_end`` through the engine's run loop (any method,
        fixed or adaptive; the loop ``sprung run`` uses) with the GIL released.

        Returns the channels at the start and every ``output_interval`` (default: the model's):
        a pandas DataFrame indexed by ``time`` when pandas is importable, else a dict of numpy
        arrays with a ``"time"`` entry. Raises :class:`SimulationError` if the run fails; its
        ``results`` attribute holds the channels up to the failure (same form).
        """
        try:
            names, columns = self._run(t_end, output_interval)
        except SimulationError as e:
            partial = getattr(e, "partial", None)
            if partial is not None:
                e.results = _frame(*partial, as_frame)
            raise
        return _frame(names, columns, as_frame)


from ._sweep import sweep  # noqa: E402  (uses Simulation and Model above)
