#!/usr/bin/env bash
# A/B real-time benchmark of two `sprung` binaries on the same model files, run alternately in
# one sitting (docs/performance.md: "A/B"), then the ratio of the minima per configuration.
# Usage: tools/ab_bench.sh BASE_BIN NEW_BIN OUT_DIR [ROUNDS] [MODELS] [-- extra bench args]
#   MODELS: comma-separated model files both binaries read (default: the two reference axles)
# Example (both with splitting on, then the core alone):
#   tools/ab_bench.sh old/sprung target/release/sprung out/ab 3
#   tools/ab_bench.sh old/sprung target/release/sprung out/ab_ignore 2 "" -- --breakpoints ignore
# (the first wave's binary knows no --breakpoints option: for the core-only comparison run the
# base without it, it has no step splitting.)
set -euo pipefail
base=$1 new=$2 out=$3 rounds=${4:-3}
models=${5:-models/double_wishbone.toml,models/multilink.toml}
[ -z "$models" ] && models=models/double_wishbone.toml,models/multilink.toml
shift $(( $# < 5 ? $# : 5 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
  "$base" bench --repeat 5 --json --models "$models" --out "$out/ref_base" > "$out/base_$i.json"
  "$new" bench --repeat 5 --json --models "$models" --out "$out/ref_new" "${extra[@]}" > "$out/new_$i.json"
done
python3 "$(dirname "$0")/ab_summary.py" "$out"
