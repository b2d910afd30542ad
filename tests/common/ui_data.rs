//! Fixed, hand-built data for UI tests: a half-done VM disk rename, a Postgres restore whose
//! serverName reverted, a healthy restore downloading at 62%, and a few `-orig` PVCs. Times
//! are fixed relative to `now()` so screen snapshots never move.

#![allow(dead_code)]

use jiff::{SignedDuration, Timestamp};
use restorewatch::analysis::copy_proof::{CopyProof, RestoredCopy};
use restorewatch::analysis::*;
use restorewatch::cluster::{KindHealth, Snapshot, SourceInfo, SyncState};
use restorewatch::model::{Field, Kind, parse_object};
use restorewatch::pipeline::Frame;
use restorewatch::ui::app::{App, UiOptions};
use restorewatch::ui::theme::Theme;
use serde_json::json;
use std::sync::Arc;

pub fn now() -> Timestamp {
    "2025-03-14T12:00:00Z".parse().expect("fixed time")
}

pub fn ago(mins: i64) -> Timestamp {
    now() - SignedDuration::from_mins(mins)
}

fn k(s: &str) -> Field<String> {
    Field::Known(s.to_string())
}

fn rid(ns: &str, name: &str) -> RestoreId {
    RestoreId {
        namespace: ns.into(),
        name: name.into(),
    }
}

fn step(id: StepId, state: StepState, detail: &str) -> Step {
    Step {
        id,
        state,
        detail: detail.into(),
        progress: None,
    }
}

fn pvc(name: &str, uid: &str, phase: &str, volume: &str, created: i64) -> PvcInfo {
    PvcInfo {
        name: name.into(),
        uid: uid.into(),
        phase: k(phase),
        volume: Some(volume.into()),
        created: Some(ago(created)),
        deleting: false,
        restore_job_uid: None,
        recorded_policy: None,
    }
}

fn pv(name: &str, policy: &str, claim: &str, claim_uid: &str, recorded: Option<&str>) -> PvInfo {
    PvInfo {
        name: name.into(),
        phase: k("Bound"),
        reclaim_policy: k(policy),
        claim: Some((claim.into(), Some(claim_uid.into()))),
        recorded_policy: recorded.map(str::to_string),
    }
}

pub const RESTORE_TEST_UID: &str = "5e1f0c3a-7b2d-4a51-9c8e-2f6d1a0b9c77";

