//! Server-side apply (`PATCH` with `application/apply-patch+yaml`), reduced to what kubectl
//! `apply --server-side` and kube-rs `Patch::Apply` meet: the applied configuration is merged
//! into the object (maps merged, lists and scalars replaced), the manager's `Apply` entry owns
//! exactly the fields of its configuration, a field it applied before and left out now is
//! removed unless another manager owns it, and changing a field another manager owns is a
//! `409 Conflict` unless `force=true` (then that manager loses it).

use serde_json::{Map, Value, json};

use crate::model::Kind;
use crate::sim::api_ops::{
    Part, check_body_type, key_for, meta_mut, meta_str, require_object, write_in,
};
use crate::sim::clock::now_rfc3339;
use crate::sim::managed::{self, Operation, Writer};
use crate::sim::status::ApiError;
use crate::sim::store::Store;

type Path = Vec<String>;

fn leaves(set: &Map<String, Value>, prefix: &mut Path, out: &mut Vec<Path>) {
    for (k, v) in set {
        prefix.push(k.clone());
        match v.as_object() {
            Some(m) if !m.is_empty() => leaves(m, prefix, out),
            _ => out.push(prefix.clone()),
        }
        prefix.pop();
    }
}

fn leaf_paths(set: &Map<String, Value>) -> Vec<Path> {
    let mut out = Vec::new();
    leaves(set, &mut Vec::new(), &mut out);
    out
}

fn value_at<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(obj, |v, k| v.get(k.strip_prefix("f:").unwrap_or(k)))
}

fn remove_at(obj: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut v = obj;
    for k in parents {
        match v.get_mut(k.strip_prefix("f:").unwrap_or(k)) {
            Some(next) => v = next,
            None => return,
        }
    }
    if let Some(m) = v.as_object_mut() {
        m.remove(last.strip_prefix("f:").unwrap_or(last));
    }
}

/// Two paths overlap when one is a prefix of the other.
fn overlaps(a: &[String], b: &[String]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

fn shown(path: &[String]) -> String {
    path.iter()
        .map(|k| format!(".{}", k.strip_prefix("f:").unwrap_or(k)))
        .collect()
}

fn merge(target: &mut Value, config: &Value) {
    match (target.as_object_mut(), config.as_object()) {
        (Some(t), Some(c)) => {
            for (k, v) in c {
                if v.is_null() {
                    t.remove(k);
                } else if let Some(existing) =
                    t.get_mut(k).filter(|e| e.is_object() && v.is_object())
                {
                    merge(existing, v);
                } else {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
        _ => *target = config.clone(),
    }
}

fn is_mine(e: &Value, manager: &str) -> bool {
    e.get("manager").and_then(Value::as_str) == Some(manager)
        && e.get("operation").and_then(Value::as_str) == Some("Apply")
        && e.get("subresource").is_none()
}

fn fields_of(e: &Value) -> Map<String, Value> {
    e.get("fieldsV1")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn conflict_error(conflicts: &[(String, String, Path)]) -> ApiError {
    let n = conflicts.len();
    let lines: Vec<String> = conflicts
        .iter()
        .map(|(m, av, p)| format!("conflict with \"{m}\" using {av}: {}", shown(p)))
        .collect();
    let message = if n == 1 {
        format!("Apply failed with 1 conflict: {}", lines[0])
    } else {
        format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, av, p)| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{m}\" using {av}"), "field": shown(p)})
        })
        .collect();
    ApiError::conflict_apply(message, causes)
}

/// The object after `writer` applies `config` over `current` (with its managedFields), or the
/// conflicts that refuse it.
pub fn apply(
    current: &Value,
    config: &Value,
    writer: &Writer,
    force: bool,
    time: &str,
) -> Result<Value, ApiError> {
    let applied = managed::changed_fields(&Value::Null, config, false);
    let applied_leaves = leaf_paths(&applied);
    let entries: Vec<Value> = current
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // Fields whose value this apply changes, and the other managers that own them.
    let changed: Vec<&Path> = applied_leaves
        .iter()
        .filter(|p| value_at(current, p) != value_at(config, p))
        .collect();
    let mut conflicts = Vec::new();
    for e in entries.iter().filter(|e| !is_mine(e, &writer.manager)) {
        let owned = leaf_paths(&fields_of(e));
        for p in &changed {
            if owned.iter().any(|q| overlaps(q, p)) {
                conflicts.push((
                    e.get("manager")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    e.get("apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    (*p).clone(),
                ));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&conflicts));
    }
    let mut next = current.clone();
    let mut cfg = config.clone();
    if let Some(m) = cfg.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            m.remove(k);
        }
    }
    merge(&mut next, &cfg);
    // What this manager applied before and leaves out now goes, unless someone else owns it.
    let before: Vec<Path> = entries
        .iter()
        .find(|e| is_mine(e, &writer.manager))
        .map(|e| leaf_paths(&fields_of(e)))
        .unwrap_or_default();
    for q in before {
        let kept = applied_leaves.iter().any(|p| overlaps(p, &q));
        let shared = entries
            .iter()
            .filter(|e| !is_mine(e, &writer.manager))
            .any(|e| leaf_paths(&fields_of(e)).iter().any(|o| overlaps(o, &q)));
        if !kept && !shared {
            remove_at(&mut next, &q);
        }
    }
    // Ownership: the changed fields leave their other owners; the manager owns its config.
    let mut taken = Map::new();
    for p in &changed {
        let mut m = &mut taken;
        for (i, k) in p.iter().enumerate() {
            let entry = m.entry(k.clone()).or_insert_with(|| json!({}));
            if i + 1 == p.len() {
                *entry = json!({});
            }
            m = match entry.as_object_mut() {
                Some(o) => o,
                None => break,
            };
        }
    }
    let mut out: Vec<Value> = Vec::new();
    for mut e in entries.into_iter().filter(|e| !is_mine(e, &writer.manager)) {
        if let Some(Value::Object(set)) = e.get_mut("fieldsV1") {
            managed::subtract(set, &taken);
        }
        if !fields_of(&e).is_empty() {
            out.push(e);
        }
    }
    out.push(json!({
        "manager": writer.manager,
        "operation": Operation::Apply.as_str(),
        "apiVersion": current.get("apiVersion").cloned().unwrap_or(json!("")),
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": Value::Object(applied),
    }));
    next["metadata"]["managedFields"] = Value::Array(out);
    Ok(next)
}

