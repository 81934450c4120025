//! Vectorised evaluation: an expression over a whole batch at once, as typed column vectors.
//!
//! WHAT
//! ====
//! Row-at-a-time evaluation (`eval`) walks the expression tree for every row, looks each slot
//! up through an `Env`, and dispatches on a `Value` enum at every step. For the expressions a
//! scan-heavy filter is made of — property reads, parameters and literals, comparisons,
//! arithmetic, AND / OR / NOT, IS NULL, STARTS WITH / ENDS WITH / CONTAINS — this module
//! evaluates the tree once per batch instead: every operand becomes a [`Vector`], an Arrow
//! array of one type (`Int64Array`, `Float64Array`, `BooleanArray`, `StringArray`, each with
//! its null bitmap), and every operator a loop over those arrays. A filter whose predicate
//! comes out as a boolean vector keeps the rows where it is true (`Filter` in `exec::ops`).
//!
//! Where the arrays come from: a slot's column of the batch, or a property column read for
//! the whole batch (`prefetch`), converted once per batch when every value in it is of one
//! type (or null). A column of mixed types (integers and strings, say) is not a vector: the
//! expression is then evaluated row at a time, as before — "per-row `Value` only where a
//! column is genuinely mixed-type".
//!
//! SAME RESULTS, ALWAYS
//! ====================
//! The row evaluator is the model, and this module gives up rather than differ:
//! - any expression, operand type or operator outside the list above makes [`predicate`]
//!   return `None`, and the caller evaluates the batch row at a time;
//! - numeric comparisons run the row evaluator's own scalar function (`comparison`) on each
//!   pair of typed values; arithmetic on two number sides (integer or float vectors, a
//!   number literal or parameter) runs typed kernels over the arrays' values with `arith`'s
//!   rules written out — checked integer overflow, zero divisors, `i64::MIN / -1`,
//!   integer/float mixing, NaN — and any other arithmetic (a null literal, say) `arith` row
//!   by row;
//! - string comparisons and string predicates use Arrow's kernels, whose rules are Cypher's
//!   there (byte-wise order; a prefix, suffix or substring test; null in, null out); AND, OR
//!   and NOT use Arrow's Kleene kernels, which are Cypher's three-valued logic;
//! - an operation that would fail on some row (an overflow, a division by zero, a type error)
//!   makes the whole batch fall back, so the row evaluator raises the error — or does not,
//!   where AND / OR short-circuit past that row — exactly as it would have.
//!
//! So the only observable change is speed. `tests` checks this against the row evaluator on
//! random columns with nulls, NaNs, zeros and extreme integers.
//!
//! NOT YET
//! =======
//! A Project keeps an item a vector when it is a typed property read or an expression this
//! module computes (`context::Batch`, TYPED COLUMNS), and a top-k sort reads such keys
//! without a `Value` per row (`exec::sort`); other projections and sort keys evaluate row at
//! a time. An Aggregate's keys and arguments are read from vectors ([`column`]) but
//! accumulated row at a time; a hash join vectorises only a single key that is a slot or a
//! property read (`exec::join`). STRING properties come from storage as `Value`s except for
//! a Filter these vectors evaluate (converted here); BOOLEAN, INT64 and FLOAT64 ones come
//! typed.

use super::prefetch::{Prefetched, PrefetchedColumn};
use super::{Env, arith, comparison, eval};
pub(crate) use crate::column::Vector;
use crate::context::{Batch, ExecContext};
use arrow::array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::{boolean, cmp, comparison as string_kernels};
use plexus_cypher::ast::ComparisonOp;
use plexus_plan::logical::{ArithOp, BExpr, StringOp};
use plexus_value::value::Value;

/// An operand: a vector, or one value for every row (a literal or a parameter).
enum Operand {
    Vector(Vector),
    Scalar(Value),
}

