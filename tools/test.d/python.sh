# Sourced by tools/test (bash, set -euo pipefail; $VENV is the test environment, PYTEST_DIRS the
# pytest folders). The Python package: build the abi3 wheel with maturin (release profile, into
# the cargo target folder), install that wheel into the test environment like a user would (a
# real `pip install` of the file, not `maturin develop`), and run python/tests against it. The
# tests compare with the `sprung` command, built here too (already compiled by cargo test).
PY_TARGET="${CARGO_TARGET_DIR:-target}"
PY_WHEELS="$PY_TARGET/wheels-python"
rm -rf "$PY_WHEELS"
echo "   building the sprung wheel (maturin build --release) into $PY_WHEELS"
"$VENV/bin/maturin" build --release --quiet --manifest-path python/Cargo.toml \
    --interpreter "$VENV/bin/python" --out "$PY_WHEELS"
PY_WHEEL=$(ls "$PY_WHEELS"/sprung-*.whl)
echo "   installing $PY_WHEEL"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$PY_WHEEL"
cargo test --release --no-run -q   # the suite's build (same features as the suite: nothing recompiled)
SPRUNG_CLI="$(cd "$PY_TARGET" && pwd)/release/sprung"
export SPRUNG_CLI
PYTEST_DIRS+=(python/tests)
