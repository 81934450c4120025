//! DISTINCT ENDS: a variable-length expand the optimizer marked `ends_only` (see
//! `plexus_plan::optimizer::var_length`, WHEN) produces each end node reachable from the
//! start once, found by a breadth-first search over a visited set, instead of one row per
//! trail.
//!
//! THE SEARCH
//! ==========
//! Level by level from the start `a`, up to the upper bound (`*` alone: the same depth cap as
//! enumeration, `MAX_VAR_LENGTH_DEPTH`), each vertex visited once: a vertex first reached at
//! level `d ≥ 1` is an end of a trail of length `d` (the BFS-tree path: a shortest walk never
//! repeats a vertex, so never a relationship), and of no shorter one. With the lower bound 0 or
//! 1 (the pass's condition), every vertex other than `a` reached within the bound is an end,
//! emitted when it is first reached. The relationships a hop may take are those of the
//! pattern's types and direction that pass its property map and are not bound earlier in the
//! same MATCH (`distinct_from`): the trails of the enumeration are the trails of that graph.
//!
//! THE START ITSELF
//! ================
//! `a` is an end of a length-0 path when the lower bound is 0. With the lower bound 1 it is an
//! end only of a *closed trail* of length `1..=max`, which the search decides exactly:
//! - directed: a relationship into `a` from a vertex `u` at level `d ≤ max - 1` closes the
//!   trail (BFS path to `u`, then that relationship — which is not on the path, as the path
//!   never enters `a`);
//! - undirected: going back over the relationship just taken is not a trail. Each vertex
//!   carries its *branch* — the level-1 vertex its BFS path starts with. The shortest closed
//!   trail through `a` is a simple cycle, and it has a relationship `{u, w}` with `u`, `w` in
//!   different branches (or `w = a` over a relationship other than `u`'s tree edge; or a
//!   self-loop at `a`) with `level(u) + level(w) + 1` no longer than the cycle; conversely any
//!   such relationship closes a simple cycle of exactly that length (the two tree paths are
//!   disjoint). So `a` is an end iff the shortest such closing is `≤ max`. Such a relationship
//!   with `level(u) + level(w) + 1 ≤ max` has one end at a level `≤ max - 1`, which the search
//!   expands, so it is seen.
//!
//! With the end node bound already (`to_bound`), the input row is produced once if that node
//! is an end, and the search stops as soon as it is found.
//!
//! STATE AND LIMITS
//! ================
//! The visited set starts as a hash map and moves to dense per-table arrays once a search
//! passes [`SPARSE_MAX_VERTICES`] vertices: one bit a vertex offset for directed searches
//! (128 KiB per million vertices, cleared word by dirtied word), an epoch stamp and a mark
//! (level, branch: 12 bytes) for undirected ones (a new search bumps the epoch instead of
//! clearing). The arrays are reused by the operator's next searches and, between
//! statements, kept in a process-wide pool of at most [`POOL_MAX_BYTES`], so a statement
//! does not fault in fresh zeroed pages for each search. The ends of one input row are
//! collected (8 bytes each), then written into output batches a batch at a time, resuming
//! where a full batch stopped (`FanOut`), like a scan's nodes.
//!
//! PARALLEL FRONTIERS
//! ==================
//! Reading a vertex's relationships (through the transaction: the runs, the memtable, MVCC
//! visibility) costs more than walking them (a bit test and a push per relationship). So
//! with `frontier_workers = w ≥ 2` (read-only statements, set by the parallelization pass)
//! a level of at least [`PARALLEL_FRONTIER_MIN_VERTICES`] vertices is a pipeline: `w - 1`
//! gathering threads read the relationships of the level's chunks of
//! [`FRONTIER_CHUNK_VERTICES`] (chunk `c` by thread `c mod (w - 1)`, at most
//! [`GATHERED_CHUNKS_AHEAD`] ahead), each on a read-only fork of the transaction
//! (`Transaction::fork_reader`: the same snapshot and pending writes, its own read set), while
//! the query's thread walks the chunks in frontier order exactly as a serial level does — so
//! the ends are the serial search's, in the same order. The forks' reads are absorbed into
//! the parent's read set after each level, before any end is handed on, so SERIALIZABLE
//! validation sees every read. The forks are made once per operator and reused. A failing
//! or stopped walk closes the channels, which ends the gatherers; they are joined before the
//! level returns. Serial levels: a small frontier, a bound end node (the search stops early),
//! an expand with per-relationship conditions (property map, group condition: expressions
//! need the statement's context), or more than `MAX_FORK_WRITES` pending writes to copy into
//! a fork.

