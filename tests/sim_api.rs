//! The emulator against the real `kube::Client`: what restorewatch's live path relies on.

use std::collections::HashMap;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
    Preconditions, WatchEvent, WatchParams,
};
use kube::runtime::watcher;
use restorewatch::model::Kind;
use restorewatch::sim::{Policy, Rule, Sim, SimConfig, SimHandle};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

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

async fn start() -> SimHandle {
    start_with(SimConfig::default()).await
}

async fn start_with(config: SimConfig) -> SimHandle {
    let sim = Sim::start(config).await.expect("emulator starts");
    for ns in ["a", "b"] {
        sim.store()
            .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .expect("namespace");
    }
    sim
}

fn dynamic(kind: Kind, ns: &str, name: &str, rest: Value) -> DynamicObject {
    let i = kind.info();
    let mut v = json!({
        "apiVersion": i.api_version(),
        "kind": i.api_kind,
        "metadata": {"name": name, "namespace": ns},
    });
    if let (Some(o), Some(r)) = (v.as_object_mut(), rest.as_object()) {
        for (k, x) in r {
            if k == "metadata" {
                for (mk, mv) in x.as_object().into_iter().flatten() {
                    o["metadata"][mk] = mv.clone();
                }
            } else {
                o.insert(k.clone(), x.clone());
            }
        }
    }
    serde_json::from_value(v).expect("dynamic object")
}

fn pvc(name: &str, labels: Value) -> PersistentVolumeClaim {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "labels": labels},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }))
    .expect("pvc")
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Next item of a stream, or a clear failure after a bounded wait.
async fn next<S: Stream + Unpin>(s: &mut S, what: &str) -> S::Item {
    match tokio::time::timeout(WAIT, s.next()).await {
        Ok(Some(x)) => x,
        Ok(None) => panic!("stream ended while waiting for {what}"),
        Err(_) => panic!("timed out after {WAIT:?} waiting for {what}"),
    }
}

fn name_of(ev: &WatchEvent<DynamicObject>) -> (String, String) {
    let (t, o) = match ev {
        WatchEvent::Added(o) => ("ADDED", o),
        WatchEvent::Modified(o) => ("MODIFIED", o),
        WatchEvent::Deleted(o) => ("DELETED", o),
        WatchEvent::Bookmark(_) => return ("BOOKMARK".into(), String::new()),
        WatchEvent::Error(e) => return ("ERROR".into(), e.message.clone()),
    };
    (t.to_string(), o.metadata.name.clone().unwrap_or_default())
}

