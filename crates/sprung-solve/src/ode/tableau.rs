//! Coefficient tables of the explicit Runge–Kutta and Rosenbrock methods (published values, see
//! `integrators.md`), conversions between the classical and the transformed Rosenbrock form, and
//! order-condition / stability checks used by the unit tests.
//!
//! Rosenbrock conventions (Hairer & Wanner II, IV.7):
//! * classical: `(I - γ h J) k_i = h f(t0 + α_i h, y0 + Σ α_ij k_j) + h J Σ_{j<i} γ_ij k_j + h² γ_i f_t`,
//!   `y1 = y0 + Σ b_i k_i`;
//! * transformed (used by the code): `(I/(γh) - J) u_i = f(t0 + c_i h, y0 + Σ a_ij u_j)
//!   + Σ (C_ij/h) u_j + h d_i f_t`, `y1 = y0 + Σ m_i u_i`, with `u = Γ k`, `a = αΓ⁻¹`,
//!   `C = diag(1/γ) - Γ⁻¹`, `m = bΓ⁻¹`, `c_i = Σ_j α_ij`, `d_i = Σ_j γ_ij` (diagonal included).

/// Explicit Runge–Kutta tableau with optional embedded weights.
#[derive(Clone, Debug)]
pub struct ExplicitTableau {
    /// Nodes.
    pub c: Vec<f64>,
    /// Strictly lower coefficient rows: `a[i]` has `i` entries.
    pub a: Vec<Vec<f64>>,
    /// Weights of the propagated solution.
    pub b: Vec<f64>,
    /// Embedded weights for the error estimate.
    pub bhat: Option<Vec<f64>>,
    /// Order of `b`.
    pub order: usize,
    /// Order of `bhat` (error estimate behaves like `h^(min(order, est_order)+1)`).
    pub est_order: usize,
    /// Last stage is evaluated at the new solution (first same as last).
    pub fsal: bool,
}

impl ExplicitTableau {
    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.b.len()
    }
    /// The same tableau without embedded estimate (fixed-step use).
    pub fn without_estimate(mut self) -> Self {
        self.bhat = None;
        self
    }
}

fn lower(rows: &[&[f64]]) -> Vec<Vec<f64>> {
    rows.iter().map(|r| r.to_vec()).collect()
}

/// Explicit Euler (ode1).
pub fn euler() -> ExplicitTableau {
    ExplicitTableau {
        c: vec![0.0],
        a: vec![vec![]],
        b: vec![1.0],
        bhat: None,
        order: 1,
        est_order: 0,
        fsal: false,
    }
}

/// Heun's method (ode2).
pub fn heun() -> ExplicitTableau {
    ExplicitTableau {
        c: vec![0.0, 1.0],
        a: lower(&[&[], &[1.0]]),
        b: vec![0.5, 0.5],
        bhat: None,
        order: 2,
        est_order: 0,
        fsal: false,
    }
}

