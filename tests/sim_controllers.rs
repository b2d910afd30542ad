//! The emulator's kube-controller-manager (garbage collector, PV binder), namespaces, schema
//! validation and managedFields, through the real `kube::Client`, as restorewatch meets them
//! on a real cluster (`reference/apiserver-behaviour.md`).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Namespace, PersistentVolume, PersistentVolumeClaim};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use restorewatch::model::Kind;
use restorewatch::sim::{Scenario, Sim, SimConfig, SimHandle};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

fn ar(kind: Kind) -> ApiResource {
    let i = kind.info();
    ApiResource {
        group: i.group.into(),
        version: i.version.into(),
        api_version: i.api_version(),
        kind: i.api_kind.into(),
        plural: i.plural.into(),
    }
}

async fn start(config: SimConfig) -> SimHandle {
    let sim = Sim::start(config).await.expect("emulator starts");
    sim.store()
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
        .expect("namespace");
    sim
}

fn api(sim: &SimHandle, kind: Kind) -> Api<DynamicObject> {
    Api::namespaced_with(sim.client().expect("client"), "a", &ar(kind))
}

fn obj(kind: Kind, name: &str, rest: Value) -> DynamicObject {
    let i = kind.info();
    let mut v =
        json!({"apiVersion": i.api_version(), "kind": i.api_kind, "metadata": {"name": name}});
    for (k, x) in rest.as_object().into_iter().flatten() {
        if k == "metadata" {
            for (mk, mv) in x.as_object().into_iter().flatten() {
                v["metadata"][mk] = mv.clone();
            }
        } else {
            v[k] = x.clone();
        }
    }
    serde_json::from_value(v).expect("a DynamicObject")
}

fn owner(kind: Kind, name: &str, uid: &str) -> Value {
    let i = kind.info();
    json!({"apiVersion": i.api_version(), "kind": i.api_kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true})
}

fn cluster(name: &str) -> DynamicObject {
    obj(Kind::CnpgCluster, name, json!({"spec": {"instances": 1}}))
}

fn object_store(name: &str, owners: Vec<Value>) -> DynamicObject {
    obj(
        Kind::ObjectStore,
        name,
        json!({"metadata": {"ownerReferences": owners}, "spec": {"configuration": {"destinationPath": "s3://b/p/"}}}),
    )
}