use super::expand::{ends_of, path_rel_ok, relationships_into};
use super::ops::{FanOut, RowFn};
use super::parallel::MAX_FORK_WRITES;
use super::{Batch, ExecContext};
use plexus_plan::logical::{ExpandSpec, MAX_VAR_LENGTH_DEPTH, VarLengthSpec};
use plexus_txn::Transaction;
use plexus_types::{Direction, EdgeId, VertexId, VertexTableId};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// What an undirected search keeps of a visited vertex: its level and its branch (0 for the
/// start, else the number of the level-1 vertex its BFS path starts with).
type Mark = (u32, u32);

/// Marks in a hash map up to this many vertices per search, then in dense arrays.
const SPARSE_MAX_VERTICES: usize = 1 << 10;

/// Frontier vertices whose relationships one gathering thread reads at a time (see PARALLEL
/// FRONTIERS).
const FRONTIER_CHUNK_VERTICES: usize = 1024;

/// Chunks a gathering thread may read ahead of the walk.
const GATHERED_CHUNKS_AHEAD: usize = 4;

/// A level is gathered by other threads from this many frontier vertices on.
const PARALLEL_FRONTIER_MIN_VERTICES: usize = 256;

/// The dense arrays of one vertex table, by vertex offset. A search without marks
/// (directed) sets bits in `bits` (1 bit a vertex: small enough to stay in cache) and lists
/// each word it dirtied in `dirty`, which the next search zeroes; a search with marks
/// (undirected) stamps `epochs` (visited in the current search iff the stamp equals its
/// epoch) and keeps the vertex's mark in `marks`.
#[derive(Default)]
struct DenseTable {
    table: VertexTableId,
    bits: Vec<u64>,
    dirty: Vec<u32>,
    epochs: Vec<u32>,
    marks: Vec<Mark>,
}

impl DenseTable {
    fn bytes(&self) -> usize {
        self.bits.len() * 8
            + self.dirty.capacity() * 4
            + self.epochs.len() * 4
            + self.marks.len() * 8
    }

    fn clear_bits(&mut self) {
        for &word in &self.dirty {
            self.bits[word as usize] = 0;
        }
        self.dirty.clear();
    }
}

/// The vertices visited by the current search (see STATE AND LIMITS): a hash map while the
/// search is small, dense arrays per table once it grows past [`SPARSE_MAX_VERTICES`] —
/// kept for the next searches, and between statements in [`POOL`], so that a large search
/// does not zero fresh pages each time.
#[derive(Default)]
struct Visited {
    sparse: HashMap<VertexId, Mark, ahash::RandomState>,
    /// Whether the current search moved to the dense arrays.
    dense_now: bool,
    /// Whether the current search keeps marks (undirected).
    marked: bool,
    epoch: u32,
    tables: Vec<DenseTable>,
}

/// Dense arrays of finished searches, for the next operator (see [`Visited`]); at most
/// [`POOL_MAX_BYTES`] of them are kept.
static POOL: std::sync::Mutex<Vec<Visited>> = std::sync::Mutex::new(Vec::new());
const POOL_MAX_BYTES: usize = 256 << 20;

