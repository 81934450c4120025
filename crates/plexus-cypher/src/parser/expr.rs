//! Expression parsing: Pratt-style precedence climbing over [`Precedence`].
//!
//! ALGORITHM
//! =========
//! `parse_expr_bp(min)` parses a prefix form (an atom, `NOT x`, `-x`, `+x`) and then keeps
//! absorbing infix and postfix operators whose precedence is at least `min`. A left-associative
//! operator at level L parses its right operand with `min = L.tighter()`, so a second operator
//! at level L is left for the loop: `1 - 2 - 3` = `(1 - 2) - 3`. Levels, loosest first:
//!
//! ```text
//!   OR < XOR < AND < NOT x < comparisons < =~ STARTS/ENDS WITH CONTAINS IN IS NULL
//!      < + - < * / % < ^ < unary - + < postfix .key [i] [a..b] :Label < atoms
//! ```
//!
//! Comparisons chain rather than nest: `a < b <= c` is one `Comparison` node with two
//! operators (meaning `a < b AND b <= c`); `(a < b) <= c` is a comparison of a comparison.
//!
//! A unary minus directly before a number literal is folded into a negative literal, unless a
//! postfix operator follows the number (`-1.x` is `-(1.x)`). This is the only way to write
//! `-9223372036854775808`: its magnitude alone overflows i64.
//!
//! The postfix `:` takes a Neo4j 5 label expression (`n:(A|B)&!C`, `n:%`; grammar at
//! `parse_label_terms`). Where a `|` ends the expression (a comprehension's list and `WHERE`,
//! `reduce`, `FOREACH`) only a parenthesised `|` is a disjunction: `[x IN l WHERE x:A | x]`.
//!
//! PATTERNS INSIDE EXPRESSIONS
//! ===========================
//! `(` may open a parenthesised expression or a pattern predicate (`WHERE (a)-[:R]->(b)`), and
//! `[` a list, a list comprehension or a pattern comprehension. The parser decides by bounded
//! lookahead, without backtracking: `(...)` is a node pattern if its contents look like one
//! (`[var] [:label expression] [{map} | $param]`, skipping the map via the precomputed bracket partners)
//! *and* a relationship follows (`--(`, `-->`, `<--`, or `-[`/`<-[` with a detail-shaped
//! bracket; see `pattern.rs`). Each decision is O(1) in the query length, so parsing stays
//! linear.
//!
//! The only cost is that a few odd arithmetic spellings read as patterns, e.g. `(a)--(b)` is a
//! pattern, never `a - (-b)`; the printer never produces those spellings.
//!
//! A pattern is a predicate, not a value: it may stand in WHERE, `CASE WHEN`, `exists(...)` and
//! as an operand of NOT, AND, OR and XOR, but `RETURN (a)-->(b)` or `size((a)-->(b))` is a
//! syntax error (TCK Pattern1 [22-24], List6 [6]). Value positions check with
//! `check_not_pattern` once they know what they hold.
//!
//! SUBQUERY EXPRESSIONS
//! ====================
//! `EXISTS { ... }` and `COUNT { ... }` hold either a pattern with an optional WHERE
//! (`COUNT { (a)-->(b) WHERE b.x > 1 }`) or a query without updating clauses, which need not
//! end with RETURN (`COUNT { MATCH (a)-->(b) RETURN DISTINCT b }`); a clause keyword after the
//! brace selects the query. `EXISTS` is reserved, `count` is not: `count(x)` and `count(*)` are
//! the aggregate, and `count{.name}` / `count{}` a map projection of a variable named `count`
//! (`map_projection_at` looks at the token after the brace), as in Neo4j's grammar. Every
//! other `COUNT {` opens a subquery, so `RETURN COUNT {` fails as one: "expected a pattern or
//! a query inside COUNT { } but found end of input".
//!
//! `COLLECT { ... }` holds a query only (no pattern form), and each branch of it ends with a
//! RETURN of exactly one item: its value is the list of that column's values in the body's row
//! order. `collect(x)` stays the aggregate and `collect{.name}` a map projection, by the same
//! look at the tokens after the word as for `count`.
//!
//! STACK
//! =====
//! One nesting level (`[[...]]`, `((...))`, `-(-(...))`) costs about five stack frames. To keep
//! MAX_NESTING_DEPTH levels well inside a 2 MiB thread stack, the forms are dispatched through
//! function pointers (one return slot per dispatcher frame instead of one per match arm) and
//! the bulkier form parsers are `#[inline(never)]`, so their locals are not merged into the
//! frames of the functions on the recursive path. Measured at depth 250: about 0.6 MiB with
//! opt-level 1 (the test profile), about 2.4 MiB unoptimised.