/// Classical Runge–Kutta (ode4).
pub fn rk4() -> ExplicitTableau {
    ExplicitTableau {
        c: vec![0.0, 0.5, 0.5, 1.0],
        a: lower(&[&[], &[0.5], &[0.0, 0.5], &[0.0, 0.0, 1.0]]),
        b: vec![1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
        bhat: None,
        order: 4,
        est_order: 0,
        fsal: false,
    }
}

/// Bogacki–Shampine 3(2), FSAL (ode23 / ode3).
pub fn bs3() -> ExplicitTableau {
    ExplicitTableau {
        c: vec![0.0, 0.5, 0.75, 1.0],
        a: lower(&[
            &[],
            &[0.5],
            &[0.0, 0.75],
            &[2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0],
        ]),
        b: vec![2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0, 0.0],
        bhat: Some(vec![7.0 / 24.0, 0.25, 1.0 / 3.0, 0.125]),
        order: 3,
        est_order: 2,
        fsal: true,
    }
}

/// Dormand–Prince 5(4), FSAL (ode45 / ode5).
pub fn dopri5() -> ExplicitTableau {
    // 5th-order weights; FSAL: they are also the last row of `a` (the 7th stage is f(t + h, y1))
    const B: [f64; 6] = [
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ];
    ExplicitTableau {
        c: vec![0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0],
        a: lower(&[
            &[],
            &[0.2],
            &[3.0 / 40.0, 9.0 / 40.0],
            &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
            &[
                19372.0 / 6561.0,
                -25360.0 / 2187.0,
                64448.0 / 6561.0,
                -212.0 / 729.0,
            ],
            &[
                9017.0 / 3168.0,
                -355.0 / 33.0,
                46732.0 / 5247.0,
                49.0 / 176.0,
                -5103.0 / 18656.0,
            ],
            &B,
        ]),
        b: [&B[..], &[0.0]].concat(),
        bhat: Some(vec![
            5179.0 / 57600.0,
            0.0,
            7571.0 / 16695.0,
            393.0 / 640.0,
            -92097.0 / 339200.0,
            187.0 / 2100.0,
            1.0 / 40.0,
        ]),
        order: 5,
        est_order: 4,
        fsal: true,
    }
}

/// Prince & Dormand RK8(7)13M (1981): 13 stages, eighth-order propagation, seventh-order
/// embedded solution (ode8). The published rational coefficients.
pub fn dp87() -> ExplicitTableau {
    ExplicitTableau {
        c: vec![
            0.0,
            1.0 / 18.0,
            1.0 / 12.0,
            1.0 / 8.0,
            5.0 / 16.0,
            3.0 / 8.0,
            59.0 / 400.0,
            93.0 / 200.0,
            5490023248.0 / 9719169821.0,
            13.0 / 20.0,
            1201146811.0 / 1299019798.0,
            1.0,
            1.0,
        ],
        a: lower(&[
            &[],
            &[1.0 / 18.0],
            &[1.0 / 48.0, 1.0 / 16.0],
            &[1.0 / 32.0, 0.0, 3.0 / 32.0],
            &[5.0 / 16.0, 0.0, -75.0 / 64.0, 75.0 / 64.0],
            &[3.0 / 80.0, 0.0, 0.0, 3.0 / 16.0, 3.0 / 20.0],
            &[
                29443841.0 / 614563906.0,
                0.0,
                0.0,
                77736538.0 / 692538347.0,
                -28693883.0 / 1125000000.0,
                23124283.0 / 1800000000.0,
            ],
            &[
                16016141.0 / 946692911.0,
                0.0,
                0.0,
                61564180.0 / 158732637.0,
                22789713.0 / 633445777.0,
                545815736.0 / 2771057229.0,
                -180193667.0 / 1043307555.0,
            ],
            &[
                39632708.0 / 573591083.0,
                0.0,
                0.0,
                -433636366.0 / 683701615.0,
                -421739975.0 / 2616292301.0,
                100302831.0 / 723423059.0,
                790204164.0 / 839813087.0,
                800635310.0 / 3783071287.0,
            ],
            &[
                246121993.0 / 1340847787.0,
                0.0,
                0.0,
                -37695042795.0 / 15268766246.0,
                -309121744.0 / 1061227803.0,
                -12992083.0 / 490766935.0,
                6005943493.0 / 2108947869.0,
                393006217.0 / 1396673457.0,
                123872331.0 / 1001029789.0,
            ],
            &[
                -1028468189.0 / 846180014.0,
                0.0,
                0.0,
                8478235783.0 / 508512852.0,
                1311729495.0 / 1432422823.0,
                -10304129995.0 / 1701304382.0,
                -48777925059.0 / 3047939560.0,
                15336726248.0 / 1032824649.0,
                -45442868181.0 / 3398467696.0,
                3065993473.0 / 597172653.0,
            ],
            &[
                185892177.0 / 718116043.0,
                0.0,
                0.0,
                -3185094517.0 / 667107341.0,
                -477755414.0 / 1098053517.0,
                -703635378.0 / 230739211.0,
                5731566787.0 / 1027545527.0,
                5232866602.0 / 850066563.0,
                -4093664535.0 / 808688257.0,
                3962137247.0 / 1805957418.0,
                65686358.0 / 487910083.0,
            ],
            &[
                403863854.0 / 491063109.0,
                0.0,
                0.0,
                -5068492393.0 / 434740067.0,
                -411421997.0 / 543043805.0,
                652783627.0 / 914296604.0,
                11173962825.0 / 925320556.0,
                -13158990841.0 / 6184727034.0,
                3936647629.0 / 1978049680.0,
                -160528059.0 / 685178525.0,
                248638103.0 / 1413531060.0,
                0.0,
            ],
        ]),
        b: vec![
            14005451.0 / 335480064.0,
            0.0,
            0.0,
            0.0,
            0.0,
            -59238493.0 / 1068277825.0,
            181606767.0 / 758867731.0,
            561292985.0 / 797845732.0,
            -1041891430.0 / 1371343529.0,
            760417239.0 / 1151165299.0,
            118820643.0 / 751138087.0,
            -528747749.0 / 2220607170.0,
            0.25,
        ],
        bhat: Some(vec![
            13451932.0 / 455176623.0,
            0.0,
            0.0,
            0.0,
            0.0,
            -808719846.0 / 976000145.0,
            1757004468.0 / 5645159321.0,
            656045339.0 / 265891186.0,
            -3867574721.0 / 1518517206.0,
            465885868.0 / 322736535.0,
            53011238.0 / 667516719.0,
            2.0 / 45.0,
            0.0,
        ]),
        order: 8,
        est_order: 7,
        fsal: false,
    }
}

/// Rosenbrock tableau in transformed form (see module docs).
#[derive(Clone, Debug)]
pub struct RosenbrockTableau {
    /// Diagonal γ.
    pub gamma: f64,
    /// Stage coefficients `a` (strictly lower, `s × s`).
    pub a: Vec<Vec<f64>>,
    /// Coupling coefficients `C` (strictly lower, `s × s`).
    pub cmat: Vec<Vec<f64>>,
    /// Nodes `c_i = α_i`.
    pub c: Vec<f64>,
    /// Time-derivative coefficients `d_i = γ_i`.
    pub d: Vec<f64>,
    /// Weights of the propagated solution.
    pub m: Vec<f64>,
    /// Embedded weights, if any.
    pub mhat: Option<Vec<f64>>,
    /// Order of the propagated solution.
    pub order: usize,
    /// Order of the embedded solution.
    pub est_order: usize,
}

fn square(s: usize) -> Vec<Vec<f64>> {
    vec![vec![0.0; s]; s]
}

/// Inverse of a lower-triangular matrix.
fn lower_inverse(l: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let s = l.len();
    let mut inv = square(s);
    for col in 0..s {
        for i in col..s {
            let mut v = if i == col { 1.0 } else { 0.0 };
            for k in col..i {
                v -= l[i][k] * inv[k][col];
            }
            inv[i][col] = v / l[i][i];
        }
    }
    inv
}

fn vec_mat(v: &[f64], m: &[Vec<f64>]) -> Vec<f64> {
    let s = v.len();
    (0..s)
        .map(|j| (0..s).map(|i| v[i] * m[i][j]).sum())
        .collect()
}

fn mat_mat(a: &[Vec<f64>], b: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let s = a.len();
    let mut r = square(s);
    for i in 0..s {
        for j in 0..s {
            r[i][j] = (0..s).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

/// Classical form of a Rosenbrock method: `alpha` strictly lower, `gam` lower with diagonal γ.
#[derive(Clone, Debug)]
pub struct ClassicalRosenbrock {
    /// α (strictly lower).
    pub alpha: Vec<Vec<f64>>,
    /// Γ (lower, diagonal γ).
    pub gam: Vec<Vec<f64>>,
    /// Weights.
    pub b: Vec<f64>,
    /// Embedded weights.
    pub bhat: Option<Vec<f64>>,
}

impl RosenbrockTableau {
    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.m.len()
    }

    /// Builds the transformed form from the classical coefficients.
    pub fn from_classical(
        cl: &ClassicalRosenbrock,
        order: usize,
        est_order: usize,
    ) -> RosenbrockTableau {
        let s = cl.b.len();
        let gamma = cl.gam[0][0];
        let ginv = lower_inverse(&cl.gam);
        let a = mat_mat(&cl.alpha, &ginv);
        let mut cmat = square(s);
        for i in 0..s {
            for j in 0..i {
                cmat[i][j] = -ginv[i][j];
            }
        }
        RosenbrockTableau {
            gamma,
            a,
            cmat,
            c: cl.alpha.iter().map(|r| r.iter().sum()).collect(),
            d: cl.gam.iter().map(|r| r.iter().sum()).collect(),
            m: vec_mat(&cl.b, &ginv),
            mhat: cl.bhat.as_ref().map(|bh| vec_mat(bh, &ginv)),
            order,
            est_order,
        }
    }

    /// Converts back to the classical form.
    pub fn to_classical(&self) -> ClassicalRosenbrock {
        let s = self.stages();
        let mut ginv = square(s);
        for (i, row) in ginv.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate().take(i) {
                *v = -self.cmat[i][j];
            }
            row[i] = 1.0 / self.gamma;
        }
        let gam = lower_inverse(&ginv);
        let alpha = mat_mat(&self.a, &gam);
        ClassicalRosenbrock {
            alpha,
            b: vec_mat(&self.m, &gam),
            bhat: self.mhat.as_ref().map(|mh| vec_mat(mh, &gam)),
            gam,
        }
    }
}

impl ClassicalRosenbrock {
    /// Residuals of the Rosenbrock order conditions up to order `p ≤ 4` for weights `b`
    /// (Hairer & Wanner II, Table IV.7.1).
    pub fn order_residuals(&self, b: &[f64], p: usize) -> Vec<f64> {
        let s = b.len();
        let g = self.gam[0][0];
        let beta: Vec<Vec<f64>> = (0..s)
            .map(|i| {
                (0..s)
                    .map(|j| {
                        if j < i {
                            self.alpha[i][j] + self.gam[i][j]
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        let al: Vec<f64> = self.alpha.iter().map(|r| r.iter().sum()).collect();
        let bp: Vec<f64> = beta.iter().map(|r| r.iter().sum()).collect();
        let sum = |f: &dyn Fn(usize) -> f64| (0..s).map(f).sum::<f64>();
        let mut r = vec![sum(&|i| b[i]) - 1.0];
        if p >= 2 {
            r.push(sum(&|i| b[i] * bp[i]) - (0.5 - g));
        }
        if p >= 3 {
            r.push(sum(&|i| b[i] * al[i] * al[i]) - 1.0 / 3.0);
            r.push(sum(&|i| b[i] * sum(&|j| beta[i][j] * bp[j])) - (1.0 / 6.0 - g + g * g));
        }
        if p >= 4 {
            r.push(sum(&|i| b[i] * al[i].powi(3)) - 0.25);
            r.push(
                sum(&|i| b[i] * al[i] * sum(&|j| self.alpha[i][j] * bp[j])) - (1.0 / 8.0 - g / 3.0),
            );
            r.push(sum(&|i| b[i] * sum(&|j| beta[i][j] * al[j] * al[j])) - (1.0 / 12.0 - g / 3.0));
            r.push(
                sum(&|i| b[i] * sum(&|j| beta[i][j] * sum(&|k| beta[j][k] * bp[k])))
                    - (1.0 / 24.0 - g / 2.0 + 1.5 * g * g - g * g * g),
            );
        }
        r
    }

    /// Stability function at infinity `R(∞) = 1 - bᵀ(α + Γ)⁻¹𝟙` for weights `b`.
    pub fn r_infinity(&self, b: &[f64]) -> f64 {
        let s = b.len();
        let mut bm = square(s);
        for i in 0..s {
            for j in 0..=i {
                bm[i][j] = self.alpha[i][j] + self.gam[i][j];
            }
        }
        let inv = lower_inverse(&bm);
        let w: f64 = (0..s)
            .map(|i| b[i] * (0..s).map(|j| inv[i][j]).sum::<f64>())
            .sum();
        1.0 - w
    }
}

fn classical(
    gamma: f64,
    alpha: &[&[f64]],
    goff: &[&[f64]],
    b: &[f64],
    bhat: Option<&[f64]>,
) -> ClassicalRosenbrock {
    let s = b.len();
    let mut al = square(s);
    let mut ga = square(s);
    for i in 0..s {
        for j in 0..i {
            al[i][j] = alpha[i][j];
            ga[i][j] = goff[i][j];
        }
        ga[i][i] = gamma;
    }
    ClassicalRosenbrock {
        alpha: al,
        gam: ga,
        b: b.to_vec(),
        bhat: bhat.map(|v| v.to_vec()),
    }
}

/// Linear-implicit Euler: `(I - hJ) k = h f(y0)`, order 1, fixed step only.
pub fn lin_impl_euler() -> RosenbrockTableau {
    RosenbrockTableau::from_classical(&classical(1.0, &[&[]], &[&[]], &[1.0], None), 1, 0)
}

/// LSRT2 (Bursi et al. 2008; document 000 Table 1), order 2, fixed step only.
pub fn lsrt2() -> RosenbrockTableau {
    let g = 1.0 - std::f64::consts::SQRT_2 / 2.0;
    RosenbrockTableau::from_classical(
        &classical(g, &[&[], &[0.5]], &[&[], &[-g]], &[0.0, 1.0], None),
        2,
        0,
    )
}

/// ROS2 (Verwer 1999), order 2(1).
pub fn ros2() -> RosenbrockTableau {
    let g = 1.0 + 1.0 / std::f64::consts::SQRT_2;
    RosenbrockTableau::from_classical(
        &classical(
            g,
            &[&[], &[1.0]],
            &[&[], &[-2.0 * g]],
            &[0.5, 0.5],
            Some(&[1.0, 0.0]),
        ),
        2,
        1,
    )
}

/// ROS3P (Lang & Verwer 2001), order 3(2), given in transformed form. The published embedded
/// weights satisfy the order-3 condition of linear problems, so the error estimate vanishes to
/// leading order on linear constant-coefficient problems (set `max_step` there).
pub fn ros3p() -> RosenbrockTableau {
    let gamma = 0.5 + 3f64.sqrt() / 6.0;
    let g = 1.0 / gamma;
    let t = -g * (2.0 - g / 2.0);
    let t2 = g * (2.0 / 3.0 - g / 6.0);
    RosenbrockTableau {
        gamma,
        a: vec![vec![0.0; 3], vec![g, 0.0, 0.0], vec![g, 0.0, 0.0]],
        cmat: vec![
            vec![0.0; 3],
            vec![-g * g, 0.0, 0.0],
            vec![-g * (1.0 - t), t, 0.0],
        ],
        c: vec![0.0, 1.0, 1.0],
        d: vec![0.7886751345948129, -0.2113248654051871, -1.077350269189626],
        m: vec![g * (1.0 + t2), t2, g / 3.0],
        mhat: Some(vec![2.113248654051871, 1.0, 0.4226497308103742]),
        order: 3,
        est_order: 2,
    }
}

/// ROS34PW2 (Rang & Angermann 2005), order 3(2), W-method.
pub fn ros34pw2() -> RosenbrockTableau {
    RosenbrockTableau::from_classical(
        &classical(
            0.43586652150845900,
            &[
                &[],
                &[0.87173304301691801],
                &[0.84457060015369423, -0.11299064236484185],
                &[0.0, 0.0, 1.0],
            ],
            &[
                &[],
                &[-0.87173304301691801],
                &[-0.90338057013044082, 0.054180672388095326],
                &[
                    0.24212380706095346,
                    -1.2232505839045147,
                    0.54526025533510214,
                ],
            ],
            &[
                0.24212380706095346,
                -1.2232505839045147,
                1.5452602553351020,
                0.43586652150845900,
            ],
            Some(&[
                0.37810903145819369,
                -0.096042292212423178,
                0.5,
                0.21793326075422950,
            ]),
        ),
        3,
        2,
    )
}

/// RODAS3 (Sandu et al. 1997), order 3(2).
pub fn rodas3() -> RosenbrockTableau {
    RosenbrockTableau::from_classical(
        &classical(
            0.5,
            &[&[], &[0.0], &[1.0, 0.0], &[0.75, -0.25, 0.5]],
            &[
                &[],
                &[1.0],
                &[-0.25, -0.25],
                &[1.0 / 12.0, 1.0 / 12.0, -2.0 / 3.0],
            ],
            &[5.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0, 0.5],
            Some(&[0.75, -0.25, 0.5, 0.0]),
        ),
        3,
        2,
    )
}

fn pad(rows: &[&[f64]], s: usize) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            let mut v = r.to_vec();
            v.resize(s, 0.0);
            v
        })
        .collect()
}

/// RODAS4 (Hairer & Wanner), transformed form, order 4(3), stiffly accurate.
pub fn rodas4() -> RosenbrockTableau {
    let a5: [f64; 4] = [
        1.221224509226641,
        6.019134481288629,
        12.53708332932087,
        -0.687886036105895,
    ];
    let a6 = [a5[0], a5[1], a5[2], a5[3], 1.0];
    RosenbrockTableau {
        gamma: 0.25,
        a: pad(
            &[
                &[],
                &[1.544],
                &[0.9466785280815826, 0.2557011698983284],
                &[3.314825187068521, 2.896124015972201, 0.9986419139977817],
                &a5,
                &a6,
            ],
            6,
        ),
        cmat: pad(
            &[
                &[],
                &[-5.6688],
                &[-2.430093356833875, -0.2063599157091915],
                &[-0.1073529058151375, -9.594562251023355, -20.47028614809616],
                &[
                    7.496443313967647,
                    -10.24680431464352,
                    -33.99990352819905,
                    11.7089089320616,
                ],
                &[
                    8.083246795921522,
                    -7.981132988064893,
                    -31.52159432874371,
                    16.31930543123136,
                    -6.058818238834054,
                ],
            ],
            6,
        ),
        c: vec![0.0, 0.386, 0.21, 0.63, 1.0, 1.0],
        d: vec![0.25, -0.1043, 0.1035, -0.0362, 0.0, 0.0],
        m: vec![a6[0], a6[1], a6[2], a6[3], a6[4], 1.0],
        mhat: Some(vec![a6[0], a6[1], a6[2], a6[3], a6[4], 0.0]),
        order: 4,
        est_order: 3,
    }
}

/// Rodas5P (Steinebach 2023), transformed form, order 5(4), stiffly accurate.
pub fn rodas5p() -> RosenbrockTableau {
    let a6: [f64; 5] = [
        -7.502846399306121,
        2.561846144803919,
        -11.627539656261098,
        -0.18268767659942256,
        0.030198172008377946,
    ];
    let a7 = [a6[0], a6[1], a6[2], a6[3], a6[4], 1.0];
    let a8 = [a6[0], a6[1], a6[2], a6[3], a6[4], 1.0, 1.0];
    RosenbrockTableau {
        gamma: 0.21193756319429014,
        a: pad(
            &[
                &[],
                &[3.0],
                &[2.849394379747939, 0.45842242204463923],
                &[-6.954028509809101, 2.489845061869568, -10.358996098473584],
                &[
                    2.8029986275628964,
                    0.5072464736228206,
                    -0.3988312541770524,
                    -0.04721187230404641,
                ],
                &a6,
                &a7,
                &a8,
            ],
            8,
        ),
        cmat: pad(
            &[
                &[],
                &[-14.155112264123755],
                &[-17.97296035885952, -2.859693295451294],
                &[147.12150275711716, -1.41221402718213, 71.68940251302358],
                &[
                    165.43517024871676,
                    -0.4592823456491126,
                    42.90938336958603,
                    -5.961986721573306,
                ],
                &[
                    24.854864614690072,
                    -3.0009227002832186,
                    47.4931110020768,
                    5.5814197821558125,
                    -0.6610691825249471,
                ],
                &[
                    30.91273214028599,
                    -3.1208243349937974,
                    77.79954646070892,
                    34.28646028294783,
                    -19.097331116725623,
                    -28.087943162872662,
                ],
                &[
                    37.80277123390563,
                    -3.2571969029072276,
                    112.26918849496327,
                    66.9347231244047,
                    -40.06618937091002,
                    -54.66780262877968,
                    -9.48861652309627,
                ],
            ],
            8,
        ),
        c: vec![
            0.0,
            0.6358126895828704,
            0.4095798393397535,
            0.9769306725060716,
            0.4288403609558664,
            1.0,
            1.0,
            1.0,
        ],
        d: vec![
            0.21193756319429014,
            -0.42387512638858027,
            -0.3384627126235924,
            1.8046452872882734,
            2.325825639765069,
            0.0,
            0.0,
            0.0,
        ],
        m: vec![a8[0], a8[1], a8[2], a8[3], a8[4], a8[5], a8[6], 1.0],
        mhat: Some(vec![a8[0], a8[1], a8[2], a8[3], a8[4], a8[5], a8[6], 0.0]),
        order: 5,
        est_order: 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_explicit(t: &ExplicitTableau, b: &[f64], p: usize, tol: f64) {
        let s = b.len();
        // row sums
        for i in 0..s {
            let rs: f64 = t.a[i].iter().sum();
            assert!((rs - t.c[i]).abs() < 1e-12, "row sum {i}");
        }
        // quadrature conditions Σ b c^(k-1) = 1/k
        for k in 1..=p {
            let v: f64 = (0..s).map(|i| b[i] * t.c[i].powi(k as i32 - 1)).sum();
            assert!((v - 1.0 / k as f64).abs() < tol, "quadrature k={k}: {v}");
        }
        // Σ b_i a_ij c_j^(k) = 1/((k+1)(k+2)), k = 0..p-2
        for k in 0..p.saturating_sub(1) {
            let v: f64 = (0..s)
                .map(|i| {
                    b[i] * (0..i)
                        .map(|j| t.a[i][j] * t.c[j].powi(k as i32))
                        .sum::<f64>()
                })
                .sum();
            let exact = 1.0 / ((k + 1) * (k + 2)) as f64;
            assert!((v - exact).abs() < tol, "bAc^{k}: {v} vs {exact}");
        }
        // order 4 trees
        if p >= 4 {
            let ac: Vec<f64> = (0..s)
                .map(|i| (0..i).map(|j| t.a[i][j] * t.c[j]).sum())
                .collect();
            let v: f64 = (0..s).map(|i| b[i] * t.c[i] * ac[i]).sum();
            assert!((v - 1.0 / 8.0).abs() < tol);
            let v: f64 = (0..s)
                .map(|i| b[i] * (0..i).map(|j| t.a[i][j] * ac[j]).sum::<f64>())
                .sum();
            assert!((v - 1.0 / 24.0).abs() < tol);
        }
    }

    #[test]
    fn explicit_tableaux_satisfy_order_conditions() {
        check_explicit(&euler(), &euler().b, 1, 1e-14);
        check_explicit(&heun(), &heun().b, 2, 1e-14);
        check_explicit(&rk4(), &rk4().b, 4, 1e-14);
        let t = bs3();
        check_explicit(&t, &t.b, 3, 1e-14);
        check_explicit(&t, t.bhat.as_ref().unwrap(), 2, 1e-14);
        let t = dopri5();
        check_explicit(&t, &t.b, 5, 1e-14);
        check_explicit(&t, t.bhat.as_ref().unwrap(), 4, 1e-14);
        let t = dp87();
        // the published coefficients are rational approximations (~1e-18 relative)
        check_explicit(&t, &t.b, 8, 1e-12);
        check_explicit(&t, t.bhat.as_ref().unwrap(), 7, 1e-12);
    }

    fn check_ros(t: &RosenbrockTableau, r_inf: Option<f64>) {
        let cl = t.to_classical();
        let p = t.order.min(4);
        for (k, r) in cl.order_residuals(&cl.b, p).iter().enumerate() {
            assert!(r.abs() < 1e-9, "order condition {k}: residual {r}");
        }
        if let Some(bh) = &cl.bhat {
            for (k, r) in cl
                .order_residuals(bh, t.est_order.min(4))
                .iter()
                .enumerate()
            {
                assert!(r.abs() < 1e-9, "embedded order condition {k}: residual {r}");
            }
            // the embedded method must not also have the full order (estimate would vanish)
            if t.est_order < 4 {
                let full = cl.order_residuals(bh, t.est_order + 1);
                assert!(full.iter().any(|r| r.abs() > 1e-6));
            }
        }
        // consistency of nodes / d
        for i in 0..t.stages() {
            let ai: f64 = cl.alpha[i].iter().sum();
            let gi: f64 = cl.gam[i].iter().sum();
            assert!((ai - t.c[i]).abs() < 1e-9, "c_{i}: {ai} vs {}", t.c[i]);
            assert!((gi - t.d[i]).abs() < 1e-9, "d_{i}: {gi} vs {}", t.d[i]);
        }
        if let Some(r) = r_inf {
            let v = cl.r_infinity(&cl.b);
            assert!((v - r).abs() < 1e-9, "R(inf) = {v}, expected {r}");
        }
    }

    #[test]
    fn rosenbrock_tableaux_satisfy_order_conditions_and_r_infinity() {
        check_ros(&lin_impl_euler(), Some(0.0));
        check_ros(&lsrt2(), Some(0.0));
        check_ros(&ros2(), Some(0.0));
        check_ros(&ros3p(), None);
        check_ros(&ros34pw2(), Some(0.0));
        check_ros(&rodas3(), Some(0.0));
        check_ros(&rodas4(), Some(0.0));
        check_ros(&rodas5p(), Some(0.0));
    }

    #[test]
    fn ros3p_r_infinity_matches_a_stable_value() {
        // ROS3P is A-stable but not L-stable: |R(∞)| < 1.
        let cl = ros3p().to_classical();
        let r = cl.r_infinity(&cl.b);
        assert!(r.abs() < 1.0 && r.abs() > 1e-3, "R(inf) = {r}");
    }

    #[test]
    fn classical_transformed_round_trip() {
        let t = ros34pw2();
        let back = RosenbrockTableau::from_classical(&t.to_classical(), 3, 2);
        for i in 0..4 {
            assert!((back.m[i] - t.m[i]).abs() < 1e-12);
            for j in 0..i {
                assert!((back.a[i][j] - t.a[i][j]).abs() < 1e-12);
                assert!((back.cmat[i][j] - t.cmat[i][j]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn lsrt2_stability_function_matches_document() {
        // R(z) = (1 + (√2 - 1) z)/(1 - γ z)²  evaluated at z = -3.
        let cl = lsrt2().to_classical();
        let z = -3.0;
        let s = 2;
        // R(z) = 1 + z bᵀ (I - zB)⁻¹ 𝟙
        let mut m = vec![vec![0.0; s]; s];
        for i in 0..s {
            for j in 0..=i {
                m[i][j] = -z * (cl.alpha[i][j] + cl.gam[i][j]);
            }
            m[i][i] += 1.0;
        }
        let inv = lower_inverse(&m);
        let r = 1.0
            + z * (0..s)
                .map(|i| cl.b[i] * inv[i].iter().sum::<f64>())
                .sum::<f64>();
        let g = 1.0 - 2f64.sqrt() / 2.0;
        let exact = (1.0 + (2f64.sqrt() - 1.0) * z) / (1.0 - g * z).powi(2);
        assert!((r - exact).abs() < 1e-14);
    }

    /// Rooted tree: the list of its children.
    #[derive(Clone, Debug, PartialEq)]
    struct Tree(Vec<Tree>);

    impl Tree {
        fn order(&self) -> usize {
            1 + self.0.iter().map(Tree::order).sum::<usize>()
        }
        /// Density γ(t) = |t| · Π γ(t_k).
        fn density(&self) -> f64 {
            self.order() as f64 * self.0.iter().map(Tree::density).product::<f64>()
        }
    }

    /// All rooted trees of order `n` (children as non-increasing sequences of tree indices, so
    /// every tree appears once).
    fn trees(n: usize, all: &mut Vec<Vec<Tree>>) {
        // all[k] holds the trees of order k (k < n)
        fn forests(
            rest: usize,
            max_order: usize,
            max_idx: usize,
            all: &[Vec<Tree>],
            cur: &mut Vec<Tree>,
            out: &mut Vec<Tree>,
        ) {
            if rest == 0 {
                out.push(Tree(cur.clone()));
                return;
            }
            for o in (1..=rest.min(max_order)).rev() {
                let lim = if o == max_order {
                    max_idx.min(all[o].len())
                } else {
                    all[o].len()
                };
                for i in 0..lim {
                    cur.push(all[o][i].clone());
                    forests(rest - o, o, i + 1, all, cur, out);
                    cur.pop();
                }
            }
        }
        let mut out = Vec::new();
        forests(n - 1, n - 1, usize::MAX, all, &mut Vec::new(), &mut out);
        all.push(out);
    }

    /// Elementary weight of a Rosenbrock method (Hairer & Wanner II, IV.7, Theorem 7.3 in the
    /// form without simplification): `Φ(τ) = 𝟙`; for a node with a single child `Φ = (α + Γ)Φ(t₁)`
    /// (the Jacobian acts, Γ with its diagonal); for `m ≥ 2` children `Φ = Π_k αΦ(t_k)`
    /// component-wise. Order `p` iff `bᵀΦ(t) = 1/γ(t)` for all trees with `|t| ≤ p`.
    fn phi(cl: &ClassicalRosenbrock, t: &Tree) -> Vec<f64> {
        let s = cl.b.len();
        let mv = |m: &dyn Fn(usize, usize) -> f64, v: &[f64]| -> Vec<f64> {
            (0..s)
                .map(|i| (0..=i).map(|j| m(i, j) * v[j]).sum())
                .collect()
        };
        if t.0.is_empty() {
            return vec![1.0; s];
        }
        if t.0.len() == 1 {
            let c = phi(cl, &t.0[0]);
            return mv(&|i, j| cl.alpha[i][j] + cl.gam[i][j], &c);
        }
        let mut r = vec![1.0; s];
        for child in &t.0 {
            let c = mv(&|i, j| cl.alpha[i][j], &phi(cl, child));
            for i in 0..s {
                r[i] *= c[i];
            }
        }
        r
    }

    /// Largest residual `|bᵀΦ(t) - 1/γ(t)|` over the trees of order `p` exactly.
    fn tree_residual(cl: &ClassicalRosenbrock, b: &[f64], p: usize) -> f64 {
        let mut all: Vec<Vec<Tree>> = vec![Vec::new(), vec![Tree(Vec::new())]];
        for n in 2..=p {
            trees(n, &mut all);
        }
        all[p]
            .iter()
            .map(|t| {
                let ph = phi(cl, t);
                let v: f64 = (0..b.len()).map(|i| b[i] * ph[i]).sum();
                (v - 1.0 / t.density()).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn tree_counts() {
        let mut all: Vec<Vec<Tree>> = vec![Vec::new(), vec![Tree(Vec::new())]];
        for n in 2..=6 {
            trees(n, &mut all);
        }
        let counts: Vec<usize> = all.iter().skip(1).map(Vec::len).collect();
        assert_eq!(counts, [1, 1, 2, 4, 9, 20]);
        assert!(all[5].iter().all(|t| t.order() == 5));
    }

    #[test]
    fn rosenbrock_tableaux_satisfy_tree_order_conditions() {
        // Independent of `order_residuals` (which lists the conditions of Table IV.7.1 up to
        // order 4 in simplified form): the elementary weights are built from the trees, so this
        // checks Rodas5P's order-5 conditions too (the published coefficients, Steinebach 2023,
        // as printed in OrdinaryDiffEq.jl's Rodas5PTableau, reproduced digit for digit).
        for (name, t) in [
            ("lie", lin_impl_euler()),
            ("lsrt2", lsrt2()),
            ("ros2", ros2()),
            ("ros3p", ros3p()),
            ("ros34pw2", ros34pw2()),
            ("rodas3", rodas3()),
            ("rodas4", rodas4()),
            ("rodas5p", rodas5p()),
        ] {
            let cl = t.to_classical();
            for p in 1..=t.order {
                let r = tree_residual(&cl, &cl.b, p);
                // coefficients are printed with 16 digits; sums of products of entries up to
                // ~100 (rodas5p's C) lose about 3 digits
                assert!(r < 1e-10, "{name}: order-{p} trees, residual {r:e}");
            }
            // the order is not higher than claimed (else the embedded estimate would be off)
            let r = tree_residual(&cl, &cl.b, t.order + 1);
            assert!(
                r > 1e-6,
                "{name}: order {} conditions hold too",
                t.order + 1
            );
            if let Some(bh) = &cl.bhat {
                for p in 1..=t.est_order {
                    let r = tree_residual(&cl, bh, p);
                    assert!(
                        r < 1e-10,
                        "{name} embedded: order-{p} trees, residual {r:e}"
                    );
                }
            }
        }
    }
}
