//! `metadata.managedFields` as a real API server keeps them: one entry per manager, operation
//! (`Update` or `Apply`) and subresource, each owning the fields its writes set (a `FieldsV1`
//! tree: `{"f:spec": {"f:plugins": {}}}`). A write takes the fields it changed away from every
//! other entry; an entry left owning nothing is dropped. Lists are owned whole (as atomic lists
//! are): enough to tell who wrote `spec.plugins` and when.

use serde_json::{Map, Value, json};

/// Who wrote, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub manager: String,
    pub operation: Operation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Update,
    Apply,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Update => "Update",
            Operation::Apply => "Apply",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "Update" => Some(Operation::Update),
            "Apply" => Some(Operation::Apply),
            _ => None,
        }
    }
}

impl Writer {
    pub fn update(manager: impl Into<String>) -> Self {
        Writer {
            manager: manager.into(),
            operation: Operation::Update,
        }
    }

    /// The manager a real server records for a request: the `fieldManager` parameter, else the
    /// client's user-agent up to its first `/` (`kubectl/v1.32.0 (linux/amd64) ...` ->
    /// `kubectl`), else `unknown` (a request without either, as the real-controller dumps
    /// recorded restorewatch's own writes before they carried a field manager), at most 128
    /// characters.
    pub fn from_request(
        field_manager: Option<&str>,
        user_agent: &str,
        operation: Operation,
    ) -> Self {
        let product: String = user_agent
            .split('/')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        let manager = match field_manager.filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None if product.trim().is_empty() => UNKNOWN_MANAGER.to_string(),
            None => product,
        };
        Writer {
            manager: manager.chars().take(128).collect(),
            operation,
        }
    }
}

/// The manager a real server records for a write that names none and sends no User-Agent.
pub const UNKNOWN_MANAGER: &str = "unknown";

/// The manager the simulated kube-controller-manager writes as.
pub const KCM: &str = "kube-controller-manager";

/// Metadata the server owns itself: never part of a field set (the bench's generator writes
/// its managedFields by the same rule).
pub const SERVER_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
];

/// The fields `new` sets that `old` does not have with the same value, as a FieldsV1 tree.
/// With `old` = null (a create), every field of `new`. `status` only under the status
/// subresource, and only `status` there.
pub fn changed_fields(old: &Value, new: &Value, status_only: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let (Some(n), o) = (new.as_object(), old.as_object()) else {
        return out;
    };
    for (k, v) in n {
        if matches!(k.as_str(), "apiVersion" | "kind") || (status_only != (k == "status")) {
            continue;
        }
        let before = o.and_then(|o| o.get(k)).unwrap_or(&Value::Null);
        if k == "metadata" {
            let mut meta = Map::new();
            if let (Some(nm), om) = (v.as_object(), before.as_object()) {
                for (mk, mv) in nm {
                    if SERVER_METADATA.contains(&mk.as_str()) {
                        continue;
                    }
                    let mb = om.and_then(|m| m.get(mk)).unwrap_or(&Value::Null);
                    diff_into(&mut meta, mk, mb, mv);
                }
            }
            if !meta.is_empty() {
                out.insert("f:metadata".into(), Value::Object(meta));
            }
            continue;
        }
        diff_into(&mut out, k, before, v);
    }
    out
}

fn diff_into(out: &mut Map<String, Value>, key: &str, before: &Value, after: &Value) {
    if before == after || after.is_null() {
        return;
    }
    let entry = match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut m = Map::new();
            for (k, v) in a {
                diff_into(&mut m, k, b.get(k).unwrap_or(&Value::Null), v);
            }
            if m.is_empty() {
                return;
            }
            m
        }
        (_, Value::Object(a)) => {
            let mut m = Map::new();
            for (k, v) in a {
                diff_into(&mut m, k, &Value::Null, v);
            }
            m
        }
        _ => Map::new(),
    };
    out.insert(format!("f:{key}"), Value::Object(entry));
}

/// `set` without the fields of `taken`: what another manager keeps after a write.
pub(crate) fn subtract(set: &mut Map<String, Value>, taken: &Map<String, Value>) {
    for (k, t) in taken {
        let Some(Value::Object(sub)) = set.get_mut(k) else {
            continue;
        };
        match t.as_object() {
            // A leaf taken: the whole field (and anything under it) changes hands.
            Some(tm) if tm.is_empty() => {
                set.remove(k);
            }
            Some(tm) => {
                if sub.is_empty() {
                    // It owned the field as a leaf; the writer changed part of it: it keeps
                    // nothing of it, as the value it set is gone.
                    set.remove(k);
                } else {
                    subtract(sub, tm);
                    if sub.is_empty() {
                        set.remove(k);
                    }
                }
            }
            None => {}
        }
    }
}

