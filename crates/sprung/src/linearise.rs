//! Linear state-space model about the current state ([`Simulation::linearise`]): what MATLAB
//! users know as `linmod`.
//!
//! State x = (p, v_b, s): p the position perturbations of the bodies in tangent coordinates (6
//! per body: δx global, then δθ, the small rotation in body axes, R = R₀ exp([δθ]×)), v_b the
//! body velocities (6 per body: ẋ global, ω body axes) and s the element states (without the
//! padding of the 6-wide blocks). Inputs u: the model's inputs in order. Outputs y: the output
//! channels in order.
//!
//! ẋ = A x + B u,  y = C x + D u, with
//! * A_pp = diag(0, −½[ω]×) per body and A_pv = I: in the fixed chart R = R₀ exp([δθ]×) about the
//!   current attitude, δθ̇ = J_r(δθ)⁻¹ ω = ω + ½ δθ × ω + O(δθ²) (J_r the right Jacobian of
//!   SO(3)) — the Jacobian of the state derivative in these coordinates, as `linmod` returns it;
//! * the velocity and state rows from the analytic linearisation of the pipeline (document 000,
//!   eqs. 4-5): A_vp = J_r K (its columns are exactly the tangent coordinates above), A_vv = J_v
//!   (with the element-state columns), B = J_u;
//! * C and D by central differences of the output channels (relative step 1e-6 of max(1, |x|)),
//!   perturbing positions along the same tangent coordinates; D only for `runtime` inputs —
//!   a time-signal input cannot be perturbed, and no output quantity reads an input directly.

use faer::sparse::{SparseColMat, Triplet};
use nalgebra::{DMatrix, Vector3};
use sprung_mbs::rotation::quat_apply_body_increment;
use sprung_solve::mech::{Linearisation, MechanicalSystem};

use crate::{Error, Simulation};

/// A state-space model (module docs), dense.
#[derive(Debug, Clone)]
pub struct StateSpace {
    /// n × n.
    pub a: DMatrix<f64>,
    /// n × m.
    pub b: DMatrix<f64>,
    /// p × n.
    pub c: DMatrix<f64>,
    /// p × m.
    pub d: DMatrix<f64>,
    /// Names of the states, e.g. `wheel.dx`, `wheel.dthy`, `wheel.vx`, `wheel.wz`, `m1.damper_elongation`.
    pub state_names: Vec<String>,
    /// Input names.
    pub input_names: Vec<String>,
    /// Output channel names.
    pub output_names: Vec<String>,
}

/// The same model with sparse A and B (compressed sparse columns, assembled from the Jacobian
/// blocks without forming dense matrices) and dense C, D.
#[derive(Debug, Clone)]
pub struct SparseStateSpace {
    /// n × n.
    pub a: SparseColMat<usize, f64>,
    /// n × m.
    pub b: SparseColMat<usize, f64>,
    /// p × n.
    pub c: DMatrix<f64>,
    /// p × m.
    pub d: DMatrix<f64>,
    /// As [`StateSpace::state_names`].
    pub state_names: Vec<String>,
    /// Input names.
    pub input_names: Vec<String>,
    /// Output channel names.
    pub output_names: Vec<String>,
}

/// Relative step of the central differences for C and D.
const FD_STEP: f64 = 1e-6;

struct Parts {
    n: usize,
    a: Vec<(usize, usize, f64)>,
    b: Vec<(usize, usize, f64)>,
    c: DMatrix<f64>,
    d: DMatrix<f64>,
    state_names: Vec<String>,
    input_names: Vec<String>,
    output_names: Vec<String>,
}

impl Simulation {
    /// The linear model about the current state, dense (module docs of [`crate::linearise`]).
    pub fn linearise(&mut self) -> Result<StateSpace, Error> {
        let p = self.linear_parts()?;
        let dense = |n: usize, m: usize, t: &[(usize, usize, f64)]| {
            let mut x = DMatrix::zeros(n, m);
            for &(i, j, v) in t {
                x[(i, j)] += v;
            }
            x
        };
        Ok(StateSpace {
            a: dense(p.n, p.n, &p.a),
            b: dense(p.n, p.input_names.len(), &p.b),
            c: p.c,
            d: p.d,
            state_names: p.state_names,
            input_names: p.input_names,
            output_names: p.output_names,
        })
    }

    /// The linear model about the current state with sparse A and B.
    pub fn linearise_sparse(&mut self) -> Result<SparseStateSpace, Error> {
        let p = self.linear_parts()?;
        let sparse = |n: usize, m: usize, t: &[(usize, usize, f64)]| {
            let trip: Vec<Triplet<usize, usize, f64>> =
                t.iter().map(|&(i, j, v)| Triplet::new(i, j, v)).collect();
            SparseColMat::try_new_from_triplets(n, m, &trip)
                .map_err(|e| Error::Settings(format!("sparse assembly: {e:?}")))
        };
        Ok(SparseStateSpace {
            a: sparse(p.n, p.n, &p.a)?,
            b: sparse(p.n, p.input_names.len(), &p.b)?,
            c: p.c,
            d: p.d,
            state_names: p.state_names,
            input_names: p.input_names,
            output_names: p.output_names,
        })
    }

