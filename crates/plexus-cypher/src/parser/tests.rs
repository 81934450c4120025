//! Unit tests for the parser: tree shapes, spans, error messages and limits. The bulk of the
//! construct coverage (query → canonical print) lives in `tests/golden/*.test`.

use super::*;

fn parse_ok(query: &str) -> Statement {
    parse(query).unwrap_or_else(|error| panic!("`{query}` should parse: {error}"))
}

fn parse_err(query: &str) -> ParseError {
    match parse(query) {
        Ok(statement) => panic!("`{query}` should fail, parsed as `{statement}`"),
        Err(error) => error,
    }
}

/// The expression of the single item of `RETURN <expr>`.
fn expr(text: &str) -> Expr {
    let statement = parse_ok(&format!("RETURN {text}"));
    let [clause] = &statement.query.first.clauses[..] else {
        panic!("one clause expected")
    };
    let ClauseKind::Return(ret) = &clause.kind else {
        panic!("RETURN expected")
    };
    ret.projection.items[0].expr.clone()
}

fn int(value: i64) -> Expr {
    Expr::new(ExprKind::Literal(Literal::Integer(value)), Span::default())
}

fn var(name: &str) -> Expr {
    Expr::new(ExprKind::Variable(ident(name)), Span::default())
}

fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::default(),
    }
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::new(
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        Span::default(),
    )
}

fn compare(first: Expr, rest: Vec<(ComparisonOp, Expr)>) -> Expr {
    Expr::new(
        ExprKind::Comparison {
            first: Box::new(first),
            rest,
        },
        Span::default(),
    )
}

fn unary(op: UnaryOp, operand: Expr) -> Expr {
    Expr::new(
        ExprKind::Unary {
            op,
            expr: Box::new(operand),
        },
        Span::default(),
    )
}

#[test]
fn arithmetic_precedence_and_associativity() {
    use BinaryOp::*;
    assert_eq!(
        expr("1 + 2 * 3"),
        binary(Add, int(1), binary(Multiply, int(2), int(3)))
    );
    assert_eq!(
        expr("1 - 2 - 3"),
        binary(Subtract, binary(Subtract, int(1), int(2)), int(3))
    );
    // `^` is left-associative (TCK Precedence2 [2]) and binds looser than unary minus.
    assert_eq!(
        expr("2 ^ 3 ^ 2"),
        binary(Power, binary(Power, int(2), int(3)), int(2))
    );
    assert_eq!(expr("-3 ^ 2"), binary(Power, int(-3), int(2)));
    assert_eq!(
        expr("-(3 ^ 2)"),
        unary(UnaryOp::Negate, binary(Power, int(3), int(2)))
    );
    assert_eq!(expr("2 ^ -1"), binary(Power, int(2), int(-1)));
    assert_eq!(expr("6 / 2 % 4 * 3"), expr("((6 / 2) % 4) * 3"));
}

#[test]
fn boolean_precedence() {
    use BinaryOp::*;
    let (a, b, c, d) = (var("a"), var("b"), var("c"), var("d"));
    assert_eq!(
        expr("a OR b XOR c AND d"),
        binary(
            Or,
            a.clone(),
            binary(Xor, b.clone(), binary(And, c.clone(), d))
        )
    );
    assert_eq!(
        expr("NOT a = b"),
        unary(
            UnaryOp::Not,
            compare(a.clone(), vec![(ComparisonOp::Eq, b.clone())])
        )
    );
    assert_eq!(
        expr("NOT a AND b"),
        binary(And, unary(UnaryOp::Not, a.clone()), b.clone())
    );
    assert_eq!(expr("a AND NOT NOT b"), expr("a AND (NOT (NOT b))"));
    assert_eq!(
        expr("a = NOT b"),
        compare(a, vec![(ComparisonOp::Eq, unary(UnaryOp::Not, b))])
    );
}

#[test]
fn comparison_chains_and_predicates() {
    let (a, b, c) = (var("a"), var("b"), var("c"));
    assert_eq!(
        expr("a < b <= c"),
        compare(
            a.clone(),
            vec![(ComparisonOp::Lt, b.clone()), (ComparisonOp::Le, c.clone())]
        )
    );
    assert_eq!(
        expr("(a < b) <= c"),
        compare(
            compare(a.clone(), vec![(ComparisonOp::Lt, b.clone())]),
            vec![(ComparisonOp::Le, c)]
        )
    );
    // Predicates bind tighter than comparisons, and chain left to right among themselves.
    assert_eq!(expr("a IN b = true"), expr("(a IN b) = true"));
    assert_eq!(
        expr("x IS NULL = y IS NOT NULL"),
        expr("(x IS NULL) = (y IS NOT NULL)")
    );
    assert_eq!(
        expr("a STARTS WITH b IS NULL"),
        expr("(a STARTS WITH b) IS NULL")
    );
    assert_eq!(expr("a + b IN c"), expr("(a + b) IN c"));
    assert_eq!(expr("a =~ 'x.*' AND b"), expr("(a =~ 'x.*') AND b"));
    assert!(matches!(
        expr("a ENDS WITH b").kind,
        ExprKind::Binary {
            op: BinaryOp::EndsWith,
            ..
        }
    ));
}

