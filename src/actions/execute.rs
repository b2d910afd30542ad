//! Execution: before EVERY write, re-read what the plan depends on straight from the API (never
//! the watch cache), re-plan from that fresh state, check that the next write is one the
//! operator confirmed, and make it with a resourceVersion or UID precondition. A conflict means
//! "re-read and re-plan", never a blind retry; a finished action plans nothing, so a rerun
//! changes nothing, and an interrupted one resumes where it stopped.

use super::audit::{self, AuditLine};
use super::ops::Op;
use super::plan::{Plan, plan};
use crate::analysis::ObjRef;
use crate::cluster::Snapshot;
use crate::cluster::client::{api_resource, status_code};
use crate::model::{Kind, parse_object};
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
};
use serde_json::{Value, json};
use std::path::PathBuf;

/// How many conflicts in a row before giving up: someone else keeps writing.
const MAX_CONFLICTS: usize = 5;

pub struct Executor {
    pub client: kube::Client,
    pub user: String,
    pub context: String,
    /// Where the audit lines go; `None` writes none (tests that only look at the cluster).
    pub audit: Option<PathBuf>,
    /// Also record an Event on the RestoreJob.
    pub events: bool,
    /// Stop after this many writes (tests simulate a crash after write k).
    pub max_writes: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEvent {
    /// About to write.
    Start(Op),
    Done(Op),
    /// A precondition failed; re-reading.
    Conflict(Op, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing left to do (possibly nothing was needed).
    Completed { writes: usize },
    /// Stopped on purpose after `max_writes`.
    Interrupted { writes: usize },
    /// Refused or failed; what was written before stays, and a rerun resumes.
    Stopped { writes: usize, reason: String },
}

impl Outcome {
    pub fn writes(&self) -> usize {
        match self {
            Outcome::Completed { writes }
            | Outcome::Interrupted { writes }
            | Outcome::Stopped { writes, .. } => *writes,
        }
    }
}

pub(super) fn api_for(client: &kube::Client, r: &ObjRef) -> Api<DynamicObject> {
    let info = r.kind.info();
    let ar = api_resource(info);
    if info.namespaced {
        Api::namespaced_with(client.clone(), &r.namespace, &ar)
    } else {
        Api::all_with(client.clone(), &ar)
    }
}

fn to_value(kind: Kind, obj: DynamicObject) -> Option<Value> {
    let mut v = serde_json::to_value(obj).ok()?;
    let o = v.as_object_mut()?;
    o.insert("apiVersion".into(), kind.info().api_version().into());
    o.insert("kind".into(), kind.info().api_kind.into());
    Some(v)
}

/// A snapshot of exactly what the plan reads, fetched now.
pub async fn fresh_snapshot(
    client: &kube::Client,
    reads: &[ObjRef],
    namespaces: &[String],
) -> anyhow::Result<Snapshot> {
    let mut snap = Snapshot::default();
    for r in reads {
        match api_for(client, r).get_opt(&r.name).await {
            Ok(Some(o)) => {
                if let Some(obj) = to_value(r.kind, o).and_then(|v| parse_object(v).ok()) {
                    snap.objects.insert(obj);
                }
            }
            Ok(None) => {}
            Err(e) => anyhow::bail!("cannot read {r}: {e}"),
        }
    }
    // Lookups by hash or by mount need the namespace's RestoreJobs and Pods, and the classes.
    for ns in namespaces {
        for kind in [Kind::RestoreJob, Kind::Pod] {
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), ns, &api_resource(kind.info()));
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(|e| anyhow::anyhow!("cannot list {} in {ns}: {e}", kind.info().plural))?;
            for o in list.items {
                if let Some(obj) = to_value(kind, o).and_then(|v| parse_object(v).ok()) {
                    snap.objects.insert(obj);
                }
            }
        }
    }
    let sc: Api<DynamicObject> =
        Api::all_with(client.clone(), &api_resource(Kind::StorageClass.info()));
    if let Ok(list) = sc.list(&ListParams::default()).await {
        for o in list.items {
            if let Some(obj) = to_value(Kind::StorageClass, o).and_then(|v| parse_object(v).ok()) {
                snap.objects.insert(obj);
            }
        }
    }
    Ok(snap)
}

pub(super) enum WriteError {
    /// Precondition failed (409) or the JSON-patch test failed (422): re-read and re-plan.
    Conflict(String),
    Other(String),
}

fn classify(e: kube::Error) -> WriteError {
    match status_code(&e) {
        Some(409 | 422) => WriteError::Conflict(e.to_string()),
        _ => WriteError::Other(e.to_string()),
    }
}

fn rv_of(snap: &Snapshot, r: &ObjRef) -> Result<String, WriteError> {
    let key = crate::cluster::ObjKey::new(r.namespace.clone(), r.name.clone());
    snap.objects
        .meta(r.kind, &key)
        .map(|m| m.resource_version.clone())
        .ok_or_else(|| WriteError::Conflict(format!("{r} vanished")))
}

