//! Expands: one hop along a pattern's relationship (`Expand`), or paths of `min..max` hops
//! (`VarExpand`, shortest paths included), from the node each input row binds. Trails are
//! enumerated depth first and resume across output batches (`Trails`), so one start with
//! millions of trails never builds one batch of them; the distinct-ends BFS is in `reach`,
//! shortest paths in `shortest`.

use super::ops::RowFn;
use super::{BATCH_ROWS, Batch, ExecContext};
use crate::eval::{Env, eval, truthy};
use plexus_cypher::ast::ShortestPath;
use plexus_plan::logical::{ExpandSpec, VarLengthSpec};
use plexus_txn::Transaction;
use plexus_types::{Direction, EdgeId, VertexId};
use plexus_value::error::{ErrorClass, QueryError, Result};
use plexus_value::value::Value;
use std::sync::Arc;

/// The relationships of `v` of the given types and direction, each once (an undirected
/// self-loop is listed once).
pub(crate) fn relationships(
    ctx: &mut ExecContext,
    v: VertexId,
    types: &[Arc<str>],
    direction: Direction,
) -> Result<Vec<(EdgeId, VertexId)>> {
    let mut found = Vec::new();
    relationships_into(ctx.tx, v, types, direction, &mut found)?;
    Ok(found)
}

/// [`relationships`], appended to `found`.
pub(super) fn relationships_into(
    tx: &mut Transaction,
    v: VertexId,
    types: &[Arc<str>],
    direction: Direction,
    found: &mut Vec<(EdgeId, VertexId)>,
) -> Result<()> {
    if types.is_empty() {
        return expand_type(tx, v, None, direction, found);
    }
    for (i, ty) in types.iter().enumerate() {
        // `[:A|A]` expands A once.
        if !types[..i].contains(ty) {
            expand_type(tx, v, Some(ty), direction, found)?;
        }
    }
    Ok(())
}

/// The relationships of one type (any with `None`) at `v`; both directions list a self-loop
/// once.
fn expand_type(
    tx: &mut Transaction,
    v: VertexId,
    ty: Option<&str>,
    direction: Direction,
    found: &mut Vec<(EdgeId, VertexId)>,
) -> Result<()> {
    match direction {
        Direction::Both => {
            tx.neighbors_into(v, ty, Direction::Out, found)?;
            let incoming = found.len();
            tx.neighbors_into(v, ty, Direction::In, found)?;
            // The self-loops among the incoming ones were listed as outgoing.
            let mut index = 0;
            found.retain(|(_, other)| {
                let keep = index < incoming || *other != v;
                index += 1;
                keep
            });
            Ok(())
        }
        d => Ok(tx.neighbors_into(v, ty, d, found)?),
    }
}

fn as_node(value: &Value, what: &str) -> Result<Option<VertexId>> {
    match value {
        Value::Node(v) => Ok(Some(*v)),
        Value::Null => Ok(None),
        other => Err(QueryError::type_error(format!(
            "expected {what} to be a node but was {}",
            other.type_name()
        ))),
    }
}

/// The start of an expand on `row` and its bound end (`to_bound`), or `None` when the row
/// expands to nothing (a null start or end).
pub(super) fn ends_of(
    spec: &ExpandSpec,
    input: &Batch,
    row: usize,
) -> Result<Option<(VertexId, Option<VertexId>)>> {
    let Some(from) = as_node(input.get(spec.from, row), "the start of an expand")? else {
        return Ok(None);
    };
    if !spec.to_bound {
        return Ok(Some((from, None)));
    }
    let to = as_node(input.get(spec.to, row), "the end of an expand")?;
    Ok(to.map(|to| (from, Some(to))))
}

/// Whether `e` is one of the relationships in the slots of `distinct_from`.
pub(super) fn used_elsewhere(
    input: &Batch,
    row: usize,
    distinct_from: &[usize],
    e: EdgeId,
) -> bool {
    distinct_from
        .iter()
        .any(|&slot| match input.get(slot, row) {
            Value::Rel(other) => *other == e,
            Value::List(items) => items.iter().any(|x| matches!(x, Value::Rel(o) if *o == e)),
            _ => false,
        })
}

pub(super) struct Expand {
    pub(super) spec: ExpandSpec,
    /// The current row's relationships (kept to reuse its allocation).
    pub(super) found: Vec<(EdgeId, VertexId)>,
}

impl RowFn for Expand {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let Expand { spec, found } = self;
        let Some((from, target)) = ends_of(spec, input, row)? else {
            return Ok(());
        };
        found.clear();
        relationships_into(ctx.tx, from, &spec.types, spec.direction, found)?;
        for &(e, other) in found.iter() {
            if target.is_some_and(|t| t != other)
                || used_elsewhere(input, row, &spec.distinct_from, e)
            {
                continue;
            }
            out.push_from(input, row);
            out.set_last(spec.rel, Value::Rel(e));
            if !spec.to_bound {
                out.set_last(spec.to, Value::Node(other));
            }
        }
        Ok(())
    }
}

pub(super) struct VarExpand {
    pub(super) spec: ExpandSpec,
    pub(super) length: VarLengthSpec,
    /// The trails of the current input row still to enumerate, when a full output batch
    /// stopped it (resumed by the next call, so a row with millions of trails never builds
    /// a batch of them).
    pub(super) trails: Option<Trails>,
}

/// A depth-first enumeration of trails in progress (see [`VarExpand::trails`]).
pub(super) struct Trails {
    /// (vertex, relationships so far), the next to visit on top.
    stack: Vec<(VertexId, Vec<EdgeId>)>,
    target: Option<VertexId>,
    emitted: usize,
}

