//! Nodes and edges staged as columns for a bulk load.
//!
//! WHY
//! ===
//! A relationship made with [`Transaction::create_edge`] is a write-set entry (a B-tree
//! node slot with its property map), then a `WriteOp` in the commit record, then conflict
//! keys and a summary entry — about 150 bytes per edge before the storage sees it, and most
//! of a bulk load's memory and much of its time (allocation and page zeroing) at millions of
//! edges. A node made with [`Transaction::create_vertex`] is the same: a map entry, a
//! property vector and a `(table, key) → id` claim. [`Transaction::stage_vertices`] and
//! [`Transaction::stage_edges`] instead check each row and append the accepted ones to a
//! [`VertexBatch`] per vertex table (one value per property column; the primary keys in the
//! transaction's [`StagedKeys`](crate::staged_keys::StagedKeys), 12 bytes a slot for an
//! integer key) and an [`EdgeBatch`] per edge table (two vertex offsets per edge plus one
//! value per property column), handed to the storage's bulk install as they are.
//!
//! INVARIANTS
//! ==========
//! - A staged row passed the checks `create_vertex` / `create_edge` make (writable
//!   transaction, label or edge type not protected, values fitting declared columns, a
//!   primary key present and held by no other vertex of this view, both endpoints existing
//!   for this transaction); rows that fail are returned, not staged.
//! - A batch's rows are consecutive table rows reserved at once, so the batch is
//!   `first .. first + len`. (Rows reserved for rejected nodes stay unused, as an aborted
//!   transaction's do.)
//! - Staged nodes and edges commit only through [`Transaction::commit_bulk`] (a plain commit
//!   refuses them: the WAL never carries them) and are invisible to the transaction's own
//!   reads but for two: a staged node's primary key is found by `lookup` (and held against
//!   duplicates), and it is an endpoint `stage_edges` accepts. The bulk loader reads nothing
//!   else of what it adds.
//! - Once anything is staged, `delete_vertex` refuses: a staged node's key stays claimed and
//!   staged edges cannot be detached.

use super::Transaction;
use crate::schema::TokenKind;
use plexus_storage::{EdgeBatch, EdgeTable, VertexBatch};
use plexus_types::{Error, LabelId, PropKeyId, Result, Value, VertexId, VertexTableId};
use std::sync::Arc;

/// What [`Transaction::stage_vertices`] did with each row.
#[derive(Debug, Default)]
pub struct StagedVertices {
    /// Per row: the new vertex, or `None` for a rejected row.
    pub ids: Vec<Option<VertexId>>,
    /// Rows not staged: (row index, why).
    pub rejected: Vec<(usize, Error)>,
}

