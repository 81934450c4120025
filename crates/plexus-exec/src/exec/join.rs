//! The hash join (`LogicalPlan::HashJoin`, planned where
//! `plexus_plan::optimizer::join_order::join` says): its build side runs once into a hash
//! table, and the input's rows stream through and probe it.
//!
//! BUILD
//! =====
//! On the first input row — an empty input never runs the build side — the build side runs
//! to its end, in the statement's transaction like every other operator. Each of its rows
//! goes into the group of its key ([`GroupKey`]: equal values share a group, `1` and `1.0`
//! too), keeping only its `build_slots` values; a group keeps its rows in build order. A row
//! whose key holds null or NaN anywhere can equal nothing (`value::can_be_equal`) and is left
//! out.
//!
//! ```text
//!   build rows (s1, s1.name)        table
//!   (c1, 'Oslo')                    'Oslo'  → [c1, c3]
//!   (c2, null)      left out        'Rome'  → [c4]
//!   (c3, 'Oslo')
//!   (c4, 'Rome')
//! ```
//!
//! TABLE
//! =====
//! Once built, the table holds the build rows by column — one per build slot — with each
//! group's rows side by side in build order, and the index maps a key to its group's span of
//! rows (`start`, `len`). A column whose values are all nodes, or all of one of a vector's
//! types (integers, floats, booleans, strings; nulls among them), is kept typed
//! ([`TableColumn`]): an inner join's output then takes its rows as node ids or an Arrow
//! `take` — no `Value` cloned per joined row (a tenth of a 10 M-row join's time), and the
//! operators above read a vector. A probe finds a span, not a shared list: nothing
//! is reference-counted per match (an `Arc` per group, cloned per probe, was 60 % of the
//! probe's time with two workers incrementing the same counters).
//!
//! PROBE
//! =====
//! The join works on a whole input batch at once. The properties the keys read are read for
//! the batch (and each build batch) in one storage pass (`eval::prefetch`); then every input
//! row's span is found — for a single key over an integer table straight from the key's
//! typed vector when it is a slot or a property read ahead (`eval::vector::leaf`), else by
//! evaluating the key row by row. The output is then written a column at a time: the
//! joined pairs (input row, build row), in input order and build order within an input row,
//! are listed for up to [`BATCH_ROWS`] rows, and each slot's column gathered from the input
//! (or the table, for a build slot) by them — for an inner join the input's typed columns
//! (node ids, property vectors) stay typed (`Batch::push_rows`), so nothing is made a
//! `Value` that a later operator reads as a vector. What did not fit continues in the next
//! output batch from the pair where it stopped, however large a group is. Input rows with a
//! null or NaN in their key, or no group, produce nothing. The input streams: only the table
//! is held.
//!
//! INTEGER BUILD
//! =============
//! A join on one integer property builds from the key's vector: while every build batch's
//! key comes out as an integer vector (`eval::vector::column`, the row evaluator's values),
//! the rows are kept with their `i64` keys — no key list, no map entry, no list of rows per
//! group — and grouped once at the end by a stable sort (a group's rows stay in build
//! order). A batch whose key is anything else (a float, a mix, an expression the vectors do
//! not compute) moves the rows kept so far into the general groups and the build goes on
//! row by row. Building 100,000 rows row by row was a third of a 10 M-row join's time, on
//! the caller's thread while the workers waited.
//!
//! INTEGER KEYS
//! ============
//! When every build key is a single integer — a join on an integer property, the common
//! case — the table is keyed by the `i64` itself once built (no key list to follow on every
//! probe). The probe's key finds the same group as under `GroupKey` equivalence: an integer
//! directly, a float without fraction in `i64`'s range as that integer (`1.0 = 1`), and
//! anything else (another float, a string, a list, ...) no group, as none is equal to an
//! integer. When the build keys' range is compact (at most `DENSE_SLOTS_PER_KEY` slots per
//! key, at most `MAX_DENSE_SLOTS` in all) the integers index a vector of groups directly —
//! a subtraction and a bounds check per probe, no hashing; otherwise a hash map holds them.
//! The table's rows being in key order (the integer build sorts them so; a general build
//! whose keys all came out integers is sorted so too), the dense vector holds one `u32` per
//! slot, where its group starts — it ends where the next slot's starts — half the bytes of
//! a span per slot (0.8 MB, not 1.6, for the 10 M-row benchmark join's 200,000 slots: probes
//! land at random in it). A typed key without nulls is looked up in one loop per index form
//! (`IntGroups::extend`). perf puts that loop's time in its instructions rather than in
//! cache misses: laying the table out by slot (the row being `k - min`, holes kept) and a
//! rank bitmap per 64 slots (the row being the keys below, by popcount) were both tried and
//! measured no faster on that join (docs/benchmarks.md, session 8).
//!
//! THE KEY FILTER
//! ==============
//! The WHERE equality an inner join was planned on stays in the plan as a Filter right above
//! the join (`plexus_plan::optimizer::join_order::join`, EXACTNESS: the join finds every pair for which `=` is
//! true, the filter keeps exactly those). When that Filter — `input_key = build_key` or the
//! other way round, a single key — is pushed onto the join's pipeline, the join's stage takes
//! it in ([`Stage::fuse`]) and, per output step, skips it when the table is an integer one
//! (INTEGER KEYS: every pair it gives has an integer build key equal to the probe's integer,
//! or to its float without fraction, so `=` is true on each — and neither side can fail,
//! the join having evaluated both keys already), or runs it on the step's rows otherwise,
//! steps going on until the output holds `BATCH_ROWS` rows or the input is done. On a
//! 1 M-row join the skipped filter was ~30 % of the work (reading both keys' properties
//! again and copying the rows). PROFILE keeps both lines: the join's with the rows it
//! produced, the filter's with the rows it kept, and its `jit=` note only when it ran.
//!
//! LEFT OUTER
//! ==========
//! For an OPTIONAL MATCH (`optional`, see `plexus_plan::optimizer::join_order::join` LEFT OUTER) each partner of an input
//! row is first written into a one-row scratch batch (the input row with its build values),
//! when the output reaches that row, and kept only if the `residual` is true there (false and null drop it, another value is a
//! type error, as in a Filter). An input row that keeps none — no group, a null or NaN in
//! its key, an empty build side — is emitted once with the `nulls` slots null, exactly as
//! the `Optional` operator does (`ops::push_null_extended`). Output order is input order,
//! then build order within an input row. PROFILE counts the rows emitted, null-extended ones
//! included.
//!
//! ERRORS
//! ======
//! A key expression can fail (`a.k + 1` on a boolean). The nested plan evaluates the lowest
//! of the filters above the part on every pair of an input row and a build row; the join
//! evaluates every key of every build row once the input has a row, and every key of every
//! input row once the build side has produced a row (joinable or not), so a failing key
//! fails both. Beyond that the two evaluate expressions on different rows — the join all its
//! keys on every row, the filters above it only on joined pairs — so an expression that fails
//! on some rows may fail one plan and not the other: the latitude predicate pushdown takes
//! too (`plexus_plan::optimizer::pushdown`). A left outer join's residual is evaluated on the pairs with equal
//! keys only; the nested plan evaluates the WHERE on every pair its filters reach.
//!
//! MEMORY
//! ======
//! The table holds at most [`MAX_MATERIALIZED_ROWS`] rows, the bound of every pipeline
//! breaker, each as `build_slots.len()` values, plus one key per group; a build side with
//! more rows fails the statement (`LimitExceeded`) instead of dropping any. Per input batch
//! the join holds one span per row and the pairs of one output batch.
//!
//! RUNS
//! ====
//! Inside an inner plan (OPTIONAL MATCH, CALL {}, EXISTS, ...) the operator is reset and run
//! again for every argument row. The build side reads nothing of the argument row (see
//! `plexus_plan::optimizer::join_order::join`), so its rows change only if the statement wrote in between: a statement that
//! cannot write ([`ExecState::may_write`]) builds the table once and probes it in every run;
//! one that may write builds it again in each run, as the nested plan would scan again. A
//! join in the chain of a `Parallel` (read-only, top level) does not build at all: it probes
//! the table the `Parallel` built once for all its workers ([`SharedTable`];
//! `exec::parallel`, HASH JOINS).
//!
//! [`MAX_MATERIALIZED_ROWS`]: super::MAX_MATERIALIZED_ROWS
//! [`BATCH_ROWS`]: super::BATCH_ROWS
//! [`ExecState::may_write`]: super::ExecState::may_write

