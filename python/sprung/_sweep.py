"""``sprung.sweep``: many variants of one model on threads or a Dask cluster.

Each variant is one call of the engine's per-variant function (``sprung::sweep::run_variant``
in Rust: the model recompiled with the variant's parameters, one simulation through the run
loop from the model's initial state, metrics of the recorded channels), so a variant's numbers
do not depend on where it runs: threads here, Dask workers in other processes or machines (the
model travels pickled as its description), and ``sprung sweep`` on the command line all give
the same rows bit for bit.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _sprung
from ._sprung import Model

Variant = Mapping[str, float]


def _variants(variants) -> List[Dict[str, float]]:
    """A list of ``{name: value}`` from a list of mappings or a pandas DataFrame (one row per
    variant, one column per parameter)."""
    if hasattr(variants, "to_dict") and hasattr(variants, "columns"):
        return [{str(k): float(v) for k, v in row.items()} for row in variants.to_dict("records")]
    out = []
    for i, v in enumerate(variants):
        if not isinstance(v, Mapping):
            raise TypeError(f"variant {i}: expected a mapping of parameter name to value, got {type(v).__name__}")
        out.append({str(k): float(x) for k, x in v.items()})
    return out


def run_variant(
    model: Model,
    parameters: Variant,
    metrics: Sequence[str],
    t_end: Optional[float] = None,
    step_time: Optional[float] = None,
    index: int = 0,
) -> Dict[str, Any]:
    """Runs one variant (the GIL is released while it runs) and returns its row:
    ``{"index", **parameters, **metrics, "status", "message", "t_reached"}``. A rejected
    parameter value or a failed run is reported in ``status``/``message``, not raised."""
    return _sprung.run_variant(model, index, list(parameters.items()), list(metrics), t_end, step_time)


def _task(model, index, parameters, metrics, t_end, step_time):
    """One Dask task (a module-level function, so that workers unpickle it by name)."""
    return run_variant(model, parameters, metrics, t_end, step_time, index)


def _table(rows: List[Dict[str, Any]], as_frame: Optional[bool]):
    if as_frame is not False:
        try:
            import pandas as pd
        except ImportError:
            if as_frame:
                raise
        else:
            return pd.DataFrame(rows).set_index("index")
    return rows


def sweep(
    model: Union[Model, str, os.PathLike],
    variants: Union[Iterable[Variant], Any],
    t_end: Optional[float] = None,
    metrics: Sequence[str] = (),
    client: Any = None,
    step_time: Optional[float] = None,
    max_workers: Optional[int] = None,
    as_frame: Optional[bool] = None,
):
    """Runs every variant of ``model`` and returns one row per variant, in the order given.

    * ``variants``: a list of ``{parameter: value}`` (declared parameter names or model paths,
      see ``Model.parameters``) or a DataFrame with one column per parameter.
    * ``metrics``: ``"KIND:CHANNEL[:BAND]"`` with KIND ``peak``, ``overshoot``, ``settling``
      (BAND relative to the step), ``final``, ``delta``, ``max``, ``min`` (docs/sweeps.md);
      ``step_time`` is the step time of the step-response metrics (default: the first sample).
    * ``t_end``: end time, s (default: the model's ``[solver] t_end``).
    * ``client``: a ``dask.distributed.Client`` runs the variants as tasks on its cluster (the
      model is scattered to the workers once); without one a thread pool of ``max_workers``
      threads (default: all cores) runs them here (the GIL is released inside each run).

    Names of parameters and metrics are checked before anything runs (:class:`sprung.Error`
    subclasses listing what exists). Returns a pandas DataFrame indexed by variant when pandas
    is importable (``as_frame=False``: a list of dicts), with the parameter columns, one column
    per metric, ``status`` (``ok``/``failed``), ``message`` and ``t_reached``.
    """
    if not isinstance(model, Model):
        model = Model(os.fspath(model))
    vs = _variants(variants)
    metrics = [str(m) for m in metrics]
    names = sorted({k for v in vs for k in v})
    _sprung.check_sweep(model, names, metrics, t_end)
    if client is not None:
        shared = client.scatter(model, broadcast=True)
        futures = client.map(
            _task,
            [shared] * len(vs),
            list(range(len(vs))),
            vs,
            metrics=metrics,
            t_end=t_end,
            step_time=step_time,
            pure=False,
        )
        rows = client.gather(futures)
    else:
        workers = max_workers or os.cpu_count() or 1
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = list(
                pool.map(
                    lambda iv: run_variant(model, iv[1], metrics, t_end, step_time, iv[0]),
                    enumerate(vs),
                )
            )
    return _table(rows, as_frame)