/// Polls until `f` holds (the controllers act asynchronously, as the real ones do).
async fn eventually<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    while !f().await {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn gone(api: &Api<DynamicObject>, name: &str) -> bool {
    api.get_opt(name).await.expect("get").is_none()
}

fn uid(o: &DynamicObject) -> String {
    o.metadata.uid.clone().unwrap_or_default()
}

#[tokio::test]
async fn the_garbage_collector_deletes_an_objectstore_whose_owner_is_gone() {
    let sim = start(SimConfig::default()).await;
    let clusters = api(&sim, Kind::CnpgCluster);
    let stores = api(&sim, Kind::ObjectStore);
    let live = clusters
        .create(&PostParams::default(), &cluster("postgres-pg1"))
        .await
        .expect("Cluster");
    // Report 003: written with the purged Cluster's UID as its owner.
    let purged = "c0de0000-0000-4000-8000-000000000101";
    stores
        .create(
            &PostParams::default(),
            &object_store(
                "postgres-pg1",
                vec![owner(Kind::CnpgCluster, "postgres-pg1", purged)],
            ),
        )
        .await
        .expect("created: the API server accepts a dangling owner");
    eventually("the stale ObjectStore is collected", || {
        gone(&stores, "postgres-pg1")
    })
    .await;
    // Owned by the live Cluster it stays, until the Cluster is deleted.
    stores
        .create(
            &PostParams::default(),
            &object_store(
                "postgres-pg1",
                vec![owner(Kind::CnpgCluster, "postgres-pg1", &uid(&live))],
            ),
        )
        .await
        .expect("re-applied");
    sim.controllers_idle().await;
    assert!(
        !gone(&stores, "postgres-pg1").await,
        "a live owner keeps it"
    );
    clusters
        .delete("postgres-pg1", &DeleteParams::default())
        .await
        .expect("purge");
    eventually("dependents go with their owner", || {
        gone(&stores, "postgres-pg1")
    })
    .await;
}

#[tokio::test]
async fn a_dependent_with_a_live_owner_only_loses_the_dangling_reference() {
    let sim = start(SimConfig::default()).await;
    let clusters = api(&sim, Kind::CnpgCluster);
    let stores = api(&sim, Kind::ObjectStore);
    let live = clusters
        .create(&PostParams::default(), &cluster("c1"))
        .await
        .expect("Cluster");
    let mut second = owner(
        Kind::CnpgCluster,
        "c2",
        "c0de0000-0000-4000-8000-0000000000ff",
    );
    second["controller"] = json!(false);
    stores
        .create(
            &PostParams::default(),
            &object_store(
                "os",
                vec![owner(Kind::CnpgCluster, "c1", &uid(&live)), second],
            ),
        )
        .await
        .expect("ObjectStore");
    eventually("the dangling reference is removed", || async {
        let o = stores.get("os").await.expect("kept");
        o.metadata.owner_references.unwrap_or_default().len() == 1
    })
    .await;
    let refs = stores
        .get("os")
        .await
        .unwrap()
        .metadata
        .owner_references
        .unwrap();
    assert_eq!(refs[0].uid, uid(&live));
}

#[tokio::test]
async fn an_orphan_delete_keeps_the_dependents_and_drops_their_reference() {
    let sim = start(SimConfig::default()).await;
    let dvs = api(&sim, Kind::DataVolume);
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let dv = dvs
        .create(
            &PostParams::default(),
            &obj(
                Kind::DataVolume,
                "vm-disk-data",
                json!({"spec": {"source": {"blank": {}}}}),
            ),
        )
        .await
        .expect("DataVolume");
    let pvc = |name: &str| -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": name, "ownerReferences": [owner(Kind::DataVolume, "vm-disk-data", &uid(&dv))]},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }))
        .unwrap()
    };
    pvcs.create(&PostParams::default(), &pvc("vm-disk-data"))
        .await
        .expect("PVC");
    // The controller's step 5: delete the DataVolume, propagation Orphan.
    dvs.delete("vm-disk-data", &DeleteParams::orphan())
        .await
        .expect("deleted");
    eventually("the DataVolume goes", || gone(&dvs, "vm-disk-data")).await;
    sim.controllers_idle().await;
    let kept = pvcs.get("vm-disk-data").await.expect("the PVC is kept");
    assert!(
        kept.metadata
            .owner_references
            .unwrap_or_default()
            .is_empty()
    );
    assert!(kept.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn a_create_into_a_missing_namespace_is_not_found_and_loading_creates_it() {
    let sim = start(SimConfig::default()).await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "nowhere");
    let p: PersistentVolumeClaim =
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {}})).unwrap();
    match pvcs.create(&PostParams::default(), &p).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
            assert_eq!(s.message, "namespaces \"nowhere\" not found");
        }
        other => panic!("expected 404, got {other:?}"),
    }
    // A dump without its Namespaces (what `kubectl get pvc -A -o json` gives).
    sim.store()
        .load(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "p", "namespace": "tenant-x", "uid": "u-1", "resourceVersion": "77"},
                     "spec": {}, "status": {"phase": "Pending"}}))
        .expect("loaded");
    let nss: Api<Namespace> = Api::all(sim.client().unwrap());
    let ns = nss.get("tenant-x").await.expect("created with the dump");
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    let events: Api<Event> = Api::namespaced(sim.client().unwrap(), "tenant-x");
    let ev: Event = serde_json::from_value(json!({
        "metadata": {"name": "audit.1"},
        "involvedObject": {"kind": "PersistentVolumeClaim", "name": "p", "namespace": "tenant-x"},
        "reason": "RestorewatchAction", "message": "m", "type": "Normal"
    }))
    .unwrap();
    events
        .create(&PostParams::default(), &ev)
        .await
        .expect("an action's Event on a loaded dump");
}

#[tokio::test]
async fn schema_invalid_crd_objects_get_422_with_the_real_message() {
    let sim = start(SimConfig::default()).await;
    let rjs = api(&sim, Kind::RestoreJob);
    let bad = obj(
        Kind::RestoreJob,
        "restore-x",
        json!({"spec": {"targetApplicationRef": {"kind": "Postgres", "name": 7}}}),
    );
    match rjs.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
            assert_eq!(
                s.message,
                "RestoreJob.backups.cozystack.io \"restore-x\" is invalid: [spec.backupRef: Required value, spec.targetApplicationRef.name: Invalid value: \"integer\": spec.targetApplicationRef.name in body must be of type string: \"integer\"]"
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
    assert!(gone(&rjs, "restore-x").await, "nothing written");
    let hrs = api(&sim, Kind::HelmRelease);
    hrs.create(
        &PostParams::default(),
        &obj(
            Kind::HelmRelease,
            "postgres-pg1",
            json!({"spec": {"interval": "5m"}}),
        ),
    )
    .await
    .expect("valid HelmRelease");
    let e = hrs
        .patch(
            "postgres-pg1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": "false"}})),
        )
        .await
        .expect_err("a string where a boolean belongs");
    let kube::Error::Api(s) = e else {
        panic!("expected an API error, got {e:?}")
    };
    assert_eq!(s.code, 422);
    assert_eq!(
        s.message,
        "HelmRelease.helm.toolkit.fluxcd.io \"postgres-pg1\" is invalid: spec.suspend: Invalid value: \"string\": spec.suspend in body must be of type boolean: \"string\""
    );
}