impl Store {
    /// Server-side apply of `body` (YAML or JSON) by `writer` (see `sim::apply`); creates the
    /// object when it does not exist.
    #[allow(clippy::too_many_arguments)]
    pub fn api_apply(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
        body: &[u8],
        part: Part,
        writer: &Writer,
        force: bool,
    ) -> Result<Value, ApiError> {
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::bad_request("error decoding YAML: invalid UTF-8"))?;
        let config: Value = serde_saphyr::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        require_object(&config)?;
        for (field, what) in [("apiVersion", "apiVersion"), ("kind", "kind")] {
            if config
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(ApiError::bad_request(format!(
                    "invalid object type: {what} must be set"
                )));
            }
        }
        check_body_type(kind, &config)?;
        let body_name = meta_str(&config, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        if part == Part::Status {
            return Err(ApiError::unsupported_media_type(
                "server-side apply of the status subresource is not supported by restorewatch-sim",
            ));
        }
        let info = kind.info();
        let key = key_for(kind, namespace, name);
        if self.transact(|t| t.get(kind, &key).is_none()) {
            let mut obj = config;
            meta_mut(&mut obj).insert("name".into(), json!(name));
            return self.api_create(kind, namespace, obj, writer);
        }
        self.transact(|txn| {
            let Some(current) = txn.get(kind, &key).cloned() else {
                return Err(ApiError::not_found(info, name));
            };
            let precondition = meta_str(&config, "resourceVersion").to_string();
            let mut next = apply(&current, &config, writer, force, &now_rfc3339())?;
            meta_mut(&mut next).insert(
                "resourceVersion".into(),
                json!(meta_str(&current, "resourceVersion")),
            );
            write_in(txn, kind, &key, part, &precondition, next, None)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(m: &str) -> Writer {
        Writer {
            manager: m.into(),
            operation: Operation::Apply,
        }
    }

    #[test]
    fn apply_merges_owns_conflicts_and_prunes() {
        let live = json!({"apiVersion": "v1", "metadata": {"name": "c", "managedFields": [
            {"manager": "helm", "operation": "Apply", "apiVersion": "postgresql.cnpg.io/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:plugins": {}, "f:instances": {}}}}]},
            "spec": {"plugins": [{"s": "new"}], "instances": 2}});
        let cfg = json!({"apiVersion": "v1", "metadata": {"name": "c"}, "spec": {"plugins": [{"s": "old"}]}});
        let e = apply(&live, &cfg, &w("driver"), false, "t").unwrap_err();
        assert_eq!((e.code, e.reason), (409, Some("Conflict")));
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"helm\" using postgresql.cnpg.io/v1: .spec.plugins"
        );
        let out = apply(&live, &cfg, &w("driver"), true, "t").unwrap();
        assert_eq!(
            out["spec"],
            json!({"plugins": [{"s": "old"}], "instances": 2})
        );
        let mf = out["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf[0]["fieldsV1"], json!({"f:spec": {"f:instances": {}}}));
        assert_eq!(mf[1]["manager"], "driver");
        // Applying the same value someone else owns is no conflict; leaving a field out
        // removes it when nobody else owns it.
        let cfg2 = json!({"apiVersion": "v1", "metadata": {"name": "c", "labels": {"a": "1"}}, "spec": {"instances": 2}});
        let again = apply(&out, &cfg2, &w("driver"), false, "t2").unwrap();
        assert_eq!(
            again["spec"],
            json!({"instances": 2}),
            "its plugins went with it"
        );
        assert_eq!(again["metadata"]["labels"], json!({"a": "1"}));
    }
}
