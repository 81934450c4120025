//! Typed aggregation: the common aggregate shapes accumulated straight from typed vectors.
//!
//! WHAT
//! ====
//! An Aggregate with at most one grouping key and calls among `count(*)`, `count(x)`,
//! `sum(x)`, `avg(x)`, `min(x)` and `max(x)`, none DISTINCT ([`TypedTable::new`]), keeps a
//! [`TypedTable`] instead of `Groups` for as long as each batch's key is an INTEGER or STRING
//! vector and each argument an INTEGER or FLOAT vector of the type its call has met so far
//! (`count(x)`: a vector of any type). A batch is one loop over its rows: the row's group
//! found by its key (an integer in `0..DENSE_KEYS` by indexing an array, another integer or
//! a string through a hash map, null in one slot), then each call's state — a count, an
//! `i64` or `f64` sum or best per group, in flat arrays — updated in place. No `Value` is made, no `GroupKey` hashed, no
//! accumulator dispatched per value; `Groups` pays all three per row and call.
//!
//! SAME RESULTS
//! ============
//! The table is, in another form, exactly the `Groups` the row path would hold over the same
//! rows ([`TypedTable::into_groups`] builds that `Groups`), and each row takes the row path's
//! steps in its order — group (created at its first row, in first-seen order, under the same
//! `check_materialized` limit), then each call in order:
//! - `count(*)` counts rows, `count(x)` valid values; `sum`/`avg` count valid values and add
//!   them in row order: integers with an overflow check (an overflow raises the row path's
//!   error, from the same `eval::arith`), floats from `+0.0` (the row path's sum starts as the
//!   integer 0, and `0 + x` is `0.0 + x`, which turns `-0.0` into `0.0` in both);
//! - `min`/`max` replace the best only with a strictly better value under `value::order`
//!   (NaN above every number, `-0.0` equal to `0.0`), so the first of equal values stays.
//!
//! A batch the table cannot take — a key or argument not computed as a vector, of another
//! type, or an argument of a type other than its call has met — is declined untouched
//! (`feed` returns false): the caller turns the table into `Groups` for good and feeds the
//! batch row by row, which goes on from exactly the state it would have reached. An argument
//! with no valid value in a batch constrains nothing. Output rows always come from
//! `Groups::finish` (over the converted table): `avg`'s division, an empty input's one row of
//! empty states and the row layout are the row path's own.
//!
//! PARALLEL
//! ========
//! A worker's table ([`TypedTable::new`] with `replay`) is the typed `MorselAggregator`: the
//! morsel row that created each group, the states of the calls whose partial states merge
//! (`count`, `min`, `max`: `plexus_plan::logical::PartialForm::Merged`), and, for `sum`/`avg`
//! (`Replayed`: float rounding and integer overflow depend on the order of every addition), each
//! valid value with its row, group and call, typed, instead of a sum. The caller merges a
//! morsel into its own table ([`TypedTable::merge`]) with the steps `aggregate` ERRORS lists —
//! the morsel's groups created in their order until the limit, the values replayed in row
//! order up to the row that met the limit (an overflow raises there), the limit error, the
//! merged states folded, the worker's error — so the result is the serial plan's, bit for
//! bit. When the caller's table or the morsel has turned to `Groups`, the other is converted
//! ([`TypedTable::into_groups`], [`TypedTable::into_morsel_values`]) and `Groups::merge` runs.
//!
//! SUMS BY BOUNDS
//! ==============
//! Replaying every value of a `sum` serially in the caller was the slowest part of a
//! parallel aggregate (~50 ms of a 10 M-row `sum(p.x)`, the workers done long before). For
//! an integer sum the order of the additions matters only to whether one overflows, and a
//! morsel's values overflow a running sum `s` exactly when `s` plus one of their running
//! sums leaves 64 bits — when `s + highest` or `s + lowest` does. So a worker, its morsel
//! done, sums each group's integer values in 128 bits ([`TypedTable::bound_sums`], in
//! parallel), and the caller adds the total, raising the overflow error where the bounds
//! say a value would have. Exactly the replay's result: the same sums and counts, the same
//! error (overflows all raise one). A float sum (rounding per addition), and any morsel that
//! met the group limit (its values count only up to that row), are replayed as before.
//!
//! BOUNDS
//! ======
//! `DENSE_KEYS` slots (16 KiB) per table; states grow with the groups, bounded as `Groups` is
//! by `check_materialized`; a morsel's replayed values are at most one per row and call,
//! kept in blocks that never move ([`ReplayLog`]): one vector doubling as a morsel's values
//! came in copied them all again at each doubling (a fifth of a 10 M-row `sum`'s time).

use super::aggregate::{Aggregation, Groups, Replay};
use crate::column::Vector;
use crate::context::check_materialized;
use crate::eval::aggregate::Accumulator;
use arrow::array::{Array, Float64Array, Int64Array};
use plexus_plan::logical::{AggCall, AggFunction, ArithOp};
use plexus_value::error::{QueryError, Result};
use plexus_value::value::Value;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Keys `0..DENSE_KEYS` find their group by indexing an array (the array compiled
/// pipelines index too).
const DENSE_KEYS: usize = plexus_jit::DENSE_KEYS;

/// An empty group slot.
const NO_GROUP: u32 = plexus_jit::NO_GROUP;

/// What one call computes, as the table keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `count(*)`.
    Rows,
    /// `count(x)`.
    Count,
    /// `sum(x)` or `avg(x)` (their states are alike; `Accumulator::finish` tells them apart).
    Sum,
    Min,
    Max,
}

