"""FMUs exported by `sprung fmu`, checked with FMPy (an independent importer): validation, the
double-wishbone load case against `sprung run`, the step-multiple rule, the error path of a
diverging model, and FMU-state serialisation.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from fmpy import read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException

from sprung_fmu_support import sprung, unpacked

T_END = 8.0  # s, the load case (models/double_wishbone.toml)
DT = 1e-3  # s, output interval = internal step of the model


class LogCollector:
    """A logger callback for FMPy (FMI 2: env, instance, status, category, message; FMI 3:
    env, status, category, message) that keeps (status, message)."""

    def __init__(self):
        self.messages = []

    def __call__(self, *args):
        status, message = args[-3], args[-1]
        self.messages.append((status, message.decode() if isinstance(message, bytes) else message))

    def text(self):
        return "\n".join(m for _, m in self.messages)


def test_fmpy_validate(wishbone_fmu):
    """`fmpy validate` finds no problem (schema, variables, units, model structure)."""
    r = subprocess.run([sys.executable, "-m", "fmpy", "validate", str(wishbone_fmu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "No problems found" in r.stdout, r.stdout


def test_model_description_variables(wishbone_fmu):
    """The variables: the two runtime inputs Fx_L/Fx_R (N, start 0) and the 22 output channels
    of the model with their units."""
    md = read_model_description(str(wishbone_fmu))
    by_name = {v.name: v for v in md.modelVariables}
    inputs = [v.name for v in md.modelVariables if v.causality == "input"]
    assert inputs == ["Fx_L", "Fx_R"]
    assert by_name["Fx_L"].unit == "N" and float(by_name["Fx_L"].start) == 0.0
    outputs = [v for v in md.modelVariables if v.causality == "output"]
    assert len(outputs) == 22
    assert by_name["wc_dx_L"].unit == "m" and by_name["toe_L"].unit == "deg"
    params = [v for v in md.modelVariables if v.causality == "parameter"]
    assert [p.name for p in params] == ["bushing_scale", "damper_scale"]
    assert all(p.variability == "fixed" and float(p.start) == 1.0 for p in params)
    assert md.coSimulation.canGetAndSetFMUstate and md.coSimulation.canSerializeFMUstate
    assert float(md.defaultExperiment.stopTime) == T_END


@pytest.fixture(scope="session")
def sprung_run_reference(work, wishbone_model):
    """`sprung run --inputs`: the same runtime inputs held from their row times (zero-order
    hold, as FMPy holds an input over a communication step)."""
    table = work / "fx.csv"
    table.write_text("t,Fx_L,Fx_R\n0,0,0\n5,-2500,-2500\n")
    out = work / "run"
    sprung("run", wishbone_model, "--inputs", table, "--out", out, "--quiet")
    return pd.read_csv(out / "results.csv")


def test_load_case_matches_sprung_run(wishbone_fmu, sprung_run_reference):
    """FMPy simulates the load case, the −2500 N Fx step at t = 5 s fed as an input signal,
    and reproduces `sprung run` at every communication point to 1e-9 relative (per channel,
    relative to the channel's largest magnitude). Both run the same fixed-step LSRT2 through
    the same facade; what differs is FMPy's linear interpolation of the input table, which
    returns −2500 N ± 1 ulp at some points (65 of 3000 from t = 7.468 s), so the outputs agree
    to round-off (measured 4e-11), not bit for bit — Ecos, which sets the inputs exactly,
    agrees bit for bit (test_second_importer_ecos)."""
    signals = np.array(
        [(0.0, 0.0, 0.0), (5.0, 0.0, 0.0), (5.0, -2500.0, -2500.0), (T_END, -2500.0, -2500.0)],
        dtype=[("time", np.float64), ("Fx_L", np.float64), ("Fx_R", np.float64)],
    )
    ref = sprung_run_reference
    channels = [c for c in ref.columns if c != "time"]
    res = simulate_fmu(str(unpacked(wishbone_fmu)), stop_time=T_END, output_interval=DT,
                       input=signals, output=channels)
    assert len(res) == len(ref), (len(res), len(ref))
    np.testing.assert_allclose(res["time"], ref["time"], rtol=0, atol=1e-9)
    worst = 0.0
    for c in channels:
        a, b = ref[c].to_numpy(), res[c]
        scale = max(np.max(np.abs(a)), 1e-300)
        worst = max(worst, np.max(np.abs(a - b)) / scale)
    print(f"largest relative difference FMU vs sprung run: {worst:.3e}")
    assert worst <= 1e-9
    # The load case happened: the wheel centre moves back under the Fx step.
    dx = res["wc_dx_L"]
    assert dx[res["time"] > 6.0].mean() < dx[res["time"] < 4.9].mean() - 1e-4


def test_non_multiple_step_is_rejected(msd_fmu):
    """A communication step of 1.5 internal steps fails with fmi2Error/fmi3Error (status 3)
    and a message naming the internal step."""
    log = LogCollector()
    with pytest.raises(FMICallException) as e:
        simulate_fmu(str(unpacked(msd_fmu)), stop_time=0.1, output_interval=1.5e-3, logger=log)
    assert e.value.status == 3
    assert "DoStep" in e.value.function
    assert any(s == 3 and "communication step 0.0015 s is not a whole multiple of the internal "
               "fixed step 0.001 s" in m for s, m in log.messages), log.text()


def test_diverging_model_raises(diverging_fmu):
    """A model that diverges: the importer gets an exception (fmi*Error), not a crash, and the
    log names the time and the body that left the plausible range."""
    log = LogCollector()
    signals = np.array([(0.0, 10.0), (3.0, 10.0)], dtype=[("time", np.float64), ("F", np.float64)])
    with pytest.raises(FMICallException) as e:
        simulate_fmu(str(unpacked(diverging_fmu)), stop_time=3.0, output_interval=1e-2,
                     input=signals, logger=log)
    assert e.value.status == 3
    text = log.text()
    assert "step from t = " in text and "mass" in text, text


def test_fmu_state_serialisation(msd_fmu):
    """Get, serialise, deserialise and set the FMU state through FMPy's FMI API: the run after
    the restore repeats the outputs bit for bit."""
    from fmpy import instantiate_fmu

    md = read_model_description(str(msd_fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = instantiate_fmu(str(unpacked(msd_fmu)), md)
    v2 = md.fmiVersion.startswith("2")
    if v2:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
    else:
        fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    get = fmu.getReal if v2 else fmu.getFloat64
    put = fmu.setReal if v2 else fmu.setFloat64

    def run(t0, n):
        out = []
        for k in range(n):
            put([vr["F"]], [10.0 if k % 40 < 20 else -4.0])
            fmu.doStep(currentCommunicationPoint=t0 + k * 2e-3, communicationStepSize=2e-3)
            out.append(get([vr["x"], vr["v"]]))
        return np.array(out)

    run(0.0, 50)
    state = fmu.getFMUState() if not v2 else fmu.getFMUstate()
    data = fmu.serializeFMUState(state) if not v2 else fmu.serializeFMUstate(state)
    first = run(0.1, 60)
    restored = fmu.deserializeFMUState(data) if not v2 else fmu.deSerializeFMUstate(data)
    if v2:
        fmu.setFMUstate(restored)
    else:
        fmu.setFMUState(restored)
    second = run(0.1, 60)
    assert np.array_equal(first, second)
    fmu.terminate()
    fmu.freeInstance()


def load_ecos():
    """Ecos (ecospy, Equinor's co-simulation engine in C++ on fmi4c): the second importer. Its
    wheel bundles libecosc.so, which needs oneTBB's libtbb.so.12; the `tbb` wheel installs that
    into the environment's lib/ folder, loaded here first so the dynamic loader finds it."""
    import ctypes
    import os

    ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
    import ecospy

    return ecospy


def test_second_importer_ecos(wishbone_fmu, sprung_run_reference):
    """Ecos runs the load case from the same FMU (its own FMI loader, its own master loop):
    Fx = 0 for 5000 steps, then −2500 N for 3000, the outputs read every 500 steps match
    `sprung run` at those times to 1e-9 relative."""
    ecospy = load_ecos()
    ref = sprung_run_reference
    channels = [c for c in ref.columns if c != "time"]
    worst = 0.0
    with ecospy.EcosSimulationStructure() as ss:
        ss.add_model("dw", str(wishbone_fmu))
        with ecospy.EcosSimulation(structure=ss, step_size=DT) as sim:
            sim.init()
            steps = 0
            for chunk in range(16):
                if steps == 5000:
                    sim.set_real("dw::Fx_L", -2500.0)
                    sim.set_real("dw::Fx_R", -2500.0)
                sim.step(500)
                steps += 500
                row = ref.iloc[steps]
                assert abs(row["time"] - steps * DT) < 1e-12
                assert abs(sim.get_time() - steps * DT) < 1e-9
                for c in channels:
                    scale = max(np.max(np.abs(ref[c].to_numpy())), 1e-300)
                    worst = max(worst, abs(sim.get_real(f"dw::{c}") - row[c]) / scale)
            sim.terminate()
    print(f"largest relative difference Ecos vs sprung run: {worst:.3e}")
    assert worst <= 1e-9


def test_parameter_from_the_importer(work, wishbone_model, wishbone_fmu):
    """A parameter set by the importer before initialisation (FMPy start value damper_scale = 2)
    gives the run of `sprung run` on the model file whose declared damper_scale is 2 (to 1e-9
    relative; FMPy's input interpolation as in the load-case test), and differs from the
    run with damper_scale = 1 (the parameter acts)."""
    text = wishbone_model.read_text()
    declared = 'name = "damper_scale"\nvalue = 1.0'
    assert text.count(declared) == 1
    scaled = work / "double_wishbone_damper2.toml"
    scaled.write_text(text.replace(declared, 'name = "damper_scale"\nvalue = 2.0'))
    table = work / "fx.csv"
    table.write_text("t,Fx_L,Fx_R\n0,0,0\n5,-2500,-2500\n")
    out = work / f"run_damper2_{wishbone_fmu.stem}"
    t_end = 6.0
    sprung("run", scaled, "--inputs", table, "--out", out, "--quiet", "--t-end", t_end)
    ref = pd.read_csv(out / "results.csv")
    signals = np.array(
        [(0.0, 0.0, 0.0), (5.0, 0.0, 0.0), (5.0, -2500.0, -2500.0), (t_end, -2500.0, -2500.0)],
        dtype=[("time", np.float64), ("Fx_L", np.float64), ("Fx_R", np.float64)],
    )
    res = simulate_fmu(str(unpacked(wishbone_fmu)), stop_time=t_end, output_interval=DT,
                       input=signals, start_values={"damper_scale": 2.0},
                       output=["damper_force_L", "wc_dx_L"])
    assert len(res) == len(ref)
    for c in ["damper_force_L", "wc_dx_L"]:
        a = ref[c].to_numpy()
        assert np.max(np.abs(a - res[c])) <= 1e-9 * np.max(np.abs(a)), c
    base = simulate_fmu(str(unpacked(wishbone_fmu)), stop_time=t_end, output_interval=DT,
                        input=signals, output=["damper_force_L"])
    assert np.max(np.abs(base["damper_force_L"] - res["damper_force_L"])) > 1.0  # N