/// The rows of one vertex table: the table, each row with its extra labels (`None`: the
/// batch's shared ones).
struct NodeGroup {
    table: VertexTableId,
    labels: Vec<LabelId>,
    rows: Vec<(usize, Option<Vec<LabelId>>)>,
}

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
    /// Stages `rows` vertices carrying `labels` (the first label that names a vertex table
    /// decides the table, as for [`create_vertex`](Self::create_vertex)), plus, when given,
    /// `row_labels[i]` on row `i`, with the properties `columns` (name, one value per row;
    /// `Null` stores nothing) for [`commit_bulk`](Self::commit_bulk) (see the module
    /// documentation). Rows that fail a check are returned with their index and error (a
    /// value of the wrong type, a missing or duplicate primary key, a protected label).
    pub fn stage_vertices(
        &mut self,
        labels: &[&str],
        row_labels: Option<&[Vec<String>]>,
        columns: &[(String, Vec<Value>)],
        rows: usize,
    ) -> Result<StagedVertices> {
        self.check_writable()?;
        if columns.iter().any(|(_, c)| c.len() != rows)
            || row_labels.is_some_and(|extra| extra.len() != rows)
        {
            return Err(Error::InvalidArgument(format!(
                "staging {rows} vertices: columns of {:?} values, {:?} label sets",
                columns.iter().map(|(_, c)| c.len()).collect::<Vec<_>>(),
                row_labels.map(<[_]>::len)
            )));
        }
        let mut keys: Vec<PropKeyId> = Vec::with_capacity(columns.len());
        for (name, _) in columns {
            let key = self.ensure_token(name, TokenKind::PropKey)?;
            if keys.contains(&key) {
                return Err(Error::InvalidArgument(format!(
                    "staging vertices: column '{name}' given twice"
                )));
            }
            keys.push(key);
        }
        let mut staged = StagedVertices {
            ids: vec![None; rows],
            rejected: Vec::new(),
        };
        for group in self.group_by_table(labels, row_labels, rows, &mut staged.rejected)? {
            self.stage_group(group, &keys, columns, &mut staged)?;
        }
        staged.rejected.sort_unstable_by_key(|(row, _)| *row);
        Ok(staged)
    }

    /// The rows of each vertex table the labels choose (one group unless rows carry labels
    /// of their own); rows whose labels are refused go to `rejected`.
    fn group_by_table(
        &mut self,
        labels: &[&str],
        row_labels: Option<&[Vec<String>]>,
        rows: usize,
        rejected: &mut Vec<(usize, Error)>,
    ) -> Result<Vec<NodeGroup>> {
        let Some(row_labels) = row_labels else {
            self.check_unprotected_labels(labels)?;
            let (table, labels) = self.table_for_new_vertex(labels)?;
            let rows = (0..rows).map(|row| (row, None)).collect();
            return Ok(vec![NodeGroup {
                table,
                labels,
                rows,
            }]);
        };
        let mut groups: Vec<NodeGroup> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for (row, extra) in row_labels.iter().enumerate() {
            names.clear();
            names.extend_from_slice(labels);
            names.extend(extra.iter().map(String::as_str));
            let chosen = (self.check_unprotected_labels(&names))
                .and_then(|()| self.table_for_new_vertex(&names));
            let (table, row_labels) = match chosen {
                Ok(chosen) => chosen,
                Err(e) if is_row_error(&e) => {
                    rejected.push((row, e));
                    continue;
                }
                Err(e) => return Err(e),
            };
            match groups.iter_mut().find(|g| g.table == table) {
                Some(group) => group.rows.push((row, Some(row_labels))),
                None => groups.push(NodeGroup {
                    table,
                    labels: Vec::new(),
                    rows: vec![(row, Some(row_labels))],
                }),
            }
        }
        Ok(groups)
    }

    /// Checks a group's rows and stages the accepted ones as one batch.
    fn stage_group(
        &mut self,
        group: NodeGroup,
        keys: &[PropKeyId],
        columns: &[(String, Vec<Value>)],
        staged: &mut StagedVertices,
    ) -> Result<()> {
        let table = self.storage().vertex_table(group.table)?;
        let catalog = self.catalog();
        let def = catalog.vertex_table(group.table)?;
        let pk = def.primary_key.map(|at| def.properties[at].key);
        let pk_column = pk.and_then(|pk| keys.iter().position(|&k| k == pk));
        let reserved = u32::try_from(group.rows.len())
            .map_err(|_| Error::LimitExceeded("staging more than 2^32 vertices".into()))?;
        let first = table.reserve_rows(reserved)?;
        if let Some(at) = pk_column
            && let Some(&(row, _)) = group.rows.first()
        {
            let sample = &columns[at].1[row];
            (self.writes.staged_keys).reserve(group.table, sample, group.rows.len());
        }
        // No committed row holds a key (none did when the snapshot was taken, and commits
        // after it are invisible): only this transaction's own claims can collide.
        let committed_keys = !table.pk_index_is_empty();
        let declared: Vec<_> = keys
            .iter()
            .map(|&k| table.rows().declared_type(k))
            .collect();
        let mut accepted: Vec<u32> = Vec::with_capacity(group.rows.len());
        let mut row_labels = Vec::new();
        for (row, labels) in group.rows {
            let id = VertexId::new(group.table, first + accepted.len() as u32);
            let checked = (keys.iter().zip(columns).zip(&declared))
                .filter(|((_, (_, values)), declared)| {
                    declared.is_some_and(|t| !t.accepts(&values[row]))
                })
                .try_for_each(|((&key, (name, values)), _)| {
                    table.rows().check_type(key, &values[row], name)
                })
                .and_then(|()| match pk_column {
                    Some(at) => {
                        self.claim_staged_key(&table, id, &columns[at].1[row], committed_keys)
                    }
                    None if pk.is_some() => Err(self.missing_key_error(group.table, pk)),
                    None => Ok(()),
                });
            match checked {
                Ok(()) => {}
                Err(e) if is_row_error(&e) => {
                    staged.rejected.push((row, e));
                    continue;
                }
                Err(e) => return Err(e),
            }
            self.staged_endpoints.insert(id);
            staged.ids[row] = Some(id);
            accepted.push(row as u32);
            row_labels.extend(labels);
        }
        if accepted.is_empty() {
            return Ok(());
        }
        let props = (keys.iter().zip(columns))
            .map(|(&key, (_, values))| {
                let column = match accepted.len() == values.len() {
                    true => values.clone(),
                    false => accepted
                        .iter()
                        .map(|&r| values[r as usize].clone())
                        .collect(),
                };
                (key, column)
            })
            .collect();
        self.writes.vertex_batches.push(VertexBatch {
            table: group.table,
            first,
            count: accepted.len() as u32,
            labels: group.labels,
            row_labels,
            props,
        });
        Ok(())
    }

    /// Claims primary key `value` for staged vertex `id` unless a vertex of this view holds
    /// it (`committed_keys`: whether committed rows may, else only this transaction's).
    fn claim_staged_key(
        &mut self,
        table: &plexus_storage::VertexTable,
        id: VertexId,
        value: &Value,
        committed_keys: bool,
    ) -> Result<()> {
        if matches!(value, Value::Null) {
            return Err(self.missing_key_error(id.table, table.pk_key()));
        }
        match committed_keys {
            true => self.check_pk_free(table, id.table, value, None)?,
            false => {
                if let Some(holder) = self.claimed_pk(id.table, value) {
                    return Err(self.duplicate_pk_error(id.table, value, holder));
                }
            }
        }
        self.writes.staged_keys.insert(id, value);
        Ok(())
    }

    fn missing_key_error(&self, table: VertexTableId, pk: Option<PropKeyId>) -> Error {
        let catalog = self.catalog();
        Error::Constraint(format!(
            "vertex table '{}' requires its primary key '{}'",
            catalog.table_name(table),
            pk.map_or("?", |k| catalog.prop_name(k))
        ))
    }

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
