//! The static half of compiling: whether a predicate's operators are all ones compiled code
//! covers, which leaf columns and parameters it reads, and its fingerprint.
//!
//! WHAT
//! ====
//! [`shape`] walks the predicates of a Filter — or of a chain of Filters fused into one loop,
//! bottom first — once (per Filter stage, not per batch) and returns a [`Shape`]: the
//! distinct leaves (`Slot(s)`, `Property(Slot(s), key)`) in first-use order, the distinct
//! parameter names in first-use order, and the fingerprint — the predicates' full debug
//! text, which names parameters but holds none of their values, so one compiled predicate
//! serves every run of a query. Or it returns [`Unsupported`] with the first operator it
//! does not cover; EXPLAIN prints that reason.
//!
//! Types are not known here: a property column may hold integers in one batch and strings
//! in another. The typed half (`codegen`) decides per [`crate::Signature`].
//!
//! Invariants: every `Slot` / `Property` the code generator meets is in `leaves`, every
//! `Param` in `params` (`codegen` looks them up and reports a missing one as unsupported
//! rather than panicking).

use crate::Program;
use plexus_plan::logical::{BExpr, StringOp};
use plexus_value::value::Value;
use std::fmt;
use std::sync::Arc;

/// The most items of a constant list `x IN [...]` is compiled for (one comparison per item
/// per row, unrolled).
pub const MAX_IN_LIST: usize = 16;

/// A leaf column: a slot of the batch, or a property of the entity in a slot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Leaf {
    Slot(usize),
    Property(usize, Arc<str>),
}

/// What compiled code needs to know about a predicate before seeing a batch.
#[derive(Debug, Clone)]
pub struct Shape {
    pub leaves: Vec<Leaf>,
    pub params: Vec<Arc<str>>,
    /// How many predicates (fused filters, bottom first) the code evaluates.
    pub predicates: usize,
    /// The cache key's expression part (see the module docs).
    pub fingerprint: String,
}

/// Why a predicate (or a part of it) is not compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Unsupported {
    pub(crate) fn new(what: impl Into<String>) -> Unsupported {
        Unsupported(what.into())
    }
}

/// The shape of `predicates` (one Filter's, or a fused chain's bottom first), or why their
/// operators are not all compiled.
pub fn shape(predicates: &[BExpr]) -> Result<Shape, Unsupported> {
    if predicates.is_empty() {
        return Err(Unsupported::new("no predicate"));
    }
    predicate_shape(predicates)
}

fn predicate_shape(predicates: &[BExpr]) -> Result<Shape, Unsupported> {
    let mut shape = Shape {
        leaves: Vec::new(),
        params: Vec::new(),
        predicates: predicates.len(),
        // `Debug` of a slice: `[p0, p1]`, unambiguous between one AND and two filters.
        fingerprint: format!("{predicates:?}"),
    };
    predicates.iter().try_for_each(|p| visit(p, &mut shape))?;
    Ok(shape)
}

/// The shape of a [`Program`]: its predicates' (as [`shape`]), then the grouping key's and
/// the calls' arguments' leaves and parameters; the fingerprint names the aggregation too.
/// A program with an aggregation may have no predicate (an Aggregate fed every row).
pub(crate) fn program(program: &Program) -> Result<Shape, Unsupported> {
    if !program.project.is_empty() {
        if !program.predicates.is_empty() || program.aggregate.is_some() {
            return Err(Unsupported::new(
                "a projection with predicates or an aggregation",
            ));
        }
        let mut shape = predicate_shape(&[])?;
        program
            .project
            .iter()
            .try_for_each(|e| visit(e, &mut shape))?;
        shape.fingerprint = format!("project {:?}", program.project);
        return Ok(shape);
    }
    let mut shape = match &program.aggregate {
        Some(_) => predicate_shape(&program.predicates)?,
        None => shape(&program.predicates)?,
    };
    if let Some(aggregate) = &program.aggregate {
        let arguments = aggregate.calls.iter().filter_map(|(_, arg)| arg.as_ref());
        for expr in aggregate.key.iter().chain(arguments) {
            visit(expr, &mut shape)?;
        }
        shape.fingerprint = format!("{:?} => {aggregate:?}", program.predicates);
    }
    Ok(shape)
}