impl Op {
    fn of(call: &AggCall) -> Option<Op> {
        if call.distinct || call.extra.is_some() {
            return None;
        }
        Some(match (call.function, &call.arg) {
            (AggFunction::Count, None) => Op::Rows,
            (AggFunction::Count, Some(_)) => Op::Count,
            (AggFunction::Sum | AggFunction::Avg, Some(_)) => Op::Sum,
            (AggFunction::Min, Some(_)) => Op::Min,
            (AggFunction::Max, Some(_)) => Op::Max,
            _ => return None,
        })
    }
}

/// The aggregation as a compiled pipeline computes it (`plexus_jit::AggregateProgram`):
/// typed aggregation's shapes with an INTEGER key or none (a string key is not compiled), or
/// why not.
pub(super) fn program(
    aggregation: &Aggregation,
    replay: bool,
) -> std::result::Result<plexus_jit::AggregateProgram, String> {
    if aggregation.keys.len() > 1 {
        return Err("more than one grouping key".into());
    }
    let calls = (aggregation.calls.iter())
        .map(|(_, call)| {
            let op = match Op::of(call) {
                Some(Op::Rows) => plexus_jit::AggOp::Rows,
                Some(Op::Count) => plexus_jit::AggOp::Count,
                Some(Op::Sum) => plexus_jit::AggOp::Sum,
                Some(Op::Min) => plexus_jit::AggOp::Min,
                Some(Op::Max) => plexus_jit::AggOp::Max,
                None if call.distinct => return Err("an aggregate with DISTINCT".into()),
                None => return Err(format!("the aggregate {}", call.function.name())),
            };
            Ok((op, call.arg.clone()))
        })
        .collect::<std::result::Result<_, String>>()?;
    Ok(plexus_jit::AggregateProgram {
        key: aggregation.keys.first().map(|(_, key)| key.clone()),
        calls,
        replay,
    })
}

/// The type of the values a call has met (all groups alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    None,
    Int,
    Float,
}

/// One call's state, per group.
#[derive(Debug, Clone)]
struct CallState {
    op: Op,
    kind: Kind,
    /// Rows (`count(*)`) or valid values met — for a morsel's `sum`, none: its values go to
    /// the replays.
    count: Vec<i64>,
    /// The sum or best so far, as `kind` says (its other array stays zeroed).
    ints: Vec<i64>,
    floats: Vec<f64>,
}

/// A value of a `sum`/`avg` recorded by a worker for the caller (see PARALLEL): the
/// morsel's input row it came from, its group and call, an `i64` or the bits of an `f64` as
/// the call's `kind` says. Compiled pipelines write the same records.
type TypedReplay = plexus_jit::ReplayRecord;

/// A worker's replayed values in row order, in blocks that never move (see BOUNDS): a full
/// block is left as it is and a larger one started, so no record is copied as the log grows.
#[derive(Debug, Clone, Default)]
struct ReplayLog {
    blocks: Vec<Vec<TypedReplay>>,
}

/// Records in a log's first block; each further block holds twice the one before, up to
/// `MAX_REPLAY_BLOCK`.
const FIRST_REPLAY_BLOCK: usize = 1024;
const MAX_REPLAY_BLOCK: usize = 1 << 16;

impl ReplayLog {
    fn len(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }

    fn push(&mut self, replay: TypedReplay) {
        self.room(1).push(replay);
    }

    /// The block to append up to `n` more records to without it moving: the last one if it
    /// has the room, else a new one (`n` = 0: one that allocates nothing).
    fn room(&mut self, n: usize) -> &mut Vec<TypedReplay> {
        let full = (self.blocks.last()).is_none_or(|b| b.capacity() - b.len() < n);
        if full {
            let next = (self.blocks.last()).map_or(0, |b| b.capacity() * 2);
            let capacity = next.clamp(FIRST_REPLAY_BLOCK, MAX_REPLAY_BLOCK).max(n);
            self.blocks
                .push(Vec::with_capacity(if n == 0 { 0 } else { capacity }));
        }
        self.blocks.last_mut().expect("a block was just ensured")
    }

    /// Keeps the first `n` records.
    fn truncate(&mut self, mut n: usize) {
        let mut kept = 0;
        for (i, block) in self.blocks.iter_mut().enumerate() {
            block.truncate(n);
            n -= block.len();
            if !block.is_empty() {
                kept = i + 1;
            }
        }
        self.blocks.truncate(kept);
    }

    fn iter(&self) -> impl Iterator<Item = &TypedReplay> {
        self.blocks.iter().flatten()
    }
}

/// A group's key (`Null` too for the one group of an Aggregate without keys).
#[derive(Debug, Clone)]
enum Key {
    Null,
    Int(i64),
    Str(Box<str>),
}

/// A row's key, as looked up.
#[derive(Debug, Clone, Copy)]
enum KeyRef<'a> {
    Null,
    Int(i64),
    Str(&'a str),
}