    fn linear_parts(&mut self) -> Result<Parts, Error> {
        let model = self.model().clone();
        let cm = model.compiled().clone();
        cm.require_no_joints("the linear model (`linearise`)")
            .map_err(Error::Settings)?;
        let nb = cm.bodies.len();
        let nbv = 6 * nb;
        let nv = cm.n_v();
        // Velocity-level coordinate of v → state index (None: padding).
        let mut vmap: Vec<Option<usize>> = vec![None; nv];
        let mut state_names = Vec::new();
        for b in &cm.bodies {
            for c in ["dx", "dy", "dz", "dthx", "dthy", "dthz"] {
                state_names.push(format!("{}.{c}", b.name));
            }
        }
        for (i, slot) in vmap.iter_mut().enumerate().take(nbv) {
            *slot = Some(nbv + i);
        }
        for b in &cm.bodies {
            for c in ["vx", "vy", "vz", "wx", "wy", "wz"] {
                state_names.push(format!("{}.{c}", b.name));
            }
        }
        for (e, el) in cm.open_elements.iter().enumerate() {
            for (j, name) in el.law.state_names().iter().enumerate() {
                vmap[cm.state_index(e, j)] = Some(state_names.len());
                state_names.push(format!("{}.{name}", el.name));
            }
        }
        let n = state_names.len();
        let t = self.time();
        let (r, v) = (self.positions().to_vec(), self.velocities().to_vec());
        let sys = self.system_mut();
        let mut lin = Linearisation::new(sys.n_r(), sys.pattern());
        sys.linearise(t, &r, &v, &mut lin);
        let mut a = Vec::new();
        for bi in 0..nb {
            let w = Vector3::new(v[6 * bi + 3], v[6 * bi + 4], v[6 * bi + 5]);
            for k in 0..6 {
                a.push((6 * bi + k, nbv + 6 * bi + k, 1.0));
            }
            // −½[ω]× on δθ.
            let sk = [
                (0, 1, 0.5 * w.z),
                (0, 2, -0.5 * w.y),
                (1, 0, -0.5 * w.z),
                (1, 2, 0.5 * w.x),
                (2, 0, 0.5 * w.y),
                (2, 1, -0.5 * w.x),
            ];
            for (i, j, val) in sk {
                a.push((6 * bi + 3 + i, 6 * bi + 3 + j, val));
            }
        }
        let pattern = lin.j_v.pattern().clone();
        for bi in 0..pattern.n_blocks() {
            for s in pattern.row_ptr()[bi]..pattern.row_ptr()[bi + 1] {
                let bj = pattern.col_idx()[s];
                let (jr, jv) = (lin.j_rk.block(s), lin.j_v.block(s));
                for i in 0..6 {
                    let Some(row) = vmap[6 * bi + i] else {
                        continue;
                    };
                    for j in 0..6 {
                        if bj < nb && jr[6 * i + j] != 0.0 {
                            a.push((row, 6 * bj + j, jr[6 * i + j]));
                        }
                        if let Some(col) = vmap[6 * bj + j]
                            && jv[6 * i + j] != 0.0
                        {
                            a.push((row, col, jv[6 * i + j]));
                        }
                    }
                }
            }
        }
        let m_u = cm.inputs.len();
        let ju = &sys.eval.j_u;
        let mut b = Vec::new();
        for k in 0..m_u {
            for (i, &x) in ju[k * nv..(k + 1) * nv].iter().enumerate() {
                if let Some(row) = vmap[i]
                    && x != 0.0
                {
                    b.push((row, k, x));
                }
            }
        }
        // C and D by central differences of the channels.
        let n_y = model.outputs().len();
        let mut c = DMatrix::zeros(n_y, n);
        let mut d = DMatrix::zeros(n_y, m_u);
        let mut y_plus = vec![0.0; n_y];
        let mut y_minus = vec![0.0; n_y];
        let mut rp = r.clone();
        let mut vp = v.clone();
        let mut eval = self.system_mut().eval.clone();
        let outputs = model.outputs();
        for col in 0..n {
            let mut h = 0.0;
            for (sign, y) in [(1.0, &mut y_plus), (-1.0, &mut y_minus)] {
                rp.copy_from_slice(&r);
                vp.copy_from_slice(&v);
                if col < nbv {
                    let (bi, k) = (col / 6, col % 6);
                    if k < 3 {
                        h = FD_STEP * r[7 * bi + k].abs().max(1.0);
                        rp[7 * bi + k] += sign * h;
                    } else {
                        h = FD_STEP;
                        let mut th = Vector3::zeros();
                        th[k - 3] = sign * h;
                        quat_apply_body_increment(&mut rp[7 * bi + 3..7 * bi + 7], &th);
                    }
                } else {
                    let i = vmap
                        .iter()
                        .position(|&x| x == Some(col))
                        .expect("every state has a coordinate");
                    h = FD_STEP * v[i].abs().max(1.0);
                    vp[i] += sign * h;
                }
                outputs.evaluate(&mut eval, t, &rp, &vp, y);
            }
            for i in 0..n_y {
                c[(i, col)] = (y_plus[i] - y_minus[i]) / (2.0 * h);
            }
        }
        for k in 0..m_u {
            if !cm.inputs[k].runtime {
                continue;
            }
            let u0 = eval.runtime_inputs()[k];
            let h = FD_STEP * u0.abs().max(1.0);
            for (sign, y) in [(1.0, &mut y_plus), (-1.0, &mut y_minus)] {
                eval.set_runtime_input(k, u0 + sign * h);
                outputs.evaluate(&mut eval, t, &r, &v, y);
            }
            eval.set_runtime_input(k, u0);
            for i in 0..n_y {
                d[(i, k)] = (y_plus[i] - y_minus[i]) / (2.0 * h);
            }
        }
        Ok(Parts {
            n,
            a,
            b,
            c,
            d,
            state_names,
            input_names: cm.inputs.iter().map(|u| u.name.clone()).collect(),
            output_names: outputs.channels.iter().map(|c| c.name.clone()).collect(),
        })
    }
}
