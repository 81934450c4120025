//! Recovery: opening a database directory and rebuilding its state.
//!
//! `open` reads the manifest, opens the CSR runs it lists (deleting run files it does not
//! list: a crash between writing a run and publishing the manifest leaves them), loads the
//! checkpoint's catalog and rows, replays the WAL from the manifest's `wal_start` (cutting a
//! torn tail of the last segment), rebuilds the secondary indexes, and starts a fresh WAL
//! segment. See RECOVERY in the parent module for what counts as damage.

use super::*;

/// What `open` found, for logs and tests.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RecoveryReport {
    pub checkpoint_ts: Timestamp,
    pub replayed_commits: usize,
    pub torn_tail_cut: bool,
    pub recovered_ts: Timestamp,
}

impl Storage {
    /// Opens (creating if empty) the database stored in `vfs` and recovers it.
    pub fn open(vfs: Arc<dyn Vfs>, config: &Config) -> Result<(Storage, RecoveryReport)> {
        let names = vfs.list()?;
        let manifest = if vfs.exists(checkpoint::MANIFEST) {
            Manifest::read(vfs.as_ref())?
        } else if names
            .iter()
            .any(|n| wal::parse_segment_name(n).is_some() || n.ends_with(".ckpt"))
        {
            return Err(Error::corruption(
                vfs.describe(checkpoint::MANIFEST),
                0,
                "the manifest is missing but WAL or checkpoint files exist",
            ));
        } else {
            let fresh = Manifest {
                wal_start: 1,
                next_run_seq: 1,
                ..Default::default()
            };
            fresh.write(vfs.as_ref())?;
            fresh
        };
        let mut tables = Tables {
            catalog: Catalog::default(),
            vertex: Vec::new(),
            edge: Vec::new(),
            recovered: open_runs(vfs.as_ref(), &manifest, &names)?,
            range_vertices: config.lsm_range_vertices,
            cache: RowCache::open(vfs.clone(), config.row_cache_bytes)?,
            index_cache: IndexCache::open(vfs.clone(), config.index_cache_bytes)?,
            origins: Arc::default(),
        };
        let eviction = RowEviction::default();
        let mut report = RecoveryReport {
            checkpoint_ts: manifest.checkpoint_ts,
            ..Default::default()
        };
        if let Some(name) = &manifest.checkpoint {
            load_checkpoint(
                vfs.as_ref(),
                name,
                manifest.checkpoint_ts,
                &mut tables,
                &eviction,
            )?;
        }
        let mut segments: Vec<u64> = names
            .iter()
            .filter_map(|n| wal::parse_segment_name(n))
            .collect();
        segments.retain(|&id| id >= manifest.wal_start);
        segments.sort_unstable();
        let mut last_ts = manifest.checkpoint_ts;
        for (i, &id) in segments.iter().enumerate() {
            let name = wal::segment_name(id);
            if i > 0 && id != segments[i - 1] + 1 {
                return Err(Error::corruption(
                    vfs.describe(&name),
                    0,
                    format!("WAL segment {} is missing", segments[i - 1] + 1),
                ));
            }
            let contents = wal::read_segment(&vfs.read(&name)?, &vfs.describe(&name))?;
            if contents.torn_tail {
                report.torn_tail_cut = true;
                vfs.truncate(&name, contents.valid_bytes)?;
            }
            for record in contents.records {
                match record {
                    LogRecord::Catalog(op) => tables.apply_catalog(&op),
                    LogRecord::Commit(commit) if commit.ts > last_ts => {
                        install_into(&tables, &commit, commit.ts)?;
                        tables.evict(commit.ts, &eviction)?;
                        last_ts = commit.ts;
                        report.replayed_commits += 1;
                    }
                    LogRecord::Commit(_) => {}
                }
            }
        }
        for table in &tables.vertex {
            table.rows.gc(last_ts);
        }
        tables.evict(last_ts, &eviction)?;
        for table in &tables.edge {
            table.rows.gc(last_ts);
            table.out.compact_memtables(last_ts);
            table.inc.compact_memtables(last_ts);
            // Changes the WAL replayed raised `U` already; older ones are in the manifest
            // (a manifest from before property columns: assume a change at the checkpoint).
            let recorded = manifest
                .prop_updated
                .iter()
                .find(|(id, _)| *id == table.id)
                .map_or(manifest.checkpoint_ts, |(_, ts)| *ts);
            table.prop_updated_ts.fetch_max(recorded, Ordering::AcqRel);
        }
        sync_indexes(&tables.catalog, &tables.vertex, &tables.edge)?;
        let next_segment = segments.last().map_or(manifest.wal_start, |id| id + 1);
        let wal = Wal::create(
            vfs.clone(),
            next_segment,
            config.wal_segment_max_bytes,
            last_ts,
        )?;
        report.recovered_ts = last_ts;
        let storage = Storage {
            vfs,
            catalog: RwLock::new(Arc::new(tables.catalog)),
            vertex_tables: RwLock::new(tables.vertex),
            edge_tables: RwLock::new(tables.edge),
            schema_version: AtomicU64::new(0),
            catalog_writer: Mutex::new(()),
            catalog_lsn: AtomicU64::new(0),
            wal,
            checkpoint_lock: Mutex::new(()),
            recovered_ts: last_ts,
            config: config.clone(),
            lsm_lock: Mutex::new(()),
            next_run_seq: AtomicU64::new(manifest.next_run_seq.max(1)),
            manifest: Mutex::new(manifest),
            lsm_stats: LsmStats::default(),
            installed_ts: AtomicU64::new(last_ts),
            installed_commits: AtomicU64::new(0),
            vertex_change_ts: AtomicU64::new(0),
            row_cache: tables.cache,
            index_cache: tables.index_cache,
            eviction,
            origins: tables.origins,
        };
        Ok((storage, report))
    }
}

