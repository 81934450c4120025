//! Parallel work, consumed in order: `jobs` run on up to `threads` worker threads, each
//! producing a stream of items; one consumer (the caller's thread) takes the items of job 0,
//! then of job 1, … — the order a sequential run would give, whatever the timing.
//!
//! DESIGN
//! ======
//! Each job has its own bounded channel of [`CHANNEL_ITEMS`] items, so a worker runs ahead of
//! the consumer by at most that much per job and memory stays bounded. Workers take jobs in
//! increasing order from a shared counter. This cannot deadlock: when the consumer waits on
//! job `i`, every job before `i` has finished, and job `i` was taken before any later job a
//! blocked worker may hold, so some worker is producing it.
//!
//! STOPPING
//! ========
//! When the consumer stops early (it returns `false`, e.g. at the first bad row), the
//! receivers are dropped: a worker's next send fails and it returns; workers that have not
//! started a job see the stop flag and take no more. All workers are joined before
//! [`run_ordered`] returns.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Items a worker may have produced ahead of the consumer, per job.
pub const CHANNEL_ITEMS: usize = 4;

/// Runs `work(job, send)` for every job on `threads` threads; `consume` gets every item, job
/// by job in order, until it returns `false`. `send` returns `false` once the consumer has
/// stopped (the worker should then return).
pub fn run_ordered<J, T>(
    jobs: &[J],
    threads: usize,
    work: impl Fn(&J, &mut dyn FnMut(T) -> bool) + Sync,
    mut consume: impl FnMut(usize, T) -> bool,
) where
    J: Sync,
    T: Send,
{
    let mut senders: Vec<Option<SyncSender<T>>> = Vec::with_capacity(jobs.len());
    let mut receivers: Vec<Receiver<T>> = Vec::with_capacity(jobs.len());
    for _ in jobs {
        let (tx, rx) = sync_channel(CHANNEL_ITEMS);
        senders.push(Some(tx));
        receivers.push(rx);
    }
    let senders = Mutex::new(senders);
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| {
                loop {
                    if stopped.load(Ordering::Relaxed) {
                        return;
                    }
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs.len() {
                        return;
                    }
                    let Some(tx) = senders.lock().map_or(None, |mut s| s[job].take()) else {
                        return;
                    };
                    work(&jobs[job], &mut |item| tx.send(item).is_ok());
                    // Dropping `tx` ends the job's stream.
                }
            });
        }
        'jobs: for (job, rx) in receivers.iter().enumerate() {
            for item in rx.iter() {
                if !consume(job, item) {
                    break 'jobs;
                }
            }
        }
        stopped.store(true, Ordering::Relaxed);
        // Dropping the receivers makes blocked senders fail, so every worker returns.
        drop(receivers);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_arrive_in_job_order_and_stopping_ends_the_workers() {
        let jobs: Vec<usize> = (0..12).collect();
        let work = |&job: &usize, send: &mut dyn FnMut((usize, usize)) -> bool| {
            // Later jobs are quicker, so they finish first unless the consumer orders them.
            std::thread::sleep(std::time::Duration::from_millis((12 - job as u64) * 2));
            for i in 0..10 {
                if !send((job, i)) {
                    return;
                }
            }
        };
        let mut seen = Vec::new();
        run_ordered(&jobs, 3, work, |job, item| {
            assert_eq!(job, item.0);
            seen.push(item);
            true
        });
        let expected: Vec<(usize, usize)> =
            (0..12).flat_map(|j| (0..10).map(move |i| (j, i))).collect();
        assert_eq!(seen, expected);

        let mut count = 0;
        run_ordered(&jobs, 3, work, |_, _| {
            count += 1;
            count < 15
        });
        assert_eq!(count, 15);
    }
}
