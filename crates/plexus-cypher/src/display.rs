//! Pretty printer: `Display` for the AST, producing Cypher that parses back to an equal tree.
//!
//! CANONICAL FORM
//! ==============
//! Keywords upper case, one space between clauses (`{:#}` on a [`Statement`] or [`Query`] puts
//! each top-level clause on its own line instead), `, ` between items, spaces around binary
//! operators, strings in single quotes, `count(*)`, arrows `-->` / `<--` / `--` when a
//! relationship has no details. Names are backquoted when they are not plain identifiers, and
//! variables also when they are reserved words (labels, keys and types may be keywords).
//!
//! ROUND TRIP
//! ==========
//! The invariant is `parse(print(ast)) == ast` for every tree the parser produces (spans
//! ignored). Parentheses are inserted from the shared [`Precedence`] table: a child is wrapped
//! when it binds more loosely than its position requires. Three spellings need extra care:
//!
//! - negative literals: `-(1)` is not the literal `-1`, so a unary minus whose operand is a
//!   number, or itself starts with a sign, wraps the operand: `-(1)`, `-(-x)`; and a negative
//!   literal under a postfix operator is wrapped: `(-1).x`;
//! - a pattern predicate is wrapped in parentheses anywhere but under NOT / AND / OR / XOR, as
//!   a following `-` or `<` would otherwise extend the pattern (the parser only accepts
//!   patterns in those positions, so this guards hand-built trees);
//! - nested label tests: `(n:A):B` keeps its parentheses (`n:A:B` is one test with two labels).
//!
//! Floats print with Rust's shortest round-trip representation (`0.1`, `1e300`), which is valid
//! Cypher. A non-finite float cannot come from the parser and does not round-trip.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::lexer::{is_ident_continue, is_ident_start};
use crate::parser::is_reserved;

/// Writes `items` separated by `separator`.
fn join<T: Display>(f: &mut Formatter<'_>, items: &[T], separator: &str) -> fmt::Result {
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// Writes `name`, backquoted if it is not a plain identifier, or if it is a reserved word and
/// `allow_reserved` is false.
fn write_name(f: &mut Formatter<'_>, name: &str, allow_reserved: bool) -> fmt::Result {
    let mut chars = name.chars();
    let plain = chars.next().is_some_and(is_ident_start)
        && chars.all(is_ident_continue)
        && (allow_reserved || !is_reserved(name));
    if plain {
        f.write_str(name)
    } else {
        write!(f, "`{}`", name.replace('`', "``"))
    }
}

/// A variable or alias: reserved words are backquoted.
impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_name(f, &self.name, false)
    }
}

/// A label, relationship type, property key, map key, YIELD field or procedure name part:
/// positions where the parser accepts any word, so keywords stay bare (`n.end`, `{count: 1}`).
struct Name<'a>(&'a Ident);

impl Display for Name<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_name(f, &self.0.name, true)
    }
}

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.mode {
            QueryMode::Normal => {}
            QueryMode::Explain => f.write_str("EXPLAIN ")?,
            QueryMode::ExplainVerbose => f.write_str("EXPLAIN VERBOSE ")?,
            QueryMode::Profile => f.write_str("PROFILE ")?,
        }
        if let Some(graph) = &self.graph {
            write!(f, "USE {} ", Name(graph))?;
        }
        if f.alternate() {
            write!(f, "{:#}", self.query)
        } else {
            write!(f, "{}", self.query)
        }
    }
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let separator = if f.alternate() { "\n" } else { " " };
        join(f, &self.first.clauses, separator)?;
        for union in &self.unions {
            let keyword = if union.all { "UNION ALL" } else { "UNION" };
            write!(f, "{separator}{keyword}{separator}")?;
            join(f, &union.query.clauses, separator)?;
        }
        Ok(())
    }
}