async fn merge(
    client: &kube::Client,
    fresh: &Snapshot,
    r: &ObjRef,
    mut patch: Value,
) -> Result<(), WriteError> {
    // A resourceVersion inside a merge patch is the server-side precondition: 409 if stale.
    patch["metadata"]["resourceVersion"] = json!(rv_of(fresh, r)?);
    api_for(client, r)
        .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(classify)
}

async fn apply(client: &kube::Client, fresh: &Snapshot, op: &Op) -> Result<(), WriteError> {
    let target = op.target();
    match op {
        Op::AnnotatePv { key, value, .. } => {
            merge(
                client,
                fresh,
                &target,
                json!({"metadata": {"annotations": {key: value}}}),
            )
            .await
        }
        Op::SetReclaimPolicy { to, .. } => {
            merge(
                client,
                fresh,
                &target,
                json!({"spec": {"persistentVolumeReclaimPolicy": to}}),
            )
            .await
        }
        Op::AnnotatePvc { annotations, .. } => {
            let ann: serde_json::Map<String, Value> = annotations
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            merge(
                client,
                fresh,
                &target,
                json!({"metadata": {"annotations": ann}}),
            )
            .await
        }
        Op::ResumeRelease { .. } => {
            merge(client, fresh, &target, json!({"spec": {"suspend": false}})).await
        }
        Op::SetClaimRef {
            namespace,
            name,
            uid,
            ..
        } => {
            let Some(uid) = uid else {
                return Err(WriteError::Conflict(format!(
                    "the UID of {namespace}/{name} is not known yet"
                )));
            };
            let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": name, "uid": uid, "resourceVersion": null});
            merge(client, fresh, &target, json!({"spec": {"claimRef": claim}})).await
        }
        Op::CreateOrigPvc {
            namespace,
            name,
            restore_job_uid,
            recorded_policy,
            spec,
            ..
        } => {
            let mut ann = serde_json::Map::new();
            ann.insert(
                crate::model::names::ANN_RESTORE_JOB_UID.into(),
                json!(restore_job_uid),
            );
            if !recorded_policy.is_empty() {
                ann.insert(
                    crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY.into(),
                    json!(recorded_policy),
                );
            }
            let body = json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": namespace, "annotations": ann},
                "spec": spec,
            });
            let obj: DynamicObject =
                serde_json::from_value(body).map_err(|e| WriteError::Other(e.to_string()))?;
            api_for(client, &target)
                .create(&PostParams::default(), &obj)
                .await
                .map(|_| ())
                .map_err(classify)
        }
        Op::DeletePvc { uid, reason, .. } => {
            super::guard::delete_guard(client, &target, uid, *reason).await?;
            let dp = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid.clone()),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            api_for(client, &target)
                .delete(&target.name, &dp)
                .await
                .map(|_| ())
                .map_err(classify)
        }
        Op::SetServerName {
            index, from, to, ..
        } => {
            let base = format!("/spec/plugins/{index}");
            let patch: json_patch::Patch = serde_json::from_value(json!([
                {"op": "test", "path": format!("{base}/name"), "value": crate::model::names::BARMAN_PLUGIN},
                {"op": "test", "path": format!("{base}/parameters/serverName"), "value": from},
                {"op": "replace", "path": format!("{base}/parameters/serverName"), "value": to},
            ]))
            .map_err(|e| WriteError::Other(e.to_string()))?;
            api_for(client, &target)
                .patch(
                    &target.name,
                    &PatchParams::default(),
                    &Patch::<()>::Json(patch),
                )
                .await
                .map(|_| ())
                .map_err(classify)
        }
    }
}

impl Executor {
    fn record(&self, plan: &Plan, op: &Op, outcome: &str) {
        let Some(path) = &self.audit else { return };
        let line = AuditLine {
            time: jiff::Timestamp::now().to_string(),
            user: self.user.clone(),
            context: self.context.clone(),
            action: plan.request.action.as_str().to_string(),
            target: plan.request.target.to_string(),
            operation: op.describe(),
            precondition: op.precondition(),
            outcome: outcome.to_string(),
        };
        if let Err(e) = audit::append(path, &line) {
            tracing::warn!("cannot write the audit log {}: {e}", path.display());
        }
    }

