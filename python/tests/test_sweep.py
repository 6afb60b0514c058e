"""sprung.sweep on threads and on a local Dask cluster (2 worker processes): the rows are the
same bit for bit as the sequential sweep, and a row is the same as running the variant by hand
through Model.with_parameters and Simulation.run."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import sprung
from conftest import EXAMPLES

METRICS = ["peak:wc_dx_L", "settling:wc_dx_L:0.02", "delta:toe_L", "min:wc_dx_L", "max:damper_force_L"]
T_END = 6.0
VARIANTS = [
    {"bushing_scale": b, "damper_scale": d} for b in (0.7, 1.0, 1.5) for d in (0.6, 1.7)
]


@pytest.fixture(scope="module")
def sequential(double_wishbone):
    return sprung.sweep(double_wishbone, VARIANTS, t_end=T_END, metrics=METRICS, step_time=5.0, max_workers=1)


def assert_same_rows(a, b):
    assert list(a.columns) == list(b.columns)
    assert (a["status"] == "ok").all() and (b["status"] == "ok").all()
    for c in a.columns:
        if a[c].dtype.kind == "f":
            np.testing.assert_array_equal(a[c].to_numpy(), b[c].to_numpy(), err_msg=c)
        else:
            assert list(a[c]) == list(b[c]), c


def test_table_layout_and_physics(sequential):
    t = sequential
    assert isinstance(t, pd.DataFrame) and list(t.index) == list(range(len(VARIANTS)))
    assert list(t.columns) == ["bushing_scale", "damper_scale", *METRICS, "status", "message", "t_reached"]
    assert (t["t_reached"] == T_END).all()
    # softer bushings let the wheel go further back under the same rearward force
    soft, stiff = t[t.bushing_scale == 0.7], t[t.bushing_scale == 1.5]
    assert (soft["min:wc_dx_L"].to_numpy() < stiff["min:wc_dx_L"].to_numpy()).all()


def test_threads_equal_sequential(double_wishbone, sequential):
    threaded = sprung.sweep(double_wishbone, VARIANTS, t_end=T_END, metrics=METRICS, step_time=5.0, max_workers=2)
    assert_same_rows(sequential, threaded)


def test_row_equals_the_variant_run_by_hand(double_wishbone, sequential):
    """Second path: the variant's model from Model.with_parameters, run with Simulation.run; the
    whole-record extremes must be the sweep's metrics bit for bit."""
    v = VARIANTS[3]
    df = sprung.Simulation(double_wishbone.with_parameters(v)).run(T_END)
    row = sequential.iloc[3]
    assert row["min:wc_dx_L"] == df["wc_dx_L"].min()
    assert row["max:damper_force_L"] == df["damper_force_L"].max()
    assert double_wishbone.with_parameters(**v).parameter_value("damper_scale") == v["damper_scale"]


def test_dask_cluster_equals_sequential(double_wishbone, sequential):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        on_dask = sprung.sweep(double_wishbone, VARIANTS, t_end=T_END, metrics=METRICS, step_time=5.0, client=client)
        # the work really ran in the two worker processes
        assert len(client.scheduler_info()["workers"]) == 2
    assert_same_rows(sequential, on_dask)


def test_rows_equal_the_sprung_sweep_command(double_wishbone_path, sprung_cli, sequential, tmp_path):
    """Third path: `sprung sweep` (the rayon pool of the command line) over the same grid (first
    axis slowest, like VARIANTS) writes the same metrics bit for bit (shortest round-trip
    decimals in its CSV, read back exactly with float())."""
    import csv

    cmd = [sprung_cli, "sweep", double_wishbone_path, "--grid", "bushing_scale=0.7,1.0,1.5",
           "--grid", "damper_scale=0.6,1.7", "--t-end", str(T_END), "--step-time", "5",
           "--threads", "2", "--out", str(tmp_path), "--quiet"]
    for m in METRICS:
        cmd += ["--metric", m]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(tmp_path / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(VARIANTS)
    for i, r in enumerate(rows):
        assert int(r["variant"]) == i and r["status"] == "ok"
        for name in ("bushing_scale", "damper_scale", *METRICS):
            assert float(r[name]) == sequential[name].iloc[i], (i, name)


def test_model_pickles_as_its_description(double_wishbone):
    import pickle

    m = pickle.loads(pickle.dumps(double_wishbone.with_parameters(damper_scale=1.3)))
    assert m.parameter_value("damper_scale") == 1.3
    a = sprung.Simulation(m)
    b = sprung.Simulation(double_wishbone.with_parameters(damper_scale=1.3))
    a.advance_to(0.05)
    b.advance_to(0.05)
    np.testing.assert_array_equal(a.channel_values(), b.channel_values())


def test_bad_names_are_rejected_before_running(double_wishbone):
    with pytest.raises(sprung.ModelError, match="bushing_scale"):
        sprung.sweep(double_wishbone, [{"no_such_parameter": 1.0}], metrics=["peak:wc_dx_L"])
    with pytest.raises(sprung.SettingsError, match="no output channel 'nope'"):
        sprung.sweep(double_wishbone, VARIANTS, metrics=["peak:nope"])
    with pytest.raises(sprung.ModelError, match="damper_scale"):
        double_wishbone.with_parameters(damper_scale=float("nan"))


def test_failed_variant_is_a_row_not_an_exception(double_wishbone):
    """A value the model validation rejects fails its own row (with the located message) and
    leaves the others alone."""
    path = "force_elements.spring_L.stiffness"
    t = sprung.sweep(double_wishbone, [{path: 93500.0}, {path: -5.0}], t_end=0.1, metrics=["max:wc_dx_L"])
    assert list(t["status"]) == ["ok", "failed"]
    assert "double_wishbone.toml" in t["message"].iloc[1] and "negative" in t["message"].iloc[1]
    assert np.isnan(t["max:wc_dx_L"].iloc[1]) and np.isfinite(t["max:wc_dx_L"].iloc[0])


def test_sweep_example_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "sweep.py"), "--grid", "4", "--out", str(tmp_path / "s.csv")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "8 variants (8 ok)" in out, out
    t = pd.read_csv(tmp_path / "s.csv")
    assert len(t) == 8 and t["peak:wc_dx_L"].notna().all()
