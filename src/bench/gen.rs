//! A synthetic Cozystack cluster of exactly `n` objects: tenants whose VM disks are
//! DataVolume + PVC + PV triples, 1% of `n` RestoreJobs in flight (each with its Backup,
//! HelmReleases, VM, new DataVolumes and PVCs, `-orig` PVCs and their PVs, Velero Restore,
//! DataDownloads and the controller's Events), a StorageClass and the namespaces.
//!
//! Objects look like what a real kube-apiserver returns for them (compared kind by kind with
//! `real-apiserver-20k.json`, the real server's answer for this generator's `default` shape):
//! `managedFields` on every object (one entry per manager and operation, status written through
//! the `status` subresource where the kind has one), the server's defaults and finalizers,
//! `generation` on the kinds that have one, a `resourceVersion` that follows the order of the
//! last writes, uids that look random, and times from a clock: every object created at its own
//! second, its dependents a second or two later, as controllers create them one by one. Events
//! are what client-go's recorder writes (`<object>.<hex nanoseconds>`, `count`,
//! `first/lastTimestamp`, `eventTime: null`, empty `reportingComponent`). Times are relative to
//! `now`, so the live analysis sees restores a few minutes old. Every object is valid against the
//! real CRDs (tests/schemas_valid.rs).

use crate::model::names::{orig_pvc_name, short_hash};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

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
    /// A v4-shaped uid that looks random, as the server's are; unique, since 64 of its bits
    /// are a bijection of the sequence number. `tag` (the kind) varies the rest.
    fn uid(&mut self, tag: u32) -> String {
        self.seq += 1;
        let a = mix(self.seq);
        let b = mix(self.seq ^ (u64::from(tag) << 40));
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:04x}{:08x}",
            a >> 32,
            (a >> 16) & 0xffff,
            b & 0xfff,
            8 + ((b >> 12) & 0x3),
            (b >> 16) & 0xfff,
            a & 0xffff,
            b >> 32
        )
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
            let about = restore_job_ref("restore-vm1", uid);
            // A message repeated is one Event counted up, as the recorder aggregates it.
            let count = 1 + u32::try_from(e % 5).unwrap_or(0);
            let ago = 30 + g.noise(60);
            let reason = "WaitingForVelero";
            let ev = event(
                &mut g,
                ns,
                &about,
                ago,
                count,
                reason,
                &msg,
                RESTORE_CONTROLLER,
            );
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
    stamp_versions(&mut objects);
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
    let pvc = EventAbout {
        api_version: "v1",
        kind: "PersistentVolumeClaim",
        name: "vm-disk-bg0",
        uid: None,
    };
    while objects.len() < n {
        // Resizes over the last hour, each at its own time.
        let ago = 60 + g.noise(3600);
        let ev = event(
            g,
            &tenant(0),
            &pvc,
            ago,
            1,
            "Resized",
            "volume resized",
            "csi-resizer",
        );
        objects.push(ev);
    }
}

fn storage_class(g: &mut Gen) -> Value {
    let created = 86400 * 400 + g.noise(86400);
    let mut o = json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "uid": g.uid(1), "creationTimestamp": g.ago(created)},
        "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true,
        "parameters": {"linstor.csi.linbit.com/autoPlace": "3", "linstor.csi.linbit.com/storagePool": "data"}
    });
    g.managed(&mut o, false, ("helm", created), &[]);
    o
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
        let sh = g.noise(40);
        let uid = g.uid(9);
        let backup_ref = json!({"name": format!("{rj}-gone")});
        objects.push(restore_job(g, &ns, &rj, &uid, backup_ref, sh));
    }
    let pairs = n.saturating_sub(objects.len()) / 2;
    let mut write_targets = Vec::new();
    for d in 0..pairs {
        let ns = tenant(d % namespaces);
        let name = format!("vm-disk-d{d}");
        let pvc_uid = g.uid(6);
        let pv_name = format!("pvc-{pvc_uid}");
        let created = disk_age(g);
        let mut pvc = json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": pvc_uid, "creationTimestamp": g.ago(created),
                "labels": {"apps.cozystack.io/application.kind": "VMDisk"},
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
        });
        let bound = created - 2 - g.noise(4);
        bound_claim(g, &mut pvc, "kubectl-create", created, bound);
        objects.push(pvc);
        objects.push(pv(g, &pv_name, &ns, &name, &pvc_uid, "20Gi", bound + 1));
        write_targets.push((ns, name));
    }
    pad_with_events(g, n, &mut objects);
    stamp_versions(&mut objects);
    World {
        objects,
        write_targets,
        pvcs: pairs,
        restores,
    }
}

fn namespace(g: &mut Gen, name: &str) -> Value {
    let created = 86400 * 200 + g.noise(86400 * 30);
    let mut o = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": g.uid(3), "creationTimestamp": g.ago(created),
            "labels": {"kubernetes.io/metadata.name": name, "tenant.cozystack.io/tenant": ""}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}
    });
    // spec.finalizers and status.phase are the server's defaults: nobody's fields.
    let server = Write::server(&[&["spec"], &["status"]]);
    g.managed(&mut o, false, ("helm-controller", created), &[server]);
    o
}

