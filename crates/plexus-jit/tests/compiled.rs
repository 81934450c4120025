//! Compiled predicates on hand-made columns, each expected answer written out: three-valued
//! logic, the fall-back on errors (and not on null rows), Arrow arrays with offsets, IN
//! lists, and the cache's bound. (The random differential test against the row evaluator is
//! in `plexus-exec`, which holds the evaluator: `exec/jit_differential.rs`.)

use arrow::array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};
use plexus_cypher::ast::ComparisonOp;
use plexus_jit::{Cache, Column, Lookup, Signature, compile, shape};
use plexus_plan::logical::{ArithOp, BExpr};
use plexus_value::value::Value;
use std::sync::Arc;

fn slot(i: usize) -> Box<BExpr> {
    Box::new(BExpr::Slot(i))
}

fn int(i: i64) -> Box<BExpr> {
    Box::new(BExpr::Const(Value::Int(i)))
}

fn compare(op: ComparisonOp, a: BExpr, b: BExpr) -> BExpr {
    BExpr::Compare(vec![a, b], vec![op])
}

/// `expr`'s mask over `columns` as options, or `None` when the batch fell back.
/// A mask written as `T`, `F` and `_` (null), space-separated.
fn mask(rows: &str) -> Vec<Option<bool>> {
    rows.split_whitespace()
        .map(|r| match r {
            "T" => Some(true),
            "F" => Some(false),
            _ => None,
        })
        .collect()
}

fn shape_of(expr: &BExpr) -> plexus_jit::Shape {
    shape(std::slice::from_ref(expr)).expect("covered operators")
}

fn run(expr: &BExpr, columns: &[Column], params: &[&Value]) -> Option<Vec<Option<bool>>> {
    run_chain(std::slice::from_ref(expr), columns, params).map(|(mask, _)| mask)
}

/// A fused chain's mask and per-predicate pass counts, or `None` when the batch fell back.
fn run_chain(
    predicates: &[BExpr],
    columns: &[Column],
    params: &[&Value],
) -> Option<(Vec<Option<bool>>, Vec<u64>)> {
    let shape = shape(predicates).expect("covered operators");
    let signature = Signature::of(columns, params).expect("compiled types");
    let compiled = compile(predicates, &shape, &signature).expect("compiles");
    let len = columns.first().map_or(1, |c| match c {
        Column::Int(a) => a.len(),
        Column::Float(a) => a.len(),
        Column::Bool(a) => a.len(),
        Column::Str(a) => a.len(),
    });
    let out = compiled.run(columns, params, len)?;
    let mask = (0..len)
        .map(|i| out.mask.is_valid(i).then(|| out.mask.value(i)))
        .collect();
    Some((mask, out.passed))
}

#[test]
fn a_fused_chain_reads_each_column_once_and_counts_each_filter() {
    // Filters bottom first: x > 1, then x + y < 10, then y <> 4.
    let x = Int64Array::from(vec![Some(0), Some(2), Some(3), None, Some(5), Some(8)]);
    let y = Int64Array::from(vec![Some(1), Some(1), Some(4), Some(1), None, Some(1)]);
    let chain = [
        compare(
            ComparisonOp::Gt,
            BExpr::Slot(0),
            BExpr::Const(Value::Int(1)),
        ),
        compare(
            ComparisonOp::Lt,
            BExpr::Arith(ArithOp::Add, slot(0), slot(1)),
            BExpr::Const(Value::Int(10)),
        ),
        compare(
            ComparisonOp::NotEq,
            BExpr::Slot(1),
            BExpr::Const(Value::Int(4)),
        ),
    ];
    let columns = [Column::Int(&x), Column::Int(&y)];
    let (mask_of_chain, passed) = run_chain(&chain, &columns, &[]).expect("no error");
    // The AND of the three, Kleene: row 3 (x null) is null; row 4 (y null): T AND _ AND _.
    assert_eq!(mask_of_chain, mask("F T F _ _ T"));
    // Filter by filter, as stacked Filters keep rows: 4 rows have x > 1 (2, 3, 5, 8); of
    // them x + y < 10 on 2, 3 and 8; of those y <> 4 on 2 and 8.
    assert_eq!(passed, vec![4, 3, 2]);
    assert_eq!(shape(&chain).unwrap().leaves.len(), 2, "x and y, once each");
    // An error in any filter on any row falls back, even on a row a lower filter drops:
    // the interpreter, running the filters one by one, never evaluates it there.
    let guarded = [
        compare(
            ComparisonOp::Gt,
            BExpr::Slot(0),
            BExpr::Const(Value::Int(1)),
        ),
        compare(
            ComparisonOp::Eq,
            BExpr::Arith(ArithOp::Divide, int(1), slot(0)),
            BExpr::Const(Value::Int(0)),
        ),
    ];
    assert_eq!(run_chain(&guarded, &columns[..1], &[]), None);
}

