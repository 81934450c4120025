//! Writing runs: flushing a frozen memtable into level-1 runs, and writing a bulk load's
//! topology as runs directly (see COMPONENTS in the module documentation).

use super::*;
/// Most entries a bulk load's run writing sorts at once (see
/// [`Topology::write_bulk_runs`]): 8 bytes each, 32 MiB.
pub const BULK_GROUP_ENTRIES: usize = 1 << 22;
/// Calls its argument with every `(vertex, neighbour, edge offset)` of a bulk load's
/// topology (see [`Topology::write_bulk_runs`]).
pub type BulkEntries<'a> = dyn Fn(&mut dyn FnMut(u32, u32, u32)) + 'a;

impl Topology {
    /// Flushes the oldest frozen memtable that is not yet flushed into level-1 runs (one per
    /// range with entries, packed per `config.run_packing`). Returns whether there was one.
    pub fn flush_one(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
    ) -> Result<bool> {
        let Some(memtable) = self
            .state
            .read()
            .frozen
            .iter()
            .find(|f| f.hidden_from == NEVER)
            .map(|f| f.memtable.clone())
        else {
            return Ok(false);
        };
        let max_ts = memtable.max_ts();
        let mut drained = memtable.drain();
        for d in &mut drained {
            sort_entries(&mut d.nbr, &mut d.eid);
        }
        let mut new_runs = Vec::new();
        let range = self.range_vertices;
        let mut start = 0;
        while start < drained.len() {
            let r = drained[start].vertex / range;
            let end = start
                + drained[start..]
                    .iter()
                    .take_while(|d| d.vertex / range == r)
                    .count();
            let vertices: Vec<RunVertex> = drained[start..end]
                .iter()
                .map(|d| (d.vertex, &d.nbr[..], &d.eid[..]))
                .collect();
            let (seq, name) = ctx.next_run();
            let mut meta = self.meta(TIER_LEVEL, r * range, (r + 1) * range, 0, max_ts);
            let written = self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?;
            stats.flushed_bytes.fetch_add(written, Ordering::Relaxed);
            stats.flushed_runs.fetch_add(1, Ordering::Relaxed);
            self.flush_bytes.set(r as usize, written);
            new_runs.push(RunEntry {
                run: Arc::new(Run::open(vfs, &name)?),
                seq,
                visible_from: max_ts,
                hidden_from: NEVER,
            });
            start = end;
        }
        let mut state = self.state.write();
        state.runs.extend(new_runs);
        sort_runs(&mut state.runs);
        if let Some(f) = state
            .frozen
            .iter_mut()
            .find(|f| Arc::ptr_eq(&f.memtable, &memtable))
        {
            f.hidden_from = max_ts;
        }
        state.flushed_ts = state.flushed_ts.max(max_ts);
        Ok(true)
    }

    /// Writes the adjacency of a bulk load (see `store::bulk`) straight into run files,
    /// without a memtable: `entries` visits `(vertex, neighbour, edge offset)` in any order
    /// (the same ones at each call), all created at `ts`, whose rows are installed. A visitor
    /// rather than a list: the load's staged edges are read where they are, with no 12-byte
    /// entry per edge and direction.
    ///
    /// One visit counts each vertex's entries; then the vertex ranges are taken in groups of
    /// at most `group_entries` entries ([`BULK_GROUP_ENTRIES`] for a load; a range larger
    /// than that alone), and for each
    /// group one more visit fills its CSR arrays by a counting sort, each vertex's list is
    /// sorted by (neighbour, edge offset) as a flush sorts it, and every range with entries
    /// gets one run — at the last level when the topology holds no run yet (a load into an
    /// empty table lands in the layout a full merge would produce), at level 1 like a flush
    /// otherwise. Memory: 4 bytes per vertex plus the largest group's arrays, not 8 bytes
    /// per entry of the whole table. The runs are not readable until
    /// [`publish_bulk`](Self::publish_bulk).
    pub fn write_bulk_runs(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        entries: &BulkEntries<'_>,
        (ts, group_entries): (Timestamp, usize),
    ) -> Result<Vec<RunEntry>> {
        let mut degree: Vec<u32> = Vec::new();
        entries(&mut |v, _, _| {
            let v = v as usize;
            if v >= degree.len() {
                degree.resize(v + 1, 0);
            }
            degree[v] += 1;
        });
        if degree.is_empty() {
            return Ok(Vec::new());
        }
        let level = if self.state.read().runs.is_empty() {
            MAX_LEVEL
        } else {
            TIER_LEVEL
        };
        let range = self.range_vertices as usize;
        let range_entries: Vec<usize> = (degree.chunks(range))
            .map(|d| d.iter().map(|&d| d as usize).sum())
            .collect();
        let ranges = range_entries.len();
        let mut written = Vec::new();
        let mut r = 0;
        while r < ranges {
            // the group: ranges r..end
            let (mut end, mut total) = (r, 0usize);
            while end < ranges && (end == r || total + range_entries[end] <= group_entries) {
                total += range_entries[end];
                end += 1;
            }
            let (lo_vertex, hi_vertex) = (r * range, (end * range).min(degree.len()));
            self.write_bulk_group(
                vfs,
                ctx,
                config,
                entries,
                (&degree, lo_vertex, hi_vertex, total),
                (level, ts),
                &mut written,
            )?;
            r = end;
        }
        Ok(written)
    }

