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
    /// How long to wait, after the last write, for the PV controller to bind an `-orig` PVC
    /// (its resync comes up to ~15 s after the claimRef points at it).
    pub bind_wait: std::time::Duration,
}

/// The default bound on the wait for the PV controller's bind: twice its resync period.
pub const BIND_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEvent {
    /// About to write.
    Start(Op),
    Done(Op),
    /// A precondition failed; re-reading. The text is one line for the operator.
    Conflict(Op, String),
    /// Every write is done; the PV controller has not bound this PVC yet (seconds waited).
    Waiting {
        pvc: String,
        waited_secs: u64,
    },
    /// The record of the action could not be made (the audit log or the Event): it must be
    /// said, never dropped.
    RecordFailed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing left to do (possibly nothing was needed).
    Completed { writes: usize },
    /// Stopped on purpose after `max_writes`.
    Interrupted { writes: usize },
    /// Refused or failed; what was written before stays, and a rerun resumes.
    Stopped { writes: usize, reason: String },
    /// Every write done, but the PV controller had not bound these PVCs when the wait ended;
    /// a rerun writes nothing and waits again.
    Unbound {
        writes: usize,
        pending: Vec<String>,
        waited_secs: u64,
    },
}

impl Outcome {
    pub fn writes(&self) -> usize {
        match self {
            Outcome::Completed { writes }
            | Outcome::Interrupted { writes }
            | Outcome::Stopped { writes, .. }
            | Outcome::Unbound { writes, .. } => *writes,
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
    for r in reads.iter().filter(|r| r.name.is_empty()) {
        let list = api_for(client, r)
            .list(&ListParams::default())
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot list {} in {}: {}",
                    r.kind.info().plural,
                    r.namespace,
                    brief(&e)
                )
            })?;
        for o in list.items {
            if let Some(obj) = to_value(r.kind, o).and_then(|v| parse_object(v).ok()) {
                snap.objects.insert(obj);
            }
        }
    }
    for r in reads.iter().filter(|r| !r.name.is_empty()) {
        match api_for(client, r).get_opt(&r.name).await {
            Ok(Some(o)) => {
                if let Some(obj) = to_value(r.kind, o).and_then(|v| parse_object(v).ok()) {
                    snap.objects.insert(obj);
                }
            }
            Ok(None) => {}
            Err(e) => anyhow::bail!("cannot read {r}: {}", brief(&e)),
        }
    }
    // Lookups by hash or by mount need the namespace's RestoreJobs and Pods, the controller's
    // events about RestoreJobs (evidence of earlier attempts), and the classes.
    for ns in namespaces {
        for kind in [Kind::RestoreJob, Kind::Pod, Kind::Event] {
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), ns, &api_resource(kind.info()));
            let lp = if kind == Kind::Event {
                ListParams::default().fields("involvedObject.kind=RestoreJob")
            } else {
                ListParams::default()
            };
            let list = match api.list(&lp).await {
                Ok(l) => l,
                // Events are evidence, not state: an operator who may not list them can still
                // act, and the plan treats what they would have told as unknown.
                Err(e) if kind == Kind::Event => {
                    snap.health.insert(
                        Kind::Event,
                        crate::cluster::snapshot::KindHealth {
                            state: crate::cluster::SyncState::Forbidden { error: brief(&e) },
                            last_event: None,
                        },
                    );
                    continue;
                }
                Err(e) => {
                    anyhow::bail!("cannot list {} in {ns}: {}", kind.info().plural, brief(&e))
                }
            };
            if kind == Kind::Event {
                snap.health
                    .entry(Kind::Event)
                    .or_insert(crate::cluster::snapshot::KindHealth {
                        state: crate::cluster::SyncState::Synced,
                        last_event: None,
                    });
            }
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

/// A kube error in one line: the API's message and code, never the Debug form of its Status.
pub fn brief(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => {
            format!("{} ({} {})", s.message, s.code, s.reason)
        }
        kube::Error::Api(s) => format!("HTTP {} {}", s.code, s.reason),
        other => other.to_string(),
    }
}