#[test]
fn postfix_operators() {
    assert_eq!(expr("a.b.c[0][1..2]:L"), expr("((((a.b).c)[0])[1..2]):L"));
    assert!(
        matches!(expr("n:A:B").kind, ExprKind::HasLabels { ref labels, .. } if labels.len() == 2)
    );
    assert!(matches!(
        expr("l[..2]").kind,
        ExprKind::Slice {
            from: None,
            to: Some(_),
            ..
        }
    ));
    assert!(matches!(
        expr("l[1..]").kind,
        ExprKind::Slice {
            from: Some(_),
            to: None,
            ..
        }
    ));
    // A unary minus before a number with a postfix operator is not folded.
    assert_eq!(
        expr("-1.x"),
        unary(
            UnaryOp::Negate,
            Expr::new(
                ExprKind::Property {
                    expr: Box::new(int(1)),
                    key: ident("x")
                },
                Span::default()
            )
        )
    );
}

#[test]
fn integer_limits() {
    assert_eq!(expr("-9223372036854775808"), int(i64::MIN));
    assert_eq!(expr("9223372036854775807"), int(i64::MAX));
    assert_eq!(expr("-0x8000000000000000"), int(i64::MIN));
    assert_eq!(expr("0o17"), int(15));
    for query in [
        "RETURN 9223372036854775808",
        "RETURN -9223372036854775809",
        "RETURN 0x8000000000000000",
        "RETURN -(9223372036854775808)",
        "RETURN 99999999999999999999999",
    ] {
        assert_eq!(parse_err(query).tck_code(), "IntegerOverflow", "{query}");
    }
    assert_eq!(
        parse_err("RETURN -9223372036854775809").to_string(),
        "line 1, column 8: integer literal '-9223372036854775809' does not fit in 64 bits"
    );
}

#[test]
fn list_and_pattern_disambiguation() {
    assert!(matches!(expr("[(1), 2]").kind, ExprKind::List(ref items) if items.len() == 2));
    assert!(matches!(
        expr("[x IN l]").kind,
        ExprKind::ListComprehension { .. }
    ));
    assert!(matches!(
        expr("[(a)-->(b) | b]").kind,
        ExprKind::PatternComprehension { .. }
    ));
    assert!(matches!(
        expr("[p = (a)-[:R]->(:B {x: [1]}) WHERE a.x | p]").kind,
        ExprKind::PatternComprehension {
            variable: Some(_),
            predicate: Some(_),
            ..
        }
    ));
    // `(a)` followed by `< -` is a comparison, not an incoming relationship.
    assert!(matches!(expr("(a) < -1").kind, ExprKind::Comparison { .. }));
    assert!(matches!(
        expr("(a) - 1").kind,
        ExprKind::Binary {
            op: BinaryOp::Subtract,
            ..
        }
    ));
    let statement = parse_ok("MATCH (a) WHERE NOT (a)<-[:R]-(:B) AND (a)--() RETURN a");
    let ClauseKind::Match(m) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    let Some(Expr {
        kind: ExprKind::Binary { lhs, rhs, .. },
        ..
    }) = &m.predicate
    else {
        panic!()
    };
    assert!(matches!(&lhs.kind, ExprKind::Unary { expr, .. }
        if matches!(expr.kind, ExprKind::PatternPredicate(_))));
    assert!(matches!(rhs.kind, ExprKind::PatternPredicate(_)));
}

#[test]
fn patterns_only_as_predicates() {
    parse_ok("MATCH (a) RETURN exists((a)-->()), NOT (a)-->(), CASE WHEN (a)-->() THEN 1 END");
    for query in [
        "MATCH (n) RETURN (n)-[]->()",
        "MATCH (n) WITH (n)-->() AS x RETURN x",
        "MATCH (n) RETURN size((n)-->())",
        "MATCH (n) WHERE (n)-->() = true RETURN n",
    ] {
        assert_eq!(
            parse_err(query).kind,
            ParseErrorKind::PatternAsValue,
            "{query}"
        );
    }
}

#[test]
fn count_subqueries_and_the_word_count() {
    // `COUNT {` opens a subquery: a pattern with WHERE, or a query.
    let ExprKind::CountSubquery(body) = expr("COUNT { (a)-->(b) WHERE b.x > 1 }").kind else {
        panic!("a COUNT subquery")
    };
    let SubqueryBody::Pattern { pattern, predicate } = *body else {
        panic!("the pattern form")
    };
    assert_eq!(pattern.parts.len(), 1);
    assert!(predicate.is_some());
    let ExprKind::CountSubquery(body) =
        expr("count { MATCH (a) RETURN a UNION MATCH (a) RETURN a }").kind
    else {
        panic!("a COUNT subquery")
    };
    assert!(matches!(*body, SubqueryBody::Query(Query { ref unions, .. }) if unions.len() == 1));
    assert!(matches!(
        expr("COUNT { p = (a)-->() }").kind,
        ExprKind::CountSubquery(_)
    ));
    // A value like any other.
    let ExprKind::Comparison { first, .. } = expr("COUNT { (a)-->() } * 2 > 1").kind else {
        panic!("a comparison")
    };
    assert!(matches!(
        first.kind,
        ExprKind::Binary { ref lhs, .. } if matches!(lhs.kind, ExprKind::CountSubquery(_))
    ));
    // `count` stays the aggregate, a variable, a key and a map projection's variable.
    assert_eq!(expr("count(*)").kind, ExprKind::CountStar);
    assert!(matches!(
        expr("count(x)").kind,
        ExprKind::FunctionCall { .. }
    ));
    assert_eq!(expr("count"), var("count"));
    assert!(
        matches!(expr("n.count").kind, ExprKind::Property { ref key, .. } if key.name == "count")
    );
    for projection in [
        "count{.x}",
        "count {.*}",
        "count{}",
        "count{x}",
        "count{a: 1, b}",
    ] {
        let ExprKind::MapProjection { variable, .. } = expr(projection).kind else {
            panic!("{projection} is a map projection")
        };
        assert_eq!(variable.name, "count", "{projection}");
    }
    // The span covers the braces.
    let query = "RETURN 1 + COUNT { (a)-->() } AS c";
    let statement = parse_ok(query);
    let ClauseKind::Return(ret) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    let ExprKind::Binary { rhs, .. } = &ret.projection.items[0].expr.kind else {
        panic!()
    };
    assert_eq!(rhs.span.text(query), Some("COUNT { (a)-->() }"));
    assert_eq!((rhs.span.line, rhs.span.column), (1, 12));
}

