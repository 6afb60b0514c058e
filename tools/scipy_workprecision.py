#!/usr/bin/env python3
"""Work-precision reference runs with SciPy's solve_ivp (Radau, BDF, LSODA) on the stiff test
problems of `sprung bench solvers`: HIRES, Van der Pol (eps = 1e-6, scaled form) and ROBER,
with the reference values of the Test Set for IVP Solvers (Mazzia & Magherini, release 2.4) as
listed in ../shared/data/integrators.md and crates/sprung-solve/src/ode/problems.rs.

Same tolerance ladder and absolute-tolerance scaling as the Rust benchmark:
atol_i = rtol * scale_i with scale HIRES 1e-4, Van der Pol 1, ROBER (1e-8, 1e-12, 1e-8).
Analytic Jacobians are given to every method (sprung uses analytic Jacobians too).

Error measure: scd = -log10(max_i |y_i - y_ref_i| / |y_ref_i|) at t_end.
Work: nfev, njev, nlu and accepted steps as reported by solve_ivp, CPU time = median of
time.process_time() over --repeats runs (Python overhead per f evaluation included, so compare
the counts first).

Optional: --compare SPRUNG.json (output of `sprung bench solvers --json`) prints markdown
tables that put SciPy next to the corresponding sprung methods at equal tolerance.

This script is a developer tool; nothing in the build or the tests needs Python.
Usage:  python3 tools/scipy_workprecision.py --out out/bench/scipy.json [--compare out/bench/solvers.json]
"""

import argparse
import json
import math
import platform
import statistics
import sys
import time

import numpy as np
import scipy
from scipy.integrate import solve_ivp


def hires_f(t, y):
    f = np.empty(8)
    f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007
    f[1] = 1.71 * y[0] - 8.75 * y[1]
    f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4]
    f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3]
    f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6]
    f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6]
    f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6]
    f[7] = -f[6]
    return f


def hires_j(t, y):
    j = np.zeros((8, 8))
    j[0, 0], j[0, 1], j[0, 2] = -1.71, 0.43, 8.32
    j[1, 0], j[1, 1] = 1.71, -8.75
    j[2, 2], j[2, 3], j[2, 4] = -10.03, 0.43, 0.035
    j[3, 1], j[3, 2], j[3, 3] = 8.32, 1.71, -1.12
    j[4, 4], j[4, 5], j[4, 6] = -1.745, 0.43, 0.43
    j[5, 3], j[5, 4], j[5, 5], j[5, 6], j[5, 7] = 0.69, 1.71, -0.43 - 280.0 * y[7], 0.69, -280.0 * y[5]
    j[6, 5], j[6, 6], j[6, 7] = 280.0 * y[7], -1.81, 280.0 * y[5]
    j[7, 5], j[7, 6], j[7, 7] = -280.0 * y[7], 1.81, -280.0 * y[5]
    return j


EPS = 1e-6


def vdp_f(t, y):
    return np.array([y[1], ((1.0 - y[0] * y[0]) * y[1] - y[0]) / EPS])


def vdp_j(t, y):
    return np.array([[0.0, 1.0], [(-2.0 * y[0] * y[1] - 1.0) / EPS, (1.0 - y[0] * y[0]) / EPS]])


def rober_f(t, y):
    r1 = 0.04 * y[0]
    r2 = 3e7 * y[1] * y[1]
    r3 = 1e4 * y[1] * y[2]
    return np.array([-r1 + r3, r1 - r2 - r3, r2])


def rober_j(t, y):
    return np.array(
        [
            [-0.04, 1e4 * y[2], 1e4 * y[1]],
            [0.04, -6e7 * y[1] - 1e4 * y[2], -1e4 * y[1]],
            [0.0, 6e7 * y[1], 0.0],
        ]
    )


PROBLEMS = {
    "hires": dict(
        f=hires_f,
        jac=hires_j,
        t0=0.0,
        t_end=321.8122,
        y0=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057],
        y_ref=[
            7.371312573325668e-4,
            1.442485726316185e-4,
            5.888729740967575e-5,
            1.175651343283149e-3,
            2.386356198831331e-3,
            6.238968252742796e-3,
            2.849998395185769e-3,
            2.850001604814231e-3,
        ],
        atol_scale=[1e-4] * 8,
    ),
    "vdp": dict(
        f=vdp_f,
        jac=vdp_j,
        t0=0.0,
        t_end=2.0,
        y0=[2.0, 0.0],
        y_ref=[1.706167732170483, -0.8928097010247975],
        atol_scale=[1.0, 1.0],
    ),
    "rober": dict(
        f=rober_f,
        jac=rober_j,
        t0=0.0,
        t_end=1e11,
        y0=[1.0, 0.0, 0.0],
        y_ref=[2.083340149701255e-8, 8.333360770334713e-14, 0.9999999791665050],
        atol_scale=[1e-8, 1e-12, 1e-8],
    ),
}


