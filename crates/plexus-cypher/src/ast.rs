//! The openCypher abstract syntax tree.
//!
//! SHAPE
//! =====
//! The tree mirrors the openCypher 9 grammar plus the Neo4j extensions the TCK exercises
//! (`CALL { ... }`, `EXISTS { ... }`, `COUNT { ... }`, `FOREACH`):
//!
//! ```text
//!   Statement ── mode (EXPLAIN/PROFILE)
//!     └ Query ── first: SingleQuery, unions: [UNION [ALL] SingleQuery]
//!         └ SingleQuery ── clauses: [Clause]
//!             └ Clause ── MATCH pattern WHERE expr | WITH projection | RETURN projection
//!                         | UNWIND | LOAD CSV | CREATE | MERGE | SET | REMOVE | DELETE | CALL
//!                         | FOREACH
//! ```
//!
//! It is a *syntax* tree: it records what was written, not what it means. Names are plain
//! strings (no catalog ids), variables are not resolved, and shapes the grammar admits but the
//! semantics reject (`RETURN count(count(x))`, an undefined variable) are representable — the
//! binder reports those. A few purely structural rules are enforced by the parser instead (see
//! the parser's module documentation), so for example a `SetItem` can only name a property, a
//! variable or labels.
//!
//! Redundant syntax is normalised away: parentheses leave no node, `<-->` is `Undirected`, a
//! fixed length `*2` is the range `2..2`, and a unary minus written directly before a number is
//! folded into a negative literal (this is what lets `-9223372036854775808` exist at all).
//!
//! SPANS
//! =====
//! Every clause, expression, pattern element and name carries the [`Span`] of the source text
//! it was parsed from: byte offsets `[start, end)` plus the 1-based line and column of `start`.
//! The binder uses spans for error positions and for default column names (Cypher names an
//! un-aliased column `RETURN n.name` after its source text, `n.name`).
//!
//! Spans deliberately take **no part in equality**: `Span::eq` is always true, so two trees
//! compare equal when they differ only in where they came from. That is what the round-trip
//! tests need (parse → print → parse yields an equal tree) and what any "same query?" check
//! wants. To compare positions, compare the fields (`a.start == b.start`).

/// Defined in `plexus_types` (a query error carries one past the parser); re-exported here
/// because every node of the tree has one.
pub use plexus_types::Span;

/// A name: variable, label, relationship type, property key, function or procedure name part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// Everything a connection accepts, parsed once by `parse_command`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A Cypher statement (with EXPLAIN / PROFILE).
    Query(Statement),
    /// An index command.
    Schema(SchemaCommand),
    /// A table or constraint command (Kùzu and Neo4j DDL; see `parser::table`).
    Table(TableCommand),
    /// A session command (isolation level, settings).
    Session(SessionCommand),
    /// `BEGIN`, `COMMIT` or `ROLLBACK`.
    Transaction(TransactionCommand),
    /// `COPY Table FROM 'file' (options)`: Kùzu's bulk load into a declared table (see
    /// `parser::copy`).
    Copy(CopyFrom),
    /// `ATTACH GRAPHAR 'file' AS name`, `DETACH GRAPH name`, `SHOW GRAPHS` (see
    /// `parser::graph`).
    Graph(GraphCommand),
}

/// Mounting external graphs that statements then read with `USE name …`.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphCommand {
    /// `ATTACH <format> 'file' AS name`; `format` as written (`GRAPHAR`).
    Attach {
        format: Ident,
        file: StringLiteral,
        name: Ident,
    },
    /// `DETACH GRAPH name`.
    Detach { name: Ident },
    /// `SHOW GRAPHS`.
    Show,
}

/// `COPY Table FROM 'file' [(option [=] value, …)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyFrom {
    pub table: Ident,
    pub file: StringLiteral,
    /// In the order written; names are checked by the parser (see [`CopyOption::NAMES`]).
    pub options: Vec<CopyOption>,
}

/// One `COPY` option: `HEADER true`, `DELIM '|'`, …
#[derive(Debug, Clone, PartialEq)]
pub struct CopyOption {
    /// Upper-cased (`DELIMITER` is normalised to `DELIM`).
    pub name: String,
    pub value: CopyOptionValue,
    /// From the name to the end of the value (errors about the option point here).
    pub span: Span,
}

/// The value of a `COPY` option, as written.
#[derive(Debug, Clone, PartialEq)]
pub enum CopyOptionValue {
    Bool(bool),
    String(String),
}