fn union(set: &mut Map<String, Value>, add: &Map<String, Value>) {
    for (k, a) in add {
        let a = a.as_object().cloned().unwrap_or_default();
        match set.get_mut(k).and_then(Value::as_object_mut) {
            Some(existing) if !existing.is_empty() && !a.is_empty() => union(existing, &a),
            Some(existing) if a.is_empty() => *existing = Map::new(),
            Some(_) => {}
            None => {
                set.insert(k.clone(), Value::Object(a));
            }
        }
    }
}

/// Records a write of `old` -> `new` by `writer` in `new`'s managedFields (taken from `old`:
/// a client cannot rewrite them by sending its own, except by sending an empty list, which
/// a real server honours by clearing them).
pub fn record(
    old: &Value,
    new: &mut Value,
    writer: &Writer,
    subresource: Option<&str>,
    time: &str,
) {
    let status = subresource == Some("status");
    let fields = changed_fields(old, new, status);
    let mut entries: Vec<Value> = old
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !fields.is_empty() {
        for e in entries.iter_mut() {
            if let Some(Value::Object(set)) = e.get_mut("fieldsV1") {
                subtract(set, &fields);
            }
        }
        let sub = subresource.unwrap_or("");
        let mine = entries.iter().position(|e| {
            e.get("manager").and_then(Value::as_str) == Some(writer.manager.as_str())
                && e.get("operation").and_then(Value::as_str) == Some(writer.operation.as_str())
                && e.get("subresource").and_then(Value::as_str).unwrap_or("") == sub
        });
        let api_version = new.get("apiVersion").cloned().unwrap_or(json!(""));
        match mine {
            Some(i) => {
                let e = &mut entries[i];
                let mut set = e
                    .get("fieldsV1")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                union(&mut set, &fields);
                e["fieldsV1"] = Value::Object(set);
                e["time"] = json!(time);
                e["apiVersion"] = api_version;
            }
            None => {
                let mut e = json!({
                    "manager": writer.manager,
                    "operation": writer.operation.as_str(),
                    "apiVersion": api_version,
                    "time": time,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": Value::Object(fields),
                });
                if let Some(s) = subresource {
                    e["subresource"] = json!(s);
                }
                entries.push(e);
            }
        }
        entries.retain(|e| {
            e.get("fieldsV1")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        });
    }
    if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        if entries.is_empty() {
            m.remove("managedFields");
        } else {
            m.insert("managedFields".into(), Value::Array(entries));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn managers(obj: &Value) -> Vec<(String, String)> {
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap_or("").to_string(),
                    e["operation"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_write_takes_the_fields_it_changed() {
        let old = json!({"apiVersion": "v1", "metadata": {"name": "a"}});
        let mut created = json!({"apiVersion": "v1", "metadata": {"name": "a", "labels": {"x": "1"}},
                                 "spec": {"plugins": [{"n": 1}], "instances": 2}});
        record(&old, &mut created, &Writer::update("helm"), None, "t1");
        assert_eq!(
            created["metadata"]["managedFields"][0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:x": {}}}, "f:spec": {"f:plugins": {}, "f:instances": {}}})
        );
        let mut next = created.clone();
        next["spec"]["plugins"] = json!([{"n": 2}]);
        let w = Writer {
            manager: "driver".into(),
            operation: Operation::Apply,
        };
        record(&created, &mut next, &w, None, "t2");
        assert_eq!(
            managers(&next),
            vec![
                ("helm".into(), "Update".into()),
                ("driver".into(), "Apply".into())
            ]
        );
        assert_eq!(
            next["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"],
            json!({"f:instances": {}})
        );
        assert_eq!(next["metadata"]["managedFields"][1]["time"], "t2");
        let mut status = next.clone();
        status["status"] = json!({"phase": "x"});
        record(
            &next,
            &mut status,
            &Writer::update("manager"),
            Some("status"),
            "t3",
        );
        assert_eq!(
            status["metadata"]["managedFields"][2]["subresource"],
            "status"
        );
        assert_eq!(
            status["metadata"]["managedFields"][2]["fieldsV1"],
            json!({"f:status": {"f:phase": {}}})
        );
    }

    #[test]
    fn the_manager_comes_from_the_parameter_or_the_user_agent() {
        let w = Writer::from_request(
            None,
            "kubectl/v1.32.0 (linux/amd64) kubernetes/abc",
            Operation::Update,
        );
        assert_eq!(w.manager, "kubectl");
        let w = Writer::from_request(Some("kubectl-patch"), "kubectl/v1.32.0", Operation::Update);
        assert_eq!(w.manager, "kubectl-patch");
        // Neither: what the real server recorded for restorewatch's writes in the dumps.
        let w = Writer::from_request(None, "", Operation::Update);
        assert_eq!(w.manager, "unknown");
        let w = Writer::from_request(Some(""), "", Operation::Update);
        assert_eq!(w.manager, "unknown");
    }
}
