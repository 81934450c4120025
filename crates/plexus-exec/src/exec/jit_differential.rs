//! The JIT's correctness gate: compiled predicates against the row evaluator.
//!
//! Random predicates — arithmetic (nested, over the extreme integers, so overflow and zero
//! divisors are common), comparisons, IS NULL, IN over constant lists of mixed items,
//! AND / OR / NOT — over three random columns (integers, floats, booleans, strings or mixed,
//! with nulls; floats with NaN, ±0.0, ±inf) and two parameters, run through the Filter's
//! JIT path under `jit = on` (`OperatorJit::mask`, so the leaf typing, the signature and the
//! cache are under test too). For every case:
//! - a mask from compiled code equals, row by row, what `eval` gives (true / false / null),
//!   and what the vectorised interpreter gives where it gives a mask; and no arithmetic
//!   sub-expression raises an error on any row (compiled code must have fallen back then);
//! - when code was compiled for the batch's types but declined the batch, some arithmetic
//!   sub-expression does raise an error on some row (the fall-back is for errors only).
//!
//! The run counts each outcome and fails if any stays rare, so the gate cannot pass by
//! compiling nothing or falling back always.

use super::OperatorJit;
use crate::context::{Batch, ExecContext, with_test_ctx};
use crate::eval::prefetch::Prefetched;
use crate::eval::{Env, eval, vector};
use arrow::array::Array;
use plexus_cypher::ast::ComparisonOp;
use plexus_jit::{JitMode, Lookup, Program};
use plexus_plan::Params;
use plexus_plan::logical::{ArithOp, BExpr, StringOp};
use plexus_value::value::Value;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;
use std::sync::Arc;

fn int() -> impl Strategy<Value = Value> {
    prop_oneof![
        12 => (-4i64..5).prop_map(Value::Int),
        2 => (-(1i64 << 40)..(1i64 << 40)).prop_map(Value::Int),
        1 => Just(Value::Int(i64::MAX)),
        1 => Just(Value::Int(i64::MIN)),
        1 => Just(Value::Int(-1)),
        1 => Just(Value::Int(0)),
        // Beyond 2^53 an integer and the float it converts to may differ.
        1 => Just(Value::Int((1 << 53) + 1)),
    ]
}

fn float() -> impl Strategy<Value = Value> {
    prop_oneof![
        10 => (-4i32..5).prop_map(|i| Value::Float(f64::from(i) / 2.0)),
        1 => Just(Value::Float(f64::NAN)),
        1 => Just(Value::Float(f64::INFINITY)),
        1 => Just(Value::Float(f64::NEG_INFINITY)),
        1 => Just(Value::Float(-0.0)),
        1 => Just(Value::Float(0.0)),
        1 => Just(Value::Float(1e300)),
        1 => Just(Value::Float(9_223_372_036_854_775_808.0)),
        1 => Just(Value::Float(-9_223_372_036_854_775_808.0)),
        1 => Just(Value::Float(9_007_199_254_740_992.0)),
    ]
}

fn boolean() -> impl Strategy<Value = Value> {
    any::<bool>().prop_map(Value::Bool)
}

fn string() -> impl Strategy<Value = Value> {
    prop::sample::select(vec!["", "a", "ab", "b", "abc", "é"]).prop_map(Value::from)
}

/// A string-ish operand: a slot (a string column when its kind is), a string literal, a
/// parameter, or null.
fn string_operand() -> impl Strategy<Value = BExpr> {
    prop_oneof![
        4 => (0usize..3).prop_map(BExpr::Slot),
        3 => string().prop_map(BExpr::Const),
        2 => prop::sample::select(vec!["p", "q"]).prop_map(|p| BExpr::Param(Arc::from(p))),
        1 => Just(BExpr::Const(Value::Null)),
    ]
}

/// Integers, floats, booleans, strings, or a mix of numbers and strings.
fn values_of(kind: usize) -> BoxedStrategy<Value> {
    match kind {
        0 => int().boxed(),
        1 => float().boxed(),
        2 => boolean().boxed(),
        3 => string().boxed(),
        _ => prop_oneof![int(), float(), string()].boxed(),
    }
}

