//! A synthetic Cozystack cluster of exactly `n` objects: tenants whose VM disks are
//! DataVolume + PVC + PV triples, 1% of `n` RestoreJobs in flight (each with its Backup,
//! HelmReleases, VM, new DataVolumes and PVCs, `-orig` PVCs and their PVs, Velero Restore,
//! DataDownloads and the controller's Events), a StorageClass and the namespaces.
//!
//! Objects look like `kubectl get -o json` prints them (the fixtures' shapes), with times
//! relative to `now` so the live analysis sees restores a few minutes old.

use crate::model::names::{orig_pvc_name, short_hash};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Objects one restore in flight brings (see `restore`).
const PER_RESTORE: usize = 26;
pub const STORAGE_CLASS: &str = "replicated-retain";

pub struct World {
    pub objects: Vec<Value>,
    /// Background PVCs (`namespace`, `name`), the targets of benchmark writes.
    pub write_targets: Vec<(String, String)>,
    pub pvcs: usize,
    pub restores: usize,
}

struct Gen {
    now: i64,
    seq: u64,
}

impl Gen {
    fn uid(&mut self, tag: u32) -> String {
        self.seq += 1;
        format!("{tag:08x}-0000-4000-8000-{:012x}", self.seq)
    }
    fn ago(&self, secs: i64) -> String {
        Timestamp::from_second(self.now - secs)
            .map(|t| t.to_string())
            .unwrap_or_default()
    }
}

/// A cluster ready for the emulator to load: generated, or a dump as it was given.
pub struct Cluster {
    /// The column's shape name: the generated shape's, or `dump:FILE`.
    pub name: String,
    pub file: std::path::PathBuf,
    /// Whether the bench wrote `file` (and removes it after the run).
    pub owned: bool,
    pub objects: usize,
    pub pvcs: usize,
    pub restores: usize,
    pub write_targets: Vec<(String, String)>,
    /// `kubectl get` resources of every kind restorewatch reads that the cluster holds.
    pub same_kinds: String,
}

/// A kubectl `List` (JSON) as a bench cluster: counted, and its PVCs (not the `-orig` ones a
/// restore kept) taken as the targets of timed writes, in a stable order.
pub fn load_dump(path: &std::path::Path) -> anyhow::Result<Cluster> {
    use anyhow::Context;
    let text =
        std::fs::read(path).with_context(|| format!("reading the dump {}", path.display()))?;
    let list: Value = serde_json::from_slice(&text).with_context(|| {
        format!(
            "{} is not JSON (a gzipped dump must be gunzipped first)",
            path.display()
        )
    })?;
    let items = list["items"]
        .as_array()
        .with_context(|| format!("{} is not a kubectl List (no items)", path.display()))?;
    let count = |kind: &str| items.iter().filter(|o| o["kind"] == kind).count();
    let mut write_targets: Vec<(String, String)> = items
        .iter()
        .filter(|o| o["kind"] == "PersistentVolumeClaim")
        .filter_map(|o| {
            let m = &o["metadata"];
            Some((
                m["namespace"].as_str()?.to_string(),
                m["name"].as_str()?.to_string(),
            ))
        })
        .filter(|(_, name)| !name.contains("-orig-"))
        .collect();
    write_targets.sort();
    let file_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    Ok(Cluster {
        name: format!("dump:{file_name}"),
        file: path.to_path_buf(),
        owned: false,
        objects: items.len(),
        pvcs: count("PersistentVolumeClaim"),
        restores: count("RestoreJob"),
        same_kinds: super::kubectl::Kubectl::resources_of(items),
        write_targets,
    })
}

pub fn tenant(i: usize) -> String {
    format!("tenant-{i:05}")
}

/// The cluster shapes the bench measures (`--shapes`); each gives exactly `n` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// 1% of `n` VM restores in flight (26 objects each, with their Backup), the rest healthy
    /// DataVolume + PVC + PV disks spread over one tenant per restore.
    Default,
    /// `default`, but every restore's Backup is gone: no restore has a disk record.
    NoBackup,
    /// Hundreds of disks per namespace: PVC + PV pairs, 200 per namespace (`n / 400`
    /// namespaces, 50 at 20k), and `n / 200` running RestoreJobs whose Backup is gone (100 at
    /// 20k, two per namespace).
    DenseNamespaces,
    /// `default`, with half of `n` Events about the RestoreJobs (the Events the live watch
    /// reads: ~50 per restore), the rest disks.
    ManyEvents,
}

