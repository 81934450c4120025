//! Query results: columns, rows, and the graph elements the rows refer to.
//!
//! Rows hold nodes and relationships by id. Before a result leaves the engine (and before an
//! auto-commit transaction commits) the labels, types, endpoints and properties of every node
//! and relationship mentioned in the rows are copied into [`QueryResult::nodes`] and
//! [`QueryResult::relationships`], so a result is self-contained: it can be printed in the
//! TCK notation (`(:Person {name: 'Ada'})`, `[:KNOWS {since: 2020}]`, `<(a)-[r]->(b)>`)
//! after the transaction is gone.

use crate::context::{ExecContext, UpdateStats};
use plexus_types::{EdgeId, VertexId};
use plexus_value::format;
use plexus_value::{MapValue, Value};
use std::collections::HashMap;
use std::fmt::Write;

#[derive(Debug, Clone, Default)]
pub struct NodeData {
    pub labels: Vec<String>,
    pub properties: MapValue,
}

#[derive(Debug, Clone)]
pub struct RelData {
    pub rel_type: String,
    pub src: VertexId,
    pub dst: VertexId,
    pub properties: MapValue,
}

#[derive(Debug, Clone, Default)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub nodes: HashMap<VertexId, NodeData>,
    pub relationships: HashMap<EdgeId, RelData>,
    pub stats: UpdateStats,
    /// The plan tree, for EXPLAIN (no rows) and PROFILE (rows and per-operator counts).
    pub plan: Option<String>,
}

impl QueryResult {
    /// Adds the rows of `chunk` (a later part of the same result) and the graph elements
    /// they mention; fails past [`crate::context::MAX_MATERIALIZED_ROWS`] rows.
    pub fn append(&mut self, chunk: QueryResult) -> plexus_value::error::Result<()> {
        crate::context::check_materialized(self.rows.len() + chunk.rows.len())?;
        self.rows.extend(chunk.rows);
        self.nodes.extend(chunk.nodes);
        self.relationships.extend(chunk.relationships);
        Ok(())
    }

    /// Copies the data of every node and relationship the rows mention.
    pub(crate) fn materialize(&mut self, ctx: &mut ExecContext) {
        let mut nodes = Vec::new();
        let mut rels = Vec::new();
        for row in &self.rows {
            for value in row {
                collect(value, &mut nodes, &mut rels);
            }
        }
        for e in rels {
            if self.relationships.contains_key(&e) {
                continue;
            }
            let Ok((src, dst)) = ctx.tx.edge_endpoints(e) else {
                continue;
            };
            nodes.push(src);
            nodes.push(dst);
            let rel_type = ctx.tx.edge_type(e).unwrap_or_default();
            let properties = props(ctx.tx.edge_properties(e).unwrap_or_default());
            self.relationships.insert(
                e,
                RelData {
                    rel_type,
                    src,
                    dst,
                    properties,
                },
            );
        }
        for v in nodes {
            if self.nodes.contains_key(&v) {
                continue;
            }
            let labels = ctx.tx.vertex_labels(v).unwrap_or_default();
            let properties = props(ctx.tx.vertex_properties(v).unwrap_or_default());
            self.nodes.insert(v, NodeData { labels, properties });
        }
    }

    /// A value in the TCK notation.
    pub fn render(&self, value: &Value) -> String {
        let mut out = String::new();
        self.render_into(value, &mut out);
        out
    }

    /// A row in the TCK notation, cells joined by ` | ` (the golden-test and TCK row format).
    pub fn render_row(&self, row: &[Value]) -> String {
        let cells: Vec<String> = row.iter().map(|v| self.render(v)).collect();
        cells.join(" | ")
    }

    /// Every row as [`render_row`](Self::render_row) gives it, in order.
    pub fn rendered_rows(&self) -> Vec<String> {
        self.rows.iter().map(|row| self.render_row(row)).collect()
    }

    fn render_node(&self, v: VertexId, out: &mut String) {
        out.push('(');
        if let Some(data) = self.nodes.get(&v) {
            for label in &data.labels {
                let _ = write!(out, ":{label}");
            }
            if !data.properties.is_empty() {
                if !data.labels.is_empty() {
                    out.push(' ');
                }
                self.render_map(&data.properties, out);
            }
        }
        out.push(')');
    }

    fn render_rel(&self, e: EdgeId, out: &mut String) {
        out.push('[');
        if let Some(data) = self.relationships.get(&e) {
            let _ = write!(out, ":{}", data.rel_type);
            if !data.properties.is_empty() {
                out.push(' ');
                self.render_map(&data.properties, out);
            }
        }
        out.push(']');
    }

    fn render_map(&self, map: &MapValue, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{k}: ");
            self.render_into(v, out);
        }
        out.push('}');
    }

    fn render_into(&self, value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                let _ = write!(out, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
            }
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.render_into(item, out);
                }
                out.push(']');
            }
            Value::Map(map) => self.render_map(map, out),
            Value::Node(v) => self.render_node(*v, out),
            Value::Rel(e) => self.render_rel(*e, out),
            Value::Path(p) => {
                out.push('<');
                if let Some(first) = p.nodes.first() {
                    self.render_node(*first, out);
                }
                for (i, e) in p.rels.iter().enumerate() {
                    let forward = self
                        .relationships
                        .get(e)
                        .is_none_or(|d| d.src == p.nodes[i]);
                    out.push_str(if forward { "-" } else { "<-" });
                    self.render_rel(*e, out);
                    out.push_str(if forward { "->" } else { "-" });
                    if let Some(next) = p.nodes.get(i + 1) {
                        self.render_node(*next, out);
                    }
                }
                out.push('>');
            }
            Value::Temporal(_) | Value::Duration(_) => {
                let _ = write!(out, "'{}'", format::plain_text(value));
            }
            other => out.push_str(&format::plain_text(other)),
        }
    }
}

fn props(pairs: Vec<(String, plexus_types::Value)>) -> MapValue {
    pairs
        .into_iter()
        .map(|(k, v)| (std::sync::Arc::from(k.as_str()), Value::from_storage(v)))
        .collect()
}

fn collect(value: &Value, nodes: &mut Vec<VertexId>, rels: &mut Vec<EdgeId>) {
    match value {
        Value::Node(v) => nodes.push(*v),
        Value::Rel(e) => rels.push(*e),
        Value::Path(p) => {
            nodes.extend(&p.nodes);
            rels.extend(&p.rels);
        }
        Value::List(items) => items.iter().for_each(|i| collect(i, nodes, rels)),
        Value::Map(map) => map.values().for_each(|i| collect(i, nodes, rels)),
        _ => {}
    }
}
