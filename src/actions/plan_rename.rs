//! Planning the guarded rename: keep each disk as `<pvc>-orig-<hash>` the way the fixed
//! controller does, or finish a rename it left half done.

use super::ops::{DeleteReason, Op};
use super::plan::{
    ActionRequest, Plan, Refusal, Target, ctx_for, get_restore, refuse, restore_reads, restore_ref,
};
use super::usage::pods_using;
use crate::analysis::ctx::Ctx;
use crate::analysis::disks::{disk_names, ownership};
use crate::analysis::reclaim_policy::{is_policy, original_policy};
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
            let rj = rename_restore_for_pvc(snap, ns, name, &base, p)?;
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
    let vm = ctx.is_vm_instance().then(|| ctx.vm_name()).flatten();
    if let Some(vm) = &vm {
        p.reads
            .push(ObjRef::new(Kind::VirtualMachineInstance, ns, vm));
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
        rename_disk(snap, &ctx, req, d, p).map_err(|r| {
            if req.target.is_restore() && disks.len() > 1 {
                Refusal {
                    reason: format!(
                        "{}; the other disks can still be kept one by one (--pvc {ns}/DISK)",
                        r.reason
                    ),
                    reads: r.reads,
                }
            } else {
                r
            }
        })?;
    }
    if !p.ops.is_empty() {
        // The writes move the disk: never under a finished restore or a running VM.
        if rj.phase.is_terminal() {
            return refuse(format!(
                "RestoreJob {} is {}: finishing the rename after the restore is over moves the disk out from under the application and restores nothing. Instead: stop the VM, remove this restore's own Pending -orig PVC (reclaim-orig), then restore again under a new RestoreJob name",
                rj.meta.name,
                rj.phase.as_str()
            ));
        }
        if let Some(vm) = &vm
            && let Some(vmi) = snap.vmis.get(ns, vm)
        {
            return refuse(format!(
                "VirtualMachineInstance {ns}/{} exists: the VM still runs on the disk. Stop it (runStrategy Halted) and wait until its VMI is gone, then keep the disk",
                vmi.meta.name
            ));
        }
    }
    p.outcome = if p.ops.is_empty() && p.waits.is_empty() {
        "every disk is already kept: nothing to do".into()
    } else if p.ops.is_empty() {
        "every disk is kept; the PV controller has still to bind the -orig PVC (it does on its resync, up to ~15 s): the action waits for it and writes nothing".into()
    } else {
        format!(
            "each disk kept as <disk>-orig-{}, its PV Retain and bound to it; the original names free for the restore",
            short_hash(&rj.meta.name)
        )
    };
    Ok(())
}

