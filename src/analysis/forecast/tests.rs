//! The model's states checked against what the real controller wrote (dumps 01, 02, 08, 10,
//! 14) and what its newer code does, object by object.

use super::*;
use crate::model::{AnyObject, parse_object};
use serde_json::{Value, json};

const NS: &str = "t";

fn snap(objs: Vec<Value>) -> Snapshot {
    Snapshot::from_objects(objs.into_iter().filter_map(|v| parse_object(v).ok()))
}

fn rj(name: &str, kind: &str, app: &str, backup: &str, options: Value) -> Arc<Obj<RestoreJob>> {
    match parse_object(
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"backupRef": {"name": backup},
                 "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": kind, "name": app},
                 "options": options}}),
    ) {
        Ok(AnyObject::RestoreJob(r)) => r,
        _ => unreachable!("a RestoreJob"),
    }
}

/// A running VM `vm1` with one disk `data` (HelmReleases, DataVolume, PVC, PV `Delete`).
fn vm() -> Vec<Value> {
    vec![
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "bk", "namespace": NS, "creationTimestamp": "2026-11-20T02:00:00Z"},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "v"},
                     "driverMetadata": {"velero.io/backup-name": "t-bk"}},
            "status": {"underlyingResources": {"dataVolumes": [{"dataVolumeName": "vm-disk-data", "applicationName": "data"}]}}}),
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "vm-instance-vm1", "namespace": NS}, "spec": {}}),
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "vm-disk-data", "namespace": NS}, "spec": {}}),
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm-instance-vm1", "namespace": NS}, "spec": {"runStrategy": "Always"}}),
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": "vm-instance-vm1", "namespace": NS}, "status": {"phase": "Running"}}),
        json!({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
            "metadata": {"name": "vm-disk-data", "namespace": NS}, "status": {"phase": "Succeeded"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "vm-disk-data", "namespace": NS, "uid": "pvc-1", "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv-1"},
            "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
            "spec": {"persistentVolumeReclaimPolicy": "Delete",
                     "claimRef": {"namespace": NS, "name": "vm-disk-data", "uid": "pvc-1"}},
            "status": {"phase": "Bound"}}),
    ]
}

fn stage<'a>(f: &'a Forecast, b: Branch, step: &str) -> &'a Stage {
    f.stages
        .iter()
        .find(|s| s.branch == b && s.step == step)
        .unwrap_or_else(|| panic!("no {step} under {b:?}"))
}

#[test]
fn a_64_character_name_fails_after_halting_renaming_and_deleting_as_in_dump_08() {
    let name = "restore-vm-in-place-after-disk-corruption-ticket-4711-2026-12-0x";
    let f = forecast(
        &snap(vm()),
        &rj(name, "VMInstance", "vm1", "bk", json!({})),
        Generation::Unguarded,
    );
    let last = f.stages.last().expect("stages");
    assert_eq!(last.step, "velero-restore");
    let s = &last.snapshot;
    let r = s.restore_jobs.get(NS, name).expect("rj");
    assert_eq!(r.phase, crate::model::objects::RjPhase::Failed);
    assert!(
        r.message
            .as_deref()
            .unwrap_or("")
            .contains("must be no more than 63 bytes")
    );
    for hr in ["vm-instance-vm1", "vm-disk-data"] {
        assert_eq!(
            s.helm_releases.get(NS, hr).and_then(|h| h.is_suspended()),
            Some(true),
            "{hr}"
        );
    }
    assert_eq!(
        s.vms
            .get(NS, "vm-instance-vm1")
            .and_then(|v| v.run_strategy.known().cloned())
            .as_deref(),
        Some("Halted")
    );
    assert!(s.vmis.get(NS, "vm-instance-vm1").is_none());
    let orig = crate::model::names::orig_pvc_name("vm-disk-data", name);
    let kept = s.pvcs.get(NS, &orig).expect("-orig PVC");
    assert!(
        kept.meta
            .annotation(crate::model::names::ANN_RESTORE_JOB_UID)
            .is_none(),
        "no guard annotation before the fixes"
    );
    assert!(s.pvcs.get(NS, "vm-disk-data").is_none(), "original deleted");
    let pv = s.pvs.get("", "pv-1").expect("pv");
    assert_eq!(pv.reclaim_policy.as_deref(), Some("Retain"));
    assert_eq!(
        pv.claim_ref.as_ref().map(|c| c.name.as_str()),
        Some(orig.as_str())
    );
    assert!(s.data_volumes.get(NS, "vm-disk-data").is_none());
    assert!(s.velero_restores.is_empty(), "no Velero Restore");
}

