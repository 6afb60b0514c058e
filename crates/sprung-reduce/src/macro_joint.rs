//! The macro joint (document 004, `../shared/seeds/004_bf53df81c0e560f5.txt`, sec. 2.2): the
//! massless links of one suspension corner as ONE force element of the open kind `macro_joint`
//! (`docs/elements.md`) on one marker per boundary body (the chassis, the wheel carrier, and any
//! other body the links touch, e.g. an anti-roll bar half).
//!
//! Document 004 splits the suspension's coordinates into the independent ones z_G (travel,
//! steer, and elastic coordinates) and the dependent link poses q, fixed by the loop closure
//! R(z_G, q) = 0 on position level and H q̇ + B ż_G = 0 on velocity level, solved *locally* per
//! axle. In this engine the independent coordinates are the poses of the boundary bodies (the
//! carrier keeps its six coordinates: travel plus the elastic coordinates of the bushings), and
//! the loop closure of the elastokinematic corner is the static equilibrium of the massless
//! links under the forces of the elements that act on them:
//!
//! * position level: g_l(x_b, q) = 0, the force and torque on every link from its bushings,
//!   springs and stops (velocities zero), solved by Newton for the link poses q (6 per link:
//!   δx, δφ global). The start is the last solution moved by the predictor S Δx_b for the
//!   boundary bodies' motion since (the element's algebraic variables hold the link poses, the
//!   boundary poses and S, relative to the frame of boundary marker 0 so that a rigid motion of
//!   the whole car does not disturb them); a step below sqrt(tolerance × 1 cm) is
//!   the last (quadratic convergence leaves less than the tolerance after it), so a warm solve
//!   takes one iteration. Far from the solution the steps are damped link by link and guarded
//!   by a backtracking line search on |g_l|;
//! * velocity level: q̇ = S ẋ_b with S = −K_ll⁻¹ K_lb (implicit function theorem; K = ∂g/∂(q,
//!   x_b), the stiffness matrix of the links' elements) — document 004's H q̇ + B ż = 0 with
//!   H = K_ll, B = K_lb;
//! * forces on the boundary bodies, by virtual work through the link motion δq = S δx_b:
//!   G_b = g_b + Sᵀ g_l, where g are the generalised forces (force, torque about the node's
//!   reference point) of all elements evaluated at (x_b, q; ẋ_b, q̇). At the solution the
//!   stiffness part of g_l vanishes, so Sᵀ g_l carries the damping forces that act on the links
//!   (e.g. the damper between piston rod and tube) to the boundary bodies; total force and
//!   moment stay balanced because S maps a rigid motion of all boundary bodies to the same rigid
//!   motion of the links;
//! * analytic partials (implicit function theorem): with A = ∂g/∂(q, x_b) and C = ∂g/∂(q̇, ẋ_b)
//!   at the actual velocities, ∂G_b/∂x_b = A_bb + A_bl S + Sᵀ (A_lb + A_ll S) — at zero velocity
//!   the Schur complement K_eff = K_bb − K_bl K_ll⁻¹ K_lb — and ∂G_b/∂ẋ_b = C_bb + C_bl S +
//!   Sᵀ C_lb + Sᵀ C_ll S (the damping projected on the link motion). The derivative of S itself
//!   (it multiplies the links' damping imbalance and turns q̇ = S ẋ_b) is left out: it needs
//!   second derivatives of the elements' laws; the tests measure what that costs against
//!   differences of `evaluate()` (zero at rest).
//!
//! Assumptions (document 004, sec. 2.1): rigid, massless links — their gravity and inertia are
//! neglected; the link poses follow the stiffness equilibrium, so the deflection of the link
//! bushings *under damping forces* is neglected (the damping forces themselves are transmitted).
//! The kinematic variant (`crate::reduce`, [`crate::Variant::Stiffened`]) is this element on
//! bushings stiffened by a stated factor.
//!
//! The link subsystem comes as a small model text (parameter `links`, TOML of the model format:
//! the link bodies, the boundary bodies at their design poses, the markers, the elements and
//! curves they use) and is compiled with the engine's own compiler, so the bushings, springs,
//! dampers and stops inside the macro joint are the engine's laws (`sprung_mbs::bushing`,
//! `sprung_mbs::p2p`) with their analytic partials. `evaluate` allocates nothing: its dense
//! workspace is per thread and sized on first use; `partials()` right after `evaluate()` at the
//! same input reuses that solve (the workspace remembers the element and its marker input).

use std::cell::RefCell;
use std::sync::Arc;

use nalgebra::{Matrix3, Rotation3, Vector3};
use sprung_mbs::compiled::{CompiledModel, ElementKind};
use sprung_mbs::element::ElementForce;
use sprung_mbs::element_law::{
    ElementInput, ElementJacobian, ElementLaw, ElementOutput, MarkerState, OutputInfo, Provided,
};
use sprung_mbs::elements::{ElementParams, KindInfo, ParamInfo};
use sprung_mbs::kinematics::MarkerKin;
use sprung_mbs::m3::{M3, Portable};
use sprung_mbs::rotation::{quat_to_matrix, skew};

use crate::lu;

/// Registry entry of the kind `macro_joint`.
pub const INFO: KindInfo = KindInfo {
    name: "macro_joint",
    description: "massless suspension links solved locally (document 004 macro joint): Newton on the links' static equilibrium, forces and IFT partials on one marker per boundary body",
    markers: &["boundary..."],
    parameters: &[
        ParamInfo {
            name: "links",
            unit: "-",
            description: "the link subsystem as model text (TOML: link and boundary bodies, markers, elements, curves), written by `sprung reduce`",
            default: None,
        },
        ParamInfo {
            name: "boundary",
            unit: "-",
            description: "the boundary bodies of the links model, space-separated, in the order of the element's markers (marker k sits at body k's frame)",
            default: None,
        },
        ParamInfo {
            name: "tolerance",
            unit: "m, rad",
            description: "error of the link poses the Newton iteration aims at: a step below sqrt(tolerance x 1 cm) is the last",
            default: Some(1e-10),
        },
        ParamInfo {
            name: "max_iterations",
            unit: "-",
            description: "Newton iterations per evaluation at most",
            default: Some(50.0),
        },
    ],
    states: &[],
    outputs: OUTPUTS,
    inputs: &[],
};