use super::filter::Filter;
use super::ops::passes;
use super::pipeline::{Flow, Stage};
use super::{BATCH_ROWS, Batch, ExecContext, Operator, check_materialized};
use crate::eval::prefetch::PropertyReads;
use crate::eval::vector::{self, Vector};
use crate::eval::{Env, eval};
use arrow::array::Array;
use plexus_cypher::ast::ComparisonOp;
use plexus_plan::logical::BExpr;
use plexus_plan::logical::OuterJoin;
use plexus_types::VertexId;
use plexus_value::error::{QueryError, Result};
use plexus_value::value::{GroupKey, Value, can_be_equal, integral_float};
use std::collections::HashMap;
use std::sync::Arc;

/// A group's rows in the table's columns: `start..start + len` (see TABLE).
#[derive(Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// The build row (a row of the table's columns) of partner `i` of the group.
    fn row(self, i: u32) -> u32 {
        debug_assert!(i < self.len);
        self.start + i
    }
}

/// The pairs' build row of an input row no build row joins (LEFT OUTER: null-extended).
const NO_ROW: u32 = u32::MAX;

/// The groups, as looked up (see INTEGER KEYS).
enum Index {
    General(HashMap<GroupKey, Span, ahash::RandomState>),
    /// Every build key is one integer: the groups by that integer.
    Ints(IntGroups),
}

/// Slots of a dense integer index per build key, at most (see INTEGER KEYS).
const DENSE_SLOTS_PER_KEY: usize = 4;

/// Slots of a dense integer index (4 bytes each), at most: 64 MiB.
const MAX_DENSE_SLOTS: usize = 1 << 24;

/// Groups by a single integer key (see INTEGER KEYS).
enum IntGroups {
    /// The group of key `k` is rows `starts[k - min]..starts[k - min + 1]` (empty: none) —
    /// one offset per slot, the table's rows being in key order (see INTEGER KEYS).
    Dense {
        min: i64,
        starts: Vec<u32>,
    },
    Hashed(HashMap<i64, Span, ahash::RandomState>),
}