/// `expr` as a boolean vector over every row of `batch` — true where a filter on it keeps
/// the row — or `None` when it cannot be evaluated as vectors with the row evaluator's exact
/// results (see SAME RESULTS, ALWAYS).
pub(crate) fn predicate(
    expr: &BExpr,
    batch: &Batch,
    prefetched: &Prefetched,
    ctx: &mut ExecContext,
) -> Option<BooleanArray> {
    let len = batch.len();
    if len == 0 {
        return None;
    }
    match operand(expr, batch, prefetched, ctx)? {
        Operand::Vector(Vector::Bool(mask)) => {
            debug_assert_eq!(mask.len(), len);
            Some(mask)
        }
        Operand::Scalar(Value::Bool(b)) => Some(BooleanArray::from(vec![b; len])),
        Operand::Scalar(Value::Null) => Some(BooleanArray::new_null(len)),
        // Anything else is a type error for a filter: the row evaluator reports it.
        _ => None,
    }
}

/// `expr` as a typed vector over every row of `batch`, each row's value the row evaluator's
/// (see SAME RESULTS, ALWAYS) — `None` when it cannot be computed so, or is one value for
/// every row (a literal, a parameter): the caller then evaluates it row at a time. An
/// Aggregate's keys and arguments are read here (`exec::aggregate`, VECTORS).
pub(crate) fn column(
    expr: &BExpr,
    batch: &Batch,
    prefetched: &Prefetched,
    ctx: &mut ExecContext,
) -> Option<Vector> {
    if batch.is_empty() {
        return None;
    }
    match operand(expr, batch, prefetched, ctx)? {
        Operand::Vector(vector) => Some(vector),
        Operand::Scalar(_) => None,
    }
}

fn operand(
    expr: &BExpr,
    batch: &Batch,
    pre: &Prefetched,
    ctx: &mut ExecContext,
) -> Option<Operand> {
    let len = batch.len();
    if !matches!(expr, BExpr::Const(_) | BExpr::Param(_)) && constant(expr) {
        // The same value on every row: the row evaluator's, computed once.
        return scalar(eval(expr, &mut Env::new(batch, 0), ctx).ok()?);
    }
    match expr {
        BExpr::Const(value) => scalar(value.clone()),
        BExpr::Param(name) => scalar(ctx.params.get(&**name)?.clone()),
        BExpr::Slot(_) | BExpr::Property(..) => leaf(expr, batch, pre).map(Operand::Vector),
        BExpr::Compare(operands, ops) if ops.len() == 1 => {
            let a = operand(&operands[0], batch, pre, ctx)?;
            let b = operand(&operands[1], batch, pre, ctx)?;
            compare(ops[0], &a, &b, len).map(|mask| Operand::Vector(Vector::Bool(mask)))
        }
        BExpr::Arith(op, a, b) if *op != ArithOp::Power => {
            let a = operand(a, batch, pre, ctx)?;
            let b = operand(b, batch, pre, ctx)?;
            arithmetic(*op, &a, &b, len).map(Operand::Vector)
        }
        BExpr::And(a, b) | BExpr::Or(a, b) => {
            let a = bools(operand(a, batch, pre, ctx)?, len)?;
            let b = bools(operand(b, batch, pre, ctx)?, len)?;
            let result = match expr {
                BExpr::And(..) => boolean::and_kleene(&a, &b),
                _ => boolean::or_kleene(&a, &b),
            };
            result.ok().map(|mask| Operand::Vector(Vector::Bool(mask)))
        }
        BExpr::Not(x) => {
            let x = bools(operand(x, batch, pre, ctx)?, len)?;
            boolean::not(&x)
                .ok()
                .map(|mask| Operand::Vector(Vector::Bool(mask)))
        }
        BExpr::IsNull(x, negated) => {
            let Operand::Vector(vector) = operand(x, batch, pre, ctx)? else {
                return None;
            };
            let array = vector.array();
            let mask: BooleanArray = (0..len)
                .map(|row| Some(array.is_null(row) != *negated))
                .collect();
            Some(Operand::Vector(Vector::Bool(mask)))
        }
        BExpr::StringOp(op, a, b) if *op != StringOp::Regex => {
            let a = operand(a, batch, pre, ctx)?;
            let b = operand(b, batch, pre, ctx)?;
            string_predicate(*op, &a, &b, len).map(|mask| Operand::Vector(Vector::Bool(mask)))
        }
        _ => None,
    }
}

