//! A PV's reclaim policy from before the rename, known only from evidence: the rename records
//! it and reclaim-orig restores it, and both read it here, the same way and in the same order,
//! so that a value is never recorded or restored on a guess. Events never decide it: they
//! expire after an hour, and an absent one proves nothing.

use crate::model::names::ANN_ORIGINAL_RECLAIM_POLICY;
use crate::model::objects::{Pv, Pvc, StorageClass};
use crate::model::{Field, Obj};

/// The values Kubernetes accepts for `persistentVolumeReclaimPolicy`, matched exactly.
pub const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Retain", "Recycle"];

pub fn is_policy(value: &str) -> bool {
    RECLAIM_POLICIES.contains(&value)
}

/// What makes an original policy known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicySource {
    /// The PV is not `Retain` yet: the rename has not touched it.
    PvNotRetain,
    /// `original-reclaim-policy` on the PV.
    PvRecord,
    /// `original-reclaim-policy` on the `-orig` PVC.
    PvcRecord,
    /// The StorageClass provisions `Retain` volumes: `Retain` was the policy all along.
    ClassRetain,
}

impl PolicySource {
    pub fn describe(self) -> &'static str {
        match self {
            PolicySource::PvNotRetain => "the PV is not Retain yet",
            PolicySource::PvRecord => "recorded on the PV",
            PolicySource::PvcRecord => "recorded on the -orig PVC",
            PolicySource::ClassRetain => "its StorageClass is Retain",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginalPolicy {
    /// The policy and what proves it; `None` when unknown.
    pub known: Option<(String, PolicySource)>,
    /// Why it is unknown (empty when known).
    pub why_unknown: String,
    /// Values found that are no Kubernetes reclaim policy: said, and ignored as evidence.
    pub invalid: Vec<String>,
    /// The StorageClass's policy: what the dialog preselects when the policy is unknown.
    pub class_policy: Option<String>,
}

impl OriginalPolicy {
    pub fn value(&self) -> Option<&str> {
        self.known.as_ref().map(|(v, _)| v.as_str())
    }
}

/// The PV's policy before the rename: the PV's own while it is not `Retain`, else a valid
/// `original-reclaim-policy` (the PV's first, then the `-orig` PVC's), else `Retain` when the
/// StorageClass provisions `Retain`. Otherwise unknown.
pub fn original_policy(
    pv: &Obj<Pv>,
    orig: Option<&Obj<Pvc>>,
    class: Option<&StorageClass>,
) -> OriginalPolicy {
    let mut invalid = Vec::new();
    let class_policy = class
        .and_then(|c| c.effective_reclaim_policy())
        .map(str::to_string);
    let found = |v: &str, s| Some((v.to_string(), s)).filter(|(v, _)| is_policy(v));
    let mut known = None;
    match &pv.reclaim_policy.clone().map(|p| p.to_string()) {
        Field::Known(p) if p == "Retain" => {}
        Field::Known(p) if is_policy(p) => known = found(p, PolicySource::PvNotRetain),
        Field::Known(p) | Field::Invalid(p) => invalid.push(format!(
            "PV {} has reclaim policy {p:?}, which is no Kubernetes value",
            pv.meta.name
        )),
        Field::Missing => {}
    }
    let records = [
        (
            pv.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY),
            PolicySource::PvRecord,
            format!("PV {}", pv.meta.name),
        ),
        (
            orig.and_then(|o| o.meta.annotation(ANN_ORIGINAL_RECLAIM_POLICY)),
            PolicySource::PvcRecord,
            orig.map(|o| format!("PVC {}", o.meta.name))
                .unwrap_or_default(),
        ),
    ];
    for (value, source, on) in records {
        let Some(v) = value else { continue };
        if is_policy(v) {
            known = known.or_else(|| found(v, source));
        } else {
            invalid.push(format!(
                "{on} records original-reclaim-policy {v:?}, which is no Kubernetes value (Delete, Retain or Recycle)"
            ));
        }
    }
    if known.is_none() && class_policy.as_deref() == Some("Retain") {
        known = found("Retain", PolicySource::ClassRetain);
    }
    let why_unknown = if known.is_some() {
        String::new()
    } else {
        let class = match (&class_policy, pv.storage_class.as_deref()) {
            (Some(c), Some(name)) => format!("its StorageClass {name} says {c}"),
            (None, Some(name)) => format!("its StorageClass {name} cannot be read"),
            (_, None) => "it names no StorageClass".to_string(),
        };
        format!(
            "PV {} is Retain with no valid original-reclaim-policy recorded and {class}: its policy before the rename is unknown",
            pv.meta.name
        )
    };
    OriginalPolicy {
        known,
        why_unknown,
        invalid,
        class_policy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AnyObject, parse_object};
    use serde_json::json;

    fn pv(policy: &str, ann: Option<&str>) -> Obj<Pv> {
        let mut meta = json!({"name": "pv-data"});
        if let Some(a) = ann {
            meta["annotations"] = json!({ANN_ORIGINAL_RECLAIM_POLICY: a});
        }
        match parse_object(
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta,
            "spec": {"persistentVolumeReclaimPolicy": policy, "storageClassName": "replicated"}}),
        ) {
            Ok(AnyObject::PersistentVolume(o)) => std::sync::Arc::unwrap_or_clone(o),
            other => panic!("{other:?}"),
        }
    }

    fn class(p: &str) -> StorageClass {
        StorageClass {
            reclaim_policy: Field::Known(p.into()),
            provisioner: None,
        }
    }

    #[test]
    fn a_retain_pv_without_a_record_under_a_delete_class_is_unknown() {
        let r = original_policy(&pv("Retain", None), None, Some(&class("Delete")));
        assert_eq!(r.known, None);
        assert!(
            r.why_unknown
                .contains("StorageClass replicated says Delete"),
            "{r:?}"
        );
        let r = original_policy(&pv("Retain", None), None, None);
        assert_eq!(r.known, None, "{r:?}");
    }

    #[test]
    fn evidence_in_its_order() {
        let p = original_policy(&pv("Delete", Some("Retain")), None, Some(&class("Retain")));
        assert_eq!(p.known, Some(("Delete".into(), PolicySource::PvNotRetain)));
        let p = original_policy(&pv("Retain", Some("Delete")), None, Some(&class("Retain")));
        assert_eq!(p.known, Some(("Delete".into(), PolicySource::PvRecord)));
        let p = original_policy(&pv("Retain", None), None, Some(&class("Retain")));
        assert_eq!(p.known, Some(("Retain".into(), PolicySource::ClassRetain)));
    }

    #[test]
    fn a_value_that_is_no_enum_is_said_and_ignored() {
        let p = original_policy(&pv("Retain", Some("delete")), None, Some(&class("Delete")));
        assert_eq!(p.known, None);
        assert!(p.invalid[0].contains("\"delete\""), "{p:?}");
    }
}