fn column(len: usize, kind: usize) -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        prop_oneof![5 => values_of(kind), 1 => Just(Value::Null)],
        len,
    )
}

/// A literal: mostly numbers, sometimes null or a boolean.
fn literal() -> impl Strategy<Value = Value> {
    prop_oneof![6 => int(), 4 => float(), 1 => Just(Value::Null), 1 => boolean()]
}

fn number_leaf() -> impl Strategy<Value = BExpr> {
    prop_oneof![
        6 => (0usize..3).prop_map(BExpr::Slot),
        4 => literal().prop_map(BExpr::Const),
        2 => prop::sample::select(vec!["p", "q"]).prop_map(|p| BExpr::Param(Arc::from(p))),
    ]
}

fn number() -> impl Strategy<Value = BExpr> {
    let op = prop::sample::select(vec![
        ArithOp::Add,
        ArithOp::Subtract,
        ArithOp::Multiply,
        ArithOp::Divide,
        ArithOp::Modulo,
        ArithOp::Power,
    ]);
    number_leaf().prop_recursive(2, 6, 2, move |inner| {
        prop_oneof![
            4 => (op.clone(), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| BExpr::Arith(op, Box::new(a), Box::new(b))),
            1 => inner.prop_map(|a| BExpr::Negate(Box::new(a))),
        ]
    })
}

fn in_list() -> impl Strategy<Value = BExpr> {
    let item = prop_oneof![
        4 => literal(),
        1 => string(),
    ];
    (number(), prop::collection::vec(item, 0..5), any::<bool>()).prop_map(|(x, items, folded)| {
        let list = if folded {
            BExpr::Const(Value::list(items))
        } else {
            BExpr::List(items.into_iter().map(BExpr::Const).collect())
        };
        BExpr::In(Box::new(x), Box::new(list))
    })
}

fn predicate() -> impl Strategy<Value = BExpr> {
    let op = prop::sample::select(vec![
        ComparisonOp::Eq,
        ComparisonOp::NotEq,
        ComparisonOp::Lt,
        ComparisonOp::Le,
        ComparisonOp::Gt,
        ComparisonOp::Ge,
    ]);
    let atom = prop_oneof![
        6 => (number(), op, number()).prop_map(|(a, op, b)| BExpr::Compare(vec![a, b], vec![op])),
        2 => (number(), any::<bool>()).prop_map(|(a, n)| BExpr::IsNull(Box::new(a), n)),
        2 => in_list(),
        2 => (string_operand(), prop::sample::select(vec![ComparisonOp::Eq, ComparisonOp::NotEq]), string_operand())
            .prop_map(|(a, op, b)| BExpr::Compare(vec![a, b], vec![op])),
        2 => (string_operand(), string_operand()).prop_map(|(a, b)| {
            BExpr::StringOp(StringOp::StartsWith, Box::new(a), Box::new(b))
        }),
        1 => (0usize..3).prop_map(BExpr::Slot),
        1 => prop_oneof![boolean(), Just(Value::Null)].prop_map(BExpr::Const),
    ];
    atom.prop_recursive(3, 10, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| BExpr::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| BExpr::Or(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| BExpr::Xor(Box::new(a), Box::new(b))),
            inner.prop_map(|a| BExpr::Not(Box::new(a))),
        ]
    })
}

/// Three columns (usually of one kind), two parameters, a predicate.
type Case = (Vec<Vec<Value>>, Value, Value, BExpr);

fn case() -> impl Strategy<Value = Case> {
    let kind =
        || prop_oneof![4 => Just(0usize), 2 => Just(1), 1 => Just(2), 1 => Just(3), 1 => Just(4)];
    (1usize..70, kind(), kind(), 0..3).prop_flat_map(|(len, k0, k1, same)| {
        let k1 = if same > 0 { k0 } else { k1 };
        (
            (column(len, k0), column(len, k0), column(len, k1)).prop_map(|(a, b, c)| vec![a, b, c]),
            prop_oneof![3 => values_of(k0), 1 => Just(Value::Null)],
            prop_oneof![3 => values_of(k1), 1 => Just(Value::Null)],
            predicate(),
        )
    })
}

