"""Errors reach Python as subclasses of sprung.Error with the engine's located messages."""

import re

import numpy as np
import pytest

import sprung


def test_exception_hierarchy():
    for cls in (
        sprung.ModelError,
        sprung.SettingsError,
        sprung.InputError,
        sprung.SimulationError,
        sprung.SnapshotError,
        sprung.EquilibriumError,
        sprung.ModesError,
    ):
        assert issubclass(cls, sprung.Error) and issubclass(cls, Exception)


def test_bad_model_file_names_file_and_line(tmp_path, double_wishbone_path):
    text = open(double_wishbone_path).read()
    # an unknown marker in the 'Fz_L' input, which starts on a known line
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('name = "Fz_L"'))
    marker = next(i for i in range(start, start + 6) if lines[i].startswith("marker ="))
    lines[marker] = 'marker = "no_such_marker"'
    bad = tmp_path / "bad_wishbone.toml"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(sprung.ModelError) as e:
        sprung.Model(str(bad))
    msg = str(e.value)
    assert "bad_wishbone.toml" in msg and "no_such_marker" in msg, msg
    # file:line of the input's definition (the [[inputs]] header or its fields)
    m = re.search(r"bad_wishbone\.toml:(\d+)", msg)
    assert m and start - 2 <= int(m.group(1)) <= marker + 1, msg


def test_syntax_error_is_located(tmp_path):
    bad = tmp_path / "syntax.toml"
    bad.write_text('[model]\nname = "x"\nground = \n')
    with pytest.raises(sprung.ModelError, match=r"syntax\.toml:3"):
        sprung.Model(str(bad))


def test_missing_file():
    with pytest.raises(sprung.ModelError, match="no_such_model.toml"):
        sprung.Simulation("no_such_model.toml")


def test_inputs_and_channels(double_wishbone):
    sim = sprung.Simulation(double_wishbone)
    with pytest.raises(sprung.InputError, match="unknown input 'Fy_L'.*Fz_L"):
        sim.set_input("Fy_L", 1.0)
    with pytest.raises(sprung.InputError, match="driven by a time signal"):
        sim.set_input("Fz_L", 1.0)
    with pytest.raises(sprung.InputError, match="out of range"):
        sim.set_input(99, 1.0)
    with pytest.raises(sprung.InputError, match="not finite"):
        sim.set_input(0, float("nan"))
    with pytest.raises(sprung.InputError, match="unknown output channel 'nope'"):
        sim.channel("nope")
    assert sim.input("Fz_L") == 5000.0
    assert sim.input(1) == 0.0  # the Fx step before 5 s


def test_settings_errors_name_the_keyword(double_wishbone):
    with pytest.raises(sprung.SettingsError, match="keyword step="):
        sprung.Simulation(double_wishbone, step=-1e-3)
    with pytest.raises(sprung.SettingsError, match="method='nosuch'"):
        sprung.Simulation(double_wishbone, method="nosuch")
    with pytest.raises(sprung.SettingsError, match="not both"):
        sprung.Simulation(double_wishbone, step=1e-3, rtol=1e-6)
    sim = sprung.Simulation(double_wishbone)
    with pytest.raises(sprung.SettingsError, match="whole number of steps"):
        sim.advance_to(0.0005)


def test_divergence_is_a_simulation_error(double_wishbone):
    """A 1e9 N wheel force throws the wheel out of the plausible range: the step fails with the
    time and the body named, as a SimulationError (not a crash, not NaN)."""
    from conftest import load_example

    model = load_example("closed_loop").runtime_force_model()
    sim = sprung.Simulation(model)
    sim.set_input("Fz_L", 1e9)
    with pytest.raises(sprung.SimulationError, match=r"step from t = .* failed"):
        sim.advance_to(1.0)
    sim2 = sprung.Simulation(model)
    sim2.set_input("Fz_L", 1e9)
    with pytest.raises(sprung.SimulationError, match="run failed") as e:
        sim2.run(1.0)
    # the rows up to the failure come with the exception
    partial = e.value.results
    assert 0 < len(partial) < 1001 and partial.index[-1] < 1.0
    assert np.isfinite(partial.to_numpy()).all()
