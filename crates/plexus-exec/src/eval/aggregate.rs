//! Aggregate functions: one [`Accumulator`] per group and aggregate call.
//!
//! Nulls are skipped by every aggregate (`count(x)` counts non-null values, `count(*)` counts
//! rows). With DISTINCT each value is fed once (under equivalence, see `value::GroupKey`).
//! `sum`/`avg` stay integers while all inputs are integers, switch to floats otherwise, and
//! reject non-numbers; `sum` of durations adds durations.
//!
//! PARTIAL STATES
//! ==============
//! A parallel aggregation (`exec::aggregate`) builds accumulators in worker threads, one set
//! per morsel, and combines them on the caller's thread in morsel order. Two ways exist:
//!
//! - [`Accumulator::merge`] folds another accumulator of the same call into this one, for
//!   the calls whose state combines exactly ([`plexus_plan::logical::PartialForm::Merged`]): counts
//!   add; `min`/`max` offer the other side's best to this one with the rule
//!   [`Accumulator::add`] applies to single values (a strictly better value replaces, so the
//!   earliest of equally ordered values stays, as serially); `collect` appends.
//! - [`Accumulator::add`] takes one already evaluated, non-null value, for the calls whose
//!   state depends on the order of every value ([`plexus_plan::logical::PartialForm::Replayed`]):
//!   float sums round at each step, integer sums overflow at a running total, DISTINCT keeps
//!   first occurrences. The caller replays the workers' values through it in serial order.

use super::{Env, eval};
use crate::context::ExecContext;
use plexus_plan::logical::ArithOp;
use plexus_plan::logical::{AggCall, AggFunction};
use plexus_value::error::{QueryError, Result};
use plexus_value::value::{DistinctValue, Value, order};
use std::collections::HashSet;

pub struct Accumulator {
    seen: Option<HashSet<DistinctValue, ahash::RandomState>>,
    count: i64,
    sum: Value,
    best: Option<Value>,
    values: Vec<Value>,
    percentile: Option<Value>,
}

impl Accumulator {
    pub fn new(call: &AggCall) -> Self {
        Accumulator {
            seen: call.distinct.then(HashSet::default),
            count: 0,
            sum: Value::Int(0),
            best: None,
            values: Vec::new(),
            percentile: None,
        }
    }

    /// The state of `call` (not DISTINCT) after `count` values (rows, for `count(*)`), with
    /// the sum `sum` and the best `best` so far — how typed aggregation
    /// (`exec::typed_aggregate`) hands its groups to the row path. `sum: None` is the sum of
    /// no values (the integer 0).
    pub fn from_parts(call: &AggCall, count: i64, sum: Option<Value>, best: Option<Value>) -> Self {
        debug_assert!(!call.distinct, "typed aggregation takes no DISTINCT call");
        Accumulator {
            count,
            sum: sum.unwrap_or(Value::Int(0)),
            best,
            ..Accumulator::new(call)
        }
    }

    pub fn update(&mut self, call: &AggCall, env: &mut Env, ctx: &mut ExecContext) -> Result<()> {
        let Some(arg) = &call.arg else {
            self.count += 1;
            return Ok(());
        };
        let value = eval(arg, env, ctx)?;
        if value.is_null() {
            return Ok(());
        }
        if let Some(extra) = &call.extra
            && self.percentile.is_none()
        {
            self.percentile = Some(eval(extra, env, ctx)?);
        }
        self.add(call, value)
    }

    /// Whether `value` is the first of its equivalence class this accumulator meets: always
    /// true without DISTINCT; with it, records `value` as seen.
    pub fn first_occurrence(&mut self, value: &Value) -> bool {
        match &mut self.seen {
            Some(seen) => seen.insert(DistinctValue(value.clone())),
            None => true,
        }
    }

    /// Feeds one evaluated, non-null argument value (see PARTIAL STATES; `percentileCont` /
    /// `percentileDisc` take their second argument in [`Accumulator::update`] only).
    pub fn add(&mut self, call: &AggCall, value: Value) -> Result<()> {
        debug_assert!(!value.is_null(), "aggregates skip nulls before add");
        if !self.first_occurrence(&value) {
            return Ok(());
        }
        self.count += 1;
        match call.function {
            AggFunction::Count => {}
            AggFunction::Sum | AggFunction::Avg => {
                if !matches!(value, Value::Int(_) | Value::Float(_) | Value::Duration(_)) {
                    return Err(QueryError::type_error(format!(
                        "{}() expects numbers, not {}",
                        call.function.name(),
                        value.type_name()
                    )));
                }
                if call.function == AggFunction::Avg && matches!(value, Value::Duration(_)) {
                    self.values.push(value.clone());
                }
                // Integers or floats on both sides: the sum `arith` gives, without its
                // dispatch (a partial aggregation's caller adds every replayed value here).
                match (&mut self.sum, &value) {
                    (Value::Int(sum), Value::Int(v)) => {
                        if let Some(total) = sum.checked_add(*v) {
                            *sum = total;
                            return Ok(());
                        }
                    }
                    (Value::Float(sum), Value::Float(v)) => {
                        *sum += *v;
                        return Ok(());
                    }
                    _ => {}
                }
                if matches!(value, Value::Duration(_))
                    && matches!(self.sum, Value::Int(0))
                    && self.count == 1
                {
                    self.sum = value;
                } else {
                    self.sum = super::arith(ArithOp::Add, &self.sum, &value)?;
                }
            }
            AggFunction::Min | AggFunction::Max => self.offer_best(call, value),
            AggFunction::Collect => self.values.push(value),
            AggFunction::StDev
            | AggFunction::StDevP
            | AggFunction::PercentileCont
            | AggFunction::PercentileDisc => {
                if value.as_f64().is_none() {
                    return Err(QueryError::type_error(format!(
                        "{}() expects numbers, not {}",
                        call.function.name(),
                        value.type_name()
                    )));
                }
                self.values.push(value);
            }
        }
        Ok(())
    }

