//! Edges in a transaction: edge types, scans and index seeks, creation and deletion,
//! properties, and neighbour reads — the committed state overlaid with the transaction's own
//! writes.

use super::*;

impl Transaction {
    /// The id of edge type `name` for a read of the edges of that type: `None` when no edge
    /// has it — except under SERIALIZABLE, where the name is registered so that the read can
    /// be recorded (a later commit may create the first such edge).
    fn read_edge_type(&self, name: &str) -> Result<Option<EdgeTypeId>> {
        self.read_edge_type_in(&self.catalog(), name)
    }

    /// [`read_edge_type`](Self::read_edge_type) against `catalog`.
    fn read_edge_type_in(&self, catalog: &Catalog, name: &str) -> Result<Option<EdgeTypeId>> {
        match catalog.edge_types.id(name) {
            Some(id) => Ok(Some(id)),
            None if self.isolation == IsolationLevel::Serializable => {
                Ok(Some(self.ensure_token(name, TokenKind::EdgeType)?))
            }
            None => Ok(None),
        }
    }

    /// The edges this transaction created whose type is `ty`.
    fn own_new_edges_of(&self, ty: EdgeTypeId) -> Vec<EdgeId> {
        let catalog = self.catalog();
        let created = self.writes.new_edges.keys().copied();
        created.filter(|&e| is_of_type(&catalog, e, ty)).collect()
    }

    /// The edges of type `edge_type` in this view: every edge table of the type at the
    /// snapshot, without the edges this transaction deleted, with those it created. Under
    /// SERIALIZABLE it records the scan (a later commit creating or deleting such an edge
    /// conflicts).
    pub fn scan_edges(&mut self, edge_type: &str) -> Result<Vec<EdgeId>> {
        if let Some(graph) = &self.external {
            return Ok(external::reads::scan_edges(&**graph, edge_type));
        }
        let Some(ty) = self.read_edge_type(edge_type)? else {
            return Ok(Vec::new());
        };
        self.record(ReadItem::EdgeTypeScan(ty));
        let committed = self.storage().scan_edge_type(ty, self.start_ts)?;
        let deleted = &self.writes.deleted_edges;
        let mut found: Vec<EdgeId> = (committed.into_iter())
            .filter(|e| !deleted.contains_key(e))
            .collect();
        found.extend(self.own_new_edges_of(ty));
        Ok(found)
    }

    /// How many edges of type `edge_type` this view holds: the length of
    /// [`scan_edges`](Self::scan_edges), counted from the type's edge rows without listing
    /// them (the adjacency is not read), and recorded as the same read under SERIALIZABLE.
    pub fn count_edges(&mut self, edge_type: &str) -> Result<u64> {
        if let Some(graph) = &self.external {
            return Ok(external::reads::scan_edges(&**graph, edge_type).len() as u64);
        }
        let Some(ty) = self.read_edge_type(edge_type)? else {
            return Ok(0);
        };
        self.record(ReadItem::EdgeTypeScan(ty));
        let committed = self.storage().count_edge_type(ty, self.start_ts)?;
        // Deleted here: edges of the snapshot (deleting an edge this transaction created
        // removes it from `new_edges` instead).
        let catalog = self.catalog();
        let deleted = (self.writes.deleted_edges.keys())
            .filter(|&&e| is_of_type(&catalog, e, ty))
            .count() as u64;
        let created = self.own_new_edges_of(ty).len() as u64;
        Ok(committed - deleted + created)
    }

    /// How many edges of any type this view holds: [`count_edges`](Self::count_edges) of
    /// every type together. Under SERIALIZABLE it records a read of the whole edge set: a
    /// later commit creating or deleting any edge conflicts (a type created since included).
    pub fn count_all_edges(&mut self) -> Result<u64> {
        if let Some(graph) = &self.external {
            let tables = graph.edge_tables().iter();
            return Ok(tables.map(|table| u64::from(table.count)).sum());
        }
        self.record(ReadItem::AllEdges);
        let types = self.catalog().edge_types.len() as EdgeTypeId;
        let mut committed = 0;
        for ty in 0..types {
            committed += self.storage().count_edge_type(ty, self.start_ts)?;
        }
        // Deleted here: edges of the snapshot (see `count_edges`).
        let deleted = self.writes.deleted_edges.len() as u64;
        Ok(committed - deleted + self.writes.new_edges.len() as u64)
    }

