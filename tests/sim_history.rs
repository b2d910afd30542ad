//! The emulator's watch history is bounded by bytes as well as by count: many large patches
//! leave it within its budget, and a watch resuming from a version it dropped gets 410 Gone,
//! as from a real API server after compaction.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use restorewatch::sim::{Sim, SimConfig};
use serde_json::json;

const BUDGET: usize = 4 << 20;
const WAIT: Duration = Duration::from_secs(30);

/// Issue 18, point 11.
#[tokio::test]
async fn large_patches_stay_within_the_history_budget_and_old_versions_expire() {
    let sim = Sim::start(SimConfig {
        history_bytes: BUDGET,
        ..SimConfig::default()
    })
    .await
    .expect("emulator starts");
    sim.store()
        .put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
        .expect("namespace");
    let api: Api<PersistentVolumeClaim> = Api::namespaced(sim.client().unwrap(), "a");
    let pvc: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "big"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &pvc).await.unwrap();
    let first_rv = created.metadata.resource_version.unwrap();
    let mut last_rv = first_rv.clone();
    let mut before_last = first_rv.clone();
    // 120 versions of a 256 KiB annotation: ~60 MiB of history when only counted.
    for i in 0..120 {
        let note = format!("{i:04}").repeat(64 << 10);
        let p = api
            .patch(
                "big",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {"note": note}}})),
            )
            .await
            .unwrap();
        before_last = std::mem::replace(&mut last_rv, p.metadata.resource_version.unwrap());
    }
    let held = sim.store().history_bytes();
    assert!(
        held <= BUDGET,
        "the history holds {held} bytes, over its budget of {BUDGET}"
    );
    assert!(held > 0, "the newest changes are still kept");

    let mut old = api
        .watch(&WatchParams::default(), &first_rv)
        .await
        .unwrap()
        .boxed();
    match tokio::time::timeout(WAIT, old.next()).await {
        Ok(Some(Ok(WatchEvent::Error(e)))) => {
            assert_eq!((e.code, e.reason.as_str()), (410, "Expired"))
        }
        other => panic!("a resume from a compacted version: want 410, got {other:?}"),
    }

    let mut recent = api
        .watch(&WatchParams::default(), &before_last)
        .await
        .unwrap()
        .boxed();
    match tokio::time::timeout(WAIT, recent.next()).await {
        Ok(Some(Ok(WatchEvent::Modified(o)))) => {
            assert_eq!(o.metadata.resource_version, Some(last_rv));
        }
        other => panic!("a resume from a kept version replays the change, got {other:?}"),
    }
}
