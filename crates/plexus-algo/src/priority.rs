//! Analytics run below transactions in CPU priority.
//!
//! WHY
//! ===
//! A kernel on a pinned snapshot is rayon-parallel and keeps every core busy for seconds; a
//! writer committing meanwhile competes with it for CPU, and on a small machine its commit
//! rate falls with the share of the cores it gets (on 2 cores, about a third with PageRank on
//! two threads). Transactions are the latency-sensitive work, so the snapshot kernels run on
//! a dedicated pool whose threads lower their own scheduling priority (`nice` +
//! [`ANALYTICS_NICE`] on Linux, like the low-priority background threads of RocksDB): with
//! idle cores analytics still use all of them; when a committer wants a core, the scheduler
//! gives it that core first (a nice-10 thread weighs about a tenth of a nice-0 one).
//!
//! RULES
//! =====
//! - [`run`] executes a snapshot kernel on the analytics pool — unless the caller already runs
//!   inside a rayon pool, whose size and priority are then the caller's choice (the benchmark
//!   uses this to time a pool one thread short of the cores).
//! - `PLEXUS_ANALYTICS_NICE` (0..=19, read once when the pool is created) overrides the
//!   default nice value; 0 keeps analytics at normal priority.
//! - The pool is created on first use with one thread per available core and lives for the
//!   process. A thread only ever lowers its priority (raising it back needs privileges), so
//!   the pool's threads never run anything but analytics.
//! - Lowering the priority is best effort: where it is not supported or fails, the pool runs
//!   at normal priority; if the pool cannot be created at all, kernels run on rayon's global
//!   pool. Results never depend on the pool (see DETERMINISM in the crate doc).

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::OnceLock;

/// How much the analytics threads lower their priority by default (Linux nice value).
pub const ANALYTICS_NICE: i32 = 10;
/// Environment variable overriding [`ANALYTICS_NICE`] for the process: an integer 0..=19
/// (0 keeps analytics at normal priority); anything else is ignored.
pub const ANALYTICS_NICE_ENV: &str = "PLEXUS_ANALYTICS_NICE";

/// The nice value analytics threads take: [`ANALYTICS_NICE_ENV`] if valid, else the default.
pub fn analytics_nice() -> i32 {
    std::env::var(ANALYTICS_NICE_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
        .filter(|nice| (0..=19).contains(nice))
        .unwrap_or(ANALYTICS_NICE)
}

/// Runs `kernel` on the analytics pool (see RULES).
pub(crate) fn run<T: Send>(kernel: impl FnOnce() -> T + Send) -> T {
    match pool() {
        Some(pool) if rayon::current_thread_index().is_none() => pool.install(kernel),
        _ => kernel(),
    }
}

fn pool() -> Option<&'static ThreadPool> {
    static POOL: OnceLock<Option<ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let nice = analytics_nice();
        ThreadPoolBuilder::new()
            .thread_name(|i| format!("plexus-analytics-{i}"))
            .start_handler(move |_| lower_priority(nice))
            .build()
            .ok()
    })
    .as_ref()
}

#[cfg(target_os = "linux")]
fn lower_priority(nice: i32) {
    if nice == 0 {
        return;
    }
    // SAFETY: setpriority only reads its integer arguments; `who` = 0 with PRIO_PROCESS names
    // the calling thread on Linux (priorities are per thread there). A failure leaves the
    // priority unchanged, which is allowed (see RULES).
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
}

#[cfg(not(target_os = "linux"))]
fn lower_priority(_nice: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn kernels_run_on_lowered_threads_unless_the_caller_chose_a_pool() {
        let nice = || {
            // SAFETY: getpriority only reads its arguments (see `lower_priority`).
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        };
        let (name, priority) = run(|| {
            let name = std::thread::current().name().map(str::to_owned);
            (name, nice())
        });
        assert!(name.is_some_and(|n| n.starts_with("plexus-analytics-")));
        assert!(priority >= analytics_nice(), "nice {priority}");
        let own = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let name = own.install(|| run(|| std::thread::current().name().map(str::to_owned)));
        assert!(name.is_none_or(|n| !n.starts_with("plexus-analytics-")));
    }
}
