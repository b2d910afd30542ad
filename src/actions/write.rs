//! One write with its precondition, and what its failure means in a line: a conflict
//! (re-read and re-plan) or an error, never the Debug form of the API's Status.

use super::fresh::api_for;
use super::ops::Op;
use crate::analysis::ObjRef;
use crate::cluster::Snapshot;
use crate::cluster::client::{FIELD_MANAGER, status_code};
use crate::model::Kind;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams, Preconditions};
use serde_json::{Value, json};

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
pub(super) fn short_name(r: &ObjRef) -> String {
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
        .map(|m| m.resource_version.to_string())
        .ok_or_else(|| {
            WriteError::Conflict(format!(
                "{} vanished since it was read: re-reading",
                short_name(r)
            ))
        })
}

/// Patches and creates name restorewatch as their field manager (a delete has none to name).
pub(crate) fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    }
}

pub(crate) fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PostParams::default()
    }
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
        .patch(&r.name, &patch_params(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
        .map_err(|e| classify(op, e))
}

/// A create: the name must not exist yet (409 AlreadyExists is a conflict: re-read).
async fn create(client: &kube::Client, op: &Op, body: Value) -> Result<(), WriteError> {
    let obj: DynamicObject =
        serde_json::from_value(body).map_err(|e| WriteError::Other(e.to_string()))?;
    api_for(client, &op.target())
        .create(&post_params(), &obj)
        .await
        .map(|_| ())
        .map_err(|e| classify(op, e))
}

pub(super) async fn apply(
    client: &kube::Client,
    fresh: &Snapshot,
    op: &Op,
) -> Result<(), WriteError> {
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
            create(client, op, body).await
        }
        Op::CreateRestoreJob {
            namespace,
            name,
            restarted_from,
            from,
        } => {
            // The spec from a fresh, unredacted read of the old RestoreJob (issue 27.1): the
            // stored copy is redacted for display and must never reach a write.
            // The spec copied is the one the preflight judged: its resourceVersion then.
            let judged_rv = fresh
                .restore_jobs
                .get(namespace, from)
                .map(|r| r.meta.resource_version.to_string())
                .unwrap_or_default();
            let spec = super::plan_restart::fresh_spec(
                client,
                namespace,
                from,
                restarted_from,
                &judged_rv,
            )
            .await
            .map_err(|e| match e {
                super::plan_restart::SpecRead::Api(e) => classify(op, e),
                super::plan_restart::SpecRead::Changed(why) => WriteError::Other(why),
                super::plan_restart::SpecRead::Edited(why) => WriteError::Conflict(why),
            })?;
            let body = json!({
                "apiVersion": Kind::RestoreJob.info().api_version(),
                "kind": "RestoreJob",
                "metadata": {"name": name, "namespace": namespace,
                    "annotations": {crate::model::names::ANN_RESTARTED_FROM: restarted_from}},
                "spec": spec,
            });
            create(client, op, body).await
        }
        Op::DeletePvc { uid, reason, .. } => {
            super::guard::delete_guard(client, &target, uid, *reason).await?;
            // Both preconditions of what was judged: the UID (not a newer PVC of the name) and
            // the resourceVersion (not changed since: e.g. a new restore-job-uid).
            let dp = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid.clone()),
                    resource_version: Some(rv_of(fresh, &target)?),
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
                .patch(&target.name, &patch_params(), &Patch::<()>::Json(patch))
                .await
                .map(|_| ())
                .map_err(|e| classify(op, e))
        }
    }
}
