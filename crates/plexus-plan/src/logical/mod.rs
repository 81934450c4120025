//! Logical plans: what to compute, as a tree of relational and graph operators.
//!
//! SLOTS
//! =====
//! Every variable of a query — named or anonymous, in any subquery — is given a *slot*: a
//! column index in the rows that flow between operators (the "slotted" layout of Neo4j's
//! runtime). All rows of one query have the same width; an operator that binds a variable
//! fills its slot, and a slot nobody filled yet is null. Projections (`WITH a AS b`) never
//! overwrite: they fill fresh slots. So operators need no schema negotiation, an `Apply`'s
//! inner plan sees its argument row's slots directly, and `UNION` branches project into the
//! same result slots.
//!
//! SHAPE
//! =====
//! Plans are trees whose leaves are [`LogicalPlan::Argument`]: one row, which is the empty row
//! at the top of a query and the current outer row inside an `Apply`/`Optional`/subquery.
//! Operators are in the order the clauses were written. Within a MATCH, each pattern part
//! starts at the node the cost model (`optimizer::join_order`) estimates cheapest from the database's label and
//! relationship-type counts — without them, a node that is already bound, else one with a
//! label, else the first node — and expands along the pattern from there. A part
//! may also start at a relationship an index on its type finds, with both its ends:
//!
//! ```text
//! MATCH (a)-[r:KNOWS]->(b) WHERE r.since = 2001 RETURN b.name
//!
//! Results [b.name]
//! └ Project s3 = s2.name
//!   └ Filter s1.since = 2001
//!     └ RelationshipIndexSeek (s0)-[s1:KNOWS(since = 2001)]->(s2) [index knows_since, …]
//!       └ Argument
//! ```
//!
//! ```text
//! MATCH (a:Person)-[k:KNOWS]->(b) WHERE b.age > 30 RETURN a.name
//!
//! Results [a.name]
//! └ Project s3 = s0.name
//!   └ Filter s2.age > 30
//!     └ Expand (s0)-[s1:KNOWS]->(s2)
//!       └ NodeScan s0:Person
//!         └ Argument
//! ```
//!
//! A part that shares no variable with what is bound before it is nested under each earlier
//! row, or, when the WHERE equates the two and the cost model prefers it, is planned once as
//! the build side of a `HashJoin` (see `join`), whose second child it is:
//!
//! ```text
//! MATCH (a:Person), (b:City) WHERE a.cityName = b.name RETURN a.id
//!
//! Results [a.id]
//! └ Project s2 = s0.id
//!   └ Filter s0.cityName = s1.name
//!     └ HashJoin s0.cityName = s1.name      each Person row, with every City row
//!       └ NodeScan s0:Person                whose name equals its cityName, from a
//!         └ Argument                        hash table of the City rows built once
//!       └ NodeScan s1:City
//!         └ Argument
//! ```
//!
//! An OPTIONAL MATCH is an `Optional` whose inner plan runs on each input row, or, when it is
//! one such part, a `HashJoin` with `optional` set (a left outer join: EXPLAIN's
//! `LeftOuterHashJoin`, see `join`, LEFT OUTER).

mod explain;
mod expr;
mod parallel;
mod pattern;
mod procedure;
mod set_at_a_time;
mod stages;
mod visit;

pub use explain::expr_text;
pub use expr::*;
pub use parallel::{
    ChunkSkip, PartialForm, chain as parallel_chain, chunk_skip, partial_form, partial_name,
};
pub use pattern::{
    BoundNode, BoundPart, BoundRel, DynamicType, MatchForm, PatternMatch, Properties, chain_and,
    equalities, node_predicate,
};
pub use procedure::{Procedure, ProcedureBody, ProcedureFn, ProcedureRegistry};
pub use set_at_a_time::set_at_a_time;
pub use stages::{
    BatchRows, DEFAULT_BATCH_ROWS, InTransactionsSpec, LoadCsvSpec, positive_batch_rows,
};

use plexus_cypher::ast::ShortestPath;
use plexus_types::Direction;
use std::sync::Arc;

/// The largest bound `*min..max` may name, and the depth of an unbounded `*`.
pub const MAX_VAR_LENGTH_DEPTH: u64 = 1_000;

/// What makes a `HashJoin` a left outer join (OPTIONAL MATCH).
#[derive(Debug, Clone)]
pub struct OuterJoin {
    /// The OPTIONAL MATCH's WHERE (and property-map keys) except what moved into the build
    /// side, evaluated on each joined row: a partner counts only where it is true.
    pub residual: Option<BExpr>,
    /// The slots set to null on an input row without a partner: the OPTIONAL MATCH's new
    /// variables.
    pub nulls: Vec<usize>,
}

