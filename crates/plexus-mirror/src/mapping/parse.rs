//! The mapping text → [`PropertyGraph`]: a lexer keeping each token's line and column, and a
//! recursive-descent parser that names the clause it is in for error messages.
//!
//! Names: table, column and alias names are SQL identifiers, folded to lower case unless
//! "double quoted" (as PostgreSQL does, so they match the catalog); graph names — the graph's,
//! labels and property names — keep the case they are written in (Cypher matches them
//! case-sensitively).

use super::model::{
    ChildList, Conversion, EdgeTable, Endpoint, LabelFrom, PropertyGraph, PropertyMap, TableName,
    VertexTable,
};
use super::types::PgType;
use super::{MappingError, Span};

const DEFAULT_SCHEMA: &str = "public";

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// An unquoted word, as written.
    Word(String),
    /// A "double quoted" identifier, unescaped.
    Quoted(String),
    /// A 'string literal', unescaped.
    Str(String),
    Number(String),
    Sym(char),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Span,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Quoted(q) => format!("\"{q}\""),
        Tok::Str(s) => format!("'{s}'"),
        Tok::Number(n) => n.clone(),
        Tok::Sym(c) => format!("`{c}`"),
        Tok::Eof => "the end of the mapping".to_owned(),
    }
}

/// Characters with their positions.
struct Lexer {
    chars: Vec<char>,
    at: usize,
    span: Span,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Consumes one character, keeping the line and column.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.span.line += 1;
            self.span.column = 1;
        } else {
            self.span.column += 1;
        }
        Some(c)
    }

    fn error(span: Span, message: String) -> MappingError {
        MappingError::new(message, span, String::new())
    }

    /// `"identifier"` or `'literal'` starting at the opening `quote`; a doubled quote
    /// stands for itself.
    fn quoted(&mut self, quote: char, span: Span) -> Result<String, MappingError> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some(c) if c == quote && self.peek(0) == Some(quote) => {
                    self.bump();
                    value.push(quote);
                }
                Some(c) if c == quote => return Ok(value),
                Some(c) => value.push(c),
                None => {
                    let what = if quote == '"' {
                        "quoted identifier"
                    } else {
                        "string literal"
                    };
                    return Err(Self::error(span, format!("unterminated {what}")));
                }
            }
        }
    }

    fn take_while(&mut self, mut keep: impl FnMut(char) -> bool, into: &mut String) {
        while let Some(c) = self.peek(0).filter(|&c| keep(c)) {
            into.push(c);
            self.bump();
        }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, MappingError> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        span: Span { line: 1, column: 1 },
    };
    let mut tokens = Vec::new();
    while let Some(c) = lexer.peek(0) {
        let span = lexer.span;
        let next = lexer.peek(1);
        let tok = if c.is_whitespace() {
            lexer.bump();
            continue;
        } else if c == '-' && next == Some('-') {
            while lexer.peek(0).is_some_and(|c| c != '\n') {
                lexer.bump();
            }
            continue;
        } else if c == '/' && next == Some('*') {
            lexer.bump();
            lexer.bump();
            while !(lexer.peek(0) == Some('*') && lexer.peek(1) == Some('/')) {
                if lexer.bump().is_none() {
                    return Err(Lexer::error(span, "unterminated /* comment".to_owned()));
                }
            }
            lexer.bump();
            lexer.bump();
            continue;
        } else if c == '"' {
            let name = lexer.quoted(c, span)?;
            if name.is_empty() {
                return Err(Lexer::error(span, "empty quoted identifier".to_owned()));
            }
            Tok::Quoted(name)
        } else if c == '\'' {
            Tok::Str(lexer.quoted(c, span)?)
        } else if c.is_alphabetic() || c == '_' {
            let mut word = String::new();
            lexer.take_while(|c| c.is_alphanumeric() || c == '_' || c == '$', &mut word);
            Tok::Word(word)
        } else if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) {
            let mut number = String::new();
            lexer.bump();
            number.push(c);
            lexer.take_while(|c| c.is_ascii_digit() || c == '.', &mut number);
            Tok::Number(number)
        } else if "(),.;".contains(c) {
            lexer.bump();
            Tok::Sym(c)
        } else {
            return Err(Lexer::error(span, format!("unexpected character {c:?}")));
        };
        tokens.push(Token { tok, span });
    }
    tokens.push(Token {
        tok: Tok::Eof,
        span: lexer.span,
    });
    Ok(tokens)
}

