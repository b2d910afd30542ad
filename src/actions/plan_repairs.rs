//! Planning the other repairs: reclaim an `-orig` PVC without leaking its volume, set a
//! reverted serverName back, resume suspended HelmReleases.

use super::ops::{DeleteReason, Op};
use super::plan::{
    ActionRequest, Plan, Refusal, Target, ctx_for, list_ref, refuse, restore_ref, restore_target,
};
use super::usage::pods_using;
use crate::analysis::copy_proof::{copy_proof, what_proves};
use crate::analysis::disks::{disk_names, pv_of};
use crate::analysis::reclaim_policy::original_policy;
use crate::analysis::{ObjRef, Settings};
use crate::cluster::Snapshot;
use crate::model::names::{VELERO_NAMESPACE, orig_pvc_name, parse_orig_name, postgres_release};
use crate::model::objects::{Pvc, RestoreJob};
use crate::model::ownership::{OrigOwner, orig_owner};
use crate::model::{Field, Kind, Obj};
use std::sync::Arc;

pub(super) fn plan_reclaim(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let Target::Pvc {
        namespace: ns,
        name,
    } = &req.target
    else {
        return refuse("reclaim-orig takes --pvc NAMESPACE/NAME-orig-HASH");
    };
    let Some((base, _)) = parse_orig_name(name) else {
        return refuse(format!("{name} is not an -orig PVC (<pvc>-orig-<4 hex>)"));
    };
    p.reads
        .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, name));
    let Some(orig) = snap.pvcs.get(ns, name) else {
        p.notes.push(format!(
            "{name} is already gone; a PV it left Retain is reported as a leak"
        ));
        p.outcome = "nothing to do".into();
        return Ok(());
    };
    // The PV is read by name before it is looked at: a PV that was not read must never look
    // like "no PV", or the PVC would be deleted without its policy set back.
    let Some(pv_name) = orig.volume_name.clone() else {
        return refuse(format!(
            "{name} has no volumeName: cannot tell which PV it holds"
        ));
    };
    p.reads
        .push(ObjRef::new(Kind::PersistentVolume, "", &pv_name));
    let pv = pv_of(snap, orig);
    // Whose copy it is: the RestoreJob its annotation names, else the one of its name that
    // existed when it was created; never the newest RestoreJob that merely shares the name.
    let owner = owner_of(snap, orig, base);
    match owner {
        Some(r) => {
            p.reads
                .push(ObjRef::new(Kind::RestoreJob, ns, &r.meta.name));
            p.restore = Some(restore_ref(r));
            if !r.phase.is_terminal() {
                return refuse(format!(
                    "RestoreJob {} is {}: the -orig PVC is its safety copy until it finishes",
                    r.meta.name,
                    if r.phase.as_str().is_empty() {
                        "new"
                    } else {
                        r.phase.as_str()
                    }
                ));
            }
        }
        None => p.notes.push(format!(
            "{name} was left by a deleted RestoreJob (created {})",
            orig.meta
                .created
                .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_else(|| "at an unknown time".into())
        )),
    }
    let users = pods_using(
        snap,
        ns,
        &pv_name,
        pv.map(|v| &***v),
        &[name.as_str()],
        &mut p.reads,
    );
    if !users.is_empty() {
        return refuse(format!(
            "PV {pv_name} of {name} is in use by pod {}: nothing is changed while a Pod mounts it",
            users.join(", ")
        ));
    }
    proof_check(snap, req, ns, name, base, p)?;
    let class = pv
        .and_then(|v| v.storage_class.clone())
        .and_then(|c| snap.storage_classes.get("", &c));
    let known = pv.map(|v| original_policy(v, Some(orig), class.map(|c| &***c)));
    for bad in known.iter().flat_map(|k| &k.invalid) {
        p.notes.push(format!("{bad}: treated as unknown"));
    }
    let asked = match req.policy.as_deref() {
        None => None,
        Some(a @ ("Delete" | "Retain")) => Some(a.to_string()),
        Some(a) => {
            return refuse(format!(
                "--policy must be Delete or Retain (matched exactly), not {a:?}"
            ));
        }
    };
    let target = match (known.as_ref().and_then(|k| k.known.as_ref()), asked) {
        (Some((r, source)), Some(asked)) if r != &asked => {
            return refuse(format!(
                "the original policy is {r} ({}); --policy {asked} contradicts it",
                source.describe()
            ));
        }
        (Some((r, _)), _) => r.clone(),
        (None, Some(asked)) => asked,
        (None, None) if pv.is_none() => "Retain".into(),
        (None, None) => {
            return refuse(format!(
                "{}: choose --policy Delete or --policy Retain{}",
                known
                    .as_ref()
                    .map(|k| k.why_unknown.as_str())
                    .unwrap_or("the original policy is unknown"),
                known
                    .as_ref()
                    .and_then(|k| k.class_policy.as_ref())
                    .map(|c| format!(" (its StorageClass says {c})"))
                    .unwrap_or_default()
            ));
        }
    };
    // Only our own PV: its claimRef names this PVC, UID included. A claimRef with this name
    // but another UID (or none) cannot be told apart from an older PVC of the same name.
    let claim = pv.and_then(|v| v.claim_ref.as_ref());
    let named = claim.is_some_and(|c| &c.namespace == ns && &c.name == name);
    let bound_to_orig = named && claim.is_some_and(|c| c.uid.as_deref() == Some(&orig.meta.uid));
    if named && !bound_to_orig {
        return refuse(format!(
            "PV {pv_name}'s claimRef names {name} but not its UID {}: it may be an older PVC's of that name; nothing is changed",
            orig.meta.uid
        ));
    }
    if let Some(v) = pv {
        if !bound_to_orig {
            p.notes.push(format!(
                "PV {} is not bound to {name}: it is left alone",
                v.meta.name
            ));
        } else if let Field::Known(current) = &v.reclaim_policy.clone().map(|p| p.to_string()) {
            if current != &target {
                p.ops.push(Op::SetReclaimPolicy {
                    pv: v.meta.name.to_string(),
                    from: current.clone(),
                    to: target.clone(),
                });
            }
        } else {
            return refuse(format!("PV {} reclaim policy unreadable", v.meta.name));
        }
    }
    if orig.meta.deleted.is_none() {
        p.ops.push(Op::DeletePvc {
            namespace: ns.clone(),
            name: name.clone(),
            uid: orig.meta.uid.to_string(),
            reason: DeleteReason::ReclaimOrig,
        });
    } else {
        p.notes.push(format!("{name} is already being deleted"));
    }
    let pv_name = pv
        .map(|v| v.meta.name.clone())
        .unwrap_or_else(|| "(none)".into());
    p.outcome = match (bound_to_orig, target.as_str()) {
        (true, "Delete") => format!(
            "PV {pv_name} is Delete: once the PVC is gone the provisioner deletes the volume and its data"
        ),
        (true, _) => format!(
            "PV {pv_name} stays Released with its data; delete it by hand when no longer needed"
        ),
        (false, _) => "only the PVC is deleted".into(),
    };
    Ok(())
}

