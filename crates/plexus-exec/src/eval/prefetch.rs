//! Node and relationship properties read for a whole batch before its rows are evaluated.
//!
//! WHY
//! ===
//! Evaluation is row at a time, and so, before this, was every `n.key`: per row the
//! transaction checked the entity's existence (one chunk latch), looked the key's name up,
//! consulted the write set and read the property (a second latch). A batch of 2,048 rows
//! usually holds entities of one table in runs of neighbouring rows, so reading a property
//! for the whole column at once (`Transaction::vertex_property_many`, `edge_property_many`:
//! one latch per chunk for both reads, the key resolved once) removes most of that work. This
//! is the vectorised part of evaluation: the column read is bulk, the expression around it
//! stays row at a time.
//!
//! WHAT IS READ
//! ============
//! [`PropertyReads::of`] lists the `slot.key` reads an expression makes on *every* row it is
//! evaluated for: the expression itself and, below it, operands that are always evaluated
//! (arithmetic, comparisons, function arguments, list and map items, a map projection's
//! base, the left side of AND / OR, both sides of XOR, which never short-cuts, …). Reads
//! under a branch that may be skipped (the right of AND / OR, CASE, comprehensions,
//! quantifiers, `reduce`, subqueries) are not
//! prefetched, so prefetching reads nothing evaluation would not, and records no read the
//! row-at-a-time plan would not (SERIALIZABLE read sets stay the same). One exception,
//! outside SERIALIZABLE only: a Filter whose predicate `eval::vector` covers lists the reads
//! under the right of AND / OR too ([`PropertyReads::with_branch_reads`]) — its vectorised
//! or compiled evaluation computes both sides on every row anyway, and without them the
//! right side's property would be read row by row (IC12's `tag.name = $c OR
//! baseTagClass.name = $c` over 81 K rows: ~240 ns a row). Under snapshot isolation no read
//! set is kept, so a read evaluation skips changes nothing but the work; under SERIALIZABLE
//! they are not fetched.
//!
//! TYPED COLUMNS
//! =============
//! When every row of the slot holds a node and the key is a BOOLEAN, INT64 or FLOAT64
//! property their tables declare in a column of its own — or keep undeclared with values of
//! one such type on every row that has it (storage's typed reads, UNDECLARED: a graph made by
//! `CREATE`) — the column is read as one typed vector
//! (`Transaction::vertex_typed_properties_many`: storage's typed column copied per chunk, a
//! slot's undeclared keys in one walk of the rows, no `Value` per row) and kept as an Arrow
//! array, which vectorised filters and the filter JIT
//! use as is; a row evaluated one at a time gets its value from the array. A declared STRING
//! column is read so too (its bytes copied into one buffer) only for reads marked
//! [`PropertyReads::with_typed_strings`] — a Filter whose predicate `eval::vector` covers,
//! which works on the bytes: for a row evaluated one at a time each string would be
//! allocated again, where the `Value` path shares the stored one. A parallel scan's column
//! of node ids (`context::Batch`, TYPED COLUMNS) is read typed whatever its number of rows,
//! its strings too under `FEW_ROWS` rows (what a selective filter leaves of it): a handful of
//! strings costs nothing, while the `Value` path loads an evicted chunk, decoding every
//! column of it, where the typed read takes the one column from its page (storage's
//! EVICTION, "Typed reads skip loads"). Temporal values,
//! undeclared keys, relationships and mixed columns take the `Value` path below.
//!
//! REPEATED NODES
//! ==============
//! A column of nodes an expand made often holds a few nodes on many rows (IC12: 81 K paths
//! from 16 K tags to 71 tag classes). When at most half its rows hold a node of their own,
//! each distinct node is read once and its values repeated for its rows (`Vector::take`);
//! the first 64 rows decide when nearly all differ (a scan's ids, a one-hop expand), so
//! such columns pay for 64 lookups only. The same nodes are read, each at the same
//! snapshot: the values, and the reads a SERIALIZABLE transaction records, are the same.
//!
//! SAME RESULTS
//! ============
//! Only where a value comes from changes: a prefetched value is the one `vertex_property` /
//! `edge_property` returns for that entity at the statement's snapshot, and nothing writes
//! between the prefetch and the row's evaluation (the operators that prefetch — Project,
//! Filter, Aggregate, Sort — never write). A row whose slot holds neither a node nor a
//! relationship (null, a map, a temporal value) is evaluated as before, and so are the
//! column's nodes (relationships) when their bulk read does not apply (the transaction has
//! vertex (relationship) writes) or fails (a deleted entity, a storage error): the
//! row-at-a-time read then reports the error, for the row it concerns. Comprehension
//! variables shadow batch slots, so a prefetched value is used only when no local variable
//! is bound to that slot.

