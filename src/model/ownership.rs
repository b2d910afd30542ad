//! Whose `-orig` PVC is this, and is this Cluster the one re-rendered for a restore: questions
//! the analysis (findings, remedies) and the actions (refusals) both ask. They are answered
//! here, once, so that a finding never offers what its action would refuse.

use super::Obj;
use super::names::{ANN_RESTORE_JOB_UID, parse_orig_name, short_hash};
use super::objects::{CnpgCluster, Pvc, RestoreJob, find_condition};
use jiff::Timestamp;
use std::sync::Arc;

/// How an `-orig` PVC relates to one RestoreJob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrigRelation {
    /// This RestoreJob made it: its UID is in `restore-job-uid` (`annotated`), or, with no
    /// annotation (controller before the fix), it was created while this RestoreJob could
    /// rename: after its creation and not after it finished.
    Made { annotated: bool },
    /// Another RestoreJob made it: another UID, or created before this RestoreJob (or after
    /// it had finished).
    NotMade { other_uid: Option<String> },
    /// No annotation and no timestamps to tell.
    Unknown,
}

/// Whether `rj` made the `-orig` PVC `orig`. The name (and so the hash) never decides alone:
/// a RestoreJob re-created under the name of a deleted one maps to the same `-orig` name.
pub fn orig_relation(orig: &Obj<Pvc>, rj: &Obj<RestoreJob>) -> OrigRelation {
    if let Some(uid) = orig.meta.annotation(ANN_RESTORE_JOB_UID) {
        return if !rj.meta.uid.is_empty() && uid == rj.meta.uid {
            OrigRelation::Made { annotated: true }
        } else {
            OrigRelation::NotMade {
                other_uid: Some(uid.to_string()),
            }
        };
    }
    let (Some(made), Some(rj_created)) = (orig.meta.created, rj.meta.created) else {
        return OrigRelation::Unknown;
    };
    if made < rj_created {
        return OrigRelation::NotMade { other_uid: None };
    }
    // A finished RestoreJob renames nothing more: a PVC made after it completed is another's.
    if rj.phase.is_terminal()
        && let Some(done) = rj.completed_at.known()
        && made > *done
    {
        return OrigRelation::NotMade { other_uid: None };
    }
    OrigRelation::Made { annotated: false }
}

/// Who made an `-orig` PVC, among the RestoreJobs of its namespace.
#[derive(Debug, Clone)]
pub enum OrigOwner<'a> {
    /// A RestoreJob that exists.
    Restore {
        rj: &'a Arc<Obj<RestoreJob>>,
        annotated: bool,
    },
    /// A RestoreJob that no longer exists: the annotation names a UID no RestoreJob has, or
    /// no RestoreJob of a matching name existed when the PVC was created (left by a deleted
    /// RestoreJob of the same name, typically).
    Deleted { uid: Option<String> },
    /// Neither an annotation nor timestamps tell, or the name is not an `-orig` name.
    Unknown,
}

/// Attributes an `-orig` PVC to its RestoreJob: by the `restore-job-uid` annotation, else by
/// creation time among the RestoreJobs whose name hashes to its suffix (the newest that could
/// have made it). `restore_jobs` are those of the PVC's namespace; the caller must know that
/// they were read (an unread kind must not turn every PVC into a deleted RestoreJob's).
pub fn orig_owner<'a>(
    orig: &Obj<Pvc>,
    restore_jobs: impl IntoIterator<Item = &'a Arc<Obj<RestoreJob>>>,
) -> OrigOwner<'a> {
    let Some((_, hash)) = parse_orig_name(&orig.meta.name) else {
        return OrigOwner::Unknown;
    };
    if let Some(uid) = orig.meta.annotation(ANN_RESTORE_JOB_UID) {
        return match restore_jobs.into_iter().find(|r| r.meta.uid == uid) {
            Some(rj) => OrigOwner::Restore {
                rj,
                annotated: true,
            },
            None => OrigOwner::Deleted {
                uid: Some(uid.to_string()),
            },
        };
    }
    if orig.meta.created.is_none() {
        return OrigOwner::Unknown;
    }
    let mut undecided = false;
    let made_by = restore_jobs
        .into_iter()
        .filter(|r| short_hash(&r.meta.name) == hash)
        .filter(|r| match orig_relation(orig, r) {
            OrigRelation::Made { .. } => true,
            OrigRelation::NotMade { .. } => false,
            OrigRelation::Unknown => {
                undecided = true;
                false
            }
        })
        .max_by_key(|r| r.meta.created);
    match made_by {
        Some(rj) => OrigOwner::Restore {
            rj,
            annotated: false,
        },
        None if undecided => OrigOwner::Unknown,
        None => OrigOwner::Deleted { uid: None },
    }
}