impl Display for Clause {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ClauseKind::Match(m) => {
                if m.optional {
                    f.write_str("OPTIONAL ")?;
                }
                write!(f, "MATCH {}", m.pattern)?;
                write_where(f, m.predicate.as_ref())
            }
            ClauseKind::Unwind(unwind) => {
                write!(f, "UNWIND {} AS {}", unwind.expr, unwind.variable)
            }
            ClauseKind::LoadCsv(load) => {
                f.write_str("LOAD CSV ")?;
                if load.with_headers {
                    f.write_str("WITH HEADERS ")?;
                }
                write!(f, "FROM {} AS {}", load.source, load.variable)?;
                if let Some(terminator) = &load.field_terminator {
                    f.write_str(" FIELDTERMINATOR ")?;
                    write_string(f, &terminator.value)?;
                }
                Ok(())
            }
            ClauseKind::With(with) => {
                write!(f, "WITH {}", with.projection)?;
                write_where(f, with.predicate.as_ref())
            }
            ClauseKind::Return(ret) => write!(f, "RETURN {}", ret.projection),
            ClauseKind::Create(create) => write!(f, "CREATE {}", create.pattern),
            ClauseKind::Merge(merge) => {
                write!(f, "MERGE {}", merge.pattern)?;
                for action in &merge.actions {
                    let on = match action.on {
                        MergeTrigger::OnCreate => "CREATE",
                        MergeTrigger::OnMatch => "MATCH",
                    };
                    write!(f, " ON {on} SET ")?;
                    join(f, &action.items, ", ")?;
                }
                Ok(())
            }
            ClauseKind::Set(set) => {
                f.write_str("SET ")?;
                join(f, &set.items, ", ")
            }
            ClauseKind::Remove(remove) => {
                f.write_str("REMOVE ")?;
                join(f, &remove.items, ", ")
            }
            ClauseKind::Delete(delete) => {
                f.write_str(if delete.detach {
                    "DETACH DELETE "
                } else {
                    "DELETE "
                })?;
                join(f, &delete.exprs, ", ")
            }
            ClauseKind::Call(call) => write!(f, "CALL {call}"),
            ClauseKind::CallSubquery(call) => {
                write!(f, "CALL ")?;
                imports(f, call.imports.as_ref())?;
                write!(f, "{{ {} }}", call.query)
            }
            ClauseKind::CallInTransactions(call) => {
                write!(f, "CALL ")?;
                imports(f, call.imports.as_ref())?;
                write!(f, "{{ {} }} IN TRANSACTIONS", call.query)?;
                if let Some(size) = &call.batch_size {
                    write!(f, " OF {size} ROWS")?;
                }
                write!(f, " ON ERROR {}", call.on_error.keyword())?;
                if let Some(status) = &call.report_status {
                    write!(f, " REPORT STATUS AS {status}")?;
                }
                Ok(())
            }
            ClauseKind::Foreach(foreach) => {
                write!(f, "FOREACH ({} IN {} | ", foreach.variable, foreach.list)?;
                join(f, &foreach.clauses, " ")?;
                f.write_str(")")
            }
            ClauseKind::Finish => f.write_str("FINISH"),
        }
    }
}

fn write_where(f: &mut Formatter<'_>, predicate: Option<&Expr>) -> fmt::Result {
    match predicate {
        Some(predicate) => write!(f, " WHERE {predicate}"),
        None => Ok(()),
    }
}

impl Display for Projection {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        if self.star {
            f.write_str("*")?;
            if !self.items.is_empty() {
                f.write_str(", ")?;
            }
        }
        join(f, &self.items, ", ")?;
        if !self.order_by.is_empty() {
            f.write_str(" ORDER BY ")?;
            join(f, &self.order_by, ", ")?;
        }
        if let Some(skip) = &self.skip {
            write!(f, " SKIP {skip}")?;
        }
        if let Some(limit) = &self.limit {
            write!(f, " LIMIT {limit}")?;
        }
        Ok(())
    }
}

impl Display for ProjectionItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        match &self.alias {
            Some(alias) => write!(f, " AS {alias}"),
            None => Ok(()),
        }
    }
}

impl Display for SortItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.order {
            SortOrder::Ascending => write!(f, "{}", self.expr),
            SortOrder::Descending => write!(f, "{} DESC", self.expr),
        }
    }
}

