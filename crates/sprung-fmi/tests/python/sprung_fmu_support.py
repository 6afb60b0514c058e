"""Helpers of the FMU tests (paths of the built `sprung` and engine library, running
`sprung`, exporting FMUs)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
SPRUNG = Path(os.environ.get("SPRUNG_BIN", TARGET / "release" / "sprung"))
LIBRARY = Path(os.environ.get("SPRUNG_FMI_LIB", TARGET / "release" / "libsprung_fmi.so"))

# The load case's Fx step (models/double_wishbone.toml) and the runtime input replacing it.
FX_STEP = 'signal = { type = "step", time = 5.0, before = 0.0, after = -2500.0 }'
FX_RUNTIME = 'signal = { type = "runtime", default = 0.0 }'


def sprung(*args, cwd=None):
    """Runs the sprung command; fails the test with its output on a non-zero exit."""
    r = subprocess.run([str(SPRUNG), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, f"sprung {' '.join(map(str, args))} failed:\n{r.stdout}\n{r.stderr}"
    return r


def unpacked(fmu):
    """The FMU extracted beside it, into `<fmu stem>.unpacked/` (once; the FMUs live in pytest's
    session folder). FMPy's `simulate_fmu` and `extract` otherwise unpack into a fresh folder
    under /tmp per call and leave it there when the simulation raises (~1 MB per call); given an
    extracted folder they read it in place and create nothing."""
    from fmpy import extract

    folder = Path(fmu).with_suffix(".unpacked")
    if not (folder / "modelDescription.xml").is_file():
        extract(str(fmu), unzipdir=str(folder))
    return folder


def export(model, out, version):
    """`sprung fmu MODEL -o OUT --fmi VERSION --library LIBRARY`."""
    sprung("fmu", model, "-o", out, "--fmi", version, "--library", LIBRARY)
    return out
