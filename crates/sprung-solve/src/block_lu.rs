//! Block-sparse LU factorisation along the body-coupling graph.
//!
//! Source document 000, section 3: every stage of the LSRT2 step solves eq. (10), `A x = b`, with
//! `A = E - h γ J_v - (h γ)² J_r K` (eq. 11). The pattern of `A` is the body-coupling graph
//! (Bild 3): one dense 6 × 6 block per body on the diagonal, and an off-diagonal block wherever two
//! bodies are coupled by a force element. Eqs. (12)-(17) exploit this by eliminating the bodies in
//! a hand-chosen order that follows the topology of the axle (wheel carrier → spring/damper →
//! stabiliser, from both halves inwards): the Schur complements `Ã_ii` of eq. (14) and the reduced
//! right-hand sides of eq. (15) are formed, then the separator is solved (13) and the eliminated
//! bodies are recovered by back substitution (16), (17). The document notes that this partition
//! "is not necessarily the most efficient one" and that it is topology specific (section 4).
//!
//! [`BlockSparseLu`] is the general form of that procedure for any topology:
//!
//! * **Ordering.** A fill-reducing elimination order of the blocks is chosen once. Candidates
//!   are analysed symbolically — greedy minimum degree and greedy minimum fill (minimum
//!   deficiency), each with several deterministic tie-breaking rankings, and the natural order —
//!   and the one with the smallest exact flop count is kept.
//!   Any other order, e.g. document 000's hand partition, can be supplied through
//!   [`BlockSparseLu::with_order`]. Disconnected graphs and single blocks need no special case.
//! * **Symbolic factorisation.** The elimination is simulated on the block graph, giving the
//!   filled block pattern of `L` and `U` (the blocks `A_ij` that become non-zero through eq. 14),
//!   the list of Schur-complement updates of every step, and all numeric storage. Each step `k`
//!   owns one contiguous region `[A_kk | U_kj … | L_ikᵀ …]` (the `L` blocks are stored transposed so
//!   that every kernel works on contiguous rows), so the updates of step `k` write only
//!   to regions of later steps and borrow checking needs no copies or `unsafe`.
//! * **Numeric factorisation** ([`BlockSparseLu::factor`], allocation-free). Block Gaussian
//!   elimination in the chosen order without pivoting between blocks: for step `k`
//!   `P_k A_kk = L_k U_k` (partial pivoting inside the pivot block, transpositions stored per
//!   block), `U_kj = L_k⁻¹ P_k A_kj`, `L_ik = A_ik U_k⁻¹` and `A_ij ← A_ij - L_ik U_kj` for all
//!   later neighbours `i, j` — this is eq. (14) with `Ã_kk⁻¹ = U_k⁻¹ L_k⁻¹ P_k`. Block pivoting is
//!   not needed for the coefficient matrices of eq. (11), which are the identity plus the
//!   mass-scaled damping and stiffness terms `hγ M⁻¹C + (hγ)² M⁻¹K` of a mechanical system; a
//!   pivot block that is singular or not finite is reported with its body index (see
//!   [`SingularMatrix`] for the tolerance).
//! * **Solve** ([`BlockSparseLu::solve_in_place`], allocation-free, repeatable): forward
//!   substitution (eq. 15) followed by back substitution (eqs. 16, 17), working directly on the
//!   caller's vector in the original body numbering.
//!
//! # Performance
//!
//! For `b = 6` (rigid bodies; also `b = 3` and `b = 1`) the kernels are compiled with the block
//! size as a constant, so the compiler unrolls and vectorises the small loops; on x86-64 CPUs with
//! AVX2 and FMA (detected at run time) the 6 × 6 path uses hand-vectorised kernels instead
//! (module `avx6`: a block row is one 4-wide and one 2-wide register; pivot-block LU, panel
//! solves, Schur updates and substitutions with fused multiply-adds). Other block sizes use the
//! same code with run-time loop bounds.
//! [`BlockSparseLu::flops`] and [`BlockSparseLu::solve_flops`] give the exact operation counts
//! (the floor for the run time). For the 24-body double-wishbone pattern of the `lu` benchmark the
//! factorisation needs 52.6 kflop against 1.98 Mflop for dense LU of the 144 × 144 matrix, and a
//! solve 7.5 kflop against 41 kflop. Measured on the shared two-core development VM (x86-64 with
//! AVX2/FMA, moderate load), one LSRT2 step's linear algebra — a factorisation and two solves —
//! takes about 4.8 µs block-sparse (factorisation about 3.2 µs, solve about 0.8 µs; 6.6, 4.0 and
//! 1.2 µs with the compiler-vectorised FMA kernels used before the `avx6` ones) against about
//! 115 µs dense; see `benches/lu.rs`.

use crate::block::{BlockMatrix, BlockPattern};
pub use crate::dense::{LinearSolver, SingularMatrix};
use crate::dense::{pivot_ok, pivot_tolerance};

/// A user-supplied elimination order is not a permutation of the blocks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    /// The order has the wrong number of entries.
    #[error(
        "elimination order lists {got} blocks, the pattern has {expected}; list every block exactly once"
    )]
    WrongLength {
        /// Number of blocks of the pattern.
        expected: usize,
        /// Length of the order that was given.
        got: usize,
    },
    /// A block index is out of range or repeated.
    #[error(
        "elimination order entry {position} is block {block}, which is out of range or repeated; \
         the order must be a permutation of 0..{n_blocks}"
    )]
    NotAPermutation {
        /// Position in the order.
        position: usize,
        /// The offending block index.
        block: usize,
        /// Number of blocks of the pattern.
        n_blocks: usize,
    },
}

/// Which heuristic produced the elimination order in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderKind {
    /// Greedy minimum degree on the block graph.
    MinimumDegree,
    /// Greedy minimum fill (minimum deficiency) on the block graph.
    MinimumFill,
    /// Blocks in their original numbering.
    Natural,
    /// Supplied by the caller through [`BlockSparseLu::with_order`].
    User,
}

/// Sparse LU of a square block matrix with dense `b × b` blocks; see the module documentation.
#[derive(Debug, Clone)]
pub struct BlockSparseLu {
    pattern: BlockPattern,
    b: usize,
    n: usize,
    kind: OrderKind,
    /// `order[k]` = original block eliminated at step `k`.
    order: Vec<usize>,
    /// First block slot of the storage region of step `k` (length `n + 1`).
    region: Vec<usize>,
    /// `nbr[nbr_ptr[k]..nbr_ptr[k + 1]]`: original indices of the later neighbours `J(k)` of step
    /// `k` in the filled graph, sorted by elimination step.
    nbr_ptr: Vec<usize>,
    nbr: Vec<usize>,
    /// `upd[upd_ptr[k]..upd_ptr[k + 1]]`: for `a, c < m = |J(k)|`, entry `a * m + c` is
    /// `2 s + t`, where `s` is the block slot of `A_{J_a, J_c}`, which receives
    /// `-L_{J_a, k} U_{k, J_c}`, and `t = 1` if that slot is stored transposed (strictly lower).
    upd_ptr: Vec<usize>,
    upd: Vec<usize>,
    /// Block slot of every stored block of the input pattern (input slot order), as `2 s + t`
    /// with `t = 1` for slots stored transposed.
    scatter: Vec<usize>,
    /// Block slots created by fill-in, zeroed before each factorisation.
    fill: Vec<usize>,
    values: Vec<f64>,
    /// Row transpositions of the pivot blocks (`b` per step, LAPACK `ipiv` convention).
    ipiv: Vec<usize>,
    /// Reciprocals of the diagonals of the `U_k` (`b` per step).
    inv_diag: Vec<f64>,
    /// Whether the pivot block of step `k` exchanged any rows (else its `ipiv` is the identity).
    pivoted: Vec<bool>,
    tmp: Vec<f64>,
    flops: u64,
    solve_flops: u64,
    factored: bool,
    /// The CPU supports AVX2 and FMA (x86-64 only; selects the fused 6 × 6 kernels).
    avx2_fma: bool,
}