/// What `--shapes` takes: a generated shape, or `dump:PATH`, a kubectl `List` (JSON, e.g. what
/// a real API server returned for a generated cluster) loaded as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShapeArg {
    Generated(Shape),
    Dump(std::path::PathBuf),
}

impl std::str::FromStr for ShapeArg {
    type Err = String;

    fn from_str(s: &str) -> Result<ShapeArg, String> {
        if let Some(path) = s.strip_prefix("dump:") {
            if path.is_empty() {
                return Err("dump: needs a path, e.g. dump:real.json".into());
            }
            return Ok(ShapeArg::Dump(path.into()));
        }
        <Shape as clap::ValueEnum>::from_str(s, false)
            .map(ShapeArg::Generated)
            .map_err(|_| {
                format!(
                    "unknown shape {s:?}: one of default, no-backup, dense-namespaces, many-events, dump:PATH"
                )
            })
    }
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Default => "default",
            Shape::NoBackup => "no-backup",
            Shape::DenseNamespaces => "dense-namespaces",
            Shape::ManyEvents => "many-events",
        }
    }
}

/// A cluster of exactly `n` objects (`n` >= 40 gives at least one restore and one disk).
pub fn generate(n: usize, now: Timestamp) -> World {
    generate_shape(Shape::Default, n, now)
}

pub fn generate_shape(shape: Shape, n: usize, now: Timestamp) -> World {
    let mut g = Gen {
        now: now.as_second(),
        seq: 0,
    };
    if shape == Shape::DenseNamespaces {
        return dense_namespaces(&mut g, n);
    }
    let restores = (n / 100).max(1);
    let tenants = restores;
    let mut objects = Vec::with_capacity(n);
    objects.push(storage_class(&mut g));
    objects.push(namespace(&mut g, "cozy-velero"));
    for t in 0..tenants {
        objects.push(namespace(&mut g, &tenant(t)));
    }
    let mut pvcs = 0;
    let mut jobs = Vec::new();
    for r in 0..restores {
        let before = objects.len();
        let with_backup = shape != Shape::NoBackup;
        jobs.push((
            tenant(r),
            restore(&mut g, &tenant(r), with_backup, &mut objects),
        ));
        debug_assert_eq!(
            objects.len() - before,
            PER_RESTORE - usize::from(!with_backup)
        );
        pvcs += 4;
    }
    if shape == Shape::ManyEvents {
        // Progress events the restore controller might repeat; all about RestoreJobs, so the
        // live watch holds every one.
        // Each restore already brings nine; top up to half of n, leaving room for a disk.
        let events = (n / 2)
            .saturating_sub(restores * 9)
            .min(n.saturating_sub(objects.len() + 3));
        for e in 0..events {
            let (ns, uid) = &jobs[e % jobs.len()];
            let msg = format!("Waiting for Velero Restore ({e})");
            let ev = event(&mut g, ns, "restore-vm1", uid, 60, "WaitingForVelero", &msg);
            objects.push(ev);
        }
    }
    // The rest: background disks, three objects each, spread over the tenants.
    let left = n.saturating_sub(objects.len());
    let mut write_targets = Vec::new();
    for d in 0..left / 3 {
        let ns = tenant(d % tenants);
        let name = format!("vm-disk-bg{d}");
        disk(&mut g, &ns, &name, &mut objects);
        write_targets.push((ns, name));
        pvcs += 1;
    }
    pad_with_events(&mut g, n, &mut objects);
    World {
        objects,
        write_targets,
        pvcs,
        restores,
    }
}

/// Pads to exactly n with events about PVCs (not about RestoreJobs: the live watch's field
/// selector leaves them on the server, as on a real cluster).
fn pad_with_events(g: &mut Gen, n: usize, objects: &mut Vec<Value>) {
    while objects.len() < n {
        let i = objects.len();
        objects.push(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": format!("pad.{i:x}"), "namespace": tenant(0), "uid": g.uid(2), "creationTimestamp": g.ago(60)},
            "involvedObject": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "vm-disk-bg0", "namespace": tenant(0)},
            "reason": "Resized", "message": "volume resized", "type": "Normal", "count": 1,
            "firstTimestamp": g.ago(60), "lastTimestamp": g.ago(60),
            "source": {"component": "csi-resizer"}
        }));
    }
}