#[test]
fn and_or_not_follow_three_valued_logic() {
    let values = [Some(true), Some(false), None];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in values {
        for y in values {
            a.push(x);
            b.push(y);
        }
    }
    let (a, b) = (BooleanArray::from(a.clone()), BooleanArray::from(b.clone()));
    let columns = [Column::Bool(&a), Column::Bool(&b)];
    let t = Some(true);
    let f = Some(false);
    // Rows: (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N).
    let and = run(&BExpr::And(slot(0), slot(1)), &columns, &[]).unwrap();
    assert_eq!(and, vec![t, f, None, f, f, f, None, f, None]);
    let or = run(&BExpr::Or(slot(0), slot(1)), &columns, &[]).unwrap();
    assert_eq!(or, vec![t, t, t, t, f, None, t, None, None]);
    // One leaf: the column of each row's second value.
    let second = [Column::Bool(&b)];
    let not = run(&BExpr::Not(slot(0)), &second, &[]).unwrap();
    assert_eq!(not, vec![f, t, None, f, t, None, f, t, None]);
    let is_null = run(&BExpr::IsNull(slot(0), false), &second, &[]).unwrap();
    assert_eq!(is_null, vec![f, f, t, f, f, t, f, f, t]);
}

#[test]
fn an_error_on_a_valid_row_falls_back_and_a_null_row_does_not() {
    let plus_one = compare(
        ComparisonOp::Gt,
        BExpr::Arith(ArithOp::Add, slot(0), int(1)),
        BExpr::Const(Value::Int(0)),
    );
    let overflowing = Int64Array::from(vec![Some(1), Some(i64::MAX)]);
    assert_eq!(run(&plus_one, &[Column::Int(&overflowing)], &[]), None);
    let null_there = Int64Array::from(vec![Some(1), None]);
    assert_eq!(
        run(&plus_one, &[Column::Int(&null_there)], &[]),
        Some(vec![Some(true), None])
    );
    // i64::MIN / -1 overflows; i64::MIN % -1 is 0; a zero divisor is an error.
    let divide = |op| {
        compare(
            ComparisonOp::Eq,
            BExpr::Arith(op, slot(0), slot(1)),
            BExpr::Const(Value::Int(0)),
        )
    };
    let x = Int64Array::from(vec![i64::MIN]);
    let minus_one = Int64Array::from(vec![-1]);
    let zero = Int64Array::from(vec![0]);
    let cols = |d| [Column::Int(&x), Column::Int(d)];
    assert_eq!(run(&divide(ArithOp::Divide), &cols(&minus_one), &[]), None);
    assert_eq!(
        run(&divide(ArithOp::Modulo), &cols(&minus_one), &[]),
        Some(vec![Some(true)])
    );
    assert_eq!(run(&divide(ArithOp::Modulo), &cols(&zero), &[]), None);
    // A float dividend over an integer zero is an error too; over 0.0 it is an infinity.
    let w = Float64Array::from(vec![1.5]);
    let over = |d: BExpr| {
        compare(
            ComparisonOp::Gt,
            BExpr::Arith(ArithOp::Divide, slot(0), Box::new(d)),
            BExpr::Const(Value::Float(1e308)),
        )
    };
    assert_eq!(
        run(
            &over(BExpr::Const(Value::Int(0))),
            &[Column::Float(&w)],
            &[]
        ),
        None
    );
    assert_eq!(
        run(
            &over(BExpr::Const(Value::Float(0.0))),
            &[Column::Float(&w)],
            &[]
        ),
        Some(vec![Some(true)])
    );
}