impl Visited {
    fn from_pool() -> Visited {
        let pooled = POOL.lock().ok().and_then(|mut pool| pool.pop());
        pooled.unwrap_or_default()
    }

    fn bytes(&self) -> usize {
        self.tables.iter().map(DenseTable::bytes).sum()
    }

    fn into_pool(self) {
        if let Ok(mut pool) = POOL.lock() {
            let held: usize = pool.iter().map(Visited::bytes).sum();
            if held + self.bytes() <= POOL_MAX_BYTES {
                pool.push(self);
            }
        }
    }

    fn start_search(&mut self, marked: bool) {
        self.sparse.clear();
        self.dense_now = false;
        self.marked = marked;
        for table in &mut self.tables {
            table.clear_bits();
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            for table in &mut self.tables {
                table.epochs.fill(0);
            }
            self.epoch = 1;
        }
    }

    /// `v`'s mark if visited; only searches with marks ask.
    fn get(&self, v: VertexId) -> Option<Mark> {
        debug_assert!(self.marked);
        if !self.dense_now {
            return self.sparse.get(&v).copied();
        }
        let table = self.tables.iter().find(|t| t.table == v.table)?;
        let offset = v.offset as usize;
        (table.epochs.get(offset) == Some(&self.epoch)).then(|| table.marks[offset])
    }

    /// Marks `v` visited unless it is; whether it was not.
    fn insert(&mut self, v: VertexId, mark: Mark) -> bool {
        if !self.dense_now {
            if self.sparse.insert(v, mark).is_some() {
                return false;
            }
            if self.sparse.len() > SPARSE_MAX_VERTICES {
                self.densify();
            }
            return true;
        }
        self.insert_dense(v, mark)
    }

    fn densify(&mut self) {
        self.dense_now = true;
        let sparse = std::mem::take(&mut self.sparse);
        for (v, mark) in &sparse {
            self.insert_dense(*v, *mark);
        }
        self.sparse = sparse;
        self.sparse.clear();
    }

    fn insert_dense(&mut self, v: VertexId, mark: Mark) -> bool {
        let index = match self.tables.iter().position(|t| t.table == v.table) {
            Some(i) => i,
            None => {
                self.tables.push(DenseTable {
                    table: v.table,
                    ..DenseTable::default()
                });
                self.tables.len() - 1
            }
        };
        let table = &mut self.tables[index];
        let offset = v.offset as usize;
        if !self.marked {
            let (word, bit) = (offset / 64, 1u64 << (offset % 64));
            if table.bits.len() <= word {
                let len = (word + 1).max(table.bits.len() * 2);
                table.bits.resize(len, 0);
            }
            let bits = &mut table.bits[word];
            if *bits & bit != 0 {
                return false;
            }
            if *bits == 0 {
                table.dirty.push(word as u32);
            }
            *bits |= bit;
            return true;
        }
        if table.epochs.len() <= offset {
            let len = (offset + 1).max(table.epochs.len() * 2);
            table.epochs.resize(len, 0);
            table.marks.resize(len, (0, 0));
        }
        if table.epochs[offset] == self.epoch {
            return false;
        }
        table.epochs[offset] = self.epoch;
        table.marks[offset] = mark;
        true
    }
}

pub(super) struct DistinctEnds {
    spec: ExpandSpec,
    length: VarLengthSpec,
    visited: Visited,
    /// The vertices of the level being expanded, with their branches; and of the next.
    frontier: Vec<(VertexId, u32)>,
    next: Vec<(VertexId, u32)>,
    /// The relationships of the frontier vertex being walked (serial levels).
    found: Vec<(EdgeId, VertexId)>,
    /// Read-only forks of the transaction for the gathering threads, made on first use.
    forks: Vec<Transaction>,
    /// Undirected searches: the tree relationship of each level-1 vertex.
    roots: HashMap<VertexId, EdgeId, ahash::RandomState>,
    /// The ends of the current input row not yet written (a full output batch stopped them).
    rest: Option<FanOut<VertexId>>,
}

