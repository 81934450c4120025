//! Compiled pipelines: a chain of filters and the aggregation its rows feed, one loop.
//!
//! WHAT
//! ====
//! For a [`Program`] with an aggregation ([`crate::AggregateProgram`]) the function goes over
//! rows `start..len` and, per row, evaluates every predicate (as a filter's code does); on a
//! row they all keep, it evaluates the grouping key and each call's argument, finds the
//! row's group and updates each call's state in place — the caller's flat per-group arrays
//! (`count`, `i64` sum or best, `f64` sum or best: the typed table of `plexus_exec`'s
//! `typed_aggregate`, whose steps this code takes in the same order). Values stay in
//! registers from the property load to the accumulator; nothing is called per row.
//!
//! ```text
//! fn(columns: *const ColumnArg, params: *const ParamArg, start: u64, len: u64,
//!    state: *const StateArg, out: *mut RunOut, out_passed: *mut u64) -> u32
//! ```
//!
//! STOPPING
//! ========
//! The function stops *before* a row it cannot finish — nothing of that row is applied —
//! and says why ([`Stop`]); every row before it is done:
//! - `NewGroup`: the row's key has no group yet (or, without a key, the one group does not
//!   exist yet). The caller creates it — in first-seen order, under its group limit — and
//!   calls again from that row. At most one stop per group.
//! - `Fallback`: a predicate, the key or an argument would raise an error on the row (an
//!   integer overflow, a zero divisor), an integer sum would overflow, or the key is an
//!   integer outside `0..DENSE_KEYS` (looked up through a hash map in Rust). The caller
//!   runs the interpreter — the stacked filters, then the Aggregate — on the rows from there
//!   on, which raises exactly the error the interpreter raises on the whole batch (the rows
//!   before it raised none), or aggregates them.
//!
//! `out_passed` gets, per predicate, the rows before the stop on which it and every one
//! below it is true (PROFILE's rows per filter); `out.fed` the rows fed to the aggregation.
//!
//! THE STATE
//! =========
//! `StateArg` points at the caller's arrays: `dense` (a group per key in `0..DENSE_KEYS`,
//! `u32::MAX` for none), the group of the null key (or of everything, without a key), and per
//! call `count`, `ints`, `floats` (one entry per group; a group found at or beyond their
//! length is never indexed: the row falls back). The call rules are the typed
//! table's: `count(*)` counts rows, `count(x)` valid values; `sum` adds valid values (an
//! integer sum checked for overflow — the row is then not applied: `Fallback`); `min`/`max`
//! take a valid value when the group has none yet or it is strictly better (floats: NaN
//! above every number, `-0.0` equal to `0.0`), so the first of equal values stays. In
//! `replay` code (a parallel worker's) a `sum`'s valid value is written as a
//! [`ReplayRecord`] (the row's index among those fed, its group and call, its bits) for the
//! caller to add in serial order, and nothing is added.

use super::{
    COLUMN_ARG_BYTES, Column, ColumnArg, ColumnType, CompiledCode, FloatCalls, Gen, Param,
    ParamArg, Signature, Val, load_inputs, row_loop,
};
use crate::shape::{Shape, Unsupported};
use crate::{AggOp, AggregateProgram};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value as Ir, types};
use cranelift_frontend::{FunctionBuilder, Variable};
use plexus_plan::logical::BExpr;
use plexus_value::value::Value;

/// Keys `0..DENSE_KEYS` find their group in `StateArg::dense`.
pub const DENSE_KEYS: usize = 4_096;

/// No group (in `dense`, or as the null key's group).
pub const NO_GROUP: u32 = u32::MAX;

/// The parameters of a pipeline's function ([`Entry`]).
pub(super) const PARAMS: &[Param] = &[
    Param::Pointer,
    Param::Pointer,
    Param::I64,
    Param::I64,
    Param::Pointer,
    Param::Pointer,
    Param::Pointer,
];

pub(super) type Entry = unsafe extern "C" fn(
    *const ColumnArg,
    *const ParamArg,
    u64,
    u64,
    *const StateArg,
    *mut RunOut,
    *mut u64,
) -> u32;

/// One call's arrays, as the code reads them.
#[repr(C)]
pub(super) struct CallArg {
    count: *mut i64,
    ints: *mut i64,
    floats: *mut f64,
}