impl CopyOption {
    /// The options `COPY` accepts, with whether each takes a boolean (else a string).
    pub const NAMES: [(&'static str, bool); 7] = [
        ("HEADER", true),
        ("DELIM", false),
        ("QUOTE", false),
        ("ESCAPE", false),
        ("IGNORE_ERRORS", true),
        ("REPORT", false),
        ("FORMAT", false),
    ];
}

/// Explicit transaction control as a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionCommand {
    Begin,
    Commit,
    Rollback,
}

/// A statement about the connection's session rather than the graph (see
/// `parser::session`): run by the connection, never planned.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionCommand {
    /// `SET (SESSION | NEXT | GLOBAL) TRANSACTION ISOLATION LEVEL level`.
    SetIsolation {
        scope: IsolationScope,
        level: IsolationName,
        /// The whole statement (errors about the scope point here).
        span: Span,
    },
    /// `SET SESSION name (= | TO) value`: a per-session setting.
    SetSetting { name: Ident, value: SettingValue },
    /// `SHOW TRANSACTION ISOLATION LEVEL`.
    ShowIsolation,
    /// `SHOW SETTINGS`.
    ShowSettings,
    /// `SHOW [ALL | BUILT IN | USER DEFINED] FUNCTION[S]`; `user_defined`: only those (Plexus
    /// has none).
    ShowFunctions { user_defined: bool },
    /// `SHOW [ALL] PROCEDURE[S]`.
    ShowProcedures,
}

/// Which transactions a `SET … TRANSACTION ISOLATION LEVEL` applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationScope {
    /// Every later transaction of the session.
    Session,
    /// The next transaction of the session only.
    Next,
    /// The server-wide default (refused at run time: it is fixed at start-up).
    Global,
}

/// The isolation levels Plexus implements, as named in a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationName {
    /// `SNAPSHOT` or `SNAPSHOT ISOLATION`.
    Snapshot,
    /// `SERIALIZABLE`.
    Serializable,
}

/// The value of `SET SESSION name = value`: a literal, kept as written (the settings registry
/// parses it by the setting's type).
#[derive(Debug, Clone, PartialEq)]
pub struct SettingValue {
    pub text: String,
    pub span: Span,
}

/// An index command (Neo4j 5 syntax), run by the connection rather than planned as a query.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaCommand {
    /// `CREATE INDEX [name] [IF NOT EXISTS] FOR (n:Label) ON (n.property)`, or
    /// `FOR ()-[r:TYPE]-() ON (r.property)` (either arrow, or none).
    CreateIndex {
        name: Option<Ident>,
        if_not_exists: bool,
        on: IndexFor,
        property: Ident,
    },
    /// `DROP INDEX name [IF EXISTS]`.
    DropIndex { name: Ident, if_exists: bool },
    /// `SHOW INDEX` / `SHOW INDEXES`.
    ShowIndexes,
}

/// A table or constraint command, run by the connection against the catalog (see
/// `parser::table` for the grammar).
#[derive(Debug, Clone, PartialEq)]
pub enum TableCommand {
    /// `CREATE NODE TABLE [IF NOT EXISTS] Name(col TYPE [PRIMARY KEY], …, [PRIMARY KEY (col)])`.
    CreateNodeTable {
        name: Ident,
        if_not_exists: bool,
        columns: Vec<ColumnDef>,
        /// The key column, written inline or as a `PRIMARY KEY (col)` item.
        primary_key: Option<Ident>,
    },
    /// `CREATE REL TABLE [IF NOT EXISTS] Name(FROM A TO B, [FROM C TO D, …] col TYPE, …)`.
    CreateRelTable {
        name: Ident,
        if_not_exists: bool,
        /// The (FROM, TO) node tables, at least one pair.
        connections: Vec<(Ident, Ident)>,
        columns: Vec<ColumnDef>,
    },
    /// `DROP TABLE [IF EXISTS] Name`.
    DropTable { name: Ident, if_exists: bool },
    /// `SHOW TABLES`.
    ShowTables,
    /// `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (v:Label) REQUIRE v.prop IS UNIQUE` or
    /// `… IS NODE KEY`.
    CreateConstraint {
        name: Option<Ident>,
        if_not_exists: bool,
        label: Ident,
        property: Ident,
        kind: ConstraintKind,
    },
    /// `DROP CONSTRAINT name [IF EXISTS]`.
    DropConstraint { name: Ident, if_exists: bool },
    /// `SHOW CONSTRAINT` / `SHOW CONSTRAINTS`.
    ShowConstraints,
}

/// What a `CREATE CONSTRAINT` requires of the property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintKind {
    /// `IS UNIQUE`.
    Unique,
    /// `IS NODE KEY`.
    NodeKey,
}

/// One typed column of a `CREATE … TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: Ident,
    pub column_type: ColumnType,
    /// Where the type name is written (errors about the type point here).
    pub type_span: Span,
}

