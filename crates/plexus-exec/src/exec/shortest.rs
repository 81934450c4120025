//! `shortestPath` / `allShortestPaths` between two bound nodes.
//!
//! THE SEARCH
//! ==========
//! Without a path filter: a breadth-first search from the start that records, for each vertex,
//! every (relationship, predecessor) pair of its first level, stopping after the level that
//! reaches the target; the shortest paths are then read backwards from the target through
//! those pairs (one for `shortestPath`, all for `allShortestPaths`). The search walks only the
//! relationships that pass the pattern's filters (`rel_filter`: the property map and the
//! MATCH's `all(r IN relationships(p) WHERE …)`) and enters only vertices that pass
//! `node_filter` (`all(n IN nodes(p) WHERE …)`, both ends included) — so its answer is the
//! shortest path of which every relationship and node passes, as in Neo4j.
//!
//! With a path filter (the rest of the MATCH's WHERE that reads the path, see
//! `plexus_plan::bind::shortest`), the answer is the shortest path that satisfies it, which a
//! BFS over vertices cannot find: the search is exhaustive instead — every trail of length
//! `L` from the start, for `L = max(min, 1), …`, checked at the target, stopping at the first
//! length with a passing path (Neo4j's fallback). It is bounded by `var_length_path_limit`:
//! more trails explored than that fail the statement with `LimitExceeded`.

use super::expand::{VarExpand, relationships, too_many_paths};
use super::{Batch, ExecContext};
use crate::eval::{Env, eval, truthy};
use plexus_plan::logical::MAX_VAR_LENGTH_DEPTH;
use plexus_types::{EdgeId, VertexId};
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
        let max = self.length.max.unwrap_or(MAX_VAR_LENGTH_DEPTH);
        // BFS recording, for each vertex, the (edge, predecessor) pairs of its first level.
        let mut level_of: HashMap<VertexId, u64> = HashMap::from([(from, 0)]);
        let mut preds: HashMap<VertexId, Vec<(EdgeId, VertexId)>> = HashMap::new();
        let mut frontier = vec![from];
        let mut depth = 0;
        let mut found = false;
        while !frontier.is_empty() && depth < max && !found {
            depth += 1;
            let mut next = Vec::new();
            for v in frontier {
                for (e, w) in relationships(ctx, v, &self.spec.types, self.spec.direction)? {
                    if !self.rel_ok(input, row, e, ctx)? {
                        continue;
                    }
                    match level_of.get(&w) {
                        Some(&l) if l < depth => continue,
                        Some(_) => {}
                        None => {
                            if !self.node_ok(input, row, w, ctx)? {
                                continue;
                            }
                            level_of.insert(w, depth);
                            next.push(w);
                        }
                    }
                    preds.entry(w).or_default().push((e, v));
                    if w == target {
                        found = true;
                    }
                }
            }
            frontier = next;
        }
        if !found || depth < self.length.min {
            return Ok(());
        }
        // Enumerate paths backwards from the target.
        let mut stack: Vec<(VertexId, Vec<EdgeId>)> = vec![(target, Vec::new())];
        let mut emitted = 0;
        while let Some((v, rels)) = stack.pop() {
            if v == from && !rels.is_empty() {
                let mut forward = rels.clone();
                forward.reverse();
                self.emit(input, row, out, &forward, target);
                emitted += 1;
                if !all {
                    return Ok(());
                }
                if emitted > ctx.state.path_limit {
                    return Err(too_many_paths(ctx.state.path_limit));
                }
                continue;
            }
            for (e, p) in preds.get(&v).into_iter().flatten() {
                if level_of.get(p).copied().unwrap_or(u64::MAX) + 1
                    == level_of.get(&v).copied().unwrap_or(0)
                    && !rels.contains(e)
                {
                    let mut next = rels.clone();
                    next.push(*e);
                    stack.push((*p, next));
                }
            }
        }
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
                        || !self.rel_ok(input, row, e, ctx)?
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