/// The relationships of each of `vertices`, appended to `found`, with the end offset of each
/// vertex's run in `ends`.
fn gather_into(
    tx: &mut Transaction,
    spec: &ExpandSpec,
    vertices: &[(VertexId, u32)],
    found: &mut Vec<(EdgeId, VertexId)>,
    ends: &mut Vec<usize>,
) -> Result<()> {
    for &(u, _) in vertices {
        relationships_into(tx, u, &spec.types, spec.direction, found)?;
        ends.push(found.len());
    }
    Ok(())
}

impl DistinctEnds {
    pub(super) fn new(spec: ExpandSpec, length: VarLengthSpec) -> Self {
        debug_assert!(length.ends_only && length.shortest.is_none() && length.min <= 1);
        DistinctEnds {
            spec,
            length,
            visited: Visited::from_pool(),
            frontier: Vec::new(),
            next: Vec::new(),
            found: Vec::new(),
            forks: Vec::new(),
            roots: HashMap::default(),
            rest: None,
        }
    }

    /// How many threads gather the next level's relationships while the query's thread walks
    /// them (see PARALLEL FRONTIERS): 0 for a serial level. Makes the forks on first use.
    fn gatherers(&mut self, frontier: usize, search: &Search, ctx: &mut ExecContext) -> usize {
        let eligible = self.length.frontier_workers >= 2
            && frontier >= PARALLEL_FRONTIER_MIN_VERTICES
            && search.target.is_none()
            && self.length.rel_filter.is_empty()
            && self.length.hop_filter.is_none();
        if !eligible {
            return 0;
        }
        if self.forks.is_empty() {
            if ctx.tx.pending_writes() > MAX_FORK_WRITES {
                return 0;
            }
            let gatherers = self.length.frontier_workers - 1;
            self.forks = (0..gatherers).map(|_| ctx.tx.fork_reader()).collect();
        }
        self.forks.len()
    }

    /// The ends of the search from `from` (only `target`, if bound), each once, in the order
    /// found (see THE SEARCH and THE START ITSELF).
    fn search(
        &mut self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
        (from, target): (VertexId, Option<VertexId>),
    ) -> Result<Vec<VertexId>> {
        let mut search = Search {
            from,
            target,
            max: self.length.max.unwrap_or(MAX_VAR_LENGTH_DEPTH),
            level: 0,
            undirected: self.spec.direction == Direction::Both,
            branches: 0,
            start_done: self.length.min == 0,
            ends: Vec::new(),
        };
        if search.start_done && search.wanted(from) {
            search.ends.push(from);
            if target.is_some() {
                return Ok(search.ends);
            }
        }
        self.visited.start_search(search.undirected);
        self.visited.insert(from, (0, 0));
        self.roots.clear();
        self.frontier.clear();
        self.next.clear();
        self.frontier.push((from, 0));
        while !self.frontier.is_empty() && search.level < search.max {
            search.level += 1;
            let stopped = match self.gatherers(self.frontier.len(), &search, ctx) {
                0 => self.walk_level(&mut search, (input, row), ctx)?,
                _ => self.walk_level_gathered(&mut search, (input, row), ctx)?,
            };
            if stopped {
                return Ok(search.ends);
            }
            std::mem::swap(&mut self.frontier, &mut self.next);
            self.next.clear();
        }
        Ok(search.ends)
    }

    /// One level on the query's thread: each frontier vertex's relationships read, then
    /// walked. Whether the search is over (the bound end found).
    fn walk_level(
        &mut self,
        search: &mut Search,
        at: (&Batch, usize),
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        let mut found = std::mem::take(&mut self.found);
        for i in 0..self.frontier.len() {
            let (u, branch_u) = self.frontier[i];
            found.clear();
            relationships_into(ctx.tx, u, &self.spec.types, self.spec.direction, &mut found)?;
            if self.walk(search, (u, branch_u), &found, at, ctx)? {
                self.found = found;
                return Ok(true);
            }
        }
        self.found = found;
        Ok(false)
    }

