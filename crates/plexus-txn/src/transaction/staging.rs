//! Edges staged as columns for a bulk load.
//!
//! WHY
//! ===
//! A relationship made with [`Transaction::create_edge`] is a write-set entry (a B-tree
//! node slot with its property map), then a `WriteOp` in the commit record, then conflict
//! keys and a summary entry — about 150 bytes per edge before the storage sees it, and most
//! of a bulk load's memory and much of its time (allocation and page zeroing) at millions of
//! edges. [`Transaction::stage_edges`] instead checks each row and appends the accepted ones
//! to an [`EdgeBatch`] per edge table: two vertex offsets per edge plus one value per property
//! column, handed to the storage's bulk install as they are.
//!
//! INVARIANTS
//! ==========
//! - A staged row passed the checks `create_edge` makes (writable transaction, edge type not
//!   protected, both endpoints existing for this transaction, values fitting declared
//!   columns); rows that fail are returned, not staged.
//! - A batch's rows are consecutive edge-table rows reserved at once, so the batch is
//!   `first .. first + len`.
//! - Staged edges commit only through [`Transaction::commit_bulk`] (a plain commit refuses
//!   them: the WAL never carries them) and are invisible to the transaction's own reads —
//!   the bulk loader never reads the edges it adds.

use super::Transaction;
use crate::schema::TokenKind;
use plexus_storage::{EdgeBatch, EdgeTable};
use plexus_types::{Error, PropKeyId, Result, Value, VertexId, VertexTableId};
use std::sync::Arc;

/// The accepted rows of one edge table: (source table, destination table), the table, rows.
type Group = ((VertexTableId, VertexTableId), Arc<EdgeTable>, Vec<u32>);

/// Errors about one staged row (skipped and returned); anything else fails the call.
fn is_row_error(e: &Error) -> bool {
    matches!(
        e,
        Error::Constraint(_) | Error::TypeMismatch(_) | Error::NotFound(_)
    )
}

impl Transaction {
    /// Stages relationships `src[i] -[edge_type]-> dst[i]` with the properties `columns`
    /// (name, one value per row; `Null` stores nothing) for [`commit_bulk`](Self::commit_bulk)
    /// (see the module documentation). Returns the rows not staged, with their index and
    /// error (an endpoint that does not exist, a value of the wrong type).
    pub fn stage_edges(
        &mut self,
        edge_type: &str,
        src: &[VertexId],
        dst: &[VertexId],
        columns: &[(String, Vec<Value>)],
    ) -> Result<Vec<(usize, Error)>> {
        self.check_writable()?;
        if src.len() != dst.len() || columns.iter().any(|(_, c)| c.len() != src.len()) {
            return Err(Error::InvalidArgument(format!(
                "staging edges: {} sources, {} destinations and columns of {:?} values",
                src.len(),
                dst.len(),
                columns.iter().map(|(_, c)| c.len()).collect::<Vec<_>>()
            )));
        }
        let protections = self.manager.protections();
        if protections.active() {
            protections.check_edge_type(edge_type, self.follower.as_deref())?;
        }
        let keys: Vec<PropKeyId> = (columns.iter())
            .map(|(name, _)| self.ensure_token(name, TokenKind::PropKey))
            .collect::<Result<_>>()?;
        let mut rejected = Vec::new();
        // accepted rows per edge table (one per pair of endpoint tables: a handful)
        let mut groups: Vec<Group> = Vec::new();
        for (row, (&s, &d)) in src.iter().zip(dst).enumerate() {
            match self.check_row(edge_type, s, d, &keys, columns, row, &mut groups) {
                Ok(()) => {}
                Err(e) if is_row_error(&e) => rejected.push((row, e)),
                Err(e) => return Err(e),
            }
        }
        for ((src_table, dst_table), table, rows) in groups {
            let count = u32::try_from(rows.len())
                .map_err(|_| Error::LimitExceeded("staging more than 2^32 edges".into()))?;
            let first = table.reserve_rows(count)?;
            let pick = |ids: &[VertexId]| rows.iter().map(|&r| ids[r as usize].offset).collect();
            let props = (keys.iter().zip(columns))
                .map(|(&key, (_, values))| {
                    let column = rows.iter().map(|&r| values[r as usize].clone()).collect();
                    (key, column)
                })
                .collect();
            self.writes.edge_batches.push(EdgeBatch {
                table: table.id(),
                first,
                src_table,
                dst_table,
                src: pick(src),
                dst: pick(dst),
                props,
            });
        }
        Ok(rejected)
    }

    /// Fails unless endpoint `v` exists for this transaction. Endpoints this load created,
    /// or found existing before, need no more than a bit test (a load names each node many
    /// times). The set stays true: a vertex the transaction deleted is never found existing,
    /// and once edges are staged `delete_vertex` refuses (staged edges are invisible to it).
    fn check_endpoint(&mut self, v: VertexId) -> Result<()> {
        if self.writes.is_new_vertex(v) || self.staged_endpoints.contains(v) {
            return Ok(());
        }
        self.check_vertex_cached(v)?;
        self.staged_endpoints.insert(v);
        Ok(())
    }

    /// Checks row `row` (endpoints `s`, `d`) and adds it to its edge table's group.
    #[allow(clippy::too_many_arguments)]
    fn check_row(
        &mut self,
        edge_type: &str,
        s: VertexId,
        d: VertexId,
        keys: &[PropKeyId],
        columns: &[(String, Vec<Value>)],
        row: usize,
        groups: &mut Vec<Group>,
    ) -> Result<()> {
        for v in [s, d] {
            self.check_endpoint(v)?;
        }
        let ends = (s.table, d.table);
        let at = match groups.iter().position(|(e, _, _)| *e == ends) {
            Some(at) => at,
            None => {
                let table = self.edge_table_for(s.table, edge_type, d.table)?;
                groups.push((ends, table, Vec::new()));
                groups.len() - 1
            }
        };
        let table = groups[at].1.rows();
        for (&key, (name, values)) in keys.iter().zip(columns) {
            table.check_type(key, &values[row], name)?;
        }
        groups[at].2.push(row as u32);
        Ok(())
    }
}