/// The RestoreJob a `--pvc` rename belongs to. For an `-orig` PVC: the one it belongs to, by
/// its `restore-job-uid` annotation, else by creation time (never by the hash alone). For a
/// disk: the non-terminal restore that covers it (through its Backup's record, as `--restore`
/// reads it), else the latest finished one (which then refuses, saying why).
fn rename_restore_for_pvc<'a>(
    snap: &'a Snapshot,
    ns: &str,
    name: &str,
    base: &str,
    p: &mut Plan,
) -> Result<&'a Arc<Obj<RestoreJob>>, Refusal> {
    let settings = Settings::default();
    let found = if parse_orig_name(name).is_some() {
        p.reads
            .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, name));
        let Some(pvc) = snap.pvcs.get(ns, name) else {
            // Not read yet, or gone: either way its annotation cannot be consulted.
            return refuse(format!("PVC {ns}/{name} not found"));
        };
        let owners: Vec<_> = snap
            .restore_jobs
            .in_namespace(ns)
            .filter(|r| orig_pvc_name(base, &r.meta.name) == name)
            .filter(|r| matches!(ownership(pvc, r), Ownership::Ours { .. }))
            .collect();
        match owners.as_slice() {
            [one] => *one,
            [] => {
                return refuse(match pvc.meta.annotation(ANN_RESTORE_JOB_UID) {
                    Some(uid) => format!(
                        "{name} was left by a deleted RestoreJob (restore-job-uid {uid}): there is no rename to finish; reclaim-orig can reclaim it"
                    ),
                    None => format!(
                        "{name} is no running RestoreJob's (no restore-job-uid, and every RestoreJob of its hash was created after it): there is no rename to finish"
                    ),
                });
            }
            _ => {
                return refuse(format!(
                    "several RestoreJobs could own {name} (same hash, no restore-job-uid): use --restore"
                ));
            }
        }
    } else {
        let mut covering = Vec::new();
        for r in snap.restore_jobs.in_namespace(ns) {
            restore_reads(r, p);
            if disk_names(&ctx_for(snap, &settings, r))
                .iter()
                .any(|d| d == base)
            {
                covering.push(r);
            }
        }
        let running: Vec<_> = covering
            .iter()
            .copied()
            .filter(|r| !r.phase.is_terminal())
            .collect();
        match running.as_slice() {
            [one] => *one,
            [] => match covering.iter().copied().max_by_key(|r| r.meta.created) {
                Some(latest) => latest,
                None => {
                    return refuse(format!(
                        "no RestoreJob in {ns} restores {base}: create the RestoreJob first (the -orig name derives from its name), then keep the disk"
                    ));
                }
            },
            _ => return refuse(format!("several RestoreJobs restore {base}: use --restore")),
        }
    };
    p.reads
        .push(ObjRef::new(Kind::RestoreJob, ns, &found.meta.name));
    restore_reads(found, p);
    Ok(found)
}

/// Whether the PV's claimRef names exactly this PVC, UID included. A claimRef without a UID
/// proves nothing: the delete guard would refuse to act on it, so the plan does too.
fn claims(pv: &Pv, ns: &str, pvc: &Obj<Pvc>) -> bool {
    pv.claim_ref.as_ref().is_some_and(|c| {
        c.namespace == ns && c.name == pvc.meta.name && c.uid.as_deref() == Some(&pvc.meta.uid)
    })
}