impl Display for SetItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            SetItemKind::Property { entity, key, value } => {
                write_operand(f, entity, Precedence::Postfix)?;
                write!(f, ".{} = {value}", Name(key))
            }
            SetItemKind::Replace { variable, value } => write!(f, "{variable} = {value}"),
            SetItemKind::Merge { variable, value } => write!(f, "{variable} += {value}"),
            SetItemKind::Labels {
                variable,
                labels,
                dynamic,
            } => {
                write!(f, "{variable}")?;
                write_labels(f, labels)?;
                dynamic.iter().try_for_each(|d| write!(f, ":{d}"))
            }
        }
    }
}

impl Display for RemoveItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RemoveItemKind::Property { entity, key } => {
                write_operand(f, entity, Precedence::Postfix)?;
                write!(f, ".{}", Name(key))
            }
            RemoveItemKind::Labels {
                variable,
                labels,
                dynamic,
            } => {
                write!(f, "{variable}")?;
                write_labels(f, labels)?;
                dynamic.iter().try_for_each(|d| write!(f, ":{d}"))
            }
        }
    }
}

/// Label-expression precedence levels, loosest first (see `parser::expr`).
const LABEL_OR: u8 = 1;
const LABEL_AND: u8 = 2;
const LABEL_NOT: u8 = 3;

/// Writes `expr`, parenthesised when it binds looser than `min`. A right operand is written
/// one level tighter than its operator, as the parser folds `A|B|C` to the left.
fn write_label_expr(f: &mut Formatter<'_>, expr: &LabelExpr, min: u8) -> fmt::Result {
    let precedence = match expr {
        LabelExpr::Or(..) => LABEL_OR,
        LabelExpr::And(..) => LABEL_AND,
        LabelExpr::Not(_) | LabelExpr::Label(_) | LabelExpr::Any | LabelExpr::Dynamic(_) => {
            LABEL_NOT
        }
    };
    if precedence < min {
        f.write_str("(")?;
    }
    match expr {
        LabelExpr::Label(name) => write!(f, "{}", Name(name))?,
        LabelExpr::Any => f.write_str("%")?,
        LabelExpr::Dynamic(d) => write!(f, "{d}")?,
        LabelExpr::Not(inner) => {
            f.write_str("!")?;
            write_label_expr(f, inner, LABEL_NOT)?;
        }
        LabelExpr::And(a, b) => {
            write_label_expr(f, a, LABEL_AND)?;
            f.write_str("&")?;
            write_label_expr(f, b, LABEL_NOT)?;
        }
        LabelExpr::Or(a, b) => {
            write_label_expr(f, a, LABEL_OR)?;
            f.write_str("|")?;
            write_label_expr(f, b, LABEL_AND)?;
        }
    }
    if precedence < min {
        f.write_str(")")?;
    }
    Ok(())
}

impl Display for DynamicLabels {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let form = if self.any { "$any" } else { "$" };
        write!(f, "{form}({})", self.expr)
    }
}

impl Display for LabelExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_label_expr(f, self, LABEL_OR)
    }
}

fn write_labels(f: &mut Formatter<'_>, labels: &[Ident]) -> fmt::Result {
    for label in labels {
        write!(f, ":{}", Name(label))?;
    }
    Ok(())
}

impl Display for ProcedureCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.procedure)?;
        if let Some(args) = &self.args {
            f.write_str("(")?;
            join(f, args, ", ")?;
            f.write_str(")")?;
        }
        if let Some(yield_clause) = &self.yield_clause {
            f.write_str(" YIELD ")?;
            match &yield_clause.items {
                YieldItems::Star => f.write_str("*")?,
                YieldItems::Fields(items) => join(f, items, ", ")?,
            }
            write_where(f, yield_clause.predicate.as_ref())?;
        }
        Ok(())
    }
}

impl Display for YieldItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Name(&self.field))?;
        match &self.alias {
            Some(alias) => write!(f, " AS {alias}"),
            None => Ok(()),
        }
    }
}

impl Display for QualifiedName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for part in &self.namespace {
            write!(f, "{}.", Name(part))?;
        }
        write!(f, "{}", Name(&self.name))
    }
}

impl Display for Pattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        join(f, &self.parts, ", ")
    }
}