/// The column type names a table declaration accepts (Kùzu's), as written. The engine maps
/// each onto its storage type; the narrower integers and `FLOAT` are names for the same
/// 64-bit column as `INT64` and `DOUBLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Int64,
    Int32,
    Int16,
    Int8,
    Double,
    Float,
    String,
    Bool,
    Date,
    Timestamp,
    Interval,
}

impl ColumnType {
    /// Every accepted type, with its name (the first spelling of each is the canonical one;
    /// `BOOLEAN` is another spelling of `BOOL`).
    pub const NAMES: [(&'static str, ColumnType); 12] = [
        ("INT64", ColumnType::Int64),
        ("INT32", ColumnType::Int32),
        ("INT16", ColumnType::Int16),
        ("INT8", ColumnType::Int8),
        ("DOUBLE", ColumnType::Double),
        ("FLOAT", ColumnType::Float),
        ("STRING", ColumnType::String),
        ("BOOL", ColumnType::Bool),
        ("BOOLEAN", ColumnType::Bool),
        ("DATE", ColumnType::Date),
        ("TIMESTAMP", ColumnType::Timestamp),
        ("INTERVAL", ColumnType::Interval),
    ];

    /// The type named `name` (any case).
    pub fn parse(name: &str) -> Option<ColumnType> {
        Self::NAMES
            .iter()
            .find(|(spelling, _)| spelling.eq_ignore_ascii_case(name))
            .map(|&(_, column_type)| column_type)
    }

    /// The accepted names, comma-separated, for error messages.
    pub fn accepted_names() -> String {
        Self::NAMES.map(|(name, _)| name).join(", ")
    }
}

/// What `CREATE INDEX … FOR` names: the nodes with a label, or the relationships of a type.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexFor {
    Label(Ident),
    RelationshipType(Ident),
}

/// A top-level statement: a query, optionally under `EXPLAIN` or `PROFILE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub mode: QueryMode,
    /// `USE name`: the attached graph the statement reads (`None`: the database).
    pub graph: Option<Ident>,
    pub query: Query,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryMode {
    Normal,
    Explain,
    /// `EXPLAIN VERBOSE`: the plan as bound and after each optimizer pass.
    ExplainVerbose,
    Profile,
}

/// Single queries combined with `UNION` / `UNION ALL`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub first: SingleQuery,
    pub unions: Vec<UnionPart>,
    pub span: Span,
}

/// `UNION [ALL] <query>`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionPart {
    pub all: bool,
    pub query: SingleQuery,
    pub span: Span,
}

/// A sequence of clauses (one branch of a UNION).
#[derive(Debug, Clone, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClauseKind {
    Match(Match),
    Unwind(Unwind),
    LoadCsv(LoadCsv),
    With(With),
    Return(Return),
    Create(Create),
    Merge(Merge),
    Set(SetClause),
    Remove(Remove),
    Delete(Delete),
    Call(ProcedureCall),
    /// `CALL { <query> }`, `CALL (x, y) { <query> }`
    CallSubquery(Box<CallSubquery>),
    /// `CALL { <query> } IN TRANSACTIONS ...`: the subquery run over batches of input rows,
    /// each batch in a transaction of its own.
    CallInTransactions(Box<CallInTransactions>),
    Foreach(Foreach),
    /// `FINISH`: ends a query in place of RETURN; the query returns no rows and no columns.
    Finish,
}

impl ClauseKind {
    /// The clause's keyword(s), for messages: `OPTIONAL MATCH`, `DETACH DELETE`, `CALL {}`.
    pub fn name(&self) -> &'static str {
        match self {
            ClauseKind::Match(Match { optional: true, .. }) => "OPTIONAL MATCH",
            ClauseKind::Match(_) => "MATCH",
            ClauseKind::Unwind(_) => "UNWIND",
            ClauseKind::LoadCsv(_) => "LOAD CSV",
            ClauseKind::With(_) => "WITH",
            ClauseKind::Return(_) => "RETURN",
            ClauseKind::Create(_) => "CREATE",
            ClauseKind::Merge(_) => "MERGE",
            ClauseKind::Set(_) => "SET",
            ClauseKind::Remove(_) => "REMOVE",
            ClauseKind::Delete(Delete { detach: true, .. }) => "DETACH DELETE",
            ClauseKind::Delete(_) => "DELETE",
            ClauseKind::Call(_) => "CALL",
            ClauseKind::CallSubquery(_) => "CALL {}",
            ClauseKind::CallInTransactions(_) => "CALL { ... } IN TRANSACTIONS",
            ClauseKind::Foreach(_) => "FOREACH",
            ClauseKind::Finish => "FINISH",
        }
    }

    /// True for clauses that write: CREATE, MERGE, SET, REMOVE, DELETE, FOREACH.
    pub fn is_updating(&self) -> bool {
        matches!(
            self,
            ClauseKind::Create(_)
                | ClauseKind::Merge(_)
                | ClauseKind::Set(_)
                | ClauseKind::Remove(_)
                | ClauseKind::Delete(_)
                | ClauseKind::Foreach(_)
        )
    }
}

