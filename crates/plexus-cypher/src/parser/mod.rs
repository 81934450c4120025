//! Parser: tokens → [`Statement`]. Hand-written recursive descent, with Pratt-style
//! precedence climbing for expressions (`expr.rs`) and a separate pattern parser (`pattern.rs`).
//!
//! ENTRY POINT
//! ===========
//! [`parse`] lexes the whole query, then parses
//!
//! ```text
//!   statement   = [EXPLAIN | PROFILE] query [';'] EOF
//!   query       = single_query { UNION [ALL] single_query }
//!   single_query = clause { clause }
//! ```
//!
//! and returns the first error as a [`ParseError`] (`line 1, column 10: expected ')' but found
//! 'RETURN'`). There is no error recovery: a query is either accepted whole or rejected at its
//! first mistake.
//!
//! NESTING LIMIT
//! =============
//! Every recursive path (expressions, queries inside `CALL {}` / `EXISTS {}` / `COUNT {}` /
//! `COLLECT {}`, `FOREACH`, parenthesised patterns) enters a level through `Parser::enter_level`, which
//! counts depth and fails cleanly with `NestingTooDeep` past [`MAX_NESTING_DEPTH`]. Operators
//! that deepen the tree without recursing (`1 + 1 + ... + 1` is left-nested) count too. So the
//! parser never overflows its stack, whatever the input, and the AST it builds is at most
//! about that deep, which bounds the printer, `Drop` and later recursive passes as well.
//!
//! STRUCTURAL RULES CHECKED HERE
//! ============================
//! Beyond the grammar, the parser rejects clause sequences the openCypher grammar cannot derive
//! — rules that need no knowledge of variables or the catalog (the binder checks the rest):
//!
//! - `RETURN` and `FINISH` are the last clause of a single query (`FINISH` in place of
//!   `RETURN`: the query runs, updates included, and returns no rows and no columns);
//! - a query (or `CALL {}` body) ends with `RETURN`, `FINISH`, an updating clause or a `CALL`;
//!   it cannot end with `MATCH`, `UNWIND` or `WITH`;
//! - a reading clause (`MATCH`, `UNWIND`, `CALL proc`) after an updating clause needs a `WITH`
//!   in between;
//! - `UNION` and `UNION ALL` cannot be mixed;
//! - `EXISTS { ... }`, `COUNT { ... }` and `COLLECT { ... }` cannot contain updating clauses
//!   nor `FINISH`; the first two need not end with RETURN, each branch of a `COLLECT` body
//!   ends with a RETURN of exactly one item (not `*`); `FOREACH` contains only updating ones;
//! - `WITH` items other than bare variables need an alias;
//! - a pattern is a predicate, not a value (`RETURN (a)-->(b)` is rejected; see `expr.rs`);
//! - `CALL proc` without parentheses and `YIELD *` are only allowed when the call is the whole
//!   query (a "standalone" call);
//! - `CALL { ... } IN TRANSACTIONS` only at the top level, not in a UNION, not after a write
//!   (see `call_in_transactions`).
//!
//! KEYWORDS AS NAMES
//! =================
//! Labels, relationship types, property keys, map keys and function/procedure names may be any
//! word, keywords included (`n.count`, `{end: 1}`, `exists(...)`). Variables may not be one of
//! the [`RESERVED`] words unless backquoted: this is what lets the parser know that `RETURN`
//! after an expression starts a clause.

mod call_in_transactions;
mod command;
mod copy;
mod expr;
mod graph;
mod pattern;
mod schema;
mod session;
mod table;
#[cfg(test)]
mod tests;
mod types;

use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{Token, TokenKind, tokenize};
pub use command::parse_command;

/// How deep expressions, patterns and subqueries may nest before parsing fails with
/// `NestingTooDeep`. It bounds both the parser's recursion and the depth of the tree it builds
/// (a left-nested chain `1 + 1 + ...` counts one level per operator), so code that walks the
/// AST recursively — the printer, `Drop`, the binder — is bounded too.
///
/// Stack cost at the limit (see STACK in `expr.rs`): up to about 1.1 MiB in optimised builds
/// (nested `CALL {}` is the most expensive form) and about 3.4 MiB unoptimised. Parse
/// untrusted input on a thread with a 4 MiB stack in debug builds.
pub const MAX_NESTING_DEPTH: usize = 256;

