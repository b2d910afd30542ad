//! The PV binder (kube-controller-manager's persistentvolume-controller), for pre-bound
//! volumes, which is what restorewatch's users meet (a rename points a PVC's `volumeName` and
//! the PV's `claimRef` at each other); there is no provisioner.
//!
//! - A Pending PVC whose `volumeName` names a PV whose `claimRef` names it (or nothing) is
//!   bound: both `Bound`, the PVC annotated `pv.kubernetes.io/bind-completed: "yes"`.
//! - A Pending PVC whose PV is bound to a different claim gets a Warning `FailedBinding`
//!   (`volume "PV" already bound to a different claim.`) and is retried on its resync
//!   (`Settings::pv_resync`, ~15 s on a real cluster): re-pointing the PV afterwards does not
//!   bind it sooner. A newly created PV is matched with its claim at once.
//! - A PV whose claim is gone (no PVC of that name with the claimRef's uid) becomes `Released`;
//!   one without a claimRef `Available`.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::{claim_ref_key, deleting, kcm_write};
use crate::model::Kind;
use crate::sim::api_ops::meta_str;
use crate::sim::clock::now_rfc3339;
use crate::sim::store::{ObjKey, Store, Txn};

pub const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
pub const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
const COMPONENT: &str = "persistentvolume-controller";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Could not bind yet: try again on the claim's resync.
    Retry,
}

fn phase(obj: &Value) -> &str {
    obj.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// A claim the binder still has to bind.
pub fn unbound(pvc: &Value) -> bool {
    matches!(phase(pvc), "" | "Pending") && !deleting(pvc)
}

fn set_annotation(obj: &mut Value, k: &str, v: &str) {
    if !obj["metadata"]
        .get("annotations")
        .is_some_and(Value::is_object)
    {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][k] = json!(v);
}

fn write_status(txn: &mut Txn, kind: Kind, key: &ObjKey, status: Value) {
    let Some(current) = txn.get(kind, key).cloned() else {
        return;
    };
    let mut next = current.clone();
    let mut merged = current.get("status").cloned().unwrap_or(json!({}));
    if let (Some(m), Some(s)) = (merged.as_object_mut(), status.as_object()) {
        for (k, v) in s {
            m.insert(k.clone(), v.clone());
        }
    }
    next["status"] = merged;
    kcm_write(txn, kind, key, &current, next, Some("status"));
}

fn bind(txn: &mut Txn, claim_key: &ObjKey, pvc: &Value, pv: &Value) {
    let pv_key = (String::new(), meta_str(pv, "name").to_string());
    let uid = meta_str(pvc, "uid");
    let want_ref = json!({
        "kind": "PersistentVolumeClaim",
        "namespace": claim_key.0,
        "name": claim_key.1,
        "uid": uid,
        "apiVersion": "v1",
    });
    let mut next_pv = pv.clone();
    let ref_now = pv.pointer("/spec/claimRef");
    let same_claim = ref_now.and_then(|r| r.get("uid")).and_then(Value::as_str) == Some(uid);
    if !same_claim {
        if ref_now.is_none() {
            set_annotation(&mut next_pv, BOUND_BY_CONTROLLER, "yes");
        }
        let mut r = ref_now.cloned().unwrap_or(json!({}));
        if let (Some(m), Some(w)) = (r.as_object_mut(), want_ref.as_object()) {
            for (k, v) in w {
                m.insert(k.clone(), v.clone());
            }
        }
        next_pv["spec"]["claimRef"] = r;
        kcm_write(txn, Kind::PersistentVolume, &pv_key, pv, next_pv, None);
    }
    write_status(
        txn,
        Kind::PersistentVolume,
        &pv_key,
        json!({"phase": "Bound"}),
    );
    let mut next_pvc = pvc.clone();
    set_annotation(&mut next_pvc, BIND_COMPLETED, "yes");
    let named = pvc
        .pointer("/spec/volumeName")
        .and_then(Value::as_str)
        .is_some_and(|v| !v.is_empty());
    if !named {
        set_annotation(&mut next_pvc, BOUND_BY_CONTROLLER, "yes");
        next_pvc["spec"]["volumeName"] = json!(pv_key.1);
    }
    kcm_write(
        txn,
        Kind::PersistentVolumeClaim,
        claim_key,
        pvc,
        next_pvc,
        None,
    );
    let mut status = json!({"phase": "Bound"});
    for (from, to) in [
        ("/spec/accessModes", "accessModes"),
        ("/spec/capacity", "capacity"),
    ] {
        if let Some(v) = pv.pointer(from) {
            status[to] = v.clone();
        }
    }
    write_status(txn, Kind::PersistentVolumeClaim, claim_key, status);
}

/// The `FailedBinding` Warning on the claim; a repeat counts up, as the event recorder does.
fn failed_binding(txn: &mut Txn, events: &mut HashMap<String, String>, pvc: &Value, pv: &str) {
    let ns = meta_str(pvc, "namespace").to_string();
    let uid = meta_str(pvc, "uid").to_string();
    let now = now_rfc3339();
    if let Some(name) = events.get(&uid) {
        let key = (ns.clone(), name.clone());
        if let Some(ev) = txn.get(Kind::Event, &key).cloned() {
            let mut next = ev.clone();
            let count = ev.get("count").and_then(Value::as_i64).unwrap_or(1);
            next["count"] = json!(count + 1);
            next["lastTimestamp"] = json!(now);
            kcm_write(txn, Kind::Event, &key, &ev, next, None);
            return;
        }
    }
    let name = format!("{}.{:016x}", meta_str(pvc, "name"), txn.random());
    let ev = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns, "uid": txn.new_uid(), "creationTimestamp": now},
        "involvedObject": {
            "kind": "PersistentVolumeClaim",
            "namespace": ns,
            "name": meta_str(pvc, "name"),
            "uid": uid,
            "apiVersion": "v1",
            "resourceVersion": meta_str(pvc, "resourceVersion"),
        },
        "reason": "FailedBinding",
        "message": format!("volume \"{pv}\" already bound to a different claim."),
        "source": {"component": COMPONENT},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Warning",
        "eventTime": null,
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
    });
    let key = (ns, name.clone());
    kcm_write(txn, Kind::Event, &key, &Value::Null, ev, None);
    events.insert(uid, name);
}