/// tenant-a/restore-test: disk `root` renamed, disk `data` stopped halfway.
pub fn restore_test() -> RestoreView {
    use StepId::*;
    use StepState::*;
    let mut orig_root = pvc(
        "vm-disk-root-orig-1a2b",
        "c1c1c1c1-root-orig",
        "Bound",
        "pvc-root",
        12,
    );
    orig_root.restore_job_uid = Some(RESTORE_TEST_UID.into());
    orig_root.recorded_policy = Some("Delete".into());
    let mut orig_data = pvc(
        "vm-disk-data-orig-1a2b",
        "d2d2d2d2-data-orig",
        "Pending",
        "pvc-data",
        11,
    );
    orig_data.restore_job_uid = Some(RESTORE_TEST_UID.into());
    orig_data.recorded_policy = Some("Delete".into());
    with_event_history(RestoreView {
        id: rid("tenant-a", "restore-test"),
        uid: RESTORE_TEST_UID.into(),
        driver: Driver::Velero,
        target: Some(TargetRef {
            kind: "VMInstance".into(),
            name: "vm1".into(),
        }),
        in_place: true,
        phase: "Running".into(),
        terminal: false,
        message: None,
        created: Some(ago(14)),
        started_at: Some(ago(14)),
        completed_at: None,
        deadline: None,
        backup: Some("vm1-daily-20250314".into()),
        hash: "1a2b".into(),
        keep_original_pvc: Some(true),
        steps: vec![
            step(Validate, Done, "options valid"),
            step(
                SuspendReleases,
                Done,
                "vm-instance-vm1, vm-disk-root, vm-disk-data suspended",
            ),
            step(HaltVm, Done, "VirtualMachineInstance vm1 gone"),
            step(
                KeepDisks,
                Failed,
                "vm-disk-data: -orig PVC Pending, PV pvc-data still claimed by vm-disk-data",
            ),
            step(DeleteDatavolumes, Pending, ""),
            step(VeleroRestore, Pending, ""),
            step(DataDownload, Pending, ""),
            step(Complete, Pending, ""),
            step(Verify, Pending, ""),
        ],
        disks: vec![
            DiskChain {
                disk: "vm-disk-root".into(),
                data_volume: Some(DvInfo {
                    name: "vm-disk-root".into(),
                    phase: k("Succeeded"),
                    progress: Some("100.0%".into()),
                }),
                pvc: None,
                pv: None,
                orig_name: "vm-disk-root-orig-1a2b".into(),
                orig: Some(orig_root),
                orig_ownership: Some(Ownership::Ours { annotated: true }),
                orig_pv: Some(pv(
                    "pvc-root",
                    "Retain",
                    "tenant-a/vm-disk-root-orig-1a2b",
                    "c1c1c1c1-root-orig",
                    Some("Delete"),
                )),
                download: None,
            },
            DiskChain {
                disk: "vm-disk-data".into(),
                data_volume: Some(DvInfo {
                    name: "vm-disk-data".into(),
                    phase: k("Succeeded"),
                    progress: Some("100.0%".into()),
                }),
                pvc: Some(pvc(
                    "vm-disk-data",
                    "a0a0a0a0-data",
                    "Bound",
                    "pvc-data",
                    300,
                )),
                pv: Some(pv(
                    "pvc-data",
                    "Retain",
                    "tenant-a/vm-disk-data",
                    "a0a0a0a0-data",
                    Some("Delete"),
                )),
                orig_name: "vm-disk-data-orig-1a2b".into(),
                orig: Some(orig_data),
                orig_ownership: Some(Ownership::Ours { annotated: true }),
                orig_pv: Some(pv(
                    "pvc-data",
                    "Retain",
                    "tenant-a/vm-disk-data",
                    "a0a0a0a0-data",
                    Some("Delete"),
                )),
                download: None,
            },
        ],
        postgres: None,
        releases: vec![],
        events: vec![
            EventLine {
                time: Some(ago(12)),
                type_: "Normal".into(),
                reason: "KeptOriginalPVC".into(),
                message: "kept vm-disk-root as vm-disk-root-orig-1a2b".into(),
                count: 1,
                about: None,
            },
            EventLine {
                time: Some(ago(11)),
                type_: "Warning".into(),
                reason: "RenameFailed".into(),
                message: "deleting PVC vm-disk-data: context deadline exceeded".into(),
                count: 3,
                about: Some(ObjRef::new(
                    Kind::PersistentVolumeClaim,
                    "tenant-a",
                    "vm-disk-data",
                )),
            },
        ],
        last_change: Some(ago(11)),
        stale: false,
        history: vec![],
    })
}

/// tenant-b/pg-restore: the barman plugin's serverName went back to the old one.
pub fn pg_restore() -> RestoreView {
    use StepId::*;
    use StepState::*;
    RestoreView {
        id: rid("tenant-b", "pg-restore"),
        uid: "7a7a7a7a-pg-restore".into(),
        driver: Driver::Cnpg,
        target: Some(TargetRef {
            kind: "Postgres".into(),
            name: "orders".into(),
        }),
        in_place: true,
        phase: "Running".into(),
        terminal: false,
        message: None,
        created: Some(ago(26)),
        started_at: Some(ago(26)),
        completed_at: None,
        deadline: Some(now() + SignedDuration::from_mins(4)),
        backup: Some("orders-nightly".into()),
        hash: "9c3d".into(),
        keep_original_pvc: None,
        steps: vec![
            step(Validate, Done, ""),
            step(WalArchive, Done, "last WAL archived"),
            step(SuspendRelease, Done, "postgres-orders suspended"),
            step(PatchApp, Done, "newServerName orders-r9c3d"),
            step(Purge, Done, "Cluster postgres-orders and 3 PVCs deleted"),
            step(ResumeRelease, Done, ""),
            step(
                Rebootstrap,
                Active,
                "Cluster postgres-orders recovering from orders",
            ),
            step(Healthy, Pending, ""),
            step(Complete, Pending, ""),
        ],
        disks: vec![],
        postgres: Some(PgView {
            app: "orders".into(),
            cluster_name: "postgres-orders".into(),
            new_server_name: Some("orders-r9c3d".into()),
            plugin_server_name: Some(k("orders")),
            recovery_server_name: Some("orders".into()),
            cluster_uid: Some("b2b2b2b2-new-cluster".into()),
            cluster_phase: Some("Setting up primary".into()),
            cluster_deleting: false,
            object_store: "postgres-orders".into(),
            object_store_owner_uid: Some("b2b2b2b2-new-cluster".into()),
            archive_destination: Some("s3://backups/tenant-b".into()),
            recovery_destination: Some("s3://backups/tenant-b".into()),
        }),
        releases: vec![],
        events: vec![],
        last_change: Some(ago(3)),
        stale: false,
        history: pg_history(),
    }
}

