"""Loading and running through the Python package against the `sprung run` command: the same
model, settings and run loop must give the same numbers bit for bit (both go through
sprung::Simulation::run_with; the CSV holds shortest round-trip decimals, so reading it back is
exact)."""

import csv
import subprocess

import numpy as np
import pandas as pd
import pytest

import sprung


def test_model_metadata(double_wishbone):
    m = double_wishbone
    assert m.name == "double_wishbone"
    assert "wc_dz_L" in m.channel_names
    assert m.channel_units["wc_dz_L"] == "m"
    assert m.input_names[:2] == ["Fz_L", "Fx_L"]
    assert m.default_settings()["method"] == "lsrt2"
    assert "double_wishbone" in repr(m)


def test_double_wishbone_run_matches_cli_bitwise(double_wishbone_path, sprung_cli, tmp_path):
    t_end = 6.0  # past the Fx step at 5 s
    subprocess.run(
        [sprung_cli, "run", double_wishbone_path, "--t-end", str(t_end), "--out", str(tmp_path), "-q"],
        check=True,
        capture_output=True,
    )
    with open(tmp_path / "results.csv", newline="") as f:
        header, *rows = list(csv.reader(f))
    # float() of the shortest round-trip decimals is exact
    cli = pd.DataFrame([[float(x) for x in r] for r in rows], columns=header)
    sim = sprung.Simulation(double_wishbone_path)
    df = sim.run(t_end)
    assert isinstance(df, pd.DataFrame)
    assert sim.time == pytest.approx(t_end, abs=1e-12)
    assert len(df) == len(cli) == 6001
    np.testing.assert_array_equal(df.index.to_numpy(), cli.iloc[:, 0].to_numpy())
    assert list(df.columns) == list(cli.columns[1:])
    for name in df.columns:
        np.testing.assert_array_equal(df[name].to_numpy(), cli[name].to_numpy(), err_msg=name)
    # the step in Fx at 5 s moves the wheel centre backwards (rearwards force)
    assert df["wc_dx_L"].iloc[-1] < df["wc_dx_L"].loc[4.9] - 1e-4


def test_run_without_pandas_returns_numpy_dict(double_wishbone):
    sim = sprung.Simulation(double_wishbone)
    out = sim.run(0.1, as_frame=False)
    assert list(out)[0] == "time"
    assert set(out) == {"time", *double_wishbone.channel_names}
    assert all(isinstance(v, np.ndarray) and v.shape == (101,) for v in out.values())
    np.testing.assert_allclose(out["time"], np.arange(101) * 1e-3, rtol=0, atol=1e-15)


def test_run_equals_stepping(double_wishbone):
    """run() and step() go through the same integrator: 200 fixed steps either way agree bit for
    bit at the end."""
    a = sprung.Simulation(double_wishbone)
    b = sprung.Simulation(double_wishbone)
    df = a.run(0.2)
    b.advance_to(0.2)
    assert a.time == b.time
    np.testing.assert_array_equal(df.iloc[-1].to_numpy(), b.channel_values())
    assert b.channels() == dict(zip(b.channel_names, b.channel_values()))


def test_equilibrium_and_modes(double_wishbone):
    sim = sprung.Simulation(double_wishbone)
    eq = sim.equilibrium()
    assert eq["relative_residual"] < 1e-9
    # the model starts in equilibrium already (no Newton iteration needed) and the
    # accelerations vanish: measured 1.2e-6 m/s² (the residual 1e-12 of the 1e4 N load scale
    # over the light link masses)
    assert eq["iterations"] == 0
    acc = sim.accelerations()
    assert np.max(np.abs(acc)) < 1e-5
    modes = sim.modes()
    f, zeta = modes["frequencies_hz"], modes["damping_ratios"]
    assert len(f) == len(zeta) > 0 and np.all(np.diff(f) >= 0)
    lam = modes["eigenvalues"]
    # f = |λ| / 2π and ζ = −Re λ / |λ| (definitions; a second path through the eigenvalues)
    np.testing.assert_allclose(f, np.abs(lam) / (2 * np.pi), rtol=1e-12)
    np.testing.assert_allclose(zeta, -lam.real / np.abs(lam), rtol=1e-12, atol=1e-15)
    assert modes["max_real_part"] <= 1e-9


def test_settings_keywords(double_wishbone):
    sim = sprung.Simulation(double_wishbone, step=5e-4, output_interval=1e-3)
    assert sim.step_size == 5e-4
    sim.advance_to(0.01)
    assert sim.time == pytest.approx(0.01, abs=1e-15)
    ad = sprung.Simulation(double_wishbone, method="rodas4", rtol=1e-6, atol=1e-8)
    df = ad.run(0.05)
    assert df.index[-1] == pytest.approx(0.05)


def test_accelerate_gives_the_generic_run(tmp_path):
    """Simulation.accelerate (docs/accelerate.md): the plugin of a model with joints is built
    into the given cache and the run is the generic one to round-off (the generated tree
    kinematics are bit-identical, the point-to-point elements agree to round-off); a model
    without joints is refused with the reason."""
    from conftest import model_path

    path = model_path("joint_tabulated.toml")
    plain = sprung.Simulation(path)
    fast = sprung.Simulation(path)
    built = fast.accelerate(cache_dir=str(tmp_path / "cache"))
    assert built["library"].startswith(str(tmp_path / "cache"))
    assert built["compiled"] is True
    a, b = plain.run(1.0), fast.run(1.0)
    a, b = a.to_numpy(), b.to_numpy()
    assert a.shape == b.shape
    assert np.max(np.abs(a - b)) <= 1e-10 * np.max(np.abs(a))
    again = sprung.Simulation(path).accelerate(cache_dir=str(tmp_path / "cache"))
    assert again["compiled"] is False and again["library"] == built["library"]
    with pytest.raises(sprung.Error, match="has no joints"):
        sprung.Simulation(model_path("double_wishbone.toml")).accelerate(
            cache_dir=str(tmp_path / "cache")
        )