/// A provisioned volume, `created` seconds ago, bound to its claim at once.
fn pv(
    g: &mut Gen,
    name: &str,
    ns: &str,
    claim: &str,
    claim_uid: &str,
    size: &str,
    created: i64,
) -> Value {
    let phase_at = created - g.noise(2);
    let mut o = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "uid": g.uid(4), "creationTimestamp": g.ago(created),
            "annotations": {"pv.kubernetes.io/provisioned-by": "linstor.csi.linbit.com"},
            "finalizers": ["external-provisioner.volume.kubernetes.io/finalizer", "kubernetes.io/pv-protection"]},
        "spec": {"accessModes": ["ReadWriteMany"], "capacity": {"storage": size},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim, "namespace": ns, "uid": claim_uid},
            "csi": {"driver": "linstor.csi.linbit.com", "volumeHandle": name,
                "volumeAttributes": {"linstor.csi.linbit.com/uses-volume-context": "true"}},
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": STORAGE_CLASS, "volumeMode": "Block"},
        "status": {"phase": "Bound", "lastPhaseTransitionTime": g.ago(phase_at)}
    });
    let status = Write::status("kube-controller-manager", phase_at);
    g.managed(&mut o, false, ("csi-provisioner", created), &[status]);
    o
}

/// A bound claim's writers: `creator` at `created`, the PV binder (kube-controller-manager)
/// `bound` seconds ago: the bind annotations and `volumeName`, and the status.
fn bound_claim(g: &mut Gen, pvc: &mut Value, creator: &str, created: i64, bound: i64) {
    let binder = Write::main(
        "kube-controller-manager",
        bound,
        &[
            &["metadata", "annotations", "pv.kubernetes.io/bind-completed"],
            &[
                "metadata",
                "annotations",
                "volume.kubernetes.io/storage-provisioner",
            ],
            &["spec", "volumeName"],
        ],
    );
    let status = Write::status("kube-controller-manager", bound);
    g.managed(pvc, false, (creator, created), &[binder, status]);
}

/// How long ago a background disk was made: each its own second within a year.
fn disk_age(g: &mut Gen) -> i64 {
    86400 * 30 + g.noise(86400 * 335)
}

/// A healthy VM disk: DataVolume, its bound PVC and the PV, made one after the other by Helm,
/// CDI, the provisioner and the binder.
fn disk(g: &mut Gen, ns: &str, name: &str, out: &mut Vec<Value>) {
    let dv_uid = g.uid(5);
    let pvc_uid = g.uid(6);
    let pv_name = format!("pvc-{pvc_uid}");
    let dv_at = disk_age(g);
    let pvc_at = dv_at - 1 - g.noise(2);
    let pv_at = pvc_at - 2 - g.noise(5);
    let bound = pv_at - g.noise(2);
    let done = bound - 3 - g.noise(20);
    let labels = json!({"app.kubernetes.io/managed-by": "Helm", "apps.cozystack.io/application.kind": "VMDisk",
        "apps.cozystack.io/application.name": name, "helm.toolkit.fluxcd.io/name": name, "helm.toolkit.fluxcd.io/namespace": ns});
    let mut dv = json!({
        "apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
        "metadata": {"name": name, "namespace": ns, "uid": dv_uid, "creationTimestamp": g.ago(dv_at), "generation": 1,
            "labels": labels, "annotations": {"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns}},
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "20Gi"}}, "storageClassName": STORAGE_CLASS}},
        "status": {"claimName": name, "phase": "Succeeded", "progress": "100.0%"}
    });
    let cdi = Write::status("virt-cdi-controller", done);
    g.managed(&mut dv, true, ("helm-controller", dv_at), &[cdi]);
    out.push(dv);
    let mut pvc = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, "uid": pvc_uid, "creationTimestamp": g.ago(pvc_at),
            "labels": {"app": "containerized-data-importer", "apps.cozystack.io/application.kind": "VMDisk"},
            "annotations": {"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/storage-provisioner": "linstor.csi.linbit.com"},
            "finalizers": ["kubernetes.io/pvc-protection"],
            "ownerReferences": [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": name, "uid": dv_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
            "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
    });
    bound_claim(g, &mut pvc, "virt-cdi-controller", pvc_at, bound);
    out.push(pvc);
    out.push(pv(g, &pv_name, ns, name, &pvc_uid, "20Gi", pv_at));
}

/// The object an Event is about.
struct EventAbout<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: Option<&'a str>,
}