/// A node to create: fill `slot` unless it is already bound.
#[derive(Debug, Clone)]
pub struct CreateNode {
    pub slot: usize,
    /// Already bound by an earlier clause: only referenced, not created.
    pub bound: bool,
    pub labels: WriteLabels,
    pub properties: Option<BExpr>,
}

#[derive(Debug, Clone)]
pub struct CreateRel {
    pub slot: usize,
    pub src: usize,
    pub dst: usize,
    pub rel_type: RelTypeName,
    pub properties: Option<BExpr>,
}

/// The labels a CREATE, MERGE, SET or REMOVE writes: the names written (`:A:B`) and the
/// expressions of `:$(expr)`, each giving a STRING or a LIST<STRING> per row (Neo4j 5.26
/// dynamic labels).
#[derive(Debug, Clone, Default)]
pub struct WriteLabels {
    pub fixed: Vec<Arc<str>>,
    pub dynamic: Vec<BExpr>,
}

/// The type of a created relationship: written (`[:T]`) or computed per row (`[:$(expr)]`,
/// exactly one STRING).
#[derive(Debug, Clone)]
pub enum RelTypeName {
    Fixed(Arc<str>),
    Dynamic(BExpr),
}

/// The creating half of CREATE and MERGE; nodes are created before relationships, and named
/// paths are built last.
#[derive(Debug, Clone, Default)]
pub struct CreatePattern {
    pub nodes: Vec<CreateNode>,
    pub rels: Vec<CreateRel>,
    /// `p = ...`: slots to fill with a path built from the pattern's elements.
    pub paths: Vec<(usize, BExpr)>,
}

/// One SET / REMOVE item, entities given by expressions over the row.
#[derive(Debug, Clone)]
pub enum SetOp {
    /// `e.key = value` (null removes).
    Property {
        entity: BExpr,
        key: Arc<str>,
        value: BExpr,
    },
    /// `e = map` (replace all) or `e += map` (merge).
    Properties {
        entity: BExpr,
        value: BExpr,
        replace: bool,
    },
    /// `e:A:B` (add) or `REMOVE e:A:B`.
    Labels {
        entity: BExpr,
        labels: WriteLabels,
        add: bool,
    },
}

/// The rows a sort must deliver when a SKIP/LIMIT follows it: `skip + limit`.
#[derive(Debug, Clone)]
pub struct TopCount {
    pub skip: Option<BExpr>,
    pub limit: BExpr,
}

#[derive(Debug, Clone)]
pub struct SortKey {
    pub expr: BExpr,
    pub descending: bool,
}

