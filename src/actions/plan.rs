//! PURE planning: what an action would write, in order, given a picture of the cluster. The
//! same function plans the preview (from the watch cache) and each step of the execution (from
//! fresh reads), so the two can never disagree on the rules.

use super::ops::{DeleteReason, Op};
use crate::analysis::ctx::Ctx;
use crate::analysis::disks::{disk_names, ownership, pv_of};
use crate::analysis::{ActionKind, ObjRef, Ownership, Settings};
use crate::cluster::Snapshot;
use crate::model::names::{
    ANN_ORIGINAL_RECLAIM_POLICY, ANN_RESTORE_JOB_UID, MAX_NAME_LEN, orig_pvc_name, parse_orig_name,
    postgres_release, short_hash,
};
use crate::model::objects::{Pv, Pvc, RestoreJob};
use crate::model::{Field, Kind, Obj};
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Restore { namespace: String, name: String },
    Pvc { namespace: String, name: String },
}

impl Target {
    pub fn parse(kind: &str, s: &str) -> Result<Target, String> {
        let (ns, name) = s
            .split_once('/')
            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
            .ok_or_else(|| format!("expected NAMESPACE/NAME, got {s:?}"))?;
        let (namespace, name) = (ns.to_string(), name.to_string());
        Ok(if kind == "pvc" {
            Target::Pvc { namespace, name }
        } else {
            Target::Restore { namespace, name }
        })
    }

    pub fn namespace(&self) -> &str {
        match self {
            Target::Restore { namespace, .. } | Target::Pvc { namespace, .. } => namespace,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Target::Restore { name, .. } | Target::Pvc { name, .. } => name,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Restore { namespace, name } => write!(f, "RestoreJob {namespace}/{name}"),
            Target::Pvc { namespace, name } => write!(f, "PVC {namespace}/{name}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionRequest {
    pub action: ActionKind,
    pub target: Target,
    /// reclaim-orig: the operator's policy when none was recorded.
    pub policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    /// What the planner had looked at when it refused: a refusal made on a partial picture
    /// (the Backup not read yet) is only final once these were read.
    pub reads: Vec<ObjRef>,
}

fn refuse<T>(reason: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        reason: reason.into(),
        reads: Vec::new(),
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreRef {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub request: ActionRequest,
    /// The RestoreJob the action concerns, for its Event.
    pub restore: Option<RestoreRef>,
    pub ops: Vec<Op>,
    /// Facts the operator should read before confirming.
    pub notes: Vec<String>,
    /// What the cluster looks like afterwards, in a sentence.
    pub outcome: String,
    /// Objects the plan was made from: what the executor re-reads before each write.
    pub reads: Vec<ObjRef>,
}

impl Plan {
    /// The name the operator must type to confirm.
    pub fn confirm_name(&self) -> &str {
        self.request.target.name()
    }

    pub fn is_done(&self) -> bool {
        self.ops.is_empty()
    }
}

pub fn plan(snap: &Snapshot, req: &ActionRequest) -> Result<Plan, Refusal> {
    let mut p = Plan {
        request: req.clone(),
        restore: None,
        ops: Vec::new(),
        notes: Vec::new(),
        outcome: String::new(),
        reads: Vec::new(),
    };
    let planned = match req.action {
        ActionKind::ResumeRename => plan_rename(snap, req, &mut p),
        ActionKind::ReclaimOrig => plan_reclaim(snap, req, &mut p),
        ActionKind::FixServername => plan_servername(snap, req, &mut p),
        ActionKind::ResumeRelease => plan_release(snap, req, &mut p),
    };
    if let Err(mut r) = planned {
        r.reads = std::mem::take(&mut p.reads);
        r.reads.sort();
        r.reads.dedup();
        return Err(r);
    }
    p.reads.sort();
    p.reads.dedup();
    Ok(p)
}

fn restore_ref(rj: &Obj<RestoreJob>) -> RestoreRef {
    RestoreRef {
        namespace: rj.meta.namespace.clone(),
        name: rj.meta.name.clone(),
        uid: rj.meta.uid.clone(),
    }
}

fn get_restore<'a>(
    snap: &'a Snapshot,
    ns: &str,
    name: &str,
    p: &mut Plan,
) -> Result<&'a Arc<Obj<RestoreJob>>, Refusal> {
    p.reads.push(ObjRef::new(Kind::RestoreJob, ns, name));
    let rj = snap
        .restore_jobs
        .get(ns, name)
        .map_or_else(|| refuse(format!("RestoreJob {ns}/{name} not found")), Ok)?;
    restore_reads(rj, p);
    Ok(rj)
}

/// What the target and the disks of a restore are read from: its Backup, and the VM whose
/// volumes name the disks when the Backup has no record.
fn restore_reads(rj: &Obj<RestoreJob>, p: &mut Plan) {
    let ns = rj.meta.namespace.as_str();
    if let Some(b) = &rj.backup_ref {
        p.reads.push(ObjRef::new(Kind::Backup, ns, b));
    }
    if let Some(t) = &rj.target {
        p.reads.push(ObjRef::new(
            Kind::VirtualMachine,
            ns,
            &crate::model::names::vm_instance_release(&t.name),
        ));
    }
}

/// A Ctx only for the lookups planning shares with the analysis (target, disks); it reads no
/// clock, so the time given is irrelevant.
fn ctx_for<'a>(
    snap: &'a Snapshot,
    settings: &'a Settings,
    rj: &'a Arc<Obj<RestoreJob>>,
) -> Ctx<'a> {
    Ctx::new(snap, settings, jiff::Timestamp::UNIX_EPOCH, rj)
}

fn plan_rename(snap: &Snapshot, req: &ActionRequest, p: &mut Plan) -> Result<(), Refusal> {
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

fn plan_reclaim(snap: &Snapshot, req: &ActionRequest, p: &mut Plan) -> Result<(), Refusal> {
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
    let rj = match orig.and_then(|o| o.meta.annotation(ANN_RESTORE_JOB_UID)) {
        Some(uid) => snap
            .restore_jobs
            .in_namespace(ns)
            .find(|r| r.meta.uid == uid),
        None => snap
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

fn plan_servername(snap: &Snapshot, req: &ActionRequest, p: &mut Plan) -> Result<(), Refusal> {
    let Target::Restore {
        namespace: ns,
        name,
    } = &req.target
    else {
        return refuse("fix-servername takes --restore NAMESPACE/NAME");
    };
    let rj = get_restore(snap, ns, name, p)?;
    p.restore = Some(restore_ref(rj));
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

fn plan_release(snap: &Snapshot, req: &ActionRequest, p: &mut Plan) -> Result<(), Refusal> {
    let Target::Restore {
        namespace: ns,
        name,
    } = &req.target
    else {
        return refuse("resume-release takes --restore NAMESPACE/NAME");
    };
    let rj = get_restore(snap, ns, name, p)?;
    p.restore = Some(restore_ref(rj));
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
