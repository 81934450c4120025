//! Cost model: where a pattern part starts, and so which way each relationship is expanded.
//!
//! A pattern part is a chain `(n0)-[r0]-(n1)-[r1]-…-(nk)`. Its plan starts at one node — a
//! bound node, a key seek, a label scan or an all-nodes scan — or at one relationship `ri`
//! found by a relationship index seek, which binds `ri`, `ni` and `ni+1`; it expands the
//! chain from there: every relationship on one side of the start, then every one on the
//! other. The start fixes the direction of each expand: starting at `n1` of `(a)-[:R]->(b)`
//! expands `:R` incoming. The planner estimates each candidate order and keeps the cheapest.
//!
//! ESTIMATES
//! =========
//! All rows are per input row of the part (the rows of the plan the part is built on).
//!
//! ```text
//!   start (n)      rows = 1                 n bound earlier, or a seek on its label's primary key
//!                         k                 `n.key IN list` seek on the primary key, k values
//!                         count(label) × k / distinct(label, property)
//!                                           a seek on a secondary index (label, property), k = 1
//!                                           for `=`, the list's length for `IN`; distinct: the
//!                                           values the index holds (EQUALITY_SELECTIVITY when
//!                                           it holds none)
//!                         count(label) × RANGE_SELECTIVITY
//!                                           a one-sided range seek on one (`n.p > x`)
//!                         count(label) × BOUNDED_RANGE_SELECTIVITY
//!                                           a two-sided range or a prefix seek on one
//!                         count(label)      label scan (first label, or the one label
//!                                           covering a label expression)
//!                         Σ count(label)    union of label scans, over the covering labels
//!                                           of a label expression (`(n:A|B)`)
//!                         count(all nodes)  all-nodes scan
//!   start -[r:T]-  rows = count(T) × o × f  a relationship index seek on (T, property): f as
//!                                           for a node's index seek (values / distinct for `=`
//!                                           and `IN`, 0.3 one-sided, 0.1 two-sided or prefix), o =
//!                                           2 undirected (both orientations), else 1; then ×
//!                                           the selectivity of r's other predicates and of
//!                                           each end's (a seek on an end counted as kept rows)
//!   its filter     × selectivity            per predicate on n (below)
//!   expand -[r]-   × degree(r, direction)   edges of r's types / vertices they leave (out) or
//!                                           reach (in); both directions: the sum; no type: all
//!                                           edges / all vertices
//!   *min..max      × Σ degree^h, h = min..=max (max capped at VAR_LENGTH_ESTIMATE_HOPS unless
//!                                           min is larger)
//!   its filter     × selectivity            per predicate on r alone, its seek's fraction
//!                                           for a predicate an index on r's type answers
//!   into a bound m ÷ count(m's domain)      only relationships that reach that one node
//!   far end m      × selectivity            a primary-key equality on m keeps 1/count(label)
//!                                           (k/count for an IN of k), an indexed seek the
//!                                           fraction its start would read (above)
//! ```
//!
//! An equality answered by a secondary index reads one value's share of the label: the label's
//! count over the distinct values the index holds (`Statistics::label_index_distinct_values`,
//! an O(1) read per table; `edge_type_index_distinct_values` for relationships). With 1,000
//! `P` nodes whose indexed `x` is unique, `MATCH (b:P {x: i * 2})` reads 1 row, not 100: so an
//! edge load `UNWIND … MATCH (a:P {x: i}), (b:P {x: f(i)})` seeks both ends per row instead
//! of hashing the whole label. Other selectivities are guesses, not statistics:
//! [`EQUALITY_SELECTIVITY`] for an equality on a property that no index answers (from the
//! pattern's map or a WHERE conjunct on that node alone),
//! [`PREDICATE_SELECTIVITY`] for any other WHERE conjunct on the node alone, and for range
//! seeks [`RANGE_SELECTIVITY`] / [`BOUNDED_RANGE_SELECTIVITY`] (a range's conjuncts are then
//! not counted again as predicates). Labels other than
//! the one scanned are assumed implied (a `:City` at the end of `IS_LOCATED_IN` filters
//! little).
//!
//! The cost of an order is the rows its start's scan produces (nothing for a bound start,
//! which needs no scan) plus the relationships each of its expands reads (rows in × degree) —
//! the work of the part. An expand into a bound node reads as many relationships as any other
//! and keeps few, so its cost is the reading, not what it keeps. Example, with 1,000
//! `Person`s, 50 `City`s and 1,000 `IS_LOCATED_IN` edges from `Person` to `City`:
//!
//! ```text
//!   MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City {id: 7})       (id is City's primary key)
//!
//!   start p:  NodeByLabelScan p:Person   1,000
//!             Expand (p)-->(c)           1,000 × 1.0          cost 2,000
//!   start c:  NodeByKeySeek c:City(id)   1
//!             Expand (c)<--(p)           1 × 20.0             cost 21    ← chosen
//! ```
//!
//! CHOICE
//! ======
//! Candidates are every node as start, then every relationship that a relationship index seek
//! can start at (one type with an index on a property it has a key predicate on, one hop, not
//! bound by an earlier clause, neither end bound before the part: a bound end is a cheaper
//! start, and the seek binds both), expanding rightwards first or leftwards first. The
//! rule-based order — a bound node, else the first labelled node, else the first node,
//! rightwards first — is tried first, then the others in pattern order; a candidate replaces
//! the best so far only when strictly cheaper. So without statistics (planning without a
//! database) or when nothing distinguishes the candidates the plan is exactly the rule-based
//! one. A seek on `r` wins when reading a fraction of `r`'s type costs less than any node
//! start and its expands: for `MATCH (a)-[r:KNOWS]->(b) WHERE r.since = 2001` with 1,000
//! nodes and 10,000 `KNOWS`, the seek reads 1,000 relationships, starting at `a` reads 1,000
//! nodes and 10,000 relationships. Parts whose property maps refer to another element of the
//! same part, and `shortestPath` parts (which bind both ends before searching), keep the
//! rule-based order.
//!
//! Only the order of work changes: every order checks the same predicates, relationship
//! uniqueness, and bound ends, so the rows are the same (their order, which Cypher leaves
//! unspecified without ORDER BY, may differ).
//!
//! HASH JOINS
//! ==========
//! A part that shares no variable with the rows it is planned on, and that the WHERE equates
//! with them (`a.cityName = b.name`), can be planned nested under each input row — today's
//! plan, which may seek on the equality — or once, as the build side of a hash join (see
//! `join`). Nested, every one of `probe_rows` input rows runs the part (its `cost`) and passes
//! each of its rows through the join's filter; hashed, the part runs once, each of its rows
//! goes into the table, and each input row looks its key up once:
//!
//! ```text
//!   nested = probe_rows × (cost_nested + rows_nested)
//!   hashed = cost_alone + rows_alone + probe_rows          hash join when hashed < nested
//! ```
//!
//! `_nested` is the part's estimate with the input's variables bound (so with a seek on
//! `b.id = a.ref`, one row per input row), `_alone` its estimate without them. With 1,000
//! people and 50 cities, `MATCH (p:Person), (c:City) WHERE p.cityName = c.name` (no index on
//! `name`): nested = 1,000 × (50 + 5) = 55,000 (the equality guessed to keep a tenth of the
//! cities), hashed = 50 + 50 + 1,000 = 1,100. A single input row never pays (the part alone
//! costs at least what it costs nested, and the probe comes on top), so EXISTS and other
//! inner plans, which run once per argument row, join only parts within themselves. An
//! OPTIONAL MATCH of one part is judged by the same formula at the outer level, with the
//! estimated rows before it as `probe_rows` (`MATCH (p:Person) OPTIONAL MATCH (c:City) WHERE
//! c.name = p.cityName`: the 1,100 above against 55,000): when it pays, the part becomes the
//! build side of a left outer hash join instead of an inner plan run per row (see `join`,
//! LEFT OUTER). The join's output is guessed as the larger side's rows (a key–foreign-key
//! join); a left outer join's as its input's, as the nested OPTIONAL MATCH's is.
//!
//! `probe_rows` is the product of the earlier parts' estimates (`Estimate::rows`, per row of
//! the MATCH's input, a joined part counting as above) times the estimated rows of the
//! MATCH's input: the product of the earlier MATCH clauses' estimates and of each UNWIND's
//! list length (a literal list's, `range()` over literals', else
//! [`UNWIND_UNKNOWN_LIST_ROWS`]; a LOAD CSV's [`LOAD_CSV_ESTIMATE_ROWS`]), every other clause
//! counted as keeping its rows (see the pass's ROW ESTIMATES). So `UNWIND $rows AS row MATCH
//! (a:P {x: row.a})` without an index hashes the label once instead of scanning it per row.
//! Without statistics nothing is estimated and no hash join is planned.
//!
//! The same estimates order a MATCH's parts (see the pass's PART ORDER).
//!
//! Not done: join ordering across clauses, histograms, distinct-value counts for
//! properties without an index, correlated predicates, costs of filters themselves.

