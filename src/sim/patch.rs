//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and the strategic merge
//! patch of the core kinds, reduced to the merge keys restorewatch and kubectl actually touch.

use serde_json::{Map, Value};

use crate::model::Kind;
use crate::sim::status::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchKind {
    pub fn from_content_type(ct: &str) -> Option<PatchKind> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/strategic-merge-patch+json" => Some(PatchKind::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                Some(PatchKind::Apply)
            }
            _ => None,
        }
    }
}

/// Kinds served from Go structs by a real server (strategic merge patch allowed); CRDs answer
/// 415 to it.
pub fn is_builtin(kind: Kind) -> bool {
    let g = kind.info().group;
    g.is_empty() || g == "storage.k8s.io"
}

/// Applies a patch body to `doc` and returns the patched object.
pub fn apply(kind: Kind, doc: &Value, pk: PatchKind, body: &[u8]) -> Result<Value, ApiError> {
    match pk {
        PatchKind::Merge => {
            let p: Value = parse_json(body)?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ));
            }
            let mut out = doc.clone();
            json_patch::merge(&mut out, &p);
            Ok(out)
        }
        PatchKind::Json => {
            let p: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let mut out = doc.clone();
            json_patch::patch(&mut out, &p).map_err(|_| ApiError::patch_invalid())?;
            Ok(out)
        }
        PatchKind::Strategic => {
            if !is_builtin(kind) {
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types \
                     include: application/json-patch+json, application/merge-patch+json, \
                     application/apply-patch+yaml",
                ));
            }
            let p: Value = parse_json(body)?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ));
            }
            let mut out = doc.clone();
            strategic_merge(&mut out, &p, &mut Vec::new());
            Ok(out)
        }
        PatchKind::Apply => Err(ApiError::unsupported_media_type(
            "server-side apply (application/apply-patch+yaml) is not supported by \
             restorewatch-sim; use a merge, JSON or strategic merge patch",
        )),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
}

enum ListStrategy {
    Atomic,
    /// A list of scalars merged as a set (`metadata.finalizers`).
    Set,
    Keyed(&'static str),
}

fn list_strategy(path: &[String]) -> ListStrategy {
    let last = path.last().map(String::as_str).unwrap_or("");
    let parent = path
        .len()
        .checked_sub(2)
        .and_then(|i| path.get(i))
        .map(String::as_str);
    match (parent, last) {
        (Some("metadata"), "finalizers") => ListStrategy::Set,
        (Some("metadata"), "ownerReferences") => ListStrategy::Keyed("uid"),
        (_, "containers" | "initContainers" | "ephemeralContainers" | "volumes") => {
            ListStrategy::Keyed("name")
        }
        (_, "imagePullSecrets" | "env") => ListStrategy::Keyed("name"),
        (_, "volumeMounts") => ListStrategy::Keyed("mountPath"),
        (_, "volumeDevices") => ListStrategy::Keyed("devicePath"),
        (_, "ports") => ListStrategy::Keyed("containerPort"),
        (Some("status"), "conditions") => ListStrategy::Keyed("type"),
        _ => ListStrategy::Atomic,
    }
}

fn is_directive_key(k: &str) -> bool {
    k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/")
}

/// Drops the directives from a value that is inserted as-is.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn directive(v: &Value) -> Option<&str> {
    v.get("$patch").and_then(Value::as_str)
}

fn strategic_merge(target: &mut Value, patch: &Value, path: &mut Vec<String>) {
    let Value::Object(pm) = patch else {
        *target = patch.clone();
        return;
    };
    if directive(patch) == Some("replace") {
        *target = strip(patch);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(tm) = target else {
        return;
    };
    for (k, v) in pm {
        if is_directive_key(k) {
            continue;
        }
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(remove)) = (tm.get_mut(list), v) {
                items.retain(|x| !remove.contains(x));
            }
            continue;
        }
        if v.is_null() || directive(v) == Some("delete") {
            tm.remove(k);
            continue;
        }
        path.push(k.clone());
        match (tm.get_mut(k), v) {
            (Some(Value::Array(t)), Value::Array(p)) => merge_list(t, p, path),
            (Some(t @ Value::Object(_)), Value::Object(_)) => strategic_merge(t, v, path),
            (_, Value::Array(p)) => {
                // No list yet: merging into an empty one still honours `$patch: delete`
                // elements and set semantics.
                let mut t = Vec::new();
                merge_list(&mut t, p, path);
                tm.insert(k.clone(), Value::Array(t));
            }
            _ => {
                tm.insert(k.clone(), strip(v));
            }
        }
        path.pop();
    }
}

fn merge_list(target: &mut Vec<Value>, patch: &[Value], path: &mut Vec<String>) {
    if patch.iter().any(|p| directive(p) == Some("replace")) {
        *target = patch
            .iter()
            .filter(|p| directive(p) != Some("replace"))
            .map(strip)
            .collect();
        return;
    }
    match list_strategy(path) {
        ListStrategy::Atomic => *target = patch.iter().map(strip).collect(),
        ListStrategy::Set => {
            for p in patch {
                if !target.contains(p) {
                    target.push(p.clone());
                }
            }
        }
        ListStrategy::Keyed(key) => {
            for p in patch {
                let Some(id) = p.get(key) else {
                    target.push(strip(p));
                    continue;
                };
                let pos = target.iter().position(|t| t.get(key) == Some(id));
                match (pos, directive(p)) {
                    (Some(i), Some("delete")) => {
                        target.remove(i);
                    }
                    (None, Some("delete")) => {}
                    (Some(i), _) => strategic_merge(&mut target[i], p, path),
                    (None, _) => target.push(strip(p)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(doc: Value, p: Value) -> Value {
        apply(
            Kind::Pod,
            &doc,
            PatchKind::Strategic,
            p.to_string().as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn strategic_merge_honours_keys() {
        let doc = json!({"metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1", "name": "x"}]},
                         "spec": {"containers": [{"name": "c", "image": "i1"}, {"name": "d", "image": "i"}],
                                  "volumes": [{"name": "v"}]}});
        let out = smp(
            doc,
            json!({"metadata": {"finalizers": ["b"], "ownerReferences": [{"uid": "2", "name": "y"}]},
                   "spec": {"containers": [{"name": "c", "image": "i2"}, {"name": "d", "$patch": "delete"}],
                            "$setElementOrder/containers": [{"name": "c"}]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(
            out["metadata"]["ownerReferences"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "c", "image": "i2"}])
        );
        assert_eq!(out["spec"]["volumes"], json!([{"name": "v"}]));
        let out = smp(
            out,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
    }

    #[test]
    fn json_patch_test_failure_is_invalid() {
        let doc = json!({"spec": {"x": 1}});
        let p = json!([{"op": "test", "path": "/spec/x", "value": 2}]).to_string();
        let e = apply(Kind::RestoreJob, &doc, PatchKind::Json, p.as_bytes()).unwrap_err();
        assert_eq!((e.code, e.reason), (422, Some("Invalid")));
        let e = apply(Kind::RestoreJob, &doc, PatchKind::Strategic, b"{}").unwrap_err();
        assert_eq!(e.code, 415);
        let e = apply(Kind::RestoreJob, &doc, PatchKind::Merge, b"{bad").unwrap_err();
        assert_eq!(e.code, 400);
    }
}