use super::vector::Vector;
use crate::context::{Batch, ExecContext};
use plexus_plan::logical::BExpr;
use plexus_value::value::Value;
use std::sync::Arc;

/// Fewest node (relationship) rows in a batch for which their values are read in bulk (a
/// column of node ids excepted: see TYPED COLUMNS).
const MIN_BULK_ROWS: usize = 4;

/// Rows under which a column of node ids reads declared STRING properties as typed vectors
/// whoever asks (see TYPED COLUMNS).
const FEW_ROWS: usize = 64;

/// The `slot.key` reads an operator's expressions make on every row (see WHAT IS READ).
#[derive(Debug, Clone, Default)]
pub struct PropertyReads {
    reads: Vec<(usize, Arc<str>)>,
    /// `reads` and those under the right of AND / OR, for a vectorised predicate when the
    /// transaction keeps no read set (see WHAT IS READ); empty when there are none such.
    with_branches: Vec<(usize, Arc<str>)>,
    /// Declared STRING properties read as vectors too (see TYPED COLUMNS).
    typed_strings: bool,
}

impl PropertyReads {
    pub fn of<'a>(exprs: impl IntoIterator<Item = &'a BExpr>) -> Self {
        let mut reads = Vec::new();
        for expr in exprs {
            always_read(expr, &mut reads);
        }
        reads.sort();
        reads.dedup();
        PropertyReads {
            reads,
            with_branches: Vec::new(),
            typed_strings: false,
        }
    }

    /// These reads and, for an operator that evaluates `exprs` as vectors (both sides of
    /// every AND / OR on every row), the reads under the right of AND / OR too — fetched
    /// only while the transaction keeps no read set (see WHAT IS READ).
    pub fn with_branch_reads<'a>(self, exprs: impl IntoIterator<Item = &'a BExpr>) -> Self {
        let mut all = self.reads.clone();
        for expr in exprs {
            branch_reads(expr, &mut all);
        }
        all.sort();
        all.dedup();
        let with_branches = if all.len() > self.reads.len() {
            all
        } else {
            Vec::new()
        };
        PropertyReads {
            with_branches,
            ..self
        }
    }

    /// These reads, with declared STRING properties read as vectors when `yes` (see TYPED
    /// COLUMNS).
    /// The reads of filter predicates (or of any expressions run vectorised): strings as
    /// vectors, and the reads under the right of AND / OR, where `eval::vector` covers them
    /// all (it will take them so: TYPED COLUMNS, WHAT IS READ).
    pub fn of_filters(predicates: &[BExpr]) -> Self {
        let vectorised = predicates.iter().all(crate::eval::vector::covers);
        let reads = PropertyReads::of(predicates).with_typed_strings(vectorised);
        match vectorised {
            true => reads.with_branch_reads(predicates),
            false => reads,
        }
    }

    pub fn with_typed_strings(self, yes: bool) -> Self {
        PropertyReads {
            typed_strings: yes,
            ..self
        }
    }

    /// The values of every listed read for the node rows of `batch`: the typed ones of a
    /// slot in one call (one walk of the rows), the rest one key at a time.
    pub fn fetch(&self, batch: &Batch, ctx: &mut ExecContext) -> Prefetched {
        let mut columns = Vec::new();
        let reads = match ctx.tx.isolation() {
            _ if self.with_branches.is_empty() => &self.reads,
            plexus_types::IsolationLevel::Serializable => &self.reads,
            _ => &self.with_branches,
        };
        for reads in reads.chunk_by(|a, b| a.0 == b.0) {
            let slot = reads[0].0;
            let keys: Vec<&str> = reads.iter().map(|(_, key)| &**key).collect();
            let typed = typed_columns(batch, slot, &keys, self.typed_strings, ctx);
            for ((_, key), typed) in reads.iter().zip(typed) {
                let column = match typed {
                    Some(vector) => Some(PrefetchedColumn::Typed(vector)),
                    None => fetch_column(batch, slot, key, ctx),
                };
                if let Some(column) = column {
                    columns.push((slot, key.clone(), column));
                }
            }
        }
        Prefetched { columns }
    }
}

