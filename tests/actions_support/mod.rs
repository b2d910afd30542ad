//! What the action tests against the emulator share: the objects of a VM restore in each of
//! its starting states, the emulator with them loaded, a stand-in for the PV controller's late
//! bind, and the checks through kubectl that a refusal wrote nothing.

#![allow(dead_code)]

use restorewatch::actions::execute::{Executor, plan_fresh};
use restorewatch::actions::{ActionRequest, Plan, Refusal, Target};
use restorewatch::analysis::ActionKind;
use restorewatch::model::Kind;
use restorewatch::sim::{Sim, SimConfig, SimHandle};
use serde_json::{Value, json};
use std::time::Duration;

pub const NS: &str = "tenant-a";
pub const RJ_UID: &str = "5c96b3b8-0000-4000-8000-000000000001";
pub const PVC_UID: &str = "8fe8d0ce-0000-4000-8000-000000000002";
pub const ORIG: &str = "vm-disk-data-orig-de3e";

pub fn rj(phase: &str) -> Value {
    json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
        "metadata": {"name": "restore-test", "namespace": NS, "uid": RJ_UID, "creationTimestamp": "2026-11-20T10:00:00Z"},
        "spec": {"backupRef": {"name": "vm1-backup"}},
        "status": {"phase": phase, "startedAt": "2026-11-20T10:00:01Z"}})
}

pub fn base_objects(rj_phase: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "replicated"},
            "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Delete"}),
        json!({"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
            "metadata": {"name": "vm1-backup", "namespace": NS, "uid": "b0000000-0000-4000-8000-000000000003", "creationTimestamp": "2026-11-20T02:00:00Z"},
            "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                     "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero"}},
            "status": {"underlyingResources": {"dataVolumes": [{"dataVolumeName": "vm-disk-data", "applicationName": "data"}]}}}),
        rj(rj_phase),
    ]
}

pub fn original_pvc() -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "vm-disk-data", "namespace": NS, "uid": PVC_UID, "creationTimestamp": "2026-09-21T10:00:00Z",
                     "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-data"},
        "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}})
}

/// The disk as the restore brought it back: a new PVC of the original name on a new PV.
pub fn restored_pvc() -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "vm-disk-data", "namespace": NS, "uid": "7e000000-0000-4000-8000-000000000009", "creationTimestamp": "2026-11-20T10:02:00Z"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-restored"},
        "status": {"phase": "Bound"}})
}

pub fn pv(policy: &str, claim_name: &str, claim_uid: &str, recorded: Option<&str>) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-data", "uid": "pv000000-0000-4000-8000-000000000004", "creationTimestamp": "2026-09-21T10:00:00Z"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": policy,
                 "storageClassName": "replicated", "volumeMode": "Block",
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": NS, "name": claim_name, "uid": claim_uid}},
        "status": {"phase": "Bound"}});
    if let Some(r) = recorded {
        v["metadata"]["annotations"] = json!({"backups.cozystack.io/original-reclaim-policy": r});
    }
    v
}

pub fn orig_pvc(uid: &str, restore_uid: Option<&str>, phase: &str) -> Value {
    let mut ann = serde_json::Map::new();
    if let Some(u) = restore_uid {
        ann.insert("backups.cozystack.io/restore-job-uid".into(), json!(u));
        ann.insert(
            "backups.cozystack.io/original-reclaim-policy".into(),
            json!("Delete"),
        );
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": ORIG, "namespace": NS, "uid": uid, "creationTimestamp": "2026-11-20T10:00:40Z", "annotations": ann,
                     "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-data"},
        "status": {"phase": phase}})
}