/// An Event as client-go's recorder writes it: named `<object>.<hex of the first time in
/// nanoseconds>`, `count` times between `firstTimestamp` and `lastTimestamp` (`secs_ago`),
/// `eventTime: null`, `source.component` set and the `reporting*` fields empty, created at the
/// first time and patched at the last.
#[allow(clippy::too_many_arguments)]
fn event(
    g: &mut Gen,
    ns: &str,
    about: &EventAbout,
    secs_ago: i64,
    count: u32,
    reason: &str,
    msg: &str,
    component: &str,
) -> Value {
    let first = secs_ago + 10 * (i64::from(count) - 1);
    // The recorder's clock has nanoseconds: the low digits keep two events of one second apart.
    let nanos = (g.now - first) * 1_000_000_000
        + i64::try_from(mix(g.seq) % 1_000_000).unwrap_or(0) * 1000
        + i64::try_from(g.seq % 1000).unwrap_or(0);
    let mut involved = json!({"apiVersion": about.api_version, "kind": about.kind, "name": about.name, "namespace": ns});
    if let Some(uid) = about.uid {
        involved["uid"] = json!(uid);
    }
    let mut o = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{}.{nanos:x}", about.name), "namespace": ns, "uid": g.uid(7), "creationTimestamp": g.ago(first)},
        "involvedObject": involved,
        "reason": reason, "message": msg, "type": "Normal", "count": count,
        "firstTimestamp": g.ago(first), "lastTimestamp": g.ago(secs_ago), "eventTime": null,
        "reportingComponent": "", "reportingInstance": "", "source": {"component": component}
    });
    g.managed(&mut o, false, (component, secs_ago), &[]);
    o
}

fn hr(
    g: &mut Gen,
    ns: &str,
    name: &str,
    kind: &str,
    app: &str,
    restore: &str,
    restored: i64,
) -> Value {
    let created = 86400 * 60 + g.noise(86400 * 30);
    let upgraded = 86400 * 2 + g.noise(3600);
    let mut o = json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": ns, "uid": g.uid(8), "creationTimestamp": g.ago(created), "generation": 4,
            "finalizers": ["finalizers.fluxcd.io"],
            "labels": {"apps.cozystack.io/application.group": "apps.cozystack.io", "apps.cozystack.io/application.kind": kind,
                "apps.cozystack.io/application.name": app, "velero.io/restore-name": restore}},
        "spec": {"chartRef": {"kind": "ExternalArtifact", "name": format!("cozystack-{kind}"), "namespace": "cozy-system"},
            "interval": "5m0s", "suspend": false, "values": {"storageClass": STORAGE_CLASS}},
        "status": {"conditions": [{"lastTransitionTime": g.ago(upgraded), "message": "Helm upgrade succeeded", "observedGeneration": 4,
            "reason": "UpgradeSucceeded", "status": "True", "type": "Ready"}], "observedGeneration": 4, "lastAttemptedGeneration": 4}
    });
    let writers = [
        Write::main(
            "helm-controller",
            created - 1,
            &[&["metadata", "finalizers"]],
        ),
        // Velero's `existingResourcePolicy: update` labels what it restored over.
        Write::main(
            "velero-server",
            restored,
            &[&["metadata", "labels", "velero.io/restore-name"]],
        ),
        Write::status("helm-controller", upgraded),
    ];
    g.managed(&mut o, true, ("cozystack-api", created), &writers);
    // The CRD defaults `status` on create: the controller's write did not make the map.
    if let Some(entries) = o["metadata"]["managedFields"].as_array_mut() {
        for e in entries.iter_mut().filter(|e| e["subresource"] == "status") {
            if let Some(st) = e["fieldsV1"]["f:status"].as_object_mut() {
                st.remove(".");
            }
        }
    }
    o
}