fn storage_class(g: &mut Gen) -> Value {
    json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "uid": g.uid(1), "creationTimestamp": g.ago(86400 * 400)},
        "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true,
        "parameters": {"linstor.csi.linbit.com/autoPlace": "3", "linstor.csi.linbit.com/storagePool": "data"}
    })
}

/// The worst shape of issue 12: many `vm-disk-*` PVCs per namespace and restores without a
/// Backup, so nothing narrows a restore's disks but the namespace.
fn dense_namespaces(g: &mut Gen, n: usize) -> World {
    let namespaces = (n / 400).max(1);
    let restores = (n / 200).max(1);
    let mut objects = Vec::with_capacity(n);
    objects.push(storage_class(g));
    objects.push(namespace(g, "cozy-velero"));
    for t in 0..namespaces {
        objects.push(namespace(g, &tenant(t)));
    }
    for r in 0..restores {
        let ns = tenant(r % namespaces);
        let rj = format!("restore-vm{}", r / namespaces);
        objects.push(json!({
            "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": rj, "namespace": ns, "uid": g.uid(9), "creationTimestamp": g.ago(180), "generation": 1,
                "finalizers": ["backups.cozystack.io/cleanup"]},
            "spec": {"backupRef": {"name": format!("{rj}-gone")}, "options": {"keepOriginalPVC": true}},
            "status": {"phase": "Running", "startedAt": g.ago(179)}
        }));
    }
    let pairs = n.saturating_sub(objects.len()) / 2;
    let mut write_targets = Vec::new();
    for d in 0..pairs {
        let ns = tenant(d % namespaces);
        let name = format!("vm-disk-d{d}");
        let pvc_uid = g.uid(6);
        let pv_name = format!("pvc-{pvc_uid}");
        objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": pvc_uid, "creationTimestamp": g.ago(86400 * 30),
                "labels": {"apps.cozystack.io/application.kind": "VMDisk"},
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
        }));
        objects.push(pv(g, &pv_name, &ns, &name, &pvc_uid, "20Gi"));
        write_targets.push((ns, name));
    }
    pad_with_events(g, n, &mut objects);
    World {
        objects,
        write_targets,
        pvcs: pairs,
        restores,
    }
}

fn namespace(g: &mut Gen, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": g.uid(3), "creationTimestamp": g.ago(86400 * 200),
            "labels": {"kubernetes.io/metadata.name": name, "tenant.cozystack.io/tenant": ""}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}
    })
}

fn pv(g: &mut Gen, name: &str, ns: &str, claim: &str, claim_uid: &str, size: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "uid": g.uid(4), "creationTimestamp": g.ago(86400 * 30),
            "annotations": {"pv.kubernetes.io/provisioned-by": "linstor.csi.linbit.com"},
            "finalizers": ["external-provisioner.volume.kubernetes.io/finalizer", "kubernetes.io/pv-protection"]},
        "spec": {"accessModes": ["ReadWriteMany"], "capacity": {"storage": size},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim, "namespace": ns, "uid": claim_uid},
            "csi": {"driver": "linstor.csi.linbit.com", "volumeHandle": name,
                "volumeAttributes": {"linstor.csi.linbit.com/uses-volume-context": "true"}},
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": STORAGE_CLASS, "volumeMode": "Block"},
        "status": {"phase": "Bound", "lastPhaseTransitionTime": g.ago(86400 * 30)}
    })
}