impl Display for PatternPart {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(variable) = &self.variable {
            write!(f, "{variable} = ")?;
        }
        let element = match &self.predicate {
            Some(predicate) => format!("({} WHERE {predicate})", self.element),
            None => self.element.to_string(),
        };
        match (self.shortest, self.selector) {
            (None, _) => write!(f, "{element}"),
            (Some(ShortestPath::Single), false) => write!(f, "shortestPath({element})"),
            (Some(ShortestPath::All), false) => write!(f, "allShortestPaths({element})"),
            (Some(ShortestPath::Single), true) => write!(f, "ANY SHORTEST {element}"),
            (Some(ShortestPath::All), true) => write!(f, "ALL SHORTEST {element}"),
        }
    }
}

impl Display for PatternElement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.start)?;
        for step in &self.chain {
            write!(f, "{}{}", step.relationship, step.node)?;
        }
        Ok(())
    }
}

impl Display for NodePattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        if let Some(variable) = &self.variable {
            write!(f, "{variable}")?;
        }
        match &self.label_expr {
            None => write_labels(f, &self.labels)?,
            Some(rest) => {
                f.write_str(":")?;
                for label in &self.labels {
                    write!(f, "{}&", Name(label))?;
                }
                write_label_expr(f, rest, LABEL_AND)?;
            }
        }
        if let Some(properties) = &self.properties {
            let has_labels = !self.labels.is_empty() || self.label_expr.is_some();
            if self.variable.is_some() || has_labels {
                f.write_str(" ")?;
            }
            write!(f, "{properties}")?;
        }
        f.write_str(")")
    }
}

impl Display for RelationshipPattern {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(group) = &self.group {
            let inner = RelationshipPattern {
                length: None,
                group: None,
                ..self.clone()
            };
            write!(f, "({}{inner}{}", group.from, group.to)?;
            if let Some(predicate) = &group.predicate {
                write!(f, " WHERE {predicate}")?;
            }
            let (min, max) = self
                .length
                .as_ref()
                .map_or((None, None), |l| (l.min, l.max));
            let bound = |b: Option<u64>| b.map(|b| b.to_string()).unwrap_or_default();
            return write!(f, "){{{},{}}}", bound(min), bound(max));
        }
        f.write_str(if self.direction == RelDirection::Incoming {
            "<-"
        } else {
            "-"
        })?;
        let has_types = !self.types.is_empty() || self.dynamic_type.is_some();
        let has_detail = self.variable.is_some()
            || has_types
            || self.length.is_some()
            || self.properties.is_some();
        if has_detail {
            f.write_str("[")?;
            if let Some(variable) = &self.variable {
                write!(f, "{variable}")?;
            }
            for (index, rel_type) in self.types.iter().enumerate() {
                f.write_str(if index == 0 { ":" } else { "|" })?;
                write!(f, "{}", Name(rel_type))?;
            }
            if let Some(dynamic) = &self.dynamic_type {
                write!(f, ":{dynamic}")?;
            }
            if let Some(length) = &self.length {
                write!(f, "{length}")?;
            }
            if let Some(properties) = &self.properties {
                if self.variable.is_some() || has_types || self.length.is_some() {
                    f.write_str(" ")?;
                }
                write!(f, "{properties}")?;
            }
            f.write_str("]")?;
        }
        f.write_str(if self.direction == RelDirection::Outgoing {
            "->"
        } else {
            "-"
        })
    }
}