/// Parses one `CREATE PROPERTY GRAPH` statement (optionally ending with `;`) and runs the
/// structural checks; types and catalog defaults are left for [`validate`](super::validate).
pub fn parse(text: &str) -> Result<PropertyGraph, MappingError> {
    let mut parser = Parser {
        tokens: lex(text)?,
        pos: 0,
        clause: "CREATE PROPERTY GRAPH".to_owned(),
    };
    let graph = parser.statement()?;
    graph.check_structure()?;
    Ok(graph)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    clause: String,
}

/// What the label and property clauses of one element table say.
#[derive(Default)]
struct Clauses {
    labels: Vec<(String, Span)>,
    properties: Vec<PropertyMap>,
    /// The columns every `PROPERTIES ARE ALL COLUMNS` clause so far excepts (their
    /// intersection: a column any such clause includes is a property).
    all_columns_except: Option<Vec<String>>,
    label_from: Option<LabelFrom>,
    lists: Vec<ChildList>,
    /// Whether any LABEL, DEFAULT LABEL or properties clause was written.
    any: bool,
}

/// The start of an element table: its table, alias and KEY.
struct Head {
    table: TableName,
    alias: String,
    key: Vec<String>,
    span: Span,
    key_span: Span,
    key_spans: Vec<Span>,
}

enum Properties {
    List(Vec<PropertyMap>),
    AllColumns(Vec<String>),
}