/// A RestoreJob created `180 + sh` seconds ago by a user, taken by the backup controller (its
/// finalizer, then `Running`).
fn restore_job(g: &mut Gen, ns: &str, rj: &str, uid: &str, backup_ref: Value, sh: i64) -> Value {
    let mut o = json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": rj, "namespace": ns, "uid": uid, "creationTimestamp": g.ago(180 + sh), "generation": 1,
            "finalizers": ["backups.cozystack.io/cleanup"]},
        "spec": {"backupRef": backup_ref, "options": {"keepOriginalPVC": true}},
        "status": {"phase": "Running", "startedAt": g.ago(179 + sh)}
    });
    let writers = [
        Write::main(
            "backup-controller",
            180 + sh,
            &[&["metadata", "finalizers"]],
        ),
        Write::status("backup-controller", 179 + sh),
    ];
    g.managed(&mut o, true, ("kubectl-create", 180 + sh), &writers);
    o
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
    // Restores did not all start at the same second: every time of this one is shifted by `sh`.
    let sh = g.noise(40);
    if with_backup {
        let taken = 8 * 3600 + g.noise(1800);
        let mut b = json!({
        "apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": backup, "namespace": ns, "uid": g.uid(11), "creationTimestamp": g.ago(taken - 40), "generation": 1},
        "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
            "driverMetadata": {"velero.io/backup-name": format!("{ns}.vm1-nightly-b"), "velero.io/backup-namespace": "cozy-velero"},
            "planRef": {"name": "vm1-nightly"}, "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero-default"},
            "takenAt": g.ago(taken)},
        "status": {"phase": "Ready", "conditions": [{"lastTransitionTime": g.ago(taken - 41), "message": "Backup is ready",
            "reason": "BackupCompleted", "status": "True", "type": "Ready"}]}
        });
        // No status subresource: the controller writes spec and status in one Update.
        g.managed(&mut b, true, ("backup-controller", taken - 41), &[]);
        out.push(b);
    }
    out.push(restore_job(g, ns, rj, &rj_uid, json!({"name": backup}), sh));
    for d in disks {
        out.push(hr(
            g,
            ns,
            &format!("vm-disk-{d}"),
            "VMDisk",
            d,
            &velero,
            131 + sh,
        ));
    }
    out.push(hr(
        g,
        ns,
        "vm-instance-vm1",
        "VMInstance",
        "vm1",
        &velero,
        131 + sh,
    ));
    let vm_at = 86400 * 60 + g.noise(86400 * 30);
    let mut vm = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "vm-instance-vm1", "namespace": ns, "uid": g.uid(12), "creationTimestamp": g.ago(vm_at), "generation": 9,
            "labels": {"app.kubernetes.io/instance": "vm-instance-vm1", "apps.cozystack.io/application.kind": "VMInstance", "apps.cozystack.io/application.name": "vm1"}},
        "spec": {"runStrategy": "Always", "template": {"spec": {"volumes": [
            {"dataVolume": {"name": "vm-disk-system"}, "name": "disk-system"},
            {"dataVolume": {"name": "vm-disk-data"}, "name": "disk-data"}]}}},
        "status": {"printableStatus": "Provisioning", "ready": false, "created": false}
    });
    g.managed(
        &mut vm,
        true,
        ("helm-controller", vm_at),
        &[Write::status("virt-controller", 126 + sh)],
    );
    out.push(vm);
    let hash = short_hash(rj);
    let mut progress = Vec::new();
    for (i, d) in disks.iter().enumerate() {
        let name = format!("vm-disk-{d}");
        let dv_uid = g.uid(13);
        let i = i as i64;
        let mut dv = json!({
            "apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
            "metadata": {"name": name, "namespace": ns, "uid": dv_uid, "creationTimestamp": g.ago(127 + sh - i), "generation": 1,
                "labels": {"apps.cozystack.io/application.kind": "VMDisk", "apps.cozystack.io/application.name": d, "velero.io/restore-name": velero},
                "annotations": {"cdi.kubevirt.io/storage.prePopulated": name, "meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns}},
            "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "20Gi"}}, "storageClassName": STORAGE_CLASS}},
            "status": {"claimName": name, "phase": "Pending", "progress": "N/A"}
        });
        let cdi = Write::status("virt-cdi-controller", 126 + sh - i);
        g.managed(&mut dv, true, ("velero-server", 127 + sh - i), &[cdi]);
        out.push(dv);
        let mut pvc = json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": g.uid(14), "creationTimestamp": g.ago(128 + sh - i),
                "labels": {"app": "containerized-data-importer", "apps.cozystack.io/application.kind": "VMDisk",
                    "apps.cozystack.io/application.name": d, "velero.io/restore-name": velero},
                "annotations": {"cdi.kubevirt.io/allowClaimAdoption": "true"},
                "finalizers": ["kubernetes.io/pvc-protection"],
                "ownerReferences": [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": name, "uid": dv_uid, "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "selector": {"matchLabels": {"velero.io/dynamic-pv-restore": format!("{ns}.{name}.bench")}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block"},
            "status": {"phase": "Pending"}
        });
        // `Pending` is the server's default on create: nobody's field.
        let server = Write::server(&[&["status"]]);
        g.managed(&mut pvc, false, ("velero-server", 128 + sh - i), &[server]);
        out.push(pvc);
        let orig = orig_pvc_name(&name, rj);
        debug_assert!(orig.ends_with(&hash));
        let orig_uid = g.uid(15);
        let pv_name = format!("pvc-{orig_uid}");
        let kept = 140 + sh - i * 2;
        let mut orig_pvc = json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": orig, "namespace": ns, "uid": orig_uid, "creationTimestamp": g.ago(kept),
                "annotations": {"backups.cozystack.io/original-reclaim-policy": "Retain", "backups.cozystack.io/restore-job-uid": rj_uid,
                    "pv.kubernetes.io/bind-completed": "yes"},
                "finalizers": ["kubernetes.io/pvc-protection"]},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "20Gi"}},
                "storageClassName": STORAGE_CLASS, "volumeMode": "Block", "volumeName": pv_name},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "20Gi"}}
        });
        bound_claim(g, &mut orig_pvc, "backup-controller", kept, kept - 1);
        out.push(orig_pvc);
        // The old disk's volume, provisioned long ago, re-pointed at the -orig claim.
        let pv_at = disk_age(g);
        let mut p = pv(g, &pv_name, ns, &orig, &orig_uid, "20Gi", pv_at);
        p["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"] =
            json!("Retain");
        p["status"]["lastPhaseTransitionTime"] = json!(g.ago(kept - 1));
        let repoint = Write::main(
            "backup-controller",
            kept,
            &[
                &[
                    "metadata",
                    "annotations",
                    "backups.cozystack.io/original-reclaim-policy",
                ],
                &["spec", "claimRef"],
            ],
        );
        let status = Write::status("kube-controller-manager", kept - 1);
        g.managed(
            &mut p,
            false,
            ("csi-provisioner", pv_at),
            &[repoint, status],
        );
        out.push(p);
        progress.push((name, 1_000_000_000u64 * (i as u64 + 1), 21_474_836_480u64));
    }
    let mut restore = json!({
        "apiVersion": "velero.io/v1", "kind": "Restore",
        "metadata": {"name": velero, "namespace": "cozy-velero", "uid": velero_uid, "creationTimestamp": g.ago(133 + sh), "generation": 3,
            "generateName": format!("{ns}.{rj}-"), "finalizers": ["restores.velero.io/external-resources-finalizer"],
            "labels": {"backups.cozystack.io/owned-by.BackupJobName": rj, "backups.cozystack.io/owned-by.BackupJobNamespace": ns}},
        "spec": {"backupName": format!("{ns}.vm1-nightly-b"), "existingResourcePolicy": "update", "includedNamespaces": [ns], "restorePVs": true},
        "status": {"phase": "WaitingForPluginOperations", "progress": {"itemsRestored": 14, "totalItems": 14},
            "restoreItemOperationsAttempted": 2, "restoreItemOperationsCompleted": 0, "startTimestamp": g.ago(132 + sh)}
    });
    // Velero's CRDs have no status subresource: velero-server writes status with its finalizer.
    let velero_server = Write::main(
        "velero-server",
        120 + sh,
        &[&["metadata", "finalizers"], &["status"]],
    );
    g.managed(
        &mut restore,
        true,
        ("backup-controller", 133 + sh),
        &[velero_server],
    );
    out.push(restore);
    for (pvc, done, total) in progress {
        let snapshot_id = format!("{:08x}", mix(g.seq) & 0xffff_ffff);
        let mut dd = json!({
            "apiVersion": "velero.io/v2alpha1", "kind": "DataDownload",
            "metadata": {"name": format!("{velero}-{pvc}"), "namespace": "cozy-velero", "uid": g.uid(16), "creationTimestamp": g.ago(125 + sh), "generation": 4,
                "labels": {"velero.io/restore-name": velero, "velero.io/restore-uid": velero_uid},
                "ownerReferences": [{"apiVersion": "velero.io/v1", "kind": "Restore", "name": velero, "uid": velero_uid, "controller": true}]},
            // operationTimeout and snapshotID are required by the CRD: a real server refuses
            // a DataDownload without them.
            "spec": {"backupStorageLocation": "default", "datamover": "velero", "sourceNamespace": ns,
                "operationTimeout": "10m0s", "snapshotID": snapshot_id,
                "targetVolume": {"namespace": ns, "pv": "", "pvc": pvc}},
            "status": {"phase": "InProgress", "node": "srv-worker-1", "progress": {"bytesDone": done, "totalBytes": total},
                "startTimestamp": g.ago(110 + sh)}
        });
        // The node agent reports progress every few seconds.
        let agent = Write::main("node-agent-server", 2 + g.noise(10), &[&["status"]]);
        g.managed(&mut dd, true, ("velero-server", 125 + sh), &[agent]);
        out.push(dd);
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
    let about = restore_job_ref(rj, &rj_uid);
    for (ago, reason, msg) in steps {
        let ev = event(g, ns, &about, ago + sh, 1, reason, &msg, RESTORE_CONTROLLER);
        out.push(ev);
    }
    rj_uid
}

