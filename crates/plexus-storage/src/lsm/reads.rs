//! Read accounting: what readers read per vertex range, the elastic policy's and the
//! read-driven flush's input (see COMPONENTS in the module documentation) — gathered in a per-thread tally and added to the shared counters in bulk.

use super::*;
/// Entries a thread's read tally gathers before it adds them to the shared counters.
const READ_TALLY_FLUSH_ENTRIES: u64 = 1 << 16;

/// The read counters of one topology: the elastic policy's and the read-driven flush's input.
#[derive(Default)]
pub(super) struct ReadCounters {
    /// Entries read per range since the range's last merge.
    pub(super) ranges: RangeCounters,
    /// Entries scans read (all components) since the active memtable last received a commit.
    pub(super) since_write: AtomicU64,
}

impl ReadCounters {
    pub(super) fn add(&self, range: usize, n: u64) {
        self.ranges.add(range, n);
        self.since_write.fetch_add(n, Ordering::Relaxed);
    }
}

/// Reads one thread has counted and not yet added to the shared [`ReadCounters`]. Every
/// vertex an expand reads is counted; adding each to the shared counters wrote their cache
/// lines from every worker of a parallel statement, and those lines bounced between the cores
/// (`docs/benchmarks.md`, "Expand-heavy parallel Cypher"). The tally moves to the counters
/// when the thread reads another topology or range, when it holds
/// [`READ_TALLY_FLUSH_ENTRIES`], before a merge or read-driven flush decision on this thread
/// (`flush_read_tally`: inline maintenance sees its own reads exactly), and when the thread
/// exits. Other threads' decisions may miss up to that many entries per reading thread — they
/// are heuristics.
#[derive(Default)]
pub(super) struct ReadTally {
    pub(super) counters: Option<Arc<ReadCounters>>,
    pub(super) range: usize,
    pub(super) entries: u64,
}

impl ReadTally {
    pub(super) fn add(&mut self, counters: &Arc<ReadCounters>, range: usize, n: u64) {
        let same = self.range == range
            && (self.counters.as_ref()).is_some_and(|c| Arc::ptr_eq(c, counters));
        if !same {
            self.flush();
            self.counters = Some(counters.clone());
            self.range = range;
        }
        self.entries += n;
        if self.entries >= READ_TALLY_FLUSH_ENTRIES {
            self.flush();
        }
    }

    pub(super) fn flush(&mut self) {
        if let Some(counters) = &self.counters
            && self.entries > 0
        {
            counters.add(self.range, self.entries);
        }
        self.entries = 0;
    }
}

impl Drop for ReadTally {
    fn drop(&mut self) {
        self.flush();
    }
}

thread_local! {
    pub(super) static READ_TALLY: std::cell::RefCell<ReadTally> = std::cell::RefCell::default();
}

/// Adds this thread's read tally to its counters (see [`ReadTally`]).
pub(super) fn flush_read_tally() {
    let _ = READ_TALLY.try_with(|tally| tally.borrow_mut().flush());
}

/// One counter per vertex range: entries read since the range's last merge (elastic policy
/// input; the writes are the entries of the range's level-1 runs), or the size of the range's
/// latest flush (sizes the leveled levels).
#[derive(Default)]
pub(super) struct RangeCounters {
    pub(super) counts: RwLock<Vec<AtomicU64>>,
}

impl RangeCounters {
    pub(super) fn add(&self, range: usize, n: u64) {
        if let Some(c) = self.counts.read().get(range) {
            c.fetch_add(n, Ordering::Relaxed);
            return;
        }
        let mut counts = self.counts.write();
        while counts.len() <= range {
            counts.push(AtomicU64::new(0));
        }
        counts[range].fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn get(&self, range: usize) -> u64 {
        self.counts
            .read()
            .get(range)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    fn reset(&self, range: usize) {
        if let Some(c) = self.counts.read().get(range) {
            c.store(0, Ordering::Relaxed);
        }
    }

    pub(super) fn halve(&self, range: usize) {
        if let Some(c) = self.counts.read().get(range) {
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n / 2));
        }
    }

    pub(super) fn set(&self, range: usize, n: u64) {
        self.reset(range);
        self.add(range, n);
    }
}