/// Property columns of one batch, per `(slot, key)` (see [`PrefetchedColumn`]).
#[derive(Debug, Default)]
pub struct Prefetched {
    columns: Vec<(usize, Arc<str>, PrefetchedColumn)>,
}

/// One prefetched property column.
#[derive(Debug)]
pub(crate) enum PrefetchedColumn {
    /// The value for each row whose slot holds a node or relationship read in bulk (`None`
    /// for the other rows: evaluate them as usual).
    Values(Vec<Option<Value>>),
    /// Every row's value as one typed vector: the slot holds a node on every row, and the
    /// property is a typed column of their tables (see TYPED COLUMNS).
    Typed(Vector),
}

impl Prefetched {
    /// The prefetched `slot.key` of `row`, if there is one.
    pub(super) fn get(&self, slot: usize, key: &str, row: usize) -> Option<Value> {
        match self.column(slot, key)? {
            PrefetchedColumn::Values(values) => values.get(row)?.clone(),
            PrefetchedColumn::Typed(vector) => Some(vector.value(row)),
        }
    }

    /// The value of `expr` on every row, when it is a `slot.key` read this batch read as a
    /// typed vector: what evaluating it row by row gives (the prefetched value, as `Env`
    /// returns it where no local variable shadows the slot — so only for an operator that
    /// binds none, such as Project).
    pub(crate) fn typed_vector(&self, expr: &BExpr) -> Option<Vector> {
        let BExpr::Property(base, key) = expr else {
            return None;
        };
        let BExpr::Slot(slot) = &**base else {
            return None;
        };
        match self.column(*slot, key)? {
            PrefetchedColumn::Typed(vector) => Some(vector.clone()),
            PrefetchedColumn::Values(_) => None,
        }
    }

    /// The prefetched `slot.key` column, if it was read for this batch.
    pub(super) fn column(&self, slot: usize, key: &str) -> Option<&PrefetchedColumn> {
        let (_, _, column) = self
            .columns
            .iter()
            .find(|(s, k, _)| *s == slot && &**k == key)?;
        Some(column)
    }
}

/// `keys` of the nodes in column `slot` as typed vectors (declared STRING ones with
/// `strings`), where every row holds a node and enough do (see TYPED COLUMNS); `None` for
/// a key read otherwise.
fn typed_columns(
    batch: &Batch,
    slot: usize,
    keys: &[&str],
    strings: bool,
    ctx: &mut ExecContext,
) -> Vec<Option<Vector>> {
    let typed = if let Some(nodes) = batch.nodes(slot) {
        // A column of node ids (a parallel scan's, perhaps thinned by a filter): read as
        // they are, typed whatever their number, and a few rows' strings typed too.
        let strings = strings || nodes.len() < FEW_ROWS;
        ctx.tx.vertex_typed_properties_many(nodes, keys, strings)
    } else {
        let cells = batch.values(slot).unwrap_or_default();
        let nodes: Vec<_> = (cells.iter())
            .map_while(|cell| match cell {
                Value::Node(v) => Some(*v),
                _ => None,
            })
            .collect();
        if nodes.len() != cells.len() || nodes.len() < MIN_BULK_ROWS {
            return vec![None; keys.len()];
        }
        if let Some((distinct, rows)) = distinct_nodes(&nodes) {
            // Each node read once, its values then repeated for its rows (see REPEATED
            // NODES).
            let typed = ctx
                .tx
                .vertex_typed_properties_many(&distinct, keys, strings);
            let mut typed = typed.into_iter();
            return (keys.iter())
                .map(|_| typed.next().flatten().and_then(Vector::from_typed))
                .map(|vector| vector.map(|v| v.take(&rows)))
                .collect();
        }
        ctx.tx.vertex_typed_properties_many(&nodes, keys, strings)
    };
    let mut typed = typed.into_iter();
    (keys.iter())
        .map(|_| typed.next().flatten().and_then(Vector::from_typed))
        .collect()
}

