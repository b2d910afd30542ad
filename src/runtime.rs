//! The async runtime a command runs on, built in `main` once the command is known.
//!
//! The dashboard runs on one worker thread. A change travels through four tasks (the HTTP
//! connection, its kind's watch, the store, the analysis) before the draw loop; on two workers
//! each hand-off woke the other thread (~20 `futex` calls per change), which then had to wait
//! for a core while the frame was being drawn. Measured on the 20k `default` cluster
//! (`docs/performance.md`, issue 28, tenth session): write -> drawn p99 3.44 -> 3.04 ms (mean
//! of five runs each), `serve`-style publishing 2.38 -> 2.12 ms, peak RSS -2 MiB, and no
//! change to the first report. The heavy, rare work (the first full analysis, 156 ms at 100k
//! objects) runs on the blocking pool, so keys are read while it runs.
//!
//! `serve` follows changes the same way, and runs on one worker too since issue 28's
//! seventeenth session: on two, its write -> published p99 on the real 20k dump was 4.3 ms
//! with single writes at 11 ms, against 2.4 ms and at most 3.0 on one. A scrape's body (15 ms
//! on that dump, 28 ms at 100k) is built on the blocking pool (`serve::http`), so a scrape
//! does not hold the pipeline up, nor the pipeline a scrape.
//!
//! Everything else keeps tokio's default (one worker per core): `demo` runs the emulator in
//! the same process, and the one-shot commands parse and judge whole clusters. A user's own
//! `TOKIO_WORKER_THREADS` wins everywhere.

use std::ffi::OsStr;

/// How many worker threads a command's runtime has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// tokio's default: one per core, or `TOKIO_WORKER_THREADS`.
    PerCore,
    /// One, for the path from a watch event to the dashboard's screen or `serve`'s answers.
    One,
}

/// The runtime for a command that follows changes (the dashboard, `restorewatch` without a
/// subcommand, and `serve`) or for another; `bench_role` is the benchmark's role from its
/// environment (`bench::ROLE_ENV`): its `worker` is the dashboard as measured and its `serve`
/// is `serve`, so each runs as what it measures does.
pub fn workers(follows_changes: bool, bench_role: Option<&OsStr>) -> Workers {
    if follows_changes || bench_role.is_some_and(|r| r == "worker" || r == "serve") {
        Workers::One
    } else {
        Workers::PerCore
    }
}

/// A multi-thread runtime (so that `spawn_blocking` and the blocking pool work as everywhere
/// else) with `workers` worker threads, unless `TOKIO_WORKER_THREADS` is set.
pub fn build(workers: Workers) -> std::io::Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.enable_all();
    if workers == Workers::One && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        b.worker_threads(1);
    }
    b.build()
}

/// `build`, for a command's `main`: a runtime that cannot be built is reported and ends the
/// process with the usage error's code (nothing has run yet).
pub fn build_or_exit(workers: Workers) -> tokio::runtime::Runtime {
    match build(workers) {
        Ok(rt) => rt,
        Err(e) => {
            crate::say_err!("restorewatch: cannot start the async runtime: {e}");
            std::process::exit(crate::exit::USAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_serve_and_their_benchmarks_run_on_one_worker_and_the_rest_per_core() {
        assert_eq!(workers(true, None), Workers::One);
        assert_eq!(workers(false, Some(OsStr::new("worker"))), Workers::One);
        assert_eq!(workers(false, Some(OsStr::new("serve"))), Workers::One);
        assert_eq!(workers(false, None), Workers::PerCore);
        assert_eq!(workers(false, Some(OsStr::new("sim"))), Workers::PerCore);
    }

    #[test]
    fn a_one_worker_runtime_has_one_worker_and_still_a_blocking_pool() {
        let rt = build(Workers::One).unwrap();
        // A user's TOKIO_WORKER_THREADS wins (tokio reads it); CI sets none.
        if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
            assert_eq!(rt.metrics().num_workers(), 1);
        }
        let got = rt.block_on(async { tokio::task::spawn_blocking(|| 7).await.unwrap() });
        assert_eq!(got, 7);
    }
}