    /// One level with its relationships gathered by the forks, chunk by chunk, while the
    /// query's thread walks the chunks in frontier order (see PARALLEL FRONTIERS).
    fn walk_level_gathered(
        &mut self,
        search: &mut Search,
        at: (&Batch, usize),
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        let frontier = std::mem::take(&mut self.frontier);
        let mut forks = std::mem::take(&mut self.forks);
        let spec = self.spec.clone();
        let chunks: Vec<&[(VertexId, u32)]> = frontier.chunks(FRONTIER_CHUNK_VERTICES).collect();
        let gatherers = forks.len();
        let outcome = std::thread::scope(|scope| {
            let mut receivers = Vec::with_capacity(gatherers);
            let mut handles = Vec::with_capacity(gatherers);
            for (k, fork) in forks.iter_mut().enumerate() {
                let (sender, receiver) = std::sync::mpsc::sync_channel(GATHERED_CHUNKS_AHEAD);
                receivers.push(receiver);
                let (chunks, spec) = (&chunks, &spec);
                handles.push(scope.spawn(move || {
                    for chunk in chunks.iter().skip(k).step_by(gatherers) {
                        let (mut found, mut ends) = (Vec::new(), Vec::new());
                        let gathered = gather_into(fork, spec, chunk, &mut found, &mut ends);
                        let failed = gathered.is_err();
                        // A closed channel: the walk stopped; nothing more is wanted.
                        if sender.send(gathered.map(|()| (found, ends))).is_err() || failed {
                            return;
                        }
                    }
                }));
            }
            let mut walked = Ok(false);
            for (c, chunk) in chunks.iter().enumerate() {
                let message = receivers[c % gatherers].recv().unwrap_or_else(|_| {
                    Err(QueryError::runtime(
                        ErrorClass::DatabaseError,
                        "Internal",
                        "a frontier-gathering thread stopped without its chunk",
                    ))
                });
                walked = message.and_then(|(found, ends)| {
                    self.walk_chunk(search, chunk, (&found, &ends), at, ctx)
                });
                if !matches!(walked, Ok(false)) {
                    break;
                }
            }
            drop(receivers);
            for handle in handles {
                // A panicking gatherer closed its channel: the walk reported it above.
                let _ = handle.join();
            }
            walked
        });
        for fork in &mut forks {
            ctx.tx.absorb_reads(fork.take_reads());
        }
        self.frontier = frontier;
        self.forks = forks;
        outcome
    }

    /// Walks the gathered relationships of `chunk` (each vertex's run ends at its `ends`
    /// offset in `found`).
    fn walk_chunk(
        &mut self,
        search: &mut Search,
        chunk: &[(VertexId, u32)],
        (found, ends): (&[(EdgeId, VertexId)], &[usize]),
        at: (&Batch, usize),
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        debug_assert_eq!(ends.len(), chunk.len());
        let mut run_start = 0;
        for (&vertex, &run_end) in chunk.iter().zip(ends) {
            if self.walk(search, vertex, &found[run_start..run_end], at, ctx)? {
                return Ok(true);
            }
            run_start = run_end;
        }
        Ok(false)
    }