/// An aggregate function call: `count(DISTINCT x)`, `collect(x)`, `count(*)` (`arg` None).
#[derive(Debug, Clone)]
pub struct AggCall {
    pub function: AggFunction,
    pub distinct: bool,
    pub arg: Option<BExpr>,
    /// The second argument of `percentileCont` / `percentileDisc`.
    pub extra: Option<BExpr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunction {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
    StDev,
    StDevP,
    PercentileCont,
    PercentileDisc,
}

impl AggFunction {
    pub fn from_name(lower: &str) -> Option<AggFunction> {
        Some(match lower {
            "count" => AggFunction::Count,
            "sum" => AggFunction::Sum,
            "avg" => AggFunction::Avg,
            "min" => AggFunction::Min,
            "max" => AggFunction::Max,
            "collect" => AggFunction::Collect,
            "stdev" => AggFunction::StDev,
            "stdevp" => AggFunction::StDevP,
            "percentilecont" => AggFunction::PercentileCont,
            "percentiledisc" => AggFunction::PercentileDisc,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            AggFunction::Count => "count",
            AggFunction::Sum => "sum",
            AggFunction::Avg => "avg",
            AggFunction::Min => "min",
            AggFunction::Max => "max",
            AggFunction::Collect => "collect",
            AggFunction::StDev => "stDev",
            AggFunction::StDevP => "stDevP",
            AggFunction::PercentileCont => "percentileCont",
            AggFunction::PercentileDisc => "percentileDisc",
        }
    }
}

/// The relationship part of an expand.
#[derive(Debug, Clone)]
pub struct ExpandSpec {
    pub from: usize,
    pub rel: usize,
    pub to: usize,
    pub types: Vec<Arc<str>>,
    pub direction: Direction,
    /// `to` is already bound: keep only relationships that reach it.
    pub to_bound: bool,
    /// Relationship slots bound earlier in the same MATCH: the new relationship(s) must differ
    /// from all of them (relationship isomorphism). Entries may hold single relationships or
    /// lists (variable-length).
    pub distinct_from: Vec<usize>,
}

/// The relationship and its two ends that a relationship index seek binds, as in the pattern
/// `(left)-[rel:rel_type]->(right)` (or `<-`, or undirected).
#[derive(Debug, Clone)]
pub struct RelSeekSpec {
    pub left: usize,
    pub rel: usize,
    /// The same slot as `left` for `(a)-[r]->(a)`: only self-loops match.
    pub right: usize,
    pub rel_type: Arc<str>,
    /// From `left` to `right`: `Out` for `-->`, `In` for `<--`, `Both` undirected (each
    /// relationship once per orientation, a self-loop once — as an undirected expand).
    pub direction: Direction,
    /// The predicate on `rel`'s property; its `index` names the relationship index.
    pub seek: KeySeek,
    /// Relationship slots bound earlier in the same MATCH, as [`ExpandSpec::distinct_from`].
    pub distinct_from: Vec<usize>,
}

/// Bounds and per-relationship filter of a variable-length expand.
#[derive(Debug, Clone)]
pub struct VarLengthSpec {
    pub min: u64,
    pub max: Option<u64>,
    /// Predicates every relationship on the path must satisfy, each evaluated with the
    /// relationship in its slot: from `-[*{k: v}]->`, and for a shortest path from its
    /// MATCH's `all(r IN relationships(p) WHERE …)` (see [`PathFilter`]).
    pub rel_filter: Vec<(usize, BExpr)>,
    /// Shortest paths only: predicates every node on the path (both ends included) must
    /// satisfy, each evaluated with the node in its slot (`all(n IN nodes(p) WHERE …)`).
    pub node_filter: Vec<(usize, BExpr)>,
    /// A quantified group's condition on each hop (see [`HopFilter`]).
    pub hop_filter: Option<HopFilter>,
    /// Shortest paths only: the rest of the MATCH's WHERE that reads the path or its
    /// relationships, part of the search (see [`PathFilter`]).
    pub path_filter: Option<PathFilter>,
    /// `shortestPath(...)` / `allShortestPaths(...)`: only the shortest paths to `to`.
    pub shortest: Option<ShortestPath>,
    /// Planned right to left: the relationship list is reversed into pattern order.
    pub leftwards: bool,
    /// Only the distinct end nodes are used (set by the `var_length_bfs` pass, see
    /// `optimizer::var_length`): each end reachable from the start once per input row, found
    /// by a breadth-first search, and the relationship list left null.
    pub ends_only: bool,
    /// Nothing in the plan reads the relationship list (set by the `var_length_bfs` pass, see
    /// `optimizer::var_length`, UNREAD LISTS): the expand enumerates its trails as before but
    /// leaves the list's slot null instead of building a list per row.
    pub rels_unread: bool,
    /// Threads that may expand a large BFS frontier of an `ends_only` expand together (see
    /// `exec::reach`, PARALLEL FRONTIERS); 1: the query's thread alone. Set by the
    /// parallelization pass in read-only statements, outside `Parallel` pipelines.
    pub frontier_workers: usize,
}

/// The condition every hop of a quantified group `((x:A)-[r:R]->(y:B) WHERE …){m,n}` must
/// pass: the group's node patterns and WHERE, evaluated with the hop's source node in `from`,
/// its relationship in `rel` and its target node in `to` — source and target as the pattern
/// reads left to right.
#[derive(Debug, Clone)]
pub struct HopFilter {
    pub from: usize,
    pub rel: usize,
    pub to: usize,
    pub predicate: BExpr,
}

/// What a shortest-path search must satisfy beyond its per-relationship and per-node
/// filters: the conjuncts of its MATCH's WHERE that read the path (or its relationship
/// list) and nothing bound after it. As in Neo4j, the answer is the shortest path that
/// satisfies them, not the shortest path filtered afterwards: the executor checks each
/// candidate path, shortest first (an exhaustive search bounded by `var_length_path_limit`).
#[derive(Debug, Clone)]
pub struct PathFilter {
    pub predicate: BExpr,
    /// The path variable's slot and its expression (`BExpr::Path`), set on each candidate.
    pub path: Option<(usize, BExpr)>,
}

/// A predicate on one property of a scanned node, taken from the filters above its label scan,
/// that the scan can answer from an index (see `pushdown`) — or of a relationship, answered by
/// a relationship index (see `RelSeekSpec`).
#[derive(Debug, Clone)]
pub struct KeySeek {
    pub key: Arc<str>,
    pub predicate: SeekPredicate,
    /// The secondary index on (label, key) to answer it from (`NodeIndexSeek`); `None`: the
    /// primary-key indexes (`NodeByKeySeek`), which answer `Equal` and `In` only.
    pub index: Option<Arc<str>>,
}

/// What a [`KeySeek`] asks of its key. Operands do not depend on the scanned node; they are
/// evaluated per input row.
#[derive(Debug, Clone)]
pub enum SeekPredicate {
    /// `key = value`.
    Equal(BExpr),
    /// `key IN list`: the nodes of each element of the list.
    In(BExpr),
    /// `key > lower` (or `>=`) and `key < upper` (or `<=`); at least one side is present.
    Range {
        lower: Option<RangeBound>,
        upper: Option<RangeBound>,
    },
    /// `key STARTS WITH prefix`.
    Prefix(BExpr),
}

/// A predicate on the identity of a scanned node, taken from the filters above its scan
/// (see `pushdown`, ID SEEKS): `id(n) = v`, `elementId(n) = v` or either `IN list`. The scan
/// then produces only the node the value names, if it exists in the transaction's view and
/// carries the scan's label (`NodeByIdSeek`). The filter above still checks the predicate.
#[derive(Debug, Clone)]
pub struct IdSeek {
    pub function: IdFunction,
    pub predicate: IdPredicate,
}

/// Which identity an [`IdSeek`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdFunction {
    /// `id(n)`: an integer, `table << 32 | offset`.
    Id,
    /// `elementId(n)`: a string, `v<table>:<offset>` (`VertexId`'s `Display`).
    ElementId,
}

impl IdFunction {
    /// The Cypher function's name, as written in EXPLAIN.
    pub fn name(self) -> &'static str {
        match self {
            IdFunction::Id => "id",
            IdFunction::ElementId => "elementId",
        }
    }
}

