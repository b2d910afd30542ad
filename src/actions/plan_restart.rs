//! `restart-restore`: restore again under a new RestoreJob name. The controller never runs a
//! finished RestoreJob again, and re-creating one under the same name meets its predecessor's
//! `-orig` PVCs and Velero Restore; so the plan picks a fresh name whose `-orig` names are free,
//! whose hash collides with no running restore and that no Velero Restore claims, and creates it
//! only when the preflight of the new RestoreJob is clean.

use super::ops::Op;
use super::plan::{ActionRequest, Plan, Refusal, list_ref, refuse, restore_target};
use crate::analysis::ObjRef;
use crate::analysis::codes::Severity;
use crate::analysis::controller;
use crate::analysis::preflight::{Prediction, Preflight, preflight};
use crate::cluster::Snapshot;
use crate::model::names::{ANN_RESTARTED_FROM, MAX_NAME_LEN, VELERO_NAMESPACE};
use crate::model::objects::RestoreJob;
use crate::model::{AnyObject, Kind, Obj, parse_object};
use serde_json::{Value, json};
use std::sync::Arc;

/// Predictions a different name avoids: the next candidate is tried instead.
const NAME_BOUND: &[&str] = &[
    "orig-pvc-foreign",
    "orig-hash-collision",
    "velero-restore-stale",
    "restore-job-exists",
    "restore-job-running",
];

/// How many suffixes are tried before giving up.
const CANDIDATES: u32 = 50;

