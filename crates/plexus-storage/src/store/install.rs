//! Installing a commit: rows and index entries first, then the adjacency — into topology
//! memtables for a commit (`install_into`, also WAL replay), into CSR runs for a bulk load
//! (`install_rows` and `bulk`).

use super::*;

/// `(vertex, neighbour, edge offset)`, the tombstone bit set for deletions.
type AdjacencyEntry = (u32, u32, u32);

/// Adjacency entries of one commit (or checkpoint section), per edge table, applied with one
/// latch per touched segment instead of one per entry.
#[derive(Default)]
pub(super) struct PendingAdjacency {
    /// Per edge table: [out entries, in entries].
    pub(super) by_table: HashMap<EdgeTableId, [Vec<AdjacencyEntry>; 2]>,
}

impl PendingAdjacency {
    fn push(&mut self, table: EdgeTableId, offset: u32, src: u32, dst: u32, tombstone: bool) {
        let eid = if tombstone {
            offset | TOMBSTONE_BIT
        } else {
            offset
        };
        let [out, inc] = self.by_table.entry(table).or_default();
        out.push((src, dst, eid));
        inc.push((dst, src, eid));
    }

    /// Installs the entries into each topology's active memtable — except, during WAL
    /// replay, entries of commits that a flush already put into runs.
    pub(super) fn apply(self, tables: &[Arc<EdgeTable>], ts: Timestamp, horizon: Timestamp) {
        for (table, [out, inc]) in self.by_table {
            let table = &tables[table as usize];
            for (topology, entries) in [(&table.out, out), (&table.inc, inc)] {
                if ts > topology.flushed_ts() {
                    topology.install(&entries, ts, horizon);
                }
            }
        }
    }
}

pub(super) fn install_into(
    tables: &Tables,
    record: &CommitRecord,
    horizon: Timestamp,
) -> Result<()> {
    let pending = install_rows(tables, record, horizon)?;
    pending.apply(&tables.edge, record.ts, horizon);
    Ok(())
}

