//! `IndexMap`: one bounded-memory map from keys to rows — its resident part, the part frozen
//! while it is written as a run (see FAILURES), and its runs; lookups and range scans merge
//! them; spills and the merges of runs (see MERGES).

use super::*;

/// One map's parts (see WHAT).
pub(super) struct MapState {
    pub(super) resident: Resident,
    pub(super) resident_bytes: u64,
    /// The resident part being written as a run (see FAILURES); still read by lookups.
    pub(super) frozen: Option<Arc<Resident>>,
    pub(super) frozen_bytes: u64,
    pub(super) runs: Vec<Arc<IndexRun>>,
    /// Runs written from this map's resident part.
    pub(super) spills: u64,
}

/// Figures of one map, for tests.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapStats {
    pub resident_keys: u64,
    pub resident_bytes: u64,
    pub runs: u64,
    /// Entries (key, row) in the runs, stale ones included.
    pub run_entries: u64,
    pub spills: u64,
}

/// A bounded-memory map from keys to rows (see the module documentation).
pub struct IndexMap {
    pub(super) cache: Arc<IndexCache>,
    pub(super) kind: MapKind,
    pub(super) state: RwLock<MapState>,
    /// The resident part's bytes, readable without the latch (to pick the largest).
    pub(super) spillable_bytes: AtomicU64,
    /// One spill or merge of this map at a time (taken before `state`).
    pub(super) writing: Mutex<()>,
}

impl Drop for IndexMap {
    fn drop(&mut self) {
        let state = self.state.get_mut();
        self.cache.shrink(state.resident_bytes + state.frozen_bytes);
    }
}

impl IndexMap {
    #[cfg(test)]
    pub fn kind(&self) -> MapKind {
        self.kind
    }

    /// Makes room in the resident part for `additional` more keys (a hashed map: a bulk
    /// install of that many keys then grows its table once, not by doubling — each doubling
    /// moved every entry into fresh, zeroed pages). An ordered map has nothing to reserve.
    pub fn reserve(&self, additional: usize) {
        self.state.write().resident.reserve(additional);
    }

    /// Notes that `row` held `key`. May spill (this or another map) if the cache is over its
    /// budget, after releasing this map's latch.
    pub fn insert(&self, key: &[u8], row: u32) {
        self.insert_many(&[(key, row)]);
    }

    /// Notes that each `(key, row)` held: [`insert`](Self::insert) for many entries (a bulk
    /// install), the latch taken and the budget checked once per `INSERT_BATCH_ENTRIES`.
    pub fn insert_many<K: AsRef<[u8]>>(&self, entries: &[(K, u32)]) {
        for batch in entries.chunks(INSERT_BATCH_ENTRIES) {
            {
                let mut state = self.state.write();
                let grown: u64 = (batch.iter())
                    .map(|(key, row)| state.resident.insert(key.as_ref(), *row))
                    .sum();
                if grown > 0 {
                    state.resident_bytes += grown;
                    self.spillable_bytes
                        .store(state.resident_bytes, Ordering::Release);
                    self.cache.grow(grown);
                }
            }
            self.cache.relieve();
        }
    }

    /// The rows listed under `key`, ascending, each once.
    pub fn get(&self, key: &[u8]) -> Result<Vec<u32>> {
        let (mut rows, runs, merged) = {
            let state = self.state.read();
            let mut rows = (state.resident.get(key)).map_or_else(Vec::new, <[u32]>::to_vec);
            if let Some(frozen) = &state.frozen
                && let Some(more) = frozen.get(key)
            {
                rows.extend_from_slice(more);
            }
            let merged = state.frozen.is_some() || !state.runs.is_empty();
            (rows, state.runs.clone(), merged)
        };
        for run in &runs {
            if run.may_hold(key) {
                run.scan(&ByteRange::point(key), &mut |_, more| {
                    rows.extend_from_slice(more)
                })?;
            }
        }
        if merged {
            rows.sort_unstable();
            rows.dedup();
        }
        Ok(rows)
    }

