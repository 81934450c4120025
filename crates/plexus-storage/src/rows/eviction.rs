//! Eviction and spill-file compaction: garbage collection of a table's versions, the clock
//! sweep that evicts cold chunks to the spill file (see EVICTION in the module
//! documentation), and the rounds that move live pages out of old spill files (see
//! COMPACTION in `rowcache`).

use super::*;

impl RowTable {
    // ---- maintenance --------------------------------------------------------------------------

    /// Drops every version no reader at or after `horizon` needs. Evicted chunks have none.
    pub(crate) fn gc(&self, horizon: Timestamp) {
        for (index, slot) in self.chunks.iter() {
            let mut state = slot.state.write();
            if let Some(chunk) = state.chunk.as_mut()
                && chunk.gc(horizon)
            {
                drop(state);
                self.mark_stale(slot, index);
            }
        }
    }

    /// Number of version-chain entries still held (for tests and statistics).
    #[cfg(test)]
    pub(crate) fn version_count(&self) -> usize {
        self.chunks
            .iter()
            .map(|(_, slot)| {
                slot.state.read().chunk.as_ref().map_or(0, |c| {
                    c.chains.values().map(|ch| ch.older.len()).sum::<usize>()
                })
            })
            .sum()
    }

    /// Chunks of this table held in memory, and chunks evicted to the spill file.
    #[cfg(test)]
    pub(crate) fn chunk_residency(&self) -> (usize, usize) {
        let chunks = self.chunks.len();
        let resident = self
            .chunks
            .iter()
            .take(chunks)
            .filter(|(_, slot)| slot.state.read().chunk.is_some())
            .count();
        (resident, chunks - resident)
    }

    /// Re-estimates the size of every chunk written since the last refresh, so the cache's
    /// resident bytes are current (see ACCOUNTING in `rowcache`).
    pub(crate) fn refresh_sizes(&self) {
        let stale = std::mem::take(&mut *self.stale.lock());
        for index in stale {
            let slot = self.chunks.get(index).expect("a stale chunk exists");
            slot.stale.store(false, Ordering::Release);
            let state = slot.state.read();
            if let Some(chunk) = &state.chunk {
                let size = chunk.size_bytes();
                let old = slot.size_bytes.swap(size, Ordering::AcqRel);
                self.cache.account(old, size);
            }
        }
    }

    /// Moves this table's pages of generations below `round.below_generation` to the spill
    /// file being appended to, until the round's budget is spent (see COMPACTION in
    /// `rowcache`). A chunk someone holds keeps its page for a later round. A page that does
    /// not read back is noted in `round.unreadable` and keeps its slot; a failed write of a
    /// copy is returned at once (counted like any spill write error) and the slot keeps its
    /// old page.
    fn move_pages(&self, round: &mut CompactionRound) -> Result<()> {
        for (index, slot) in self.chunks.iter() {
            if round.budget_bytes == 0 {
                break;
            }
            let Some(mut state) = slot.state.try_write() else {
                continue;
            };
            let Some(page) = state
                .page
                .filter(|page| page.generation < round.below_generation)
            else {
                continue;
            };
            let payload = match self.cache.read_page(page, index as u32) {
                Ok(payload) => payload,
                Err(e) => {
                    round.unreadable.get_or_insert(e);
                    continue;
                }
            };
            let moved = self.cache.write_page(index as u32, &payload)?;
            debug_assert!(moved.generation >= round.below_generation);
            self.cache.note_moved(page);
            state.page = Some(moved);
            round.budget_bytes = round.budget_bytes.saturating_sub(u64::from(page.len_bytes));
        }
        Ok(())
    }

    /// One clock sweep (at most two passes over the chunks): evicts cold chunks until the
    /// cache holds at most `target_bytes`, collecting versions below `horizon` on the way.
    /// Returns the number of chunks evicted. A failed spill write stops the sweep with the
    /// error; the chunk concerned stays resident. See EVICTION.
    pub(crate) fn evict(&self, horizon: Timestamp, target_bytes: u64) -> Result<usize> {
        self.sweep(horizon, target_bytes, 2)
    }

    /// A clock sweep of at most `passes` passes: with one pass, every chunk referenced since
    /// the last sweep (the one just loaded, at least) gets its second chance.
    pub(super) fn sweep(
        &self,
        horizon: Timestamp,
        target_bytes: u64,
        passes: usize,
    ) -> Result<usize> {
        if !self.cache.bounded() {
            return Ok(0);
        }
        // The chunk that receives new rows (and any after it) is being written.
        let tail = (self.row_count().saturating_sub(1)) as usize / CHUNK_ROWS;
        let n = self.chunks.len().min(tail);
        if n == 0 {
            return Ok(0);
        }
        let mut hand = self.clock_hand.load(Ordering::Relaxed) % n;
        let mut evicted = 0;
        for _ in 0..passes * n {
            if self.cache.resident_bytes() <= target_bytes {
                break;
            }
            let index = hand;
            hand = (hand + 1) % n;
            let slot = self.chunks.get(index).expect("below the published length");
            if slot.referenced.swap(false, Ordering::AcqRel) {
                continue;
            }
            let outcome = self.evict_chunk(slot, index, horizon);
            self.clock_hand.store(hand, Ordering::Relaxed);
            evicted += usize::from(outcome?);
        }
        self.clock_hand.store(hand, Ordering::Relaxed);
        Ok(evicted)
    }