/// Opens every run the manifest lists (verifying each) and deletes run files it does not list
/// (left by a crash between writing a run and publishing the manifest).
fn open_runs(vfs: &dyn Vfs, manifest: &Manifest, names: &[String]) -> Result<RecoveredRuns> {
    let mut recovered = RecoveredRuns::new();
    for (name, seq) in &manifest.runs {
        if !names.contains(name) {
            return Err(Error::corruption(
                vfs.describe(name),
                0,
                "CSR run listed in the manifest is missing",
            ));
        }
        let run = Arc::new(Run::open(vfs, name)?);
        recovered
            .entry((run.meta.edge_table, run.meta.outgoing))
            .or_default()
            .0
            .push((run, *seq));
    }
    for &(table, outgoing, ts) in &manifest.flushed {
        recovered.entry((table, outgoing)).or_default().1 = ts;
    }
    for name in names.iter().filter(|n| n.ends_with(".run")) {
        if !manifest.runs.iter().any(|(listed, _)| listed == name) {
            vfs.remove(name)?;
        }
    }
    Ok(recovered)
}

fn load_checkpoint(
    vfs: &dyn Vfs,
    name: &str,
    ts: Timestamp,
    tables: &mut Tables,
    eviction: &RowEviction,
) -> Result<()> {
    let file = vfs.describe(name);
    let bad_table =
        |t: u32| Error::corruption(&file, 0, format!("checkpoint names unknown table {t}"));
    let mut install = |section: Section| -> Result<()> {
        match section {
            Section::Catalog(ops) => ops.iter().for_each(|op| tables.apply_catalog(op)),
            Section::Origins(positions) => tables.origins.load(positions, ts),
            Section::Vertices {
                table,
                row_count,
                rows,
            } => {
                let t = tables
                    .vertex
                    .get(table as usize)
                    .ok_or_else(|| bad_table(table))?;
                t.rows.ensure_reserved(row_count);
                for (row, labels, props) in rows {
                    t.rows.install_create(row, ts, ts, &labels, &props)?;
                    index_new_vertex(t, row, &labels, &props);
                }
                tables.evict(ts, eviction)?;
            }
            Section::Edges {
                table,
                row_count,
                rows,
            } => {
                let t = tables
                    .edge
                    .get(table as usize)
                    .ok_or_else(|| bad_table(table))?;
                t.rows.ensure_reserved(row_count);
                // The adjacency of these edges is in the CSR runs the manifest lists.
                for (row, src, dst, props) in rows {
                    t.install_create(row, (ts, ts), (src, dst), &props)?;
                }
                tables.evict(ts, eviction)?;
            }
            Section::End { .. } => {}
        }
        Ok(())
    };
    // Sections are read and installed one at a time (one in memory); a damaged one
    // fails the whole open, which drops what was installed.
    let end_ts = checkpoint::read_checkpoint(vfs, name, &mut install)?;
    if end_ts != ts {
        return Err(Error::corruption(
            &file,
            0,
            format!("checkpoint is of ts {end_ts}, the manifest says {ts}"),
        ));
    }
    Ok(())
}