impl Parser {
    fn peek(&self) -> &Token {
        // the token list always ends with Eof, and `pos` never passes it
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)].tok
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::Eof {
            self.pos += 1;
        }
        token
    }

    fn error_at(&self, span: Span, message: String) -> MappingError {
        MappingError::new(message, span, self.clause.clone())
    }

    fn expected(&self, what: &str) -> MappingError {
        let token = self.peek();
        self.error_at(
            token.span,
            format!("expected {what}, found {}", describe(&token.tok)),
        )
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }

    fn is_keyword_at(&self, ahead: usize, keyword: &str) -> bool {
        matches!(self.peek_at(ahead), Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.is_keyword(keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    fn keyword(&mut self, keyword: &str) -> Result<Span, MappingError> {
        let span = self.peek().span;
        if self.eat_keyword(keyword) {
            Ok(span)
        } else {
            Err(self.expected(keyword))
        }
    }

    fn eat_sym(&mut self, sym: char) -> bool {
        let found = self.peek().tok == Tok::Sym(sym);
        if found {
            self.pos += 1;
        }
        found
    }

    fn sym(&mut self, sym: char) -> Result<(), MappingError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{sym}`")))
        }
    }

    /// An SQL identifier (table, column, alias): folded to lower case unless quoted.
    fn sql_name(&mut self, what: &str) -> Result<(String, Span), MappingError> {
        let token = self.peek().clone();
        let name = match token.tok {
            // PostgreSQL folds ASCII letters only (under UTF-8)
            Tok::Word(w) => w.to_ascii_lowercase(),
            Tok::Quoted(q) => q,
            _ => return Err(self.expected(what)),
        };
        self.pos += 1;
        Ok((name, token.span))
    }

    /// A graph name (graph, label, property): as written.
    fn graph_name(&mut self, what: &str) -> Result<(String, Span), MappingError> {
        let token = self.peek().clone();
        let name = match token.tok {
            Tok::Word(w) | Tok::Quoted(w) => w,
            _ => return Err(self.expected(what)),
        };
        self.pos += 1;
        Ok((name, token.span))
    }

    /// `( name, ... )` of SQL identifiers.
    fn column_list(&mut self) -> Result<Vec<String>, MappingError> {
        Ok(self.spanned_column_list()?.0)
    }

    /// `( name, ... )` of SQL identifiers, with each one's position.
    fn spanned_column_list(&mut self) -> Result<(Vec<String>, Vec<Span>), MappingError> {
        self.sym('(')?;
        let (mut columns, mut spans) = (Vec::new(), Vec::new());
        loop {
            let (column, span) = self.sql_name("a column name")?;
            if columns.contains(&column) {
                return Err(self.error_at(span, format!("column \"{column}\" is listed twice")));
            }
            columns.push(column);
            spans.push(span);
            if !self.eat_sym(',') {
                break;
            }
        }
        self.sym(')')?;
        Ok((columns, spans))
    }

    /// `name` or `schema.name`.
    fn table_ref(&mut self) -> Result<(TableName, Span), MappingError> {
        let (first, span) = self.sql_name("a table name")?;
        if self.eat_sym('.') {
            let (name, _) = self.sql_name("a table name after the schema")?;
            Ok((
                TableName {
                    schema: first,
                    name,
                },
                span,
            ))
        } else {
            Ok((
                TableName {
                    schema: DEFAULT_SCHEMA.to_owned(),
                    name: first,
                },
                span,
            ))
        }
    }

    fn statement(&mut self) -> Result<PropertyGraph, MappingError> {
        self.keyword("CREATE")?;
        self.keyword("PROPERTY")?;
        self.keyword("GRAPH")?;
        let (name, _) = self.graph_name("the graph's name")?;
        self.clause = "VERTEX TABLES".to_owned();
        self.keyword("VERTEX")?;
        let vertex_tables = self.element_tables(Self::vertex_table)?;
        let edge_tables = if self.is_keyword("EDGE") {
            self.clause = "EDGE TABLES".to_owned();
            self.pos += 1;
            self.element_tables(Self::edge_table)?
        } else {
            Vec::new()
        };
        self.clause = "CREATE PROPERTY GRAPH".to_owned();
        self.eat_sym(';');
        if self.peek().tok != Tok::Eof {
            let what = if edge_tables.is_empty() {
                "EDGE TABLES or the end of the mapping (one CREATE PROPERTY GRAPH per file)"
            } else {
                "the end of the mapping (one CREATE PROPERTY GRAPH per file)"
            };
            return Err(self.expected(what));
        }
        Ok(PropertyGraph {
            name,
            vertex_tables,
            edge_tables,
        })
    }

    /// After `VERTEX` or `EDGE`: `TABLES ( element, ... )`, each element parsed by `element`;
    /// the clause in effect at the start (`VERTEX TABLES` or `EDGE TABLES`) is restored after
    /// each one.
    fn element_tables<T>(
        &mut self,
        mut element: impl FnMut(&mut Self) -> Result<T, MappingError>,
    ) -> Result<Vec<T>, MappingError> {
        let clause = self.clause.clone();
        self.keyword("TABLES")?;
        self.sym('(')?;
        let mut tables = Vec::new();
        loop {
            tables.push(element(self)?);
            self.clause.clone_from(&clause);
            if !self.eat_sym(',') {
                break;
            }
        }
        self.sym(')')?;
        Ok(tables)
    }

    /// `table [AS alias] [KEY (...)]`.
    fn element_head(&mut self, kind: &str) -> Result<Head, MappingError> {
        let (table, span) = self.table_ref()?;
        self.clause = format!("{kind} TABLE {}", table.name);
        let alias = if self.eat_keyword("AS") {
            self.sql_name("an alias")?.0
        } else {
            table.name.clone()
        };
        self.clause = format!("{kind} TABLE {alias}");
        let mut key_span = span;
        let (key, key_spans) = if self.is_keyword("KEY") {
            key_span = self.advance().span;
            self.spanned_column_list()?
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Head {
            table,
            alias,
            key,
            span,
            key_span,
            key_spans,
        })
    }

    fn vertex_table(&mut self) -> Result<VertexTable, MappingError> {
        let head = self.element_head("VERTEX")?;
        let clauses = self.element_clauses(&head.alias, true)?;
        let mut labels: Vec<String> = clauses.labels.into_iter().map(|(l, _)| l).collect();
        let mut all_columns_except = clauses.all_columns_except;
        if !clauses.any {
            // SQL/PGQ: no clause at all is DEFAULT LABEL PROPERTIES ARE ALL COLUMNS (the
            // default label is left out when LABEL FROM gives each row its label)
            if clauses.label_from.is_none() {
                labels.push(head.alias.clone());
            }
            all_columns_except = Some(Vec::new());
        }
        Ok(VertexTable {
            alias: head.alias,
            table: head.table,
            key: head.key,
            labels,
            label_from: clauses.label_from,
            properties: clauses.properties,
            list_properties: clauses.lists,
            all_columns_except,
            span: head.span,
            key_span: head.key_span,
            key_spans: head.key_spans,
        })
    }

    fn edge_table(&mut self) -> Result<EdgeTable, MappingError> {
        let head = self.element_head("EDGE")?;
        let base = self.clause.clone();
        self.clause = format!("{base} SOURCE KEY");
        let source = self.endpoint("SOURCE")?;
        self.clause = format!("{base} DESTINATION KEY");
        let destination = self.endpoint("DESTINATION")?;
        self.clause = base;
        let clauses = self.element_clauses(&head.alias, false)?;
        let mut all_columns_except = clauses.all_columns_except;
        let mut labels = clauses.labels;
        if !clauses.any {
            labels.push((head.alias.clone(), head.span));
            all_columns_except = Some(Vec::new());
        }
        let label = match labels.as_slice() {
            [(label, _)] => label.clone(),
            [] => {
                return Err(self.error_at(
                    head.span,
                    "an edge table needs a label (its relationship type)".to_owned(),
                ));
            }
            [_, (_, second), ..] => {
                let names: Vec<&str> = labels.iter().map(|(l, _)| l.as_str()).collect();
                return Err(self.error_at(
                    *second,
                    format!(
                        "an edge table has exactly one label, its relationship type (a Plexus \
                         relationship has one type); found {}",
                        names.join(", ")
                    ),
                ));
            }
        };
        Ok(EdgeTable {
            alias: head.alias,
            table: head.table,
            key: head.key,
            label,
            source,
            destination,
            properties: clauses.properties,
            all_columns_except,
            span: head.span,
            key_span: head.key_span,
            key_spans: head.key_spans,
        })
    }

    /// `SOURCE KEY (...) REFERENCES alias [(...)]` or the implicit `SOURCE alias`.
    fn endpoint(&mut self, which: &str) -> Result<Endpoint, MappingError> {
        let span = self.keyword(which)?;
        let (columns, column_spans, vertex_table, (referenced_columns, referenced_spans)) =
            if self.eat_keyword("KEY") {
                let (columns, column_spans) = self.spanned_column_list()?;
                self.keyword("REFERENCES")?;
                let (vertex_table, _) = self.sql_name("a vertex table alias")?;
                let referenced = if self.peek().tok == Tok::Sym('(') {
                    self.spanned_column_list()?
                } else {
                    (Vec::new(), Vec::new())
                };
                (columns, column_spans, vertex_table, referenced)
            } else {
                let (vertex_table, _) = self.sql_name("KEY or a vertex table alias")?;
                (
                    Vec::new(),
                    Vec::new(),
                    vertex_table,
                    (Vec::new(), Vec::new()),
                )
            };
        Ok(Endpoint {
            columns,
            vertex_table,
            referenced_columns,
            span,
            column_spans,
            referenced_spans,
        })
    }

    /// Label, properties, LABEL FROM and PROPERTY ... LIST FROM clauses, until `,` or `)`.
    fn element_clauses(&mut self, alias: &str, vertex: bool) -> Result<Clauses, MappingError> {
        let base = self.clause.clone();
        let mut clauses = Clauses::default();
        loop {
            self.clause.clone_from(&base);
            let span = self.peek().span;
            if self.is_keyword("LABEL") && self.is_keyword_at(1, "FROM") {
                self.clause = format!("{base} LABEL FROM");
                if !vertex {
                    return Err(self.error_at(
                        span,
                        "LABEL FROM is for vertex tables; an edge table has one label".to_owned(),
                    ));
                }
                if clauses.label_from.is_some() {
                    return Err(self.error_at(span, "LABEL FROM is given twice".to_owned()));
                }
                self.pos += 2;
                clauses.label_from = Some(self.label_from(span)?);
            } else if self.is_keyword("LABEL") || self.is_keyword("DEFAULT") {
                let label = if self.eat_keyword("DEFAULT") {
                    self.keyword("LABEL")?;
                    (alias.to_owned(), span)
                } else {
                    self.pos += 1;
                    self.graph_name("a label")?
                };
                self.clause = format!("{base} LABEL {}", label.0);
                if clauses.labels.iter().any(|(l, _)| *l == label.0) {
                    return Err(self.error_at(label.1, format!("label {} is given twice", label.0)));
                }
                clauses.labels.push(label);
                clauses.any = true;
                // SQL/PGQ: a label without a properties clause has all columns
                let properties = if self.starts_properties() {
                    self.properties()?
                } else {
                    Properties::AllColumns(Vec::new())
                };
                merge(&mut clauses, properties);
            } else if self.starts_properties() {
                self.clause = format!("{base} PROPERTIES");
                // a properties clause on its own belongs to the default label
                if !clauses.labels.iter().any(|(l, _)| l == alias) {
                    clauses.labels.push((alias.to_owned(), span));
                }
                clauses.any = true;
                let properties = self.properties()?;
                merge(&mut clauses, properties);
            } else if self.is_keyword("PROPERTY") {
                self.pos += 1;
                let (name, _) = self.graph_name("the list property's name")?;
                self.clause = format!("{base} PROPERTY {name}");
                if !vertex {
                    return Err(self.error_at(
                        span,
                        "PROPERTY ... LIST FROM is for vertex tables".to_owned(),
                    ));
                }
                if clauses.lists.iter().any(|l| l.name == name) {
                    return Err(
                        self.error_at(span, format!("property \"{name}\" is defined twice"))
                    );
                }
                clauses.lists.push(self.child_list(name, span)?);
            } else if matches!(self.peek().tok, Tok::Sym(',') | Tok::Sym(')')) {
                return Ok(clauses);
            } else {
                let expected = if vertex {
                    "LABEL, DEFAULT LABEL, PROPERTIES, NO PROPERTIES, LABEL FROM, PROPERTY, `,` or `)`"
                } else {
                    "LABEL, DEFAULT LABEL, PROPERTIES, NO PROPERTIES, `,` or `)`"
                };
                return Err(self.expected(expected));
            }
        }
    }

    fn starts_properties(&self) -> bool {
        self.is_keyword("PROPERTIES")
            || (self.is_keyword("NO") && self.is_keyword_at(1, "PROPERTIES"))
    }

    /// `PROPERTIES (...)`, `NO PROPERTIES` or `PROPERTIES [ARE] ALL COLUMNS [EXCEPT (...)]`.
    fn properties(&mut self) -> Result<Properties, MappingError> {
        if self.eat_keyword("NO") {
            self.keyword("PROPERTIES")?;
            return Ok(Properties::List(Vec::new()));
        }
        self.keyword("PROPERTIES")?;
        if self.is_keyword("ARE") || self.is_keyword("ALL") {
            self.eat_keyword("ARE");
            self.keyword("ALL")?;
            self.keyword("COLUMNS")?;
            let except = if self.eat_keyword("EXCEPT") {
                self.column_list()?
            } else {
                Vec::new()
            };
            return Ok(Properties::AllColumns(except));
        }
        self.sym('(')?;
        let mut list = Vec::new();
        loop {
            let (column, span) = self.sql_name("a column name")?;
            let name = if self.eat_keyword("AS") {
                self.graph_name("a property name")?.0
            } else {
                column.clone()
            };
            let conversion = if self.eat_keyword("EPOCH_MILLIS") {
                Conversion::EpochMillis
            } else if self.eat_keyword("EPOCH_DAYS") {
                Conversion::EpochDays
            } else {
                Conversion::None
            };
            list.push(PropertyMap {
                column,
                name,
                conversion,
                pg_type: PgType::Unknown,
                span,
            });
            if !self.eat_sym(',') {
                break;
            }
        }
        self.sym(')')?;
        Ok(Properties::List(list))
    }

    /// After `LABEL FROM`: `column [('value' AS Label, ...)]`.
    fn label_from(&mut self, span: Span) -> Result<LabelFrom, MappingError> {
        let (column, _) = self.sql_name("the label column")?;
        let mut values = None;
        if self.eat_sym('(') {
            let mut pairs: Vec<(String, String)> = Vec::new();
            loop {
                let token = self.peek().clone();
                let value = match token.tok {
                    Tok::Str(s) | Tok::Number(s) => s,
                    _ => return Err(self.expected("a 'quoted' column value")),
                };
                self.pos += 1;
                if pairs.iter().any(|(v, _)| *v == value) {
                    return Err(
                        self.error_at(token.span, format!("value '{value}' is listed twice"))
                    );
                }
                self.keyword("AS")?;
                let (label, _) = self.graph_name("a label")?;
                pairs.push((value, label));
                if !self.eat_sym(',') {
                    break;
                }
            }
            self.sym(')')?;
            values = Some(pairs);
        }
        Ok(LabelFrom {
            column,
            values,
            span,
        })
    }

    /// After `PROPERTY name`: `LIST FROM table (value) KEY (...) [ORDER BY column]`.
    fn child_list(&mut self, name: String, span: Span) -> Result<ChildList, MappingError> {
        self.keyword("LIST")?;
        self.keyword("FROM")?;
        let (table, _) = self.table_ref()?;
        self.sym('(')?;
        let (value_column, _) = self.sql_name("the value column")?;
        self.sym(')')?;
        self.keyword("KEY")?;
        let key = self.column_list()?;
        let order_by = if self.eat_keyword("ORDER") {
            self.keyword("BY")?;
            Some(self.sql_name("a column name")?.0)
        } else {
            None
        };
        Ok(ChildList {
            name,
            table,
            value_column,
            key,
            order_by,
            pg_type: PgType::Unknown,
            span,
        })
    }
}

/// Adds one label's properties to the element's (their union; an identical definition given
/// by two labels counts once).
fn merge(clauses: &mut Clauses, properties: Properties) {
    match properties {
        Properties::List(list) => {
            for p in list {
                let same = |q: &PropertyMap| {
                    q.name == p.name && q.column == p.column && q.conversion == p.conversion
                };
                if !clauses.properties.iter().any(same) {
                    clauses.properties.push(p);
                }
            }
        }
        Properties::AllColumns(except) => {
            clauses.all_columns_except = Some(match clauses.all_columns_except.take() {
                None => except,
                Some(previous) => previous
                    .into_iter()
                    .filter(|c| except.contains(c))
                    .collect(),
            });
        }
    }
}
