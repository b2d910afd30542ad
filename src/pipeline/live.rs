//! The live dashboard's frames: `cluster::live`'s watches, analysed incrementally.
//!
//! A change that arrives after a quiet period is analysed and published at once; while changes
//! stream in faster than `Pacer::for_frames` allows, they are coalesced. Without changes the
//! task sleeps until the report's next deadline (a stall, deadline, grace period or duration
//! text due to move on: `Analyzer::next_deadline`), redoes only what expired, and publishes
//! only if the report changed.

use super::analyzer::Analyzer;
use super::frame::{Frame, FrameRx, FrameTx};
use super::pace::Pacer;
use crate::analysis::Settings;
use crate::cluster::live::{SourceOptions, SourceUpdate, WatchSource};
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;

pub use crate::cluster::live::WatchOptions;

/// The least time between two clock moves: deadlines within it wait for the next one (a
/// "down for 12s" text counts seconds; nothing here needs finer). Ages on screen come from the
/// UI's own clock.
const MIN_TICK: Duration = Duration::from_secs(1);

pub struct LiveOptions {
    pub namespace: Option<String>,
    pub context: String,
    pub cluster: String,
    pub settings: Settings,
}

/// Handles to the running source and its analysis; dropping it stops every task.
pub struct LiveSource {
    pub frames: FrameRx,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LiveSource {
    fn drop(&mut self) {
        // The analysis task owns the watches: ending it drops them.
        self.task.abort();
    }
}

/// Watches with the default timeouts. The client should come from `client::watch_client`.
pub fn start(client: kube::Client, opts: LiveOptions) -> LiveSource {
    start_watching(client, opts, WatchOptions::default())
}

pub fn start_watching(client: kube::Client, opts: LiveOptions, watch: WatchOptions) -> LiveSource {
    let source = crate::cluster::live::start_watching(
        client,
        SourceOptions {
            namespace: opts.namespace,
            context: opts.context,
            cluster: opts.cluster,
        },
        watch,
    );
    let mut settings = opts.settings;
    // Live frames arrive mid-rename: give a rename in flight a few seconds before calling it
    // half done.
    if settings.rename_grace.is_zero() {
        settings.rename_grace = jiff::SignedDuration::from_secs(5);
    }
    let (tx, rx) = tokio::sync::watch::channel(None);
    let task = tokio::spawn(frame_task(source, tx, settings));
    LiveSource { frames: rx, task }
}

async fn frame_task(mut source: WatchSource, frames: FrameTx, settings: Settings) {
    let mut analyzer: Option<Analyzer> = None;
    let mut pending: Option<SourceUpdate> = None;
    let mut seq = 0u64;
    let mut pacer = Pacer::for_frames();
    loop {
        let listed = pending.as_ref().is_some_and(|p| p.snapshot.all_listed());
        let deadline = analyzer.as_ref().and_then(Analyzer::next_deadline);
        let wake = tokio::time::Instant::now() + wake_in(deadline, Timestamp::now());
        tokio::select! {
            update = source.updates.recv() => {
                let Some(update) = update else { return };
                match &mut pending {
                    Some(p) => {
                        p.snapshot = update.snapshot;
                        p.changes.merge(update.changes);
                    }
                    None => pending = Some(update),
                }
            }
            // Armed only while a stream of changes is being coalesced.
            _ = tokio::time::sleep_until(pacer.when(tokio::time::Instant::now())), if listed => {}
            _ = tokio::time::sleep_until(wake), if deadline.is_some() => {
                if pending.is_none()
                    && let Some(a) = &mut analyzer
                {
                    let before = a.clock_work();
                    let changed = a.tick(Timestamp::now());
                    super::clock_work::add(a.clock_work().since(before));
                    if changed {
                        publish(&frames, a, Arc::clone(a.report()), &mut seq);
                    }
                }
                continue;
            }
            _ = frames.closed() => return,
        }
        let due = pacer.ready(tokio::time::Instant::now());
        if due && pending.as_ref().is_some_and(|p| p.snapshot.all_listed()) {
            let Some(update) = pending.take() else {
                continue;
            };
            let report = match &mut analyzer {
                Some(a) => a.apply_at(update.snapshot, &update.changes, Timestamp::now()),
                None => {
                    // The one full analysis (156 ms at 100k objects) off the runtime's worker:
                    // the dashboard has one (`crate::runtime`), and keys are read on it.
                    let (snapshot, s) = (update.snapshot, settings.clone());
                    let first = tokio::task::spawn_blocking(move || {
                        Analyzer::new(snapshot, s, Timestamp::now())
                    });
                    // Only a panic in the analysis ends it: the task ends as it would have.
                    let Ok(a) = first.await else { return };
                    let report = Arc::clone(a.report());
                    analyzer = Some(a);
                    report
                }
            };
            if let Some(a) = &analyzer {
                publish(&frames, a, report, &mut seq);
            }
            pacer.sent(tokio::time::Instant::now());
        }
    }
}

/// How long to sleep for a deadline: until the whole second after it, so that deadlines within
/// one second are met by one clock move, and at least `MIN_TICK`.
fn wake_in(deadline: Option<Timestamp>, now: Timestamp) -> Duration {
    let Some(d) = deadline else {
        // Not armed (see the `select!`), but an instant is needed all the same.
        return Duration::from_secs(3600);
    };
    let secs = d.as_second() + i64::from(d.subsec_nanosecond() > 0);
    let wait = Timestamp::from_second(secs)
        .map_or(jiff::SignedDuration::ZERO, |at| at.duration_since(now));
    Duration::try_from(wait)
        .unwrap_or(Duration::ZERO)
        .max(MIN_TICK)
}

fn publish(frames: &FrameTx, a: &Analyzer, report: Arc<crate::analysis::Report>, seq: &mut u64) {
    *seq += 1;
    frames.send_replace(Some(Arc::new(Frame {
        seq: *seq,
        snapshot: Arc::clone(a.snapshot()),
        report,
        analyzed_at: a.now(),
    })));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn deadlines_in_one_second_share_a_wake_and_none_comes_sooner_than_min_tick() {
        let now = at("2026-11-20T10:00:00.2Z");
        let early = wake_in(Some(at("2026-11-20T10:00:05.000000001Z")), now);
        let late = wake_in(Some(at("2026-11-20T10:00:05.9Z")), now);
        assert_eq!(early, late);
        assert_eq!(early, Duration::from_millis(5800));
        // A whole second is its own wake, not the next one.
        assert_eq!(
            wake_in(Some(at("2026-11-20T10:00:05Z")), now),
            Duration::from_millis(4800)
        );
        assert_eq!(wake_in(Some(at("2026-11-20T10:00:00.3Z")), now), MIN_TICK);
        assert_eq!(wake_in(Some(at("2026-11-20T09:00:00Z")), now), MIN_TICK);
    }
}
