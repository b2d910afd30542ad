//! The API operations an action can make. Each is one write, carries its precondition, and can
//! say in a sentence what it does and what it protects.

use crate::analysis::ObjRef;
use crate::model::Kind;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// Record the PV's current reclaim policy in an annotation (merge patch, resourceVersion).
    AnnotatePv {
        pv: String,
        key: String,
        value: String,
    },
    /// Set the PV's reclaim policy (merge patch, resourceVersion).
    SetReclaimPolicy {
        pv: String,
        from: String,
        to: String,
    },
    /// Create the `-orig` PVC bound to the PV (spec copied from the original).
    CreateOrigPvc {
        namespace: String,
        name: String,
        pv: String,
        restore_job_uid: String,
        recorded_policy: String,
        spec: serde_json::Value,
    },
    /// Add annotations to an existing PVC (merge patch, resourceVersion).
    AnnotatePvc {
        namespace: String,
        name: String,
        annotations: Vec<(String, String)>,
    },
    /// Delete a PVC with a UID precondition.
    DeletePvc {
        namespace: String,
        name: String,
        uid: String,
        reason: DeleteReason,
    },
    /// Point the PV's claimRef at a PVC (merge patch, resourceVersion). `uid` is `None` when the
    /// PVC is created by an earlier step of the same plan.
    SetClaimRef {
        pv: String,
        namespace: String,
        name: String,
        uid: Option<String>,
    },
    /// JSON patch of the Cluster's barman plugin serverName with a `test` of the old value.
    SetServerName {
        namespace: String,
        cluster: String,
        index: usize,
        from: String,
        to: String,
    },
    /// `spec.suspend=false` (merge patch, resourceVersion).
    ResumeRelease { namespace: String, name: String },
    /// Create a RestoreJob (`restart-restore`): the old one's spec under a fresh name, marked
    /// with the old one's UID. The spec is not in the plan: the write reads RestoreJob `from`
    /// fresh (its UID must still be `restarted_from`) and copies its spec as the API server
    /// holds it, never restorewatch's redacted copy.
    CreateRestoreJob {
        namespace: String,
        name: String,
        restarted_from: String,
        from: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeleteReason {
    /// The original PVC of a rename: only while it still claims the kept PV.
    RenameOriginal,
    /// The `-orig` PVC being reclaimed.
    ReclaimOrig,
}

impl Op {
    /// The object written.
    pub fn target(&self) -> ObjRef {
        match self {
            Op::AnnotatePv { pv, .. }
            | Op::SetReclaimPolicy { pv, .. }
            | Op::SetClaimRef { pv, .. } => ObjRef::new(Kind::PersistentVolume, "", pv),
            Op::CreateOrigPvc {
                namespace, name, ..
            }
            | Op::AnnotatePvc {
                namespace, name, ..
            }
            | Op::DeletePvc {
                namespace, name, ..
            } => ObjRef::new(Kind::PersistentVolumeClaim, namespace, name),
            Op::SetServerName {
                namespace, cluster, ..
            } => ObjRef::new(Kind::CnpgCluster, namespace, cluster),
            Op::ResumeRelease { namespace, name } => {
                ObjRef::new(Kind::HelmRelease, namespace, name)
            }
            Op::CreateRestoreJob {
                namespace, name, ..
            } => ObjRef::new(Kind::RestoreJob, namespace, name),
        }
    }

    /// The RBAC verb the write needs.
    pub fn verb(&self) -> &'static str {
        match self {
            Op::CreateOrigPvc { .. } | Op::CreateRestoreJob { .. } => "create",
            Op::DeletePvc { .. } => "delete",
            _ => "patch",
        }
    }

    /// Identity for comparing a re-plan with the confirmed plan: the same write to the same
    /// object, whatever UIDs got filled in since.
    pub fn same_step(&self, other: &Op) -> bool {
        match (self, other) {
            (
                Op::SetClaimRef {
                    pv: a,
                    name: n1,
                    namespace: s1,
                    ..
                },
                Op::SetClaimRef {
                    pv: b,
                    name: n2,
                    namespace: s2,
                    ..
                },
            ) => a == b && n1 == n2 && s1 == s2,
            (
                Op::DeletePvc {
                    namespace: s1,
                    name: n1,
                    ..
                },
                Op::DeletePvc {
                    namespace: s2,
                    name: n2,
                    ..
                },
            ) => s1 == s2 && n1 == n2,
            (
                Op::CreateOrigPvc {
                    namespace: s1,
                    name: n1,
                    pv: p1,
                    ..
                },
                Op::CreateOrigPvc {
                    namespace: s2,
                    name: n2,
                    pv: p2,
                    ..
                },
            ) => s1 == s2 && n1 == n2 && p1 == p2,
            (a, b) => a == b,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Op::AnnotatePv { pv, key, value } => format!("annotate PV {pv}: {key}={value}"),
            Op::SetReclaimPolicy { pv, from, to } => {
                format!("set PV {pv} reclaim policy {from} -> {to}")
            }
            Op::CreateOrigPvc {
                namespace,
                name,
                pv,
                ..
            } => format!("create PVC {namespace}/{name} on PV {pv}"),
            Op::AnnotatePvc {
                namespace,
                name,
                annotations,
            } => format!(
                "annotate PVC {namespace}/{name}: {}",
                annotations
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Op::DeletePvc {
                namespace, name, ..
            } => format!("delete PVC {namespace}/{name}"),
            Op::SetClaimRef {
                pv,
                namespace,
                name,
                ..
            } => format!("point PV {pv} claimRef at {namespace}/{name}"),
            Op::SetServerName {
                namespace,
                cluster,
                from,
                to,
                ..
            } => format!("set Cluster {namespace}/{cluster} archive serverName {from} -> {to}"),
            Op::ResumeRelease { namespace, name } => {
                format!("resume HelmRelease {namespace}/{name} (spec.suspend=false)")
            }
            Op::CreateRestoreJob {
                namespace,
                name,
                from,
                ..
            } => format!(
                "create RestoreJob {namespace}/{name} with the spec of {from} exactly as the API server holds it (read fresh at the write)"
            ),
        }
    }

    pub fn precondition(&self) -> String {
        match self {
            Op::AnnotatePv { .. }
            | Op::SetReclaimPolicy { .. }
            | Op::SetClaimRef { .. }
            | Op::AnnotatePvc { .. }
            | Op::ResumeRelease { .. } => "resourceVersion of a fresh read".into(),
            Op::CreateOrigPvc { .. } | Op::CreateRestoreJob { .. } => {
                "name must not exist (409 AlreadyExists otherwise)".into()
            }
            Op::DeletePvc { uid, reason, .. } => match reason {
                DeleteReason::RenameOriginal => {
                    format!("UID {uid}, and the PV's claimRef still names that UID")
                }
                DeleteReason::ReclaimOrig => {
                    format!("UID {uid}, and the PV's reclaim policy already set back")
                }
            },
            Op::SetServerName { index, from, .. } => {
                format!("JSON-patch test: /spec/plugins/{index}/parameters/serverName == {from}")
            }
        }
    }

    pub fn protects(&self) -> String {
        match self {
            Op::AnnotatePv { .. } => "records the policy before the switch, so the volume can be reclaimed the way it would have been".into(),
            Op::SetReclaimPolicy { to, .. } if to == "Retain" => "the volume survives when the original PVC is deleted".into(),
            Op::SetReclaimPolicy { to, .. } => format!("with {to} the volume is handled as its class intended once the PVC goes; nothing leaks"),
            Op::CreateOrigPvc { .. } => "the current disk stays reachable under the -orig name, marked with this RestoreJob's UID".into(),
            Op::AnnotatePvc { .. } => "marks the -orig PVC as this RestoreJob's and records the original policy".into(),
            Op::DeletePvc { reason: DeleteReason::RenameOriginal, .. } => "frees the disk name for the restore; the PV is Retain, so the data stays".into(),
            Op::DeletePvc { reason: DeleteReason::ReclaimOrig, .. } => "removes the kept copy; its PV follows the policy set just before".into(),
            Op::SetClaimRef { .. } => "binds the kept PV to the -orig PVC so it is never Released and reclaimed".into(),
            Op::SetServerName { .. } => "the new Cluster archives under a fresh prefix, so the WAL archive check passes and the old backups stay intact".into(),
            Op::ResumeRelease { .. } => "Flux reconciles the application again".into(),
            Op::CreateRestoreJob { .. } => "a fresh name: its -orig names are free and no running restore shares its hash, so the controller keeps every disk and finds no predecessor's Velero Restore".into(),
        }
    }
}