/// The row half of [`install_into`]: installs every op's rows and index entries and returns
/// the ops' adjacency entries, for the caller to put into memtables (a commit) or runs (a
/// bulk load, which also reads its staged edge batches' adjacency in place). A record naming a table that does not exist is rejected before anything is
/// installed.
pub(super) fn install_rows(
    tables: &Tables,
    record: &CommitRecord,
    horizon: Timestamp,
) -> Result<PendingAdjacency> {
    let ts = record.ts;
    let vertex = |id: VertexTableId| {
        tables.vertex.get(id as usize).ok_or_else(|| {
            Error::corruption("commit record", 0, format!("unknown vertex table {id}"))
        })
    };
    let edge = |id: EdgeTableId| {
        tables.edge.get(id as usize).ok_or_else(|| {
            Error::corruption("commit record", 0, format!("unknown edge table {id}"))
        })
    };
    // Check every table first, so a bad record is rejected before anything is installed.
    for batch in &record.vertex_batches {
        vertex(batch.table)?;
        debug_assert!(
            batch
                .props
                .iter()
                .all(|(_, c)| c.len() == batch.count as usize)
        );
        debug_assert!(
            batch.row_labels.is_empty() || batch.row_labels.len() == batch.count as usize
        );
    }
    for batch in &record.edge_batches {
        edge(batch.table)?;
        debug_assert_eq!(batch.src.len(), batch.dst.len());
        debug_assert!(batch.props.iter().all(|(_, c)| c.len() == batch.len()));
    }
    for op in &record.ops {
        match op {
            WriteOp::CreateVertex { id, .. }
            | WriteOp::DeleteVertex { id }
            | WriteOp::SetVertexProp { id, .. }
            | WriteOp::SetLabels { id, .. } => vertex(id.table).map(|_| ())?,
            WriteOp::CreateEdge { id, .. }
            | WriteOp::DeleteEdge { id, .. }
            | WriteOp::SetEdgeProp { id, .. } => edge(id.table).map(|_| ())?,
            WriteOp::SetOrigin { .. } => {}
        }
    }
    let mut pending = PendingAdjacency::default();
    for op in &record.ops {
        match op {
            WriteOp::CreateVertex { id, labels, props } => {
                let t = vertex(id.table)?;
                t.rows.ensure_reserved(id.offset + 1);
                t.rows
                    .install_create(id.offset, ts, horizon, labels, props)?;
                index_new_vertex(t, id.offset, labels, props);
            }
            WriteOp::DeleteVertex { id } => vertex(id.table)?
                .rows
                .install_delete(id.offset, ts, horizon)?,
            WriteOp::SetVertexProp { id, key, value } => {
                let t = vertex(id.table)?;
                if let Some(v) = value {
                    t.index_pk(id.offset, *key, v);
                }
                t.rows
                    .install_prop(id.offset, ts, horizon, *key, value.clone())?;
                // After the install: see MAINTENANCE AND GROWTH in `index`.
                if let Some(v) = value {
                    t.indexes.insert(*key, v, id.offset);
                }
            }
            WriteOp::SetLabels { id, labels } => {
                let t = vertex(id.table)?;
                t.note_labels(labels);
                t.rows.install_labels(id.offset, ts, horizon, labels)?;
            }
            WriteOp::CreateEdge {
                id,
                src,
                dst,
                props,
            } => {
                let t = edge(id.table)?;
                t.rows.ensure_reserved(id.offset + 1);
                t.install_create(id.offset, (ts, horizon), (src.offset, dst.offset), props)?;
                t.indexes.insert_all(props, id.offset);
                pending.push(id.table, id.offset, src.offset, dst.offset, false);
            }
            WriteOp::DeleteEdge { id, src, dst } => {
                edge(id.table)?
                    .rows
                    .install_delete(id.offset, ts, horizon)?;
                pending.push(id.table, id.offset, src.offset, dst.offset, true);
            }
            WriteOp::SetEdgeProp { id, key, value } => {
                let t = edge(id.table)?;
                // Before the value: see PROPERTY COLUMNS in `lsm`.
                t.prop_updated_ts.fetch_max(ts, Ordering::AcqRel);
                t.rows
                    .install_prop(id.offset, ts, horizon, *key, value.clone())?;
                // After the install: see MAINTENANCE AND GROWTH in `index`.
                if let Some(v) = value {
                    t.indexes.insert(*key, v, id.offset);
                }
            }
            WriteOp::SetOrigin { name, position } => tables.origins.set(name, ts, *position),
        }
    }
    let mut props = Vec::new();
    for batch in &record.vertex_batches {
        let t = vertex(batch.table)?;
        let end = batch.first.checked_add(batch.count).ok_or_else(|| {
            Error::corruption("commit record", 0, "vertex batch past the last row")
        })?;
        t.rows.ensure_reserved(end);
        for i in 0..batch.count as usize {
            let row = batch.first + i as u32;
            batch.row_props(i, &mut props);
            let labels = batch.labels_of(i);
            t.rows.install_create(row, ts, horizon, labels, &props)?;
            t.note_labels(labels);
            t.indexes.insert_all(&props, row);
        }
        let pk = (batch.props.iter()).find(|(key, _)| Some(*key) == t.pk_key());
        if let Some((_, values)) = pk {
            t.index_pk_rows(batch.first, values);
        }
    }
    for batch in &record.edge_batches {
        let t = edge(batch.table)?;
        let end = batch.first as usize + batch.len();
        t.rows.ensure_reserved(u32::try_from(end).map_err(|_| {
            Error::corruption("commit record", 0, format!("edge batch ends at row {end}"))
        })?);
        for (i, (&src, &dst)) in batch.src.iter().zip(&batch.dst).enumerate() {
            let row = batch.first + i as u32;
            batch.row_props(i, &mut props);
            t.install_create(row, (ts, horizon), (src, dst), &props)?;
            t.indexes.insert_all(&props, row);
        }
    }
    Ok(pending)
}

pub(super) fn index_new_vertex(
    table: &VertexTable,
    row: u32,
    labels: &[LabelId],
    props: &[(PropKeyId, Value)],
) {
    table.note_labels(labels);
    for (key, value) in props {
        table.index_pk(row, *key, value);
    }
    table.indexes.insert_all(props, row);
}
