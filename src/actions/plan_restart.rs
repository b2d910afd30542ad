//! `restart-restore`: restore again under a new RestoreJob name. The controller never runs a
//! finished RestoreJob again, and re-creating one under the same name meets its predecessor's
//! `-orig` PVCs and Velero Restore; so the plan picks a fresh name whose `-orig` names are free,
//! whose hash collides with no running restore and that no Velero Restore claims, and creates it
//! only when the preflight of the new RestoreJob is clean. Every name it tries fits every limit
//! the API server and the controller put on it (a label value: 63 characters), cut short with
//! a hash when the old name leaves no room. The new RestoreJob's spec is never taken from what
//! restorewatch stores (redacted for display): the write reads the old RestoreJob fresh from
//! the API and copies its spec as the server holds it.

use super::ops::Op;
use super::plan::{ActionRequest, Plan, Refusal, list_ref, refuse, restore_target};
use crate::analysis::ObjRef;
use crate::analysis::codes::Severity;
use crate::analysis::controller;
use crate::analysis::forecast::names::fit_restore_name;
use crate::analysis::preflight::{Prediction, Preflight, preflight};
use crate::cluster::Snapshot;
use crate::model::names::{ANN_RESTARTED_FROM, VELERO_NAMESPACE};
use crate::model::objects::RestoreJob;
use crate::model::{Kind, Obj};
use std::sync::Arc;

/// Predictions a different name avoids: when one of them is among a candidate's, the next
/// candidate is tried (what comes with them, a disk not kept or a refusal, goes with them).
const NAME_BOUND: &[&str] = &[
    "orig-pvc-foreign",
    "orig-hash-collision",
    "velero-restore-stale",
    "restore-job-exists",
    "restore-job-running",
    "restore-name-not-label-value",
    "restore-name-invalid",
    "orig-name-too-long",
];

/// How many suffixes are tried before giving up.
const CANDIDATES: u32 = 50;

pub(super) fn plan_restart(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let old = restore_target(snap, req, p)?;
    let ns = old.meta.namespace.to_string();
    // Everything the preflight's analysis judges a restore by: a kind left unread here would
    // count as "none there" (a Velero Backup gone, a release already suspended, a DataVolume).
    for kind in [
        Kind::PersistentVolumeClaim,
        Kind::VirtualMachine,
        Kind::VirtualMachineInstance,
        Kind::HelmRelease,
        Kind::DataVolume,
        Kind::Postgres,
        Kind::CnpgCluster,
        Kind::ObjectStore,
    ] {
        p.reads.push(list_ref(kind, &ns));
    }
    p.reads.push(list_ref(Kind::PersistentVolume, ""));
    for kind in [Kind::VeleroRestore, Kind::VeleroBackup] {
        p.reads.push(list_ref(kind, VELERO_NAMESPACE));
    }
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
    let controller = controller::of_snapshot(snap);
    let mut skipped = Vec::new();
    for name in candidates(&old.meta.name) {
        let proposed = proposed(old, &name);
        let forecast = preflight(snap, &proposed, controller.clone());
        // The one prediction leaving the old restore running was chosen to accept: that
        // restore, and only it, still restoring the same application.
        let new_ref = ObjRef::new(Kind::RestoreJob, &ns, &name);
        let accepted = |x: &Prediction| {
            left_running && is_the_old_one_running(x, &old_ref, &new_ref, &old.meta.name)
        };
        let blocking: Vec<_> = forecast
            .predictions
            .iter()
            .filter(|x| x.severity > Severity::Info && !accepted(x))
            .collect();
        let name_bound = blocking.iter().any(|x| NAME_BOUND.contains(&x.code));
        if (!blocking.is_empty() && !name_bound) || !forecast.unknown.is_empty() {
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
                    .filter(|c| NAME_BOUND.contains(c))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
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
            restarted_from: old.meta.uid.to_string(),
            from: old.meta.name.to_string(),
        });
        return Ok(());
    }
    refuse(format!(
        "no free name among {} tried: {}",
        CANDIDATES,
        skipped.join("; ")
    ))
}

