//! EXPLAIN / PROFILE rendering: a plan as an indented tree, one operator per line.
//!
//! Operators are numbered in pre-order (an operator before its children, children in
//! [`LogicalPlan::children`] order); the executor numbers its physical operators the same
//! way, which is how PROFILE attaches rows and time to the lines of this tree. Slots print as
//! `s<N>`; the Results line names the columns. Scans and expands of a pattern planned with
//! statistics end in `est_rows=N`, the cost model's estimate of the rows they produce per
//! input row of their pattern part (see `cost`): the numbers the start of the part was chosen
//! by, next to PROFILE's actual `rows=`. A `HashJoin`'s children are its input (the probe
//! side) and then its build side; its `est_rows` is the build side's estimated rows, the size
//! of its hash table. An OPTIONAL MATCH's join prints as `LeftOuterHashJoin`, with the
//! predicate its partners must pass (`residual`) and the slots nulled on an input row
//! without one (`nulls`).

use super::{ArithOp, BExpr, PathElement, StringOp, Subquery};
use super::{
    BoundNode, BoundRel, CreatePattern, ExpandSpec, IdPredicate, IdSeek, KeySeek, LogicalPlan,
    MatchForm, OuterJoin, PatternMatch, Properties, RangeBound, RelSeekSpec, SeekPredicate, SetOp,
    TopCount, WriteLabels,
};
use plexus_types::Direction;
use std::fmt::Write;