/// Block edge length (compile-time constant or run-time value) and the multiply-add flavour the
/// kernels are compiled with.
trait Dim: Copy {
    fn get(self) -> usize;
    /// `c + a b`.
    fn madd(self, a: f64, b: f64, c: f64) -> f64;
    /// `c - a b`.
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64;

    // The block kernels, generic by default; a block size with hand-vectorised kernels
    // overrides them.

    /// See [`lu_block`].
    #[inline(always)]
    fn lu_block(
        self,
        a: &mut [f64],
        ipiv: &mut [usize],
        inv: &mut [f64],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        lu_block(self, a, ipiv, inv, tol)
    }
    /// See [`unit_lower_solve`].
    #[inline(always)]
    fn unit_lower_solve(self, lu: &[f64], u: &mut [f64]) {
        unit_lower_solve(self, lu, u)
    }
    /// See [`upper_transposed_solve`].
    #[inline(always)]
    fn upper_transposed_solve(self, lu: &[f64], inv: &[f64], y: &mut [f64]) {
        upper_transposed_solve(self, lu, inv, y)
    }
    /// See [`gemm_tn_sub`].
    #[inline(always)]
    fn gemm_tn_sub(self, c: &mut [f64], p: &[f64], q: &[f64]) {
        gemm_tn_sub(self, c, p, q)
    }
    /// See [`gemv_t_sub`].
    #[inline(always)]
    fn gemv_t_sub(self, y: &mut [f64], a: &[f64], x: &[f64]) {
        gemv_t_sub(self, y, a, x)
    }
    /// `y ← y - Σ_k a_k x_{cols[k]}` for the row-major blocks `a_k` stored one after the other
    /// in `blocks` (one [`gemv_sub`] per block).
    #[inline(always)]
    fn gemv_rows_sub(self, y: &mut [f64], blocks: &[f64], cols: &[usize], x: &[f64]) {
        let b = self.get();
        for (a, &j) in blocks.chunks_exact(b * b).zip(cols) {
            gemv_sub(self, y, a, &x[j * b..(j + 1) * b]);
        }
    }
}

/// Constant block size, separate multiply and add (portable code path).
#[derive(Clone, Copy)]
struct Fixed<const B: usize>;

impl<const B: usize> Dim for Fixed<B> {
    #[inline(always)]
    fn get(self) -> usize {
        B
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        c + a * b
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        c - a * b
    }
}

/// Block size 6 with the hand-vectorised AVX2 + FMA kernels of [`avx6`]. Only constructed
/// inside functions compiled for (and called after run-time detection of) AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx6;

#[cfg(target_arch = "x86_64")]
impl Avx6 {
    #[inline(always)]
    fn b36(a: &[f64]) -> &[f64; 36] {
        a[..36].try_into().expect("6 x 6 block")
    }
    #[inline(always)]
    fn b36_mut(a: &mut [f64]) -> &mut [f64; 36] {
        (&mut a[..36]).try_into().expect("6 x 6 block")
    }
    #[inline(always)]
    fn v6(a: &[f64]) -> &[f64; 6] {
        a[..6].try_into().expect("6-vector")
    }
    #[inline(always)]
    fn v6_mut(a: &mut [f64]) -> &mut [f64; 6] {
        (&mut a[..6]).try_into().expect("6-vector")
    }
}

// SAFETY (all `unsafe` blocks of this impl): `Avx6` values exist only inside
// `factor6_avx2_fma` and `solve6_avx2_fma`, which run only after AVX2 and FMA were detected.
#[cfg(target_arch = "x86_64")]
impl Dim for Avx6 {
    #[inline(always)]
    fn get(self) -> usize {
        6
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        (-a).mul_add(b, c)
    }
    #[inline(always)]
    fn lu_block(
        self,
        a: &mut [f64],
        ipiv: &mut [usize],
        inv: &mut [f64],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        let ipiv: &mut [usize; 6] = (&mut ipiv[..6]).try_into().expect("6 pivots");
        unsafe { avx6::lu_block(Self::b36_mut(a), ipiv, Self::v6_mut(inv), tol) }
    }
    #[inline(always)]
    fn unit_lower_solve(self, lu: &[f64], u: &mut [f64]) {
        unsafe { avx6::unit_lower_solve(Self::b36(lu), Self::b36_mut(u)) }
    }
    #[inline(always)]
    fn upper_transposed_solve(self, lu: &[f64], inv: &[f64], y: &mut [f64]) {
        unsafe { avx6::upper_transposed_solve(Self::b36(lu), Self::v6(inv), Self::b36_mut(y)) }
    }
    #[inline(always)]
    fn gemm_tn_sub(self, c: &mut [f64], p: &[f64], q: &[f64]) {
        unsafe { avx6::gemm_tn_sub(Self::b36_mut(c), Self::b36(p), Self::b36(q)) }
    }
    #[inline(always)]
    fn gemv_t_sub(self, y: &mut [f64], a: &[f64], x: &[f64]) {
        unsafe { avx6::gemv_t_sub(Self::v6_mut(y), Self::b36(a), Self::v6(x)) }
    }
    #[inline(always)]
    fn gemv_rows_sub(self, y: &mut [f64], blocks: &[f64], cols: &[usize], x: &[f64]) {
        unsafe { avx6::gemv_rows_sub(Self::v6_mut(y), blocks, cols, x) }
    }
}

/// Run-time block size (any `b`).
#[derive(Clone, Copy)]
struct Dynamic(usize);

impl Dim for Dynamic {
    #[inline(always)]
    fn get(self) -> usize {
        self.0
    }
    #[inline(always)]
    fn madd(self, a: f64, b: f64, c: f64) -> f64 {
        c + a * b
    }
    #[inline(always)]
    fn nmadd(self, a: f64, b: f64, c: f64) -> f64 {
        c - a * b
    }
}

/// Result of the symbolic elimination of one order.
struct Symbolic {
    /// Later neighbours of each step, as steps (sorted).
    later: Vec<Vec<usize>>,
    flops: u64,
}

/// Flops of one `b × b` LU with partial pivoting (pivot search not counted).
fn lu_flops(b: u64) -> u64 {
    b + (0..b).map(|m| m + 2 * m * m).sum::<u64>()
}

/// Flops of one numeric factorisation for later-neighbour counts `m_k`.
fn factor_flops(b: u64, counts: impl Iterator<Item = usize>) -> u64 {
    let lower_panel = b * b * (b - b.min(1)); // L_k⁻¹ applied to b columns
    let upper_panel = b * b * b; // U_k⁻¹ applied to b rows
    let update = 2 * b * b * b;
    counts
        .map(|m| lu_flops(b) + m as u64 * (lower_panel + upper_panel) + (m * m) as u64 * update)
        .sum()
}

/// Flops of one solve for later-neighbour counts `m_k`.
fn solve_flops(b: u64, counts: impl Iterator<Item = usize>) -> u64 {
    counts
        .map(|m| b * (b - b.min(1)) + b * b + m as u64 * 4 * b * b)
        .sum()
}