use plexus_txn::EdgeTypeStatistics;
use plexus_types::Direction;

/// The fraction of rows an equality on a non-key property is guessed to keep.
pub(super) const EQUALITY_SELECTIVITY: f64 = 0.1;
/// The fraction of rows any other predicate on one node is guessed to keep.
pub(super) const PREDICATE_SELECTIVITY: f64 = 0.5;
/// The fraction of its label a one-sided range seek (`n.p > x`) is guessed to read.
pub(super) const RANGE_SELECTIVITY: f64 = 0.3;
/// The fraction of its label a range seek bounded on both sides, or a prefix seek, is guessed
/// to read.
pub(super) const BOUNDED_RANGE_SELECTIVITY: f64 = 0.1;
/// Values an `IN` seek is guessed to look up when its list is not a literal.
pub(super) const IN_LIST_ESTIMATE_VALUES: f64 = 3.0;
/// Rows an `UNWIND` of a list whose length is not known when planning (a parameter, a
/// computed list) is estimated to make of each input row.
pub(super) const UNWIND_UNKNOWN_LIST_ROWS: f64 = 10.0;
/// Rows a `LOAD CSV` is estimated to make of each input row (the file is not looked at when
/// planning): enough that a later MATCH prefers building a hash table to re-running per row.
pub(super) const LOAD_CSV_ESTIMATE_ROWS: f64 = 1_000.0;
/// Hops up to which a variable-length expand is estimated (`*`, `*1..1000` count as `*1..3`).
pub(super) const VAR_LENGTH_ESTIMATE_HOPS: u64 = 3;

