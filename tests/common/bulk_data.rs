//! A namespace of `-orig` PVCs to reclaim by the handful, one of each kind an operator meets:
//! two reclaimable ones (recorded policy Delete, PV Retain, the restored disk present), one
//! that may be the only copy (its restored disk is missing), one from a controller before the
//! fix (no recorded policy), one mounted by a pod, and one whose RestoreJob still runs.

#![allow(dead_code)]

use serde_json::{Value, json};

pub const NS: &str = "tenant-a";
pub const NOW: &str = "2026-11-21T10:00:00Z";
pub const RJ_UID: &str = "5c96b3b8-0000-4000-8000-000000000001";
pub const RUNNING_UID: &str = "6d000000-0000-4000-8000-0000000000aa";

/// Each disk: (name, its -orig PVC's uid, the policy recorded, the restored disk exists, size).
pub const DISKS: &[(&str, &str, Option<&str>, bool, &str)] = &[
    (
        "data",
        "0e000000-0000-4000-8000-000000000011",
        Some("Delete"),
        true,
        "10Gi",
    ),
    (
        "db",
        "0e000000-0000-4000-8000-000000000012",
        Some("Delete"),
        true,
        "5Gi",
    ),
    (
        "logs",
        "0e000000-0000-4000-8000-000000000013",
        Some("Delete"),
        false,
        "2Gi",
    ),
    (
        "sys",
        "0e000000-0000-4000-8000-000000000014",
        None,
        true,
        "20Gi",
    ),
    (
        "web",
        "0e000000-0000-4000-8000-000000000015",
        Some("Delete"),
        true,
        "8Gi",
    ),
];

/// The `-orig` PVC names of `DISKS`, in the table's order.
pub fn origs() -> Vec<String> {
    DISKS
        .iter()
        .map(|d| format!("vm-disk-{}-orig-de3e", d.0))
        .collect()
}

fn orig(
    ns: &str,
    disk: &str,
    uid: &str,
    rj_uid: &str,
    recorded: Option<&str>,
    size: &str,
) -> [Value; 2] {
    let name = format!(
        "vm-disk-{disk}-orig-{}",
        if ns == NS { "de3e" } else { "8604" }
    );
    let pv_name = format!("pv-{ns}-{disk}");
    let mut ann = serde_json::Map::new();
    if let Some(r) = recorded {
        ann.insert("backups.cozystack.io/restore-job-uid".into(), json!(rj_uid));
        ann.insert(
            "backups.cozystack.io/original-reclaim-policy".into(),
            json!(r),
        );
    }
    let mut pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "uid": format!("pv{}", &uid[2..]), "creationTimestamp": "2026-09-21T10:00:00Z"},
        "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
                 "storageClassName": "replicated", "volumeMode": "Block",
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": name, "uid": uid}},
        "status": {"phase": "Bound"}});
    if let Some(r) = recorded {
        pv["metadata"]["annotations"] = json!({"backups.cozystack.io/original-reclaim-policy": r});
    }
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, "uid": uid, "creationTimestamp": "2026-11-20T10:00:40Z", "annotations": ann,
                     "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": pv_name},
        "status": {"phase": "Bound", "capacity": {"storage": size}}});
    [pvc, pv]
}

fn restored(ns: &str, disk: &str, n: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": format!("vm-disk-{disk}"), "namespace": ns, "uid": format!("7e000000-0000-4000-8000-0000000001{n:02}"),
                     "creationTimestamp": "2026-11-20T10:02:00Z"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": format!("pv-restored-{ns}-{disk}")},
        "status": {"phase": "Bound"}})
}

fn backup(ns: &str, disks: &[&str]) -> Value {
    let dvs: Vec<Value> = disks
        .iter()
        .map(|d| json!({"dataVolumeName": format!("vm-disk-{d}"), "applicationName": d}))
        .collect();
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": "vm1-backup", "namespace": ns, "uid": format!("b0000000-0000-4000-8000-0000000000{}", if ns == NS { "03" } else { "04" }),
                     "creationTimestamp": "2026-11-20T02:00:00Z"},
        "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                 "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero"}},
        "status": {"underlyingResources": {"dataVolumes": dvs}}})
}

pub fn objects() -> Vec<Value> {
    let mut v = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-b"}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "replicated"},
            "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Delete"}),
        backup(NS, &DISKS.iter().map(|d| d.0).collect::<Vec<_>>()),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": "restore-test", "namespace": NS, "uid": RJ_UID, "creationTimestamp": "2026-11-20T10:00:00Z"},
            "spec": {"backupRef": {"name": "vm1-backup"}},
            "status": {"phase": "Succeeded", "startedAt": "2026-11-20T10:00:01Z", "completedAt": "2026-11-20T10:05:00Z"}}),
        // The pod that still reads the db disk's old copy.
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "forensics", "namespace": NS},
            "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "vm-disk-db-orig-de3e"}}]},
            "status": {"phase": "Running"}}),
        // A restore still running in another namespace: its -orig PVC is its safety copy.
        backup("tenant-b", &["app"]),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": "rj", "namespace": "tenant-b", "uid": RUNNING_UID, "creationTimestamp": "2026-11-21T09:55:00Z"},
            "spec": {"backupRef": {"name": "vm1-backup"}},
            "status": {"phase": "Running", "startedAt": "2026-11-21T09:55:01Z"}}),
        restored("tenant-b", "app", 99),
    ];
    v.extend(orig(
        "tenant-b",
        "app",
        "0e000000-0000-4000-8000-000000000021",
        RUNNING_UID,
        Some("Delete"),
        "4Gi",
    ));
    // The restore's Velero Restore, after the RestoreJob: a Completed DataDownload into each
    // restored disk proves its copy.
    let restore = "tenant-a.restore-test-fk8s8";
    let restore_uid = "9ff8f956-0000-4000-8000-000000000031";
    v.push(json!({"apiVersion": "velero.io/v1", "kind": "Restore",
        "metadata": {"name": restore, "namespace": "cozy-velero", "uid": restore_uid, "creationTimestamp": "2026-11-20T10:00:20Z",
                     "labels": {"backups.cozystack.io/owned-by.BackupJobName": "restore-test",
                                "backups.cozystack.io/owned-by.BackupJobNamespace": NS}},
        "status": {"phase": "Completed"}}));
    for (n, (disk, uid, recorded, has_restored, size)) in DISKS.iter().enumerate() {
        v.extend(orig(NS, disk, uid, RJ_UID, *recorded, size));
        if *has_restored {
            v.push(restored(NS, disk, n));
            v.push(json!({"apiVersion": "velero.io/v2alpha1", "kind": "DataDownload",
                "metadata": {"name": format!("{restore}-{disk}"), "namespace": "cozy-velero", "creationTimestamp": "2026-11-20T10:00:30Z",
                             "labels": {"velero.io/restore-uid": restore_uid, "velero.io/restore-name": restore}},
                "spec": {"targetVolume": {"pvc": format!("vm-disk-{disk}"), "namespace": NS, "pv": ""},
                         "operationTimeout": "10m", "snapshotID": format!("snap-{disk}")},
                "status": {"phase": "Completed", "completionTimestamp": "2026-11-20T10:04:00Z"}}));
        }
    }
    v
}
