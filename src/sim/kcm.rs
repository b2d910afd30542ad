//! The part of kube-controller-manager restorewatch depends on: the PVC and PV protection
//! controllers, which remove `kubernetes.io/pvc-protection` / `pv-protection` from objects being
//! deleted once nothing uses them. Without it, deleted PVCs would stay Terminating forever.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::model::Kind;
use crate::sim::api_ops::{finish_write, key_for, meta_str};
use crate::sim::selectors::Filter;
use crate::sim::store::Store;

pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

fn finalizer_for(kind: Kind) -> &'static str {
    if kind == Kind::PersistentVolume {
        PV_PROTECTION
    } else {
        PVC_PROTECTION
    }
}

fn has_finalizer(obj: &Value, f: &str) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|x| x == f))
}

/// A running pod mounting the claim keeps the finalizer, as in the real controller.
fn pvc_in_use(store: &Store, pvc: &Value) -> bool {
    let ns = meta_str(pvc, "namespace").to_string();
    let name = meta_str(pvc, "name");
    let filter = Filter {
        namespace: Some(ns),
        ..Filter::default()
    };
    store.all(Kind::Pod, &filter).iter().any(|pod| {
        let phase = pod
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        let done = matches!(phase, "Succeeded" | "Failed");
        !done
            && pod
                .pointer("/spec/volumes")
                .and_then(Value::as_array)
                .is_some_and(|vs| {
                    vs.iter().any(|v| {
                        v.pointer("/persistentVolumeClaim/claimName")
                            .and_then(Value::as_str)
                            == Some(name)
                    })
                })
    })
}

fn releasable(store: &Store, kind: Kind, obj: &Value) -> bool {
    if meta_str(obj, "deletionTimestamp").is_empty() || !has_finalizer(obj, finalizer_for(kind)) {
        return false;
    }
    match kind {
        Kind::PersistentVolume => {
            obj.pointer("/status/phase").and_then(Value::as_str) != Some("Bound")
        }
        _ => !pvc_in_use(store, obj),
    }
}

/// Removes the protection finalizer from this very object (same uid, still being deleted).
fn release(store: &Store, kind: Kind, ns: &str, name: &str, uid: &str) {
    let key = key_for(kind, ns, name);
    store.transact(|txn| {
        let Some(current) = txn.get(kind, &key).cloned() else {
            return;
        };
        if meta_str(&current, "uid") != uid || meta_str(&current, "deletionTimestamp").is_empty() {
            return;
        }
        let mut next = current.clone();
        if let Some(list) = next
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|f| f != finalizer_for(kind));
        }
        finish_write(txn, kind, &key, &current, next);
    });
}

fn sweep(store: &Store, delay: Duration, enabled: &Arc<AtomicBool>) {
    for kind in [Kind::PersistentVolumeClaim, Kind::PersistentVolume] {
        for obj in store.all(kind, &Filter::default()) {
            if releasable(store, kind, &obj) {
                let (store, enabled) = (store.clone(), enabled.clone());
                let ns = meta_str(&obj, "namespace").to_string();
                let name = meta_str(&obj, "name").to_string();
                let uid = meta_str(&obj, "uid").to_string();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if enabled.load(Ordering::Relaxed) {
                        release(&store, kind, &ns, &name, &uid);
                    }
                });
            }
        }
    }
}

/// Runs until aborted: reacts to PVC/PV changes, and sweeps once a second so objects deleted
/// while it was off (or events it lagged behind on) are handled too.
pub async fn run(store: Store, enabled: Arc<AtomicBool>, delay: Duration) {
    let mut pvcs = store.changes(Kind::PersistentVolumeClaim);
    let mut pvs = store.changes(Kind::PersistentVolume);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = pvcs.recv() => {}
            _ = pvs.recv() => {}
            _ = tick.tick() => {}
        }
        if enabled.load(Ordering::Relaxed) {
            // Releases scheduled twice are harmless: `release` re-checks under the lock.
            sweep(&store, delay, &enabled);
        }
    }
}
