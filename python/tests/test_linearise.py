"""Simulation.linearise() against central differences computed here in Python of the engine's
state derivatives (Simulation.accelerations) — the velocity rows of A and B come from the
engine's analytic linearisation, so this is an independent check of those partials through the
Python API. States are perturbed through the JSON snapshot: positions along the tangent
coordinates of the linearisation (δx global; δθ in body axes, q ← q ⊗ exp(δθ/2))."""

import json

import numpy as np
import pytest

import sprung
from conftest import load_example

DELTA = 1e-6  # m, rad, m/s: central differences, truncation ~δ², round-off ~ε|a|/δ


def quat_mul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def perturbed(snap, column, delta, n_bodies):
    """The snapshot with state `column` of the linearisation moved by `delta`."""
    s = json.loads(snap)
    r, v = np.array(s["r"]), np.array(s["v"])
    if column < 6 * n_bodies:
        b, k = divmod(column, 6)
        if k < 3:
            r[7 * b + k] += delta
        else:
            axis = np.zeros(3)
            axis[k - 3] = 1.0
            dq = np.concatenate([[np.cos(delta / 2)], np.sin(delta / 2) * axis])
            r[7 * b + 3 : 7 * b + 7] = quat_mul(r[7 * b + 3 : 7 * b + 7], dq)
    elif column < 12 * n_bodies:
        v[column - 6 * n_bodies] += delta
    else:
        raise NotImplementedError("element-state columns: the model has none")
    s["r"], s["v"] = r.tolist(), v.tolist()
    return json.dumps(s)


@pytest.fixture(scope="module")
def linearised():
    """The double wishbone with runtime wheel forces, moving (0.05 s after the Fx step, so that
    the velocity columns and the −½[ω]× block are not trivially zero)."""
    model = load_example("closed_loop").runtime_force_model()
    sim = sprung.Simulation(model)
    sim.set_input("Fz_L", 5600.0)
    sim.advance_to(0.05)
    return sim, sim.linearise()


def test_shapes_and_names(linearised):
    sim, ss = linearised
    a, b, c, d = ss
    n = len(ss.state_names)
    assert a.shape == (n, n) and b.shape == (n, len(ss.input_names))
    assert c.shape == (len(ss.output_names), n) and d.shape == (len(ss.output_names), len(ss.input_names))
    assert ss.input_names == sim.input_names and ss.output_names == sim.channel_names
    assert ss.A is a and ss.D is d
    assert n == 12 * (n // 12), "no element states in this model"


def test_velocity_rows_of_a_match_finite_differences(linearised):
    sim, ss = linearised
    n = len(ss.state_names)
    nb = n // 12
    snap = sim.state()
    fd = np.zeros((6 * nb, n))
    for j in range(n):
        sim.set_state(perturbed(snap, j, DELTA, nb))
        up = sim.accelerations()
        sim.set_state(perturbed(snap, j, -DELTA, nb))
        down = sim.accelerations()
        fd[:, j] = (up - down) / (2 * DELTA)
    sim.set_state(snap)
    analytic = ss.A[6 * nb :, :]
    scale = np.abs(analytic).max()
    err = np.abs(analytic - fd).max() / scale
    # measured 3.2e-11 of the largest entry (|A| ~1e10 from the stiff bushings; round-off
    # ε|a|/δ and the δ² truncation of the curved characteristics); 1e-9 leaves 30× for other
    # states and CPUs (AVX2 or portable pipeline)
    assert err < 1e-9, err


def test_position_rows_of_a_are_the_kinematics(linearised):
    """A_pv = I and A_pp = diag(0, −½[ω]×) per body (the module docs of sprung::linearise)."""
    sim, ss = linearised
    n = len(ss.state_names)
    nb = n // 12
    np.testing.assert_array_equal(ss.A[: 6 * nb, 6 * nb : 12 * nb], np.eye(6 * nb))
    v = sim.velocities()
    for b in range(nb):
        wx, wy, wz = v[6 * b + 3 : 6 * b + 6]
        skew = np.array([[0, -wz, wy], [wz, 0, -wx], [-wy, wx, 0]])
        np.testing.assert_allclose(ss.A[6 * b + 3 : 6 * b + 6, 6 * b + 3 : 6 * b + 6], -0.5 * skew, rtol=0, atol=1e-15)
        assert not ss.A[6 * b : 6 * b + 3, : 6 * nb].any()


def test_b_matches_finite_differences_in_the_runtime_inputs(linearised):
    """Columns of B for the runtime inputs: the accelerations are linear in an applied force, so
    the central difference over ±1 N is exact up to round-off (measured 5e-15 relative; bound
    1e-12)."""
    sim, ss = linearised
    nb = len(ss.state_names) // 12
    for name in ("Fz_L", "Fz_R"):
        k = ss.input_names.index(name)
        u0 = sim.input(name)
        sim.set_input(name, u0 + 1.0)
        up = sim.accelerations()
        sim.set_input(name, u0 - 1.0)
        down = sim.accelerations()
        sim.set_input(name, u0)
        fd = (up - down) / 2.0
        col = ss.B[6 * nb :, k]
        assert np.abs(col).max() > 0
        assert np.abs(col - fd).max() < 1e-12 * np.abs(col).max(), name
