//! Vertices in a transaction: creation (choosing or creating the vertex table, primary-key
//! checks), deletion, properties (single and bulk reads, overlaying the write set on the
//! committed rows) and labels — every write checked when it is made (see WRITES in the
//! module documentation).

use super::*;
use std::ops::Range;

impl Transaction {
    /// Creates a vertex. Its table is the first label that names a vertex table (declared or
    /// implicit); otherwise an implicit table named after the first label is created. Other
    /// labels are stored in the vertex's label set. Null-valued properties are not stored.
    pub fn create_vertex(&mut self, labels: &[&str], props: &[(&str, Value)]) -> Result<VertexId> {
        self.check_writable()?;
        self.check_unprotected_labels(labels)?;
        let (table_id, extra) = self.table_for_new_vertex(labels)?;
        let table = self.storage().vertex_table(table_id)?;
        let resolved = self.resolve_props(table.rows(), props)?;
        let catalog = self.catalog();
        let def = catalog.vertex_table(table_id)?;
        let pk = match def.primary_key {
            Some(index) => {
                let key = def.properties[index].key;
                let value = resolved.get(&key).cloned().ok_or_else(|| {
                    Error::Constraint(format!(
                        "vertex table '{}' requires its primary key '{}'",
                        def.name,
                        catalog.prop_name(key)
                    ))
                })?;
                self.check_pk_free(&table, table_id, &value, None)?;
                Some(value)
            }
            None => None,
        };
        let offset = table.reserve_row()?;
        let id = VertexId::new(table_id, offset);
        if let Some(value) = pk {
            self.writes.pk_claims.insert((table_id, value), id);
        }
        self.writes.add_new_vertex(
            id,
            NewVertex {
                labels: extra,
                props: resolved,
            },
        );
        Ok(id)
    }

    pub(super) fn table_for_new_vertex(
        &self,
        labels: &[&str],
    ) -> Result<(VertexTableId, Vec<LabelId>)> {
        let catalog = self.catalog();
        let existing = labels.iter().find_map(|l| {
            catalog
                .labels
                .id(l)
                .and_then(|id| catalog.table_of_label(id))
        });
        let table_id = match existing {
            Some(t) => t,
            None => {
                self.ensure_implicit_table(labels.first().copied().unwrap_or(UNLABELED_TABLE))?
            }
        };
        let catalog = self.catalog();
        let def = catalog.vertex_table(table_id)?;
        let mut extra = Vec::new();
        for name in labels {
            let id = self.ensure_token(name, TokenKind::Label)?;
            if id != def.label && !extra.contains(&id) {
                check_label_allowed(def, id, name)?;
                extra.push(id);
            }
        }
        extra.sort_unstable();
        Ok((table_id, extra))
    }

    fn ensure_implicit_table(&self, label_name: &str) -> Result<VertexTableId> {
        let label = if label_name.is_empty() {
            // The unlabeled table's label is a reserved empty name, never shown to users.
            self.storage().change_catalog(
                |c| c.labels.id(UNLABELED_TABLE),
                |c| {
                    Ok(CatalogOp::Label {
                        id: c.labels.len() as u32,
                        name: UNLABELED_TABLE.to_string(),
                    })
                },
            )?
        } else {
            self.ensure_token(label_name, TokenKind::Label)?
        };
        self.storage().change_catalog(
            |c| c.table_of_label(label),
            |c| {
                let def = VertexTableDef {
                    name: label_name.to_string(),
                    label,
                    declared: false,
                    properties: Vec::new(),
                    primary_key: None,
                    families: Vec::new(),
                    extra_labels: None,
                };
                Ok(CatalogOp::VertexTable {
                    id: c.vertex_tables.len() as u32,
                    def,
                })
            },
        )
    }

    /// Fails if `value` is the primary key of a vertex (other than `except`) in this view.
    pub(super) fn check_pk_free(
        &mut self,
        table: &VertexTable,
        table_id: VertexTableId,
        value: &Value,
        except: Option<VertexId>,
    ) -> Result<()> {
        let holder = match self.claimed_pk(table_id, value) {
            Some(v) => Some(v),
            None => table
                .lookup_pk(value, self.start_ts)?
                .map(|row| VertexId::new(table_id, row))
                .filter(|v| {
                    !self.writes.deleted_vertices.contains_key(v)
                        && !table
                            .pk_key()
                            .is_some_and(|k| self.writes.vertex_props.contains_key(&(*v, k)))
                }),
        };
        match holder {
            Some(v) if Some(v) != except => Err(self.duplicate_pk_error(table_id, value, v)),
            _ => Ok(()),
        }
    }