    /// Evicts one chunk if it is resident, unlatched and cold after collecting its versions
    /// below `horizon`. A clean chunk needs no write: its page still holds it.
    fn evict_chunk(&self, slot: &ChunkSlot, index: usize, horizon: Timestamp) -> Result<bool> {
        // Never evicted while latched: a reader or writer holding the latch keeps it.
        let Some(mut guard) = slot.state.try_write() else {
            return Ok(false);
        };
        let state: &mut ChunkState = &mut guard;
        let Some(chunk) = state.chunk.as_mut() else {
            return Ok(false);
        };
        if chunk.gc(horizon) {
            self.mark_stale(slot, index);
        }
        if !chunk.is_cold() {
            return Ok(false);
        }
        let page = match state.page {
            Some(page) => page,
            None => {
                let payload = chunk.encode(&self.layout);
                self.cache.write_page(index as u32, &payload)?
            }
        };
        state.page = Some(page);
        // Zones are kept while evicted (see `zone`): computed now if not before, while the
        // values are at hand.
        let zones = chunk.zones.take();
        let runs = chunk.existing_runs.take();
        state.existing = Some(Box::new(ExistingRows {
            max_write_ts: chunk.max_write_ts,
            runs: runs.unwrap_or_else(|| true_runs(&chunk.exists).collect()),
            zones: zones.unwrap_or_else(|| chunk.zone_maps(&self.layout)),
        }));
        state.chunk = None;
        let old = slot.size_bytes.swap(0, Ordering::AcqRel);
        self.cache.account(old, 0);
        self.cache.note_eviction();
        Ok(true)
    }
}

