# FMI face (sourced by tools/test after the Rust suite, from the repository root, with VENV set):
# takes the `sprung` command and the FMU engine library libsprung_fmi.so that the Rust suite just
# built, then adds the FMU tests (FMPy: validation, the double-wishbone load case against
# `sprung run`, rejected steps, a diverging model, FMU states) to the pytest run.
# `cargo test --release --no-run` selects the same packages and targets as the suite, so cargo
# unifies the same dependency features and finds everything fresh (a `cargo build -p ...` would
# select another feature set and recompile a dozen crates). cargo test leaves a cdylib in deps/
# (it copies only `cargo build` artefacts up to release/), under its plain name.
echo "== FMI: cargo test --release --no-run (the suite's build: sprung and libsprung_fmi.so)"
cargo test --release --no-run -q
FMI_TARGET="${CARGO_TARGET_DIR:-target}"
export SPRUNG_BIN="$PWD/$FMI_TARGET/release/sprung"
export SPRUNG_FMI_LIB="$PWD/$FMI_TARGET/release/deps/libsprung_fmi.so"
case "$FMI_TARGET" in /*) SPRUNG_BIN="$FMI_TARGET/release/sprung"; SPRUNG_FMI_LIB="$FMI_TARGET/release/deps/libsprung_fmi.so" ;; esac
for f in "$SPRUNG_BIN" "$SPRUNG_FMI_LIB"; do
    [ -f "$f" ] || { echo "FMI: $f was not built by cargo test --release; check tools/test.d/fmi.sh"; exit 1; }
done
PYTEST_DIRS+=(crates/sprung-fmi/tests/python)
# The second importer: Ecos (PyPI ecospy; its bundled engine needs oneTBB from the tbb wheel).
"$VENV/bin/python" -m pip install -q --disable-pip-version-check ecospy tbb