#[test]
fn collect_subqueries_and_the_word_collect() {
    // `COLLECT {` opens a query whose branches each return one column.
    let ExprKind::CollectSubquery(query) =
        expr("COLLECT { MATCH (a)-->(b) RETURN b.x ORDER BY b.x }").kind
    else {
        panic!("a COLLECT subquery")
    };
    let [.., last] = &query.first.clauses[..] else {
        panic!("clauses")
    };
    assert!(matches!(last.kind, ClauseKind::Return(_)));
    let ExprKind::CollectSubquery(query) =
        expr("collect { MATCH (a) RETURN a AS x UNION ALL MATCH (a) RETURN a AS x }").kind
    else {
        panic!("a COLLECT subquery")
    };
    assert_eq!(query.unions.len(), 1);
    // A value like any other; the span covers the braces.
    let query = "RETURN size(COLLECT { UNWIND [1] AS x RETURN x }) + 1";
    let statement = parse_ok(query);
    let ClauseKind::Return(ret) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, .. } = &ret.projection.items[0].expr.kind else {
        panic!("a sum")
    };
    let ExprKind::FunctionCall { args, .. } = &lhs.kind else {
        panic!("size(...)")
    };
    assert!(matches!(args[0].kind, ExprKind::CollectSubquery(_)));
    assert_eq!(
        args[0].span.text(query),
        Some("COLLECT { UNWIND [1] AS x RETURN x }")
    );
    // `collect` stays the aggregate, a variable and a map projection's variable.
    assert!(matches!(
        expr("collect(x)").kind,
        ExprKind::FunctionCall { ref name, .. } if name.name.name == "collect"
    ));
    assert_eq!(expr("collect"), var("collect"));
    for projection in ["collect{.x}", "collect {.*}", "collect{}", "collect{a: 1}"] {
        let ExprKind::MapProjection { variable, .. } = expr(projection).kind else {
            panic!("{projection} is a map projection")
        };
        assert_eq!(variable.name, "collect", "{projection}");
    }
    // Not exactly one column, updates, FINISH, a pattern body.
    let cases = [
        (
            "RETURN COLLECT { MATCH (a) RETURN a, a.x }",
            "line 1, column 28: invalid clause composition: a COLLECT subquery must end with a \
             single return column",
        ),
        (
            "RETURN COLLECT { MATCH (a) RETURN * }",
            "line 1, column 28: invalid clause composition: a COLLECT subquery must end with a \
             single return column",
        ),
        (
            "RETURN COLLECT { MATCH (a) WITH a }",
            "line 1, column 28: invalid clause composition: a COLLECT subquery must end with a \
             single return column",
        ),
        (
            "RETURN COLLECT { MATCH (a) RETURN a UNION MATCH (a) }",
            "line 1, column 43: invalid clause composition: a COLLECT subquery must end with a \
             single return column",
        ),
        (
            "RETURN COLLECT { MATCH (a) SET a.x = 1 RETURN a.x }",
            "line 1, column 28: invalid clause composition: a COLLECT subquery cannot contain SET",
        ),
        (
            "RETURN COLLECT { MATCH (a) FINISH }",
            "line 1, column 28: invalid clause composition: a COLLECT subquery cannot contain FINISH",
        ),
        (
            "RETURN COLLECT { (a)-->() }",
            "line 1, column 18: expected a query inside COLLECT { } but found '('",
        ),
        (
            "RETURN COLLECT { MATCH (a) RETURN a",
            "line 1, column 36: expected '}' to close the COLLECT { opened at line 1, column 16 \
             but found end of input",
        ),
    ];
    for (query, message) in cases {
        assert_eq!(parse_err(query).to_string(), message, "{query}");
    }
}