/// Simulates the elimination of `order` on the block graph `adj` (dense boolean `n × n`).
fn symbolic(n: usize, b: usize, adj: &[bool], order: &[usize]) -> Symbolic {
    let mut g = vec![false; n * n];
    for i in 0..n {
        for j in 0..n {
            g[i * n + j] = adj[order[i] * n + order[j]];
        }
    }
    let mut later = Vec::with_capacity(n);
    for k in 0..n {
        let js: Vec<usize> = (k + 1..n).filter(|&j| g[k * n + j]).collect();
        for &i in &js {
            for &j in &js {
                g[i * n + j] = true;
            }
        }
        later.push(js);
    }
    let flops = factor_flops(b as u64, later.iter().map(Vec::len));
    Symbolic { later, flops }
}

/// Rearranges an elimination order level by level of its elimination tree (parent of step k: its
/// first later neighbour): first every leaf, then every step whose subtrees are done, and so on,
/// keeping the original order within a level. Any order in which each step follows its subtree
/// has the same filled pattern and flop count; this one puts independent subtrees (e.g. the two
/// halves of an axle) side by side, so that consecutive substitution steps of the solve do not
/// depend on each other and overlap in the processor.
fn by_elimination_level(order: &[usize], sym: &Symbolic) -> Vec<usize> {
    let n = order.len();
    let mut level = vec![0usize; n];
    for k in 0..n {
        if let Some(&parent) = sym.later[k].first() {
            level[parent] = level[parent].max(level[k] + 1);
        }
    }
    let mut steps: Vec<usize> = (0..n).collect();
    steps.sort_by_key(|&k| (level[k], k));
    steps.into_iter().map(|k| order[k]).collect()
}

/// SplitMix64 step (deterministic tie-break rankings).
fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Number of pseudo-random tie-break rankings tried by [`BlockSparseLu::new`].
const TIE_BREAK_TRIALS: usize = 16;

/// Largest block graph for which the pseudo-random tie-break rankings are tried.
const TIE_BREAK_LIMIT: usize = 100;