/// Every sub-expression of `e` that can raise an error (arithmetic, unary minus).
fn ariths<'e>(e: &'e BExpr, out: &mut Vec<&'e BExpr>) {
    match e {
        BExpr::Arith(_, a, b) => {
            out.push(e);
            ariths(a, out);
            ariths(b, out);
        }
        BExpr::Negate(x) => {
            out.push(e);
            ariths(x, out);
        }
        BExpr::And(a, b) | BExpr::Or(a, b) | BExpr::Xor(a, b) | BExpr::In(a, b) => {
            ariths(a, out);
            ariths(b, out);
        }
        BExpr::Not(x) | BExpr::IsNull(x, _) => ariths(x, out),
        BExpr::Compare(items, _) => items.iter().for_each(|x| ariths(x, out)),
        _ => {}
    }
}

/// Whether `e` holds a string predicate (`STARTS WITH`, or a comparison with a string
/// literal).
fn has_string_predicate(e: &BExpr) -> bool {
    match e {
        BExpr::StringOp(..) => true,
        BExpr::Compare(items, _) => items
            .iter()
            .any(|x| matches!(x, BExpr::Const(Value::String(_)))),
        BExpr::And(a, b) | BExpr::Or(a, b) | BExpr::Xor(a, b) => {
            has_string_predicate(a) || has_string_predicate(b)
        }
        BExpr::Not(x) => has_string_predicate(x),
        _ => false,
    }
}

/// A case's three columns as a batch, and its parameters `$p` and `$q`.
fn batch_and_params(columns: &[Vec<Value>], p: Value, q: Value) -> (Batch, Params) {
    let mut batch = Batch::new(3);
    for row in 0..columns[0].len() {
        batch.push_row(columns.iter().map(|c| c[row].clone()).collect());
    }
    let mut params = Params::new();
    params.insert("p".into(), p);
    params.insert("q".into(), q);
    (batch, params)
}

#[derive(Default, Debug)]
struct Counts {
    masks: Cell<u32>,
    /// Masks of predicates with a string predicate in them.
    string_masks: Cell<u32>,
    fell_back: Cell<u32>,
    not_compiled: Cell<u32>,
    /// `a AND b` masks checked as fused chains of two filters as well.
    chains: Cell<u32>,
}

fn bump(counter: &Cell<u32>) {
    counter.set(counter.get() + 1);
}

