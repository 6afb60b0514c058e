"""Snapshots: a restored simulation continues bit for bit as if it had not stopped."""

import json

import numpy as np
import pytest

import sprung


def trajectory(sim, t_end):
    rows = []
    while sim.time < t_end - 1e-12:
        sim.step()
        rows.append(sim.channel_values())
    return np.array(rows)


@pytest.mark.parametrize("relinearise_every", [1, 5])
def test_round_trip_continues_bitwise(double_wishbone, relinearise_every):
    """Stop at 4.997 s (before the Fx step at 5 s, mid re-linearisation interval for
    relinearise_every = 5), snapshot, continue to 5.2 s; restore the snapshot into the same and
    into a fresh simulation and continue again: all three trajectories are identical."""
    sim = sprung.Simulation(double_wishbone, relinearise_every=relinearise_every)
    sim.advance_to(4.997)
    snap = sim.state()
    assert isinstance(snap, str) and json.loads(snap)["steps"] == 4997
    straight = trajectory(sim, 5.2)
    sim.set_state(snap)
    assert sim.time == pytest.approx(4.997, abs=1e-12)
    again = trajectory(sim, 5.2)
    fresh = sprung.Simulation(double_wishbone, relinearise_every=relinearise_every, from_design=True)
    fresh.set_state(snap.encode())  # bytes work too
    other = trajectory(fresh, 5.2)
    np.testing.assert_array_equal(straight, again)
    np.testing.assert_array_equal(straight, other)
    assert straight.shape == (203, len(double_wishbone.channel_names))


def test_runtime_inputs_are_part_of_the_snapshot(double_wishbone):
    from conftest import load_example

    model = load_example("closed_loop").runtime_force_model()
    sim = sprung.Simulation(model)
    sim.set_input("Fz_L", 5300.0)
    snap = sim.state()
    sim.set_input("Fz_L", 100.0)
    sim.set_state(snap)
    assert sim.input("Fz_L") == 5300.0


def test_bad_snapshots_are_rejected(double_wishbone):
    sim = sprung.Simulation(double_wishbone)
    with pytest.raises(sprung.SnapshotError, match="snapshot JSON"):
        sim.set_state("{not json")
    s = json.loads(sim.state())
    s["model"] = "other"
    with pytest.raises(sprung.SnapshotError, match="does not fit model 'double_wishbone'"):
        sim.set_state(json.dumps(s))
    with pytest.raises(sprung.SnapshotError):
        sim.set_state(42)
