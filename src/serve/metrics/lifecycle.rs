//! What Cozystack has no metric for at all (its backup controller's are off, Velero's are not
//! scraped): how long restores take, how far a running restore's data transfer is, the phase of
//! the Velero Restore behind a RestoreJob, and when each application was last restored.
//! Every label takes a value from a closed set or names an object that exists (a RestoreJob,
//! an application): the series count grows with the restores in the cluster, never with time
//! or with what a controller writes into a message.

use super::cap::Kept;
use super::{FloatGauge, label};
use crate::analysis::{Driver, Report, RestoreView, split_velero_restores, velero_restores_for};
use crate::cluster::Snapshot;
use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    namespace: String,
    restore: String,
    driver: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RestoreLabels {
    namespace: String,
    restore: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VeleroPhaseLabels {
    namespace: String,
    restore: String,
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct AppLabels {
    namespace: String,
    kind: String,
    application: String,
}

/// Velero's restore phases (`velero.io/v1` RestorePhase); anything else is exported as `other`,
/// so that a newer Velero cannot add series without bound.
const VELERO_PHASES: [&str; 10] = [
    "New",
    "FailedValidation",
    "InProgress",
    "WaitingForPluginOperations",
    "WaitingForPluginOperationsPartiallyFailed",
    "Finalizing",
    "FinalizingPartiallyFailed",
    "Completed",
    "PartiallyFailed",
    "Failed",
];

/// `running`, `succeeded`, `failed`, or `unknown` (a terminal phase restorewatch does not know).
fn result(r: &RestoreView) -> &'static str {
    match (r.terminal, r.phase.as_str()) {
        (false, _) => "running",
        (true, "Succeeded") => "succeeded",
        (true, "Failed") => "failed",
        _ => "unknown",
    }
}

fn ids(r: &RestoreView) -> RestoreLabels {
    RestoreLabels {
        namespace: label(&r.id.namespace),
        restore: label(&r.id.name),
    }
}

/// Started -> completed, or started -> now while it runs; none before the controller starts it.
fn duration(r: &RestoreView, now: Timestamp) -> Option<f64> {
    let start = r.started_at.or(r.created)?;
    let end = if r.terminal { r.completed_at? } else { now };
    Some(end.duration_since(start).as_secs_f64().max(0.0))
}

/// The restores the cap lets through.
fn exported<'a>(report: &'a Report, kept: &'a Kept) -> impl Iterator<Item = &'a RestoreView> {
    report
        .restores
        .iter()
        .map(AsRef::as_ref)
        .filter(|r| kept.has(&r.id))
}

fn register_durations(reg: &mut Registry, report: &Report, kept: &Kept, now: Timestamp) {
    let fam = Family::<DurationLabels, FloatGauge>::default();
    for r in exported(report, kept) {
        if let Some(secs) = duration(r, now) {
            let RestoreLabels { namespace, restore } = ids(r);
            fam.get_or_create(&DurationLabels {
                namespace,
                restore,
                driver: r.driver.as_str().to_string(),
                result: result(r).to_string(),
            })
            .set(secs);
        }
    }
    reg.register(
        "restorewatch_restore_duration_seconds",
        "Seconds from a RestoreJob's start to its completion, or to now while it runs \
         (result=running)",
        fam,
    );
}

fn register_downloads(reg: &mut Registry, report: &Report, kept: &Kept) {
    let done = Family::<RestoreLabels, Gauge>::default();
    let total = Family::<RestoreLabels, Gauge>::default();
    for r in exported(report, kept).filter(|r| !r.terminal) {
        let progress: Vec<_> = r
            .disks
            .iter()
            .filter_map(|d| d.download.as_ref()?.progress)
            .collect();
        if progress.is_empty() {
            continue;
        }
        let sum = |f: fn(&crate::analysis::Progress) -> u64| {
            progress.iter().map(f).fold(0i64, |a, b| {
                a.saturating_add(i64::try_from(b).unwrap_or(i64::MAX))
            })
        };
        done.get_or_create(&ids(r)).set(sum(|p| p.done));
        total.get_or_create(&ids(r)).set(sum(|p| p.total));
    }
    reg.register(
        "restorewatch_datadownload_bytes_done",
        "Bytes the DataDownloads of a running VM restore have written, all disks together",
        done,
    );
    reg.register(
        "restorewatch_datadownload_bytes_expected",
        "Bytes the DataDownloads of a running VM restore have to write, all disks together",
        total,
    );
}

fn register_velero_phase(reg: &mut Registry, report: &Report, kept: &Kept, snapshot: &Snapshot) {
    let fam = Family::<VeleroPhaseLabels, Gauge>::default();
    for r in exported(report, kept).filter(|r| r.driver == Driver::Velero) {
        // Only this restore's own Velero Restore: a predecessor's is not its phase.
        let candidates = velero_restores_for(snapshot, &r.id.namespace, &r.id.name);
        let Some(v) = split_velero_restores(candidates, r.created).0 else {
            continue;
        };
        let phase = v.spec.phase.as_deref().unwrap_or("");
        let phase = VELERO_PHASES
            .iter()
            .find(|p| **p == phase)
            .copied()
            .unwrap_or(if phase.is_empty() { "New" } else { "other" });
        let RestoreLabels { namespace, restore } = ids(r);
        fam.get_or_create(&VeleroPhaseLabels {
            namespace,
            restore,
            phase: phase.to_string(),
        })
        .set(1);
    }
    reg.register(
        "restorewatch_velero_restore_phase",
        "1 for the phase of the Velero Restore behind each VM RestoreJob (other: a phase this \
         version does not know)",
        fam,
    );
}

fn register_last_success(reg: &mut Registry, report: &Report, kept: &Kept) {
    let mut last: BTreeMap<AppLabels, Timestamp> = BTreeMap::new();
    // Only the exported restores: each names an application of its own choosing, so the
    // applications are as many as the restores.
    for r in exported(report, kept).filter(|r| result(r) == "succeeded") {
        let (Some(t), Some(done)) = (&r.target, r.completed_at) else {
            continue;
        };
        let key = AppLabels {
            namespace: label(&r.id.namespace),
            kind: label(&t.kind),
            application: label(&t.name),
        };
        let e = last.entry(key).or_insert(done);
        *e = (*e).max(done);
    }
    let fam = Family::<AppLabels, FloatGauge>::default();
    for (k, t) in last {
        fam.get_or_create(&k)
            .set(t.as_millisecond() as f64 / 1000.0);
    }
    reg.register(
        "restorewatch_last_successful_restore_timestamp_seconds",
        "Completion time (Unix seconds) of the newest Succeeded RestoreJob of each application \
         that still exists in the cluster",
        fam,
    );
}

/// The families above, for one frame.
pub fn register(
    reg: &mut Registry,
    report: &Report,
    kept: &Kept,
    snapshot: &Snapshot,
    now: Timestamp,
) {
    register_durations(reg, report, kept, now);
    register_downloads(reg, report, kept);
    register_velero_phase(reg, report, kept, snapshot);
    register_last_success(reg, report, kept);
}