#[test]
fn finish_ends_a_query_without_rows() {
    for query in [
        "MATCH (n) SET n.seen = true FINISH",
        "UNWIND [1, 2] AS x CREATE (:N {x: x}) FINISH",
        "MATCH (n) finish",
        "FINISH",
        "UNWIND [1] AS x CALL { WITH x CREATE (:N) FINISH } RETURN x",
    ] {
        let statement = parse_ok(query);
        let last = statement.query.first.clauses.last().expect("a clause");
        let kind = match &last.kind {
            ClauseKind::Return(_) => &statement.query.first.clauses[1].kind,
            kind => kind,
        };
        let finish = match kind {
            ClauseKind::CallSubquery(inner) => inner.query.first.clauses.last().expect("a clause"),
            _ => last,
        };
        assert_eq!(finish.kind, ClauseKind::Finish, "{query}");
        assert_eq!(finish.kind.name(), "FINISH");
        assert!(!finish.kind.is_updating());
    }
    // `finish` is not reserved: a variable, and a path name at the start of a subquery.
    parse_ok("UNWIND [1] AS finish RETURN finish");
    parse_ok("RETURN EXISTS { finish = (a)-->() }");
    let cases = [
        (
            "MATCH (n) RETURN n FINISH",
            "line 1, column 20: invalid clause composition: RETURN can only be the last clause of a query",
        ),
        (
            "MATCH (n) FINISH MATCH (m) RETURN m",
            "line 1, column 18: invalid clause composition: FINISH can only be the last clause of a query",
        ),
        (
            "MATCH (n) FINISH RETURN n",
            "line 1, column 18: invalid clause composition: FINISH can only be the last clause of a query",
        ),
        (
            "MATCH (n) RETURN COUNT { MATCH (n)-->() FINISH }",
            "line 1, column 41: invalid clause composition: a COUNT subquery cannot contain FINISH",
        ),
        (
            "MATCH (n) FOREACH (x IN [1] | FINISH) RETURN n",
            "line 1, column 31: invalid clause composition: FOREACH can only contain updating clauses, not FINISH",
        ),
    ];
    for (query, message) in cases {
        assert_eq!(parse_err(query).to_string(), message, "{query}");
    }
}

#[test]
fn relationship_patterns() {
    let statement = parse_ok(
        "MATCH (a)-[r:A|:B*2..5 {x: 1}]->(b)<-[*]-(c)-[:C*3]-(d)<-->(e)-[*..4]-(f)-[*1..]-(g) RETURN a",
    );
    let ClauseKind::Match(m) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    let rels: Vec<&RelationshipPattern> = m.pattern.parts[0]
        .element
        .chain
        .iter()
        .map(|step| &step.relationship)
        .collect();
    assert_eq!(rels[0].direction, RelDirection::Outgoing);
    assert_eq!(
        rels[0]
            .types
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["A", "B"]
    );
    assert_eq!(
        rels[0].length,
        Some(VarLength {
            min: Some(2),
            max: Some(5)
        })
    );
    assert!(rels[0].properties.is_some());
    assert_eq!(rels[1].direction, RelDirection::Incoming);
    assert_eq!(
        rels[1].length,
        Some(VarLength {
            min: None,
            max: None
        })
    );
    assert_eq!(
        rels[2].length,
        Some(VarLength {
            min: Some(3),
            max: Some(3)
        })
    );
    assert_eq!(rels[3].direction, RelDirection::Undirected);
    assert_eq!(
        rels[4].length,
        Some(VarLength {
            min: None,
            max: Some(4)
        })
    );
    assert_eq!(
        rels[5].length,
        Some(VarLength {
            min: Some(1),
            max: None
        })
    );
}

#[test]
fn spans_cover_source_text() {
    let query = "MATCH (n:Person)\nWHERE n.age > 3\nRETURN n.name AS name, count(*)";
    let statement = parse_ok(query);
    let clauses = &statement.query.first.clauses;
    assert_eq!(
        clauses[0].span.text(query),
        Some("MATCH (n:Person)\nWHERE n.age > 3")
    );
    assert_eq!((clauses[1].span.line, clauses[1].span.column), (3, 1));
    let ClauseKind::Match(m) = &clauses[0].kind else {
        panic!()
    };
    let predicate = m.predicate.as_ref().unwrap();
    assert_eq!(predicate.span.text(query), Some("n.age > 3"));
    assert_eq!((predicate.span.line, predicate.span.column), (2, 7));
    assert_eq!(
        m.pattern.parts[0].element.start.span.text(query),
        Some("(n:Person)")
    );
    let ClauseKind::Return(ret) = &clauses[1].kind else {
        panic!()
    };
    assert_eq!(
        ret.projection.items[0].span.text(query),
        Some("n.name AS name")
    );
    assert_eq!(
        ret.projection.items[1].expr.span.text(query),
        Some("count(*)")
    );
    // Parentheses and folded signs are part of an expression's span.
    let query = "RETURN (1 + 2) * - 3";
    let statement = parse_ok(query);
    let ClauseKind::Return(ret) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, rhs, .. } = &ret.projection.items[0].expr.kind else {
        panic!()
    };
    assert_eq!(lhs.span.text(query), Some("(1 + 2)"));
    assert_eq!(rhs.span.text(query), Some("- 3"));
}

#[test]
fn spans_do_not_affect_equality() {
    assert_eq!(
        parse_ok("match (n)   return n"),
        parse_ok("MATCH (n) RETURN n")
    );
    assert_ne!(
        parse_ok("MATCH (n) RETURN n"),
        parse_ok("MATCH (m) RETURN m")
    );
}

