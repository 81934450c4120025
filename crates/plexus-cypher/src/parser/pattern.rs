//! Pattern parsing: `(a:Person {name: $n})-[r:KNOWS|LIKES*1..3]->(b)`.
//!
//! GRAMMAR
//! =======
//! ```text
//!   pattern      = part { ',' part }
//!   part         = [variable '='] ( shortestPath '(' element ')'
//!                                 | allShortestPaths '(' element ')'
//!                                 | [selector] ( element | '(' element [WHERE expr] ')' ) )
//!   selector     = ANY SHORTEST [PATH|PATHS] | ALL SHORTEST [PATH|PATHS]
//!                | SHORTEST 1 [PATH|PATHS] | SHORTEST [1] (GROUP|GROUPS) | ALL [PATH|PATHS]
//!   element      = node { (relationship [quantifier] | group) node } | '(' element ')'
//!   group        = '(' node relationship node [WHERE expr] ')' quantifier
//!   node         = '(' [variable] { ':' label } [map | $param] ')'
//!   relationship = ['<'] '-' ['[' [variable] [':' type { '|' [':'] type }]
//!                                 ['*' [min] ['..' [max]]] [map | $param] ']'] '-' ['>']
//!   quantifier   = '{' [min] ',' [max] '}' | '{' n '}' | '+' | '*'
//! ```
//!
//! GQL PATH PATTERNS (the Neo4j 5 subset)
//! =====================================
//! A quantified relationship `-[r:R]->{1,3}` is the variable-length `-[r:R*1..3]->` (`+` is
//! `{1,}`, `*` is `{0,}`; `r` is bound to the list of relationships, as Neo4j does under its
//! default match mode). `ANY SHORTEST` (or `SHORTEST 1`) is `shortestPath`, `ALL SHORTEST`
//! (or `SHORTEST 1 GROUPS`) `allShortestPaths`, per pair of end nodes; `ALL` is the default
//! (every match). With a selector the MATCH's WHERE filters the selected paths afterwards, and
//! a WHERE inside the parenthesized path pattern is part of the search (Neo4j's post- and
//! pre-filters). A quantified group of one relationship, `(a)((x:A)-[r:R]->(y) WHERE
//! …){2,5}(b)` (or at the start of a part, its outer ends then anonymous), is that
//! relationship with the quantifier as its length and the group's nodes and WHERE kept in
//! `RelationshipPattern::group` (see `plexus_plan::bind::group`). Outside the subset —
//! `SHORTEST k` for k > 1, `SHORTEST k GROUPS`, `ANY k`, counts from parameters, groups of
//! more than one relationship, a parenthesized pattern inside a pattern without a quantifier
//! — the parser answers `NotSupported` at the construct's position.
//!
//! Arrows arrive from the lexer as separate `<`, `-`, `>` tokens (see the lexer docs), so
//! `<-->` is `<` `-` `-` `>`; whitespace between them is allowed, as in the openCypher grammar.
//!
//! STRICT CONTINUATION
//! ===================
//! In a clause (`MATCH`, `CREATE`, ...) a `-` or `<` after a node always continues the
//! pattern, so `MATCH (a)-(b)` reports the missing dash. Inside an expression the same tokens
//! could be arithmetic or a comparison (`(a)-->(b) < -1`, `($p) - [1]`), so there a
//! relationship is only read when it unmistakably starts one: `--(`, `-->`, `<--`, or `-[` /
//! `<-[` followed by something shaped like a relationship detail and then `]-(` or `]->`.

use super::{Parser, Result};
use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;

