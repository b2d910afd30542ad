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
        Kind::VeleroBackup => &[
            ("spec", Ty::Object, OPT),
            ("spec.ttl", Ty::String, OPT),
            ("spec.storageLocation", Ty::String, OPT),
            ("status", Ty::Object, OPT),
            ("status.phase", Ty::String, OPT),
            ("status.expiration", Ty::String, OPT),
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

/// The causes a real server lists for `obj` against a CRD version's `openAPIV3Schema`: the
/// same checks as `causes` (required fields, types), plus `enum`, read from the schema itself
/// rather than from the table above, so a test can hold every object restorewatch writes or
/// ships against the real CRDs. Unknown fields are pruned by a real server, not refused, and so
/// are not causes; `metadata`, `apiVersion` and `kind` are the server's own.
pub fn openapi_causes(schema: &Value, obj: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (Some(props), Some(fields)) = (
        schema.get("properties").and_then(Value::as_object),
        obj.as_object(),
    ) else {
        return out;
    };
    for key in required(schema) {
        if !matches!(key, "apiVersion" | "kind" | "metadata") && fields.get(key).is_none() {
            out.push((key.to_string(), "Required value".to_string()));
        }
    }
    for (k, v) in fields {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(s) = props.get(k) {
            openapi_walk(s, v, k, &mut out);
        }
    }
    out
}

fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn openapi_walk(schema: &Value, v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if v.is_null() {
        if !flag("nullable") {
            let ty = schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("object");
            out.push((
                path.to_string(),
                format!("Invalid value: \"null\": {path} in body must be of type {ty}: \"null\""),
            ));
        }
        return;
    }
    if flag("x-kubernetes-int-or-string") {
        if !(v.is_string() || v.is_i64() || v.is_u64()) {
            let t = json_type(v);
            out.push((
                path.to_string(),
                format!("Invalid value: \"{t}\": {path} in body must be of type integer-or-string: \"{t}\""),
            ));
        }
        return;
    }
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        let fits = match ty {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            _ => true,
        };
        if !fits {
            let t = json_type(v);
            out.push((
                path.to_string(),
                format!("Invalid value: \"{t}\": {path} in body must be of type {ty}: \"{t}\""),
            ));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        out.push((
            path.to_string(),
            format!(
                "Unsupported value: {v}: supported values: {}",
                list.join(", ")
            ),
        ));
    }
    if let Some(fields) = v.as_object() {
        for key in required(schema) {
            if fields.get(key).is_none() {
                out.push((format!("{path}.{key}"), "Required value".to_string()));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let extra = schema.get("additionalProperties").filter(|a| a.is_object());
        for (k, x) in fields {
            let sub = format!("{path}.{k}");
            match (props.and_then(|p| p.get(k)), extra) {
                (Some(s), _) | (None, Some(s)) => openapi_walk(s, x, &sub, out),
                (None, None) => {}
            }
        }
    }
    if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
        for (i, x) in list.iter().enumerate() {
            openapi_walk(items, x, &format!("{path}[{i}]"), out);
        }
    }
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

    #[test]
    fn a_crd_schema_checks_required_types_and_enums_and_prunes_the_rest() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["snapshotID"], "properties": {
                "snapshotID": {"type": "string"},
                "size": {"x-kubernetes-int-or-string": true},
                "list": {"type": "array", "items": {"type": "object", "required": ["name"]}}}},
            "status": {"type": "object", "properties": {
                "phase": {"type": "string", "enum": ["New", "Completed"]},
                "note": {"type": "string", "nullable": true}}}}});
        let ok = json!({"metadata": {"name": 1}, "spec": {"snapshotID": "a", "size": 3, "x": 1, "list": [{"name": "n"}]},
            "status": {"phase": "New", "note": null}});
        assert!(openapi_causes(&schema, &ok).is_empty());
        let bad = json!({"spec": {"size": true, "list": [{}]}, "status": {"phase": "Done"}});
        let causes: Vec<String> = openapi_causes(&schema, &bad)
            .into_iter()
            .map(|(p, c)| format!("{p}: {c}"))
            .collect();
        assert_eq!(
            causes,
            [
                "spec.snapshotID: Required value",
                "spec.list[0].name: Required value",
                "spec.size: Invalid value: \"boolean\": spec.size in body must be of type integer-or-string: \"boolean\"",
                "status.phase: Unsupported value: \"Done\": supported values: \"New\", \"Completed\"",
            ]
        );
    }
}
