"""Shared fixtures of the Python package tests (run by tools/test through tools/test.d/python.sh
against the installed wheel)."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
EXAMPLES = ROOT / "python" / "examples"


def model_path(name: str) -> str:
    return str(MODELS / name)


@pytest.fixture(scope="session")
def double_wishbone_path() -> str:
    return model_path("double_wishbone.toml")


@pytest.fixture(scope="session")
def double_wishbone(double_wishbone_path):
    import sprung

    return sprung.Model(double_wishbone_path)


@pytest.fixture(scope="session")
def sprung_cli() -> str:
    """The `sprung` command: $SPRUNG_CLI (set by tools/test.d/python.sh), else on PATH."""
    exe = os.environ.get("SPRUNG_CLI") or shutil.which("sprung")
    if not exe or not os.path.exists(exe):
        pytest.fail("the sprung CLI is needed: set SPRUNG_CLI to target/release/sprung")
    return exe


def load_example(name: str):
    """The example script python/examples/NAME.py as a module."""
    import importlib.util
    import sys

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is created
    spec.loader.exec_module(mod)
    return mod