fn visit(expr: &BExpr, shape: &mut Shape) -> Result<(), Unsupported> {
    match expr {
        BExpr::Const(value) => constant(value),
        BExpr::Param(name) => {
            if !shape.params.contains(name) {
                shape.params.push(name.clone());
            }
            Ok(())
        }
        BExpr::Slot(_) | BExpr::Property(..) => {
            let leaf = leaf(expr).ok_or_else(|| Unsupported::new("a property of an expression"))?;
            if !shape.leaves.contains(&leaf) {
                shape.leaves.push(leaf);
            }
            Ok(())
        }
        BExpr::Compare(operands, ops) => {
            if ops.len() != 1 {
                return Err(Unsupported::new("a chained comparison"));
            }
            operands.iter().try_for_each(|e| visit(e, shape))
        }
        BExpr::Arith(_, a, b) | BExpr::And(a, b) | BExpr::Or(a, b) | BExpr::Xor(a, b) => {
            visit(a, shape)?;
            visit(b, shape)
        }
        BExpr::Not(x) | BExpr::IsNull(x, _) | BExpr::Negate(x) => visit(x, shape),
        BExpr::StringOp(StringOp::StartsWith, a, b) => {
            visit(a, shape)?;
            visit(b, shape)
        }
        BExpr::In(item, list) => {
            let count = match &**list {
                BExpr::Const(Value::List(items)) => {
                    items.iter().try_for_each(list_item)?;
                    items.len()
                }
                BExpr::List(items) => {
                    for item in items {
                        let BExpr::Const(value) = item else {
                            return Err(Unsupported::new("IN over a list that is not constant"));
                        };
                        list_item(value)?;
                    }
                    items.len()
                }
                _ => return Err(Unsupported::new("IN over a list that is not constant")),
            };
            if count > MAX_IN_LIST {
                return Err(Unsupported::new(format!(
                    "IN over more than {MAX_IN_LIST} items"
                )));
            }
            visit(item, shape)
        }
        other => Err(Unsupported::new(describe(other))),
    }
}

/// `expr` as a leaf column, if it is one.
pub(crate) fn leaf(expr: &BExpr) -> Option<Leaf> {
    match expr {
        BExpr::Slot(slot) => Some(Leaf::Slot(*slot)),
        BExpr::Property(base, key) => match **base {
            BExpr::Slot(slot) => Some(Leaf::Property(slot, key.clone())),
            _ => None,
        },
        _ => None,
    }
}

fn constant(value: &Value) -> Result<(), Unsupported> {
    match value {
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_) => Ok(()),
        other => Err(Unsupported::new(format!("a {} literal", other.type_name()))),
    }
}

/// An item of a constant IN list: anything but a nested list or map can be decided when
/// compiling (a string or temporal value never equals a number or boolean).
fn list_item(value: &Value) -> Result<(), Unsupported> {
    match value {
        Value::List(_) | Value::Map(_) => Err(Unsupported::new("IN over a list of lists or maps")),
        _ => Ok(()),
    }
}

/// A short name for an operator compiled code does not cover.
fn describe(expr: &BExpr) -> String {
    let name = match expr {
        BExpr::StringOp(StringOp::EndsWith, ..) => "ENDS WITH",
        BExpr::StringOp(StringOp::Contains, ..) => "CONTAINS",
        BExpr::StringOp(..) => "a regular expression",
        BExpr::Call(name, _) => return format!("function {name}()"),
        BExpr::HasLabels(..) | BExpr::LabelTest(..) | BExpr::DynamicLabels { .. } => "a label test",
        BExpr::Case { .. } => "CASE",
        BExpr::Subquery(..) => "a subquery",
        BExpr::IsType(..) => "a type predicate",
        BExpr::Index(..) | BExpr::Slice(..) => "indexing",
        BExpr::List(..) | BExpr::Map(..) | BExpr::MapProjection(..) => "a list or map",
        _ => "a list expression",
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_cypher::ast::ComparisonOp;

    fn prop(slot: usize, key: &str) -> BExpr {
        BExpr::Property(Box::new(BExpr::Slot(slot)), Arc::from(key))
    }

    #[test]
    fn leaves_and_params_are_distinct_in_first_use_order() {
        let x = prop(0, "x");
        let expr = BExpr::And(
            Box::new(BExpr::Compare(
                vec![x.clone(), BExpr::Param(Arc::from("c"))],
                vec![ComparisonOp::Gt],
            )),
            Box::new(BExpr::Compare(
                vec![BExpr::Slot(1), x],
                vec![ComparisonOp::Lt],
            )),
        );
        let shape = shape(std::slice::from_ref(&expr)).unwrap();
        assert_eq!(
            shape.leaves,
            vec![Leaf::Property(0, Arc::from("x")), Leaf::Slot(1)]
        );
        assert_eq!(shape.params, vec![Arc::<str>::from("c")]);
    }

    #[test]
    fn uncovered_operators_are_named() {
        let expr = BExpr::Not(Box::new(BExpr::Call(
            Arc::from("abs"),
            vec![BExpr::Slot(0)],
        )));
        assert_eq!(
            shape(std::slice::from_ref(&expr)).unwrap_err().0,
            "function abs()"
        );
        let chain = BExpr::Compare(
            vec![BExpr::Slot(0), BExpr::Slot(1), BExpr::Slot(2)],
            vec![ComparisonOp::Lt, ComparisonOp::Lt],
        );
        assert_eq!(
            shape(std::slice::from_ref(&chain)).unwrap_err().0,
            "a chained comparison"
        );
        let long = BExpr::In(
            Box::new(BExpr::Slot(0)),
            Box::new(BExpr::Const(Value::list((0..17).map(Value::Int).collect()))),
        );
        assert!(
            shape(std::slice::from_ref(&long))
                .unwrap_err()
                .0
                .contains("16")
        );
    }
}