/// The history the analysis gives a restore whose objects carry no managedFields: its Events.
fn with_event_history(mut r: RestoreView) -> RestoreView {
    let rj = ObjRef::new(Kind::RestoreJob, &r.id.namespace, &r.id.name);
    r.history = r
        .events
        .iter()
        .map(|e| HistoryEntry {
            time: e.time,
            object: rj.clone(),
            what: HistoryWhat::Event {
                type_: e.type_.clone(),
                reason: e.reason.clone(),
                message: e.message.clone(),
                count: e.count,
            },
        })
        .collect();
    r
}

fn at(hms: &str) -> Timestamp {
    format!("2025-03-14T{hms}Z").parse().expect("fixed time")
}

fn arcs(xs: &[&str]) -> std::sync::Arc<[std::sync::Arc<str>]> {
    xs.iter().map(|x| std::sync::Arc::from(*x)).collect()
}

/// Report 003 as the history pane shows it: the chart renders the Cluster with the new
/// serverName, four seconds later the backup driver writes the old one back.
pub fn pg_history() -> Vec<HistoryEntry> {
    let rj = ObjRef::new(Kind::RestoreJob, "tenant-b", "pg-restore");
    let app = ObjRef::new(Kind::Postgres, "tenant-b", "orders");
    let cl = ObjRef::new(Kind::CnpgCluster, "tenant-b", "postgres-orders");
    let writer = |time: Timestamp, o: &ObjRef, m: &str, op: &str, sub: Option<&str>, f: &[&str]| {
        HistoryEntry {
            time: Some(time),
            object: o.clone(),
            what: HistoryWhat::ManagedFields {
                manager: m.into(),
                operation: op.into(),
                subresource: sub.map(Into::into),
                fields: arcs(f),
            },
        }
    };
    let change = |time: Timestamp, path: &str, from: Option<&str>, to: &str, m: &str, op: &str| {
        HistoryEntry {
            time: Some(time),
            object: cl.clone(),
            what: HistoryWhat::Change {
                path: path.into(),
                from: from.map(Into::into),
                to: Some(to.into()),
                manager: Some(m.into()),
                operation: Some(op.into()),
            },
        }
    };
    let event = |time: Timestamp, type_: &str, reason: &str, message: &str| HistoryEntry {
        time: Some(time),
        object: rj.clone(),
        what: HistoryWhat::Event {
            type_: type_.into(),
            reason: reason.into(),
            message: message.into(),
            count: 1,
        },
    };
    vec![
        writer(
            "2025-03-07T09:00:00Z".parse().expect("fixed time"),
            &app,
            "kubectl-client-side-apply",
            "Update",
            None,
            &[
                "spec.backup",
                "spec.replicas",
                "spec.size",
                "spec.storageClass",
            ],
        ),
        event(
            at("11:34:02"),
            "Normal",
            "WALArchiveReady",
            "end WAL of backup orders-nightly is archived",
        ),
        writer(
            at("11:34:03"),
            &app,
            "cozystack-cnpg-backup-driver",
            "Update",
            None,
            &["spec.bootstrap"],
        ),
        HistoryEntry {
            time: Some(at("11:34:05")),
            object: cl.clone(),
            what: HistoryWhat::Deleted {
                uid: "b1b1b1b1-old-cluster".into(),
                owners: vec![],
            },
        },
        event(
            at("11:34:40"),
            "Normal",
            "TargetPurged",
            "Cluster postgres-orders and its PVCs are gone",
        ),
        writer(
            at("11:34:45"),
            &cl,
            "helm-controller",
            "Apply",
            None,
            &[
                "metadata.labels",
                "spec.bootstrap",
                "spec.externalClusters",
                "spec.instances",
                "spec.storage",
            ],
        ),
        writer(
            at("11:34:49"),
            &cl,
            "cozystack-cnpg-backup-driver",
            "Apply",
            None,
            &["spec.plugins"],
        ),
        change(
            at("11:34:49"),
            "spec.plugins[0].parameters.serverName",
            Some("orders-r9c3d"),
            "orders",
            "cozystack-cnpg-backup-driver",
            "Apply",
        ),
        change(
            at("11:35:25"),
            "status.phase",
            None,
            "Setting up primary",
            "manager",
            "Update",
        ),
        writer(
            at("11:35:25"),
            &cl,
            "manager",
            "Update",
            Some("status"),
            &["status.conditions", "status.instances", "status.phase"],
        ),
        event(
            at("11:52:10"),
            "Warning",
            "WALArchiveCheckFailed",
            "WAL archive check failed for server orders: Expected empty archive",
        ),
    ]
}