#[test]
fn compiled_predicates_agree_with_the_row_evaluator() {
    let counts = Counts::default();
    let mut runner = TestRunner::new(Config {
        cases: 10_000,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&case(), |(columns, p, q, expr)| {
        let (batch, params) = batch_and_params(&columns, p, q);
        with_test_ctx(&params, |ctx| -> Result<(), TestCaseError> {
            ctx.state.jit = JitMode::On;
            let pre = Prefetched::default();
            let mut jit = OperatorJit::new(Program::filter(std::slice::from_ref(&expr)));
            let mask = jit.mask(&batch, &pre, ctx);
            // `a AND b` as a fused chain of two filters too: the same code paths, so the same
            // fall-back; the same mask; per filter, the rows stacked filters would pass.
            if let BExpr::And(a, b) = &expr {
                let chain = [(**a).clone(), (**b).clone()];
                let fused = OperatorJit::new(Program::filter(&chain)).mask(&batch, &pre, ctx);
                prop_assert_eq!(fused.is_some(), mask.is_some(), "chain of {:?}", expr);
                if let (Some(fused), Some(mask)) = (fused, &mask) {
                    prop_assert_eq!(&fused.mask, &mask.mask, "chain of {:?}", expr);
                    let truth = |e: &BExpr, row: usize, ctx: &mut ExecContext| {
                        matches!(
                            eval(e, &mut Env::new(&batch, row), ctx),
                            Ok(Value::Bool(true))
                        )
                    };
                    let (mut first, mut both) = (0, 0);
                    for row in 0..batch.len() {
                        if truth(a, row, ctx) {
                            first += 1;
                            both += u64::from(truth(b, row, ctx));
                        }
                    }
                    prop_assert_eq!(fused.passed, vec![first, both], "chain of {:?}", expr);
                    bump(&counts.chains);
                }
            }
            let mut subs = Vec::new();
            ariths(&expr, &mut subs);
            let mut failing = None;
            for row in 0..batch.len() {
                for sub in &subs {
                    if let Err(e) = eval(sub, &mut Env::new(&batch, row), ctx) {
                        failing = Some(format!("row {row}: {sub:?} raises {e}"));
                    }
                }
            }
            let Some(mask) = mask else {
                if matches!(jit.current, Some(Lookup::Ready(_))) {
                    // Compiled for these types, yet the batch fell back: only for an error.
                    prop_assert!(failing.is_some(), "fell back without an error: {:?}", expr);
                    bump(&counts.fell_back);
                } else {
                    bump(&counts.not_compiled);
                }
                return Ok(());
            };
            prop_assert!(
                failing.is_none(),
                "a mask although {}",
                failing.unwrap_or_default()
            );
            for row in 0..batch.len() {
                let expected = match eval(&expr, &mut Env::new(&batch, row), ctx) {
                    Ok(Value::Bool(b)) => Some(b),
                    Ok(Value::Null) => None,
                    other => {
                        return Err(TestCaseError::fail(format!(
                            "row {row}: the row evaluator gives {other:?}, compiled code a mask \
                             for {expr:?}"
                        )));
                    }
                };
                let actual = mask.mask.is_valid(row).then(|| mask.mask.value(row));
                prop_assert_eq!(actual, expected, "row {} of {:?}", row, expr);
            }
            if let Some(vectors) = vector::predicate(&expr, &batch, &pre, ctx) {
                prop_assert_eq!(
                    vectors,
                    mask.mask,
                    "vectors and compiled code differ on {:?}",
                    expr
                );
            }
            bump(&counts.masks);
            if has_string_predicate(&expr) {
                bump(&counts.string_masks);
            }
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // Not a vacuous gate: each outcome happened often.
    assert!(counts.masks.get() > 1_000, "{counts:?}");
    assert!(counts.string_masks.get() > 100, "{counts:?}");
    assert!(counts.fell_back.get() > 500, "{counts:?}");
    assert!(counts.not_compiled.get() > 500, "{counts:?}");
    assert!(counts.chains.get() > 100, "{counts:?}");
}

/// Compiled pipelines — a chain of filters and the Aggregate its rows feed, one compiled loop
/// (`exec::filter`, COMPILED PIPELINES) — against the interpreter: random batches (numbers
/// with nulls and extremes; a grouping column of small keys, nulls, now and then a key the
/// code hands back to Rust), one to three random predicates, a random key (none, a column,
/// an expression) and random calls (`count(*)`, `count`, `sum`, `avg`, `min`, `max` of random
/// arithmetic), serially and as a parallel worker's morsel merged into the caller's table.
/// The interpreter runs the same filters stacked (`jit` off) into the Aggregate's own feed.
/// Output rows (floats bit for bit, through `Debug`) and errors must be equal; PROFILE's
/// rows per filter too.
mod pipelines {
    use super::super::super::aggregate::{
        AggregateSink, Aggregation, MorselAggregator, SinkState, Table,
    };
    use super::super::super::compiled_pipeline::feed_stage;
    use super::super::super::filter::Filter;
    use super::super::super::pipeline::Stage;
    use super::*;
    use crate::context::OperatorProfile;
    use plexus_plan::logical::{AggCall, AggFunction};

    /// A key: mostly small integers; in a batch of `mixed` keys, now and then a float
    /// (a column compiled code does not take).
    fn key_value(mixed: bool) -> impl Strategy<Value = Value> {
        prop_oneof![
            12 => (-1i64..6).prop_map(Value::Int),
            2 => Just(Value::Null),
            1 => Just(Value::Int(5_000)),
            u32::from(mixed) => Just(Value::Float(1.0)),
        ]
    }

    fn call() -> impl Strategy<Value = AggCall> {
        let function = prop::sample::select(vec![
            AggFunction::Count,
            AggFunction::Sum,
            AggFunction::Avg,
            AggFunction::Min,
            AggFunction::Max,
        ]);
        (
            function,
            prop_oneof![1 => Just(None), 4 => number().prop_map(Some)],
        )
            .prop_map(|(function, arg)| AggCall {
                arg: match function {
                    AggFunction::Count => arg,
                    _ => arg.or(Some(BExpr::Slot(0))),
                },
                function,
                distinct: false,
                extra: None,
            })
    }

    /// A comparison of two numbers mostly (compiled for most column types), else any
    /// predicate.
    fn filter() -> impl Strategy<Value = BExpr> {
        let op = prop::sample::select(vec![
            ComparisonOp::Lt,
            ComparisonOp::NotEq,
            ComparisonOp::Ge,
        ]);
        prop_oneof![
            3 => (number(), op, number()).prop_map(|(a, op, b)| BExpr::Compare(vec![a, b], vec![op])),
            1 => predicate(),
        ]
    }

    /// Batches of four columns (slots 0, 1: numbers; 2: keys; 3: numbers), parameters,
    /// predicates, the key, the calls, and whether a worker runs it.
    type PipelineCase = (
        Vec<Batch>,
        Value,
        Value,
        Vec<BExpr>,
        Option<BExpr>,
        Vec<AggCall>,
        bool,
    );

    fn pipeline_case() -> impl Strategy<Value = PipelineCase> {
        let kind = || prop_oneof![6 => Just(0usize), 3 => Just(1), 1 => Just(4)];
        let mixed = prop::bool::weighted(0.1);
        let batch = (0usize..40, kind(), kind(), mixed).prop_flat_map(|(len, a, b, mixed)| {
            let keys = prop::collection::vec(key_value(mixed), len);
            (column(len, a), column(len, b), keys, column(len, a)).prop_map(move |(a, b, k, c)| {
                let mut batch = Batch::new(4);
                for row in 0..len {
                    let cells = [&a, &b, &k, &c].map(|col| col[row].clone());
                    batch.push_row(cells.to_vec());
                }
                batch
            })
        });
        let key = prop_oneof![
            2 => Just(None),
            4 => Just(Some(BExpr::Slot(2))),
            1 => Just(Some(BExpr::Arith(
                ArithOp::Modulo,
                Box::new(BExpr::Slot(0)),
                Box::new(BExpr::Const(Value::Int(3))),
            ))),
        ];
        (
            prop::collection::vec(batch, 1..4),
            int(),
            prop_oneof![int(), float()],
            prop::collection::vec(filter(), 0..4),
            key,
            prop::collection::vec(call(), 1..5),
            any::<bool>(),
        )
    }

    /// What a run gives: the output rows or the error, and the rows each filter kept.
    type Outcome = (Result<String, String>, Vec<u64>);

    /// The interpreter: the filters stacked, each a stage of its own, into the Aggregate's
    /// feed (serial), or a worker's morsel state merged into the caller's table.
    fn interpreted(
        case: &PipelineCase,
        aggregation: &Aggregation,
        ctx: &mut ExecContext,
    ) -> Outcome {
        let (batches, _, _, predicates, _, _, worker) = case;
        ctx.state.jit = JitMode::Off;
        let mut filters: Vec<Filter> = predicates.iter().map(Filter::new).collect();
        let mut kept = vec![0u64; predicates.len()];
        let mut table = Table::new(aggregation);
        let mut morsel = MorselAggregator::new(aggregation);
        let mut run = || -> plexus_value::error::Result<()> {
            for batch in batches {
                let mut rows = batch.clone();
                for (i, filter) in filters.iter_mut().enumerate() {
                    let mut out = Batch::with_capacity(rows.width(), rows.len());
                    filter.execute(&mut rows, &mut out, ctx)?;
                    kept[i] += out.len() as u64;
                    rows = out;
                }
                match worker {
                    true => morsel.feed(aggregation, &rows, ctx)?,
                    false => table.feed(aggregation, &rows, ctx)?,
                }
            }
            Ok(())
        };
        let fed = run();
        let result = finish(aggregation, table, morsel, *worker, fed);
        (result, kept)
    }

    /// Compiled: the filters fused into one stage that feeds the Aggregate (`jit` on).
    fn compiled(
        case: &PipelineCase,
        aggregation: &Aggregation,
        ctx: &mut ExecContext,
        ran: &Cell<u32>,
    ) -> Option<Outcome> {
        let (batches, _, _, predicates, _, _, worker) = case;
        ctx.state.jit = JitMode::On;
        let state = match worker {
            true => SinkState::Morsel(MorselAggregator::new(aggregation)),
            false => SinkState::Serial(Table::new(aggregation)),
        };
        let sink = Box::new(AggregateSink {
            aggregation: aggregation.clone(),
            state,
        });
        // No filter: the stage a pipeline pushes to feed the Aggregate (`compiled_pipeline`).
        let mut stage: Box<dyn Stage> = match predicates.split_first() {
            None => feed_stage(sink, Some(0), ctx).ok()?,
            Some((first, rest)) => {
                let mut filter = Filter::new(first);
                for (i, p) in rest.iter().enumerate() {
                    if !filter.fuse(&mut Filter::new(p), Some(i)) {
                        return None;
                    }
                }
                filter.absorb(sink, Some(predicates.len() - 1), ctx).ok()?;
                Box::new(filter)
            }
        };
        let filter = stage.as_mut();
        let mut fed = Ok(());
        for batch in batches {
            let mut input = batch.clone();
            let mut out = Batch::new(4);
            if let Err(e) = filter.execute(&mut input, &mut out, ctx) {
                fed = Err(e);
                break;
            }
            assert!(
                out.is_empty(),
                "a stage feeding its Aggregate outputs nothing"
            );
        }
        let jit = filter.take_jit_profile();
        if jit.as_ref().is_some_and(|j| j.compiled_batches > 0) {
            bump(ran);
        }
        let mut profile = vec![OperatorProfile::default(); predicates.len().max(1)];
        filter.profile_fused(&mut profile, std::time::Duration::ZERO, true, jit.as_ref());
        if predicates.is_empty() {
            // The feed stage's record goes to the Aggregate's line.
            if profile[0]
                .jit
                .as_ref()
                .is_some_and(|j| j.compiled_batches > 0)
            {
                bump(ran);
            }
            profile.clear();
        }
        let kept = profile.iter().map(|p| p.rows).collect();
        let sink = filter.reclaim()?.downcast::<AggregateSink>().ok()?;
        let (table, morsel) = match sink.state {
            SinkState::Serial(table) => (table, MorselAggregator::new(aggregation)),
            SinkState::Morsel(morsel) => (Table::new(aggregation), morsel),
        };
        Some((finish(aggregation, table, morsel, *worker, fed), kept))
    }

    /// The output (or error) of a serial table, or of a worker's morsel (with the error that
    /// ended it) merged into a fresh caller's table.
    fn finish(
        aggregation: &Aggregation,
        mut table: Table,
        morsel: MorselAggregator,
        worker: bool,
        fed: plexus_value::error::Result<()>,
    ) -> Result<String, String> {
        let outcome = if worker {
            let mut merged = Table::new(aggregation);
            merged
                .merge(aggregation, morsel.finish(fed.err()))
                .and_then(|()| merged.finish(aggregation, 8))
        } else {
            fed.and_then(|()| {
                std::mem::replace(&mut table, Table::new(aggregation)).finish(aggregation, 8)
            })
        };
        match outcome {
            Ok(batches) => Ok(format!(
                "{:?}",
                batches
                    .iter()
                    .flat_map(|b| (0..b.len()).map(|r| b.row(r)))
                    .collect::<Vec<_>>()
            )),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    #[test]
    fn compiled_pipelines_agree_with_the_interpreter() {
        let ran = Cell::new(0);
        let cases = Cell::new(0);
        let mut runner = TestRunner::new(Config {
            cases: std::env::var("PIPELINE_CASES")
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(4_000),
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&pipeline_case(), |case| {
            let (_, p, q, _, key, calls, _) = &case;
            let aggregation = Aggregation {
                keys: key.iter().map(|k| (4, k.clone())).collect(),
                calls: calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (5 + i % 3, c.clone()))
                    .collect(),
            };
            let mut params = Params::new();
            params.insert("p".into(), p.clone());
            params.insert("q".into(), q.clone());
            with_test_ctx(&params, |ctx| -> Result<(), TestCaseError> {
                let Some(compiled) = compiled(&case, &aggregation, ctx, &ran) else {
                    return Ok(());
                };
                bump(&cases);
                let interpreted = interpreted(&case, &aggregation, ctx);
                prop_assert_eq!(&compiled.0, &interpreted.0, "{:?}", case);
                if compiled.0.is_ok() {
                    prop_assert_eq!(&compiled.1, &interpreted.1, "rows per filter: {:?}", case);
                }
                Ok(())
            })
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        eprintln!(
            "compared {} pipelines, {} ran compiled code",
            cases.get(),
            ran.get()
        );
        assert!(cases.get() > 1_000, "pipelines compared: {}", cases.get());
        assert!(
            ran.get() > 1_000,
            "pipelines that ran compiled code: {}",
            ran.get()
        );
    }
}

/// Compiled projections (`ProjectJit`, `plexus_jit` COMPILED PROJECTIONS) against the row
/// evaluator: one to four random items — arithmetic or predicates — over the random columns
/// above. Every column compiled code gives holds, row by row, the row evaluator's value
/// (floats bit for bit, through `Debug`); a batch it declines although compiled for its
/// types has an arithmetic sub-expression that raises an error on some row.
#[test]
fn compiled_projections_agree_with_the_row_evaluator() {
    let (computed, fell_back) = (Cell::new(0u32), Cell::new(0u32));
    let mut runner = TestRunner::new(Config {
        cases: 5_000,
        failure_persistence: None,
        ..Config::default()
    });
    let items = prop::collection::vec(prop_oneof![3 => number(), 1 => predicate()], 1..5);
    let result = runner.run(&(case(), items), |((columns, p, q, _), exprs)| {
        let (batch, params) = batch_and_params(&columns, p, q);
        let items: Vec<(usize, BExpr)> = exprs.iter().cloned().enumerate().collect();
        with_test_ctx(&params, |ctx| -> Result<(), TestCaseError> {
            ctx.state.jit = JitMode::On;
            let Some(mut jit) = super::ProjectJit::new(&items) else {
                return Ok(());
            };
            let out = jit.run(&batch, ctx);
            let raises = (0..batch.len()).any(|row| {
                (jit.items.iter())
                    .any(|&i| eval(&exprs[i], &mut Env::new(&batch, row), ctx).is_err())
            });
            if out.is_empty() {
                if matches!(jit.jit.current, Some(Lookup::Ready(_))) {
                    // Only for an error: some arithmetic sub-expression (evaluated or not,
                    // as for a filter) raises one on some row.
                    let mut subs = Vec::new();
                    jit.items.iter().for_each(|&i| ariths(&exprs[i], &mut subs));
                    let failing = (0..batch.len()).any(|row| {
                        (subs.iter()).any(|sub| eval(sub, &mut Env::new(&batch, row), ctx).is_err())
                    });
                    prop_assert!(failing, "declined without an error: {:?}", exprs);
                    bump(&fell_back);
                }
                return Ok(());
            }
            prop_assert!(
                !raises,
                "columns although an item raises an error: {:?}",
                exprs
            );
            for &i in &jit.items {
                let column = out[i].as_ref().expect("a compiled item's column");
                for row in 0..batch.len() {
                    let expected = eval(&exprs[i], &mut Env::new(&batch, row), ctx);
                    let expected = expected.map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(
                        format!("{:?}", column.value(row)),
                        format!("{expected:?}"),
                        "row {} of {:?}",
                        row,
                        exprs[i]
                    );
                }
            }
            bump(&computed);
            Ok(())
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "projections: {} computed, {} fell back",
        computed.get(),
        fell_back.get()
    );
    assert!(
        computed.get() > 500,
        "projections computed: {}",
        computed.get()
    );
    assert!(
        fell_back.get() > 100,
        "projections that fell back: {}",
        fell_back.get()
    );
}
