//! Classical fourth-order Runge–Kutta on the mechanical system r' = K(r) v, v' = q(t, r, v)
//! (document 001: ode4). Explicit, so only suitable for non-stiff models or very small steps; used
//! as an independent check of the linear-implicit methods. Allocation-free after construction.

use super::MechanicalSystem;
use super::rosenbrock::{Stats, StepError, axpy, first_non_finite};

/// Fixed-step RK4 stepper.
pub struct Rk4Stepper {
    kr: [Vec<f64>; 4],
    kv: [Vec<f64>; 4],
    r_st: Vec<f64>,
    v_st: Vec<f64>,
    /// Step size, s.
    pub h: f64,
    /// Start time, s.
    pub t0: f64,
    /// Work counters.
    pub stats: Stats,
}

impl Rk4Stepper {
    /// Creates the stepper.
    pub fn new<S: MechanicalSystem + ?Sized>(sys: &S, h: f64, t0: f64) -> Self {
        let (nr, nv) = (sys.n_r(), sys.n_v());
        Self {
            kr: std::array::from_fn(|_| vec![0.0; nr]),
            kv: std::array::from_fn(|_| vec![0.0; nv]),
            r_st: vec![0.0; nr],
            v_st: vec![0.0; nv],
            h,
            t0,
            stats: Stats::default(),
        }
    }

    /// Advances from step `k` to k + 1 in place.
    pub fn step<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &mut S,
        k: u64,
        r: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), StepError> {
        let h = self.h;
        let t = self.t0 + k as f64 * h;
        const C: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
        for (i, c) in C.iter().enumerate() {
            self.r_st.copy_from_slice(r);
            self.v_st.copy_from_slice(v);
            if i > 0 {
                axpy(c * h, &self.kr[i - 1], &mut self.r_st);
                axpy(c * h, &self.kv[i - 1], &mut self.v_st);
            }
            sys.kinematics(&self.r_st, &self.v_st, &mut self.kr[i]);
            sys.accelerations(t + c * h, &self.r_st, &self.v_st, &mut self.kv[i]);
            self.stats.q_evals += 1;
        }
        const B: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];
        for ((b, kr), kv) in B.iter().zip(&self.kr).zip(&self.kv) {
            axpy(b * h, kr, r);
            axpy(b * h, kv, v);
        }
        sys.project(r);
        self.stats.steps += 1;
        match first_non_finite(r, v) {
            Some(index) => Err(StepError::NonFinite {
                t: self.t0 + (k + 1) as f64 * h,
                index,
            }),
            None => Ok(()),
        }
    }
}