    /// The vertex this transaction created, staged or updated with primary key `value`.
    pub(super) fn claimed_pk(&self, table_id: VertexTableId, value: &Value) -> Option<VertexId> {
        let claimed = match self.writes.pk_claims.is_empty() {
            true => None,
            false => self
                .writes
                .pk_claims
                .get(&(table_id, value.clone()))
                .copied(),
        };
        claimed.or_else(|| self.writes.staged_keys.get(table_id, value))
    }

    pub(super) fn duplicate_pk_error(
        &self,
        table_id: VertexTableId,
        value: &Value,
        holder: VertexId,
    ) -> Error {
        Error::Constraint(format!(
            "duplicate primary key {value} in vertex table '{}' (held by vertex {holder})",
            self.catalog().table_name(table_id)
        ))
    }

    /// Deletes a vertex. Fails if it still has edges, unless `detach`, which deletes them too.
    pub fn delete_vertex(&mut self, v: VertexId, detach: bool) -> Result<()> {
        self.check_writable()?;
        if self.writes.has_batches() {
            // Staged edges are invisible to this transaction's reads: a delete could not see
            // (or detach) the ones that use `v`; staged vertices are never deleted (their
            // keys stay claimed, see `staged_keys`).
            return Err(Error::InvalidArgument(
                "cannot delete a vertex in a transaction that staged nodes or edges for a bulk load"
                    .to_string(),
            ));
        }
        self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        let edges = self.neighbors(v, None, Direction::Both)?;
        if !edges.is_empty() && !detach {
            return Err(Error::Constraint(format!(
                "cannot delete vertex {v}: it still has {} relationship(s); delete them first or detach-delete",
                edges.len()
            )));
        }
        let mut seen = HashSet::new();
        for (e, _) in edges {
            if seen.insert(e) {
                self.delete_edge(e)?;
            }
        }
        let labels = self.label_ids(v)?;
        self.writes.forget_vertex_writes(v);
        if self.writes.remove_new_vertex(v).is_none() {
            self.writes.deleted_vertices.insert(v, labels);
        }
        Ok(())
    }

