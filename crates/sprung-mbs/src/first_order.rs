//! A compiled model as a first-order ODE y' = f(t, y), y = (r, v), f = (K(r) v, q(t, r, v)), for
//! the general solver suite of document 001 (`ode45`, `ode15s`, `radau5`, …) through
//! [`sprung_solve::ode::OdeSystem`], with the analytic Jacobian
//! ```text
//! ∂f/∂y = [ ∂(K v)/∂r   K   ]
//!         [ J_r         J_v ]     J_r = (J_r K) L(r),  L = left inverse of K (see `rotation`)
//! ```
//! where ∂(K v)/∂r is the quaternion-product matrix of ½ (0, ω). The linear-implicit methods do
//! not use this adapter: they solve the reduced velocity-level system of document 000 directly.

use faer::MatMut;
use sprung_solve::mech::{Linearisation, MechanicalSystem};
use sprung_solve::ode::OdeSystem;

use crate::system::MbsSystem;

/// First-order view of an [`MbsSystem`].
pub struct FirstOrder {
    /// The mechanical system.
    pub sys: MbsSystem,
    lin: Linearisation,
    e: Vec<f64>,
    w: Vec<f64>,
}

impl FirstOrder {
    /// Wraps `sys`.
    pub fn new(sys: MbsSystem) -> Self {
        let (nr, nv) = (sys.n_r(), sys.n_v());
        Self {
            lin: Linearisation::new(nr, sys.pattern()),
            e: vec![0.0; nr],
            w: vec![0.0; nv],
            sys,
        }
    }

    /// Number of position coordinates (y = (r, v)).
    pub fn n_r(&self) -> usize {
        self.sys.n_r()
    }
}

impl OdeSystem for FirstOrder {
    fn dim(&self) -> usize {
        self.sys.n_r() + self.sys.n_v()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        let nr = self.sys.n_r();
        let (r, v) = y.split_at(nr);
        let (dr, dv) = dy.split_at_mut(nr);
        self.sys.kinematics(r, v, dr);
        self.sys.accelerations(t, r, v, dv);
    }

    fn jacobian(&mut self, t: f64, y: &[f64], mut jac: MatMut<'_, f64>) -> bool {
        let (nr, nv) = (self.sys.n_r(), self.sys.n_v());
        let (r, v) = y.split_at(nr);
        self.sys.linearise(t, r, v, &mut self.lin);
        jac.fill(0.0);
        // Blocks of v: the bodies (6 each, with 7 position coordinates), then element states.
        let nb = nv / 6;
        for b in 0..nr / 7 {
            // ∂(K v)/∂r and K for body b.
            for k in 0..3 {
                jac[(7 * b + k, nr + 6 * b + k)] = 1.0;
            }
            let q = &r[7 * b + 3..7 * b + 7];
            let (wx, wy, wz) = (v[6 * b + 3], v[6 * b + 4], v[6 * b + 5]);
            let rw = [
                [0.0, -wx, -wy, -wz],
                [wx, 0.0, wz, -wy],
                [wy, -wz, 0.0, wx],
                [wz, wy, -wx, 0.0],
            ];
            let xi = [
                [-q[1], -q[2], -q[3]],
                [q[0], -q[3], q[2]],
                [q[3], q[0], -q[1]],
                [-q[2], q[1], q[0]],
            ];
            for i in 0..4 {
                for j in 0..4 {
                    jac[(7 * b + 3 + i, 7 * b + 3 + j)] = 0.5 * rw[i][j];
                }
                for j in 0..3 {
                    jac[(7 * b + 3 + i, nr + 6 * b + 3 + j)] = 0.5 * xi[i][j];
                }
            }
        }
        // J_v.
        for bi in 0..nb {
            let p = self.lin.j_v.pattern().clone();
            for s in p.row_ptr()[bi]..p.row_ptr()[bi + 1] {
                let bj = p.col_idx()[s];
                let blk = self.lin.j_v.block(s);
                for i in 0..6 {
                    for j in 0..6 {
                        jac[(nr + 6 * bi + i, nr + 6 * bj + j)] = blk[6 * i + j];
                    }
                }
            }
        }
        // J_r = (J_r K) L, column by column through the tangent map.
        for k in 0..nr {
            self.e.fill(0.0);
            self.e[k] = 1.0;
            self.sys.tangent(r, &self.e, &mut self.w);
            let b = k / 7;
            let p = self.lin.j_rk.pattern().clone();
            for bi in 0..nb {
                if let Some(s) = p.slot(bi, b) {
                    let blk = self.lin.j_rk.block(s);
                    for i in 0..6 {
                        let mut acc = 0.0;
                        for j in 0..6 {
                            acc += blk[6 * i + j] * self.w[6 * b + j];
                        }
                        jac[(nr + 6 * bi + i, k)] = acc;
                    }
                }
            }
        }
        true
    }

    fn project(&mut self, y: &mut [f64]) {
        let nr = self.sys.n_r();
        self.sys.project(&mut y[..nr]);
    }
}
