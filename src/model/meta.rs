//! Object metadata, read tolerantly.

use super::inline_str::{Uid, Version};
use super::json::{array_at, at, map_at, opt_str, time_at};
use super::names::{READ_ANNOTATIONS, READ_LABELS};
use super::shared_str::SharedStr;
use super::strmap::StrMap;
use jiff::Timestamp;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    // The API version and kind are one of a few every owned object repeats: shared.
    pub api_version: SharedStr,
    pub kind: SharedStr,
    pub name: SharedStr,
    pub uid: Uid,
    pub controller: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// Shared with the object's store key (`ObjKey`), not a second copy.
    pub name: super::shared_str::SharedStr,
    /// Empty for cluster-scoped kinds. Shared (`history::shared`): a namespace holds many
    /// objects.
    pub namespace: super::shared_str::SharedStr,
    pub uid: Uid,
    pub resource_version: Version,
    pub generate_name: Option<Box<str>>,
    pub created: Option<Timestamp>,
    pub deleted: Option<Timestamp>,
    pub labels: StrMap,
    pub annotations: StrMap,
    pub owners: Box<[OwnerRef]>,
    // No finalizers: nothing reads them from the store (actions read them fresh, the YAML
    // view and the history from the text), and every PVC and PV carries one or two.
    /// The latest time the object is known to have changed: the newest of its creation,
    /// deletion, managedFields times and condition transitions, or, in live mode, when the
    /// watch last delivered a change. Used for stall detection.
    pub last_change: Option<Timestamp>,
    /// Who wrote the object, from its `managedFields` (which are not kept themselves).
    pub managed: Box<[super::history::ManagedEntry]>,
    /// Which manager wrote each of the annotations restorewatch reads (`READ_ANNOTATIONS`),
    /// from `managedFields`: the summary above stops at `metadata.annotations`, where the PV
    /// controller's own annotations would hide whose a given key is.
    pub annotation_writers: Box<[(std::sync::Arc<str>, std::sync::Arc<str>)]>,
    /// The latest field changes the live watch delivered, oldest first, bounded
    /// (`history::CHANGES_PER_OBJECT`). Empty for objects read from files.
    pub changes: Vec<super::history::FieldChange>,
}

impl Meta {
    /// Reads metadata; `None` when the object has no usable name (it cannot be keyed).
    pub fn parse(v: &Value) -> Option<Meta> {
        let name = opt_str(v, &["metadata", "name"]).filter(|n| !n.is_empty())?;
        let created = time_at(v, &["metadata", "creationTimestamp"])
            .known()
            .copied();
        let deleted = time_at(v, &["metadata", "deletionTimestamp"])
            .known()
            .copied();
        let owners = array_at(v, &["metadata", "ownerReferences"])
            .iter()
            .filter_map(|o| {
                Some(OwnerRef {
                    api_version: SharedStr::new(&opt_str(o, &["apiVersion"]).unwrap_or_default()),
                    kind: SharedStr::new(&opt_str(o, &["kind"])?),
                    name: SharedStr::own(&opt_str(o, &["name"]).unwrap_or_default()),
                    uid: opt_str(o, &["uid"]).unwrap_or_default().into(),
                    controller: at(o, &["controller"])
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                })
            })
            .collect();
        let mut last_change = [created, deleted].into_iter().flatten().max();
        let managed_times = array_at(v, &["metadata", "managedFields"])
            .iter()
            .filter_map(|m| time_at(m, &["time"]).known().copied());
        let condition_times = array_at(v, &["status", "conditions"])
            .iter()
            .filter_map(|c| time_at(c, &["lastTransitionTime"]).known().copied());
        for t in managed_times.chain(condition_times) {
            last_change = Some(last_change.map_or(t, |l| l.max(t)));
        }
        Some(Meta {
            name: SharedStr::own(&name),
            namespace: opt_str(v, &["metadata", "namespace"])
                .unwrap_or_default()
                .into(),
            uid: opt_str(v, &["metadata", "uid"]).unwrap_or_default().into(),
            resource_version: opt_str(v, &["metadata", "resourceVersion"])
                .unwrap_or_default()
                .into(),
            generate_name: opt_str(v, &["metadata", "generateName"]).map(String::into_boxed_str),
            created,
            deleted,
            labels: map_at(v, &["metadata", "labels"])
                .into_iter()
                .filter(|(k, _)| READ_LABELS.contains(&k.as_str()))
                .collect(),
            annotations: map_at(v, &["metadata", "annotations"])
                .into_iter()
                .filter(|(k, _)| READ_ANNOTATIONS.contains(&k.as_str()))
                .collect(),
            owners,
            last_change,
            managed: super::history::managed_summary(v),
            annotation_writers: annotation_writers(v),
            changes: Vec::new(),
        })
    }

    /// The manager that wrote annotation `key` (one of `READ_ANNOTATIONS`), when managedFields
    /// say.
    pub fn annotation_writer(&self, key: &str) -> Option<&str> {
        self.annotation_writers
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, m)| &**m)
    }

    pub fn controller_owner(&self) -> Option<&OwnerRef> {
        self.owners.iter().find(|o| o.controller)
    }

    /// A label's value; `key` must be one of `names::READ_LABELS`, the only ones kept.
    pub fn label(&self, key: &str) -> Option<&str> {
        debug_assert!(READ_LABELS.contains(&key), "label {key} is not kept");
        self.labels.get(key)
    }

    /// An annotation's value; `key` must be one of `names::READ_ANNOTATIONS`.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        debug_assert!(
            READ_ANNOTATIONS.contains(&key),
            "annotation {key} is not kept"
        );
        self.annotations.get(key)
    }
}

fn annotation_writers(v: &Value) -> Box<[(std::sync::Arc<str>, std::sync::Arc<str>)]> {
    let mut out = Vec::new();
    for entry in array_at(v, &["metadata", "managedFields"]) {
        let Some(manager) = opt_str(entry, &["manager"]).filter(|m| !m.is_empty()) else {
            continue;
        };
        let Some(keys) = entry
            .pointer("/fieldsV1/f:metadata/f:annotations")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for k in keys.keys().filter_map(|k| k.strip_prefix("f:")) {
            if let Some(read) = READ_ANNOTATIONS.iter().find(|r| **r == k) {
                out.push((
                    super::history::shared(read),
                    super::history::shared(&manager),
                ));
            }
        }
    }
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::names::{ANN_RESTORE_JOB_UID, LABEL_VELERO_RESTORE_NAME};
    use serde_json::json;

    #[test]
    fn only_the_labels_and_annotations_read_are_kept() {
        let v = json!({"metadata": {"name": "p", "namespace": "ns",
            "labels": {LABEL_VELERO_RESTORE_NAME: "r1", "app.kubernetes.io/name": "vm1"},
            "annotations": {ANN_RESTORE_JOB_UID: "u1", "cdi.kubevirt.io/storage.import.endpoint": "http://x"}}});
        let m = Meta::parse(&v).expect("named");
        assert_eq!(m.label(LABEL_VELERO_RESTORE_NAME), Some("r1"));
        assert_eq!(m.annotation(ANN_RESTORE_JOB_UID), Some("u1"));
        assert_eq!(m.labels.len(), 1);
        assert_eq!(m.annotations.len(), 1);
    }
}