/// One node of a part as the cost model sees it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct NodeShape {
    pub slot: usize,
    /// Bound before the part (by an earlier clause or part).
    pub bound: bool,
    /// Vertices the node can be: those of the labels its scan reads (its first label, or
    /// the covering label set of its label expression, counted per label), or all.
    pub domain_rows: f64,
    /// An equality on its first label's primary key, which a scan can seek.
    pub key_seek: bool,
    /// A seek on a property with a secondary index on its first label (and no equality on the
    /// primary key): the fraction of the label it is guessed to read (see ESTIMATES).
    pub index_seek: Option<f64>,
    /// Values a primary-key seek looks up (the length of an `IN` list; 1 for an equality).
    pub seek_values: f64,
    /// The fraction of rows its other predicates keep.
    pub selectivity: f64,
}

impl NodeShape {
    /// The fraction of rows reaching the node by an expand (not into a node bound already)
    /// that its predicates keep: its selectivity and, for a node with a seek, the seek's own
    /// predicate, which its selectivity leaves out.
    fn keeps(&self) -> f64 {
        let sought = if self.key_seek {
            (self.seek_values / self.domain_rows.max(1.0)).min(1.0)
        } else {
            self.index_seek.unwrap_or(1.0)
        };
        self.selectivity * sought
    }
}

/// One relationship of a part.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RelShape {
    /// Average relationships per node, expanding from its left node to its right one.
    pub degree_rightwards: f64,
    /// … and from its right node to its left one.
    pub degree_leftwards: f64,
    /// `*min..max` of a variable-length relationship (max already capped); `None`: one hop.
    pub hops: Option<(u64, u64)>,
    /// Relationships the pattern can match: those of its type, twice when undirected (each
    /// is matched in both orientations).
    pub domain_rows: f64,
    /// A seek on a property with an index on its type, when the relationship can start the
    /// part: the fraction of its domain the seek is guessed to read (see ESTIMATES).
    pub index_seek: Option<f64>,
    /// The fraction of rows its predicates other than the seek's keep.
    pub selectivity: f64,
}

impl RelShape {
    /// The fraction of rows an expand of this relationship keeps after its predicates.
    fn keeps(&self) -> f64 {
        self.selectivity * self.index_seek.unwrap_or(1.0)
    }
}

/// Where a part starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// At node `i`: bound already, or found by a seek, a label scan or an all-nodes scan.
    Node(usize),
    /// At relationship `i`: a relationship index seek binds it and both its ends.
    Rel(usize),
}