def scd(y, y_ref):
    rel = max(abs((a - b) / b) for a, b in zip(y, y_ref))
    return -math.log10(rel) if rel > 0 else float("inf")


def run_one(prob, method, rtol, repeats):
    p = PROBLEMS[prob]
    atol = [rtol * s for s in p["atol_scale"]]
    times = []
    sol = None
    for _ in range(max(1, repeats)):
        start = time.process_time()
        sol = solve_ivp(
            p["f"], (p["t0"], p["t_end"]), p["y0"], method=method, rtol=rtol, atol=atol, jac=p["jac"]
        )
        dt = time.process_time() - start
        times.append(dt)
        if not sol.success or dt > 2.0:
            break
    point = dict(problem=prob, method=method, rtol=rtol, runs=len(times), cpu_ms=statistics.median(times) * 1e3)
    if not sol.success:
        point["failure"] = sol.message
        return point
    s = scd(sol.y[:, -1], p["y_ref"])
    point.update(
        scd=s,
        error=10.0 ** (-s),
        nfev=int(sol.nfev),
        njev=int(sol.njev),
        nlu=int(sol.nlu),
        steps=len(sol.t) - 1,
    )
    return point


def compare(scipy_points, sprung_path):
    """Markdown tables: SciPy method next to its sprung counterpart at equal rtol."""
    with open(sprung_path) as fh:
        sprung = json.load(fh)["points"]
    pairs = [("Radau", "radau5"), ("BDF", "ode15s"), ("LSODA", "ode15s")]
    for prob in PROBLEMS:
        print(f"\n#### {prob}\n")
        print("| rtol | SciPy method | scd | steps | f evals | Jac | LU | CPU ms | sprung method | scd | steps | f evals | Jac | LU | CPU ms |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for sp_name, rs_name in pairs:
            for p in scipy_points:
                if p["problem"] != prob or p["method"] != sp_name:
                    continue
                q = next(
                    (
                        x
                        for x in sprung
                        if x["problem"] == prob and x["method"] == rs_name and x["rtol"] and abs(x["rtol"] / p["rtol"] - 1) < 1e-9
                    ),
                    None,
                )

                def cells(x, ev, jac, lu):
                    if x is None:
                        return "| - | - | - | - | - | - "
                    if x.get("failure"):
                        return "| failed | | | | | "
                    return f"| {x['scd']:.2f} | {x['steps']} | {x[ev]} | {x[jac]} | {x[lu]} | {x['cpu_ms']:.3g} "

                row = f"| {p['rtol']:.0e} | {sp_name} " + cells(p, "nfev", "njev", "nlu")
                row += f"| {rs_name} " + (cells(q, "f_evals", "jac_evals", "lu") if q else "| - | - | - | - | - | - ") + "|"
                print(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtols", default="1e-3,1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10")
    ap.add_argument("--methods", default="Radau,BDF,LSODA")
    ap.add_argument("--problems", default="hires,vdp,rober")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="out/bench/scipy.json")
    ap.add_argument("--compare", help="sprung bench solvers --json output to compare against")
    a = ap.parse_args()
    rtols = [float(r) for r in a.rtols.split(",")]
    points = []
    for prob in a.problems.split(","):
        for method in a.methods.split(","):
            for rtol in rtols:
                p = run_one(prob, method, rtol, a.repeats)
                points.append(p)
                if "failure" in p:
                    what = "FAILED: " + p["failure"]
                else:
                    what = f"scd {p['scd']:5.2f} steps {p['steps']:6d} nfev {p['nfev']:7d} njev {p['njev']:5d} nlu {p['nlu']:6d} cpu {p['cpu_ms']:9.1f} ms"
                print(f"{prob:6s} {method:6s} rtol {rtol:.0e}: {what}", file=sys.stderr, flush=True)
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    doc = dict(
        versions=dict(python=platform.python_version(), numpy=np.__version__, scipy=scipy.__version__),
        machine=f"{cpu}, {platform.system()} {platform.machine()}",
        points=points,
    )
    import os

    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump(doc, fh, indent=1)
    print(f"wrote {a.out} (SciPy {scipy.__version__}, NumPy {np.__version__}, Python {platform.python_version()})")
    if a.compare:
        compare(points, a.compare)


if __name__ == "__main__":
    main()