#[test]
fn statement_modes_and_semicolon() {
    assert_eq!(
        parse_ok("EXPLAIN MATCH (n) RETURN n").mode,
        QueryMode::Explain
    );
    assert_eq!(
        parse_ok("explain verbose MATCH (n) RETURN n").mode,
        QueryMode::ExplainVerbose
    );
    assert_eq!(parse_ok("profile RETURN 1;").mode, QueryMode::Profile);
    assert_eq!(parse_ok("RETURN 1 ;").mode, QueryMode::Normal);
    assert_eq!(
        parse_err("RETURN 1; RETURN 2").to_string(),
        "line 1, column 11: expected a clause, UNION or end of input but found 'RETURN'"
    );
}

#[test]
fn keywords_and_names() {
    // Keywords are case-insensitive; labels, keys and types may be keywords.
    parse_ok("mAtCh (n:Match {return: 1})-[:WITH]->(m) ReTuRn n.count, {end: 1}");
    // Reserved words need backquotes as variables.
    assert_eq!(
        parse_err("MATCH (n) RETURN return").to_string(),
        "line 1, column 18: expected an expression but found 'return'"
    );
    let statement = parse_ok("WITH 1 AS `return` RETURN `return`");
    assert_eq!(statement.to_string(), "WITH 1 AS `return` RETURN `return`");
}

#[test]
fn error_messages() {
    let cases = [
        (
            "MATCH (a RETURN a",
            "line 1, column 10: expected ')' but found 'RETURN'",
        ),
        (
            "MATCH (a)-[r]-(b",
            "line 1, column 17: expected ')' but found end of input",
        ),
        (
            "RETURN [1, 2",
            "line 1, column 13: expected ']' but found end of input",
        ),
        (
            "RETURN {1: 2}",
            "line 1, column 9: expected a property key name but found '1'",
        ),
        (
            "RETURN CASE x END",
            "line 1, column 15: expected 'WHEN' but found 'END'",
        ),
        (
            "MATCH (n) RETURN [(n)-->()]",
            "line 1, column 27: expected '|' but found ']'",
        ),
        (
            "MATCH (n) RETURN n ORDER n",
            "line 1, column 26: expected 'BY' but found 'n'",
        ),
        (
            "UNWIND [1] x RETURN x",
            "line 1, column 12: expected 'AS' but found 'x'",
        ),
        (
            "SELECT 1",
            "line 1, column 1: expected a clause but found 'SELECT'",
        ),
        (
            "",
            "line 1, column 1: expected a clause but found end of input",
        ),
        (
            "RETURN 1 != 2",
            "line 1, column 10: '!=' is not a Cypher operator, use '<>'",
        ),
        (
            "RETURN a IS 1",
            "line 1, column 13: expected 'NULL', '::' or 'TYPED' but found '1'",
        ),
        (
            "MATCH (n) SET n.x + 1 = 2 RETURN n",
            "line 1, column 19: expected '=' but found '+'",
        ),
        (
            "MATCH (n) SET 1 = 2",
            "line 1, column 15: expected a property, variable or labels to SET but found an expression",
        ),
        (
            "MATCH (n)\n  RETURN n,",
            "line 2, column 12: expected an expression but found end of input",
        ),
        (
            "MATCH (n)",
            "line 1, column 1: invalid clause composition: a query cannot end with MATCH; it must \
             end with RETURN, CALL or an updating clause",
        ),
        (
            "CREATE (n) MATCH (m) RETURN m",
            "line 1, column 12: invalid clause composition: WITH is required between CREATE and MATCH",
        ),
        (
            "RETURN 1 AS a UNION RETURN 2 AS a UNION ALL RETURN 3 AS a",
            "line 1, column 35: invalid clause composition: UNION and UNION ALL cannot be mixed",
        ),
        (
            "RETURN 1 MATCH (n) RETURN n",
            "line 1, column 10: invalid clause composition: RETURN can only be the last clause of a query",
        ),
        (
            "MATCH (n) WHERE EXISTS { MATCH (n)-->(m) SET m.x = 1 } RETURN n",
            "line 1, column 42: invalid clause composition: an EXISTS subquery cannot contain SET",
        ),
        (
            "MATCH (n) FOREACH (x IN [1] | MATCH (m)) RETURN n",
            "line 1, column 31: invalid clause composition: FOREACH can only contain updating clauses, not MATCH",
        ),
        (
            "CALL proc YIELD x RETURN x",
            "line 1, column 1: procedure arguments can only be omitted in a standalone CALL",
        ),
        (
            "CALL proc() YIELD * RETURN x",
            "line 1, column 13: expected YIELD with named fields ('YIELD *' needs a standalone CALL) \
             but found 'YIELD *'",
        ),
    ];
    for (query, message) in cases {
        assert_eq!(parse_err(query).to_string(), message, "{query}");
    }
}

#[test]
fn standalone_calls() {
    let statement = parse_ok("CALL db.labels");
    let ClauseKind::Call(call) = &statement.query.first.clauses[0].kind else {
        panic!()
    };
    assert_eq!(call.procedure.namespace[0].name, "db");
    assert_eq!(call.args, None);
    parse_ok("CALL test.my.proc('a', 1) YIELD *");
    parse_ok("CALL db.labels() YIELD label WHERE label <> 'x' RETURN label");
    parse_ok("MATCH (n) CALL proc(n)");
}