/// The restore's Velero Restore (Completed, created after the RestoreJob) with a DataDownload
/// into the restored `vm-disk-data` in `phase`: with `Completed`, what proves the copy restored.
pub fn restore_proof(phase: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cozy-velero"}}),
        json!({"apiVersion": "velero.io/v1", "kind": "Restore",
            "metadata": {"name": "tenant-a.restore-test-fk8s8", "namespace": "cozy-velero", "uid": "9ff8f956-0000-4000-8000-000000000031",
                         "generateName": "tenant-a.restore-test-", "creationTimestamp": "2026-11-20T10:00:20Z",
                         "labels": {"backups.cozystack.io/owned-by.BackupJobName": "restore-test",
                                    "backups.cozystack.io/owned-by.BackupJobNamespace": NS}},
            "status": {"phase": "Completed"}}),
        json!({"apiVersion": "velero.io/v2alpha1", "kind": "DataDownload",
            "metadata": {"name": "tenant-a.restore-test-fk8s8-8q8tz", "namespace": "cozy-velero", "creationTimestamp": "2026-11-20T10:00:30Z",
                         "labels": {"velero.io/restore-uid": "9ff8f956-0000-4000-8000-000000000031",
                                    "velero.io/restore-name": "tenant-a.restore-test-fk8s8"}},
            "spec": {"targetVolume": {"pvc": "vm-disk-data", "namespace": NS, "pv": ""},
                     "operationTimeout": "10m", "snapshotID": "s1"},
            "status": {"phase": phase}}),
    ]
}

/// The Event the controller before the fix leaves on a failed keep attempt (it sets the PV
/// Retain first): evidence that expires after an hour, and never decides a policy.
pub fn failed_keep_event() -> Value {
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "restore-test.1", "namespace": NS},
        "involvedObject": {"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob", "name": "restore-test", "namespace": NS, "uid": RJ_UID},
        "reason": "Failed", "type": "Warning",
        "message": "Failed to keep old PVC vm-disk-data: failed to get -orig PVC vm-disk-data-orig-de3e: PersistentVolumeClaim \"vm-disk-data-orig-de3e\" not found",
        "firstTimestamp": "2026-11-20T10:00:30Z", "lastTimestamp": "2026-11-20T10:00:30Z"})
}

/// The rename's starting states, as the controller (before or after the fix) can leave them.
pub fn rename_state(which: &str) -> Vec<Value> {
    let mut objs = base_objects("Running");
    match which {
        // Nothing done yet: the operator keeps the disk himself.
        "fresh" => objs.extend([original_pvc(), pv("Delete", "vm-disk-data", PVC_UID, None)]),
        // The fixed controller stopped after creating the -orig PVC.
        "orig-created" => objs.extend([
            original_pvc(),
            pv("Retain", "vm-disk-data", PVC_UID, Some("Delete")),
            orig_pvc(
                "0e000000-0000-4000-8000-000000000005",
                Some(RJ_UID),
                "Pending",
            ),
        ]),
        // ... after deleting the original: the PV still points at the deleted claim.
        "original-deleted" => objs.extend([
            pv("Retain", "vm-disk-data", PVC_UID, Some("Delete")),
            orig_pvc(
                "0e000000-0000-4000-8000-000000000005",
                Some(RJ_UID),
                "Pending",
            ),
        ]),
        // The old controller's cache race: no annotations anywhere, original still bound.
        "prefix-race" => objs.extend([
            original_pvc(),
            pv("Retain", "vm-disk-data", PVC_UID, None),
            orig_pvc("0e000000-0000-4000-8000-000000000005", None, "Pending"),
        ]),
        // Finished by the controller: nothing to do.
        "complete" => objs.extend([
            pv(
                "Retain",
                ORIG,
                "0e000000-0000-4000-8000-000000000005",
                Some("Delete"),
            ),
            orig_pvc(
                "0e000000-0000-4000-8000-000000000005",
                Some(RJ_UID),
                "Bound",
            ),
        ]),
        other => panic!("unknown state {other}"),
    }
    objs
}

pub async fn sim_with(objs: Vec<Value>) -> (SimHandle, kube::Client) {
    sim_loaded(SimConfig::default(), objs).await
}

async fn sim_loaded(config: SimConfig, objs: Vec<Value>) -> (SimHandle, kube::Client) {
    let sim = Sim::start(config).await.expect("emulator starts");
    for o in objs {
        sim.store().load(o).expect("object loads");
    }
    let client = sim.client().expect("client");
    (sim, client)
}

/// The records of an audit log, one JSON object a line.
pub fn audit_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the audit log was written")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line one JSON record"))
        .collect()
}

pub fn executor(client: &kube::Client, max_writes: Option<usize>) -> Executor {
    Executor {
        client: client.clone(),
        user: "test".into(),
        context: "restorewatch-sim".into(),
        server: "http://sim".into(),
        audit: None,
        events: false,
        max_writes,
        // Long enough for the emulator's binder on a short resync; a test that wants the bound
        // sets its own.
        bind_wait: std::time::Duration::from_secs(10),
    }
}