#[tokio::test]
async fn list_with_selectors_and_pages() {
    let sim = start().await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    for (n, tier) in [("p1", "db"), ("p2", "db"), ("p3", "web"), ("p4", "cache")] {
        pvcs.create(
            &PostParams::default(),
            &pvc(n, json!({"tier": tier, "app": "x"})),
        )
        .await
        .unwrap();
    }
    let other: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "b");
    other
        .create(&PostParams::default(), &pvc("p9", json!({"tier": "db"})))
        .await
        .unwrap();

    let names = |l: &kube::core::ObjectList<PersistentVolumeClaim>| -> Vec<String> {
        l.items
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect()
    };
    let l = pvcs
        .list(&ListParams::default().labels("tier=db"))
        .await
        .unwrap();
    assert_eq!(names(&l), ["p1", "p2"]);
    let l = pvcs
        .list(&ListParams::default().labels("tier in (web,cache),app"))
        .await
        .unwrap();
    assert_eq!(names(&l), ["p3", "p4"]);
    let l = pvcs
        .list(&ListParams::default().labels("tier!=db"))
        .await
        .unwrap();
    assert_eq!(names(&l), ["p3", "p4"]);
    let l = pvcs
        .list(&ListParams::default().labels("tier notin (db),!missing"))
        .await
        .unwrap();
    assert_eq!(names(&l), ["p3", "p4"]);
    let l = pvcs
        .list(&ListParams::default().fields("metadata.name=p3"))
        .await
        .unwrap();
    assert_eq!(names(&l), ["p3"]);
    assert_eq!(
        l.metadata.resource_version.as_deref(),
        Some(sim.store().current_rv().to_string().as_str())
    );

    let all: Api<PersistentVolumeClaim> = Api::all(sim.client().unwrap());
    let page1 = all.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(names(&page1), ["p1", "p2"]);
    assert_eq!(page1.metadata.remaining_item_count, Some(3));
    let token = page1.metadata.continue_.clone().expect("continue token");
    let page2 = all
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&page2), ["p3", "p4"]);
    let token = page2
        .metadata
        .continue_
        .clone()
        .expect("second continue token");
    let page3 = all
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&page3), ["p9"]);
    assert!(page3.metadata.continue_.as_deref().unwrap_or("").is_empty());
    let first = &page1.items[0];
    assert_eq!(
        first.metadata.finalizers.as_deref(),
        Some(&["kubernetes.io/pvc-protection".to_string()][..])
    );
    assert_eq!(
        first.spec.as_ref().and_then(|s| s.volume_mode.as_deref()),
        Some("Filesystem")
    );
    assert_eq!(
        first.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );

    // Paged with a selector: every match exactly once, a token while any match is left, and
    // no count of the rest (a real server counts it only when nothing narrows the list).
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().labels("tier=db").limit(1);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = all.list(&lp).await.unwrap();
        assert_eq!(page.metadata.remaining_item_count, None);
        seen.extend(names(&page));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["p1", "p2", "p9"]);
    let (code, body) = raw(
        &sim,
        "GET",
        "/api/v1/persistentvolumeclaims?labelSelector=tier%3Dweb",
        "",
        "",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        (body["kind"].as_str(), body["apiVersion"].as_str()),
        (Some("PersistentVolumeClaimList"), Some("v1"))
    );
    assert_eq!(body["items"][0]["metadata"]["name"], "p3");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1));

    let bad = all
        .list(&ListParams::default().fields("spec.volumeName=x"))
        .await
        .unwrap_err();
    assert_eq!(api_error(bad).code, 400);
}

#[tokio::test]
async fn watch_from_a_version_then_resume_after_a_drop() {
    let sim = start().await;
    let rjs: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::RestoreJob));
    let rv = sim.store().current_rv().to_string();
    rjs.create(
        &PostParams::default(),
        &dynamic(
            Kind::RestoreJob,
            "a",
            "r1",
            json!({"spec": {"backupRef": {"name": "b"}}}),
        ),
    )
    .await
    .unwrap();
    let mut w = rjs
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        name_of(&next(&mut w, "ADDED r1").await.unwrap()),
        ("ADDED".into(), "r1".into())
    );
    rjs.patch(
        "r1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})),
    )
    .await
    .unwrap();
    let ev = next(&mut w, "MODIFIED r1").await.unwrap();
    assert_eq!(name_of(&ev), ("MODIFIED".into(), "r1".into()));
    let last_rv = match &ev {
        WatchEvent::Modified(o) => o.metadata.resource_version.clone().unwrap(),
        _ => unreachable!(),
    };
    rjs.delete("r1", &DeleteParams::default()).await.unwrap();
    assert_eq!(
        name_of(&next(&mut w, "DELETED r1").await.unwrap()),
        ("DELETED".into(), "r1".into())
    );

    // The stream is dropped by the server; changes made meanwhile are replayed on resume.
    sim.faults().drop_watches();
    assert!(
        tokio::time::timeout(WAIT, w.next())
            .await
            .expect("stream ends after the drop")
            .is_none()
    );
    rjs.create(
        &PostParams::default(),
        &dynamic(Kind::RestoreJob, "a", "r2", json!({})),
    )
    .await
    .unwrap();
    let mut w = rjs
        .watch(&WatchParams::default(), &last_rv)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        name_of(&next(&mut w, "replayed DELETED r1").await.unwrap()),
        ("DELETED".into(), "r1".into())
    );
    assert_eq!(
        name_of(&next(&mut w, "replayed ADDED r2").await.unwrap()),
        ("ADDED".into(), "r2".into())
    );
}

