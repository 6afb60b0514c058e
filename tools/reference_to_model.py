#!/usr/bin/env python3
"""Convert the reference suspension data (JSON) into sprung model files (TOML, format v1).

Source data: ``reference-suspensions.md`` with ``double_wishbone.json`` / ``multilink.json``
(full axles, both sides; topology and load case after Archut & Corves, document 000
sections 2 and 5). Output: a readable model file per axle in which

* the left side is written once with ``mirror = true`` (the loader creates the right side,
  S = diag(1, -1, 1)); shared items (subframe, stabilizer coupling, subframe-mount markers on
  the subframe, ...) are written without mirror;
* curves are defined once, bushing orientations are the named frames F00.. of the data sheet;
* markers use their global design positions (hardpoints), each force element is preceded by
  its two markers and a comment taken from the data notes;
* the load case of document 000 section 5.2 is written as inputs (Fz = +5000 N constant and a
  step Fx = 0 -> -2500 N at t = 5 s at both wheel centres) with an equilibrium initial state;
* output channels are listed in the header comment.

The script verifies that the mirrored expansion of what it writes reproduces the JSON's right
side (positions, axes, inertia tensors, element parameters, marker/body references) within
1e-9, and it writes the prototype's verification figures as flat CSV files for the Rust tests.

Usage (Python 3 standard library only):

    python3 tools/reference_to_model.py [--data ../shared/data] [--out-models models]
                                        [--out-reference tools/reference] [--check]

``--check`` regenerates the files in memory and fails if the committed ones differ.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRROR_TOL = 1e-9

AXLES = {
    "double_wishbone": {
        "json": "double_wishbone.json",
        "md_section": "#### A.4",
        "output_bushing": "tl_front_bushing_L",
        "output_bushing_role": "trailing link (tension strut) front bushing on the chassis",
        "step_csv": "step_A.csv",
        # Declared parameters (docs/parameters.md); scale factors of 1 leave every value as
        # written (tested bitwise); the sweep example of docs/sweeps.md varies them.
        "parameters": [
            {
                "name": "bushing_scale",
                "unit": "-",
                "description": "factor on the rubber bushings of the control arms (uca front/rear, "
                               "lca inner, tl front; linear rates and their radial/axial curves)",
                "targets": ["force_elements.*_bushing_*.stiffness",
                            "force_elements.*_bushing_*.rot_stiffness",
                            "curves.C_LCA_RADIAL.y", "curves.C_TL_AXIAL.y"],
            },
            {
                "name": "damper_scale",
                "unit": "-",
                "description": "factor on the damper force curve C_DAMPER_A (both dampers)",
                "targets": ["curves.C_DAMPER_A.y"],
            },
        ],
    },
    "multilink": {
        "json": "multilink.json",
        "md_section": "#### B.4",
        "output_bushing": "link4_sf_bushing_L",
        "output_bushing_role": "trailing link (link4) front bushing on the subframe",
        "step_csv": "step_B.csv",
    },
}

S = (1.0, -1.0, 1.0)


# ----------------------------------------------------------------------------------------------
# formatting helpers
# ----------------------------------------------------------------------------------------------

def num(x: float) -> str:
    """Shortest exact TOML float literal of x (always a float, never an integer literal)."""
    x = float(x)
    if x == 0.0:
        return "0.0"
    if not math.isfinite(x):
        raise ValueError(f"non-finite number {x}")
    if 1e-4 <= abs(x) < 1e6:
        s = repr(x)
        if "e" not in s:
            return s
    for p in range(1, 18):
        s = f"{x:.{p}g}"
        if float(s) == x:
            break
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant}e{int(exp)}"
    elif "." not in s:
        s += ".0"
    return s


def vec(v) -> str:
    return "[" + ", ".join(num(x) for x in v) + "]"


def mat(m) -> str:
    return "[" + ", ".join(vec(r) for r in m) + "]"


def axes_inline(a) -> str:
    return f"{{ x = {vec(a['x'])}, y = {vec(a['y'])}, z = {vec(a['z'])} }}"


def string(s: str) -> str:
    return json.dumps(s)


def comment(text: str, indent: str = "") -> list[str]:
    """Wrap a note into comment lines of at most ~100 characters."""
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > 96:
            out.append(f"{indent}# {line}")
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(f"{indent}# {line}")
    return out


# ----------------------------------------------------------------------------------------------
# mirror helpers (model format "Mirroring", data sheet section 1.7)
# ----------------------------------------------------------------------------------------------

_L_RE = re.compile(r"_L(?=$|\.)")


def is_left(name: str) -> bool:
    return bool(_L_RE.search(name))


def is_right(name: str) -> bool:
    return bool(re.search(r"_R(?=$|\.)", name))


def mirror_name(name: str) -> str:
    return _L_RE.sub("_R", name)


def mirror_point(p):
    return [S[k] * p[k] for k in range(3)]


def axes_matrix(a):
    return [[a["x"][r], a["y"][r], a["z"][r]] for r in range(3)]


def mirror_matrix(m):
    return [[S[r] * m[r][c] * S[c] for c in range(3)] for r in range(3)]


def max_diff(a, b) -> float:
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        return max((max_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(float(a) - float(b))


# ----------------------------------------------------------------------------------------------
# data sheet frames
# ----------------------------------------------------------------------------------------------

def md_frames(md_text: str, section: str) -> dict[str, list[list[float]]]:
    """Named frames (6 decimals) of one axle from the data sheet table 'Bushing frames'."""
    start = md_text.index(section)
    block = md_text[start:md_text.index("####", start + 5)]
    frames = {}
    row = re.compile(r"^\|\s*(F\d\d)\s*\|(.*)$")
    for line in block.splitlines():
        m = row.match(line)
        if not m:
            continue
        cols = re.findall(r"\(([^)]*)\)", m.group(2))
        frames[m.group(1)] = [[float(x) for x in c.split(",")] for c in cols]  # x, y, z axes
    if not frames:
        raise SystemExit(f"no frame table found under '{section}'")
    return frames


def frame_name(axes, frames) -> str:
    got = [axes["x"], axes["y"], axes["z"]]
    for name, ref in frames.items():
        if max_diff(got, ref) < 2e-6:
            return name
    raise SystemExit(f"axes {got} match no data-sheet frame")


# ----------------------------------------------------------------------------------------------
# conversion
# ----------------------------------------------------------------------------------------------

ROLE = {
    "bearing": "wheel bearing: stiff 6-DOF bushing with free spin about local y (swing-twist split)",
    "ball_joint": "ball joint, modelled as a plain bushing: stiff in translation, near-zero rotational "
    "stiffness so that link spin is no mechanism",
    "slide": "sliding bushing (prismatic-joint replacement, document 000 sec. 2): free along local z "
    "(k = c = 0), stiff in all other directions",
    "bushing": "rubber bushing",
}


class Converter:
    def __init__(self, key: str, data: dict, frames_md: dict):
        self.key = key
        self.cfg = AXLES[key]
        self.d = data
        self.frames_md = frames_md
        self.markers = data["markers"]
        self.hardpoints = data["hardpoints_left_m"]
        self.used_frames: dict[str, dict] = {}
        self.lines: list[str] = []

    # -- helpers --------------------------------------------------------------------------------
    def hardpoint(self, p) -> str | None:
        for name, q in self.hardpoints.items():
            if max_diff(p, q) < 1e-12:
                return name
        return None

    def frame_of(self, axes) -> str:
        name = frame_name(axes, self.frames_md)
        prev = self.used_frames.get(name)
        if prev is not None and max_diff(axes_matrix(prev), axes_matrix(axes)) > 1e-12:
            raise SystemExit(f"frame {name}: inconsistent axes in the JSON")
        self.used_frames.setdefault(name, axes)
        return name

    def emit(self, *lines: str):
        self.lines.extend(lines)

    # -- sections -------------------------------------------------------------------------------
    def header(self, channels: list[tuple[str, str]]):
        d = self.d
        counts = d["counts"]
        e = self.emit
        e(f"# {d['model']}: {d['title']} -- reference elastokinematic suspension model.",
          "#",
          "# GENERATED by tools/reference_to_model.py from ../shared/data/"
          f"{self.cfg['json']} (data sheet",
          "# reference-suspensions.md); edit the converter, not this file.",
          "#")
        for line in comment(d["source"]):
            e(line)
        e("#",
          f"# Full axle: {counts['bodies']} rigid bodies, {counts['force_elements']} force elements "
          f"({counts['bushings']} bushing-type incl. ball joints,",
          f"# bearings and slides + {counts['p2p']} point-to-point), {counts['dof']} DOF. Chassis "
          "(Karosserie) = fixed ground `chassis`.",
          "# Only the left side (suffix _L) is written; `mirror = true` creates the right side (_R) by "
          "reflection",
          "# in the x-z plane (S = diag(1, -1, 1): points S p, axes S A S, inertia S I S). Items without "
          "mirror",
          "# are shared (no suffix).",
          "#",
          "# Conventions (data sheet sec. 1): SI units; x forward, y left, z up, origin at the axle centre "
          "at",
          "# wheel-centre height. Body frames: origin at the CoM, axes parallel to global in the design "
          "position.",
          "# Bushings are unloaded in the design position; their local axes are the frames F00.. of the "
          "data sheet",
          "# (markers I and J of a bushing carry the same frame; deflection is measured in marker J's "
          "axes).",
          "#",
          "# Load case (document 000 sec. 5.2): Fz = +5000 N at each wheel centre throughout; Fx = 0 "
          "before",
          "# t = 5 s and -2500 N from t = 5 s (both wheels); gravity 9.81 m/s^2 in -z; start from the "
          "static",
          "# equilibrium.",
          "#",
          "# Output channels (left side listed; each has a mirrored _R twin):")
        width = max(len(n) for n, _ in channels)
        for name, text in channels:
            e(f"#   {name.ljust(width)}  {text}")
        e("#   (*) the paper's Bild 7 output, the global x force on the chassis/subframe (tl_bushing_fx),",
          f"#       equals -(A_J f_local).x with A_J the current axes of marker {self.cfg['output_bushing']}.J.",
          "")

    def model_tables(self):
        d = self.d
        e = self.emit
        e("[model]",
          f"name = {string(d['model'])}",
          f"description = {string(d['title'] + ' after Archut & Corves (document 000), reference data sheet')}",
          'ground = "chassis"',
          "gravity = [0.0, 0.0, -9.81]",
          "",
          "[solver]",
          'method = "lsrt2"',
          "step = 1e-3",
          "t_end = 8.0",
          "output_interval = 1e-3",
          "relinearise_every = 1",
          "",
          "[initial_state]",
          'kind = "equilibrium"                # static equilibrium under Fz + gravity at t = 0',
          "")

    def frames(self):
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Bushing frames (global axes in the design position; data sheet table 'Bushing frames').",
          "# Shared by both sides: a mirrored marker that uses a frame gets the mirrored axes S A S.",
          "# ---------------------------------------------------------------------------------------------")
        for name in sorted(self.used_frames):
            e("[[frames]]", f'name = "{name}"', f"axes = {axes_inline(self.used_frames[name])}", "")

    def curves(self):
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Characteristic curves (piecewise linear, linear extrapolation; odd curves tabulated for x >= 0)",
          "# ---------------------------------------------------------------------------------------------")
        used = self.used_curves()
        for name, c in self.d["curves"].items():
            if name not in used:
                continue
            for line in comment(f"{name}: {c['description']}"):
                e(line)
            e("[[curves]]",
              f'name = "{name}"',
              f"x = {vec(c['x'])}",
              f"y = {vec(c['y'])}",
              'interpolation = "linear"',
              'extrapolation = "linear"',
              f'symmetry = "{c["symmetry"]}"',
              f'x_unit = "{c["x_unit"]}"',
              f'y_unit = "{c["y_unit"]}"',
              "")

    def used_curves(self) -> set[str]:
        used = set()
        for fe in self.d["force_elements"]:
            used.update(fe.get("nonlinear_trans_curves", {}).values())
            if fe.get("curve"):
                used.add(fe["curve"])
        return used

    def bodies(self):
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Bodies: mass, CoM (= body-frame origin, design position), inertia tensor about the CoM in body",
          "# axes (off-diagonal entries = minus the products of inertia). Left side mirrored; shared bodies",
          "# last.",
          "# ---------------------------------------------------------------------------------------------")
        for b in self.d["bodies"]:
            name = b["name"]
            if is_right(name):
                continue
            left = is_left(name)
            for line in comment(f"{name}: {b['note']}"):
                e(line)
            e("[[bodies]]",
              f'name = "{name}"',
              f"mass = {num(b['mass_kg'])}",
              f"position = {vec(b['com_m'])}",
              f"inertia = {{ tensor = {mat(b['inertia_kgm2_body_axes'])} }}")
            if left:
                e("mirror = true")
            e("")

    def marker_lines(self, m, with_frame: bool) -> list[str]:
        name = m["name"]
        hp = self.hardpoint(m["position_global_m"])
        pos = f"global_position = {vec(m['position_global_m'])}"
        if hp:
            pos += f"   # {hp}"
        out = ["[[markers]]", f'name = "{name}"', f'body = "{m["body"]}"', pos]
        if with_frame:
            out.append(f'frame = "{self.frame_of(m["local_axes_global"])}"')
        if is_left(name):
            out.append("mirror = true")
        return out

    def elements(self):
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Force elements, each preceded by its markers I (action body_i) and J (reference body_j).",
          "# Bushing: f = -(k d + c d_dot) per local axis of marker J (a curve replaces k d where listed),",
          "#          t = -(k_r theta + c_r theta_dot). P2P: scalar force, tension-positive.",
          "# ---------------------------------------------------------------------------------------------")
        for fe in self.d["force_elements"]:
            name = fe["name"]
            if is_right(name):
                continue
            left = is_left(name)
            mi, mj = self.markers[fe["marker_i"]], self.markers[fe["marker_j"]]
            t = fe["type"]
            bushing = t in ("bushing", "ball_joint", "slide", "bearing")
            head = f"{name} ({fe['body_i']} -> {fe['body_j']}): "
            if t.startswith("p2p"):
                role = {"p2p_spring": "point-to-point spring", "p2p_damper": "point-to-point damper",
                        "p2p_stop_bump": "bump stop (point-to-point)",
                        "p2p_stop_rebound": "rebound stop (point-to-point)"}[t]
            else:
                role = ROLE[t]
            note = fe.get("note", "")
            if name == self.cfg["output_bushing"]:
                note = (note + "; force channels tl_bushing_f*_local_L (components on the link in "
                        "marker-J axes)")
            e(*comment(head + role + (f"; {note}" if note else "")))
            e(*self.marker_lines(mi, bushing))
            e("")
            e(*self.marker_lines(mj, bushing))
            e("")
            e("[[force_elements]]")
            if bushing:
                e('type = "bushing"',
                  f'name = "{name}"',
                  f'marker_i = "{mi["name"]}"',
                  f'marker_j = "{mj["name"]}"',
                  f"stiffness = {vec(fe['stiffness_trans_N_per_m'])}",
                  f"rot_stiffness = {vec(fe['stiffness_rot_Nm_per_rad'])}",
                  f"damping = {vec(fe['damping_trans_Ns_per_m'])}",
                  f"rot_damping = {vec(fe['damping_rot_Nms_per_rad'])}")
                curves = fe.get("nonlinear_trans_curves") or {}
                if curves:
                    inner = ", ".join(f'{ax} = "{c}"' for ax, c in sorted(curves.items()))
                    e(f"stiffness_curves = {{ {inner} }}   # replaces k d in these local directions")
                if t == "bearing":
                    e('spin_axis = "y"                     # free wheel spin, rot_stiffness y = 0')
            elif t == "p2p_spring":
                e('type = "spring"',
                  f'name = "{name}"',
                  f'marker_i = "{mi["name"]}"',
                  f'marker_j = "{mj["name"]}"',
                  f"stiffness = {num(fe['stiffness_N_per_m'])}",
                  f"free_length = {num(fe['free_length_m'])}      # design length "
                  f"{fe['L_design_m']} m, force there {fe['force_at_design_length_N']} N")
                if fe.get("damping_Ns_per_m"):
                    e(f"damping = {num(fe['damping_Ns_per_m'])}")
            elif t == "p2p_damper":
                e('type = "damper"',
                  f'name = "{name}"',
                  f'marker_i = "{mi["name"]}"',
                  f'marker_j = "{mj["name"]}"',
                  f'curve = "{fe["curve"]}"')
            elif t in ("p2p_stop_bump", "p2p_stop_rebound"):
                kind = "bump" if t == "p2p_stop_bump" else "rebound"
                e('type = "stop"',
                  f'name = "{name}"',
                  f'marker_i = "{mi["name"]}"',
                  f'marker_j = "{mj["name"]}"',
                  f'kind = "{kind}"',
                  f"clearance = {num(fe['clearance_m'])}   # engages at L_c = {fe['contact_length_m']} m "
                  f"(design length {fe['L_design_m']} m)",
                  f'curve = "{fe["curve"]}"')
            else:
                raise SystemExit(f"{name}: unknown element type {t}")
            if left:
                e("mirror = true")
            e("")

    def wheel_centre(self):
        wc = self.hardpoints["WC"]
        self.emit(
            "# ---------------------------------------------------------------------------------------------",
            "# Wheel centre (wheel body CoM): load inputs and displacement outputs.",
            "# ---------------------------------------------------------------------------------------------",
            "[[markers]]",
            'name = "wheel_centre_L"',
            'body = "wheel_L"',
            f"global_position = {vec(wc)}   # WC",
            "mirror = true",
            "")

    def inputs(self):
        lc = self.d["load_case"]
        self.emit(
            "# ---------------------------------------------------------------------------------------------",
            "# Load case, document 000 sec. 5.2 (pure forces at the wheel centres, global directions).",
            "# ---------------------------------------------------------------------------------------------",
            "[[inputs]]",
            'name = "Fz_L"                       # vertical wheel force, upwards, constant',
            'kind = "force"',
            'marker = "wheel_centre_L"',
            'frame = "global"',
            "direction = [0.0, 0.0, 1.0]",
            f'signal = {{ type = "constant", value = {num(lc["Fz_N"])} }}',
            "mirror = true",
            "",
            "[[inputs]]",
            'name = "Fx_L"                       # longitudinal wheel force, step to -2500 N (rearwards)',
            'kind = "force"',
            'marker = "wheel_centre_L"',
            'frame = "global"',
            "direction = [1.0, 0.0, 0.0]",
            f'signal = {{ type = "step", time = {num(lc["Fx_step_time_s"])}, before = 0.0, '
            f'after = {num(lc["Fx_N"])} }}',
            "mirror = true",
            "")

    def output_list(self) -> list[tuple[str, dict, str]]:
        """(channel, toml keys, description) of the left-side outputs."""
        ob = self.cfg["output_bushing"]
        outs = []
        for c in "xyz":
            outs.append((f"wc_d{c}_L", {"quantity": "displacement", "marker": "wheel_centre_L", "component": c,
                                         "frame": "global"},
                         f"wheel-centre displacement {c} from the design position, global, m"))
        outs.append(("tl_bushing_fx_L", {"quantity": "force", "element": ob, "component": "x",
                                         "frame": "global", "on": "body_j"},
                     f"{ob}: longitudinal (global x) force on the chassis/subframe, N (document 000, Bild 7)"))
        for c in "xyz":
            outs.append((f"tl_bushing_f{c}_local_L", {"quantity": "force", "element": ob, "component": c},
                         f"{ob}: force on the link, local {c} (marker-J axes), N (*)"))
        outs += [
            ("camber_L", {"quantity": "camber", "marker": "wheel_bearing_L.J"},
             "camber of the carrier spin axis (bearing marker J, local y), deg, + = top outward"),
            ("toe_L", {"quantity": "toe", "marker": "wheel_bearing_L.J"},
             "toe of the carrier spin axis, deg, + = toe-in"),
            ("spring_force_L", {"quantity": "force", "element": "spring_L"},
             "coil spring force, tension-positive (compressed < 0), N"),
            ("damper_force_L", {"quantity": "force", "element": "damper_L"},
             "damper force, tension-positive (rebound > 0), N"),
        ]
        return outs

    def outputs(self):
        ob = self.cfg["output_bushing"]
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Output channels (see the list at the top).",
          f"# Trailing-link bushing {ob} ({self.cfg['output_bushing_role']}):",
          "# tl_bushing_fx is the paper's Bild 7 quantity: the GLOBAL x force on the chassis/subframe",
          "# (frame = \"global\", on = \"body_j\"), F_on_base = -A_J f_local with A_J the current axes of",
          f"# marker {ob}.J; the tl_bushing_f*_local channels give the force ON THE LINK in the bushing's",
          "# local axes (marker J).",
          "# ---------------------------------------------------------------------------------------------")
        for name, keys, text in self.output_list():
            e("[[outputs]]", f'name = "{name}"')
            for k, v in keys.items():
                e(f'{k} = "{v}"')
            e("mirror = true", "")

    def parameters(self):
        params = self.cfg.get("parameters", [])
        if not params:
            return
        e = self.emit
        e("# ---------------------------------------------------------------------------------------------",
          "# Parameters (docs/parameters.md): scale factors, 1 = the values above; change them without",
          "# editing this file, e.g. `sprung run MODEL --set damper_scale=1.5` or `sprung sweep`.",
          "# ---------------------------------------------------------------------------------------------")
        for p in params:
            e("[[parameters]]", f'name = "{p["name"]}"', "value = 1.0", f'unit = "{p["unit"]}"',
              f'description = "{p["description"]}"', 'mode = "scale"',
              "targets = [" + ", ".join(f'"{t}"' for t in p["targets"]) + "]", "")

    def convert(self) -> str:
        # First pass fills used_frames (elements use frames); then assemble in reading order.
        body_lines = Converter(self.key, self.d, self.frames_md)
        body_lines.elements()
        self.used_frames = body_lines.used_frames
        channels = [(n, t) for n, _, t in self.output_list()]
        self.header(channels)
        self.model_tables()
        self.frames()
        self.curves()
        self.bodies()
        self.elements()
        self.wheel_centre()
        self.inputs()
        self.outputs()
        self.parameters()
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        return "\n".join(self.lines) + "\n"


# ----------------------------------------------------------------------------------------------
# mirror verification against the JSON right side
# ----------------------------------------------------------------------------------------------

def verify_mirror(d: dict, frames_md: dict) -> list[str]:
    """Expand the left side like the loader does and compare with the JSON right side."""
    problems = []
    bodies = {b["name"]: b for b in d["bodies"]}
    markers = {m["name"]: m for m in d["markers"]}
    elements = {e["name"]: e for e in d["force_elements"]}
    mirrored_bodies = {n for n in bodies if is_left(n)}

    def ref(n: str) -> str:  # a referenced body: renamed only if it is itself mirrored
        return mirror_name(n) if n in mirrored_bodies else n

    def check(label, a, b, tol=MIRROR_TOL):
        diff = max_diff(a, b)
        if diff > tol:
            problems.append(f"{label}: mirrored {a} vs JSON {b} (diff {diff:.3e})")

    for kind, table in (("body", bodies), ("marker", markers), ("element", elements)):
        rights = {n for n in table if is_right(n)}
        lefts = {mirror_name(n) for n in table if is_left(n)}
        if rights != lefts:
            problems.append(f"{kind}: right side {sorted(rights ^ lefts)} has no left twin or vice versa")

    for n in mirrored_bodies:
        bl, br = bodies[n], bodies[mirror_name(n)]
        check(f"body {n} CoM", mirror_point(bl["com_m"]), br["com_m"])
        check(f"body {n} mass", bl["mass_kg"], br["mass_kg"], 0.0)
        check(f"body {n} inertia", mirror_matrix(bl["inertia_kgm2_body_axes"]), br["inertia_kgm2_body_axes"])

    for n, ml in markers.items():
        if not is_left(n):
            continue
        mr = markers[mirror_name(n)]
        if ref(ml["body"]) != mr["body"]:
            problems.append(f"marker {n}: body {ml['body']} mirrors to {ref(ml['body'])}, JSON has {mr['body']}")
        check(f"marker {n} position", mirror_point(ml["position_global_m"]), mr["position_global_m"])
        if "local_axes_global" in ml:
            # frames are written by name from the data sheet; the JSON value is what the frame holds
            check(f"marker {n} axes", mirror_matrix(axes_matrix(ml["local_axes_global"])),
                  axes_matrix(mr["local_axes_global"]))
            frame_name(ml["local_axes_global"], frames_md)

    params = ["stiffness_trans_N_per_m", "stiffness_rot_Nm_per_rad", "damping_trans_Ns_per_m",
              "damping_rot_Nms_per_rad", "nonlinear_trans_curves", "stiffness_N_per_m", "free_length_m",
              "damping_Ns_per_m", "curve", "clearance_m", "L_design_m", "type"]
    for n, el in elements.items():
        if not is_left(n):
            continue
        er = elements[mirror_name(n)]
        for p in params:
            if el.get(p) != er.get(p):
                problems.append(f"element {n}: {p} {el.get(p)} vs right {er.get(p)}")
        for side in ("marker_i", "marker_j"):
            ln = d["markers"][el[side]]["name"]
            rn = d["markers"][er[side]]["name"]
            expect = mirror_name(ln) if is_left(ln) else ln
            if expect != rn:
                problems.append(f"element {n}: {side} {ln} mirrors to {expect}, JSON right has {rn}")
        for side in ("body_i", "body_j"):
            if ref(el[side]) != er[side]:
                problems.append(f"element {n}: {side} {el[side]} mirrors to {ref(el[side])}, JSON has {er[side]}")
        if "local_axes_global" in el:
            check(f"element {n} axes", mirror_matrix(axes_matrix(el["local_axes_global"])),
                  axes_matrix(er["local_axes_global"]))
    # Shared items must not carry a side suffix and must reference only shared/left-right pairs.
    return problems


# ----------------------------------------------------------------------------------------------
# verification figures for the Rust tests
# ----------------------------------------------------------------------------------------------

def verification_csv(d: dict) -> str:
    """Flat 'kind,name,values...' lines of the prototype figures used by the Rust tests."""
    v = d["verification"]
    lines = ["# GENERATED by tools/reference_to_model.py from the JSON 'verification' section.",
             "# kind,name,values (SI units; element forces/torques: on body_i, global axes)"]

    def row(kind, name, values):
        lines.append(",".join([kind, name] + [repr(float(x)) for x in values]))

    row("scalar", "wc_disp_L", v["wheel_centre_displacement_L"])
    row("scalar", "wc_disp_R", v["wheel_centre_displacement_R"])
    row("scalar", "wc_disp_L_no_gravity", v["wheel_centre_displacement_L_no_gravity"])
    row("scalar", "fx_wc_delta_L", v["fx_wheel_centre_delta_L"])
    row("scalar", "output_bushing_force_on_base_eq", v["output_bushing_force_on_base_eq"])
    row("scalar", "output_bushing_force_on_base_fx", v["output_bushing_force_on_base_fx"])
    row("scalar", "undamped_freqs_hz", v["undamped_freqs_Hz_lowest"])
    row("scalar", "undamped_freq_hz_highest", [v["undamped_freq_Hz_highest"]])
    row("scalar", "stiffness_ratio", [v["stiffness_ratio"]])
    row("scalar", "lambda_abs_min", [v["lambda_abs_min"]])
    row("scalar", "lambda_abs_max", [v["lambda_abs_max"]])
    lines.append(f"text,output_bushing,{v['output_bushing']}")
    # Both sides as published, to check the loader's mirror expansion of the committed model.
    for b in d["bodies"]:
        row("body", b["name"], [b["mass_kg"]] + list(b["com_m"]) + [x for r in b["inertia_kgm2_body_axes"] for x in r])
    for m in d["markers"]:
        ax = m.get("local_axes_global")
        flat = [x for r in axes_matrix(ax) for x in r] if ax else []
        lines.append(",".join(["marker", m["name"], m["body"]] + [repr(float(x)) for x in
                                                                   list(m["position_global_m"]) + flat]))
    for fe in d["force_elements"]:
        if "stiffness_trans_N_per_m" in fe:
            row("bushing_params", fe["name"], fe["stiffness_trans_N_per_m"] + fe["stiffness_rot_Nm_per_rad"]
                + fe["damping_trans_Ns_per_m"] + fe["damping_rot_Nms_per_rad"])
    for case, key in (("eq", "elements_at_equilibrium"), ("fx", "elements_at_fx_step_quasistatic")):
        for name, el in v[key].items():
            if "F_on_i_global" in el:
                row(f"bushing_{case}", name, list(el["F_on_i_global"]) + list(el["T_on_i_global"]))
            else:
                row(f"p2p_{case}", name, [el["f_tension"], el["L"]])
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data",
        help="folder of the data sheets (default: ../shared/data beside the checkout)")
    ap.add_argument("--out-models", type=Path, default=ROOT / "models")
    ap.add_argument("--out-reference", type=Path, default=ROOT / "tools" / "reference")
    ap.add_argument("--check", action="store_true", help="fail if the committed files are out of date")
    args = ap.parse_args()

    md_text = (args.data / "reference-suspensions.md").read_text()
    failed = False
    for key, cfg in AXLES.items():
        d = json.loads((args.data / cfg["json"]).read_text())
        frames = md_frames(md_text, cfg["md_section"])
        problems = verify_mirror(d, frames)
        if problems:
            failed = True
            print(f"{key}: mirror check FAILED:", *problems, sep="\n  ")
        else:
            print(f"{key}: mirrored left side reproduces the JSON right side within {MIRROR_TOL:g}")
        outputs = {
            args.out_models / f"{key}.toml": Converter(key, d, frames).convert(),
            args.out_reference / f"{key}.verification.csv": verification_csv(d),
        }
        step_src = args.data / cfg["step_csv"]
        step_dst = args.out_reference / cfg["step_csv"]
        for path, text in outputs.items():
            if args.check:
                if not path.exists() or path.read_text() != text:
                    print(f"{path} is out of date; run tools/reference_to_model.py")
                    failed = True
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"wrote {path}")
        if args.check:
            if not step_dst.exists() or step_dst.read_bytes() != step_src.read_bytes():
                print(f"{step_dst} differs from {step_src}")
                failed = True
        else:
            shutil.copyfile(step_src, step_dst)
            print(f"copied {step_src} -> {step_dst}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