/// One round of spill-file compaction over `tables`, which are every table accounting its
/// chunks in `cache` (see COMPACTION in `rowcache`): continues the compaction under way, or
/// starts one as `trigger` asks, moves at most `SPILL_COMPACT_ROUND_MAX_BYTES` (plus one
/// page) of pages, then deletes the files no slot refers to. Returns the dead bytes reclaimed.
/// A failed copy write is returned (first); else a page that did not read back; else a failed
/// delete. Nothing referenced is ever lost: a slot leaves its page only for a verified copy.
pub fn compact_spill(
    cache: &RowCache,
    tables: &[&RowTable],
    trigger: CompactTrigger,
) -> Result<u64> {
    let mut moved = Ok(());
    let mut unreadable = None;
    if let Some(mut round) = cache.begin_round(trigger) {
        moved = tables.iter().try_for_each(|t| {
            debug_assert!(std::ptr::eq(t.cache.as_ref(), cache));
            t.move_pages(&mut round)
        });
        unreadable = round.unreadable;
    }
    let reclaimed_bytes = cache.remove_unreferenced_files();
    moved?;
    if let Some(e) = unreadable {
        return Err(e);
    }
    reclaimed_bytes
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::fault::FaultVfs;
    use crate::vfs::Vfs;

    /// A table of every column kind, over a fault-injecting file system, whose cache wants
    /// every evictable chunk out (budget 1 byte).
    pub(in crate::rows) fn spilling_table() -> (FaultVfs, Arc<RowCache>, RowTable) {
        let vfs = FaultVfs::new();
        let cache = RowCache::open(Arc::new(vfs.clone()), 1).unwrap();
        let def = |key, data_type| PropertyDef { key, data_type };
        let props = [
            def(0, DataType::Bool),
            def(1, DataType::Int64),
            def(2, DataType::Float64),
            def(3, DataType::String),
            def(4, DataType::List),
            def(5, DataType::Map),
            def(6, DataType::String),
            def(7, DataType::Int64),
            // A declared property of any type outside a family: its own column of values.
            def(8, DataType::Any),
        ];
        let table = RowTable::with_cache("t", &props, &[vec![6, 7]], cache.clone());
        (vfs, cache, table)
    }

    /// Row `row`'s labels and properties: every column kind, some nulls, dynamic properties
    /// of several value kinds (keys 20..), and extra labels on some rows.
    fn row_content(row: u32) -> (Vec<LabelId>, Vec<(PropKeyId, Value)>) {
        let i = i64::from(row);
        let mut props = vec![
            (0, Value::Bool(row.is_multiple_of(3))),
            (1, Value::Int(i * 1_000_003 - 7)),
            (2, Value::Float(i as f64 / 3.0)),
            (6, Value::string(&format!("fam{row}"))),
            (
                8,
                match row % 3 {
                    0 => Value::Int(i),
                    1 => Value::string("any"),
                    _ => Value::List(vec![Value::Float(0.25)].into()),
                },
            ),
        ];
        if row % 4 != 1 {
            props.push((3, Value::string(&format!("name-{row}-ü"))));
            props.push((7, Value::Int(-i)));
        }
        if row.is_multiple_of(5) {
            props.push((
                4,
                Value::List(vec![Value::Int(i), Value::string("x"), Value::Null].into()),
            ));
            props.push((
                5,
                Value::Map(vec![(Arc::from("k"), Value::Float(0.5))].into()),
            ));
        }
        if row.is_multiple_of(7) {
            props.push((20, Value::string("dynamic")));
            props.push((21, Value::Temporal(TemporalValue::Date { days: i })));
            props.push((22, Value::List(vec![Value::Bool(true)].into())));
        }
        // Undeclared numbers (typed reads of undeclared keys, typed.rs UNDECLARED).
        if row.is_multiple_of(3) {
            props.push((23, Value::Int(i * 5)));
        }
        if row.is_multiple_of(2) {
            props.push((24, Value::Float(-(i as f64) / 8.0)));
        }
        let labels = match row % 6 {
            0 => vec![9],
            1 => vec![9, 11],
            _ => Vec::new(),
        };
        (labels, props)
    }

    /// The endpoints of row `row` when the tests create it as an edge: the rows without
    /// labels, so every chunk mixes rows with and without endpoints.
    fn row_endpoints(row: u32) -> Option<(u32, u32)> {
        (row % 6 >= 2).then(|| (row.wrapping_mul(2_654_435_761) >> 3, u32::MAX - 1 - row))
    }

    fn fill(t: &RowTable, rows: u32, ts: Timestamp, horizon: Timestamp) {
        for _ in 0..rows {
            let row = t.reserve(u32::MAX).unwrap();
            let (labels, props) = row_content(row);
            match row_endpoints(row) {
                Some(ends) => t.install_create_edge(row, ts, horizon, ends, &props),
                None => t.install_create(row, ts, horizon, &labels, &props),
            }
            .unwrap();
        }
    }

    /// A row, its labels and properties, and its endpoints.
    type RowState = (u32, RowImage, Option<(u32, u32)>);

    /// What a reader at `ts` reads of `row`: its labels, properties and endpoints.
    fn row_state(t: &RowTable, row: u32, ts: Timestamp) -> RowState {
        (row, t.image(row, ts).unwrap(), t.endpoints(row).unwrap())
    }

    fn images(t: &RowTable, ts: Timestamp) -> Vec<RowState> {
        let mut rows = Vec::new();
        t.scan(ts, |row| rows.push(row)).unwrap();
        rows.into_iter().map(|row| row_state(t, row, ts)).collect()
    }

    #[test]
    fn evicted_chunks_read_back_every_column_kind_dynamic_properties_and_labels() {
        let (_vfs, cache, t) = spilling_table();
        let rows = 2 * CHUNK_ROWS as u32 + 5;
        fill(&t, rows, 1, 1);
        let before = images(&t, 1);
        assert_eq!(before.len(), rows as usize);
        for (row, image, ends) in &before {
            let (mut labels, mut props) = row_content(*row);
            labels.sort_unstable();
            props.sort_by_key(|(k, _)| *k);
            assert_eq!(
                (&image.labels, &image.props, *ends),
                (&labels, &props, row_endpoints(*row)),
                "row {row}"
            );
        }
        t.refresh_sizes();
        let full = cache.resident_bytes();
        assert_eq!(
            t.evict(1, 0).unwrap(),
            2,
            "all but the chunk taking new rows"
        );
        assert_eq!(t.chunk_residency(), (1, 2));
        assert!(
            cache.resident_bytes() < full / 2,
            "{} of {full}",
            cache.resident_bytes()
        );
        let stats = cache.stats();
        assert_eq!((stats.evictions, stats.pages_written), (2, 2));
        // Every access path reads the pages back (and a reader's misses evict again).
        assert_eq!(images(&t, 1), before);
        assert!(cache.stats().misses >= 2);
        t.evict(1, 0).unwrap();
        let asked: Vec<u32> = (0..rows).rev().step_by(3).collect();
        let mut got = Vec::new();
        t.prop_many(&asked, 7, 1, &mut |i, v| got.push((asked[i], v)))
            .unwrap();
        for (row, value) in got {
            let want = row_content(row).1.into_iter().find(|(k, _)| *k == 7);
            assert_eq!(value, want.map(|(_, v)| v), "row {row}");
        }
        t.evict(1, 0).unwrap();
        assert_eq!(
            t.retained_values(14, 20).unwrap(),
            vec![Value::string("dynamic")]
        );
        assert_eq!(t.labels(1, 1).unwrap(), vec![9, 11]);
        // Clean chunks are evicted again without writing; a written one gets a new page.
        images(&t, 1);
        t.evict(1, 0).unwrap();
        assert_eq!(t.chunk_residency(), (1, 2));
        assert_eq!(cache.stats().pages_written, 2, "clean pages are reused");
        t.install_prop(3, 2, 2, 20, Some(Value::Int(5))).unwrap();
        t.install_labels(3, 2, 2, &[11]).unwrap();
        assert_eq!(t.chunk_residency(), (2, 1));
        assert!(cache.stats().dead_bytes > 0);
        assert_eq!(t.evict(2, 0).unwrap(), 1);
        assert_eq!(cache.stats().pages_written, 3);
        assert_eq!(t.prop(3, 20, 2).unwrap(), Some(Value::Int(5)));
        assert_eq!(t.labels(3, 2).unwrap(), vec![11]);
        assert_eq!(images(&t, 2)[4..], images(&t, 1)[4..]);
    }

    /// A scan lists an evicted chunk's rows from the ranges its slot kept at eviction,
    /// without reading the page; a write loads the chunk (the ranges are dropped) and the
    /// next eviction keeps the new ones.
    #[test]
    fn scans_list_evicted_chunks_without_loading_them() {
        let (_vfs, cache, t) = spilling_table();
        let rows = 2 * CHUNK_ROWS as u32 + 5;
        fill(&t, rows, 1, 1);
        let chunk = CHUNK_ROWS as u32;
        for row in [5, 6, 7, chunk - 1, chunk + 3] {
            t.install_delete(row, 2, 2).unwrap();
        }
        let scanned = |ts| {
            let mut runs = Vec::new();
            t.scan_ranges(ts, |run| runs.push(run)).unwrap();
            runs
        };
        let resident = scanned(3);
        let expected = vec![
            0..5,
            8..chunk - 1,
            chunk..chunk + 3,
            chunk + 4..2 * chunk,
            2 * chunk..rows,
        ];
        assert_eq!(resident, expected);
        assert_eq!(
            t.evict(2, 0).unwrap(),
            2,
            "all but the chunk taking new rows"
        );
        let misses = cache.stats().misses;
        assert_eq!(scanned(3), expected);
        assert_eq!(cache.stats().misses, misses, "no page read");
        assert_eq!(t.chunk_residency(), (1, 2));
        // A delete loads chunk 0; evicted again, its new ranges.
        t.install_delete(0, 4, 4).unwrap();
        assert_eq!(t.chunk_residency(), (2, 1));
        assert_eq!(t.evict(4, 0).unwrap(), 1);
        let misses = cache.stats().misses;
        let mut after = expected.clone();
        after[0] = 1..5;
        assert_eq!(scanned(5), after);
        assert_eq!(cache.stats().misses, misses);
        // What a loaded chunk answers is the same.
        images(&t, 5);
        assert_eq!(scanned(5), after);
    }

    /// Typed bulk reads of evicted chunks come from their pages without loading them, and
    /// answer what the resident chunks answered: every typed kind, strings with rows that
    /// have none, undeclared keys alone and with others, declared keys together (one walk),
    /// rows in order and scattered, a deleted row (no answer), a chunk written
    /// after the reader (loaded as before), a corrupt page (an error naming the file).
    #[test]
    fn typed_reads_of_evicted_chunks_read_their_pages_without_loading() {
        let (vfs, cache, t) = spilling_table();
        let rows = 2 * CHUNK_ROWS as u32 + 5;
        fill(&t, rows, 1, 1);
        t.install_delete(7, 2, 2).unwrap();
        let in_order: Vec<u32> = (0..rows).filter(|&r| r != 7).collect();
        let scattered: Vec<u32> = (0..500)
            .map(|i| (i * 2053 + 3) % rows)
            .filter(|&r| r != 7)
            .collect();
        let with_deleted: Vec<u32> = (0..20).collect();
        let lists = [
            &in_order[..],
            &scattered[..],
            &with_deleted[..],
            &[CHUNK_ROWS as u32 + 1],
        ];
        // Declared columns, then undeclared keys (strings, temporals, integers, floats), then
        // undeclared and declared keys read together.
        let keys = [0, 1, 2, 3, 7, 8, 20, 21, 23, 24];
        let read_all = || {
            let mut answers = Vec::new();
            for key in keys {
                for rows in lists {
                    answers.push(t.typed_prop_many(rows, key, 3, true).unwrap());
                }
            }
            for rows in lists {
                answers.extend(t.typed_props_many(rows, &[23, 20, 1, 24], 3, true).unwrap());
                answers.extend(t.typed_props_many(rows, &[0, 1, 2, 3], 3, true).unwrap());
            }
            answers
        };
        let resident = read_all();
        let together = t.typed_props_many(&in_order, &[0, 1, 2, 3], 3, true);
        assert!(
            together.unwrap().iter().all(Option::is_some),
            "declared keys together"
        );
        assert!(
            resident[0].is_some() && resident[2].is_none(),
            "typed, and a deleted row"
        );
        let undeclared = |key: usize| &resident[key * lists.len()..][..lists.len()];
        assert!(
            undeclared(6)[0].is_some() && undeclared(7)[0].is_none(),
            "strings, dates"
        );
        assert!(
            undeclared(8)[1].is_some() && undeclared(9)[0].is_some(),
            "ints, floats"
        );
        assert_eq!(
            t.evict(3, 0).unwrap(),
            2,
            "all but the chunk taking new rows"
        );
        let misses = cache.stats().misses;
        assert_eq!(read_all(), resident);
        assert_eq!(t.chunk_residency(), (1, 2), "nothing loaded");
        assert!(cache.stats().misses > misses, "pages read");
        // Written after the reader's snapshot: loaded and read through its versions.
        t.install_prop(CHUNK_ROWS as u32 + 1, 5, 0, 1, Some(Value::Int(-5)))
            .unwrap();
        assert_eq!(read_all(), resident);
        // A damaged page: the read is an error naming the file, not data.
        t.evict(5, 0).unwrap();
        let file = crate::rowcache::spill_name(1);
        vfs.corrupt(&file, 100, &[0xFF, 0x00, 0xAB]).unwrap();
        for key in [1, 23] {
            let err = t.typed_prop_many(&in_order, key, 6, false).unwrap_err();
            assert!(matches!(err, Error::Corruption { .. }), "{err}");
            assert!(err.to_string().contains(&file), "{err}");
        }
    }

    /// Undeclared keys most rows hold with numbers (or booleans) of one type are a page's
    /// columns (page.rs, UNDECLARED COLUMNS); the rest stay per row; a load rebuilds every
    /// row's list from both.
    #[test]
    fn pages_hold_common_numeric_undeclared_keys_as_columns() {
        let (_vfs, _cache, t) = spilling_table();
        let mut chunk = Chunk::new(&t.layout);
        for row in 0..CHUNK_ROWS {
            let mut set = |key, value| {
                let write = (Slot::Prop(key), SlotValue::Prop(Some(value)));
                chunk.write_in_place(&t.layout, row, write);
            };
            let i = row as i64;
            set(30, Value::Int(i - 7)); // every row: a column
            if row % 2 == 0 {
                set(31, Value::Bool(row % 4 == 0)); // half the rows: a column
            }
            if row % 3 == 0 {
                set(32, Value::Float(i as f64)); // a third: per row
            }
            set(33, Value::string("s")); // strings: per row
            let mixed = if row == 9 {
                Value::Float(0.5)
            } else {
                Value::Int(i)
            };
            set(34, mixed); // an integer column but for one float: per row
        }
        let columns = chunk.dynamic_columns();
        let keys: Vec<PropKeyId> = columns.iter().map(|(key, _)| *key).collect();
        assert_eq!(keys, [30, 31]);
        assert!(matches!(columns[0].1.data, ColumnData::Int64(_)));
        assert!(matches!(columns[1].1.data, ColumnData::Bool(_)));
        let decoded = Chunk::decode(&t.layout, &chunk.encode(&t.layout)).unwrap();
        for row in [0, 1, 2, 3, 9, CHUNK_ROWS - 1] {
            for key in 30..=34 {
                assert_eq!(
                    decoded.dynamic_prop(row, key),
                    chunk.dynamic_prop(row, key),
                    "row {row} key {key}"
                );
            }
        }
    }

    /// Endpoints are a column of the chunk: counted in its size, spilled with it, read back
    /// for created rows (deleted ones too), `None` for holes; a damaged page is an error.
    #[test]
    fn endpoints_are_spilled_with_their_chunk_and_counted_in_its_size() {
        let (vfs, cache, t) = spilling_table();
        let mut chunk = Chunk::new(&t.layout);
        let bare_bytes = chunk.size_bytes();
        chunk.set_endpoints(5, (1, 2));
        let edge_bytes = (CHUNK_ROWS * size_of::<(u32, u32)>()) as u64;
        assert_eq!(chunk.size_bytes(), bare_bytes + edge_bytes);
        // What stays resident of an evicted chunk (docs/design/storage.md says under 100 B).
        assert!(size_of::<OnceLock<ChunkSlot>>() < 100);
        assert_eq!(
            Chunk::decode(&t.layout, &chunk.encode(&t.layout))
                .unwrap()
                .endpoints,
            chunk.endpoints
        );
        // Rows 0..2 chunks + 1: every 5th a hole, every 7th created and then deleted.
        let rows = 2 * CHUNK_ROWS as u32 + 1;
        let created = |row: u32| row < rows && !row.is_multiple_of(5);
        let want = |row: u32| created(row).then_some((row / 3, row ^ 0x5555));
        for row in 0..rows {
            assert_eq!(t.reserve(u32::MAX).unwrap(), row);
            if let Some(ends) = want(row) {
                t.install_create_edge(row, 1, 1, ends, &[]).unwrap();
            }
        }
        for row in (0..rows).step_by(7) {
            if want(row).is_some() {
                t.install_delete(row, 2, 2).unwrap();
            }
        }
        t.refresh_sizes();
        assert!(cache.resident_bytes() >= 3 * (bare_bytes + edge_bytes));
        assert_eq!(t.evict(2, 0).unwrap(), 2);
        assert_eq!(
            cache.resident_bytes(),
            bare_bytes + edge_bytes,
            "only the chunk taking new rows"
        );
        for row in 0..rows + 3 {
            assert_eq!(t.endpoints(row).unwrap(), want(row), "row {row}");
            let exists = created(row) && !row.is_multiple_of(7);
            assert_eq!(t.exists(row, 2).unwrap(), exists, "row {row}");
        }
        assert!(cache.stats().misses >= 2);
        // A damaged page: the endpoints of its rows are an error naming the file, never data.
        t.evict(2, 0).unwrap();
        let page = t.slot(0).unwrap().state.read().page.unwrap();
        let file = crate::rowcache::spill_name(page.generation);
        let end = (page.offset + u64::from(page.len_bytes)) as usize;
        vfs.corrupt(&file, end - 20, &[0xAB]).unwrap();
        let err = t.endpoints(1).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
        assert!(err.to_string().contains(&file), "{err}");
        assert_eq!(
            t.endpoints(CHUNK_ROWS as u32 + 1).unwrap(),
            want(CHUNK_ROWS as u32 + 1)
        );
    }

    #[test]
    fn chunks_with_versions_stay_until_no_reader_needs_them() {
        let (_vfs, _cache, t) = spilling_table();
        fill(&t, CHUNK_ROWS as u32 + 1, 1, 0);
        // Created after the horizon (0): the creation timestamps keep the chunk resident.
        assert_eq!(t.evict(0, 0).unwrap(), 0);
        assert!(!t.exists(5, 0).unwrap() && t.exists(5, 1).unwrap());
        t.install_prop(5, 3, 0, 1, Some(Value::Int(-1))).unwrap();
        t.install_delete(6, 4, 0).unwrap();
        // A reader at 2 still needs the chains: GC at horizon 2 keeps them, nothing evicted.
        assert_eq!(t.evict(2, 0).unwrap(), 0);
        assert_eq!(t.chunk_residency(), (2, 0));
        assert_eq!(
            t.prop(5, 1, 2).unwrap(),
            row_content(5).1[1].1.clone().into()
        );
        assert!(t.exists(6, 3).unwrap());
        // Once the horizon passes every write, the chunk is cold and goes.
        assert_eq!(t.evict(4, 0).unwrap(), 1);
        assert_eq!(t.prop(5, 1, 4).unwrap(), Some(Value::Int(-1)));
        assert!(!t.exists(6, 4).unwrap());
        assert!(t.exists(7, 4).unwrap());
        assert_eq!(t.version_count(), 0);
    }

    #[test]
    fn a_latched_chunk_is_not_evicted() {
        let (_vfs, _cache, t) = spilling_table();
        fill(&t, CHUNK_ROWS as u32 + 1, 1, 1);
        let slot = t.slot(0).unwrap();
        let latch = t.latch_read(slot, 0).unwrap().0;
        assert_eq!(t.evict(1, 0).unwrap(), 0);
        drop(latch);
        assert_eq!(t.evict(1, 0).unwrap(), 1);
    }

    #[test]
    fn a_corrupt_or_truncated_spill_page_is_an_error_naming_the_file_never_data() {
        let (vfs, _cache, t) = spilling_table();
        fill(&t, 2 * CHUNK_ROWS as u32 + 1, 1, 1);
        assert_eq!(t.evict(1, 0).unwrap(), 2);
        let file = crate::rowcache::spill_name(1);
        let page = |row: u32| t.slot(row).unwrap().state.read().page.unwrap();
        let (first, second) = (page(0), page(CHUNK_ROWS as u32));
        assert_eq!(
            (first.offset, second.offset),
            (0, u64::from(first.len_bytes))
        );
        let page_len = first.len_bytes as usize;
        // A flipped byte in the second page's payload.
        vfs.corrupt(&file, page_len + 100, &[0xFF, 0x00, 0xAB])
            .unwrap();
        let err = t.prop(CHUNK_ROWS as u32, 1, 1).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Corruption { .. }), "{text}");
        assert!(text.contains(&file) && text.contains("checksum"), "{text}");
        assert!(text.contains(&format!("byte {}", page_len + 12)), "{text}");
        // A scan reads no page (the slots keep which rows exist, see EVICTION): it lists
        // every row, and reading one of the damaged page's reports the corruption.
        let mut visited = 0;
        t.scan(1, |_| visited += 1).unwrap();
        assert_eq!(visited, 2 * CHUNK_ROWS + 1);
        assert!(t.image(CHUNK_ROWS as u32 + 1, 1).is_err());
        // The first page is intact.
        assert_eq!(
            t.prop(3, 1, 1).unwrap(),
            Some(Value::Int(3 * 1_000_003 - 7))
        );
        // A truncated file: the first page is cut short.
        t.evict(1, 0).unwrap();
        vfs.truncate(&file, page_len as u64 / 2).unwrap();
        let text = t.prop(0, 1, 1).unwrap_err().to_string();
        assert!(text.contains(&file) && text.contains("truncated"), "{text}");
        assert!(text.contains("byte 0"), "{text}");
    }

    #[test]
    fn a_failed_spill_write_keeps_the_chunk_and_loses_nothing() {
        let (vfs, cache, t) = spilling_table();
        fill(&t, 2 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        vfs.fail_writes_after(1);
        assert!(t.evict(1, 0).is_err());
        assert_eq!(t.chunk_residency(), (3, 0));
        assert_eq!(cache.stats().spill_write_errors, 1);
        assert_eq!(images(&t, 1), before);
        // Writes work again: a new spill file takes the pages.
        vfs.fail_writes_after(u64::MAX);
        assert_eq!(t.evict(1, 0).unwrap(), 2);
        assert!(vfs.exists(&crate::rowcache::spill_name(2)));
        assert_eq!(images(&t, 1), before);
    }

    // ---- spill-file compaction -----------------------------------------------------------

    use crate::rowcache::spill_name;

    fn page_of(t: &RowTable, chunk: usize) -> Option<PageRef> {
        t.slot((chunk * CHUNK_ROWS) as u32)
            .unwrap()
            .state
            .read()
            .page
    }

    /// Rewrites property 1 of a row of `chunk` with the value it holds (at `ts`, collected at
    /// once): the rows read the same, but the chunk's page is dead.
    fn rewrite_in_place(t: &RowTable, chunk: usize, ts: Timestamp) {
        let row = (chunk * CHUNK_ROWS) as u32 + 1;
        let value = t.prop(row, 1, ts).unwrap();
        t.install_prop(row, ts, ts, 1, value).unwrap();
    }

    fn spill_files(vfs: &FaultVfs) -> Vec<String> {
        let names = vfs.list().unwrap();
        names
            .into_iter()
            .filter(|n| n.ends_with(".spill"))
            .collect()
    }

    /// Four evictable chunks spilled to generation 1, chunks 0 and 1 then written (dead pages,
    /// new pages in generation 1 again) and chunk 2 read back (clean, resident).
    fn table_with_dead_pages() -> (FaultVfs, Arc<RowCache>, RowTable, Vec<RowState>) {
        let (vfs, cache, t) = spilling_table();
        fill(&t, 4 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        assert_eq!(t.evict(1, 0).unwrap(), 4);
        rewrite_in_place(&t, 0, 2);
        rewrite_in_place(&t, 1, 2);
        assert_eq!(t.evict(2, 0).unwrap(), 2);
        assert!(t.prop((2 * CHUNK_ROWS) as u32, 1, 2).unwrap().is_some());
        assert_eq!(
            t.chunk_residency(),
            (2, 3),
            "chunk 2 read back and still clean"
        );
        assert!(page_of(&t, 2).is_some());
        (vfs, cache, t, before)
    }

    #[test]
    fn compaction_moves_every_live_page_and_deletes_the_old_file() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let stats = cache.stats();
        let referenced_bytes = |t: &RowTable| {
            (0..4)
                .map(|chunk| u64::from(page_of(t, chunk).unwrap().len_bytes))
                .sum::<u64>()
        };
        assert_eq!(stats.live_bytes, referenced_bytes(&t), "{stats:?}");
        assert_eq!(
            stats.live_bytes + stats.dead_bytes,
            stats.spill_bytes_written
        );
        assert!(stats.dead_bytes > 0, "{stats:?}");
        assert_eq!(spill_files(&vfs), vec![spill_name(1)]);
        // Below the minimum: maintenance leaves it; an explicit compaction runs.
        assert_eq!(
            compact_spill(&cache, &[&t], CompactTrigger::WhenDue).unwrap(),
            0
        );
        assert_eq!(cache.stats().spill_compactions, 0);
        let file_bytes = stats.live_bytes + stats.dead_bytes;
        assert_eq!(
            compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap(),
            file_bytes
        );
        let after = cache.stats();
        assert_eq!(
            spill_files(&vfs),
            vec![spill_name(2)],
            "the old file is deleted"
        );
        assert_eq!(after.dead_bytes, 0);
        assert_eq!(after.live_bytes, stats.live_bytes);
        assert_eq!(after.live_bytes, referenced_bytes(&t));
        assert_eq!(after.spill_bytes_copied, stats.live_bytes);
        assert_eq!(after.spill_bytes_reclaimed, file_bytes);
        assert_eq!((after.spill_files, after.spill_compactions), (1, 1));
        for chunk in 0..4 {
            assert_eq!(page_of(&t, chunk).unwrap().generation, 2, "chunk {chunk}");
        }
        assert_eq!(t.chunk_residency(), (2, 3), "compaction loads nothing");
        assert_eq!(images(&t, 2), before);
        // The clean chunk's copy is its page: evicting it again writes nothing.
        let written = cache.stats().pages_written;
        t.evict(2, 0).unwrap();
        assert_eq!(cache.stats().pages_written, written);
        assert_eq!(images(&t, 2), before);
    }

    #[test]
    fn a_latched_chunk_keeps_its_page_and_its_file_until_a_later_round() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let slot = t.slot(3 * CHUNK_ROWS as u32).unwrap();
        let latch = t.latch_read(slot, 3).unwrap().0;
        compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        assert_eq!(page_of(&t, 3).unwrap().generation, 1);
        assert_eq!(page_of(&t, 0).unwrap().generation, 2);
        assert_eq!(spill_files(&vfs), vec![spill_name(1), spill_name(2)]);
        assert_eq!(cache.stats().spill_compactions, 0);
        assert_eq!(images(&t, 2)[..CHUNK_ROWS], before[..CHUNK_ROWS]);
        drop(latch);
        // The compaction under way continues without a new trigger.
        compact_spill(&cache, &[&t], CompactTrigger::WhenDue).unwrap();
        assert_eq!(spill_files(&vfs), vec![spill_name(2)]);
        assert_eq!(cache.stats().spill_compactions, 1);
        assert_eq!(images(&t, 2), before);
    }

    #[test]
    fn readers_during_compaction_see_every_row() {
        let (_vfs, cache, t) = spilling_table();
        fill(&t, 4 * CHUNK_ROWS as u32 + 1, 1, 1);
        let before = images(&t, 1);
        t.evict(1, 0).unwrap();
        const ROUNDS: u64 = 12;
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let mut passes = 0;
                        while passes == 0 || !done.load(Ordering::Acquire) {
                            assert_eq!(images(&t, Timestamp::MAX), before);
                            passes += 1;
                        }
                        passes
                    })
                })
                .collect();
            for round in 0..ROUNDS {
                let ts = 2 + round;
                rewrite_in_place(&t, (round % 4) as usize, ts);
                while t.evict(ts, 0).is_err() {}
                compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
            }
            done.store(true, Ordering::Release);
            for reader in readers {
                assert!(reader.join().unwrap() > 0);
            }
        });
        // Latched chunks may have kept pages back: later rounds finish the compaction.
        while cache.stats().dead_bytes > 0 {
            compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        }
        let stats = cache.stats();
        assert!(stats.spill_compactions >= 1, "{stats:?}");
        assert_eq!(stats.spill_files, 1, "{stats:?}");
        assert_eq!(images(&t, Timestamp::MAX), before);
    }

    #[test]
    fn a_corrupt_page_met_by_compaction_is_an_error_naming_the_file_and_stays_referenced() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let damaged = page_of(&t, 3).unwrap();
        let file = spill_name(1);
        vfs.corrupt(&file, damaged.offset as usize + 200, &[0xEE, 0x11])
            .unwrap();
        let err = compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Corruption { .. }), "{text}");
        assert!(text.contains(&file) && text.contains("checksum"), "{text}");
        assert!(
            text.contains(&format!("byte {}", damaged.offset + 12)),
            "{text}"
        );
        // Never copied, never dropped: the chunk still refers to it and its reads still fail.
        assert_eq!(page_of(&t, 3), Some(damaged));
        assert!(vfs.exists(&file));
        let read = t.prop(3 * CHUNK_ROWS as u32, 1, 2).unwrap_err().to_string();
        assert!(read.contains(&file) && read.contains("checksum"), "{read}");
        // The other pages moved and read back.
        for chunk in 0..3 {
            assert_eq!(page_of(&t, chunk).unwrap().generation, 2, "chunk {chunk}");
        }
        let mut rows = Vec::new();
        for row in 0..3 * CHUNK_ROWS as u32 {
            rows.push(row_state(&t, row, 2));
        }
        assert_eq!(rows, before[..3 * CHUNK_ROWS]);
        assert_eq!(cache.stats().spill_compactions, 0);
        assert!(compact_spill(&cache, &[&t], CompactTrigger::Now).is_err());
    }

    #[test]
    fn a_failed_write_during_compaction_loses_nothing() {
        let (vfs, cache, t, before) = table_with_dead_pages();
        let pages: Vec<_> = (0..4).map(|chunk| page_of(&t, chunk)).collect();
        let errors = cache.stats().spill_write_errors;
        vfs.fail_writes_after(1);
        let err = compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap_err();
        assert!(err.to_string().contains("injected"), "{err}");
        assert_eq!(cache.stats().spill_write_errors, errors + 1);
        assert_eq!(
            (0..4).map(|chunk| page_of(&t, chunk)).collect::<Vec<_>>(),
            pages
        );
        assert!(vfs.exists(&spill_name(1)));
        assert_eq!(images(&t, 2), before);
        // The disk works again: the next round finishes, in a new file.
        vfs.fail_writes_after(u64::MAX);
        compact_spill(&cache, &[&t], CompactTrigger::Now).unwrap();
        let stats = cache.stats();
        assert_eq!(
            (stats.spill_compactions, stats.dead_bytes),
            (1, 0),
            "{stats:?}"
        );
        assert_eq!(
            spill_files(&vfs),
            vec![spill_name(3)],
            "1 and the failed 2 are gone"
        );
        assert_eq!(images(&t, 2), before);
    }
}
