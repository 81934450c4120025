//! Scans and seeks: the operators that start a pattern part — a label scan, a union of label
//! scans or an all-nodes scan, a key, index or id seek (falling back to the label scan when
//! the index cannot answer), and a relationship index seek binding a relationship with both
//! its ends — and the count of one type's relationships that replaces a scan and expand
//! (`RelationshipCount`).
//!
//! EXACT SEEKS
//! ===========
//! A key seek's plan keeps the predicate it came from in the Filter above the scan: the seek
//! may find more nodes than the predicate keeps (the indexes compare numbers by their `f64`)
//! or not run at all (no ready index, an operand it cannot look up: then the label is
//! scanned). When that Filter's predicate is exactly the seek's equality
//! (`plexus_plan::optimizer::pushdown::is_seek_equality`, linked when the plan is built)
//! and a secondary index seek (which re-checks each node's value in the transaction's view)
//! found a batch's every row by an equality whose operand keys exactly — a boolean, a
//! string, a number below 2^53 in magnitude, or null (nothing found) — the scan
//! marks the batch (`Batch::mark_sought`) and the Filter passes it whole without evaluating
//! the predicate: on those rows it is true, and it cannot fail (its operand was evaluated
//! for the seek on the same input row; the property read cannot fail). A batch holding any
//! row of a scan, an id seek or an inexact key is evaluated as before. `LOAD CSV … MATCH
//! (a:V {id: toInteger(r.src)})` spent ~15 % of its time re-checking what its seeks had found.

use super::expand::used_elsewhere;
use super::ops::{FanOut, RowFn};
use super::{Batch, ExecContext};
use crate::eval::{Env, eval};
use plexus_plan::logical::BExpr;
use plexus_plan::logical::{
    IdFunction, IdPredicate, IdSeek, KeySeek, RangeBound, RelSeekSpec, SeekPredicate,
};
use plexus_txn::validation::{Entity as ReadEntity, ReadItem};
use plexus_txn::{KeyRange, Transaction};
use plexus_types::{Direction, EdgeId, Value as StorageValue, VertexId, VertexRuns};
use plexus_value::error::{ErrorClass, Result};
use plexus_value::value::Value;
use std::ops::Bound;
use std::sync::Arc;

/// Longest `IN` list a seek looks up value by value; a longer one scans the label.
pub const MAX_SEEK_VALUES: usize = 10_000;

pub(super) struct NodeScan {
    pub(super) slot: usize,
    pub(super) label: Option<Arc<str>>,
    pub(super) label_union: Vec<Arc<str>>,
    pub(super) seek: Option<KeySeek>,
    pub(super) id_seek: Option<IdSeek>,
    /// The scanned ids, read once per run (the scan's input may have many rows).
    pub(super) cache: Option<Arc<Vec<VertexId>>>,
    /// The nodes of the current input row that did not fit in the last batch, and whether an
    /// exact equality seek found them (see EXACT SEEKS).
    pub(super) rest: Option<(FanOut<VertexId>, bool)>,
}

/// One index look-up of a seek.
enum Lookup {
    /// A value in the label's primary-key indexes.
    Key(StorageValue),
    /// A key range in the seek's secondary index.
    Index(KeyRange),
}