/// `CALL { <query> } IN TRANSACTIONS [OF <n> ROW[S]] [ON ERROR CONTINUE | BREAK | FAIL]
/// [REPORT STATUS AS <variable>]` (the three options in any order, each at most once).
#[derive(Debug, Clone, PartialEq)]
pub struct CallInTransactions {
    /// `CALL (x, y) { ... } IN TRANSACTIONS`: the variables the subquery sees.
    pub imports: Option<SubqueryImports>,
    pub query: Query,
    /// The expression after `OF` (checked by the binder); `None`: the default batch size.
    pub batch_size: Option<Expr>,
    pub on_error: OnError,
    /// `REPORT STATUS AS v` (only with `ON ERROR CONTINUE` or `BREAK`).
    pub report_status: Option<Ident>,
}

/// `CALL [(imports)] { <query> }`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSubquery {
    /// The variable scope clause of a Neo4j 5 scoped subquery; `None`: the openCypher form,
    /// whose leading `WITH` imports variables.
    pub imports: Option<SubqueryImports>,
    pub query: Query,
}

/// The outer variables a scoped subquery (`CALL (x, y) { ... }`) sees.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryImports {
    /// `CALL (*)`: every variable in scope.
    All,
    /// `CALL (x, y)`, or none with `CALL ()`.
    Variables(Vec<Ident>),
}

/// What `CALL { ... } IN TRANSACTIONS` does when a batch fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// The statement fails with the batch's error (earlier batches stay committed).
    #[default]
    Fail,
    /// The batch is rolled back; the next batches run.
    Continue,
    /// The batch is rolled back; no further batch runs, and the statement succeeds.
    Break,
}

impl OnError {
    pub fn keyword(self) -> &'static str {
        match self {
            OnError::Fail => "FAIL",
            OnError::Continue => "CONTINUE",
            OnError::Break => "BREAK",
        }
    }
}

/// `[OPTIONAL] MATCH <pattern> [WHERE <predicate>]`
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub optional: bool,
    pub pattern: Pattern,
    pub predicate: Option<Expr>,
}

/// `UNWIND <expr> AS <variable>`
#[derive(Debug, Clone, PartialEq)]
pub struct Unwind {
    pub expr: Expr,
    pub variable: Ident,
}

/// `LOAD CSV [WITH HEADERS] FROM <source> AS <variable> [FIELDTERMINATOR <string>]`: for
/// each input row, the records of the file `source` names, one row each.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadCsv {
    /// `WITH HEADERS`: the first record names the fields and each row is a map.
    pub with_headers: bool,
    pub source: Expr,
    pub variable: Ident,
    /// The literal after `FIELDTERMINATOR`, as written (validated by the binder).
    pub field_terminator: Option<StringLiteral>,
}

/// A string literal kept as a value with its position (not an expression).
#[derive(Debug, Clone, PartialEq)]
pub struct StringLiteral {
    pub value: String,
    pub span: Span,
}

/// `WITH <projection> [WHERE <predicate>]`
#[derive(Debug, Clone, PartialEq)]
pub struct With {
    pub projection: Projection,
    pub predicate: Option<Expr>,
}

/// `RETURN <projection>`
#[derive(Debug, Clone, PartialEq)]
pub struct Return {
    pub projection: Projection,
}

/// The shared body of WITH and RETURN.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub distinct: bool,
    /// `*`: project every variable in scope (before `items`).
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
}

/// `<expr> [AS <alias>]`
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    pub alias: Option<Ident>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub order: SortOrder,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortOrder {
    Ascending,
    Descending,
}

/// `CREATE <pattern>`
#[derive(Debug, Clone, PartialEq)]
pub struct Create {
    pub pattern: Pattern,
}

