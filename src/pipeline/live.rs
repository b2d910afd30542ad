//! The live dashboard's frames: `cluster::live`'s watches, analysed incrementally.
//!
//! A change that arrives after a quiet period is analysed and published at once; while changes
//! stream in faster than `Pacer::for_frames` allows, they are coalesced. Without changes the
//! only work is a tick every `TICK` that redoes the restores whose rules read the clock.

use super::analyzer::Analyzer;
use super::frame::{Frame, FrameRx, FrameTx};
use super::pace::Pacer;
use crate::analysis::Settings;
use crate::cluster::live::{SourceOptions, SourceUpdate, WatchSource};
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;

pub use crate::cluster::live::WatchOptions;

/// How often the clock moves for stalls (10 min), watch-stale (30 s) and deadlines. Ages on
/// screen come from the UI's own clock; only clock-reading restores are redone on a tick.
const TICK: Duration = Duration::from_secs(5);

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
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let listed = pending.as_ref().is_some_and(|p| p.snapshot.all_listed());
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
            _ = tick.tick() => {
                if pending.is_none()
                    && let Some(a) = &mut analyzer
                {
                    let report = a.tick(Timestamp::now());
                    publish(&frames, a, report, &mut seq);
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
                Some(a) => a.apply(update.snapshot, &update.changes),
                None => {
                    let a = Analyzer::new(update.snapshot, settings.clone(), Timestamp::now());
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

fn publish(frames: &FrameTx, a: &Analyzer, report: Arc<crate::analysis::Report>, seq: &mut u64) {
    *seq += 1;
    frames.send_replace(Some(Arc::new(Frame {
        seq: *seq,
        snapshot: Arc::clone(a.snapshot()),
        report,
        analyzed_at: a.now(),
    })));
}
