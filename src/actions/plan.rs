//! PURE planning: what an action would write, in order, given a picture of the cluster. The
//! same function plans the preview (from the watch cache) and each step of the execution (from
//! fresh reads), so the two can never disagree on the rules.

use super::ops::Op;
use crate::analysis::ctx::Ctx;
use crate::analysis::{ActionKind, ObjRef, Settings};
use crate::cluster::Snapshot;
use crate::model::objects::RestoreJob;
use crate::model::{Kind, Obj};
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
        // Checked as the API server would before a request path is built from them.
        crate::model::k8s_names::dns_label("the namespace", ns).map_err(|e| e.to_string())?;
        crate::model::k8s_names::dns_subdomain("the name", name).map_err(|e| e.to_string())?;
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

    pub fn is_restore(&self) -> bool {
        matches!(self, Target::Restore { .. })
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
    /// reclaim-orig: the operator knows the `-orig` PVC may hold the only good copy of the disk
    /// (the restore failed, or the restored disk is missing or its download failed) and
    /// discards it anyway. Off unless asked for by name.
    pub discard_only_copy: bool,
    /// restart-restore: the operator chose to restore again while the old RestoreJob still runs,
    /// two restores of one application that the controller does not lock against each other.
    /// Off unless asked for by name.
    pub leave_running: bool,
}

impl ActionRequest {
    pub fn new(action: ActionKind, target: Target) -> Self {
        ActionRequest {
            action,
            target,
            policy: None,
            discard_only_copy: false,
            leave_running: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    /// What the planner had looked at when it refused: a refusal made on a partial picture
    /// (the Backup not read yet) is only final once these were read.
    pub reads: Vec<ObjRef>,
}

pub(super) fn refuse<T>(reason: impl Into<String>) -> Result<T, Refusal> {
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
    /// PVCs whose binding the PV controller still owes once the writes are done (the rename's
    /// last write points the PV at the `-orig` PVC; the binder binds it on its resync, up to
    /// ~15 s later). The executor waits for them, a bounded time, after the last write.
    pub waits: Vec<ObjRef>,
}

impl Plan {
    /// The name the operator must type to confirm.
    pub fn confirm_name(&self) -> &str {
        self.request.target.name()
    }

    pub fn is_done(&self) -> bool {
        self.ops.is_empty()
    }

    /// Nothing to write and nothing to wait for.
    pub fn is_settled(&self) -> bool {
        self.ops.is_empty() && self.waits.is_empty()
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
        waits: Vec::new(),
    };
    let planned = match req.action {
        ActionKind::ResumeRename => super::plan_rename::plan_rename(snap, req, &mut p),
        ActionKind::ReclaimOrig => super::plan_repairs::plan_reclaim(snap, req, &mut p),
        ActionKind::FixServername => super::plan_repairs::plan_servername(snap, req, &mut p),
        ActionKind::ResumeRelease => super::plan_repairs::plan_release(snap, req, &mut p),
        ActionKind::RestartRestore => super::plan_restart::plan_restart(snap, req, &mut p),
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

/// A read of every object of a kind in a namespace (an empty name): for lookups by label or
/// owner, such as a Velero Restore's DataDownloads.
pub(super) fn list_ref(kind: Kind, namespace: &str) -> ObjRef {
    ObjRef::new(kind, namespace, "")
}

pub(super) fn restore_ref(rj: &Obj<RestoreJob>) -> RestoreRef {
    RestoreRef {
        namespace: rj.meta.namespace.to_string(),
        name: rj.meta.name.to_string(),
        uid: rj.meta.uid.to_string(),
    }
}

pub(super) fn get_restore<'a>(
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

/// The RestoreJob an action that takes `--restore` acts on, recorded in the plan.
pub(super) fn restore_target<'a>(
    snap: &'a Snapshot,
    req: &ActionRequest,
    p: &mut Plan,
) -> Result<&'a Arc<Obj<RestoreJob>>, Refusal> {
    let Target::Restore { namespace, name } = &req.target else {
        return refuse(format!("{} takes --restore NAMESPACE/NAME", req.action));
    };
    let rj = get_restore(snap, namespace, name, p)?;
    p.restore = Some(restore_ref(rj));
    Ok(rj)
}

/// What the target and the disks of a restore are read from: its Backup, and the VM whose
/// volumes name the disks when the Backup has no record.
pub(super) fn restore_reads(rj: &Obj<RestoreJob>, p: &mut Plan) {
    let ns = rj.meta.namespace.as_str();
    if let Some(b) = &rj.backup_ref {
        p.reads.push(ObjRef::new(Kind::Backup, ns, b));
    }
    if let Some(t) = &rj.target {
        p.reads.push(ObjRef::new(
            Kind::VirtualMachine,
            ns,
            crate::model::names::vm_instance_release(&t.name),
        ));
    }
}

/// A Ctx only for the lookups planning shares with the analysis (target, disks); it reads no
/// clock, so the time given is irrelevant.
pub(super) fn ctx_for<'a>(
    snap: &'a Snapshot,
    settings: &'a Settings,
    rj: &'a Arc<Obj<RestoreJob>>,
) -> Ctx<'a> {
    Ctx::new(snap, settings, jiff::Timestamp::UNIX_EPOCH, rj)
}