#[test]
fn arrays_with_offsets_read_from_their_offset() {
    let full = Int64Array::from(
        (0..20)
            .map(|i| (i % 3 != 0).then_some(i))
            .collect::<Vec<_>>(),
    );
    let sliced = full.slice(5, 11);
    let bools = BooleanArray::from((0..20).map(|i| Some(i % 4 == 1)).collect::<Vec<_>>());
    let sliced_bools = bools.slice(5, 11);
    let expr = BExpr::And(
        Box::new(compare(
            ComparisonOp::Gt,
            BExpr::Slot(0),
            BExpr::Param(Arc::from("c")),
        )),
        slot(1),
    );
    let c = Value::Int(6);
    let actual = run(
        &expr,
        &[Column::Int(&sliced), Column::Bool(&sliced_bools)],
        &[&c],
    )
    .unwrap();
    let expected: Vec<Option<bool>> = (5..16)
        .map(|i| {
            let x = (i % 3 != 0).then_some(i > 6);
            let b = i % 4 == 1;
            match (x, b) {
                (_, false) | (Some(false), _) => Some(false),
                (Some(true), true) => Some(true),
                (None, true) => None,
            }
        })
        .collect();
    assert_eq!(actual, expected);
}

#[test]
fn in_lists_decide_integer_float_equality_exactly() {
    let list = |items: Vec<Value>| BExpr::In(slot(0), Box::new(BExpr::Const(Value::list(items))));
    let x = Int64Array::from(vec![Some(2), Some(3), None]);
    let with_float = list(vec![Value::Float(2.0), Value::Float(3.5), Value::from("3")]);
    assert_eq!(
        run(&with_float, &[Column::Int(&x)], &[]),
        Some(vec![Some(true), Some(false), None])
    );
    let with_null = list(vec![Value::Int(2), Value::Null]);
    assert_eq!(
        run(&with_null, &[Column::Int(&x)], &[]),
        Some(vec![Some(true), None, None])
    );
    let empty = list(vec![]);
    assert_eq!(
        run(&empty, &[Column::Int(&x)], &[]),
        Some(vec![Some(false); 3])
    );
    let w = Float64Array::from(vec![9_007_199_254_740_992.0, f64::NAN]);
    let big = list(vec![Value::Int(9_007_199_254_740_993), Value::Int(1 << 53)]);
    assert_eq!(
        run(&big, &[Column::Float(&w)], &[]),
        Some(vec![Some(true), Some(false)])
    );
}

#[test]
fn integers_and_floats_compare_exactly() {
    // 2^53 + 1 as a float is 2^53: converting the integer would call them equal.
    let i = Int64Array::from(vec![(1 << 53) + 1, 1 << 53, i64::MAX, i64::MIN, 2, -3, 5]);
    let f = Float64Array::from(vec![
        9_007_199_254_740_992.0,
        9_007_199_254_740_992.0,
        9_223_372_036_854_775_808.0,
        -9_223_372_036_854_775_808.0,
        2.5,
        -3.5,
        f64::NAN,
    ]);
    let columns = [Column::Int(&i), Column::Float(&f)];
    let expect = |op, rows: [Option<bool>; 7]| {
        assert_eq!(
            run(&compare(op, BExpr::Slot(0), BExpr::Slot(1)), &columns, &[]),
            Some(rows.to_vec()),
            "{op:?}"
        );
    };
    let (t, f_) = (Some(true), Some(false));
    expect(ComparisonOp::Eq, [f_, t, f_, t, f_, f_, f_]);
    expect(ComparisonOp::NotEq, [t, f_, t, f_, t, t, t]);
    expect(ComparisonOp::Lt, [f_, f_, t, f_, t, f_, f_]);
    expect(ComparisonOp::Le, [f_, t, t, t, t, f_, f_]);
    expect(ComparisonOp::Gt, [t, f_, f_, f_, f_, t, f_]);
    expect(ComparisonOp::Ge, [t, t, f_, t, f_, t, f_]);
    // The float on the left: the mirrored answer (columns go in the shape's leaf order,
    // first use first: slot 1, then slot 0).
    assert_eq!(
        run(
            &compare(ComparisonOp::Lt, BExpr::Slot(1), BExpr::Slot(0)),
            &[Column::Float(&f), Column::Int(&i)],
            &[]
        ),
        Some(vec![t, f_, f_, f_, f_, t, f_])
    );
}