/// A healthy VM disk: DataVolume, its bound PVC and the PV.
fn disk(g: &mut Gen, ns: &str, name: &str, out: &mut Vec<Value>) {
    let dv_uid = g.uid(5);
    let pvc_uid = g.uid(6);
    let pv_name = format!("pvc-{pvc_uid}");
    let labels = json!({"app.kubernetes.io/managed-by": "Helm", "apps.cozystack.io/application.kind": "VMDisk",
        "apps.cozystack.io/application.name": name, "helm.toolkit.fluxcd.io/name": name, "helm.toolkit.fluxcd.io/namespace": ns});
    out.push(json!({
        "apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
        "metadata": {"name": name, "namespace": ns, "uid": dv_uid, "creationTimestamp": g.ago(86400 * 30), "generation": 1,
            "labels": labels, "annotations": {"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns}},
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "20Gi"}}, "storageClassName": STORAGE_CLASS}},
        "status": {"claimName": name, "phase": "Succeeded", "progress": "100.0%"}
    }));
    out.push(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, "uid": pvc_uid, "creationTimestamp": g.ago(86400 * 30),
            "labels": {"app": "containerized-data-importer", "apps.cozystack.io/application.kind": "VMDisk"},
            "annotations": {"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/storage-provisioner": "linstor.csi.linbit.com"},
            "finalizers": ["kubernetes.io/pvc-protection"],
            "ownerReferences": [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": name, "uid": dv_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
            "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
    }));
    out.push(pv(g, &pv_name, ns, name, &pvc_uid, "20Gi"));
}

fn event(
    g: &mut Gen,
    ns: &str,
    rj: &str,
    rj_uid: &str,
    secs_ago: i64,
    reason: &str,
    msg: &str,
) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{rj}.{:016x}", g.seq * 0x9e37_79b9 + 7), "namespace": ns, "uid": g.uid(7), "creationTimestamp": g.ago(secs_ago)},
        "involvedObject": {"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob", "name": rj, "namespace": ns, "uid": rj_uid},
        "reason": reason, "message": msg, "type": "Normal", "count": 1,
        "firstTimestamp": g.ago(secs_ago), "lastTimestamp": g.ago(secs_ago),
        "reportingComponent": "restore-controller", "source": {"component": "restore-controller"}
    })
}

fn hr(g: &mut Gen, ns: &str, name: &str, kind: &str, app: &str, restore: &str) -> Value {
    json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": ns, "uid": g.uid(8), "creationTimestamp": g.ago(86400 * 60), "generation": 4,
            "finalizers": ["finalizers.fluxcd.io"],
            "labels": {"apps.cozystack.io/application.group": "apps.cozystack.io", "apps.cozystack.io/application.kind": kind,
                "apps.cozystack.io/application.name": app, "velero.io/restore-name": restore}},
        "spec": {"chartRef": {"kind": "ExternalArtifact", "name": format!("cozystack-{kind}"), "namespace": "cozy-system"},
            "interval": "5m0s", "suspend": false, "values": {"storageClass": STORAGE_CLASS}},
        "status": {"conditions": [{"lastTransitionTime": g.ago(86400 * 2), "message": "Helm upgrade succeeded", "observedGeneration": 4,
            "reason": "UpgradeSucceeded", "status": "True", "type": "Ready"}], "observedGeneration": 4, "lastAttemptedGeneration": 4}
    })
}