/// The component the restore controller's Events name.
const RESTORE_CONTROLLER: &str = "restore-controller";

fn restore_job_ref<'a>(rj: &'a str, uid: &'a str) -> EventAbout<'a> {
    EventAbout {
        api_version: "backups.cozystack.io/v1alpha1",
        kind: "RestoreJob",
        name: rj,
        uid: Some(uid),
    }
}

/// splitmix64's finaliser: a bijection of u64 (distinct inputs, distinct outputs) that looks
/// random; the generator's only source of "randomness", so a world is the same every run.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Gen {
    /// A whole number of seconds in `0..span`, different at each call.
    fn noise(&mut self, span: i64) -> i64 {
        self.seq += 1;
        let span = u64::try_from(span.max(1)).unwrap_or(1);
        i64::try_from(mix(self.seq ^ 0x5eed_0000_0000) % span).unwrap_or(0)
    }

    /// Sets `metadata.managedFields` as the server records them: `creator` (manager, seconds
    /// ago) owns every field the `others` do not; each of those owns its `paths`, through the
    /// status subresource where it says so. `crd`: the object is a custom resource (every
    /// object field its own, not only maps and pointers). Built from the object as it is,
    /// without copying it: this runs for every object of a 100k cluster.
    fn managed(&self, obj: &mut Value, crd: bool, creator: (&str, i64), others: &[Write]) {
        let taken: Vec<&[&str]> = others
            .iter()
            .flat_map(|w| w.paths.iter().copied())
            .collect();
        let entry = |manager: &str, sub: bool, ago: i64, fields: Map<String, Value>| {
            let mut e = json!({
                "apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1",
                "fieldsV1": fields, "manager": manager, "operation": "Update", "time": self.ago(ago)
            });
            if sub {
                e["subresource"] = json!("status");
            }
            e
        };
        let mut entries = Vec::with_capacity(1 + others.len());
        if let Some(top) = obj.as_object() {
            let main = fields_v1(top, crd, &taken, Level::Top);
            if !main.is_empty() {
                entries.push(entry(creator.0, false, creator.1, main));
            }
        }
        for w in others.iter().filter(|w| !w.manager.is_empty()) {
            let mut tree = Map::new();
            for path in w.paths {
                if let Some(f) = path_fields(obj, path, crd) {
                    merge(&mut tree, format!("f:{}", path[0]), f);
                }
            }
            if !tree.is_empty() {
                entries.push(entry(w.manager, w.status, w.ago, tree));
            }
        }
        obj["metadata"]["managedFields"] = Value::Array(entries);
    }
}