    /// `min`/`max`: `value` replaces the best so far only if strictly better, so among
    /// equally ordered values the first one met stays.
    fn offer_best(&mut self, call: &AggCall, value: Value) {
        let replace = match &self.best {
            None => true,
            Some(best) => {
                let o = order(&value, best);
                if call.function == AggFunction::Min {
                    o == std::cmp::Ordering::Less
                } else {
                    o == std::cmp::Ordering::Greater
                }
            }
        };
        if replace {
            self.best = Some(value);
        }
    }

    /// Folds `later`, the state of the same call over rows that come after all of this
    /// one's, into this one (see PARTIAL STATES): the state the rows of both would give.
    /// Only for calls of [`plexus_plan::logical::PartialForm::Merged`] form.
    pub fn merge(&mut self, call: &AggCall, later: Accumulator) {
        debug_assert_eq!(
            plexus_plan::logical::partial_form(call),
            Some(plexus_plan::logical::PartialForm::Merged),
            "{} does not merge",
            call.function.name()
        );
        // Without DISTINCT, a state over rows A then B is count(A) + count(B), the earliest
        // strict best of A then B, and A's values then B's (`order` is a total preorder, so
        // B's best beats A's exactly when some value of B would have replaced it serially).
        self.count += later.count;
        if let Some(best) = later.best {
            self.offer_best(call, best);
        }
        self.values.extend(later.values);
    }

    pub fn finish(self, call: &AggCall) -> Result<Value> {
        Ok(match call.function {
            AggFunction::Count => Value::Int(self.count),
            AggFunction::Sum => self.sum,
            AggFunction::Avg => {
                if self.count == 0 {
                    Value::Null
                } else if let Value::Duration(d) = &self.sum {
                    Value::Duration(d.divide(self.count as f64))
                } else {
                    Value::Float(self.sum.as_f64().unwrap_or(0.0) / self.count as f64)
                }
            }
            AggFunction::Min | AggFunction::Max => self.best.unwrap_or(Value::Null),
            AggFunction::Collect => Value::list(self.values),
            AggFunction::StDev | AggFunction::StDevP => {
                let n = self.values.len();
                let sample = call.function == AggFunction::StDev;
                // Neo4j 5.26: no values give null, one value 0.0 (checked against Neo4j by
                // the differential harness, bench/difftest).
                if n == 0 {
                    return Ok(Value::Null);
                }
                if sample && n == 1 {
                    return Ok(Value::Float(0.0));
                }
                // Welford's running mean and sum of squared deviations, as Neo4j computes
                // them: equal values give exactly 0.0 (a mean of sums would not).
                let (mut mean, mut squares) = (0.0f64, 0.0f64);
                for (k, x) in self.values.iter().filter_map(Value::as_f64).enumerate() {
                    let delta = x - mean;
                    mean += delta / (k + 1) as f64;
                    squares += delta * (x - mean);
                }
                let divisor = if sample { n - 1 } else { n } as f64;
                Value::Float((squares / divisor).sqrt())
            }
            AggFunction::PercentileCont | AggFunction::PercentileDisc => {
                let p = match &self.percentile {
                    Some(p) => p.as_f64().ok_or_else(|| {
                        QueryError::argument("the percentile must be a number between 0 and 1")
                    })?,
                    None => return Ok(Value::Null),
                };
                if !(0.0..=1.0).contains(&p) {
                    return Err(QueryError::runtime(
                        plexus_value::error::ErrorClass::ArgumentError,
                        "NumberOutOfRange",
                        "the percentile must be between 0 and 1",
                    ));
                }
                let mut xs = self.values;
                if xs.is_empty() {
                    return Ok(Value::Null);
                }
                xs.sort_by(order);
                let n = xs.len();
                if call.function == AggFunction::PercentileDisc {
                    let index = ((p * n as f64).ceil() as usize)
                        .saturating_sub(1)
                        .min(n - 1);
                    xs[index].clone()
                } else {
                    let position = p * (n - 1) as f64;
                    let lower = position.floor() as usize;
                    let upper = position.ceil() as usize;
                    if lower == upper {
                        // On a value: that value as it is (an integer stays one), as Neo4j.
                        return Ok(xs[lower].clone());
                    }
                    let a = xs[lower].as_f64().unwrap_or(0.0);
                    let b = xs[upper].as_f64().unwrap_or(0.0);
                    Value::Float(a + (b - a) * (position - lower as f64))
                }
            }
        })
    }
}