/// Where a part starts, and which side it expands first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Order {
    pub start: Start,
    pub rightwards_first: bool,
}

impl Order {
    /// The relationships of a part of `rels` relationships in expand order: (index, rightwards).
    /// A relationship start is not expanded: its right side starts after it.
    pub fn steps(self, rels: usize) -> Vec<(usize, bool)> {
        let (right_from, left_below) = match self.start {
            Start::Node(node) => (node, node),
            Start::Rel(rel) => (rel + 1, rel),
        };
        let right = (right_from..rels).map(|i| (i, true));
        let left = (0..left_below).rev().map(|i| (i, false));
        if self.rightwards_first {
            right.chain(left).collect()
        } else {
            left.chain(right).collect()
        }
    }
}

/// Estimated rows of a part's operators for one order, and its cost.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Estimate {
    /// Rows the start's scan or seek produces (1 for a bound start).
    pub start_rows: f64,
    /// Rows each relationship's expand produces, by relationship index.
    pub expand_rows: Vec<f64>,
    /// The start's rows plus the relationships every expand reads (see ESTIMATES).
    pub cost: f64,
    /// Rows out of the part: the last expand's (or the start's) rows after the predicates on
    /// the node it reaches.
    pub rows: f64,
}

/// The estimate of `order` (see ESTIMATES).
pub(super) fn estimate(nodes: &[NodeShape], rels: &[RelShape], order: Order) -> Estimate {
    debug_assert_eq!(
        nodes.len(),
        rels.len() + 1,
        "a part alternates nodes and rels"
    );
    let mut expand_rows = vec![0.0; rels.len()];
    let (start_rows, mut cost, mut rows, mut visited) = match order.start {
        Start::Node(node) => start_at_node(&nodes[node]),
        Start::Rel(rel) => {
            let (start_rows, rows) = start_at_rel(&rels[rel], &nodes[rel], &nodes[rel + 1]);
            expand_rows[rel] = start_rows;
            let ends = vec![nodes[rel].slot, nodes[rel + 1].slot];
            (start_rows, start_rows, rows, ends)
        }
    };
    for (i, rightwards) in order.steps(rels.len()) {
        let to = &nodes[if rightwards { i + 1 } else { i }];
        let into = to.bound || visited.contains(&to.slot);
        let read = rows * rels[i].reach(rightwards);
        cost += read;
        let produced = if into {
            read / to.domain_rows.max(1.0)
        } else {
            read
        };
        expand_rows[i] = produced;
        rows = produced * rels[i].keeps();
        rows *= if into { to.selectivity } else { to.keeps() };
        visited.push(to.slot);
    }
    Estimate {
        start_rows,
        expand_rows,
        cost,
        rows,
    }
}

/// A part starting at `start`: its scan's rows, the cost of the scan, the rows after the
/// start's predicates, and the slots bound.
fn start_at_node(start: &NodeShape) -> (f64, f64, f64, Vec<usize>) {
    let start_rows = if start.bound {
        1.0
    } else if start.key_seek {
        start.seek_values
    } else if let Some(fraction) = start.index_seek {
        start.domain_rows * fraction
    } else {
        start.domain_rows
    };
    // A bound start is in the input row already: no scan, no cost.
    let cost = if start.bound { 0.0 } else { start_rows };
    (
        start_rows,
        cost,
        start_rows * start.selectivity,
        vec![start.slot],
    )
}

/// A part starting with a relationship index seek on `rel` between `left` and `right` (both
/// unbound): the relationships the seek finds, and the rows after the predicates of the
/// relationship and its ends. With one variable at both ends only self-loops are kept.
fn start_at_rel(rel: &RelShape, left: &NodeShape, right: &NodeShape) -> (f64, f64) {
    let fraction = rel
        .index_seek
        .expect("a relationship start has an index seek");
    let start_rows = rel.domain_rows * fraction;
    let right_keeps = if right.slot == left.slot {
        1.0 / left.domain_rows.max(1.0)
    } else {
        right.keeps()
    };
    (
        start_rows,
        start_rows * rel.selectivity * left.keeps() * right_keeps,
    )
}

/// Whether relationship `rel` can start a part: it has an index seek, and neither end is
/// bound before the part (a bound end is a cheaper start, and the seek binds both).
fn can_start_at_rel(nodes: &[NodeShape], rels: &[RelShape], rel: usize) -> bool {
    rels[rel].index_seek.is_some() && !nodes[rel].bound && !nodes[rel + 1].bound
}