/// The RestoreJob an `-orig` PVC belongs to, if it still exists, by the one rule the analysis
/// uses too (`model::ownership`: its `restore-job-uid` annotation, else creation time): a PVC
/// left by a deleted RestoreJob of the same name is not the running one's.
fn owner_of<'a>(
    snap: &'a Snapshot,
    orig: &Obj<Pvc>,
    base: &str,
) -> Option<&'a Arc<Obj<RestoreJob>>> {
    let ns = orig.meta.namespace.as_str();
    match orig_owner(orig, snap.restore_jobs.in_namespace(ns)) {
        OrigOwner::Restore { rj, .. } => Some(rj),
        OrigOwner::Deleted { .. } => None,
        // Cannot tell: the newest RestoreJob of its name is presumed its maker (the safe side:
        // a running one refuses).
        OrigOwner::Unknown => snap
            .restore_jobs
            .in_namespace(ns)
            .filter(|r| orig_pvc_name(base, &r.meta.name) == orig.meta.name)
            .max_by_key(|r| r.meta.created),
    }
}

/// Deleting an `-orig` PVC is irreversible: without proof that its disk was restored
/// (`analysis::copy_proof`) it may be the only copy, and only the operator's consent, given by
/// name, lets it go.
fn proof_check(
    snap: &Snapshot,
    req: &ActionRequest,
    ns: &str,
    name: &str,
    base: &str,
    p: &mut Plan,
) -> Result<(), Refusal> {
    // What the proof reads: the restored PVC, the RestoreJobs (listed with the namespace),
    // the Velero Restores and their DataDownloads in the Velero namespace.
    p.reads
        .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, base));
    p.reads
        .push(list_ref(Kind::VeleroRestore, VELERO_NAMESPACE));
    p.reads.push(list_ref(Kind::DataDownload, VELERO_NAMESPACE));
    let Some(orig) = snap.pvcs.get(ns, name) else {
        return Ok(());
    };
    let proof = copy_proof(snap, orig);
    let Some(missing) = proof.missing() else {
        p.notes.push(proof.describe());
        return Ok(());
    };
    if !req.discard_only_copy {
        return refuse(format!(
            "{name} may be the only copy of {base}: {missing}. Keep it: nothing else proves the restore ({} would). To discard it anyway, repeat with --discard-only-copy",
            what_proves(base)
        ));
    }
    p.notes.push(format!(
        "{name} may be the only copy of {base} ({missing}); discarding it as asked (--discard-only-copy)"
    ));
    Ok(())
}

