# FMI face (sourced by tools/test after the Rust suite, from the repository root, with VENV set):
# builds the `sprung` command and the FMU engine library libsprung_fmi.so into the same target
# folder, then adds the FMU tests (FMPy: validation, the double-wishbone load case against
# `sprung run`, rejected steps, a diverging model, FMU states) to the pytest run.
echo "== FMI: cargo build --release -p sprung-cli -p sprung-fmi"
cargo build --release -p sprung-cli -p sprung-fmi
FMI_TARGET="${CARGO_TARGET_DIR:-target}"
export SPRUNG_BIN="$PWD/$FMI_TARGET/release/sprung"
export SPRUNG_FMI_LIB="$PWD/$FMI_TARGET/release/libsprung_fmi.so"
case "$FMI_TARGET" in /*) SPRUNG_BIN="$FMI_TARGET/release/sprung"; SPRUNG_FMI_LIB="$FMI_TARGET/release/libsprung_fmi.so" ;; esac
PYTEST_DIRS+=(crates/sprung-fmi/tests/python)
# The second importer: Ecos (PyPI ecospy; its bundled engine needs oneTBB from the tbb wheel).
"$VENV/bin/python" -m pip install -q --disable-pip-version-check ecospy tbb