/// A leaf of an expression — a slot's column, or a property of a slot's entities read ahead
/// in `pre` — as one typed vector over the batch (`None`: another expression, or a column
/// of mixed types or nulls only). The JIT (`exec::jit`) reads its leaf columns here too.
pub(crate) fn leaf(expr: &BExpr, batch: &Batch, pre: &Prefetched) -> Option<Vector> {
    match expr {
        BExpr::Slot(slot) => match batch.vector(*slot) {
            Some(vector) => Some(vector.clone()),
            // Nodes are no vector type: not made into `Value`s only to find that out.
            None if batch.nodes(*slot).is_some() => None,
            None => typed(batch.values(*slot)?.iter()),
        },
        BExpr::Property(base, key) => {
            let BExpr::Slot(slot) = &**base else {
                return None;
            };
            match pre.column(*slot, key)? {
                PrefetchedColumn::Typed(vector) => Some(vector.clone()),
                PrefetchedColumn::Values(column) => {
                    let values: Option<Vec<&Value>> = column.iter().map(Option::as_ref).collect();
                    typed(values?.into_iter())
                }
            }
        }
        _ => None,
    }
}

/// Whether `expr` is made only of what [`predicate`] evaluates as vectors (leaves,
/// literals and parameters under the operators of WHAT) — a check of the expression alone,
/// before any batch: an operator reads STRING properties as vectors only where it will use
/// them as such (`prefetch`, TYPED COLUMNS).
pub(crate) fn covers(expr: &BExpr) -> bool {
    match expr {
        BExpr::Const(_) | BExpr::Param(_) | BExpr::Slot(_) => true,
        BExpr::Property(base, _) => matches!(**base, BExpr::Slot(_)),
        BExpr::Compare(items, ops) => ops.len() == 1 && items.iter().all(covers),
        BExpr::Arith(op, a, b) => *op != ArithOp::Power && covers(a) && covers(b),
        BExpr::StringOp(op, a, b) => *op != StringOp::Regex && covers(a) && covers(b),
        BExpr::And(a, b) | BExpr::Or(a, b) => covers(a) && covers(b),
        BExpr::Not(x) | BExpr::IsNull(x, _) => covers(x),
        _ => false,
    }
}

/// Whether `e` reads no row: literals and parameters under the operators vectors evaluate.
fn constant(e: &BExpr) -> bool {
    match e {
        BExpr::Const(_) | BExpr::Param(_) => true,
        BExpr::Compare(items, _) => items.iter().all(constant),
        BExpr::Arith(_, a, b) | BExpr::And(a, b) | BExpr::Or(a, b) | BExpr::StringOp(_, a, b) => {
            constant(a) && constant(b)
        }
        BExpr::Not(x) | BExpr::IsNull(x, _) => constant(x),
        _ => false,
    }
}

/// A literal or parameter of a type vectors hold (or null).
fn scalar(value: Value) -> Option<Operand> {
    matches!(
        value,
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_)
    )
    .then_some(Operand::Scalar(value))
}

/// `values` as one typed vector: all integers, all floats, all booleans or all strings (nulls
/// anywhere). `None` for a column of mixed types, of other types, or of nulls only.
fn typed<'v>(values: impl ExactSizeIterator<Item = &'v Value> + Clone) -> Option<Vector> {
    let first = values.clone().find(|v| !v.is_null())?;
    macro_rules! collect {
        ($variant:ident, $array:ty, $pattern:pat => $value:expr) => {
            values
                .map(|v| match v {
                    $pattern => Some(Some($value)),
                    Value::Null => Some(None),
                    _ => None,
                })
                .collect::<Option<$array>>()
                .map(Vector::$variant)
        };
    }
    match first {
        Value::Int(_) => collect!(Int, Int64Array, Value::Int(i) => *i),
        Value::Float(_) => collect!(Float, Float64Array, Value::Float(f) => *f),
        Value::Bool(_) => collect!(Bool, BooleanArray, Value::Bool(b) => *b),
        Value::String(_) => collect!(Str, StringArray, Value::String(s) => &**s),
        _ => None,
    }
}

/// A boolean operand as a boolean vector of `len` rows (`None`: not boolean).
fn bools(operand: Operand, len: usize) -> Option<BooleanArray> {
    match operand {
        Operand::Vector(Vector::Bool(mask)) => Some(mask),
        Operand::Scalar(Value::Bool(b)) => Some(BooleanArray::from(vec![b; len])),
        Operand::Scalar(Value::Null) => Some(BooleanArray::new_null(len)),
        _ => None,
    }
}