/// One writer besides the creator: the fields under `paths`, `ago` seconds ago.
struct Write<'a> {
    /// Empty: the server's defaults, nobody's fields.
    manager: &'a str,
    /// Written through the `status` subresource.
    status: bool,
    ago: i64,
    paths: &'a [&'a [&'a str]],
}

impl<'a> Write<'a> {
    fn main(manager: &'a str, ago: i64, paths: &'a [&'a [&'a str]]) -> Self {
        Write {
            manager,
            status: false,
            ago,
            paths,
        }
    }

    fn status(manager: &'a str, ago: i64) -> Self {
        Write {
            manager,
            status: true,
            ago,
            paths: &[&["status"]],
        }
    }

    fn server(paths: &'a [&'a [&'a str]]) -> Self {
        Write {
            manager: "",
            status: false,
            ago: 0,
            paths,
        }
    }
}

/// Maps and pointer structs of the built-in kinds: the server records `.` for them, as it does
/// for every object field of a custom resource.
const TYPED_DOT: &[&str] = &[
    "annotations",
    "labels",
    "requests",
    "limits",
    "capacity",
    "parameters",
    "volumeAttributes",
    "matchLabels",
    "claimRef",
    "csi",
];

/// Structs the server owns as a whole (`+structType=atomic`): an Event's object reference, a
/// claim's label selector.
const TYPED_ATOMIC: &[&str] = &["involvedObject", "selector"];

/// Fields of the real CRDs marked `x-kubernetes-map-type: atomic` (the cozystack references).
const CRD_ATOMIC: &[&str] = &["applicationRef", "planRef", "strategyRef", "backupRef"];

/// Where in an object `fields_v1` is: the top (apiVersion and kind are no fields), its
/// `metadata` (the server's own fields are nobody's), or below.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Top,
    Meta,
    Inner,
}

/// The `fieldsV1` tree of the fields in `map` but those under `taken` (paths from `map`):
/// `f:<name>` per field, `.` for a map the writer created, `v:<value>` per finalizer,
/// `k:{"uid":..}` per owner reference; other lists are atomic. Metadata follows the built-in
/// rules even in a custom resource. A map whose every field was taken is left out.
fn fields_v1(
    map: &Map<String, Value>,
    crd: bool,
    taken: &[&[&str]],
    level: Level,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in map {
        let key = k.as_str();
        let skip = match level {
            Level::Top => key == "apiVersion" || key == "kind",
            Level::Meta => crate::sim::managed::SERVER_METADATA.contains(&key),
            Level::Inner => false,
        };
        if skip {
            continue;
        }
        let below: Vec<&[&str]> = taken
            .iter()
            .filter(|p| p.first() == Some(&key))
            .map(|p| &p[1..])
            .collect();
        if below.iter().any(|p| p.is_empty()) {
            continue;
        }
        let next = if level == Level::Top && key == "metadata" {
            Level::Meta
        } else {
            Level::Inner
        };
        if let Some(f) = field(key, v, crd, &below, next) {
            out.insert(format!("f:{key}"), f);
        }
    }
    out
}

/// One field's entry in a `fieldsV1` tree (see `fields_v1`); `None` when it is no field
/// (a built-in kind's null or empty string, or a map all of whose fields were taken).
/// `inside`: the level of the field's own fields.
fn field(key: &str, v: &Value, crd: bool, taken: &[&[&str]], inside: Level) -> Option<Value> {
    // A built-in kind's empty string or null is an omitted field, not one anybody set.
    let custom = crd && key != "metadata";
    if v.is_null() || (!custom && v.as_str() == Some("")) {
        return None;
    }
    let atomic = if custom { CRD_ATOMIC } else { TYPED_ATOMIC };
    Some(match v {
        Value::Object(m) if m.is_empty() || atomic.contains(&key) => json!({}),
        Value::Object(m) => {
            let mut sub = fields_v1(m, custom, taken, inside);
            if sub.is_empty() {
                return None;
            }
            if custom || TYPED_DOT.contains(&key) {
                sub.insert(".".into(), json!({}));
            }
            Value::Object(sub)
        }
        Value::Array(items) if key == "finalizers" => {
            let mut set = Map::new();
            set.insert(".".into(), json!({}));
            for i in items {
                set.insert(format!("v:{i}"), json!({}));
            }
            Value::Object(set)
        }
        Value::Array(items) if key == "ownerReferences" => {
            let mut keyed = Map::new();
            keyed.insert(".".into(), json!({}));
            for i in items {
                keyed.insert(format!("k:{}", json!({"uid": i["uid"]})), json!({}));
            }
            Value::Object(keyed)
        }
        _ => json!({}),
    })
}

