//! Finding vertices in a transaction: label and full scans, primary-key lookups, and key and
//! index seeks — the committed state at the start timestamp overlaid with the transaction's
//! own writes, and recorded in the read set under SERIALIZABLE.

use super::*;

impl Transaction {
    /// Every vertex carrying `label` in this view, in id order.
    pub fn scan_label(&mut self, label: &str) -> Result<Vec<VertexId>> {
        if let Some(graph) = &self.external {
            return external::reads::scan_label(&**graph, label);
        }
        let Some(id) = self.label_scan_id(label)? else {
            return Ok(Vec::new());
        };
        if self.writes.no_vertex_changes() {
            // Nothing of this transaction's own to merge.
            return Ok(self.stored_label_runs(id)?.ids());
        }
        let catalog = self.catalog();
        let table_label =
            |v: &VertexId| catalog.vertex_tables.get(v.table as usize).map(|t| t.label);
        // Whether a vertex whose extra labels are `labels` carries `id`.
        let carries = |v: &VertexId, labels: &[LabelId]| {
            labels.contains(&id)
                || (table_label(v) == Some(id) && !labels.contains(&HIDDEN_TABLE_LABEL))
        };
        let mut found = Vec::new();
        self.storage()
            .scan_label(id, self.start_ts, &mut |v| found.push(v))?;
        found.retain(|v| {
            !self.writes.deleted_vertices.contains_key(v)
                && self
                    .writes
                    .vertex_labels
                    .get(v)
                    .is_none_or(|(_, new)| carries(v, new))
        });
        found.extend(
            self.writes
                .vertex_labels
                .iter()
                .filter(|(v, (old, new))| carries(v, new) && !carries(v, old))
                .map(|(v, _)| *v),
        );
        found.extend(
            self.writes
                .new_vertices
                .iter()
                .filter(|(v, nv)| carries(v, &nv.labels))
                .map(|(v, _)| *v),
        );
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// [`scan_label`](Self::scan_label) as runs of consecutive vertices
    /// ([`VertexRuns`]): the same vertices in the same order, recorded as the same read,
    /// without a `VertexId` per vertex where storage lists whole runs (the label is a table's
    /// own and this transaction changed no vertex) — a parallel scan's morsels read their
    /// vertices from it.
    pub fn scan_label_runs(&mut self, label: &str) -> Result<VertexRuns> {
        if self.external.is_none() && self.writes.no_vertex_changes() {
            let Some(id) = self.label_scan_id(label)? else {
                return Ok(VertexRuns::default());
            };
            return self.stored_label_runs(id);
        }
        Ok(VertexRuns::from_ids(self.scan_label(label)?))
    }

    /// The committed vertices carrying label `id` at the start timestamp, as runs in id
    /// order.
    fn stored_label_runs(&self, id: LabelId) -> Result<VertexRuns> {
        let mut runs = VertexRuns::default();
        (self.storage())
            .scan_label_runs(id, self.start_ts, &mut |table, rows| runs.push(table, rows))?;
        // Storage lists tables in id order and rows in order (checked, not assumed).
        if !runs.is_sorted() {
            let mut ids = runs.ids();
            ids.sort_unstable();
            ids.dedup();
            runs = VertexRuns::from_ids(ids);
        }
        Ok(runs)
    }

    /// The id of `label` for a label scan, recorded as the scan's read (`None`: no vertex can
    /// carry it).
    fn label_scan_id(&mut self, label: &str) -> Result<Option<LabelId>> {
        let id = match self.isolation {
            // A serializable scan needs the label's id to record the predicate, even if no
            // vertex carries it yet (a concurrent insert would be a phantom).
            IsolationLevel::Serializable => Some(self.ensure_token(label, TokenKind::Label)?),
            IsolationLevel::Snapshot => self.catalog().labels.id(label),
        };
        if let Some(id) = id {
            self.record(ReadItem::LabelScan(id));
        }
        Ok(id)
    }

    /// Every vertex carrying at least one of `labels` in this view, each once, in id order:
    /// the label scans of each (so under SERIALIZABLE each is recorded as a `LabelScan` read,
    /// and a concurrent insert of a vertex carrying any of them is a phantom), merged.
    pub fn scan_any_label(&mut self, labels: &[impl AsRef<str>]) -> Result<Vec<VertexId>> {
        let mut found: Vec<VertexId> = Vec::new();
        for label in labels {
            found.extend(self.scan_label(label.as_ref())?);
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Every vertex in this view, in id order: all vertex tables, the unlabeled one included.
    /// Under SERIALIZABLE the scan is recorded as a label scan of every existing table's
    /// label, so a concurrent insert into any of them is a phantom (a table created
    /// concurrently is not covered).
    pub fn scan_all_vertices(&mut self) -> Result<Vec<VertexId>> {
        if let Some(graph) = &self.external {
            return Ok(external::reads::scan_all(&**graph));
        }
        let catalog = self.catalog();
        for def in &catalog.vertex_tables {
            self.record(ReadItem::LabelScan(def.label));
        }
        let mut found = Vec::new();
        for table in self.storage().vertex_tables() {
            table.rows().scan(self.start_ts, |row| {
                found.push(VertexId::new(table.id(), row))
            })?;
        }
        found.retain(|v| !self.writes.deleted_vertices.contains_key(v));
        found.extend(self.writes.new_vertices.keys().copied());
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Looks a vertex up by the primary key of the vertex table named `table`.
    pub fn lookup(&mut self, table: &str, key: &Value) -> Result<Option<VertexId>> {
        if let Some(graph) = &self.external {
            return Err(Error::InvalidArgument(format!(
                "graph '{}' is attached: it has no primary-key lookups",
                graph.name()
            )));
        }
        let catalog = self.catalog();
        let table_id = catalog
            .labels
            .id(table)
            .and_then(|l| catalog.table_of_label(l))
            .ok_or_else(|| Error::NotFound(format!("vertex table '{table}'")))?;
        self.lookup_in(table_id, key)
    }

    fn lookup_in(&mut self, table_id: VertexTableId, key: &Value) -> Result<Option<VertexId>> {
        let vt = self.storage().vertex_table(table_id)?;
        let Some(pk_key) = vt.pk_key() else {
            return Err(Error::InvalidArgument(format!(
                "vertex table '{}' has no primary key",
                self.catalog().table_name(table_id)
            )));
        };
        self.record(ReadItem::PrimaryKey(table_id, key.clone()));
        if let Some(v) = self.writes.pk_claims.get(&(table_id, key.clone())) {
            return Ok(Some(*v));
        }
        if let Some(v) = self.writes.staged_keys.get(table_id, key) {
            return Ok(Some(v));
        }
        let found = vt
            .lookup_pk(key, self.start_ts)?
            .map(|row| VertexId::new(table_id, row));
        Ok(found.filter(|v| {
            !self.writes.deleted_vertices.contains_key(v)
                && !self.writes.vertex_props.contains_key(&(*v, pk_key))
        }))
    }

    /// The vertices carrying `label` whose property `key` equals `value`, answered by
    /// primary-key indexes — or `None` when they cannot answer exactly and the caller must scan
    /// the label. The tables that may hold such vertices are `label`'s own table and every
    /// table where `label` has been installed as an extra label; the seek answers only when
    /// each of them has `key` as its primary key and `value` is of the key's type (Cypher's
    /// `1 = 1.0` still has to match, so a float never seeks an integer key), and when the
    /// transaction's own writes put `label` on no vertex of another table.
    ///
    /// Under SERIALIZABLE the seek records the label scan it replaces as well as the keys, so
    /// it never validates more optimistically than the scan would.
    pub fn seek_by_key(
        &mut self,
        label: &str,
        key: &str,
        value: &Value,
    ) -> Result<Option<Vec<VertexId>>> {
        if self.external.is_some() {
            return Ok(None); // no index (the caller scans) / no bulk read
        }
        let catalog = self.catalog();
        let Some(label_id) = catalog.labels.id(label) else {
            return Ok(None);
        };
        let mut tables: Vec<VertexTableId> = catalog.table_of_label(label_id).into_iter().collect();
        let carriers = self.storage().vertex_tables();
        tables.extend(
            carriers
                .iter()
                .filter(|t| t.may_carry_extra_label(label_id))
                .map(|t| t.id()),
        );
        tables.sort_unstable();
        tables.dedup();
        let keyed = |table: VertexTableId| {
            let Ok(def) = catalog.vertex_table(table) else {
                return false;
            };
            def.primary_key
                .map(|i| &def.properties[i])
                .is_some_and(|pk| catalog.prop_name(pk.key) == key && pk.data_type.accepts(value))
        };
        if tables.is_empty() || matches!(value, Value::Null) || !tables.iter().all(|&t| keyed(t)) {
            return Ok(None);
        }
        let outside = |v: &VertexId, labels: &[LabelId]| {
            !tables.contains(&v.table) && labels.contains(&label_id)
        };
        let writes = &self.writes;
        if writes
            .new_vertices
            .iter()
            .any(|(v, nv)| outside(v, &nv.labels))
            || writes
                .vertex_labels
                .iter()
                .any(|(v, (_, new))| outside(v, new))
        {
            return Ok(None);
        }
        self.record(ReadItem::LabelScan(label_id));
        let mut found = Vec::new();
        for table in tables {
            if let Some(v) = self.lookup_in(table, value)?
                && self.label_ids(v)?.contains(&label_id)
            {
                found.push(v);
            }
        }
        Ok(Some(found))
    }

    /// The vertices carrying `label` whose property `key` holds a value in `range` (by the
    /// index's keys, see `plexus_storage::index`: `KeyRange::equal` for `=`, `between` for
    /// `<`, `<=`, `>`, `>=`, `prefix` for `STARTS WITH`), answered by the secondary index on
    /// `(label, key)` — or `None` when there is no ready index and the caller must scan the
    /// label. An empty range finds nothing.
    ///
    /// The index gives candidates that held such a value in some kept version; each is
    /// re-checked in this transaction's view (existence, label, value — its own writes
    /// included), and every vertex this transaction created or changed is a candidate too,
    /// since its writes are not in the index. The re-check is by key, as lossy as the index
    /// (integers beyond 2^53 may pass for a neighbour): the caller's filter applies Cypher's
    /// comparison. Under SERIALIZABLE the seek records the label scan it replaces and the
    /// key's values on the tables carrying the label (so a concurrent write of the key there
    /// is a conflict, as it would be for a scan that read every vertex's value).
    ///
    /// REPEATED SEEKS: while the transaction has changed no vertex, an equality seek's answer
    /// is remembered (up to [`MAX_SEEK_MEMO_ENTRIES`]) and the same seek answered from it:
    /// at a fixed snapshot with no vertex writes of its own, the vertices holding a value
    /// cannot change (the index may gain entries from later commits, which this snapshot
    /// does not see, and loses only entries no kept version supports). `LOAD CSV … MATCH (a:V
    /// {id: …}), (b:V {id: …}) CREATE (a)-[:E]->(b)` names hubs over and over: ~60 % of its
    /// seeks repeat within a 100,000-row transaction on the RMAT benchmark graph. The reads
    /// recorded for SERIALIZABLE are the first seek's, recorded again. The memo may pass on
    /// to the statement's next transaction ([`take_carried_reads`](Self::take_carried_reads)).
    pub fn seek_by_index(
        &mut self,
        label: &str,
        key: &str,
        range: &KeyRange,
    ) -> Result<Option<Vec<VertexId>>> {
        if self.external.is_some() {
            return Ok(None); // no index (the caller scans) / no bulk read
        }
        let catalog = self.catalog();
        let (Some(label_id), Some(key_id)) = (catalog.labels.id(label), catalog.prop_keys.id(key))
        else {
            return Ok(None);
        };
        if *range == KeyRange::Empty {
            return Ok(Some(Vec::new()));
        }
        let memo_key = (range.point())
            .filter(|_| self.writes.no_vertex_changes())
            .map(|point| (label_id, key_id, point.clone()));
        if let Some(found) = memo_key.as_ref().and_then(|k| self.seek_memo.get(k)) {
            let found = found.to_vec();
            self.record_seek(label_id, key_id);
            return Ok(Some(found));
        }
        let Some(mut candidates) = self.storage().index_candidates(label_id, key_id, range)? else {
            return Ok(None);
        };
        self.record_seek(label_id, key_id);
        let writes = &self.writes;
        candidates.extend(writes.new_vertices.keys());
        candidates.extend(writes.vertex_labels.keys());
        candidates.extend(
            writes
                .vertex_props
                .keys()
                .filter(|(_, k)| *k == key_id)
                .map(|(v, _)| *v),
        );
        candidates.sort_unstable();
        candidates.dedup();
        let mut found = Vec::new();
        for v in candidates {
            // `label_ids` checks that `v` is visible (else NotFound) and leaves its table in
            // the schema cache: the property is read without checking again.
            match self.label_ids(v) {
                Ok(labels) if labels.contains(&label_id) => {}
                Ok(_) | Err(Error::NotFound(_)) => continue,
                Err(e) => return Err(e),
            }
            let held = self.checked_vertex_property(v, key_id)?;
            let held_key = held.as_ref().and_then(IndexKey::of);
            if held_key.is_some_and(|held| range.contains(&held)) {
                found.push(v);
            }
        }
        if let Some(memo_key) = memo_key {
            if self.seek_memo.len() >= MAX_SEEK_MEMO_ENTRIES {
                self.seek_memo.clear();
            }
            self.seek_memo.insert(memo_key, Found::of(&found));
        }
        Ok(Some(found))
    }

    /// What this transaction learned of the vertices at its snapshot — its remembered
    /// equality seeks (see REPEATED SEEKS in [`seek_by_index`](Self::seek_by_index)) and the
    /// vertices it found existing there (`existing_at_start`) — for the next transaction of the
    /// same statement (`CALL { … } IN TRANSACTIONS` runs one per batch).
    pub fn take_carried_reads(&mut self) -> CarriedReads {
        CarriedReads {
            memo: std::mem::take(&mut self.seek_memo),
            existing: std::mem::take(&mut self.existing_at_start),
            ts: self.start_ts,
        }
    }

    /// Takes over `carried` as this transaction's remembered seeks and existing vertices when
    /// they still hold: this snapshot is no older than theirs, this transaction has neither
    /// memos nor vertex writes of its own yet, and no commit since their snapshot changed any
    /// vertex (`Storage::vertices_unchanged_since`) — then every vertex reads here as it read
    /// there, so each remembered answer is this snapshot's answer too. Returns whether it
    /// did; a `LOAD CSV` of relationships in batches of 100,000 rows then answers a hub's seek
    /// and checks its existence once per statement instead of once per batch.
    pub fn adopt_carried_reads(&mut self, carried: CarriedReads) -> bool {
        let holds = self.external.is_none()
            && carried.ts <= self.start_ts
            && self.seek_memo.is_empty()
            && self.existing_at_start.is_empty()
            && self.writes.no_vertex_changes()
            && self.storage().vertices_unchanged_since(carried.ts);
        if holds {
            self.seek_memo = carried.memo;
            self.existing_at_start = carried.existing;
        }
        holds
    }

    /// What an index seek reads, for SERIALIZABLE: the label scan it replaces, and the key's
    /// values on the vertices it did not read (a change moving one into the range is a
    /// phantom).
    fn record_seek(&mut self, label_id: LabelId, key_id: PropKeyId) {
        if self.isolation != IsolationLevel::Serializable {
            return; // nothing is recorded: not even the tables carrying the label are needed
        }
        self.record(ReadItem::LabelScan(label_id));
        for table in self.storage().label_carriers(label_id) {
            self.record(ReadItem::TableProp(table, key_id));
        }
    }
}