impl IntGroups {
    /// The index of `groups`: distinct keys in ascending order, their spans side by side
    /// from row 0 in that order (as [`int_groups`] cuts them); dense when their range is
    /// compact.
    fn of(groups: Vec<(i64, Span)>) -> IntGroups {
        debug_assert!(
            groups.windows(2).all(|w| w[0].0 < w[1].0),
            "keys ascending, distinct"
        );
        debug_assert!(
            (groups.iter().scan(0, |end, (_, span)| {
                let joined = span.start == *end && span.len > 0;
                *end = span.start + span.len;
                Some(joined)
            }))
            .all(|joined| joined),
            "spans side by side from row 0, none empty"
        );
        let (Some(&(min, _)), Some(&(max, last))) = (groups.first(), groups.last()) else {
            return IntGroups::Hashed(HashMap::default());
        };
        let slots = i128::from(max) - i128::from(min) + 1;
        let most = groups.len().saturating_mul(DENSE_SLOTS_PER_KEY);
        if slots > most.min(MAX_DENSE_SLOTS) as i128 {
            return IntGroups::Hashed(groups.into_iter().collect());
        }
        // A slot without a group starts (and ends) where the next group starts.
        let mut starts = Vec::with_capacity(slots as usize + 1);
        for (key, span) in groups {
            starts.resize(key.abs_diff(min) as usize + 1, span.start);
        }
        starts.push(last.start + last.len);
        debug_assert_eq!(starts.len() as i128, slots + 1);
        IntGroups::Dense { min, starts }
    }

    /// The group of `key` (empty if none).
    fn get(&self, key: i64) -> Span {
        match self {
            IntGroups::Dense { min, starts } => dense_span(*min, starts, key),
            IntGroups::Hashed(groups) => groups.get(&key).copied().unwrap_or_default(),
        }
    }

    /// The group of each of `keys` appended to `spans`: `get`, with the form matched once.
    fn extend(&self, keys: impl Iterator<Item = i64>, spans: &mut Vec<Span>) {
        match self {
            IntGroups::Dense { min, starts } => {
                // `min` by value: read once, not again after each span written.
                let (min, starts) = (*min, &starts[..]);
                spans.extend(keys.map(|key| dense_span(min, starts, key)))
            }
            IntGroups::Hashed(groups) => {
                spans.extend(keys.map(|key| groups.get(&key).copied().unwrap_or_default()))
            }
        }
    }
}

/// The group of `key` in a dense index (`IntGroups::Dense`).
#[inline(always)]
fn dense_span(min: i64, starts: &[u32], key: i64) -> Span {
    // `key - min` wrapped to 64 bits is below `slots` exactly when `key` is in
    // `min..min + slots`: a key below `min` wraps to at least `2^63 - min`, which is at
    // least `slots` as the last slot's key, `min + slots - 1`, is an `i64`.
    let slots = (starts.len() - 1) as u64;
    let at = key.wrapping_sub(min) as u64;
    if at >= slots {
        return Span::default();
    }
    let (start, end) = (starts[at as usize], starts[at as usize + 1]);
    Span {
        start,
        len: end - start,
    }
}

impl Index {
    /// The group of `key` (one that [`can_be_equal`]); empty if none.
    fn get(&self, key: &GroupKey) -> Span {
        match self {
            Index::General(groups) => groups.get(key).copied().unwrap_or_default(),
            Index::Ints(ints) => match key.0[..] {
                [Value::Int(i)] => ints.get(i),
                [Value::Float(f)] => integral_float(f).map_or_else(Span::default, |i| ints.get(i)),
                // Equivalent to no integer (a list, a string, a node, ...).
                _ => Span::default(),
            },
        }
    }
}

/// What one run of the build side left (see TABLE).
pub(super) struct Table {
    index: Index,
    /// Column `j` holds the values of `build_slots[j]`, one per build row.
    columns: Vec<TableColumn>,
    /// The build side produced rows, joinable or not (see ERRORS).
    any_rows: bool,
}

/// Where the output of the current input batch stands (see PROBE).
#[derive(Default)]
struct Probe {
    /// Each input row's group (empty: none).
    spans: Vec<Span>,
    /// The next input row to emit.
    row: usize,
    /// Its partners emitted so far.
    done: u32,
    /// Its build rows that pass the residual (LEFT OUTER with a residual), found when the
    /// output reaches it.
    kept: Option<Vec<u32>>,
}

/// The build half: the build side's operator and what its rows give the table.
pub(super) struct BuildSide {
    build: Box<dyn Operator>,
    keys: Vec<BExpr>,
    /// The properties `keys` read, fetched per batch.
    reads: PropertyReads,
    slots: Vec<usize>,
}

/// One build slot's values in table order (see TABLE).
enum TableColumn {
    Values(Vec<Value>),
    /// Every value of one vector type, or null (and at least one not null).
    Vector(Vector),
    /// Every value a node.
    Nodes(Vec<VertexId>),
}