    /// The edges of type `edge_type` whose property `key` holds a value in `range` (as
    /// [`seek_by_index`](Self::seek_by_index) for vertices), answered by the secondary index
    /// on `(edge_type, key)` — or `None` when there is no ready index and the caller must scan
    /// the type ([`scan_edges`](Self::scan_edges)). An empty range finds nothing.
    ///
    /// The index gives candidates of the type that held such a value in some kept version;
    /// the edges this transaction created of the type, and those whose `key` it wrote, are
    /// candidates too, since its writes are not in the index. Each is re-checked in this
    /// transaction's view — it exists (not deleted here), and holds a value in `range` (by
    /// key, as lossy as the index: the caller's filter applies Cypher's comparison) — so the
    /// seek finds what a scan of the type would. Under SERIALIZABLE the seek records the scan
    /// of the type it replaces and the property it reads on all of them: a later commit that
    /// creates or deletes an edge of the type, or writes `key` on one, conflicts.
    pub fn seek_edges_by_index(
        &mut self,
        edge_type: &str,
        key: &str,
        range: &KeyRange,
    ) -> Result<Option<Vec<EdgeId>>> {
        if self.external.is_some() {
            return Ok(None); // no index (the caller scans) / no bulk read
        }
        let catalog = self.catalog();
        let (Some(ty), Some(key_id)) =
            (catalog.edge_types.id(edge_type), catalog.prop_keys.id(key))
        else {
            return Ok(None);
        };
        if *range == KeyRange::Empty {
            return Ok(Some(Vec::new()));
        }
        let Some(mut candidates) = self.storage().edge_index_candidates(ty, key_id, range)? else {
            return Ok(None);
        };
        debug_assert!(
            candidates.iter().all(|&e| is_of_type(&catalog, e, ty)),
            "the index of a type lists only edges of its tables"
        );
        self.record(ReadItem::EdgeTypeScan(ty));
        self.record(ReadItem::EdgeTypeProp(ty, key_id));
        candidates.extend(self.own_new_edges_of(ty));
        let rewritten = self.writes.edge_props.keys().filter(|(_, k)| *k == key_id);
        candidates.extend(
            rewritten
                .map(|&(e, _)| e)
                .filter(|&e| is_of_type(&catalog, e, ty)),
        );
        candidates.sort_unstable();
        candidates.dedup();
        let mut found = Vec::new();
        for e in candidates {
            if !self.edge_exists(e)? {
                continue;
            }
            let held = self.edge_property(e, key)?;
            if held
                .as_ref()
                .and_then(IndexKey::of)
                .is_some_and(|held| range.contains(&held))
            {
                found.push(e);
            }
        }
        Ok(Some(found))
    }

    /// Creates an edge `src -[edge_type]-> dst`. Multiple edges between the same pair are fine.
    pub fn create_edge(
        &mut self,
        src: VertexId,
        edge_type: &str,
        dst: VertexId,
        props: &[(&str, Value)],
    ) -> Result<EdgeId> {
        self.check_writable()?;
        self.check_vertex(src)?;
        self.check_vertex(dst)?;
        let protections = self.manager.protections();
        if protections.active() {
            protections.check_edge_type(edge_type, self.follower.as_deref())?;
        }
        let table = match &self.last_edge_table {
            Some((s, ty, d, table)) if *s == src.table && *d == dst.table && ty == edge_type => {
                table.clone()
            }
            _ => {
                let table = self.edge_table_for(src.table, edge_type, dst.table)?;
                let cached = (src.table, edge_type.to_string(), dst.table, table.clone());
                self.last_edge_table = Some(cached);
                table
            }
        };
        let props = self.resolve_props(table.rows(), props)?;
        let offset = table.reserve_row()?;
        let id = EdgeId::new(table.id(), offset);
        self.writes
            .new_edges
            .insert(id, NewEdge { src, dst, props });
        Ok(id)
    }

    /// The edge table (src table)-[edge_type]->(dst table), created on first use.
    pub(super) fn edge_table_for(
        &self,
        src: VertexTableId,
        edge_type: &str,
        dst: VertexTableId,
    ) -> Result<Arc<EdgeTable>> {
        let ty = self.ensure_token(edge_type, TokenKind::EdgeType)?;
        let table_id = self.storage().change_catalog(
            |c| c.edge_table(src, ty, dst),
            |c| {
                let def = EdgeTableDef {
                    src,
                    edge_type: ty,
                    dst,
                    declared: false,
                    properties: Vec::new(),
                };
                let id = c.edge_tables.len() as u32;
                Ok(CatalogOp::EdgeTable { id, def })
            },
        )?;
        self.storage().edge_table(table_id)
    }

