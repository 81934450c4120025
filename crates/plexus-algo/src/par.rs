//! Parallel building blocks shared by the CSR builder and the kernels.
//!
//! DETERMINISTIC SUMS
//! ==================
//! Floating-point addition is not associative, and rayon's `sum()` combines partial sums in
//! an order that depends on work stealing. [`det_sum_by`] instead cuts `0..len` into fixed
//! chunks of [`SUM_CHUNK_LEN`] items, sums each chunk left to right in parallel, and adds the
//! chunk sums left to right: the same bits for any thread count.
//!
//! WORK SPLITTING
//! ==============
//! Per-vertex work is skewed (power-law degrees), so loops over vertices are split into ranges
//! of roughly equal `vertices + edges` ([`vertex_ranges`]), [`TASKS_PER_THREAD`] per thread so
//! that stealing can even out the rest. [`split_by_ranges`] turns a CSR-shaped buffer into one
//! disjoint `&mut` slice per range, so ranges fill their part of `targets` without `unsafe`.
//!
//! SCRATCH
//! =======
//! Kernels that need O(n) scratch per worker (k-hop's visited stamps) take it from a
//! [`ScratchPool`]: one slot per rayon worker, indexed by `rayon::current_thread_index()`.

use std::ops::Range;
use std::sync::Mutex;

use rayon::prelude::*;

/// Items per chunk in [`det_sum_by`]; fixed so that results do not depend on the thread count.
pub(crate) const SUM_CHUNK_LEN: usize = 4096;
/// Items per block in [`exclusive_scan`].
const SCAN_BLOCK_LEN: usize = 1 << 14;
/// Ranges per rayon thread in [`task_count`]: enough slack for work stealing on skewed graphs.
const TASKS_PER_THREAD: usize = 8;

/// Number of ranges to split per-vertex work into.
pub(crate) fn task_count() -> usize {
    rayon::current_num_threads().max(1) * TASKS_PER_THREAD
}

/// Deterministic parallel sum of `f(0) + f(1) + … + f(len-1)` (see the module doc).
pub(crate) fn det_sum_by(len: usize, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    let chunk_sums: Vec<f64> = (0..len.div_ceil(SUM_CHUNK_LEN))
        .into_par_iter()
        .map(|c| {
            let begin = c * SUM_CHUNK_LEN;
            let end = (begin + SUM_CHUNK_LEN).min(len);
            (begin..end).map(&f).fold(0.0, |acc, x| acc + x)
        })
        .collect();
    chunk_sums.iter().fold(0.0, |acc, x| acc + x)
}

/// Exclusive prefix sum: returns `len + 1` offsets, `out[i] = counts[0] + … + counts[i-1]`.
pub(crate) fn exclusive_scan(counts: &[u64]) -> Vec<u64> {
    let block_sums: Vec<u64> = counts
        .par_chunks(SCAN_BLOCK_LEN)
        .map(|block| block.iter().sum())
        .collect();
    let mut block_starts = Vec::with_capacity(block_sums.len());
    let mut running = 0u64;
    for sum in &block_sums {
        block_starts.push(running);
        running += sum;
    }
    let mut out = vec![0u64; counts.len() + 1];
    out[..counts.len()]
        .par_chunks_mut(SCAN_BLOCK_LEN)
        .zip(counts.par_chunks(SCAN_BLOCK_LEN))
        .zip(block_starts.par_iter())
        .for_each(|((out_block, count_block), &start)| {
            let mut acc = start;
            for (o, c) in out_block.iter_mut().zip(count_block) {
                *o = acc;
                acc += c;
            }
        });
    out[counts.len()] = running;
    out
}

/// Split vertices `0..n` (with CSR `offsets`, `len n + 1`) into at most `parts` contiguous
/// ranges of roughly equal `vertices + edges`. Ranges are non-empty and cover `0..n` in order.
pub(crate) fn vertex_ranges(offsets: &[u64], parts: usize) -> Vec<Range<usize>> {
    let n = offsets.len() - 1;
    let total = offsets[n] + n as u64;
    let parts = parts.clamp(1, n.max(1));
    let mut ranges = Vec::with_capacity(parts);
    let mut begin = 0usize;
    for k in 1..=parts {
        let end = if k == parts {
            n
        } else {
            // First vertex whose cost prefix reaches k/parts of the total.
            let goal = (total as u128 * k as u128 / parts as u128) as u64;
            partition_point(n, |v| offsets[v] + (v as u64) < goal)
        };
        if end > begin {
            ranges.push(begin..end);
            begin = end;
        }
    }
    debug_assert!(ranges.iter().map(|r| r.len()).sum::<usize>() == n);
    ranges
}

/// Smallest `v` in `0..=n` with `!pred(v)`, for `pred` true on a prefix.
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Split a CSR-shaped buffer (`len == offsets[n]`) into one mutable slice per vertex range:
/// range `r` gets `buf[offsets[r.start] .. offsets[r.end]]`.
pub(crate) fn split_by_ranges<'a, T>(
    mut buf: &'a mut [T],
    offsets: &[u64],
    ranges: &[Range<usize>],
) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(ranges.len());
    let mut consumed = 0u64;
    for r in ranges {
        debug_assert_eq!(offsets[r.start], consumed);
        let len = (offsets[r.end] - offsets[r.start]) as usize;
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(len);
        parts.push(head);
        buf = tail;
        consumed = offsets[r.end];
    }
    debug_assert!(buf.is_empty());
    parts
}

/// One scratch value per rayon worker thread (see the module doc).
pub(crate) struct ScratchPool<T> {
    slots: Vec<Mutex<T>>,
}

impl<T> ScratchPool<T> {
    pub(crate) fn new(make: impl Fn() -> T) -> Self {
        let slots = (0..rayon::current_num_threads().max(1))
            .map(|_| Mutex::new(make()))
            .collect();
        ScratchPool { slots }
    }

    /// Run `f` with this worker's slot. Off the pool (or in a different pool) all callers share
    /// slot 0, which is still correct, only serialised.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let index = rayon::current_thread_index()
            .filter(|&i| i < self.slots.len())
            .unwrap_or(0);
        // A poisoned slot only means another task panicked mid-use; scratch is reset by users.
        let mut guard = match self.slots[index].lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_matches_sequential() {
        let counts: Vec<u64> = (0..50_000u64).map(|i| i % 7).collect();
        let out = exclusive_scan(&counts);
        let mut acc = 0;
        for (i, c) in counts.iter().enumerate() {
            assert_eq!(out[i], acc);
            acc += c;
        }
        assert_eq!(out[counts.len()], acc);
        assert_eq!(exclusive_scan(&[]), vec![0]);
    }

    #[test]
    fn ranges_cover_all_vertices() {
        let offsets = [0u64, 10, 10, 10, 11, 30, 31];
        for parts in 1..10 {
            let ranges = vertex_ranges(&offsets, parts);
            assert!(ranges.len() <= parts);
            let mut next = 0;
            for r in &ranges {
                assert_eq!(r.start, next);
                assert!(!r.is_empty());
                next = r.end;
            }
            assert_eq!(next, 6);
        }
        assert!(vertex_ranges(&[0], 4).is_empty());
    }

    #[test]
    fn det_sum_is_chunk_order() {
        let xs: Vec<f64> = (0..10_000).map(|i| 1.0 / (i as f64 + 1.0)).collect();
        let a = det_sum_by(xs.len(), |i| xs[i]);
        let b = det_sum_by(xs.len(), |i| xs[i]);
        assert_eq!(a.to_bits(), b.to_bits());
        assert!((a - xs.iter().sum::<f64>()).abs() < 1e-9);
    }
}