/// `restore-1` -> `restore-1-r2`, `restore-1-r3`, ...; `restore-1-r2` -> `restore-1-r3`, ...;
/// each fitted to 63 characters (`fit_restore_name`).
fn candidates(old: &str) -> impl Iterator<Item = String> {
    let (base, from) = match old.rsplit_once("-r") {
        Some((b, n)) if !b.is_empty() && n.parse::<u32>().is_ok_and(|n| n >= 2) => {
            (b.to_string(), n.parse::<u32>().unwrap_or(1) + 1)
        }
        _ => (old.to_string(), 2),
    };
    (from..from + CANDIDATES).map(move |n| fit_restore_name(&base, &format!("-r{n}")))
}

/// The new RestoreJob as the preflight judges it: the old one's spec (as parsed, never its
/// display text) under the new name, not created yet.
fn proposed(old: &Arc<Obj<RestoreJob>>, name: &str) -> Arc<Obj<RestoreJob>> {
    let mut rj = (**old).clone();
    rj.meta.name = crate::model::shared_str::SharedStr::own(name);
    rj.meta.uid = Default::default();
    rj.meta.created = None;
    rj.meta.deleted = None;
    rj.meta.generate_name = None;
    rj.spec.phase = crate::model::objects::RjPhase::New;
    rj.spec.started_at = crate::model::Field::Missing;
    rj.spec.completed_at = crate::model::Field::Missing;
    rj.spec.message = None;
    rj.spec.conditions.clear();
    Arc::new(rj)
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

/// What leaving the old RestoreJob running was chosen to accept: the two restores of the
/// application at once (`concurrent-restores` naming the old one and the new one only), and,
/// where only one controller branch does it, the newer controller refusing the new one while
/// the old one runs (`ConcurrentRestore`). A third restore, or a refusal under every branch
/// the generation leaves open, is still a refusal.
fn is_the_old_one_running(x: &Prediction, old: &ObjRef, new: &ObjRef, old_name: &str) -> bool {
    match x.code {
        "concurrent-restores" => {
            x.objects.contains(old) && x.objects.iter().all(|o| o == old || o == new)
        }
        "restore-failed" => {
            !x.branches.is_empty()
                && x.message
                    .contains(&format!("ConcurrentRestore: RestoreJob {old_name} "))
        }
        _ => false,
    }
}

/// What leaving the old RestoreJob running means, said plainly in the plan.
fn leave_notes(p: &mut Plan, old: &Obj<RestoreJob>, f: &Preflight) {
    let app = f.target.as_ref().map_or_else(
        || "the application".to_string(),
        |t| format!("{} {}", t.kind, t.name),
    );
    p.notes.push(format!(
        "you chose to leave RestoreJob {} running ({}): two restores of {app} will run at once; a controller before the fixes does not lock them against each other (each may halt it, keep and replace its disks without regard to the other, so what the application holds afterwards depends on the order in which they happen to run), and a newer one fails the new RestoreJob (ConcurrentRestore) while the old one runs. Deleting the old one later undoes nothing it already did",
        old.meta.name,
        phase_of(old)
    ));
}

/// Why the old RestoreJob's spec could not be copied at the write.
pub(super) enum SpecRead {
    Api(kube::Error),
    /// It is gone or is another object now.
    Changed(String),
    /// The same object, written since it was judged: judge it again before copying it.
    Edited(String),
}

/// The spec of RestoreJob `namespace/name` as the API server holds it now (a GET, no cache,
/// no redaction), only while its UID is still `uid` and its resourceVersion `judged_rv` (the
/// ones the plan judged).
pub(super) async fn fresh_spec(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    uid: &str,
    judged_rv: &str,
) -> Result<serde_json::Value, SpecRead> {
    let r = ObjRef::new(Kind::RestoreJob, namespace, name);
    let Some(obj) = super::fresh::api_for(client, &r)
        .get_opt(name)
        .await
        .map_err(SpecRead::Api)?
    else {
        return Err(SpecRead::Changed(format!(
            "RestoreJob {namespace}/{name} is gone: its spec cannot be copied"
        )));
    };
    if obj.metadata.uid.as_deref() != Some(uid) {
        return Err(SpecRead::Changed(format!(
            "RestoreJob {namespace}/{name} is another object now (UID {}, not {uid}): its spec is not copied",
            obj.metadata.uid.as_deref().unwrap_or("none")
        )));
    }
    let rv = obj.metadata.resource_version.as_deref().unwrap_or_default();
    if rv != judged_rv {
        return Err(SpecRead::Edited(format!(
            "RestoreJob {namespace}/{name} changed since its restart was judged (resourceVersion {rv}, judged {judged_rv}): judged again"
        )));
    }
    Ok(obj
        .data
        .get("spec")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({})))
}
