//! `shortestPath` / `allShortestPaths` between two bound nodes.
//!
//! THE SEARCH
//! ==========
//! Without a path filter: a bidirectional breadth-first search. Each end keeps the level of
//! every vertex it reached and the (relationship, nearer vertex) pairs each was first reached
//! over; the end with the smaller frontier grows by a level, until a vertex it reaches is
//! known to the other end (or the levels add up to the upper bound). If the ends have grown
//! `f` and `b` levels when they first meet, the shortest path is `f + b` long and crosses the
//! *meeting layer* — the vertices at level `f` from the start and `b` from the target — at
//! exactly one vertex: no intersection existed at `f - 1` (or `b - 1`), so none is shorter, and
//! the vertex `f` steps along any path of length `f + b` is at levels `≤ f` and `≤ b`. The
//! shortest paths are the forward halves to a meeting vertex joined with its backward halves
//! (one for `shortestPath`, all for `allShortestPaths`, bounded by `var_length_path_limit`). The search walks only the
//! relationships that pass the pattern's filters (`rel_filter`: the property map and the
//! MATCH's `all(r IN relationships(p) WHERE …)`) and enters only vertices that pass
//! `node_filter` (`all(n IN nodes(p) WHERE …)`, both ends included) — so its answer is the
//! shortest path of which every relationship and node passes, as in Neo4j.
//!
//! With a path filter (the rest of the MATCH's WHERE that reads the path, see
//! `plexus_plan::optimizer::join_order::shortest`), the answer is the shortest path that satisfies it, which a
//! BFS over vertices cannot find: the search is exhaustive instead — every trail of length
//! `L` from the start, for `L = max(min, 1), …`, checked at the target, stopping at the first
//! length with a passing path (Neo4j's fallback). It is bounded by `var_length_path_limit`:
//! more trails explored than that fail the statement with `LimitExceeded`.

use super::expand::{VarExpand, relationships, too_many_paths};
use super::{Batch, ExecContext};
use crate::eval::{Env, eval, truthy};
use plexus_plan::logical::MAX_VAR_LENGTH_DEPTH;
use plexus_types::{Direction, EdgeId, VertexId};
use plexus_value::error::Result;
use plexus_value::value::Value;
use std::collections::HashMap;

impl VarExpand {
    /// The shortest paths (all of them with `all`) from `from` to `target` (see THE SEARCH).
    pub(super) fn shortest(
        &self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
        (from, target): (VertexId, VertexId),
        all: bool,
    ) -> Result<()> {
        if !self.node_ok(input, row, from, ctx)? || !self.node_ok(input, row, target, ctx)? {
            return Ok(());
        }
        if from == target && self.length.min == 0 && self.path_passes(input, row, &[], ctx)? {
            self.emit(input, row, out, &[], target);
            return Ok(());
        }
        if self.length.path_filter.is_some() {
            return self.shortest_exhaustive(input, row, out, ctx, (from, target), all);
        }
        if from == target {
            // A path of length 0 was the only one (above); a longer one is not shortest.
            return Ok(());
        }
        let max = self.length.max.unwrap_or(MAX_VAR_LENGTH_DEPTH);
        let mut forward = Side::new(from, self.spec.direction, true);
        let mut backward = Side::new(target, self.spec.direction.reversed(), false);
        let mut meeting = Vec::new();
        while meeting.is_empty()
            && !forward.frontier.is_empty()
            && !backward.frontier.is_empty()
            && forward.depth + backward.depth < max
        {
            // The smaller frontier grows a level (see THE SEARCH).
            let (grown, other) = if forward.frontier.len() <= backward.frontier.len() {
                (&mut forward, &backward)
            } else {
                (&mut backward, &forward)
            };
            self.grow(input, row, ctx, grown)?;
            let met = grown
                .frontier
                .iter()
                .filter(|w| other.level.contains_key(w));
            meeting.extend(met);
        }
        if meeting.is_empty() || forward.depth + backward.depth < self.length.min {
            return Ok(());
        }
        // Every shortest path crosses the meeting layer at exactly one vertex.
        let limit = if all { ctx.state.path_limit + 1 } else { 1 };
        let mut emitted = 0usize;
        for m in meeting {
            for head in forward.paths_to(m, limit) {
                for tail in backward.paths_to(m, limit) {
                    let rels: Vec<EdgeId> = head.iter().rev().chain(&tail).copied().collect();
                    self.emit(input, row, out, &rels, target);
                    emitted += 1;
                    if !all {
                        return Ok(());
                    }
                    if emitted > ctx.state.path_limit {
                        return Err(too_many_paths(ctx.state.path_limit));
                    }
                }
            }
        }
        Ok(())
    }

