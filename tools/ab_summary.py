#!/usr/bin/env python3
"""Ratio of the minima (and medians) of the real-time factors of `tools/ab_bench.sh` rounds:
for every model, linear solver and re-linearisation interval, the minimum / median over all
runs of all rounds of base_*.json and new_*.json in the directory given."""
import glob
import json
import statistics
import sys


def runs(pattern):
    out = {}
    for f in sorted(glob.glob(pattern)):
        for m in json.load(open(f))["models"]:
            for r in m["rows"]:
                key = (m["model"], r["linear_solver"], r["relinearise_every"])
                out.setdefault(key, []).extend(r["real_time_factor_runs"])
    return out


d = sys.argv[1]
base, new = runs(f"{d}/base_*.json"), runs(f"{d}/new_*.json")
print(f"{'model':16} {'solver':13} {'k':>2} {'base min':>9} {'new min':>9} {'ratio':>6} "
      f"{'base med':>9} {'new med':>9} {'ratio':>6}")
for key in sorted(base):
    if key not in new:
        continue
    b, n = base[key], new[key]
    bm, nm = min(b), min(n)
    bd, nd = statistics.median(b), statistics.median(n)
    print(f"{key[0]:16} {key[1]:13} {key[2]:>2} {bm:9.5f} {nm:9.5f} {nm / bm:6.3f} "
          f"{bd:9.5f} {nd:9.5f} {nd / bd:6.3f}")
