//! Planning the other repairs: reclaim an `-orig` PVC without leaking its volume, set a
//! reverted serverName back, resume suspended HelmReleases.

use super::ops::{DeleteReason, Op};
use super::plan::{
    ActionRequest, Plan, Refusal, Target, ctx_for, refuse, restore_ref, restore_target,
};
use crate::analysis::disks::{disk_names, pv_of};
use crate::analysis::{ObjRef, Settings};
use crate::cluster::Snapshot;
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, parse_orig_name, postgres_release, short_hash,
};
use crate::model::ownership::{OrigOwner, orig_owner};
use crate::model::{Field, Kind};

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
    let Some((_, hash)) = parse_orig_name(name) else {
        return refuse(format!("{name} is not an -orig PVC (<pvc>-orig-<4 hex>)"));
    };
    p.reads
        .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, name));
    let orig = snap.pvcs.get(ns, name);
    // The PV is read by name before it is looked at: a PV that was not read must never look
    // like "no PV", or the PVC would be deleted without its policy set back.
    let pv = match orig {
        Some(o) => match &o.volume_name {
            Some(v) => {
                p.reads.push(ObjRef::new(Kind::PersistentVolume, "", v));
                pv_of(snap, o)
            }
            None => {
                return refuse(format!(
                    "{name} has no volumeName: cannot tell which PV it holds"
                ));
            }
        },
        None => {
            p.notes.push(format!(
                "{name} is already gone; a PV it left Retain is reported as a leak"
            ));
            p.outcome = "nothing to do".into();
            return Ok(());
        }
    };
    // Whose it is, by the one rule the analysis uses too (annotation, else creation time): a
    // PVC left by a deleted RestoreJob of the same name is not the running one's.
    let rj = match orig.map(|o| orig_owner(o, snap.restore_jobs.in_namespace(ns))) {
        Some(OrigOwner::Restore { rj, .. }) => Some(rj),
        Some(OrigOwner::Deleted { .. }) => None,
        // Cannot tell: the newest RestoreJob of the hash is presumed its maker (the safe side).
        _ => snap
            .restore_jobs
            .in_namespace(ns)
            .filter(|r| short_hash(&r.meta.name) == hash)
            .max_by_key(|r| r.meta.created),
    };
    if let Some(r) = rj {
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
    let mounted: Vec<&str> = snap
        .pods
        .in_namespace(ns)
        .filter(|pod| !pod.is_finished() && pod.claims.iter().any(|c| c == name))
        .map(|pod| pod.meta.name.as_str())
        .collect();
    if !mounted.is_empty() {
        return refuse(format!("{name} is mounted by pod {}", mounted.join(", ")));
    }
    if let Some(pv) = pv {
        p.reads
            .push(ObjRef::new(Kind::PersistentVolume, "", &pv.meta.name));
    }
    let recorded = orig
        .and_then(|o| o.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY))
        .or_else(|| pv.and_then(|v| v.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY)))
        .map(str::to_string);
    let class_policy = pv
        .and_then(|v| v.storage_class.clone())
        .and_then(|c| snap.storage_classes.get("", &c))
        .and_then(|sc| sc.effective_reclaim_policy().map(str::to_string));
    let target = match (&recorded, &req.policy) {
        (Some(r), Some(asked)) if r != asked => {
            return refuse(format!(
                "the recorded original policy is {r}; --policy {asked} contradicts it"
            ));
        }
        (Some(r), _) => r.clone(),
        (None, Some(asked)) if asked == "Delete" || asked == "Retain" => asked.clone(),
        (None, Some(asked)) => {
            return refuse(format!("--policy must be Delete or Retain, not {asked}"));
        }
        (None, None) if pv.is_none() => "Retain".into(),
        (None, None) => {
            return refuse(format!(
                "no original reclaim policy was recorded: choose --policy Delete or --policy Retain{}",
                class_policy
                    .map(|c| format!(" (its StorageClass says {c})"))
                    .unwrap_or_default()
            ));
        }
    };
    let bound_to_orig = pv.is_some_and(|v| {
        v.claim_ref.as_ref().is_some_and(|c| {
            &c.namespace == ns
                && &c.name == name
                && orig.is_none_or(|o| c.uid.as_deref().is_none_or(|u| u == o.meta.uid))
        })
    });
    if let Some(v) = pv {
        if !bound_to_orig {
            p.notes.push(format!(
                "PV {} is not bound to {name}: it is left alone",
                v.meta.name
            ));
        } else if let Field::Known(current) = &v.reclaim_policy {
            if current != &target {
                p.ops.push(Op::SetReclaimPolicy {
                    pv: v.meta.name.clone(),
                    from: current.clone(),
                    to: target.clone(),
                });
            }
        } else {
            return refuse(format!("PV {} reclaim policy unreadable", v.meta.name));
        }
    }
    match orig {
        Some(o) if o.meta.deleted.is_none() => p.ops.push(Op::DeletePvc {
            namespace: ns.clone(),
            name: name.clone(),
            uid: o.meta.uid.clone(),
            reason: DeleteReason::ReclaimOrig,
        }),
        Some(_) => p.notes.push(format!("{name} is already being deleted")),
        None => p.notes.push(format!("{name} is already gone")),
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
            namespace: ns.clone(),
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
                namespace: ns.clone(),
                name: r,
            });
        }
    }
    p.outcome = "Flux reconciles the application's releases again".into();
    Ok(())
}
