//! A CRD's whole `openAPIV3Schema` applied to an object, as a real API server applies it on
//! create with `fieldValidation=Strict`: types, required fields, enums, lengths and bounds,
//! `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`, and unknown fields
//! refused. `schema.rs` is the emulator's hand-kept table for the kinds it serves; this reads
//! any CRD as vendored, so that what `deploy/` ships is checked against the schemas the
//! cluster's operators install. Not enforced: `pattern`, `format` and CEL rules
//! (`x-kubernetes-validations`), which need engines the emulator does not carry.

use super::schema::json_type;
use serde_json::Value;

/// The `openAPIV3Schema` a CRD declares for `apiVersion` (`group/version`), if it serves it.
pub fn schema_for<'a>(crd: &'a Value, api_version: &str) -> Option<&'a Value> {
    let group = crd.pointer("/spec/group")?.as_str()?;
    let (g, v) = api_version.split_once('/')?;
    if g != group {
        return None;
    }
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|ver| ver["name"] == v && ver["served"] != false)?
        .pointer("/schema/openAPIV3Schema")
}

/// Every violation of `schema` by `obj`, as `(field path, what is wrong)` in the server's words.
/// `metadata` is the server's own (ObjectMeta), so only its type is checked here.
pub fn violations(schema: &Value, obj: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(schema, obj, "", &mut out);
    out
}

fn type_ok(want: &str, v: &Value) -> bool {
    match want {
        "number" => v.is_number(),
        other => json_type(v) == other,
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(schema: &Value, v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    if schema["x-kubernetes-int-or-string"] == true {
        if !(v.is_string() || v.is_i64() || v.is_u64()) {
            out.push((
                path.to_string(),
                format!(
                    "Invalid value: \"{t}\": {path} in body must be of type integer or string: \"{t}\"",
                    t = json_type(v)
                ),
            ));
        }
        return;
    }
    if let Some(want) = schema["type"].as_str()
        && !type_ok(want, v)
    {
        let t = json_type(v);
        out.push((
            path.to_string(),
            format!("Invalid value: \"{t}\": {path} in body must be of type {want}: \"{t}\""),
        ));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
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
    bounds(schema, v, path, out);
    match v {
        Value::Object(map) => object(schema, map, path, out),
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, x) in items.iter().enumerate() {
                    walk(item, x, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn bounds(schema: &Value, v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let n = |k: &str| schema[k].as_u64();
    if let Value::String(s) = v {
        let len = s.chars().count() as u64;
        if n("maxLength").is_some_and(|m| len > m) {
            out.push((
                path.to_string(),
                format!("Too long: may not be longer than {}", schema["maxLength"]),
            ));
        }
        if n("minLength").is_some_and(|m| len < m) {
            out.push((
                path.to_string(),
                format!(
                    "Invalid value: {v}: {path} in body should be at least {} chars long",
                    schema["minLength"]
                ),
            ));
        }
    }
    if let Some(x) = v.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|m| x < m) {
            out.push((
                path.to_string(),
                format!(
                    "Invalid value: {v}: {path} in body should be greater than or equal to {}",
                    schema["minimum"]
                ),
            ));
        }
        if schema["maximum"].as_f64().is_some_and(|m| x > m) {
            out.push((
                path.to_string(),
                format!(
                    "Invalid value: {v}: {path} in body should be less than or equal to {}",
                    schema["maximum"]
                ),
            ));
        }
    }
    if let Value::Array(items) = v {
        if n("maxItems").is_some_and(|m| items.len() as u64 > m) {
            out.push((
                path.to_string(),
                format!(
                    "Too many: {}: must have at most {} items",
                    items.len(),
                    schema["maxItems"]
                ),
            ));
        }
        if n("minItems").is_some_and(|m| (items.len() as u64) < m) {
            out.push((
                path.to_string(),
                format!(
                    "Invalid value: {}: {path} in body should have at least {} items",
                    items.len(),
                    schema["minItems"]
                ),
            ));
        }
    }
}

fn object(
    schema: &Value,
    map: &serde_json::Map<String, Value>,
    path: &str,
    out: &mut Vec<(String, String)>,
) {
    for r in schema["required"].as_array().into_iter().flatten() {
        if let Some(r) = r.as_str()
            && map.get(r).is_none_or(Value::is_null)
        {
            out.push((child(path, r), "Required value".to_string()));
        }
    }
    let props = schema["properties"].as_object();
    let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
    for (k, x) in map {
        // ObjectMeta is validated by the server's own code, not the CRD's schema.
        if path.is_empty() && k == "metadata" {
            continue;
        }
        let p = child(path, k);
        if let Some(s) = props.and_then(|ps| ps.get(k)) {
            walk(s, x, &p, out);
        } else if let Some(extra) = schema.get("additionalProperties") {
            if extra.is_object() {
                walk(extra, x, &p, out);
            } else if extra == false {
                out.push((p, "field not declared in schema".to_string()));
            }
        } else if !preserve && (props.is_some() || schema["type"] == "object") {
            out.push((p, "field not declared in schema".to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["groups"],
                    "properties": {
                        "groups": {"type": "array", "items": {
                            "type": "object", "required": ["name"],
                            "properties": {
                                "name": {"type": "string", "maxLength": 5},
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                "port": {"x-kubernetes-int-or-string": true},
                                "scheme": {"type": "string", "enum": ["http", "https"]},
                                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                            }
                        }}
                    }
                }
            }
        })
    }

    #[test]
    fn a_valid_object_passes() {
        let obj = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x", "anything": 1},
            "spec": {"groups": [{"name": "g", "labels": {"a": "b"}, "port": 80, "scheme": "http",
            "free": {"whatever": [1]}}]}});
        let schema = json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"}, "spec": schema()["properties"]["spec"]}});
        assert_eq!(violations(&schema, &obj), Vec::<(String, String)>::new());
    }

    #[test]
    fn each_kind_of_mistake_is_named_with_its_path() {
        let obj = json!({"spec": {"groups": [
            {"labels": {"a": 1}, "port": true, "scheme": "ftp", "typo": 1},
            {"name": "toolong"}
        ]}});
        let found: Vec<String> = violations(&schema(), &obj)
            .into_iter()
            .map(|(p, m)| format!("{p}: {m}"))
            .collect();
        let want = [
            "spec.groups[0].name: Required value",
            "spec.groups[0].labels.a: Invalid value: \"integer\"",
            "spec.groups[0].port: Invalid value: \"boolean\": spec.groups[0].port in body must be of type integer or string",
            "spec.groups[0].scheme: Unsupported value: \"ftp\"",
            "spec.groups[0].typo: field not declared in schema",
            "spec.groups[1].name: Too long",
        ];
        for w in want {
            assert!(
                found.iter().any(|f| f.starts_with(w)),
                "{w} not in {found:#?}"
            );
        }
        assert_eq!(found.len(), want.len(), "{found:#?}");
    }

    #[test]
    fn the_schema_of_the_served_version_is_found() {
        let crd = json!({"spec": {"group": "operator.victoriametrics.com", "versions": [
            {"name": "v1beta1", "served": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        assert!(schema_for(&crd, "operator.victoriametrics.com/v1beta1").is_some());
        assert!(schema_for(&crd, "operator.victoriametrics.com/v1").is_none());
        assert!(schema_for(&crd, "monitoring.coreos.com/v1beta1").is_none());
    }
}
