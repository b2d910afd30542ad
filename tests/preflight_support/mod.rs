//! What the preflight and controller-generation tests share: the emulator with a VM or a
//! Postgres application and its Backup, the objects that make each prediction, and the binary
//! run against it.

#![allow(dead_code)]

use restorewatch::sim::managed::Writer;
use restorewatch::sim::{Policy, Rule, Sim, SimConfig, SimHandle};
use serde_json::{Value, json};
use std::path::PathBuf;

pub const NS: &str = "tenant-a";
pub const DELETED_UID: &str = "d0000000-0000-4000-8000-00000000dead";
pub const PVC_UID: &str = "8fe8d0ce-0000-4000-8000-000000000002";
pub const CLUSTER_UID: &str = "c1000000-0000-4000-8000-000000000001";

pub struct Cluster {
    pub sim: SimHandle,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Cluster {
    pub async fn start(objs: Vec<Value>) -> Cluster {
        Cluster::with(SimConfig::default(), None, objs).await
    }

    /// Without the controller manager: no garbage collection, no binding; the objects stay
    /// exactly as loaded.
    pub async fn start_still(objs: Vec<Value>) -> Cluster {
        let c = Cluster::with(SimConfig::default(), None, Vec::new()).await;
        c.sim.set_controller_manager(false);
        for o in objs {
            c.sim.store().load(o).expect("object loads");
        }
        c
    }

    /// A user who may read everything except PVCs.
    pub async fn start_without_pvcs(objs: Vec<Value>) -> Cluster {
        let all_but_pvcs: Vec<String> = restorewatch::model::KINDS
            .iter()
            .filter(|k| k.plural != "persistentvolumeclaims")
            .map(|k| k.plural.to_string())
            .collect();
        let rules = vec![Rule {
            verbs: vec!["get".into(), "list".into(), "watch".into()],
            resources: all_but_pvcs,
            namespaces: vec![],
        }];
        Cluster::start_as(rules, objs).await
    }

    /// A user with only these rules.
    pub async fn start_as(rules: Vec<Rule>, objs: Vec<Value>) -> Cluster {
        let mut cfg = SimConfig::default();
        cfg.tokens.insert(
            "limited".into(),
            Policy {
                user: "limited".into(),
                rules,
            },
        );
        Cluster::with(cfg, Some("limited"), objs).await
    }

    async fn with(cfg: SimConfig, token: Option<&str>, objs: Vec<Value>) -> Cluster {
        let sim = Sim::start(cfg).await.expect("emulator starts");
        for o in objs {
            // Objects with a `managedFields` marker are written as that manager would.
            match o["x-writer"].as_str() {
                Some(m) => {
                    let mut o = o.clone();
                    let writer = Writer::update(m);
                    o.as_object_mut().map(|x| x.remove("x-writer"));
                    sim.store().put_as(o, &writer).expect("object loads")
                }
                None => sim.store().load(o).expect("object loads"),
            };
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig, token)
            .expect("kubeconfig");
        Cluster {
            sim,
            dir,
            kubeconfig,
        }
    }

    pub async fn stop(self) {
        self.sim.shutdown().await;
    }

    /// The kubeconfig `run` and `kubectl` use (for a process the test starts itself).
    pub fn kubeconfig(&self) -> &std::path::Path {
        &self.kubeconfig
    }

    /// A scratch directory that lives as long as the emulator.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Runs the binary (on the blocking pool: the emulator answers on this runtime).
    pub async fn run(&self, args: &[&str], stdin: Option<String>) -> (i32, String, String) {
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.extend(["--kubeconfig".into(), self.kubeconfig.display().to_string()]);
        let state = self.dir.path().to_path_buf();
        let out = tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_restorewatch"))
                .args(&full)
                .env("NO_COLOR", "1")
                .env("XDG_STATE_HOME", &state)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("the binary runs");
            let mut input = child.stdin.take().expect("stdin");
            input
                .write_all(stdin.unwrap_or_default().as_bytes())
                .expect("stdin written");
            drop(input);
            child.wait_with_output().expect("the binary ends")
        })
        .await
        .expect("task");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// kubectl against the emulator, as the same user.
    pub async fn kubectl(&self, args: &[&str]) -> (i32, String, String) {
        let mut full: Vec<String> =
            vec!["--kubeconfig".into(), self.kubeconfig.display().to_string()];
        full.extend(args.iter().map(|s| s.to_string()));
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new("kubectl").args(&full).output()
        })
        .await
        .expect("task")
        .expect("kubectl is installed");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn json_of(code: i32, out: &str, err: &str) -> (i32, Value) {
        let doc: Value = serde_json::from_str(out)
            .unwrap_or_else(|e| panic!("one JSON document ({e}): {out}{err}"));
        assert_eq!(doc["exitCode"], code, "the document says the exit code");
        (code, doc)
    }

    /// `preflight -f - -o json` with the manifest on stdin.
    pub async fn preflight_file(&self, manifest: &Value) -> (i32, Value) {
        let (code, out, err) = self
            .run(
                &["preflight", "-f", "-", "-o", "json"],
                Some(manifest.to_string()),
            )
            .await;
        Cluster::json_of(code, &out, &err)
    }

    pub async fn preflight_text(&self, manifest: &Value) -> (i32, String) {
        let (code, out, err) = self
            .run(&["preflight", "-f", "-"], Some(manifest.to_string()))
            .await;
        (code, format!("{out}{err}"))
    }

    /// `preflight --app VMInstance/vm1 --backup vm1-backup --name NAME -n tenant-a -o json`.
    pub async fn preflight_app(&self, name: &str) -> (i32, Value) {
        let (code, out, err) = self
            .run(
                &[
                    "preflight",
                    "--app",
                    "VMInstance/vm1",
                    "--backup",
                    "vm1-backup",
                    "--name",
                    name,
                    "-n",
                    NS,
                    "-o",
                    "json",
                ],
                None,
            )
            .await;
        Cluster::json_of(code, &out, &err)
    }

    /// `check -o json` on the live emulator.
    pub async fn check(&self) -> Value {
        let (_, out, err) = self.run(&["check", "-o", "json"], None).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("check JSON ({e}): {out}{err}"))
    }
}