#[tokio::test]
async fn watch_with_selector_sends_deleted_when_an_object_stops_matching() {
    let sim = start().await;
    let pvcs: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::PersistentVolumeClaim));
    let mut w = pvcs
        .watch(&WatchParams::default().labels("keep=yes"), "0")
        .await
        .unwrap()
        .boxed();
    let p: DynamicObject =
        serde_json::from_value(serde_json::to_value(pvc("p1", json!({"keep": "yes"}))).unwrap())
            .unwrap();
    pvcs.create(&PostParams::default(), &p).await.unwrap();
    assert_eq!(
        name_of(&next(&mut w, "ADDED p1").await.unwrap()),
        ("ADDED".into(), "p1".into())
    );
    pvcs.patch(
        "p1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"keep": "no"}}})),
    )
    .await
    .unwrap();
    assert_eq!(
        name_of(&next(&mut w, "DELETED p1").await.unwrap()),
        ("DELETED".into(), "p1".into())
    );
}

#[tokio::test]
async fn compacted_version_answers_410_and_watcher_relists() {
    let sim = start_with(SimConfig {
        bookmark_interval: Duration::from_millis(200),
        ..SimConfig::default()
    })
    .await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::HelmRelease));
    let old = sim.store().current_rv().to_string();
    api.create(
        &PostParams::default(),
        &dynamic(
            Kind::HelmRelease,
            "a",
            "h1",
            json!({"spec": {"interval": "5m"}}),
        ),
    )
    .await
    .unwrap();
    sim.store().compact();
    let mut w = api
        .watch(&WatchParams::default(), &old)
        .await
        .unwrap()
        .boxed();
    match next(&mut w, "410 ERROR event").await.unwrap() {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }

    // kube-runtime's watcher: list, watch; a 410 on resume makes it list again.
    let mut events = watcher(api.clone(), watcher::Config::default()).boxed();
    let mut inits = 0;
    let saw = |ev: &watcher::Event<DynamicObject>, inits: &mut i32| {
        if matches!(ev, watcher::Event::Init) {
            *inits += 1;
        }
    };
    loop {
        let ev = next(&mut events, "initial list").await.unwrap();
        saw(&ev, &mut inits);
        if matches!(ev, watcher::Event::InitDone) {
            break;
        }
    }
    sim.faults().set_expire_watch(true);
    sim.faults().drop_watches();
    loop {
        let ev = next(&mut events, "a relist after 410").await;
        if let Ok(ev) = ev {
            saw(&ev, &mut inits);
            if inits >= 2 {
                break;
            }
        }
    }
    sim.faults().set_expire_watch(false);
    api.create(
        &PostParams::default(),
        &dynamic(
            Kind::HelmRelease,
            "a",
            "h2",
            json!({"spec": {"interval": "5m"}}),
        ),
    )
    .await
    .unwrap();
    loop {
        if let Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) =
            next(&mut events, "h2 after relist").await
            && o.metadata.name.as_deref() == Some("h2")
        {
            break;
        }
    }
}

#[tokio::test]
async fn bookmarks_carry_the_current_version() {
    let sim = start_with(SimConfig {
        bookmark_interval: Duration::from_millis(50),
        ..SimConfig::default()
    })
    .await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::DataVolume));
    let rv = sim.store().current_rv();
    let mut w = api
        .watch(&WatchParams::default(), &rv.to_string())
        .await
        .unwrap()
        .boxed();
    match next(&mut w, "a bookmark").await.unwrap() {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, rv.to_string()),
        other => panic!("expected a bookmark, got {other:?}"),
    }
    // timeoutSeconds ends the stream.
    let mut w = api
        .watch(&WatchParams::default().timeout(1), &rv.to_string())
        .await
        .unwrap()
        .boxed();
    let drained = tokio::time::timeout(WAIT, async { while w.next().await.is_some() {} }).await;
    assert!(drained.is_ok(), "watch did not end after timeoutSeconds=1");
}

