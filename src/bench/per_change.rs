//! What the live pipeline computes for one changed object, timed on its own: the figure behind
//! the target "incremental analysis of one change under 1 ms".
//!
//! `PerChange` is the one place that says what the pipeline does per change: the live
//! pipeline's incremental `Analyzer` (built once on the frame's snapshot, outside the timing)
//! applying one changed object. Should the pipeline's per-change step change again, these two
//! bodies follow it and the bench's figure with them.

use crate::analysis::{Report, Settings};
use crate::model::Kind;
use crate::model::snapshot::{ObjKey, Snapshot};
use crate::pipeline::{Analyzer, Changes, Frame};
use std::sync::Arc;
use std::time::Instant;

/// The pipeline's state between changes, and what it does on one.
pub struct PerChange {
    analyzer: Analyzer,
}

impl PerChange {
    pub fn new(frame: &Frame, settings: &Settings) -> PerChange {
        PerChange {
            analyzer: Analyzer::new(
                Arc::clone(&frame.snapshot),
                settings.clone(),
                frame.analyzed_at,
            ),
        }
    }

    /// The report for `snap`, reached from the previous snapshot by changing one object.
    pub fn change(&mut self, snap: Arc<Snapshot>, kind: Kind, key: ObjKey) -> Arc<Report> {
        let mut changes = Changes::default();
        changes.object(kind, key);
        self.analyzer.apply(snap, &changes)
    }
}

/// Applies one annotation change to each PVC in `targets` in turn (building the next snapshot
/// outside the timing) and times `PerChange::change`: milliseconds per change, in order.
pub fn time_changes(
    frame: &Frame,
    targets: &[(String, String)],
    settings: &Settings,
    samples: usize,
) -> Vec<f64> {
    let mut pipeline = PerChange::new(frame, settings);
    let mut snap = Arc::clone(&frame.snapshot);
    let mut out = Vec::new();
    for (i, (ns, name)) in targets.iter().cycle().take(samples).enumerate() {
        let Some(pvc) = snap.objects.pvcs.get(ns, name) else {
            continue;
        };
        // The watch keeps no text of a PVC: the change is made to what it holds, as a new
        // resourceVersion of the same object.
        let mut obj = (**pvc).clone();
        obj.meta.resource_version = format!("bench-change-{i}").into();
        let mut next = (*snap).clone();
        next.objects
            .insert(crate::model::AnyObject::PersistentVolumeClaim(Arc::new(
                obj,
            )));
        snap = Arc::new(next);
        let key = ObjKey::new(ns.clone(), name.clone());
        let t = Instant::now();
        let report = pipeline.change(Arc::clone(&snap), Kind::PersistentVolumeClaim, key);
        out.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(report);
    }
    out
}