fn pvc_to(name: &str, volume: &str) -> PersistentVolumeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "storageClassName": "local", "volumeName": volume}
    }))
    .unwrap()
}

fn pv_for(name: &str, claim: &str, claim_uid: &str) -> PersistentVolume {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "storageClassName": "local",
                 "persistentVolumeReclaimPolicy": "Retain", "csi": {"driver": "d", "volumeHandle": name},
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "a", "name": claim, "uid": claim_uid}}
    }))
    .unwrap()
}

fn phase_of_pvc(p: &PersistentVolumeClaim) -> String {
    p.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default()
}

fn phase_of_pv(p: &PersistentVolume) -> String {
    p.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_binder_binds_a_pre_bound_pair_at_once_and_releases_the_volume_of_a_deleted_claim() {
    let sim = start(SimConfig::default()).await;
    let client = sim.client().unwrap();
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "a");
    let pvs: Api<PersistentVolume> = Api::all(client);
    let claim = pvcs
        .create(&PostParams::default(), &pvc_to("data", "pv-1"))
        .await
        .expect("PVC");
    let claim_uid = claim.metadata.uid.clone().unwrap();
    pvs.create(&PostParams::default(), &pv_for("pv-1", "data", &claim_uid))
        .await
        .expect("PV");
    eventually("both Bound", || async {
        phase_of_pvc(&pvcs.get("data").await.unwrap()) == "Bound"
            && phase_of_pv(&pvs.get("pv-1").await.unwrap()) == "Bound"
    })
    .await;
    let bound = pvcs.get("data").await.unwrap();
    assert_eq!(
        bound
            .metadata
            .annotations
            .unwrap_or_default()
            .get("pv.kubernetes.io/bind-completed")
            .map(String::as_str),
        Some("yes")
    );
    let capacity = bound.status.and_then(|s| s.capacity).unwrap_or_default();
    assert_eq!(capacity.get("storage").map(|q| q.0.as_str()), Some("1Gi"));
    // The binder writes the PV when its claim goes: a writer holding the old version loses.
    let before = pvs.get("pv-1").await.unwrap();
    pvcs.delete("data", &DeleteParams::default())
        .await
        .expect("claim deleted");
    eventually("the PV is Released", || async {
        phase_of_pv(&pvs.get("pv-1").await.unwrap()) == "Released"
    })
    .await;
    let mut stale = before.clone();
    stale
        .spec
        .as_mut()
        .unwrap()
        .persistent_volume_reclaim_policy = Some("Delete".into());
    match pvs.replace("pv-1", &PostParams::default(), &stale).await {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (409, "Conflict")),
        other => panic!("expected a 409 after the binder's write, got {other:?}"),
    }
}