#[tokio::test]
async fn update_conflict_and_generation() {
    let sim = start().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::RestoreJob));
    let created = api
        .create(
            &PostParams::default(),
            &dynamic(
                Kind::RestoreJob,
                "a",
                "r1",
                json!({"spec": {"backupRef": {"name": "b"}, "options": {"a": 1}}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    let mut fresh = created.clone();
    fresh.data["spec"]["options"]["a"] = json!(2);
    let updated = api
        .replace("r1", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_eq!(updated.metadata.generation, Some(2));
    let mut stale = created.clone();
    stale.data["spec"]["options"]["a"] = json!(3);
    let e = api_error(
        api.replace("r1", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 409);
    assert_eq!(e.reason, "Conflict");
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on restorejobs.backups.cozystack.io \"r1\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let p = pvcs
        .create(&PostParams::default(), &pvc("p1", json!({})))
        .await
        .unwrap();
    pvcs.patch(
        "p1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
    )
    .await
    .unwrap();
    let e = api_error(
        pvcs.replace("p1", &PostParams::default(), &p)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on persistentvolumeclaims \"p1\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let e = api_error(
        pvcs.create(&PostParams::default(), &pvc("p1", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.code, e.reason.as_str(), e.message.as_str()),
        (
            409,
            "AlreadyExists",
            "persistentvolumeclaims \"p1\" already exists"
        )
    );
    let e = api_error(pvcs.get("nope").await.unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "persistentvolumeclaims \"nope\" not found")
    );
    let mut with_rv = pvc("p2", json!({}));
    with_rv.metadata.resource_version = Some("5".into());
    let e = api_error(
        pvcs.create(&PostParams::default(), &with_rv)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            500,
            "resourceVersion should not be set on objects to be created"
        )
    );
}

#[tokio::test]
async fn patches_merge_json_and_strategic() {
    let sim = start().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::CnpgCluster));
    let plugins = json!({"spec": {"instances": 1, "plugins": [{"name": "barman-cloud.cloudnative-pg.io", "parameters": {"serverName": "old"}}]}});
    api.create(
        &PostParams::default(),
        &dynamic(Kind::CnpgCluster, "a", "c", plugins),
    )
    .await
    .unwrap();
    let p = |v: Value| -> json_patch::Patch { serde_json::from_value(v).unwrap() };
    let ok = api
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Json::<()>(p(json!([
                {"op": "test", "path": "/spec/plugins/0/parameters/serverName", "value": "old"},
                {"op": "replace", "path": "/spec/plugins/0/parameters/serverName", "value": "new"},
            ]))),
        )
        .await
        .unwrap();
    assert_eq!(
        ok.data["spec"]["plugins"][0]["parameters"]["serverName"],
        "new"
    );
    let e = api_error(
        api.patch("c", &PatchParams::default(), &Patch::Json::<()>(p(json!([
            {"op": "test", "path": "/spec/plugins/0/parameters/serverName", "value": "old"},
            {"op": "replace", "path": "/spec/plugins/0/parameters/serverName", "value": "other"},
        ]))))
        .await
        .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        e.message,
        "the server rejected our request due to an error in our request"
    );
    let merged = api
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"instances": 2}, "metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.data["spec"]["instances"], 2);
    assert_eq!(
        merged.data["spec"]["plugins"][0]["parameters"]["serverName"],
        "new"
    );
    let e = api_error(
        api.patch("c", &PatchParams::default(), &Patch::Strategic(json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        e.code, 415,
        "strategic merge patch is refused for CRDs, as a real server does"
    );
    // Server-side apply is served (tests/sim_controllers.rs); a configuration without
    // apiVersion and kind is a bad request, as on a real server.
    let e = api_error(
        api.patch("c", &PatchParams::apply("t"), &Patch::Apply(json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);

    // Strategic merge on a core kind: finalizers merge as a set, ownerReferences by uid.
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    pvcs.create(&PostParams::default(), &pvc("p1", json!({})))
        .await
        .unwrap();
    let out = pvcs
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {
            "finalizers": ["example.com/keep"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u1"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(
        out.metadata.finalizers.unwrap(),
        ["kubernetes.io/pvc-protection", "example.com/keep"]
    );
    let out = pvcs
        .patch(
            "p1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {
            "$deleteFromPrimitiveList/finalizers": ["example.com/keep"],
            "ownerReferences": [{"uid": "u1", "$patch": "delete"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(
        out.metadata.finalizers.unwrap(),
        ["kubernetes.io/pvc-protection"]
    );
    assert!(out.metadata.owner_references.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn generate_name_and_delete_preconditions() {
    let sim = start().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::VeleroRestore));
    let mut o = dynamic(
        Kind::VeleroRestore,
        "a",
        "",
        json!({"metadata": {"generateName": "a.rj-"}, "status": {"phase": "New"}}),
    );
    o.metadata.name = None;
    let made = api.create(&PostParams::default(), &o).await.unwrap();
    let name = made.metadata.name.clone().unwrap();
    assert!(
        name.starts_with("a.rj-") && name.len() == "a.rj-".len() + 5,
        "{name}"
    );
    assert_eq!(
        made.data["status"]["phase"], "New",
        "kinds without a status subresource keep status on create"
    );

    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let p = pvcs
        .create(&PostParams::default(), &pvc("p1", json!({})))
        .await
        .unwrap();
    let uid = p.metadata.uid.clone().unwrap();
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("wrong".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let e = api_error(pvcs.delete("p1", &dp).await.unwrap_err());
    assert_eq!(e.code, 409);
    assert_eq!(
        e.message,
        format!(
            "Operation cannot be fulfilled on PersistentVolumeClaim \"p1\": the UID in the precondition (wrong) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let sim = start_with(SimConfig {
        controller_manager: false,
        ..SimConfig::default()
    })
    .await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let p = pvcs
        .create(&PostParams::default(), &pvc("p1", json!({})))
        .await
        .unwrap();
    let uid = p.metadata.uid.clone().unwrap();
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let out = pvcs.delete("p1", &dp).await.unwrap();
    let held = out.left().expect("a held object comes back as the object");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(
        pvcs.get("p1")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    pvcs.patch(
        "p1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_error(pvcs.get("p1").await.unwrap_err()).code, 404);

    // Without finalizers a core kind answers a Status, a CRD the object.
    let pvs: Api<PersistentVolume> = Api::all(sim.client().unwrap());
    let pv: PersistentVolume = serde_json::from_value(json!({"metadata": {"name": "pv1", "finalizers": []}, "spec": {"capacity": {"storage": "1Gi"}}})).unwrap();
    pvs.create(&PostParams::default(), &pv).await.unwrap();
    let got = pvs.get("pv1").await.unwrap();
    assert_eq!(
        got.metadata.finalizers.as_deref(),
        Some(&["kubernetes.io/pv-protection".to_string()][..])
    );

    // The simulated controller manager releases protected objects.
    sim.set_controller_manager(true);
    pvcs.create(&PostParams::default(), &pvc("p2", json!({})))
        .await
        .unwrap();
    pvcs.delete("p2", &DeleteParams::default()).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    while pvcs.get_opt("p2").await.unwrap().is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "controller manager did not remove pvc-protection"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn status_subresource_semantics() {
    let sim = start().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::RestoreJob));
    let made = api
        .create(
            &PostParams::default(),
            &dynamic(
                Kind::RestoreJob,
                "a",
                "r1",
                json!({"spec": {"backupRef": {"name": "b"}}, "status": {"phase": "Running"}}),
            ),
        )
        .await
        .unwrap();
    assert!(
        made.data.get("status").is_none(),
        "status is dropped on create"
    );
    let p = api
        .patch(
            "r1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Failed"}})),
        )
        .await
        .unwrap();
    assert!(
        p.data.get("status").is_none(),
        "status through the main resource is ignored"
    );
    let s = api
        .patch_status(
            "r1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}, "spec": {"x": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(s.data["status"]["phase"], "Running");
    assert!(
        s.data["spec"].get("x").is_none(),
        "the status subresource changes only status"
    );
    assert_eq!(s.metadata.generation, Some(1));
    let got = api.get_status("r1").await.unwrap();
    assert_eq!(got.data["status"]["phase"], "Running");
    let backups: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::Backup));
    let b = backups
        .create(
            &PostParams::default(),
            &dynamic(
                Kind::Backup,
                "a",
                "b1",
                json!({"spec": {"applicationRef": {"kind": "VMInstance", "name": "vm1"}, "strategyRef": {"kind": "Velero", "name": "v"}, "takenAt": "2026-01-01T00:00:00Z"}, "status": {"phase": "Ready"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(b.data["status"]["phase"], "Ready");
}

#[tokio::test]
async fn tokens_forbidden_and_access_reviews() {
    let mut tokens = HashMap::new();
    tokens.insert("admin-token".to_string(), Policy::builtin("admin").unwrap());
    tokens.insert(
        "viewer-token".to_string(),
        Policy {
            user: "viewer".into(),
            rules: vec![Rule {
                verbs: vec!["get".into(), "list".into(), "watch".into()],
                resources: vec!["*".into()],
                namespaces: vec![],
            }],
        },
    );
    let sim = start_with(SimConfig {
        tokens,
        ..SimConfig::default()
    })
    .await;
    let admin: Api<PersistentVolumeClaim> =
        Api::namespaced(sim.client_with_token("admin-token").unwrap(), "a");
    admin
        .create(&PostParams::default(), &pvc("x", json!({})))
        .await
        .unwrap();
    let viewer: Api<PersistentVolumeClaim> =
        Api::namespaced(sim.client_with_token("viewer-token").unwrap(), "a");
    assert_eq!(
        viewer
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let e = api_error(
        viewer
            .delete("x", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        e.message,
        "persistentvolumeclaims \"x\" is forbidden: User \"viewer\" cannot delete resource \"persistentvolumeclaims\" in API group \"\" in the namespace \"a\""
    );
    let bad: Api<PersistentVolumeClaim> =
        Api::namespaced(sim.client_with_token("nope").unwrap(), "a");
    assert_eq!(
        api_error(bad.list(&ListParams::default()).await.unwrap_err()).code,
        401
    );
    let anonymous: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    assert_eq!(
        api_error(anonymous.list(&ListParams::default()).await.unwrap_err()).code,
        401
    );

    let review = |verb: &str| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("a".into()),
                verb: Some(verb.into()),
                resource: Some("persistentvolumeclaims".into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let ssar: Api<SelfSubjectAccessReview> =
        Api::all(sim.client_with_token("viewer-token").unwrap());
    let yes = ssar
        .create(&PostParams::default(), &review("list"))
        .await
        .unwrap();
    assert!(yes.status.unwrap().allowed);
    let no = ssar
        .create(&PostParams::default(), &review("delete"))
        .await
        .unwrap();
    assert!(!no.status.unwrap().allowed);
}

#[tokio::test]
async fn injected_500_and_429_reach_the_client() {
    let sim = start().await;
    let mut config = sim.kube_config(None).unwrap();
    // Without kube's default retry layer the 429 itself is visible.
    config.default_retry = false;
    let raw: Api<PersistentVolumeClaim> =
        Api::namespaced(kube::Client::try_from(config).unwrap(), "a");
    sim.faults().set_error_rate(1.0);
    let e = api_error(raw.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(e.code, 500);
    sim.faults().update(|s| {
        s.error_rate = 0.0;
        s.throttle_rate = 1.0;
    });
    let e = api_error(raw.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (429, "TooManyRequests"));
    // With the default client, half the requests throttled: retries get through.
    sim.faults().update(|s| {
        s.throttle_rate = 0.5;
        s.retry_after = 0;
    });
    let retrying: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    for _ in 0..5 {
        retrying
            .list(&ListParams::default())
            .await
            .expect("retried past 429s");
    }
    sim.faults().clear();
    assert!(raw.list(&ListParams::default()).await.is_ok());
}

#[tokio::test]
async fn written_kubeconfig_works_for_kube_with_a_token() {
    let mut tokens = HashMap::new();
    tokens.insert("t0k".to_string(), Policy::builtin("readonly").unwrap());
    let sim = start_with(SimConfig {
        tokens,
        ..SimConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&path, Some("t0k")).unwrap();
    let kc = kube::config::Kubeconfig::read_from(&path).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("restorewatch-sim"));
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client, "a");
    assert!(
        pvcs.list(&ListParams::default()).await.is_ok(),
        "the token from the kubeconfig is sent"
    );
    let e = api_error(
        pvcs.create(&PostParams::default(), &pvc("x", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 403);
    let v = sim.client().unwrap().apiserver_version().await.unwrap();
    assert_eq!(v.major, "1");
}

/// One raw HTTP/1.1 exchange: (status code, body).
async fn raw(
    sim: &SimHandle,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", sim.port()))
        .await
        .unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(WAIT, s.read_to_string(&mut out))
        .await
        .expect("answer")
        .unwrap();
    let code = out.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("");
    (
        code,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    )
}

#[tokio::test]
async fn odd_requests_get_status_bodies() {
    let sim = start().await;
    let (code, body) = raw(&sim, "GET", "/apis/nope/v1/things", "", "").await;
    assert_eq!(code, 404);
    assert_eq!(
        body["message"],
        "the server could not find the requested resource"
    );
    assert_eq!(body["kind"], "Status");
    let (code, body) = raw(
        &sim,
        "POST",
        "/api/v1/namespaces/a/persistentvolumeclaims",
        "application/json",
        "{not json",
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let (code, _) = raw(
        &sim,
        "POST",
        "/api/v1/namespaces/a/persistentvolumeclaims",
        "application/json",
        "[1,2]",
    )
    .await;
    assert_eq!(code, 400);
    sim.store()
        .put(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p", "namespace": "a"}}))
        .unwrap();
    let (code, body) = raw(
        &sim,
        "PATCH",
        "/api/v1/namespaces/a/persistentvolumeclaims/p",
        "text/plain",
        "{}",
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (415, Some("415: Unsupported Media Type"))
    );
    let (code, body) = raw(
        &sim,
        "GET",
        "/api/v1/namespaces/zz/persistentvolumeclaims/p",
        "",
        "",
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (404, Some("persistentvolumeclaims \"p\" not found"))
    );
    let (code, body) = raw(
        &sim,
        "POST",
        "/api/v1/namespaces/zz/persistentvolumeclaims",
        "application/json",
        r#"{"metadata":{"name":"q"}}"#,
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (404, Some("namespaces \"zz\" not found"))
    );
    let (code, body) = raw(&sim, "GET", "/apis/velero.io/v1", "", "").await;
    assert_eq!(
        (code, body["kind"].as_str()),
        (200, Some("APIResourceList"))
    );
    let (code, body) = raw(&sim, "GET", "/version", "", "").await;
    assert_eq!((code, body["major"].as_str()), (200, Some("1")));
    let (code, body) = raw(
        &sim,
        "GET",
        "/api/v1/namespaces/a/persistentvolumeclaims?watch=1&resourceVersion=abc",
        "",
        "",
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
}

#[tokio::test]
async fn loaded_dumps_keep_versions_and_uids() {
    let sim = start().await;
    let dump = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "d1", "namespace": "a", "uid": "u-1", "resourceVersion": "987654",
                      "creationTimestamp": "2020-01-01T00:00:00Z"},
         "status": {"phase": "Bound"}}]}"#;
    for obj in restorewatch::sim::load::parse_objects(dump).unwrap() {
        sim.store().load(obj).unwrap();
    }
    assert!(sim.store().current_rv() >= 987_654);
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let d1 = pvcs.get("d1").await.unwrap();
    assert_eq!(d1.metadata.resource_version.as_deref(), Some("987654"));
    assert_eq!(d1.metadata.uid.as_deref(), Some("u-1"));
    assert_eq!(d1.status.and_then(|s| s.phase).as_deref(), Some("Bound"));
    let fresh = pvcs
        .create(&PostParams::default(), &pvc("d2", json!({})))
        .await
        .unwrap();
    let rv: u64 = fresh.metadata.resource_version.unwrap().parse().unwrap();
    assert!(rv > 987_654);
}

#[tokio::test]
async fn freeze_holds_requests_and_drop_after_n_events_ends_watches() {
    let sim = start().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(sim.client().unwrap(), "a", &ar(Kind::DataDownload));
    sim.faults().freeze(true);
    let pending = tokio::spawn({
        let api = api.clone();
        async move {
            api.list(&ListParams::default())
                .await
                .map(|l| l.items.len())
        }
    });
    tokio::task::yield_now().await;
    assert!(!pending.is_finished(), "a frozen server does not answer");
    sim.faults().freeze(false);
    assert_eq!(
        tokio::time::timeout(WAIT, pending)
            .await
            .expect("answered after unfreeze")
            .unwrap()
            .unwrap(),
        0
    );

    sim.faults().set_drop_watch_after(Some(2));
    let mut w = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    for n in ["d1", "d2", "d3"] {
        api.create(
            &PostParams::default(),
            &dynamic(Kind::DataDownload, "a", n, json!({"spec": {"backupStorageLocation": "default", "operationTimeout": "10m0s", "snapshotID": "s", "sourceNamespace": "a", "targetVolume": {"namespace": "a", "pvc": n, "pv": ""}}})),
        )
        .await
        .unwrap();
    }
    assert_eq!(name_of(&next(&mut w, "d1").await.unwrap()).1, "d1");
    assert_eq!(name_of(&next(&mut w, "d2").await.unwrap()).1, "d2");
    assert!(
        tokio::time::timeout(WAIT, w.next())
            .await
            .expect("stream ends after 2 events")
            .is_none()
    );
}

#[tokio::test]
async fn the_backup_controller_deployment_is_served_by_get_as_a_real_server_answers() {
    use k8s_openapi::api::apps::v1::Deployment;
    let sim = start().await;
    let api: Api<Deployment> = Api::namespaced(sim.client().unwrap(), "cozy-backup-controller");
    // Absent: the real server's 404 Status, as kube decodes it.
    let e = match api.get("backup-controller").await {
        Err(kube::Error::Api(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(
        e.message,
        "deployments.apps \"backup-controller\" not found"
    );
    let (_, body) = raw(
        &sim,
        "GET",
        "/apis/apps/v1/namespaces/cozy-backup-controller/deployments/backup-controller",
        "",
        "",
    )
    .await;
    assert_eq!(
        body["details"],
        json!({"name": "backup-controller", "group": "apps", "kind": "deployments"})
    );
    // Present: the object, typed.
    sim.deployments()
        .put(
            json!({"metadata": {"name": "backup-controller", "namespace": "cozy-backup-controller"},
            "spec": {"selector": {"matchLabels": {"app": "b"}},
                     "template": {"spec": {"containers": [{"name": "m", "image": "img:v1"}]}}}}),
        )
        .unwrap();
    let d = api.get("backup-controller").await.unwrap();
    let image = d
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|s| s.containers.into_iter().next())
        .and_then(|c| c.image);
    assert_eq!(image.as_deref(), Some("img:v1"));
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    // No writes: the emulator serves it only to be read.
    let (code, _) = raw(
        &sim,
        "DELETE",
        "/apis/apps/v1/namespaces/cozy-backup-controller/deployments/backup-controller",
        "",
        "",
    )
    .await;
    assert_eq!(code, 405);
    // A user without the grant gets the real server's 403 wording.
    let sim = start_with(SimConfig {
        tokens: HashMap::from([(
            "t".to_string(),
            Policy {
                user: "u".into(),
                rules: vec![],
            },
        )]),
        ..SimConfig::default()
    })
    .await;
    let api: Api<Deployment> = Api::namespaced(
        sim.client_with_token("t").unwrap(),
        "cozy-backup-controller",
    );
    let e = match api.get("backup-controller").await {
        Err(kube::Error::Api(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        "deployments.apps \"backup-controller\" is forbidden: User \"u\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"cozy-backup-controller\""
    );
}