    pub fn delete_edge(&mut self, e: EdgeId) -> Result<()> {
        self.check_writable()?;
        self.check_edge(e)?;
        self.check_unprotected_edge_table(e.table)?;
        self.writes.forget_edge_writes(e);
        if self.writes.new_edges.remove(&e).is_some() {
            return Ok(());
        }
        let (src, dst) = self
            .storage()
            .edge_endpoints(e)?
            .ok_or_else(|| Error::NotFound(format!("edge {e}")))?;
        self.writes.deleted_edges.insert(e, (src, dst));
        Ok(())
    }

    /// Whether `e` exists in this view; `false` also for ids that name no row at all.
    pub fn edge_exists(&mut self, e: EdgeId) -> Result<bool> {
        if let Some(graph) = &self.external {
            return Ok(external::reads::edge_exists(&**graph, e));
        }
        match self.check_edge(e) {
            Ok(()) => Ok(true),
            Err(Error::NotFound(_)) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// (source, destination) of an edge visible in this view.
    pub fn edge_endpoints(&mut self, e: EdgeId) -> Result<(VertexId, VertexId)> {
        if let Some(graph) = &self.external {
            return external::reads::check_edge(&**graph, e).and_then(|()| graph.edge_endpoints(e));
        }
        self.check_edge(e)?;
        if let Some(ne) = self.writes.new_edges.get(&e) {
            return Ok((ne.src, ne.dst));
        }
        self.storage()
            .edge_endpoints(e)?
            .ok_or_else(|| Error::NotFound(format!("edge {e}")))
    }

    pub fn edge_type(&mut self, e: EdgeId) -> Result<String> {
        if let Some(graph) = &self.external {
            return external::reads::edge_type(&**graph, e);
        }
        self.check_edge(e)?;
        let catalog = self.catalog();
        let ty = catalog.edge_table_def(e.table)?.edge_type;
        Ok(catalog.edge_types.name(ty).unwrap_or("?").to_string())
    }

    pub fn set_edge_property(&mut self, e: EdgeId, name: &str, value: Value) -> Result<()> {
        self.check_writable()?;
        self.check_edge(e)?;
        self.check_unprotected_edge_table(e.table)?;
        let key = self.ensure_token(name, TokenKind::PropKey)?;
        self.storage()
            .edge_table(e.table)?
            .rows()
            .check_type(key, &value, name)?;
        let value = (!matches!(value, Value::Null)).then_some(value);
        if let Some(ne) = self.writes.new_edges.get_mut(&e) {
            match value {
                Some(x) => ne.props.insert(key, x),
                None => ne.props.remove(&key),
            };
        } else {
            self.writes.edge_props.insert((e, key), value);
        }
        Ok(())
    }

    pub fn edge_property(&mut self, e: EdgeId, name: &str) -> Result<Option<Value>> {
        if let Some(graph) = &self.external {
            return external::reads::check_edge(&**graph, e)
                .and_then(|()| graph.edge_property(e, name));
        }
        self.check_edge(e)?;
        let Some(key) = self.catalog().prop_keys.id(name) else {
            return Ok(None);
        };
        let created = self.writes.new_edges.get(&e).map(|ne| &ne.props);
        if let Some(answer) = written_prop(created, &self.writes.edge_props, e, key) {
            return Ok(answer);
        }
        self.record(ReadItem::Prop(Entity::Edge(e), key));
        self.storage()
            .edge_table(e.table)?
            .rows()
            .prop(e.offset, key, self.start_ts)
    }

    pub fn edge_properties(&mut self, e: EdgeId) -> Result<Vec<(String, Value)>> {
        if let Some(graph) = &self.external {
            return external::reads::check_edge(&**graph, e)
                .and_then(|()| graph.edge_properties(e));
        }
        self.check_edge(e)?;
        let props = match self.writes.new_edges.get(&e) {
            Some(ne) => ne.props.iter().map(|(k, v)| (k, v.clone())).collect(),
            None => {
                self.record(ReadItem::AllProps(Entity::Edge(e)));
                let committed = self
                    .storage()
                    .edge_table(e.table)?
                    .rows()
                    .props(e.offset, self.start_ts)?;
                overlay_props(committed, &self.writes.edge_props, e)
            }
        };
        Ok(self.named(props))
    }

    /// The edges `src -[edge_type]-> dst` (of one type, or all) in this view. Runs on disk that
    /// cannot hold the pair are skipped by their source bitmaps and bloom filters.
    pub fn edges_between(
        &mut self,
        src: VertexId,
        edge_type: Option<&str>,
        dst: VertexId,
    ) -> Result<Vec<EdgeId>> {
        if let Some(graph) = self.external.clone() {
            let mut found = Vec::new();
            external::reads::neighbors_into(&*graph, src, edge_type, Direction::Out, &mut found)?;
            return Ok(found
                .into_iter()
                .filter(|&(_, n)| n == dst)
                .map(|(e, _)| e)
                .collect());
        }
        self.check_vertex(src)?;
        self.check_vertex(dst)?;
        let catalog = self.catalog();
        let ty = match edge_type {
            Some(name) => match self.read_edge_type(name)? {
                Some(id) => Some(id),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        self.record(match ty {
            Some(t) => ReadItem::Adjacency(src, t, true),
            None => ReadItem::AdjacencyAny(src, true),
        });
        let type_ok = |e: EdgeId| ty.is_none_or(|t| is_of_type(&catalog, e, t));
        let mut found: Vec<EdgeId> = self
            .storage()
            .edges_between(src, dst, self.start_ts, |def| {
                ty.is_none_or(|t| def.edge_type == t)
            })
            .into_iter()
            .filter(|e| !self.writes.deleted_edges.contains_key(e))
            .collect();
        found.extend(
            self.writes
                .new_edges
                .iter()
                .filter(|(e, ne)| ne.src == src && ne.dst == dst && type_ok(**e))
                .map(|(e, _)| *e),
        );
        Ok(found)
    }

    /// The edges of `v` in direction `dir` (of one type, or all), with the vertex at the other
    /// end. `Both` lists out-edges then in-edges, so a self-loop appears twice.
    pub fn neighbors(
        &mut self,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
    ) -> Result<Vec<(EdgeId, VertexId)>> {
        let mut found = Vec::new();
        self.neighbors_into(v, edge_type, dir, &mut found)?;
        Ok(found)
    }

    /// [`neighbors`](Self::neighbors), appended to `found` (a caller expanding many vertices
    /// keeps one buffer).
    pub fn neighbors_into(
        &mut self,
        v: VertexId,
        edge_type: Option<&str>,
        dir: Direction,
        found: &mut Vec<(EdgeId, VertexId)>,
    ) -> Result<()> {
        if let Some(graph) = &self.external {
            return external::reads::neighbors_into(&**graph, v, edge_type, dir, found);
        }
        self.check_vertex_cached(v)?;
        let ty: Option<EdgeTypeId> = match edge_type {
            Some(name) => match self.read_edge_type_in(&self.schema_cache().catalog, name)? {
                Some(id) => Some(id),
                None => return Ok(()),
            },
            None => None,
        };
        let sides: &[bool] = match dir {
            Direction::Out => &[true],
            Direction::In => &[false],
            Direction::Both => &[true, false],
        };
        for &out in sides {
            self.record(match ty {
                Some(t) => ReadItem::Adjacency(v, t, out),
                None => ReadItem::AdjacencyAny(v, out),
            });
        }
        // Borrowed, not cloned: cloning the `Arc`s per call is what contended (see SchemaCache).
        let SchemaCache {
            catalog,
            edge_tables,
            ..
        } = self.schema_cache();
        for &out in sides {
            let d = if out { Direction::Out } else { Direction::In };
            plexus_storage::neighbors_in(
                (catalog, edge_tables),
                v,
                d,
                self.start_ts,
                |def| ty.is_none_or(|t| def.edge_type == t),
                &mut |e, n| {
                    if !self.writes.deleted_edges.contains_key(&e) {
                        found.push((e, n));
                    }
                },
            );
            for (e, ne) in &self.writes.new_edges {
                let type_ok = ty.is_none_or(|t| is_of_type(catalog, *e, t));
                let (from, to) = if out {
                    (ne.src, ne.dst)
                } else {
                    (ne.dst, ne.src)
                };
                if type_ok && from == v {
                    found.push((*e, to));
                }
            }
        }
        Ok(())
    }
}

/// Whether edge `e` is of type `ty` (the type of its table).
fn is_of_type(catalog: &Catalog, e: EdgeId, ty: EdgeTypeId) -> bool {
    (catalog.edge_tables.get(e.table as usize)).is_some_and(|table| table.edge_type == ty)
}