    /// Whether `v` exists in this view; `false` also for ids that name no row at all.
    pub fn vertex_exists(&mut self, v: VertexId) -> Result<bool> {
        if let Some(graph) = &self.external {
            return Ok(external::reads::vertex_exists(&**graph, v));
        }
        match self.check_vertex(v) {
            Ok(_) => Ok(true),
            Err(Error::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Sets a property; setting `Value::Null` removes it.
    pub fn set_vertex_property(&mut self, v: VertexId, name: &str, value: Value) -> Result<()> {
        self.check_writable()?;
        let table = self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        let key = self.ensure_token(name, TokenKind::PropKey)?;
        table.rows().check_type(key, &value, name)?;
        let is_null = matches!(value, Value::Null);
        if table.pk_key() == Some(key) {
            if is_null {
                return Err(Error::Constraint(format!(
                    "the primary key '{name}' of vertex {v} cannot be removed"
                )));
            }
            self.check_pk_free(&table, v.table, &value, Some(v))?;
            self.writes.pk_claims.retain(|_, x| *x != v);
            self.writes.pk_claims.insert((v.table, value.clone()), v);
        }
        let value = (!is_null).then_some(value);
        if let Some(nv) = self.writes.new_vertices.get_mut(&v) {
            match value {
                Some(x) => nv.props.insert(key, x),
                None => nv.props.remove(&key),
            };
        } else {
            self.writes.vertex_props.insert((v, key), value);
        }
        Ok(())
    }

    pub fn remove_vertex_property(&mut self, v: VertexId, name: &str) -> Result<()> {
        self.set_vertex_property(v, name, Value::Null)
    }

    pub fn vertex_property(&mut self, v: VertexId, name: &str) -> Result<Option<Value>> {
        if let Some(graph) = &self.external {
            return external::reads::check_vertex(&**graph, v)
                .and_then(|()| graph.vertex_property(v, name));
        }
        self.check_vertex_cached(v)?;
        let cache = self
            .schema
            .as_ref()
            .expect("check_vertex_cached refreshed it");
        // A key named after the cached catalog was published is unknown to it: ask the
        // current one (rare: a key created since, by this or another transaction).
        let key = cache.catalog.prop_keys.id(name);
        let Some(key) = key.or_else(|| self.catalog().prop_keys.id(name)) else {
            return Ok(None);
        };
        self.checked_vertex_property(v, key)
    }

    /// Property `key` of `v`, which [`check_vertex_cached`](Self::check_vertex_cached) has
    /// just found visible (the schema cache holds its table).
    pub(super) fn checked_vertex_property(
        &mut self,
        v: VertexId,
        key: PropKeyId,
    ) -> Result<Option<Value>> {
        let created = self.writes.new_vertices.get(&v).map(|nv| &nv.props);
        if let Some(answer) = written_prop(created, &self.writes.vertex_props, v, key) {
            return Ok(answer);
        }
        self.record(ReadItem::Prop(Entity::Vertex(v), key));
        self.cached_table(v)
            .rows()
            .prop(v.offset, key, self.start_ts)
    }

    /// [`vertex_property`](Self::vertex_property) of each of `vs`, in order, read in bulk: the
    /// rows of one table in runs, existence and property of every row of a chunk under one
    /// latch (`RowTable::exists_and_prop_many`), instead of two latches and the write-set
    /// look-ups per vertex. `None` when the bulk read does not apply — the transaction has
    /// created, deleted or changed vertex properties — or fails (a vertex that does not exist,
    /// a storage error): the caller then reads vertex by vertex, which reports the error the
    /// first failing vertex has. Reads are recorded as by `vertex_property`.
    pub fn vertex_property_many(
        &mut self,
        vs: &[VertexId],
        name: &str,
    ) -> Option<Vec<Option<Value>>> {
        self.bulk_vertex_reads_apply()
            .then(|| self.unwritten_property_many(vs, name).ok())
            .flatten()
    }

    /// [`vertex_property_many`](Self::vertex_property_many) of each of `names` as a typed
    /// vector, with no `Value` per vertex: `Some` only when it applies (see there) and the
    /// name is a BOOLEAN, INT64 or FLOAT64 property — or with `strings` a STRING one — every
    /// vertex's table declares in a column of its own or keeps undeclared with values of that
    /// one type, of one type across them (`RowTable::typed_props_many`: the undeclared keys
    /// read in one walk of the rows); `None` asks the caller to use `vertex_property_many`.
    /// Reads are recorded as by `vertex_property` — only for the names answered, so a
    /// fallback records them once.
    pub fn vertex_typed_properties_many(
        &mut self,
        vs: &[VertexId],
        names: &[&str],
        strings: bool,
    ) -> Vec<Option<TypedProps>> {
        let mut out = vec![None; names.len()];
        if vs.is_empty() || !self.bulk_vertex_reads_apply() || self.refresh_schema(vs[0]).is_err() {
            return out;
        }
        // Refused cheaply first when the first table keeps no key in a form a typed read
        // answers (a temporal or family column, a STRING one unless asked for), so the
        // caller's `Value` reads that follow do not come after a second round of the checks
        // below. An undeclared key is tried: its values decide (storage's typed reads,
        // UNDECLARED).
        let first = self.cached_table(vs[0]).rows();
        let catalog = &self.schema_cache().catalog;
        let asked: Vec<(usize, PropKeyId)> = (names.iter().enumerate())
            .filter_map(|(i, name)| Some((i, catalog.prop_keys.id(name)?)))
            .filter(|&(_, key)| first.has_typed_column(key, strings))
            .collect();
        if asked.is_empty() {
            return out;
        }
        // One pass over the ids for what a batch of one table's vertices (a scan's) needs:
        // their offsets, whether all are of the first one's table (its schema refreshed
        // above), the largest offset (the one range check).
        let table = vs[0].table;
        let (mut one_table, mut largest) = (true, 0);
        let mut offsets: Vec<u32> = (vs.iter())
            .map(|v| {
                one_table &= v.table == table;
                largest = largest.max(v.offset);
                v.offset
            })
            .collect();
        let checked = match one_table {
            true => (self.cached_table(vs[0])).check_offset(VertexId::new(table, largest)),
            false => self.check_bulk_vertex_read(vs, names[0]).map(|_| ()),
        };
        if checked.is_err() {
            return out;
        }
        let keys: Vec<PropKeyId> = asked.iter().map(|&(_, key)| key).collect();
        let mut typed: Vec<Option<TypedProps>> = Vec::new();
        let runs: Vec<&[VertexId]> = match one_table {
            true => vec![vs],
            false => vs.chunk_by(|a, b| a.table == b.table).collect(),
        };
        for run in runs {
            if !one_table {
                offsets.clear();
                offsets.extend(run.iter().map(|v| v.offset));
            }
            let rows = self.cached_table(run[0]).rows();
            let Ok(parts) = rows.typed_props_many(&offsets, &keys, self.start_ts, strings) else {
                return out;
            };
            if typed.is_empty() {
                typed = parts;
                continue;
            }
            for (typed, part) in typed.iter_mut().zip(parts) {
                // A key another table cannot answer, or answers with another type: none.
                let joined = match (typed.as_mut(), part) {
                    (Some(typed), Some(part)) => typed.append(part),
                    _ => false,
                };
                if !joined {
                    *typed = None;
                }
            }
        }
        for ((i, key), typed) in asked.into_iter().zip(typed) {
            if typed.is_some() {
                self.record_property_reads(vs.iter().map(|&v| Entity::Vertex(v)), Some(key));
            }
            out[i] = typed;
        }
        out
    }

    /// The value ranges of property `name` over rows `rows` of vertex table `table`, for a
    /// scan that skips the vertices whose values cannot matter to it (a top-k sort's bar):
    /// `rows` cut at storage chunk boundaries, each part with its chunk's `Zone` of the
    /// property as this transaction sees it (`RowTable::zones`; `None`: unknown — read the
    /// rows). One part, `None`, when bulk reads do not apply (see `vertex_property_many`) or
    /// the rows are not the table's. The vertices answered with a zone are recorded as read
    /// (as by `vertex_property`): a reader that skips them has decided on their values.
    pub fn vertex_property_zones(
        &mut self,
        table: VertexTableId,
        rows: Range<u32>,
        name: &str,
    ) -> Vec<(Range<u32>, Option<Zone>)> {
        let unknown = || vec![(rows.clone(), None)];
        if rows.is_empty() || !self.bulk_vertex_reads_apply() {
            return unknown();
        }
        let last = [VertexId::new(table, rows.end - 1)];
        let Ok(Some(key)) = self.check_bulk_vertex_read(&last, name) else {
            return unknown();
        };
        let zones = (self.cached_table(last[0]).rows()).zones(rows.clone(), key, self.start_ts);
        for (part, _) in zones.iter().filter(|(_, zone)| zone.is_some()) {
            let read = part
                .clone()
                .map(|offset| Entity::Vertex(VertexId::new(table, offset)));
            self.record_property_reads(read, Some(key));
        }
        zones
    }

    /// Whether bulk vertex reads apply: a local graph and no vertex change in the write set
    /// (so the committed rows are what the transaction sees).
    fn bulk_vertex_reads_apply(&self) -> bool {
        let writes = &self.writes;
        self.external.is_none()
            && writes.new_vertices.is_empty()
            && writes.vertex_props.is_empty()
            && writes.deleted_vertices.is_empty()
    }

    /// The checks before a bulk read of `vs` (schema current for their tables, offsets in
    /// range) and the id of property `name` (`None`: no such key anywhere).
    fn check_bulk_vertex_read(&mut self, vs: &[VertexId], name: &str) -> Result<Option<PropKeyId>> {
        for run in vs.chunk_by(|a, b| a.table == b.table) {
            self.refresh_schema(run[0])?;
            self.cached_table(run[0]).check_offsets(run)?;
        }
        // Just refreshed: the cache's catalog is the current one.
        Ok(self.schema_cache().catalog.prop_keys.id(name))
    }

    /// `vertex_property_many` while the write set holds no vertex change.
    fn unwritten_property_many(
        &mut self,
        vs: &[VertexId],
        name: &str,
    ) -> Result<Vec<Option<Value>>> {
        if vs.is_empty() {
            return Ok(Vec::new());
        }
        let key = self.check_bulk_vertex_read(vs, name)?;
        self.record_property_reads(vs.iter().map(|&v| Entity::Vertex(v)), key);
        let runs: Vec<(&[VertexId], &RowTable)> = (vs.chunk_by(|a, b| a.table == b.table))
            .map(|run| (run, self.cached_table(run[0]).rows()))
            .collect();
        match read_runs(&runs, |v| v.offset, key, self.start_ts)? {
            (_, Some(i)) => Err(Error::NotFound(format!("vertex {} does not exist", vs[i]))),
            (values, None) => Ok(values),
        }
    }

    /// [`edge_property`](Self::edge_property) of each of `es`, in order, read in bulk like
    /// [`vertex_property_many`](Self::vertex_property_many) reads vertices: `None` when the
    /// transaction has created, deleted or changed relationships, or a read fails.
    pub fn edge_property_many(&mut self, es: &[EdgeId], name: &str) -> Option<Vec<Option<Value>>> {
        if self.external.is_some() {
            return None; // no index (the caller scans) / no bulk read
        }
        let writes = &self.writes;
        let unwritten = writes.new_edges.is_empty()
            && writes.edge_props.is_empty()
            && writes.deleted_edges.is_empty();
        unwritten
            .then(|| self.unwritten_edge_property_many(es, name).ok())
            .flatten()
    }

    /// `edge_property_many` while the write set holds no relationship change.
    fn unwritten_edge_property_many(
        &mut self,
        es: &[EdgeId],
        name: &str,
    ) -> Result<Vec<Option<Value>>> {
        let mut tables = Vec::new();
        for run in es.chunk_by(|a, b| a.table == b.table) {
            let table = self.storage().edge_table(run[0].table)?;
            if run.iter().any(|e| e.offset >= table.rows().row_count()) {
                return Err(Error::NotFound("edge offset out of range".into()));
            }
            tables.push(table);
        }
        let key = self.catalog().prop_keys.id(name);
        self.record_property_reads(es.iter().map(|&e| Entity::Edge(e)), key);
        let runs: Vec<(&[EdgeId], &RowTable)> = (es.chunk_by(|a, b| a.table == b.table))
            .zip(&tables)
            .map(|(run, table)| (run, table.rows()))
            .collect();
        match read_runs(&runs, |e| e.offset, key, self.start_ts)? {
            (_, Some(i)) => Err(Error::NotFound(format!("edge {} does not exist", es[i]))),
            (values, None) => Ok(values),
        }
    }

    /// Records what `vertex_property` / `edge_property` record for each of `entities`: its
    /// existence and, for a known key, the property.
    fn record_property_reads(
        &mut self,
        entities: impl Iterator<Item = Entity>,
        key: Option<PropKeyId>,
    ) {
        if self.isolation != IsolationLevel::Serializable {
            return; // (what `record` does with each, without the walk)
        }
        for entity in entities {
            self.record(ReadItem::Exists(entity));
            if let Some(key) = key {
                self.record(ReadItem::Prop(entity, key));
            }
        }
    }

    /// All properties of a vertex, sorted by name.
    pub fn vertex_properties(&mut self, v: VertexId) -> Result<Vec<(String, Value)>> {
        if let Some(graph) = &self.external {
            return external::reads::check_vertex(&**graph, v)
                .and_then(|()| graph.vertex_properties(v));
        }
        let table = self.check_vertex(v)?;
        let props: BTreeMap<PropKeyId, Value> = match self.writes.new_vertices.get(&v) {
            Some(nv) => nv.props.iter().map(|(k, v)| (k, v.clone())).collect(),
            None => {
                self.record(ReadItem::AllProps(Entity::Vertex(v)));
                let committed = table.rows().props(v.offset, self.start_ts)?;
                overlay_props(committed, &self.writes.vertex_props, v)
            }
        };
        Ok(self.named(props))
    }

    pub(super) fn named(&self, props: BTreeMap<PropKeyId, Value>) -> Vec<(String, Value)> {
        let catalog = self.catalog();
        let mut named: Vec<_> = props
            .into_iter()
            .map(|(k, v)| (catalog.prop_name(k).to_string(), v))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
    }

    /// Extra labels (beyond the table's) in this view.
    fn extra_labels(&mut self, v: VertexId, table: &VertexTable) -> Result<Vec<LabelId>> {
        if let Some(nv) = self.writes.new_vertices.get(&v) {
            return Ok(nv.labels.clone());
        }
        if let Some((_, new)) = self.writes.vertex_labels.get(&v) {
            return Ok(new.clone());
        }
        self.record(ReadItem::Labels(v));
        table.rows().labels(v.offset, self.start_ts)
    }

    pub(super) fn label_ids(&mut self, v: VertexId) -> Result<Vec<LabelId>> {
        self.check_vertex_cached(v)?;
        // The cache holds `v`'s table (just refreshed), so its definition and label.
        let own = self.schema_cache().catalog.vertex_table(v.table)?.label;
        let table = self.cached_table(v).clone();
        let mut labels = self.extra_labels(v, &table)?;
        if let Some(at) = labels.iter().position(|&l| l == HIDDEN_TABLE_LABEL) {
            labels.remove(at);
        } else {
            labels.push(own);
        }
        Ok(labels)
    }

    /// The vertex's labels, sorted (the table's label included, unless it is unlabeled).
    pub fn vertex_labels(&mut self, v: VertexId) -> Result<Vec<String>> {
        if let Some(graph) = &self.external {
            return external::reads::vertex_labels(&**graph, v);
        }
        let ids = self.label_ids(v)?;
        let catalog = self.catalog();
        let mut names: Vec<String> = ids
            .into_iter()
            .map(|id| catalog.label_name(id).to_string())
            .filter(|name| name != UNLABELED_TABLE)
            .collect();
        names.sort();
        Ok(names)
    }

    /// Whether `v` carries every label of `names`, as [`vertex_labels`](Self::vertex_labels)
    /// lists them, without naming its labels: one look-up per name.
    pub fn vertex_has_labels(&mut self, v: VertexId, names: &[impl AsRef<str>]) -> Result<bool> {
        if let Some(graph) = &self.external {
            return external::reads::has_labels(&**graph, v, names);
        }
        let ids = self.label_ids(v)?;
        // `label_ids` refreshed the cache: it holds every label any version of `v` can carry.
        let catalog = &self.schema_cache().catalog;
        Ok(names.iter().all(|name| {
            let name = name.as_ref();
            name != UNLABELED_TABLE && catalog.labels.id(name).is_some_and(|id| ids.contains(&id))
        }))
    }

    pub fn add_label(&mut self, v: VertexId, label: &str) -> Result<()> {
        self.change_labels(v, label, true)
    }

    /// Removes a label; the table's own label cannot be removed.
    pub fn remove_label(&mut self, v: VertexId, label: &str) -> Result<()> {
        self.change_labels(v, label, false)
    }

    fn change_labels(&mut self, v: VertexId, name: &str, add: bool) -> Result<()> {
        self.check_writable()?;
        let table = self.check_vertex(v)?;
        self.check_unprotected_vertex(v)?;
        if add {
            self.check_unprotected_labels(&[name])?;
        }
        let catalog = self.catalog();
        let def = catalog.vertex_table(v.table)?;
        let id = match (add, catalog.labels.id(name)) {
            (true, _) => self.ensure_token(name, TokenKind::Label)?,
            (false, Some(id)) => id,
            (false, None) => return Ok(()),
        };
        // The table's own label is removed by adding the hidden-table-label marker (the
        // vertex keeps its table and id) and restored by removing the marker.
        let (id, add) = if id == def.label {
            (HIDDEN_TABLE_LABEL, !add)
        } else {
            (id, add)
        };
        if add && id != HIDDEN_TABLE_LABEL {
            check_label_allowed(def, id, name)?;
        }
        let old = self.extra_labels(v, &table)?;
        if old.contains(&id) == add {
            return Ok(()); // already as asked: not a write
        }
        let mut new: Vec<LabelId> = old.iter().copied().filter(|&l| l != id).collect();
        if add {
            new.push(id);
            new.sort_unstable();
        }
        if let Some(nv) = self.writes.new_vertices.get_mut(&v) {
            nv.labels = new;
        } else {
            let original = self
                .writes
                .vertex_labels
                .get(&v)
                .map_or(old, |(o, _)| o.clone());
            self.writes.vertex_labels.insert(v, (original, new));
        }
        Ok(())
    }
}

pub(crate) fn check_label_allowed(def: &VertexTableDef, label: LabelId, name: &str) -> Result<()> {
    match &def.extra_labels {
        Some(allowed) if !allowed.contains(&label) => Err(Error::InvalidArgument(format!(
            "label '{name}' is not declared for vertex table '{}'",
            def.name
        ))),
        _ => Ok(()),
    }
}