impl RelShape {
    /// Relationships (or paths) per node expanded in one direction.
    fn reach(&self, rightwards: bool) -> f64 {
        let degree = if rightwards {
            self.degree_rightwards
        } else {
            self.degree_leftwards
        };
        match self.hops {
            None => degree,
            Some((min, max)) => (min..=max).map(|h| degree.powf(h as f64)).sum(),
        }
    }
}

/// The cheapest order; `preferred` (the rule-based one) unless another is strictly cheaper.
/// Node starts are tried before relationship starts.
pub(super) fn cheapest(nodes: &[NodeShape], rels: &[RelShape], preferred: Order) -> Order {
    let mut best = (preferred, estimate(nodes, rels, preferred).cost);
    let node_starts = (0..nodes.len()).map(Start::Node);
    let rel_starts = (0..rels.len())
        .filter(|&rel| can_start_at_rel(nodes, rels, rel))
        .map(Start::Rel);
    for start in node_starts.chain(rel_starts) {
        for rightwards_first in [true, false] {
            let order = Order {
                start,
                rightwards_first,
            };
            let cost = estimate(nodes, rels, order).cost;
            if cost < best.1 {
                best = (order, cost);
            }
        }
    }
    best.0
}

/// Whether a part is cheaper as the build side of a hash join than nested under each of
/// `probe_rows` input rows (see HASH JOINS): `nested` is its estimate with the input's
/// variables bound (seeks on them included), `build` its estimate on its own.
pub(super) fn hash_join_pays(probe_rows: f64, nested: &Estimate, build: &Estimate) -> bool {
    let nested_work = probe_rows * (nested.cost + nested.rows);
    let hash_work = build.cost + build.rows + probe_rows;
    hash_work < nested_work
}

/// Rows out of a hash join of `probe_rows` input rows with `build_rows` build rows, guessed
/// as a key–foreign-key join: every row of the larger side finds one partner.
pub(super) fn hash_join_rows(probe_rows: f64, build_rows: f64) -> f64 {
    probe_rows.max(build_rows)
}