use super::{Parser, QueryContext, Result, is_reserved};
use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// An expression in value position: a bare pattern here is an error.
    pub(super) fn parse_expr(&mut self) -> Result<Expr> {
        let expr = self.parse_expr_bp(Precedence::Lowest)?;
        check_not_pattern(&expr)?;
        Ok(expr)
    }

    /// An expression in predicate position (WHERE, `CASE WHEN`, `exists(...)`): it may be a
    /// bare pattern.
    pub(super) fn parse_predicate(&mut self) -> Result<Expr> {
        self.parse_expr_bp(Precedence::Lowest)
    }

    /// Parses an expression whose operators all bind at least as tightly as `min`.
    pub(super) fn parse_expr_bp(&mut self, min: Precedence) -> Result<Expr> {
        // Inline rather than through `nested`: this is the hottest recursive path.
        let depth_before = self.depth;
        self.enter_level()?;
        let result = self.parse_operators(min);
        self.depth = depth_before;
        result
    }

    fn parse_operators(&mut self, min: Precedence) -> Result<Expr> {
        let mut lhs = self.parse_prefix()?;
        while let Some(precedence) = self.infix_precedence() {
            if precedence < min {
                break;
            }
            // Each operator applied here deepens the tree by one level without recursing
            // (`1 + 1 + ... + 1` is left-nested), so it counts against the nesting limit like
            // a recursive call: the tree's depth, and with it the recursion of the printer and
            // of `Drop`, stays bounded by MAX_NESTING_DEPTH.
            self.enter_level()?;
            lhs = self.parse_infix(lhs, precedence)?;
        }
        Ok(lhs)
    }

    /// The precedence of the operator at the cursor, if an infix or postfix operator is there.
    fn infix_precedence(&self) -> Option<Precedence> {
        let token = self.peek();
        let precedence = match &token.kind {
            TokenKind::Ident(word) => match word.to_ascii_uppercase().as_str() {
                "OR" => Precedence::Or,
                "XOR" => Precedence::Xor,
                "AND" => Precedence::And,
                "STARTS" | "ENDS" | "CONTAINS" | "IN" | "IS" => Precedence::Predicate,
                _ => return None,
            },
            TokenKind::Eq
            | TokenKind::NotEq
            | TokenKind::Lt
            | TokenKind::Gt
            | TokenKind::Le
            | TokenKind::Ge => Precedence::Comparison,
            TokenKind::RegexMatch => Precedence::Predicate,
            TokenKind::Plus | TokenKind::Minus => Precedence::Additive,
            TokenKind::Star | TokenKind::Slash | TokenKind::Percent => Precedence::Multiplicative,
            TokenKind::Caret => Precedence::Power,
            // `x :: TYPE`: a type predicate, as `x IS :: TYPE`.
            TokenKind::Colon if matches!(self.kind_at(1), TokenKind::Colon) => {
                Precedence::Predicate
            }
            TokenKind::Dot | TokenKind::LBracket | TokenKind::Colon => Precedence::Postfix,
            _ => return None,
        };
        Some(precedence)
    }

    fn comparison_op_at_cursor(&self) -> Option<ComparisonOp> {
        match self.peek().kind {
            TokenKind::Eq => Some(ComparisonOp::Eq),
            TokenKind::NotEq => Some(ComparisonOp::NotEq),
            TokenKind::Lt => Some(ComparisonOp::Lt),
            TokenKind::Gt => Some(ComparisonOp::Gt),
            TokenKind::Le => Some(ComparisonOp::Le),
            TokenKind::Ge => Some(ComparisonOp::Ge),
            _ => None,
        }
    }

    /// Parses the operator at the cursor (of the given precedence) applied to `lhs`.
    fn parse_infix(&mut self, lhs: Expr, precedence: Precedence) -> Result<Expr> {
        let boolean = matches!(
            precedence,
            Precedence::Or | Precedence::Xor | Precedence::And
        );
        if !boolean {
            check_not_pattern(&lhs)?;
        }
        match (precedence, self.kind_at(0)) {
            (Precedence::Comparison, _) => self.parse_comparison_chain(lhs),
            (Precedence::Postfix, TokenKind::LBracket) => self.parse_subscript(lhs),
            (Precedence::Postfix, _) => self.parse_property_or_labels(lhs),
            (_, TokenKind::Ident(word)) if word.eq_ignore_ascii_case("IS") => {
                self.parse_is_null(lhs)
            }
            (Precedence::Predicate, TokenKind::Colon) => {
                let start = lhs.span;
                self.advance();
                self.advance();
                let ty = self.parse_type()?;
                let kind = ExprKind::IsType {
                    expr: Box::new(lhs),
                    negated: false,
                    ty,
                };
                Ok(Expr::new(kind, self.span_from(start)))
            }
            _ => self.parse_binary(lhs, precedence, boolean),
        }
    }

    /// `lhs < b <= c ...`: every comparison operator in a row joins one chain.
    #[inline(never)]
    fn parse_comparison_chain(&mut self, lhs: Expr) -> Result<Expr> {
        let start = lhs.span;
        let mut rest = Vec::new();
        while let Some(op) = self.comparison_op_at_cursor() {
            self.advance();
            let operand = self.parse_expr_bp(Precedence::Predicate)?;
            check_not_pattern(&operand)?;
            rest.push((op, operand));
        }
        let kind = ExprKind::Comparison {
            first: Box::new(lhs),
            rest,
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// `lhs.key` or `lhs:Label:...`
    #[inline(never)]
    fn parse_property_or_labels(&mut self, lhs: Expr) -> Result<Expr> {
        let start = lhs.span;
        let kind = if self.eat(&TokenKind::Dot) {
            let key = self.parse_name("a property key name")?;
            ExprKind::Property {
                expr: Box::new(lhs),
                key,
            }
        } else {
            debug_assert!(self.at(&TokenKind::Colon), "infix_precedence saw ':'");
            let label_expr = self.parse_label_terms()?;
            match label_expr.clone().split_plain() {
                (labels, None) => ExprKind::HasLabels {
                    expr: Box::new(lhs),
                    labels,
                },
                (_, Some(_)) => ExprKind::LabelTest {
                    expr: Box::new(lhs),
                    label_expr,
                },
            }
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// `lhs IS [NOT] NULL`, or a type predicate `lhs IS [NOT] (:: | TYPED) type`
    #[inline(never)]
    fn parse_is_null(&mut self, lhs: Expr) -> Result<Expr> {
        let start = lhs.span;
        self.expect_keyword("IS")?;
        let negated = self.eat_keyword("NOT");
        let typed = if self.at(&TokenKind::Colon) {
            self.advance();
            self.expect(&TokenKind::Colon)?;
            true
        } else {
            self.eat_keyword("TYPED")
        };
        if typed {
            let ty = self.parse_type()?;
            let kind = ExprKind::IsType {
                expr: Box::new(lhs),
                negated,
                ty,
            };
            return Ok(Expr::new(kind, self.span_from(start)));
        }
        if !self.at_keyword("NULL") {
            return Err(self.unexpected("'NULL', '::' or 'TYPED'"));
        }
        self.expect_keyword("NULL")?;
        Ok(Expr::new(
            ExprKind::IsNull {
                expr: Box::new(lhs),
                negated,
            },
            self.span_from(start),
        ))
    }

    /// A binary operator: `lhs <op> rhs`, `rhs` binding tighter than `op` (left-associative).
    #[inline(never)]
    fn parse_binary(&mut self, lhs: Expr, precedence: Precedence, boolean: bool) -> Result<Expr> {
        let start = lhs.span;
        let op = self.binary_op_at_cursor()?;
        debug_assert_eq!(op.precedence(), precedence);
        let rhs = self.parse_expr_bp(precedence.tighter())?;
        if !boolean {
            check_not_pattern(&rhs)?;
        }
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// Consumes the binary operator at the cursor (which `infix_precedence` recognised).
    fn binary_op_at_cursor(&mut self) -> Result<BinaryOp> {
        let token = self.advance();
        let op = match &token.kind {
            TokenKind::Ident(word) => match word.to_ascii_uppercase().as_str() {
                "OR" => BinaryOp::Or,
                "XOR" => BinaryOp::Xor,
                "AND" => BinaryOp::And,
                "CONTAINS" => BinaryOp::Contains,
                "IN" => BinaryOp::In,
                "STARTS" => {
                    self.expect_keyword("WITH")?;
                    BinaryOp::StartsWith
                }
                "ENDS" => {
                    self.expect_keyword("WITH")?;
                    BinaryOp::EndsWith
                }
                _ => unreachable!("infix_precedence accepted {word}"),
            },
            TokenKind::RegexMatch => BinaryOp::RegexMatch,
            TokenKind::Plus => BinaryOp::Add,
            TokenKind::Minus => BinaryOp::Subtract,
            TokenKind::Star => BinaryOp::Multiply,
            TokenKind::Slash => BinaryOp::Divide,
            TokenKind::Percent => BinaryOp::Modulo,
            TokenKind::Caret => BinaryOp::Power,
            other => unreachable!("infix_precedence accepted {other:?}"),
        };
        Ok(op)
    }

    /// After `lhs[`: an index `lhs[i]` or a slice `lhs[a..b]` (either bound optional).
    #[inline(never)]
    fn parse_subscript(&mut self, lhs: Expr) -> Result<Expr> {
        let start = lhs.span;
        self.expect(&TokenKind::LBracket)?;
        let from = if self.at(&TokenKind::DotDot) {
            None
        } else {
            Some(self.parse_expr()?)
        };
        let kind = if self.eat(&TokenKind::DotDot) {
            let to = if self.at(&TokenKind::RBracket) {
                None
            } else {
                Some(self.parse_expr()?)
            };
            ExprKind::Slice {
                expr: Box::new(lhs),
                from: from.map(Box::new),
                to: to.map(Box::new),
            }
        } else {
            let index = from.expect("an index expression was parsed when no '..' followed");
            ExprKind::Index {
                expr: Box::new(lhs),
                index: Box::new(index),
            }
        };
        self.expect(&TokenKind::RBracket)?;
        Ok(Expr::new(kind, self.span_from(start)))
    }

    fn parse_prefix(&mut self) -> Result<Expr> {
        match self.kind_at(0) {
            TokenKind::Ident(word) if word.eq_ignore_ascii_case("NOT") => {
                self.parse_unary(UnaryOp::Not, Precedence::Not)
            }
            TokenKind::Minus => match self.parse_negative_literal()? {
                Some(literal) => Ok(literal),
                None => self.parse_unary(UnaryOp::Negate, Precedence::Unary),
            },
            TokenKind::Plus => self.parse_unary(UnaryOp::Plus, Precedence::Unary),
            _ => self.parse_atom(),
        }
    }

    /// At a prefix operator: `op` applied to an operand binding at least as tightly as
    /// `operand_precedence`.
    #[inline(never)]
    fn parse_unary(&mut self, op: UnaryOp, operand_precedence: Precedence) -> Result<Expr> {
        let start = self.advance().span;
        let operand = self.parse_expr_bp(operand_precedence)?;
        if op != UnaryOp::Not {
            check_not_pattern(&operand)?;
        }
        let kind = ExprKind::Unary {
            op,
            expr: Box::new(operand),
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// At `-`: folds `-<number>` into a negative literal, unless a postfix operator follows
    /// the number. Returns `None` (consuming nothing) when there is nothing to fold.
    #[inline(never)]
    fn parse_negative_literal(&mut self) -> Result<Option<Expr>> {
        let postfix_follows = matches!(
            self.kind_at(2),
            TokenKind::Dot | TokenKind::LBracket | TokenKind::Colon
        );
        let literal = match *self.kind_at(1) {
            _ if postfix_follows => return Ok(None),
            TokenKind::Integer(magnitude) => {
                let value = if magnitude == i64::MIN.unsigned_abs() {
                    i64::MIN
                } else {
                    match i64::try_from(magnitude) {
                        Ok(value) => -value,
                        Err(_) => {
                            let span = self.peek().span.to(self.peek_at(1).span);
                            return Err(self.integer_overflow(span));
                        }
                    }
                };
                Literal::Integer(value)
            }
            TokenKind::Float(value) => Literal::Float(-value),
            _ => return Ok(None),
        };
        let start = self.advance().span;
        self.advance();
        Ok(Some(Expr::new(
            ExprKind::Literal(literal),
            self.span_from(start),
        )))
    }

    fn integer_overflow(&self, span: Span) -> ParseError {
        let literal = span.text(self.source).unwrap_or_default().to_string();
        ParseError::new(ParseErrorKind::IntegerOverflow { literal }, span)
    }

    /// Dispatches on the first token through a function pointer; see STACK in the module docs.
    fn parse_atom(&mut self) -> Result<Expr> {
        let form: fn(&mut Self) -> Result<Expr> = match self.kind_at(0) {
            TokenKind::LBracket => Self::parse_bracket_expr,
            TokenKind::LBrace => Self::parse_map_literal,
            TokenKind::LParen => Self::parse_parenthesised,
            TokenKind::Ident(_) => Self::parse_word_atom,
            TokenKind::QuotedIdent(_) if self.function_call_ahead() => Self::parse_function_call,
            TokenKind::QuotedIdent(_) => Self::parse_variable_atom,
            _ => Self::parse_literal,
        };
        form(self)
    }

    /// A number, string or parameter.
    #[inline(never)]
    fn parse_literal(&mut self) -> Result<Expr> {
        let start = self.peek().span;
        let kind = match self.kind_at(0) {
            TokenKind::Integer(magnitude) => {
                let value = i64::try_from(*magnitude).map_err(|_| self.integer_overflow(start))?;
                ExprKind::Literal(Literal::Integer(value))
            }
            TokenKind::Float(value) => ExprKind::Literal(Literal::Float(*value)),
            TokenKind::String(value) => ExprKind::Literal(Literal::String(value.clone())),
            TokenKind::Parameter(name) => ExprKind::Parameter(name.clone()),
            _ => return Err(self.unexpected("an expression")),
        };
        self.advance();
        Ok(Expr::new(kind, start))
    }

    /// At `(`: a pattern predicate or a parenthesised expression.
    #[inline(never)]
    fn parse_parenthesised(&mut self) -> Result<Expr> {
        let start = self.peek().span;
        if self.pattern_starts_at(self.pos) {
            let element = self.parse_pattern_element(true)?;
            return Ok(Expr::new(
                ExprKind::PatternPredicate(Box::new(element)),
                self.span_from(start),
            ));
        }
        self.advance();
        // Parentheses are transparent: `WHERE NOT ((a)-->(b))` is still a predicate.
        let inner = self.parse_expr_bp(Precedence::Lowest)?;
        self.expect(&TokenKind::RParen)?;
        // Parentheses leave no node; the span grows to include them.
        Ok(Expr::new(inner.kind, self.span_from(start)))
    }

    /// An atom that starts with a bare word: a keyword literal, CASE, `EXISTS {`, `COUNT {`,
    /// `COLLECT {`, a special function form, a function call or a variable.
    #[inline(never)]
    fn parse_word_atom(&mut self) -> Result<Expr> {
        let start = self.peek().span;
        let TokenKind::Ident(word) = self.kind_at(0) else {
            return Err(self.unexpected("an expression"));
        };
        let upper = word.to_ascii_uppercase();
        let reserved = is_reserved(word);
        let literal = match upper.as_str() {
            "NULL" => Some(Literal::Null),
            "TRUE" => Some(Literal::Boolean(true)),
            "FALSE" => Some(Literal::Boolean(false)),
            _ => None,
        };
        if let Some(literal) = literal {
            self.advance();
            return Ok(Expr::new(ExprKind::Literal(literal), start));
        }
        let opens_call = *self.kind_at(1) == TokenKind::LParen;
        match upper.as_str() {
            "CASE" => return self.parse_case(),
            "EXISTS" if *self.kind_at(1) == TokenKind::LBrace => {
                return self.parse_subquery_expr(QueryContext::Exists);
            }
            // `count{.name}` projects a variable named `count` (see SUBQUERY EXPRESSIONS).
            "COUNT" if *self.kind_at(1) == TokenKind::LBrace && !self.map_projection_at(2) => {
                return self.parse_subquery_expr(QueryContext::Count);
            }
            "COLLECT" if *self.kind_at(1) == TokenKind::LBrace && !self.map_projection_at(2) => {
                return self.parse_subquery_expr(QueryContext::Collect);
            }
            "COUNT"
                if opens_call
                    && *self.kind_at(2) == TokenKind::Star
                    && *self.kind_at(3) == TokenKind::RParen =>
            {
                for _ in 0..4 {
                    self.advance();
                }
                return Ok(Expr::new(ExprKind::CountStar, self.span_from(start)));
            }
            "ALL" | "ANY" | "NONE" | "SINGLE"
                if opens_call
                    && self.variable_at(2)
                    && self.keyword_at(3, "IN")
                    && !self.has_top_level_comma(self.pos + 1) =>
            {
                return self.parse_quantifier(&upper);
            }
            "REDUCE" if opens_call && self.variable_at(2) && *self.kind_at(3) == TokenKind::Eq => {
                return self.parse_reduce();
            }
            _ => {}
        }
        if (!reserved || upper == "EXISTS") && self.function_call_ahead() {
            return self.parse_function_call();
        }
        if self.variable_at(0) {
            return self.parse_variable_atom();
        }
        Err(self.unexpected("an expression"))
    }

    /// True if the cursor is at `name { . name } (`.
    fn function_call_ahead(&self) -> bool {
        let mut n = 0;
        loop {
            if !self.name_at(n) {
                return false;
            }
            match self.kind_at(n + 1) {
                TokenKind::LParen => return true,
                TokenKind::Dot => n += 2,
                _ => return false,
            }
        }
    }

    #[inline(never)]
    fn parse_function_call(&mut self) -> Result<Expr> {
        let start = self.peek().span;
        let name = self.parse_qualified_name()?;
        self.expect(&TokenKind::LParen)?;
        let distinct = self.eat_keyword("DISTINCT");
        // `exists((a)-->(b))` is the one function whose argument may be a pattern.
        let is_exists = name.namespace.is_empty() && name.name.name.eq_ignore_ascii_case("EXISTS");
        let args = if self.at(&TokenKind::RParen) {
            Vec::new()
        } else if is_exists {
            self.parse_comma_separated(Self::parse_predicate)?
        } else {
            self.parse_comma_separated(Self::parse_expr)?
        };
        self.expect(&TokenKind::RParen)?;
        Ok(Expr::new(
            ExprKind::FunctionCall {
                name,
                distinct,
                args,
            },
            self.span_from(start),
        ))
    }

    /// A variable, or a map projection `var{...}` when a `{` follows.
    #[inline(never)]
    fn parse_variable_atom(&mut self) -> Result<Expr> {
        let variable = self.parse_variable()?;
        let start = variable.span;
        if !self.eat(&TokenKind::LBrace) {
            return Ok(Expr::new(ExprKind::Variable(variable), start));
        }
        let mut items = Vec::new();
        if !self.at(&TokenKind::RBrace) {
            items = self.parse_comma_separated(|p| {
                if p.eat(&TokenKind::Dot) {
                    if p.eat(&TokenKind::Star) {
                        return Ok(MapProjectionItem::AllProperties);
                    }
                    return Ok(MapProjectionItem::Property(
                        p.parse_name("a property key name")?,
                    ));
                }
                if p.name_at(0) && *p.kind_at(1) == TokenKind::Colon {
                    let key = p.take_ident();
                    p.advance();
                    return Ok(MapProjectionItem::Literal(key, p.parse_expr()?));
                }
                if p.variable_at(0) {
                    return Ok(MapProjectionItem::Variable(p.take_ident()));
                }
                Err(p
                    .unexpected("a map projection item ('.key', '.*', 'key: value' or a variable)"))
            })?;
        }
        self.expect(&TokenKind::RBrace)?;
        Ok(Expr::new(
            ExprKind::MapProjection { variable, items },
            self.span_from(start),
        ))
    }

    #[inline(never)]
    pub(super) fn parse_map_literal(&mut self) -> Result<Expr> {
        let start = self.expect(&TokenKind::LBrace)?;
        let mut entries = Vec::new();
        if !self.at(&TokenKind::RBrace) {
            entries = self.parse_comma_separated(|p| {
                let key = p.parse_name("a property key name")?;
                p.expect(&TokenKind::Colon)?;
                Ok((key, p.parse_expr()?))
            })?;
        }
        self.expect(&TokenKind::RBrace)?;
        Ok(Expr::new(ExprKind::Map(entries), self.span_from(start)))
    }

    /// At `[`: a pattern comprehension, a list comprehension or a list literal.
    #[inline(never)]
    fn parse_bracket_expr(&mut self) -> Result<Expr> {
        let named_pattern = self.variable_at(1)
            && *self.kind_at(2) == TokenKind::Eq
            && *self.kind_at(3) == TokenKind::LParen
            && self.pattern_starts_at(self.pos + 3);
        if named_pattern
            || (*self.kind_at(1) == TokenKind::LParen && self.pattern_starts_at(self.pos + 1))
        {
            self.parse_pattern_comprehension(named_pattern)
        } else if self.variable_at(1)
            && self.keyword_at(2, "IN")
            && !self.has_top_level_comma(self.pos)
        {
            // `[x IN l ...]` is a comprehension, but `[x IN l, y]` a list of two values.
            self.parse_list_comprehension()
        } else {
            self.parse_list_literal()
        }
    }

    /// `[[p =] (a)-->(b) [WHERE predicate] | projection]`
    #[inline(never)]
    fn parse_pattern_comprehension(&mut self, named: bool) -> Result<Expr> {
        let start = self.expect(&TokenKind::LBracket)?;
        let variable = if named {
            let variable = self.take_ident();
            self.advance();
            Some(variable)
        } else {
            None
        };
        let pattern = Box::new(self.parse_pattern_element(true)?);
        let predicate = self
            .with_bar_ending_expr(Self::parse_optional_where)?
            .map(Box::new);
        self.expect(&TokenKind::Pipe)?;
        let projection = Box::new(self.parse_expr()?);
        self.expect(&TokenKind::RBracket)?;
        let kind = ExprKind::PatternComprehension {
            variable,
            pattern,
            predicate,
            projection,
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// `[x IN list [WHERE predicate] [| projection]]`
    #[inline(never)]
    fn parse_list_comprehension(&mut self) -> Result<Expr> {
        let start = self.expect(&TokenKind::LBracket)?;
        let variable = self.take_ident();
        self.advance();
        let list = Box::new(self.with_bar_ending_expr(Self::parse_expr)?);
        let predicate = self
            .with_bar_ending_expr(Self::parse_optional_where)?
            .map(Box::new);
        let projection = if self.eat(&TokenKind::Pipe) {
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect(&TokenKind::RBracket)?;
        let kind = ExprKind::ListComprehension {
            variable,
            list,
            predicate,
            projection,
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    #[inline(never)]
    fn parse_list_literal(&mut self) -> Result<Expr> {
        let start = self.expect(&TokenKind::LBracket)?;
        let mut items = Vec::new();
        if !self.at(&TokenKind::RBracket) {
            items = self.parse_comma_separated(Self::parse_expr)?;
        }
        self.expect(&TokenKind::RBracket)?;
        Ok(Expr::new(ExprKind::List(items), self.span_from(start)))
    }

    #[inline(never)]
    fn parse_case(&mut self) -> Result<Expr> {
        let start = self.expect_keyword("CASE")?;
        let operand = if self.at_keyword("WHEN") {
            None
        } else {
            Some(Box::new(self.parse_expr()?))
        };
        let mut alternatives = Vec::new();
        while self.eat_keyword("WHEN") {
            let when = if operand.is_some() {
                self.parse_expr()?
            } else {
                self.parse_predicate()?
            };
            self.expect_keyword("THEN")?;
            let then = self.parse_expr()?;
            alternatives.push(CaseAlternative { when, then });
        }
        if alternatives.is_empty() {
            return Err(self.unexpected("'WHEN'"));
        }
        let default = if self.eat_keyword("ELSE") {
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect_keyword("END")?;
        Ok(Expr::new(
            ExprKind::Case {
                operand,
                alternatives,
                default,
            },
            self.span_from(start),
        ))
    }

    /// `EXISTS { ... }`, `COUNT { ... }` or `COLLECT { ... }` (the keyword at the cursor,
    /// `context` says which): a query if a clause keyword follows the brace, else (not for
    /// COLLECT) a pattern with an optional WHERE.
    #[inline(never)]
    fn parse_subquery_expr(&mut self, context: QueryContext) -> Result<Expr> {
        debug_assert!(context.expression_subquery().is_some(), "{context:?}");
        let keyword = match context {
            QueryContext::Count => "COUNT",
            QueryContext::Collect => "COLLECT",
            _ => "EXISTS",
        };
        let start = self.advance().span;
        let open = self.expect(&TokenKind::LBrace)?;
        let close = |p: &mut Self| {
            if p.eat(&TokenKind::RBrace) {
                return Ok(());
            }
            Err(p.unexpected(&format!(
                "'}}' to close the {keyword} {{ opened at line {}, column {}",
                open.line, open.column
            )))
        };
        if context == QueryContext::Collect {
            if !self.at_clause_start() {
                return Err(self.unexpected("a query inside COLLECT { }"));
            }
            let query = self.parse_query(context)?;
            close(self)?;
            let kind = ExprKind::CollectSubquery(Box::new(query));
            return Ok(Expr::new(kind, self.span_from(start)));
        }
        let body = if self.at_clause_start() {
            SubqueryBody::Query(self.parse_query(context)?)
        } else if self.at(&TokenKind::LParen) || self.variable_at(0) {
            let pattern = self.parse_pattern()?;
            let predicate = self.parse_optional_where()?;
            SubqueryBody::Pattern { pattern, predicate }
        } else {
            return Err(self.unexpected(&format!("a pattern or a query inside {keyword} {{ }}")));
        };
        close(self)?;
        let kind = match context {
            QueryContext::Count => ExprKind::CountSubquery(Box::new(body)),
            _ => ExprKind::Exists(Box::new(body)),
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// True if the tokens from `n` ahead read as the inside of a map projection: its closing
    /// `}`, `.key`, `.*`, `key: value`, or a variable followed by `,` or `}`. A subquery body
    /// starts with `(`, a named path `p =` or a clause keyword (all reserved), never so.
    fn map_projection_at(&self, n: usize) -> bool {
        match self.kind_at(n) {
            TokenKind::RBrace | TokenKind::Dot => true,
            _ if self.name_at(n) && *self.kind_at(n + 1) == TokenKind::Colon => true,
            _ => {
                self.variable_at(n)
                    && matches!(self.kind_at(n + 1), TokenKind::Comma | TokenKind::RBrace)
            }
        }
    }

    /// `all|any|none|single(x IN list [WHERE predicate])`; `upper` is the keyword, uppercased.
    #[inline(never)]
    fn parse_quantifier(&mut self, upper: &str) -> Result<Expr> {
        let start = self.advance().span;
        let quantifier = match upper {
            "ALL" => Quantifier::All,
            "ANY" => Quantifier::Any,
            "NONE" => Quantifier::None,
            _ => Quantifier::Single,
        };
        self.expect(&TokenKind::LParen)?;
        let variable = self.parse_variable()?;
        self.expect_keyword("IN")?;
        let list = Box::new(self.parse_expr()?);
        let predicate = self.parse_optional_where()?.map(Box::new);
        self.expect(&TokenKind::RParen)?;
        let kind = ExprKind::Quantifier {
            quantifier,
            variable,
            list,
            predicate,
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// `reduce(acc = init, x IN list | expr)`
    #[inline(never)]
    fn parse_reduce(&mut self) -> Result<Expr> {
        let start = self.advance().span;
        self.expect(&TokenKind::LParen)?;
        let accumulator = self.parse_variable()?;
        self.expect(&TokenKind::Eq)?;
        let init = Box::new(self.parse_expr()?);
        self.expect(&TokenKind::Comma)?;
        let variable = self.parse_variable()?;
        self.expect_keyword("IN")?;
        let list = Box::new(self.with_bar_ending_expr(Self::parse_expr)?);
        self.expect(&TokenKind::Pipe)?;
        let expr = Box::new(self.parse_expr()?);
        self.expect(&TokenKind::RParen)?;
        let kind = ExprKind::Reduce {
            accumulator,
            init,
            variable,
            list,
            expr,
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }
}

/// Fails if `expr` is a bare pattern in a position that needs a value. Patterns are predicates:
/// they may stand in WHERE, `CASE WHEN`, `exists(...)` and under NOT, AND, OR and XOR, but
/// `RETURN (a)-->(b)` or `size((a)-->(b))` is a syntax error (the TCK's Pattern1 and List6).
fn check_not_pattern(expr: &Expr) -> Result<()> {
    if matches!(expr.kind, ExprKind::PatternPredicate(_)) {
        return Err(ParseError::new(ParseErrorKind::PatternAsValue, expr.span));
    }
    Ok(())
}

// ----- label expressions --------------------------------------------------------------------
//
// GRAMMAR (Neo4j 5), tightest first:
//
//   terms := (':' or)+          -- `:A:B` is the conjunction of its terms
//   or    := and ('|' and)*
//   and   := not ('&' not)*
//   not   := '!' not | atom
//   atom  := '%' | '(' or ')' | name
//
// `n:A|B&!C` is `n:(A|(B&(!C)))`. The plain conjunctions (`:A:B`, `:A&B`) keep their old
// AST form (`labels: Vec<Ident>`) so the binder and planner see them as before.

impl Parser<'_> {
    /// Runs `f` with an unparenthesised `|` ending label expressions (see `bar_ends_expr`).
    pub(super) fn with_bar_ending_expr<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let saved = std::mem::replace(&mut self.bar_ends_expr, true);
        let result = f(self);
        self.bar_ends_expr = saved;
        result
    }

    /// At `:`: one or more `:`-separated label expressions, as their conjunction.
    pub(super) fn parse_label_terms(&mut self) -> Result<LabelExpr> {
        self.expect(&TokenKind::Colon)?;
        let mut expr = self.parse_label_or(!self.bar_ends_expr)?;
        while self.eat(&TokenKind::Colon) {
            let term = self.parse_label_or(!self.bar_ends_expr)?;
            expr = LabelExpr::And(Box::new(expr), Box::new(term));
        }
        Ok(expr)
    }

    fn parse_label_or(&mut self, allow_bar: bool) -> Result<LabelExpr> {
        let mut expr = self.parse_label_and()?;
        while allow_bar && self.eat(&TokenKind::Pipe) {
            let rhs = self.parse_label_and()?;
            expr = LabelExpr::Or(Box::new(expr), Box::new(rhs));
        }
        Ok(expr)
    }

    fn parse_label_and(&mut self) -> Result<LabelExpr> {
        let mut expr = self.parse_label_not()?;
        while self.eat(&TokenKind::Amp) {
            let rhs = self.parse_label_not()?;
            expr = LabelExpr::And(Box::new(expr), Box::new(rhs));
        }
        Ok(expr)
    }

    fn parse_label_not(&mut self) -> Result<LabelExpr> {
        if self.eat(&TokenKind::Bang) {
            let inner = self.nested(Self::parse_label_not)?;
            return Ok(LabelExpr::Not(Box::new(inner)));
        }
        if self.eat(&TokenKind::Percent) {
            return Ok(LabelExpr::Any);
        }
        if let Some(dynamic) = self.parse_dynamic_labels()? {
            return Ok(LabelExpr::Dynamic(dynamic));
        }
        if self.eat(&TokenKind::LParen) {
            let inner = self.nested(|p| p.parse_label_or(true))?;
            self.expect(&TokenKind::RParen)?;
            return Ok(inner);
        }
        Ok(LabelExpr::Label(self.parse_name("a label name")?))
    }
}

impl Parser<'_> {
    /// At `$(`, `$all(` or `$any(` (any case): a dynamic label or type; `None` elsewhere.
    /// The expression inside is a full expression (a `|` there is an operator again).
    pub(super) fn parse_dynamic_labels(&mut self) -> Result<Option<DynamicLabels>> {
        let start = self.peek().span;
        let any = match self.kind_at(0) {
            TokenKind::Dollar => false,
            TokenKind::Parameter(name)
                if *self.kind_at(1) == TokenKind::LParen
                    && (name.eq_ignore_ascii_case("all") || name.eq_ignore_ascii_case("any")) =>
            {
                name.eq_ignore_ascii_case("any")
            }
            _ => return Ok(None),
        };
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let saved = std::mem::replace(&mut self.bar_ends_expr, false);
        let expr = self.nested(Self::parse_expr);
        self.bar_ends_expr = saved;
        let expr = expr?;
        self.expect(&TokenKind::RParen)?;
        Ok(Some(DynamicLabels {
            expr: Box::new(expr),
            any,
            span: self.span_from(start),
        }))
    }
}