/// Words that cannot be used as a variable without backquotes.
#[rustfmt::skip]
pub const RESERVED: &[&str] = &[
    "ALL", "AND", "AS", "ASC", "ASCENDING", "BY", "CALL", "CASE", "CONTAINS", "CREATE", "DELETE",
    "DESC", "DESCENDING", "DETACH", "DISTINCT", "ELSE", "END", "ENDS", "EXISTS", "FALSE",
    "FOREACH", "IN", "IS", "LIMIT", "MATCH", "MERGE", "NOT", "NULL", "ON", "OPTIONAL", "OR",
    "ORDER", "REMOVE", "RETURN", "SET", "SKIP", "STARTS", "THEN", "TRUE", "UNION", "UNWIND",
    "WHEN", "WHERE", "WITH", "XOR", "YIELD",
];

/// True if `word` is a [`RESERVED`] word (ASCII case-insensitive).
pub fn is_reserved(word: &str) -> bool {
    RESERVED
        .iter()
        .any(|reserved| reserved.eq_ignore_ascii_case(word))
}

/// Parses one Cypher statement.
pub fn parse(query: &str) -> std::result::Result<Statement, ParseError> {
    let tokens = tokenize(query)?;
    let mut parser = Parser::new(query, tokens);
    parser.parse_statement()
}

type Result<T> = std::result::Result<T, ParseError>;

/// Where a query appears; decides which clause sequences are legal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QueryContext {
    TopLevel,
    CallSubquery,
    /// The body of `EXISTS { ... }`.
    Exists,
    /// The body of `COUNT { ... }`.
    Count,
    /// The body of `COLLECT { ... }`.
    Collect,
}

impl QueryContext {
    /// For the body of a subquery expression, its name in messages: such a query reads only,
    /// and need not end with RETURN.
    fn expression_subquery(self) -> Option<&'static str> {
        match self {
            QueryContext::Exists => Some("an EXISTS subquery"),
            QueryContext::Count => Some("a COUNT subquery"),
            QueryContext::Collect => Some("a COLLECT subquery"),
            QueryContext::TopLevel | QueryContext::CallSubquery => None,
        }
    }
}

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token>,
    /// Index of the next unconsumed token; `tokens[pos]` always exists (the last is `Eof`).
    pos: usize,
    /// For each bracket token, the index of its partner, or `usize::MAX` if unbalanced.
    partner: Vec<usize>,
    /// Current nesting depth, bounded by `MAX_NESTING_DEPTH`.
    depth: usize,
    /// True while parsing an expression that a `|` ends (the list and `WHERE` of a
    /// comprehension, `reduce`, `FOREACH`): there an unparenthesised `|` after `x:A` is that
    /// delimiter, not a label disjunction; `x:(A|B)` still is one.
    bar_ends_expr: bool,
}

impl<'a> Parser<'a> {
    fn new(source: &'a str, tokens: Vec<Token>) -> Self {
        debug_assert!(matches!(
            tokens.last(),
            Some(Token {
                kind: TokenKind::Eof,
                ..
            })
        ));
        let partner = match_brackets(&tokens);
        Self {
            source,
            tokens,
            pos: 0,
            partner,
            depth: 0,
            bar_ends_expr: false,
        }
    }