    /// Runs the confirmed plan. `on_step` reports progress (the TUI draws it, the CLI prints it).
    pub async fn execute(&self, confirmed: &Plan, mut on_step: impl FnMut(StepEvent)) -> Outcome {
        let mut writes = 0;
        let mut conflicts = 0;
        let mut reads = confirmed.reads.clone();
        let namespaces: Vec<String> = {
            let mut n: Vec<String> = reads
                .iter()
                .map(|r| r.namespace.clone())
                .filter(|n| !n.is_empty())
                .collect();
            n.push(confirmed.request.target.namespace().to_string());
            n.sort();
            n.dedup();
            n
        };
        let mut done_steps: Vec<String> = Vec::new();
        // Each write is planned at most a few times; more means the server is not keeping them.
        let mut budget = confirmed.ops.len() * 3 + MAX_CONFLICTS + 8;
        let outcome = loop {
            if budget == 0 {
                break Outcome::Stopped { writes, reason: "the writes do not take effect on the server (the same step keeps coming back)".into() };
            }
            budget -= 1;

            let fresh = match fresh_snapshot(&self.client, &reads, &namespaces).await {
                Ok(s) => s,
                Err(e) => {
                    break Outcome::Stopped {
                        writes,
                        reason: format!("{e:#}"),
                    };
                }
            };
            let now = match plan(&fresh, &confirmed.request) {
                Ok(p) => p,
                Err(r) if r.reads.iter().any(|x| !reads.contains(x)) => {
                    reads.extend(r.reads);
                    reads.sort();
                    reads.dedup();
                    continue;
                }
                Err(r) => {
                    break Outcome::Stopped {
                        writes,
                        reason: format!("refused on a fresh read: {}", r.reason),
                    };
                }
            };
            let grew = now.reads.iter().any(|r| !reads.contains(r));
            if grew {
                reads.extend(now.reads.iter().cloned());
                reads.sort();
                reads.dedup();
                continue;
            }
            let Some(next) = now.ops.first() else {
                break Outcome::Completed { writes };
            };
            if !confirmed.ops.iter().any(|o| o.same_step(next)) {
                break Outcome::Stopped {
                    writes,
                    reason: format!(
                        "the cluster changed since the plan was shown: it would now {}. Nothing more was written; run the action again to review the new plan",
                        next.describe()
                    ),
                };
            }
            // The crash a test simulates happens before a write, never in place of finding the job done.
            if self.max_writes.is_some_and(|m| writes >= m) {
                break Outcome::Interrupted { writes };
            }
            on_step(StepEvent::Start(next.clone()));
            match apply(&self.client, &fresh, next).await {
                Ok(()) => {
                    writes += 1;
                    conflicts = 0;
                    self.record(confirmed, next, "done");
                    done_steps.push(next.describe());
                    on_step(StepEvent::Done(next.clone()));
                }
                Err(WriteError::Conflict(msg)) => {
                    conflicts += 1;
                    self.record(confirmed, next, &format!("conflict, re-planned: {msg}"));
                    on_step(StepEvent::Conflict(next.clone(), msg.clone()));
                    if conflicts >= MAX_CONFLICTS {
                        break Outcome::Stopped {
                            writes,
                            reason: format!(
                                "{MAX_CONFLICTS} conflicts in a row on {}: something else keeps writing it ({msg})",
                                next.target()
                            ),
                        };
                    }
                }
                Err(WriteError::Other(msg)) => {
                    self.record(confirmed, next, &format!("failed: {msg}"));
                    break Outcome::Stopped {
                        writes,
                        reason: format!("{} failed: {msg}", next.describe()),
                    };
                }
            }
        };
        if self.events
            && writes > 0
            && let Some(r) = &confirmed.restore
        {
            let (msg, warn) = match &outcome {
                Outcome::Stopped { reason, .. } => (
                    format!(
                        "{} by {}: {}; then stopped: {reason}",
                        confirmed.request.action,
                        self.user,
                        done_steps.join("; ")
                    ),
                    true,
                ),
                _ => (
                    format!(
                        "{} by {}: {}",
                        confirmed.request.action,
                        self.user,
                        done_steps.join("; ")
                    ),
                    false,
                ),
            };
            if let Err(e) = audit::event(&self.client, r, &msg, warn).await {
                tracing::warn!("cannot record the Event on {}/{}: {e}", r.namespace, r.name);
            }
        }
        outcome
    }
}

/// Plans from fresh reads only (no watch cache): reads what the plan asks for until the set of
/// reads is stable. `Ok(Err(refusal))` when the action is refused.
pub async fn plan_fresh(
    client: &kube::Client,
    req: &super::ActionRequest,
) -> anyhow::Result<Result<Plan, super::Refusal>> {
    let namespaces = vec![req.target.namespace().to_string()];
    let mut reads: Vec<ObjRef> = Vec::new();
    // Each round can only add objects; a handful of rounds covers restore -> disks -> PVs.
    for _ in 0..8 {
        let snap = fresh_snapshot(client, &reads, &namespaces).await?;
        match plan(&snap, req) {
            Ok(p) if p.reads.iter().all(|r| reads.contains(r)) => return Ok(Ok(p)),
            Ok(p) => {
                reads.extend(p.reads);
                reads.sort();
                reads.dedup();
            }
            Err(refusal) => {
                // A refusal made before what it looked at was read is not the final word.
                if refusal.reads.iter().all(|r| reads.contains(r)) {
                    return Ok(Err(refusal));
                }
                reads.extend(refusal.reads);
                reads.sort();
                reads.dedup();
            }
        }
    }
    anyhow::bail!("the objects this action depends on keep changing; try again")
}