/// Greedy elimination order by minimum degree (`min_fill == false`) or minimum fill.
/// Ties are broken by smaller degree, then by smaller `rank`, so the result is deterministic.
fn greedy_order(n: usize, adj: &[bool], min_fill: bool, rank: &[usize]) -> Vec<usize> {
    let mut g = adj.to_vec();
    let mut alive = vec![true; n];
    let mut deg: Vec<usize> = (0..n)
        .map(|v| (0..n).filter(|&u| u != v && g[v * n + u]).count())
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut nb = Vec::with_capacity(n);
    for _ in 0..n {
        let mut best: Option<(usize, usize, usize, usize)> = None;
        for v in (0..n).filter(|&v| alive[v]) {
            let score = if min_fill {
                nb.clear();
                nb.extend((0..n).filter(|&u| u != v && alive[u] && g[v * n + u]));
                let mut missing = 0;
                for (x, &u) in nb.iter().enumerate() {
                    missing += nb[x + 1..].iter().filter(|&&w| !g[u * n + w]).count();
                }
                missing
            } else {
                deg[v]
            };
            let key = (score, deg[v], rank[v], v);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let v = best.expect("a live vertex remains").3;
        nb.clear();
        nb.extend((0..n).filter(|&u| u != v && alive[u] && g[v * n + u]));
        alive[v] = false;
        for &u in &nb {
            deg[u] -= 1;
        }
        for (x, &u) in nb.iter().enumerate() {
            for &w in &nb[x + 1..] {
                if !g[u * n + w] {
                    g[u * n + w] = true;
                    g[w * n + u] = true;
                    deg[u] += 1;
                    deg[w] += 1;
                }
            }
        }
        order.push(v);
    }
    order
}

/// Largest block graph for which the (cubic) minimum-fill heuristic is also tried.
const MIN_FILL_LIMIT: usize = 400;

impl BlockSparseLu {
    /// Symbolic analysis of `pattern`: chooses the elimination order (cheapest of minimum
    /// degree, minimum fill and natural order by exact flop count), computes the filled block
    /// pattern and preallocates all numeric storage and scratch.
    pub fn new(pattern: &BlockPattern) -> Self {
        let n = pattern.n_blocks();
        let b = pattern.block_size();
        let adj = adjacency(pattern);
        // Greedy heuristics are sensitive to how ties are broken; try the block numbering, its
        // reverse and a few fixed pseudo-random tie-break rankings, and keep the cheapest order.
        let mut rankings: Vec<Vec<usize>> = vec![(0..n).collect(), (0..n).rev().collect()];
        if n <= TIE_BREAK_LIMIT {
            let mut state = 0x243f_6a88_85a3_08d3_u64;
            for _ in 0..TIE_BREAK_TRIALS {
                let mut r: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    state = splitmix(state);
                    r.swap(i, (state % (i as u64 + 1)) as usize);
                }
                rankings.push(r);
            }
        }
        let mut candidates = Vec::new();
        for rank in &rankings {
            candidates.push((OrderKind::MinimumDegree, greedy_order(n, &adj, false, rank)));
            if n <= MIN_FILL_LIMIT {
                candidates.push((OrderKind::MinimumFill, greedy_order(n, &adj, true, rank)));
            }
        }
        candidates.push((OrderKind::Natural, (0..n).collect()));
        let mut best: Option<(OrderKind, Vec<usize>, Symbolic)> = None;
        for (kind, order) in candidates {
            let sym = symbolic(n, b, &adj, &order);
            if best.as_ref().is_none_or(|(_, _, s)| sym.flops < s.flops) {
                best = Some((kind, order, sym));
            }
        }
        let (kind, order, sym) = best.expect("at least one candidate order");
        let order = by_elimination_level(&order, &sym);
        let sym = symbolic(n, b, &adj, &order);
        Self::build(pattern, kind, order, sym)
    }

    /// Like [`BlockSparseLu::new`], but eliminates the blocks in the given order
    /// (`order[k]` = block eliminated at step `k`), e.g. the hand partition of document 000,
    /// eqs. (12)-(17).
    pub fn with_order(pattern: &BlockPattern, order: &[usize]) -> Result<Self, OrderError> {
        let n = pattern.n_blocks();
        if order.len() != n {
            return Err(OrderError::WrongLength {
                expected: n,
                got: order.len(),
            });
        }
        let mut seen = vec![false; n];
        for (position, &block) in order.iter().enumerate() {
            if block >= n || seen[block] {
                return Err(OrderError::NotAPermutation {
                    position,
                    block,
                    n_blocks: n,
                });
            }
            seen[block] = true;
        }
        let adj = adjacency(pattern);
        let sym = symbolic(n, pattern.block_size(), &adj, order);
        Ok(Self::build(pattern, OrderKind::User, order.to_vec(), sym))
    }

    fn build(pattern: &BlockPattern, kind: OrderKind, order: Vec<usize>, sym: Symbolic) -> Self {
        let n = pattern.n_blocks();
        let b = pattern.block_size();
        let bb = b * b;
        let mut position = vec![0; n];
        for (k, &o) in order.iter().enumerate() {
            position[o] = k;
        }
        let later = sym.later;
        let mut region = Vec::with_capacity(n + 1);
        region.push(0);
        for js in &later {
            region.push(region.last().copied().unwrap_or(0) + 1 + 2 * js.len());
        }
        let n_slots = region[n];
        // Block slot of filled entry (i, j), in elimination steps.
        let slot = |i: usize, j: usize| -> usize {
            use std::cmp::Ordering;
            match i.cmp(&j) {
                Ordering::Equal => region[i],
                Ordering::Less => {
                    let a = later[i].binary_search(&j).expect("entry in filled pattern");
                    region[i] + 1 + a
                }
                Ordering::Greater => {
                    let a = later[j].binary_search(&i).expect("entry in filled pattern");
                    region[j] + 1 + later[j].len() + a
                }
            }
        };
        let mut nbr_ptr = vec![0];
        let mut nbr = Vec::new();
        let mut upd_ptr = vec![0];
        let mut upd = Vec::new();
        for js in &later {
            nbr.extend(js.iter().map(|&j| order[j]));
            nbr_ptr.push(nbr.len());
            for &i in js {
                for &j in js {
                    upd.push(2 * slot(i, j) + usize::from(i > j));
                }
            }
            upd_ptr.push(upd.len());
        }
        let mut covered = vec![false; n_slots];
        let mut scatter = Vec::with_capacity(pattern.n_stored());
        for bi in 0..n {
            for &bj in pattern.row(bi) {
                let (pi, pj) = (position[bi], position[bj]);
                let s = slot(pi, pj);
                covered[s] = true;
                scatter.push(2 * s + usize::from(pi > pj));
            }
        }
        let fill = (0..n_slots).filter(|&s| !covered[s]).collect();
        let solve_flops = solve_flops(b as u64, later.iter().map(Vec::len));
        Self {
            pattern: pattern.clone(),
            b,
            n,
            kind,
            order,
            region,
            nbr_ptr,
            nbr,
            upd_ptr,
            upd,
            scatter,
            fill,
            values: vec![0.0; n_slots * bb],
            ipiv: vec![0; n * b],
            inv_diag: vec![0.0; n * b],
            pivoted: vec![false; n],
            tmp: vec![0.0; b],
            flops: sym.flops,
            solve_flops,
            factored: false,
            avx2_fma: crate::cpu::has_avx2_fma(),
        }
    }

    /// Selects the portable kernels even where AVX2 + FMA kernels are available (`true`), or
    /// returns to automatic selection (`false`). Both give the same results up to rounding; this
    /// exists so that tests and benchmarks can exercise and compare both code paths.
    pub fn force_portable_kernels(&mut self, portable: bool) {
        self.avx2_fma = !portable && crate::cpu::has_avx2_fma();
    }

    /// Whether the AVX2 + FMA kernels are in use (block size 6 on a capable x86-64 CPU).
    pub fn uses_simd_kernels(&self) -> bool {
        self.avx2_fma && self.b == 6
    }

    /// Scalar dimension of the systems this solver factors.
    pub fn dim(&self) -> usize {
        self.n * self.b
    }

    /// The block pattern the solver was analysed for.
    pub fn pattern(&self) -> &BlockPattern {
        &self.pattern
    }

    /// Elimination order: `order()[k]` is the block eliminated at step `k`.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// The heuristic that produced [`BlockSparseLu::order`].
    pub fn order_kind(&self) -> OrderKind {
        self.kind
    }

    /// Number of off-diagonal blocks created by fill-in (counting `(i, j)` and `(j, i)`).
    pub fn fill_blocks(&self) -> usize {
        self.fill.len()
    }

    /// Number of stored blocks of the factors `L` and `U` (diagonal blocks included).
    pub fn factor_blocks(&self) -> usize {
        self.region[self.n]
    }

    /// Exact floating-point operation count of one numeric factorisation (multiplications,
    /// additions and divisions; pivot search, copies and comparisons are not counted). Per
    /// step `k` with `m_k` later neighbours it is `lu(b) + m_k (b²(b-1) + b³) + m_k² 2b³` with
    /// `lu(b) = b + Σ_{m<b} (m + 2m²)` (131 for `b = 6`).
    pub fn flops(&self) -> u64 {
        self.flops
    }

    /// Exact floating-point operation count of one [`BlockSparseLu::solve_in_place`]:
    /// `Σ_k (b(b-1) + b² + 4 m_k b²)`.
    pub fn solve_flops(&self) -> u64 {
        self.solve_flops
    }

    /// Numeric factorisation of `a` (same pattern as at construction); no allocation.
    ///
    /// # Errors
    /// [`SingularMatrix::NonFiniteEntry`] if an entry of `a` is NaN or infinite,
    /// [`SingularMatrix::ZeroPivot`] (with the body index) if a pivot block is singular to
    /// working precision.
    ///
    /// # Panics
    /// If `a` does not have the pattern the solver was built for (a programming error).
    pub fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        assert!(
            **a.pattern() == self.pattern,
            "BlockSparseLu::factor: the matrix pattern differs from the analysed one; build the solver from the matrix's own pattern"
        );
        self.factored = false;
        match self.b {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `avx2_fma` was set from run-time CPU feature detection.
            6 if self.avx2_fma => unsafe { self.factor6_avx2_fma(a.values())? },
            6 => self.factor_impl(Fixed::<6>, a.values())?,
            3 => self.factor_impl(Fixed::<3>, a.values())?,
            1 => self.factor_impl(Fixed::<1>, a.values())?,
            b => self.factor_impl(Dynamic(b), a.values())?,
        }
        self.factored = true;
        Ok(())
    }

    /// Overwrites `x` with `A⁻¹ x` for the last factored `A`; no allocation. May be called any
    /// number of times per factorisation.
    ///
    /// # Panics
    /// If no factorisation succeeded since construction or the last failure, or
    /// `x.len() != self.dim()`.
    pub fn solve_in_place(&mut self, x: &mut [f64]) {
        assert!(
            self.factored,
            "BlockSparseLu::solve_in_place called without a successful factorisation"
        );
        assert_eq!(
            x.len(),
            self.dim(),
            "right-hand side has length {}, expected {}",
            x.len(),
            self.dim()
        );
        match self.b {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `avx2_fma` was set from run-time CPU feature detection.
            6 if self.avx2_fma => unsafe { self.solve6_avx2_fma(x) },
            6 => self.solve_impl(Fixed::<6>, x),
            3 => self.solve_impl(Fixed::<3>, x),
            1 => self.solve_impl(Fixed::<1>, x),
            b => self.solve_impl(Dynamic(b), x),
        }
    }

    /// The 6 × 6 factorisation compiled for AVX2 + FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn factor6_avx2_fma(&mut self, input: &[f64]) -> Result<(), SingularMatrix> {
        self.factor_impl(Avx6, input)
    }

    /// The 6 × 6 solve compiled for AVX2 + FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn solve6_avx2_fma(&mut self, x: &mut [f64]) {
        // The operations of `solve_impl` for b = 6 in the same order, on fixed-size arrays held
        // in registers (no scratch vector, no row exchanges for blocks that did not pivot).
        let values = &self.values[..];
        let block = |s: usize| -> &[f64; 36] {
            values[36 * s..36 * s + 36].try_into().expect("6 x 6 block")
        };
        // Forward substitution, eq. (15).
        for k in 0..self.n {
            let nbr = &self.nbr[self.nbr_ptr[k]..self.nbr_ptr[k + 1]];
            let m = nbr.len();
            let r0 = self.region[k];
            let diag = block(r0);
            let ok = self.order[k];
            let xk: &mut [f64; 6] = (&mut x[6 * ok..6 * ok + 6]).try_into().expect("6-vector");
            if self.pivoted[k] {
                for (c, &p) in self.ipiv[6 * k..6 * k + 6].iter().enumerate() {
                    xk.swap(c, p);
                }
            }
            let mut y = *xk;
            for r in 1..6 {
                let mut acc = y[r];
                for c in 0..r {
                    acc = (-diag[6 * r + c]).mul_add(y[c], acc);
                }
                y[r] = acc;
            }
            *xk = y;
            for (a, &i) in nbr.iter().enumerate() {
                let lt = block(r0 + 1 + m + a);
                let xi: &mut [f64; 6] = (&mut x[6 * i..6 * i + 6]).try_into().expect("6-vector");
                avx6::gemv_t_sub(xi, lt, &y);
            }
        }
        // Back substitution, eqs. (16), (17).
        for k in (0..self.n).rev() {
            let nbr = &self.nbr[self.nbr_ptr[k]..self.nbr_ptr[k + 1]];
            let m = nbr.len();
            let r0 = self.region[k];
            let ok = self.order[k];
            let mut y: [f64; 6] = x[6 * ok..6 * ok + 6].try_into().expect("6-vector");
            avx6::gemv_rows_sub(&mut y, &values[36 * (r0 + 1)..36 * (r0 + 1 + m)], nbr, x);
            let diag = block(r0);
            let inv: &[f64; 6] = self.inv_diag[6 * k..6 * k + 6]
                .try_into()
                .expect("6 pivots");
            for r in (0..6).rev() {
                let mut acc = y[r];
                for c in r + 1..6 {
                    acc = (-diag[6 * r + c]).mul_add(y[c], acc);
                }
                y[r] = acc * inv[r];
            }
            x[6 * ok..6 * ok + 6].copy_from_slice(&y);
        }
    }

    #[inline(always)]
    fn factor_impl<D: Dim>(&mut self, d: D, input: &[f64]) -> Result<(), SingularMatrix> {
        let b = d.get();
        let bb = b * b;
        if bb == 0 {
            return Ok(());
        }
        let values = &mut self.values[..];
        for &s in &self.fill {
            values[s * bb..(s + 1) * bb].fill(0.0);
        }
        // Scatter into the factor storage and, in the same pass, the largest magnitude and a
        // finiteness probe (x·0 is ±0 for finite x and NaN otherwise) over independent lanes.
        let mut max = [0.0f64; 4];
        let mut probe = [0.0f64; 4];
        for (src, &st) in input.chunks_exact(bb).zip(&self.scatter) {
            let (src4, src_rest) = src.as_chunks::<4>();
            for c in src4 {
                for l in 0..4 {
                    let a = c[l].abs();
                    max[l] = if a > max[l] { a } else { max[l] };
                    probe[l] += c[l] * 0.0;
                }
            }
            for (l, &x) in src_rest.iter().enumerate() {
                let a = x.abs();
                max[l] = if a > max[l] { a } else { max[l] };
                probe[l] += x * 0.0;
            }
            let s = st >> 1;
            let dst = &mut values[s * bb..(s + 1) * bb];
            if st & 1 == 0 {
                copy_block(d, dst, src);
            } else {
                copy_transposed(d, dst, src);
            }
        }
        if probe.iter().sum::<f64>() != 0.0 {
            return Err(self.find_non_finite(input));
        }
        let max_abs = max.iter().fold(0.0, |m: f64, &x| m.max(x));
        let tol = pivot_tolerance(self.n * b, max_abs);
        for k in 0..self.n {
            let m = self.nbr_ptr[k + 1] - self.nbr_ptr[k];
            let (head, rest) = values.split_at_mut(self.region[k + 1] * bb);
            let reg = &mut head[self.region[k] * bb..];
            let (diag, panel) = reg.split_at_mut(bb);
            let ipiv = &mut self.ipiv[k * b..(k + 1) * b];
            let inv = &mut self.inv_diag[k * b..(k + 1) * b];
            if let Err((c, pivot)) = d.lu_block(diag, ipiv, inv, tol) {
                let block = self.order[k];
                return Err(SingularMatrix::ZeroPivot {
                    row: block * b + c,
                    block: Some(block),
                    pivot,
                    tolerance: tol,
                });
            }
            self.pivoted[k] = ipiv.iter().enumerate().any(|(c, &p)| p != c);
            if m == 0 {
                continue;
            }
            let diag = &*diag;
            let ipiv = &*ipiv;
            let inv = &*inv;
            let (upanel, lpanel) = panel.split_at_mut(m * bb);
            for u in upanel.chunks_exact_mut(bb) {
                swap_rows(d, u, ipiv);
                d.unit_lower_solve(diag, u);
            }
            for l in lpanel.chunks_exact_mut(bb) {
                d.upper_transposed_solve(diag, inv, l);
            }
            let upanel = &*upanel;
            let lpanel = &*lpanel;
            let upd = &self.upd[self.upd_ptr[k]..self.upd_ptr[k + 1]];
            let off = self.region[k + 1];
            for (l, targets) in lpanel.chunks_exact(bb).zip(upd.chunks_exact(m)) {
                for (u, &tt) in upanel.chunks_exact(bb).zip(targets) {
                    let t = (tt >> 1) - off;
                    let c = &mut rest[t * bb..(t + 1) * bb];
                    if tt & 1 == 0 {
                        // C ← C - L U with L stored as Lᵀ.
                        d.gemm_tn_sub(c, l, u);
                    } else {
                        // Cᵀ ← Cᵀ - Uᵀ Lᵀ.
                        d.gemm_tn_sub(c, u, l);
                    }
                }
            }
        }
        Ok(())
    }

    /// Locates the first non-finite input entry (error path only).
    fn find_non_finite(&self, input: &[f64]) -> SingularMatrix {
        let b = self.b;
        let p = &self.pattern;
        for bi in 0..self.n {
            for s in p.row_ptr()[bi]..p.row_ptr()[bi + 1] {
                let bj = p.col_idx()[s];
                for r in 0..b {
                    for c in 0..b {
                        let value = input[s * b * b + r * b + c];
                        if !value.is_finite() {
                            return SingularMatrix::NonFiniteEntry {
                                row: bi * b + r,
                                col: bj * b + c,
                                value,
                            };
                        }
                    }
                }
            }
        }
        unreachable!("find_non_finite called on a finite matrix")
    }

    #[inline(always)]
    fn solve_impl<D: Dim>(&mut self, d: D, x: &mut [f64]) {
        let b = d.get();
        let bb = b * b;
        if bb == 0 {
            return;
        }
        let tmp = &mut self.tmp[..b];
        // Forward substitution: y_k = L_k⁻¹ P_k (x_k - Σ L_ki y_i), eq. (15).
        for k in 0..self.n {
            let m = self.nbr_ptr[k + 1] - self.nbr_ptr[k];
            let ok = self.order[k];
            let r0 = self.region[k];
            let diag = &self.values[r0 * bb..(r0 + 1) * bb];
            let xk = &mut x[ok * b..(ok + 1) * b];
            let ipiv = &self.ipiv[k * b..(k + 1) * b];
            if self.pivoted[k] {
                for (c, &p) in ipiv[..b].iter().enumerate() {
                    xk.swap(c, p);
                }
            }
            for r in 1..b {
                let mut acc = xk[r];
                for c in 0..r {
                    acc = d.nmadd(diag[r * b + c], xk[c], acc);
                }
                xk[r] = acc;
            }
            tmp.copy_from_slice(xk);
            let lpanel = &self.values[(r0 + 1 + m) * bb..(r0 + 1 + 2 * m) * bb];
            let nbr = &self.nbr[self.nbr_ptr[k]..self.nbr_ptr[k + 1]];
            for (lt, &i) in lpanel.chunks_exact(bb).zip(nbr) {
                d.gemv_t_sub(&mut x[i * b..(i + 1) * b], lt, tmp);
            }
        }
        // Back substitution: x_k = U_k⁻¹ (y_k - Σ U_kj x_j), eqs. (16), (17).
        for k in (0..self.n).rev() {
            let m = self.nbr_ptr[k + 1] - self.nbr_ptr[k];
            let ok = self.order[k];
            let r0 = self.region[k];
            tmp.copy_from_slice(&x[ok * b..(ok + 1) * b]);
            let upanel = &self.values[(r0 + 1) * bb..(r0 + 1 + m) * bb];
            let nbr = &self.nbr[self.nbr_ptr[k]..self.nbr_ptr[k + 1]];
            d.gemv_rows_sub(tmp, upanel, nbr, x);
            let diag = &self.values[r0 * bb..(r0 + 1) * bb];
            let inv = &self.inv_diag[k * b..(k + 1) * b];
            for r in (0..b).rev() {
                let mut acc = tmp[r];
                for c in r + 1..b {
                    acc = d.nmadd(diag[r * b + c], tmp[c], acc);
                }
                tmp[r] = acc * inv[r];
            }
            x[ok * b..(ok + 1) * b].copy_from_slice(tmp);
        }
    }
}