    /// The rows listed under the keys of `range`: key by key in key order, each key's rows
    /// ascending and each once (a row listed under two keys appears twice).
    pub fn range(&self, range: &ByteRange) -> Result<Vec<u32>> {
        let mut found = Vec::new();
        let mut by_key: BTreeMap<Box<[u8]>, Vec<u32>> = BTreeMap::new();
        let runs = {
            let state = self.state.read();
            if state.frozen.is_none() && state.runs.is_empty() {
                state
                    .resident
                    .range(range, &mut |_, rows| found.extend_from_slice(rows));
                return Ok(found);
            }
            let mut gather = |key: &[u8], rows: &[u32]| {
                by_key
                    .entry(key.into())
                    .or_default()
                    .extend_from_slice(rows)
            };
            state.resident.range(range, &mut gather);
            if let Some(frozen) = &state.frozen {
                frozen.range(range, &mut gather);
            }
            state.runs.clone()
        };
        for run in &runs {
            run.scan(range, &mut |key, rows| {
                by_key
                    .entry(key.into())
                    .or_default()
                    .extend_from_slice(rows)
            })?;
        }
        for (_, mut rows) in by_key {
            rows.sort_unstable();
            rows.dedup();
            found.extend(rows);
        }
        Ok(found)
    }

    /// An estimate of the distinct keys: those of the resident part, the frozen part and
    /// every run, summed — a key in several parts counts once per part (so it overestimates
    /// after spills, by at most the number of parts; exact while nothing is spilled).
    pub fn distinct_keys(&self) -> u64 {
        let state = self.state.read();
        state.resident.len() as u64
            + state.frozen.as_ref().map_or(0, |f| f.len() as u64)
            + state.runs.iter().map(|r| r.keys).sum::<u64>()
    }

    /// Removes the resident entries `(key, row)` for which `holds` is false; returns how many
    /// were removed. `holds` is asked again, with the latch held for writing, before each
    /// removal (a commit may have installed the value again meanwhile). Entries in runs and
    /// in a part being spilled stay (see MERGES).
    pub fn prune(&self, holds: impl Fn(&[u8], u32) -> bool) -> usize {
        let mut stale: Vec<(Box<[u8]>, u32)> = Vec::new();
        self.state.read().resident.for_each(&mut |key, rows| {
            let gone = rows.iter().filter(|&&row| !holds(key, row));
            stale.extend(gone.map(|&row| (key.into(), row)));
        });
        if stale.is_empty() {
            return 0;
        }
        let mut state = self.state.write();
        let mut removed = 0;
        for (key, row) in stale {
            if holds(&key, row) {
                continue;
            }
            if let Some(freed) = state.resident.remove(&key, row) {
                removed += 1;
                state.resident_bytes -= freed;
                self.cache.shrink(freed);
            }
        }
        self.spillable_bytes
            .store(state.resident_bytes, Ordering::Release);
        removed
    }

    #[cfg(test)]
    pub fn stats(&self) -> MapStats {
        let state = self.state.read();
        MapStats {
            resident_keys: state.resident.len() as u64,
            resident_bytes: state.resident_bytes + state.frozen_bytes,
            runs: state.runs.len() as u64,
            run_entries: state.runs.iter().map(|r| r.entries).sum(),
            spills: state.spills,
        }
    }

    /// Writes the resident part as a run and drops it from memory (see FAILURES), then
    /// merges runs while due (see MERGES). Returns whether a run was written (`false`:
    /// nothing resident). A failed merge is counted (`merge_errors`), not returned: the
    /// spilled entries are in their run either way, and the next spill tries the merge again.
    pub fn spill(&self) -> Result<bool> {
        let spilled = self.spill_resident()?;
        if spilled {
            let _ = self.merge_while_due();
        }
        Ok(spilled)
    }