/// A VM restore in flight, the shape of `healthy/vm-postfix-restoring`: the old disks kept as
/// `-orig` PVCs, new DataVolumes pending, DataDownloads half done. 26 objects.
/// Without `with_backup` the Backup is left out (25 objects). The RestoreJob's UID.
fn restore(g: &mut Gen, ns: &str, with_backup: bool, out: &mut Vec<Value>) -> String {
    let rj = "restore-vm1";
    let rj_uid = g.uid(9);
    let backup = "vm1-nightly";
    let velero = format!("{ns}.{rj}-bench");
    let velero_uid = g.uid(10);
    let disks = ["system", "data"];
    if with_backup {
        out.push(json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": backup, "namespace": ns, "uid": g.uid(11), "creationTimestamp": g.ago(8 * 3600), "generation": 1},
        "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
            "driverMetadata": {"velero.io/backup-name": format!("{ns}.vm1-nightly-b"), "velero.io/backup-namespace": "cozy-velero"},
            "planRef": {"name": "vm1-nightly"}, "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero-default"},
            "takenAt": g.ago(8 * 3600)},
        "status": {"phase": "Ready", "conditions": [{"lastTransitionTime": g.ago(8 * 3600), "message": "Backup is ready",
            "reason": "BackupCompleted", "status": "True", "type": "Ready"}]}
        }));
    }
    out.push(json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": rj, "namespace": ns, "uid": rj_uid, "creationTimestamp": g.ago(180), "generation": 1,
            "finalizers": ["backups.cozystack.io/cleanup"]},
        "spec": {"backupRef": {"name": backup}, "options": {"keepOriginalPVC": true}},
        "status": {"phase": "Running", "startedAt": g.ago(179)}
    }));
    for d in disks {
        out.push(hr(g, ns, &format!("vm-disk-{d}"), "VMDisk", d, &velero));
    }
    out.push(hr(g, ns, "vm-instance-vm1", "VMInstance", "vm1", &velero));
    out.push(json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "vm-instance-vm1", "namespace": ns, "uid": g.uid(12), "creationTimestamp": g.ago(86400 * 60), "generation": 9,
            "labels": {"app.kubernetes.io/instance": "vm-instance-vm1", "apps.cozystack.io/application.kind": "VMInstance", "apps.cozystack.io/application.name": "vm1"}},
        "spec": {"runStrategy": "Always", "template": {"spec": {"volumes": [
            {"dataVolume": {"name": "vm-disk-system"}, "name": "disk-system"},
            {"dataVolume": {"name": "vm-disk-data"}, "name": "disk-data"}]}}},
        "status": {"printableStatus": "Provisioning", "ready": false, "created": false}
    }));
    let hash = short_hash(rj);
    let mut progress = Vec::new();
    for (i, d) in disks.iter().enumerate() {
        let name = format!("vm-disk-{d}");
        let dv_uid = g.uid(13);
        out.push(json!({
            "apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
            "metadata": {"name": name, "namespace": ns, "uid": dv_uid, "creationTimestamp": g.ago(127), "generation": 1,
                "labels": {"apps.cozystack.io/application.kind": "VMDisk", "apps.cozystack.io/application.name": d, "velero.io/restore-name": velero},
                "annotations": {"cdi.kubevirt.io/storage.prePopulated": name, "meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns}},
            "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "20Gi"}}, "storageClassName": STORAGE_CLASS}},
            "status": {"claimName": name, "phase": "Pending", "progress": "N/A"}
        }));
        out.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": g.uid(14), "creationTimestamp": g.ago(128),
                "labels": {"app": "containerized-data-importer", "apps.cozystack.io/application.kind": "VMDisk",
                    "apps.cozystack.io/application.name": d, "velero.io/restore-name": velero},
                "annotations": {"cdi.kubevirt.io/allowClaimAdoption": "true"},
                "finalizers": ["kubernetes.io/pvc-protection"],
                "ownerReferences": [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": name, "uid": dv_uid, "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "selector": {"matchLabels": {"velero.io/dynamic-pv-restore": format!("{ns}.{name}.bench")}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block"},
            "status": {"phase": "Pending"}
        }));
        let orig = orig_pvc_name(&name, rj);
        debug_assert!(orig.ends_with(&hash));
        let orig_uid = g.uid(15);
        let pv_name = format!("pvc-{orig_uid}");
        out.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": orig, "namespace": ns, "uid": orig_uid, "creationTimestamp": g.ago(140 - i as i64 * 2),
                "annotations": {"backups.cozystack.io/original-reclaim-policy": "Retain", "backups.cozystack.io/restore-job-uid": rj_uid,
                    "pv.kubernetes.io/bind-completed": "yes"},
                "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
        }));
        let mut p = pv(g, &pv_name, ns, &orig, &orig_uid, "20Gi");
        p["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"] =
            json!("Retain");
        out.push(p);
        progress.push((name, 1_000_000_000u64 * (i as u64 + 1), 21_474_836_480u64));
    }
    out.push(json!({
        "apiVersion": "velero.io/v1", "kind": "Restore",
        "metadata": {"name": velero, "namespace": "cozy-velero", "uid": velero_uid, "creationTimestamp": g.ago(133), "generation": 3,
            "generateName": format!("{ns}.{rj}-"), "finalizers": ["restores.velero.io/external-resources-finalizer"],
            "labels": {"backups.cozystack.io/owned-by.BackupJobName": rj, "backups.cozystack.io/owned-by.BackupJobNamespace": ns}},
        "spec": {"backupName": format!("{ns}.vm1-nightly-b"), "existingResourcePolicy": "update", "includedNamespaces": [ns], "restorePVs": true},
        "status": {"phase": "WaitingForPluginOperations", "progress": {"itemsRestored": 14, "totalItems": 14},
            "restoreItemOperationsAttempted": 2, "restoreItemOperationsCompleted": 0, "startTimestamp": g.ago(132)}
    }));
    for (pvc, done, total) in progress {
        out.push(json!({
            "apiVersion": "velero.io/v2alpha1", "kind": "DataDownload",
            "metadata": {"name": format!("{velero}-{pvc}"), "namespace": "cozy-velero", "uid": g.uid(16), "creationTimestamp": g.ago(125), "generation": 4,
                "labels": {"velero.io/restore-name": velero, "velero.io/restore-uid": velero_uid},
                "ownerReferences": [{"apiVersion": "velero.io/v1", "kind": "Restore", "name": velero, "uid": velero_uid, "controller": true}]},
            // operationTimeout and snapshotID are required by the CRD: a real server refuses
            // a DataDownload without them.
            "spec": {"backupStorageLocation": "default", "datamover": "velero", "sourceNamespace": ns,
                "operationTimeout": "10m0s", "snapshotID": format!("{:08x}", g.seq),
                "targetVolume": {"namespace": ns, "pv": "", "pvc": pvc}},
            "status": {"phase": "InProgress", "node": "srv-worker-1", "progress": {"bytesDone": done, "totalBytes": total},
                "startTimestamp": g.ago(110)}
        }));
    }
    let steps: [(i64, &str, String); 9] = [
        (
            178,
            "PrepareForRestore",
            "Suspended HelmRelease vm-disk-system".into(),
        ),
        (
            178,
            "PrepareForRestore",
            "Suspended HelmRelease vm-disk-data".into(),
        ),
        (
            178,
            "PrepareForRestore",
            "Suspended HelmRelease vm-instance-vm1".into(),
        ),
        (
            142,
            "PrepareForRestore",
            "VM vm-instance-vm1 is halted".into(),
        ),
        (
            140,
            "PrepareForRestore",
            format!("Keep old PVC vm-disk-system as vm-disk-system-orig-{hash}"),
        ),
        (
            138,
            "PrepareForRestore",
            format!("Keep old PVC vm-disk-data as vm-disk-data-orig-{hash}"),
        ),
        (
            134,
            "PrepareForRestore",
            "Deleted DataVolume vm-disk-system".into(),
        ),
        (
            134,
            "PrepareForRestore",
            "Pre-restore preparation complete".into(),
        ),
        (
            133,
            "VeleroRestoreCreated",
            format!("Created Velero Restore cozy-velero/{velero}"),
        ),
    ];
    for (ago, reason, msg) in steps {
        out.push(event(g, ns, rj, &rj_uid, ago, reason, &msg));
    }
    rj_uid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sizes_and_parseable() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let shapes = [
            Shape::Default,
            Shape::NoBackup,
            Shape::DenseNamespaces,
            Shape::ManyEvents,
        ];
        for (n, shape) in [40, 200, 1000, 1234]
            .into_iter()
            .flat_map(|n| shapes.map(|s| (n, s)))
        {
            let w = generate_shape(shape, n, now);
            assert_eq!(w.objects.len(), n, "n={n} {shape:?}");
            assert!(!w.write_targets.is_empty());
            for o in &w.objects {
                crate::model::parse_object(o.clone()).expect("every generated object parses");
            }
        }
    }

    fn count(w: &World, kind: &str) -> usize {
        w.objects.iter().filter(|o| o["kind"] == kind).count()
    }

    #[test]
    fn shapes_hold_what_they_say() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let d = generate_shape(Shape::DenseNamespaces, 20_000, now);
        assert_eq!(count(&d, "RestoreJob"), 100);
        assert_eq!(count(&d, "Backup"), 0);
        assert_eq!(count(&d, "Namespace"), 51);
        assert_eq!(
            count(&d, "PersistentVolumeClaim"),
            count(&d, "PersistentVolume")
        );
        assert!(count(&d, "PersistentVolumeClaim") >= 9_900);
        let nb = generate_shape(Shape::NoBackup, 2_000, now);
        assert_eq!(count(&nb, "RestoreJob"), 20);
        assert_eq!(count(&nb, "Backup"), 0);
        let ev = generate_shape(Shape::ManyEvents, 2_000, now);
        let about_jobs = ev
            .objects
            .iter()
            .filter(|o| o["kind"] == "Event" && o["involvedObject"]["kind"] == "RestoreJob")
            .count();
        assert!(about_jobs >= 1_000, "{about_jobs}");
        assert_eq!(count(&generate(2_000, now), "Backup"), 20);
    }
}