impl LinearSolver for BlockSparseLu {
    fn factor(&mut self, a: &BlockMatrix) -> Result<(), SingularMatrix> {
        BlockSparseLu::factor(self, a)
    }

    fn solve_in_place(&mut self, b: &mut [f64]) {
        BlockSparseLu::solve_in_place(self, b)
    }
}

/// Dense boolean adjacency (`n × n`, no diagonal) of the block pattern.
fn adjacency(p: &BlockPattern) -> Vec<bool> {
    let n = p.n_blocks();
    let mut adj = vec![false; n * n];
    for i in 0..n {
        for &j in p.row(i) {
            if i != j {
                adj[i * n + j] = true;
                adj[j * n + i] = true;
            }
        }
    }
    adj
}

/// In-place `P a = L U` of one row-major `b × b` block with partial pivoting. Stores the
/// transpositions in `ipiv` and the reciprocal pivots in `inv`. Fails with `(column, pivot)` when
/// a pivot is not finite or not above `tol`.
#[inline(always)]
fn lu_block<D: Dim>(
    d: D,
    a: &mut [f64],
    ipiv: &mut [usize],
    inv: &mut [f64],
    tol: f64,
) -> Result<(), (usize, f64)> {
    let b = d.get();
    let a = &mut a[..b * b];
    let ipiv = &mut ipiv[..b];
    let inv = &mut inv[..b];
    for c in 0..b {
        let mut p = c;
        let mut best = a[c * b + c].abs();
        for r in c + 1..b {
            let v = a[r * b + c].abs();
            if v > best {
                best = v;
                p = r;
            }
        }
        ipiv[c] = p;
        if p != c {
            for t in 0..b {
                a.swap(c * b + t, p * b + t);
            }
        }
        let pivot = a[c * b + c];
        if !pivot_ok(pivot, tol) {
            return Err((c, pivot));
        }
        let ip = 1.0 / pivot;
        inv[c] = ip;
        for r in c + 1..b {
            let l = a[r * b + c] * ip;
            a[r * b + c] = l;
            for t in c + 1..b {
                a[r * b + t] = d.nmadd(l, a[c * b + t], a[r * b + t]);
            }
        }
    }
    Ok(())
}

