#!/usr/bin/env python3
"""Attribute `perf record -e cpu-clock` samples of one function to source lines of the sprung
crates (docs/performance.md, "Machine and commands").

Everything on the stepping hot path is inlined into a few functions (`accelerations_avx2`,
`linearise_avx2`, ...), so perf's own per-symbol view says little. For every sampled address this
script asks addr2line for the inline chain and charges the sample to the innermost frame that lies
in this workspace's `crates/` (frames in `m3.rs`, the lane arithmetic, and in libraries are charged
to their caller). The binary must have been built from this checkout.

usage:
    perf record -e cpu-clock -F 20000 -o perf.data target/release/sprung run models/double_wishbone.toml -q
    tools/perf_by_line.py perf.data target/release/sprung accelerations_avx2

The binary must be the one that was recorded (rebuilding moves every address). Needs perf,
readelf and addr2line (binutils).
"""
import collections
import os
import re
import subprocess
import sys

# Source files of this workspace (addr2line prints absolute paths).
CRATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "crates") + "/"


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    data, binary, symbol = sys.argv[1:4]
    name = binary.rsplit("/", 1)[-1]
    mmaps = [l for l in run("perf", "script", "-i", data, "--show-mmap-events").splitlines()
             if "PERF_RECORD_MMAP" in l and "r-xp" in l and l.rstrip().endswith(name)]
    if not mmaps:
        sys.exit(f"{data}: no executable mapping of {name}; was it recorded with this binary?")
    start, pgoff = (int(x, 16) for x in
                    re.search(r"\[(0x[0-9a-f]+)\(0x[0-9a-f]+\) @ (0x[0-9a-f]+)", mmaps[0]).groups())
    # Virtual address = file offset + (p_vaddr - p_offset) of the executable LOAD segment.
    seg = next(l.split() for l in run("readelf", "-lW", binary).splitlines()
               if l.strip().startswith("LOAD") and " R E " in l)
    delta = int(seg[2], 16) - int(seg[1], 16)
    addresses = collections.Counter()
    for line in run("perf", "script", "-i", data, "-F", "ip,sym").splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and symbol in parts[1]:
            addresses[int(parts[0], 16) - start + pgoff + delta] += 1
    total = sum(addresses.values())
    if total == 0:
        sys.exit(f"no samples in a function matching '{symbol}'")
    by_line = collections.Counter()
    for address, count in addresses.items():
        out = run("addr2line", "-i", "-f", "-C", "-e", binary, hex(address)).strip().split("\n")
        locations = out[1::2]
        ours = [l.split(CRATES, 1)[1].split(" ")[0] for l in locations
                if CRATES in l and "/m3.rs" not in l]
        by_line[ours[0] if ours else locations[0].rsplit("/", 1)[-1]] += count
    print(f"{total} samples in '{symbol}'")
    for line, count in by_line.most_common(40):
        print(f"{100 * count / total:5.1f} %  {line}")


if __name__ == "__main__":
    main()
