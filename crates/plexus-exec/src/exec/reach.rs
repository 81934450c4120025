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
//! The visited set is a per-table array of epoch-stamped marks (`Mark`: level and branch),
//! reused across input rows — a new search bumps the epoch instead of clearing. Memory: 12
//! bytes per vertex offset up to the largest offset reached, per table.

use super::expand::{as_node, path_rel_ok, relationships_into};
use super::ops::RowFn;
use super::{Batch, ExecContext};
use plexus_plan::logical::{ExpandSpec, MAX_VAR_LENGTH_DEPTH, VarLengthSpec};
use plexus_types::{Direction, EdgeId, VertexId, VertexTableId};
use plexus_value::error::Result;
use plexus_value::value::Value;
use std::collections::HashMap;

/// A vertex's mark in the current search.
#[derive(Clone, Copy, Default)]
struct Mark {
    epoch: u32,
    level: u32,
    /// 0 for the start; else the index of the level-1 vertex the BFS path starts with.
    branch: u32,
}

/// Epoch-stamped marks per vertex table (see STATE AND LIMITS).
#[derive(Default)]
struct Visited {
    epoch: u32,
    tables: Vec<(VertexTableId, Vec<Mark>)>,
}

impl Visited {
    fn start_search(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            for (_, marks) in &mut self.tables {
                marks.fill(Mark::default());
            }
            self.epoch = 1;
        }
    }

    fn get(&self, v: VertexId) -> Option<Mark> {
        let (_, marks) = self.tables.iter().find(|(t, _)| *t == v.table)?;
        marks
            .get(v.offset as usize)
            .filter(|m| m.epoch == self.epoch)
            .copied()
    }

    fn set(&mut self, v: VertexId, level: u32, branch: u32) {
        let index = match self.tables.iter().position(|(t, _)| *t == v.table) {
            Some(i) => i,
            None => {
                self.tables.push((v.table, Vec::new()));
                self.tables.len() - 1
            }
        };
        let marks = &mut self.tables[index].1;
        let offset = v.offset as usize;
        if marks.len() <= offset {
            marks.resize((offset + 1).max(marks.len() * 2), Mark::default());
        }
        marks[offset] = Mark {
            epoch: self.epoch,
            level,
            branch,
        };
    }
}

pub(super) struct DistinctEnds {
    spec: ExpandSpec,
    length: VarLengthSpec,
    visited: Visited,
    frontier: Vec<VertexId>,
    next: Vec<VertexId>,
    found: Vec<(EdgeId, VertexId)>,
    /// Undirected searches: the tree relationship of each level-1 vertex.
    roots: HashMap<VertexId, EdgeId>,
}

impl DistinctEnds {
    pub(super) fn new(spec: ExpandSpec, length: VarLengthSpec) -> Self {
        debug_assert!(length.ends_only && length.shortest.is_none() && length.min <= 1);
        DistinctEnds {
            spec,
            length,
            visited: Visited::default(),
            frontier: Vec::new(),
            next: Vec::new(),
            found: Vec::new(),
            roots: HashMap::new(),
        }
    }

    fn emit(&self, input: &Batch, row: usize, out: &mut Batch, end: VertexId) {
        out.push_from(input, row);
        out.set_last(self.spec.rel, Value::Null);
        if !self.spec.to_bound {
            out.set_last(self.spec.to, Value::Node(end));
        }
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
        let Some(from) = as_node(input.get(self.spec.from, row), "the start of an expand")? else {
            return Ok(());
        };
        let target = if self.spec.to_bound {
            match as_node(input.get(self.spec.to, row), "the end of an expand")? {
                Some(t) => Some(t),
                None => return Ok(()),
            }
        } else {
            None
        };
        let max = self.length.max.unwrap_or(MAX_VAR_LENGTH_DEPTH);
        let undirected = self.spec.direction == Direction::Both;
        // Whether `v` is wanted as an end (all of them, or the bound one).
        let wanted = |v: VertexId| target.is_none_or(|t| t == v);
        let mut start_done = self.length.min == 0;
        if start_done && wanted(from) {
            self.emit(input, row, out, from);
            if target.is_some() {
                return Ok(());
            }
        }
        self.visited.start_search();
        self.visited.set(from, 0, 0);
        self.roots.clear();
        self.frontier.clear();
        self.next.clear();
        self.frontier.push(from);
        let mut branches = 0u32;
        let mut level = 0u64;
        while !self.frontier.is_empty() && level < max {
            level += 1;
            let mut frontier = std::mem::take(&mut self.frontier);
            for &u in &frontier {
                let at_u = self.visited.get(u).expect("frontier vertices are visited");
                let mut found = std::mem::take(&mut self.found);
                found.clear();
                relationships_into(ctx, u, &self.spec.types, self.spec.direction, &mut found)?;
                for &(e, w) in &found {
                    if !path_rel_ok(&self.spec, &self.length, input, row, e, ctx)? {
                        continue;
                    }
                    // The length of a closed trail through the start this relationship
                    // proves, if any (see THE START ITSELF).
                    let mut closes: Option<u64> = None;
                    if w == from {
                        let over_tree_edge = undirected && self.roots.get(&u) == Some(&e);
                        if !over_tree_edge {
                            closes = Some(level);
                        }
                    } else if let Some(at_w) = self.visited.get(w) {
                        if undirected && at_w.branch != at_u.branch {
                            let over_tree_edge = u == from && self.roots.get(&w) == Some(&e);
                            if !over_tree_edge {
                                closes = Some(u64::from(at_u.level + at_w.level) + 1);
                            }
                        }
                    } else {
                        let branch = if u == from {
                            branches += 1;
                            if undirected {
                                self.roots.insert(w, e);
                            }
                            branches
                        } else {
                            at_u.branch
                        };
                        self.visited.set(w, level as u32, branch);
                        self.next.push(w);
                        if wanted(w) {
                            self.emit(input, row, out, w);
                            if target.is_some() {
                                self.found = found;
                                return Ok(());
                            }
                        }
                    }
                    if !start_done && closes.is_some_and(|length| length <= max) {
                        start_done = true;
                        if wanted(from) {
                            self.emit(input, row, out, from);
                            if target.is_some() {
                                self.found = found;
                                return Ok(());
                            }
                        }
                    }
                }
                self.found = found;
            }
            frontier.clear();
            self.frontier = std::mem::replace(&mut self.next, frontier);
        }
        Ok(())
    }
}