pub fn prediction<'a>(doc: &'a Value, code: &str) -> Option<&'a Value> {
    doc["predictions"]
        .as_array()?
        .iter()
        .find(|p| p["code"] == code)
}

pub fn codes(doc: &Value) -> Vec<String> {
    doc["predictions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn backup_with_disks(disks: &[&str]) -> Value {
    let dvs: Vec<Value> = disks
        .iter()
        .map(|d| json!({"dataVolumeName": d, "applicationName": d.trim_start_matches("vm-disk-")}))
        .collect();
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
        "metadata": {"name": "vm1-backup", "namespace": NS, "creationTimestamp": "2026-11-20T02:00:00Z"},
        "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                 "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero"}},
        "status": {"underlyingResources": {"dataVolumes": dvs}}})
}

/// A stopped VM with one 10Gi disk (its DataVolume, PVC and PV) on a `Delete` class, and its
/// Backup (index 2).
pub fn vm_objects() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "replicated"},
            "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Delete"}),
        backup_with_disks(&["vm-disk-data"]),
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm-instance-vm1", "namespace": NS},
            "spec": {"runStrategy": "Always", "template": {"spec": {"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "vm-disk-data"}}]}}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "vm-disk-data", "namespace": NS, "uid": PVC_UID, "creationTimestamp": "2026-09-21T10:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                     "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-data"},
            "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-data", "creationTimestamp": "2026-09-21T10:00:00Z"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
                     "storageClassName": "replicated", "volumeMode": "Block",
                     "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": NS, "name": "vm-disk-data", "uid": PVC_UID}},
            "status": {"phase": "Bound"}}),
        // A Cozystack disk is a DataVolume first: without it the analysis reads the disk as
        // already handed over by the controller (DataVolume deleted).
        json!({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
            "metadata": {"name": "vm-disk-data", "namespace": NS, "creationTimestamp": "2026-09-21T10:00:00Z"},
            "status": {"phase": "Succeeded", "claimName": "vm-disk-data"}}),
    ]
}

pub fn vmi() -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": "vm-instance-vm1", "namespace": NS}, "status": {"phase": "Running"}})
}

/// A PVC holding an `-orig` name, made by another RestoreJob (by `restore_uid`, or an older
/// controller's without one), long ago.
pub fn foreign_orig(name: &str, restore_uid: Option<&str>) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-10-01T10:00:00Z"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-old"},
        "status": {"phase": "Bound"}});
    if let Some(u) = restore_uid {
        v["metadata"]["annotations"] = json!({"backups.cozystack.io/restore-job-uid": u});
    }
    v
}