const OUTPUTS: &[OutputInfo] = &[
    OutputInfo {
        name: "iterations",
        unit: "-",
        description: "Newton iterations of the last evaluation",
    },
    OutputInfo {
        name: "residual",
        unit: "N",
        description: "largest link force/torque residual of the last Newton iteration (N, N m)",
    },
    OutputInfo {
        name: "converged",
        unit: "-",
        description: "1 if the loop closure converged within max_iterations, else 0",
    },
];

/// One end of an element inside the macro joint: the node (link or boundary body) and the
/// marker's place on it.
#[derive(Debug, Clone, Copy)]
struct End {
    /// Node index: links first (0..n_links), then the boundary bodies.
    node: usize,
    /// Marker origin in the node frame, m.
    s: Vector3<f64>,
    /// Marker axes in the node frame.
    a: Matrix3<f64>,
}

/// Pose and velocity of a node (a link or a boundary body), global.
#[derive(Debug, Clone, Copy)]
struct Node {
    x: Vector3<f64>,
    r: Matrix3<f64>,
    v: Vector3<f64>,
    w: Vector3<f64>,
}

impl Default for Node {
    fn default() -> Self {
        Self {
            x: Vector3::zeros(),
            r: Matrix3::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

/// The macro joint of one corner (module docs).
#[derive(Debug)]
pub struct MacroJoint {
    /// The links model compiled by the engine (bodies = links and boundary bodies).
    links: CompiledModel,
    /// Number of links.
    n_links: usize,
    /// Number of boundary bodies (= markers of the element).
    n_boundary: usize,
    /// The two ends of every element of `links`.
    ends: Vec<[End; 2]>,
    /// Design pose of every link relative to boundary node 0: position (3), rotation (9,
    /// row-major).
    design_rel: Vec<f64>,
    /// Structural bounds of K_ll (from the element couplings) for its factorisation.
    bounds: lu::Bounds,
    /// Newton step below which the step is the last one: sqrt(tolerance × ACCEPT_LENGTH).
    accept: f64,
    /// Newton iterations at most.
    max_iterations: usize,
    /// Names of the links (for `sprung check` and errors).
    link_names: Vec<String>,
}

/// Longest Newton step of a link's reference point, m (damped Newton).
const MAX_STEP: f64 = 0.005;

/// Largest Newton rotation of a link, rad (damped Newton).
const MAX_TURN: f64 = 0.1;

/// Smallest fraction of a Newton step the line search tries before it takes the step anyway.
const MIN_STEP_FACTOR: f64 = 1.0 / 64.0;

/// Length scale of the loop closure's nonlinearity, m: after a full Newton step δ the error
/// left is about |δ|²/ℓ; with ℓ = 1 cm (the links are 10–40 cm long, their bushings' characteristics
/// bend over millimetres) a step below sqrt(tolerance × ℓ) leaves less than the tolerance, so it
/// is accepted without a confirming iteration.
const ACCEPT_LENGTH: f64 = 0.01;

/// Boundary bodies whose motion the warm start's predictor follows (the others start from the
/// last solution): the reference axles have at most three (chassis or subframe, carrier,
/// anti-roll bar half).
const MAX_BOUNDARY: usize = 4;

/// What [`MacroJoint::assemble`] computes besides the generalised forces g.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// g only.
    Forces,
    /// The links' rows of A = ∂g/∂(q, x_b) (the Newton matrix K_l·; velocities are zero).
    LinkStiffness,
    /// All rows of A and C = ∂g/∂(q̇, ẋ_b).
    All,
}

/// Per-thread dense workspace of [`MacroJoint::evaluate`] (grown on first use, then reused).
#[derive(Debug, Default)]
struct Work {
    nodes: Vec<Node>,
    /// The link poses of the last accepted Newton iterate (line search).
    saved: Vec<Node>,
    g: Vec<f64>,
    k: Vec<f64>,
    c: Vec<f64>,
    /// K_lb: the links' stiffness rows, boundary columns (6 n_links × 6 n_boundary).
    kl: Vec<f64>,
    lu: Vec<f64>,
    piv: Vec<usize>,
    prof: lu::Profile,
    s: Vec<f64>,
    /// Whether `s` belongs to the last solve.
    has_s: bool,
    t1: Vec<f64>,
    prod: Vec<f64>,
    y: Vec<f64>,
    ef: ElementForce,
    /// The algebraic variables of the last solve (link and boundary poses, the predictor) and
    /// whose they are: `partials()` runs right after `evaluate()` on the same thread.
    alg: Vec<f64>,
    owner: usize,
    /// The boundary markers of the last solve: `partials()` at the same input reuses it (link
    /// poses and velocities, the factorised K_ll, K_l·, S) instead of repeating it.
    last_markers: Vec<MarkerState>,
    solved: bool,
}

impl Work {
    /// Grows the buffers to the sizes of a joint with `nl` links and `nb` boundary bodies (never
    /// shrinks them: the joints of a model share the workspace in turn, and every use takes a
    /// slice of its own size, so nothing is zeroed or reallocated when they alternate).
    fn fit(&mut self, nl: usize, nb: usize, n_alg: usize) {
        fn grow<T: Clone>(v: &mut Vec<T>, len: usize, fill: T) {
            if v.len() < len {
                v.resize(len, fill);
            }
        }
        let (n_l, n) = (6 * nl, 6 * (nl + nb));
        let n_b = n - n_l;
        grow(&mut self.nodes, nl + nb, Node::default());
        grow(&mut self.saved, nl, Node::default());
        grow(&mut self.g, n, 0.0);
        grow(&mut self.k, n * n, 0.0);
        grow(&mut self.c, n * n, 0.0);
        grow(&mut self.kl, n_l * n_b, 0.0);
        self.prof.fit(n_l);
        grow(&mut self.lu, n_l * n_l, 0.0);
        grow(&mut self.piv, n_l, 0);
        grow(&mut self.s, n_l * n_b, 0.0);
        grow(&mut self.t1, n_l * n_b, 0.0);
        grow(&mut self.prod, n_b * n_b, 0.0);
        grow(&mut self.y, n, 0.0);
        grow(&mut self.alg, n_alg, 0.0);
        grow(&mut self.last_markers, nb, MarkerState::default());
    }
}

thread_local! {
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

/// Adds (`plus`) or subtracts the 3 × 3 block `m` at (row, col) of the row-major n × n matrix
/// `dst` (a − m equals a + (−m) exactly: the element's sign needs no multiplication).
#[inline(always)]
fn add_block(dst: &mut [f64], n: usize, row: usize, col: usize, m: &Matrix3<f64>, plus: bool) {
    for i in 0..3 {
        let d = &mut dst[(row + i) * n + col..(row + i) * n + col + 3];
        for (j, dj) in d.iter_mut().enumerate() {
            if plus {
                *dj += m[(i, j)];
            } else {
                *dj -= m[(i, j)];
            }
        }
    }
}

/// Factory for the registry.
pub fn build(p: &ElementParams, design: &[MarkerState]) -> Result<Arc<dyn ElementLaw>, String> {
    let text = p
        .text("links")?
        .ok_or("parameter `links` is missing (the link subsystem; `sprung reduce` writes it)")?;
    let boundary: Vec<&str> = p
        .text("boundary")?
        .ok_or("parameter `boundary` is missing (the boundary bodies, space-separated)")?
        .split_whitespace()
        .collect();
    let tolerance = p.positive("tolerance")?;
    let max_iterations = p.positive("max_iterations")?.round() as usize;
    MacroJoint::new(text, &boundary, design, tolerance, max_iterations).map(|m| Arc::new(m) as _)
}

impl MacroJoint {
    /// Builds the law from the links model text, the boundary body names (one per marker) and
    /// the design kinematics of the element's markers (which must sit at the boundary bodies'
    /// design frames).
    pub fn new(
        links_text: &str,
        boundary: &[&str],
        design: &[MarkerState],
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<Self, String> {
        let model = sprung_model::from_toml_str(links_text, "macro_joint links")
            .map_err(|e| format!("parameter `links`: {e}"))?;
        let links = sprung_mbs::compile(&model).map_err(|e| format!("parameter `links`: {e}"))?;
        if boundary.len() != design.len() {
            return Err(format!(
                "`boundary` names {} bodies but the element has {} markers; give one marker per boundary body",
                boundary.len(),
                design.len()
            ));
        }
        let nb = boundary.len();
        let mut node_of_body = vec![usize::MAX; links.bodies.len()];
        for (k, name) in boundary.iter().enumerate() {
            let Some(i) = links.bodies.iter().position(|b| b.name == *name) else {
                return Err(format!(
                    "boundary body '{name}' is not a body of the links model"
                ));
            };
            node_of_body[i] = usize::MAX - 1 - k; // marked; numbered below
        }
        // Links numbered along the chain (reverse Cuthill–McKee over the links joined by
        // elements): K_ll is then banded and its factorisation and solves stay in the band
        // (`crate::lu`).
        let link_bodies: Vec<usize> = (0..links.bodies.len())
            .filter(|&i| node_of_body[i] == usize::MAX)
            .collect();
        let couplings: Vec<(usize, usize)> = links
            .elements
            .iter()
            .filter_map(|el| {
                let bi = links.markers[el.marker_i].body?;
                let bj = links.markers[el.marker_j].body?;
                let li = link_bodies.iter().position(|&b| b == bi)?;
                let lj = link_bodies.iter().position(|&b| b == bj)?;
                (li != lj).then_some((li, lj))
            })
            .collect();
        let mut link_names = Vec::new();
        for l in reverse_cuthill_mckee(link_bodies.len(), &couplings) {
            let i = link_bodies[l];
            node_of_body[i] = link_names.len();
            link_names.push(links.bodies[i].name.clone());
        }
        let nl = link_names.len();
        if nl == 0 {
            return Err(
                "the links model has no link bodies (every body is a boundary body)".into(),
            );
        }
        for n in node_of_body.iter_mut() {
            if *n >= usize::MAX - nb {
                *n = nl + (usize::MAX - 1 - *n);
            }
        }
        // Boundary markers must sit at the boundary bodies' design frames.
        for (k, name) in boundary.iter().enumerate() {
            let b = links
                .bodies
                .iter()
                .find(|b| b.name == *name)
                .expect("checked");
            let r = quat_to_matrix(&b.orientation);
            let dx = (b.position - design[k].x).norm();
            let dr = (r - design[k].rot).norm();
            if dx > 1e-9 || dr > 1e-9 {
                return Err(format!(
                    "marker {k} of the macro joint is not at the design frame of boundary body '{name}' (off by {dx:.3e} m, {dr:.3e} in the axes); place it at the body's frame (position [0, 0, 0] on the body, no frame)"
                ));
            }
        }
        let mut ends = Vec::with_capacity(links.elements.len());
        for el in &links.elements {
            let end = |m: usize| -> Result<End, String> {
                let mk = &links.markers[m];
                let Some(b) = mk.body else {
                    return Err(format!(
                        "element '{}': marker '{}' is on the ground of the links model; put it on a link or boundary body",
                        el.name, mk.name
                    ));
                };
                Ok(End {
                    node: node_of_body[b],
                    s: mk.position,
                    a: mk.axes,
                })
            };
            let pair = [end(el.marker_i)?, end(el.marker_j)?];
            if pair[0].node == pair[1].node {
                return Err(format!(
                    "element '{}' joins a body of the links model to itself",
                    el.name
                ));
            }
            ends.push(pair);
        }
        // Every link needs an element, or its pose is undetermined.
        for (l, name) in link_names.iter().enumerate() {
            if !ends.iter().any(|e| e[0].node == l || e[1].node == l) {
                return Err(format!(
                    "link '{name}' has no element in the links model; its pose is undetermined"
                ));
            }
        }
        // Block structure of K_ll: link i couples to link j only through an element joining
        // them; the factorisation skips what lies outside (`lu::Bounds`).
        let mut first: Vec<usize> = (0..nl).collect();
        let mut last: Vec<usize> = (0..nl).collect();
        for e in &ends {
            let (i, j) = (e[0].node, e[1].node);
            if i < nl && j < nl {
                first[i] = first[i].min(j);
                first[j] = first[j].min(i);
                last[i] = last[i].max(j);
                last[j] = last[j].max(i);
            }
        }
        let bounds = lu::Bounds::of_blocks(&first, &last, 6);
        let (x0, r0) = (design[0].x, design[0].rot);
        let mut design_rel = vec![0.0; 12 * nl];
        for (i, b) in links.bodies.iter().enumerate() {
            let l = node_of_body[i];
            if l >= nl {
                continue;
            }
            let p = r0.transpose() * (b.position - x0);
            let r = r0.transpose() * quat_to_matrix(&b.orientation);
            design_rel[12 * l..12 * l + 3].copy_from_slice(p.as_slice());
            for a in 0..3 {
                for c in 0..3 {
                    design_rel[12 * l + 3 + 3 * a + c] = r[(a, c)];
                }
            }
        }
        Ok(Self {
            links,
            n_links: nl,
            n_boundary: nb,
            ends,
            design_rel,
            bounds,
            accept: (tolerance * ACCEPT_LENGTH).sqrt(),
            max_iterations: max_iterations.max(1),
            link_names,
        })
    }

    /// Names of the links the element replaces.
    pub fn link_names(&self) -> &[String] {
        &self.link_names
    }

    /// The links model (compiled): its elements are those inside the macro joint.
    pub fn links_model(&self) -> &CompiledModel {
        &self.links
    }

    /// Number of boundary bodies (= markers).
    pub fn n_boundary(&self) -> usize {
        self.n_boundary
    }

    /// Link poses (global) for the Newton start: with `alg`, the last solution (relative to
    /// boundary node 0) moved by the predictor δq = S Δx_b for the motion of the other boundary
    /// bodies relative to node 0 since that solution (first order in the motion, so that one
    /// Newton step usually converges); without, or before the first solve, the design pose.
    fn load_links(&self, markers: &[MarkerState], alg: Option<&[f64]>, nodes: &mut [Node]) {
        let nl = self.n_links;
        let x0 = &markers[0];
        let warm = alg.filter(|a| a[..12 * nl].iter().any(|&v| v != 0.0));
        let src = warm.map_or(&self.design_rel[..], |a| &a[..12 * nl]);
        let (bo, so, ncols) = self.alg_layout();
        // Relative motion of boundary k ≥ 1 since the last solve (marker-0 axes), at most
        // MAX_BOUNDARY bodies predicted (the rest start from the last solution).
        let mut dxb = [0.0f64; 6 * MAX_BOUNDARY];
        let predict = match warm {
            Some(a) if ncols > 0 && a[bo + 3..bo + 12].iter().any(|&v| v != 0.0) => {
                for (k, m) in markers.iter().enumerate().skip(1).take(MAX_BOUNDARY) {
                    let p = x0.rot.transpose() * (m.x - x0.x);
                    let r = x0.rot.transpose() * m.rot;
                    let o = bo + 12 * (k - 1);
                    let p_old = Vector3::new(a[o], a[o + 1], a[o + 2]);
                    let r_old = Matrix3::from_row_slice(&a[o + 3..o + 12]);
                    let dphi =
                        Rotation3::from_matrix_unchecked(r * r_old.transpose()).scaled_axis();
                    let d = &mut dxb[6 * (k - 1)..6 * k];
                    d[..3].copy_from_slice((p - p_old).as_slice());
                    d[3..].copy_from_slice(dphi.as_slice());
                }
                dxb.iter().all(|v| v.is_finite())
            }
            _ => false,
        };
        let npred = ncols.min(6 * MAX_BOUNDARY);
        for (l, node) in nodes.iter_mut().enumerate().take(nl) {
            let a = &src[12 * l..12 * l + 12];
            let mut p = Vector3::new(a[0], a[1], a[2]);
            let mut r = Matrix3::from_row_slice(&a[3..12]);
            if let (true, Some(alg)) = (predict, warm) {
                let mut d = [0.0; 6];
                for (i, di) in d.iter_mut().enumerate() {
                    let row = &alg[so + (6 * l + i) * ncols..so + (6 * l + i) * ncols + npred];
                    *di = row.iter().zip(&dxb[..npred]).map(|(s, x)| s * x).sum();
                }
                p += Vector3::new(d[0], d[1], d[2]);
                r = Rotation3::new(Vector3::new(d[3], d[4], d[5])).into_inner() * r;
            }
            node.x = x0.x + x0.rot * p;
            node.r = orthonormalise(&(x0.rot * r));
            node.v = Vector3::zeros();
            node.w = Vector3::zeros();
        }
    }

    /// Offsets in the algebraic variables: the boundary poses (12 per boundary body after the
    /// first), the predictor S (6 n_links rows × 6 (n_boundary − 1) columns, row-major), and its
    /// number of columns.
    fn alg_layout(&self) -> (usize, usize, usize) {
        let nbr = self.n_boundary - 1;
        (12 * self.n_links, 12 * (self.n_links + nbr), 6 * nbr)
    }

    /// Stores the solution as the next warm start (finite values only): the link poses and the
    /// boundary poses relative to boundary node 0, and the velocity map S (global, `s`: 6
    /// n_links × 6 n_boundary) turned into node 0's axes, without node 0's columns (a motion of
    /// node 0 moves everything rigidly).
    fn store(&self, markers: &[MarkerState], nodes: &[Node], s: Option<&[f64]>, alg: &mut [f64]) {
        let nl = self.n_links;
        if nodes[..nl]
            .iter()
            .any(|n| !n.x.iter().chain(n.r.iter()).all(|v| v.is_finite()))
        {
            return;
        }
        let x0 = &markers[0];
        let rel = |x: &Vector3<f64>, r: &Matrix3<f64>, dst: &mut [f64]| {
            let p = x0.rot.transpose() * (x - x0.x);
            let r = x0.rot.transpose() * r;
            dst[..3].copy_from_slice(p.as_slice());
            for a in 0..3 {
                for c in 0..3 {
                    dst[3 + 3 * a + c] = r[(a, c)];
                }
            }
        };
        for (l, node) in nodes.iter().enumerate().take(nl) {
            rel(&node.x, &node.r, &mut alg[12 * l..12 * l + 12]);
        }
        let (bo, so, ncols) = self.alg_layout();
        for (k, m) in markers.iter().enumerate().skip(1) {
            rel(&m.x, &m.rot, &mut alg[bo + 12 * (k - 1)..bo + 12 * k]);
        }
        let Some(s) = s else { return };
        let n_b = 6 * self.n_boundary;
        let rt = x0.rot.transpose();
        for rb in 0..2 * nl {
            for cb in 2..2 * self.n_boundary {
                let blk = Matrix3::from_fn(|i, j| s[(3 * rb + i) * n_b + 3 * cb + j]);
                let b = rt * blk * x0.rot;
                for i in 0..3 {
                    for j in 0..3 {
                        alg[so + (3 * rb + i) * ncols + 3 * (cb - 2) + j] = b[(i, j)];
                    }
                }
            }
        }
    }

    /// Generalised forces g (force, torque about the node's reference point, per node) of all
    /// elements at `nodes`; with `partials`, also A = ∂g/∂(δx, δφ) into `k` and C = ∂g/∂(v, ω)
    /// into `c` (row-major N × N, N = 6 nodes).
    fn assemble(
        &self,
        nodes: &[Node],
        need: Need,
        g: &mut [f64],
        k: &mut [f64],
        c: &mut [f64],
        ef: &mut ElementForce,
    ) {
        let n = 6 * nodes.len();
        let n_l = 6 * self.n_links;
        g.fill(0.0);
        match need {
            Need::Forces => {}
            Need::LinkStiffness => k[..n_l * n].fill(0.0),
            Need::All => {
                k.fill(0.0);
                c.fill(0.0);
            }
        }
        let partials = need != Need::Forces;
        let curves = &self.links.curves;
        for (el, ends) in self.links.elements.iter().zip(&self.ends) {
            let kin = ends.map(|e| {
                let nd = &nodes[e.node];
                let arm = nd.r * e.s;
                MarkerKin {
                    body: None,
                    x: nd.x + arm,
                    arm,
                    v: nd.v + nd.w.cross(&arm),
                    w: nd.w,
                    rot: M3::from_matrix(&(nd.r * e.a)),
                }
            });
            match &el.kind {
                ElementKind::Bushing(b) => {
                    sprung_mbs::bushing::evaluate(Portable, b, curves, &kin, partials, ef)
                }
                ElementKind::P2p(law) => sprung_mbs::p2p::evaluate(
                    Portable,
                    law,
                    curves,
                    el.design_length,
                    &kin,
                    partials,
                    ef,
                ),
            }
            let f = ef.force;
            let t = ef.torque;
            let sign = [1.0, -1.0];
            let node = [ends[0].node, ends[1].node];
            let r = [
                ef.point[0] - nodes[node[0]].x,
                ef.point[1] - nodes[node[1]].x,
            ];
            for side in 0..2 {
                let o = 6 * node[side];
                let fs = sign[side] * f;
                let ts = sign[side] * (t + r[side].cross(&f));
                for a in 0..3 {
                    g[o + a] += fs[a];
                    g[o + 3 + a] += ts[a];
                }
            }
            if !partials {
                continue;
            }
            let p = &ef.partials;
            let z = Matrix3::zeros();
            let fp = p.f_p.to_matrix();
            let fv = if p.has_f_v { p.f_v.to_matrix() } else { z };
            let fphi = [p.f_phi[0].to_matrix(), p.f_phi[1].to_matrix()];
            let (tphi, tw) = if p.has_torque {
                (
                    [p.t_phi[0].to_matrix(), p.t_phi[1].to_matrix()],
                    p.t_w.to_matrix(),
                )
            } else {
                ([z, z], z)
            };
            let sf = skew(&f);
            // C = ∂g/∂(v, ω) is zero for an element without velocity partials (a spring, a
            // stop): its blocks are skipped.
            let damped = p.has_f_v || p.has_torque;
            let with_c = need == Need::All && damped;
            // [r]× ∂f/∂p and [r]× ∂f/∂v of each side (the same for both ends e).
            let sr = [skew(&r[0]), skew(&r[1])];
            let srfp = [sr[0] * fp, sr[1] * fp];
            let srfv = if with_c {
                [sr[0] * fv, sr[1] * fv]
            } else {
                [z, z]
            };
            for e in 0..2 {
                let ne = node[e];
                let sa = skew(&kin[e].arm);
                let fp_e = sign[e] * fp;
                let fv_e = sign[e] * fv;
                // Marker e moves with its node: δp = δX − [a]×δΦ, δφ = δΦ; at fixed global
                // node velocities its velocity changes by ω × (δΦ × a) = −[ω]×[a]×δΦ (zero in
                // the Newton matrix: the equilibrium is solved at zero velocities).
                let mut dfphi = -fp_e * sa + fphi[e];
                if p.has_f_v && need == Need::All {
                    dfphi -= fv_e * skew(&nodes[ne].w) * sa;
                }
                let dtphi = tphi[e];
                let (dfw, dtw) = if with_c {
                    (-fv_e * sa, sign[e] * tw)
                } else {
                    (z, z)
                };
                for side in 0..2 {
                    let nr = node[side];
                    if need == Need::LinkStiffness && nr >= self.n_links {
                        continue;
                    }
                    // Row side's blocks enter with sign[side]: added or subtracted (exact).
                    let plus = sign[side] * sign[e] > 0.0;
                    let add = |dst: &mut [f64], ro: usize, co: usize, m: &Matrix3<f64>| {
                        add_block(dst, n, ro, co, m, sign[side] > 0.0)
                    };
                    let (ro, co) = (6 * nr, 6 * ne);
                    // The torque rows: [r]× of the force's partials, and −[f]× of the motion of
                    // the force's point (the origin of marker point_end[side]: δp = δX − [a]×δΦ
                    // if that is marker e) relative to the row's node (δX if nr = ne, i.e. side
                    // = e; the nodes of an element differ). Both are ±I, 0 or ∓[a]× in δX, δΦ.
                    let at_point = ef.point_end[side] == e;
                    let srdfx = sign[e] * srfp[side];
                    let dtx = match (at_point, side == e) {
                        (true, false) => srdfx - sf,
                        (false, true) => srdfx + sf,
                        _ => srdfx,
                    };
                    let dtp = if at_point {
                        dtphi + sr[side] * dfphi + sf * sa
                    } else {
                        dtphi + sr[side] * dfphi
                    };
                    add_block(k, n, ro, co, &fp, plus);
                    add(k, ro, co + 3, &dfphi);
                    add(k, ro + 3, co, &dtx);
                    add(k, ro + 3, co + 3, &dtp);
                    if !with_c {
                        continue;
                    }
                    add_block(c, n, ro, co, &fv, plus);
                    add(c, ro, co + 3, &dfw);
                    add(c, ro + 3, co, &(sign[e] * srfv[side]));
                    add(c, ro + 3, co + 3, &(dtw + sr[side] * dfw));
                }
            }
        }
    }

    /// The whole evaluation (module docs); partials into `jac` when given.
    fn run(
        &self,
        x: &ElementInput,
        out: Option<&mut ElementOutput>,
        jac: Option<&mut ElementJacobian>,
    ) {
        let id = self as *const Self as usize;
        WORK.with(|w| {
            let mut w = w.borrow_mut();
            let w = &mut *w;
            let (nl, nb) = (self.n_links, self.n_boundary);
            w.fit(nl, nb, self.n_algebraic());
            let n_l = 6 * nl;
            let n = 6 * (nl + nb);
            let n_b = n - n_l;
            let reuse =
                out.is_none() && w.solved && w.owner == id && w.last_markers[..nb] == *x.markers;
            let nodes = &mut w.nodes[..nl + nb];
            let (g, k, c) = (&mut w.g[..n], &mut w.k[..n * n], &mut w.c[..n * n]);
            let (lu_m, piv) = (&mut w.lu[..n_l * n_l], &mut w.piv[..n_l]);
            let y = &mut w.y[..n];
            let kl = &mut w.kl[..n_l * n_b];
            let prof = &mut w.prof;
            let s = &mut w.s[..n_l * n_b];
            let alg = &mut w.alg[..self.n_algebraic()];
            let mut iterations = 0;
            let mut residual = f64::INFINITY;
            let mut converged = false;
            let mut factored = reuse;
            if !reuse {
                for (k, m) in x.markers.iter().enumerate() {
                    nodes[nl + k] = Node {
                        x: m.x,
                        r: m.rot,
                        v: Vector3::zeros(),
                        w: Vector3::zeros(),
                    };
                }
                // The warm start: the element's algebraic variables (evaluate), or this
                // thread's last solve of this element (partials without evaluate).
                match (&out, w.owner == id) {
                    (Some(o), _) => alg.copy_from_slice(o.algebraic),
                    (None, true) => {}
                    (None, false) => alg.fill(0.0),
                }
                self.load_links(x.markers, Some(alg), nodes);
                // Position level: Newton on the links' stiffness equilibrium (velocities zero); its
                // curve evaluations at trial poses stay out of the breakpoint signature.
                sprung_mbs::compiled::without_segment_signature(|| {
                    // From the predicted warm start; if that fails (a far jump of a boundary
                    // body), once more from the design pose.
                    for attempt in 0..2 {
                        if attempt == 1 {
                            if converged {
                                break;
                            }
                            self.load_links(x.markers, None, nodes);
                        }
                        let mut it = 0;
                        let (mut norm_prev, mut alpha) = (f64::INFINITY, 1.0f64);
                        while it < self.max_iterations {
                            it += 1;
                            iterations += 1;
                            self.assemble(nodes, Need::LinkStiffness, g, k, c, &mut w.ef);
                            residual = g[..n_l].iter().fold(0.0f64, |m, v| m.max(v.abs()));
                            let norm = g[..n_l].iter().map(|v| v * v).sum::<f64>().sqrt();
                            if (norm >= norm_prev || norm.is_nan()) && alpha > MIN_STEP_FACTOR {
                                // Backtracking line search: the last step raised the residual
                                // (a stop engaging, a far jump); take half of it instead.
                                alpha *= 0.5;
                                for (l, node) in nodes.iter_mut().enumerate().take(nl) {
                                    *node = w.saved[l];
                                    let d = &y[6 * l..6 * l + 6];
                                    node.x += alpha * Vector3::new(d[0], d[1], d[2]);
                                    let phi = alpha * Vector3::new(d[3], d[4], d[5]);
                                    node.r = Rotation3::new(phi).into_inner() * node.r;
                                }
                                continue;
                            }
                            (norm_prev, alpha) = (norm, 1.0);
                            w.saved[..nl].copy_from_slice(&nodes[..nl]);
                            for i in 0..n_l {
                                lu_m[i * n_l..(i + 1) * n_l]
                                    .copy_from_slice(&k[i * n..i * n + n_l]);
                            }
                            factored = lu::factor(lu_m, n_l, piv, prof, &self.bounds);
                            if !factored {
                                break;
                            }
                            for i in 0..n_l {
                                y[i] = -g[i];
                            }
                            lu::solve(lu_m, n_l, piv, prof, &mut y[..n_l]);
                            // Damped Newton: a link's step longer than MAX_STEP or turning more
                            // than MAX_TURN is shortened (link by link: a nearly free spin of one
                            // link, e.g. a drop link about its axis, must not stall the others), so
                            // that a start far from the solution (no warm start, a large jump of a
                            // boundary body) cannot throw a link across its stops.
                            let longest = y[..n_l].iter().fold(0.0f64, |m, v| m.max(v.abs()));
                            if !longest.is_finite() {
                                break;
                            }
                            for d in y[..n_l].chunks_exact_mut(6) {
                                let dx = d[..3].iter().fold(0.0f64, |m, v| m.max(v.abs()));
                                let dphi = d[3..].iter().fold(0.0f64, |m, v| m.max(v.abs()));
                                let f = (MAX_STEP / dx).min(MAX_TURN / dphi).min(1.0);
                                d.iter_mut().for_each(|v| *v *= f);
                            }
                            for (l, node) in nodes.iter_mut().enumerate().take(nl) {
                                let d = &y[6 * l..6 * l + 6];
                                node.x += Vector3::new(d[0], d[1], d[2]);
                                let phi = Vector3::new(d[3], d[4], d[5]);
                                node.r = Rotation3::new(phi).into_inner() * node.r;
                            }
                            // Quadratic convergence: the error left after a full step δ is about
                            // |δ|²/ℓ (module docs), below the tolerance once |δ| < accept.
                            if longest < self.accept {
                                converged = true;
                                break;
                            }
                        }
                    }
                });
                w.solved = factored;
                // K_l· (stiffness rows of the links, at the last Newton iterate) for the velocity
                // map and the force transfer.
                for i in 0..n_l {
                    kl[i * n_b..(i + 1) * n_b].copy_from_slice(&k[i * n + n_l..(i + 1) * n]);
                }
                // Velocity level: q̇ = S ẋ_b = −K_ll⁻¹ (K_lb ẋ_b), one solve.
                for (kb, m) in x.markers.iter().enumerate() {
                    nodes[nl + kb].v = m.v;
                    nodes[nl + kb].w = m.w;
                }
                for (i, yi) in y[..n_l].iter_mut().enumerate() {
                    let row = &kl[i * n_b..(i + 1) * n_b];
                    let mut v = 0.0;
                    for (kb, m) in x.markers.iter().enumerate() {
                        let r = &row[6 * kb..6 * kb + 6];
                        v += r[0] * m.v.x + r[1] * m.v.y + r[2] * m.v.z;
                        v += r[3] * m.w.x + r[4] * m.w.y + r[5] * m.w.z;
                    }
                    *yi = -v;
                }
                if factored {
                    lu::solve(lu_m, n_l, piv, prof, &mut y[..n_l]);
                } else {
                    y[..n_l].fill(0.0);
                }
                for (l, node) in nodes.iter_mut().enumerate().take(nl) {
                    let d = &y[6 * l..6 * l + 6];
                    node.v = Vector3::new(d[0], d[1], d[2]);
                    node.w = Vector3::new(d[3], d[4], d[5]);
                }
                w.last_markers[..nb].copy_from_slice(x.markers);
                w.has_s = false;
                // The predictor's S is refreshed when it was missing or no longer good enough
                // for a one-step Newton (it only has to be close: it moves the warm start).
                let (_, so, _) = self.alg_layout();
                let refresh = iterations > 1 || alg[so..].iter().all(|&v| v == 0.0);
                if refresh {
                    self.velocity_map(factored.then_some((&*lu_m, &*piv, &*prof)), kl, s);
                    w.has_s = true;
                }
                self.store(x.markers, nodes, refresh.then_some(&*s), alg);
            }
            // g at the solution with the actual velocities; with the partials A and C too (one
            // assembly serves both in `evaluate_with_partials`).
            match (jac.is_some(), reuse) {
                // partials() after evaluate(): evaluate's assembly counted its curve segments.
                (true, true) => sprung_mbs::compiled::without_segment_signature(|| {
                    self.assemble(nodes, Need::All, g, k, c, &mut w.ef)
                }),
                (true, false) => self.assemble(nodes, Need::All, g, k, c, &mut w.ef),
                (false, _) => self.assemble(nodes, Need::Forces, g, k, c, &mut w.ef),
            }
            if out.is_some() {
                // Forces on the boundary: G_b = g_b + Sᵀ g_l = g_b − K_lbᵀ (K_ll⁻ᵀ g_l).
                y[..n_l].copy_from_slice(&g[..n_l]);
                if factored {
                    lu::solve_transpose(lu_m, n_l, piv, prof, &mut y[..n_l]);
                } else {
                    y[..n_l].fill(0.0);
                }
                for (i, &yi) in y[..n_l].iter().enumerate() {
                    if yi != 0.0 {
                        let row = &kl[i * n_b..(i + 1) * n_b];
                        for (gb, kij) in g[n_l..].iter_mut().zip(row) {
                            *gb -= kij * yi;
                        }
                    }
                }
            }
            w.owner = id;
            if let Some(out) = out {
                for kb in 0..nb {
                    let o = n_l + 6 * kb;
                    out.force[kb] = Vector3::new(g[o], g[o + 1], g[o + 2]);
                    out.torque[kb] = Vector3::new(g[o + 3], g[o + 4], g[o + 5]);
                }
                out.outputs[0] = iterations as f64;
                out.outputs[1] = residual;
                out.outputs[2] = if converged { 1.0 } else { 0.0 };
                out.algebraic.copy_from_slice(alg);
            }
            let Some(jac) = jac else { return };
            if !w.has_s {
                self.velocity_map(w.solved.then_some((&*lu_m, &*piv, &w.prof)), kl, s);
                w.has_s = true;
            }
            // ∂G/∂x_b = A_bb + A_bl S + Sᵀ (A_lb + A_ll S), the same with C for ∂G/∂ẋ_b.
            let t1 = &mut w.t1[..n_l * n_b];
            let prod = &mut w.prod[..n_b * n_b];
            ift_product(n_l, n_b, k, s, t1, prod, jac.position);
            ift_product(n_l, n_b, c, s, t1, prod, jac.velocity);
        });
    }

    /// S = −K_ll⁻¹ K_lb (all columns in one pass) into `s` (6 n_links × 6 n_boundary, row-major) from
    /// the links' stiffness rows `kl` and the factorised K_ll; zero if K_ll is singular.
    fn velocity_map(
        &self,
        factors: Option<(&[f64], &[usize], &lu::Profile)>,
        kl: &[f64],
        s: &mut [f64],
    ) {
        let (n_l, n_b) = (6 * self.n_links, 6 * self.n_boundary);
        let s = &mut s[..n_l * n_b];
        let Some((lu_m, piv, prof)) = factors else {
            s.fill(0.0);
            return;
        };
        for (sv, kv) in s.iter_mut().zip(&kl[..n_l * n_b]) {
            *sv = -kv;
        }
        lu::solve_many(lu_m, n_l, piv, prof, s, n_b);
        for v in s.iter_mut() {
            if !v.is_finite() {
                *v = 0.0;
            }
        }
    }
}

/// One implicit-function product of the partials (module docs): `dst` = M_bb + M_bl S +
/// Sᵀ (M_lb + M_ll S) for the row-major n × n matrix `mat` (n = n_l + n_b) and S (n_l × n_b);
/// the link blocks of M are sparse (elements join few links), their zeros are skipped. `t1`
/// (n_l × n_b) and `prod` (n_b × n_b) are scratch.
#[inline(never)]
fn ift_product(
    n_l: usize,
    n_b: usize,
    mat: &[f64],
    s: &[f64],
    t1: &mut [f64],
    prod: &mut [f64],
    dst: &mut nalgebra::DMatrix<f64>,
) {
    let n = n_l + n_b;
    // t1 = M_lb + M_ll S, row by row.
    for i in 0..n_l {
        let t = &mut t1[i * n_b..(i + 1) * n_b];
        t.copy_from_slice(&mat[i * n + n_l..(i + 1) * n]);
        for (q, &a) in mat[i * n..i * n + n_l].iter().enumerate() {
            if a != 0.0 {
                for (tj, sj) in t.iter_mut().zip(&s[q * n_b..(q + 1) * n_b]) {
                    *tj += a * sj;
                }
            }
        }
    }
    // M_bb + M_bl S + Sᵀ t1.
    for i in 0..n_b {
        let p = &mut prod[i * n_b..(i + 1) * n_b];
        p.copy_from_slice(&mat[(n_l + i) * n + n_l..(n_l + i + 1) * n]);
        for (q, &a) in mat[(n_l + i) * n..(n_l + i) * n + n_l].iter().enumerate() {
            if a != 0.0 {
                for (pj, sj) in p.iter_mut().zip(&s[q * n_b..(q + 1) * n_b]) {
                    *pj += a * sj;
                }
            }
        }
    }
    for q in 0..n_l {
        let t = &t1[q * n_b..(q + 1) * n_b];
        for i in 0..n_b {
            let sqi = s[q * n_b + i];
            if sqi != 0.0 {
                for (pj, tj) in prod[i * n_b..(i + 1) * n_b].iter_mut().zip(t) {
                    *pj += sqi * tj;
                }
            }
        }
    }
    for j in 0..n_b {
        for (i, d) in dst.column_mut(j).iter_mut().enumerate() {
            *d = prod[i * n_b + j];
        }
    }
}

/// Reverse Cuthill–McKee order of the `n` nodes of the graph with edges `pairs` (each
/// connected component from a node of least degree, neighbours by increasing degree): the order
/// of small bandwidth for the link numbering.
fn reverse_cuthill_mckee(n: usize, pairs: &[(usize, usize)]) -> Vec<usize> {
    let mut adj = vec![Vec::new(); n];
    for &(i, j) in pairs {
        adj[i].push(j);
        adj[j].push(i);
    }
    for a in adj.iter_mut() {
        a.sort_unstable();
        a.dedup();
    }
    let deg: Vec<usize> = adj.iter().map(Vec::len).collect();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    while order.len() < n {
        let start = (0..n)
            .filter(|&i| !seen[i])
            .min_by_key(|&i| deg[i])
            .expect("an unvisited node");
        seen[start] = true;
        let mut head = order.len();
        order.push(start);
        while head < order.len() {
            let v = order[head];
            head += 1;
            let mut next: Vec<usize> = adj[v].iter().copied().filter(|&u| !seen[u]).collect();
            next.sort_by_key(|&u| deg[u]);
            for u in next {
                seen[u] = true;
                order.push(u);
            }
        }
    }
    order.reverse();
    order
}

/// The nearest rotation to `r` by one Gram–Schmidt pass over its columns (removes the round-off
/// that accumulates in the warm start over many steps).
fn orthonormalise(r: &Matrix3<f64>) -> Matrix3<f64> {
    let x = r.column(0).normalize();
    let y = (r.column(1) - x * x.dot(&r.column(1))).normalize();
    let z = x.cross(&y);
    Matrix3::from_columns(&[x, y, z])
}

impl ElementLaw for MacroJoint {
    fn kind(&self) -> &str {
        INFO.name
    }
    fn n_markers(&self) -> usize {
        self.n_boundary
    }
    fn n_algebraic(&self) -> usize {
        let (_, so, ncols) = self.alg_layout();
        so + 6 * self.n_links * ncols
    }
    fn outputs(&self) -> &[OutputInfo] {
        OUTPUTS
    }
    fn evaluate(&self, x: &ElementInput, out: &mut ElementOutput) {
        self.run(x, Some(out), None);
    }
    fn evaluate_with_partials(
        &self,
        x: &ElementInput,
        out: &mut ElementOutput,
        jac: &mut ElementJacobian,
    ) -> Provided {
        // One solve and one assembly (with A and C) give the forces and the partials: the same
        // arithmetic as evaluate() followed by partials().
        self.run(x, Some(out), Some(jac));
        Provided::ALL
    }
    fn partials(&self, x: &ElementInput, jac: &mut ElementJacobian) -> Provided {
        // The pipeline calls evaluate() right before on this thread: the solve starts from its
        // link poses (converged: one Newton iteration), then the IFT partials (module docs).
        self.run(x, None, Some(jac));
        Provided::ALL
    }
}