/// Average relationships per node in `direction`, over relationship types with counts `types`
/// (a relationship of any type is one pseudo-type: all edges over all vertices).
pub(super) fn degree(types: &[EdgeTypeStatistics], direction: Direction) -> f64 {
    let ratio = |edges: u64, nodes: u64| {
        if nodes == 0 {
            0.0
        } else {
            edges as f64 / nodes as f64
        }
    };
    let one_way = |outgoing: bool| -> f64 {
        types
            .iter()
            .map(|t| ratio(t.edges, if outgoing { t.sources } else { t.targets }))
            .sum()
    };
    match direction {
        Direction::Out => one_way(true),
        Direction::In => one_way(false),
        Direction::Both => one_way(true) + one_way(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(slot: usize, domain_rows: f64) -> NodeShape {
        NodeShape {
            slot,
            bound: false,
            domain_rows,
            key_seek: false,
            index_seek: None,
            seek_values: 1.0,
            selectivity: 1.0,
        }
    }

    fn rel(degree_rightwards: f64, degree_leftwards: f64) -> RelShape {
        RelShape {
            degree_rightwards,
            degree_leftwards,
            hops: None,
            domain_rows: 0.0,
            index_seek: None,
            selectivity: 1.0,
        }
    }

    const RULE: Order = Order {
        start: Start::Node(0),
        rightwards_first: true,
    };

    #[test]
    fn a_key_seek_at_the_far_end_is_the_start_and_the_expand_turns_round() {
        // (p:Person)-[:IS_LOCATED_IN]->(c:City {id: 7}): 1,000 people, 50 cities.
        let mut city = node(2, 50.0);
        city.key_seek = true;
        let nodes = [node(0, 1000.0), city];
        let rels = [rel(1.0, 20.0)];
        let rule = estimate(&nodes, &rels, RULE);
        assert_eq!(rule.start_rows, 1000.0);
        assert_eq!(rule.expand_rows, [1000.0]);
        let best = cheapest(&nodes, &rels, RULE);
        assert_eq!(best.start, Start::Node(1));
        assert_eq!(best.steps(1), [(0, false)]);
        let chosen = estimate(&nodes, &rels, best);
        assert_eq!((chosen.start_rows, chosen.cost), (1.0, 21.0));
    }

    #[test]
    fn the_smaller_label_is_scanned() {
        let nodes = [node(0, 5000.0), node(2, 10.0)];
        let rels = [rel(2.0, 1000.0)];
        assert_eq!(cheapest(&nodes, &rels, RULE).start, Start::Node(1));
        let nodes = [node(0, 10.0), node(2, 5000.0)];
        assert_eq!(cheapest(&nodes, &rels, RULE), RULE);
    }

    #[test]
    fn ties_keep_the_rule_based_order() {
        let nodes = [node(0, 100.0), node(2, 100.0), node(4, 100.0)];
        let rels = [rel(1.0, 1.0), rel(1.0, 1.0)];
        let preferred = Order {
            start: Start::Node(1),
            rightwards_first: true,
        };
        assert_eq!(cheapest(&nodes, &rels, preferred), preferred);
    }

    #[test]
    fn an_expand_into_a_bound_node_reads_every_relationship_and_keeps_few() {
        // (a)-->(b)-->(a) from a bound `a`: the second expand reads 16 relationships and
        // keeps those that reach `a`, one in a hundred.
        let mut bound = node(0, 100.0);
        bound.bound = true;
        let nodes = [bound, node(2, 100.0), node(0, 100.0)];
        let rels = [rel(4.0, 4.0), rel(4.0, 4.0)];
        let e = estimate(&nodes, &rels, RULE);
        assert_eq!(e.start_rows, 1.0);
        assert_eq!(e.expand_rows, [4.0, 16.0 / 100.0]);
        assert_eq!(e.cost, 4.0 + 16.0, "a bound start scans nothing");
    }

    #[test]
    fn a_bound_node_with_few_relationships_beats_a_seek_with_many() {
        // (post)-[:HAS_TAG]->(t:Tag {id: x}), post bound: reading a post's tags beats
        // seeking the tag and reading its posts to find the bound one — even when the average
        // tag has fewer posts than the average post has tags, since popular tags are where
        // averages mislead and the seek is work of its own.
        let mut post = node(0, 1000.0);
        post.bound = true;
        let mut tag = node(2, 50.0);
        tag.key_seek = true;
        let rels = [rel(2.0, 300.0)];
        assert_eq!(cheapest(&[post.clone(), tag.clone()], &rels, RULE), RULE);
        let rels = [rel(0.96, 0.9)];
        assert_eq!(cheapest(&[post, tag], &rels, RULE), RULE);
    }

    #[test]
    fn the_lower_degree_side_is_expanded_first() {
        // (a)-[:FEW]-(s {key})-[:MANY]-(b): from s, expand FEW first.
        let mut seek = node(2, 100.0);
        seek.key_seek = true;
        let nodes = [node(0, 100.0), seek, node(4, 100.0)];
        let rels = [rel(1.0, 2.0), rel(50.0, 1.0)];
        let best = cheapest(&nodes, &rels, RULE);
        assert_eq!(
            best,
            Order {
                start: Start::Node(1),
                rightwards_first: false
            }
        );
        assert_eq!(estimate(&nodes, &rels, best).cost, 1.0 + 2.0 + 100.0);
    }

    #[test]
    fn an_index_seek_reads_a_tenth_of_its_label_and_can_win_the_start() {
        // (p:Person)-[:KNOWS]->(f:Person {name: $n}), name indexed: 1,000 people, degree 10.
        let mut friend = node(2, 1000.0);
        friend.index_seek = Some(EQUALITY_SELECTIVITY);
        let nodes = [node(0, 1000.0), friend];
        let rels = [rel(10.0, 10.0)];
        let best = cheapest(&nodes, &rels, RULE);
        assert_eq!(best.start, Start::Node(1));
        let estimate = estimate(&nodes, &rels, best);
        assert_eq!(estimate.start_rows, 100.0);
        assert_eq!(estimate.cost, 100.0 + 1000.0);
    }

    #[test]
    fn a_hash_join_pays_from_a_few_input_rows_unless_the_nested_part_seeks() {
        // The build side alone: 50 cities scanned.
        let city = [node(0, 50.0)];
        let build = estimate(&city, &[], RULE);
        assert_eq!((build.cost, build.rows), (50.0, 50.0));
        assert!(hash_join_pays(1000.0, &build, &build));
        assert!(hash_join_pays(3.0, &build, &build));
        assert!(
            !hash_join_pays(1.0, &build, &build),
            "one input row never pays"
        );
        assert!(!hash_join_pays(0.0, &build, &build));
        // Nested, the equality on the city's primary key is a seek: one row per input row.
        let mut sought = node(0, 50.0);
        sought.key_seek = true;
        let nested = estimate(&[sought], &[], RULE);
        assert_eq!((nested.cost, nested.rows), (1.0, 1.0));
        assert!(!hash_join_pays(20.0, &nested, &build));
        assert!(hash_join_pays(200.0, &nested, &build));
        // An empty label: nothing to gain.
        let empty = estimate(&[node(0, 0.0)], &[], RULE);
        assert!(!hash_join_pays(1000.0, &empty, &empty));
        assert_eq!(hash_join_rows(1000.0, 50.0), 1000.0);
    }

    /// A relationship of 10,000 edges with an index seek reading a tenth of them.
    fn sought_rel(degree_rightwards: f64, degree_leftwards: f64) -> RelShape {
        RelShape {
            domain_rows: 10_000.0,
            index_seek: Some(EQUALITY_SELECTIVITY),
            ..rel(degree_rightwards, degree_leftwards)
        }
    }

    #[test]
    fn a_relationship_index_seek_starts_an_unlabelled_part() {
        // (a)-[r:T {p: 3}]->(b)-[:U]->(c): 1,000 nodes, 10,000 T edges, p indexed.
        let nodes = [node(0, 1000.0), node(2, 1000.0), node(4, 1000.0)];
        let rels = [sought_rel(10.0, 10.0), rel(2.0, 2.0)];
        let best = cheapest(&nodes, &rels, RULE);
        assert_eq!(best.start, Start::Rel(0));
        assert_eq!(best.steps(2), [(1, true)], "the seek binds both ends of r");
        let chosen = estimate(&nodes, &rels, best);
        assert_eq!(chosen.start_rows, 1000.0);
        assert_eq!(chosen.cost, 1000.0 + 2000.0);
        assert_eq!(chosen.rows, 2000.0);
        // From a: all nodes, every T edge, a tenth kept, then U.
        let rule = estimate(&nodes, &rels, RULE);
        assert_eq!(rule.cost, 1000.0 + 10_000.0 + 2000.0);
        assert_eq!(rule.rows, chosen.rows, "every order keeps the same rows");
    }

    #[test]
    fn a_relationship_seek_loses_to_a_key_seek_and_never_starts_at_a_bound_end() {
        let mut keyed = node(0, 1000.0);
        keyed.key_seek = true;
        let rels = [sought_rel(10.0, 10.0)];
        let nodes = [keyed, node(2, 1000.0)];
        assert_eq!(cheapest(&nodes, &rels, RULE), RULE);
        let mut bound = node(2, 1000.0);
        bound.bound = true;
        let nodes = [node(0, 1000.0), bound];
        assert!(!can_start_at_rel(&nodes, &rels, 0));
        assert_eq!(cheapest(&nodes, &rels, RULE).start, Start::Node(1));
        // (a)-[r:T {p: 3}]->(a): one variable at both ends keeps the self-loops only.
        let nodes = [node(0, 1000.0), node(0, 1000.0)];
        let (start_rows, rows) = start_at_rel(&rels[0], &nodes[0], &nodes[1]);
        assert_eq!((start_rows, rows), (1000.0, 1.0));
    }

    #[test]
    fn variable_length_reach_sums_the_hops_up_to_the_cap() {
        let r = RelShape {
            hops: Some((0, VAR_LENGTH_ESTIMATE_HOPS)),
            ..rel(2.0, 3.0)
        };
        assert_eq!(r.reach(true), 1.0 + 2.0 + 4.0 + 8.0);
        assert_eq!(r.reach(false), 1.0 + 3.0 + 9.0 + 27.0);
    }

    #[test]
    fn degrees_come_from_edge_and_vertex_counts() {
        let located_in = EdgeTypeStatistics {
            edges: 1000,
            sources: 1000,
            targets: 50,
        };
        assert_eq!(degree(&[located_in], Direction::Out), 1.0);
        assert_eq!(degree(&[located_in], Direction::In), 20.0);
        assert_eq!(degree(&[located_in], Direction::Both), 21.0);
        let unknown = EdgeTypeStatistics::default();
        assert_eq!(degree(&[unknown], Direction::Out), 0.0);
        assert_eq!(degree(&[located_in, located_in], Direction::Out), 2.0);
    }
}
