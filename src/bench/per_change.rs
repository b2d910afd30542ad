//! What the live pipeline computes for one changed object, timed on its own: the figure behind
//! the target "incremental analysis of one change under 1 ms".
//!
//! `analyse_change` is the one place that says what the pipeline does per change. Today the
//! store task re-runs a full `analyze` on every batch, so that is what it does here; when the
//! pipeline gains incremental analysis, its entry point replaces this body and the bench's
//! figure follows without other edits.

use crate::analysis::{Report, Settings, analyze};
use crate::cluster::Frame;
use crate::model::parse_object;
use jiff::Timestamp;
use std::time::Instant;

/// The pipeline's work for one change: `before` is the frame on screen, `snap` is its snapshot
/// with the change applied.
pub fn analyse_change(
    before: &Frame,
    snap: &crate::cluster::Snapshot,
    settings: &Settings,
    now: Timestamp,
) -> Report {
    let _ = before;
    analyze(snap, settings, now)
}

/// Applies one annotation change to each PVC in `targets` in turn (a copy of the frame's
/// snapshot each time, outside the timing) and times `analyse_change`: milliseconds per change,
/// in order.
pub fn time_changes(
    frame: &Frame,
    targets: &[(String, String)],
    settings: &Settings,
    samples: usize,
) -> Vec<f64> {
    let mut out = Vec::new();
    for (i, (ns, name)) in targets.iter().cycle().take(samples).enumerate() {
        let Some(pvc) = frame.snapshot.objects.pvcs.get(ns, name) else {
            continue;
        };
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&pvc.raw) else {
            continue;
        };
        v["metadata"]["annotations"]["bench.restorewatch.io/change"] = i.to_string().into();
        let Ok(obj) = parse_object(v) else { continue };
        let mut snap = (*frame.snapshot).clone();
        snap.objects.insert(obj);
        let now = Timestamp::now();
        let t = Instant::now();
        let report = analyse_change(frame, &snap, settings, now);
        out.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(report);
    }
    out
}