/// Applies the row transpositions `ipiv` to the rows of block `u`.
#[inline(always)]
fn swap_rows<D: Dim>(d: D, u: &mut [f64], ipiv: &[usize]) {
    let b = d.get();
    let u = &mut u[..b * b];
    for (c, &p) in ipiv[..b].iter().enumerate() {
        if p != c {
            for t in 0..b {
                u.swap(c * b + t, p * b + t);
            }
        }
    }
}

/// `u ← L⁻¹ u` with the unit lower triangle `L` of the factored block `lu`.
#[inline(always)]
fn unit_lower_solve<D: Dim>(d: D, lu: &[f64], u: &mut [f64]) {
    let b = d.get();
    let lu = &lu[..b * b];
    let u = &mut u[..b * b];
    for r in 1..b {
        for m in 0..r {
            let l = lu[r * b + m];
            for t in 0..b {
                u[r * b + t] = d.nmadd(l, u[m * b + t], u[r * b + t]);
            }
        }
    }
}

/// `y ← U⁻ᵀ y` with the upper triangle `U` of the factored block `lu` (reciprocal diagonal
/// `inv`): this is `L_ik = A_ik U_k⁻¹` computed on the transposed block `y = A_ikᵀ`, which turns
/// the column recurrence into contiguous row operations.
#[inline(always)]
fn upper_transposed_solve<D: Dim>(d: D, lu: &[f64], inv: &[f64], y: &mut [f64]) {
    let b = d.get();
    let lu = &lu[..b * b];
    let inv = &inv[..b];
    let y = &mut y[..b * b];
    for c in 0..b {
        for m in 0..c {
            let u = lu[m * b + c];
            for t in 0..b {
                y[c * b + t] = d.nmadd(u, y[m * b + t], y[c * b + t]);
            }
        }
        let ic = inv[c];
        for t in 0..b {
            y[c * b + t] *= ic;
        }
    }
}

/// `c ← c - pᵀ q` for row-major `b × b` blocks.
#[inline(always)]
fn gemm_tn_sub<D: Dim>(d: D, c: &mut [f64], p: &[f64], q: &[f64]) {
    let b = d.get();
    let c = &mut c[..b * b];
    let p = &p[..b * b];
    let q = &q[..b * b];
    for r in 0..b {
        for m in 0..b {
            let pv = p[m * b + r];
            for t in 0..b {
                c[r * b + t] = d.nmadd(pv, q[m * b + t], c[r * b + t]);
            }
        }
    }
}

/// `dst ← src` for `b × b` blocks, as an inlined loop (a `memcpy` call per small block costs
/// more than the copy itself).
#[inline(always)]
fn copy_block<D: Dim>(d: D, dst: &mut [f64], src: &[f64]) {
    let b = d.get();
    let (dst4, dst_rest) = dst[..b * b].as_chunks_mut::<4>();
    let (src4, src_rest) = src[..b * b].as_chunks::<4>();
    for (o, i) in dst4.iter_mut().zip(src4) {
        *o = *i;
    }
    dst_rest.copy_from_slice(src_rest);
}

/// `dst ← srcᵀ` for row-major `b × b` blocks.
#[inline(always)]
fn copy_transposed<D: Dim>(d: D, dst: &mut [f64], src: &[f64]) {
    let b = d.get();
    let dst = &mut dst[..b * b];
    let src = &src[..b * b];
    for r in 0..b {
        for c in 0..b {
            dst[c * b + r] = src[r * b + c];
        }
    }
}

/// `y ← y - aᵀ x` for a row-major `b × b` block `a` (i.e. `a` holds the transposed block).
#[inline(always)]
fn gemv_t_sub<D: Dim>(d: D, y: &mut [f64], a: &[f64], x: &[f64]) {
    let b = d.get();
    let y = &mut y[..b];
    let a = &a[..b * b];
    let x = &x[..b];
    for t in 0..b {
        let xv = x[t];
        for r in 0..b {
            y[r] = d.nmadd(xv, a[t * b + r], y[r]);
        }
    }
}

/// `y ← y - a x` for a row-major `b × b` block `a`.
#[inline(always)]
fn gemv_sub<D: Dim>(d: D, y: &mut [f64], a: &[f64], x: &[f64]) {
    let b = d.get();
    let y = &mut y[..b];
    let a = &a[..b * b];
    let x = &x[..b];
    for r in 0..b {
        let mut acc = 0.0;
        for t in 0..b {
            acc = d.madd(a[r * b + t], x[t], acc);
        }
        y[r] -= acc;
    }
}

