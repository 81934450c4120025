//! Compaction: choosing the next merge under the leveling, tiering or elastic policy,
//! executing it, and retiring the runs it replaced once no reader needs them (see the module
//! documentation).

use super::*;

impl Topology {
    /// Whether `runs` (one level of one range) should behave leveled under the policy.
    pub(super) fn leveled(&self, config: &Config, range: u32, runs: &[&RunEntry]) -> bool {
        match config.merge_policy {
            MergePolicy::Leveling => true,
            MergePolicy::Tiering => false,
            MergePolicy::Elastic => {
                let entries: u64 = runs.iter().map(|e| e.run.meta.entries).sum();
                let tombstones: u64 = runs.iter().map(|e| e.run.meta.tombstones).sum();
                let tombstone_ratio = if entries == 0 {
                    0.0
                } else {
                    tombstones as f64 / entries as f64
                };
                let reads = self.reads.ranges.get(range as usize) as f64;
                let read_ratio = if reads == 0.0 {
                    0.0
                } else {
                    reads / (reads + entries as f64)
                };
                config.elastic_weight * tombstone_ratio + (1.0 - config.elastic_weight) * read_ratio
                    >= config.elastic_bound
            }
        }
    }

    /// What a leveled `level` of `range` holds before it is pushed down:
    /// `T^(level-1) × max(lsm_level1_bytes, T × latest flush)`. Level 1 collects T flushes, so
    /// each level is T times the one above whatever the flush size — with a fixed base, small
    /// flushes (memtables spread over many vertices) would each rewrite a level many times
    /// their size.
    fn level_capacity_bytes(&self, config: &Config, range: u32, level: u8) -> u64 {
        let fanout = config.lsm_tier_runs.max(2) as u64;
        let flushed = self.flush_bytes.get(range as usize);
        let level1 = config.lsm_level1_bytes.max(fanout.saturating_mul(flushed));
        level1.saturating_mul(fanout.saturating_pow(u32::from(level) - 1))
    }

    /// Under leveling and elastic merging, every run of `range` merged into one at its deepest
    /// level, once the entries read in the range since its last merge cover the range's
    /// entries: the rewrite costs about what one more read of the range does, and a range of
    /// one run scans fastest (its slices are handed out directly).
    pub(super) fn collapse(
        &self,
        config: &Config,
        range: u32,
        runs: &[&RunEntry],
    ) -> Option<MergePlan> {
        if config.merge_policy == MergePolicy::Tiering || runs.len() < 2 {
            return None;
        }
        let entries: u64 = runs.iter().map(|r| r.run.meta.entries).sum();
        if self.reads.ranges.get(range as usize) < entries.max(1) {
            return None;
        }
        Some(MergePlan {
            range,
            inputs: runs.iter().map(|r| r.seq).collect(),
            output_level: runs.iter().map(|r| r.run.meta.level).max()?,
        })
    }

    /// The next merge the policy asks for, if any (see MERGE POLICIES).
    fn next_merge(&self, config: &Config) -> Option<MergePlan> {
        let state = self.state.read();
        let current: Vec<&RunEntry> = state.runs.iter().filter(|r| r.current()).collect();
        let mut ranges: Vec<u32> = current
            .iter()
            .map(|r| r.range(self.range_vertices))
            .collect();
        ranges.sort_unstable();
        ranges.dedup();
        let fanout = config.lsm_tier_runs.max(2);
        for range in ranges {
            let at = |level: u8| -> Vec<&RunEntry> {
                current
                    .iter()
                    .copied()
                    .filter(|r| r.range(self.range_vertices) == range && r.run.meta.level == level)
                    .collect()
            };
            let of_range: Vec<&RunEntry> = current
                .iter()
                .copied()
                .filter(|r| r.range(self.range_vertices) == range)
                .collect();
            if let Some(plan) = self.collapse(config, range, &of_range) {
                return Some(plan);
            }
            for level in 1..=MAX_LEVEL {
                let here = at(level);
                if here.is_empty() {
                    continue;
                }
                let plan = |inputs: Vec<&RunEntry>, output_level: u8| {
                    Some(MergePlan {
                        range,
                        inputs: inputs.iter().map(|r| r.seq).collect(),
                        output_level,
                    })
                };
                if level == MAX_LEVEL {
                    // The last level is always leveled.
                    if here.len() > 1 {
                        return plan(here, MAX_LEVEL);
                    }
                    continue;
                }
                // Flushes land at level 1, which tiers under leveling too (like an LSM's L0):
                // merging every flush into one level-1 run would rewrite it per flush.
                let tier_level_one =
                    level == TIER_LEVEL && config.merge_policy == MergePolicy::Leveling;
                if !tier_level_one && self.leveled(config, range, &here) {
                    if here.len() > 1 {
                        return plan(here, level);
                    }
                    let bytes: u64 = here.iter().map(|r| r.run.size_bytes() as u64).sum();
                    if bytes > self.level_capacity_bytes(config, range, level) {
                        let mut inputs = here;
                        inputs.extend(at(level + 1));
                        return plan(inputs, level + 1);
                    }
                } else if here.len() >= fanout {
                    // Into a leveled next level directly, rather than landing beside its run
                    // and rewriting the level a second time in a same-level merge.
                    let next = at(level + 1);
                    let next_leveled = level + 1 == MAX_LEVEL
                        || (!next.is_empty() && self.leveled(config, range, &next));
                    let mut inputs = here;
                    if next_leveled {
                        inputs.extend(next);
                    }
                    return plan(inputs, level + 1);
                }
            }
        }
        None
    }

