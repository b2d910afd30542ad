//! Issue 25's preflight bullets, each on the emulator through the real binary: what the real
//! controller did in dumps 08-* (a 64-character RestoreJob name), 14-* (one option of the
//! wrong type), 11-* and 12-* (VMDisk restores) is predicted before the RestoreJob exists, with
//! the step at which it happens; and preflight names the controller generation `check` names.

mod preflight_support;

use preflight_support::*;
use restorewatch::model::names::{orig_pvc_name, short_hash};
use serde_json::{Value, json};

/// 64 characters: a valid object name, one over the label-value limit (dumps 08-*).
const NAME64: &str = "restore-vm-in-place-after-disk-corruption-ticket-4711-2026-12-0x";

fn steps(doc: &Value) -> Vec<String> {
    doc["steps"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    format!(
                        "{}:{}",
                        s["branch"].as_str().unwrap_or(""),
                        s["step"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_64_character_name_is_predicted_to_fail_after_the_disks_were_renamed() {
    assert_eq!(NAME64.len(), 64);
    let sim = Cluster::start(vm_objects()).await;
    let (code, doc) = sim.preflight_file(&rj_manifest(NAME64, json!({}))).await;
    assert_eq!(code, 1, "{doc:#}");
    let name = prediction(&doc, "restore-name-not-label-value").expect("the name is flagged");
    assert_eq!(name["severity"], "error");
    assert_eq!(name["step"], "velero-restore", "{name}");
    // check's own finding on the state the controller leaves: Failed, after the rename.
    let failed = prediction(&doc, "restore-failed").expect("the failure predicted");
    assert_eq!(failed["step"], "velero-restore", "{failed}");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("must be no more than 63 bytes"),
        "{failed}"
    );
    let s = steps(&doc);
    let at = |x: &str| s.iter().position(|y| y == x);
    assert!(
        at("unguarded:keep-disks") < at("unguarded:velero-restore")
            && at("unguarded:delete-datavolumes") < at("unguarded:velero-restore"),
        "the loss comes after the rename and the DataVolume deletion: {s:?}"
    );
    sim.stop().await;

    // Near miss: 63 characters go through (dumps 09-*).
    let sim = Cluster::start(vm_objects()).await;
    let (code, doc) = sim
        .preflight_file(&rj_manifest(&NAME64[..63], json!({})))
        .await;
    assert_eq!(code, 0, "{doc:#}");
    assert!(prediction(&doc, "restore-name-not-label-value").is_none());
    sim.stop().await;
}

#[tokio::test]
async fn one_option_of_the_wrong_type_is_the_malformed_options_check_raises() {
    let opts = json!({"walArchiveTimeoutSeconds": "600", "recoveryTime": "2026-12-01T06:00:00Z"});
    let sim = Cluster::start(pg_objects(CLUSTER_UID, "postgres-orders-2")).await;
    let (code, doc) = sim.preflight_file(&pg_manifest(opts)).await;
    assert_eq!(code, 1, "{doc:#}");
    let p = prediction(&doc, "malformed-options").expect("malformed options predicted");
    assert_eq!(p["severity"], "error");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("walArchiveTimeoutSeconds"),
        "{p}"
    );
    assert!(
        doc["steps"].as_array().unwrap().iter().any(|s| s["what"]
            .as_str()
            .unwrap_or("")
            .contains("no recoveryTime: the latest point")),
        "the point-in-time target is dropped: {doc:#}"
    );
    sim.stop().await;

    // Near miss: the same options well typed.
    let opts = json!({"walArchiveTimeoutSeconds": 600, "recoveryTime": "2026-12-01T06:00:00Z"});
    let sim = Cluster::start(pg_objects(CLUSTER_UID, "postgres-orders-2")).await;
    let (code, doc) = sim.preflight_file(&pg_manifest(opts)).await;
    assert_eq!(code, 0, "{doc:#}");
    assert!(prediction(&doc, "malformed-options").is_none());
    sim.stop().await;
}

const DISK: &str = "vm-disk-disk2";
const RJ: &str = "restore-d2";

/// A VMDisk `disk2` (HelmRelease, DataVolume, bound PVC, PV) and its Backup, which, as the
/// controller before the fixes leaves it, lists no disk (dumps 10-* to 12-*).
fn vmdisk_objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "replicated"},
            "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Delete"}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "disk2-bk", "namespace": NS, "creationTimestamp": "2026-11-20T02:00:00Z"},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMDisk", "name": "disk2"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "cozy-default-velero-vmdisk"},
                     "driverMetadata": {"velero.io/backup-name": "tenant-a-disk2-bk"}}}),
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": DISK, "namespace": NS, "labels": {"application.kind": "VMDisk"}},
            "spec": {"suspend": false}}),
        json!({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
            "metadata": {"name": DISK, "namespace": NS, "creationTimestamp": "2026-09-21T10:00:00Z"},
            "status": {"phase": "Succeeded", "claimName": DISK}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": DISK, "namespace": NS, "uid": PVC_UID, "creationTimestamp": "2026-09-21T10:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                     "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-disk2"},
            "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-disk2", "creationTimestamp": "2026-09-21T10:00:00Z"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
                     "storageClassName": "replicated", "volumeMode": "Block",
                     "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": NS, "name": DISK, "uid": PVC_UID}},
            "status": {"phase": "Bound"}}),
    ]
}