/// Hand-vectorised 6 × 6 kernels for x86-64 CPUs with AVX2 and FMA. A block row is held as one
/// 4-wide and one 2-wide register; every kernel performs exactly the fused operations of the
/// generic kernels in the same order (so both give identical results), except
/// [`avx6::gemv_rows_sub`], which sums the products of a block row in a different order.
#[cfg(target_arch = "x86_64")]
mod avx6 {
    use std::arch::x86_64::*;

    /// One row of a 6 × 6 block: columns 0-3 and 4-5.
    #[derive(Clone, Copy)]
    struct Row(__m256d, __m128d);

    /// Loads the row at `p[0..6]`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load(p: &[f64; 6]) -> Row {
        // SAFETY: `p` holds six values.
        unsafe { Row(_mm256_loadu_pd(p.as_ptr()), _mm_loadu_pd(p.as_ptr().add(4))) }
    }

    /// Stores `r` to `p[0..6]`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn store(p: &mut [f64; 6], r: Row) {
        // SAFETY: `p` holds six values.
        unsafe {
            _mm256_storeu_pd(p.as_mut_ptr(), r.0);
            _mm_storeu_pd(p.as_mut_ptr().add(4), r.1);
        }
    }

    /// `r - s q` with one rounding per entry.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn nmadd(s: f64, q: Row, r: Row) -> Row {
        Row(
            _mm256_fnmadd_pd(_mm256_set1_pd(s), q.0, r.0),
            _mm_fnmadd_pd(_mm_set1_pd(s), q.1, r.1),
        )
    }

    /// `r s`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn scale(s: f64, r: Row) -> Row {
        Row(
            _mm256_mul_pd(_mm256_set1_pd(s), r.0),
            _mm_mul_pd(_mm_set1_pd(s), r.1),
        )
    }

    /// Row `r` of a row-major block.
    #[inline(always)]
    fn row(a: &[f64; 36], r: usize) -> &[f64; 6] {
        a[6 * r..6 * r + 6]
            .try_into()
            .expect("row of a 6 x 6 block")
    }

    /// Mutable row `r` of a row-major block.
    #[inline(always)]
    fn row_mut(a: &mut [f64; 36], r: usize) -> &mut [f64; 6] {
        (&mut a[6 * r..6 * r + 6])
            .try_into()
            .expect("row of a 6 x 6 block")
    }

    /// All six rows of a block.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load_all(a: &[f64; 36]) -> [Row; 6] {
        let z = Row(_mm256_setzero_pd(), _mm_setzero_pd());
        let mut rows = [z; 6];
        for (r, x) in rows.iter_mut().enumerate() {
            *x = load(row(a, r));
        }
        rows
    }

    /// `c ← c - pᵀ q` (see `gemm_tn_sub`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn gemm_tn_sub(c: &mut [f64; 36], p: &[f64; 36], q: &[f64; 36]) {
        let q = load_all(q);
        for r in 0..6 {
            let mut acc = load(row(c, r));
            for m in 0..6 {
                acc = nmadd(p[6 * m + r], q[m], acc);
            }
            store(row_mut(c, r), acc);
        }
    }

    /// `u ← L⁻¹ u` (see `unit_lower_solve`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn unit_lower_solve(lu: &[f64; 36], u: &mut [f64; 36]) {
        let mut x = load_all(u);
        for r in 1..6 {
            for m in 0..r {
                x[r] = nmadd(lu[6 * r + m], x[m], x[r]);
            }
            store(row_mut(u, r), x[r]);
        }
    }

    /// `y ← U⁻ᵀ y` (see `upper_transposed_solve`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn upper_transposed_solve(lu: &[f64; 36], inv: &[f64; 6], y: &mut [f64; 36]) {
        let mut x = load_all(y);
        for c in 0..6 {
            for m in 0..c {
                x[c] = nmadd(lu[6 * m + c], x[m], x[c]);
            }
            x[c] = scale(inv[c], x[c]);
            store(row_mut(y, c), x[c]);
        }
    }

    /// Entry `c` (constant after inlining) of a row.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lane(x: Row, c: usize) -> f64 {
        let lo = _mm256_castpd256_pd128(x.0);
        let mid = _mm256_extractf128_pd::<1>(x.0);
        match c {
            0 => _mm_cvtsd_f64(lo),
            1 => _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo)),
            2 => _mm_cvtsd_f64(mid),
            3 => _mm_cvtsd_f64(_mm_unpackhi_pd(mid, mid)),
            4 => _mm_cvtsd_f64(x.1),
            _ => _mm_cvtsd_f64(_mm_unpackhi_pd(x.1, x.1)),
        }
    }

    /// Lane masks of a row: entries with index in `sel` (all ones) or not (zero).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn mask(sel: impl Fn(i64) -> bool) -> (__m256d, __m128d) {
        let m = |c: i64| if sel(c) { -1 } else { 0 };
        (
            _mm256_castsi256_pd(_mm256_set_epi64x(m(3), m(2), m(1), m(0))),
            _mm_castsi128_pd(_mm_set_epi64x(m(5), m(4))),
        )
    }

    /// `m ? y : x` lane by lane.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn select(m: (__m256d, __m128d), y: Row, x: Row) -> Row {
        Row(
            _mm256_blendv_pd(x.0, y.0, m.0),
            _mm_blendv_pd(x.1, y.1, m.1),
        )
    }

    /// Elimination of column `C` of a block held in registers (see `lu_block`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn eliminate<const C: usize>(
        x: &mut [Row; 6],
        ipiv: &mut [usize; 6],
        inv: &mut [f64; 6],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        let mut p = C;
        let mut best = lane(x[C], C).abs();
        for (r, &xr) in x.iter().enumerate().skip(C + 1) {
            let v = lane(xr, C).abs();
            if v > best {
                best = v;
                p = r;
            }
        }
        ipiv[C] = p;
        if p != C {
            for r in C + 1..6 {
                if r == p {
                    x.swap(C, r);
                }
            }
        }
        let pivot = lane(x[C], C);
        if !crate::dense::pivot_ok(pivot, tol) {
            return Err((C, pivot));
        }
        let ip = 1.0 / pivot;
        inv[C] = ip;
        let right = mask(|c| c > C as i64);
        let at = mask(|c| c == C as i64);
        let pr = x[C];
        for row in x.iter_mut().skip(C + 1) {
            let l = lane(*row, C) * ip;
            let updated = nmadd(l, pr, *row);
            let lv = Row(_mm256_set1_pd(l), _mm_set1_pd(l));
            *row = select(at, lv, select(right, updated, *row));
        }
        Ok(())
    }

    /// In-place `P a = L U` with partial pivoting (see `lu_block`), the whole block in
    /// registers and every column step unrolled.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lu_block(
        a: &mut [f64; 36],
        ipiv: &mut [usize; 6],
        inv: &mut [f64; 6],
        tol: f64,
    ) -> Result<(), (usize, f64)> {
        let mut x = load_all(a);
        let result = eliminate::<0>(&mut x, ipiv, inv, tol)
            .and_then(|()| eliminate::<1>(&mut x, ipiv, inv, tol))
            .and_then(|()| eliminate::<2>(&mut x, ipiv, inv, tol))
            .and_then(|()| eliminate::<3>(&mut x, ipiv, inv, tol))
            .and_then(|()| eliminate::<4>(&mut x, ipiv, inv, tol))
            .and_then(|()| eliminate::<5>(&mut x, ipiv, inv, tol));
        for (r, xr) in x.iter().enumerate() {
            store(row_mut(a, r), *xr);
        }
        result
    }

    /// `y ← y - aᵀ x` (see `gemv_t_sub`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn gemv_t_sub(y: &mut [f64; 6], a: &[f64; 36], x: &[f64; 6]) {
        let mut acc = load(y);
        for (t, &xt) in x.iter().enumerate() {
            acc = nmadd(xt, load(row(a, t)), acc);
        }
        store(y, acc);
    }

    /// `y ← y - Σ_k a_k x_{j_k}` over the blocks `a_k` of one block row (row-major, contiguous
    /// in `blocks`) and the matching 6-vectors of `x` at the block indices `cols`. The
    /// products are accumulated per entry and summed once per row.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn gemv_rows_sub(y: &mut [f64; 6], blocks: &[f64], cols: &[usize], x: &[f64]) {
        let mut lo = [_mm256_setzero_pd(); 6];
        let mut hi = [_mm_setzero_pd(); 6];
        for (a, &j) in blocks.chunks_exact(36).zip(cols) {
            let a: &[f64; 36] = a.try_into().expect("6 x 6 block");
            let xj = load(x[6 * j..6 * j + 6].try_into().expect("6-vector"));
            for r in 0..6 {
                let ar = load(row(a, r));
                lo[r] = _mm256_fmadd_pd(ar.0, xj.0, lo[r]);
                hi[r] = _mm_fmadd_pd(ar.1, xj.1, hi[r]);
            }
        }
        let (s03, s45) = crate::cpu::row_sums6(&lo, &hi);
        let s = Row(s03, s45);
        let v = load(y);
        store(y, Row(_mm256_sub_pd(v.0, s.0), _mm_sub_pd(v.1, s.1)));
    }
}