#[test]
fn float_remainder_has_the_dividends_sign_and_a_zero_divisor_gives_nan() {
    // x % y = r, compared with the remainder Rust (the row evaluator) computes.
    let x = Float64Array::from(vec![7.5, -7.5, 7.0, 5.5, 1e300, -0.0, 3.0]);
    let y = Float64Array::from(vec![2.0, 2.0, -3.0, 0.0, 3.0, 1.0, f64::INFINITY]);
    let r = Float64Array::from(vec![1.5, -1.5, 1.0, f64::NAN, 1e300 % 3.0, -0.0, 3.0]);
    let remainder = BExpr::Arith(ArithOp::Modulo, slot(0), slot(1));
    let columns = [Column::Float(&x), Column::Float(&y), Column::Float(&r)];
    // NaN = NaN is false: only the zero divisor's row.
    let equal = compare(ComparisonOp::Eq, remainder.clone(), BExpr::Slot(2));
    assert_eq!(run(&equal, &columns, &[]), Some(mask("T T T F T T T")));
    let is_nan = compare(ComparisonOp::NotEq, remainder.clone(), remainder);
    assert_eq!(
        run(&is_nan, &columns[..2], &[]),
        Some(mask("F F F T F F F"))
    );
    // An integer operand is converted; an integer zero divisor under a float dividend is
    // NaN too, not an error (only INTEGER % 0 is).
    let by_int = BExpr::Arith(ArithOp::Modulo, slot(0), int(0));
    let nan = compare(ComparisonOp::NotEq, by_int.clone(), by_int);
    assert_eq!(run(&nan, &columns[..1], &[]), Some(mask("T T T T T T T")));
}

#[test]
fn power_is_a_float_whatever_the_operands() {
    let x = Int64Array::from(vec![Some(2), Some(-8), Some(0), Some(10), None]);
    let y = Float64Array::from(vec![3.0, 1.0 / 3.0, -1.0, 400.0, 2.0]);
    let power = |a, b| BExpr::Arith(ArithOp::Power, a, b);
    // 2 ^ 3 = 8.0; (-8) ^ (1/3) is NaN; 0 ^ -1 is infinite; 10 ^ 400 overflows to infinity;
    // a null operand gives null.
    let eight = compare(
        ComparisonOp::Eq,
        power(slot(0), slot(1)),
        BExpr::Const(Value::Float(8.0)),
    );
    let columns = [Column::Int(&x), Column::Float(&y)];
    assert_eq!(run(&eight, &columns, &[]), Some(mask("T F F F _")));
    let nan = compare(
        ComparisonOp::NotEq,
        power(slot(0), slot(1)),
        power(slot(0), slot(1)),
    );
    assert_eq!(run(&nan, &columns, &[]), Some(mask("F T F F _")));
    let huge = compare(
        ComparisonOp::Gt,
        power(slot(0), slot(1)),
        BExpr::Const(Value::Float(f64::MAX)),
    );
    assert_eq!(run(&huge, &columns, &[]), Some(mask("F F T T _")));
    // Two integers: still a float (2 ^ 3 = 8.0 equals the integer 8 too).
    let ints = compare(
        ComparisonOp::Eq,
        power(slot(0), int(3)),
        BExpr::Const(Value::Int(8)),
    );
    assert_eq!(run(&ints, &columns[..1], &[]), Some(mask("T F F F _")));
}

#[test]
fn xor_and_unary_minus() {
    let a = BooleanArray::from(vec![Some(true), Some(true), Some(false), None]);
    let b = BooleanArray::from(vec![Some(true), Some(false), Some(false), Some(true)]);
    let xor = BExpr::Xor(slot(0), slot(1));
    assert_eq!(
        run(&xor, &[Column::Bool(&a), Column::Bool(&b)], &[]),
        Some(vec![Some(false), Some(true), Some(false), None])
    );
    // -x > 0 on integers and floats; -i64::MIN overflows: the batch falls back.
    let negative = compare(
        ComparisonOp::Gt,
        BExpr::Negate(slot(0)),
        BExpr::Const(Value::Int(0)),
    );
    let x = Int64Array::from(vec![Some(-2), Some(3), None]);
    assert_eq!(
        run(&negative, &[Column::Int(&x)], &[]),
        Some(vec![Some(true), Some(false), None])
    );
    let w = Float64Array::from(vec![-0.5, 0.0, f64::NAN]);
    assert_eq!(
        run(&negative, &[Column::Float(&w)], &[]),
        Some(vec![Some(true), Some(false), Some(false)])
    );
    let min = Int64Array::from(vec![1, i64::MIN]);
    assert_eq!(run(&negative, &[Column::Int(&min)], &[]), None);
}

