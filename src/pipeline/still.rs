//! Frames of a picture that never changes (snapshot files). Only the clock moves it on: the
//! analysis is redone when its next deadline comes (a stall, a deadline, the text of an age),
//! never more often than `every`, and a new frame is sent only when the report changed.

use super::analyzer::Analyzer;
use super::frame::{Frame, FrameRx};
use crate::analysis::{Report, Settings};
use crate::model::snapshot::Snapshot;
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;

fn frame(seq: u64, snapshot: &Arc<Snapshot>, report: Arc<Report>, now: Timestamp) -> Arc<Frame> {
    Arc::new(Frame {
        seq,
        snapshot: snapshot.clone(),
        report,
        analyzed_at: now,
    })
}

/// Analyses now, sends the first frame at once, then follows the clock until the receiver is
/// dropped. Needs a tokio runtime.
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
    let mut analyzer = Analyzer::new(Arc::clone(&snapshot), settings, now);
    let first = frame(1, &snapshot, Arc::clone(analyzer.report()), now);
    let (tx, rx) = tokio::sync::watch::channel(Some(first));
    tokio::spawn(async move {
        let mut seq = 1;
        loop {
            // Nothing depends on the time: this picture is final.
            let Some(deadline) = analyzer.next_deadline() else {
                tx.closed().await;
                break;
            };
            let wait = Duration::try_from(deadline.duration_since(clock()))
                .unwrap_or(Duration::ZERO)
                .max(every);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = tx.closed() => break,
            }
            let now = clock();
            if analyzer.tick(now) {
                seq += 1;
                let f = frame(seq, &snapshot, Arc::clone(analyzer.report()), now);
                if tx.send(Some(f)).is_err() {
                    break;
                }
            }
        }
    });
    rx
}