pub(super) enum WriteError {
    /// Precondition failed (409) or the JSON-patch test failed (422): re-read and re-plan.
    Conflict(String),
    Other(String),
}

/// The object of a write as the operator names it: `PV pv-x`, `PVC ns/name`.
fn short_name(r: &ObjRef) -> String {
    let kind = match r.kind {
        Kind::PersistentVolume => "PV",
        Kind::PersistentVolumeClaim => "PVC",
        k => k.info().api_kind,
    };
    if r.namespace.is_empty() {
        format!("{kind} {}", r.name)
    } else {
        format!("{kind} {}/{}", r.namespace, r.name)
    }
}

/// What a failed precondition means, in one line.
pub(super) fn conflict_line(op: &Op, e: &kube::Error) -> String {
    let what = short_name(&op.target());
    let reason = match e {
        kube::Error::Api(s) => s.reason.as_str(),
        _ => "",
    };
    let writer = if op.target().kind == Kind::PersistentVolume {
        "another writer, e.g. the PV controller"
    } else {
        "another writer"
    };
    match (status_code(e), reason, op) {
        (Some(409), "AlreadyExists", _) => {
            format!("{what} was created since it was read ({writer}): re-reading")
        }
        (Some(409), _, Op::DeletePvc { .. }) => {
            format!("{what} was replaced since it was read (its UID changed): re-reading")
        }
        (Some(422), _, Op::SetServerName { .. }) => format!(
            "{what} changed since it was read (the test of its serverName failed; {writer}): re-reading"
        ),
        _ => format!("{what} changed since it was read ({writer}): re-reading"),
    }
}

fn classify(op: &Op, e: kube::Error) -> WriteError {
    match status_code(&e) {
        Some(409 | 422) => WriteError::Conflict(conflict_line(op, &e)),
        _ => WriteError::Other(brief(&e)),
    }
}

fn rv_of(snap: &Snapshot, r: &ObjRef) -> Result<String, WriteError> {
    let key = crate::cluster::ObjKey::new(r.namespace.clone(), r.name.clone());
    snap.objects
        .meta(r.kind, &key)
        .map(|m| m.resource_version.clone())
        .ok_or_else(|| {
            WriteError::Conflict(format!(
                "{} vanished since it was read: re-reading",
                short_name(r)
            ))
        })
}

