"""Parameter sweep of the double wishbone from Python: bushing and damper scale factors on a
grid, each variant run through the engine's per-variant function, the Fx step at 5 s measured
by peak longitudinal wheel-centre displacement, its settling time and the toe change.

    python python/examples/sweep.py [--grid N] [--dask WORKERS] [--out table.csv]

``--grid 20`` (default) gives 20 bushing × 10 damper scales = 200 variants, the grid of the
``sprung sweep`` example in docs/sweeps.md; ``--dask 2`` runs them on a local Dask cluster of two
worker processes instead of threads. With matplotlib installed the table is also plotted next to
the CSV.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import sprung

DEFAULT_MODEL = pathlib.Path(__file__).resolve().parents[2] / "models" / "double_wishbone.toml"
METRICS = ["peak:wc_dx_L", "settling:wc_dx_L:0.02", "delta:toe_L"]
T_END = 6.0  # s: one second after the Fx step
STEP_TIME = 5.0  # s: the Fx step of the load case


def variants(n: int):
    """n bushing scales (0.5 … 2) × n/2 damper scales (0.5 … 1.5), evenly spaced."""
    return [
        {"bushing_scale": float(b), "damper_scale": float(d)}
        for b in np.linspace(0.5, 2.0, n)
        for d in np.linspace(0.5, 1.5, max(n // 2, 1))
    ]


def run(n: int = 20, model=DEFAULT_MODEL, client=None):
    return sprung.sweep(sprung.Model(str(model)), variants(n), t_end=T_END, metrics=METRICS, step_time=STEP_TIME, client=client)


def plot(table, path: pathlib.Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, m in zip(axes, METRICS):
        for d, g in table.groupby("damper_scale"):
            ax.plot(g["bushing_scale"], g[m], marker=".", label=f"dampers × {d:.2f}")
        ax.set_xlabel("bushing scale")
        ax.set_title(m)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=20)
    ap.add_argument("--dask", type=int, default=0, help="local Dask worker processes (0: threads)")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("sweep.csv"))
    ap.add_argument("--model", type=pathlib.Path, default=DEFAULT_MODEL)
    a = ap.parse_args()
    client = None
    if a.dask:
        from dask.distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=a.dask, threads_per_worker=1, processes=True))
    t0 = time.perf_counter()
    table = run(a.grid, a.model, client)
    wall = time.perf_counter() - t0
    if client is not None:
        client.close()
    table.to_csv(a.out)
    ok = (table["status"] == "ok").sum()
    print(f"{len(table)} variants ({ok} ok) in {wall:.1f} s -> {a.out}")
    print(table[METRICS].describe().loc[["min", "max"]].to_string())
    png = a.out.with_suffix(".png")
    if plot(table, png):
        print(f"plot: {png}")


if __name__ == "__main__":
    main()