    /// Takes the relationships `hops` of frontier vertex `u` (with its branch): marks the
    /// vertices first reached, queues them for the next level, records ends and closed
    /// trails through the start. Whether the search is over (the bound end found).
    fn walk(
        &mut self,
        search: &mut Search,
        (u, branch_u): (VertexId, u32),
        hops: &[(EdgeId, VertexId)],
        (input, row): (&Batch, usize),
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        let (from, level, max) = (search.from, search.level, search.max);
        let undirected = search.undirected;
        for &(e, w) in hops {
            if !path_rel_ok(&self.spec, &self.length, input, row, (u, e, w), ctx)? {
                continue;
            }
            // The length of a closed trail through the start this relationship proves, if
            // any (see THE START ITSELF).
            let mut closes: Option<u64> = None;
            if w == from {
                let over_tree_edge = undirected && self.roots.get(&u) == Some(&e);
                if !over_tree_edge {
                    closes = Some(level);
                }
            } else if let Some((level_w, branch_w)) =
                undirected.then(|| self.visited.get(w)).flatten()
            {
                if branch_w != branch_u {
                    let over_tree_edge = u == from && self.roots.get(&w) == Some(&e);
                    if !over_tree_edge {
                        // u is on the level before this one.
                        closes = Some(level + u64::from(level_w));
                    }
                }
            } else {
                let branch = if u == from {
                    search.branches + 1
                } else {
                    branch_u
                };
                if !self.visited.insert(w, (level as u32, branch)) {
                    continue;
                }
                if u == from {
                    search.branches += 1;
                    if undirected {
                        self.roots.insert(w, e);
                    }
                }
                if level < max {
                    // The last level is never expanded.
                    self.next.push((w, branch));
                }
                if search.wanted(w) {
                    search.ends.push(w);
                    if search.target.is_some() {
                        return Ok(true);
                    }
                }
            }
            if !search.start_done && closes.is_some_and(|length| length <= max) {
                search.start_done = true;
                if search.wanted(from) {
                    search.ends.push(from);
                    if search.target.is_some() {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }
}

/// The state of one search (see THE SEARCH).
struct Search {
    from: VertexId,
    /// The bound end node, if any: the search stops when it is found.
    target: Option<VertexId>,
    max: u64,
    /// The level being expanded (its vertices are `level` hops from the start).
    level: u64,
    undirected: bool,
    /// Level-1 vertices numbered so far (their branches).
    branches: u32,
    /// Whether the start's own membership among the ends is decided.
    start_done: bool,
    ends: Vec<VertexId>,
}

impl Search {
    /// Whether `v` is wanted as an end (all of them, or the bound one).
    fn wanted(&self, v: VertexId) -> bool {
        self.target.is_none_or(|t| t == v)
    }
}

impl Drop for DistinctEnds {
    fn drop(&mut self) {
        std::mem::take(&mut self.visited).into_pool();
    }
}

impl RowFn for DistinctEnds {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let fan = match self.rest.take() {
            Some(rest) => rest,
            None => {
                let Some(ends) = ends_of(&self.spec, input, row)? else {
                    return Ok(());
                };
                FanOut::new(Arc::new(self.search(input, row, ctx, ends)?))
            }
        };
        let (rel, to, to_bound) = (self.spec.rel, self.spec.to, self.spec.to_bound);
        self.rest = fan.emit(input, row, out, |out, end| {
            out.set_last(rel, Value::Null);
            if !to_bound {
                out.set_last(to, Value::Node(*end));
            }
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Across the move to dense arrays and from search to search, with and without marks
    /// (and across the epoch's wrap), a vertex is visited exactly once per search.
    #[test]
    fn the_visited_set_forgets_each_search() {
        let mut visited = Visited::default();
        let vertex = |i: u32| VertexId::new(i % 3, i * 7);
        let n = (SPARSE_MAX_VERTICES * 3) as u32;
        for search in 0..6u32 {
            let marked = search % 2 == 1;
            if search == 4 {
                visited.epoch = u32::MAX; // the next search wraps the epoch
            }
            visited.start_search(marked);
            for i in 0..n {
                assert!(
                    visited.insert(vertex(i), (i, search)),
                    "search {search}: {i}"
                );
            }
            for i in 0..n {
                assert!(!visited.insert(vertex(i), (0, 0)));
                if marked {
                    assert_eq!(visited.get(vertex(i)), Some((i, search)));
                }
            }
            if marked {
                assert_eq!(visited.get(vertex(n + 1)), None);
            }
        }
    }
}
