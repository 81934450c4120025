//! `optimizer::var_length`, UNREAD LISTS: which variable-length expands leave their
//! relationship list unbuilt, planned and optimized from query text.

mod common;

use plexus_plan::logical::LogicalPlan;

/// `rels_unread` of every enumerating variable-length expand of `query`, planned and
/// optimized, in plan order (distinct-ends and shortest-path expands left out).
fn unread(query: &str) -> Vec<bool> {
    let plan = common::optimized(query);
    fn collect(plan: &LogicalPlan, out: &mut Vec<bool>) {
        if let LogicalPlan::VarExpand { length, .. } = plan
            && !length.ends_only
            && length.shortest.is_none()
        {
            out.push(length.rels_unread);
        }
        for child in plan.children() {
            collect(child, out);
        }
    }
    let mut out = Vec::new();
    collect(&plan.root, &mut out);
    out
}

#[test]
fn a_list_nothing_reads_is_not_built() {
    for query in [
        "MATCH (a)-[*1..3]->(b) RETURN b",
        "MATCH (a)-[r*1..3]->(b) RETURN a, b",
        "MATCH (t:Tag)-[:T*0..]->(c) WITH collect(t.id) AS ids RETURN ids",
        "MATCH (a)-[r*1..2]->(b) WHERE b.x > 1 RETURN count(*)",
        "MATCH (a)-[r*1..2]->(b) CREATE (a)-[:S]->(b)",
    ] {
        assert_eq!(unread(query), [true], "{query}");
    }
}

#[test]
fn a_list_something_reads_is_built() {
    for query in [
        "MATCH (a)-[r*1..3]->(b) RETURN r",
        "MATCH (a)-[r*1..3]->(b) RETURN size(r)",
        "MATCH p = (a)-[*1..3]->(b) RETURN p",
        "MATCH p = (a)-[*1..3]->(b) RETURN length(p)",
        "MATCH (a)-[r*1..3]->(b) WHERE all(x IN r WHERE x.w > 0) RETURN b",
        "MATCH (a)-[r*1..3]->(b) WITH r, b RETURN DISTINCT r",
        "MATCH (a)-[r*1..3]->(b) RETURN b ORDER BY size(r)",
        "MATCH (a)-[r*1..3]->(b) RETURN b, EXISTS { MATCH (b) WHERE size(r) > 1 } AS e",
        "MATCH (a)-[r*1..3]->(b) CALL { WITH r RETURN size(r) AS n } RETURN n",
        "MATCH (a)-[r*1..3]->(b) UNWIND r AS x RETURN x",
        // Relationship uniqueness against a later relationship of the same MATCH.
        "MATCH (a)-[r*1..3]->(b)-[s]->(c) RETURN c",
    ] {
        assert_eq!(unread(query), [false], "{query}");
    }
}