impl Key {
    fn as_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Null => KeyRef::Null,
            Key::Int(k) => KeyRef::Int(*k),
            Key::Str(s) => KeyRef::Str(s),
        }
    }
}

impl From<KeyRef<'_>> for Key {
    fn from(key: KeyRef) -> Key {
        match key {
            KeyRef::Null => Key::Null,
            KeyRef::Int(k) => Key::Int(k),
            KeyRef::Str(s) => Key::Str(s.into()),
        }
    }
}

/// A batch's argument for one call, as the row loop reads it.
enum Arg<'a> {
    Rows,
    /// No valid value in the batch.
    Nothing,
    /// `count(x)`: only validity matters.
    Any(&'a Vector),
    Int(&'a Int64Array),
    Float(&'a Float64Array),
}

/// An Aggregate's (or a worker's) typed table (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct TypedTable {
    keyed: bool,
    /// Group of each key in `0..DENSE_KEYS` (allocated with the first keyed group).
    dense: Vec<u32>,
    sparse: HashMap<i64, u32, ahash::RandomState>,
    strings: HashMap<Box<str>, u32, ahash::RandomState>,
    null_group: u32,
    /// Key per group, in first-seen order; without a key, one `Null` group.
    keys: Vec<Key>,
    /// The input row that created each group (0 = the first row fed).
    first_rows: Vec<u64>,
    calls: Vec<CallState>,
    /// A worker's table: `sum`/`avg` values recorded, not added (see PARALLEL).
    replay: bool,
    replays: ReplayLog,
    /// A finished morsel's integer sums, per call (`None`: not an integer `sum`/`avg`), per
    /// group (see SUMS BY BOUNDS).
    bounds: Vec<Option<Vec<SumBounds>>>,
    /// Rows fed so far.
    rows: u64,
}

/// A morsel's integer values of one `sum`/`avg` in one group, as the merge needs them (see
/// SUMS BY BOUNDS): how many, their total, and the highest and lowest of their running sums
/// (the empty one, 0, included) — exact, in 128 bits.
#[derive(Debug, Clone, Copy, Default)]
struct SumBounds {
    values: i64,
    total: i128,
    highest: i128,
    lowest: i128,
}

impl TypedTable {
    /// A table for `aggregation` if its shape is one typed aggregation covers (see WHAT);
    /// `replay` for a worker's (see PARALLEL).
    pub(super) fn new(aggregation: &Aggregation, replay: bool) -> Option<TypedTable> {
        if aggregation.keys.len() > 1 {
            return None;
        }
        let calls = (aggregation.calls.iter())
            .map(|(_, call)| {
                Some(CallState {
                    op: Op::of(call)?,
                    kind: Kind::None,
                    count: Vec::new(),
                    ints: Vec::new(),
                    floats: Vec::new(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TypedTable {
            keyed: !aggregation.keys.is_empty(),
            dense: Vec::new(),
            sparse: HashMap::default(),
            strings: HashMap::default(),
            null_group: NO_GROUP,
            keys: Vec::new(),
            first_rows: Vec::new(),
            calls,
            replay,
            replays: ReplayLog::default(),
            bounds: Vec::new(),
            rows: 0,
        })
    }

    /// A worker's table, its morsel done: the bounds of its integer sums (see SUMS BY
    /// BOUNDS), one pass over its values in the worker instead of the caller's replay.
    pub(super) fn bound_sums(&mut self) {
        debug_assert!(self.replay);
        let groups = self.keys.len();
        self.bounds = (self.calls.iter())
            .map(|c| {
                (c.op == Op::Sum && c.kind == Kind::Int).then(|| vec![SumBounds::default(); groups])
            })
            .collect();
        // Block by block: a loop over a slice, not a flattened iterator's steps per record.
        for block in &self.replays.blocks {
            for replay in block {
                if let Some(bounds) = &mut self.bounds[replay.call as usize] {
                    let b = &mut bounds[replay.group as usize];
                    b.values += 1;
                    b.total += i128::from(replay.bits as i64);
                    b.highest = b.highest.max(b.total);
                    b.lowest = b.lowest.min(b.total);
                }
            }
        }
    }

    /// Feeds the `len` rows of a batch whose key and argument vectors are `keys` and `args`
    /// (`None`: not a vector), or returns false, untouched, when their types are not the
    /// table's (see SAME RESULTS).
    pub(super) fn feed(
        &mut self,
        keys: &[Option<Vector>],
        args: &[Option<Vector>],
        len: usize,
    ) -> Result<bool> {
        if len == 0 {
            return Ok(true);
        }
        let key = match (self.keyed, keys.first()) {
            (false, _) => None,
            (true, Some(Some(key @ (Vector::Int(_) | Vector::Str(_))))) => Some(key),
            _ => return Ok(false),
        };
        // Checked before anything changes: a declined batch leaves the table as it was.
        let mut typed = Vec::with_capacity(self.calls.len());
        for (call, arg) in self.calls.iter().zip(args) {
            let arg = match (call.op, arg) {
                (Op::Rows, _) => Arg::Rows,
                (_, Some(v)) if v.array().null_count() == v.len() => Arg::Nothing,
                (Op::Count, Some(v)) => Arg::Any(v),
                (_, Some(Vector::Int(a))) if call.kind != Kind::Float => Arg::Int(a),
                (_, Some(Vector::Float(a))) if call.kind != Kind::Int => Arg::Float(a),
                _ => return Ok(false),
            };
            typed.push(arg);
        }
        for (call, arg) in self.calls.iter_mut().zip(&typed) {
            match arg {
                Arg::Int(_) if call.op != Op::Count => call.kind = Kind::Int,
                Arg::Float(_) if call.op != Op::Count => call.kind = Kind::Float,
                _ => {}
            }
        }
        for row in 0..len {
            let group = match key {
                Some(Vector::Int(k)) if k.is_valid(row) => self.group(KeyRef::Int(k.value(row)))?,
                Some(Vector::Str(k)) if k.is_valid(row) => self.group(KeyRef::Str(k.value(row)))?,
                _ => self.group(KeyRef::Null)?,
            };
            for (call, arg) in typed.iter().enumerate() {
                self.update(call, group, arg, row)?;
            }
            self.rows += 1;
        }
        Ok(true)
    }

    /// The group of `key`, created (with empty states) at this row if new. (An integer and a
    /// string never share a group, as under `GroupKey`.)
    fn group(&mut self, key: KeyRef) -> Result<usize> {
        let dense = |k: i64| (0..DENSE_KEYS as i64).contains(&k).then_some(k as usize);
        let found = match key {
            KeyRef::Null => self.null_group,
            KeyRef::Int(k) => match dense(k) {
                Some(i) => self.dense.get(i).copied().unwrap_or(NO_GROUP),
                None => self.sparse.get(&k).copied().unwrap_or(NO_GROUP),
            },
            KeyRef::Str(s) => self.strings.get(s).copied().unwrap_or(NO_GROUP),
        };
        if found != NO_GROUP {
            return Ok(found as usize);
        }
        check_materialized(self.keys.len() + 1)?;
        let group = self.keys.len();
        match key {
            KeyRef::Null => self.null_group = group as u32,
            KeyRef::Int(k) => match dense(k) {
                Some(i) => {
                    if self.dense.is_empty() {
                        self.dense = vec![NO_GROUP; DENSE_KEYS];
                    }
                    self.dense[i] = group as u32;
                }
                None => {
                    self.sparse.insert(k, group as u32);
                }
            },
            KeyRef::Str(s) => {
                self.strings.insert(s.into(), group as u32);
            }
        }
        self.keys.push(key.into());
        self.first_rows.push(self.rows);
        for call in &mut self.calls {
            call.count.push(0);
            call.ints.push(0);
            call.floats.push(0.0);
        }
        Ok(group)
    }

    /// Feeds row `row`'s argument `arg` to call `call` of `group`.
    fn update(&mut self, call: usize, group: usize, arg: &Arg, row: usize) -> Result<()> {
        let state = &mut self.calls[call];
        match *arg {
            Arg::Rows => state.count[group] += 1,
            Arg::Nothing => {}
            Arg::Any(v) => state.count[group] += i64::from(v.array().is_valid(row)),
            Arg::Int(a) if a.is_valid(row) => {
                let v = a.value(row);
                if self.replay && state.op == Op::Sum {
                    self.replays.push(replay(self.rows, group, call, v as u64));
                } else {
                    state.add_int(group, v)?;
                }
            }
            Arg::Float(a) if a.is_valid(row) => {
                let v = a.value(row);
                if self.replay && state.op == Op::Sum {
                    self.replays
                        .push(replay(self.rows, group, call, v.to_bits()));
                } else {
                    state.add_float(group, v);
                }
            }
            Arg::Int(_) | Arg::Float(_) => {}
        }
        Ok(())
    }

    /// Runs `code` — a compiled pipeline of this table's aggregation (`exec::filter`,
    /// COMPILED PIPELINES) — over `columns` (`len` rows), creating groups where it stops for
    /// one, and adds the rows each of its predicates passed to `passed`. Returns the row from
    /// which the interpreter must take the batch (`len`: none): where the code stopped to
    /// fall back, or where the limit on groups was met (the interpreter then raises that or
    /// an earlier error, as on the whole batch); 0, untouched, when the arguments' types are
    /// not the ones the calls have met.
    pub(super) fn run_compiled(
        &mut self,
        code: &plexus_jit::CompiledCode,
        (columns, params): (&[plexus_jit::Column], &[&Value]),
        len: usize,
        passed: &mut [u64],
    ) -> usize {
        let Some(types) = code.call_types() else {
            return 0;
        };
        // A call's kind only ever goes from none to the type of the values it meets.
        for (call, ty) in self.calls.iter().zip(types) {
            let kind = match ty {
                Some(plexus_jit::ColumnType::Int) => Kind::Int,
                Some(plexus_jit::ColumnType::Float) => Kind::Float,
                _ => continue,
            };
            if !matches!(call.op, Op::Rows | Op::Count)
                && call.kind != Kind::None
                && call.kind != kind
            {
                return 0;
            }
        }
        for (call, ty) in self.calls.iter_mut().zip(types) {
            if matches!(call.op, Op::Rows | Op::Count) {
                continue;
            }
            match ty {
                Some(plexus_jit::ColumnType::Int) => call.kind = Kind::Int,
                Some(plexus_jit::ColumnType::Float) => call.kind = Kind::Float,
                _ => {}
            }
        }
        if self.dense.is_empty() {
            self.dense = vec![NO_GROUP; DENSE_KEYS];
        }
        let mut start = 0;
        let replayed_calls = if self.replay { self.calls.len() } else { 0 };
        loop {
            // The most `run_aggregate` may write: a record per row and call, for a worker's.
            let room = match replayed_calls {
                0 => 0,
                calls => (len - start) * calls + 1,
            };
            let mut state = plexus_jit::AggregateState {
                dense: &mut self.dense,
                null_group: self.null_group,
                rows_base: self.rows,
                calls: (self.calls.iter_mut())
                    .map(|c| plexus_jit::CallBuffers {
                        count: &mut c.count,
                        ints: &mut c.ints,
                        floats: &mut c.floats,
                    })
                    .collect(),
                replays: self.replays.room(room),
            };
            let Some(progress) = code.run_aggregate(columns, params, (start, len), &mut state)
            else {
                return start;
            };
            for (total, more) in passed.iter_mut().zip(&progress.passed) {
                *total += more;
            }
            self.rows += progress.fed;
            match progress.stop {
                plexus_jit::Stop::Done => return len,
                plexus_jit::Stop::Fallback { row } => return row,
                plexus_jit::Stop::NewGroup { row, key } => {
                    let key = key.map_or(KeyRef::Null, KeyRef::Int);
                    if self.group(key).is_err() {
                        return row;
                    }
                    start = row;
                }
            }
        }
    }

    /// Where the table stands: its groups, replayed values and rows, for
    /// [`TypedTable::roll_back`].
    pub(super) fn mark(&self) -> (usize, usize, u64) {
        (self.keys.len(), self.replays.len(), self.rows)
    }

    /// Forgets the groups, replayed values and rows fed after `mark` — what decides a
    /// worker's partial aggregate's errors when merged (its `count`, `min` and `max` states
    /// do not, and may keep rows fed since). For a batch compiled code fed in part before
    /// the rest failed in a filter, which the interpreter would have fed none of.
    pub(super) fn roll_back(&mut self, (groups, replays, rows): (usize, usize, u64)) {
        for key in self.keys.drain(groups..) {
            match key {
                Key::Null => self.null_group = NO_GROUP,
                Key::Int(k) if (0..DENSE_KEYS as i64).contains(&k) => {
                    self.dense[k as usize] = NO_GROUP;
                }
                Key::Int(k) => {
                    self.sparse.remove(&k);
                }
                Key::Str(s) => {
                    self.strings.remove(&s);
                }
            }
        }
        self.first_rows.truncate(groups);
        for call in &mut self.calls {
            call.count.truncate(groups);
            call.ints.truncate(groups);
            call.floats.truncate(groups);
        }
        self.replays.truncate(replays);
        self.rows = rows;
    }

    /// Whether a morsel's table can merge into this one typed: no call has met integers on
    /// one side and floats on the other.
    pub(super) fn merges_typed(&self, part: &TypedTable) -> bool {
        (self.calls.iter().zip(&part.calls))
            .all(|(a, b)| a.kind == Kind::None || b.kind == Kind::None || a.kind == b.kind)
    }

    /// Folds in the next morsel's table (see PARALLEL; `merges_typed` holds), then its
    /// worker's `error`.
    pub(super) fn merge(&mut self, part: TypedTable, error: Option<QueryError>) -> Result<()> {
        debug_assert!(self.merges_typed(&part) && part.replay && !self.replay);
        // (1) This table's group of each of the morsel's groups, in the morsel's order.
        let mut merged_into = Vec::with_capacity(part.keys.len());
        let mut limit = None;
        for (key, first_row) in part.keys.iter().zip(&part.first_rows) {
            match self.group(key.as_ref()) {
                Ok(group) => merged_into.push(group),
                Err(e) => {
                    limit = Some((*first_row, e));
                    break;
                }
            }
        }
        for (mine, theirs) in self.calls.iter_mut().zip(&part.calls) {
            if mine.kind == Kind::None {
                mine.kind = theirs.kind;
            }
        }
        // (2) The values in row order, up to the row that met the limit — an integer sum's
        // by its bounds when no limit was met (SUMS BY BOUNDS).
        let bounded: Vec<bool> = (0..self.calls.len())
            .map(|c| limit.is_none() && part.bounds.get(c).is_some_and(Option::is_some))
            .collect();
        for (c, bounds) in part.bounds.iter().enumerate().filter(|&(c, _)| bounded[c]) {
            let state = &mut self.calls[c];
            debug_assert_eq!(state.kind, Kind::Int);
            let bounds = bounds.as_ref().expect("bounded");
            for (b, &group) in bounds.iter().zip(&merged_into) {
                let sum = i128::from(state.ints[group]);
                let range = i128::from(i64::MIN)..=i128::from(i64::MAX);
                if !range.contains(&(sum + b.highest)) || !range.contains(&(sum + b.lowest)) {
                    // Some running sum leaves 64 bits: the error every overflow raises.
                    return Err(overflow(i64::MAX, 1));
                }
                state.ints[group] = i64::try_from(sum + b.total).expect("within the bounds");
                state.count[group] += b.values;
            }
        }
        let replayed = bounded.iter().any(|&b| !b);
        for replay in part.replays.iter().filter(|_| replayed) {
            if limit.as_ref().is_some_and(|(row, _)| replay.row >= *row) {
                break;
            }
            if bounded[replay.call as usize] {
                continue;
            }
            let group = merged_into[replay.group as usize];
            let state = &mut self.calls[replay.call as usize];
            match state.kind {
                Kind::Float => state.add_float(group, f64::from_bits(replay.bits)),
                _ => state.add_int(group, replay.bits as i64)?,
            }
        }
        // (3)
        if let Some((_, e)) = limit {
            return Err(e);
        }
        // (4)
        for (theirs, &group) in merged_into.iter().enumerate() {
            for (mine, part_call) in self.calls.iter_mut().zip(&part.calls) {
                let count = part_call.count[theirs];
                match mine.op {
                    Op::Rows | Op::Count => mine.count[group] += count,
                    Op::Min | Op::Max if count > 0 => {
                        let first = mine.count[group] == 0;
                        match part_call.kind {
                            Kind::Float => mine.offer_float(group, part_call.floats[theirs], first),
                            _ => mine.offer_int(group, part_call.ints[theirs], first),
                        }
                        mine.count[group] += count;
                    }
                    Op::Min | Op::Max | Op::Sum => {}
                }
            }
        }
        // (5)
        error.map_or(Ok(()), Err)
    }

    /// The `Groups` this table stands for (see SAME RESULTS).
    pub(super) fn into_groups(self, aggregation: &Aggregation) -> Groups {
        debug_assert!(
            !self.replay,
            "a worker's table converts with into_morsel_values"
        );
        self.groups(aggregation)
    }

    /// Every group, its key and states, in a `Groups`.
    fn groups(&self, aggregation: &Aggregation) -> Groups {
        let mut groups = Groups::default();
        for group in 0..self.keys.len() {
            groups.push_group(self.key(group), self.states(aggregation, group));
        }
        groups
    }

    /// A worker's table as the row path's morsel state: its `Groups` (the `sum`/`avg`
    /// accumulators empty, as a worker keeps them), the row that created each group, the
    /// replayed values, and the rows fed.
    pub(super) fn into_morsel_values(
        self,
        aggregation: &Aggregation,
    ) -> (Groups, Vec<u64>, Vec<Replay>, u64) {
        debug_assert!(self.replay);
        let groups = self.groups(aggregation);
        let replays = (self.replays.iter())
            .map(|r| Replay {
                row: r.row,
                group: r.group as usize,
                call: r.call as usize,
                value: match self.calls[r.call as usize].kind {
                    Kind::Float => Value::Float(f64::from_bits(r.bits)),
                    _ => Value::Int(r.bits as i64),
                },
            })
            .collect();
        (groups, self.first_rows, replays, self.rows)
    }

    fn key(&self, group: usize) -> Vec<Value> {
        if !self.keyed {
            return Vec::new();
        }
        vec![match &self.keys[group] {
            Key::Null => Value::Null,
            Key::Int(k) => Value::Int(*k),
            Key::Str(s) => Value::from(&**s),
        }]
    }

    /// The accumulators of `group`, as the row path would have them.
    fn states(&self, aggregation: &Aggregation, group: usize) -> Vec<Accumulator> {
        (self.calls.iter().zip(&aggregation.calls))
            .map(|(state, (_, call))| {
                let count = state.count[group];
                let value = |kind: Kind| match kind {
                    Kind::Float => Value::Float(state.floats[group]),
                    _ => Value::Int(state.ints[group]),
                };
                match state.op {
                    Op::Rows | Op::Count => Accumulator::from_parts(call, count, None, None),
                    // A worker's sum is in its replays; a sum that met nothing is the integer 0.
                    Op::Sum if self.replay || count == 0 => Accumulator::new(call),
                    Op::Sum => Accumulator::from_parts(call, count, Some(value(state.kind)), None),
                    Op::Min | Op::Max if count == 0 => Accumulator::new(call),
                    Op::Min | Op::Max => {
                        Accumulator::from_parts(call, count, None, Some(value(state.kind)))
                    }
                }
            })
            .collect()
    }
}

fn replay(row: u64, group: usize, call: usize, bits: u64) -> TypedReplay {
    TypedReplay {
        row,
        group: group as u32,
        call: call as u32,
        bits,
    }
}

impl CallState {
    fn add_int(&mut self, group: usize, v: i64) -> Result<()> {
        self.count[group] += 1;
        match self.op {
            Op::Sum => {
                let sum = self.ints[group];
                self.ints[group] = sum.checked_add(v).ok_or_else(|| overflow(sum, v))?;
            }
            Op::Min | Op::Max => self.offer_int(group, v, self.count[group] == 1),
            Op::Rows | Op::Count => {}
        }
        Ok(())
    }

    fn add_float(&mut self, group: usize, v: f64) {
        self.count[group] += 1;
        match self.op {
            Op::Sum => self.floats[group] += v,
            Op::Min | Op::Max => self.offer_float(group, v, self.count[group] == 1),
            Op::Rows | Op::Count => {}
        }
    }

    /// `min`/`max`: `v` becomes the best if it is the `first` value, else only if strictly
    /// better (the counts are the caller's).
    fn offer_int(&mut self, group: usize, v: i64, first: bool) {
        if first || self.better(v.cmp(&self.ints[group])) {
            self.ints[group] = v;
        }
    }

    fn offer_float(&mut self, group: usize, v: f64, first: bool) {
        if first || self.better(float_order(v, self.floats[group])) {
            self.floats[group] = v;
        }
    }

    fn better(&self, order: Ordering) -> bool {
        match self.op {
            Op::Min => order == Ordering::Less,
            _ => order == Ordering::Greater,
        }
    }
}

/// `value::order` of two floats: NaN above every number and equal to itself; otherwise
/// numeric, `-0.0` equal to `0.0`.
fn float_order(a: f64, b: f64) -> Ordering {
    if a.is_nan() || b.is_nan() {
        a.is_nan().cmp(&b.is_nan())
    } else {
        a.partial_cmp(&b).unwrap_or(Ordering::Equal)
    }
}

/// The error the row path raises when an integer sum overflows (`Accumulator::add`).
fn overflow(sum: i64, v: i64) -> QueryError {
    match crate::eval::arith(ArithOp::Add, &Value::Int(sum), &Value::Int(v)) {
        Err(e) => e,
        Ok(_) => super::parallel::internal("an integer sum overflowed without an error"),
    }
}

#[cfg(test)]
mod tests {
    //! The typed table against the row path as the model: random batches (integer or string
    //! keys with nulls and extremes, a batch of each now and then, integer and float arguments with nulls, NaN, ±0.0, ±inf and
    //! overflowing sums, now and then a column the table declines), random calls; serially
    //! and as morsels merged in order, typed and not, mixed. The outputs (floats bit for bit,
    //! through `Debug`) and errors must be the row path's.
    use super::super::aggregate::{Aggregation, MorselAggregator, Table};
    use super::*;
    use crate::context::{Batch, ExecContext, with_test_ctx};
    use plexus_plan::Params;
    use plexus_plan::logical::BExpr;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;

    fn int() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => (-3i64..12).prop_map(Value::Int),
            1 => Just(Value::Int(i64::MAX)),
            1 => Just(Value::Int(i64::MIN)),
            1 => Just(Value::Int(1 << 62)),
            1 => (5_000i64..5_004).prop_map(Value::Int),
        ]
    }

    fn float() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => (-8i32..8).prop_map(|i| Value::Float(f64::from(i) / 4.0)),
            1 => Just(Value::Float(f64::NAN)),
            1 => Just(Value::Float(-0.0)),
            1 => Just(Value::Float(f64::INFINITY)),
            1 => Just(Value::Float(f64::NEG_INFINITY)),
            1 => Just(Value::Float(1e300)),
        ]
    }

    /// One column of a batch: integers, floats, or (rarely) a string, with nulls.
    fn column(rows: usize) -> impl Strategy<Value = Vec<Value>> {
        let nullable =
            |s: BoxedStrategy<Value>| prop_oneof![4 => s, 1 => Just(Value::Null)].boxed();
        prop_oneof![
            6 => proptest::collection::vec(nullable(int().boxed()), rows),
            4 => proptest::collection::vec(nullable(float().boxed()), rows),
            1 => proptest::collection::vec(Just(Value::from("s")), rows),
            1 => proptest::collection::vec(Just(Value::Null), rows),
        ]
    }

    fn batch() -> impl Strategy<Value = Batch> {
        (0usize..24).prop_flat_map(|rows| {
            let word =
                prop_oneof![Just("a"), Just("b"), Just("ab"), Just("")].prop_map(Value::from);
            let key = prop_oneof![
                6 => proptest::collection::vec(
                    prop_oneof![6 => int(), 1 => Just(Value::Null)], rows),
                3 => proptest::collection::vec(
                    prop_oneof![6 => word, 1 => Just(Value::Null)], rows),
                1 => column(rows),
            ];
            (key, column(rows), column(rows)).prop_map(move |(k, a, b)| {
                let mut batch = Batch::new(3);
                for row in 0..rows {
                    batch.push_row(vec![k[row].clone(), a[row].clone(), b[row].clone()]);
                }
                batch
            })
        })
    }

    fn call() -> impl Strategy<Value = AggCall> {
        let function = prop_oneof![
            Just(AggFunction::Count),
            Just(AggFunction::Sum),
            Just(AggFunction::Avg),
            Just(AggFunction::Min),
            Just(AggFunction::Max),
        ];
        (function, 0usize..3).prop_map(|(function, arg)| AggCall {
            function,
            distinct: false,
            // Slot 0 is the key column; `count(*)` when the key's slot comes up for count.
            arg: (function != AggFunction::Count || arg > 0).then_some(BExpr::Slot(arg)),
            extra: None,
        })
    }

    fn aggregation() -> impl Strategy<Value = Aggregation> {
        (any::<bool>(), proptest::collection::vec(call(), 1..5)).prop_map(|(keyed, calls)| {
            Aggregation {
                keys: if keyed {
                    vec![(3, BExpr::Slot(0))]
                } else {
                    vec![]
                },
                calls: (calls.into_iter().enumerate())
                    .map(|(i, c)| (4 + i, c))
                    .collect(),
            }
        })
    }

    /// Output rows (`Debug`, so `-0.0` and NaN compare as written) or the error's text.
    fn rows(result: Result<Vec<Batch>>) -> std::result::Result<Vec<String>, String> {
        let batches = result.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for batch in batches {
            for row in 0..batch.len() {
                let values: Vec<&Value> = (3..batch.width()).map(|s| batch.get(s, row)).collect();
                out.push(format!("{values:?}"));
            }
        }
        Ok(out)
    }

    fn serial(
        table: Table,
        a: &Aggregation,
        batches: &[Batch],
        ctx: &mut ExecContext,
    ) -> Result<Vec<Batch>> {
        let mut table = table;
        for batch in batches {
            table.feed(a, batch, ctx)?;
        }
        table.finish(a, 4 + a.calls.len())
    }

    /// Each batch a morsel (typed where `typed[i]`), merged in order into `merged`.
    fn parallel(
        merged: Table,
        typed: &[bool],
        a: &Aggregation,
        batches: &[Batch],
        ctx: &mut ExecContext,
    ) -> Result<Vec<Batch>> {
        let mut merged = merged;
        for (batch, &typed) in batches.iter().zip(typed) {
            let mut morsel = if typed {
                MorselAggregator::new(a)
            } else {
                MorselAggregator::default()
            };
            let error = morsel.feed(a, batch, ctx).err();
            let failed = error.is_some();
            merged.merge(a, morsel.finish(error))?;
            debug_assert!(!failed, "a worker's error is the merge's");
        }
        merged.finish(a, 4 + a.calls.len())
    }

    #[test]
    fn typed_tables_agree_with_the_row_path() {
        let (typed_runs, declined) = (Cell::new(0u32), Cell::new(0u32));
        let mut runner = TestRunner::new(Config {
            cases: 3_000,
            failure_persistence: None,
            ..Config::default()
        });
        let case = (
            aggregation(),
            proptest::collection::vec(batch(), 0..4),
            proptest::collection::vec(any::<bool>(), 4),
        );
        let result = runner.run(&case, |(a, batches, typed)| {
            with_test_ctx(
                &Params::new(),
                |ctx| -> std::result::Result<(), TestCaseError> {
                    let model = rows(serial(Table::Values(Groups::default()), &a, &batches, ctx));
                    let fresh = Table::new(&a);
                    if matches!(fresh, Table::Typed(_)) {
                        typed_runs.set(typed_runs.get() + 1);
                    }
                    let mut probe = Table::new(&a);
                    for batch in &batches {
                        if probe.feed(&a, batch, ctx).is_err() {
                            break;
                        }
                    }
                    if !matches!(probe, Table::Typed(_)) {
                        declined.set(declined.get() + 1);
                    }
                    prop_assert_eq!(&rows(serial(fresh, &a, &batches, ctx)), &model, "serial");
                    let all_typed = vec![true; batches.len()];
                    for (typed, merged_typed) in [
                        (&all_typed[..], true),
                        (&typed[..], true),
                        (&typed[..], false),
                    ] {
                        let merged = if merged_typed {
                            Table::new(&a)
                        } else {
                            Table::Values(Groups::default())
                        };
                        let got = rows(parallel(merged, typed, &a, &batches, ctx));
                        prop_assert_eq!(
                            &got,
                            &model,
                            "morsels {:?} into typed {}",
                            typed,
                            merged_typed
                        );
                    }
                    Ok(())
                },
            )
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        // Not vacuous: most runs were typed, and some declined into the row path.
        assert!(typed_runs.get() > 1_500, "{}", typed_runs.get());
        assert!(declined.get() > 200, "{}", declined.get());
    }

    /// The replay log keeps its records in order and in place as it grows past its blocks,
    /// truncates across them (an empty block in the middle too), and `room(0)` allocates
    /// nothing.
    #[test]
    fn replay_log_grows_in_blocks_that_never_move() {
        let mut log = ReplayLog::default();
        assert_eq!(log.room(0).capacity(), 0);
        let record = |i: u64| replay(i, 0, 0, i);
        log.push(record(0));
        let first = log.blocks.last().unwrap().as_ptr();
        for i in 1..5_000 {
            log.push(record(i));
        }
        assert_eq!(
            log.blocks[1].as_ptr(),
            first,
            "the first block did not move"
        );
        assert!(log.blocks.len() > 3, "{} blocks", log.blocks.len());
        // A block made room for records that never came, then more after it.
        log.room(MAX_REPLAY_BLOCK * 2);
        log.room(MAX_REPLAY_BLOCK * 3).push(record(5_000));
        let rows = |log: &ReplayLog| log.iter().map(|r| r.row).collect::<Vec<_>>();
        assert_eq!(rows(&log), (0..5_001).collect::<Vec<_>>());
        assert_eq!(log.len(), 5_001);
        log.truncate(5_001);
        assert_eq!(log.len(), 5_001, "the record after the empty block kept");
        for n in [4_321, 1_024, 1, 0] {
            log.truncate(n);
            assert_eq!(rows(&log), (0..n as u64).collect::<Vec<_>>());
        }
        assert!(log.blocks.is_empty());
    }
}