#[test]
fn tck_codes() {
    let cases = [
        ("RETURN 0x", "InvalidNumberLiteral"),
        ("RETURN 1.34E999", "FloatingPointOverflow"),
        ("RETURN '\\uH'", "InvalidUnicodeLiteral"),
        ("RETURN 42 — 41", "InvalidUnicodeCharacter"),
        ("RETURN 9223372036854775808", "IntegerOverflow"),
        ("RETURN {, }", "UnexpectedSyntax"),
        ("CALL p YIELD x RETURN x", "InvalidArgumentPassingMode"),
        (
            "RETURN 1 UNION ALL RETURN 1 UNION RETURN 1",
            "InvalidClauseComposition",
        ),
    ];
    for (query, code) in cases {
        assert_eq!(parse_err(query).tck_code(), code, "{query}");
    }
}

/// Runs `f` on a thread with the default 2 MiB test stack, so a recursion bug fails the test
/// with a stack overflow rather than passing on a large main-thread stack.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn nesting_limit_is_clean() {
    on_small_stack(|| {
        let depth_ok = MAX_NESTING_DEPTH - 10;
        for (open, close) in [
            ("[", "]"),
            ("(", ")"),
            ("-(", ")"),
            ("{a: ", "}"),
            ("[x IN ", "]"),
        ] {
            let ok = format!(
                "RETURN {}1{}",
                open.repeat(depth_ok / 2),
                close.repeat(depth_ok / 2)
            );
            let statement = parse(&ok).unwrap_or_else(|error| panic!("{open}: {error}"));
            assert_eq!(parse(&statement.to_string()).unwrap(), statement);

            let deep = format!("RETURN {}1{}", open.repeat(100_000), close.repeat(100_000));
            let error = parse(&deep).unwrap_err();
            assert_eq!(
                error.kind,
                ParseErrorKind::NestingTooDeep {
                    limit: MAX_NESTING_DEPTH
                }
            );
        }
        let nots = format!("RETURN {}true", "NOT ".repeat(100_000));
        assert!(matches!(
            parse(&nots).unwrap_err().kind,
            ParseErrorKind::NestingTooDeep { .. }
        ));
        // Long left-nested operator chains count too: the tree would be as deep.
        let sum = format!("RETURN 1{}", " + 1".repeat(100_000));
        assert!(matches!(
            parse(&sum).unwrap_err().kind,
            ParseErrorKind::NestingTooDeep { .. }
        ));
        let sum = format!("RETURN 1{}", " + 1".repeat(MAX_NESTING_DEPTH - 10));
        parse(&sum).unwrap();
        let subqueries = format!(
            "{}RETURN 1{}",
            "CALL { ".repeat(100_000),
            " }".repeat(100_000)
        );
        assert!(matches!(
            parse(&subqueries).unwrap_err().kind,
            ParseErrorKind::NestingTooDeep { .. }
        ));
        let counts = format!(
            "RETURN {}1{}",
            "COUNT { RETURN ".repeat(100_000),
            " }".repeat(100_000)
        );
        assert!(matches!(
            parse(&counts).unwrap_err().kind,
            ParseErrorKind::NestingTooDeep { .. }
        ));
        let counts = format!(
            "RETURN {}1{}",
            "COUNT { RETURN ".repeat(20),
            " }".repeat(20)
        );
        let statement = parse(&counts).unwrap();
        assert_eq!(parse(&statement.to_string()).unwrap(), statement);
        let chain = format!("MATCH (a){} RETURN a", "-->()".repeat(10_000));
        parse(&chain).unwrap();
    });
}

// ----- label expressions (Neo4j 5) -------------------------------------------------------

fn label(name: &str) -> LabelExpr {
    LabelExpr::Label(ident(name))
}

fn label_test(text: &str) -> LabelExpr {
    match expr(text).kind {
        ExprKind::LabelTest { label_expr, .. } => label_expr,
        other => panic!("`{text}` should be a label test, got {other:?}"),
    }
}

fn first_node(query: &str) -> NodePattern {
    let statement = parse_ok(query);
    let ClauseKind::Match(m) = &statement.query.first.clauses[0].kind else {
        panic!("MATCH expected")
    };
    m.pattern.parts[0].element.start.clone()
}

#[test]
fn label_expression_precedence_is_not_and_or() {
    use LabelExpr::{And, Not, Or};
    let b = Box::new;
    // `A|B&!C` is `A|(B&(!C))`.
    assert_eq!(
        label_test("n:A|B&!C"),
        Or(b(label("A")), b(And(b(label("B")), b(Not(b(label("C")))))))
    );
    assert_eq!(
        label_test("n:(A|B)&!C"),
        And(b(Or(b(label("A")), b(label("B")))), b(Not(b(label("C")))))
    );
    assert_eq!(label_test("n:!!%"), Not(b(Not(b(LabelExpr::Any)))));
    // `|` and `&` fold to the left.
    assert_eq!(
        label_test("n:A|B|C"),
        Or(b(Or(b(label("A")), b(label("B")))), b(label("C")))
    );
}

#[test]
fn plain_label_conjunctions_keep_their_old_form() {
    for text in ["n:A&B", "n:A:B"] {
        assert_eq!(
            expr(text).kind,
            ExprKind::HasLabels {
                expr: Box::new(var("n")),
                labels: vec![ident("A"), ident("B")],
            }
        );
    }
    // A label expression binds like the postfix `:A`: `n:A|B AND x` is `(n:A|B) AND x`.
    let ExprKind::Binary { op, lhs, .. } = expr("n:A|B AND x").kind else {
        panic!("AND expected")
    };
    assert_eq!(op, BinaryOp::And);
    assert!(matches!(lhs.kind, ExprKind::LabelTest { .. }));
}