/// Rows a column of nodes needs before its repeats are looked for (see REPEATED NODES).
const MIN_DISTINCT_ROWS: usize = 64;

/// The distinct nodes of `nodes` in first-seen order and, per row, the index of its node
/// among them — when at most half the rows hold a node of their own; `None` otherwise,
/// decided after the first `MIN_DISTINCT_ROWS` rows when nearly all of those differ.
fn distinct_nodes(
    nodes: &[plexus_types::VertexId],
) -> Option<(Vec<plexus_types::VertexId>, Vec<u32>)> {
    if nodes.len() < MIN_DISTINCT_ROWS {
        return None;
    }
    let mut index: std::collections::HashMap<_, u32, ahash::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(nodes.len() / 2, Default::default());
    let mut distinct = Vec::new();
    let mut rows = Vec::with_capacity(nodes.len());
    for (row, &node) in nodes.iter().enumerate() {
        let next = u32::try_from(distinct.len()).expect("a batch's rows fit 32 bits");
        let at = *index.entry(node).or_insert_with(|| {
            distinct.push(node);
            next
        });
        rows.push(at);
        if row + 1 == MIN_DISTINCT_ROWS && distinct.len() * 8 > MIN_DISTINCT_ROWS * 7 {
            return None;
        }
    }
    (distinct.len() * 2 <= nodes.len()).then_some((distinct, rows))
}

/// `key` of the nodes and relationships in column `slot`, read in bulk as values; `None` if
/// too few rows hold either or no bulk read applies.
fn fetch_column(
    batch: &Batch,
    slot: usize,
    key: &str,
    ctx: &mut ExecContext,
) -> Option<PrefetchedColumn> {
    let bulk = |n: usize| n >= MIN_BULK_ROWS;
    if let Some(nodes) = batch.nodes(slot) {
        // Every row holds a node: their values read in bulk from the ids themselves.
        let values = bulk(nodes.len())
            .then(|| ctx.tx.vertex_property_many(nodes, key))
            .flatten()?;
        let column = (values.into_iter())
            .map(|value| Some(value.map_or(Value::Null, Value::from_storage)))
            .collect();
        return Some(PrefetchedColumn::Values(column));
    }
    let cells = batch.values(slot)?;
    let nodes: Vec<_> = (cells.iter())
        .filter_map(|cell| match cell {
            Value::Node(v) => Some(*v),
            _ => None,
        })
        .collect();
    let rels: Vec<_> = (cells.iter())
        .filter_map(|cell| match cell {
            Value::Rel(e) => Some(*e),
            _ => None,
        })
        .collect();
    let mut node_values = bulk(nodes.len())
        .then(|| ctx.tx.vertex_property_many(&nodes, key))
        .flatten()
        .map(Vec::into_iter);
    let mut rel_values = bulk(rels.len())
        .then(|| ctx.tx.edge_property_many(&rels, key))
        .flatten()
        .map(Vec::into_iter);
    if node_values.is_none() && rel_values.is_none() {
        return None;
    }
    let value = |values: &mut Option<std::vec::IntoIter<Option<_>>>| {
        let value = values.as_mut()?.next()?;
        Some(value.map_or(Value::Null, Value::from_storage))
    };
    let column = cells
        .iter()
        .map(|cell| match cell {
            Value::Node(_) => value(&mut node_values),
            Value::Rel(_) => value(&mut rel_values),
            _ => None,
        })
        .collect();
    Some(PrefetchedColumn::Values(column))
}

/// Adds the `slot.key` reads `e` makes whenever it is evaluated.
/// The reads under the right of AND / OR in `e` (and under NOT of one), which
/// [`always_read`] leaves out.
fn branch_reads(e: &BExpr, out: &mut Vec<(usize, Arc<str>)>) {
    match e {
        BExpr::And(a, b) | BExpr::Or(a, b) => {
            branch_reads(a, out);
            always_read(b, out);
            branch_reads(b, out);
        }
        BExpr::Not(x) => branch_reads(x, out),
        _ => {}
    }
}