#[tokio::test]
async fn a_claim_whose_volume_was_repointed_waits_for_the_resync_with_a_failed_binding_event() {
    // The resync is long enough that the re-pointing below happens well inside it.
    let sim = start(SimConfig::default().with_pv_resync(Duration::from_secs(3))).await;
    let client = sim.client().unwrap();
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "a");
    let pvs: Api<PersistentVolume> = Api::all(client.clone());
    let events: Api<Event> = Api::namespaced(client, "a");
    let original = pvcs
        .create(&PostParams::default(), &pvc_to("vm-disk-data", "pv-1"))
        .await
        .unwrap();
    pvs.create(
        &PostParams::default(),
        &pv_for(
            "pv-1",
            "vm-disk-data",
            original.metadata.uid.as_deref().unwrap(),
        ),
    )
    .await
    .unwrap();
    eventually("the original is Bound", || async {
        phase_of_pvc(&pvcs.get("vm-disk-data").await.unwrap()) == "Bound"
    })
    .await;
    // The rename: the -orig PVC names the PV, which is still bound to the original.
    let orig = pvcs
        .create(
            &PostParams::default(),
            &pvc_to("vm-disk-data-orig-de3e", "pv-1"),
        )
        .await
        .unwrap();
    eventually("a FailedBinding event on the -orig PVC", || async {
        events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("FailedBinding")
                    && e.type_.as_deref() == Some("Warning")
                    && e.involved_object.name.as_deref() == Some("vm-disk-data-orig-de3e")
                    && e.message.as_deref()
                        == Some("volume \"pv-1\" already bound to a different claim.")
            })
    })
    .await;
    pvcs.delete("vm-disk-data", &DeleteParams::default())
        .await
        .unwrap();
    pvs.patch(
        "pv-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"claimRef": {"name": "vm-disk-data-orig-de3e", "uid": orig.metadata.uid}}})),
    )
    .await
    .unwrap();
    sim.controllers_idle().await;
    assert_eq!(
        phase_of_pvc(&pvcs.get("vm-disk-data-orig-de3e").await.unwrap()),
        "Pending",
        "re-pointing the PV does not bind the claim before its resync"
    );
    eventually("bound on the resync", || async {
        phase_of_pvc(&pvcs.get("vm-disk-data-orig-de3e").await.unwrap()) == "Bound"
    })
    .await;
}

#[tokio::test]
async fn writes_keep_managed_fields_per_manager_operation_and_subresource() {
    let sim = start(SimConfig::default()).await;
    let hrs = api(&sim, Kind::HelmRelease);
    hrs.create(
        &PostParams {
            field_manager: Some("helm-controller".into()),
            ..PostParams::default()
        },
        &obj(
            Kind::HelmRelease,
            "postgres-pg1",
            json!({"spec": {"interval": "5m", "values": {"replicas": 2}}}),
        ),
    )
    .await
    .unwrap();
    hrs.patch(
        "postgres-pg1",
        &PatchParams {
            field_manager: Some("restore-controller".into()),
            ..PatchParams::default()
        },
        &Patch::Merge(json!({"spec": {"suspend": true}})),
    )
    .await
    .unwrap();
    let after = hrs
        .patch_status(
            "postgres-pg1",
            &PatchParams {
                field_manager: Some("helm-controller".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"status": {"observedGeneration": 2}})),
        )
        .await
        .unwrap();
    let mf = after.metadata.managed_fields.unwrap_or_default();
    let entries: Vec<(String, String, String)> = mf
        .iter()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.subresource.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        vec![
            ("helm-controller".into(), "Update".into(), "".into()),
            ("restore-controller".into(), "Update".into(), "".into()),
            ("helm-controller".into(), "Update".into(), "status".into()),
        ]
    );
    let fields = |i: usize| {
        mf[i]
            .fields_v1
            .as_ref()
            .map(|f| f.0.clone())
            .unwrap_or_default()
    };
    assert_eq!(fields(1), json!({"f:spec": {"f:suspend": {}}}));
    assert_eq!(
        fields(0),
        json!({"f:spec": {"f:interval": {}, "f:values": {"f:replicas": {}}}})
    );
    assert_eq!(fields(2), json!({"f:status": {"f:observedGeneration": {}}}));
    for e in &mf {
        assert_eq!(e.fields_type.as_deref(), Some("FieldsV1"));
        assert_eq!(e.api_version.as_deref(), Some("helm.toolkit.fluxcd.io/v2"));
        assert!(e.time.is_some());
    }
}