#[test]
fn node_patterns_split_plain_labels_from_the_rest() {
    let node = first_node("MATCH (n:A|B) RETURN n");
    assert!(node.labels.is_empty());
    assert_eq!(
        node.label_expr,
        Some(LabelExpr::Or(Box::new(label("A")), Box::new(label("B"))))
    );
    let node = first_node("MATCH (n:!B&A&C {x: 1}) RETURN n");
    assert_eq!(node.labels, vec![ident("A"), ident("C")]);
    assert_eq!(node.label_expr, Some(LabelExpr::Not(Box::new(label("B")))));
    let node = first_node("MATCH (n:A&B) RETURN n");
    assert_eq!(node.labels, vec![ident("A"), ident("B")]);
    assert_eq!(node.label_expr, None);
    assert_eq!(
        first_node("MATCH (:%) RETURN 1").label_expr,
        Some(LabelExpr::Any)
    );
}

#[test]
fn label_expressions_print_back_to_the_same_tree() {
    for query in [
        "MATCH (n) WHERE n:A|B&!C RETURN n",
        "MATCH (n) WHERE n:(A|B)&!(C&D) RETURN n",
        "MATCH (n) WHERE n:!(A|%) AND (n:A):!B RETURN n",
        "MATCH (n:(A|B)&!C {x: 1})-->(:%) RETURN n",
        "MATCH (n:A&!B&(C|D)) RETURN n",
        "RETURN [x IN [] WHERE x:(A|B) | x]",
        "MATCH (n) RETURN [(n)-->(m:A|B) WHERE m:(C|D) | m]",
    ] {
        assert_prints_back(query);
    }
}

/// `query` printed and parsed again gives the same tree.
fn assert_prints_back(query: &str) {
    let first = parse_ok(query);
    let printed = first.to_string();
    assert_eq!(
        parse_ok(&printed),
        first,
        "`{query}` printed as `{printed}`"
    );
}

#[test]
fn a_bar_ends_a_comprehension_predicate() {
    let ExprKind::ListComprehension {
        predicate,
        projection,
        ..
    } = expr("[x IN l WHERE x:A | x.name]").kind
    else {
        panic!("list comprehension expected")
    };
    assert!(matches!(
        predicate.unwrap().kind,
        ExprKind::HasLabels { .. }
    ));
    assert!(projection.is_some());
}

#[test]
fn relationship_types_take_only_bar() {
    let query = "MATCH ()-[r:T&U]->() RETURN r";
    let error = parse_err(query);
    assert!(matches!(
        error.kind,
        ParseErrorKind::InvalidRelationshipPattern { .. }
    ));
    assert_eq!(error.span.text(query), Some("&"));
    assert!(error.to_string().contains("exactly one type"), "{error}");
    let query = "MATCH ()-[r:T|!U]->() RETURN r";
    assert_eq!(parse_err(query).span.text(query), Some("!"));
    // Neo4j 5 spelling of a type disjunction with a variable.
    let statement = parse_ok("MATCH ()-[r:T|U]->() RETURN r");
    let ClauseKind::Match(m) = &statement.query.first.clauses[0].kind else {
        panic!("MATCH expected")
    };
    assert_eq!(
        m.pattern.parts[0].element.chain[0].relationship.types.len(),
        2
    );
}

#[test]
fn a_dangling_label_operator_is_a_positioned_error() {
    // A label may be named like a keyword (`n:A|RETURN`), so the missing name shows where
    // something that cannot be a name follows.
    let query = "MATCH (n) WHERE n:A|, 1 RETURN n";
    let error = parse_err(query);
    assert_eq!(error.span.text(query), Some(","));
    assert!(error.to_string().contains("label name"), "{error}");
    let query = "MATCH (n:A&) RETURN n";
    assert_eq!(parse_err(query).span.text(query), Some(")"));
}

#[test]
fn set_and_remove_take_plain_labels_only() {
    let error = parse_err("MATCH (n) SET n:A|B");
    assert!(error.to_string().contains("label expression"), "{error}");
    let error = parse_err("MATCH (n) REMOVE n:!A");
    assert!(
        error.to_string().contains("plain labels to REMOVE"),
        "{error}"
    );
    assert!(parse("MATCH (n) SET n:A&B").is_ok());
}

#[test]
fn call_in_transactions_options_in_any_order() {
    let statement = parse_ok(
        "LOAD CSV FROM 'f.csv' AS r CALL { WITH r CREATE (:N) } IN TRANSACTIONS \
         REPORT STATUS AS s ON ERROR CONTINUE OF 10 ROWS RETURN s",
    );
    let ClauseKind::CallInTransactions(call) = &statement.query.first.clauses[1].kind else {
        panic!("CALL IN TRANSACTIONS expected")
    };
    assert_eq!(call.batch_size, Some(int(10)));
    assert_eq!(call.on_error, OnError::Continue);
    assert_eq!(
        call.report_status.as_ref().map(|v| v.name.as_str()),
        Some("s")
    );
    assert_eq!(call.query.first.clauses.len(), 2);
    // Printed in the canonical order, which parses back to the same tree.
    let printed = statement.to_string();
    assert!(
        printed.contains("IN TRANSACTIONS OF 10 ROWS ON ERROR CONTINUE REPORT STATUS AS s"),
        "{printed}"
    );
    assert_eq!(parse_ok(&printed), statement);

    let plain = parse_ok("CALL { CREATE () } IN TRANSACTIONS");
    let ClauseKind::CallInTransactions(call) = &plain.query.first.clauses[0].kind else {
        panic!("CALL IN TRANSACTIONS expected")
    };
    assert_eq!(
        (call.batch_size.is_none(), call.on_error),
        (true, OnError::Fail)
    );
    parse_ok("UNWIND [1] AS x CALL { WITH x CREATE () } IN TRANSACTIONS OF 1 ROW ON ERROR BREAK");
    // `in` and `transactions` stay usable as names elsewhere.
    parse_ok("UNWIND [1] AS transactions RETURN transactions IN [1]");
}