impl LogicalPlan {
    /// One line describing this operator (without its children).
    pub fn describe(&self) -> String {
        match self {
            LogicalPlan::Argument => "Argument".into(),
            LogicalPlan::NodeScan {
                slot,
                label,
                label_union,
                seek,
                id_seek,
                est_rows,
                ..
            } => {
                let scan = match (label, seek) {
                    _ if let Some(id_seek) = id_seek => {
                        let labels = label.as_ref().map(|l| format!(":{l}")).unwrap_or_default();
                        format!("NodeByIdSeek s{slot}{labels}({})", id_seek_text(id_seek))
                    }
                    (Some(l), Some(seek)) => {
                        let (operator, fallback) = match &seek.index {
                            Some(index) => ("NodeIndexSeek", format!("index {index}")),
                            None => ("NodeByKeySeek", "primary key".to_string()),
                        };
                        format!(
                            "{operator} s{slot}:{l}({}) [{fallback}, else label scan]",
                            seek_text(seek)
                        )
                    }
                    (Some(l), None) => format!("NodeByLabelScan s{slot}:{l}"),
                    (None, _) if !label_union.is_empty() => {
                        format!("UnionNodeByLabelsScan s{slot}:{}", label_union.join("|"))
                    }
                    (None, _) => format!("AllNodesScan s{slot}"),
                };
                scan + &estimate_text(*est_rows)
            }
            LogicalPlan::RelationshipIndexSeek { spec, est_rows, .. } => {
                rel_seek_text(spec) + &estimate_text(*est_rows)
            }
            LogicalPlan::RelationshipCount {
                slot, rel_types, ..
            } => {
                let types = match rel_types.is_empty() {
                    true => String::new(),
                    false => format!(":{}", rel_types.join("|")),
                };
                format!("RelationshipCountFromRows s{slot} = count(()-[{types}]->())")
            }
            LogicalPlan::Expand { spec, est_rows, .. } => {
                expand_text("Expand", spec, "") + &estimate_text(*est_rows)
            }
            LogicalPlan::VarExpand {
                spec,
                length,
                est_rows,
                ..
            } => {
                let range = format!(
                    "*{}..{}",
                    length.min,
                    length.max.map(|m| m.to_string()).unwrap_or_default()
                );
                let kind = match length.shortest {
                    Some(plexus_cypher::ast::ShortestPath::Single) => "ShortestPath",
                    Some(plexus_cypher::ast::ShortestPath::All) => "AllShortestPaths",
                    None if length.ends_only => "VarLengthExpand(BFS)",
                    None => "VarLengthExpand",
                };
                let mut search = Vec::new();
                if let Some(hop) = &length.hop_filter {
                    search.push(format!(
                        "hop (s{})-[s{}]-(s{}): {}",
                        hop.from,
                        hop.rel,
                        hop.to,
                        expr_text(&hop.predicate)
                    ));
                }
                if length.shortest.is_some() {
                    let each = |(slot, e): &(usize, BExpr)| format!("s{slot}: {}", expr_text(e));
                    search.extend(length.rel_filter.iter().map(|f| format!("rel {}", each(f))));
                    search.extend(
                        length
                            .node_filter
                            .iter()
                            .map(|f| format!("node {}", each(f))),
                    );
                    if let Some(filter) = &length.path_filter {
                        search.push(format!("path {}", expr_text(&filter.predicate)));
                    }
                }
                let search = if search.is_empty() {
                    String::new()
                } else {
                    format!(" where [{}]", search.join("; "))
                };
                expand_text(kind, spec, &range) + &search + &estimate_text(*est_rows)
            }
            LogicalPlan::Filter { predicate, .. } => format!("Filter {}", expr_text(predicate)),
            LogicalPlan::Where { predicate, .. } => format!("Where {}", expr_text(predicate)),
            LogicalPlan::Match { pattern, .. } => match_text(pattern),
            LogicalPlan::Project { items, .. } => format!(
                "Project {}",
                items
                    .iter()
                    .map(|(s, e)| format!("s{s} = {}", expr_text(e)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            LogicalPlan::Aggregate {
                keys, aggregates, ..
            } => {
                let mut parts: Vec<String> = keys
                    .iter()
                    .map(|(s, e)| format!("s{s} = {}", expr_text(e)))
                    .collect();
                for (s, call) in aggregates {
                    let arg = call.arg.as_ref().map_or("*".to_string(), expr_text);
                    let distinct = if call.distinct { "DISTINCT " } else { "" };
                    parts.push(format!("s{s} = {}({distinct}{arg})", call.function.name()));
                }
                format!("Aggregate {}", parts.join(", "))
            }
            LogicalPlan::Distinct { slots: s, .. } => format!("Distinct {}", slots(s)),
            LogicalPlan::Sort { keys, top, .. } => format!(
                "Sort {}{}",
                keys.iter()
                    .map(|k| format!(
                        "{}{}",
                        expr_text(&k.expr),
                        if k.descending { " DESC" } else { "" }
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
                match top {
                    Some(TopCount {
                        skip: Some(skip),
                        limit,
                    }) => format!(" (top {} + {})", expr_text(skip), expr_text(limit)),
                    Some(TopCount { skip: None, limit }) => format!(" (top {})", expr_text(limit)),
                    None => String::new(),
                }
            ),
            LogicalPlan::Skip { count, .. } => format!("Skip {}", expr_text(count)),
            LogicalPlan::Limit { count, .. } => format!("Limit {}", expr_text(count)),
            LogicalPlan::Unwind { expr, slot, .. } => {
                format!("Unwind {} AS s{slot}", expr_text(expr))
            }
            LogicalPlan::LoadCsv { source, spec, .. } => format!(
                "LoadCsv {}{} AS s{}{} (linenumber s{}, file s{})",
                if spec.with_headers {
                    "WITH HEADERS "
                } else {
                    ""
                },
                expr_text(source),
                spec.slot,
                match spec.options.field_terminator {
                    b',' => String::new(),
                    other => format!(" FIELDTERMINATOR {:?}", other as char),
                },
                spec.line_slot,
                spec.file_slot
            ),
            LogicalPlan::Optional { nulls, .. } => format!("Optional (nulls {})", slots(nulls)),
            LogicalPlan::Apply { unit, inner, .. } => {
                match (*unit, *unit && super::set_at_a_time(inner)) {
                    (true, true) => "Apply (unit, set at a time)".into(),
                    (true, false) => "Apply (unit)".into(),
                    (false, _) => "Apply".into(),
                }
            }
            LogicalPlan::CallInTransactions { spec, inner, .. } => {
                let batch = match &spec.batch {
                    super::BatchRows::Known(rows) => rows.to_string(),
                    super::BatchRows::Evaluate { expr, .. } => expr_text(expr),
                };
                let status = spec
                    .status_slot
                    .map(|slot| format!(" REPORT STATUS AS s{slot}"))
                    .unwrap_or_default();
                format!(
                    "CallInTransactions{} OF {batch} ROWS ON ERROR {}{status}",
                    match (spec.unit, spec.unit && super::set_at_a_time(inner)) {
                        (true, true) => " (unit, set at a time)",
                        (true, false) => " (unit)",
                        (false, _) => "",
                    },
                    spec.on_error.keyword()
                )
            }
            LogicalPlan::HashJoin {
                keys,
                est_rows,
                optional,
                ..
            } => {
                let keys: Vec<String> = keys
                    .iter()
                    .map(|(probe, build)| format!("{} = {}", expr_text(probe), expr_text(build)))
                    .collect();
                let (name, outer) = match optional {
                    None => ("HashJoin", String::new()),
                    Some(outer) => ("LeftOuterHashJoin", outer_text(outer)),
                };
                format!("{name} {}{outer}", keys.join(" AND ")) + &estimate_text(Some(*est_rows))
            }
            LogicalPlan::Union { .. } => "Union".into(),
            LogicalPlan::Create { pattern, .. } => format!("Create {}", pattern_slots(pattern)),
            LogicalPlan::Merge { pattern, .. } => format!("Merge {}", pattern_slots(pattern)),
            LogicalPlan::Set { ops, .. } => format!(
                "Set {}",
                ops.iter().map(set_text).collect::<Vec<_>>().join(", ")
            ),
            LogicalPlan::Delete { exprs, detach, .. } => format!(
                "{}Delete {}",
                if *detach { "Detach" } else { "" },
                exprs.iter().map(expr_text).collect::<Vec<_>>().join(", ")
            ),
            LogicalPlan::Foreach { slot, list, .. } => {
                format!("Foreach s{slot} IN {}", expr_text(list))
            }
            LogicalPlan::ProcedureCall { procedure, .. } => {
                format!("ProcedureCall {}", procedure.name)
            }
            LogicalPlan::Discard { .. } => "EmptyResult".into(),
            LogicalPlan::Parallel {
                input,
                workers,
                morsel_vertices,
                skip_chunks,
            } => format!(
                "Parallel workers={workers} morsel={morsel_vertices}{}{}",
                super::parallel::partial_name(input)
                    .map(|name| format!(" {name}"))
                    .unwrap_or_default(),
                skip_chunks
                    .as_ref()
                    .map(|skip| format!(
                        " skip-chunks(s{}.{}{})",
                        skip.slot,
                        skip.property,
                        if skip.descending { " DESC" } else { "" }
                    ))
                    .unwrap_or_default()
            ),
            LogicalPlan::Results { columns, .. } => format!(
                "Results {}",
                columns
                    .iter()
                    .map(|(n, s)| format!("{n}=s{s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The tree, with `annotate(operator number, operator)` appended to each line; then the plan of
    /// each subquery expression in it (EXISTS, COUNT, pattern predicates and
    /// comprehensions), under its name (`Exists#0`), in the order they appear, without
    /// annotations (they run per outer row, as operators of their own).
    pub fn render(&self, annotate: &dyn Fn(usize, &LogicalPlan) -> String) -> String {
        let mut out = String::new();
        let mut counter = 0;
        self.render_into(&mut out, "", true, &mut counter, annotate);
        let mut subqueries = Vec::new();
        collect_subqueries(self, &mut subqueries);
        while let Some(subquery) = subqueries.pop() {
            let _ = writeln!(
                out,
                "{}",
                expr_text(&BExpr::Subquery(Box::new(subquery.clone())))
            );
            subquery
                .plan
                .render_into(&mut out, "", false, &mut 0, &|_, _| String::new());
            let mut nested = Vec::new();
            collect_subqueries(&subquery.plan, &mut nested);
            subqueries.extend(nested);
        }
        out
    }

    fn render_into(
        &self,
        out: &mut String,
        prefix: &str,
        top: bool,
        counter: &mut usize,
        annotate: &dyn Fn(usize, &LogicalPlan) -> String,
    ) {
        let id = *counter;
        *counter += 1;
        let branch = if top { "" } else { "└ " };
        let _ = writeln!(
            out,
            "{prefix}{branch}{}{}",
            self.describe(),
            annotate(id, self)
        );
        let child_prefix = if top {
            String::new()
        } else {
            format!("{prefix}  ")
        };
        for child in self.children() {
            child.render_into(out, &child_prefix, false, counter, annotate);
        }
    }
}

/// The subquery expressions of `plan`'s operators (not of the subqueries' own plans), in
/// reverse pre-order (a stack: the first pops first).
fn collect_subqueries<'a>(plan: &'a LogicalPlan, out: &mut Vec<&'a Subquery>) {
    let mut found = Vec::new();
    let mut pending: Vec<&LogicalPlan> = vec![plan];
    while let Some(plan) = pending.pop() {
        let mut exprs = plan.expressions();
        exprs.reverse();
        while let Some(e) = exprs.pop() {
            if let BExpr::Subquery(subquery) = e {
                found.push(&**subquery);
            }
            let mut children = Vec::new();
            super::visit_children(e, &mut |child| children.push(child));
            exprs.extend(children.into_iter().rev());
        }
        pending.extend(plan.children().into_iter().rev());
    }
    out.extend(found.into_iter().rev());
}

/// ` est_rows=N`: the cost model's estimate (see `cost`), if it ran; whole numbers from 10
/// up, else two decimals without trailing zeros (`0.05`, `1`, `2.5`).
fn estimate_text(est_rows: Option<f64>) -> String {
    let Some(rows) = est_rows else {
        return String::new();
    };
    let text = if rows >= 10.0 {
        format!("{rows:.0}")
    } else {
        let fixed = format!("{rows:.2}");
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    format!(" est_rows={text}")
}

/// A seek's predicate on its key: `age = 3`, `age IN $ages`, `age >= 10 AND age < 20`,
/// `name STARTS WITH p`.
fn seek_text(seek: &KeySeek) -> String {
    let key = &seek.key;
    match &seek.predicate {
        SeekPredicate::Equal(value) => format!("{key} = {}", expr_text(value)),
        SeekPredicate::In(list) => format!("{key} IN {}", expr_text(list)),
        SeekPredicate::Prefix(prefix) => format!("{key} STARTS WITH {}", expr_text(prefix)),
        SeekPredicate::Range { lower, upper } => {
            let side = |bound: &RangeBound, strict: &str, inclusive: &str| {
                let op = if bound.inclusive { inclusive } else { strict };
                format!("{key} {op} {}", expr_text(&bound.value))
            };
            let lower = lower.as_ref().map(|b| side(b, ">", ">="));
            let upper = upper.as_ref().map(|b| side(b, "<", "<="));
            lower
                .into_iter()
                .chain(upper)
                .collect::<Vec<_>>()
                .join(" AND ")
        }
    }
}

/// An id seek's predicate: `id = $id`, `elementId IN $ids`.
fn id_seek_text(seek: &IdSeek) -> String {
    let function = seek.function.name();
    match &seek.predicate {
        IdPredicate::Equal(value) => format!("{function} = {}", expr_text(value)),
        IdPredicate::In(list) => format!("{function} IN {}", expr_text(list)),
    }
}

/// `Expand[Into] (s0)-[s1:T*1..2]->(s2)`: the operator `kind`, then the pattern it expands.
fn expand_text(kind: &str, spec: &ExpandSpec, range: &str) -> String {
    let ExpandSpec {
        from,
        rel,
        to,
        types,
        direction,
        to_bound,
        ..
    } = spec;
    let into = if *to_bound { "Into" } else { "" };
    let types = types_text(types);
    let (l, r) = arrow(*direction);
    format!("{kind}{into} (s{from}){l}[s{rel}{types}{range}]{r}(s{to})")
}

/// `Match (s0:Person {name: $n})-[s1:KNOWS]->(s2), (s3) where …`: a bound pattern (see
/// `pattern`), its parts as written with slots for variables; `OptionalMatch … (nulls …)`
/// for an OPTIONAL MATCH. Label expressions, per-hop conditions and dynamic relationship
/// types print as the filters they become, after `where`.
fn match_text(pattern: &PatternMatch) -> String {
    let props = |props: &Properties| {
        if props.is_empty() {
            return String::new();
        }
        let entries: Vec<String> = (props.iter())
            .map(|(k, v)| format!("{k}: {}", expr_text(v)))
            .collect();
        format!(" {{{}}}", entries.join(", "))
    };
    let node = |n: &BoundNode| {
        let labels: String = n.labels.iter().map(|l| format!(":{l}")).collect();
        format!("(s{}{labels}{})", n.slot, props(&n.props))
    };
    let rel = |r: &BoundRel| {
        let types = types_text(&r.types);
        let range = r.length.map_or(String::new(), |l| {
            let bound = |b: Option<u64>| b.map_or(String::new(), |b| b.to_string());
            format!("*{}..{}", bound(l.min), bound(l.max))
        });
        let (left, right) = arrow(r.direction);
        format!(
            "{left}[s{}{types}{range}{}]{right}",
            r.slot,
            props(&r.props)
        )
    };
    let mut filters: Vec<String> = Vec::new();
    let parts: Vec<String> = (pattern.parts.iter())
        .map(|part| {
            let mut text = part.path.map_or(String::new(), |p| format!("s{p} = "));
            if part.shortest.is_some() {
                text.push_str("shortest ");
            }
            text.push_str(&node(&part.nodes[0]));
            for (r, n) in part.rels.iter().zip(&part.nodes[1..]) {
                text.push_str(&rel(r));
                text.push_str(&node(n));
            }
            filters.extend(
                part.nodes
                    .iter()
                    .filter_map(|n| n.label_test.as_ref().map(expr_text)),
            );
            filters.extend((part.rels.iter()).filter_map(|r| {
                let hop = r.group_hop.as_ref()?;
                Some(format!("hop s{}: {}", hop.rel, expr_text(&hop.predicate)))
            }));
            filters.extend((part.rels.iter()).filter_map(|r| {
                let dynamic = r.dynamic_type.as_ref()?;
                Some(expr_text(&dynamic.test(BExpr::Slot(r.slot))))
            }));
            filters.extend(part.search_predicate.as_ref().map(expr_text));
            text
        })
        .collect();
    filters.extend(pattern.predicate.as_ref().map(expr_text));
    let (kind, nulls) = match &pattern.form {
        MatchForm::Match { .. } => ("Match", String::new()),
        MatchForm::Optional { nulls } => ("OptionalMatch", format!(" (nulls {})", slots(nulls))),
    };
    let filters = if filters.is_empty() {
        String::new()
    } else {
        format!(" where {}", filters.join(" AND "))
    };
    format!("{kind} {}{filters}{nulls}", parts.join(", "))
}

/// `:A|B` for relationship types `[A, B]`; nothing for none.
fn types_text(types: &[std::sync::Arc<str>]) -> String {
    if types.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = types.iter().map(|t| &**t).collect();
    format!(":{}", names.join("|"))
}

/// The two halves of a relationship's arrow in `direction`: `-` `->`, `<-` `-`, `-` `-`.
fn arrow(direction: Direction) -> (&'static str, &'static str) {
    match direction {
        Direction::Out => ("-", "->"),
        Direction::In => ("<-", "-"),
        Direction::Both => ("-", "-"),
    }
}

/// `RelationshipIndexSeek (s0)-[s1:KNOWS(since = 3)]->(s2) [index knows_since, else type
/// scan]`: the pattern it binds, with the seek's predicate on the relationship.
fn rel_seek_text(spec: &RelSeekSpec) -> String {
    let RelSeekSpec {
        left,
        rel,
        right,
        rel_type,
        direction,
        seek,
        ..
    } = spec;
    let (l, r) = arrow(*direction);
    let index = seek.index.as_deref().unwrap_or("?");
    format!(
        "RelationshipIndexSeek (s{left}){l}[s{rel}:{rel_type}({})]{r}(s{right}) \
         [index {index}, else type scan]",
        seek_text(seek)
    )
}

fn set_text(op: &SetOp) -> String {
    match op {
        SetOp::Property { entity, key, value } => {
            format!("{}.{key} = {}", expr_text(entity), expr_text(value))
        }
        SetOp::Properties {
            entity,
            value,
            replace,
        } => {
            format!(
                "{} {} {}",
                expr_text(entity),
                if *replace { "=" } else { "+=" },
                expr_text(value)
            )
        }
        SetOp::Labels {
            entity,
            labels,
            add,
        } => format!(
            "{}{}:{}",
            if *add { "" } else { "-" },
            expr_text(entity),
            write_labels_text(labels)
        ),
    }
}

/// `A:B:$(s3)`: the labels of a write, the dynamic ones by their expressions.
fn write_labels_text(labels: &WriteLabels) -> String {
    let fixed = labels.fixed.iter().map(|l| l.to_string());
    let dynamic = (labels.dynamic.iter()).map(|e| format!("$({})", expr_text(e)));
    fixed.chain(dynamic).collect::<Vec<_>>().join(":")
}

/// A compact rendering of a bound expression for plan output.
pub fn expr_text(e: &BExpr) -> String {
    let list = |items: &[BExpr]| items.iter().map(expr_text).collect::<Vec<_>>().join(", ");
    match e {
        BExpr::Const(v) => plexus_value::format::literal_text(v),
        BExpr::Param(p) => format!("${p}"),
        BExpr::Slot(s) => format!("s{s}"),
        BExpr::Property(b, k) => format!("{}.{k}", expr_text(b)),
        BExpr::Index(b, i) => format!("{}[{}]", expr_text(b), expr_text(i)),
        BExpr::Slice(b, f, t) => format!(
            "{}[{}..{}]",
            expr_text(b),
            f.as_deref().map(expr_text).unwrap_or_default(),
            t.as_deref().map(expr_text).unwrap_or_default()
        ),
        BExpr::HasLabels(b, labels) => format!(
            "{}:{}",
            expr_text(b),
            labels
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(":")
        ),
        BExpr::LabelTest(b, test) => format!("{}:{test}", expr_text(b)),
        BExpr::DynamicLabels { entity, names, any } => format!(
            "{}:${}({})",
            expr_text(entity),
            if *any { "any" } else { "all" },
            expr_text(names)
        ),
        BExpr::Not(b) => format!("NOT {}", expr_text(b)),
        BExpr::Negate(b) => format!("-{}", expr_text(b)),
        BExpr::And(a, b) => format!("({} AND {})", expr_text(a), expr_text(b)),
        BExpr::Or(a, b) => format!("({} OR {})", expr_text(a), expr_text(b)),
        BExpr::Xor(a, b) => format!("({} XOR {})", expr_text(a), expr_text(b)),
        BExpr::Arith(op, a, b) => {
            let op = match op {
                ArithOp::Add => "+",
                ArithOp::Subtract => "-",
                ArithOp::Multiply => "*",
                ArithOp::Divide => "/",
                ArithOp::Modulo => "%",
                ArithOp::Power => "^",
            };
            format!("({} {op} {})", expr_text(a), expr_text(b))
        }
        BExpr::StringOp(op, a, b) => {
            let op = match op {
                StringOp::StartsWith => "STARTS WITH",
                StringOp::EndsWith => "ENDS WITH",
                StringOp::Contains => "CONTAINS",
                StringOp::Regex => "=~",
            };
            format!("{} {op} {}", expr_text(a), expr_text(b))
        }
        BExpr::In(a, b) => format!("{} IN {}", expr_text(a), expr_text(b)),
        BExpr::Compare(items, ops) => {
            let mut s = expr_text(&items[0]);
            for (op, item) in ops.iter().zip(&items[1..]) {
                let op = match op {
                    plexus_cypher::ast::ComparisonOp::Eq => "=",
                    plexus_cypher::ast::ComparisonOp::NotEq => "<>",
                    plexus_cypher::ast::ComparisonOp::Lt => "<",
                    plexus_cypher::ast::ComparisonOp::Gt => ">",
                    plexus_cypher::ast::ComparisonOp::Le => "<=",
                    plexus_cypher::ast::ComparisonOp::Ge => ">=",
                };
                let _ = write!(s, " {op} {}", expr_text(item));
            }
            s
        }
        BExpr::IsNull(b, negated) => format!(
            "{} IS {}NULL",
            expr_text(b),
            if *negated { "NOT " } else { "" }
        ),
        BExpr::IsType(b, ty, negated) => format!(
            "{} IS {}:: {ty}",
            expr_text(b),
            if *negated { "NOT " } else { "" }
        ),
        BExpr::List(items) => format!("[{}]", list(items)),
        BExpr::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", expr_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        BExpr::MapProjection(b, _) => format!("{}{{...}}", expr_text(b)),
        BExpr::Call(name, args) => format!("{name}({})", list(args)),
        BExpr::Agg(call) => format!("{}(...)", call.function.name()),
        BExpr::Case { .. } => "CASE ... END".into(),
        BExpr::ListComprehension { slot, list, .. } => {
            format!("[s{slot} IN {} ...]", expr_text(list))
        }
        BExpr::Quantifier {
            quantifier,
            slot,
            list,
            ..
        } => {
            format!("{quantifier:?}(s{slot} IN {} ...)", expr_text(list))
        }
        BExpr::Reduce { list, .. } => format!("reduce(... IN {})", expr_text(list)),
        BExpr::Subquery(sub) => format!("{:?}#{}", sub.kind, sub.id),
        BExpr::Path(elements) => format!(
            "path({})",
            elements
                .iter()
                .map(|e| match e {
                    PathElement::Node(s) | PathElement::Rel(s) => format!("s{s}"),
                    PathElement::Rels(s) => format!("s{s}*"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// ` (residual …) (nulls …)` of a left outer hash join.
fn outer_text(outer: &OuterJoin) -> String {
    let residual = outer.residual.as_ref().map(|residual| {
        let mut conjuncts = Vec::new();
        super::split_conjuncts(residual.clone(), &mut conjuncts);
        let texts: Vec<String> = conjuncts.iter().map(expr_text).collect();
        format!(" (residual {})", texts.join(" AND "))
    });
    let nulls = format!(" (nulls {})", slots(&outer.nulls));
    residual.unwrap_or_default() + &nulls
}

fn slots(s: &[usize]) -> String {
    s.iter()
        .map(|s| format!("s{s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The slots a CREATE or MERGE pattern binds: its new nodes and its relationships.
fn pattern_slots(pattern: &CreatePattern) -> String {
    let nodes: Vec<usize> = pattern
        .nodes
        .iter()
        .filter(|n| !n.bound)
        .map(|n| n.slot)
        .collect();
    let rels: Vec<usize> = pattern.rels.iter().map(|r| r.slot).collect();
    format!("nodes {} rels {}", slots(&nodes), slots(&rels))
}