impl TableColumn {
    /// `values`, typed when they are all nodes or all of one vector type (nulls among them).
    fn of(values: Vec<Value>) -> TableColumn {
        let node = |v: &Value| match v {
            Value::Node(id) => Some(*id),
            _ => None,
        };
        if let Some(ids) = values.iter().map(node).collect() {
            return TableColumn::Nodes(ids);
        }
        let vector = if let Some(ints) = one_kind(&values, |v| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }) {
            Vector::Int(ints.into_iter().collect())
        } else if let Some(floats) = one_kind(&values, |v| match v {
            Value::Float(f) => Some(*f),
            _ => None,
        }) {
            Vector::Float(floats.into_iter().collect())
        } else if let Some(bools) = one_kind(&values, |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }) {
            Vector::Bool(bools.into_iter().collect())
        } else if let Some(strings) = one_kind(&values, |v| match v {
            Value::String(s) => Some(&**s),
            _ => None,
        }) && fits_32_bit_offsets(&strings)
        {
            Vector::Str(strings.into_iter().collect())
        } else {
            return TableColumn::Values(values);
        };
        TableColumn::Vector(vector)
    }

    /// Build row `row`'s value.
    fn value(&self, row: usize) -> Value {
        match self {
            TableColumn::Values(values) => values[row].clone(),
            TableColumn::Vector(vector) => vector.value(row),
            TableColumn::Nodes(ids) => Value::Node(ids[row]),
        }
    }

    /// Sets column `slot` of `out` to the values of build rows `rows` (none `NO_ROW`).
    fn gather(&self, rows: &[u32], out: &mut Batch, slot: usize) {
        match self {
            TableColumn::Values(values) => {
                out.set_column(
                    slot,
                    rows.iter().map(|&b| values[b as usize].clone()).collect(),
                );
            }
            TableColumn::Vector(vector) => out.set_vector(slot, vector.take(rows)),
            TableColumn::Nodes(ids) => {
                out.set_nodes(slot, rows.iter().map(|&b| ids[b as usize]).collect());
            }
        }
    }
}

/// Whether `strings` take few enough bytes for a `StringArray`'s 32-bit offsets (a larger
/// column stays values).
fn fits_32_bit_offsets(strings: &[Option<&str>]) -> bool {
    let bytes: usize = strings.iter().flatten().map(|s| s.len()).sum();
    i32::try_from(bytes).is_ok()
}