impl Parser<'_> {
    pub(super) fn parse_pattern(&mut self) -> Result<Pattern> {
        let start = self.peek().span;
        let parts = self.parse_comma_separated(Self::parse_pattern_part)?;
        Ok(Pattern {
            parts,
            span: self.span_from(start),
        })
    }

    pub(super) fn parse_pattern_part(&mut self) -> Result<PatternPart> {
        let start = self.peek().span;
        let variable = if self.variable_at(0) && *self.kind_at(1) == TokenKind::Eq {
            let variable = self.take_ident();
            self.advance();
            Some(variable)
        } else {
            None
        };
        let function = if *self.kind_at(1) == TokenKind::LParen {
            if self.at_keyword("shortestPath") {
                Some(ShortestPath::Single)
            } else if self.at_keyword("allShortestPaths") {
                Some(ShortestPath::All)
            } else {
                None
            }
        } else {
            None
        };
        if function.is_some() {
            self.advance();
            self.advance();
            let element = self.parse_pattern_element(false)?;
            self.expect(&TokenKind::RParen)?;
            return Ok(PatternPart {
                variable,
                shortest: function,
                selector: false,
                predicate: None,
                element,
                span: self.span_from(start),
            });
        }
        let (shortest, selector) = match self.parse_path_selector()? {
            Some(shortest) => (shortest, true),
            None => (None, false),
        };
        let (element, predicate) = self.parse_path_pattern()?;
        Ok(PatternPart {
            variable,
            shortest,
            selector,
            predicate,
            element,
            span: self.span_from(start),
        })
    }

    /// A GQL path selector (see GQL PATH PATTERNS): `Some(None)` for `ALL` (every match),
    /// `Some(Some(..))` for a shortest-path selector, `None` without one.
    fn parse_path_selector(&mut self) -> Result<Option<Option<ShortestPath>>> {
        let not_supported = |what: &str, span| {
            Err(ParseError::new(
                ParseErrorKind::NotSupported {
                    what: what.to_string(),
                },
                span,
            ))
        };
        let start = self.peek().span;
        let selected = if self.at_keyword("ANY") && !self.at_part_start_node() {
            self.advance();
            if !self.eat_keyword("SHORTEST") {
                return not_supported("the ANY path selector (use ANY SHORTEST)", start);
            }
            Some(ShortestPath::Single)
        } else if self.at_keyword("ALL") && !self.at_part_start_node() {
            self.advance();
            if self.eat_keyword("SHORTEST") {
                Some(ShortestPath::All)
            } else {
                self.eat_paths_keyword();
                return Ok(Some(None));
            }
        } else if self.at_keyword("SHORTEST") && !self.at_part_start_node() {
            self.advance();
            let count = match *self.kind_at(0) {
                TokenKind::Integer(k) => {
                    self.advance();
                    Some(k)
                }
                TokenKind::Parameter(_) => {
                    return not_supported("a path count from a parameter", self.peek().span);
                }
                _ => None,
            };
            self.eat_paths_keyword();
            let groups = self.eat_keyword("GROUP") || self.eat_keyword("GROUPS");
            match (count, groups) {
                (None | Some(1), true) => Some(ShortestPath::All),
                (Some(1), false) => Some(ShortestPath::Single),
                (None, false) => {
                    return not_supported("SHORTEST without a path count (use SHORTEST 1)", start);
                }
                (Some(_), true) => {
                    return not_supported("SHORTEST k GROUPS for k other than 1", start);
                }
                (Some(_), false) => {
                    return not_supported(
                        "SHORTEST k for k other than 1 (k shortest paths)",
                        start,
                    );
                }
            }
        } else {
            return Ok(None);
        };
        self.eat_paths_keyword();
        Ok(Some(selected))
    }

    /// Whether the token after a selector keyword starts the element itself (the keyword is
    /// then not a selector).
    fn at_part_start_node(&self) -> bool {
        matches!(self.kind_at(1), TokenKind::Eq | TokenKind::Comma)
    }

    fn eat_paths_keyword(&mut self) {
        let _ = self.eat_keyword("PATHS") || self.eat_keyword("PATH");
    }

    /// A part's element, or a parenthesized path pattern with its own WHERE: `((a)-->(b)
    /// WHERE ...)`. A parenthesized pattern followed by a quantifier is a quantified group,
    /// outside the supported subset.
    fn parse_path_pattern(&mut self) -> Result<(PatternElement, Option<Expr>)> {
        if !(self.at(&TokenKind::LParen) && *self.kind_at(1) == TokenKind::LParen) {
            return Ok((self.parse_pattern_element(false)?, None));
        }
        if self.group_at_start() {
            // `((x)-[r]->(y)){m,n} [(b) …]`: the group's outer ends are anonymous nodes
            // unless a node follows.
            let start = self.peek().span;
            let relationship = self.parse_quantified_group()?;
            let anonymous = |span| NodePattern {
                variable: None,
                labels: Vec::new(),
                label_expr: None,
                properties: None,
                span,
            };
            let node = if self.at(&TokenKind::LParen) {
                self.parse_node_pattern()?
            } else {
                anonymous(relationship.span)
            };
            let mut chain = vec![PatternStep { relationship, node }];
            self.parse_steps(false, &mut chain)?;
            let element = PatternElement {
                start: anonymous(start),
                chain,
                span: self.span_from(start),
            };
            return Ok((element, None));
        }
        let start = self.advance().span;
        let element = self.nested(|p| p.parse_pattern_element(false))?;
        let predicate = if self.eat_keyword("WHERE") {
            Some(self.nested(|p| p.parse_expr())?)
        } else {
            None
        };
        self.expect(&TokenKind::RParen)?;
        let element = PatternElement {
            span: self.span_from(start),
            ..element
        };
        Ok((element, predicate))
    }

    /// Whether the `(` here opens a quantified group: its partner `)` is followed by a
    /// quantifier.
    fn group_at_start(&self) -> bool {
        let close = self.partner.get(self.pos).copied().unwrap_or(usize::MAX);
        close != usize::MAX
            && matches!(
                self.kind_abs(close + 1),
                TokenKind::LBrace | TokenKind::Plus | TokenKind::Star
            )
    }

    /// A quantified group of one relationship: `((x)-[r]->(y) [WHERE …]) quantifier` (see GQL
    /// PATH PATTERNS). More than one relationship inside, or none, is not supported.
    fn parse_quantified_group(&mut self) -> Result<RelationshipPattern> {
        let start = self.expect(&TokenKind::LParen)?;
        let from = self.parse_node_pattern()?;
        if !(self.at(&TokenKind::Minus) || self.at(&TokenKind::Lt)) {
            return Err(self.group_not_supported("a quantified group without a relationship"));
        }
        let mut relationship = self.parse_relationship_pattern()?;
        if relationship.length.is_some() {
            return Err(ParseError::new(
                ParseErrorKind::InvalidRelationshipPattern {
                    reason: "a relationship in a quantified group cannot have `*`".into(),
                },
                relationship.span,
            ));
        }
        let to = self.parse_node_pattern()?;
        if self.at(&TokenKind::Minus) || self.at(&TokenKind::Lt) {
            return Err(
                self.group_not_supported("a quantified group of more than one relationship")
            );
        }
        let predicate = if self.eat_keyword("WHERE") {
            Some(self.nested(|p| p.parse_expr())?)
        } else {
            None
        };
        self.expect(&TokenKind::RParen)?;
        if !matches!(
            self.peek().kind,
            TokenKind::LBrace | TokenKind::Plus | TokenKind::Star
        ) {
            return Err(self.group_not_supported(
                "a parenthesized path pattern inside a pattern without a quantifier",
            ));
        }
        self.parse_rel_quantifier(&mut relationship)?;
        relationship.group = Some(Box::new(QuantifiedGroup {
            from,
            to,
            predicate,
        }));
        relationship.span = self.span_from(start);
        Ok(relationship)
    }

    fn group_not_supported(&self, what: &str) -> ParseError {
        ParseError::new(
            ParseErrorKind::NotSupported { what: what.into() },
            self.peek().span,
        )
    }

    /// A chain of nodes and relationships. `strict` selects the expression-context rule for
    /// continuing the chain (see the module docs).
    pub(super) fn parse_pattern_element(&mut self, strict: bool) -> Result<PatternElement> {
        if self.at(&TokenKind::LParen) && *self.kind_at(1) == TokenKind::LParen {
            // A parenthesised element: `((a)-->(b))`.
            let start = self.advance().span;
            let element = self.nested(|p| p.parse_pattern_element(false))?;
            self.expect(&TokenKind::RParen)?;
            return Ok(PatternElement {
                span: self.span_from(start),
                ..element
            });
        }
        let start = self.peek().span;
        let first = self.parse_node_pattern()?;
        let mut chain = Vec::new();
        self.parse_steps(strict, &mut chain)?;
        Ok(PatternElement {
            start: first,
            chain,
            span: self.span_from(start),
        })
    }

    /// The (relationship, node) steps after a node, appended to `chain`.
    fn parse_steps(&mut self, strict: bool, chain: &mut Vec<PatternStep>) -> Result<()> {
        loop {
            if !strict && self.at(&TokenKind::LParen) && *self.kind_at(1) == TokenKind::LParen {
                // `(a)((x)-[r]->(y) WHERE …){m,n}(b)`
                let relationship = self.parse_quantified_group()?;
                let node = self.parse_node_pattern()?;
                chain.push(PatternStep { relationship, node });
                continue;
            }
            let continues = if strict {
                self.relationship_starts_at(self.pos)
            } else {
                self.at(&TokenKind::Minus) || self.at(&TokenKind::Lt)
            };
            if !continues {
                break;
            }
            let mut relationship = self.parse_relationship_pattern()?;
            self.parse_rel_quantifier(&mut relationship)?;
            let node = self.parse_node_pattern()?;
            chain.push(PatternStep { relationship, node });
        }
        Ok(())
    }

    fn parse_node_pattern(&mut self) -> Result<NodePattern> {
        let start = self.expect(&TokenKind::LParen)?;
        let variable = if self.variable_at(0) {
            Some(self.take_ident())
        } else {
            None
        };
        let (labels, label_expr) = if self.at(&TokenKind::Colon) {
            // Inside `( )` a `|` can only be a label disjunction.
            let saved = std::mem::replace(&mut self.bar_ends_expr, false);
            let terms = self.parse_label_terms();
            self.bar_ends_expr = saved;
            terms?.split_plain()
        } else {
            (Vec::new(), None)
        };
        let properties = self.parse_pattern_properties()?;
        self.expect(&TokenKind::RParen)?;
        Ok(NodePattern {
            variable,
            labels,
            label_expr,
            properties,
            span: self.span_from(start),
        })
    }

    /// An optional `{map}` or `$param` after a node's labels or a relationship's types.
    fn parse_pattern_properties(&mut self) -> Result<Option<Expr>> {
        match self.kind_at(0) {
            TokenKind::LBrace => Ok(Some(self.parse_map_literal()?)),
            TokenKind::Parameter(name) => {
                let kind = ExprKind::Parameter(name.clone());
                let span = self.advance().span;
                Ok(Some(Expr::new(kind, span)))
            }
            _ => Ok(None),
        }
    }

    fn parse_relationship_pattern(&mut self) -> Result<RelationshipPattern> {
        let start = self.peek().span;
        let left = self.eat(&TokenKind::Lt);
        self.expect(&TokenKind::Minus)?;
        let mut variable = None;
        let mut types = Vec::new();
        let mut dynamic_type = None;
        let mut length = None;
        let mut properties = None;
        if self.eat(&TokenKind::LBracket) {
            if self.variable_at(0) {
                variable = Some(self.take_ident());
            }
            let mut any_type = None;
            if self.eat(&TokenKind::Colon) {
                (dynamic_type, any_type) = self.parse_relationship_types(&mut types)?;
            }
            if matches!(self.peek().kind, TokenKind::Amp | TokenKind::Bang) {
                return Err(type_expression_error(self.peek().span));
            }
            if self.at(&TokenKind::Star)
                && let Some(span) = any_type
            {
                // As Neo4j 5: `*` takes plain type alternatives only.
                return Err(ParseError::new(
                    ParseErrorKind::InvalidRelationshipPattern {
                        reason: "variable-length relationships must not use relationship type \
                                 expressions (`%`); leave the type out for any type"
                            .into(),
                    },
                    span,
                ));
            }
            if self.eat(&TokenKind::Star) {
                length = Some(self.parse_var_length()?);
            }
            // A range without `*`, or a negative bound, is a malformed relationship pattern.
            let negative_bound = matches!(self.peek().kind, TokenKind::Minus)
                && matches!(self.peek_at(1).kind, TokenKind::Integer(_));
            if negative_bound
                || matches!(self.peek().kind, TokenKind::DotDot | TokenKind::Integer(_))
            {
                return Err(ParseError::new(
                    ParseErrorKind::InvalidRelationshipPattern {
                        reason: "a length range needs `*` and non-negative bounds (`*1..3`)".into(),
                    },
                    self.peek().span,
                ));
            }
            properties = self.parse_pattern_properties()?;
            self.expect(&TokenKind::RBracket)?;
        }
        self.expect(&TokenKind::Minus)?;
        let right = self.eat(&TokenKind::Gt);
        let direction = match (left, right) {
            (false, true) => RelDirection::Outgoing,
            (true, false) => RelDirection::Incoming,
            _ => RelDirection::Undirected,
        };
        Ok(RelationshipPattern {
            direction,
            variable,
            types,
            dynamic_type,
            length,
            properties,
            group: None,
            span: self.span_from(start),
        })
    }

    /// After `[r:`: `T|U|…` into `types`, where `%` (any type) leaves `types` empty; or one
    /// dynamic type `$(expr)` / `$any(expr)`, which takes no alternatives. Returns the
    /// dynamic type and where a `%` was written.
    fn parse_relationship_types(
        &mut self,
        types: &mut Vec<Ident>,
    ) -> Result<(Option<DynamicLabels>, Option<Span>)> {
        let mut any_type = None;
        let mut alternatives = 0;
        let mut dynamic = None;
        loop {
            alternatives += 1;
            if let Some(d) = self.parse_dynamic_labels()? {
                dynamic = Some(d);
            } else if self.at(&TokenKind::Percent) {
                any_type = Some(self.advance().span);
            } else {
                types.push(self.relationship_type_name()?);
            }
            if !self.eat(&TokenKind::Pipe) {
                break;
            }
            self.eat(&TokenKind::Colon);
        }
        if let Some(d) = &dynamic
            && alternatives > 1
        {
            return Err(ParseError::new(
                ParseErrorKind::InvalidRelationshipPattern {
                    reason: "a dynamic relationship type takes no `|` alternatives; write \
                             `$any([…])` for one of several types"
                        .into(),
                },
                d.span,
            ));
        }
        if any_type.is_some() {
            types.clear();
        }
        Ok((dynamic, any_type))
    }

    /// A GQL quantifier after a relationship pattern, if any, as its variable length (see GQL
    /// PATH PATTERNS).
    fn parse_rel_quantifier(&mut self, relationship: &mut RelationshipPattern) -> Result<()> {
        let start = self.peek().span;
        let length = match self.peek().kind {
            TokenKind::Plus => {
                self.advance();
                VarLength {
                    min: Some(1),
                    max: None,
                }
            }
            TokenKind::Star => {
                self.advance();
                VarLength {
                    min: Some(0),
                    max: None,
                }
            }
            TokenKind::LBrace => {
                self.advance();
                let min = self.parse_optional_bound();
                let length = if self.eat(&TokenKind::Comma) {
                    let max = self.parse_optional_bound();
                    VarLength {
                        min: Some(min.unwrap_or(0)),
                        max,
                    }
                } else {
                    let Some(n) = min else {
                        return Err(self.unexpected("a quantifier bound"));
                    };
                    VarLength {
                        min: Some(n),
                        max: Some(n),
                    }
                };
                self.expect(&TokenKind::RBrace)?;
                length
            }
            _ => return Ok(()),
        };
        let invalid = |reason: &str| {
            Err(ParseError::new(
                ParseErrorKind::InvalidRelationshipPattern {
                    reason: reason.to_string(),
                },
                start,
            ))
        };
        if relationship.length.is_some() {
            return invalid("a relationship cannot have both `*` and a quantifier");
        }
        if length.max.is_some_and(|max| max < length.min.unwrap_or(0)) {
            return invalid("a quantifier's upper bound is below its lower bound");
        }
        relationship.length = Some(length);
        Ok(())
    }

    /// A relationship type name; a label-expression operator there is refused with a reason.
    fn relationship_type_name(&mut self) -> Result<Ident> {
        if matches!(
            self.peek().kind,
            TokenKind::Amp | TokenKind::Bang | TokenKind::LParen
        ) {
            return Err(type_expression_error(self.peek().span));
        }
        self.parse_name("a relationship type name")
    }

    /// After `*`: `[min] ['..' [max]]`. A lone `*n` means exactly n hops.
    fn parse_var_length(&mut self) -> Result<VarLength> {
        let min = self.parse_optional_bound();
        if self.eat(&TokenKind::DotDot) {
            let max = self.parse_optional_bound();
            Ok(VarLength { min, max })
        } else {
            Ok(VarLength { min, max: min })
        }
    }

    fn parse_optional_bound(&mut self) -> Option<u64> {
        match *self.kind_at(0) {
            TokenKind::Integer(value) => {
                self.advance();
                Some(value)
            }
            _ => None,
        }
    }

    /// True if a relationship unmistakably starts at token index `index`: `-[`, `--(`, `-->`,
    /// `<-[` or `<--`.
    pub(super) fn relationship_starts_at(&self, index: usize) -> bool {
        match (self.kind_abs(index), self.kind_abs(index + 1)) {
            (TokenKind::Minus, TokenKind::LBracket) => self.relationship_detail_at(index + 1),
            (TokenKind::Minus, TokenKind::Minus) => {
                matches!(self.kind_abs(index + 2), TokenKind::LParen | TokenKind::Gt)
            }
            (TokenKind::Lt, TokenKind::Minus) => match self.kind_abs(index + 2) {
                TokenKind::Minus => true,
                TokenKind::LBracket => self.relationship_detail_at(index + 2),
                _ => false,
            },
            _ => false,
        }
    }

    /// True if the `[` at token index `open` is a relationship detail rather than a list:
    /// it starts like one (`[r`, `[:`, `[*`, `[{`, `[$`, `[]`) and `]-(` or `]->` follows.
    /// So `($p) - [1]` and `(a) - [x]` stay arithmetic.
    fn relationship_detail_at(&self, open: usize) -> bool {
        let close = self.partner.get(open).copied().unwrap_or(usize::MAX);
        if close == usize::MAX {
            return false;
        }
        let mut index = open + 1;
        if self.variable_abs(index) {
            index += 1;
        }
        let starts_like_detail = matches!(
            self.kind_abs(index),
            TokenKind::RBracket
                | TokenKind::Colon
                | TokenKind::Star
                | TokenKind::LBrace
                | TokenKind::Parameter(_)
        );
        starts_like_detail
            && *self.kind_abs(close + 1) == TokenKind::Minus
            && matches!(self.kind_abs(close + 2), TokenKind::LParen | TokenKind::Gt)
    }

    /// True if the `(` at token index `open` starts a pattern predicate: its contents look like
    /// a node pattern and a relationship follows the closing `)`. O(1) thanks to the
    /// precomputed bracket partners.
    pub(super) fn pattern_starts_at(&self, open: usize) -> bool {
        let close = self.partner.get(open).copied().unwrap_or(usize::MAX);
        if close == usize::MAX {
            return false;
        }
        let mut index = open + 1;
        if self.variable_abs(index) {
            index += 1;
        }
        // Labels: `:A:B`, or a label expression such as `:(A|B)&!%`.
        if *self.kind_abs(index) == TokenKind::Colon {
            while index < close {
                match self.kind_abs(index) {
                    TokenKind::Colon
                    | TokenKind::Ident(_)
                    | TokenKind::QuotedIdent(_)
                    | TokenKind::Pipe
                    | TokenKind::Amp
                    | TokenKind::Bang
                    | TokenKind::Dollar
                    | TokenKind::Parameter(_)
                    | TokenKind::Percent => index += 1,
                    TokenKind::LParen => match self.partner.get(index).copied() {
                        Some(group_close) if group_close < close => index = group_close + 1,
                        _ => return false,
                    },
                    _ => break,
                }
            }
        }
        match self.kind_abs(index) {
            TokenKind::LBrace => match self.partner.get(index).copied().unwrap_or(usize::MAX) {
                usize::MAX => return false,
                map_close => index = map_close + 1,
            },
            TokenKind::Parameter(_) => index += 1,
            _ => {}
        }
        index == close && self.relationship_starts_at(close + 1)
    }

    /// True if the bracket group opening at token index `open` contains a comma outside any
    /// nested group. Nested groups are skipped via their partners, so across a whole parse each
    /// token is looked at by at most one such scan: the total cost stays linear.
    pub(super) fn has_top_level_comma(&self, open: usize) -> bool {
        let close = self.partner.get(open).copied().unwrap_or(usize::MAX);
        if close == usize::MAX {
            return false;
        }
        let mut index = open + 1;
        while index < close {
            match self.kind_abs(index) {
                TokenKind::Comma => return true,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => {
                    match self.partner.get(index).copied().unwrap_or(usize::MAX) {
                        usize::MAX => return false,
                        nested_close => index = nested_close + 1,
                    }
                }
                _ => index += 1,
            }
        }
        false
    }

    fn kind_abs(&self, index: usize) -> &TokenKind {
        &self.tokens[index.min(self.tokens.len() - 1)].kind
    }

    pub(super) fn variable_abs(&self, index: usize) -> bool {
        match self.kind_abs(index) {
            TokenKind::Ident(word) => !super::is_reserved(word),
            TokenKind::QuotedIdent(_) => true,
            _ => false,
        }
    }
}

/// A relationship has exactly one type, so only `|` (one of) applies to relationship types.
fn type_expression_error(span: Span) -> ParseError {
    ParseError::new(
        ParseErrorKind::InvalidRelationshipPattern {
            reason: "a relationship has exactly one type: only `|` may combine relationship \
                     types (`[:T|U]`, `[:%]` for any type), not `&`, `!` or parentheses"
                .into(),
        },
        span,
    )
}
