//! The part of the CRDs' OpenAPI schemas a real server enforces that restorewatch's writes and
//! reads meet: required fields and basic types, as one table per kind. A write that breaks it
//! gets 422 `Invalid`, worded as the real server words it
//! (`RestoreJob.backups.cozystack.io "x" is invalid: spec.backupRef: Required value`).
//! Small on purpose: the fields of the kinds restorewatch writes or reads, not whole schemas.

use serde_json::Value;

use crate::model::Kind;
use crate::sim::status::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Object,
    String,
    Boolean,
    Integer,
    Array,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Object => "object",
            Ty::String => "string",
            Ty::Boolean => "boolean",
            Ty::Integer => "integer",
            Ty::Array => "array",
        }
    }

    fn matches(self, v: &Value) -> bool {
        match self {
            Ty::Object => v.is_object(),
            Ty::String => v.is_string(),
            Ty::Boolean => v.is_boolean(),
            Ty::Integer => v.is_i64() || v.is_u64(),
            Ty::Array => v.is_array(),
        }
    }
}

/// The JSON type name a real server uses in its `Invalid value` causes.
pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A field: its dot path, its type, whether its parent object must have it.
type Field = (&'static str, Ty, bool);

const REQ: bool = true;
const OPT: bool = false;

/// From the CRDs (`backups.cozystack.io`, `velero.io`, `helm.toolkit.fluxcd.io`,
/// `postgresql.cnpg.io`, `barmancloud.cnpg.io`). A required field is required only where its
/// parent exists, as in OpenAPI.
fn fields(kind: Kind) -> &'static [Field] {
    match kind {
        Kind::RestoreJob => &[
            ("spec", Ty::Object, OPT),
            ("spec.backupRef", Ty::Object, REQ),
            ("spec.backupRef.name", Ty::String, OPT),
            ("spec.targetApplicationRef", Ty::Object, OPT),
            ("spec.targetApplicationRef.apiGroup", Ty::String, OPT),
            ("spec.targetApplicationRef.kind", Ty::String, REQ),
            ("spec.targetApplicationRef.name", Ty::String, REQ),
            ("spec.options", Ty::Object, OPT),
            ("status", Ty::Object, OPT),
            ("status.phase", Ty::String, OPT),
            ("status.message", Ty::String, OPT),
            ("status.conditions", Ty::Array, OPT),
        ],
        Kind::Backup => &[
            ("spec", Ty::Object, OPT),
            ("spec.applicationRef", Ty::Object, REQ),
            ("spec.applicationRef.kind", Ty::String, REQ),
            ("spec.applicationRef.name", Ty::String, REQ),
            ("spec.strategyRef", Ty::Object, REQ),
            ("spec.strategyRef.kind", Ty::String, REQ),
            ("spec.strategyRef.name", Ty::String, REQ),
            ("spec.takenAt", Ty::String, REQ),
            ("spec.driverMetadata", Ty::Object, OPT),
        ],
        Kind::HelmRelease => &[
            ("spec", Ty::Object, OPT),
            ("spec.interval", Ty::String, REQ),
            ("spec.suspend", Ty::Boolean, OPT),
            ("spec.chart", Ty::Object, OPT),
            ("spec.chart.spec", Ty::Object, REQ),
            ("spec.chart.spec.chart", Ty::String, REQ),
            ("spec.chart.spec.sourceRef", Ty::Object, REQ),
            ("spec.values", Ty::Object, OPT),
        ],
        Kind::VeleroRestore => &[
            ("spec", Ty::Object, OPT),
            ("spec.backupName", Ty::String, OPT),
            ("spec.restorePVs", Ty::Boolean, OPT),
            ("spec.existingResourcePolicy", Ty::String, OPT),
            ("status", Ty::Object, OPT),
            ("status.phase", Ty::String, OPT),
        ],
        Kind::DataDownload => &[
            ("spec", Ty::Object, OPT),
            ("spec.backupStorageLocation", Ty::String, REQ),
            ("spec.operationTimeout", Ty::String, REQ),
            ("spec.snapshotID", Ty::String, REQ),
            ("spec.sourceNamespace", Ty::String, REQ),
            ("spec.targetVolume", Ty::Object, REQ),
            ("spec.targetVolume.namespace", Ty::String, REQ),
            ("spec.targetVolume.pv", Ty::String, REQ),
            ("spec.targetVolume.pvc", Ty::String, REQ),
            ("status", Ty::Object, OPT),
            ("status.phase", Ty::String, OPT),
        ],
        Kind::CnpgCluster => &[
            ("spec", Ty::Object, REQ),
            ("spec.instances", Ty::Integer, REQ),
            ("spec.plugins", Ty::Array, OPT),
            ("spec.externalClusters", Ty::Array, OPT),
            ("spec.bootstrap", Ty::Object, OPT),
        ],
        Kind::ObjectStore => &[
            ("spec", Ty::Object, REQ),
            ("spec.configuration", Ty::Object, REQ),
            ("spec.configuration.destinationPath", Ty::String, REQ),
            ("spec.retentionPolicy", Ty::String, OPT),
        ],
        _ => &[],
    }
}

fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |v, k| v.get(k))
}

/// The causes a real server lists for `obj`, in table order.
pub fn causes(kind: Kind, obj: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, ty, required) in fields(kind) {
        let parent = path.rsplit_once('.').map(|(p, _)| p);
        let parent_there = parent.is_none_or(|p| lookup(obj, p).is_some_and(Value::is_object));
        match lookup(obj, path) {
            None | Some(Value::Null) if *required && parent_there => {
                out.push((path.to_string(), "Required value".to_string()));
            }
            Some(v) if !v.is_null() && !ty.matches(v) => {
                let t = json_type(v);
                out.push((
                    path.to_string(),
                    format!(
                        "Invalid value: \"{t}\": {path} in body must be of type {}: \"{t}\"",
                        ty.name()
                    ),
                ));
            }
            _ => {}
        }
    }
    out
}

/// 422 when `obj` breaks its kind's schema.
pub fn validate(kind: Kind, obj: &Value) -> Result<(), ApiError> {
    refuse(kind, obj, causes(kind, obj))
}

/// 422 when an update makes `new` break the schema where `old` did not. A real server
/// (v1.30+, validation ratcheting) lets an update through that leaves an already invalid field
/// as it was, so objects stored before a schema changed stay writable.
pub fn validate_update(kind: Kind, old: &Value, new: &Value) -> Result<(), ApiError> {
    let before = causes(kind, old);
    let after = causes(kind, new)
        .into_iter()
        .filter(|c| !before.contains(c) || lookup(old, &c.0) != lookup(new, &c.0))
        .collect();
    refuse(kind, new, after)
}

fn refuse(kind: Kind, obj: &Value, causes: Vec<(String, String)>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    Err(ApiError::invalid(kind.info(), name, &causes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_and_types_in_the_real_wording() {
        let rj = json!({"metadata": {"name": "r"}, "spec": {"targetApplicationRef": {"kind": "Postgres"}}});
        let e = validate(Kind::RestoreJob, &rj).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Some("Invalid")));
        assert_eq!(
            e.message,
            "RestoreJob.backups.cozystack.io \"r\" is invalid: [spec.backupRef: Required value, spec.targetApplicationRef.name: Required value]"
        );
        let hr = json!({"metadata": {"name": "h"}, "spec": {"interval": "5m", "suspend": "yes"}});
        assert_eq!(
            validate(Kind::HelmRelease, &hr).unwrap_err().message,
            "HelmRelease.helm.toolkit.fluxcd.io \"h\" is invalid: spec.suspend: Invalid value: \"string\": spec.suspend in body must be of type boolean: \"string\""
        );
        // An update leaving an invalid field as it was passes (ratcheting); one breaking it not.
        let old = json!({"metadata": {"name": "h"}, "spec": {"suspend": true}});
        let mut new = old.clone();
        new["spec"]["suspend"] = json!(false);
        assert!(validate_update(Kind::HelmRelease, &old, &new).is_ok());
        new["spec"]["suspend"] = json!("no");
        assert_eq!(
            validate_update(Kind::HelmRelease, &old, &new)
                .unwrap_err()
                .code,
            422
        );
        // Required only where the parent exists.
        assert!(validate(Kind::RestoreJob, &json!({"metadata": {"name": "r"}})).is_ok());
        assert!(validate(Kind::PersistentVolumeClaim, &json!({"spec": 1})).is_ok());
    }
}