#[test]
fn strings_compare_for_equality_and_prefixes() {
    use plexus_plan::logical::StringOp;
    let names = StringArray::from(vec![
        Some("alpha"),
        Some("al"),
        None,
        Some(""),
        Some("beta"),
        Some("alphabet"),
    ]);
    // Sliced: the offsets start at the slice's first row.
    let names = names.slice(0, 6);
    let column = [Column::Str(&names)];
    let literal = |s: &str| BExpr::Const(Value::from(s));
    let equal = compare(ComparisonOp::Eq, BExpr::Slot(0), literal("alpha"));
    assert_eq!(run(&equal, &column, &[]), Some(mask("T F _ F F F")));
    let differs = compare(ComparisonOp::NotEq, BExpr::Slot(0), literal(""));
    assert_eq!(run(&differs, &column, &[]), Some(mask("T T _ F T T")));
    let starts = BExpr::StringOp(
        StringOp::StartsWith,
        slot(0),
        Box::new(BExpr::Param(Arc::from("p"))),
    );
    let prefix = Value::from("al");
    assert_eq!(run(&starts, &column, &[&prefix]), Some(mask("T T _ F F T")));
    // The empty prefix starts every string; a null one gives null.
    let empty = Value::from("");
    assert_eq!(run(&starts, &column, &[&empty]), Some(mask("T T _ T T T")));
    assert_eq!(run(&starts, &column, &[&Value::Null]), Some(vec![None; 6]));
    // A slice further in: row 0 is "beta".
    let tail = names.slice(4, 2);
    assert_eq!(run(&equal, &[Column::Str(&tail)], &[]), Some(mask("F F")));
    let beta = compare(ComparisonOp::Eq, BExpr::Slot(0), literal("beta"));
    assert_eq!(run(&beta, &[Column::Str(&tail)], &[]), Some(mask("T F")));
}

#[test]
fn types_outside_the_compiled_ones_are_declined() {
    let minus_flag = BExpr::Not(Box::new(BExpr::Negate(slot(0))));
    let shape = shape_of(&minus_flag);
    let flag = BooleanArray::from(vec![true]);
    let signature = Signature::of(&[Column::Bool(&flag)], &[]).unwrap();
    let why = compile(std::slice::from_ref(&minus_flag), &shape, &signature).unwrap_err();
    assert!(why.0.contains("unary minus on a boolean"), "{why}");
    // Strings compile for equality and prefixes, not for ordering.
    let ordered = compare(
        ComparisonOp::Lt,
        BExpr::Slot(0),
        BExpr::Const(Value::from("m")),
    );
    let names = StringArray::from(vec!["a"]);
    let signature = Signature::of(&[Column::Str(&names)], &[]).unwrap();
    let why = compile(
        std::slice::from_ref(&ordered),
        &shape_of(&ordered),
        &signature,
    )
    .unwrap_err();
    assert!(why.0.contains("an ordering of strings"), "{why}");
    // A list parameter has no compiled type.
    assert!(Signature::of(&[], &[&Value::list(vec![])]).is_none());
}

#[test]
fn the_cache_is_bounded_and_keeps_evicted_code_alive_for_its_users() {
    let cache = Cache::new(2);
    let x = Int64Array::from(vec![1, 2, 3]);
    let columns = [Column::Int(&x)];
    let signature = Signature::of(&columns, &[]).unwrap();
    let mut held = Vec::new();
    for k in 0..3 {
        let expr = compare(
            ComparisonOp::Gt,
            BExpr::Slot(0),
            BExpr::Const(Value::Int(k)),
        );
        let shape = shape_of(&expr);
        match cache.get_or_compile(
            &plexus_jit::Program::filter(std::slice::from_ref(&expr)),
            &shape,
            &signature,
            0,
        ) {
            Lookup::Ready(code) => held.push(code),
            other => panic!("not compiled: {other:?}"),
        }
    }
    assert_eq!(cache.stats(), (2, 1));
    // The first predicate's entry is gone from the cache, its code still runs.
    let out = held[0].run(&columns, &[], 3).unwrap();
    assert_eq!(out.mask, BooleanArray::from(vec![true, true, true]));
    assert_eq!(out.passed, vec![3]);
    // A schema version is part of the key: the same predicate compiles again under another.
    let expr = compare(
        ComparisonOp::Gt,
        BExpr::Slot(0),
        BExpr::Const(Value::Int(2)),
    );
    let shape = shape_of(&expr);
    let Lookup::Ready(again) = cache.get_or_compile(
        &plexus_jit::Program::filter(std::slice::from_ref(&expr)),
        &shape,
        &signature,
        1,
    ) else {
        panic!("not compiled");
    };
    assert!(!Arc::ptr_eq(&again, &held[2]));
    assert_eq!(cache.stats(), (2, 2));
}