/// `MERGE <pattern part> [ON CREATE SET ... | ON MATCH SET ...]*`
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    pub pattern: PatternPart,
    pub actions: Vec<MergeAction>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MergeAction {
    pub on: MergeTrigger,
    pub items: Vec<SetItem>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MergeTrigger {
    OnCreate,
    OnMatch,
}

/// `SET <item>, ...`
#[derive(Debug, Clone, PartialEq)]
pub struct SetClause {
    pub items: Vec<SetItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SetItem {
    pub kind: SetItemKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetItemKind {
    /// `<entity>.<key> = <value>`
    Property {
        entity: Expr,
        key: Ident,
        value: Expr,
    },
    /// `<variable> = <map>`: replace all properties.
    Replace { variable: Ident, value: Expr },
    /// `<variable> += <map>`: add or overwrite properties.
    Merge { variable: Ident, value: Expr },
    /// `<variable>:<Label>:...`, also with dynamic labels (`n:A:$(expr)`, all of them).
    Labels {
        variable: Ident,
        labels: Vec<Ident>,
        dynamic: Vec<DynamicLabels>,
    },
}

/// `REMOVE <item>, ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Remove {
    pub items: Vec<RemoveItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RemoveItem {
    pub kind: RemoveItemKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RemoveItemKind {
    /// `<entity>.<key>`
    Property { entity: Expr, key: Ident },
    /// `<variable>:<Label>:...`, also with dynamic labels (`n:$(expr)`).
    Labels {
        variable: Ident,
        labels: Vec<Ident>,
        dynamic: Vec<DynamicLabels>,
    },
}

/// `[DETACH] DELETE <expr>, ...`
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub detach: bool,
    pub exprs: Vec<Expr>,
}

/// `CALL ns.proc(<args>) [YIELD ...]`
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureCall {
    pub procedure: QualifiedName,
    /// `None` when written without parentheses (`CALL db.labels`): the arguments are then
    /// taken implicitly from parameters of the same names (standalone calls only).
    pub args: Option<Vec<Expr>>,
    pub yield_clause: Option<YieldClause>,
}

/// `YIELD * ` or `YIELD field [AS alias], ... [WHERE <predicate>]`
#[derive(Debug, Clone, PartialEq)]
pub struct YieldClause {
    pub items: YieldItems,
    pub predicate: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum YieldItems {
    Star,
    Fields(Vec<YieldItem>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct YieldItem {
    pub field: Ident,
    pub alias: Option<Ident>,
}

/// `FOREACH (<variable> IN <list> | <updating clause> ...)`
#[derive(Debug, Clone, PartialEq)]
pub struct Foreach {
    pub variable: Ident,
    pub list: Expr,
    pub clauses: Vec<Clause>,
}

/// A dotted name: `count`, `db.labels`, `test.my.proc`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    pub namespace: Vec<Ident>,
    pub name: Ident,
}

/// Comma-separated pattern parts, as in `MATCH (a)-->(b), p = (c)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub parts: Vec<PatternPart>,
    pub span: Span,
}

/// `[p =] [shortestPath(] <element> [)]`, or with a GQL path selector
/// `[p =] ANY SHORTEST | ALL SHORTEST | SHORTEST 1 <element or (element WHERE predicate)>`.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternPart {
    pub variable: Option<Ident>,
    pub shortest: Option<ShortestPath>,
    /// The shortest-path selection was written as a GQL path selector: the MATCH's WHERE
    /// filters the selected paths afterwards (Neo4j's post-filter), and only `predicate` is
    /// part of the search. With `shortestPath(...)` the MATCH's WHERE is.
    pub selector: bool,
    /// The WHERE inside a parenthesized path pattern: `((a)-[:R]->+(b) WHERE ...)`.
    pub predicate: Option<Expr>,
    pub element: PatternElement,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShortestPath {
    /// `shortestPath(...)`
    Single,
    /// `allShortestPaths(...)`
    All,
}

/// A node followed by zero or more (relationship, node) steps.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternElement {
    pub start: NodePattern,
    pub chain: Vec<PatternStep>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatternStep {
    pub relationship: RelationshipPattern,
    pub node: NodePattern,
}

/// A Neo4j 5 label expression. Precedence, tightest first: `!`, `&`, `|`; parentheses group.
/// On a relationship, a "label" is its type.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelExpr {
    Label(Ident),
    /// `%`: any label at all.
    Any,
    Not(Box<LabelExpr>),
    And(Box<LabelExpr>, Box<LabelExpr>),
    Or(Box<LabelExpr>, Box<LabelExpr>),
    /// `$(expr)`, `$all(expr)`, `$any(expr)`: labels computed per row (Neo4j 5.26).
    Dynamic(DynamicLabels),
}

impl LabelExpr {
    /// Whether a `$(…)` atom occurs in the expression.
    pub fn has_dynamic(&self) -> bool {
        match self {
            Self::Label(_) | Self::Any => false,
            Self::Dynamic(_) => true,
            Self::Not(e) => e.has_dynamic(),
            Self::And(a, b) | Self::Or(a, b) => a.has_dynamic() || b.has_dynamic(),
        }
    }

    /// Splits the expression into its plain-label conjuncts and the conjunction of the rest
    /// (`A&!B&C` gives `([A, C], Some(!B))`), so `:A&B` is planned like `:A:B`.
    pub fn split_plain(self) -> (Vec<Ident>, Option<LabelExpr>) {
        fn flatten(expr: LabelExpr, out: &mut Vec<LabelExpr>) {
            match expr {
                LabelExpr::And(a, b) => {
                    flatten(*a, out);
                    flatten(*b, out);
                }
                other => out.push(other),
            }
        }
        let mut conjuncts = Vec::new();
        flatten(self, &mut conjuncts);
        let mut labels = Vec::new();
        let mut rest: Option<LabelExpr> = None;
        for conjunct in conjuncts {
            match conjunct {
                LabelExpr::Label(name) => labels.push(name),
                other => {
                    rest = Some(match rest {
                        None => other,
                        Some(acc) => LabelExpr::And(Box::new(acc), Box::new(other)),
                    })
                }
            }
        }
        (labels, rest)
    }

    /// The expression as labels that SET, REMOVE or CREATE can write: a conjunction of plain
    /// labels and `$(…)` / `$all(…)` / `$any(…)` atoms (the writer refuses `$any`); `None` for
    /// anything else (`|`, `!`, `%`).
    pub fn settable(&self) -> Option<(Vec<Ident>, Vec<DynamicLabels>)> {
        fn walk(
            expr: &LabelExpr,
            labels: &mut Vec<Ident>,
            dynamic: &mut Vec<DynamicLabels>,
        ) -> bool {
            match expr {
                LabelExpr::Label(name) => labels.push(name.clone()),
                LabelExpr::Dynamic(d) => dynamic.push(d.clone()),
                LabelExpr::And(a, b) => {
                    return walk(a, labels, dynamic) && walk(b, labels, dynamic);
                }
                LabelExpr::Any | LabelExpr::Not(_) | LabelExpr::Or(..) => return false,
            }
            true
        }
        let (mut labels, mut dynamic) = (Vec::new(), Vec::new());
        walk(self, &mut labels, &mut dynamic).then_some((labels, dynamic))
    }
}

/// `:$(expr)`, `:$all(expr)` or `:$any(expr)` (Neo4j 5.26 dynamic labels and types): `expr`
/// gives a STRING or a LIST<STRING> per row; the entity must carry all of those labels
/// (`$(…)`, `$all`) or at least one (`$any`). On a relationship a "label" is its type.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicLabels {
    pub expr: Box<Expr>,
    pub any: bool,
    pub span: Span,
}

/// `(<variable>:<Label>... <properties>)`
#[derive(Debug, Clone, PartialEq)]
pub struct NodePattern {
    pub variable: Option<Ident>,
    /// The plain labels the node must have: `:A:B`, and the plain conjuncts of a label
    /// expression (`:A&!B` has `labels = [A]`).
    pub labels: Vec<Ident>,
    /// The rest of a Neo4j 5 label expression (`:A|B`, `:!A`, `:%`) that the node must also
    /// satisfy; `None` when the labels are plain.
    pub label_expr: Option<LabelExpr>,
    /// A map literal or a parameter.
    pub properties: Option<Expr>,
    pub span: Span,
}

/// `-[<variable>:<T1>|<T2> *<min>..<max> <properties>]->`
#[derive(Debug, Clone, PartialEq)]
pub struct RelationshipPattern {
    pub direction: RelDirection,
    pub variable: Option<Ident>,
    /// Alternatives: the relationship has one of these types (any type when empty).
    pub types: Vec<Ident>,
    /// `[:$(expr)]` / `[:$any(expr)]`: a type computed per row (then `types` is empty).
    pub dynamic_type: Option<DynamicLabels>,
    /// `Some` for a variable-length relationship.
    pub length: Option<VarLength>,
    /// A map literal or a parameter.
    pub properties: Option<Expr>,
    /// Written as a quantified group of this one relationship, `((x)-[r]->(y) WHERE …){m,n}`:
    /// its inner nodes and WHERE (the quantifier is `length`).
    pub group: Option<Box<QuantifiedGroup>>,
    pub span: Span,
}

/// The inner parts of a quantified group `((x:A)-[r:R]->(y:B) WHERE …){m,n}`: every hop of the
/// repeated relationship goes from an `x` to a `y` that match these node patterns and passes
/// the WHERE; outside the group `x`, `y` (and `r`) are the lists of their values per hop.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantifiedGroup {
    pub from: NodePattern,
    pub to: NodePattern,
    pub predicate: Option<Expr>,
}

/// Direction as written, reading the pattern left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelDirection {
    /// `-->`
    Outgoing,
    /// `<--`
    Incoming,
    /// `--` (also `<-->`)
    Undirected,
}

