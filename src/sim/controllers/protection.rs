//! The PVC and PV protection controllers: a deleted PVC keeps `kubernetes.io/pvc-protection`
//! while a running pod mounts it, a deleted PV keeps `kubernetes.io/pv-protection` while it is
//! `Bound`; then the finalizer goes and, with it, the object.

use serde_json::Value;

use super::{deleting, has_finalizer, kcm_write};
use crate::model::Kind;
use crate::sim::api_ops::{key_for, meta_str};
use crate::sim::store::{ObjKey, Store, Txn};

pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

fn finalizer_for(kind: Kind) -> &'static str {
    if kind == Kind::PersistentVolume {
        PV_PROTECTION
    } else {
        PVC_PROTECTION
    }
}

/// A pod that has not ended and mounts the claim keeps the finalizer, as in the real
/// controller.
fn pvc_in_use(txn: &Txn, ns: &str, name: &str) -> bool {
    txn.objects(Kind::Pod).any(|pod| {
        let phase = pod
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        meta_str(pod, "namespace") == ns
            && !matches!(phase, "Succeeded" | "Failed")
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

fn releasable(txn: &Txn, kind: Kind, obj: &Value) -> bool {
    if !deleting(obj) || !has_finalizer(obj, finalizer_for(kind)) {
        return false;
    }
    match kind {
        Kind::PersistentVolume => {
            obj.pointer("/status/phase").and_then(Value::as_str) != Some("Bound")
        }
        _ => !pvc_in_use(txn, meta_str(obj, "namespace"), meta_str(obj, "name")),
    }
}

/// Removes the protection finalizer when the object, as stored now, may lose it.
pub fn release(store: &Store, kind: Kind, key: &ObjKey) {
    let key = key_for(kind, &key.0, &key.1);
    store.transact(|txn| {
        let Some(current) = txn.get(kind, &key).cloned() else {
            return;
        };
        if !releasable(txn, kind, &current) {
            return;
        }
        let mut next = current.clone();
        if let Some(list) = next
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|f| f != finalizer_for(kind));
        }
        kcm_write(txn, kind, &key, &current, next, None);
    });
}