#[test]
fn guarded_writes_the_annotations_and_refuses_a_foreign_orig_before_halting() {
    let f = forecast(
        &snap(vm()),
        &rj("r1", "VMInstance", "vm1", "bk", json!({})),
        Generation::Guarded,
    );
    let s = &stage(&f, Branch::Guarded, "keep-disks").snapshot;
    let kept = s
        .pvcs
        .get(
            NS,
            &crate::model::names::orig_pvc_name("vm-disk-data", "r1"),
        )
        .expect("-orig");
    let uid = s.restore_jobs.get(NS, "r1").map(|r| r.meta.uid.to_string());
    assert_eq!(
        kept.meta
            .annotation(crate::model::names::ANN_RESTORE_JOB_UID)
            .map(str::to_string),
        uid
    );
    assert_eq!(
        kept.meta
            .annotation(crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY),
        Some("Delete")
    );
    assert_eq!(
        s.pvs
            .get("", "pv-1")
            .and_then(|p| p
                .meta
                .annotation(crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY)
                .map(str::to_string))
            .as_deref(),
        Some("Delete")
    );

    let mut objs = vm();
    objs.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": crate::model::names::orig_pvc_name("vm-disk-data", "r1"), "namespace": NS,
                     "creationTimestamp": "2026-10-01T00:00:00Z"},
        "spec": {"volumeName": "pv-old"}, "status": {"phase": "Bound"}}));
    let f = forecast(
        &snap(objs),
        &rj("r1", "VMInstance", "vm1", "bk", json!({})),
        Generation::Unknown,
    );
    assert_eq!(f.branches, vec![Branch::Unguarded, Branch::Guarded]);
    let guarded: Vec<&str> = f
        .stages
        .iter()
        .filter(|s| s.branch == Branch::Guarded)
        .map(|s| s.step)
        .collect();
    assert_eq!(guarded, ["created", "validate"], "refused before anything");
    // Unguarded (dump 02-b): skipped without a word, the DataVolume deleted anyway.
    let s = &stage(&f, Branch::Unguarded, "delete-datavolumes").snapshot;
    assert!(s.data_volumes.get(NS, "vm-disk-data").is_none());
    assert!(
        s.pvcs.get(NS, "vm-disk-data").is_some(),
        "the original is left where it was"
    );
}

#[test]
fn an_old_controller_leaves_a_vmdisk_untouched_and_velero_skips_it_as_in_dump_10() {
    let objs = vec![
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "dbk", "namespace": NS},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMDisk", "name": "disk1"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "v"}}}),
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "vm-disk-disk1", "namespace": NS}, "spec": {}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "vm-disk-disk1", "namespace": NS}, "spec": {"volumeName": "pv-d"},
            "status": {"phase": "Bound"}}),
    ];
    let f = forecast(
        &snap(objs),
        &rj("restore-d1", "VMDisk", "disk1", "dbk", json!({})),
        Generation::Unguarded,
    );
    let steps: Vec<&str> = f.stages.iter().map(|s| s.step).collect();
    assert_eq!(
        steps,
        ["created", "validate", "velero-restore", "velero-completed"]
    );
    let end = &f.stages[3];
    assert!(
        end.what
            .contains("skips the PVCs that still exist (vm-disk-disk1)"),
        "{}",
        end.what
    );
    assert_eq!(
        end.snapshot
            .helm_releases
            .get(NS, "vm-disk-disk1")
            .and_then(|h| h.is_suspended()),
        Some(false)
    );
}

#[test]
fn one_mistyped_cnpg_option_drops_the_recovery_time_as_in_dump_14() {
    let objs = vec![
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "pbk", "namespace": NS},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "pg1"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "CNPG", "name": "c"},
                     "driverMetadata": {"cnpg.io/server-name": "postgres-pg1"}}}),
        json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "pg1", "namespace": NS}, "spec": {}}),
        json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": {"name": "postgres-pg1", "namespace": NS, "uid": "c-1"}}),
        json!({"apiVersion": "barmancloud.cnpg.io/v1", "kind": "ObjectStore",
            "metadata": {"name": "postgres-pg1", "namespace": NS,
                "ownerReferences": [{"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "name": "postgres-pg1", "uid": "c-1", "controller": true}]}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "postgres-pg1-1", "namespace": NS, "labels": {"cnpg.io/cluster": "postgres-pg1"}}}),
    ];
    let opts = json!({"walArchiveTimeoutSeconds": "600", "recoveryTime": "2026-12-01T06:00:00Z"});
    let f = forecast(
        &snap(objs),
        &rj("restore-pg-opts", "Postgres", "pg1", "pbk", opts),
        Generation::Unguarded,
    );
    let s = &stage(&f, Branch::Unguarded, "suspend-releases").snapshot;
    let pg = s.postgreses.get(NS, "pg1").expect("app");
    assert_eq!(pg.bootstrap_enabled.known(), Some(&true));
    assert_eq!(pg.old_name.as_deref(), Some("postgres-pg1"));
    assert_eq!(pg.recovery_time, None, "every option dropped");
    assert!(
        s.events
            .iter()
            .any(|e| e.reason.as_deref() == Some("MalformedOptions"))
    );
    let s = &stage(&f, Branch::Unguarded, "purge").snapshot;
    assert!(s.clusters.get(NS, "postgres-pg1").is_none());
    assert!(s.pvcs.get(NS, "postgres-pg1-1").is_none());
    assert!(
        s.object_stores.get(NS, "postgres-pg1").is_none(),
        "collected with its Cluster (dump 07-a)"
    );
}