/// The bounds of `*min..max`; `None` means "not given" (`*` alone has neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VarLength {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// `$name`
    Parameter(String),
    Variable(Ident),
    /// `<expr>.<key>`
    Property {
        expr: Box<Expr>,
        key: Ident,
    },
    /// `<expr>[<index>]`
    Index {
        expr: Box<Expr>,
        index: Box<Expr>,
    },
    /// `<expr>[<from>..<to>]`
    Slice {
        expr: Box<Expr>,
        from: Option<Box<Expr>>,
        to: Option<Box<Expr>>,
    },
    /// `<expr>:<Label>:...`
    HasLabels {
        expr: Box<Expr>,
        labels: Vec<Ident>,
    },
    /// `<expr>:<label expression>` that is not a plain conjunction: `n:A|B`, `n:!A`, `n:%`.
    LabelTest {
        expr: Box<Expr>,
        label_expr: LabelExpr,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// A comparison chain `a < b <= c`, meaning `a < b AND b <= c`.
    Comparison {
        first: Box<Expr>,
        rest: Vec<(ComparisonOp, Expr)>,
    },
    /// `<expr> IS [NOT] NULL`
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `<expr> IS [NOT] :: <type>` (also `IS [NOT] TYPED`, and `<expr> :: <type>`): a Neo4j 5
    /// type predicate.
    IsType {
        expr: Box<Expr>,
        negated: bool,
        ty: CypherType,
    },
    List(Vec<Expr>),
    Map(Vec<(Ident, Expr)>),
    /// `<variable>{.key, .*, key: expr, other_variable}`
    MapProjection {
        variable: Ident,
        items: Vec<MapProjectionItem>,
    },
    FunctionCall {
        name: QualifiedName,
        distinct: bool,
        args: Vec<Expr>,
    },
    /// `count(*)`
    CountStar,
    /// `CASE [<operand>] WHEN .. THEN .. [ELSE ..] END`
    Case {
        operand: Option<Box<Expr>>,
        alternatives: Vec<CaseAlternative>,
        default: Option<Box<Expr>>,
    },
    /// `[<variable> IN <list> [WHERE <predicate>] [| <projection>]]`
    ListComprehension {
        variable: Ident,
        list: Box<Expr>,
        predicate: Option<Box<Expr>>,
        projection: Option<Box<Expr>>,
    },
    /// `[[<path> =] <pattern> [WHERE <predicate>] | <projection>]`
    PatternComprehension {
        variable: Option<Ident>,
        pattern: Box<PatternElement>,
        predicate: Option<Box<Expr>>,
        projection: Box<Expr>,
    },
    /// A relationship pattern used as a predicate: `WHERE (a)-[:KNOWS]->(b)`.
    PatternPredicate(Box<PatternElement>),
    /// `EXISTS { ... }`: whether the subquery has a row.
    Exists(Box<SubqueryBody>),
    /// `COUNT { ... }`: how many rows the subquery has. Not `count(...)`, the aggregate
    /// function, nor `count{.key}`, a map projection of a variable named `count`.
    CountSubquery(Box<SubqueryBody>),
    /// `COLLECT { ... }`: the list of the values of the subquery's single RETURN column, in
    /// its row order. Not `collect(...)`, the aggregate function.
    CollectSubquery(Box<Query>),
    /// `all|any|none|single(<variable> IN <list> [WHERE <predicate>])`
    Quantifier {
        quantifier: Quantifier,
        variable: Ident,
        list: Box<Expr>,
        predicate: Option<Box<Expr>>,
    },
    /// `reduce(<accumulator> = <init>, <variable> IN <list> | <expr>)`
    Reduce {
        accumulator: Ident,
        init: Box<Expr>,
        variable: Ident,
        list: Box<Expr>,
        expr: Box<Expr>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Boolean(bool),
    Integer(i64),
    Float(f64),
    String(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum MapProjectionItem {
    /// `.key`
    Property(Ident),
    /// `.*`
    AllProperties,
    /// `key: <expr>`
    Literal(Ident, Expr),
    /// `variable` (shorthand for `variable: variable`)
    Variable(Ident),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseAlternative {
    pub when: Expr,
    pub then: Expr,
}

/// The body of a subquery expression, `EXISTS { ... }` or `COUNT { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryBody {
    /// `{ <pattern> [WHERE <predicate>] }`
    Pattern {
        pattern: Pattern,
        predicate: Option<Expr>,
    },
    /// `{ MATCH ... [RETURN ...] }`: a query without updating clauses, which need not end
    /// with RETURN.
    Query(Query),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    All,
    Any,
    None,
    Single,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Not,
    Negate,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    Xor,
    And,
    /// `=~`
    RegexMatch,
    StartsWith,
    EndsWith,
    Contains,
    In,
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Power,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComparisonOp {
    Eq,
    NotEq,
    Lt,
    Gt,
    Le,
    Ge,
}

/// Operator precedence, loosest first. The parser and the printer both use this table, so
/// what one parenthesises the other reads back the same way.
///
/// All binary operators are left-associative, including `^` (the TCK's Precedence2 scenarios
/// require `4 ^ 3 ^ 2 = (4 ^ 3) ^ 2`), and unary minus binds tighter than `^` (`-3 ^ 2 = 9`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Precedence {
    Lowest,
    Or,
    Xor,
    And,
    Not,
    /// `=`, `<>`, `<`, `>`, `<=`, `>=` (chained)
    Comparison,
    /// `=~`, `STARTS WITH`, `ENDS WITH`, `CONTAINS`, `IN`, `IS [NOT] NULL`
    Predicate,
    Additive,
    Multiplicative,
    Power,
    Unary,
    /// `.key`, `[index]`, `[from..to]`, `:Label`
    Postfix,
    Atom,
}

impl Precedence {
    /// The next tighter level: the minimum for the right operand of a left-associative operator.
    pub(crate) fn tighter(self) -> Precedence {
        match self {
            Precedence::Lowest => Precedence::Or,
            Precedence::Or => Precedence::Xor,
            Precedence::Xor => Precedence::And,
            Precedence::And => Precedence::Not,
            Precedence::Not => Precedence::Comparison,
            Precedence::Comparison => Precedence::Predicate,
            Precedence::Predicate => Precedence::Additive,
            Precedence::Additive => Precedence::Multiplicative,
            Precedence::Multiplicative => Precedence::Power,
            Precedence::Power => Precedence::Unary,
            Precedence::Unary => Precedence::Postfix,
            Precedence::Postfix | Precedence::Atom => Precedence::Atom,
        }
    }
}

impl BinaryOp {
    pub(crate) fn precedence(self) -> Precedence {
        match self {
            BinaryOp::Or => Precedence::Or,
            BinaryOp::Xor => Precedence::Xor,
            BinaryOp::And => Precedence::And,
            BinaryOp::RegexMatch
            | BinaryOp::StartsWith
            | BinaryOp::EndsWith
            | BinaryOp::Contains
            | BinaryOp::In => Precedence::Predicate,
            BinaryOp::Add | BinaryOp::Subtract => Precedence::Additive,
            BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo => Precedence::Multiplicative,
            BinaryOp::Power => Precedence::Power,
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Self { kind, span }
    }

    /// How tightly this expression binds when printed without parentheses.
    pub(crate) fn precedence(&self) -> Precedence {
        match &self.kind {
            ExprKind::Unary {
                op: UnaryOp::Not, ..
            } => Precedence::Not,
            ExprKind::Unary { .. } => Precedence::Unary,
            ExprKind::Binary { op, .. } => op.precedence(),
            ExprKind::Comparison { .. } => Precedence::Comparison,
            ExprKind::IsNull { .. } | ExprKind::IsType { .. } => Precedence::Predicate,
            ExprKind::Literal(Literal::Integer(value)) if *value < 0 => Precedence::Unary,
            ExprKind::Literal(Literal::Float(value)) if value.is_sign_negative() => {
                Precedence::Unary
            }
            ExprKind::Property { .. }
            | ExprKind::Index { .. }
            | ExprKind::Slice { .. }
            | ExprKind::HasLabels { .. }
            | ExprKind::LabelTest { .. } => Precedence::Postfix,
            // A pattern predicate is only unambiguous where a boolean operator or a delimiter
            // follows it: `(a)-->(b) - 1` would read `- 1` as another relationship.
            ExprKind::PatternPredicate(_) => Precedence::Not,
            _ => Precedence::Atom,
        }
    }
}

/// A value type as a type predicate names it (`x IS :: INTEGER NOT NULL`); see
/// `parser::types` for the spellings accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct CypherType {
    pub kind: TypeKind,
    /// `NOT NULL`: null is not a value of the type.
    pub not_null: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    /// Every value.
    Any,
    /// No value at all.
    Nothing,
    /// Only null.
    Null,
    Boolean,
    String,
    Integer,
    Float,
    Date,
    LocalTime,
    ZonedTime,
    LocalDateTime,
    ZonedDateTime,
    Duration,
    Point,
    Node,
    Relationship,
    Map,
    Path,
    /// A value a property can hold: a boolean, string, number, temporal value, duration or
    /// point, or a list of one of those.
    PropertyValue,
    /// `LIST<T>`: a list whose every element is of type `T`.
    List(Box<CypherType>),
    /// `A | B` (`ANY<A | B>`): a value of any of them.
    Union(Vec<CypherType>),
}