#[test]
fn call_in_transactions_placement_errors_have_positions() {
    let cases = [
        (
            "CALL { CALL { CREATE (x) } IN TRANSACTIONS } IN TRANSACTIONS RETURN 1 AS result",
            "line 1, column 8: invalid clause composition: Nested CALL { ... } IN TRANSACTIONS is not supported",
        ),
        (
            "CALL { CALL { CREATE (x) } IN TRANSACTIONS } RETURN 1 AS result",
            "line 1, column 8: invalid clause composition: CALL { ... } IN TRANSACTIONS nested in a regular CALL is not supported",
        ),
        (
            "RETURN 1 AS result\nUNION\nCALL { CREATE (x) } IN TRANSACTIONS\nRETURN 2 AS result",
            "line 3, column 1: invalid clause composition: CALL { ... } IN TRANSACTIONS in a UNION is not supported",
        ),
        (
            "CREATE (foo)\nWITH foo AS foo\nCALL { CREATE (x) } IN TRANSACTIONS\nRETURN foo AS foo",
            "line 3, column 1: invalid clause composition: CALL { ... } IN TRANSACTIONS after a write clause is not supported",
        ),
        (
            "CALL { RETURN 1 AS v } IN TRANSACTIONS\n  ON ERROR FAIL\n  REPORT STATUS AS status\n  RETURN v, status",
            "line 3, column 3: invalid clause composition: REPORT STATUS can only be used when specifying ON ERROR CONTINUE or ON ERROR BREAK",
        ),
        (
            "CALL { RETURN 1 AS v } IN TRANSACTIONS ON ERROR BREAK",
            "line 1, column 1: invalid clause composition: Query cannot conclude with CALL (must be a RETURN clause, a FINISH clause, an update clause, a unit subquery call, or a procedure call with no YIELD)",
        ),
        (
            "CALL { CREATE () } IN TRANSACTIONS ON ERROR RETRY",
            "line 1, column 45: expected CONTINUE, BREAK or FAIL but found 'RETRY'",
        ),
    ];
    for (query, message) in cases {
        assert_eq!(parse_err(query).to_string(), message, "{query}");
    }
    // Writes after it, and several of them, are fine.
    parse_ok(
        "CALL { CREATE (x) } IN TRANSACTIONS WITH 1 AS foo CALL { CREATE (y) } IN TRANSACTIONS RETURN foo",
    );
    parse_ok("CALL { CREATE (x) } IN TRANSACTIONS CREATE (foo) RETURN foo");
    parse_ok("CALL { CALL { CREATE (x) } } IN TRANSACTIONS RETURN 1 AS result");
}

#[test]
fn dynamic_labels_parse_in_every_position_and_print_back() {
    for query in [
        "MATCH (n:$($label)) RETURN n",
        "MATCH (n:$any(['A', 'B'])|C) RETURN n",
        "MATCH (n:A:$all(x + 'y')) RETURN n",
        "MATCH (n) WHERE n:!$(l) RETURN n",
        "MATCH ()-[r:$($type)]->() RETURN r",
        "MATCH ()-[r:$any($types) *1..2]->() RETURN r",
        "MATCH ()-[r:%]->() RETURN r",
        "CREATE (n:$(a):B)-[:$(t)]->()",
        "MERGE (n:$(l) {k: 1})",
        "MATCH (n) SET n:$(n.kind):X REMOVE n:$(['A', 'B'])",
    ] {
        assert_prints_back(query);
    }
    // `$any(` and `$all(` in any case; `$any` alone is still a parameter.
    let node = first_node("MATCH (n:$ANY(x)) RETURN n");
    assert!(matches!(node.label_expr, Some(LabelExpr::Dynamic(ref d)) if d.any));
    assert!(parse("MATCH (n {a: $any}) RETURN n").is_ok());
    assert!(parse("RETURN $all").is_ok());
}

#[test]
fn a_dynamic_relationship_type_takes_no_alternatives() {
    let query = "MATCH ()-[r:T|$(x)]->() RETURN r";
    let error = parse_err(query);
    assert!(error.to_string().contains("$any"), "{error}");
    assert_eq!(error.span.text(query), Some("$(x)"));
    let statement = parse_ok("MATCH ()-[r:T|%]->() RETURN r");
    let ClauseKind::Match(m) = &statement.query.first.clauses[0].kind else {
        panic!("MATCH expected")
    };
    let rel = &m.pattern.parts[0].element.chain[0].relationship;
    assert!(rel.types.is_empty() && rel.dynamic_type.is_none());
}