/// tenant-c/restore-web: healthy, DataDownload at 62%.
pub fn healthy_restore() -> RestoreView {
    use StepId::*;
    use StepState::*;
    let mut orig = pvc(
        "vm-disk-web-orig-4e5f",
        "e5e5e5e5-web-orig",
        "Bound",
        "pvc-web-old",
        9,
    );
    orig.restore_job_uid = Some("c3c3c3c3-restore-web".into());
    orig.recorded_policy = Some("Delete".into());
    let progress = Progress {
        done: 6_657_199_308,
        total: 10_737_418_240,
    };
    let mut dl = step(DataDownload, Active, "restore-web-x7k2p: 6.2GiB of 10.0GiB");
    dl.progress = Some(progress);
    with_event_history(RestoreView {
        id: rid("tenant-c", "restore-web"),
        uid: "c3c3c3c3-restore-web".into(),
        driver: Driver::Velero,
        target: Some(TargetRef {
            kind: "VMInstance".into(),
            name: "web".into(),
        }),
        in_place: true,
        phase: "Running".into(),
        terminal: false,
        message: None,
        created: Some(ago(10)),
        started_at: Some(ago(10)),
        completed_at: None,
        deadline: None,
        backup: Some("web-hourly".into()),
        hash: "4e5f".into(),
        keep_original_pvc: Some(true),
        steps: vec![
            step(Validate, Done, ""),
            step(SuspendReleases, Done, ""),
            step(HaltVm, Done, ""),
            step(KeepDisks, Done, "vm-disk-web kept"),
            step(DeleteDatavolumes, Done, ""),
            step(VeleroRestore, Done, "restore-web-x7k2p InProgress"),
            dl,
            step(Complete, Pending, ""),
            step(Verify, Pending, ""),
        ],
        disks: vec![DiskChain {
            disk: "vm-disk-web".into(),
            data_volume: None,
            pvc: Some(pvc(
                "vm-disk-web",
                "f6f6f6f6-web-new",
                "Bound",
                "pvc-web-new",
                5,
            )),
            pv: Some(pv(
                "pvc-web-new",
                "Delete",
                "tenant-c/vm-disk-web",
                "f6f6f6f6-web-new",
                None,
            )),
            orig_name: "vm-disk-web-orig-4e5f".into(),
            orig: Some(orig),
            orig_ownership: Some(Ownership::Ours { annotated: true }),
            orig_pv: Some(pv(
                "pvc-web-old",
                "Retain",
                "tenant-c/vm-disk-web-orig-4e5f",
                "e5e5e5e5-web-orig",
                Some("Delete"),
            )),
            download: Some(DownloadInfo {
                name: "restore-web-x7k2p".into(),
                phase: k("InProgress"),
                progress: Some(progress),
            }),
        }],
        postgres: None,
        releases: vec![],
        events: vec![EventLine {
            time: Some(ago(4)),
            type_: "Normal".into(),
            reason: "Started".into(),
            message: "DataDownload restore-web-x7k2p started".into(),
            count: 1,
            about: None,
        }],
        last_change: Some(ago(1)),
        stale: false,
        history: vec![],
    })
}