/// Adds `f` under `key`, keeping what an earlier path of the same writer put there (two
/// annotations: one `f:metadata`).
fn merge(tree: &mut Map<String, Value>, key: String, f: Value) {
    match (tree.get_mut(&key), f) {
        (Some(Value::Object(have)), Value::Object(add)) => {
            for (k, v) in add {
                merge(have, k, v);
            }
        }
        (_, f) => {
            tree.insert(key, f);
        }
    }
}

/// The tree a writer of only `path` owns: the containers on the way (which it did not create:
/// no `.`), then the field itself.
fn path_fields(obj: &Value, path: &[&str], crd: bool) -> Option<Value> {
    let (first, rest) = path.split_first()?;
    let v = obj.get(*first)?;
    match rest.split_first() {
        None => field(first, v, crd, &[], Level::Inner),
        Some((next, _)) => {
            let below = path_fields_in(v, rest, crd && *first != "metadata")?;
            let mut m = Map::new();
            m.insert(format!("f:{next}"), below);
            Some(Value::Object(m))
        }
    }
}

fn path_fields_in(v: &Value, path: &[&str], crd: bool) -> Option<Value> {
    let (first, rest) = path.split_first()?;
    let child = v.get(*first)?;
    match rest.split_first() {
        None => field(first, child, crd, &[], Level::Inner),
        Some((next, _)) => {
            let below = path_fields_in(child, rest, crd)?;
            let mut m = Map::new();
            m.insert(format!("f:{next}"), below);
            Some(Value::Object(m))
        }
    }
}