pub fn sync_claim(
    store: &Store,
    claim_pvs: &HashMap<ObjKey, HashSet<String>>,
    events: &mut HashMap<String, String>,
    key: &ObjKey,
) -> Outcome {
    store.transact(|txn| {
        let Some(pvc) = txn.get(Kind::PersistentVolumeClaim, key).cloned() else {
            return Outcome::Done;
        };
        if !unbound(&pvc) {
            return Outcome::Done;
        }
        let uid = meta_str(&pvc, "uid");
        let volume = pvc
            .pointer("/spec/volumeName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if volume.is_empty() {
            // No provisioner here; but a PV pre-bound to this very claim is taken.
            let pre_bound = claim_pvs
                .get(key)
                .into_iter()
                .flatten()
                .filter_map(|n| txn.get(Kind::PersistentVolume, &(String::new(), n.clone())))
                .find(|pv| pv.pointer("/spec/claimRef/uid").and_then(Value::as_str) == Some(uid))
                .cloned();
            if let Some(pv) = pre_bound {
                bind(txn, key, &pvc, &pv);
            }
            return Outcome::Done;
        }
        let Some(pv) = txn
            .get(Kind::PersistentVolume, &(String::new(), volume.clone()))
            .cloned()
        else {
            // Its creation will bring the claim back here.
            return Outcome::Done;
        };
        let ref_uid = pv
            .pointer("/spec/claimRef/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        let free = pv.pointer("/spec/claimRef").is_none();
        let ours =
            claim_ref_key(&pv).as_ref() == Some(key) && (ref_uid.is_empty() || ref_uid == uid);
        if free || ours {
            bind(txn, key, &pvc, &pv);
            Outcome::Done
        } else {
            failed_binding(txn, events, &pvc, &volume);
            Outcome::Retry
        }
    })
}

pub fn sync_volume(store: &Store, name: &str) {
    store.transact(|txn| {
        let key = (String::new(), name.to_string());
        let Some(pv) = txn.get(Kind::PersistentVolume, &key).cloned() else {
            return;
        };
        let now = phase(&pv).to_string();
        let ref_uid = pv
            .pointer("/spec/claimRef/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        let want = match claim_ref_key(&pv) {
            None => Some("Available"),
            Some(_) if ref_uid.is_empty() => Some("Available"),
            Some(claim) => {
                let pvc = txn
                    .get(Kind::PersistentVolumeClaim, &claim)
                    .filter(|c| meta_str(c, "uid") == ref_uid);
                match pvc {
                    None if matches!(now.as_str(), "Released" | "Failed") => None,
                    None => Some("Released"),
                    Some(c)
                        if c.pointer("/spec/volumeName").and_then(Value::as_str) == Some(name) =>
                    {
                        Some("Bound")
                    }
                    Some(_) => None,
                }
            }
        };
        if let Some(w) = want
            && w != now
        {
            write_status(txn, Kind::PersistentVolume, &key, json!({"phase": w}));
        }
    });
}