    // ----- cursor -------------------------------------------------------------------------

    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    /// The token `n` ahead of the cursor (the final `Eof` when past the end).
    fn peek_at(&self, n: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)]
    }

    fn kind_at(&self, n: usize) -> &TokenKind {
        &self.peek_at(n).kind
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek().kind == *kind
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kind: &TokenKind) -> Result<Span> {
        if self.at(kind) {
            Ok(self.advance().span)
        } else {
            Err(self.unexpected(&kind.describe()))
        }
    }

    fn at_keyword(&self, keyword: &str) -> bool {
        self.peek().is_keyword(keyword)
    }

    fn keyword_at(&self, n: usize, keyword: &str) -> bool {
        self.peek_at(n).is_keyword(keyword)
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        if self.at_keyword(keyword) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<Span> {
        if self.at_keyword(keyword) {
            Ok(self.advance().span)
        } else {
            Err(self.unexpected(&format!("'{keyword}'")))
        }
    }

    /// The span from `start` to the end of the last consumed token.
    fn span_from(&self, start: Span) -> Span {
        let end = if self.pos == 0 {
            start.end
        } else {
            self.tokens[self.pos - 1].span.end
        };
        start.to(Span::new(end, end, 0, 0))
    }

    /// `[IF NOT EXISTS]`.
    pub(super) fn eat_if_not_exists(&mut self) -> Result<bool> {
        let present = self.at_keyword("IF") && self.keyword_at(1, "NOT");
        if present {
            self.advance();
            self.advance();
            self.expect_keyword("EXISTS")?;
        }
        Ok(present)
    }

    /// `[IF EXISTS]`.
    pub(super) fn eat_if_exists(&mut self) -> bool {
        let present = self.at_keyword("IF") && self.keyword_at(1, "EXISTS");
        if present {
            self.advance();
            self.advance();
        }
        present
    }

    /// The end of a statement: an optional `;`, then nothing; otherwise an error saying what
    /// was `expected` instead of the token found.
    fn expect_statement_end(&mut self, expected: &str) -> Result<()> {
        self.eat(&TokenKind::Semicolon);
        if self.at(&TokenKind::Eof) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// An error at the current token: "expected <expected> but found <token>".
    fn unexpected(&self, expected: &str) -> ParseError {
        let token = self.peek();
        ParseError::new(
            ParseErrorKind::Unexpected {
                expected: expected.to_string(),
                found: token.kind.describe(),
            },
            token.span,
        )
    }

    /// Runs `f` one nesting level deeper, failing cleanly past `MAX_NESTING_DEPTH`.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.enter_level()?;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Goes one nesting level deeper, failing cleanly past `MAX_NESTING_DEPTH`. The caller
    /// restores `depth` afterwards.
    fn enter_level(&mut self) -> Result<()> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(ParseError::new(
                ParseErrorKind::NestingTooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
                self.peek().span,
            ));
        }
        self.depth += 1;
        Ok(())
    }

    // ----- names --------------------------------------------------------------------------

    /// True if the token `n` ahead can be a variable: a non-reserved word or a quoted name.
    fn variable_at(&self, n: usize) -> bool {
        self.variable_abs(self.pos + n)
    }

    /// True if the token `n` ahead can be a label, key, type or function name (any word).
    fn name_at(&self, n: usize) -> bool {
        matches!(
            self.kind_at(n),
            TokenKind::Ident(_) | TokenKind::QuotedIdent(_)
        )
    }

    fn parse_variable(&mut self) -> Result<Ident> {
        if !self.variable_at(0) {
            return Err(self.unexpected("a variable name"));
        }
        Ok(self.take_ident())
    }

    /// A label, relationship type, property key, map key or function name part.
    fn parse_name(&mut self, what: &str) -> Result<Ident> {
        if !self.name_at(0) {
            return Err(self.unexpected(what));
        }
        Ok(self.take_ident())
    }

    fn take_ident(&mut self) -> Ident {
        let token = self.advance();
        let name = match token.kind {
            TokenKind::Ident(name) | TokenKind::QuotedIdent(name) => name,
            other => unreachable!("take_ident on {other:?}"),
        };
        Ident {
            name,
            span: token.span,
        }
    }

    /// `name { '.' name }` — a function or procedure name.
    fn parse_qualified_name(&mut self) -> Result<QualifiedName> {
        let mut parts = vec![self.parse_name("a name")?];
        while self.at(&TokenKind::Dot) {
            self.advance();
            parts.push(self.parse_name("a name")?);
        }
        let name = parts.pop().expect("at least one part was parsed");
        Ok(QualifiedName {
            namespace: parts,
            name,
        })
    }

    // ----- statements and queries ---------------------------------------------------------

    fn parse_statement(&mut self) -> Result<Statement> {
        let start = self.peek().span;
        let mode = if self.eat_keyword("EXPLAIN") {
            if self.eat_keyword("VERBOSE") {
                QueryMode::ExplainVerbose
            } else {
                QueryMode::Explain
            }
        } else if self.eat_keyword("PROFILE") {
            QueryMode::Profile
        } else {
            QueryMode::Normal
        };
        let graph = if self.eat_keyword("USE") {
            // `USE MATCH …` forgot the name: a clause word is a graph name only in backticks.
            const CLAUSES: [&str; 9] = [
                "MATCH", "OPTIONAL", "RETURN", "WITH", "UNWIND", "CREATE", "MERGE", "CALL", "LOAD",
            ];
            if CLAUSES.iter().any(|word| self.at_keyword(word)) {
                return Err(self.unexpected("the name of an attached graph"));
            }
            Some(self.parse_name("the name of an attached graph")?)
        } else {
            None
        };
        let query = self.parse_query(QueryContext::TopLevel)?;
        self.expect_statement_end("a clause, UNION or end of input")?;
        Ok(Statement {
            mode,
            graph,
            query,
            span: self.span_from(start),
        })
    }

    fn parse_query(&mut self, context: QueryContext) -> Result<Query> {
        self.nested(|p| {
            let start = p.peek().span;
            let first = p.parse_single_query(context)?;
            let mut unions: Vec<UnionPart> = Vec::new();
            while p.at_keyword("UNION") {
                let union_start = p.advance().span;
                let all = p.eat_keyword("ALL");
                let previous_all = unions.last().map_or(all, |part| part.all);
                if all != previous_all {
                    return Err(ParseError::new(
                        ParseErrorKind::InvalidClauseComposition {
                            reason: "UNION and UNION ALL cannot be mixed".to_string(),
                        },
                        union_start,
                    ));
                }
                let query = p.parse_single_query(context)?;
                unions.push(UnionPart {
                    all,
                    query,
                    span: p.span_from(union_start),
                });
            }
            let query = Query {
                first,
                unions,
                span: p.span_from(start),
            };
            p.check_standalone_calls(&query, context)?;
            p.check_in_transactions_union(&query)?;
            Ok(query)
        })
    }

    fn at_clause_start(&self) -> bool {
        const CLAUSE_KEYWORDS: &[&str] = &[
            "MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CREATE", "MERGE", "SET", "REMOVE",
            "DELETE", "DETACH", "CALL", "FOREACH",
        ];
        CLAUSE_KEYWORDS
            .iter()
            .any(|keyword| self.at_keyword(keyword))
            || self.at_finish()
            || self.at_load_csv()
    }

    /// True at `LOAD CSV` (`load` is not reserved, so the clause is the two words).
    fn at_load_csv(&self) -> bool {
        self.at_keyword("LOAD") && self.keyword_at(1, "CSV")
    }

    /// True at the `FINISH` clause. `finish` is not reserved: `finish = (a)-->(b)` at the
    /// start of a subquery body names a path, so `FINISH` followed by `=` is not the clause.
    fn at_finish(&self) -> bool {
        self.at_keyword("FINISH") && *self.kind_at(1) != TokenKind::Eq
    }

    fn parse_single_query(&mut self, context: QueryContext) -> Result<SingleQuery> {
        let start = self.peek().span;
        if !self.at_clause_start() {
            return Err(self.unexpected("a clause"));
        }
        let mut clauses: Vec<Clause> = Vec::new();
        // The last updating clause not yet followed by WITH, for the reading-after-update rule.
        let mut pending_update: Option<&'static str> = None;
        // Whether an earlier clause writes (for `CALL { ... } IN TRANSACTIONS`).
        let mut wrote = false;
        while self.at_clause_start() {
            let clause = self.parse_clause()?;
            self.check_in_transactions_clause(&clause, context, wrote)?;
            wrote |= call_in_transactions::clause_writes(&clause);
            if let Some(subquery) = context.expression_subquery()
                && clause.kind.is_updating()
            {
                return Err(composition_error(
                    clause.span,
                    format!("{subquery} cannot contain {}", clause.kind.name()),
                ));
            }
            match &clause.kind {
                ClauseKind::Match(_)
                | ClauseKind::Unwind(_)
                | ClauseKind::LoadCsv(_)
                | ClauseKind::Call(_) => {
                    if let Some(update) = pending_update {
                        return Err(composition_error(
                            clause.span,
                            format!(
                                "WITH is required between {update} and {}",
                                clause.kind.name()
                            ),
                        ));
                    }
                }
                ClauseKind::With(_) => pending_update = None,
                kind if kind.is_updating() => pending_update = Some(kind.name()),
                _ => {}
            }
            if let (Some(subquery), ClauseKind::Finish) =
                (context.expression_subquery(), &clause.kind)
            {
                return Err(composition_error(
                    clause.span,
                    format!("{subquery} cannot contain FINISH"),
                ));
            }
            let ends_query = matches!(clause.kind, ClauseKind::Return(_) | ClauseKind::Finish);
            let name = clause.kind.name();
            clauses.push(clause);
            if ends_query {
                if self.at_clause_start() {
                    return Err(composition_error(
                        self.peek().span,
                        format!("{name} can only be the last clause of a query"),
                    ));
                }
                break;
            }
        }
        let last = clauses.last().expect("at least one clause was parsed");
        if context == QueryContext::TopLevel {
            self.check_in_transactions_last(last)?;
        }
        if context == QueryContext::Collect {
            let single_column = match &last.kind {
                ClauseKind::Return(ret) => !ret.projection.star && ret.projection.items.len() == 1,
                _ => false,
            };
            if !single_column {
                return Err(composition_error(
                    last.span,
                    "a COLLECT subquery must end with a single return column".to_string(),
                ));
            }
        }
        let ends_well = matches!(
            last.kind,
            ClauseKind::Return(_)
                | ClauseKind::Finish
                | ClauseKind::Call(_)
                | ClauseKind::CallSubquery(_)
                | ClauseKind::CallInTransactions(_)
        ) || last.kind.is_updating();
        if context.expression_subquery().is_none() && !ends_well {
            return Err(composition_error(
                last.span,
                format!(
                    "a query cannot end with {}; it must end with RETURN, CALL or an updating clause",
                    last.kind.name()
                ),
            ));
        }
        Ok(SingleQuery {
            clauses,
            span: self.span_from(start),
        })
    }

    /// `CALL proc` without parentheses and `YIELD *` are only legal in a standalone call: a
    /// top-level query that consists of that one CALL clause.
    fn check_standalone_calls(&self, query: &Query, context: QueryContext) -> Result<()> {
        let standalone = context == QueryContext::TopLevel
            && query.unions.is_empty()
            && query.first.clauses.len() == 1;
        if standalone {
            return Ok(());
        }
        let single_queries =
            std::iter::once(&query.first).chain(query.unions.iter().map(|u| &u.query));
        for clause in single_queries.flat_map(|single| &single.clauses) {
            let ClauseKind::Call(call) = &clause.kind else {
                continue;
            };
            if call.args.is_none() {
                return Err(ParseError::new(
                    ParseErrorKind::ImplicitProcedureArguments,
                    clause.span,
                ));
            }
            if let Some(YieldClause {
                items: YieldItems::Star,
                span,
                ..
            }) = &call.yield_clause
            {
                return Err(ParseError::new(
                    ParseErrorKind::Unexpected {
                        expected: "YIELD with named fields ('YIELD *' needs a standalone CALL)"
                            .to_string(),
                        found: "'YIELD *'".to_string(),
                    },
                    *span,
                ));
            }
        }
        Ok(())
    }

    // ----- clauses ------------------------------------------------------------------------

    /// Dispatches on the clause keyword through a function pointer, so that this frame holds
    /// a single clause-sized temporary: `CALL { ... }` recurses through here, and the nesting
    /// limit needs every level to be cheap.
    fn parse_clause(&mut self) -> Result<Clause> {
        let start = self.peek().span;
        type ClauseParser<'p> = fn(&mut Parser<'p>) -> Result<ClauseKind>;
        let form: ClauseParser<'a> = match self.kind_at(0) {
            TokenKind::Ident(word) => match word.to_ascii_uppercase().as_str() {
                "MATCH" | "OPTIONAL" => Self::parse_match,
                "UNWIND" => Self::parse_unwind,
                "LOAD" => Self::parse_load_csv,
                "WITH" => Self::parse_with,
                "RETURN" => Self::parse_return,
                "CREATE" => Self::parse_create,
                "MERGE" => Self::parse_merge,
                "SET" => Self::parse_set,
                "REMOVE" => Self::parse_remove,
                "DELETE" | "DETACH" => Self::parse_delete,
                "CALL" => Self::parse_call,
                "FOREACH" => Self::parse_foreach,
                "FINISH" => Self::parse_finish,
                _ => return Err(self.unexpected("a clause")),
            },
            _ => return Err(self.unexpected("a clause")),
        };
        let kind = form(self)?;
        Ok(Clause {
            kind,
            span: self.span_from(start),
        })
    }

    fn parse_comma_separated<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut items = vec![item(self)?];
        while self.eat(&TokenKind::Comma) {
            items.push(item(self)?);
        }
        Ok(items)
    }

    fn parse_optional_where(&mut self) -> Result<Option<Expr>> {
        if self.eat_keyword("WHERE") {
            Ok(Some(self.parse_predicate()?))
        } else {
            Ok(None)
        }
    }

    fn parse_finish(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("FINISH")?;
        Ok(ClauseKind::Finish)
    }

    fn parse_match(&mut self) -> Result<ClauseKind> {
        let optional = self.eat_keyword("OPTIONAL");
        self.expect_keyword("MATCH")?;
        let pattern = self.parse_pattern()?;
        let predicate = self.parse_optional_where()?;
        Ok(ClauseKind::Match(Match {
            optional,
            pattern,
            predicate,
        }))
    }

    fn parse_unwind(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("UNWIND")?;
        let expr = self.parse_expr()?;
        self.expect_keyword("AS")?;
        let variable = self.parse_variable()?;
        Ok(ClauseKind::Unwind(Unwind { expr, variable }))
    }

    /// `LOAD CSV [WITH HEADERS] FROM <expr> AS <variable> [FIELDTERMINATOR <string>]`.
    fn parse_load_csv(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("LOAD")?;
        self.expect_keyword("CSV")?;
        let with_headers = self.eat_keyword("WITH");
        if with_headers {
            self.expect_keyword("HEADERS")?;
        }
        self.expect_keyword("FROM")?;
        let source = self.parse_expr()?;
        self.expect_keyword("AS")?;
        let variable = self.parse_variable()?;
        let field_terminator = if self.eat_keyword("FIELDTERMINATOR") {
            let token = self.peek().clone();
            let TokenKind::String(value) = token.kind else {
                return Err(self.unexpected("a string literal after FIELDTERMINATOR"));
            };
            self.advance();
            Some(StringLiteral {
                value,
                span: token.span,
            })
        } else {
            None
        };
        Ok(ClauseKind::LoadCsv(LoadCsv {
            with_headers,
            source,
            variable,
            field_terminator,
        }))
    }

    fn parse_with(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("WITH")?;
        let projection = self.parse_projection()?;
        let predicate = self.parse_optional_where()?;
        Ok(ClauseKind::With(With {
            projection,
            predicate,
        }))
    }

    fn parse_return(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("RETURN")?;
        Ok(ClauseKind::Return(Return {
            projection: self.parse_projection()?,
        }))
    }

    fn parse_create(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("CREATE")?;
        Ok(ClauseKind::Create(Create {
            pattern: self.parse_pattern()?,
        }))
    }

    fn parse_set(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("SET")?;
        Ok(ClauseKind::Set(SetClause {
            items: self.parse_set_items()?,
        }))
    }

    fn parse_delete(&mut self) -> Result<ClauseKind> {
        let detach = self.eat_keyword("DETACH");
        self.expect_keyword("DELETE")?;
        let exprs = self.parse_comma_separated(Self::parse_expr)?;
        Ok(ClauseKind::Delete(Delete { detach, exprs }))
    }

    /// `CALL { <query> } [IN TRANSACTIONS ...]` or `CALL ns.proc(...) [YIELD ...]`.
    fn parse_call(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("CALL")?;
        let imports = if self.at(&TokenKind::LParen) {
            Some(self.parse_subquery_imports()?)
        } else {
            None
        };
        if imports.is_some() || self.at(&TokenKind::LBrace) {
            self.expect(&TokenKind::LBrace)?;
            let query = self.parse_query(QueryContext::CallSubquery)?;
            self.expect(&TokenKind::RBrace)?;
            if self.at_in_transactions() {
                return self.parse_in_transactions(imports, query);
            }
            return Ok(ClauseKind::CallSubquery(Box::new(CallSubquery {
                imports,
                query,
            })));
        }
        Ok(ClauseKind::Call(self.parse_procedure_call()?))
    }

    /// The variable scope clause of `CALL (x, y) { ... }`: `(*)`, `()` or variables.
    fn parse_subquery_imports(&mut self) -> Result<SubqueryImports> {
        self.expect(&TokenKind::LParen)?;
        if self.eat(&TokenKind::Star) {
            self.expect(&TokenKind::RParen)?;
            return Ok(SubqueryImports::All);
        }
        if self.eat(&TokenKind::RParen) {
            return Ok(SubqueryImports::Variables(Vec::new()));
        }
        let names = self.parse_comma_separated(|p| p.parse_variable())?;
        self.expect(&TokenKind::RParen)?;
        Ok(SubqueryImports::Variables(names))
    }

    /// The body of WITH or RETURN. An unaliased expression in WITH is the binder's error
    /// (NoExpressionAlias), reported after ORDER BY's own checks as the TCK orders them.
    fn parse_projection(&mut self) -> Result<Projection> {
        let distinct = self.eat_keyword("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(&TokenKind::Star) {
            star = true;
            if self.eat(&TokenKind::Comma) {
                items = self.parse_comma_separated(|p| p.parse_projection_item())?;
            }
        } else {
            items = self.parse_comma_separated(|p| p.parse_projection_item())?;
        }
        let mut order_by = Vec::new();
        if self.eat_keyword("ORDER") {
            self.expect_keyword("BY")?;
            order_by = self.parse_comma_separated(Self::parse_sort_item)?;
        }
        let skip = if self.eat_keyword("SKIP") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let limit = if self.eat_keyword("LIMIT") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        Ok(Projection {
            distinct,
            star,
            items,
            order_by,
            skip,
            limit,
        })
    }

    fn parse_projection_item(&mut self) -> Result<ProjectionItem> {
        let start = self.peek().span;
        let expr = self.parse_expr()?;
        let alias = if self.eat_keyword("AS") {
            Some(self.parse_variable()?)
        } else {
            None
        };
        Ok(ProjectionItem {
            expr,
            alias,
            span: self.span_from(start),
        })
    }

    fn parse_sort_item(&mut self) -> Result<SortItem> {
        let start = self.peek().span;
        let expr = self.parse_expr()?;
        let order = if self.eat_keyword("DESC") || self.eat_keyword("DESCENDING") {
            SortOrder::Descending
        } else {
            // ASC is the default; accept it when written.
            let _ = self.eat_keyword("ASC") || self.eat_keyword("ASCENDING");
            SortOrder::Ascending
        };
        Ok(SortItem {
            expr,
            order,
            span: self.span_from(start),
        })
    }

    fn parse_merge(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("MERGE")?;
        let pattern = self.parse_pattern_part()?;
        let mut actions = Vec::new();
        while self.at_keyword("ON") {
            let start = self.advance().span;
            let on = if self.eat_keyword("CREATE") {
                MergeTrigger::OnCreate
            } else if self.eat_keyword("MATCH") {
                MergeTrigger::OnMatch
            } else {
                return Err(self.unexpected("CREATE or MATCH"));
            };
            self.expect_keyword("SET")?;
            let items = self.parse_set_items()?;
            actions.push(MergeAction {
                on,
                items,
                span: self.span_from(start),
            });
        }
        Ok(ClauseKind::Merge(Merge { pattern, actions }))
    }

    fn parse_set_items(&mut self) -> Result<Vec<SetItem>> {
        self.parse_comma_separated(Self::parse_set_item)
    }

    /// `n.key = expr`, `n = map`, `n += map` or `n:Label...`. The target is parsed as a
    /// postfix expression and then taken apart.
    fn parse_set_item(&mut self) -> Result<SetItem> {
        let start = self.peek().span;
        let target = self.parse_expr_bp(Precedence::Postfix)?;
        let kind = match target.kind {
            ExprKind::Property { expr, key } => {
                self.expect(&TokenKind::Eq)?;
                SetItemKind::Property {
                    entity: *expr,
                    key,
                    value: self.parse_expr()?,
                }
            }
            ExprKind::Variable(variable) => {
                if self.eat(&TokenKind::PlusEq) {
                    SetItemKind::Merge {
                        variable,
                        value: self.parse_expr()?,
                    }
                } else if self.eat(&TokenKind::Eq) {
                    SetItemKind::Replace {
                        variable,
                        value: self.parse_expr()?,
                    }
                } else {
                    return Err(self.unexpected("'=', '+=' or ':'"));
                }
            }
            kind @ (ExprKind::HasLabels { .. } | ExprKind::LabelTest { .. }) => {
                let (variable, labels, dynamic) = label_target(kind, target.span, "SET")?;
                SetItemKind::Labels {
                    variable,
                    labels,
                    dynamic,
                }
            }
            _ => return Err(bad_target(target.span, "SET")),
        };
        Ok(SetItem {
            kind,
            span: self.span_from(start),
        })
    }

    fn parse_remove(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("REMOVE")?;
        let items = self.parse_comma_separated(|p| {
            let start = p.peek().span;
            let target = p.parse_expr_bp(Precedence::Postfix)?;
            let kind = match target.kind {
                ExprKind::Property { expr, key } => RemoveItemKind::Property { entity: *expr, key },
                kind @ (ExprKind::HasLabels { .. } | ExprKind::LabelTest { .. }) => {
                    let (variable, labels, dynamic) = label_target(kind, target.span, "REMOVE")?;
                    RemoveItemKind::Labels {
                        variable,
                        labels,
                        dynamic,
                    }
                }
                _ => return Err(bad_target(target.span, "REMOVE")),
            };
            Ok(RemoveItem {
                kind,
                span: p.span_from(start),
            })
        })?;
        Ok(ClauseKind::Remove(Remove { items }))
    }

    fn parse_procedure_call(&mut self) -> Result<ProcedureCall> {
        let procedure = self.parse_qualified_name()?;
        let args = if self.eat(&TokenKind::LParen) {
            let args = if self.at(&TokenKind::RParen) {
                Vec::new()
            } else {
                self.parse_comma_separated(Self::parse_expr)?
            };
            self.expect(&TokenKind::RParen)?;
            Some(args)
        } else {
            None
        };
        let yield_clause = if self.at_keyword("YIELD") {
            let start = self.advance().span;
            let items = if self.eat(&TokenKind::Star) {
                YieldItems::Star
            } else {
                YieldItems::Fields(self.parse_comma_separated(|p| {
                    let field = p.parse_name("a procedure result field")?;
                    let alias = if p.eat_keyword("AS") {
                        Some(p.parse_variable()?)
                    } else {
                        None
                    };
                    Ok(YieldItem { field, alias })
                })?)
            };
            let predicate = self.parse_optional_where()?;
            Some(YieldClause {
                items,
                predicate,
                span: self.span_from(start),
            })
        } else {
            None
        };
        Ok(ProcedureCall {
            procedure,
            args,
            yield_clause,
        })
    }

    fn parse_foreach(&mut self) -> Result<ClauseKind> {
        self.expect_keyword("FOREACH")?;
        self.expect(&TokenKind::LParen)?;
        let variable = self.parse_variable()?;
        self.expect_keyword("IN")?;
        let list = self.with_bar_ending_expr(Self::parse_expr)?;
        self.expect(&TokenKind::Pipe)?;
        let clauses = self.nested(|p| {
            let mut clauses = Vec::new();
            loop {
                let clause = p.parse_clause()?;
                if !clause.kind.is_updating() {
                    return Err(composition_error(
                        clause.span,
                        format!(
                            "FOREACH can only contain updating clauses, not {}",
                            clause.kind.name()
                        ),
                    ));
                }
                clauses.push(clause);
                if p.at(&TokenKind::RParen) {
                    return Ok(clauses);
                }
            }
        })?;
        self.expect(&TokenKind::RParen)?;
        Ok(ClauseKind::Foreach(Foreach {
            variable,
            list,
            clauses,
        }))
    }
}