/// What an [`IdSeek`] asks of the identity; operands do not depend on the scanned node.
#[derive(Debug, Clone)]
pub enum IdPredicate {
    /// `f(n) = value`.
    Equal(BExpr),
    /// `f(n) IN list`: the node each element names.
    In(BExpr),
}

/// One side of a [`SeekPredicate::Range`].
#[derive(Debug, Clone)]
pub struct RangeBound {
    pub value: BExpr,
    /// `>=` / `<=` rather than `>` / `<`.
    pub inclusive: bool,
}

#[derive(Debug, Clone)]
pub enum LogicalPlan {
    /// The argument row (the empty row at the top of a query).
    Argument,
    /// For each input row, every node (with `label`, if given; else, with `label_union`
    /// non-empty, with at least one of its labels) into `slot`; with a `seek`,
    /// only the nodes the label's primary-key index (or the seek's secondary index) finds for
    /// it when the index can answer (see `Transaction::seek_by_key` and `seek_by_index`), else
    /// every node of the label. The filter above the scan still checks the seek's predicate,
    /// so both ways give the same rows. An `id_seek` (labelled or not) goes before both: only
    /// the nodes its values name, that exist and carry `label` (see [`IdSeek`]).
    NodeScan {
        input: Box<LogicalPlan>,
        slot: usize,
        label: Option<Arc<str>>,
        /// A union of label scans (`UnionNodeByLabelsScan`): the nodes carrying any of these
        /// labels, each once, in id order (`Transaction::scan_any_label`) — a covering label
        /// set of the node's label expression (see `LabelTest::cover`), whose filter stays
        /// above the scan. Empty, or at least two labels with no `label`, no `seek` and no
        /// `id_seek` (an id seek replaces it, see `pushdown`).
        label_union: Vec<Arc<str>>,
        seek: Option<KeySeek>,
        id_seek: Option<IdSeek>,
        /// The cost model's estimate of the rows produced (see `cost`), when it ran.
        est_rows: Option<f64>,
    },
    /// For each input row, the relationships of one type whose property holds a value the
    /// seek asks for (found by the type's index, `Transaction::seek_edges_by_index`, else by a
    /// scan of the type), bound with their ends; the pattern part then expands from its ends.
    /// The filter above checks the seek's predicate, as for a `NodeScan`'s seek.
    RelationshipIndexSeek {
        input: Box<LogicalPlan>,
        spec: RelSeekSpec,
        est_rows: Option<f64>,
    },
    /// For each input row (the plan's `Argument`: one), one row holding in `slot` how many
    /// relationships of the types `rel_types` exist (`Transaction::count_edges`; no type
    /// named: of every type, `count_all_edges`), its other slots null as an `Aggregate`'s:
    /// `MATCH ()-[r:T]->() RETURN count(*)` answered from the types' rows instead of by
    /// expanding every node (`optimizer::count`).
    RelationshipCount {
        input: Box<LogicalPlan>,
        slot: usize,
        rel_types: Vec<Arc<str>>,
    },
    /// For each input row, the relationships of `from` into `rel` and their other ends into `to`.
    Expand {
        input: Box<LogicalPlan>,
        spec: ExpandSpec,
        est_rows: Option<f64>,
    },
    /// Paths of `min..max` relationships; `rel` receives the list of relationships.
    VarExpand {
        input: Box<LogicalPlan>,
        spec: ExpandSpec,
        length: VarLengthSpec,
        est_rows: Option<f64>,
    },
    Filter {
        input: Box<LogicalPlan>,
        predicate: BExpr,
    },
    /// A MATCH's WHERE as the binder leaves it, above the pattern's operators: the
    /// predicate-pushdown pass (`optimizer::pushdown`) replaces each by `Filter`s placed as low
    /// as they can go. Only logical: no plan the optimizer returns holds one.
    Where {
        input: Box<LogicalPlan>,
        predicate: BExpr,
    },
    /// A MATCH's pattern as the binder leaves it (see [`PatternMatch`]): the join-ordering
    /// pass (`optimizer::join_order`) replaces each by the scans, expands and joins that match
    /// it, under a `Where`. Only logical: no plan the optimizer returns holds one.
    Match {
        input: Box<LogicalPlan>,
        pattern: Box<PatternMatch>,
    },
    /// Evaluates every item on the input row, then fills the slots.
    Project {
        input: Box<LogicalPlan>,
        items: Vec<(usize, BExpr)>,
    },
    Aggregate {
        input: Box<LogicalPlan>,
        keys: Vec<(usize, BExpr)>,
        aggregates: Vec<(usize, AggCall)>,
    },
    Distinct {
        input: Box<LogicalPlan>,
        slots: Vec<usize>,
    },
    Sort {
        input: Box<LogicalPlan>,
        keys: Vec<SortKey>,
        /// Set when a LIMIT (after an optional SKIP) follows: only the first `skip + limit`
        /// rows in order can be returned, so the sort keeps no more (see `exec::ops::Sort`).
        top: Option<TopCount>,
    },
    Skip {
        input: Box<LogicalPlan>,
        count: BExpr,
    },
    Limit {
        input: Box<LogicalPlan>,
        count: BExpr,
        /// Consume the whole input even past the limit: earlier clauses write, and their
        /// effects must not depend on how many rows are returned.
        drain: bool,
    },
    Unwind {
        input: Box<LogicalPlan>,
        expr: BExpr,
        slot: usize,
    },
    /// `LOAD CSV`: for each input row, the input row once per record of the file `source`
    /// names (see `load_csv`).
    LoadCsv {
        input: Box<LogicalPlan>,
        source: BExpr,
        spec: LoadCsvSpec,
    },
    /// For each input row, the rows of `inner` (run with that row as its argument), or the
    /// input row with `nulls` set to null when `inner` has none.
    Optional {
        input: Box<LogicalPlan>,
        inner: Box<LogicalPlan>,
        nulls: Vec<usize>,
    },
    /// For each input row and each row of `inner`, the input row with the inner row's
    /// `returns` slots copied in; with `unit`, the input row once after running `inner` for
    /// its effects (`CALL { ... }` without RETURN).
    Apply {
        input: Box<LogicalPlan>,
        inner: Box<LogicalPlan>,
        returns: Vec<usize>,
        unit: bool,
    },
    /// `CALL { ... } IN TRANSACTIONS`: `Apply`'s rows, with the input cut into batches and the
    /// inner runs of each batch in a transaction of their own, committed before the next
    /// batch starts (see `call_in_transactions` and `exec::call_in_transactions`).
    CallInTransactions {
        input: Box<LogicalPlan>,
        inner: Box<LogicalPlan>,
        spec: InTransactionsSpec,
    },
    /// For each input row, the input row extended with the `build_slots` of every row of
    /// `build` whose `keys` are equal: `input_expr = build_expr` for each key pair (see
    /// `join`). `build` is planned over its own `Argument` and reads only the slots it binds,
    /// so its rows are the same for every input row: it runs once, into a hash table.
    HashJoin {
        input: Box<LogicalPlan>,
        build: Box<LogicalPlan>,
        /// (expression over an input row, expression over a build row).
        keys: Vec<(BExpr, BExpr)>,
        /// The slots `build` binds: the variables of its pattern part.
        build_slots: Vec<usize>,
        /// The cost model's estimate of `build`'s rows: the rows the hash table holds.
        est_rows: f64,
        /// A left outer join (an OPTIONAL MATCH, see `join`, LEFT OUTER): only partners that
        /// pass its residual count, and an input row with none is kept once, null-extended.
        optional: Option<OuterJoin>,
    },
    /// The rows of every branch, in order.
    Union { branches: Vec<LogicalPlan> },
    Create {
        input: Box<LogicalPlan>,
        pattern: CreatePattern,
    },
    /// For each input row: the rows of `matcher` (then `on_match`), or else create `pattern`
    /// (then `on_create`).
    Merge {
        input: Box<LogicalPlan>,
        matcher: Box<LogicalPlan>,
        pattern: CreatePattern,
        on_match: Vec<SetOp>,
        on_create: Vec<SetOp>,
    },
    Set {
        input: Box<LogicalPlan>,
        ops: Vec<SetOp>,
    },
    Delete {
        input: Box<LogicalPlan>,
        exprs: Vec<BExpr>,
        detach: bool,
    },
    /// For each input row and each element of `list` (in `slot`), runs `body` for its effects.
    Foreach {
        input: Box<LogicalPlan>,
        slot: usize,
        list: BExpr,
        body: Box<LogicalPlan>,
    },
    /// `CALL proc(args) YIELD ...`: for each input row, the procedure's rows.
    ProcedureCall {
        input: Box<LogicalPlan>,
        procedure: Arc<Procedure>,
        args: Vec<BExpr>,
        /// (output column index, slot)
        yields: Vec<(usize, usize)>,
    },
    /// Consumes the input and produces no rows (a query that does not end in RETURN).
    Discard { input: Box<LogicalPlan> },
    /// Runs `input` — streaming stages over a node scan of the top-level argument (see
    /// `parallel`), or an `Aggregate`, `Sort` or `Distinct` directly over such stages
    /// (computed partially per morsel) — on `workers` threads, each taking morsels of
    /// `morsel_vertices` scanned vertices, and yields their rows in scan order, or the merged
    /// output in the serial breaker's order (see `exec::parallel`, `exec::aggregate`,
    /// `exec::sort`).
    Parallel {
        input: Box<LogicalPlan>,
        workers: usize,
        morsel_vertices: usize,
        /// A partial top-k's scan skips chunks by the first key's zones (`ChunkSkip`).
        skip_chunks: Option<ChunkSkip>,
    },
    /// The query's result columns.
    Results {
        input: Box<LogicalPlan>,
        columns: Vec<(String, usize)>,
    },
}

