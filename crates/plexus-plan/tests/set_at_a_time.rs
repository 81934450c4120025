//! `plexus_plan::logical::set_at_a_time`: which `CALL { ... } IN TRANSACTIONS` bodies may run
//! once over many argument rows, planned and optimized from query text.

mod common;

use plexus_plan::logical::{LogicalPlan, set_at_a_time};

/// Whether the first `CALL { ... } IN TRANSACTIONS` of `query`, planned and optimized,
/// runs set at a time.
fn batched(query: &str) -> bool {
    let plan = common::optimized(query);
    fn find(plan: &LogicalPlan) -> Option<&LogicalPlan> {
        match plan {
            LogicalPlan::CallInTransactions { inner, .. } => Some(inner),
            _ => plan.children().into_iter().find_map(find),
        }
    }
    set_at_a_time(find(&plan.root).expect("a CALL IN TRANSACTIONS"))
}

fn in_transactions(body: &str) -> String {
    format!("UNWIND range(1, 10) AS i CALL {{ WITH i {body} }} IN TRANSACTIONS OF 4 ROWS")
}

#[test]
fn bodies_that_cannot_see_their_own_writes_run_set_at_a_time() {
    for body in [
        "CREATE (:V {id: i})",
        "CREATE (:V {id: i})-[:E]->(:V)",
        "MATCH (a:V {id: i}), (b:V {id: i + 1}) CREATE (a)-[:E]->(b)",
        "MATCH (a:V) WHERE a.id = i CREATE (:W {id: i})",
        "UNWIND [i, i] AS j CREATE (:V {id: j})",
        "MATCH (a:V)-[:E]->(b) CREATE (:W {at: b.id})",
    ] {
        assert!(batched(&in_transactions(body)), "{body}");
    }
}

#[test]
fn bodies_that_may_see_their_own_writes_or_are_scoped_per_row_run_per_row() {
    for body in [
        // Reads what it creates.
        "MATCH (a:V {id: i}) CREATE (:V {id: i + 1})",
        "MATCH (a) CREATE (:W {id: i})",
        "MATCH (a:V)-[:E]->(b) CREATE (a)-[:E]->(b)",
        "MATCH (a:V {id: i}) CREATE (:$(toString(i)) {id: i})",
        "MATCH (a:V {id: i}) WHERE EXISTS { (a)-[:E]->() } CREATE (:W)",
        // Scoped to one run.
        "MATCH (a:V) WITH count(a) AS c CREATE (:W {c: c})",
        "MATCH (a:V) WITH a ORDER BY a.id LIMIT 1 CREATE (:W {id: a.id})",
        "MATCH (a:V) WITH DISTINCT a.id AS id CREATE (:W {id: id})",
        // Other writes.
        "MERGE (:V {id: i})",
        "MATCH (a:V {id: i}) SET a.seen = true",
        "MATCH (a:V {id: i}) DETACH DELETE a",
        "FOREACH (x IN [i] | CREATE (:V {id: x}))",
    ] {
        assert!(!batched(&in_transactions(body)), "{body}");
    }
}

#[test]
fn the_bulk_load_statements_run_set_at_a_time() {
    assert!(batched(
        "LOAD CSV WITH HEADERS FROM 'file:///e.csv' AS r CALL { WITH r MATCH (a:V {id: \
         toInteger(r.src)}), (b:V {id: toInteger(r.dst)}) CREATE (a)-[:E]->(b) } IN \
         TRANSACTIONS OF 100000 ROWS"
    ));
}