impl Display for VarLength {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("*")?;
        match (self.min, self.max) {
            (None, None) => Ok(()),
            (Some(min), Some(max)) if min == max => write!(f, "{min}"),
            (min, max) => {
                if let Some(min) = min {
                    write!(f, "{min}")?;
                }
                f.write_str("..")?;
                match max {
                    Some(max) => write!(f, "{max}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Boolean(value) => write!(f, "{value}"),
            Literal::Integer(value) => write!(f, "{value}"),
            Literal::Float(value) => write!(f, "{value:?}"),
            Literal::String(value) => write_string(f, value),
        }
    }
}

/// Writes a single-quoted string literal with escapes.
fn write_string(f: &mut Formatter<'_>, value: &str) -> fmt::Result {
    f.write_char('\'')?;
    for ch in value.chars() {
        match ch {
            '\\' => f.write_str("\\\\")?,
            '\'' => f.write_str("\\'")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            '\u{8}' => f.write_str("\\b")?,
            '\u{c}' => f.write_str("\\f")?,
            ch if ch.is_control() => write!(f, "\\u{:04X}", u32::from(ch))?,
            ch => f.write_char(ch)?,
        }
    }
    f.write_char('\'')
}

/// Writes `expr`, parenthesised if it binds more loosely than `min`.
/// The operand of `:labels`: another label test is parenthesised, or its labels would merge.
fn write_label_base(f: &mut Formatter<'_>, expr: &Expr) -> fmt::Result {
    if matches!(
        expr.kind,
        ExprKind::HasLabels { .. } | ExprKind::LabelTest { .. }
    ) {
        write!(f, "({expr})")
    } else {
        write_operand(f, expr, Precedence::Postfix)
    }
}

fn write_operand(f: &mut Formatter<'_>, expr: &Expr, min: Precedence) -> fmt::Result {
    if expr.precedence() < min {
        write!(f, "({expr})")
    } else {
        write!(f, "{expr}")
    }
}

fn write_optional_where(f: &mut Formatter<'_>, predicate: &Option<Box<Expr>>) -> fmt::Result {
    write_where(f, predicate.as_deref())
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(literal) => write!(f, "{literal}"),
            ExprKind::Parameter(name) => {
                f.write_char('$')?;
                if !name.is_empty() && name.chars().all(is_ident_continue) {
                    f.write_str(name)
                } else {
                    write!(f, "`{}`", name.replace('`', "``"))
                }
            }
            ExprKind::Variable(variable) => write!(f, "{variable}"),
            ExprKind::Property { expr, key } => {
                write_operand(f, expr, Precedence::Postfix)?;
                write!(f, ".{}", Name(key))
            }
            ExprKind::Index { expr, index } => {
                write_operand(f, expr, Precedence::Postfix)?;
                write!(f, "[{index}]")
            }
            ExprKind::Slice { expr, from, to } => {
                write_operand(f, expr, Precedence::Postfix)?;
                f.write_str("[")?;
                if let Some(from) = from {
                    write!(f, "{from}")?;
                }
                f.write_str("..")?;
                if let Some(to) = to {
                    write!(f, "{to}")?;
                }
                f.write_str("]")
            }
            ExprKind::HasLabels { expr, labels } => {
                write_label_base(f, expr)?;
                write_labels(f, labels)
            }
            ExprKind::LabelTest { expr, label_expr } => {
                write_label_base(f, expr)?;
                // A top-level `|` is parenthesised: in a comprehension's `WHERE` a bare one
                // would end the predicate.
                f.write_str(":")?;
                write_label_expr(f, label_expr, LABEL_AND)
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                expr,
            } => {
                f.write_str("NOT ")?;
                write_operand(f, expr, Precedence::Not)
            }
            ExprKind::Unary { op, expr } => {
                f.write_str(if *op == UnaryOp::Negate { "-" } else { "+" })?;
                let starts_with_sign_or_number = matches!(
                    expr.kind,
                    ExprKind::Literal(Literal::Integer(_) | Literal::Float(_))
                        | ExprKind::Unary {
                            op: UnaryOp::Negate | UnaryOp::Plus,
                            ..
                        }
                );
                if starts_with_sign_or_number {
                    write!(f, "({expr})")
                } else {
                    write_operand(f, expr, Precedence::Unary)
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let precedence = op.precedence();
                write_operand(f, lhs, precedence)?;
                write!(f, " {} ", binary_symbol(*op))?;
                write_operand(f, rhs, precedence.tighter())
            }
            ExprKind::Comparison { first, rest } => {
                write_operand(f, first, Precedence::Predicate)?;
                for (op, operand) in rest {
                    write!(f, " {} ", comparison_symbol(*op))?;
                    write_operand(f, operand, Precedence::Predicate)?;
                }
                Ok(())
            }
            ExprKind::IsNull { expr, negated } => {
                write_operand(f, expr, Precedence::Predicate)?;
                f.write_str(if *negated { " IS NOT NULL" } else { " IS NULL" })
            }
            ExprKind::IsType { expr, negated, ty } => {
                write_operand(f, expr, Precedence::Predicate)?;
                let not = if *negated { "NOT " } else { "" };
                write!(f, " IS {not}:: {ty}")
            }
            ExprKind::List(items) => match &items[..] {
                // `[x IN l]` would read back as a list comprehension.
                [
                    item @ Expr {
                        kind:
                            ExprKind::Binary {
                                op: BinaryOp::In,
                                lhs,
                                ..
                            },
                        ..
                    },
                ] if matches!(lhs.kind, ExprKind::Variable(_)) => {
                    write!(f, "[({item})]")
                }
                _ => {
                    f.write_str("[")?;
                    join(f, items, ", ")?;
                    f.write_str("]")
                }
            },
            ExprKind::Map(entries) => {
                f.write_str("{")?;
                for (index, (key, value)) in entries.iter().enumerate() {
                    if index > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {value}", Name(key))?;
                }
                f.write_str("}")
            }
            ExprKind::MapProjection { variable, items } => {
                write!(f, "{variable} {{")?;
                join(f, items, ", ")?;
                f.write_str("}")
            }
            ExprKind::FunctionCall {
                name,
                distinct,
                args,
            } => {
                for part in &name.namespace {
                    write!(f, "{part}.")?;
                }
                write_function_name(f, &name.name.name)?;
                f.write_str(if *distinct { "(DISTINCT " } else { "(" })?;
                join(f, args, ", ")?;
                f.write_str(")")
            }
            ExprKind::CountStar => f.write_str("count(*)"),
            ExprKind::Case {
                operand,
                alternatives,
                default,
            } => {
                f.write_str("CASE")?;
                if let Some(operand) = operand {
                    write!(f, " {operand}")?;
                }
                for alternative in alternatives {
                    write!(f, " WHEN {} THEN {}", alternative.when, alternative.then)?;
                }
                if let Some(default) = default {
                    write!(f, " ELSE {default}")?;
                }
                f.write_str(" END")
            }
            ExprKind::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                write!(f, "[{variable} IN {list}")?;
                write_optional_where(f, predicate)?;
                if let Some(projection) = projection {
                    write!(f, " | {projection}")?;
                }
                f.write_str("]")
            }
            ExprKind::PatternComprehension {
                variable,
                pattern,
                predicate,
                projection,
            } => {
                f.write_str("[")?;
                if let Some(variable) = variable {
                    write!(f, "{variable} = ")?;
                }
                write!(f, "{pattern}")?;
                write_optional_where(f, predicate)?;
                write!(f, " | {projection}]")
            }
            ExprKind::PatternPredicate(pattern) => write!(f, "{pattern}"),
            ExprKind::Exists(body) => write_subquery(f, "EXISTS", body),
            ExprKind::CountSubquery(body) => write_subquery(f, "COUNT", body),
            ExprKind::CollectSubquery(query) => write!(f, "COLLECT {{ {query} }}"),
            ExprKind::Quantifier {
                quantifier,
                variable,
                list,
                predicate,
            } => {
                let name = match quantifier {
                    Quantifier::All => "all",
                    Quantifier::Any => "any",
                    Quantifier::None => "none",
                    Quantifier::Single => "single",
                };
                write!(f, "{name}({variable} IN {list}")?;
                write_optional_where(f, predicate)?;
                f.write_str(")")
            }
            ExprKind::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => {
                write!(
                    f,
                    "reduce({accumulator} = {init}, {variable} IN {list} | {expr})"
                )
            }
        }
    }
}