    /// Runs the merges the policy asks for (cascading, at most `MAX_MERGES_PER_ROUND`).
    /// Returns whether anything was merged.
    pub fn merge(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
    ) -> Result<bool> {
        flush_read_tally();
        let mut merged = false;
        for _ in 0..MAX_MERGES_PER_ROUND {
            let Some(plan) = self.next_merge(config) else {
                break;
            };
            self.execute(vfs, ctx, config, stats, &plan)?;
            // Halved rather than cleared: a read-heavy range keeps its history through the
            // merges of one level, so its deeper levels get leveled too.
            self.reads.ranges.halve(plan.range as usize);
            merged = true;
        }
        Ok(merged)
    }

    /// Merges the plan's input runs (consecutive in age) into one run at the output level.
    /// Tombstones and the entries they delete cancel out; when no older run of the range
    /// remains outside the inputs, every tombstone is dropped (garbage collection).
    fn execute(
        &self,
        vfs: &dyn Vfs,
        ctx: &dyn RunContext,
        config: &Config,
        stats: &LsmStats,
        plan: &MergePlan,
    ) -> Result<()> {
        let range = self.range_vertices;
        let (inputs, deepest_outside) = {
            let state = self.state.read();
            let mut inputs: Vec<RunEntry> = state
                .runs
                .iter()
                .filter(|e| e.current() && plan.inputs.contains(&e.seq))
                .cloned()
                .collect();
            sort_runs(&mut inputs);
            let deepest_outside = state
                .runs
                .iter()
                .filter(|e| {
                    e.current() && e.range(range) == plan.range && !plan.inputs.contains(&e.seq)
                })
                .map(|e| e.run.meta.level)
                .max();
            (inputs, deepest_outside)
        };
        let drop_tombstones = deepest_outside.is_none_or(|level| level < plan.output_level);
        let (lo, hi) = (plan.range * range, (plan.range + 1) * range);
        // Copy the inputs' property values when they are all still current, else re-read.
        let copied = current_columns(&inputs, ctx.prop_updated_ts(self.edge_table));
        let mut columns: Vec<ColumnData> = copied
            .iter()
            .flatten()
            .map(|&(key, kind)| ColumnData::new(key, kind, 0))
            .collect();
        let merged = merge_vertices(&inputs, (lo, hi), drop_tombstones, &mut columns);
        let visible_from = inputs.iter().map(|e| e.visible_from).max().unwrap_or(0);
        let min_ts = inputs.iter().map(|e| e.run.meta.min_ts).min().unwrap_or(0);
        let max_ts = inputs.iter().map(|e| e.run.meta.max_ts).max().unwrap_or(0);
        let (seq, name) = ctx.next_run();
        let mut meta = self.meta(plan.output_level, lo, hi, min_ts, max_ts);
        let vertices: Vec<RunVertex> = merged
            .iter()
            .map(|(v, n, e)| (*v, &n[..], &e[..]))
            .collect();
        let written = match copied {
            Some(_) => {
                meta.prop_ts = match columns.is_empty() {
                    true => 0,
                    false => inputs.iter().map(|e| e.run.meta.prop_ts).min().unwrap_or(0),
                };
                run::write_run(
                    vfs,
                    &name,
                    &mut meta,
                    &vertices,
                    &columns,
                    config.run_packing,
                )?
            }
            None => self.write_captured(vfs, ctx, config, &name, &mut meta, &vertices)?,
        };
        stats.merged_bytes.fetch_add(written, Ordering::Relaxed);
        let output = RunEntry {
            run: Arc::new(Run::open(vfs, &name)?),
            seq,
            visible_from,
            hidden_from: NEVER,
        };
        let mut state = self.state.write();
        for entry in state.runs.iter_mut() {
            if plan.inputs.contains(&entry.seq) {
                entry.hidden_from = visible_from;
            }
        }
        state.runs.push(output);
        sort_runs(&mut state.runs);
        Ok(())
    }

    /// Drops components no reader at or after `horizon` can see; returns the run files to
    /// delete (the caller deletes them after the manifest stopped listing them).
    pub fn retire(&self, horizon: Timestamp) -> Vec<String> {
        let mut state = self.state.write();
        state.frozen.retain(|f| f.hidden_from > horizon);
        let mut retired = Vec::new();
        state.runs.retain(|r| {
            let keep = r.hidden_from > horizon;
            if !keep {
                retired.push(r.run.name.clone());
            }
            keep
        });
        retired
    }

    /// The current runs (what the manifest lists): (file name, seq).
    pub fn current_runs(&self) -> Vec<(String, u64)> {
        self.state
            .read()
            .runs
            .iter()
            .filter(|r| r.current())
            .map(|r| (r.run.name.clone(), r.seq))
            .collect()
    }

    /// (current runs, runs of any age still held) — for tests.
    #[cfg(test)]
    pub fn run_counts(&self) -> (usize, usize) {
        let state = self.state.read();
        (
            state.runs.iter().filter(|r| r.current()).count(),
            state.runs.len(),
        )
    }
}