    /// Grows `side` by one level: its frontier's relationships that pass the pattern's
    /// filters, to vertices that pass the node filters, which become its frontier.
    fn grow(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
        side: &mut Side,
    ) -> Result<()> {
        side.depth += 1;
        let mut next = Vec::new();
        for v in std::mem::take(&mut side.frontier) {
            for (e, w) in relationships(ctx, v, &self.spec.types, side.direction)? {
                // The hop as the search from the start walks it.
                let hop = if side.forward { (v, e, w) } else { (w, e, v) };
                if !self.rel_ok(input, row, hop, ctx)? {
                    continue;
                }
                match side.level.get(&w) {
                    Some(&l) if l < side.depth => continue,
                    Some(_) => {}
                    None => {
                        if !self.node_ok(input, row, w, ctx)? {
                            continue;
                        }
                        side.level.insert(w, side.depth);
                        next.push(w);
                    }
                }
                side.links.entry(w).or_default().push((e, v));
            }
        }
        side.frontier = next;
        Ok(())
    }

    /// The shortest trails from `from` to `target` that pass the path filter, by length (see
    /// THE SEARCH).
    fn shortest_exhaustive(
        &self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
        (from, target): (VertexId, VertexId),
        all: bool,
    ) -> Result<()> {
        let max = self.length.max.unwrap_or(MAX_VAR_LENGTH_DEPTH);
        let mut explored = 0usize;
        for length in self.length.min.max(1)..=max {
            let mut emitted = false;
            let mut reached = false;
            let mut stack: Vec<(VertexId, Vec<EdgeId>)> = vec![(from, Vec::new())];
            while let Some((v, rels)) = stack.pop() {
                if rels.len() as u64 == length {
                    reached = true;
                    if v == target && self.path_passes(input, row, &rels, ctx)? {
                        self.emit(input, row, out, &rels, target);
                        if !all {
                            return Ok(());
                        }
                        emitted = true;
                    }
                    continue;
                }
                let mut next = Vec::new();
                for (e, w) in relationships(ctx, v, &self.spec.types, self.spec.direction)? {
                    if rels.contains(&e)
                        || !self.rel_ok(input, row, (v, e, w), ctx)?
                        || !self.node_ok(input, row, w, ctx)?
                    {
                        continue;
                    }
                    explored += 1;
                    if explored > ctx.state.path_limit {
                        return Err(too_many_paths(ctx.state.path_limit));
                    }
                    let mut extended = rels.clone();
                    extended.push(e);
                    next.push((w, extended));
                }
                stack.extend(next.into_iter().rev());
            }
            // No trail is this long: none is longer.
            if emitted || !reached {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Whether `v` passes every node filter of the pattern.
    fn node_ok(
        &self,
        input: &Batch,
        row: usize,
        v: VertexId,
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        for (slot, predicate) in &self.length.node_filter {
            let mut env = Env::new(input, row);
            env.push_local(*slot, Value::Node(v));
            if !truthy(&eval(predicate, &mut env, ctx)?) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the path of `rels` (from the start, in search order) passes the path filter.
    fn path_passes(
        &self,
        input: &Batch,
        row: usize,
        rels: &[EdgeId],
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        let Some(filter) = &self.length.path_filter else {
            return Ok(true);
        };
        let mut list: Vec<Value> = rels.iter().map(|e| Value::Rel(*e)).collect();
        if self.length.leftwards {
            list.reverse();
        }
        let mut env = Env::new(input, row);
        env.push_local(self.spec.rel, Value::list(list));
        if let Some((slot, path)) = &filter.path {
            let value = eval(path, &mut env, ctx)?;
            env.push_local(*slot, value);
        }
        Ok(truthy(&eval(&filter.predicate, &mut env, ctx)?))
    }
}

/// One end of the bidirectional search: the level of every vertex it reached and, for each,
/// the relationships it was first reached over (with the vertex one level nearer the end).
struct Side {
    /// The start's side (else the target's, walking against the pattern's direction).
    forward: bool,
    direction: Direction,
    level: HashMap<VertexId, u64>,
    links: HashMap<VertexId, Vec<(EdgeId, VertexId)>>,
    frontier: Vec<VertexId>,
    depth: u64,
}

impl Side {
    fn new(end: VertexId, direction: Direction, forward: bool) -> Side {
        Side {
            forward,
            direction,
            level: HashMap::from([(end, 0)]),
            links: HashMap::new(),
            frontier: vec![end],
            depth: 0,
        }
    }

    /// The shortest ways (at most `limit`) from this side's end to `v`, each as the
    /// relationships from `v` back to the end.
    fn paths_to(&self, v: VertexId, limit: usize) -> Vec<Vec<EdgeId>> {
        let mut paths = Vec::new();
        let mut stack: Vec<(VertexId, Vec<EdgeId>)> = vec![(v, Vec::new())];
        while let Some((at, rels)) = stack.pop() {
            if paths.len() >= limit {
                break;
            }
            let Some(links) = self.links.get(&at) else {
                paths.push(rels);
                continue;
            };
            for &(e, nearer) in links {
                let mut longer = rels.clone();
                longer.push(e);
                stack.push((nearer, longer));
            }
        }
        paths
    }
}
