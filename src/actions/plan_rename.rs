//! Planning the guarded rename: keep each disk as `<pvc>-orig-<hash>` the way the fixed
//! controller does, or finish a rename it left half done.

use super::ops::{DeleteReason, Op};
use super::plan::{
    ActionRequest, Plan, Refusal, Target, ctx_for, get_restore, refuse, restore_ref,
};
use crate::analysis::disks::{disk_names, ownership};
use crate::analysis::{ObjRef, Ownership, Settings};
use crate::cluster::Snapshot;
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, MAX_NAME_LEN, orig_pvc_name, parse_orig_name,
    short_hash,
};
use crate::model::objects::{Pv, Pvc, RestoreJob};
use crate::model::{Field, Kind, Obj};
use serde_json::json;
use std::sync::Arc;

pub(super) fn plan_rename(
    snap: &Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let settings = Settings::default();
    let ns = req.target.namespace();
    let (rj, only_disk) = match &req.target {
        Target::Restore { name, .. } => (get_restore(snap, ns, name, p)?, None),
        Target::Pvc { name, .. } => {
            let base = parse_orig_name(name)
                .map(|(b, _)| b.to_string())
                .unwrap_or_else(|| name.clone());
            let rj = rename_restore_for_pvc(snap, ns, name, &base)?;
            p.reads
                .push(ObjRef::new(Kind::RestoreJob, ns, &rj.meta.name));
            (rj, Some(base))
        }
    };
    p.restore = Some(restore_ref(rj));
    let ctx = ctx_for(snap, &settings, rj);
    if !ctx.in_place {
        return refuse(format!(
            "{} restores into a copy: there is nothing to keep",
            rj.meta.name
        ));
    }
    if let Some(b) = &rj.backup_ref {
        p.reads.push(ObjRef::new(Kind::Backup, ns, b));
    }
    let mut disks = disk_names(&ctx);
    if let Some(only) = only_disk {
        if !disks.contains(&only) {
            return refuse(format!(
                "{only} is not a disk of RestoreJob {}",
                rj.meta.name
            ));
        }
        disks = vec![only];
    }
    if disks.is_empty() {
        return refuse(format!(
            "cannot tell the disks of {} (no Backup record, no VM volumes)",
            rj.meta.name
        ));
    }
    for d in &disks {
        rename_disk(snap, rj, d, p)?;
    }
    p.outcome = if p.ops.is_empty() {
        "every disk is already kept: nothing to do".into()
    } else {
        format!(
            "each disk kept as <disk>-orig-{}, its PV Retain and bound to it; the original names free for the restore",
            short_hash(&rj.meta.name)
        )
    };
    Ok(())
}

/// The RestoreJob a `--pvc` rename belongs to: the `-orig` PVC's annotation or hash, else the one
/// non-terminal restore of the namespace that covers the disk.
fn rename_restore_for_pvc<'a>(
    snap: &'a Snapshot,
    ns: &str,
    name: &str,
    base: &str,
) -> Result<&'a Arc<Obj<RestoreJob>>, Refusal> {
    if let Some((_, hash)) = parse_orig_name(name) {
        let pvc = snap.pvcs.get(ns, name);
        if pvc.is_none() {
            // Not read yet, or gone: either way its annotation cannot be consulted.
            return Err(Refusal {
                reason: format!("PVC {ns}/{name} not found"),
                reads: vec![ObjRef::new(Kind::PersistentVolumeClaim, ns, name)],
            });
        }
        if let Some(uid) = pvc.and_then(|p| p.meta.annotation(ANN_RESTORE_JOB_UID)) {
            return snap
                .restore_jobs
                .in_namespace(ns)
                .find(|r| r.meta.uid == uid)
                .map_or_else(
                    || {
                        refuse(format!(
                            "{name} names RestoreJob UID {uid}, which no longer exists"
                        ))
                    },
                    Ok,
                );
        }
        let candidates: Vec<_> = snap
            .restore_jobs
            .in_namespace(ns)
            .filter(|r| short_hash(&r.meta.name) == hash)
            .collect();
        return match candidates.as_slice() {
            [one] => Ok(one),
            [] => refuse(format!("no RestoreJob in {ns} has the hash {hash}")),
            _ => refuse(format!(
                "several RestoreJobs share the hash {hash}: use --restore"
            )),
        };
    }
    let settings = Settings::default();
    let candidates: Vec<_> = snap
        .restore_jobs
        .in_namespace(ns)
        .filter(|r| {
            !r.phase.is_terminal()
                && disk_names(&ctx_for(snap, &settings, r))
                    .iter()
                    .any(|d| d == base)
        })
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => refuse(format!(
            "no running RestoreJob in {ns} restores {base}: create the RestoreJob first (the -orig name derives from its name), then keep the disk"
        )),
        _ => refuse(format!("several RestoreJobs restore {base}: use --restore")),
    }
}