    fn spill_resident(&self) -> Result<bool> {
        let _one_at_a_time = self.writing.lock();
        let frozen = {
            let mut state = self.state.write();
            if state.resident.len() == 0 {
                return Ok(false);
            }
            let part = std::mem::replace(&mut state.resident, Resident::new(self.kind));
            let frozen = Arc::new(part);
            state.frozen = Some(frozen.clone());
            state.frozen_bytes = std::mem::take(&mut state.resident_bytes);
            self.spillable_bytes.store(0, Ordering::Release);
            frozen
        };
        let written = self
            .cache
            .write_run(self.kind, 0, frozen.len() as u64, |writer| {
                for (key, rows) in frozen.sorted() {
                    for &row in rows {
                        writer.push(key.bytes(), row)?;
                    }
                }
                Ok(())
            });
        let mut state = self.state.write();
        state.frozen = None;
        let frozen_bytes = std::mem::take(&mut state.frozen_bytes);
        match written {
            Ok(run) => {
                self.cache.shrink(frozen_bytes);
                self.cache.spills.fetch_add(1, Ordering::Relaxed);
                self.cache
                    .spill_bytes_written
                    .fetch_add(run.file_bytes, Ordering::Relaxed);
                state.runs.push(Arc::new(run));
                state.spills += 1;
                Ok(true)
            }
            Err(e) => {
                // Back into the resident part: nothing is lost.
                let mut grown = 0;
                frozen.for_each(&mut |key, rows| {
                    for &row in rows {
                        grown += state.resident.insert(key, row);
                    }
                });
                state.resident_bytes += grown;
                self.cache.grow(grown);
                self.cache.shrink(frozen_bytes);
                self.spillable_bytes
                    .store(state.resident_bytes, Ordering::Release);
                self.cache
                    .spill_write_errors
                    .fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Merges runs while the rule of MERGES asks for it. Returns how many merges ran; a
    /// failure is counted and returned (its inputs stay).
    pub fn merge_while_due(&self) -> Result<usize> {
        let mut merges = 0;
        loop {
            let due = {
                let state = self.state.read();
                due_merge(&state.runs)
            };
            let Some((inputs, level)) = due else {
                return Ok(merges);
            };
            self.merge(inputs, level)?;
            merges += 1;
        }
    }

    /// Merges every run into one, if there are at least two (tests, tools). Returns whether
    /// it merged.
    #[cfg(test)]
    pub fn merge_all(&self) -> Result<bool> {
        let (inputs, level) = {
            let state = self.state.read();
            let level = state.runs.iter().map(|r| r.level).max().unwrap_or(0) + 1;
            (state.runs.clone(), level)
        };
        if inputs.len() < 2 {
            return Ok(false);
        }
        self.merge(inputs, level)?;
        Ok(true)
    }

    /// Merges `inputs` (runs of this map) into one run of `level`, which replaces them.
    pub(super) fn merge(&self, inputs: Vec<Arc<IndexRun>>, level: u32) -> Result<()> {
        let _one_at_a_time = self.writing.lock();
        {
            // Another merge may have replaced some inputs meanwhile.
            let state = self.state.read();
            let present = |run: &Arc<IndexRun>| state.runs.iter().any(|r| Arc::ptr_eq(r, run));
            if !inputs.iter().all(present) {
                return Ok(());
            }
        }
        let expected_keys = inputs.iter().map(|r| r.keys).sum();
        let written = self
            .cache
            .write_run(self.kind, level, expected_keys, |writer| {
                merge_into(&inputs, writer)
            });
        let merged = match written {
            Ok(run) => run,
            Err(e) => {
                self.cache.merge_errors.fetch_add(1, Ordering::Relaxed);
                return Err(e);
            }
        };
        self.cache.merges.fetch_add(1, Ordering::Relaxed);
        self.cache
            .merge_bytes_written
            .fetch_add(merged.file_bytes, Ordering::Relaxed);
        let mut state = self.state.write();
        state
            .runs
            .retain(|run| !inputs.iter().any(|input| Arc::ptr_eq(run, input)));
        state.runs.push(Arc::new(merged));
        Ok(())
    }
}

/// The runs to merge next and the level of the result, if any (see MERGES).
fn due_merge(runs: &[Arc<IndexRun>]) -> Option<(Vec<Arc<IndexRun>>, u32)> {
    let top = runs.iter().map(|r| r.level).max()?;
    if runs.len() > MAX_RUNS_PER_MAP {
        return Some((runs.to_vec(), top + 1));
    }
    (0..=top).find_map(|level| {
        let of_level: Vec<Arc<IndexRun>> = (runs.iter())
            .filter(|r| r.level == level)
            .cloned()
            .collect();
        (of_level.len() >= RUN_MERGE_FANOUT).then_some((of_level, level + 1))
    })
}