/// One side of a numeric operation: a number per row, or `None` if this side is not numeric.
fn numbers<'a>(operand: &'a Operand) -> Option<Box<dyn Fn(usize) -> Value + 'a>> {
    match operand {
        Operand::Vector(v) if v.is_number() => {
            Some(Box::new(move |row| v.number(row).unwrap_or(Value::Null)))
        }
        Operand::Scalar(value @ (Value::Int(_) | Value::Float(_) | Value::Null)) => {
            Some(Box::new(move |_| value.clone()))
        }
        _ => None,
    }
}

/// `a op b` row by row. Numbers (and null) go through the row evaluator's `comparison`;
/// two string sides through Arrow's comparison kernels.
fn compare(op: ComparisonOp, a: &Operand, b: &Operand, len: usize) -> Option<BooleanArray> {
    if let (Some(x), Some(y)) = (numbers(a), numbers(b)) {
        if matches!((a, b), (Operand::Scalar(_), Operand::Scalar(_))) {
            return None;
        }
        return Some(
            (0..len)
                .map(|row| comparison(op, &x(row), &y(row)))
                .collect(),
        );
    }
    let (left, right) = (strings(a, len)?, strings(b, len)?);
    let result = match op {
        ComparisonOp::Eq => cmp::eq(&left, &right),
        ComparisonOp::NotEq => cmp::neq(&left, &right),
        ComparisonOp::Lt => cmp::lt(&left, &right),
        ComparisonOp::Le => cmp::lt_eq(&left, &right),
        ComparisonOp::Gt => cmp::gt(&left, &right),
        ComparisonOp::Ge => cmp::gt_eq(&left, &right),
    };
    result.ok()
}

/// A string operand as a string vector of `len` rows (`None`: not a string).
fn strings(operand: &Operand, len: usize) -> Option<StringArray> {
    match operand {
        Operand::Vector(Vector::Str(s)) => Some(s.clone()),
        Operand::Scalar(Value::String(s)) => Some(StringArray::from(vec![&**s; len])),
        Operand::Scalar(Value::Null) => Some(StringArray::new_null(len)),
        _ => None,
    }
}

/// `a op b` on numbers row by row through the row evaluator's `arith`; `None` if a side is
/// not numeric, both are scalars, or any row fails (see SAME RESULTS, ALWAYS). Integers on
/// both sides give integers, a float on either side floats (null stays null).
fn arithmetic(op: ArithOp, a: &Operand, b: &Operand, len: usize) -> Option<Vector> {
    if matches!((a, b), (Operand::Scalar(_), Operand::Scalar(_))) {
        return None;
    }
    if let (Some(x), Some(y)) = (Numbers::of(a), Numbers::of(b)) {
        return typed_arithmetic(op, x, y, len);
    }
    let (x, y) = (numbers(a)?, numbers(b)?);
    let float = |o: &Operand| {
        matches!(
            o,
            Operand::Vector(Vector::Float(_)) | Operand::Scalar(Value::Float(_))
        )
    };
    let results = (0..len).map(|row| arith(op, &x(row), &y(row)).ok());
    if float(a) || float(b) {
        let column = results
            .map(|v| match v? {
                Value::Float(f) => Some(Some(f)),
                Value::Null => Some(None),
                _ => None,
            })
            .collect::<Option<Float64Array>>()?;
        Some(Vector::Float(column))
    } else {
        let column = results
            .map(|v| match v? {
                Value::Int(i) => Some(Some(i)),
                Value::Null => Some(None),
                _ => None,
            })
            .collect::<Option<Int64Array>>()?;
        Some(Vector::Int(column))
    }
}