/// `values` as one kind's (`pick` gives a value of the kind), when each is of that kind or
/// null and at least one is not null.
fn one_kind<'v, T>(
    values: &'v [Value],
    pick: impl Fn(&'v Value) -> Option<T>,
) -> Option<Vec<Option<T>>> {
    let mut any = false;
    let picked = (values.iter())
        .map(|v| match (pick(v), v) {
            (Some(x), _) => {
                any = true;
                Some(Some(x))
            }
            (None, Value::Null) => Some(None),
            (None, _) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    any.then_some(picked)
}

/// A table built once for every worker of a `Parallel` (`exec::parallel`, HASH JOINS): the
/// table, or the error building it failed with — reported by each probe that needs the
/// table, when the serial join would have built it.
pub(super) enum SharedTable {
    Built(Arc<Table>),
    Failed(QueryError),
}

impl SharedTable {
    pub(super) fn of(built: Result<Table>) -> SharedTable {
        match built {
            Ok(table) => SharedTable::Built(Arc::new(table)),
            Err(e) => SharedTable::Failed(e),
        }
    }

    /// The table, or a copy of the error (its class, code, message and position; not the
    /// storage error behind it, which stays with the first).
    fn get(&self) -> Result<Arc<Table>> {
        match self {
            SharedTable::Built(table) => Ok(table.clone()),
            SharedTable::Failed(e) => Err(QueryError {
                class: e.class,
                code: e.code,
                phase: e.phase,
                message: e.message.clone(),
                span: e.span,
                source: None,
            }),
        }
    }
}

/// Where a join's table comes from.
enum Source {
    /// Its own build side, run when the table is needed (see BUILD, RUNS).
    Own(BuildSide),
    /// A table built for all workers.
    Shared(Arc<SharedTable>),
}

/// The probing half, a pipeline stage over the input; owns the build side or shares a
/// table built once.
pub(super) struct HashJoin {
    source: Source,
    input_keys: Vec<BExpr>,
    /// The build side's key expressions (the table holds their values).
    build_keys: Vec<BExpr>,
    /// The properties `input_keys` read, fetched per batch.
    input_reads: PropertyReads,
    /// The current input row's key, its buffer reused from row to row.
    probe_key: GroupKey,
    build_slots: Vec<usize>,
    table: Option<Arc<Table>>,
    /// Reset since the table was built (see RUNS).
    rerun: bool,
    /// The input batch being joined; `None` between batches.
    probe: Option<Probe>,
    /// The pairs of the output batch being written (buffers reused).
    input_rows: Vec<u32>,
    build_rows: Vec<u32>,
    /// A left outer join's residual and null slots (see LEFT OUTER).
    optional: Option<OuterJoin>,
    /// The key equality's filter right above the join, taken into this stage (see THE KEY
    /// FILTER).
    recheck: Option<Recheck>,
}

/// The key filter taken into a join's stage (see THE KEY FILTER).
struct Recheck {
    filter: Filter,
    /// The join's own PROFILE number (the stage's is the filter's).
    join_profile_id: Option<usize>,
    /// Rows the join produced since PROFILE last took them.
    joined: u64,
}

impl BuildSide {
    pub(super) fn new(build: Box<dyn Operator>, keys: &[(BExpr, BExpr)], slots: &[usize]) -> Self {
        let keys: Vec<BExpr> = keys
            .iter()
            .map(|(_, build_key)| build_key.clone())
            .collect();
        BuildSide {
            build,
            reads: PropertyReads::of(&keys),
            keys,
            slots: slots.to_vec(),
        }
    }

    /// Runs the build side from its start into a table (see BUILD and TABLE).
    pub(super) fn table(&mut self, ctx: &mut ExecContext) -> Result<Table> {
        self.build.reset();
        let mut rows_of: HashMap<GroupKey, Vec<u32>, ahash::RandomState> = HashMap::default();
        // (INTEGER BUILD) The rows' integer keys, while every batch's one key is an
        // integer vector; `None` once one is not (or with several keys).
        let mut int_keys: Option<Vec<(i64, u32)>> = (self.keys.len() == 1).then(Vec::new);
        let mut columns: Vec<Vec<Value>> = vec![Vec::new(); self.slots.len()];
        let mut any_rows = false;
        let mut held_rows = 0;
        while let Some(batch) = self.build.next(ctx)? {
            if batch.is_empty() {
                continue;
            }
            any_rows = true;
            let prefetched = self.reads.fetch(&batch, ctx);
            if let Some(keyed) = int_keys.as_mut() {
                if let Some(Vector::Int(keys)) =
                    vector::column(&self.keys[0], &batch, &prefetched, ctx)
                {
                    // A null key can equal nothing: left out, as by `key_of`.
                    for row in (0..batch.len()).filter(|&row| keys.is_valid(row)) {
                        let build_row =
                            hold((&mut columns, &mut held_rows), &self.slots, &batch, row)?;
                        keyed.push((keys.value(row), build_row));
                    }
                    continue;
                }
                // Not integers: the rows so far go into the general groups, in build order.
                for (key, build_row) in int_keys.take().expect("matched above") {
                    let key = GroupKey(vec![Value::Int(key)]);
                    rows_of.entry(key).or_default().push(build_row);
                }
            }
            for row in 0..batch.len() {
                let mut env = Env::with_prefetched(&batch, row, &prefetched);
                let mut key = Vec::with_capacity(self.keys.len());
                if !key_of(&self.keys, &mut env, ctx, &mut key)? {
                    continue;
                }
                let build_row = hold((&mut columns, &mut held_rows), &self.slots, &batch, row)?;
                rows_of.entry(GroupKey(key)).or_default().push(build_row);
            }
        }
        // Each group's rows side by side, in build order.
        let (order, index) = match int_keys {
            Some(keyed) if !keyed.is_empty() => int_groups(keyed),
            // (INTEGER KEYS) Every key one integer: the groups' rows in key order, as above.
            _ if !rows_of.is_empty() && rows_of.keys().all(|key| int_key(key).is_some()) => {
                let keyed = (rows_of.into_iter())
                    .flat_map(|(key, rows)| {
                        let key = int_key(&key).expect("checked above");
                        rows.into_iter().map(move |build_row| (key, build_row))
                    })
                    .collect();
                int_groups(keyed)
            }
            _ => {
                let mut order = Vec::with_capacity(held_rows);
                let mut groups = HashMap::with_capacity_and_hasher(rows_of.len(), <_>::default());
                for (key, rows) in rows_of {
                    let start = u32::try_from(order.len()).expect("held rows are bounded");
                    let len = u32::try_from(rows.len()).expect("held rows are bounded");
                    groups.insert(key, Span { start, len });
                    order.extend(rows);
                }
                (order, Index::General(groups))
            }
        };
        let columns = (columns.into_iter())
            .map(|mut by_row| {
                TableColumn::of(
                    (order.iter())
                        .map(|&r| std::mem::replace(&mut by_row[r as usize], Value::Null))
                        .collect(),
                )
            })
            .collect();
        Ok(Table {
            index,
            columns,
            any_rows,
        })
    }
}

impl HashJoin {
    /// A join running its own build side.
    pub(super) fn new(
        build: Box<dyn Operator>,
        keys: &[(BExpr, BExpr)],
        build_slots: Vec<usize>,
        optional: Option<OuterJoin>,
    ) -> Self {
        let side = BuildSide::new(build, keys, &build_slots);
        HashJoin::with_source(Source::Own(side), keys, build_slots, optional)
    }

    /// A join probing a table built for it (see [`SharedTable`]).
    pub(super) fn probing(
        table: Arc<SharedTable>,
        keys: &[(BExpr, BExpr)],
        build_slots: Vec<usize>,
        optional: Option<OuterJoin>,
    ) -> Self {
        HashJoin::with_source(Source::Shared(table), keys, build_slots, optional)
    }

    fn with_source(
        source: Source,
        keys: &[(BExpr, BExpr)],
        build_slots: Vec<usize>,
        optional: Option<OuterJoin>,
    ) -> Self {
        debug_assert!(!keys.is_empty(), "a hash join has a key");
        debug_assert!(
            (optional.as_ref()).is_none_or(|o| build_slots.iter().all(|s| o.nulls.contains(s))),
            "a left outer join nulls every slot its build side fills"
        );
        let input_keys: Vec<BExpr> = keys
            .iter()
            .map(|(input_key, _)| input_key.clone())
            .collect();
        HashJoin {
            source,
            build_keys: keys
                .iter()
                .map(|(_, build_key)| build_key.clone())
                .collect(),
            input_reads: PropertyReads::of(&input_keys),
            probe_key: GroupKey(Vec::with_capacity(input_keys.len())),
            input_keys,
            build_slots,
            table: None,
            rerun: false,
            probe: None,
            input_rows: Vec::with_capacity(BATCH_ROWS),
            build_rows: Vec::with_capacity(BATCH_ROWS),
            optional,
            recheck: None,
        }
    }

    /// Whether every pair the table gives is one on which the key equality is true: an
    /// integer table (see INTEGER KEYS and THE KEY FILTER).
    fn exact(&self) -> bool {
        matches!(
            self.table.as_deref().map(|t| &t.index),
            Some(Index::Ints(_))
        )
    }

    /// `joined` (the rows of one output step) through the key filter when it must run.
    fn rechecked(&mut self, joined: Batch, ctx: &mut ExecContext) -> Result<Batch> {
        let exact = self.exact();
        let Some(recheck) = &mut self.recheck else {
            return Ok(joined);
        };
        recheck.joined += joined.len() as u64;
        if exact || joined.is_empty() {
            return Ok(joined);
        }
        let mut input = joined;
        let mut kept = Batch::with_capacity(input.width(), input.len());
        recheck.filter.execute(&mut input, &mut kept, ctx)?;
        Ok(kept)
    }

    /// Builds the table if this run has none yet (see BUILD and RUNS), then finds the group
    /// of every row of `input` — none if the build side is empty, when no key is evaluated.
    fn begin(&mut self, input: &Batch, ctx: &mut ExecContext) -> Result<Probe> {
        let stale = self.rerun && ctx.state.may_write;
        self.rerun = false;
        let table = match (self.table.take(), &mut self.source) {
            (Some(table), _) if !stale => table,
            (_, Source::Own(side)) => Arc::new(side.table(ctx)?),
            (_, Source::Shared(shared)) => shared.get()?,
        };
        let table = &**self.table.insert(table);
        let mut spans = Vec::with_capacity(input.len());
        if !table.any_rows {
            spans.resize(input.len(), Span::default());
            return Ok(Probe {
                spans,
                ..Probe::default()
            });
        }
        let prefetched = self.input_reads.fetch(input, ctx);
        let vector = match (&table.index, &self.input_keys[..]) {
            (Index::Ints(_), [key]) => vector::leaf(key, input, &prefetched),
            _ => None,
        };
        match (&table.index, vector) {
            (Index::Ints(ints), Some(vector)) => int_spans(ints, &vector, &mut spans),
            _ => {
                for row in 0..input.len() {
                    let mut env = Env::with_prefetched(input, row, &prefetched);
                    let key = &mut self.probe_key;
                    let joinable = key_of(&self.input_keys, &mut env, ctx, &mut key.0)?;
                    spans.push(match joinable {
                        true => table.index.get(key),
                        false => Span::default(),
                    });
                }
            }
        }
        Ok(Probe {
            spans,
            ..Probe::default()
        })
    }

    /// The build rows of `span` whose joined row with input row `row` passes `residual`
    /// (see LEFT OUTER).
    fn kept(
        &self,
        residual: &BExpr,
        input: &Batch,
        row: usize,
        span: Span,
        ctx: &mut ExecContext,
    ) -> Result<Vec<u32>> {
        let table = self.table.as_ref().expect("begin builds the table");
        let mut joined = Batch::new(input.width());
        joined.push_from(input, row);
        let mut kept = Vec::new();
        for build_row in (0..span.len).map(|i| span.row(i)) {
            for (slot, column) in self.build_slots.iter().zip(&table.columns) {
                joined.set_last(*slot, column.value(build_row as usize));
            }
            if passes(residual, &joined, 0, ctx)? {
                kept.push(build_row);
            }
        }
        Ok(kept)
    }

    /// Lists the pairs of the next output batch from where `probe` stands, at most
    /// [`BATCH_ROWS`]; `true` when the input batch is done.
    fn pairs(&mut self, probe: &mut Probe, input: &Batch, ctx: &mut ExecContext) -> Result<bool> {
        self.input_rows.clear();
        self.build_rows.clear();
        let residual = self.optional.as_ref().and_then(|o| o.residual.as_ref());
        if self.optional.is_none() {
            // An inner join: every partner of every row, in a loop over locals. A row with at
            // most one partner (unique build keys: the common case) is written without a
            // branch on whether it has one — written at `n` either way, `n` advanced by the
            // partner count — as rows with and without partners alternate unpredictably.
            let (input_rows, build_rows) = (&mut self.input_rows, &mut self.build_rows);
            input_rows.resize(BATCH_ROWS, 0);
            build_rows.resize(BATCH_ROWS, 0);
            let (mut row, mut done, mut n) = (probe.row, probe.done, 0);
            while row < input.len() && n < BATCH_ROWS {
                let span = probe.spans[row];
                if span.len <= 1 && done == 0 {
                    input_rows[n] = row as u32;
                    build_rows[n] = span.start;
                    n += span.len as usize;
                    row += 1;
                    continue;
                }
                let end = span.len.min(done + (BATCH_ROWS - n) as u32);
                for i in done..end {
                    input_rows[n] = row as u32;
                    build_rows[n] = span.row(i);
                    n += 1;
                }
                if end < span.len {
                    done = end;
                    break;
                }
                row += 1;
                done = 0;
            }
            input_rows.truncate(n);
            build_rows.truncate(n);
            (probe.row, probe.done) = (row, done);
            return Ok(row == input.len());
        }
        while probe.row < input.len() && self.input_rows.len() < BATCH_ROWS {
            let row = probe.row;
            let span = probe.spans[row];
            if let Some(residual) = residual
                && probe.kept.is_none()
            {
                probe.kept = Some(self.kept(residual, input, row, span, ctx)?);
            }
            let partners = probe.kept.as_ref().map_or(span.len, |k| k.len() as u32);
            if partners == 0 {
                if self.optional.is_some() {
                    self.input_rows.push(row as u32);
                    self.build_rows.push(NO_ROW);
                }
            } else {
                let room = (BATCH_ROWS - self.input_rows.len()) as u32;
                let end = partners.min(probe.done + room);
                for i in probe.done..end {
                    self.input_rows.push(row as u32);
                    self.build_rows.push(match &probe.kept {
                        Some(kept) => kept[i as usize],
                        None => span.row(i),
                    });
                }
                probe.done = end;
                if end < partners {
                    break;
                }
            }
            probe.row += 1;
            probe.done = 0;
            probe.kept = None;
        }
        Ok(probe.row == input.len())
    }

    /// The output batch of the listed pairs, a column at a time.
    fn gather(&self, input: &Batch) -> Batch {
        let table = self.table.as_ref().expect("begin builds the table");
        let Some(optional) = self.optional.as_ref() else {
            // An inner join pairs every output row with a build row: the input's columns are
            // copied column by column, typed ones staying typed (a scan's node ids, typed
            // property reads), and the build side's columns set beside them.
            let mut joined = Batch::new(input.width());
            joined.push_rows(input, &self.input_rows);
            debug_assert!(
                !self.build_rows.contains(&NO_ROW),
                "only a left outer join has unpaired rows"
            );
            for (slot, column) in self.build_slots.iter().zip(&table.columns) {
                column.gather(&self.build_rows, &mut joined, *slot);
            }
            return joined;
        };
        let nulls = &optional.nulls[..];
        let rows = self.input_rows.len();
        let columns = (0..input.width())
            .map(|slot| {
                if let Some(j) = self.build_slots.iter().position(|s| *s == slot) {
                    let column = &table.columns[j];
                    (self.build_rows.iter())
                        .map(|&b| match b {
                            NO_ROW => Value::Null,
                            b => column.value(b as usize),
                        })
                        .collect()
                } else if let Some(values) = input.values(slot) {
                    let nulled = nulls.contains(&slot);
                    (self.input_rows.iter().zip(&self.build_rows))
                        .map(|(&r, &b)| match b {
                            NO_ROW if nulled => Value::Null,
                            _ => values[r as usize].clone(),
                        })
                        .collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        Batch::from_columns(rows, columns)
    }
}

/// The group of every row of a single key's typed `vector` in an integer table (see
/// INTEGER KEYS): an integer's own, an integral float's integer's, none for a null, another
/// float, a boolean or a string — none of which equals an integer.
fn int_spans(ints: &IntGroups, vector: &Vector, spans: &mut Vec<Span>) {
    let find = |i: Option<i64>| i.map_or_else(Span::default, |i| ints.get(i));
    match vector {
        Vector::Int(keys) if keys.null_count() == 0 => {
            ints.extend(keys.values().iter().copied(), spans)
        }
        Vector::Int(keys) => spans
            .extend((0..keys.len()).map(|row| find(keys.is_valid(row).then(|| keys.value(row))))),
        Vector::Float(keys) => spans.extend((0..keys.len()).map(|row| {
            find(
                keys.is_valid(row)
                    .then(|| keys.value(row))
                    .and_then(integral_float),
            )
        })),
        Vector::Bool(keys) => spans.resize(keys.len(), Span::default()),
        Vector::Str(keys) => spans.resize(keys.len(), Span::default()),
    }
}

/// Holds build row `row` of `batch` — its `slots` values appended to `columns`, one more of
/// `held_rows` (within `MAX_MATERIALIZED_ROWS`, checked) — and returns its index among them.
fn hold(
    (columns, held_rows): (&mut [Vec<Value>], &mut usize),
    slots: &[usize],
    batch: &Batch,
    row: usize,
) -> Result<u32> {
    check_materialized(*held_rows + 1)?;
    for (column, slot) in columns.iter_mut().zip(slots) {
        column.push(batch.get(*slot, row).clone());
    }
    let build_row = u32::try_from(*held_rows).expect("held rows are bounded");
    *held_rows += 1;
    Ok(build_row)
}

/// The table order and index of build rows `keyed` (`(key, build row)`, in build order) by
/// their integer keys (see INTEGER BUILD): sorted by key, stably — a group's rows stay in
/// build order — and cut into groups.
fn int_groups(mut keyed: Vec<(i64, u32)>) -> (Vec<u32>, Index) {
    keyed.sort_by_key(|&(key, _)| key);
    let mut groups = Vec::new();
    let mut start = 0;
    for group in keyed.chunk_by(|a, b| a.0 == b.0) {
        let len = u32::try_from(group.len()).expect("held rows are bounded");
        groups.push((group[0].0, Span { start, len }));
        start += len;
    }
    let order = keyed.into_iter().map(|(_, build_row)| build_row).collect();
    (order, Index::Ints(IntGroups::of(groups)))
}

/// The integer of a key that is one integer.
fn int_key(key: &GroupKey) -> Option<i64> {
    match key.0[..] {
        [Value::Int(i)] => Some(i),
        _ => None,
    }
}

/// The key of `env`'s row under `exprs` (every one evaluated, see ERRORS) into `key`
/// (cleared first); `false` when a value of it can equal nothing.
fn key_of(
    exprs: &[BExpr],
    env: &mut Env,
    ctx: &mut ExecContext,
    key: &mut Vec<Value>,
) -> Result<bool> {
    key.clear();
    for expr in exprs {
        key.push(eval(expr, env, ctx)?);
    }
    Ok(key.iter().all(can_be_equal))
}

impl Stage for HashJoin {
    fn execute(
        &mut self,
        input: &mut Batch,
        out: &mut Batch,
        ctx: &mut ExecContext,
    ) -> Result<Flow> {
        if input.is_empty() {
            // An empty input never runs the build side (see BUILD).
            return Ok(Flow::NeedMoreInput);
        }
        // One step gives up to BATCH_ROWS joined rows; with the key filter running (see THE
        // KEY FILTER) steps go on until the output is full or the input done.
        loop {
            let mut probe = match self.probe.take() {
                Some(probe) => probe,
                None => self.begin(input, ctx)?,
            };
            let done = self.pairs(&mut probe, input, ctx)?;
            let joined = self.gather(input);
            let kept = self.rechecked(joined, ctx)?;
            if out.is_empty() {
                *out = kept;
            } else {
                let rows: Vec<u32> = (0..kept.len() as u32).collect();
                out.push_rows(&kept, &rows);
            }
            if done {
                return Ok(Flow::NeedMoreInput);
            }
            self.probe = Some(probe);
            if out.len() >= BATCH_ROWS {
                return Ok(Flow::HaveMoreOutput);
            }
        }
    }

    fn reset(&mut self) {
        self.probe = None;
        self.rerun = self.table.is_some();
    }

    fn fuse(&mut self, above: &mut dyn Stage, own_profile_id: Option<usize>) -> bool {
        let Some(filter) = above.as_filter() else {
            return false;
        };
        if self.recheck.is_some() || self.optional.is_some() {
            return false;
        }
        let ([input_key], [build_key]) = (&self.input_keys[..], &self.build_keys[..]) else {
            return false;
        };
        let Some(BExpr::Compare(sides, ops)) = filter.only_predicate() else {
            return false;
        };
        let text = |e: &BExpr| format!("{e:?}");
        let (a, b) = match &sides[..] {
            [a, b] if ops[..] == [ComparisonOp::Eq] => (text(a), text(b)),
            _ => return false,
        };
        let (i, k) = (text(input_key), text(build_key));
        if !((a == i && b == k) || (a == k && b == i)) {
            return false;
        }
        let filter = std::mem::replace(filter, Filter::new(&BExpr::Const(Value::Bool(true))));
        self.recheck = Some(Recheck {
            filter,
            join_profile_id: own_profile_id,
            joined: 0,
        });
        true
    }

    fn take_jit_profile(&mut self) -> Option<crate::context::JitProfile> {
        // The stage's line is the key filter's: how its batches ran, if any did.
        let jit = self.recheck.as_mut()?.filter.take_jit_profile()?;
        (jit.compiled_batches + jit.interpreted_batches > 0).then_some(jit)
    }

    fn profile_fused(
        &mut self,
        profile: &mut [crate::context::OperatorProfile],
        time: std::time::Duration,
        ran: bool,
        _jit: Option<&crate::context::JitProfile>,
    ) {
        let Some(recheck) = &mut self.recheck else {
            return;
        };
        if let Some(entry) = recheck.join_profile_id.and_then(|id| profile.get_mut(id)) {
            entry.time += time;
            if ran {
                entry.rows += std::mem::take(&mut recheck.joined);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key finds its own group and every other integer none, in both forms.
    #[test]
    fn integer_groups_find_the_same_spans_dense_or_hashed() {
        let cases: [&[i64]; 5] = [
            &[-2, 3, 4, 7],
            &[0, 1_000_000],
            &[i64::MIN, 0, i64::MAX],
            &[i64::MAX - 1, i64::MAX],
            &[i64::MIN, i64::MIN + 3],
        ];
        for keys in cases {
            // Groups of 1, 2, 3, ... rows, side by side in key order.
            let mut start = 0;
            let groups: Vec<(i64, Span)> = (keys.iter().enumerate())
                .map(|(i, &k)| {
                    let span = Span {
                        start,
                        len: i as u32 + 1,
                    };
                    start += span.len;
                    (k, span)
                })
                .collect();
            let index = IntGroups::of(groups.clone());
            let dense = matches!(index, IntGroups::Dense { .. });
            assert_eq!(
                dense,
                keys != [0, 1_000_000] && keys != [i64::MIN, 0, i64::MAX]
            );
            for (k, span) in groups {
                let found = index.get(k);
                assert_eq!(
                    (found.start, found.len),
                    (span.start, span.len),
                    "{keys:?} {k}"
                );
            }
            let probes = [
                i64::MIN,
                i64::MIN + 1,
                -1,
                5,
                6,
                8,
                999_999,
                i64::MAX - 2,
                i64::MAX,
            ];
            for k in probes.into_iter().filter(|k| !keys.contains(k)) {
                assert_eq!(index.get(k).len, 0, "{keys:?} {k}");
            }
        }
    }

    /// A build column of strings is typed only while its bytes fit a `StringArray`'s 32-bit
    /// offsets; past that it stays values (one string, referenced ~2.1 GiB's worth of times,
    /// allocates nothing).
    #[test]
    fn a_string_column_past_32_bit_offsets_stays_values() {
        let mib = "x".repeat(1 << 20);
        let under: Vec<Option<&str>> = vec![Some(mib.as_str()); 2047];
        let over: Vec<Option<&str>> = vec![Some(mib.as_str()); 2048];
        assert!(fits_32_bit_offsets(&under) && !fits_32_bit_offsets(&over));
        let small = vec![Value::string("a"), Value::Null, Value::string("b")];
        assert!(matches!(
            TableColumn::of(small),
            TableColumn::Vector(Vector::Str(_))
        ));
    }
}