fn composition_error(span: Span, reason: String) -> ParseError {
    ParseError::new(ParseErrorKind::InvalidClauseComposition { reason }, span)
}

/// The variable and labels of `SET n:A:$(expr)` / `REMOVE …` (`kind` a label test of
/// `span`); `SET n:A|B` is refused: only plain and `$(…)` labels can be set or removed.
fn label_target(
    kind: ExprKind,
    span: Span,
    clause: &str,
) -> Result<(Ident, Vec<Ident>, Vec<DynamicLabels>)> {
    let (entity, settable) = match kind {
        ExprKind::HasLabels { expr, labels } => (*expr, Some((labels, Vec::new()))),
        ExprKind::LabelTest { expr, label_expr } => (*expr, label_expr.settable()),
        _ => return Err(bad_target(span, clause)),
    };
    let ExprKind::Variable(variable) = entity.kind else {
        return Err(bad_target(entity.span, clause));
    };
    let Some((labels, dynamic)) = settable else {
        return Err(ParseError::new(
            ParseErrorKind::Unexpected {
                expected: format!("plain labels to {clause} (`n:A:B`, `n:A&B` or `n:$(expr)`)"),
                found: "a label expression".to_string(),
            },
            span,
        ));
    };
    Ok((variable, labels, dynamic))
}

fn bad_target(span: Span, clause: &str) -> ParseError {
    ParseError::new(
        ParseErrorKind::Unexpected {
            expected: format!("a property, variable or labels to {clause}"),
            found: "an expression".to_string(),
        },
        span,
    )
}

/// For every bracket token, the index of its partner (`usize::MAX` if unbalanced). Lets the
/// parser look past a bracketed group in O(1) when deciding whether `(` starts a pattern.
fn match_brackets(tokens: &[Token]) -> Vec<usize> {
    let mut partner = vec![usize::MAX; tokens.len()];
    let mut open: Vec<(usize, &TokenKind)> = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        let closes = match token.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => {
                open.push((index, &token.kind));
                continue;
            }
            TokenKind::RParen => TokenKind::LParen,
            TokenKind::RBracket => TokenKind::LBracket,
            TokenKind::RBrace => TokenKind::LBrace,
            _ => continue,
        };
        if let Some(&(opener, kind)) = open.last()
            && *kind == closes
        {
            open.pop();
            partner[opener] = index;
            partner[index] = opener;
        }
    }
    partner
}