fn claims(pv: &Pv, ns: &str, pvc: &Obj<Pvc>) -> bool {
    pv.claim_ref.as_ref().is_some_and(|c| {
        c.namespace == ns
            && c.name == pvc.meta.name
            && c.uid.as_deref().is_none_or(|u| u == pvc.meta.uid)
    })
}

fn rename_disk(
    snap: &Snapshot,
    rj: &Obj<RestoreJob>,
    disk: &str,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let ns = rj.meta.namespace.as_str();
    let orig_name = orig_pvc_name(disk, &rj.meta.name);
    if orig_name.len() > MAX_NAME_LEN {
        return refuse(format!(
            "{orig_name} is {} characters long, over the limit of {MAX_NAME_LEN}",
            orig_name.len()
        ));
    }
    p.reads
        .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, disk));
    p.reads
        .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, &orig_name));
    let pvc = snap.pvcs.get(ns, disk);
    let orig = snap.pvcs.get(ns, &orig_name);
    if let Some(o) = orig {
        match ownership(o, rj) {
            Ownership::Ours { .. } => {}
            Ownership::Foreign { other_uid } => {
                return refuse(format!(
                    "{orig_name} belongs to another RestoreJob ({}): it is never touched",
                    other_uid
                        .map(|u| format!("restore-job-uid {u}"))
                        .unwrap_or_else(
                            || "created before this RestoreJob, no restore-job-uid".into()
                        )
                ));
            }
            Ownership::Unknown => {
                return refuse(format!(
                    "{orig_name} has no restore-job-uid and no creation time: cannot tell whose it is"
                ));
            }
        }
    }
    let pv_name = match (orig, pvc) {
        (Some(o), _) => match &o.volume_name {
            Some(v) => v.clone(),
            None => {
                return refuse(format!(
                    "{orig_name} has no volumeName: cannot tell which PV it keeps"
                ));
            }
        },
        (None, Some(c)) => match (&c.volume_name, c.phase.as_deref()) {
            (Some(v), Some("Bound")) => v.clone(),
            _ => {
                p.notes.push(format!(
                    "{disk}: PVC not bound, nothing to keep (the controller deletes it)"
                ));
                return Ok(());
            }
        },
        (None, None) => {
            p.notes.push(format!("{disk}: no PVC, nothing to keep"));
            return Ok(());
        }
    };
    p.reads
        .push(ObjRef::new(Kind::PersistentVolume, "", &pv_name));
    let Some(pv) = snap.pvs.get("", &pv_name) else {
        return refuse(format!("PV {pv_name} not found"));
    };
    let claim_is_original = pvc
        .is_some_and(|c| claims(pv, ns, c) && c.volume_name.as_deref() == Some(pv_name.as_str()));
    let claim_is_orig = orig.is_some_and(|o| claims(pv, ns, o));
    if orig.is_none() && !claim_is_original {
        return refuse(format!(
            "PV {pv_name} is not claimed by {disk}: refusing to guess"
        ));
    }
    if orig.is_some()
        && !claim_is_original
        && !claim_is_orig
        && let Some(c) = &pv.claim_ref
        && !(c.namespace == ns && (c.name == disk || c.name == orig_name))
    {
        return refuse(format!(
            "PV {pv_name} is claimed by {}/{}, neither {disk} nor {orig_name}",
            c.namespace, c.name
        ));
    }
    let Field::Known(policy) = &pv.reclaim_policy else {
        return refuse(format!("PV {pv_name} reclaim policy unreadable"));
    };
    let recorded = pv
        .meta
        .annotation(ANN_ORIGINAL_RECLAIM_POLICY)
        .or_else(|| orig.and_then(|o| o.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY)))
        .map(str::to_string);
    // Once a rename has started, a Retain on the PV may be the rename's own: it is the original
    // policy only when no -orig PVC exists yet.
    let original_policy = recorded
        .clone()
        .or_else(|| (orig.is_none() || policy != "Retain").then(|| policy.clone()));
    if pv.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY).is_none() {
        match &original_policy {
            Some(v) => p.ops.push(Op::AnnotatePv {
                pv: pv_name.clone(),
                key: ANN_ORIGINAL_RECLAIM_POLICY.into(),
                value: v.clone(),
            }),
            None => p.notes.push(format!("{disk}: PV {pv_name} is already Retain and its earlier policy was never recorded; reclaim-orig will ask for it")),
        }
    }
    if policy != "Retain" {
        p.ops.push(Op::SetReclaimPolicy {
            pv: pv_name.clone(),
            from: policy.clone(),
            to: "Retain".into(),
        });
    }
    match orig {
        None => {
            let Some(c) = pvc else { return Ok(()) };
            let mut requests = serde_json::Map::new();
            if let Some(r) = &c.request {
                requests.insert("storage".into(), json!(r));
            }
            let mut spec = json!({
                "accessModes": c.access_modes,
                "resources": {"requests": requests},
                "volumeName": pv_name,
            });
            if let Some(sc) = &c.storage_class {
                spec["storageClassName"] = json!(sc);
            }
            if let Some(vm) = &c.volume_mode {
                spec["volumeMode"] = json!(vm);
            }
            p.ops.push(Op::CreateOrigPvc {
                namespace: ns.into(),
                name: orig_name.clone(),
                pv: pv_name.clone(),
                restore_job_uid: rj.meta.uid.clone(),
                recorded_policy: original_policy.clone().unwrap_or_default(),
                spec,
            });
        }
        Some(o) => {
            let mut ann = Vec::new();
            if o.meta.annotation(ANN_RESTORE_JOB_UID).is_none() {
                ann.push((ANN_RESTORE_JOB_UID.to_string(), rj.meta.uid.clone()));
            }
            if o.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY).is_none()
                && let Some(v) = &original_policy
            {
                ann.push((ANN_ORIGINAL_RECLAIM_POLICY.to_string(), v.clone()));
            }
            if !ann.is_empty() {
                p.ops.push(Op::AnnotatePvc {
                    namespace: ns.into(),
                    name: orig_name.clone(),
                    annotations: ann,
                });
            }
        }
    }
    if claim_is_original && let Some(c) = pvc {
        if c.meta.deleted.is_none() {
            p.ops.push(Op::DeletePvc {
                namespace: ns.into(),
                name: disk.into(),
                uid: c.meta.uid.clone(),
                reason: DeleteReason::RenameOriginal,
            });
        } else {
            p.notes.push(format!("{disk} is already being deleted"));
        }
    }
    if !claim_is_orig {
        p.ops.push(Op::SetClaimRef {
            pv: pv_name,
            namespace: ns.into(),
            name: orig_name,
            uid: orig.map(|o| o.meta.uid.clone()),
        });
    }
    Ok(())
}