fn vmdisk_manifest() -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": RJ, "namespace": NS},
        "spec": {"backupRef": {"name": "disk2-bk"},
                 "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMDisk", "name": "disk2"}}})
}

/// Evidence of a guarded controller: a RestoreJob it failed naming a taken `-orig` PVC.
fn guarded() -> Value {
    failed_rj_naming("old-restore", "vm-disk-other-orig-1a2b")
}

#[tokio::test]
async fn under_a_guarded_controller_a_vmdisk_with_a_taken_orig_name_is_refused_before_anything() {
    let orig = orig_pvc_name(DISK, RJ);
    assert_eq!(short_hash(RJ), "827c", "the hash dump 11 records");
    let mut objs = vmdisk_objects();
    objs.push(guarded());
    let mut taken = foreign_orig(&orig, None);
    taken["spec"]["volumeName"] = json!("pv-disk2-old");
    objs.push(taken);
    let sim = Cluster::start(objs).await;
    let (code, doc) = sim.preflight_file(&vmdisk_manifest()).await;
    assert_eq!(doc["controller"]["generation"], "guarded", "{doc:#}");
    assert_eq!(code, 1, "{doc:#}");
    let failed = prediction(&doc, "restore-failed").expect("the refusal predicted");
    assert_eq!(failed["step"], "validate", "{failed}");
    assert!(
        failed["message"].as_str().unwrap().contains(&orig),
        "{failed}"
    );
    assert!(
        !steps(&doc)
            .iter()
            .any(|s| s.ends_with(":keep-disks") || s.ends_with(":suspend-releases")),
        "nothing suspended or renamed: {doc:#}"
    );
    sim.stop().await;

    // Near miss: the name free, the newer controller renames the VMDisk's disk like a VM's.
    let mut objs = vmdisk_objects();
    objs.push(guarded());
    let sim = Cluster::start(objs).await;
    let (_, doc) = sim.preflight_file(&vmdisk_manifest()).await;
    assert!(prediction(&doc, "restore-failed").is_none(), "{doc:#}");
    let kept = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "keep-disks")
        .expect("the disk is kept");
    assert!(
        kept["what"]
            .as_str()
            .unwrap()
            .contains(&format!("{DISK} kept as {orig}")),
        "{kept}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn under_a_guarded_controller_a_vmdisk_a_running_pod_mounts_is_refused() {
    let mut objs = vmdisk_objects();
    objs.push(guarded());
    objs.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "virt-launcher-vm-instance-vmm-abcde", "namespace": NS},
        "spec": {"containers": [{"name": "compute", "image": "virt-launcher"}],
                 "volumes": [{"name": "disk", "persistentVolumeClaim": {"claimName": DISK}}]},
        "status": {"phase": "Running"}}));
    let sim = Cluster::start_still(objs).await;
    let (code, doc) = sim.preflight_file(&vmdisk_manifest()).await;
    assert_eq!(code, 1, "{doc:#}");
    let failed = prediction(&doc, "restore-failed").expect("the refusal predicted");
    assert_eq!(failed["step"], "validate", "{failed}");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("pod/virt-launcher-vm-instance-vmm-abcde"),
        "{failed}"
    );
    sim.stop().await;
}

#[tokio::test]
async fn preflight_names_the_generation_check_names_from_another_namespaces_evidence() {
    let mut objs = vm_objects();
    objs.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-b"}}));
    // A guarded controller's -orig PVC in another namespace: the only evidence there is.
    let mut orig = foreign_orig(
        "vm-disk-x-orig-de3e",
        Some("5c96b3b8-0000-4000-8000-0000000000bb"),
    );
    orig["metadata"]["namespace"] = json!("tenant-b");
    orig["x-writer"] = json!("backup-controller");
    objs.push(orig);
    let sim = Cluster::start(objs).await;
    let check = sim.check().await;
    assert_eq!(check["controller"]["generation"], "guarded", "{check:#}");
    let (_, doc) = sim
        .preflight_file(&rj_manifest("restore-2", json!({})))
        .await;
    assert_eq!(
        doc["controller"]["generation"], check["controller"]["generation"],
        "{doc:#}"
    );
    sim.stop().await;
}

/// Dumps 13-*: a Velero Backup that is gone makes Velero answer `FailedValidation` after the
/// controller renamed the disks, and the restore waits forever. preflight reads Velero's
/// Backups (in Velero's namespace, whatever namespace it is asked about) and says so before.
#[tokio::test]
async fn a_velero_backup_that_is_gone_or_expired_is_flagged_before_the_restore() {
    for (expiration, flagged) in [
        (None, true),
        (Some("2020-01-01T00:00:00Z"), true),
        (Some("2099-01-01T00:00:00Z"), false),
    ] {
        let sim = Cluster::start(vm_objects_with_velero_backup(expiration)).await;
        let (code, doc) = sim
            .preflight_file(&rj_manifest("restore-vb", json!({})))
            .await;
        let p = prediction(&doc, "velero-backup-missing");
        assert_eq!(p.is_some(), flagged, "expiration {expiration:?}: {doc:#}");
        if flagged {
            assert_eq!(code, 1, "{doc:#}");
            assert_eq!(p.unwrap()["severity"], "error");
        } else {
            assert_eq!(code, 0, "{doc:#}");
        }
        sim.stop().await;
    }
}