/// A compiled pipeline (`x > 0`, grouped by `k`, `count(*)` and `min(w)`) over one batch,
/// with the caller's state in `dense`, `groups` groups and the null group `null_group`.
fn run_pipeline(
    columns: &[Column],
    dense: &mut [u32],
    groups: usize,
    (start, mins): (usize, &mut Vec<f64>),
) -> (plexus_jit::Progress, Vec<i64>) {
    use plexus_jit::{AggOp, AggregateProgram, AggregateState, CallBuffers, Program};
    let program = Program {
        predicates: vec![compare(
            ComparisonOp::Gt,
            BExpr::Slot(0),
            BExpr::Const(Value::Int(0)),
        )],
        aggregate: Some(AggregateProgram {
            key: Some(BExpr::Slot(1)),
            calls: vec![(AggOp::Rows, None), (AggOp::Min, Some(BExpr::Slot(2)))],
            replay: false,
        }),
        project: Vec::new(),
    };
    let shape = program.shape().expect("covered operators");
    let signature = Signature::of(columns, &[]).expect("compiled types");
    let compiled = plexus_jit::compile_program(&program, &shape, &signature).expect("compiles");
    let (mut rows, mut ints, mut counts, mut floats2, mut ints2) = (
        vec![0; groups],
        vec![0; groups],
        vec![0; groups],
        vec![0.0; groups],
        vec![0; groups],
    );
    let mut replays = Vec::new();
    let mut state = AggregateState {
        dense,
        null_group: plexus_jit::NO_GROUP,
        rows_base: 0,
        calls: vec![
            CallBuffers {
                count: &mut rows,
                ints: &mut ints,
                floats: &mut floats2,
            },
            CallBuffers {
                count: &mut counts,
                ints: &mut ints2,
                floats: mins,
            },
        ],
        replays: &mut replays,
    };
    let len = match columns[0] {
        Column::Int(a) => a.len(),
        _ => unreachable!("an integer first column"),
    };
    let progress = (compiled.run_aggregate(columns, &[], (start, len), &mut state))
        .expect("the state has the code's shape");
    (progress, rows)
}

#[test]
fn pipelines_stop_for_new_groups_and_never_index_past_the_callers_groups() {
    let x = Int64Array::from(vec![1, 5, -1, 2]);
    let k = Int64Array::from(vec![3, 3, 7, 9]);
    let w = Float64Array::from(vec![-0.0, 0.0, 1.0, 2.0]);
    let columns = [Column::Int(&x), Column::Int(&k), Column::Float(&w)];
    let mut dense = vec![plexus_jit::NO_GROUP; plexus_jit::DENSE_KEYS];
    // Key 3 has no group: the code stops before row 0 and applies nothing.
    let mut mins = vec![0.0; 1];
    let (progress, rows) = run_pipeline(&columns, &mut dense, 1, (0, &mut mins));
    assert_eq!(
        progress.stop,
        plexus_jit::Stop::NewGroup {
            row: 0,
            key: Some(3)
        }
    );
    assert_eq!((progress.fed, rows), (0, vec![0]));
    // With group 0 for key 3: rows 0 and 1 are fed (the first of -0.0 and 0.0 stays the
    // minimum), row 2 is dropped by the filter, row 3's key 9 needs a group.
    dense[3] = 0;
    let (progress, rows) = run_pipeline(&columns, &mut dense, 1, (0, &mut mins));
    assert_eq!(
        progress.stop,
        plexus_jit::Stop::NewGroup {
            row: 3,
            key: Some(9)
        }
    );
    assert_eq!((progress.fed, progress.passed, rows), (2, vec![2], vec![2]));
    assert_eq!(mins[0].to_bits(), (-0.0f64).to_bits());
    // A group the caller's arrays do not hold (as if `dense` were stale) is never indexed:
    // the row falls back.
    dense[9] = 5;
    let mut mins = vec![0.0; 1];
    let (progress, _) = run_pipeline(&columns, &mut dense, 1, (3, &mut mins));
    assert_eq!(progress.stop, plexus_jit::Stop::Fallback { row: 3 });
}