fn rename_disk(
    snap: &Snapshot,
    ctx: &Ctx,
    req: &ActionRequest,
    disk: &str,
    p: &mut Plan,
) -> Result<(), Refusal> {
    let rj = ctx.rj;
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
    let claim_without_uid = pv
        .claim_ref
        .as_ref()
        .filter(|c| c.uid.as_deref().is_none_or(str::is_empty))
        .map(|c| format!("{}/{}", c.namespace, c.name));
    if orig.is_none() && !claim_is_original {
        if let Some(c) = &claim_without_uid {
            return refuse(format!(
                "PV {pv_name}'s claimRef names {c} without a UID: it cannot prove it still claims {disk}, so the original would never be deleted safely; refusing before any write"
            ));
        }
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
    if orig.is_some()
        && !claim_is_orig
        && let Some(c) = pvc
        && c.meta.deleted.is_none()
        && c.volume_name.as_deref() == Some(pv_name.as_str())
        && !claim_is_original
    {
        // The original still names the PV but the claimRef cannot prove it is its claim: the
        // delete guard would refuse, so stop here, before the first write.
        return refuse(format!(
            "{disk} still names PV {pv_name}, whose claimRef does not carry {disk}'s UID: cannot prove the PV is its claim; refusing before any write"
        ));
    }
    let Field::Known(policy) = &pv.reclaim_policy.clone().map(|p| p.to_string()) else {
        return refuse(format!("PV {pv_name} reclaim policy unreadable"));
    };
    let writes_before = p.ops.len();
    // Recorded only when known (`analysis::reclaim_policy`, read as reclaim-orig reads it):
    // a Retain PV says nothing of its earlier policy, whatever the Events say (they expire).
    let class = pv
        .storage_class
        .as_deref()
        .and_then(|c| snap.storage_classes.get("", c));
    let known = original_policy(pv, orig.map(|o| &**o), class.map(|c| &***c));
    for bad in &known.invalid {
        p.notes.push(format!("{disk}: {bad}: treated as unknown"));
    }
    let asked = match req.policy.as_deref() {
        None => None,
        Some(a) if is_policy(a) => Some(a.to_string()),
        Some(a) => {
            return refuse(format!(
                "--policy must be Delete, Retain or Recycle (matched exactly), not {a:?}"
            ));
        }
    };
    let record = match (&known.known, asked) {
        (Some((k, source)), Some(a)) if *k != a => {
            return refuse(format!(
                "{disk}: PV {pv_name}'s original policy is {k} ({}); --policy {a} contradicts it",
                source.describe()
            ));
        }
        (Some((k, _)), _) => Some(k.clone()),
        (None, a) => a,
    };
    // An invalid record is replaced by a known value before the PV turns Retain: left as it
    // is, it would make the policy unknown to every later read, a resumed rename's included.
    if pv
        .meta
        .annotation(ANN_ORIGINAL_RECLAIM_POLICY)
        .is_none_or(|v| !is_policy(v))
    {
        match &record {
            Some(v) => p.ops.push(Op::AnnotatePv {
                pv: pv_name.clone(),
                key: ANN_ORIGINAL_RECLAIM_POLICY.into(),
                value: v.clone(),
            }),
            None => p.notes.push(format!(
                "{disk}: {}: nothing is recorded (reclaim-orig asks for it; --policy records the one you know)",
                known.why_unknown
            )),
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
                restore_job_uid: rj.meta.uid.to_string(),
                recorded_policy: record.clone().unwrap_or_default(),
                spec,
            });
        }
        Some(o) => {
            let mut ann = Vec::new();
            if o.meta.annotation(ANN_RESTORE_JOB_UID).is_none() {
                ann.push((ANN_RESTORE_JOB_UID.to_string(), rj.meta.uid.to_string()));
            }
            if o.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY).is_none()
                && let Some(v) = &record
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
                uid: c.meta.uid.to_string(),
                reason: DeleteReason::RenameOriginal,
            });
        } else {
            p.notes.push(format!("{disk} is already being deleted"));
        }
    }
    if !claim_is_orig {
        p.ops.push(Op::SetClaimRef {
            pv: pv_name.clone(),
            namespace: ns.into(),
            name: orig_name.clone(),
            uid: orig.map(|o| o.meta.uid.to_string()),
        });
    } else if let Some(c) = pvc
        && c.meta.deleted.is_none()
        && c.volume_name.as_deref() == Some(pv_name.as_str())
    {
        // The PV already points at the -orig PVC but the original still names it: the
        // original's delete step needs its claimRef (never delete what the PV does not claim),
        // and the restore would skip a PVC that still exists.
        return refuse(format!(
            "PV {pv_name} already points at {orig_name}, but {disk} still exists and names it: the rename cannot delete {disk} safely (the PV no longer claims it). Check {disk} and delete it by hand, then run again"
        ));
    } else if let Some(o) = orig
        && o.phase.as_deref() != Some("Bound")
    {
        // The rename is finished (the PV names the -orig PVC by name and UID, the original is
        // gone); binding the -orig PVC is the PV controller's part.
        p.waits
            .push(ObjRef::new(Kind::PersistentVolumeClaim, ns, &orig_name));
        p.notes.push(format!(
            "{disk}: kept as {orig_name}; waiting for the PV controller to bind it (it does on its resync, up to ~15 s)"
        ));
    }
    if p.ops.len() > writes_before {
        let users = pods_using(
            snap,
            ns,
            &pv_name,
            Some(pv),
            &[disk, orig_name.as_str()],
            &mut p.reads,
        );
        if !users.is_empty() {
            return refuse(format!(
                "the disk {disk} (PV {pv_name}) is in use by pod {}: a rename under a running VM moves the disk out from under it. Stop the VM first",
                users.join(", ")
            ));
        }
    }
    Ok(())
}