pub(super) fn plan_servername(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let rj = restore_target(snap, req, p)?;
    let (ns, name) = (&rj.meta.namespace, &rj.meta.name);
    let settings = Settings::default();
    let ctx = ctx_for(snap, &settings, rj);
    let Some(app) = ctx.app().map(str::to_string) else {
        return refuse("the RestoreJob has no target application");
    };
    if ctx.target_kind() != Some("Postgres") {
        return refuse(format!("{name} does not restore a Postgres application"));
    }
    p.reads.push(ObjRef::new(Kind::Postgres, ns, &app));
    let Some(new_name) = snap
        .postgreses
        .get(ns, &app)
        .and_then(|a| a.new_server_name.clone())
    else {
        return refuse(format!(
            "Postgres {app} has no bootstrap.newServerName: this controller predates the fix; nothing to repair to"
        ));
    };
    let cluster_name = postgres_release(&app);
    p.reads
        .push(ObjRef::new(Kind::CnpgCluster, ns, &cluster_name));
    let Some(cluster) = snap.clusters.get(ns, &cluster_name) else {
        return refuse(format!(
            "Cluster {cluster_name} does not exist yet: retry once the chart has rendered it"
        ));
    };
    if cluster.meta.deleted.is_some() {
        return refuse(format!(
            "Cluster {cluster_name} is being deleted (the purge): retry once the new one is rendered"
        ));
    }
    // Before the purge the live Cluster is the old one: pointing it at the fresh prefix makes
    // the re-rendered Cluster fail "Expected empty archive". The analysis's own test decides.
    if !crate::analysis::postgres::is_new_cluster(&ctx, cluster) {
        return refuse(format!(
            "Cluster {cluster_name} is not the one re-rendered for {name} (it predates the purge): pointing it at {new_name} now would make the new Cluster fail \"Expected empty archive\". Retry once the chart has re-rendered it"
        ));
    }
    let Some(index) = cluster.plugin_index else {
        return refuse(format!("Cluster {cluster_name} has no barman-cloud plugin"));
    };
    let current = match &cluster.plugin_server_name {
        Field::Known(s) => s.clone(),
        Field::Missing => {
            return refuse("the plugin has no serverName parameter: nothing to test against");
        }
        Field::Invalid(raw) => {
            return refuse(format!("the plugin serverName is unreadable ({raw})"));
        }
    };
    // Already right: nothing to do whatever the phase, so a rerun after success (or a restore
    // that finished a moment after the repair) is a no-op, not a refusal.
    if current == new_name {
        p.outcome = format!("Cluster {cluster_name} already archives under {new_name}");
        return Ok(());
    }
    if rj.phase.is_terminal() {
        return refuse(format!(
            "{name} is {}: the repair only helps while the restore runs",
            rj.phase.as_str()
        ));
    }
    if current != new_name {
        p.ops.push(Op::SetServerName {
            namespace: ns.to_string(),
            cluster: cluster_name.clone(),
            index,
            from: current,
            to: new_name.clone(),
        });
    }
    p.outcome = format!(
        "Cluster {cluster_name} archives under {new_name}; the restore can pass its WAL archive check"
    );
    Ok(())
}

pub(super) fn plan_release(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let rj = restore_target(snap, req, p)?;
    let (ns, name) = (&rj.meta.namespace, &rj.meta.name);
    if !rj.phase.is_terminal() && rj.meta.deleted.is_none() {
        return refuse(format!(
            "{name} is still {}: it suspended the releases on purpose",
            if rj.phase.as_str().is_empty() {
                "new"
            } else {
                rj.phase.as_str()
            }
        ));
    }
    let settings = Settings::default();
    let ctx = ctx_for(snap, &settings, rj);
    if let Some(t) = &ctx.target
        && let Some(other) = snap.restore_jobs.in_namespace(ns).find(|r| {
            r.meta.name != *name
                && !r.phase.is_terminal()
                && ctx_for(snap, &settings, r).target.as_ref() == Some(t)
        })
    {
        return refuse(format!(
            "RestoreJob {} is restoring the same application now",
            other.meta.name
        ));
    }
    let disks = if ctx.driver == crate::analysis::Driver::Velero {
        disk_names(&ctx)
    } else {
        Vec::new()
    };
    for r in crate::analysis::common::suspended_releases(&ctx, &disks) {
        p.reads.push(ObjRef::new(Kind::HelmRelease, ns, &r));
        if snap
            .helm_releases
            .get(ns, &r)
            .is_some_and(|h| h.is_suspended() == Some(true))
        {
            p.ops.push(Op::ResumeRelease {
                namespace: ns.to_string(),
                name: r,
            });
        }
    }
    p.outcome = "Flux reconciles the application's releases again".into();
    Ok(())
}