#[tokio::test]
async fn the_servername_revert_shows_report_003s_managers_in_order() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let run = sim.play(Scenario::load("pg-servername-reverted").unwrap(), 20.0);
    let status = tokio::time::timeout(WAIT, run.finished())
        .await
        .expect("plays");
    assert!(status.errors.is_empty(), "{:?}", status.errors);
    let clusters: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "tenant-b", &ar(Kind::CnpgCluster));
    let c = clusters.get("postgres-pg1").await.unwrap();
    let mf = c.metadata.managed_fields.unwrap_or_default();
    let who: Vec<(&str, &str)> = mf
        .iter()
        .map(|e| {
            (
                e.manager.as_deref().unwrap_or(""),
                e.operation.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        who,
        vec![
            ("helm-controller", "Apply"),
            ("cozystack-cnpg-backup-driver", "Apply"),
            ("manager", "Update"),
        ]
    );
    // The driver owns the plugins list it wrote back; the chart keeps what it alone set.
    let fields = |i: usize| {
        mf[i]
            .fields_v1
            .as_ref()
            .map(|f| f.0.clone())
            .unwrap_or_default()
    };
    assert!(fields(1)["f:spec"].get("f:plugins").is_some());
    assert!(fields(0)["f:spec"].get("f:plugins").is_none());
    assert!(fields(0)["f:spec"].get("f:externalClusters").is_some());
    assert_eq!(mf[2].subresource.as_deref(), Some("status"));
    let t = |i: usize| mf[i].time.as_ref().map(|t| t.0).expect("time");
    assert!(t(0) <= t(1) && t(1) <= t(2), "in the order they wrote");
}

#[tokio::test]
async fn idle_controllers_do_not_wake_up() {
    let sim = start(SimConfig::default()).await;
    // A few thousand objects, as a loaded dump holds.
    let mut objs = Vec::new();
    for i in 0..1500 {
        objs.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": format!("p{i}"), "namespace": "a", "uid": format!("pvc-{i}")},
            "spec": {"volumeName": format!("pv{i}")}, "status": {"phase": "Bound"}}));
        objs.push(json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("pv{i}"), "uid": format!("pv-{i}")},
            "spec": {"claimRef": {"namespace": "a", "name": format!("p{i}"), "uid": format!("pvc-{i}")}},
            "status": {"phase": "Bound"}}));
    }
    assert!(sim.store().load_all(objs).iter().all(Result::is_ok));
    sim.controllers_idle().await;
    let before = sim.controller_wakeups();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let after = sim.controller_wakeups();
    eprintln!(
        "controller wake-ups over 2.5 s idle with 3000 objects: {}",
        after - before
    );
    assert_eq!(after, before, "no wake-up while nothing changes");
    // And a change is still seen.
    sim.store()
        .remove(Kind::PersistentVolumeClaim, "a", "p7", false)
        .expect("delete");
    let pvs: Api<PersistentVolume> = Api::all(sim.client().unwrap());
    eventually("the claim's PV is Released", || async {
        phase_of_pv(&pvs.get("pv7").await.unwrap()) == "Released"
    })
    .await;
    assert!(sim.controller_wakeups() > after);
}

#[tokio::test]
async fn server_side_apply_owns_its_fields_and_conflicts_with_other_managers() {
    let sim = start(SimConfig::default()).await;
    let clusters = api(&sim, Kind::CnpgCluster);
    let rendered = json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "postgres-pg1"},
        "spec": {"instances": 2, "plugins": [{"name": "barman-cloud.cloudnative-pg.io", "parameters": {"serverName": "postgres-pg1-restore-5f3c"}}]}});
    clusters
        .patch(
            "postgres-pg1",
            &PatchParams::apply("helm-controller"),
            &Patch::Apply(&rendered),
        )
        .await
        .expect("apply creates");
    let mut stale = rendered.clone();
    stale["spec"] = json!({"instances": 2, "plugins": [{"name": "barman-cloud.cloudnative-pg.io", "parameters": {"serverName": "postgres-pg1"}}]});
    let e = clusters
        .patch(
            "postgres-pg1",
            &PatchParams::apply("cozystack-cnpg-backup-driver"),
            &Patch::Apply(&stale),
        )
        .await
        .expect_err("the chart owns spec.plugins");
    let kube::Error::Api(s) = e else {
        panic!("expected an API error, got {e:?}")
    };
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        s.message,
        "Apply failed with 1 conflict: conflict with \"helm-controller\" using postgresql.cnpg.io/v1: .spec.plugins"
    );
    // Forced, as report 003's driver does: the old serverName is back, and the driver owns it.
    let c = clusters
        .patch(
            "postgres-pg1",
            &PatchParams::apply("cozystack-cnpg-backup-driver").force(),
            &Patch::Apply(&stale),
        )
        .await
        .expect("forced apply");
    assert_eq!(
        c.data["spec"]["plugins"][0]["parameters"]["serverName"],
        "postgres-pg1"
    );
    let mf = c.metadata.managed_fields.unwrap_or_default();
    let who: Vec<(&str, &str)> = mf
        .iter()
        .map(|e| {
            (
                e.manager.as_deref().unwrap_or(""),
                e.operation.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        who,
        vec![
            ("helm-controller", "Apply"),
            ("cozystack-cnpg-backup-driver", "Apply")
        ]
    );
    let helm = mf[0]
        .fields_v1
        .as_ref()
        .map(|f| f.0.clone())
        .unwrap_or_default();
    assert_eq!(
        helm,
        json!({"f:spec": {"f:instances": {}}}),
        "the chart lost spec.plugins"
    );
}