fn always_read(e: &BExpr, out: &mut Vec<(usize, Arc<str>)>) {
    match e {
        BExpr::Property(base, key) => match &**base {
            BExpr::Slot(slot) => out.push((*slot, key.clone())),
            other => always_read(other, out),
        },
        BExpr::And(a, _) | BExpr::Or(a, _) => always_read(a, out),
        BExpr::Not(x)
        | BExpr::Negate(x)
        | BExpr::IsNull(x, _)
        | BExpr::IsType(x, _, _)
        | BExpr::HasLabels(x, _)
        | BExpr::LabelTest(x, _) => always_read(x, out),
        BExpr::DynamicLabels {
            entity: x,
            names: y,
            ..
        }
        | BExpr::Arith(_, x, y)
        | BExpr::Xor(x, y)
        | BExpr::StringOp(_, x, y)
        | BExpr::In(x, y)
        | BExpr::Index(x, y) => {
            always_read(x, out);
            always_read(y, out);
        }
        BExpr::Compare(items, _) | BExpr::List(items) | BExpr::Call(_, items) => {
            items.iter().for_each(|item| always_read(item, out))
        }
        BExpr::Map(entries) => entries.iter().for_each(|(_, v)| always_read(v, out)),
        // The items are skipped when the base is null.
        BExpr::MapProjection(base, _) => always_read(base, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_cypher::ast::ComparisonOp;

    fn equals(slot: usize, key: &str, value: i64) -> BExpr {
        let property = BExpr::Property(Box::new(BExpr::Slot(slot)), Arc::from(key));
        BExpr::Compare(
            vec![property, BExpr::Const(Value::Int(value))],
            vec![ComparisonOp::Eq],
        )
    }

    fn listed(reads: &[(usize, Arc<str>)]) -> Vec<(usize, &str)> {
        reads.iter().map(|(s, k)| (*s, &**k)).collect()
    }

    #[test]
    fn repeated_nodes_are_read_once_each() {
        let node = |i: u32| plexus_types::VertexId::new(1, i);
        // 100 rows over 5 nodes: each once, every row mapped to its node.
        let nodes: Vec<_> = (0..100).map(|i| node([3, 1, 4, 1, 5][i % 5])).collect();
        let (distinct, rows) = distinct_nodes(&nodes).expect("repeats");
        assert_eq!(distinct, [3, 1, 4, 5].map(node));
        assert!(
            rows.iter()
                .zip(&nodes)
                .all(|(&at, n)| distinct[at as usize] == *n)
        );
        // Nearly all different in the first 64 rows, or more than half overall: no.
        let unique: Vec<_> = (0..200).map(node).collect();
        assert!(distinct_nodes(&unique).is_none());
        let mostly: Vec<_> = (0..200)
            .map(|i| node(if i < 64 { i % 8 } else { i }))
            .collect();
        assert!(distinct_nodes(&mostly).is_none());
        // Too few rows to look.
        assert!(distinct_nodes(&nodes[..40]).is_none());
    }

    #[test]
    fn branch_reads_add_the_right_of_and_or_only() {
        // s0.a = 1 OR (s1.b = 2 AND NOT s2.c = 3)
        let predicate = BExpr::Or(
            Box::new(equals(0, "a", 1)),
            Box::new(BExpr::And(
                Box::new(equals(1, "b", 2)),
                Box::new(BExpr::Not(Box::new(equals(2, "c", 3)))),
            )),
        );
        let reads = PropertyReads::of([&predicate]);
        assert_eq!(listed(&reads.reads), [(0, "a")]);
        let reads = reads.with_branch_reads([&predicate]);
        assert_eq!(
            listed(&reads.reads),
            [(0, "a")],
            "the always-reads stay as they were"
        );
        assert_eq!(listed(&reads.with_branches), [(0, "a"), (1, "b"), (2, "c")]);
        // Nothing under a branch: no second list.
        let plain = equals(0, "a", 1);
        let reads = PropertyReads::of([&plain]).with_branch_reads([&plain]);
        assert!(reads.with_branches.is_empty());
    }
}