async fn merge(
    client: &kube::Client,
    fresh: &Snapshot,
    op: &Op,
    mut patch: Value,
) -> Result<(), WriteError> {
    let r = &op.target();
    // A resourceVersion inside a merge patch is the server-side precondition: 409 if stale.
    patch["metadata"]["resourceVersion"] = json!(rv_of(fresh, r)?);
    api_for(client, r)
        .patch(&r.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(|e| classify(op, e))
}

async fn apply(client: &kube::Client, fresh: &Snapshot, op: &Op) -> Result<(), WriteError> {
    let target = op.target();
    match op {
        Op::AnnotatePv { key, value, .. } => {
            merge(
                client,
                fresh,
                op,
                json!({"metadata": {"annotations": {key: value}}}),
            )
            .await
        }
        Op::SetReclaimPolicy { to, .. } => {
            merge(
                client,
                fresh,
                op,
                json!({"spec": {"persistentVolumeReclaimPolicy": to}}),
            )
            .await
        }
        Op::AnnotatePvc { annotations, .. } => {
            let ann: serde_json::Map<String, Value> = annotations
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            merge(client, fresh, op, json!({"metadata": {"annotations": ann}})).await
        }
        Op::ResumeRelease { .. } => {
            merge(client, fresh, op, json!({"spec": {"suspend": false}})).await
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
            merge(client, fresh, op, json!({"spec": {"claimRef": claim}})).await
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
                .map_err(|e| classify(op, e))
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
                .map_err(|e| classify(op, e))
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
                .map_err(|e| classify(op, e))
        }
    }
}

impl Executor {
    /// One audit line; an error says why it could not be written.
    fn record_line(
        &self,
        plan: &Plan,
        operation: String,
        precondition: String,
        outcome: &str,
    ) -> Result<(), String> {
        let Some(path) = &self.audit else {
            return Ok(());
        };
        let line = AuditLine {
            time: jiff::Timestamp::now().to_string(),
            user: self.user.clone(),
            context: self.context.clone(),
            action: plan.request.action.as_str().to_string(),
            target: plan.request.target.to_string(),
            operation,
            precondition,
            outcome: outcome.to_string(),
        };
        audit::append(path, &line).map_err(|e| {
            tracing::warn!("cannot write the audit log {}: {e}", path.display());
            format!("the audit log {} was not written: {e}", path.display())
        })
    }

    fn record(&self, plan: &Plan, op: &Op, outcome: &str, on_step: &mut impl FnMut(StepEvent)) {
        if let Err(e) = self.record_line(plan, op.describe(), op.precondition(), outcome) {
            on_step(StepEvent::RecordFailed(e));
        }
    }

    /// After the last write: wait, a bounded time, for the PV controller to bind what the plan
    /// says it still owes, saying each second that it waits. Reads only.
    async fn wait_bound(
        &self,
        waits: &[ObjRef],
        writes: usize,
        on_step: &mut impl FnMut(StepEvent),
    ) -> Outcome {
        let start = std::time::Instant::now();
        let mut said: Option<u64> = None;
        loop {
            let mut pending = Vec::new();
            for w in waits {
                match api_for(&self.client, w).get_opt(&w.name).await {
                    Ok(Some(o))
                        if o.data.pointer("/status/phase").and_then(Value::as_str)
                            == Some("Bound") => {}
                    Ok(Some(_)) => pending.push(format!("{}/{}", w.namespace, w.name)),
                    Ok(None) => {
                        return Outcome::Stopped {
                            writes,
                            reason: format!(
                                "{} vanished while waiting for the PV controller to bind it",
                                short_name(w)
                            ),
                        };
                    }
                    Err(e) => {
                        return Outcome::Stopped {
                            writes,
                            reason: format!("cannot read {}: {}", short_name(w), brief(&e)),
                        };
                    }
                }
            }
            if pending.is_empty() {
                return Outcome::Completed { writes };
            }
            let waited_secs = start.elapsed().as_secs();
            if said != Some(waited_secs) {
                said = Some(waited_secs);
                for pvc in &pending {
                    on_step(StepEvent::Waiting {
                        pvc: pvc.clone(),
                        waited_secs,
                    });
                }
            }
            if start.elapsed() >= self.bind_wait {
                return Outcome::Unbound {
                    writes,
                    pending,
                    waited_secs,
                };
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
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
                if now.waits.is_empty() {
                    break Outcome::Completed { writes };
                }
                break self.wait_bound(&now.waits, writes, &mut on_step).await;
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
                    self.record(confirmed, next, "done", &mut on_step);
                    done_steps.push(next.describe());
                    on_step(StepEvent::Done(next.clone()));
                }
                Err(WriteError::Conflict(msg)) => {
                    conflicts += 1;
                    self.record(
                        confirmed,
                        next,
                        &format!("conflict, re-planned: {msg}"),
                        &mut on_step,
                    );
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
                    self.record(confirmed, next, &format!("failed: {msg}"), &mut on_step);
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
                let why = match e.downcast_ref::<kube::Error>() {
                    Some(k) => brief(k),
                    None => format!("{e:#}"),
                };
                tracing::warn!(
                    "cannot record the Event on {}/{}: {why}",
                    r.namespace,
                    r.name
                );
                let line = format!(
                    "the Event on RestoreJob {}/{} was not recorded: {why}",
                    r.namespace, r.name
                );
                on_step(StepEvent::RecordFailed(line.clone()));
                if let Err(e) = self.record_line(
                    confirmed,
                    format!(
                        "record Event RestorewatchAction on RestoreJob {}/{}",
                        r.namespace, r.name
                    ),
                    "none".into(),
                    &format!("failed: {why}"),
                ) {
                    on_step(StepEvent::RecordFailed(e));
                }
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