/// The aggregation's state, as the code reads it (see THE STATE).
#[repr(C)]
pub(super) struct StateArg {
    dense: *mut u32,
    null_group: u64,
    /// Groups in the call arrays: a group from `dense` or `null_group` at or above it is not
    /// indexed (the row falls back).
    groups: u64,
    /// Rows fed before this call (a replay record's row is counted from it).
    rows_base: u64,
    replays: *mut ReplayRecord,
    calls: *const CallArg,
}

/// What the code writes besides the passed counts.
#[repr(C)]
#[derive(Default)]
pub(super) struct RunOut {
    stop_row: u64,
    key: i64,
    key_valid: u64,
    replays: u64,
    fed: u64,
}

/// A `sum`/`avg` value a worker's code recorded for the caller (see THE STATE).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayRecord {
    /// The row's index among the rows fed to the aggregation.
    pub row: u64,
    pub group: u32,
    pub call: u32,
    /// An `i64`, or the bits of an `f64`, as the call's argument type.
    pub bits: u64,
}

/// One call's per-group arrays (all of the table's length in groups).
pub struct CallBuffers<'a> {
    pub count: &'a mut [i64],
    pub ints: &'a mut [i64],
    pub floats: &'a mut [f64],
}

/// The caller's aggregation state for one call of [`CompiledCode::run_aggregate`].
pub struct AggregateState<'a> {
    /// `DENSE_KEYS` entries: the group of each small key, or [`NO_GROUP`].
    pub dense: &'a mut [u32],
    /// The group of the null key (of every row, without a key), or [`NO_GROUP`].
    pub null_group: u32,
    /// Rows fed before this call.
    pub rows_base: u64,
    pub calls: Vec<CallBuffers<'a>>,
    /// Where replay code appends its records.
    pub replays: &'a mut Vec<ReplayRecord>,
}

/// Why compiled code stopped (see STOPPING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every row is done.
    Done,
    /// Row `row` needs the group of `key` (`None`: the null key, or the one group).
    NewGroup { row: usize, key: Option<i64> },
    /// The interpreter takes rows `row..`.
    Fallback { row: usize },
}

/// What a call of compiled pipeline code did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub stop: Stop,
    /// Per predicate, the rows before the stop it and every one below passed.
    pub passed: Vec<u64>,
    /// Rows fed to the aggregation (the last predicate's passed rows).
    pub fed: u64,
}

impl CompiledCode {
    /// The type of each call's argument the pipeline code was compiled for (`None`:
    /// `count(*)`); `None` for a filter's code.
    pub fn call_types(&self) -> Option<&[Option<ColumnType>]> {
        match &self.entry {
            super::Code::Aggregate { call_types, .. } => Some(call_types),
            super::Code::Filter(_) | super::Code::Project { .. } => None,
        }
    }