pub(super) fn plan_restart(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let old = restore_target(snap, req, p)?;
    let ns = old.meta.namespace.clone();
    for kind in [
        Kind::PersistentVolumeClaim,
        Kind::VirtualMachineInstance,
        Kind::Postgres,
        Kind::CnpgCluster,
        Kind::ObjectStore,
    ] {
        p.reads.push(list_ref(kind, &ns));
    }
    p.reads.push(list_ref(Kind::PersistentVolume, ""));
    p.reads
        .push(list_ref(Kind::VeleroRestore, VELERO_NAMESPACE));
    if let Some(done) = snap
        .restore_jobs
        .in_namespace(&ns)
        .find(|r| r.meta.annotation(ANN_RESTARTED_FROM) == Some(old.meta.uid.as_str()))
    {
        p.outcome = format!(
            "already restarted as RestoreJob {ns}/{} ({})",
            done.meta.name,
            phase_of(done)
        );
        return Ok(());
    }
    // The old one still runs: restoring again races it, unless the operator chose that.
    let left_running = !old.phase.is_terminal();
    if left_running && !req.leave_running {
        return refuse(format!(
            "RestoreJob {} is {}: the controller may still halt, rename or restore for it, and a second restore of the same application is not locked against it. Wait until it finishes; a stuck one must be deleted (which undoes nothing it did) before restoring again, with `restorewatch preflight` first; or choose to restore again while it runs, leaving it running (the CLI's --leave-old-running)",
            old.meta.name,
            phase_of(old)
        ));
    }
    let old_ref = ObjRef::new(Kind::RestoreJob, &ns, &old.meta.name);
    let spec = spec_of(old);
    let controller = controller::of_snapshot(snap);
    let mut skipped = Vec::new();
    for name in candidates(&old.meta.name) {
        let Some(proposed) = proposed(&ns, &name, &old.meta.uid, &spec) else {
            continue;
        };
        let forecast = preflight(snap, &proposed, controller.clone());
        // The one prediction leaving the old restore running was chosen to accept: that
        // restore, and only it, still restoring the same application.
        let accepted = |x: &Prediction| left_running && is_the_old_one_running(x, &old_ref);
        let blocking: Vec<_> = forecast
            .predictions
            .iter()
            .filter(|x| x.severity > Severity::Info && !accepted(x))
            .collect();
        if blocking.iter().any(|x| !NAME_BOUND.contains(&x.code)) || !forecast.unknown.is_empty() {
            return refuse(format!(
                "the preflight of a new RestoreJob {name} is not clean: {}",
                problems(&forecast, accepted)
            ));
        }
        if !blocking.is_empty() {
            skipped.push(format!(
                "{name} ({})",
                blocking
                    .iter()
                    .map(|x| x.code)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        }
        describe(p, old, &name, &skipped, &forecast);
        if left_running {
            leave_notes(p, old, &forecast);
        }
        p.ops.push(Op::CreateRestoreJob {
            namespace: ns.clone(),
            name,
            restarted_from: old.meta.uid.clone(),
            spec,
        });
        return Ok(());
    }
    refuse(format!(
        "no free name among {} tried: {}",
        CANDIDATES,
        skipped.join("; ")
    ))
}

/// `restore-1` -> `restore-1-r2`, `restore-1-r3`, ...; `restore-1-r2` -> `restore-1-r3`, ...
fn candidates(old: &str) -> impl Iterator<Item = String> {
    let (base, from) = match old.rsplit_once("-r") {
        Some((b, n)) if !b.is_empty() && n.parse::<u32>().is_ok_and(|n| n >= 2) => {
            (b.to_string(), n.parse::<u32>().unwrap_or(1) + 1)
        }
        _ => (old.to_string(), 2),
    };
    (from..from + CANDIDATES)
        .map(move |n| format!("{base}-r{n}"))
        .filter(|n| n.len() <= MAX_NAME_LEN)
}

fn spec_of(old: &Obj<RestoreJob>) -> Value {
    serde_json::from_str::<Value>(&old.text())
        .ok()
        .and_then(|v| v.get("spec").cloned())
        .unwrap_or_else(|| json!({}))
}

fn proposed(ns: &str, name: &str, from: &str, spec: &Value) -> Option<Arc<Obj<RestoreJob>>> {
    let v = json!({
        "apiVersion": Kind::RestoreJob.info().api_version(),
        "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": ns, "annotations": {ANN_RESTARTED_FROM: from}},
        "spec": spec,
    });
    match parse_object(v) {
        Ok(AnyObject::RestoreJob(rj)) => Some(rj),
        _ => None,
    }
}

fn problems(f: &Preflight, accepted: impl Fn(&Prediction) -> bool) -> String {
    f.predictions
        .iter()
        .filter(|x| x.severity > Severity::Info && !accepted(x))
        .map(|x| format!("{}: {}", x.code, x.message))
        .chain(f.unknown.iter().map(|u| format!("unknown: {u}")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The plan's notes: why this name, and what the preflight of the new RestoreJob predicts.
fn describe(p: &mut Plan, old: &Obj<RestoreJob>, name: &str, skipped: &[String], f: &Preflight) {
    let hash = crate::model::names::short_hash(name);
    p.notes.push(format!(
        "name {name}: no RestoreJob has it, its hash {hash} is no running restore's, no Velero Restore carries its owner labels, and every -orig name it maps to is free{}",
        if skipped.is_empty() {
            String::new()
        } else {
            format!(" (passed over: {})", skipped.join("; "))
        }
    ));
    if old.phase.as_str() == "Succeeded" {
        p.notes.push(format!(
            "RestoreJob {} Succeeded: the new one restores the Backup again over the current disks",
            old.meta.name
        ));
    }
    p.notes
        .push(format!("preflight: controller {}", f.controller.summary()));
    for d in &f.disks {
        p.notes
            .push(format!("preflight: {} kept as {}", d.disk, d.orig));
    }
    for x in &f.predictions {
        p.notes
            .push(format!("preflight: {}: {}", x.code, x.message));
    }
    p.outcome = format!(
        "RestoreJob {}/{name} exists with the spec of {}; the backup controller runs it",
        old.meta.namespace, old.meta.name
    );
}

fn phase_of(rj: &Obj<RestoreJob>) -> &str {
    match rj.phase.as_str() {
        "" => "not picked up yet",
        ph => ph,
    }
}

/// The preflight's `concurrent-restores` about the old RestoreJob alone: a third restore of
/// the same application is still a refusal.
fn is_the_old_one_running(x: &Prediction, old: &ObjRef) -> bool {
    x.code == "concurrent-restores" && x.objects.len() == 1 && x.objects[0] == *old
}

/// What leaving the old RestoreJob running means, said plainly in the plan.
fn leave_notes(p: &mut Plan, old: &Obj<RestoreJob>, f: &Preflight) {
    let app = f.target.as_ref().map_or_else(
        || "the application".to_string(),
        |t| format!("{} {}", t.kind, t.name),
    );
    p.notes.push(format!(
        "you chose to leave RestoreJob {} running ({}): two restores of {app} will run at once, and the controller does not lock them against each other. each may halt it, keep and replace its disks without regard to the other, so what the application holds afterwards depends on the order in which they happen to run. Deleting the old one later undoes nothing it already did",
        old.meta.name,
        phase_of(old)
    ));
}
