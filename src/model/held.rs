//! What restorewatch holds of an object whose text it does not keep (the live watch keeps none
//! of the kinds a cluster has thousands of: PVCs, PVs, DataVolumes, Pods, Events), as JSON in
//! the object's own shape: the fields the analysis judges, at the paths the API server uses.
//! Two uses: the history diffs two of these when such an object changes (so a change to a
//! judged field, a PV's reclaim policy say, is still listed with its old and new value), and
//! the YAML view shows one while the full object is read from the API server, or instead of it
//! when that read fails.

use super::meta::Meta;
use super::{AnyObject, Field};
use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// The held fields of `o` as JSON, in the object's own shape.
pub fn held_json(o: &AnyObject) -> Value {
    let info = o.kind().info();
    let mut v = json!({
        "apiVersion": info.api_version(),
        "kind": info.api_kind,
        "metadata": meta_json(o.meta()),
    });
    let body = match o {
        AnyObject::PersistentVolumeClaim(p) => json!({
            "spec": {
                "volumeName": p.volume_name,
                "storageClassName": p.storage_class,
                "accessModes": p.access_modes,
                "volumeMode": p.volume_mode,
                "resources": {"requests": {"storage": p.request}},
            },
            "status": {"phase": field(&p.phase), "capacity": {"storage": p.capacity}},
        }),
        AnyObject::PersistentVolume(p) => json!({
            "spec": {
                "persistentVolumeReclaimPolicy": field(&p.reclaim_policy),
                "claimRef": p.claim_ref.as_ref().map(|c| json!({
                    "namespace": c.namespace, "name": c.name, "uid": c.uid,
                })),
                "storageClassName": p.storage_class,
                "capacity": {"storage": p.capacity},
            },
            "status": {"phase": field(&p.phase)},
        }),
        AnyObject::DataVolume(d) => json!({
            "status": {"phase": field(&d.phase), "progress": d.progress, "claimName": d.claim_name},
        }),
        AnyObject::Pod(p) => json!({
            "spec": {
                "nodeName": p.node,
                "volumes": p.claims.iter()
                    .map(|c| json!({"persistentVolumeClaim": {"claimName": c}}))
                    .collect::<Vec<_>>(),
            },
            "status": {"phase": field(&p.phase)},
        }),
        AnyObject::StorageClass(c) => json!({
            "reclaimPolicy": field(&c.reclaim_policy),
            "provisioner": c.provisioner,
        }),
        AnyObject::Event(e) => json!({
            "involvedObject": {
                "kind": e.involved.kind, "namespace": e.involved.namespace,
                "name": e.involved.name, "uid": e.involved.uid,
            },
            "type": e.type_, "reason": e.reason, "message": e.message, "count": e.count,
            "firstTimestamp": time(e.first), "lastTimestamp": time(e.last),
            "source": {"component": e.source},
        }),
        _ => Value::Null,
    };
    if let (Some(out), Value::Object(body)) = (v.as_object_mut(), body) {
        out.extend(body);
    }
    prune(&mut v);
    v
}

fn meta_json(m: &Meta) -> Value {
    let map = |it: &mut dyn Iterator<Item = (&str, &str)>| -> Map<String, Value> {
        it.map(|(k, v)| (k.to_string(), Value::from(v))).collect()
    };
    json!({
        "name": m.name,
        "namespace": (!m.namespace.is_empty()).then_some(m.namespace.as_str()),
        "generateName": m.generate_name,
        "uid": m.uid,
        "resourceVersion": m.resource_version,
        "creationTimestamp": time(m.created),
        "deletionTimestamp": time(m.deleted),
        "labels": map(&mut m.labels.iter()),
        "annotations": map(&mut m.annotations.iter()),
        "ownerReferences": m.owners.iter().map(|o| json!({
            "apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
            "controller": o.controller,
        })).collect::<Vec<_>>(),
    })
}

fn field<T: serde::Serialize>(f: &Field<T>) -> Value {
    serde_json::to_value(f).unwrap_or(Value::Null)
}

fn time(t: Option<Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::from(t.to_string()))
}

/// Drops nulls and the maps and lists left empty, as the API server omits them.
fn prune(v: &mut Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => {
            m.retain(|_, x| prune(x));
            !m.is_empty()
        }
        Value::Array(a) => {
            a.retain_mut(prune);
            !a.is_empty()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_object;

    #[test]
    fn a_pv_is_held_at_its_own_paths_with_what_is_judged() {
        let pv = parse_object(json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-1", "uid": "u-pv", "resourceVersion": "7",
                "annotations": {"backups.cozystack.io/original-reclaim-policy": "Delete",
                    "unread.example/x": "y"}},
            "spec": {"persistentVolumeReclaimPolicy": "Retain", "storageClassName": "replicated",
                "claimRef": {"namespace": "t", "name": "vm-disk-orig-1a2b", "uid": "u-pvc"},
                "capacity": {"storage": "10Gi"}, "csi": {"driver": "x", "volumeHandle": "h"}},
            "status": {"phase": "Bound"}}))
        .expect("a PV");
        let v = held_json(&pv);
        assert_eq!(v["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(v["spec"]["claimRef"]["name"], "vm-disk-orig-1a2b");
        assert_eq!(v["spec"]["claimRef"]["uid"], "u-pvc");
        assert_eq!(v["status"]["phase"], "Bound");
        assert_eq!(
            v["metadata"]["annotations"]["backups.cozystack.io/original-reclaim-policy"],
            "Delete"
        );
        assert!(
            v["metadata"]["annotations"]
                .get("unread.example/x")
                .is_none()
        );
        assert!(v["spec"].get("csi").is_none(), "not judged, not held");
        assert!(v["metadata"].get("namespace").is_none(), "cluster-scoped");
    }
}