impl NodeScan {
    /// The nodes the seek finds for this input row, when the indexes can answer exactly; else
    /// `None` (scan the label). `IN` looks each element of the list up (at most
    /// [`MAX_SEEK_VALUES`]) and unions the rows; a range or prefix is one walk of the index.
    /// With the nodes, whether the seek was an exact equality (see EXACT SEEKS).
    fn seek(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<(Vec<VertexId>, bool)>> {
        let (Some(label), Some(seek)) = (&self.label, &self.seek) else {
            return Ok(None);
        };
        sought(seek, input, row, ctx, |ctx, lookup| match lookup {
            Lookup::Key(value) => ctx.tx.seek_by_key(label, &seek.key, value),
            Lookup::Index(range) => ctx.tx.seek_by_index(label, &seek.key, range),
        })
    }

    /// The nodes the id seek names for this input row that exist in the transaction's view
    /// and carry the scan's label, in id order; `None` (scan) without an id seek, or when its
    /// operand fails to evaluate or is a list too long or not a list (the filter above then
    /// decides, as for a key seek's operands, see [`sought`]).
    ///
    /// Under SERIALIZABLE each id is recorded as an existence read — by `vertex_exists`, and
    /// here for ids beyond a table's allocated rows, which it does not record — and each
    /// existing node's labels as a label read, so a concurrent create or delete of a sought
    /// node, or a change of its labels, conflicts. Unlike a scan, no label scan is recorded: a
    /// concurrent insert of another node cannot change what an id names.
    fn seek_ids(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Vec<VertexId>>> {
        let Some(id_seek) = &self.id_seek else {
            return Ok(None);
        };
        let values = match id_seek_values(id_seek, input, row, ctx) {
            Ok(Some(values)) => values,
            Ok(None) => return Ok(None),
            Err(e) if e.class != ErrorClass::DatabaseError => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut ids: Vec<VertexId> = values
            .iter()
            .filter_map(|value| named_vertex(id_seek.function, value))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut found = Vec::with_capacity(ids.len());
        for v in ids {
            if !ctx.tx.vertex_exists(v)? {
                ctx.tx
                    .absorb_reads([ReadItem::Exists(ReadEntity::Vertex(v))]);
                continue;
            }
            if let Some(label) = &self.label
                && !ctx.tx.vertex_has_labels(v, &[&**label])?
            {
                continue;
            }
            found.push(v);
        }
        Ok(Some(found))
    }
}

/// The values an id seek looks up for one input row: its operand, or the elements of its
/// list (`IN null` none); `None` for a list longer than [`MAX_SEEK_VALUES`] or a non-list,
/// which the scan and the filter above decide.
fn id_seek_values(
    id_seek: &IdSeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
) -> Result<Option<Vec<Value>>> {
    Ok(match &id_seek.predicate {
        IdPredicate::Equal(value) => Some(vec![eval(value, &mut Env::new(input, row), ctx)?]),
        IdPredicate::In(list) => match eval(list, &mut Env::new(input, row), ctx)? {
            Value::Null => Some(Vec::new()),
            Value::List(items) if items.len() <= MAX_SEEK_VALUES => Some(items.to_vec()),
            _ => None,
        },
    })
}

/// Vertex ids have a table below 2^21 in any real database, so below 2^53 as an `id()`: an
/// integral float beyond names no node (it could not be told from its neighbours anyway).
const MAX_FLOAT_VERTEX_ID: f64 = 9_007_199_254_740_992.0;

/// The vertex `value` names as the result of `function`: for `id`, a non-negative integer
/// `table << 32 | offset` (or a float equal to one, as `1 = 1.0` in Cypher); for `elementId`,
/// a string `v<table>:<offset>` (`VertexId`'s `Display`). Anything else — null, another type,
/// a malformed string, a relationship's `e…` id — names none.
pub(super) fn named_vertex(function: IdFunction, value: &Value) -> Option<VertexId> {
    let from_id = |id: i64| {
        let id = u64::try_from(id).ok()?;
        let table = u32::try_from(id >> 32).ok()?;
        Some(VertexId::new(table, (id & u64::from(u32::MAX)) as u32))
    };
    match (function, value) {
        (IdFunction::Id, Value::Int(id)) => from_id(*id),
        (IdFunction::Id, Value::Float(f))
            if f.fract() == 0.0 && (0.0..MAX_FLOAT_VERTEX_ID).contains(f) =>
        {
            from_id(*f as i64)
        }
        (IdFunction::ElementId, Value::String(s)) => s.parse().ok(),
        _ => None,
    }
}

impl RowFn for NodeScan {
    fn apply(
        &mut self,
        input: &Batch,
        row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let (fan, exact) = match self.rest.take() {
            Some(rest) => rest,
            None => {
                let (found, exact) = match self.seek_ids(input, row, ctx)? {
                    Some(found) => (Some(found), false),
                    None => match self.seek(input, row, ctx)? {
                        Some((found, exact)) => (Some(found), exact),
                        None => (None, false),
                    },
                };
                let nodes = or_scanned(found, &mut self.cache, || {
                    scan_nodes(ctx.tx, self.label.as_deref(), &self.label_union)
                })?;
                (FanOut::new(nodes), exact)
            }
        };
        out.mark_sought(exact, out.is_empty());
        let slot = self.slot;
        self.rest = fan
            .emit(input, row, out, |out, &v| {
                out.set_last(slot, Value::Node(v))
            })
            .map(|rest| (rest, exact));
        Ok(())
    }

    fn reset(&mut self) {
        self.cache = None;
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

/// The nodes a node scan reads when no seek answers, in id order: those carrying `label`,
/// else (`label_union` non-empty) those carrying any of `label_union`, each once, else every
/// node. Under SERIALIZABLE each label scan is recorded as a read.
pub(super) fn scan_nodes(
    tx: &mut Transaction,
    label: Option<&str>,
    label_union: &[Arc<str>],
) -> plexus_types::Result<Vec<VertexId>> {
    match label {
        Some(label) => tx.scan_label(label),
        None if !label_union.is_empty() => tx.scan_any_label(label_union),
        None => tx.scan_all_vertices(),
    }
}

/// [`scan_nodes`] as runs of consecutive vertices (a parallel scan's morsels are positions
/// in it): a label's scan lists whole runs without an id per vertex where it can
/// (`Transaction::scan_label_runs`).
pub(super) fn scan_node_runs(
    tx: &mut Transaction,
    label: Option<&str>,
    label_union: &[Arc<str>],
) -> plexus_types::Result<VertexRuns> {
    match label {
        Some(label) => tx.scan_label_runs(label),
        None => Ok(VertexRuns::from_ids(scan_nodes(tx, None, label_union)?)),
    }
}

/// A relationship with its ends as a relationship index seek binds them: (relationship, left
/// end, right end).
type RelMatch = (EdgeId, VertexId, VertexId);

/// See [`RelSeekSpec`]: per input row, the relationships of the type that the index finds —
/// or, when it cannot answer (no ready index, an operand it cannot seek), every relationship
/// of the type — bound with their ends in each orientation the pattern allows. The filter
/// above checks the seek's predicate either way.
pub(super) struct RelationshipIndexSeek {
    pub(super) spec: RelSeekSpec,
    /// The relationships of the type, scanned once per run when the index cannot answer.
    pub(super) scanned: Option<Arc<Vec<EdgeId>>>,
    /// The matches of the current input row that did not fit in the last batch.
    pub(super) rest: Option<FanOut<RelMatch>>,
}

impl RelationshipIndexSeek {
    /// The relationships the seek finds for this input row (sorted, each once), or `None`
    /// when the index cannot answer. `IN` looks each element up and unions the results.
    fn seek(
        &self,
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Option<Vec<EdgeId>>> {
        let RelSeekSpec { rel_type, seek, .. } = &self.spec;
        let found = sought(seek, input, row, ctx, |ctx, lookup| match lookup {
            Lookup::Index(range) => ctx.tx.seek_edges_by_index(rel_type, &seek.key, range),
            // Relationships have no primary keys: the planner always names an index.
            Lookup::Key(_) => Ok(None),
        })?;
        Ok(found.map(|(edges, _)| edges))
    }

    /// `edges` with their ends, in each orientation the pattern's direction allows (an
    /// undirected self-loop once); without the relationships used elsewhere in the MATCH, and,
    /// when one variable is at both ends, without those that are not self-loops.
    fn matches(
        &self,
        edges: &[EdgeId],
        input: &Batch,
        row: usize,
        ctx: &mut ExecContext,
    ) -> Result<Vec<RelMatch>> {
        let spec = &self.spec;
        let mut found = Vec::new();
        for &e in edges {
            if used_elsewhere(input, row, &spec.distinct_from, e) {
                continue;
            }
            let (src, dst) = ctx.tx.edge_endpoints(e)?;
            let orientations = match spec.direction {
                Direction::Out => [Some((src, dst)), None],
                Direction::In => [Some((dst, src)), None],
                Direction::Both => [Some((src, dst)), (src != dst).then_some((dst, src))],
            };
            for (left, right) in orientations.into_iter().flatten() {
                if spec.left != spec.right || left == right {
                    found.push((e, left, right));
                }
            }
        }
        Ok(found)
    }
}

impl RowFn for RelationshipIndexSeek {
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
                let found = self.seek(input, row, ctx)?;
                let rel_type = &self.spec.rel_type;
                let edges = or_scanned(found, &mut self.scanned, || ctx.tx.scan_edges(rel_type))?;
                FanOut::new(Arc::new(self.matches(&edges, input, row, ctx)?))
            }
        };
        let RelSeekSpec {
            left, rel, right, ..
        } = self.spec;
        self.rest = fan.emit(input, row, out, |out, &(e, l, r)| {
            out.set_last(rel, Value::Rel(e));
            out.set_last(left, Value::Node(l));
            out.set_last(right, Value::Node(r));
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.scanned = None;
        self.rest = None;
    }

    fn pending(&self) -> bool {
        self.rest.is_some()
    }
}

/// The union (sorted, each once) of what `find` answers for each look-up of `seek` for this
/// input row, or `None` — scan instead — when the operands cannot be sought or `find` cannot
/// answer one of the look-ups.
///
/// An operand that fails to evaluate (`1 / 0`, a type error) scans too: the filter above
/// evaluates the same operand on the same input row for every node the scan offers, so it
/// raises the error on the first one — or never, when the label is empty or an earlier
/// conjunct of the filter is false for every node — exactly as the plan without the seek.
/// Storage errors (`DatabaseError`) are not the operand's and fail the statement.
fn sought<T: Ord>(
    seek: &KeySeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
    mut find: impl FnMut(&mut ExecContext, &Lookup) -> plexus_types::Result<Option<Vec<T>>>,
) -> Result<Option<(Vec<T>, bool)>> {
    let (lookups, exact) = match lookups(seek, input, row, ctx) {
        Ok(Some(lookups)) => lookups,
        Ok(None) => return Ok(None),
        Err(e) if e.class != ErrorClass::DatabaseError => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for lookup in &lookups {
        let Some(ids) = find(ctx, lookup)? else {
            return Ok(None);
        };
        found.extend(ids);
    }
    found.sort_unstable();
    found.dedup();
    Ok(Some((found, exact)))
}

/// What a seek `found` — or, when it could not answer, what `scan` reads, once per run: kept
/// in `scanned` (the scan does not depend on the input row).
fn or_scanned<T>(
    found: Option<Vec<T>>,
    scanned: &mut Option<Arc<Vec<T>>>,
    scan: impl FnOnce() -> plexus_types::Result<Vec<T>>,
) -> Result<Arc<Vec<T>>> {
    if let Some(found) = found {
        return Ok(Arc::new(found));
    }
    if let Some(items) = scanned {
        return Ok(items.clone());
    }
    let items = Arc::new(scan()?);
    *scanned = Some(items.clone());
    Ok(items)
}

/// What `seek` looks up for one input row, or `None` when its operands are of a type the
/// indexes cannot seek (the scan and the filter above it decide); with the look-ups, whether
/// they answer the seek exactly (see EXACT SEEKS).
fn lookups(
    seek: &KeySeek,
    input: &Batch,
    row: usize,
    ctx: &mut ExecContext,
) -> Result<Option<(Vec<Lookup>, bool)>> {
    let mut operand = |e: &BExpr| -> Result<Option<StorageValue>> {
        Ok(eval(e, &mut Env::new(input, row), ctx)?.to_storage())
    };
    let by_index = seek.index.is_some();
    let inexact = |lookups: Option<Vec<Lookup>>| lookups.map(|l| (l, false));
    Ok(match &seek.predicate {
        SeekPredicate::Equal(value) => match operand(value)? {
            // `x = null` is never true.
            Some(StorageValue::Null) => Some((Vec::new(), true)),
            value => value.and_then(|value| {
                // A primary-key look-up answers from the transaction's key claims, which a
                // later `SET` of the key does not revisit: only index seeks re-check values.
                let exact = by_index && exact_key(&value);
                lookup(by_index, value).map(|l| (vec![l], exact))
            }),
        },
        SeekPredicate::In(list) => inexact(match eval(list, &mut Env::new(input, row), ctx)? {
            // `x IN null` is never true; a non-list is the filter's type error to raise.
            Value::Null => Some(Vec::new()),
            Value::List(items) if items.len() <= MAX_SEEK_VALUES => {
                // Nor does `x IN [null]` find anything.
                let values = items.iter().filter(|v| !v.is_null());
                values
                    .map(|v| v.to_storage().and_then(|v| lookup(by_index, v)))
                    .collect()
            }
            _ => None,
        }),
        // The planner gives ranges and prefixes a secondary index; without one, scan.
        _ if !by_index => None,
        SeekPredicate::Range { lower, upper } => {
            let lower = range_bound(lower.as_ref(), &mut operand)?;
            let upper = range_bound(upper.as_ref(), &mut operand)?;
            let range = lower
                .zip(upper)
                .and_then(|(lower, upper)| KeyRange::between(lower.as_ref(), upper.as_ref()));
            inexact(range.map(|range| vec![Lookup::Index(range)]))
        }
        SeekPredicate::Prefix(prefix) => {
            let range = operand(prefix)?.and_then(|prefix| KeyRange::prefix(&prefix));
            inexact(range.map(|range| vec![Lookup::Index(range)]))
        }
    })
}

/// Largest magnitude below which a number's index key (its `f64`) names it exactly.
const EXACT_KEY_MAGNITUDE: f64 = 9_007_199_254_740_992.0; // 2^53

/// Whether every node an equality seek finds for `value` holds a value Cypher's `=` finds
/// equal to it (see EXACT SEEKS): a boolean, a string, or a number below 2^53 in magnitude.
/// The indexes compare numbers by their `f64`, so beyond 2^53 neighbouring integers share a
/// key, and the filter above must tell them apart.
fn exact_key(value: &StorageValue) -> bool {
    match value {
        StorageValue::Bool(_) | StorageValue::String(_) => true,
        StorageValue::Int(i) => (*i as f64).abs() < EXACT_KEY_MAGNITUDE,
        StorageValue::Float(f) => f.abs() < EXACT_KEY_MAGNITUDE,
        _ => false,
    }
}

/// The look-up of `value` (not null): in a secondary index (`None` if it is not indexable)
/// or in the primary-key indexes.
fn lookup(by_index: bool, value: StorageValue) -> Option<Lookup> {
    if by_index {
        KeyRange::equal(&value).map(Lookup::Index)
    } else {
        Some(Lookup::Key(value))
    }
}

/// One side of a range seek with its operand evaluated (`Unbounded` when the side is
/// missing), or `None` if the operand is not a storable value.
fn range_bound(
    bound: Option<&RangeBound>,
    operand: &mut impl FnMut(&BExpr) -> Result<Option<StorageValue>>,
) -> Result<Option<Bound<StorageValue>>> {
    let Some(bound) = bound else {
        return Ok(Some(Bound::Unbounded));
    };
    let value = operand(&bound.value)?;
    Ok(value.map(|value| {
        if bound.inclusive {
            Bound::Included(value)
        } else {
            Bound::Excluded(value)
        }
    }))
}

/// `RelationshipCount` (see `optimizer::count`): per input row, one row of nulls with the
/// number of relationships of the types (none: of every type) in `slot`, counted from the
/// types' rows.
pub(super) struct RelationshipCount {
    pub(super) slot: usize,
    pub(super) rel_types: Vec<Arc<str>>,
}

impl RowFn for RelationshipCount {
    fn apply(
        &mut self,
        input: &Batch,
        _row: usize,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<()> {
        let count = match &self.rel_types[..] {
            [] => ctx.tx.count_all_edges()?,
            types => {
                let mut count = 0;
                for ty in types {
                    count += ctx.tx.count_edges(ty)?;
                }
                count
            }
        };
        let count = i64::try_from(count).expect("fewer than 2^63 relationships");
        out.push_row(vec![Value::Null; input.width()]);
        out.set_last(self.slot, Value::Int(count));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_types::VertexId;

    #[test]
    fn an_id_names_the_vertex_of_its_table_and_offset_and_nothing_else_names_one() {
        let v = VertexId::new(3, 7);
        let id = Value::Int((3 << 32) | 7);
        assert_eq!(named_vertex(IdFunction::Id, &id), Some(v));
        let float = Value::Float(((3_i64 << 32) | 7) as f64);
        assert_eq!(named_vertex(IdFunction::Id, &float), Some(v));
        assert_eq!(
            named_vertex(IdFunction::ElementId, &Value::from("v3:7")),
            Some(v)
        );
        for (function, value) in [
            (IdFunction::Id, Value::Int(-1)),
            (IdFunction::Id, Value::Float(0.5)),
            (IdFunction::Id, Value::Float(f64::NAN)),
            (IdFunction::Id, Value::Float(1e300)),
            (IdFunction::Id, Value::from("v3:7")),
            (IdFunction::Id, Value::Null),
            (IdFunction::ElementId, id.clone()),
            (IdFunction::ElementId, Value::Null),
            (IdFunction::ElementId, Value::from("e3:7")),
            (IdFunction::ElementId, Value::from("v3:+7")),
            (IdFunction::ElementId, Value::from("v3")),
            (IdFunction::ElementId, Value::from("v:7")),
            (IdFunction::ElementId, Value::from("v3:7:1")),
            (IdFunction::ElementId, Value::from("v3:4294967296")),
        ] {
            assert_eq!(named_vertex(function, &value), None, "{value:?}");
        }
    }
}