/// A RestoreJob the fixed controller failed because an `-orig` name was taken.
pub fn failed_rj_naming(name: &str, orig: &str) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-11-01T10:00:00Z"},
        "spec": {"backupRef": {"name": "vm1-backup"}},
        "status": {"phase": "Failed", "completedAt": "2026-11-01T10:00:05Z",
                   "message": format!("cannot keep disk: PersistentVolumeClaim {NS}/{orig} exists and was not created by this RestoreJob")}})
}

pub fn live_rj(name: &str, phase: &str) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {"backupRef": {"name": "vm1-backup"}},
        "status": {"phase": phase, "startedAt": "2026-11-20T10:00:01Z"}})
}

pub fn velero_restore(name: &str, rj: &str, rj_ns: &str) -> Value {
    json!({"apiVersion": "velero.io/v1", "kind": "Restore",
        "metadata": {"name": name, "namespace": "cozy-velero", "creationTimestamp": "2026-11-01T10:00:10Z",
                     "labels": {"backups.cozystack.io/owned-by.BackupJobName": rj,
                                "backups.cozystack.io/owned-by.BackupJobNamespace": rj_ns}},
        "spec": {"backupName": "vm1-velero"}, "status": {"phase": "Completed"}})
}

/// A RestoreJob manifest for the VM, as `kubectl apply -f` takes it.
pub fn rj_manifest(name: &str, options: Value) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"backupRef": {"name": "vm1-backup"},
                 "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                 "options": options}})
}

/// A Postgres app `orders` whose Cluster archives under `archive` and whose ObjectStore is owned
/// by Cluster UID `store_owner`; its Backup recovers from `postgres-orders`.
pub fn pg_objects(store_owner: &str, archive: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "orders-backup", "namespace": NS},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "orders"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "CNPG", "name": "cnpg"},
                     "driverMetadata": {"cnpg.io/server-name": "postgres-orders",
                                        "cnpg.io/destination-path": "s3://bucket/orders"}}}),
        json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "orders", "namespace": NS}, "spec": {"bootstrap": {"enabled": false}}}),
        json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": {"name": "postgres-orders", "namespace": NS, "uid": CLUSTER_UID},
            "spec": {"plugins": [{"name": "barman-cloud.cloudnative-pg.io",
                "parameters": {"serverName": archive, "barmanObjectName": "postgres-orders"}}]},
            "status": {"phase": "Cluster in healthy state"}}),
        json!({"apiVersion": "barmancloud.cnpg.io/v1", "kind": "ObjectStore",
            "metadata": {"name": "postgres-orders", "namespace": NS,
                "ownerReferences": [{"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
                    "name": "postgres-orders", "uid": store_owner, "controller": true}]},
            "spec": {"configuration": {"destinationPath": "s3://bucket/orders"}}}),
    ]
}

pub fn pg_manifest(options: Value) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": "pg-restore", "namespace": NS},
        "spec": {"backupRef": {"name": "orders-backup"},
                 "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "orders"},
                 "options": options}})
}

/// The VM's Backup naming its Velero Backup, and that Velero Backup in Velero's namespace,
/// expiring at `expiration` (`None`: no Velero Backup at all).
pub fn vm_objects_with_velero_backup(expiration: Option<&str>) -> Vec<Value> {
    let mut objs = vm_objects();
    objs[2]["spec"]["driverMetadata"] = json!({"velero.io/backup-name": "tenant-a.vm1-nightly-x1"});
    objs.push(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cozy-velero"}}),
    );
    // Another Backup of Velero's, so that a read of the kind is plainly a read.
    objs.push(json!({"apiVersion": "velero.io/v1", "kind": "Backup",
        "metadata": {"name": "tenant-b.vm9-nightly-y2", "namespace": "cozy-velero"},
        "status": {"phase": "Completed", "expiration": "2099-01-01T00:00:00Z"}}));
    if let Some(at) = expiration {
        objs.push(json!({"apiVersion": "velero.io/v1", "kind": "Backup",
            "metadata": {"name": "tenant-a.vm1-nightly-x1", "namespace": "cozy-velero"},
            "status": {"phase": "Completed", "expiration": at}}));
    }
    objs
}