    /// Runs pipeline code over rows `start..len` (see STOPPING), updating `state` in place;
    /// `None`, untouched, if this is a filter's code, the columns or parameters are not of
    /// the signature's types, or `state` does not have the shape the code needs.
    pub fn run_aggregate(
        &self,
        columns: &[Column],
        params: &[&Value],
        (start, len): (usize, usize),
        state: &mut AggregateState,
    ) -> Option<Progress> {
        let super::Code::Aggregate {
            entry,
            call_types,
            replay,
        } = &self.entry
        else {
            return None;
        };
        let groups = state.calls.first().map_or(0, |c| c.count.len());
        // (The code checks each group it finds against `groups` before indexing.)
        let shaped = start <= len
            && state.dense.len() == DENSE_KEYS
            && state.calls.len() == call_types.len()
            && (state.calls.iter()).all(|c| {
                c.count.len() == groups && c.ints.len() == groups && c.floats.len() == groups
            });
        if !shaped {
            return None;
        }
        let arguments = super::Arguments::of(&self.signature, columns, params, len)?;
        let sums = call_types.len();
        if *replay {
            state.replays.reserve((len - start) * sums + 1);
        }
        let calls: Vec<CallArg> = (state.calls.iter_mut())
            .map(|c| CallArg {
                count: c.count.as_mut_ptr(),
                ints: c.ints.as_mut_ptr(),
                floats: c.floats.as_mut_ptr(),
            })
            .collect();
        let state_arg = StateArg {
            dense: state.dense.as_mut_ptr(),
            null_group: u64::from(state.null_group),
            groups: groups as u64,
            rows_base: state.rows_base,
            replays: state.replays.spare_capacity_mut().as_mut_ptr().cast(),
            calls: calls.as_ptr(),
        };
        let mut out = RunOut::default();
        let mut passed = vec![0u64; self.predicates];
        // SAFETY: the columns and parameters are of the signature's types and `len` rows
        // long (`Arguments::of`: see `run`); the code indexes `dense` only below
        // `DENSE_KEYS` (its length, checked above) and each call's three arrays of `groups`
        // entries only with a group below `groups` (it falls back on any other); replay code writes at most one record per row from
        // `start` and call into the spare capacity reserved above; `out` and `passed` have
        // the sizes the code writes.
        let status = unsafe {
            entry(
                arguments.columns.as_ptr(),
                arguments.params.as_ptr(),
                start as u64,
                len as u64,
                &state_arg,
                &mut out,
                passed.as_mut_ptr(),
            )
        };
        drop(arguments);
        if *replay {
            let written = state.replays.len() + out.replays as usize;
            assert!(
                written <= state.replays.capacity(),
                "replays past the reserve"
            );
            // SAFETY: the code initialised `out.replays` records after the old end.
            unsafe { state.replays.set_len(written) };
        }
        let row = out.stop_row as usize;
        debug_assert!(row <= len && row >= start);
        let stop = match status {
            0 => Stop::Done,
            1 => Stop::NewGroup {
                row,
                key: (out.key_valid != 0).then_some(out.key),
            },
            _ => Stop::Fallback { row },
        };
        Some(Progress {
            stop,
            passed,
            fed: out.fed,
        })
    }
}