/// A planned statement: the plan, its width and the subqueries it refers to.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    pub root: LogicalPlan,
    /// Number of slots in every row.
    pub width: usize,
    pub columns: Vec<String>,
    /// The slot of each column.
    pub column_slots: Vec<usize>,
    /// Whether the statement has an updating clause (CREATE, MERGE, SET, ...).
    pub updating: bool,
}

impl QueryPlan {
    /// Whether running the plan may write: it has an updating clause or calls a computed
    /// procedure (whose body gets the transaction, e.g. `algo.*` with `writeProperty`).
    pub fn may_write(&self) -> bool {
        self.updating || calls_computed_procedure(&self.root) || self.commits_in_batches()
    }

    /// Whether the plan has a `CALL { ... } IN TRANSACTIONS`, which commits transactions of
    /// its own and so needs an implicit (auto-commit) transaction.
    pub fn commits_in_batches(&self) -> bool {
        fn find(plan: &LogicalPlan) -> bool {
            matches!(plan, LogicalPlan::CallInTransactions { .. })
                || plan.children().into_iter().any(find)
        }
        find(&self.root)
    }
}

fn calls_computed_procedure(plan: &LogicalPlan) -> bool {
    let here =
        matches!(plan, LogicalPlan::ProcedureCall { procedure, .. } if procedure.compute.is_some());
    here || plan.children().into_iter().any(calls_computed_procedure)
}