fn orig_view(
    ns: &str,
    name: &str,
    restore: Option<(&str, &str)>,
    age: i64,
    reclaim: Result<Option<String>, String>,
) -> OrigPvcView {
    let mut p = pvc(
        name,
        &format!("{name}-uid"),
        "Bound",
        &format!("pv-{name}"),
        age,
    );
    p.recorded_policy = Some("Delete".into());
    OrigPvcView {
        namespace: ns.into(),
        pvc: p,
        base: name.split("-orig-").next().unwrap_or(name).into(),
        hash: name.rsplit('-').next().unwrap_or("").into(),
        size: Some("20Gi".into()),
        restore: restore.map(|(n, r)| rid(n, r)),
        restore_phase: Some("Running".into()),
        deleted_restore: None,
        pv: Some(pv(
            &format!("pv-{name}"),
            "Retain",
            &format!("{ns}/{name}"),
            &format!("{name}-uid"),
            Some("Delete"),
        )),
        class_policy: Some("Delete".into()),
        mounted_by: vec![],
        proof: match &reclaim {
            Ok(_) => CopyProof::Proven(RestoredCopy {
                restore_job: restore.map(|(_, r)| r).unwrap_or("restore-old").into(),
                restored_pvc: name.split("-orig-").next().unwrap_or(name).into(),
                download: format!("{name}-dd"),
                bytes: Some(20 << 30),
                completed: Some(ago(age - 1)),
            }),
            Err(_) => CopyProof::NotProven(format!(
                "RestoreJob {} that made this copy is Running, not Succeeded",
                restore.map(|(_, r)| r).unwrap_or("restore-old")
            )),
        },
        reclaim,
    }
}

pub fn findings() -> Vec<Finding> {
    vec![
        Finding {
            code: Code::RenameHalfDone,
            severity: Severity::Error,
            restore: Some(rid("tenant-a", "restore-test")),
            objects: vec![
                ObjRef::new(Kind::PersistentVolumeClaim, "tenant-a", "vm-disk-data-orig-1a2b"),
                ObjRef::new(Kind::PersistentVolume, "", "pvc-data"),
            ],
            message: "vm-disk-data-orig-1a2b is Pending and PV pvc-data is still claimed by vm-disk-data".into(),
            remedy: "finish the rename: keep PV pvc-data on Retain, delete vm-disk-data, point the claimRef at vm-disk-data-orig-1a2b".into(),
            action: Some(ActionKind::ResumeRename),
            stale: false,
        },
        Finding {
            code: Code::ServernameReverted,
            severity: Severity::Error,
            restore: Some(rid("tenant-b", "pg-restore")),
            objects: vec![
                ObjRef::new(Kind::CnpgCluster, "tenant-b", "postgres-orders"),
                ObjRef::new(Kind::Postgres, "tenant-b", "orders"),
            ],
            message: "Cluster postgres-orders archives as orders, not orders-r9c3d: it will overwrite the backup it restores from".into(),
            remedy: "set the barman plugin serverName back to orders-r9c3d while the restore runs".into(),
            action: Some(ActionKind::FixServername),
            stale: false,
        },
        Finding {
            code: Code::ReclaimLeakRisk,
            severity: Severity::Warning,
            restore: None,
            objects: vec![
                ObjRef::new(Kind::PersistentVolumeClaim, "tenant-a", "vm-disk-old-orig-7777"),
                ObjRef::new(Kind::PersistentVolume, "", "pv-vm-disk-old-orig-7777"),
            ],
            message: "PV pv-vm-disk-old-orig-7777 is Retain, recorded policy Delete: deleting vm-disk-old-orig-7777 alone leaks the volume".into(),
            remedy: "reclaim it with restorewatch: the PV goes back to Delete first".into(),
            action: Some(ActionKind::ReclaimOrig),
            stale: false,
        },
        Finding {
            code: Code::RestoreDeadlineNear,
            severity: Severity::Warning,
            restore: Some(rid("tenant-b", "pg-restore")),
            objects: vec![ObjRef::new(Kind::RestoreJob, "tenant-b", "pg-restore")],
            message: "4m of 30m left and Cluster postgres-orders is not healthy".into(),
            remedy: "watch the Cluster; the controller fails the restore at the deadline".into(),
            action: None,
            stale: false,
        },
    ]
}

pub fn report() -> Report {
    Report {
        controller: Default::default(),
        index: Default::default(),
        now: Some(now()),
        valid_until: None,
        restores: std::sync::Arc::new(vec![
            restore_test().into(),
            pg_restore().into(),
            healthy_restore().into(),
        ]),
        findings: std::sync::Arc::new(findings().into_iter().map(std::sync::Arc::new).collect()),
        orig_pvcs: std::sync::Arc::new(vec![
            orig_view(
                "tenant-a",
                "vm-disk-root-orig-1a2b",
                Some(("tenant-a", "restore-test")),
                12,
                Err("RestoreJob restore-test is still running".into()),
            )
            .into(),
            orig_view(
                "tenant-a",
                "vm-disk-old-orig-7777",
                Some(("tenant-a", "restore-old")),
                4320,
                Ok(Some("Delete".into())),
            )
            .into(),
            orig_view(
                "tenant-c",
                "vm-disk-web-orig-4e5f",
                Some(("tenant-c", "restore-web")),
                9,
                Err("RestoreJob restore-web is still running".into()),
            )
            .into(),
        ]),
    }
}

