"""Fixtures of the FMU tests: the `sprung` executable, the FMU engine library and FMUs
exported from the example models (built once per session).

tools/test.d/fmi.sh takes `sprung` and `libsprung_fmi.so` from the Rust suite's build and points SPRUNG_BIN and
SPRUNG_FMI_LIB at them; without those variables the release build in target/ is used.
"""

from pathlib import Path

import pytest

from sprung_fmu_support import FX_RUNTIME, FX_STEP, ROOT, export


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fmi")


@pytest.fixture(scope="session")
def wishbone_model(work):
    """The double-wishbone load case with Fx (both sides) a runtime input: the step comes from
    the importer."""
    text = (ROOT / "models" / "double_wishbone.toml").read_text()
    assert text.count(FX_STEP) == 1, "the Fx step of the load case changed; update FX_STEP"
    path = work / "double_wishbone_fmu.toml"
    path.write_text(text.replace(FX_STEP, FX_RUNTIME))
    return path


@pytest.fixture(scope="session", params=["2", "3"])
def wishbone_fmu(request, work, wishbone_model):
    return export(wishbone_model, work / f"double_wishbone_fmi{request.param}.fmu", request.param)


@pytest.fixture(scope="session")
def msd_model(work):
    """The mass-spring-damper with its force a runtime input."""
    text = (ROOT / "models" / "mass_spring_damper.toml").read_text()
    step = 'signal = { type = "step", time = 0.0, before = 0.0, after = 10.0 }'
    assert text.count(step) == 1
    path = work / "msd_fmu.toml"
    path.write_text(text.replace(step, FX_RUNTIME))
    return path


@pytest.fixture(scope="session", params=["2", "3"])
def msd_fmu(request, work, msd_model):
    return export(msd_model, work / f"msd_fmi{request.param}.fmu", request.param)


@pytest.fixture(scope="session", params=["2", "3"])
def diverging_fmu(request, work):
    model = Path(__file__).resolve().parents[1] / "models" / "diverging.toml"
    return export(model, work / f"diverging_fmi{request.param}.fmu", request.param)