/// Whether a CNPG Cluster is the one the chart re-rendered for a restore (after the purge), or
/// the one being purged, as far as the evidence goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterRole {
    /// Re-rendered for this restore; the string says by what evidence.
    Rerendered(String),
    /// The Cluster from before the restore (or one being deleted): the string says why.
    Previous(String),
    /// The evidence does not tell: the string says what is missing.
    Unknown(String),
}

/// What is known of the purge besides the RestoreJob and the Cluster: when the watch saw a
/// Cluster of this name deleted, and with which UID.
#[derive(Debug, Clone, Copy, Default)]
pub struct PurgeEvidence<'a> {
    pub deleted_uid: Option<&'a str>,
    pub deleted_at: Option<Timestamp>,
}

/// Tells the re-rendered Cluster by its deletion state, its recovery bootstrap, its creation
/// against the restore's start, the `TargetPurged` condition and the UID the purge deleted. It
/// never depends on `TargetPurged` being stamped before the Cluster was created: the
/// controller writes that condition after resuming the HelmRelease, and a retried status write
/// stamps it seconds later.
pub fn cluster_role(
    rj: &Obj<RestoreJob>,
    cluster: &Obj<CnpgCluster>,
    purge: PurgeEvidence,
) -> ClusterRole {
    if cluster.meta.deleted.is_some() {
        return ClusterRole::Previous("being deleted (the purge)".into());
    }
    if purge
        .deleted_uid
        .is_some_and(|u| !u.is_empty() && u == cluster.meta.uid)
    {
        return ClusterRole::Previous("its UID is the one the purge deleted".into());
    }
    let purged = find_condition(&rj.conditions, "TargetPurged").is_some_and(|c| c.is_true());
    let started = rj.started_at.known().copied();
    let created = cluster.meta.created;
    if !cluster.has_recovery {
        return if purged {
            ClusterRole::Unknown("rendered after the purge but without a recovery bootstrap".into())
        } else {
            ClusterRole::Previous("it has no recovery bootstrap".into())
        };
    }
    if let (Some(c), Some(s)) = (created, started) {
        return if c >= s {
            ClusterRole::Rerendered(format!(
                "created {c}, after the restore started, with a recovery bootstrap"
            ))
        } else {
            ClusterRole::Previous(format!("created {c}, before the restore started ({s})"))
        };
    }
    // The purge waits until the Cluster is gone before it reports TargetPurged: whatever
    // Cluster lives after it is the re-rendered one, whenever the condition was stamped.
    if purged {
        return ClusterRole::Rerendered("TargetPurged is True and it is not being deleted".into());
    }
    if let (Some(uid), Some(at)) = (purge.deleted_uid, purge.deleted_at)
        && uid != cluster.meta.uid
        && created.is_none_or(|c| c >= at)
    {
        return ClusterRole::Rerendered(format!(
            "a Cluster of this name with UID {uid} was deleted at {at}; this one has UID {}",
            cluster.meta.uid
        ));
    }
    ClusterRole::Unknown(match (created, started) {
        (None, _) => "the Cluster has no creationTimestamp and no purge was seen".into(),
        _ => "the RestoreJob has no startedAt and no purge was seen".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AnyObject, parse_object};
    use serde_json::json;

    fn rj(name: &str, uid: &str, created: &str, status: serde_json::Value) -> Arc<Obj<RestoreJob>> {
        match parse_object(
            json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": name, "namespace": "ns", "uid": uid, "creationTimestamp": created},
            "spec": {"backupRef": {"name": "b"}}, "status": status}),
        ) {
            Ok(AnyObject::RestoreJob(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    fn orig(created: &str, uid_ann: Option<&str>) -> Obj<Pvc> {
        let mut meta = json!({"name": "vm-disk-data-orig-de3e", "namespace": "ns", "uid": "p",
            "creationTimestamp": created});
        if let Some(u) = uid_ann {
            meta["annotations"] = json!({ANN_RESTORE_JOB_UID: u});
        }
        match parse_object(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta}),
        ) {
            Ok(AnyObject::PersistentVolumeClaim(o)) => Arc::unwrap_or_clone(o),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_orig_pvc_is_attributed_by_annotation_else_by_creation_time() {
        // `restore-test` and `vm1-restore-74` both hash to de3e.
        let running = rj(
            "restore-test",
            "new",
            "2026-11-20T10:00:00Z",
            json!({"phase": "Running"}),
        );
        let old = rj(
            "vm1-restore-74",
            "old",
            "2026-11-13T09:59:00Z",
            json!({"phase": "Succeeded", "completedAt": "2026-11-13T10:11:00Z"}),
        );
        let all = [running.clone(), old.clone()];
        // Made while vm1-restore-74 ran: its, although restore-test is newer and of the hash.
        let p = orig("2026-11-13T10:00:40Z", None);
        assert!(
            matches!(orig_owner(&p, &all), OrigOwner::Restore { rj, annotated: false } if rj.meta.uid == "old")
        );
        assert_eq!(
            orig_relation(&p, &running),
            OrigRelation::NotMade { other_uid: None }
        );
        // Made after vm1-restore-74 completed and before restore-test: a deleted RestoreJob's.
        let p = orig("2026-11-15T08:00:00Z", None);
        assert!(matches!(
            orig_owner(&p, &all),
            OrigOwner::Deleted { uid: None }
        ));
        // The annotation decides, whatever the times.
        let p = orig("2026-11-15T08:00:00Z", Some("new"));
        assert!(matches!(
            orig_owner(&p, &all),
            OrigOwner::Restore {
                annotated: true,
                ..
            }
        ));
        let p = orig("2026-11-20T10:00:40Z", Some("gone"));
        assert!(matches!(orig_owner(&p, &all), OrigOwner::Deleted { uid: Some(u) } if u == "gone"));
        assert_eq!(
            orig_relation(&p, &running),
            OrigRelation::NotMade {
                other_uid: Some("gone".into())
            }
        );
    }

    fn cluster(created: &str, recovery: bool, deleting: bool) -> Obj<CnpgCluster> {
        let mut v = json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": {"name": "postgres-a", "namespace": "ns", "uid": "c2", "creationTimestamp": created},
            "spec": {}});
        if recovery {
            v["spec"]["bootstrap"] = json!({"recovery": {"source": "postgres-a"}});
        }
        if deleting {
            v["metadata"]["deletionTimestamp"] = json!("2026-11-20T10:00:05Z");
        }
        match parse_object(v) {
            Ok(AnyObject::CnpgCluster(o)) => Arc::unwrap_or_clone(o),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_rerendered_cluster_does_not_depend_on_when_target_purged_was_stamped() {
        let late = rj(
            "r",
            "u",
            "2026-11-20T10:00:00Z",
            json!({"phase": "Running", "startedAt": "2026-11-20T10:00:01Z", "conditions": [
                {"type": "TargetPurged", "status": "True", "lastTransitionTime": "2026-11-20T10:00:50Z"}]}),
        );
        let none = PurgeEvidence::default();
        let new = cluster("2026-11-20T10:00:45Z", true, false);
        assert!(matches!(
            cluster_role(&late, &new, none),
            ClusterRole::Rerendered(_)
        ));
        assert!(matches!(
            cluster_role(&late, &cluster("2026-11-17T10:00:00Z", true, false), none),
            ClusterRole::Previous(_)
        ));
        assert!(matches!(
            cluster_role(&late, &cluster("2026-11-20T10:00:45Z", true, true), none),
            ClusterRole::Previous(_)
        ));
        // No startedAt, no TargetPurged: unknown, unless the watch saw the purge.
        let bare = rj(
            "r",
            "u",
            "2026-11-20T10:00:00Z",
            json!({"phase": "Running"}),
        );
        assert!(matches!(
            cluster_role(&bare, &new, none),
            ClusterRole::Unknown(_)
        ));
        let seen = PurgeEvidence {
            deleted_uid: Some("c1"),
            deleted_at: "2026-11-20T10:00:10Z".parse().ok(),
        };
        assert!(matches!(
            cluster_role(&bare, &new, seen),
            ClusterRole::Rerendered(_)
        ));
        let same = PurgeEvidence {
            deleted_uid: Some("c2"),
            ..seen
        };
        assert!(matches!(
            cluster_role(&bare, &new, same),
            ClusterRole::Previous(_)
        ));
    }
}