#[cfg(test)]
mod level_order_tests {
    use super::*;

    #[test]
    fn level_order_keeps_the_fill_and_eliminates_every_subtree_first() {
        // Two chains 0-1-2 and 3-4-5 joined at 6, plus a random-ish extra coupling.
        let pairs = [(0, 1), (1, 2), (2, 6), (3, 4), (4, 5), (5, 6), (1, 4)];
        let p = BlockPattern::from_couplings(7, 6, &pairs);
        let adj = adjacency(&p);
        let order: Vec<usize> = vec![0, 1, 2, 3, 4, 5, 6];
        let sym = symbolic(7, 6, &adj, &order);
        let level = by_elimination_level(&order, &sym);
        let sym2 = symbolic(7, 6, &adj, &level);
        assert_eq!(sym.flops, sym2.flops);
        let fill = |s: &Symbolic| s.later.iter().map(Vec::len).sum::<usize>();
        assert_eq!(fill(&sym), fill(&sym2));
        // Every block's elimination-tree parent comes after it in the new order.
        let pos = |o: &[usize], b: usize| o.iter().position(|&x| x == b).unwrap();
        for (k, later) in sym.later.iter().enumerate() {
            if let Some(&parent) = later.first() {
                assert!(pos(&level, order[k]) < pos(&level, order[parent]));
            }
        }
        // The two leaves (0 and 3) are eliminated first, side by side.
        assert_eq!(&level[..2], &[0, 3]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn chain(n: usize, b: usize) -> BlockPattern {
        let pairs: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
        BlockPattern::from_couplings(n, b, &pairs)
    }

    #[test]
    fn chain_has_no_fill_and_tree_order_counts() {
        // Document 000, eq. (12): five blocks in a chain — eliminating from the ends inwards
        // (eqs. 13-17) creates no fill, and neither does minimum degree.
        let p = chain(5, 6);
        let lu = BlockSparseLu::new(&p);
        assert_eq!(lu.fill_blocks(), 0);
        let hand = BlockSparseLu::with_order(&p, &[0, 4, 1, 3, 2]).unwrap();
        assert_eq!(hand.fill_blocks(), 0);
        assert_eq!(hand.flops(), lu.flops());
        // 4 steps with one later neighbour, one with none: 5·131 + 4·(180 + 216 + 432).
        assert_eq!(lu.flops(), 5 * 131 + 4 * (180 + 216 + 432));
    }

    #[test]
    fn star_eliminates_leaves_first() {
        let p = BlockPattern::from_couplings(5, 2, &[(0, 1), (0, 2), (0, 3), (0, 4)]);
        let lu = BlockSparseLu::new(&p);
        // The hub goes last or next to last (then the last leaf is its only neighbour).
        assert!(lu.order()[..3].iter().all(|&v| v != 0), "{:?}", lu.order());
        assert_eq!(lu.fill_blocks(), 0);
        // Natural order eliminates the hub first and fills the whole matrix.
        let nat = BlockSparseLu::with_order(&p, &[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(nat.fill_blocks(), 12);
        assert!(nat.flops() > lu.flops());
    }

    #[test]
    fn analysis_is_deterministic_and_no_worse_than_natural() {
        let mut state = 7u64;
        for n in [1, 2, 7, 30] {
            let mut pairs = Vec::new();
            for i in 1..n {
                state = splitmix(state);
                pairs.push(((state % i as u64) as usize, i));
                state = splitmix(state);
                pairs.push(((state % n as u64) as usize, i));
            }
            let p = BlockPattern::from_couplings(n, 6, &pairs);
            let a = BlockSparseLu::new(&p);
            let b = BlockSparseLu::new(&p);
            assert_eq!(a.order(), b.order());
            let natural = BlockSparseLu::with_order(&p, &(0..n).collect::<Vec<_>>()).unwrap();
            assert!(a.flops() <= natural.flops());
            assert!(a.factor_blocks() >= p.n_stored());
        }
    }

    #[test]
    fn rejects_bad_orders() {
        let p = chain(3, 1);
        assert_eq!(
            BlockSparseLu::with_order(&p, &[0, 1]).unwrap_err(),
            OrderError::WrongLength {
                expected: 3,
                got: 2
            }
        );
        assert!(matches!(
            BlockSparseLu::with_order(&p, &[0, 1, 1]).unwrap_err(),
            OrderError::NotAPermutation {
                position: 2,
                block: 1,
                ..
            }
        ));
    }

    #[test]
    fn solves_scalar_tridiagonal() {
        // b = 1: tridiagonal [-1 2 -1] with x = 1..n.
        let n = 7;
        let p = Arc::new(chain(n, 1));
        let mut a = BlockMatrix::zeros(p.clone());
        for i in 0..n {
            a.block_mut(p.slot(i, i).unwrap())[0] = 2.0;
            if i > 0 {
                a.block_mut(p.slot(i, i - 1).unwrap())[0] = -1.0;
                a.block_mut(p.slot(i - 1, i).unwrap())[0] = -1.0;
            }
        }
        let x: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let mut rhs = vec![0.0; n];
        a.gemv(1.0, &x, 0.0, &mut rhs);
        let mut lu = BlockSparseLu::new(&p);
        lu.factor(&a).unwrap();
        lu.solve_in_place(&mut rhs);
        for (u, v) in rhs.iter().zip(&x) {
            assert!((u - v).abs() < 1e-13, "{rhs:?}");
        }
    }

    #[test]
    fn empty_matrix_is_fine() {
        let p = Arc::new(BlockPattern::from_couplings(0, 6, &[]));
        let mut lu = BlockSparseLu::new(&p);
        lu.factor(&BlockMatrix::zeros(p)).unwrap();
        lu.solve_in_place(&mut []);
        assert_eq!(lu.flops(), 0);
    }
}