/// The pipeline's function (see the module docs); fills `call_types`. Returns the string
/// literals the code points into.
pub(super) fn emit(
    b: &mut FunctionBuilder,
    predicates: &[BExpr],
    aggregate: &AggregateProgram,
    (shape, signature, pointer, calls): (&Shape, &Signature, types::Type, FloatCalls),
    call_types: &mut Vec<Option<ColumnType>>,
) -> Result<Vec<Box<[u8]>>, Unsupported> {
    let flags = MemFlagsData::trusted();
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let &[columns, params, start, len, state, out, out_passed] = b.block_params(entry) else {
        return Err(Unsupported::new("code generation: function parameters"));
    };
    let (leaves, param_values) = load_inputs(b, signature, pointer, columns, params);
    let dense = b.ins().load(pointer, flags, state, 0);
    let null_group = b.ins().load(types::I64, flags, state, 8);
    let groups = b.ins().load(types::I64, flags, state, 16);
    let rows_base = b.ins().load(types::I64, flags, state, 24);
    let replays = b.ins().load(pointer, flags, state, 32);
    let call_args = b.ins().load(pointer, flags, state, 40);
    let mut buffers = Vec::with_capacity(aggregate.calls.len());
    for i in 0..aggregate.calls.len() {
        let at = i as i32 * COLUMN_ARG_BYTES;
        let count = b.ins().load(pointer, flags, call_args, at);
        let ints = b.ins().load(pointer, flags, call_args, at + 8);
        let floats = b.ins().load(pointer, flags, call_args, at + 16);
        buffers.push([count, ints, floats]);
    }
    let zero = b.ins().iconst(types::I64, 0);
    let variable = |b: &mut FunctionBuilder, init: Ir| {
        let v = b.declare_var(types::I64);
        b.def_var(v, init);
        v
    };
    let fed = variable(b, zero);
    let written = variable(b, zero);
    let passed: Vec<Variable> = predicates.iter().map(|_| variable(b, zero)).collect();
    let fail = b.declare_var(types::I8);
    let no = b.ins().iconst(types::I8, 0);
    b.def_var(fail, no);

    let kept = b.create_block();
    let advance = b.create_block();
    let fallback = b.create_block();
    let new_group = b.create_block();
    let finish = b.create_block();
    b.append_block_param(finish, types::I32);
    let done = b.ins().iconst(types::I32, 0);
    let (row, header, r) = row_loop(b, (start, len), (finish, &[done.into()]));
    b.def_var(fail, no);
    let inputs = (shape, (leaves, param_values));
    let mut g = Gen::new(b, inputs, (r, fail), (pointer, calls));
    // Every predicate on the row (see STOPPING); `prefixes[k]`: predicates 0..=k all true.
    let mut prefixes = Vec::with_capacity(predicates.len());
    for predicate in predicates {
        let value = g.expr(predicate)?;
        if !matches!(value.ty, ColumnType::Bool | ColumnType::Null) {
            return Err(Unsupported::new("a predicate that is not boolean"));
        }
        let truth = g.b.ins().band(value.value, value.valid);
        let all = match prefixes.last() {
            Some(&before) => g.b.ins().band(before, truth),
            None => truth,
        };
        prefixes.push(all);
    }
    match prefixes.last() {
        Some(&all) => {
            let failed = g.b.use_var(fail);
            let check = g.b.create_block();
            g.b.ins().brif(failed, fallback, &[], check, &[]);
            g.b.switch_to_block(check);
            g.b.ins().brif(all, kept, &[], advance, &[]);
        }
        // No filter: every row is fed.
        None => {
            g.b.ins().jump(kept, &[]);
        }
    }

    // The row is kept: its key, group and updates.
    g.b.switch_to_block(kept);
    let key = match &aggregate.key {
        Some(expr) => Some(g.expr(expr)?),
        None => None,
    };
    let arguments = (aggregate.calls.iter())
        .map(|(op, arg)| match arg {
            Some(expr) => g.expr(expr).map(|v| Some((*op, v))),
            None if *op == AggOp::Rows => Ok(None),
            None => Err(Unsupported::new("an aggregate call without its argument")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    call_types.extend(arguments.iter().map(|a| a.map(|(_, v)| v.ty)));
    let failed = g.b.use_var(fail);
    let lookup = g.b.create_block();
    g.b.ins().brif(failed, fallback, &[], lookup, &[]);
    g.b.switch_to_block(lookup);
    let group = group_of(&mut g, key, (dense, null_group), (fallback, new_group, out))?;
    // A group the caller's arrays do not hold is never indexed (`run_aggregate`).
    let outside =
        g.b.ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, group, groups);
    let update = g.b.create_block();
    g.b.ins().brif(outside, fallback, &[], update, &[]);
    g.b.switch_to_block(update);

    // Every call's new state, then (no sum overflowed) every store.
    let eight = g.b.ins().ishl_imm_u(group, 3);
    let mut stores: Vec<(Ir, Ir)> = Vec::new();
    let mut overflow = no;
    for (call, ((op, _), (arg, [count_at, ints_at, floats_at]))) in (aggregate.calls.iter())
        .zip(arguments.iter().zip(&buffers))
        .enumerate()
    {
        let count_at = g.b.ins().iadd(*count_at, eight);
        let count = g.b.ins().load(types::I64, flags, count_at, 0);
        let Some((_, v)) = arg else {
            // count(*)
            let more = g.b.ins().iadd_imm_u(count, 1);
            stores.push((count_at, more));
            continue;
        };
        let valid = g.b.ins().uextend(types::I64, v.valid);
        let counted = g.b.ins().iadd(count, valid);
        let is_valid = v.valid;
        match (op, v.ty) {
            (AggOp::Count, _) => stores.push((count_at, counted)),
            (AggOp::Rows, _) => return Err(Unsupported::new("count(*) with an argument")),
            (AggOp::Sum, ColumnType::Int | ColumnType::Float) if aggregate.replay => {
                // Recorded, not added; a worker's sum keeps no count (its values are them).
                let at = g.b.use_var(written);
                let offset = g.b.ins().imul_imm_u(at, 24);
                let record = g.b.ins().iadd(replays, offset);
                let index = g.b.use_var(fed);
                let index = g.b.ins().iadd(rows_base, index);
                let group32 = g.b.ins().ireduce(types::I32, group);
                let call32 = g.b.ins().iconst(types::I32, call as i64);
                let bits = match v.ty {
                    ColumnType::Float => {
                        g.b.ins().bitcast(types::I64, MemFlagsData::new(), v.value)
                    }
                    _ => v.value,
                };
                g.b.ins().store(flags, index, record, 0);
                g.b.ins().store(flags, group32, record, 8);
                g.b.ins().store(flags, call32, record, 12);
                g.b.ins().store(flags, bits, record, 16);
                let now = g.b.ins().iadd(at, valid);
                g.b.def_var(written, now);
            }
            (AggOp::Sum, ColumnType::Int) => {
                let ints_at = g.b.ins().iadd(*ints_at, eight);
                let sum = g.b.ins().load(types::I64, flags, ints_at, 0);
                let (added, overflowed) = g.b.ins().sadd_overflow(sum, v.value);
                let overflowed = g.b.ins().band(overflowed, is_valid);
                overflow = g.b.ins().bor(overflow, overflowed);
                let sum = g.b.ins().select(is_valid, added, sum);
                stores.push((ints_at, sum));
                stores.push((count_at, counted));
            }
            (AggOp::Sum, ColumnType::Float) => {
                let floats_at = g.b.ins().iadd(*floats_at, eight);
                let sum = g.b.ins().load(types::F64, flags, floats_at, 0);
                let added = g.b.ins().fadd(sum, v.value);
                let sum = g.b.ins().select(is_valid, added, sum);
                stores.push((floats_at, sum));
                stores.push((count_at, counted));
            }
            (AggOp::Min | AggOp::Max, ColumnType::Int) => {
                let ints_at = g.b.ins().iadd(*ints_at, eight);
                let best = g.b.ins().load(types::I64, flags, ints_at, 0);
                let cc = match op {
                    AggOp::Min => IntCC::SignedLessThan,
                    _ => IntCC::SignedGreaterThan,
                };
                let better = g.b.ins().icmp(cc, v.value, best);
                let best = take_if_better(&mut g, (better, count, is_valid), v.value, best);
                stores.push((ints_at, best));
                stores.push((count_at, counted));
            }
            (AggOp::Min | AggOp::Max, ColumnType::Float) => {
                let floats_at = g.b.ins().iadd(*floats_at, eight);
                let best = g.b.ins().load(types::F64, flags, floats_at, 0);
                let better = float_better(&mut g, *op == AggOp::Min, v.value, best);
                let best = take_if_better(&mut g, (better, count, is_valid), v.value, best);
                stores.push((floats_at, best));
                stores.push((count_at, counted));
            }
            (_, ty) => {
                return Err(Unsupported::new(format!(
                    "an aggregate over a {} argument",
                    type_name(ty)
                )));
            }
        }
    }
    let apply = g.b.create_block();
    g.b.ins().brif(overflow, fallback, &[], apply, &[]);
    g.b.switch_to_block(apply);
    for (at, value) in stores {
        g.b.ins().store(flags, value, at, 0);
    }
    let now = g.b.use_var(fed);
    let now = g.b.ins().iadd_imm_u(now, 1);
    g.b.def_var(fed, now);
    g.b.ins().jump(advance, &[]);

    // Next row: the passed counts (this row finished, kept or not).
    let (b, literals) = (g.b, g.literals);
    b.switch_to_block(advance);
    for (count, prefix) in passed.iter().zip(&prefixes) {
        let wide = b.ins().uextend(types::I64, *prefix);
        let so_far = b.use_var(*count);
        let sum = b.ins().iadd(so_far, wide);
        b.def_var(*count, sum);
    }
    let next = b.ins().iadd_imm_u(r, 1);
    b.def_var(row, next);
    b.ins().jump(header, &[]);

    b.switch_to_block(fallback);
    let status = b.ins().iconst(types::I32, 2);
    b.ins().jump(finish, &[status.into()]);

    b.switch_to_block(new_group);
    let status = b.ins().iconst(types::I32, 1);
    b.ins().jump(finish, &[status.into()]);

    b.switch_to_block(finish);
    let status = b.block_params(finish)[0];
    let stopped_at = b.use_var(row);
    b.ins().store(flags, stopped_at, out, 0);
    let total = b.use_var(written);
    b.ins().store(flags, total, out, 24);
    let total = b.use_var(fed);
    b.ins().store(flags, total, out, 32);
    for (i, count) in passed.iter().enumerate() {
        let total = b.use_var(*count);
        b.ins().store(flags, total, out_passed, i as i32 * 8);
    }
    b.ins().return_(&[status]);
    b.seal_all_blocks();
    Ok(literals)
}

/// The row's group as an `i64`, branching to `fallback` (a key outside `0..DENSE_KEYS`) or
/// to `new_group` (no group yet; the key written to `out`) instead.
fn group_of(
    g: &mut Gen,
    key: Option<Val>,
    (dense, null_group): (Ir, Ir),
    (fallback, new_group, out): (
        cranelift_codegen::ir::Block,
        cranelift_codegen::ir::Block,
        Ir,
    ),
) -> Result<Ir, Unsupported> {
    let flags = MemFlagsData::trusted();
    let none = g.b.ins().iconst(types::I64, i64::from(NO_GROUP));
    let (group, key_value, key_valid) = match key {
        None => (null_group, none, g.b.ins().iconst(types::I8, 0)),
        Some(Val {
            ty: ColumnType::Null,
            ..
        }) => (null_group, none, g.b.ins().iconst(types::I8, 0)),
        Some(Val {
            ty: ColumnType::Int,
            value,
            valid,
            ..
        }) => {
            let dense_keys = DENSE_KEYS as i64;
            let in_range =
                g.b.ins()
                    .icmp_imm_u(IntCC::UnsignedLessThan, value, dense_keys);
            let sparse = g.b.ins().bxor_imm_u(in_range, 1);
            let sparse = g.b.ins().band(sparse, valid);
            let dense_row = g.b.create_block();
            g.b.ins().brif(sparse, fallback, &[], dense_row, &[]);
            g.b.switch_to_block(dense_row);
            let zero = g.b.ins().iconst(types::I64, 0);
            let index = g.b.ins().select(in_range, value, zero);
            let offset = g.b.ins().ishl_imm_u(index, 2);
            let at = g.b.ins().iadd(dense, offset);
            let found = g.b.ins().load(types::I32, flags, at, 0);
            let found = g.b.ins().uextend(types::I64, found);
            let group = g.b.ins().select(valid, found, null_group);
            (group, value, valid)
        }
        Some(other) => {
            return Err(Unsupported::new(format!(
                "a grouping key of type {}",
                type_name(other.ty)
            )));
        }
    };
    let missing = g.b.ins().icmp(IntCC::Equal, group, none);
    let found = g.b.create_block();
    let write_key = g.b.create_block();
    g.b.ins().brif(missing, write_key, &[], found, &[]);
    g.b.switch_to_block(write_key);
    g.b.ins().store(flags, key_value, out, 8);
    let valid = g.b.ins().uextend(types::I64, key_valid);
    g.b.ins().store(flags, valid, out, 16);
    g.b.ins().jump(new_group, &[]);
    g.b.switch_to_block(found);
    Ok(group)
}

/// `min`/`max`: the value replaces the best when it is valid and the group has none yet
/// (`count` 0) or it is `better`.
fn take_if_better(g: &mut Gen, (better, count, valid): (Ir, Ir, Ir), v: Ir, best: Ir) -> Ir {
    let first = g.b.ins().icmp_imm_u(IntCC::Equal, count, 0);
    let take = g.b.ins().bor(first, better);
    let take = g.b.ins().band(take, valid);
    g.b.ins().select(take, v, best)
}

/// Whether float `v` is strictly better than `best` under `value::order` (NaN above every
/// number and equal to itself; `-0.0` equal to `0.0`).
fn float_better(g: &mut Gen, min: bool, v: Ir, best: Ir) -> Ir {
    let v_nan = g.b.ins().fcmp(FloatCC::Unordered, v, v);
    let best_nan = g.b.ins().fcmp(FloatCC::Unordered, best, best);
    if min {
        // A number below NaN, or below the best (false if either is NaN).
        let v_number = g.b.ins().bxor_imm_u(v_nan, 1);
        let under_nan = g.b.ins().band(v_number, best_nan);
        let less = g.b.ins().fcmp(FloatCC::LessThan, v, best);
        g.b.ins().bor(under_nan, less)
    } else {
        let best_number = g.b.ins().bxor_imm_u(best_nan, 1);
        let over = g.b.ins().band(v_nan, best_number);
        let greater = g.b.ins().fcmp(FloatCC::GreaterThan, v, best);
        g.b.ins().bor(over, greater)
    }
}

fn type_name(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::Int => "INTEGER",
        ColumnType::Float => "FLOAT",
        ColumnType::Bool => "BOOLEAN",
        ColumnType::Str => "STRING",
        ColumnType::Null => "null",
    }
}