/// One hop of a variable-length path as the search walks it: from `.0` over `.1` to `.2`,
/// in the direction from the expand's `from` slot toward its `to` slot.
pub(super) type Hop = (VertexId, EdgeId, VertexId);

/// Whether a variable-length pattern's path may take `hop`: its relationship is not bound
/// earlier in the same MATCH and passes the pattern's property map, and the hop passes a
/// quantified group's condition (with source and target as the pattern reads: a path planned
/// right to left walks them the other way round).
pub(super) fn path_rel_ok(
    spec: &ExpandSpec,
    length: &VarLengthSpec,
    input: &Batch,
    row: usize,
    (u, e, w): Hop,
    ctx: &mut ExecContext,
) -> Result<bool> {
    if used_elsewhere(input, row, &spec.distinct_from, e) {
        return Ok(false);
    }
    for (temp, predicate) in &length.rel_filter {
        let mut env = Env::new(input, row);
        env.push_local(*temp, Value::Rel(e));
        if !truthy(&eval(predicate, &mut env, ctx)?) {
            return Ok(false);
        }
    }
    if let Some(hop) = &length.hop_filter {
        let (source, target) = if length.leftwards { (w, u) } else { (u, w) };
        let mut env = Env::new(input, row);
        env.push_local(hop.from, Value::Node(source));
        env.push_local(hop.rel, Value::Rel(e));
        env.push_local(hop.to, Value::Node(target));
        if !truthy(&eval(&hop.predicate, &mut env, ctx)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

impl VarExpand {
    pub(super) fn rel_ok(
        &self,
        input: &Batch,
        row: usize,
        hop: Hop,
        ctx: &mut ExecContext,
    ) -> Result<bool> {
        path_rel_ok(&self.spec, &self.length, input, row, hop, ctx)
    }

    pub(super) fn emit(
        &self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        rels: &[EdgeId],
        end: VertexId,
    ) {
        out.push_from(input, row);
        // A list nothing reads is not built (`optimizer::var_length`, UNREAD LISTS).
        if !self.length.rels_unread {
            let mut list: Vec<Value> = rels.iter().map(|e| Value::Rel(*e)).collect();
            if self.length.leftwards {
                list.reverse();
            }
            out.set_last(self.spec.rel, Value::list(list));
        }
        if !self.spec.to_bound {
            out.set_last(self.spec.to, Value::Node(end));
        }
    }
}

pub(super) fn too_many_paths(limit: usize) -> QueryError {
    QueryError::runtime(
        ErrorClass::DatabaseError,
        "LimitExceeded",
        format!(
            "a variable-length pattern matched more than {limit} paths from one node \
             (the var_length_path_limit setting); if only its end nodes matter, leave the \
             relationship list and the path unused and de-duplicate the ends (count(DISTINCT b), \
             RETURN DISTINCT b, EXISTS {{ ... }}): the pattern then runs as a breadth-first \
             search that visits each node once"
        ),
    )
}

impl RowFn for VarExpand {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        if let Some(trails) = self.trails.take() {
            return self.enumerate(input, row, out, ctx, trails);
        }
        let Some((from, target)) = ends_of(&self.spec, input, row)? else {
            return Ok(());
        };
        if let Some(kind) = self.length.shortest {
            let Some(target) = target else {
                return Err(QueryError::runtime(
                    ErrorClass::SemanticError,
                    "UnboundShortestPath",
                    "shortestPath needs both end nodes bound",
                ));
            };
            return self.shortest(
                input,
                row,
                out,
                ctx,
                (from, target),
                kind == ShortestPath::All,
            );
        }
        let trails = Trails {
            stack: vec![(from, Vec::new())],
            target,
            emitted: 0,
        };
        self.enumerate(input, row, out, ctx, trails)
    }

    fn reset(&mut self) {
        self.trails = None;
    }

    fn pending(&self) -> bool {
        self.trails.is_some()
    }
}

impl VarExpand {
    /// Depth-first over (vertex, relationships so far), relationship-unique per path: every
    /// trail of `min..max` relationships, until the output batch is full (the rest kept in
    /// `self.trails`).
    fn enumerate(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
        mut trails: Trails,
    ) -> Result<()> {
        let max = self
            .length
            .max
            .unwrap_or(plexus_plan::logical::MAX_VAR_LENGTH_DEPTH);
        let min = self.length.min;
        while let Some((v, rels)) = trails.stack.pop() {
            let depth = rels.len() as u64;
            if depth >= min && trails.target.is_none_or(|t| t == v) {
                self.emit(input, row, out, &rels, v);
                trails.emitted += 1;
                if trails.emitted > ctx.state.path_limit {
                    return Err(too_many_paths(ctx.state.path_limit));
                }
            }
            if depth < max {
                let mut next = Vec::new();
                for (e, w) in relationships(ctx, v, &self.spec.types, self.spec.direction)? {
                    if rels.contains(&e) || !self.rel_ok(input, row, (v, e, w), ctx)? {
                        continue;
                    }
                    let mut extended = rels.clone();
                    extended.push(e);
                    next.push((w, extended));
                }
                // Reverse so that the first neighbour is explored first.
                trails.stack.extend(next.into_iter().rev());
            }
            if out.len() >= BATCH_ROWS && !trails.stack.is_empty() {
                self.trails = Some(trails);
                return Ok(());
            }
        }
        Ok(())
    }
}