pub async fn plan_ok(client: &kube::Client, req: &ActionRequest) -> Plan {
    plan_fresh(client, req)
        .await
        .expect("reads work")
        .unwrap_or_else(|r| panic!("refused: {}", r.reason))
}

pub fn rename_req() -> ActionRequest {
    ActionRequest::new(
        ActionKind::ResumeRename,
        Target::Restore {
            namespace: NS.into(),
            name: "restore-test".into(),
        },
    )
}

pub fn pvc_req(action: ActionKind, name: &str) -> ActionRequest {
    ActionRequest::new(
        action,
        Target::Pvc {
            namespace: NS.into(),
            name: name.into(),
        },
    )
}

pub fn get(sim: &SimHandle, kind: Kind, ns: &str, name: &str) -> Option<Value> {
    sim.store().get(kind, ns, name)
}

/// Waits (bounded) until the emulator's controller manager has removed a deleted PVC.
pub async fn wait_gone(sim: &SimHandle, ns: &str, name: &str) {
    for _ in 0..100 {
        if get(sim, Kind::PersistentVolumeClaim, ns, name).is_none() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("PVC {ns}/{name} still exists 2 s after its deletion");
}

/// What matters of the end state of a rename, with server-made values (UIDs) resolved.
pub fn rename_outcome(
    sim: &SimHandle,
) -> (
    bool,
    String,
    String,
    Option<String>,
    bool,
    Option<String>,
    Option<String>,
) {
    let pv = get(sim, Kind::PersistentVolume, "", "pv-data").expect("the PV is never deleted");
    let orig = get(sim, Kind::PersistentVolumeClaim, NS, ORIG);
    let orig_uid = orig
        .as_ref()
        .and_then(|o| o["metadata"]["uid"].as_str())
        .map(str::to_string);
    let claim_points_at_orig = pv["spec"]["claimRef"]["name"] == ORIG
        && pv["spec"]["claimRef"]["uid"].as_str().map(str::to_string) == orig_uid;
    (
        claim_points_at_orig,
        pv["spec"]["persistentVolumeReclaimPolicy"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        pv["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        orig.as_ref()
            .and_then(|o| {
                o["metadata"]["annotations"]["backups.cozystack.io/restore-job-uid"].as_str()
            })
            .map(str::to_string),
        get(sim, Kind::PersistentVolumeClaim, NS, "vm-disk-data").is_none(),
        orig.as_ref()
            .and_then(|o| o["spec"]["volumeName"].as_str())
            .map(str::to_string),
        orig.as_ref()
            .and_then(|o| {
                o["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"]
                    .as_str()
            })
            .map(str::to_string),
    )
}

pub fn assert_kept(sim: &SimHandle, state: &str, expect_recorded: &str) {
    let (claim_ok, policy, pv_recorded, orig_uid_ann, original_gone, volume, orig_recorded) =
        rename_outcome(sim);
    assert!(
        claim_ok,
        "{state}: the PV's claimRef must name the -orig PVC and its UID"
    );
    assert_eq!(policy, "Retain", "{state}: the PV must be Retain");
    assert_eq!(
        pv_recorded, expect_recorded,
        "{state}: recorded policy on the PV"
    );
    assert_eq!(
        orig_uid_ann.as_deref(),
        Some(RJ_UID),
        "{state}: the -orig PVC carries this RestoreJob's UID"
    );
    assert!(original_gone, "{state}: the original PVC is deleted");
    assert_eq!(
        volume.as_deref(),
        Some("pv-data"),
        "{state}: the -orig PVC keeps the same PV"
    );
    if !expect_recorded.is_empty() {
        assert_eq!(
            orig_recorded.as_deref(),
            Some(expect_recorded),
            "{state}: recorded policy on the -orig PVC"
        );
    }
}

/// A two-disk restore: `data` as in `rename_state("fresh")`, `system` whose `-orig` name is
/// held by another RestoreJob's PVC.
pub fn two_disks() -> Vec<Value> {
    let mut objs = rename_state("fresh");
    objs[2]["status"]["underlyingResources"]["dataVolumes"] = json!([
        {"dataVolumeName": "vm-disk-data", "applicationName": "data"},
        {"dataVolumeName": "vm-disk-system", "applicationName": "system"}]);
    objs.extend([
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "vm-disk-system", "namespace": NS, "uid": "5a000000-0000-4000-8000-000000000013", "creationTimestamp": "2026-09-21T10:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}, "volumeName": "pv-system"},
            "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-system"},
            "spec": {"persistentVolumeReclaimPolicy": "Delete",
                     "claimRef": {"namespace": NS, "name": "vm-disk-system", "uid": "5a000000-0000-4000-8000-000000000013"}},
            "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "vm-disk-system-orig-de3e", "namespace": NS, "uid": "f5000000-0000-4000-8000-000000000014",
                         "creationTimestamp": "2026-10-01T10:00:00Z",
                         "annotations": {"backups.cozystack.io/restore-job-uid": "99999999-0000-4000-8000-000000000000"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-old-system"},
            "status": {"phase": "Bound"}}),
    ]);
    objs
}

/// Plans from fresh reads and expects a refusal.
pub async fn refusal(client: &kube::Client, req: &ActionRequest) -> Refusal {
    match plan_fresh(client, req).await.expect("reads work") {
        Ok(p) => panic!("expected a refusal, got the plan {:?}", p.ops),
        Err(r) => r,
    }
}

/// The state of every PV and PVC as kubectl prints it: names, resourceVersions, policies,
/// claimRefs, phases and annotations. Equal before and after means nothing was written.
pub async fn kubectl_state(sim: &SimHandle) -> String {
    kubectl(
        sim,
        &[
            "get",
            "pv,pvc,cluster.postgresql.cnpg.io",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name} rv={.metadata.resourceVersion} {.spec.persistentVolumeReclaimPolicy} claim={.spec.claimRef.name}/{.spec.claimRef.uid} {.status.phase} {.metadata.annotations} {.spec.plugins[0].parameters.serverName}{\"\\n\"}{end}",
        ],
    )
    .await
}

/// What an action can write, for every PV and PVC: existence, spec and our annotations. The PV
/// controller's own writes (status, its annotations) are not in it, so a binder running beside
/// a refused action does not look like a write of the action.
pub fn ours_state(sim: &SimHandle) -> Vec<Value> {
    let mut out = Vec::new();
    for kind in [Kind::PersistentVolume, Kind::PersistentVolumeClaim] {
        for v in sim.store().all(kind, &Default::default()) {
            let ann = &v["metadata"]["annotations"];
            out.push(json!([
                v["metadata"]["namespace"],
                v["metadata"]["name"],
                v["metadata"]["uid"],
                v["metadata"]["deletionTimestamp"],
                v["spec"],
                ann["backups.cozystack.io/restore-job-uid"],
                ann["backups.cozystack.io/original-reclaim-policy"],
            ]));
        }
    }
    out
}

/// Runs kubectl against the emulator (on the blocking pool, so the emulator keeps answering).
pub async fn kubectl(sim: &SimHandle, args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let mut full = vec!["--kubeconfig".to_string(), kc.display().to_string()];
    full.extend(args.iter().map(|s| s.to_string()));
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("kubectl").args(&full).output()
    })
    .await
    .expect("kubectl task")
    .expect("kubectl is installed (the tests check the emulator against it)");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A refusal: planned from fresh reads, it wrote nothing (the emulator's resourceVersion and
/// what kubectl shows are unchanged). Returns the reason.
pub async fn refused_without_writes(
    sim: &SimHandle,
    client: &kube::Client,
    req: &ActionRequest,
) -> String {
    // The emulator's controllers (binder, garbage collector) react to the test's own setup;
    // let them finish, so that any change counted below is the action's.
    sim.controllers_idle().await;
    let before = kubectl_state(sim).await;
    let rv = sim.store().current_rv();
    let r = refusal(client, req).await;
    sim.controllers_idle().await;
    assert_eq!(
        sim.store().current_rv(),
        rv,
        "a refusal writes nothing: {}",
        r.reason
    );
    assert_eq!(
        kubectl_state(sim).await,
        before,
        "kubectl sees no change: {}",
        r.reason
    );
    r.reason
}

/// A stand-in for the PV controller's binder, started mid-test: every `delay` it binds, through
/// the API's status subresource, each Pending PVC whose PV's claimRef names it by name and UID.
/// Only the rename matrix uses it: it plans each state as an operator finds it before the
/// emulator's binder resyncs (15 s: claims awaiting a bind included), then needs the bind soon
/// after the plan is accepted, and the emulator's resync cannot be shortened once scheduled.
/// Every other test uses the emulator's own binder (`sim_with_resync`).
pub fn spawn_binder(client: kube::Client, delay: Duration) -> tokio::task::JoinHandle<()> {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    use kube::api::{Api, ListParams, Patch, PatchParams};
    tokio::spawn(async move {
        let pvcs: Api<PersistentVolumeClaim> = Api::all(client.clone());
        let pvs: Api<PersistentVolume> = Api::all(client.clone());
        loop {
            tokio::time::sleep(delay).await;
            let (Ok(claims), Ok(volumes)) = (
                pvcs.list(&ListParams::default()).await,
                pvs.list(&ListParams::default()).await,
            ) else {
                continue;
            };
            for c in claims.items {
                let phase = c.status.as_ref().and_then(|s| s.phase.clone());
                let Some(vol) = c.spec.as_ref().and_then(|s| s.volume_name.clone()) else {
                    continue;
                };
                if phase.as_deref() == Some("Bound") {
                    continue;
                }
                let claimed = volumes.items.iter().any(|v| {
                    v.metadata.name.as_deref() == Some(vol.as_str())
                        && v.spec
                            .as_ref()
                            .and_then(|s| s.claim_ref.as_ref())
                            .is_some_and(|r| r.name == c.metadata.name && r.uid == c.metadata.uid)
                });
                if !claimed {
                    continue;
                }
                let ns = c.metadata.namespace.clone().unwrap_or_default();
                let name = c.metadata.name.clone().unwrap_or_default();
                let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
                let _ = api
                    .patch_status(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"phase": "Bound"}})),
                    )
                    .await;
            }
        }
    })
}

