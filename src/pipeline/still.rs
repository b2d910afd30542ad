//! Frames of a picture that never changes (snapshot files): the analysis is re-run every
//! `every` so that time-based findings (stalls, deadlines) move on; a new frame is sent only
//! when the report actually changed.

use super::frame::{Frame, FrameRx};
use crate::analysis::{self, Report, Settings};
use crate::model::snapshot::Snapshot;
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;

fn without_now(r: &Report) -> Report {
    Report {
        now: None,
        ..r.clone()
    }
}

fn frame(seq: u64, snapshot: &Arc<Snapshot>, report: Report, now: Timestamp) -> Arc<Frame> {
    Arc::new(Frame {
        seq,
        snapshot: snapshot.clone(),
        report: Arc::new(report),
        analyzed_at: now,
    })
}

/// Analyses now, sends the first frame at once, then re-analyses every `every` until the
/// receiver is dropped. Needs a tokio runtime.
pub fn spawn(snapshot: Snapshot, settings: Settings, every: Duration) -> FrameRx {
    spawn_at(snapshot, settings, every, jiff::SignedDuration::ZERO)
}

/// Like `spawn`, with the analysis clock shifted by `offset` (a dump judged as of its time).
pub fn spawn_at(
    snapshot: Snapshot,
    settings: Settings,
    every: Duration,
    offset: jiff::SignedDuration,
) -> FrameRx {
    let clock = move || {
        Timestamp::now()
            .checked_add(offset)
            .unwrap_or_else(|_| Timestamp::now())
    };
    let snapshot = Arc::new(snapshot);
    let now = clock();
    let report = analysis::analyze(&snapshot, &settings, now);
    let mut last = without_now(&report);
    let (tx, rx) = tokio::sync::watch::channel(Some(frame(1, &snapshot, report, now)));
    tokio::spawn(async move {
        let mut seq = 1;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = tx.closed() => break,
            }
            let now = clock();
            let report = analysis::analyze(&snapshot, &settings, now);
            let cmp = without_now(&report);
            if cmp != last {
                last = cmp;
                seq += 1;
                if tx.send(Some(frame(seq, &snapshot, report, now))).is_err() {
                    break;
                }
            }
        }
    });
    rx
}
