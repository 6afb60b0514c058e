"""Closed loop from Python: a PID controller holds the left wheel centre of the double wishbone
10 mm above its static position by setting the vertical wheel force Fz_L every step.

The model file drives Fz_L with a constant 5000 N; here it becomes a ``runtime`` input (default
5000 N) before the model is compiled, and the loop sets it:

    Fz = 5000 N + K_p e + K_i ∫e dt − K_d ż,   e = z_target − z,

with ż differenced from the measured z. With K_i = 0 this is the PD loop of the Rust example
``crates/sprung/examples/closed_loop_pd.rs`` (same gains), which leaves the steady error
Δz k_w / (k_w + K_p); the integral term removes it.

    python python/examples/closed_loop.py [path/to/double_wishbone.toml]
"""

from __future__ import annotations

import pathlib
import sys
from dataclasses import dataclass

import sprung

#: Proportional gain, N/m.
KP = 2.0e5
#: Integral gain, N/(m s).
KI = 2.0e6
#: Derivative gain, N s/m.
KD = 2.0e3
#: Lift of the target above the static position, m.
LIFT = 0.010

DEFAULT_MODEL = pathlib.Path(__file__).resolve().parents[2] / "models" / "double_wishbone.toml"
CONSTANT_FZ = 'signal = { type = "constant", value = 5000.0 }'
RUNTIME_FZ = 'signal = { type = "runtime", default = 5000.0 }'


def runtime_force_model(path: str | pathlib.Path = DEFAULT_MODEL) -> sprung.Model:
    """The double wishbone with Fz_L (and its mirror Fz_R) as a runtime input."""
    text = pathlib.Path(path).read_text()
    if text.count(CONSTANT_FZ) != 1:
        raise ValueError(f"{path}: expected one constant 5000 N Fz signal to turn into a runtime input")
    return sprung.Model.from_toml(text.replace(CONSTANT_FZ, RUNTIME_FZ), label=str(path))


@dataclass
class Outcome:
    z_static: float  #: static wheel-centre displacement, m
    z_target: float  #: target, m
    z_final: float  #: wheel-centre displacement at the end, m
    late_variation: float  #: largest |z − z_final| over the last 0.2 s, m
    force_final: float  #: wheel force at the end, N


def run(model: sprung.Model, t_end: float = 2.0, kp: float = KP, ki: float = KI, kd: float = KD) -> Outcome:
    """Runs the loop for ``t_end`` seconds, one controller update per engine step."""
    sim = sprung.Simulation(model)
    h = sim.step_size
    z_static = sim.channel("wc_dz_L")
    z_target = z_static + LIFT
    z_prev, integral, force = z_static, 0.0, 5000.0
    n = round(t_end / h)
    late = []
    for k in range(n):
        z = sim.channel("wc_dz_L")
        z_dot = (z - z_prev) / h
        z_prev = z
        e = z_target - z
        integral += e * h
        force = 5000.0 + kp * e + ki * integral - kd * z_dot
        sim.set_input("Fz_L", force)
        sim.step()
        if k * h > t_end - 0.2:
            late.append(z)
    z_final = sim.channel("wc_dz_L")
    late_variation = max(abs(z - z_final) for z in late)
    return Outcome(z_static, z_target, z_final, late_variation, force)


def main(argv: list[str]) -> None:
    model = runtime_force_model(argv[1] if len(argv) > 1 else DEFAULT_MODEL)
    for name, ki in (("PD ", 0.0), ("PID", KI)):
        o = run(model, ki=ki)
        print(
            f"{name}: target {o.z_target * 1e3:.3f} mm, reached {o.z_final * 1e3:.3f} mm "
            f"(error {(o.z_target - o.z_final) * 1e3:.4f} mm), wheel force {o.force_final:.0f} N"
        )


if __name__ == "__main__":
    main(sys.argv)