/// `EXISTS { ... }` or `COUNT { ... }`.
fn write_subquery(f: &mut Formatter<'_>, keyword: &str, body: &SubqueryBody) -> fmt::Result {
    match body {
        SubqueryBody::Pattern { pattern, predicate } => {
            write!(f, "{keyword} {{ {pattern}")?;
            write_where(f, predicate.as_ref())?;
            f.write_str(" }")
        }
        SubqueryBody::Query(query) => write!(f, "{keyword} {{ {query} }}"),
    }
}

/// Function names are printed bare where the parser reads them back as a call: any word that
/// is not reserved, plus `exists`. Names the parser would take for a special form (`any(x IN
/// l)`, `reduce(acc = 0, ...)`) are backquoted.
fn write_function_name(f: &mut Formatter<'_>, name: &str) -> fmt::Result {
    const SPECIAL_FORMS: &[&str] = &["ANY", "NONE", "SINGLE", "REDUCE"];
    if name.eq_ignore_ascii_case("EXISTS") {
        f.write_str(name)
    } else if SPECIAL_FORMS
        .iter()
        .any(|form| form.eq_ignore_ascii_case(name))
    {
        write!(f, "`{}`", name.replace('`', "``"))
    } else {
        write_name(f, name, false)
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Or => "OR",
        BinaryOp::Xor => "XOR",
        BinaryOp::And => "AND",
        BinaryOp::RegexMatch => "=~",
        BinaryOp::StartsWith => "STARTS WITH",
        BinaryOp::EndsWith => "ENDS WITH",
        BinaryOp::Contains => "CONTAINS",
        BinaryOp::In => "IN",
        BinaryOp::Add => "+",
        BinaryOp::Subtract => "-",
        BinaryOp::Multiply => "*",
        BinaryOp::Divide => "/",
        BinaryOp::Modulo => "%",
        BinaryOp::Power => "^",
    }
}

