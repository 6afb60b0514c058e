//! Ordering and symbolic analysis of the block-sparse LU (document 000, section 3, eqs. 12-17:
//! the choice of the elimination order and the filled block pattern that eq. (14) produces).
//!
//! [`BlockSymbolic`] depends only on the block pattern (the body-coupling graph, Bild 3), never on
//! the values: it chooses a fill-reducing elimination order, simulates the elimination on the block
//! graph, and lays out the storage and the Schur-complement update lists of every step. It is
//! computed once and shared (`Arc`) by any number of numeric factorisations
//! ([`super::BlockSparseLu::from_symbolic`]), e.g. every Newton iteration of a static equilibrium
//! or several solvers on one model in parallel threads.

use std::collections::BTreeSet;

use crate::block::BlockPattern;

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
    /// Supplied by the caller through [`BlockSymbolic::with_order`] or
    /// [`super::BlockSparseLu::with_order`].
    User,
}
/// Result of the symbolic elimination of one order.
struct Elimination {
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

/// Simulates the elimination of `order` on the block graph `adj` (sorted adjacency lists):
/// the later neighbours of every step in the filled graph. Memory is linear in the size of the
/// filled pattern.
fn symbolic(n: usize, b: usize, adj: &[Vec<usize>], order: &[usize]) -> Elimination {
    let mut position = vec![0; n];
    for (k, &o) in order.iter().enumerate() {
        position[o] = k;
    }
    // Later neighbours of every step (in steps), growing by fill as the elimination proceeds.
    let mut g: Vec<BTreeSet<usize>> = (0..n)
        .map(|k| {
            adj[order[k]]
                .iter()
                .map(|&j| position[j])
                .filter(|&j| j > k)
                .collect()
        })
        .collect();
    let mut later = Vec::with_capacity(n);
    for k in 0..n {
        let js: Vec<usize> = std::mem::take(&mut g[k]).into_iter().collect();
        for (x, &i) in js.iter().enumerate() {
            g[i].extend(js[x + 1..].iter().copied());
        }
        later.push(js);
    }
    let flops = factor_flops(b as u64, later.iter().map(Vec::len));
    Elimination { later, flops }
}

/// Rearranges an elimination order level by level of its elimination tree (parent of step k: its
/// first later neighbour): first every leaf, then every step whose subtrees are done, and so on,
/// keeping the original order within a level. Any order in which each step follows its subtree
/// has the same filled pattern and flop count; this one puts independent subtrees (e.g. the two
/// halves of an axle) side by side, so that consecutive substitution steps of the solve do not
/// depend on each other and overlap in the processor.
fn by_elimination_level(order: &[usize], sym: &Elimination) -> Vec<usize> {
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
pub(super) fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Number of pseudo-random tie-break rankings tried by [`BlockSymbolic::new`].
const TIE_BREAK_TRIALS: usize = 16;

/// Largest block graph for which the pseudo-random tie-break rankings are tried.
const TIE_BREAK_LIMIT: usize = 100;

/// Greedy elimination order by minimum degree (`min_fill == false`) or minimum fill.
/// Ties are broken by smaller degree, then by smaller `rank`, so the result is deterministic.
/// The graph is kept as adjacency sets of the live blocks (memory linear in the filled pattern);
/// every step scans the live blocks, so the time is quadratic in the number of blocks (about
/// 10 ms for 2000 blocks).
fn greedy_order(n: usize, adj: &[Vec<usize>], min_fill: bool, rank: &[usize]) -> Vec<usize> {
    let mut g: Vec<BTreeSet<usize>> = adj.iter().map(|a| a.iter().copied().collect()).collect();
    let mut alive = vec![true; n];
    let mut order = Vec::with_capacity(n);
    let mut nb: Vec<usize> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut best: Option<(usize, usize, usize, usize)> = None;
        for v in (0..n).filter(|&v| alive[v]) {
            let deg = g[v].len();
            let score = if min_fill {
                nb.clear();
                nb.extend(g[v].iter().copied());
                let mut missing = 0;
                for (x, &u) in nb.iter().enumerate() {
                    missing += nb[x + 1..].iter().filter(|w| !g[u].contains(w)).count();
                }
                missing
            } else {
                deg
            };
            let key = (score, deg, rank[v], v);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let v = best.expect("a live vertex remains").3;
        nb.clear();
        nb.extend(std::mem::take(&mut g[v]));
        alive[v] = false;
        for &u in &nb {
            g[u].remove(&v);
        }
        for (x, &u) in nb.iter().enumerate() {
            for &w in &nb[x + 1..] {
                g[u].insert(w);
                g[w].insert(u);
            }
        }
        order.push(v);
    }
    order
}

/// Largest block graph for which the (cubic) minimum-fill heuristic is also tried.
const MIN_FILL_LIMIT: usize = 400;
/// Sorted adjacency lists (no diagonal) of the block pattern.
fn adjacency(p: &BlockPattern) -> Vec<Vec<usize>> {
    let n = p.n_blocks();
    let mut adj = vec![Vec::new(); n];
    for i in 0..n {
        for &j in p.row(i) {
            if i != j {
                adj[i].push(j);
                adj[j].push(i);
            }
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    adj
}

/// Ordering and symbolic factorisation of one block pattern: the elimination order, the filled
/// block pattern of `L` and `U`, the storage layout of the numeric factors and the update lists of
/// every elimination step. Depends only on the pattern; build it once and share it (`Arc`) between
/// numeric factorisations ([`super::BlockSparseLu::from_symbolic`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSymbolic {
    pub(super) pattern: BlockPattern,
    pub(super) b: usize,
    pub(super) n: usize,
    pub(super) kind: OrderKind,
    /// `order[k]` = original block eliminated at step `k`.
    pub(super) order: Vec<usize>,
    /// `position[order[k]] = k`: the elimination step of each block.
    pub(super) position: Vec<usize>,
    /// First block slot of the storage region of step `k` (length `n + 1`).
    pub(super) region: Vec<usize>,
    /// `nbr[nbr_ptr[k]..nbr_ptr[k + 1]]`: original indices of the later neighbours `J(k)` of step
    /// `k` in the filled graph, sorted by elimination step.
    pub(super) nbr_ptr: Vec<usize>,
    pub(super) nbr: Vec<usize>,
    /// `upd[upd_ptr[k]..upd_ptr[k + 1]]`: for `a, c < m = |J(k)|`, entry `a * m + c` is
    /// `2 s + t`, where `s` is the block slot of `A_{J_a, J_c}`, which receives
    /// `-L_{J_a, k} U_{k, J_c}`, and `t = 1` if that slot is stored transposed (strictly lower).
    pub(super) upd_ptr: Vec<usize>,
    pub(super) upd: Vec<usize>,
    /// Block slot of every stored block of the input pattern (input slot order), as `2 s + t`
    /// with `t = 1` for slots stored transposed.
    pub(super) scatter: Vec<usize>,
    /// Block slots created by fill-in, zeroed before each factorisation.
    pub(super) fill: Vec<usize>,
    pub(super) flops: u64,
    pub(super) solve_flops: u64,
}

impl BlockSymbolic {
    /// Symbolic analysis of `pattern`: chooses the elimination order (cheapest of minimum
    /// degree, minimum fill and natural order by exact flop count) and computes the filled block
    /// pattern and the storage layout of the factors.
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
        let mut best: Option<(OrderKind, Vec<usize>, Elimination)> = None;
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

    /// Like [`BlockSymbolic::new`], but eliminates the blocks in the given order
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

    fn build(pattern: &BlockPattern, kind: OrderKind, order: Vec<usize>, sym: Elimination) -> Self {
        let n = pattern.n_blocks();
        let b = pattern.block_size();
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
            position,
            region,
            nbr_ptr,
            nbr,
            upd_ptr,
            upd,
            scatter,
            fill,
            flops: sym.flops,
            solve_flops,
        }
    }

    /// The block pattern that was analysed.
    pub fn pattern(&self) -> &BlockPattern {
        &self.pattern
    }

    /// Scalar dimension of the systems factored with this analysis.
    pub fn dim(&self) -> usize {
        self.n * self.b
    }

    /// The elimination steps of the blocks `blocks` (clipped to the pattern): the range from the
    /// first to the last of them, and whether it holds the steps of those blocks only (then a
    /// substitution restricted to `blocks` runs over the range without a test per step).
    pub(super) fn steps_of(
        &self,
        blocks: std::ops::Range<usize>,
    ) -> (std::ops::Range<usize>, bool) {
        let blocks = blocks.start.min(self.n)..blocks.end.min(self.n);
        if blocks.len() == self.n {
            return (0..self.n, true);
        }
        if blocks.is_empty() {
            return (0..0, true);
        }
        let (mut first, mut last) = (usize::MAX, 0);
        for &k in &self.position[blocks.clone()] {
            first = first.min(k);
            last = last.max(k);
        }
        (first..last + 1, last + 1 - first == blocks.len())
    }

    /// Elimination order: `order()[k]` is the block eliminated at step `k`.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// The heuristic that produced [`BlockSymbolic::order`].
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

    /// Exact floating-point operation count of one solve:
    /// `Σ_k (b(b-1) + b² + 4 m_k b²)`.
    pub fn solve_flops(&self) -> u64 {
        self.solve_flops
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
        let fill = |s: &Elimination| s.later.iter().map(Vec::len).sum::<usize>();
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