/// The emulator with these objects, its PV binder on a short resync: a Pending PVC whose PV's
/// claimRef names it (by name and UID) is bound within `resync`, as kube-controller-manager
/// binds it on its own resync.
pub async fn sim_with_resync(objs: Vec<Value>, resync: Duration) -> (SimHandle, kube::Client) {
    sim_loaded(SimConfig::default().with_pv_resync(resync), objs).await
}

/// The emulator with these objects and its PV binder on a 50 ms resync.
pub async fn sim_binding(objs: Vec<Value>) -> (SimHandle, kube::Client) {
    sim_with_resync(objs, Duration::from_millis(50)).await
}

/// The rename finished as a real cluster sees it: the -orig PVC was created Pending while the
/// PV still claimed the original (the binder says FailedBinding), then the original was
/// deleted and the PV's claimRef repointed at the -orig PVC by name and UID. The emulator's PV
/// binder binds it only on its resync, `resync` later, as kube-controller-manager does.
pub async fn awaiting_bind(resync: Duration) -> (SimHandle, kube::Client) {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    use kube::api::{Api, DeleteParams, Patch, PatchParams};
    let sim = Sim::start(SimConfig::default().with_pv_resync(resync))
        .await
        .expect("emulator starts");
    for o in rename_state("orig-created") {
        sim.store().load(o).expect("object loads");
    }
    let client = sim.client().expect("client");
    sim.controllers_idle().await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    pvcs.delete("vm-disk-data", &DeleteParams::default())
        .await
        .expect("the original PVC is deleted");
    wait_gone(&sim, NS, "vm-disk-data").await;
    let pvs: Api<PersistentVolume> = Api::all(client.clone());
    pvs.patch(
        "pv-data",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"claimRef": {"name": ORIG, "uid": "0e000000-0000-4000-8000-000000000005"}}})),
    )
    .await
    .expect("the PV is repointed");
    sim.controllers_idle().await;
    let phase = get(&sim, Kind::PersistentVolumeClaim, NS, ORIG)
        .and_then(|v| v["status"]["phase"].as_str().map(str::to_string));
    assert_eq!(
        phase.as_deref(),
        Some("Pending"),
        "bound only on the resync"
    );
    (sim, client)
}