/// One side of a typed arithmetic kernel: a column of integers or floats (nulls in its
/// bitmap), or one non-null number for every row.
#[derive(Clone, Copy)]
enum Numbers<'a> {
    Ints(&'a Int64Array),
    Floats(&'a Float64Array),
    Int(i64),
    Float(f64),
}

impl<'a> Numbers<'a> {
    fn of(operand: &'a Operand) -> Option<Numbers<'a>> {
        Some(match operand {
            Operand::Vector(Vector::Int(a)) => Numbers::Ints(a),
            Operand::Vector(Vector::Float(a)) => Numbers::Floats(a),
            Operand::Scalar(Value::Int(i)) => Numbers::Int(*i),
            Operand::Scalar(Value::Float(f)) => Numbers::Float(*f),
            _ => return None,
        })
    }

    fn nulls(self) -> Option<&'a NullBuffer> {
        match self {
            Numbers::Ints(a) => a.nulls(),
            Numbers::Floats(a) => a.nulls(),
            Numbers::Int(_) | Numbers::Float(_) => None,
        }
    }

    /// Row `row` as an integer (`None`: a float side).
    fn int(self, row: usize) -> Option<i64> {
        match self {
            Numbers::Ints(a) => Some(a.values()[row]),
            Numbers::Int(i) => Some(i),
            Numbers::Floats(_) | Numbers::Float(_) => None,
        }
    }

    /// Row `row` as a float, an integer converted as the row evaluator does (`as f64`).
    fn float(self, row: usize) -> f64 {
        match self {
            Numbers::Ints(a) => a.values()[row] as f64,
            Numbers::Floats(a) => a.values()[row],
            Numbers::Int(i) => i as f64,
            Numbers::Float(f) => f,
        }
    }

    fn is_int(self) -> bool {
        matches!(self, Numbers::Ints(_) | Numbers::Int(_))
    }
}

/// `x op y` over two typed sides without a `Value` per row, with the row evaluator's rules
/// (`arith`): integers on both sides give integers — an overflow, a zero divisor or
/// `i64::MIN / -1` on a row where both sides are valid makes the batch fall back (`None`),
/// `x % -1` is 0 — and a float on either side floats, an integer zero divisor an error even
/// then. A null row is null whatever its (unspecified) values compute to.
fn typed_arithmetic(op: ArithOp, x: Numbers, y: Numbers, len: usize) -> Option<Vector> {
    let nulls = NullBuffer::union(x.nulls(), y.nulls());
    let valid = |row: usize| nulls.as_ref().is_none_or(|n| n.is_valid(row));
    let mut failed = false;
    if x.is_int() && y.is_int() {
        let values: Vec<i64> = (0..len)
            .map(|row| {
                let (a, b) = (x.int(row).unwrap_or(0), y.int(row).unwrap_or(0));
                let (value, bad) = match op {
                    ArithOp::Add => a.overflowing_add(b),
                    ArithOp::Subtract => a.overflowing_sub(b),
                    ArithOp::Multiply => a.overflowing_mul(b),
                    ArithOp::Divide => match a.checked_div(b) {
                        Some(q) => (q, false),
                        None => (0, true),
                    },
                    ArithOp::Modulo if b == 0 => (0, true),
                    ArithOp::Modulo => (a.checked_rem(b).unwrap_or(0), false),
                    ArithOp::Power => unreachable!("^ is not vectorised"),
                };
                failed |= bad && valid(row);
                value
            })
            .collect();
        return (!failed).then(|| Vector::Int(Int64Array::new(values.into(), nulls)));
    }
    let values: Vec<f64> = (0..len)
        .map(|row| {
            let (a, b) = (x.float(row), y.float(row));
            match op {
                ArithOp::Add => a + b,
                ArithOp::Subtract => a - b,
                ArithOp::Multiply => a * b,
                ArithOp::Divide => {
                    failed |= y.int(row) == Some(0) && valid(row);
                    a / b
                }
                ArithOp::Modulo => a % b,
                ArithOp::Power => unreachable!("^ is not vectorised"),
            }
        })
        .collect();
    (!failed).then(|| Vector::Float(Float64Array::new(values.into(), nulls)))
}

/// `a STARTS WITH b` (ENDS WITH, CONTAINS) on strings; null where either side is null.
fn string_predicate(op: StringOp, a: &Operand, b: &Operand, len: usize) -> Option<BooleanArray> {
    let (left, right) = (strings(a, len)?, strings(b, len)?);
    let result = match op {
        StringOp::StartsWith => string_kernels::starts_with(&left, &right),
        StringOp::EndsWith => string_kernels::ends_with(&left, &right),
        StringOp::Contains => string_kernels::contains(&left, &right),
        StringOp::Regex => return None,
    };
    result.ok()
}

#[cfg(test)]
mod tests {
    //! The row evaluator is the model: on random typed and mixed columns (nulls, NaN, zeros,
    //! the extreme integers) and random expressions over them, a predicate the vector path
    //! evaluates gives, row by row, what `eval` gives — and where `eval` would fail on some
    //! row, or give a non-boolean, the vector path declines.

    use super::*;
    use crate::context::with_test_ctx;
    use arrow::array::Array;
    use plexus_plan::Params;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn int() -> impl Strategy<Value = Value> {
        prop_oneof![
            20 => (-4i64..5).prop_map(Value::Int),
            1 => Just(Value::Int(i64::MAX)),
            1 => Just(Value::Int(i64::MIN)),
        ]
    }

    fn float() -> impl Strategy<Value = Value> {
        prop_oneof![
            12 => (-4i32..5).prop_map(|i| Value::Float(i as f64 / 2.0)),
            1 => Just(Value::Float(f64::NAN)),
            1 => Just(Value::Float(f64::INFINITY)),
            1 => Just(Value::Float(-0.0)),
        ]
    }

    fn string() -> impl Strategy<Value = Value> {
        prop::sample::select(vec!["", "a", "ab", "abc", "b", "ba", "é"]).prop_map(Value::from)
    }

    fn boolean() -> impl Strategy<Value = Value> {
        any::<bool>().prop_map(Value::Bool)
    }

    /// The values of kind `k`: integers, floats, strings, booleans, or mixed.
    fn values_of(k: usize) -> BoxedStrategy<Value> {
        match k {
            0 => int().boxed(),
            1 => float().boxed(),
            2 => string().boxed(),
            3 => boolean().boxed(),
            _ => prop_oneof![int(), float(), string()].boxed(),
        }
    }

    /// A column of `len` values of kind `k`, with nulls.
    fn column(len: usize, k: usize) -> impl Strategy<Value = Vec<Value>> {
        prop::collection::vec(prop_oneof![6 => values_of(k), 1 => Just(Value::Null)], len)
    }

    /// A slot, a literal (mostly of kind `k`, the columns' usual kind) or the parameter.
    fn leaf(k: usize) -> impl Strategy<Value = BExpr> {
        prop_oneof![
            4 => (0usize..2).prop_map(BExpr::Slot),
            2 => values_of(k).prop_map(BExpr::Const),
            1 => prop_oneof![values_of(4), Just(Value::Null), boolean()].prop_map(BExpr::Const),
            1 => Just(BExpr::Param(Arc::from("p"))),
        ]
    }

    /// A value: a leaf, or arithmetic over leaves.
    fn value(k: usize) -> impl Strategy<Value = BExpr> {
        prop_oneof![
            3 => leaf(k),
            1 => (ariths(), leaf(k), leaf(k))
                .prop_map(|(op, a, b)| BExpr::Arith(op, Box::new(a), Box::new(b))),
        ]
    }

    /// A predicate: comparisons, string tests and IS NULL of values (or a leaf), combined
    /// with AND, OR and NOT.
    fn expr(k: usize) -> impl Strategy<Value = BExpr> {
        let ops = prop::sample::select(vec![
            ComparisonOp::Eq,
            ComparisonOp::NotEq,
            ComparisonOp::Lt,
            ComparisonOp::Le,
            ComparisonOp::Gt,
            ComparisonOp::Ge,
        ]);
        let strings = prop::sample::select(vec![
            StringOp::StartsWith,
            StringOp::EndsWith,
            StringOp::Contains,
        ]);
        let atom = prop_oneof![
            4 => (value(k), ops, value(k))
                .prop_map(|(a, op, b)| BExpr::Compare(vec![a, b], vec![op])),
            1 => (strings, value(k), value(k))
                .prop_map(|(op, a, b)| BExpr::StringOp(op, Box::new(a), Box::new(b))),
            1 => (value(k), any::<bool>()).prop_map(|(a, n)| BExpr::IsNull(Box::new(a), n)),
            1 => leaf(k),
        ];
        atom.prop_recursive(2, 6, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| BExpr::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| BExpr::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|a| BExpr::Not(Box::new(a))),
            ]
        })
    }

    /// Two columns (usually of one kind), the parameter, and a predicate over them.
    fn case() -> impl Strategy<Value = (Vec<Value>, Vec<Value>, Value, BExpr)> {
        (1usize..24, 0usize..5, 0usize..5, 0..4).prop_flat_map(|(len, k0, k1, same)| {
            let k1 = if same > 0 { k0 } else { k1 };
            (
                column(len, k0),
                column(len, k1),
                prop_oneof![3 => values_of(k0), 1 => Just(Value::Null)],
                expr(k0),
            )
        })
    }

    /// A batch of the two columns' rows, and the parameter `p`.
    fn batch_and_params(a: Vec<Value>, b: Vec<Value>, p: Value) -> (Batch, Params) {
        let mut batch = Batch::new(2);
        for (x, y) in a.into_iter().zip(b) {
            batch.push_row(vec![x, y]);
        }
        let mut params = Params::new();
        params.insert("p".into(), p);
        (batch, params)
    }

    /// The arithmetic operators the vectors compute.
    fn ariths() -> impl Strategy<Value = ArithOp> + Clone {
        prop::sample::select(vec![
            ArithOp::Add,
            ArithOp::Subtract,
            ArithOp::Multiply,
            ArithOp::Divide,
            ArithOp::Modulo,
        ])
    }

    /// Two number columns (integers, floats or both), the parameter, and arithmetic over
    /// them and literals.
    fn arithmetic_case() -> impl Strategy<Value = (Vec<Value>, Vec<Value>, Value, BExpr)> {
        (1usize..24, 0usize..2, 0usize..2).prop_flat_map(|(len, k0, k1)| {
            let number = || prop_oneof![int(), float()];
            let leaf = prop_oneof![
                4 => (0usize..2).prop_map(BExpr::Slot),
                2 => number().prop_map(BExpr::Const),
                1 => Just(BExpr::Param(Arc::from("p"))),
            ];
            (
                column(len, k0),
                column(len, k1),
                number(),
                (ariths(), leaf.clone(), leaf)
                    .prop_map(|(op, a, b)| BExpr::Arith(op, Box::new(a), Box::new(b))),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, failure_persistence: None, ..ProptestConfig::default() })]

        /// The typed arithmetic kernels (`typed_arithmetic`): a column they compute holds,
        /// row by row, the row evaluator's value (bit for bit: NaN, -0.0); where the row
        /// evaluator fails on some row (overflow, a zero divisor) they decline.
        #[test]
        fn arithmetic_columns_agree_with_the_row_evaluator((a, b, p, expr) in arithmetic_case()) {
            let (batch, params) = batch_and_params(a, b, p);
            with_test_ctx(&params, |ctx| -> Result<(), TestCaseError> {
                let Some(vector) = super::column(&expr, &batch, &Prefetched::default(), &mut *ctx) else {
                    return Ok(());
                };
                for row in 0..batch.len() {
                    let expected = eval(&expr, &mut Env::new(&batch, row), ctx);
                    let expected = expected.map_err(|e| {
                        TestCaseError::fail(format!("row {row} of {expr:?}: {e}, vectors a value"))
                    })?;
                    let actual = vector.value(row);
                    prop_assert_eq!(format!("{actual:?}"), format!("{expected:?}"), "row {} of {:?}", row, expr);
                }
                Ok(())
            })?;
        }

        #[test]
        fn vectors_agree_with_the_row_evaluator((a, b, p, expr) in case()) {
            let (batch, params) = batch_and_params(a, b, p);
            with_test_ctx(&params, |ctx| -> Result<(), TestCaseError> {
                let Some(mask) = predicate(&expr, &batch, &Prefetched::default(), &mut *ctx) else {
                    return Ok(());
                };
                for row in 0..batch.len() {
                    let value = eval(&expr, &mut Env::new(&batch, row), ctx);
                    let expected = match value {
                        Ok(Value::Bool(b)) => Some(b),
                        Ok(Value::Null) => None,
                        other => {
                            return Err(TestCaseError::fail(format!(
                                "row {row}: the row evaluator gives {other:?}, vectors a mask"
                            )));
                        }
                    };
                    let actual = mask.is_valid(row).then(|| mask.value(row));
                    prop_assert_eq!(actual, expected, "row {} of {:?}", row, expr);
                }
                Ok(())
            })?;
        }
    }
}