fn comparison_symbol(op: ComparisonOp) -> &'static str {
    match op {
        ComparisonOp::Eq => "=",
        ComparisonOp::NotEq => "<>",
        ComparisonOp::Lt => "<",
        ComparisonOp::Gt => ">",
        ComparisonOp::Le => "<=",
        ComparisonOp::Ge => ">=",
    }
}

impl Display for MapProjectionItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            MapProjectionItem::Property(key) => write!(f, ".{}", Name(key)),
            MapProjectionItem::AllProperties => f.write_str(".*"),
            MapProjectionItem::Literal(key, value) => write!(f, "{}: {value}", Name(key)),
            MapProjectionItem::Variable(variable) => write!(f, "{variable}"),
        }
    }
}

/// A scoped subquery's variable scope clause and a space (`(x, y) `, `(*) `, `() `), or
/// nothing for the openCypher form.
fn imports(f: &mut fmt::Formatter<'_>, imports: Option<&SubqueryImports>) -> fmt::Result {
    match imports {
        None => Ok(()),
        Some(SubqueryImports::All) => write!(f, "(*) "),
        Some(SubqueryImports::Variables(names)) => {
            write!(f, "(")?;
            join(f, names, ", ")?;
            write!(f, ") ")
        }
    }
}

impl Display for CypherType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TypeKind::Any => f.write_str("ANY")?,
            TypeKind::Nothing => f.write_str("NOTHING")?,
            TypeKind::Null => f.write_str("NULL")?,
            TypeKind::Boolean => f.write_str("BOOLEAN")?,
            TypeKind::String => f.write_str("STRING")?,
            TypeKind::Integer => f.write_str("INTEGER")?,
            TypeKind::Float => f.write_str("FLOAT")?,
            TypeKind::Date => f.write_str("DATE")?,
            TypeKind::LocalTime => f.write_str("LOCAL TIME")?,
            TypeKind::ZonedTime => f.write_str("ZONED TIME")?,
            TypeKind::LocalDateTime => f.write_str("LOCAL DATETIME")?,
            TypeKind::ZonedDateTime => f.write_str("ZONED DATETIME")?,
            TypeKind::Duration => f.write_str("DURATION")?,
            TypeKind::Point => f.write_str("POINT")?,
            TypeKind::Node => f.write_str("NODE")?,
            TypeKind::Relationship => f.write_str("RELATIONSHIP")?,
            TypeKind::Map => f.write_str("MAP")?,
            TypeKind::Path => f.write_str("PATH")?,
            TypeKind::PropertyValue => f.write_str("PROPERTY VALUE")?,
            TypeKind::List(inner) => write!(f, "LIST<{inner}>")?,
            TypeKind::Union(members) => {
                f.write_str("ANY<")?;
                join(f, members, " | ")?;
                f.write_str(">")?;
            }
        }
        if self.not_null {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::parse;

    /// Parses `query`, checks that printing it gives `expected` and that `expected` parses
    /// back to the same tree.
    fn prints_as(query: &str, expected: &str) {
        let statement = parse(query).unwrap_or_else(|error| panic!("{query}: {error}"));
        assert_eq!(statement.to_string(), expected, "{query}");
        assert_eq!(parse(expected).unwrap(), statement, "{expected}");
    }

    #[test]
    fn minimal_parentheses() {
        prints_as(
            "RETURN ((1 + 2)) * 3, 1 + (2 * 3), (1 - 2) - 3, 1 - (2 - 3)",
            "RETURN (1 + 2) * 3, 1 + 2 * 3, 1 - 2 - 3, 1 - (2 - 3)",
        );
        prints_as(
            "RETURN (2 ^ 3) ^ 2, 2 ^ (3 ^ 2)",
            "RETURN 2 ^ 3 ^ 2, 2 ^ (3 ^ 2)",
        );
        prints_as(
            "RETURN (a OR b) AND NOT (c XOR d)",
            "RETURN (a OR b) AND NOT (c XOR d)",
        );
        prints_as(
            "RETURN (a = b) = c, a = (b = c)",
            "RETURN (a = b) = c, a = (b = c)",
        );
        prints_as(
            "RETURN (a IS NULL) IS NULL, (a + b).c",
            "RETURN a IS NULL IS NULL, (a + b).c",
        );
        prints_as(
            "RETURN [(x IN l)], [x IN l, 1], [x IN l]",
            "RETURN [(x IN l)], [x IN l, 1], [x IN l]",
        );
    }

    #[test]
    fn signs_and_negative_literals() {
        prints_as(
            "RETURN -(1), - 1, -(-1), --x, (-1).x, -1.x, (-3) ^ 2, +(-2)",
            "RETURN -(1), -1, -(-1), -(-x), (-1).x, -1.x, -3 ^ 2, +(-2)",
        );
        prints_as(
            "RETURN -9223372036854775808, -0.5, 1 - -2",
            "RETURN -9223372036854775808, -0.5, 1 - -2",
        );
    }

    #[test]
    fn patterns_and_labels() {
        prints_as(
            "MATCH (n) WHERE NOT ((n)-->()) AND ((n)<-[:R]-(:A)) RETURN (n:A):B, n:A:B",
            "MATCH (n) WHERE NOT (n)-->() AND (n)<-[:R]-(:A) RETURN (n:A):B, n:A:B",
        );
        prints_as(
            "MATCH (a {x: 1})<-->(b:B $p)-[r *2]-(c)-[:T *1..]->(d)-[{x: 1}]-() RETURN a",
            "MATCH (a {x: 1})--(b:B $p)-[r*2]-(c)-[:T*1..]->(d)-[{x: 1}]-() RETURN a",
        );
    }

    #[test]
    fn names_and_strings() {
        prints_as(
            "RETURN `a b`, `x``y`, `match`, n.`key with space`, $`odd param`, `1x`, n.end",
            "RETURN `a b`, `x``y`, `match`, n.`key with space`, $`odd param`, `1x`, n.end",
        );
        prints_as(
            r#"RETURN "it's", 'tab\there', '\u0001'"#,
            r"RETURN 'it\'s', 'tab\there', '\u0001'",
        );
        prints_as(
            "RETURN `any`(x IN l), `reduce`(1), exists(n.x), `NOT`(1)",
            "RETURN `any`(x IN l), `reduce`(1), exists(n.x), `NOT`(1)",
        );
    }

    #[test]
    fn alternate_form_breaks_lines() {
        let statement = parse("MATCH (n) RETURN n UNION MATCH (m) RETURN m").unwrap();
        assert_eq!(
            format!("{statement:#}"),
            "MATCH (n)\nRETURN n\nUNION\nMATCH (m)\nRETURN m"
        );
    }
}