/// `metadata.resourceVersion` as the server counts: one counter for the cluster, so the object
/// written last has the highest. Ordered by each object's last write (`managedFields` times,
/// all in the same format, so they sort as text).
fn stamp_versions(objects: &mut [Value]) {
    let last_write = |o: &Value| -> String {
        o["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["time"].as_str())
            .max()
            .unwrap_or_default()
            .to_string()
    };
    let mut order: Vec<(String, usize)> = objects
        .iter()
        .enumerate()
        .map(|(i, o)| (last_write(o), i))
        .collect();
    order.sort();
    // A live cluster's counter is large; a small one would hide a client that assumes otherwise.
    const FIRST: u64 = 48_213_907;
    for (n, (_, i)) in order.into_iter().enumerate() {
        objects[i]["metadata"]["resourceVersion"] = json!((FIRST + n as u64).to_string());
    }
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

    /// What `real-apiserver-20k.json` has on every object and the generator used to lack.
    #[test]
    fn objects_carry_what_a_real_server_returns() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        for shape in [Shape::Default, Shape::DenseNamespaces, Shape::ManyEvents] {
            let w = generate_shape(shape, 2_000, now);
            let mut versions = std::collections::HashSet::new();
            let mut created = std::collections::HashMap::<&str, usize>::new();
            for o in &w.objects {
                let m = &o["metadata"];
                let what = format!("{shape:?} {} {}", o["kind"], m["name"]);
                let entries = m["managedFields"].as_array().expect(&what);
                assert!(!entries.is_empty(), "{what}: no managedFields");
                let mut keys = std::collections::HashSet::new();
                let info = crate::model::Kind::from_api(
                    o["apiVersion"].as_str().unwrap_or_default(),
                    o["kind"].as_str().unwrap_or_default(),
                )
                .map(|k| k.info());
                for e in entries {
                    assert_eq!(e["fieldsType"], "FieldsV1", "{what}");
                    assert_eq!(e["apiVersion"], o["apiVersion"], "{what}");
                    assert!(
                        e["fieldsV1"].as_object().is_some_and(|f| !f.is_empty()),
                        "{what}"
                    );
                    assert!(
                        e["time"]
                            .as_str()
                            .is_some_and(|t| t.parse::<Timestamp>().is_ok())
                    );
                    let key = (
                        e["manager"].clone(),
                        e["operation"].clone(),
                        e["subresource"].clone(),
                    );
                    assert!(
                        keys.insert(key),
                        "{what}: one entry per manager and operation"
                    );
                    // Status goes through the subresource where the kind has one.
                    let status_sub = e["subresource"] == "status";
                    let has_status = e["fieldsV1"].get("f:status").is_some();
                    if has_status && info.is_some_and(|i| i.status_subresource) {
                        assert!(status_sub, "{what}: status written without the subresource");
                    }
                }
                assert!(
                    versions.insert(m["resourceVersion"].clone()),
                    "{what}: version"
                );
                let t = m["creationTimestamp"].as_str().expect(&what);
                *created.entry(t).or_default() += 1;
                match o["kind"].as_str() {
                    Some("PersistentVolumeClaim") => {
                        assert!(o["spec"]["volumeMode"].is_string(), "{what}");
                        assert_eq!(m["finalizers"][0], "kubernetes.io/pvc-protection", "{what}");
                    }
                    Some("PersistentVolume") => {
                        let f = m["finalizers"].as_array().expect(&what);
                        assert!(f.contains(&json!("kubernetes.io/pv-protection")), "{what}");
                    }
                    Some("Event") => {
                        assert_eq!(o["eventTime"], Value::Null, "{what}");
                        assert_eq!(o["reportingComponent"], "", "{what}");
                        assert!(o["count"].as_u64().is_some_and(|c| c >= 1), "{what}");
                        assert!(o["firstTimestamp"].as_str() <= o["lastTimestamp"].as_str());
                        let about = o["involvedObject"]["name"].as_str().unwrap_or_default();
                        let name = m["name"].as_str().unwrap_or_default();
                        let hex = name.strip_prefix(about).and_then(|h| h.strip_prefix('.'));
                        assert!(
                            hex.is_some_and(|h| h.len() == 16 && u64::from_str_radix(h, 16).is_ok()),
                            "{what}: <object>.<hex nanoseconds>"
                        );
                    }
                    _ => {}
                }
                if info.is_some_and(|i| !i.group.is_empty() && !i.group.ends_with(".k8s.io")) {
                    assert!(
                        m["generation"].as_u64().is_some(),
                        "{what}: CRDs count generations"
                    );
                }
            }
            // Created one by one, by a clock: no second holds more than a few objects (it was
            // 3 of every 4 objects on one second), and not all on whole minutes.
            let busiest = created.values().max().copied().unwrap_or(0);
            assert!(
                busiest <= 40,
                "{shape:?}: {busiest} objects created on one second"
            );
            let on_minutes = created
                .iter()
                .filter(|(t, _)| t.ends_with(":00Z"))
                .map(|(_, n)| n)
                .sum::<usize>();
            assert!(
                on_minutes * 10 < w.objects.len(),
                "{shape:?}: {on_minutes} on whole minutes"
            );
        }
    }

    #[test]
    fn fields_v1_follows_the_servers_rules() {
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "p", "namespace": "n", "uid": "u", "labels": {"a": "b"},
                "finalizers": ["kubernetes.io/pvc-protection"],
                "ownerReferences": [{"uid": "o1", "kind": "DataVolume"}]},
            "spec": {"resources": {"requests": {"storage": "1Gi"}}, "selector": {"matchLabels": {"x": "y"}},
                "volumeName": "pv"},
            "status": {"phase": "Bound"}});
        let map = pvc.as_object().unwrap();
        let taken: &[&[&str]] = &[&["spec", "volumeName"], &["status"]];
        let f = Value::Object(fields_v1(map, false, taken, Level::Top));
        assert_eq!(
            f,
            json!({"f:metadata": {
                "f:labels": {".": {}, "f:a": {}},
                "f:finalizers": {".": {}, "v:\"kubernetes.io/pvc-protection\"": {}},
                "f:ownerReferences": {".": {}, "k:{\"uid\":\"o1\"}": {}}},
              "f:spec": {"f:resources": {"f:requests": {".": {}, "f:storage": {}}}, "f:selector": {}}})
        );
        // A writer of two annotations and a spec field owns all three.
        let g = Gen {
            now: 1_800_000_000,
            seq: 0,
        };
        let mut pvc = pvc;
        pvc["metadata"]["annotations"] = json!({"x": "1", "y": "2", "z": "3"});
        let binder = Write::main(
            "kcm",
            1,
            &[
                &["metadata", "annotations", "x"],
                &["metadata", "annotations", "y"],
                &["spec", "volumeName"],
            ],
        );
        g.managed(&mut pvc, false, ("creator", 2), &[binder]);
        assert_eq!(
            pvc["metadata"]["managedFields"][1]["fieldsV1"],
            json!({"f:metadata": {"f:annotations": {"f:x": {}, "f:y": {}}}, "f:spec": {"f:volumeName": {}}})
        );
        assert_eq!(
            pvc["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:annotations"],
            json!({".": {}, "f:z": {}})
        );
        let rj = json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
            "metadata": {"name": "r"}, "spec": {"backupRef": {"name": "b"}, "options": {"keepOriginalPVC": true}}});
        let f = Value::Object(fields_v1(rj.as_object().unwrap(), true, &[], Level::Top));
        assert_eq!(
            f,
            json!({"f:spec": {".": {}, "f:backupRef": {}, "f:options": {".": {}, "f:keepOriginalPVC": {}}}})
        );
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