    /// One group of [`write_bulk_runs`](Self::write_bulk_runs): vertices `lo..hi` holding
    /// `total` entries.
    #[allow(clippy::too_many_arguments)]
    fn write_bulk_group(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        entries: &BulkEntries<'_>,
        (degree, lo, hi, total): (&[u32], usize, usize, usize),
        (level, ts): (u8, Timestamp),
        written: &mut Vec<RunEntry>,
    ) -> Result<()> {
        // Counting sort: start[v - lo]..start[v - lo + 1] is vertex v's slice.
        let mut start = Vec::with_capacity(hi - lo + 1);
        start.push(0usize);
        for v in lo..hi {
            start.push(start[v - lo] + degree[v] as usize);
        }
        let mut fill = start.clone();
        let (mut nbr, mut eid) = (vec![0u32; total], vec![0u32; total]);
        entries(&mut |v, n, e| {
            let v = v as usize;
            if (lo..hi).contains(&v) {
                let at = &mut fill[v - lo];
                (nbr[*at], eid[*at]) = (n, e);
                *at += 1;
            }
        });
        assert_eq!(
            fill[hi - lo - 1],
            total,
            "a bulk load's entries changed between visits"
        );
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for i in 0..hi - lo {
            let (a, b) = (start[i], start[i + 1]);
            if b - a > 1 {
                pairs.clear();
                pairs.extend(nbr[a..b].iter().copied().zip(eid[a..b].iter().copied()));
                pairs.sort_unstable();
                for (j, &(n, e)) in pairs.iter().enumerate() {
                    (nbr[a + j], eid[a + j]) = (n, e);
                }
            }
        }
        let range = self.range_vertices;
        for r in (lo as u32 / range)..(hi as u32).div_ceil(range) {
            let vertices: Vec<RunVertex> = (r * range..((r + 1) * range).min(hi as u32))
                .filter(|&v| degree[v as usize] > 0)
                .map(|v| {
                    let i = v as usize - lo;
                    let (a, b) = (start[i], start[i + 1]);
                    (v, &nbr[a..b], &eid[a..b])
                })
                .collect();
            if vertices.is_empty() {
                continue;
            }
            let (seq, name) = ctx.next_run();
            let mut meta = self.meta(level, r * range, (r + 1) * range, ts, ts);
            // The caller installed the rows first: the capture timestamp is `ts`.
            self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?;
            written.push(RunEntry {
                run: Arc::new(Run::open(vfs, &name)?),
                seq,
                visible_from: ts,
                hidden_from: NEVER,
            });
        }
        Ok(())
    }

    /// Makes runs from [`write_bulk_runs`](Self::write_bulk_runs) part of the topology, visible
    /// from their load's `ts`, and records that every commit up to `ts` is in runs. The caller
    /// flushed every memtable before the load (its commits are in runs already) and holds the
    /// storage's LSM lock, so no manifest lists the runs before the load's checkpoint does.
    pub fn publish_bulk(&self, runs: Vec<RunEntry>, ts: Timestamp) {
        let mut state = self.state.write();
        assert!(
            state.frozen.iter().all(|f| f.hidden_from != NEVER),
            "a bulk load publishes only after every memtable was flushed"
        );
        state.runs.extend(runs);
        sort_runs(&mut state.runs);
        state.flushed_ts = state.flushed_ts.max(ts);
    }

    /// Writes run `name` with property columns read from the rows as of a fresh capture
    /// timestamp (see PROPERTY COLUMNS).
    pub(super) fn write_captured(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        name: &str,
        meta: &mut RunMeta,
        vertices: &[RunVertex<'_>],
    ) -> Result<u64> {
        let prop_ts = ctx.capture_ts();
        let eids: Vec<u32> = vertices
            .iter()
            .flat_map(|(_, _, eid)| eid.iter().copied())
            .collect();
        let columns = ctx.capture(self.edge_table, &eids, prop_ts)?;
        meta.prop_ts = if columns.is_empty() { 0 } else { prop_ts };
        run::write_run(vfs, name, meta, vertices, &columns, config.run_packing)
    }

    pub(super) fn meta(
        &self,
        level: u8,
        lo: u32,
        hi: u32,
        min_ts: Timestamp,
        max_ts: Timestamp,
    ) -> RunMeta {
        RunMeta {
            edge_table: self.edge_table,
            outgoing: self.outgoing,
            level,
            vertex_lo: lo,
            vertex_hi: hi,
            entries: 0,
            tombstones: 0,
            min_ts,
            max_ts,
            prop_ts: 0,
            packed: false,
        }
    }
}