/// `before` with every finding of restore `name` gone, the restores and the rest shared as
/// they were (a next frame in which one restore's findings were fixed).
pub fn without_findings_of(before: &Report, name: &str) -> Report {
    let mut report = Report {
        restores: before.restores.clone(),
        findings: before
            .findings
            .iter()
            .filter(|f| f.restore.as_ref().is_none_or(|r| r.name != name))
            .cloned()
            .collect::<restorewatch::analysis::FindingList>()
            .into(),
        ..before.clone()
    };
    report.reindex();
    report
}

/// `before`, with restore `name`'s application renamed to `app`: the same restores in the same
/// places, one of them built from another view.
pub fn with_app_of(before: &Report, name: &str, app: &str) -> Report {
    let restores = before
        .restores
        .iter()
        .map(|r| {
            let mut v = (**r).clone();
            if v.id.name == name
                && let Some(t) = &mut v.target
            {
                t.name = app.to_string();
                return Arc::new(v);
            }
            Arc::clone(r)
        })
        .collect::<Vec<_>>();
    let mut report = Report {
        restores: Arc::new(restores),
        ..before.clone()
    };
    report.reindex();
    report
}

/// A few real objects, so the YAML view has something to render.
pub fn snapshot() -> Snapshot {
    let objs = [
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
               "metadata": {"name": "restore-test", "namespace": "tenant-a", "uid": RESTORE_TEST_UID,
                            "creationTimestamp": "2025-03-14T11:46:00Z"},
               "spec": {"backupRef": {"name": "vm1-daily-20250314"}, "options": {"keepOriginalPVC": true}},
               "status": {"phase": "Running"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": "vm-disk-data-orig-1a2b", "namespace": "tenant-a", "uid": "d2d2d2d2-data-orig",
                            "annotations": {"backups.cozystack.io/restore-job-uid": RESTORE_TEST_UID}},
               "spec": {"volumeName": "pvc-data", "resources": {"requests": {"storage": "20Gi"}}},
               "status": {"phase": "Pending"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-a"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-b"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-c"}}),
    ];
    let mut s = Snapshot::from_objects(objs.into_iter().filter_map(|o| parse_object(o).ok()));
    s.source = SourceInfo::Live {
        context: "prod-eu".into(),
        cluster: "prod-eu".into(),
    };
    for kind in [
        Kind::RestoreJob,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::Event,
    ] {
        s.health.insert(
            kind,
            KindHealth {
                state: SyncState::Synced,
                last_event: Some(ago(1)),
            },
        );
    }
    s.health.insert(
        Kind::DataVolume,
        KindHealth {
            state: SyncState::Forbidden {
                error: "datavolumes.cdi.kubevirt.io is forbidden (403)".into(),
            },
            last_event: None,
        },
    );
    s.health.insert(
        Kind::CnpgCluster,
        KindHealth {
            state: SyncState::NotInstalled,
            last_event: None,
        },
    );
    s
}

pub fn frame_with(seq: u64, snapshot: Snapshot, report: Report) -> Arc<Frame> {
    Arc::new(Frame {
        seq,
        snapshot: Arc::new(snapshot),
        report: Arc::new(report),
        analyzed_at: now(),
    })
}

pub fn frame(seq: u64) -> Arc<Frame> {
    frame_with(seq, snapshot(), report())
}

pub fn options() -> UiOptions {
    UiOptions {
        readonly: false,
        // Snapshots compare text; colour is checked by the theme's own tests.
        theme: Theme::builtin(false),
        ..UiOptions::default()
    }
}

/// An app at a fixed time and size, showing the fixed frame.
pub fn app(w: u16, h: u16) -> App {
    let mut a = App::new(options(), now(), (w, h));
    restorewatch::ui::update(&mut a, restorewatch::ui::Msg::Frame(Some(frame(1))));
    a
}
